"""``fa4-audit table``: TE's emitted window pairs through each FA4 resolver, as-is and normalised."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP

from analyzer.equivalence.render import FORMATS, render_table
from analyzer.equivalence.table import build_table
from analyzer.progress import Progress
from analyzer.sources import resolve

NAME = "table"
HELP = COMMAND_HELP["table"]
DESCRIPTION = """\
Run the audited TE tree's own check_set_window_size over every mask type x a window grid,
feed each (causal, window) pair it emits -- plus the pairs context parallelism synthesises --
through the window resolver extracted from each FA4 source, as-is and normalised (negative
sides -> None), and compare the key band each resolved state selects with the band TE means.
Below the table two claims are checked over every row, with counterexamples:
  (a) normalised input gives the intended band on every resolver for every emitted pair;
  (b) normalising is inert wherever the resolver was already right.
Each extracted function is fingerprinted (an unknown fingerprint is reported as a new
variant and still evaluated) and, for known variants, checked against its transcription.

exit status:
  0  every emitted pair gets the exact band as-is on every FA4 source, and both claims hold
  1  some emitted pair gets a non-exact band as-is (e.g. empty) on some FA4 source, or a
     claim fails
  2  something could not be fetched, extracted or evaluated, or a transcription disagrees
     with the real function

examples:
  fa4-audit table --fa4 4.0.0b11 --fa4 4.0.0b36 --te 2.20.2 --format markdown
  fa4-audit table --fa4 installed --te transcribed
  fa4-audit table --fa4 ~/src/flash-attention --te ~/src/TransformerEngine --format json
"""


def add_arguments(parser) -> None:
    parser.add_argument("--fa4", action="append", required=True, metavar="SPEC",
                        help="an FA4 source (repeatable): installed, a version (4.0.0b36, b36), "
                             "newest, a wheel/sdist, or a folder holding flash_attn/")
    parser.add_argument("--te", metavar="SPEC", default=None,
                        help="the TE source whose check_set_window_size is run: installed, a "
                             "version (2.20.2), a wheel/sdist or a folder holding "
                             "transformer_engine/; 'transcribed' or omitted: the transcription")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="output format (default: text)")
    parser.add_argument("--no-simulate", action="store_true",
                        help="skip the float64 simulated attention (bands only; faster)")


def run(args, stdout, stderr) -> int:
    progress = Progress(stderr, quiet=args.quiet)
    progress.note("resolving sources")
    te = resolve("te", args.te) if args.te else None
    fa4 = [resolve("fa4", spec) for spec in args.fa4]
    table = build_table(fa4, te, progress, simulate=not args.no_simulate)
    progress.done()
    stdout.write(render_table(table, args.format))
    if args.format == "json" and not args.quiet:
        stderr.write(f"{table.caption()}; verdict {table.verdict}\n")
    return table.exit_code
