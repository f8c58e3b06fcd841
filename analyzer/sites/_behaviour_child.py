"""Child side of ``analyzer.sites.behaviour``: runs extracted tree code against a recording
stand-in for FA4. Started as ``python -I -S this_file`` with a JSON request on stdin; writes
one JSON answer on stdout. Imports nothing of the project unless the request names our own
``fa4_patch`` as a layer (trusted code, run as itself; its behaviour is still checked).

The audited code only ever runs here, after the parent's AST allowlist, with a small builtins
table, an import hook that serves a handful of stdlib modules, and resource limits.
"""

import collections
import json
import sys

# ----------------------------------------------------------------------------- limits

def _limits(cpu_s, mem_mb):
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
        resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
    except Exception:  # pragma: no cover - not on every platform
        pass


class JobTimeout(BaseException):
    """A job ran past its CPU budget (a BaseException: tree code's ``except Exception`` cannot
    swallow it)."""


class Unanalysable(Exception):
    """The code touched something from outside what was extracted. Each one made is counted
    (``RAISED``): a run that ends normally after one was made has caught it (``except
    Exception``, a bare ``except``) and gone on down a path the real code may not take."""

    def __init__(self, *args):
        super().__init__(*args)
        RAISED[0] += 1


RAISED = [0]


def _swallowed(before: int) -> None:
    """Flag a run that ended normally although the sandbox stopped it part way."""
    if RAISED[0] != before:
        FLAGS.add("catches the sandbox's stop (an except around what it cannot run) and goes "
                  "on: the path the real code takes there is not seen")


class _Opaque:
    """A name the extraction could not provide (an import from outside the tree...)."""

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def _stop(self, *a, **k):
        raise Unanalysable(object.__getattribute__(self, "_name"))

    __call__ = __getattr__ = __getitem__ = __iter__ = __bool__ = _stop
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = __ne__ = _stop
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _stop
    __hash__ = object.__hash__


# ----------------------------------------------------------------------------- tracked ints

FLAGS = set()
SEEN = set()


def _note(other):
    if isinstance(other, Bound):
        FLAGS.add("compares the two bounds with each other")
    elif isinstance(other, int) and not isinstance(other, bool):
        SEEN.add(int(other))
    elif isinstance(other, float):
        FLAGS.add("compares a bound with a float")


def _cmp(op):
    base = getattr(int, op)

    def f(self, other):
        _note(other)
        return base(_raw(self), _raw(other) if isinstance(other, Bound) else other)
    return f


def _arith(op):
    base = getattr(int, op)

    def f(self, *other):
        FLAGS.add(f"does arithmetic on a bound ({op.strip('_')})")
        return base(_raw(self), *[_raw(o) if isinstance(o, Bound) else o for o in other])
    return f


class Bound(int):
    """An int that records every constant it is compared with, and flags arithmetic."""

    __lt__ = _cmp("__lt__")
    __le__ = _cmp("__le__")
    __gt__ = _cmp("__gt__")
    __ge__ = _cmp("__ge__")
    __eq__ = _cmp("__eq__")
    __ne__ = _cmp("__ne__")

    def __hash__(self):
        # a set or dict lookup compares the bound only with keys of its own hash: the keys
        # it is looked up among are never seen (``x in {3 * i for i in ...}``), so the grid
        # proves nothing about them
        FLAGS.add("looks a bound up by its hash (a set or dict key, hash()): the keys it is "
                  "looked up among are not seen")
        return int.__hash__(_raw(self))

    def __bool__(self):
        SEEN.add(0)
        return _raw(self) != 0

    def __repr__(self):
        FLAGS.add("converts a bound (repr)")
        return repr(_raw(self))

    # a plain int's own attributes hand back an untracked int (``x.real >> 20``)
    real = property(lambda self: _convert("real")(self))
    numerator = property(lambda self: _convert("numerator")(self))
    imag = property(lambda self: _convert("imag")(self))
    denominator = property(lambda self: _convert("denominator")(self))

    def __getattr__(self, name):
        # only for what a plain int does not have (``hasattr(x, "item")``, ``x.dtype``): the
        # code tells bounds of other types apart (a numpy int, a 0-d tensor), and those take
        # a path no int of the grid takes
        FLAGS.add(f"looks for .{name} on a bound (a plain int has none): a bound of another "
                  "type may take another path")
        raise AttributeError(name)


for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
            "__rfloordiv__", "__mod__", "__rmod__", "__truediv__", "__rtruediv__", "__neg__",
            "__pos__", "__abs__", "__and__", "__or__", "__xor__", "__invert__", "__lshift__",
            "__rshift__", "__pow__", "__rpow__", "__index__"):
    setattr(Bound, _op, _arith(_op))


def _raw(b) -> int:
    """The plain int a Bound holds, without noting a conversion."""
    return int.__index__(b)


def _convert(op):
    base = getattr(int, op)

    def f(self, *a):
        # a bound turned into something the tracking cannot follow (a string, a float, a
        # plain int): what the code then compares it with is not seen, so the grid of
        # constants proves nothing about it
        FLAGS.add(f"converts a bound ({op.strip('_')})")
        if isinstance(base, property) or not callable(base):
            return getattr(_raw(self), op)
        return base(_raw(self), *a)
    return f


for _op in ("__str__", "__format__", "__int__", "__float__", "__complex__", "__round__",
            "__trunc__", "__floor__", "__ceil__", "to_bytes", "bit_length", "bit_count",
            "as_integer_ratio", "conjugate", "__divmod__", "__rdivmod__", "__getnewargs__"):
    if hasattr(int, _op):
        setattr(Bound, _op, _convert(_op))


def _plain(v):
    if isinstance(v, Bound):
        return _raw(v)
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


# ----------------------------------------------------------------------------- namespace

_ALLOWED_MODULES = ("functools", "itertools", "operator", "typing", "math", "warnings",
                    "inspect", "__future__", "collections", "dataclasses", "enum", "abc",
                    "fa4_patch")


class _Warnings:
    def warn(self, *a, **k):
        return None

    def __getattr__(self, name):
        def f(*a, **k):
            return None
        return f


class _Inspect:
    def __init__(self):
        import inspect
        self.signature = inspect.signature
        self.Parameter = inspect.Parameter
        self.Signature = inspect.Signature
        self.isfunction = inspect.isfunction
        self.unwrap = inspect.unwrap


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level:
        raise Unanalysable(f"relative import {name}")
    top = name.split(".")[0]
    if top not in _ALLOWED_MODULES:
        raise Unanalysable(f"import {name}")
    if top == "warnings":
        return _Warnings()
    if top == "inspect":
        return _Inspect()
    import importlib
    return importlib.import_module(name)


def _safe_getattr(obj, name, *default):
    if not isinstance(name, str) or (name.startswith("__") and name not in _DUNDER_OK) \
            or name in _BAD_ATTRS:
        raise Unanalysable(f"getattr {name!r}")
    return getattr(obj, name, *default)


def _safe_setattr(obj, name, value):
    if not isinstance(name, str) or (name.startswith("__") and name not in _DUNDER_OK):
        raise Unanalysable(f"setattr {name!r}")
    return setattr(obj, name, value)


def _safe_hasattr(obj, name):
    try:
        _safe_getattr(obj, name)
        return True
    except AttributeError:
        return False


_DUNDER_OK = ("__wrapped__", "__name__", "__qualname__", "__doc__", "__module__",
              "__signature__", "__class__", "__dict__")
_BAD_ATTRS = ("gi_frame", "gi_code", "f_globals", "f_locals", "f_builtins", "f_back",
              "tb_frame", "cr_frame", "ag_frame", "format", "format_map", "mro")


def _builtins():
    import builtins as b
    names = ("isinstance", "issubclass", "int", "bool", "len", "min", "max", "abs", "tuple",
             "list", "dict", "set", "frozenset", "str", "float", "range", "enumerate", "zip",
             "map", "filter", "any", "all", "sorted", "reversed", "iter", "next", "callable",
             "type", "object", "repr", "hash", "id", "slice", "property", "staticmethod",
             "classmethod", "super", "NotImplemented", "Ellipsis",
             "Exception", "BaseException", "TypeError", "ValueError", "KeyError", "IndexError",
             "AssertionError", "RuntimeError", "NotImplementedError", "AttributeError",
             "StopIteration", "LookupError", "ArithmeticError", "ImportError",
             "ModuleNotFoundError", "Warning", "UserWarning", "DeprecationWarning",
             "RuntimeWarning")
    out = _Builtins({n: getattr(b, n) for n in names})
    out.update(getattr=_safe_getattr, setattr=_safe_setattr, hasattr=_safe_hasattr,
               __import__=_import, __build_class__=b.__build_class__, print=_print)
    return out


class _Builtins(dict):
    """The sandbox's builtins: a real builtin it leaves out (``sum``, ``open``) is the
    sandbox's stop (``Unanalysable``, counted even where the code catches it), not the
    NameError the real program never sees."""

    def __missing__(self, name):
        import builtins as b

        if hasattr(b, name):
            raise Unanalysable(f"the builtin {name}")
        raise KeyError(name)


def _print(*values, sep=" ", end="\n", file=None, flush=False):
    """``print`` as it checks its arguments (``print(end=0)`` raises TypeError, as in the
    tree), writing nowhere."""
    import io

    if file is not None and not hasattr(file, "write"):
        raise AttributeError(f"'{type(file).__name__}' object has no attribute 'write'")
    print(*values, sep=sep, end=end, file=io.StringIO(), flush=flush)


def _namespace(name, sources, opaque, real_name=None):
    ns = {"__builtins__": _builtins(), "__name__": real_name or name}
    for n in opaque:
        ns[n] = _Opaque(n)
    for src in sources:
        exec(compile(src, f"<extracted {name}>", "exec"), ns)
    return ns


# ----------------------------------------------------------------------------- the stand-in

class _Placeholder:
    """A tensor argument: only identity matters. Reading any attribute of it (``q.ndim``,
    ``getattr(q, "dtype", ...)``) makes the run unanalysable: a wrapper whose window handling
    depends on the tensors cannot be proved on stand-ins."""

    def __repr__(self):
        return "<tensor>"

    def __getattr__(self, name):
        raise Unanalysable(f"an attribute of a tensor argument (.{name})")

    # anything else a real tensor answers (its length, its truth, a comparison, arithmetic,
    # iteration, its type's name) is not known either: a TypeError here would read as a form
    # the wrapper does not take and skip the run
    def _unknown(self, *a, **k):
        raise Unanalysable("the value of an argument it cannot know (a tensor, or a keyword "
                           "the call passes that is not a constant): len, bool, comparison, "
                           "arithmetic")

    __len__ = __bool__ = __iter__ = __lt__ = __le__ = __gt__ = __ge__ = _unknown
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _unknown
    __matmul__ = __getitem__ = __contains__ = __index__ = __int__ = __float__ = _unknown

    @property
    def __class__(self):
        # ``isinstance(q, list)`` (a list of sequences, a packed input) asks for it: the
        # tree's tensors may be of any type
        raise Unanalysable("the type of an argument it cannot know (isinstance)")


def _recorder(entry, params, required, log):
    window_keys = [p for p in params if p.startswith("window_size")]
    defaults = {p: None for p in params[required:]}
    if "window_size" in defaults:
        defaults["window_size"] = (None, None)
    if "causal" in defaults:
        defaults["causal"] = False
    src = "def {}({}):\n    return __log__(locals())\n".format(
        entry, ", ".join(p if i < required else f"{p}=__d__[{p!r}]"
                         for i, p in enumerate(params)))
    ns = {"__d__": defaults, "__log__": None}

    def note(loc):
        log.append({k: loc.get(k) for k in window_keys + ["causal"]})
        return RESULT

    ns["__log__"] = note
    exec(src, ns)
    real = ns[entry]
    import inspect
    sig = inspect.signature(real)

    def fa4(*args, **kwargs):
        # Python binds the arguments to ``real``'s own signature (FA4's parameters); a
        # TypeError can only come from that binding: ``real``'s body is ``note`` above
        try:
            out = real(*args, **kwargs)
        except TypeError as exc:
            raise Rejected(str(exc)) from None
        if len(log) <= FAIL_FIRST[0]:
            raise (FAIL_TYPE[0] or InjectedFailure)(FAIL_TEXT[0])
        return out

    fa4.__name__ = fa4.__qualname__ = entry
    # what the real entry point says about itself: a wrapper that looks (``fn.__module__``)
    # must not be able to tell the stand-in from FA4
    fa4.__module__ = "flash_attn.cute.interface"
    fa4.__signature__ = sig
    return fa4


class InjectedFailure(NotImplementedError, TypeError, KeyError, IndexError, ZeroDivisionError,
                      OverflowError, AssertionError, AttributeError, ValueError):
    """FA4 raising, as a real kernel can (an unsupported shape, out of memory, a rejected
    window): what a wrapper does next -- retry with the raw window, fall back -- is part of its
    behaviour. It is an instance of every common exception type (a handler for any of them
    catches it) and its message names the window (a handler that reads it sees one)."""

    def __str__(self):
        return FAIL_TEXT[0]


# the phrases a wrapper's handler may look for before it retries (out of memory, a CUDA
# error, an unsupported window); also the failure's ``args[0]`` and in its ``repr``
class _FailureText(str):
    """The message of an injected failure (``str(exc)``, ``exc.args[0]``, in its ``repr``).
    A membership test on it (``"out of memory" in msg``) is explored both ways: the runs are
    made with this text alone and with every string the wrapper's code holds added
    (``MESSAGE_WORDS``). Any other reading of it (``msg.startswith(...)``, ``==``, an index)
    may take a path that depends on what FA4 really says, which the runs cannot know: a flag
    (no proof), never a path taken silently."""

    def _read(self):
        FLAGS.add("reads the message of FA4's error other than by a membership test: the "
                  "path it takes may depend on what FA4 says, which the runs cannot know")

    def __str__(self):
        return self

    def __format__(self, spec):
        return self if not spec else str.__format__(self, spec)


def _reading(name):
    def method(self, *a, **k):
        self._read()
        return getattr(str, name)(self, *a, **k)
    method.__name__ = name
    return method


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__",
              "__iter__", "__len__", "__add__", "__radd__", "__mod__", "__mul__", "startswith",
              "endswith", "find", "rfind", "index", "rindex", "count", "split", "rsplit",
              "partition", "rpartition", "lower", "upper", "casefold", "strip", "lstrip",
              "rstrip", "splitlines", "replace", "encode", "format", "join", "isdigit"):
    setattr(_FailureText, _name, _reading(_name))


_BASE_TEXT = ("FA4 failed (injected by the audit): CUDA out of memory / CUDA error: illegal "
              "memory access / window_size / window_size_left not supported")
_FAILURE_TEXT = _FailureText(_BASE_TEXT)
# the strings the wrapper's code holds (``job["message_words"]``): the second text of the runs
MESSAGE_WORDS = [()]


# how many of the first calls fail (0: none), and as what (None: ``InjectedFailure``), with
# which message
FAIL_FIRST = [0]
FAIL_TEXT = [_FAILURE_TEXT]
FAIL_TYPE = [None]


class _Result:
    """What the stand-in returns: FA4's output, which the runs do not know (real FA4 returns
    ``(out, lse)``, ``lse`` None or not as the call asks). A wrapper that looks at it
    (``res[1] is None``, ``len(res)``, unpacking it) before it returns it cannot be proved
    on the runs: any use but handing it back is the sandbox's stop."""

    def _stop(self, *a, **k):
        raise Unanalysable("FA4's result (its items, length or truth)")

    __getitem__ = __iter__ = __len__ = __bool__ = __contains__ = __getattr__ = _stop
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _stop
    __add__ = __radd__ = __mul__ = __rmul__ = __index__ = __int__ = __float__ = _stop
    __hash__ = object.__hash__

    def __repr__(self):
        return "<FA4's result>"


RESULT = _Result()


class Rejected(Exception):
    """FA4 itself refuses the arguments it was handed (an unknown keyword, too many)."""


def _shaped(forms, params, shape):
    """The forms again, shaped like one call of the tree: as many positional arguments as it
    passes, and its other keyword arguments (a constant as written, anything else a stand-in
    value that may not be looked at). A wrapper may branch on them (``len(kwargs)``)."""
    if not shape:
        return forms
    npos, extra, outside, order = shape
    out = []
    if npos is None:
        # every order of each form's keywords (at most three: causal and the window's)
        import itertools

        for form, args, kwargs in forms:
            for keys in list(itertools.permutations(kwargs))[1:]:
                out.append((f"{form}, keywords in the order {', '.join(keys)}" + OUTSIDE,
                            args, {k: kwargs[k] for k in keys}))
        return out
    splat = (SPLAT, VALUE) in extra
    # how the call passes ``causal``: absent (FA4's default) or a constant (None, 1, 0 are
    # read as their truth); a wrapper may branch on either (``"causal" in kwargs``)
    given = [v for k, v in extra if k == CAUSAL]
    extra = [kv for kv in extra if kv[0] not in (SPLAT, CAUSAL)]
    # a ``**`` splat may carry any keyword the wrapper names: each such keyword as a value
    # that may not be looked at, and as True, False and None, beside the call without them
    fills = [None] + ([_Placeholder, True, False, None] if splat and SPLAT_KEYS[0] else [])
    for form, args, kwargs in forms:
        if form.startswith("positional") and not extra and not splat:
            continue            # the window's position fixes the count: the base form itself
        if not form.startswith("positional") and npos > len(args):
            # an optional parameter given by position: its value is not known (None, FA4's
            # usual default, rather than a tensor stand-in)
            args = list(args) + [None] * (npos - len(args))
        by_name = {}
        named = dict(extra)
        if not form.startswith("positional") and npos < len(args) and \
                all(p in named for p in params[npos:len(args)]):
            # the tensors by keyword (``q=query, k=key, v=value``): stand-ins by those names
            by_name = {p: args[i] for i, p in enumerate(params) if npos <= i < len(args)}
            args = list(args[:npos])
        note = ""
        if given and "causal" in kwargs and \
                ("causal" not in params or params.index("causal") >= len(args)):
            # run once, under the band the call means: FA4's default (False) where it passes
            # none, the constant's truth where it passes one
            meant = False if given[0] == ABSENT else bool(given[0])
            if kwargs["causal"] is not meant:
                continue
            kwargs = dict(kwargs)
            if given[0] == ABSENT:
                del kwargs["causal"]
                note = ", no causal"
            else:
                kwargs["causal"] = given[0]
                note = f", causal={given[0]!r}"
        if by_name:
            note += ", tensors by keyword"
        taken = set(params[:len(args)]) | set(kwargs) | set(by_name)
        more = {k: (_Placeholder() if v == VALUE else v) for k, v in extra if k not in taken}
        for i, fill in enumerate(fills):
            label = f"{form} + {npos} positional" + note + \
                (f", {', '.join(sorted(more))}=" if more else "")
            got = dict(more)
            spl = {}
            if i:
                # (only FA4's own parameters: any other keyword reaching it is a loud crash)
                spl = {k: (fill() if fill is _Placeholder else fill) for k in SPLAT_KEYS[0]
                       if k in params and k not in taken and k not in more}
                if not spl:
                    continue
                got.update(spl)
                label += (f", {', '.join(sorted(spl))}="
                          f"{'<value>' if fill is _Placeholder else fill} from a ** splat")
            kw = {**by_name, **kwargs, **got}
            if order:
                # the keywords in the order the call writes them (a wrapper may read it), what
                # a splat carries where the splat stands
                placed = {}
                for k in order:
                    if k == "**":
                        placed.update({s: kw[s] for s in spl if s in kw})
                    elif k in kw:
                        placed[k] = kw[k]
                kw = {**placed, **kw}
                if list(kw) != list({**by_name, **kwargs, **got}):
                    label += f", keywords in the order {', '.join(kw)}"
            out.append((label + (OUTSIDE if outside else ""), args, kw))
    return out


# a form a caller outside the tree may use: one that fails (a TypeError, FA4 refusing it) is
# a loud crash, never a silent band, and is left out; only what reaches FA4 is judged
OUTSIDE = " [a caller outside the tree]"
# a keyword argument of a call that is not a constant (the parent's ``verdicts.VALUE``; this
# script runs isolated, without the package on its path)
VALUE = "\0<value>"


# a form whose tensors are not the usual fresh stand-ins: one that fails is left out, like an
# outside caller's (a wrapper that needs real tensors there crashes loudly)
LOOSE = " [other tensors]"


def _forms(entry, params, required, L, R, causal, shapes=()):
    """(form name, args, kwargs) for each way a call can hand FA4 the window, as FA4's
    signature alone gives it and shaped like each call of the tree (``_shaped``). The keyword
    forms are also run with the tensors one and the same object (self-attention: ``q is k``,
    ``id(q) == id(k)``) and with the tensors after the first None (packed inputs: ``k is
    None``): a wrapper may take another path there."""
    base = _base_forms(entry, params, required, L, R, causal)
    out = list(base)
    if required > 1 and TENSOR_VARIANTS[0]:
        same = _Placeholder()
        for form, args, kwargs in base:
            if form.startswith("positional") or len(args) != required:
                continue
            out.append((f"{form}, one tensor object for all" + LOOSE, [same] * required, kwargs))
            out.append((f"{form}, tensors after the first None" + LOOSE,
                        [args[0]] + [None] * (required - 1), kwargs))
    for shape in shapes:
        out.extend(_shaped(base, params, shape))
    return out


def _base_forms(entry, params, required, L, R, causal):
    req = [_Placeholder() for _ in range(required)]
    out = []
    if L is None and R is None:
        out.append(("no window passed", req, {"causal": causal}))
    if "window_size" in params:
        out.append(("window_size=(L, R)", req, {"causal": causal, "window_size": (L, R)}))
        out.append(("window_size=[L, R]", req, {"causal": causal, "window_size": [L, R]}))
        if SEQUENCES[0]:
            # a window built by a call the flow cannot type: FA4 indexes whatever it gets
            out.append(("window_size=<namedtuple>(L, R)", req,
                        {"causal": causal, "window_size": _Window(L, R)}))
            out.append(("window_size=<sequence>(L, R)", req,
                        {"causal": causal, "window_size": _Sequence(L, R)}))
        i = params.index("window_size")
        ci = params.index("causal") if "causal" in params else None
        args = list(req) + [None] * (i + 1 - required)
        args[i] = (L, R)
        kw = {}
        if ci is not None and ci < i:
            args[ci] = causal
        else:
            kw["causal"] = causal
        out.append(("positional window_size", args, kw))
    else:
        both = {"causal": causal, "window_size_left": L, "window_size_right": R}
        out.append(("window_size_left=, window_size_right=", req, both))
        if R is None:
            out.append(("window_size_left= only", req, {"causal": causal, "window_size_left": L}))
        if L is None:
            out.append(("window_size_right= only", req, {"causal": causal, "window_size_right": R}))
        il, ir = params.index("window_size_left"), params.index("window_size_right")
        ci = params.index("causal") if "causal" in params else None
        args = list(req) + [None] * (max(il, ir) + 1 - required)
        args[il], args[ir] = L, R
        kw = {}
        if ci is not None and ci < max(il, ir):
            args[ci] = causal
        else:
            kw["causal"] = causal
        out.append(("positional window_size_left/right", args, kw))
    return out


# set per job: whether the forms also pass ``window_size`` as another sequence; the keywords
# the wrapper's code names, which a call's ``**`` splat may carry
SEQUENCES = [False]
SPLAT_KEYS = [()]
# whether the chain has code of the tree that may look at the tensors (a chain of no wrapper,
# or of this project's trusted fa4_patch only, hands them to FA4 untouched)
TENSOR_VARIANTS = [True]
SPLAT = "\0**"          # a call's ``**`` splat in a shape's keywords (``verdicts.call_shape``)
CAUSAL = "\0causal"     # how the call passes ``causal`` in a shape's keywords
ABSENT = "\0absent"     # ... not at all


_Window = collections.namedtuple("Window", ["left", "right"])


class _Sequence:
    """A sequence that is neither a tuple nor a list (a ``range``, a class of the tree)."""

    def __init__(self, *items):
        self._items = items

    def __getitem__(self, i):
        return self._items[i]

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __repr__(self):
        return f"<sequence {self._items!r}>"


def _received(rec, entry):
    if "window_size" in rec:
        w = rec["window_size"]
        if w is None:
            return None, None, None
        if isinstance(w, _Sequence):
            # FA4 reads ``window_size[0]`` and ``window_size[1]``
            return w[0], w[1], None
        if not isinstance(w, (tuple, list)) or len(w) != 2:
            return None, None, f"FA4 received window_size={_show(w)}, not a pair"
        return w[0], w[1], None
    return rec.get("window_size_left"), rec.get("window_size_right"), None


def _what_fa4_got(call, entry, after=""):
    """(what FA4 received in ``call`` as [left, right, causal], "") or (None, why it is no
    window pair FA4 takes). ``after``: how the message begins for a call made after FA4
    failed."""
    wl, wr, why = _received(call, entry)
    if why:
        return None, f"{after}: {why}" if after else why
    if not (_side_ok(_plain(wl)) and _side_ok(_plain(wr))):
        return None, ((f"{after}, it received" if after else "FA4 received") +
                      f" a bound that is not an int or None: {_show(wl)}, {_show(wr)}")
    return [_plain(wl), _plain(wr), bool(call.get("causal"))], ""


def _show(v):
    try:
        return repr(_plain(v))
    except Exception:
        return "<unprintable>"


def _jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    if isinstance(v, (tuple, list)):
        return all(_jsonable(x) for x in v)
    return False


def _side_ok(v):
    return v is None or (isinstance(v, int) and not isinstance(v, bool))


def _build_callable(job, log, entry, params, required, assumed):
    fa4 = _recorder(entry, params, required, log)
    v = fa4
    for layer in job["layers"]:
        if layer.get("trusted_fa4_patch"):
            import fa4_patch
            ns = {"fa4_patch": fa4_patch, "X": v}
            v = eval(layer["template"], ns)
            continue
        ns = _NS.get(layer["module"])
        if ns is None:
            if layer.get("skippable"):
                assumed.append(layer["label"])
                continue
            raise Unanalysable(f"the code of {layer['label']}")
        ns["__fa4_inner__"] = v
        if layer.get("bind"):
            ns[layer["bind"]] = v
        try:
            v = eval(layer["template"], ns)
        except Unanalysable:
            if not layer.get("skippable"):
                raise
            assumed.append(layer["label"])
    return v


def run_chain(job):
    entry, params, required = job["entry"], job["params"], job["required"]
    # (positional count, other keywords, an outside caller's, the call's keyword order)
    shapes = []
    for sh in job.get("shapes", ()):
        outside = len(sh) > 2 and sh[2] == "outside"
        order = tuple(sh[2]) if len(sh) > 2 and not outside else ()
        shapes.append((sh[0], [tuple(kv) for kv in sh[1]], outside, order))
    if job.get("orders"):
        # the wrapper may read the order of its keywords: a caller outside the tree may pass
        # FA4's own forms in any order
        shapes.append((None, [], True, None))
    own_shapes = [sh for sh in shapes if not sh[2]]
    SEQUENCES[0] = bool(job.get("sequences"))
    TENSOR_VARIANTS[0] = any(not l.get("trusted_fa4_patch") for l in job.get("layers", ()))
    SPLAT_KEYS[0] = tuple(job.get("splat_keys", ()))
    MESSAGE_WORDS[0] = tuple(job.get("message_words", ()))
    if job.get("regex") and job.get("caught"):
        FLAGS.add("matches text with a regular expression and catches FA4's failures: a path "
                  "chosen by the words of FA4's message is not seen")
    grid = job["grid"]
    out = {"results": [], "seen": [], "flags": [], "error": None, "assumed": []}
    log = []
    try:
        fn = _build_callable(job, log, entry, params, required, out["assumed"])
    except Unanalysable as exc:
        out["error"] = f"unknown: building the wrapper touches {exc}"
        return out
    except Exception as exc:
        out["error"] = f"building the wrapper raised {type(exc).__name__}: {exc}"
        return out
    for layer in job["layers"]:
        if layer.get("module") in _CAUGHT_AT_IMPORT:
            FLAGS.add(f"the top level of {layer['module']} catches the sandbox's stop and "
                      "goes on: what it binds there may differ in the tree")
    square = [(L, R) for L in grid for R in grid]
    # TE's causal (-1, 0) first: a wrapper whose first call differs from the later ones
    # (lazy set-up, an iterator made once) shows it on the pair that matters most
    square.sort(key=lambda p: p != (-1, 0))
    firsts: dict = {}       # (form, L, R, causal) -> what FA4 got on the tracked pass
    for tracked in (True, False):
        # untracked, also each side over every power of two and of ten beside the other
        # side's None, -1 and 0: a threshold the tracking cannot see (a bound handed to
        # ``range``, a slice or ``math.gcd``, which read an int without comparing it) is
        # crossed by some size
        for L, R in (square if tracked or not job.get("scan") else square + _scan_pairs(grid)):
            # a wrapper that tests ``causal`` itself is also run with the other values a
            # tree may pass for it (None, 1, 0): FA4 reads them as their truth
            for causal in ((True, False) if tracked or not job.get("causal_values")
                           else (True, False, None, 1, 0)):
                lv = Bound(L) if (tracked and L is not None) else L
                rv = Bound(R) if (tracked and R is not None) else R
                # an outside caller's shapes are run once, untracked: the constants and
                # flags a wrapper shows are read off the tree's own forms
                for form, args, kwargs in _forms(entry, params, required, lv, rv, causal,
                                                 shapes if not tracked else own_shapes):
                    del log[:]
                    res = {"form": form, "L": L, "R": R, "causal": causal,
                           "tracked": tracked}
                    before = RAISED[0]
                    try:
                        ret = fn(*args, **kwargs)
                        _swallowed(before)
                    except Unanalysable as exc:
                        res["error"] = f"unknown: touches {exc}"
                    except Rejected as exc:
                        res["error"] = f"FA4 rejects what the wrapper hands it: {exc}"
                    except (MemoryError, RecursionError) as exc:
                        # the sandbox's limits, not the wrapper's answer: no proof either way
                        res["error"] = f"unknown: hit the sandbox's limits ({type(exc).__name__})"
                    except TypeError as exc:
                        if log:
                            res["error"] = f"raised TypeError: {exc}"
                        else:
                            # the wrapper's own signature does not take this form: no
                            # window can be passed this way (a crash, never a silent band)
                            res["skip"] = f"not accepted: {exc}"
                    except Exception as exc:
                        res["error"] = f"raised {type(exc).__name__}: {exc}"
                    else:
                        if len(log) != 1:
                            res["error"] = (f"FA4 was called {len(log)} times"
                                            if log else "FA4 was never called")
                        elif ret is not RESULT:
                            res["error"] = "the wrapper did not return FA4's result"
                        else:
                            got, why = _what_fa4_got(log[0], entry)
                            res.update({"got": got} if got is not None else {"error": why})
                    if "error" in res and (form.endswith(OUTSIDE) or form.endswith(LOOSE)):
                        res["skip"] = res.pop("error")
                    if not tracked and "skip" not in res:
                        out["results"].append(res)
                        first = firsts.get((form, L, R, causal))
                        if first is not None and first != res.get("got"):
                            # the first calls (the tracked pass runs first) gave FA4 another
                            # window than later ones: state kept between calls
                            FLAGS.add(f"its first calls hand FA4 another window than later "
                                      f"ones ({form}, ({_show(L)}, {_show(R)}), causal={causal}: "
                                      f"{first} first, {res.get('got')} later): state kept "
                                      "between calls")
                    elif tracked and "got" in res:
                        firsts.setdefault((form, L, R, causal), res["got"])
    if job.get("recovers"):
        _after_failure(fn, log, entry, params, required, grid, out, shapes,
                       job.get("caught", ()))
    out["seen"] = sorted(SEEN)
    out["flags"] = sorted(FLAGS)
    return out


_SCAN = sorted({2 ** k for k in range(1, 63)} | {10 ** k for k in range(1, 19)})


def _scan_pairs(grid) -> list:
    seen = set(grid)
    out = []
    for p in _SCAN:
        if p in seen:
            continue
        for other in (None, -1, 0):
            out += [(p, other), (other, p)]
    return out


def _after_failure(fn, log, entry, params, required, grid, out, shapes=(), caught=()):
    """The same calls with FA4 failing the first time, the first two times, and so on while
    the wrapper still calls it after the last failure (a ladder of retries, up to
    ``MAX_LADDER``; deeper is a flag), as ``InjectedFailure`` and as each exception class
    the wrapper's handlers name (``caught``): every call the wrapper makes after a failure it
    catches is judged like a first call (a retry with the raw window is a silent wrong band);
    re-raising, or giving up without calling FA4 again, is no band at all."""
    import builtins

    kinds = [None]
    for name in caught:
        cls = getattr(builtins, name, None)
        for ns in _NS.values():
            if cls is None and ns is not None and isinstance(ns.get(name), type):
                cls = ns[name]          # an exception class of the wrapper's module
        if isinstance(cls, type) and issubclass(cls, BaseException) and \
                not issubclass(InjectedFailure, cls):
            kinds.append(cls)
        elif cls is None:
            FLAGS.add(f"a handler catches {name}, which the runs cannot raise as FA4")
    texts = [_FAILURE_TEXT]
    if MESSAGE_WORDS[0]:
        texts.append(_FailureText(_BASE_TEXT + " / " + " / ".join(MESSAGE_WORDS[0])))
    try:
        for kind, text in [(k, t) for t in texts for k in kinds]:
            FAIL_TYPE[0] = kind
            FAIL_TEXT[0] = text
            # one more failure each round while some run still calls FA4 after the last
            # one it was given (a ladder of retries may reach other code at any depth)
            for fails in range(1, MAX_LADDER + 1):
                FAIL_FIRST[0] = fails
                most = _failing_runs(fn, log, entry, params, required, grid, out, shapes,
                                     fails)
                if most <= fails:
                    break
            else:
                FLAGS.add(f"calls FA4 again after it failed {MAX_LADDER} times in a row: "
                          "what a longer ladder of retries hands it is not seen")
    finally:
        FAIL_FIRST[0] = 0
        FAIL_TYPE[0] = None
        FAIL_TEXT[0] = _FAILURE_TEXT


MAX_LADDER = 12


def _failing_runs(fn, log, entry, params, required, grid, out, shapes, fails) -> int:
    """The runs with FA4 failing its first ``fails`` calls; returns the most calls of FA4
    one run made."""
    what = "once" if fails == 1 else f"{fails} times"
    most = 0
    for L in grid:
        for R in grid:
            for causal in (True, False):
                for form, args, kwargs in _forms(entry, params, required, L, R, causal,
                                                 shapes):
                    if form.endswith(OUTSIDE) or form.endswith(LOOSE):
                        continue        # judged without the failure (``run_chain``)
                    del log[:]
                    try:
                        try:
                            fn(*args, **kwargs)
                        finally:
                            most = max(most, len(log))
                    except Unanalysable as exc:
                        out["results"].append({"form": form, "L": L, "R": R,
                                               "causal": causal, "tracked": False,
                                               "error": f"unknown: touches {exc}"})
                        continue
                    except (MemoryError, RecursionError) as exc:
                        out["results"].append({
                            "form": form, "L": L, "R": R, "causal": causal,
                            "tracked": False,
                            "error": f"unknown: hit the sandbox's limits ({type(exc).__name__})"})
                        continue
                    except BaseException:
                        continue          # the failure reaches the caller: loud
                    for call in log[1:]:
                        res = {"form": form, "L": L, "R": R, "causal": causal,
                               "tracked": False, "retry": True}
                        got, why = _what_fa4_got(call, entry, f"after FA4 failed {what}")
                        res.update({"got": got} if got is not None else {"error": why})
                        out["results"].append(res)
    return most


def _values(kind, grid):
    if isinstance(kind, list):          # the constants the flow found for this name
        return [tuple(v) if isinstance(v, list) else v for v in kind]
    if kind == "any":
        return _values("bound", grid) + _values("window", grid)
    if kind == "bound":
        return [None] + [g for g in grid if g is not None]
    if kind == "wide":
        # a value the window convention (None, ints >= -1) does not cover: the tree may
        # store any int there (``sliding_window - 1``, a literal -2)
        return _values("bound", grid) + [-2, -(2 ** 31)]
    if kind == "wide-window":
        b = _values("wide", grid)
        return [(x, y) for x in b for y in b]
    if kind == "window":
        b = [None] + [g for g in grid if g is not None]
        return [(x, y) for x in b for y in b]
    if kind == "bool":
        return [True, False]
    raise Unanalysable(f"value kind {kind}")


def run_expr(job):
    import itertools
    ns = _NS[job["module"]]
    names = sorted(job["free"])
    grid = job["grid"]
    out = {"results": [], "seen": [], "flags": [], "error": None}
    code = compile(job["expr"], "<window expression>", "eval")
    for tracked in (True, False):
        domains = [_values(job["free"][n], grid) for n in names]
        for combo in itertools.product(*domains):
            local = {}
            for n, v in zip(names, combo):
                if tracked:
                    if isinstance(v, tuple):
                        v = tuple(Bound(x) if x is not None else x for x in v)
                    elif isinstance(v, int) and not isinstance(v, bool):
                        v = Bound(v)
                local[n] = v
            res = {"inputs": {n: _plain(local[n]) for n in names}}
            before = RAISED[0]
            try:
                val = eval(code, ns, local)
                _swallowed(before)
            except Unanalysable as exc:
                res["error"] = f"unknown: touches {exc}"
            except (MemoryError, RecursionError) as exc:
                res["error"] = f"unknown: hit the sandbox's limits ({type(exc).__name__})"
            except (TypeError, ValueError) as exc:
                # this input is not one the code takes (None where it compares, a pair where it
                # wants a bound): the call would fail loudly, never hand FA4 a silent band
                res["skip"] = f"{type(exc).__name__}: {exc}"
            except Exception as exc:
                res["error"] = f"raised {type(exc).__name__}: {exc}"
            else:
                val = _plain(val)
                if isinstance(val, list):
                    val = tuple(val)
                if not _jsonable(val):
                    res["error"] = f"unknown: evaluates to {type(val).__name__}"
                else:
                    res["value"] = val
            if not tracked and "skip" not in res:
                out["results"].append(res)
            elif not tracked:
                out["skipped"] = out.get("skipped", 0) + 1
    out["seen"] = sorted(SEEN)
    out["flags"] = sorted(FLAGS)
    return out


_NS = {}
_CAUGHT_AT_IMPORT = set()     # modules whose top level caught the sandbox's stop


def _arm(seconds):
    """A per-job CPU budget (ITIMER_VIRTUAL): one looping wrapper makes its own chain unknown
    instead of taking the whole batch down."""
    try:
        import signal

        def stop(*_):
            raise JobTimeout()

        signal.signal(signal.SIGVTALRM, stop)
        signal.setitimer(signal.ITIMER_VIRTUAL, float(seconds))
    except (ImportError, AttributeError, ValueError, OSError):
        pass


def _read_request():
    """``FA4-REQ <n>`` then n characters of JSON (the parent may start this process before it
    knows the request, and other processes may hold the pipe open: no EOF is needed), or the
    whole of stdin as JSON."""
    head = sys.stdin.readline()
    if head.startswith("FA4-REQ "):
        return json.loads(sys.stdin.read(int(head.split()[1])))
    return json.loads(head + sys.stdin.read())


def main():
    req = _read_request()
    _limits(req.get("cpu_s", 20), req.get("mem_mb", 1024))
    for p in req.get("trusted_path", []):
        sys.path.insert(0, p)
    answers = []
    for mod in req["modules"]:
        before = RAISED[0]
        try:
            _NS[mod["name"]] = _namespace(mod["name"], mod["sources"], mod.get("opaque", ()),
                                          mod.get("real_name"))
            if RAISED[0] != before:
                # its code ran on after catching the sandbox's stop (``_LEGACY = _probe()``
                # around a builtin the sandbox leaves out): its names may differ in the tree
                _CAUGHT_AT_IMPORT.add(mod["name"])
        except Unanalysable as exc:
            _NS[mod["name"]] = None
            answers.append({"module": mod["name"], "error": f"unknown: module code touches {exc}"})
        except Exception as exc:
            _NS[mod["name"]] = None
            answers.append({"module": mod["name"],
                            "error": f"running the extracted code raised {type(exc).__name__}: {exc}"})
    out = []
    for job in req["jobs"]:
        SEEN.clear()
        FLAGS.clear()
        mods = [l["module"] for l in job.get("layers", [])
                if l.get("module") and not l.get("skippable")]
        if "module" in job:
            mods.append(job["module"])
        bad = [m for m in mods if _NS.get(m) is None]
        if bad:
            err = next((a["error"] for a in answers if a.get("module") in bad),
                       f"module {bad[0]} not extracted")
            out.append({"results": [], "seen": [], "flags": [], "error": err})
            continue
        _arm(req.get("job_cpu_s", 8))
        try:
            out.append(run_chain(job) if job["kind"] == "chain" else run_expr(job))
        except RecursionError:
            out.append({"results": [], "seen": [], "flags": [], "error": "unknown: recursion limit"})
        except Unanalysable as exc:
            # what FA4 received holds a value the extraction could not provide (a partial's
            # keyword bound to a parameter of the function that made it): reading it stops
            # the job, never the whole sandbox
            out.append({"results": [], "seen": [], "flags": [],
                        "error": f"unknown: what reaches FA4 touches {exc}"})
        except JobTimeout:
            out.append({"results": [], "seen": [], "flags": [],
                        "error": "unknown: the code ran past its CPU budget in the sandbox"})
        finally:
            _arm(0)
    sys.stdout.write(json.dumps({"jobs": out}, default=lambda o: f"<{type(o).__name__}>"))


if __name__ == "__main__":
    main()
