"""Hand-written equivalent of TransformerEngine's ``check_set_window_size`` (2.15 .. 2.20.2).

TE spells an unbounded side as ``-1``. The rule, by mask type:

* a mask type containing "causal": ``None`` becomes ``(-1, 0)``; ``(-1, -1)`` and any
  ``(w >= 0, r != 0)`` are cut to ``(w, 0)`` with a warning; ``(-1, 0)`` and ``(w >= 0, 0)``
  pass unchanged; every other shape fails an assertion.
* ``no_mask``, ``padding``, ``arbitrary``: ``None`` becomes ``(-1, -1)``; ``(-1, 0)`` becomes
  ``(-1, -1)`` with a warning; ``(-1, -1)`` and ``(>= 0, >= 0)`` pass unchanged; other
  negatives fail an assertion.
* any other mask type fails an assertion.

Comparisons with the sentinel tuples use ``==``, so a *list* such as ``[-1, 0]`` never equals
them: it falls through to the sign tests (and asserts when a side is negative).
"""

from __future__ import annotations

import warnings

CAUSAL_MSG = "window_size should be (-1, 0) or (>=0, 0) for attn_mask_type="
NONCAUSAL_MSG = "window_size should be (-1, -1) or (>=0, >=0) for attn_mask_type="


def check_set_window_size(attn_mask_type, window_size=None):
    """Return the window TE hands to the attention backends; may warn or raise AssertionError."""
    given = window_size
    if "causal" in attn_mask_type:
        msg = CAUSAL_MSG + attn_mask_type
        if given is None:
            return (-1, 0)
        if given == (-1, -1) or (given[0] >= 0 and given[1] != 0):
            warnings.warn(msg)
            return (given[0], 0)
        if given == (-1, 0):
            return given
        if given[0] < 0 or given[1] != 0:
            raise AssertionError(msg)
        return given
    if attn_mask_type in ("no_mask", "padding", "arbitrary"):
        msg = NONCAUSAL_MSG + attn_mask_type
        if given is None:
            return (-1, -1)
        if given == (-1, 0):
            warnings.warn(msg)
            return (-1, -1)
        if given == (-1, -1):
            return given
        if given[0] < 0 or given[1] < 0:
            raise AssertionError(msg)
        return given
    raise AssertionError("Invalid attn_mask_type: " + attn_mask_type)
