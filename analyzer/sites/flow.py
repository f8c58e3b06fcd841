"""The cross-file flow layer: which FlashAttention entry points each call can reach, and which
windows reach it.

A small abstract interpreter over the IR of ``extract``:

* module level runs in order (strong updates, try/except/else and if/else joined), so
  ``x = w(x)`` after an import, ``None`` fallbacks and re-binding are judged by the value the
  name has when the module has finished running;
* function bodies are flow-insensitive (every assignment of a local contributes), with
  *path facts*: ``if use_flash_attn_4:`` adds the fact ``use_flash_attn_4 = True`` to what is
  assigned or stored in its body, and ``False`` to its ``else``. A fact is only used for a
  name assigned once, outside loops (or a parameter never re-assigned), so it cannot change
  between the test and the use. Facts follow values through call edges when the argument is
  that very name (``f(use_flash_attn_4, ...)``, also through ``*[...]`` lists with exact
  positions). A value whose facts contradict the facts of the call it would reach is dropped:
  that is how the FA3 call in an ``else`` of ``if use_flash_attn_4`` is not reported as FA4;
* parameters get the values of every in-tree call edge (``f(...)``, ``Cls.apply(*args)`` ->
  ``forward``, ``self.m(...)``) plus "unknown: callers outside the tree";
* dicts are allocation sites whose window entries (literal keys, ``d[k] = v`` stores in any
  branch, ``.update``, ``dict(...)``, ``**`` splats, stores made by helpers the dict is passed
  to) travel with the value; lists keep exact positions for ``*args`` mapping.

Nothing here prints; ``audit_tree`` turns the results into records.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable

from analyzer.sites import bindings as B
from analyzer.sites.bindings import WINDOW_KEYS, Entry
from analyzer.sites.ir import ClassIR, FuncIR, ModuleIR

EMPTY: frozenset = frozenset()


# ----------------------------------------------------------------------------- values

@dataclass(frozen=True)
class WrapRef:
    kind: str       # fa4_patch | tree | other
    label: str      # how it is spelled, e.g. "no_torch_dynamo()"
    key: tuple = ()  # (path, qualname) of an in-tree wrapper function
    at: tuple = ()   # (path, line, col) of the wrapping call ``label(fa4_fn)``


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
        self.first_param = self.params[0][0] if (cls is not None and self.params) else None
        self.defs: dict[str, list] = {}
        self.def_count: dict[str, int] = {}
        self.loop_defined: set[str] = set()
        self.sub_stores: dict[str, list] = {}
        self.attr_stores: dict[tuple, list] = {}   # (base key, attr) -> [(value, guards, pos)]
        self.updates: dict[str, list] = {}         # name -> [(call, guards)]
        self.list_ext: dict[str, list] = {}        # name -> [(elements, guards)]
        self.calls: list = []                      # (call, guards, try_typeerror)
        self.returns: list = []                    # (expr, guards)
        self.globals: set[str] = set()
        self.attr_assigned: set[str] = set()
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
        self.functions: dict[str, Fn] = {}
        self.classes: dict[str, Cls] = {}
        self.top = Fn(self, None, "<module>", None, None)
        self.all_fns: list[Fn] = [self.top]


def _walk_expr_calls(e, out: list, guards, tte):
    """Every call expression inside ``e`` (pre-order)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if not isinstance(x, tuple) or not x:
            continue
        tag = x[0]
        if tag == "C":
            out.append((x, guards, tte))
            stack.append(x[1])
            for a in x[2]:
                stack.append(a[2])
        elif tag == "A":
            stack.append(x[1])
        elif tag in ("T", "L"):
            stack.extend(x[1])
        elif tag == "*":
            stack.append(x[1])
        elif tag == "D":
            for k, v, _ in x[1]:
                if k is not None:
                    stack.append(k)
                stack.append(v)
        elif tag == "I":
            stack.append(x[1])
            stack.append(x[2])
        elif tag == "S":
            stack.append(x[1])
            stack.append(x[2])


def build_module(mod: Mod) -> None:
    """Flatten the IR of a module into per-function tables."""

    def walk(fn: Fn, stmts, guards: tuple, tte: bool, loop: bool, top: bool):
        for st in stmts:
            tag = st[0]
            if tag == "imp":
                for item in st[1]:
                    local = item[0]
                    if local == "*":
                        continue
                    fn.defs.setdefault(local, []).append(("import", item, guards))
                    fn.def_count[local] = fn.def_count.get(local, 0) + 1
                    if loop:
                        fn.loop_defined.add(local)
                    if not top:
                        fn.imports.append(item)
            elif tag == "asg":
                _, targets, value, pos = st
                _walk_expr_calls(value, fn.calls, guards, tte)
                for t in targets:
                    bind(fn, t, value, guards, tte, loop, pos)
            elif tag == "aug":
                _, t, value, pos = st
                _walk_expr_calls(value, fn.calls, guards, tte)
                if t[0] == "N":
                    if value[0] in ("L", "T"):
                        fn.list_ext.setdefault(t[1], []).append((value[1], guards))
                    else:
                        fn.defs.setdefault(t[1], []).append(("opaque", "augmented assignment", guards))
                    fn.def_count[t[1]] = fn.def_count.get(t[1], 0) + 1
                else:
                    bind(fn, t, ("O",), guards, tte, loop, pos)
            elif tag == "if":
                _, tf, ff, body, orelse = st
                walk(fn, body, guards + tuple(tf), tte, loop, top)
                walk(fn, orelse, guards + tuple(ff), tte, loop, top)
            elif tag == "try":
                _, body, handlers, orelse, final = st
                te = tte or any(("TypeError" in names or "*" in names or "Exception" in names)
                                for names, _ in handlers)
                walk(fn, body, guards, te, loop, top)
                for _, hb in handlers:
                    walk(fn, hb, guards, tte, loop, top)
                walk(fn, orelse, guards, tte, loop, top)
                walk(fn, final, guards, tte, loop, top)
            elif tag == "loop":
                _, target, it, body, orelse = st
                _walk_expr_calls(it, fn.calls, guards, tte)
                if target is not None:
                    bind(fn, target, ("O",), guards, tte, True, None)
                walk(fn, body, guards, tte, True, top)
                walk(fn, orelse, guards, tte, loop, top)
            elif tag == "with":
                _, items, body = st
                for e, t in items:
                    _walk_expr_calls(e, fn.calls, guards, tte)
                    if t is not None:
                        bind(fn, t, ("O",), guards, tte, loop, None)
                walk(fn, body, guards, tte, loop, top)
            elif tag == "def":
                f: FuncIR = st[1]
                for d in f.decorators:
                    _walk_expr_calls(d, fn.calls, guards, tte)
                for _, _, default in f.params:
                    if default is not None:
                        _walk_expr_calls(default, fn.calls, guards, tte)
                child = make_fn(f, fn if fn.ir is not None else None)
                fn.nested[f.name] = child
                fn.defs.setdefault(f.name, []).append(("def", child, guards))
                fn.def_count[f.name] = fn.def_count.get(f.name, 0) + 1
            elif tag == "cls":
                c: ClassIR = st[1]
                for d in c.decorators + c.bases:
                    _walk_expr_calls(d, fn.calls, guards, tte)
                cls = make_cls(c)
                fn.defs.setdefault(c.name, []).append(("class", cls, guards))
                fn.def_count[c.name] = fn.def_count.get(c.name, 0) + 1
                # class-body code runs in the enclosing scope's time; calls there are collected
                walk_class(fn, cls, c.body, guards, tte)
            elif tag == "ret":
                _walk_expr_calls(st[1], fn.calls, guards, tte)
                fn.returns.append((st[1], guards))
            elif tag == "glob":
                fn.globals.update(st[1])
            elif tag == "ex":
                _walk_expr_calls(st[1], fn.calls, guards, tte)
            elif tag == "blk":
                for b in st[1]:
                    walk(fn, b, guards, tte, loop, top)

    def walk_class(fn: Fn, cls: Cls, stmts, guards, tte):
        for st in stmts:
            if st[0] == "def":
                f: FuncIR = st[1]
                for d in f.decorators:
                    _walk_expr_calls(d, fn.calls, guards, tte)
                m = make_fn(f, fn if fn.ir is not None else None, cls)
                cls.methods[f.name] = m
            elif st[0] == "cls":
                c = st[1]
                inner = make_cls(c)
                walk_class(fn, inner, c.body, guards, tte)
            elif st[0] in ("asg", "ex", "ret"):
                e = st[2] if st[0] == "asg" else st[1]
                _walk_expr_calls(e, fn.calls, guards, tte)
            elif st[0] == "if":
                walk_class(fn, cls, st[3], guards, tte)
                walk_class(fn, cls, st[4], guards, tte)
            elif st[0] == "try":
                walk_class(fn, cls, st[1], guards, tte)
                for _, hb in st[2]:
                    walk_class(fn, cls, hb, guards, tte)
                walk_class(fn, cls, st[3], guards, tte)
                walk_class(fn, cls, st[4], guards, tte)

    def bind(fn: Fn, t, value, guards, tte, loop, pos):
        tag = t[0]
        if tag == "N":
            name = t[1]
            fn.defs.setdefault(name, []).append(("expr", (value, pos), guards))
            fn.def_count[name] = fn.def_count.get(name, 0) + 1
            if loop:
                fn.loop_defined.add(name)
        elif tag == "S":
            _, base, idx, spos = t
            _walk_expr_calls(base, fn.calls, guards, tte)
            _walk_expr_calls(idx, fn.calls, guards, tte)
            if base[0] == "N":
                fn.sub_stores.setdefault(base[1], []).append((idx, value, guards, spos, pos))
        elif tag == "A":
            _, base, attr = t
            _walk_expr_calls(base, fn.calls, guards, tte)
            k = _keyof(base)
            if k is not None:
                fn.attr_stores.setdefault((k, attr), []).append((value, guards, pos))
                fn.attr_assigned.add(f"{k}.{attr}")
        elif tag in ("T",):
            elts = t[1]
            if value[0] in ("T", "L") and len(value[1]) == len(elts) and \
                    not any(isinstance(x, tuple) and x and x[0] == "*" for x in value[1]):
                for sub, v in zip(elts, value[1]):
                    bind(fn, sub, v, guards, tte, loop, pos)
            else:
                for sub in elts:
                    bind(fn, sub, ("O",), guards, tte, loop, pos)
        elif tag == "*":
            bind(fn, t[1], ("O",), guards, tte, loop, pos)

    def make_fn(f: FuncIR, parent: Fn | None, cls: Cls | None = None) -> Fn:
        child = Fn(mod, f, f.qualname, parent, cls)
        mod.functions[f.qualname] = child
        mod.all_fns.append(child)
        for _, _, default in f.params:
            if default is not None:
                pass
        walk(child, f.body, (), False, False, False)
        return child

    def make_cls(c: ClassIR) -> Cls:
        cls = Cls(mod, c, c.qualname)
        mod.classes[c.qualname] = cls
        return cls

    walk(mod.top, mod.ir.body, (), False, False, True)
    for fn in mod.all_fns:
        for call, guards, _ in fn.calls:
            func = call[1]
            if func[0] == "A" and func[1][0] == "N":
                if func[2] == "update":
                    fn.updates.setdefault(func[1][1], []).append((call, guards))
                elif func[2] in ("append", "extend", "insert"):
                    args = [a[2] for a in call[2] if a[0] == "p"]
                    if func[2] == "append" and args:
                        fn.list_ext.setdefault(func[1][1], []).append(([args[0]], guards))
                    elif func[2] == "extend" and args and args[0][0] in ("L", "T"):
                        fn.list_ext.setdefault(func[1][1], []).append((args[0][1], guards))
                    elif args:
                        fn.list_ext.setdefault(func[1][1], []).append(([("O",)], guards))


def _keyof(e) -> str | None:
    if e[0] == "N":
        return e[1]
    if e[0] == "A":
        b = _keyof(e[1])
        return f"{b}.{e[2]}" if b else None
    return None


def expr_label(e, depth: int = 0) -> str:
    """A short spelling of an IR expression (labels of wrappers and callees)."""
    if depth > 6 or not isinstance(e, tuple) or not e:
        return "..."
    tag = e[0]
    if tag == "N":
        return e[1]
    if tag == "A":
        return f"{expr_label(e[1], depth + 1)}.{e[2]}"
    if tag == "C":
        inner = "" if not e[2] else "..."
        return f"{expr_label(e[1], depth + 1)}({inner})"
    if tag == "K":
        return repr(e[1])
    if tag == "S":
        return f"{expr_label(e[1], depth + 1)}[{expr_label(e[2], depth + 1)}]"
    if tag == "T":
        return "(" + ", ".join(expr_label(x, depth + 1) for x in e[1]) + ")"
    return "..."


# ----------------------------------------------------------------------------- solver

class NeedLoad(Exception):
    pass


class Solver:
    """One run over the loaded modules. ``loader(module_name) -> bool`` may load more files;
    a run that loaded anything is repeated by the caller (results are then complete)."""

    def __init__(self, mods: dict[str, Mod], modnames: dict[str, str],
                 wrapper_names: set[str], request_load: Callable[[str], bool],
                 request_callers: Callable[[str], bool], loaded: Callable[[str], bool]):
        self.mods = mods                  # path -> Mod
        self.modnames = modnames          # dotted name -> path (every file of the tree)
        self.wrapper_names = wrapper_names
        self.request_load = request_load
        self.request_callers = request_callers
        self.loaded = loaded
        self.by_name = {m.name: m for m in mods.values()}
        self.fns: dict[tuple, Fn] = {}
        self.clss: dict[tuple, Cls] = {}
        for m in mods.values():
            for f in m.all_fns:
                self.fns[f.key] = f
            for c in m.classes.values():
                self.clss[c.key] = c
        self.exprs: dict[int, object] = {}
        self.memo: dict = {}
        self.prev: dict = {}
        self.cycle_reads: dict = {}
        self.inprog: set = set()
        self.cyc = False
        self.depth = 0
        self.truncated: list[str] = []
        self.envs: dict[str, dict] = {}
        self.env_inprog: set[str] = set()
        self.binding_records: dict[tuple, dict] = {}
        self.records: dict[str, dict] = {}
        self.wrap_arg_uses: dict[tuple, int] = {}
        self._callers: dict[tuple, list] | None = None
        self._callers_searched: set[str] = set()
        # Loading more files to find callers is only worth it while following an FA callee or
        # a window dict (Analysis sets this); other evaluation uses the files already loaded.
        self.search_ok = False

    # -- registry ------------------------------------------------------------------
    def ref(self, e) -> int:
        self.exprs[id(e)] = e
        return id(e)

    # -- memo with cycle cut ---------------------------------------------------------
    def _memo(self, key, compute):
        """Memoised, with cycles cut by the previous round's value (Kleene iteration: the
        caller repeats whole rounds until no value read across a cycle changed)."""
        if key in self.memo:
            return self.memo[key]
        if key in self.inprog:
            self.cyc = True
            v = self.prev.get(key, EMPTY)
            self.cycle_reads[key] = v
            return v
        if self.depth > 400:
            self.truncated.append(repr(key[:3]))
            return EMPTY
        self.inprog.add(key)
        self.depth += 1
        try:
            r = compute()
        finally:
            self.depth -= 1
            self.inprog.discard(key)
        self.memo[key] = r
        return r

    def next_round(self) -> bool:
        """True when a value read across a cycle is not final yet (run the analysis again)."""
        stale = any(_relevant(self.memo.get(k, EMPTY)) != _relevant(v)
                    for k, v in self.cycle_reads.items())
        if stale:
            self.prev = self.memo
            self.memo = {}
            self.cycle_reads = {}
            self.envs = {}
        return stale

    # -- modules -----------------------------------------------------------------------
    def resolve_module(self, mod: Mod, module: str, level: int) -> str:
        if level == 0:
            if module in self.modnames:
                return module
            from analyzer.sites.reach import under_importer_root

            return under_importer_root(mod.name, module, self.modnames) or module
        base = mod.name.split(".") if mod.is_pkg else mod.name.split(".")[:-1]
        if level > 1:
            base = base[: len(base) - (level - 1)] if level - 1 <= len(base) else []
        return ".".join([*base, module] if module else base)

    def tree_module(self, name: str) -> str | None:
        """The dotted name as the tree knows it (exact, else a unique suffix match)."""
        if name in self.modnames:
            return name
        suffix = "." + name
        hits = [n for n in self.modnames if n.endswith(suffix)]
        return hits[0] if len(hits) == 1 else None

    def module_obj(self, name: str) -> Mod | None:
        m = self.by_name.get(name)
        if m is not None:
            return m
        if name in self.modnames and not self.loaded(self.modnames[name]):
            return None
        return None

    def import_value(self, mod: Mod, item, scope: Fn) -> frozenset:
        local, module, attr, level, pos = item
        absmod = self.resolve_module(mod, module, level)
        if attr is None:  # import a.b.c (binds a) / import a.b as c (binds a.b)
            return self._module_ref(absmod)
        if attr == "*":
            return EMPTY
        e = B.entry_for(absmod, attr)
        if e is not None:
            rec = self.binding(mod, scope, local, pos, "import", (), via=())
            v = FAFunc(e, (), rec, (f"{e.qual} imported as {local} ({mod.path}:{pos[0] if pos else 0})",))
            self.records[rec]["values"].add(v)
            return frozenset({(v, EMPTY)})
        sub = B.submodule(absmod, attr)
        if sub is not None:
            return frozenset({(ModRef(sub, False), EMPTY)})
        if B.fa_version_of_module(absmod):
            return frozenset({(Opaque(f"{absmod}.{attr} (not a window-taking entry point)"), EMPTY)})
        tm = self.tree_module(absmod)
        if tm is not None:
            vals = self.module_attr(tm, attr)
            if any(isinstance(v, FAFunc) for v, _ in vals):
                kind = "reexport"
                self.binding(mod, scope, local, pos, kind,
                             tuple(v for v, _ in vals if isinstance(v, FAFunc)), via=())
            return vals
        full = f"{absmod}.{attr}"
        tsub = self.tree_module(full)
        if tsub is not None:
            return frozenset({(ModRef(tsub, True), EMPTY)})
        return frozenset({(ExtRef(full), EMPTY)})

    def _module_ref(self, name: str) -> frozenset:
        if B.fa_version_of_module(name):
            return frozenset({(ModRef(name, False), EMPTY)})
        tm = self.tree_module(name)
        if tm is not None:
            return frozenset({(ModRef(tm, True), EMPTY)})
        return frozenset({(ModRef(name, False), EMPTY)})

    def module_attr(self, tm: str, attr: str) -> frozenset:
        """``from tm import attr`` / ``tm.attr`` for an in-tree module."""
        m = self.by_name.get(tm)
        if m is None:
            full = f"{tm}.{attr}"
            if full in self.modnames:
                return frozenset({(ModRef(full, True), EMPTY)})
            return frozenset({(Unloaded(tm, attr), EMPTY)})
        env = self.env(m)
        if attr in env:
            return self.force(env[attr])
        full = f"{tm}.{attr}"
        if full in self.modnames:
            return frozenset({(ModRef(full, True), EMPTY)})
        return frozenset({(Opaque(f"{tm}.{attr} not bound at module level"), EMPTY)})

    def attr_value(self, base_vals, attr: str, fn: Fn | None) -> frozenset:
        out = set()
        for v, f in base_vals:
            if isinstance(v, ModRef):
                if v.tree:
                    for w, g in self.module_attr(v.name, attr):
                        out.add((w, f | g))
                else:
                    e = B.entry_for(v.name, attr)
                    if e is not None:
                        out.add((FAFunc(e, (), None, (f"{e.qual} reached as an attribute",)), f))
                        continue
                    sub = B.submodule(v.name, attr)
                    if sub is not None:
                        out.add((ModRef(sub, False), f))
                    else:
                        out.add((ExtRef(f"{v.name}.{attr}"), f))
            elif isinstance(v, ExtRef):
                out.add((ExtRef(f"{v.qual}.{attr}"), f))
            elif isinstance(v, ClassRef):
                cls = self.clss.get(v.key)
                if cls is not None and attr in cls.methods:
                    out.add((FuncRef(cls.methods[attr].key), f))
                else:
                    out.add((Opaque(f"class attribute {attr}"), f))
            elif isinstance(v, Unloaded):
                out.add((Unloaded(v.module, f"{v.name}.{attr}"), f))
            else:
                out.add((Opaque(f"attribute {attr}"), f))
        return frozenset(out)

    # -- module-level ordered interpretation -------------------------------------------
    def env(self, m: Mod) -> dict:
        e = self.envs.get(m.path)
        if e is not None:
            return e
        if m.path in self.env_inprog:   # import cycle: what is known so far
            self.cyc = True
            return self._partial.get(m.path, {})
        self.env_inprog.add(m.path)
        if not hasattr(self, "_partial"):
            self._partial = {}
        env: dict = {}
        self._partial[m.path] = env
        try:
            env = self._run(m, m.ir.body, env)
        finally:
            self.env_inprog.discard(m.path)
        self.envs[m.path] = env
        return env

    def force(self, parts) -> frozenset:
        if isinstance(parts, frozenset):
            return parts
        out = set()
        for p in parts:
            out |= (p() if callable(p) else p)
        return frozenset(out)

    def _run(self, m: Mod, stmts, env: dict) -> dict:
        ctx = _ModCtx(self, m, env)
        for st in stmts:
            tag = st[0]
            ctx.env = env
            if tag == "imp":
                for item in st[1]:
                    local, module, attr, level, pos = item
                    if local == "*":
                        absmod = self.resolve_module(m, module, level)
                        for e in B.all_entries(absmod):
                            rec = self.binding(m, m.top, e.name, pos, "import", (), via=())
                            v = FAFunc(e, (), rec, (f"{e.qual} via import * ({m.path})",))
                            self.records[rec]["values"].add(v)
                            env[e.name] = frozenset({(v, EMPTY)})
                        continue
                    absmod = self.resolve_module(m, module, level)
                    if attr is not None and (B.entry_for(absmod, attr) or B.fa_version_of_module(absmod)):
                        env[local] = self.import_value(m, item, m.top)
                    else:
                        env[local] = (_Lazy(self, m, item),)
            elif tag == "asg":
                _, targets, value, pos = st
                vals = self.eval(ctx, value)
                for t in targets:
                    self._bind_top(m, env, t, value, vals, pos)
            elif tag == "aug":
                pass
            elif tag == "if":
                e1 = self._run(m, st[3], dict(env))
                e2 = self._run(m, st[4], dict(env))
                env = _join(e1, e2)
            elif tag == "try":
                _, body, handlers, orelse, final = st
                pre = dict(env)
                after = self._run(m, body, dict(env))
                start = _join(pre, after)
                outs = [self._run(m, hb, dict(start)) for _, hb in handlers]
                after_else = self._run(m, orelse, after)
                env = _join(after_else, *outs)
                env = self._run(m, final, env)
            elif tag == "loop":
                _, target, it, body, orelse = st
                if target is not None:
                    self._bind_top(m, env, target, ("O",), frozenset({(Opaque("loop variable"), EMPTY)}), None)
                e1 = self._run(m, body, dict(env))
                env = _join(env, e1)
                env = self._run(m, orelse, env)
            elif tag == "with":
                for _, t in st[1]:
                    if t is not None:
                        self._bind_top(m, env, t, ("O",), frozenset({(Opaque("with target"), EMPTY)}), None)
                env = self._run(m, st[2], env)
            elif tag == "def":
                f = st[1]
                fn = m.functions.get(f.qualname)
                env[f.name] = frozenset({(FuncRef(fn.key), EMPTY)})
            elif tag == "cls":
                c = st[1]
                env[c.name] = frozenset({(ClassRef((m.path, c.qualname)), EMPTY)})
            elif tag == "blk":
                outs = [self._run(m, b, dict(env)) for b in st[1]]
                env = _join(env, *outs)
        return env

    def _bind_top(self, m: Mod, env: dict, t, value_expr, vals: frozenset, pos):
        tag = t[0]
        if tag == "N":
            name = t[1]
            fa = [v for v, _ in vals if isinstance(v, FAFunc)]
            if fa:
                untagged = [v for v in fa if v.binding is None]
                kind = "wrap" if any(v.chain for v in untagged) else "alias"
                if untagged:
                    rec = self.binding(m, m.top, name, pos, kind, (), via=tuple(untagged[0].via))
                    line = pos[0] if pos else 0
                    vals = frozenset(
                        ((FAFunc(v.entry, v.chain, rec,
                                 v.via + (f"{name} = {expr_label(value_expr)} ({m.path}:{line})",))
                          if isinstance(v, FAFunc) and v.binding is None else v), f)
                        for v, f in vals)
                    self.records[rec]["values"].update(
                        v for v, _ in vals if isinstance(v, FAFunc) and v.binding == rec)
                else:
                    self.binding(m, m.top, name, pos, "alias", tuple(fa), via=())
            if value_expr[0] == "C" and len(value_expr[2]) == 1 and value_expr[2][0][2][0] == "N":
                k = (m.path, value_expr[2][0][2][1])
                self.wrap_arg_uses[k] = self.wrap_arg_uses.get(k, 0) + 1
            env[name] = vals
        elif tag == "S" and t[1][0] == "N":
            base = t[1][1]
            key = t[2]
            if base in env and key[0] == "K" and key[1] in WINDOW_KEYS:
                site = Site(m.path, _pt(t[3]), key[1], "subscript-store", m.top.key,
                            self.ref(value_expr), _pt(pos))
                ent = WinEntry(site, EMPTY, ())
                env[base] = frozenset(
                    ((DictVal(v.alloc, v.entries | {ent}, v.opaque) if isinstance(v, DictVal) else v), f)
                    for v, f in self.force(env[base]))
        elif tag == "T":
            for sub in t[1]:
                self._bind_top(m, env, sub, ("O",), frozenset({(Opaque("unpacked"), EMPTY)}), pos)

    def binding(self, m: Mod, scope: Fn, name: str, pos, kind: str, values: tuple, via) -> str:
        line, col = (pos[0], pos[1]) if pos and isinstance(pos[0], int) else (0, 0)
        k = (m.path, scope.qualname, name, line, col)
        rec = self.binding_records.get(k)
        if rec is None:
            rec = {"id": f"B{len(self.binding_records) + 1}", "path": m.path, "line": line,
                   "col": col, "pos": pos, "scope": scope.qualname, "name": name, "kind": kind,
                   "values": set(), "via": via}
            self.binding_records[k] = rec
            self.records[rec["id"]] = rec
        rec["values"].update(values)
        return rec["id"]

    # -- name lookup -----------------------------------------------------------------------
    def lookup(self, fn: Fn, name: str, static: bool) -> frozenset:
        if fn.ir is None:  # module top level: the final environment
            return self.global_value(fn.mod, name)
        if name in fn.globals:
            return self.global_value(fn.mod, name)
        if name in fn.defs:
            return self._memo(("name", fn.key, name, static), lambda: self._local(fn, name, static))
        p = fn.parent
        while p is not None:
            if name in p.defs and name not in p.globals:
                vals = self._memo(("name", p.key, name, static), lambda p=p: self._local(p, name, static))
                return frozenset((v, EMPTY) for v, _ in vals)
            p = p.parent
        return self.global_value(fn.mod, name)

    def global_value(self, m: Mod, name: str) -> frozenset:
        env = self.env(m)
        rebinders = self._global_rebinders(m).get(name)
        if rebinders:
            # a function that declares ``global name`` and assigns it: after it runs, the module
            # name holds what it assigned (it may run before any use)
            out = set(self.force(env[name])) if name in env else set()
            for f in rebinders:
                out |= self._memo(("global", f.key, name),
                                  lambda f=f: self._local(f, name, False))
            return frozenset(out)
        if name in env:
            return self.force(env[name])
        if name in _BUILTINS:
            return frozenset({(ExtRef(f"builtins.{name}"), EMPTY)})
        return frozenset({(Opaque(f"unbound name {name}"), EMPTY)})

    def _global_rebinders(self, m: Mod) -> dict:
        """name -> the functions of ``m`` that declare it ``global`` and assign it."""
        r = m.__dict__.get("_rebinders")
        if r is None:
            r = {}
            for f in m.all_fns:
                if f.ir is not None:
                    for n in f.globals & set(f.defs):
                        r.setdefault(n, []).append(f)
            m._rebinders = r
        return r

    def _local(self, fn: Fn, name: str, static: bool) -> frozenset:
        out = set()
        ctx = _FnCtx(self, fn, static)
        for kind, payload, guards in fn.defs[name]:
            g = fn.guards(guards)
            if kind == "expr":
                value, pos = payload
                line = pos[0] if pos and isinstance(pos[0], int) else 0
                for v, f in self.eval(ctx, value):
                    ff = f | g
                    if consistent(ff):
                        if isinstance(v, FAFunc):
                            v = FAFunc(v.entry, v.chain, v.binding,
                                       v.via + (f"{name} = {expr_label(value)} ({fn.mod.path}:{line})",))
                        out.add((v, ff))
            elif kind == "import":
                for v, f in self.import_value(fn.mod, payload, fn):
                    out.add((v, f | g))
            elif kind == "def":
                out.add((FuncRef(payload.key), g))
            elif kind == "class":
                out.add((ClassRef(payload.key), g))
            elif kind == "param":
                if not static:
                    out |= self.param_values(fn, name, payload)
            else:
                out.add((Opaque(str(payload)), g))
        return frozenset(out)

    # -- parameters ------------------------------------------------------------------------
    def callers(self, fn: Fn) -> list:
        """In-tree call edges into ``fn``: (caller Fn, call, guards, tte, shift)."""
        term = fn.cls.ir.name if fn.cls is not None else fn.name
        # a nested function is only called by name from its own file
        if self.search_ok and "<locals>" not in fn.qualname and term not in self._callers_searched:
            self._callers_searched.add(term)
            self.request_callers(term)
        if self._callers is None:
            self._callers = {}
            for f in list(self.fns.values()):
                for call, guards, tte in f.calls:
                    for target, shift in self.static_callees(f, call):
                        self._callers.setdefault(target, []).append((f, call, f.guards(guards), tte, shift))
        return self._callers.get(fn.key, [])

    def static_callees(self, fn: Fn, call) -> list:
        func = call[1]
        out = []
        if func[0] == "A" and func[2] == "apply":
            for v, _ in self.eval(_FnCtx(self, fn, True), func[1]):
                if isinstance(v, ClassRef):
                    cls = self.clss.get(v.key)
                    if cls is not None and "forward" in cls.methods:
                        out.append((cls.methods["forward"].key, 1))
            return out
        if func[0] == "A" and func[1][0] == "N" and fn.cls is not None and func[1][1] == fn.first_param:
            m = fn.cls.methods.get(func[2])
            if m is not None:
                out.append((m.key, 1))
            return out
        for v, _ in self.eval(_FnCtx(self, fn, True), func):
            if isinstance(v, FuncRef):
                out.append((v.key, 0))
            elif isinstance(v, ClassRef):
                cls = self.clss.get(v.key)
                if cls is not None and "__init__" in cls.methods:
                    out.append((cls.methods["__init__"].key, 1))
        return out

    def param_values(self, fn: Fn, name: str, payload) -> frozenset:
        index, kind, default = payload
        out = set()
        ext = Opaque(f"parameter {name} of {fn.qualname} (callers outside the tree)", fn.key)
        out.add((ext, EMPTY))
        if default is not None:
            defctx = _FnCtx(self, fn.parent, False) if fn.parent is not None else _ModCtx(self, fn.mod, None)
            for v, _ in self.eval(defctx, default):
                out.add((v, EMPTY))
        for caller, call, guards, tte, shift in self.callers(fn):
            out |= self._arg_values(fn, name, index, kind, caller, call, guards, shift)
        return frozenset(out)

    def _arg_map(self, callee: Fn, caller: Fn, call, shift: int):
        """Static part of a call edge: sources of named parameters from plain positional and
        keyword arguments, and the fact-key mapping (caller key -> callee parameter)."""
        e = self._edge(callee, caller, call, shift, static=True)
        return e["pos_names"], None, None, e["src"], e["keymap"], [], []

    def _edge(self, callee: Fn, caller: Fn, call, shift: int, static: bool = False) -> dict:
        """How one call binds the callee's parameters.

        ``src``: param -> [(expr, fnkey, facts, exact)]; ``keymap``: caller fact key -> param
        (arguments at exact positions that are plain names / dotted names); ``consts``: param ->
        bool for ``True``/``False`` literals; ``extra_pos`` / ``extra_kw`` feed ``*args`` /
        ``**kwargs`` parameters. ``*lists`` are mapped by position while their lengths are known.
        """
        key = ("edge", callee.key, id(call), shift, static)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        params = callee.params[shift:]
        pos_names = [p[0] for p in params if p[1] == "pos"]
        named = {p[0] for p in params if p[1] in ("pos", "kwonly")}
        src: dict[str, list] = {}
        keymap: dict[str, str] = {}
        consts: dict[str, bool] = {}
        extra_pos: list = []
        extra_kw: list = []
        offset, exact = 0, True
        ctx = _FnCtx(self, caller, True)

        def put(i_exact, lower, expr, fnkey, facts):
            if i_exact is not None:
                if i_exact < len(pos_names):
                    pn = pos_names[i_exact]
                    src.setdefault(pn, []).append((expr, fnkey, facts, True))
                    k = _keyof(expr)
                    if k is not None and fnkey == caller.key:
                        keymap[k] = pn
                    if expr[0] == "N" and expr[1] in ("True", "False"):
                        consts[pn] = expr[1] == "True"
                else:
                    extra_pos.append((i_exact, expr, fnkey, facts))
            else:
                for pn in pos_names[lower:]:
                    src.setdefault(pn, []).append((expr, fnkey, facts, False))
                extra_pos.append((None, expr, fnkey, facts))

        for kind, kw, e, apos in call[2]:
            if kind == "p":
                put(offset if exact else None, offset, e, caller.key, EMPTY)
                offset += 1
            elif kind == "*":
                lens = set()
                lists = []
                for v, f in self.eval(ctx, e):
                    if isinstance(v, ListVal):
                        lists.append((v, f))
                        lens.add(v.base_len if v.exact else None)
                    else:
                        lens.add(None)
                        src.setdefault("*unknown*", []).append((e, caller.key, f, False))
                for v, f in lists:
                    for idx, eid, efacts in v.elems:
                        ee = self.exprs[eid]
                        ff = (efacts | f) if v.fn == caller.key else EMPTY
                        if exact and v.exact and idx is not None and len(lens) == 1:
                            put(offset + idx, offset, ee, v.fn, ff)
                        else:
                            put(None, offset, ee, v.fn, ff)
                if len(lens) == 1 and None not in lens:
                    offset += next(iter(lens))
                else:
                    exact = False
                    offset += min((n for n in lens if n is not None), default=0)
            elif kind == "k":
                if kw in named:
                    src.setdefault(kw, []).append((e, caller.key, EMPTY, True))
                    k = _keyof(e)
                    if k is not None:
                        keymap[k] = kw
                    if e[0] == "N" and e[1] in ("True", "False"):
                        consts[kw] = e[1] == "True"
                else:
                    extra_kw.append((kw, e, apos))
            elif kind == "**":
                extra_kw.append((None, e, apos))
        keymap = {k: v for k, v in keymap.items() if caller.valid_key(k) and callee.valid_key(v)}
        r = {"pos_names": pos_names, "src": src, "keymap": keymap, "consts": consts,
             "extra_pos": extra_pos, "extra_kw": extra_kw}
        self.memo[key] = r
        return r

    @staticmethod
    def _const_ok(facts, consts) -> bool:
        return all(consts.get(k, b) == b for k, b in facts)

    def _arg_values(self, callee: Fn, name, index, kind, caller: Fn, call, guards, shift) -> set:
        edge = self._edge(callee, caller, call, shift)
        keymap, consts = edge["keymap"], edge["consts"]
        out = set()
        line = call[3][0] if isinstance(call[3][0], int) else 0
        step = f"parameter {name} of {callee.qualname} <- call at {caller.mod.path}:{line}"

        def add(expr, fnkey, facts):
            efn = self.fns.get(fnkey)
            if efn is None:
                return
            ectx = _FnCtx(self, efn, False) if efn.ir is not None else _ModCtx(self, efn.mod, None)
            for v, f in self.eval(ectx, expr):
                ff = (f if fnkey == caller.key else EMPTY) | facts | guards
                if not consistent(ff):
                    continue
                tf = frozenset((keymap[k], b) for k, b in ff if k in keymap)
                if not self._const_ok(tf, consts):
                    continue
                out.add((_translate_value(v, keymap, step), tf))

        if kind in ("pos", "kwonly"):
            for expr, fnkey, facts, _ in edge["src"].get(name, []):
                add(expr, fnkey, facts)
            if kind == "pos" and edge["src"].get("*unknown*"):
                out.add((Opaque(f"*args of unknown shape at {caller.mod.path}:{line}"), EMPTY))
        elif kind == "var":
            elems = tuple((i, self.ref(expr), facts) for i, expr, fnkey, facts in edge["extra_pos"]
                          if fnkey == caller.key)
            out.add((ListVal(("varargs", caller.key, line), caller.key, elems, len(elems),
                             all(i is not None for i, _, _ in elems)), EMPTY))
        elif kind == "kw":
            entries = set()
            opaque = set()
            ctx = _FnCtx(self, caller, False)
            for kw, e, apos in edge["extra_kw"]:
                if kw is None:
                    for v, f in self.eval(ctx, e):
                        if isinstance(v, DictVal):
                            entries |= v.entries
                            opaque |= v.opaque
                        elif not isinstance(v, (Const, ListVal)):
                            opaque.add(_why(v))
                elif kw in WINDOW_KEYS:
                    entries.add(WinEntry(Site(caller.mod.path, _pt(apos), kw, "keyword", caller.key,
                                              self.ref(e)), guards, ()))
            dv = DictVal(("kwargs", caller.key, line), frozenset(entries), frozenset(opaque))
            out.add((_translate_value(dv, keymap, step), EMPTY))
        return out

    # -- dict contents ----------------------------------------------------------------------
    def local_mutations(self, fn: Fn, name: str) -> tuple[frozenset, frozenset]:
        """Window entries (and opaque reasons) written into whatever ``name`` holds, by
        ``fn`` itself and by the in-tree helpers it passes ``name`` to."""
        saved, self.search_ok = self.search_ok, False
        try:
            return self._memo(("mut", fn.key, name), lambda: self._mutations(fn, name))
        finally:
            self.search_ok = saved

    def _mutations(self, fn: Fn, name: str):
        entries = set()
        opaque = set()
        for idx, value, guards, spos, apos in fn.sub_stores.get(name, []):
            g = fn.guards(guards)
            if idx[0] == "K":
                if idx[1] in WINDOW_KEYS:
                    site = Site(fn.mod.path, _pt(spos), idx[1], "subscript-store", fn.key,
                                self.ref(value), _pt(apos))
                    entries.add(WinEntry(site, g, ()))
            else:
                opaque.add(f"{name}[{expr_label(idx)}] = ... (key not a constant)")
        for call, guards in fn.updates.get(name, []):
            g = fn.guards(guards)
            e2, o2 = self._dict_from_args(fn, call, "update", g, skip_first=False)
            entries |= e2
            opaque |= o2
        # helpers that get the dict as an argument
        for call, guards, tte in fn.calls:
            args = call[2]
            if not any(a[2] == ("N", name) for a in args):
                continue
            for target, shift in self.static_callees(fn, call):
                callee = self.fns.get(target)
                if callee is None or callee.ir is None:
                    continue
                pos_names, var, kwp, src, keymap, _, _ = self._arg_map(callee, fn, call, shift)
                inv = {v: k for k, v in keymap.items()}
                for pname, sources in src.items():
                    if pname.startswith("*"):
                        continue
                    if any(x[0] == ("N", name) and x[1] == fn.key for x in sources):
                        ce, co = self.local_mutations(callee, pname)
                        for ent in ce:
                            entries.add(WinEntry(ent.site, frozenset(
                                (inv[k], b) for k, b in ent.facts if k in inv) | fn.guards(guards),
                                ent.via))
                        opaque |= co
        return frozenset(entries), frozenset(opaque)

    def _dict_from_args(self, fn: Fn, call, style: str, g, skip_first: bool):
        entries = set()
        opaque = set()
        ctx = _FnCtx(self, fn, False)
        for kind, kw, e, apos in call[2]:
            if kind == "k":
                if kw in WINDOW_KEYS:
                    entries.add(WinEntry(Site(fn.mod.path, _pt(apos), kw, style, fn.key, self.ref(e)), g, ()))
            elif kind in ("p", "**"):
                if e[0] == "D":
                    for v, f in self.eval(ctx, e):
                        if isinstance(v, DictVal):
                            for ent in v.entries:
                                site = ent.site
                                if site.style == "dict-literal" and style == "update":
                                    site = Site(site.path, site.pos, site.key, "update", site.fn,
                                                site.expr_id, site.tspan)
                                entries.add(WinEntry(site, ent.facts | g, ent.via))
                            opaque |= v.opaque
                    continue
                for v, f in self.eval(ctx, e):
                    if isinstance(v, DictVal):
                        for ent in v.entries:
                            entries.add(WinEntry(ent.site, ent.facts | f | g, ent.via))
                        opaque |= v.opaque
                    elif not (isinstance(v, Const) or isinstance(v, ListVal)):
                        opaque.add(_why(v))
            elif kind == "*":
                opaque.add("*args into a dict")
        return frozenset(entries), frozenset(opaque)

    # -- expressions -------------------------------------------------------------------------
    def eval(self, ctx, e) -> frozenset:
        tag = e[0]
        if tag == "N":
            name = e[1]
            if name in ("None", "True", "False"):
                return frozenset({(Const({"None": None, "True": True, "False": False}[name]), EMPTY)})
            vals = ctx.lookup(name)
            if isinstance(ctx, _FnCtx) and not ctx.static and ctx.fn is not None \
                    and ctx.fn.ir is not None and name in ctx.fn.defs \
                    and any(isinstance(v, Opaque) and v.param_of == ctx.fn.key for v, _ in vals) \
                    and (ctx.fn.sub_stores.get(name) or ctx.fn.updates.get(name)):
                # a parameter dict from unseen callers: what this function writes into it
                # still reaches wherever it goes
                vals = vals | {(DictVal(("param", ctx.fn.key, name)), EMPTY)}
            if isinstance(ctx, _FnCtx) and not ctx.static and ctx.fn is not None \
                    and any(isinstance(v, (DictVal, ListVal)) for v, _ in vals):
                ents, opq = self.local_mutations(ctx.fn, name)
                ext = ctx.fn.list_ext.get(name, [])
                if ents or opq or ext:
                    out = set()
                    for v, f in vals:
                        if isinstance(v, DictVal) and (ents or opq):
                            v = DictVal(v.alloc, v.entries | ents, v.opaque | opq)
                        elif isinstance(v, ListVal) and ext:
                            more = tuple((None, self.ref(x[1] if x[0] == "*" else x), ctx.fn.guards(g))
                                         for elts, g in ext for x in elts)
                            v = ListVal(v.alloc, v.fn, v.elems + more, v.base_len, False)
                        out.add((v, f))
                    return frozenset(out)
            return vals
        if tag == "K":
            return frozenset({(Const(e[1]), EMPTY)})
        if tag == "A":
            base = e[1]
            if isinstance(ctx, _FnCtx) and ctx.fn is not None and ctx.fn.cls is not None \
                    and base[0] == "N" and base[1] == ctx.fn.first_param:
                return self.self_attr(ctx.fn, e[2], ctx.static)
            return self.attr_value(self.eval(ctx, base), e[2], getattr(ctx, "fn", None))
        if tag == "C":
            return self.eval_call(ctx, e)
        if tag == "D":
            return self.eval_dict(ctx, e)
        if tag == "L" or tag == "T":
            fnkey = ctx.fn.key if getattr(ctx, "fn", None) is not None else ctx.mod.top.key
            elems = []
            exact = True
            for i, x in enumerate(e[1]):
                if x[0] == "*":
                    exact = False
                    continue
                elems.append((i if exact else None, self.ref(x), EMPTY))
            alloc = ("list", fnkey, id(e))
            return frozenset({(ListVal(alloc, fnkey, tuple(elems), len(elems), exact), EMPTY)})
        if tag == "I":
            return self.eval(ctx, e[1]) | self.eval(ctx, e[2])
        if tag == "S":
            idx = e[2]
            out = set()
            for v, f in self.eval(ctx, e[1]):
                if isinstance(v, ListVal) and idx[0] == "K" and isinstance(idx[1], int) and v.exact:
                    for i, eid, ef in v.elems:
                        if i == idx[1]:
                            ectx = _FnCtx(self, self.fns[v.fn], ctx.static) if v.fn in self.fns and self.fns[v.fn].ir is not None else ctx
                            out |= {(w, g | f) for w, g in self.eval(ectx, self.exprs[eid])}
                else:
                    out.add((Opaque(f"{expr_label(e)}"), f))
            return frozenset(out)
        if tag == "*":
            return self.eval(ctx, e[1])
        return frozenset({(Opaque("expression"), EMPTY)})

    def self_attr(self, fn: Fn, attr: str, static: bool) -> frozenset:
        """``self.x`` / ``ctx.x``: every ``<first param>.x = ...`` in the class's methods (the
        autograd ctx round trip: saved in forward, read in backward)."""
        cls = fn.cls

        def compute():
            out = set()
            found = False
            for m in cls.methods.values():
                if m.first_param is None:
                    continue
                for value, guards, pos in m.attr_stores.get((m.first_param, attr), []):
                    found = True
                    line = pos[0] if pos and isinstance(pos[0], int) else 0
                    for v, f in self.eval(_FnCtx(self, m, static), value):
                        if isinstance(v, FAFunc):
                            v = FAFunc(v.entry, v.chain, v.binding,
                                       v.via + (f"{m.first_param}.{attr} set in {m.qualname} "
                                                f"({m.mod.path}:{line})",))
                        out.add((v, EMPTY))
            if attr in cls.methods:
                found = True
                out.add((FuncRef(cls.methods[attr].key), EMPTY))
            if not found:
                out.add((Opaque(f"{fn.first_param}.{attr}"), EMPTY))
            return frozenset(out)
        return self._memo(("selfattr", cls.key, attr, static), compute)

    def eval_dict(self, ctx, e) -> frozenset:
        fn = ctx.fn if getattr(ctx, "fn", None) is not None else ctx.mod.top
        entries = set()
        opaque = set()
        for k, v, pos in e[1]:
            if k is None:
                for w, f in self.eval(ctx, v):
                    if isinstance(w, DictVal):
                        entries |= {WinEntry(x.site, x.facts | f, x.via) for x in w.entries}
                        opaque |= w.opaque
                    else:
                        opaque.add(_why(w))
            elif k[0] == "K":
                if k[1] in WINDOW_KEYS:
                    entries.add(WinEntry(Site(fn.mod.path, _pt(pos), k[1], "dict-literal", fn.key,
                                              self.ref(v)), EMPTY, ()))
            else:
                opaque.add(f"{{{expr_label(k)}: ...}} (key not a constant)")
        return frozenset({(DictVal(("dict", fn.key, id(e)), frozenset(entries), frozenset(opaque)), EMPTY)})

    def eval_call(self, ctx, e) -> frozenset:
        func, args = e[1], e[2]
        fn = ctx.fn if getattr(ctx, "fn", None) is not None else ctx.mod.top
        # wrapping: w(f) / w()(f) / w(f, *more) with f an FA entry point as the first
        # positional argument (partial(f, ...), wrap(f, size_at=7)): a layer of f's chain,
        # judged later by running the whole call expression (analyzer.sites.behaviour)
        if args and args[0][0] == "p":
            inner = self.eval(ctx, args[0][2])
            fa = [(v, f) for v, f in inner if isinstance(v, FAFunc)]
            if fa:
                wref = self.wrapper_ref(ctx, func)
                line = e[3][0] if isinstance(e[3][0], int) else 0
                label = wref.label if len(args) == 1 else f"{wref.label}(..., +{len(args) - 1})"
                wref = WrapRef(wref.kind if len(args) == 1 else "other", label, wref.key,
                               (fn.mod.path, line, e[3][1] if len(e[3]) > 1 else 0))
                return frozenset(
                    (FAFunc(v.entry, v.chain + (wref,), None,
                            v.via + (f"wrapped by {wref.label} ({fn.mod.path}:{line})",)), f)
                    for v, f in fa) | frozenset({(Opaque(f"result of {wref.label}"), EMPTY)})
        out = set()
        saved, self.search_ok = self.search_ok, False   # results of calls: no caller search
        try:
            return self._eval_call_rest(ctx, e, func, args, fn)
        finally:
            self.search_ok = saved

    def _eval_call_rest(self, ctx, e, func, args, fn) -> frozenset:
        out = set()
        callee_vals = self.eval(ctx, func)
        for v, f in callee_vals:
            if isinstance(v, FuncRef):
                target = self.fns.get(v.key)
                if target is None or target.ir is None:
                    out.add((Opaque("call"), f))
                    continue
                shift = 1 if (target.cls is not None and func[0] == "A" and func[1][0] == "N"
                              and fn.cls is not None and func[1][1] == fn.first_param) else 0
                out |= self.returns(ctx, target, e, shift)
            elif isinstance(v, ExtRef) and v.qual == "builtins.dict":
                ents, opq = self._dict_from_args(fn, e, "dict-call", EMPTY, skip_first=False)
                out.add((DictVal(("dictcall", fn.key, id(e)), ents, opq), f))
            elif isinstance(v, Unloaded):
                if any(self._fa_ish(ctx, a[2]) for a in args):
                    self.request_load(v.module)
                out.add((Opaque(f"call into {v.module}"), f))
            elif isinstance(v, ClassRef):
                out.add((Opaque("instance"), f))
            else:
                out.add((Opaque(f"result of {expr_label(func)}()"), f))
        if func[0] == "A" and func[2] == "copy":
            for v, f in self.eval(ctx, func[1]):
                if isinstance(v, DictVal):
                    out.add((v, f))
        return frozenset(out)

    def _fa_ish(self, ctx, e) -> bool:
        for v, _ in self.eval(ctx, e):
            if isinstance(v, FAFunc) or (isinstance(v, DictVal) and v.entries):
                return True
        return False

    def returns(self, ctx, target: Fn, call, shift: int) -> frozenset:
        caller = ctx.fn if getattr(ctx, "fn", None) is not None else None
        static = getattr(ctx, "static", False)
        rets = self._memo(("ret", target.key, static),
                          lambda: frozenset((v, f | target.guards(g))
                                            for expr, g in target.returns
                                            for v, f in self.eval(_FnCtx(self, target, static), expr)))
        if caller is None or caller.ir is None:
            return frozenset((v, EMPTY) for v, _ in rets)
        edge = self._edge(target, caller, call, shift, static=True)
        keymap, consts = edge["keymap"], edge["consts"]
        inv = {v: k for k, v in keymap.items()}
        out = set()
        for v, f in rets:
            if isinstance(v, Opaque) and v.param_of == target.key:
                continue
            if not self._const_ok(f, consts):
                continue
            out.add((_translate_value(v, inv, f"returned by {target.qualname}"),
                     frozenset((inv[k], b) for k, b in f if k in inv)))
        return frozenset(out)

    def wrapper_ref(self, ctx, func) -> WrapRef:
        label = expr_label(func)
        if func[0] in ("N", "A"):
            for v, _ in self.eval(ctx, func):
                if isinstance(v, FuncRef):
                    target = self.fns.get(v.key)
                    if target is not None and (target.name in self.wrapper_names
                                               or target.qualname in self.wrapper_names):
                        return WrapRef("tree", label, v.key)
                if isinstance(v, ExtRef) and v.qual in B.FA4_PATCH_WRAPPERS:
                    return WrapRef("fa4_patch", label, (v.qual,))
                if isinstance(v, Unloaded):
                    self.request_load(v.module)
        return WrapRef("other", label)


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
        return self.solver._memo(("lazy", self.m.path, self.item[0], self.item[3], self.item[1], self.item[2]),
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


_BUILTINS = frozenset(dir(__builtins__) if isinstance(__builtins__, dict) is False else __builtins__) \
    | frozenset(dir(sys.modules["builtins"]))
