"""The (mask_type, user window) -> (causal, window) pairs TransformerEngine hands to FA4.

Computed by running the audited TE tree's own ``check_set_window_size`` (extracted, in the
sandbox) over every mask type x :data:`WINDOW_GRID`; rejections (assertions) and warnings are
recorded. The transcription in :mod:`transcriptions.te` is used only when asked
(``--te transcribed``) or when no TE source is given. ``causal`` is ``"causal" in
attn_mask_type``, as at every FA call in TE; ``arbitrary`` never selects FlashAttention, so
its pairs are recorded but marked ``reaches_fa=False``.

Context parallelism (TE 2.20.x) synthesises windows of its own: :data:`CP_PAIRS`.
"""

from __future__ import annotations

import warnings as _warnings
from pathlib import Path

import transcriptions
from analyzer.sandbox import raise_if_environment_error
from analyzer.equivalence.extract import Extracted
from analyzer.equivalence.model import MASK_TYPES, Emission

# Every shape check_set_window_size distinguishes: None, both sentinels, (w, 0), (w, w2),
# (0, 0), one-sided and two-sided negatives, and lists (compared with == against tuples).
WINDOW_GRID: tuple = (
    None, (-1, -1), (-1, 0), (0, 0), (128, 0), (128, 64), (0, 64),
    (-1, 64), (128, -1), (0, -1), (-2, 0), (-2, -2), (-1, -2),
    [-1, 0], [-1, -1], [128, 0], [128, 64],
)

# What TE 2.20.2's context parallelism passes to FA4 besides the user's window
# (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py):
#   P2P: diagonal tiles run causal with (-1, 0); the other tiles run non-causal with (-1, -1).
#   all-gather: get_kv_seq_info_after_all_gather trims K/V per step and re-aligns the window:
#     (-1, 0)/(-1, -1) stay; a causal (w, 0) stays (w, 0); a non-causal (w, r) becomes
#     (w + r, 0) after trimming, or keeps part of r on the last chunk; THD without load
#     balancing uses (-1, 0).
#   A2A: passes the user window (after check_set_window_size) through: no new pairs.
CP_PAIRS: tuple[tuple[str, bool, tuple], ...] = (
    ("context_parallel p2p: diagonal tile", True, (-1, 0)),
    ("context_parallel p2p: off-diagonal tile", False, (-1, -1)),
    ("context_parallel all_gather: causal step", True, (-1, 0)),
    ("context_parallel all_gather: causal window (128, 0)", True, (128, 0)),
    ("context_parallel all_gather: no window", False, (-1, -1)),
    ("context_parallel all_gather: window (128, 64) re-aligned", False, (192, 0)),
    ("context_parallel all_gather: window (128, 64) last chunk", False, (160, 32)),
)


# Pairs TE never emits but a user calling FA4 directly may pass; shown for reference only
# (not counted in the verdict or the claims). TE rewrites a non-causal (-1, 0) to (-1, -1).
DIRECT_PAIRS: tuple[tuple[str, bool, tuple], ...] = (
    ("direct FA4 call (not from TE)", False, (-1, 0)),
)


def _calls() -> list[tuple[str, object]]:
    return [(m, w) for m in MASK_TYPES for w in WINDOW_GRID]


def _emission(mask: str, w, ok: bool, value, error: str | None, warns: list[str]) -> Emission:
    e = Emission(mask_type=mask, user_window=w, causal="causal" in mask,
                 warnings=list(warns), reaches_fa=(mask != "arbitrary"))
    if ok:
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            e.rejected = f"returned {value!r}, not a (left, right) pair"
        else:
            e.window = value
    else:
        e.rejected = error
    return e


def te_emissions(te: Extracted | None) -> list[Emission]:
    """Every mask type x WINDOW_GRID through the real extracted function, or, when ``te`` is
    None, through the transcription. Raises AuditError (SandboxRefused/Failed) when the real
    function cannot be evaluated."""
    calls = _calls()
    out = []
    if te is None:
        fn = transcriptions.TE_CHECK.function
        for mask, w in calls:
            with _warnings.catch_warnings(record=True) as caught:
                _warnings.simplefilter("always")
                try:
                    value, ok, err = fn(mask, w), True, None
                except Exception as exc:  # the rule's assertions and type errors
                    value, ok, err = None, False, f"{type(exc).__name__}: {exc}"
            out.append(_emission(mask, w, ok, value, err, [str(c.message) for c in caught]))
        return out
    results = te.evaluate([(m, w) for m, w in calls])
    for (mask, w), r in zip(calls, results):
        raise_if_environment_error(f"{te.path}:{te.line}: {te.name}", (mask, w), r)
        out.append(_emission(mask, w, r.ok, r.value, r.error, r.warnings))
    return out


def te_has_cp_fa4(root: Path | None) -> bool:
    """Whether a TE tree's context parallelism can call FA4 (2.20.x); True for the
    transcription (it follows 2.20.2)."""
    if root is None:
        return True
    for p in (root / "transformer_engine").rglob("context_parallel.py"):
        try:
            if "use_flash_attn_4" in p.read_text(errors="replace"):
                return True
        except OSError:
            continue
    return False


def direct_emissions() -> list[Emission]:
    return [Emission(mask_type="direct", user_window=None, causal=causal, window=window,
                     origin=label, reaches_fa=True) for label, causal, window in DIRECT_PAIRS]


def cp_emissions() -> list[Emission]:
    return [Emission(mask_type=label.split(":")[0], user_window=None, causal=causal,
                     window=window, origin=label) for label, causal, window in CP_PAIRS]
