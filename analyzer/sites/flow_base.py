"""The flow layer's values, scopes and per-module build (``build_module``), shared by the
three parts of the solver: ``flow_env`` (imports and module environments),
``flow_edges`` (call edges and parameter values) and ``flow_values`` (expression values
and name lookups). ``flow`` composes them; see its docstring for the analysis."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from analyzer.sites import bindings as B
from analyzer.sites.bindings import WINDOW_KEYS, Entry
from analyzer.sites.ir import (UNKNOWN, Assign, Attr, AugAssign, Block, Call, ClassDef, ClassIR,
                              DictExpr, Either, ExprStmt, FuncDef, FuncIR, Global, If, Import,
                              ListExpr, Lit, Loop, ModuleIR, Name, Nonlocal, Return, Starred,
                              Subscript, Try, TupleExpr, With, walk as walk_ir)

if TYPE_CHECKING:
    from analyzer.sites.flow import Solver

EMPTY: frozenset = frozenset()

# What the solver answers for a name, an expression, a parameter or a call: every value it may
# have, each with the path facts under which it has it. ``Value`` is one of the value classes
# below (FAFunc, ModRef, FuncRef, ClassRef, ExtRef, Const, DictVal, ListVal, Opaque, Unloaded);
# ``Facts`` a frozenset of (fact key, bool).
Value = object
Facts = frozenset
Vals = frozenset          # frozenset[tuple[Value, Facts]]


# ----------------------------------------------------------------------------- values

@dataclass(frozen=True)
class WrapRef:
    kind: str       # fa4_patch | tree | other
    label: str      # how it is spelled, e.g. "no_torch_dynamo()"
    key: tuple = ()  # (path, qualname) of an in-tree wrapper function
    at: tuple = ()   # (path, line, col) of the wrapping call ``label(fa4_fn)``
    arg: int = 0     # which positional argument of that call is the FA4 value


@dataclass(frozen=True)
class FAFunc:
    entry: Entry
    chain: tuple = ()            # WrapRef, innermost first
    binding: str | None = None   # id of the module-level binding that produced this value
    via: tuple = field(default=(), compare=False, hash=False)


@dataclass(frozen=True)
class ModRef:
    name: str
    tree: bool


@dataclass(frozen=True)
class FuncRef:
    key: tuple      # (path, qualname)


@dataclass(frozen=True)
class ClassRef:
    key: tuple


@dataclass(frozen=True)
class ExtRef:
    qual: str


@dataclass(frozen=True)
class Unloaded:
    """A name from an in-tree module the prefilter skipped (it never spells FA or window
    names, so its globals cannot hold FA entry points or window dicts of their own)."""
    module: str
    name: str


@dataclass(frozen=True)
class Const:
    value: object


@dataclass(frozen=True)
class Opaque:
    reason: str
    param_of: tuple | None = None   # set when the unknown comes from a parameter of this function
    # set to the dotted name when the value is a name of FA4 other than its four entry points
    # (``FlashAttnFunc``, a kernel class, a helper): ``escape`` reads what the tree does with it
    fa4_name: str | None = None


@dataclass(frozen=True)
class Site:
    """Where a window is written: identity of a window site."""
    path: str
    pos: tuple          # (line, col, end_line, end_col, value_line, value_col)
    key: str            # window_size | window_size_left | window_size_right
    style: str
    fn: tuple           # key of the function whose expression holds the value
    expr_id: int        # id() of the value expression (registry in the solver)
    tspan: tuple = field(default=(), compare=False, hash=False)  # span holding the value text


@dataclass(frozen=True)
class WinEntry:
    site: Site
    facts: frozenset
    via: tuple = field(default=(), compare=False, hash=False)


@dataclass(frozen=True)
class DictVal:
    alloc: tuple
    entries: frozenset = EMPTY       # WinEntry
    opaque: frozenset = EMPTY        # reasons an unseen window may be inside


@dataclass(frozen=True)
class ListVal:
    alloc: tuple
    fn: tuple                         # where the elements' expressions live
    elems: tuple = ()                 # ((index | None, expr_id, facts), ...)
    base_len: int = 0
    exact: bool = True


def consistent(facts) -> bool:
    seen = {}
    for k, b in facts:
        if seen.setdefault(k, b) != b:
            return False
    return True


# ----------------------------------------------------------------------------- scopes

class Fn:
    """A function (or a module's top-level code, qualname "<module>")."""

    def __init__(self, mod: "Mod", ir: FuncIR | None, qualname: str, parent: "Fn | None",
                 cls: "Cls | None"):
        self.mod = mod
        self.ir = ir
        self.qualname = qualname
        self.key = (mod.path, qualname)
        self.parent = parent
        self.cls = cls
        self.params = list(ir.params) if ir is not None else []
        self.first_param = self.params[0].name if (cls is not None and self.params) else None
        self.defs: dict[str, list] = {}
        self.def_count: dict[str, int] = {}
        self.loop_defined: set[str] = set()
        self.sub_stores: dict[str, list] = {}
        self.attr_stores: dict[tuple, list] = {}   # (base key, attr) -> [(value, guards, pos)]
        self.updates: dict[str, list] = {}         # name -> [(update/setdefault call, guards)]
        self.list_ext: dict[str, list] = {}        # name -> [(elements, guards)]
        self.calls: list = []                      # (call, guards, try_typeerror)
        self.returns: list = []                    # (expr, guards)
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()      # names declared nonlocal here
        self.attr_assigned: set[str] = set()
        self.depth = 0                              # nesting while the body is read
        self.store_lines: dict[tuple, list] = {}    # (dict name, key) -> [(line, straight)]
        # name -> [(line, straight, call)] for each call statement ``helper(name, ...)``
        self.handed_lines: dict[str, list] = {}
        self.straight: dict[str, list[int]] = {}    # name -> lines of unconditional bindings
        self.nested: dict[str, Fn] = {}
        self.imports: list = []                    # function-local import items
        self._valid: dict[str, bool] = {}
        self._guards: dict = {}
        for i, (name, kind, default) in enumerate(self.params):
            self.defs.setdefault(name, []).append(("param", (i, kind, default), ()))
            self.def_count[name] = self.def_count.get(name, 0) + 1

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    def valid_key(self, key: str) -> bool:
        """A fact key is usable when its value cannot change during one call."""
        v = self._valid.get(key)
        if v is None:
            root = key.split(".", 1)[0]
            v = (self.ir is not None and self.def_count.get(root, 0) == 1
                 and root not in self.loop_defined and root not in self.globals
                 and ("." not in key or key not in self.attr_assigned))
            self._valid[key] = v
        return v

    def guards(self, facts) -> frozenset:
        if not facts:
            return EMPTY
        hit = self._guards.get(facts)
        if hit is None:
            hit = self._guards[facts] = frozenset(f for f in facts if self.valid_key(f[0]))
        return hit


# decorators from outside the tree that hand back a function returning what the decorated
# body returns (with the factories among them that take arguments: ``lru_cache(maxsize=8)``,
# ``torch.no_grad()``, ``torch.compile(mode=...)``)
RETURN_KEEPING_FACTORIES = frozenset({
    "functools.lru_cache", "torch.no_grad", "torch.inference_mode", "torch.enable_grad",
    "torch.compile", "torch.jit.ignore", "torch.autocast", "torch.amp.autocast",
    "torch.cuda.amp.autocast", "torch.set_grad_enabled"})
RETURN_KEEPING = RETURN_KEEPING_FACTORIES | frozenset({
    "builtins.staticmethod", "builtins.classmethod", "functools.cache", "abc.abstractmethod",
    "typing.final", "typing.override", "typing_extensions.override", "typing_extensions.final",
    "torch.jit.unused", "torch._dynamo.disable", "torch.compiler.disable",
    "torch._disable_dynamo", "torch._dynamo.allow_in_graph", "torch.compiler.allow_in_graph"})


def _deco_names(exprs) -> set:
    """The last names the decorator expressions spell (``staticmethod``, ``torch.no_grad``)."""
    out = set()
    for d in exprs or ():
        while isinstance(d, Call):
            d = d.func
        if isinstance(d, Name):
            out.add(d.id)
        elif isinstance(d, Attr):
            out.add(d.attr)
    return out


def first_param_untrusted(fn: "Fn") -> str:
    """Why ``fn``'s first parameter cannot be read as an instance of its class (or, in an
    autograd ``Function``'s static ``forward``/``backward``, as the ``ctx`` the class's own
    methods store on); "" when it can. The class-wide conditions (the method run on another
    object, stores from elsewhere) are ``attrstores.StoreIndex.foreign``'s."""
    if fn.cls is None or fn.first_param is None or fn.ir is None:
        return "not a method"
    if fn.def_count.get(fn.first_param) != 1:
        return f"{fn.first_param} is rebound in {fn.qualname}"
    decos = _deco_names(fn.ir.decorators)
    if "classmethod" in decos:
        return f"{fn.first_param} of a classmethod is a class, not an instance"
    if "staticmethod" in decos:
        bases = _deco_names(fn.cls.ir.bases)
        if "Function" not in bases:
            return (f"{fn.first_param} of a static method is whatever its caller passes "
                    "(not an autograd Function's ctx)")
    return ""


def is_static_method(fn: "Fn") -> bool:
    return fn.ir is not None and "staticmethod" in _deco_names(fn.ir.decorators)


class Cls:
    def __init__(self, mod: "Mod", ir: ClassIR, qualname: str):
        self.mod = mod
        self.ir = ir
        self.qualname = qualname
        self.key = (mod.path, qualname)
        self.methods: dict[str, Fn] = {}


class Mod:
    def __init__(self, path: str, name: str, is_pkg: bool, ir: ModuleIR):
        self.path = path
        self.name = name
        self.is_pkg = is_pkg
        self.ir = ir
        self.functions: dict[str, Fn] = {}     # qualname -> the last def of that name
        self.by_ir: dict[int, Fn] = {}          # id(FuncIR) -> its Fn (every def)
        self.classes: dict[str, Cls] = {}
        self.top = Fn(self, None, "<module>", None, None)
        self.all_fns: list[Fn] = [self.top]


def _walk_expr_calls(e, out: list, guards, tte):
    """Every call expression inside ``e`` (``ir.walk``'s order)."""
    for x in walk_ir(e):
        if type(x) is Call:
            out.append((x, guards, tte))


def build_module(mod: Mod) -> None:
    """Flatten the IR of a module into per-function tables."""

    def nested(fn: Fn, stmts, guards: tuple, tte: bool, loop: bool, top: bool):
        """A block that may not run, or not run to its end (if/try/loop/with/match bodies)."""
        fn.depth += 1
        try:
            walk(fn, stmts, guards, tte, loop, top)
        finally:
            fn.depth -= 1

    def walk(fn: Fn, stmts, guards: tuple, tte: bool, loop: bool, top: bool):
        for st in stmts:
            t = type(st)
            if t is Import:
                for item in st.items:
                    local = item.local
                    if local == "*":
                        continue
                    fn.defs.setdefault(local, []).append(("import", item, guards))
                    fn.def_count[local] = fn.def_count.get(local, 0) + 1
                    if loop:
                        fn.loop_defined.add(local)
                    if not top:
                        fn.imports.append(item)
            elif t is Assign:
                _walk_expr_calls(st.value, fn.calls, guards, tte)
                for tg in st.targets:
                    bind(fn, tg, st.value, guards, tte, loop, st.pos)
            elif t is AugAssign:
                tg, value = st.target, st.value
                _walk_expr_calls(value, fn.calls, guards, tte)
                if isinstance(tg, Name):
                    if isinstance(value, (ListExpr, TupleExpr)):
                        fn.list_ext.setdefault(tg.id, []).append((value.elts, guards))
                    else:
                        fn.defs.setdefault(tg.id, []).append(("opaque", "augmented assignment", guards))
                    fn.def_count[tg.id] = fn.def_count.get(tg.id, 0) + 1
                else:
                    bind(fn, tg, UNKNOWN, guards, tte, loop, st.pos)
            elif t is If:
                nested(fn, st.body, guards + tuple(st.true_facts), tte, loop, top)
                nested(fn, st.orelse, guards + tuple(st.false_facts), tte, loop, top)
            elif t is Try:
                te = tte or any(("TypeError" in h.names or "*" in h.names or "Exception" in h.names)
                                for h in st.handlers)
                nested(fn, st.body, guards, te, loop, top)
                for h in st.handlers:
                    nested(fn, h.body, guards, tte, loop, top)
                nested(fn, st.orelse, guards, tte, loop, top)
                nested(fn, st.final, guards, tte, loop, top)
            elif t is Loop:
                _walk_expr_calls(st.iter, fn.calls, guards, tte)
                if st.target is not None:
                    bind(fn, st.target, UNKNOWN, guards, tte, True, None)
                nested(fn, st.body, guards, tte, True, top)
                nested(fn, st.orelse, guards, tte, loop, top)
            elif t is With:
                for item in st.items:
                    _walk_expr_calls(item.expr, fn.calls, guards, tte)
                    if item.target is not None:
                        bind(fn, item.target, UNKNOWN, guards, tte, loop, None)
                nested(fn, st.body, guards, tte, loop, top)
            elif t is FuncDef:
                f: FuncIR = st.func
                for d in f.decorators:
                    _walk_expr_calls(d, fn.calls, guards, tte)
                for p in f.params:
                    if p.default is not None:
                        _walk_expr_calls(p.default, fn.calls, guards, tte)
                child = make_fn(f, fn if fn.ir is not None else None)
                fn.nested[f.name] = child
                fn.defs.setdefault(f.name, []).append(("def", child, guards))
                fn.def_count[f.name] = fn.def_count.get(f.name, 0) + 1
            elif t is ClassDef:
                c: ClassIR = st.cls
                for d in c.decorators + c.bases:
                    _walk_expr_calls(d, fn.calls, guards, tte)
                cls = make_cls(c)
                fn.defs.setdefault(c.name, []).append(("class", cls, guards))
                fn.def_count[c.name] = fn.def_count.get(c.name, 0) + 1
                # class-body code runs in the enclosing scope's time; calls there are collected
                walk_class(fn, cls, c.body, guards, tte)
            elif t is Return:
                _walk_expr_calls(st.value, fn.calls, guards, tte)
                fn.returns.append((st.value, guards))
            elif t is Global:
                fn.globals.update(st.names)
            elif t is Nonlocal:
                # the enclosing function's name is rebound here, at whatever time this
                # function runs: there it may hold anything (a binding with no line is never
                # hidden by a later one); here it is the enclosing function's name
                p = fn.parent
                for name in st.names:
                    q = p
                    while q is not None and q.ir is not None and name not in q.defs:
                        q = q.parent
                    if q is not None and q.ir is not None:
                        q.defs.setdefault(name, []).append(
                            ("opaque", f"{name} is rebound by the nested function "
                                       f"{fn.qualname} (nonlocal)", ()))
                        q.def_count[name] = q.def_count.get(name, 0) + 1
                fn.nonlocals.update(st.names)
            elif t is ExprStmt:
                e = st.value
                _walk_expr_calls(e, fn.calls, guards, tte)
                # ``kw.update(window_size=...)`` as a statement: a store of each keyword it names
                if isinstance(e, Call) and isinstance(e.func, Attr) and isinstance(e.func.base, Name) \
                        and e.func.attr == "update" \
                        and isinstance(e.pos, list) and e.pos and isinstance(e.pos[0], int):
                    for a in e.args:
                        if a.kind == "k":
                            fn.store_lines.setdefault((e.func.base.id, a.kw), []).append(
                                (e.pos[0], fn.depth == 0 and not loop))
                # ``helper(kw)`` as a statement: a helper that may change the dict in place
                if isinstance(e, Call) and isinstance(e.pos, list) and e.pos and \
                        isinstance(e.pos[0], int):
                    for a in e.args:
                        if a.kind == "p" and isinstance(a.value, Name):
                            fn.handed_lines.setdefault(a.value.id, []).append(
                                (e.pos[0], fn.depth == 0 and not loop, e))
            elif t is Block:
                for b in st.bodies:
                    nested(fn, b, guards, tte, loop, top)

    def walk_class(fn: Fn, cls: Cls, stmts, guards, tte):
        for st in stmts:
            if isinstance(st, FuncDef):
                f: FuncIR = st.func
                for d in f.decorators:
                    _walk_expr_calls(d, fn.calls, guards, tte)
                m = make_fn(f, fn if fn.ir is not None else None, cls)
                cls.methods[f.name] = m
            elif isinstance(st, ClassDef):
                c = st.cls
                inner = make_cls(c)
                walk_class(fn, inner, c.body, guards, tte)
            elif isinstance(st, (Assign, ExprStmt, Return)):
                _walk_expr_calls(st.value, fn.calls, guards, tte)
            elif isinstance(st, If):
                walk_class(fn, cls, st.body, guards, tte)
                walk_class(fn, cls, st.orelse, guards, tte)
            elif isinstance(st, Try):
                walk_class(fn, cls, st.body, guards, tte)
                for h in st.handlers:
                    walk_class(fn, cls, h.body, guards, tte)
                walk_class(fn, cls, st.orelse, guards, tte)
                walk_class(fn, cls, st.final, guards, tte)

    def bind(fn: Fn, t, value, guards, tte, loop, pos):
        if isinstance(t, Name):
            name = t.id
            fn.defs.setdefault(name, []).append(("expr", (value, pos), guards))
            fn.def_count[name] = fn.def_count.get(name, 0) + 1
            if loop:
                fn.loop_defined.add(name)
            elif fn.depth == 0 and pos and isinstance(pos[0], int):
                fn.straight.setdefault(name, []).append(pos[0])
        elif isinstance(t, Subscript):
            base, idx, spos = t.base, t.index, t.pos
            _walk_expr_calls(base, fn.calls, guards, tte)
            _walk_expr_calls(idx, fn.calls, guards, tte)
            if isinstance(base, Name):
                fn.sub_stores.setdefault(base.id, []).append((idx, value, guards, spos, pos))
                if isinstance(idx, Lit) and isinstance(idx.value, str) and pos \
                        and isinstance(pos[0], int):
                    # (line, unconditional): an unconditional store hides the key's older
                    # entries from a later read; a conditional one may
                    fn.store_lines.setdefault((base.id, idx.value), []).append(
                        (pos[0], fn.depth == 0 and not loop))
        elif isinstance(t, Attr):
            _walk_expr_calls(t.base, fn.calls, guards, tte)
            k = _keyof(t.base)
            if k is not None:
                fn.attr_stores.setdefault((k, t.attr), []).append((value, guards, pos))
                fn.attr_assigned.add(f"{k}.{t.attr}")
        elif isinstance(t, TupleExpr):
            elts = t.elts
            if isinstance(value, (TupleExpr, ListExpr)) and len(value.elts) == len(elts) and \
                    not any(isinstance(x, Starred) for x in value.elts):
                for sub, v in zip(elts, value.elts):
                    bind(fn, sub, v, guards, tte, loop, pos)
            elif not loop and not any(isinstance(x, Starred) for x in elts) and \
                    not isinstance(value, (TupleExpr, ListExpr)):
                # ``l, r = window_size``: each name is the value's item at its place (a
                # sequence of another length fails at run time; a dict or a set gives no
                # item here, and the flow reads such a subscript as opaque)
                for i, sub in enumerate(elts):
                    bind(fn, sub, Subscript(base=value, index=Lit(value=i), pos=pos),
                         guards, tte, loop, pos)
            else:
                for sub in elts:
                    bind(fn, sub, UNKNOWN, guards, tte, loop, pos)
        elif isinstance(t, Starred):
            bind(fn, t.value, UNKNOWN, guards, tte, loop, pos)

    def make_fn(f: FuncIR, parent: Fn | None, cls: Cls | None = None) -> Fn:
        child = Fn(mod, f, f.qualname, parent, cls)
        earlier = mod.functions.get(f.qualname)
        if earlier is not None:
            # one name defined again in its scope (``if c: def f() ... else: def f() ...``):
            # the table keeps the last under the plain name; each earlier one gets a key of
            # its own, so that a binding made on a branch still names the def it made
            n = sum(1 for x in mod.all_fns if x.qualname == f.qualname)
            earlier.key = (mod.path, f"{f.qualname}#{n}")
        mod.functions[f.qualname] = child
        mod.by_ir[id(f)] = child
        mod.all_fns.append(child)
        walk(child, f.body, (), False, False, False)
        return child

    def make_cls(c: ClassIR) -> Cls:
        cls = Cls(mod, c, c.qualname)
        mod.classes[c.qualname] = cls
        return cls

    walk(mod.top, mod.ir.body, (), False, False, True)
    for fn in mod.all_fns:
        for call, guards, _ in fn.calls:
            func = call.func
            if isinstance(func, Attr) and isinstance(func.base, Name):
                if func.attr in ("update", "setdefault"):
                    fn.updates.setdefault(func.base.id, []).append((call, guards))
                elif func.attr in ("append", "extend", "insert"):
                    args = [a.value for a in call.args if a.kind == "p"]
                    if func.attr == "append" and args:
                        fn.list_ext.setdefault(func.base.id, []).append(([args[0]], guards))
                    elif func.attr == "extend" and args and isinstance(args[0], (ListExpr, TupleExpr)):
                        fn.list_ext.setdefault(func.base.id, []).append((args[0].elts, guards))
                    elif args:
                        fn.list_ext.setdefault(func.base.id, []).append(([UNKNOWN], guards))


def reaching_defs(fn: "Fn", name: str, line: int | None) -> list:
    """The bindings of local ``name`` that can reach a read at ``line``: the body is read
    flow-insensitively, but an unconditional binding (not in a branch, loop, ``try`` or
    ``with``) before the read hides every binding before it, parameters included
    (``left = None if left < 0 else left``). Names bound in a loop, declared ``global`` or
    ``nonlocal``, or a read of unknown line keep every binding."""
    entries = fn.defs.get(name, [])
    if not line or name in fn.loop_defined or name in fn.globals:
        return entries
    # outside a loop nothing runs twice: a binding that starts at or after the read's line
    # cannot reach it (``w = tuple(f(x) for x in w)`` reads the w bound before it)
    entries = [e for e in entries if not (
        e[0] == "expr" and e[1][1] and isinstance(e[1][1][0], int) and e[1][1][0] >= line)]
    before = [ln for ln in fn.straight.get(name, ()) if ln < line]
    if not before:
        return entries
    cut = max(before)
    out = []
    for e in entries:
        kind, payload = e[0], e[1]
        if kind == "param":
            continue                    # bound at entry: hidden by the binding at ``cut``
        pos = payload[1] if kind == "expr" else None
        if kind == "expr" and pos and isinstance(pos[0], int) and pos[0] < cut:
            continue
        out.append(e)
    return out


def _keyof(e) -> str | None:
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Attr):
        b = _keyof(e.base)
        return f"{b}.{e.attr}" if b else None
    return None


def expr_label(e, depth: int = 0) -> str:
    """A short spelling of an IR expression (labels of wrappers and callees)."""
    if depth > 6:
        return "..."
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Attr):
        return f"{expr_label(e.base, depth + 1)}.{e.attr}"
    if isinstance(e, Call):
        inner = "" if not e.args else "..."
        return f"{expr_label(e.func, depth + 1)}({inner})"
    if isinstance(e, Lit):
        return repr(e.value)
    if isinstance(e, Subscript):
        return f"{expr_label(e.base, depth + 1)}[{expr_label(e.index, depth + 1)}]"
    if isinstance(e, TupleExpr):
        return "(" + ", ".join(expr_label(x, depth + 1) for x in e.elts) + ")"
    return "..."


# ----------------------------------------------------------------------------- solver

class NeedLoad(Exception):
    pass


def _relevant(vals) -> frozenset:
    """What a value set means for the results: opaque values (whatever their reason) and
    constants cannot become FA entry points, dicts or lists."""
    if not isinstance(vals, frozenset):
        return vals
    return frozenset(x for x in vals if not isinstance(x[0], (Opaque, Const, ExtRef, Unloaded)))


def _translate_value(v, keymap: dict, step: str):
    if isinstance(v, DictVal):
        ents = frozenset(WinEntry(x.site, frozenset((keymap[k], b) for k, b in x.facts if k in keymap),
                                  x.via + (step,)) for x in x_iter(v.entries))
        return DictVal(v.alloc, ents, v.opaque)
    if isinstance(v, FAFunc):
        return FAFunc(v.entry, v.chain, v.binding, v.via + (step,))
    return v


def x_iter(s):
    return s


def _why(v) -> str:
    if isinstance(v, Opaque):
        return v.reason
    return type(v).__name__


def _pt(pos) -> tuple:
    """(line, col, end_line, end_col) of a position list (0s when unknown)."""
    if not pos or not isinstance(pos[0], int):
        return (0, 0, 0, 0)
    return tuple(pos[:4])


class _Lazy:
    """An import at module level, resolved only when the name is looked up (so the pass never
    loads a module nobody asks about)."""

    def __init__(self, solver: Solver, m: Mod, item):
        self.solver, self.m, self.item = solver, m, item

    def __call__(self):
        item = self.item
        return self.solver._memo(("lazy", self.m.path, item.local, item.level, item.module, item.attr),
                                 lambda: self.solver.import_value(self.m, self.item, self.m.top))


def _join(*envs: dict) -> dict:
    out: dict = {}
    for env in envs:
        for k, v in env.items():
            cur = out.get(k)
            parts = v if isinstance(v, tuple) else (v,)
            if cur is None:
                out[k] = parts if isinstance(v, tuple) else v
            else:
                cparts = cur if isinstance(cur, tuple) else (cur,)
                merged = list(cparts)
                for p in parts:
                    if p not in merged:
                        merged.append(p)
                out[k] = tuple(merged)
    return out


class _FnCtx:
    __slots__ = ("solver", "fn", "static", "mod")

    def __init__(self, solver: Solver, fn: Fn, static: bool):
        self.solver, self.fn, self.static = solver, fn, static
        self.mod = fn.mod

    def lookup(self, name):
        return self.solver.lookup(self.fn, name, self.static)


class _ModCtx:
    __slots__ = ("solver", "mod", "env", "fn", "static")

    def __init__(self, solver: Solver, mod: Mod, env):
        self.solver, self.mod, self.env = solver, mod, env
        self.fn = None
        self.static = True   # module level never needs parameter values

    def lookup(self, name):
        if self.env is None:
            return self.solver.global_value(self.mod, name)
        if name in self.env:
            return self.solver.force(self.env[name])
        if name in _BUILTINS:
            return frozenset({(ExtRef(f"builtins.{name}"), EMPTY)})
        return frozenset({(Opaque(f"unbound name {name}"), EMPTY)})


class _EverCtx(_ModCtx):
    """A module's top level read with every value each name held there, not only the final
    one (with ``line``: every value still held at that line): a list built, or a call made,
    at module level keeps what its expressions named then."""
    __slots__ = ("line",)

    def __init__(self, solver, mod, line: int | None = None):
        super().__init__(solver, mod, None)
        self.line = line

    def lookup(self, name):
        return self.solver.global_value(self.mod, name) | \
            self.solver.replaced_values(self.mod, name, self.line)


def fn_context(solver, fn: Fn):
    """Where ``fn``'s body is evaluated: its own scopes, or for a module's top level the
    module's final environment."""
    return _FnCtx(solver, fn, False) if fn.ir is not None else _ModCtx(solver, fn.mod, None)


# -- containers changed where the flow does not look ---------------------------------------
# calls that only read a container handed to them (copies, iteration, printing)
_READ_ONLY_CALLS = frozenset({
    "len", "tuple", "list", "dict", "set", "frozenset", "sorted", "reversed", "enumerate", "zip",
    "iter", "sum", "min", "max", "any", "all", "print", "repr", "str", "bool", "int", "float",
    "isinstance", "id", "hash", "type", "format", "map", "filter", "range", "hasattr"})
# methods the flow models (``local_mutations``, ``list_ext``) or that only read
_DICT_METHODS = frozenset({"get", "keys", "values", "items", "copy", "update", "setdefault",
                           "__contains__", "__getitem__", "__len__", "__iter__"})
_LIST_METHODS = frozenset({"index", "count", "copy", "append", "extend", "insert",
                           "__contains__", "__getitem__", "__len__", "__iter__"})
# the modelled methods that change the container: modelled only where called in place
_MUTATORS = frozenset({"update", "setdefault", "append", "extend", "insert"})


def container_escapes(fn: "Fn", name: str) -> tuple[tuple, tuple]:
    """Why the dict / the list a local ``name`` holds may be changed where the flow does not
    look: (reasons for a dict, reasons for a list), each empty when every use of ``name`` in
    ``fn`` (nested functions included) is one the flow models or a read. A dict is followed
    through subscript stores, ``update``/``setdefault`` and in-tree helpers; a list through
    ``append``/``extend``/``insert`` and ``+=``. Aliases, stores into other objects, other
    methods (``pop``, ``clear``, ``__setitem__`` ...), ``del``, and -- for a list -- subscript
    stores and calls other than plain reads leave its contents unknown."""
    memo = fn.__dict__.setdefault("_escapes", {})
    hit = memo.get(name)
    if hit is None:
        d: list = []
        lst: list = []
        _scan_uses(fn.ir.body, name, d, lst)
        hit = memo[name] = (tuple(sorted(set(d))), tuple(sorted(set(lst))))
    return hit


# methods of a list or dict that only read it
_READ_METHODS = frozenset({"get", "keys", "values", "items", "copy", "index", "count",
                           "__contains__", "__getitem__", "__len__", "__iter__"})


def item_changes(fn: "Fn", name: str) -> tuple:
    """Why a list held in the dict a local ``name`` holds (``kw["window_size"] = [-1, 0]``)
    may be changed in place where the flow does not look: a store into it
    (``kw["window_size"][0] = ...``), a method other than a read called on it, ``+=`` on it, or
    the item handed to a call (other than a builtin that reads it), aliased by a name or put
    into another container. Empty when every use of an item is a read."""
    memo = fn.__dict__.setdefault("_item_changes", {})
    hit = memo.get(name)
    if hit is None:
        hit = memo[name] = _item_changes(fn.ir.body if fn.ir is not None else [], name)
    return hit


def module_item_changes(mod: "Mod", name: str) -> tuple:
    """``item_changes`` for a dict bound at the top level of ``mod``: what any code of the
    module (its functions included) does to the lists it holds."""
    memo = mod.__dict__.setdefault("_item_changes", {})
    hit = memo.get(name)
    if hit is None:
        hit = memo[name] = _item_changes(mod.ir.body, name)
    return hit


def _item_changes(body, name: str) -> tuple:
    def held(e) -> bool:            # ``name[...]`` or a subscript/attribute chain over it
        while isinstance(e, (Subscript, Attr)):
            if isinstance(e, Subscript) and _is(e.base, name):
                return True
            e = e.base
        return False

    out = []
    for n in walk_ir(body):
        if isinstance(n, Call):
            f = n.func
            if isinstance(f, Attr) and held(f.base) and f.attr not in _READ_METHODS:
                out.append(f"{expr_label(f)}(...) may change an item of {name}")
            reads = isinstance(f, Name) and f.id in _READ_ONLY_CALLS
            for kind, kw, a, _ in n.args:
                if held(a) and not reads and kw not in WINDOW_KEYS:
                    out.append(f"{expr_label(a)} is handed to {expr_label(f)}(...)")
        elif isinstance(n, Assign):
            for t in n.targets:
                for x in walk_ir(t):
                    if isinstance(x, (Subscript, Attr)) and held(x.base):
                        out.append(f"{expr_label(x)} = ... (an item of {name} changed)")
            if held(n.value) and any(not isinstance(t, TupleExpr) for t in n.targets):
                out.append(f"{expr_label(n.value)} is aliased")
        elif isinstance(n, AugAssign) and held(n.target):
            out.append(f"{expr_label(n.target)} op= ... (changed in place)")
        elif isinstance(n, (TupleExpr, ListExpr)) and any(held(x) for x in n.elts):
            out.append(f"an item of {name} is put into a container")
        elif isinstance(n, DictExpr) and any(held(it.value) for it in n.items):
            out.append(f"an item of {name} is put into a dict")
    return tuple(sorted(set(out)))


def _is(e, name) -> bool:
    return isinstance(e, Name) and e.id == name


def module_container_escapes(mod: "Mod", name: str) -> tuple:
    """Why a module-level dict or list bound to ``name`` in ``mod`` may hold other entries
    than its module-level statements give: a function of the module that stores into it,
    calls a method on it other than a read, or hands it to a callee (whenever that function
    runs), or module-level code that does so. One tuple of reasons for both kinds."""
    memo = mod.__dict__.setdefault("_container_escapes", {})
    hit = memo.get(name)
    if hit is None:
        shared: list = []
        _scan_uses(mod.ir.body, name, shared, shared, strict_defs=True)
        hit = memo[name] = tuple(sorted(set(shared)))
    return hit


def _scan_uses(stmts, name, d: list, lst: list, strict_defs: bool = False) -> None:
    both = lambda why: (d.append(why), lst.append(why))     # noqa: E731
    if strict_defs and d is not lst:
        shared: list = []
        _scan_uses(stmts, name, shared, shared, True)
        d.extend(shared)
        lst.extend(shared)
        return
    for st in stmts:
        if isinstance(st, Assign):
            if _is(st.value, name):
                both(f"{name} is aliased ({expr_label(st.targets[0])} = {name})")
            else:
                _scan_expr(st.value, name, d, lst, both)
            for t in st.targets:
                _scan_target(t, name, d, lst, both)
        elif isinstance(st, AugAssign):
            _scan_target(st.target, name, d, lst, both, aug=True)
            _scan_expr(st.value, name, d, lst, both)
        elif isinstance(st, ExprStmt):
            e = st.value
            if isinstance(e, Subscript) and _is(e.base, name):
                both(f"del {name}[...]")          # an expression statement of a subscript
            else:
                _scan_expr(e, name, d, lst, both)
        elif isinstance(st, Return):
            if not _is(st.value, name):
                _scan_expr(st.value, name, d, lst, both)
            elif strict_defs:
                # a module's own container handed out by a function (a getter, a property):
                # every caller holds the one object and may change it through its own name
                both(f"{name} is returned by a function (its callers share it)")
        elif isinstance(st, If):
            _scan_uses(st.body, name, d, lst, strict_defs)
            _scan_uses(st.orelse, name, d, lst, strict_defs)
        elif isinstance(st, Try):
            _scan_uses(st.body, name, d, lst, strict_defs)
            for h in st.handlers:
                _scan_uses(h.body, name, d, lst, strict_defs)
            _scan_uses(st.orelse, name, d, lst, strict_defs)
            _scan_uses(st.final, name, d, lst, strict_defs)
        elif isinstance(st, Loop):
            if st.target is not None:
                _scan_target(st.target, name, d, lst, both)
            _scan_expr(st.iter, name, d, lst, both)
            _scan_uses(st.body, name, d, lst, strict_defs)
            _scan_uses(st.orelse, name, d, lst, strict_defs)
        elif isinstance(st, With):
            for item in st.items:
                _scan_expr(item.expr, name, d, lst, both)
                if item.target is not None:
                    _scan_target(item.target, name, d, lst, both)
            _scan_uses(st.body, name, d, lst, strict_defs)
        elif isinstance(st, Block):
            for b in st.bodies:
                _scan_uses(b, name, d, lst, strict_defs)
        elif isinstance(st, FuncDef):
            f = st.func
            if any(p.name == name for p in f.params):
                continue                     # the nested function's own name
            for p in f.params:
                if p.default is not None:
                    _scan_expr(p.default, name, d, lst, both)
            _scan_uses(f.body, name, d, lst, strict_defs)   # a closure may change it whenever it runs
        elif isinstance(st, ClassDef):
            _scan_uses(st.cls.body, name, d, lst, strict_defs)


def _scan_target(t, name, d, lst, both, aug=False) -> None:
    if isinstance(t, Subscript):
        if _is(t.base, name):
            lst.append(f"{name}[...] = ... (an item stored)")
        else:
            _scan_expr(t.base, name, d, lst, both)
        _scan_expr(t.index, name, d, lst, both)
    elif isinstance(t, Attr):
        if _is(t.base, name):
            both(f"{name}.{t.attr} is set")
        else:
            _scan_expr(t.base, name, d, lst, both)
    elif isinstance(t, (TupleExpr, ListExpr)):
        for x in t.elts:
            _scan_target(x, name, d, lst, both)
    elif isinstance(t, Starred):
        _scan_target(t.value, name, d, lst, both)


def _scan_expr(e, name, d, lst, both) -> None:
    if isinstance(e, Call):
        func = e.func
        if isinstance(func, Attr) and _is(func.base, name):
            m = func.attr
            if m not in _DICT_METHODS:
                d.append(f"{name}.{m}(...)")
            if m not in _LIST_METHODS:
                lst.append(f"{name}.{m}(...)")
        else:
            _scan_expr(func, name, d, lst, both)
        plain = isinstance(func, Name) and func.id in _READ_ONLY_CALLS
        for kind, kw, a, _ in e.args:
            if _is(a, name):
                if kind in ("**", "*") or plain or kw in WINDOW_KEYS:
                    continue                # read: a splat, a copy, an iteration, the window
                lst.append(f"{name} is handed to {expr_label(func)}(...)")
            else:
                _scan_expr(a, name, d, lst, both)
        return
    if isinstance(e, Attr):
        if _is(e.base, name):
            # a method read as a value is called where the flow does not look: only the
            # reading ones are harmless (``put = kw.setdefault`` is not)
            if e.attr not in _DICT_METHODS or e.attr in _MUTATORS:
                d.append(f"{name}.{e.attr} is read as a value")
            if e.attr not in _LIST_METHODS or e.attr in _MUTATORS:
                lst.append(f"{name}.{e.attr} is read as a value")
            return
        _scan_expr(e.base, name, d, lst, both)
        return
    if isinstance(e, Subscript):
        if not _is(e.base, name):
            _scan_expr(e.base, name, d, lst, both)
        _scan_expr(e.index, name, d, lst, both)
        return
    if isinstance(e, (TupleExpr, ListExpr)):
        for x in e.elts:
            if _is(x, name):
                both(f"{name} is stored in a {'tuple' if isinstance(e, TupleExpr) else 'list'}")
            else:
                _scan_expr(x, name, d, lst, both)
        return
    if isinstance(e, DictExpr):
        for k, v, _ in e.items:
            if k is None and _is(v, name):
                continue                    # {**name}: a copy
            if _is(v, name) or _is(k, name):
                both(f"{name} is stored in a dict")
            else:
                _scan_expr(k, name, d, lst, both)
                _scan_expr(v, name, d, lst, both)
        return
    if isinstance(e, Either):
        for x in (e.a, e.b):
            if _is(x, name):
                both(f"{name} is chosen by a conditional")
            else:
                _scan_expr(x, name, d, lst, both)
        return
    if isinstance(e, Starred):
        if not _is(e.value, name):
            _scan_expr(e.value, name, d, lst, both)


_BUILTINS = frozenset(dir(__builtins__) if isinstance(__builtins__, dict) is False else __builtins__) \
    | frozenset(dir(sys.modules["builtins"]))


__all__ = [
    'item_changes',
    'module_item_changes',
    'fn_context',
    'first_param_untrusted',
    'is_static_method',
    'container_escapes',
    'module_container_escapes',
    'reaching_defs',
    'Value',
    'Facts',
    'Vals',
    'ClassRef',
    'Cls',
    'Const',
    'DictVal',
    'EMPTY',
    'ExtRef',
    'FAFunc',
    'Fn',
    'FuncRef',
    'ListVal',
    'Mod',
    'ModRef',
    'NeedLoad',
    'Opaque',
    'Site',
    'Unloaded',
    'WinEntry',
    'WrapRef',
    '_BUILTINS',
    '_FnCtx',
    '_Lazy',
    '_ModCtx',
    'RETURN_KEEPING',
    'RETURN_KEEPING_FACTORIES',
    '_EverCtx',
    '_join',
    '_keyof',
    '_pt',
    '_relevant',
    '_translate_value',
    '_walk_expr_calls',
    '_why',
    'build_module',
    'consistent',
    'expr_label',
    'x_iter',
    'B',
    'WINDOW_KEYS',
    'Entry',
    'ClassIR',
    'FuncIR',
    'ModuleIR',
    'sys',
    'dataclass',
    'field',
    'Callable',
]
