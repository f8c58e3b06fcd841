"""fa4_patch.wrap against the REAL signatures of FA4 4.0.0b8 and 4.0.0b36.

The four entry points' ``def`` lines are read from the fetched wheels with ``ast``; only the
signature is executed (annotations dropped, the body replaced by a recorder returning the bound
arguments), never FA4 itself. Window positions moved between these releases
(flash_attn_func: 5 -> 7, flash_attn_varlen_func: 12 -> 15, _flash_attn_fwd: 13/14 -> 15/16), so a
wrapper with hard-coded positions fails one of them.

Every case runs twice: through ``fa4_patch.wrap`` and through the codemod's self-contained
``_fa4_audit_wrap`` (the text written into TE), so both are held to the same contract.
"""

from __future__ import annotations

import ast
import functools
import inspect

import pytest

from fa4_patch import ENTRY_POINTS, is_wrapped, wrap

pytestmark = pytest.mark.network

VERSIONS = ("4.0.0b8", "4.0.0b36")
# what DESIGN §5 says, checked against the wheels below (independent of the wrapper's reading)
KNOWN_POSITIONS = {
    ("4.0.0b8", "flash_attn_func"): {"window_size": 5},
    ("4.0.0b36", "flash_attn_func"): {"window_size": 7},
    ("4.0.0b8", "flash_attn_varlen_func"): {"window_size": 12},
    ("4.0.0b36", "flash_attn_varlen_func"): {"window_size": 15},
}
# windows TE emits (DESIGN §4) and a genuine sliding window, with what FA4 must receive
WINDOWS = [((-1, 0), (None, 0)), ((-1, -1), (None, None)), ((128, 0), (128, 0)),
           ((511, 64), (511, 64)), ((None, None), (None, None))]


def _recorder_defs(version: str) -> dict[str, ast.FunctionDef]:
    from analyzer.sources import resolve

    src = resolve("fa4", version).package_dir / "cute" / "interface.py"
    tree = ast.parse(src.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ENTRY_POINTS:
            for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                a.annotation = None
            node.returns = None
            node.decorator_list = []
            node.body = ast.parse("return dict(locals())").body
            out[node.name] = node
    return out


@functools.lru_cache(maxsize=None)
def real_signatures(version: str) -> dict:
    """name -> a function with FA4 ``version``'s exact parameter list that returns its args."""
    defs = _recorder_defs(version)
    missing = set(ENTRY_POINTS) - set(defs)
    assert not missing, f"{version}: entry points not found: {missing}"
    mod = ast.Module(body=list(defs.values()), type_ignores=[])
    ns: dict = {}
    exec(compile(ast.fix_missing_locations(mod), f"<fa4 {version} signatures>", "exec"), ns)
    out = {}
    for name in ENTRY_POINTS:
        fn = ns[name]
        fn.__module__ = "flash_attn.cute.interface"
        fn.__doc__ = f"{name} of {version} (recorder)"
        out[name] = fn
    return out


# the codemod's inline wrapper has its own contract (fixed FA4 >= b9 positions, no marker):
# tests/test_patch_codemod.py checks it by behaviour against every window form
WRAPPERS = {"fa4_patch.wrap": wrap}


def _required(fn) -> list[str]:
    """Placeholder values for ``fn``'s parameters that have no default (q, k, v, out, ...)."""
    return [f"<{p.name}>" for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty]


def _positional_index(fn, name):
    return list(inspect.signature(fn).parameters).index(name)


def _call_positional(fn, upto: int, overrides: dict):
    """Call ``fn`` with its first ``upto + 1`` parameters by position (defaults, overridden)."""
    params = list(inspect.signature(fn).parameters.values())[: upto + 1]
    args = []
    for p in params:
        if p.name in overrides:
            args.append(overrides[p.name])
        elif p.default is inspect.Parameter.empty:
            args.append(f"<{p.name}>")
        else:
            args.append(p.default)
    return fn(*args)


@pytest.mark.parametrize("version", VERSIONS)
def test_positions_really_moved_between_b8_and_b36(version):
    """Guards the premise: if the wheels agreed, the b8/b36 cases would not test position reading."""
    sigs = real_signatures(version)
    for (v, name), pos in KNOWN_POSITIONS.items():
        if v == version:
            for param, idx in pos.items():
                assert _positional_index(sigs[name], param) == idx


@pytest.mark.parametrize("wrapper_name", WRAPPERS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["flash_attn_func", "flash_attn_varlen_func"])
@pytest.mark.parametrize("given,expected", WINDOWS)
def test_window_size_by_keyword_and_by_position(wrapper_name, version, name, given, expected):
    fn = real_signatures(version)[name]
    w = WRAPPERS[wrapper_name](fn)
    # keyword, as TE calls it
    got = w("<q>", "<k>", "<v>", causal=True, window_size=given)
    assert got["window_size"] == expected
    assert got == {**fn("<q>", "<k>", "<v>", causal=True, window_size=expected)}
    # positional, up to and including window_size: every other argument untouched
    idx = _positional_index(fn, "window_size")
    got = _call_positional(w, idx, {"window_size": given, "softmax_scale": 0.125, "causal": True})
    bare = _call_positional(fn, idx, {"window_size": expected, "softmax_scale": 0.125,
                                      "causal": True})
    assert got == bare
    # positional beyond window_size (the next parameter too)
    got = _call_positional(w, idx + 1, {"window_size": given})
    assert got["window_size"] == expected


@pytest.mark.parametrize("wrapper_name", WRAPPERS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["_flash_attn_fwd", "_flash_attn_bwd"])
@pytest.mark.parametrize("given,expected", WINDOWS)
def test_left_right_by_keyword_and_by_position(wrapper_name, version, name, given, expected):
    fn = real_signatures(version)[name]
    w = WRAPPERS[wrapper_name](fn)
    req = _required(fn)
    got = w(*req, causal=True, window_size_left=given[0], window_size_right=given[1])
    assert (got["window_size_left"], got["window_size_right"]) == expected
    assert got == fn(*req, causal=True, window_size_left=expected[0],
                     window_size_right=expected[1])
    # only one side given by keyword
    got = w(*req, window_size_left=given[0])
    assert got["window_size_left"] == expected[0]
    # both by position
    ir = _positional_index(fn, "window_size_right")
    assert ir == _positional_index(fn, "window_size_left") + 1
    over = {"window_size_left": given[0], "window_size_right": given[1]}
    got = _call_positional(w, ir, over)
    bare = _call_positional(fn, ir, {"window_size_left": expected[0],
                                     "window_size_right": expected[1]})
    assert got == bare
    # left by position, right by keyword
    il = ir - 1
    params = list(inspect.signature(fn).parameters.values())[: il + 1]
    args = [given[0] if p.name == "window_size_left" else
            (p.default if p.default is not inspect.Parameter.empty else p.name) for p in params]
    got = w(*args, window_size_right=given[1])
    assert (got["window_size_left"], got["window_size_right"]) == expected


@pytest.mark.parametrize("wrapper_name", WRAPPERS)
def test_positions_are_read_per_signature_not_hard_coded(wrapper_name):
    """One wrapper implementation, two releases: the b8 position on b36 would be softmax_scale."""
    b8 = WRAPPERS[wrapper_name](real_signatures("4.0.0b8")["flash_attn_func"])
    b36 = WRAPPERS[wrapper_name](real_signatures("4.0.0b36")["flash_attn_func"])
    got8 = b8("<q>", "<k>", "<v>", 0.5, True, (-1, 0))
    got36 = b36("<q>", "<k>", "<v>", None, None, 0.5, True, (-1, 0))
    assert got8["window_size"] == got36["window_size"] == (None, 0)
    assert got8["softmax_scale"] == got36["softmax_scale"] == 0.5


@pytest.mark.parametrize("wrapper_name", WRAPPERS)
@pytest.mark.parametrize("version", VERSIONS)
def test_metadata_kept_and_wrapping_twice_is_a_noop(wrapper_name, version):
    impl = WRAPPERS[wrapper_name]
    for name, fn in real_signatures(version).items():
        w = impl(fn)
        assert w is not fn
        assert w.__name__ == fn.__name__ and w.__doc__ == fn.__doc__
        assert w.__qualname__ == fn.__qualname__ and w.__module__ == fn.__module__
        assert w.__wrapped__ is fn
        assert inspect.signature(w) == inspect.signature(fn)
        assert impl(w) is w
        assert is_wrapped(w) and not is_wrapped(fn)
        assert getattr(w, "_fa4_audit_wrapped") is True
        # the other implementation recognises it too (shared marker)
        for other in WRAPPERS.values():
            assert other(w) is w


@pytest.mark.parametrize("wrapper_name", WRAPPERS)
def test_through_a_functools_wraps_layer_like_no_torch_dynamo(wrapper_name):
    """TE 2.20.x wraps FA4 in no_torch_dynamo() (functools.wraps): positions come through
    __wrapped__, and a wrapper under such a layer is still recognised."""
    fn = real_signatures("4.0.0b36")["flash_attn_func"]

    def layer(f):
        @functools.wraps(f)
        def inner(*a, **k):
            return f(*a, **k)
        return inner

    impl = WRAPPERS[wrapper_name]
    outer = impl(layer(fn))
    assert outer("<q>", "<k>", "<v>", None, None, 0.5, True, (-1, 0))["window_size"] == (None, 0)
    assert is_wrapped(layer(impl(fn)))
    under = layer(impl(fn))
    assert wrap(under) is under


@pytest.mark.parametrize("wrapper_name", WRAPPERS)
def test_none_is_passed_through(wrapper_name):
    """TE binds None when FA4 is missing; wrapping must keep that None."""
    assert WRAPPERS[wrapper_name](None) is None


@pytest.mark.parametrize("wrapper_name", WRAPPERS)
def test_bad_window_raises_type_error_naming_the_parameter(wrapper_name):
    w = WRAPPERS[wrapper_name](real_signatures("4.0.0b36")["flash_attn_func"])
    with pytest.raises(TypeError, match="window_size"):
        w("<q>", "<k>", "<v>", window_size=(1.5, 0))
    with pytest.raises(TypeError, match="window_size"):
        w("<q>", "<k>", "<v>", window_size=(True, 0))
    f = WRAPPERS[wrapper_name](real_signatures("4.0.0b36")["_flash_attn_fwd"])
    with pytest.raises(TypeError, match="window_size_right"):
        f("<q>", "<k>", "<v>", window_size_left=1, window_size_right=0.0)


def test_wrap_refuses_a_function_without_window_parameters():
    def not_fa(q, k, v):
        return q

    with pytest.raises(TypeError, match="no window_size"):
        wrap(not_fa)


def test_list_window_stays_a_list_and_caller_list_is_not_mutated():
    w = wrap(real_signatures("4.0.0b36")["flash_attn_func"])
    win = [-1, 0]
    got = w("<q>", "<k>", "<v>", window_size=win)
    assert got["window_size"] == [None, 0] and type(got["window_size"]) is list
    assert win == [-1, 0]
