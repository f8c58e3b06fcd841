"""Issue 9 item 5: extraction follows the function FA4 really calls, and evaluates it the way
FA4 calls it. Fixtures in tests/fixtures/resolvers/ (written for these tests, no FA4 code):

* the last module-level binding of the resolver's name wins (a later def, an assignment, an
  import); a binding that depends on run-time state fails closed;
* the resolver is called with the entry point's own arguments: keywords, parameter order,
  literals; forward and backward share a result only when their calls bind the same way;
* an error in the tool's own call of the extracted function is an AuditError (exit 2), never a
  table cell or a failed claim.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.equivalence.extract import extract_fa4
from analyzer.equivalence.table import evaluate_resolver
from analyzer.errors import AuditError

FIX = Path(__file__).parent / "fixtures" / "resolvers"
CAUSAL_TE = (True, -1, 0)          # TE's causal pair: CAUSAL before #2490, an empty band after
OFFSETS = (False, 7, -8)           # FULL before #2490 (sum < 0), LOCAL 7/-8 after


@pytest.fixture(autouse=True)
def _own_cache(isolated_cache):
    return isolated_cache


def _labels(e, inputs=(CAUSAL_TE, OFFSETS)):
    ev = evaluate_resolver(e, list(inputs))
    assert not ev.errors, ev.errors
    return tuple(ev.states[i].label() for i in inputs)


def test_a_later_def_replaces_the_earlier_one():
    """Guards against evaluating the first def of a name that is defined twice: Python runs the
    second (here the post-#2490 rule after a pre-#2490 one)."""
    (e,) = extract_fa4(FIX / "last_def_wins")
    assert (e.name, e.line, e.role) == ("_resolve_causal_local_window", 21, "shared")
    assert _labels(e) == ("LOCAL -1/0", "LOCAL 7/-8")


def test_a_module_level_assignment_rebinds_the_resolver():
    """Guards against trusting the def named like the resolver when the name is re-pointed
    (after the entry points, which still see it at run time)."""
    (e,) = extract_fa4(FIX / "rebound_by_assignment")
    assert e.name == "_strict_window" and e.func_name == "_strict_window"
    assert _labels(e) == ("LOCAL -1/0", "LOCAL 7/-8")


def test_a_later_import_rebinds_the_resolver_and_is_followed():
    (e,) = extract_fa4(FIX / "rebound_by_import")
    assert (e.path, e.name) == ("flash_attn/cute/window_policy.py", "strict")
    assert _labels(e) == ("LOCAL -1/0", "LOCAL 7/-8")


def test_a_conditional_rebinding_fails_closed():
    """Which function runs depends on the environment at import time: no guess."""
    with pytest.raises(AuditError, match="bound conditionally"):
        extract_fa4(FIX / "rebound_conditionally")


def test_keyword_call_is_evaluated_with_its_keywords():
    """Guards against calling a (left, right, causal, mask_mod) resolver as (causal, left,
    right): causal=True would land in the left side and the answers would be garbage."""
    (e,) = extract_fa4(FIX / "keyword_call")
    assert e.role == "shared" and e.call_args == ()
    assert dict(e.call_kwargs) == {"causal": 0, "window_size_left": 1, "window_size_right": 2,
                                   "mask_mod": ("const", None)}
    assert _labels(e) == ("LOCAL -1/0", "LOCAL 7/-8")


def test_positional_call_follows_the_calls_parameter_order():
    (e,) = extract_fa4(FIX / "positional_order")
    assert e.call_args == (1, 2, 0)
    assert _labels(e) == ("CAUSAL", "FULL")


def test_same_resolver_called_differently_by_fwd_and_bwd_gives_two_roles():
    """Guards against one 'shared' result evaluated with the forward's arguments when the
    backward passes a literal that changes the answer."""
    fwd, bwd = extract_fa4(FIX / "fwd_bwd_different_arguments")
    assert (fwd.role, bwd.role) == ("fwd", "bwd") and fwd.fingerprint == bwd.fingerprint
    assert dict(bwd.call_kwargs) == {"literal_negative": ("const", True)}
    assert _labels(fwd) == ("CAUSAL", "LOCAL 7/None")
    assert _labels(bwd) == ("LOCAL -1/0", "LOCAL 7/-8")


def test_a_call_that_does_not_fit_the_signature_is_an_audit_error():
    with pytest.raises(AuditError, match="do not fit its signature"):
        extract_fa4(FIX / "call_mismatch")


def test_an_argument_the_audit_cannot_know_is_an_audit_error():
    with pytest.raises(AuditError, match="passes arch to its window resolver"):
        extract_fa4(FIX / "call_unknown_argument")


def test_the_tools_own_call_failing_in_the_sandbox_is_an_audit_error_not_a_result():
    """Second line of defence behind the static check: a call template that does not bind
    (here forged) must raise, not come back as 'the resolver raises TypeError' -- a cell."""
    (e,) = extract_fa4(FIX / "renamed")
    forged = replace(e, call_args=(0, 1, 2), call_kwargs=(("no_such_parameter", ("const", 1)),))
    with pytest.raises(AuditError, match="the audit's own call .* failed before the function ran"):
        evaluate_resolver(forged, [CAUSAL_TE])


def test_a_type_error_raised_inside_the_resolver_stays_a_result():
    """The pre-#2490 rule adds the sides: None + 1 raises inside the function. That is the
    rule's answer (a 'raises' cell), not the tool's mistake."""
    (e,) = extract_fa4(FIX / "positional_order")
    forged = replace(e, source=e.source.replace("left + right < 0", "left + 1 < 0")
                     .replace("left is not None and right is not None and ", ""))
    ev = evaluate_resolver(forged, [(False, None, 3)])
    assert ev.errors[(False, None, 3)].startswith("TypeError")


def test_table_on_a_mismatched_call_exits_2(cli):
    r = cli("table", "--fa4", str(FIX / "call_mismatch"), "--no-simulate")
    assert r.code == 2 and "do not fit its signature" in r.err and r.out == ""


def test_call_templates_survive_the_extraction_cache():
    first = extract_fa4(FIX / "keyword_call")
    again = extract_fa4(FIX / "keyword_call")      # from the cache
    assert again == first
    assert extract_fa4(FIX / "keyword_call", use_cache=False) == first


def test_a_later_star_import_that_exports_the_name_rebinds_it():
    """`from .policy import *` after the def, with the name in policy's __all__: the star
    import's function runs."""
    (e,) = extract_fa4(FIX / "star_import_rebinds")
    assert e.path == "flash_attn/cute/policy.py"
    assert _labels(e) == ("LOCAL -1/0", "LOCAL 7/-8")


def test_a_star_import_skips_underscore_names_without_all():
    """The same star import without __all__ does not export _resolve_causal_local_window:
    the module's own def still runs (a tool that assumed otherwise would audit the wrong rule)."""
    (e,) = extract_fa4(FIX / "star_import_private")
    assert e.path == "flash_attn/cute/interface.py"
    assert _labels(e) == ("CAUSAL", "FULL")


def test_a_name_the_entry_point_binds_locally_fails_closed():
    """An assignment anywhere in the entry point makes the name local there: the module's def
    is not (or not always) what runs."""
    with pytest.raises(AuditError, match="binds _resolve_causal_local_window locally"):
        extract_fa4(FIX / "rebound_locally")


def test_a_walrus_at_module_level_rebinds_the_resolver(tmp_path):
    """`(name := other)` in a module-level expression binds the module's name too: the binding
    scan must see it even though it skips expressions in files without ':='."""
    import shutil

    shutil.copytree(FIX / "last_def_wins", tmp_path / "t")
    p = tmp_path / "t" / "flash_attn" / "cute" / "interface.py"
    p.write_text(p.read_text() + "\n\nSTRICT = (_resolve_causal_local_window := len)\n")
    with pytest.raises(AuditError, match="rebound"):
        extract_fa4(tmp_path / "t")
