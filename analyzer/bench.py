"""`make bench`: speed figures measured in ONE run and printed (never asserted in tests).

    python -m analyzer.bench [--te 2.20.2] [--fa4 4.0.0b11 --fa4 newest]

Prints, for the whole TE package:
  * the floor: `ast.parse` of every .py file of the tree;
  * a cold full audit (empty analysis caches; releases already downloaded) and a warm one
    (same inputs, caches filled), each in a fresh interpreter, and their ratios to the floor;
  * the call-site pass alone, cold and warm;
  * `history` over every cached flash-attn-4 release (from the cache);
  * fa4_patch's wrapper overhead per call over the bare call.
Targets: cold audit <= the ast floor; warm audit < 0.5 s.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from analyzer import sources


def _floor(root: Path) -> tuple[float, int]:
    files = list(sources.iter_py_files(root, "transformer_engine"))
    t0 = time.perf_counter()
    for f in files:
        ast.parse(f.read_bytes(), filename=str(f))
    return time.perf_counter() - t0, len(files)


def _timed(cmd: list[str], env: dict) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    return took, proc.returncode, lines[-1] if lines else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analyzer.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--te", default="2.20.2")
    ap.add_argument("--fa4", action="append", default=None)
    args = ap.parse_args(argv)
    fa4 = args.fa4 or ["4.0.0b11", "newest"]

    te = sources.resolve("te", args.te)
    resolved = [sources.resolve("fa4", f) for f in fa4]   # downloads are not part of the timing
    floor, nfiles = _floor(te.root)

    # Each measured pair (cold, warm) gets a cache of its own: the releases copied in, no
    # per-file, extraction or audit results -- so "cold" really starts from nothing.
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="fa4-audit-bench-"))

    def fresh_cache(name: str) -> dict:
        d = tmp / name
        for sub in ("releases", "index"):
            src = sources.cache_dir() / sub
            if src.is_dir():
                shutil.copytree(src, d / sub, symlinks=True)
        return dict(os.environ, FA4_AUDIT_CACHE=str(d), FA4_AUDIT_OFFLINE="1")

    try:
        env = fresh_cache("audit")
        audit_cmd = [py, "-m", "analyzer", "audit", "--quiet", "--te", str(te.root),
                     "--out", str(tmp / "out")]
        for s in resolved:
            audit_cmd += ["--fa4", str(s.root)]
        cold, rc_cold, last_cold = _timed(audit_cmd, env)
        warm, rc_warm, last_warm = _timed(audit_cmd, env)
        env = fresh_cache("sites")
        sites_cmd = [py, "-m", "analyzer", "sites", "--quiet", "--tree", str(te.root),
                     "--format", "json"]
        sites_cold, _, _ = _timed(sites_cmd, env)
        sites_warm, _, _ = _timed(sites_cmd, env)
        env = fresh_cache("history")
        hist_cmd = [py, "-m", "analyzer", "history", "--quiet", "--offline", "--format", "json"]
        hist_cold, rc_h, _ = _timed(hist_cmd, env)
        hist_warm, _, _ = _timed(hist_cmd, env)
        nrel = len(sources.cached_versions("fa4"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    from fa4_patch.bench import measure

    wrap_rows = measure(100_000, 5)   # (label, bare, wrapped, trampoline, inline) in ns
    worst = max(wrap_rows, key=lambda r: r[2] - r[1])
    bare_ns, wrapped_ns = worst[1], worst[2]

    rows = [
        ("TE tree", f"{te.label()}: {nfiles} .py files"),
        ("floor: ast.parse of every file", f"{floor:.3f} s"),
        ("call-site pass, cold (fresh process)", f"{sites_cold:.3f} s  ({sites_cold / floor:.2f}x floor)"),
        ("call-site pass, warm (fresh process)", f"{sites_warm:.3f} s  ({sites_warm / floor:.2f}x floor)"),
        ("full audit, cold (fresh process)", f"{cold:.3f} s  ({cold / floor:.2f}x floor), exit {rc_cold}: {last_cold}"),
        ("full audit, warm (fresh process)", f"{warm:.3f} s  ({warm / floor:.2f}x floor), exit {rc_warm}"),
        (f"history over {nrel} cached releases, cold analysis cache", f"{hist_cold:.3f} s (exit {rc_h})"),
        (f"history over {nrel} cached releases, warm", f"{hist_warm:.3f} s"),
        ("wrapper overhead per call, worst call shape", f"{(wrapped_ns - bare_ns):.0f} ns "
                                                        f"({worst[0]}: bare {bare_ns:.0f} ns, "
                                                        f"wrapped {wrapped_ns:.0f} ns)"),
    ]
    width = max(len(k) for k, _ in rows)
    print("fa4-audit benchmark (one run; figures, not assertions)")
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")
    print(f"  targets: cold audit <= floor: {'met' if cold <= floor else 'NOT met'}; "
          f"warm audit < 0.5 s: {'met' if warm < 0.5 else 'NOT met'}; "
          f"wrapper <= 1 us: {'met' if wrapped_ns - bare_ns <= 1000 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
