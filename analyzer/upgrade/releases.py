"""Release listings of the FlashAttention distributions, and which FA4 releases break TE's pairs.

Listings come from ``pip index versions --pre DIST`` and are cached under
``analyzer.sources.cache_dir()/index`` exactly as ``analyzer.sources.index_versions`` caches
flash-attn-4 (that helper is reused for it). An index that answers "no matching distribution"
(flash-attn-3 is built from source, never published) is an empty listing, cached like any
other; an index that cannot be reached falls back to the cached listing, else AuditError.
"""

from __future__ import annotations

import json
import re
import time

from analyzer import sources
from analyzer.errors import AuditError

# PEP 503 normalised distribution name -> the backend its releases are meant to select.
FA_DISTS = {"flash-attn": "FA2", "flash-attn-3": "FA3", "flash-attn-4": "FA4"}


def normalise_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dist_versions(dist: str) -> list[str]:
    """Every release of ``dist`` on the index, pre-releases included, oldest first."""
    dist = normalise_dist(dist)
    for key, pkg in sources.PACKAGES.items():
        if pkg.dist == dist:
            return sources.index_versions(key)
    memo = sources.cache_dir() / "index" / f"{dist}.json"
    if memo.is_file() and not sources.offline():
        try:
            if time.time() - memo.stat().st_mtime < sources.index_ttl():
                return json.loads(memo.read_text())
        except (OSError, ValueError):
            pass
    why = "offline (FA4_AUDIT_OFFLINE)"
    if not sources.offline():
        proc = sources._pip("index", "versions", "--pre", dist, timeout=120)
        text = proc.stdout + proc.stderr
        m = re.search(r"Available versions:\s*(.+)", proc.stdout)
        versions = None
        if proc.returncode == 0 and m:
            versions = sorted((v.strip() for v in m.group(1).split(",") if v.strip()),
                              key=sources.version_key)
        elif "No matching distribution found" in text:
            versions = []
        if versions is not None:
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(json.dumps(versions))
            return versions
        why = sources._last_error_line(text)
    if memo.is_file():
        return json.loads(memo.read_text())
    raise AuditError(f"cannot list {dist} releases: {why}; the cache has no listing either")


def fa4_history(versions: list[str], te_source) -> tuple[dict[str, dict], list[str]]:
    """``analyzer.equivalence.history`` over ``versions``: release -> its row, plus notes.

    TE's emitted pairs are read from the audited tree; when that extraction fails (an old
    checkout), the hand-written transcription of TE's check_set_window_size is used and a note
    says so. A release whose breakage could not be decided raises AuditError (fail closed)."""
    from analyzer.equivalence.history import history

    notes: list[str] = []
    if not versions:
        return {}, notes
    try:
        rows, _ = history(versions, te_source)
    except AuditError as exc:
        if te_source is None or te_source.origin == "transcribed":
            raise
        notes.append(f"TE's window pairs taken from the transcription: extracting them from the "
                     f"tree failed ({exc})")
        rows, _ = history(versions, None)
    out = {}
    for r in rows:
        if r["breaks"] is None:
            raise AuditError(f"cannot tell whether flash-attn-4 {r['version']} breaks TE's window "
                             f"pairs: {r['error']}")
        out[r["version"]] = r
    return out, notes
