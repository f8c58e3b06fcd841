"""``wrap(fn)``: an FA4 entry point that never sees a negative window bound.

The four FA4 entry points TE binds take the window two ways:

* ``flash_attn_func`` / ``flash_attn_varlen_func``: ``window_size=(L, R)``, positional index 7 /
  15 since 4.0.0b9 and 5 / 12 before;
* ``_flash_attn_fwd`` / ``_flash_attn_bwd``: ``window_size_left=``, ``window_size_right=``
  (positions moved between releases too).

The positions are read from ``inspect.signature(fn)`` once, when wrapping, so the same wrapper
is right on every release. Each call then costs a length test, a dict membership test or two,
and -- only when a window is actually passed -- one call to :func:`normalize_pair`.
"""

from __future__ import annotations

import functools
import inspect

from fa4_patch.normalize import normalize_pair, normalize_window

__all__ = ["MARKER", "wrap", "is_wrapped", "window_positions"]

#: Attribute set to True on every wrapper (the codemod's inline ``_fa4_audit_wrap`` sets the
#: same one), so either recognises the other and ``functools.wraps`` layers keep showing it.
MARKER = "_fa4_audit_wrapped"

_WINDOW_NAMES = ("window_size", "window_size_left", "window_size_right")


def is_wrapped(fn) -> bool:
    """True when ``fn`` is, or (through ``functools.wraps`` layers) wraps, a normalising wrapper."""
    seen = 0
    while fn is not None and seen < 100:
        if getattr(fn, MARKER, False) is True:
            return True
        fn = getattr(fn, "__wrapped__", None)
        seen += 1
    return False


def window_positions(fn) -> dict[str, int | None]:
    """``{name: positional index or None}`` for the window parameters ``fn`` accepts.

    A parameter that can only be passed by keyword maps to None; a name ``fn`` does not take is
    absent unless ``fn`` takes ``**kwargs`` (then it maps to None: keyword only).
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot wrap {fn!r}: its signature cannot be read ({exc})") from None
    out: dict[str, int | None] = {}
    index = 0
    has_var_kw = False
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if p.name in _WINDOW_NAMES:
                # a positional-only window can only arrive by position
                out[p.name] = index
            index += 1
        elif p.kind is p.KEYWORD_ONLY and p.name in _WINDOW_NAMES:
            out[p.name] = None
        elif p.kind is p.VAR_KEYWORD:
            has_var_kw = True
    if has_var_kw:
        for name in _WINDOW_NAMES:
            out.setdefault(name, None)
    return out


def _left(value):
    return normalize_pair(value, None)[0]


def _right(value):
    return normalize_pair(None, value)[1]


def wrap(fn):
    """Return ``fn`` wrapped so negative window bounds reach it as None.

    Keeps ``__name__``, ``__qualname__``, ``__doc__``, ``__module__``, ``__wrapped__`` and the
    signature. Wrapping a wrapped function (or None, TE's fallback when FA4 is missing) returns it
    unchanged. Raises TypeError when ``fn`` takes no window parameter.
    """
    if fn is None or is_wrapped(fn):
        return fn
    if not callable(fn):
        raise TypeError(f"cannot wrap {fn!r}: not callable")
    positions = window_positions(fn)
    if not positions:
        raise TypeError(
            f"cannot wrap {getattr(fn, '__qualname__', fn)!r}: it takes no window_size, "
            "window_size_left or window_size_right parameter")
    sig = inspect.signature(fn)

    if "window_size" in positions and not (
            "window_size_left" in positions or "window_size_right" in positions):
        wrapper = _pair_wrapper(fn, positions["window_size"])
    elif "window_size" not in positions and set(positions) == {"window_size_left",
                                                                "window_size_right"}:
        wrapper = _left_right_wrapper(fn, positions["window_size_left"],
                                      positions["window_size_right"])
    else:
        wrapper = _general_wrapper(fn, positions)

    functools.update_wrapper(wrapper, fn)
    wrapper.__signature__ = sig
    setattr(wrapper, MARKER, True)
    wrapper._fa4_audit_positions = dict(positions)
    return wrapper


def _pair_wrapper(fn, pos):
    """``window_size=(L, R)`` entry points: the hot path of flash_attn(_varlen)_func.

    A 2-tuple of plain ints / None is handled inline (no call at all when nothing is negative,
    which is every genuine window); anything else -- bools, floats, lists, other containers --
    goes through :func:`normalize_window`, which normalises it or raises the TypeError naming
    ``window_size[i]``.
    """
    norm = normalize_window
    tup = tuple
    int_ = int

    def fix(w):
        """The normalised window, or ``w`` itself when nothing changes."""
        if w.__class__ is tup and len(w) == 2:
            a, b = w
            if (a is None or a.__class__ is int_) and (b is None or b.__class__ is int_):
                if (a is not None and a < 0) or (b is not None and b < 0):
                    return (None if a is None or a < 0 else a, None if b is None or b < 0 else b)
                return w
        return norm(w)

    if pos is None:
        def wrapper(*args, **kwargs):
            if "window_size" in kwargs:
                kwargs["window_size"] = fix(kwargs["window_size"])
            return fn(*args, **kwargs)
        return wrapper

    after = pos + 1

    def wrapper(*args, **kwargs):
        if len(args) > pos:
            w = args[pos]
            n = fix(w)
            if n is not w:
                args = args[:pos] + (n,) + args[after:]
        elif "window_size" in kwargs:
            kwargs["window_size"] = fix(kwargs["window_size"])
        return fn(*args, **kwargs)
    return wrapper


def _left_right_wrapper(fn, pos_left, pos_right):
    """``window_size_left=`` / ``window_size_right=``: FA4's ``_flash_attn_fwd/_bwd``.

    Both by keyword (how TE calls them) is one :func:`normalize_pair` call.
    """
    pair = normalize_pair
    positional = [p for p in (pos_left, pos_right) if p is not None]
    first = min(positional) if positional else None
    general = _general_wrapper(fn, {"window_size_left": pos_left,
                                    "window_size_right": pos_right})
    L, R = "window_size_left", "window_size_right"

    int_ = int

    def wrapper(*args, **kwargs):
        if first is not None and len(args) > first:
            return general(*args, **kwargs)
        if L in kwargs:
            if R in kwargs:
                a = kwargs[L]
                b = kwargs[R]
                # plain ints / None inline (TE's own calls); anything else through the rule,
                # which normalises int subclasses or raises the TypeError naming the side
                if (a is None or a.__class__ is int_) and (b is None or b.__class__ is int_):
                    if a is not None and a < 0:
                        kwargs[L] = None
                    if b is not None and b < 0:
                        kwargs[R] = None
                else:
                    kwargs[L], kwargs[R] = pair(a, b)
            else:
                kwargs[L] = pair(kwargs[L], None)[0]
        elif R in kwargs:
            kwargs[R] = pair(None, kwargs[R])[1]
        return fn(*args, **kwargs)
    return wrapper


def _general_wrapper(fn, positions):
    """Any mix of ``window_size`` / ``window_size_left`` / ``window_size_right``."""
    funcs = {"window_size": normalize_window, "window_size_left": _left,
             "window_size_right": _right}
    slots = tuple((name, positions[name], funcs[name]) for name in _WINDOW_NAMES
                  if name in positions)
    first = min((p for _, p, _ in slots if p is not None), default=None)
    kw_slots = tuple((name, f) for name, _, f in slots)

    def wrapper(*args, **kwargs):
        if first is not None and len(args) > first:
            args = list(args)
            n = len(args)
            for name, pos, f in slots:
                if pos is not None and pos < n:
                    args[pos] = f(args[pos])
                elif name in kwargs:
                    kwargs[name] = f(kwargs[name])
        elif kwargs:
            for name, f in kw_slots:
                if name in kwargs:
                    kwargs[name] = f(kwargs[name])
        return fn(*args, **kwargs)

    return wrapper
