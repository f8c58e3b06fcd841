"""Renderers of an :class:`UpgradeReport`: text, markdown, json, sarif. They never compute."""

from __future__ import annotations

import json

from tabulate import tabulate

from analyzer import __version__
from analyzer.upgrade.model import KINDS, UpgradeReport, compact, span


def _summary(rep: UpgradeReport) -> str:
    c = rep.counts()
    n = sum(c.values())
    parts = [f"{v} {k}" for k, v in c.items() if v]
    calls = len({(d.path, d.line) for d in rep.drift})
    rels = compact({d.release for d in rep.drift})
    drift = (f"{calls} FA4-reaching call(s) checked against {', '.join(rels) or 'no release'}"
             f" (written for {rep.written_for or 'unknown'})")
    return (f"{n} upgrade hazard(s){': ' + ', '.join(parts) if parts else ''}; "
            f"{len(rep.gates)} version gate(s) evaluated; {drift}; "
            f"breaking FA4 releases: {span(rep.breaking_fa4) or 'none'}; "
            f"current resolver variant: {rep.current_variant}")


def render_text(rep: UpgradeReport) -> str:
    out = []
    for h in rep.sorted_hazards():
        cert = "" if h.certainty == "proven" else f" ({h.certainty})"
        out.append(f"{h.path}:{h.line} {h.code} [{h.kind}]{cert} {h.message}")
        for r in h.related:
            out.append(f"    see {r}")
    for part, state in sorted(rep.checked.items()):
        out.append(f"{part} {state}")
    for n in rep.notes:
        out.append(f"note: {n}")
    out.append(_summary(rep))
    return "\n".join(out) + "\n"


def render_markdown(rep: UpgradeReport, heading: str = "##") -> str:
    out = [f"{heading} Upgrade hazards", "", _summary(rep), ""]
    rows = [[h.kind, h.code, f"`{h.path}:{h.line}`", h.certainty, span(h.releases) or "-",
             h.message.replace("|", "\\|")] for h in rep.sorted_hazards()]
    if rows:
        out.append(tabulate(rows, headers=["kind", "code", "where", "certainty", "releases", "message"],
                            tablefmt="github", disable_numparse=True, missingval="-"))
    else:
        out.append("No upgrade hazard found.")
    out += ["", "| part | state |", "|---|---|"]
    out += [f"| `{p}` | {s} |" for p, s in sorted(rep.checked.items())]
    if rep.drift:
        by = {}
        for d in rep.drift:
            by.setdefault((d.release, d.status), 0)
            by[(d.release, d.status)] += 1
        out += ["", "API drift (call x entry checks per release):", ""]
        out.append(tabulate([[r, s, str(n)] for (r, s), n in sorted(by.items())],
                            headers=["release", "status", "checks"], tablefmt="github",
                            disable_numparse=True))
    if rep.notes:
        out += [""] + [f"* {n}" for n in rep.notes]
    return "\n".join(out) + "\n"


def render_json(rep: UpgradeReport) -> str:
    d = rep.to_json()
    d["tool_version"] = __version__
    return json.dumps(d, indent=2, sort_keys=False) + "\n"


def sarif_rules() -> list[dict]:
    return [{"id": code, "name": kind, "shortDescription": {"text": desc}}
            for kind, (code, desc) in KINDS.items()]


def sarif_results(rep: UpgradeReport) -> list[dict]:
    out = []
    for h in rep.sorted_hazards():
        out.append({"ruleId": h.code, "level": "error" if h.certainty == "proven" else "warning",
                    "message": {"text": f"[{h.kind}] {h.message}"},
                    "properties": {"kind": h.kind, "certainty": h.certainty, "releases": list(h.releases)},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": h.path, "uriBaseId": "SRCROOT"},
                                                        "region": {"startLine": max(h.line, 1)}}}]})
    return out


def render_sarif(rep: UpgradeReport) -> str:
    doc = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
           "runs": [{"tool": {"driver": {"name": "fa4-audit upgrade", "version": __version__,
                                         "rules": sarif_rules()}},
                     "results": sarif_results(rep)}]}
    return json.dumps(doc, indent=2) + "\n"


def render(rep: UpgradeReport, fmt: str) -> str:
    return {"text": render_text, "markdown": render_markdown, "json": render_json,
            "sarif": render_sarif}[fmt](rep)
