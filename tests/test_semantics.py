"""analyzer.equivalence.semantics: bands FA4 selects vs bands TE intends, verdicts, and the
float64 simulated attention."""

from __future__ import annotations

import pytest

from analyzer.equivalence.model import ResolvedState
from analyzer.equivalence.semantics import (attention, band_verdict, compare, intended_band,
                                            normalize_window, shapes_for, simulated_error,
                                            state_band)

CAUSAL = ResolvedState(True, False, None, None)
FULL = ResolvedState(False, False, None, None)


def local(l, r):
    return ResolvedState(False, True, l, r)


def test_causal_band_is_bottom_right_aligned():
    """Row i keeps j <= i + d with d = sk - sq (guards against top-left alignment)."""
    b = state_band(CAUSAL, 2, 4)
    assert b.rows == ((0, 2), (0, 3))
    assert state_band(CAUSAL, 3, 3).rows == ((0, 0), (0, 1), (0, 2))


def test_local_minus_one_zero_is_the_literal_empty_band():
    """FA4 >= b30 keeps (-1, 0) literally: i+d+1 <= j <= i+d, empty on every row."""
    for sq, sk in [(8, 8), (4, 8)]:
        assert state_band(local(-1, 0), sq, sk).empty


def test_te_intends_minus_one_as_unbounded():
    assert intended_band(True, (-1, 0), 4, 4).rows == state_band(CAUSAL, 4, 4).rows
    assert intended_band(False, (-1, -1), 3, 5).rows == state_band(FULL, 3, 5).rows
    assert intended_band(True, (2, 0), 5, 5).rows == ((0, 0), (0, 1), (0, 2), (1, 3), (2, 4))


@pytest.mark.parametrize("state, causal, window, verdict", [
    (CAUSAL, True, (-1, 0), "exact"),
    (local(-1, 0), True, (-1, 0), "empty"),
    (FULL, True, (-1, 0), "wider"),
    (local(2, 0), True, (-1, 0), "narrower"),
    (local(2, 0), False, (-1, -1), "narrower"),
    (local(3, 3), True, (128, 0), "shifted"),
    (local(None, 0), True, (-1, 0), "exact"),
    (FULL, False, (-1, -1), "exact"),
    (local(128, 64), False, (128, 64), "exact"),
    (ResolvedState(False, True, 7, -8), False, (7, -8), "exact"),
])
def test_band_verdicts(state, causal, window, verdict):
    """Each verdict is reachable, and the worse of sq = sk and sq < sk counts."""
    got, shapes = band_verdict(state, causal, window)
    assert got == verdict
    assert {(s.seqlen_q == s.seqlen_k) for s in shapes} == {True, False}


def test_shifted_needs_both_more_and_fewer_keys():
    a = state_band(local(1, 1), 6, 6)
    i = intended_band(False, (2, 0), 6, 6)
    assert compare(a, i) == "shifted"


def test_shapes_are_large_enough_for_every_window_side_to_matter():
    (sq, sk), (sq2, sk2) = shapes_for(128, 64)
    assert sq == sk > 2 * 128 and sq2 < sk2
    # a 128-wide left window on those shapes really differs from an unbounded one
    assert band_verdict(local(128, 0), True, (-1, 0))[0] == "narrower"


def test_simulated_attention_empty_band_is_all_zero_with_relerr_one():
    """DESIGN §6: the empty band gives zero output, LSE -inf, relative error 1.0."""
    verdict, shapes = band_verdict(local(-1, 0), True, (-1, 0), simulate=True)
    assert verdict == "empty"
    for s in shapes:
        assert s.relerr == 1.0 and s.out_all_zero is True
    out, lse = attention(state_band(local(-1, 0), 8, 8))
    assert bool((out == 0).all()) and bool((lse == float("-inf")).all())


def test_simulated_attention_exact_band_has_zero_error_and_wrong_band_does_not():
    _, exact = band_verdict(CAUSAL, True, (-1, 0), simulate=True)
    assert all(s.relerr == 0.0 and s.out_all_zero is False for s in exact)
    _, wider = band_verdict(FULL, True, (-1, 0), simulate=True)
    assert all(0.0 < s.relerr < 1.0 for s in wider)


def test_simulation_matches_a_dense_reference():
    """Guards against a masking bug in the simulation itself: compare with a plain softmax."""
    import torch
    b = intended_band(True, (3, 0), 5, 9)
    out, _ = attention(b)
    from analyzer.equivalence.semantics import _qkv
    q, k, v = _qkv(5, 9)
    s = (q @ k.T) / 4.0
    mask = torch.full_like(s, float("-inf"))
    for i, (lo, hi) in enumerate(b.rows):
        mask[i, lo:hi + 1] = 0
    ref = torch.softmax(s + mask, dim=1) @ v
    assert torch.allclose(out, ref, atol=1e-12)
    assert simulated_error(b, b) == (0.0, False)


@pytest.mark.parametrize("given, expected", [
    ((-1, 0), (None, 0)), ((-1, -1), (None, None)), ((128, 0), (128, 0)),
    ((None, 0), (None, 0)), ((7, -8), (7, None)), ((0, 0), (0, 0)),
])
def test_normalisation_maps_negative_sides_to_none(given, expected):
    assert normalize_window(*given) == expected


def test_large_window_sides_are_judged_like_their_full_layout():
    """Sides above 64 are renumbered in order before the band is laid out (a side of 2**31 once
    built 2**32 rows and never finished). Guards against a renumbering that changes a verdict:
    every (state, causal, window) over sides up to 300 gets the verdict of the full layout."""
    import itertools

    from analyzer.equivalence.model import ResolvedState
    from analyzer.equivalence.semantics import _bands_only, band_verdict, shapes_for

    sides = [None, -1, 0, 1, 63, 65, 70, 300]
    for c, loc, sl, sr, wl, wr, causal in itertools.product(
            (True, False), (True, False), sides, sides, sides, sides, (True, False)):
        if (sl, sr, wl, wr).count(None) < 2 and len({sl, sr, wl, wr}) < 3:
            continue                       # keep the product small; every order still occurs
        st = ResolvedState(c, loc, sl, sr)
        full, _ = _bands_only(st, causal, (wl, wr), tuple(shapes_for(wl, wr, sl, sr)))
        assert band_verdict(st, causal, (wl, wr))[0] == full, (st, causal, (wl, wr))


def test_a_huge_side_is_judged_at_once():
    """A call passing (-(2**31), 0) or (2**40, 0) is judged without laying out its band."""
    from analyzer.equivalence.model import ResolvedState
    from analyzer.equivalence.semantics import band_verdict

    assert band_verdict(ResolvedState(True, True, 2**40, 0), True, (2**40, 0))[0] == "exact"
    assert band_verdict(ResolvedState(True, False, None, 0), True, (2**40, 0))[0] == "wider"
    assert band_verdict(ResolvedState(False, True, -(2**31), 0), True, (-(2**31), 0))[0] \
        == "shifted"
