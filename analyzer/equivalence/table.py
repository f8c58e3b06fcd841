"""The equivalence table: every pair TE emits, through every audited FA4 resolver, as-is and
normalised, with the band each state selects against the band TE intends, and two claims.

(a) normalised input on each resolver gives the intended band for every pair TE emits;
(b) normalising is inert where the resolver was already right: wherever the as-is band is
    exact, the normalised input resolves to the same state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from analyzer.equivalence import emissions as em
from analyzer.equivalence.check import check_extracted
from analyzer.equivalence.extract import Extracted, extract_fa4, extract_te
from analyzer.equivalence.model import (Cell, Claim, EquivalenceTable, Fa4Column,
                                        ResolvedState, Row, window_repr)
from analyzer.equivalence.semantics import band_verdict, normalize_window, worst
from analyzer.errors import AuditError
from analyzer.sandbox import raise_if_environment_error
from analyzer.progress import NULL, Progress
from analyzer.sources import Source

CLAIM_A = ("normalised input gives the intended band on every audited resolver, "
           "for every pair TE emits")
CLAIM_B = ("normalising is inert where the resolver was already right "
           "(same resolved state wherever the as-is band is exact)")


@dataclass
class Evaluated:
    """One resolver's results on a set of inputs: input -> state, or the error it raised."""

    states: dict[tuple, ResolvedState]
    errors: dict[tuple, str]


def evaluate_resolver(e: Extracted, inputs: Sequence[tuple]) -> Evaluated:
    """Run an extracted resolver (sandboxed, one subprocess) on (causal, left, right) inputs."""
    inputs = list(dict.fromkeys(inputs))
    results = e.evaluate([tuple(i) for i in inputs])
    states, errors = {}, {}
    for i, r in zip(inputs, results):
        raise_if_environment_error(f"{e.path}:{e.line}: {e.name}", i, r)
        if not r.ok:
            errors[i] = r.error or "raised"
            continue
        try:
            states[i] = ResolvedState.from_value(r.value)
        except ValueError as exc:
            errors[i] = str(exc)
    return Evaluated(states, errors)


def evaluate_callable(fn: Callable, inputs: Sequence[tuple]) -> Evaluated:
    """The same for a trusted in-process resolver (a transcription or a test's own rule)."""
    states, errors = {}, {}
    for i in dict.fromkeys(inputs):
        try:
            states[i] = ResolvedState.from_value(fn(*i))
        except Exception as exc:
            errors[i] = f"{type(exc).__name__}: {exc}"
    return Evaluated(states, errors)


def row_inputs(rows: list[Row]) -> list[tuple]:
    out = []
    for r in rows:
        l, rr = r.window
        out.append((r.emission.causal, l, rr))
        nl, nr = normalize_window(l, rr)
        out.append((r.emission.causal, nl, nr))
    return out


def fill_cells(rows: list[Row], label: str, evaluated: dict[str, Evaluated], *,
               simulate: bool = True) -> None:
    """Append this column's as-is and normalized cells to every row. ``evaluated`` maps a
    resolver role (shared / fwd / bwd) to its results; differing roles are shown per role."""
    for r in rows:
        causal = r.emission.causal
        window = r.window
        for kind, given in (("as-is", (causal, *window)),
                            ("normalized", (causal, *normalize_window(*window)))):
            cell = Cell(fa4=label, input=kind, given=given)
            per_role = {}
            for role, ev in evaluated.items():
                if given in ev.states:
                    per_role[role] = ("state", ev.states[given])
                else:
                    per_role[role] = ("raises", ev.errors.get(given, "not evaluated"))
            outcomes = set(per_role.values())
            if len(outcomes) > 1:
                cell.per_resolver = {role: (v.label() if k == "state" else f"raises {v}")
                                     for role, (k, v) in per_role.items()}
            bands = []
            for role, (k, v) in per_role.items():
                if k == "state":
                    b, shapes = band_verdict(v, causal, window, simulate=simulate)
                    bands.append(b)
                    if cell.state is None:
                        cell.state, cell.shapes = v, shapes
                else:
                    bands.append("raises" if v != "not evaluated" else "error")
                    cell.error = cell.error or v
            cell.band = worst(bands)
            r.cells.append(cell)


def check_claims(rows: list[Row]) -> list[Claim]:
    a_bad, b_bad = [], []
    a_n = b_n = 0
    for r in rows:
        if not r.emission.from_te:
            continue  # reference-only rows: not part of the claims
        by_fa4: dict[str, dict[str, Cell]] = {}
        for c in r.cells:
            by_fa4.setdefault(c.fa4, {})[c.input] = c
        for fa4, cells in by_fa4.items():
            asis, norm = cells.get("as-is"), cells.get("normalized")
            ex = {"fa4": fa4, "mask_type": r.emission.mask_type,
                  "user_window": window_repr(r.emission.user_window),
                  "causal": r.emission.causal, "window": list(r.window)}
            if norm is not None:
                a_n += 1
                if norm.band != "exact":
                    a_bad.append({**ex, "input": "normalized",
                                  "given": list(norm.given), "mode": norm.label(),
                                  "band": norm.band})
            if asis is not None and norm is not None and asis.band == "exact":
                b_n += 1
                if norm.state != asis.state or norm.band != "exact":
                    b_bad.append({**ex, "as_is": asis.label(), "normalized": norm.label(),
                                  "normalized_band": norm.band})
    return [Claim("a", CLAIM_A, not a_bad, a_n, a_bad),
            Claim("b", CLAIM_B, not b_bad, b_n, b_bad)]


def base_rows(te_root, te_extracted: Extracted | None) -> tuple[list[Row], list]:
    emitted = em.te_emissions(te_extracted)
    rows = [Row(e) for e in emitted if e.emitted and e.reaches_fa]
    if em.te_has_cp_fa4(te_root):
        cp = em.cp_emissions()
        emitted = emitted + cp
        rows += [Row(e) for e in cp]
    return rows, emitted


def reference_rows() -> list[Row]:
    return [Row(e) for e in em.direct_emissions()]


def build_table(fa4_sources: Sequence[Source], te_source: Source | None,
                progress: Progress | None = None, *, simulate: bool = True) -> EquivalenceTable:
    """Extract, evaluate and compare. Raises AuditError when a source cannot be read or its
    rule cannot be found / evaluated; transcription mismatches become table errors."""
    progress = progress or NULL
    if not fa4_sources:
        raise AuditError("no FA4 source given", hint="pass --fa4 SPEC at least once")
    errors: list[str] = []
    notes: list[str] = []

    # TE: the real function when a tree is given, else (or for 'transcribed') the transcription
    te_ex = None
    te_root = None
    if te_source is not None and te_source.origin != "transcribed":
        progress.note(f"extracting check_set_window_size from TE {te_source.label()}")
        te_ex = extract_te(te_source.root)
        te_root = te_source.root
        if te_ex.is_new:
            notes.append(f"TE check_set_window_size at {te_ex.path}:{te_ex.line} is a new variant "
                         f"(fingerprint {te_ex.fingerprint}); evaluated as found")
        errors += check_extracted(te_ex)
    te_info = {"spec": te_source.spec if te_source else "transcribed",
               "version": te_source.version if te_source else None,
               "origin": te_source.origin if te_source else "transcribed",
               "variant": te_ex.variant if te_ex else "te-check-set-window-size (transcription)",
               "fingerprint": te_ex.fingerprint if te_ex else None,
               "function": te_ex.to_json() if te_ex else None}
    rows, emitted = base_rows(te_root, te_ex)
    if not any(e.emitted and e.reaches_fa and e.origin == "check_set_window_size" for e in emitted):
        # fail closed: "compared 0/0, safe" would be a verdict on nothing
        errors.append("TE's check_set_window_size emitted no (causal, window) pair that reaches "
                      "FlashAttention: it rejected every input of the grid, so nothing was compared")
    rows += reference_rows()
    inputs = row_inputs(rows)

    columns: list[Fa4Column] = []
    labels: set[str] = set()
    for src in progress.iter(fa4_sources, "evaluating FA4 resolvers"):
        if src.origin == "transcribed":
            raise AuditError("--fa4 transcribed is ambiguous: FA4 has several resolver variants",
                             hint="give a release version such as 4.0.0b36")
        label = src.label()
        if label in labels:
            label = f"{label} ({src.spec})"
        labels.add(label)
        col = Fa4Column(label=label, spec=src.spec, version=src.version, origin=src.origin)
        col.resolvers = extract_fa4(src.root)
        evaluated = {}
        for ex in col.resolvers:
            if ex.is_new:
                notes.append(f"{label}: {ex.name} at {ex.path}:{ex.line} is a new variant "
                             f"(fingerprint {ex.fingerprint}); evaluated as found")
            col.check += check_extracted(ex)
            evaluated[ex.role] = evaluate_resolver(ex, inputs)
        errors += [f"{label}: {d}" for d in col.check]
        fill_cells(rows, label, evaluated, simulate=simulate)
        columns.append(col)

    claims = check_claims(rows)
    order = {id(r): i for i, r in enumerate(rows)}
    rows.sort(key=lambda r: (not r.emission.from_te, not r.differs, order[id(r)]))
    n_arbitrary = sum(1 for e in emitted if not e.reaches_fa and e.emitted)
    if n_arbitrary:
        notes.append(f"'arbitrary' never selects FlashAttention: its {n_arbitrary} emitted "
                     f"pairs are listed in the JSON emissions but not compared")
    return EquivalenceTable(fa4=columns, te=te_info, rows=rows, claims=claims,
                            emissions=emitted, errors=errors, notes=notes)
