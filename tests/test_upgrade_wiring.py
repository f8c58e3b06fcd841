"""The upgrade hazards inside `fa4-audit audit` (run_audit(..., upgrade=True)): their own section
of audit.md, an "upgrade" object in audit.json, FA4U* results in SARIF, one gate item per hazard,
and a failure to run them that makes the audit an error (fail closed)."""

from __future__ import annotations

import json

import pytest

from analyzer.sources import Source


def test_for_audit_failure_is_an_audit_error_not_silence():
    """A tree the upgrade pass cannot read must land in the audit's errors."""
    from analyzer.upgrade import for_audit
    errors: list[str] = []
    assert for_audit(Source("te", "transcribed", "transcribed", None, None), [], None, errors) is None
    assert errors and errors[0].startswith("upgrade: ")


def test_gate_items_one_per_hazard():
    from analyzer.pytest_plugin import _report_items
    from analyzer.upgrade.model import Hazard, UpgradeReport

    class R:   # the fields _report_items reads
        verdict, errors, reasons, table, sites = "safe", [], [], None, None

    r = R()
    r.upgrade = UpgradeReport(te={}, fa4=[], hazards=[
        Hazard("old-pin", "qa/t.sh", 3, "m1"), Hazard("api-mismatch", "a.py", 9, "x"),
        Hazard("api-mismatch", "a.py", 9, "y")])
    items = _report_items(r, lambda name, failure, location=None: (name, failure), False)
    up = [(n, f) for n, f in items if n.startswith("upgrade::")]
    assert [n for n, _ in up] == ["upgrade::api-mismatch::a.py:9", "upgrade::api-mismatch::a.py:9#2",
                                  "upgrade::old-pin::qa/t.sh:3"]
    assert all(f and "FA4U" in f for _, f in up)
    r.upgrade = None
    assert not [n for n, _ in _report_items(r, lambda n, f, location=None: (n, f), False)
                if n.startswith("upgrade::")]


@pytest.mark.network
def test_audit_with_upgrade_on_te_2202(te_2202):
    from analyzer import sources
    from analyzer.audit import run_audit
    from analyzer.audit_report import render_all

    fa4 = [sources.resolve("fa4", "b36")]
    rep = run_audit("2.20.2", ["b36"], te_source=te_2202, fa4_sources=fa4, with_codemod=False,
                    upgrade=True)
    assert rep.upgrade is not None and rep.verdict != "error", rep.errors
    files = render_all(rep)
    assert "## Upgrade hazards" in files["audit.md"]
    d = json.loads(files["audit.json"])
    kinds = {f["kind"] for f in d["upgrade"]["findings"]}
    assert "breaking-accepted" in kinds
    sarif = json.loads(files["audit.sarif"])
    assert any(r["ruleId"] == "FA4U003" for r in sarif["runs"][0]["results"])
    plain = run_audit("2.20.2", ["b36"], te_source=te_2202, fa4_sources=fa4, with_codemod=False)
    assert plain.upgrade is None and "upgrade" not in json.loads(render_all(plain)["audit.json"])
