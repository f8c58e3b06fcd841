"""Find the window-resolution rule in a FA4 tree and ``check_set_window_size`` in a TE tree.

Found by structure with the stdlib ``ast``, never by line number (the fingerprint is an ``ast``
dump, so nothing here needs libcst's round-trip fidelity; ``ast`` parses ~10x faster):

* FA4: in ``flash_attn/cute/`` take the entry points ``_flash_attn_fwd`` and ``_flash_attn_bwd``.
  In each, the statement ``causal, local, window_size_left, window_size_right = CALLEE(...)``
  whose call passes the window parameters names the resolver, whatever it is called. CALLEE is
  then followed the way Python looks it up when the entry point runs:

  - a ``def`` of that name nested in the entry point;
  - else the name's **last** module-level binding in the entry point's module (a later ``def``
    or a rebinding ``CALLEE = other`` replaces an earlier ``def``; an import follows into the
    imported module, where the same rule applies; a conditional or opaque rebinding, or a
    ``global`` statement for the name, is an error: it cannot be told which function runs);
  - ``module.CALLEE`` follows ``module`` when it is imported from inside the tree;
  - only a name the module does not bind at all (a ``*`` import, a static method) falls back
    to a unique definition by name anywhere under ``flash_attn/cute/``.

  The module-level helpers the resolver calls come with it (their last binding too). When an
  entry point has no such call (4.0.0b3-b4), the run of consecutive statements that only touch
  ``causal``, ``local``, the window sides and ``mask_mod`` and that assigns ``local`` is lifted
  into a function of its own.
* The resolver is evaluated the way the entry point calls it: the call's own positional and
  keyword arguments, with the entry point's ``causal`` / ``window_size_left`` /
  ``window_size_right`` taking the audited values, ``mask_mod`` None (TE never passes one) and
  literal arguments as written. Any other argument, a ``*``/``**`` splat, or a call that does not
  fit the resolver's signature is an :class:`AuditError` (exit 2), never a table cell. Forward
  and backward share one result ("shared") only when they call the same ``def`` with the same
  bound arguments.
* TE: ``def check_set_window_size`` anywhere under ``transformer_engine/``, called as
  ``check_set_window_size(attn_mask_type, window_size)``.

Each result carries a fingerprint: the SHA-256 (16 hex digits) of a normalised form -- the
``ast`` dump with docstrings, comments, annotations and formatting gone and the function's
own name, parameters and locals renamed by order of appearance. The fingerprint names the
variant through :mod:`transcriptions`; an unknown fingerprint is a *new* variant.
Everything that cannot be found or trusted raises :class:`AuditError`.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import re
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path

import transcriptions
from analyzer.errors import AuditError
from analyzer.sandbox import CallResult, SandboxFailed, SandboxRefused, run_function
from analyzer.sources import cache_dir, iter_py_files

SCHEMA = 5  # bump when extraction or fingerprinting changes (invalidates the cache)

ENTRY_POINTS = ("_flash_attn_fwd", "_flash_attn_bwd")
WINDOW_PARAMS = ("causal", "window_size_left", "window_size_right")
RESULT_NAMES = ("causal", "local", "window_size_left", "window_size_right")
INLINE_NAMES = frozenset({"causal", "local", "window_size_left", "window_size_right", "mask_mod"})
# Entry-point parameters the evaluation fixes, with the value used: TE never passes them.
FIXED_PARAMS = {"mask_mod": None}
# Decorators that leave a function's results unchanged; anything else is refused.
INERT_DECORATORS = frozenset({"functools.lru_cache", "lru_cache", "functools.cache", "cache",
                              "staticmethod"})

# What an extracted function may use inside the sandbox.
FA4_NAMES = ("isinstance", "int", "bool", "AssertionError", "ValueError", "TypeError")
TE_NAMES = ("warnings", "isinstance", "int", "len", "tuple", "list",
            "AssertionError", "ValueError", "TypeError")
TE_ATTRS = ("warn",)

# A call template says how the extracted function is called on one audited input (a tuple:
# (causal, left, right) for FA4, (attn_mask_type, window_size) for TE). Each argument is an
# int (that position of the input) or ("const", value) (a literal the entry point passes).
FA4_POSITIONAL = (0, 1, 2)
TE_POSITIONAL = (0, 1)
_SLOT_OF_NAME = {"causal": 0, "window_size_left": 1, "window_size_right": 2}


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
    # how the tree calls it: positional and keyword arguments (see FA4_POSITIONAL); None means
    # every input value positionally, in order
    call_args: tuple | None = None
    call_kwargs: tuple = ()          # ((keyword, argument), ...)

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

    def call_for(self, values: tuple) -> tuple[tuple, dict]:
        """``(args, kwargs)`` that call this function on one audited input, the way the tree
        calls it."""
        if self.call_args is None:
            return tuple(values), {}

        def arg(a):
            return values[a] if isinstance(a, int) else a[1]

        return (tuple(arg(a) for a in self.call_args),
                {k: arg(a) for k, a in self.call_kwargs})

    def evaluate(self, inputs: list[tuple]) -> list[CallResult]:
        """Evaluate on audited inputs (see :meth:`call_for`), in the sandbox. A call the
        function cannot even accept (an argument binding error: the tool's own call is wrong,
        not the audited rule) raises AuditError instead of coming back as a result."""
        results = self.run([self.call_for(v) for v in inputs])
        for v, r in zip(inputs, results):
            if r.in_call:
                args, kwargs = self.call_for(v)
                shown = ", ".join([*map(repr, args), *(f"{k}={x!r}" for k, x in kwargs.items())])
                raise AuditError(f"{self.path}:{self.line} {self.name}: the audit's own call "
                                 f"{self.func_name}({shown}) failed before the function ran: "
                                 f"{r.error}; the call does not fit its signature")
        return results

    def run(self, calls: list[tuple[tuple, dict]]) -> list[CallResult]:
        """Evaluate this function in the sandbox on raw ``calls``; refusals and failures are
        re-raised naming where the function lives in the audited tree."""
        names, attrs = (FA4_NAMES, ()) if self.kind == "fa4-resolver" else (TE_NAMES, TE_ATTRS)
        try:
            return run_function(self.source, self.func_name, calls,
                                allowed_names=names, allowed_attrs=attrs)
        except (SandboxRefused, SandboxFailed) as exc:
            where = f"{self.path}:{self.line} {self.name}"
            msg = str(exc).replace("line ", "line-in-function ", 1) if "(" in str(exc) else str(exc)
            raise type(exc)(f"{where}: {msg}") from None

    def cache_json(self) -> dict:
        return {"meta": self.to_json(), "source": self.source, "func_name": self.func_name,
                "call_args": None if self.call_args is None else [_arg_json(a) for a in self.call_args],
                "call_kwargs": [[k, _arg_json(a)] for k, a in self.call_kwargs]}

    @classmethod
    def from_json(cls, d: dict, source: str, func_name: str, call_args=None,
                  call_kwargs=()) -> "Extracted":
        return cls(kind=d["kind"], role=d["role"], form=d["form"], name=d["name"], path=d["path"],
                   line=d["line"], source=source, func_name=func_name,
                   fingerprint=d["fingerprint"], variant=d["variant"],
                   decorators=tuple(d["decorators"]), notes=tuple(d["notes"]),
                   call_args=None if call_args is None else tuple(_arg_from_json(a) for a in call_args),
                   call_kwargs=tuple((k, _arg_from_json(a)) for k, a in call_kwargs))


def _arg_json(a):
    return a if isinstance(a, int) else {"const": a[1]}


def _arg_from_json(a):
    if isinstance(a, int) and not isinstance(a, bool):
        return a
    if isinstance(a, dict) and set(a) == {"const"}:
        return ("const", a["const"])
    raise ValueError(f"malformed call argument {a!r}")


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


# ----------------------------------------------------------------------------- ast helpers

_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.TryStar)
_DEF = (ast.FunctionDef, ast.AsyncFunctionDef)


def _dotted(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base else None
    if isinstance(expr, ast.Call):
        return _dotted(expr.func)
    return None


def _sub_bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement (elif chains are nested Ifs
    in ``orelse``)."""
    out = [stmt.body]
    orelse = getattr(stmt, "orelse", None)
    if orelse:
        out.append(orelse)
    for h in getattr(stmt, "handlers", ()) or ():
        out.append(h.body)
    fin = getattr(stmt, "finalbody", None)
    if fin:
        out.append(fin)
    return out


@dataclass
class _Def:
    node: ast.FunctionDef
    path: str
    line: int
    module: ast.Module
    outer: tuple[str, ...]        # enclosing function / class names
    in_class: bool


def _walk_defs(body, outer: tuple[str, ...], in_class: bool, out: list) -> None:
    """Every def reachable through statement bodies (not expressions), in document order,
    with its enclosing def/class names."""
    for stmt in body:
        if isinstance(stmt, _DEF):
            out.append((stmt, outer, in_class))
            _walk_defs(stmt.body, outer + (stmt.name,), False, out)
        elif isinstance(stmt, ast.ClassDef):
            _walk_defs(stmt.body, outer + (stmt.name,), True, out)
        elif isinstance(stmt, _COMPOUND):
            for blk in _sub_bodies(stmt):
                _walk_defs(blk, outer, in_class, out)


def _split_lines(text: str) -> list[str]:
    """Lines as the tokenizer counts them (\\r\\n, \\r, \\n), ends kept."""
    out, start = [], 0
    for m in re.finditer(r"\r\n|\r|\n", text):
        out.append(text[start:m.end()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


class _File:
    """One parsed file: its text, lines and ``ast``."""

    def __init__(self, rel: str, text: str, tree: ast.Module):
        self.rel = rel
        self.text = text
        self.tree = tree
        self._lines: list[str] | None = None
        self.globals: dict[str, ast.AST] | None = None
        self.bound: list[frozenset[str]] | None = None     # names each top-level statement binds
        self.stars: list[tuple[int, ast.ImportFrom]] | None = None   # `from M import *`, by index

    def header_text(self, stmt: ast.stmt) -> str:
        """The lines of ``stmt`` that run at module level: a def or class without its body
        (decorators, defaults, bases), anything else whole."""
        if self._lines is None:
            self._lines = _split_lines(self.text)
        lo = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        hi = stmt.end_lineno
        if isinstance(stmt, (*_DEF, ast.ClassDef)) and stmt.body:
            hi = max(stmt.lineno, stmt.body[0].lineno - 1)
        return "".join(self._lines[lo - 1:hi])

    def segment(self, first: ast.AST, last: ast.AST | None = None) -> str:
        """Source text from ``first``'s start to ``last``'s end (default ``first``'s), the
        first line padded to its column so that ``textwrap.dedent`` lines it up. Column
        offsets are UTF-8 byte offsets."""
        if self._lines is None:
            self._lines = _split_lines(self.text)
        last = last or first
        lines = self._lines
        lo, hi = first.lineno - 1, last.end_lineno - 1
        col, end_col = first.col_offset, last.end_col_offset
        head = lines[lo].encode()
        pad = re.sub(r"[^\t\f ]", " ", head[:col].decode(errors="replace"))
        if lo == hi:
            return pad + head[col:end_col].decode()
        tail = lines[hi].encode()[:end_col].decode()
        return pad + head[col:].decode() + "".join(lines[lo + 1:hi]) + tail


class _Tree:
    """Lazily parsed .py files under one folder, with a byte prefilter before ``ast``."""

    def __init__(self, root: Path, sub: str):
        self.root = root
        self.files = list(iter_py_files(root, sub))
        self._text: dict[Path, str] = {}
        self._parsed: dict[Path, _File] = {}
        self._defs: dict[Path, list] = {}
        self._by_rel: dict[str, Path] | None = None

    def text(self, p: Path, keep: bool = True) -> str:
        """The file's text; ``keep=False`` does not hold it in memory (a prefilter over a
        whole tree must not keep every file)."""
        if p in self._text:
            return self._text[p]
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AuditError(f"{self.rel(p)}: cannot read ({exc})") from None
        if keep:
            self._text[p] = text
        return text

    def parsed(self, p: Path) -> _File:
        if p not in self._parsed:
            text = self.text(p)
            try:
                tree = ast.parse(text, filename=self.rel(p))
            except SyntaxError as exc:
                raise AuditError(f"{self.rel(p)}: does not parse "
                                 f"(line {exc.lineno}: {exc.msg})") from None
            except ValueError as exc:  # null bytes
                raise AuditError(f"{self.rel(p)}: does not parse ({exc})") from None
            self._parsed[p] = _File(self.rel(p), text, tree)
        return self._parsed[p]

    def module(self, p: Path) -> ast.Module:
        return self.parsed(p).tree

    def rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def by_rel(self, rel: str) -> Path | None:
        if self._by_rel is None:
            self._by_rel = {self.rel(p): p for p in self.files}
        return self._by_rel.get(rel)

    def all_defs(self, p: Path) -> list:
        if p not in self._defs:
            found: list = []
            _walk_defs(self.module(p).body, (), False, found)
            self._defs[p] = found
        return self._defs[p]

    def make_def(self, p: Path, node, outer=(), in_class=False) -> _Def:
        return _Def(node, self.rel(p), node.lineno, self.module(p), tuple(outer), in_class)

    def defs(self, name: str) -> list[_Def]:
        out = []
        needle = re.compile(rf"\bdef\s+{re.escape(name)}\b")
        for p in self.files:
            text = self.text(p, keep=False)
            if f"def {name}" not in text or not needle.search(text):
                continue
            self._text.setdefault(p, text)
            for node, outer, in_class in self.all_defs(p):
                if node.name == name:
                    out.append(self.make_def(p, node, outer, in_class))
        return out

    def digest(self) -> str:
        h = hashlib.sha256(f"schema{SCHEMA}".encode())
        # the parent package's own modules too: its __init__ runs first and may change cute's
        # names (``_replaced_at_run_time``)
        for p in self.files + sorted((self.root / "flash_attn").glob("*.py")):
            h.update(self.rel(p).encode() + b"\0")
            h.update(p.read_bytes())
        return h.hexdigest()


# ----------------------------------------------------------------------------- names in code

def _names_in(node: ast.AST) -> set[str]:
    """Every identifier spelled in ``node`` except attribute names: variables, keyword-argument
    names, def/class/parameter names, import and ``global`` names, handler names."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.keyword):
            if n.arg is not None:
                out.add(n.arg)
        elif isinstance(n, (*_DEF, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.alias):
            out.add(n.name.split(".")[0])
            if n.asname:
                out.add(n.asname)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
    return out


def _assigned_names(node: ast.AST) -> set[str]:
    """Names spelled in the targets of every assignment in ``node``."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                out |= _names_in(t)
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            out |= _names_in(n.target)
    return out


def _bound_names(node: ast.AST) -> frozenset[str]:
    """Every name ``node`` binds, searched without entering function or class bodies: def and
    class names, assignment / for / with / walrus / del targets, imports, handler and match
    names (a comprehension's variable too: conservative)."""
    out = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, (*_DEF, ast.ClassDef)):
            out.add(n.name)
            todo.extend(n.decorator_list)
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
            continue
        if isinstance(n, ast.alias):
            out.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        todo.extend(ast.iter_child_nodes(n))
    return frozenset(out)


def _target_names(t: ast.AST, out: set) -> None:
    if isinstance(t, ast.Name):
        out.add(t.id)
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            _target_names(e, out)
    elif isinstance(t, ast.Starred):
        _target_names(t.value, out)


def _stmt_bound_names(body: list, out: set) -> None:
    """:func:`_bound_names` for statements of a file with no ``:=`` in its text: then no
    expression can bind a name in this scope, and only statement targets are read (a
    comprehension's own variables live in its own scope)."""
    for n in body:
        if isinstance(n, (*_DEF, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                _target_names(t, out)
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            if n.value is not None or isinstance(n, ast.AugAssign):
                _target_names(n.target, out)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, ast.Delete):
            for t in n.targets:
                _target_names(t, out)
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            _target_names(n.target, out)
            _stmt_bound_names(n.body, out)
            _stmt_bound_names(n.orelse, out)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for item in n.items:
                if item.optional_vars is not None:
                    _target_names(item.optional_vars, out)
            _stmt_bound_names(n.body, out)
        elif isinstance(n, (ast.If, ast.While)):
            _stmt_bound_names(n.body, out)
            _stmt_bound_names(n.orelse, out)
        elif isinstance(n, (ast.Try, ast.TryStar)):
            _stmt_bound_names(n.body, out)
            for h in n.handlers:
                if h.name:
                    out.add(h.name)
                _stmt_bound_names(h.body, out)
            _stmt_bound_names(n.orelse, out)
            _stmt_bound_names(n.finalbody, out)
        elif isinstance(n, ast.Match):
            out |= _bound_names(n)          # patterns bind names too: the full walk


def _binds(node: ast.AST, name: str) -> bool:
    """Whether ``node`` (searched without entering function or class bodies) binds ``name``."""
    return name in _bound_names(node)


def _called_names(fn: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(fn)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


# ----------------------------------------------------------------------------- bindings

def _import_target(stmt: ast.ImportFrom, path: str) -> str | None:
    """The '/'-separated module path ``from M import ...`` in ``path`` refers to."""
    pkg = path.rsplit("/", 1)[0] if "/" in path else ""
    mod = stmt.module
    if stmt.level:
        base = pkg.split("/") if pkg else []
        base = base[: len(base) - (stmt.level - 1)] if stmt.level > 1 else base
        return "/".join(base + (mod.split(".") if mod else []))
    return mod.replace(".", "/") if mod else None


def _module_files(target: str) -> tuple[str, str]:
    return f"{target}.py", f"{target}/__init__.py"


_GLOBAL_STMT = re.compile(r"(?:^|[;:])[ \t]*(?:global|nonlocal)\b", re.MULTILINE)


def _has_global(f: "_File", name: str) -> ast.AST | None:
    """A ``global``/``nonlocal`` statement naming ``name`` anywhere in the file. A statement
    starts a line or follows ``;`` / ``:``; only a file whose text has one is walked."""
    if f.globals is None:
        f.globals = {}
        if _GLOBAL_STMT.search(f.text):
            for n in ast.walk(f.tree):
                if isinstance(n, (ast.Global, ast.Nonlocal)):
                    for x in n.names:
                        f.globals.setdefault(x, n)
    return f.globals.get(name)


def _last_binding(f: "_File", name: str, upto: int | None) -> tuple[int, ast.stmt] | None:
    """The last module-level statement of ``f`` (before index ``upto``) that binds ``name``
    (index, statement)."""
    if f.bound is None:
        f.bound = []
        walrus = ":=" in f.text
        for stmt in f.tree.body:
            if walrus and ":=" in f.header_text(stmt):
                f.bound.append(_bound_names(stmt))    # an expression may bind: the full walk
            else:
                names: set = set()
                _stmt_bound_names([stmt], names)
                f.bound.append(frozenset(names))
    bound = f.bound if upto is None else f.bound[:upto]
    for i in range(len(bound) - 1, -1, -1):
        if name in bound[i]:
            return i, f.tree.body[i]
    return None


class _Unresolved(Exception):
    """The name is not bound at module level (not an error by itself)."""


def _star_imports(stmt: ast.stmt):
    """``from M import *`` statements in ``stmt`` (at module level or inside its compound
    statements; Python allows them nowhere else)."""
    if isinstance(stmt, ast.ImportFrom):
        if any(a.name == "*" for a in stmt.names):
            yield stmt
    elif isinstance(stmt, _COMPOUND):
        for blk in _sub_bodies(stmt):
            for s in blk:
                yield from _star_imports(s)
    elif isinstance(stmt, ast.Match):
        for case in stmt.cases:
            for s in case.body:
                yield from _star_imports(s)


def _star_exports(tree: "_Tree", q: Path, name: str) -> bool | None:
    """Whether ``from <q> import *`` binds ``name``: per a literal ``__all__``, else every
    public name; None when ``__all__`` is computed (cannot tell)."""
    for stmt in tree.module(q).body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and _binds(stmt, "__all__"):
            value = stmt.value
            if isinstance(stmt, ast.Assign) and isinstance(value, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
                return name in {e.value for e in value.elts}
            return None
    return not name.startswith("_")


def _star_binding(tree: "_Tree", p: Path, body: list, start: int, name: str, depth: int,
                  why: str):
    """The binding of ``name`` made by the last ``*`` import in ``body[start:]`` that binds it,
    as ``(path, node)``, or None when none does."""
    f = tree.parsed(p)
    if f.stars is None:
        f.stars = [(j, s) for j, stmt in enumerate(f.tree.body) for s in _star_imports(stmt)]
    for j, s in reversed(f.stars):
        if not start <= j < len(body):
            continue
        stmt = body[j]
        target = _import_target(s, f.rel)
        q = None
        if target:
            q = tree.by_rel(f"{target}.py") or tree.by_rel(f"{target}/__init__.py")
        if q is None:
            raise AuditError(f"{f.rel}:{s.lineno}: 'from {'.' * s.level}{s.module or ''} import *' "
                             f"(outside the audited tree) may rebind {name}; cannot tell "
                             f"which function {why or name} is at run time")
        exports = _star_exports(tree, q, name)
        if exports is None:
            raise AuditError(f"{f.rel}:{s.lineno}: 'import *' from {tree.rel(q)}, whose "
                             f"__all__ is computed, may rebind {name}")
        if not exports:
            continue
        try:
            res = _resolve_module_name(tree, q, name, depth=depth + 1, why=why)
        except _Unresolved:
            continue
        if s is not stmt:
            raise AuditError(f"{f.rel}:{s.lineno}: {name} is (re)bound conditionally by "
                             f"'import *'; cannot tell which function {why or name} is")
        return res
    return None


def _resolve_module_name(tree: _Tree, p: Path, name: str, *, upto: int | None = None,
                         depth: int = 0, why: str = "") -> tuple[Path, ast.AST]:
    """The def (or module, as ``(path, Module)``) that module-level ``name`` in file ``p`` is
    bound to when the module has finished running (or before statement ``upto``): the last
    binding wins. Raises _Unresolved when the module does not bind it, AuditError when the
    binding cannot be followed."""
    if depth > 8:
        raise AuditError(f"{tree.rel(p)}: {name} is re-bound through more than 8 aliases or imports")
    f = tree.parsed(p)
    body = f.tree.body if upto is None else f.tree.body[:upto]
    g = _has_global(f, name)
    if g is not None:
        raise AuditError(f"{f.rel}:{g.lineno}: a function rebinds the module-level {name} "
                         f"('{type(g).__name__.lower()} {name}'); cannot tell which function "
                         f"{why or name} is at run time")
    hit = _last_binding(f, name, upto)
    star = _star_binding(tree, p, body, hit[0] + 1 if hit else 0, name, depth, why)
    if star is not None:          # a later `from M import *` that exports the name wins
        return star
    if hit is None:
        raise _Unresolved(name)
    index, stmt = hit
    where = f"{f.rel}:{stmt.lineno}"
    if isinstance(stmt, _DEF) and stmt.name == name:
        return p, stmt
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if (len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == name
                and stmt.value is not None):
            if isinstance(stmt.value, ast.Name):
                try:
                    return _resolve_module_name(tree, p, stmt.value.id, upto=index,
                                                depth=depth + 1, why=why)
                except _Unresolved:
                    raise AuditError(f"{where}: {name} = {stmt.value.id}, but {stmt.value.id} is "
                                     f"not defined before it in {f.rel}") from None
            if isinstance(stmt.value, ast.Attribute) and isinstance(stmt.value.value, ast.Name):
                mod_p, mod = _resolve_module_name(tree, p, stmt.value.value.id, upto=index,
                                                  depth=depth + 1, why=why)
                if isinstance(mod, ast.Module):
                    try:
                        return _resolve_module_name(tree, mod_p, stmt.value.attr,
                                                    depth=depth + 1, why=why)
                    except _Unresolved:
                        pass
        raise AuditError(f"{where}: {name} is rebound to {ast.unparse(stmt.value) if stmt.value else '?'}"
                         f" at module level; cannot tell which function {why or name} is")
    if isinstance(stmt, ast.ImportFrom):
        for a in stmt.names:
            if (a.asname or a.name) != name:
                continue
            target = _import_target(stmt, f.rel)
            if target is None or a.name == "*":
                break
            sub = (tree.by_rel(f"{target}/{a.name}.py")
                   or tree.by_rel(f"{target}/{a.name}/__init__.py"))
            if sub is not None:                    # from pkg import module
                return sub, tree.module(sub)
            for rel in _module_files(target):
                q = tree.by_rel(rel)
                if q is not None:
                    try:
                        return _resolve_module_name(tree, q, a.name, depth=depth + 1, why=why)
                    except _Unresolved:
                        raise AuditError(f"{where}: imports {a.name} from {rel}, which does not "
                                         f"define it at module level") from None
            raise AuditError(f"{where}: {name} is imported from {stmt.module or '.'} outside the "
                             f"audited tree; cannot evaluate it")
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            if a.asname == name:
                q = tree.by_rel(_module_files(a.name.replace(".", "/"))[0]) or \
                    tree.by_rel(_module_files(a.name.replace(".", "/"))[1])
                if q is not None:
                    return q, tree.module(q)
    kind = "conditionally" if isinstance(stmt, (*_COMPOUND, ast.Match)) else "by this statement"
    raise AuditError(f"{where}: {name} is (re)bound {kind} at module level; cannot tell which "
                     f"function {why or name} is at run time")


# ----------------------------------------------------------------------------- evaluable text

def _decorator_names(fn: ast.FunctionDef) -> tuple[str, ...]:
    return tuple(_dotted(d) or ast.unparse(d) for d in fn.decorator_list)


def _plain_def(tree: _Tree, d: _Def) -> str:
    """The def's text, dedented, without decorators (checked by the caller)."""
    f = tree.parsed(tree.by_rel(d.path))
    return textwrap.dedent(f.segment(d.node)).strip() + "\n"


def _with_helpers(tree: _Tree, d: _Def) -> tuple[str, list[str]]:
    """The def's text followed by the module-level helpers it calls (transitively), each the
    last binding of its name in the module."""
    p = tree.by_rel(d.path)
    parts = [_plain_def(tree, d)]
    seen = {d.node.name}
    notes = []
    todo = sorted(_called_names(d.node))
    while todo:
        n = todo.pop(0)
        if n in seen:
            continue
        seen.add(n)
        try:
            hp, helper = _resolve_module_name(tree, p, n, why=f"helper {n!r} of {d.node.name!r}")
        except _Unresolved:
            continue  # a builtin (or undefined: the sandbox refuses free names)
        if hp != p or not isinstance(helper, _DEF) or helper.name != n:
            raise AuditError(f"{d.path}: refused to evaluate {d.node.name!r}: its helper {n!r} "
                             f"is not a plain def of this module (it is bound to "
                             f"{getattr(helper, 'name', 'a module')} in {tree.rel(hp)}), so the "
                             f"extracted text could not run it as the tree does")
        if helper.decorator_list:
            raise AuditError(f"{d.path}: helper {n!r} of {d.node.name!r} is decorated "
                             f"({', '.join(_decorator_names(helper))}); cannot evaluate it")
        parts.append(_plain_def(tree, tree.make_def(hp, helper)))
        notes.append(f"helper {n} included")
        todo.extend(sorted(_called_names(helper)))
    return "\n\n".join(parts), notes


# How each inert decorator spelling must be bound for the name to mean the stdlib object:
# (module, attribute) for `from functools import x`; "import functools" for the dotted form;
# None for a builtin that must not be bound at all.
_INERT_ORIGIN = {"lru_cache": ("functools", "lru_cache"), "cache": ("functools", "cache"),
                 "functools.lru_cache": "import functools", "functools.cache": "import functools",
                 "staticmethod": None}


def _decorator_origin_ok(tree: ast.Module, spelled: str) -> bool:
    """True when ``spelled`` provably names the stdlib decorator in this module: every binding
    of its head name anywhere in the module (defs, classes, assignments, imports, at any depth)
    is the expected import. A module-local ``def lru_cache`` is not trusted by its name."""
    head = spelled.split(".")[0]
    want = _INERT_ORIGIN[spelled]
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
        raise AuditError(f"{d.path}:{d.line}: {d.node.name} is decorated with "
                         f"{', '.join(bad)}; its effect on the result cannot be evaluated",
                         hint="only functools.cache/lru_cache/staticmethod are known to be inert")
    if d.in_class and "staticmethod" not in decos:
        raise AuditError(f"{d.path}:{d.line}: {d.node.name} is a method; cannot evaluate it alone")
    return decos


# ----------------------------------------------------------------------------- call binding

def _signature(fn: ast.FunctionDef) -> inspect.Signature:
    """The def's signature, defaults kept as ``ast`` nodes."""
    P = inspect.Parameter
    a = fn.args
    pos = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    params = []
    for i, (arg, dflt) in enumerate(zip(pos, defaults)):
        kind = P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        params.append(P(arg.arg, kind, default=P.empty if dflt is None else dflt))
    if a.vararg is not None:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    for arg, dflt in zip(a.kwonlyargs, a.kw_defaults):
        params.append(P(arg.arg, P.KEYWORD_ONLY, default=P.empty if dflt is None else dflt))
    if a.kwarg is not None:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def _bound_template(d_path: str, line: int, fn: ast.FunctionDef, args: tuple, kwargs: tuple,
                    caller: str) -> tuple:
    """The arguments ``fn`` receives from a call with ``args``/``kwargs`` (call-template
    arguments), defaults filled in: ((parameter, argument), ...). Raises AuditError when the
    call does not fit the signature: the tool would otherwise read a TypeError of its own call
    as the rule's answer."""
    try:
        bound = _signature(fn).bind(*args, **dict(kwargs))
    except TypeError as exc:
        raise AuditError(f"{d_path}:{line}: {caller} calls {fn.name} with arguments that do not "
                         f"fit its signature ({exc}); cannot evaluate it the way it is called") from None
    bound.apply_defaults()
    out = []
    for k, v in bound.arguments.items():
        if isinstance(v, ast.Constant):
            v = ("const", v.value)
        elif isinstance(v, ast.AST):
            v = ("default", ast.dump(v))
        elif isinstance(v, tuple) and v and v[0] == "const":
            pass
        elif isinstance(v, (tuple, dict)):  # *args / **kwargs collected
            v = ("collected", repr(v))
        out.append((k, v))
    return tuple(out)


# ----------------------------------------------------------------------------- FA4

def _statement_assigns(body, out: list) -> None:
    """Every assignment statement reachable through statement bodies, in document order, not
    entering nested defs or classes (their code is not the entry point's)."""
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            out.append(stmt)
        elif isinstance(stmt, _COMPOUND):
            for blk in _sub_bodies(stmt):
                _statement_assigns(blk, out)


def _resolver_call(fn: ast.FunctionDef, path: str) -> tuple[ast.expr, ast.Call] | None:
    """``causal, local, window_size_left, window_size_right = CALLEE(...)`` inside ``fn``:
    the assignment of four names from a call whose arguments pass both window sides.
    Returns (callee expression, call)."""
    hits: list[tuple[str, ast.Assign]] = []
    assigns: list[ast.stmt] = []
    _statement_assigns(fn.body, assigns)
    for node in assigns:
        if not isinstance(node, ast.Assign):
            continue
        if len(node.targets) != 1 or not isinstance(node.value, ast.Call):
            continue
        tgt = node.targets[0]
        if not isinstance(tgt, (ast.Tuple, ast.List)) or len(tgt.elts) != 4:
            continue
        if not all(isinstance(e, ast.Name) for e in tgt.elts):
            continue
        arg_names: set[str] = set()
        for a in [*node.value.args, *(k.value for k in node.value.keywords)]:
            arg_names |= _names_in(a)
        if {"window_size_left", "window_size_right"} <= arg_names:
            callee = _dotted(node.value.func)
            if callee:
                hits.append((callee.rsplit(".", 1)[-1], node))
    if not hits:
        return None
    callees = {h[0] for h in hits}
    if len(callees) > 1:
        raise AuditError(f"{fn.name} calls several window resolvers: {sorted(callees)}")
    first_call = hits[0][1]
    unpacked = tuple(e.id for e in first_call.targets[0].elts)
    if unpacked != RESULT_NAMES:
        raise AuditError(f"{path}:{first_call.lineno}: {fn.name} unpacks its window resolver's "
                         f"result as ({', '.join(unpacked)}), not ({', '.join(RESULT_NAMES)}); "
                         f"cannot tell what the resolved state means")
    watched = set(WINDOW_PARAMS) | set(FIXED_PARAMS)
    for node in assigns:  # document order: anything rewriting the inputs before the call?
        if node is first_call:
            break
        if isinstance(node, ast.Assign):
            written = set().union(*(_names_in(t) for t in node.targets))
        else:
            written = _names_in(node.target)
        hit = written & watched
        if hit:
            raise AuditError(f"{fn.name} reassigns {sorted(hit)} before calling its "
                             f"window resolver; the resolver alone does not tell what it does")
    return first_call.value.func, first_call.value


def _call_arguments(entry: _Def, call: ast.Call) -> tuple[tuple, tuple]:
    """The call-template arguments of the resolver call inside ``entry``."""
    params = {a.arg for a in [*entry.node.args.posonlyargs, *entry.node.args.args,
                              *entry.node.args.kwonlyargs]}

    def arg(expr: ast.expr):
        if isinstance(expr, ast.Name):
            if expr.id in _SLOT_OF_NAME and expr.id in params:
                return _SLOT_OF_NAME[expr.id]
            if expr.id in FIXED_PARAMS and expr.id in params:
                return ("const", FIXED_PARAMS[expr.id])
        if isinstance(expr, ast.Constant) and (expr.value is None or isinstance(
                expr.value, (bool, int, float, str))):
            return ("const", expr.value)
        raise AuditError(f"{entry.path}:{getattr(expr, 'lineno', call.lineno)}: "
                         f"{entry.node.name} passes {ast.unparse(expr)} to its window resolver; "
                         f"cannot evaluate the resolver the way it is called",
                         hint="only causal, window_size_left/right, mask_mod (taken as None) "
                              "and literals are understood")

    args = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            raise AuditError(f"{entry.path}:{call.lineno}: {entry.node.name} passes *"
                             f"{ast.unparse(a.value)} to its window resolver; cannot evaluate it")
        args.append(arg(a))
    kwargs = []
    for k in call.keywords:
        if k.arg is None:
            raise AuditError(f"{entry.path}:{call.lineno}: {entry.node.name} passes **"
                             f"{ast.unparse(k.value)} to its window resolver; cannot evaluate it")
        kwargs.append((k.arg, arg(k.value)))
    return tuple(args), tuple(kwargs)


def _lift_inline(tree: _Tree, entry: _Def) -> tuple[str, str, int]:
    """Lift the inline resolution statements of an entry point into a function."""
    fn = entry.node
    # statements sharing a physical line are one unit (``a = 1; b = 2``)
    units: list[list[ast.stmt]] = []
    for stmt in fn.body:
        if (units and not isinstance(stmt, (*_COMPOUND, *_DEF, ast.ClassDef, ast.Match))
                and not isinstance(units[-1][-1], (*_COMPOUND, *_DEF, ast.ClassDef, ast.Match))
                and stmt.lineno == units[-1][-1].end_lineno):
            units[-1].append(stmt)
        else:
            units.append([stmt])
    allowed = INLINE_NAMES | {"None", "True", "False"}
    runs: list[list[int]] = []
    cur: list[int] = []
    for i, unit in enumerate(units):
        names = set().union(*(_names_in(s) for s in unit))
        writes = set().union(*(_assigned_names(s) for s in unit))
        if names and names <= allowed and writes & INLINE_NAMES:
            cur.append(i)
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    runs = [r for r in runs if any("local" in _assigned_names(s) for i in r for s in units[i])]
    if not runs:
        raise AuditError(f"{entry.path}:{entry.line}: {fn.name} neither calls a window "
                         f"resolver nor resolves the window inline; cannot find the rule",
                         hint="is this a FlashAttention 4 source?")
    if len(runs) > 1:
        raise AuditError(f"{entry.path}: {fn.name} resolves the window in "
                         f"{len(runs)} places; cannot tell which one applies")
    run = runs[0]
    earlier = set()
    for unit in units[: run[0]]:
        for s in unit:
            earlier |= _assigned_names(s) & INLINE_NAMES
    if earlier:
        raise AuditError(f"{entry.path}: {fn.name} reassigns {sorted(earlier)} before "
                         f"its window resolution; cannot lift it alone")
    used = set().union(*(_names_in(s) for i in run for s in units[i]))
    params = list(WINDOW_PARAMS)
    if "mask_mod" in used:
        params.append("mask_mod=None")
    f = tree.parsed(tree.by_rel(entry.path))
    stmts = "".join(textwrap.dedent(f.segment(units[i][0], units[i][-1])) + "\n" for i in run)
    name = f"{fn.name}__window"
    text = (f"def {name}({', '.join(params)}):\n"
            + textwrap.indent(stmts, "    ")
            + "    return causal, local, window_size_left, window_size_right\n")
    return name, text, units[run[0]][0].lineno


def _cache_path(kind: str, digest: str) -> Path:
    return cache_dir() / "extract" / kind / f"{digest}.json"


def _load_cached(kind: str, digest: str) -> list[Extracted] | None:
    p = _cache_path(kind, digest)
    try:
        items = json.loads(p.read_text())
        out = [Extracted.from_json(d["meta"], d["source"], d["func_name"], d["call_args"],
                                   d["call_kwargs"]) for d in items]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # the variant name comes from the registry now, not from when it was cached
    return [_renamed(e) for e in out]


def _renamed(e: Extracted) -> Extracted:
    return replace(e, variant=name_variant(e.fingerprint, e.kind))


def _store_cached(kind: str, digest: str, items: list[Extracted]) -> None:
    p = _cache_path(kind, digest)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".tmp{id(items)}")
        tmp.write_text(json.dumps([e.cache_json() for e in items]))
        tmp.replace(p)
    except OSError:
        pass  # the cache is an optimisation only


def _entry_point(tree: _Tree, root: Path, ep: str) -> _Def:
    """The module-level def of ``ep`` that runs: the last binding in its module."""
    defs = [d for d in tree.defs(ep) if not d.outer]
    if not defs:
        raise AuditError(f"{root}: no module-level def {ep} under flash_attn/cute/",
                         hint="is this a FlashAttention 4 (flash-attn-4) source?")
    files = sorted({d.path for d in defs})
    if len(files) > 1:
        where = ", ".join(f"{d.path}:{d.line}" for d in defs)
        raise AuditError(f"{ep} is defined more than once ({where}); cannot tell which one runs")
    p = tree.by_rel(files[0])
    try:
        q, node = _resolve_module_name(tree, p, ep, why=ep)
    except _Unresolved:  # pragma: no cover - a module-level def always binds
        raise AuditError(f"{files[0]}: {ep} is not bound at module level") from None
    if q != p or not isinstance(node, _DEF) or node.name != ep:
        raise AuditError(f"{files[0]}: {ep} is rebound at module level to something other than "
                         f"its def; cannot tell which function runs")
    return tree.make_def(p, node)


def extract_fa4(root: Path, *, use_cache: bool = True) -> list[Extracted]:
    """The window rule(s) of the FA4 tree at ``root`` (the folder holding ``flash_attn/``).

    One entry with role "shared" when both entry points call the same resolver with the same
    arguments, else one per entry point ("fwd", "bwd").
    """
    tree = _Tree(Path(root), "flash_attn/cute")
    if not tree.files:
        raise AuditError(f"{root}: no flash_attn/cute/*.py files")
    digest = tree.digest()
    if use_cache:
        hit = _load_cached("fa4", digest)
        if hit is not None:
            return hit
    found: dict[str, tuple[_Def, tuple | None]] = {}
    for ep in ENTRY_POINTS:
        entry = _entry_point(tree, Path(root), ep)
        call = _resolver_call(entry.node, entry.path)
        found[ep] = (entry, call)

    out: list[Extracted] = []
    groups: dict[tuple, list[str]] = {}
    resolved: dict[tuple, tuple] = {}
    for ep, (entry, call) in found.items():
        if call is None:
            name, text, line = _lift_inline(tree, entry)
            fp = fingerprint(text)
            out.append(Extracted(kind="fa4-resolver", role=ep.rsplit("_", 1)[-1], form="inline",
                                 name=ep, path=entry.path, line=line, source=text,
                                 func_name=name, fingerprint=fp,
                                 variant=name_variant(fp, "fa4-resolver"),
                                 call_args=FA4_POSITIONAL))
            continue
        callee_expr, call_node = call
        d = _locate_callee(tree, entry, callee_expr)
        replaced = _replaced_at_run_time(tree, Path(root), d.node.name)
        if replaced:
            raise AuditError(f"{replaced}: {d.node.name} is replaced at run time; cannot tell "
                             f"which function {ep} calls as its window resolver")
        decos = _check_decorators(d)
        args, kwargs = _call_arguments(entry, call_node)
        bound = _bound_template(entry.path, call_node.lineno, d.node, args, kwargs, ep)
        key = (d.path, d.line, bound)
        groups.setdefault(key, []).append(ep)
        if key not in resolved:
            text, notes = _with_helpers(tree, d)
            resolved[key] = (d, text, decos, notes, args, kwargs)
    for key, eps in groups.items():
        d, text, decos, notes, args, kwargs = resolved[key]
        role = "shared" if len(eps) == len(ENTRY_POINTS) else eps[0].rsplit("_", 1)[-1]
        fp = fingerprint(text)
        out.append(Extracted(kind="fa4-resolver", role=role, form="function", name=d.node.name,
                             path=d.path, line=d.line, source=text, func_name=d.node.name,
                             fingerprint=fp, variant=name_variant(fp, "fa4-resolver"),
                             decorators=decos, notes=tuple(notes),
                             call_args=args, call_kwargs=kwargs))
    order = {"shared": 0, "fwd": 1, "bwd": 2}
    out.sort(key=lambda e: order[e.role])
    if use_cache:
        _store_cached("fa4", digest, out)
    return out


def _replaced_at_run_time(tree: _Tree, root: Path, name: str) -> str | None:
    """Where code of the FA4 package rebinds ``name`` other than by a module-level statement
    of its own module (which ``_resolve_module_name`` reads, the last binding winning): a store
    of that attribute on anything (``interface._resolve_causal_local_window = f`` in
    ``flash_attn/cute/__init__.py``), ``setattr``/``delattr`` naming it, a namespace written by
    that key (``globals()[...]``, ``vars(m)[...]``, ``m.__dict__[...]``), or a function that
    declares it ``global`` and assigns it. None when nothing does."""
    files = list(tree.files) + sorted((root / "flash_attn").glob("*.py"))
    # every way below names it as an attribute, a string or in a ``global`` statement: a file
    # that does none of these is not parsed (the text search is a superset of the walk)
    maybe = re.compile(r"\.\s*" + re.escape(name) + r"\b|['\"]" + re.escape(name)
                       + r"['\"]|\bglobal\b[^\n]*\b" + re.escape(name) + r"\b")
    for p in files:
        try:
            text = tree.text(p, keep=False) if p in tree.files else p.read_text(
                encoding="utf-8")
        except (OSError, UnicodeDecodeError, AuditError):
            continue
        if name not in text or not maybe.search(text):
            continue
        try:
            mod = tree.module(p) if p in tree.files else ast.parse(text)
        except (SyntaxError, ValueError, AuditError):
            return f"{p.relative_to(root).as_posix()} does not parse"
        rel = p.relative_to(root).as_posix()
        for n in ast.walk(mod):
            if isinstance(n, ast.Attribute) and n.attr == name and \
                    isinstance(n.ctx, (ast.Store, ast.Del)):
                return f"{rel}:{n.lineno} stores {ast.unparse(n)}"
            if isinstance(n, ast.Call) and (_dotted(n.func) or "").rsplit(".", 1)[-1] in (
                    "setattr", "delattr", "__setattr__", "__delattr__") and \
                    any(isinstance(a, ast.Constant) and a.value == name for a in n.args):
                return f"{rel}:{n.lineno} sets it by name"
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)) and \
                    isinstance(n.slice, ast.Constant) and n.slice.value == name:
                return f"{rel}:{n.lineno} writes it into a namespace"
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    isinstance(g, ast.Global) and name in g.names for g in ast.walk(n)) and any(
                    isinstance(x, ast.Name) and x.id == name and isinstance(x.ctx, ast.Store)
                    for x in ast.walk(n)):
                return f"{rel}:{n.lineno} {n.name} rebinds it (global)"
    return None


def _unique_by_fingerprint(tree: _Tree, group: list[_Def], callee: str, entry: _Def) -> _Def:
    prints = {fingerprint(_plain_def(tree, d)) for d in group}
    if len(prints) > 1:
        where = ", ".join(f"{d.path}:{d.line}" for d in group)
        raise AuditError(f"{callee} has {len(prints)} different definitions ({where}); "
                         f"cannot tell which one {entry.node.name} calls")
    return group[0]


def _locate_callee(tree: _Tree, entry: _Def, callee_expr: ast.expr) -> _Def:
    """The def the entry point's call reaches (see the module docstring for the rules)."""
    spelled = _dotted(callee_expr) or ast.unparse(callee_expr)
    callee = spelled.rsplit(".", 1)[-1]
    p = tree.by_rel(entry.path)
    why = f"{entry.node.name}'s window resolver {spelled}"
    if isinstance(callee_expr, ast.Name):
        nested = [d for d in tree.defs(callee)
                  if d.path == entry.path and entry.node.name in d.outer]
        if nested:
            return _unique_by_fingerprint(tree, nested, callee, entry)
        local = [st for st in entry.node.body if _binds(st, callee)]
        if local or callee in {a.arg for a in [*entry.node.args.posonlyargs, *entry.node.args.args,
                                               *entry.node.args.kwonlyargs]}:
            line = local[0].lineno if local else entry.line
            raise AuditError(f"{entry.path}:{line}: {entry.node.name} binds {callee} locally "
                             f"(a parameter or an assignment in its body); cannot tell which "
                             f"function it calls as its window resolver")
        try:
            q, node = _resolve_module_name(tree, p, callee, why=why)
        except _Unresolved:
            pass
        else:
            return _as_def(tree, q, node, spelled, entry)
    elif isinstance(callee_expr, ast.Attribute) and isinstance(callee_expr.value, ast.Name):
        try:
            q, mod = _resolve_module_name(tree, p, callee_expr.value.id, why=why)
        except (_Unresolved, AuditError):
            mod = None  # a class or an outside object: fall back to the search by name
        if isinstance(mod, ast.Module):
            try:
                q2, node = _resolve_module_name(tree, q, callee, why=why)
            except _Unresolved:
                raise AuditError(f"{entry.path}: {entry.node.name} calls {spelled}, but "
                                 f"{tree.rel(q)} does not define {callee}") from None
            return _as_def(tree, q2, node, spelled, entry)
    # not bound by the module (a * import, a static method): a unique def by that name
    cands = tree.defs(callee)
    if not cands:
        raise AuditError(f"{entry.path}: {entry.node.name} calls {callee}, but no "
                         f"def {callee} exists under flash_attn/cute/")
    toplevel = [d for d in cands if not d.outer or (d.in_class and len(d.outer) == 1)]
    if toplevel:
        return _unique_by_fingerprint(tree, toplevel, callee, entry)
    where = ", ".join(f"{d.path}:{d.line}" for d in cands)
    raise AuditError(f"{callee} is only defined nested in other functions ({where}); "
                     f"cannot tell which one {entry.node.name} calls")


def _as_def(tree: _Tree, q: Path, node: ast.AST, spelled: str, entry: _Def) -> _Def:
    if not isinstance(node, _DEF):
        raise AuditError(f"{entry.path}: {entry.node.name} calls {spelled}, which is bound to a "
                         f"module ({tree.rel(q)}), not a function")
    return tree.make_def(q, node)


# ----------------------------------------------------------------------------- TE

def extract_te(root: Path, *, use_cache: bool = True) -> Extracted:
    """TE's ``check_set_window_size`` in the tree at ``root`` (the folder holding
    ``transformer_engine/``)."""
    tree = _Tree(Path(root), "transformer_engine")
    h = hashlib.sha256(f"schema{SCHEMA}".encode())
    cands = []
    for p in tree.files:
        text = tree.text(p, keep=False)
        if "check_set_window_size" in text:
            cands.append(p)
            h.update(tree.rel(p).encode() + b"\0" + text.encode())
    digest = h.hexdigest()
    if use_cache:
        hit = _load_cached("te", digest)
        if hit:
            return hit[0]
    tree.files = cands
    tree._by_rel = None
    # One file at a time, keeping only the first defining file's syntax tree: a tree with many
    # copies of TE (vendored, or the benchmark's 8x) must not hold every parse in memory.
    # Identical files are fingerprinted once.
    name = "check_set_window_size"
    needle = re.compile(rf"\bdef\s+{name}\b")
    defs: list[_Def] = []
    where: list[str] = []
    prints: set[str] = set()
    by_text: dict[str, list[tuple[str, int]]] = {}
    for p in cands:
        text = tree.text(p)
        if not needle.search(text):
            continue
        key = hashlib.sha256(text.encode()).hexdigest()
        if key not in by_text:
            here = [tree.make_def(p, n, o, c) for n, o, c in tree.all_defs(p) if n.name == name]
            by_text[key] = [(fingerprint(_plain_def(tree, d)), d.line) for d in here]
            if not defs:
                defs = here
            else:
                tree._parsed.pop(p, None)
                tree._defs.pop(p, None)
        for fp_, line in by_text[key]:
            prints.add(fp_)
            where.append(f"{tree.rel(p)}:{line}")
    if not defs:
        raise AuditError(f"{root}: no def check_set_window_size under transformer_engine/",
                         hint="TE releases before 1.x or a tree without the PyTorch part?")
    if len(prints) > 1:
        raise AuditError(f"check_set_window_size has {len(prints)} different definitions "
                         f"({', '.join(where)})")
    d = defs[0]
    decos = _check_decorators(d)
    _bound_template(d.path, d.line, d.node, TE_POSITIONAL, (),
                    "the audit (as TE does: check_set_window_size(attn_mask_type, window_size))")
    text, notes = _with_helpers(tree, d)
    fp = fingerprint(text)
    e = Extracted(kind="te-window", role="check", form="function", name=d.node.name,
                  path=d.path, line=d.line, source=text, func_name=d.node.name,
                  fingerprint=fp, variant=name_variant(fp, "te-window"), decorators=decos,
                  notes=tuple(notes), call_args=TE_POSITIONAL)
    if use_cache:
        _store_cached("te", digest, [e])
    return e
