"""Records of the equivalence analysis: resolved states, bands, cells, rows, claims, the table.

Analysis (``emissions``, ``semantics``, ``table``, ``history``) builds these; ``render`` only
reads them. Every record has ``to_json()``; the table's JSON is documented in
``docs/equivalence.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from analyzer.model import EXIT_FOR_VERDICT, Verdict

BandVerdict = Literal["exact", "empty", "wider", "narrower", "shifted", "raises", "error"]
# Worst first is the last; "raises" (the resolver threw) and "error" (not evaluated) rank above.
SEVERITY = {"exact": 0, "wider": 1, "narrower": 2, "shifted": 3, "empty": 4, "raises": 5,
            "error": 6}

MASK_TYPES = ("no_mask", "padding", "causal", "padding_causal", "causal_bottom_right",
              "padding_causal_bottom_right", "arbitrary")


def fmt_side(v) -> str:
    return "None" if v is None else str(v)


def window_repr(w) -> str:
    """A user window as Python spells it: None, (-1, 0), [-1, 0]."""
    return repr(w)


@dataclass(frozen=True)
class ResolvedState:
    """What a resolver returns: the flags and window sides the kernel is configured from."""

    causal: bool
    local: bool
    left: int | None
    right: int | None

    @property
    def mode(self) -> str:
        if self.local and self.causal:
            return "LOCAL+CAUSAL"
        if self.local:
            return "LOCAL"
        if self.causal:
            return "CAUSAL"
        return "FULL"

    def label(self) -> str:
        """CAUSAL, FULL, or LOCAL l/r (None for an unbounded side)."""
        if self.local:
            return f"{self.mode} {fmt_side(self.left)}/{fmt_side(self.right)}"
        return self.mode

    def to_json(self) -> dict:
        return {"causal": self.causal, "local": self.local, "left": self.left,
                "right": self.right, "mode": self.mode}

    @classmethod
    def from_value(cls, value) -> "ResolvedState":
        """From a resolver's return value; raises ValueError when it is not a 4-tuple of the
        expected types."""
        if not isinstance(value, (tuple, list)) or len(value) != 4:
            raise ValueError(f"resolver returned {value!r}, not (causal, local, left, right)")
        causal, local, left, right = value
        for side in (left, right):
            if side is not None and (isinstance(side, bool) or not isinstance(side, int)):
                raise ValueError(f"resolver returned a window side {side!r}, not an int or None")
        return cls(bool(causal), bool(local), left, right)


@dataclass(frozen=True)
class Band:
    """For each query row i, the kept key interval [lo, hi] (clipped; lo > hi is empty)."""

    seqlen_q: int
    seqlen_k: int
    rows: tuple[tuple[int, int], ...]

    @property
    def empty(self) -> bool:
        return all(lo > hi for lo, hi in self.rows)

    def to_json(self) -> dict:
        return {"seqlen_q": self.seqlen_q, "seqlen_k": self.seqlen_k,
                "rows": [list(r) for r in self.rows]}


@dataclass(frozen=True)
class ShapeResult:
    seqlen_q: int
    seqlen_k: int
    band: BandVerdict
    relerr: float | None = None          # float64 simulated attention vs intended
    out_all_zero: bool | None = None

    def to_json(self) -> dict:
        return {"seqlen_q": self.seqlen_q, "seqlen_k": self.seqlen_k, "band": self.band,
                "relerr": self.relerr, "out_all_zero": self.out_all_zero}


@dataclass
class Cell:
    """One FA4 source x one input form (as-is / normalized) for one row."""

    fa4: str                              # column label (the FA4 version or spec)
    input: Literal["as-is", "normalized"]
    given: tuple                          # (causal, left, right) handed to the resolver
    state: ResolvedState | None = None
    band: BandVerdict = "error"
    shapes: list[ShapeResult] = field(default_factory=list)
    error: str | None = None              # the resolver raised (band "raises") / not evaluated
    per_resolver: dict[str, str] = field(default_factory=dict)  # role -> label, when they differ

    @property
    def mode(self) -> str:
        if self.state is None:
            return "RAISES" if self.band == "raises" else "ERROR"
        return self.state.mode

    def label(self) -> str:
        if self.state is None:
            return f"{self.mode} ({self.error})" if self.error else self.mode
        return self.state.label()

    @property
    def relerr(self) -> float | None:
        vals = [s.relerr for s in self.shapes if s.relerr is not None]
        return max(vals) if vals else None

    def to_json(self) -> dict:
        return {"fa4": self.fa4, "input": self.input, "mode": self.mode,
                "left": self.state.left if self.state else None,
                "right": self.state.right if self.state else None,
                "local": self.state.local if self.state else None,
                "causal": self.state.causal if self.state else None,
                "band": self.band, "relerr": self.relerr,
                "given": {"causal": self.given[0], "left": self.given[1], "right": self.given[2]},
                "shapes": [s.to_json() for s in self.shapes], "error": self.error,
                "per_resolver": dict(self.per_resolver)}


@dataclass
class Emission:
    """What TE does with one (mask_type, user window): the pair it emits, or its rejection."""

    mask_type: str
    user_window: object                   # None, a tuple or a list, as the user gave it
    causal: bool                          # "causal" in mask_type, as TE passes it to FA
    window: tuple | list | None = None    # emitted window (None when rejected)
    rejected: str | None = None           # "AssertionError: ..." when TE refused it
    warnings: list[str] = field(default_factory=list)
    origin: str = "check_set_window_size"  # or "context_parallel: ..."
    reaches_fa: bool = True               # False for 'arbitrary' (never selects FlashAttention)

    @property
    def emitted(self) -> bool:
        return self.rejected is None

    @property
    def from_te(self) -> bool:
        """False for the reference-only direct-call pairs (not counted in verdict or claims)."""
        return not self.origin.startswith("direct")

    def to_json(self) -> dict:
        return {"mask_type": self.mask_type, "user_window": window_repr(self.user_window),
                "causal": self.causal,
                "window": list(self.window) if self.window is not None else None,
                "rejected": self.rejected, "warnings": list(self.warnings),
                "origin": self.origin, "reaches_fa": self.reaches_fa}


@dataclass
class Row:
    emission: Emission
    cells: list[Cell] = field(default_factory=list)

    @property
    def window(self) -> tuple:
        w = self.emission.window
        return (w[0], w[1])

    @property
    def differs(self) -> bool:
        """A cell is not exact, or normalising changes a resolver's state."""
        if any(c.band != "exact" for c in self.cells):
            return True
        by_fa4: dict[str, dict[str, ResolvedState | None]] = {}
        for c in self.cells:
            by_fa4.setdefault(c.fa4, {})[c.input] = c.state
        return any(len(set(v.values())) > 1 for v in by_fa4.values())

    def to_json(self) -> dict:
        e = self.emission
        return {"mask_type": e.mask_type, "user_window": window_repr(e.user_window),
                "causal": e.causal, "window": list(self.window), "origin": e.origin,
                "warnings": list(e.warnings), "differs": self.differs,
                "cells": [c.to_json() for c in self.cells]}


@dataclass
class Claim:
    name: str               # "a" | "b"
    text: str
    holds: bool
    checked: int            # how many (row, column) instances were checked
    counterexamples: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"name": self.name, "text": self.text, "holds": self.holds,
                "checked": self.checked, "counterexamples": list(self.counterexamples)}


@dataclass
class Fa4Column:
    label: str
    spec: str
    version: str | None
    origin: str
    resolvers: list = field(default_factory=list)      # Extracted records
    check: list[str] = field(default_factory=list)     # transcription-vs-real differences

    @property
    def variant(self) -> str:
        names = sorted({r.variant for r in self.resolvers})
        return "+".join(names) if names else "?"

    @property
    def fingerprint(self) -> str:
        return "+".join(r.fingerprint for r in self.resolvers)

    def to_json(self) -> dict:
        return {"label": self.label, "spec": self.spec, "version": self.version,
                "origin": self.origin, "variant": self.variant,
                "fingerprint": self.fingerprint,
                "resolvers": [r.to_json() for r in self.resolvers],
                "transcription_check": {"differences": list(self.check),
                                        "ok": not self.check}}


@dataclass
class EquivalenceTable:
    fa4: list[Fa4Column]
    te: dict                               # spec, version, origin, fingerprint, variant, ...
    rows: list[Row]
    claims: list[Claim]
    emissions: list[Emission]              # everything TE was asked, rejections included
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def te_rows(self) -> list[Row]:
        return [r for r in self.rows if r.emission.from_te]

    @property
    def compared(self) -> int:
        return sum(1 for r in self.te_rows if all(c.band != "error" for c in r.cells))

    @property
    def differing(self) -> int:
        return sum(1 for r in self.te_rows if r.differs)

    @property
    def findings(self) -> list[str]:
        out = []
        for r in self.te_rows:
            for c in r.cells:
                if c.input == "as-is" and c.band not in ("exact", "error"):
                    out.append(f"{c.fa4}: {r.emission.mask_type} {window_repr(r.emission.user_window)}"
                               f" -> causal={r.emission.causal} window={r.window}: "
                               f"{c.label()} ({c.band})")
        for cl in self.claims:
            if not cl.holds:
                out.append(f"claim ({cl.name}) fails: {len(cl.counterexamples)} counterexample(s)")
        return out

    @property
    def verdict(self) -> Verdict:
        """error: something was not extracted/evaluated (or a transcription disagrees);
        unsafe: an emitted pair gets a non-exact band as-is, or a claim fails; else safe."""
        if self.errors or any(c.band == "error" for r in self.rows for c in r.cells):
            return "error"
        if self.findings:
            return "unsafe"
        return "safe"

    @property
    def exit_code(self) -> int:
        return EXIT_FOR_VERDICT[self.verdict]

    def caption(self) -> str:
        n = len(self.te_rows)
        extra = len(self.rows) - n
        tail = (f"; plus {extra} direct-call pair(s) TE never emits, shown for reference"
                if extra else "")
        return (f"compared {self.compared}/{n} emitted pairs (exhaustive over the window grid"
                f" and every mask type that reaches FlashAttention), {self.differing} differ"
                + tail)

    def to_json(self) -> dict:
        return {
            "fa4": [c.to_json() for c in self.fa4],
            "te": dict(self.te),
            "rows": [r.to_json() for r in self.rows],
            "claims": [c.to_json() for c in self.claims],
            "emissions": [e.to_json() for e in self.emissions],
            "summary": {"verdict": self.verdict, "compared": self.compared,
                        "total": len(self.te_rows), "differing": self.differing,
                        "caption": self.caption(), "findings": self.findings,
                        "errors": list(self.errors), "notes": list(self.notes)},
        }
