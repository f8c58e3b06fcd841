"""Renderers of an :class:`UpgradeReport`: text, markdown, json, sarif. They never compute."""

from __future__ import annotations

import json

from analyzer import __version__
from analyzer.upgrade.model import KINDS, UpgradeReport, compact, span

MAX_WIDTH = 120            # as audit.md: no line outside a code block wider than this


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


def _wrap(text: str, first: str = "- ", rest: str = "  ") -> list[str]:
    import textwrap
    return textwrap.wrap(text, MAX_WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def render_markdown(rep: UpgradeReport, heading: str = "##") -> str:
    """One bullet per hazard (wrapped at MAX_WIDTH, like audit.md), the CI folders' state, the
    API drift records per release and status, and the notes."""
    out = [f"{heading} Upgrade hazards", ""]
    out += _wrap(_summary(rep), "", "") + [""]
    hz = rep.sorted_hazards()
    for h in hz:
        cert = "" if h.certainty == "proven" else f" ({h.certainty})"
        out += _wrap(f"**{h.kind}** {h.code}{cert} `{h.path}:{h.line}`: {h.message}")
    if not hz:
        out.append("No upgrade hazard found.")
    out += ["", "| part | state |", "|---|---|"]
    out += [f"| `{p}` | {s} |" for p, s in sorted(rep.checked.items())]
    if rep.drift:
        by: dict[tuple, int] = {}
        for d in rep.drift:
            by[(d.release, d.status)] = by.get((d.release, d.status), 0) + 1
        order = {r: i for i, r in enumerate(compact({r for r, _ in by}))}
        out += ["", "API drift, call x entry checks per release:", "", "| release | status | checks |",
                "|---|---|---|"]
        out += [f"| {r} | {s} | {n} |" for (r, s), n in sorted(by.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))]
    if rep.notes:
        out.append("")
        for n in rep.notes:
            out += _wrap(n)
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
