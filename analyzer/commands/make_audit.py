"""fa4-audit make-audit: what `make audit` runs -- the released TE tree and the same tree patched."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP

import shutil
from pathlib import Path

from analyzer import EXIT_CLEAN, EXIT_ERROR

NAME = "make-audit"
HELP = COMMAND_HELP["make-audit"]
DESCRIPTION = """\
Audit a TransformerEngine release twice against the given flash-attn-4 releases: as released,
and in a temporary copy patched by `python -m fa4_patch --write`. Writes DIR/released/ and
DIR/patched/ (audit.md, audit.json, audit.sarif each) and DIR/summary.md, and prints both
verdicts. The exit status says whether the audits RAN, not what they found: 0 when both ran
(whatever the verdicts), 2 when either could not analyse.

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


def run(args, stdout, stderr) -> int:
    from analyzer.audit import patched_copy, reproduce_command, resolve_inputs, run_audit
    from analyzer.audit_report import one_line, write_reports
    from analyzer.progress import Progress

    fa4 = args.fa4 or ["4.0.0b11", "newest"]
    progress = Progress(stderr, quiet=args.quiet)
    out = Path(args.out)
    te, fa4_sources = resolve_inputs(args.te, fa4, progress)
    released = run_audit(args.te, fa4, strict=args.strict, progress=progress, te_source=te,
                         fa4_sources=fa4_sources)
    write_reports(released, out / "released")
    patched_src = patched_copy(te)
    try:
        patched = run_audit(patched_src.spec, fa4, strict=args.strict, progress=progress,
                            te_source=patched_src, fa4_sources=fa4_sources,
                            command="python -m fa4_patch TE_DIR --write && "
                                    + reproduce_command("TE_DIR", fa4, args.strict))
        write_reports(patched, out / "patched")
    finally:
        shutil.rmtree(patched_src.root.parent, ignore_errors=True)
    lines = [f"as released: {one_line(released)}", f"patched:     {one_line(patched)}"]
    (out / "summary.md").write_text(
        "# fa4-audit summary\n\n" + "\n".join(f"- {ln}" for ln in lines) +
        "\n\nReports: `released/audit.md`, `patched/audit.md` (and .json, .sarif beside them).\n")
    from analyzer.progress import colour_verdicts, use_colour

    colour = use_colour(stdout, args.color)
    stdout.write("\n".join(colour_verdicts(ln, colour) for ln in lines) + "\n")
    stdout.write(f"reports: {out}/released/audit.md, {out}/patched/audit.md\n")
    # the audits' own decisions: "ran" means neither decided "could not analyse"
    ran = released.exit_code != EXIT_ERROR and patched.exit_code != EXIT_ERROR
    return EXIT_CLEAN if ran else EXIT_ERROR
