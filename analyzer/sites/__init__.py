"""The call-site coverage pass (``fa4-audit sites``): every window a tree hands to
FlashAttention, every call that can reach FA4, and whether a normaliser covers it.

Public API (others call it; keep it exact)::

    audit_tree(root, *, package_dir=None, wrappers=(), jobs=None, use_cache=True,
               progress=None) -> SitesReport
    render(report, fmt) -> str          # fmt: text | markdown | json | sarif

``root`` is the folder holding ``package_dir`` (``transformer_engine``), or any Python tree when
``package_dir`` is None: nothing here depends on TE's layout.

Stages: read every .py file -> byte prefilter (``prefilter``) -> libcst -> IR in a process
pool, cached by content (``extract``, ``cache``) -> cross-file flow (``flow``), re-run while it
asks for more files (callers / callees found by name) -> records, coverage, findings
(``coverage``) -> renderers (``render``).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Sequence

from analyzer import __version__
from analyzer.errors import AuditError
from analyzer.model import Finding
from analyzer.sources import iter_py_files
from analyzer.sites import bindings as B
from analyzer.sites import cache as C
from analyzer.sites import prefilter
from analyzer.sites import rules as R
from analyzer.sites.coverage import Analysis, Text, atom_safe, atom_text, site_atoms, _value_text
from analyzer.sites.ir import ModuleIR
from analyzer.sites.flow import Const, FAFunc, Mod, Solver, build_module, expr_label
from analyzer.sites.model import Binding, FACall, SitesReport, WindowSite, WrapperTrust

__all__ = ["audit_tree", "render", "SitesReport"]

MAX_ROUNDS = 12


def _parse_job(item):
    from analyzer.sites.extract import extract  # libcst is only imported when parsing
    rel, data, offset = item
    return rel, offset, extract(rel, data, offset)


CHUNK_BYTES = 80_000
MAX_MB_DEFAULT = 2.0   # TE's largest file is 0.26 MB; libcst needs ~3 s a MB a core


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
        if jobs:
            import libcst  # noqa: F401  (once here, inherited by the forked workers)
        if len(jobs) > 1 and self.jobs > 1:
            workers = min(self.jobs, len(jobs))
            ex = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork"))
            futs = [ex.submit(_parse_job, j) for j in jobs]
            self._pending = (todo, keys, jobs, ex, futs)
        self.parse_s += time.perf_counter() - t0
        self._t_start = time.perf_counter()

    def finish(self) -> None:
        todo, keys, jobs, ex, futs = getattr(self, "_pending", ([], {}, [], None, None))
        self._pending = ([], {}, [], None, None)
        t0 = time.perf_counter()
        parts: dict[str, list] = {}
        if ex is not None:
            try:
                for f in futs:
                    rel, off, ir = f.result()
                    parts.setdefault(rel, []).append((off, ir))
            finally:
                ex.shutdown()
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


def audit_tree(root: Path, *, package_dir: str | None = None, wrappers: Sequence[str] = (),
               jobs: int | None = None, use_cache: bool = True, progress=None,
               fa4_modules: Sequence[str] = (), resolvers=None, fa4_params=None) -> SitesReport:
    """Audit every .py file under ``root/package_dir`` (or ``root``). Never returns "safe" for
    code it did not see: unreadable or unparseable relevant files are failures (verdict error).

    ``fa4_modules``: extra FA4 origin modules (also read from ``[tool.fa4-audit] fa4-modules``
    of ``root/pyproject.toml``); ``resolvers``: the audited FA4 releases
    (``pairs.resolvers_for(sources)``; default: the transcribed pre- and post-#2490 rules);
    ``fa4_params``: entry -> (parameter names, required count) of the newest audited release.
    ``wrappers`` is accepted for compatibility and ignored: wrappers are judged by behaviour."""
    B.EXTRA_FA4.clear()
    try:
        return _audit_tree(Path(root), package_dir, jobs, use_cache, progress,
                           tuple(fa4_modules), resolvers, fa4_params or {})
    finally:
        B.EXTRA_FA4.clear()


def _audit_tree(root: Path, package_dir, jobs, use_cache, progress, fa4_modules, resolvers,
                fa4_params) -> SitesReport:
    from analyzer.sites import escape as E
    from analyzer.sites import pairs as P
    from analyzer.sites import reach as RC
    from analyzer.sites import verdicts as V

    wrappers: Sequence[str] = ()
    t_start = time.perf_counter()
    root = Path(root)
    top = root / package_dir if package_dir else root
    if not top.is_dir():
        raise AuditError(f"{top}: not a folder")
    files = list(iter_py_files(root, package_dir))
    if not files:
        raise AuditError(f"{top}: no .py files")
    data: dict[str, bytes] = {}
    failures: list[Finding] = []
    for p in files:
        rel = p.relative_to(root).as_posix()
        try:
            data[rel] = p.read_bytes()
        except OSError as exc:
            failures.append(Finding(R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                                    f"cannot read {rel}: {exc.strerror or exc}; it may call "
                                    "FlashAttention", rel, 0, 0, (), "failure"))
    t_read = time.perf_counter() - t_start
    rkey = None
    if use_cache and not failures:
        # an identical tree judged by identical code and options: the same report
        opts = {"package_dir": package_dir, "fa4_modules": sorted(fa4_modules),
                "resolvers": [(r.label, r.variant) for r in (resolvers or P.default_resolvers())],
                "params": fa4_params, "max": _max_bytes(),
                "pyproject": (root / "pyproject.toml").read_text()
                if (root / "pyproject.toml").is_file() else ""}
        rkey = C.report_key(data, opts)
        hit = C.load_report(rkey)
        if isinstance(hit, SitesReport):
            hit.root = str(root)
            hit.from_cache = True
            # the same keys as a fresh run (nothing was reached, parsed, solved or judged)
            hit.timings = {"read_s": round(t_read, 4), "reach_s": 0.0, "parse_s": 0.0,
                           "solve_s": 0.0, "judge_s": 0.0,
                           "total_s": round(time.perf_counter() - t_start, 4)}
            return hit
    # fail closed fast: a file over the parse cap that mentions FlashAttention, a window key
    # or a dynamic import cannot be analysed in reasonable time -- an error, never skipped
    cap = _max_bytes()
    for rel in sorted(data):
        if len(data[rel]) > cap and prefilter.mentions_fa(data[rel]):
            failures.append(Finding(
                R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                f"{rel} is {len(data[rel]) / 1e6:.1f} MB, over the {cap / 1e6:.1f} MB parse cap "
                "(FA4_AUDIT_SITES_MAX_MB); it mentions FlashAttention, so nothing can be said "
                "about the tree", rel, 0, 0, (), "failure"))
            data[rel] = b""          # analysed as empty; the failure keeps the verdict "error"
    wrapper_names = {B.TREE_WRAPPER} | {w for w in wrappers if w}
    needles = prefilter.seeds(wrappers)
    parser = _Parser(data, jobs, use_cache, progress)
    # files that spell FlashAttention are parsed (libcst, worker processes) while the import
    # graph is built here; files the graph adds are parsed after it
    spelled = {rel for rel, d in data.items() if d and prefilter.matches(d, needles)}
    parser.start(spelled)
    try:
        # the import graph of the whole tree decides what may be skipped
        index = RC.TreeIndex(data)
        sums = RC.summaries(index, use_cache)
        declared = RC.declared_modules(root, fa4_modules)
        reach = RC.compute(index, sums, declared)
    finally:
        parser.finish()
    B.EXTRA_FA4.update(reach.vendored)
    B.EXTRA_FA4.update(reach.declared)
    vendored_paths = {index.modules[m].path for m in reach.vendored}
    t_reach = time.perf_counter() - t_start - t_read
    judge = V.Judge(index, resolvers if resolvers is not None else P.default_resolvers(),
                    fa4_params)
    modnames = {}
    for rel in data:
        name, _ = _modname(rel)
        modnames[name] = rel
    selected = spelled | {index.modules[m].path for m in reach.reaching}
    selected -= vendored_paths
    for rel in sorted(selected):
        if len(data[rel]) > cap:   # fail closed fast instead of parsing for minutes
            failures.append(Finding(
                R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                f"{rel} is {len(data[rel]) / 1e6:.1f} MB, over the {cap / 1e6:.1f} MB parse cap "
                "(FA4_AUDIT_SITES_MAX_MB); it mentions FlashAttention, so nothing can be said "
                "about the tree", rel, 0, 0, (), "failure"))
            data[rel] = b""          # analysed as empty; the failure keeps the verdict "error"
    parser.parse(selected)

    mods: dict[str, Mod] = {}
    searched: set[str] = set()
    t_solve = 0.0
    for _round in range(MAX_ROUNDS):
        for rel, ir in parser.irs.items():
            if rel not in mods and ir.error is None and rel not in vendored_paths:
                name, is_pkg = _modname(rel)
                m = Mod(rel, name, is_pkg, ir)
                build_module(m)
                mods[rel] = m
        pending: set[str] = set()

        def request_load(module: str) -> bool:
            rel = modnames.get(module)
            if rel is not None and rel not in parser.irs and rel not in vendored_paths:
                pending.add(rel)
            return False

        def request_callers(term: str) -> bool:
            if term in searched:
                return False
            searched.add(term)
            t = term.encode()
            for rel, d in data.items():
                if rel not in parser.irs and t in d and rel not in vendored_paths:
                    pending.add(rel)
            return False

        t0 = time.perf_counter()
        solver = Solver(mods, modnames, wrapper_names, request_load, request_callers,
                        lambda rel: rel in parser.irs)
        analysis = Analysis(solver, Text(data), wrapper_names, judge)
        calls, site_info = analysis.run()
        rounds = 1
        while solver.next_round() and rounds < 8:
            analysis = Analysis(solver, Text(data), wrapper_names, judge)
            calls, site_info = analysis.run()
            rounds += 1
        # names through which FA entry points leave a module: module-level bindings and
        # functions that return one; files spelling them may use them
        for rec in list(solver.records.values()):
            if rec["scope"] == "<module>":
                request_callers(rec["name"])
        for k, v in list(solver.memo.items()):
            if k[0] == "ret" and any(isinstance(x, FAFunc) for x, _ in v):
                fnobj = solver.fns.get(k[1])
                # only module-level functions can be called by name from another file
                if fnobj is not None and fnobj.ir is not None and "." not in fnobj.qualname:
                    request_callers(fnobj.name)
        t_solve += time.perf_counter() - t0
        if not pending:
            break
        parser.parse(pending)
    else:
        failures.append(Finding(R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                                f"the pass kept finding new files after {MAX_ROUNDS} rounds",
                                "", 0, 0, (), "failure"))

    for rel in sorted(parser.irs):
        ir = parser.irs[rel]
        if ir.error is not None:
            failures.append(Finding(R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                                    f"{ir.error}; this file may call FlashAttention, so nothing "
                                    "can be said about the tree", rel, 0, 0, (), "failure"))
    if solver.truncated:
        failures.append(Finding(R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                                f"flow analysis hit its depth limit ({len(solver.truncated)} times); "
                                "results would be incomplete", "", 0, 0, (), "failure"))

    t0 = time.perf_counter()
    V.decide(calls, solver, Text(data), judge)
    reaching_names = set(reach.reaching) | set(reach.origins)

    def may_hold(dotted: str) -> bool:
        return any(dotted == m or dotted.startswith(m + ".") or m.startswith(dotted + ".")
                   for m in reaching_names) or B.fa_version_of_module(dotted) == "fa4"

    escapes = E.find(solver, index, judge, calls, may_hold)
    t_judge = time.perf_counter() - t0
    report = SitesReport(root=str(root), package_dir=package_dir, files_total=len(files),
                         files_parsed=len(parser.irs), files_skipped=len(files) - len(parser.irs),
                         cache_hits=parser.hits, analyzer_version=__version__)
    report.releases = [r.label for r in judge.resolvers]
    report.reach = _reach_json(reach, index)
    _records(report, solver, analysis, calls, site_info, Text(data), mods, judge)
    report.findings = failures + _reach_findings(reach, index, escapes) + report.findings
    report.findings.sort(key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    report.reaches_fa4 = bool(reach.reaching or reach.dynamic_fa4 or reach.dynamic_unknown
                              or report.fa4_calls
                              or any("fa4" in b.versions for b in report.bindings)
                              or any(f.level in ("error", "unknown") for f in report.findings))
    _USES.clear()
    if rkey is not None and report.verdict != "error":
        C.store_report(rkey, report)
    report.timings = {"read_s": round(t_read, 4), "reach_s": round(t_reach, 4),
                      "parse_s": round(parser.parse_s, 4),
                      "solve_s": round(t_solve, 4), "judge_s": round(t_judge, 4),
                      "total_s": round(time.perf_counter() - t_start, 4)}
    return report


# ----------------------------------------------------------------------------- records

def _loc(text: Text, path: str, pos) -> tuple[int, int]:
    if not pos or not isinstance(pos[0], int) or not pos[0]:
        return 0, 0
    return pos[0], text.col(path, pos[0], pos[1])


_USES: dict = {}


def _count_uses(mods: dict[str, Mod], m: Mod, name: str):
    """(loads of module-level ``name`` in its module + imports of it by other modules, how many
    of those loads are the innermost argument of a module-level wrapping assignment)."""
    if id(m) not in _USES:
        _USES[id(m)] = _module_uses(mods, m)
    loads, wraps = _USES[id(m)]
    return loads.get(name, 0), wraps.get(name, 0)


def _module_uses(mods: dict[str, Mod], m: Mod):
    from collections import Counter
    loads: Counter = Counter()
    wraps: Counter = Counter()

    def expr(e, skip=None):
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, tuple) and x:
                if x[0] == "N":
                    if x[1] != skip:
                        loads[x[1]] += 1
                    continue
                stack.extend(y for y in x[1:] if isinstance(y, (tuple, list)))
            elif isinstance(x, list):
                stack.extend(x)

    def target(t):
        if t[0] in ("S", "A"):
            expr(t[1])
            if t[0] == "S":
                expr(t[2])
        elif t[0] == "T":
            for s in t[1]:
                target(s)
        elif t[0] == "*":
            target(t[1])

    def stmts(body, top=False):
        for st in body:
            tag = st[0]
            if tag == "asg":
                names = {t[1] for t in st[1] if t[0] == "N"}
                v = st[2]
                while top and v[0] == "C" and len(v[2]) == 1 and v[2][0][0] == "p":
                    v = v[2][0][2]
                self_rebind = None
                if top and v[0] == "N" and v is not st[2]:
                    if v[1] in names:
                        self_rebind = v[1]      # name = w(name): the name lives on
                    else:
                        wraps[v[1]] += 1        # x = w(name): consumed by wrapping
                expr(st[2], skip=self_rebind)
                for t in st[1]:
                    target(t)
            elif tag in ("ex", "ret"):
                expr(st[1])
            elif tag == "aug":
                expr(st[2])
                target(st[1])
                if st[1][0] == "N":
                    loads[st[1][1]] += 1
            elif tag == "if":
                stmts(st[3], top); stmts(st[4], top)
            elif tag == "try":
                stmts(st[1], top)
                for _, hb in st[2]:
                    stmts(hb, top)
                stmts(st[3], top); stmts(st[4], top)
            elif tag == "loop":
                expr(st[2]); stmts(st[3]); stmts(st[4])
            elif tag == "with":
                for e, _ in st[1]:
                    expr(e)
                stmts(st[2])
            elif tag == "def":
                f = st[1]
                for d in f.decorators:
                    expr(d)
                for _, _, dflt in f.params:
                    if dflt is not None:
                        expr(dflt)
                stmts(f.body)
            elif tag == "cls":
                c = st[1]
                for d in c.decorators + c.bases:
                    expr(d)
                stmts(c.body)
            elif tag == "blk":
                for b in st[1]:
                    stmts(b)

    stmts(m.ir.body, True)
    for other in mods.values():
        if other is m:
            continue
        for item in _imports(other.ir.body):
            local, module, attr, level, _ = item
            if attr is None:
                continue
            base = other.name.split(".") if other.is_pkg else other.name.split(".")[:-1]
            if level:
                base = base[: len(base) - (level - 1)] if level - 1 <= len(base) else []
                absmod = ".".join([*base, module] if module else base)
            else:
                absmod = module
            if absmod == m.name or m.name.endswith("." + absmod):
                loads[attr] += 1
    return loads, wraps


def _imports(body):
    for st in body:
        tag = st[0]
        if tag == "imp":
            yield from st[1]
        elif tag == "if":
            yield from _imports(st[3]); yield from _imports(st[4])
        elif tag == "try":
            yield from _imports(st[1])
            for _, hb in st[2]:
                yield from _imports(hb)
            yield from _imports(st[3]); yield from _imports(st[4])
        elif tag in ("loop",):
            yield from _imports(st[3]); yield from _imports(st[4])
        elif tag == "with":
            yield from _imports(st[2])
        elif tag == "def":
            yield from _imports(st[1].body)
        elif tag == "cls":
            yield from _imports(st[1].body)
        elif tag == "blk":
            for b in st[1]:
                yield from _imports(b)


def _reach_json(reach, index) -> dict:
    return {
        "origins": list(reach.origins), "vendored": [index.modules[m].path for m in reach.vendored],
        "declared": list(reach.declared),
        "reaching": sorted(index.modules[m].path for m in reach.reaching),
        "how": {index.modules[m].path: reach.path_to_fa4.get(m, "") for m in sorted(reach.reaching)},
    }


def _reach_findings(reach, index, escapes) -> list[Finding]:
    out = []
    for path, d in reach.dynamic_unknown:
        msg = (d.why if d.why.startswith("hands a window") else
               f"{d.spelled} loads a module named at run time, and {d.why}: it may be FA4, "
               "and the windows it gets cannot be judged")
        out.append(Finding(R.DYNAMIC_IMPORT.code, R.DYNAMIC_IMPORT.name, msg, path, d.line,
                           d.col, (), "unknown"))
    for path, d in reach.dynamic_fa4:
        if d.carries_window:
            out.append(Finding(R.DYNAMIC_IMPORT.code, R.DYNAMIC_IMPORT.name,
                               f"{d.spelled} loads FA4 ({d.constant}) dynamically and {d.why}; "
                               "calls through it are not followed", path, d.line, d.col, (),
                               "unknown"))
    activates = [(p, t) for p, t in reach.torch if t.what.startswith("activates")]
    handoffs = [(p, t) for p, t in reach.torch if not t.what.startswith("activates")]
    if activates:
        where = ", ".join(f"{p}:{t.line}" for p, t in activates[:3])
        for path, t in handoffs:
            out.append(Finding(R.FA4_THROUGH_TORCH.code, R.FA4_THROUGH_TORCH.name,
                               f"{t.what} while the tree activates torch's FA4 attention "
                               f"({where}): whether -1 reaches FA4 depends on the torch release",
                               path, t.line, t.col, (), "unknown"))
    for path, err in reach.parse_errors:
        raw = index.by_path[path].source
        if any(k in raw for k in ("flash_attn", "window_size", "import_module", "__import__",
                                  *(o.rsplit(".", 1)[-1] for o in reach.origins))):
            out.append(Finding(R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                               f"{path} {err}; it may reach FlashAttention, so nothing can be "
                               "said about the tree", path, 0, 0, (), "failure"))
    for e in escapes:
        out.append(Finding(R.FA4_ESCAPE.code, R.FA4_ESCAPE.name, e.what, e.path, e.line, e.col,
                           (), "unknown"))
    return out


def _records(report: SitesReport, solver: Solver, analysis: Analysis, calls, site_info,
             text: Text, mods: dict[str, Mod], judge=None) -> None:
    # bindings ------------------------------------------------------------------------------
    brecs = sorted(solver.records.values(), key=lambda r: (r["path"], r["line"], r["col"], r["name"]))
    bind_ids = {}
    findings: list[Finding] = []
    for i, rec in enumerate(brecs, 1):
        bind_ids[rec["id"]] = f"B{i}"
    for rec in brecs:
        vals = sorted(rec["values"], key=lambda v: (v.entry.version, v.entry.qual, str(v.chain)))
        m = mods[rec["path"]]
        if rec["scope"] == "<module>":
            env = solver.env(m)
            final = solver.force(env[rec["name"]]) if rec["name"] in env else frozenset()
            finals = {v for v, _ in final}
            live = any(v in finals for v in rec["values"]) or \
                any(isinstance(v, FAFunc) and v.binding == rec["id"] for v in finals)
            fallback = any(isinstance(v, Const) and v.value is None for v in finals)
        else:
            live, fallback = True, False
        fa4 = [v for v in vals if v.entry.version == "fa4"]
        normalised = bool(fa4) and all(analysis.normalised(v) for v in fa4)
        chain = ()
        for v in vals:
            if len(v.chain) > len(chain):
                chain = v.chain
        line, col = _loc(text, rec["path"], rec["pos"])
        via = tuple(vals[0].via) if vals else tuple(rec["via"])
        b = Binding(bind_ids[rec["id"]], rec["path"], line, col, rec["scope"], rec["name"],
                    rec["kind"], tuple(sorted({v.entry.version for v in vals})),
                    tuple(sorted({v.entry.qual for v in vals})), tuple(w.label for w in chain),
                    normalised, live, fallback, via)
        report.bindings.append(b)
        if rec["scope"] == "<module>" and live and fa4 and not normalised:
            uses, wrapped_uses = _count_uses(mods, m, rec["name"])
            if uses and uses == wrapped_uses:
                b.kind = b.kind  # consumed only by wrapping: internal raw name, not reported
                b.via = b.via + ("used only as the argument of a wrapping assignment",)
                continue
            wr = ", ".join(w.label for w in chain) or "no wrapper"
            findings.append(Finding(
                R.UNWRAPPED_BINDING.code, R.UNWRAPPED_BINDING.name,
                f"{rec['name']} is bound to FA4 {', '.join(sorted({v.entry.name for v in fa4}))} "
                f"without a behaviour-checked normaliser (wrapper chain: {wr})",
                rec["path"], line, col, via, "note"))
        if rec["scope"] != "<module>" and rec["kind"] == "import" and fa4:
            findings.append(Finding(
                R.IMPORT_OUTSIDE_BINDING_SITE.code, R.IMPORT_OUTSIDE_BINDING_SITE.name,
                f"FA4 {', '.join(sorted({v.entry.name for v in fa4}))} imported inside "
                f"{rec['scope']} as {rec['name']}, away from the module-level binding site",
                rec["path"], line, col, via, "note"))

    # window sites -------------------------------------------------------------------------
    sites = sorted(site_info, key=lambda s: (s.path, s.pos, s.key))
    site_ids = {s: f"W{i}" for i, s in enumerate(sites, 1)}
    order = sorted(calls, key=lambda c: (c["fn"].mod.path, c["call"][3][0], c["call"][3][1]))
    call_ids = {id(c["call"]): f"C{i}" for i, c in enumerate(order, 1)}
    for s in sites:
        info = site_info[s]
        atoms = site_atoms(solver, s)
        line, col = _loc(text, s.path, s.pos)
        report.window_sites.append(WindowSite(
            site_ids[s], s.path, line, col, s.key, s.style, _value_text(text, s),
            tuple(sorted({atom_text(a) for a in atoms})),
            all(atom_safe(a, set()) for a in atoms),
            tuple(sorted(info["versions"])),
            tuple(sorted({call_ids[id(c)] for c in info["calls"]}, key=lambda x: int(x[1:]))),
            tuple(info["via"])))

    # calls ----------------------------------------------------------------------------------
    for c in order:
        fn = c["fn"]
        call = c["call"]
        line, col = _loc(text, fn.mod.path, call[3])
        bids = sorted({bind_ids[v.binding] for v, _ in c["fa"] if v.binding in bind_ids},
                      key=lambda x: int(x[1:]))
        first = c["unwrapped"][0] if c["unwrapped"] else c["fa"][0][0]
        via = tuple(first.via) + (f"called at {fn.mod.path}:{line} in {fn.qualname}",)
        fc = FACall(call_ids[id(call)], fn.mod.path, line, col, fn.qualname, expr_label(call[1]),
                    tuple(c["entries"]), tuple(c["versions"]), tuple(bids),
                    tuple(sorted({site_ids[s] for s in c["sites"]}, key=lambda x: int(x[1:]))),
                    tuple(sorted(set(c["opaque"]))), c["reaches_fa4"], c["coverage"], c["why"],
                    bool(c["tte"]), via, c.get("status", "n/a"), tuple(c.get("verdicts", ())))
        report.calls.append(fc)
        if fc.reaches_fa4 and fc.status in ("broken", "unknown"):
            fa4names = sorted({v.entry.name for v, _ in c.get("fa4", c["fa"])
                               if v.entry.version == "fa4"})
            per = [v for v in fc.verdicts if v.status == fc.status]
            rels = ", ".join(v.release for v in per)
            first = per[0].witness if per else fc.coverage_reason
            if fc.status == "broken":
                findings.append(Finding(
                    R.BROKEN_CALL.code, R.BROKEN_CALL.name,
                    f"{fc.callee}(...) reaches FA4 {', '.join(fa4names)} and breaks on {rels}: "
                    f"{first}", fn.mod.path, line, col, via, "error"))
            else:
                findings.append(Finding(
                    R.UNPROVED_CALL.code, R.UNPROVED_CALL.name,
                    f"{fc.callee}(...) reaches FA4 {', '.join(fa4names)}, not proved on {rels}: "
                    f"{first}", fn.mod.path, line, col, via, "unknown"))

    # wrappers: every chain judged by behaviour --------------------------------------------
    if judge is not None:
        seen = set()
        for (chain, entry), r in sorted(judge._chain.items(), key=lambda x: str(x[0])):
            if not chain:
                continue
            label = " -> ".join(w.label for w in reversed(chain))
            # reported where the chain is completed: the outermost wrapping call
            at = next((w.at for w in reversed(chain) if w.at), ("", 0, 0))
            key = (label, entry, at)
            if key in seen:
                continue
            seen.add(key)
            used = judge.forms_used.get((chain, entry), set())
            rr = r.for_forms(used) if used else r
            report.wrappers.append(WrapperTrust(f"{label} [{entry}]", "behaviour", at[0], at[1],
                                                label, rr.status == "proved", rr.witness))
            if r.status != "proved" and r.alters:
                # a wrapper that changes windows: judged on the forms the tree's calls use
                level = {"broken": "error", "unknown": "unknown"}.get(rr.status, "note") \
                    if used else "note"
                why = rr.counterexample or rr.witness if level != "note" else \
                    (r.counterexample or r.witness)
                scope = (f" in the call forms the tree uses ({', '.join(sorted(used))})"
                         if level != "note" else
                         " (only in call forms no call in the tree uses)" if used else "")
                findings.append(Finding(
                    R.UNTRUSTED_WRAPPER.code, R.UNTRUSTED_WRAPPER.name,
                    f"{label} around FA4 {entry} changes the window but is not proved "
                    f"({rr.status if level != 'note' else r.status}){scope}: {why}",
                    at[0], at[1], 1 if at[1] else 0, (), level))
    findings = list({(f.path, f.line, f.col, f.code, f.message): f for f in findings}.values())
    findings.sort(key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    report.findings = findings


# ``analyzer.sites.render`` is both a module (``from analyzer.sites.render import render``) and,
# as an attribute of this package, the function itself: import the module once, then bind the
# name to its function (a later import of the already-loaded module does not rebind it).
from analyzer.sites import render as _render_module  # noqa: E402

render = _render_module.render
