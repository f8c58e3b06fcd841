"""The ``fa4-audit`` command line (also ``python -m analyzer``).

Exit status, for every sub-command:
  0  analysed everything, nothing unsafe
  1  analysed everything, found something unsafe (findings)
  2  could not analyse: bad input, missing or unparseable source, usage error (fail closed)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import traceback
from typing import Sequence, TextIO

from analyzer import EXIT_ERROR, __version__
from analyzer.commands import COMMAND_HELP, COMMAND_MODULES
from analyzer.errors import AuditError

EPILOG = """\
exit status: 0 clean, 1 findings (unsafe), 2 could not analyse (fail closed).

examples:
  fa4-audit table --fa4 4.0.0b11 --fa4 4.0.0b36 --te 2.20.2 --format markdown
  fa4-audit history
  fa4-audit sites --te 2.20.2 --format sarif > sites.sarif
  fa4-audit audit --te 2.20.2 --fa4 4.0.0b11 --fa4 newest --out audit-out
  python -m fa4_patch path/to/TransformerEngine --diff

SPECs: 'installed', a release version (4.0.0b36, b36, 2.20.2), 'newest', a wheel/sdist path,
or the folder that holds flash_attn/ or transformer_engine/. Releases are fetched into
$XDG_CACHE_HOME/fa4-audit (FA4_AUDIT_CACHE overrides) and reused offline (FA4_AUDIT_OFFLINE=1).
"""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors become exit 2 one-liners."""

    def error(self, message):  # noqa: D401
        raise AuditError(f"{self.prog}: {message}", hint=f"see {self.prog} --help")


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser. Only the command named in ``argv`` is imported and gets its full options;
    the others are listed with their one-line help (``fa4-audit CMD --help`` shows theirs)."""
    parser = _Parser(prog="fa4-audit", description=__doc__.split("\n\n")[0],
                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"fa4-audit {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    common.add_argument("--quiet", "-q", action="store_true", help="no progress output on stderr")
    common.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                        help="colour in text output (default: only on a terminal)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    chosen = next((a for a in argv if a in COMMAND_MODULES), None)
    for name, module in COMMAND_MODULES.items():
        if name != chosen:
            sub.add_parser(name, help=COMMAND_HELP[name], parents=[common])
            continue
        mod = importlib.import_module(f"analyzer.commands.{module}")
        p = sub.add_parser(name, help=COMMAND_HELP[name], description=mod.DESCRIPTION,
                           parents=[common], epilog=EPILOG.split("\n\n")[0],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser(argv)
        with contextlib.redirect_stdout(stdout):  # --help / --version go to the given stream
            args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help(stdout)
            return EXIT_ERROR
        return int(args._run(args, stdout, stderr))
    except AuditError as exc:
        if debug:
            traceback.print_exc(file=stderr)
        stderr.write(f"fa4-audit: error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        stderr.write("fa4-audit: interrupted\n")
        return EXIT_ERROR
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0)
    except Exception as exc:  # fail closed: an unexpected failure is "could not analyse"
        if debug:
            traceback.print_exc(file=stderr)
        stderr.write(f"fa4-audit: error: internal error: {type(exc).__name__}: {exc} "
                     f"(rerun with --debug for a traceback)\n")
        return EXIT_ERROR


def console_main() -> None:
    sys.exit(main())
