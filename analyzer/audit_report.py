"""Render an :class:`~analyzer.model.AuditReport` as Markdown (for a pull request), JSON, SARIF.

``audit.md`` is written for a reviewer who reads one screen:

1. the verdict line;
2. per audited FA4 release, what breaks and where: the pairs TE emits that get a wrong band
   (rows identical in every shown column collapsed into one counted line) and the FA4 calls
   that can pass them, one line each;
3. the fix, as the codemod's diff;
4. how to reproduce it.

Everything long (sources, the full equivalence table, findings with their ``via`` paths,
bindings, window sites, every FA call) goes in ``<details>`` blocks. No line outside a code
block is wider than :data:`MAX_WIDTH`; a table that would be wider is shown as a fenced text
table. Paths are relative to the audited tree; ``audit.json`` keeps everything, absolute
roots included.

Renderers never decide: the verdict, reasons and breaking releases come from the report.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import textwrap
from pathlib import Path

from tabulate import tabulate

from analyzer import __version__
from analyzer.model import AUDIT_SCHEMA_VERSION, EXIT_FOR_VERDICT, AuditReport

VERDICT_WORD = {"safe": "SAFE", "unsafe": "UNSAFE", "unknown": "UNKNOWN (not proved)",
                "no-fa4": "NO FA4 HERE", "error": "ERROR (could not analyse)"}
MAX_WIDTH = 120
_CALLS_SHOWN = 12          # FA4 calls listed on the first screen (the rest: in <details>)


# ----------------------------------------------------------------------------- markdown pieces

def _cell(value) -> str:
    text = "-" if value is None or value == "" else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(headers: list[str], rows: list[list]) -> str:
    """A GitHub table with no padding; a fenced text table when a row would be too wide."""
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |",
             "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    if all(len(ln) <= MAX_WIDTH for ln in lines):
        return "\n".join(lines)
    text = tabulate([[_plain(c) for c in row] for row in rows], headers=headers,
                    tablefmt="simple", disable_numparse=True, missingval="-")
    return "```text\n" + text + "\n```"


def _plain(value) -> str:
    return "-" if value is None or value == "" else str(value).replace("`", "")


def _para(text: str) -> list[str]:
    """A paragraph wrapped at MAX_WIDTH (code spans may wrap: CommonMark reads the break as a space)."""
    return textwrap.wrap(text, MAX_WIDTH, break_long_words=False, break_on_hyphens=False) or [""]


def _bullet(text: str) -> list[str]:
    lines = textwrap.wrap(text, MAX_WIDTH, initial_indent="- ", subsequent_indent="  ",
                          break_long_words=False, break_on_hyphens=False)
    return lines or ["-"]


def _details(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def _code(lang: str, text: str) -> list[str]:
    fence = "````" if "```" in text else "```"
    return [fence + lang, text.rstrip("\n"), fence]


# ----------------------------------------------------------------------------- paths

def _is_path_spec(spec: str) -> bool:
    return os.sep in spec or "/" in spec or spec in (".", "..") or spec.endswith((".whl", ".tar.gz"))


def display_spec(source, audited: bool) -> str:
    """A SPEC as the report shows it: the audited tree is ``.``; another local path only by
    its name (no absolute path of this machine); a version or 'installed' as given."""
    spec = source.spec
    if source.origin in ("tree", "wheel", "sdist") and _is_path_spec(spec):
        return "." if (audited and source.origin == "tree") else Path(spec.rstrip("/")).name
    return spec


def display_command(report: AuditReport) -> str:
    """The reproduce command with the machine's paths replaced (see :func:`display_spec`)."""
    try:
        words = shlex.split(report.command)
    except ValueError:
        return report.command
    subst = {report.te.spec: display_spec(report.te, True)}
    for s in report.fa4:
        subst[s.spec] = display_spec(s, False)
    out = [subst.get(w, w) for w in words]
    return " ".join(w if w in ("&&", "||", ";") else shlex.quote(w) for w in out)


def _common_dir(paths: list[str]) -> str:
    dirs = [p.rsplit("/", 1)[0] + "/" if "/" in p else "" for p in paths]
    if not dirs:
        return ""
    prefix = os.path.commonprefix(dirs)
    return prefix[: prefix.rfind("/") + 1]


def _short(path: str, base: str) -> str:
    return path[len(base):] if base and path.startswith(base) else path


# ----------------------------------------------------------------------------- sections

def _label(source, audited: bool) -> str:
    """A source's short name for headings: its version, else its SPEC without machine paths."""
    if source.version:
        return source.version
    shown = display_spec(source, audited)
    if shown == "." and source.root is not None:
        return f"{Path(str(source.spec).rstrip('/')).name or '.'} (version unknown)"
    return shown


def _title(report: AuditReport) -> str:
    fa4 = ", ".join(_label(s, False) for s in report.fa4)
    return f"# FA4 audit: TransformerEngine {_label(report.te, True)} vs flash-attn-4 {fa4}"


def _verdict_lines(report: AuditReport) -> list[str]:
    head = f"**{VERDICT_WORD[report.verdict]}** (exit {EXIT_FOR_VERDICT[report.verdict]})"
    items = [f"error: {e}" for e in report.errors] + list(report.reasons)
    if not items:
        return [head]
    out = _para(f"{head}: {items[0]}")
    for extra in items[1:]:
        out += _bullet(extra)
    return out


def _columns(report: AuditReport) -> list:
    return list(report.table.fa4) if report.table is not None else []


def _bad_groups(report: AuditReport, label: str) -> list[tuple[tuple, list]]:
    """As-is cells of column ``label`` with a wrong band, grouped by what the reader sees."""
    groups: dict[tuple, list] = {}
    for row in report.table.te_rows:
        for c in row.cells:
            if c.fa4 == label and c.input == "as-is" and c.band not in ("exact", "error"):
                key = (row.emission.causal, tuple(row.window), c.label(), c.band)
                groups.setdefault(key, []).append(row.emission.mask_type)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), repr(kv[0])))


def _window(w) -> str:
    return "(" + ", ".join("None" if v is None else str(v) for v in w) + ")"


def _release_lines(report: AuditReport) -> list[str]:
    """One line per audited FA4 release: does it break TE's pairs, and which."""
    out = []
    total = len(report.table.te_rows)
    for col in _columns(report):
        groups = _bad_groups(report, col.label)
        bad = sum(len(m) for _, m in groups)
        head = f"**{col.label}** ({col.variant} resolver):"
        if not groups:
            out += _bullet(f"{head} every pair TE emits resolves to the intended band (0/{total} wrong).")
            continue
        shown = "; ".join(f"causal={k[0]} `{_window(k[1])}` -> {k[2]} ({k[3]} band, {len(m)} rows)"
                          for k, m in groups[:2])
        more = f"; and {len(groups) - 2} more pair(s)" if len(groups) > 2 else ""
        out += _bullet(f"{head} {bad}/{total} pairs TE emits get a wrong band: {shown}{more}.")
    return out


_PAIR = re.compile(r"causal=\w+ [(\[][^)\]]*[)\]]")


def _short_release(label: str) -> str:
    """'post-2490 (4.0.0b30..4.0.0b36)' -> 'post-2490' (the range goes in the lead line)."""
    return label.split(" (", 1)[0]


def _call_status(call, label: str) -> str:
    for v in call.verdicts:
        if v.release == label:
            if v.status != "broken" or not v.pairs:
                return v.status
            more = f" +{len(v.pairs) - 1}" if len(v.pairs) > 1 else ""
            m = _PAIR.match(v.pairs[0])
            pair = m.group(0) if m else v.pairs[0].split(" -> ")[0]
            return f"broken: {pair}{more}"   # the full pairs and the path: in details
    return "-"


def _calls_section(report: AuditReport) -> list[str]:
    sites = report.sites
    calls = sites.fa4_calls
    if not calls:
        return _para("No call in the tree reaches FA4.")
    # the releases (or resolver variants) the call verdicts are given for, in first-seen order
    labels: list[str] = []
    for c in calls:
        for v in c.verdicts:
            if v.release not in labels:
                labels.append(v.release)
    per_release = bool(labels)
    base = _common_dir([c.path for c in calls])
    rows = []
    for c in calls[:_CALLS_SHOWN]:
        where = f"`{_short(c.path, base)}:{c.line}`"
        names = [e.rsplit(".", 1)[-1] for e in c.entries]
        entries = ", ".join(names) if len(names) <= 2 else f"{names[0]} +{len(names) - 1} more"
        if per_release:
            rows.append([where, f"`{c.callee}(...)`", entries, *(_call_status(c, l) for l in labels)])
        else:
            rows.append([where, f"`{c.callee}(...)`", entries, c.coverage])
    short = [_short_release(lb) for lb in labels]
    if len(set(short)) != len(short):
        short = labels
    headers = ["call", "callee", "FA4 entry point", *(short if per_release else ["coverage"])]
    c = sites.counts()
    lead = (f"{c['fa4_calls']} FA4-reaching call(s), {c['fa4_calls_uncovered']} without a checked "
            f"normaliser; {c['fa4_bindings']} FA4 binding(s), {c['fa4_bindings_unwrapped']} unwrapped")
    ranges = [lb for lb, sh in zip(labels, short) if lb != sh]
    if ranges:
        lead += "; verdicts per resolver: " + ", ".join(ranges)
    out = _para(lead + (f"; paths under `{base}`:" if base else ":"))
    out += ["", md_table(headers, rows)]
    if len(calls) > _CALLS_SHOWN:
        out += ["", f"... and {len(calls) - _CALLS_SHOWN} more FA4 call(s): see *Every FA call* below."]
    return out


def _fix_section(report: AuditReport) -> list[str]:
    cm = report.codemod
    if cm is None:
        return _para("The codemod's dry run was not part of this audit.")
    if cm.error:
        return _para(f"The codemod could not patch this tree: {cm.error}")
    if not cm.changed_files:
        return _para("Nothing to change: every FA4 binding is already wrapped.")
    files = ", ".join(f"`{f}`" for f in cm.changed_files)
    short, long_ = _split_hunks(cm.diff)
    added = sum(n for _, n in long_)
    text = (f"`python -m fa4_patch . --write` normalises negative window bounds to `None` at every FA4 "
            f"binding ({files})")
    if long_:
        text += (f"; the short hunks are below, the {added} added lines of the normaliser itself are "
                 f"in *Full diff*")
    out = _para(text + ":") + [""] + _code("diff", "".join(short) if short else cm.diff)
    if long_:
        out += [""] + _details(f"Full diff ({len(cm.diff.splitlines())} lines)", _code("diff", cm.diff))
    return out


_SHORT_HUNK = 12


def _split_hunks(diff: str) -> tuple[list[str], list[tuple[str, int]]]:
    """(file headers and hunks of at most _SHORT_HUNK lines, [(long hunk, added lines)])."""
    short: list[str] = []
    long_: list[tuple[str, int]] = []
    header: list[str] = []
    hunk: list[str] = []

    def flush():
        if not hunk:
            return
        if len(hunk) - 1 <= _SHORT_HUNK:
            short.extend(header)
            header.clear()
            short.extend(hunk)
        else:
            long_.append(("".join(hunk), sum(1 for ln in hunk[1:] if ln.startswith("+"))))
        hunk.clear()

    for line in diff.splitlines(keepends=True):
        if line.startswith("--- "):
            flush()
            header[:] = [line]
        elif line.startswith("+++ ") and header:
            header.append(line)
        elif line.startswith("@@"):
            flush()
            hunk.append(line)
        else:
            hunk.append(line)
    flush()
    return short, long_


def _sources_table(report: AuditReport) -> str:
    rows = [["TransformerEngine", display_spec(report.te, True), report.te.version or "unknown",
             report.te.origin, "-", "-"]]
    columns = {c.spec: c for c in _columns(report)}
    for s in report.fa4:
        col = columns.get(s.spec)
        variant, fp = (col.variant, col.fingerprint) if col is not None else ("?", "?")
        rows.append(["flash-attn-4", display_spec(s, False), s.version or "unknown", s.origin, variant, fp])
    return md_table(["package", "spec", "version", "origin", "resolver", "fingerprint"], rows)


def _equivalence_details(report: AuditReport) -> list[str]:
    """The full table with rows identical in every shown column collapsed into one counted row."""
    t = report.table
    cols = [(c.label, inp) for c in t.fa4 for inp in ("as-is", "normalized")]
    groups: dict[tuple, list[str]] = {}
    for row in t.rows:
        cells = {(c.fa4, c.input): c for c in row.cells}
        shown = tuple(cells[k].label() + ("" if cells[k].band == "exact" else f" ({cells[k].band})")
                      if k in cells else "-" for k in cols)
        key = (row.emission.causal, _window(row.window), shown, row.emission.from_te)
        groups.setdefault(key, []).append(row.emission.mask_type)
    rows = []
    for (causal, window, shown, from_te), masks in sorted(
            groups.items(), key=lambda kv: (kv[0][3] is False, -len(kv[1]), kv[0][0], kv[0][1])):
        kinds = sorted(set(masks))
        who = kinds[0] if len(kinds) == 1 else f"{kinds[0]} +{len(kinds) - 1} more"
        rows.append([str(len(masks)), who if from_te else "direct call (not TE)", causal, window, *shown])
    headers = ["rows", "emitted by", "causal", "window",
               *(f"{label} {'as-is' if inp == 'as-is' else 'norm.'}" for label, inp in cols)]
    out = _para(t.caption() + ".") + [""]
    out += [md_table(headers, rows), ""]
    out += ["Claims:", ""]
    for cl in t.claims:
        out += _bullet(f"({cl.name}) {cl.text}: {'holds' if cl.holds else 'FAILS'} "
                       f"({cl.checked} checked, {len(cl.counterexamples)} counterexample(s))")
    for note in t.notes:
        out += _bullet(f"note: {note}")
    return out


def _findings_details(report: AuditReport) -> list[str]:
    lines = []
    for f in report.sites.findings:
        lines.append(f"{f.location()} {f.code} [{f.name}] {f.message}")
        lines += [f"    via {v}" for v in f.via]
    return _code("text", "\n".join(lines) or "no findings")


def _under(base: str) -> list[str]:
    return [f"Paths under `{base}`:", ""] if base else []


def _bindings_details(report: AuditReport) -> list[str]:
    base = _common_dir([b.path for b in report.sites.bindings])
    rows = [[b.id, f"{_short(b.path, base)}:{b.line}", b.name, b.kind, "/".join(b.versions),
             " <- ".join(b.wrappers) or "-", "yes" if b.normalised else "no"]
            for b in report.sites.bindings]
    return _under(base) + [md_table(["id", "where", "name", "kind", "FA", "wrappers", "normalised"], rows)]


def _windows_details(report: AuditReport) -> list[str]:
    base = _common_dir([w.path for w in report.sites.window_sites])
    rows = [[w.id, f"{_short(w.path, base)}:{w.line}", w.key, w.value, ", ".join(w.values),
             ",".join(w.calls) or "-"] for w in report.sites.window_sites]
    return _under(base) + [md_table(["id", "where", "key", "value", "can be", "calls"], rows)]


def _calls_details(report: AuditReport) -> list[str]:
    rows = []
    base = _common_dir([c.path for c in report.sites.calls])
    for c in report.sites.calls:
        verdicts = "; ".join(f"{v.release}: {v.status}" for v in c.verdicts) or "-"
        rows.append([c.id, f"{_short(c.path, base)}:{c.line}", c.callee, "/".join(c.versions),
                     c.coverage, verdicts, ",".join(c.windows) or "-"])
    out = _under(base) + [md_table(["id", "where", "callee", "reaches", "coverage", "per release",
                                    "windows"], rows)]
    witnesses = [f"{c.id} {c.path}:{c.line} {v.release} {v.status}: {v.witness}"
                 + "".join(f"\n    pair {p}" for p in v.pairs)
                 for c in report.sites.calls for v in c.verdicts]
    if witnesses:
        out += ["", "Witnesses:", ""] + _code("text", "\n".join(witnesses))
    return out


def render_markdown(report: AuditReport) -> str:
    out = [_title(report), ""]
    out += _verdict_lines(report) + [""]
    if report.table is not None:
        out += ["## What breaks, per FA4 release", ""] + _release_lines(report) + [""]
    if report.sites is not None:
        out += ["## Where: FA4 calls", ""] + _calls_section(report) + [""]
    out += ["## The fix", ""] + _fix_section(report) + [""]
    if out[-2:] == ["", ""]:
        out.pop()
    if getattr(report, "upgrade", None) is not None:   # fa4-audit upgrade's own section
        from analyzer.upgrade.render import render_markdown as upgrade_md
        out += upgrade_md(report.upgrade).rstrip("\n").splitlines() + [""]
    how = " (run it from the audited tree's root)" if display_spec(report.te, True) == "." else ""
    out += [f"## Reproduce{how}", ""]
    out += _code("sh", display_command(report) + "   # exit 0 safe or no FA4, 1 unsafe or unknown, 2 error")
    out += [""]

    out += _details("Sources", [_sources_table(report)])
    if report.table is not None:
        out += _details("Resolver equivalence: every pair TE emits, through every audited resolver",
                        _equivalence_details(report))
    if report.sites is not None:
        n = len(report.sites.findings)
        out += _details(f"Call-site findings ({n}) with their <code>via</code> paths",
                        _findings_details(report))
        out += _details(f"Every FA call ({len(report.sites.calls)}), with per-release verdicts",
                        _calls_details(report))
        out += _details(f"FA bindings ({len(report.sites.bindings)}: FA2, FA3 and FA4)",
                        _bindings_details(report))
        out += _details(f"Window sites ({len(report.sites.window_sites)})", _windows_details(report))
    if report.gpu is not None:
        from analyzer.gpu.report import render as gpu_render

        out += _details("GPU verification", _code("text", gpu_render(report.gpu, "text")))
    out += ["", f"_fa4-audit {__version__}, report schema {AUDIT_SCHEMA_VERSION}; "
            f"`audit.json` holds every record._", ""]
    return "\n".join(out)


def render_json(report: AuditReport) -> str:
    d = report.to_json()
    if getattr(report, "upgrade", None) is not None:   # fa4-audit upgrade's findings
        d["upgrade"] = report.upgrade.to_json()
    return json.dumps(d, indent=2, sort_keys=False) + "\n"


# ----------------------------------------------------------------------------- SARIF

_LINE_REF = re.compile(r":\d+(:\d+)?\b")


def _fingerprint(rule: str, path: str, message: str, ordinal: int) -> str:
    """Stable across runs and across edits that only move lines: rule, file, the message with
    line numbers removed, and the ordinal among otherwise equal results."""
    text = "\0".join([rule, path, _LINE_REF.sub("", message), str(ordinal)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def render_sarif(report: AuditReport) -> str:
    """The call-site pass's SARIF, plus one result per failed claim and per audit error; every
    result carries ``partialFingerprints``; no absolute path of this machine."""
    from analyzer.rules import ALL_RULES
    from analyzer.sites.render import SARIF_SCHEMA, sarif as sites_sarif

    if report.sites is not None:
        sarif = sites_sarif(report.sites)
    else:
        sarif = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
                 "runs": [{"tool": {"driver": {"name": "fa4-audit", "version": __version__,
                                               "rules": []}}, "results": []}]}
    run = sarif["runs"][0]
    # SRCROOT is the audited tree: code scanning resolves it to the repository checkout
    run["originalUriBaseIds"] = {"SRCROOT": {"description": {"text": "the audited tree's root"}}}
    rules = run["tool"]["driver"].setdefault("rules", [])
    results = run.setdefault("results", [])
    for rule in ALL_RULES.values():      # every code fa4-audit can emit, from the one registry
        if not any(r.get("id") == rule.code for r in rules):
            rules.append({"id": rule.code, "name": rule.name,
                          "shortDescription": {"text": rule.summary},
                          "fullDescription": {"text": rule.what},
                          "defaultConfiguration": {"level": "error"},
                          "properties": {"kind": rule.level}})
    if report.table is not None:
        for claim in report.table.claims:
            if not claim.holds:
                results.append({"ruleId": "FA4C001", "level": "error",
                                "message": {"text": f"claim '{claim.name}' fails on "
                                                    f"{len(claim.counterexamples)} input(s)"}})
    for e in report.errors:
        results.append({"ruleId": "FA4E001", "level": "error", "message": {"text": e}})
    if getattr(report, "upgrade", None) is not None:   # fa4-audit upgrade: rules FA4U*
        from analyzer.upgrade.render import sarif_results, sarif_rules
        rules += [r for r in sarif_rules() if not any(x.get("id") == r["id"] for x in rules)]
        results += sarif_results(report.upgrade)
    seen: dict[tuple, int] = {}
    for res in results:
        loc = res.get("locations", [{}])[0].get("physicalLocation", {})
        path = loc.get("artifactLocation", {}).get("uri", "")
        key = (res["ruleId"], path, _LINE_REF.sub("", res["message"]["text"]))
        ordinal = seen.get(key, 0)
        seen[key] = ordinal + 1
        res["partialFingerprints"] = {
            "fa4AuditFinding/v1": _fingerprint(res["ruleId"], path, res["message"]["text"], ordinal)}
    invocations = run.setdefault("invocations", [{}])
    invocations[0]["executionSuccessful"] = report.verdict != "error"
    invocations[0]["commandLine"] = display_command(report)
    run.setdefault("properties", {})["verdict"] = report.verdict
    return json.dumps(sarif, indent=2) + "\n"


# ----------------------------------------------------------------------------- files

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


def first_screen(markdown: str) -> list[str]:
    """The lines a reviewer sees without opening anything: outside every ``<details>`` block
    (code blocks included), plus each closed block's summary line. Used by the tests."""
    out, depth = [], 0
    for line in markdown.splitlines():
        s = line.strip()
        if s.startswith("<details"):
            depth += 1
            continue
        if s.startswith("</details"):
            depth -= 1
            continue
        if depth == 0 or (depth == 1 and s.startswith("<summary>")):   # a closed block shows its summary
            out.append(line)
    return out
