"""Wrappers whose behaviour changes between calls: the sandbox runs a few hundred calls, so a
wrapper that passes TE's window through on its first call only (or after many calls, or
when it sees it is not in the sandbox) must be refused by the purity gate, never proved."""

from __future__ import annotations

import pytest

from analyzer.sites import audit_tree

_NORM = '''import functools
{head}


def _bound(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        {body}
        if kwargs.get("window_size") is not None:
            left, right = kwargs["window_size"]
            kwargs["window_size"] = (_bound(left), _bound(right))
        return fn(*args, **kwargs)
    return inner
'''
_USE = ("from flash_attn.cute.interface import flash_attn_func as _raw\n"
        "from norm import normalized\n\nflash_attn_func = normalized(_raw)\n\n\n"
        "def run(q, k, v, window=(-1, 0)):\n"
        "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n")


def _verdict(tmp_path, head: str, body: str) -> str:
    (tmp_path / "norm.py").write_text(_NORM.format(head=head, body=body))
    (tmp_path / "m.py").write_text(_USE)
    return audit_tree(tmp_path, use_cache=False).verdict


@pytest.mark.parametrize("head, body", [
    ("import itertools\n_calls = itertools.count()",
     "if next(_calls) == 0:\n            return fn(*args, **kwargs)"),
    ("import itertools\n_calls = itertools.count()",
     "if next(_calls) > 5000:\n            return fn(*args, **kwargs)"),
    ("_first = iter([True])", "if next(_first, False):\n            return fn(*args, **kwargs)"),
    ("import collections\n_q = collections.deque()",
     "_q.appendleft(1)\n        if len(_q) == 1:\n            return fn(*args, **kwargs)"),
    ("class _S:\n    warm = False\n\n\n_state = _S()",
     "if not _state.warm:\n            setattr(_state, 'warm', True)\n"
     "            return fn(*args, **kwargs)"),
    ("", "if args and args[0].__class__.__name__ != '_Placeholder':\n"
         "            return fn(*args, **kwargs)"),
    # a flag on a module-level class that other code turns off (``norm.Config.on = False``)
    ("class Config:\n    on = True", "if not Config.on:\n            return fn(*args, **kwargs)"),
])
def test_a_wrapper_with_state_between_calls_is_not_proved(tmp_path, head, body):
    """Guards against false safes: each wrapper hands FA4 the raw window on some call the
    sandbox's runs do not make (the first, the 5001st, outside the sandbox)."""
    assert _verdict(tmp_path, head, body) == "unknown"


def test_a_wrapper_reading_only_module_helpers_is_still_proved(tmp_path):
    """Guards against a false alarm: calling a function of an imported module (``math``) keeps
    no state: the method rule is for objects kept between calls, not modules."""
    assert _verdict(tmp_path, "import math", "_ok = math.isfinite(1.0)") == "safe"


@pytest.mark.parametrize("rule, verdict", [
    # a huge window turned into TE's "unbounded" -1: an empty band on FA4
    ("None if x is None or x < 0 else (-1 if x >= 100000000000 else x)", "unsafe"),
    ("None if x is None or x < 0 else (-1 if x > 2147483647 else x)", "unsafe"),
    # a huge window turned into None: the same band on every sequence FA4 can run
    ("None if x is None or x < 0 or x > 2147483647 else x", "safe"),
])
def test_wrappers_are_run_on_both_sides_of_their_largest_constants(tmp_path, rule, verdict):
    """Guards against a false safe: constants above 10**9 were left out of the bounds a
    wrapper is run on, so a wrapper that breaks only above them was proved; and against the
    matching false alarm: a bound of 2**31 or more and None give one band (FA4 takes 32-bit
    window sizes; no sequence reaches 2**31)."""
    (tmp_path / "norm.py").write_text(_NORM.format(head="", body="pass").replace(
        "return None if x is not None and x < 0 else x", f"return {rule}"))
    (tmp_path / "m.py").write_text(_USE)
    assert audit_tree(tmp_path, use_cache=False).verdict == verdict


@pytest.mark.parametrize("window", ["(float('-inf'), 0)", "(Width(-1), 0)"])
def test_a_window_the_tree_makes_outside_the_ints_is_not_covered_by_a_wrapper_proof(
        tmp_path, window):
    """Guards against a false safe: a wrapper is proved on ints and None; a float the tree
    makes (``float("-inf")``) or an instance of its own int subclass whose ``<`` lies passes
    through an "is it negative" test unchanged."""
    (tmp_path / "norm.py").write_text(_NORM.format(head="", body="pass"))
    (tmp_path / "m.py").write_text(_USE.replace("window=(-1, 0)", f"window={window}").replace(
        "def run(", "class Width(int):\n    def __lt__(self, other):\n        return False\n\n\n"
        "def run("))
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("main", [
    "import builtins\nbuiltins.min = max\n",
    "import norm\nnorm.min = max\n",
    "import norm\nsetattr(norm, 'FL' + 'OOR', -100)\n",
    "import norm\nvars(norm)['FLOOR'] = -100\n",
    "import norm\nnorm.__dict__['FLOOR'] = -100\n",
])
def test_a_wrapper_whose_module_namespace_is_changed_elsewhere_is_not_proved(tmp_path, main):
    """Guards against false safes: the sandbox runs the wrapper with its module's own
    statements and clean builtins; a builtin it calls rebound, or a module name it reads set
    by a computed name or through the module's namespace dict, is not what it saw."""
    (tmp_path / "norm.py").write_text(_NORM.format(head="FLOOR = 0", body="pass").replace(
        "return None if x is not None and x < 0 else x",
        "return None if x is not None and min(x, FLOOR) < FLOOR else x"))
    (tmp_path / "m.py").write_text(_USE)
    (tmp_path / "main.py").write_text(main + "import m\nm.run(1, 2, 3)\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


def test_a_wrapper_cannot_tell_the_stand_in_by_its_module(tmp_path):
    """Guards against a false safe: a wrapper that normalises only when the function it wraps
    is not FA4's own (``fn.__module__``) told the sandbox's stand-in apart."""
    (tmp_path / "norm.py").write_text(_NORM.format(
        head="", body="if fn.__module__ == 'flash_attn.cute.interface':\n"
                      "            return fn(*args, **kwargs)"))
    (tmp_path / "m.py").write_text(_USE)
    assert audit_tree(tmp_path, use_cache=False).verdict != "safe"


@pytest.mark.parametrize("main", [
    "from norm import _CFG as c\nc['on'] = False\n",
    "import operator\nimport norm\noperator.setitem(norm._CFG, 'on', False)\n",
    "import norm\nfor norm._CFG['on'] in [False]:\n    pass\n",
])
def test_a_wrapper_reading_a_container_another_file_changes_is_not_proved(tmp_path, main):
    """Guards against false safes: the normaliser's switch lives in a module-level dict that
    another file turns off (through an import alias, operator.setitem, a for-target); the
    sandbox ran the module's own statements only."""
    (tmp_path / "norm.py").write_text(_NORM.format(head="_CFG = {'on': True}", body="pass").replace(
        "return None if x is not None and x < 0 else x",
        "return None if x is not None and x < 0 and _CFG['on'] else x"))
    (tmp_path / "m.py").write_text(_USE)
    (tmp_path / "main.py").write_text(main + "import m\nm.run(1, 2, 3)\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("text, changes", [
    (b"from norm import _CFG as c\n", True),
    (b"m._CFG['window_size'] = (-1, 0)\n", True),
    (b"_CFG.update(a=1)\n", True),
    (b"operator.setitem(norm._CFG, 'on', False)\n", True),
    (b"for norm._CFG['on'] in [False]:\n", True),
    (b"c = norm._CFG\n", True),
    (b"x = _CFG['window']\n", False),
    (b"y = _CFG.get('a')\n", False),
    (b"print(_CFG)\n", False),
    (b"from m import _CFG\n", False),
    (b"return dict(_CFG)\n", False),
])
def test_a_mention_of_a_container_in_another_file_is_read_as_a_change_only_where_it_can_be(
        text, changes):
    """Guards both ways: a store, a mutating method, an alias or a call's argument may change
    the container (the sandbox would not see it); a read, a copy or a plain import does not
    (a false alarm on every tree that reads a config dict from another module)."""
    from analyzer.sites.detached import mutating_mention

    assert mutating_mention(text, text.index(b"_CFG"), 4) is changes


@pytest.mark.parametrize("text, changes", [
    (b"_CFG |= {'window_size': (-1, 0)}\n", True),
    (b"_CFG += [-1]\n", True),
    (b"Registry._CFG.update(local=(-1, 0))\n", True),
    (b"_CFG['a']['local'] = (-1, 0)\n", True),
    (b"_CFG[0].insert(0, -1)\n", True),
    (b"inner = _CFG['a']\ninner['local'] = (-1, 0)\n", True),
    (b"a, b = _CFG['a']\n", True),
    (b"fill(_CFG['a'])\n", True),
    (b"x = _CFG['window']\n", True),
    (b"_CFG = {'window': (None, 0)}\n", False),
    (b"return dict(_CFG)\n", False),
])
def test_a_change_through_a_chain_or_an_alias_is_read_as_a_change(text, changes):
    """Guards against false safes: a container changed in place through a chain (``.update``
    on an attribute, a nested subscript store, a method of an item), through a name bound to
    part of it, or by an augmented assignment (``|=`` on a dict is in place; the first version
    of ``mutating_chain`` read ``NAME |= ...`` as a rebinding). And against a false alarm on
    the module's own binding or a copy."""
    from analyzer.sites.detached import mutating_chain

    assert mutating_chain(text, text.index(b"_CFG"), 4) is changes
