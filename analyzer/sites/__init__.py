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
        parts: dict[str, list] = {}
        if jobs:
            import libcst  # noqa: F401  (once here, inherited by the forked workers)
        if len(jobs) > 1 and self.jobs > 1:
            workers = min(self.jobs, len(jobs))
            with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as ex:
                for rel, off, ir in ex.map(_parse_job, jobs):
                    parts.setdefault(rel, []).append((off, ir))
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
               jobs: int | None = None, use_cache: bool = True, progress=None) -> SitesReport:
    """Audit every .py file under ``root/package_dir`` (or ``root``). Never returns "safe" for
    code it did not see: unreadable or unparseable relevant files are failures (verdict error)."""
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
    modnames = {}
    for rel in data:
        name, _ = _modname(rel)
        modnames[name] = rel
    wrapper_names = {B.TREE_WRAPPER} | {w for w in wrappers if w}
    needles = prefilter.seeds(wrappers)
    parser = _Parser(data, jobs, use_cache, progress)
    selected = {rel for rel, d in data.items() if prefilter.matches(d, needles)}
    cap = _max_bytes()
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
            if rel not in mods and ir.error is None:
                name, is_pkg = _modname(rel)
                m = Mod(rel, name, is_pkg, ir)
                build_module(m)
                mods[rel] = m
        pending: set[str] = set()

        def request_load(module: str) -> bool:
            rel = modnames.get(module)
            if rel is not None and rel not in parser.irs:
                pending.add(rel)
            return False

        def request_callers(term: str) -> bool:
            if term in searched:
                return False
            searched.add(term)
            t = term.encode()
            for rel, d in data.items():
                if rel not in parser.irs and t in d:
                    pending.add(rel)
            return False

        t0 = time.perf_counter()
        solver = Solver(mods, modnames, wrapper_names, request_load, request_callers,
                        lambda rel: rel in parser.irs)
        analysis = Analysis(solver, Text(data), wrapper_names)
        calls, site_info = analysis.run()
        rounds = 1
        while solver.next_round() and rounds < 8:
            analysis = Analysis(solver, Text(data), wrapper_names)
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

    report = SitesReport(root=str(root), package_dir=package_dir, files_total=len(files),
                         files_parsed=len(parser.irs), files_skipped=len(files) - len(parser.irs),
                         cache_hits=parser.hits, analyzer_version=__version__)
    _records(report, solver, analysis, calls, site_info, Text(data), mods)
    report.findings = failures + report.findings
    _USES.clear()
    report.timings = {"read_s": round(t_read, 4), "parse_s": round(parser.parse_s, 4),
                      "solve_s": round(t_solve, 4),
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


def _records(report: SitesReport, solver: Solver, analysis: Analysis, calls, site_info,
             text: Text, mods: dict[str, Mod]) -> None:
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
                f"without a trusted normaliser (wrapper chain: {wr})",
                rec["path"], line, col, via, "error"))
        if rec["scope"] != "<module>" and rec["kind"] == "import" and fa4:
            findings.append(Finding(
                R.IMPORT_OUTSIDE_BINDING_SITE.code, R.IMPORT_OUTSIDE_BINDING_SITE.name,
                f"FA4 {', '.join(sorted({v.entry.name for v in fa4}))} imported inside "
                f"{rec['scope']} as {rec['name']}, away from the module-level binding site",
                rec["path"], line, col, via, "error"))

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
                    bool(c["tte"]), via)
        report.calls.append(fc)
        if fc.coverage == "uncovered":
            fa4names = sorted({v.entry.name for v in c["unwrapped"]})
            findings.append(Finding(
                R.UNCOVERED_CALL.code, R.UNCOVERED_CALL.name,
                f"{fc.callee}(...) can reach FA4 {', '.join(fa4names)} unnormalised: {fc.coverage_reason}",
                fn.mod.path, line, col, via, "error"))

    # wrappers ---------------------------------------------------------------------------------
    for w, t in sorted(analysis.trust.items(), key=lambda x: (x[0].kind, x[0].label)):
        fn = solver.fns.get(w.key) if w.kind == "tree" else None
        path = fn.mod.path if fn is not None else t.path
        line = fn.ir.pos[0] if fn is not None and isinstance(fn.ir.pos[0], int) else t.line
        report.wrappers.append(WrapperTrust(w.label, w.kind, path, line, t.normaliser, t.trusted, t.reason))
        if not t.trusted:
            findings.append(Finding(
                R.UNTRUSTED_WRAPPER.code, R.UNTRUSTED_WRAPPER.name,
                f"wrapper {w.label} is not trusted: {t.reason}; bindings it wraps count as unwrapped",
                path, line, 1 if line else 0, (), "error"))
    findings.sort(key=lambda f: (f.path, f.line, f.col, f.code))
    report.findings = findings


# ``analyzer.sites.render`` is both a module (``from analyzer.sites.render import render``) and,
# as an attribute of this package, the function itself: import the module once, then bind the
# name to its function (a later import of the already-loaded module does not rebind it).
from analyzer.sites import render as _render_module  # noqa: E402

render = _render_module.render
