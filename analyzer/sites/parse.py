"""Parsing the files the call-site pass must read: libcst -> IR in worker processes (a big file
split at top-level definitions), cached by content (``cache``)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from multiprocessing import get_context

from analyzer.sites import cache as C
from analyzer.sites import lanes as L
from analyzer.sites.ir import ModuleIR

def _parse_job(item):
    from analyzer.sites.extract import extract  # libcst is only imported when parsing
    rel, data, offset = item
    return rel, offset, extract(rel, data, offset)


CHUNK_BYTES = 80_000
MAX_MB_DEFAULT = 2.0   # TE's largest file is 0.26 MB; libcst needs ~3 s a MB a core


def _parse_timeout() -> float:
    try:
        return float(os.environ.get("FA4_AUDIT_PARSE_TIMEOUT_S", "300"))
    except ValueError:
        return 300.0


def _max_bytes() -> int:
    try:
        return int(float(os.environ.get("FA4_AUDIT_SITES_MAX_MB", MAX_MB_DEFAULT)) * 1e6)
    except ValueError:
        return int(MAX_MB_DEFAULT * 1e6)


def _chunks(data: bytes, jobs: int):
    """Split a big file at top-level ``def``/``class``/decorator lines so one file can use
    several cores. Yields (bytes, line offset). A split that does not parse falls back to the
    whole file (see ``_Parser.parse``)."""
    n = min(jobs, len(data) // CHUNK_BYTES + 1) if jobs > 1 else 1
    if n <= 1:
        yield data, 0
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        yield data, 0
        return
    lines = data.splitlines(keepends=True)
    starts = []
    prev = b""
    offset = 0
    for i, ln in enumerate(lines):
        if (ln.startswith((b"def ", b"class ", b"async def ", b"@"))
                and not prev.startswith(b"@") and not prev.rstrip().endswith(b"\\")):
            starts.append((i, offset))
        if ln.strip():
            prev = ln
        offset += len(ln)
    cuts = []
    for k in range(1, n):
        target = len(data) * k // n
        best = min(starts, key=lambda s: abs(s[1] - target), default=None)
        if best is not None and best[0] > 0 and (not cuts or best[0] > cuts[-1]):
            cuts.append(best[0])
    if not cuts:
        yield data, 0
        return
    bounds = [0, *cuts, len(lines)]
    for a, b in zip(bounds, bounds[1:]):
        yield b"".join(lines[a:b]), a


def _modname(rel: str) -> tuple[str, bool]:
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


class _Parser:
    def __init__(self, data: dict[str, bytes], jobs: int | None, use_cache: bool, progress):
        self.data = data
        self.jobs = jobs or os.cpu_count() or 1
        self.use_cache = use_cache
        self.progress = progress
        self.irs: dict[str, ModuleIR] = {}
        self.hits = 0
        self.parse_s = 0.0
        self._pool: ProcessPoolExecutor | None = None

    def _kill(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the worker processes (the pass calls this when it has every file it needs).
        The lanes' zygote stays for the next pass of this process (``lanes.shutdown``)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def parse(self, rels) -> None:
        self.start(rels)
        self.finish()

    def start(self, rels) -> None:
        """Begin parsing ``rels`` in worker processes; the caller may work meanwhile (the
        reach graph runs while libcst parses the files that spell FlashAttention)."""
        t0 = time.perf_counter()
        todo = []
        keys = {}
        for rel in sorted(set(rels) - set(self.irs)):
            d = self.data[rel]
            if self.use_cache:
                k = C.key(d)
                keys[rel] = k
                ir = C.load(k)
                if ir is not None:
                    ir.path = rel
                    self.irs[rel] = ir
                    self.hits += 1
                    continue
            todo.append(rel)
        todo.sort(key=lambda r: -len(self.data[r]))
        jobs = []
        for rel in todo:
            jobs.extend((rel, chunk, off) for chunk, off in _chunks(self.data[rel], self.jobs))
        jobs.sort(key=lambda j: -len(j[1]))
        self._pending = (todo, keys, jobs, None, None)
        # libcst is never imported here: the lanes are forked from a process that imported it
        # once (``lanes``), and parse while this process builds the import graph
        zygote = L.get(self.jobs) if jobs and self.jobs > 1 else None
        used = None
        if zygote is not None and not zygote.busy:
            shares = L.split(jobs, min(self.jobs, zygote.lanes), lambda j: len(j[1]))
            try:
                used = zygote.submit(shares)
            except OSError:             # the zygote is gone (it could not start): the pool
                zygote.close()
        if used is not None:
            self._pending = (todo, keys, jobs, zygote, used)
        elif jobs and (self._pool is not None or (len(jobs) > 1 and self.jobs > 1)):
            # no fork here (or the zygote is serving another pass): a pool whose workers
            # import libcst each, side by side
            if self._pool is None:
                # kept for later rounds (``close``): their workers have libcst loaded already
                self._pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(jobs)),
                                                 mp_context=get_context("fork"))
            futs = [self._pool.submit(_parse_job, j) for j in jobs]
            self._pending = (todo, keys, jobs, self._pool, futs)
        self.parse_s += time.perf_counter() - t0
        self._t_start = time.perf_counter()

    def finish(self) -> None:
        todo, keys, jobs, ex, futs = getattr(self, "_pending", ([], {}, [], None, None))
        self._pending = ([], {}, [], None, None)
        t0 = time.perf_counter()
        parts: dict[str, list] = {}
        if isinstance(ex, L.Zygote):
            try:
                for rel, off, ir in ex.collect(futs, _parse_timeout()):
                    parts.setdefault(rel, []).append((off, ir))
            except TimeoutError:
                from analyzer.errors import AuditError
                raise AuditError(f"parsing did not finish within {_parse_timeout():.0f} s "
                                 "(FA4_AUDIT_PARSE_TIMEOUT_S); nothing can be said about "
                                 "the tree") from None
            except L.LaneError as exc:
                from analyzer.errors import AuditError
                raise AuditError(f"a parse worker failed ({str(exc).splitlines()[0]}); "
                                 "nothing can be said about the tree") from None
        elif ex is not None:
            try:
                for f in futs:
                    rel, off, ir = f.result(timeout=_parse_timeout())
                    parts.setdefault(rel, []).append((off, ir))
            except FuturesTimeout:
                # a worker that never answers (seen once under heavy load: workers waiting on
                # a lock forever) must not hang the audit: fail closed, and stop them
                self._kill()
                from analyzer.errors import AuditError
                raise AuditError(f"parsing did not finish within {_parse_timeout():.0f} s "
                                 "(FA4_AUDIT_PARSE_TIMEOUT_S); nothing can be said about "
                                 "the tree") from None
            except BaseException:
                self.close()
                raise
        else:
            for j in jobs:
                rel, off, ir = _parse_job(j)
                parts.setdefault(rel, []).append((off, ir))
        for rel in todo:
            chunks = sorted(parts[rel], key=lambda x: x[0])
            if len(chunks) == 1:
                ir = chunks[0][1]
            elif any(c.error is not None for _, c in chunks):
                ir = _parse_job((rel, self.data[rel], 0))[2]   # a bad split: the whole file
            else:
                ir = ModuleIR(rel, body=[st for _, c in chunks for st in c.body],
                              positions=",".join(sorted({c.positions for _, c in chunks})))
            ir.path = rel
            self.irs[rel] = ir
            if self.use_cache and ir.error is None:
                C.store(keys.get(rel) or C.key(self.data[rel]), ir)
        self.parse_s += time.perf_counter() - t0


