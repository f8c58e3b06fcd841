"""Renderers of a :class:`SitesReport`: text, markdown, json, sarif. They only read the report."""

from __future__ import annotations

import json

from tabulate import tabulate

from analyzer import __version__
from analyzer.sites.model import SitesReport
from analyzer.sites.rules import RULES

FORMATS = ("text", "markdown", "json", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(report: SitesReport, fmt: str) -> str:
    if fmt == "text":
        return _text(report)
    if fmt == "markdown":
        return _markdown(report)
    if fmt == "json":
        return json.dumps(report.to_json(), indent=2, sort_keys=False) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif(report), indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


def _tab(rows, headers, fmt):
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True, missingval="-")


def _summary(r: SitesReport) -> str:
    c = r.counts()
    rel = ", ".join(r.releases) or "-"
    return (f"{c['files']} files ({c['files_parsed']} parsed, {c['files_skipped_by_prefilter']} "
            f"proved unable to reach FA4); {c['bindings']} FA bindings ({c['fa4_bindings']} FA4); "
            f"{c['window_sites']} window sites ({c['window_sites_reaching_fa4']} reach FA4); "
            f"{c['fa_calls']} FA calls ({c['fa4_calls']} reach FA4: {c['fa4_calls_proved']} proved, "
            f"{c['fa4_calls_broken']} broken, {c['fa4_calls_unknown']} unknown; judged on {rel}); "
            f"{c['findings']} broken, {c['unknowns']} unknown, {c['notes']} notes, "
            f"{c['failures']} failures; verdict {r.verdict}")


def _binding_rows(r):
    return [(b.id, f"{b.path}:{b.line}:{b.col}", b.scope, b.name, b.kind, "/".join(b.versions),
             " > ".join(b.wrappers) or "-", "yes" if b.normalised else "no",
             "yes" if b.live else "no") for b in r.bindings]


def _call_rows(r):
    return [(c.id, f"{c.path}:{c.line}:{c.col}", c.scope, c.callee, "/".join(c.versions),
             ",".join(c.bindings) or "-", ",".join(c.windows) or "-", c.status)
            for c in r.calls]


def _verdict_rows(r):
    return [(c.id, f"{c.path}:{c.line}", v.release, v.status, v.witness)
            for c in r.fa4_calls for v in c.verdicts]


def _site_rows(r):
    return [(w.id, f"{w.path}:{w.line}:{w.col}", w.key, w.style, w.value, ", ".join(w.values),
             "/".join(w.versions), ",".join(w.calls)) for w in r.window_sites]


def _text(r: SitesReport) -> str:
    out = []
    for f in r.findings:
        out.append(f"{f.location()} {f.code} [{f.name}] {f.message}")
        for step in f.via:
            out.append(f"    via {step}")
    if r.findings:
        out.append("")
    out.append("FA calls:")
    out.append(_tab(_call_rows(r), ["id", "where", "in", "callee", "reaches", "bindings",
                                    "windows", "status"], "simple"))
    if r.fa4_calls:
        out.append("")
        out.append("FA4 calls, per audited release:")
        for c in r.fa4_calls:
            for v in c.verdicts:
                out.append(f"  {c.id} {c.path}:{c.line} [{v.release}] {v.status}: {v.witness}")
    out.append("")
    out.append(_summary(r))
    return "\n".join(out) + "\n"


def _markdown(r: SitesReport) -> str:
    out = ["## Call sites: windows handed to FlashAttention", "", _summary(r), ""]
    if r.findings:
        out.append("### Findings")
        out.append("")
        out.append(_tab([(f.code, f.name, f.location(), f.message) for f in r.findings],
                        ["code", "rule", "where", "message"], "github"))
        out.append("")
    out.append("### FA bindings")
    out.append("")
    out.append(_tab(_binding_rows(r), ["id", "where", "scope", "name", "kind", "FA", "wrappers",
                                       "normalised", "live"], "github"))
    out.append("")
    out.append("### FA calls")
    out.append("")
    out.append(_tab(_call_rows(r), ["id", "where", "in", "callee", "reaches", "bindings",
                                    "windows", "status"], "github"))
    if r.fa4_calls:
        out.append("")
        out.append("### FA4 calls, per audited release")
        out.append("")
        out.append(_tab(_verdict_rows(r), ["call", "where", "release", "status", "witness"],
                        "github"))
    out.append("")
    out.append("### Window sites")
    out.append("")
    out.append(_tab(_site_rows(r), ["id", "where", "key", "style", "value", "can be", "reaches",
                                    "feeds"], "github"))
    if r.wrappers:
        out.append("")
        out.append("### Normalising wrappers")
        out.append("")
        out.append(_tab([(w.name, w.kind, w.normaliser or "-", "yes" if w.trusted else "no", w.reason)
                         for w in r.wrappers], ["wrapper", "kind", "normaliser", "trusted", "why"],
                        "github"))
    return "\n".join(out) + "\n"


_SARIF_LEVEL = {"error": "error", "failure": "error", "unknown": "warning", "note": "note"}


def fingerprint(f) -> str:
    """Stable across runs and line moves: rule, file, and the message with digits dropped."""
    import hashlib
    import re
    text = re.sub(r"\d+", "#", f.message)
    return hashlib.sha256(f"{f.code}\0{f.path}\0{text}".encode()).hexdigest()[:32]


def sarif(r: SitesReport) -> dict:
    """SARIF 2.1.0: one run, the rules of ``rules.RULES``, one result per finding (its *via*
    as a code flow). Could-not-analyse failures also appear as tool execution notifications
    with ``executionSuccessful: false``."""
    rule_ids = list(RULES)
    rules = []
    for code in rule_ids:
        rule = RULES[code]
        rules.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.what},
            "help": {"text": f"{rule.why}\n\nKnown limitations: {rule.limitations}",
                     "markdown": rules_markdown_one(rule)},
            "defaultConfiguration": {"level": "error"},
            "properties": {"kind": rule.level},
        })
    results = []
    notifications = []
    for f in r.findings:
        res = {
            "ruleId": f.code,
            "ruleIndex": rule_ids.index(f.code) if f.code in RULES else 0,
            "level": _SARIF_LEVEL.get(f.level, "error"),
            "message": {"text": f.message},
            "partialFingerprints": {"fa4AuditFinding/v1": fingerprint(f)},
            "properties": {"fa4AuditLevel": f.level},
        }
        if f.path:
            phys = {"artifactLocation": {"uri": f.path, "uriBaseId": "SRCROOT"}}
            if f.line:
                phys["region"] = {"startLine": f.line, "startColumn": max(f.col, 1)}
            res["locations"] = [{"physicalLocation": phys}]
        if f.via:
            res["codeFlows"] = [{"threadFlows": [{"locations": [
                {"location": {"message": {"text": step}}} for step in f.via]}]}]
        results.append(res)
        if f.level == "failure":
            notifications.append({"level": "error", "message": {"text": f.message},
                                  "descriptor": {"id": f.code}})
    run = {
        "tool": {"driver": {"name": "fa4-audit", "version": __version__,
                            "informationUri": "https://github.com/Dao-AILab/flash-attention/pull/2490",
                            "rules": rules}},
        # relative: the audited tree's root is wherever the reader checks it out
        "originalUriBaseIds": {"SRCROOT": {"uri": "./"}},
        "results": results,
        "invocations": [{"executionSuccessful": r.verdict != "error",
                         "toolExecutionNotifications": notifications}],
        "properties": {"verdict": r.verdict, "counts": r.counts()},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def rules_markdown_one(rule) -> str:
    return "\n".join([
        f"### {rule.code} `{rule.name}`", "",
        f"*{rule.summary}* (level: {rule.level})", "",
        "**What it does**", "", rule.what, "",
        "**Why is this bad?**", "", rule.why, "",
        "**Example**", "", "```python", rule.example, "```", "",
        "**Use instead**", "", "```python", rule.use_instead, "```", "",
        "**Known limitations**", "", rule.limitations, ""])


def rules_markdown() -> str:
    """The rule docs for docs/sites.md (a test checks the file contains this, verbatim)."""
    return "\n".join(rules_markdown_one(r) for r in RULES.values())
