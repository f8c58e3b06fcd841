"""API drift: every FA4-reaching call against each audited release's entry-point signatures.

The calls come from the call-site pass (``analyzer.sites.audit_tree``: ``path``, ``line``,
``col``, ``entries`` of each ``fa4_calls`` record); each call expression is parsed again here
with ``ast`` at that position. Signatures are read from each release's own
``flash_attn/cute/interface.py`` (never imported). Per call, per entry it can reach, per release:

* a keyword the release does not accept (TypeError at the call);
* a keyword given twice (positionally and by name);
* more positional arguments than the release takes;
* a positional argument that lands on a different parameter than on the release the code was
  written for (``--written-for``, else the flash-attn-4 pin the package itself names, else the
  oldest audited release): the call runs and passes the value to the wrong parameter;
* a required parameter that is not passed.

``**kw`` splats: the keys of a dict built in the same function from literals (``{...}``,
``d["k"] = v``, ``d.update(k=v)``) are read; a key written in the block that creates the dict is
certain; one written in a nested branch is *conditional* and only noted, never claimed (the
branch may be the one that never picks FA4: TE fills FA2/FA3-only keys under such branches). Any other splat, or a dict that escapes (passed to a helper, returned,
mutated by a computed key), makes the call's keywords *not visible*: what can be proved is still
reported, and a missing required parameter is then not claimed. A ``*args`` splat hides the
positional arguments after it the same way.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import AuditError
from analyzer.upgrade.model import DriftRecord, Hazard


@dataclass(frozen=True)
class Sig:
    name: str
    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]
    required: tuple[str, ...]
    varargs: bool
    varkw: bool

    @property
    def names(self) -> set[str]:
        return set(self.positional) | set(self.keyword_only)


def signatures(fa4_root: Path) -> dict[str, Sig]:
    """Module-level functions of ``flash_attn/cute/interface.py``, by name."""
    p = fa4_root / "flash_attn" / "cute" / "interface.py"
    try:
        tree = ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
    except (OSError, SyntaxError, ValueError) as exc:
        raise AuditError(f"{p}: cannot read the FA4 entry points ({type(exc).__name__}: {exc})") from None
    out = {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = n.args
            pos = [x.arg for x in a.posonlyargs + a.args]
            n_req = len(pos) - len(a.defaults)
            req = pos[:n_req] + [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
            out[n.name] = Sig(n.name, tuple(pos), tuple(x.arg for x in a.kwonlyargs), tuple(req),
                              a.vararg is not None, a.kwarg is not None)
    return out


@dataclass
class CallShape:
    positional: int                      # visible positional arguments (before any *splat)
    star: bool                           # a *args splat hides positions after them
    keywords: list[str]                  # explicit keyword names
    definite: dict[str, str] = field(default_factory=dict)     # splatted key -> where written
    conditional: dict[str, str] = field(default_factory=dict)
    opaque: list[str] = field(default_factory=list)            # splats whose keys are not visible


def _enclosing_function(parents, node):
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
        cur = parents.get(cur)
    return cur


def _block_of(parents, node):
    """(statement list, statement) that holds ``node``."""
    cur = node
    while True:
        p = parents.get(cur)
        if p is None:
            return None, cur
        for fld in ("body", "orelse", "finalbody", "handlers"):
            lst = getattr(p, fld, None)
            if isinstance(lst, list) and cur in lst:
                return (id(p), fld), cur
        cur = p


def _resolve_dict(fn, name: str, parents) -> tuple[dict[str, str], dict[str, str]] | None:
    """(certain keys, conditional keys) of a dict built in ``fn`` under ``name``; None when the
    dict's keys cannot all be seen."""
    if fn is None:
        return None
    a = fn.args
    if name in {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}:
        return None
    creations, writes = [], []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        p = parents.get(node)
        if isinstance(node.ctx, ast.Store):
            if isinstance(p, ast.Assign) and len(p.targets) == 1 and p.targets[0] is node:
                v = p.value
                if isinstance(v, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in v.keys):
                    creations.append((p, [k.value for k in v.keys]))
                    continue
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "dict" \
                        and not v.args and all(k.arg for k in v.keywords):
                    creations.append((p, [k.arg for k in v.keywords]))
                    continue
            return None
        if isinstance(p, ast.keyword) and p.arg is None:
            continue                                    # **d
        if isinstance(p, ast.Subscript) and p.value is node:
            if isinstance(p.ctx, ast.Load):
                continue
            if isinstance(p.ctx, ast.Store) and isinstance(p.slice, ast.Constant) and isinstance(p.slice.value, str):
                writes.append((p, [p.slice.value]))
                continue
            if isinstance(p.ctx, ast.Del):
                continue
            return None
        if isinstance(p, ast.Attribute) and p.value is node:
            call = parents.get(p)
            if p.attr in ("get", "keys", "items", "values", "copy") and isinstance(call, ast.Call):
                continue
            if p.attr == "update" and isinstance(call, ast.Call):
                keys = [k.arg for k in call.keywords if k.arg]
                if any(k.arg is None for k in call.keywords):
                    return None
                for arg in call.args:
                    if isinstance(arg, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in arg.keys):
                        keys += [k.value for k in arg.keys]
                    else:
                        return None
                writes.append((call, keys))
                continue
            if p.attr == "pop":
                continue
            return None
        if isinstance(p, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in p.ops) and node is not p.left:
            continue
        return None
    if len(creations) != 1:
        return None
    create_stmt, keys = creations[0]
    block, _ = _block_of(parents, create_stmt)
    certain = {k: f"line {create_stmt.lineno}" for k in keys}
    conditional: dict[str, str] = {}
    for w, ks in writes:
        wb, _ = _block_of(parents, w)
        for k in ks:
            if wb == block:
                certain.setdefault(k, f"line {w.lineno}")
            elif k not in certain:
                conditional.setdefault(k, f"line {w.lineno}")
    # pops / dels make a key conditional
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            if not (node.args and isinstance(node.args[0], ast.Constant)):
                return None
            k = node.args[0].value
            if k in certain:
                conditional[k] = certain.pop(k)
        if isinstance(node, ast.Delete):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name:
                    if not isinstance(t.slice, ast.Constant):
                        return None
                    if t.slice.value in certain:
                        conditional[t.slice.value] = certain.pop(t.slice.value)
    return certain, conditional


def call_shape(call: ast.Call, parents) -> CallShape:
    pos, star = 0, False
    for a in call.args:
        if isinstance(a, ast.Starred):
            star = True
            break
        pos += 1
    shape = CallShape(pos, star, [k.arg for k in call.keywords if k.arg])
    fn = _enclosing_function(parents, call)
    for k in call.keywords:
        if k.arg is not None:
            continue
        res = _resolve_dict(fn, k.value.id, parents) if isinstance(k.value, ast.Name) else None
        if res is None:
            shape.opaque.append(ast.unparse(k.value) if len(ast.unparse(k.value)) < 60 else
                                ast.unparse(k.value)[:57] + "...")
            continue
        certain, cond = res
        for key, where in certain.items():
            shape.definite.setdefault(key, f"**{k.value.id} ({where})")
        for key, where in cond.items():
            if key not in shape.definite:
                shape.conditional.setdefault(key, f"**{k.value.id} ({where}, in a branch)")
    return shape


def find_call(tree: ast.AST, parents, line: int, col: int) -> ast.Call | None:
    at_line = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line]
    exact = [n for n in at_line if n.col_offset in (col - 1, col)]
    if len(exact) >= 1:
        return min(exact, key=lambda n: abs(n.col_offset - (col - 1)))
    return at_line[0] if len(at_line) == 1 else None


def check_call(shape: CallShape, entry: str, sig: Sig | None, base: Sig | None,
               base_label: str | None) -> tuple[list[tuple[str, str]], list[str]]:
    """([(certainty, problem)], notes) for one call, one entry, one release."""
    problems: list[tuple[str, str]] = []
    notes: list[str] = []
    if sig is None:
        return [("proven", f"the release has no {entry} in flash_attn/cute/interface.py")], notes
    for kw in shape.keywords:
        if kw not in sig.names and not sig.varkw:
            problems.append(("proven", f"keyword {kw}= is not a parameter of {entry} (TypeError)"))
        elif kw in sig.positional[:shape.positional] and kw not in sig.keyword_only:
            problems.append(("proven", f"{kw} is given positionally (#{sig.positional.index(kw) + 1}) "
                                       f"and by keyword (TypeError)"))
    for kw, where in sorted(shape.definite.items()):
        if kw not in sig.names and not sig.varkw:
            problems.append(("proven", f"keyword {kw}= from {where} is not a parameter of {entry} (TypeError)"))
    for kw, where in sorted(shape.conditional.items()):
        if kw not in sig.names and not sig.varkw:
            # not claimed: the branch that writes it may be the one that never picks FA4
            notes.append(f"keyword {kw}= from {where} is not a parameter of {entry} (not claimed: "
                         f"the branch may exclude this entry)")
    if shape.positional > len(sig.positional) and not sig.varargs:
        problems.append(("proven", f"{shape.positional} positional arguments, {entry} takes "
                                   f"{len(sig.positional)} (TypeError)"))
    if base is not None and base is not sig:
        for i in range(min(shape.positional, len(sig.positional))):
            here = sig.positional[i]
            there = base.positional[i] if i < len(base.positional) else None
            if here != there:
                problems.append(("proven", f"positional argument #{i + 1} lands on {here}, not on "
                                           f"{there or '(nothing)'} as on {base_label}"))
    given = set(sig.positional[:shape.positional]) | set(shape.keywords) | set(shape.definite)
    missing = [r for r in sig.required if r not in given]
    if missing:
        if shape.opaque or shape.star:
            notes.append(f"required {', '.join(missing)} not visible (may come from "
                         f"{', '.join(['*args'] * shape.star + ['**' + o for o in shape.opaque])})")
        else:
            cond = [m for m in missing if m in shape.conditional]
            hard = [m for m in missing if m not in shape.conditional]
            if hard:
                problems.append(("proven", f"required parameter(s) {', '.join(hard)} of {entry} not passed (TypeError)"))
            if cond:
                notes.append(f"required {', '.join(cond)} of {entry} passed only in a branch (not claimed)")
    if shape.opaque:
        notes.append("keywords not visible: " + ", ".join("**" + o for o in shape.opaque))
    if shape.star:
        notes.append("positions after a *args splat not visible")
    return problems, notes


def drift(root: Path, calls, releases: list[tuple[str, Path]], written_for: tuple[str, Path] | None
          ) -> tuple[list[Hazard], list[DriftRecord], list[str]]:
    """Hazards and per-call records for ``calls`` (FACall-like: path, line, col, entries)."""
    sigs = {label: signatures(r) for label, r in releases}
    base_label = base_sigs = None
    if written_for is not None:
        base_label = written_for[0]
        base_sigs = sigs.get(base_label) or signatures(written_for[1])
    notes: list[str] = []
    trees: dict[str, tuple[ast.AST, dict]] = {}
    acc: dict[tuple, list[str]] = {}
    records: list[DriftRecord] = []
    for c in sorted(calls, key=lambda c: (c.path, c.line, c.col)):
        if c.path not in trees:
            p = root / c.path
            try:
                tree = ast.parse(p.read_text(encoding="utf-8", errors="replace"), filename=c.path)
            except (OSError, SyntaxError, ValueError) as exc:
                raise AuditError(f"{c.path}: cannot parse for the API drift check ({exc})") from None
            parents = {ch: n for n in ast.walk(tree) for ch in ast.iter_child_nodes(n)}
            trees[c.path] = (tree, parents)
        tree, parents = trees[c.path]
        node = find_call(tree, parents, c.line, c.col)
        # only FA4 entries: a call that can also reach FA2/FA3 is checked against FA4's API only
        entries = sorted({e.rsplit(".", 1)[-1] for e in c.entries if e.startswith("flash_attn.cute")})
        if node is None:
            for label, _ in releases:
                for e in entries:
                    records.append(DriftRecord(c.path, c.line, e, label, "unknown", ("call expression not found",)))
                    acc.setdefault((c.path, c.line, e, "unknown", "the call expression was not found at this "
                                    "position; its arguments could not be checked"), []).append(label)
            continue
        shape = call_shape(node, parents)
        for label, _ in releases:
            for e in entries:
                sig = sigs[label].get(e)
                base = base_sigs.get(e) if base_sigs else None
                problems, why = check_call(shape, e, sig, base, base_label)
                status = "mismatch" if problems else ("partial" if why else "ok")
                records.append(DriftRecord(c.path, c.line, e, label, status,
                                           tuple(p for _, p in problems) + tuple(why)))
                for cert, prob in problems:
                    acc.setdefault((c.path, c.line, e, cert, prob), []).append(label)
    hazards = []
    for (path, line, e, cert, prob), labels in sorted(acc.items()):
        hazards.append(Hazard("api-mismatch", path, line, f"{e}: {prob} on {', '.join(labels)}",
                              tuple(labels), cert, (), "drift"))
    return hazards, records, notes


def written_for_pin(root: Path, package_dir: str) -> str | None:
    """The flash-attn-4 release the package itself names with ``==`` (install hints, extras);
    the newest when it names several."""
    from packaging.version import InvalidVersion, Version

    from analyzer.sources import iter_py_files

    found = set()
    for p in iter_py_files(root, package_dir):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in re.finditer(r"flash[-_]attn[-_]4\s*==\s*([0-9][0-9A-Za-z.]*)", text):
            try:
                found.add(Version(m.group(1).rstrip(".")))
            except InvalidVersion:
                continue
    return str(max(found)) if found else None
