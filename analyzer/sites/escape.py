"""Where FA4 entry points go that the flow analysis does not follow (FA4S006).

The flow layer (``flow.Solver``) follows an FA4 function through aliases, wrapping calls, calls,
in-tree helpers that take it as a parameter, lists splatted into them and returns. Anything
else it would drop silently -- a dict of functions, an attribute store, ``functools.partial``
with arguments, an external callee, ``getattr`` by a computed name, ``__wrapped__`` -- and a
call made later through such a value would never be judged. This pass walks every parsed
module's ``ast``, asks the solver which names hold an FA4 entry point (or an FA4 module) that
is not behaviour-checked, and reports every use of one outside the followed positions. Each
report makes the verdict *unknown*: a Pysa-style conservative default for what cannot be seen.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import fa4_patch.names as N
from analyzer.sites import behaviour as BH, bindings as B
from analyzer.sites.astutil import (enclosing_function, flat_statements, index as index_tree,
                                    indexed, parent as _parent_of, sub_bodies, walk)
from analyzer.sites.flow import ExtRef, FAFunc, FuncRef, ListVal, ModRef, Opaque
from analyzer.sites.flow_base import Const
from analyzer.sites.ir import Attr, Call, Name, walk as walk_ir
from analyzer.sites.reach import _resolve


@dataclass(frozen=True)
class Escape:
    path: str
    line: int
    col: int
    what: str


def _is_fa4_module(v) -> bool:
    return isinstance(v, ModRef) and B.fa_version_of_module(v.name) == "fa4"


def _candidates(solver, mod, info, may_hold=None) -> set[str]:
    """Identifiers that may hold an FA4 value in this module (an over-approximation): module
    names whose final value holds one, names any import here binds, parameters the flow layer
    gives one, and -- to a fixpoint -- names assigned from an expression that mentions one."""
    out: set[str] = set()
    env = solver.env(mod)
    for name, vals in env.items():
        try:
            vs = solver.force(vals) | solver.replaced_values(mod, name)
        except RecursionError:
            vs = frozenset()
        if any((isinstance(v, FAFunc) and v.entry.version == "fa4") or _is_fa4_module(v)
               for v, _ in vs) or _list_holds_fa4(solver, None, (v for v, _ in vs)):
            out.add(name)       # (a list of entry points too: ``from a import *`` binds one)
    tree = info.tree
    assigns = []
    by_name = {m.name: m for m in solver.mods.values()}

    def binds_fa4(module: str, name: str) -> bool:
        """What a parsed module binds ``name`` to, as the solver sees it."""
        src_mod = by_name.get(module)
        if src_mod is None or src_mod is mod:
            return False
        vals = solver.env(src_mod).get(name)
        if vals is None:
            return False
        try:
            vs = solver.force(vals)
        except RecursionError:
            return True
        return any(isinstance(v, (FAFunc, ModRef)) for v, _ in vs)

    for n in walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                # ``import a.b.c`` binds ``a``: every chain under ``a`` can be read off it
                bound = a.name if a.asname else a.name.split(".")[0]
                if may_hold is None or may_hold(bound):
                    out.add((a.asname or a.name).split(".")[0])
        elif isinstance(n, ast.ImportFrom):
            src = _resolve(mod.name, mod.is_pkg, n.module, n.level) if n.level else \
                (n.module or "")
            for a in n.names:
                full = f"{src}.{a.name}" if src else a.name
                if may_hold is None or may_hold(full) or may_hold(src) \
                        or binds_fa4(src, a.name):
                    out.add(a.asname or a.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) \
                and getattr(n, "value", None) is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            tnames = {x.id for t in targets for x in walk(t) if isinstance(x, ast.Name)}
            vnames = {x.id if isinstance(x, ast.Name) else x.attr for x in walk(n.value)
                      if isinstance(x, (ast.Name, ast.Attribute))}
            assigns.append((tnames, vnames))
        elif isinstance(n, (ast.For, ast.comprehension)):
            tnames = {x.id for x in walk(n.target) if isinstance(x, ast.Name)}
            vnames = {x.id for x in walk(n.iter) if isinstance(x, ast.Name)}
            assigns.append((tnames, vnames))
        elif isinstance(n, ast.Return) and n.value is not None:
            # a function that returns what holds FA4 (a list of entry points): the names
            # bound from its calls (``fns = get()``, ``fns = self.get()``) are read too
            f = _parent_of(n)
            while f is not None and not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                f = _parent_of(f)
            if f is not None:
                assigns.append(({f.name}, {x.id for x in walk(n.value)
                                           if isinstance(x, ast.Name)}))
    for fn in mod.all_fns:
        if fn.ir is None:
            continue
        for pname, _, _ in fn.params:
            try:
                vals = solver.lookup(fn, pname, False)
            except RecursionError:
                continue
            if any(isinstance(v, (FAFunc, ModRef)) for v, _ in vals) \
                    or _list_holds_fa4(solver, None, (v for v, _ in vals)):
                out.add(pname)
    changed = True
    while changed:
        changed = False
        for tnames, vnames in assigns:
            if vnames & out and not tnames <= out:
                out |= tnames
                changed = True
    return out


def _statements_with(info, names: set[str]):
    """(statement, scope qualname, class) for every statement -- nested bodies included --
    whose own text mentions one of ``names``; ``class`` names the class whose body holds the
    statement directly (its names are class attributes), else None. Walks statements only."""
    import re

    if not names:
        return
    pat = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    stack = [(info.tree.body, "<module>", "", None)]
    while stack:
        body, scope, prefix, cls = stack.pop()
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{st.name}"
                stack.append((st.body, qual, qual + ".<locals>.", None))
                a = st.args
                heads = list(st.decorator_list) + [d for d in a.defaults
                                                   + a.kw_defaults if d is not None]
                # annotations are evaluated with the def and kept (``__annotations__``,
                # ``typing.get_type_hints``)
                heads += [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs
                          + [a.vararg, a.kwarg] if x is not None and x.annotation is not None]
                if st.returns is not None:
                    heads.append(st.returns)
                for h in heads:
                    if pat.search(ast.unparse(h)):
                        yield h, scope, cls
                continue
            if isinstance(st, ast.ClassDef):
                stack.append((st.body, scope, f"{prefix}{st.name}.", f"{prefix}{st.name}"))
                for h in list(st.decorator_list) + list(st.bases) + \
                        [k.value for k in st.keywords]:
                    if pat.search(ast.unparse(h)):
                        yield h, scope, cls
                continue
            subs = sub_bodies(st)
            if subs:
                for b in subs:
                    stack.append((b, scope, prefix, cls))
                heads = [getattr(st, a) for a in ("test", "iter", "target", "subject")
                         if getattr(st, a, None) is not None]
                heads += [i.context_expr for i in getattr(st, "items", ()) or ()]
                for h in heads:
                    if pat.search(info.segment(h)):
                        yield h, scope, cls
                continue
            if pat.search(info.segment(st)):
                yield st, scope, cls


class _Local:
    """The parent of each node of one statement (what ``_use`` reads); the statement itself
    has none here. Read off the tree's index."""

    def __init__(self, root, cls=None, judge=None):
        self.root = root
        self.cls = cls              # the class whose body holds the statement, if any
        self.judge = judge
        # a tree whose index was dropped gets one for this statement, kept while it is read
        self._index = None if indexed(root) else index_tree(root)

    def parent(self, node):
        if node is self.root:
            return None
        return _parent_of(node)


def find(solver, index, judge, calls, may_hold=None) -> list[Escape]:
    """``may_hold(module_or_name)``: False when the import graph proves that what an import
    binds cannot hold FA4 (the names it binds are then not followed here)."""
    call_at = set()
    for c in calls:
        pos = c["call"].pos
        call_at.add((c["fn"].mod.path, pos[0], pos[1]))
    out: list[Escape] = []
    cands = {p: _candidates(solver, solver.mods[p], index.by_path[p], may_hold)
             for p in sorted(solver.mods)
             if index.by_path.get(p) is not None and index.by_path[p].tree is not None}
    holds_fa4 = bool(call_at) or any(cands.values())
    solver.unwrap_at = None
    if holds_fa4:
        found = _reflection_reads(index)
        solver.unwrap_at = found.get("unwrap")
        out.extend(Escape(path, line, col, why) for path, line, col, why in found["gc"])
        out.extend(Escape(path, line, col, why) for path, line, col, why in _frame_reads(index))
    for path in sorted(solver.mods):
        info = index.by_path.get(path)
        if info is None or info.tree is None:
            continue
        mod = solver.mods[path]
        cache: dict = {}

        def values(qual, name, line=None):
            key = (qual, name, line if qual == "<module>" else None)
            if key not in cache:
                fn = mod.top if qual == "<module>" else solver.fns.get((path, qual))
                if fn is None:
                    cache[key] = frozenset()
                else:
                    try:
                        vals = solver.lookup(fn, name, False)
                        if fn.ir is None:
                            # module level: what the name held before a later binding too
                            vals = vals | solver.replaced_values(mod, name, line)
                        cache[key] = frozenset(v for v, _ in vals)
                    except RecursionError:
                        cache[key] = frozenset()
            return cache[key]

        def fn_of(qual):
            return mod.top if qual == "<module>" else solver.fns.get((path, qual))

        names = cands[path]
        out.extend(_getters_used_as_values(solver, mod, info, judge, values, names, call_at,
                                           fn_of))
        out.extend(_namespace_reads(solver, mod, info, judge))
        out.extend(_class_body_imports(solver, mod, info))
        for stmt, qual, cls in _statements_with(info, names):
            owner = fn_of(qual)
            # the wrapper's own code was run in the sandbox as a whole: the FA4 function it
            # keeps on itself (self.fn = fn) is what the checked chain calls
            in_wrapper = owner is not None and owner.ir is not None and \
                judge.inside_proved_wrapper(owner) is not None
            sc = _Local(stmt, cls, judge)
            for node in walk(stmt):
                if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                        and node.id in names):
                    continue
                vals = values(qual, node.id, node.lineno)
                raw = [v for v in vals if isinstance(v, FAFunc) and v.entry.version == "fa4"
                       and not judge.normalised(v)]
                mods = [v for v in vals if _is_fa4_module(v)]
                if _holds_wrapped(vals, judge):
                    # what a wrapper keeps of FA4 (``functools.wraps``/``update_wrapper``: its
                    # ``__wrapped__``) read back bypasses it
                    p = sc.parent(node)
                    if isinstance(p, ast.Attribute) and p.value is node and _special(p.attr):
                        # its __wrapped__, its __closure__ cells, its __dict__...
                        out.append(Escape(path, p.lineno, p.col_offset + 1,
                                          f"{node.id}.{p.attr} may give back the FA4 function "
                                          "the checked wrapper keeps"))
                    unwrap = _unwraps(p, node)
                    if unwrap:
                        out.append(Escape(path, p.lineno, p.col_offset + 1,
                                          f"{unwrap} may give back the FA4 function the checked "
                                          f"wrapper {node.id} keeps (its __wrapped__)"))
                if not raw and not mods and any(
                        isinstance(v, ModRef) and (may_hold is None or may_hold(v.name))
                        for v in vals):
                    # a module of the tree that holds FA4 somewhere under it: what is read off
                    # it (``pkg.fa.flash_attn_func``, ``getattr(pkg.fa, name)``) or where the
                    # module itself goes decides
                    why, what = _tree_module_use(sc, node, fn_of(qual), solver, call_at, path,
                                                 judge, may_hold)
                    if why and in_wrapper and why.startswith("is stored in self."):
                        why = ""
                    if why:
                        out.append(Escape(path, node.lineno, node.col_offset + 1,
                                          f"{what} {why}"))
                    continue
                others = [v for v in vals if isinstance(v, Opaque) and v.fa4_name
                          and not N.window_free(*v.fa4_name.rsplit(".", 1))]
                if not raw and not mods and others:
                    why = _fa4_other_use(sc, node)
                    if why:
                        out.append(Escape(path, node.lineno, node.col_offset + 1,
                                          f"{node.id} ({others[0].fa4_name}) {why}"))
                    continue
                if not raw and not mods and _list_holds_fa4(solver, judge, vals):
                    # a list or tuple that holds FA4: the flow reads it only by a constant
                    # index and splatted into a call; any other use hands FA4 out unseen
                    why = _list_use(sc, node, fn_of(qual), solver, call_at, path)
                    if why:
                        out.append(Escape(path, node.lineno, node.col_offset + 1,
                                          f"{node.id} (a list or tuple holding FA4) {why}"))
                    continue
                chained = [v for v in vals if isinstance(v, FAFunc) and v.entry.version == "fa4"
                           and v.chain]
                if chained:
                    p = sc.parent(node)
                    if isinstance(p, ast.Attribute) and p.value is node \
                            and p.attr != "__wrapped__" and (
                            isinstance(p.ctx, (ast.Store, ast.Del))
                            or (isinstance(sc.parent(p), ast.Call)
                                and sc.parent(p).func is p)):
                        # the wrapper was checked as built; code that sets its attributes or
                        # calls its methods may change what it does
                        what = "sets" if isinstance(p.ctx, ast.Store) else (
                            "deletes" if isinstance(p.ctx, ast.Del) else "calls")
                        out.append(Escape(path, p.lineno, p.col_offset + 1,
                                          f"{node.id}.{p.attr}: the code {what} an attribute of "
                                          "the checked wrapper, which may change what it does"))
                    elif isinstance(p, ast.Attribute) and p.value is node \
                            and isinstance(p.ctx, ast.Load) and p.attr not in _INERT_ATTRS \
                            and not (_holds_wrapped(vals, judge) and _special(p.attr)) \
                            and p.attr not in _chain_sets(judge, chained):
                        # an attribute read off the checked wrapper may be what it wraps:
                        # torch's compile/disable keep the function they wrap as
                        # ``_torchdynamo_orig_callable``, and ``functools.wraps`` copies the
                        # wrapped function's attributes onto the wrapper
                        out.append(Escape(path, p.lineno, p.col_offset + 1,
                                          f"{node.id}.{p.attr}: an attribute read off the "
                                          "checked wrapper may give back the FA4 function it "
                                          "wraps"))
                if not raw and not mods:
                    continue
                if mods and not raw:
                    why = _module_use(sc, node, fn_of(qual), solver, call_at, path,
                                      tuple(v.name for v in mods))
                else:
                    why = _use(sc, node, fn_of(qual), solver, call_at, path)
                if why and in_wrapper and why.startswith("is stored in self."):
                    why = ""
                if why:
                    shown = ", ".join(sorted({v.entry.name for v in raw})) or "an FA4 module"
                    out.append(Escape(path, node.lineno, node.col_offset + 1,
                                      f"{node.id} ({shown}) {why}"))
    uniq = {}
    for e in out:
        uniq.setdefault((e.path, e.line, e.col), e)
    return [uniq[k] for k in sorted(uniq)]


def _chain_sets(judge, chained) -> set:
    """The attributes the code of the chains of ``chained`` stores (``inner.enabled = True``):
    read off the wrapper they give what that code put there, not what it wraps. Every
    attribute of a layer whose code does not parse is left out (none is its own)."""
    memo = judge.__dict__.setdefault("_chain_sets_memo", {})
    out: set = set()
    for v in chained:
        for w in v.chain:
            lay = judge.layer(w)
            if lay.opaque or not lay.module:
                continue
            if lay.module not in memo:
                stores: set = set()
                for src in judge.runner.modules[lay.module].sources:
                    try:
                        tree = BH._syntax(src)[0]
                    except ValueError:
                        tree = None
                    if tree is not None:
                        stores |= {n.attr for n in ast.walk(tree)
                                   if isinstance(n, ast.Attribute)
                                   and isinstance(n.ctx, ast.Store)}
                memo[lay.module] = frozenset(stores)
            out |= memo[lay.module]
    return out


def _special(attr: str) -> bool:
    """A special attribute of a function that may give back what it keeps (its
    ``__wrapped__``, ``__closure__``, ``__globals__``, ``__dict__``...): not its name or docs."""
    return attr.startswith("__") and attr not in _INERT_ATTRS


def _holds_wrapped(vals, judge) -> bool:
    """Some value of ``vals`` is FA4 behind a checked wrapper."""
    return any(isinstance(v, FAFunc) and v.entry.version == "fa4" and judge.normalised(v)
               for v in vals)


def _chain_prefixes(sc, node, top):
    """(node, IR expression) for each attribute read of the chain from ``node`` up to, not
    including, ``top`` (``pkg.fa`` of ``pkg.fa.__wrapped__``), innermost first."""
    mid, mexpr = node, Name(id=node.id)
    while sc.parent(mid) is not top and isinstance(sc.parent(mid), ast.Attribute):
        mid = sc.parent(mid)
        mexpr = Attr(base=mexpr, attr=mid.attr)
        yield mid, mexpr


def _unwraps(p, node) -> str:
    """How the call ``p`` may read back what a wrapper ``node`` keeps as its ``__wrapped__``
    (``getattr(fa, "__wrapped__")``, ``getattr(fa, name)``, ``vars(fa)``, ``inspect.unwrap
    (fa)``), or ""."""
    if not (isinstance(p, ast.Call) and p.args and p.args[0] is node):
        return ""
    callee = ast.unparse(p.func)
    if callee == "getattr":
        name = p.args[1] if len(p.args) > 1 else None
        if isinstance(name, ast.Constant) and isinstance(name.value, str) and \
                not _special(name.value):
            return ""
        return ast.unparse(p)
    if callee.rsplit(".", 1)[-1] in ("vars", "unwrap", "getclosurevars", "getmembers",
                                     "getmembers_static"):
        return ast.unparse(p)
    return ""


# words found by text (each searched as a literal, its word boundary checked by hand: a
# pattern without a literal prefix is tried at every byte of the tree)
_REFLECTION_WORDS = ((b"__wrapped__", "unwrap"), (b"unwrap", "unwrap"),
                     (b"get_objects", "gc"), (b"get_referrers", "gc"), (b"get_referents", "gc"))


def _word_at(raw: bytes, start: int, end: int) -> bool:
    def ident(i):
        return 0 <= i < len(raw) and (raw[i:i + 1].isalnum() or raw[i:i + 1] == b"_")
    return not ident(start - 1) and not ident(end)


# words that hand out running frames or a function's module namespace, and with them every
# name a module or a function holds, FA4 among them (searched like the words above)
_FRAME_WORDS = (b"__globals__", b"f_globals", b"f_locals", b"f_back", b"_getframe",
                b"currentframe", b"gi_frame", b"cr_frame", b"ag_frame", b"tb_frame",
                b"getouterframes", b"getinnerframes", b"walk_stack", b"walk_tb", b"getmodule",
                b"getmembers", b"getmembers_static")
# the words above by a part they share: one search of the part tells whether any may occur
_FRAME_GROUPS = tuple((key, tuple(w for w in _FRAME_WORDS if key in w))
                      for key in (b"frame", b"globals", b"locals", b"getm", b"f_back",
                                  b"walk_"))
assert {w for _, g in _FRAME_GROUPS for w in g} == set(_FRAME_WORDS)
_NAMESPACE_WORDS = (b"globals", b"locals", b"vars")
_NAMESPACE_STRINGS = frozenset({"globals", "locals", "vars", "__globals__", "f_globals",
                                "f_locals", "__builtins__"})


def _word_offsets(raw: bytes, word: bytes):
    """Where ``word`` stands as a whole word outside a comment: its byte offset each."""
    at = raw.find(word)
    while at >= 0:
        end = at + len(word)
        if _word_at(raw, at, end) and not _in_comment(raw, at):
            yield at
        at = raw.find(word, end)


def _line_col(raw: bytes, at: int) -> tuple[int, int]:
    """(line, 1-based column) of the byte offset ``at``."""
    return raw.count(b"\n", 0, at) + 1, at - (raw.rfind(b"\n", 0, at) + 1) + 1


def _words(raw: bytes, word: bytes):
    """Where ``word`` stands as a whole word outside a comment: (line, col) each."""
    for at in _word_offsets(raw, word):
        yield _line_col(raw, at)


def _frame_reads(index) -> list:
    """Places that can read a module's or a function's names without spelling them: frames
    (``sys._getframe().f_globals``, ``inspect.currentframe()``, ``inspect.stack()``, a
    generator's or a traceback's frame), a function's ``__globals__``, ``inspect.getmodule``
    and ``getmembers``, and the ``globals``/``locals``/``vars`` builtins other than called
    in place (an alias, an import from ``builtins``, a lookup by string, a string run by
    ``eval``/``exec``). Over-approximated: each is an escape when the tree holds FA4."""
    out = []
    for name in sorted(index.modules):
        info = index.modules[name]
        if B.fa_version_of_module(name) == "fa4":
            continue
        raw = info.raw
        for word in (w for key, group in _FRAME_GROUPS if key in raw for w in group):
            for line, col in _words(raw, word):
                out.append((info.path, line, col, (
                    f"{word.decode()} hands out a running frame or a module's names, FA4's "
                    "functions among them: calls made through what it finds are not "
                    "followed")))
        if b"inspect" in raw:
            for m in _INSPECT_FRAMES.finditer(raw):
                if not _in_comment(raw, m.start()):
                    out.append((info.path, *_line_col(raw, m.start()), (
                        "inspect.stack/trace hands out the frames of every caller and their "
                        "namespaces, FA4's functions among them: calls made through what it "
                        "finds are not followed")))
        if _namespace_text(raw):
            tree = info.bare_tree
            if tree is None:
                continue
            out.extend((info.path, line, col, why) for line, col, why in _namespace_values(tree))
    return sorted(set(out))


_INSPECT_FRAMES = re.compile(rb"\binspect\s*\.\s*(?:stack|trace)\b")
_INSPECT_ALIAS = re.compile(rb"import\s+inspect\s+as\b|from\s+inspect\s+import\b")


def _namespace_text(raw: bytes) -> bool:
    """Whether the file's text may take ``globals``/``locals``/``vars`` as values, read them
    by a string or off ``builtins``, or reach ``inspect.stack``/``trace`` under another name:
    only then is its syntax read (``_namespace_values``). A plain call (``vars(args)``,
    ``globals()``) is read elsewhere (``_namespace_reads``)."""
    if b"inspect" in raw and _INSPECT_ALIAS.search(raw):
        return True
    words = [w for w in _NAMESPACE_WORDS if w in raw]
    if not words:
        return False
    dynamic = any(d in raw and next(_word_offsets(raw, d), None) is not None
                  for d in (b"eval", b"exec", b"builtins"))
    for w in words:
        for at in _word_offsets(raw, w):
            if dynamic:
                return True
            before = raw[at - 1:at] if at else b""
            lead = raw[max(0, at - 16):at].rstrip(b" \t")
            after = raw[at + len(w):at + len(w) + 40].lstrip(b" \t")
            # an attribute or a string (``builtins.globals``, ``"globals"``), or a value in
            # code (``g = globals``, ``f(globals)``, ``[locals, vars]``); a word of prose in a
            # docstring is followed by another word
            if before in (b".", b"'", b'"') or after[:1] in (b"", b"\n", b"\r", b")", b",",
                                                          b"]", b"}", b";", b"#") or \
                    lead.endswith((b"=", b"(", b",", b"[", b"{", b":")):
                return True
    return False


def _namespace_values(tree) -> list:
    """``globals``/``locals``/``vars`` taken as values, ``inspect.stack``/``trace`` (frames of
    every caller), and strings that name them: (line, col, why) each."""
    inspect_names = set()
    out = []
    nodes = list(ast.walk(tree))
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    for n in nodes:
        if isinstance(n, ast.Import):
            inspect_names |= {a.asname or a.name for a in n.names if a.name == "inspect"}
        elif isinstance(n, ast.ImportFrom) and n.module in ("inspect", "builtins"):
            for a in n.names:
                if a.name in ("stack", "trace", "globals", "locals", "vars", "*"):
                    out.append((n.lineno, n.col_offset + 1,
                                f"{a.name} imported from {n.module} hands out a frame's or a "
                                "module's names, FA4's functions among them, to be read by a "
                                "string"))
    for n in nodes:
        why = None
        if isinstance(n, ast.Name) and n.id in ("globals", "locals", "vars") and \
                isinstance(n.ctx, ast.Load):
            if id(n) not in called:
                why = f"the builtin {n.id} is taken as a value"
        elif isinstance(n, ast.Attribute) and n.attr in ("globals", "locals", "vars") and \
                isinstance(n.value, ast.Name) and n.value.id in ("builtins", "__builtins__"):
            why = f"{n.value.id}.{n.attr} is read"
        elif isinstance(n, ast.Attribute) and n.attr in ("stack", "trace") and \
                isinstance(n.value, ast.Name) and n.value.id in inspect_names:
            why = f"inspect.{n.attr} hands out the frames of every caller"
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and (
                n.value in _NAMESPACE_STRINGS or any(
                    f"{w}(" in n.value for w in ("globals", "locals", "vars"))):
            why = f"the string {n.value[:40]!r} names a namespace builtin"
        if why:
            out.append((n.lineno, n.col_offset + 1,
                        f"{why}: it can read a module's or a function's names, FA4's functions "
                        "among them, by a string; calls made through it are not followed"))
    return out


def _reflection_reads(index) -> dict:
    """Text the whole tree holds (FA4's own vendored copies aside) that reaches FA4 without
    naming it: ``gc.get_objects()`` and its kin hand out every live object, FA4's functions
    among them ("gc": each place); ``__wrapped__`` or ``inspect.unwrap`` reads back what
    ``functools.wraps`` kept ("unwrap": the first place). Over-approximated by text; a word in
    a comment does not count."""
    out: dict = {"gc": []}
    for name in sorted(index.modules):
        info = index.modules[name]
        if B.fa_version_of_module(name) == "fa4":
            continue
        raw = info.raw
        for word, key in _REFLECTION_WORDS:
            if key == "unwrap" and "unwrap" in out:
                continue
            at = raw.find(word)
            while at >= 0:
                end = at + len(word)
                if (word == b"__wrapped__" or _word_at(raw, at, end)) \
                        and not _in_comment(raw, at):
                    line, col = _line_col(raw, at)
                    if key == "unwrap":
                        out["unwrap"] = (info.path, line)
                        break
                    out["gc"].append((info.path, line, col, (
                        f"{word.decode()} hands out every live object, FA4's functions "
                        "among them: calls made through what it finds are not followed")))
                at = raw.find(word, end)
    out["gc"].sort()
    return out


def _in_comment(raw: bytes, at: int) -> bool:
    """True when the byte at ``at`` lies in a ``#`` comment of its line, as the tokenizer reads
    the line alone; a line it cannot read alone (inside a long string) is not a comment."""
    import io
    import tokenize

    start = raw.rfind(b"\n", 0, at) + 1
    head = raw[start:at]
    if b"#" not in head or b"'" in head or b'"' in head:
        return False        # no comment, or a line a long string may have begun above
    end = raw.find(b"\n", at)
    line = raw[start:end if end >= 0 else len(raw)]
    col = at - start
    try:
        for tok in tokenize.tokenize(io.BytesIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1] <= col
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return False


def _getters_used_as_values(solver, mod, info, judge, values, names, call_at=frozenset(),
                            fn_of=None) -> list[Escape]:
    """A function of the tree that returns FA4 itself (unchecked) is followed where it is
    called by name: the flow reads what it returns there. Used as a value -- a decorator
    (``@swap``), an argument (``map(get, ...)``, ``methodcaller(...)``), a container -- what
    it returns goes where the flow does not look."""
    fnames = {f.name for f in mod.all_fns if f.ir is not None and f.returns}
    for n, vals in solver.env(mod).items():
        if n not in fnames and any(
                isinstance(v, FuncRef) and v.key[0] != mod.path for v, _ in _forced(solver, vals)):
            fnames.add(n)           # a function imported from another parsed module
    if not fnames:
        return []
    verdict: dict = {}

    def returns_fa4(key) -> bool:
        if key not in verdict:
            f = solver.fns.get(key)
            if f is None or f.ir is None or not f.returns:
                verdict[key] = False
            else:
                try:
                    rets = solver.fn_returns(f)
                except RecursionError:
                    rets = None
                verdict[key] = rets is None or any(
                    isinstance(x, FAFunc) and x.entry.version == "fa4"
                    and not judge.normalised(x) for x, _ in rets)
        return verdict[key]

    lists: dict = {}

    def returns_list(key) -> bool:
        """What the function returns is a list or tuple that holds FA4."""
        if key not in lists:
            f = solver.fns.get(key)
            try:
                lists[key] = f is not None and f.ir is not None and bool(f.returns) and \
                    _list_holds_fa4(solver, judge, (x for x, _ in solver.fn_returns(f)))
            except RecursionError:
                lists[key] = True
        return lists[key]

    out = []
    for stmt, qual, _cls in _statements_with(info, fnames):
        nodes = walk(stmt)
        for node in nodes:
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                    and node.id in fnames):
                continue
            p = _parent_of(node)
            if isinstance(p, ast.Call) and p.func is node:
                # called by name: the flow reads what it returns; a list of entry points it
                # returns is followed only where the flow reads lists (``_list_use``)
                if fn_of is not None and any(isinstance(v, FuncRef) and returns_list(v.key)
                                             for v in values(qual, node.id)):
                    why = _list_use(_Local(stmt, _cls, judge), p, fn_of(qual), solver,
                                    call_at, info.path)
                    if why:
                        out.append(Escape(info.path, p.lineno, p.col_offset + 1,
                                          f"{ast.unparse(p)} (a list or tuple holding FA4) "
                                          f"{why}"))
                continue
            if any(isinstance(v, FuncRef) and returns_fa4(v.key) for v in values(qual, node.id)):
                out.append(Escape(info.path, node.lineno, node.col_offset + 1,
                                  f"{node.id} returns FA4 and is used as a value here (a "
                                  "decorator, an argument, a container): where what it "
                                  "returns goes is not followed"))
    return out


def _forced(solver, vals):
    try:
        return solver.force(vals)
    except RecursionError:
        return frozenset()


def _attribute_chain(sc, node, fn, solver):
    """The longest attribute chain read off ``node`` (``a.fa.flash_attn_func`` for ``a``) and
    the values the solver gives it: (the outermost Attribute node, values), or (node, ())."""
    top, expr = node, Name(id=node.id)
    p = sc.parent(node)
    while isinstance(p, ast.Attribute) and p.value is top:
        top, expr = p, Attr(base=expr, attr=p.attr)
        p = sc.parent(p)
    if top is node:
        return node, frozenset()
    return top, _eval(solver, fn, expr)


# attributes of a function that hand out what decides its behaviour
_FUNCTION_STATE = frozenset({"__defaults__", "__kwdefaults__", "__code__", "__globals__",
                             "__dict__", "__closure__"})
# makers of callables that call, or read, what they are applied to (``operator``)
_CALL_THROUGH = frozenset({"methodcaller", "attrgetter", "itemgetter"})
# attributes of a function (or an FA4 module) that give nothing that can call it
_INERT_ATTRS = frozenset({"__name__", "__qualname__", "__module__", "__doc__",
                          "__annotations__", "__text_signature__", "__version__"})
# attributes that hand out a module's whole namespace
_NAMESPACE_ATTRS = frozenset({"__dict__", "__getattribute__", "__getattr__"})
# builtins that hand out a namespace by name
_NAMESPACE_CALLS = ("globals", "vars", "locals")
# builtins whose result carries nothing read off their argument
_INTROSPECTION = frozenset({"hasattr", "isinstance", "issubclass", "id", "repr", "str", "print",
                            "bool", "callable", "hash", "len", "format"})


def _chain_expr(node) -> tuple:
    """The flow layer's expression for a Name/Attribute chain."""
    if isinstance(node, ast.Attribute):
        return Attr(base=_chain_expr(node.value), attr=node.attr)
    return Name(id=node.id)


def _class_body_imports(solver, mod, info) -> list[Escape]:
    """An import inside a class body binds a class attribute (``cls._fa(...)``,
    ``self._fa(...)``), which the flow does not follow: an FA4 entry point (or module) bound
    there escapes."""
    if info.tree is None or "import" not in info.source:
        return []
    out = []
    for cls in walk(info.tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for st in flat_statements(cls.body):
            if not isinstance(st, (ast.Import, ast.ImportFrom)):
                continue
            for a in st.names:
                if isinstance(st, ast.ImportFrom):
                    module = solver.resolve_module(mod, st.module or "", st.level)
                    hit = B.entry_for(module, a.name) is not None and \
                        B.entry_for(module, a.name).version == "fa4" or \
                        B.fa_version_of_module(f"{module}.{a.name}") == "fa4" or \
                        (a.name == "*" and B.fa_version_of_module(module) == "fa4")
                else:
                    hit = B.fa_version_of_module(a.name) == "fa4" or any(
                        B.fa_version_of_module(a.name + s) == "fa4" for s in (".cute",
                                                                               ".cute.interface"))
                if hit:
                    out.append(Escape(info.path, st.lineno, st.col_offset + 1,
                                      f"{a.asname or a.name} is bound to FA4 as an attribute "
                                      f"of class {cls.name} (an import in its body); calls "
                                      "through the class are not followed"))
    return out


def _namespace_reads(solver, mod, info, judge) -> list[Escape]:
    """``globals()``, ``vars()``, ``locals()`` in a module whose names hold an unchecked FA4
    entry point: every name can be read back by a string."""
    src = info.source
    if not any(f"{n}(" in src for n in _NAMESPACE_CALLS):
        return []
    held: dict[str, set] = {}         # module-level name -> the unchecked FA4 entries it holds
    for name, vals in solver.env(mod).items():
        try:
            vs = solver.force(vals)
        except RecursionError:
            vs = frozenset()
        entries = {v.entry.name for v, _ in vs if isinstance(v, FAFunc)
                   and v.entry.version == "fa4" and not judge.normalised(v)}
        if entries:
            held[name] = entries
    if not held and "flash_attn" not in src:
        return []
    out = []
    for n in walk(info.tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in _NAMESPACE_CALLS and not n.args and not n.keywords \
                and any(isinstance(v, ExtRef) and v.qual == f"builtins.{n.func.id}"
                        for v in _eval(solver, mod.top, Name(id=n.func.id))):
            p = _parent_of(n)
            if isinstance(p, ast.Compare) and n in p.comparators and \
                    all(isinstance(op, (ast.In, ast.NotIn)) for op in p.ops):
                continue            # "X" in globals(): reads no value
            scope = enclosing_function(n) if n.func.id != "globals" else None
            if scope is not None:
                # vars()/locals() in a function: its own names, not the module's; an escape
                # where the function may hold FA4 itself (a name of the module that holds it,
                # or FA4 imported in the function)
                seg = ast.get_source_segment(src, scope) or src
                if "flash_attn" not in seg and not any(
                        re.search(rf"\b{re.escape(h)}\b", seg) for h in held):
                    continue
                out.append(Escape(info.path, n.lineno, n.col_offset + 1,
                                  f"{n.func.id}() hands out the function's names, among them "
                                  "what it holds of FA4, to be read by a string"))
                continue
            key = _constant_key(n)
            if key is not None and key not in held:
                continue            # globals()["X"], globals().get("X"): only X is read
            if not held:
                continue
            shown = sorted(held[key]) if key is not None else sorted(set().union(*held.values()))
            out.append(Escape(info.path, n.lineno, n.col_offset + 1,
                              f"{n.func.id}() hands out this module's names, among them FA4 "
                              f"{', '.join(shown)}, to be read by a string"))
    return out


def _constant_key(call: ast.Call) -> str | None:
    """The one name read off ``globals()`` when the code spells it: ``globals()["X"]``,
    ``globals().get("X", ...)``; None when any name may be read."""
    p = _parent_of(call)
    if isinstance(p, ast.Subscript) and p.value is call and isinstance(p.slice, ast.Constant) \
            and isinstance(p.slice.value, str) and isinstance(p.ctx, ast.Load):
        return p.slice.value
    if isinstance(p, ast.Attribute) and p.value is call and p.attr == "get":
        q = _parent_of(p)
        if isinstance(q, ast.Call) and q.func is p and q.args \
                and isinstance(q.args[0], ast.Constant) and isinstance(q.args[0].value, str):
            return q.args[0].value
    return None


def _ir_calls(mod) -> dict:
    """(line, byte col) -> the flow layer's call expression there, for one module."""
    cache = mod.__dict__.get("_escape_calls")
    if cache is None:
        cache = {}
        for x in walk_ir(mod.ir.body):
            if type(x) is Call and isinstance(x.pos, list) and len(x.pos) == 4 \
                    and isinstance(x.pos[0], int):
                cache.setdefault((x.pos[0], x.pos[1]), x)
        mod._escape_calls = cache
    return cache


def _wrapped_values(call, fn, solver) -> list:
    """The FA4 functions the flow gives a wrapping call's value."""
    e = _ir_calls(fn.mod).get((call.lineno, call.col_offset)) if fn is not None else None
    if e is None:
        return []
    return [v for v in _eval(solver, fn, e) if isinstance(v, FAFunc) and v.entry.version == "fa4"]


def _partial_layer(call, fn, solver) -> bool:
    """The flow read ``partial(helper, fa4)`` as a layer of FA4's chain (``WrapRef.arg``)."""
    return any(v.chain and v.chain[-1].arg > 0 for v in _wrapped_values(call, fn, solver))


def _wrapped_proved(sc, call, fn, solver) -> bool:
    """The wrapping call's value, as the flow evaluates it, is FA4 behind a proved wrapper."""
    if sc.judge is None:
        return False
    vals = _wrapped_values(call, fn, solver)
    return bool(vals) and all(sc.judge.normalised(v) for v in vals)


def _tree_module_use(sc, node, fn, solver, call_at, path, judge,
                     may_hold=None) -> tuple[str, str]:
    """A name bound to a module that holds FA4 somewhere under it (a re-exporting module of the
    tree, a package above one): ("" or why the use is not followed, what is used)."""
    def fa4_raw(vals):
        return sorted({v.entry.name for v in vals if isinstance(v, FAFunc)
                       and v.entry.version == "fa4" and not judge.normalised(v)})

    cur, expr = node, Name(id=node.id)
    p = sc.parent(node)
    if isinstance(p, ast.Attribute) and p.value is node:
        top, vals = _attribute_chain(sc, node, fn, solver)
        attrs = []
        x = top
        while isinstance(x, ast.Attribute):
            attrs.append(x.attr)
            x = x.value
        if _NAMESPACE_ATTRS & set(attrs):
            return ("has its namespace read through "
                    f".{next(a for a in reversed(attrs) if a in _NAMESPACE_ATTRS)}",
                    f"{ast.unparse(top)} (a module holding FA4)")
        # what a checked wrapper the module holds keeps of FA4, read back (``pkg.fa.__wrapped__``,
        # ``pkg.fa.__closure__``)
        for mid, mexpr in _chain_prefixes(sc, node, top):
            nxt = sc.parent(mid)
            if isinstance(nxt, ast.Attribute) and _special(nxt.attr) and \
                    _holds_wrapped(_eval(solver, fn, mexpr), judge):
                return (f"reads {nxt.attr}, which may give back the FA4 function the checked "
                        "wrapper keeps", f"{ast.unparse(top)} (a module holding FA4)")
        unwrap = _unwraps(sc.parent(top), top)
        if unwrap and _holds_wrapped(vals, judge):
            return ("may give back the FA4 function the checked wrapper keeps (its "
                    f"__wrapped__): {unwrap}", f"{ast.unparse(top)} (a module holding FA4)")
        raw = fa4_raw(vals)
        if raw:
            return (_use(sc, top, fn, solver, call_at, path),
                    f"{ast.unparse(top)} ({', '.join(raw)})")
        if _list_holds_fa4(solver, judge, vals):
            return (_list_use(sc, top, fn, solver, call_at, path),
                    f"{ast.unparse(top)} (a list or tuple holding FA4)")
        # FA4 partway along the chain (``pkg.flash_attn_func.__call__``, ``pkg.FNS.pop``):
        # what is read off it decides (``_use``, ``_list_use``)
        for mid, mexpr in _chain_prefixes(sc, node, top):
            mvals = _eval(solver, fn, mexpr)
            mraw = fa4_raw(mvals)
            if mraw:
                return (_use(sc, mid, fn, solver, call_at, path),
                        f"{ast.unparse(mid)} ({', '.join(mraw)})")
            if _list_holds_fa4(solver, judge, mvals):
                return (_list_use(sc, mid, fn, solver, call_at, path),
                        f"{ast.unparse(mid)} (a list or tuple holding FA4)")
            if any(_is_fa4_module(v) for v in mvals):
                # FA4's module reached through its parent package (``import
                # flash_attn.cute.interface``, then ``flash_attn.cute.interface.X = ...``)
                why = _module_use(sc, mid, fn, solver, call_at, path,
                                  tuple(v.name for v in mvals if _is_fa4_module(v)))
                if why:
                    return why, f"{ast.unparse(mid)} (an FA4 module)"
        if not any(isinstance(v, ModRef) and (may_hold is None or may_hold(v.name))
                   for v in vals):
            return "", ""
        # the chain ends at a module that holds FA4 (``pkg.fa``): where that goes decides
        cur, p = top, sc.parent(top)
        expr = _chain_expr(top)
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "getattr" \
            and p.args and p.args[0] is cur:
        name = p.args[1] if len(p.args) > 1 else None
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            vals = _eval(solver, fn, Attr(base=expr, attr=name.value))
            raw = fa4_raw(vals)
            if not raw:
                return "", ""
            return _use(sc, p, fn, solver, call_at, path), f"{ast.unparse(p)} ({', '.join(raw)})"
        return ("is read with getattr(...) by a computed name",
                f"{ast.unparse(cur)} (a module holding FA4)")
    what = f"{ast.unparse(cur)} (a module holding FA4)"
    node = cur
    if isinstance(p, ast.Call):
        if p.func is node:
            return "", ""
        if isinstance(p.func, ast.Name) and p.func.id in _INTROSPECTION and any(
                isinstance(v, ExtRef) and v.qual == f"builtins.{p.func.id}"
                for v in _eval(solver, fn, Name(id=p.func.id))):
            return "", ""           # hasattr(mod, ...), isinstance(...): nothing of it leaves
        if _in_tree_callee(solver, fn, p):
            return "", ""
        return f"is passed to {ast.unparse(p.func)}(...), which the pass does not follow", what
    if isinstance(p, ast.keyword):
        why = _keyword_use(sc, p, fn, solver)
        return (why, what) if why else ("", "")
    return _use(sc, node, fn, solver, call_at, path), what


def _eval(solver, fn, expr) -> frozenset:
    from analyzer.sites.flow import fn_context

    if fn is None:
        return frozenset()
    ctx = fn_context(solver, fn)
    try:
        return frozenset(v for v, _ in solver.eval(ctx, expr))
    except RecursionError:
        return frozenset()


def _constant_extras(call: ast.Call) -> bool:
    """Every argument after the first is a literal (``w(fa4, size_at=5, left_at=None)``): no
    window of the call site travels with FA4 into the callee."""
    return all(isinstance(a, ast.Constant) for a in call.args[1:]) and \
        all(k.arg is not None and isinstance(k.value, ast.Constant) for k in call.keywords)


def _list_holds_fa4(solver, judge, vals) -> bool:
    """Some list or tuple among ``vals`` holds, at some index, FA4 not behind a proved
    wrapper (with no ``judge``: any FA4 entry point), or an FA4 module."""
    for v in vals:
        if not isinstance(v, ListVal):
            continue
        try:
            elems = solver.elements(v)
        except RecursionError:
            return True
        if any((isinstance(w, FAFunc) and w.entry.version == "fa4"
                and (judge is None or not judge.normalised(w)))
               or _is_fa4_module(w) for w, _ in elems):
            return True
    return False


def _list_use(sc, node, fn, solver, call_at, path) -> str:
    """"" when the flow follows this use of a list or tuple that holds FA4, else why not. The
    flow reads such a container by a constant index (the element is then an FA4 value, used
    where the subscript is used), splatted into a call it analyses, and through plain aliases;
    a method (``pop``, ``copy``), an iteration, an unpacking, a slice or a callee that is not
    followed hands the elements out where no call is judged."""
    p = sc.parent(node)
    if isinstance(p, ast.Subscript) and p.value is node and isinstance(p.ctx, ast.Load):
        if isinstance(p.slice, ast.Constant) and type(p.slice.value) is int \
                and p.slice.value >= 0:
            return _use(sc, p, fn, solver, call_at, path)
        return f"has an element read by {ast.unparse(p.slice)!r}, which the pass does not follow"
    if isinstance(p, ast.Starred):
        call = sc.parent(p)
        if isinstance(call, ast.Call) and ((path, call.lineno, call.col_offset) in call_at
                                           or _in_tree_callee(solver, fn, call)):
            return ""
        return "is splatted where the pass does not follow"
    if isinstance(p, (ast.Assign, ast.AnnAssign)) and p.value is node:
        targets = p.targets if isinstance(p, ast.Assign) else [p.target]
        if all(isinstance(t, ast.Name) for t in targets):
            return ""       # an alias: its own uses are read here too
        return f"is unpacked or stored in {ast.unparse(targets[0])}, which the pass does not follow"
    if isinstance(p, (ast.Compare, ast.If, ast.While, ast.Assert, ast.Expr, ast.UnaryOp)):
        return ""
    if isinstance(p, ast.Call) and node in p.args:
        callee = ast.unparse(p.func)
        if callee in _INTROSPECTION:
            return ""
        if _in_tree_callee(solver, fn, p):
            return ""       # the parameter holds the list there and is read the same way
        return f"is passed to {callee}(...), which the pass does not follow"
    if isinstance(p, ast.keyword):
        return _keyword_use(sc, p, fn, solver)
    if isinstance(p, ast.Attribute):
        return f"has its attribute {p.attr} read, which hands out its elements where the " \
            "pass does not follow"
    if isinstance(p, (ast.For, ast.comprehension)):
        return "is iterated, which hands out its elements where the pass does not follow"
    return f"is used in a {type(p).__name__ if p is not None else 'statement'} the pass " \
        "does not follow"


def _call_may_carry_window(call: ast.Call) -> bool:
    """A window keyword, a splat, or more positional arguments than the three tensors."""
    return any(k.arg is None or "window" in k.arg for k in call.keywords) or \
        any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > 3


def _fa4_other_use(sc, node) -> str:
    """An object of FA4 other than its four entry points (``FlashAttnFunc``, whose ``apply``
    hands its window straight to ``_flash_attn_fwd``; a kernel class; a helper): a call
    through it that can carry a window is not judged, and neither is one made after it is
    handed on. "" for a call that carries none, a test, or an introspection."""
    top, p = node, sc.parent(node)
    while isinstance(p, ast.Attribute) and p.value is top:
        top, p = p, sc.parent(p)
    label = ast.unparse(top)
    if isinstance(p, ast.Call) and p.func is top:
        if _call_may_carry_window(p):
            return (f"is called as {label}(...) with arguments that may carry a window; the "
                    "pass judges FA4's four entry points only")
        return ""
    if isinstance(p, (ast.Compare, ast.If, ast.Expr, ast.UnaryOp, ast.Assert)):
        return ""
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and \
            p.func.id in _INTROSPECTION:
        return ""
    return (f"is handed on as {label} where the pass does not follow it (a call through it "
            "may carry a window to FA4)")


def _keyword_use(sc, kw: ast.keyword, fn, solver) -> str:
    """A value passed as ``name=`` is followed only into a callee of the tree."""
    call = sc.parent(kw)
    if isinstance(call, ast.Call) and _in_tree_callee(solver, fn, call):
        return ""
    return f"is passed as {kw.arg}= to a callee the pass does not follow"


def _in_tree_callee(solver, fn, call: ast.Call) -> bool:
    return not _callee_unfollowed(solver, fn, call)


def _callee_unfollowed(solver, fn, call: ast.Call) -> str:
    """"" when every callable ``call.func`` may be at run time is an in-tree def the flow
    follows its arguments into, else why not. A value the flow does not know as such a def
    -- an external callable, a parameter, an attribute or a registry's entry, beside the def
    (``launch = ctx.run if keep else _inline``, ``launcher or _inline``) -- is what may run;
    so is whatever replaces the def the name resolves to (``_def_replaced``)."""
    if fn is None:
        return "the call is outside a function the flow reads"
    from analyzer.sites.flow import fn_context

    label = call.func
    if isinstance(label, ast.Name):
        e = Name(id=label.id)
    elif isinstance(label, ast.Attribute) and isinstance(label.value, ast.Name):
        e = Attr(base=Name(id=label.value.id), attr=label.attr)
    else:
        return "the callee is an expression the flow does not resolve"
    ctx = fn_context(solver, fn)
    try:
        vals = solver.eval(ctx, e)
    except RecursionError:
        return "the callee cannot be resolved"
    # a constant cannot be called (TypeError): ``launcher or _inline`` with launcher=None
    callables = [v for v, _ in vals if not isinstance(v, Const)]
    fr = [v for v in callables if isinstance(v, FuncRef)]
    via_self = isinstance(label, ast.Attribute) and fn.cls is not None \
        and label.value.id == fn.first_param
    if not callables:
        # self.method(...) inside a class: the solver follows methods of the same class
        if via_self and label.attr in fn.cls.methods:
            return _def_replaced(solver, fn.cls.methods[label.attr], via_self)
        return "the callee is not a function of the tree"
    other = next((v for v in callables if not isinstance(v, FuncRef)), None)
    if other is not None:
        # every value the callee may be must be a def the flow follows: any other one may
        # be what runs, with FA4 and the arguments beside it
        return f"the callee may also be {_value_label(other)}, which the pass does not follow"
    # followed: the parameter flows into the callee's own calls. A callee that defines a nested
    # function or lambda may hand back a closure over it, which nothing would follow.
    for v in fr:
        target = solver.fns.get(v.key)
        if target is None or target.ir is None or target.nested:
            return f"the callee {v.key[1]} is not a def the flow follows into"
        why = _def_replaced(solver, target, via_self)
        if why:
            return why
    return ""


def _family_binds(solver, stores, target, own) -> str:
    """The first class of the method's family whose body decides what ``self.NAME`` is
    otherwise than the flow follows it (``path:line (what)``), else "": a class attribute, a
    property or a decorated def of that name in a subclass (or in a base of a subclass: a
    mixin before the class), an attribute hook in any class of the family, the class's own
    body binding the name again. A subclass's plain ``def`` of the name is an override the
    flow follows too (``Solver._overrides``); a base's binding comes after the class in every
    order Python resolves attributes in, and is shadowed by the def."""
    from analyzer.sites.attrstores import _HOOK_NAMES, _binds, _class_bindings, _may_bind
    from analyzer.sites.verdicts import _find_def

    name, cls_name = target.name, target.cls.ir.name
    followed = {(m.mod.path, m.cls.ir.name): m for m in solver._overrides(target.cls, name)}
    needle = name.encode()
    for rel in stores._class_files():
        raw = stores.data[rel]
        if not (stores._hooks[rel] or _may_bind(raw, needle)):
            continue
        info = stores.index.by_path.get(rel)
        tree = info.bare_tree if info is not None else None
        if tree is None:
            return f"{rel}:1 (cannot be read)"
        for k, bound in stores._classes_of(rel, tree):
            why = _binds(bound, name)
            if not why:
                continue
            ancestor = k.name != cls_name and stores._derives(cls_name, k.name) and \
                not stores._derives(k.name, cls_name)
            if not stores.shares_instances(k.name, cls_name):
                continue
            hook = next((h for h in _HOOK_NAMES if h in bound), None)
            if hook:
                return f"{rel}:{k.lineno} ({k.name} defines {hook})"
            if ancestor:
                continue
            m = target if (rel, k.lineno) == own else followed.get((rel, k.name))
            if m is None or m.ir is None or m.nested or (m is not target and (
                    solver.decorator_hides(m) or not stores._derives(k.name, cls_name))):
                return f"{rel}:{k.lineno} ({k.name} {why})"
            fdef = _find_def(k, m.ir)
            if fdef is None or fdef not in k.body:
                return f"{rel}:{k.lineno} ({k.name} {why})"
            rest = ast.ClassDef(name=k.name, bases=[], keywords=[], decorator_list=[],
                                body=[st for st in k.body if st is not fdef])
            again = _binds(_class_bindings(rest), name)
            if again:
                return f"{rel}:{k.lineno} ({k.name} also {again})"
    return ""


def _value_label(v) -> str:
    if isinstance(v, ExtRef):
        return v.qual
    if isinstance(v, Opaque):
        return f"a value the flow cannot name ({v.reason})"
    return type(v).__name__


def _def_replaced(solver, target, via_self: bool) -> str:
    """Where the def a callee resolves to by name may be replaced at run time ("" when
    nowhere): the flow reads a method or a module-level function off its ``def``, but a
    store of that attribute name (``self.launch = ctx.run``, ``Runner.launch = other``,
    ``cls.launch = ...`` in a class decorator, ``sched.launch = ...`` from another module,
    ``setattr`` by a computed name), a class of the family that binds the name in its body
    (``launch = _eager`` in a subclass, an overriding def), a decorator on the def or the
    class, or -- through ``self`` -- the method run on another object, make another callable
    run. Read once per def and tree."""
    memo = solver.__dict__.setdefault("_def_replaced", {})
    key = (target.key, via_self)
    if key not in memo:
        memo[key] = _def_replaced_uncached(solver, target, via_self)
    return memo[key]


def _def_replaced_uncached(solver, target, via_self: bool) -> str:
    name = target.name
    cls = target.cls
    method = cls is not None and target.qualname == f"{cls.qualname}.{name}"
    if not method and "." in target.qualname:
        return ""           # a def local to a function: only the flow's bindings reach it
    what = f"{target.qualname} ({target.mod.path})"
    hides = solver.decorator_hides(target)
    if hides:
        return f"{what} is called through its decorator: {hides}"
    stores = getattr(solver, "attr_stores", None)
    if stores is None:
        return f"{what}: the tree's text is not available"
    if not method:
        where = stores.module_or_class(name)
        if where:
            return f"{what} may be replaced where the attribute {name} is set ({where})"
        return ""
    where = next(iter(stores._stores_of(name)), None)
    if where is not None:
        return (f"{what} may be replaced where the attribute {name} is set "
                f"({where[0]}:{where[1]})")
    info = stores.index.by_path.get(target.mod.path)
    tree = info.tree if info is not None else None
    if tree is None:
        return f"{what}: the source could not be read"
    from analyzer.sites.verdicts import _find_class

    cdef = _find_class(tree, cls.ir)
    if cdef is None:
        return f"{what}: the class statement could not be found"
    if cdef.decorator_list or cdef.keywords:
        return f"{what}: a class decorator or metaclass may replace it"
    other = _family_binds(solver, stores, target, (target.mod.path, cdef.lineno))
    if other:
        return f"{what} may not be the def that runs: {other}"
    anywhere = stores.any_store()
    if anywhere:
        return f"{what}: any attribute may be set at {anywhere}"
    if via_self:
        away = stores.detached(cls.ir.name)
        if away:
            return f"{what}: a method of {cls.ir.name} may run on another object ({away})"
    return ""


# ``partial(f, ...)`` binds arguments and calls nothing: the flow follows its value as a layer
_PARTIALS = frozenset({"functools.partial", "partial", "functools.partialmethod",
                       "partialmethod"})


def _prefilled_window(call: ast.Call, read=None) -> str:
    """Why a ``functools.partial(fa4, ...)`` call binds a window FA4 may read as another band
    than meant ("" when it binds none, or only windows every release reads as meant): a
    negative bound beside another, a window the pass cannot read (not a literal or a
    module-level name bound to one: ``read(node)`` gives a keyword's values or why not; a
    ``**`` splat, a positional at a window's place). The calls made through the partial
    outside the tree are never judged, so what it binds is judged here."""
    if any(k.arg is None for k in call.keywords):
        return ("is prefilled by a ** splat that may bind a window; the calls through the "
                "partial (outside the tree too) are not judged")
    if len(call.args) - 1 > N.FIRST_WINDOW_AT:
        return ("is prefilled with positional arguments that reach a window's place; the "
                "calls through the partial (outside the tree too) are not judged")
    got: dict = {}
    for k in call.keywords:
        if k.arg in N.WINDOW_KEYS:
            if read is not None:
                vals = read(k.value)
            else:
                try:
                    vals = frozenset({BH._freeze(ast.literal_eval(k.value))})
                except (ValueError, SyntaxError, TypeError):
                    vals = "not a literal"
            if isinstance(vals, str):
                return (f"is prefilled with {k.arg}={ast.unparse(k.value)}, which the pass "
                        f"cannot read ({vals}); the calls through the partial (outside the "
                        "tree too) are not judged")
            got[k.arg] = sorted(vals, key=repr)
    if not got:
        return ""
    if "window_size" in got:
        pairs = [tuple(w) if isinstance(w, tuple) and len(w) == 2 else
                 (None, None) if w is None else w for w in got["window_size"]]
    else:
        pairs = [(l, r) for l in got.get("window_size_left", [None])
                 for r in got.get("window_size_right", [None])]
        if len(got) == 1:
            # a side the partial leaves open is the caller's: a bound negative side beside
            # it is a wrong band whatever bound the caller passes, but -1 (full attention)
            (side, vs), = got.items()
            pairs = []
            for v in vs:
                if not (v is None or type(v) is int):
                    pairs.append((v, 0))
                elif v is not None and v < 0:
                    return (f"is prefilled with {side}={v!r}, which beside any bound the "
                            "caller passes (outside the tree too) FA4 releases since #2490 "
                            "may read as another band than meant")
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(
                x is None or (type(x) is int) for x in pair)):
            return (f"is prefilled with a window ({pair!r}) that is not a pair of ints or "
                    "None; the calls through the partial (outside the tree too) are not judged")
        neg = [x is not None and x < 0 for x in pair]
        if any(neg) and not all(neg):
            return (f"is prefilled with the window {pair!r}, which FA4 releases since #2490 "
                    "read as another band than meant (a negative bound beside another); every "
                    "call through the partial, outside the tree too, passes it")
    return ""


def _reader(sc, path: str, call: ast.Call):
    """How a partial's keyword values are read: literals, and module-level names bound to one
    where the partial is made at the top level of its module (``Judge._constant_values``)."""
    if sc.judge is None:
        return None
    return lambda node: sc.judge._constant_values(path, node, call)


def _prefill_normalised(sc, call, fn, solver) -> bool:
    """Every FA4 value of the partial call is a proved wrapper inside the partial, for the
    keyword forms the partial hands it its window by: whatever window it binds reaches FA4
    normalised, whoever calls it."""
    if sc.judge is None:
        return False
    vals = _wrapped_values(call, fn, solver)
    if not vals:
        return False
    for v in vals:
        pf = sc.judge.prefills(v.chain)
        if pf is None or not pf.inner:
            return False
        res = sc.judge.chain(FAFunc(v.entry, pf.inner)).for_forms(BH.merged_forms({"keyword"}))
        if res.status != "proved":
            return False
    return True


def _use(sc, node, fn, solver, call_at, path) -> str:
    """"" when the flow layer follows this use of an FA4 function value, else why not."""
    p = sc.parent(node)
    child = node
    # a value chosen by a conditional is used where the conditional is used
    while isinstance(p, (ast.IfExp, ast.BoolOp, ast.NamedExpr)) and child is not getattr(p, "test", None):
        child, p = p, sc.parent(p)
    if isinstance(p, ast.Call):
        if p.func is child:
            if (path, p.lineno, p.col_offset) in call_at:
                return ""
            return "is called here, but the call was not analysed"
        if p.args and p.args[0] is child:
            callee = ast.unparse(p.func)
            if callee in ("functools.wraps", "wraps") and len(p.args) == 1:
                # copies the name and docstring, and keeps FA4 as the wrapper's
                # ``__wrapped__``: harmless unless the tree reads that back
                at = getattr(solver, "unwrap_at", None)
                if at is None:
                    return ""
                return (f"is copied into the __wrapped__ of the function {callee} decorates, "
                        f"and the tree reads __wrapped__ back ({at[0]}:{at[1]})")
            if isinstance(p.func, ast.Call) and \
                    ast.unparse(p.func.func).rsplit(".", 1)[-1] in _CALL_THROUGH:
                # ``methodcaller("__call__", q, k, v, window_size=...)(fa4)`` calls it with
                # the arguments it was made with; ``attrgetter("__call__")(fa4)`` hands it out
                return (f"is handed to {callee}(...), which calls it or reads it with "
                        "arguments the pass does not judge")
            unfollowed = _callee_unfollowed(solver, fn, p) \
                if (len(p.args) > 1 or p.keywords) and callee not in _PARTIALS else ""
            if unfollowed and not (_constant_extras(p) and _wrapped_proved(sc, p, fn, solver)):
                # ``checkpoint(fa4, q, k, v, window_size=...)``, ``pool.submit(fa4, ...)``,
                # ``map(fa4, ...)``: a callee outside the tree handed FA4 together with
                # arguments it may call FA4 with, at once -- those windows are never judged
                return (f"is handed to {callee}(...) together with arguments it may call it "
                        f"with; the windows among them are not judged ({unfollowed})")
            if callee in _PARTIALS:
                prefilled = "" if _prefill_normalised(sc, p, fn, solver) else \
                    _prefilled_window(p, _reader(sc, path, p))
                if prefilled:
                    # the window is part of the value: whoever calls it -- code outside the
                    # tree included, where no call is judged -- hands FA4 that window
                    return prefilled
            # a wrapping call, followed as a chain: fine where its value is a proved wrapper or
            # lands where the flow follows it; otherwise the wrapped value escapes
            if isinstance(sc.parent(p), ast.Expr) and not _in_tree_callee(solver, fn, p):
                # the result is dropped: only what the callee keeps can be used later
                why = (f"is handed to {ast.unparse(p.func)}(...), which may keep it where the "
                       "pass does not follow")
            else:
                why = _use(sc, p, fn, solver, call_at, path)
            if why and _wrapped_proved(sc, p, fn, solver):
                return ""
            return why
        if ast.unparse(p.func) in _PARTIALS and p.args and child in p.args[1:] and \
                _partial_layer(p, fn, solver):
            # partial(helper, fa4): the flow made it a layer of fa4's chain; what matters
            # is where the wrapped value goes, as for ``w(fa4)``
            why = _use(sc, p, fn, solver, call_at, path)
            return "" if why and _wrapped_proved(sc, p, fn, solver) else why
        unfollowed = _callee_unfollowed(solver, fn, p)
        if not unfollowed:
            return ""
        callee = ast.unparse(p.func)
        return f"is passed to {callee}(...), which the pass does not follow ({unfollowed})"
    if isinstance(p, ast.keyword):
        return _keyword_use(sc, p, fn, solver)
    if isinstance(p, ast.AnnAssign) and child is p.annotation:
        return _ANNOTATION
    if isinstance(p, (ast.Assign, ast.AnnAssign)):
        targets = p.targets if isinstance(p, ast.Assign) else [p.target]
        bad = [t for t in targets if not isinstance(t, ast.Name)]
        if not bad:
            if p is sc.root and sc.cls is not None:
                return f"is stored in class attribute {sc.cls}.{ast.unparse(targets[0])}"
            return ""
        return f"is stored in {ast.unparse(bad[0])}"
    if isinstance(p, (ast.Compare, ast.If, ast.While, ast.Assert, ast.UnaryOp, ast.Expr,
                      ast.FormattedValue)):
        return ""
    if isinstance(p, (ast.IfExp, ast.BoolOp)):   # the test of a conditional
        return ""
    if isinstance(p, ast.Return):
        return _returned_unfollowed(p, getattr(solver, "attr_stores", None), path)
    if isinstance(p, (ast.List, ast.Tuple)):
        q = sc.parent(p)
        if isinstance(q, ast.Assign) and all(isinstance(t, ast.Name) for t in q.targets):
            if q is sc.root and sc.cls is not None:
                # a class attribute (``class K: fns = [fa4]``): ``K.fns[0](...)`` and
                # ``self.fns[0]`` are not followed
                return f"is put in a list or tuple kept as class attribute {sc.cls}." \
                    f"{ast.unparse(q.targets[0])}"
            return ""
        if isinstance(q, ast.Starred):
            call = sc.parent(q)
            if isinstance(call, ast.Call) and _in_tree_callee(solver, fn, call):
                return ""
        if isinstance(q, ast.Call) and _in_tree_callee(solver, fn, q):
            return ""
        if isinstance(q, ast.Return):
            if any(e is not child and not isinstance(e, ast.Constant) for e in p.elts):
                # ``return fa4, kwargs``: the caller -- outside the tree too -- may call it
                # with what comes with it
                return ("is returned together with other values its caller may call it "
                        "with; the windows among them are not judged")
            return ""
        return "is put in a list or tuple the pass does not follow"
    if isinstance(p, ast.Attribute):
        if p.attr == "__wrapped__":
            return "has its __wrapped__ read"
        if isinstance(p.ctx, (ast.Store, ast.Del)):
            return f"has its attribute {p.attr} set (what FA4 does with its arguments may change)"
        if p.attr in _FUNCTION_STATE:
            return (f"hands out its {p.attr}, which code may change (FA4's defaults, code or "
                    "globals)")
        if p.attr in _INERT_ATTRS or not (p.attr.startswith("__") or p.attr == "func"):
            # a name or a docstring: nothing that calls FA4; a plain attribute is what the
            # tree set on it (a wrapper's flag: ``inner.enabled``)
            return ""
        if p.attr in B.FA4_ENTRIES or p.attr in ("interface", "cute"):
            # an entry point read off the FA4 module this value may be: used where it goes
            return _use(sc, p, fn, solver, call_at, path)
        # a special attribute may give FA4 back, bound or wrapped: ``f.__call__``,
        # ``f.__get__(o)``, ``partial(f).func``, ``m.interface.__getattribute__(name)``
        return f"has its attribute {p.attr} read, which may give FA4 back where the pass " \
            "does not follow it"
    if isinstance(p, ast.Starred):
        return "is splatted into a call the pass does not follow"
    if isinstance(p, ast.Dict):
        return "is stored in a dict"
    if isinstance(p, (ast.Set, ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await,
                      ast.Subscript, ast.comprehension, ast.GeneratorExp, ast.ListComp)):
        return f"is used in a {type(p).__name__} the pass does not follow"
    if p is None:
        # a head of a def or a class read alone: what holds it says what it is
        q = _parent_of(child)
        if isinstance(q, ast.arg) or isinstance(q, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and child is q.returns:
            return _ANNOTATION
        if isinstance(q, ast.keyword) and isinstance(_parent_of(q), ast.ClassDef):
            return (f"is passed as {q.arg}= to the class statement, which hands it to a "
                    "metaclass or __init_subclass__ the pass does not follow")
    return f"is used in a {type(p).__name__ if p is not None else 'statement'} the pass does not follow"


_ANNOTATION = ("is used as an annotation, which Python keeps (__annotations__, "
               "typing.get_type_hints hand it back) where the pass does not follow")


_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


def _decorator_attr(d) -> str:
    t = d.func if isinstance(d, ast.Call) else d
    return t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else ""


def _memoizes(d, f) -> bool:
    """``functools.cache`` / ``functools.lru_cache(...)`` (or the bare names imported from
    functools by the module, not rebound): a call of the decorated function returns the
    object the function returned, so the flow's reading of the call stands."""
    target = d.func if isinstance(d, ast.Call) else d
    if isinstance(d, ast.Call) and isinstance(d.func, ast.Call):
        return False
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
            target.attr in ("cache", "lru_cache"):
        bare = None     # ``functools.cache``, ``ft.cache`` after ``import functools as ft``
    elif isinstance(target, ast.Name) and target.id in ("cache", "lru_cache"):
        bare = target.id
    else:
        return False
    if isinstance(d, ast.Call) and (target.attr if bare is None else bare) == "cache":
        return False        # cache takes the function only
    mod = f
    while _parent_of(mod) is not None:
        mod = _parent_of(mod)
    if not isinstance(mod, ast.Module):
        return False
    want = bare or target.value.id
    binds = []
    for n in ast.walk(mod):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if (a.asname or a.name.split(".")[0]) == want:
                    binds.append((n, a))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                n.name == want:
            return False
        elif isinstance(n, ast.Name) and n.id == want and not isinstance(n.ctx, ast.Load):
            return False
        elif isinstance(n, ast.arg) and n.arg == want:
            return False
    if len(binds) != 1:
        return False
    n, a = binds[0]
    if bare is None:
        return isinstance(n, ast.Import) and a.name == "functools"
    return isinstance(n, ast.ImportFrom) and n.module == "functools" and not n.level \
        and a.name == bare


def _method_read_elsewhere(stores, path: str, cls, f) -> str:
    """The first place in the tree that names ``f`` other than its own ``def`` and a call
    on ``self``/``cls`` inside its class; "" when there is none."""
    name = f.name.encode()
    rx = re.compile(rb"(?<![\w])" + re.escape(name) + rb"(?![\w])")
    own = re.compile(rb"(?:\bself|\bcls)\s*\.\s*$")
    for rel in sorted(stores.data):
        raw = stores.data[rel]
        if name not in raw:
            continue
        for m in rx.finditer(raw):
            line = raw.count(b"\n", 0, m.start()) + 1
            start = raw.rfind(b"\n", 0, m.start()) + 1
            before = raw[start:m.start()]
            if rel == path and line == f.lineno and before.rstrip().endswith(b"def"):
                continue
            inside = rel == path and cls.lineno <= line <= (cls.end_lineno or line)
            after = raw[m.end():m.end() + 40].lstrip()
            if inside and own.search(before) and after.startswith(b"("):
                continue                # self.fa(...) in its class: the flow follows it
            if _in_comment(raw, m.start()):
                continue
            return f"{rel}:{line}"
    return ""


def _returned_unfollowed(ret, stores=None, path: str = "") -> str:
    """A ``return`` the flow follows only where the function is called by name: not from a
    getter (``@property``, ``@cached_property``, any decorator that may change how the result
    is obtained) or a special method Python calls itself (``__get__``, ``__getattr__``,
    ``__enter__``...): reading an attribute or a ``with`` gives what it returns. "" when
    followed."""
    f = _parent_of(ret)          # the module's index: up past the statement being read
    while f is not None and not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda)):
        f = _parent_of(f)
    if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    if f.name.startswith("__") and f.name.endswith("__") and f.name != "__init__":
        # ``__call__`` too: ``A()()`` calls it without naming it
        return (f"is returned by {f.name}, which Python calls itself (an attribute read, a "
                "with, an iteration): where the result goes is not followed")
    for d in f.decorator_list:
        name = d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) \
            else None
        if _memoizes(d, f) and stores is not None and not stores.any_store() and \
                not stores.module_or_class(_decorator_attr(d)):
            # nothing in the tree sets ``functools.cache`` (or any attribute by a name it
            # does not spell)
            continue        # the cached call returns what the call returned: followed as one
        if name not in _PLAIN_DECORATORS:
            return (f"is returned by {f.name}, decorated with {ast.unparse(d)} (a property or "
                    "another decorator may hand the result out without a call): not followed")
    cls = _parent_of(f)
    if isinstance(cls, ast.ClassDef):
        # a method's return is followed where the class calls it on itself
        # (``self.fa()``); read off any other object (``A().fa()``, ``obj.fa``, a getattr by
        # its name) the call is not followed
        where = _method_read_elsewhere(stores, path, cls, f) if stores is not None else "?"
        if where:
            return (f"is returned by method {cls.name}.{f.name}, which is read off an object "
                    f"the flow does not follow ({where}): where the result goes is not "
                    "followed")
    return ""


def _module_use(sc, node, fn, solver, call_at, path, names=()) -> str:
    """A name bound to an FA4 module: attribute reads of entry points are judged like the
    functions they give; other uses must not hand the module on."""
    p = sc.parent(node)
    if isinstance(p, ast.Attribute):
        if isinstance(p.ctx, (ast.Store, ast.Del)):
            return (f"has its attribute {p.attr} set or deleted (FA4's own code, its resolver "
                    "or an entry point, may change)")
        if p.attr in B.FA4_ENTRIES:
            return _use(sc, p, fn, solver, call_at, path)
        if p.attr in ("interface", "cute"):
            # FA4's submodule read off its package: what is read off it in turn decides
            return _module_use(sc, p, fn, solver, call_at, path,
                               tuple(f"{m}.{p.attr}" for m in names)
                               or ("flash_attn.cute.interface",))
        if p.attr in _NAMESPACE_ATTRS:
            return f"has its namespace read through .{p.attr}"
        if not all(N.window_free(m, p.attr) for m in names or ("",)):
            return _fa4_other_use(sc, p)
        return ""
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "getattr" \
            and p.args and p.args[0] is node:
        if len(p.args) > 1 and isinstance(p.args[1], ast.Constant) and isinstance(p.args[1].value, str):
            attr = p.args[1].value
            if attr in B.FA4_ENTRIES:
                return "is read with getattr(...) (the entry point it gives is not followed)"
            if not all(N.window_free(m, attr) for m in names or ("",)):
                return _fa4_other_use(sc, p)
            return ""
        return "is read with getattr(...) by a computed name"
    if isinstance(p, (ast.Compare, ast.If, ast.Expr, ast.UnaryOp)):
        return ""
    if isinstance(p, ast.Assign) and all(isinstance(t, ast.Name) for t in p.targets):
        if p is sc.root and sc.cls is not None:
            # a class attribute (``class H: mod = fi``): ``H.mod.flash_attn_func`` and
            # ``self.mod...`` are not followed
            return "is stored as a class attribute"
        return ""
    return "(the module) is handed on where the pass does not follow it"
