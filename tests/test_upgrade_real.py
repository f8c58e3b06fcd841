"""fa4-audit upgrade on real releases from the index (cached after the first run)."""

from __future__ import annotations

import json

import pytest

from analyzer import sources
from analyzer.upgrade import drift, run_upgrade

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def fa4_b8_b11_b36():
    return [sources.resolve("fa4", v) for v in ("b8", "b11", "b36")]


@pytest.fixture(scope="module")
def report_2202(te_2202, fa4_b8_b11_b36):
    return run_upgrade(te_2202, fa4_b8_b11_b36)


def test_te_2202_gate_accepts_breaking_releases_and_has_no_overlap(report_2202):
    """TE 2.20.2 compares majors (no FA3/FA4 overlap), with no upper bound on FA4: every
    post-#2490 release on the index is accepted."""
    kinds = [h.kind for h in report_2202.sorted_hazards()]
    assert "gate-overlap" not in kinds and "gate-gap" not in kinds
    (ba,) = [h for h in report_2202.sorted_hazards() if h.kind == "breaking-accepted"]
    assert ba.path.endswith("dot_product_attention/backends.py")
    assert ".major == 4" in ba.message
    assert "4.0.0b30" in ba.releases and "4.0.0b36" in ba.releases and "4.0.0b29" not in ba.releases
    assert set(ba.releases) == set(report_2202.breaking_fa4)


def test_te_2202_wheel_parts_are_stated_not_checked(report_2202):
    assert report_2202.checked == {".github/": "not checked (absent)", "qa/": "not checked (absent)",
                                   "tests/": "not checked (absent)"}
    assert not [h for h in report_2202.hazards if h.part == "ci"]


def test_te_2202_every_fa4_call_is_checked_on_b8_b11_b36(report_2202):
    """Each FA4-reaching call of the call-site pass gets a record per entry and release; the
    code names b11 (its install hint), so positions are judged against b11."""
    assert report_2202.written_for == "4.0.0b11"
    calls = {(d.path, d.line) for d in report_2202.drift}
    assert len(calls) >= 7
    for c in calls:
        rels = {d.release for d in report_2202.drift if (d.path, d.line) == c}
        assert rels == {"4.0.0b8", "4.0.0b11", "4.0.0b36"}
    # keys TE writes for FA2/FA3 under branches are noted, never claimed as drift
    claimed = [h for h in report_2202.hazards if h.kind == "api-mismatch"]
    assert not [h for h in claimed if "in a branch" in h.message]


def test_real_signatures_move_the_positional_window():
    """b8 -> b11 inserted qv (and gather_kv_indices) before softmax_scale: a call written for b8
    that passes softmax_scale positionally lands it on qv on b11 and b36."""
    b8, b11, b36 = (sources.resolve("fa4", v).root for v in ("b8", "b11", "b36"))
    s8, s11, s36 = (drift.signatures(r) for r in (b8, b11, b36))
    assert s8["flash_attn_func"].positional.index("window_size") == 5
    assert s11["flash_attn_func"].positional.index("window_size") == 7
    shape = drift.CallShape(positional=4, star=False, keywords=[])
    for sig in (s11["flash_attn_func"], s36["flash_attn_func"]):
        problems, _ = drift.check_call(shape, "flash_attn_func", sig, s8["flash_attn_func"], "4.0.0b8")
        assert ("proven", "positional argument #4 lands on qv, not on softmax_scale as on 4.0.0b8") in problems
    ok, _ = drift.check_call(shape, "flash_attn_func", s8["flash_attn_func"], s8["flash_attn_func"], "4.0.0b8")
    assert ok == []


def test_te_215_release_has_no_overlap():
    """TE 2.15 (first release with FA4) already compares majors."""
    te = sources.resolve("te", "2.15.0")
    rep = run_upgrade(te, [sources.resolve("fa4", "b36")])
    assert not [h for h in rep.hazards if h.kind == "gate-overlap"]
    assert [h for h in rep.hazards if h.kind == "breaking-accepted"]


def test_cli_json_on_te_2202(cli):
    r = cli("upgrade", "--te", "2.20.2", "--fa4", "b8", "--fa4", "b11", "--fa4", "b36",
            "--format", "json", "-q")
    assert r.code == 1
    d = json.loads(r.out)
    assert d["findings"] and all({"kind", "path", "line", "message", "releases"} <= set(f)
                                 for f in d["findings"])
    assert d["findings"] == sorted(d["findings"], key=lambda f: (f["path"], f["line"], f["kind"], f["message"]))


def test_subprocess_help_explains_exit_codes():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "analyzer", "upgrade", "--help"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    assert "gate-overlap" in out.stdout and "exit status" in out.stdout and "not checked (absent)" in out.stdout
