"""The call-site pass, stage by stage: read -> reach (import graph) -> parse (libcst, in
parallel with reach) -> flow (``flow.Solver``, re-run while it asks for more files) ->
decide (``verdicts``: behaviour, pairs) -> escapes -> records (``records``)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Sequence

from analyzer import __version__
from analyzer.errors import AuditError
from analyzer.model import Finding
from analyzer.sources import iter_py_files, walk_tree
from analyzer.sites import bindings as B
from analyzer.sites import cache as C
from analyzer.sites import prefilter
from analyzer.sites import rules as R
from analyzer.sites.coverage import Analysis, Text
from analyzer.sites.flow import FAFunc, Mod, Solver, build_module
from analyzer.sites.model import SitesReport
from analyzer.sites.parse import _Parser, _max_bytes, _modname
from analyzer.sites.records import _reach_findings, _reach_json, _records, _USES

MAX_ROUNDS = 12


def _over_cap(rel: str, data: dict, cap: int, failures: list) -> None:
    """Fail closed fast: a file over the parse cap that may reach FA4 is an error (analysed as
    empty, so nothing else times out on it), never skipped."""
    failures.append(Finding(
        R.UNPARSEABLE.code, R.UNPARSEABLE.name,
        f"{rel} is {len(data[rel]) / 1e6:.1f} MB, over the {cap / 1e6:.1f} MB parse cap "
        "(FA4_AUDIT_SITES_MAX_MB); it mentions FlashAttention, so nothing can be said "
        "about the tree", rel, 0, 0, (), "failure"))
    data[rel] = b""


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
    from analyzer.gcpolicy import fewer_collections
    from analyzer.sites import behaviour as BH

    B.EXTRA_FA4.clear()
    try:
        # what the pass starts (parse workers, a waiting sandbox child) is stopped on any exit
        with fewer_collections(), contextlib.ExitStack() as cleanup:
            cleanup.callback(BH.release)
            return _audit_tree(Path(root), package_dir, jobs, use_cache, progress,
                               tuple(fa4_modules), resolvers, fa4_params or {}, cleanup)
    finally:
        B.EXTRA_FA4.clear()


def _audit_tree(root: Path, package_dir, jobs, use_cache, progress, fa4_modules, resolvers,
                fa4_params, cleanup: contextlib.ExitStack) -> SitesReport:
    from analyzer.sites import behaviour as BH
    from analyzer.sites import escape as E
    from analyzer.sites import pairs as P
    from analyzer.sites import reach as RC
    from analyzer.sites import verdicts as V

    wrappers: Sequence[str] = ()
    t_start = time.perf_counter()
    root = Path(root)
    conf = root             # where the audited tree's pyproject.toml lives
    if not package_dir and (root / "__init__.py").is_file() and \
            root.resolve().name.isidentifier():
        # the folder audited is itself a package (``--tree myllm/``): its modules are
        # ``myllm.x`` to the imports that name them (``from myllm.backends import fa``), as
        # when its parent folder is audited with this package as the package folder
        package_dir = root.resolve().name
        root = root.resolve().parent
    top = root / package_dir if package_dir else root
    if not top.is_dir():
        raise AuditError(f"{top}: not a folder")
    # one walk of the tree serves the .py files and the other code Python can run
    unentered: list[Path] = []
    walked = list(walk_tree(top, unentered))
    files = list(iter_py_files(root, package_dir, walked))
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
    # code Python can run that is not a .py module (a sourceless .pyc, a zip archive, a text
    # file run by exec/runpy/a loader by path): unseen, so an error where it may matter (read
    # before the report cache: a new archive beside unchanged sources is a new tree)
    from analyzer.sites.loadable import unread_code
    unread = unread_code(walked, root, _max_bytes())
    t_read = time.perf_counter() - t_start
    rkey = None
    if use_cache and not failures:
        # an identical tree judged by identical code and options: the same report
        opts = {"package_dir": package_dir, "fa4_modules": sorted(fa4_modules),
                "resolvers": [(r.label, r.variant) for r in (resolvers or P.default_resolvers())],
                "params": fa4_params, "max": _max_bytes(), "unread": unread,
                "pyproject": (conf / "pyproject.toml").read_text()
                if (conf / "pyproject.toml").is_file() else ""}
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
            _over_cap(rel, data, cap, failures)
    for rel, why in unread:
        failures.append(Finding(R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                                f"{rel}: {why}; it may call FlashAttention, so nothing can be "
                                "said about the tree", rel, 0, 0, (), "failure"))
    wrapper_names = {B.TREE_WRAPPER} | {w for w in wrappers if w}
    needles = prefilter.seeds(wrappers)
    parser = _Parser(data, jobs, use_cache, progress)
    cleanup.callback(parser.close)
    # files that spell FlashAttention are parsed (libcst, worker processes) while the import
    # graph is built here; files the graph adds are parsed after it
    spelled = {rel for rel, d in data.items() if d and prefilter.matches(d, needles)}
    parser.start(spelled)
    # Python reads some non-ASCII identifiers as ASCII names (``ｆlash_attn``): the byte
    # scans of the pass cannot follow them -- an error, never a silent skip
    for rel in sorted(data):
        codec = prefilter.foreign_encoding(data[rel])
        if codec:
            failures.append(Finding(
                R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                f"{rel}:1: the file declares the source encoding {codec!r}, which Python "
                "decodes into other text than its bytes spell; the pass reads the bytes, so "
                "it cannot say what this file reaches", rel, 1, 0, (), "failure"))
        odd = prefilter.normalized_identifiers(data[rel])
        if odd:
            line, spelled_as, read = odd[0]
            failures.append(Finding(
                R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                f"{rel}:{line}: the identifier {spelled_as!r} is read by Python as {read!r} "
                "(Unicode normalisation); the pass reads names as they are spelled, so it "
                "cannot say what this file reaches", rel, line, 0, (), "failure"))
    try:
        # the import graph of the whole tree decides what may be skipped
        index = RC.TreeIndex(data)
        # folders the walk did not read (a VCS store, an environment): a folder of the tree
        # put on ``sys.path`` inside one of them is not a folder the graph knows
        index.unread_dirs = tuple(sorted(p.relative_to(root).as_posix() for p in unentered))
        sums = RC.summaries(index, use_cache)
        declared = RC.declared_modules(conf, fa4_modules)
        # FA4 vendored by another distribution (vLLM's vllm.vllm_flash_attn.cute) and
        # imported from outside the tree
        declared += [m for m in RC.vendored_elsewhere(index, sums) if m not in declared]
        reach = RC.compute(index, sums, declared)
        import_edges = RC.import_edges(index, sums)
        # this project's fa4_patch is what the tree's fa4_patch.wrap runs, unless the tree
        # may change it: then its wrappers are judged like any other code it cannot see
        index.fa4_patch_tampered = RC.fa4_patch_tampering(index)
        # a name bound from FA4 may hold what the tree put in FA4's namespace instead
        index.fa4_written = RC.fa4_module_writes(index)
    finally:
        parser.finish()
    BH.prewarm()        # the behaviour sandbox's interpreter starts while the flow runs
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
            _over_cap(rel, data, cap, failures)
    parser.parse(selected)

    mods: dict[str, Mod] = {}
    searched: set[str] = set()
    from analyzer.sites.attrstores import StoreIndex
    from analyzer.sites.modvalues import ModuleValues

    module_values = ModuleValues(index)       # what a module-level name of the tree holds
    attr_stores = StoreIndex(index, data)     # who may set an attribute a window is read from
    judge.attr_stores = attr_stores           # ... or a wrapper's own state (``self.normalize``)
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
        solver.attr_stores = attr_stores
        solver.import_edges = import_edges
        solver.module_values = module_values
        solver.fa4_patch_tampered = index.fa4_patch_tampered
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
        # a module-level function that calls FA4 with windows it takes as parameters: what
        # the tree's own calls of it pass (``coverage._from_callers``) is read from the files
        # that call it by name
        for c in calls:
            fnobj = c.get("fn")
            if c.get("fa4") and fnobj is not None and fnobj.ir is not None \
                    and fnobj.cls is None and "." not in fnobj.qualname and fnobj.params:
                request_callers(fnobj.name)
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
    parser.close()          # every file the pass needs is parsed

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
    escapes = E.find(solver, index, judge, calls, reach.may_hold)
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


