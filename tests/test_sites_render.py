"""Renderers of the call-site report: JSON shape, SARIF 2.1.0 structure, text/markdown, docs.

jsonschema is not installed here, so SARIF is checked structurally against the parts of the
2.1.0 schema that code-scanning UIs require (version, runs[].tool.driver.rules[].id, results with
ruleId / ruleIndex / level / message.text, physicalLocation.artifactLocation.uri and a region
with startLine >= 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyzer.sites import audit_tree, render
from analyzer.sites.render import rules_markdown
from analyzer.sites.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures" / "sites"
DOCS = Path(__file__).parent.parent / "docs" / "sites.md"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("FA4_AUDIT_CACHE", str(tmp_path_factory.mktemp("cache")))
    r = audit_tree(FIXTURES / "cp_helpers", jobs=1)
    mp.undo()
    return r


def test_json_shape(report):
    """Guards the documented JSON schema: top-level keys, counts, and records that cross-link
    (a call's window ids exist and list the call back)."""
    d = json.loads(render(report, "json"))
    assert d["schema"] == "fa4-audit/sites" and d["schema_version"] == 1
    assert set(d) >= {"verdict", "counts", "bindings", "window_sites", "calls", "wrappers",
                      "findings", "root", "package_dir", "timings"}
    assert d["verdict"] == "unsafe"
    assert d["counts"]["fa4_calls"] == sum(1 for c in d["calls"] if c["reaches_fa4"])
    sites = {w["id"]: w for w in d["window_sites"]}
    for c in d["calls"]:
        assert set(c) >= {"id", "path", "line", "col", "entries", "versions", "bindings",
                          "windows", "coverage", "coverage_reason", "via"}
        for wid in c["windows"]:
            assert c["id"] in sites[wid]["calls"]
    for f in d["findings"]:
        assert set(f) == {"code", "name", "message", "path", "line", "col", "via", "level"}
        assert f["code"] in RULES and RULES[f["code"]].name == f["name"]


def test_sarif_structure(report):
    """SARIF 2.1.0: one run, every rule declared, one result per finding with a location and
    the binding->call path as a code flow; ruleIndex points at the declared rule."""
    s = json.loads(render(report, "sarif"))
    assert s["version"] == "2.1.0" and "sarif-2.1.0" in s["$schema"]
    (run,) = s["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    for r in rules:
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert re.fullmatch(r"[a-z0-9-]+", r["name"])
    assert len(run["results"]) == len(report.findings)
    for res, f in zip(run["results"], report.findings):
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == f.code
        assert res["level"] in ("error", "warning", "note", "none")
        assert res["message"]["text"] == f.message
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == f.path
        assert loc["region"]["startLine"] == f.line >= 1 and loc["region"]["startColumn"] >= 1
        assert [x["location"]["message"]["text"]
                for x in res["codeFlows"][0]["threadFlows"][0]["locations"]] == list(f.via)
    # relative: no path of the machine that ran the audit leaks into the report
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == "./"
    assert all(r["partialFingerprints"]["fa4AuditFinding/v1"] for r in run["results"])
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_failure_is_unsuccessful(tmp_path, isolated_cache):
    """A could-not-analyse failure is a result and makes executionSuccessful false."""
    (tmp_path / "bad.py").write_text("import flash_attn\ndef f(:\n")
    s = json.loads(render(audit_tree(tmp_path, jobs=1), "sarif"))
    run = s["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert [r["ruleId"] for r in run["results"]] == ["FA4S900"]
    assert "region" not in run["results"][0]["locations"][0]["physicalLocation"]


def test_text_is_ruff_style(report):
    """Text output: one `path:line:col CODE [name] message` line per finding, then the calls
    table and the summary line with the verdict."""
    out = render(report, "text")
    for f in report.findings:
        assert f"{f.path}:{f.line}:{f.col} {f.code} [{f.name}] {f.message}" in out
    assert out.rstrip().splitlines()[-1].endswith("verdict unsafe")


def test_markdown_tables(report):
    out = render(report, "markdown")
    assert "### FA calls" in out and "### Window sites" in out and "### FA bindings" in out
    rows = [ln for ln in out.splitlines() if re.match(r"^\| W\d+ ", ln)]
    assert len(rows) == len(report.window_sites)


def test_unknown_format_raises(report):
    with pytest.raises(ValueError):
        render(report, "xml")


def test_cli_formats(cli, isolated_cache):
    """The command writes parseable JSON/SARIF to stdout and exits 1 on findings."""
    for fmt in ("json", "sarif"):
        res = cli("sites", "--tree", str(FIXTURES / "direct_alias"), "--format", fmt, "--quiet")
        assert res.code == 1
        json.loads(res.out)
    res = cli("sites", "--tree", str(FIXTURES / "lookalikes"), "--quiet")
    assert res.code == 0 and "verdict no-fa4" in res.out
    res = cli("sites", "--tree", str(FIXTURES / "wrapped_trusted"), "--quiet")
    assert res.code == 0 and "verdict safe" in res.out


def test_docs_rules_not_stale():
    """docs/sites.md carries the rule docs exactly as rules.py renders them."""
    assert rules_markdown() in DOCS.read_text()
