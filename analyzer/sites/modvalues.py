"""What a module-level name of the audited tree holds, read off the syntax of its module.

The flow keeps a module-level name it cannot reduce to constants opaque ("LEFT (not a local)",
"config.SWA_LEFT"), and the convention on values from outside the tree (None, ints >= -1)
would then stand for it. A name the tree binds itself is no value from outside: what its
bindings compute (a call, arithmetic, an item of a call's result, an attribute of an object
the tree builds) may be anything (``math.floor(-1.5)``, ``float("-inf")``,
``struct.unpack(...)[0]``, ``json.load(...)["left"]``). ``side_atoms`` reads every binding of
the name in its module (and in the modules it is imported from) and gives them as
``coverage.window_values`` atoms: an int or None for a literal, ("unk", label, None) for a
computed value, labelled so that ``verdicts._beyond_convention`` reads it as computed.
"""

from __future__ import annotations

import ast
import re

# the labels of opaque atoms that name a module-level name: ``LEFT (not a local)`` and a
# dotted read ``config.SWA_LEFT`` / ``cfg.LEFT``
_NOT_LOCAL = re.compile(r"\A([A-Za-z_]\w*) \(not a local\)\Z")
_DOTTED = re.compile(r"\A[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\Z")

COMPUTED = "..."        # ``_beyond_convention`` reads this label as a value the tree computes
MAX_DEPTH = 6


def _call_label(node: ast.Call) -> str:
    try:
        return f"{ast.unparse(node.func)}(...)"
    except Exception:           # pragma: no cover - unparse of a parsed tree
        return COMPUTED


def bindings(tree: ast.Module, name: str) -> tuple[list, bool]:
    """Every statement at the module level of ``tree`` (any nesting outside functions) that
    binds ``name``, and whether a function of the module declares it ``global``; kept per
    syntax tree and name."""
    memo = tree.__dict__.setdefault("_fa4_name_bindings", {})
    got = memo.get(name)
    if got is None:
        got = memo[name] = _bindings(tree, name)
    return got


def imported_from(index, info, st, name: str):
    """(the tree module a ``from`` import statement ``st`` of the module ``info`` reads
    ``name`` from, the name there), or None: not such an import, or a module outside the tree
    (``index``: ``reach.TreeIndex``)."""
    from analyzer.sites.reach import _resolve

    if not isinstance(st, ast.ImportFrom):
        return None
    for a in st.names:
        if (a.asname or a.name) == name:
            mod = _resolve(info.name, info.is_pkg, st.module, st.level) if st.level else \
                (st.module or "")
            src = index.modules.get(mod)
            return (src, a.name) if src is not None else None
    return None


def _bindings(tree: ast.Module, name: str) -> tuple[list, bool]:
    from analyzer.sites.attrstores import _statements, statement_names

    found, declared = [], False
    for st, scopes in _statements(tree):
        if scopes:
            if isinstance(st, (ast.Global, ast.Nonlocal)) and name in st.names:
                declared = True
            continue
        bound = statement_names(st)
        if "*" in bound:
            bound.add(name)             # a star import may bind it
        if name in bound or any(isinstance(n, ast.NamedExpr) and n.target.id == name
                                for n in ast.walk(st) if isinstance(n, ast.NamedExpr)):
            found.append(st)
    return found, declared


class ModuleValues:
    """Reads module-level names of one tree (``reach.TreeIndex``), memoised."""

    def __init__(self, index):
        self.index = index
        self._memo: dict = {}

    def side_atoms(self, path: str, label: str, side) -> set:
        """Extra atoms for an opaque atom labelled ``label`` read in the module at ``path``
        for ``side`` of a window (0, 1, or None for a split bound): what the module-level
        name it names is bound to (empty when the label names none, or the name comes from
        outside the tree). The label may name the pair or the side itself."""
        m = _NOT_LOCAL.match(label)
        if m:
            return self.name_atoms(path, m.group(1), side, 0)
        if _DOTTED.match(label):
            head, *attrs = label.split(".")
            return self.dotted_atoms(path, head, attrs, side, 0)
        return set()

    def dotted_atoms(self, path: str, head: str, attrs: list, side, depth: int) -> set:
        """``head.a.b`` read in the module at ``path``: a module of the tree's name (``import
        config``, ``from pkg import config``) is followed into that module; a name the module
        binds to what the tree computes is computed; anything else adds nothing."""
        info = self.index.by_path.get(path)
        tree = info.bare_tree if info is not None else None
        if tree is None or depth > MAX_DEPTH:
            return {("unk", COMPUTED, None)}
        mod = self._module_named(info, tree, head, attrs)
        if mod is not None:
            target, rest = mod
            if len(rest) == 1:
                return self.name_atoms(target.path, rest[0], side, depth + 1)
            if not rest:
                return set()
            return self.dotted_atoms(target.path, rest[0], rest[1:], side, depth + 1)
        # an attribute of an object the module builds or a class it defines: computed
        found, declared = bindings(tree, head)
        if not found and not declared:
            return set()                # a builtin or a name from elsewhere
        for st in found:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                src = self._imported(info, st, head)
                if src is None:
                    continue            # from outside the tree: an attribute read
                return self.dotted_atoms(src[0].path, src[1], attrs, side, depth + 1) \
                    if src[1] else set()
            return {("unk", COMPUTED, None)}
        return {("unk", COMPUTED, None)} if declared else set()

    def name_atoms(self, path: str, name: str, side, depth: int) -> set:
        key = (path, name, side)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = set()         # a cycle adds nothing more
        got = self._name_atoms(path, name, side, depth)
        self._memo[key] = got
        return got

    def _name_atoms(self, path: str, name: str, side, depth: int) -> set:
        info = self.index.by_path.get(path)
        tree = info.bare_tree if info is not None else None
        if tree is None or depth > MAX_DEPTH:
            return {("unk", COMPUTED, None)}
        found, declared = bindings(tree, name)
        out: set = set()
        if declared:
            out.add(("unk", COMPUTED, None))   # rebound by a function of the module
        for st in found:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                if isinstance(st, ast.ImportFrom) and any(a.name == "*" for a in st.names):
                    out.add(("unk", COMPUTED, None))
                    continue
                src = self._imported(info, st, name)
                if src is not None and src[1]:
                    out |= self.name_atoms(src[0].path, src[1], side, depth + 1)
                continue                # a module, or a name from outside the tree
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                target = st.targets[0]
                if isinstance(target, ast.Name):
                    out |= self._value_atoms(path, st.value, side, depth)
                elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(
                        st.value, (ast.Tuple, ast.List)) and len(st.value.elts) == len(
                        target.elts) and not any(isinstance(t, ast.Starred)
                                                 for t in target.elts):
                    for t, v in zip(target.elts, st.value.elts):
                        if isinstance(t, ast.Name) and t.id == name:
                            out |= self._value_atoms(path, v, side, depth)
                else:
                    out.add(("unk", COMPUTED, None))     # unpacked from what a call makes
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                out |= self._value_atoms(path, st.value, side, depth)
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue                # not a window value
            else:
                out.add(("unk", COMPUTED, None))     # augmented, a loop target, a walrus...
        return out

    def _value_atoms(self, path: str, node, side, depth: int) -> set:
        """Atoms for one bound expression: a literal's ints and None, a name followed, a call's
        result or arithmetic as computed; an attribute or item read is followed to its root."""
        try:
            v = ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            v = node
        if v is not node:
            # the label may name the pair or one side of it (``(config.LEFT, 0)``): a pair's
            # side when it is a pair, the value itself otherwise
            if side is not None and isinstance(v, (tuple, list)) and len(v) == 2:
                v = v[side]
            if v is None:
                return {("none",)}
            if type(v) is int:
                return {("int", v)}
            return {("unk", f"{v!r} is not an int", None, v)}
        if side is not None and isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 2:
            return self._value_atoms(path, node.elts[side], None, depth)
        if isinstance(node, ast.Name):
            return self.name_atoms(path, node.id, side, depth + 1)
        if isinstance(node, ast.IfExp):
            return self._value_atoms(path, node.body, side, depth) | \
                self._value_atoms(path, node.orelse, side, depth)
        if isinstance(node, ast.Call):
            return {("unk", _call_label(node), None)}
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            root = node
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                attrs = []
                x = node
                while isinstance(x, ast.Attribute):
                    attrs.append(x.attr)
                    x = x.value
                if x is root and attrs:
                    got = self.dotted_atoms(path, root.id, attrs[::-1], side, depth + 1)
                    return got or {("unk", ast.unparse(node), None)}
                # an item of what a name of the tree holds (a dict, a class, what a call
                # made): computed; of a name from outside the tree, a value from outside
                info = self.index.by_path.get(path)
                found, declared = bindings(info.bare_tree, root.id)
                if declared or any(not isinstance(st, (ast.Import, ast.ImportFrom))
                                   or self._imported(info, st, root.id) is not None
                                   for st in found):
                    return {("unk", COMPUTED, None)}
                return {("unk", ast.unparse(node), None)}
            return {("unk", COMPUTED, None)}     # an item of a call's result
        return {("unk", COMPUTED, None)}         # arithmetic, a comprehension...

    def _module_named(self, info, tree, head: str, attrs: list):
        """(the tree module ``head.<attrs...>`` names, the attributes left), or None."""
        found, declared = bindings(tree, head)
        if declared or len(found) != 1:
            return None
        st = found[0]
        if isinstance(st, ast.Import):
            for a in st.names:
                if (a.asname or a.name.split(".")[0]) != head:
                    continue
                dotted = a.name if a.asname else a.name.split(".")[0]
                parts = dotted.split(".")
                rest = list(attrs)
                while rest and self.index.modules.get(".".join(parts + rest[:1])) is not None:
                    parts.append(rest.pop(0))
                mod = self.index.modules.get(".".join(parts))
                return (mod, rest) if mod is not None else None
        if isinstance(st, ast.ImportFrom):
            src = self._imported(info, st, head)
            if src is None:
                return None
            sub = self.index.modules.get(f"{src[0].name}.{src[1]}")
            if sub is not None:
                return sub, list(attrs)
        return None

    def _imported(self, info, st, name: str):
        return imported_from(self.index, info, st, name)
