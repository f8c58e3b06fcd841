"""``fa4-audit history``: resolver variant of every flash-attn-4 release, and whether TE breaks there."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP

import os

from analyzer.equivalence.history import history, history_verdict
from analyzer.equivalence.render import FORMATS, render_history
from analyzer.model import EXIT_FOR_VERDICT
from analyzer.progress import Progress
from analyzer.sources import resolve

NAME = "history"
HELP = COMMAND_HELP["history"]
DESCRIPTION = """\
For every flash-attn-4 release on the package index (or the --fa4 versions given), fetch it
into the cache, extract its window resolver, name its variant by fingerprint, and check
whether any (causal, window) pair TE emits gets a non-exact band as-is there.
A second run works from the cache; with --offline (or FA4_AUDIT_OFFLINE=1) nothing touches
the network and the cached release list is used.

exit status:
  0  no listed release breaks TE's emitted pairs
  1  at least one listed release breaks them (findings)
  2  a release could not be fetched, extracted or evaluated, or a transcription disagrees

examples:
  fa4-audit history
  fa4-audit history --fa4 4.0.0b11 --fa4 4.0.0b36 --te 2.20.2 --format markdown
  FA4_AUDIT_OFFLINE=1 fa4-audit history --format json
"""


def add_arguments(parser) -> None:
    parser.add_argument("--fa4", action="append", metavar="VERSION", default=None,
                        help="a release to include (repeatable; 4.0.0b36 or b36); "
                             "default: every release on the index")
    parser.add_argument("--te", metavar="SPEC", default=None,
                        help="TE source whose emitted pairs are checked (default: the "
                             "transcription of check_set_window_size)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--offline", action="store_true",
                        help="never touch the network: cached release list and releases only")


def run(args, stdout, stderr) -> int:
    old = os.environ.get("FA4_AUDIT_OFFLINE")
    if args.offline:
        os.environ["FA4_AUDIT_OFFLINE"] = "1"
    try:
        progress = Progress(stderr, quiet=args.quiet)
        te = resolve("te", args.te) if args.te else None
        rows, te_info = history(args.fa4, te, progress)
        progress.done()
    finally:
        if args.offline:
            if old is None:
                os.environ.pop("FA4_AUDIT_OFFLINE", None)
            else:
                os.environ["FA4_AUDIT_OFFLINE"] = old
    te_label = te_info["version"] or te_info["spec"]
    stdout.write(render_history(rows, args.format, te_label=te_label))
    for d in te_info.get("check", []):
        stderr.write(f"fa4-audit: error: TE: {d}\n")
    return EXIT_FOR_VERDICT[history_verdict(rows, te_info)]
