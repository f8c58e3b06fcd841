"""fa4-audit audit: the whole audit of one TE tree against one or more FA4 releases."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP

from pathlib import Path

from analyzer.model import EXIT_FOR_VERDICT
from analyzer.progress import Progress

NAME = "audit"
HELP = COMMAND_HELP["audit"]
DESCRIPTION = """\
Run the whole audit of a TransformerEngine tree against one or more flash-attn-4 releases:
the resolver equivalence table and its claims, the call-site coverage pass, and a dry run of
the fa4_patch codemod. Writes DIR/audit.md (paste into a pull request), DIR/audit.json
(versioned, see README) and DIR/audit.sarif, and prints a one-line verdict.

verdict: unsafe when a claim fails, or when an FA4-reaching call is broken on an audited release
(a pair it can pass gets a wrong band, after whatever wrapper stands in between); unknown when
nothing is broken but some call could not be proved; no-fa4 when the tree never reaches FA4;
safe when every FA4-reaching call is proved on every audited release. --strict also fails the
call-site notes (an FA4 binding exported without a checked normaliser). --upgrade adds the
upgrade hazards of `fa4-audit upgrade` (version gates, CI blind spots, API drift).
exit: 0 safe or no-fa4, 1 unsafe or unknown, 2 could not analyse.

examples:
  fa4-audit audit --te 2.20.2 --fa4 4.0.0b11 --fa4 newest --out audit-out
  fa4-audit audit --te ~/src/TransformerEngine --fa4 installed --strict
"""


def add_arguments(p):
    p.add_argument("--te", required=True, metavar="SPEC", help="TransformerEngine SPEC")
    p.add_argument("--fa4", action="append", required=True, metavar="SPEC",
                   help="flash-attn-4 SPEC (repeatable)")
    p.add_argument("--out", default="audit-out", metavar="DIR", help="report folder (default: audit-out)")
    p.add_argument("--strict", action="store_true",
                   help="call-site notes (FA4 bindings exported without a checked normaliser) "
                        "are unsafe too")
    p.add_argument("--upgrade", action="store_true",
                   help="also report upgrade hazards: version gates, CI blind spots, API drift "
                        "(reads every flash-attn-4 release: slower on a cold cache)")
    p.add_argument("--wrapper", action="append", default=[], metavar="NAME",
                   help="accepted for compatibility and ignored: wrappers are judged by behaviour")
    p.add_argument("--gpu-results", metavar="FILE",
                   help="add a saved `fa4-audit verify-gpu` result (JSON) to the report")
    p.add_argument("--simulate", action="store_true",
                   help="add float64 simulated-attention errors to the table (torch, slower); "
                        "the verdict rests on the exact band comparison either way")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute even when the same inputs were audited before")


def run(args, stdout, stderr) -> int:
    from analyzer.audit import (audit_key, cached_reports, reproduce_command, resolve_inputs,
                                run_audit, store_reports)
    from analyzer.audit_report import one_line, render_all, write_files
    from analyzer.errors import AuditError

    gpu = None
    if args.gpu_results:  # read before the (slow) audit so a bad file fails fast
        from analyzer.gpu.report import ResultError, load_result

        try:
            gpu = load_result(args.gpu_results)
        except ResultError as exc:
            raise AuditError(f"--gpu-results: {exc}") from None
    progress = Progress(stderr, quiet=args.quiet)
    te, fa4 = resolve_inputs(args.te, args.fa4, progress)
    command = reproduce_command(args.te, args.fa4, args.strict, args.wrapper)
    key = audit_key(te, fa4, {"strict": args.strict, "wrappers": args.wrapper, "gpu": gpu,
                              "simulate": args.simulate, "command": command,
                              "upgrade": args.upgrade})
    hit = None if args.no_cache else cached_reports(key)
    if hit is not None:
        files, verdict, line = hit["files"], hit["verdict"], hit["one_line"]
    else:
        report = run_audit(args.te, args.fa4, strict=args.strict, wrappers=args.wrapper,
                           progress=progress, te_source=te, fa4_sources=fa4, command=command,
                           simulate=args.simulate, upgrade=args.upgrade)
        report.gpu = gpu
        files, verdict, line = render_all(report), report.verdict, one_line(report)
        store_reports(key, files, verdict, line)
    paths = write_files(files, Path(args.out))
    from analyzer.progress import colour_verdicts, use_colour

    stdout.write(colour_verdicts(line, use_colour(stdout, args.color)) + "\n")
    if not args.quiet:
        cached = " (from the cache: same inputs as an earlier audit)" if hit else ""
        stderr.write("wrote " + ", ".join(str(p) for p in paths) + cached + "\n")
    return EXIT_FOR_VERDICT[verdict]
