"""Codemod: wrap every FlashAttention 4 binding of a TransformerEngine tree at its binding site.

``python -m fa4_patch TE_DIR --check | --diff | --write [--import]``

A *binding* is a name bound by ``from M import E [as N]`` where ``M`` resolves (relative
imports included) to ``flash_attn.cute.interface`` or ``flash_attn.cute`` and ``E`` is one of
FA4's four window-taking entry points (``flash_attn_func``, ``flash_attn_varlen_func``,
``_flash_attn_fwd``, ``_flash_attn_bwd``). Bindings are found by that origin, never by the local
name: TE's bare ``_flash_attn_fwd`` is FA2's and ``flash_attn_func_v3`` is FA3's.

Right after each binding the codemod adds ``N = _fa4_audit_wrap(N)`` in the same block, so every
name that later derives from it -- TE 2.20.x's ``flash_attn_func_v4 =
no_torch_dynamo()(_flash_attn_func_v4)`` and the self-rebinding ``_flash_attn_fwd_v4 =
no_torch_dynamo()(_flash_attn_fwd_v4)`` -- holds the normalising wrapper, and no raw FA4 function
stays reachable under any name after the import statement. TE 2.15-2.19's direct form (``from
flash_attn.cute.interface import flash_attn_func as flash_attn_func_v4``) gets the same line.

By default the module also gets a small self-contained normaliser, ``_fa4_audit_normalize_pair``
and ``_fa4_audit_wrap`` (a framework's pull request must not depend on this tool), inserted just
before the first top-level statement that uses it. ``--import`` inserts ``from fa4_patch import
wrap as _fa4_audit_wrap`` instead. These two names are a contract with ``fa4-audit sites``, which
trusts the wrapper only after running ``_fa4_audit_normalize_pair`` in its sandbox.

Idempotent: a binding already followed (in its block) by ``N = W(...N...)`` with ``W`` a
recognised wrapper (``_fa4_audit_wrap``, ``fa4_patch.wrap`` imported under any name) is left
alone; helpers already present are left alone unless their code differs from the canonical one
(a sabotaged normaliser is put back). Formatting outside the inserted lines is untouched
(libcst round trip). Every changed file must ``compile()`` before anything is written.

What it refuses (exit 2, one line): entry points reached as module attributes (``import
flash_attn.cute.interface as fai; fai.flash_attn_func(...)``: there is no binding to wrap; import
the function by name or use ``fa4_patch.install()``), ``from flash_attn.cute... import *``,
``importlib.import_module("flash_attn.cute...")``, a file that does not parse, and a helper
defined after its first use.
"""

from __future__ import annotations

import ast
import difflib
import os
import shutil
import stat
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from fa4_patch.install import ENTRY_POINTS, FA4_MODULES

WRAP_NAME = "_fa4_audit_wrap"
PAIR_NAME = "_fa4_audit_normalize_pair"
PACKAGE_DIR = "transformer_engine"
FA4_ENTRY_MODULES = frozenset(FA4_MODULES)
# where fa4_patch.wrap may be imported from
FA4_PATCH_WRAP = frozenset({"fa4_patch.wrap", "fa4_patch.wrapper.wrap"})


class CodemodError(Exception):
    """One-line could-not-patch message (the CLI prints it and exits 2)."""


# ----------------------------------------------------------------------------- helper text

HELPER_SOURCE = '''\
def _fa4_audit_normalize_pair(left, right):
    """Map a negative window bound (TE: unbounded side) to None (FlashAttention 4: unbounded).

    Added by fa4_patch: FA4 >= 4.0.0b30 reads a negative bound literally, so TE's causal (-1, 0)
    would select no key at all. Keep this body to comparisons, isinstance, bool, int, TypeError,
    if/raise/return and plain f-strings: fa4-audit runs it in a sandbox before trusting it.
    """
    if left is not None:
        if isinstance(left, bool) or not isinstance(left, int):
            raise TypeError(f"window_size_left must be an int or None, got {left}")
        if left < 0:
            left = None
    if right is not None:
        if isinstance(right, bool) or not isinstance(right, int):
            raise TypeError(f"window_size_right must be an int or None, got {right}")
        if right < 0:
            right = None
    return left, right


def _fa4_audit_wrap(fn):
    """Wrap a FlashAttention 4 entry point so negative window bounds reach it as None.

    Added by fa4_patch. ``window_size`` (a pair) and ``window_size_left``/``window_size_right``
    are normalised whether passed by keyword or by position; positions are read once, here.
    """
    if fn is None or getattr(fn, "_fa4_audit_wrapped", False):
        return fn
    import functools  # pylint: disable=import-outside-toplevel
    import inspect  # pylint: disable=import-outside-toplevel

    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds]
    slots = [
        (name, positional.index(name) if name in positional else -1)
        for name in ("window_size", "window_size_left", "window_size_right")
    ]

    def normalize(name, value):
        if name == "window_size_left":
            return _fa4_audit_normalize_pair(value, None)[0]
        if name == "window_size_right":
            return _fa4_audit_normalize_pair(None, value)[1]
        if value is None:
            return None
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise TypeError(f"window_size must be a (left, right) pair or None, got {value!r}")
        pair = _fa4_audit_normalize_pair(value[0], value[1])
        return list(pair) if isinstance(value, list) else pair

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if args:
            args = list(args)
        for name, index in slots:
            if 0 <= index < len(args):
                args[index] = normalize(name, args[index])
            elif name in kwargs:
                kwargs[name] = normalize(name, kwargs[name])
        return fn(*args, **kwargs)

    wrapper._fa4_audit_wrapped = True  # pylint: disable=protected-access
    return wrapper
'''

IMPORT_SOURCE = "from fa4_patch import wrap as _fa4_audit_wrap\n"


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _canonical_dump(source: str) -> str:
    return ast.dump(_strip_docstrings(ast.parse(textwrap.dedent(source))))


_CANONICAL = {}
for _node in ast.parse(HELPER_SOURCE).body:
    _CANONICAL[_node.name] = ast.dump(_strip_docstrings(ast.Module([_node], [])))
del _node


# ----------------------------------------------------------------------------- results

@dataclass
class FilePatch:
    """What the codemod does to one file."""

    path: str                           # relative to the root, '/' separated
    before: str
    after: str
    wrapped: list[str] = field(default_factory=list)   # "N (line L)" per added wrap
    helper: str | None = None           # "added" | "restored" | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def summary(self) -> str:
        parts = []
        if self.wrapped:
            parts.append(f"wrapped {len(self.wrapped)} FA4 binding(s): {', '.join(self.wrapped)}")
        if self.helper:
            what = ("from fa4_patch import wrap as " + WRAP_NAME if self.helper == "imported"
                    else f"helpers {PAIR_NAME}, {WRAP_NAME}")
            parts.append(f"{self.helper} {what}")
        return "; ".join(parts) or "unchanged"

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
            fromfile=f"a/{self.path}", tofile=f"b/{self.path}"))


# ----------------------------------------------------------------------------- name helpers

def _dotted(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def _resolve_from(node: cst.ImportFrom, package: str) -> str | None:
    """Absolute module of ``from ... import``; None for an unresolvable relative import."""
    mod = _dotted(node.module) if node.module is not None else None
    level = len(node.relative)
    if level == 0:
        return mod
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[:len(parts) - (level - 1)]
    if mod:
        base = base + mod.split(".")
    return ".".join(base) or None


def _alias_local(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value  # type: ignore[union-attr]
    name = _dotted(alias.name) or ""
    return name.split(".")[0]


# ----------------------------------------------------------------------------- analysis

def _ast_dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _ast_dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _ast_resolve_from(node: ast.ImportFrom, package: str) -> str | None:
    if node.level == 0:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        return None
    base = parts[:len(parts) - (node.level - 1)]
    if node.module:
        base = base + node.module.split(".")
    return ".".join(base) or None


@dataclass
class _Scan:
    """What a fast ``ast`` pass learns about a module before libcst is needed at all."""

    fa4_imports: int = 0                                  # FA4 entry-point import statements
    mentions_helper: bool = False                         # _fa4_audit_* defined or used
    wrap_names: set = field(default_factory=lambda: {WRAP_NAME})
    attr_wrappers: set = field(default_factory=set)      # dotted, e.g. "fa4_patch.wrap"
    errors: list = field(default_factory=list)           # "line:col: message"


def _scan(tree: ast.Module, package: str) -> _Scan:
    scan = _Scan()
    module_aliases: dict[str, str] = {}
    attrs: list[ast.Attribute] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    module_aliases[alias.asname] = alias.name
                    local, target = alias.asname, alias.name
                else:
                    top = alias.name.split(".")[0]
                    module_aliases[top] = top
                    local, target = top, top
                for w in FA4_PATCH_WRAP:
                    if w.startswith(target + "."):
                        scan.attr_wrappers.add(local + w[len(target):])
        elif isinstance(node, ast.ImportFrom):
            mod = _ast_resolve_from(node, package)
            if mod is None:
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                full = f"{mod}.{alias.name}"
                if alias.name == "*":
                    if mod in FA4_ENTRY_MODULES:
                        scan.errors.append(
                            f"{node.lineno}:{node.col_offset + 1}: star import from {mod}: "
                            "import the entry points by name so each binding can be wrapped")
                    continue
                if full in FA4_PATCH_WRAP:
                    scan.wrap_names.add(local)
                if full in FA4_ENTRY_MODULES:     # from flash_attn import cute, ...
                    module_aliases[local] = full
            if mod in FA4_ENTRY_MODULES and any(a.name in ENTRY_POINTS for a in node.names):
                scan.fa4_imports += 1
        elif isinstance(node, ast.Attribute):
            attrs.append(node)
        elif isinstance(node, ast.Call):
            func = _ast_dotted(node.func) or ""
            if (func.split(".")[-1] in ("import_module", "__import__") and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                    and node.args[0].value.startswith("flash_attn.cute")):
                scan.errors.append(
                    f"{node.lineno}:{node.col_offset + 1}: dynamic import of "
                    f"{node.args[0].value}: the codemod cannot wrap what it binds; import the "
                    "entry points by name")
        elif isinstance(node, ast.FunctionDef) and node.name in (WRAP_NAME, PAIR_NAME):
            scan.mentions_helper = True
        elif isinstance(node, ast.Name) and node.id in (WRAP_NAME, PAIR_NAME):
            scan.mentions_helper = True
    for node in attrs:
        dotted = _ast_dotted(node)
        if dotted is None:
            continue
        head, _, rest = dotted.partition(".")
        target = module_aliases.get(head)
        if target is None:
            continue
        mod, _, attr = f"{target}.{rest}".rpartition(".")
        if mod in FA4_ENTRY_MODULES and attr in ENTRY_POINTS:
            scan.errors.append(
                f"{node.lineno}:{node.col_offset + 1}: FA4 entry point reached as a module "
                f"attribute ({dotted}); there is no binding to wrap: import it by name (from "
                f"{mod} import {attr}) or call fa4_patch.install()")
    scan.errors.sort(key=lambda e: tuple(int(x) for x in e.split(":")[:2]))
    return scan


def _is_wrapper_func(func: cst.BaseExpression, wrap_names: set[str],
                     attr_wrappers: set[str]) -> bool:
    if isinstance(func, cst.Name):
        return func.value in wrap_names
    d = _dotted(func)
    return d is not None and d in attr_wrappers


def _mentions(node: cst.CSTNode, name: str) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            nonlocal found
            if n.value == name:
                found = True

    node.visit(V())
    return found


def _wraps_name(small: cst.BaseSmallStatement, name: str, wrap_names, attr_wrappers) -> bool:
    """``name = W(...name...)`` with W a recognised wrapper (at any depth of the value)."""
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return False
    target = small.targets[0].target
    if not (isinstance(target, cst.Name) and target.value == name):
        return False
    hit = False

    class V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal hit
            if _is_wrapper_func(call.func, wrap_names, attr_wrappers) and any(
                    _mentions(a.value, name) for a in call.args):
                hit = True

    small.value.visit(V())
    return hit


def _small_statements(stmt: cst.BaseStatement | cst.BaseSmallStatement):
    if isinstance(stmt, cst.SimpleStatementLine):
        return list(stmt.body)
    if isinstance(stmt, cst.BaseSmallStatement):
        return [stmt]
    return []


# ----------------------------------------------------------------------------- transform

class _Patcher(cst.CSTTransformer):
    def __init__(self, package: str, wrap_names: set[str], attr_wrappers: set[str]):
        super().__init__()
        self.package = package
        self.wrap_names = wrap_names
        self.attr_wrappers = attr_wrappers
        self.wrapped: list[str] = []
        self.errors: list[str] = []

    def _fa4_bindings(self, small: cst.BaseSmallStatement) -> list[str]:
        if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
            return []
        mod = _resolve_from(small, self.package)
        if mod not in FA4_ENTRY_MODULES:
            return []
        out = []
        for alias in small.names:
            if (_dotted(alias.name) or "") in ENTRY_POINTS:
                out.append(_alias_local(alias))
        return out

    def _wrap_line(self, name: str) -> cst.Assign:
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(name))],
                          value=cst.Call(cst.Name(WRAP_NAME), [cst.Arg(cst.Name(name))]))

    def _covered(self, name: str, later: list) -> bool:
        for stmt in later:
            for small in _small_statements(stmt):
                if _wraps_name(small, name, self.wrap_names, self.attr_wrappers):
                    return True
        return False

    def _process(self, body: list) -> list:
        out = []
        for i, stmt in enumerate(body):
            out.append(stmt)
            smalls = _small_statements(stmt)
            for k, small in enumerate(smalls):
                names = self._fa4_bindings(small)
                if not names:
                    continue
                missing = [n for n in names if not self._covered(n, body[i + 1:])]
                if not missing:
                    continue
                if k != len(smalls) - 1:
                    self.errors.append(
                        f"FA4 import followed by another statement on the same line "
                        f"({', '.join(missing)}): put the import on its own line")
                    continue
                for name in missing:
                    self.wrapped.append(name)
                    out.append(cst.SimpleStatementLine([self._wrap_line(name)]))
        return out

    def leave_IndentedBlock(self, original_node, updated_node):
        body = self._process(list(updated_node.body))
        return updated_node.with_changes(body=body)

    def leave_Module(self, original_node, updated_node):
        return updated_node.with_changes(body=self._process(list(updated_node.body)))

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        # `try: from flash_attn.cute.interface import flash_attn_func` on one line
        smalls = list(updated_node.body)
        out = []
        for i, small in enumerate(smalls):
            out.append(small)
            for name in self._fa4_bindings(small):
                if not self._covered(name, smalls[i + 1:]):
                    self.wrapped.append(name)
                    out.append(self._wrap_line(name))
        if len(out) != len(smalls):
            out = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in out]
        return updated_node.with_changes(body=out)


def _uses_wrap(stmt: cst.CSTNode, package: str | None = None) -> bool:
    """``stmt`` calls ``_fa4_audit_wrap`` (or, with ``package``, imports an FA4 entry point:
    the helper goes before the binding, not between the binding and its wrap line)."""
    hit = False

    class V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal hit
            if isinstance(call.func, cst.Name) and call.func.value == WRAP_NAME:
                hit = True

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            nonlocal hit
            if package is None or isinstance(node.names, cst.ImportStar):
                return
            if _resolve_from(node, package) in FA4_ENTRY_MODULES and any(
                    (_dotted(a.name) or "") in ENTRY_POINTS for a in node.names):
                hit = True

    stmt.visit(V())
    return hit


def _helper_defs(module: cst.Module) -> dict[str, int]:
    """Top-level statements that define the helpers: name -> index in module.body."""
    out: dict[str, int] = {}
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in (WRAP_NAME, PAIR_NAME):
            out.setdefault(stmt.name.value, i)
        for small in _small_statements(stmt):
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                mod = _dotted(small.module) if small.module is not None else None
                if small.relative or mod is None:
                    continue
                for alias in small.names:
                    if (_alias_local(alias) == WRAP_NAME
                            and f"{mod}.{_dotted(alias.name)}" in FA4_PATCH_WRAP):
                        out.setdefault("import", i)
    return out


def _helper_statements(mode: str, newline: str = "\n") -> list[cst.BaseStatement]:
    src = HELPER_SOURCE if mode == "inline" else IMPORT_SOURCE
    # the docstrings' line breaks are inside string tokens: give them the file's own
    stmts = list(cst.parse_module(src.replace("\n", newline)).body)
    blank = cst.EmptyLine()
    out = []
    for i, s in enumerate(stmts):
        lines = [blank, blank] if (mode == "inline" or i) else [blank]
        out.append(s.with_changes(leading_lines=lines))
    return out


def _ensure_helpers(module: cst.Module, mode: str,
                    package: str) -> tuple[cst.Module, str | None]:
    """Add (or restore) the helper the wrap lines call; returns the module and what it did."""
    first_use = next((i for i, s in enumerate(module.body) if _uses_wrap(s)), None)
    defs = _helper_defs(module)
    body = list(module.body)
    if "import" in defs:
        if first_use is not None and defs["import"] > first_use:
            raise CodemodError(f"{WRAP_NAME} is imported after its first use")
        return module, None
    if WRAP_NAME in defs or PAIR_NAME in defs:
        # present: check each against the canonical code, restore what differs or is missing
        canonical = {s.name.value: s for s in _helper_statements("inline",
                                                                 module.default_newline)}
        changed = False
        for name in (PAIR_NAME, WRAP_NAME):
            if name in defs:
                node = body[defs[name]]
                code = cst.Module([]).code_for_node(node.with_changes(leading_lines=[]))
                try:
                    same = _canonical_dump(code) == _CANONICAL[name]
                except SyntaxError:
                    same = False
                if not same:
                    body[defs[name]] = canonical[name].with_changes(
                        leading_lines=node.leading_lines)
                    changed = True
        missing = [n for n in (PAIR_NAME, WRAP_NAME) if n not in defs]
        if missing:
            at = min(defs.values())
            for name in reversed(missing):
                body.insert(at if name == PAIR_NAME else at + 1, canonical[name])
            changed = True
        defs = _helper_defs(module.with_changes(body=body))
        if first_use is not None:
            first_use = next(i for i, s in enumerate(body) if _uses_wrap(s))
            if max(defs.values()) > first_use:
                raise CodemodError(f"{WRAP_NAME} / {PAIR_NAME} are defined after the first use "
                                   f"of {WRAP_NAME}")
        return module.with_changes(body=body), ("restored" if changed else None)
    if first_use is None:
        return module, None
    # insert before the first statement that binds FA4 or calls the wrapper
    first_use = next(i for i, s in enumerate(module.body) if _uses_wrap(s, package))
    helpers = _helper_statements(mode, module.default_newline)
    if mode == "import":
        # right after the last top-level import above the first use (keeps imports together)
        last = None
        for i in range(first_use):
            smalls = _small_statements(body[i])
            if smalls and all(isinstance(x, (cst.Import, cst.ImportFrom)) for x in smalls):
                last = i
        if last is not None:
            body.insert(last + 1, helpers[0].with_changes(leading_lines=[]))
            return module.with_changes(body=body), "imported"
    anchor = body[first_use]
    # two blank lines between the helper and what follows (PEP 8 / black)
    lead = list(anchor.leading_lines)
    blanks = 0
    for line in lead:
        if line.comment is None and not line.whitespace.value.strip():
            blanks += 1
        else:
            break
    if blanks < 2 and mode == "inline":
        lead = [cst.EmptyLine()] * (2 - blanks) + lead
    if first_use == 0:
        helpers[0] = helpers[0].with_changes(leading_lines=[])
    body[first_use] = anchor.with_changes(leading_lines=lead)
    body[first_use:first_use] = helpers
    return module.with_changes(body=body), ("added" if mode == "inline" else "imported")


# ----------------------------------------------------------------------------- per file

def module_name(rel: str) -> tuple[str, str]:
    """(module, package) for a path relative to the root, e.g. ``a/b/c.py`` -> (a.b.c, a.b)."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def patch_source(source: str, path: str = "transformer_engine/m.py", *,
                 mode: str = "inline") -> FilePatch:
    """Patch one module's source. ``path`` (relative, '/'-separated) resolves relative imports.

    Raises CodemodError (one line, prefixed with the path) when it cannot be patched.
    """
    if mode not in ("inline", "import"):
        raise ValueError(f"mode must be 'inline' or 'import', not {mode!r}")
    _, package = module_name(path)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise CodemodError(f"{path}:{exc.lineno}:{(exc.offset or 0)}: cannot parse: "
                           f"{exc.msg}") from None
    except ValueError as exc:   # e.g. NUL bytes
        raise CodemodError(f"{path}: cannot parse: {exc}") from None
    scanner = _scan(tree, package)
    if scanner.errors:
        raise CodemodError(f"{path}:{scanner.errors[0]}")
    if not scanner.fa4_imports and not scanner.mentions_helper:
        return FilePatch(path=path, before=source, after=source)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        msg = str(exc).strip().splitlines()[0]
        raise CodemodError(f"{path}:{exc.raw_line}:{exc.raw_column + 1}: cannot parse: "
                           f"{msg}") from None
    patcher = _Patcher(package, scanner.wrap_names, scanner.attr_wrappers)
    new = module.visit(patcher)
    if patcher.errors:
        raise CodemodError(f"{path}: {patcher.errors[0]}")
    try:
        new, helper = _ensure_helpers(new, mode, package)
    except CodemodError as exc:
        raise CodemodError(f"{path}: {exc}") from None
    after = new.code
    result = FilePatch(path=path, before=source, after=after, helper=helper)
    if result.changed:
        try:
            compile(after, path, "exec", dont_inherit=True)
        except SyntaxError as exc:  # pragma: no cover - a bug in this codemod
            raise CodemodError(f"{path}: the patched file does not compile ({exc.msg}, line "
                               f"{exc.lineno}); nothing written") from None
        lines = {}
        for i, line in enumerate(after.splitlines(), 1):
            s = line.strip()
            if s.endswith(f"= {WRAP_NAME}({s.split(' =')[0]})"):
                lines.setdefault(s.split(" =")[0], []).append(i)
        seen: dict[str, int] = {}
        for name in patcher.wrapped:
            k = seen.get(name, 0)
            seen[name] = k + 1
            at = lines.get(name, [])
            result.wrapped.append(f"{name} (line {at[k]})" if k < len(at) else name)
    return result


def find_root(te_dir: str | os.PathLike) -> Path:
    """The folder holding ``transformer_engine/`` (accepts that package folder itself too)."""
    p = Path(te_dir)
    if not p.exists():
        raise CodemodError(f"{p}: no such folder")
    if (p / PACKAGE_DIR).is_dir():
        return p
    if p.name == PACKAGE_DIR and (p / "__init__.py").is_file():
        return p.parent
    raise CodemodError(f"{p}: no {PACKAGE_DIR}/ package folder here (give the folder that "
                       f"holds {PACKAGE_DIR}/)")


def iter_candidates(root: Path):
    """Files of the package that can bind FA4 (they spell ``flash_attn`` and ``cute``)."""
    base = root / PACKAGE_DIR
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                path = Path(dirpath) / fn
                try:
                    if not stat.S_ISREG(os.stat(path).st_mode):
                        # a FIFO / device / socket named .py would block or lie: refuse it
                        raise CodemodError(f"{path}: not a regular file (FIFO, device or "
                                           f"socket); refusing to read it")
                    data = path.read_bytes()
                except OSError as exc:
                    raise CodemodError(f"{path}: cannot read ({exc.strerror})") from None
                # an FA4 import spells both words (absolute imports; nothing in the package
                # can reach flash_attn.cute by a relative one); helper files are re-checked
                if (b"flash_attn" in data and b"cute" in data) or WRAP_NAME.encode() in data:
                    yield path, data


def plan(te_dir: str | os.PathLike, *, mode: str = "inline") -> list[FilePatch]:
    """Patch (in memory) every candidate file under ``te_dir``; nothing is written."""
    root = find_root(te_dir)
    out = []
    for path, data in iter_candidates(root):
        rel = path.relative_to(root).as_posix()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CodemodError(f"{rel}: not UTF-8 ({exc.reason})") from None
        out.append(patch_source(text, rel, mode=mode))
    return out


def write(te_dir: str | os.PathLike, patches: list[FilePatch]) -> list[Path]:
    root = find_root(te_dir)
    written = []
    for p in patches:
        if p.changed:
            target = root / p.path
            tmp = target.with_name(target.name + ".fa4_patch.tmp")
            tmp.write_text(p.after, encoding="utf-8", newline="")
            shutil.copymode(target, tmp)
            os.replace(tmp, target)
            written.append(target)
    return written
