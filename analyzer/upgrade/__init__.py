"""``fa4-audit upgrade``: the other ways an FA4 upgrade goes wrong.

Three passes over one tree (a release, a wheel or a checkout), each documented in its module:

* :mod:`analyzer.upgrade.gates` -- version gates read from the package source and evaluated
  on every released version of what they read (overlap, gap, breaking releases accepted,
  unknown);
* :mod:`analyzer.upgrade.ci` -- CI blind spots in ``qa/``, ``tests/``, ``.github/`` and other CI
  folders (FA4 switched off, old pins, CP graded against the same backend). A wheel has none of
  these folders: each absent one is reported as "not checked (absent)", never as clean;
* :mod:`analyzer.upgrade.drift` -- API drift of every FA4-reaching call against each audited
  release's entry-point signatures.

:func:`run_upgrade` returns an :class:`UpgradeReport`; it raises AuditError when something it
needs cannot be read (the CLI turns that into exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from analyzer.errors import AuditError
from analyzer.progress import NULL, Progress
from analyzer.upgrade.model import KINDS, Hazard, UpgradeReport

__all__ = ["run_upgrade", "for_audit", "UpgradeReport", "Hazard", "KINDS", "CHECKED_DIRS"]

PACKAGE_DIR = "transformer_engine"
CHECKED_DIRS = ("qa", "tests", ".github")


def _default_calls(root: Path):
    """The FA4-reaching calls of the call-site pass (only path, line, col, entries are used)."""
    from analyzer.sites import audit_tree
    return audit_tree(root, package_dir=PACKAGE_DIR).fa4_calls


def run_upgrade(te, fa4: Sequence = (), *, written_for: str | None = None,
                progress: Progress = NULL, calls=None) -> UpgradeReport:
    """Audit ``te`` (a resolved :class:`analyzer.sources.Source`) for upgrade hazards.

    ``fa4`` are the resolved FA4 releases the API drift check uses (default: the release the
    code was written for and the newest). ``calls`` overrides the call-site pass (FACall-like
    records); by default ``analyzer.sites.audit_tree`` supplies them."""
    from analyzer import sources
    from analyzer.upgrade import ci, drift, gates
    from analyzer.upgrade.releases import dist_versions, fa4_history

    if te is None or te.root is None:
        raise AuditError("upgrade needs TE sources: give --te a version, a wheel or a folder")
    root = Path(te.root)
    rep = UpgradeReport(te=te.to_json(), fa4=[])

    # --- version gates
    progress.note("reading version gates")
    found, flow, notes = gates.find_gates(root, PACKAGE_DIR, dist_versions)
    rep.notes += notes
    rep.gates = [g.record for g in found]
    fa4_releases = dist_versions("flash-attn-4")
    if not fa4_releases:
        raise AuditError("the index lists no flash-attn-4 release; cannot judge FA4 gates or pins")
    newest = fa4_releases[-1]

    # --- CI files (a checkout's; a wheel has none)
    present = [d for d in CHECKED_DIRS if (root / d).is_dir()]
    for d in CHECKED_DIRS:
        rep.checked[d + "/"] = "checked" if d in present else "not checked (absent)"
    ci_files = ci.ci_files(root)
    pin_list = ci.pins(root, ci_files, fa4_releases) if ci_files else []

    # --- which FA4 releases break TE's pairs, and the variant of each release we need
    accepted = set()
    for yes, maybe in gates.accepted_fa4(found, fa4_releases).values():
        accepted |= set(yes) | set(maybe)
    if not gates.fa4_selectors(found) and any(d == "flash-attn-4" for _, _, d in flow.reads):
        accepted |= set(fa4_releases)
    wanted = sorted(accepted | {v for _, _, can, _ in pin_list for v in can} | {newest},
                    key=sources.version_key)
    progress.note(f"judging {len(wanted)} flash-attn-4 release(s) against TE's window pairs")
    hist, hnotes = fa4_history(wanted, te)
    rep.notes += hnotes
    rep.breaking_fa4 = [v for v in wanted if hist[v]["breaks"]]
    rep.current_variant = hist[newest]["variant"]
    rep.hazards += gates.gate_hazards(found, flow, set(rep.breaking_fa4))

    # --- CI blind spots
    if ci_files:
        progress.note("reading CI scripts and tests")
        switches = ci.fa4_switches(root, PACKAGE_DIR)
        if not switches:
            rep.notes.append("the package reads no FA4 switch (an env var named *FLASH_ATTN, "
                             "*FLASH_ATTN_V4 or *FA4*); fa4-disabled not checked")
        rep.hazards += ci.disabled_hazards(root, ci_files, switches, rep.notes)
        variant_of = {v: hist[v]["variant"] for v in hist}
        rep.hazards += ci.old_pin_hazards(pin_list, variant_of, rep.current_variant)
        rep.hazards += ci.same_backend_hazards(root, ci_files, rep.notes)
    for d in CHECKED_DIRS:
        if d not in present:
            rep.notes.append(f"{d}/: not checked (absent) -- a release or wheel carries no {d}/; "
                             f"audit a checkout to check CI blind spots")

    # --- API drift
    base_version = written_for or drift.written_for_pin(root, PACKAGE_DIR)
    audited = list(fa4)
    if not audited:
        for spec in dict.fromkeys([base_version, newest]):
            if spec:
                audited.append(sources.resolve("fa4", spec))
    rep.fa4 = [s.to_json() for s in audited]
    base = None
    if base_version:
        base_src = next((s for s in audited if s.version == base_version), None)
        if base_src is None:
            try:
                base_src = sources.resolve("fa4", base_version)
            except AuditError as exc:
                if written_for:
                    raise
                rep.notes.append(f"the release the code names ({base_version}) could not be read "
                                 f"({exc}); positional drift judged against the oldest audited release")
        if base_src is not None:
            base = (base_src.version or base_src.spec, Path(base_src.root))
    if base is None and audited:
        oldest = min(audited, key=lambda s: sources.version_key(s.version or "0"))
        base = (oldest.version or oldest.spec, Path(oldest.root))
    rep.written_for = base[0] if base else None
    if calls is None:
        progress.note("finding FA4-reaching calls")
        calls = _default_calls(root)
    hz, recs, dnotes = drift.drift(root, calls, [(s.version or s.spec, Path(s.root)) for s in audited], base)
    rep.hazards += hz
    rep.drift = recs
    rep.notes += dnotes
    rep.notes = sorted(dict.fromkeys(rep.notes))
    return rep


def for_audit(te, fa4: Sequence, sites, errors: list[str], progress: Progress = NULL):
    """The upgrade part of ``fa4-audit audit`` (``run_audit(..., upgrade=True)``): the same
    analysis, on the audit's FA4 releases and its call-site pass. A failure is appended to
    ``errors`` (the audit's verdict becomes "error": fail closed) and None is returned."""
    try:
        calls = sites.fa4_calls if sites is not None else None
        return run_upgrade(te, fa4, progress=progress, calls=calls)
    except AuditError as exc:
        errors.append(f"upgrade: {exc}")
        return None
