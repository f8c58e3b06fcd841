"""``wrap(fn)``: an FA4 entry point that never sees a negative window bound.

The four FA4 entry points TE binds take the window two ways:

* ``flash_attn_func`` / ``flash_attn_varlen_func``: ``window_size=(L, R)``, positional index 7 /
  15 since 4.0.0b9 and 5 / 12 before;
* ``_flash_attn_fwd`` / ``_flash_attn_bwd``: ``window_size_left=``, ``window_size_right=``
  (positions moved between releases too).

The positions are read from ``inspect.signature(fn)`` once, when wrapping, so the same wrapper
is right on every release.

Per-call cost (``python -m fa4_patch.bench`` measures every call form): the ``window_size``
entry points get a wrapper generated with the target's own parameter list, so the caller's
arguments are bound by the interpreter's fast path and forwarded positionally -- no ``*args`` /
``**kwargs`` packing, which is most of what a generic Python wrapper costs. A plain-int pair is
normalised inline; anything else goes through :func:`normalize_window`, which normalises it or
raises the TypeError naming the side. The ``window_size_left/right`` entry points (41-42
parameters, where forwarding every one costs more than packing) keep a ``*args, **kwargs``
wrapper with the plain-int case inline.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import types

from fa4_patch.normalize import normalize_pair, normalize_window

__all__ = ["MARKER", "wrap", "is_wrapped", "window_positions"]

#: Attribute set to True on every wrapper (the codemod's inline ``_fa4_audit_wrap`` sets the
#: same one), so either recognises the other and ``functools.wraps`` layers keep showing it.
MARKER = "_fa4_audit_wrapped"

from fa4_patch.names import WINDOW_KEYS as _WINDOW_NAMES  # noqa: E402  (the one vocabulary)


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
        wrapper = (_generated_wrapper(fn, sig, positions)
                   or _pair_wrapper(fn, positions["window_size"]))
    elif "window_size" not in positions and set(positions) == {"window_size_left",
                                                                "window_size_right"}:
        wrapper = (_generated_wrapper(fn, sig, positions)
                   or _left_right_wrapper(fn, positions["window_size_left"],
                                          positions["window_size_right"]))
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

    By keyword (how TE calls them), each side that is a plain int or None is handled inline;
    anything else goes through :func:`normalize_pair` (int subclasses normalised, other types
    a TypeError naming the side). A window passed by position takes the general path.
    """
    pair = normalize_pair
    positional = [p for p in (pos_left, pos_right) if p is not None]
    first = min(positional) if positional else None
    general = _general_wrapper(fn, {"window_size_left": pos_left,
                                    "window_size_right": pos_right})
    L, R = "window_size_left", "window_size_right"
    int_ = int
    if first is None:
        first = 1 << 30   # keyword-only sides: never by position

    def wrapper(*args, **kwargs):
        if len(args) > first:
            return general(*args, **kwargs)
        if L in kwargs:
            a = kwargs[L]
            if a.__class__ is int_:
                if a < 0:
                    kwargs[L] = None
            elif a is not None:
                kwargs[L] = pair(a, None)[0]
        if R in kwargs:
            b = kwargs[R]
            if b.__class__ is int_:
                if b < 0:
                    kwargs[R] = None
            elif b is not None:
                kwargs[R] = pair(None, b)[1]
        return fn(*args, **kwargs)
    return wrapper


# Names the generated wrapper uses for itself; a target with a parameter spelled like one of
# them (or not a plain identifier) gets the generic wrapper instead.
_GEN_NAMES = frozenset({"_fa4_fn", "_fa4_norm", "_fa4_pair", "_fa4_tuple", "_fa4_list",
                        "_fa4_int", "_fa4_w", "_fa4_a", "_fa4_b", "_fa4_args", "_fa4_kwargs"})
# Up to this many parameters every one is bound and forwarded by name; beyond it only those
# up to the window parameters are, the rest travel as *args/**kwargs (forwarding 40 parameters
# one by one costs more than packing the few a caller passes).
_EXPLICIT_MAX = 24

_PAIR_BODY = """\
    _fa4_w = window_size
    if _fa4_w.__class__ is _fa4_tuple or _fa4_w.__class__ is _fa4_list:
        if len(_fa4_w) == 2:
            _fa4_a, _fa4_b = _fa4_w
            if ((_fa4_a is None or _fa4_a.__class__ is _fa4_int)
                    and (_fa4_b is None or _fa4_b.__class__ is _fa4_int)):
                if (_fa4_a is not None and _fa4_a < 0) or (_fa4_b is not None and _fa4_b < 0):
                    _fa4_a = None if _fa4_a is None or _fa4_a < 0 else _fa4_a
                    _fa4_b = None if _fa4_b is None or _fa4_b < 0 else _fa4_b
                    if _fa4_w.__class__ is _fa4_tuple:
                        window_size = (_fa4_a, _fa4_b)
                    else:
                        window_size = [_fa4_a, _fa4_b]
            else:
                window_size = _fa4_norm(_fa4_w)
        else:
            window_size = _fa4_norm(_fa4_w)
    elif _fa4_w is not None:
        window_size = _fa4_norm(_fa4_w)
"""

_LEFT_RIGHT_BODY = """\
    if window_size_left.__class__ is _fa4_int:
        if window_size_left < 0:
            window_size_left = None
    elif window_size_left is not None:
        window_size_left = _fa4_pair(window_size_left, None)[0]
    if window_size_right.__class__ is _fa4_int:
        if window_size_right < 0:
            window_size_right = None
    elif window_size_right is not None:
        window_size_right = _fa4_pair(None, window_size_right)[1]
"""


def _generated_wrapper(fn, sig, positions):
    """A wrapper whose parameter list is ``fn``'s own (the same default objects), or None
    when ``fn`` is not a plain Python function whose window parameters can be bound by name.

    The interpreter binds the caller's arguments as it would for ``fn`` (the same TypeErrors
    for a bad call); the window is normalised inline (plain ints and None; anything else goes
    through :func:`normalize_window` / :func:`normalize_pair`, which normalise it or raise the
    TypeError naming the side) and everything is passed on. A parameter the caller left out is
    passed as ``fn``'s own default object, so ``fn`` sees what it would have seen. For long
    parameter lists only the parameters up to the window ones are bound by name; the rest travel
    as ``*args`` / ``**kwargs`` in the caller's own order.
    """
    if type(fn) is not types.FunctionType:
        return None
    P = inspect.Parameter
    params = list(sig.parameters.values())
    if any(p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD, P.KEYWORD_ONLY) for p in params):
        return None
    if any(p.name in _GEN_NAMES or not p.name.isidentifier() or keyword.iskeyword(p.name)
           for p in params):
        return None
    code = fn.__code__          # the signature must be fn's real one, not a __signature__ override
    if tuple(p.name for p in params) != code.co_varnames[:code.co_argcount]:
        return None
    if set(positions) == {"window_size"}:
        body = _PAIR_BODY
    elif set(positions) == {"window_size_left", "window_size_right"}:
        body = _LEFT_RIGHT_BODY
    else:
        return None
    if any(positions[n] is None for n in positions):
        return None
    split = len(params)
    if split > _EXPLICIT_MAX:
        split = max(positions.values()) + 1
    ns = {"_fa4_fn": fn, "_fa4_norm": normalize_window, "_fa4_pair": normalize_pair,
          "_fa4_tuple": tuple, "_fa4_list": list, "_fa4_int": int}
    decl, call = [], []
    for i, p in enumerate(params[:split]):
        if p.default is P.empty:
            decl.append(p.name)
        else:
            ns[f"_fa4_d{i}"] = p.default
            decl.append(f"{p.name}=_fa4_d{i}")
        if p.kind is P.POSITIONAL_ONLY and (i + 1 == len(params)
                                            or params[i + 1].kind is not P.POSITIONAL_ONLY):
            decl.append("/")
        call.append(p.name)
    if split < len(params):
        if any(p.kind is P.POSITIONAL_ONLY for p in params[split:]):
            return None
        decl += ["*_fa4_args", "**_fa4_kwargs"]
        call += ["*_fa4_args", "**_fa4_kwargs"]
    name = fn.__name__ if fn.__name__.isidentifier() and fn.__name__ not in ns else "wrapper"
    src = f"def {name}({', '.join(decl)}):\n{body}    return _fa4_fn({', '.join(call)})\n"
    exec(compile(src, f"<fa4_patch.wrap of {fn.__qualname__}>", "exec"), ns)
    wrapper = ns[name]
    wrapper._fa4_audit_source = src
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
