"""fa4_patch.normalize: negative bounds -> None per side; everything else kept or rejected."""

from __future__ import annotations

import ast
import inspect

import pytest

from fa4_patch import normalize_pair, normalize_window
from fa4_patch import normalize as normalize_mod

# (left, right) -> expected (left, right): what FA4 must see for what TE emits (DESIGN §4)
PAIRS = [
    ((-1, 0), (None, 0)),          # TE causal: the pair that goes empty on FA4 >= b30
    ((-1, -1), (None, None)),      # TE no_mask / padding
    ((511, 0), (511, 0)),          # a genuine sliding window passes unchanged
    ((128, 64), (128, 64)),
    ((0, 0), (0, 0)),              # zero is a real bound, not a sentinel
    ((None, None), (None, None)),
    ((None, 0), (None, 0)),
    ((-8, 7), (None, 7)),          # per side, not "sum < 0"
    ((7, -8), (7, None)),
    ((-(2 ** 40), 3), (None, 3)),
]


@pytest.mark.parametrize("given,expected", PAIRS)
def test_pair_maps_negative_sides_to_none_per_side(given, expected):
    assert normalize_pair(*given) == expected


@pytest.mark.parametrize("given,expected", PAIRS)
def test_window_size_tuple_and_list_keep_their_type(given, expected):
    out_t = normalize_window(tuple(given))
    assert out_t == expected and type(out_t) is tuple
    out_l = normalize_window(list(given))
    assert out_l == list(expected) and type(out_l) is list


@pytest.mark.parametrize("given,expected", PAIRS)
def test_left_right_keywords(given, expected):
    assert normalize_window(window_size_left=given[0], window_size_right=given[1]) == expected


def test_none_window_size_is_none():
    assert normalize_window(None) is None


def test_unchanged_pair_is_returned_as_is_and_input_never_mutated():
    w = (511, 0)
    assert normalize_window(w) is w
    lst = [-1, 0]
    out = normalize_window(lst)
    assert lst == [-1, 0] and out == [None, 0] and out is not lst


def test_missing_keyword_side_is_none():
    assert normalize_window(window_size_left=-1) == (None, None)
    assert normalize_window(window_size_right=5) == (None, 5)


BAD_SIDES = [True, False, 1.0, -1.0, "1", b"1", [1], object()]


@pytest.mark.parametrize("bad", BAD_SIDES, ids=repr)
def test_pair_rejects_non_int_sides_naming_the_parameter(bad):
    with pytest.raises(TypeError, match="window_size_left"):
        normalize_pair(bad, 0)
    with pytest.raises(TypeError, match="window_size_right"):
        normalize_pair(0, bad)


@pytest.mark.parametrize("bad", BAD_SIDES, ids=repr)
def test_window_size_rejects_non_int_sides_naming_window_size(bad):
    with pytest.raises(TypeError, match=r"window_size\[0\]"):
        normalize_window((bad, 0))
    with pytest.raises(TypeError, match=r"window_size\[1\]"):
        normalize_window([0, bad])


@pytest.mark.parametrize("bad", [(1,), (1, 2, 3), (), "ab", 5, {1: 2}, range(2)], ids=repr)
def test_window_size_rejects_non_pairs(bad):
    with pytest.raises(TypeError, match="window_size"):
        normalize_window(bad)


def test_both_forms_at_once_is_an_error():
    with pytest.raises(TypeError):
        normalize_window((1, 0), window_size_left=1)


def test_normalize_pair_body_stays_in_the_sandbox_subset():
    """The call-site pass only trusts a normaliser it can run in its AST-allowlisted sandbox:
    guard against someone adding a loop, an import, an attribute or a !r conversion."""
    tree = ast.parse(inspect.getsource(normalize_mod.normalize_pair))
    allowed = (ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Expr, ast.Constant,
               ast.If, ast.Raise, ast.Return, ast.Assign, ast.Name, ast.Load, ast.Store,
               ast.Call, ast.Compare, ast.Is, ast.IsNot, ast.Lt, ast.BoolOp, ast.Or, ast.UnaryOp,
               ast.Not, ast.JoinedStr, ast.FormattedValue, ast.Tuple)
    names = {"left", "right", "isinstance", "bool", "int", "TypeError", "None", "normalize_pair"}
    for node in ast.walk(tree):
        assert isinstance(node, allowed), ast.dump(node)
        if isinstance(node, ast.Name):
            assert node.id in names, node.id
        if isinstance(node, ast.FormattedValue):
            assert node.conversion == -1 and node.format_spec is None


def test_normalize_pair_runs_without_builtins():
    """Exec the body with only the four names the sandbox grants: same results."""
    src = inspect.getsource(normalize_mod.normalize_pair)
    g = {"__builtins__": {}, "isinstance": isinstance, "bool": bool, "int": int,
         "TypeError": TypeError}
    exec(compile(src, "<normalize_pair>", "exec"), g)
    for given, expected in PAIRS:
        assert g["normalize_pair"](*given) == expected
    with pytest.raises(TypeError):
        g["normalize_pair"](True, 0)


def test_normalize_pair_accepted_by_the_project_sandbox():
    """The real allowlist of analyzer.sandbox accepts it (a broken import of our own sandbox
    fails here, never skips)."""
    from analyzer import sandbox

    sandbox.check_source(inspect.getsource(normalize_mod.normalize_pair),
                         allowed_names=["isinstance", "bool", "int", "TypeError"])


from hypothesis import given, strategies as st  # noqa: E402

_side = st.one_of(st.none(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70))


@given(_side, _side)
def test_property_each_side_independently(left, right):
    """Per side: negative -> None, anything else unchanged; normalising twice changes nothing."""
    out = normalize_pair(left, right)
    assert out == (None if left is not None and left < 0 else left,
                   None if right is not None and right < 0 else right)
    assert normalize_pair(*out) == out
    assert normalize_window((left, right)) == out
    assert normalize_window([left, right]) == list(out)


def test_codemod_inline_normaliser_is_the_same_rule_as_normalize_pair():
    """Guards: the self-contained normaliser the codemod writes into TE drifting from
    fa4_patch.normalize_pair on the values TE passes (ints and None, each side alone)."""
    import functools
    import itertools

    from fa4_patch.codemod import HELPER_SOURCE

    ns: dict = {"functools": functools}
    exec(compile(HELPER_SOURCE, "<codemod helpers>", "exec"), ns)
    bound, size = ns["_fa4_window_bound"], ns["_fa4_window_size"]
    values = [None, -(2 ** 63), -1000, -2, -1, 0, 1, 2, 511, 2 ** 63]
    for left, right in itertools.product(values, values):
        want = normalize_pair(left, right)
        assert (bound(left), bound(right)) == want
        assert size((left, right)) == want and size([left, right]) == list(want)
