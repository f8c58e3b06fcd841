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
Map every place a tree binds a FlashAttention entry point (by origin module: FA4
flash_attn.cute[.interface], FA3 flash_attn_interface, FA2 flash_attn / flash_attn_2_cuda),
every window (window_size, window_size_left/right) written toward an FA call -- through locals,
dicts, subscript stores, .update, ** splats, lists and *args into helpers, returns, autograd
ctx round trips -- and every call that can reach FA4. An FA4-reaching call is covered when every
FA4 binding it reaches is wrapped by a trusted normaliser (fa4_patch.wrap, the codemod's
_fa4_audit_wrap, or --wrapper NAME; trusted only after its normaliser passes a sandboxed check),
or when every window reaching it is provably None or non-negative.

Rules: FA4S001 uncovered-fa4-call, FA4S002 unwrapped-fa4-binding,
FA4S003 fa4-import-outside-binding-site, FA4S004 untrusted-wrapper,
FA4S900 unparseable-file (a failure: verdict error).

Nothing is TE-specific: --tree DIR audits any Python tree (a training framework, a serving
engine). Files are parsed in parallel and cached by content; an unchanged tree is re-audited
from the cache.

exit status:
  0  every FA4-reaching call is covered, no unwrapped FA4 binding (safe)
  1  findings (unsafe)
  2  could not analyse: an unreadable or unparseable file that may call FlashAttention, a bad
     SPEC, ... (fail closed)

examples:
  fa4-audit sites --te 2.20.2
  fa4-audit sites --te 2.20.2 --format sarif > sites.sarif
  fa4-audit sites --tree ~/src/my-trainer --wrapper my_fa4_wrap --format json
  fa4-audit sites --te ~/src/TransformerEngine --no-cache --jobs 4
"""


def add_arguments(parser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--te", metavar="SPEC",
                     help="a TE source: installed, a version (2.20.2), newest, a wheel/sdist, or "
                          "a folder holding transformer_engine/")
    src.add_argument("--tree", metavar="DIR", help="any Python tree (every .py file under DIR)")
    parser.add_argument("--wrapper", action="append", default=[], metavar="NAME",
                        help="also recognise this in-tree function as a normalising wrapper "
                             "(repeatable); trusted only if a two-parameter module-level function "
                             "it calls passes the sandboxed normaliser check")
    parser.add_argument("--format", choices=["text", "markdown", "json", "sarif"], default="text",
                        help="output format (default: text)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="parser processes (default: every core)")
    parser.add_argument("--no-cache", action="store_true",
                        help="parse every file again (ignore and do not write the per-file cache)")


def run(args, stdout, stderr) -> int:
    from pathlib import Path

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
    progress.note("scanning call sites")
    report = audit_tree(root, package_dir=package_dir, wrappers=args.wrapper, jobs=args.jobs,
                        use_cache=not args.no_cache, progress=progress)
    progress.done()
    stdout.write(render(report, args.format))
    if args.format in ("json", "sarif") and not args.quiet:
        c = report.counts()
        stderr.write(f"{c['fa4_calls']} FA4-reaching calls, {c['fa4_calls_uncovered']} uncovered; "
                     f"{c['findings']} findings; verdict {report.verdict}\n")
    return EXIT_FOR_VERDICT[report.verdict]
