"""Records of ``fa4-audit upgrade``: one :class:`Hazard` per finding, one :class:`UpgradeReport`.

Analysis builds these; ``analyzer.upgrade.render`` prints them. A hazard is a record, ruff-style:
a stable code and kind, ``path:line``, a message, the releases it concerns, and ``certainty``:

  * ``proven``      -- holds on every path the tool can see;
  * ``conditional`` -- holds when a condition the tool cannot decide (a runtime flag, a branch,
                       a configuration-dependent constant) goes one way; named in the message;
  * ``unknown``     -- the tool could not decide it (never safe: it is a finding).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# kind -> (code, one-line description). Codes are stable; kinds are the JSON contract.
KINDS: dict[str, tuple[str, str]] = {
    "gate-overlap": ("FA4U001", "one release of a FlashAttention distribution selects two backends"),
    "gate-gap": ("FA4U002", "one release selects no backend, or not its own"),
    "breaking-accepted": ("FA4U003", "a version gate accepts FA4 releases that break emitted window pairs"),
    "gate-unknown": ("FA4U004", "a version gate the tool cannot evaluate"),
    "fa4-disabled": ("FA4U101", "FA4 switched off where a test suite runs"),
    "old-pin": ("FA4U102", "a flash-attn-4 pin or version list with no release of the current resolver variant"),
    "same-backend-reference": ("FA4U103", "a CP result graded against a run of the same backend"),
    "api-mismatch": ("FA4U201", "an FA4-reaching call that does not fit an audited release's signature"),
}

Certainty = Literal["proven", "conditional", "unknown"]


@dataclass(frozen=True)
class Hazard:
    kind: str
    path: str                 # relative to the audited root, '/' separated
    line: int
    message: str
    releases: tuple[str, ...] = ()
    certainty: Certainty = "proven"
    related: tuple[str, ...] = ()   # other "path:line" locations that take part
    part: str = ""                  # gates | ci | drift

    @property
    def code(self) -> str:
        return KINDS[self.kind][0]

    def sort_key(self):
        return (self.path, self.line, self.kind, self.message)

    def to_json(self) -> dict:
        return {"kind": self.kind, "code": self.code, "path": self.path, "line": self.line,
                "message": self.message, "releases": list(self.releases),
                "certainty": self.certainty, "related": list(self.related), "part": self.part}


@dataclass
class GateRecord:
    """One version gate found in the tree and what it selects on each release."""

    path: str
    line: int
    text: str                 # source text of the gate expression
    subject: str              # the version-valued name it reads (terminal name)
    dists: tuple[str, ...]    # distributions whose releases were evaluated
    effect: str               # flag:<name> | import | raise | assert | branch | other
    backend: str | None       # FA2 / FA3 / FA4 when the flag names one
    accepts: dict[str, str] = field(default_factory=dict)   # release -> true/false/depends/unknown
    assumptions: tuple[str, ...] = ()

    def to_json(self) -> dict:
        true = [r for r, v in self.accepts.items() if v == "true"]
        return {"path": self.path, "line": self.line, "text": self.text, "subject": self.subject,
                "dists": list(self.dists), "effect": self.effect, "backend": self.backend,
                "releases_evaluated": len(self.accepts), "accepts": compact(true),
                "depends": compact([r for r, v in self.accepts.items() if v == "depends"]),
                "unknown": compact([r for r, v in self.accepts.items() if v == "unknown"]),
                "assumptions": list(self.assumptions)}


@dataclass
class DriftRecord:
    """One FA4-reaching call checked against one release."""

    path: str
    line: int
    entry: str
    release: str
    status: str               # ok | mismatch | unknown | partial
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "entry": self.entry, "release": self.release,
                "status": self.status, "notes": list(self.notes)}


@dataclass
class UpgradeReport:
    te: dict                                  # Source.to_json() of the audited tree
    fa4: list[dict]                           # audited FA4 releases (API drift)
    hazards: list[Hazard] = field(default_factory=list)
    gates: list[GateRecord] = field(default_factory=list)
    drift: list[DriftRecord] = field(default_factory=list)
    checked: dict[str, str] = field(default_factory=dict)  # part -> "checked: ..." / "not checked (absent)"
    notes: list[str] = field(default_factory=list)
    breaking_fa4: list[str] = field(default_factory=list)
    current_variant: str | None = None
    written_for: str | None = None

    def sorted_hazards(self) -> list[Hazard]:
        return sorted(set(self.hazards), key=Hazard.sort_key)

    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in KINDS}
        for h in self.sorted_hazards():
            out[h.kind] += 1
        return out

    @property
    def exit_code(self) -> int:
        return 1 if self.hazards else 0

    def to_json(self) -> dict:
        return {"schema": "fa4-audit/upgrade", "schema_version": 1, "te": self.te, "fa4": self.fa4,
                "findings": [h.to_json() for h in self.sorted_hazards()],
                "counts": self.counts(), "checked": dict(sorted(self.checked.items())),
                "breaking_fa4": list(self.breaking_fa4), "current_variant": self.current_variant,
                "written_for": self.written_for,
                "gates": [g.to_json() for g in sorted(self.gates, key=lambda g: (g.path, g.line, g.effect))],
                "drift": [d.to_json() for d in sorted(self.drift, key=lambda d: (d.path, d.line, d.entry, d.release))],
                "notes": list(self.notes)}


def compact(versions) -> list[str]:
    """Versions in release order (PEP 440), as given (no ranges: exact values in JSON)."""
    from packaging.version import InvalidVersion, Version

    def key(v):
        try:
            return (0, Version(v))
        except InvalidVersion:
            return (1, v)
    return sorted(dict.fromkeys(versions), key=key)


def span(versions) -> str:
    """``4.0.0b30 .. 4.0.0b36 (7 releases)`` or a short list: for messages."""
    vs = compact(versions)
    if len(vs) <= 3:
        return ", ".join(vs)
    return f"{vs[0]} .. {vs[-1]} ({len(vs)} releases)"
