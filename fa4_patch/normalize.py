"""Map TransformerEngine's window sentinel (-1 = unbounded side) to FlashAttention 4's (None).

FA4 >= 4.0.0b30 (flash-attention PR #2490) reads a negative bound literally: TE's causal
``(-1, 0)`` becomes the empty band ``[i+d+1, i+d]`` and the kernel returns all-zero output.
Mapping every negative bound to ``None`` per side, before FA4 sees it, restores TE's meaning on
every FA4 release (older resolvers already treated these pairs as unbounded).

``normalize_pair`` is deliberately written in a tiny subset of Python -- comparisons,
``isinstance``, ``bool``, ``int``, ``TypeError``, ``if``/``raise``/``return`` and f-strings, no
loops, imports or attribute access -- because the call-site pass (``analyzer.sites``) executes it
in a sandbox with an AST allowlist and no other builtins before it trusts a wrapper built on it.
Keep it that way; the codemod writes the same body into patched modules as
``_fa4_audit_normalize_pair``.
"""

from __future__ import annotations

__all__ = ["normalize_pair", "normalize_window"]


def normalize_pair(left, right):
    """Return ``(left, right)`` with each negative bound replaced by None.

    None and non-negative ints pass through unchanged (a genuine sliding window such as
    ``(511, 0)`` is kept). Anything else -- bools, floats, strings, tensors -- raises a
    TypeError naming the parameter.
    """
    if left is not None:
        if isinstance(left, bool) or not isinstance(left, int):
            raise TypeError(f"window_size_left must be an int or None, got {left}")
        if left < 0:
            left = None
    if right is not None:
        if isinstance(right, bool) or not isinstance(right, int):
            raise TypeError(f"window_size_right must be an int or None, got {right}")
        if right < 0:
            right = None
    return left, right


_MISSING = object()


def normalize_window(window_size=_MISSING, *, window_size_left=_MISSING,
                     window_size_right=_MISSING):
    """Normalise a window given either way FA4 takes it.

    * ``normalize_window((L, R))`` / ``normalize_window([L, R])`` -> the same container type
      with negative bounds replaced by None (the very object when nothing changes);
      ``normalize_window(None)`` -> None.
    * ``normalize_window(window_size_left=L, window_size_right=R)`` -> ``(L, R)`` normalised;
      a side that is not given is returned as None.

    Raises TypeError naming the parameter for any other type (bools and floats included), and
    for a ``window_size`` that is not a pair.
    """
    if window_size is not _MISSING:
        if window_size_left is not _MISSING or window_size_right is not _MISSING:
            raise TypeError("give window_size or window_size_left/window_size_right, not both")
        return _normalize_window_size(window_size)
    left = None if window_size_left is _MISSING else window_size_left
    right = None if window_size_right is _MISSING else window_size_right
    return normalize_pair(left, right)


def _normalize_window_size(window_size):
    if window_size is None:
        return None
    if isinstance(window_size, tuple):
        make = tuple
    elif isinstance(window_size, list):
        make = list
    else:
        raise TypeError(
            "window_size must be a (left, right) tuple, list or None, got "
            f"{type(window_size).__name__}")
    if len(window_size) != 2:
        raise TypeError("window_size must have two bounds (left, right), got "
                        f"{len(window_size)}")
    left, right = window_size
    for index, side in ((0, left), (1, right)):
        if side is not None and (isinstance(side, bool) or not isinstance(side, int)):
            raise TypeError(f"window_size[{index}] must be an int or None, got "
                            f"{type(side).__name__}")
    new_left, new_right = normalize_pair(left, right)
    if new_left is left and new_right is right:
        return window_size
    return make((new_left, new_right))
