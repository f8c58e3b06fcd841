"""The ``fa4-audit`` command line (also ``python -m analyzer``).

Exit status, for every sub-command:
  0  analysed everything, nothing unsafe
  1  analysed everything, found something unsafe (findings)
  2  could not analyse: bad input, missing or unparseable source, usage error (fail closed)

Usage errors print argparse's usual two lines (``usage: ...`` and ``PROG: error: ...``), with
a suggestion for a near-miss sub-command. When ``--te``/``--tree`` names a folder whose
``pyproject.toml`` has a ``[tool.fa4-audit]`` table, its keys are defaults for options the
command line does not give (see :data:`CONFIG_KEYS`).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import sys
import traceback
from pathlib import Path
from typing import Sequence, TextIO

from analyzer import EXIT_ERROR, __version__
from analyzer.commands import COMMAND_HELP, COMMAND_MODULES
from analyzer.errors import AuditError

EPILOG = """\
exit status: 0 clean (safe, or no FA4 here), 1 unsafe or unknown (never safe), 2 could not
analyse (fail closed).

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


class UsageError(AuditError):
    """A command-line mistake: printed as argparse prints it (usage line, then one error line)."""

    def __init__(self, prog: str, usage: str, message: str):
        super().__init__(message)
        self.prog = prog
        self.usage = usage
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so tests run it in-process (exit 2 either way)."""

    def error(self, message):  # noqa: D401
        if "invalid choice:" in message and "COMMAND" in message:
            wrong = message.split("invalid choice:", 1)[1].split("(", 1)[0].strip().strip("'\"")
            near = difflib.get_close_matches(wrong, list(COMMAND_MODULES), n=1, cutoff=0.6)
            if near:
                message = message.replace(" (choose from", f", maybe you meant '{near[0]}'? (choose from", 1)
        raise UsageError(self.prog, self.format_usage(), message)


# [tool.fa4-audit] keys -> (option, kind) and the commands that take them
CONFIG_KEYS = {
    "fa4": ("--fa4", "list", ("audit", "make-audit", "table")),
    "strict": ("--strict", "flag", ("audit", "make-audit")),
    "wrapper": ("--wrapper", "list", ("audit", "sites")),
    "simulate": ("--simulate", "flag", ("audit",)),
}
# keys other parts of fa4-audit read from the same table (not command-line defaults)
OTHER_CONFIG_KEYS = frozenset({"origins"})


def _tree_arg(argv: list[str]) -> str | None:
    for i, a in enumerate(argv):
        for opt in ("--te", "--tree"):
            if a == opt and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(opt + "="):
                return a.split("=", 1)[1]
    return None


def config_defaults(argv: list[str], command: str) -> list[str]:
    """Extra arguments from ``[tool.fa4-audit]`` of the audited tree's pyproject.toml, for the
    options ``argv`` does not give. Raises AuditError for a table it cannot use (fail closed)."""
    tree = _tree_arg(argv)
    if tree is None or not Path(tree).is_dir():
        return []
    pyproject = Path(tree) / "pyproject.toml"
    if not pyproject.is_file():
        return []
    try:
        import tomllib
    except ModuleNotFoundError:   # Python 3.10: no tomllib in the standard library
        return []
    try:
        conf = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AuditError(f"{pyproject}: cannot read [tool.fa4-audit] ({exc})") from None
    table = conf.get("tool", {}).get("fa4-audit")
    if table is None:
        return []
    if not isinstance(table, dict):
        raise AuditError(f"{pyproject}: [tool.fa4-audit] must be a table")
    unknown = sorted(set(table) - set(CONFIG_KEYS) - OTHER_CONFIG_KEYS)
    if unknown:
        raise AuditError(f"{pyproject}: unknown key(s) in [tool.fa4-audit]: {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(set(CONFIG_KEYS) | OTHER_CONFIG_KEYS))})")
    extra: list[str] = []
    for key, (opt, kind, commands) in CONFIG_KEYS.items():
        if key not in table or command not in commands:
            continue
        if any(a == opt or a.startswith(opt + "=") for a in argv):
            continue        # the command line wins
        value = table[key]
        if kind == "flag":
            if not isinstance(value, bool):
                raise AuditError(f"{pyproject}: [tool.fa4-audit] {key} must be true or false")
            if value:
                extra.append(opt)
        else:
            values = [value] if isinstance(value, str) else value
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise AuditError(f"{pyproject}: [tool.fa4-audit] {key} must be a string or a list "
                                 f"of strings")
            for v in values:
                extra += [opt, v]
    return extra


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
        command = next((a for a in argv if a in COMMAND_MODULES), None)
        if command is not None and not any(a in ("-h", "--help") for a in argv):
            argv = argv + config_defaults(argv, command)
        with contextlib.redirect_stdout(stdout):  # --help / --version go to the given stream
            args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help(stdout)
            return EXIT_ERROR
        return int(args._run(args, stdout, stderr))
    except UsageError as exc:
        stderr.write(exc.usage)
        stderr.write(f"{exc.prog}: error: {exc.message}\n")
        return EXIT_ERROR
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
    """The ``fa4-audit`` command. The audit is one batch: the collector's full passes over the
    objects it builds are put off (``gcpolicy``), and the process ends without tearing those
    objects down one by one (0.15-0.25 s on TE 2.20.2): output streams are flushed and the
    ``atexit`` handlers (the sandbox child's shutdown, multiprocessing's joins) run first."""
    import atexit
    import gc
    import os

    from analyzer.gcpolicy import THRESHOLDS

    gc.set_threshold(*(max(a, b) for a, b in zip(gc.get_threshold(), THRESHOLDS)))
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):   # a closed pipe: let the normal exit report it
        sys.exit(code)
    atexit._run_exitfuncs()
    os._exit(code)
