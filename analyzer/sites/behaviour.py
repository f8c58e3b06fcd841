"""Judge what stands between a call and FA4 by what it DOES, never by its name.

Two questions are asked of tree code, both answered by running it (after an AST allowlist, in
one child process per batch, ``_behaviour_child.py``) against a recording stand-in for FA4:

* **chains** -- a binding ``name = outer(inner(fa4_fn))``: call the composed wrapper in every
  form FA4 takes a window (``window_size`` tuple / list / by position, ``window_size_left`` /
  ``window_size_right`` by keyword, alone or by position), for every ``causal`` and every pair
  of bounds in the grid, and record what FA4 receives;
* **expressions** -- a window written at a call site as ``(None if l < 0 else l, 0)`` or
  ``norm(window_size)``: evaluate it for every value its unknown names can take.

**Why the grid is a proof, not a sample.** Bounds are judged over ``None`` and the integers
``>= -1`` (TE's, FA2's and FA3's convention: ``-1`` is the only sentinel; TE asserts on other
negatives). The grid holds -1, 0, 1, 2, every integer constant in the extracted code and its
neighbours, every constant a bound was compared with at run time (bounds are first passed as an
int subclass that records each comparison), and one value past the largest. Code that only
compares bounds with constants and passes them on (or replaces them by constants) behaves the
same between two neighbouring grid points, and so do FA4's resolvers and the intended band, so
checking the grid checks every integer. When a bound is used in arithmetic or compared with the
other bound, that argument does not hold: the result is *unknown*, never *proved*.

Layers that cannot be run (``no_torch_dynamo()`` needs torch) are assumed to pass windows through
when their own code names no window parameter; that assumption is printed in the witness. A
wrapping callable from outside the tree (no code to read) only when it is one of
``verdicts._PASS_THROUGH``.
"""

from __future__ import annotations

import ast
import functools
import re
import json
import os
import subprocess
import sys
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from analyzer.errors import AuditError
from analyzer.sites import pairs as P
from fa4_patch import names as N

CHILD = Path(__file__).with_name("_behaviour_child.py")
MAX_SOURCE = 200_000
TIMEOUT_S = 60
BASE_GRID = (-1, 0, 1, 2)
WINDOW_NAMES = set(N.WINDOW_KEYS)


def _job_cpu_s() -> float:
    """CPU seconds one chain or expression may take in the sandbox (FA4_AUDIT_SANDBOX_JOB_S)."""
    import os

    try:
        return max(0.1, float(os.environ.get("FA4_AUDIT_SANDBOX_JOB_S", "8")))
    except ValueError:
        return 8.0


class Refused(Exception):
    """Extracted code failed the allowlist: nothing was run."""


# ----------------------------------------------------------------------------- allowlist

_BANNED_NODES = (ast.Global, ast.Nonlocal, ast.AsyncFunctionDef, ast.Await, ast.AsyncFor,
                 ast.AsyncWith, ast.Yield, ast.YieldFrom, ast.Delete)
_DUNDER_OK = {"__wrapped__", "__name__", "__qualname__", "__doc__", "__module__",
              "__signature__", "__class__", "__dict__", "__init__", "__call__", "__future__"}
_BAD_ATTRS = {"gi_frame", "gi_code", "f_globals", "f_locals", "f_builtins", "f_back",
              "tb_frame", "cr_frame", "ag_frame", "format", "format_map", "mro",
              "__subclasses__", "__globals__", "__builtins__", "__code__", "__closure__"}
_ALLOWED_IMPORTS = {"functools", "itertools", "operator", "typing", "math", "warnings",
                    "inspect", "__future__", "collections", "dataclasses", "enum", "abc",
                    "fa4_patch"}   # our own package: run as itself, its behaviour still checked


@functools.lru_cache(maxsize=1024)
def _syntax(source: str) -> tuple:
    """(syntax tree or None, the parse error's message): each extracted source is parsed once
    for every reader below (the sandbox check, the grid's constants, the purity gate...).
    The tree is shared: its readers only read it."""
    try:
        return ast.parse(source), ""
    except SyntaxError as exc:
        return None, exc.msg


def check(source: str) -> None:
    """Raise :class:`Refused` unless ``source`` stays inside what the child may run."""
    if len(source) > MAX_SOURCE:
        raise Refused(f"extracted code is {len(source)} characters (limit {MAX_SOURCE})")
    tree, error = _syntax(source)
    if tree is None:
        raise Refused(f"does not parse: {error}")
    for node in ast.walk(tree):
        if isinstance(node, _BANNED_NODES):
            raise Refused(f"uses {type(node).__name__} (line {getattr(node, 'lineno', '?')})")
        if isinstance(node, ast.Attribute):
            a = node.attr
            if a in _BAD_ATTRS or (a.startswith("__") and a not in _DUNDER_OK):
                raise Refused(f"touches attribute {a} (line {node.lineno})")
        elif isinstance(node, ast.Name):
            n = node.id
            if n.startswith("__") and n not in _DUNDER_OK:
                raise Refused(f"uses name {n} (line {node.lineno})")
            if n in ("eval", "exec", "compile", "open", "globals", "locals", "vars", "breakpoint",
                     "input", "memoryview", "__import__"):
                raise Refused(f"uses {n} (line {node.lineno})")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""])
            for m in mods:
                if node.__class__ is ast.ImportFrom and node.level:
                    raise Refused(f"relative import (line {node.lineno})")
                if m.split(".")[0] not in _ALLOWED_IMPORTS:
                    raise Refused(f"imports {m} (line {node.lineno})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.startswith("__") and node.value not in _DUNDER_OK:
            raise Refused(f"spells {node.value!r} (line {node.lineno})")


def int_constants(source: str) -> set[int]:
    """Every integer literal (with its sign) in ``source``: the static breakpoints."""
    out: set[int] = set()
    tree = _syntax(source)[0]
    if tree is None:
        return out
    # docstrings and other bare string statements are not compared with anything
    bare = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)
            and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if id(node) in bare:
            continue
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
            out.add(-node.operand.value)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            out.add(node.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            # a bound compared as text (``repr(x) == "4096"``): the numbers the text spells
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            out.update(int(d) for d in re.findall(r"-?\d{1,10}", text))
    return out


def names_window(source: str) -> bool:
    """Does this code spell a window parameter anywhere (name, string, keyword)? Code that
    reads the call's arguments without naming them (``{k: f(v) for k, v in kw.items()}``)
    counts too (``_reads_arguments``): only code that forwards them may be assumed to."""
    return any(k in source for k in WINDOW_NAMES) or _reads_arguments(source)


def _reads_arguments(source: str) -> bool:
    """A function in ``source`` that takes ``*args``/``**kwargs`` may hand on other arguments
    than it got: it rebinds them, stores into or deletes from them, calls a method on them
    that changes them, or reads them any way but forwarding them whole (``*args``,
    ``**kwargs``), counting them (``len``) or reading one keyword by a constant
    (``kw.get("x")``, ``kw["x"]``, ``"x" in kw``): ``rest[2]`` may be the window, handed on
    changed. Code that does not parse counts."""
    if "*" not in source:
        return False
    tree = _syntax(source)[0]
    if tree is None:
        return True
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        names = {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        if not names:
            continue
        parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
        for n in ast.walk(fn):
            if not (isinstance(n, ast.Name) and n.id in names):
                continue
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                return True
            p = parents.get(id(n))
            if isinstance(p, ast.Subscript) and p.value is n and \
                    isinstance(p.ctx, (ast.Store, ast.Del)):
                return True
            if isinstance(p, ast.Attribute) and p.value is n and p.attr in (
                    "update", "pop", "popitem", "setdefault", "clear", "__setitem__",
                    "__delitem__", "append", "extend", "insert", "remove"):
                return True
            if isinstance(p, (ast.Starred, ast.keyword)):
                c = parents.get(id(p))
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and \
                        c.func.attr in ("bind", "bind_partial"):
                    # ``sig.bind(*args, **kwargs)``: handed on rearranged (a keyword window
                    # by position, defaults filled in), not as it came
                    return True
                continue                    # forwarded whole
            if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and \
                    p.func.id == "len":
                continue
            if fn.args.kwarg is not None and n.id == fn.args.kwarg.arg:
                if isinstance(p, ast.Subscript) and isinstance(p.slice, ast.Constant):
                    continue
                if isinstance(p, ast.Attribute) and p.attr == "get":
                    continue
                if isinstance(p, ast.Compare) and all(isinstance(op, (ast.In, ast.NotIn))
                                                      for op in p.ops):
                    continue
            return True
    return False


def grid_for(constants: Iterable[int], passed: Iterable[int] = ()) -> list:
    """The bounds a chain is run on: None, the base grid, each constant of its code and its
    neighbours -- over the sentinel convention (integers >= -1) -- and every bound the tree's
    calls pass (``passed``), whatever it is: a call that passes -2 is checked with -2."""
    pts = set(BASE_GRID)
    for c in constants:
        # every size: a wrapper that changes a bound only above 2**31 or 10**11 ("covers any
        # sequence") is checked on both sides of its constant
        pts.update({c - 1, c, c + 1})
    pts = {p for p in pts if p >= -1}
    top = max(pts)
    pts.add(top + 97)
    pts |= {c for c in passed if isinstance(c, int) and not isinstance(c, bool)}
    return [None] + sorted(pts)


# ----------------------------------------------------------------------------- requests

@dataclass(frozen=True)
class Layer:
    """One wrapping step, innermost first. ``template`` is a Python expression over the name
    ``__fa4_inner__`` (the value being wrapped), evaluated in ``module``'s extracted namespace.
    An opaque layer is not run (assumed to pass windows through; see the module docstring)."""

    label: str
    module: str = ""
    template: str = ""
    opaque: str = ""             # why it cannot be run ("" when it is run)
    trusted_fa4_patch: bool = False
    names_window: bool = False   # an opaque layer whose code spells a window parameter
    bind: str = ""               # a forwarder: this module-level name is bound to the inner value


@dataclass
class ExtractedModule:
    name: str
    sources: list[str]
    opaque: list[str] = field(default_factory=list)
    refused: str = ""
    # the module's own name: the code runs with it as ``__name__`` (a test on it, or on a
    # function's ``__module__``, takes the branch it takes in the tree)
    real_name: str = ""


# families of call forms a call may use: every keyword form, every positional form, and the
# keyword forms whose ``window_size`` is a tuple or a list (a call passing a tuple literal
# takes no list form: a wrapper that normalises tuples only is right for it). A form without
# a ``window_size`` container (``window_size_left=``) is in both container families
KEYWORD_TUPLE, KEYWORD_LIST = "keyword (tuple)", "keyword (list)"
# the keyword forms with ``window_size`` also built as another sequence FA4 indexes (a
# namedtuple, a ``range``, a class of the tree): for a call whose window is built by a call
# the flow cannot type. Its forms are named ``window_size=<...>`` (``SEQUENCE_FORM``) and are
# in no other family: a value from outside the tree is typed by FA4's API (a tuple or list)
KEYWORD_ANY = "keyword (any sequence)"
SEQUENCE_FORM = "window_size=<"
FAMILIES = ("keyword", "positional", KEYWORD_TUPLE, KEYWORD_LIST, KEYWORD_ANY)
# every form but the other sequences' (the base a call of ``KEYWORD_ANY`` and positional
# forms is judged on before the other sequences are joined in, as unknown where only they fail)
_PLAIN = "keyword or positional"


def merged_forms(forms) -> frozenset:
    """The families a set of call forms comes to: a narrower keyword family is dropped beside
    the whole keyword family, and both container families make the whole one."""
    out = set(forms)
    if {KEYWORD_TUPLE, KEYWORD_LIST} <= out:
        out.add("keyword")
    if KEYWORD_ANY in out:
        out.discard("keyword")
    if "keyword" in out or KEYWORD_ANY in out:
        out -= {KEYWORD_TUPLE, KEYWORD_LIST}
    return frozenset(out)


def in_family(form: str, family: str | None) -> bool:
    """Is the sandbox's call form named ``form`` one of ``family`` (None: every form)?"""
    if SEQUENCE_FORM in form:
        return family == KEYWORD_ANY
    if family is None or family == _PLAIN:
        return True
    if form.startswith("positional"):
        return family == "positional"
    if family == KEYWORD_ANY:
        return True
    if family == KEYWORD_TUPLE:
        return "window_size=[L, R]" not in form
    if family == KEYWORD_LIST:
        return "window_size=(L, R)" not in form
    return family == "keyword"


@dataclass(frozen=True)
class ChainResult:
    status: str                   # proved | broken | unknown
    witness: str
    counterexample: str = ""
    per_release: tuple = ()       # ((release, status, witness), ...)
    # (L, R, causal) -> ((form, received (L, R, causal) or None, error or ""), ...)
    table: dict = field(default_factory=dict, compare=False, hash=False)
    # a name of ``FAMILIES`` -> the same judgement restricted to that family of call forms
    families: dict = field(default_factory=dict, compare=False, hash=False)
    alters: bool = False          # FA4 received a window other than the one passed, somewhere

    def for_forms(self, forms) -> "ChainResult":
        """The judgement over only the call forms a call uses (all when ``forms`` is empty)."""
        fams = sorted(merged_forms(forms) & set(self.families))
        if not forms or not fams:
            return self
        if KEYWORD_ANY in fams:
            # every keyword form (and the positional ones where the call uses them) as
            # judged, the other sequences joined in by ``_other_sequences``: the family of
            # ``KEYWORD_ANY`` itself holds them, so starting from it would keep a failure on
            # them alone as broken
            rest = [f for f in fams if f != KEYWORD_ANY]
            base = "keyword" if not rest else _PLAIN
            return self._other_sequences(self.families.get(base, self))
        return self.families[fams[0]] if len(fams) == 1 else self

    def _other_sequences(self, res: "ChainResult") -> "ChainResult":
        """``res`` with the judgement of the other sequence forms joined in: a release where
        only they go wrong is *unknown* (the flow cannot tell what the call's window is
        built as), not broken."""
        if not res.per_release:
            return res
        anyseq, kw = self.families[KEYWORD_ANY], self.families.get("keyword", self)
        plain = {r: st for r, st, _ in kw.per_release}
        per, worst = [], "proved"
        seen = {r: (st, w) for r, st, w in anyseq.per_release}
        rank = {"proved": 0, "unknown": 1, "broken": 2}
        for rel, st, w in res.per_release:
            ost, ow = seen.get(rel, (st, w))
            if ost == "broken" and plain.get(rel) != "broken":
                ost, ow = "unknown", (f"not a proof: the window is built by a call the flow "
                                      f"cannot type, and on a sequence that is neither a "
                                      f"tuple nor a list: {ow}")
            if rank[ost] > rank[st]:
                st, w = ost, ow
            per.append((rel, st, w))
            worst = max(worst, st, key=rank.__getitem__)
        if worst == res.status:
            return dataclasses.replace(res, per_release=tuple(per))
        why = next(w for _, st, w in per if st == worst)
        return dataclasses.replace(res, status=worst, witness=why, per_release=tuple(per),
                                   counterexample=why if worst == "broken" else "")


@dataclass(frozen=True)
class ExprResult:
    ok: bool
    values: tuple = ()            # the values the expression takes (plain Python)
    why: str = ""                 # when not ok: what stopped it
    exhaustive: bool = True
    io: tuple = ()                # ((inputs as sorted (name, value) items), value) per run


# modules whose state a wrapper may read at call time: time, randomness, the environment, the
# command line, the stack, threads, warnings filters -- none of which the runs vary
_OUTSIDE_STATE = frozenset({"time", "random", "os", "sys", "threading", "inspect", "warnings",
                            "contextvars", "datetime", "uuid", "secrets", "gc", "signal",
                            "importlib", "builtins", "numpy", "torch"})


# methods that only read the object they are called on
_READ_ONLY_METHODS = frozenset({
    "get", "keys", "values", "items", "copy", "count", "index", "startswith", "endswith",
    "lower", "upper", "strip", "lstrip", "rstrip", "split", "join", "format", "replace",
    "__getitem__", "__contains__", "__len__", "__eq__", "__ne__", "__lt__", "__le__",
    "__gt__", "__ge__", "bit_length", "is_integer", "isdigit", "isinstance"})


# what can read an int without comparing it (a C-level function, a slice, a format): the
# recorded comparisons do not show its thresholds
_INT_READERS = frozenset({"range", "slice", "divmod", "pow", "round", "format", "chr", "hex",
                          "oct", "bin", "sum", "bytes", "bytearray", "memoryview", "len",
                          "sorted", "reversed", "enumerate", "zip", "map", "filter", "iter",
                          "str", "repr", "int", "float", "complex", "hash", "min", "max",
                          "abs", "list", "tuple", "set", "frozenset", "dict", "any", "all"})


# code that tests ``causal`` itself (not only hands it on): ``causal is None``,
# ``isinstance(causal, bool)``, ``if causal``, ``causal == 1``
# -- also read off a mapping: ``kwargs.get("causal") is None``, ``kw["causal"] == 1``,
# ``isinstance(kwargs.get("causal"), bool)``, ``if kwargs.get("causal")``
_CAUSAL_READ = r"(?:causal\b|[\w.]+\s*(?:\.\s*(?:get|pop)\s*\(|\[)\s*[\"']causal[\"'][^)\]]*[)\]])"
_TESTS_CAUSAL = re.compile(r"(?:\bcausal|[\"']causal[\"'][^)\]\n]*[)\]])\s*"
                           r"(?:is\b|==|!=|\bin\b|\band\b|\bor\b|:)|"
                           r"isinstance\(\s*" + _CAUSAL_READ + "|"
                           r"\b(?:if|not|elif|while|and|or)\s+" + _CAUSAL_READ)


@functools.lru_cache(maxsize=1024)
def instance_reads(src: str) -> frozenset:
    """(class, attribute) for each attribute a method of a class in ``src`` reads off its
    first parameter (``self.normalize``), other than the class's own functions."""
    if "self" not in src and "class" not in src:
        return frozenset()
    tree = _syntax(src)[0]
    if tree is None:
        return frozenset()
    out = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        own = {st.name for st in cls.body
               if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                    not fn.args.args or any(isinstance(d, ast.Name) and d.id == "staticmethod"
                                            for d in fn.decorator_list):
                continue
            me = fn.args.args[0].arg
            for n in ast.walk(fn):
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and \
                        isinstance(n.value, ast.Name) and n.value.id == me and \
                        n.attr not in own and not n.attr.startswith("__"):
                    out.add((cls.name, n.attr))
    return frozenset(out)


@functools.lru_cache(maxsize=1024)
def _caught_names(src: str) -> frozenset:
    """The exception classes a layer's handlers name (``except ImportError``, ``except
    (KeyError, StopIteration)``, ``except torch.cuda.OutOfMemoryError``: its last name): FA4
    failing is also injected as each of them."""
    if "except" not in src:
        return frozenset()
    tree = _syntax(src)[0]
    if tree is None:
        return frozenset()
    out = set()
    for h in ast.walk(tree):
        if isinstance(h, ast.ExceptHandler) and h.type is not None:
            for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]):
                if isinstance(t, ast.Name):
                    out.add(t.id)
                elif isinstance(t, ast.Attribute):
                    out.add(t.attr)
    return frozenset(out)


@functools.lru_cache(maxsize=1024)
def _keywords_named(src: str) -> frozenset:
    """Keywords a layer's code names, other than FA4's window keys and ``causal``: its
    functions' parameters and the identifier-like strings it holds (``kw.get("deterministic")``).
    A call's ``**`` splat may carry any of them (``_behaviour_child._shaped``)."""
    tree = _syntax(src)[0]
    if tree is None:
        return frozenset()
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            out.add(n.value)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return frozenset(out - set(N.WINDOW_KEYS) - {"causal", "self", "cls"})


@functools.lru_cache(maxsize=1024)
def _strings_held(src: str) -> frozenset:
    """The string constants a layer's code holds (short ones): a handler may look for any of
    them in FA4's message (``"pack_gqa" in str(exc)``), so the failure runs add them to it."""
    tree = _syntax(src)[0]
    if tree is None:
        return frozenset()
    return frozenset(n.value for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str)
                     and 0 < len(n.value) <= 80)


# a regular expression matched against text (FA4's message, maybe): not a membership test
_MATCHES_TEXT = re.compile(r"\bre\.(?:match|search|fullmatch|findall|finditer|sub|subn|split|"
                           r"compile)\b|\bfnmatch\b")


# what reads a dict's keys in their order: iteration, conversion to a sequence, the key views
_ORDER_READERS = frozenset({"list", "tuple", "iter", "next", "enumerate", "reversed", "zip",
                            "map", "filter", "str", "repr", "format", "print"})


@functools.lru_cache(maxsize=1024)
def _may_read_keyword_order(src: str) -> bool:
    """Whether a layer taking ``**kwargs`` may read the order its keyword arguments came in
    (``list(kw)[:1] == ["window_size"]``, a loop that stops at the first key): a caller may
    pass them in any order, so its runs also pass FA4's forms in every order. A cheap
    over-approximation: such a function iterates something, converts something to a
    sequence or text, or reads a dict's views."""
    tree = _syntax(src)[0]
    if tree is None:
        return True
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or \
                fn.args.kwarg is None:
            continue
        for n in ast.walk(fn):
            if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension, ast.Starred,
                              ast.JoinedStr)) or \
                    isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
                return True
            if isinstance(n, ast.Call):
                f = n.func
                if isinstance(f, ast.Name) and f.id in _ORDER_READERS or \
                        isinstance(f, ast.Attribute) and \
                        f.attr in ("keys", "items", "values", "popitem", "format", "join"):
                    return True
    return False


@functools.lru_cache(maxsize=1024)
def _reads_ints_uncompared(src: str) -> bool:
    """Whether a layer's code may hand a bound to something that reads it without comparing
    it: a subscript or slice by a computed index, a call of a builtin of ``_INT_READERS`` or of
    an imported module's function, ``%`` formatting or an f-string. Its runs then also cover
    each side over every power of two and of ten (``_behaviour_child._scan_pairs``)."""
    tree = _syntax(src)[0]
    if tree is None:
        return True
    modules = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
               if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and not isinstance(n.slice, ast.Constant):
            return True
        if isinstance(n, (ast.JoinedStr, ast.FormattedValue)) or \
                isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
            return True
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and (f.id in _INT_READERS or f.id in modules):
                return True
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.value.id in modules:
                return True
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and \
                n.value.id in ("int", "bool", "object", "type", "operator"):
            # ``int.bit_length(r)``: the class's method reads the int past its tracking
            return True
    return False


def _impure(sources: list[str]) -> str:
    """Why a wrapper's behaviour may differ from call to call, or from what its runs show --
    "" when none: state kept between calls (``global``/``nonlocal``, an attribute set, an
    object it does not own changed: a counter, a cache, a flag), state read from outside its
    arguments (``_OUTSIDE_STATE``), a dispatch on exact types (``type(x)``), or an ``assert``
    whose test does the work (``python -O`` drops it)."""
    for src in sources:
        tree = _syntax(src)[0]
        if tree is None:
            return "its code does not parse"
        # names the code binds by import (modules and what they hand out: their methods are
        # functions of the module, not state of an object)
        modules = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                   if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        # names ``import`` binds to a module (``operator.add`` is a function, not a set's)
        plain_modules = {a.asname or a.name.split(".")[0] for n in ast.walk(tree)
                         if isinstance(n, ast.Import) for a in n.names}
        # what each imported name is (``op`` -> operator, ``iadd`` -> operator.iadd)
        origin = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    origin[a.asname or a.name.split(".")[0]] = a.name if a.asname else \
                        a.name.split(".")[0]
            elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
                for a in n.names:
                    origin[a.asname or a.name] = f"{n.module}.{a.name}"
        for n in ast.walk(tree):
            if isinstance(n, ast.ClassDef) and any(
                    isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and
                    st.name in ("__get__", "__set_name__") for st in n.body):
                # an instance read as an attribute of a class hands back what ``__get__``
                # returns, not the object the runs called
                return f"class {n.name} is a descriptor (__get__)"
        # module-level names bound to a class or to an object a call made (not a function,
        # not a constant): their attributes are state other code can set
        kept = set()
        for st in tree.body:
            if isinstance(st, ast.ClassDef):
                kept.add(st.name)
            elif isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
                kept |= {t.id for t in st.targets if isinstance(t, ast.Name)}
        kept -= modules
        classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        for n in ast.walk(tree):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]
                hit = [m for m in mods if m.split(".")[0] in _OUTSIDE_STATE]
                if hit:
                    return (f"it reads {hit[0]} (state outside its arguments, not varied by "
                            "the runs)")
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            a = fn.args
            params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
            if a.vararg:
                params.add(a.vararg.arg)
            kwarg = a.kwarg.arg if a.kwarg else None
            body = fn.body if isinstance(fn.body, list) else [fn.body]
            inner = [n for st in body for n in _walk_scope(st)]
            assigned = {n.id for n in inner
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | \
                {n.name for n in inner if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                          ast.ClassDef))}
            # its own names: locals, and the arguments of this call (a dict or list a caller
            # hands in is changed for that call; what persists is state kept elsewhere)
            # a parameter whose default is a mutable object made once (``_seen=[]``) is state
            # kept between calls, not the call's own
            pos_params = a.posonlyargs + a.args
            shared = {p.arg for p, d in zip(pos_params[len(pos_params) - len(a.defaults):],
                                            a.defaults) if not isinstance(d, ast.Constant)} | \
                {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults)
                 if d is not None and not isinstance(d, ast.Constant)}
            # a local is the call's own object only where every binding of it makes a new
            # one (a display, a comprehension, a copy, a def): ``s = state`` or ``me = self``
            # is another name for an object kept between calls
            fresh = _fresh_locals(inner, classes)
            own = (fresh | params | ({kwarg} if kwarg else set())) - shared
            for n in inner:
                if isinstance(n, (ast.Global, ast.Nonlocal)):
                    kind = "global" if isinstance(n, ast.Global) else "nonlocal"
                    return (f"{getattr(fn, 'name', 'a lambda')} rebinds "
                            f"{', '.join(n.names)} ({kind})")
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) \
                        and not (isinstance(n.value, ast.Name) and n.value.id in fresh) \
                        and not (getattr(fn, "name", "") in ("__init__", "__new__",
                                                             "__post_init__")
                                 and isinstance(n.value, ast.Name)
                                 and a.args and n.value.id == a.args[0].arg):
                    # (what it sets up on an object it made, or a constructor on its new
                    # object, is construction, not a change between calls)
                    return f"it keeps state on an object ({ast.unparse(n)} = ...)"
                if isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    base = n.value
                    if not (isinstance(base, ast.Name) and base.id in own):
                        return f"it changes an object it does not own ({ast.unparse(n)} = ...)"
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                        isinstance(n.func.value, ast.Name) and n.func.value.id not in own and \
                        n.func.value.id not in plain_modules and \
                        n.func.attr in ("append", "extend", "insert", "update", "setdefault",
                                        "pop", "popitem", "clear", "remove", "add",
                                        "discard", "__setitem__", "cache_clear"):
                    return (f"it changes an object it does not own "
                            f"({ast.unparse(n.func)}(...))")
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                        isinstance(n.func.value, ast.Name) and n.func.value.id not in own and \
                        n.func.value.id not in modules and \
                        n.func.attr not in _READ_ONLY_METHODS:
                    # a method of an object kept between calls (``_q.appendleft(1)``,
                    # ``_once.cache_info()``): it may change it, or read what earlier calls did
                    return (f"it calls a method of an object it does not own "
                            f"({ast.unparse(n.func)}(...))")
                if isinstance(n, ast.Call) and _changes_its_argument(n.func, origin) and \
                        any(isinstance(x, ast.Name) and x.id not in own for x in n.args[:1]):
                    # a function of a module that changes its first argument in place
                    # (``operator.iadd(_seen, [1])``, ``heapq.heappush(_q, x)``)
                    return (f"it changes an object it does not own "
                            f"({ast.unparse(n.func)}({ast.unparse(n.args[0])}, ...))")
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                        n.func.id in ("next", "setattr", "delattr") and n.args and not (
                            isinstance(n.args[0], ast.Name) and n.args[0].id in own):
                    return (f"it changes an object it does not own "
                            f"({n.func.id}({ast.unparse(n.args[0])}, ...))")
                if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                    it = n.iter
                    if isinstance(it, ast.Name) and it.id in kept or \
                            isinstance(it, ast.Attribute) and not (
                                isinstance(it.value, ast.Name) and
                                (it.value.id in assigned or it.value.id in modules)):
                        # iterating an iterator made once (``for n in _calls: break`` over an
                        # ``itertools.count()``) advances it: state between calls
                        return (f"it iterates an object kept between calls "
                                f"({ast.unparse(it)})")
                why = _dispatch(n)
                if why:
                    return why
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and \
                        isinstance(n.value, ast.Name) and n.value.id in kept and \
                        not (n.attr.startswith("__") and n.attr.endswith("__")):
                    # an attribute of an object made once at module level (``Config.on``):
                    # code elsewhere may set it between calls
                    return (f"it reads state kept on an object ({ast.unparse(n)}), which "
                            "other code may change")
                if isinstance(n, ast.Assert) and any(isinstance(x, (ast.Call, ast.NamedExpr))
                                                     for x in ast.walk(n.test)):
                    return "an assert does work (python -O drops it)"
        why = _tells_sandbox_apart(tree)
        if why:
            return why
    return ""


# calls that make a new object (a copy or an empty container), never one kept elsewhere
_MAKERS = frozenset({"dict", "list", "set", "tuple", "frozenset", "bytearray", "object",
                     "copy.copy", "copy.deepcopy", "copy", "deepcopy", "SimpleNamespace",
                     "types.SimpleNamespace", "OrderedDict", "collections.OrderedDict",
                     "defaultdict", "collections.defaultdict", "deque", "collections.deque",
                     "Counter", "collections.Counter"})


def _fresh_locals(inner: list, classes: set) -> set:
    """The locals of a function body (``inner``: its nodes, nested scopes aside) whose every
    binding makes a new object: a display or a comprehension, a constant, a call of a
    container maker or a copy (``_MAKERS``) or of a class of the module, a ``def``/``class``.
    A name bound any other way (``s = state``, ``me = self``, a loop or ``with`` target, an
    unpacking) may be another name for an object kept between calls."""
    new_value = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
                 ast.GeneratorExp, ast.Constant, ast.JoinedStr, ast.Tuple)
    bad: set = set()
    good: set = set()
    for n in inner:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            good.add(n.name)
            continue
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            v = n.value
            ok = v is not None and (isinstance(v, new_value) or (
                isinstance(v, ast.Call) and (ast.unparse(v.func) in _MAKERS
                                              or ast.unparse(v.func) in classes)))
            for t in targets:
                if isinstance(t, ast.Name):
                    (good if ok else bad).add(t.id)
    return good - bad


def _dispatch(n: ast.AST) -> str:
    """Why ``n`` makes a run's result depend on which objects it was handed, "" if it does
    not: an identity test between two values, a class read (``type(x)``, ``.__class__``)."""
    if isinstance(n, ast.Compare) and \
            any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops) and \
            sum(not isinstance(x, ast.Constant) for x in [n.left] + n.comparators) >= 2:
        # ``q is k``, ``window_size is TE_CAUSAL``, ``fn is flash_attn_varlen_func``: the runs
        # hand it fresh stand-ins and fresh pairs, so such a test never holds there, where it
        # may in the tree
        return (f"it compares two values by identity ({ast.unparse(n)}): the runs' stand-ins "
                "and pairs are never the tree's objects")
    if isinstance(n, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops) \
            and any(isinstance(c, (ast.Tuple, ast.List, ast.Set)) and
                    any(not isinstance(e, ast.Constant) for e in c.elts)
                    for c in n.comparators):
        # ``k in (q,)``: a membership test compares by identity first
        return (f"it tests membership among values ({ast.unparse(n)}), which compares by "
                "identity first: the runs' stand-ins and pairs are never the tree's objects")
    if isinstance(n, ast.Call) and (
            isinstance(n.func, ast.Name) and n.func.id in ("id", "is_", "is_not") or
            isinstance(n.func, ast.Attribute) and n.func.attr in ("is_", "is_not")):
        return (f"it compares values by identity ({ast.unparse(n.func)}(...)): the runs' "
                "stand-ins and pairs are never the tree's objects")
    if isinstance(n, ast.Attribute) and n.attr == "__class__":
        return "it dispatches on the class of a value (.__class__)"
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "type" and \
            len(n.args) == 1:
        return "it dispatches on exact types (type(...))"
    return ""


# builtins the sandbox replaces with its own functions (``_behaviour_child._builtins``): code
# that looks at one instead of calling it can tell the runs from the tree's program
_SANDBOX_OWN = frozenset({"getattr", "setattr", "hasattr", "print", "__import__",
                          "__builtins__"})


def _tells_sandbox_apart(tree: ast.Module) -> str:
    """Why code run at import (module level, class bodies, defaults, decorators) or anywhere
    looking at the sandbox's own builtins may behave otherwise in the runs than in the tree
    (``_NATIVE = type(getattr) is type(len)``), "" if nothing does."""
    nodes = list(ast.walk(tree))
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    called = {id(n.func) for n in calls}
    catches = any(isinstance(n, (ast.Try, ast.TryStar)) for n in nodes)
    for n in calls:
        f = n.func.id if isinstance(n.func, ast.Name) else None
        if f in _SANDBOX_OWN and catches:
            # the sandbox's own getattr/hasattr/print raise other messages and take other
            # keywords than the builtins: a handler may tell them apart
            return (f"it calls {f} where its code catches exceptions: the runs' {f} is the "
                    "sandbox's own, whose errors are not the builtin's")
        if f == "print" and any(k.arg in ("file", "flush") or k.arg is None
                                for k in n.keywords):
            return ("it prints to a stream (print(file=..., flush=...)): the runs' print "
                    "writes nowhere the stream sees")
        if f in ("hasattr", "getattr", "vars") and n.args and (
                f == "vars" or (len(n.args) > 1 and not (isinstance(n.args[1], ast.Constant)
                                and isinstance(n.args[1].value, str)
                                and not n.args[1].value.startswith("__")))):
            # ``hasattr(q, "__dict__")``, ``vars(q)``, a name computed: the runs' tensors
            # and bounds are stand-ins with attributes of their own
            return (f"it calls {f}({ast.unparse(n.args[0])}, ...) on a special or computed "
                    "attribute: the runs' arguments are stand-ins")
    for n in nodes:
        if isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.ctx, ast.Load):
            return (f"it reads {ast.unparse(n)}: the runs' arguments are stand-ins with "
                    "attributes of their own")
    for n in nodes:
        if isinstance(n, ast.Name) and n.id in _SANDBOX_OWN and id(n) not in called:
            return (f"it reads the builtin {n.id} as a value, not calling it: the runs' "
                    f"{n.id} is the sandbox's own, the tree's the real one")
    for n in _import_time_nodes(tree):
        why = _dispatch(n)
        if why:
            return why + " (at import)"
    return ""


def _import_time_nodes(tree: ast.Module, lambdas: bool = False):
    """Every node of ``tree`` outside function and lambda bodies: what runs at import
    (module level, class bodies, a def's decorators, defaults and annotations). With
    ``lambdas``, the bodies of lambdas found there too (a decorator or a default may call one
    at import)."""
    todo = list(tree.body)
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(n.decorator_list)
            todo.append(n.args)
            if n.returns is not None:
                todo.append(n.returns)
        elif isinstance(n, ast.Lambda):
            todo.append(n.args)
            if lambdas:
                todo.append(n.body)
        else:
            todo.extend(ast.iter_child_nodes(n))


# functions of the standard library that change their first argument in place
_ARGUMENT_CHANGERS = frozenset(
    {f"operator.{m}" for m in ("iadd", "iand", "iconcat", "ifloordiv", "ilshift", "imod",
                               "imul", "imatmul", "ior", "ipow", "irshift", "isub",
                               "itruediv", "ixor", "setitem", "delitem", "__iadd__",
                               "__setitem__", "__delitem__", "__iconcat__", "__ior__")}
    | {f"heapq.{m}" for m in ("heappush", "heappop", "heapify", "heapreplace", "heappushpop")}
    | {f"bisect.{m}" for m in ("insort", "insort_left", "insort_right")}
    | {"random.shuffle", "collections.OrderedDict.move_to_end"})


def _changes_its_argument(func, origin: dict) -> bool:
    """Is ``func`` (a call's callee) one of ``_ARGUMENT_CHANGERS``, through the names the
    code imports (``import operator as op; op.iadd``, ``from operator import setitem``)?"""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in origin:
        return False
    dotted = ".".join([origin[func.id]] + parts[::-1])
    return dotted in _ARGUMENT_CHANGERS


def _walk_scope(node):
    """``ast.walk`` that does not enter nested functions, lambdas or classes (their bodies are
    their own scopes), though it yields the nested node itself."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        yield node
        return
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                yield c
                continue
            todo.append(c)


def _function_catches(src: str) -> bool:
    """A function in ``src`` has a ``try`` or a ``with`` (whose ``__exit__`` may swallow an
    exception); code that does not parse counts as catching."""
    if "except" not in src and "finally" not in src and "with" not in src:
        return False
    tree = _syntax(src)[0]
    if tree is None:
        return True
    return any(isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(n, (ast.Try, getattr(ast, "TryStar", ast.Try), ast.With, ast.AsyncWith))
        for n in ast.walk(fn)) for fn in ast.walk(tree))


# One child per batch (no state carries from one batch to the next); the next one is started
# ahead of time so its interpreter boots while the caller works (``prewarm``). ``release``
# stops a spare nobody used.
_SPARE: list = []


def _job_weight(job: dict) -> int:
    """Roughly how many runs a chain job makes: grid points squared, times its shapes."""
    return len(job.get("grid", ())) ** 2 * (1 + len(job.get("shapes", ())))


def _spawn() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-I", "-S", str(CHILD)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def prewarm() -> None:
    """Start the next sandbox child now, if none is waiting."""
    if not _SPARE:
        _SPARE.append(_spawn())


def release() -> None:
    """Stop the waiting child (it has been sent nothing)."""
    while _SPARE:
        proc = _SPARE.pop()
        proc.kill()
        proc.communicate()


class Runner:
    """Collects jobs, runs them in one child process, answers them."""

    def __init__(self, resolvers: Sequence["P.Resolver"]):
        self.resolvers = list(resolvers)
        self.extra_consts: set[int] = set()   # bounds the tree's calls pass: always in the grid
        self.modules: dict[str, ExtractedModule] = {}
        self._chain_cache: dict = {}
        self._expr_cache: dict = {}
        self._catch_memo: dict[str, bool] = {}

    # -- the child -----------------------------------------------------------------------
    def _run(self, jobs: list[dict]) -> list[dict]:
        mods = []
        need = set()
        for j in jobs:
            for layer in j.get("layers", []):
                if layer.get("module"):
                    need.add(layer["module"])
            if j.get("module"):
                need.add(j["module"])
        for name in sorted(need):
            m = self.modules[name]
            if m.refused:
                continue
            mods.append({"name": m.name, "sources": m.sources, "opaque": m.opaque,
                         "real_name": m.real_name or m.name})
        here = str(Path(__file__).resolve().parents[2])
        # two or more chains: split over two children that run side by side (the caller only
        # waits meanwhile); each half is answered in its own order, then put back in place
        halves = [list(range(len(jobs)))]
        if len(jobs) >= 2 and (os.cpu_count() or 1) >= 2 and \
                all(j.get("kind") == "chain" for j in jobs):
            order = sorted(range(len(jobs)), key=lambda i: -_job_weight(jobs[i]))
            halves = [order[0::2], order[1::2]]
        procs = []
        for half in halves:
            req = {"modules": mods, "jobs": [jobs[i] for i in half], "trusted_path": [here],
                   "cpu_s": 60, "mem_mb": 1536, "job_cpu_s": _job_cpu_s()}
            procs.append((_SPARE.pop() if _SPARE else _spawn(), json.dumps(req)))
        prewarm()                     # the next batch's child starts while this one works
        answers: list = [None] * len(procs)

        def talk(k):
            proc, body = procs[k]
            try:
                answers[k] = proc.communicate(f"FA4-REQ {len(body)}\n{body}", timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                answers[k] = None

        if len(procs) == 1:
            talk(0)
        else:
            import threading

            threads = [threading.Thread(target=talk, args=(k,)) for k in range(len(procs))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        out: list = [None] * len(jobs)
        for k, half in enumerate(halves):
            proc = procs[k][0]
            if answers[k] is None:
                for i in half:
                    out[i] = {"error": f"unknown: the sandbox ran past {TIMEOUT_S} s",
                              "results": [], "seen": [], "flags": []}
                continue
            got, err = answers[k]
            if proc.returncode != 0:
                tail = (err or "").strip().splitlines()[-1:] or ["no output"]
                raise AuditError(f"the behaviour sandbox failed (exit {proc.returncode}): "
                                 f"{tail[0]}")
            for i, ans in zip(half, json.loads(got)["jobs"]):
                out[i] = ans
        return out

    def _recovers(self, layers) -> bool:
        """Some function of a layer's code can catch an exception (a ``try`` in a function
        body; module-level ``try`` only runs at import): the chain is also run with FA4 failing
        once. Code that does not parse here counts as catching."""
        return any(self._catches(l.module) for l in layers
                   if l.module and l.module in self.modules)

    def _catches(self, module: str) -> bool:
        hit = self._catch_memo.get(module)
        if hit is None:
            hit = self._catch_memo[module] = any(
                _function_catches(src) for src in self.modules[module].sources)
        return hit

    # -- chains --------------------------------------------------------------------------
    def verify_chains(self, items: list[tuple[tuple[Layer, ...], str, tuple, int]]
                      ) -> list[ChainResult]:
        """``items``: (layers innermost first, entry, FA4 parameter names, required count,
        and optionally the shapes of the tree's calls through the chain: (positional count,
        ((keyword, constant or ``verdicts.VALUE``), ...)), each run beside FA4's own forms,
        and whether to run ``window_size`` also as other sequences: ``KEYWORD_ANY``)."""
        out: list[ChainResult | None] = [None] * len(items)
        todo = []
        runs_more: dict = {}    # chain key -> the extra runs its code calls for
        for i, item in enumerate(items):
            layers, entry, params, required = item[:4]
            shapes = tuple(item[4]) if len(item) > 4 else ()
            key = (layers, entry, params, required, shapes,
                   bool(item[5]) if len(item) > 5 else False)
            if key in self._chain_cache:
                out[i] = self._chain_cache[key]
                continue
            pre = self._chain_precheck(layers)
            if pre is not None:
                out[i] = self._chain_cache[key] = pre
                continue
            consts = set(self.extra_consts)
            srcs = [s for layer in layers if layer.module
                    for s in self.modules[layer.module].sources]
            for s in srcs:
                consts |= int_constants(s)
            # read once per chain, not once per round of runs
            runs_more[key] = {"scan": any(_reads_ints_uncompared(s) for s in srcs),
                              "causal_values": any(_TESTS_CAUSAL.search(s) for s in srcs),
                              "orders": any(_may_read_keyword_order(s) for s in srcs),
                              "caught": sorted(set().union(*map(_caught_names, srcs))
                                               if srcs else ()),
                              "splat_keys": sorted(set().union(*map(_keywords_named, srcs))
                                                   if srcs else ()),
                              "message_words": sorted(set().union(*map(_strings_held, srcs))
                                                      if srcs else ()),
                              "regex": any(_MATCHES_TEXT.search(s) for s in srcs)}
            todo.append((i, key, consts))
        for round_ in range(3):
            if not todo:
                break
            jobs = [{"kind": "chain", "entry": k[1], "params": list(k[2]), "required": k[3],
                     "grid": grid_for(c, self.extra_consts), "recovers": self._recovers(k[0]),
                     **runs_more[k], "sequences": k[5],
                     "shapes": [[sh[0], [list(kv) for kv in sh[1]], *sh[2:]] for sh in k[4]],
                     "layers": [{"module": l.module, "template": l.template, "label": l.label,
                                 "trusted_fa4_patch": l.trusted_fa4_patch, "bind": l.bind,
                                 "skippable": not l.names_window}
                                for l in k[0] if not l.opaque]} for _, k, c in todo]
            answers = self._run(jobs)
            again = []
            for (i, key, consts), ans in zip(todo, answers):
                seen = set(ans.get("seen", ()))
                if seen - consts and round_ < 2 and not ans.get("error"):
                    again.append((i, key, consts | seen))
                    continue
                full = self._judge_chain(key[0], key[1], ans)
                for fam in FAMILIES + (_PLAIN,):
                    full.families[fam] = self._judge_chain(key[0], key[1], ans, fam)
                out[i] = self._chain_cache[key] = full
            todo = again
        return out  # type: ignore[return-value]

    def _chain_precheck(self, layers: tuple[Layer, ...]) -> ChainResult | None:
        for l in layers:
            if l.module and self.modules[l.module].refused:
                return ChainResult("unknown", f"{l.label}: cannot run its code: "
                                   f"{self.modules[l.module].refused}")
            if l.opaque and l.names_window:
                return ChainResult("unknown", f"{l.label} cannot be run ({l.opaque}) and its "
                                   "code names a window parameter: it may change the window")
            if l.module and not l.trusted_fa4_patch:
                why = _impure(self.modules[l.module].sources)
                if why:
                    return ChainResult("unknown", f"{l.label}: not a proof: {why}; the runs "
                                       "show its first calls only")
        return None   # run it (a chain of pass-through layers only hands FA4 the window as is)

    def _judge_chain(self, layers, entry, ans, family: str | None = None) -> ChainResult:
        labels = " -> ".join(l.label for l in reversed(layers)) or "no wrapper"
        assumed = [l.label for l in layers if l.opaque] + list(ans.get("assumed", []))
        note = (f" (assuming {', '.join(assumed)} pass(es) windows through: its code names "
                f"no window parameter)") if assumed else ""
        if ans.get("error"):
            return ChainResult("unknown", f"{labels}: {ans['error']}")
        flags = ans.get("flags", [])
        results = [r for r in ans.get("results", [])
                   if in_family(r["form"], family)]
        # counterexamples read best with plain ints (what frameworks pass) before None
        results.sort(key=lambda r: (r["L"] is None, r["R"] is None))
        per = []
        worst_status = "proved"
        first_bad = ""
        unknown_why = ""
        for res in self.resolvers:
            bad = None
            for r in results:
                if "error" in r:
                    if r["error"].startswith("unknown:"):
                        unknown_why = unknown_why or f"{r['form']}: {r['error'][9:]}"
                        continue
                    bad = bad or (f"causal={r['causal']} {r['form']} with ({_s(r['L'])}, "
                                  f"{_s(r['R'])}): {r['error']}")
                    continue
                wl, wr, c_recv = r["got"]
                verdict, label = P.judge(res, c_recv, wl, wr, r["causal"], r["L"], r["R"])
                if verdict != "exact":
                    bad = (f"causal={r['causal']} {r['form']} with ({_s(r['L'])}, {_s(r['R'])}): "
                           f"FA4 receives ({_s(wl)}, {_s(wr)}) -> {label} ({verdict})")
                    break
            if bad:
                per.append((res.label, "broken", bad))
                worst_status = "broken"
                first_bad = first_bad or f"{res.label}: {bad}"
            elif unknown_why or flags:
                why = unknown_why or "; ".join(flags)
                per.append((res.label, "unknown", f"not a proof: {why}"))
                if worst_status == "proved":
                    worst_status = "unknown"
            else:
                per.append((res.label, "proved", "every form and bound gives the intended band"))
        n = len([r for r in results if "got" in r or "error" in r])
        if not any("got" in r for r in results):
            # every call was refused before FA4 (or none was made): nothing was checked, and
            # a proof over no call is no proof (a decorated function whose window parameter
            # has its own name takes none of FA4's forms). The same holds for one family
            # (keyword / positional): a call of the tree that uses only that family is judged
            # by its runs, and none is no proof
            which = f"{family} " if family else ""
            return ChainResult("unknown", f"{labels}: not a proof: no checked call of its "
                               f"{which}forms reached FA4 through it (its parameters take none "
                               "of FA4's window forms)",
                               "", tuple((res.label, "unknown", "no call reached FA4")
                                         for res in self.resolvers), {}, alters=False)
        table: dict = {}
        for r in results:
            got = tuple(r["got"]) if "got" in r else None
            table.setdefault((r["L"], r["R"], r["causal"]), []).append(
                (r["form"], got, r.get("error", "")))
        table = {k: tuple(v) for k, v in table.items()}
        alters = any(got is not None and (got[0], got[1]) != (k[0], k[1])
                     for k, rows in table.items() for _, got, _ in rows)
        if worst_status == "broken":
            return ChainResult("broken", f"{labels}: {first_bad}", first_bad, tuple(per), table,
                               alters=alters)
        if worst_status == "unknown":
            why = unknown_why or "; ".join(flags)
            return ChainResult("unknown", f"{labels}: not a proof: {why}", "", tuple(per), table,
                               alters=alters)
        return ChainResult("proved", f"{labels} checked on {n} calls (every form, causal and "
                           f"bound class){note}", "", tuple(per), table, alters=alters)

    # -- expressions ---------------------------------------------------------------------
    def eval_exprs(self, items: list[tuple[str, str, dict]]) -> list[ExprResult]:
        """``items``: (module, expression source, {free name: bound|window|bool})."""
        out: list[ExprResult | None] = [None] * len(items)
        todo = []
        for i, (mod, expr, free) in enumerate(items):
            key = (mod, expr, tuple(sorted((k, str(v)) for k, v in free.items())))
            if key in self._expr_cache:
                out[i] = self._expr_cache[key]
                continue
            m = self.modules.get(mod)
            if m is None or m.refused:
                out[i] = self._expr_cache[key] = ExprResult(
                    False, why=f"cannot run the code it calls: {m.refused if m else 'not extracted'}")
                continue
            try:
                check(expr)
            except Refused as exc:
                out[i] = self._expr_cache[key] = ExprResult(False, why=f"expression refused: {exc}")
                continue
            why = _impure(m.sources + [expr])
            if why:
                # one run per input shows the first call only: code that keeps state between
                # calls (a counter, a cache it does not own) may answer later calls otherwise
                out[i] = self._expr_cache[key] = ExprResult(False, why=f"not a proof: {why}")
                continue
            consts = int_constants(expr)
            for s in m.sources:
                consts |= int_constants(s)
            todo.append((i, key, consts, dict(free)))
        for round_ in range(3):
            if not todo:
                break
            # the tree's own sentinels below -1 (``Judge.tree_window_sentinels``) too
            low = {x for x in self.extra_consts if x < -1}
            jobs = [{"kind": "expr", "module": k[0], "expr": k[1], "free": free,
                     "grid": grid_for(c, low)} for _, k, c, free in todo]
            answers = self._run(jobs)
            again = []
            for (i, key, consts, free), ans in zip(todo, answers):
                seen = set(ans.get("seen", ()))
                if seen - consts and round_ < 2 and not ans.get("error"):
                    again.append((i, key, consts | seen, free))
                    continue
                out[i] = self._expr_cache[key] = self._judge_expr(ans)
            todo = again
        return out  # type: ignore[return-value]

    @staticmethod
    def _judge_expr(ans) -> ExprResult:
        if ans.get("error"):
            return ExprResult(False, why=ans["error"])
        if ans.get("flags"):
            return ExprResult(False, why="not a proof: " + "; ".join(ans["flags"]))
        vals = []
        for r in ans["results"]:
            if "error" in r:
                e = r["error"]
                return ExprResult(False, why=(e[9:] if e.startswith("unknown:") else
                                              f"with {r['inputs']}: {e}"))
            vals.append(_freeze(r["value"]))
        if not vals:
            return ExprResult(False, why="it fails on every value its names can take")
        uniq = []
        for v in vals:
            if v not in uniq:
                uniq.append(v)
        io = tuple(dict.fromkeys(
            (tuple(sorted((k, _freeze(x)) for k, x in r.get("inputs", {}).items())),
             _freeze(r["value"])) for r in ans["results"]))
        return ExprResult(True, tuple(uniq), io=io)


def _freeze(v):
    """JSON lists back to tuples, all the way down (values must be hashable)."""
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def _s(v) -> str:
    return "None" if v is None else str(v)


# ----------------------------------------------------------------------------- extraction

@dataclass
class _Def:
    stmt: ast.stmt
    names: set


def _branch_bound(tree: ast.Module) -> set[str]:
    """Module-level names bound more than once where at least one binding sits inside a
    compound statement (if/try/for/while/with/match at the top level, not a def or class)."""
    from analyzer.sites.astutil import sub_bodies

    count: dict[str, int] = {}
    nested: set[str] = set()
    stack = [(st, False) for st in tree.body]
    while stack:
        st, inside = stack.pop()
        names = set(bound_names(st))
        if isinstance(st, (ast.For, ast.AsyncFor)):
            names |= {n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)}
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            names |= {n.id for it in st.items if it.optional_vars is not None
                      for n in ast.walk(it.optional_vars) if isinstance(n, ast.Name)}
        for n in names:
            count[n] = count.get(n, 0) + 1
            if inside:
                nested.add(n)
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for body in sub_bodies(st):
                stack.extend((x, True) for x in body)
    return {n for n in nested if count[n] > 1}


def bound_names(st: ast.stmt) -> set[str]:
    """The names one statement binds where it stands: a def or class name, every name its
    assignment targets spell (``x[i] = ...`` counts ``x`` and ``i``: an over-approximation),
    imports (a bare annotation ``x: int`` counts too)."""
    out = set()
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        out.add(st.name)
    elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    out.add(n.id)
    elif isinstance(st, (ast.Import, ast.ImportFrom)):
        for a in st.names:
            out.add((a.asname or a.name).split(".")[0])
    return out


def free_names(node: ast.AST) -> set[str]:
    """Names a piece of code loads that it does not bind itself (an over-approximation:
    every loaded name minus names stored anywhere inside, minus parameters)."""
    loads, stores = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        elif isinstance(n, ast.arg):
            stores.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n is not node:
            stores.add(n.name)
        elif isinstance(n, ast.alias):
            stores.add((n.asname or n.name).split(".")[0])
    return loads - stores


def _attribute_touches(info, stmts) -> dict:
    """name -> [(statement, node)]: module-level statements that set, delete or call an
    attribute of a module-level name, or decorate with one (``@win.register``). Read once per
    module (kept on its record)."""
    got = info.__dict__.get("_attr_touches")
    if got is not None:
        return got
    got = {}
    for st in stmts:
        if "." not in info.segment(st) and not getattr(st, "decorator_list", None):
            continue        # (a def's lines start below its decorators)
        decos = {id(d) for d in getattr(st, "decorator_list", ())}
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # what runs when the def runs: its decorators and defaults (the body runs later)
            a = st.args
            stack = [(d, st) for d in st.decorator_list] + \
                [(d, a) for d in a.defaults + a.kw_defaults if d is not None]
        else:
            stack = [(st, None)]
        while stack:
            node, parent = stack.pop()
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                    isinstance(node.ctx, (ast.Store, ast.Del))
                    or (isinstance(parent, ast.Call) and parent.func is node)
                    or id(node) in decos):
                got.setdefault(node.value.id, []).append((st, node))
            for c in ast.iter_child_nodes(node):
                if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue        # what a body does runs later, when it is called
                stack.append((c, node))
    info._attr_touches = got
    return got


def module_statements(tree: ast.Module) -> list[ast.stmt]:
    """Top-level statements, with the bodies of top-level if/try flattened in (a binding made
    on any branch counts)."""
    from analyzer.sites.astutil import flat_statements

    return flat_statements(tree.body)


def extract(index, modname: str, roots: Iterable[str], depth: int = 0,
            done: set | None = None) -> tuple[list[str], list[str], str]:
    """Source of the module-level statements of ``modname`` that define ``roots`` and
    everything they use, following in-tree imports. Returns (sources in order, names left
    opaque, refusal reason or "")."""
    import builtins
    done = set() if done is None else done
    info = index.modules.get(modname)
    if info is None or info.tree is None:
        return [], sorted(roots), ""
    stmts = module_statements(info.tree)
    swapped = _namespace_swapped_of(info)
    if swapped:
        return [], [], f"{info.path}: {swapped}"
    defs: dict[str, list[ast.stmt]] = {}
    for st in stmts:
        names = bound_names(st)
        if isinstance(st, ast.ImportFrom) and any(a.name == "*" for a in st.names):
            names = _star_names(index, info, st)
        for n in names:
            defs.setdefault(n, []).append(st)
    # a name bound again after a module-level statement ran a function of the module: that
    # function read the earlier value, which the sources below (the last binding) lose
    own = {st.name: st for st in stmts if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                           ast.ClassDef))}
    runs = []          # (line, names the own code run there reads)
    for st in stmts if own else ():
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        called = {c.func.id for c in ast.walk(st) if isinstance(c, ast.Call)
                  and isinstance(c.func, ast.Name) and c.func.id in own}
        if called:
            read, todo = set(), list(called)
            while todo:
                f = todo.pop()
                if f in read:
                    continue
                read.add(f)
                names = {x.id for x in ast.walk(own[f]) if isinstance(x, ast.Name)}
                read |= names
                todo.extend(names & set(own))
            runs.append((st.lineno, read))
    for n, sts in list(defs.items()):
        lines = sorted(s_.lineno for s_ in sts)
        if len(lines) > 1 and any(lines[0] <= r < lines[-1] and n in read for r, read in runs):
            defs.pop(n)     # the own code run between its bindings read the earlier value
    # an import that rebinds a name after another statement bound it: the sources below run
    # imports first, so the order would be lost -- such a name is left opaque
    for n, sts in list(defs.items()):
        first = min((s.lineno for s in sts if not isinstance(s, (ast.Import, ast.ImportFrom))),
                    default=None)
        if first is not None and any(isinstance(s, (ast.Import, ast.ImportFrom))
                                     and s.lineno > first for s in sts):
            defs.pop(n)
    # a module-level name a function rebinds (``global n``), or any name when the module writes
    # its namespace by a string (``globals()[k] = ...``), holds more than its module-level
    # statements give: left opaque (touching it is "unknown"), never read off one statement
    for n in _rebound_globals(info):
        defs.pop(n, None)
    # a name bound on a branch (if/else, try/except, a loop or with body, a match case) and
    # bound again elsewhere: which binding holds depends on the branch taken, and the sources
    # below keep the last one only -- left opaque
    for n in _branch_bound(info.tree) & set(defs):
        defs.pop(n)
    # a package's name that is also one of its submodules (``class cfg`` in ``pkg/__init__``
    # beside ``pkg/cfg.py``): importing the submodule anywhere (``from .cfg import W``, even
    # later in the package itself) rebinds the name to the module -- left opaque
    if info.path.endswith("__init__.py"):
        for n in list(defs):
            if f"{modname}.{n}" in index.modules and \
                    any(not isinstance(st, (ast.Import, ast.ImportFrom)) for st in defs[n]):
                defs.pop(n)
    outside = _StoredOutside(index, info)
    want = list(roots)
    chosen: list[ast.stmt] = []
    opaque: set[str] = set()
    pre: list[str] = []
    seen: set[str] = set()
    while want:
        n = want.pop()
        if n in seen:
            continue
        seen.add(n)
        if n not in defs or outside.stores(n):
            if n in defs or not hasattr(builtins, n):
                opaque.add(n)
            continue
        for st in defs[n]:
            if any(st is c for c in chosen):
                continue
            if isinstance(st, ast.ImportFrom) or isinstance(st, ast.Import):
                src, op, refused = _import_stmt(index, info, st, n, depth, done)
                if refused:
                    return [], [], refused
                pre.extend(src)
                opaque |= set(op)
                continue
            chosen.append(st)
            want.extend(free_names(st))
    # a module-level statement that reaches into a chosen object without rebinding it
    # (``@win.register``, ``win.register(int, f)``, ``win.attr = ...``) may change what it
    # does (``functools.singledispatch``): such a statement is not among the sources, so the
    # object would run as if it had not been touched -- refused
    bound = {n for st in chosen for n in bound_names(st)}
    touches = _attribute_touches(info, stmts) if bound else {}
    for n in sorted(bound & set(touches)):
        for st, node in touches[n]:
            if not any(st is c for c in chosen) and n not in bound_names(st):
                return [], [], (f"{ast.unparse(node)} at {info.path}:{st.lineno} changes "
                                f"{n} after it is defined")
    chosen.sort(key=lambda s: (s.lineno, s.col_offset))
    text = info.source
    body = []
    for st in chosen:
        seg = ast.get_source_segment(text, st)
        if seg is None:
            return [], [], f"cannot read the source of line {st.lineno} of {info.path}"
        if isinstance(st, (ast.FunctionDef, ast.ClassDef)) and st.decorator_list:
            decos = [ast.get_source_segment(text, d) for d in st.decorator_list]
            seg = "".join(f"@{d}\n" for d in decos) + seg
        body.append(_dedent(seg, st.col_offset))
    src = "\n\n".join(pre + body) + "\n"
    return [src], sorted(opaque), ""


_SWAP_WORDS = re.compile(r"\bexec\b|\beval\b|\bmodules\b|__class__|\bdel\b")


def _namespace_swapped_of(info) -> str:
    """``_namespace_swapped`` of a module of the tree, read once (extraction asks for each
    set of names it needs), and only where its text spells one of the words it looks for."""
    got = info.__dict__.get("_swapped")
    if got is None:
        got = _namespace_swapped(info.tree) if _SWAP_WORDS.search(info.source) else ""
        info.__dict__["_swapped"] = got
    return got


def _namespace_swapped(tree: ast.Module) -> str:
    """Why what a module's names hold after it ran may not be what its statements bind, read
    in what runs at import (``_import_time_nodes``: module level, class bodies, decorators,
    defaults, annotations, and lambdas there, which a decorator or a default may call): it
    runs ``exec``/``eval`` (``exec("def fix(w): return w")`` redefines a function), stores
    into ``sys.modules`` (``sys.modules[__name__] = _Shim()``), sets a ``__class__`` (a module
    subclass whose property answers), or deletes a name in a module whose ``__getattr__``
    then answers for it. "" when none does."""
    deletes = getattr_ = False
    for n in _import_time_nodes(tree, lambdas=True):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            getattr_ = getattr_ or n.name == "__getattr__"
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                n.func.id in ("exec", "eval"):
            return f"its top level runs {n.func.id}(...) (line {n.lineno}), which may bind any name"
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and \
                isinstance(n.value, ast.Attribute) and n.value.attr == "modules":
            return f"it stores into sys.modules (line {n.lineno}): its names may be another's"
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and \
                n.attr == "__class__":
            return f"it sets a __class__ (line {n.lineno}): a module class may answer its names"
        if isinstance(n, ast.Delete):
            deletes = True
    if deletes and getattr_:
        return "it deletes a name and defines __getattr__, which then answers for it"
    return ""


class _StoredOutside:
    """Names of one module that another file of the tree may rebind by attribute:
    ``mod.NAME = ...`` / ``mod.NAME += ...`` / ``setattr(mod, "NAME", ...)`` in a file whose
    text names the module (its last dotted part) -- an over-approximation read off the text."""

    def __init__(self, index, info):
        self.index, self.info = index, info
        self.short = info.name.rsplit(".", 1)[-1].encode()
        self._memo: dict[str, bool] = {}
        self._naming: list | None = None      # the other files whose text names the module

    def stores(self, name: str) -> bool:
        hit = self._memo.get(name)
        if hit is None:
            hit = self._memo[name] = self._scan(name)
        return hit

    def _scan(self, name: str) -> bool:
        import re

        needle = name.encode()
        store = re.compile(rb"\s*(?:[-+*/|&^%@]|//|<<|>>|\*\*)?=(?!=)")
        # its dict or list changed from there: an item stored or deleted, a method that is not
        # a plain read (``STATE["w"] = ...``, ``del STATE["w"]``, ``STATE.update(...)``)
        item = re.compile(rb"\s*\[[^\]\n]*\]\s*(?:[-+*/|&^%@]|//|<<|>>|\*\*)?=(?!=)"
                          rb"|\s*\.\s*(?:update|setdefault|pop|popitem|clear|append|extend|"
                          rb"insert|remove|sort|reverse|__setitem__|__delitem__)\s*\(")
        dels = re.compile(rb"del\s+(?:\w+\s*\.\s*)?" + re.escape(needle) + rb"\s*\[")
        setattr_pat = re.compile(rb"setattr\s*\([^)]*['\"]" + re.escape(needle) + rb"['\"]")
        if self._naming is None:
            self._naming = [o for o in self.index.modules.values()
                            if o is not self.info and self.short in o.raw]
        for other in self._naming:
            raw = other.raw
            i = raw.find(needle)
            while i != -1:
                j = i + len(needle)
                after_ok = j >= len(raw) or not (raw[j:j + 1].isalnum() or raw[j:j + 1] == b"_")
                k = i - 1
                while k >= 0 and raw[k:k + 1] in b" \t\\\r\n":
                    k -= 1
                if after_ok and k >= 0 and raw[k:k + 1] == b"." and store.match(raw, j):
                    return True                 # ``something.NAME = ...``
                before_ok = k < 0 or not (raw[k:k + 1].isalnum() or raw[k:k + 1] == b"_")
                if after_ok and (before_ok or raw[k:k + 1] == b".") and item.match(raw, j):
                    return True                 # ``NAME[...] = ...``, ``mod.NAME.update(...)``
                i = raw.find(needle, j)
            if b"setattr" in raw and setattr_pat.search(raw):
                return True
            if b"del" in raw and dels.search(raw):
                return True
        return False


def _changed_containers(info) -> set[str]:
    """Names whose dict or list a function of the module may change (an item stored or
    deleted, a method other than a read, the object handed to a callee) whenever it runs, or
    that module-level code hands to a callee: their contents are more than the module-level
    statements that build them (``flow_base.module_container_escapes`` on the flow's side)."""
    from analyzer.sites.astutil import in_function, parent, walk
    from analyzer.sites.flow_base import _DICT_METHODS, _LIST_METHODS, _READ_ONLY_CALLS

    reads = _DICT_METHODS & _LIST_METHODS
    containers = set()       # module-level names bound to a dict or list the module builds
    for st in module_statements(info.tree):
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None and (
                isinstance(st.value, (ast.Dict, ast.List, ast.DictComp, ast.ListComp))
                or (isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)
                    and st.value.func.id in ("dict", "list"))):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            containers |= {t.id for t in targets if isinstance(t, ast.Name)}
    if not containers:
        return set()
    out: set[str] = set()
    for n in walk(info.tree):
        if not isinstance(n, ast.Name) or not isinstance(n.ctx, ast.Load) \
                or n.id not in containers:
            continue
        p = parent(n)
        in_fn = in_function(n)
        if isinstance(p, ast.Subscript) and p.value is n and \
                isinstance(p.ctx, (ast.Store, ast.Del)) and in_fn:
            out.add(n.id)
        elif isinstance(p, ast.Attribute) and p.value is n and in_fn and \
                p.attr not in reads and isinstance(parent(p), ast.Call):
            out.add(n.id)
        elif isinstance(p, ast.Call) and p.func is not n and n in p.args and \
                not (isinstance(p.func, ast.Name) and p.func.id in _READ_ONLY_CALLS):
            out.add(n.id)
        elif isinstance(p, ast.keyword) and p.arg is not None and in_fn:
            out.add(n.id)
    return out


def _rebound_globals(info) -> set[str]:
    """Module-level names of ``info`` something other than a module-level statement may bind:
    ``global`` declarations in functions, and every name when ``globals()``/``vars()`` is
    subscripted, ``.update``d or ``.setdefault``-ed (a write by a string)."""
    cached = info.__dict__.get("_rebound")
    if cached is not None:
        return cached
    out: set[str] = set(_changed_containers(info))
    src = info.source
    if "global" in src or "globals" in src or "vars" in src:
        from analyzer.sites.astutil import parent, walk

        for n in walk(info.tree):
            if isinstance(n, ast.Global):
                out.update(n.names)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                    and n.func.id in ("globals", "vars") and not n.args:
                p = parent(n)
                if p is None or (isinstance(p, ast.Subscript) and isinstance(p.ctx, ast.Store)) \
                        or (isinstance(p, ast.Attribute) and p.attr in
                            ("update", "setdefault", "__setitem__", "pop")):
                    out.add("*")
    if "*" in out:
        out = {n for st in module_statements(info.tree) for n in bound_names(st)}
    info._rebound = out
    return out


def _dedent(seg: str, col: int) -> str:
    if col == 0:
        return seg
    lines = seg.splitlines()
    return "\n".join([lines[0]] + [l[col:] if l[:col].strip() == "" else l for l in lines[1:]])


def _star_names(index, info, st: ast.ImportFrom) -> set[str]:
    """What ``from <module of the tree> import *`` binds: the module's constant ``__all__``,
    else its module-level names without a leading underscore. A module outside the tree binds
    what it binds (trusted like any outside import): nothing is read here."""
    module = index.resolve_from(info, st.module, st.level)
    other = index.modules.get(module)
    if other is None or other.tree is None:
        return set()
    out: set[str] = set()
    for s in module_statements(other.tree):
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                             for t in s.targets) \
                and isinstance(s.value, (ast.List, ast.Tuple)) \
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                        for e in s.value.elts):
            return {e.value for e in s.value.elts}
        out |= {n for n in bound_names(s) if not n.startswith("_")}
    return out


def _tree_has(index, top: str) -> bool:
    """The tree holds a module or package of that top-level name: it is what the import
    finds (the tree's root on ``sys.path``), not the module the sandbox child serves by that
    name (``fa4_patch`` of the tree is not this project's)."""
    tops = index.__dict__.get("_tops")
    if tops is None:
        tops = index._tops = {m.split(".")[0] for m in index.modules}
    # this project's fa4_patch, where the tree may change it (``reach.fa4_patch_tampering``),
    # is not served either: what the tree runs is not what the sandbox would
    return top in tops or (top == "fa4_patch" and bool(getattr(index, "fa4_patch_tampered", "")))


def _import_stmt(index, info, st, name: str, depth: int, done: set):
    """An import that binds ``name``: stdlib modules the child serves are kept as written,
    in-tree modules are followed, anything else leaves ``name`` opaque."""
    if isinstance(st, ast.Import):
        for a in st.names:
            if (a.asname or a.name).split(".")[0] != name:
                continue
            if a.name.split(".")[0] in _ALLOWED_IMPORTS and \
                    not _tree_has(index, a.name.split(".")[0]):
                return [f"import {a.name}" + (f" as {a.asname}" if a.asname else "")], [], ""
            return [], [name], ""
        return [], [name], ""
    module = index.resolve_from(info, st.module, st.level)
    for a in st.names:
        if a.name == "*":
            a = ast.alias(name=name, asname=None)      # ``import *`` binding ``name``
        if (a.asname or a.name) != name:
            continue
        if module.split(".")[0] in _ALLOWED_IMPORTS and not st.level and \
                not _tree_has(index, module.split(".")[0]):
            return [f"from {module} import {a.name}" + (f" as {a.asname}" if a.asname else "")], [], ""
        if module in index.modules and depth < 6:
            key = (module, a.name)
            if key in done:
                return [], [], ""
            done.add(key)
            srcs, op, refused = extract(index, module, [a.name], depth + 1, done)
            if refused:
                return [], [], refused
            if a.asname and a.asname != a.name:
                srcs = srcs + [f"{a.asname} = {a.name}"]
            return srcs, op, ""
        sub = f"{module}.{a.name}"
        if sub in index.modules:
            return [], [name], ""
        return [], [name], ""
    return [], [name], ""
