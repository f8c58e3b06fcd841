"""audit.md / audit.sarif as a reviewer and code scanning see them.

The report is built from records constructed here (the call-site engine's per-release verdicts
included), so these tests do not depend on any analysis. The markdown is read back with a
CommonMark parser (markdown-it-py, GFM tables enabled) the way GitHub would render it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from analyzer.audit_report import (MAX_WIDTH, first_screen, render_json, render_markdown,
                                   render_sarif)
from analyzer.equivalence.model import (Cell, Claim, Emission, EquivalenceTable, Fa4Column,
                                        ResolvedState, Row)
from analyzer.model import AuditReport, CodemodPreview, Finding
from analyzer.sites.model import Binding, CallVerdict, FACall, SitesReport, WindowSite
from analyzer.sources import Source

MarkdownIt = pytest.importorskip("markdown_it").MarkdownIt

ROOT = Path("/home/someone/src/TransformerEngine")       # an absolute path of "this machine"
DPA = "transformer_engine/pytorch/attention/dot_product_attention"
CAUSAL = ResolvedState(True, False, None, 0)
FULL = ResolvedState(False, False, None, None)
EMPTY = ResolvedState(False, True, -1, 0)


def _row(mask, user, causal, window, b36_as_is, b36_band):
    cells = [Cell("4.0.0b11", "as-is", (causal, *window), CAUSAL if causal else FULL, "exact"),
             Cell("4.0.0b11", "normalized", (causal, *window), CAUSAL if causal else FULL, "exact"),
             Cell("4.0.0b36", "as-is", (causal, *window), b36_as_is, b36_band),
             Cell("4.0.0b36", "normalized", (causal, *window), CAUSAL if causal else FULL, "exact")]
    return Row(Emission(mask, user, causal, window), cells)


def _table() -> EquivalenceTable:
    rows = [_row(m, u, True, (-1, 0), EMPTY, "empty")
            for m in ("causal", "padding_causal", "causal_bottom_right") for u in (None, (-1, -1))]
    rows += [_row(m, None, False, (-1, -1), FULL, "exact") for m in ("no_mask", "padding")]
    return EquivalenceTable(
        fa4=[Fa4Column("4.0.0b11", "4.0.0b11", "4.0.0b11", "release"),
             Fa4Column("4.0.0b36", "4.0.0b36", "4.0.0b36", "release")],
        te={"spec": "2.20.2"}, rows=rows,
        claims=[Claim("a", "normalised input gives the intended band", True, 16),
                Claim("b", "normalising is inert where already right", True, 12)],
        emissions=[r.emission for r in rows])


def _call(i, path, line, callee, entry, verdicts=()):
    status = "broken" if any(v.status == "broken" for v in verdicts) else "n/a"
    return FACall(id=f"C{i}", path=path, line=line, col=9, scope="f", callee=callee,
                  entries=(f"flash_attn.cute.interface.{entry}",), versions=("fa4",),
                  bindings=("B1",), windows=("W1",), opaque_windows=(), reaches_fa4=True,
                  coverage="uncovered", coverage_reason="no normaliser", status=status,
                  verdicts=tuple(verdicts))


def _sites(with_verdicts: bool) -> SitesReport:
    broken = (CallVerdict("4.0.0b11", "proved", "pre-2490 resolver reads -1 as unbounded"),
              CallVerdict("4.0.0b36", "broken", f"{DPA}/context_parallel.py:1157 -> FA4",
                          ("causal=True (-1, 0) -> LOCAL -1/0 (empty), intended CAUSAL",)))
    calls = [_call(1, f"{DPA}/backends.py", 1257, "func", "flash_attn_func",
                   broken if with_verdicts else ()),
             _call(2, f"{DPA}/context_parallel.py", 1174, "flash_attn_fwd", "_flash_attn_fwd",
                   broken if with_verdicts else ())]
    long_via = tuple(f"step {k} through {DPA}/context_parallel.py:{1000 + k} " + "x" * 150
                     for k in range(3))
    findings = [Finding("FA4S001", "uncovered-fa4-call", f"{c.callee}(...) can reach FA4 unnormalised",
                        c.path, c.line, c.col, long_via) for c in calls]
    findings.append(Finding("FA4S002", "unwrapped-fa4-binding", "flash_attn_func_v4 is bound to FA4",
                            f"{DPA}/backends.py", 225, 9))
    return SitesReport(root=str(ROOT), package_dir="transformer_engine", files_total=222,
                       files_parsed=2, files_skipped=220, cache_hits=0,
                       bindings=[Binding("B1", f"{DPA}/backends.py", 225, 9, "<module>",
                                         "flash_attn_func_v4", "wrap", ("fa4",),
                                         ("flash_attn.cute.interface.flash_attn_func",))],
                       window_sites=[WindowSite("W1", f"{DPA}/context_parallel.py", 1157, 13,
                                                "window_size_right", "subscript-store", "-1",
                                                ("-1",), False, ("fa4",), ("C2",))],
                       calls=calls, findings=findings)


DIFF = (f"--- a/{DPA}/backends.py\n+++ b/{DPA}/backends.py\n@@ -6,3 +6,4 @@\n import os\n"
        "+import functools\n import sys\n@@ -181,3 +182,20 @@\n x = 1\n"
        + "".join(f"+helper line {k}\n" for k in range(17)) + " y = 2\n")


def _report(*, with_verdicts=False, te_origin="tree", errors=()) -> AuditReport:
    te = Source("te", str(ROOT), te_origin, ROOT, "2.20.2")
    fa4 = [Source("fa4", v, "release", Path(f"/root/.cache/fa4-audit/{v}"), v)
           for v in ("4.0.0b11", "4.0.0b36")]
    return AuditReport(te=te, fa4=fa4, table=_table(), sites=_sites(with_verdicts),
                       codemod=CodemodPreview([f"{DPA}/backends.py"], DIFF), verdict="unsafe",
                       reasons=["3 call-site finding(s): TE's -1 sentinels reach FA4 unnormalised, "
                                "and 4.0.0b36 turn(s) an emitted pair into a wrong band"],
                       errors=list(errors), strict=False,
                       command=f"fa4-audit audit --te {ROOT} --fa4 4.0.0b11 --fa4 4.0.0b36",
                       breaking_fa4=["4.0.0b36"])


def _tokens(md: str):
    return MarkdownIt("commonmark").enable("table").parse(md)


def _outside_code(md: str) -> list[str]:
    out, fenced = [], False
    for line in md.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def test_renders_as_intended_headings_tables_and_details():
    """Guards: markdown that GitHub renders as a wall of text (a table swallowed by a details
    block, two headings with nothing between them, sections out of order)."""
    md = render_markdown(_report())
    tokens = _tokens(md)
    heads = [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert heads == [("h1", "FA4 audit: TransformerEngine 2.20.2 vs flash-attn-4 4.0.0b11, 4.0.0b36"),
                     ("h2", "What breaks, per FA4 release"), ("h2", "Where: FA4 calls"),
                     ("h2", "The fix"), ("h2", "Reproduce (run it from the audited tree's root)")]
    # the verdict is the first thing after the title
    first_para = next(tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "paragraph_open")
    assert first_para.startswith("**UNSAFE** (exit 1)")
    # no heading directly followed by another heading
    kinds = [t.type for t in tokens if t.type.endswith("_open") and t.level == 0]
    assert all(not (a == b == "heading_open") for a, b in zip(kinds, kinds[1:]))
    # tables: the calls table on the first screen, and the ones inside details render as tables
    assert sum(1 for t in tokens if t.type == "table_open") >= 4
    html = [t.content for t in tokens if t.type == "html_block"]
    summaries = [h for h in html if "<summary>" in h]
    assert any("Resolver equivalence" in h for h in summaries)
    assert any("Call-site findings" in h for h in summaries)
    assert any("Full diff" in h for h in summaries)
    assert md.count("<details>") == md.count("</details>")
    # a details block's content is markdown (a blank line after <summary>), not raw HTML text
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert "<table>" in rendered.split("Resolver equivalence", 1)[1].split("</details>", 1)[0]


def test_first_screen_is_short_and_nothing_is_too_wide():
    """Guards: the 342-line, 250-column report of issue 12."""
    md = render_markdown(_report())
    assert len(first_screen(md)) <= 60
    wide = [ln for ln in _outside_code(md) if len(ln) > MAX_WIDTH]
    assert wide == []
    # the long via paths are in the report, inside a code block inside <details>
    assert "step 2 through" in md
    screen = "\n".join(first_screen(md))
    assert "step 2 through" not in screen and "helper line 10" not in screen
    assert "+import functools" in screen          # the short hunk of the fix is on screen


def test_identical_rows_are_collapsed_into_one_counted_line():
    md = render_markdown(_report())
    details = md.split("Resolver equivalence", 1)[1].split("</details>", 1)[0]
    rows = [ln for ln in details.splitlines() if ln.startswith("| ") and not ln.startswith("| rows")]
    # 6 causal rows that differ only in mask type/user window -> one line counting 6; 2 FULL -> 1
    assert len(rows) == 2
    assert rows[0].startswith("| 6 | causal +2 more | True | (-1, 0) |")
    assert rows[1].startswith("| 2 | no_mask +1 more | False | (-1, -1) |")
    screen = "\n".join(first_screen(md))
    assert "**4.0.0b36** (? resolver): 6/8 pairs TE emits get a wrong band" in screen
    assert "**4.0.0b11** (? resolver): every pair TE emits resolves to the intended band" in screen


def test_per_release_call_verdicts_are_shown_when_the_engine_gives_them():
    md = render_markdown(_report(with_verdicts=True))
    screen = "\n".join(first_screen(md))
    assert "| call | callee | FA4 entry point | 4.0.0b11 | 4.0.0b36 |" in screen
    assert "| `backends.py:1257` | `func(...)` | flash_attn_func | proved | broken: causal=True (-1, 0)" in screen
    assert f"paths under `{DPA}/`" in screen.replace("\n", " ")
    assert "pre-2490 resolver reads -1 as unbounded" in md        # the witness, in details
    without = "\n".join(first_screen(render_markdown(_report())))
    assert "| call | callee | FA4 entry point | coverage |" in without


def test_paths_are_relative_to_the_audited_tree():
    """Guards: absolute paths of the machine in the Reproduce line, the Sources table and SARIF."""
    report = _report()
    md = render_markdown(report)
    sarif = render_sarif(report)
    for text in (md, sarif):
        assert str(ROOT) not in text and "/root/.cache" not in text
    assert "fa4-audit audit --te . --fa4 4.0.0b11 --fa4 4.0.0b36" in md
    run = json.loads(sarif)["runs"][0]
    assert "uri" not in run["originalUriBaseIds"]["SRCROOT"]
    assert run["invocations"][0]["commandLine"].startswith("fa4-audit audit --te . ")
    # a tree whose version cannot be told is named by its folder, not its absolute path
    nov = dataclasses.replace(report, te=dataclasses.replace(report.te, version=None))
    head = render_markdown(nov).splitlines()[0]
    assert head == "# FA4 audit: TransformerEngine TransformerEngine (version unknown) vs flash-attn-4 " \
                   "4.0.0b11, 4.0.0b36"
    # the JSON keeps everything
    assert json.loads(render_json(report))["te"]["root"] == str(ROOT)


def test_sarif_results_carry_stable_partial_fingerprints():
    """Guards: code scanning losing track of a finding between runs (no fingerprints), or two
    findings sharing one (one would hide the other)."""
    report = _report(errors=("call sites: could not parse x.py",))
    a = json.loads(render_sarif(report))["runs"][0]["results"]
    b = json.loads(render_sarif(_report(errors=("call sites: could not parse x.py",))))["runs"][0]["results"]
    fps = [r["partialFingerprints"]["fa4AuditFinding/v1"] for r in a]
    assert len(a) == 4 and len(set(fps)) == len(fps)
    assert fps == [r["partialFingerprints"]["fa4AuditFinding/v1"] for r in b]
    assert {r["ruleId"] for r in a} == {"FA4S001", "FA4S002", "FA4E001"}
    # an edit above the finding moves its line; the fingerprint follows it
    moved = _report(errors=("call sites: could not parse x.py",))
    moved.sites.findings[0] = dataclasses.replace(moved.sites.findings[0], line=1300)
    c = json.loads(render_sarif(moved))["runs"][0]["results"]
    assert c[0]["partialFingerprints"] == a[0]["partialFingerprints"]
    assert c[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1300


def test_every_code_in_the_sarif_is_in_the_one_registry():
    from analyzer.rules import ALL_RULES, AUDIT_RULES, UPGRADE_RULES
    from analyzer.sites.rules import RULES

    assert set(AUDIT_RULES) == {"FA4C001", "FA4E001"} and not set(AUDIT_RULES) & set(RULES)
    assert set(ALL_RULES) == set(RULES) | set(AUDIT_RULES) | set(UPGRADE_RULES)
    assert all(code.startswith("FA4U") for code in UPGRADE_RULES)
    run = json.loads(render_sarif(_report(errors=("x",))))["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(ALL_RULES)
    assert all(r["ruleId"] in ALL_RULES for r in run["results"])


def test_report_is_typed_and_importable_from_both_places():
    import typing

    import analyzer.audit
    import analyzer.model

    assert analyzer.audit.AuditReport is analyzer.model.AuditReport
    from analyzer.upgrade.model import UpgradeReport

    hints = typing.get_type_hints(AuditReport, {**vars(analyzer.model), "EquivalenceTable": EquivalenceTable,
                                                "SitesReport": SitesReport, "Source": Source,
                                                "UpgradeReport": UpgradeReport})
    assert hints["table"] == typing.Optional[EquivalenceTable]
    assert hints["sites"] == typing.Optional[SitesReport]
    assert hints["upgrade"] == typing.Optional[UpgradeReport]
    assert _report().exit_code == 1


def test_deterministic():
    assert render_markdown(_report()) == render_markdown(_report())
    assert render_sarif(_report()) == render_sarif(_report())
