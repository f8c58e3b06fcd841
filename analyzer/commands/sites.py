"""``fa4-audit sites``: every window a Python tree hands to FlashAttention, and coverage."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP

from analyzer.model import EXIT_FOR_VERDICT
from analyzer.progress import Progress
from analyzer.sources import resolve
from analyzer.errors import AuditError

NAME = "sites"
HELP = COMMAND_HELP["sites"]
DESCRIPTION = """\
Find every call in a Python tree that can reach FlashAttention 4 and judge each one, per audited
FA4 release: proved, broken or unknown -- by what the code does, never by how it is spelled.

Reach: a whole-tree import graph (re-exports followed transitively) decides which files can
reach FA4; only the others are skipped. FA4 origins are flash_attn.cute[.interface], vendored
copies recognised by their content (FA4's entry points and resolver), and modules you declare
(--fa4-module, or fa4-modules in [tool.fa4-audit] of the tree's pyproject.toml). Dynamic
imports by a constant name are resolved; by a computed name they are unknown.

Verdict per call and release: the windows the call can pass (constants, conditionals, dicts
and their mutations, ** merges, call-site expressions evaluated in a sandbox) are run through
whatever wrapper stands between the call and FA4 -- executed in a sandbox against a recording
stand-in for FA4, in every form FA4 takes a window -- and through the release's resolver.
A wrong band is broken (with the pair); a value the tree cannot bound is unknown (with what
stopped the proof). (-1, -1) is full attention on every release and never broken.

Rules: FA4S001 broken-fa4-call (error), FA4S005 unproved-fa4-call, FA4S006 fa4-escape,
FA4S007 dynamic-import, FA4S008 fa4-through-torch (unknown), FA4S004 untrusted-wrapper (error
when wrong in a form the tree uses), FA4S002/FA4S003 (notes), FA4S900 unparseable-file
(failure). See docs/sites.md.

exit status:
  0  safe: every FA4-reaching call proved on every audited release; or no FA4 here
  1  unsafe (a call is broken) or unknown (something could not be proved: never safe)
  2  could not analyse: an unreadable or unparseable file that may reach FA4, a bad SPEC, ...

examples:
  fa4-audit sites --te 2.20.2
  fa4-audit sites --te 2.20.2 --fa4 4.0.0b11 --fa4 newest --format sarif > sites.sarif
  fa4-audit sites --tree ~/src/my-engine --fa4-module my_engine.vendor.fa4 --format json
"""


def add_arguments(parser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--te", metavar="SPEC",
                     help="a TE source: installed, a version (2.20.2), newest, a wheel/sdist, or "
                          "a folder holding transformer_engine/")
    src.add_argument("--tree", metavar="DIR", help="any Python tree (every .py file under DIR)")
    parser.add_argument("--fa4", action="append", default=[], metavar="SPEC",
                        help="judge against this flash-attn-4 release (repeatable; its resolver "
                             "is read from the release); default: the pre- and post-#2490 rules "
                             "as transcribed")
    parser.add_argument("--fa4-module", action="append", default=[], metavar="MODULE",
                        help="treat this module (and its sub-modules) as FA4, e.g. a vendored "
                             "copy the content check does not recognise (repeatable)")
    parser.add_argument("--wrapper", action="append", default=[], metavar="NAME",
                        help="accepted for compatibility and ignored: wrappers are judged by "
                             "what they do, whatever their name")
    parser.add_argument("--format", choices=["text", "markdown", "json", "sarif"], default="text",
                        help="output format (default: text)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="parser processes (default: every core)")
    parser.add_argument("--no-cache", action="store_true",
                        help="parse every file again (ignore and do not write the per-file cache)")


def run(args, stdout, stderr) -> int:
    from pathlib import Path

    if args.jobs is None or args.jobs > 1:
        # the parse lanes' process starts now and imports libcst while this one starts up
        from analyzer.sites import lanes
        lanes.prestart(args.jobs)
    from analyzer.sites import audit_tree, render

    progress = Progress(stderr, quiet=args.quiet)
    if args.jobs is not None and args.jobs < 1:
        raise AuditError("--jobs must be at least 1")
    if args.te:
        progress.note(f"resolving TE {args.te}")
        src = resolve("te", args.te)
        if src.root is None:
            raise AuditError("--te transcribed has no sources to scan; give a version or a path")
        root, package_dir = src.root, "transformer_engine"
    else:
        root = Path(args.tree).expanduser()
        if not root.exists():
            raise AuditError(f"--tree {args.tree}: no such folder")
        if not root.is_dir():
            raise AuditError(f"--tree {args.tree}: not a folder")
        package_dir = None
    resolvers = params = None
    if args.fa4:
        from analyzer.sites.pairs import resolvers_for, signatures_of

        fa4 = []
        for spec in args.fa4:
            progress.note(f"fetching flash-attn-4 {spec}")
            fa4.append(resolve("fa4", spec))
        resolvers = resolvers_for(fa4)
        params = signatures_of(fa4[-1])
    progress.note("scanning call sites")
    report = audit_tree(root, package_dir=package_dir, jobs=args.jobs,
                        use_cache=not args.no_cache, progress=progress,
                        fa4_modules=args.fa4_module, resolvers=resolvers, fa4_params=params)
    progress.done()
    stdout.write(render(report, args.format))
    if args.format in ("json", "sarif") and not args.quiet:
        c = report.counts()
        stderr.write(f"{c['fa4_calls']} FA4-reaching calls: {c['fa4_calls_proved']} proved, "
                     f"{c['fa4_calls_broken']} broken, {c['fa4_calls_unknown']} unknown; "
                     f"verdict {report.verdict}\n")
    return EXIT_FOR_VERDICT[report.verdict]
