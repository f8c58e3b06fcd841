"""Transcription check: each transcription against the real function it claims to equal.

FA4 resolvers are compared over the whole domain ``causal in {False, True} x left, right in
{None} U [-3, 8]`` (338 inputs); TE's ``check_set_window_size`` over every mask type x the
emissions window grid, comparing the value (tuple vs list included), the exception and the
warnings. Any difference is an error that names the input.
"""

from __future__ import annotations

import warnings as _warnings

from analyzer.equivalence.emissions import WINDOW_GRID
from analyzer.equivalence.extract import Extracted
from analyzer.equivalence.model import MASK_TYPES

SIDES = (None, *range(-3, 9))
FA4_DOMAIN = tuple((c, l, r) for c in (False, True) for l in SIDES for r in SIDES)


def _outcome(fn, args) -> tuple:
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        try:
            value = fn(*args)
            res = ("value", value, type(value).__name__)
        except Exception as exc:
            res = ("raises", f"{type(exc).__name__}: {exc}", None)
    return res + (tuple(str(c.message) for c in caught),)


def _real_outcomes(e: Extracted, inputs) -> list[tuple]:
    results = e.evaluate([tuple(a) for a in inputs])
    out = []
    for r in results:
        if r.ok:
            out.append(("value", r.value, type(r.value).__name__, tuple(r.warnings)))
        else:
            out.append(("raises", r.error, None, tuple(r.warnings)))
    return out


def _show(o: tuple) -> str:
    kind, val, _, warns = o
    s = repr(val) if kind == "value" else f"raises {val}"
    return s + (f" with warning {list(warns)!r}" if warns else "")


def check_extracted(e: Extracted, transcription=None, *, limit: int = 10) -> list[str]:
    """Differences between ``e`` and its transcription (by default the one its fingerprint
    names). Empty list: identical on the whole domain. A new variant has no transcription:
    returns [] (nothing to compare; the caller reports it as new)."""
    t = transcription if transcription is not None else e.transcription
    if t is None:
        return []
    if e.kind == "fa4-resolver":
        inputs = FA4_DOMAIN
        real = _real_outcomes(e, inputs)
        names = ("causal", "left", "right")
    else:
        inputs = tuple((m, w) for m in MASK_TYPES for w in WINDOW_GRID)
        real = _real_outcomes(e, inputs)
        names = ("attn_mask_type", "window_size")
    diffs = []
    for args, r in zip(inputs, real):
        mine = _outcome(t.function, args)
        if mine != r:
            given = ", ".join(f"{n}={a!r}" for n, a in zip(names, args))
            diffs.append(f"transcription {t.name!r} ({t.role}) differs from {e.path}:{e.line} "
                         f"{e.name} at {given}: real {_show(r)}, transcription {_show(mine)}")
            if len(diffs) >= limit:
                diffs.append("... (more differences not shown)")
                break
    return diffs
