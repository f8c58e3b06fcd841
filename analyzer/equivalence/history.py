"""Every flash-attn-4 release (or the given ones): resolver variant, fingerprint, and whether
the pairs TE emits break there (a non-exact band as-is).

Releases come from the cache (fetched on first use, ~1 s each); the extraction of each
release is cached by the hash of its ``flash_attn/cute`` files, and each distinct resolver
(by fingerprint) is evaluated once, so a second run does no network fetches and little work.
Offline (``FA4_AUDIT_OFFLINE=1``) it works from the cached release list and releases.
"""

from __future__ import annotations

from typing import Sequence

from analyzer.equivalence.check import check_extracted
from analyzer.equivalence.extract import Extracted, extract_fa4, extract_te
from analyzer.equivalence.model import Row, window_repr
from analyzer.equivalence.semantics import band_verdict
from analyzer.equivalence.table import Evaluated, base_rows, evaluate_resolver, row_inputs
from analyzer.errors import AuditError
from analyzer.progress import NULL, Progress
from analyzer.sources import Source, fetch_release, index_versions


def _normalise_version(v: str) -> str:
    return "4.0.0" + v if v.startswith("b") and v[1:].isdigit() else v


def first_broken(rows: list[Row], ev: Evaluated) -> tuple[bool, str | None, int]:
    """Whether any row's as-is input gets a non-exact band; the first such row; how many."""
    first, count = None, 0
    for r in rows:
        given = (r.emission.causal, *r.window)
        if given in ev.states:
            st = ev.states[given]
            band, _ = band_verdict(st, r.emission.causal, r.window)
            label = st.label()
        else:
            band, label = "raises", f"raises {ev.errors.get(given)}"
        if band != "exact":
            count += 1
            if first is None:
                src = (f"{r.emission.mask_type} {window_repr(r.emission.user_window)}"
                       if r.emission.origin == "check_set_window_size" else r.emission.origin)
                first = (f"{src} -> causal={r.emission.causal} ({r.window[0]}, {r.window[1]}): "
                         f"{label} ({band})")
    return count > 0, first, count


def history(versions: Sequence[str] | None, te_source: Source | None,
            progress: Progress | None = None) -> tuple[list[dict], dict]:
    """Rows (one dict per release, oldest first) and the TE description used."""
    progress = progress or NULL
    te_ex: Extracted | None = None
    te_root = None
    if te_source is not None and te_source.origin != "transcribed":
        te_ex = extract_te(te_source.root)
        te_root = te_source.root
    te_info = {"spec": te_source.spec if te_source else "transcribed",
               "version": te_source.version if te_source else None,
               "variant": te_ex.variant if te_ex else "transcription",
               "fingerprint": te_ex.fingerprint if te_ex else None,
               "check": check_extracted(te_ex) if te_ex else []}
    rows, _ = base_rows(te_root, te_ex)
    inputs = row_inputs(rows)

    if versions:
        wanted = [_normalise_version(v) for v in versions]
    else:
        progress.note("listing flash-attn-4 releases")
        wanted = index_versions("fa4")
    memo: dict[str, tuple[Evaluated, list[str]]] = {}
    out = []
    for v in progress.iter(wanted, "flash-attn-4 releases"):
        rec: dict = {"version": v, "variant": None, "fingerprint": None, "breaks": None,
                     "first_broken": None, "broken_pairs": 0, "pairs": len(rows),
                     "resolvers": [], "error": None}
        try:
            root = fetch_release("fa4", v)
            found = extract_fa4(root)
            rec["variant"] = "+".join(dict.fromkeys(e.variant for e in found))
            rec["fingerprint"] = "+".join(e.fingerprint for e in found)
            rec["resolvers"] = [e.to_json() for e in found]
            breaks_any, firsts, n = False, [], 0
            problems = []
            for e in found:
                if e.fingerprint not in memo:
                    memo[e.fingerprint] = (evaluate_resolver(e, inputs), check_extracted(e))
                ev, diffs = memo[e.fingerprint]
                problems += diffs
                b, f, c = first_broken(rows, ev)
                breaks_any |= b
                n = max(n, c)
                if f:
                    firsts.append(f if len(found) == 1 else f"{e.role}: {f}")
            if problems:
                rec["error"] = problems[0]
            else:
                rec["breaks"] = breaks_any
                rec["first_broken"] = firsts[0] if firsts else None
                rec["broken_pairs"] = n
        except AuditError as exc:
            rec["error"] = str(exc)
        out.append(rec)
    return out, te_info


def history_verdict(rows: list[dict], te_info: dict) -> str:
    if te_info.get("check") or any(r["breaks"] is None for r in rows):
        return "error"
    return "unsafe" if any(r["breaks"] for r in rows) else "safe"
