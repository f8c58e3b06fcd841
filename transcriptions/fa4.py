"""Hand-written equivalents of FlashAttention 4's window resolver, one per released variant.

Every function takes the three values an FA4 entry point holds at that point --
``causal``, the left window side and the right window side (``None`` = unbounded) -- and returns
the resolved state ``(causal, local, left, right)`` the kernels are configured from.
These are rewrites of the rules, written from reading the released sources; they share no text
with them. ``transcriptions`` imports nothing of the project.
"""

from __future__ import annotations


def _tail(causal, left, right):
    """The part every variant shares once the sentinel rule has run.

    A window with a bound decides between the causal path (left unbounded, right exactly 0:
    plain causal, the right bound dropped) and the local path (anything else, causal off).
    No bound at all means not local; ``causal`` is then kept as it is.
    """
    if left is None and right is None:
        return causal, False, left, right
    if left is None and right == 0:
        return True, False, None, None
    return False, True, left, right


def inline_fwd(causal, window_size_left, window_size_right, mask_mod=None):
    """FA4 4.0.0b3-b4, the statements inside ``_flash_attn_fwd``.

    With a ``mask_mod`` the window is ignored (neither causal nor local, windows untouched).
    Otherwise: causal forces the right side to 0 first; then a pair whose two sides are both
    given and sum below zero is widened to "no window" (both None); then the shared tail.
    """
    if mask_mod is not None:
        return False, False, window_size_left, window_size_right
    return _pre_2490_rule(causal, window_size_left, window_size_right)


def inline_bwd(causal, window_size_left, window_size_right):
    """FA4 4.0.0b3-b4, the statements inside ``_flash_attn_bwd``: the forward rule without the
    ``mask_mod`` escape (the backward never receives a mask_mod there)."""
    return _pre_2490_rule(causal, window_size_left, window_size_right)


def _pre_2490_rule(causal, left, right):
    if causal:
        right = 0
    both_given = left is not None and right is not None
    if both_given and left + right < 0:
        left, right = None, None
    return _tail(causal, left, right)


def resolve_pre_2490(causal, window_size_left, window_size_right, mask_mod=None):
    """``_resolve_causal_local_window`` in FA4 4.0.0b5-b29 (flash-attention 59cf537812).

    Same rule as the inline form, moved into a function: mask_mod escape, then ``causal`` pins
    the right side to 0, then a negative *sum* of two given sides means "no window".
    TE's causal ``(-1, 0)`` therefore becomes right=0, sum -1 < 0, both None: plain causal.
    """
    if mask_mod is not None:
        return False, False, window_size_left, window_size_right
    return _pre_2490_rule(causal, window_size_left, window_size_right)


def resolve_post_2490(causal, window_size_left, window_size_right, mask_mod=None):
    """``_resolve_causal_local_window`` in FA4 4.0.0b30-b36 (flash-attention 7d6a6d25, PR #2490).

    The sentinel rule is narrowed and moved first: only when *both* given sides are negative
    is the window dropped; only then does ``causal`` pin the right side to 0. A single
    negative side now survives as a literal bound, so TE's causal ``(-1, 0)`` stays
    LOCAL left=-1 right=0 -- the band ``[i+d+1, i+d]``, empty.
    """
    if mask_mod is not None:
        return False, False, window_size_left, window_size_right
    left, right = window_size_left, window_size_right
    if left is not None and right is not None and left < 0 and right < 0:
        left, right = None, None
    if causal:
        right = 0
    return _tail(causal, left, right)
