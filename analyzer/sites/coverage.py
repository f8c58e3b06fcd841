"""The calls that can reach FlashAttention, and the window inputs each one takes: window
sites, values (``window_values``) and the atoms a site can be. Verdicts are ``verdicts``'s."""

from __future__ import annotations

import ast

from analyzer.sites.bindings import WINDOW_KEYS, _extra_fa4
from analyzer.sites.ir import (Attr, Call, Either, ListExpr, Lit, Name, Starred, Subscript,
                              TupleExpr)
from analyzer.sites.flow import (Const, DictVal, FAFunc, Fn, ListVal, Opaque, Site, Solver,
                                 _FnCtx, consistent, expr_label, first_param_untrusted,
                                 fn_context, is_static_method, reaching_defs)


class Text:
    """Source text of the audited files, for value expressions and columns."""

    def __init__(self, data: dict[str, bytes]):
        self.data = data
        self._lines: dict[str, list[bytes]] = {}

    def lines(self, path: str) -> list[bytes]:
        ls = self._lines.get(path)
        if ls is None:
            ls = self.data.get(path, b"").splitlines()
            self._lines[path] = ls
        return ls

    def col(self, path: str, line: int, col_byte: int) -> int:
        """1-based character column of a byte column."""
        ls = self.lines(path)
        if not (1 <= line <= len(ls)):
            return col_byte + 1
        return len(ls[line - 1][:col_byte].decode("utf-8", "replace")) + 1

    def span(self, path: str, sp: tuple) -> str:
        if not sp or not sp[0]:
            return ""
        l, c, el, ec = sp[:4]
        ls = self.lines(path)
        if not (1 <= l <= len(ls)) or not (1 <= el <= len(ls)):
            return ""
        if l == el:
            raw = ls[l - 1][c:ec]
        else:
            raw = b"\n".join([ls[l - 1][c:]] + ls[l:el - 1] + [ls[el - 1][:ec]])
        text = raw.decode("utf-8", "replace")
        return " ".join(text.split())


def _value_text(text: Text, site: Site) -> str:
    if site.style == "subscript-store":
        t = text.span(site.path, site.tspan)
        return t.split("=", 1)[1].strip() if "=" in t else t
    t = text.span(site.path, site.pos)
    if site.style in ("keyword", "update", "dict-call") and "=" in t and t.split("=", 1)[0].strip() == site.key:
        return t.split("=", 1)[1].strip()
    if site.style in ("dict-literal", "update") and ":" in t:
        return t.split(":", 1)[1].strip()
    return t


# ----------------------------------------------------------------------------- window values

def window_values(solver: Solver, fnkey, expr, side, depth: int = 0, seen=None,
                  line: int | None = None) -> set:
    """What a window side can be: ("int", n) | ("none",) | ("unk", why, param_of). ``line``:
    where ``expr`` is read (a local name then takes only the bindings that reach there)."""
    seen = set() if seen is None else seen
    if depth > 10:
        return {("unk", "too deep to follow", None)}
    fn = solver.fns.get(fnkey)
    if isinstance(expr, Lit):
        v = expr.value
        if v is None:
            return {("none",)}
        if isinstance(v, int) and not isinstance(v, bool):
            return {("int", v)} if side is None else {("unk", "an int where a pair is expected", None)}
        # a constant that is neither None nor an int (-1.0, True): a fourth field carries it,
        # since no wrapper is proved on it (``verdicts.WindowValues.outside``)
        return {("unk", f"{v!r} is not an int", None, v)}
    if isinstance(expr, Name) and expr.id == "None":
        return {("none",)}
    if isinstance(expr, TupleExpr):
        if side is None:
            return {("unk", "a pair where one side is expected", None)}
        elts = expr.elts
        if len(elts) == 2 and not any(isinstance(x, Starred) for x in elts):
            return window_values(solver, fnkey, elts[side], None, depth + 1, seen, line)
        return {("unk", "not a pair", None)}
    if isinstance(expr, Either):
        out = set()
        for branch, taken in ((expr.a, True), (expr.b, False)):
            vals = window_values(solver, fnkey, branch, side, depth + 1, seen, line)
            if expr.test is not None and side is None and isinstance(branch, Name) and \
                    _tested_name(expr.test) == branch.id:
                # ``None if l < 0 else l``: the branch that is the tested name itself holds
                # only the values for which the test goes its way
                vals = {a for a in vals if a[0] not in ("int", "none")
                        or _test_holds(expr.test, a[1] if a[0] == "int" else None) is taken}
            out |= vals
        return out
    if isinstance(expr, Subscript) and isinstance(expr.index, Lit) \
            and isinstance(expr.index.value, int) and side is None and expr.index.value in (0, 1):
        return window_values(solver, fnkey, expr.base, expr.index.value, depth + 1, seen, line)
    if isinstance(expr, Subscript) and isinstance(expr.index, Lit) \
            and expr.index.value in WINDOW_KEYS and fn is not None:
        got = _dict_entry_values(solver, fn, expr, side, depth, seen)
        if got is not None:
            return got
    if isinstance(expr, Subscript) and isinstance(expr.index, Lit) \
            and isinstance(expr.index.value, str) and expr.index.value not in WINDOW_KEYS \
            and isinstance(expr.base, Name) and fn is not None and fn.ir is not None:
        got = _display_item(solver, fn, expr, side, depth, seen, line)
        if got is not None:
            return got
    if isinstance(expr, Name) and fn is not None and fn.ir is not None:
        name = expr.id
        if (fnkey, name, side, line) in seen:
            return set()
        seen.add((fnkey, name, side, line))
        if name not in fn.defs or name in fn.globals:
            return _module_level(solver, fn, name, side) or \
                {("unk", f"{name} (not a local)", None)}
        out = set()
        for kind, payload, _ in reaching_defs(fn, name, line):
            if kind == "expr":
                at = payload[1][0] if payload[1] and isinstance(payload[1][0], int) else None
                out |= window_values(solver, fnkey, payload[0], side, depth + 1, seen, at)
            elif kind == "param":
                out.add(("unk", f"parameter {name} of {fn.qualname}", fnkey))
                if payload[2] is not None:
                    out |= window_values(solver, fnkey, payload[2], side, depth + 1, seen)
                # what the tree's own calls pass for it (a literal -2, a caller's default, an
                # expression): the convention on values from outside (None, ints >= -1) says
                # nothing about them
                out |= _from_callers(solver, fn, name, side, depth, seen)
            else:
                out.add(("unk", f"{name} ({kind})", None))
        return out
    if isinstance(expr, Attr) and fn is not None and fn.cls is not None \
            and isinstance(expr.base, Name) and expr.base.id == fn.first_param:
        attr = expr.attr
        why = first_param_untrusted(fn)
        if why:
            return {("unk", f"{fn.first_param}.{attr}: {why}", None)}
        out = set()
        for m in fn.cls.methods.values():
            if m.first_param is None:
                continue
            for value, _, _ in m.attr_stores.get((m.first_param, attr), []):
                out |= {(a if a[0] != "unk" else ("unk", f"{a[1]} (via {fn.first_param}.{attr})", a[2]))
                        for a in window_values(solver, m.key, value, side, depth + 1, seen)}
        stores = getattr(solver, "attr_stores", None)
        elsewhere = stores.foreign(fn.cls.ir.name, attr, is_static_method(fn)) \
            if stores is not None \
            else "the tree's text is not available"
        if elsewhere:
            out.add(("unk", f"{fn.first_param}.{attr} may also be set outside "
                            f"{fn.cls.ir.name}'s own methods ({elsewhere})", None))
        return out or {("unk", f"{fn.first_param}.{attr} (never set)", None)}
    if isinstance(expr, Call) and fn is not None:
        made = _not_an_int(solver, fn, expr)
        if made:
            # a float (``float("-inf")``) or an instance of a class (an int subclass whose
            # comparisons lie): outside the ints and None every wrapper is proved on
            return {("unk", f"{expr_label(expr)} is {made}", None, expr_label(expr))}
    return {("unk", expr_label(expr), None)}


def _module_level(solver: Solver, fn, name: str, side) -> set | None:
    """What a name read from its module's scope can be as a side, where the flow knows it:
    every value an int or None constant, or an expression the IR keeps opaque (arithmetic:
    ``NO_WINDOW = -(1 << 31)``, labelled "..."); None otherwise (an import, a container...)."""
    if side is not None:
        return None
    try:
        vals = solver.eval(fn_context(solver, fn), Name(id=name))
    except RecursionError:
        return None
    out: set = set()
    for v, _ in vals:
        if isinstance(v, Const) and (v.value is None or type(v.value) is int):
            out.add(("none",) if v.value is None else ("int", v.value))
        elif isinstance(v, Opaque) and v.reason == "expression" and v.param_of is None:
            out.add(("unk", "...", None))
        else:
            return None
    return out or None


def _tested_name(test) -> str | None:
    """The one name a conditional's test (``ir.Either.test``) reads, None if several."""
    if test[0] == "cmp":
        return test[1]
    if test[0] == "not":
        return _tested_name(test[1])
    a, b = _tested_name(test[1]), _tested_name(test[2])
    return a if a == b else None


_OPS = {"==": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
        "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y,
        "is": lambda x, y: x is y, "is not": lambda x, y: x is not y}


def _test_holds(test, value) -> bool | None:
    """The test's truth where its name holds ``value`` (an int or None), as Python reads it
    (``and``/``or`` short-circuit); None where Python raises (``None < 0``): no branch."""
    try:
        if test[0] == "cmp":
            y = test[3]
            if test[2] in ("is", "is not"):
                # identity of ints is not promised beyond None/True/False: both ways
                if y is not None and not isinstance(y, bool) or \
                        value is not None and y is not None:
                    return None
            return bool(_OPS[test[2]](value, y))
        if test[0] == "not":
            inner = _test_holds(test[1], value)
            return None if inner is None else not inner
        first = _test_holds(test[1], value)
        if first is None:
            return None
        if (test[0] == "and") != first:
            return first
        return _test_holds(test[2], value)
    except TypeError:
        return None


def window_containers(solver: Solver, fnkey, expr, line: int | None = None, depth: int = 0,
                      seen=None) -> frozenset:
    """What a ``window_size`` value can be built as: "tuple", "list", "built" (a call's
    result, which may be another sequence) or "other" (anything the flow does not see built:
    a parameter, an attribute, typed by FA4's API as a tuple or list). A wrapper may treat
    a tuple and a list apart (``isinstance(w, tuple)``), so a call is judged in the forms its
    containers allow; "other" allows both."""
    seen = set() if seen is None else seen
    if depth > 10:
        return frozenset({"other"})
    if isinstance(expr, TupleExpr):
        return frozenset({"tuple"})
    if isinstance(expr, ListExpr):
        return frozenset({"list"})
    if isinstance(expr, Either):
        return (window_containers(solver, fnkey, expr.a, line, depth + 1, seen)
                | window_containers(solver, fnkey, expr.b, line, depth + 1, seen))
    if isinstance(expr, (Lit, Name)) and (not isinstance(expr, Name) or expr.id == "None"):
        return frozenset()          # None (or a constant, judged as a pair elsewhere): no form
    if isinstance(expr, Call):
        # ``tuple(...)``/``list(...)`` build what they name; any other call (``range(l, 1)``,
        # a namedtuple ``Window(l, r)``, a helper) may build another sequence FA4 indexes
        f = expr.func
        if isinstance(f, Name) and f.id in ("tuple", "list"):
            return frozenset({f.id})
        return frozenset({"built"})
    fn = solver.fns.get(fnkey)
    if isinstance(expr, Name) and fn is not None and fn.ir is not None:
        name = expr.id
        if (fnkey, name, line) in seen:
            return frozenset()
        seen.add((fnkey, name, line))
        if name not in fn.defs or name in fn.globals:
            return frozenset({"other"})
        out: set = set()
        for kind, payload, _ in reaching_defs(fn, name, line):
            if kind != "expr":
                return frozenset({"other"})       # a parameter, a loop target, an import
            at = payload[1][0] if payload[1] and isinstance(payload[1][0], int) else None
            out |= window_containers(solver, fnkey, payload[0], at, depth + 1, seen)
        return frozenset(out)
    return frozenset({"other"})


def _dict_entry_values(solver: Solver, fn, expr, side, depth: int, seen: set) -> set | None:
    """``kw["window_size"]`` read off a dict the flow models (built and changed where it
    looks, no entry it cannot see): what each of its entries for that key can be. None when
    it is not such a dict (the caller's answer stands)."""
    try:
        vals = solver.eval(fn_context(solver, fn), expr.base)
    except RecursionError:
        return None
    out: set = set()
    for v, _ in vals:
        if not isinstance(v, DictVal) or v.opaque:
            return None
        hits = [e for e in v.entries if e.site.key == expr.index.value]
        if not hits:
            return None
        for e in hits:
            at = e.site.pos[0] if e.site.pos and isinstance(e.site.pos[0], int) else None
            out |= window_values(solver, e.site.fn, solver.exprs[e.site.expr_id], side,
                                 depth + 1, seen, at)
    return out or None


def _display_item(solver: Solver, fn, expr, side, depth: int, seen: set, line) -> set | None:
    """``w["left"]`` off a local dict built by a display with constant keys that nothing
    changes (no item stored, no method, no call it is handed to, no alias): what the display
    holds for that key. None when it is not such a dict (the caller's answer stands)."""
    from analyzer.sites.flow_base import container_escapes
    from analyzer.sites.ir import DictExpr

    name, key = expr.base.id, expr.index.value
    if name not in fn.defs or name in fn.globals or name in fn.loop_defined \
            or fn.sub_stores.get(name) or fn.updates.get(name) or container_escapes(fn, name)[0]:
        return None
    try:
        if solver._unfollowed_calls(fn, name) or any(True for _ in solver._helpers_given(fn, name)):
            return None
    except RecursionError:
        return None
    def displays(e):            # ``{...} if c else {...}``: each branch's display
        if isinstance(e, Either):
            a, b = displays(e.a), displays(e.b)
            return None if a is None or b is None else a + b
        return [e] if isinstance(e, DictExpr) else None

    out: set = set()
    for kind, payload, _ in reaching_defs(fn, name, line):
        shown = displays(payload[0]) if kind == "expr" else None
        if not shown:
            return None
        at = payload[1][0] if payload[1] and isinstance(payload[1][0], int) else None
        for d in shown:
            if any(k is None or not isinstance(k, Lit) for k, _, _ in d.items):
                return None
            hits = [v for k, v, _ in d.items if k.value == key]
            if not hits:
                return None
            out |= window_values(solver, fn.key, hits[-1], side, depth + 1, seen, at)
    return out or None


def _from_callers(solver: Solver, fn, name: str, side, depth: int, seen: set) -> set:
    """The window values the tree's calls of ``fn`` pass for its parameter ``name`` (each
    argument read where the call stands; a ``*``/``**`` argument of unknown shape is an
    unknown). Callers in files the pass did not parse are not asked for here: their values are
    the parameter's outside values."""
    out: set = set()
    if depth > 6:
        return out
    saved, solver.search_ok = solver.search_ok, True     # files that call it are parsed
    try:
        callers = solver.callers(fn)
    except RecursionError:
        return {("unk", f"the callers of {fn.qualname}", None)}
    finally:
        solver.search_ok = saved
    for caller, call, _guards, _tte, shift in callers:
        edge = solver._edge(fn, caller, call, shift, static=True)
        line = call.pos[0] if call.pos and isinstance(call.pos[0], int) else None
        where = f"{FROM_CALLER}{fn.qualname} at {caller.mod.path}:{line or 0}"
        for expr, fnkey, _facts, _exact in edge["src"].get(name, []):
            for a in window_values(solver, fnkey, expr, side, depth + 1, seen, line):
                # what the tree computes and cannot bound, handed over by its own call: not a
                # value from outside (marked, so the window domain is not taken for it)
                out.add(("unk", f"{where}: {a[1]}", None) if a[0] == "unk" and a[2] is None
                        and len(a) == 3 and not a[1].startswith(FROM_CALLER) else a)
        if edge["src"].get("*unknown*") or any(kw is None for kw, _e, _p in edge["extra_kw"]):
            out.add(("unk", f"{where}: arguments the pass cannot place", None))
    return out


FROM_CALLER = "from the tree's call of "


def _copy_takes_window_by_position(solver, entry, npos: int, star: bool) -> str:
    """Why a call giving ``npos`` arguments by position (``star``: and a ``*`` splat) to the
    tree's own copy of an FA4 entry point may hand it a window by position, read off the
    copy's own signature (its order need not be FA4's); "" when it cannot."""
    idx = getattr(getattr(solver, "attr_stores", None), "index", None)
    info = idx.modules.get(entry.module) if idx is not None else None
    tree = info.tree if info is not None else None
    fdef = next((st for st in (tree.body if tree is not None else ())
                 if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and st.name == entry.name), None)
    if fdef is None:
        return (f"arguments given by position to {entry.qual}, a copy of FA4 in the tree whose "
                "signature cannot be read") if npos > 3 or star else ""
    names = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
    reach = names if star else names[:npos]
    hit = next((n for n in reach if n in WINDOW_KEYS), None)
    return (f"{hit} given by position to {entry.qual}, a copy of FA4 in the tree (its own "
            "parameter order)") if hit else ""


_NOT_INTS = frozenset({"builtins.float", "builtins.complex", "decimal.Decimal",
                       "fractions.Fraction", "builtins.str", "builtins.bytes"})


def _not_an_int(solver: Solver, fn, call) -> str:
    """What a call makes when that is certainly not a plain int or None: a float, a
    complex, a decimal, or an instance of a class of the tree; "" otherwise."""
    try:
        vals = solver.eval(fn_context(solver, fn), call.func)
    except RecursionError:
        return ""
    for v, _ in vals:
        qual = getattr(v, "qual", None)
        if qual in _NOT_INTS:
            return f"a {qual.rsplit('.', 1)[-1]}, not an int"
        if type(v).__name__ == "ClassRef":
            return "an instance of a class of the tree, not a plain int"
    return ""


def site_line(site) -> int | None:
    """The line where a site's value is read."""
    pos = getattr(site, "pos", None)
    return pos[0] if pos and isinstance(pos[0], int) else None


def atom_text(a) -> str:
    if a[0] == "int":
        return str(a[1])
    if a[0] == "none":
        return "None"
    return f"unknown: {a[1]}"


def atom_safe(a, normalised_params) -> bool:
    if a[0] == "none":
        return True
    if a[0] == "int":
        return a[1] >= 0
    return a[2] is not None and a[2] in normalised_params


def site_atoms(solver: Solver, site: Site) -> set:
    expr = solver.exprs[site.expr_id]
    if site.key == "window_size":
        out = set()
        for side in (0, 1):
            out |= window_values(solver, site.fn, expr, side, line=site_line(site))
        # window_size=None means both sides None
        return out
    return window_values(solver, site.fn, expr, None, line=site_line(site))


# ----------------------------------------------------------------------------- analysis

class Analysis:
    """Finds every call that can reach an FA entry point and its window inputs. Whether an FA4
    value is normalised is the judge's answer (``verdicts.Judge``: by behaviour, never by
    name); FA4 calls are decided later by ``verdicts.decide``."""

    def __init__(self, solver: Solver, text: Text, wrapper_names: set[str], judge):
        self.solver = solver
        self.text = text
        self.wrapper_names = wrapper_names
        self.judge = judge     # analyzer.sites.verdicts.Judge: chains judged by behaviour

    def normalised(self, v: FAFunc) -> bool:
        return self.judge.normalised(v)

    def run(self):
        s = self.solver
        calls = []
        site_info: dict[Site, dict] = {}
        for path in sorted(s.mods):
            mod = s.mods[path]
            for fn in mod.all_fns:
                ctx = fn_context(s, fn)
                for call, guards, tte in fn.calls:
                    g = fn.guards(guards)
                    func = call.func
                    if isinstance(func, Attr) and not (fn.cls is not None
                                                       and isinstance(func.base, Name)
                                                       and func.base.id == fn.first_param):
                        # x.m(...): only a module, a class or an FA module object can hand out
                        # an FA entry point as an attribute; those never come from parameters
                        base = s.eval(_FnCtx(s, fn, True) if fn.ir is not None else ctx, func.base)
                        vals = s.attr_value(base, func.attr, fn)
                    else:
                        # No caller search for callees: an FA entry point only reaches a
                        # parameter from a caller that holds it, and such a caller's file is
                        # loaded already (it spells an FA name) or was loaded as a callee.
                        vals = s.eval(ctx, func)
                    fa = sorted({(v, f) for v, f in vals
                                 if isinstance(v, FAFunc) and consistent(f | g)},
                                key=lambda x: (x[0].entry.version, x[0].entry.qual, str(x[0].chain), sorted(x[1])))
                    if not fa:
                        continue
                    calls.append(self._call(fn, ctx, call, g, tte, fa, site_info))
        return calls, site_info

    def _kwargs_hold_no_window(self, fn: Fn, call, e, fa) -> bool:
        """``**kw`` where ``kw`` is the calling function's own ``**`` parameter as its callers
        filled it: Python binds a keyword that names one of the function's parameters to that
        parameter, so the dict never holds such a key. When every window keyword of the FA4
        entries called is one of them, what outside callers put in ``kw`` carries no window
        (``causal`` it may carry: a splat makes causal unknown, judged both ways). Only where
        ``kw`` is used as nothing but a ``**`` splat (never rebound, changed, deleted, read,
        closed over or reached through ``locals()``/a frame)."""
        if not isinstance(e, Name) or any(v.entry.version != "fa4" for v, _ in fa):
            return False
        if not any(p.kind == "kw" and p.name == e.id for p in fn.params):
            return False
        keys = set()
        for v, _ in fa:
            keys |= set(v.entry.window_positions())
        if not keys:
            return False
        info = self.judge.index.by_path.get(fn.mod.path) if self.judge is not None else None
        if info is None or info.tree is None:
            return False
        node = info.function_at(fn.name, call.pos[0])
        if node is None or node.args.kwarg is None or node.args.kwarg.arg != e.id:
            return False
        named = {a.arg for a in node.args.args + node.args.kwonlyargs}   # not positional-only
        if not keys <= named:
            return False
        if any(w in info.segment(node).encode() for w in (b"f_locals", b"locals(", b"vars(",
                                                              b"_getframe", b"currentframe")):
            return False
        from analyzer.sites.astutil import parent as parent_of

        for n in ast.walk(node):
            if isinstance(n, (ast.Global, ast.Nonlocal)) and e.id in n.names:
                return False
            if isinstance(n, ast.arg) and n.arg == e.id and n is not node.args.kwarg:
                return False            # a nested function's own parameter of that name
            if isinstance(n, ast.Name) and n.id == e.id:
                p = parent_of(n)
                if not (isinstance(n.ctx, ast.Load) and isinstance(p, ast.keyword)
                        and p.arg is None):
                    return False
        return True

    def _splat_at(self, fn: Fn, ctx, e, apos):
        """What ``**e`` at a call hands over. A local name is read with the bindings that
        reach the call's line (``kw = {...}`` after ``def f(**kw)`` hides what callers put in
        the parameter), and the changes the function makes to it (``name_values``)."""
        s = self.solver
        line = apos[0] if apos and isinstance(apos[0], int) else None
        if isinstance(e, Name) and line and fn.ir is not None and e.id in fn.defs \
                and e.id not in fn.globals and e.id not in fn.nonlocals \
                and getattr(ctx, "fn", None) is fn:
            entries = fn.defs[e.id]
            rd = reaching_defs(fn, e.id, line)
            if rd and len(rd) < len(entries):
                return s.name_values(ctx, e.id, s._local(fn, e.id, ctx.static, rd))
        return s.eval(ctx, e)

    def _call(self, fn: Fn, ctx, call, g, tte, fa, site_info):
        s = self.solver
        inputs = []       # (Site | None, facts, via, opaque_reason, param_of, splat expr | None)
        pos_i = 0
        exact = True
        path = fn.mod.path
        fa4_positions = set()
        for v, _ in fa:
            for key, idxs in v.entry.window_positions().items():
                for i in idxs:
                    fa4_positions.add((i, key))
        # a vendored or declared copy keeps FA4's names, not necessarily its parameter order:
        # an argument given by position past the three tensors may be a window there
        copies = [v for v, _ in fa if v.entry.version == "fa4" and _extra_fa4(v.entry.module)]
        npos = sum(1 for a in call.args if a.kind == "p")
        by_keyword = {a.kw for a in call.args if a.kind == "k"}
        for v in copies:
            why = _copy_takes_window_by_position(s, v.entry, npos,
                                                 any(a.kind == "*" for a in call.args))
            if why:
                inputs.append((None, g, (), why, None, None))
                break
        for kind, kw, e, apos in call.args:
            if kind == "k" and kw in WINDOW_KEYS:
                inputs.append((Site(path, tuple(apos[:4]), kw, "keyword", fn.key, s.ref(e)), g, (), None, None,
                               None))
            elif kind == "**":
                s.search_ok = True
                try:
                    splat = self._splat_at(fn, ctx, e, apos)
                finally:
                    s.search_ok = False
                for v, f in splat:
                    if isinstance(v, DictVal):
                        for ent in v.entries:
                            inputs.append((ent.site, ent.facts | f | g, ent.via, None, None, e))
                        for r in v.opaque:
                            inputs.append((None, f | g, (), f"**{expr_label(e)}: {r}", None, e))
                    elif isinstance(v, Opaque):
                        if v.param_of == fn.key and self._kwargs_hold_no_window(fn, call, e, fa):
                            continue
                        inputs.append((None, f | g, (), f"**{expr_label(e)}: {v.reason}", v.param_of,
                                       e))
                    elif not isinstance(v, (Const, ListVal)):  # a list cannot be **-splatted
                        inputs.append((None, f | g, (), f"**{expr_label(e)}: {type(v).__name__}",
                                       None, e))
            elif kind == "p":
                if exact:
                    for i, key in sorted(fa4_positions):
                        if i == pos_i:
                            inputs.append((Site(path, tuple(apos[:4]), key, "positional", fn.key, s.ref(e)),
                                           g, (), None, None, None))
                pos_i += 1
            elif kind == "*":
                exact = False
                # a window the call also passes by keyword cannot come by position as well:
                # FA4 raises (``got multiple values``), it never reads a second window
                open_positions = {(i, key) for i, key in fa4_positions if key not in by_keyword}
                if open_positions and max(i for i, _ in open_positions) >= pos_i:
                    known = None
                    for v, f in s.eval(ctx, e):
                        if isinstance(v, ListVal) and v.exact:
                            known = max(known or 0, v.base_len)
                        else:
                            known = None
                            break
                    if known is None or pos_i + known > min(i for i, _ in open_positions):
                        inputs.append((None, g, (), f"*{expr_label(e)}: positional arguments may "
                                                    f"carry a window", None, None))
                    elif known is not None:
                        pos_i += known
                        exact = True
        # which inputs reach which entries
        entries = sorted({v.entry.qual for v, _ in fa})
        versions = sorted({v.entry.version for v, _ in fa})
        fa4 = [(v, f) for v, f in fa if v.entry.version == "fa4"]
        site_ids = []
        opaque = []
        fa4_inputs = []
        for site, facts, via, reason, param_of, splat in inputs:
            reached = set()
            for v, f in fa:
                if site is not None and site.style == "positional" and \
                        site.key not in v.entry.window_positions():
                    continue
                if consistent(facts | f | g):
                    reached.add(v.entry.version)
            if not reached:
                continue
            if site is not None:
                info = site_info.setdefault(site, {"calls": [], "versions": set(), "via": via})
                info["calls"].append(call)
                info["versions"] |= reached
                site_ids.append(site)
            else:
                opaque.append(reason)
            if "fa4" in reached:
                # ``splat``: the ``**`` expression the input arrived through (None otherwise)
                fa4_inputs.append((site, reason, param_of, splat))
        reaches_fa4 = bool(fa4)
        if reaches_fa4:
            # decided later, by behaviour and pairs (analyzer.sites.verdicts.decide)
            return {"fn": fn, "call": call, "fa": fa, "entries": entries, "versions": versions,
                    "sites": site_ids, "opaque": opaque, "reaches_fa4": reaches_fa4,
                    "coverage": "pending", "why": "", "tte": tte, "unwrapped": [],
                    "fa4": fa4, "fa4_inputs": fa4_inputs, "ctx": ctx, "g": g}
        return {"fn": fn, "call": call, "fa": fa, "entries": entries, "versions": versions,
                "sites": site_ids, "opaque": opaque, "reaches_fa4": False,
                "coverage": "n/a", "why": "does not reach FA4", "tte": tte, "unwrapped": []}
