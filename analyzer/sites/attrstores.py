"""Where the tree may set an instance attribute that a window is read from.

The flow layer reads ``self.ATTR`` (or ``ctx.ATTR`` in an autograd ``forward``/``backward``)
off the stores the class's own methods make through their first parameter. Anything else that
can set the attribute on an instance of that class -- a subclass's method, code holding an
instance (``layer.window = (-1, 0)`` after construction), ``setattr(obj, "window", ...)`` --
would be missed, and with it a window TE's ``-1`` may come through. ``StoreIndex`` finds those
places: every store of the attribute's name in the tree's text is located with the ``ast`` of
its file; a store through a method's first parameter belongs to that method's class (relevant
only for the class itself and its in-tree subclasses, by name); any other store may hit any
instance.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re

from analyzer.sites.astutil import walk
from analyzer.sites.behaviour import bound_names


class StoreIndex:
    def __init__(self, index, data: dict[str, bytes]):
        self.index = index              # reach.TreeIndex: syntax trees by path
        self.data = data
        self._stores: dict[str, list] = {}
        self._bases: dict[str, set] = {}       # class name -> base names, files read so far
        self._files_read: set[str] = set()
        self._names_scanned: set[str] = set()
        self._classes: dict[str, list] = {}
        self._foreign: dict[tuple, str] = {}
        self._detached = None
        self._any_store = None
        self._class_level: dict[str, str] = {}
        self._desc: dict[str, frozenset] = {}
        self._metaclasses: dict[str, str] = {}     # class name -> its metaclass, files read

    def any_store(self) -> str:
        """The first place in the tree that may set any attribute of an object, by a name the
        text does not spell (``put = setattr``, ``setattr(o, name, v)``, ``vars(o).update``,
        ``o.__dict__[...]``, ``"__dict__"`` looked up by name, ``exec``, ``pickle.loads``,
        ``copy.deepcopy`` with a memo, ``parse_args(namespace=o)``); "" when none. Read once
        per tree, file by file up to the first."""
        if self._any_store is None:
            self._any_store = ""
            for rel in sorted(self.data):
                raw = self.data[rel]
                if not _ANY_STORE_TEXT.search(raw):
                    continue
                info = self.index.by_path.get(rel)
                tree = info.bare_tree if info is not None else None
                if tree is None:
                    self._any_store = f"{rel}:1 (cannot be read)"
                    break
                got = _any_store_in(tree)
                if got:
                    line, what = got
                    self._any_store = f"{rel}:{line} ({what})"
                    break
        return self._any_store

    def class_level(self, cls_name: str) -> str:
        """Where what an instance of ``cls_name`` holds is decided by something the stores do
        not describe, for every attribute at once: a base computed at run time (``type(...)``,
        ``namedtuple(...)``, a factory's result), a metaclass other than ``abc.ABCMeta``, or
        a base from outside the tree that sets attributes itself (anything but ``object``,
        ``torch.nn.Module``, ``torch.autograd.Function`` and the typing and ``abc``
        helpers). "" when none."""
        hit = self._class_level.get(cls_name)
        if hit is None:
            hit = self._class_level[cls_name] = self._class_level_uncached(cls_name)
        return hit

    def _class_level_uncached(self, cls_name: str) -> str:
        defined = self._defined_classes()
        seen: set = set()
        todo = [cls_name]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            for base in sorted(self._bases_of(n)):
                if base == _COMPUTED:
                    return f"a base of {n} is computed at run time"
                if base in defined:
                    todo.append(base)
                elif base not in _PLAIN_OUTSIDE_BASES:
                    return f"{n} derives from {base}, from outside the tree, which may set " \
                           "attributes itself"
            meta = self._metaclasses.get(n)
            if meta:
                return f"{n} sets a metaclass ({meta})"
        return ""

    def _descendants(self, cls_name: str) -> frozenset:
        """The in-tree subclasses of ``cls_name``, found by the names their bases spell."""
        got = self._desc.get(cls_name)
        if got is None:
            family, _, _ = self._detached_check()._family({cls_name})
            got = self._desc[cls_name] = frozenset(family - {cls_name})
        return got

    def _defined_classes(self) -> frozenset:
        """Every name a ``class`` statement of the tree spells (a superset, from the text)."""
        got = self.__dict__.get("_defined")
        if got is None:
            from analyzer.sites.detached import _HEADER

            got = self._defined = frozenset(m.group(1).decode() for raw in self.data.values()
                                            for m in _HEADER.finditer(raw))
        return got

    def detached(self, cls_name: str, static: bool = False) -> str:
        """Where a method of ``cls_name`` (or of an in-tree subclass) may run with a first
        argument that is not an instance of the family (``detached.Detached``); "" when
        nowhere. ``static``: the method is static (an autograd ``forward(ctx, ...)``), so an
        instance of the class is a way to call it with anything too."""
        anywhere = self.any_store()
        if anywhere:
            return f"any attribute may be set at {anywhere}"
        level = self.class_level(cls_name)
        if level:
            return level
        return self._detached_check().where(cls_name, static)

    def _detached_check(self):
        """The tree's ``detached.Detached`` (made on first use: most trees never ask)."""
        if self._detached is None:
            from analyzer.sites.detached import Detached

            self._detached = Detached(self)
        return self._detached

    def foreign(self, cls_name: str, attr: str, static: bool = False) -> str:
        """"" when only ``cls_name``'s own methods (through their first parameter) set
        ``attr`` on its instances; else the first other place (``path:line``). A class of the
        family (the class, an in-tree base or subclass) that binds ``attr`` in its body (a
        property, a descriptor, a class attribute the read may fall back to) or defines
        ``__setattr__``/``__getattribute__``/``__getattr__`` decides what ``self.attr`` reads,
        so it counts as another place. Bases outside the tree are taken to store and read
        attributes plainly (``torch.nn.Module`` does, for values that are not modules,
        parameters or buffers). Read once per (class, attribute): the verdicts and the
        report ask again."""
        key = (cls_name, attr, static)
        hit = self._foreign.get(key)
        if hit is None:
            hit = self._foreign[key] = self._foreign_uncached(cls_name, attr, static)
        return hit

    def _foreign_uncached(self, cls_name: str, attr: str, static: bool) -> str:
        # a store through no method's first parameter settles it: the files are read only
        # as far as the first one (the class checks read many more)
        for path, line, owner in self._stores_iter(attr):
            if owner is None:
                return f"{path}:{line}"
        anywhere = self.any_store()
        if anywhere:
            return f"any attribute may be set at {anywhere}"
        hazard = self.class_hazard(cls_name, attr)
        if hazard:
            return hazard
        others = []
        # a class of the same name deriving from this one (``class Attn(attn.Attn)`` in
        # another module) stores through its own methods under the same owner name, and a
        # private name mangles alike in both
        self_named = cls_name in self._bases_of(cls_name)
        for path, line, owner in self._stores_of(attr):
            if owner == cls_name and self_named:
                return (f"{path}:{line} (a class named {cls_name} derives from a class of "
                        "that name)")
            if owner == cls_name:
                continue
            if self.shares_instances(owner, cls_name):
                # a subclass's or a base's method stores on the same instances, and so does
                # a method of a class that a subclass also derives from (a mixin, a second
                # base: ``class Hybrid(Attn, Mixin)``): the flow reads the class's own
                # methods only
                return f"{path}:{line}"
            others.append((path, line, owner))
        for path, line, owner in others:
            # a method of an unrelated class stores through its first parameter: on its own
            # instances, unless it can be called with another object
            away = self.detached(owner)
            if away:
                return (f"{path}:{line}, a method of {owner}, which may run on another "
                        f"object: {away}")
        # the reads themselves: self may be another object when a method runs detached
        away = self.detached(cls_name, static)
        if away:
            return f"a method of {cls_name} may run on another object: {away}"
        return ""

    def module_or_class(self, attr: str, cls_name: str | None = None) -> str:
        """Where code may set ``attr`` on a module or a class from outside the statements
        that define it (``mod.W = ...``, ``sys.modules[__name__].W = ...``, ``setattr(m, "W",
        ...)``, ``Cfg.window = ...``, ``cls.window = ...`` in a classmethod): a store that
        goes through no method's first parameter, or one through a method of ``cls_name``'s
        family. "" when there is none."""
        for path, line, owner in self._stores_of(attr):
            if owner is None:
                return f"{path}:{line}"
            if cls_name is not None and self.shares_instances(owner, cls_name):
                return f"{path}:{line}"
        return ""

    # -- stores ----------------------------------------------------------------------
    def patching(self) -> bool:
        """Does any file of the tree use a patcher (``mock.patch``, ``monkeypatch.setattr``),
        which sets an attribute named by a string? Read once."""
        got = self.__dict__.get("_patching")
        if got is None:
            got = self._patching = any(_PATCHING.search(raw) for raw in self.data.values())
        return got

    def _stores_of(self, attr: str) -> list:
        """(path, line, owning class name | None) for every store of ``attr`` in the tree."""
        return list(self._stores_iter(attr))

    def _stores_iter(self, attr: str):
        """The stores of ``_stores_of`` in order, reading files only as far as the caller
        goes; what was read is kept for the next caller."""
        got = self._stores.get(attr)
        if got is None:
            got = self._stores[attr] = [[], self._store_files(attr)]
        i = 0
        while True:
            done, more = got
            while i < len(done):
                yield done[i]
                i += 1
            if more is None:
                return
            nxt = next(more, None)
            if nxt is None:
                got[1] = None
            else:
                done.extend(nxt)

    def _store_files(self, attr: str):
        """The stores of each file that may store ``attr``, one list per file, in order."""
        needle = attr.encode()
        # any access ``.attr`` (whitespace, a line continuation or a comment may stand between
        # the dot and the name): a store's target need not be followed by ``=`` (``o.attr, x
        # = ...``, ``(o\n .attr) = ...``, ``for o.attr in ...``, ``with f() as o.attr``), so
        # every file that reads the attribute is read by its syntax tree
        # a private name (``self.__window`` in a class body) is stored from elsewhere under
        # its mangled spelling (``layer._Attn__window = ...``)
        mangled = rb"(?:_[A-Za-z0-9]\w*)?" if _private(attr) else b""
        # (also, in a tree that uses a patcher, the name in a string:
        # ``mock.patch("pkg.mod.NAME", ...)``, ``monkeypatch.setattr(mod, "NAME", ...)``; and
        # ``patch.multiple(mod, NAME=...)``)
        patching = self.patching()
        text_pat = re.compile(rb"\.(?:\s|\\\r?\n|#[^\n]*)*" + mangled + re.escape(needle)
                              + rb"(?!\w)|setattr\s*\(|__setattr__|__delattr__|__dict__|"
                              rb"\bvars\s*\(" + ((rb"|[\"'][^\"'\n]*" + re.escape(needle) +
                                                  rb"[\"']|\bmultiple\s*\(")
                                                 if patching else b""))
        for rel in sorted(self.data):
            raw = self.data[rel]
            if needle not in raw or not text_pat.search(raw):
                continue
            info = self.index.by_path.get(rel)
            tree = info.tree if info is not None else None
            if tree is None:
                yield [(rel, 1, None)]     # cannot be read: anything may be set there
                continue
            yield [(rel, line, owner) for line, owner in _stores_in(tree, attr, patching)]

    # -- class bodies ------------------------------------------------------------------
    def class_hazard(self, cls_name: str, attr: str, skip=None) -> str:
        """The first class of ``cls_name``'s family whose body binds ``attr`` or a hook that
        intercepts attribute access (``path:line (what)``), else "". ``skip`` (path, line)
        leaves one class statement out: for a method of that class, whose own ``def`` binds
        the name."""
        name = attr.encode()
        for rel in self._class_files():
            raw = self.data[rel]
            if not (self._hooks[rel] or _may_bind(raw, name)):
                continue
            classes = self._classes.get(rel)
            if classes is None:
                # parsed once: on a big tree the syntax tree itself may be dropped
                # (``reach.MAX_LIVE_SOURCE``) and would be parsed again for each attribute
                info = self.index.by_path.get(rel)
                tree = info.bare_tree if info is not None else None
                if tree is None:
                    return f"{rel}:1 (cannot be read)"
                classes = self._classes_of(rel, tree)
            for k, bound in classes:
                if skip is not None and (rel, k.lineno) == skip:
                    continue
                what = _binds(bound, attr)
                if what and self.shares_instances(k.name, cls_name):
                    # a base of the class, of a subclass (``class C(Other, Attn)`` puts
                    # Other's property before Attn's instance dict), or a subclass
                    return f"{rel}:{k.lineno} ({k.name} {what})"
        return ""

    def _class_files(self) -> list:
        """The files that may define a class, in order; whether each defines an attribute
        hook (``_defines_hook``) is read once, for every attribute asked about."""
        files = self.__dict__.get("_with_class")
        if files is None:
            files = self._with_class = [rel for rel in sorted(self.data)
                                        if b"class" in self.data[rel]]
            self._hooks = {rel: _defines_hook(self.data[rel]) for rel in files}
        return files

    def _classes_of(self, rel: str, tree) -> list:
        """(class, the names its own body binds) for every class of a file, read once."""
        got = self._classes.get(rel)
        if got is None:
            got = self._classes[rel] = [(k, _class_bindings(k)) for k in _class_defs(tree)]
        return got

    # -- classes -----------------------------------------------------------------------
    def _related(self, a: str, b: str) -> bool:
        """Are the in-tree classes ``a`` and ``b`` of one family (the same, or one derives
        from the other)?"""
        return a == b or self._derives(a, b) or self._derives(b, a)

    def shares_instances(self, a: str, b: str) -> bool:
        """Can an object be an instance of both in-tree classes ``a`` and ``b``: one derives
        from the other, or some class of the tree derives from both (``class Hybrid(Attn,
        Mixin)``, also through further subclasses and bases, transitively)? Such a class
        has, at or above it, a class statement with several bases (or a computed one): only
        those are looked at. Read once per pair."""
        key = (a, b) if a <= b else (b, a)
        memo = self.__dict__.setdefault("_shares", {})
        got = memo.get(key)
        if got is None:
            got = memo[key] = self._related(a, b) or any(
                self._derives(d, a) and self._derives(d, b) for d in self._joining_classes())
        return got

    def _joining_classes(self) -> tuple:
        """The classes whose statement may name more than one base, or a base that is not a
        plain (dotted) name (``class C(A, B)``, ``class C(*bases)``, ``class C(make())``), by
        the text of their headers (a superset); read once per tree."""
        got = self.__dict__.get("_joining")
        if got is None:
            from analyzer.sites.detached import _headers

            got = self._joining = tuple(sorted({
                name for raw in self.data.values() if b"class" in raw
                for name, bases in _headers(raw) if not _SINGLE_BASE.fullmatch(bases)}))
        return got

    def _derives(self, name: str, ancestor: str) -> bool:
        """Can the in-tree class ``name`` derive from ``ancestor`` (by simple names: two classes
        of one name count as one, an over-approximation)? A base no file of the tree defines
        cannot: it is outside the tree. A base computed at run time can be anything."""
        seen: set = set()
        todo = [name]
        while todo:
            n = todo.pop()
            if n == _COMPUTED:
                return True
            if n in seen:
                continue
            seen.add(n)
            for base in sorted(self._bases_of(n)):
                if base == ancestor:
                    return True
                todo.append(base)
        return False

    def _bases_of(self, name: str) -> set:
        """The simple names of ``name``'s bases, over every class of that name in the tree."""
        if name in self._names_scanned:
            return self._bases.get(name, set())
        self._names_scanned.add(name)
        # the class statement, an alias (``_Base = Attn``, ``from m import Attn as _Base``)
        # used as a base, wherever it stands (after ``;``, in a branch, in a function)
        raw_name = name.encode()
        n = len(raw_name)

        def mentions(raw: bytes) -> bool:
            # each occurrence of the name, found by plain search (a regex with no literal
            # prefix scans every byte): after ``class``, or ``as``, or followed by ``=``/``:``
            i = raw.find(raw_name)
            while i >= 0:
                before = raw[max(0, i - 64):i]
                after = raw[i + n:i + n + 64]
                if not (after[:1].isalnum() or after[:1] == b"_") and \
                        not (before[-1:].isalnum() or before[-1:] in (b"_", b".")):
                    head = before.rstrip(b" \t\r\n\\\f")
                    word = _LAST_WORD.search(head)
                    if word is not None and word.group() in (b"class", b"as") or \
                            _ALIAS_AFTER.match(after):
                        return True
                i = raw.find(raw_name, i + n)
            return False

        for rel in sorted(self.data):
            if rel in self._files_read or not mentions(self.data[rel]):
                continue
            self._files_read.add(rel)
            info = self.index.by_path.get(rel)
            tree = info.bare_tree if info is not None else None
            if tree is None:
                continue
            for st, scopes in _statements(tree):
                if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                    # an alias derives from what it names (every binding of the name counts)
                    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                    v = st.value
                    base = v.id if isinstance(v, ast.Name) else \
                        v.attr if isinstance(v, ast.Attribute) else _COMPUTED
                    for t in targets:
                        if isinstance(t, ast.Name):
                            self._bases.setdefault(t.id, set()).add(base)
                elif isinstance(st, ast.ImportFrom):
                    for a in st.names:
                        if a.asname and a.name != "*":
                            self._bases.setdefault(a.asname, set()).add(a.name)
                elif isinstance(st, ast.ClassDef):
                    for kw in st.keywords:
                        if kw.arg == "metaclass" and not (
                                isinstance(kw.value, (ast.Name, ast.Attribute)) and
                                (kw.value.id if isinstance(kw.value, ast.Name)
                                 else kw.value.attr) == "ABCMeta"):
                            self._metaclasses[st.name] = ast.unparse(kw.value)
                        elif kw.arg is None:
                            self._metaclasses[st.name] = "**" + ast.unparse(kw.value)
                    # every class of the file, read once; a base named by a function's
                    # parameter or local (a class factory), or by a name the file never
                    # binds (``globals()["Base"] = ...``), can be any class
                    local = set().union(*(_function_names(f) for f in scopes)) if scopes \
                        else set()
                    got = self._bases.setdefault(st.name, set())
                    for base in st.bases:
                        if isinstance(base, ast.Subscript):
                            base = base.value        # ``Generic[T]``: the class subscripted
                        if isinstance(base, ast.Name) and base.id not in local and \
                                _file_binds(tree, base.id):
                            got.add(base.id)
                        elif isinstance(base, ast.Attribute) and not (
                                isinstance(base.value, ast.Name) and base.value.id in local):
                            got.add(base.attr)
                        else:
                            got.add(_COMPUTED)
        return self._bases.setdefault(name, set())


_COMPUTED = "<a base computed at run time>"
# the text of a class header's bases (up to its closing bracket) that names at most one
# class, plainly (``Attn``, ``mod.Attn``; ``Generic[T]`` is not: read as joining)
_SINGLE_BASE = re.compile(rb"(?:\s|\\\r?\n)*(?:[A-Za-z_]\w*(?:(?:\s|\\\r?\n)*\.(?:\s|\\\r?\n)*"
                          rb"[A-Za-z_]\w*)*(?:\s|\\\r?\n)*)?\)?")
# bases from outside the tree that store and read attributes plainly
_PLAIN_OUTSIDE_BASES = frozenset({"object", "Module", "Function", "ABC", "Generic", "Protocol",
                                  "Exception", "BaseException", "RuntimeError", "ValueError",
                                  "TypeError", "Enum", "IntEnum"})
_LAST_WORD = re.compile(rb"[A-Za-z_]\w*$")
_ALIAS_AFTER = re.compile(rb"(?:[ \t\f]|\\\r?\n)*(?:=(?!=)|:)")


def _statements(tree: ast.AST):
    """Every statement under ``tree`` in order, with the functions that enclose it (outermost
    first): a preorder walk of statement lists only."""
    stack = [(iter(tree.body), ())]
    while stack:
        it, scopes = stack[-1]
        st = next(it, None)
        if st is None:
            stack.pop()
            continue
        yield st, scopes
        inner = scopes + (st,) if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            else scopes
        subs = []
        for f in st._fields:
            v = getattr(st, f, None)
            if type(v) is list and v and isinstance(v[0], (ast.stmt, ast.excepthandler,
                                                          ast.match_case)):
                for x in v:
                    subs.extend(x.body if isinstance(x, (ast.excepthandler, ast.match_case))
                                else [x])
        if subs:
            stack.append((iter(subs), inner))


def _file_binds(tree: ast.Module, name: str) -> bool:
    """Is ``name`` a builtin, bound in this file by a statement (a def/class, an import, an
    assignment, a for/with/except target) or possibly by a star import?"""
    import builtins

    if hasattr(builtins, name):
        return True
    got = statement_bindings(tree)
    # a name bound only where statements do not show it (a walrus, a match capture) is read
    # as a base computed at run time, like one the file never binds
    return name in got or "*" in got


def statement_bindings(tree: ast.Module) -> set:
    """Every name a statement of the file binds, anywhere ("*" for a star import); read once
    per syntax tree."""
    got = tree.__dict__.get("_fa4_binds")
    if got is None:
        got = set()
        for st, _ in _statements(tree):
            got |= statement_names(st)
        tree._fa4_binds = got
    return got


def statement_names(st) -> set:
    """The names one statement binds itself ("*" for a star import): its targets, a
    ``for``/``with`` target, an ``except ... as`` name, a def, a class, an import."""
    from analyzer.sites.behaviour import bound_names

    got = set(bound_names(st))
    if isinstance(st, ast.ImportFrom) and any(a.name == "*" for a in st.names):
        got.add("*")
    elif isinstance(st, (ast.For, ast.AsyncFor)):
        got |= {n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)}
    elif isinstance(st, (ast.With, ast.AsyncWith)):
        got |= {n.id for it in st.items if it.optional_vars is not None
                for n in ast.walk(it.optional_vars) if isinstance(n, ast.Name)}
    elif isinstance(st, ast.Try):
        got |= {h.name for h in st.handlers if h.name}
    return got


def _function_names(fn) -> set:
    """The names a function binds: its parameters and every name stored in its body."""
    a = fn.args
    out = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    out |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fn:
            out.add(n.name)
        elif isinstance(n, ast.alias):
            out.add((n.asname or n.name).split(".")[0])
    return out


def _class_defs(tree: ast.AST) -> list:
    """Every class statement under ``tree``, in preorder (the order of ``astutil.walk``), read
    off statement lists only (``_statements``): a class statement is a statement, and only
    statement lists (bodies, branches, handlers, match cases) hold statements, so no
    expression is visited."""
    return [st for st, _ in _statements(tree) if isinstance(st, ast.ClassDef)]


# the hooks that decide what ``instance.attr`` reads or stores, whatever the stores say
_HOOK_NAMES = ("__setattr__", "__getattribute__", "__getattr__", "__delattr__",
               # copy and pickle build an instance's attributes from what these give
               "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__", "__copy__",
               "__deepcopy__")
_HOOK_BYTES = tuple(h.encode() for h in _HOOK_NAMES)
_HOOK_DEF = re.compile(rb"def[ \t]+(?:" + rb"|".join(_HOOK_BYTES) + rb")\b|(?:"
                       + rb"|".join(_HOOK_BYTES) + rb")[ \t]*=")


def _defines_hook(raw: bytes) -> bool:
    """Does the text define an attribute hook (``def __setattr__``, ``__getattr__ = f``)?"""
    return any(h in raw for h in _HOOK_BYTES) and _HOOK_DEF.search(raw) is not None


_PREFIX = re.compile(rb"[ \t]+[^\n]*")


def _may_bind(raw: bytes, name: bytes) -> bool:
    """Can a line of ``raw`` bind ``name`` inside a class body? An over-approximation by text
    (so that only such files are parsed): an occurrence on an indented line (``name =``,
    ``a = name = ...``, ``a, name =``, ``def name``, ``from m import name``, ``for name in``,
    ``with f() as name``), followed by what can follow a bound name (``_BINDS_AFTER``), on a
    line the text does not show to be inside a function body or an open bracket."""
    i = raw.find(name)
    n = len(name)
    while i >= 0:
        before_ok = i == 0 or not (raw[i - 1:i].isalnum() or raw[i - 1:i] == b"_")
        after = raw[i + n:i + n + 1]
        if before_ok and not (after.isalnum() or after == b"_") and \
                not _in_string_or_comment(raw, i):
            start = raw.rfind(b"\n", 0, i) + 1
            if not _BINDS_AFTER.match(raw, i + n):
                pass
            elif _PREFIX.fullmatch(raw, start, i):
                if not _in_function_body(
                        raw, start, walrus=raw[i + n:i + n + 8].lstrip().startswith(b":=")):
                    return True
            elif i > start or not _new_logical_line(raw, start):
                # an unindented line: a class statement with its body on the same line
                # (``class A: window_size = 1``), a statement after ``;``, or a line that
                # continues one above (a bracket, a backslash, a string still open)
                return True
        i = raw.find(name, i + n)
    return False


def _new_logical_line(raw: bytes, start: int) -> bool:
    """Does the line starting at ``start`` certainly begin a new logical line (no bracket
    open, no backslash continuation, no string still open above it)?"""
    if _in_string_or_comment(raw, start):
        return False
    prev = raw[:max(start - 1, 0)].rstrip(b" \t\r")
    if prev.endswith(b"\\"):
        return False
    return start not in _continued_line_starts(raw)


_BRACKETS = re.compile(rb"[()\[\]{}\n]")


@functools.lru_cache(maxsize=64)
def _continued_line_starts(raw: bytes) -> frozenset:
    """Offsets of the lines that begin inside an open bracket (strings and comments, whose
    brackets do not count, are skipped)."""
    starts, ends = _string_spans(raw)
    out = set()
    depth = 0
    k = 0
    for m in _BRACKETS.finditer(raw):
        j = m.start()
        while k < len(starts) and ends[k] <= j:
            k += 1
        if k < len(starts) and starts[k] <= j < ends[k]:
            continue
        c = raw[j:j + 1]
        if c == b"\n":
            if depth > 0:
                out.add(j + 1)
        elif c in b"([{":
            depth += 1
        elif depth:
            depth -= 1
    return frozenset(out)


# what can follow a name its statement binds: ``=``/``op=``/``:=``, an annotation, the next
# target or a closing bracket of a target list, the ( of ``def name(``, ``in`` of a
# for-target, ``as``/``,`` of an import list, or the end of the statement (``import name``,
# ``with f() as name``)
_BINDS_AFTER = re.compile(rb"[ \t]*(?:\(|=(?!=)|[-+*/|&^%@<>]{1,2}=|:|,|\)|\]|in\b|as\b|;|#"
                          rb"|\\|\r?\n|$)")

# Python's string and comment tokens (3.11 lexing: a backslash escapes the next character,
# raw strings included; prefixes do not change where a string ends), found left to right
_TOKENS = re.compile(rb"#[^\n]*|\'\'\'(?:\\.|[^\\])*?\'\'\'|\"\"\"(?:\\.|[^\\])*?\"\"\"|"
                     rb"\'(?:\\.|[^\'\\\n])*\'|\"(?:\\.|[^\"\\\n])*\"", re.S)


@functools.lru_cache(maxsize=256)
def _string_spans(raw: bytes) -> tuple:
    """(starts, ends) of every string literal and comment of ``raw``, in order."""
    starts, ends = [], []
    for m in _TOKENS.finditer(raw):
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


def _in_string_or_comment(raw: bytes, i: int) -> bool:
    """Is byte ``i`` inside a string literal or a comment (a docstring's text binds nothing)?
    Not inside an f-string: its braces hold code (``f"{(w := (-1, 0))}"`` binds ``w``)."""
    if b"#" not in raw and b"'" not in raw and b'"' not in raw:
        return False
    starts, ends = _string_spans(raw)
    k = bisect.bisect_right(starts, i) - 1
    return k >= 0 and i < ends[k] and not is_fstring(raw, starts[k])


def is_fstring(raw: bytes, start: int) -> bool:
    """Is the string token starting at ``start`` (its quote) an f-string? Read off the
    prefix letters before the quote (an over-approximation: ``if"..."`` counts)."""
    prefix = raw[max(0, start - 2):start].lower()
    return b"f" in prefix.lstrip(b"rb")


_BLOCK_WORDS = (b"if ", b"if(", b"elif ", b"elif(", b"else:", b"else :", b"for ", b"while ",
                b"while(", b"try:", b"try :", b"except", b"finally:", b"finally :", b"with ",
                b"with(", b"async for ", b"async with ", b"match ", b"case ")


def _in_function_body(raw: bytes, start: int, walrus: bool = False) -> bool:
    """Is the line starting at ``start`` certainly inside a function body (so it binds no
    class attribute)? Read off the text: the nearest enclosing header (the first line above
    with less indentation; block statements like ``if``/``for``/``with`` are climbed through)
    is a ``def``. Anything that makes the layout unsure -- a triple-quoted string or a
    backslash continuation on the way, a header that is neither a block, a ``class`` nor a
    ``def`` (a bracket continuation, which may be dedented anywhere; a decorator) -- answers
    False, and the file is parsed. A header split over lines (``def f(\n ...\n):``) is read
    from its first line, unless the name is a walrus target (``walrus``)."""
    line_end = raw.find(b"\n", start)
    line = raw[start:line_end if line_end >= 0 else len(raw)]
    indent = len(line) - len(line.lstrip(b" \t"))
    pos = start
    while pos > 0:
        prev_end = pos - 1                       # the newline ending the line above
        prev_start = raw.rfind(b"\n", 0, prev_end) + 1
        text = raw[prev_start:prev_end]
        pos = prev_start
        if b'"""' in text or b"'''" in text or text.rstrip().endswith(b"\\"):
            return False
        body = text.lstrip(b" \t")
        if not body.strip() or body.startswith(b"#"):
            continue
        ind = len(text) - len(body)
        if ind >= indent:
            continue
        if body.startswith((b"def ", b"async def ")):
            return True
        if body.startswith(b"class "):
            return False
        if body.startswith(_BLOCK_WORDS) and body.rstrip().endswith(b":"):
            indent = ind
            continue
        if not walrus and body.startswith((b")", b"]")) and body.rstrip().endswith(b":"):
            indent = ind + 1           # the end of a header split over lines: its first line
            continue
        return False
    return False


def _class_bindings(cls: ast.ClassDef) -> set:
    """Every name ``cls``'s own body binds: what each statement binds where it stands
    (``behaviour.bound_names``: defs, classes, imports, every name an assignment target
    spells) and any name a statement stores below it (under if/try/with/for, a walrus
    target, a def in a branch). A bare annotation (``x: int``) counts: it is a field where a
    class decorator or base (dataclass, NamedTuple) generates the stores."""
    out = set()
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and st.value is None:
            # a field of a dataclass, NamedTuple or the like: its generated ``__init__``
            # stores it
            if isinstance(st.target, ast.Name):
                out.add(st.target.id)
            continue
        out |= bound_names(st)
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                           ast.ImportFrom)):
            continue
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
    return out


def _binds(bound: set, attr: str) -> str:
    """What a class body binding ``bound`` (``_class_bindings``) has that decides
    ``instance.attr``: ``attr`` itself (a property, a descriptor, a class attribute) or an
    attribute hook; "" when none."""
    if attr in bound:
        return f"binds {attr} in its body (a property, descriptor or class attribute)"
    hook = next((h for h in _HOOK_NAMES if h in bound), None)
    return f"defines {hook}" if hook else ""


# methods of patching helpers that set an attribute named by a string or a keyword
# (``unittest.mock.patch.object``/``multiple``, pytest's ``monkeypatch.setattr``)
_PATCHERS = frozenset({"object", "multiple", "setattr", "delattr", "patch"})


def _builds_a_name(node) -> bool:
    """The bare name in a string that goes into a dotted target: bound to a name
    (``_KEY = "W"``), an operand (``_MOD + "." + "W"``), or an item joined or formatted."""
    from analyzer.sites.astutil import parent

    p = parent(node)
    if isinstance(p, (ast.Assign, ast.AnnAssign, ast.BinOp, ast.JoinedStr)):
        return True
    if isinstance(p, (ast.Tuple, ast.List)):
        c = parent(p)
        return isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and \
            c.func.attr in ("join", "format")
    return False


def _names_read_only(node) -> bool:
    """A string naming an attribute where it is only read: the name argument of ``getattr``
    or ``hasattr``, or an entry of ``__all__``."""
    from analyzer.sites.astutil import parent

    p = parent(node)
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and \
            p.func.id in ("getattr", "hasattr") and len(p.args) > 1 and p.args[1] is node:
        return True
    while isinstance(p, (ast.List, ast.Tuple)):
        p = parent(p)
    return isinstance(p, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
        isinstance(tg, ast.Name) and tg.id == "__all__"
        for tg in (p.targets if isinstance(p, ast.Assign) else [p.target]))


def _private(attr: str) -> bool:
    """A name Python mangles inside a class body (``__window``, not ``__init__``)."""
    return attr.startswith("__") and not attr.endswith("__")


_MANGLE_PREFIX = re.compile(r"_[A-Za-z0-9]\w*\Z")


def _mangles_to(spelled, attr: str) -> bool:
    """``spelled`` is ``attr`` as Python mangles it in some class (``_Attn__window`` for
    ``__window``, whatever the class)."""
    return isinstance(spelled, str) and _private(attr) and spelled != attr and \
        spelled.endswith(attr) and bool(_MANGLE_PREFIX.match(spelled[:-len(attr)]))


_PATCHING = re.compile(rb"\bpatch(?:\.\w+)?\s*\(|\.setattr\s*\(|\b(?:monkeypatch|MonkeyPatch)\b")


def _stores_in(tree: ast.Module, attr: str, patching: bool = True):
    """(line, owner) for each store of ``attr`` in one module: owner is the enclosing class
    when the store goes through its method's first parameter, else None. Reads the tree's
    index (``astutil``): only the matching nodes are looked at, and their parents climbed."""
    from analyzer.sites.astutil import indexed, parent

    if not indexed(tree):
        from analyzer.sites import astutil

        keep = astutil.index(tree)  # noqa: F841 - alive while this generator runs
    for n in walk(tree):
        t = type(n)
        if t is ast.Attribute:
            if n.attr == attr and isinstance(n.ctx, (ast.Store, ast.Del)):
                # a store in a function nested in a method (``def f(): self.w = ...``) is not
                # among the method's stores the flow reads
                yield n.lineno, _owner_of(n.value, direct=True)
            elif _mangles_to(n.attr, attr) and isinstance(n.ctx, (ast.Store, ast.Del)):
                # ``obj._Attn__window = ...`` sets what ``self.__window`` reads in class
                # ``Attn``: never among the stores the flow reads under the private name
                yield n.lineno, None
            elif n.attr == "__dict__":
                p = parent(n)
                if isinstance(n.ctx, (ast.Store, ast.Del)):
                    yield n.lineno, _owner_of(n.value)        # o.__dict__ = / |= ...
                elif isinstance(p, ast.Subscript) and isinstance(p.ctx, (ast.Store, ast.Del)):
                    yield n.lineno, _owner_of(n.value)        # o.__dict__[k] = ...
                elif isinstance(p, ast.Attribute) and p.attr in ("update", "setdefault"):
                    yield n.lineno, _owner_of(n.value)        # o.__dict__.update(...)
        elif patching and t is ast.Constant and isinstance(n.value, str) and \
                (n.value.endswith("." + attr) or n.value == attr and _builds_a_name(n)) and \
                not _names_read_only(n):
            # the name in a string: a target a patcher rebinds (``mock.patch("pkg.attn.W",
            # w)``, also built: ``".".join((..., "W"))``, ``"%s.W" % m.__name__``, a name
            # holding it), not a store the flow reads. A ``getattr``/``hasattr`` read and an
            # ``__all__`` entry are no stores
            yield n.lineno, None
        elif t is ast.Call and (isinstance(n.func, ast.Attribute) and n.func.attr in _PATCHERS
                                or isinstance(n.func, ast.Name) and n.func.id == "patch") and (
                    any(k.arg == attr for k in n.keywords) or any(
                        isinstance(x, ast.Constant) and isinstance(x.value, str)
                        and (x.value == attr or x.value.endswith("." + attr))
                        for a in list(n.args) + [k.value for k in n.keywords]
                        for x in ast.walk(a))):
            # the name anywhere in the target the patcher gets (``_MOD + ".NAME"``,
            # ``f"{_MOD}.NAME"``, ``".".join((..., "NAME"))``, ``"%s.NAME" % m.__name__``)
            yield n.lineno, None
        elif t is ast.Call and isinstance(n.func, ast.Attribute) and \
                n.func.attr in _PATCHERS and (
                    any(isinstance(a, ast.Constant) and a.value == attr for a in n.args) or
                    any(k.arg == attr for k in n.keywords)):
            # ``mock.patch.object(mod, "NAME", w)``, ``monkeypatch.setattr(mod, "NAME", w)``,
            # ``mock.patch.multiple(mod, NAME=w)``
            yield n.lineno, None
        elif t is ast.Call and isinstance(n.func, ast.Name) and n.func.id == "setattr" \
                and n.args:
            name = n.args[1] if len(n.args) > 1 else None
            if not (isinstance(name, ast.Constant) and name.value != attr
                    and not _mangles_to(name.value, attr)):
                # the flow reads a method's plain stores only: what setattr stores is not
                # among the values it knows, wherever it stands
                yield n.lineno, None
        elif t is ast.Call and isinstance(n.func, ast.Attribute) and \
                n.func.attr in ("__setattr__", "__delattr__"):
            # object.__setattr__(o, "w", v) / type(o).__setattr__(o, ...) / o.__setattr__("w", v)
            on_type = isinstance(n.func.value, ast.Name) and n.func.value.id == "object" or \
                isinstance(n.func.value, ast.Call) or len(n.args) >= 3
            target = n.args[0] if on_type and n.args else n.func.value
            rest = n.args[1:] if on_type else n.args
            name = rest[0] if rest else None
            if not (isinstance(name, ast.Constant) and name.value != attr
                    and not _mangles_to(name.value, attr)):
                yield n.lineno, None        # likewise: not a store the flow reads
        elif t is ast.Call and isinstance(n.func, ast.Name) and n.func.id == "vars" \
                and n.args:
            # vars(o) is o.__dict__: vars(o)[k] = ..., vars(o).update(...), or handed on
            if not _dict_read(n, parent(n)):
                yield n.lineno, _owner_of(n.args[0])


# an attribute hook installed outside a class body, or an instance's class replaced
_INSTALLED_HOOKS = frozenset(_HOOK_NAMES) | {"__class__", "__dict__"}
_ANY_STORE_TEXT = re.compile(
    rb"setattr|delattr|__dict__|vars|exec|compile|namespace|loads?\b|deepcopy|update_wrapper|"
    rb"__setstate__|Unpickler|"
    # a store of a hook (``K.__getstate__ = f``, ``(o.__class__, x) = ...``, ``del
    # K.__getattr__``, ``for o.__class__ in ...``): the name then what may follow a store's
    # target (``=``, an augmented ``=``, an annotation, the next target, a closing bracket,
    # ``in``, the end of the line or file)
    rb"\.(?:\s|\\\r?\n)*__(?:" + rb"|".join(h.encode()[2:-2] for h in _HOOK_NAMES) +
    rb"|class)__(?:[ \t]|\\\r?\n)*(?:=(?!=)|[-+*/|&^%@<>]{1,2}=|[,)\]:;#\r\n]|in\b|\Z)")
_DESERIALISERS = frozenset({"pickle", "cPickle", "marshal", "dill", "cloudpickle", "torch",
                            "joblib", "shelve", "jsonpickle"})
_LOADERS = frozenset({"load", "loads", "Unpickler", "load_source"})


def _dotted_root(f) -> str:
    """The first name of a dotted callee (``torch`` of ``torch.serialization.load``)."""
    while isinstance(f, ast.Attribute):
        f = f.value
    return f.id if isinstance(f, ast.Name) else ""


_READ_DICT = frozenset({"get", "keys", "values", "items", "copy", "__contains__",
                        "__getitem__", "__len__", "__iter__"})


_READ_CALLS = frozenset({"len", "dict", "list", "tuple", "set", "sorted", "print", "repr",
                         "str", "iter", "any", "all", "sum", "isinstance"})


def _dict_read(node, p) -> bool:
    """Is the namespace dict ``node`` (``o.__dict__``, ``vars(o)``) only read where it stands
    (a read method, a subscript read, a comparison, ``|`` into a new dict, a copy, iterated,
    printed)?"""
    if isinstance(p, ast.Attribute):
        return p.attr in _READ_DICT
    if isinstance(p, ast.Subscript):
        return isinstance(p.ctx, ast.Load)
    if isinstance(p, ast.BinOp):
        return True
    if isinstance(p, ast.Call):
        return isinstance(p.func, ast.Name) and p.func.id in _READ_CALLS and node in p.args
    if isinstance(p, (ast.For, ast.comprehension)):
        return p.iter is node
    return isinstance(p, (ast.Compare, ast.FormattedValue))


def _any_store_in(tree: ast.Module):
    """(line, what) for the first statement of one module that may set an attribute of some
    object by a name not spelled as ``.attr`` (``StoreIndex.any_store``), else None."""
    from analyzer.sites.detached import _UP, _parents

    try:
        for n in _parents(tree, None):
            t = type(n)
            p = _UP.get(n)
            if t is ast.Name and n.id in ("setattr", "vars") and isinstance(n.ctx, ast.Load):
                call = p if isinstance(p, ast.Call) and p.func is n else None
                if call is None:
                    return n.lineno, f"{n.id} handed on"
                if n.id == "setattr" and not (len(call.args) > 1 and isinstance(
                        call.args[1], ast.Constant) and isinstance(call.args[1].value, str)):
                    return n.lineno, "setattr with a computed name"
                if n.id == "setattr" and call.args[1].value in _INSTALLED_HOOKS:
                    return n.lineno, f"setattr installs {call.args[1].value}"
                if n.id == "vars" and call.args:
                    up = _UP.get(call)
                    if not _dict_read(call, up):
                        return n.lineno, "an object's vars() changed or handed on"
            elif t is ast.Attribute and n.attr in _INSTALLED_HOOKS and \
                    n.attr != "__dict__" and isinstance(n.ctx, (ast.Store, ast.Del)):
                # ``Attn.__setattr__ = f``, ``cls.__getstate__ = f`` in ``__init_subclass__``,
                # ``owner.__setattr__ = f`` in a descriptor's ``__set_name__``, ``o.__class__ =
                # K``: what any instance's attributes hold or read is decided by code no store
                # describes
                return n.lineno, f"{n.attr} set outside a class body"
            elif t is ast.Attribute and n.attr in ("__setattr__", "__delattr__", "setattr",
                                                     "delattr") and isinstance(n.ctx, ast.Load):
                # ``object.__setattr__`` / ``builtins.setattr`` / ``super().__setattr__``: a
                # store by a name only when the name is spelled (and is no hook)
                call = p if isinstance(p, ast.Call) and p.func is n else None
                if call is None:
                    return n.lineno, f"{n.attr} handed on"
                what = _named_store(call, n)
                if what:
                    return n.lineno, what
            elif t is ast.Attribute and n.attr == "__dict__" and isinstance(n.ctx, ast.Load):
                if not _dict_read(n, p):
                    return n.lineno, "an object's __dict__ changed or handed on"
            elif t is ast.Attribute and n.attr == "__dict__":
                return n.lineno, "an object's __dict__ replaced"
            elif t is ast.Constant and n.value in ("__dict__", "__setattr__", "__setstate__",
                                                   "setattr"):
                return n.lineno, f"{n.value} looked up by name"
            elif t is ast.ImportFrom and n.module and \
                    n.module.split(".")[0] in _DESERIALISERS and \
                    any(a.name in _LOADERS for a in n.names):
                # ``from torch import load as load_checkpoint``: called by another name
                return n.lineno, f"{n.module}'s loader imported: it builds objects with any " \
                    "attributes"
            elif t is ast.Call:
                f = n.func
                name = f.id if isinstance(f, ast.Name) else f.attr \
                    if isinstance(f, ast.Attribute) else ""
                owner = f.value.id if isinstance(f, ast.Attribute) and \
                    isinstance(f.value, ast.Name) else ""
                if name in ("exec", "compile") and isinstance(f, ast.Name):
                    return n.lineno, f"{name}() runs code that may set attributes"
                if name in ("load", "loads") and (owner in _DESERIALISERS or
                                                   _dotted_root(f) in _DESERIALISERS):
                    return n.lineno, f"{owner or _dotted_root(f)}...{name}() builds objects " \
                        "with any attributes"
                if name == "__setstate__":
                    # torch's ``Module.__setstate__`` is ``self.__dict__.update(state)``
                    return n.lineno, "__setstate__() sets any attributes"
                if name == "deepcopy" and len(n.args) + len(n.keywords) > 1:
                    return n.lineno, "deepcopy with a memo may put any value in a copy"
                if name == "update_wrapper":
                    return n.lineno, "update_wrapper copies attributes"
                if any(k.arg == "namespace" for k in n.keywords):
                    return n.lineno, f"{name}(namespace=...) sets attributes by name"
        return None
    finally:
        _UP.clear()


def _named_store(call: ast.Call, f: ast.Attribute) -> str:
    """Why ``call`` (``X.__setattr__(...)``, ``X.setattr(...)``, their ``del`` forms) may set an
    attribute by a name no text spells ("" when it sets a spelled one): the name computed, a
    hook's name, or ``*``/``**`` arguments. A hook of the tree that forwards its own name
    parameter (``def __setattr__(self, name, v): super().__setattr__(name, v)``) stores what
    its caller spelled: not such a store."""
    if any(isinstance(a, ast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return f"{f.attr} with unpacked arguments"
    args = call.args
    if f.attr in ("setattr", "delattr"):
        if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            return ""          # a patcher's dotted target: the name is in the string
        name = args[1] if len(args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "name"), None)
        target = args[0] if args else None
    else:
        # object.__setattr__(o, "w", v) / type(o).__setattr__(o, ...) / o.__setattr__("w", v)
        on_type = isinstance(f.value, ast.Name) and f.value.id == "object" or \
            isinstance(f.value, ast.Call) and not _is_super(f.value) or len(args) >= 3
        target = args[0] if on_type and args else f.value
        rest = args[1:] if on_type else args
        name = rest[0] if rest else None
    if name is None:
        return ""              # no name given: a call of another method of that name
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return f"{f.attr} installs {name.value}" if name.value in _INSTALLED_HOOKS else ""
    if _forwards_own_name(call, f, target, name):
        return ""
    return f"{f.attr} with a computed name"


def _is_super(e) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "super"


def _forwards_own_name(call: ast.Call, f: ast.Attribute, target, name) -> bool:
    """Inside ``def __setattr__(self, name, ...)`` (or ``__delattr__``) of a class: the call
    stores on ``self`` (or ``super()``) under the hook's own ``name`` parameter."""
    from analyzer.sites.detached import _UP

    scope = _UP.get(call)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda, ast.ClassDef)):
        scope = _UP.get(scope)
    if not isinstance(scope, ast.FunctionDef) or \
            scope.name not in ("__setattr__", "__delattr__") or \
            not isinstance(_UP.get(scope), ast.ClassDef):
        return False
    params = [a.arg for a in scope.args.posonlyargs + scope.args.args]
    if len(params) < 2 or not (isinstance(name, ast.Name) and name.id == params[1]):
        return False
    # the parameters must be the ones the hook received: never rebound in its body
    if any(isinstance(n, ast.Name) and n.id in params[:2] and not isinstance(n.ctx, ast.Load)
           for n in ast.walk(scope)):
        return False
    return _is_super(target) or isinstance(target, ast.Name) and target.id == params[0]


def _owner_of(base, direct: bool = False):
    """The class whose own instance ``base`` is -- the first parameter of a method of it, or of
    a function nested in one (not with ``direct``) -- else None."""
    from analyzer.sites.astutil import parent

    if not isinstance(base, ast.Name):
        return None
    scope = parent(base)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda, ast.ClassDef)):
        scope = parent(scope)
    # the function whose parameter the name is: the nearest enclosing def that is a method
    while isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        up = parent(scope)
        if isinstance(up, ast.ClassDef) and not isinstance(scope, ast.Lambda):
            args = scope.args.posonlyargs + scope.args.args
            if args and args[0].arg == base.id and (not _static(scope, up)
                                                     or _autograd_function(up)):
                # (an autograd Function's static ``forward``/``backward``: the ``ctx`` of one
                # application, as the flow reads it, ``flow_base.first_param_untrusted``;
                # one called directly with another object is ``detached``'s)
                return up.name
            # a static method's first parameter is whatever its caller passes, however it
            # is called (``Policy().apply(layer)`` too): a store through it may hit any object
            return None
        if direct or isinstance(scope, ast.Lambda) or base.id in {
                a.arg for a in scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs}:
            return None          # the name is this inner function's own parameter
        scope = up
        while scope is not None and not isinstance(
                scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            scope = parent(scope)
    return None


def _autograd_function(cls: ast.ClassDef) -> bool:
    """A base of ``cls`` is spelled ``Function`` (``torch.autograd.Function``): the rule the
    flow reads a static method's ``ctx`` by (``flow_base.first_param_untrusted``)."""
    return any((b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None)) == "Function"
               for b in cls.bases)


def _static(fn, cls: ast.ClassDef) -> bool:
    """Is the method ``fn`` of ``cls`` not called with an instance first: decorated with
    ``staticmethod`` (by any spelling ending so), or its name bound again by another
    statement of the class body (``apply = staticmethod(apply)``, ``apply = other``)?"""
    for d in fn.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if isinstance(d, ast.Name) and d.id == "staticmethod" or \
                isinstance(d, ast.Attribute) and d.attr == "staticmethod":
            return True
    for st in cls.body:
        if st is fn or isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if fn.name in bound_names(st) or any(
                isinstance(n, ast.Name) and n.id == fn.name and not isinstance(n.ctx, ast.Load)
                for n in ast.walk(st)):
            return True
    return False
