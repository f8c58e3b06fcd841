"""Render an :class:`~analyzer.audit.AuditReport` as Markdown (for a pull request), JSON, SARIF.

Renderers never compute: every number comes from the report's parts.
"""

from __future__ import annotations

import json
from pathlib import Path

from tabulate import tabulate

from analyzer import __version__
from analyzer.audit import AUDIT_SCHEMA_VERSION, AuditReport

VERDICT_WORD = {"safe": "SAFE", "unsafe": "UNSAFE", "error": "ERROR (could not analyse)"}


def _sources_table(report: AuditReport) -> str:
    rows = [["TransformerEngine", report.te.spec, report.te.version or "unknown", report.te.origin, "-", "-"]]
    columns = {c.spec: c for c in report.table.fa4} if report.table is not None else {}
    for s in report.fa4:
        col = columns.get(s.spec)
        variant, fp = (col.variant, col.fingerprint) if col is not None else ("?", "?")
        rows.append(["flash-attn-4", s.spec, s.version or "unknown", s.origin, variant, fp])
    return tabulate(rows, headers=["package", "spec", "version", "origin", "resolver variant", "fingerprint"],
                    tablefmt="github", disable_numparse=True, missingval="-")


def render_markdown(report: AuditReport) -> str:
    from analyzer.equivalence.render import render_table as eq_render
    from analyzer.sites.render import render as sites_render

    out = [f"# fa4-audit: TransformerEngine {report.te.label()} vs flash-attn-4 "
           f"{', '.join(s.label() for s in report.fa4)}", ""]
    out.append(f"**Verdict: {VERDICT_WORD[report.verdict]}**")
    out.append("")
    for r in report.reasons:
        out.append(f"- {r}")
    for e in report.errors:
        out.append(f"- error: {e}")
    out += ["", "Reproduce with:", "", "```", report.command, "```", "", "## Sources", "",
            _sources_table(report), ""]

    out += ["## Resolver equivalence", ""]
    if report.table is not None:
        out.append(eq_render(report.table, "markdown").rstrip())
    else:
        out.append("_not computed (see errors above)_")
    out += ["", "## Call-site coverage", ""]
    if report.sites is not None:
        out.append(sites_render(report.sites, "markdown").rstrip())
    else:
        out.append("_not computed (see errors above)_")
    out += ["", "## What the codemod would change", ""]
    if report.codemod is None:
        out.append("_not run_")
    elif report.codemod.error:
        out.append(f"_the codemod failed: {report.codemod.error}_")
    elif not report.codemod.changed_files:
        out.append("Nothing: every FA4 binding is already wrapped.")
    else:
        out.append(f"`python -m fa4_patch TE_DIR --write` would change "
                   f"{len(report.codemod.changed_files)} file(s): "
                   + ", ".join(f"`{f}`" for f in report.codemod.changed_files))
        out += ["", "```diff", report.codemod.diff.rstrip(), "```"]
    if report.gpu is not None:
        from analyzer.gpu.report import render as gpu_render

        out += ["", "## GPU verification", "", gpu_render(report.gpu, "markdown").rstrip()]
    out += ["", f"_fa4-audit {__version__}, report schema {AUDIT_SCHEMA_VERSION}_", ""]
    return "\n".join(out)


def render_json(report: AuditReport) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=False) + "\n"


def render_sarif(report: AuditReport) -> str:
    """The call-site pass's SARIF, plus one result per failed claim and per audit error."""
    from analyzer.sites.render import render as sites_render

    if report.sites is not None:
        sarif = json.loads(sites_render(report.sites, "sarif"))
    else:
        sarif = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
                 "runs": [{"tool": {"driver": {"name": "fa4-audit", "rules": []}}, "results": []}]}
    run = sarif["runs"][0]
    rules = run["tool"]["driver"].setdefault("rules", [])
    results = run.setdefault("results", [])
    extra_rules = {
        "FA4C001": ("claim-failed", "An equivalence claim about the normalising fix does not hold."),
        "FA4E001": ("audit-error", "A part of the audit could not be analysed (fail closed)."),
    }
    for rid, (name, text) in extra_rules.items():
        if not any(r.get("id") == rid for r in rules):
            rules.append({"id": rid, "name": name, "shortDescription": {"text": text}})
    if report.table is not None:
        for claim in report.table.claims:
            if not claim.holds:
                results.append({"ruleId": "FA4C001", "level": "error",
                                "message": {"text": f"claim '{claim.name}' fails on "
                                                    f"{len(claim.counterexamples)} input(s)"}})
    for e in report.errors:
        results.append({"ruleId": "FA4E001", "level": "error", "message": {"text": e}})
    run.setdefault("invocations", [{"executionSuccessful": report.verdict != "error",
                                    "commandLine": report.command}])
    return json.dumps(sarif, indent=2) + "\n"


def render_all(report: AuditReport) -> dict[str, str]:
    return {"audit.md": render_markdown(report), "audit.json": render_json(report),
            "audit.sarif": render_sarif(report)}


def write_files(files: dict[str, str], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in files.items():
        p = out_dir / name
        p.write_text(text)
        paths.append(p)
    return paths


def write_reports(report: AuditReport, out_dir: Path) -> list[Path]:
    return write_files(render_all(report), out_dir)


def one_line(report: AuditReport) -> str:
    fa4 = ", ".join(s.label() for s in report.fa4)
    head = f"TE {report.te.label()} vs FA4 {fa4}: {VERDICT_WORD[report.verdict]}"
    detail = (report.errors or report.reasons or [""])[0]
    return f"{head}" + (f" -- {detail}" if detail else "")
