"""Stable rule ids of the call-site pass, with their docs (ruff's sections).

``docs/sites.md`` renders these (``render.rules_markdown``); a test checks it is not stale.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    level: str          # error (finding => unsafe) | failure (could not analyse => error)
    summary: str
    what: str
    why: str
    example: str
    use_instead: str
    limitations: str


RULES: dict[str, Rule] = {}


def _rule(*args) -> Rule:
    r = Rule(*args)
    RULES[r.code] = r
    return r


UNCOVERED_CALL = _rule(
    "FA4S001", "uncovered-fa4-call", "error",
    "a call that can reach an FA4 entry point gets a window nobody normalises",
    "Reports every call expression that can reach a FlashAttention 4 entry point "
    "(`flash_attn_func`, `flash_attn_varlen_func`, `_flash_attn_fwd`, `_flash_attn_bwd`, "
    "`get_scheduler_metadata` of `flash_attn.cute[.interface]`) unless every FA4 binding it "
    "can reach is wrapped by a trusted normaliser, or every window value that reaches it is "
    "provably `None` or a non-negative int.",
    "FA4 spells an unbounded side `None`; TE and FA2/FA3 spell it `-1`. Since FA4 4.0.0b30 "
    "(flash-attention PR #2490) a negative bound is used literally: TE's causal `(-1, 0)` "
    "becomes an empty key band and the kernel returns all-zero output with no error.",
    "from flash_attn.cute import flash_attn_func\n\n"
    "def attn(q, k, v):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))",
    "from flash_attn.cute import flash_attn_func\n"
    "from fa4_patch import wrap\n\n"
    "flash_attn_func = wrap(flash_attn_func)   # negative bounds -> None\n\n"
    "def attn(q, k, v):\n"
    "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))",
    "Values are followed through locals, dict literals and stores, `.update`, `**` splats, "
    "lists and `*args` into in-tree helpers, returns of in-tree helpers and autograd `ctx` "
    "round trips; a value the pass cannot follow (a parameter fed from outside the tree, an "
    "arithmetic result) counts as unknown, i.e. not provably safe. Calls through "
    "`functools.partial`, `getattr` or objects' attributes are not followed.")

UNWRAPPED_BINDING = _rule(
    "FA4S002", "unwrapped-fa4-binding", "error",
    "a name bound to an FA4 entry point is not wrapped by a trusted normaliser",
    "Reports every module-level name whose value, after the module has run, is an FA4 entry "
    "point without a trusted normalising wrapper (`fa4_patch.wrap`, the codemod's "
    "`_fa4_audit_wrap`, or a `--wrapper` name) in its wrapper chain. Names used only as the "
    "argument of a wrapping assignment (`x = w(_raw)`) are not reported; `_raw` is not "
    "reachable through any other name.",
    "The binding is the one place where every caller's window can be normalised at once; "
    "FA2 >= 2.7 and FA3 share TE's call sites and need `-1`, so the call sites cannot change.",
    "try:\n"
    "    from flash_attn.cute.interface import flash_attn_func as flash_attn_func_v4\n"
    "except ImportError:\n"
    "    flash_attn_func_v4 = None",
    "try:\n"
    "    from flash_attn.cute.interface import flash_attn_func as flash_attn_func_v4\n"
    "except ImportError:\n"
    "    flash_attn_func_v4 = None\n"
    "else:\n"
    "    flash_attn_func_v4 = _fa4_audit_wrap(flash_attn_func_v4)",
    "A module-level name is judged by its value when the module has finished running "
    "(try/except/else and if/else paths joined); rebinding inside functions is judged "
    "flow-insensitively.")

IMPORT_OUTSIDE_BINDING_SITE = _rule(
    "FA4S003", "fa4-import-outside-binding-site", "error",
    "an FA4 entry point is imported inside a function or class, away from the module-level "
    "binding site",
    "Reports an import of an FA4 entry point straight from `flash_attn.cute[.interface]` that "
    "is not at module level (inside a function or class body).",
    "The fix (and the codemod) wraps the module-level bindings. An import inside a function "
    "binds a fresh, unwrapped entry point each call and bypasses them.",
    "def attn(q, k, v):\n"
    "    from flash_attn.cute import flash_attn_func\n"
    "    return flash_attn_func(q, k, v, causal=True)",
    "from backends import flash_attn_func_v4   # the wrapped module-level binding\n\n"
    "def attn(q, k, v):\n"
    "    return flash_attn_func_v4(q, k, v, causal=True)",
    "Re-imports of a wrapped binding from another module of the tree "
    "(`from ..backends import _flash_attn_fwd_v4`) are fine and are not reported.")

UNTRUSTED_WRAPPER = _rule(
    "FA4S004", "untrusted-wrapper", "error",
    "a recognised wrapper's normaliser did not pass the sandbox check",
    "A recognised wrapper (`fa4_patch.wrap`, `_fa4_audit_wrap` or a `--wrapper` name) is "
    "trusted only after its normaliser (`fa4_patch.normalize.normalize_pair`, "
    "`_fa4_audit_normalize_pair`, or for `--wrapper` names a module-level two-parameter "
    "function it calls) was run in the sandbox on (-1,0) (-1,-1) (None,0) (None,None) (5,0) "
    "(0,0) (-3,7) (511,0) and returned each pair with negative bounds replaced by None and "
    "the rest unchanged. Otherwise this finding is reported and bindings wrapped by it count "
    "as unwrapped.",
    "A wrapper by the right name that does not normalise (or normalises the wrong way, e.g. "
    "to 0) would make the audit report safe code that still sends `-1` to FA4.",
    "def _fa4_audit_normalize_pair(left, right):\n"
    "    return left, right          # forgets to map -1 to None\n\n"
    "def _fa4_audit_wrap(fn): ...",
    "def _fa4_audit_normalize_pair(left, right):\n"
    "    if left is not None and left < 0:\n"
    "        left = None\n"
    "    if right is not None and right < 0:\n"
    "        right = None\n"
    "    return left, right",
    "The wrapper's own body is not verified to apply the normaliser to every window argument; "
    "only the normaliser's behaviour is checked. The sandbox refuses normalisers outside a "
    "small Python subset (no imports, loops, attribute access).")

UNPARSEABLE = _rule(
    "FA4S900", "unparseable-file", "failure",
    "a file that mentions FlashAttention or a window key could not be read or parsed",
    "Reports a file the byte prefilter could not rule out (it spells `flash_attn`, a window "
    "key, or a name bound to an FA entry point) that could not be read or parsed. The "
    "verdict becomes `error` (exit 2).",
    "Fail closed: the pass never says safe about code it did not see.",
    "# attention.py\nfrom flash_attn.cute import flash_attn_func\ndef f(:\n",
    "Fix the syntax error (or audit the tree the interpreter actually runs).",
    "A file that cannot be read and does not spell any of those names provably cannot "
    "matter and is skipped silently.")
