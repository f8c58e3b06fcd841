"""`fa4-audit audit` and `make-audit` on real TE 2.20.2 and FA4 releases (fetched into the cache)."""

from __future__ import annotations

import json
import shutil

import pytest


pytestmark = pytest.mark.network






def _reports(out):
    return {n: (out / n).read_text() for n in ("audit.md", "audit.json", "audit.sarif")}


def test_unpatched_release_against_b36_is_unsafe_with_three_reports(cli, tmp_path, te_2202):
    """Guards: the audit calling TE 2.20.2 safe to run on a post-#2490 FA4, or writing
    reports that do not carry the evidence (sources, table, claims, findings, codemod diff)."""
    r = cli("audit", "--te", "2.20.2", "--fa4", "4.0.0b36", "--out", str(tmp_path / "o"), "--no-cache")
    assert r.code == 1, r.err
    assert r.out.startswith("TE 2.20.2 vs FA4 4.0.0b36: UNSAFE")
    rep = _reports(tmp_path / "o")
    data = json.loads(rep["audit.json"])
    assert data["schema"] == "fa4-audit/audit" and data["schema_version"] == 1
    assert data["verdict"] == "unsafe" and data["breaking_fa4"] == ["4.0.0b36"]
    assert data["te"]["version"] == "2.20.2" and data["fa4"][0]["version"] == "4.0.0b36"
    assert {c["name"]: c["holds"] for c in data["table"]["claims"]} == {"a": True, "b": True}
    fa4_calls = [c for c in data["sites"]["calls"] if "fa4" in c["versions"]]
    assert fa4_calls and all(c["coverage"] == "uncovered" for c in fa4_calls)
    assert data["codemod"]["changed_files"] == [
        "transformer_engine/pytorch/attention/dot_product_attention/backends.py"]
    md = rep["audit.md"]
    for needle in ("**UNSAFE** (exit 1)", "fa4-audit audit --te 2.20.2 --fa4 4.0.0b36",
                   "post-2490", "LOCAL -1/0 (empty)", "FA4S001", "```diff", "_fa4_window_wrapper("):
        assert needle in md, needle
    sarif = json.loads(rep["audit.sarif"])
    assert sarif["version"] == "2.1.0"
    assert any(res["ruleId"] == "FA4S001" for res in sarif["runs"][0]["results"])


def test_ci_pin_is_not_broken_but_not_proved_either(cli, tmp_path):
    """Guards: TE's CI pin (b11, pre-#2490) being called broken -- no call is -- and the
    unnormalised calls being called safe: their windows (the user's, or tied to ``causal`` in
    a way the pass does not track) cannot be proved, so the verdict is unknown (exit 1)."""
    r = cli("audit", "--te", "2.20.2", "--fa4", "4.0.0b11", "--out", str(tmp_path / "o"))
    assert r.code == 1, r.err
    assert "UNKNOWN" in r.out and "UNSAFE" not in r.out
    data = json.loads((tmp_path / "o" / "audit.json").read_text())
    assert data["verdict"] == "unknown"
    assert not [v for c in data["sites"]["calls"] for v in c["verdicts"] if v["status"] == "broken"]
    r = cli("audit", "--te", "2.20.2", "--fa4", "4.0.0b11", "--out", str(tmp_path / "s"), "--strict")
    assert r.code == 1 and "UNSAFE" in r.out


def test_patched_release_is_safe_and_needs_no_codemod(cli, tmp_path, patched_2202):
    """Guards: the fix not being recognised end to end (patched tree still unsafe)."""
    r = cli("audit", "--te", str(patched_2202), "--fa4", "4.0.0b36", "--out", str(tmp_path / "o"))
    assert r.code == 0, r.out + r.err
    data = json.loads((tmp_path / "o" / "audit.json").read_text())
    assert data["verdict"] == "safe" and data["codemod"]["changed_files"] == []
    assert all(c["status"] == "proved" for c in data["sites"]["calls"] if c["reaches_fa4"])


def test_second_audit_comes_from_the_cache_and_a_changed_tree_does_not(cli, tmp_path, te_2202):
    """Guards: a stale cached verdict after the audited code changed."""
    tree = tmp_path / "te"
    shutil.copytree(te_2202.package_dir, tree / "transformer_engine")
    args = ("audit", "--te", str(tree), "--fa4", "4.0.0b36")
    first = cli(*args, "--out", str(tmp_path / "a"))
    again = cli(*args, "--out", str(tmp_path / "b"))
    assert first.code == again.code == 1
    assert "from the cache" in again.err and "from the cache" not in first.err
    assert _reports(tmp_path / "a") == _reports(tmp_path / "b")
    from fa4_patch import codemod

    codemod.write(tree, codemod.plan(tree))      # the same path, new content: must be re-audited
    third = cli(*args, "--out", str(tmp_path / "c"))
    assert third.code == 0 and "from the cache" not in third.err


def test_make_audit_reports_both_and_exits_zero(cli, tmp_path):
    """Guards: `make audit` failing (non-zero) because the released tree is unsafe -- its exit
    says whether the audit ran -- or not auditing the patched copy."""
    out = tmp_path / "o"
    r = cli("make-audit", "--fa4", "4.0.0b11", "--fa4", "4.0.0b36", "--out", str(out))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].startswith("as released: TE 2.20.2 vs FA4 4.0.0b11, 4.0.0b36: UNSAFE")
    assert lines[1].startswith("patched:     TE 2.20.2+fa4_patch vs FA4 4.0.0b11, 4.0.0b36: SAFE")
    for part in ("released", "patched"):
        assert json.loads((out / part / "audit.json").read_text())["verdict"] in ("unsafe", "safe")
    assert "UNSAFE" in (out / "summary.md").read_text()


def test_missing_te_is_exit_2_one_line(cli, tmp_path):
    r = cli("audit", "--te", str(tmp_path / "nope"), "--fa4", "4.0.0b36", "--out", str(tmp_path / "o"))
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("fa4-audit: error:")
    assert not (tmp_path / "o").exists()


def test_colour_only_when_asked_or_on_a_terminal(cli, tmp_path):
    """Guards: escape codes leaking into CI logs and pasted reports (STYLE lesson 7)."""
    plain = cli("audit", "--te", "2.20.2", "--fa4", "4.0.0b36", "--out", str(tmp_path / "a"))
    assert "\x1b[" not in plain.out + plain.err          # StringIO is not a terminal
    forced = cli("audit", "--te", "2.20.2", "--fa4", "4.0.0b36", "--out", str(tmp_path / "b"),
                 "--color", "always")
    assert "\x1b[1;31mUNSAFE\x1b[0m" in forced.out
    assert "\x1b[" not in (tmp_path / "b" / "audit.md").read_text()
