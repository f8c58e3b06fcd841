"""CI blind spots, from the shell scripts, CI configuration and tests a checkout carries.

* ``fa4-disabled``: a switch that turns FA4 off (``NVTE_FLASH_ATTN_V4=0``, or the global
  ``NVTE_FLASH_ATTN=0``) exported in a script, set in CI yaml, or set at module level of a test
  file / conftest, while that file's test suites run. The switch names are read from the
  package: environment variables it reads whose name ends in ``FLASH_ATTN`` or
  ``FLASH_ATTN_V4`` or contains ``FA4``. A later re-enable in the same file is honoured
  (lexically: the state at each test command is the last assignment above it), as is a
  per-command override (``NVTE_FLASH_ATTN_V4=1 pytest ...``).
* ``old-pin``: a flash-attn-4 pin (``flash-attn-4==X``, a specifier set) or a version list
  (a shell array whose values are flash-attn-4 releases, possibly expanded into
  ``flash-attn-4==${v}`` by a loop) that selects no release with the current resolver variant
  (the variant of the newest release).
* ``same-backend-reference``: in a test, one attention object is called twice, context
  parallelism is switched on for it between the calls (``obj.set_context_parallel_group``),
  and the two results meet in one comparison: the CP result is graded against a run of the
  same backend, so an error on both sides cancels. A backend switch (an environment write that
  names ``ATTN``) between the calls, or a reference from another callable, is not reported.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from analyzer.upgrade.model import Hazard, span

CI_DIRS = ("qa", "tests", ".github", "ci", ".gitlab", "docker", ".circleci", ".buildkite")
SHELL_EXT = (".sh", ".bash")
YAML_EXT = (".yml", ".yaml")
TEST_RUN = re.compile(r"(\bpytest\b|\bpy\.test\b|unittest|\btest[^\s/]*\.(?:sh|py)\b)")
FA4_DIST = re.compile(r"flash[-_.]attn[-_.]4", re.I)
FA4_VERSION = re.compile(r"^4\.\d+\.\d+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?$")


def fa4_switches(root: Path, package_dir: str) -> dict[str, str]:
    """Env var names the package reads that switch FA4 off when 0: name -> where read."""
    out: dict[str, str] = {}
    pat = re.compile(r"(FLASH_ATTN(_V4)?$|FA4)")
    from analyzer.sources import iter_py_files
    for p in iter_py_files(root, package_dir):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "environ" not in text and "getenv" not in text:
            continue
        for m in re.finditer(r"""(?:getenv|environ\.get|environ\[)\(?\s*["']([A-Z0-9_]+)["']""", text):
            name = m.group(1)
            if pat.search(name) and not re.search(r"FLASH_ATTN_V[23]$", name):
                line = text.count("\n", 0, m.start()) + 1
                out.setdefault(name, f"{p.relative_to(root).as_posix()}:{line}")
    return dict(sorted(out.items()))


def ci_files(root: Path) -> list[Path]:
    """Shell scripts, yaml, requirement files and Python tests under the CI folders (sorted)."""
    out = []
    for d in CI_DIRS:
        top = root / d
        if not top.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
            dirnames[:] = sorted(x for x in dirnames if x not in ("__pycache__", ".git"))
            for fn in sorted(filenames):
                p = Path(dirpath) / fn
                if fn.endswith(SHELL_EXT + YAML_EXT + (".py", ".txt", ".toml", ".cfg")) or fn.startswith("Dockerfile"):
                    if p.is_file():
                        out.append(p)
    for fn in sorted(os.listdir(root)):
        p = root / fn
        if p.is_file() and (fn.endswith(YAML_EXT) or fn.startswith(("requirements", "Dockerfile"))
                            or fn.endswith(SHELL_EXT)):
            out.append(p)
    return out


# ----------------------------------------------------------------------------- fa4-disabled

def _read(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def disabled_hazards(root: Path, files: list[Path], switches: dict[str, str],
                     notes: list[str] | None = None) -> list[Hazard]:
    out = []
    if not switches:
        return out
    names = "|".join(re.escape(n) for n in switches)
    # an assignment of a switch: export X=0 / X=0 / X: "0" / X: 0 / - X=0
    assign = re.compile(rf"""(?:^|[\s;(]|export\s+)({names})\s*(?:=|:\s*)["']?([A-Za-z0-9_]*)["']?""")
    for p in files:
        rel = p.relative_to(root).as_posix()
        if p.suffix == ".py":
            out += _py_disabled(p, rel, switches, notes)
            continue
        if not (p.suffix in SHELL_EXT + YAML_EXT):
            continue
        state: dict[str, int] = {}      # switch -> line where it was turned off
        runs: dict[tuple[str, int], list[int]] = {}
        for i, raw in enumerate(_read(p).splitlines(), 1):
            line = raw.split("#", 1)[0] if p.suffix in SHELL_EXT else raw
            if not line.strip():
                continue
            found = list(assign.finditer(line))
            is_run = bool(TEST_RUN.search(line))
            prefix = {m.group(1): m.group(2) for m in found}
            if is_run:
                for name, off_line in state.items():
                    if prefix.get(name, "0") in ("0", "false", "False"):
                        runs.setdefault((name, off_line), []).append(i)
                for name, val in prefix.items():
                    if val in ("0", "false", "False") and name not in state:
                        runs.setdefault((name, i), []).append(i)
                continue
            for name, val in prefix.items():
                if val in ("0", "false", "False"):
                    state[name] = i
                else:
                    state.pop(name, None)
            if re.search(rf"\bunset\s+({names})\b", line):
                for n in re.findall(rf"\bunset\s+((?:{names}))\b", line):
                    state.pop(n, None)
        for (name, off_line), lines in sorted(runs.items()):
            out.append(Hazard(
                "fa4-disabled", rel, off_line,
                f"{name}=0 (read at {switches[name]}) is in force where {len(lines)} test command(s) "
                f"run (first at line {lines[0]}): these suites never run FA4",
                (), "proven", tuple(f"{rel}:{n}" for n in lines[:5] if n != off_line), "ci"))
    return out


def _py_disabled(p: Path, rel: str, switches: dict[str, str], notes: list[str] | None = None) -> list[Hazard]:
    """Module-level ``os.environ[X] = "0"`` / ``os.environ.setdefault(X, "0")`` in a test file."""
    if not (p.name.startswith("test") or p.name == "conftest.py" or p.name.startswith("run_")):
        return []
    text = _read(p)
    if not any(n in text for n in switches):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        if notes is not None:
            notes.append(f"{rel}: not parsed ({type(exc).__name__}); its FA4 switch settings were not read")
        return []
    out = []
    for st in tree.body:
        key = val = None
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Subscript):
            t = st.targets[0]
            if ast.unparse(t.value) == "os.environ" and isinstance(t.slice, ast.Constant):
                key, val = t.slice.value, st.value
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            c = st.value
            if ast.unparse(c.func) in ("os.environ.setdefault", "os.putenv") and len(c.args) == 2 \
                    and isinstance(c.args[0], ast.Constant):
                key, val = c.args[0].value, c.args[1]
        if key in switches and isinstance(val, ast.Constant) and str(val.value) in ("0", "false", "False"):
            out.append(Hazard("fa4-disabled", rel, st.lineno,
                              f"{key}=0 set at import of {rel}: every test it collects runs without FA4",
                              (), "proven", (), "ci"))
    return out


# ----------------------------------------------------------------------------- old-pin

def pins(root: Path, files: list[Path], fa4_releases: list[str]) -> list[tuple[str, int, list[str], str]]:
    """(path, line, releases it can install, how) for every flash-attn-4 pin or version list."""
    out = []
    known = set(fa4_releases)
    for p in files:
        rel = p.relative_to(root).as_posix()
        text = _read(p)
        if not text:
            continue
        lines = text.splitlines()
        arrays: dict[str, list[tuple[int, list[str]]]] = {}
        for i, line in enumerate(lines, 1):
            for m in re.finditer(r"\b([A-Za-z_][A-Za-z0-9_]*)=\(([^)]*)\)", line):
                vals = [v.strip("'\"") for v in m.group(2).split()]
                arrays.setdefault(m.group(1), []).append((i, vals))
        loops = {}
        for i, line in enumerate(lines, 1):
            m = re.search(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+\"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}", line)
            if m:
                loops[m.group(1)] = m.group(2)
        expanded_arrays = set()
        for i, line in enumerate(lines, 1):
            for m in FA4_DIST.finditer(line):
                rest = line[m.end():]
                spec = re.match(r"\s*((?:[=<>!~]=?|===)\s*[^\s;,'\"\]]+(?:\s*,\s*[=<>!~]=?\s*[^\s;,'\"\]]+)*)", rest)
                if not spec:
                    continue
                s = spec.group(1).replace(" ", "")
                var = re.fullmatch(r"==\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", s)
                if var:
                    arr = loops.get(var.group(1))
                    if arr and arr in arrays:
                        expanded_arrays.add(arr)
                        for ln, vals in arrays[arr]:
                            fa4 = [v for v in vals if v in known or FA4_VERSION.match(v)]
                            if fa4:
                                out.append((rel, ln, fa4, f"version list {arr}=({' '.join(vals)}) "
                                                          f"installed as flash-attn-4==${{{var.group(1)}}} at line {i}"))
                    continue
                try:
                    ss = SpecifierSet(s)
                except InvalidSpecifier:
                    continue
                can = [v for v in fa4_releases if ss.contains(v, prereleases=True)]
                out.append((rel, i, can, f"pin flash-attn-4{s}"))
        for arr, defs in arrays.items():
            if arr in expanded_arrays:
                continue
            for ln, vals in defs:
                fa4 = [v for v in vals if v in known]
                if fa4:
                    out.append((rel, ln, fa4, f"version list {arr}=({' '.join(vals)})"))
    return out


def old_pin_hazards(pin_list, variant_of: dict[str, str], current: str) -> list[Hazard]:
    out = []
    for rel, line, can, how in sorted(pin_list):
        if any(variant_of.get(v) == current for v in can):
            continue
        variants = sorted({variant_of.get(v, "unknown") for v in can})
        what = (f"selects {span(can)} (resolver variant {', '.join(variants)})" if can
                else "matches no released version")
        out.append(Hazard("old-pin", rel, line,
                          f"{how} {what}; no release with the current variant {current}: CI never "
                          f"runs the behaviour users get from a new install",
                          tuple(can), "proven", (), "ci"))
    return out


# ----------------------------------------------------------------------------- same-backend

def _names(expr) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def same_backend_hazards(root: Path, files: list[Path], notes: list[str] | None = None) -> list[Hazard]:
    out = []
    for p in files:
        if p.suffix != ".py":
            continue
        text = _read(p)
        if "context_parallel" not in text:
            continue
        rel = p.relative_to(root).as_posix()
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError) as exc:
            if notes is not None:
                notes.append(f"{rel}: not parsed ({type(exc).__name__}); its CP checks were not read")
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out += _same_backend_in(fn, rel)
    return out


def _same_backend_in(fn, rel: str) -> list[Hazard]:
    calls: dict[str, list[tuple[int, str]]] = {}     # callee name -> [(line, result name)]
    cp_on: dict[str, list[int]] = {}                  # callee name -> lines CP was switched on
    env_writes: list[int] = []
    deps: dict[str, set[str]] = {}                    # name -> names its value is built from
    compares: list[tuple[int, set[str]]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            calls.setdefault(node.value.func.id, []).append((node.lineno, node.targets[0].id))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and "context_parallel" in node.func.attr:
            cp_on.setdefault(node.func.value.id, []).append(node.lineno)
        if isinstance(node, (ast.Assign, ast.Call)):
            src = ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.func)
            if ("environ" in src or "setenv" in src) and "ATTN" in ast.unparse(node):
                env_writes.append(node.lineno)
        if isinstance(node, ast.Assign) and not isinstance(node.value, ast.Call):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        deps.setdefault(n.id, set()).update(_names(node.value))
        if isinstance(node, (ast.For, ast.comprehension)):
            for n in ast.walk(node.target):
                if isinstance(n, ast.Name):
                    deps.setdefault(n.id, set()).update(_names(node.iter))
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func).rsplit(".", 1)[-1].lower()
            if any(w in name for w in ("assert", "compare", "allclose", "isclose")):
                compares.append((node.lineno, set().union(*(_names(a) for a in node.args), set())
                                 | set().union(*(_names(k.value) for k in node.keywords), set())))

    def closure(ns: set[str]) -> set[str]:
        seen, todo = set(), list(ns)
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo.extend(deps.get(n, ()))
        return seen

    out = []
    for obj, sites in sorted(calls.items()):
        for cp_line in cp_on.get(obj, ()):
            before = [s for s in sites if s[0] < cp_line]
            after = [s for s in sites if s[0] > cp_line]
            if not before or not after:
                continue
            (l1, r1), (l2, r2) = before[-1], after[0]
            if any(l1 < w < l2 for w in env_writes):
                continue
            for line, used in sorted(compares):
                reach = closure(used)
                if r1 in reach and r2 in reach:
                    out.append(Hazard(
                        "same-backend-reference", rel, line,
                        f"CP result {r2} (line {l2}) is graded against {r1} (line {l1}); both come from "
                        f"{obj}, the same attention object and backend, with context parallelism "
                        f"switched on at line {cp_line}: an error in the backend shows on both sides "
                        f"and cancels; grade against an independent reference",
                        (), "proven", (f"{rel}:{l1}", f"{rel}:{l2}", f"{rel}:{cp_line}"), "ci"))
                    break
    return out
