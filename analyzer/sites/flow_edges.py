"""Call edges: who calls a function, how each call binds its parameters, the values a
parameter gets from every in-tree caller, and what a call returns.

A part of ``flow.Solver`` (a mixin: its methods use the solver's state and each
other's through ``self``)."""

from __future__ import annotations

from analyzer.sites.flow_base import *  # noqa: F401,F403 - the flow layer's vocabulary
from analyzer.sites.flow_base import _deco_names
from analyzer.sites.ir import Attr, Call, Name

# decorators that keep a function's first result for later calls (``functools.cache``)
_CACHING = frozenset({"cache", "lru_cache", "cached", "memoize", "cached_property"})


class CallEdges:

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

    def static_callees(self, fn: Fn, call, find_overrides: bool = False) -> list:
        """(callee key, how many leading parameters the call binds itself) for each in-tree
        function ``call`` may run. ``find_overrides``: a ``self.method(...)`` call also asks
        for the files that name the class (its subclasses there may override the method)."""
        func = call.func
        out = []
        if isinstance(func, Attr) and func.attr == "apply":
            # an autograd Function's ``apply`` runs its ``forward`` (ctx first); a class that
            # defines ``apply`` itself is called like any method (below)
            own = False
            for v, _ in self.eval(_FnCtx(self, fn, True), func.base):
                if isinstance(v, ClassRef):
                    cls = self.clss.get(v.key)
                    if cls is not None and "apply" in cls.methods:
                        own = True
                    elif cls is not None and "forward" in cls.methods:
                        out.append((cls.methods["forward"].key, 1))
            if not own:
                return out
        if isinstance(func, Attr) and isinstance(func.base, Name) and fn.cls is not None \
                and func.base.id == fn.first_param:
            # ``self.helper(kw)`` runs the class's method or a subclass's override of it (by
            # simple names of bases, through the tree); a static method gets ``kw`` first
            for m in [fn.cls.methods.get(func.attr)] + self._overrides(fn.cls, func.attr,
                                                                         find_overrides):
                if m is not None:
                    out.append((m.key, 0 if is_static_method(m) else 1))
            return out
        for v, _ in self.eval(_FnCtx(self, fn, True), func):
            if isinstance(v, FuncRef):
                # ``Cls.method(...)``: a classmethod gets the class first
                target = self.fns.get(v.key)
                bound = isinstance(func, Attr) and target is not None and target.ir is not None \
                    and "classmethod" in _deco_names(target.ir.decorators)
                out.append((v.key, 1 if bound else 0))
            elif isinstance(v, ClassRef):
                cls = self.clss.get(v.key)
                if cls is not None and "__init__" in cls.methods:
                    out.append((cls.methods["__init__"].key, 1))
        return out

    def _overrides(self, cls, name: str, find: bool = False) -> list:
        """The methods named ``name`` that classes of the tree deriving from ``cls`` (by the
        simple names of their bases, transitively) define. ``find``: the files naming a
        class of the family are asked for (parsed in the next round)."""
        memo = self.__dict__.setdefault("_override_memo", {})
        key = (cls.key, name, find)
        if key not in memo:
            def simple(e):
                return e.id if isinstance(e, Name) else e.attr if isinstance(e, Attr) else None
            family, grew = {cls.ir.name}, True
            while grew:
                grew = False
                for other in self.clss.values():
                    if other.ir.name not in family and \
                            any(simple(b) in family for b in other.ir.bases):
                        family.add(other.ir.name)
                        grew = True
            if find:
                for member in sorted(family):
                    self.request_callers(member)
            memo[key] = [other.methods[name] for other in self.clss.values()
                         if other is not cls and other.ir.name in family
                         and any(simple(b) in family for b in other.ir.bases)
                         and name in other.methods]
        return memo[key]

    def param_values(self, fn: Fn, name: str, payload) -> Vals:
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
        pos_names = [p.name for p in params if p.kind == "pos"]
        named = {p.name for p in params if p.kind in ("pos", "kwonly")}
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
                    if isinstance(expr, Name) and expr.id in ("True", "False"):
                        consts[pn] = expr.id == "True"
                else:
                    extra_pos.append((i_exact, expr, fnkey, facts))
            else:
                for pn in pos_names[lower:]:
                    src.setdefault(pn, []).append((expr, fnkey, facts, False))
                extra_pos.append((None, expr, fnkey, facts))

        for kind, kw, e, apos in call.args:
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
                    if isinstance(e, Name) and e.id in ("True", "False"):
                        consts[kw] = e.id == "True"
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
        line = call.pos[0] if isinstance(call.pos[0], int) else 0
        step = f"parameter {name} of {callee.qualname} <- call at {caller.mod.path}:{line}"

        def add(expr, fnkey, facts):
            efn = self.fns.get(fnkey)
            if efn is None:
                return
            # a call made at module level reads the names as they are at its line, which a
            # later binding may have replaced since
            ectx = fn_context(self, efn) if efn.ir is not None else \
                _EverCtx(self, efn.mod, line or None)
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
            hidden = self.decorator_hides(callee)
            if hidden:
                # the call reaches the decorator's product: what it hands this body's ``**``
                # parameter may not be what the call passes (none of its entries is read)
                opaque.add(f"**{name} of {callee.qualname}, {hidden}")
            ctx = _FnCtx(self, caller, False)
            for kw, e, apos in () if hidden else edge["extra_kw"]:
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

    def fn_returns(self, target: Fn, static: bool = False) -> Vals:
        """Every value ``target``'s returns can give, with their facts, whoever calls it
        (memoised). A decorator that may put another function in its place makes that
        unknown (``decorator_hides``)."""
        hidden = self.decorator_hides(target)
        if hidden:
            return frozenset({(Opaque(f"what {target.qualname} returns ({hidden})"), EMPTY)})
        def compute():
            out = frozenset((v, f | target.guards(g)) for expr, g in target.returns
                            for v, f in self.eval(_FnCtx(self, target, static), expr))
            if target.ir is not None and _deco_names(target.ir.decorators) & _CACHING:
                # a cached function hands every caller the one container it made first: a
                # caller that changes it changes what the others get
                out = self._with_reason(out, f"what the cached {target.qualname} returns "
                                             "is one object its callers share and may change")
            return out
        return self._memo(("ret", target.key, static), compute)

    def decorator_hides(self, target: Fn) -> str:
        """Why a call of ``target`` may not run its body as written: a decorator that is not
        known to hand back a function returning what the body returns (staticmethod,
        classmethod, functools' caches, torch's grad modes and compilers) -- one from outside
        the tree (``@functools.singledispatch`` with its ``register``, a plugin registry), or
        one of the tree, whose effect the flow does not model (the sandbox runs it where a
        window expression calls the function). "" when none."""
        if target.ir is None or not target.ir.decorators:
            return ""
        memo = self.__dict__.setdefault("_deco_hides", {})
        if target.key in memo:
            return memo[target.key]
        ctx = _FnCtx(self, target.parent, False) if target.parent is not None \
            and target.parent.ir is not None else _ModCtx(self, target.mod, None)
        why = ""
        for d in target.ir.decorators:
            head = d.func if isinstance(d, Call) else d
            label = expr_label(d)
            if isinstance(head, Name) and head.id in ("staticmethod", "classmethod"):
                continue
            try:
                vals = self.eval(ctx, head)
            except RecursionError:
                vals = frozenset()
            if vals and all(isinstance(v, ExtRef) and v.qual in RETURN_KEEPING
                            and (not isinstance(d, Call) or v.qual in RETURN_KEEPING_FACTORIES)
                            for v, _ in vals):
                continue
            why = f"decorated by {label}, which may put another function in its place"
            break
        memo[target.key] = why
        return why

    def returns(self, ctx, target: Fn, call, shift: int) -> Vals:
        caller = ctx.fn if getattr(ctx, "fn", None) is not None else None
        static = getattr(ctx, "static", False)
        rets = self.fn_returns(target, static)
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
        if isinstance(func, (Name, Attr)):
            for v, _ in self.eval(ctx, func):
                if isinstance(v, FuncRef):
                    target = self.fns.get(v.key)
                    if target is not None and (target.name in self.wrapper_names
                                               or target.qualname in self.wrapper_names):
                        return WrapRef("tree", label, v.key)
                if isinstance(v, ExtRef) and v.qual in B.FA4_PATCH_WRAPPERS and \
                        not self.fa4_patch_tampered:
                    return WrapRef("fa4_patch", label, (v.qual,))
                if isinstance(v, Unloaded):
                    self.request_load(v.module)
        return WrapRef("other", label)
