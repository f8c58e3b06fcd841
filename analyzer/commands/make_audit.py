"""fa4-audit make-audit: what `make audit` runs -- the released TE tree and the same tree patched."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP

from pathlib import Path

from analyzer import EXIT_CLEAN, EXIT_ERROR

NAME = "make-audit"
HELP = COMMAND_HELP["make-audit"]
DESCRIPTION = """\
Audit a TransformerEngine release twice against the given flash-attn-4 releases: as released,
and in a copy patched by `python -m fa4_patch --write` (kept in the cache). Writes DIR/released/ and
DIR/patched/ (audit.md, audit.json, audit.sarif each) and DIR/summary.md, and prints both
verdicts. The exit status says whether the audits RAN, not what they found: 0 when both ran
(whatever the verdicts), 2 when either could not analyse. Both audits and the patched copy are
cached by content: run again with nothing changed, nothing is recomputed (--no-cache forces it).

examples:
  fa4-audit make-audit                                  # TE 2.20.2 vs FA4 4.0.0b11 and newest
  fa4-audit make-audit --te 2.19.0 --fa4 b36 --out /tmp/a
"""


def add_arguments(p):
    p.add_argument("--te", default="2.20.2", metavar="SPEC", help="TransformerEngine SPEC (default 2.20.2)")
    p.add_argument("--fa4", action="append", default=None, metavar="SPEC",
                   help="flash-attn-4 SPEC, repeatable (default: 4.0.0b11, TE's CI pin, and newest)")
    p.add_argument("--out", default="audit-out", metavar="DIR")
    p.add_argument("--strict", action="store_true")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute both audits (and the patched copy's audit) even when the "
                        "same inputs were audited before")


def run(args, stdout, stderr) -> int:
    from analyzer.audit import (audit_key, cached_reports, patched_copy, reproduce_command,
                                resolve_inputs, store_reports)
    from analyzer.audit_report import write_files
    from analyzer.model import EXIT_FOR_VERDICT
    from analyzer.progress import Progress

    fa4 = args.fa4 or ["4.0.0b11", "newest"]
    progress = Progress(stderr, quiet=args.quiet)
    out = Path(args.out)
    te, fa4_sources = resolve_inputs(args.te, fa4, progress)
    # Both audits are cached by content (every byte of TE, of each FA4 release and of this
    # tool, and the options): with nothing changed, neither the patched copy nor either audit
    # is redone. The patched tree is a function of TE's bytes and fa4_patch's code, both in the
    # key, so the patched audit's key needs no patched copy to be computed.
    jobs = [("released", te, reproduce_command(args.te, fa4, args.strict)),
            ("patched", None, "python -m fa4_patch TE_DIR --write && "
                              + reproduce_command("TE_DIR", fa4, args.strict))]
    results = {}
    for name, source, command in jobs:
        key = audit_key(te, fa4_sources, {"strict": args.strict, "command": command,
                                          "make-audit": name})
        hit = None if args.no_cache else cached_reports(key)
        if hit is None:
            if source is None:
                progress.note("patching a copy of TE")
                source = patched_copy(te)
            hit = _audit(source, fa4, fa4_sources, args.strict, command, progress)
            store_reports(key, hit["files"], hit["verdict"], hit["one_line"])
        write_files(hit["files"], out / name)
        results[name] = hit
    lines = [f"as released: {results['released']['one_line']}",
             f"patched:     {results['patched']['one_line']}"]
    (out / "summary.md").write_text(
        "# fa4-audit summary\n\n" + "\n".join(f"- {ln}" for ln in lines) +
        "\n\nReports: `released/audit.md`, `patched/audit.md` (and .json, .sarif beside them).\n")
    from analyzer.progress import colour_verdicts, use_colour

    colour = use_colour(stdout, args.color)
    stdout.write("\n".join(colour_verdicts(ln, colour) for ln in lines) + "\n")
    stdout.write(f"reports: {out}/released/audit.md, {out}/patched/audit.md\n")
    # the audits' own decisions: "ran" means neither decided "could not analyse"
    ran = all(EXIT_FOR_VERDICT.get(r["verdict"], EXIT_ERROR) != EXIT_ERROR
              for r in results.values())
    return EXIT_CLEAN if ran else EXIT_ERROR


def _audit(source, fa4_specs, fa4_sources, strict, command, progress) -> dict:
    from analyzer.audit import run_audit
    from analyzer.audit_report import one_line, render_all

    report = run_audit(source.spec, fa4_specs, strict=strict, progress=progress,
                       te_source=source, fa4_sources=fa4_sources, command=command)
    return {"files": render_all(report), "verdict": report.verdict, "one_line": one_line(report)}
