"""The equivalence table and its claims: fixtures that break each claim, a correct resolver,
fail-closed errors, and the real b11 / b36 / TE 2.20.2 result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.equivalence.render import render_table
from analyzer.equivalence.table import build_table
from analyzer.sources import resolve

FIX = Path(__file__).parent / "fixtures" / "resolvers"


def fixture_source(name):
    return resolve("fa4", str(FIX / name))


def causal_row(table, user_window="None", mask="causal"):
    (row,) = [r for r in table.rows if r.emission.mask_type == mask
              and repr(r.emission.user_window) == user_window]
    return row


def test_resolver_that_reads_none_as_zero_breaks_claim_a():
    """Claim (a) must fail, with the counterexample, when normalised input is mis-resolved."""
    t = build_table([fixture_source("breaks_claim_a")], None, simulate=False)
    a, b = t.claims
    assert not a.holds
    ex = [c for c in a.counterexamples if c["mask_type"] == "causal" and c["user_window"] == "None"]
    assert ex and ex[0]["mode"] == "LOCAL 0/0" and ex[0]["band"] == "narrower"
    assert t.verdict == "unsafe" and t.exit_code == 1
    # as-is the same resolver is right on TE's causal pair: it is the normalisation that fails
    row = causal_row(t)
    assert [c.label() for c in row.cells] == ["CAUSAL", "LOCAL 0/0"]


def test_resolver_that_changes_state_under_normalisation_breaks_claim_b_only():
    """Same band, different resolved state: (a) holds, (b) fails, naming both states."""
    t = build_table([fixture_source("breaks_claim_b")], None, simulate=False)
    a, b = t.claims
    assert a.holds and not b.holds
    ex = b.counterexamples[0]
    assert ex["as_is"] == "CAUSAL" and ex["normalized"] == "LOCAL None/0"
    assert t.verdict == "unsafe"
    text = render_table(t, "text")
    assert "(b) normalising is inert" in text and "FAILS" in text
    assert "as-is CAUSAL, normalized LOCAL None/0" in text


def test_correct_resolver_is_clean_and_rows_are_all_exact():
    t = build_table([fixture_source("decorated")], None, simulate=False)
    assert all(c.band == "exact" for r in t.te_rows for c in r.cells)
    assert all(cl.holds for cl in t.claims) and t.verdict == "safe" and t.exit_code == 0
    assert t.differing == 0


def test_post_2490_rule_is_unsafe_and_differing_rows_come_first():
    """renamed fixture = the post-#2490 rule in my own words: a NEW variant, still evaluated."""
    t = build_table([fixture_source("renamed")], None, simulate=False)
    assert any("new variant" in n for n in t.notes)
    first = t.rows[0]
    assert first.differs and first.emission.causal and first.window == (-1, 0)
    flags = [r.differs for r in t.te_rows]
    assert flags == sorted(flags, reverse=True)
    assert t.verdict == "unsafe"


def test_arbitrary_and_rejected_pairs_are_not_rows_but_are_recorded():
    t = build_table([fixture_source("decorated")], None, simulate=False)
    assert not any(r.emission.mask_type == "arbitrary" for r in t.rows)
    assert any(e.mask_type == "arbitrary" and e.emitted for e in t.emissions)
    assert any(e.rejected and "AssertionError" in e.rejected for e in t.emissions)
    cp = [r for r in t.rows if r.emission.origin.startswith("context_parallel")]
    assert cp and any(r.emission.causal and r.window == (-1, 0) for r in cp)


def test_a_transcription_that_disagrees_makes_the_table_an_error(monkeypatch):
    """Pretend the renamed fixture's fingerprint is the pre-#2490 variant: the check must
    catch the behavioural difference and fail closed (exit 2)."""
    import transcriptions
    from analyzer.equivalence import extract

    pre = transcriptions.get("pre-2490")
    monkeypatch.setattr(transcriptions, "by_fingerprint",
                        lambda fp, kind=None: pre if kind in (None, "fa4-resolver") else None)
    t = build_table([fixture_source("renamed")], None, simulate=False)
    assert t.errors and "causal=" in t.errors[0]
    assert t.verdict == "error" and t.exit_code == 2
    assert extract.name_variant("x", "fa4-resolver") == "pre-2490"


def test_cli_exit_codes_clean_findings_error(cli):
    ok = cli("table", "--fa4", str(FIX / "decorated"), "--no-simulate")
    assert ok.code == 0, ok.err
    bad = cli("table", "--fa4", str(FIX / "renamed"), "--no-simulate")
    assert bad.code == 1 and "LOCAL -1/0 (empty)" in bad.out
    missing = cli("table", "--fa4", str(FIX / "missing"))
    assert missing.code == 2 and missing.err.count("\n") == 1 and "Traceback" not in missing.err
    refused = cli("table", "--fa4", str(FIX / "loops"))
    assert refused.code == 2 and "refused to evaluate" in refused.err
    usage = cli("table")
    assert usage.code == 2


def test_help_states_the_exit_statuses(cli, capsys):
    r = cli("table", "--help")
    text = r.out + capsys.readouterr().out  # argparse writes --help to sys.stdout
    assert r.code == 0 and "exit status" in text and "  2  something could not" in text


def test_json_has_the_documented_shape(cli):
    r = cli("table", "--fa4", str(FIX / "renamed"), "--format", "json", "--no-simulate")
    d = json.loads(r.out)
    assert set(d) >= {"fa4", "te", "rows", "claims"}
    assert set(d["fa4"][0]) >= {"spec", "version", "variant", "fingerprint"}
    assert set(d["te"]) >= {"spec", "version"}
    row = d["rows"][0]
    assert set(row) >= {"mask_type", "user_window", "causal", "window", "cells"}
    assert set(row["cells"][0]) >= {"fa4", "input", "mode", "left", "right", "band"}
    assert {c["input"] for c in row["cells"]} == {"as-is", "normalized"}
    assert [c["name"] for c in d["claims"]] == ["a", "b"]
    assert all(set(c) >= {"name", "holds", "counterexamples"} for c in d["claims"])


# ----------------------------------------------------------------------------- real releases

@pytest.fixture(scope="module")
def real_table():
    fa4 = [resolve("fa4", "4.0.0b11"), resolve("fa4", "4.0.0b36")]
    return build_table(fa4, resolve("te", "2.20.2"))


@pytest.mark.network
def test_te_causal_pair_reads_causal_causal_empty_causal(real_table):
    """The issue's acceptance row: b11 as-is, b11 normalised, b36 as-is, b36 normalised."""
    row = causal_row(real_table)
    assert row.window == (-1, 0) and row.emission.causal
    assert [c.label() for c in row.cells] == ["CAUSAL", "CAUSAL", "LOCAL -1/0", "CAUSAL"]
    assert [c.band for c in row.cells] == ["exact", "exact", "empty", "exact"]
    assert row.cells[2].relerr == 1.0
    assert [col.variant for col in real_table.fa4] == ["pre-2490", "post-2490"]
    assert real_table.te["variant"] == "te-check-set-window-size"
    assert all(cl.holds for cl in real_table.claims)
    assert not real_table.errors and real_table.verdict == "unsafe"


@pytest.mark.network
def test_markdown_rendering_of_the_real_table(real_table):
    md = render_table(real_table, "markdown")
    lines = md.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| mask type"))
    first = lines[header + 2]
    assert first.split("|")[1].strip() == "causal"
    cells = [c.strip() for c in first.split("|")[5:9]]
    assert cells == ["CAUSAL", "CAUSAL", "LOCAL -1/0 (empty)", "CAUSAL"]
    n = len(real_table.te_rows)
    assert f"compared {n}/{n} emitted pairs" in md and "direct-call pair" in md
    assert "(0, 0)" in md  # exact values: tabulate must not parse numbers


@pytest.mark.network
def test_real_noncausal_minus_one_zero_pair_is_never_emitted(real_table):
    """TE rewrites (-1, 0) to (-1, -1) for non-causal masks, so that pair only reaches FA4
    with causal=True; the table must reflect what TE really emits."""
    assert not any(not r.emission.causal and r.window == (-1, 0) for r in real_table.te_rows)
    # ... but the table still shows it, for users who call FA4 directly, outside the verdict
    (direct,) = [r for r in real_table.rows if not r.emission.from_te]
    assert (direct.emission.causal, direct.window) == (False, (-1, 0))
    assert [c.band for c in direct.cells][2] == "empty"
    assert real_table.rows[-1] is direct
    warned = [e for e in real_table.emissions
              if e.mask_type == "no_mask" and e.user_window == (-1, 0)]
    assert warned[0].window == (-1, -1) and warned[0].warnings


def test_real_subprocess_run_exits_1_with_the_table_on_stdout():
    """The CLI as a real process: results on stdout, exit status from the verdict."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "analyzer", "table", "--fa4",
                           str(FIX / "renamed"), "--no-simulate", "--format", "markdown"],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "| causal " in proc.stdout and "LOCAL -1/0 (empty)" in proc.stdout
    assert proc.stderr == ""
