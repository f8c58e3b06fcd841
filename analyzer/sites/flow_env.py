"""Imports and module environments: what a module binds when it has run (strong
updates at module level), what an import gives, module attributes, and names a
function rebinds with ``global``.

A part of ``flow.Solver`` (a mixin: its methods use the solver's state and each
other's through ``self``)."""

from __future__ import annotations

from analyzer.sites.flow_base import *  # noqa: F401,F403 - the flow layer's vocabulary
from analyzer.sites.ir import (UNKNOWN, Assign, AugAssign, Block, Call, ClassDef, ExprStmt,
                              FuncDef, If, Import, ListExpr, Lit, Loop, Name, Subscript, Try,
                              TupleExpr, With, walk as walk_ir)
from analyzer.sites.flow_base import _is


_NOT_IMPORTED = object()     # ``cycle_line``: the module's import never runs the reader's


class ImportsEnv:

    # -- modules -----------------------------------------------------------------------
    def resolve_module(self, mod: Mod, module: str, level: int) -> str:
        if level == 0:
            if module in self.modnames:
                return module
            from analyzer.sites.reach import under_importer_root

            # a vendored FA4 copy named by a shorter path (its folder put on ``sys.path``)
            return under_importer_root(mod.name, module, self.modnames) \
                or B.by_short_name(module, B.EXTRA_FA4) or module
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

    def import_value(self, mod: Mod, item, scope: Fn) -> Vals:
        local, attr, pos = item.local, item.attr, item.pos
        absmod = self.resolve_module(mod, item.module, item.level)
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
            return frozenset({(Opaque(f"{absmod}.{attr} (not a window-taking entry point)",
                                      fa4_name=f"{absmod}.{attr}"), EMPTY)})
        tm = self.tree_module(absmod)
        if tm is not None:
            vals = self.module_attr(tm, attr)
            src_mod = self.by_name.get(tm)
            line = self.cycle_line(src_mod, mod.name) \
                if scope is mod.top and src_mod is not None and src_mod is not mod \
                else _NOT_IMPORTED
            if line is not _NOT_IMPORTED:
                # an import cycle: ``tm`` imports this module (directly, through other
                # modules, or in a function it may call) while its own top level runs, and
                # this module's import then reads ``attr`` as it is at that point -- a value
                # a later binding in ``tm`` may have replaced
                vals = vals | self.replaced_values(src_mod, attr, line)
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

    def cycle_line(self, src: Mod, reader: str):
        """The first line of ``src`` from which its import may run ``reader``'s top level:
        its own top-level import of ``reader``, or any import of the tree (a function's
        included) that leads there through the modules it imports (``import_edges``, every
        import of every file); ``_NOT_IMPORTED`` when none does."""
        memo = self.__dict__.setdefault("_cycle_memo", {})
        key = (src.name, reader)
        if key in memo:
            return memo[key]
        top = self._top_imports(src)
        best = top[reader] if reader in top else _NOT_IMPORTED
        edges = getattr(self, "import_edges", None) or {}
        for first, line in sorted(edges.get(src.name, {}).items()):
            if best is None:
                break
            if first == reader or self._leads_to(first, reader, edges):
                if line is None or best is _NOT_IMPORTED or line < best:
                    best = line
        memo[key] = best
        return best

    @staticmethod
    def _leads_to(start: str, goal: str, edges: dict) -> bool:
        seen, todo = {start}, [start]
        while todo:
            cur = todo.pop()
            for nxt in edges.get(cur, ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def _top_imports(self, m: Mod) -> dict:
        """Every module ``m``'s top level may import (``import a.b``: ``a`` and ``a.b``;
        ``from a import b``: ``a`` and ``a.b``), branches and handlers included, each with
        the first line that imports it (None where the line is not known)."""
        got = m.__dict__.get("_top_imports")
        if got is None:
            got = {}

            def add(name, pos):
                line = pos[0] if pos and isinstance(pos[0], int) else None
                old = got.get(name, line)
                got[name] = None if old is None or line is None else min(old, line)
            stack = [m.ir.body]
            while stack:
                for st in stack.pop():
                    t = type(st)
                    if t is Import:
                        for local, module, attr, level, pos in st.items:
                            base = self.resolve_module(m, module, level)
                            parts = base.split(".")
                            for i in range(1, len(parts) + 1):
                                add(".".join(parts[:i]), pos)
                            if attr is not None and attr != "*":
                                add(f"{base}.{attr}", pos)
                    elif t is If or t is Loop:
                        stack += [st.body, st.orelse]
                    elif t is Try:
                        stack += [st.body, st.orelse, st.final] + [h.body for h in st.handlers]
                    elif t is With:
                        stack.append(st.body)
                    elif t is Block:
                        stack += list(st.bodies)
            m._top_imports = got
        return got

    def _module_ref(self, name: str) -> Vals:
        if B.fa_version_of_module(name):
            return frozenset({(ModRef(name, False), EMPTY)})
        tm = self.tree_module(name)
        if tm is not None:
            return frozenset({(ModRef(tm, True), EMPTY)})
        return frozenset({(ModRef(name, False), EMPTY)})

    def module_attr(self, tm: str, attr: str) -> Vals:
        """``from tm import attr`` / ``tm.attr`` for an in-tree module."""
        m = self.by_name.get(tm)
        if m is None:
            full = f"{tm}.{attr}"
            if full in self.modnames:
                return frozenset({(ModRef(full, True), EMPTY)})
            return frozenset({(Unloaded(tm, attr), EMPTY)})
        env = self.env(m)
        full = f"{tm}.{attr}"
        if attr in env:
            vals = self.force(env[attr])
            if full in self.modnames:
                # ``from . import sub`` in the package binds the submodule under its own name
                # (an import that reads itself here); whatever the package binds it to,
                # importing ``pkg.sub`` anywhere may also set it: both stand
                vals = vals | frozenset({(ModRef(full, True), EMPTY)})
            return vals
        if full in self.modnames:
            return frozenset({(ModRef(full, True), EMPTY)})
        if "__getattr__" in env:
            # PEP 562: a name the module does not bind is what its ``__getattr__`` returns
            out = set()
            for v, f in self.force(env["__getattr__"]):
                target = self.fns.get(v.key) if isinstance(v, FuncRef) else None
                if target is None or target.ir is None:
                    out.add((Opaque(f"{tm}.__getattr__ ({attr})"), f))
                    continue
                out |= {(w, EMPTY) for w, _ in self.fn_returns(target)}
            return frozenset(out)
        return frozenset({(Opaque(f"{tm}.{attr} not bound at module level"), EMPTY)})

    def attr_value(self, base_vals, attr: str, fn: Fn | None, reader: Mod | None = None) -> Vals:
        """``base.attr``; ``reader``: the module whose top level reads it (an import cycle
        may show it a value the attribute held before a later binding)."""
        out = set()
        for v, f in base_vals:
            if isinstance(v, ModRef):
                if v.tree:
                    for w, g in self.module_attr(v.name, attr):
                        out.add((w, f | g))
                    src = self.by_name.get(v.name)
                    if reader is not None and src is not None and src is not reader:
                        line = self.cycle_line(src, reader.name)
                        if line is not _NOT_IMPORTED:
                            out |= {(w, f) for w, _ in self.replaced_values(src, attr, line)}
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

    def _star_from_tree(self, m: Mod, absmod: str, env: dict) -> None:
        """``from <module of the tree> import *`` binds, here, every name that module exports
        (its ``__all__`` when it is a constant list, else its names without a leading
        underscore), replacing earlier bindings of them. A module not parsed yet is asked for:
        the next round binds them."""
        tm = self.tree_module(absmod)
        if tm is None or tm == m.name:
            return
        other = self.by_name.get(tm)
        if other is None:
            self.request_load(tm)
            return
        oenv = self.env(other)
        names = _constant_all(other)
        if names is None:
            names = [n for n in oenv if not n.startswith("_")]
            # a package's submodules imported before (by any module: the pass does not
            # order imports) are names of it too
            subs = [n for n in self._submodules(tm) if not n.startswith("_")]
        elif names is _ANY_NAME:
            # an ``__all__`` the module computes, extends or imports may name any of its
            # names, one with a leading underscore too
            names = list(oenv)
            subs = self._submodules(tm)
        else:
            subs = [n for n in names if n in self._submodules(tm)]
        line = self.cycle_line(other, m.name)
        for n in names:
            if n in oenv:
                env[n] = oenv[n]
                if line is not _NOT_IMPORTED:
                    # an import cycle: the star ran while ``other`` was still importing
                    env[n] = frozenset(self.force(oenv[n]) |
                                       self.replaced_values(other, n, line))
        for n in subs:
            # ``__all__ = ["flash"]`` in a package imports and binds its submodule ``flash``
            sub = frozenset({(ModRef(f"{tm}.{n}", True), EMPTY)})
            env[n] = sub if n not in names or n not in oenv else \
                frozenset(self.force(oenv[n]) | sub)

    def _submodules(self, tm: str) -> list:
        """The names of the direct submodules of the tree's package ``tm``."""
        depth = tm.count(".") + 1
        return sorted(n.rsplit(".", 1)[1] for n in self.modnames
                      if n.startswith(tm + ".") and n.count(".") == depth)

    def force(self, parts) -> frozenset:
        if isinstance(parts, frozenset):
            return parts
        out = set()
        for p in parts:
            out |= (p() if callable(p) else p)
        return frozenset(out)

    def _run(self, m: Mod, stmts, env: dict) -> dict:
        """Run a module's statements over ``env`` (name -> values). Inside the body of a
        ``try`` or ``with`` (``_observing``) the state after every statement is kept: an
        exception may stop the body after any of them (``from fa import f``, then an import
        that fails, then ``f = wrap(f)``: the handler sees the raw ``f``)."""
        watching = self.__dict__.get("_observing")
        if not watching:
            return self._run_stmts(m, stmts, env)
        for i, st in enumerate(stmts):
            env = self._run_stmts(m, [st], env)
            if i + 1 < len(stmts) and _rewraps(stmts[i + 1]):
                # ``f = wrap(f)`` next: the wrapping call ran in the sandbox without raising
                # (its chain is judged there), so it is taken to replace ``f`` at once
                continue
            for seen in watching:
                seen.append(dict(env))
        return env

    def _watched(self, m: Mod, stmts, env: dict) -> tuple[dict, list]:
        """``_run`` of a protected body: (the state at its end, every state after a statement
        of it, its first one included)."""
        seen = [dict(env)]
        self.__dict__.setdefault("_observing", []).append(seen)
        try:
            after = self._run(m, stmts, env)
        finally:
            self._observing.pop()
        return after, seen

    def _run_stmts(self, m: Mod, stmts, env: dict) -> dict:
        ctx = _ModCtx(self, m, env)
        own = m.__dict__.get("_own_defs")
        if own is None:
            own = m._own_defs = {}
            for st in m.ir.body:
                if isinstance(st, FuncDef):
                    own[st.func.name] = st.func
                elif isinstance(st, ClassDef):
                    own[st.cls.name] = st.cls
        for st in stmts:
            t = type(st)
            ctx.env = env
            ran = _calls_own(st.value, own) if (t is Assign or t is ExprStmt) and own else set()
            if ran:
                # a function of this module runs while the module is imported: the names it
                # reads, as they are now, are seen -- a later binding does not undo that
                seen = m.__dict__.setdefault("_observed", set())
                seen |= _names_read(ran, own)
            if t is Import:
                for item in st.items:
                    local, module, attr, level, pos = item
                    if local == "*":
                        absmod = self.resolve_module(m, module, level)
                        for e in B.all_entries(absmod):
                            rec = self.binding(m, m.top, e.name, pos, "import", (), via=())
                            v = FAFunc(e, (), rec, (f"{e.qual} via import * ({m.path})",))
                            self.records[rec]["values"].add(v)
                            env[e.name] = frozenset({(v, EMPTY)})
                        self._star_from_tree(m, absmod, env)
                        continue
                    absmod = self.resolve_module(m, module, level)
                    if local in env:
                        self._replace(m, local, env[local], pos)
                    if attr is not None and (B.entry_for(absmod, attr) or B.fa_version_of_module(absmod)):
                        env[local] = self.import_value(m, item, m.top)
                    else:
                        env[local] = (_Lazy(self, m, item),)
            elif t is Assign:
                vals = self.eval(ctx, st.value)
                for tg in st.targets:
                    self._bind_top(m, env, tg, st.value, vals, st.pos)
            elif t is AugAssign:
                pass
            elif t is If:
                e1 = self._run(m, st.body, dict(env))
                e2 = self._run(m, st.orelse, dict(env))
                env = _join(e1, e2)
            elif t is Try:
                # a handler starts from the state after any statement of the body
                after, seen = self._watched(m, st.body, dict(env))
                start = _join(*seen, after)
                outs = [self._run(m, h.body, dict(start)) for h in st.handlers]
                after_else = self._run(m, st.orelse, after)
                env = _join(after_else, *outs)
                env = self._run(m, st.final, env)
            elif t is Loop:
                if st.target is not None:
                    self._bind_top(m, env, st.target, UNKNOWN,
                                   frozenset({(Opaque("loop variable"), EMPTY)}), None)
                e1 = self._run(m, st.body, dict(env))
                env = _join(env, e1)
                env = self._run(m, st.orelse, env)
            elif t is With:
                for item in st.items:
                    if item.target is not None:
                        self._bind_top(m, env, item.target, UNKNOWN,
                                       frozenset({(Opaque("with target"), EMPTY)}), None)
                # the context manager may swallow an exception the body raises part way
                # (``contextlib.suppress(ImportError)``): each name keeps what it held before
                # or takes what the body bound
                after, seen = self._watched(m, st.body, dict(env))
                env = _join(*seen, after)
            elif t is FuncDef:
                f = st.func
                fn = m.by_ir.get(id(f)) or m.functions.get(f.qualname)
                env[f.name] = frozenset({(FuncRef(fn.key), EMPTY)})
            elif t is ClassDef:
                c = st.cls
                env[c.name] = frozenset({(ClassRef((m.path, c.qualname)), EMPTY)})
            elif t is Block:
                outs = [self._run(m, b, dict(env)) for b in st.bodies]
                env = _join(env, *outs)
        return env

    def _bind_top(self, m: Mod, env: dict, t, value_expr, vals: frozenset, pos):
        if isinstance(t, Name):
            name = t.id
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
            if isinstance(value_expr, Call) and len(value_expr.args) == 1 \
                    and isinstance(value_expr.args[0].value, Name):
                k = (m.path, value_expr.args[0].value.id)
                self.wrap_arg_uses[k] = self.wrap_arg_uses.get(k, 0) + 1
            observed = m.__dict__.get("_observed")
            if observed and name in observed and name in env:
                vals = vals | self.force(env[name])     # read before this binding, too
            if name in env and env[name] is not vals:
                self._replace(m, name, env[name], pos)
            env[name] = vals
        elif isinstance(t, Subscript) and isinstance(t.base, Name):
            base = t.base.id
            key = t.index
            if base in env and isinstance(key, Lit) and key.value in WINDOW_KEYS:
                site = Site(m.path, _pt(t.pos), key.value, "subscript-store", m.top.key,
                            self.ref(value_expr), _pt(pos))
                ent = WinEntry(site, EMPTY, ())
                env[base] = frozenset(
                    ((DictVal(v.alloc, v.entries | {ent}, v.opaque) if isinstance(v, DictVal) else v), f)
                    for v, f in self.force(env[base]))
        elif isinstance(t, TupleExpr):
            for sub in t.elts:
                self._bind_top(m, env, sub, UNKNOWN, frozenset({(Opaque("unpacked"), EMPTY)}), pos)

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

    def replaced_values(self, m: Mod, name: str, line: int | None = None) -> Vals:
        """What the module-level ``name`` held before a later module-level binding replaced
        it: code run in between (a list, a dict, a default, a class body, a call at import
        time) may have kept that value, which the final environment no longer shows. With
        ``line``: only values still held at that line (replaced by a binding at or after it;
        a binding with no line counts as after)."""
        self.env(m)
        out = set()
        for at, raw in self.replaced.get((m.path, name), ()):
            if line is None or at is None or at >= line:
                out |= self.force(raw)
        return frozenset(out)

    def _replace(self, m: Mod, name: str, raw, pos) -> None:
        at = pos[0] if pos and isinstance(pos[0], int) else None
        self.replaced.setdefault((m.path, name), []).append((at, raw))

    def global_value(self, m: Mod, name: str) -> Vals:
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


_ANY_NAME: list = []        # marks an ``__all__`` that may name anything


def _constant_all(m: Mod) -> list | None:
    """The module's ``__all__`` when its one module-level binding is a list or tuple of string
    constants and nothing else names it; None when the module never names ``__all__`` (every
    public name is exported); ``_ANY_NAME`` when it names it any other way (built by a
    comprehension, extended, appended to, imported, bound in a block): any name may be."""
    found = None
    mentions = 0
    for x in walk_ir(m.ir.body):
        if type(x) is Name and x.id == "__all__":
            mentions += 1
        elif type(x) is Import and any(it[0] == "__all__" for it in x.items):
            return _ANY_NAME
    for st in m.ir.body:
        if isinstance(st, Assign) and any(_is(t, "__all__") for t in st.targets):
            v = st.value
            if found is not None or not isinstance(v, (ListExpr, TupleExpr)) or \
                    not all(isinstance(x, Lit) and isinstance(x.value, str) for x in v.elts):
                return _ANY_NAME
            found = [x.value for x in v.elts]
        elif isinstance(st, AugAssign) and _is(st.target, "__all__"):
            return _ANY_NAME
    if found is None:
        return _ANY_NAME if mentions else None
    return found if mentions == 1 else _ANY_NAME


def _calls_own(e, own: dict) -> set:
    """The names of the module's own functions and classes the expression calls by name (a
    dict display's keys are not looked into)."""
    return {x.func.id for x in walk_ir(e, keys=False)
            if type(x) is Call and type(x.func) is Name and x.func.id in own}


def _names_read(names: set, own: dict) -> set:
    """Every name spelled in the code of the module's own functions/classes ``names``, and of
    the own functions those spell, transitively (an over-approximation of what they read)."""
    out: set = set()
    todo = list(names)
    done: set = set()
    while todo:
        n = todo.pop()
        if n in done or n not in own:
            continue
        done.add(n)
        stack = [own[n].body] + ([own[n].decorators] if hasattr(own[n], "decorators") else [])
        while stack:
            x = stack.pop()
            if isinstance(x, (FuncIR, ClassIR)):
                stack.append(x.body)
            elif isinstance(x, (list, tuple)):
                if len(x) == 2 and x[0] == "N" and isinstance(x[1], str):
                    out.add(x[1])
                    if x[1] in own:
                        todo.append(x[1])
                else:
                    stack.extend(x)
    return out


def _rewraps(st) -> bool:
    """``x = w(x, ...)`` or ``x = w(...)(x, ...)``: a name rebound to a wrapping of itself."""
    if not isinstance(st, Assign) or len(st.targets) != 1 or not isinstance(st.targets[0], Name):
        return False
    v = st.value
    return isinstance(v, Call) and bool(v.args) and v.args[0].kind == "p" and \
        isinstance(v.args[0].value, Name) and v.args[0].value.id == st.targets[0].id
