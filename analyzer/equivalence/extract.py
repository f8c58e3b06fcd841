"""Find the window-resolution rule in a FA4 tree and ``check_set_window_size`` in a TE tree.

Found by structure with libcst, never by line number:

* FA4: in ``flash_attn/cute/`` take the entry points ``_flash_attn_fwd`` and ``_flash_attn_bwd``.
  In each, the statement ``a, b, c, d = CALLEE(...)`` whose call passes the window parameters
  names the resolver, whatever it is called; its ``def`` is then looked up anywhere under
  ``flash_attn/cute/`` (module level, nested in the caller, a static method), together with
  the module-level helpers it calls. When an entry point has no such call (4.0.0b3-b4), the
  run of consecutive statements that only touch ``causal``, ``local``, the window sides and
  ``mask_mod`` and that assigns ``local`` is lifted into a function of its own.
* TE: ``def check_set_window_size`` anywhere under ``transformer_engine/``.

Each result carries a fingerprint: the SHA-256 (16 hex digits) of a normalised form -- the
``ast`` dump with docstrings, comments, annotations and formatting gone and the function's
own name, parameters and locals renamed by order of appearance. The fingerprint names the
variant through :mod:`transcriptions`; an unknown fingerprint is a *new* variant.
Everything that cannot be found or trusted raises :class:`AuditError`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

import transcriptions
from analyzer.errors import AuditError
from analyzer.sandbox import SandboxFailed, SandboxRefused, run_function
from analyzer.sources import cache_dir, iter_py_files

SCHEMA = 4  # bump when extraction or fingerprinting changes (invalidates the cache)

ENTRY_POINTS = ("_flash_attn_fwd", "_flash_attn_bwd")
WINDOW_PARAMS = ("causal", "window_size_left", "window_size_right")
INLINE_NAMES = frozenset({"causal", "local", "window_size_left", "window_size_right", "mask_mod"})
# Decorators that leave a function's results unchanged; anything else is refused.
INERT_DECORATORS = frozenset({"functools.lru_cache", "lru_cache", "functools.cache", "cache",
                              "staticmethod"})

# What an extracted function may use inside the sandbox.
FA4_NAMES = ("isinstance", "int", "bool", "AssertionError", "ValueError", "TypeError")
TE_NAMES = ("warnings", "isinstance", "int", "len", "tuple", "list",
            "AssertionError", "ValueError", "TypeError")
TE_ATTRS = ("warn",)


@dataclass(frozen=True)
class Extracted:
    """One evaluable rule lifted out of a real source tree."""

    kind: str            # "fa4-resolver" | "te-window"
    role: str            # "shared" (fwd and bwd call it) | "fwd" | "bwd" | "check"
    form: str            # "function" | "inline"
    name: str            # the function's name in the tree (for inline: the entry point's)
    path: str            # relative to the source root, '/' separated
    line: int            # 1-based line of the def (inline: of the first lifted statement)
    source: str          # evaluable text: the def plus the helpers it calls
    func_name: str       # the function to call inside ``source``
    fingerprint: str
    variant: str         # the registry's name, or "new"
    decorators: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def transcription(self) -> transcriptions.Transcription | None:
        t = transcriptions.by_fingerprint(self.fingerprint, self.kind)
        return t

    @property
    def is_new(self) -> bool:
        return self.variant == "new"

    def to_json(self) -> dict:
        return {"kind": self.kind, "role": self.role, "form": self.form, "name": self.name,
                "path": self.path, "line": self.line, "fingerprint": self.fingerprint,
                "variant": self.variant, "decorators": list(self.decorators),
                "notes": list(self.notes)}

    def run(self, calls: list[tuple[tuple, dict]]) -> list:
        """Evaluate this function in the sandbox on ``calls``; refusals and failures are
        re-raised naming where the function lives in the audited tree."""
        names, attrs = (FA4_NAMES, ()) if self.kind == "fa4-resolver" else (TE_NAMES, TE_ATTRS)
        try:
            return run_function(self.source, self.func_name, calls,
                                allowed_names=names, allowed_attrs=attrs)
        except (SandboxRefused, SandboxFailed) as exc:
            where = f"{self.path}:{self.line} {self.name}"
            msg = str(exc).replace("line ", "line-in-function ", 1) if "(" in str(exc) else str(exc)
            raise type(exc)(f"{where}: {msg}") from None

    @classmethod
    def from_json(cls, d: dict, source: str, func_name: str) -> "Extracted":
        return cls(kind=d["kind"], role=d["role"], form=d["form"], name=d["name"], path=d["path"],
                   line=d["line"], source=source, func_name=func_name,
                   fingerprint=d["fingerprint"], variant=d["variant"],
                   decorators=tuple(d["decorators"]), notes=tuple(d["notes"]))


# ----------------------------------------------------------------------------- fingerprint

class _Canon(ast.NodeTransformer):
    def __init__(self, func_names: dict[str, str], local: set[str]):
        self.func_names = func_names
        self.local = local
        self.map: dict[str, str] = {}

    def _name(self, n: str) -> str:
        if n in self.func_names:
            return self.func_names[n]
        if n in self.local:
            if n not in self.map:
                self.map[n] = f"v{len(self.map)}"
            return self.map[n]
        return n

    def visit_FunctionDef(self, node):
        node.name = self.func_names.get(node.name, node.name)
        self.map = {}
        for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            a.arg = self._name(a.arg)
        node.decorator_list = []
        node.returns = None
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:] or [ast.Pass()]
        node.body = body
        self.generic_visit(node)
        return node

    def visit_arg(self, node):
        node.annotation = None
        return node

    def visit_Name(self, node):
        node.id = self._name(node.id)
        return node


def fingerprint(source: str) -> str:
    """Hash of the normalised form of ``source`` (one or more top-level defs)."""
    tree = ast.parse(textwrap.dedent(source))
    defs = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    func_names = {d.name: f"f{i}" for i, d in enumerate(defs)}
    local: set[str] = set()
    for d in defs:
        for a in [*d.args.posonlyargs, *d.args.args, *d.args.kwonlyargs]:
            local.add(a.arg)
        for n in ast.walk(d):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                local.add(n.id)
    tree.body = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    tree = _Canon(func_names, local).visit(tree)
    dump = ast.dump(tree, annotate_fields=False, include_attributes=False)
    return hashlib.sha256(dump.encode()).hexdigest()[:16]


def name_variant(fp: str, kind: str) -> str:
    t = transcriptions.by_fingerprint(fp, kind)
    return t.name if t is not None else "new"


# ----------------------------------------------------------------------------- libcst helpers

_EMPTY = cst.Module(body=[])


def _code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def _dotted(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    if isinstance(expr, cst.Call):
        return _dotted(expr.func)
    return None


@dataclass
class _Def:
    node: cst.FunctionDef
    path: str
    line: int
    module: cst.Module
    outer: tuple[str, ...]        # enclosing function / class names
    in_class: bool


def _walk_defs(body, outer: tuple[str, ...], in_class: bool, out: list) -> None:
    """Every FunctionDef reachable through statement bodies (not expressions), in document
    order, with its enclosing def/class names. Much cheaper than a full CST visit."""
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            out.append((stmt, outer, in_class))
            _walk_defs(_block(stmt.body), outer + (stmt.name.value,), False, out)
        elif isinstance(stmt, cst.ClassDef):
            _walk_defs(_block(stmt.body), outer + (stmt.name.value,), True, out)
        elif isinstance(stmt, (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar)):
            for blk in _sub_blocks(stmt):
                _walk_defs(_block(blk), outer, in_class, out)


def _block(suite) -> list:
    return list(suite.body) if isinstance(suite, cst.IndentedBlock) else []


def _sub_blocks(stmt) -> list:
    blocks = [stmt.body]
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        blocks.append(orelse.body)
        orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
    for h in getattr(stmt, "handlers", ()) or ():
        blocks.append(h.body)
    fin = getattr(stmt, "finalbody", None)
    if fin is not None:
        blocks.append(fin.body)
    return blocks


def _def_lines(text: str, name: str) -> list[int]:
    pat = re.compile(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(name)}\b")
    return [i for i, ln in enumerate(text.splitlines(), 1) if pat.match(ln)]


class _Tree:
    """Lazily parsed .py files under one folder, with a byte prefilter before libcst."""

    def __init__(self, root: Path, sub: str):
        self.root = root
        self.files = list(iter_py_files(root, sub))
        self._text: dict[Path, str] = {}
        self._mod: dict[Path, cst.Module] = {}
        self._defs: dict[Path, list] = {}

    def text(self, p: Path) -> str:
        if p not in self._text:
            try:
                self._text[p] = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise AuditError(f"{self.rel(p)}: cannot read ({exc})") from None
        return self._text[p]

    def module(self, p: Path) -> cst.Module:
        if p not in self._mod:
            try:
                self._mod[p] = cst.parse_module(self.text(p))
            except cst.ParserSyntaxError as exc:
                raise AuditError(f"{self.rel(p)}: does not parse "
                                 f"(line {exc.raw_line}: {exc.message})") from None
        return self._mod[p]

    def rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def defs(self, name: str) -> list[_Def]:
        out = []
        needle = re.compile(rf"\bdef\s+{re.escape(name)}\b")
        for p in self.files:
            text = self.text(p)
            if f"def {name}" not in text or not needle.search(text):
                continue
            if p not in self._defs:
                found: list = []
                _walk_defs(self.module(p).body, (), False, found)
                self._defs[p] = found
            hits = [f for f in self._defs[p] if f[0].name.value == name]
            lines = _def_lines(text, name)
            for i, (node, outer, in_class) in enumerate(hits):
                line = lines[i] if i < len(lines) else 0
                out.append(_Def(node, self.rel(p), line, self.module(p), outer, in_class))
        return out

    def digest(self) -> str:
        h = hashlib.sha256(f"schema{SCHEMA}".encode())
        for p in self.files:
            h.update(self.rel(p).encode() + b"\0")
            h.update(p.read_bytes())
        return h.hexdigest()


# ----------------------------------------------------------------------------- evaluable text

def _decorator_names(fn: cst.FunctionDef) -> tuple[str, ...]:
    return tuple(_dotted(d.decorator) or _code(d.decorator) for d in fn.decorators)


def _plain_def(fn: cst.FunctionDef) -> str:
    """The def's text, dedented, without decorators (checked by the caller)."""
    return textwrap.dedent(_code(fn.with_changes(decorators=[],
                                                 leading_lines=[]))).strip() + "\n"


def _called_names(fn: cst.FunctionDef) -> set[str]:
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Call(self, node):
            if isinstance(node.func, cst.Name):
                names.add(node.func.value)

    fn.visit(V())
    return names


def _module_level_defs(module: cst.Module) -> dict[str, cst.FunctionDef]:
    return {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}


def _with_helpers(d: _Def) -> tuple[str, list[str]]:
    """The def's text followed by the module-level helpers it calls (transitively)."""
    top = _module_level_defs(d.module)
    parts = [_plain_def(d.node)]
    seen = {d.node.name.value}
    notes = []
    todo = sorted(_called_names(d.node))
    while todo:
        n = todo.pop(0)
        if n in seen or n not in top:
            continue
        seen.add(n)
        helper = top[n]
        if helper.decorators:
            raise AuditError(f"{d.path}: helper {n!r} of {d.node.name.value!r} is decorated "
                             f"({', '.join(_decorator_names(helper))}); cannot evaluate it")
        parts.append(_plain_def(helper))
        notes.append(f"helper {n} included")
        todo.extend(sorted(_called_names(helper)))
    return "\n\n".join(parts), notes


# How each inert decorator spelling must be bound for the name to mean the stdlib object:
# (module, attribute) for `from functools import x`; "import functools" for the dotted form;
# None for a builtin that must not be bound at all.
_INERT_ORIGIN = {"lru_cache": ("functools", "lru_cache"), "cache": ("functools", "cache"),
                 "functools.lru_cache": "import functools", "functools.cache": "import functools",
                 "staticmethod": None}


def _decorator_origin_ok(module: cst.Module, spelled: str) -> bool:
    """True when ``spelled`` provably names the stdlib decorator in this module: every binding
    of its head name anywhere in the module (defs, classes, assignments, imports, at any depth)
    is the expected import. A module-local ``def lru_cache`` is not trusted by its name."""
    head = spelled.split(".")[0]
    want = _INERT_ORIGIN[spelled]
    tree = ast.parse(module.code)
    bound_ok = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == head:
            return False
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.id == head:
            return False
        if isinstance(node, (ast.Global, ast.Nonlocal)) and head in node.names:
            return False
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (a.asname or a.name) == head:
                    if not (isinstance(want, tuple) and node.level == 0
                            and node.module == want[0] and a.name == want[1]):
                        return False
                    bound_ok = True
        if isinstance(node, ast.Import):
            for a in node.names:
                if (a.asname or a.name.split(".")[0]) == head:
                    if not (want == "import functools" and a.name == "functools" and a.asname is None):
                        return False
                    bound_ok = True
    return bound_ok if want is not None else True


def _check_decorators(d: _Def) -> tuple[str, ...]:
    decos = _decorator_names(d.node)
    bad = [x for x in decos if x not in INERT_DECORATORS or not _decorator_origin_ok(d.module, x)]
    if bad:
        raise AuditError(f"{d.path}:{d.line}: {d.node.name.value} is decorated with "
                         f"{', '.join(bad)}; its effect on the result cannot be evaluated",
                         hint="only functools.cache/lru_cache/staticmethod are known to be inert")
    if d.in_class and "staticmethod" not in decos:
        raise AuditError(f"{d.path}:{d.line}: {d.node.name.value} is a method; cannot evaluate it alone")
    return decos


# ----------------------------------------------------------------------------- FA4

def _statement_assigns(body, out: list) -> None:
    """Every ``Assign`` small statement reachable through statement bodies, not entering
    nested defs or classes (their code is not the entry point's)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            out.extend(s for s in stmt.body
                       if isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign)))
        elif isinstance(stmt, (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar)):
            for blk in _sub_blocks(stmt):
                _statement_assigns(_block(blk), out)


def _resolver_call(fn: cst.FunctionDef) -> tuple[str, cst.Assign] | None:
    """``a, b, c, d = CALLEE(...)`` inside ``fn`` whose arguments pass the window sides."""
    hits: list[tuple[str, cst.Assign]] = []
    assigns: list[cst.Assign] = []
    _statement_assigns(_block(fn.body), assigns)
    for node in assigns:
        if not isinstance(node, cst.Assign):
            continue
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
            continue
        tgt = node.targets[0].target
        if not isinstance(tgt, (cst.Tuple, cst.List)) or len(tgt.elements) != 4:
            continue
        if not all(isinstance(e.value, cst.Name) for e in tgt.elements):
            continue
        arg_names: set[str] = set()
        for a in node.value.args:
            arg_names |= _names_in(a.value)
        if {"window_size_left", "window_size_right"} <= arg_names:
            callee = _dotted(node.value.func)
            if callee:
                hits.append((callee.rsplit(".", 1)[-1], node))
    if not hits:
        return None
    callees = {h[0] for h in hits}
    if len(callees) > 1:
        raise AuditError(f"{fn.name.value} calls several window resolvers: {sorted(callees)}")
    first_call = hits[0][1]
    for node in assigns:  # document order: anything rewriting the inputs before the call?
        if node is first_call:
            break
        if isinstance(node, cst.Assign):
            written = set().union(*(_names_in(t.target) for t in node.targets))
        else:
            written = _names_in(node.target)
        hit = written & set(WINDOW_PARAMS)
        if hit:
            raise AuditError(f"{fn.name.value} reassigns {sorted(hit)} before calling its "
                             f"window resolver; the resolver alone does not tell what it does")
    return hits[0]


def _names_in(node: cst.CSTNode) -> set[str]:
    out: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n):
            out.add(n.value)

        def visit_Attribute(self, n):
            n.value.visit(self)
            return False  # the attribute's name is not a variable

    node.visit(V())
    return out


def _assigned_names(node: cst.CSTNode) -> set[str]:
    out: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, n):
            out.update(_names_in(n.target))

        def visit_AugAssign(self, n):
            out.update(_names_in(n.target))

        def visit_AnnAssign(self, n):
            out.update(_names_in(n.target))

    node.visit(V())
    return out


def _lift_inline(entry: _Def) -> tuple[str, str, int]:
    """Lift the inline resolution statements of an entry point into a function."""
    fn = entry.node
    body = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []
    allowed = INLINE_NAMES | {"None", "True", "False"}
    runs: list[list[int]] = []
    cur: list[int] = []
    for i, stmt in enumerate(body):
        names = _names_in(stmt)
        writes = _assigned_names(stmt)
        if names and names <= allowed and writes & INLINE_NAMES:
            cur.append(i)
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    runs = [r for r in runs if any("local" in _assigned_names(body[i]) for i in r)]
    if not runs:
        raise AuditError(f"{entry.path}:{entry.line}: {fn.name.value} neither calls a window "
                         f"resolver nor resolves the window inline; cannot find the rule",
                         hint="is this a FlashAttention 4 source?")
    if len(runs) > 1:
        raise AuditError(f"{entry.path}: {fn.name.value} resolves the window in "
                         f"{len(runs)} places; cannot tell which one applies")
    run = runs[0]
    earlier = set()
    for stmt in body[: run[0]]:
        earlier |= _assigned_names(stmt) & INLINE_NAMES
    if earlier:
        raise AuditError(f"{entry.path}: {fn.name.value} reassigns {sorted(earlier)} before "
                         f"its window resolution; cannot lift it alone")
    used = set().union(*(_names_in(body[i]) for i in run))
    params = list(WINDOW_PARAMS)
    if "mask_mod" in used:
        params.append("mask_mod=None")
    stmts = "".join(textwrap.dedent(_code(body[i])) for i in run)
    name = f"{fn.name.value}__window"
    text = (f"def {name}({', '.join(params)}):\n"
            + textwrap.indent(stmts, "    ")
            + "    return causal, local, window_size_left, window_size_right\n")
    first_line = _stmt_line(entry, body, run[0])
    return name, text, first_line


def _stmt_line(entry: _Def, body: list, index: int) -> int:
    """1-based line of ``body[index]`` inside the entry point."""
    fn = entry.node
    prefix = _code(fn.with_changes(body=fn.body.with_changes(body=body[:index]),
                                   decorators=[], leading_lines=[]))
    return entry.line + prefix.count("\n") + len(body[index].leading_lines)


def _cache_path(kind: str, digest: str) -> Path:
    return cache_dir() / "extract" / kind / f"{digest}.json"


def _load_cached(kind: str, digest: str) -> list[Extracted] | None:
    p = _cache_path(kind, digest)
    try:
        items = json.loads(p.read_text())
        out = [Extracted.from_json(d["meta"], d["source"], d["func_name"]) for d in items]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # the variant name comes from the registry now, not from when it was cached
    return [_renamed(e) for e in out]


def _renamed(e: Extracted) -> Extracted:
    from dataclasses import replace
    return replace(e, variant=name_variant(e.fingerprint, e.kind))


def _store_cached(kind: str, digest: str, items: list[Extracted]) -> None:
    p = _cache_path(kind, digest)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps([{"meta": e.to_json(), "source": e.source,
                                    "func_name": e.func_name} for e in items]))
        tmp.replace(p)
    except OSError:
        pass  # the cache is an optimisation only


def extract_fa4(root: Path, *, use_cache: bool = True) -> list[Extracted]:
    """The window rule(s) of the FA4 tree at ``root`` (the folder holding ``flash_attn/``).

    One entry with role "shared" when both entry points call the same resolver, else one per
    entry point ("fwd", "bwd").
    """
    tree = _Tree(Path(root), "flash_attn/cute")
    if not tree.files:
        raise AuditError(f"{root}: no flash_attn/cute/*.py files")
    digest = tree.digest()
    if use_cache:
        hit = _load_cached("fa4", digest)
        if hit is not None:
            return hit
    found: dict[str, tuple[_Def, str | None]] = {}
    for ep in ENTRY_POINTS:
        defs = [d for d in tree.defs(ep) if not d.outer]
        if not defs:
            raise AuditError(f"{root}: no module-level def {ep} under flash_attn/cute/",
                             hint="is this a FlashAttention 4 (flash-attn-4) source?")
        if len(defs) > 1:
            where = ", ".join(f"{d.path}:{d.line}" for d in defs)
            raise AuditError(f"{ep} is defined more than once ({where}); cannot tell which one runs")
        entry = defs[0]
        call = _resolver_call(entry.node)
        found[ep] = (entry, call[0] if call else None)

    out: list[Extracted] = []
    by_def: dict[tuple[str, int], list[str]] = {}
    resolved: dict[str, tuple[_Def, str, str, tuple[str, ...], list[str]]] = {}
    for ep, (entry, callee) in found.items():
        if callee is None:
            name, text, line = _lift_inline(entry)
            fp = fingerprint(text)
            out.append(Extracted(kind="fa4-resolver", role=ep.rsplit("_", 1)[-1], form="inline",
                                 name=ep, path=entry.path, line=line, source=text,
                                 func_name=name, fingerprint=fp,
                                 variant=name_variant(fp, "fa4-resolver")))
            continue
        d = _locate_callee(tree, entry, callee)
        decos = _check_decorators(d)
        text, notes = _with_helpers(d)
        key = (d.path, d.line)
        by_def.setdefault(key, []).append(ep)
        resolved[f"{key}"] = (d, text, d.node.name.value, decos, notes)
    for key, eps in by_def.items():
        d, text, callee, decos, notes = resolved[f"{key}"]
        role = "shared" if len(eps) == len(ENTRY_POINTS) else eps[0].rsplit("_", 1)[-1]
        fp = fingerprint(text)
        out.append(Extracted(kind="fa4-resolver", role=role, form="function", name=callee,
                             path=d.path, line=d.line, source=text, func_name=callee,
                             fingerprint=fp, variant=name_variant(fp, "fa4-resolver"),
                             decorators=decos, notes=tuple(notes)))
    order = {"shared": 0, "fwd": 1, "bwd": 2}
    out.sort(key=lambda e: order[e.role])
    if use_cache:
        _store_cached("fa4", digest, out)
    return out


def _import_aliases(module: cst.Module, path: str) -> dict[str, tuple[str | None, str]]:
    """``from M import name as local`` at module level: local -> (path of M's file or None,
    name). Relative imports are resolved against the importing file's package."""
    out: dict[str, tuple[str | None, str]] = {}
    pkg = path.rsplit("/", 1)[0] if "/" in path else ""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                continue
            dots = len(small.relative)
            mod = _dotted(small.module) if small.module is not None else None
            target = None
            if dots:
                base = pkg.split("/") if pkg else []
                base = base[: len(base) - (dots - 1)] if dots > 1 else base
                target = "/".join(base + (mod.split(".") if mod else []))
            elif mod:
                target = mod.replace(".", "/")
            for alias in small.names:
                name = _dotted(alias.name)
                if name is None:
                    continue
                local = alias.asname.name.value if alias.asname is not None else name
                out[local] = (target, name)
    return out


def _locate_callee(tree: _Tree, entry: _Def, callee: str) -> _Def:
    aliases = _import_aliases(entry.module, entry.path)
    wanted_files: tuple[str, ...] = ()
    if callee in aliases:
        target, real = aliases[callee]
        if target:
            wanted_files = (f"{target}.py", f"{target}/__init__.py")
        callee = real
    cands = tree.defs(callee)
    if not cands:
        raise AuditError(f"{entry.path}: {entry.node.name.value} calls {callee}, but no "
                         f"def {callee} exists under flash_attn/cute/")
    nested = [d for d in cands if d.path == entry.path and entry.node.name.value in d.outer]
    imported = [d for d in cands if d.path in wanted_files and not d.outer]
    same_module = [d for d in cands if d.path == entry.path and not d.outer]
    toplevel = [d for d in cands if not d.outer or (d.in_class and len(d.outer) == 1)]
    for group in (nested, imported, same_module, toplevel):
        if not group:
            continue
        prints = {fingerprint(_plain_def(d.node)) for d in group}
        if len(prints) > 1:
            where = ", ".join(f"{d.path}:{d.line}" for d in group)
            raise AuditError(f"{callee} has {len(prints)} different definitions ({where}); "
                             f"cannot tell which one {entry.node.name.value} calls")
        return group[0]
    where = ", ".join(f"{d.path}:{d.line}" for d in cands)
    raise AuditError(f"{callee} is only defined nested in other functions ({where}); "
                     f"cannot tell which one {entry.node.name.value} calls")


# ----------------------------------------------------------------------------- TE

def extract_te(root: Path, *, use_cache: bool = True) -> Extracted:
    """TE's ``check_set_window_size`` in the tree at ``root`` (the folder holding
    ``transformer_engine/``)."""
    tree = _Tree(Path(root), "transformer_engine")
    cands = [p for p in tree.files if "check_set_window_size" in tree.text(p)]
    h = hashlib.sha256(f"schema{SCHEMA}".encode())
    for p in cands:
        h.update(tree.rel(p).encode() + b"\0" + tree.text(p).encode())
    digest = h.hexdigest()
    if use_cache:
        hit = _load_cached("te", digest)
        if hit:
            return hit[0]
    tree.files = cands
    defs = tree.defs("check_set_window_size")
    if not defs:
        raise AuditError(f"{root}: no def check_set_window_size under transformer_engine/",
                         hint="TE releases before 1.x or a tree without the PyTorch part?")
    prints = {}
    for d in defs:
        prints.setdefault(fingerprint(_plain_def(d.node)), d)
    if len(prints) > 1:
        where = ", ".join(f"{d.path}:{d.line}" for d in defs)
        raise AuditError(f"check_set_window_size has {len(prints)} different definitions ({where})")
    d = defs[0]
    decos = _check_decorators(d)
    text, notes = _with_helpers(d)
    fp = fingerprint(text)
    e = Extracted(kind="te-window", role="check", form="function", name=d.node.name.value,
                  path=d.path, line=d.line, source=text, func_name=d.node.name.value,
                  fingerprint=fp, variant=name_variant(fp, "te-window"), decorators=decos,
                  notes=tuple(notes))
    if use_cache:
        _store_cached("te", digest, [e])
    return e
