"""``fa4-audit upgrade``: version gates, CI blind spots and API drift before an FA4 upgrade."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP
from analyzer.errors import AuditError
from analyzer.progress import Progress
from analyzer.sources import resolve

NAME = "upgrade"
HELP = COMMAND_HELP["upgrade"]
DESCRIPTION = """\
The other ways an FA4 upgrade goes wrong, besides the window sentinel. Three passes over
one TE tree (a release, a wheel, or a checkout):

version gates (read from the package source with ast, evaluated with packaging.version on
every release of each FlashAttention distribution they read, `pip index versions --pre`,
cached; offline uses the cache):
  FA4U001 gate-overlap       one release selects two backends (flags use_flash_attn_3 and _4
                             both true: TE's first FA4 commit, 3.0.0b < 4.0.0bN < 4.0.0)
  FA4U002 gate-gap           a release selects no backend, or not its own
  FA4U003 breaking-accepted  a gate selects FA4 for releases that break TE's emitted window
                             pairs (from the release history: fa4-audit history)
  FA4U004 gate-unknown       a gate the tool cannot evaluate (never treated as safe)

CI blind spots (qa/, tests/, .github/ and other CI folders; a wheel has none: reported as
"not checked (absent)"):
  FA4U101 fa4-disabled            NVTE_FLASH_ATTN_V4=0 (or NVTE_FLASH_ATTN=0) in force where a
                                  suite's tests run; a later re-enable is honoured
  FA4U102 old-pin                 a flash-attn-4 pin or version list with no release of the
                                  current resolver variant
  FA4U103 same-backend-reference  a CP result graded against a run of the same attention
                                  object (an error on both sides cancels)

API drift (every FA4-reaching call from the call-site pass, against each --fa4 release's
flash_attn/cute/interface.py):
  FA4U201 api-mismatch  unknown keyword, keyword given twice, too many positionals, a
                        positional landing on another parameter than on the release the code
                        was written for (--written-for, else the pin the package names), a
                        required parameter not passed. Keys behind **kw are read for dicts
                        built from literals in the same function; otherwise "not visible".

Each finding says `proven`, `conditional` (holds when a condition the tool cannot decide goes
one way) or `unknown`.

exit status:
  0  no upgrade hazard found
  1  hazards found (any kind, any certainty)
  2  could not analyse (bad SPEC, unreadable source, release listing unavailable offline)

examples:
  fa4-audit upgrade --te 2.20.2 --fa4 b8 --fa4 b11 --fa4 b36
  fa4-audit upgrade --te ~/src/TransformerEngine --format markdown
  fa4-audit upgrade --te ./transformer_engine-2.20.2-py3-none-any.whl --format sarif
"""


def add_arguments(parser) -> None:
    parser.add_argument("--te", metavar="SPEC", required=True,
                        help="TE source: a version (2.20.2), newest, installed, a wheel/sdist, or a "
                             "folder holding transformer_engine/ (a checkout: CI files are checked too)")
    parser.add_argument("--fa4", action="append", default=[], metavar="SPEC",
                        help="an FA4 release to check the calls' API against (repeatable; default: "
                             "the release the code names and the newest)")
    parser.add_argument("--written-for", metavar="VERSION", default=None,
                        help="the FA4 release the code was written for (default: the flash-attn-4==X "
                             "the package itself names)")
    parser.add_argument("--format", choices=["text", "markdown", "json", "sarif"], default="text",
                        help="output format (default: text)")


def run(args, stdout, stderr) -> int:
    from analyzer.upgrade import run_upgrade
    from analyzer.upgrade.render import render

    progress = Progress(stderr, quiet=args.quiet)
    progress.note(f"resolving TE {args.te}")
    te = resolve("te", args.te)
    if te.root is None:
        raise AuditError("--te transcribed has no sources; give a version, a wheel or a folder")
    fa4 = []
    for spec in args.fa4:
        progress.note(f"fetching flash-attn-4 {spec}")
        fa4.append(resolve("fa4", spec))
    written_for = args.written_for
    if written_for and written_for.startswith("b") and written_for[1:].isdigit():
        written_for = "4.0.0" + written_for
    rep = run_upgrade(te, fa4, written_for=written_for, progress=progress)
    progress.done()
    stdout.write(render(rep, args.format))
    if args.format in ("json", "sarif") and not args.quiet:
        stderr.write(f"{len(rep.sorted_hazards())} upgrade hazard(s)\n")
    return rep.exit_code
