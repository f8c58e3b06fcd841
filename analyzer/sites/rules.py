"""Stable rule ids of the call-site pass, with their docs (ruff's sections).

``docs/sites.md`` renders these (``render.rules_markdown``); a test checks it is not stale.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """A finding code with its docs and its examples (Fixit's shape): every source in
    ``invalid`` must be reported with this code, no source in ``valid`` may be;
    ``tests/test_rules.py`` runs them all, and ``docs/sites.md`` shows the first of each."""

    code: str
    name: str
    level: str          # error (broken => unsafe) | unknown (not proved => unknown) |
                        # note (information) | failure (could not analyse => error)
    summary: str
    what: str
    why: str
    example: str
    use_instead: str
    limitations: str
    invalid: tuple = ()   # more sources that must be reported (``example`` is the first)
    valid: tuple = ()     # more sources that must not be (``use_instead`` is the first)

    @property
    def invalid_examples(self) -> tuple:
        return (self.example,) + tuple(self.invalid)

    @property
    def valid_examples(self) -> tuple:
        return (self.use_instead,) + tuple(self.valid)


RULES: dict[str, Rule] = {}


def _rule(*args, **kw) -> Rule:
    r = Rule(*args, **kw)
    RULES[r.code] = r
    return r


_FA = "from flash_attn.cute.interface import flash_attn_func, _flash_attn_fwd\n"

BROKEN_CALL = _rule(
    "FA4S001", "broken-fa4-call", "error",
    "a call can hand FA4 a window pair that an audited release turns into a wrong band",
    "Reports every call expression that can reach a FlashAttention 4 entry point "
    "(`flash_attn_func`, `flash_attn_varlen_func`, `_flash_attn_fwd`, `_flash_attn_bwd`, "
    "`get_scheduler_metadata`, found by origin: `flash_attn.cute`, a vendored copy, a declared "
    "module) when a (causal, window) pair it can pass -- after whatever wrapper stands between "
    "it and FA4, run in the sandbox -- resolves on some audited release to a band other than "
    "the one the framework means (`-1` and `None` = unbounded side). The message names the "
    "pair, the release and the band.",
    "FA4 spells an unbounded side `None`; TE and FA2/FA3 spell it `-1`. Since FA4 4.0.0b30 "
    "(flash-attention PR #2490) a single negative bound is used literally: TE's causal "
    "`(-1, 0)` becomes an empty key band and the kernel returns all-zero output with no error. "
    "`(-1, -1)` is full attention on every release and is never reported.",
    _FA + "\ndef attn(q, k, v):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
    _FA + "\ndef attn(q, k, v):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n",
    "Values are followed through locals, conditionals, dict literals, subscript stores, "
    "`.update`, `**` merges, lists and `*args` into in-tree helpers, helper returns and "
    "autograd `ctx` round trips. The two sides of one `window_size` tuple stay together; the "
    "left/right keys of one dict are combined as every pair of their values (an "
    "over-approximation: a reported pair may need two branches that never run together).",
    invalid=(
        _FA + "\ndef attn(q, k, v, causal):\n"
        "    kw = {}\n"
        "    kw['window_size_left'] = -1\n"
        "    kw['window_size_right'] = 0 if causal else -1\n"
        "    return _flash_attn_fwd(q, k, v, causal=causal, **kw)\n",
        _FA + "import functools\n\n"
        "def _fix(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def inner(*args, window_size=(None, None), **kwargs):\n"
        "        left, right = window_size\n"
        "        left = None if left is not None and left < 0 else left\n"
        "        return fn(*args, window_size=(left, right), **kwargs)   # right side forgotten\n"
        "    return inner\n\n"
        "attn_fn = _fix(flash_attn_func)\n\n"
        "def attn(q, k, v):\n"
        "    return attn_fn(q, k, v, causal=False, window_size=(-1, -1))\n",
    ),
    valid=(
        _FA + "\ndef attn(q, k, v):\n"
        "    return flash_attn_func(q, k, v, causal=False, window_size=(-1, -1))\n",
        _FA + "\ndef attn(q, k, v, window_size):\n"
        "    left, right = window_size\n"
        "    return flash_attn_func(q, k, v, causal=True,\n"
        "                           window_size=(None if left < 0 else left, 0))\n",
        _FA + "import functools\n\n"
        "def _fix(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def inner(*args, **kwargs):\n"
        "        ws = kwargs.get('window_size')\n"
        "        if ws is not None:\n"
        "            kwargs['window_size'] = tuple(None if x == -1 else x for x in ws)\n"
        "        return fn(*args, **kwargs)\n"
        "    return inner\n\n"
        "attn_fn = _fix(flash_attn_func)\n\n"
        "def attn(q, k, v, causal):\n"
        "    return attn_fn(q, k, v, causal=causal, window_size=(-1, 0) if causal else (-1, -1))\n",
    ))

UNCOVERED_CALL = BROKEN_CALL   # the name of FA4S001 before the three-valued verdict

UNWRAPPED_BINDING = _rule(
    "FA4S002", "unwrapped-fa4-binding", "note",
    "a module-level name holds an FA4 entry point with no behaviour-checked normaliser",
    "Reports every module-level name whose value, after the module has run, is an FA4 entry "
    "point whose wrapping chain was not proved to hand FA4 the intended window in every "
    "form. Names used only as the argument of a wrapping assignment (`x = w(_raw)`) are not "
    "reported. A note: the calls through it carry the verdict (FA4S001/FA4S005).",
    "The binding is the one place where every caller's window can be normalised at once; "
    "FA2 >= 2.7 and FA3 share TE's call sites and need `-1`, so the call sites cannot change. "
    "Code outside the tree that imports this name gets FA4 unnormalised.",
    "try:\n"
    "    from flash_attn.cute.interface import flash_attn_func as flash_attn_func_v4\n"
    "except ImportError:\n"
    "    flash_attn_func_v4 = None\n",
    "from fa4_patch import wrap\n"
    "try:\n"
    "    from flash_attn.cute.interface import flash_attn_func as flash_attn_func_v4\n"
    "except ImportError:\n"
    "    flash_attn_func_v4 = None\n"
    "else:\n"
    "    flash_attn_func_v4 = wrap(flash_attn_func_v4)\n",
    "A module-level name is judged by its value when the module has finished running "
    "(try/except/else and if/else paths joined); rebinding inside functions is judged "
    "flow-insensitively.")

IMPORT_OUTSIDE_BINDING_SITE = _rule(
    "FA4S003", "fa4-import-outside-binding-site", "note",
    "an FA4 entry point is imported inside a function or class, away from the module-level "
    "binding site",
    "Reports an import of an FA4 entry point straight from its origin that is not at module "
    "level (inside a function or class body). A note: the calls it makes carry the verdict.",
    "The fix (and the codemod) wraps the module-level bindings. An import inside a function "
    "binds a fresh, unwrapped entry point each call and bypasses them.",
    "def attn(q, k, v):\n"
    "    from flash_attn.cute import flash_attn_func\n"
    "    return flash_attn_func(q, k, v, causal=True)\n",
    "from flash_attn.cute import flash_attn_func\n\n"
    "def attn(q, k, v):\n"
    "    return flash_attn_func(q, k, v, causal=True)\n",
    "Re-imports of a wrapped binding from another module of the tree "
    "(`from ..backends import _flash_attn_fwd_v4`) are fine and are not reported.")

UNTRUSTED_WRAPPER = _rule(
    "FA4S004", "untrusted-wrapper", "error",
    "a wrapper around an FA4 entry point does not hand FA4 the intended window in every form",
    "Every chain of wrappers around an FA4 entry point is run in the sandbox against a "
    "recording stand-in for FA4, in every form FA4 takes a window (`window_size` tuple, list "
    "or positional; `window_size_left`/`window_size_right` by keyword, alone or positional), "
    "for both `causal` values and every bound class (None, -1, 0, the constants in its code "
    "and their neighbours), and what FA4 receives is judged through each audited resolver. "
    "A chain that is wrong somewhere is reported with its counterexample; one that cannot be "
    "proved (arithmetic on a bound, code that cannot run) is reported with the reason. "
    "Names never matter: a wrapper called `normalize` that drops its result is untrusted, "
    "a correct one with any name is trusted.",
    "A wrapper that misses a form or a bound would make the audit call safe code that still "
    "sends `-1` to FA4. Level: error when it is wrong in a call form the tree's calls use, "
    "unknown when it cannot be proved there, a note when it is wrong only in forms no call "
    "uses (the seed PR's kwargs-dict wrapper does not see positional windows; TE passes "
    "windows by keyword). A wrapper that never changes a window is not reported here: the "
    "binding is unwrapped (FA4S002) and its calls are judged as they are.",
    _FA + "\ndef normalize(fn):\n"
    "    def inner(*args, window_size=(None, None), **kwargs):\n"
    "        fixed = tuple(0 if x is not None and x < 0 else x for x in window_size)  # 0, not None\n"
    "        return fn(*args, window_size=fixed, **kwargs)\n"
    "    return inner\n\n"
    "flash_attn_func = normalize(flash_attn_func)\n\n"
    "def attn(q, k, v):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
    "from fa4_patch import wrap\n" + _FA +
    "\nflash_attn_func = wrap(flash_attn_func)   # any form, any release: checked by running it\n\n"
    "def attn(q, k, v):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
    "Bounds are judged over None and the integers >= -1 (TE's, FA2's and FA3's convention; "
    "TE asserts on other negatives). Layers that cannot be run (`no_torch_dynamo()` needs "
    "torch) are assumed to pass windows through only when their code names no window "
    "parameter. A normaliser that does arithmetic on a bound is never proved.")

UNPROVED_CALL = _rule(
    "FA4S005", "unproved-fa4-call", "unknown",
    "a call reaches FA4 with a window the pass cannot bound, and no checked normaliser",
    "Reports a call that can reach an FA4 entry point when no behaviour-checked wrapper stands "
    "between it and FA4 and some window it can pass cannot be bounded: a parameter fed from "
    "outside what the pass follows, an unknown callee that fills the kwargs, an opaque `**` "
    "splat. The message says what stopped the proof. Unknown is never safe (exit 1).",
    "A value the tree cannot bound may be TE's `(-1, 0)`; only a proof is evidence.",
    _FA + "\ndef attn(q, k, v, window_size):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=window_size)\n",
    "from fa4_patch import wrap\n" + _FA +
    "flash_attn_func = wrap(flash_attn_func)\n\n"
    "def attn(q, k, v, window_size):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=window_size)\n",
    "Bounded values are judged exactly; an unbounded one makes the call unknown unless a "
    "proved wrapper covers it, or its expression normalises it (evaluated in the sandbox "
    "over every value its names can take).",
    invalid=(
        _FA + "\ndef fill(kw):\n    kw.update(external_config())\n\n"
        "def attn(q, k, v):\n"
        "    kw = {}\n"
        "    fill(kw)\n"
        "    return flash_attn_func(q, k, v, causal=True, **kw)\n",
    ))

FA4_ESCAPE = _rule(
    "FA4S006", "fa4-escape", "unknown",
    "an FA4 entry point flows somewhere the pass does not follow",
    "Reports an FA4 entry point (not yet behaviour-checked) stored in an attribute, a dict or "
    "a container the pass does not follow, passed to a callee outside the tree (other than as "
    "the first argument of a wrapping call such as `functools.partial(fa4, ...)`, which is "
    "followed and run), read with `getattr` by a computed name, or bypassed through "
    "`__wrapped__` (its own, or what a checked wrapper around it keeps: `fa.__wrapped__`, "
    "`getattr(fa, \"__wrapped__\")`, `getattr(fa, name)`, `vars(fa)`, `fa.__dict__`, "
    "`fa.__closure__`, `inspect.unwrap(fa)`, `inspect.getclosurevars(fa)`: any special "
    "attribute but its name and docs, also off a module that holds the wrapper). The same holds for an entry point read off a module of the tree that "
    "re-exports FA4 (`pkg.fa.flash_attn_func`, `getattr(pkg.fa, name)`, `pkg.fa.__dict__`) "
    "and for such a module handed on where the pass does not follow it (`hasattr`, "
    "`isinstance` and the like hand nothing on); for FA4 kept as a class attribute; for a "
    "wrapping call (`w(fa4)`, `partial(fa4, ...)`) whose value lands in one of those places or "
    "is dropped after an external callee took it, unless the wrapper is proved; and for "
    "`globals()`/`vars()`/`locals()` in a module whose names hold FA4 (a constant key that is "
    "not one of them, a membership test `\"x\" in globals()`, and `vars()`/`locals()` inside a "
    "function, which are its own names, are fine). "
    "FA4 used as an annotation (kept in `__annotations__`) or passed to a class statement "
    "(`class K(Base, fn=fa4)`), FA4 kept by `functools.wraps(fa4)` in a tree that reads "
    "`__wrapped__` or calls `inspect.unwrap` (outside comments), and any "
    "`gc.get_objects()`/`get_referrers`/`get_referents` in a tree that binds FA4 escape too. "
    "So does a `functools.partial(fa4, ...)` that binds a window FA4 may read as another band "
    "(a negative bound beside another), one the pass cannot read (not a literal or a "
    "module-level name bound to one, read as the call-site rule above says; a `**` splat, a "
    "positional at a window's place) -- unless the partial is over a wrapper proved for the "
    "keyword forms, which normalises whatever it binds: every call through the "
    "partial -- outside the tree too, where none is judged -- passes it; and FA4 returned "
    "beside other values (`return flash_attn_func, kwargs`), which its caller may call it "
    "with. "
    "Calls made through it later cannot be "
    "seen, so the tree is "
    "unknown, never safe.",
    "Calls through an escaped entry point are exactly the ones a spelling-based check misses.",
    _FA + "\nIMPLS = {'fa4': flash_attn_func}\n\n"
    "def attn(q, k, v):\n"
    "    return IMPLS['fa4'](q, k, v, causal=True, window_size=(-1, 0))\n",
    _FA + "import functools\n\n"
    "attn_fn = functools.partial(flash_attn_func, causal=True)   # a wrapping layer: followed\n\n"
    "def attn(q, k, v):\n"
    "    return attn_fn(q, k, v, window_size=(None, 0))\n",
    "Aliases, calls, comparisons, wrapping calls with one argument, in-tree helpers that take "
    "the function as a parameter and lists splatted into them are followed and not reported.",
    invalid=(
        _FA + "\nclass Attn:\n    def __init__(self):\n        self.fn = flash_attn_func\n",
        "import flash_attn.cute.interface as fa4\n\n"
        "def pick(name):\n"
        "    return getattr(fa4, name)\n",
    ))

DYNAMIC_IMPORT = _rule(
    "FA4S007", "dynamic-import", "unknown",
    "a module loaded by a computed name (or FA4 loaded dynamically) makes window calls",
    "Reports `importlib.import_module(...)`, `__import__(...)` and `sys.modules[...]` whose "
    "result is used for a call that can carry a window (a window keyword, a `**` splat, six "
    "or more positional arguments) or escapes, when the module name is not a constant (it "
    "may be FA4), or when it is a constant naming FA4 (calls through it are not followed). "
    "`builtins.__import__` counts as `__import__`. Code run by `exec(...)`/`eval(...)` is "
    "read when it is a constant: its imports are import edges (FA4 among them is reported), "
    "and a call in it that can carry a window is reported; computed code is a computed "
    "import that escapes. A constant naming an in-tree module is an ordinary import edge.",
    "PyTorch's FA4 registration loads FA4 this way and passes TE-style `-1` bounds through.",
    "import importlib\n\n"
    "def load(path, q, k, v):\n"
    "    mod = importlib.import_module(path)\n"
    "    return mod.flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
    "import importlib\n\n"
    "def load(path):\n"
    "    mod = importlib.import_module(path)\n"
    "    return mod.version()\n",
    "Module names built from constants (`'flash_attn' + '.cute'`, f-strings of constants, "
    "module-level string constants) are resolved.",
    invalid=(
        "import importlib\n\n"
        "fa4 = importlib.import_module('flash_attn.cute.interface')\n\n"
        "def attn(q, k, v):\n"
        "    return fa4.flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
    ))

FA4_THROUGH_TORCH = _rule(
    "FA4S008", "fa4-through-torch", "unknown",
    "the tree activates torch's FA4 attention and hands windows to torch's attention ops",
    "Reports a call that hands a window to torch's attention ops (`varlen_attn`, "
    "`_flash_attention_forward/backward`) in a tree that activates torch's FA4 "
    "implementation (`torch.nn.attention.activate_flash_attention_impl('FA4')`).",
    "torch registers FA4 as the aten flash-attention implementation; older torch revisions "
    "pass `window_size_left/right` to FA4 unchanged (torch documents `(-1, 0)` as causal), "
    "newer ones map -1 to None. Whether the window survives depends on the torch release.",
    "from torch.nn.attention import activate_flash_attention_impl\n"
    "from torch.nn.attention.varlen import varlen_attn\n\n"
    "activate_flash_attention_impl('FA4')\n\n"
    "def attn(q, k, v, cu, m):\n"
    "    return varlen_attn(q, k, v, cu, cu, m, m, window_size=(-1, 0))\n",
    "from torch.nn.attention.varlen import varlen_attn\n\n"
    "def attn(q, k, v, cu, m):\n"
    "    return varlen_attn(q, k, v, cu, cu, m, m, window_size=(-1, 0))\n",
    "The torch release is not audited; pin one whose FA4 glue maps -1 to None, or pass None.")

UNPARSEABLE = _rule(
    "FA4S900", "unparseable-file", "failure",
    "a file that can reach FlashAttention could not be read or parsed",
    "Reports a file the import graph could not rule out (it imports, or may import, "
    "FlashAttention) that could not be read or parsed, and any file whose identifiers Python "
    "reads as other names (Unicode normalisation: `ｆlash_attn` is `flash_attn`), which the "
    "pass's byte scans cannot follow. The verdict becomes `error` (exit 2).",
    "Fail closed: the pass never says safe about code it did not see.",
    "from flash_attn.cute import flash_attn_func\ndef f(:\n",
    "from flash_attn.cute import flash_attn_func\ndef f():\n    pass\n",
    "A file that cannot be parsed and provably cannot reach FA4 is skipped silently.")
