"""fa4-audit upgrade on fixtures written for it (no network): every kind of hazard, each with a
twin that must stay silent. Fixture lines carry ``# expect: KIND`` where a finding must be; the
tests compare the exact set of (path, line, kind), so a missed finding and a false one both fail.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from analyzer.upgrade import ci, drift, gates
from analyzer.upgrade.model import KINDS, Hazard, UpgradeReport

FIX = Path(__file__).parent / "fixtures" / "upgrade"

# releases injected instead of the index, and which FA4 ones "break"
RELEASES = {"flash-attn": ["2.3.0", "2.7.3", "2.8.3"], "flash-attn-3": ["3.0.0b1"],
            "flash-attn-4": ["4.0.0b8", "4.0.0b11", "4.0.0b29", "4.0.0b30", "4.0.0b36"]}
BREAKING = {"4.0.0b30", "4.0.0b36"}
VARIANT = {"4.0.0b8": "pre-2490", "4.0.0b11": "pre-2490", "4.0.0b29": "pre-2490",
           "4.0.0b30": "post-2490", "4.0.0b36": "post-2490"}


def expected(root: Path) -> set[tuple[str, int, str]]:
    out = set()
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            m = re.search(r"#\s*expect:\s*([a-z0-9, -]+)$", line)
            if m:
                for kind in (k.strip() for k in m.group(1).split(",")):
                    if kind in KINDS:
                        out.add((p.relative_to(root).as_posix(), i, kind))
    return out


def got(hazards) -> set[tuple[str, int, str]]:
    return {(h.path, h.line, h.kind) for h in hazards}


def gate_run(name: str, releases=RELEASES, breaking=BREAKING):
    found, flow, notes = gates.find_gates(FIX / name, "transformer_engine", lambda d: releases.get(d, []))
    return found, gates.gate_hazards(found, flow, set(breaking))


# ----------------------------------------------------------------------------- version gates

def test_gate_fixtures_report_exactly_the_marked_lines():
    """Overlap (TE's first FA4 commit shape), gap (4.0.0bN < 4.0.0), unknown (a run-time value),
    breaking releases accepted by unbounded FA4 gates; the twins (major compares, a 4.0.0b1
    floor, a module constant, an FA2 feature ladder) must add nothing."""
    _, hz = gate_run("gates")
    assert got(hz) == expected(FIX / "gates")


def test_overlap_names_both_gates_and_every_fa4_release():
    """Guards against reporting the overlap for only one release, or losing the other gate."""
    _, hz = gate_run("gates")
    (ov,) = [h for h in hz if h.kind == "gate-overlap"]
    assert ov.releases == tuple(RELEASES["flash-attn-4"])
    assert "FA3 and FA4" in ov.message and ov.related == ("transformer_engine/overlap.py:19",)
    assert ov.certainty == "proven"


def test_overlap_vanishes_when_fa4_releases_are_final():
    """The overlap exists only because PEP 440 sorts 4.0.0bN before 4.0.0: with a final 4.0.0
    release alone, FA3's range no longer holds for it (the evaluation is real, not a lookup)."""
    rel = dict(RELEASES, **{"flash-attn-4": ["4.0.0", "4.1.0"]})
    _, hz = gate_run("gates", rel, set())
    assert not [h for h in hz if h.kind == "gate-overlap"]
    # and 4.0.0 final now satisfies the `>= 4.0.0` gate: no gap either
    assert not [h for h in hz if h.kind == "gate-gap"]


def test_breaking_accepted_lists_only_breaking_releases_the_gate_accepts():
    """Guards against listing every accepted release, or reporting when nothing breaks."""
    _, hz = gate_run("gates")
    ba = {h.line: h for h in hz if h.kind == "breaking-accepted" and h.path.endswith("overlap.py")}
    assert ba[19].releases == ("4.0.0b30", "4.0.0b36")
    _, none = gate_run("gates", breaking=set())
    assert not [h for h in none if h.kind == "breaking-accepted"]


def test_unselected_fa4_version_read_is_breaking_but_a_rejecting_raise_is_not():
    """TE 2.15-2.20's import path reads flash-attn-4 with no bound: every breaking release is
    accepted. The twin raises for >= 4.0.0b30, which rejects them."""
    _, hz = gate_run("gates_unselected")
    assert got(hz) == expected(FIX / "gates_unselected")
    _, twin = gate_run("gates_rejected")
    assert twin == []


def test_unknown_gate_is_reported_never_dropped():
    found, hz = gate_run("gates")
    (unk,) = [h for h in hz if h.kind == "gate-unknown"]
    assert unk.certainty == "unknown" and "runtime_major()" in unk.message
    rec = next(g.record for g in found if (g.record.path, g.record.line) == (unk.path, unk.line))
    assert set(rec.accepts.values()) == {"unknown"}


def test_configuration_constant_with_several_values_is_tried_with_each(tmp_path):
    """A minimum that is reassigned (TE's version_required) makes a release 'depends', not a
    guess either way."""
    pkg = tmp_path / "transformer_engine"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(
        "from importlib.metadata import version as get_pkg_version\n"
        "from packaging.version import Version as PkgVersion\n"
        "class U:\n"
        "    version_required = PkgVersion('2.1.1')\n"
        "    v = PkgVersion(get_pkg_version('flash-attn'))\n"
        "def tighten():\n"
        "    U.version_required = PkgVersion('2.5')\n"
        "def check():\n"
        "    is_installed = U.version_required <= U.v\n")
    found, _, _ = gates.find_gates(tmp_path, "transformer_engine",
                                   lambda d: {"flash-attn": ["2.0.0", "2.3.0", "2.8.3"]}.get(d, []))
    (g,) = found
    assert g.record.accepts == {"2.0.0": "false", "2.3.0": "depends", "2.8.3": "true"}


def test_unparseable_file_that_may_hold_a_gate_is_an_error(tmp_path):
    from analyzer.errors import AuditError
    pkg = tmp_path / "transformer_engine"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "bad.py").write_text("flash_version = Version(version('flash-attn-4')\n")
    with pytest.raises(AuditError, match="cannot parse"):
        gates.find_gates(tmp_path, "transformer_engine", lambda d: [])


@pytest.mark.parametrize("name,backend", [
    ("use_flash_attn_4", "FA4"), ("use_flash_attn_3", "FA3"), ("use_v3", "FA3"),
    ("v4_is_installed", "FA4"), ("use_flash_attention_2", "FA2"), ("v2_3_plus", "FA2"),
    ("v2_4_1_plus", "FA2"), ("is_installed", None), ("use_fa4", "FA4")])
def test_flag_backend_names(name, backend):
    """A version ladder (v2_3_plus) must not be read as FA3: that would invent overlaps."""
    assert gates.backend_of_flag(name) == backend


# ----------------------------------------------------------------------------- CI blind spots

def ci_run():
    root = FIX / "ci"
    files = ci.ci_files(root)
    sw = ci.fa4_switches(root, "transformer_engine")
    hz = ci.disabled_hazards(root, files, sw)
    hz += ci.old_pin_hazards(ci.pins(root, files, RELEASES["flash-attn-4"]), VARIANT, "post-2490")
    hz += ci.same_backend_hazards(root, files)
    return sw, hz


def test_ci_fixtures_report_exactly_the_marked_lines():
    """FA4 off in a suite (export, yaml env, per-command prefix, conftest), an old pin (version
    list expanded by a loop, yaml, requirements), CP graded against the same object; twins: a
    later re-enable, a per-command override, a list/range reaching post-#2490, an independent
    reference, a backend switch between the runs, a switch set inside a function."""
    _, hz = ci_run()
    assert got(hz) == expected(FIX / "ci")


def test_switch_names_come_from_the_package_source():
    """Only switches the package reads count; V3 does not turn FA4 off."""
    sw, _ = ci_run()
    assert sorted(sw) == ["NVTE_FLASH_ATTN", "NVTE_FLASH_ATTN_V4"]


def test_old_pin_is_judged_by_variant_not_by_version_number():
    """If the pinned b11 had the current variant, nothing is old."""
    root = FIX / "ci"
    files = ci.ci_files(root)
    pl = ci.pins(root, files, RELEASES["flash-attn-4"])
    assert ci.old_pin_hazards(pl, {v: "x" for v in VARIANT}, "x") == []


# ----------------------------------------------------------------------------- API drift

def drift_calls():
    """FACall-like records for every FA call of the drift fixture (the call-site engine's fields)."""
    import ast
    p = FIX / "drift" / "transformer_engine" / "attn.py"
    tree = ast.parse(p.read_text())
    names = {"flash_attn_func", "flash_attn_varlen_func", "_flash_attn_fwd"}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names:
            out.append(SimpleNamespace(path="transformer_engine/attn.py", line=n.lineno,
                                       col=n.col_offset + 1,
                                       entries=(f"flash_attn.cute.interface.{n.func.id}",)))
    return out


def drift_run():
    rels = [("old", FIX / "fa4_old"), ("new", FIX / "fa4_new")]
    return drift.drift(FIX / "drift", drift_calls(), rels, rels[0])


def test_drift_fixture_reports_exactly_the_marked_calls():
    hz, recs, _ = drift_run()
    assert got(hz) == expected(FIX / "drift")
    assert len(recs) == 2 * len(drift_calls())


def test_positional_shift_is_reported_against_the_release_written_for():
    """scale passed at #4 lands on qv on 'new': silent misbinding, only visible by position."""
    hz, _, _ = drift_run()
    msgs = [h.message for h in hz if h.line == 8]
    assert any("#4 lands on qv, not on softmax_scale as on old" in m and m.endswith("on new") for m in msgs)


def test_splats_are_read_only_as_far_as_they_are_visible():
    """A certain dict key is checked; a key written in a branch and an opaque **helper() are
    noted, never claimed."""
    hz, recs, _ = drift_run()
    certain = [h for h in hz if "return_lse" in h.message]
    assert certain and certain[0].releases == ("old",)
    notes = [n for r in recs for n in r.notes]
    assert any("cu_seqlens_q= from **kw" in n and "not claimed" in n for n in notes)
    assert any("keywords not visible: **helper()" in n for n in notes)
    assert not [h for h in hz if "cu_seqlens_q" in h.message or "helper" in h.message]


def test_fa2_or_fa3_entries_of_a_call_are_not_checked_against_fa4():
    """A call that may reach FA3's flash_attn_with_kvcache is checked only for its FA4 entries."""
    c = drift_calls()[0]
    c.entries = c.entries + ("flash_attn_interface.flash_attn_with_kvcache",)
    hz, recs, _ = drift.drift(FIX / "drift", [c], [("new", FIX / "fa4_new")], None)
    assert {r.entry for r in recs} == {"flash_attn_func"}


# ----------------------------------------------------------------------------- report, CLI

def test_report_json_contract_and_exit_codes():
    """The issue's contract: a findings list with kind/path/line/message/releases, duplicates
    folded, exit 0 with none and 1 with any."""
    rep = UpgradeReport(te={"spec": "x"}, fa4=[])
    assert rep.exit_code == 0 and rep.to_json()["findings"] == []
    h = Hazard("old-pin", "qa/t.sh", 3, "m", ("4.0.0b11",))
    rep.hazards = [h, h]
    d = rep.to_json()
    assert rep.exit_code == 1 and len(d["findings"]) == 1
    f = d["findings"][0]
    assert {"kind", "path", "line", "message", "releases"} <= set(f) and f["releases"] == ["4.0.0b11"]


def test_renderers_cover_every_hazard(tmp_path):
    """No renderer may drop a finding or the not-checked state of an absent folder."""
    from analyzer.upgrade.render import render
    _, hz = gate_run("gates")
    rep = UpgradeReport(te={"spec": "fixture"}, fa4=[], hazards=hz, checked={"qa/": "not checked (absent)"})
    text = render(rep, "text")
    for h in hz:
        assert f"{h.path}:{h.line} {h.code}" in text
    assert "qa/ not checked (absent)" in text
    sarif = json.loads(render(rep, "sarif"))
    assert len(sarif["runs"][0]["results"]) == len(set(hz))
    md = render(rep, "markdown")
    assert "**gate-overlap** FA4U001" in md and "| `qa/` | not checked (absent) |" in md
    assert max(len(line) for line in md.splitlines()) <= 120   # as audit.md
    assert json.loads(render(rep, "json"))["counts"]["gate-overlap"] == 1


def test_cli_upgrade_on_a_fixture_checkout_offline(cli, tmp_path, monkeypatch):
    """End to end through the CLI with the index and history stubbed: exit 1 with findings, the
    JSON contract, and absent folders stated."""
    from analyzer.upgrade import releases
    import analyzer.upgrade as up
    monkeypatch.setattr(releases, "dist_versions", lambda d: RELEASES.get(d, []))
    monkeypatch.setattr(releases, "fa4_history", lambda vs, te: (
        {v: {"breaks": v in BREAKING, "variant": VARIANT[v]} for v in vs}, []))
    monkeypatch.setattr(up, "_default_calls", lambda root: [])   # the CI fixture has no FA calls
    r = cli("upgrade", "--te", str(FIX / "ci"), "--fa4", str(FIX / "fa4_old"), "--format", "json", "-q")
    assert r.code == 1, r.err
    d = json.loads(r.out)
    kinds = {f["kind"] for f in d["findings"]}
    assert {"fa4-disabled", "old-pin", "same-backend-reference"} <= kinds
    assert d["checked"] == {".github/": "checked", "qa/": "checked", "tests/": "checked"}


def test_cli_bad_te_spec_is_exit_2(cli, tmp_path):
    """A SPEC that names nothing is 'could not analyse' (2), never clean."""
    r = cli("upgrade", "--te", str(tmp_path / "nowhere"))
    assert r.code == 2 and "fa4-audit: error:" in r.err


def test_unparseable_ci_test_file_is_noted_not_silently_clean(tmp_path):
    """A CP test that cannot be parsed must be named, not counted as free of same-backend grading."""
    (tmp_path / "tests").mkdir()
    bad = tmp_path / "tests" / "test_cp.py"
    bad.write_text("def f(:\n    core_attn.set_context_parallel_group(g)\n")
    notes: list[str] = []
    assert ci.same_backend_hazards(tmp_path, [bad], notes) == []
    assert notes and "tests/test_cp.py: not parsed" in notes[0]


def test_written_for_is_the_pin_the_package_names(tmp_path):
    """Positions are judged against the release the code names (the newest when several),
    and against nothing invented when it names none."""
    pkg = tmp_path / "transformer_engine"
    pkg.mkdir()
    (pkg / "utils.py").write_text('steps = """pip install flash-attn-4==4.0.0b11 nvidia-cutlass-dsl"""\n'
                                  'old = "flash_attn_4==4.0.0b8"\n')
    assert drift.written_for_pin(tmp_path, "transformer_engine") == "4.0.0b11"
    (pkg / "utils.py").write_text("x = 1\n")
    assert drift.written_for_pin(tmp_path, "transformer_engine") is None


def test_docs_name_every_kind_and_code():
    """docs/upgrade.md and `upgrade --help` must not go stale when a kind is added."""
    from analyzer.commands.upgrade import DESCRIPTION
    doc = (Path(__file__).parent.parent / "docs" / "upgrade.md").read_text()
    for kind, (code, _) in KINDS.items():
        assert f"`{kind}`" in doc and code in doc, kind
        assert kind in DESCRIPTION and code in DESCRIPTION, kind


def test_offline_without_a_cached_listing_is_exit_2(cli, isolated_cache, monkeypatch):
    """No release listing (offline, empty cache): the gates cannot be evaluated, so the answer
    is 'could not analyse', never a clean 0."""
    monkeypatch.setenv("FA4_AUDIT_OFFLINE", "1")
    r = cli("upgrade", "--te", str(FIX / "ci"), "-q")
    assert r.code == 2 and "cannot list" in r.err


def test_offline_reuses_the_cached_listing(isolated_cache, monkeypatch):
    """A listing cached by an earlier online run is what offline runs evaluate against."""
    from analyzer.upgrade import releases
    memo = isolated_cache / "index" / "flash-attn.json"
    memo.parent.mkdir(parents=True)
    memo.write_text(json.dumps(["2.7.3", "2.8.3"]))
    monkeypatch.setenv("FA4_AUDIT_OFFLINE", "1")
    assert releases.dist_versions("flash_attn") == ["2.7.3", "2.8.3"]
