"""libcst -> a small, picklable IR of one file (the per-file, cacheable half of the pass).

Why an IR: the per-file work (parse + walk) is what costs; it runs in worker processes and is
cached by content hash. The cross-file solver (``flow``) only ever sees this IR.

Positions without PositionProvider: running libcst's PositionProvider costs ~2x the parse
(measured: 1.2 s on TE's 258 KB context_parallel.py). Instead, every node kind that needs a
position (call, call argument, dict element, subscript, import alias, assignment, def) gets an
ordinal in libcst pre-order; the same kinds are collected from ``ast`` (0.06 s on that file)
and sorted by start position (outer node first on ties), which is the same order. Counts are
checked kind by kind; any mismatch falls back to PositionProvider for that file, so a wrong
mapping can never be silent.

The IR's nodes are the typed, immutable ``NamedTuple`` classes of ``ir`` (why those: its
docstring). Each keeps the short tag it had as a bare tuple as its first field, so a node still
equals and indexes like ``(tag, field, ...)``; fields by name:
Expressions:
  Name(id)  Attr(base, attr)  Lit(value)  TupleExpr(elts)  ListExpr(elts, pos)  Starred(value)
  DictExpr(items: [DictItem(key|None, value, pos)], pos)  Call(func, args, pos)
  args: [Arg(kind, kw, value, pos)], kind in "p" positional, "*" star, "k" keyword, "**"
  double star;  Either(a, b) either value;  Subscript(base, index, pos);  Unknown() (the
  shared ``UNKNOWN``) opaque. A ListExpr / DictExpr ``pos`` is ("alloc", first line of the chunk, n), an identity.
Statements:
  Import([ImportItem(local, module, attr|None, level, pos)])  Assign([targets], value, pos)
  AugAssign(target, value, pos)  If(true_facts, false_facts, body, orelse)
  Try(body, [Handler(names, body)], orelse, final)  Loop(target|None, iter, body, orelse)
  With([WithItem(expr, target|None)], body)  FuncDef(FuncIR)  ClassDef(ClassIR)
  Return(value)  Global(names)  Nonlocal(names)  ExprStmt(value)  Block([bodies])
  FuncIR.params: [Param(name, kind, default|None)]
Targets: Name, Attr, Subscript, TupleExpr([targets]), Starred(target), Unknown.
A ``pos`` is a list [line, col_byte, end_line, end_col_byte] (1-based line, 0-based byte col).
"""

from __future__ import annotations

import ast

import libcst as cst

from analyzer.sites.ir import IR_VERSION, ClassIR, FuncIR, ModuleIR  # noqa: F401
from analyzer.sites.ir import (UNKNOWN, Arg, Assign, Attr, AugAssign, Block, Call, ClassDef,
                              DictExpr, DictItem, Either, ExprStmt, FuncDef, Global, Handler,
                              If, Import, ImportItem, ListExpr, Lit, Loop, Name, Nonlocal, Param,
                              Return, Starred, Subscript, Try, TupleExpr, With, WithItem)


_WS = {"whitespace", "lpar", "rpar", "comma", "semicolon", "lbracket", "rbracket", "lbrace",
       "rbrace", "colon", "equal", "header", "footer", "leading_lines", "newline",
       "lines_after_decorators", "trailing_whitespace", "asynchronous", "operator", "dot",
       "whitespace_before", "whitespace_after", "first_line", "empty_lines", "indent",
       "whitespace_before_colon", "whitespace_after_star", "whitespace_after_param",
       "whitespace_before_params", "whitespace_after_def", "whitespace_after_class",
       "whitespace_after_import", "whitespace_before_import", "whitespace_after_from",
       "whitespace_after_arg", "whitespace_before_args", "whitespace_after_indicator",
       "whitespace_after_at", "whitespace_after_as", "whitespace_before_as",
       "whitespace_after_await", "whitespace_after_lambda", "whitespace_before_in",
       "whitespace_after_in", "whitespace_before_if", "whitespace_after_if",
       "whitespace_before_else", "whitespace_after_else", "whitespace_before_value",
       "whitespace_after_for", "whitespace_before_for", "whitespace_after_walrus",
       "whitespace_before_walrus", "whitespace_before_from", "whitespace_after_func",
       "whitespace_after_return", "whitespace_after_raise", "whitespace_after_del",
       "whitespace_after_assert", "whitespace_after_global", "whitespace_after_nonlocal",
       "whitespace_after_yield", "whitespace_before_expression", "whitespace_after_expression",
       "whitespace_before_patterns"}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    f = _FIELDS.get(t)
    if f is None:
        import dataclasses
        f = tuple(x.name for x in dataclasses.fields(t)
                  if x.name not in _WS and not x.name.startswith("whitespace"))
        _FIELDS[t] = f
    return f


KINDS = ("call", "arg", "delem", "sub", "alias", "asg", "def")


class _Extractor:
    def __init__(self, provider_positions=None):
        self.counters = {k: 0 for k in KINDS}
        self.pending: dict[str, list] = {k: [] for k in KINDS}
        self.provider = provider_positions   # node -> CodeRange, fallback mode

    # -- positions -----------------------------------------------------------------
    def pos(self, node, kind, check=None):
        if self.provider is not None:
            r = self.provider.get(node)
            if r is None:
                return [0, 0, 0, 0]
            # provider columns are characters; mark with a negative end col? keep as chars
            return [r.start.line, r.start.column, r.end.line, r.end.column, "chars"]
        p = [kind, self.counters[kind]]
        self.counters[kind] += 1
        self.pending[kind].append((p, check))
        return p

    # -- statements ----------------------------------------------------------------
    def body(self, stmts, scope):
        out = []
        for s in stmts:
            n0 = len(out)
            self.stmt(s, out, scope)
            if self.calls_in_generic:
                out.append(ExprStmt(value=TupleExpr(elts=self.calls_in_generic)))
                self.calls_in_generic = []
            if self.walrus:
                # ``(name := value)`` anywhere in the statement (a test, a call, a
                # comprehension: it binds in this scope) is a binding of ``name`` just before
                # it, with no position: a binding without a line never hides another
                # (``flow_base.reaching_defs``), so it is one more value the name may have
                out[n0:n0] = [Assign(targets=[Name(id=n)], value=v, pos=None) for n, v in self.walrus]
                self.walrus = []
            if self.comp_stores:
                # ``[... for self.window in ws]``, ``any(... for kw["window_size"] in ws)``: a
                # comprehension's target that is an attribute or an item stores there on every
                # round; read as a store of a value nothing knows, with no line (it hides no
                # other binding)
                out[n0:n0] = [Assign(targets=[tg], value=UNKNOWN, pos=None)
                              for tg in self.comp_stores]
                self.comp_stores = []
        return out

    def block(self, node, scope):
        # IndentedBlock or SimpleStatementSuite
        out = self.body(node.body, scope)
        if type(node) is cst.SimpleStatementSuite:
            _unlined(out)       # ``for w in ws: w = f(w); return g(w)``: one line, many
        return out

    def stmt(self, s, out, scope):
        t = type(s)
        if t is cst.SimpleStatementLine:
            n0 = len(out)
            for small in s.body:
                self.small(small, out, scope)
            if len(s.body) > 1:
                # ``w = (-1, 0); return fa4(..., window_size=w)``: the statements of one line
                # cannot be told apart by line, so their bindings carry none (a binding
                # without a line never hides another, and is never taken for one made after
                # a read on its line: ``flow_base.reaching_defs``)
                out[n0:] = _unlined(out[n0:])
        elif t is cst.If:
            self.if_(s, out, scope)
        elif t is cst.FunctionDef:
            out.append(FuncDef(func=self.funcdef(s, scope)))
        elif t is cst.ClassDef:
            out.append(ClassDef(cls=self.classdef(s, scope)))
        elif t in (cst.Try, cst.TryStar):
            body = self.block(s.body, scope)
            handlers = []
            for h in s.handlers:
                names = _exc_names(h.type) if h.type is not None else ("*",)
                if h.type is not None:
                    self.expr(h.type)
                hb = []
                if h.name is not None and isinstance(h.name.name, cst.Name):
                    hb.append(Assign(targets=[Name(id=h.name.name.value)], value=UNKNOWN, pos=None))
                hb.extend(self.block(h.body, scope))
                handlers.append(Handler(names, hb))
            orelse = self.block(s.orelse.body, scope) if s.orelse else []
            final = self.block(s.finalbody.body, scope) if s.finalbody else []
            out.append(Try(body=body, handlers=handlers, orelse=orelse, final=final))
        elif t is cst.For:
            tgt = self.target(s.target)
            it = self.expr(s.iter)
            body = self.block(s.body, scope)
            orelse = self.block(s.orelse.body, scope) if s.orelse else []
            out.append(Loop(target=tgt, iter=it, body=body, orelse=orelse))
        elif t is cst.While:
            test = self.expr(s.test)
            body = self.block(s.body, scope)
            orelse = self.block(s.orelse.body, scope) if s.orelse else []
            out.append(Loop(target=None, iter=test, body=body, orelse=orelse))
        elif t is cst.With:
            items = []
            for it in s.items:
                e = self.expr(it.item)
                tg = self.target(it.asname.name) if it.asname is not None else None
                items.append(WithItem(e, tg))
            out.append(With(items=items, body=self.block(s.body, scope)))
        elif t is cst.Match:
            subj = self.expr(s.subject)
            out.append(ExprStmt(value=subj))
            bodies = []
            for c in s.cases:
                self.generic(c.pattern)
                if c.guard is not None:
                    out.append(ExprStmt(value=self.expr(c.guard)))
                # the names the pattern captures are bound (to parts of the subject the
                # flow does not follow) before the case body runs
                caught = [Assign(targets=[Name(id=n)], value=UNKNOWN, pos=None)
                          for n in _captures(c.pattern)]
                bodies.append(caught + self.block(c.body, scope))
            out.append(Block(bodies=bodies))
        elif isinstance(s, cst.BaseSmallStatement):
            # a statement on its header's line (``if x: kw["w"] = v``, a one-line suite)
            self.small(s, out, scope)
        else:  # unknown compound statement: keep ordinals exact, treat as opaque block
            self.generic(s)

    def if_(self, s, out, scope):
        test = self.expr(s.test)
        out.append(ExprStmt(value=test))
        tf, ff = _facts(s.test)
        body = self.block(s.body, scope)
        orelse = []
        if s.orelse is not None:
            if isinstance(s.orelse, cst.If):
                self.if_(s.orelse, orelse, scope)
            else:
                orelse = self.block(s.orelse.body, scope)
        out.append(If(true_facts=tf, false_facts=ff, body=body, orelse=orelse))

    def small(self, s, out, scope):
        t = type(s)
        if t is cst.Assign:
            p = self.pos(s, "asg")
            targets = [self.target(a.target) for a in s.targets]
            out.append(Assign(targets=targets, value=self.expr(s.value), pos=p))
        elif t is cst.AnnAssign:
            p = self.pos(s, "asg")
            tg = self.target(s.target)
            self.generic(s.annotation)
            if s.value is not None:
                out.append(Assign(targets=[tg], value=self.expr(s.value), pos=p))
        elif t is cst.AugAssign:
            p = self.pos(s, "asg")
            tg = self.target(s.target)
            out.append(AugAssign(target=tg, value=self.expr(s.value), pos=p))
        elif t is cst.Expr:
            out.append(ExprStmt(value=self.expr(s.value)))
        elif t is cst.Return:
            out.append(Return(value=self.expr(s.value) if s.value is not None else Lit(value=None)))
        elif t is cst.Import:
            items = []
            for a in s.names:
                p = self.pos(a, "alias", _dotted(a.name))
                mod = _dotted(a.name)
                if a.asname is not None:
                    items.append(ImportItem(a.asname.name.value, mod, None, 0, p))
                else:
                    items.append(ImportItem(mod.split(".")[0], mod.split(".")[0], None, 0, p))
            out.append(Import(items=items))
        elif t is cst.ImportFrom:
            mod = _dotted(s.module) if s.module is not None else ""
            level = len(s.relative)
            items = []
            if isinstance(s.names, cst.ImportStar):
                items.append(ImportItem("*", mod, "*", level, None))
            else:
                for a in s.names:
                    p = self.pos(a, "alias", _dotted(a.name))
                    name = _dotted(a.name)
                    local = a.asname.name.value if a.asname is not None else name
                    items.append(ImportItem(local, mod, name, level, p))
            out.append(Import(items=items))
        elif t is cst.Global:
            out.append(Global(names=[n.name.value for n in s.names]))
        elif t is cst.Nonlocal:
            out.append(Nonlocal(names=[n.name.value for n in s.names]))
        elif t is cst.Del:
            out.append(ExprStmt(value=self.expr(s.target)))
        elif t is cst.Raise:
            if s.exc is not None:
                out.append(ExprStmt(value=self.expr(s.exc)))
            if s.cause is not None:
                out.append(ExprStmt(value=self.expr(s.cause)))
        elif t is cst.Assert:
            out.append(ExprStmt(value=self.expr(s.test)))
            if s.msg is not None:
                out.append(ExprStmt(value=self.expr(s.msg)))
        else:  # pass, break, continue, type alias...
            self.generic(s)

    def funcdef(self, s, scope):
        decos = [self.expr(d.decorator) for d in s.decorators]
        p = self.pos(s, "def")
        params = self.params(s.params)
        if s.returns is not None:
            self.generic(s.returns.annotation)
        qual = f"{scope}.{s.name.value}" if scope else s.name.value
        body = self.block(s.body, qual + ".<locals>")
        return FuncIR(s.name.value, qual, params, decos, body, p)

    def params(self, ps):
        out = []
        for prm in list(ps.posonly_params) + list(ps.params):
            out.append(Param(prm.name.value, "pos", self.param_default(prm)))
        if isinstance(ps.star_arg, cst.Param):
            out.append(Param(ps.star_arg.name.value, "var", self.param_default(ps.star_arg)))
        for prm in ps.kwonly_params:
            out.append(Param(prm.name.value, "kwonly", self.param_default(prm)))
        if ps.star_kwarg is not None:
            out.append(Param(ps.star_kwarg.name.value, "kw", self.param_default(ps.star_kwarg)))
        return out

    def param_default(self, prm):
        if prm.annotation is not None:
            self.generic(prm.annotation.annotation)
        return self.expr(prm.default) if prm.default is not None else None

    def classdef(self, s, scope):
        decos = [self.expr(d.decorator) for d in s.decorators]
        p = self.pos(s, "def")
        bases = [self.expr(a.value) for a in s.bases]
        for a in s.keywords:
            self.expr(a.value)
        qual = f"{scope}.{s.name.value}" if scope else s.name.value
        body = self.block(s.body, qual)
        return ClassIR(s.name.value, qual, bases, decos, body, p)

    # -- targets ---------------------------------------------------------------------
    def target(self, e):
        t = type(e)
        if t is cst.Name:
            return Name(id=e.value)
        if t is cst.Attribute:
            return Attr(base=self.expr(e.value), attr=e.attr.value)
        if t is cst.Subscript:
            p = self.pos(e, "sub")
            base = self.expr(e.value)
            return Subscript(base=base, index=self.slice(e), pos=p)
        if t in (cst.Tuple, cst.List):
            return TupleExpr(elts=[self.target(el.value) if not isinstance(el, cst.StarredElement)
                                   else Starred(value=self.target(el.value))
                                   for el in e.elements])
        if t is cst.StarredElement:
            return Starred(value=self.target(e.value))
        self.generic(e)
        return UNKNOWN

    def slice(self, e):
        if len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index):
            return self.expr(e.slice[0].slice.value)
        for s in e.slice:
            self.generic(s)
        return UNKNOWN

    # -- expressions -----------------------------------------------------------------
    def expr(self, e):
        t = type(e)
        if t is cst.Name:
            return Name(id=e.value)
        if t is cst.Attribute:
            return Attr(base=self.expr(e.value), attr=e.attr.value)
        if t is cst.Call:
            p = self.pos(e, "call", _cdotted(e.func))
            func = self.expr(e.func)
            args = []
            for a in e.args:
                ap = self.pos(a, "arg", a.keyword.value if a.keyword is not None else None)
                v = self.expr(a.value)
                if a.keyword is not None:
                    args.append(Arg("k", a.keyword.value, v, ap))
                elif a.star == "*":
                    args.append(Arg("*", None, v, ap))
                elif a.star == "**":
                    args.append(Arg("**", None, v, ap))
                else:
                    args.append(Arg("p", None, v, ap))
            return Call(func=func, args=args, pos=p)
        if t is cst.Integer:
            return Lit(value=_int_of(e))
        if t is cst.Float:
            try:
                return Lit(value=float(e.value.replace("_", "")))
            except ValueError:
                return UNKNOWN
        if t is cst.SimpleString:
            try:
                return Lit(value=e.evaluated_value if isinstance(e.evaluated_value, str) else None)
            except Exception:
                return UNKNOWN
        if t is cst.UnaryOperation:
            v = self.expr(e.expression)
            if isinstance(e.operator, cst.Minus) and type(v) is Lit and \
                    isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
                return Lit(value=-v.value)
            if isinstance(e.operator, cst.Plus) and type(v) is Lit:
                return v
            return UNKNOWN
        if t is cst.Tuple:
            return TupleExpr(elts=[self.elem(x) for x in e.elements])
        if t is cst.List:
            p = self.pos_list(e)
            return ListExpr(elts=[self.elem(x) for x in e.elements], pos=p)
        if t is cst.Dict:
            p = self.pos_list(e)
            items = []
            for el in e.elements:
                ep = self.pos(el, "delem")
                if isinstance(el, cst.DictElement):
                    k = self.expr(el.key)
                    items.append(DictItem(k, self.expr(el.value), ep))
                else:
                    items.append(DictItem(None, self.expr(el.value), ep))
            return DictExpr(items=items, pos=p)
        if t is cst.IfExp:  # source order: body, test, orelse
            body = self.expr(e.body)
            test = _truth(self.expr(e.test))
            orelse = self.expr(e.orelse)
            if test is not None:        # ``x if True else y``: one branch only
                return body if test else orelse
            return Either(a=body, b=orelse, test=_name_test(e.test))
        if t is cst.BooleanOperation:
            # ``-1 and None`` is None, ``0 or w`` is w: a constant left operand decides
            left, right = self.expr(e.left), self.expr(e.right)
            truth = _truth(left)
            if truth is not None:
                return right if truth == isinstance(e.operator, cst.And) else left
            return Either(a=left, b=right)
        if t is cst.Subscript:
            p = self.pos(e, "sub")
            base = self.expr(e.value)
            return Subscript(base=base, index=self.slice(e), pos=p)
        if t is cst.Name and e.value in ("None", "True", "False"):
            pass
        if t is cst.StarredElement:
            return Starred(value=self.expr(e.value))
        if t is cst.NamedExpr:
            v = self.expr(e.value)
            if isinstance(e.target, cst.Name):
                self.walrus.append((e.target.value, v))
            return v
        if t is cst.Await:
            return self.expr(e.expression)
        if t is cst.Lambda:
            self.generic(e)
            return UNKNOWN
        if t is cst.ConcatenatedString:
            self.generic(e)
            return UNKNOWN
        self.generic(e)
        return UNKNOWN

    def elem(self, x):
        if isinstance(x, cst.StarredElement):
            return Starred(value=self.expr(x.value))
        return self.expr(x.value)

    def pos_list(self, e):
        # lists/dicts are allocation sites; they need an identity, not a reported position:
        # use the ordinal machinery of nothing -> a unique token
        self._alloc = getattr(self, "_alloc", 0) + 1
        # unique in the module when a big file is extracted in chunks (each chunk counts from
        # 1): the chunk's first line goes with the count
        return ("alloc", self.alloc_base, self._alloc)

    def generic(self, node):
        """Walk a subtree we do not model, still counting positioned kinds (exact ordinals),
        and still recording calls (calls inside lambdas / comprehensions / f-strings)."""
        t = type(node)
        if t is cst.Call or t is cst.Subscript or t is cst.Dict or t is cst.List \
                or t is cst.NamedExpr:
            self.calls_in_generic.append(self.expr(node))
            return
        if t in (cst.Assign, cst.AnnAssign, cst.AugAssign):
            self.pos(node, "asg")
        elif t in (cst.FunctionDef, cst.ClassDef):
            self.pos(node, "def")
        elif t is cst.ImportAlias:
            self.pos(node, "alias")
        if t is cst.CompFor:
            tgt = self.target(node.target)
            if not _names_only(tgt):
                self.comp_stores.append(tgt)
            self.generic(node.iter)
            for c in node.ifs:
                self.generic(c)
            if node.inner_for_in is not None:
                self.generic(node.inner_for_in)
            return
        if t is cst.IfExp:  # fields are test, body, orelse; the source says body, test, orelse
            self.generic(node.body)
            self.generic(node.test)
            self.generic(node.orelse)
            return
        fields = _fields(t)
        if "decorators" in fields:  # decorators come first in the source
            for d in node.decorators:
                self.generic(d)
            fields = tuple(f for f in fields if f != "decorators")
        for f in fields:
            v = getattr(node, f)
            if isinstance(v, cst.CSTNode):
                self.generic(v)
            elif type(v) in (list, tuple):
                for c in v:
                    if isinstance(c, cst.CSTNode):
                        self.generic(c)

    calls_in_generic: list
    walrus: list            # (name, value) of ``:=`` in the statement being read
    comp_stores: list       # attribute / item targets of comprehensions in that statement


def _names_only(target) -> bool:
    """A comprehension target that binds names only (``x``, ``(a, *b)``)."""
    if isinstance(target, Name):
        return True
    if isinstance(target, TupleExpr):
        return all(_names_only(e) for e in target.elts)
    if isinstance(target, Starred):
        return _names_only(target.value)
    return False


def _unlined(stmts: list) -> list:
    """``stmts`` with the line of each binding statement dropped, in place (they share a
    line with another statement: ``Assign``/``AugAssign`` keep ``pos=None``)."""
    for i, st in enumerate(stmts):
        if isinstance(st, (Assign, AugAssign)) and st.pos is not None:
            stmts[i] = st._replace(pos=None)
    return stmts


def _dotted(e) -> str:
    if isinstance(e, cst.Name):
        return e.value
    if isinstance(e, cst.Attribute):
        return f"{_dotted(e.value)}.{e.attr.value}"
    return "?"


def _cdotted(e):
    if isinstance(e, cst.Name):
        return e.value
    if isinstance(e, cst.Attribute):
        b = _cdotted(e.value)
        return f"{b}.{e.attr.value}" if b else None
    return None


def _adotted(e):
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        b = _adotted(e.value)
        return f"{b}.{e.attr}" if b else None
    return None


# A fact key: a Name or a dotted chain of names (``ctx.use_flash_attn_4``), else None.
_key = _cdotted


def _facts(test):
    """(facts when true, facts when false) of an if-test, each a tuple of (key, bool)."""
    k = _key(test)
    if k is not None and k not in ("True", "False", "None"):
        return ((k, True),), ((k, False),)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        t, f = _facts(test.expression)
        return f, t
    if isinstance(test, cst.BooleanOperation):
        lt, lf = _facts(test.left)
        rt, rf = _facts(test.right)
        if isinstance(test.operator, cst.And):
            return lt + rt, ()
        return (), lf + rf
    return (), ()


def _captures(pattern) -> list:
    """The names a ``match`` pattern binds (``case w``, ``case (*w,)``, ``case {"a": w}``,
    ``case ... as w``, ``**rest``), in order."""
    out = []
    for n in _walk_cst(pattern):
        if isinstance(n, cst.MatchAs) and n.name is not None:
            out.append(n.name.value)
        elif isinstance(n, cst.MatchStar) and n.name is not None:
            out.append(n.name.value)
        elif isinstance(n, cst.MatchMapping) and n.rest is not None:
            out.append(n.rest.value)
    return out


def _walk_cst(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(n.children)))


def _exc_names(e) -> tuple:
    if isinstance(e, cst.Tuple):
        return tuple(_dotted(x.value).split(".")[-1] for x in e.elements)
    return (_dotted(e).split(".")[-1],)


# ----------------------------------------------------------------------------- ast side

def _ast_spans(tree: ast.AST) -> dict[str, list]:
    out = {k: [] for k in KINDS}
    for n in ast.walk(tree):
        t = type(n)
        if t is ast.Call:
            out["call"].append(n)
            out["arg"].extend(n.args)
            out["arg"].extend(n.keywords)
        elif t is ast.Dict:
            for k, v in zip(n.keys, n.values):
                out["delem"].append((k if k is not None else v, v))
        elif t is ast.Subscript:
            out["sub"].append(n)
        elif t is ast.alias:
            if n.name != "*":
                out["alias"].append(n)
        elif t in (ast.Assign, ast.AnnAssign, ast.AugAssign):
            out["asg"].append(n)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out["def"].append(n)
    res = {}
    for k, nodes in out.items():
        spans = []
        for n in nodes:
            if k == "delem":  # span from the key's start to the value's end
                kn, vn = n
                spans.append((kn.lineno, kn.col_offset, vn.end_lineno or vn.lineno,
                              vn.end_col_offset or 0, None))
                continue
            if k == "call":
                chk = _adotted(n.func)
            elif k == "arg":
                chk = n.arg if type(n) is ast.keyword else None
            elif k == "alias":
                chk = n.name
            else:
                chk = None
            spans.append((n.lineno, n.col_offset, n.end_lineno or n.lineno,
                          n.end_col_offset or 0, chk))
        # pre-order == start position order, the enclosing (longer) node first on ties
        spans.sort(key=lambda s: (s[0], s[1], -s[2], -s[3]))
        res[k] = spans
    return res


def _no_validation(self) -> None:
    return None


def parse_unvalidated(source: bytes) -> cst.Module:
    """``cst.parse_module`` without libcst's per-node ``_validate`` (27% of the parse on TE's
    context_parallel.py). Every libcst node validates its fields in ``__post_init__``, which
    guards nodes built by hand; a tree the parser built from source is valid by construction
    (libcst's own comment on ``CSTNode.__post_init__`` says as much). The validators only
    raise, they never change a node (checked in ``tests/test_speed_parts.py``: the same tree
    either way), so the parse is the same with the hook off; it is put back afterwards."""
    from libcst._nodes.base import CSTNode
    saved = CSTNode.__dict__["__post_init__"]
    CSTNode.__post_init__ = _no_validation
    try:
        return cst.parse_module(source)
    finally:
        CSTNode.__post_init__ = saved


def extract(path: str, source: bytes, line_offset: int = 0) -> ModuleIR:
    """Parse ``source`` (bytes) and build its IR. A syntax error gives ``ModuleIR.error``."""
    try:
        module = parse_unvalidated(source)
    except Exception as exc:  # libcst.ParserSyntaxError and friends
        msg = str(exc).strip().splitlines()
        return ModuleIR(path, error=f"libcst cannot parse: {msg[0] if msg else type(exc).__name__}")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        tree = None
        ast_err = f"{type(exc).__name__}: {exc}"
    ex = _Extractor()
    ex.alloc_base = line_offset
    ex.calls_in_generic = []
    ex.walrus = []
    ex.comp_stores = []
    ast_err = None
    body = ex.body(module.body, "")
    spans = _ast_spans(tree) if tree is not None else None
    ok = spans is not None and all(len(spans[k]) == ex.counters[k] for k in KINDS)
    if ok:
        # the check tokens (callee spelling, keyword name, import name) must agree too
        ok = all(chk is None or spans[k][p[1]][4] == chk
                 for k in KINDS for p, chk in ex.pending[k])
    if ok:
        for k in KINDS:
            sp = spans[k]
            for p, _ in ex.pending[k]:
                s = sp[p[1]]
                p[:] = [s[0] + line_offset, s[1], s[2] + line_offset, s[3]]
        mir = ModuleIR(path, body=body)
    else:
        # fall back: PositionProvider (slow, exact)
        from libcst.metadata import MetadataWrapper, PositionProvider
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        positions = wrapper.resolve(PositionProvider)
        ex2 = _Extractor(provider_positions=positions)
        ex2.alloc_base = line_offset
        ex2.calls_in_generic = []
        ex2.walrus = []
        ex2.comp_stores = []
        body = ex2.body(module.body, "")
        mir = ModuleIR(path, body=body, positions="provider")
        ex = ex2
    return mir


def _truth(v) -> bool | None:
    """The truth of a constant expression of the IR (a literal, None, True, False), None when
    it is not one."""
    if type(v) is Lit and (v.value is None or type(v.value) in (int, float, str)):
        return bool(v.value)
    if type(v) is Name and v.id in ("None", "True", "False"):
        return v.id == "True"
    return None


_CMP_OPS = {cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=",
            cst.GreaterThan: ">", cst.GreaterThanEqual: ">=", cst.Is: "is", cst.IsNot: "is not"}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _int_of(node: cst.Integer) -> int:
    """An int literal's value (``0x10``, ``1_000``, and ``010``-style decimals ``int(x, 0)``
    refuses)."""
    try:
        return int(node.value.replace("_", ""), 0)
    except ValueError:
        return int(node.value.replace("_", ""))


def _constant(node):
    """(True, value) for an int literal (signed), None, True or False; (False, None) else."""
    if isinstance(node, cst.Integer):
        return True, _int_of(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        ok, v = _constant(node.expression)
        return (True, -v) if ok and type(v) is int else (False, None)
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return True, {"None": None, "True": True, "False": False}[node.value]
    return False, None


def _name_test(node):
    """A conditional's test over one name and constants (``l < 0``, ``l is not None and l
    < 0``, ``not l == -1``) as ``ir.Either.test``, or None for any other test."""
    node = node.with_changes(lpar=(), rpar=()) if hasattr(node, "lpar") else node
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        target = node.comparisons[0]
        op = _CMP_OPS.get(type(target.operator))
        if op is None:
            return None
        left, right = node.left, target.comparator
        ok, v = _constant(right)
        if isinstance(left, cst.Name) and ok and left.value not in ("None", "True", "False"):
            return ("cmp", left.value, op, v)
        ok, v = _constant(left)
        if isinstance(right, cst.Name) and ok and (op in _FLIPPED or op in ("==", "!=")):
            return ("cmp", right.value, _FLIPPED.get(op, op), v)
        return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = _name_test(node.expression)
        return ("not", inner) if inner is not None else None
    if isinstance(node, cst.BooleanOperation):
        a, b = _name_test(node.left), _name_test(node.right)
        if a is None or b is None:
            return None
        return ("and" if isinstance(node.operator, cst.And) else "or", a, b)
    return None
