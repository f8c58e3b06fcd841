"""The full audit: equivalence table + call-site coverage + codemod dry run -> one verdict.

This is the one function the CLI (``audit``, ``make-audit``) and the pytest gate share.
Analysis only: it returns an :class:`AuditReport`; ``analyzer.audit_report`` renders it.

Verdict rule (documented in the README):
  * ``error``   -- any part could not be analysed (fail closed);
  * ``unsafe``  -- a claim fails (the normalising fix itself is wrong), or an FA4-reaching call
    is broken on an audited release (a pair it can pass gets a wrong band, after whatever
    wrapper stands in between); with ``strict``, also a note of the call-site pass (an FA4
    binding exported without a checked normaliser, a wrapper wrong in a form no call uses);
  * ``unknown`` -- nothing is broken but some call could not be proved (exit 1, never safe);
  * ``no-fa4``  -- the tree provably never reaches FA4 (exit 0);
  * ``safe``    -- every FA4-reaching call is proved on every audited release.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

from analyzer import __version__, sources
from analyzer.errors import AuditError
# AuditReport and CodemodPreview live in analyzer.model; re-exported here for existing imports
from analyzer.model import AUDIT_SCHEMA_VERSION, AuditReport, CodemodPreview, Verdict

from analyzer.progress import NULL, Progress

__all__ = ["AUDIT_SCHEMA_VERSION", "AuditReport", "CodemodPreview", "run_audit", "decide",
           "reproduce_command", "codemod_preview", "resolve_inputs", "patched_copy"]


def reproduce_command(te_spec: str, fa4_specs: Sequence[str], strict: bool,
                      wrappers: Sequence[str] = ()) -> str:
    parts = ["fa4-audit", "audit", "--te", te_spec]
    for f in fa4_specs:
        parts += ["--fa4", f]
    for w in wrappers:
        parts += ["--wrapper", w]
    if strict:
        parts.append("--strict")
    return " ".join(shlex.quote(p) for p in parts)


def codemod_preview(te: sources.Source) -> CodemodPreview:
    """Dry run of the codemod on the audited tree (nothing is written)."""
    from fa4_patch import codemod

    try:
        patches = [p for p in codemod.plan(te.root) if p.changed]
    except Exception as exc:  # the codemod failing is reported, and makes the audit an error
        return CodemodPreview([], "", f"{type(exc).__name__}: {exc}")
    return CodemodPreview([p.path for p in patches], "".join(p.diff() for p in patches), None)


def resolve_inputs(te_spec: str | None, fa4_specs: Sequence[str], progress: Progress = NULL
                   ) -> tuple[sources.Source | None, list[sources.Source]]:
    te = sources.resolve("te", te_spec) if te_spec is not None else None
    if te is not None and te.root is None:
        raise AuditError("the call-site pass needs TE sources: give --te a version, path or 'installed'")
    fa4 = []
    for spec in fa4_specs:
        progress.note(f"fetching flash-attn-4 {spec}")
        fa4.append(sources.resolve("fa4", spec))
    return te, fa4


def run_audit(te_spec: str, fa4_specs: Sequence[str], *, strict: bool = False,
              wrappers: Sequence[str] = (), progress: Progress = NULL,
              te_source: sources.Source | None = None,
              fa4_sources: Sequence[sources.Source] | None = None,
              command: str | None = None, with_codemod: bool = True,
              simulate: bool = False, upgrade: bool = False) -> AuditReport:
    """Run every part; never raises for an analysis failure -- it becomes verdict "error".

    ``simulate`` adds the float64 simulated-attention errors to the table (torch on the CPU,
    a few seconds); the verdict rests on the exact band comparison either way."""
    from analyzer.equivalence.table import build_table
    from analyzer.sites import audit_tree

    errors: list[str] = []
    te = te_source or sources.resolve("te", te_spec)
    fa4 = list(fa4_sources) if fa4_sources is not None else resolve_inputs(None, fa4_specs, progress)[1]
    if te.root is None:
        raise AuditError("the call-site pass needs TE sources: give --te a version, path or 'installed'")

    # The equivalence table and the codemod dry run (libcst parses of a few large files) run
    # in worker processes while this one runs the call-site pass.
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from analyzer.sites import lanes
    lanes.prestart()        # forked before the pool's threads exist
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("fork")) as pool:
        table_fut = pool.submit(build_table, fa4, te, simulate=simulate)
        fut = pool.submit(codemod_preview, te) if with_codemod else None

        table = sites = None
        try:
            progress.note("call-site pass")
            from analyzer.sites.pairs import resolvers_for, signatures_of

            sites = audit_tree(te.root, package_dir="transformer_engine", progress=progress,
                               resolvers=resolvers_for(fa4) if fa4 else None,
                               fa4_params=signatures_of(fa4[-1]) if fa4 else None)
        except AuditError as exc:
            errors.append(f"call sites: {exc}")
        try:
            progress.note("equivalence table")
            table = table_fut.result()
        except AuditError as exc:
            errors.append(f"equivalence table: {exc}")
        except Exception as exc:  # the worker died (BrokenProcessPool, ...): fail closed
            errors.append(f"equivalence table: {type(exc).__name__}: {exc}")
        codemod = None
        if fut is not None:
            progress.note("codemod dry run")
            try:
                codemod = fut.result()
            except Exception as exc:  # the worker died: report it, fail closed
                codemod = CodemodPreview([], "", f"codemod dry run failed: {type(exc).__name__}: {exc}")
            if codemod.error:
                errors.append(f"codemod: {codemod.error}")
    progress.done()

    upgrade_report = None
    if upgrade:   # `fa4-audit upgrade`'s hazards, its own section; failing to run it is an error
        from analyzer.upgrade import for_audit
        upgrade_report = for_audit(te, fa4, sites, errors, progress)
    verdict, reasons, breaking = decide(table, sites, strict=strict, errors=errors)
    report = AuditReport(te=te, fa4=fa4, table=table, sites=sites, codemod=codemod,
                         verdict=verdict, reasons=reasons, errors=errors, strict=strict,
                         command=command or reproduce_command(te_spec, fa4_specs, strict, wrappers),
                         breaking_fa4=breaking)
    report.upgrade = upgrade_report   # optional: None unless asked for (analyzer.upgrade)
    return report


def decide(table, sites, *, strict: bool, errors: list[str]) -> tuple[Verdict, list[str], list[str]]:
    """The verdict rule of the module docstring. Returns (verdict, reasons, breaking FA4 labels)."""
    reasons: list[str] = []
    breaking: list[str] = []
    if table is not None:
        if table.verdict == "error":
            errors.append("equivalence table: " + "; ".join(table.errors or ["could not evaluate"]))
        breaking = breaking_fa4(table)
        for claim in table.claims:
            if not claim.holds:
                reasons.append(f"claim failed: {claim.name} ({len(claim.counterexamples)} counterexamples)")
    if sites is not None:
        if sites.verdict == "error":
            failures = [f.message for f in sites.findings if f.level == "failure"]
            errors.append("call sites: " + ("; ".join(failures) or "could not analyse"))
    if errors or table is None or sites is None:
        return "error", errors or ["a part of the audit did not run"], breaking

    unsafe = any(r.startswith("claim failed") for r in reasons)
    calls = sites.fa4_calls
    broken = [c for c in calls if c.status == "broken"]
    unknown = [c for c in calls if c.status == "unknown"]
    other_unknown = [f for f in sites.findings if f.level == "unknown" and f.code != "FA4S005"]
    bad_wrappers = [f for f in sites.findings if f.level == "error" and f.code != "FA4S001"]
    if broken:
        unsafe = True
        rel = sorted({v.release for c in broken for v in c.verdicts if v.status == "broken"})
        first = next(v for v in broken[0].verdicts if v.status == "broken")
        what = first.pairs[0] if first.pairs else first.witness
        reasons.append(f"{len(broken)} FA4 call(s) broken on {', '.join(rel)}, e.g. "
                       f"{broken[0].path}:{broken[0].line}: {what}")
    if bad_wrappers:
        unsafe = True
        reasons.append(f"{len(bad_wrappers)} wrapper(s) around FA4 wrong in a form the tree's "
                       f"calls use: {bad_wrappers[0].message}")
    if unknown or other_unknown:
        if unknown:
            wit = next((v.witness for v in unknown[0].verdicts if v.status == "unknown"), "")
            wit = wit.split(": ", 1)[-1]
            wit = wit if len(wit) <= 100 else wit[:97] + "..."
            where = f"{unknown[0].path}:{unknown[0].line} ({wit})"
        else:
            where = f"{other_unknown[0].path}:{other_unknown[0].line}"
        reasons.append(f"{len(unknown)} FA4 call(s) and {len(other_unknown)} other place(s) "
                       f"could not be proved (unknown is never safe), e.g. {where}")
    notes = [f for f in sites.findings if f.level == "note"]
    if strict and notes:
        unsafe = True
        reasons.append(f"--strict: {len(notes)} note(s) of the call-site pass, e.g. {notes[0].message}")
    if unsafe:
        return "unsafe", reasons, breaking
    if unknown or other_unknown:
        return "unknown", reasons, breaking
    if sites.verdict == "no-fa4":
        return "no-fa4", reasons + ["the tree never reaches FA4: nothing to prove"], breaking
    if breaking:
        reasons.append(f"{', '.join(breaking)} break(s) TE's emitted pairs as-is, but every "
                       f"FA4-reaching call is proved on every audited release")
    else:
        reasons.append("every FA4-reaching call is proved on every audited release")
    return "safe", reasons, breaking


def breaking_fa4(table) -> list[str]:
    """FA4 columns on which some pair TE emits gets a wrong (non-exact) band as-is."""
    bad = []
    for row in table.te_rows:
        for cell in row.cells:
            if cell.input == "as-is" and cell.band not in ("exact", "error") and cell.fa4 not in bad:
                bad.append(cell.fa4)
    return bad


def patched_copy(te: sources.Source, dest_parent: Path | None = None) -> sources.Source:
    """The TE tree with fa4_patch's codemod applied (``--write``).

    With ``dest_parent``, a fresh copy under it (the caller owns it). Without, the copy is kept
    in the cache, keyed by every byte of the TE package and of ``fa4_patch``: the same inputs
    get the same folder back without copying or patching again (the caller must not delete it).
    """
    from fa4_patch import codemod

    label = f"{te.version or te.spec}+fa4_patch"
    if dest_parent is None:
        import hashlib

        h = hashlib.sha256(f"patched {__version__}\0".encode())
        h.update(_tree_digest(te.package_dir, None, every_file=True).encode())
        h.update(_tree_digest(Path(__file__).resolve().parent.parent, "fa4_patch").encode())
        final = sources.cache_dir() / "patched" / h.hexdigest()[:32]
        if not (final / ".complete").is_file():
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
            try:
                shutil.copytree(te.package_dir, tmp / "tree" / "transformer_engine", symlinks=True)
                codemod.write(tmp / "tree", codemod.plan(tmp / "tree"))
                (tmp / ".complete").write_text("")
                if final.exists():          # a broken earlier attempt, or a concurrent one
                    shutil.rmtree(final, ignore_errors=True)
                tmp.rename(final)
            except OSError:
                if not (final / ".complete").is_file():
                    raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return sources.Source("te", f"{te.spec} (patched copy)", "tree", final / "tree", label)
    tmp = Path(tempfile.mkdtemp(prefix="fa4-audit-patched-", dir=dest_parent))
    dest = tmp / "tree"
    shutil.copytree(te.package_dir, dest / "transformer_engine", symlinks=True)
    codemod.write(dest, codemod.plan(dest))
    return sources.Source("te", f"{te.spec} (patched copy)", "tree", dest, label)


# ----------------------------------------------------------------------------- result cache

_OWN_PACKAGES = ("analyzer", "transcriptions", "fa4_patch")


_DIGESTS: dict[tuple, str] = {}


def _tree_digest(root: Path, package_dir: str | None, *, every_file: bool = False) -> str:
    """SHA-256 of every ``.py`` file (or every file) under ``root/package_dir``, names and
    bytes. Memoised for this process by the files' (name, size, mtime) -- an edit changes
    those, so a changed file is read again; the key itself is always over content."""
    import hashlib
    import os

    top = root / package_dir if package_dir else root
    if every_file:
        files = []
        for dirpath, filenames in sources.walk_tree(top):
            files += [dirpath / f for f in filenames]
    else:
        files = list(sources.iter_py_files(root, package_dir))
    stats = []
    for f in files:
        try:
            st = f.lstat()
            stats.append((f.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
        except OSError:
            stats.append((str(f), -1, -1))
    memo = (str(root), package_dir, every_file, tuple(stats))
    if memo in _DIGESTS:
        return _DIGESTS[memo]
    h = hashlib.sha256()
    for f, (rel, _, _) in zip(files, stats):
        h.update(rel.encode() + b"\0")
        try:
            h.update(f.read_bytes() if f.is_file() else os.readlink(f).encode())
        except OSError as exc:
            h.update(f"unreadable {exc}".encode())
        h.update(b"\0")
    _DIGESTS[memo] = h.hexdigest()
    return _DIGESTS[memo]


def _digest_files(h, root: Path, package_dir: str | None) -> None:
    # every file, not only the .py ones: an archive or a text file the tree may run is read
    # by the call-site pass too (``sites.loadable``)
    h.update(_tree_digest(root, package_dir, every_file=True).encode())
    conf = root / "pyproject.toml"       # a tree's own [tool.fa4-audit] settings
    if package_dir is not None and conf.is_file():
        h.update(b"pyproject\0" + conf.read_bytes())


def audit_key(te: sources.Source, fa4: Sequence[sources.Source], options: dict) -> str:
    """Content key of an audit: every byte it reads (the TE package, each FA4 package, this
    tool's own code) and every option. Any change means a new key, so a cached result is only
    ever reused for exactly the same inputs."""
    import hashlib
    import json as _json

    h = hashlib.sha256(f"fa4-audit {__version__} schema {AUDIT_SCHEMA_VERSION}\0".encode())
    here = Path(__file__).resolve().parent.parent
    for pkg in _OWN_PACKAGES:
        _digest_files(h, here, pkg)
    _digest_files(h, te.root, sources.PACKAGES["te"].import_dir)
    for s in fa4:
        h.update(f"fa4 {s.label()}\0".encode())
        _digest_files(h, s.root, sources.PACKAGES["fa4"].import_dir)
    h.update(_json.dumps(options, sort_keys=True, default=str).encode())
    return h.hexdigest()[:32]


REPORT_FILES = ("audit.md", "audit.json", "audit.sarif")


def cached_reports(key: str) -> dict | None:
    """{"files": {name: text}, "verdict", "one_line"} for a cached audit, or None."""
    import json as _json

    d = sources.cache_dir() / "audit" / key
    try:
        meta = _json.loads((d / "meta.json").read_text())
        files = {n: (d / n).read_text() for n in REPORT_FILES}
    except (OSError, ValueError):
        return None
    verdict, line = (meta.get("verdict"), meta.get("one_line")) if isinstance(meta, dict) else (None, None)
    if not isinstance(verdict, str) or not verdict or verdict == "error" or not isinstance(line, str):
        return None       # an audit that could not analyse is never reused: retried instead
    return {"files": files, "verdict": verdict, "one_line": line}


def store_reports(key: str, files: dict[str, str], verdict: str, one_line: str) -> None:
    """Keep a finished audit's reports (never an "error" one: that is retried next time)."""
    import json as _json

    if verdict == "error":
        return
    base = sources.cache_dir() / "audit"
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=base))
    try:
        for n, text in files.items():
            (tmp / n).write_text(text)
        (tmp / "meta.json").write_text(_json.dumps({"verdict": verdict, "one_line": one_line}))
        dest = base / key
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
