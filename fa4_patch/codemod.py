"""Codemod: wrap every FlashAttention 4 binding of a tree at its binding site.

``python -m fa4_patch TE_DIR --check | --diff | --write [--style wrapper|kwargs|import]``

A *binding* is a name bound by ``from M import E [as N]`` where ``M`` resolves (relative
imports included) to ``flash_attn.cute.interface`` or ``flash_attn.cute`` and ``E`` is one of
FA4's four window-taking entry points (``flash_attn_func``, ``flash_attn_varlen_func``,
``_flash_attn_fwd``, ``_flash_attn_bwd``). Bindings are found by that origin, never by the local
name: TE's bare ``_flash_attn_fwd`` is FA2's and ``flash_attn_func_v3`` is FA3's.

Right after each binding the codemod adds ``N = W(N, ...)`` in the same block, so every name that
later derives from it -- TE 2.20.x's ``flash_attn_func_v4 = no_torch_dynamo()(_flash_attn_func_v4)``
and the self-rebinding ``_flash_attn_fwd_v4 = no_torch_dynamo()(_flash_attn_fwd_v4)`` -- holds
the normalising wrapper, and no raw FA4 function stays reachable under any name.

Styles (what ``W`` is):

* ``wrapper`` (default): a short module-level normaliser (``_fa4_window_bound``,
  ``_fa4_window_size``) and wrapper factory ``_fa4_window_wrapper(fn, size_at=, left_at=,
  right_at=)``, written into the module as plain Python (``functools.wraps``, ``isinstance``,
  ``len``, comparisons with constants; no import of this tool). Windows are normalised by
  keyword and by position; the positions are FA4's since 4.0.0b9 (``window_size`` 7 / 15,
  ``window_size_left``/``right`` 15/16 and 9/10). On 4.0.0b3-b8 those slots hold ``softcap``,
  ``num_splits``, ``learnable_sink`` and ``tile_mn``, which the normaliser leaves alone (it
  only rewrites a negative ``int`` or a 2-tuple/list), and those releases read a negative bound
  as unbounded anyway.
* ``kwargs``: the seed PR's form, ``_fa4_window_kwargs(fn)``, which rewrites the ``**kwargs``
  dict only (``window_size`` and ``window_size_left``/``right``). Every TE call passes its
  window by keyword; a positional window is not normalised in this style.
* ``import``: ``from fa4_patch import wrap as _fa4_patch_wrap`` (depends on this package).

The inserted code is judged by ``fa4-audit sites`` by what it does (run against a recording
stand-in for FA4), never by its names.

Minimal and mergeable: only the top-level statements that hold an FA4 binding are parsed (with
libcst; the rest of the module is read once with ``ast`` and never re-printed); helpers go just
above the first statement that needs them, ``import functools`` into the module's first import
block when missing. Then the changed lines (and only those) are run through the audited tree's
own formatter: black (``[tool.black]`` in ``pyproject.toml`` and/or the black hook's ``args`` in
``.pre-commit-config.yaml``, through black's library API with ``lines=``) or ruff-format
(``ruff format --range``). The result must ``compile()`` before anything is written.

Idempotent: a binding already followed (in its block) by ``N = W(...N...)`` with ``W`` a
recognised wrapper (the helpers above, ``fa4_patch.wrap`` imported under any name) is left
alone; helpers already present are compared with the canonical code (docstrings and formatting
aside) and put back when they differ (a sabotaged normaliser is restored).

What it refuses (exit 2, one line): entry points reached as module attributes (``import
flash_attn.cute.interface as fai; fai.flash_attn_func(...)``: there is no binding to wrap; import
the function by name or use ``fa4_patch.install()``), ``from flash_attn.cute... import *``,
``importlib.import_module("flash_attn.cute...")``, a file that does not parse, an FA4 import
followed by another statement on its line, and a helper defined after its first use.

Dry runs are cached by content (the file's bytes, the style, the formatter's settings and
version, and this module's own code) under ``$FA4_AUDIT_CACHE`` or
``$XDG_CACHE_HOME/fa4-audit`` (``codemod/``).
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: no pyproject settings are read
    tomllib = None
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from fa4_patch.install import ENTRY_POINTS, FA4_MODULES

PACKAGE_DIR = "transformer_engine"
FA4_ENTRY_MODULES = frozenset(FA4_MODULES)
# where fa4_patch.wrap may be imported from
FA4_PATCH_WRAP = frozenset({"fa4_patch.wrap", "fa4_patch.wrapper.wrap"})

STYLES = ("wrapper", "kwargs", "import")
BOUND_NAME = "_fa4_window_bound"
SIZE_NAME = "_fa4_window_size"
WRAP_NAME = "_fa4_window_wrapper"          # the default style's factory
KWARGS_NAME = "_fa4_window_kwargs"         # the seed PR's kwargs-dict form
IMPORT_NAME = "_fa4_patch_wrap"            # --style import: fa4_patch.wrap under this name
HELPER_NAMES = (BOUND_NAME, SIZE_NAME, WRAP_NAME, KWARGS_NAME)

# positional index of each entry point's window parameters, FA4 >= 4.0.0b9 (all releases since
# read from the wheels: tests/test_patch_codemod.py checks them against b9 and the newest)
POSITIONS = {
    "flash_attn_func": (("size_at", 7),),
    "flash_attn_varlen_func": (("size_at", 15),),
    "_flash_attn_fwd": (("left_at", 15), ("right_at", 16)),
    "_flash_attn_bwd": (("left_at", 9), ("right_at", 10)),
}


class CodemodError(Exception):
    """One-line could-not-patch message (the CLI prints it and exits 2)."""


# ----------------------------------------------------------------------------- helper text

_HELPERS = {
    BOUND_NAME: '''\
def _fa4_window_bound(bound):
    """FlashAttention 4 spells an unbounded window side None; TE spells it -1."""
    if isinstance(bound, int) and bound < 0:
        return None
    return bound
''',
    SIZE_NAME: '''\
def _fa4_window_size(window_size):
    """A (left, right) window with each negative bound replaced by None."""
    if isinstance(window_size, tuple) and len(window_size) == 2:
        return (_fa4_window_bound(window_size[0]), _fa4_window_bound(window_size[1]))
    if isinstance(window_size, list) and len(window_size) == 2:
        return [_fa4_window_bound(window_size[0]), _fa4_window_bound(window_size[1])]
    return window_size
''',
    WRAP_NAME: '''\
def _fa4_window_wrapper(fn, size_at=None, left_at=None, right_at=None):
    """Pass negative window bounds to a FlashAttention 4 entry point as None (unbounded).

    FA4 >= 4.0.0b30 reads a negative bound literally, so TE's causal (-1, 0) would select
    no key at all. ``size_at``, ``left_at`` and ``right_at`` are the positions of
    ``window_size``, ``window_size_left`` and ``window_size_right``.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = list(args)
        if size_at is not None and len(args) > size_at:
            args[size_at] = _fa4_window_size(args[size_at])
        if left_at is not None and len(args) > left_at:
            args[left_at] = _fa4_window_bound(args[left_at])
        if right_at is not None and len(args) > right_at:
            args[right_at] = _fa4_window_bound(args[right_at])
        if "window_size" in kwargs:
            kwargs["window_size"] = _fa4_window_size(kwargs["window_size"])
        if "window_size_left" in kwargs:
            kwargs["window_size_left"] = _fa4_window_bound(kwargs["window_size_left"])
        if "window_size_right" in kwargs:
            kwargs["window_size_right"] = _fa4_window_bound(kwargs["window_size_right"])
        return fn(*args, **kwargs)

    return wrapper
''',
    KWARGS_NAME: '''\
def _fa4_window_kwargs(fn):
    """Pass negative window bounds to a FlashAttention 4 entry point as None (unbounded).

    FA4 >= 4.0.0b30 reads a negative bound literally, so TE's causal (-1, 0) would select
    no key at all. TE passes windows by keyword: this rewrites the keyword arguments.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "window_size" in kwargs:
            kwargs["window_size"] = _fa4_window_size(kwargs["window_size"])
        if "window_size_left" in kwargs:
            kwargs["window_size_left"] = _fa4_window_bound(kwargs["window_size_left"])
        if "window_size_right" in kwargs:
            kwargs["window_size_right"] = _fa4_window_bound(kwargs["window_size_right"])
        return fn(*args, **kwargs)

    return wrapper
''',
}

STYLE_HELPERS = {"wrapper": (BOUND_NAME, SIZE_NAME, WRAP_NAME),
                 "kwargs": (BOUND_NAME, SIZE_NAME, KWARGS_NAME), "import": ()}
STYLE_WRAPPER = {"wrapper": WRAP_NAME, "kwargs": KWARGS_NAME, "import": IMPORT_NAME}


def helper_source(style: str = "wrapper") -> str:
    """The text the codemod writes into a module for ``style`` (two blank lines between defs)."""
    if style == "import":
        return IMPORT_SOURCE
    return "\n\n".join(_HELPERS[n] for n in STYLE_HELPERS[style])


HELPER_SOURCE = helper_source("wrapper")
KWARGS_HELPER_SOURCE = helper_source("kwargs")
IMPORT_SOURCE = f"from fa4_patch import wrap as {IMPORT_NAME}\n"


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _dump(node: ast.AST) -> str:
    """A def's code with docstrings, positions and formatting left out."""
    import copy

    return ast.dump(_strip_docstrings(ast.Module([copy.deepcopy(node)], [])))


_CANONICAL = {name: _dump(ast.parse(text).body[0]) for name, text in _HELPERS.items()}


def wrap_call(style: str, name: str, entry: str) -> str:
    """The wrap line's value for binding ``name`` of FA4 entry point ``entry``."""
    if style == "wrapper":
        extra = "".join(f", {k}={v}" for k, v in POSITIONS[entry])
        return f"{WRAP_NAME}({name}{extra})"
    return f"{STYLE_WRAPPER[style]}({name})"


# ----------------------------------------------------------------------------- results

@dataclass
class FilePatch:
    """What the codemod does to one file. Line numbers are the ORIGINAL file's."""

    path: str                           # relative to the root, '/' separated
    before: str
    after: str
    wrapped: list[str] = field(default_factory=list)   # "N (line L)" per added wrap
    helper: str | None = None           # "added" | "restored" | "imported" | None
    notes: list[str] = field(default_factory=list)     # formatter used / not available

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def summary(self) -> str:
        parts = []
        if self.wrapped:
            parts.append(f"wrapped {len(self.wrapped)} FA4 binding(s) bound at {', '.join(self.wrapped)}")
        if self.helper:
            parts.append(f"{self.helper} the window normaliser")
        return "; ".join(parts) or "unchanged"

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
            fromfile=f"a/{self.path}", tofile=f"b/{self.path}"))

    def to_json(self) -> dict:
        return {"path": self.path, "after": self.after, "wrapped": self.wrapped,
                "helper": self.helper, "notes": self.notes}


# ----------------------------------------------------------------------------- name helpers

def _dotted(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


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


# ----------------------------------------------------------------------------- analysis (ast)

@dataclass
class _Scan:
    """What one ``ast`` pass learns about a module; libcst only sees what must change."""

    wrap_names: set = field(default_factory=lambda: {WRAP_NAME, KWARGS_NAME})
    attr_wrappers: set = field(default_factory=set)      # dotted, e.g. "fa4_patch.wrap"
    errors: list = field(default_factory=list)           # "line:col: message"
    # FA4 entry-point imports: (ImportFrom node, [(local name, entry, alias line)])
    imports: list = field(default_factory=list)


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
            bound = []
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
                if mod in FA4_ENTRY_MODULES and alias.name in ENTRY_POINTS:
                    bound.append((local, alias.name, getattr(alias, "lineno", node.lineno)))
            if bound:
                scan.imports.append((node, bound))
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
    scan.imports.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
    return scan


def _blocks(tree: ast.AST):
    """Every statement list (block) of the module, the module body included."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        for h in getattr(node, "handlers", ()) or ():
            yield h.body
        for c in getattr(node, "cases", ()) or ():
            yield c.body


def _is_wrapper(func: ast.AST, scan: _Scan) -> bool:
    if isinstance(func, ast.Name):
        return func.id in scan.wrap_names or func.id == IMPORT_NAME
    d = _ast_dotted(func)
    return d is not None and d in scan.attr_wrappers


def _wraps(stmt: ast.stmt, name: str, scan: _Scan) -> bool:
    """``name = W(...name...)`` with W a recognised wrapper, at any depth of the value."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name):
        return False
    for call in ast.walk(stmt.value):
        if isinstance(call, ast.Call) and _is_wrapper(call.func, scan) and any(
                isinstance(n, ast.Name) and n.id == name
                for a in call.args for n in ast.walk(a)):
            return True
    return False


def _missing_wraps(tree: ast.Module, scan: _Scan) -> dict[int, list[tuple[str, str, int]]]:
    """import statement line -> the bindings it makes that no later statement of its block wraps."""
    where: dict[int, tuple[list, int]] = {}
    for block in _blocks(tree):
        for i, stmt in enumerate(block):
            where[id(stmt)] = (block, i)
    out: dict[int, list] = {}
    for node, bound in scan.imports:
        block, i = where[id(node)]
        later = block[i + 1:]
        missing = [b for b in bound if not any(_wraps(s, b[0], scan) for s in later)]
        if missing:
            out[node.lineno] = missing
    return out


# ----------------------------------------------------------------------------- transform (libcst)

def _small_statements(stmt):
    if isinstance(stmt, cst.SimpleStatementLine):
        return list(stmt.body)
    if isinstance(stmt, cst.BaseSmallStatement):
        return [stmt]
    return []


class _Patcher(cst.CSTTransformer):
    """Adds the wrap lines after the FA4 imports of one parsed top-level statement."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, missing: dict[int, list], offset: int, style: str):
        super().__init__()
        self.missing = missing      # absolute import line -> [(name, entry, alias line)]
        self.offset = offset        # absolute line of the segment's first line, minus one
        self.style = style
        self.done: list[tuple[str, int]] = []
        self.errors: list[str] = []
        self._lines: dict[int, tuple] = {}

    def leave_ImportFrom(self, original_node, updated_node):
        # metadata is keyed by the original node; the blocks see the updated one
        line = self.get_metadata(PositionProvider, original_node).start.line + self.offset
        self._lines[id(updated_node)] = (updated_node, line)
        return updated_node

    def _needs(self, small) -> list:
        if not isinstance(small, cst.ImportFrom) or id(small) not in self._lines:
            return []
        return self.missing.get(self._lines[id(small)][1], [])

    def _wrap_line(self, name: str, entry: str) -> cst.Assign:
        value = cst.parse_expression(wrap_call(self.style, name, entry))
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)

    def _process(self, body: list) -> list:
        out = []
        for stmt in body:
            out.append(stmt)
            smalls = _small_statements(stmt)
            for k, small in enumerate(smalls):
                needs = self._needs(small)
                if not needs:
                    continue
                if k != len(smalls) - 1:
                    self.errors.append(
                        f"FA4 import followed by another statement on the same line "
                        f"({', '.join(n for n, _, _ in needs)}): put the import on its own line")
                    continue
                for name, entry, line in needs:
                    self.done.append((name, line))
                    out.append(cst.SimpleStatementLine([self._wrap_line(name, entry)]))
        return out

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=self._process(list(updated_node.body)))

    def leave_Module(self, original_node, updated_node):
        return updated_node.with_changes(body=self._process(list(updated_node.body)))

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        # `try: from flash_attn.cute.interface import flash_attn_func` on one line
        smalls = list(updated_node.body)
        out = []
        for small in smalls:
            out.append(small)
            for name, entry, line in self._needs(small):
                self.done.append((name, line))
                out.append(self._wrap_line(name, entry))
        if len(out) != len(smalls):
            out = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in out]
        return updated_node.with_changes(body=out)


# ----------------------------------------------------------------------------- formatter

@dataclass(frozen=True)
class Formatter:
    """The audited tree's own formatter, as its configuration names it."""

    tool: str                           # "black" | "ruff" | "none"
    source: str                         # where it was read: "pyproject.toml", ".pre-commit-config.yaml"
    options: tuple = ()                 # black: (key, value) pairs of black.Mode; ruff: args
    pinned: str | None = None           # the version the tree pins (pre-commit rev)
    root: str = ""                      # the tree (ruff reads its config from there)

    def key(self) -> str:
        return json.dumps([self.tool, self.source, list(self.options), self.pinned, _tool_version(self.tool)])

    def describe(self) -> str:
        if self.tool == "none":
            return self.source or "no formatter configured in the tree"
        have = _tool_version(self.tool)
        pin = f", the tree pins {self.pinned}" if self.pinned else ""
        return f"{self.tool} {have or '(not installed)'} with the tree's settings ({self.source}{pin})"


def _tool_version(tool: str) -> str | None:
    if tool == "black":
        try:
            import black
        except ImportError:
            return None
        return black.__version__
    if tool == "ruff":
        exe = shutil.which("ruff")
        if exe is None:
            return None
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip().split()[-1] if out.returncode == 0 and out.stdout.strip() else None
    return None


_BLACK_FLAGS = {"--preview": ("preview", True), "--skip-string-normalization": ("string_normalization", False),
                "-S": ("string_normalization", False),
                "--skip-magic-trailing-comma": ("magic_trailing_comma", False),
                "-C": ("magic_trailing_comma", False), "--unstable": ("unstable", True)}


def _black_options_from_args(args: list[str], opts: dict) -> None:
    i = 0
    while i < len(args):
        a = str(args[i])
        key, _, val = a.partition("=")
        takes = key in ("--line-length", "-l", "--enable-unstable-feature", "--target-version", "-t")
        if takes and not _ and i + 1 < len(args):
            val = str(args[i + 1])
            i += 1
        if key in ("--line-length", "-l"):
            opts["line_length"] = int(val)
        elif key == "--enable-unstable-feature":
            opts.setdefault("enabled_features", []).append(val)
        elif key in ("--target-version", "-t"):
            opts.setdefault("target_versions", []).append(val)
        elif key in _BLACK_FLAGS:
            k, v = _BLACK_FLAGS[key]
            opts[k] = v
        i += 1


def _black_options_from_toml(conf: dict, opts: dict) -> None:
    if "line-length" in conf:
        opts["line_length"] = int(conf["line-length"])
    for k, mk, v in (("preview", "preview", True), ("unstable", "unstable", True),
                     ("skip-string-normalization", "string_normalization", False),
                     ("skip-magic-trailing-comma", "magic_trailing_comma", False)):
        if conf.get(k):
            opts[mk] = v
    if conf.get("enable-unstable-feature"):
        opts["enabled_features"] = list(conf["enable-unstable-feature"])
    if conf.get("target-version"):
        opts["target_versions"] = list(conf["target-version"])


def detect_formatter(root: str | os.PathLike) -> Formatter:
    """Read the tree's formatter from ``pyproject.toml`` and ``.pre-commit-config.yaml``.

    black: ``[tool.black]`` settings, then the black hook's ``args`` (pre-commit passes them on
    the command line, where they win). ruff-format: a ``ruff-format`` hook, or
    ``[tool.ruff.format]``. Neither: no formatting (the inserted code is already black-style).
    """
    root = Path(root)
    opts: dict = {}
    source: list[str] = []
    pinned = None
    tool = None
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and tomllib is not None:
        try:
            conf = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CodemodError(f"{pyproject}: cannot read ({exc})") from None
        t = conf.get("tool", {})
        if "black" in t:
            tool = "black"
            _black_options_from_toml(t["black"], opts)
            source.append("pyproject.toml [tool.black]")
        elif "format" in t.get("ruff", {}):
            tool = "ruff"
            source.append("pyproject.toml [tool.ruff.format]")
    pre = root / ".pre-commit-config.yaml"
    if pre.is_file():
        try:
            import yaml
        except ImportError:
            yaml = None
        if yaml is None and tool is None:
            return Formatter("none", ".pre-commit-config.yaml not read: PyYAML is not installed")
        if yaml is not None:
            try:
                conf = yaml.safe_load(pre.read_text(encoding="utf-8")) or {}
            except (OSError, yaml.YAMLError) as exc:
                raise CodemodError(f"{pre}: cannot read ({exc})") from None
            for repo in conf.get("repos", []) or []:
                for hook in repo.get("hooks", []) or []:
                    hid = hook.get("id")
                    if hid in ("black", "black-jupyter") and tool in (None, "black"):
                        tool = "black"
                        _black_options_from_args(list(hook.get("args", []) or []), opts)
                        pinned = str(repo.get("rev", "")) or None
                        source.append(".pre-commit-config.yaml black hook")
                    elif hid == "ruff-format" and tool in (None, "ruff"):
                        tool = "ruff"
                        pinned = str(repo.get("rev", "")) or None
                        source.append(".pre-commit-config.yaml ruff-format hook")
    if tool is None:
        return Formatter("none", "")
    return Formatter(tool, " + ".join(source), tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                                                           for k, v in opts.items())),
                     pinned, str(root))


def _black_mode(fmt: Formatter):
    import black

    kw = dict(fmt.options)
    mode = {}
    if "line_length" in kw:
        mode["line_length"] = kw["line_length"]
    for k in ("preview", "unstable", "string_normalization", "magic_trailing_comma"):
        if k in kw:
            mode[k] = kw[k]
    if "enabled_features" in kw:
        feats = set()
        for name in kw["enabled_features"]:
            try:
                feats.add(black.Preview[name])
            except KeyError:
                raise CodemodError(f"black {black.__version__} has no feature {name!r} "
                                   f"(the tree's formatter settings name it)") from None
        mode["enabled_features"] = feats
    if "target_versions" in kw:
        mode["target_versions"] = {black.TargetVersion[v.upper()] for v in kw["target_versions"]}
    return black.Mode(**mode)


def _changed_ranges(before: list[str], after: list[str],
                    context: frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of ``after`` that are not in ``before``. An insertion
    right after an original line in ``context`` (the last line of an FA4 import) takes that
    line along: the blank line black wants after an import block belongs to the insertion."""
    out = []
    sm = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for op, i1, _, j1, j2 in sm.get_opcodes():
        if op in ("insert", "replace") and j2 > j1:
            out.append((j1 if (op == "insert" and i1 in context and j1 >= 1) else j1 + 1, j2))
    return out


def format_changed(before: str, after: str, fmt: Formatter, path: str,
                   context: frozenset[int] = frozenset()) -> tuple[str, list[str]]:
    """Run the tree's formatter on the lines ``after`` adds to ``before``, and only those."""
    if fmt.tool == "none" or before == after:
        return after, ([f"formatter: {fmt.describe()}"] if fmt.tool == "none" and before != after else [])
    ranges = _changed_ranges(before.splitlines(), after.splitlines(), context)
    note = f"formatted with {fmt.describe()}"
    if fmt.tool == "black":
        try:
            import black
        except ImportError:
            return after, [f"not formatted: black is not installed ({fmt.source} asks for it)"]
        try:
            out = black.format_str(after, mode=_black_mode(fmt), lines=ranges)
        except Exception as exc:  # black refuses its input: report, keep the unformatted text
            raise CodemodError(f"{path}: black could not format the patched file: "
                               f"{type(exc).__name__}: {exc}") from None
        return out, [note]
    exe = shutil.which("ruff")
    if exe is None:
        return after, [f"not formatted: ruff is not installed ({fmt.source} asks for it)"]
    for start, end in ranges:
        try:
            proc = subprocess.run([exe, "format", "--range", f"{start}-{end}", "--stdin-filename",
                                   str(Path(fmt.root) / path), "-"], input=after,
                                  capture_output=True, text=True, cwd=fmt.root, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CodemodError(f"{path}: ruff format failed: {exc}") from None
        if proc.returncode != 0:
            msg = (proc.stderr.strip().splitlines() or ["no output"])[0]
            raise CodemodError(f"{path}: ruff format failed: {msg}")
        after = proc.stdout
    return after, [note]


# ----------------------------------------------------------------------------- per file

def module_name(rel: str) -> tuple[str, str]:
    """(module, package) for a path relative to the root, e.g. ``a/b/c.py`` -> (a.b.c, a.b)."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _first_line(stmt: ast.stmt) -> int:
    decos = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decos])


def _spans(tree: ast.Module, lines_needed: set[int]) -> list[tuple[int, int]]:
    """Line spans (1-based, inclusive) of the top-level statements holding those import lines,
    merged where statements share a line (``a; b``)."""
    spans = []
    for stmt in tree.body:
        lo, hi = _first_line(stmt), stmt.end_lineno
        if any(lo <= n <= hi for n in lines_needed):
            spans.append([lo, hi])
    for stmt in tree.body:   # a statement sharing a line with a span joins it
        lo, hi = _first_line(stmt), stmt.end_lineno
        for s in spans:
            if lo <= s[1] and hi >= s[0]:
                s[0], s[1] = min(s[0], lo), max(s[1], hi)
    spans.sort()
    merged: list[list[int]] = []
    for s in spans:
        if merged and s[0] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], s[1])
        else:
            merged.append(list(s))
    return [(a, b) for a, b in merged]


def _leading_comment_start(lines: list[str], first: int) -> int:
    """The first line (1-based) of the comment block directly above line ``first``."""
    i = first - 1
    while i >= 1 and lines[i - 1].lstrip().startswith("#"):
        i -= 1
    return i + 1


def _functools_line(tree: ast.Module, source_lines: list[str]) -> int | None:
    """Where ``import functools`` goes (1-based line to insert before), or None when present."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Import) and any(a.name == "functools" and a.asname is None
                                                for a in stmt.names):
            return None
    block = []
    started = False
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            block.append(stmt)
            started = True
        elif started:
            break
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            if not (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
                break
    block = [s for s in block if not (isinstance(s, ast.ImportFrom) and s.module == "__future__")]
    if not block:
        first = next((s for s in tree.body if not (
            isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            and not (isinstance(s, ast.ImportFrom) and s.module == "__future__")), None)
        return _first_line(first) if first is not None else len(source_lines) + 1
    stdlib = getattr(sys, "stdlib_module_names", frozenset())

    def modname(s):
        return (s.names[0].name if isinstance(s, ast.Import) else (s.module or "")).lower()

    std = [s for s in block if modname(s).split(".")[0] in stdlib and getattr(s, "level", 0) == 0]
    for s in std:
        if modname(s) > "functools":
            return s.lineno
    if not std:
        return _first_line(block[0])
    return std[-1].end_lineno + 1


def patch_source(source: str, path: str = "transformer_engine/m.py", *, style: str = "wrapper",
                 formatter: Formatter | None = None, mode: str | None = None) -> FilePatch:
    """Patch one module's source. ``path`` (relative, '/'-separated) resolves relative imports.

    Raises CodemodError (one line, prefixed with the path) when it cannot be patched.
    ``mode`` is the old spelling of ``style`` ("inline" = "wrapper", "import").
    """
    if mode is not None:
        style = {"inline": "wrapper"}.get(mode, mode)
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    formatter = formatter or Formatter("none", "")
    _, package = module_name(path)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise CodemodError(f"{path}:{exc.lineno}:{(exc.offset or 0)}: cannot parse: "
                           f"{exc.msg}") from None
    except ValueError as exc:   # e.g. NUL bytes
        raise CodemodError(f"{path}: cannot parse: {exc}") from None
    scan = _scan(tree, package)
    if scan.errors:
        raise CodemodError(f"{path}:{scan.errors[0]}")
    missing = _missing_wraps(tree, scan)
    helper_defs = {s.name: s for s in tree.body
                   if isinstance(s, ast.FunctionDef) and s.name in HELPER_NAMES}
    if not missing and not helper_defs:
        return FilePatch(path=path, before=source, after=source)

    newline = "\r\n" if "\r\n" in source else "\n"
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, list[str]]] = []      # (first line, last line + 1, new lines), 1-based
    done: list[tuple[str, int]] = []

    # 1. the wrap lines: parse (libcst) only the top-level statements that hold those imports
    for lo, hi in _spans(tree, set(missing)):
        segment = "".join(lines[lo - 1:hi])
        try:
            module = cst.parse_module(segment)
        except cst.ParserSyntaxError as exc:
            msg = str(exc).strip().splitlines()[0]
            raise CodemodError(f"{path}:{exc.raw_line + lo - 1}:{exc.raw_column + 1}: cannot parse: "
                               f"{msg}") from None
        patcher = _Patcher(missing, lo - 1, "wrapper" if style == "wrapper" else style)
        new = MetadataWrapper(module, unsafe_skip_copy=True).visit(patcher)
        if patcher.errors:
            raise CodemodError(f"{path}: {patcher.errors[0]}")
        done += patcher.done
        edits.append((lo, hi + 1, new.code.splitlines(keepends=True)))

    # 2. the helpers: restore the ones that differ, add the ones the module needs
    helper = None
    names_used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if style == "import":
        wanted = []
    else:
        wanted = [n for n in STYLE_HELPERS[style] if missing or n in names_used]
    present_wrappers = [n for n in (WRAP_NAME, KWARGS_NAME) if n in names_used or n in helper_defs]
    for n in present_wrappers:          # a wrapper the module already uses needs its helpers
        for dep in (BOUND_NAME, SIZE_NAME, n):
            if dep not in wanted:
                wanted.append(dep)
    restored = False
    for name, node in helper_defs.items():
        if _dump(node) != _CANONICAL[name]:
            lo = _first_line(node)
            text = _HELPERS[name].replace("\n", newline)
            edits.append((lo, node.end_lineno + 1, text.splitlines(keepends=True)))
            restored = True
    to_add = [n for n in (BOUND_NAME, SIZE_NAME, WRAP_NAME, KWARGS_NAME)
              if n in wanted and n not in helper_defs]
    first_use = None
    for idx, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef) and stmt.name in HELPER_NAMES:
            continue
        uses = any(isinstance(n, ast.Name) and n.id in (WRAP_NAME, KWARGS_NAME, IMPORT_NAME)
                   for n in ast.walk(stmt))
        holds = any(_first_line(stmt) <= ln <= stmt.end_lineno for ln in missing)
        if uses or holds:
            first_use = stmt
            break
    if first_use is not None and any(_first_line(d) > first_use.lineno for d in helper_defs.values()):
        raise CodemodError(f"{path}: the window helpers are defined after their first use "
                           f"(line {first_use.lineno})")
    if style == "import" and missing:
        has_import = any(isinstance(s, ast.ImportFrom) and any(a.asname == IMPORT_NAME for a in s.names)
                         for s in tree.body)
        if not has_import:
            at = _import_insertion(tree, first_use)
            edits.append((at, at, [IMPORT_SOURCE.replace("\n", newline)]))
            helper = "imported"
    elif to_add and first_use is not None:
        anchor = first_use
        if helper_defs:   # next to the helpers that are there
            anchor = min(helper_defs.values(), key=_first_line)
        at = _leading_comment_start([ln.rstrip("\r\n") for ln in lines], _first_line(anchor))
        text = "\n\n".join(_HELPERS[n] for n in to_add)
        blank_before = 0
        k = at - 2
        while k >= 0 and not lines[k].strip():
            blank_before += 1
            k -= 1
        head = "\n" * max(0, 2 - blank_before) if k >= 0 else ""
        fl = _functools_line(tree, lines)
        if fl is not None and fl > at:     # the wrap lines call functools.wraps: import it first
            fl = at
        if fl == at:        # nothing above the helpers: the import goes first, in the block
            lead = "\n" if k >= 0 and blank_before == 0 else ""
            head, fl = lead + "import functools\n\n\n", None
        block = head + text + "\n\n"
        edits.append((at, at, block.replace("\n", newline).splitlines(keepends=True)))
        helper = "added"
        if fl is not None:
            edits.append((fl, fl, [f"import functools{newline}"]))
    if restored and helper is None:
        helper = "restored"

    # apply, last first (insertions at the same line keep their order: functools before helpers)
    new_lines = list(lines)
    for lo, hi, repl in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        new_lines[lo - 1:hi - 1] = repl
    after = "".join(new_lines)
    notes: list[str] = []
    if after != source:
        ends = frozenset(node.end_lineno for node, _ in scan.imports if node.lineno in missing)
        after, notes = format_changed(source, after, formatter, path, ends)
        try:
            compile(after, path, "exec", dont_inherit=True)
        except SyntaxError as exc:  # pragma: no cover - a bug in this codemod
            raise CodemodError(f"{path}: the patched file does not compile ({exc.msg}, line "
                               f"{exc.lineno}); nothing written") from None
    result = FilePatch(path=path, before=source, after=after, helper=helper, notes=notes)
    result.wrapped = [f"{name} (line {line})" for name, line in sorted(done, key=lambda d: (d[1], d[0]))]
    return result


def _import_insertion(tree: ast.Module, first_use: ast.stmt | None) -> int:
    """Right after the last top-level import above the first use (keeps imports together)."""
    last = None
    for stmt in tree.body:
        if first_use is not None and stmt is first_use:
            break
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last = stmt
    if last is not None:
        return last.end_lineno + 1
    return _first_line(first_use) if first_use is not None else 1


# ----------------------------------------------------------------------------- trees

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


_MARKERS = (b"_fa4_window_",)


def iter_candidates(root: Path):
    """Files of the package that can bind FA4 (they spell ``flash_attn`` and ``cute``), or
    that hold the helpers (re-checked against the canonical code)."""
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
                if (b"flash_attn" in data and b"cute" in data) or any(m in data for m in _MARKERS):
                    yield path, data


def _cache_dir() -> Path:
    base = os.environ.get("FA4_AUDIT_CACHE")
    if base:
        return Path(base) / "codemod"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "fa4-audit" / "codemod"


def _own_digest() -> str:
    h = hashlib.sha256()
    here = Path(__file__).resolve()
    for f in (here, here.parent / "install.py"):
        h.update(f.read_bytes())
    return h.hexdigest()


def _cached_patch(rel: str, data: bytes, style: str, fmt: Formatter, use_cache: bool) -> FilePatch:
    text = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CodemodError(f"{rel}: not UTF-8 ({exc.reason})") from None
    key = hashlib.sha256("\0".join([_own_digest(), rel, style, fmt.key()]).encode()
                         + b"\0" + data).hexdigest()[:40]
    f = _cache_dir() / f"{key}.json"
    if use_cache:
        try:
            d = json.loads(f.read_text(encoding="utf-8"))
            return FilePatch(path=rel, before=text, after=d["after"], wrapped=d["wrapped"],
                             helper=d["helper"], notes=d["notes"])
        except (OSError, ValueError, KeyError):
            pass
    patch = patch_source(text, rel, style=style, formatter=fmt)
    if use_cache:
        try:
            f.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=f.parent, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(patch.to_json(), out)
            os.replace(tmp, f)
        except OSError:
            pass
    return patch


def plan(te_dir: str | os.PathLike, *, style: str = "wrapper", mode: str | None = None,
         formatter: Formatter | None = None, use_cache: bool = True) -> list[FilePatch]:
    """Patch (in memory) every candidate file under ``te_dir``; nothing is written.

    The formatter is the tree's own (:func:`detect_formatter`) unless one is given."""
    if mode is not None:
        style = {"inline": "wrapper"}.get(mode, mode)
    root = find_root(te_dir)
    fmt = formatter if formatter is not None else detect_formatter(root)
    out = []
    for path, data in iter_candidates(root):
        rel = path.relative_to(root).as_posix()
        out.append(_cached_patch(rel, data, style, fmt, use_cache))
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
