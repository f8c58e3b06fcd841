"""``python -m fa4_patch TE_DIR --check | --diff | --write [--style ...]``: see fa4_patch.codemod."""

from __future__ import annotations

import argparse
import sys

EXIT_CLEAN, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2

DESCRIPTION = """\
Wrap every FlashAttention 4 binding of a TransformerEngine tree at its binding site, so that
negative window bounds (TE's "unbounded", -1) reach FA4 as None.

TE_DIR is the folder that holds transformer_engine/ (a git checkout or an unpacked release).
Bindings are found by origin (imports from flash_attn.cute / flash_attn.cute.interface of
flash_attn_func, flash_attn_varlen_func, _flash_attn_fwd, _flash_attn_bwd), never by name.

styles:
  wrapper  (default) a short normaliser and wrapper written into the module, plain Python;
           windows normalised by keyword and by position
  kwargs   the same normaliser, wrapper rewrites the keyword arguments only (the seed PR's form)
  import   `from fa4_patch import wrap` (the module then depends on this package)

The changed lines are run through the tree's own formatter (black or ruff-format, read from
its pyproject.toml / .pre-commit-config.yaml); --no-format skips that. Line numbers in the
output (--check, and the '-' side of --diff) are those of the ORIGINAL files.

exit status:
  0  nothing to change (--check, --diff) / written (--write)
  1  changes needed (--check, --diff)
  2  could not patch (unreadable or unparseable file, a form it cannot wrap): one-line error

examples:
  python -m fa4_patch ~/src/TransformerEngine --check
  python -m fa4_patch ~/src/TransformerEngine --diff > fa4.patch
  python -m fa4_patch ./te-2.20.2 --write --style kwargs && fa4-audit sites --tree ./te-2.20.2
"""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m fa4_patch", description=DESCRIPTION,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("te_dir", metavar="TE_DIR", help="the folder that holds transformer_engine/")
    action = ap.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true",
                        help="list the files and bindings that need a change; exit 1 if any")
    action.add_argument("--diff", action="store_true",
                        help="print the unified diff on stdout; exit 1 if it is not empty")
    action.add_argument("--write", action="store_true", help="rewrite the files in place")
    ap.add_argument("--style", choices=["wrapper", "kwargs", "import"], default=None,
                    help="what the inserted wrapper looks like (default: wrapper)")
    ap.add_argument("--import", dest="import_mode", action="store_true",
                    help="same as --style import")
    ap.add_argument("--no-format", action="store_true",
                    help="do not run the tree's formatter on the changed lines")
    ap.add_argument("--no-cache", action="store_true", help="do not reuse an earlier dry run")
    return ap


def main(argv=None, stdout=None, stderr=None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help is 0, usage errors are 2
        return int(exc.code or 0)
    if args.import_mode and args.style not in (None, "import"):
        print(f"{parser.prog}: error: --import and --style {args.style} contradict each other",
              file=stderr)
        return EXIT_ERROR
    style = "import" if args.import_mode else (args.style or "wrapper")
    from fa4_patch.codemod import CodemodError, Formatter, detect_formatter, find_root, plan, write

    try:
        fmt = Formatter("none", "") if args.no_format else detect_formatter(find_root(args.te_dir))
        patches = plan(args.te_dir, style=style, formatter=fmt, use_cache=not args.no_cache)
        changed = [p for p in patches if p.changed]
        for note in sorted({n for p in changed for n in p.notes}):
            print(f"fa4_patch: {note}", file=stderr)
        if args.write:
            write(args.te_dir, changed)
            for p in changed:
                print(f"patched {p.path}: {p.summary()}", file=stdout)
            print(f"fa4_patch: {len(changed)} file(s) written, {len(patches)} examined",
                  file=stderr)
            return EXIT_CLEAN
    except CodemodError as exc:
        print(f"fa4_patch: error: {exc}", file=stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"fa4_patch: error: {exc}", file=stderr)
        return EXIT_ERROR
    if args.diff:
        for p in changed:
            stdout.write(p.diff())
    else:
        for p in changed:
            print(f"would patch {p.path}: {p.summary()}", file=stdout)
    print(f"fa4_patch: {len(changed)} file(s) need a change, {len(patches)} examined"
          if changed else f"fa4_patch: nothing to change, {len(patches)} file(s) examined",
          file=stderr)
    return EXIT_CHANGES if changed else EXIT_CLEAN


if __name__ == "__main__":
    raise SystemExit(main())
