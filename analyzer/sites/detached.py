"""Can a class's methods run with a first argument that is not an instance of the class?

The flow reads ``self.ATTR`` in a method of class ``C`` off the stores ``C``'s own methods
make (and ``attrstores.StoreIndex.foreign`` looks for every other store). That rests on
``self`` being an instance of ``C`` or of a subclass. A method called through its class with
another object -- ``C.forward(Other(), ...)``, ``f = C.forward; f(o)``, ``getattr(mod,
"C").forward(o)``, ``type(x).forward(o)``, ``x.forward.__func__(o)`` -- reads ``Other``'s
attribute instead, which no store of ``C`` describes. The same holds the other way: a store
``self.window = ...`` in a method of an unrelated class ``D`` lands on a ``C`` instance when
``D.set_window(c)`` is called.

A method's function is reached unbound through the class object. ``Detached.where(C)``
follows every place the tree names ``C`` or an in-tree subclass (its name, an import alias,
``mod.C``, the name as a string that something is looked up by). Making an instance,
``isinstance``/``issubclass``, a base, ``super(C, self)``, an annotation, an ``except``, a
comparison, a message, or reading an attribute that is not a name the family's bodies bind
is harmless. Reading one of those names off it (except ``C.m(self, ...)`` in a method of the
family: the base call, with an instance of the family), or handing the class object on
(assigned, returned, passed, put in a container) is a place where a method may run
detached; so is a decorator of the tree's own on the class or a method (it receives the
function), so is ``cls`` in a classmethod (or ``__new__``, ``__init_subclass__``) of the
family used the same ways, and ``Base = C`` makes ``Base`` a name of the family.
Reflection is followed where it reads a method in one chain: ``type(x).m``, ``x.__class__.m``, ``x.m.__func__``. For
every class at once (checked first, once per tree): the class of an instance kept or handed
on (``k = type(x)``: a name bound to it is followed in its scope), classes listed by
reflection (``__subclasses__``, ``__mro__``, ``__bases__``, ``mro()``, ``getmembers``), and
``m.__func__`` off a name. Not followed (docs/sites.md): a class looked up by a computed
name, or reached through code outside the tree.

The text settles most occurrences (a comment, a longer string, the class statement, a call,
a non-method attribute, a plain import); a file with any other is read by its syntax tree,
only the statements around those lines.
"""

from __future__ import annotations

import ast
import re

from fa4_patch import names as N

# calls that only look at a class object
_LOOKERS = frozenset({"isinstance", "issubclass", "super", "id", "str", "repr", "hash",
                      "print", "format", "type", "callable", "hasattr"})
# calls that look an object up by its name
_LOOKUPS = frozenset({"getattr", "__getattribute__", "__getattr__", "attrgetter", "locate",
                      "get", "pop", "setdefault", "__getitem__", "import_module"})
# attributes of a class object that describe it
_HARMLESS_DUNDERS = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})
# reflection that yields class objects or plain functions nothing here follows
_REFLECTION = ("__subclasses__", "__mro__", "mro", "__bases__", "__base__", "__func__")
_LISTS_OF_CLASSES = frozenset({"__subclasses__", "__mro__", "mro", "__bases__", "__base__"})


class Detached:
    """Answers ``where(cls_name)`` for one tree: "" when no method of the class (or of an
    in-tree subclass) can run with a first argument other than an instance of the family,
    else the first place that may (``path:line (what)``). Reads each file once."""

    def __init__(self, stores):
        self.stores = stores                 # attrstores.StoreIndex: the files and trees
        self._memo: dict[str, str] = {}
        self._generic = None                 # path -> {words read after type()/__class__}
        self._classes: dict[str, list] = {}   # path -> [(class, base names, bound names)]
        self._chains: dict[str, list] = {}    # path -> [(line, method, what)]
        self._headers: dict[str, list] = {}   # path -> [(class, text of its bases)]
        self._any = None                      # where any class object may be handed on

    def where(self, cls_name: str, static: bool = False) -> str:
        hit = self._memo.get((cls_name, static))
        if hit is None:
            hit = self._where(cls_name)
            if not hit and static:
                hit = self._instances(cls_name)
            self._memo[(cls_name, static)] = hit
        return hit

    def _instances(self, cls_name: str) -> str:
        """Where an instance of the family is made (``F()``): a static method read off it is
        the plain function, called with whatever its caller passes first (an autograd
        ``Function`` is never made by hand: ``F.apply`` hands ``forward`` its ``ctx``)."""
        family, _, _ = self._family({cls_name})
        from analyzer.sites.attrstores import _in_string_or_comment

        for rel in sorted(self.stores.data):
            raw = self.stores.data[rel]
            for n in sorted(family):
                for i in _word_at(raw, n.encode()):
                    if _CALL_AFTER.match(raw, i + len(n)) and \
                            not _DEF_BEFORE.search(raw[max(0, i - 40):i]) and \
                            not _in_string_or_comment(raw, i):
                        line = raw.count(b"\n", 0, i) + 1
                        return (f"{rel}:{line} (an instance of {n} is made: its static "
                                "methods take any first argument through it)")
        return ""

    # -- the family's names ------------------------------------------------------------
    def _where(self, cls_name: str) -> str:
        # a class object of some instance kept or handed on may be this class: settled once
        # for every class, before any class's own names are read
        if self._any is None:
            self._any = next((f"{rel}:{line} ({what})"
                              for rel, line, what in self._generic_places(frozenset())), "")
        if self._any:
            return self._any
        names = {cls_name}
        while True:
            family, methods, trouble = self._family(names)
            if trouble:
                return trouble
            # every occurrence of a family name: the text settles most of them; a file with
            # one the text cannot settle is read by its syntax tree
            data = self.stores.data
            needles = sorted(n.encode() for n in family)
            aliases: set = set()
            for rel in sorted(data):
                raw = data[rel]
                lines = {raw.count(b"\n", 0, i) + 1 for n in needles for i in _word_at(raw, n)
                         if not _text_harmless(raw, i, len(n), methods)}
                if not lines:
                    continue
                info = self.stores.index.by_path.get(rel)
                tree = info.bare_tree if info is not None else None
                if tree is None:
                    return f"{rel}:1 (cannot be read)"
                got = _occurrences(rel, tree, family, methods, lines, aliases)
                _UP.clear()
                if got:
                    return got
            if aliases <= family:
                break
            names = family | aliases          # ``_Base = m.Attn``: its uses count too
        for rel, line, what in self._generic_places(methods):
            return f"{rel}:{line} ({what})"
        return ""

    def _family(self, seeds: set):
        """The classes named by ``seeds`` (class names and aliases) and their in-tree
        subclasses (by the names their bases spell), every name their bodies bind, and the
        first trouble: a file that cannot be read, or a decorator of the tree's own that
        receives a method's function (it may call it with anything)."""
        from analyzer.sites.attrstores import _class_bindings, _class_defs

        data = self.stores.data
        family = set(seeds)
        methods: set = set()
        todo = sorted(seeds)
        done: set = set()
        uses: list = []
        while todo:
            name = todo.pop()
            if name in done:
                continue
            done.add(name)
            needle = name.encode()
            for rel in sorted(data):
                raw = data[rel]
                if not _has_word(raw, needle):
                    continue
                heads = self._headers.get(rel)
                if heads is None:
                    heads = self._headers[rel] = _headers(raw)
                if not any(k == name or _has_word(head, needle) for k, head in heads):
                    continue              # no class statement of the file names it
                classes = self._classes.get(rel)
                if classes is None:
                    info = self.stores.index.by_path.get(rel)
                    tree = info.bare_tree if info is not None else None
                    if tree is None:
                        return family, methods, f"{rel}:1 (cannot be read)"
                    local = _tree_decorators(tree, self._in_tree)
                    classes = self._classes[rel] = [
                        (k.name, frozenset().union(*(_names(b) for b in k.bases)),
                         frozenset(_class_bindings(k)), local(k), _cls_uses(k))
                        for k in _class_defs(tree)]
                for kname, bases, bound, decorated, cls_uses in classes:
                    if kname == name:
                        methods |= bound
                        if decorated:
                            line, what = decorated
                            return family, methods, f"{rel}:{line} ({what})"
                        uses.extend((rel, line, use) for line, use in cls_uses)
                    elif name in bases and kname not in family:
                        # a subclass inherits the methods: its class object reaches them too
                        family.add(kname)
                        todo.append(kname)
        # the class object a classmethod (or ``__new__``, ``__init_subclass__``) receives
        for rel, line, use in uses:
            if use is None or use is _ALIAS or isinstance(use, str) and use in methods:
                what = f"{use} read off cls" if isinstance(use, str) else "cls handed on"
                return family, methods, f"{rel}:{line} ({what})"
        return family, methods, ""

    def _in_tree(self, module: str) -> bool:
        """Is ``module`` (dotted) one of the tree's, or under a top-level name of the tree?"""
        tops = self.__dict__.get("_tops")
        if tops is None:
            tops = self._tops = frozenset(rel.split("/")[0].removesuffix(".py")
                                          for rel in self.stores.data)
        return module.split(".")[0] in tops or \
            self.stores.index.tree_module(module) is not None

    # -- reflection read in one chain -------------------------------------------------
    def _generic_places(self, methods: set):
        """``type(x).m``, ``x.__class__.m`` and ``x.m.__func__`` for a name ``m`` in
        ``methods``, and class objects of instances kept or handed on (for any class), in
        file order: the text finds the candidates (once per tree), the syntax confirms (once
        per file, and only as far as the caller reads)."""
        if self._generic is None:
            self._generic = {}
        for rel in sorted(self.stores.data):
            words = self._generic.get(rel)
            if words is None:
                words = self._generic[rel] = _chain_words(self.stores.data[rel])
            if not (words & methods or "*" in words):
                continue
            found = self._chains.get(rel)
            if found is None:
                info = self.stores.index.by_path.get(rel)
                tree = info.bare_tree if info is not None else None
                found = self._chains[rel] = _chains_in(tree) if tree is not None else None
            if found is None:
                yield rel, 1, "cannot be read"
                continue
            for line, attr, what in found:
                if attr in methods or attr == "*":
                    yield rel, line, what


_TRUSTED_DECORATORS = frozenset({"staticmethod", "classmethod", "property", "abstractmethod",
                                  "cached_property", "dataclass", "final", "override"})


def _tree_decorators(tree: ast.Module, in_tree):
    """A function giving, for a class statement, the first decorator of the tree's own (on
    the class or on a function of its body) as (line, what), else None: it receives the
    class object or the method's function and may call it with anything. A decorator
    imported from outside the tree, or a builtin one, is taken to call it as it was called."""
    from analyzer.sites.attrstores import _statements

    outside = set()
    for st, _ in _statements(tree):
        if isinstance(st, ast.Import):
            outside |= {(a.asname or a.name).split(".")[0] for a in st.names
                        if not in_tree(a.name)}
        elif isinstance(st, ast.ImportFrom) and not st.level and not in_tree(st.module or ""):
            outside |= {a.asname or a.name for a in st.names}

    def root(d):
        while isinstance(d, (ast.Call, ast.Attribute)):
            d = d.func if isinstance(d, ast.Call) else d.value
        return d.id if isinstance(d, ast.Name) else None

    def first(k: ast.ClassDef):
        owners = [(k, "the class")] + [
            (f, f"{k.name}.{f.name}") for f in k.body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        props = {f.name for f, _ in owners[1:]}
        for node, what in owners:
            for d in node.decorator_list:
                r = root(d)
                if r in _TRUSTED_DECORATORS or r in outside:
                    continue
                if isinstance(d, ast.Attribute) and d.attr in ("setter", "getter", "deleter") \
                        and r in props:
                    continue                      # ``@x.setter`` of a property of the body
                return d.lineno, f"decorator {r or ast.unparse(d)} receives {what}"
        return None
    return first


_CLASS_FIRST = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})


class _Anything:
    """Every attribute name: ``_use`` then reports any attribute read off the object."""

    def __contains__(self, name) -> bool:
        return name not in _HARMLESS_DUNDERS


def _cls_uses(k: ast.ClassDef) -> list:
    """(line, use) for each use of the class object a method of ``k`` receives as its first
    parameter (a classmethod, ``__new__``, ``__init_subclass__``) that is not harmless:
    ``_use``'s answer (an attribute name, handed on, an alias), read against the family's
    method names later."""
    out = []
    for f in k.body:
        if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not (f.name in _CLASS_FIRST or any(
                isinstance(d, ast.Name) and d.id == "classmethod" for d in f.decorator_list)):
            continue
        params = f.args.posonlyargs + f.args.args
        if not params:
            continue
        first = params[0].arg
        for n in _parents(f, None):
            if isinstance(n, ast.Name) and n.id == first and isinstance(n.ctx, ast.Load):
                use = _use(n, _Anything())
                if use is not True:
                    out.append((n.lineno, use))
        _UP.clear()
    return out


def _word_at(raw: bytes, needle: bytes):
    """Where ``needle`` stands as a whole word in ``raw``."""
    n = len(needle)
    i = raw.find(needle)
    while i >= 0:
        b = raw[i - 1:i] if i else b""
        a = raw[i + n:i + n + 1]
        if not (b.isalnum() or b == b"_") and not (a.isalnum() or a == b"_"):
            yield i
        i = raw.find(needle, i + n)


def _has_word(raw: bytes, needle: bytes) -> bool:
    return next(_word_at(raw, needle), None) is not None


_CALL_AFTER = re.compile(rb"[ \t]*\(")
_DEF_BEFORE = re.compile(rb"\b(?:def|class)[ \t]+$")
_ATTR_AFTER = re.compile(rb"[ \t]*\.[ \t]*([A-Za-z_]\w*)")
_AS_AFTER = re.compile(rb"[ \t]+as\b")
_CLASS_BEFORE = re.compile(rb"\bclass[ \t]+$")
_IMPORT_OPEN = re.compile(rb"\bimport[ \t]*\([^)]*$")


def _text_harmless(raw: bytes, i: int, n: int, methods: set) -> bool:
    """Does the text alone show that the name at ``raw[i:i+n]`` cannot hand the class object
    on: a comment or a string other than the bare name, the ``class`` statement, a call
    (an instance is made), an attribute that is none of the family's names, or an import
    without ``as``? Anything else is read by its syntax tree."""
    from analyzer.sites.attrstores import _string_spans, is_fstring

    starts, ends = _string_spans(raw)
    import bisect

    k = bisect.bisect_right(starts, i) - 1
    if k >= 0 and i < ends[k]:
        span = raw[starts[k]:ends[k]]
        if span.startswith(b"#"):
            return True
        if is_fstring(raw, starts[k]):
            return False                                  # its braces hold code
        return span.lstrip(b"rRbBuUfF").strip(b"'\"") != raw[i:i + n]
    after = raw[i + n:i + n + 200]
    if _CLASS_BEFORE.search(raw[max(0, i - 40):i]):
        return True
    if _CALL_AFTER.match(after):
        return True
    m = _ATTR_AFTER.match(after)
    if m is not None:
        word = m.group(1).decode()
        return not (word in methods or word in _REFLECTION or word == "__dict__")
    if _AS_AFTER.match(after):
        return False                     # an alias: the syntax tree follows it
    line_start = raw.rfind(b"\n", 0, i) + 1
    head = raw[line_start:i].lstrip()
    if head.startswith((b"from ", b"import ")) and b"(" not in head:
        return True
    # inside the brackets of ``from m import (...)``
    j = raw.rfind(b"import", 0, i)
    if j < 0 or _IMPORT_OPEN.match(raw, j, i) is None:
        return False
    return raw[raw.rfind(b"\n", 0, j) + 1:j].lstrip().startswith(b"from ")


_TYPE_CALL = re.compile(rb"type[ \t]*\(")
_FUNC_BEFORE = re.compile(rb"\.\s*([A-Za-z_]\w*)\s*\.\s*$")


def _chain_words(raw: bytes) -> set:
    """The names read right after ``type(...)`` or ``.__class__``, and before ``.__func__``;
    "*" where such a class object may be kept or handed on (assigned, returned, passed to
    a call that is not a plain look at it) or a bracket is unmatched. A superset: brackets are
    matched without regard to strings. Each search starts from a literal, so the text is
    scanned fast."""
    out = set()
    i = raw.find(b"__class__")
    while i >= 0:
        j = i + 9
        a = _ATTR_AFTER.match(raw, j)
        if a is not None:
            out.add(a.group(1).decode())
        else:
            k = i                                        # the receiver: ``self.a.__class__``
            while k and (raw[k - 1:k].isalnum() or raw[k - 1:k] in (b"_", b".")):
                k -= 1
            if raw[k - 1:k] in (b")", b"]") or _kept(raw, k, j):
                out.add("*")
        i = raw.find(b"__class__", j)
    if _CLASS_LISTS.search(raw):
        out.add("*")                   # ``C.__subclasses__()``, ``__mro__``, ``getmembers``,
        #                                ``MethodType``, ``getattr_static``, ``getattr``
    i = raw.find(b"__func__")
    while i >= 0:
        m = _FUNC_BEFORE.search(raw, max(0, i - 200), i)
        out.add(m.group(1).decode() if m is not None else "*")
        i = raw.find(b"__func__", i + 8)
    for m in _TYPE_CALL.finditer(raw):
        if m.start() and (raw[m.start() - 1:m.start()].isalnum() or
                          raw[m.start() - 1:m.start()] in (b"_", b".")):
            continue                                     # ``dtype(``, ``np.type(``
        j = _close(raw, m.end())
        if j < 0:
            out.add("*")
            continue
        a = _ATTR_AFTER.match(raw, j)
        if a is not None:
            out.add(a.group(1).decode())
        elif _kept(raw, m.start(), j):
            out.add("*")
    return out


_CLASS_LISTS = re.compile(rb"__subclasses__|__mro__|__bases__|\.mro\s*\(|getmembers|MethodType|"
                          rb"getattr")
_KEEP_BEFORE = re.compile(rb"(?:[^=!<>]=|\breturn|\byield|[\[{:,])\s*$")
_LOOK_CALL = re.compile(rb"\b(?:" + b"|".join(sorted(x.encode() for x in (
    "isinstance", "issubclass", "id", "str", "repr", "hash", "print", "format", "callable",
    "hasattr"))) + rb")\s*\($")


def _kept(raw: bytes, start: int, end: int) -> bool:
    """Does the class object spelled at ``raw[start:end]`` look kept or handed on: after
    ``=``, ``return``, ``yield``, a bracket, a ``:`` or a ``,``, or as an argument of a call
    that is not a plain look at it? A comparison, a call (an instance) or a message is not."""
    after = raw[end:end + 40].lstrip(b" \t")
    if after[:1] == b"(":
        return False                                      # an instance is made
    head = raw[max(0, start - 80):start]
    if head.rstrip(b" \t").endswith(b"(") or head.rstrip(b" \t").endswith(b","):
        # an argument: of a look at it (``isinstance(y, type(x))``), or handed on
        k = _open_call(raw, start)
        if k >= 0 and _LOOK_CALL.search(raw, max(0, k - 20), k + 1):
            return False
        return True
    return _KEEP_BEFORE.search(head) is not None


def _open_call(raw: bytes, start: int) -> int:
    """The index of the ``(`` whose argument list holds ``start`` (-1 if none is found within
    a few hundred bytes)."""
    depth = 0
    for k in range(start - 1, max(-1, start - 400), -1):
        c = raw[k]
        if c == 41:
            depth += 1
        elif c == 40:
            if depth == 0:
                return k
            depth -= 1
    return -1


def _close(raw: bytes, j: int, opening: bytes = b"(", closing: bytes = b")") -> int:
    """The index after the bracket that closes the one opened just before ``j`` (strings not
    regarded), or -1."""
    depth = 1
    while True:
        c = raw.find(closing, j)
        if c < 0:
            return -1
        depth += raw.count(opening, j, c) - 1
        j = c + 1
        if depth <= 0:
            return j


_HEADER = re.compile(rb"\bclass[ \t]+([A-Za-z_]\w*)[ \t]*(\(?)")


def _headers(raw: bytes) -> list:
    """(name, the text of its bases) for each ``class`` statement the text spells (a
    superset: ``class`` in a string or comment counts too)."""
    out = []
    for m in _HEADER.finditer(raw):
        if m.group(2):
            j = _close(raw, m.end())
            out.append((m.group(1).decode(), raw[m.end():j if j >= 0 else len(raw)]))
        else:
            out.append((m.group(1).decode(), b""))
    return out


def _chains_in(tree: ast.Module) -> list:
    """(line, method, what) for each ``type(x).m``, ``x.__class__.m`` and ``x.m.__func__``,
    and ("*": any method) for each ``type(x)`` / ``x.__class__`` kept or handed on (a name
    bound to it is followed in its own scope)."""
    out = []
    nodes = _parents(tree, None)
    modules = _module_names(tree)
    for n in nodes:
        if isinstance(n, ast.Constant) and n.value in ("__func__", "__class__"):
            out.append((n.lineno, "*", f"{n.value} looked up by name"))
            continue
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else ""
            if name in ("MethodType", "getattr_static"):
                out.append((n.lineno, "*", f"{name}() takes a function off a class or binds "
                                           "it to any object"))
                continue
            if name == "getattr" and isinstance(f, ast.Name) and len(n.args) > 1 and \
                    not isinstance(n.args[1], ast.Constant) and _is_module(n.args[0], modules):
                out.append((n.lineno, "*", "a module's attribute read by a computed name "
                                           "(it may be a class)"))
                continue
        if isinstance(n, ast.Attribute) and n.attr in _LISTS_OF_CLASSES or \
                isinstance(n, (ast.Name, ast.Attribute)) and \
                (n.id if isinstance(n, ast.Name) else n.attr) == "getmembers":
            out.append((n.lineno, "*", "classes listed by reflection"))
            continue
        if isinstance(n, ast.Attribute) and n.attr == "__func__":
            v = n.value
            m = v.attr if isinstance(v, ast.Attribute) else "*"
            out.append((n.lineno, m, "the function of a method taken with __func__"))
            continue
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
                n.func.id == "type" and len(n.args) == 1 and not n.keywords or
                isinstance(n, ast.Attribute) and n.attr == "__class__" and
                isinstance(n.ctx, ast.Load)):
            continue
        for line, use in _class_object_uses(n, nodes):
            if isinstance(use, str):
                out.append((line, use, f"{use} read off the class of an object"))
            else:
                out.append((line, "*", "the class of an object kept or handed on"))
    _UP.clear()
    return out


def _module_names(tree: ast.Module) -> set:
    """The names an ``import`` binds in the file (modules, as far as the text shows)."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return out


def _is_module(e, modules: set) -> bool:
    """Is ``e`` a module or a namespace of one: a name an ``import`` binds, ``sys.modules[...]``
    (or ``.get``), ``globals()``, ``vars()`` with no argument, or an attribute chain on those?"""
    while isinstance(e, ast.Attribute):
        e = e.value
    if isinstance(e, ast.Name):
        return e.id in modules
    if isinstance(e, ast.Subscript) or isinstance(e, ast.Call) and \
            isinstance(e.func, ast.Attribute) and e.func.attr == "get":
        base = e.value if isinstance(e, ast.Subscript) else e.func.value
        return isinstance(base, ast.Attribute) and base.attr == "modules"
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
        return e.func.id in ("globals", "vars") and not e.args
    return False


def _class_object_uses(n, nodes) -> list:
    """(line, use) for the uses of the class object ``n`` that are not harmless (``_use``
    with every attribute counted); through a plain name it is bound to, that name's loads
    in the same scope."""
    use = _use(n, _Anything())
    if use is True:
        return []
    if use is not _ALIAS:
        return [(n.lineno, use)]
    names = _alias_targets(parent(n))
    scope = _scope_of(n)
    out = []
    for x in nodes:
        if isinstance(x, ast.Name) and x.id in names and isinstance(x.ctx, ast.Load) and \
                _scope_of(x) is scope:
            u = _use(x, _Anything())
            if u is not True:
                out.append((x.lineno, None if u is _ALIAS else u))
    return out


def _scope_of(n):
    p = parent(n)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda, ast.Module)):
        p = parent(p)
    return p


def _names(expr) -> set:
    """The names a base expression spells for its class (``C``, ``mod.C``)."""
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, ast.Attribute):
        return {expr.attr}
    return set()


_UP: dict = {}      # child node -> parent, for the statements being read (``_parents``)


def parent(node):
    return _UP.get(node)


def _parents(tree: ast.Module, lines: set) -> list:
    """Fill ``_UP`` for the statements of ``tree`` that span one of ``lines`` (None: all), and
    the statements around them; the nodes so mapped."""
    _UP.clear()
    out = []
    todo = [(tree, None)]
    while todo:
        node, up = todo.pop()
        _UP[node] = up
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if lines is not None and isinstance(child, ast.stmt) and not any(
                    child.lineno <= x <= child.end_lineno for x in lines):
                continue
            todo.append((child, node))
    return out


def _occurrences(rel: str, tree: ast.Module, family: set, methods: set, lines,
                 aliases: set) -> str:
    """The first place in one file where a family class object may be used to reach a method
    unbound, or handed on; "" when none. Only the statements that span ``lines`` (where
    the text could not settle an occurrence; None: every statement) are read."""
    from analyzer.sites.attrstores import _statements

    names = set(family)
    for st, _ in _statements(tree):
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            for a in st.names:
                if a.asname and a.name.rsplit(".", 1)[-1] in family:
                    names.add(a.asname)
                    lines = None         # an alias: every use of it counts
    for n in sorted(_parents(tree, lines), key=_where_at):
        if isinstance(n, ast.Name):
            if n.id not in names or not isinstance(n.ctx, ast.Load):
                continue
        elif isinstance(n, ast.Attribute):
            if n.attr not in family or not isinstance(n.ctx, ast.Load):
                continue
        elif isinstance(n, ast.Constant):
            if not (isinstance(n.value, str) and n.value in family) or not _looked_up(n):
                continue
            return f"{rel}:{n.lineno} (the class named by the string {n.value!r})"
        else:
            continue
        use = _use(n, methods, family)
        if use is True:
            continue
        if use is _ALIAS:
            aliases |= _alias_targets(parent(n))
            continue
        what = f"{_label(n)}.{use} read off the class" if isinstance(use, str) \
            else f"the class {_label(n)} handed on"
        return f"{rel}:{n.lineno} ({what})"
    return ""


def _where_at(n) -> tuple:
    return (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))


def _label(n) -> str:
    return n.id if isinstance(n, ast.Name) else n.attr


def _use(node, methods, family: set = frozenset()):
    """How the class object ``node`` is used: True when harmlessly; the name when one of
    ``methods`` is read off it; ``_ALIAS`` when a plain name is bound to it; None when it is
    handed on."""
    p = parent(node)
    if isinstance(p, ast.Call):
        if p.func is node:
            return True                                   # an instance is made
        f = p.func
        if isinstance(f, ast.Name) and f.id in _LOOKERS and node in p.args:
            return True
        if isinstance(f, ast.Attribute) and f.attr == "__new__" and p.args and \
                p.args[0] is node:
            return True                                   # super().__new__(cls)
        return None
    if isinstance(p, ast.Tuple) and isinstance(parent(p), ast.Call):
        call = parent(p)
        if isinstance(call.func, ast.Name) and call.func.id in ("isinstance", "issubclass"):
            return True
        return None
    if isinstance(p, ast.Attribute) and p.value is node:
        a = p.attr
        if a in _HARMLESS_DUNDERS:
            return True
        if a in _REFLECTION or a == "__dict__":
            return None                                   # classes or functions handed on
        if a in methods:
            return True if _explicit_base_call(p, family) else a
        return True
    if isinstance(p, ast.ClassDef) and node in p.bases:
        return True
    if isinstance(p, (ast.Assign, ast.AnnAssign)) and p.value is node and _alias_targets(p):
        return _ALIAS                                     # ``_Base = m.Attn``
    if isinstance(p, (ast.Compare, ast.FormattedValue)):
        return True
    if isinstance(p, ast.Subscript) and p.slice is node:
        return True
    if isinstance(p, ast.ExceptHandler) or \
            isinstance(p, ast.Tuple) and isinstance(parent(p), ast.ExceptHandler):
        return True
    if _in_annotation(node):
        return True
    return None


_ALIAS = object()


def _alias_targets(st) -> set:
    """The names an assignment of the class object binds when every target is a plain name."""
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
    if all(isinstance(t, ast.Name) for t in targets):
        return {t.id for t in targets}
    return set()


def _explicit_base_call(attr: ast.Attribute, family: set) -> bool:
    """``C.m(self, ...)`` inside a method of a class of the family whose first parameter is
    ``self`` (never rebound): the classic base call, with an instance of the family."""
    call = parent(attr)
    if not (isinstance(call, ast.Call) and call.func is attr and call.args and
            isinstance(call.args[0], ast.Name)):
        return False
    first = call.args[0].id
    scope = parent(call)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda, ast.ClassDef)):
        scope = parent(scope)
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
            not isinstance(parent(scope), ast.ClassDef) or scope.decorator_list or \
            parent(scope).name not in family:
        return False
    params = scope.args.posonlyargs + scope.args.args
    if not params or params[0].arg != first:
        return False
    # the first parameter never rebound in the method
    return not any(isinstance(x, ast.Name) and x.id == first and not isinstance(x.ctx, ast.Load)
                   for x in ast.walk(scope))


def _in_annotation(node) -> bool:
    child, p = node, parent(node)
    while isinstance(p, (ast.Subscript, ast.Tuple, ast.BinOp, ast.Attribute, ast.List)):
        child, p = p, parent(p)
    if isinstance(p, ast.arg):
        return p.annotation is child
    if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return p.returns is child
    if isinstance(p, ast.AnnAssign):
        return p.annotation is child
    return False


def _looked_up(const) -> bool:
    """Is the string a name something is looked up by: an argument of ``getattr`` and its
    kin (``attrgetter("C")``, ``registry.get("C")``) or a subscript's key
    (``globals()["C"]``, ``vars(mod)["C"]``)? A comparison, a message, a logger's name, a
    dict key or ``__all__`` is not."""
    p = parent(const)
    if isinstance(p, ast.Call) and const in p.args:
        f = p.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
            else ""
        return name in _LOOKUPS
    return isinstance(p, ast.Subscript) and p.slice is const


_MUTATING = frozenset({"update", "setdefault", "pop", "popitem", "clear", "append", "extend",
                       "insert", "remove", "discard", "add", "__setitem__", "__delitem__",
                       "__ior__", "sort", "reverse"})
_READING_CALLS = re.compile(rb"(?:\b(?:dict|list|tuple|set|len|print|repr|str|sorted|iter|"
                            rb"isinstance|copy|deepcopy|any|all|sum|json\.dumps))[ \t]*\($")


def changed_elsewhere(files: dict, own: str | None, name: str, changes=None,
                     skip=None) -> str:
    """The first file of ``files`` (path -> bytes) other than ``own`` (None: every file)
    that names ``name`` outside strings and comments where it may change it, or "".
    ``changes(raw, i, n)`` reads one mention: ``mutating_mention`` (the default: the flow's
    module dicts, where a read of an item is no change), ``mutating_chain`` or
    ``object_changed``. ``skip`` (path -> set of line numbers) leaves out the code the
    sandbox itself runs."""
    from analyzer.sites.attrstores import _in_string_or_comment

    changes = changes or mutating_mention
    skip = skip or {}
    needle = name.encode()
    for rel in sorted(files):
        if rel == own:
            continue
        raw = files[rel]
        if needle not in raw:
            continue
        lines = skip.get(rel, ())
        for i in _word_at(raw, needle):
            if _in_string_or_comment(raw, i):
                continue
            if lines and raw.count(b"\n", 0, i) + 1 in lines:
                continue
            if changes(raw, i, len(name)):
                return rel
    return ""


_DOTTED_TAIL = re.compile(rb"(?:[A-Za-z_]\w*[ \t]*\.[ \t]*)+$")


# ``name=`` right after an opening parenthesis or a comma: a keyword argument
_KEYWORD_ARG = re.compile(rb"[(,][ \t]*([A-Za-z_]\w*)[ \t]*=$")
_WINDOW_KEYWORDS = frozenset(N.WINDOW_KEYS) | {"causal"}

_CHAIN_STEP = re.compile(rb"[ \t]*(?:\.[ \t]*([A-Za-z_]\w*)|(\[)|(\())")


def mutating_chain(raw: bytes, i: int, n: int) -> bool:
    """``mutating_mention`` through a chain of attributes, subscripts and calls after the name
    (``Registry.windows.update(...)``, ``REG["a"]["local"] = ...``, ``WIN[0].insert(...)``):
    a mutating method anywhere in the chain, or a store or augmented assignment after it,
    changes what the name holds, and so may a name bound to what the chain reaches."""
    j = i + n
    steps = 0
    while True:
        m = _CHAIN_STEP.match(raw, j)
        if m is None:
            break
        if m.group(1) is not None:
            if m.group(1).decode() in _MUTATING:
                return True
            j = m.end()
        else:
            opener = b"[" if m.group(2) else b"("
            k = _close(raw, m.end(), opener, b"]" if opener == b"[" else b")")
            if k < 0:
                return True
            j = k
        steps += 1
    rest = raw[j:j + 4].lstrip(b" \t")
    if rest[:2] in (b"+=", b"-=", b"|=", b"&=", b"*=", b"/=", b"^=", b"%=") or \
            rest[:3] in (b"<<=", b">>=", b"//=", b"**="):
        return True                 # in place, on a list or a dict (``KW |= {...}``)
    if rest[:1] == b"=" and rest[:2] != b"==":
        # through a chain it changes the container; ``mod.NAME = ...`` rebinds the module's
        # name; a bare ``NAME = ...`` binds a name of its own file (the defining module's
        # bindings are the extraction's)
        return steps > 0 or raw[:i].rstrip(b" \t\\\n").endswith(b".")
    line_start = raw.rfind(b"\n", 0, i) + 1
    before = _DOTTED_TAIL.sub(b"", raw[line_start:i]).rstrip(b" \t")
    if steps and before.endswith(b"=") and not before.endswith((b"==", b"!=", b"<=", b">=")) \
            and b"(" not in before:
        # an alias of what the chain reaches (``inner = REG["a"]``)
        return True
    kw = _KEYWORD_ARG.search(before) if steps else None
    if kw is not None:
        # a keyword argument: a window handed on (``f(window_size=REG["local"])``) is a
        # read; any other hands what the chain reaches to the callee, which may change it
        # in place (``fill(d=REG["a"])``), as a positional argument does
        if kw.group(1).decode() in _WINDOW_KEYWORDS:
            return False
        k = raw.rfind(b"(", 0, i)
        return not (k >= 0 and _READING_CALLS.search(raw, max(0, k - 40), k + 1))
    if steps and before.endswith((b"(", b",")):
        k = raw.rfind(b"(", 0, i)
        return not (k >= 0 and _READING_CALLS.search(raw, max(0, k - 40), k + 1))
    return mutating_mention(raw, i, n)


_COPYING_CALLS = frozenset({"dict", "list", "tuple", "set", "frozenset", "len", "sorted",
                            "print", "repr", "str", "bool", "isinstance", "copy", "deepcopy",
                            "any", "all", "sum", "iter"})


def held_container_use(tree, attr: str) -> int:
    """The first line of ``tree`` that may change, or hand on, the container an object holds
    in attribute ``attr``; 0 when every mention is one the flow reads. Sound by listing what
    is harmless, not what is harmful: a plain store of the attribute (``o.attr = {...}``, the
    flow reads it), an item read that is not stored into or changed through
    (``o.attr["window_size"]``), a reading method (``o.attr.get(...)``), a ``**`` splat, a
    comparison or test, a copy or read by a builtin (``dict(o.attr)``). Anything else --
    an item stored, a mutating method, an alias (``kw = o.attr or {}``, ``[o.attr]``,
    ``return o.attr``, ``lambda: o.attr``), a call's argument, the name as a string
    (``getattr(o, "attr")``, ``vars(o)["attr"]``, ``attrgetter("attr")``) -- counts."""
    from analyzer.sites.attrstores import _mangles_to
    from analyzer.sites.astutil import indexed, index as index_tree, parent
    from analyzer.sites.flow_base import _READ_METHODS

    keep = None if indexed(tree) else index_tree(tree)  # noqa: F841 - parents below
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and \
                (n.value == attr or _mangles_to(n.value, attr)):
            return n.lineno
        if not (isinstance(n, ast.Attribute) and (n.attr == attr or _mangles_to(n.attr, attr))):
            continue
        p = parent(n)
        if isinstance(n.ctx, ast.Del) or isinstance(p, ast.AugAssign):
            return n.lineno
        if isinstance(n.ctx, ast.Store):
            continue                                    # o.attr = ...: read by the flow
        if isinstance(p, ast.Subscript) and p.value is n:
            g = parent(p)
            if isinstance(p.ctx, (ast.Store, ast.Del)) or isinstance(g, ast.AugAssign) or \
                    (isinstance(g, ast.Subscript) and g.value is p) or \
                    (isinstance(g, ast.Attribute) and g.value is p):
                return n.lineno
            continue                                    # an item read
        if isinstance(p, ast.Attribute) and p.value is n:
            g = parent(p)
            if p.attr in _READ_METHODS and isinstance(g, ast.Call) and g.func is p:
                continue
            return n.lineno
        if isinstance(p, ast.keyword) and p.arg is None:
            continue                                    # f(**o.attr)
        if isinstance(p, ast.Dict) and any(k is None and v is n for k, v in zip(p.keys, p.values)):
            continue                                    # {**o.attr}
        if isinstance(p, ast.Compare):
            continue
        if isinstance(p, (ast.If, ast.While, ast.Assert)) and p.test is n:
            continue
        if isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
            continue
        if isinstance(p, ast.Call) and n in p.args and isinstance(p.func, (ast.Name, ast.Attribute)) \
                and (p.func.id if isinstance(p.func, ast.Name) else p.func.attr) in _COPYING_CALLS:
            continue
        return n.lineno
    return 0


_METHOD_CALL = re.compile(rb"(?:[ \t]*(?:\.[ \t]*[A-Za-z_]\w*|\[[^\]\n]*\]))*[ \t]*\."
                          rb"[ \t]*([A-Za-z_]\w*)[ \t]*\(")
# methods that read an object and change nothing of the classes the pass meets
_READING_METHODS = frozenset({"get", "keys", "values", "items", "copy", "index", "count",
                              "startswith", "endswith", "format", "join", "split", "strip",
                              "lower", "upper", "__repr__", "__str__"})


_ONE_ATTR_STORE = re.compile(rb"[ \t]*\.[ \t]*([A-Za-z_]\w*)[ \t]*(?:[-+*/|&^%@]|//|\*\*|<<|>>)?=(?!=)")


def object_changed(raw: bytes, i: int, n: int, reads=None) -> bool:
    """``mutating_chain`` for an object (an instance a module makes, a class, what a decorator
    made): also any method called through it (``CAUSAL.to_te()``, ``fix.register(...)``,
    ``Window.adopt(w)``), which may change it or what it reads. A store to one attribute
    that no code run reads (not in ``reads``, not special) changes nothing that runs; a
    window keyword argument (``window_size=CAUSAL``) is the value handed on, a read."""
    after = raw[i + n:i + n + 200]
    if after.lstrip(b" \t")[:1] == b"(":
        return False        # called: an instance made, or what the callable returns
    if reads is not None:
        m = _ONE_ATTR_STORE.match(after)
        if m is not None:
            attr = m.group(1).decode()
            if attr not in reads and not attr.startswith("__") and attr != "_value_":
                return False
    line_start = raw.rfind(b"\n", 0, i) + 1
    before = _DOTTED_TAIL.sub(b"", raw[line_start:i]).rstrip(b" \t")
    kw = _KEYWORD_ARG.search(before)
    a = after.lstrip(b" \t")[:1]
    if kw is not None and kw.group(1).decode() in _WINDOW_KEYWORDS and a in (b",", b")", b"\n"):
        return False
    if mutating_chain(raw, i, n):
        return True
    m = _METHOD_CALL.match(raw, i + n)
    return m is not None and m.group(1).decode() not in _READING_METHODS


def mutating_mention(raw: bytes, i: int, n: int) -> bool:
    """Can the name at ``raw[i:i+n]`` (a module-level container another file names) change it
    there? Read off the text, erring towards yes: a subscript store or ``del``, a mutating
    method, an augmented assignment, a ``for``/``with`` target, an alias (``c = m.KW``,
    ``import ... as c``), or an argument of a call that is not a plain read. A subscript
    read, a reading method or a comparison is not."""
    after = raw[i + n:i + n + 200]
    line_start = raw.rfind(b"\n", 0, i) + 1
    head = raw[line_start:i]
    stripped = head.lstrip()
    if stripped.startswith((b"for ", b"async for ", b"with ", b"del ")):
        return True
    if stripped.startswith((b"from ", b"import ")):
        return _AS_AFTER.match(after) is not None
    m = _ATTR_AFTER.match(after)
    if m is not None:
        word = m.group(1).decode()
        return word in _MUTATING
    a = after.lstrip(b" \t")
    if a[:1] == b"[":
        j = _close(after, after.index(b"[") + 1, b"[", b"]")
        rest = after[j:].lstrip(b" \t") if j >= 0 else b"="
        return rest[:1] == b"=" and rest[:2] != b"==" or rest[:2] in (b"+=", b"-=", b"|=")
    if a[:2] in (b"|=", b"+=", b"-=", b"&=") or a[:3] in (b"<<=", b">>="):
        return True
    before = _DOTTED_TAIL.sub(b"", head).rstrip(b" \t")      # ``norm._CFG``: from ``norm``
    if before.endswith(b"=") and not before.endswith((b"==", b"!=", b"<=", b">=")):
        return a[:1] in (b"", b"\n", b";", b"#", b")") or a[:1].isspace()
    if before.endswith((b"(", b",")):
        k = raw.rfind(b"(", 0, i)
        return not (k >= 0 and _READING_CALLS.search(raw, max(0, k - 40), k + 1))
    return False
