"""`make bench`: every speed figure of issue 11, measured in ONE run and printed (the tests
assert none of them).

    python -m analyzer.bench [--te 2.20.2] [--fa4 4.0.0b11 --fa4 4.0.0b36] [--repeat 3]
                             [--scale 1,2,4,8] [--no-scale]

Every command is timed the same way: a fresh interpreter of the project's venv, run from a
snapshot of the tool's code taken at the start (so one version is measured even while the tree
is being edited), wall time from spawn to exit, peak RSS of the largest process from ``wait4``;
repeated, and reported as min and median. "Cold" means a cache of its own holding only the downloaded
releases (symlinked) -- no extraction, call-site, reach, codemod, patched-copy or audit
results; "warm" means the same cache right after. The floor is ``ast.parse`` of every ``.py``
file of the TE tree in a fresh process, timed like the rest, and every audit figure is also
given as a ratio to the floor measured in the same run.

Figures (goal in brackets):
  * cold full audit, TE + FA4 b11 + b36          [<= 1.0x floor]
  * cold call-site pass                           [<= 1.0x floor]
  * cold call-site pass of the first release (``--baseline``, default b6ec79e, the state
    issue 9 was filed against), interleaved with this one's in the same run
                                                  [this one no slower: median <= median]
  * the same command cut right after its libcst parse (``parse_only``), interleaved too:
    the floor under any call-site pass that stays a libcst pass, and what the baseline's
    time leaves for everything after the parse
  * history over every cached FA4 release, cold   [<= 5 s]
  * warm audit                                    [<= 0.5 s]
  * make-audit again with nothing changed         [<= 1 s]
  * fa4_patch.wrap, every call form               [<= 1 us, min and median of repeats]
  * the codemod's inline helper, every call form  [<= 1 us]
  * scaling at 1x/2x/4x/8x copies of the TE tree: floor, cold audit, peak memory
                                                  [linear; <= 150 MB at 8x]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from analyzer import sources

PY = sys.executable


@dataclass
class Timed:
    """Repeated runs of one command: wall seconds, exit codes, peak RSS (MB), last line."""

    label: str
    secs: list[float] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    last: str = ""

    @property
    def min(self) -> float:
        return min(self.secs)

    @property
    def median(self) -> float:
        return statistics.median(self.secs)

    @property
    def peak_mb(self) -> float:
        return max(self.rss_mb)


def run_once(cmd: list[str], env: dict, cwd: Path | None = None) -> tuple[float, int, float, str]:
    """(wall s, exit code, peak RSS MB of the largest process of the tree, last output line).
    ``wait4`` gives the child's own rusage (its waited-for children included), so the
    figure is the child or its largest worker, not a sum."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd or _CWD, stdout=out,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().decode(errors="replace").strip().splitlines()
    return took, proc.returncode, usage.ru_maxrss / 1024.0, lines[-1] if lines else ""


_CWD: Path | None = None   # the snapshot of the tool every command runs from (set in main)


def snapshot(dest: Path) -> Path:
    """A copy of this tool's code (analyzer, transcriptions, fa4_patch) that every measured
    command runs from (``python -m`` puts the working folder first on ``sys.path``): the run
    measures ONE version of the tool even while the working tree is being edited, and the
    audit cache key (which covers the tool's own bytes) stays the same between cold and warm."""
    here = Path(__file__).resolve().parent.parent
    for pkg in ("analyzer", "transcriptions", "fa4_patch"):
        shutil.copytree(here / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return _compiled(dest)


def _compiled(dest: Path) -> Path:
    """Byte-compile a copy of the tool, as an installed tool is (pip compiles on install;
    a source tree, on its first run): without it, a run with ``PYTHONDONTWRITEBYTECODE`` set
    would compile every module of the tool on every run (0.1 s of this tool's start), and the
    measure would be of the compiler. Both the tool and the baseline are compiled alike."""
    import compileall

    compileall.compile_dir(str(dest), quiet=1)
    return dest


def baseline(rev: str, dest: Path) -> Path | None:
    """The tool's code at git revision ``rev`` (analyzer, transcriptions, fa4_patch), unpacked
    into ``dest`` to run beside this one; None without git history (a source tarball) or with
    ``rev`` 'none'."""
    import io
    import tarfile

    if not rev or rev == "none":
        return None
    here = Path(__file__).resolve().parent.parent
    try:
        blob = subprocess.run(["git", "-C", str(here), "archive", "--format=tar", rev,
                               "analyzer", "transcriptions", "fa4_patch"],
                              capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(blob)) as tf:
        tf.extractall(dest, filter="data")
    return _compiled(dest)


def timed(label: str, cmd: list[str], repeat: int, env_for_each, cwd: Path | None = None) -> Timed:
    """Run ``cmd`` ``repeat`` times; ``env_for_each(i)`` gives each run its environment (a
    fresh cache for a cold figure)."""
    t = Timed(label)
    for i in range(repeat):
        took, code, rss, last = run_once(cmd, env_for_each(i), cwd)
        t.secs.append(took)
        t.codes.append(code)
        t.rss_mb.append(rss)
        t.last = last
    return t


_FLOOR = ("import ast, os, sys\n"
          "n = 0\n"
          "for d, ds, fs in os.walk(sys.argv[1]):\n"
          "    ds.sort()\n"
          "    for f in sorted(fs):\n"
          "        if f.endswith('.py'):\n"
          "            with open(os.path.join(d, f), 'rb') as fh:\n"
          "                ast.parse(fh.read())\n"
          "            n += 1\n"
          "print(n, 'files parsed')\n")


def scaled_tree(te_root: Path, copies: int, dest: Path) -> Path:
    """A TE root whose ``transformer_engine/`` holds the package plus ``copies - 1`` more
    copies of its contents as sub-packages (``_scale_copy_N``): ``copies`` times the code."""
    pkg = dest / "transformer_engine"
    shutil.copytree(te_root / "transformer_engine", pkg, symlinks=True)
    for i in range(2, copies + 1):
        shutil.copytree(te_root / "transformer_engine", pkg / f"_scale_copy_{i}", symlinks=True,
                        ignore=shutil.ignore_patterns("_scale_copy_*"))
    return dest


def py_files(root: Path) -> tuple[int, int]:
    n = size = 0
    for p in sources.iter_py_files(root, "transformer_engine"):
        n += 1
        size += p.stat().st_size
    return n, size


class Caches:
    """Fresh analysis caches that share the downloaded releases (symlinked, read only)."""

    def __init__(self, base: Path):
        self.base = base
        self.n = 0

    def fresh(self, name: str) -> dict:
        self.n += 1
        d = self.base / f"{name}-{self.n}"
        d.mkdir(parents=True)
        for sub in ("releases", "index"):
            src = sources.cache_dir() / sub
            if src.is_dir():
                (d / sub).symlink_to(src.resolve(), target_is_directory=True)
        return self.env(d)

    @staticmethod
    def env(d: Path) -> dict:
        return dict(os.environ, FA4_AUDIT_CACHE=str(d), FA4_AUDIT_OFFLINE="1", PYTHONHASHSEED="0")


def _fmt_s(t: Timed) -> str:
    return f"min {t.min:6.3f} s  median {t.median:6.3f} s"


def _ratio(t: Timed, floor: Timed) -> str:
    return f"{t.min / floor.min:5.2f}x / {t.median / floor.median:5.2f}x floor"


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def parse_only() -> None:
    """``python -m analyzer sites ...`` as the CLI runs it (same start, release lookup, read
    and parse workers), stopped right after the libcst parse of the files that spell
    FlashAttention: the part of the call-site pass the first release also did, the floor
    under any pass that keeps the call-site analysis a libcst pass."""
    from analyzer.sites import pipeline, prefilter
    from analyzer.sites.parse import _Parser
    from analyzer.sources import iter_py_files, walk_tree

    def cut(root, package_dir, jobs, use_cache, progress, *_a, **_k):
        root = Path(root)
        top = root / package_dir if package_dir else root
        files = list(iter_py_files(root, package_dir, list(walk_tree(top, []))))
        data = {p.relative_to(root).as_posix(): p.read_bytes() for p in files}
        parser = _Parser(data, jobs, False, progress)
        needles = prefilter.seeds(())
        parser.start({r for r, d in data.items() if d and prefilter.matches(d, needles)})
        parser.finish()
        parser.close()
        bad = sorted(r for r, ir in parser.irs.items() if ir.error is not None)
        sys.stderr.write(f"parsed {len(parser.irs)} files" + (f"; errors in {bad}" if bad
                                                             else "") + "\n")
        sys.stderr.flush()
        os._exit(1 if bad else 0)

    pipeline._audit_tree = cut
    from analyzer.cli import console_main

    sys.argv = ["fa4-audit", *sys.argv[1:]]
    console_main()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analyzer.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--te", default="2.20.2")
    ap.add_argument("--fa4", action="append", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", default="1,2,4,8", help="copies of the TE tree (comma-separated)")
    ap.add_argument("--no-scale", action="store_true")
    ap.add_argument("--baseline", default="b6ec79e", metavar="REV",
                    help="git revision whose call-site pass is timed beside this one's "
                         "(default: b6ec79e, the first release; 'none' to skip)")
    ap.add_argument("--wrapper-number", type=int, default=20_000)
    ap.add_argument("--wrapper-repeat", type=int, default=15)
    args = ap.parse_args(argv)
    fa4 = args.fa4 or ["4.0.0b11", "4.0.0b36"]
    r = max(1, args.repeat)

    te = sources.resolve("te", args.te)                # downloads are not part of any timing
    for f in fa4:
        sources.resolve("fa4", f)
    nrel = len(sources.cached_versions("fa4"))
    nfiles, nbytes = py_files(te.root)
    tmp = Path(tempfile.mkdtemp(prefix="fa4-audit-bench-"))
    global _CWD
    _CWD = snapshot(tmp / "tool")
    caches = Caches(tmp / "caches")
    m = [PY, "-m", "analyzer"]
    fa4_args = [a for f in fa4 for a in ("--fa4", f)]
    started = time.perf_counter()
    rows: list[tuple[str, str]] = []
    goals: list[tuple[str, str, bool]] = []
    try:
        quiet = lambda i: caches.env(tmp)           # noqa: E731 - the floor touches no cache
        floor = timed("floor", [PY, "-c", _FLOOR, str(te.root / "transformer_engine")], r, quiet)

        # cold then warm full audit, pairwise in one cache each
        cold, warm = Timed("cold audit"), Timed("warm audit")
        audit = m + ["audit", "--quiet", "--te", args.te, *fa4_args]
        for i in range(r):
            env = caches.fresh("audit")
            for t in (cold, warm):
                took, code, rss, last = run_once(audit + ["--out", str(tmp / f"out{i}")], env)
                t.secs.append(took)
                t.codes.append(code)
                t.rss_mb.append(rss)
                t.last = last
        sites_cmd = m + ["sites", "--quiet", "--te", args.te, "--format", "json"]
        base_dir = baseline(args.baseline, tmp / "baseline")
        sites, base = Timed("cold sites"), Timed("cold sites, baseline")
        # the same command cut right after the libcst parse of the files that spell
        # FlashAttention (the first release's whole work but its 0.06 s solve)
        parsed = Timed("cold sites, libcst parse only")
        parse_cmd = [PY, "-c", "from analyzer.bench import parse_only; parse_only()",
                     *sites_cmd[3:]]
        pairs = [(sites, None), (parsed, None)] + \
            ([(base, base_dir)] if base_dir is not None else [])
        for _ in range(r):          # interleaved: a burst of load hits both alike
            for t, cwd in pairs:
                took, code, rss, last = run_once(parse_cmd if t is parsed else sites_cmd,
                                                 caches.fresh("sites"), cwd)
                t.secs.append(took)
                t.codes.append(code)
                t.rss_mb.append(rss)
                t.last = last
        hist = timed("cold history", m + ["history", "--quiet", "--offline", "--te", args.te,
                                          "--format", "json"], r, lambda i: caches.fresh("history"))
        hist_env = caches.fresh("history-warm")
        timed("fill", m + ["history", "--quiet", "--offline", "--te", args.te], 1, lambda i: hist_env)
        hist_warm = timed("warm history", m + ["history", "--quiet", "--offline", "--te", args.te,
                                               "--format", "json"], r, lambda i: hist_env)
        # make audit: the Makefile's arguments; first run fills the cache, then "again"
        mk_env = caches.fresh("make-audit")
        mk = m + ["make-audit", "--te", args.te, "--fa4", "4.0.0b11", "--fa4", "newest",
                  "--out", str(tmp / "make-out")]
        mk_first = timed("make-audit first", mk, 1, lambda i: mk_env)
        mk_again = timed("make-audit again", mk, r, lambda i: mk_env)

        from fa4_patch.bench import measure, overhead

        wrap_rows = measure(args.wrapper_number, args.wrapper_repeat)

        scale: list[tuple[int, int, int, Timed, Timed]] = []
        if not args.no_scale:
            for n in [int(x) for x in args.scale.split(",") if x.strip()]:
                root = scaled_tree(te.root, n, tmp / f"scaled{n}")
                files, size = py_files(root)
                f_t = timed(f"floor {n}x", [PY, "-c", _FLOOR, str(root / "transformer_engine")],
                            1, quiet)
                a_t = timed(f"cold audit {n}x", m + ["audit", "--quiet", "--te", str(root),
                                                     *fa4_args, "--out", str(tmp / f"so{n}")],
                            1, lambda i: caches.fresh(f"scale{n}"))
                scale.append((n, files, size, f_t, a_t))
                shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # ------------------------------------------------------------------ report
    rows.append(("TE tree", f"{te.label()}: {nfiles} .py files, {nbytes / 1e6:.1f} MB; FA4 "
                            f"{', '.join(fa4)}; {r} repeats each, fresh process each"))
    rows.append(("floor: ast.parse of every file", _fmt_s(floor)))
    rows.append(("full audit, cold", f"{_fmt_s(cold)}  {_ratio(cold, floor)}  exit {cold.codes[-1]}, "
                                     f"peak {cold.peak_mb:.0f} MB"))
    rows.append(("call-site pass, cold", f"{_fmt_s(sites)}  {_ratio(sites, floor)}"))
    rows.append(("call-site pass cut after its libcst parse", f"{_fmt_s(parsed)}  "
                                                             f"{_ratio(parsed, floor)}"))
    if base.secs:
        rows.append((f"call-site pass, cold, {args.baseline}", f"{_fmt_s(base)}  "
                     f"{_ratio(base, floor)}  exit {base.codes[-1]}"))
        rows.append((f"  left for everything after the parse, within {args.baseline}'s time",
                     f"{base.min - parsed.min:+.3f} / {base.median - parsed.median:+.3f} s "
                     f"(min / median; this pass: {sites.min - parsed.min:+.3f} / "
                     f"{sites.median - parsed.median:+.3f} s)"))
    else:
        rows.append((f"call-site pass, cold, {args.baseline}",
                     "not measured (no git history here, or --baseline none)"))
    rows.append((f"history over {nrel} releases, cold", f"{_fmt_s(hist)}  exit {hist.codes[-1]}"))
    rows.append((f"history over {nrel} releases, warm", _fmt_s(hist_warm)))
    rows.append(("full audit, warm", f"{_fmt_s(warm)}  {_ratio(warm, floor)}"))
    rows.append(("make-audit, first run (fills the cache)", f"{mk_first.min:6.3f} s  exit {mk_first.codes[-1]}"))
    rows.append(("make-audit again, nothing changed", f"{_fmt_s(mk_again)}  exit {mk_again.codes[-1]}"))
    goals += [
        ("cold full audit <= 1.0x floor (min / median)", f"{cold.min / floor.min:.2f}x / "
         f"{cold.median / floor.median:.2f}x", cold.median <= floor.median),
        ("cold call-site pass <= 1.0x floor", f"{sites.min / floor.min:.2f}x / "
         f"{sites.median / floor.median:.2f}x", sites.median <= floor.median),
        *([(f"cold call-site pass no slower than {args.baseline} (min / median)",
            f"{sites.min / base.min:.2f}x / {sites.median / base.median:.2f}x",
            sites.median <= base.median)] if base.secs else []),
        (f"history over {nrel} releases, cold <= 5 s", f"{hist.min:.2f} / {hist.median:.2f} s",
         hist.median <= 5.0),
        ("warm audit <= 0.5 s", f"{warm.min:.3f} / {warm.median:.3f} s", warm.median <= 0.5),
        ("make-audit again <= 1 s", f"{mk_again.min:.3f} / {mk_again.median:.3f} s",
         mk_again.median <= 1.0),
    ]
    worst_min = max(overhead(w, "wrap", 0) for w in wrap_rows)
    worst_med = max(overhead(w, "wrap", 1) for w in wrap_rows)
    inl = [w for w in wrap_rows if w.get("inline") is not None]
    goals.append(("fa4_patch.wrap <= 1 us, worst form (min / median)",
                  f"{worst_min:.0f} / {worst_med:.0f} ns", worst_med <= 1000))
    if inl:
        i_min = max(overhead(w, "inline", 0) for w in inl)
        i_med = max(overhead(w, "inline", 1) for w in inl)
        goals.append(("codemod inline helper <= 1 us, worst form (min / median)",
                      f"{i_min:.0f} / {i_med:.0f} ns", i_med <= 1000))
    peak = max([cold.peak_mb] + [a.peak_mb for *_, a in scale])
    if scale:
        top = scale[-1]
        goals.append((f"peak memory <= 150 MB at {top[0]}x the tree", f"{top[4].peak_mb:.0f} MB",
                      top[4].peak_mb <= 150))
        base_n, base_a = scale[0][0], scale[0][4]
        per = [a.min / base_a.min / (n / base_n) for n, *_, a in scale]
        goals.append(("growth with tree size linear (time per copy within 1.5x of 1x)",
                      " ".join(f"{n}x:{p:.2f}" for (n, *_), p in zip(scale, per)),
                      all(p <= 1.5 for p in per)))

    width = max(len(k) for k, _ in rows)
    print("fa4-audit benchmark (one run; figures, not assertions)")
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")
    print("\n  fa4_patch.wrap and the codemod's inline helper, overhead per call over the bare "
          "call, ns (min / median of interleaved repeats):")
    lw = max(len(w["label"]) for w in wrap_rows)
    for w in wrap_rows:
        inline = (f"{overhead(w, 'inline', 0):5.0f} / {overhead(w, 'inline', 1):5.0f}"
                  if w.get("inline") is not None else "    -")
        print(f"    {w['label']:<{lw}}  wrap {overhead(w, 'wrap', 0):5.0f} / "
              f"{overhead(w, 'wrap', 1):5.0f}   inline {inline}   (bare {w['bare'][0]:.0f}, "
              f"floor of any wrapper {overhead(w, 'floor', 0):.0f})")
    if scale:
        print("\n  scaling (one cold run each, fresh cache):")
        for n, files, size, f_t, a_t in scale:
            print(f"    {n}x: {files:5d} files {size / 1e6:5.1f} MB  floor {f_t.min:6.3f} s  "
                  f"cold audit {a_t.min:7.3f} s ({a_t.min / f_t.min:4.2f}x floor, exit "
                  f"{a_t.codes[-1]})  peak {a_t.peak_mb:5.0f} MB")
    print("\n  goals:")
    gw = max(len(g[0]) for g in goals)
    for name, value, ok in goals:
        print(f"    {name:<{gw}}  {value:<22}  {_verdict(ok)}")
    print(f"\n  (medians decide met / not met; peak memory is the largest single process; "
          f"bench took {time.perf_counter() - started:.0f} s; load average "
          f"{os.getloadavg()[0]:.2f} at the end)")
    del peak
    return 0


if __name__ == "__main__":
    sys.exit(main())
