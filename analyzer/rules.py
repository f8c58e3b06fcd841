"""Every finding code fa4-audit can emit, in one registry.

The call-site pass's codes (``FA4S...``) are defined beside their analysis in
``analyzer.sites.rules``, the upgrade hazards' (``FA4U...``) in ``analyzer.upgrade.model``; the
audit's own codes (``FA4C...`` for a failed equivalence claim, ``FA4E...`` for a part of the
audit that could not run) are defined here, with the same record type and the same
documentation sections. :data:`ALL_RULES` is the union; a code is defined
exactly once (``all_rules()`` raises on a clash), and every renderer looks codes up here.
"""

from __future__ import annotations

from analyzer.sites.rules import RULES as SITE_RULES
from analyzer.sites.rules import Rule

AUDIT_RULES: dict[str, Rule] = {}


def _rule(*args) -> Rule:
    r = Rule(*args)
    if r.code in AUDIT_RULES or r.code in SITE_RULES:
        raise ValueError(f"finding code {r.code} defined twice")
    AUDIT_RULES[r.code] = r
    return r


CLAIM_FAILED = _rule(
    "FA4C001", "claim-failed", "error",
    "an equivalence claim about the normalising fix does not hold",
    "Reports a claim of the equivalence table that fails: (a) normalised input gives TE's "
    "intended band on every audited resolver, for every pair TE emits; (b) normalising is "
    "inert where a resolver was already right.",
    "If (a) fails the fix itself is wrong on some release; if (b) fails it changes the "
    "behaviour of releases that were correct. Either way, shipping the fix is unsafe.",
    "a resolver that reads None differently from an unbounded side",
    "report the counterexamples (audit.json: table.claims[].counterexamples) upstream",
    "Claims are checked over the pairs TE emits (check_set_window_size and context "
    "parallelism); pairs other callers pass are shown for reference only.")

AUDIT_ERROR = _rule(
    "FA4E001", "audit-error", "failure",
    "a part of the audit could not be analysed (fail closed)",
    "Reports a part of the audit that did not complete: the equivalence table, the call-site "
    "pass or the codemod dry run. The verdict is then 'error' (exit 2), never 'safe'.",
    "An audit that silently skips a part would report 'safe' for code it never read.",
    "a resolver the extractor cannot find by structure",
    "fix the input (a source that parses, a reachable release) and rerun",
    "The message names the part and the first cause; audit.json lists every error.")


def _upgrade_rules() -> dict[str, Rule]:
    """``fa4-audit upgrade``'s hazard kinds (FA4U...), defined in ``analyzer.upgrade.model``."""
    try:
        from analyzer.upgrade.model import KINDS
    except ImportError:   # a checkout without the upgrade pass
        return {}
    out = {}
    for kind, (code, summary) in KINDS.items():
        out[code] = Rule(code, kind, "error", summary,
                         f"Reports an upgrade hazard of kind `{kind}`: {summary}.",
                         "See docs/upgrade.md for why each kind breaks an FA4 upgrade.",
                         "see docs/upgrade.md", "see docs/upgrade.md",
                         "Hazards carry a certainty (proven / conditional / unknown).")
    return out


UPGRADE_RULES: dict[str, Rule] = _upgrade_rules()


def all_rules() -> dict[str, Rule]:
    groups = (SITE_RULES, AUDIT_RULES, UPGRADE_RULES)
    seen: set[str] = set()
    for g in groups:
        clash = seen & set(g)
        if clash:
            raise ValueError(f"finding codes defined twice: {sorted(clash)}")
        seen |= set(g)
    return {**SITE_RULES, **AUDIT_RULES, **UPGRADE_RULES}


ALL_RULES: dict[str, Rule] = all_rules()
