"""A method run on an object that is not an instance of its class (``Cls.method(other)``):
``self.ATTR`` is then read off that object, and a store through ``self`` lands on it
(``analyzer/sites/detached.py``). Each test names the false safe it guards against, or the
false alarm the text and syntax checks must not raise."""

from __future__ import annotations

import pytest

from analyzer.sites import audit_tree
from analyzer.sites.detached import _chain_words, _text_harmless

_ATTN = ("from flash_attn.cute.interface import flash_attn_func\n\n\n"
         "class Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
         "    def forward(self, q, k, v):\n"
         "        return flash_attn_func(q, k, v, window_size=self.window_size)\n\n\n"
         "class Legacy:\n    window_size = (-1, 0)\n")


def _verdict(tmp_path, extra: str, files: dict | None = None) -> str:
    (tmp_path / "attn.py").write_text(_ATTN + extra)
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    return audit_tree(tmp_path, use_cache=False).verdict


@pytest.mark.parametrize("extra", [
    # the class read off an instance, then the method off the class
    "\n\ndef run(q, k, v):\n    return type(Attn()).forward(Legacy(), q, k, v)\n",
    "\n\ndef run(q, k, v):\n    a = Attn()\n    return a.__class__.forward(Legacy(), q, k, v)\n",
    # the function taken off the class and handed on
    "\n\nf = Attn.forward\n\n\ndef run(q, k, v):\n    return f(Legacy(), q, k, v)\n",
    # the class looked up by name
    "\nimport sys\n\n\ndef run(q, k, v):\n"
    "    return getattr(sys.modules[__name__], 'Attn').forward(Legacy(), q, k, v)\n",
    # the class handed to a function that runs the method on its own object
    "\n\ndef call(cls, q):\n    return cls.forward(Legacy(), q, q, q)\n\n\n"
    "def run(q, k, v):\n    return call(Attn, q)\n",
    # an unrelated class's method calling the method with its own instance ("base call")
    "\n\nclass Other:\n    window_size = (-1, 0)\n\n    def go(self, q):\n"
    "        return Attn.forward(self, q, q, q)\n",
    # inside an f-string's braces
    "\n\ndef run(q, k, v):\n    return f'{Attn.forward(Legacy(), q, k, v)}'\n",
    # a subclass's class object used the same way
    "\n\nclass Sub(Attn):\n    pass\n\n\ndef run(q, k, v):\n"
    "    return Sub.forward(Legacy(), q, k, v)\n",
])
def test_a_method_that_may_run_on_another_object_is_not_proved(tmp_path, extra):
    """Guards against a false safe: each tree runs ``Attn.forward`` with a first argument
    whose ``window_size`` is TE's (-1, 0), while every store of ``Attn`` says (None, 0)."""
    assert _verdict(tmp_path, extra) == "unknown"


def test_a_class_imported_under_another_name_is_followed(tmp_path):
    """Guards against a false safe: the alias of an import spells the class another way."""
    assert _verdict(tmp_path, "", {"use.py": "from attn import Attn as A, Legacy\n\n\n"
                                             "def run(q):\n"
                                             "    return A.forward(Legacy(), q, q, q)\n"}) \
        == "unknown"


@pytest.mark.parametrize("extra", [
    "\n\ndef run(q, k, v):\n    return Attn().forward(q, k, v)\n",
    # harmless uses of the class object: tests, names, annotations, bases, the base call
    "\nimport logging\n\nlog = logging.getLogger('Attn')\n\n\n"
    "def run(q, k, v, a: 'Attn' = None) -> Attn:\n"
    "    assert isinstance(a, (Attn, Legacy)) and Attn.__name__ == 'Attn'\n"
    "    assert type(a) is not Attn\n"
    "    return Attn().forward(q, k, v)\n",
    "\n\nclass Sub(Attn):\n    def forward(self, q, k, v):\n"
    "        return Attn.forward(self, q, k, v)\n\n\n"
    "def run(q, k, v):\n    return Sub().forward(q, k, v)\n",
    # type(x) read for something other than a method of the class
    "\n\ndef run(q, k, v):\n    a = Attn()\n    print(type(a).__qualname__)\n"
    "    return a.forward(q, k, v)\n",
])
def test_methods_run_only_on_instances_are_still_proved(tmp_path, extra):
    """Guards against a false alarm: none of these hands the class object on or runs one of
    its methods on another object."""
    assert _verdict(tmp_path, extra) == "safe"


def test_a_store_by_an_unrelated_class_run_on_the_layer_is_not_trusted(tmp_path):
    """Guards against a false safe: ``Setter.apply(layer)`` runs Setter's store
    ``self.window_size = (-1, 0)`` on the Attn instance; read as Setter's own it was ignored."""
    extra = ("\n\nclass Setter:\n    def apply(self):\n        self.window_size = (-1, 0)\n\n\n"
             "def run(q, k, v):\n    a = Attn()\n    Setter.apply(a)\n"
             "    return a.forward(q, k, v)\n")
    assert _verdict(tmp_path, extra) == "unknown"
    assert _verdict(tmp_path, extra.replace("Setter.apply(a)", "Setter().apply()")) == "safe"


@pytest.mark.parametrize("text, harmless", [
    (b"# Attn.forward(other)\n", True),                 # a comment
    (b"x = 'the Attn layer'\n", True),                  # inside a longer string
    (b"x = 'Attn'\n", False),                           # the bare name as a string: looked at
    (b"x = f'{Attn.forward(o)}'\n", False),             # an f-string's braces are code
    (b"x = rf'{Attn}'\n", False),
    (b"class Attn:\n    pass\n", True),                 # its own class statement
    (b"a = Attn(1)\n", True),                           # an instance made
    (b"n = Attn.__name__\n", True),                     # an attribute that is no method
    (b"f = Attn.forward\n", False),                     # a method read off the class
    (b"d = Attn.__dict__\n", False),
    (b"from m import Attn\n", True),
    (b"from m import (\n    X,\n    Attn,\n)\n", True),
    (b"from m import Attn as A\n", False),              # an alias: followed in the syntax
    (b"return Attn\n", False),                          # handed on
    (b"isinstance(x, Attn)\n", False),                  # left to the syntax tree
])
def test_the_text_settles_only_plain_uses(text, harmless):
    """Guards against the text check settling a use it cannot see: anything but a comment, a
    longer string, the class statement, an instantiation, a non-method attribute or a plain
    import must go to the syntax tree."""
    i = text.index(b"Attn")
    assert _text_harmless(text, i, 4, {"forward", "__init__"}) is harmless


@pytest.mark.parametrize("text, words", [
    (b"type(x).forward(o)", {"forward"}),
    (b"type(f(x)).forward", {"forward"}),
    (b"x.__class__ . backward(o)", {"backward"}),
    (b"x.forward.__func__(o)", {"forward"}),
    (b"dtype(x).forward", set()),                       # not the builtin type
    (b"type(x", {"*"}),                                 # unclosed: every name
])
def test_reflection_chains_are_found_in_the_text(text, words):
    """Guards against missing ``type(x).m`` / ``x.__class__.m`` / ``x.m.__func__`` in the
    cheap scan that decides which files are parsed."""
    assert _chain_words(text) == words


def test_a_decorator_of_the_tree_that_gets_the_method_is_not_trusted(tmp_path):
    """Guards against a false safe: the tree's own decorator receives ``forward``'s function
    and runs it on a Legacy; a decorator from outside the tree (``functools``) is taken to
    call it as it was called."""
    tree = _ATTN.replace("    def forward", "    @deco\n    def forward").replace(
        "class Attn:", "def deco(fn):\n    return lambda self, *a: fn(Legacy(), *a)\n\n\n"
                       "class Attn:") + "\n\ndef run(q, k, v):\n    return Attn().forward(q, k, v)\n"
    (tmp_path / "attn.py").write_text(tree)
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"
    (tmp_path / "attn.py").write_text("import functools\n" + tree.replace(
        "@deco", "@functools.lru_cache()"))
    assert audit_tree(tmp_path, use_cache=False).verdict == "safe"


def test_a_class_bound_to_another_name_is_followed_through_it(tmp_path):
    """Guards against a false safe, and a false alarm: ``Base = Attn`` is an alias, not a
    hand-off; the alias's own uses decide."""
    run = "\n\nBase = Attn\n\n\ndef run(q, k, v):\n    return {call}\n"
    assert _verdict(tmp_path, run.format(call="Base.forward(Legacy(), q, k, v)")) == "unknown"
    assert _verdict(tmp_path, run.format(call="Base().forward(q, k, v)")) == "safe"


def test_a_classmethod_running_a_method_on_another_object_is_not_trusted(tmp_path):
    """Guards against a false safe: the class object a classmethod receives (``cls``) is the
    class itself; ``cls.forward(Legacy(), ...)`` runs the method on a Legacy. Making an
    instance with ``cls()`` is harmless."""
    run = "\n    @classmethod\n    def make(cls, q):\n        return {body}\n"
    tree = _ATTN.replace("\n\nclass Legacy", run + "\n\nclass Legacy")
    (tmp_path / "attn.py").write_text(tree.format(body="cls.forward(Legacy(), q, q, q)"))
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"
    (tmp_path / "attn.py").write_text(tree.format(body="cls().forward(q, q, q)"))
    assert audit_tree(tmp_path, use_cache=False).verdict == "safe"


@pytest.mark.parametrize("line", [
    "k = type(a)\n    return k.forward(Legacy(), q, k, v)",
    "return (lambda c: c.forward(Legacy(), q, k, v))(type(a))",
    "k = a.__class__\n    return k.forward(Legacy(), q, k, v)",
    "return type(a).__mro__[0].forward(Legacy(), q, k, v)",
    "return [c for c in object.__subclasses__() if c.__name__ == 'Attn'][0]"
    ".forward(Legacy(), q, k, v)",
])
def test_a_class_object_of_an_instance_kept_or_listed_counts_for_every_class(tmp_path, line):
    """Guards against a false safe: the class of an instance kept in a name, handed to a
    function, or any class listed by reflection may be the layer's class; its methods may
    then run on a Legacy."""
    extra = f"\n\ndef run(q, k, v):\n    a = Attn()\n    {line}\n"
    assert _verdict(tmp_path, extra) == "unknown"


def test_a_binding_inside_an_f_string_of_a_class_body_is_seen(tmp_path):
    """Guards against a false safe: the text checks skipped strings, but an f-string's braces
    are code. ``f"{(window_size := (-1, 0))}"`` in the class body binds a class attribute that
    ``self.window_size`` falls back to when ``configure`` never ran."""
    (tmp_path / "attn.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\nclass Attn:\n"
        "    label = f\"{(window_size := (-1, 0))}\"\n\n"
        "    def configure(self):\n        self.window_size = (None, 0)\n\n"
        "    def forward(self, q, k, v):\n"
        "        return flash_attn_func(q, k, v, window_size=self.window_size)\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


def test_a_decorator_from_the_tree_is_known_in_a_src_layout(tmp_path):
    """Guards against a false safe: the tree audited from above its package root
    (``src/pkg``): ``from pkg.util import deco`` is the tree's own decorator, not an outside
    one, though no top-level folder is named ``pkg``."""
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text("def deco(fn):\n    from pkg.attn import Legacy\n"
                                 "    return lambda self, *a: fn(Legacy(), *a)\n")
    (pkg / "attn.py").write_text(
        _ATTN.replace("    def forward", "    @deco\n    def forward").replace(
            "class Attn:", "from pkg.util import deco\n\n\nclass Attn:")
        + "\n\ndef run(q, k, v):\n    return Attn().forward(q, k, v)\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("tree", [
    # self rebound in the method
    "class Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
    "    def forward(self, q, k, v, other=None):\n        if other is not None:\n"
    "            self = other\n"
    "        return flash_attn_func(q, k, v, window_size=self.window_size)\n",
    # a classmethod's first parameter is the class (its metaclass's attribute)
    "class Meta(type):\n    window_size = (-1, 0)\n\n\nclass Attn(metaclass=Meta):\n"
    "    def __init__(self):\n        self.window_size = (None, 0)\n\n    @classmethod\n"
    "    def forward(self, q, k, v):\n"
    "        return flash_attn_func(q, k, v, window_size=self.window_size)\n",
    # a static method's first parameter is whatever the caller passes
    "class Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
    "    @staticmethod\n    def forward(self, q, k, v):\n"
    "        return flash_attn_func(q, k, v, window_size=self.window_size)\n",
    # an autograd-style Function made by hand: its static backward takes any ctx
    "import types\n\n\nclass Function:\n    pass\n\n\nclass F(Function):\n"
    "    @staticmethod\n    def forward(ctx, q):\n        ctx.window_size = (None, 0)\n\n"
    "    @staticmethod\n    def backward(ctx, q):\n"
    "        return flash_attn_func(q, q, q, window_size=ctx.window_size)\n\n\n"
    "def run(q):\n    return F().backward(types.SimpleNamespace(window_size=(-1, 0)), q)\n",
])
def test_a_first_parameter_that_is_not_the_instance_is_not_trusted(tmp_path, tree):
    """Guards against false safes: ``self.window_size`` was read off the class's own stores
    although ``self`` was rebound, was the class (a classmethod), or was whatever the caller
    passed (a static method, or an autograd-style Function's static method reached through an
    instance made by hand)."""
    (tmp_path / "attn.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\n" + tree)
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("lines", [
    "put = setattr\n    put(a, 'window_size', (-1, 0))",
    "list(map(setattr, [a], ['window_size'], [(-1, 0)]))",
    "import operator\n    operator.methodcaller('__setattr__', 'window_size', (-1, 0))(a)",
    "d = object.__getattribute__(a, '__dict__')\n    d['window_size'] = (-1, 0)",
    "see = vars\n    see(a).update(window_size=(-1, 0))",
    "a.__dict__.update({'window_' 'size': (-1, 0)})",
    "exec('a.window_size = (-1, 0)')",
    "import copy\n    a = copy.deepcopy(a, {id(a.window_size): (-1, 0)})",
    "import argparse\n    p = argparse.ArgumentParser()\n"
    "    p.add_argument('--window_size', type=int, nargs=2)\n"
    "    p.parse_args(['--window_size', '-1', '0'], namespace=a)",
])
def test_an_attribute_set_by_a_name_the_text_does_not_spell_is_seen(tmp_path, lines):
    """Guards against false safes: each spelling sets ``a.window_size`` to TE's (-1, 0)
    without a ``.window_size =`` store (setattr or vars handed on, ``__dict__`` reached by
    name or split over two string literals, exec, deepcopy's memo, argparse's namespace)."""
    extra = f"\n\ndef run(q, k, v):\n    a = Attn()\n    {lines}\n    return a.forward(q, k, v)\n"
    assert _verdict(tmp_path, extra) == "unknown"


def test_a_namespace_dict_only_read_is_no_store(tmp_path):
    """Guards against a false alarm: reading ``a.__dict__``/``vars(a)`` (a key, a merge into a
    new dict, its length, a loop) sets nothing."""
    extra = ("\n\ndef run(q, k, v):\n    a = Attn()\n"
             "    n = len(vars(a)) + len(a.__dict__ | {}) + sum(1 for _ in a.__dict__)\n"
             "    assert 'window_size' in a.__dict__ and a.__dict__.get('x') is None and n\n"
             "    return a.forward(q, k, v)\n")
    assert _verdict(tmp_path, extra) == "safe"


_RUN = "\n\ndef run(q, k, v):\n    return {call}.forward(q, k, v)\n"


@pytest.mark.parametrize("tree, call", [
    # a metaclass puts a property in the class namespace
    ("class Meta(type):\n    def __new__(m, name, bases, ns):\n"
     "        ns['window' + '_size'] = property(lambda s: (-1, 0), lambda s, v: None)\n"
     "        return super().__new__(m, name, bases, ns)\n\n\nclass Attn(metaclass=Meta):\n"
     "    def __init__(self):\n        self.window_size = (None, 0)\n\n"
     "    def forward(self, q, k, v):\n"
     "        return flash_attn_func(q, k, v, window_size=self.window_size)\n", "Attn()"),
    # a base built by type(...) / namedtuple(...)
    ("Base = type('Base', (), {'window_size': property(lambda s: (-1, 0), lambda s, v: None)})"
     "\n\n\nclass Attn(Base):\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
     "    def forward(self, q, k, v):\n"
     "        return flash_attn_func(q, k, v, window_size=self.window_size)\n", "Attn()"),
    # a sibling base of a subclass: its property comes before Attn's instance dict
    ("class Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
     "    def forward(self, q, k, v):\n"
     "        return flash_attn_func(q, k, v, window_size=self.window_size)\n\n\n"
     "class Evil:\n    window_size = property(lambda s: (-1, 0), lambda s, v: None)\n\n\n"
     "class Combo(Evil, Attn):\n    pass\n", "Combo()"),
    # a dataclass field: the generated __init__ stores it
    ("import dataclasses\n\n\n@dataclasses.dataclass\nclass Attn:\n    window_size: tuple\n\n"
     "    def reset(self):\n        self.window_size = (None, 0)\n\n"
     "    def forward(self, q, k, v):\n"
     "        return flash_attn_func(q, k, v, window_size=self.window_size)\n",
     "Attn((-1, 0))"),
    # an outside base that sets attributes from its arguments
    ("import types\n\n\nclass Attn(types.SimpleNamespace):\n    def reset(self):\n"
     "        self.window_size = (None, 0)\n\n    def forward(self, q, k, v):\n"
     "        return flash_attn_func(q, k, v, window_size=self.window_size)\n",
     "Attn(window_size=(-1, 0))"),
    # copy builds the attributes from __getstate__
    ("import copy\n\n\nclass Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
     "    def __getstate__(self):\n        return {'window_size': (-1, 0)}\n\n"
     "    def forward(self, q, k, v):\n"
     "        return flash_attn_func(q, k, v, window_size=self.window_size)\n",
     "copy.copy(Attn())"),
])
def test_an_instance_whose_attributes_the_stores_do_not_describe_is_not_trusted(
        tmp_path, tree, call):
    """Guards against false safes: a metaclass, a computed base, a subclass's other base, a
    dataclass field, an outside base that sets attributes, or a pickling hook decides what
    ``self.window_size`` reads, not the class's own stores."""
    (tmp_path / "attn.py").write_text("from flash_attn.cute.interface import flash_attn_func\n"
                                      + tree + _RUN.format(call=call))
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("line", [
    "fn = inspect.getattr_static(Attn(), 'forward')\n    return fn(Legacy(), q, k, v)",
    "fn = operator.attrgetter('__func__')(Attn().forward)\n    return fn(Legacy(), q, k, v)",
    "cls = getattr(sys.modules[__name__], 'At' + 'tn')\n    return cls.forward(Legacy(), q, k, v)",
    "f = getattr(Attn().forward, '__fu' 'nc__')\n"
    "    return types.MethodType(f, Legacy())(q, k, v)",
])
def test_a_method_reached_by_reflection_by_name_is_not_trusted(tmp_path, line):
    """Guards against false safes: the method's function taken by ``getattr_static``, by
    ``attrgetter("__func__")``, by a split string, or the class looked up by a computed name,
    then run on a Legacy."""
    extra = f"\nimport inspect, operator, sys, types\n\n\ndef run(q, k, v):\n    {line}\n"
    assert _verdict(tmp_path, extra) == "unknown"


@pytest.mark.parametrize("tail", [
    "for WS in [(-1, 0)]:\n    pass\n",
    "import contextlib\nwith contextlib.nullcontext((-1, 0)) as WS:\n    pass\n",
    "[WS := (-1, 0)]\n",
    "match (-1, 0):\n    case WS:\n        pass\n",
    "f.__globals__['WS'] = (-1, 0)\n",
    "import sys\nsys._getframe().f_globals['WS'] = (-1, 0)\n",
])
def test_a_module_name_rebound_by_a_statement_the_sandbox_does_not_run_is_not_proved(
        tmp_path, tail):
    """Guards against false safes: the window is a module-level name the sandbox evaluates by
    running the module's assignments; a for/with target, a walrus, a match capture, or a
    write through ``__globals__``/``f_globals`` rebinds it to TE's (-1, 0) after them."""
    (tmp_path / "m.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\nWS = (None, 0)\n\n\n"
        "def f(q, k, v):\n    return flash_attn_func(q, k, v, window_size=WS)\n\n\n" + tail)
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("line", [
    "if mode == 0: kw['window_size'] = (-1, 0)",
    "for _ in [0]: kw['window_size'] = (-1, 0)",
    "match mode:\n        case _: kw['window_size'] = (-1, 0)",
    "match (-1, 0):\n        case ws: kw['window_size'] = ws",
])
def test_a_statement_on_its_headers_line_is_read(tmp_path, line):
    """Guards against false safes: a statement on the same line as its ``if``/``for``/
    ``case`` header (a one-line suite) was read as opaque and its store into the kwargs dict
    was never seen; a ``match`` capture bound nothing."""
    (tmp_path / "m.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\n"
        "def forward(q, k, v, mode=0):\n    kw = {'window_size': (None, 0)}\n"
        f"    {line}\n    return flash_attn_func(q, k, v, **kw)\n")
    assert audit_tree(tmp_path, use_cache=False).verdict in ("unsafe", "unknown")
