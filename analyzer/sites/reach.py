"""Which files can reach FA4: a cheap import graph of the WHOLE tree, built before anything is
skipped (stdlib ``ast``; per-file summaries cached by content).

A file is parsed by the call-site pass unless the graph proves it cannot reach FA4:

* **FA4 origins** are ``flash_attn.cute`` and its sub-modules, modules the user declares
  (``--fa4-module`` or ``fa4-modules`` in ``[tool.fa4-audit]`` of the audited tree's
  ``pyproject.toml``), and vendored copies recognised by their content: a module that defines at
  least two of FA4's entry points with FA4's window parameters and either the resolver
  (``_resolve_causal_local_window``) or ``_flash_attn_fwd(window_size_left, window_size_right)``.
* A module **reaches** FA4 when it imports an origin, or imports (anything from) an in-tree
  module that reaches it -- re-exports are followed transitively -- statically or through a
  dynamic import whose module name is a constant (``importlib.import_module("...")``,
  ``__import__("...")``, ``sys.modules["..."]``).
* A dynamic import whose name is not a constant can load FA4: when its result is used to make
  a call that can carry a window (a window keyword, a ``**`` splat, six or more positional
  arguments) or escapes the function (returned, stored, passed on), it is reported *unknown*
  (FA4S007). One whose result only makes window-free calls is not a way to FA4 and is ignored.
* A tree that activates torch's FA4 attention implementation
  (``torch.nn.attention.activate_flash_attention_impl("FA4")``) and hands windows to torch's
  attention ops is reported as reaching FA4 through torch (FA4S008, unknown: whether torch maps
  ``-1`` to ``None`` depends on the torch release).
"""

from __future__ import annotations

import ast
import hashlib
import pickle
import re
import sys
from collections import OrderedDict

from analyzer.sites.astutil import flat_statements, sub_bodies, walk
from analyzer.sites.flow_base import RETURN_KEEPING
from analyzer.sites.parse import _modname as modname
from analyzer.sites import astutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from fa4_patch import names as N
from analyzer.sites.bindings import by_short_name, fa_version_of_module
from analyzer.sites.cache import write_atomic

SUMMARY_VERSION = 27

DYNAMIC_FUNCS = {"importlib.import_module", "import_module", "__import__"}


# ----------------------------------------------------------------------------- records

@dataclass(frozen=True)
class DynamicImport:
    line: int
    col: int
    spelled: str            # the call as written, shortened
    constant: str | None    # the module name when it is a constant
    carries_window: bool    # its result makes a call that can carry a window, or escapes
    why: str = ""
    direct: bool = False    # the window call is made right there (not through an escape)
    loader: str = ""        # "value" | "path": a loader used where its argument cannot be read
    message: str = ""       # the finding's whole message, where the fields above do not say it


@dataclass(frozen=True)
class TorchFA4:
    line: int
    col: int
    what: str               # "activates FA4" | "window to torch attention op"


@dataclass
class FileSummary:
    module: str
    is_pkg: bool
    error: str | None = None
    dynamic: list[DynamicImport] = field(default_factory=list)
    torch: list[TorchFA4] = field(default_factory=list)
    vendored_fa4: bool = False
    # every import anywhere in the file (module level or inside functions, constant dynamic
    # imports included), as refs: ("imp", module, name) | ("mod", module, alias) | ("star", module)
    uses: list = field(default_factory=list)        # (line, col, ref)


@dataclass
class ModuleInfo:
    name: str
    path: str
    is_pkg: bool
    raw: bytes                       # the file's bytes; the text is decoded when needed
    _tree: ast.Module | None = None
    error: str | None = None

    @property
    def source(self) -> str:
        """The text (decoded on demand; kept only while this module's syntax tree is live,
        so a big tree never holds every file twice)."""
        text = self.__dict__.get("_src")
        if text is not None:
            return text
        try:
            text = self.raw.decode("utf-8")
        except UnicodeDecodeError:
            return ""
        if id(self) in _LIVE_TREES:
            self._src = text
        return text

    def calls_at(self) -> dict:
        """(line, col_offset) -> the Call node there (built once)."""
        c = self.__dict__.get("_calls")
        if c is None:
            c = {}
            if self.tree is not None:
                for n in walk(self.tree):
                    if isinstance(n, ast.Call):
                        c.setdefault((n.lineno, n.col_offset), n)
            self._calls = c
        return c

    def functions(self) -> list:
        f = self.__dict__.get("_funcs")
        if f is None:
            f = [n for n in walk(self.tree) if isinstance(n, (ast.FunctionDef,
                                                                   ast.AsyncFunctionDef))] \
                if self.tree is not None else []
            self._funcs = f
        return f

    def function_at(self, name: str, line: int):
        """The ``def`` named ``name`` whose lines hold ``line``, the innermost one where
        several do (the last in preorder), or None."""
        found = None
        for n in self.functions():
            if n.name == name and n.lineno <= line <= (n.end_lineno or line):
                found = n
        return found

    def segment(self, node) -> str:
        lines = self.__dict__.get("_lines")
        if lines is None:
            lines = self._lines = self.source.splitlines()
        return "\n".join(lines[node.lineno - 1:(node.end_lineno or node.lineno)])

    @property
    def tree(self) -> ast.Module | None:
        """The syntax tree, indexed: one preorder listing serves every walk of it and every
        parent lookup (``astutil.walk``/``parent``)."""
        t = self.bare_tree
        if t is not None and self.__dict__.get("_index") is None:
            self._index = astutil.index(t)
        return t

    @property
    def bare_tree(self) -> ast.Module | None:
        """The syntax tree, not indexed until ``tree`` is asked for: for readers that walk
        statements only (the class checks of ``attrstores``), which never need the listing
        of every expression node (most of the cost of indexing)."""
        if self._tree is None and self.error is None:
            text = self.source
            try:
                self._tree = ast.parse(text)
            except (SyntaxError, ValueError) as exc:
                self.error = f"does not parse: {exc}"
            else:
                _LIVE_TREES[id(self)] = self
                self._src = text
                while len(_LIVE_TREES) > 1 and \
                        sum(len(m.raw) for m in _LIVE_TREES.values()) > MAX_LIVE_SOURCE:
                    # memory stays flat on big trees: the oldest syntax tree (and what points
                    # into it) is dropped and parsed again if it is needed again
                    _, old = _LIVE_TREES.popitem(last=False)
                    old._tree = None
                    for k in ("_calls", "_funcs", "_src", "_lines", "_index"):
                        old.__dict__.pop(k, None)
        else:
            if id(self) in _LIVE_TREES:
                _LIVE_TREES.move_to_end(id(self))
        return self._tree


MAX_LIVE_SOURCE = 1_500_000      # bytes of source whose syntax trees stay in memory
_LIVE_TREES: "OrderedDict[int, ModuleInfo]" = OrderedDict()


def under_importer_root(importer: str, module: str, known) -> str | None:
    """An absolute import inside a tree audited from above its package roots (``src/``, several
    checkouts side by side): ``module`` under the root the importer lives in, as Python would
    find it with that root on ``sys.path``; None when no such module is ``known``."""
    parts = importer.split(".")
    for i in range(len(parts) - 1, 0, -1):
        cand = ".".join(parts[:i]) + "." + module
        if cand in known:
            return cand
    return None


class TreeIndex:
    """Every module of the audited tree, by dotted name (relative to the tree root)."""

    def __init__(self, data: dict[str, bytes]):
        self.modules: dict[str, ModuleInfo] = {}
        self.by_path: dict[str, ModuleInfo] = {}
        # why this project's fa4_patch may not be what the tree runs ("": it is; set by the
        # pipeline from ``fa4_patch_tampering``; the sandbox then does not serve it)
        self.fa4_patch_tampered = ""
        # where the tree stores into a FlashAttention module ("": nowhere; ``fa4_module_writes``)
        self.fa4_written = ""
        # folders under the root the walk did not enter (set by the pipeline)
        self.unread_dirs: tuple[str, ...] = ()
        for rel, raw in sorted(data.items()):
            name, is_pkg = modname(rel)
            try:
                raw.decode("utf-8")
                err = None
            except UnicodeDecodeError as exc:
                err = f"not UTF-8: {exc}"
            info = ModuleInfo(name, rel, is_pkg, raw, None, err)
            self.modules[name] = info
            self.by_path[rel] = info

    def resolve_from(self, info: ModuleInfo, module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = info.name.split(".") if info.is_pkg else info.name.split(".")[:-1]
        if level - 1 > len(base):
            return module or ""
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return ".".join([*base, module] if module else base)

    def tree_module(self, name: str) -> str | None:
        """The in-tree module ``name`` denotes; tolerant of a tree audited from above its
        package root (``src/pkg`` holding ``pkg``) by suffix match."""
        if name in self.modules:
            return name
        memo = self.__dict__.setdefault("_suffix", None)
        if memo is None:
            memo = {}
            for m in self.modules:
                parts = m.split(".")
                for i in range(1, len(parts)):
                    suf = ".".join(parts[i:])
                    memo[suf] = m if suf not in memo else ""
            self._suffix = memo
        hit = memo.get(name)
        return hit or None


# ----------------------------------------------------------------------------- summaries

def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _const_str(node, consts: dict) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _const_str(node.left, consts), _const_str(node.right, consts)
        if a is not None and b is not None:
            return a + b
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            elif isinstance(v, ast.FormattedValue):
                s = _const_str(v.value, consts)
                if s is None:
                    return None
                out.append(s)
            else:
                return None
        return "".join(out)
    return None


def _string_consts(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "string" assigned exactly once (a constant a dynamic import may use)."""
    seen: dict[str, list] = {}
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    seen.setdefault(t.id, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            seen.setdefault(node.target.id, []).extend([None, None])
    out = {}
    for k, vals in seen.items():
        if len(vals) == 1 and isinstance(vals[0], ast.Constant) and isinstance(vals[0].value, str):
            out[k] = vals[0].value
    return out


def _params(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}


def _module_level_statements(tree: ast.Module):
    """The statements of a module's top level, also under ``if``/``try``/``with``/loops
    there: not in functions or classes."""
    todo = list(tree.body)
    while todo:
        st = todo.pop(0)
        yield st
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for f in ("body", "orelse", "finalbody", "handlers", "cases"):
            for x in getattr(st, f, None) or ():
                if isinstance(x, (ast.excepthandler, ast.match_case)):
                    todo.extend(x.body)
                elif isinstance(x, ast.stmt):
                    todo.append(x)


def _module_level_defs(tree: ast.Module) -> dict:
    """The functions a module defines at its top level, also under ``if``/``try``/``with``/
    loops there (``if _HAS_CUTE: def flash_attn_func(...)``): not in functions or classes."""
    out: dict = {}
    for st in _module_level_statements(tree):
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(st.name, st)
    return out


def _is_vendored(tree: ast.Module) -> bool:
    defs = _module_level_defs(tree)
    entries = 0
    for name in N.ENTRY_POINTS:
        fn = defs.get(name)
        if fn is not None and _params(fn) & set(N.WINDOW_KEYS):
            entries += 1
    fwd = defs.get("_flash_attn_fwd")
    resolver = N.RESOLVER in defs or (
        fwd is not None and {"window_size_left", "window_size_right"} <= _params(fwd))
    # one entry point of FA4's with FA4's window parameters, beside FA4's resolver (or a
    # ``_flash_attn_fwd`` taking the split bounds): FA2/FA3 copies (vLLM's) define neither.
    # A module that imports FA4 itself is no copy of it but a layer in front of it (an
    # engine's shim that re-spells the window before calling the installed FA4): it is
    # audited as the tree's own code
    return entries >= 1 and resolver and not _imports_fa4(tree)


def _imports_fa4(tree: ast.Module) -> bool:
    """Does the module import a FlashAttention 4 module (``flash_attn.cute``...) anywhere?"""
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            if any(fa_version_of_module(a.name) == "fa4" for a in n.names):
                return True
        elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
            if fa_version_of_module(n.module) == "fa4" or any(
                    fa_version_of_module(f"{n.module}.{a.name}") == "fa4" for a in n.names):
                return True
    return False


def _call_carries_window(call: ast.Call) -> bool:
    if any(k.arg is None or k.arg in N.WINDOW_KEYS for k in call.keywords):
        return True
    if any(isinstance(a, ast.Starred) for a in call.args):
        return True
    return len(call.args) >= 6


class _Parents:
    """Parent lookups read off an indexed tree (``astutil.index``): ``node in parents``,
    ``parents[node]``, ``parents.get(node)``."""

    def get(self, node, default=None):
        p = astutil.parent(node)
        return default if p is None else p

    def __contains__(self, node) -> bool:
        return astutil.parent(node) is not None

    def __getitem__(self, node):
        p = astutil.parent(node)
        if p is None:
            raise KeyError(node)
        return p


def _enclosing_scope(parent: dict, node):
    while node in parent:
        node = parent[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return node
    return None


def _restores_registry_entry(call: ast.Call, q, u) -> bool:
    """``old = sys.modules.get(K)`` ... ``sys.modules[K] = old``: the entry read is put back
    under the same key (a rollback); the registry then holds what it held, no new path."""
    if not (isinstance(q, ast.Assign) and q.value is u and len(q.targets) == 1):
        return False
    t = q.targets[0]
    if not (isinstance(t, ast.Subscript) and _dotted(t.value) in ("sys.modules", "modules")):
        return False
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "get" and call.args
            and _dotted(call.func.value) in ("sys.modules", "modules")):
        return False
    return ast.dump(t.slice) == ast.dump(call.args[0])


def _result_use(parent: dict, call: ast.Call, scope) -> tuple[bool, str]:
    """Does the module object a dynamic import returns make a window-carrying call or escape?"""
    p = parent.get(call)
    # import_module(x).f(...)
    if isinstance(p, ast.Attribute) and isinstance(parent.get(p), ast.Call) \
            and parent[p].func is p:
        c = parent[p]
        return (_call_carries_window(c), f"calls .{p.attr}(...) on it")
    if isinstance(p, ast.Attribute):
        q = parent.get(p)
        if isinstance(q, (ast.Compare, ast.If, ast.BoolOp, ast.UnaryOp, ast.Expr)):
            return False, ""
        # passed on, stored, or read further (``.__dict__["flash_attn_func"]``)
        return True, f"its attribute .{p.attr} is passed on or read further"
    if isinstance(p, ast.Assign) and len(p.targets) == 1 and isinstance(p.targets[0], ast.Name):
        var = p.targets[0].id
        if scope is None or any(isinstance(n, (ast.Global, ast.Nonlocal)) and var in n.names
                                for n in ast.walk(scope)):
            # a module-level, class-level or global name: any other module may import it
            # (``from pkg import fa``) and call through it, which this file does not show
            return True, f"{var} is kept where other modules may read it (a module-level, " \
                "class-level or global name)"
        body = scope if scope is not None else None
        root = body if body is not None else _root(parent, call)
        uses = []
        for n in ast.walk(root):
            if isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Load):
                uses.append(n)
        for u in uses:
            q = parent.get(u)
            if isinstance(q, ast.Attribute):
                r = parent.get(q)
                if isinstance(r, ast.Call) and r.func is q:
                    if _call_carries_window(r):
                        return True, f"calls {var}.{q.attr}(...) with what may be a window"
                    continue
                return True, f"{var}.{q.attr} is used as a value"
            if isinstance(q, ast.Call) and q.func is u:
                if _call_carries_window(q):
                    return True, f"calls {var}(...) with what may be a window"
                continue
            if isinstance(q, ast.Call) and _dotted(q.func) == "getattr":
                return True, f"getattr({var}, ...)"
            if isinstance(q, (ast.Compare, ast.If, ast.BoolOp, ast.UnaryOp)):
                continue
            if _restores_registry_entry(call, q, u):
                continue
            return True, f"{var} is passed on or stored"
        return False, ""
    if isinstance(p, ast.Expr):
        return False, ""
    return True, "its result is passed on or stored"


def _root(parent, node):
    while node in parent:
        node = parent[node]
    return node


def _resolve(name: str, is_pkg: bool, module: str | None, level: int) -> str:
    if not level:
        return module or ""
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    if level - 1 > len(base):
        return module or ""
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def _value_refs(node) -> set[str]:
    """Names whose VALUE may flow out of ``node``: every loaded name except one that is only
    called (``f(x)`` hands out f's result, not f) or only compared."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                out.add(n.id)
            continue
        if isinstance(n, ast.Call):
            if not isinstance(n.func, ast.Name):
                stack.append(n.func)
            stack.extend(n.args)
            stack.extend(k.value for k in n.keywords)
            continue
        if isinstance(n, ast.Compare):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


def _function_refs(fn) -> set[str]:
    """Free names whose value may leave ``fn``: through a return/yield (following local
    assignments), an attribute or subscript store, a global/nonlocal store, or a closure."""
    local_deps: dict[str, set] = {}
    leaks: set[str] = set()
    params = {a.arg for a in walk(fn.args) if isinstance(a, ast.arg)} if hasattr(fn, "args") else set()
    for n in walk(fn):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            value = n.value
            if value is None:
                continue
            refs = _value_refs(value)
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                for x in walk(t):
                    if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                        local_deps.setdefault(x.id, set()).update(refs)
                if isinstance(t, (ast.Attribute, ast.Subscript)):
                    leaks |= refs
        elif isinstance(n, (ast.For, ast.comprehension)):
            refs = _value_refs(n.iter)
            for x in walk(n.target):
                if isinstance(x, ast.Name):
                    local_deps.setdefault(x.id, set()).update(refs)
        elif isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) and n.value is not None:
            leaks |= _value_refs(n.value)
        elif isinstance(n, ast.Lambda):
            leaks |= _value_refs(n.body)
        elif isinstance(n, ast.Call):
            # values handed to a callee may be stored by it (a method on an object)
            for a in list(n.args) + [k.value for k in n.keywords]:
                if isinstance(n.func, ast.Attribute):
                    leaks |= _value_refs(a)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            leaks |= set(n.names)
    # close over local assignments
    out: set[str] = set()
    todo = list(leaks)
    seen = set()
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        if x in local_deps:
            todo.extend(local_deps[x])
            if x not in params:
                continue
        out.add(x)
    return out - params


def _bindings(tree: ast.Module, name: str, is_pkg: bool) -> dict:
    out: dict[str, set] = {}

    def add(n, refs):
        out.setdefault(n, set()).update(refs)

    def scan(body):
        for st in flat_statements(body, loops=True):
            if isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        add(a.asname, {("mod", a.name, a.asname)})
                    else:
                        top = a.name.split(".")[0]
                        add(top, {("mod", top, top), ("mod", a.name, top)})
            elif isinstance(st, ast.ImportFrom):
                mod = _resolve(name, is_pkg, st.module, st.level)
                for a in st.names:
                    if a.name == "*":
                        add("*", {("star", mod)})
                    else:
                        add(a.asname or a.name, {("imp", mod, a.name)})
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                refs = _function_refs(st)
                for d in st.decorator_list:
                    refs |= _value_refs(d)
                add(st.name, {("name", r) for r in refs})
            elif isinstance(st, ast.ClassDef):
                refs = set()
                for sub in st.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        refs |= _function_refs(sub)
                    else:
                        for n in walk(sub):
                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                                refs.add(n.id)
                for d in st.decorator_list + st.bases:
                    refs |= _value_refs(d)
                add(st.name, {("name", r) for r in refs})
            elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                if st.value is None:
                    continue
                refs = {("name", r) for r in _value_refs(st.value)}
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    for x in walk(t):
                        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                            add(x.id, refs)
                    if isinstance(t, (ast.Attribute, ast.Subscript)):
                        # a store into another object: that object now carries the value
                        base = t.value
                        while isinstance(base, (ast.Attribute, ast.Subscript)):
                            base = base.value
                        if isinstance(base, ast.Name):
                            add(base.id, refs)
    scan(tree.body)
    return {k: frozenset(v) for k, v in out.items()}


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """name -> the absolute dotted name each import of the file binds it to (``import a.b``
    binds ``a``; ``from a import b as c`` binds ``c`` to ``a.b``; relative imports left out)."""
    aliases: dict[str, str] = {}
    for node in _stmt_imports(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0])
        elif not node.level:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _stmt_imports(tree: ast.Module):
    """Every import statement anywhere in the file, walking statements only (no expressions:
    an import is always a statement)."""
    stack = [tree.body]
    while stack:
        body = stack.pop()
        for st in body:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                yield st
                continue
            stack.extend(sub_bodies(st))


# no leading ``\b``: a literal prefix lets ``re`` search fast (20x here); ``_word_start`` checks
# the boundary instead
_FROM_RE = re.compile(r"from[ \t]+(\.*)[ \t]*([A-Za-z_][\w.]*)?[ \t]*\bimport[ \t]*"
                      r"(\([^)]*\)|[^\n;#]*)")
_IMPORT_RE = re.compile(r"import[ \t]+([^\n;#()]*)")
_NAME_RE = re.compile(r"^\s*([A-Za-z_][\w.]*|\*)\s*(?:\bas\s+([A-Za-z_]\w*))?\s*$")
_VENDOR_RE = re.compile(r"\bdef\s+(flash_attn_func|flash_attn_varlen_func|_flash_attn_fwd|"
                        r"_flash_attn_bwd)\s*\(")
# what a dynamic import or torch's FA4 switch looks like in text (any spelling the expression
# walk below recognises matches this: an over-approximation, checked before parsing)
_DYNAMIC_RE = re.compile(r"import_module|__import__|\bmodules\b|resolve_name|pydoc"
                         r"|activate_flash_attention_impl|varlen_attn"
                         r"|_flash_attention_(?:forward|backward)")
_EXPR_NEEDLES = ("import_module", "__import__", "sys.modules", "from sys import", "resolve_name",
                 "pydoc",
                 "import sys as", "activate_flash_attention_impl", "varlen_attn",
                 "_flash_attention_")
_OPEN_PAREN = re.compile(r"\s*\(")


def _runs_code(text: str) -> bool:
    """The text spells ``exec(`` or ``eval(`` as a name or ``builtins.exec(`` (not
    ``x.eval(``, not ``evaluate(``):
    an over-approximation of the builtin calls, found by plain search (``re`` has no literal
    prefix for it and would scan every byte)."""
    for word in ("exec", "eval"):
        i = text.find(word)
        while i != -1:
            j = i + 4
            before = text[i - 1] if i else " "
            if before == "." and text[max(0, i - 9):i] == "builtins.":
                before = " "                    # builtins.exec(...)
            if not (before.isalnum() or before in "_.") and \
                    (j >= len(text) or not (text[j].isalnum() or text[j] == "_")) and \
                    _OPEN_PAREN.match(text, j):
                return True
            i = text.find(word, j)
    return False
_CODE_RUNNERS = ("exec", "eval", "builtins.exec", "builtins.eval")
# what loads a module or runs code, by its full dotted name (import aliases resolved). A call
# of a name loader or code runner is read where it stands (``_code_run`` and the
# dynamic-import branch of ``_expressions``); anything else -- bound to another name, passed
# on, read off its module by ``getattr`` -- is not followed (``_loader_refs``)
_RUNNERS = frozenset({"exec", "eval", "builtins.exec", "builtins.eval"})
# finders: by a constant name they hand out a spec or a loader, no module; by a computed
# one they are computed imports (``spec_from_file_location(n, find_spec(name).origin)``)
_FINDERS = frozenset({"importlib.util.find_spec", "importlib.find_loader",
                      "pkgutil.find_loader", "pkgutil.get_loader"})
_NAME_LOADERS = frozenset({"__import__", "builtins.__import__", "importlib.import_module",
                           "importlib.__import__", "runpy.run_module"}) | _FINDERS
# loaders that take a file path: what they load is a file of the tree (seen as a module of the
# tree, a vendored FA4 copy recognised by its content) or code outside it, trusted like any
# outside import -- unless the tree holds FA4 under another name or spells flash_attn there
_PATH_LOADERS = frozenset({
    "importlib.util.module_from_spec", "importlib.util.spec_from_file_location",
    "importlib.util.spec_from_loader", "importlib.machinery.SourceFileLoader",
    "importlib.machinery.SourcelessFileLoader", "runpy.run_path", "imp.load_source",
    "imp.load_module", "imp.load_package", "imp.load_compiled", "zipimport.zipimporter"})
# loaders of objects named by installed package metadata (plugins, entry points): the name
# they import is not in the tree, so what they load is not followed
_METADATA_LOADERS = frozenset({
    "importlib.metadata.entry_points", "importlib_metadata.entry_points",
    "importlib.metadata.EntryPoint", "importlib_metadata.EntryPoint",
    "importlib.metadata.EntryPoints", "importlib_metadata.EntryPoints",
    "pkg_resources.iter_entry_points", "pkg_resources.load_entry_point",
    "pkg_resources.get_entry_info", "pkg_resources.get_entry_map", "pkg_resources.EntryPoint"})
# loaders of kernels fetched by a hub repository id (Hugging Face ``kernels``): what they
# load (``get_kernel("<org>/flash-attn4")`` is FA4) is named by no module of the tree
_HUB_LOADERS = frozenset({"kernels.get_kernel", "kernels.get_local_kernel",
                          "kernels.get_locked_kernel", "kernels.load_kernel",
                          "kernels.install_kernel"})
_LOADERS = _RUNNERS | _NAME_LOADERS | _PATH_LOADERS | _METADATA_LOADERS | _HUB_LOADERS
# a package outside the tree whose attention functions dispatch to FA4 by an argument
# (SGLang's ``sgl_kernel.flash_attn.*(..., ver=4)``); the route is not followed
_VERSION_DISPATCHER = "sgl_kernel.flash_attn."
_VERSION_KEYWORD = "ver"
# modules whose attributes are loaders: ``getattr(importlib, name)``, ``m = importlib``
_LOADER_MODULES = frozenset({"builtins", "importlib", "importlib.util", "importlib.machinery",
                             "runpy", "imp", "zipimport"})


_WORD_CHAR = re.compile(r"\w")


def _word_start(rx: re.Pattern, text: str):
    """``rx.finditer(text)`` as if the pattern began with ``\b`` (a match whose previous
    character is a word character is dropped and the search resumes one character later)."""
    pos = 0
    while True:
        m = rx.search(text, pos)
        if m is None:
            return
        start = m.start()
        if start and _WORD_CHAR.match(text, start - 1):
            pos = start + 1
            continue
        yield m
        pos = m.end() if m.end() > start else start + 1


def _scan_imports(text: str, name: str, is_pkg: bool):
    """Every import the text can make, found by pattern over the raw text (strings and
    comments included): an over-approximation of the statements ``ast`` would see -- an
    extra edge only makes reach larger, never smaller. Yields (line, col, ref)."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    state = [0, 1]          # last position counted, its line (matches come in order)

    def line_of(pos: int) -> int:
        if pos < state[0]:
            state[0], state[1] = 0, 1
        state[1] += text.count("\n", state[0], pos)
        state[0] = pos
        return state[1]

    masked = set()
    for m in _word_start(_FROM_RE, text):
        # the position of this statement's own ``import`` keyword (not counted again below)
        masked.add(m.start() + m.group(0).rfind("import", 0, m.start(3) - m.start()))
        level = len(m.group(1))
        mod = _resolve(name, is_pkg, m.group(2), level) if level else (m.group(2) or "")
        names_txt = m.group(3).strip()
        if names_txt.startswith("("):
            names_txt = names_txt[1:-1] if names_txt.endswith(")") else names_txt[1:]
        line = line_of(m.start())
        names = []
        names_txt = " ".join(l.split("#")[0] for l in names_txt.splitlines())
        for part in names_txt.split(","):
            nm = _NAME_RE.match(part)
            if nm:
                names.append(nm.group(1))
        for n in names:
            ref = ("star", mod) if n == "*" else ("imp", mod, n)
            yield line, 1, ref
    state[0], state[1] = 0, 1
    for m in _word_start(_IMPORT_RE, text):
        if m.start() in masked:
            continue
        line = line_of(m.start())
        for part in m.group(1).split(","):
            nm = _NAME_RE.match(part)
            if not nm or nm.group(1) == "*":
                continue
            target, alias = nm.group(1), nm.group(2)
            if alias:
                yield line, 1, ("mod", target, alias)
            else:
                top = target.split(".")[0]
                yield line, 1, ("mod", top, top)
                if "." in target:
                    yield line, 1, ("mod", target, top)


def summarize(rel: str, source: str, info: "ModuleInfo | None" = None) -> FileSummary:
    """What the import graph needs from one file. ``info``: the module's record, whose syntax
    tree (parsed here only when needed) the later stages then reuse."""
    name, is_pkg = modname(rel)
    s = FileSummary(name, is_pkg)
    s.uses.extend(_scan_imports(source, name, is_pkg))
    maybe_vendored = "window_size" in source and "def _flash_attn_fwd" in source or \
        ("_resolve_causal_local_window" in source and "def flash_attn" in source)
    dynamic = (any(n in source for n in _EXPR_NEEDLES) and _DYNAMIC_RE.search(source)) \
        or _runs_code(source) or _mentions_loader(source)
    needs_tree = (maybe_vendored and len(set(_VENDOR_RE.findall(source))) >= 1) or dynamic
    if needs_tree:
        if info is not None:
            tree = info.tree
            if tree is None:
                s.error = info.error or "does not parse"
                return s
        else:
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError) as exc:
                s.error = f"does not parse: {exc}"
                return s
        s.vendored_fa4 = _is_vendored(tree)
        if dynamic:
            _expressions(s, tree, source)
    return s


def _mentions_loader(source: str) -> bool:
    """A module that loads code (runpy, importlib, imp, zipimport, builtins) or names
    ``exec``/``eval``/``__import__`` other than as a call: an over-approximation, found by
    text, of what ``_loader_refs`` reads off the syntax tree: each word searched from a
    literal (a pattern that starts with a literal is searched fast; one that starts with
    ``\b`` or a lookbehind is tried at every position), its word boundary checked by hand
    (``tests/test_speed_parts.py`` holds the one-pattern form it replaced)."""
    for word, rx, dotted in _LOADER_PARTS:
        if word not in source:
            continue
        for m in _word_start(rx, source):
            start = m.start()
            if dotted and start and source[start - 1] == ".":
                continue
            return True
    return False


_LOADER_PARTS = tuple(
    [(w, re.compile(re.escape(w) + r"\b"), False)
     for w in ("runpy", "imp", "zipimport", "builtins", "__builtins__", "entry_points",
               "EntryPoint", "load_entry_point", "get_entry_info", "get_entry_map",
               "get_kernel", "get_local_kernel", "get_locked_kernel", "load_kernel",
               "install_kernel", "sgl_kernel")]
    + [("importlib", re.compile(r"importlib\b(?!\s*\.\s*(?:metadata|resources|import_module)"
                                r"\b)"), False)]
    + [(w, re.compile(re.escape(w) + r"(?!\s*\(|\w)"), True)
       for w in ("exec", "eval", "__import__")])


# a module ``__getattr__``: defined, or assigned (``__getattr__, __dir__, __all__ =
# lazy.attach(...)``, ``__getattr__ = _lazy``), at any indentation (under an ``if``/``try``)
_LAZY_RE = re.compile(r"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+__getattr__[ \t]*\(|"
                      r"[^\n#=]*\b__getattr__\b[^\n#=]*=(?!=))", re.M)


def _absolute_from(modname: str, is_pkg: bool, module: str, level: int) -> str:
    """The absolute name ``from <dots><module> import`` refers to inside ``modname``."""
    if not level:
        return module
    parts = modname.split(".")
    base = parts if is_pkg else parts[:-1]
    base = base[:len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([module] if module else []))


def _resolve_relative(name: str, package: str | None) -> str | None:
    """``importlib.util.resolve_name``'s rule, without importing: ``.interface`` in package
    ``flash_attn.cute`` is ``flash_attn.cute.interface``; None when it cannot be resolved."""
    if not package:
        return None
    level = len(name) - len(name.lstrip("."))
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        return None
    base = bits[0]
    rest = name[level:]
    return f"{base}.{rest}" if rest else base


def _loader_refs(s: FileSummary, tree: ast.Module, aliases: dict, consts: dict,
                 source: str) -> None:
    """Loaders used where their argument cannot be read (see ``_LOADERS``). ``exec``/``eval``
    and the builtins' namespace run code that may call FA4 itself: unknown where they stand.
    A name loader bound to another name loads a module nothing here reads, whose functions
    escape (``compute`` reports each call that hands a window to a callee nothing resolves).
    A path loader's result escapes the same way only where the file spells ``flash_attn``
    or the tree holds FA4 under another name (``compute``)."""
    parent = _Parents()

    def add(node, full, why, direct, kind):
        text = " ".join((ast.unparse(node) or full).split())[:80]
        s.dynamic.append(DynamicImport(node.lineno, node.col_offset + 1, text, None, True, why,
                                       direct, loader=kind))

    for node in walk(tree):
        if not (isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load)):
            continue
        if isinstance(node, ast.Attribute) and node.attr in ("entry_points",
                                                             "load_entry_point"):
            # entry points read off anything (``distribution("pkg").entry_points``, a
            # ``Distribution`` object): what they load is named by package metadata
            add(node, node.attr, f"reads .{node.attr}, whose objects are imported by names "
                                 "from installed package metadata: what they load is not "
                                 "followed", False, "value")
            continue
        p = parent.get(node)
        if isinstance(p, ast.Attribute):
            continue                        # the longest chain is the one read
        d = _dotted(node)
        if not d:
            continue
        head, _, rest = d.partition(".")
        full = aliases.get(head, head) + ("." + rest if rest else "")
        if full.startswith("__builtins__"):
            full = "builtins" + full[len("__builtins__"):]
            if full == "builtins":
                full = "builtins.__dict__"      # a dict in imported modules, a module in main
        called = isinstance(p, ast.Call) and p.func is node
        if full in _METADATA_LOADERS:
            add(node, full, f"uses {full}, which imports objects named by installed package "
                            "metadata (entry points): what it loads is not followed", False,
                "value")
        elif full in _HUB_LOADERS:
            add(node, full, f"uses {full}, which loads a kernel named by a hub repository id "
                            "(FA4 among them): what it loads is not followed", False, "value")
        elif full in _LOADERS:
            if called and (full in _RUNNERS or full in _NAME_LOADERS):
                continue                    # read where it stands (``_expressions``)
            if called:                      # a path loader
                carries, why = _result_use(parent, p, _enclosing_scope(parent, p))
                if carries:
                    add(p, full, f"loads a module from a file by {full}(...) and {why}", False,
                        "path" if "flash_attn" not in source else "value")
                continue
            add(node, full, f"uses {full} as a value: what it loads or runs is not followed",
                full in _RUNNERS or full.startswith("builtins."), "value")
        elif full in _LOADER_MODULES or full in ("builtins.__dict__", "importlib.__dict__"):
            if isinstance(p, ast.Compare) or (isinstance(p, ast.Call) and
                                              _dotted(p.func) in ("hasattr", "isinstance")):
                continue                    # ``name in builtins.__dict__``
            if isinstance(p, ast.Subscript) and p.value is node:
                key = _const_str(p.slice, consts)
                if key is not None and f"builtins.{key}" not in _LOADERS \
                        and f"{full.split('.')[0]}.{key}" not in _LOADERS:
                    continue                # ``builtins.__dict__["print"]``
            if isinstance(p, ast.Call) and _dotted(p.func) == "getattr" and p.args \
                    and p.args[0] is node and len(p.args) > 1:
                key = _const_str(p.args[1], consts)
                if key is not None and f"{full}.{key}" not in _LOADERS and key != "__dict__":
                    continue                # ``getattr(importlib, "invalidate_caches")``
            add(node, full, f"reads {full.split('.__dict__')[0]}'s loaders without naming "
                            "one (a namespace, getattr or the module handed on)",
                full.startswith("builtins"), "value")


def _expressions(s: FileSummary, tree: ast.Module, source: str) -> None:
    """Dynamic imports and torch's FA4 switch: the only parts that need an expression walk."""
    # walks and parents read off the tree's index (ModuleInfo keeps one; else built here and
    # kept alive for this function)
    ix = None if astutil.indexed(tree) else astutil.index(tree)  # noqa: F841
    candidates = [n for n in walk(tree) if isinstance(n, (ast.Call, ast.Subscript))]
    consts = _string_consts(tree)
    parent = _Parents()

    def parents():
        return parent

    import_aliases = _import_aliases(tree)
    _loader_refs(s, tree, import_aliases, consts, source)
    for node in candidates:
        if isinstance(node, ast.Call):
            d = _dotted(node.func)
            if not d:
                continue
            head, _, rest = d.partition(".")
            full = import_aliases.get(head, head) + ("." + rest if rest else "")
            if full in _CODE_RUNNERS:
                _code_run(s, node, consts, parents)
            elif d == "__import__" or d.endswith(".__import__") \
                    or full in _FINDERS \
                    or full in ("importlib.import_module", "runpy.run_module",
                                "pkgutil.resolve_name", "pydoc.locate", "sys.modules.get",
                                "sys.modules.setdefault", "sys.modules.pop",
                                "sys.modules.__getitem__"):
                arg = node.args[0] if node.args else None
                c = _const_str(arg, consts) if arg is not None else None
                if c is not None and full in _FINDERS:
                    continue        # a constant name: a spec or a loader, no module handed out
                if c is not None and full in ("pkgutil.resolve_name", "pydoc.locate"):
                    # "pkg.mod:attr" names a module and an attribute; "pkg.mod.attr" is tried
                    # as the longest importable prefix: either way FA4 is inside the name
                    c = c.split(":", 1)[0]
                if c is not None and c.startswith(".") and full != "runpy.run_module":
                    # import_module(".interface", package="flash_attn.cute"): relative to the
                    # package argument, by Python's rule; a package not constant is computed
                    pkg = next((k.value for k in node.keywords if k.arg == "package"),
                               node.args[1] if len(node.args) > 1 else None)
                    c = _resolve_relative(c, _const_str(pkg, consts) if pkg is not None
                                          else None)
                parent = parents()
                carries, why = _result_use(parent, node, _enclosing_scope(parent, node))
                text = ast.unparse(node) or d
                s.dynamic.append(DynamicImport(node.lineno, node.col_offset + 1,
                                               " ".join(text.split())[:80], c, carries, why,
                                               why.startswith("calls")))
                if c is not None:
                    s.uses.append((node.lineno, node.col_offset + 1, ("mod", c, "")))
            elif full.startswith(_VERSION_DISPATCHER) and (
                    any(k.arg in (_VERSION_KEYWORD, None) and not (
                        isinstance(k.value, ast.Constant) and k.value.value != 4)
                        for k in node.keywords)):
                # a version chosen at run time, 4, or splatted keywords that may hold it
                s.dynamic.append(DynamicImport(
                    node.lineno, node.col_offset + 1, " ".join((ast.unparse(node) or d)
                                                               .split())[:80], None, True,
                    f"calls {full} with {_VERSION_KEYWORD}= that may be 4, which runs "
                    "FA4 by a route this pass does not follow", True))
            elif full.endswith("activate_flash_attention_impl"):
                arg = node.args[0] if node.args else None
                c = _const_str(arg, consts) if arg is not None else None
                if c is None or "4" in c:
                    s.torch.append(TorchFA4(node.lineno, node.col_offset + 1,
                                            f"activates torch's flash attention impl {c!r}"
                                            if c else "activates a flash attention impl "
                                            "chosen at run time"))
            elif (op := next((x for x in (full.rsplit(".", 1)[-1], d.rsplit(".", 1)[-1])
                              if x in _TORCH_OPS), None)) is not None:
                if any(k.arg in N.WINDOW_KEYS for k in node.keywords):
                    s.torch.append(TorchFA4(node.lineno, node.col_offset + 1,
                                            f"hands a window to torch's {op}"))
                elif any(k.arg is None for k in node.keywords) or \
                        any(isinstance(a, ast.Starred) for a in node.args):
                    s.torch.append(TorchFA4(node.lineno, node.col_offset + 1,
                                            f"splats arguments into torch's {op} (a window "
                                            "among them is not read)"))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if _dotted(node.value) == "sys.modules":
                c = _const_str(node.slice, consts)
                parent = parents()
                carries, why = _result_use(parent, node, _enclosing_scope(parent, node))
                text = ast.unparse(node) or "sys.modules[...]"
                s.dynamic.append(DynamicImport(node.lineno, node.col_offset + 1,
                                               " ".join(text.split())[:80], c, carries, why,
                                               why.startswith("calls")))
                if c is not None:
                    s.uses.append((node.lineno, node.col_offset + 1, ("mod", c, "")))
    _registry_handed_on(s, tree, import_aliases)
    _torch_references(s, tree, import_aliases)


# reads of the module registry the expression walk follows: ``sys.modules[K]`` and these
# methods called on it (what they return is read like an import of K), or reads that hand no
# module out
_REGISTRY_READS = frozenset({"get", "setdefault", "pop", "__getitem__", "__contains__", "keys"})


def _registry_handed_on(s: FileSummary, tree: ast.Module, import_aliases: dict) -> None:
    """``sys.modules`` used other than by a constant-keyed read (``mods = sys.modules``,
    ``sys.modules.values()``, handed to a function): every module it holds, FA4 among them,
    can be read off it. A computed dynamic import whose result escapes."""
    for node in walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "modules"
                or isinstance(node, ast.Name) and import_aliases.get(node.id) == "sys.modules"):
            continue
        d = _dotted(node)
        if not d:
            continue
        head, _, rest = d.partition(".")
        if import_aliases.get(head, head) + ("." + rest if rest else "") != "sys.modules":
            continue
        p = astutil.parent(node)
        if isinstance(p, ast.Subscript) and p.value is node or isinstance(p, ast.Compare):
            continue
        if isinstance(p, ast.Attribute) and p.value is node and p.attr in _REGISTRY_READS:
            gp = astutil.parent(p)
            if isinstance(gp, ast.Call) and gp.func is p:
                continue
        text = " ".join((ast.unparse(p) if p is not None else d).split())[:80]
        s.dynamic.append(DynamicImport(node.lineno, node.col_offset + 1, text, None, True,
                                       "hands the module registry on: what is read off it "
                                       "is not followed", False))


_TORCH_OPS = ("varlen_attn", "_flash_attention_forward", "_flash_attention_backward")
_TORCH_SWITCH = "activate_flash_attention_impl"


def _torch_references(s: FileSummary, tree: ast.Module, import_aliases: dict) -> None:
    """torch's FA4 switch and attention ops used other than by a plain call of their name:
    the switch read off a namespace or by a string (``getattr(attention, "activate_...")``):
    an activation chosen at run time; an op handed on as a value (``attn = varlen.varlen_attn``)
    -- the calls made through it may hand it any window. Both count like the spellings the
    call walk reads (FA4S008 needs an activation and a handoff)."""
    for node in walk(tree):
        t = type(node)
        if t is ast.Constant and node.value == _TORCH_SWITCH:
            s.torch.append(TorchFA4(node.lineno, node.col_offset + 1,
                                    "activates a flash attention impl chosen at run time "
                                    f"({_TORCH_SWITCH} named by a string)"))
            continue
        if t is ast.Constant and isinstance(node.value, str) and node.value in _TORCH_OPS:
            # ``getattr(torch.ops.aten, "_flash_attention_forward")``: the op named by a
            # string, the calls made through it not read
            s.torch.append(TorchFA4(node.lineno, node.col_offset + 1,
                                    f"names torch's {node.value} by a string (the windows "
                                    "calls through it pass are not read)"))
            continue
        if t is ast.Name and isinstance(node.ctx, ast.Load):
            name = import_aliases.get(node.id, node.id).rsplit(".", 1)[-1]
        elif t is ast.Attribute and isinstance(node.ctx, ast.Load):
            name = node.attr
        else:
            continue
        if name not in _TORCH_OPS and name != _TORCH_SWITCH:
            continue
        p = astutil.parent(node)
        if isinstance(p, ast.Call) and p.func is node:
            continue                    # a call of it by name: read by the call walk
        if isinstance(p, (ast.ImportFrom, ast.Import)):
            continue
        if name == _TORCH_SWITCH:
            s.torch.append(TorchFA4(node.lineno, node.col_offset + 1,
                                    f"activates a flash attention impl chosen at run time "
                                    f"({_TORCH_SWITCH} handed on as a value)"))
        else:
            s.torch.append(TorchFA4(node.lineno, node.col_offset + 1,
                                    f"hands torch's {name} on as a value (the windows calls "
                                    "through it pass are not read)"))


_BUILT_CODE = "runs code built at run time"


def _code_run(s: FileSummary, node: ast.Call, consts: dict, parents) -> None:
    """``exec(...)`` / ``eval(...)``: the code it runs may import FA4 or call it. Constant code
    is read: its imports are import edges (FA4 among them is reported like a constant dynamic
    import of FA4), and a call in it that can carry a window is unknown where it stands.
    Computed code, or code that does not parse, is a computed dynamic import whose result
    escapes (calls handing a window to a callee nothing resolves become unknown)."""
    arg = node.args[0] if node.args else None
    code = _const_str(arg, consts) if arg is not None else None
    text = " ".join((ast.unparse(node) or "exec(...)").split())[:80]
    where = (node.lineno, node.col_offset + 1)
    try:
        tree = ast.parse(code) if code is not None else None
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None and any(isinstance(st, ast.Call) and _call_carries_window(st)
                                for st in ast.walk(tree)):
        # the code makes a window call itself (``exec("flash_attn_func(q, k, v,
        # window_size=(-1, 0))")``): unknown where it stands, whatever else it reads
        s.dynamic.append(DynamicImport(*where, text, None, True,
                                       "runs code that makes a call which can carry a "
                                       "window", True))
    if tree is not None and (_DYNAMIC_RE.search(code) or _runs_code(code)
                             or "getattr" in code or "spec" in code
                             or _reads_module_names(tree)):
        # constant code that itself loads modules by name or runs code
        # (``eval("__import__('flash_attn...')")``), or reads the names of the module it
        # runs in (``eval("flash_attn_func")``, ``eval("fa4.flash_attn_func")``): what it
        # gives is read as computed
        tree = None
    if tree is None:
        s.dynamic.append(DynamicImport(*where, text, None, True, _BUILT_CODE, False))
        return
    for st in ast.walk(tree):
        if isinstance(st, ast.Import):
            for a in st.names:
                s.uses.append((*where, ("mod", a.name, "")))
                s.dynamic.append(DynamicImport(*where, text, a.name, True,
                                               "runs code that imports it", False))
        elif isinstance(st, ast.ImportFrom) and not st.level and st.module:
            for a in st.names:
                s.uses.append((*where, ("imp", st.module, a.name)))
                s.dynamic.append(DynamicImport(*where, text, st.module, True,
                                               "runs code that imports it", False))


def _reads_module_names(tree: ast.AST) -> bool:
    """Does code read a name other than a builtin (a name of the module it runs in)?"""
    import builtins

    own = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.arg):
            own.add(n.arg)                              # a lambda's or def's parameter
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            own.add(n.id)                               # bound by the code itself
        elif isinstance(n, ast.alias):
            own.add((n.asname or n.name).split(".")[0])  # its own imports (read as edges)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(n.name)
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in own
               and not hasattr(builtins, n.id) for n in ast.walk(tree))


def _window_dicts(fn) -> set[str]:
    """Local names that hold a dict with a window key spelled in ``fn``: ``d = {"window_size":
    ...}``, ``d = dict(window_size=...)``, ``d["window_size_left"] = ...``, ``d.update(...)``
    with one, ``d.setdefault("window_size", ...)``."""
    out = set()
    keys = set(N.WINDOW_KEYS)

    def has_key(node) -> bool:
        for n in walk(node):
            if isinstance(n, ast.Constant) and n.value in keys:
                return True
            if isinstance(n, ast.keyword) and n.arg in keys:
                return True
        return False

    for n in walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Dict, ast.Call)) \
                and has_key(n.value):
            out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                        and has_key(t.slice):
                    out.add(t.value.id)
                elif isinstance(n, ast.AugAssign) and isinstance(t, ast.Name) and has_key(n.value):
                    out.add(t.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and isinstance(n.func.value, ast.Name) and n.func.attr in ("update", "setdefault") \
                and has_key(n):
            out.add(n.func.value.id)
    return out


def _opaque_splat(fn, value) -> bool:
    """``**value`` may carry keys no text spells: a call's result (``**json.load(f)``), a dict
    display with a computed key (``**{"_".join(k): v}``), or a local bound to either or to a
    comprehension (``cfg = dict(zip(keys, vals))``). A parameter (``**kwargs``) is the caller's,
    judged where the caller is."""
    def made_opaque(v) -> bool:
        if isinstance(v, ast.Call):
            return True
        if isinstance(v, ast.Dict):
            return any(k is not None and not isinstance(k, ast.Constant) for k in v.keys)
        return isinstance(v, ast.DictComp)
    if made_opaque(value):
        return True
    if isinstance(value, ast.Name):
        for n in walk(fn):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id
                                                 for t in n.targets) and made_opaque(n.value):
                return True
    return False


def _blind_calls(tree: ast.Module, source: str, lazy=frozenset(), modname: str = "",
                 is_pkg: bool = False, binds: "TopBindings | None" = None,
                 wide: bool = False) -> list[tuple]:
    """Calls carrying a window (a window keyword, or a ``**`` splat of a dict the function puts
    a window key in) whose callee is rooted at neither an import, a module-level def/class nor
    a builtin: a parameter, a local, an object's attribute, a computed lookup -- or is read off
    a call's result or a subscript (``load().f``, ``getattr(m, name)``, ``ns["f"]``), whatever
    the root. With ``wide`` (the tree loads a module by a name the pass cannot read: FA4's
    name may be decoded, read from a data file), a call also carries a window where it passes
    more positional arguments than FA4 takes before its first window, or a ``**`` splat whose
    keys no text spells (``_opaque_splat``), in every function whatever it spells.
    With ``binds``, a callee read through the tree's own module-level names and
    imports counts as rooted only where those bindings make it a def or class of the tree (or
    a name from outside it): a name another module assigned (``from a import FN`` where ``a``
    does ``FN = load()``) is not. Returns (line, col, callee text, spelled) for each:
    ``spelled`` where the call names a window (what ``wide`` adds is not)."""
    import builtins

    def absolute(module, level):
        return _absolute_from(modname, is_pkg, module or "", level)

    out: list[tuple] = []
    top = set()
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.add(st.name)
    for node in _stmt_imports(tree):
        if isinstance(node, ast.ImportFrom) and lazy:
            base = _absolute_from(modname, is_pkg, node.module or "", node.level)
            if base in lazy:
                continue        # what a PEP 562 __getattr__ returns: computed, not followed
        for a in node.names:
            if isinstance(node, ast.Import) and _reads_through_lazy(a, lazy):
                continue        # ``import pkg`` then ``pkg.name(...)``: the same __getattr__
            top.add((a.asname or a.name).split(".")[0])
    lines = source.splitlines()
    # every function, and the module's own top-level code (calls outside any def or class)
    scopes = [(fn, walk(fn)) for fn in walk(tree)
              if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    scopes.append((tree, _top_level_nodes(tree)))
    for fn, nodes in scopes:
        if fn is not tree and not wide:
            seg = "\n".join(lines[fn.lineno - 1:(fn.end_lineno or fn.lineno)])
            if not any(k in seg for k in N.WINDOW_KEYS):
                continue
        # a function's own imports resolve its callees (the module's are ``top``, where a
        # name a PEP 562 module hands out is left out)
        local_imports = set() if fn is tree else {
            (a.asname or a.name).split(".")[0] for n in nodes
            if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names
            if not (isinstance(n, ast.Import) and _reads_through_lazy(a, lazy))}
        local_kinds = {} if fn is tree or binds is None else _top_binding_kinds(
            ast.Module(body=[n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))],
                       type_ignores=[]), absolute)
        wdicts = None
        for n in nodes:
            if not isinstance(n, ast.Call):
                continue
            carries = any(k.arg in N.WINDOW_KEYS for k in n.keywords)
            if not carries and any(k.arg is None for k in n.keywords):
                if wdicts is None:
                    wdicts = _window_dicts(fn)
                carries = any(k.arg is None and isinstance(k.value, ast.Name)
                              and k.value.id in wdicts for k in n.keywords)
            spelled = carries
            if not carries and wide:
                carries = sum(1 for a in n.args if not isinstance(a, ast.Starred)) > \
                    N.FIRST_WINDOW_AT or any(k.arg is None and _opaque_splat(fn, k.value)
                                            for k in n.keywords)
            if not carries:
                continue
            root = n.func
            computed = False        # the callee is read off a call's result or a subscript
            chain: list[str] = []
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                if isinstance(root, ast.Call):
                    computed = computed or not (isinstance(root.func, ast.Name)
                                                and root.func.id == "super")
                    root = root.func
                else:
                    computed = computed or isinstance(root, ast.Subscript)
                    if isinstance(root, ast.Attribute):
                        chain.insert(0, root.attr)
                    root = root.value
            if isinstance(root, ast.Name) and not computed:
                rest = tuple(chain)
                if binds is not None and root.id in local_kinds:
                    if all(binds.kind_resolved(k, rest) for k in local_kinds[root.id]):
                        continue
                elif binds is not None and root.id not in local_imports and \
                        binds.kinds(modname, root.id):
                    if binds.resolved(modname, (root.id,) + rest):
                        continue
                elif root.id in top or root.id in local_imports or hasattr(builtins, root.id):
                    continue
            if isinstance(root, ast.Name) and root.id in ("self", "cls") and \
                    isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
                continue            # self.method(...): a method of the class, followed in-tree
            out.append((n.lineno, n.col_offset + 1, " ".join(ast.unparse(n.func).split())[:60],
                        spelled))
    return out


# comments and string literals in one pass (``re`` in C): a string (with its prefix letters
# left outside the match) or a comment, whichever starts first
_LEXEME_RE = re.compile(r"#[^\n]*|\"\"\"[\s\S]*?\"\"\"|'\'\'[\s\S]*?'\'\'"
                        r"|\"(?:\\[\s\S]|[^\"\\\n])*\"|'(?:\\[\s\S]|[^'\\\n])*'")
_IMPORT_LINE_RE = re.compile(r"[ \t]*(?:from|import)[ \t]")


def _span_lookup(spans: list[tuple[int, int]]):
    """A test of whether a position falls in one of ``spans`` (sorted, not overlapping: the
    lexemes of ``_LEXEME_RE``)."""
    import bisect
    starts = [a for a, _ in spans]

    def inside(pos: int) -> bool:
        i = bisect.bisect_right(starts, pos) - 1
        return i >= 0 and spans[i][0] <= pos < spans[i][1]
    return inside


def fa4_named_in_strings(info: "ModuleInfo", names, dynamic=()) -> list[tuple[int, int, str]]:
    """(line, col, text) of each string constant of a module that names an FA4 module
    (``names``, dotted; the ``/`` spelling of a path counts) other than the constant argument of
    a dynamic import the summary read (``dynamic``). Read off the text: comments are skipped,
    strings found by a lexer of literals; an FA4 name in the code that is not on an import
    line (an attribute chain, a string inside an f-string expression) sends the file to
    ``ast``, which is exact."""
    src = info.source
    spell = [n for n in names if n in src] + [n.replace(".", "/") for n in names
                                               if n.replace(".", "/") in src]
    if not spell:
        return []
    read = {d.constant for d in dynamic if d.constant}
    out: list[tuple[int, int, str]] = []
    lexemes = list(_LEXEME_RE.finditer(src))
    for mt in lexemes:
        tok = mt.group()
        if tok.startswith("#") or not any(n in tok for n in spell):
            continue
        body = tok.strip("\"'")
        if body in read:
            continue
        line = src.count("\n", 0, mt.start()) + 1
        col = mt.start() - (src.rfind("\n", 0, mt.start()) + 1) + 1
        out.append((line, col, " ".join(tok.split())[:80]))
    # a name outside every comment and literal: on an import line it is an import the graph
    # reads; anywhere else the syntax tree decides
    inside = _span_lookup([mt.span() for mt in lexemes])
    for n in spell:
        for hit in re.finditer(re.escape(n), src):
            if inside(hit.start()):
                continue
            bol = src.rfind("\n", 0, hit.start()) + 1
            if _IMPORT_LINE_RE.match(src, bol):
                continue
            return _named_in_tree(info, names, read)
    return out


def _named_in_tree(info: "ModuleInfo", names, read) -> list[tuple[int, int, str]]:
    t = info.bare_tree
    if t is None:
        return [(1, 1, "the file does not parse")]
    out = []
    spell = list(names) + [n.replace(".", "/") for n in names]
    for node in ast.walk(t):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            v = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
            if v not in read and any(n in v for n in spell):
                out.append((node.lineno, node.col_offset + 1, " ".join(repr(v).split())[:80]))
    return out


# changes to where Python finds modules: one pattern per literal it starts with (``re`` then
# searches by that prefix; an alternation of them would try every position); a ``__path__``
# rebuilt by ``pkgutil.extend_path`` (the namespace idiom: the same package name elsewhere on
# ``sys.path``) is not a change
_IMPORT_SYSTEM_RES = (
    ("sys", re.compile(
        r"sys[ \t]*\.[ \t]*path[ \t]*(?:\.[ \t]*(?:insert|append|extend|__setitem__|__iadd__)"
        r"[ \t]*\(|\[[^\]\n]*\][ \t]*=(?!=)|\+=|=(?!=))")),
    ("__path__", re.compile(
        r"__path__[ \t]*(?:\.[ \t]*(?:insert|append|extend|__setitem__)[ \t]*\(|\+=|=(?!=)"
        r"(?![^\n]*extend_path\())")),
    ("meta_path", re.compile(r"meta_path")),
    ("path_hooks", re.compile(r"path_hooks")),
    ("path_importer_cache", re.compile(r"path_importer_cache")),
    ("addsitedir", re.compile(r"addsitedir")),
    ("import", re.compile(r"from[ \t]+sys[ \t]+import[^\n]*\bpath\b")),
)


# what may be read off ``sys`` without changing where Python finds modules (``sys.modules``
# has rules of its own); any other use of the module -- another attribute, ``sys`` handed on
# or aliased, ``getattr(sys, ...)``, ``sys.path`` other than after ``in`` -- is a change
_SYS_READS = frozenset({
    "argv", "orig_argv", "version", "version_info", "hexversion", "api_version", "platform",
    "exit", "stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__", "maxsize",
    "maxunicode", "executable", "flags", "byteorder", "float_info", "int_info", "hash_info",
    "implementation", "getsizeof", "getrecursionlimit", "setrecursionlimit", "exc_info",
    "exception", "excepthook", "getdefaultencoding", "getfilesystemencoding", "getrefcount",
    "intern", "is_finalizing", "prefix", "base_prefix", "exec_prefix", "base_exec_prefix",
    "warnoptions", "stdlib_module_names", "builtin_module_names", "dont_write_bytecode",
    "modules", "gettrace", "getprofile", "settrace", "setprofile", "_getframe",
    "displayhook", "unraisablehook", "tracebacklimit", "last_type", "last_value",
    "last_traceback", "platlibdir", "getswitchinterval", "setswitchinterval",
    "get_int_max_str_digits", "set_int_max_str_digits", "thread_info", "abiflags",
    "float_repr_style", "getwindowsversion", "winver", "audit", "addaudithook"})
# other spellings that change where (or what) Python imports, searched as words in code:
# the working folder behind ``sys.path``'s "" entry, loaders that register a module under a
# name, ``.pth`` processing, and a module's own import context
_IMPORT_CONTEXT_WORDS = tuple(
    (w, re.compile(re.escape(w) + r"\b")) for w in (
        "chdir", "load_source", "load_module", "load_package", "load_compiled", "load_dynamic",
        "SourceFileLoader", "SourcelessFileLoader", "ExtensionFileLoader", "addpackage",
        "addsitepackages", "addusersitepackages"))
# a module's own import context set (not an attribute of another object: ``K.__name__ = ``)
_IMPORT_CONTEXT_SETS = tuple(
    (w, re.compile(re.escape(w) + r"\s*(?:\.\s*\w+\s*)?(?:=(?!=)|\+=)"))
    for w in ("__package__", "__spec__", "__loader__", "__name__"))


def _import_context_words(src: str) -> list[int]:
    """Positions of the words of ``_IMPORT_CONTEXT_WORDS`` and of the sets of
    ``_IMPORT_CONTEXT_SETS``, each searched from its literal (a pattern without a literal
    prefix is tried at every position of every file)."""
    out = []
    for w, rx in _IMPORT_CONTEXT_WORDS:
        if w in src:
            out.extend(m.start() for m in _word_start(rx, src))
    for w, rx in _IMPORT_CONTEXT_SETS:
        if w in src:
            out.extend(m.start() for m in rx.finditer(src)
                       if not (m.start() and (src[m.start() - 1] == "."
                                              or _WORD_CHAR.match(src, m.start() - 1))))
    return out


# a package's ``__path__`` changed in place or rebound (``x.__path__[:0] = [...]``,
# ``.insert(...)``, ``__path__ = ...``)
_PATH_CHANGED = re.compile(
    r"\s*(?:=(?!=)|[+*|]=|\[[^\]\n]*\]\s*(?:=(?!=)|[+*|]=)|\.\s*(?:insert|append|extend"
    r"|__setitem__|__iadd__|__delitem__|clear|remove|pop|reverse|sort)\b)")
_DUNDER_STRINGS = ("__path__", "__package__", "__spec__", "__loader__", "meta_path",
                   "path_hooks", "path_importer_cache")
_EXTEND_PATH_IDIOM = re.compile(
    r"[ \t]*__path__[ \t]*=[ \t]*(?:pkgutil[ \t]*\.[ \t]*)?extend_path[ \t]*\([ \t]*__path__"
    r"[ \t]*,[ \t]*__name__[ \t]*\)[ \t]*(?:#[^\n]*)?$")


def _in_code(pattern: str, src: str, inside):
    """(match, start of its line, end of its line) of each match of ``pattern`` outside the
    comments and strings ``inside`` tells."""
    for mt in re.finditer(pattern, src):
        if inside(mt.start()):
            continue
        eol = src.find("\n", mt.start())
        yield mt, src.rfind("\n", 0, mt.start()) + 1, eol if eol >= 0 else len(src)


def _import_context_changes(src: str) -> list[int]:
    """Positions of uses that may change where Python finds modules, beyond the spellings of
    ``_IMPORT_SYSTEM_RES``: ``sys`` used other than by a read of ``_SYS_READS`` (aliased,
    handed on, ``getattr(sys, "path")``, ``list.insert(sys.path, ...)``, ``from sys import
    (argv, path)`` over lines), a name ``sys`` imported by another spelling, ``__path__`` in
    code other than the ``extend_path`` idiom alone on its line, ``"sys"`` or a dunder of the
    import system in a string (``import_module("sys")``, ``globals()["__path__"]``), and the
    words and sets of ``_import_context_words``. Comments and strings are not code here."""
    context = _import_context_words(src)
    words = ("sys" in src, "__path__" in src, bool(context))
    if not any(words):
        return []
    lexemes = [mt.span() for mt in _LEXEME_RE.finditer(src)]
    inside = _span_lookup(lexemes)
    hits = []
    for a, b in lexemes:
        if src[a] == "#":
            continue
        body = src[a:b].strip("\"'rRbBuUfF")
        if body == "sys" or body in _DUNDER_STRINGS:
            hits.append(a)
    if words[0]:
        for mt, bol, eol in _in_code(r"\bsys\b", src, inside):
            pos = mt.start()
            line = src[bol:eol]
            head = line.lstrip()
            if head.startswith("import ") and re.search(r"\bsys\b(?!\s+as\b)", line) and \
                    not re.search(r"\bsys\s+as\b", line):
                continue                    # ``import sys`` / ``import os, sys``
            if head.startswith("from "):
                fm = re.match(r"from\s+sys\s+import\s*", head)
                if fm is None:
                    hits.append(pos)        # ``from os import sys``: another spelling
                    continue
                start = bol + (len(line) - len(head)) + fm.end()
                if src.startswith("(", start):
                    end = src.find(")", start)
                    names = src[start + 1:end if end >= 0 else len(src)]
                else:
                    names = src[start:eol]
                names = re.sub(r"#[^\n]*", "", names).replace("\\\n", " ")
                got = [n.split()[0] for n in names.split(",") if n.strip()]
                if not got or any(n not in _SYS_READS or " as " in f" {x} "
                                  for n, x in zip(got, names.split(","))):
                    hits.append(pos)
                continue
            am = re.match(r"\s*\.\s*(\w+)", src[mt.end():mt.end() + 80])
            if am is None:
                hits.append(pos)            # ``sys`` handed on, aliased, looked into
            elif am.group(1) == "path":
                if not re.search(r"\bin\s*$", src[bol:pos]):
                    hits.append(pos)        # only ``x in sys.path`` / ``for p in sys.path``
            elif am.group(1) not in _SYS_READS:
                hits.append(pos)
    if words[1]:
        for mt, bol, eol in _in_code(r"__path__", src, inside):
            pos = mt.start()
            if _EXTEND_PATH_IDIOM.match(src[bol:eol]):
                continue
            if _PATH_CHANGED.match(src, mt.end()):
                hits.append(pos)
                continue
            if pos and src[pos - 1] == ".":
                # another package's ``__path__`` read where a loop or a test reads it
                # (``for p in nvidia.__path__``) or one of its folders read
                # (``nvidia.__path__[0]``); anywhere else it may be handed on
                chain = re.search(r"[\w.]*$", src[bol:pos]).start()
                if re.search(r"\bin\s*$", src[bol:bol + chain]) or \
                        re.match(r"\s*\[", src[mt.end():mt.end() + 8]):
                    continue
            hits.append(pos)
    hits.extend(pos for pos in context if not inside(pos))
    return hits


def import_system_changes(src: str) -> list[tuple[int, int, str]]:
    """(line, col, text) of each place a module changes where Python finds modules: an
    insert into ``sys.path`` or a package's ``__path__``, an import hook (``sys.meta_path``,
    ``sys.path_hooks``), ``site.addsitedir``, ``sys.path`` imported by name, and every use of
    ``sys`` or of a module's import context the pass cannot tell harmless
    (``_import_context_changes``). Read off the text (comment lines skipped)."""
    hits = _import_context_changes(src)
    for needle, pat in _IMPORT_SYSTEM_RES:
        if needle in src:
            hits.extend(mt.start() for mt in pat.finditer(src))
    out = []
    for start in sorted(set(hits)):
        bol = src.rfind("\n", 0, start) + 1
        if src[bol:start].lstrip().startswith("#"):
            continue
        eol = src.find("\n", start)
        text = " ".join(src[bol:eol if eol >= 0 else len(src)].split())[:80]
        out.append((src.count("\n", 0, start) + 1, start - bol + 1, text))
    return out


def import_system_changes_of(info: "ModuleInfo", index: "TreeIndex | None" = None
                             ) -> list[tuple[int, int, str]]:
    """``import_system_changes`` of a module, outside the tree excepted (a folder of the tree
    put on the path: ``path_insert_into_tree``), read once per module."""
    got = info.__dict__.get("_import_changes")
    if got is None:
        got = [] if info.error is not None else [
            c for c in import_system_changes(info.source)
            if not path_insert_into_tree(info, c[0], index)]
        info._import_changes = got
    return got


def path_insert_into_tree(info: "ModuleInfo", line: int,
                          index: "TreeIndex | None" = None) -> bool:
    """The change to the import system at ``line`` is a ``sys.path.insert/append`` of a folder
    inside the tree, computed from the file's own ``__file__`` and constant parts
    (``os.path.join(os.path.dirname(os.path.abspath(__file__)), "third_party", "fa")``,
    ``str(Path(__file__).parent / "vendor")``): the tree's modules become importable by a
    shorter name (which the flow follows), nothing from outside is. Anything else is not.
    With the tree's ``index``, a folder whose modules the graph cannot name as Python will
    (``inserted_folder_hazard``) is not either."""
    t = info.tree
    if t is None:
        return False
    calls = [n for n in walk(t) if isinstance(n, ast.Call) and n.lineno <= line
             <= (n.end_lineno or n.lineno) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("insert", "append") and _dotted(n.func.value) == "sys.path"]
    if len(calls) != 1 or not calls[0].args:
        return False
    got = _tree_path(calls[0].args[-1], info.path, 0)
    if got is None or got == ".." or got.startswith("../") or got.startswith("/"):
        return False
    return index is None or not inserted_folder_hazard(index, got)


# top-level names the pass takes for modules outside the tree whatever the tree holds: this
# project's fa4_patch (the sandbox serves its own) and FlashAttention
_SERVED_ELSEWHERE = frozenset({"fa4_patch", "flash_attn"})


def inserted_folder_hazard(index: "TreeIndex", folder: str) -> str:
    """Why the modules of ``folder`` (relative to the tree's root), put on ``sys.path``, may
    not be what the graph takes them for ("" when they are): it lies in a folder the walk did
    not read (a module kept in ``.git/``, the tree's own ``vendor/site-packages``), or one of
    its modules, named from there, is also the name of another module of the tree or of
    several (``sub/norm.py`` beside ``norm.py``: the order of ``sys.path`` decides which
    ``import norm`` loads, and the graph follows one)."""
    f = "" if folder in ("", ".") else folder.strip("/")
    for d in index.unread_dirs:
        if f == d or f.startswith(d + "/"):
            return f"{folder} lies in {d}, which the walk does not read"
    prefix = f + "/" if f else ""
    for m, mi in index.modules.items():
        if not mi.path.startswith(prefix):
            continue
        short = modname(mi.path[len(prefix):])[0]
        if not short or short == m:
            continue
        parts = short.split(".")
        if parts[0] in _SERVED_ELSEWHERE or parts[0] in sys.stdlib_module_names:
            # ``compat/math.py`` or ``compat/fa4_patch.py``: the graph and the sandbox take
            # ``import math`` for the standard library's, ``fa4_patch`` for this project's
            return f"{mi.path} is imported as {short}, a module from outside the tree"
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            other = index.modules.get(name)
            mine = ".".join(([f.replace("/", ".")] if f else []) + parts[:i])
            if other is not None and name != mine:
                return f"{mi.path} is imported as {short}, also the name of {other.path}"
        if index.tree_module(short) != m:
            return f"{mi.path} is imported as {short}, which names several modules of the tree"
    return ""


def _tree_path(node, path: str, depth: int) -> str | None:
    """A path expression over ``__file__`` and constants, relative to the tree's root (the
    file is at ``path``); None when it is anything else."""
    import posixpath
    if depth > 12:
        return None
    if isinstance(node, ast.Name) and node.id == "__file__":
        return path
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return None         # a bare constant: a folder anywhere (only parts of a join count)
    if isinstance(node, ast.Call):
        f = _dotted(node.func)
        if f in ("os.path.dirname", "os.path.abspath", "os.path.realpath", "os.path.normpath",
                 "str", "Path", "pathlib.Path") and len(node.args) == 1 and not node.keywords:
            inner = _tree_path(node.args[0], path, depth + 1)
            if inner is None:
                return None
            return posixpath.dirname(inner) if f == "os.path.dirname" else inner
        if f == "os.path.join" and node.args and not node.keywords:
            base = _tree_path(node.args[0], path, depth + 1)
            parts = node.args[1:]
            if base is None or not all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                       and not a.value.startswith(("/", "~")) for a in parts):
                return None
            return posixpath.normpath(posixpath.join(base, *[a.value for a in parts]))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "resolve" and \
                not node.args:
            return _tree_path(node.func.value, path, depth + 1)
        return None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _tree_path(node.value, path, depth + 1)
        return None if inner is None else posixpath.dirname(inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
            isinstance(node.right, ast.Constant) and isinstance(node.right.value, str) and \
            not node.right.value.startswith(("/", "~")):
        base = _tree_path(node.left, path, depth + 1)
        return None if base is None else posixpath.normpath(posixpath.join(base,
                                                                            node.right.value))
    return None


def fa4_patch_tampering(index: "TreeIndex") -> str:
    """Why this project's ``fa4_patch`` may not be what the tree's ``fa4_patch.wrap`` runs
    ("" when it is): the tree holds a module of that name, changes the import system, writes
    ``sys.modules`` entries naming it, or stores into its namespace (``fa4_patch.wrap = ...``,
    ``setattr(fa4_patch.wrapper, ...)``, the module handed on as a value). The sandbox runs
    this project's package, so a proof through it holds only where the tree leaves it alone."""
    import fa4_patch as _own
    subs = {p.stem for p in Path(_own.__file__).parent.glob("*.py")}
    for m in sorted(index.modules):
        if m == "fa4_patch" or m.startswith("fa4_patch."):
            return f"the tree has its own {m}"
    why = _namespace_writes(index, "fa4_patch", subs, handed_on=True)
    if why:
        return why
    changed = next((c for m in sorted(index.modules)
                    for c in import_system_changes_of(index.modules[m], index)), None)
    if changed is not None:
        return f"the tree changes where Python finds modules ({changed[2]})"
    return ""


def fa4_module_writes(index: "TreeIndex") -> str:
    """Where the tree stores into a FlashAttention module's namespace ("" when it does not):
    ``interface.flash_attn_func = fix(interface.flash_attn_func)``, a ``setattr``, a
    ``sys.modules`` entry naming it. A name bound from FA4 may then hold the raw function or
    the one put in its place, as the import order decides."""
    return _namespace_writes(index, "flash_attn", {"cute", "interface"}, handed_on=False)


def _only_in_comments(src: str, word: str) -> bool:
    """Every occurrence of ``word`` in ``src`` is inside a comment (read by the lexer of
    literals and comments: a word in a string is not in a comment)."""
    in_comment = _span_lookup([mt.span() for mt in _LEXEME_RE.finditer(src)
                               if mt.group().startswith("#")])
    return all(in_comment(hit.start()) for hit in re.finditer(re.escape(word), src))


def _names_bound_to(t: ast.Module, package: str, subs: set) -> set[str]:
    """The names a module binds to ``package`` or one of its modules (``import package.x``
    binds ``package``; ``from package import x`` binds ``x`` when it is a submodule, one of
    ``subs``)."""
    names: set[str] = set()
    for node in _stmt_imports(t):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == package or a.name.startswith(package + "."):
                    names.add(a.asname or package)
        elif not node.level and node.module and (
                node.module == package or node.module.startswith(package + ".")):
            for a in node.names:
                if a.name == "*" or a.name in subs:
                    names.add(a.asname or a.name)
    return names


def _stores_through(info: "ModuleInfo", t: ast.Module, package: str, subs: set) -> str:
    """``_namespace_writes`` without a parent map: the store targets of the module (and the
    ``setattr``/``delattr`` calls) rooted at a name bound to ``package`` or one of its
    modules, or at a ``sys.modules`` entry naming it."""
    names = _names_bound_to(t, package, subs)
    src = info.source
    # what the walk below can find needs one of these in the text: a name bound to the
    # package followed by an attribute, or ``sys.modules`` (the walk is skipped without)
    if "modules" not in src and not any(
            re.search(r"\b" + re.escape(nm) + r"\s*[.\[]", src) for nm in names):
        return ""

    def rooted(e) -> bool:
        while isinstance(e, (ast.Attribute, ast.Subscript)):
            if isinstance(e, ast.Subscript) and _dotted(e.value) == "sys.modules" and \
                    isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, str) and \
                    e.slice.value.startswith(package):
                return True
            e = e.value
        return isinstance(e, ast.Name) and e.id in names

    for n in ast.walk(t):
        targets: list = []
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, ast.Delete):
            targets = n.targets
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            targets = [n.target]
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            targets = [n.optional_vars]
        elif isinstance(n, ast.NamedExpr):
            targets = [n.target]
        elif isinstance(n, ast.Call) and (_dotted(n.func) or "").rsplit(".", 1)[-1] in (
                "setattr", "delattr", "__setattr__", "__delattr__") and n.args and \
                rooted(n.args[0]) or isinstance(n, ast.Call) and \
                (_dotted(n.func) or "").endswith("modules.__setitem__"):
            return (f"{info.path}:{n.lineno} sets an attribute of {package} "
                    f"({' '.join(ast.unparse(n).split())[:60]})")
        stack = list(targets)
        while stack:
            tg = stack.pop()
            if isinstance(tg, (ast.Tuple, ast.List)):
                stack.extend(tg.elts)
            elif isinstance(tg, ast.Starred):
                stack.append(tg.value)
            elif isinstance(tg, (ast.Attribute, ast.Subscript)) and rooted(tg):
                return (f"{info.path}:{tg.lineno} stores into {package} "
                        f"({' '.join(ast.unparse(tg).split())[:60]})")
        if isinstance(n, (ast.Attribute, ast.Name)) and \
                getattr(n, "attr", getattr(n, "id", "")) in ("__dict__",) and rooted(n):
            return f"{info.path}:{n.lineno} reaches into {package}'s namespace"
        if isinstance(n, ast.Attribute) and n.attr in ("__dict__", "__setattr__",
                                                       "__delattr__") and rooted(n.value):
            return f"{info.path}:{n.lineno} reaches into {package}'s namespace"
    return ""


def _namespace_writes(index: "TreeIndex", package: str, subs: set, handed_on: bool) -> str:
    """The first store into the namespace of ``package`` or one of its modules (``subs``: the
    submodule names a ``from package import x`` may bind), through the names the tree binds to
    them; with ``handed_on`` a module handed on as a value counts too."""
    for m, info in sorted(index.modules.items()):
        if info.error is not None or package not in info.source or \
                _only_in_comments(info.source, package):
            continue
        t = info.tree if handed_on else info.bare_tree
        if t is None:
            return f"{info.path} does not parse"
        why = _stores_through(info, t, package, subs)
        if why:
            return why
        if not handed_on:
            continue
        # beside the stores: any ``sys.modules`` use naming it, the module (or a name read
        # off it) handed to ``setattr``/``delattr``, the module handed on bare
        names = _names_bound_to(t, package, subs)
        for n in walk(t):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and \
                    n.value.startswith(package) and \
                    "modules" in ast.unparse(astutil.parent(n) or n):
                return f"{info.path}:{n.lineno} names {package} in sys.modules"
            if not (isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)):
                continue
            top = n
            p = astutil.parent(top)
            while isinstance(p, ast.Attribute) and p.value is top:
                top = p
                p = astutil.parent(top)
            if isinstance(p, ast.Call) and top in p.args and isinstance(p.func, ast.Name) \
                    and p.func.id in ("setattr", "delattr"):
                return (f"{info.path}:{n.lineno} sets an attribute of {package} "
                        f"({' '.join(ast.unparse(p).split())[:60]})")
            if top is n:
                return (f"{info.path}:{n.lineno} hands {package} on "
                        f"({' '.join(ast.unparse(p if p is not None else n).split())[:60]})")
    return ""


class TopBindings:
    """How the tree's modules bind their module-level names, read off their own code: a
    ``def``, a ``class``, an import (from where), or anything else (an assignment, a loop
    target, a ``global`` write in a function, a store of that attribute anywhere in the tree:
    a value the import graph does not follow). ``resolved`` answers whether a dotted callee read
    through the tree's imports is one of the tree's defs or classes (or a name from outside the
    tree) by these bindings alone."""

    def __init__(self, index: "TreeIndex", outside_trusted: bool = True):
        self.index = index
        # a module from outside the tree is what its name says (FA4 only as flash_attn.cute):
        # not where the tree changes the import system (``import_system_changes``)
        self.outside_trusted = outside_trusted
        self._kinds: dict[str, dict[str, set]] = {}
        self._stored: dict[str, bool] = {}

    def kinds(self, module: str, name: str) -> set:
        table = self._kinds.get(module)
        if table is None:
            info = self.index.modules[module]
            t = info.bare_tree
            table = self._kinds[module] = {} if t is None else _top_binding_kinds(
                t, lambda m, lvl, _i=info: self.index.resolve_from(_i, m, lvl))
            if t is None:
                table[None] = {"other"}     # unreadable: nothing it binds is known
        return table.get(name, table.get(None, set()))

    def _attr_stored(self, name: str) -> bool:
        """Does any file store ``<something>.name`` or name it in a ``setattr``?"""
        hit = self._stored.get(name)
        if hit is None:
            # a store of the attribute by name, or a ``setattr`` naming it (a ``setattr`` by a
            # computed name is not read here)
            pat = re.compile(r"\.[ \t]*" + re.escape(name) + r"[ \t]*(?:=(?!=)|[-+*/%&|^@]=|>>=|<<=)"
                             r"|setattr\([^,()]*(?:\([^()]*\)[^,()]*)*,[ \t]*[\"']"
                             + re.escape(name) + r"[\"']")
            hit = any(name in info.source and _stores(pat, info.source)
                      for info in self.index.modules.values() if info.error is None)
            self._stored[name] = hit
        return hit

    def resolved(self, module: str, chain: tuple, depth: int = 0) -> bool:
        if depth > 20:
            return False
        info = self.index.modules.get(module)
        if info is None:
            return self.outside_trusted     # outside the tree: trusted, unless the tree
        if not chain:                       # changes where Python finds modules
            return True             # the module itself
        name, rest = chain[0], chain[1:]
        kinds = self.kinds(module, name)
        if not kinds:
            sub = f"{module}.{name}"
            # not bound by the module's code: a submodule, else what ``globals()``, a
            # ``setattr`` or a PEP 562 ``__getattr__`` hands out
            return sub in self.index.modules and self.resolved(sub, rest, depth + 1)
        if self._attr_stored(name):
            return False
        return all(self.kind_resolved(k, rest, depth) for k in kinds)

    def kind_resolved(self, kind, rest: tuple, depth: int = 0) -> bool:
        """A name bound as ``kind`` (of ``_top_binding_kinds``), read by ``rest``."""
        if kind == "def":
            return not rest         # an attribute of a function can be set from anywhere
        if isinstance(kind, tuple) and kind[0] == "class":
            if not rest:
                return True
            # a def or class of its body, not stored by name anywhere else in the tree
            inner = _class_body_kinds(kind[1], kind[2]).get(rest[0])
            return bool(inner) and not self._attr_stored(rest[0]) and all(
                self.kind_resolved(k, rest[1:], depth + 1) for k in inner)
        if isinstance(kind, tuple) and kind[0] == "from":
            return self.resolved(kind[1], (kind[2],) + rest, depth + 1)
        if isinstance(kind, tuple) and kind[0] == "import":
            return self.resolved_module(kind[1], rest, depth + 1)
        return False

    def plain_def(self, module: str, name: str, depth: int = 0):
        """The ``def`` a module-level name of a tree module is, and only is (followed through
        ``from`` imports; no decorator, no other binding, no store of that attribute by name
        anywhere): (module, ast def), else None."""
        if depth > 20 or module not in self.index.modules:
            return None
        kinds = self.kinds(module, name)
        if len(kinds) != 1 or self._attr_stored(name):
            return None
        (kind,) = kinds
        if isinstance(kind, tuple) and kind[0] == "from":
            return self.plain_def(kind[1], kind[2], depth + 1)
        if kind != "def":
            return None
        info = self.index.modules[module]
        for st in info.bare_tree.body if info.bare_tree is not None else ():
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == name \
                    and not st.decorator_list:
                return module, st
        return None     # defined on a branch, or decorated: not this one def

    def resolved_module(self, module: str, rest: tuple, depth: int = 0) -> bool:
        """``module`` bound as a module object (``import a.b as ab``), read by ``rest``."""
        if module not in self.index.modules:
            # a package above tree modules (``import pkg`` then ``pkg.sub.f``), or outside
            for i in range(1, len(rest) + 1):
                sub = ".".join((module,) + rest[:i])
                if sub in self.index.modules:
                    return self.resolved(sub, rest[i:], depth + 1)
            return self.outside_trusted
        return self.resolved(module, rest, depth + 1)


# decorators from outside the tree known to leave the def or class itself in place, or a
# wrapper that calls it (``flow_base.RETURN_KEEPING``), and the class decorators that return
# the class they get
_KEEPING_DECORATORS = frozenset(RETURN_KEEPING) | {
    "dataclasses.dataclass", "functools.total_ordering", "functools.wraps",
    "typing.runtime_checkable", "enum.unique"}


def _keeps_decorated(d: ast.expr, aliases: dict) -> bool:
    while isinstance(d, ast.Call):
        d = d.func
    name = _dotted(d)
    if not name:
        return False
    head, _, rest = name.partition(".")
    if head in ("staticmethod", "classmethod") and not rest and head not in aliases:
        return True
    full = aliases.get(head)
    return full is not None and (full + ("." + rest if rest else "")) in _KEEPING_DECORATORS


# ``name: Cls.Config = field(...)``: an annotated assignment, whose annotation is no store
_ANNOTATED_RE = re.compile(r"[ \t]*(?!(?:else|try|finally)\b)[A-Za-z_]\w*[ \t]*:[^=]*$")


def _stores(pat: re.Pattern, src: str) -> bool:
    for mt in pat.finditer(src):
        bol = src.rfind("\n", 0, mt.start()) + 1
        if mt.group().startswith(".") and _ANNOTATED_RE.fullmatch(src, bol, mt.start()):
            continue
        return True
    return False


def _class_body_kinds(cls: ast.ClassDef, aliases: tuple) -> dict[str, set]:
    """name -> how a class body binds it: "def", ("class", node, aliases) or "other"
    (``aliases``: the module's import aliases, as sorted items)."""
    out: dict[str, set] = {}
    names = dict(aliases)
    for st in cls.body:
        kept = all(_keeps_decorated(d, names) for d in getattr(st, "decorator_list", ()))
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(st.name, set()).add("def" if kept else "other")
        elif isinstance(st, ast.ClassDef):
            out.setdefault(st.name, set()).add(("class", st, aliases) if kept else "other")
        else:
            for n in ast.walk(st):
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    out.setdefault(n.id, set()).add("other")
    return out


def _top_binding_kinds(tree: ast.Module, absolute) -> dict[str, set]:
    """name -> how the module's own top-level code binds it (``TopBindings``)."""
    out: dict[str, set] = {}
    aliases = _import_aliases(tree)
    frozen = tuple(sorted(aliases.items()))
    stack = [tree.body]
    while stack:
        for st in stack.pop():
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(st.name, set()).add("def")
            elif isinstance(st, ast.ClassDef):
                out.setdefault(st.name, set()).add(("class", st, frozen))
            elif isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        out.setdefault(a.asname, set()).add(("import", a.name))
                    else:
                        top = a.name.split(".")[0]
                        out.setdefault(top, set()).add(("import", top))
            elif isinstance(st, ast.ImportFrom):
                base = absolute(st.module, st.level)
                for a in st.names:
                    if a.name == "*":
                        out.setdefault(None, set()).add("other")
                        continue
                    out.setdefault(a.asname or a.name, set()).add(("from", base, a.name))
            else:
                todo = [st]
                while todo:     # this scope's stores: not those of a nested def or class
                    n = todo.pop()
                    if isinstance(n, (ast.Assign, ast.AnnAssign)) and \
                            isinstance(n.value, ast.Constant) and all(
                                isinstance(t, ast.Name) for t in (
                                    n.targets if isinstance(n, ast.Assign) else [n.target])):
                        continue    # ``fa = None`` (an import's fallback): no function
                    if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                        out.setdefault(n.id, set()).add("other")
                    elif isinstance(n, ast.ExceptHandler) and n.name:
                        out.setdefault(n.name, set()).add("other")
                    elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                        out.setdefault(n.name, set()).add("other")
                    elif isinstance(n, ast.MatchMapping) and n.rest:
                        out.setdefault(n.rest, set()).add("other")
                    todo.extend(c for c in ast.iter_child_nodes(n) if not isinstance(
                        c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))
                stack.extend(sub_bodies(st))
                continue
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    not all(_keeps_decorated(d, aliases) for d in st.decorator_list):
                out[st.name].add("other")       # a decorator may put anything in its place
    for n in ast.walk(tree):
        if isinstance(n, ast.Global):
            for g in n.names:
                out.setdefault(g, set()).add("other")
    return out


def _reads_through_lazy(alias: ast.alias, lazy) -> bool:
    """``import pkg.sub`` binds ``pkg``, ``import pkg.sub as s`` binds ``pkg.sub``: is an
    attribute read off the bound module (or a package on the dotted way down from it) served by
    a PEP 562 ``__getattr__`` of the tree?"""
    if not lazy:
        return False
    parts = alias.name.split(".")
    bound = parts if alias.asname else parts[:1]
    return any(".".join(parts[:i]) in lazy for i in range(len(bound), len(parts) + 1))


def _top_level_nodes(tree: ast.Module) -> list:
    """The nodes of a module's own top-level code: not inside a def, a lambda or a class."""
    out = []
    stack = list(reversed(tree.body))
    while stack:
        n = stack.pop()
        out.append(n)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))
    return out


_IMPORT_WORD = re.compile(r"(?<!\w)(import|as|from)\s+$")
_IMPORT_NEXT = re.compile(r"(?:\s|\\\r?\n)+import(?!\w)")
_CHAIN_GAP = re.compile(r"(?:\s|\\\r?\n|#[^\n]*)*")
_IDENT = re.compile(r"[^\W\d]\w*")


def text_chains(source: str, alias: str) -> set[tuple] | None:
    """The attribute chains read off ``alias`` as the text spells them, for every place the
    name occurs outside an import statement's names: a superset of ``alias_chains`` (strings
    and comments add chains, never remove one). None when the text cannot tell: a chain
    followed by ``).`` may continue past a parenthesis (``(te.x).y``), which only the syntax
    tree can follow. Identifiers are compared after NFKC normalisation, as Python does."""
    import unicodedata

    if not source.isascii():
        source = unicodedata.normalize("NFKC", source)
    out: set[tuple] = set()
    for m in re.finditer(r"(?<![\w.])" + re.escape(alias) + r"(?!\w)", source):
        prev = _IMPORT_WORD.search(source[max(0, m.start() - 16):m.start()])
        if prev is not None and prev.group(1) != "from":
            continue            # ``import alias``, ``... as alias``: a name bound, not a use
        pos = m.end()
        chain = []
        while True:
            p = _CHAIN_GAP.match(source, pos).end()
            if source.startswith(".", p):
                q = _CHAIN_GAP.match(source, p + 1).end()
                ident = _IDENT.match(source, q)
                if ident is None:
                    break
                chain.append(ident.group())
                pos = ident.end()
                continue
            if source.startswith(")", p):
                after = _CHAIN_GAP.match(source, p + 1).end()
                if source.startswith(".", after):
                    return None
            break
        if prev is not None and _IMPORT_NEXT.match(source, pos):
            continue            # ``from alias(.x) import``: not a use (``yield from alias`` is)
        out.add(tuple(chain) if chain else ("<bare>",))
    return out


_CHAINS: dict = {}


def alias_chains(tree: ast.Module, alias: str) -> set[tuple]:
    """Every attribute chain read off the name ``alias`` (``te.pytorch.x`` -> ("pytorch",
    "x")); ("<bare>",) when the name is used as a value by itself. One walk per tree."""
    key = id(tree)
    table = _CHAINS.get(key)
    if table is None or table[0] is not tree:
        chains: dict[str, set] = {}
        nodes = walk(tree)
        attr_bases = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        for n in nodes:
            if isinstance(n, ast.Attribute) and id(n) not in attr_bases:
                attrs = []
                cur = n
                while isinstance(cur, ast.Attribute):
                    attrs.append(cur.attr)
                    cur = cur.value
                if isinstance(cur, ast.Name):
                    chains.setdefault(cur.id, set()).add(tuple(reversed(attrs)))
        # maximal chains only; a bare use is a Name load that no Attribute takes as its value
        for n in nodes:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in attr_bases:
                chains.setdefault(n.id, set()).add(("<bare>",))
        table = (tree, chains)
        _CHAINS.clear()
        _CHAINS[key] = table
    return set(table[1].get(alias, ()))


# ----------------------------------------------------------------------------- cache

def _cache_dir() -> Path | None:
    try:
        from analyzer.sources import cache_dir
        return cache_dir() / "reach"
    except Exception:
        return None


def summaries(index: TreeIndex, use_cache: bool = True) -> dict[str, FileSummary]:
    """Each module's ``FileSummary``, cached by the file's path and bytes. The cache is one
    pack per set of paths (a tree: one read and one write per run, not one file per module);
    an entry is found by its own key, so an edited file misses alone."""
    out = {}
    d = _cache_dir() if use_cache else None
    pack_file = None
    pack: dict = {}
    if d is not None:
        names = hashlib.sha256(f"{SUMMARY_VERSION}\0".encode()
                               + "\0".join(sorted(i.path for i in index.modules.values())).encode())
        pack_file = d / "packs" / names.hexdigest()[:32]
        try:
            got = pickle.loads(pack_file.read_bytes())
            pack = got if isinstance(got, dict) else {}
        except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError, TypeError,
                ImportError, IndexError):
            pack = {}
    fresh: dict = {}
    missed = False
    # the tool's own code is part of the key: an edited summariser never reads old summaries
    from analyzer.sites.cache import tool_digest
    digest = tool_digest()
    for name, info in index.modules.items():
        if info.error is not None:
            out[name] = FileSummary(name, info.is_pkg, info.error)
            continue
        key = hashlib.sha256(f"{SUMMARY_VERSION}\0{digest}\0{info.path}\0".encode()
                             + info.raw).hexdigest()[:32]
        hit = pack.get(key)
        if isinstance(hit, FileSummary):
            out[name] = fresh[key] = hit
            continue
        s = summarize(info.path, info.source, info)
        out[name] = s
        if s.error is None:
            fresh[key] = s
            missed = True
    if pack_file is not None and (missed or len(fresh) != len(pack)):
        write_atomic(pack_file, pickle.dumps(fresh, protocol=pickle.HIGHEST_PROTOCOL))
    return out


# ----------------------------------------------------------------------------- the graph

@dataclass
class Reach:
    origins: tuple[str, ...]                 # FA4 origin module names / prefixes
    vendored: tuple[str, ...]                # in-tree modules recognised as vendored FA4
    declared: tuple[str, ...]
    reaching: set[str]                       # in-tree modules that can reach FA4
    path_to_fa4: dict[str, str]              # module -> how it reaches (one step)
    dynamic_unknown: list[tuple[str, DynamicImport]]
    dynamic_fa4: list[tuple[str, DynamicImport]]   # constant-named dynamic imports of FA4
    torch: list[tuple[str, TorchFA4]]
    parse_errors: list[tuple[str, str]]
    exports: dict = field(default_factory=dict)    # module -> names that may hold FA4
    holders: set = field(default_factory=set)      # modules binding FA4's module object

    def is_origin(self, module: str) -> bool:
        return any(module == o or module.startswith(o + ".") for o in self.origins)

    def may_hold(self, dotted: str) -> bool:
        """Can the module ``dotted``, or an attribute chain read off it, hold FA4? An origin,
        anything inside or above one; an in-tree module the graph says reaches FA4, or a
        package above one. (A module is not "inside" a reaching package's ``__init__``: its
        own reach decides. The escape check also asks the solver what a parsed module binds.)"""
        if not dotted:
            return False
        if fa_version_of_module(dotted) == "fa4":
            return True
        if any(dotted == o or dotted.startswith(o + ".") or o.startswith(dotted + ".")
               for o in self.origins):
            return True
        return any(dotted == m or m.startswith(dotted + ".") for m in self.reaching) \
            or dotted in self.holders


def _ambiguous_imports(index: TreeIndex, sums: dict, reaching: set, is_origin) -> list:
    """Imports that several modules of the tree answer to, one of which reaches FA4: ``import
    ops`` with ``ops.py`` and ``src/ops.py`` (or ``src/model/ops.py``), a package beside its
    stub or build copy (``tests/stubs/pkg``, ``build/lib/pkg``), a namespace package split
    over two folders. Which one Python loads is the first folder on ``sys.path`` that holds
    it (the script's own folder, a ``src`` layout, the working directory): the pass, which
    follows one, cannot tell what the imported name holds. One finding per importing
    module and name."""
    by_suffix: dict[str, list] = {}
    for name in index.modules:
        parts = name.split(".")
        for i in range(len(parts)):
            by_suffix.setdefault(".".join(parts[i:]), []).append(name)

    def reaches(c: str) -> bool:
        return c in reaching or is_origin(c) or any(r.startswith(c + ".") for r in reaching)

    def on_path(c: str, name: str, above: set) -> bool:
        # a folder Python may search: the tree's root, a folder above the importer (its
        # script's folder, a ``src`` layout), or a folder that is no package and holds the
        # named package (``src/pkg``, ``build/lib/pkg``, ``tests/stubs/pkg``, a namespace
        # portion ``plugins/ns/fa.py``); not the inside of another package, and not a lone
        # module of another script's folder (``docs/example/utils.py`` for ``import utils``)
        folder = c[:-len(name)].rstrip(".")
        if not folder or folder in above:
            return True
        info = index.modules.get(folder)
        if info is not None and info.is_pkg:
            return False
        top = index.modules.get(f"{folder}.{name.split('.')[0]}")
        return "." in name or (top is not None and top.is_pkg)

    out = []
    for m, sm in sorted(sums.items()):
        done = set()
        parts = m.split(".")
        above = {".".join(parts[:i]) for i in range(1, len(parts))}
        for line, col, ref in sm.uses:
            if ref[0] not in ("imp", "mod", "star"):
                continue
            names = [ref[1]] + ([f"{ref[1]}.{ref[2]}"] if ref[0] == "imp" else [])
            for name in names:
                cands = sorted(c for c in set(by_suffix.get(name, ())) - {m}
                               if on_path(c, name, above))
                # it matters where a candidate reaches FA4, or where the importer does (the
                # candidates may hand it different windows)
                if name in done or len(cands) < 2 or \
                        not (m in reaching or any(reaches(c) for c in cands)):
                    continue
                done.add(name)
                paths = [index.modules[c].path for c in cands]
                hit = next((index.modules[c].path for c in cands if reaches(c)),
                           index.modules[m].path)
                shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more"
                                                 if len(paths) > 4 else "")
                out.append((index.modules[m].path, DynamicImport(
                    line, col, f"import {name}", None, True, "", False,
                    message=(f"import of {name}: {len(cands)} modules of the tree answer to "
                             f"that name ({shown}), and Python loads the first its search "
                             f"path holds; {hit} reaches FA4, so what the name holds here "
                             "cannot be judged"))))
    # (a relative import resolves to its package's folder; in a namespace package, split
    # over folders, that is every portion: the same name lookup above)
    return out


def import_edges(index: TreeIndex, sums: dict) -> dict:
    """module -> {module of the tree it may import (its packages above included): the first
    line that imports it}, over every import of each file (in functions too): what an import
    cycle runs (``flow_env.cycle_line``)."""
    out: dict = {}
    for m, sm in sums.items():
        got = out.setdefault(m, {})
        for line, _col, ref in sm.uses:
            names = [ref[1]] + ([f"{ref[1]}.{ref[2]}"] if ref[0] == "imp" else [])
            for name in names:
                tm = name if name in index.modules else index.tree_module(name)
                if tm is None:
                    continue
                parts = tm.split(".")
                for i in range(1, len(parts) + 1):
                    t = ".".join(parts[:i])
                    if t in index.modules and t != m:
                        old = got.get(t, line)
                        got[t] = line if old is None or line is None else min(old, line)
    return out


def compute(index: TreeIndex, sums: dict[str, FileSummary],
            declared: Iterable[str] = ()) -> Reach:
    declared = tuple(sorted({d.strip() for d in declared if d and d.strip()}))
    vendored = tuple(sorted(m for m, s in sums.items() if s.vendored_fa4))
    origins = tuple(sorted(set(N.FA4_MODULES) | set(vendored) | set(declared)))

    # a vendored (or declared) copy is also imported by a shorter name when a folder above it
    # is put on ``sys.path`` (``sys.path.insert(0, "third_party/fa")``, then ``from interface
    # import flash_attn_func``): ``bindings.by_short_name``, the flow's rule too
    copies = tuple(sorted(set(vendored) | set(declared)))

    def is_origin(m: str) -> bool:
        if any(m == o or m.startswith(o + ".") for o in origins):
            return True
        return bool(copies) and m not in index.modules and \
            by_short_name(m, copies) is not None

    # which module-level names may hold an FA4 entry point (or an FA4 module object): a
    # fixpoint over the modules that reach FA4 (only they can export it), re-exports followed
    # transitively; a module object counts through the attribute chains read off it
    exports: dict[str, set[str]] = {m: set() for m in sums}
    children: dict[str, list[str]] = {}
    for m in sums:
        parts = m.split(".")
        for i in range(1, len(parts)):
            children.setdefault(".".join(parts[:i]), []).append(m)
    bind_cache: dict[str, dict] = {}
    chain_cache: dict[tuple, set] = {}
    # modules with a PEP 562 ``__getattr__``: a name they do not bind is what it returns
    lazy = {m for m, info in index.modules.items() if "__getattr__" in info.source
            and _LAZY_RE.search(info.source)}

    importer = [""]     # the module whose import is being resolved (set by ref_fa4)
    # names a module binds to a module object (``import flash_attn.cute as fc``): another
    # module reads through them (``helper.fc``, ``from helper import fc``). From the text
    # scan (every import the text can make): a name listed here that the module does not bind
    # only makes reach larger
    held: dict[str, dict[str, set]] = {}
    for m, sm in sums.items():
        for _line, _col, ref in sm.uses:
            if ref[0] == "mod" and ref[2]:
                base = ref[1].split(".")[0] if ref[2] == ref[1].split(".")[0] else ref[1]
                held.setdefault(m, {}).setdefault(ref[2], set()).add(base)

    def tree(mod: str) -> str | None:
        if mod in index.modules:
            return mod
        return under_importer_root(importer[0], mod, index.modules) or index.tree_module(mod)

    def module_has_fa4(mod: str) -> bool:
        if is_origin(mod):
            return True
        tm = tree(mod)
        if tm is None:
            return False
        return bool(exports.get(tm)) or any(exports.get(c) for c in children.get(tm, ())) \
            or lazy_fa4(tm) or holds_fa4_module(tm)

    def holds_fa4_module(tm: str, seen: frozenset = frozenset()) -> bool:
        """Does the tree module bind FA4's module object (``import flash_attn.cute as fc``),
        or a module of the tree that does, to one of its names? (A package held this way is
        not followed into: a reader's own chains read through it, ``chain_fa4``.)"""
        seen = seen | {tm}
        for mods in held.get(tm, {}).values():
            for h in mods:
                if is_origin(h):
                    return True
                th = tree(h)
                if th is not None and th not in seen and holds_fa4_module(th, seen):
                    return True
        return False

    def lazy_fa4(mod: str) -> bool:
        tm = tree(mod)
        # a lazy package (``lazy_loader.attach``, ``attach_stub``) loads its names from its
        # submodules: one of them reaching FA4 may be what a name of it is
        return tm is not None and tm in lazy and (
            tm in reaching or bool(exports.get(tm))
            or any(c in reaching for c in children.get(tm, ())))

    def origin_attr(mod: str, attr: str) -> bool:
        # an entry point, a submodule, or any other name of FA4 that may carry a window
        # (``FlashAttnFunc``, whose ``apply`` hands it to ``_flash_attn_fwd``): only what
        # ``names.window_free`` lists holds nothing
        return attr in N.WINDOW_ENTRIES or attr in ("interface", "cute") or \
            (tree(f"{mod}.{attr}") is not None and is_origin(f"{mod}.{attr}")) or \
            not N.window_free(mod, attr)

    def chain_fa4(mod: str, chain: tuple) -> bool:
        cur = mod
        for i, attr in enumerate(chain):
            if lazy_fa4(cur):
                return True         # any name of it may be what its __getattr__ returns
            if attr == "<bare>" or attr in ("__dict__", "__getattribute__", "__getattr__"):
                return module_has_fa4(cur)     # the module itself, or its whole namespace
            if is_origin(cur):
                return origin_attr(cur, attr)
            tm = tree(cur)
            if tm is None:
                return is_origin(f"{cur}.{attr}")
            if attr in exports.get(tm, ()):
                return True
            if attr in held.get(tm, ()) and any(
                    chain_fa4(h, chain[i + 1:]) for h in held[tm][attr]):
                return True         # a module object bound to that name, read through
            sub = f"{tm}.{attr}"
            if tree(sub) is None and not is_origin(sub):
                return False
            cur = sub
        return module_has_fa4(cur)

    def ref_fa4(ref, m: str) -> str | None:
        importer[0] = m
        kind = ref[0]
        if kind == "imp":
            mod, attr = ref[1], ref[2]
            if is_origin(mod):
                return f"{mod}.{attr}" if origin_attr(mod, attr) else None
            if is_origin(f"{mod}.{attr}"):
                return f"{mod}.{attr}"
            tm = tree(mod)
            if tm is not None and attr in exports.get(tm, ()):
                return f"{tm}.{attr}"
            if lazy_fa4(mod):
                return f"{tm}.{attr}"
            if tm is not None and any(module_has_fa4(h) for h in held.get(tm, {}).get(attr, ())):
                return f"{tm}.{attr}"       # ``from helper import fc``: a module held there
            sub = tree(f"{mod}.{attr}")
            if sub is not None and module_has_fa4(sub):
                return sub
            return None
        if kind == "mod":
            mod, alias = ref[1], ref[2]
            if not module_has_fa4(mod):
                return None
            if not alias:
                return mod
            info = index.modules.get(m)
            base = mod.split(".")[0] if alias == mod.split(".")[0] else mod
            key = (m, alias)
            if key not in chain_cache and info is not None and info._tree is None:
                # no syntax tree yet: the text's chains (a superset) may already show that no
                # use of the name reaches FA4, and the file is then never parsed here
                quick = text_chains(info.source, alias)
                if quick is not None and not any(chain_fa4(base, c) for c in quick):
                    # the text's chains are kept, not the answer: the fixpoint may still add
                    # the name a chain reads to the module's exports (``import pkg``, then
                    # ``pkg.attn_impl`` re-exported by ``pkg/__init__``)
                    chain_cache[key] = quick
            if key not in chain_cache:
                t = info.tree if info is not None else None
                if t is None:
                    return mod
                chain_cache[key] = alias_chains(t, alias)
            for chain in sorted(chain_cache[key]):
                if chain_fa4(base, chain):
                    return f"{base}." + ".".join(c for c in chain if c != "<bare>") \
                        if chain != ("<bare>",) else base
            return None
        if kind == "star":
            tm = tree(ref[1])
            return ref[1] if (is_origin(ref[1]) or exports.get(tm or "", set())
                              or star_submodules(tm)) else None
        if kind == "name":
            return f"{m}.{ref[1]}" if ref[1] in exports[m] else None
        return None

    def star_submodules(tm: str | None) -> set:
        """The submodules of package ``tm`` that reach FA4: ``from tm import *`` binds them
        where ``__all__`` names them or where they were imported before (which the pass does
        not order), so each may be bound by the star."""
        if not tm or tm not in index.modules or not index.modules[tm].is_pkg:
            return set()
        depth = tm.count(".") + 1
        return {c.rsplit(".", 1)[1] for c in children.get(tm, ())
                if c.count(".") == depth and (c in reaching or module_has_fa4(c))}

    def bindings(m: str) -> dict:
        if m not in bind_cache:
            info = index.modules[m]
            t = info.tree
            bind_cache[m] = _bindings(t, m, info.is_pkg) if t is not None else {}
        return bind_cache[m]

    reaching: set[str] = set()
    how: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for m, sm in sums.items():
            if m in vendored or sm.error:
                continue
            if m not in reaching:
                for line, col, ref in sm.uses:
                    r = ref_fa4(ref, m)
                    if r is not None:
                        reaching.add(m)
                        how[m] = f"{index.modules[m].path}:{line} imports {r}"
                        changed = True
                        break
            if m not in reaching:
                continue
            for name, refs in bindings(m).items():
                if name == "*":
                    for ref in refs:
                        tm = tree(ref[1])
                        src = N.WINDOW_ENTRIES if is_origin(ref[1]) else \
                            set(exports.get(tm or "", ())) | star_submodules(tm)
                        for n in list(src):
                            if n not in exports[m]:
                                exports[m].add(n)
                                changed = True
                    continue
                if name in exports[m]:
                    continue
                if any(ref_fa4(ref, m) is not None for ref in refs):
                    exports[m].add(name)
                    changed = True
    dyn_unknown, dyn_fa4, torch, errors, escaping = [], [], [], [], []
    for m, s in sorted(sums.items()):
        path = index.modules[m].path
        if s.error:
            errors.append((path, s.error))
        for d in s.dynamic:
            if d.loader == "path" and not (vendored or declared):
                continue        # a file outside the tree: trusted like an outside import
            if d.constant is None and d.carries_window and (d.direct or (
                    d.why == _BUILT_CODE and reaching)):
                # (code built at run time, in a tree that reaches FA4: it may replace FA4's
                # names or what calls it -- ``m.flash_attn_func = lambda ...`` -- unknown
                # where it runs)
                dyn_unknown.append((path, d))
            elif d.constant is None and d.carries_window:
                escaping.append((path, d))
            elif d.constant is not None and (is_origin(d.constant) or any(
                    o.startswith(d.constant + ".") for o in origins)):
                # FA4 itself, or a package above it whose result is read further
                # (``import_module("flash_attn")`` handed to ``attrgetter("cute....")``)
                dyn_fa4.append((path, d))
            elif d.constant is not None and d.carries_window and \
                    tree(d.constant) in reaching:
                # a module of the tree that reaches FA4, loaded by a constant name (relative
                # ``import_module(".fa", package="pkg")`` included): the flow does not follow
                # what the loader returns
                dyn_fa4.append((path, d))
        for t in s.torch:
            torch.append((path, t))
    # a string that names FA4 (``"flash_attn.cute.interface.flash_attn_func"`` handed to a
    # loader this pass does not know: ``pickle.loads``, ``hydra.utils.get_method``, a private
    # ``importlib`` helper) loads FA4 by a name no import shows: the same as a computed import
    # that escapes
    named = sorted({o for o in origins if "." in o or o in declared or o in vendored})
    for m, info in sorted(index.modules.items()):
        if info.error is None:
            for line, col, text in fa4_named_in_strings(info, named, sums[m].dynamic):
                escaping.append((info.path, DynamicImport(
                    line, col, text, None, True,
                    "a string names FA4 where no import of it is read: whatever reads it "
                    "may load FA4", False)))
    # a module ``__getattr__`` made by code outside the tree (``__getattr__, __dir__, __all__ =
    # lazy.attach(...)``, ``attach_stub``): the names it hands out are loaded by a mechanism
    # the pass does not read, from the package's submodules (one of which reaches FA4) or
    # anywhere else -- a computed import that escapes
    for m in sorted(lazy):
        info = index.modules[m]
        if not (m in reaching or any(c in reaching for c in children.get(m, ()))):
            continue
        t = info.bare_tree
        for st in (_module_level_statements(t) if t is not None else ()):
            if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                    isinstance(x, ast.Name) and x.id == "__getattr__"
                    for tg in (st.targets if isinstance(st, ast.Assign) else [st.target])
                    for x in ast.walk(tg)):
                escaping.append((info.path, DynamicImport(
                    st.lineno, st.col_offset + 1, "__getattr__ = ...", None, True,
                    "a module __getattr__ made by a call: the names it hands out are loaded "
                    "where the pass does not look, and may be FA4", False)))
                break
    # a change to where Python finds modules (``sys.path``, a package's ``__path__``, an
    # import hook): a module from outside the tree, whatever its name, may be FA4's code
    changes = [(index.modules[m].path, c) for m in sorted(index.modules)
               for c in import_system_changes_of(index.modules[m], index)]
    for path, (line, col, text) in changes:
        escaping.append((path, DynamicImport(
            line, col, text, None, True,
            "changes where Python finds modules: an import from outside the tree may load "
            "FA4 under another name", False)))
    # a module loaded by a computed name that escapes matters only where some call hands a
    # window to a callee nothing resolves: one finding at each such call
    if escaping:
        blind = []
        binds = TopBindings(index, outside_trusted=not changes)
        # a module loaded by a name no text spells (decoded, built, read from a data file)
        # may be FA4 called with a window by position or through keys no text spells
        wide = any(d.constant is None and not d.why.startswith("changes where Python")
                   for _p, d in escaping)
        opaque = []         # calls that may hand a window by position or by unread keys
        for m, info in sorted(index.modules.items()):
            if info.error is None and info.tree is not None and (
                    wide or any(k in info.source for k in N.WINDOW_KEYS)):
                found = _blind_calls(info.tree, info.source, lazy, m, info.is_pkg, binds, wide)
                blind.extend((info.path, b[:3]) for b in found if b[3])
                seen = {b[:2] for b in found if b[3]}
                opaque.extend((info.path, b[:3]) for b in found
                              if not b[3] and b[:2] not in seen)
        where = ", ".join(f"{p}:{d.line}" for p, d in escaping[:3]) + (
            f" and {len(escaping) - 3} more" if len(escaping) > 3 else "")
        for bp, (bl, bcol, bc) in blind:
            dyn_unknown.append((bp, DynamicImport(
                bl, bcol, f"{bc}(...)", None, True,
                f"hands a window to {bc}(...), a callee nothing resolves, while the tree loads "
                f"modules by computed names ({where}): it may be FA4", True)))
        if opaque:
            # one finding for them all, at the first computed import: each is a call that
            # may hand FA4 a window no text spells, not a window seen
            (ep, ed), (op, (ol, _oc, oc)) = escaping[0], opaque[0]
            more = ", ".join(f"{p}:{b[0]}" for p, b in opaque[1:4]) + (
                f" and {len(opaque) - 4} more" if len(opaque) > 4 else "")
            dyn_unknown.append((ep, DynamicImport(
                ed.line, ed.col, ed.spelled, None, True,
                f"loads a module by a name the pass cannot read, and {len(opaque)} call(s) "
                f"to callees nothing resolves pass arguments past FA4's first window "
                f"position or splat keys no text spells ({op}:{ol} {oc}(...)"
                + (f"; {more}" if more else "") + "): FA4 may get a window there", True)))
    dyn_unknown.extend(_ambiguous_imports(index, sums, reaching, is_origin))
    r = Reach(origins, vendored, declared, reaching, how, dyn_unknown, dyn_fa4, torch, errors)
    r.exports = {m: sorted(v) for m, v in exports.items() if v}
    # modules that bind FA4's module object (``import flash_attn.cute as fc``) without using
    # it: not reaching by themselves (nothing of theirs calls it), but another module may read
    # it through them (``getattr(helper.fc, ...)``), and the escape check must look there
    r.holders = {m for m in index.modules if m not in reaching and holds_fa4_module(m)}
    return r


# FA4's CuTe package vendored by another distribution and imported from outside the tree
# (vLLM's ``vllm.vllm_flash_attn.cute``, a ``<pkg>.flash_attn.cute``, SGLang's
# ``sglang.jit_kernel.flash_attention.cute``): a ``cute`` package under a package whose name
# holds ``flash_attn`` or ``flash_attention``. Its code is not in the tree to be recognised
# by content; FA2 and FA3 have no ``cute`` package
_VENDORED_ELSEWHERE_RE = re.compile(
    r"^((?:[\w]+\.)*[\w]*flash_att(?:n|ention)[\w]*\.cute)(?:\.|$)")
# a module outside the tree named as FA4's interface itself (``sgl_kernel._fa4_interface``, a
# ``<pkg>.fa4``, ``flash_attn4``): its own names are FA4's entry points
_FA4_NAMED_RE = re.compile(
    r"^((?:[\w]+\.)*_?(?:fa4|flash_attn_?4|flash_attention_?4)(?:_interface)?)$", re.I)


def vendored_elsewhere(index: "TreeIndex", sums: dict) -> list[str]:
    """FA4 copies vendored by another distribution that the tree imports (module names, each
    package with its ``interface``): counted as FA4 origins like declared ones."""
    out: set[str] = set()
    for s in sums.values():
        for _line, _col, ref in s.uses:
            names = [ref[1]] + ([f"{ref[1]}.{ref[2]}"] if ref[0] == "imp" and ref[2] else [])
            for name in names:
                mt = _VENDORED_ELSEWHERE_RE.match(name or "")
                if mt is not None and not mt.group(1).startswith("flash_attn.") and \
                        index.tree_module(mt.group(1)) is None:
                    out.update((mt.group(1), mt.group(1) + ".interface"))
                elif _FA4_NAMED_RE.match(name or "") and not name.startswith("flash_attn.") \
                        and not _in_tree(index, name):
                    out.add(name)
    return sorted(out)


def _in_tree(index: "TreeIndex", name: str) -> bool:
    """Is ``name``, or a package above it, a module of the tree?"""
    parts = name.split(".")
    return any(index.tree_module(".".join(parts[:i])) for i in range(1, len(parts) + 1))


def declared_modules(root: Path, extra: Iterable[str] = ()) -> list[str]:
    """``--fa4-module`` values plus ``fa4-modules`` from ``[tool.fa4-audit]`` in the audited
    tree's ``pyproject.toml`` (its root, or the folder above a package dir)."""
    out = [e for e in extra if e]
    for cand in (Path(root) / "pyproject.toml",):
        if not cand.is_file():
            continue
        try:
            import tomllib
        except ImportError:  # Python 3.10
            try:
                import tomli as tomllib  # type: ignore[no-redef]
            except ImportError:
                continue
        try:
            data = tomllib.loads(cand.read_text())
        except (OSError, ValueError) as exc:
            from analyzer.errors import AuditError
            raise AuditError(f"{cand}: cannot read [tool.fa4-audit]: {exc}") from None
        conf = data.get("tool", {}).get("fa4-audit", {})
        mods = conf.get("fa4-modules", conf.get("fa4_modules", []))
        if isinstance(mods, str):
            mods = [mods]
        out.extend(str(m) for m in mods)
    return out
