"""fa4_patch.wrap's fast paths (generated with the target's own parameter list) must behave
exactly like the generic *args/**kwargs wrapper: same arguments reach FA4 in every call form,
same errors for bad calls, the caller's objects untouched. Network-free stand-ins; the real
b8/b36 signatures are covered by tests/test_patch_wrapper.py."""

from __future__ import annotations

import functools
import inspect
import itertools

import pytest

from fa4_patch import wrap
from fa4_patch.bench import (CASES, _flash_attn_bwd, _flash_attn_fwd, flash_attn_func,
                             flash_attn_varlen_func)
from fa4_patch.normalize import normalize_pair
from fa4_patch.wrapper import _general_wrapper, window_positions


def recorder(fn):
    """A function with ``fn``'s parameter list that returns every argument it received."""
    params = list(inspect.signature(fn).parameters)
    src = inspect.getsource(fn).split("):\n", 1)[0] + "):\n    return dict(locals())\n"
    ns: dict = {}
    exec(src, ns)
    rec = ns[fn.__name__]
    assert list(inspect.signature(rec).parameters) == params
    return rec


def expected(rec, args, kwargs):
    """What FA4 must receive: the bare call's arguments with every negative bound -> None."""
    got = rec(*args, **kwargs)
    if "window_size" in got and isinstance(got["window_size"], (tuple, list)):
        w = got["window_size"]
        got["window_size"] = type(w)(normalize_pair(*w))
    for side in ("window_size_left", "window_size_right"):
        if side in got and got[side] is not None:
            got[side] = normalize_pair(got[side], None)[0]
    return got


TARGETS = [flash_attn_func, flash_attn_varlen_func, _flash_attn_fwd, _flash_attn_bwd]
WINDOW_VALUES = [(-1, 0), (-1, -1), (128, 0), (0, 0), [-1, 0], [5, -3], (None, None), (None, -2), None]
SIDES = [-1, 0, 7, None, -128]


def _forms(fn):
    """(args, kwargs) for every way a caller can pass the window, with other arguments by
    keyword and by position too."""
    params = list(inspect.signature(fn).parameters)
    req = [f"<{p}>" for p, v in inspect.signature(fn).parameters.items() if v.default is v.empty]
    pos = window_positions(fn)
    out = []
    if "window_size" in pos:
        i = pos["window_size"]
        for w in WINDOW_VALUES:
            out.append((tuple(req), {"causal": True, "window_size": w}))
            out.append((tuple(req), {"window_size": w, "return_lse": True}))
            filler = tuple(req) + tuple(f"<{p}>" for p in params[len(req):i])
            out.append((filler + (w,), {}))
            out.append((filler + (w, "<after>"), {}))
        out.append((tuple(req), {"causal": True}))
    else:
        li = pos["window_size_left"]
        for a, b in itertools.product(SIDES, SIDES):
            out.append((tuple(req), {"causal": True, "window_size_left": a, "window_size_right": b}))
            filler = tuple(req) + tuple(f"<{p}>" for p in params[len(req):li])
            out.append((filler + (a, b), {}))
            out.append((filler + (a,), {"window_size_right": b}))
        for a in SIDES:
            out.append((tuple(req), {"window_size_left": a}))
            out.append((tuple(req), {"window_size_right": a}))
        out.append((tuple(req), {}))
    return out


@pytest.mark.parametrize("fn", TARGETS, ids=lambda f: f.__name__)
def test_generated_wrapper_passes_exactly_the_normalised_arguments(fn):
    """Guards against the fast path dropping, reordering or defaulting any argument, or missing
    a window form (tuple, list, None, one side, by position, after the window)."""
    rec = recorder(fn)
    fast = wrap(rec)
    assert "_fa4_audit_source" in fast.__dict__          # the generated path is the one tested
    generic = _general_wrapper(rec, window_positions(rec))
    for args, kwargs in _forms(rec):
        want = expected(rec, args, kwargs)
        assert fast(*args, **dict(kwargs)) == want, (args, kwargs)
        assert generic(*args, **dict(kwargs)) == want, (args, kwargs)


@pytest.mark.parametrize("fn", TARGETS, ids=lambda f: f.__name__)
def test_defaults_reach_fa4_as_its_own_objects(fn):
    rec = recorder(fn)
    req = [f"<{p}>" for p, v in inspect.signature(rec).parameters.items() if v.default is v.empty]
    got = wrap(rec)(*req)
    for name, p in inspect.signature(rec).parameters.items():
        if p.default is not p.empty:
            assert got[name] is p.default


@pytest.mark.parametrize("call", [
    lambda f: f("<q>", "<k>", "<v>", not_a_parameter=1),
    lambda f: f("<q>", "<k>"),
    lambda f: f("<q>", "<k>", "<v>", q="<again>"),
    lambda f: f(*range(99)),
])
@pytest.mark.parametrize("fn", [flash_attn_func, _flash_attn_fwd], ids=lambda f: f.__name__)
def test_a_bad_call_raises_the_same_type_error_as_the_bare_function(fn, call):
    with pytest.raises(TypeError) as bare:
        call(fn)
    with pytest.raises(TypeError) as wrapped:
        call(wrap(fn))
    assert str(wrapped.value) == str(bare.value)


def test_bad_window_types_raise_naming_the_side():
    rec = recorder(flash_attn_func)
    with pytest.raises(TypeError, match=r"window_size\[0\]"):
        wrap(rec)("<q>", "<k>", "<v>", window_size=(True, 0))
    with pytest.raises(TypeError, match="two bounds"):
        wrap(rec)("<q>", "<k>", "<v>", window_size=(1, 2, 3))
    rec = recorder(_flash_attn_fwd)
    with pytest.raises(TypeError, match="window_size_right"):
        wrap(rec)("<q>", "<k>", "<v>", window_size_right=1.5)


def test_caller_objects_are_not_mutated_and_unchanged_windows_pass_as_is():
    rec = recorder(flash_attn_func)
    lst, tup = [-1, 0], (128, 0)
    assert wrap(rec)("<q>", "<k>", "<v>", window_size=lst)["window_size"] == [None, 0]
    assert lst == [-1, 0]
    assert wrap(rec)("<q>", "<k>", "<v>", window_size=tup)["window_size"] is tup


def test_targets_the_fast_path_cannot_mirror_get_the_generic_wrapper():
    """*args/**kwargs, keyword-only windows, a __signature__ that is not the code's, and a
    functools.wraps layer (TE's no_torch_dynamo) all keep the *args/**kwargs wrapper."""
    def star(*args, window_size=(None, None), **kwargs):
        return args, window_size, kwargs

    def inner(q, window_size=(None, None)):
        return window_size

    @functools.wraps(inner)
    def layer(*args, **kwargs):
        return inner(*args, **kwargs)

    for fn in (star, layer):
        w = wrap(fn)
        assert "_fa4_audit_source" not in w.__dict__
    assert wrap(star)(1, window_size=(-1, 0)) == ((1,), (None, 0), {})
    assert wrap(layer)(1, (-1, 0)) == (None, 0)
    assert wrap(layer)(1, window_size=[-1, 3]) == [None, 3]


def test_positional_only_parameters_are_mirrored():
    def f(q, k, /, v, window_size=(None, None)):
        return q, k, v, window_size

    w = wrap(f)
    assert w(1, 2, 3, (-1, 0)) == (1, 2, 3, (None, 0))
    with pytest.raises(TypeError):
        w(q=1, k=2, v=3)


def test_every_benchmarked_call_form_is_a_valid_call():
    """The bench times the forms it lists; each must bind (a typo would time an exception)."""
    env = {"q": 1, "k": 2, "v": 3, "o": 4, "do": 5, "lse": 6}
    for label, fn, stmt in CASES:
        rec = recorder(fn)
        got = eval(stmt, {**env, "f": wrap(rec)})
        assert isinstance(got, dict), label
