"""Three-valued verdicts for FA4-reaching calls, one per audited release, each with a witness.

For a call, every FA4 value it can reach is a raw entry point seen through a chain of wrapping
layers (``FAFunc.chain``). Per release:

* the chain is **proved** by behaviour (``behaviour.Runner.verify_chains``): whatever the call
  passes, FA4 gets the intended band -> the call is proved by the chain;
* otherwise the pairs the call can pass are worked out (constants, conditionals, dict stores
  and merges, call-site expressions evaluated in the sandbox) and run through the chain and the
  release's resolver: a wrong band is **broken** (the pair and its path are the witness); a
  value the tree cannot bound, or a chain that cannot be run, leaves it **unknown**.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import itertools
import re
from dataclasses import dataclass

from analyzer.sites import behaviour as BH
from analyzer.sites.attrstores import _binds, _class_bindings, statement_bindings
from analyzer.sites import pairs as P
from analyzer.sites.astutil import value_leaves
from analyzer.sites.astutil import (index as astutil_index, indexed, parent as parent_of,
                                    walk)
from analyzer.sites.coverage import FROM_CALLER, site_line
from analyzer.sites.flow_base import Unloaded, _deco_names, expr_label
from analyzer.sites.flow_edges import _CACHING
from analyzer.sites.flow import (ClassRef, DictVal, FAFunc, FuncRef, container_escapes, fn_context,
                                 reaching_defs)
from analyzer.sites.ir import Attr, Call, Either, ListExpr, Lit, Name, Subscript
from analyzer.sites.model import CallVerdict
from fa4_patch import names as N

_ORDER = {"proved": 0, "unknown": 1, "broken": 2}


def worst(statuses) -> str:
    statuses = list(statuses)
    return max(statuses, key=_ORDER.__getitem__) if statuses else "proved"


@dataclass(frozen=True)
class WindowValues:
    """What a call can hand FA4: ``pairs`` (None when unbounded), ``unknown`` reasons,
    ``causal`` values and whether those are known."""

    pairs: frozenset
    unknown: tuple
    causal: tuple
    causal_known: bool
    via: tuple = ()
    forms: frozenset = frozenset()     # names of ``behaviour.FAMILIES``
    # pairs an expression over values the tree cannot bound can produce (evaluated for every
    # value those names can take): all right proves the call; a wrong one is only "unknown"
    open_pairs: frozenset = frozenset()
    # constant pairs with a side that is neither None nor an int (``-1.0``, ``True``): outside
    # the domain a wrapper is proved on, so a proved wrapper does not cover them
    outside: tuple = ()
    # (pair in, pair out, open) of a call-site expression that only turns sides of one
    # window into None (``(norm(w[0]), norm(w[1]))``): judged against what the input meant
    mapped: frozenset = frozenset()
    # keyword arguments the call passes besides the window and causal (their names): a
    # wrapper that reads one of them may do what its runs (which do not pass them) never did
    extra_keywords: frozenset = frozenset()
    # what a proved wrapper's runs do not cover at this call (positional arguments the
    # wrapper's own signature may bind to the window)
    chain_gaps: tuple = ()
    # sides the tree itself computes and the flow cannot bound (``sw - 1``, ``~n``, ``-(1 <<
    # 31)``, ``w * scale``, a bare int where a pair goes): the convention on values from
    # outside (None, ints >= -1, pairs) says nothing about them, so a wrapper proved on it
    # proves nothing here
    beyond: tuple = ()


class Judge:
    def __init__(self, index, resolvers, params=None):
        self.index = index
        self.resolvers = list(resolvers)
        self.runner = BH.Runner(self.resolvers)
        self.params = params or {}          # entry -> (param names, required count)
        self._layers: dict = {}
        self._chain: dict = {}
        self._shapes: dict = {}         # (chain, entry) -> shapes of the calls through it
        self._chain_shapes: dict = {}   # (chain, entry) -> the shapes its result was run with
        self._reads: dict = {}
        self._ext_n = 0
        self._ext_keys: dict = {}
        self.forms_used: dict = {}      # (chain, entry) -> call forms the tree's calls use
        self._frames: str | None = None

    # -- frames ------------------------------------------------------------------------
    def frame_hazard(self) -> str:
        """Where the tree reaches local variables behind the flow's back (``frame_hazards``),
        as a reason every FA4 call carries; "" when nowhere."""
        if self._frames is None:
            where = self._frame_list = frame_hazards(self.index)
            self._frames = "" if not where else (
                f"the tree changes or hands on local variables through "
                f"{where[0][2]} ({where[0][0]}:{where[0][1]}"
                + (f" and {len(where) - 1} more" if len(where) > 1 else "")
                + "): the windows and dicts a call passes may change where the flow does "
                "not look")
        return self._frames

    # -- signatures ----------------------------------------------------------------------
    def signature(self, entry: str) -> tuple[tuple[str, ...], int]:
        if entry in self.params:
            return self.params[entry]
        return N.PARAMS_B36[entry], N.REQUIRED_B36[entry]

    # -- extraction ----------------------------------------------------------------------
    def top_bindings(self):
        """How the tree's modules bind their module-level names (``reach.TopBindings``)."""
        tb = self.__dict__.get("_top_bindings")
        if tb is None:
            from analyzer.sites.reach import TopBindings
            tb = self._top_bindings = TopBindings(self.index)
        return tb

    def tree_window_sentinels(self) -> frozenset:
        """The ints below -1 the tree writes where a window goes: the value of a keyword
        argument, a parameter default or a binding whose name says ``window``
        (``window_size=(-2, 0)``, ``window=(INT32_MIN, 0)``, ``NO_WINDOW = -(2 ** 31)``),
        and ``-2`` for a negative infinity written there. Read once per tree."""
        got = self.__dict__.get("_sentinels")
        if got is None:
            got = self._sentinels = frozenset(_window_sentinels(self.index))
        return got

    def module_for(self, modname: str, roots, extra=()) -> str:
        """The sandbox module of what ``roots`` need in ``modname``, plus ``extra`` sources
        (a method run as a module-level function)."""
        key = (modname, frozenset(roots), tuple(extra))
        if key in self._ext_keys:
            return self._ext_keys[key]
        self._ext_n += 1
        name = f"m{self._ext_n}"
        srcs, opaque, refused = BH.extract(self.index, modname, sorted(roots))
        srcs = list(srcs) + list(extra)
        if not refused:
            for s in srcs:
                try:
                    BH.check(s)
                except BH.Refused as exc:
                    refused = str(exc)
                    break
        if not refused:
            refused = self._state_changed_elsewhere(modname, srcs)
        self.runner.modules[name] = BH.ExtractedModule(name, srcs, list(opaque), refused,
                                                       real_name=modname)
        self._ext_keys[key] = name
        return name

    def _state_changed_elsewhere(self, modname: str, srcs) -> str:
        """A container the extracted code makes at its top level (``_CFG = {...}``, a list, a
        tuple of lists, a class whose body keeps one, an object a call makes) that the tree
        may change after the module's own statements, which are all the sandbox runs: named
        in its own module or another file where it may change (``Registry.windows.update``,
        ``REG["a"]["local"] = ...``, ``inner = WIN[0]``, ``fill(REG["a"])``: a mutating method
        or a store through any chain, an alias, a call's argument), or a module that runs
        ``exec``. "" when none."""
        from analyzer.sites.detached import changed_elsewhere, mutating_chain, object_changed

        info = self.index.modules.get(modname)
        if info is not None and _RUNS_EXEC.search(info.raw):
            return f"{info.path} runs exec: its names may hold other values"

        def mutable(v) -> bool:
            return v is not None and any(
                isinstance(x, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp,
                               ast.SetComp))
                or isinstance(x, ast.Call) and _callee_name(x) in _MUTABLE_MAKERS
                for x in ast.walk(v))

        def made(v) -> bool:
            # an object a call makes (an instance of a class of the tree, a weak proxy, a
            # partial): what its methods read may be changed through it
            return v is not None and any(isinstance(x, ast.Call) and _callee_name(x) not in
                                         _IMMUTABLE_MAKERS for x in ast.walk(v))

        kept, objects = set(), set()
        trees = []
        for src in srcs:
            try:
                trees.append(BH._syntax(src)[0])
            except ValueError:
                trees.append(None)
        for tree in trees:
            if tree is None:
                continue
            for st in tree.body:
                if isinstance(st, (ast.Assign, ast.AnnAssign)) and mutable(st.value):
                    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                    kept |= {t.id for t in targets if isinstance(t, ast.Name)}
                elif isinstance(st, (ast.Assign, ast.AnnAssign)) and made(st.value):
                    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                    objects |= {t.id for t in targets if isinstance(t, ast.Name)}
                elif isinstance(st, ast.ClassDef):
                    if any(isinstance(b, (ast.Assign, ast.AnnAssign)) and mutable(b.value)
                           for b in st.body):
                        kept.add(st.name)
                    # a class: its attributes, methods and members (an Enum's ``_value_``)
                    # may be set through it, its instances or a hook it runs
                    objects.add(st.name)
                elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        st.decorator_list:
                    objects.add(st.name)    # what a decorator made (``singledispatch``)
        for tree in (t for t in trees if t is not None):
            for lam in (x for x in ast.walk(tree) if isinstance(x, ast.Lambda)):
                if any(isinstance(x, ast.Name) and x.id in kept for x in ast.walk(lam.body)):
                    return ("a lambda hands out a container its module keeps: a caller may "
                            "change it through the result")
            for fdef in (x for x in ast.walk(tree)
                         if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef))):
                rets = [r.value for r in ast.walk(fdef)
                        if isinstance(r, (ast.Return, ast.Yield, ast.YieldFrom)) and r.value]
                if any(isinstance(x, ast.Name) and x.id in kept
                       for r in rets for x in ([r] if isinstance(r, ast.Name) else
                                               ast.walk(r) if isinstance(r, (ast.Tuple, ast.List))
                                               else [])):
                    return (f"{fdef.name} hands out a container its module keeps: a caller may "
                            "change it through the result")
                names = {(d.func if isinstance(d, ast.Call) else d) for d in fdef.decorator_list}
                if any((n.id if isinstance(n, ast.Name) else getattr(n, "attr", "")) in _CACHING
                       for n in names) and any(mutable(r) or isinstance(r, ast.Name)
                                               for r in rets):
                    return (f"{fdef.name} is cached: every caller gets the one object it "
                            "returned first, and may change it")
        if not kept and not objects:
            return ""
        files = {rel: other.raw for rel, other in self.index.by_path.items()}
        for name in sorted(kept):
            rel = changed_elsewhere(files, None, name, mutating_chain)  # its own file too
            if rel:
                return (f"{name}, kept at the top of its module, is named in {rel} where it "
                        "may change after the module's statements ran")
        # the code the sandbox runs (the extracted statements of this module) is no "elsewhere"
        skip: dict = {}
        reads: set | None = set()
        if None in trees:
            reads = None
        else:
            for tree in trees:
                for x in ast.walk(tree):
                    if isinstance(x, ast.Attribute):
                        reads.add(x.attr)
                    elif isinstance(x, ast.Constant) and isinstance(x.value, str):
                        reads.add(x.value)
        if info is not None and info.tree is not None:
            text = info.raw.decode("utf-8", "replace")
            joined = "\n".join(srcs)
            for st in BH.module_statements(info.tree):
                seg = ast.get_source_segment(text, st)
                if seg and seg.strip() and seg.strip().splitlines()[-1].strip() in joined \
                        and seg.strip().splitlines()[0].strip() in joined:
                    lo = min([st.lineno] + [d.lineno for d in
                                            getattr(st, "decorator_list", ())])
                    skip.setdefault(info.path, set()).update(range(lo, st.end_lineno + 1))
        for name in sorted(objects - kept):
            rel = changed_elsewhere(files, None, name,
                                    lambda raw, i, n: object_changed(raw, i, n, reads), skip)
            if rel:
                return (f"{name}, an object its module makes, is named in {rel} where it may "
                        "be changed (an attribute stored, a method called, handed to a call or "
                        "another name) after the module's statements ran")
        return ""

    def _outside_callee(self, path: str, func) -> str | None:
        """The dotted name a wrapping call's callee has outside the tree
        (``torch._dynamo.disable`` for ``dyn.disable`` after ``import torch._dynamo as
        dyn``), or None when it is the tree's own (or not a plain name)."""
        from analyzer.sites.reach import _dotted

        dotted = _dotted(func.func if isinstance(func, ast.Call) else func)  # ``deco(...)(fa4)``
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        info = self.index.by_path.get(path)
        if info is None or info.tree is None:
            return None
        base = None
        for n in walk(info.tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    n.name == root:
                return None
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.asname == root:
                        base = a.name
                    elif a.asname is None and a.name.split(".")[0] == root:
                        base = root
            elif isinstance(n, ast.ImportFrom) and not n.level:
                for a in n.names:
                    if (a.asname or a.name) == root:
                        base = f"{n.module}.{a.name}"
        if base is None:
            return None
        top = base.split(".")[0]
        if any(m == top or m.startswith(top + ".") for m in self.index.modules):
            return None         # an in-tree package: its code is extracted and read
        return f"{base}.{rest}" if rest else base

    def _call_node(self, path: str, line: int, col: int) -> tuple[ast.Call | None, str]:
        info = self.index.by_path.get(path)
        if info is None or info.tree is None:
            return None, ""
        calls = info.calls_at()
        node = calls.get((line, col))
        if node is not None and node.args and not isinstance(node.args[0], ast.Starred):
            return node, info.name
        best = next((n for (ln, _), n in sorted(calls.items(), key=lambda x: x[0])
                     if ln == line and n.args and not isinstance(n.args[0], ast.Starred)), None)
        return best, info.name

    def chain_reads(self, v) -> set:
        """The names a chain's code may read an argument by: its functions' parameter names
        and its string constants (``kw.get("te_mode")``); every name when its code does not
        parse. An opaque layer is judged as passing everything through (the chain's note);
        fa4_patch's own wrapper reads only the window."""
        key = v.chain
        if key in self._reads:
            return self._reads[key]
        out: set = set()
        for w in v.chain:
            lay = self.layer(w)
            if lay.trusted_fa4_patch:
                continue
            if lay.opaque or not lay.module:
                continue        # judged as passing everything through (see the chain's note)
            for src in self.runner.modules[lay.module].sources:
                tree = BH._syntax(src)[0]
                if tree is None:
                    out.add(_ANY_NAME)
                    continue
                for n in ast.walk(tree):
                    if isinstance(n, ast.Constant) and isinstance(n.value, str):
                        out.add(n.value)
                    elif isinstance(n, ast.arg):
                        out.add(n.arg)
        self._reads[key] = out
        return out

    def layer(self, w) -> BH.Layer:
        if w in self._layers:
            return self._layers[w]
        if w.kind == "fa4_patch":
            lay = BH.Layer(w.label, template="fa4_patch.wrap(X)", trusted_fa4_patch=True)
            self._layers[w] = lay
            return lay
        node, modname = (self._call_node(*w.at) if w.at else (None, ""))
        if node is None:
            lay = BH.Layer(w.label, opaque="its wrapping call was not found", names_window=True)
        else:
            # the wrapping call as written, the FA4 value (its first positional argument, or
            # the one ``w.arg`` marks: ``partial(helper, fa4)``) replaced
            at = getattr(w, "arg", 0)
            others = list(node.args[:at]) + list(node.args[at + 1:])
            rest = ast.Call(func=node.func, args=list(node.args[:at])
                            + [ast.Name("__fa4_inner__", ast.Load())] + list(node.args[at + 1:]),
                            keywords=list(node.keywords))
            template = ast.unparse(rest)
            roots = BH.free_names(node.func)
            for a in others + [k.value for k in node.keywords]:
                roots |= BH.free_names(a)
            mod = self.module_for(modname, roots)
            ext = self.runner.modules[mod]
            text = "\n".join(ext.sources)
            names_window = BH.names_window(text) or BH.names_window(template)
            outside = self._outside_callee(w.at[0], node.func)
            if outside is not None and outside not in _PASS_THROUGH:
                # the wrapping callable comes from outside the tree: there is no code to read,
                # so nothing shows it hands the window on as it got it
                names_window = True
            if ext.refused:
                lay = BH.Layer(w.label, opaque=ext.refused, names_window=names_window)
            else:
                lay = BH.Layer(w.label, module=mod, template=template,
                               names_window=names_window)
        self._layers[w] = lay
        return lay

    # -- chains --------------------------------------------------------------------------
    def chains(self, values) -> None:
        """Verify the chains of all these FAFunc values in one batch."""
        todo = []
        for v in values:
            if v.entry.version != "fa4" or v.entry.name not in N.WINDOW_ENTRIES:
                continue
            key = (v.chain, v.entry.name)
            shapes = self._shapes.get(key, frozenset())
            if (key in self._chain and self._chain_shapes.get(key) == shapes) \
                    or key in [t[0] for t in todo]:
                continue
            layers = tuple(self.layer(w) for w in v.chain)
            params, req = self.signature(v.entry.name)
            run_as = tuple(sorted(shapes - {_SEQUENCES}, key=repr))[:MAX_SHAPES] + \
                _outside_shapes(tuple(params), req)
            todo.append((key, (layers, v.entry.name, tuple(params), req, run_as,
                               _SEQUENCES in shapes)))
        if not todo:
            return
        results = self.runner.verify_chains([t[1] for t in todo])
        for (key, item), r in zip(todo, results):
            why = self._state_set_elsewhere(item[0])
            if why:
                r = _not_proved(r, why)
            shapes = self._shapes.get(key, frozenset())
            if len(shapes - {_SEQUENCES}) > MAX_SHAPES:
                r = _not_proved(r, f"more than {MAX_SHAPES} differently shaped calls go "
                                   "through it (each is run; the rest were not)")
            self._chain[key] = r
            self._chain_shapes[key] = shapes

    def _state_set_elsewhere(self, layers) -> str:
        """Why a class-based layer's behaviour may change after its runs: a method reads an
        attribute of its instance (``self.normalize``) that code other than the class's own
        methods may set (``Normalized.normalize = False``, ``fa.normalize = False``,
        ``setattr(fa, name, ...)`` elsewhere: ``attrstores.StoreIndex.foreign``)."""
        stores = getattr(self, "attr_stores", None)
        if stores is None:
            return ""
        for layer in layers:
            if not layer.module or layer.trusted_fa4_patch or \
                    layer.module not in self.runner.modules:
                continue
            for src in self.runner.modules[layer.module].sources:
                for cls, attr in sorted(BH.instance_reads(src)):
                    where = stores.foreign(cls, attr)
                    if where:
                        return (f"{layer.label} reads self.{attr}, which code other than "
                                f"{cls}'s own methods may set ({where})")
        return ""

    def add_shape(self, v, call, sequences: bool = False) -> None:
        """Record how one call of the tree passes its other arguments to ``v`` (``call_shape``):
        the chain is run shaped like it too (a wrapper may branch on them). ``sequences``: the
        call's window is built by a call the flow cannot type, so the chain is also run with
        ``window_size`` as other sequences (``behaviour.KEYWORD_ANY``)."""
        shape = call_shape(call)
        if v.chain and (shape is not None or sequences):
            self._shapes.setdefault((v.chain, v.entry.name), frozenset())
            self._shapes[(v.chain, v.entry.name)] |= {shape} if shape is not None else set()
            if sequences:
                self._shapes[(v.chain, v.entry.name)] |= {_SEQUENCES}

    def chain(self, v) -> BH.ChainResult:
        key = (v.chain, v.entry.name)
        if key not in self._chain or self._chain_shapes.get(key) != self._shapes.get(key, frozenset()):
            self.chains([v])
        res = self._chain.get(key) or BH.ChainResult("unknown", "not an entry point with a window")
        tamper = self.namespace_hazard()
        if tamper:
            # the sandbox runs the wrapper with its module's statements and clean builtins: a
            # namespace changed elsewhere is not what it saw (no form of it is a proof)
            res = _not_proved(res, tamper)
        return res

    def namespace_hazard(self) -> str:
        """Where the tree writes a module's namespace or a builtin behind its statements'
        back (``_namespace_write``, found by ``frame_hazards``); "" when nowhere."""
        if self._frames is None:
            self.frame_hazard()
        hits = [w for w in self._frame_list
                if w[2].startswith(("a module's", "a builtin", "a module namespace"))]
        return "" if not hits else f"{hits[0][2]} at {hits[0][0]}:{hits[0][1]}"

    def normalised(self, v) -> bool:
        return bool(v.chain) and self.chain(v).status == "proved"

    def forwarder(self, c) -> BH.ChainResult | None:
        """A call inside a decorated module-level function, whose windows arrive through that
        function's parameters: the decorated function is itself the wrapper around FA4. It is
        run in the sandbox with the FA4 name it calls bound to the recording stand-in."""
        fn = c["fn"]
        if fn.ir is None:
            return self._lambda_forwarder(c)
        if not fn.ir.decorators or "." in fn.qualname or fn.cls is not None:
            return None
        func = c["call"].func
        entry = _one_raw_entry(c)
        if not isinstance(func, Name) or func.id in fn.defs or entry is None:
            return None
        info = self.index.by_path.get(fn.mod.path)
        if info is None:
            return None
        return self._run_forwarder(f"@decorated {fn.name}", info.name, fn.name, func.id, entry,
                                   own=_own_signature(fn))

    def _lambda_forwarder(self, c) -> BH.ChainResult | None:
        """A call of FA4 in a module-level lambda bound to one name (``fa = lambda *a, **kw:
        flash_attn_func(*a, **norm(kw))``): the lambda is the wrapper. It is run in the
        sandbox like a decorated forwarder, under the name it is bound to."""
        fn = c["fn"]
        func = c["call"].func
        entry = _one_raw_entry(c)
        if not isinstance(func, Name) or entry is None:
            return None
        node, _mod = self._call_node(fn.mod.path, c["call"].pos[0], c["call"].pos[1])
        info = self.index.by_path.get(fn.mod.path)
        if node is None or info is None or info.tree is None:
            return None
        lam = parent_of(node)
        while lam is not None and not isinstance(lam, (ast.Lambda, ast.stmt)):
            lam = parent_of(lam)
        stmt = parent_of(lam) if isinstance(lam, ast.Lambda) else None
        if not (isinstance(stmt, ast.Assign) and stmt.value is lam and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt in info.tree.body):
            return None
        if func.id in {a.arg for a in ast.walk(lam.args) if isinstance(a, ast.arg)}:
            return None                 # FA4 is the lambda's own parameter
        name = stmt.targets[0].id
        return self._run_forwarder(f"lambda {name}", info.name, name, func.id, entry)

    def _run_forwarder(self, label: str, modname: str, name: str, bind: str,
                       entry: str, own=None) -> BH.ChainResult:
        """Run the module-level ``name`` of ``modname`` as a wrapper around FA4's ``entry``
        (the FA4 name it calls, ``bind``, is the recording stand-in). ``own``: the decorated
        function's own (parameters, leading required count) when it names a window parameter:
        its callers pass the window where its signature takes it, not where FA4's does."""
        mod = self.module_for(modname, {name})
        ext = self.runner.modules[mod]
        if ext.refused:
            return BH.ChainResult("unknown", f"{label}: cannot run its code: {ext.refused}")
        layer = BH.Layer(label, module=mod, template=name, bind=bind, names_window=True)
        params, req = own if own is not None else self.signature(entry)
        res = self.runner.verify_chains([((layer,), entry, tuple(params), req)])[0]
        return self._keyword_uses_only(res, name, req)

    def _keyword_uses_only(self, res, name: str, req: int):
        """A forwarder that is right for keyword windows only is proved where every use of
        its name in the tree is a call passing at most FA4's required arguments by position
        and no ``*``/``**`` splat (so every window it gets is a keyword): found in the text
        of every file, each occurrence read off its syntax tree. Any other use (an import
        under another name, the name handed on, stored, called with more positionals)
        keeps the judgement over every form."""
        kw = res.families.get("keyword") if getattr(res, "families", None) else None
        if res.status == "proved" or kw is None or kw.status != "proved":
            return res
        needle = name.encode()
        uses = 0
        for path in sorted(self.index.by_path):
            info = self.index.by_path[path]
            raw = info.source.encode() if isinstance(info.source, str) else info.source
            if needle not in raw:
                continue
            if info.tree is None:
                return res
            for n in ast.walk(info.tree):
                hit = (isinstance(n, ast.Name) and n.id == name) or \
                    (isinstance(n, ast.Attribute) and n.attr == name) or \
                    (isinstance(n, ast.alias) and name in (n.name, n.asname)) or \
                    (isinstance(n, ast.Constant) and n.value == name)
                if not hit:
                    continue
                p = parent_of(n)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    continue            # the binding itself
                if isinstance(n, ast.alias) and (n.asname in (None, name)):
                    continue            # ``from m import fa``: its calls are read where made
                if isinstance(p, ast.Call) and p.func is n and len(p.args) <= req and \
                        not any(isinstance(a, ast.Starred) for a in p.args) and \
                        all(k.arg is not None for k in p.keywords):
                    uses += 1
                    continue
                return res
        if not uses:
            return res
        return BH.ChainResult("proved", f"{kw.witness} (every use of {name} in the tree passes "
                              f"its window by keyword: {uses} call(s))", "", kw.per_release,
                              kw.table, {"keyword": kw}, alters=kw.alters)

    def inside_proved_wrapper(self, fn) -> str | None:
        key = (fn.key if fn is not None else None, len(self._chain))
        memo = self.__dict__.setdefault("_inside_memo", {})
        if key not in memo:
            memo[key] = self._inside_proved_wrapper(fn)
        return memo[key]

    def _inside_proved_wrapper(self, fn) -> str | None:
        """``fn`` (or a function it is nested in) is the code of a wrapping layer whose chain
        was proved: its FA4 call is the wrapper's own forwarding call, already run and checked
        in the sandbox."""
        top = fn.qualname.split(".")[0] if fn is not None and fn.ir is not None else None
        if top is None:
            return None
        info = self.index.by_path.get(fn.mod.path)
        if info is None or info.tree is None:
            return None
        node = next((n for n in info.tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                     and n.name == top), None)
        if node is None:
            return None
        body = BH._dedent(info.segment(node), node.col_offset).strip()
        if not body:
            return None
        for (chain, entry), r in self._chain.items():
            for w in chain:
                lay = self._layers.get(w)
                if lay is None or not lay.module:
                    continue
                ext = self.runner.modules[lay.module]
                if any(body in src for src in ext.sources):
                    return (f"{top}: the wrapper's own call of FA4, run in the sandbox as part "
                            f"of {w.label}; the calls through the wrapper carry the verdict")
        return None

    def prefills(self, chain) -> "Prefills | None":
        """For a chain whose outer layers are ``functools.partial`` calls binding keywords
        only: the chain inside them and, for the ``causal`` and window keywords they bind
        (outer partials over inner ones), every value each may hold -- or why that cannot be
        bounded (a ``**`` splat, an expression, a name the tree may bind otherwise). None for
        any other chain."""
        k = len(chain or ())
        while k and chain[k - 1].kind == "partial" and chain[k - 1].at:
            k -= 1
        if not chain or k == len(chain):
            return None
        out: dict = {}
        for w in chain[k:]:                     # innermost first: outer ones override
            got = self._partial_keywords(w)
            if isinstance(got, str):
                return Prefills(tuple(chain[:k]), {}, f"{w.label} ({w.at[0]}:{w.at[1]}) {got}")
            out.update(got)
        return Prefills(tuple(chain[:k]), out)

    def _partial_keywords(self, w) -> dict | str:
        """{keyword: frozenset of values} for the ``causal`` and window keywords one
        ``functools.partial`` call binds, or why they cannot be bounded."""
        node, _ = self._call_node(*w.at)
        if node is None:
            return "cannot be read"
        out: dict = {}
        for kw in node.keywords:
            if kw.arg is None:
                return "binds keywords by a ** splat"
            if kw.arg != "causal" and kw.arg not in N.WINDOW_KEYS:
                continue
            got = self._constant_values(w.at[0], kw.value, node)
            if isinstance(got, str):
                return f"binds {kw.arg}={ast.unparse(kw.value)}: {got}"
            if kw.arg == "window_size":
                pairs = set()
                for x in got:
                    if isinstance(x, (tuple, list)) and len(x) == 2:
                        pairs.add(tuple(x))
                    elif x is None:
                        pairs.add((None, None))
                    else:
                        pairs.add(x)            # not a pair: judged as it is (not ints)
                got = frozenset(pairs)
            out[kw.arg] = got
        return out

    def _constant_values(self, path: str, node, call) -> frozenset | str:
        """Every value an expression made of literals and module-level names can have, read
        where ``call`` (a node of the module at ``path``) stands; or why not. A name counts
        when ``call`` is at the top level of the module (not in a function, lambda or
        comprehension, where the name may be its own) and the module binds it once, by a
        literal assignment before the call (or imports it from a module of the tree that
        does), and nothing else may change it (``_module_constant``)."""
        try:
            return frozenset({BH._freeze(ast.literal_eval(node))})
        except (ValueError, SyntaxError, TypeError):
            pass
        info = self.index.by_path.get(path)
        if info is None or info.tree is None or _in_a_scope(info.tree, call):
            return "an expression inside a function"
        line = call.lineno
        names = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)})
        if not names or any(not isinstance(n, (ast.Name, ast.Constant, ast.Tuple, ast.List,
                                               ast.UnaryOp, ast.USub, ast.Load, ast.expr_context))
                            for n in ast.walk(node)):
            return "not a literal or a name bound to one"
        subst = {}
        for name in names:
            got = self._module_constant(path, name, line, 0)
            if isinstance(got, str):
                return got
            subst[name] = got

        class Swap(ast.NodeTransformer):
            def visit_Name(self_, n):
                return ast.copy_location(subst[n.id], n)

        try:
            tree = Swap().visit(ast.Expression(body=copy.deepcopy(node)))
            return frozenset({BH._freeze(ast.literal_eval(tree))})
        except (ValueError, SyntaxError, TypeError):
            return "not a literal or a name bound to one"

    def _module_constant(self, path: str, name: str, line: int | None, depth: int):
        """The literal (an ``ast`` node) the top level of the module at ``path`` binds
        ``name`` to, read at ``line`` (None: after the module ran): bound once in the whole
        module, by a one-target assignment (before ``line``) or a ``from`` import of a module
        of the tree that binds it so; never declared ``global``, never named by another file
        except to read it, no namespace written behind the statements' back. Else why not."""
        key = (path, name, line, depth)
        memo = self.__dict__.setdefault("_module_constants", {})
        if key not in memo:
            memo[key] = self._module_constant_uncached(path, name, line, depth)
        return memo[key]

    def _module_constant_uncached(self, path: str, name: str, line: int | None, depth: int):
        from analyzer.sites.detached import changed_elsewhere
        from analyzer.sites.modvalues import bindings, imported_from

        info = self.index.by_path.get(path)
        tree = info.bare_tree if info is not None else None
        if depth > 4 or tree is None:
            return f"{name} cannot be followed"
        found, declared = bindings(tree, name)
        if declared:
            return f"{name} is declared global in a function of {path}"
        if any(isinstance(st, ast.ImportFrom) and any(a.name == "*" for a in st.names)
               for st in found):
            return f"{path} star-imports names that may bind {name}"
        if len(found) != 1:
            return f"{name} is bound {len(found)} times in {path}"
        st = found[0]
        hazard = self.namespace_hazard() or (self.attr_stores.any_store()
                                             if getattr(self, "attr_stores", None) else
                                             "the tree's text is not available")
        if hazard:
            return f"{name} may be changed through a namespace ({hazard})"
        files = {p: i.raw for p, i in self.index.by_path.items()}
        other = changed_elsewhere(files, None, name, _rebinds_attribute) or \
            _named_in_text(files, name)
        if other:
            return f"{name} is named in {other}, which may change it"
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name) and (line is None or st.lineno < line):
            try:
                value = ast.literal_eval(st.value)
            except (ValueError, SyntaxError, TypeError):
                return f"{name} is bound to an expression ({path}:{st.lineno})"
            if not _immutable(value):
                # a list or dict may be changed in place wherever it is reached
                return f"{name} is bound to a container that may change ({path}:{st.lineno})"
            return st.value
        if isinstance(st, ast.ImportFrom) and (line is None or st.lineno < line):
            src = imported_from(self.index, info, st, name)
            if src is None:
                return f"{name} comes from outside the tree ({st.module})"
            return self._module_constant(src[0].path, src[1], None, depth + 1)
        return f"{name} is not bound to a literal before it is read ({path}:{st.lineno})"

    # -- calls ---------------------------------------------------------------------------
    def call_verdicts(self, fa4_values, wv: WindowValues, chain_pairs=None
                      ) -> tuple[str, tuple[CallVerdict, ...]]:
        """Per release: the worst over the FA4 values the call can reach."""
        out = []
        for res in self.resolvers:
            statuses = []
            witnesses = []
            pairs_out: list[str] = []
            for v in fa4_values:
                ch = self.chain(v).for_forms(wv.forms)
                per = {r: (s, w) for r, s, w in ch.per_release}
                st, wit = per.get(res.label, (ch.status, ch.witness))
                if v.chain and st == "proved":
                    # what the call hands the wrapper may already mean another band than
                    # what it was given (``0 if l < 0 else l``): the wrapper keeps that band
                    mj = _judge_mapped(res, wv, through_chain=True) if wv.mapped else None
                    if mj is not None:
                        statuses.append(mj[0])
                        witnesses.append(f"{v.entry.name}: {mj[1]}")
                        continue
                    gap = self._proof_gap(v, ch, wv)
                    statuses.append("unknown" if gap else "proved")
                    witnesses.append(f"{v.entry.name}: {gap}" if gap
                                     else f"{v.entry.name} through {ch.witness}")
                    continue
                # judge the call's own pairs through this value: bounded pairs first (a
                # wrong one is broken), then pairs over unbounded values (wrong: unknown)
                if wv.pairs:
                    if v.chain:
                        j = self._through_chain(v, res, wv, wv.pairs)
                    else:
                        j = P.judge_pairs(res, wv.pairs, wv.causal, wv.causal_known)
                    written = getattr(self.index, "fa4_written", "") if not v.chain else ""
                    if j.status == "broken" and written:
                        # FA4's own name may hold what the tree stored in its place
                        statuses.append("unknown")
                        witnesses.append(f"{v.entry.name}: the tree replaces names of FA4's "
                                         f"modules ({written}): which function this call "
                                         f"reaches depends on the import order; the raw one: "
                                         f"{j.witness}")
                        continue
                    if j.status == "broken":
                        statuses.append("broken")
                        chain_note = (f" through {' -> '.join(w.label for w in reversed(v.chain))}"
                                      if v.chain else " unnormalised")
                        witnesses.append(f"{v.entry.name}{chain_note}: {j.witness}")
                        pairs_out.extend(j.pairs)
                        continue
                    if j.status == "unknown":
                        statuses.append("unknown")
                        witnesses.append(f"{v.entry.name}: {j.witness}")
                        continue
                mj = _judge_mapped(res, wv, through_chain=bool(v.chain)) if wv.mapped \
                    else None
                if mj is not None:
                    statuses.append(mj[0])
                    witnesses.append(f"{v.entry.name}: {mj[1]}")
                    continue
                if wv.open_pairs:
                    oj = (self._through_chain(v, res, wv, wv.open_pairs) if v.chain else
                          P.judge_pairs(res, wv.open_pairs, wv.causal, wv.causal_known))
                    if oj.status != "proved":
                        statuses.append("unknown")
                        witnesses.append(f"{v.entry.name}: a window the tree cannot bound may "
                                         f"be wrong: {oj.witness}")
                        continue
                if wv.unknown:
                    statuses.append("unknown")
                    why = "; ".join(wv.unknown[:3]) + (f"; and {len(wv.unknown) - 3} more"
                                                        if len(wv.unknown) > 3 else "")
                    extra = ""
                    if v.chain and st != "proved" and self.chain(v).alters:
                        extra = f" (its wrapper is not proved: {wit})"
                    witnesses.append(f"{v.entry.name}: cannot bound what it passes: {why}{extra}")
                    continue
                statuses.append("proved")
                shown = ", ".join(sorted(P.fmt_pair(*p) for p in wv.pairs)) or "no window (FA4's default)"
                if wv.open_pairs:
                    shown += f"; {len(wv.open_pairs)} pairs from expressions over unbounded values"
                witnesses.append(f"{v.entry.name}: every pair it can pass gives the intended "
                                 f"band ({shown}; causal {'/'.join(str(c) for c in wv.causal)})")
            st = worst(statuses)
            wit = next((w for s, w in zip(statuses, witnesses) if s == st), "")
            out.append(CallVerdict(res.label, st, wit, tuple(dict.fromkeys(pairs_out))))
        return worst(v.status for v in out), tuple(out)

    def _proof_gap(self, v, ch, wv: WindowValues) -> str:
        """Why a chain proved for the forms a call uses still proves nothing for this call
        ("" when it does): a bound outside the proof's domain, positional arguments the
        wrapper's own signature may bind to the window, a keyword the wrapper reads that its
        runs never passed."""
        label = ch.witness.split(" checked on")[0]
        if wv.outside:
            return (f"the call passes {wv.outside[0]}, a bound outside what {label} was "
                    "proved on (None and integers)")
        if wv.chain_gaps:
            return f"not proved by {label} for this call: {wv.chain_gaps[0]}"
        if wv.beyond:
            return (f"the call passes {wv.beyond[0]}, a value the tree computes and the flow "
                    f"cannot bound: {label} was proved on None and integers >= -1 in pairs "
                    "(the convention on values from outside), which says nothing about it")
        if wv.extra_keywords:
            reads = self.chain_reads(v)
            read = set(wv.extra_keywords) if _ANY_NAME in reads else reads & wv.extra_keywords
            if read:
                return (f"the call passes {', '.join(sorted(read))}, which {label} reads, and "
                        "its runs did not pass it (not a proof for this call)")
        return ""

    def _through_chain(self, v, res, wv: WindowValues, pairs) -> P.PairJudgement:
        """A chain that is not proved for every input: run the call's own pairs through it
        (the grid always holds every bound the tree's calls pass)."""
        ch = self.chain(v)
        broken, maybe = [], []
        for L, R in sorted(pairs, key=lambda p: (str(p[0]), str(p[1]))):
            for c in wv.causal:
                rows = ch.table.get((L, R, c))
                if rows is None:
                    maybe.append(f"causal={c} {P.fmt_pair(L, R)}: the wrapper could not be run "
                                 f"on it ({ch.witness})")
                    continue
                matched = [r for r in rows if _form_matches(r[0], wv.forms)]
                if not matched:
                    maybe.append(f"causal={c} {P.fmt_pair(L, R)}: the wrapper was not run in "
                                 f"the form the call uses ({', '.join(sorted(wv.forms))})")
                    continue
                for form, got, err in matched:
                    if got is None:
                        (maybe if err.startswith("unknown") else broken).append(
                            f"causal={c} {form} with {P.fmt_pair(L, R)}: {err}")
                        continue
                    verdict, label = P.judge(res, got[2], got[0], got[1], c, L, R)
                    if verdict != "exact":
                        msg = (f"causal={c} {P.fmt_pair(L, R)} through the wrapper ({form}): FA4 "
                               f"receives {P.fmt_pair(got[0], got[1])} -> {label} ({verdict})")
                        if wv.causal_known or all(
                                P.judge(res, cc, got[0], got[1], cc, L, R)[0] != "exact"
                                for cc in (True, False)):
                            broken.append(msg)
                        else:
                            maybe.append(msg + f" if the call passes causal={c}")
        if broken:
            return P.PairJudgement("broken", broken[0], tuple(broken))
        if maybe:
            return P.PairJudgement("unknown", maybe[0], tuple(maybe))
        return P.PairJudgement("proved", "every pair it passes reaches FA4 as intended")


def _normalising_map(r, local, is_open, src: str = "", where: str = "window_size",
                     side_of: dict | None = None):
    """(input, output, open) for each run of a window expression that hands FA4 other values
    than it was given, judged input against output (``_judge_mapped``): a side spelled None,
    and equally a side changed to another number (``max(x, 0)`` turns -1 into 0, a swap turns
    (4, 0) into (0, 4)): the band must be the one the input means. ``local`` maps the names the
    expression reads to their values or domain; ``where`` is "window_size" (the expression is
    a pair) or "left"/"right" (it is one side; inputs and outputs are then 1-tuples).

    What the input of a run is:
    * one local holding a pair (``norm(ws)``, ``tuple(... for x in ws)``): its value;
    * otherwise side by side (``(norm(l), norm(r))``, ``0 if l < 0 else l``): a side's input
      is the one local holding a window side (None or an int in that run) its element reads,
      or, where the element reads none (a literal), what it gives;
    * a local unpacked from a pair (``l, r = ws``; ``side_of``) stands for its side of that
      pair wherever it is read: ``(norm(r), norm(l))`` is judged against ``(l, r)``, and a
      side read into the other place alone is not read (``(norm(r), 0)``).

    A side that stands for no one input (a literal, several names, an expression whose sides
    cannot be told apart) is judged as it is: the pair the tree builds there is what it means.
    Returns (the set, why not): why not is "" unless a side unpacked from a pair is passed as
    the other side with nothing to say which band is meant there (unknown)."""
    if not r.io:
        return set(), ""
    local = local or {}
    node = _parse_expr(src)
    out: set = set()
    given = _literal_argument(node, where)
    if given is not None:
        # a helper called on a literal (``fix((-1, 0))``, ``_side(-1)``): what it was given
        for _, value in r.io:
            got = _output(value, where)
            if got is None:
                return set(), ""        # not a pair / not ints: reported by the caller
            if given != got:
                out.add((given, got, is_open))
        return out, ""
    if len(local) == 1 and where == "window_size":
        (name,) = local
        runs = [(dict(inputs).get(name), value) for inputs, value in r.io]
        if all(inp is None or (isinstance(inp, tuple) and len(inp) == 2) for inp, _ in runs):
            for inp, value in runs:
                inp = (None, None) if inp is None else inp
                got = _output(value, where)
                if got is None or any(not _is_side(x) for x in inp):
                    return set(), ""        # not a pair / not ints: reported by the caller
                if inp != got:              # the same pair is judged as it is, with the others
                    out.add((inp, got, is_open))
            return out, ""
    names = set(local)
    sides = _side_names(node, where, names)
    elements = _elements(node, where)
    if sides is None:
        # no side can be told apart in the expression (``norm2(l, r)``): the two sides of
        # one pair it reads (``l, r = ws``) are what it was given, or the two window values a
        # call is handed by position; a run that reads window values otherwise is unknown
        whole = _whole_pair_map(r, local, is_open, side_of or {})
        if whole is not None:
            return whole, ""
        args = _call_pair_args(node, names)
        for inputs, value in r.io:
            ins = dict(inputs)
            held = {n for n, x in ins.items() if _is_side(x)}
            if not held:
                continue
            got = _output(value, where)
            if got is None:
                return set(), ""        # not a pair / not ints: reported by the caller
            if args is None or not set(args) <= held:
                return set(), ("the expression builds the pair from window values it reads "
                               f"(it gives {P.fmt_pair(*got)}), and which side each "
                               "stands for cannot be read")
            inp = (ins[args[0]], ins[args[1]])
            if inp != got:
                out.add((inp, got, is_open))
        return out, ""
    # ``(_side(-1), 0)``: the side a helper was given, place by place
    literal_sides = [None if elements is None or sides[i] else
                     _literal_argument(elements[i], "side") for i in range(len(sides))]
    for inputs, value in r.io:
        ins = dict(inputs)
        got = _output(value, where)
        if got is None:
            return set(), ""            # not a pair / not ints: reported by the caller
        held = {n for n, x in ins.items() if _is_side(x)}
        inp = []
        reads = []
        for i, x in enumerate(got):
            read = sides[i] & held
            if len(read) == 1 and not any(isinstance(ins.get(n), tuple) for n in sides[i]):
                (n,) = read
                inp.append(ins[n])
                reads.append(n)
            elif literal_sides[i] is not None:
                inp.append(literal_sides[i][0])
                reads.append(None)
            else:
                # no one input it stands for (a literal, a flag, several values): judged as
                # it is
                inp.append(x)
                reads.append(None)
        # sides unpacked from one pair: each value stands where the pair had it
        origin = [side_of.get(n) if n is not None and side_of else None for n in reads]
        place = 0 if where in ("window_size", "left") else 1
        if any(o is not None for o in origin):
            if where == "window_size" and all(o is not None for o in origin) and \
                    origin[0][0] == origin[1][0] and {o[1] for o in origin} == {0, 1}:
                by_side = {o[1]: ins[n] for o, n in zip(origin, reads)}
                inp = [by_side[0], by_side[1]]
            else:
                places = list(range(len(got))) if where == "window_size" else [place]
                for i, (n, o) in enumerate(zip(reads, origin)):
                    if o is not None and o[1] != places[i]:
                        return set(), (f"{n} is side {o[1]} of {o[0]} and is passed as side "
                                       f"{places[i]}: which band the tree means there cannot "
                                       "be read")
        if tuple(inp) != got:
            out.add((tuple(inp), got, is_open))
    return out, ""


def _parse_expr(src: str):
    """The ``ast`` node of an expression's source, or None where it does not parse."""
    try:
        return ast.parse(src.strip(), mode="eval").body
    except SyntaxError:
        return None


def _output(value, where: str):
    """What one run of a window expression gives, as a tuple of sides (a pair for
    "window_size", None standing for (None, None); a 1-tuple for a side), or None where it is
    not that (not a pair, not None or ints: the caller reports it)."""
    if where == "window_size":
        value = (None, None) if value is None else value
        if not (isinstance(value, tuple) and len(value) == 2):
            return None
        got = tuple(value)
    else:
        got = (value,)
    return got if all(_is_side(x) for x in got) else None


def _pair_display(node):
    """The two elements of a pair display (``(a, b)``, ``[a, b]``), or None."""
    if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 2 and \
            not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    return None


def _call_pair_args(node, names: set):
    """The two names a call is handed by position (``norm2(l, r)``), both among ``names``; or
    None."""
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 2 and \
            all(isinstance(a, ast.Name) and a.id in names for a in node.args):
        return node.args[0].id, node.args[1].id
    return None


def _whole_pair_map(r, local, is_open, side_of: dict):
    """For an expression over both sides of one pair unpacked into locals (each side read by
    one name): (that pair, what the run gives, open) for each run that gives another pair;
    None where the expression reads no such pair."""
    by_side: dict = {}
    pairs = set()
    for name in local:
        o = side_of.get(name)
        if o is not None:
            pairs.add(o[0])
            by_side.setdefault(o[1], []).append(name)
    if len(pairs) != 1 or sorted(by_side) != [0, 1] or any(len(v) != 1 for v in by_side.values()):
        return None
    n0, n1 = by_side[0][0], by_side[1][0]
    out = set()
    for inputs, value in r.io:
        ins = dict(inputs)
        inp = (ins.get(n0), ins.get(n1))
        got = _output(value, "window_size")
        if got is None or any(not _is_side(x) for x in inp):
            return set()
        if inp != got:
            out.add((inp, got, is_open))
    return out


def _unpacked_sides(fn, local, line) -> dict:
    """{local name: (pair name, side)} for each name of ``local`` whose every binding reaching
    ``line`` is one item of the same local pair (``l, r = ws`` binds ``ws[0]``, ``ws[1]``),
    followed through plain copies (``a = r``)."""
    out = {}
    if fn is None or fn.ir is None:
        return out
    for name in local:
        got = _side_of(fn, name, line, 0)
        if got is not None:
            out[name] = got
    return out


def _side_of(fn, name, line, depth):
    if depth > 8 or name not in fn.defs or name in fn.globals:
        return None
    got = set()
    for kind, payload, _ in reaching_defs(fn, name, line):
        e = payload[0] if kind == "expr" else None
        at = payload[1][0] if kind == "expr" and payload[1] and \
            isinstance(payload[1][0], int) else None
        if isinstance(e, Subscript) and isinstance(e.base, Name) and \
                isinstance(e.index, Lit) and e.index.value in (0, 1) and \
                not isinstance(e.index.value, bool):
            got.add((e.base.id, e.index.value))
        elif isinstance(e, Name) and at is not None and e.id != name:
            # (every binding of the copied name where none is read before the copy's line:
            # ``l, r = ws; a = r`` on one line)
            inner = _side_of(fn, e.id, at, depth + 1) if reaching_defs(fn, e.id, at) else \
                _side_of(fn, e.id, None, depth + 1)
            if inner is None:
                return None
            got.add(inner)
        else:
            return None
    return got.pop() if len(got) == 1 else None


def _is_side(x) -> bool:
    return x is None or (isinstance(x, int) and not isinstance(x, bool))


def _literal(node):
    """The window side a literal spells (None, an int), else ``...``."""
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) is int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return ...


def _literal_argument(node, where: str):
    """What a helper called on one literal is given (through helpers applied one over another):
    ``fix((-1, 0))`` -> (-1, 0) for a pair (``where`` "window_size"), ``_side(-1)`` -> (-1,)
    for a side; None for anything else (``node``: the expression's ``ast`` node)."""
    def one_argument(n) -> bool:
        return isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords and \
            not isinstance(n.args[0], ast.Starred)

    if not one_argument(node):
        return None
    arg = node.args[0]
    # helpers applied one over another (``fix(norm((-1, 0)))``): what the innermost was given
    while one_argument(arg):
        arg = arg.args[0]
    if where == "window_size":
        if isinstance(arg, (ast.Tuple, ast.List)) and len(arg.elts) == 2:
            pair = tuple(_literal(e) for e in arg.elts)
            return pair if ... not in pair else None
        return None
    side = _literal(arg)
    return None if side is ... else (side,)


def _elements(node, where: str):
    """The two element nodes of a pair display (``(a, b)``), the expression itself for a side,
    None otherwise."""
    if node is None:
        return None
    return [node] if where != "window_size" else _pair_display(node)


def _side_names(node, where: str, names: set) -> list[set] | None:
    """The names among ``names`` each side of a window expression (its ``ast`` node) reads:
    two sets for a pair display (``(a, b)``, ``[a, b]``) or a conditional's pairs, one for a
    side's expression; None where the sides of a pair cannot be told apart
    (``norm(l, r)``)."""
    if node is None:
        return None

    def read(n) -> set:
        return {x.id for x in ast.walk(n) if isinstance(x, ast.Name) and x.id in names}

    if where != "window_size":
        return [read(node)]
    def per_side(n):
        elts = _pair_display(n)
        if elts is not None:
            return [read(e) for e in elts]
        if isinstance(n, ast.IfExp):
            # either branch: what each place reads in either (the test only chooses)
            a, b = per_side(n.body), per_side(n.orelse)
            if a is None or b is None:
                return None
            return [a[0] | b[0], a[1] | b[1]]
        if isinstance(n, ast.Constant) and n.value is None:
            return [set(), set()]
        return None

    return per_side(node)


def _judge_mapped(res, wv, through_chain: bool = False) -> tuple[str, str] | None:
    """A side changed (into None where the input did not mean unbounded, ``0 -> None``; into
    another number, ``-1 -> 0``) changes the band: judged like a wrapper, input against what
    FA4 receives. ``through_chain``: the call hands the pair to a wrapper, whose proof (or the
    pairs judged through it) gives FA4 the band the pair it receives means: that pair is
    judged in its normalised spelling (negative sides None)."""
    for inp, out, is_open in sorted(wv.mapped, key=str):
        if through_chain:
            out = tuple(None if x is not None and x < 0 else x for x in out)
        for c in wv.causal:
            verdict, label = P.judge(res, c, out[0], out[1], c, inp[0], inp[1])
            if verdict != "exact":
                why = (f"the call turns {P.fmt_pair(*inp)} into {P.fmt_pair(*out)} "
                       f"(causal={c}) -> {label} ({verdict})")
                return ("unknown" if is_open or not wv.causal_known else "broken"), why
    return None


def _form_matches(form: str, forms) -> bool:
    return not forms or any(BH.in_family(form, f) for f in forms)


# ----------------------------------------------------------------------------- deciding calls

def _atoms_to_values(atoms):
    vals, unknown = set(), []
    for a in atoms:
        if a[0] == "int":
            vals.add(a[1])
        elif a[0] == "none":
            vals.add(None)
        else:
            unknown.append(a[1])
    return vals, sorted(set(unknown))        # a stable order: the first one is shown


def _list_changed(fn, name: str, value) -> str | None:
    """Why the list ``value`` (a list display or ``list(...)``) bound to ``name`` may hold
    other items by the time it is read (``flow_base.container_escapes``); None for any other
    value, or a list only read."""
    if not (isinstance(value, ListExpr) or (isinstance(value, Call) and value.func in (
            Name(id="list"), Attr(base=Name(id="builtins"), attr="list")))):
        return None
    esc = container_escapes(fn, name)[1]
    return f"{name} is a list and {esc[0]}" if esc else None


def _pair_values(solver, fnkey, expr, depth=0, seen=None, line=None):
    """Pairs a ``window_size`` expression can be, keeping the two sides of one tuple together:
    (set of (L, R), unknown reasons)."""
    from analyzer.sites.coverage import window_values

    seen = set() if seen is None else seen
    if depth > 8:
        return set(), ["too deep to follow"]
    if isinstance(expr, Either):
        a, ua = _pair_values(solver, fnkey, expr.a, depth + 1, seen, line)
        b, ub = _pair_values(solver, fnkey, expr.b, depth + 1, seen, line)
        return a | b, ua + ub
    if (isinstance(expr, Lit) and expr.value is None) or (isinstance(expr, Name)
                                                          and expr.id == "None"):
        return {(None, None)}, []
    if isinstance(expr, Name):
        fn = solver.fns.get(fnkey)
        name = expr.id
        if fn is not None and fn.ir is not None and name in fn.defs and name not in fn.globals \
                and (fnkey, name, line) not in seen:
            seen.add((fnkey, name, line))
            out, unk = set(), []
            for kind, payload, _ in reaching_defs(fn, name, line):
                if kind == "expr":
                    changed = _list_changed(fn, name, payload[0])
                    if changed:
                        unk.append(changed)
                        continue
                    at = payload[1][0] if payload[1] and isinstance(payload[1][0], int) else None
                    p, u = _pair_values(solver, fnkey, payload[0], depth + 1, seen, at)
                    out |= p
                    unk += u
                else:
                    break
            else:
                return out, unk
    left, ul = _atoms_to_values(window_values(solver, fnkey, expr, 0, line=line))
    right, ur = _atoms_to_values(window_values(solver, fnkey, expr, 1, line=line))
    if ul or ur:
        return set(), ul + ur
    return {(l, r) for l in left for r in right}, []


def _overwritten(c, site, splat, solver=None, judge=None) -> str:
    """A window entry of a local dict splatted into the call (``**kw``), put there in the
    calling function before a later ``kw[key] = ...`` / ``kw.update(key=...)`` of its own key:
    "hidden" when that store runs unconditionally before the call (its own entry is what the
    call gets), or an unconditional ``helper(kw)`` statement there runs a function of the tree
    that always stores the key into it (``_helper_overwrites``), else "". A conditional store
    hides nothing: where its condition is false the old entry reaches the call (the flow does
    not follow conditions)."""
    fn = c["fn"]
    if site is None or not isinstance(splat, Name) or site.fn != fn.key \
            or splat.id in fn.loop_defined:
        return ""
    cpos = c["call"].pos
    call_line = cpos[0] if cpos and isinstance(cpos[0], int) else None
    at = site_line(site)
    if not call_line or not at:
        return ""
    if any(straight for line, straight in fn.store_lines.get((splat.id, site.key), ())
           if at < line < call_line):
        return "hidden"
    if solver is not None and judge is not None:
        # ``helper(kw)`` run unconditionally between the store and the call, where every
        # function it may be stores the key into the dict before anything that can leave it
        for line, straight, call in fn.handed_lines.get(splat.id, ()):
            if straight and at < line < call_line and \
                    _helper_overwrites(solver, judge, fn, call, splat.id, site.key):
                return "hidden"
    return ""


def _helper_overwrites(solver, judge, fn, call, name: str, key: str) -> bool:
    """Every function ``call`` may run gets the dict ``name`` as a parameter it never
    rebinds, and stores ``key`` into it (``p[key] = ...``, ``p.update(key=...)``) at the top
    level of its body, before any ``return``; a plain function (no decorator, not async, no
    ``yield``), read from its module's syntax."""
    targets = solver.call_targets(fn, call, name)
    if not targets or any(callee is None or not maps for callee, maps in targets):
        return False            # a function it may run that gets the dict by no parameter
    for callee, pname in ((c, p) for c, maps in targets for p, _ in maps):
        if callee.cls is not None or "." in callee.qualname:
            return False
        info = judge.index.by_path.get(callee.mod.path)
        tree = info.bare_tree if info is not None else None
        d = next((st for st in (tree.body if tree is not None else ())
                  if isinstance(st, ast.FunctionDef) and st.name == callee.qualname), None)
        if d is None or d.decorator_list or sum(
                1 for st in tree.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                         ast.ClassDef))
                and st.name == callee.qualname) != 1:
            return False
        own = {id(a) for a in _own_args(d)}
        if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) or
               isinstance(n, ast.Name) and n.id == pname and not isinstance(n.ctx, ast.Load)
               and not _merged_in_place(d, n) or
               isinstance(n, (ast.Global, ast.Nonlocal)) and pname in n.names or
               isinstance(n, ast.arg) and n.arg == pname and id(n) not in own
               for n in ast.walk(d)):
            return False
        for st in d.body:
            if _stores_or_updates_key(st, pname, key):
                break
            if any(isinstance(n, ast.Return) for n in ast.walk(st)):
                return False
        else:
            return False
    return True


def _merged_in_place(d, name_node) -> bool:
    """``name_node`` is the target of a ``|=`` statement at the top level of ``d``'s body (a
    dict merged in place, not rebound)."""
    return any(isinstance(st, ast.AugAssign) and st.target is name_node and
               isinstance(st.op, ast.BitOr) for st in d.body)


def _own_args(d) -> list:
    a = d.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs,
            *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]


def _stores_or_updates_key(st, pname: str, key: str) -> bool:
    """``pname[key] = ...`` or ``pname.update(key=...)`` as the statement ``st``."""
    if _stores_key(st, pname, key):
        return True
    def names_key(d) -> bool:
        return isinstance(d, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == key
                                               for k in d.keys)

    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        f = st.value.func
        return isinstance(f, ast.Attribute) and f.attr == "update" and \
            isinstance(f.value, ast.Name) and f.value.id == pname and (
                any(k.arg == key for k in st.value.keywords)
                or len(st.value.args) == 1 and names_key(st.value.args[0]))
    # ``pname |= {key: ...}``: a dict merged in place
    return isinstance(st, ast.AugAssign) and isinstance(st.op, ast.BitOr) and \
        isinstance(st.target, ast.Name) and st.target.id == pname and names_key(st.value)


def _guard_hidden(judge, solver, c, site, splat) -> str:
    """"hidden" when the entry of ``**D`` that ``site`` put there is replaced, before the
    call, by a store made under a guard on that same key which the entry itself makes true:

        kw = {"window_size": (-1, 0)}                 # the site
        if kw.get("window_size") is not None:        # or: "window_size" in kw / kw.get(...)
            kw["window_size"] = norm(kw["window_size"])
        flash_attn_func(q, k, v, **kw)

    Where the guard is false the key is absent, None or falsy -- so the old entry (present,
    not None, truthy: a tuple or list display, a nonzero int) cannot be what reaches the call.
    Only a single-condition ``if`` at the top level of the calling function, whose body
    makes the store before anything that can leave it, and a dict name bound once. The
    entry may also be one a caller hands the function's own ``**kwargs`` parameter
    (``forward(q, k, v, window_size=(-1, 0))``): it is there before the first statement."""
    fn = c["fn"]
    if site is None or splat is None or splat[0] != "N" or fn.ir is None \
            or splat[1] in fn.loop_defined or fn.def_count.get(splat[1], 0) != 1:
        return ""
    call_line = c["call"][3][0] if c["call"][3] and isinstance(c["call"][3][0], int) else None
    if site.fn == fn.key:
        at = site_line(site)
    elif _caller_entry(solver, fn, splat[1], site):
        at = -1                 # before the function's first statement
    else:
        return ""
    info = judge.index.by_path.get(fn.mod.path)
    if not call_line or not at or info is None or info.tree is None:
        return ""
    fdef = _find_def(info.tree, fn.ir)
    if fdef is None:
        return ""
    value = solver.exprs.get(site.expr_id) if hasattr(solver.exprs, "get") else None
    if value is None:
        return ""
    present = True
    not_none = value[0] in ("T", "L") or (value[0] == "K" and value[1] is not None)
    truthy = (value[0] in ("T", "L") and len(value[1]) > 0) or \
        (value[0] == "K" and bool(value[1]))
    d, key = splat[1], site.key
    for st in fdef.body:
        if not (isinstance(st, ast.If) and at < st.lineno and (st.end_lineno or 0) < call_line):
            continue
        kind = _key_guard(st.test, d, key)
        if kind is None or (kind == "notnone" and not not_none) or \
                (kind == "truthy" and not truthy) or (kind == "in" and not present):
            continue
        for inner in st.body:
            if _stores_key(inner, d, key):
                return "hidden"
            if not isinstance(inner, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
                break
    return ""


def _caller_entry(solver, fn, name: str, site) -> bool:
    """``site`` is an entry that a caller of ``fn`` hands its ``**name`` parameter (a keyword
    argument, or an entry of a dict the caller splats), not one written into that dict
    after the call began (by ``fn`` or a helper it hands the dict to)."""
    defs = fn.defs.get(name, ())
    if len(defs) != 1 or defs[0][0] != "param" or defs[0][1][1] != "kw":
        return False
    if any(ent.site == site for ent in solver.local_mutations(fn, name)[0]):
        return False
    return any(isinstance(v, DictVal) and any(ent.site == site for ent in v.entries)
               for v, _ in solver.param_values(fn, name, defs[0][1]))


def _key_guard(test, d: str, key: str) -> str | None:
    """What a one-condition test says of ``d[key]`` when it is true: "notnone" (``d.get(key)
    is not None``, ``d[key] is not None``), "in" (``key in d``), "truthy" (``d.get(key)``,
    ``d[key]``); None for any other test."""
    def read(e) -> bool:
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and \
                e.func.attr == "get" and isinstance(e.func.value, ast.Name) and \
                e.func.value.id == d and e.args and isinstance(e.args[0], ast.Constant) and \
                e.args[0].value == key and not e.keywords and (
                    len(e.args) == 1 or (len(e.args) == 2 and isinstance(e.args[1], ast.Constant)
                                         and e.args[1].value is None)):
            return True
        return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and \
            e.value.id == d and isinstance(e.slice, ast.Constant) and e.slice.value == key
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None \
                and read(test.left):
            return "notnone"
        if isinstance(op, ast.In) and isinstance(test.left, ast.Constant) and \
                test.left.value == key and isinstance(right, ast.Name) and right.id == d:
            return "in"
        return None
    return "truthy" if read(test) else None


def _stores_key(st, d: str, key: str) -> bool:
    """``d[key] = ...`` (the one target)."""
    return isinstance(st, ast.Assign) and len(st.targets) == 1 and \
        isinstance(st.targets[0], ast.Subscript) and isinstance(st.targets[0].value, ast.Name) \
        and st.targets[0].value.id == d and isinstance(st.targets[0].slice, ast.Constant) and \
        st.targets[0].slice.value == key


# what ``coverage.window_values`` answers for a side read as a pair or a pair read as a side:
# the other reading gives its values
_SHAPE_MISMATCH = ("an int where a pair is expected", "a pair where one side is expected",
                   "not a pair")


def _shape_mismatch(why: str) -> bool:
    """One of ``_SHAPE_MISMATCH``, as it is or carried (``from the tree's call of f at ...:
    ...``, ``... (via self.w)``)."""
    return any(m in why for m in _SHAPE_MISMATCH)


# an attribute read off an object the flow does not model (``self.config.window_size``): a
# value from outside, like a parameter's (docs/sites.md, the convention on outside values)
_ATTRIBUTE_READ = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\Z")


def _outside_domain(solver, site) -> str:
    """A value a window site can hold that the domain wrappers are proved on (None, ints >=
    -1) does not cover: an int below -1, a constant of another type, or a side the tree
    computes and the flow cannot bound (``_beyond_convention``); "" when there is none."""
    paired = _pair_by_call(solver, site)
    for a in sorted(_side_atoms(solver, site), key=repr):
        if a[0] == "int" and a[1] < -1:
            return str(a[1])
        if len(a) > 3:
            return repr(a[3])
        if _beyond_convention(a, paired):
            return a[1]
    return ""


def _pair_by_call(solver, site) -> bool:
    """The site's whole window is what a call makes of its arguments (``Window(l, r)``,
    ``tuple(window)``): its sides are the elements of a container, which the convention
    stands for, not a side the call computes. Not a pair a numeric or parsing function
    computes (``ast.literal_eval(text)``, ``json.loads(...)``), or one made of another
    call's result (``tuple(json.loads(spec))``): those sides are the tree's own."""
    e = solver.exprs.get(site.expr_id) if hasattr(solver.exprs, "get") else None
    if site.key != "window_size" or not isinstance(e, Call):
        return False
    inner = e
    while isinstance(inner, Call) and expr_label(inner.func) in ("tuple", "list") and \
            len(inner.args) == 1 and inner.args[0].kind == "p":
        inner = inner.args[0].value
    if isinstance(inner, Call) and (inner is not e or _COMPUTING_CALL.match(
            expr_label(inner.func) + "(")):
        return False
    return True


# functions whose result is computed from text or numbers (the pair they give is the tree's)
_COMPUTING_CALL = re.compile(r"(?:ast\.literal_eval|eval|json\.\w+|yaml\.\w+|tomllib\.\w+|"
                             r"toml\.\w+|struct\.\w+|pickle\.\w+|marshal\.\w+|divmod|"
                             r"(?:math|operator|numpy|np|torch)\.\w+)\(")


def _side_atoms(solver, site):
    """Every value atom (``coverage.window_values``) a window site's sides can hold: both
    sides of a ``window_size`` pair, or the one bound of a split key."""
    from analyzer.sites.coverage import window_values

    expr = solver.exprs[site.expr_id]
    names = getattr(solver, "module_values", None)
    for side in ((0, 1) if site.key == "window_size" else (None,)):
        atoms = window_values(solver, site.fn, expr, side, line=site_line(site))
        yield from atoms
        if names is not None:
            # a module-level name the flow keeps opaque: what the tree binds it to (a
            # value it computes is no value from outside, ``modvalues``)
            for a in sorted(atoms, key=repr):
                if a[0] == "unk" and len(a) == 3 and a[2] is None:
                    yield from sorted(names.side_atoms(site.fn[0], a[1], side), key=repr)


# a numeric computation's result: its value may be anything of its type (``math.floor(w *
# 1.5)`` is -2 for w = -1, ``float(...)`` a float), whatever its arguments are
_NUMERIC_CALL = re.compile(r"(?:(?:math|cmath|operator|numpy|np|torch|functools)\.\w+|float|int|"
                           r"round|divmod|pow|sum|complex|min|max|abs|reduce)\(|"
                           r"^[^(]*\.__\w+__\(")


_CALL_LABEL = re.compile(r"[\w.]+\(\.\.\.\)")


def _beyond_convention(atom, pair_by_call: bool = False) -> bool:
    """A side ``coverage.window_values`` cannot bound that the tree computes by arithmetic or
    a numeric function (``sw - 1``, ``~n``, ``w * scale``, ``math.floor(...)``: -2 or -1.0 for
    a sentinel -1), or a bare int where a pair goes. The convention on values the flow cannot
    follow (None, ints >= -1, as pairs) says nothing about them: a wrapper proved on it proves
    nothing for them. (A parameter's value, an attribute read, an element of a container, a
    helper's result are values the convention stands for.)"""
    if atom[0] != "unk" or len(atom) != 3 or atom[2] is not None:
        return False
    why = atom[1]
    if _shape_mismatch(why):
        return True
    if why.startswith(FROM_CALLER) and ": " in why:
        why = why.split(": ", 1)[1]
    why = re.sub(r" \(via [^()]*\)\Z", "", why)
    # the IR keeps arithmetic, comparisons and other expressions it does not model opaque;
    # a call's result at the site (``_to_left(sw)``, ``clip(sw - 1, ...)``, ``sorted(...)``)
    # is what the tree computes from its arguments, whatever the callee's name
    return why == "..." or bool(_NUMERIC_CALL.match(why)) or \
        (not pair_by_call and bool(_CALL_LABEL.match(why)))


def _sets_attribute(tree, attr: str, dashed: str) -> int:
    """The first line of ``tree`` that may set an attribute named ``attr``: a store to it,
    a keyword of that name, a class-level binding of it, the name as a string, or a
    command-line option whose dest it is; 0 when none (``tree``: a syntax tree, indexed or
    not)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == attr and \
                not isinstance(n.ctx, ast.Load):
            return n.lineno
        if isinstance(n, ast.keyword) and n.arg == attr:
            return getattr(n, "lineno", 0) or n.value.lineno
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and (
                n.value == attr or dashed in n.value):
            return n.lineno
        if isinstance(n, ast.ClassDef):
            for st in n.body:
                if attr in BH.bound_names(st):
                    return st.lineno
    return 0


def _attribute_read(d) -> bool:
    """A local's binding (``flow_base`` def entry) that is an attribute read off a dotted name
    (``sw = layer.sliding_window_size``)."""
    return d[0] == "expr" and isinstance(d[1][0], Attr) and \
        bool(_ATTRIBUTE_READ.match(expr_label(d[1][0])))


def _window_shaped(node, name: str, pair: bool = False) -> bool:
    """Every use of ``name`` in the expression is a comparison with an int or None constant,
    or an arithmetic-free pass-through (the expression itself, a branch of a conditional);
    with ``pair`` (the expression is a window pair), also a side of the pair it gives
    (``(left, 0) if left > 0 else (None, None)``)."""
    uses = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
    if not uses:
        return False
    parents = {id(c): p for p in ast.walk(node) for c in ast.iter_child_nodes(p)}

    def gives_the_pair(t) -> bool:
        # the expression itself, or a branch of a conditional that gives it
        while True:
            up = parents.get(id(t))
            if up is None:
                return True
            if not (isinstance(up, ast.IfExp) and up.test is not t):
                return False
            t = up

    for u in uses:
        p = parents.get(id(u))
        if p is None or isinstance(p, ast.IfExp) and p.test is not u:
            continue
        if pair and isinstance(p, (ast.Tuple, ast.List)) and len(p.elts) == 2 and \
                gives_the_pair(p):
            continue
        if isinstance(p, ast.Compare):
            others = [p.left] + p.comparators
            consts = [o for o in others if o is not u]
            if all(isinstance(o, ast.Constant) and (o.value is None or (
                    isinstance(o.value, int) and not isinstance(o.value, bool)))
                   or (isinstance(o, ast.UnaryOp) and isinstance(o.op, ast.USub)
                       and isinstance(o.operand, ast.Constant)) for o in consts) and \
                    all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq,
                                        ast.Is, ast.IsNot)) for op in p.ops):
                continue
        if isinstance(p, ast.BoolOp):
            continue
        return False
    return True


def _set_from_outside(solver, name: str, vals, node) -> str:
    """Where a module-level name an expression reads -- or an attribute read off it
    (``Cfg.window``, ``cfg_mod.W``) -- may be set by code other than the module's own
    statements ("" when nowhere): the sandbox runs those statements only."""
    stores = getattr(solver, "attr_stores", None)
    if stores is None:
        return "the tree's text is not available"
    where = stores.module_or_class(name)
    if where:
        return where
    classes = {str(v.key[-1]).rsplit(".", 1)[-1] for v, _ in vals if isinstance(v, ClassRef)}
    cls = next(iter(classes)) if len(classes) == 1 else None
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            base = n
            while isinstance(base, ast.Attribute):
                base = base.value
            if not (isinstance(base, ast.Name) and base.id == name):
                continue
            where = stores.module_or_class(n.attr, cls)
            if where:
                return where
            if classes and cls is None:
                return "a class attribute of a class the flow cannot name"
    return ""


def _flow_pairs(solver, site) -> set:
    """The pairs a window_size expression that calls an in-tree function by name can be: every
    pair each of its ``return`` expressions can be (read like any window expression of that
    function), when all are known; else an empty set."""
    fn = solver.fns.get(site.fn)
    expr = solver.exprs[site.expr_id]
    if fn is None or not (isinstance(expr, Call) and isinstance(expr.func, Name)):
        return set()
    try:
        vals = solver.eval(fn_context(solver, fn), expr.func)
    except RecursionError:
        return set()
    targets = [solver.fns.get(v.key) for v, _ in vals if isinstance(v, FuncRef)]
    if not vals or len(targets) != len(vals) or \
            not all(t is not None and t.ir is not None for t in targets):
        return set()
    stores = getattr(solver, "attr_stores", None)
    if stores is None or stores.module_or_class(expr.func.id):
        return set()            # the function may be replaced (``mock.patch("m.f", ...)``)
    out = set()
    for t in targets:
        if not t.returns or solver.decorator_hides(t):
            return set()
        if t.ir is not None and _deco_names(t.ir.decorators) & _CACHING:
            return set()        # a cached result is one object its callers may change
        for ret, _ in t.returns:
            if isinstance(ret, Name) and (ret.id not in t.defs or ret.id in t.globals):
                return set()    # a module's own container handed out: shared, changeable
            pairs, unk = _pair_values(solver, t.key, ret)
            if unk or not pairs:
                return set()
            out |= pairs
    return out


_FRAME_WORDS = (b"f_locals", b"locals(", b"vars(", b"f_globals", b"__globals__")
# what a write into a module's namespace or a builtin looks like in text (a superset of what
# ``_namespace_write`` reports, so that only such files are parsed): a receiver that an
# ``import`` line binds, ``globals()``, or ``builtins``
_NS_SETATTR = re.compile(rb"setattr[ \t]*\([ \t]*(\w+)")
_NS_VARS = re.compile(rb"vars[ \t]*\([ \t]*(\w+)[ \t]*\)[ \t]*(?:\[|\.[ \t]*(?:update|setdefault|"
                      rb"__setitem__))")
_NS_DICT_AFTER = re.compile(rb"[ \t]*(?:\[|\.[ \t]*(?:update|setdefault|__setitem__))")
_NS_ALWAYS = re.compile(rb"globals[ \t]*\([ \t]*\)[ \t]*(?:\[|\.[ \t]*(?:update|setdefault|"
                        rb"__setitem__))|builtins[ \t]*\.[ \t]*\w+[ \t]*=(?!=)")


def _maybe_namespace_write(raw: bytes) -> bool:
    """Can the text write into a module's namespace: ``setattr``, ``vars(...)[...]`` or
    ``.__dict__[...]`` on a name an ``import`` line binds, ``globals()[...]``, a store into
    ``builtins``? A superset of ``_namespace_write``; every search starts from a literal."""
    if (b"globals" in raw or b"builtins" in raw) and _NS_ALWAYS.search(raw):
        return True
    names = []
    if b"setattr" in raw:
        names += [m.group(1) for m in _NS_SETATTR.finditer(raw)]
    if b"vars" in raw:
        names += [m.group(1) for m in _NS_VARS.finditer(raw)]
    i = raw.find(b"__dict__")
    while i >= 0:
        if _NS_DICT_AFTER.match(raw, i + 8):
            j = i
            while j and raw[j - 1:j] in (b" ", b"\t", b"."):
                j -= 1
            k = j
            while k and (raw[k - 1:k].isalnum() or raw[k - 1:k] == b"_"):
                k -= 1
            names.append(raw[k:j])
        i = raw.find(b"__dict__", i + 8)
    if not names:
        return False
    mods = _imported_words(raw) | {b"builtins"}
    return any(n in mods for n in names)


# calls whose results no code can change (values, or objects without state)
_IMMUTABLE_MAKERS = frozenset({"tuple", "frozenset", "int", "float", "str", "bool", "bytes",
                               "complex", "range", "len", "min", "max", "abs", "round",
                               "sorted", "repr", "hash", "isinstance", "issubclass", "ord",
                               "chr", "getenv", "TypeVar", "namedtuple", "NamedTuple",
                               "compile", "object"})
_MUTABLE_MAKERS = frozenset({"dict", "list", "set", "defaultdict", "OrderedDict", "deque",
                             "Counter", "SimpleNamespace", "ChainMap", "bytearray"})


def _callee_name(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _not_proved(res, why: str):
    """``res`` (a chain's judgement) with every "proved" -- overall and per call-form family
    -- turned into "unknown" for ``why``."""
    fams = {k: _not_proved(f, why) for k, f in (getattr(res, "families", None) or {}).items()}
    if res.status != "proved":
        return BH.ChainResult(res.status, res.witness, res.counterexample, res.per_release,
                              res.table, fams, alters=res.alters)
    return BH.ChainResult("unknown", f"{res.witness}: not a proof: {why}", "",
                          tuple((r, "unknown", why) for r, _, _ in res.per_release),
                          res.table, fams, alters=res.alters)


def _stores_a_builtin_name(raw: bytes) -> bool:
    """Does the text store an attribute named like a builtin on a name an ``import`` line of
    the file binds (``import norm`` ... ``norm.min = max``)? A superset of what
    ``_namespace_write`` reports as a builtin rebound, checked before parsing. The search
    starts from the ``.``, a literal; the receiver is read back off the text."""
    if b"import" not in raw:
        return False
    mods = None
    for a in _DOT_STORE.finditer(raw):
        if a.group(1).decode() not in _BUILTIN_NAMES:
            continue
        k = a.start()
        j = k
        while j and (raw[j - 1:j].isalnum() or raw[j - 1:j] == b"_"):
            j -= 1
        if mods is None:
            mods = _imported_words(raw)
        if raw[j:k] in mods:
            return True
    return False


_DOT_STORE = re.compile(rb"\.[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)")
def _imported_words(raw: bytes) -> set:
    """The names ``import`` lines of the text bind (``import a.b`` binds ``a``)."""
    return {(x.group(2) or x.group(1).split(b".")[0]) for x in _IMPORT_LINE.finditer(raw)}


_IMPORT_LINE = re.compile(rb"^[ \t]*import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?", re.M)
_BUILTIN_NAMES = frozenset(n for n in dir(__import__("builtins")) if not n.startswith("_"))


def _namespace_write(n, modules: set) -> str:
    """What ``n`` writes into a module's namespace where no statement of that module shows it
    (so code the sandbox runs -- a wrapper reading its module's names, a builtin -- may see
    other values), or "": ``setattr(mod, name, v)`` with a computed name, ``vars(mod)[k] =``,
    ``mod.__dict__[k] =`` / ``.update``, ``globals()[k] =`` / ``.update``, and any store into
    ``builtins`` or ``mod.<builtin name> = ...`` (``norm.min = max``)."""
    import builtins

    def is_mod(e):
        return isinstance(e, ast.Name) and e.id in modules

    def namespace(e):
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
            return e.func.id == "globals" and not e.args or \
                e.func.id == "vars" and len(e.args) == 1 and is_mod(e.args[0])
        return isinstance(e, ast.Attribute) and e.attr == "__dict__" and is_mod(e.value)

    if isinstance(n, ast.Call):
        f = n.func
        if isinstance(f, ast.Name) and f.id == "setattr" and n.args and is_mod(n.args[0]):
            key = n.args[1] if len(n.args) > 1 else None
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)) or \
                    isinstance(n.args[0], ast.Name) and n.args[0].id == "builtins" or \
                    hasattr(builtins, key.value):
                return "a module's name set by setattr"
        if isinstance(f, ast.Attribute) and f.attr in ("update", "setdefault", "__setitem__") \
                and namespace(f.value):
            return "a module's namespace changed"
    if isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)) and \
            namespace(n.value):
        return "a module's namespace changed"
    if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) and \
            is_mod(n.value) and (n.value.id == "builtins" or hasattr(builtins, n.attr)):
        return f"a builtin rebound ({n.value.id}.{n.attr})"
    return ""


def _top_bindings(info, name: str) -> list:
    """How the top level of a module (its ``ModuleInfo``) binds ``name`` by the statements the
    sandbox runs: ("value", the value of a one-target assignment, None for ``a = b = ...``),
    ("import", (the ``from`` import, the name it imports)), ("def", None) for a def or class."""
    found = []
    for st in info.tree.body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                              for t in st.targets):
            found.append(("value", st.value if len(st.targets) == 1 else None))
        elif isinstance(st, ast.ImportFrom):
            for a in st.names:
                if (a.asname or a.name) == name:
                    found.append(("import", (st, a.name)))
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and st.name == name:
            found.append(("def", None))
    return found


def _bound_otherwise(info, name: str) -> bool:
    """Does the module bind ``name`` at its top level other than by a plain assignment, a def,
    a class or an import -- a ``for``/``with`` target, a walrus, a ``match`` capture, an
    augmented assignment, ``del`` (statements the sandbox's extraction does not run)? True
    when the module cannot be read."""
    tree = info.bare_tree if info is not None else None
    if tree is None:
        return True
    from analyzer.sites.attrstores import _statements

    def names(t):
        return {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}

    for st, scopes in _statements(tree):
        if scopes:
            continue                    # inside a function: its own scope
        if isinstance(st, (ast.For, ast.AsyncFor)) and name in names(st.target):
            return True
        if isinstance(st, (ast.With, ast.AsyncWith)) and any(
                it.optional_vars is not None and name in names(it.optional_vars)
                for it in st.items):
            return True
        if isinstance(st, ast.AugAssign) and name in names(st.target):
            return True
        if isinstance(st, ast.Delete) and any(name in names(t) for t in st.targets):
            return True
        if isinstance(st, ast.Match) and any(
                isinstance(p, (ast.MatchAs, ast.MatchStar)) and p.name == name or
                isinstance(p, ast.MatchMapping) and p.rest == name
                for c in st.cases for p in ast.walk(c.pattern)):
            return True
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
                isinstance(n, ast.NamedExpr) and n.target.id == name for n in ast.walk(st)):
            return True
    return False


def frame_hazards(index) -> list[tuple[str, int, str]]:
    """(path, line, what) for each place the tree reaches a frame's local variables: a frame's
    ``f_locals`` (``sys._getframe(1).f_locals["kw"]["window_size"] = ...``; on Python 3.13 it
    writes through to the variables), or ``locals()``/``vars()`` without an argument used
    other than read in place (``**locals()``, ``locals().get(k)``, ``k in locals()``): its
    dict holds the function's own dicts and lists, which whoever gets it may change."""
    out = []
    for rel, info in sorted(index.by_path.items()):
        raw = info.raw
        if not any(w in raw for w in _FRAME_WORDS) and not _maybe_namespace_write(raw) and \
                not _stores_a_builtin_name(raw):
            continue
        tree = info.tree
        if tree is None:
            if b"f_locals" in raw or b"locals(" in raw:
                out.append((rel, 1, "code that does not parse"))
            continue
        from analyzer.sites.detached import _module_names

        modules = _module_names(tree) | {"builtins"}
        for n in walk(tree):
            if isinstance(n, ast.Attribute) and n.attr == "f_locals":
                out.append((rel, n.lineno, "a frame's f_locals"))
            elif (wrote := _namespace_write(n, modules)):
                out.append((rel, n.lineno, wrote))
            elif isinstance(n, ast.Attribute) and n.attr in ("f_globals", "__globals__") or \
                    isinstance(n, ast.Constant) and n.value in ("f_globals", "__globals__"):
                # a module's namespace reached through a frame or a function: any of its
                # names may be rebound where no statement of the module shows it
                out.append((rel, n.lineno, f"a module namespace through {getattr(n, 'attr', None) or n.value}"))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                    n.func.id in ("locals", "vars") and not n.args and not n.keywords:
                p = parent_of(n)
                if isinstance(p, ast.keyword) and p.arg is None:
                    continue                                    # f(**locals())
                if isinstance(p, ast.Compare) and n in p.comparators:
                    continue                                    # k in locals()
                if isinstance(p, ast.Attribute) and p.attr in _LOCALS_READS and \
                        isinstance(parent_of(p), ast.Call) and parent_of(p).func is p:
                    continue                                    # locals().get(k)
                out.append((rel, n.lineno, f"{n.func.id}()"))
    return out


def _find_class(tree, cir):
    """The ast ClassDef of an IR class (by its name and first line)."""
    return _find_named(tree, cir, (ast.ClassDef,))


def _runs_as_function(fdef, first) -> bool:
    """Does a method's body behave the same run as a module-level function? It never reads
    its first parameter ``first`` (None for a static method), uses neither ``super`` nor
    ``__class__`` (they need the class cell), and spells no private name (``__x`` is mangled
    with the class's name inside a class body, not outside)."""
    own_first = (fdef.args.posonlyargs + fdef.args.args)[:1]
    for n in ast.walk(fdef):
        ids = []
        if isinstance(n, ast.Name):
            ids = [n.id]
        elif isinstance(n, ast.Attribute):
            ids = [n.attr]
        elif isinstance(n, ast.arg):
            ids = [n.arg]
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fdef:
            ids = [n.name]
        elif isinstance(n, ast.alias):
            ids = [n.asname or n.name]
        for i in ids:
            if i in ("super", "__class__") or (i.startswith("__") and not i.endswith("__")):
                return False
            if first is not None and i == first and not (isinstance(n, ast.arg)
                                                           and n in own_first):
                return False
    return True


def _find_def(tree, fir):
    """The ast FunctionDef of an IR function (by its name and first line)."""
    return _find_named(tree, fir, (ast.FunctionDef, ast.AsyncFunctionDef))


def _find_named(tree, ir, kinds):
    line = ir.pos[0] if ir.pos and isinstance(ir.pos[0], int) else None
    for n in ast.walk(tree):
        if isinstance(n, kinds) and n.name == ir.name and \
                (line is None or n.lineno <= line <= (n.end_lineno or n.lineno)):
            return n
    return None


def _is_int_or_none(o) -> bool:
    if isinstance(o, ast.UnaryOp) and isinstance(o.op, ast.USub):
        o = o.operand
    return isinstance(o, ast.Constant) and (o.value is None or (
        isinstance(o.value, int) and not isinstance(o.value, bool)))


def _shaped_in(fdef, name: str, depth: int) -> bool:
    """Inside ``fdef``, ``name`` is only used as a window or a bound: compared with ints or
    None, indexed by an int, iterated, unpacked or copied into names used the same way,
    returned, or placed in a tuple/list/conditional. A string, a flag, an attribute read,
    ``isinstance`` or ``in`` would show it is something else."""
    if depth < 0:
        return False
    parents = {id(c): p for p in ast.walk(fdef) for c in ast.iter_child_nodes(p)}
    for u in ast.walk(fdef):
        if not (isinstance(u, ast.Name) and u.id == name and isinstance(u.ctx, ast.Load)):
            continue
        p = parents.get(id(u))
        if isinstance(p, ast.Compare):
            if all(o is u or _is_int_or_none(o) for o in [p.left] + p.comparators) and \
                    not any(isinstance(op, (ast.In, ast.NotIn)) for op in p.ops):
                continue
            return False
        if isinstance(p, ast.Subscript) and p.value is u:
            if _is_int_or_none(p.slice):
                continue
            return False
        if isinstance(p, ast.comprehension) and p.iter is u:
            if isinstance(p.target, ast.Name) and _shaped_in(fdef, p.target.id, depth - 1):
                continue
            return False
        if isinstance(p, ast.Assign) and p.value is u and len(p.targets) == 1:
            t = p.targets[0]
            names = [t] if isinstance(t, ast.Name) else list(t.elts) \
                if isinstance(t, (ast.Tuple, ast.List)) else []
            if names and all(isinstance(x, ast.Name) and _shaped_in(fdef, x.id, depth - 1)
                             for x in names):
                continue
            return False
        if isinstance(p, (ast.Return, ast.Tuple, ast.List, ast.BoolOp)):
            continue
        if isinstance(p, ast.IfExp) and p.test is not u:
            continue
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and \
                p.func.id in ("tuple", "list") and p.args == [u]:
            continue
        if isinstance(p, ast.keyword) and p.arg in ("window_size", "window_size_left",
                                                    "window_size_right"):
            continue
        return False
    return True


def _passed_on(node, name: str) -> bool:
    """``name`` is handed to a call (``norm(window)``): it may be a pair or a bound."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id == name
                                           for a in list(n.args) + [k.value for k in n.keywords]):
            return True
    return False


@dataclass(frozen=True)
class Prefills:
    """What the ``functools.partial`` calls outermost in a chain bind (``Judge.prefills``)."""
    inner: tuple            # the chain inside the partials (WrapRef, innermost first)
    values: dict            # keyword -> frozenset of the values it may bind
    why: str = ""           # why those values cannot be bounded ("" when they are)


_ASSIGN_AFTER = re.compile(rb"[^\n#]*?(?<![=!<>])=(?!=)")


def _immutable(v) -> bool:
    return v is None or type(v) in (int, bool, str, float) or \
        type(v) is tuple and all(_immutable(x) for x in v)


def _rebinds_attribute(raw: bytes, i: int, n: int) -> bool:
    """Can the mention at ``raw[i:i+n]`` rebind a module's name holding an immutable
    constant? Only through an attribute (``consts.W = -2``; a bare ``W`` in another file is
    that file's own): a store, ``del``, a ``for``/``with`` target, or any ``=`` after it on
    its line (``c.W, x = ...``, ``c.W -= 1``), erring towards yes."""
    if not raw[:i].rstrip(b" \t\\\n").endswith(b"."):
        return False
    head = raw[raw.rfind(b"\n", 0, i) + 1:i].lstrip()
    return head.startswith((b"for ", b"async for ", b"with ", b"async with ", b"del ")) or \
        _ASSIGN_AFTER.match(raw, i + n) is not None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _in_a_scope(tree, target) -> bool:
    """Is ``target`` inside a function, lambda or comprehension of ``tree``?"""
    todo = [(tree, False)]
    while todo:
        node, inside = todo.pop()
        if node is target:
            return inside
        inside = inside or isinstance(node, _SCOPES)
        todo.extend((c, inside) for c in ast.iter_child_nodes(node))
    return True                 # not found: read as inside (only literals)


def _named_in_text(files: dict, name: str) -> str:
    """The first file that spells ``name`` inside a string or a comment
    (``setattr(consts, "W", -2)``, ``globals()["W"]``, a patch target): it may change the
    module-level name by a route the text scans do not read; "" when none."""
    from analyzer.sites.attrstores import _in_string_or_comment
    from analyzer.sites.detached import _word_at

    needle = name.encode()
    for rel in sorted(files):
        raw = files[rel]
        if needle not in raw:
            continue
        if any(_in_string_or_comment(raw, i) for i in _word_at(raw, needle)):
            return rel
    return ""


class _Enumerator:
    """Call-site expressions whose names the flow cannot bound (``None if l < 0 else l``,
    ``norm(window_size)``): evaluated in the sandbox over every value those names can take."""

    def __init__(self, judge: Judge, solver, text):
        self.judge, self.solver, self.text = judge, solver, text
        self.jobs: list = []
        self.results: dict = {}
        self.open: dict = {}      # key -> the expression has a name enumerated over the domain
        self.local_of: dict = {}  # key -> {local name: its values or domain}
        self.side_of: dict = {}   # key -> {local name: (pair name, side)} (``l, r = ws``)
        self.map_src: dict = {}   # key -> the source its runs are read against
        self.synthetic: dict = {}  # name -> the method (ast def) run as a module-level function
        self.why_not: dict = {}    # id(site) -> why its expression is not run

    def job_for(self, site, want: str):
        """Register the evaluation of ``site``'s value expression; returns a key or None."""
        from analyzer.sites.coverage import _value_text

        src = _value_text(self.text, site)
        try:
            node = ast.parse(src.strip(), mode="eval").body
        except SyntaxError:
            return None
        fn = self.solver.fns.get(site.fn)
        if fn is None:
            return None
        node, src, line = self._resolve(site, fn, node, src)
        got = self._methods_as_functions(site, fn, node)
        if isinstance(got, str):
            self.why_not[id(site)] = got
            return None
        node, extra, roots = got
        if extra:
            node, pseudo = self._self_attributes(fn, node)
            src = ast.unparse(node)
        else:
            pseudo = {}
        free = BH.free_names(node) - set(self.synthetic)
        key = self._register(site, fn, node, src, line, free, want, extra, roots, pseudo)
        if key is not None:
            # what the expression stands for where it is a module-level name bound once
            # (``WINDOW = fix((-1, 0))``), and the module-level names it reads that hold a
            # literal window (``fix(WINDOW)``, ``_side(LEFT)``, also imported): read for what
            # it was given (``_normalising_map``)
            self.map_src[key] = self._with_literals(
                fn, self._module_value(fn, node) or src.strip())
        return key

    def _with_literals(self, fn, src: str) -> str:
        """``src`` with each name it reads that is no local of ``fn`` and is bound once, at
        the top level of its module (this one, or the one it is imported from), to a literal
        window side or pair, replaced by that literal."""
        try:
            tree = ast.parse(src, mode="eval")
        except SyntaxError:
            return src
        changed = False

        class Swap(ast.NodeTransformer):
            def visit_Name(self_, n):
                nonlocal changed
                if not isinstance(n.ctx, ast.Load) or (fn.ir is not None and n.id in fn.defs):
                    return n
                lit = self._module_literal(fn.mod.path, n.id, 0)
                if lit is None:
                    return n
                changed = True
                return ast.copy_location(lit, n)

        tree = Swap().visit(tree)
        return ast.unparse(tree) if changed else src

    def _module_literal(self, path: str, name: str, depth: int):
        """The literal window side or pair (an ``ast`` node) the top level of the module at
        ``path`` binds ``name`` to, once, by a plain assignment or through a ``from m import
        name`` of the tree; None otherwise."""
        from analyzer.sites.modvalues import imported_from

        info = self.judge.index.by_path.get(path)
        if depth > 4 or info is None or info.tree is None or _bound_otherwise(info, name):
            return None
        found = _top_bindings(info, name)
        if len(found) != 1:
            return None
        kind, what = found[0]
        if kind == "value" and what is not None:
            try:
                v = ast.literal_eval(what)
            except (ValueError, SyntaxError, TypeError):
                return None
            ok = _is_side(v) or (isinstance(v, (tuple, list)) and len(v) == 2
                                 and all(_is_side(x) for x in v))
            return what if ok else None
        if kind == "import":
            st, _ = what
            src = imported_from(self.judge.index, info, st, name)
            return self._module_literal(src[0].path, src[1], depth + 1) if src is not None \
                else None
        return None

    def _module_value(self, fn, node) -> str | None:
        """The source of the one top-level assignment of the module-level name ``node`` (an
        ``ast.Name`` that is no local of ``fn``), or None."""
        if not isinstance(node, ast.Name) or (fn.ir is not None and node.id in fn.defs):
            return None
        info = self.judge.index.by_path.get(fn.mod.path)
        if info is None or info.tree is None:
            return None
        found = [what for kind, what in _top_bindings(info, node.id)
                 if kind == "value" and what is not None]
        if len(found) != 1 or _bound_otherwise(info, node.id):
            return None
        return ast.unparse(found[0])

    def _self_attributes(self, fn, node):
        """In an expression that calls a method run as a function, each read of an attribute
        of the method's instance (``self.window_size``) becomes a name of its own, whose values
        are the flow's values of that attribute (``window_values``: every store the class
        makes, or unknown where the attribute may be set elsewhere)."""
        if fn.first_param is None or fn.def_count.get(fn.first_param) != 1 or \
                fn.ir is None or fn.ir.decorators:
            return node, {}
        if any(isinstance(n, ast.arg) and n.arg == fn.first_param or
               isinstance(n, ast.Name) and n.id == fn.first_param
               and not isinstance(n.ctx, ast.Load) for n in ast.walk(node)):
            return node, {}     # a lambda or comprehension of the expression rebinds it
        pseudo: dict = {}

        class Swap(ast.NodeTransformer):
            def visit_Attribute(self, n):
                if isinstance(n.value, ast.Name) and n.value.id == fn.first_param and \
                        isinstance(n.ctx, ast.Load) and not n.attr.startswith("__"):
                    name = f"fa4_audit_self_{n.attr}"
                    pseudo[name] = Attr(base=Name(id=fn.first_param), attr=n.attr)
                    return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), n)
                return self.generic_visit(n)

            def visit_Call(self, n):
                # a method called on the instance is not a value read: left as it is (the
                # expression then names ``self`` and is not run)
                if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                        and n.func.value.id == fn.first_param:
                    n.args = [self.visit(a) for a in n.args]
                    n.keywords = [self.visit(k) for k in n.keywords]
                    return n
                return self.generic_visit(n)

        node = Swap().visit(node)
        return node, pseudo

    def _methods_as_functions(self, site, fn, node):
        """A helper called as a method of the call site's own class (``self.fix(w)``, or
        ``Cls.fix(w)`` for a static method) is run as the module-level function its body is:
        (node, extra sources, (method, free names, def) triples); (node, (), ()) when the
        expression calls no such method; why not (a string) when it does and the method cannot
        be run that way.

        What ``self.fix`` calls must be that ``def``, and its body must not depend on being a
        method. So the class is a module-level class of this file with no decorator or
        metaclass; the method has no decorator (or ``staticmethod``); an instance method never
        reads its first parameter; the body uses no ``super``/``__class__`` and no private
        (mangled) name; no class of its family binds the name in its body, intercepts
        attribute access or defines ``__init_subclass__``; and nothing in the tree stores an
        attribute of that name (``self.fix = ...``, ``Cls.fix = ...``, ``setattr``)."""
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)]
        cls = fn.cls
        if cls is None or not calls:
            return node, (), ()
        # ``self`` is an instance of the class only in a plain method (not a static or class
        # method, not an autograd ``forward(ctx, ...)``), and only while it is not rebound
        via_self = fn.first_param is not None and fn.qualname == f"{cls.qualname}.{fn.name}" \
            and fn.ir is not None and not fn.ir.decorators \
            and fn.def_count.get(fn.first_param) == 1
        mine = [c for c in calls if (via_self and c.func.value.id == fn.first_param)
                or c.func.value.id == cls.ir.name]
        if not mine:
            return node, (), ()
        stores = getattr(self.solver, "attr_stores", None)
        info = self.judge.index.by_path.get(fn.mod.path)
        label = f"{cls.ir.name}'s methods"
        if stores is None or info is None or info.tree is None:
            return f"{label}: the source could not be read"
        if "." in cls.qualname:
            return f"{label} are not run: the class is not defined at module level"
        cdef = _find_class(info.tree, cls.ir)
        if cdef is None or cdef.decorator_list or cdef.keywords:
            return f"{label} are not run: a class decorator or metaclass may change them"
        hook = stores.class_hazard(cls.ir.name, "__init_subclass__")
        if hook:
            return f"{label} are not run: {hook} may change them"
        extra, roots = [], []
        for c in mine:
            what = f"{c.func.value.id}.{c.func.attr}"
            static_only = c.func.value.id != fn.first_param
            if not static_only:
                # ``self.fix`` is the class's def only while ``self`` is an instance of it
                away = stores.detached(cls.ir.name)
                if away:
                    return f"{what}: a method of {cls.ir.name} may run on another object ({away})"
            if static_only:
                # ``Cls.fix`` is looked up through the class's metaclass, which a base may set
                # (``class Base(metaclass=Meta)``): only a class with no base is read this way
                if any(not (isinstance(b, ast.Name) and b.id == "object") for b in cdef.bases):
                    return (f"{what}: read off a class with bases, whose metaclass may decide "
                            "what it is (call it through self)")
                # the class name must be this class where the call stands
                try:
                    vals = self.solver.eval(fn_context(self.solver, fn), Name(id=cls.ir.name))
                except RecursionError:
                    vals = ()
                if not vals or any(not (isinstance(v, ClassRef) and v.key == cls.key)
                                   for v, _ in vals):
                    return f"{what}: {cls.ir.name} may not be this class here"
            meth = cls.methods.get(c.func.attr)
            fdef = _find_def(cdef, meth.ir) if meth is not None and meth.ir is not None \
                else None
            if not isinstance(fdef, ast.FunctionDef) or fdef not in cdef.body:
                return f"{what}: not a plain method {cls.ir.name} defines itself"
            rest = ast.ClassDef(name=cdef.name, bases=[], keywords=[], decorator_list=[],
                                body=[st for st in cdef.body if st is not fdef])
            again = _binds(_class_bindings(rest), fdef.name)
            if again:
                return f"{what}: {cls.ir.name} also {again}"
            decos = [d.id if isinstance(d, ast.Name) else None for d in fdef.decorator_list]
            static = decos == ["staticmethod"]
            if static and ("staticmethod" in _class_bindings(cdef)
                           or {"staticmethod", "*"} & statement_bindings(info.tree)):
                return f"{what}: the name staticmethod is bound in the tree, not the builtin"
            if decos and not static or static_only and not static:
                return f"{what}: a decorator other than staticmethod may change it"
            params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
            if not static and not params:
                return f"{what}: a method without parameters"
            if not _runs_as_function(fdef, None if static else params[0]):
                return (f"{what}: its body reads its instance, super/__class__ or a private "
                        "name, so it does not run as a function")
            defaults = fdef.args.defaults + [d for d in fdef.args.kw_defaults if d is not None]
            if any(isinstance(n, ast.Name) for d in defaults for n in ast.walk(d)):
                # a default is computed where the def stands, in the class body, which may
                # bind that name otherwise than the module does
                return f"{what}: a default argument names something read in the class body"
            where = [f"{p}:{ln}" for p, ln, _ in stores._stores_of(fdef.name)]
            if where:
                return f"{what} may be replaced where the attribute is set ({where[0]})"
            other = stores.class_hazard(cls.ir.name, fdef.name, skip=(info.path, cdef.lineno))
            if other:
                return f"{what} may not be the def at {info.path}:{fdef.lineno}: {other}"
            name = f"fa4_audit_method{len(self.synthetic)}_{fdef.name.lstrip('_')}"
            new = ast.FunctionDef(name=name, args=fdef.args, body=fdef.body, decorator_list=[],
                                  returns=None, type_comment=None, type_params=[])
            ast.fix_missing_locations(ast.copy_location(new, fdef))
            self.synthetic[name] = fdef
            extra.append(ast.unparse(new))
            roots.append((meth, BH.free_names(new) - {"None", "True", "False"}, fdef))
            c.func = ast.Name(id=name, ctx=ast.Load())
            if not static:
                c.args = [ast.Constant(value=None)] + c.args
        return node, tuple(extra), tuple(roots)

    def branches(self, site) -> bool:
        """The site's value, followed through the local bindings that reach it, is chosen by a
        condition (``a if c else b``, ``a or b``)."""
        from analyzer.sites.coverage import _value_text

        fn = self.solver.fns.get(site.fn)
        if fn is None:
            return False
        try:
            node = ast.parse(_value_text(self.text, site).strip(), mode="eval").body
        except SyntaxError:
            return False
        node, _, _ = self._resolve(site, fn, node, "")
        return any(isinstance(n, (ast.IfExp, ast.BoolOp)) for n in ast.walk(node))

    def _resolve(self, site, fn, node, src):
        """(node, source, line): a local name whose one reaching binding is an expression is
        replaced by that expression, evaluated where it stands (``w = (-1, 0);
        w = tuple(... for x in w); fa4(window_size=w)``)."""
        line = site_line(site)
        for _ in range(8):
            if not (isinstance(node, ast.Name) and fn.ir is not None and node.id in fn.defs
                    and node.id not in fn.globals):
                break
            rd = reaching_defs(fn, node.id, line)
            if len(rd) != 1 or rd[0][0] != "expr" or not rd[0][1][1] \
                    or not isinstance(rd[0][1][1][0], int):
                break
            if _list_changed(fn, node.id, rd[0][1][0]):
                break           # a list changed after it was built: its literal is not its value
            stmt = self.text.span(site.path, tuple(rd[0][1][1][:4]))
            try:
                tree = ast.parse(stmt.strip())
            except SyntaxError:
                break
            st = tree.body[0] if len(tree.body) == 1 else None
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name) and st.targets[0].id == node.id):
                break
            node, src, line = st.value, ast.unparse(st.value), rd[0][1][1][0]
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 2:
            # a pair of locals (``lw = left if left > 0 else None; (lw, 0)``): each side
            # whose one reaching binding is an expression over parameters only (bound at
            # entry and never again: read the same at its line and here) is replaced by it
            elts = [self._side_expr(site, fn, e, line) for e in node.elts]
            if any(a is not b for a, b in zip(elts, node.elts)):
                node = type(node)(elts=elts, ctx=ast.Load())
                src = ast.unparse(node)
        return node, src, line

    def _side_expr(self, site, fn, e, line):
        if not (isinstance(e, ast.Name) and fn.ir is not None and e.id in fn.defs
                and e.id not in fn.globals):
            return e
        rd = reaching_defs(fn, e.id, line)
        if len(rd) != 1 or rd[0][0] != "expr" or not rd[0][1][1] \
                or not isinstance(rd[0][1][1][0], int):
            return e
        try:
            tree = ast.parse(self.text.span(site.path, tuple(rd[0][1][1][:4])).strip())
        except SyntaxError:
            return e
        st = tree.body[0] if len(tree.body) == 1 else None
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name) and st.targets[0].id == e.id):
            return e
        names = {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)} - \
            {"None", "True", "False"}
        if any(isinstance(n, (ast.Lambda, ast.comprehension, ast.NamedExpr))
               for n in ast.walk(st.value)) or not names or not all(
                n in fn.defs and n not in fn.globals and n not in fn.loop_defined
                and all(d[0] == "param" for d in fn.defs[n]) for n in names):
            return e
        return st.value

    def _read_off_set_attribute(self, fn, name: str) -> bool:
        """A binding of local ``name`` is an attribute read off an object the flow does not
        model, and the tree sets an attribute of that name somewhere: any int may be there."""
        return any(_attribute_read(d) and self._tree_sets_attribute(d[1][0].attr)
                   for d in fn.defs.get(name, ()))

    def _tree_sets_attribute(self, attr: str) -> str:
        """Where the tree's text may set an attribute named ``attr`` on some object: a store
        (``x.attr = ...``, ``x.attr -= 1``), a keyword or class-level binding of that name
        (``Cfg(attr=-2)``, ``replace(md, attr=...)``, ``attr: int = -2`` in a dataclass), the
        name as a string (``setattr``, a dict key), an option whose dest it is
        (``--sliding-window``), or a store by a name the text does not spell
        (``StoreIndex.any_store``); "" when none. An attribute the tree never sets comes from
        outside: the window convention (None, ints >= -1) stands for it."""
        memo = self.__dict__.setdefault("_attr_set", {})
        if attr not in memo:
            dashed = "--" + attr.replace("_", "-")
            found = ""
            for path in sorted(self.text.data):
                raw = self.text.data[path]
                if attr.encode() not in raw and dashed.encode() not in raw:
                    continue
                info = self.judge.index.by_path.get(path)
                tree = info.bare_tree if info is not None else None
                if tree is None:
                    found = f"{path}:1 (cannot be read)"
                    break
                line = _sets_attribute(tree, attr, dashed)
                if line:
                    found = f"{path}:{line}"
                    break
            if not found:
                stores = getattr(self.solver, "attr_stores", None)
                found = stores.any_store() if stores is not None else ""
            memo[attr] = found
        return memo[attr]

    def _helper_takes_window(self, fn, node, name) -> bool:
        """``name`` appears in the expression only as a positional argument of calls of
        in-tree functions, each of which uses that parameter only as a window or a bound
        (``_shaped_in``): the window domain then covers what it can do with it."""
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        uses = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
        if not uses:
            return False
        for u in uses:
            call = next((c for c in calls if u in c.args), None)
            if call is None or not isinstance(call.func, ast.Name):
                return False
            fdef = self.synthetic.get(call.func.id)
            if fdef is not None:        # a method run as a function (its first argument added)
                params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
                i = call.args.index(u)
                if i >= len(params) or not _shaped_in(fdef, params[i], 3):
                    return False
                continue
            try:
                vals = self.solver.eval(fn_context(self.solver, fn), Name(id=call.func.id))
            except RecursionError:
                return False
            i = call.args.index(u)
            unloaded = [v for v, _ in vals if isinstance(v, Unloaded)]
            if unloaded and len(unloaded) == len(vals):
                # a helper in a module the pass did not parse: its one plain def, read off
                # the module's syntax tree
                for v in unloaded:
                    got = self.judge.top_bindings().plain_def(v.module, v.name)
                    if got is None:
                        return False
                    params = [a.arg for a in got[1].args.posonlyargs + got[1].args.args]
                    if i >= len(params) or not _shaped_in(got[1], params[i], 3):
                        return False
                continue
            # an in-tree function only (a builtin such as ``min(-1, x)`` is not a helper)
            targets = [self.solver.fns.get(v.key) if isinstance(v, FuncRef) else None
                       for v, _ in vals]
            if not vals or not all(t is not None and t.ir is not None for t in targets):
                return False
            for t in targets:
                params = [pn for pn, kind, _ in t.ir.params if kind == "pos"]
                info = self.judge.index.by_path.get(t.mod.path)
                fdef = _find_def(info.tree, t.ir) if info is not None and info.tree else None
                if i >= len(params) or fdef is None or not _shaped_in(fdef, params[i], 3):
                    return False
        return True

    def _register(self, site, fn, node, src, line, free, want, extra=(), roots=(),
                  pseudo=None):
        from analyzer.sites.coverage import FROM_CALLER, window_values

        pseudo = pseudo or {}
        local, module_level = {}, set()
        for name in sorted(free):
            if name in ("None", "True", "False"):
                continue
            value = pseudo.get(name, Name(id=name))
            if name in pseudo or fn.ir is not None and name in fn.defs and \
                    name not in fn.globals:
                atoms = window_values(self.solver, site.fn, value, None, line=line)
                vals, unk = _atoms_to_values(atoms)
                others = [a[3] for a in atoms if len(a) > 3] + \
                    [a[1] for a in atoms if a[0] == "int" and a[1] < -1]
                if others:
                    # it holds something a window side is not (a string, a flag, -2): the
                    # window domain says nothing about it -- only its exact values can be run
                    if any(a[0] == "unk" and len(a) == 3 for a in atoms):
                        return None
                    local[name] = sorted(set(others) | vals, key=repr)
                    continue
                if unk or not vals:
                    # the domain stands for values from outside the tree (a parameter its
                    # callers pass) only: one the tree itself computes and the flow cannot
                    # bound (``~1``, ``LEFT - 1``, a loop's or a starred target, ``d.get(k,
                    # -2)``) may be anything
                    views = [atoms]
                    if any(a[0] == "unk" and _shape_mismatch(a[1]) for a in atoms):
                        # it holds pairs (too): what each side can be
                        views += [window_values(self.solver, site.fn, value, sd, line=line)
                                  for sd in (0, 1)]
                    if any(a[0] == "unk" and a[2] is None and not _shape_mismatch(a[1])
                           and not _ATTRIBUTE_READ.match(a[1])
                           for view in views for a in view):
                        return None
                    # the two sides one by one (a pair handed over by the tree's own calls): a
                    # side outside the window domain (-2, a float) or one the tree computes
                    # and cannot bound (``sw - 1``) is not covered by running the domain
                    for sd in (0, 1):
                        side_atoms = window_values(self.solver, site.fn, value, sd, line=line)
                        if any(a[0] == "int" and a[1] < -1 or len(a) > 3
                               or a[0] == "unk" and a[2] is None
                               and a[1].startswith(FROM_CALLER) for a in side_atoms):
                            return None
                    pairs, punk = _pair_values(self.solver, site.fn, value, line=line)
                    if pairs and not punk and all(isinstance(p, tuple) for p in pairs):
                        local[name] = sorted(pairs, key=lambda p: tuple(
                            (x is not None, x or 0) for x in p))
                        continue
                subscripted = any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                                  and n.value.id == name for n in ast.walk(node))
                iterated = any(isinstance(n, ast.comprehension) and isinstance(n.iter, ast.Name)
                               and n.iter.id == name for n in ast.walk(node))
                if not unk and vals and not subscripted and not iterated:
                    local[name] = sorted(vals, key=lambda x: (x is not None, x or 0))
                elif isinstance(node, ast.Name) and want == "pair":
                    local[name] = "window"
                elif subscripted or iterated:
                    # a pair read off an object the flow does not model, where the tree sets
                    # that attribute: sides of any int
                    local[name] = "wide-window" if self._read_off_set_attribute(fn, name) \
                        else "window"
                elif _window_shaped(node, name, want == "pair" and name not in pseudo and all(
                        d[0] == "param" or _attribute_read(d) for d in fn.defs.get(name, ()))):
                    # compared with ints or None only, or a parameter (or an attribute read
                    # off an object the flow does not model: a value from outside too) as a
                    # side of the pair the expression gives: a bound (the code's own failures
                    # tell; a TypeError is a loud crash, never a silent band); an attribute
                    # read off an object the flow does not model may hold whatever the tree
                    # stores there (a literal -2, ``sliding_window - 1``): any int
                    local[name] = "wide" if self._read_off_set_attribute(fn, name) \
                        else "bound"
                elif self._helper_takes_window(fn, node, name):
                    # handed to an in-tree helper that only uses it as a window or a bound
                    local[name] = "any" if want == "pair" or _passed_on(node, name) else "bound"
                else:
                    # handed to a helper, or read in a way that does not show it is a window
                    # (a string, a flag, a config object...): the window domain proves
                    # nothing about what the helper does with other values
                    return None
            else:
                try:
                    gv = self.solver.eval(fn_context(self.solver, fn), Name(id=name))
                except RecursionError:
                    return None
                if self.solver.module_container_changed(gv):
                    return None     # the sandbox would read its module-level statements only
                if len({v for v, _ in gv}) > 1:
                    # the name may hold several values (a package attribute a submodule's
                    # import replaces, a binding in a branch): the sandbox runs one of them
                    return None
                if _set_from_outside(self.solver, name, gv, node):
                    return None     # likewise: a store elsewhere is not among them
                if _bound_otherwise(self.judge.index.by_path.get(fn.mod.path), name):
                    return None     # a loop/with/match/walrus binding the extraction skips
                module_level.add(name)
        for meth, names, fdef in roots:
            # what a method run as a function reads from its module: the same checks
            for name in sorted(names):
                try:
                    gv = self.solver.eval(fn_context(self.solver, meth), Name(id=name))
                except RecursionError:
                    return None
                if self.solver.module_container_changed(gv) or \
                        _set_from_outside(self.solver, name, gv, fdef):
                    return None
                module_level.add(name)
        info = self.judge.index.by_path.get(site.path)
        if info is None:
            return None
        mod = self.judge.module_for(info.name, module_level, extra)
        key = (mod, src.strip(), tuple(sorted((k, str(v)) for k, v in local.items())))
        self.jobs.append((key, (mod, src.strip(), local), want))
        self.local_of[key] = local
        self.side_of[key] = _unpacked_sides(fn, local, line)
        self.open[key] = any(isinstance(v, str) for v in local.values())
        return key

    def run(self):
        if not self.jobs:
            return
        uniq = {}
        for key, item, _ in self.jobs:
            uniq.setdefault(key, item)
        keys = list(uniq)
        res = self.judge.runner.eval_exprs([uniq[k] for k in keys])
        self.results.update(zip(keys, res))


_DICT_METHODS_FOLLOWED = {"get", "items", "keys", "values", "copy", "update", "setdefault", "pop"}


def _wrapper_positionals(judge, solver, c) -> list[str]:
    """A call through a wrapper binds its positional arguments by the wrapper's signature,
    not FA4's: one past FA4's required arguments, at none of FA4's window positions, may be
    the window the wrapper hands on. Unknown unless it is a constant no window can be
    (a bool, a float, a string); ``*args`` likewise."""
    chained = [v for v, _ in c.get("fa4", ()) if v.chain]
    if not chained:
        return []
    out = []
    for v in chained:
        _params, req = judge.signature(v.entry.name)
        windows = {i for ps in N.WINDOW_POSITIONS.get(v.entry.name, {}).values() for i in ps}
        pos = 0
        for kind, _kw, e, _ in c["call"].args:
            if kind == "*":
                out.append(f"*{expr_label(e)}: positional arguments handed to "
                           f"{v.chain[-1].label} may hold the window (its signature decides)")
                break
            if kind != "p":
                continue
            if pos >= req and pos not in windows:
                vals = [getattr(x, "value", _MISSING) for x, _f in solver.eval(c["ctx"], e)]
                if not vals or not all(isinstance(x, (bool, float, str)) for x in vals):
                    out.append(f"positional argument {pos + 1} ({expr_label(e)}) is handed to "
                               f"{v.chain[-1].label}, whose signature may take it as the window")
            pos += 1
    return sorted(set(out))


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _scope_bindings(scope) -> tuple[set, set, set]:
    """(the names a function, lambda or comprehension scope binds, the names it declares
    ``global``, the names it declares ``nonlocal``), by Python's rules: parameters,
    assignment, ``for``/``with``/``except``/``match`` targets, imports, defs and classes, and
    ``:=`` in its comprehensions; what nested functions, lambdas and classes bind or declare
    is theirs."""
    bound: set = set()
    globals_: set = set()
    nonlocals: set = set()
    if isinstance(scope, _COMPREHENSIONS):
        for g in scope.generators:
            bound |= {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        return bound, globals_, nonlocals
    a = scope.args
    bound |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
              if x is not None}
    todo = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, _COMPREHENSIONS):
            bound |= {m.target.id for m in ast.walk(n)
                      if isinstance(m, ast.NamedExpr) and isinstance(m.target, ast.Name)}
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            (globals_ if isinstance(n, ast.Global) else nonlocals).update(n.names)
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound.add(n.id)
        elif isinstance(n, ast.alias) and n.name != "*":
            bound.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            bound.add(n.rest)
        todo.extend(ast.iter_child_nodes(n))
    return bound - globals_ - nonlocals, globals_, nonlocals


def _scope_gaps(judge, c) -> list[str]:
    """What an FA4 call's arguments read that the flow reads in the wrong scope or at the
    wrong time: a name a lambda or comprehension around the call binds (its parameter or loop
    variable, read by the flow in the enclosing scope), a name of an enclosing function read
    from a nested one (a closure: its value when the inner function runs), and a local read
    inside a lambda or generator expression (it runs later, after rebindings and changes the
    flow reads as later than the call). Each is unknown."""
    fn = c["fn"]
    info = judge.index.by_path.get(fn.mod.path)
    if info is None or info.tree is None:
        return ["the call's source could not be read"]
    node = info.calls_at().get((c["call"].pos[0], c["call"].pos[1]))
    if node is None:
        return []
    exprs = [k.value for k in node.keywords] + node.args
    reads = {n.id for e in exprs for n in ast.walk(e)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    scopes = []
    p = parent_of(node)
    while p is not None:
        if isinstance(p, (ast.Lambda, ast.ClassDef) + _FUNCTION_SCOPES + _COMPREHENSIONS):
            scopes.append(p)
        p = parent_of(p)
    if not reads or not scopes or isinstance(scopes[0], ast.ClassDef):
        return []
    if not any(isinstance(s, (ast.Lambda,) + _COMPREHENSIONS) for s in scopes) and \
            sum(isinstance(s, _FUNCTION_SCOPES) for s in scopes) <= 1:
        return []           # straight in one function (or a method): the flow's own reading
    bindings = {}
    out = []
    for name in sorted(reads):
        deferred = None        # the lambda or generator expression the read waits in
        functions = 0
        for s in scopes:
            if isinstance(s, ast.ClassDef):
                continue        # a class body's names are not seen from inside it
            if id(s) not in bindings:
                bindings[id(s)] = _scope_bindings(s)
            bound, globals_, nonlocals = bindings[id(s)]
            kind = "lambda" if isinstance(s, ast.Lambda) else \
                "comprehension" if isinstance(s, _COMPREHENSIONS) else "function"
            if name in bound:
                where = f"{info.path}:{s.lineno}"
                if kind != "function":
                    out.append(f"{name} is bound by the {kind} around the call ({where}); the "
                               "pass reads it in the enclosing scope")
                elif functions:
                    out.append(f"{name} is read through a closure over {s.name}'s local "
                               f"({where}): its value when the inner function runs is not "
                               "followed")
                elif deferred is not None:
                    out.append(f"{name} is read when the {deferred} around the call runs, "
                               f"after what {s.name} may bind or change later ({where})")
                break
            if name in globals_:
                break           # global: the module's
            if kind == "function":      # nonlocal too: the enclosing function's
                functions += 1
            elif deferred is None and isinstance(s, (ast.Lambda, ast.GeneratorExp)):
                deferred = "lambda" if isinstance(s, ast.Lambda) else "generator expression"
    return out


def _splat_gaps(judge, solver, c) -> list[str]:
    """``**kw`` at an FA4 call: a dict the flow layer sees only partly. Reported: a dict held in
    an attribute or container (other code may add keys), and a local dict handed to a callee
    the flow does not follow (an external function may put any window in it)."""
    from analyzer.sites.escape import _in_tree_callee

    fn = c["fn"]
    info = judge.index.by_path.get(fn.mod.path)
    if info is None or info.tree is None:
        return ["the call's source could not be read"]
    line, col = c["call"].pos[0], c["call"].pos[1]
    node = info.calls_at().get((line, col))
    if node is None or not any(k.arg is None for k in node.keywords):
        return []
    scope = info.function_at(fn.name, line) if fn.ir is not None else None
    out = []
    for k in node.keywords:
        if k.arg is not None:
            continue
        v = k.value
        if isinstance(v, (ast.Attribute, ast.Subscript)):
            out.append(f"**{ast.unparse(v)}: a dict held in an attribute or container; keys "
                       "other code sets there are not followed")
            continue
        if not isinstance(v, ast.Name) or scope is None:
            continue
        name = v.id
        keep = None if indexed(scope) else astutil_index(scope)  # noqa: F841 - parents below
        for n in walk(scope):
            if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
                continue
            p = parent_of(n)
            if isinstance(p, ast.keyword) and p.arg is None:
                continue                                  # a ** splat
            if isinstance(p, ast.Subscript) and p.value is n:
                continue                                  # kw[...] read or store
            if isinstance(p, ast.Dict) and any(kk is None and vv is n
                                               for kk, vv in zip(p.keys, p.values)):
                continue                                  # {**kw, ...}: a copy, read
            if isinstance(p, ast.Attribute) and p.value is n and p.attr in _DICT_METHODS_FOLLOWED:
                continue
            if isinstance(p, (ast.Compare, ast.If, ast.BoolOp, ast.UnaryOp)):
                continue
            if isinstance(p, ast.Call) and n in p.args and _in_tree_callee(solver, fn, p):
                continue                                  # the flow follows it into the helper
            if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and \
                    p.func.id == "dict" and not _binds_name(info.tree, "dict"):
                continue                                  # dict(kw, ...): a copy, read
            if isinstance(p, ast.Call):
                out.append(f"**{name}: the dict is handed to {ast.unparse(p.func)}(...), which "
                           "may put any window in it")
            elif isinstance(p, ast.Attribute):
                out.append(f"**{name}: the dict's .{p.attr}(...) is not followed")
            else:
                out.append(f"**{name}: the dict is used where the flow does not follow it "
                           f"({type(p).__name__})")
    return out


# a line that may write a negative sentinel where a window goes
# (a -1 is the convention itself: only a number from 2 on, a parenthesised expression, a
# name such as ``inf``, or ``~``)
_SENTINEL_TEXT = re.compile(rb"(?i)window\w*[\"']?\s*[:=]\s*[\[(]?[^\n\[]{0,160}?"
                            rb"(?:-\s*(?:1\d|[2-9]|[(A-Za-z_.])|~)")


# a constant bound to a name (``INT32_MIN = -(2 ** 31)``, ``NO_LIMIT = float("-inf")``)
_NEGATIVE_BINDING = re.compile(rb"(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*"
                               rb"((?:-|~|float\(|math\.)[^\n#]*)")


def _window_sentinels(index) -> set:
    """``Judge.tree_window_sentinels`` over every file whose text may hold one: a negative
    constant written where a window goes, or a name bound to one (anywhere in the tree)."""
    out: set = set()
    named: dict = {}
    for info in index.by_path.values():
        for m in _NEGATIVE_BINDING.finditer(info.raw):
            try:
                x = _negative_constant(ast.parse(m.group(2).decode("utf-8", "replace").strip(),
                                                 mode="eval").body)
            except (SyntaxError, ValueError):
                continue
            if x is not None:
                named.setdefault(m.group(1).decode(), set()).add(x)
    via = re.compile(rb"(?i)window\w*[\"']?\s*[:=]\s*[\[(]?[^\n\[]{0,160}?\b(?:" +
                     b"|".join(re.escape(n.encode()) for n in sorted(named)) + rb")\b") \
        if named else None
    for rel, info in sorted(index.by_path.items()):
        if b"window" not in info.raw.lower() or not (
                _SENTINEL_TEXT.search(info.raw) or (via is not None and via.search(info.raw))):
            continue
        tree = info.bare_tree
        if tree is None:
            continue
        for n in ast.walk(tree):
            values = []
            if isinstance(n, ast.keyword) and n.arg and "window" in n.arg.lower():
                values.append(n.value)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = n.args
                pos = a.posonlyargs + a.args
                values += [d for p, d in zip(pos[len(pos) - len(a.defaults):], a.defaults)
                           if "window" in p.arg.lower()]
                values += [d for p, d in zip(a.kwonlyargs, a.kw_defaults)
                           if d is not None and "window" in p.arg.lower()]
            elif isinstance(n, ast.Dict):
                # ``{"window_left": -2, ...}``: a config read by key elsewhere
                values += [v for k, v in zip(n.keys, n.values)
                           if isinstance(k, ast.Constant) and isinstance(k.value, str)
                           and "window" in k.value.lower()]
            elif isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any("window" in (t.id if isinstance(t, ast.Name) else
                                    t.attr if isinstance(t, ast.Attribute) else "").lower()
                       for t in targets):
                    values.append(n.value)
            for v in values:
                for e in value_leaves(v):
                    x = _negative_constant(e)
                    if x is not None:
                        out.add(x)
                    elif isinstance(e, (ast.Name, ast.Attribute)):
                        out |= named.get(e.id if isinstance(e, ast.Name) else e.attr, set())
    return out


def _negative_constant(e):
    """The int below -1 a constant expression spells (``-2``, ``-(2 ** 31)``, ``~1``,
    ``-(1 << 31)``), -2 for a negative infinity (``float("-inf")``, ``-math.inf``); else None."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "float" \
            and len(e.args) == 1 and isinstance(e.args[0], ast.Constant) \
            and isinstance(e.args[0].value, str) and \
            e.args[0].value.strip().lower() in ("-inf", "-infinity"):
        return -2
    if not isinstance(e, ast.UnaryOp) or not isinstance(e.op, (ast.USub, ast.Invert)):
        return None
    if isinstance(e.op, ast.USub) and (
            isinstance(e.operand, ast.Attribute) and e.operand.attr == "inf" or
            isinstance(e.operand, ast.Call) and isinstance(e.operand.func, ast.Name)
            and e.operand.func.id == "float"):
        return -2
    try:
        v = _small_int_eval(e)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
    return v if v is not None and v < -1 else None


def _small_int_eval(e):
    """The value of an int expression of constants, unary and binary operators (small
    powers and shifts only); None when it is not one."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.Invert, ast.UAdd)):
        v = _small_int_eval(e.operand)
        if v is None:
            return None
        return -v if isinstance(e.op, ast.USub) else ~v if isinstance(e.op, ast.Invert) else v
    if isinstance(e, ast.BinOp):
        a, b = _small_int_eval(e.left), _small_int_eval(e.right)
        if a is None or b is None:
            return None
        if isinstance(e.op, (ast.Pow, ast.LShift)) and (b < 0 or b > 64):
            raise ValueError("too big")
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.Pow: lambda: a ** b, ast.LShift: lambda: a << b, ast.RShift: lambda: a >> b,
               ast.FloorDiv: lambda: a // b, ast.BitOr: lambda: a | b, ast.BitAnd: lambda: a & b}
        f = ops.get(type(e.op))
        return f() if f is not None else None
    return None


def _binds_name(tree, name: str) -> bool:
    """Some statement of ``tree`` binds ``name`` (a store, a ``def``/``class``, an import, a
    ``global``), so that it may not be the builtin."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                n.name == name:
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) == name or a.name == "*" for a in n.names):
            return True
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return True
        if isinstance(n, ast.arg) and n.arg == name:
            return True
    return False


def _splat_helpers_proved(judge, solver, c, text) -> dict:
    """``fa4(..., **helper(kw))`` with ``helper`` a function of the tree: the helper is a
    call-site normaliser of the keywords it returns. It is run like a wrapper -- a virtual
    layer ``lambda *a, **kw: fa4(*a, **helper(kw))`` outside the call's own chain -- over every
    keyword form; where that is proved, nothing that arrives through the splat needs judging
    (id of the splat expression -> the helper's label)."""
    from analyzer.sites.flow import FuncRef, fn_context

    out = {}
    fn = c["fn"]
    values = [v for v, _ in c["fa4"]]
    for kind, _kw, e, _pos in c["call"].args:
        if kind != "**" or not isinstance(e, Call) or len(e.args) != 1 or e.args[0].kind != "p":
            continue
        ctx = fn_context(solver, fn)
        try:
            callees = [v for v, _ in solver.eval(ctx, e.func)]
        except RecursionError:
            continue
        if not callees or not all(isinstance(v, FuncRef) and solver.fns.get(v.key) is not None
                                  and solver.fns[v.key].ir is not None
                                  and "." not in solver.fns[v.key].qualname for v in callees):
            continue
        src = text.span(fn.mod.path, tuple(e.pos[:4]))
        try:
            node = ast.parse(src.strip(), mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
            continue
        func_src = ast.unparse(node.func)
        info = judge.index.by_path.get(fn.mod.path)
        if info is None:
            continue
        mod = judge.module_for(info.name, BH.free_names(node.func))
        ext = judge.runner.modules[mod]
        if ext.refused:
            continue
        layer = BH.Layer(f"**{func_src}(...)", module=mod,
                         template=f"(lambda *__a, **__kw: __fa4_inner__(*__a, **{func_src}(__kw)))",
                         names_window=True)
        ok = True
        for v in values:
            if v.entry.name not in N.WINDOW_ENTRIES:
                continue
            layers = tuple(judge.layer(w) for w in v.chain) + (layer,)
            params, req = judge.signature(v.entry.name)
            res = judge.runner.verify_chains([(layers, v.entry.name, tuple(params), req)])[0]
            fam = res.families.get("keyword") if getattr(res, "families", None) else None
            if (fam or res).status != "proved":
                ok = False
                break
        if ok and values:
            out[id(e)] = func_src
    return out


def _own_signature(fn):
    """(parameter names, leading required count) of a decorated function that takes a window
    parameter of FA4's names (``window_size``, or ``window_size_left``/``_right``) and
    ``causal``, and no ``*``/``**`` parameter, else None (it is then run with FA4's own forms).
    The leading count stops at the first window or ``causal`` parameter."""
    names = [p.name for p in fn.params if p.kind in ("pos", "kwonly")]
    keys = {"window_size", "window_size_left", "window_size_right"}
    if not keys & set(names) or "causal" not in names or \
            any(p.kind in ("var", "kw") for p in fn.params):
        return None
    pos = [p for p in fn.params if p.kind == "pos"]
    lead = 0
    for p in pos:
        if p.name in keys or p.name == "causal" or p.default is not None:
            break
        lead += 1
    if "window_size" in names and not {"window_size_left", "window_size_right"} & set(names):
        return tuple(names), lead
    if {"window_size_left", "window_size_right"} <= set(names) and "window_size" not in names:
        return tuple(names), lead
    return None


def _one_raw_entry(c) -> str | None:
    """The one FA4 entry point a call reaches unwrapped, or None (none, or several)."""
    names = {v.entry.name for v, _ in c["fa4"] if not v.chain}
    return next(iter(names)) if len(names) == 1 else None


def _extra_keywords(call) -> frozenset:
    """The keywords a call spells besides the window and ``causal``."""
    skip = set(N.WINDOW_KEYS) | {"causal"}
    return frozenset(a.kw for a in call.args if a.kind == "k" and a.kw not in skip)


def _causal_indexes(judge, values) -> set:
    """Every position ``causal`` has had in the entries ``values`` reach: the audited
    release's signature, and ``CAUSAL_POSITIONS`` (the index moved between releases)."""
    indexes: set = set()
    for v in values:
        params, _req = judge.signature(v.entry.name)
        if "causal" in params:
            indexes.add(params.index("causal"))
        indexes.update(N.CAUSAL_POSITIONS.get(v.entry.name, ()))
    return indexes


def _causal_values(solver, c, judge=None):
    """What ``causal`` can be at this call: (values, known). By keyword, or by position at
    every index ``causal`` has had in the entries the call reaches (the audited release's
    signature, and ``CAUSAL_POSITIONS``: the index moved between releases, so a positional
    ``causal`` of one release is another argument of the next)."""
    call, ctx = c["call"], c["ctx"]

    def consts(e):
        out = set()
        for v, _f in solver.eval(ctx, e):
            val = getattr(v, "value", _MISSING)
            if val is None:
                val = False                   # FA4 tests ``if causal``: None reads as False
            if not isinstance(val, bool):
                return None
            out.add(val)
        return out or None

    indexes = _causal_indexes(judge, [v for v, _ in c.get("fa4", ())]) \
        if judge is not None else set()
    positional = []
    exact = True                  # every positional argument is at a known index
    for kind, kw, e, _ in call.args:
        if kind == "k" and kw == "causal":
            out = consts(e)
            return ((tuple(sorted(out, reverse=True)), True) if out else ((True, False), False))
        if kind == "*":
            exact = False
        if kind == "p" and exact:
            positional.append(e)
    if not indexes:
        return (True, False), False
    seen: set = set()
    for i in sorted(indexes):
        if i < len(positional):
            out = consts(positional[i])
            if out is None:
                return (True, False), False
            seen |= out
        elif not exact or any(a.kind == "**" for a in call.args):
            return (True, False), False       # a splat may carry it
        else:
            seen.add(False)                   # not passed: FA4's default
    # a positional argument at an index where causal sits on some releases only: which
    # value FA4 takes as causal depends on the release, so the values are not exact
    moved = len(indexes) > 1 and len(positional) > min(indexes)
    return tuple(sorted(seen, reverse=True)), not moved


# callables from outside the tree that hand a function back unchanged in what it is called
# with (a compiler switch, a cache): a wrapping call of one of these is taken to pass windows
# through; any other outside callable is code the pass cannot read
_PASS_THROUGH = frozenset({
    "torch.compile", "torch._dynamo.disable", "torch.compiler.disable",
    "torch._disable_dynamo", "torch.jit.ignore", "torch.jit.unused",
    "torch._dynamo.allow_in_graph", "torch.compiler.allow_in_graph",
    "functools.cache", "functools.lru_cache", "functools.wraps",
    # a proxy calls its referent with the same arguments; a reference called with arguments
    # raises (no window reaches FA4), called with none it gives FA4 back (the flow reads that)
    "weakref.proxy", "weakref.ref",
})
_MISSING = object()
_ANY_NAME = "<any name: code that cannot be read>"


MAX_SHAPES = 32
_RUNS_EXEC = re.compile(rb"(?<![\w.])exec[ \t]*\(")
VALUE = "\0<value>"       # a keyword argument that is not a constant: a stand-in in the sandbox
_SPLAT = "\0**"           # a call's ``**`` splat (``_behaviour_child.SPLAT``)
_CAUSAL = "\0causal"      # how a call passes ``causal`` (``_behaviour_child.CAUSAL``)
_ABSENT = "\0absent"      # ... not at all (``_behaviour_child.ABSENT``)
_SEQUENCES = ("sequences",)   # among a chain's shapes: run it with other window sequences too
_NOT_SHAPE = frozenset(N.WINDOW_KEYS) | {"causal"}   # what FA4's own forms pass: not a shape


def _outside_shapes(params: tuple, required: int) -> tuple:
    """Shapes a caller outside the tree may use, beside FA4's own forms: one and all of the
    optional parameters before ``causal`` and the window given by position, and every optional
    parameter given by keyword (as None, FA4's usual default). A wrapper that counts its
    arguments is then run on both ends of the counts (an exact count in between is a gap)."""
    stop = min((i for i, p in enumerate(params) if p == "causal" or p in N.WINDOW_KEYS),
               default=len(params))
    out = [(n, (), "outside") for n in sorted({required + 1, stop}) if required < n <= stop]
    every = tuple(sorted((p, None) for p in params[required:] if p not in _NOT_SHAPE))
    if every:
        out.append((required, every, "outside"))
    return tuple(out)


def call_shape(call) -> tuple | None:
    """(positional count, ((keyword, constant or VALUE), ...)) of a call, its window and
    ``causal`` left out; None when a ``*`` splat hides how many it passes. Keywords from a
    ``**`` splat are not listed (the sandbox runs FA4's own forms beside these)."""
    args = getattr(call, "args", None)
    if args is None or any(a.kind == "*" for a in args):
        return None
    extra = []
    for a in args:
        if a.kind == "k" and a.kw not in _NOT_SHAPE:
            val = a.value
            const = isinstance(val, Lit) and (val.value is None or type(val.value) in
                                              (bool, int, float, str))
            extra.append((a.kw, val.value if const else VALUE))
    if any(a.kind == "**" for a in args):
        # what the splat carries is run as every keyword the wrapper names
        extra.append((_SPLAT, VALUE))
    else:
        # how the call passes ``causal``: a constant as written, or not at all (FA4's
        # default; a wrapper may branch on ``"causal" in kwargs``); the child keeps a value
        # passed by position
        given = [a for a in args if a.kind == "k" and a.kw == "causal"]
        if not given:
            extra.append((_CAUSAL, _ABSENT))
        elif isinstance(given[0].value, Lit) and (given[0].value.value is None or
                                                  type(given[0].value.value) in (bool, int)):
            extra.append((_CAUSAL, given[0].value.value))
    # the order the call writes its keywords in, when it passes more than one ("**": where a
    # splat's keywords go, ``f(q, k, v, **extra, window_size=w)``)
    order = tuple(a.kw if a.kind == "k" else "**" for a in args if a.kind in ("k", "**"))
    return (sum(1 for a in args if a.kind == "p"), tuple(sorted(extra))) + \
        ((order,) if len(order) > 1 else ())


def _site_form(solver, site, expr) -> str:
    """The family of call forms a window input takes (``behaviour.FAMILIES``): positional, or
    keyword narrowed to the container a ``window_size`` value is built as where it is one."""
    from analyzer.sites.coverage import window_containers

    if site.style == "positional":
        return "positional"
    if site.key == "window_size":
        kinds = window_containers(solver, site.fn, expr, site_line(site))
        if "built" in kinds:
            return BH.KEYWORD_ANY
        if kinds == {"tuple"}:
            return BH.KEYWORD_TUPLE
        if kinds == {"list"}:
            return BH.KEYWORD_LIST
    return "keyword"


def _verdicts_with_prefills(judge, c, values, wv: WindowValues, plan, unknown):
    """``judge.call_verdicts``, where the FA4 values reached through a chain of
    ``functools.partial`` calls only (``Judge.prefills``) are judged as FA4 itself called with
    the merged arguments: the partial's ``causal`` where the call passes none, its window
    where the call hands FA4 no window input. A partial changes no argument the call passes,
    so it is no wrapper to prove; its keywords are part of the call."""
    plain, merged = [], []
    passes_window = bool(plan["pairs"] or unknown or plan["opairs"] or plan["forms"])
    # by keyword, by a splat, or by position at any index causal has had in these entries
    npos = sum(1 for a in c["call"].args if a.kind == "p")
    passes_causal = any(a.kind in ("*", "**") or (a.kind == "k" and a.kw == "causal")
                        for a in c["call"].args) or \
        any(i < npos for i in _causal_indexes(judge, values))
    # the window keys the call itself writes (a splat or a positional window may hold any)
    written = {a.kw for a in c["call"].args if a.kind == "k"}
    opaque = any(a.kind in ("*", "**") for a in c["call"].args) or \
        plan["forms"] - {"keyword"} or unknown
    unread = []
    for v in values:
        got = judge.prefills(v.chain)
        if got is None:
            plain.append(v)
            continue
        if got.why:
            # what the partial binds is what the call hands FA4: unbounded, so unknown (never
            # run as a wrapper that should pass the call's window through: it replaces it)
            unread.append((v, got.why))
            continue
        inner, pre = got.inner, got.values
        pairs, causal, known = wv.pairs, wv.causal, wv.causal_known
        opairs = wv.open_pairs
        split = set(pre) & {"window_size_left", "window_size_right"}
        if passes_window and split and not opaque and \
                "window_size" not in pre and "window_size" not in written and \
                not split & written and \
                all(x is None or type(x) is int for k in split for x in pre[k]):
            # ``partial(_flash_attn_bwd, window_size_right=0)`` called with
            # ``window_size_left=wl`` only: FA4 gets the call's side and the partial's
            def fill(ps, pre=pre, split=split):
                return frozenset(
                    (l2, r2) for l, r in ps
                    for l2 in (pre["window_size_left"] if "window_size_left" in split else (l,))
                    for r2 in (pre["window_size_right"] if "window_size_right" in split
                               else (r,)))
            pairs, opairs = fill(pairs), fill(opairs)
        elif passes_window and set(pre) & set(N.WINDOW_KEYS):
            plain.append(v)
            continue
        if not passes_window and set(pre) & set(N.WINDOW_KEYS):
            cand = pre["window_size"] if "window_size" in pre else frozenset(itertools.product(
                pre.get("window_size_left", (None,)), pre.get("window_size_right", (None,))))
            if not all(isinstance(p, tuple) and len(p) == 2 and all(
                    x is None or type(x) is int for x in p) for p in cand):
                plain.append(v)
                continue
            pairs = frozenset(cand)
        if not passes_causal and "causal" in pre:
            if not all(isinstance(x, (bool, type(None))) for x in pre["causal"]):
                plain.append(v)
                continue
            causal, known = tuple(sorted({bool(x) for x in pre["causal"]})), True
        raw = FAFunc(v.entry, inner, v.binding, v.via + (
            f"through {' -> '.join(w.label for w in reversed(v.chain[len(inner):]))}, judged "
            f"with the keywords it binds",))
        if inner:
            # the layers inside the partials receive the call's arguments and its keywords
            judge.add_shape(raw, c["call"], BH.KEYWORD_ANY in plan["forms"])
        merged.append((raw, dataclasses.replace(wv, pairs=pairs, causal=causal,
                                                causal_known=known, open_pairs=opairs)))
    if not merged and not unread:
        return judge.call_verdicts(values, wv)
    parts = [judge.call_verdicts(plain, wv)] if plain else []
    parts += [judge.call_verdicts([raw], w2) for raw, w2 in merged]
    parts += [("unknown", tuple(CallVerdict(r.label, "unknown", f"{v.entry.name} through "
                                            f"{why}; the calls through it pass what it binds")
                                for r in judge.resolvers)) for v, why in unread]
    out = []
    for per in zip(*(p[1] for p in parts)):
        st = worst(x.status for x in per)
        wit = next((x.witness for x in per if x.status == st), "")
        out.append(CallVerdict(per[0].release, st, wit,
                               tuple(dict.fromkeys(q for x in per for q in x.pairs))))
    return worst(x.status for x in out), tuple(out)


def decide(calls, solver, text, judge: Judge) -> None:
    """Fill ``status``/``verdicts`` (and the legacy coverage fields) of every pending call."""
    from analyzer.sites.coverage import window_values

    pending = [c for c in calls if c.get("coverage") == "pending"]
    enum = _Enumerator(judge, solver, text)
    plans = []
    for c in pending:
        plan = {"pairs": set(), "left": set(), "right": set(), "has_left": False,
                "has_right": False, "unknown": [], "forms": set(), "exprs": [],
                "opairs": set(), "oleft": set(), "oright": set(), "ints": set(), "outside": set(), "beyond": set(),
                "mapped": set(), "map_left": set(), "map_right": set()}
        scoped = _scope_gaps(judge, c)
        plan["scope_gaps"] = scoped
        gaps = _splat_gaps(judge, solver, c) + scoped
        frames = judge.frame_hazard()
        if frames:
            gaps = gaps + [frames]
        if gaps:
            plan["unknown"].extend(gaps)
            plan["forms"].add("keyword")
        helped = _splat_helpers_proved(judge, solver, c, text)
        for site, reason, param_of, splat in c["fa4_inputs"]:
            if splat is not None and id(splat) in helped:
                plan["forms"].add("keyword")
                plan["helped"] = helped[id(splat)]
                # the helper was proved on the domain (None, ints >= -1): a side the tree
                # passes outside it (``-(1 << 31)``, ``sw - 1``, ``-1.0``) is not covered
                inner = site is not None and isinstance(site.fn, tuple) and (
                    site.fn[-1] == helped[id(splat)]
                    or str(site.fn[-1]).startswith(helped[id(splat)] + "."))
                # (a store the helper makes itself was run with it: proved)
                odd = _outside_domain(solver, site) if site is not None and not inner else ""
                if odd:
                    why = (f"{site.key} at {site.path}:{site.pos[0]} can be {odd}, handed to "
                           f"**{helped[id(splat)]}(...), which was proved on None and integers "
                           ">= -1 only")
                    plan["unknown"].append(why)
                    plan["beyond"].add(why)
                continue
            overwritten = _overwritten(c, site, splat, solver, judge) or \
                _guard_hidden(judge, solver, c, site, splat)
            if overwritten == "hidden":
                plan["forms"].add("keyword")
                continue
            if site is None:
                plan["unknown"].append(reason)
                if reason and reason.startswith("**"):
                    plan["forms"].add("keyword")          # a ** splat only carries keywords
                elif reason and reason.startswith("*"):
                    plan["forms"].add("positional")
                else:
                    plan["forms"] |= {"keyword", "positional"}
                continue
            expr = solver.exprs[site.expr_id]
            plan["forms"].add(_site_form(solver, site, expr))
            # a value chosen by a condition (``None if left < 0 else left``) is run in the
            # sandbox on its inputs: the flow takes both branches for every input
            branchy = enum.branches(site)
            # every int a side can be, bounded or not (a parameter's default of -2): in the
            # grid the wrappers are run on
            paired = _pair_by_call(solver, site)
            for a in _side_atoms(solver, site):
                if a[0] == "int":
                    plan["ints"].add(a[1])
                elif len(a) > 3:
                    plan["outside"].add(f"{a[3]!r} at {site.path}:{site.pos[0]}")
                elif _beyond_convention(a, paired):
                    plan["beyond"].add(f"{site.key} at {site.path}:{site.pos[0]}: {a[1]}")
            if site.key == "window_size":
                p, unk = _pair_values(solver, site.fn, expr, line=site_line(site))
                if unk or not branchy:
                    plan["pairs"] |= p
                if unk:
                    k = enum.job_for(site, "pair")
                    plan["exprs"].append((site, "window_size", k, unk, None))
                elif branchy:
                    k = enum.job_for(site, "pair")
                    plan["exprs"].append((site, "window_size", k, [], p))
            else:
                side = "left" if site.key == "window_size_left" else "right"
                plan["has_" + side] = True
                vals, unk = _atoms_to_values(window_values(solver, site.fn, expr, None,
                                                           line=site_line(site)))
                # a condition over a value from outside: the sandbox's values of the whole
                # expression stand, not the flow's reading of both branches (``None if left
                # < 0 else left`` never passes the -1 its else-branch names)
                if not branchy:
                    plan[side] |= vals
                if unk:
                    k = enum.job_for(site, "bound")
                    plan["exprs"].append((site, side, k, unk, None))
                elif branchy:
                    k = enum.job_for(site, "bound")
                    plan["exprs"].append((site, side, k, [], vals))
        plans.append(plan)
    # sentinels below -1 the tree itself writes as a window anywhere (``window_size=(-2, 0)``
    # through a partial, a stored function, a method: routes the flow may not follow): every
    # chain and call-site expression is also run on them, so a normaliser proved only on the
    # convention (the "exactly -1" spelling) is not trusted in a tree that breaks it
    consts = set(judge.tree_window_sentinels())
    judge.runner.extra_consts |= consts
    enum.run()
    for plan in plans:
        for site, where, k, unk, flow_values in plan["exprs"]:
            r = enum.results.get(k) if k is not None else None
            loc = f"{site.path}:{site.pos[0]}"
            if flow_values is not None and (r is None or not r.ok or enum.open.get(k, True)):
                # the sandbox could not give exact values: the flow's (both branches) stand
                if where == "window_size":
                    plan["pairs"] |= flow_values
                else:
                    plan[where] |= flow_values
                continue
            if (r is None or not r.ok) and where == "window_size":
                # what the flow itself reads off the expression (every return of a helper,
                # both branches of a condition) when every value it gives is a known pair
                fp = _flow_pairs(solver, site)
                if fp:
                    plan["pairs"] |= fp
                    continue
            if r is None or not r.ok:
                why = r.why if r is not None else \
                    enum.why_not.get(id(site), "its expression cannot be evaluated")
                detail = "" if why.startswith("with {") else f" ({why})"
                plan["unknown"].append(f"{site.key} at {loc}: {unk[0]}{detail}")
                continue
            is_open = enum.open.get(k, True)
            mapped, unmapped = _normalising_map(r, enum.local_of.get(k), is_open,
                                                enum.map_src.get(k) or k[1], where,
                                                enum.side_of.get(k) or {})
            if unmapped:
                plan["unknown"].append(f"{site.key} at {loc}: {unmapped}")
                continue
            if where == "window_size":
                plan["mapped"] |= mapped
            else:
                plan["map_" + where] |= mapped
            for v in r.values:
                if where == "window_size":
                    if v is None:
                        v = (None, None)
                    if isinstance(v, tuple) and len(v) == 2:
                        plan["opairs" if is_open else "pairs"].add(v)
                    else:
                        plan["unknown"].append(f"{site.key} at {loc} can be {v!r}")
                else:
                    plan[("o" + where) if is_open else where].add(v)
        if plan["has_left"] or plan["has_right"]:
            lefts = plan["left"] | ({None} if not plan["has_left"] else set())
            rights = plan["right"] | ({None} if not plan["has_right"] else set())
            plan["pairs"] |= {(l, r) for l in lefts for r in rights}
            if plan["oleft"] or plan["oright"]:
                ol = plan["oleft"] | lefts
                orr = plan["oright"] | rights
                plan["opairs"] |= {(l, r) for l in ol for r in orr} - plan["pairs"]
            if plan["map_left"] or plan["map_right"]:
                # a side the call changes (``0 if l < 0 else l``) is judged input against
                # output, beside every value the other side can be
                def runs(side, plain):
                    return ({((x,), (x,), False) for x in plain}
                            | {((x,), (x,), True) for x in plan["o" + side]}
                            | plan["map_" + side])
                for il, ol_, o1 in runs("left", lefts):
                    for ir, or_, o2 in runs("right", rights):
                        if il + ir != ol_ + or_:
                            plan["mapped"].add((il + ir, ol_ + or_, o1 or o2))
        for p in plan["pairs"] | plan["opairs"]:
            consts |= {x for x in p if isinstance(x, int) and not isinstance(x, bool)}
        consts |= {x for x in plan["ints"] if isinstance(x, int) and not isinstance(x, bool)}
        for v, _ in c["fa4"]:
            # the bounds a partial binds reach the layers inside it
            got = judge.prefills(v.chain)
            for vals in (got.values.values() if got else ()):
                for x in vals:
                    consts |= {y for y in (x if isinstance(x, tuple) else (x,))
                               if type(y) is int}
    if consts - judge.runner.extra_consts:
        # every bound a call passes is in the chains' grid (judged once, in one batch)
        judge.runner.extra_consts |= consts
        judge._chain.clear()
        judge.runner._chain_cache.clear()
    for c, plan in zip(pending, plans):
        for v, _ in c["fa4"]:
            judge.add_shape(v, c["call"], BH.KEYWORD_ANY in plan["forms"])
    judge.chains([v for c in pending for v, _ in c["fa4"]])
    for c, plan in zip(pending, plans):
        good = [p for p in plan["pairs"] if all(
            x is None or (isinstance(x, int) and not isinstance(x, bool)) for x in p)]
        bad = [p for p in plan["pairs"] if p not in good]
        unknown = list(dict.fromkeys(plan["unknown"] + [f"window {p!r} is not ints" for p in bad]))
        causal, known = _causal_values(solver, c, judge)
        if not plan["pairs"] and not unknown:
            pairs = frozenset({(None, None)})       # no window reaches it: FA4's default
        else:
            pairs = frozenset(good)
        opairs = frozenset(p for p in plan["opairs"] if all(
            x is None or (isinstance(x, int) and not isinstance(x, bool)) for x in p))
        if not plan["pairs"] and not unknown and opairs:
            pairs = frozenset()
        wv = WindowValues(pairs, tuple(sorted(unknown)), causal, known,
                          # a call that hands FA4 no window input passes none: FA4's
                          # default, by the keyword-family forms (none by position)
                          forms=BH.merged_forms(plan["forms"] or {"keyword"}),
                          open_pairs=opairs,
                          outside=tuple(sorted({P.fmt_pair(*p) for p in bad}
                                               | plan["outside"])),
                          beyond=tuple(sorted(plan["beyond"])),
                          mapped=frozenset(plan["mapped"]),
                          extra_keywords=_extra_keywords(c["call"]),
                          chain_gaps=tuple(_wrapper_positionals(judge, solver, c)))
        values = sorted({v for v, _ in c["fa4"]}, key=lambda v: (v.entry.qual, str(v.chain)))
        status, verdicts = _verdicts_with_prefills(judge, c, values, wv, plan, unknown)
        if status == "unknown":
            fw = judge.forwarder(c)
            if fw is not None and fw.status == "proved":
                status = "proved"
                verdicts = tuple(CallVerdict(v.release, "proved", f"the windows arrive through "
                                             f"{fw.witness}") for v in verdicts)
        inside = judge.inside_proved_wrapper(c["fn"])
        if not inside:
            # a call with no window input passes none: FA4's default, a keyword-family form
            for v in values:
                judge.forms_used.setdefault((v.chain, v.entry.name), set()).update(
                    wv.forms or {"keyword"})
        if inside:
            status = "proved"
            verdicts = tuple(CallVerdict(v.release, "proved", f"inside {inside}")
                             for v in verdicts)
        elif status == "broken" and plan["scope_gaps"]:
            # the pairs were read in the wrong scope (a lambda's parameter read as the
            # module's name of that spelling): what they break is no evidence either way
            why = plan["scope_gaps"][0]
            verdicts = tuple(CallVerdict(v.release, "unknown", f"{why}; as the pass reads it: "
                                         f"{v.witness}", v.pairs)
                             if v.status == "broken" else v for v in verdicts)
            status = worst(v.status for v in verdicts)
        c["status"] = status
        c["verdicts"] = verdicts
        c["coverage"] = "covered" if status == "proved" else "uncovered"
        c["why"] = next((v.witness for v in verdicts if v.status == status), "")
        c["unwrapped"] = [v for v in values if not judge.normalised(v)] if status != "proved" else []
