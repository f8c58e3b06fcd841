"""Issue 6 item 3: property tests (hypothesis, derandomized so CI is deterministic).

* For random (mask type, user window) with sides in None U [-10**6, 10**6], whenever TE's
  ``check_set_window_size`` (the transcription) emits a pair, the normaliser followed by the
  post-#2490 resolver (``transcriptions.fa4.resolve_post_2490``) selects exactly the band TE
  intends (``analyzer.equivalence.semantics``), on random shapes sq <= sk <= 64.
* The normaliser is idempotent and keeps the container type.
* ``fa4_patch.wrap(f)`` and bare ``f`` agree for non-negative windows, ``f`` a recorder with the
  REAL b36 signature of each of the four entry points (read from the wheel with ``ast``; FA4 is
  never imported).
* The band semantics agree with a brute-force boolean mask built by torch (CPU).
"""

from __future__ import annotations

import ast
import functools
import inspect
import warnings

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from analyzer.equivalence.model import MASK_TYPES, Band, ResolvedState
from analyzer.equivalence.semantics import intended_band, state_band
from fa4_patch import ENTRY_POINTS, normalize_pair, normalize_window, wrap
from transcriptions.fa4 import resolve_post_2490, resolve_pre_2490
from transcriptions.te import check_set_window_size

BIG = 10 ** 6
SETTINGS = dict(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

side = st.one_of(st.none(), st.integers(-BIG, BIG),
                 st.sampled_from([-2, -1, 0, 1, 64, 128]))  # make the sentinels common
small_side = st.one_of(st.none(), st.integers(-80, 80))
window = st.one_of(st.none(), st.tuples(side, side), st.lists(side, min_size=2, max_size=2))


@st.composite
def shape(draw):
    sk = draw(st.integers(1, 64))
    sq = draw(st.integers(1, sk))  # sq = sk and sq < sk: the two alignments TE uses
    return sq, sk


def te_emits(mask: str, user_window):
    """(causal, window) TE hands to FA for this mask / user window, or None if TE rejects it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            w = check_set_window_size(mask, user_window)
        except (AssertionError, TypeError):
            return None
    return "causal" in mask, tuple(w)


# ----------------------------------------------------------------------------- normaliser + V3

@settings(max_examples=600, **SETTINGS)
@given(mask=st.sampled_from(MASK_TYPES), user_window=window, shp=shape())
def test_normalised_post_2490_gives_te_intended_band(mask, user_window, shp):
    """Guards: the fix (negative -> None) being wrong for some pair TE emits on the newest
    resolver variant, e.g. a large window, a one-sided sentinel, or sq < sk."""
    emitted = te_emits(mask, user_window)
    assume(emitted is not None)
    causal, (left, right) = emitted
    state = ResolvedState(*resolve_post_2490(causal, *normalize_pair(left, right)))
    sq, sk = shp
    assert state_band(state, sq, sk) == intended_band(causal, (left, right), sq, sk), (
        mask, user_window, state)


@settings(max_examples=300, **SETTINGS)
@given(mask=st.sampled_from(MASK_TYPES), user_window=window, shp=shape())
def test_normalised_input_is_inert_on_pre_2490(mask, user_window, shp):
    """The same fix must not change the (already right) pre-#2490 resolver's band."""
    emitted = te_emits(mask, user_window)
    assume(emitted is not None)
    causal, (left, right) = emitted
    sq, sk = shp
    asis = state_band(ResolvedState(*resolve_pre_2490(causal, left, right)), sq, sk)
    fixed = state_band(ResolvedState(*resolve_pre_2490(causal, *normalize_pair(left, right))),
                       sq, sk)
    assert asis == fixed == intended_band(causal, (left, right), sq, sk)


def test_the_property_can_fail_without_the_normaliser():
    """Guards the property test itself: as-is, TE's causal (-1, 0) on the post-#2490 rule
    must NOT give the intended band (else the property above would prove nothing)."""
    st_ = ResolvedState(*resolve_post_2490(True, -1, 0))
    assert state_band(st_, 8, 8) != intended_band(True, (-1, 0), 8, 8)
    assert state_band(st_, 8, 8).empty


# ----------------------------------------------------------------------------- idempotence

@settings(max_examples=500, **SETTINGS)
@given(left=side, right=side)
def test_normalize_pair_is_idempotent(left, right):
    once = normalize_pair(left, right)
    assert normalize_pair(*once) == once
    assert all(v is None or v >= 0 for v in once)
    # non-negative sides and None pass through unchanged
    for given_, got in zip((left, right), once):
        assert got == (given_ if given_ is None or given_ >= 0 else None)


@settings(max_examples=300, **SETTINGS)
@given(w=window)
def test_normalize_window_is_idempotent_and_keeps_the_container(w):
    once = normalize_window(w)
    assert normalize_window(once) == once
    if w is None:
        assert once is None
    else:
        assert type(once) is type(w)
    l, r = normalize_window(window_size_left=left_of(w), window_size_right=right_of(w))
    assert normalize_window(window_size_left=l, window_size_right=r) == (l, r)


def left_of(w):
    return None if w is None else w[0]


def right_of(w):
    return None if w is None else w[1]


# ----------------------------------------------------------------------------- wrapper vs bare

@functools.lru_cache(maxsize=None)
def b36_recorders() -> dict:
    """name -> function with FA4 b36's exact parameter list that returns its bound arguments."""
    from analyzer.sources import resolve

    src = resolve("fa4", "4.0.0b36").package_dir / "cute" / "interface.py"
    tree = ast.parse(src.read_text())
    defs = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ENTRY_POINTS:
            for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                a.annotation = None
            node.returns = None
            node.decorator_list = []
            node.body = ast.parse("return dict(locals())").body
            defs.append(node)
    assert {d.name for d in defs} == set(ENTRY_POINTS)
    ns: dict = {}
    exec(compile(ast.fix_missing_locations(ast.Module(body=defs, type_ignores=[])),
                 "<b36 signatures>", "exec"), ns)
    return {name: ns[name] for name in ENTRY_POINTS}


def _args_for(fn, upto: int | None, overrides: dict):
    """Positional args for parameters [0..upto] (placeholders / defaults / overrides), and the
    rest of ``overrides`` as keywords."""
    params = list(inspect.signature(fn).parameters.values())
    args, kwargs = [], {}
    for i, p in enumerate(params):
        if upto is not None and i <= upto:
            args.append(overrides.get(p.name, f"<{p.name}>" if p.default is p.empty
                                      else p.default))
        elif p.name in overrides:
            kwargs[p.name] = overrides[p.name]
        elif p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            kwargs[p.name] = f"<{p.name}>"
    return args, kwargs


nonneg = st.one_of(st.none(), st.integers(0, BIG))
anyside = st.one_of(st.none(), st.integers(-BIG, BIG))


def _window_overrides(fn, l, r, as_list):
    names = inspect.signature(fn).parameters
    if "window_size" in names:
        return {"window_size": [l, r] if as_list else (l, r)}
    return {"window_size_left": l, "window_size_right": r}


@pytest.mark.network
@settings(max_examples=200, **SETTINGS)
@given(name=st.sampled_from(ENTRY_POINTS), l=nonneg, r=nonneg, positional=st.booleans(),
       as_list=st.booleans(), causal=st.booleans())
def test_wrapper_and_bare_call_agree_for_non_negative_windows(name, l, r, positional, as_list,
                                                              causal):
    """Guards: the wrapper touching a window it should leave alone, or moving / dropping any
    other argument, on b36's real parameter lists (window by keyword or by position)."""
    fn = b36_recorders()[name]
    over = {**_window_overrides(fn, l, r, as_list), "causal": causal}
    params = list(inspect.signature(fn).parameters)
    upto = max(params.index(k) for k in over) if positional else None
    args, kwargs = _args_for(fn, upto, over)
    assert wrap(fn)(*args, **kwargs) == fn(*args, **kwargs)


@pytest.mark.network
@settings(max_examples=200, **SETTINGS)
@given(name=st.sampled_from(ENTRY_POINTS), l=anyside, r=anyside, positional=st.booleans(),
       causal=st.booleans())
def test_wrapper_equals_bare_call_on_normalised_window(name, l, r, positional, causal):
    """For any int window, wrap(f)(w) == f(normalised w): the only change is negative -> None."""
    fn = b36_recorders()[name]
    over = {**_window_overrides(fn, l, r, False), "causal": causal}
    nl, nr = normalize_pair(l, r)
    over_n = {**_window_overrides(fn, nl, nr, False), "causal": causal}
    params = list(inspect.signature(fn).parameters)
    upto = max(params.index(k) for k in over) if positional else None
    a, k = _args_for(fn, upto, over)
    an, kn = _args_for(fn, upto, over_n)
    assert wrap(fn)(*a, **k) == fn(*an, **kn)


# ----------------------------------------------------------------------------- bands vs torch

def torch_mask(sq, sk, causal, local, left, right) -> torch.Tensor:
    """FA4's rule written directly as a boolean mask (DESIGN section 3), row i x key j."""
    i = torch.arange(sq).unsqueeze(1)
    j = torch.arange(sk).unsqueeze(0)
    diag = i + (sk - sq)
    keep = torch.ones(sq, sk, dtype=torch.bool)
    if local:
        if left is not None:
            keep &= j >= diag - left
        if right is not None:
            keep &= j <= diag + right
    if causal:
        keep &= j <= diag
    return keep


def band_mask(b: Band) -> torch.Tensor:
    j = torch.arange(b.seqlen_k).unsqueeze(0)
    lo = torch.tensor([r[0] for r in b.rows]).unsqueeze(1)
    hi = torch.tensor([r[1] for r in b.rows]).unsqueeze(1)
    return (j >= lo) & (j <= hi)


@settings(max_examples=400, **SETTINGS)
@given(causal=st.booleans(), local=st.booleans(), left=small_side, right=small_side, shp=shape())
def test_state_band_matches_a_brute_force_torch_mask(causal, local, left, right, shp):
    """Guards: an off-by-one in the band (bottom-right offset d, inclusive ends, clipping,
    negative sides used literally, the empty row)."""
    sq, sk = shp
    b = state_band(ResolvedState(causal, local, left, right), sq, sk)
    assert torch.equal(band_mask(b), torch_mask(sq, sk, causal, local, left, right))
    assert b.empty == (not torch_mask(sq, sk, causal, local, left, right).any())


@settings(max_examples=300, **SETTINGS)
@given(causal=st.booleans(), left=st.one_of(st.just(-1), st.integers(0, 80)),
       right=st.one_of(st.just(-1), st.integers(0, 80)), shp=shape())
def test_intended_band_matches_a_brute_force_torch_mask(causal, left, right, shp):
    """TE's meaning: -1 is an unbounded side, causal adds j <= i + d."""
    sq, sk = shp
    want = torch_mask(sq, sk, causal, True, None if left == -1 else left,
                      None if right == -1 else right)
    assert torch.equal(band_mask(intended_band(causal, (left, right), sq, sk)), want)
