"""Version gates: every comparison that selects a FlashAttention backend by installed version.

Read from the tree with ``ast`` (never from a list of known lines):

1. *Version sources*: a call whose callee's name contains ``version`` with one string literal
   naming a FlashAttention distribution (``get_pkg_version("flash-attn-4")``,
   ``importlib.metadata.version("flash_attn")``). The name it is stored under carries that
   distribution.
2. *Flow*, by terminal name (``fa_utils.fa4_version`` and ``FlashAttentionUtils.fa4_version``
   are one key), tree-wide and flow-insensitive (an over-approximation): assignments,
   ``Version(x.public)`` rewraps, conditional expressions, and call arguments bound to the
   parameters of the functions of that name. A key assigned only constant versions
   (``PkgVersion("2.1.1")``) is a constant with that set of candidate values.
3. *Gates*: every comparison that reads a distribution-carrying key (``v > Version("4.0.0b")``,
   ``v.major == 4``, ``v.release[:2] >= (2, 7)``), widened to the whole boolean expression it
   sits in. Its *effect* is read from where that expression stands: assigned to a flag
   (``use_flash_attn_4 = ...``, or ``if ...: use_flash_attn_4 = True``), guarding an import, a
   raise, an assert, or some other branch.
4. *Evaluation* with ``packaging.version`` on every release of every distribution the key can
   carry (``pip index versions --pre``, cached). Conjuncts that do not read the version
   (``torch.cuda.is_available()``) are assumed to hold and listed; a constant with several
   candidate values is tried with each (the result may *depend*); anything else is unknown.

Findings: a release of one distribution that makes flags naming two backends true
(``gate-overlap``), a release whose own backend is not selected (``gate-gap``), an FA4-selecting
gate that accepts releases which break TE's emitted pairs (``breaking-accepted``), and gates
that cannot be evaluated (``gate-unknown``). A flag names a backend when its name carries a
``2``/``3``/``4`` token (``use_flash_attn_4``, ``use_v3``, ``fa4_ok``); overlap and gap are only
judged in a group (same file, function and version key) whose flags name two or more backends,
so a ladder of feature levels (``v2_1_plus``, ``v2_3_plus``) is not mistaken for a selector.
"""

from __future__ import annotations

import ast
import itertools
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from analyzer.errors import AuditError
from analyzer.upgrade.model import GateRecord, Hazard, compact, span
from analyzer.upgrade.releases import FA_DISTS, normalise_dist

OPAQUE = object()          # a value the flow cannot pin down
_PASS_ATTRS = {"public", "base_version"}
_VERSION_ATTRS = {"major", "minor", "micro", "release", "public", "base_version", "pre", "post",
                  "dev", "epoch", "local", "is_prerelease", "is_devrelease", "is_postrelease"}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne}
MAX_COMBOS = 256


class Unknown(Exception):
    """The gate contains something the evaluator does not model."""


def key_of(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def display(key: str) -> str:
    """A flow key as a reader knows it: ``fa4_version`` for ``.fa4_version`` or a parameter."""
    if key.startswith("<read:"):
        return f"version of {key[6:-1]}"
    return key.rsplit(":", 1)[-1].lstrip(".")


def backend_of_flag(name: str) -> str | None:
    """FA2/FA3/FA4 when a flag's name carries exactly one backend token: ``v4``/``fa4`` anywhere
    (``v4_is_installed``, ``use_fa3``), or a bare digit that ends the name or follows ``attn``,
    ``attention``, ``flash``, ``fa``, ``v`` (``use_flash_attn_4``). ``v2_3_plus`` is FA2."""
    tokens = [t for t in re.split(r"_+", name.lower()) if t]
    found = set()
    for i, t in enumerate(tokens):
        m = re.fullmatch(r"(?:v|fa|flashattn|flashattention)([234])", t)
        if m:
            found.add("FA" + m.group(1))
        elif t in ("2", "3", "4") and (i == len(tokens) - 1 or (i > 0 and tokens[i - 1] in
                                       ("attn", "attention", "flash", "fa", "v"))):
            if i > 0 and re.fullmatch(r"(?:v|fa)?[0-9]+", tokens[i - 1]) and tokens[i - 1] not in ("v", "fa"):
                continue   # v2_3: a version ladder, not a backend
            found.add("FA" + t)
    return found.pop() if len(found) == 1 else None


@dataclass
class Module:
    path: str
    tree: ast.Module
    text: str
    ctors: set[str] = field(default_factory=set)     # local names of packaging Version / parse
    keys: dict = field(default_factory=dict)         # id(Name) -> flow key (parameters, class attrs)
    methods: set = field(default_factory=set)        # id(FunctionDef) defined in a class body
    _parents: dict | None = None

    @property
    def parents(self) -> dict:
        """child -> parent, built on first use (only modules that hold a gate need it)."""
        if self._parents is None:
            self._parents = {c: n for n in ast.walk(self.tree) for c in ast.iter_child_nodes(n)}
        return self._parents


def _scope_keys(m: Module) -> None:
    """One walk: the flow key of every Name that is a function parameter (``path:line:name``)
    or stands directly in a class-body assignment (``.name``), and which defs are methods."""
    def visit(node, params, fn_line, cls):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if cls is not None and not isinstance(child, ast.Lambda):
                    m.methods.add(id(child))
                a = child.args
                names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
                names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
                visit(child, names, child.lineno, None)
            elif isinstance(child, ast.ClassDef):
                visit(child, None, None, child)
            else:
                if cls is not None and isinstance(child, (ast.Assign, ast.AnnAssign)):
                    for n in ast.iter_child_nodes(child):
                        if isinstance(n, ast.Name):
                            m.keys[id(n)] = "." + n.id
                elif isinstance(child, ast.Name) and params is not None and child.id in params:
                    m.keys[id(child)] = f"{m.path}:{fn_line}:{child.id}"
                visit(child, params, fn_line, None)
    visit(m.tree, None, None, None)


def _parse_modules(root: Path, package_dir: str | None) -> tuple[list[Module], list[str]]:
    from analyzer.sources import iter_py_files

    mods, notes = [], []
    for p in iter_py_files(root, package_dir):
        rel = p.relative_to(root).as_posix()
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise AuditError(f"{rel}: cannot read ({exc})") from None
        try:
            tree = ast.parse(text, filename=rel)
        except (SyntaxError, ValueError) as exc:
            if "version" in text and ("flash" in text or "Version" in text):
                raise AuditError(f"{rel}: cannot parse ({type(exc).__name__}: {exc}); it may hold "
                                 f"a FlashAttention version gate") from None
            notes.append(f"{rel}: not parsed ({type(exc).__name__}); it mentions no version gate")
            continue
        m = Module(rel, tree, text)
        _scope_keys(m)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("packaging.version",):
                for a in node.names:
                    if a.name in ("Version", "parse"):
                        m.ctors.add(a.asname or a.name)
            if isinstance(node, ast.ImportFrom) and node.module == "packaging":
                for a in node.names:
                    if a.name == "version":
                        m.ctors.add((a.asname or a.name) + ".Version")
                        m.ctors.add((a.asname or a.name) + ".parse")
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "packaging.version":
                        base = a.asname or "packaging.version"
                        m.ctors.update({base + ".Version", base + ".parse"})
                    elif a.name == "packaging":
                        m.ctors.update({"packaging.version.Version", "packaging.version.parse"})
        mods.append(m)
    return mods, notes


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _is_ctor(mod: Module, call: ast.Call) -> bool:
    return _dotted(call.func) in mod.ctors


def _dist_literal(call: ast.Call) -> str | None:
    """The FA distribution a ``...version("flash-attn-4")`` call reads, else None."""
    name = key_of(call.func) or ""
    if "version" not in name.lower() or len(call.args) != 1 or call.keywords:
        return None
    a = call.args[0]
    if isinstance(a, ast.Constant) and isinstance(a.value, str):
        d = normalise_dist(a.value)
        if d in FA_DISTS:
            return d
    return None


class _Consts(dict):
    """key -> every constant value it can hold (OPAQUE when some assignment is not constant),
    computed on first lookup; a cycle of copies adds nothing (least fixpoint of the unions)."""

    def __init__(self, flow):
        super().__init__()
        self._flow = flow
        self._busy: set[str] = set()

    def __missing__(self, k):
        if k in self._busy:
            return set()
        self._busy.add(k)
        out = set(self._flow._direct_consts.get(k, ()))
        for src in self._flow._copies.get(k, ()):
            out |= self[src]
        self._busy.discard(k)
        self[k] = out
        return out

    def get(self, k, default=None):
        return self[k]


class Flow:
    """Flow key -> distributions it can carry, and constant version values it can hold.

    Keys: ``.attr`` for an attribute (receiver ignored: ``fa_utils.v`` and
    ``FlashAttentionUtils.v`` are one key; a name assigned in a class body is that attribute);
    ``path:line:name`` for a function parameter (bound from the function's call sites by name,
    and from its default); a plain name otherwise (tree-wide). A parameter whose function has no
    call site the tree shows by name (``nn.Module.forward`` runs through ``__call__``) also takes
    the values of the same plain name tree-wide: its callers are not visible."""

    def __init__(self, mods: list[Module]):
        self.mods = mods
        self.dists: dict[str, set[str]] = {}
        self.consts: dict[str, set] = {}       # replaced by a lazy _Consts in _solve
        self.reads: list[tuple[str, int, str]] = []     # (path, line, dist) version sources
        self.assigns: list[tuple[str, object, Module]] = []
        self._collect()
        self._solve()

    def fkey(self, mod: Module, node) -> str | None:
        if isinstance(node, ast.Attribute):
            return "." + node.attr
        if not isinstance(node, ast.Name):
            return None
        return mod.keys.get(id(node), node.id)

    def _collect(self):
        defs: dict[str, list] = {}
        for m in self.mods:
            for node in ast.walk(m.tree):
                if isinstance(node, ast.Call):
                    d = _dist_literal(node)
                    if d:
                        self.reads.append((m.path, node.lineno, d))
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, (ast.Tuple, ast.List)):
                            for tt in t.elts:
                                k = self.fkey(m, tt)
                                if k:
                                    self.assigns.append((k, None, m))
                        else:
                            k = self.fkey(m, t)
                            if k:
                                self.assigns.append((k, node.value, m))
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    k = self.fkey(m, node.target)
                    if k:
                        self.assigns.append((k, node.value, m))
                elif isinstance(node, ast.AugAssign):
                    k = self.fkey(m, node.target)
                    if k:
                        self.assigns.append((k, None, m))
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.NamedExpr)):
                    targets = ([node.target] if isinstance(node, (ast.For, ast.AsyncFor, ast.NamedExpr))
                               else [i.optional_vars for i in node.items if i.optional_vars is not None])
                    for t in targets:
                        for tt in ast.walk(t):
                            k = self.fkey(m, tt) if isinstance(tt, (ast.Name, ast.Attribute)) else None
                            if k:
                                self.assigns.append((k, node.value if isinstance(node, ast.NamedExpr) else None, m))
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    is_method = id(node) in m.methods and not any(
                        _dotted(d) == "staticmethod" for d in node.decorator_list)
                    defs.setdefault(node.name, []).append((node, is_method, m))
                    a = node.args
                    pos = a.posonlyargs + a.args
                    for p, dflt in zip(pos[len(pos) - len(a.defaults):], a.defaults):
                        self.assigns.append((f"{m.path}:{node.lineno}:{p.arg}", dflt, m))
                    for p, dflt in zip(a.kwonlyargs, a.kw_defaults):
                        if dflt is not None:
                            self.assigns.append((f"{m.path}:{node.lineno}:{p.arg}", dflt, m))
        bound: set[str] = set()
        for m in self.mods:
            for node in ast.walk(m.tree):
                if not isinstance(node, ast.Call):
                    continue
                for fn, is_method, fm in defs.get(key_of(node.func), ()):
                    a = fn.args
                    pos = [p.arg for p in a.posonlyargs + a.args]
                    if is_method and isinstance(node.func, ast.Attribute) and pos and pos[0] in ("self", "cls"):
                        pos = pos[1:]
                    names = set(pos) | {p.arg for p in a.kwonlyargs}
                    pk = lambda n: f"{fm.path}:{fn.lineno}:{n}"  # noqa: E731
                    if len(defs.get(key_of(node.func), ())) == 1:
                        for name in names:
                            bound.add(pk(name))
                    for i, arg in enumerate(node.args):
                        if isinstance(arg, ast.Starred):
                            for rest in pos[i:]:
                                self.assigns.append((pk(rest), None, m))
                            break
                        if i < len(pos):
                            self.assigns.append((pk(pos[i]), arg, m))
                    for kw in node.keywords:
                        if kw.arg in names:
                            self.assigns.append((pk(kw.arg), kw.value, m))
                        elif kw.arg is None:
                            for name in names:
                                self.assigns.append((pk(name), None, m))
        for fns in defs.values():
            for fn, _, fm in fns:
                a = fn.args
                for p in a.posonlyargs + a.args + a.kwonlyargs:
                    k = f"{fm.path}:{fn.lineno}:{p.arg}"
                    if k not in bound and p.arg not in ("self", "cls"):
                        self.assigns.append((k, ("name", p.arg), fm))

    def _sources(self, expr, mod: Module) -> tuple[set[str], set, list[str]]:
        """(distributions, constant values, keys it copies) of a value stored under a key."""
        if expr is None:
            return set(), {OPAQUE}, []
        if isinstance(expr, tuple):        # ("name", n): a tree-wide plain name
            return set(), set(), [expr[1]]
        if isinstance(expr, ast.Constant):
            if expr.value is None:
                return set(), set(), []
            if isinstance(expr.value, (int, float, str)):
                return set(), {expr.value}, []
            return set(), {OPAQUE}, []
        if isinstance(expr, ast.Call):
            d = _dist_literal(expr)
            if d:
                return {d}, set(), []
            if (_is_ctor(mod, expr) or key_of(expr.func) == "str") and len(expr.args) == 1 and not expr.keywords:
                a = expr.args[0]
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and _is_ctor(mod, expr):
                    try:
                        return set(), {Version(a.value)}, []
                    except InvalidVersion:
                        return set(), {OPAQUE}, []
                return self._sources(a, mod)
            return set(), {OPAQUE}, []
        if isinstance(expr, ast.Attribute) and expr.attr in _PASS_ATTRS:
            ds, cs, ks = self._sources(expr.value, mod)
            return ds, {OPAQUE} if cs else set(), ks     # x.public: x's distributions
        if isinstance(expr, ast.IfExp):
            d1, c1, k1 = self._sources(expr.body, mod)
            d2, c2, k2 = self._sources(expr.orelse, mod)
            return d1 | d2, c1 | c2, k1 + k2
        k = self.fkey(mod, expr)
        if k is not None:
            return set(), set(), [k]
        return set(), {OPAQUE}, []

    def _solve(self):
        """Distributions: seeded by version reads, pushed along copies (a worklist). Constant
        values: collected per key on demand (:meth:`const_values`)."""
        self._direct_consts: dict[str, set] = {}
        self._copies: dict[str, list[str]] = {}
        edges: dict[str, set[str]] = {}
        todo = []
        for k, expr, m in self.assigns:
            ds, cs, ks = self._sources(expr, m)
            if cs:
                self._direct_consts.setdefault(k, set()).update(cs)
            if ks:
                self._copies.setdefault(k, []).extend(ks)
                for src in ks:
                    edges.setdefault(src, set()).add(k)
            if ds:
                cur = self.dists.setdefault(k, set())
                if not ds <= cur:
                    cur |= ds
                    todo.append(k)
        while todo:
            src = todo.pop()
            for dst in edges.get(src, ()):
                cur = self.dists.setdefault(dst, set())
                if not self.dists[src] <= cur:
                    cur |= self.dists[src]
                    todo.append(dst)
        self.consts = _Consts(self)

    def subject_keys(self, mod: Module, expr) -> set[str]:
        """Distribution-carrying keys an expression reads as a value (a direct version read
        counts as the pseudo-key ``<read:DIST>``). A name used as a callee (``version(...)``)
        or as the base of a non-version attribute (``version.parse``, ``torch.version.cuda``)
        is not a read of that key."""
        out = set()

        def visit(n, as_value=True):
            if isinstance(n, ast.Call):
                d = _dist_literal(n)
                if d:
                    out.add(f"<read:{d}>")
                    return
                visit(n.func, False)
                for a in n.args:
                    visit(a)
                for kw in n.keywords:
                    visit(kw.value)
                return
            if isinstance(n, (ast.Attribute, ast.Name)):
                k = self.fkey(mod, n)
                if as_value and k and self.dists.get(k):
                    out.add(k)
                if isinstance(n, ast.Attribute):
                    visit(n.value, n.attr in _VERSION_ATTRS)
                return
            for c in ast.iter_child_nodes(n):
                visit(c)

        visit(expr)
        return out

    def key_dists(self, k: str) -> set[str]:
        if k.startswith("<read:"):
            return {k[6:-1]}
        return set(self.dists.get(k, ()))


# ----------------------------------------------------------------------------- evaluation

class _Eval:
    """Three-valued evaluation of one gate for one release and one choice of constants."""

    def __init__(self, mod: Module, flow: Flow, values: dict):
        self.mod, self.flow, self.values = mod, flow, values
        self.assumed: list[str] = []

    def truth(self, node):
        """True / False / None (unknown)."""
        if isinstance(node, ast.BoolOp):
            vals = []
            for v in node.values:
                if not self.flow.subject_keys(self.mod, v) and isinstance(node.op, ast.And):
                    self.assumed.append(ast.unparse(v))
                    vals.append(True)
                    continue
                vals.append(self.truth(v))
            if isinstance(node.op, ast.And):
                if any(v is False for v in vals):
                    return False
                return True if all(v is True for v in vals) else None
            if any(v is True for v in vals):
                return True
            return False if all(v is False for v in vals) else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self.truth(node.operand)
            return None if v is None else not v
        if isinstance(node, ast.Compare):
            try:
                left = self.val(node.left)
                for op, right_node in zip(node.ops, node.comparators):
                    right = self.val(right_node)
                    if isinstance(op, ast.Is):
                        ok = left is right
                    elif isinstance(op, ast.IsNot):
                        ok = left is not right
                    elif type(op) in _CMP:
                        ok = _CMP[type(op)](left, right)
                        if not isinstance(ok, bool):
                            return None
                    elif isinstance(op, (ast.In, ast.NotIn)):
                        ok = (left in right) if isinstance(op, ast.In) else (left not in right)
                    else:
                        return None
                    if not ok:
                        return False
                    left = right
                return True
            except (Unknown, TypeError):
                return None
        if not self.flow.subject_keys(self.mod, node):
            return None
        try:
            v = self.val(node)
        except Unknown:
            return None
        return bool(v) if isinstance(v, (bool, int, tuple, str)) else None

    def val(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(self.val(e) for e in node.elts)
        if isinstance(node, ast.Call):
            if _dist_literal(node):
                return self._key(f"<read:{_dist_literal(node)}>")
            if len(node.args) == 1 and not node.keywords:
                if _is_ctor(self.mod, node):
                    a = self.val(node.args[0])
                    if isinstance(a, Version):
                        return a
                    try:
                        return Version(str(a))
                    except InvalidVersion:
                        raise Unknown("invalid version literal") from None
                fname = _dotted(node.func)
                if fname in ("str", "int", "tuple"):
                    return {"str": str, "int": int, "tuple": tuple}[fname](self.val(node.args[0]))
            raise Unknown(f"call {ast.unparse(node.func)}")
        if isinstance(node, ast.Attribute):
            k = node.attr
            if k in _VERSION_ATTRS:
                try:
                    base = self.val(node.value)
                except Unknown:
                    base = None
                if isinstance(base, Version):
                    return getattr(base, k)
                if base is not None:
                    raise Unknown(f".{k} of a non-version")
            return self._key(self.flow.fkey(self.mod, node))
        if isinstance(node, ast.Name):
            return self._key(self.flow.fkey(self.mod, node))
        if isinstance(node, ast.Subscript):
            base = self.val(node.value)
            sl = node.slice
            if isinstance(sl, ast.Slice):
                parts = [None if p is None else self.val(p) for p in (sl.lower, sl.upper, sl.step)]
                return base[slice(*parts)]
            return base[self.val(sl)]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.val(node.operand)
        raise Unknown(type(node).__name__)

    def _key(self, k):
        if k in self.values:
            return self.values[k]
        raise Unknown(f"{display(k)} is not a known constant")


def _gate_root(mod: Module, node):
    cur = node
    while True:
        p = mod.parents.get(cur)
        if isinstance(p, (ast.BoolOp, ast.Compare)) or (isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not)):
            cur = p
            continue
        return cur, p


def _effect(mod: Module, root, parent) -> tuple[str, list[str]]:
    """(effect, flag names)."""
    if isinstance(parent, ast.Assign) and parent.value is root:
        ks = [key_of(t) for t in parent.targets if key_of(t)]
        return ("flag", ks) if ks else ("other", [])
    if isinstance(parent, (ast.AnnAssign,)) and parent.value is root and key_of(parent.target):
        return "flag", [key_of(parent.target)]
    if isinstance(parent, ast.If) and parent.test is root:
        flags = [key_of(t) for st in parent.body if isinstance(st, ast.Assign)
                 and isinstance(st.value, ast.Constant) and st.value.value is True
                 for t in st.targets if key_of(t)]
        if flags:
            return "flag", flags
        inner = [n for st in parent.body for n in ast.walk(st)]
        if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in inner):
            return "import", []
        if any(isinstance(st, ast.Raise) for st in parent.body):
            return "raise", []
        return "branch", []
    if isinstance(parent, ast.Assert) and parent.test is root:
        return "assert", []
    if isinstance(parent, (ast.If, ast.While, ast.IfExp)):
        return "branch", []
    return "other", []


def _scope(mod: Module, node) -> str:
    names = []
    cur = mod.parents.get(node)
    while cur is not None:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(cur.name)
        cur = mod.parents.get(cur)
    return ".".join(reversed(names)) or "<module>"


@dataclass
class _Gate:
    mod: Module
    root: ast.AST
    record: GateRecord
    flags: list[str]
    scope: str
    dist_of: dict[str, str]         # release -> distribution


def find_gates(root: Path, package_dir: str | None, versions_of) -> tuple[list[_Gate], Flow, list[str]]:
    """Every gate of the tree, evaluated on every release of what it reads.

    ``versions_of(dist) -> list[str]`` lists a distribution's releases."""
    mods, notes = _parse_modules(root, package_dir)
    flow = Flow(mods)
    gates: list[_Gate] = []
    listing: dict[str, list[str]] = {}
    for m in mods:
        seen = set()
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.Compare):
                continue
            if not flow.subject_keys(m, node):
                continue
            # `x is None` alone selects nothing by version
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                continue
            groot, parent = _gate_root(m, node)
            if id(groot) in seen:
                continue
            seen.add(id(groot))
            effect, flags = _effect(m, groot, parent)
            subjects = sorted(flow.subject_keys(m, groot))
            subject = subjects[0]
            dists = sorted(set().union(*(flow.key_dists(s) for s in subjects)))
            backend = None
            if effect == "flag":
                bs = {backend_of_flag(f) for f in flags} - {None}
                backend = bs.pop() if len(bs) == 1 else None
            rec = GateRecord(m.path, groot.lineno, ast.unparse(groot), display(subject), tuple(dists),
                             f"flag:{','.join(flags)}" if effect == "flag" else effect, backend)
            dist_of = {}
            for d in dists:
                if d not in listing:
                    listing[d] = versions_of(d)
                    if not listing[d]:
                        notes.append(f"{d}: no releases on the index; gates over it are evaluated on "
                                     f"the other distributions' releases only")
                for v in listing[d]:
                    dist_of[v] = d
            _evaluate(rec, m, flow, groot, subjects, dist_of)
            gates.append(_Gate(m, groot, rec, flags, _scope(m, groot), dist_of))
    return gates, flow, notes


def _evaluate(rec: GateRecord, mod: Module, flow: Flow, groot, subjects: list[str], dist_of: dict):
    """Fill ``rec.accepts``: release -> true / false / depends / unknown.

    For a release of distribution D, every key that can carry D's version holds that release
    (one installed version per distribution); a key that carries only other distributions' versions
    is tried with each of their releases and its constant values (another distribution may be
    installed beside it, or not); a constant key is tried with each candidate value."""
    const_keys = sorted({k for n in ast.walk(groot) if isinstance(n, (ast.Name, ast.Attribute))
                         for k in [flow.fkey(mod, n)]
                         if k and k not in subjects and not flow.dists.get(k) and flow.consts.get(k)
                         and OPAQUE not in flow.consts[k]})
    by_dist: dict[str, list[Version]] = {}
    for v, d in dist_of.items():
        try:
            by_dist.setdefault(d, []).append(Version(v))
        except InvalidVersion:
            pass
    assumed: set[str] = set()
    others_note = set()
    for v, d in dist_of.items():
        try:
            rel = Version(v)
        except InvalidVersion:
            rec.accepts[v] = "unknown"
            continue
        fixed = {k: rel for k in subjects if d in flow.key_dists(k)}
        free = [k for k in subjects if k not in fixed]
        choices = [sorted(flow.consts[k], key=lambda c: (type(c).__name__, str(c))) for k in const_keys]
        for k in free:
            cands = {c for c in flow.consts.get(k, ()) if isinstance(c, Version)}
            for od in flow.key_dists(k):
                cands.update(by_dist.get(od, ()))
            choices.append(sorted(cands))
            others_note.add(k)
        keys = const_keys + free
        n = 1
        for c in choices:
            n *= max(len(c), 1)
        outs = set()
        if n > MAX_COMBOS or any(not c for c in choices):
            outs.add(None)
        else:
            for combo in itertools.product(*choices):
                ev = _Eval(mod, flow, {**fixed, **dict(zip(keys, combo))})
                outs.add(ev.truth(groot))
                assumed.update(ev.assumed)
        if None in outs:
            rec.accepts[v] = "unknown"
        elif outs == {True}:
            rec.accepts[v] = "true"
        elif outs == {False}:
            rec.accepts[v] = "false"
        else:
            rec.accepts[v] = "depends"
    extra = [f"assumed to hold: {a}" for a in sorted(assumed)]
    multi = [f"{display(k)} in {{{', '.join(sorted(str(c) for c in flow.consts[k]))}}}" for k in const_keys
             if len(flow.consts[k]) > 1]
    rec.assumptions = tuple(extra + [f"tried each value: {m}" for m in multi]
                            + [f"tried each installed {display(k)} (its distribution's releases and "
                               f"defaults)" for k in sorted(others_note)])


# ----------------------------------------------------------------------------- hazards

def gate_hazards(gates: list[_Gate], flow: Flow, breaking: set[str] | None) -> list[Hazard]:
    """Overlap, gap, unknown and breaking-accepted findings from evaluated gates.

    ``breaking`` is the set of FA4 releases that break TE's emitted pairs (None: not asked)."""
    out: list[Hazard] = []
    for g in gates:
        unknown = [v for v, r in g.record.accepts.items() if r == "unknown"]
        if unknown:
            out.append(Hazard("gate-unknown", g.record.path, g.record.line,
                              f"cannot evaluate `{g.record.text}` on {span(unknown)} "
                              f"({'; '.join(g.record.assumptions) or 'unsupported expression'})",
                              tuple(unknown), "unknown", part="gates"))
    # selection groups: same file, scope and version key, flags naming >= 2 backends
    groups: dict[tuple, list[_Gate]] = {}
    for g in gates:
        if g.record.backend:
            groups.setdefault((g.record.path, g.scope, g.record.subject), []).append(g)
    for (path, scope, subject), gs in sorted(groups.items()):
        labels = {g.record.backend for g in gs}
        if len(labels) < 2:
            continue
        dist_of = gs[0].dist_of
        overlap: dict[tuple, dict[str, list[str]]] = {}
        gap: dict[tuple, dict[str, list[str]]] = {}
        for v, d in dist_of.items():
            own = FA_DISTS[d]
            true = sorted({g.record.backend for g in gs if g.record.accepts.get(v) == "true"})
            maybe = sorted({g.record.backend for g in gs if g.record.accepts.get(v) == "depends"})
            if len(true) >= 2:
                overlap.setdefault(("proven", tuple(true), d), {}).setdefault("r", []).append(v)
            elif len(set(true) | set(maybe)) >= 2:
                overlap.setdefault(("conditional", tuple(sorted(set(true) | set(maybe))), d), {}).setdefault("r", []).append(v)
            elif own in labels:
                if own not in true and own not in maybe:
                    gap.setdefault(("proven", tuple(true), d), {}).setdefault("r", []).append(v)
                elif own not in true:
                    gap.setdefault(("conditional", tuple(true), d), {}).setdefault("r", []).append(v)
            elif true:
                gap.setdefault(("proven", tuple(true), d), {}).setdefault("r", []).append(v)
        for (cert, backs, d), acc in sorted(overlap.items()):
            vs = acc["r"]
            involved = [g for g in gs if g.record.backend in backs and g.record.accepts.get(vs[0]) in ("true", "depends")]
            first, rest = involved[-1], involved[:-1]
            texts = "; ".join(f"`{g.record.text}` -> {g.record.effect[5:]} (line {g.record.line})" for g in involved)
            out.append(Hazard(
                "gate-overlap", first.record.path, first.record.line,
                f"{d} {span(vs)} select{'s' if len(vs) == 1 else ''} {' and '.join(backs)} at once "
                f"in {scope}: {texts}" + (" (depending on a configuration constant)" if cert == "conditional" else ""),
                tuple(vs), cert, tuple(f"{g.record.path}:{g.record.line}" for g in rest), "gates"))
        for (cert, backs, d), acc in sorted(gap.items()):
            vs = acc["r"]
            own = FA_DISTS[d]
            mine = [g for g in gs if g.record.backend == own] or gs
            what = f"selects {' and '.join(backs)} instead of {own}" if backs else f"selects no backend ({own}'s gate is false)"
            out.append(Hazard(
                "gate-gap", mine[0].record.path, mine[0].record.line,
                f"{d} {span(vs)} {what} in {scope}: " +
                "; ".join(f"`{g.record.text}` -> {g.record.effect[5:]}" for g in mine)
                + (" (depending on a configuration constant)" if cert == "conditional" else ""),
                tuple(vs), cert, (), "gates"))
    if breaking is not None:
        out += _breaking_accepted(gates, flow, breaking)
    return out


def _rejecting(gates: list[_Gate]) -> list[_Gate]:
    """Raise/assert gates over FA4 whose verdict needs no assumption: they reject for sure."""
    return [g for g in gates if g.record.dists == ("flash-attn-4",) and g.record.effect in ("raise", "assert")
            and not any(a.startswith("assumed") for a in g.record.assumptions)]


def fa4_selectors(gates: list[_Gate]) -> list[_Gate]:
    return [g for g in gates if g.record.backend == "FA4" and "flash-attn-4" in g.record.dists]


def accepted_fa4(gates: list[_Gate], fa4_releases: list[str]) -> dict[int, tuple[list[str], list[str]]]:
    """For each FA4 selector (by index in ``gates``): (releases accepted, releases that may be)."""
    rejecting = _rejecting(gates)
    out = {}
    for i, g in enumerate(gates):
        if g not in fa4_selectors(gates):
            continue
        yes, maybe = [], []
        for v in fa4_releases:
            r = g.record.accepts.get(v)
            killed = any((x.record.accepts.get(v) == "true") if x.record.effect == "raise"
                         else (x.record.accepts.get(v) == "false") for x in rejecting)
            if killed:
                continue
            if r == "true":
                yes.append(v)
            elif r == "depends":
                maybe.append(v)
        out[i] = (yes, maybe)
    return out


def _breaking_accepted(gates: list[_Gate], flow: Flow, breaking: set[str]) -> list[Hazard]:
    out = []
    fa4_releases = compact({v for g in gates for v, d in g.dist_of.items() if d == "flash-attn-4"})
    acc = accepted_fa4(gates, fa4_releases)
    for i, (yes, maybe) in sorted(acc.items()):
        g = gates[i]
        bad = [v for v in yes if v in breaking]
        bad_maybe = [v for v in maybe if v in breaking]
        bound = "no upper bound" if fa4_releases and fa4_releases[-1] in yes else "an upper bound"
        if bad:
            out.append(Hazard("breaking-accepted", g.record.path, g.record.line,
                              f"`{g.record.text}` selects FA4 for {span(bad)}, which turn TE's emitted "
                              f"window pairs into wrong bands (gate has {bound})",
                              tuple(bad), "proven", (), "gates"))
        elif bad_maybe:
            out.append(Hazard("breaking-accepted", g.record.path, g.record.line,
                              f"`{g.record.text}` may select FA4 for {span(bad_maybe)} (depending on a "
                              f"configuration constant), which break TE's emitted window pairs",
                              tuple(bad_maybe), "conditional", (), "gates"))
    if not fa4_selectors(gates):
        reads = sorted({(p, ln) for p, ln, d in flow.reads if d == "flash-attn-4"})
        rejected = {v for v in fa4_releases for x in _rejecting(gates)
                    if (x.record.accepts.get(v) == "true") == (x.record.effect == "raise")}
        bad = sorted(set(breaking) - rejected)
        if reads and bad:
            p, ln = reads[0]
            out.append(Hazard("breaking-accepted", p, ln,
                              f"flash-attn-4's version is read but no gate selects FA4 by version, and "
                              f"none rejects {span(bad)}, which break TE's emitted window pairs",
                              tuple(bad), "proven", tuple(f"{q}:{m}" for q, m in reads[1:]), "gates"))
    return out
