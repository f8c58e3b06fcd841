"""fa4-audit verify-gpu: run TE's emitted pairs through the real FA4 kernels, as-is and wrapped."""

from __future__ import annotations

from analyzer.commands import COMMAND_HELP

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from analyzer.errors import AuditError

NAME = "verify-gpu"
HELP = COMMAND_HELP["verify-gpu"]
DESCRIPTION = """\
On a machine with flash-attn-4 importable and an SM90 or SM100 GPU, call the four FA4 entry
points (flash_attn_func, flash_attn_varlen_func, _flash_attn_fwd + _flash_attn_bwd) with every
window pair TransformerEngine emits, as-is and through fa4_patch.wrap, with sq = sk and sq < sk,
and grade the output and dq/dk/dv against a float64 reference of the mask TE intends. An
all-zero output and an all -inf LSE are flagged apart from the tolerance. Also times a wrapped
vs bare causal forward and the wrapper's pure-Python cost. The kernels run in a subprocess
(python -m analyzer.gpu.harness); the table goes to stdout.

exit: 0 every wrapped case passed (the fix works on this GPU); 1 a wrapped case failed (as-is
failures are the defect being shown and never set the exit status); 2 could not run here (no
CUDA, unsupported GPU, FA4 or fa4_patch not importable: one line says why) or the run is
incomplete.

examples:
  fa4-audit verify-gpu --out gpu-out                      # run, print text, save JSON + md
  fa4-audit verify-gpu --format markdown > gpu.md
  fa4-audit verify-gpu --results docs/gpu-results/h200-fa4-b36.json --format markdown
"""

RESULT_JSON = "gpu-verify.json"
RESULT_MD = "gpu-verify.md"


def add_arguments(p):
    p.add_argument("--fa4", default="installed", metavar="SPEC",
                   help="which flash-attn-4 to run: only 'installed' (the kernels must import)")
    p.add_argument("--out", metavar="DIR",
                   help=f"also write DIR/{RESULT_JSON} (the harness result) and DIR/{RESULT_MD}")
    p.add_argument("--format", choices=["text", "markdown", "json"], default="text",
                   help="stdout format (default: text)")
    p.add_argument("--results", metavar="FILE",
                   help="render a saved result instead of running (works without a GPU)")
    p.add_argument("--pairs", metavar="FILE",
                   help="JSON list of pairs to run instead of TE's emitted pairs (see docs/gpu.md)")
    p.add_argument("--no-timing", action="store_true", help="skip the timing and wrapper-cost runs")


def _run_harness(args, result_path: Path, stderr) -> None:
    cmd = [sys.executable, "-m", "analyzer.gpu.harness", "--out", str(result_path)]
    if args.pairs:
        cmd += ["--pairs", str(args.pairs)]
    if args.no_timing:
        cmd.append("--no-timing")
    root = str(Path(__file__).resolve().parents[2])    # holds analyzer/ and fa4_patch/
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=env, errors="replace")
    except OSError as exc:
        raise AuditError(f"verify-gpu: cannot start {sys.executable}: {exc}") from None
    last = []
    for line in proc.stderr:
        last = (last + [line.rstrip("\n")])[-20:]
        final = line.startswith(("harness: cannot run here:", "harness: error:"))
        if not args.quiet and not final:       # the reason comes back as our one error line
            stderr.write(line)
    rc = proc.wait()
    if rc == 2:
        msg = next((ln for ln in reversed(last) if ln.startswith("harness:")), last[-1] if last else "")
        if msg.startswith("harness: error:"):
            raise AuditError(f"verify-gpu: {msg.removeprefix('harness: error: ')}")
        msg = msg.removeprefix("harness: ").removeprefix("cannot run here: ")
        raise AuditError(f"verify-gpu cannot run here: {msg}")
    if rc != 0:
        tail = last[-1] if last else "no output"
        raise AuditError(f"verify-gpu: the harness failed (exit {rc}): {tail}",
                         hint="rerun python -m analyzer.gpu.harness --out r.json to see it all")


def run(args, stdout, stderr) -> int:
    from analyzer.gpu import report

    if args.results:
        try:
            result = report.load_result(args.results)
        except report.ResultError as exc:
            raise AuditError(f"--results {exc}") from None
    else:
        if args.fa4 != "installed":
            raise AuditError(f"verify-gpu runs the installed flash-attn-4 only, not --fa4 {args.fa4}",
                             hint="install that release here, or render a saved run with --results")
        with tempfile.TemporaryDirectory(prefix="fa4-verify-") as tmp:
            path = Path(tmp) / RESULT_JSON
            _run_harness(args, path, stderr)
            try:
                result = report.load_result(path)
            except report.ResultError as exc:
                raise AuditError(f"verify-gpu: the harness wrote no usable result: {exc}") from None
    text = report.render(result, args.format)
    if args.out:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / RESULT_JSON).write_text(report.render(result, "json"))
            (out / RESULT_MD).write_text(report.render(result, "markdown"))
        except OSError as exc:
            raise AuditError(f"--out {out}: {exc}") from None
    stdout.write(text)
    if not args.quiet:
        stderr.write(report.verdict_line(result) + "\n")
    return report.exit_status(result)
