"""What a resolved state means: the key band it selects, against the band TE intends.

FA4 (b36 ``mask.py`` / ``block_info.py``): with ``d = seqlen_k - seqlen_q`` (bottom-right
alignment), row ``i`` keeps keys ``j`` with ``i + d - left <= j <= i + d + right`` when local
(a None side is unbounded), ``j <= i + d`` when causal, every key otherwise. Negative sides are
used as they are. A row with no key gives zero output and LSE = -inf.

TE's intent for a pair it emits: ``-1`` is an unbounded side, ``causal`` adds ``j <= i + d``,
same alignment.

Verdicts, comparing the two bands row by row (on sq = sk and on sq < sk; the worse counts):
``exact`` (same keys), ``empty`` (every row empty, the intent is not), ``wider`` (a superset),
``narrower`` (a subset), ``shifted`` (neither).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterable

from fa4_patch.normalize import normalize_pair

from analyzer.equivalence.model import SEVERITY, Band, BandVerdict, ResolvedState, ShapeResult

NEG_INF = float("-inf")


def normalize_window(left, right) -> tuple:
    """The fix's rule, taken from the fix itself (``fa4_patch.normalize.normalize_pair``):
    a negative side means unbounded, spelled None for FA4."""
    return normalize_pair(left, right)


def _rows(seqlen_q: int, seqlen_k: int, lo_off, hi_off, causal: bool) -> Band:
    """Band from per-row offsets relative to the diagonal i + d (None = unbounded)."""
    d = seqlen_k - seqlen_q
    rows = []
    for i in range(seqlen_q):
        diag = i + d
        lo = 0 if lo_off is None else max(0, diag - lo_off)
        hi = seqlen_k - 1 if hi_off is None else min(seqlen_k - 1, diag + hi_off)
        if causal:
            hi = min(hi, diag)
        if lo > hi:
            lo, hi = 0, -1
        rows.append((lo, hi))
    return Band(seqlen_q, seqlen_k, tuple(rows))


def state_band(state: ResolvedState, seqlen_q: int, seqlen_k: int) -> Band:
    """The keys FA4's kernels keep for a resolved state."""
    if state.local:
        return _rows(seqlen_q, seqlen_k, state.left, state.right, state.causal)
    if state.causal:
        return _rows(seqlen_q, seqlen_k, None, 0, False)
    return _rows(seqlen_q, seqlen_k, None, None, False)


def intended_band(causal: bool, window, seqlen_q: int, seqlen_k: int) -> Band:
    """The keys TE means by ``(causal, window)``: -1 is unbounded."""
    left, right = window
    lo = None if left == -1 else left
    hi = None if right == -1 else right
    return _rows(seqlen_q, seqlen_k, lo, hi, causal)


def compare(actual: Band, intended: Band) -> BandVerdict:
    if actual.rows == intended.rows:
        return "exact"
    if actual.empty:
        return "empty"
    sup = sub = True
    for (alo, ahi), (ilo, ihi) in zip(actual.rows, intended.rows):
        a_empty, i_empty = alo > ahi, ilo > ihi
        if not i_empty and (a_empty or alo > ilo or ahi < ihi):
            sup = False
        if not a_empty and (i_empty or alo < ilo or ahi > ihi):
            sub = False
    if sup:
        return "wider"
    if sub:
        return "narrower"
    return "shifted"


def shapes_for(*values) -> list[tuple[int, int]]:
    """(sq, sk) pairs large enough that every given window side matters: sq = sk and sq < sk."""
    m = max([abs(v) for v in values if isinstance(v, int) and not isinstance(v, bool)] + [4])
    n = 2 * m + 8
    return [(n, n), (n // 2, n)]


def worst(verdicts: Iterable[BandVerdict]) -> BandVerdict:
    vs = list(verdicts)
    return max(vs, key=lambda v: SEVERITY[v]) if vs else "error"


def band_verdict(state: ResolvedState, causal: bool, window,
                 shapes: list[tuple[int, int]] | None = None,
                 simulate: bool = False) -> tuple[BandVerdict, list[ShapeResult]]:
    """Compare the state's band with TE's intent for ``(causal, window)`` on each shape."""
    if not simulate and not shapes:
        small = _order_preserving(state, tuple(window))
        if small is None:
            # a bound below -1 next to bounds too large to lay out: no band is computed; a
            # framework never means such a side, so it is judged wrong (never "exact")
            return "shifted", []
        state, window = small
    shapes = shapes or shapes_for(window[0], window[1], state.left, state.right)
    if not simulate:
        verdict, results = _bands_only(state, bool(causal), tuple(window), tuple(shapes))
        return verdict, list(results)
    out = []
    for sq, sk in shapes:
        actual = state_band(state, sq, sk)
        intended = intended_band(causal, window, sq, sk)
        v = compare(actual, intended)
        relerr = zero = None
        if simulate:
            relerr, zero = simulated_error(actual, intended)
        out.append(ShapeResult(sq, sk, v, relerr, zero))
    return worst(s.band for s in out), out


_LAYOUT_MAX = 64     # window sides up to this are laid out as they are


def _order_preserving(state: ResolvedState, window: tuple):
    """(state, window) with their positive sides renumbered 1, 2, ... in order, when a side is
    too large to lay out row by row (a band is O(side) rows: a side of 2**31 would never
    finish). With every side None, -1 or >= 0, which keys a row keeps depends only on how the
    sides compare with each other and with 0 on a long enough sequence, so the verdict is the
    same. A side below -1 makes rows depend on sums of sides: then None (not renumbered)."""
    vals = [v for v in (window[0], window[1], state.left, state.right)
            if isinstance(v, int) and not isinstance(v, bool)]
    if not vals or max(abs(v) for v in vals) <= _LAYOUT_MAX:
        return state, window
    if any(v < -1 for v in vals):
        return None
    rank = {v: i + 1 for i, v in enumerate(sorted({v for v in vals if v > 0}))}

    def m(v):
        return rank.get(v, v) if isinstance(v, int) and not isinstance(v, bool) else v

    return (dataclasses.replace(state, left=m(state.left), right=m(state.right)),
            (m(window[0]), m(window[1])))


@functools.lru_cache(maxsize=4096)
def _bands_only(state, causal, window, shapes):
    out = []
    for sq, sk in shapes:
        v = compare(state_band(state, sq, sk), intended_band(causal, window, sq, sk))
        out.append(ShapeResult(sq, sk, v))
    return worst(s.band for s in out), tuple(out)


# ----------------------------------------------------------------------------- simulation

_SIM_CACHE: dict = {}


def _qkv(sq: int, sk: int, dim: int = 16):
    import torch
    key = (sq, sk, dim)
    if key not in _SIM_CACHE:
        g = torch.Generator().manual_seed(1234 + sq * 7919 + sk)
        q = torch.randn(sq, dim, generator=g, dtype=torch.float64)
        k = torch.randn(sk, dim, generator=g, dtype=torch.float64)
        v = torch.randn(sk, dim, generator=g, dtype=torch.float64)
        _SIM_CACHE[key] = (q, k, v)
    return _SIM_CACHE[key]


@functools.lru_cache(maxsize=256)
def attention(band: Band, dim: int = 16):
    """float64 attention output (and LSE) restricted to ``band``; an empty row gives zero
    output and LSE -inf, as FA4 does."""
    import torch
    q, k, v = _qkv(band.seqlen_q, band.seqlen_k, dim)
    scores = (q @ k.T) / dim ** 0.5
    j = torch.arange(band.seqlen_k).unsqueeze(0)
    lo = torch.tensor([r[0] for r in band.rows]).unsqueeze(1)
    hi = torch.tensor([r[1] for r in band.rows]).unsqueeze(1)
    keep = (j >= lo) & (j <= hi)
    scores = scores.masked_fill(~keep, NEG_INF)
    lse = torch.logsumexp(scores, dim=1)
    finite = torch.isfinite(lse)
    safe_lse = torch.where(finite, lse, torch.zeros_like(lse)).unsqueeze(1)
    p = torch.where(finite.unsqueeze(1), torch.exp(scores - safe_lse), torch.zeros_like(scores))
    out = p @ v
    return out, lse


@functools.lru_cache(maxsize=1024)
def simulated_error(actual: Band, intended: Band) -> tuple[float, bool]:
    """Relative (Frobenius) error of the simulated output against the intended one, and
    whether the output is all zero. An empty band gives 1.0 and True."""
    out, _ = attention(actual)
    ref, _ = attention(intended)
    denom = float(ref.norm())
    diff = float((out - ref).norm())
    relerr = diff / denom if denom > 0 else diff
    return relerr, bool((out == 0).all())
