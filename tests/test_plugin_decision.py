"""The pytest gate reads the audit's one decision; it never decides again (issue 12, item 4)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_audit_report import _report  # noqa: E402  (records built by hand, no analysis)

from analyzer.pytest_plugin import _report_items  # noqa: E402


def _items(report, strict=False):
    return {name: failure for name, failure in
            ((n, f) for n, f, *_ in (_capture(report, strict)))}


def _capture(report, strict):
    out = []

    def item(name, failure, location=None):
        out.append((name, failure, location))
        return name
    _report_items(report, item, strict)
    return out


@pytest.mark.parametrize("verdict,fails", [("safe", False), ("no-fa4", False), ("unsafe", True),
                                           ("unknown", True), ("error", True)])
def test_verdict_item_follows_the_audits_verdict(verdict, fails):
    """Guards: the gate passing an 'unknown' audit (never safe), or failing a 'no-fa4' one."""
    report = dataclasses.replace(_report(), verdict=verdict)
    items = _items(report)
    assert (items["verdict"] is not None) is fails
    assert (items["analysis"] is not None) is (verdict == "error")


def test_latent_findings_follow_the_decision_not_a_second_rule():
    """A safe audit (latent findings, no --strict) passes every call item; the same findings
    under an unsafe decision fail them: the plugin does not recompute breaking/strict."""
    safe = dataclasses.replace(_report(), verdict="safe", breaking_fa4=[])
    assert all(f is None for n, f in _items(safe).items() if n.startswith("call::"))
    unsafe = dataclasses.replace(_report(), verdict="unsafe", breaking_fa4=[])
    calls = {n: f for n, f in _items(unsafe).items() if n.startswith("call::")}
    assert len(calls) == 2 and all(f and "FA4S001" in f and "audit verdict unsafe" in f
                                   for f in calls.values())


def test_per_release_call_verdicts_decide_each_call_item():
    report = _report(with_verdicts=True)
    calls = {n: f for n, f in _items(report).items() if n.startswith("call::")}
    assert all(f and "4.0.0b36: broken" in f and "pair causal=True (-1, 0)" in f
               and "FA4S001 [uncovered-fa4-call]" in f for f in calls.values())
    assert all("4.0.0b11" not in f for f in calls.values())        # proved there
