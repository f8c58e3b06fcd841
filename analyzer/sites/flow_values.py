"""Values: the memo with its cycle cut, name lookup in a function's scopes, what an
expression evaluates to (calls, dicts, attributes), and local mutations.

A part of ``flow.Solver`` (a mixin: its methods use the solver's state and each
other's through ``self``)."""

from __future__ import annotations

import ast

from analyzer.sites.flow_base import *  # noqa: F401,F403 - the flow layer's vocabulary
from analyzer.sites.astutil import value_leaves
from analyzer.sites.flow_base import _READ_ONLY_CALLS, _is
from analyzer.sites.ir import (Assign, Attr, Block, Call, DictExpr, Either, If, ListExpr, Lit,
                              Name, Starred, Subscript, Try, TupleExpr, Unknown, UnknownWhy)


class Values:

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

    # -- name lookup -----------------------------------------------------------------------
    def lookup(self, fn: Fn, name: str, static: bool) -> Vals:
        if fn.ir is None:  # module top level: the final environment
            return self.global_value(fn.mod, name)
        if name in fn.globals:
            return self.global_value(fn.mod, name)
        if name in fn.defs and name not in fn.nonlocals:
            return self._memo(("name", fn.key, name, static),
                              lambda: self._local(fn, name, static)) | \
                self._nonlocal_stores(fn, name, static)
        own = frozenset()
        if name in fn.defs:     # nonlocal: its own bindings and the enclosing function's
            own = self._memo(("name", fn.key, name, static), lambda: self._local(fn, name, static))
        p = fn.parent
        while p is not None:
            if name in p.defs and name not in p.globals:
                vals = self._memo(("name", p.key, name, static), lambda p=p: self._local(p, name, static))
                vals = vals | self._nonlocal_stores(p, name, static)
                return own | frozenset((v, EMPTY) for v, _ in vals)
            p = p.parent
        return own | self.global_value(fn.mod, name)

    def _nonlocal_stores(self, owner: Fn, name: str, static: bool) -> Vals:
        """What functions nested in ``owner`` that declare ``name`` ``nonlocal`` bind it to
        (``def off(): nonlocal kernel; kernel = flash_attn_func``): once one runs, every reader
        of ``owner``'s variable sees that value."""
        out: set = set()
        for f in owner.mod.all_fns:
            if f is owner or name not in f.nonlocals or name not in f.defs:
                continue
            q = f.parent
            while q is not None and q is not owner and name not in q.defs:
                q = q.parent
            if q is owner:
                out |= {(v, EMPTY) for v, _ in self._memo(
                    ("name", f.key, name, static), lambda f=f: self._local(f, name, static))}
        return frozenset(out)

    def _local(self, fn: Fn, name: str, static: bool, entries=None) -> Vals:
        """The values of local ``name``'s bindings: all of them (read flow-insensitively), or
        ``entries`` (``reaching_defs`` at one line)."""
        out = set()
        ctx = _FnCtx(self, fn, static)
        for kind, payload, guards in (fn.defs[name] if entries is None else entries):
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

    def module_container_changed(self, vals) -> str:
        """Why a dict or list among ``vals`` built at a module's top level may hold other
        entries by the time it is read ("" when none can): see
        ``flow_base.module_container_escapes``."""
        for v, _ in vals:
            if isinstance(v, DictVal) and v.alloc[0] in ("dict", "dictcall"):
                key, eid = v.alloc[1], v.alloc[2]
            elif isinstance(v, ListVal) and v.alloc[0] == "list":
                key, eid = v.alloc[1], v.alloc[2]
            else:
                continue
            owner = self.fns.get(key)
            if owner is None or owner.ir is not None:
                continue                    # built in a function: its own flow reads it
            for name in _top_names_of(owner.mod, eid):
                why = module_container_escapes(owner.mod, name) or self._handed_out(owner.mod, name)
                if not why and isinstance(v, DictVal) and self._list_entries(v):
                    # a list it holds as a window may be changed through it in place
                    why = module_item_changes(owner.mod, name)
                if why:
                    return f"{owner.mod.path}: {why[0]}"
                other = "" if v.alloc[0] == "list" and _is_tuple_display(owner.mod, eid) \
                    else self._named_elsewhere(owner.mod.path, name)
                if other:
                    return (f"{name} of {owner.mod.path} is named in {other}, which may "
                            "change it")
        return ""

    def _handed_out(self, mod, name: str) -> tuple:
        """A module's own container handed out where the IR does not look: yielded by a
        generator (``yield KW``, ``yield from (KW,)``) or returned by a lambda (``get =
        lambda: KW``); its receivers may change it."""
        stores = getattr(self, "attr_stores", None)
        info = stores.index.by_path.get(mod.path) if stores is not None else None
        tree = info.tree if info is not None else None
        if tree is None:
            return ()
        for n in ast.walk(tree):
            if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Lambda)):
                body = n.body if isinstance(n, ast.Lambda) else n.value
                if body is not None and any(isinstance(x, ast.Name) and x.id == name
                                            for x in value_leaves(body)):
                    return (f"{name} is handed out by a generator or a lambda "
                            f"({mod.path}:{n.lineno}): its receivers may change it",)
        return ()

    def _named_elsewhere(self, path: str, name: str) -> str:
        """Another file of the tree that names ``name`` where it may change it
        (``detached.mutating_mention``: ``m.KW[...] = ...``, ``KW.update(...)``, an alias, a
        call's argument): the first one, or "" (also when the tree's text is not at hand)."""
        stores = getattr(self, "attr_stores", None)
        if stores is None:
            return ""
        memo = self.__dict__.setdefault("_elsewhere", {})
        key = (path, name)
        if key not in memo:
            from analyzer.sites.detached import changed_elsewhere

            memo[key] = changed_elsewhere(stores.data, path, name)
        return memo[key]

    def _held_container_changed(self, attr: str, vals) -> str:
        """Why a dict or list an object holds in attribute ``attr`` may hold other entries
        than the stores of the attribute put there: a file that stores an item through the
        attribute, calls a mutating method on it, aliases it or hands it to a call, or names
        it in a string (``detached.held_container_use``). "" when none does (or no text is
        at hand)."""
        if not any(isinstance(v, (DictVal, ListVal)) for v, _ in vals):
            return ""
        stores = getattr(self, "attr_stores", None)
        if stores is None:
            return ""
        memo = self.__dict__.setdefault("_held_changed", {})
        if attr not in memo:
            from analyzer.sites.detached import held_container_use

            memo[attr] = ""
            # the private name's mangled spelling (``_Attn__kw``) holds the name itself
            needle = attr.lstrip("_").encode() or attr.encode()
            for rel in sorted(stores.data):
                if needle not in stores.data[rel]:
                    continue
                info = stores.index.by_path.get(rel)
                tree = info.tree if info is not None else None
                line = held_container_use(tree, attr) if tree is not None else 1
                if line:
                    memo[attr] = (f"the container it holds may be changed or handed on at "
                                  f"{rel}:{line} (an item stored, a method, an alias, a "
                                  "call's argument, the name as a string)")
                    break
        return memo[attr]

    def _module_containers(self, vals) -> Vals:
        why = self.module_container_changed(vals)
        if not why:
            return vals
        return self._with_reason(vals, why)

    def _with_reason(self, vals, why: str) -> Vals:
        """``vals`` with every dict and list among them marked as holding what ``why`` says the
        flow cannot follow."""
        out = set()
        for v, f in vals:
            if isinstance(v, DictVal):
                v = DictVal(v.alloc, v.entries, v.opaque | {why})
            elif isinstance(v, ListVal):
                v = ListVal(v.alloc, v.fn, v.elems + ((None, self.ref(UnknownWhy(reason=why)), EMPTY),),
                            v.base_len, False)
            out.add((v, f))
        return frozenset(out)

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
            if isinstance(idx, Lit):
                if idx.value in WINDOW_KEYS:
                    site = Site(fn.mod.path, _pt(spos), idx.value, "subscript-store", fn.key,
                                self.ref(value), _pt(apos))
                    entries.add(WinEntry(site, g, ()))
            else:
                opaque.add(f"{name}[{expr_label(idx)}] = ... (key not a constant)")
        for call, guards in fn.updates.get(name, []):
            g = fn.guards(guards)
            if call.func.attr == "setdefault":
                e2, o2 = self._dict_setdefault(fn, name, call, g)
            else:
                e2, o2 = self._dict_from_args(fn, call, "update", g, skip_first=False)
            entries |= e2
            opaque |= o2
        opaque |= self._unfollowed_calls(fn, name)
        # helpers that get the dict as an argument
        for guards, callee, pname, keymap in self._helpers_given(fn, name):
            inv = {v: k for k, v in keymap.items()}
            ce, co = self.local_mutations(callee, pname)
            for ent in ce:
                entries.add(WinEntry(ent.site, frozenset(
                    (inv[k], b) for k, b in ent.facts if k in inv) | fn.guards(guards),
                    ent.via))
            opaque |= co
        return frozenset(entries), frozenset(opaque)

    def _unfollowed_calls(self, fn: Fn, name: str) -> set:
        """Calls of ``fn`` that hand the local ``name`` to something the flow does not follow
        into (a callee it cannot resolve, a lambda, a parameter the argument does not map to
        by name, ``*args``): what they write into the dict is not seen. A builtin that only
        reads (``len``, ``dict``, ``print``), a splat and a window keyword hand nothing on."""
        out = set()
        for call, _guards, _tte in fn.calls:
            if not any(_is(a.value, name) and a.kind not in ("*", "**") and
                       a.kw not in WINDOW_KEYS for a in call.args):
                continue
            if isinstance(call.func, Name) and call.func.id in _READ_ONLY_CALLS:
                continue
            if isinstance(call.func, Attr) and _is(call.func.base, name):
                continue                # a method of the dict itself (``_mutations``)
            if isinstance(call.func, Attr) and call.func.attr == "update" and \
                    not any(_is(a.value, name) and a.kind == "k" for a in call.args):
                continue                # ``other.update(name)``: its entries copied, read
            targets = self.call_targets(fn, call, name)
            if not targets or any(callee is None or not maps for callee, maps in targets):
                out.add(f"{name} is handed to {expr_label(call.func)}(...), which the flow does "
                        "not follow")
        return out

    def _helpers_given(self, fn: Fn, name: str):
        """(guards, in-tree callee, its parameter, keymap) for each call of ``fn`` that hands
        the local ``name`` to a parameter of an in-tree function."""
        for call, guards, _tte in fn.calls:
            if not any(_is(a.value, name) for a in call.args):
                continue
            for callee, maps in self.call_targets(fn, call, name):
                for pname, keymap in maps:
                    yield guards, callee, pname, keymap

    def call_targets(self, fn: Fn, call, name: str) -> list:
        """[(in-tree callee or None where the flow cannot read it, [(its parameter that gets
        the local ``name`` of ``fn``, keymap), ...]), ...]: one entry per function ``call``
        may run (an empty list of parameters: the callee gets ``name`` by no parameter the
        flow follows, ``*args`` say)."""
        out = []
        for target, shift in self.static_callees(fn, call, True):
            callee = self.fns.get(target)
            if callee is None or callee.ir is None:
                out.append((None, []))
                continue
            _, _, _, src, keymap, _, _ = self._arg_map(callee, fn, call, shift)
            out.append((callee, [(pname, keymap) for pname, sources in src.items()
                                 if not pname.startswith("*") and
                                 any(_is(x[0], name) and x[1] == fn.key for x in sources)]))
        return out

    def _dict_setdefault(self, fn: Fn, name: str, call, g):
        """``d.setdefault(key, value)``: ``value`` is one of the values ``key`` may hold
        afterwards (it is set when the key is missing; ``None`` without a value)."""
        args = call.args
        if not args or len(args) > 2 or any(a.kind != "p" for a in args):
            return frozenset(), frozenset({f"{name}.setdefault(...) with other arguments"})
        key = args[0].value
        if not isinstance(key, Lit):
            return frozenset(), frozenset({f"{name}.setdefault({expr_label(key)}, ...) "
                                           "(key not a constant)"})
        if key.value not in WINDOW_KEYS:
            return frozenset(), frozenset()
        value, apos = (args[1].value, args[1].pos) if len(args) == 2 else (Lit(value=None),
                                                                            args[0].pos)
        site = Site(fn.mod.path, _pt(apos), key.value, "update", fn.key, self.ref(value))
        return frozenset({WinEntry(site, g, ())}), frozenset()

    def _dict_from_args(self, fn: Fn, call, style: str, g, skip_first: bool):
        entries = set()
        opaque = set()
        ctx = _FnCtx(self, fn, False)
        # a key the call passes by keyword replaces what a mapping argument holds for it
        # (``dict(kw, window_size=fixed)``; with ``**kw`` holding it, the call raises)
        named = {kw for kind, kw, _, _ in call.args if kind == "k"}
        for kind, kw, e, apos in call.args:
            if kind == "k":
                if kw in WINDOW_KEYS:
                    entries.add(WinEntry(Site(fn.mod.path, _pt(apos), kw, style, fn.key, self.ref(e)), g, ()))
            elif kind in ("p", "**"):
                if isinstance(e, DictExpr):
                    for v, f in self.eval(ctx, e):
                        if isinstance(v, DictVal):
                            for ent in v.entries:
                                site = ent.site
                                if site.key in named:
                                    continue
                                if site.style == "dict-literal" and style == "update":
                                    site = Site(site.path, site.pos, site.key, "update", site.fn,
                                                site.expr_id, site.tspan)
                                entries.add(WinEntry(site, ent.facts | g, ent.via))
                            opaque |= v.opaque
                    continue
                for v, f in self.eval(ctx, e):
                    if isinstance(v, DictVal):
                        for ent in v.entries:
                            if ent.site.key not in named:
                                entries.add(WinEntry(ent.site, ent.facts | f | g, ent.via))
                        opaque |= v.opaque
                    elif isinstance(v, ListVal):
                        opaque.add(f"{style} from a list of pairs ({expr_label(e)})")
                    elif not isinstance(v, Const):
                        opaque.add(_why(v))
            elif kind == "*":
                opaque.add("*args into a dict")
        return frozenset(entries), frozenset(opaque)

    # -- expressions -------------------------------------------------------------------------
    def eval(self, ctx, e) -> Vals:
        t = type(e)
        if t is Name:
            name = e.id
            if name in ("None", "True", "False"):
                return frozenset({(Const({"None": None, "True": True, "False": False}[name]), EMPTY)})
            return self.name_values(ctx, name, ctx.lookup(name))
        if t is Lit:
            return frozenset({(Const(e.value), EMPTY)})
        if t is Attr:
            base = e.base
            if isinstance(ctx, _FnCtx) and ctx.fn is not None and ctx.fn.cls is not None \
                    and type(base) is Name and base.id == ctx.fn.first_param:
                return self.self_attr(ctx.fn, e.attr, ctx.static)
            return self.attr_value(self.eval(ctx, base), e.attr, getattr(ctx, "fn", None),
                                   ctx.mod if isinstance(ctx, _ModCtx) else None)
        if t is Call:
            return self.eval_call(ctx, e)
        if t is DictExpr:
            return self.eval_dict(ctx, e)
        if t is ListExpr or t is TupleExpr:
            fnkey = ctx.fn.key if getattr(ctx, "fn", None) is not None else ctx.mod.top.key
            elems = []
            exact = True
            for i, x in enumerate(e.elts):
                if type(x) is Starred:
                    exact = False
                    continue
                elems.append((i if exact else None, self.ref(x), EMPTY))
            alloc = ("list", fnkey, id(e))
            return frozenset({(ListVal(alloc, fnkey, tuple(elems), len(elems), exact), EMPTY)})
        if t is Either:
            return self.eval(ctx, e.a) | self.eval(ctx, e.b)
        if t is Subscript:
            idx = e.index
            out = set()
            for v, f in self.eval(ctx, e.base):
                if isinstance(v, ListVal) and type(idx) is Lit and isinstance(idx.value, int) \
                        and v.exact:
                    for i, eid, ef in v.elems:
                        if i == idx.value:
                            ectx = _FnCtx(self, self.fns[v.fn], ctx.static) if v.fn in self.fns and self.fns[v.fn].ir is not None else ctx
                            out |= {(w, g | f) for w, g in self._element(ectx, eid)}
                else:
                    out.add((Opaque(f"{expr_label(e)}"), f))
            return frozenset(out)
        if t is Starred:
            return self.eval(ctx, e.value)
        if t is UnknownWhy:
            return frozenset({(Opaque(str(e.reason)), EMPTY)})
        if t is not Unknown:
            raise TypeError(f"not an IR expression: {e!r}")   # a bare tuple: build the node
        return frozenset({(Opaque("expression"), EMPTY)})

    def name_values(self, ctx, name: str, vals: Vals) -> Vals:
        """What a read of ``name`` gives, from the values of its bindings ``vals``: module-level
        containers and the changes a function makes to a dict or list it holds are added."""
        if any(isinstance(v, (DictVal, ListVal)) for v, _ in vals):
            vals = self._module_containers(vals)
        if isinstance(ctx, _FnCtx) and not ctx.static and ctx.fn is not None \
                and ctx.fn.ir is not None and name in ctx.fn.defs \
                and any(isinstance(v, Opaque) and v.param_of == ctx.fn.key for v, _ in vals) \
                and (ctx.fn.sub_stores.get(name) or ctx.fn.updates.get(name)):
            # a parameter dict from unseen callers: what this function writes into it
            # still reaches wherever it goes
            vals = vals | {(DictVal(("param", ctx.fn.key, name)), EMPTY)}
        listy = [v for v, _ in vals if isinstance(v, DictVal) and self._list_entries(v)] \
            if isinstance(ctx, _FnCtx) and not ctx.static and ctx.fn is not None \
            and ctx.fn.ir is not None else []
        if listy:
            # a list held as a window entry may be changed through the dict in place
            why = self.item_changes_deep(ctx.fn, name)
            if why:
                vals = frozenset((DictVal(v.alloc, v.entries, v.opaque | frozenset(why[:1]))
                                  if v in listy else v, f) for v, f in vals)
        if isinstance(ctx, _FnCtx) and not ctx.static and ctx.fn is not None \
                and any(isinstance(v, (DictVal, ListVal)) for v, _ in vals):
            ents, opq = self.local_mutations(ctx.fn, name)
            ext = ctx.fn.list_ext.get(name, [])
            esc_d, esc_l = container_escapes(ctx.fn, name) if ctx.fn.ir is not None \
                else ((), ())
            if ents or opq or ext or esc_d or esc_l:
                out = set()
                for v, f in vals:
                    if isinstance(v, DictVal) and (ents or opq or esc_d):
                        v = DictVal(v.alloc, v.entries | ents, v.opaque | opq
                                    | frozenset(esc_d))
                    elif isinstance(v, ListVal) and esc_l:
                        # changed where the flow does not look: no element is known
                        v = ListVal(v.alloc, v.fn, v.elems + ((None, self.ref(
                            UnknownWhy(reason=esc_l[0])), EMPTY),), v.base_len, False)
                    elif isinstance(v, ListVal) and ext:
                        more = tuple((None, self.ref(x.value if isinstance(x, Starred) else x), ctx.fn.guards(g))
                                     for elts, g in ext for x in elts)
                        v = ListVal(v.alloc, v.fn, v.elems + more, v.base_len, False)
                    out.add((v, f))
                return frozenset(out)
        return vals

    def item_changes_deep(self, fn: Fn, name: str) -> tuple:
        """``flow_base.item_changes`` of ``name`` in ``fn`` and in the in-tree helpers it hands
        ``name`` to (under their parameter's name)."""
        def compute():
            why = set(item_changes(fn, name))
            for _, callee, pname, _ in self._helpers_given(fn, name):
                why.update(self.item_changes_deep(callee, pname))
            return frozenset(why)
        return tuple(sorted(self._memo(("items", fn.key, name), compute)))

    def _list_entries(self, v: "DictVal") -> bool:
        """Some window entry of ``v`` is a list display or ``list(...)``: a value that can be
        changed in place after it is stored."""
        for ent in v.entries:
            e = self.exprs.get(ent.site.expr_id) if ent.site.expr_id is not None else None
            if isinstance(e, ListExpr) or (isinstance(e, Call) and isinstance(e.func, Name)
                                           and e.func.id == "list"):
                return True
        return False

    def elements(self, v: "ListVal", depth: int = 0) -> Vals:
        """What any element of the list or tuple ``v`` may be, at any index (elements that
        are lists themselves are opened too, a few levels deep): for readers that ask whether
        a container holds an FA4 entry point, whatever index or method hands it out."""
        fn = self.fns.get(v.fn)
        if fn is None:
            return frozenset({(Opaque("a list built where the flow does not look"), EMPTY)})
        ctx = fn_context(self, fn) if fn.ir is not None else _EverCtx(self, fn.mod)
        out = set()
        for _i, eid, _f in v.elems:
            for w, g in self._element(ctx, eid):
                out.add((w, g))
                if isinstance(w, ListVal) and depth < 4:
                    out |= self.elements(w, depth + 1)
        return frozenset(out)

    def _element(self, ctx, eid: int) -> Vals:
        """One element expression of a list, evaluated where ``ctx`` says. An element read
        again while it is being evaluated reads its own list (``w = (w[0] ..., ...)`` with
        every reaching binding of ``w``): unknown there, not a loop forever."""
        if eid in self.elements_busy:
            return frozenset({(Opaque("an element that refers to its own list"), EMPTY)})
        self.elements_busy.add(eid)
        try:
            return self.eval(ctx, self.exprs[eid])
        finally:
            self.elements_busy.discard(eid)

    def self_attr(self, fn: Fn, attr: str, static: bool) -> Vals:
        """``self.x`` / ``ctx.x``: every ``<first param>.x = ...`` in the class's methods (the
        autograd ctx round trip: saved in forward, read in backward)."""
        cls = fn.cls
        why = first_param_untrusted(fn)
        if why:
            return frozenset({(Opaque(f"{fn.first_param}.{attr}: {why}"), EMPTY)})
        on_ctx = is_static_method(fn)

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
            # the stores describe an instance of the class: a method run on another object
            # (``Cls.method(other)``) reads that object's attribute (asked only where a store
            # gives something known: the check reads much of the tree)
            known = any(_matters(v) for v, _ in out)
            if attr in cls.methods:
                found = True
                out.add((FuncRef(cls.methods[attr].key), EMPTY))
            if not found:
                out.add((Opaque(f"{fn.first_param}.{attr}"), EMPTY))
            elif known:
                stores = getattr(self, "attr_stores", None)
                away = stores.detached(cls.ir.name, on_ctx) if stores is not None else ""
                if away:
                    out.add((Opaque(f"{fn.first_param}.{attr}: a method of {cls.ir.name} may "
                                    f"run on another object ({away})"), EMPTY))
            why = self._held_container_changed(attr, out)
            if why:
                out = set(self._with_reason(frozenset(out), f"{fn.first_param}.{attr}: {why}"))
            return frozenset(out)
        return self._memo(("selfattr", cls.key, attr, static, on_ctx), compute)

    def eval_dict(self, ctx, e) -> Vals:
        fn = ctx.fn if getattr(ctx, "fn", None) is not None else ctx.mod.top
        entries = set()
        opaque = set()
        for i, (k, v, pos) in enumerate(e.items):
            if k is None:
                # a key written by a later item of the display replaces what the merge put
                # there (``{**kw, "window_size": fixed}``)
                later = {k2.value for k2, _, _ in e.items[i + 1:] if isinstance(k2, Lit)}
                for w, f in self.eval(ctx, v):
                    if isinstance(w, DictVal):
                        entries |= {WinEntry(x.site, x.facts | f, x.via) for x in w.entries
                                    if x.site.key not in later}
                        opaque |= w.opaque
                    else:
                        opaque.add(_why(w))
            elif isinstance(k, Lit):
                if k.value in WINDOW_KEYS:
                    entries.add(WinEntry(Site(fn.mod.path, _pt(pos), k.value, "dict-literal", fn.key,
                                              self.ref(v)), EMPTY, ()))
            else:
                opaque.add(f"{{{expr_label(k)}: ...}} (key not a constant)")
        return frozenset({(DictVal(("dict", fn.key, id(e)), frozenset(entries), frozenset(opaque)), EMPTY)})

    def eval_call(self, ctx, e) -> Vals:
        func, args = e.func, e.args
        fn = ctx.fn if getattr(ctx, "fn", None) is not None else ctx.mod.top
        # getattr(obj, "name"[, default]) is obj.name (or the default): a constant name read
        # this way gives what the attribute read gives (``getattr(helper.fc, "flash_attn_func")``)
        if len(args) in (2, 3) and all(a.kind == "p" for a in args) \
                and isinstance(args[1].value, Lit) and isinstance(args[1].value.value, str) \
                and args[1].value.value.isidentifier():
            callee = self.eval(ctx, func)
            if any(isinstance(v, ExtRef) and v.qual == "builtins.getattr" for v, _ in callee):
                got = self.eval(ctx, Attr(base=args[0].value, attr=args[1].value.value))
                if len(args) == 3:
                    got = got | self.eval(ctx, args[2].value)
                others = frozenset((Opaque(f"result of {expr_label(func)}(...)"), EMPTY)
                                   for v, _ in callee
                                   if not (isinstance(v, ExtRef) and v.qual == "builtins.getattr"))
                return got | others
        # wrapping: w(f) / w()(f) / w(f, *more) with f an FA entry point as the first
        # positional argument (partial(f, ...), wrap(f, size_at=7)): a layer of f's chain,
        # judged later by running the whole call expression (analyzer.sites.behaviour)
        if args and args[0].kind == "p":
            inner = self.eval(ctx, args[0].value)
            fa = [(v, f) for v, f in inner if isinstance(v, FAFunc)]
            if fa:
                wref = self.wrapper_ref(ctx, func)
                line = e.pos[0] if isinstance(e.pos[0], int) else 0
                label = wref.label if len(args) == 1 else f"{wref.label}(..., +{len(args) - 1})"
                kind = wref.kind if len(args) == 1 else "other"
                if len(args) > 1 and all(a.kind == "k" for a in args[1:]) and any(
                        isinstance(v, ExtRef) and v.qual == "functools.partial"
                        for v, _ in self.eval(ctx, func)):
                    # ``functools.partial(fa4, causal=True, ...)``: keywords the call of it
                    # passes unless it passes them itself (``verdicts.Judge.prefills``)
                    kind = "partial"
                wref = WrapRef(kind, label, wref.key,
                               (fn.mod.path, line, e.pos[1] if len(e.pos) > 1 else 0))
                return frozenset(
                    (FAFunc(v.entry, v.chain + (wref,), None,
                            v.via + (f"wrapped by {wref.label} ({fn.mod.path}:{line})",)), f)
                    for v, f in fa) | frozenset({(Opaque(f"result of {wref.label}"), EMPTY)})
        # partial(helper, f, ...) with helper a function of the tree and f an FA entry point
        # among the positional arguments after it: helper(f, ...) is the layer (it receives
        # f and forwards to it), judged like any wrapping call with f's place marked
        if len(args) > 1 and args[0].kind == "p" and all(a.kind in ("p", "k") for a in args) \
                and any(isinstance(v, ExtRef) and v.qual == "functools.partial"
                        for v, _ in self.eval(ctx, func)) \
                and any(isinstance(v, FuncRef) for v, _ in self.eval(ctx, args[0].value)):
            for i, a in enumerate(args[1:], 1):
                if a.kind != "p":
                    break
                fa = [(v, f) for v, f in self.eval(ctx, a.value) if isinstance(v, FAFunc)]
                if not fa:
                    continue
                line = e.pos[0] if isinstance(e.pos[0], int) else 0
                label = f"partial({expr_label(args[0].value)}, ...)"
                wref = WrapRef("other", label, (), (fn.mod.path, line,
                                                    e.pos[1] if len(e.pos) > 1 else 0), i)
                return frozenset(
                    (FAFunc(v.entry, v.chain + (wref,), None,
                            v.via + (f"wrapped by {label} ({fn.mod.path}:{line})",)), f)
                    for v, f in fa) | frozenset({(Opaque(f"result of {label}"), EMPTY)})
        out = set()
        saved, self.search_ok = self.search_ok, False   # results of calls: no caller search
        try:
            return self._eval_call_rest(ctx, e, func, args, fn)
        finally:
            self.search_ok = saved

    def _eval_call_rest(self, ctx, e, func, args, fn) -> Vals:
        out = set()
        callee_vals = self.eval(ctx, func)
        for v, f in callee_vals:
            if isinstance(v, FuncRef):
                target = self.fns.get(v.key)
                if target is None or target.ir is None:
                    out.add((Opaque("call"), f))
                    continue
                shift = 1 if (target.cls is not None and isinstance(func, Attr)
                              and isinstance(func.base, Name)
                              and fn.cls is not None and func.base.id == fn.first_param) else 0
                out |= self.returns(ctx, target, e, shift)
            elif isinstance(v, ExtRef) and v.qual == "builtins.dict":
                ents, opq = self._dict_from_args(fn, e, "dict-call", EMPTY, skip_first=False)
                out.add((DictVal(("dictcall", fn.key, id(e)), ents, opq), f))
            elif isinstance(v, Unloaded):
                if any(self._fa_ish(ctx, a.value) for a in args):
                    self.request_load(v.module)
                out.add((Opaque(f"call into {v.module}"), f))
            elif isinstance(v, ClassRef):
                out.add((Opaque("instance"), f))
            else:
                if isinstance(v, FAFunc) and v.chain and all(a.kind == "p" for a in args) \
                        and len(args) < _required(v):
                    # a wrapped entry point called without the tensors FA4 needs: a layer
                    # gives something else back (``weakref.ref(fa4)()`` is FA4 itself)
                    out.add((v, f))
                out.add((Opaque(f"result of {expr_label(func)}()"), f))
        if isinstance(func, Attr) and func.attr == "copy":
            for v, f in self.eval(ctx, func.base):
                if isinstance(v, DictVal):
                    out.add((v, f))
        return frozenset(out)

    def _fa_ish(self, ctx, e) -> bool:
        for v, _ in self.eval(ctx, e):
            if isinstance(v, FAFunc) or (isinstance(v, DictVal) and v.entries):
                return True
        return False


def _required(v) -> int:
    """How many arguments FA4's entry point needs (its tensors)."""
    from fa4_patch import names as N

    return N.REQUIRED_B36.get(v.entry.name, 3)


def _is_tuple_display(mod: Mod, eid: int) -> bool:
    """Is the expression object ``eid`` bound at ``mod``'s top level a tuple display (which
    nothing can change in place)?"""
    got = _top_assigned(mod).get(eid)
    return got is not None and isinstance(got[1], TupleExpr)


def _top_names_of(mod: Mod, eid: int) -> list:
    """The module-level names ``mod`` binds to the expression object ``eid`` (a dict or list
    display, or a dict(...) call), read off its top-level statements."""
    got = _top_assigned(mod).get(eid)
    return got[0] if got is not None else []


def _top_assigned(mod: Mod) -> dict:
    """id(value) -> (names, value) for every plain-name assignment among ``mod``'s top-level
    statements (branches, ``try`` and blocks included), read once."""
    memo = mod.__dict__.get("_top_assigned")
    if memo is None:
        memo = mod._top_assigned = {}
        stack = [mod.ir.body]
        while stack:
            body = stack.pop()
            for st in body:
                if isinstance(st, Assign):
                    for t in st.targets:
                        if isinstance(t, Name):
                            memo.setdefault(id(st.value), ([], st.value))[0].append(t.id)
                elif isinstance(st, If):
                    stack.extend([st.body, st.orelse])
                elif isinstance(st, Try):
                    stack.extend([st.body, st.orelse, st.final] + [h.body for h in st.handlers])
                elif isinstance(st, Block):
                    stack.extend(st.bodies)
    return memo


def _matters(v) -> bool:
    """Can a value read off an instance change what an FA call receives: a callee, a dict, a
    list, a number or None (a string or a flag only steers a branch, which the flow follows
    both ways)?"""
    if isinstance(v, Const):
        return v.value is None or type(v.value) in (int, float, tuple)
    return isinstance(v, (FAFunc, FuncRef, ClassRef, ModRef, DictVal, ListVal))

