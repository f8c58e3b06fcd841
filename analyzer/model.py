"""The data model shared by every part of the audit. Analysis builds these; renderers read them.

Part-specific records live beside their analysis (``analyzer.equivalence.model``,
``analyzer.sites.model``); what every report needs -- a finding, a verdict -- lives here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from analyzer import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS

Verdict = Literal["safe", "unsafe", "error"]

EXIT_FOR_VERDICT = {"safe": EXIT_CLEAN, "unsafe": EXIT_FINDINGS, "error": EXIT_ERROR}


def combine(*verdicts: Verdict) -> Verdict:
    """error beats unsafe beats safe: the audit is only as sure as its weakest part."""
    if "error" in verdicts:
        return "error"
    if "unsafe" in verdicts:
        return "unsafe"
    return "safe"


@dataclass(frozen=True)
class Finding:
    """One reportable result, ruff-style: ``path:line:col CODE message``.

    ``via`` says how the window or callee got there, one step a string, binding first.
    ``level`` is "error" for findings that make the verdict unsafe, "note" for information,
    "failure" for could-not-analyse (the verdict becomes "error").
    """

    code: str                 # stable, e.g. "FA4S001"
    name: str                 # kebab-case, e.g. "uncovered-fa4-call"
    message: str
    path: str = ""            # relative to the audited root, '/' separated
    line: int = 0             # 1-based; 0 when not tied to a line
    col: int = 0              # 1-based; 0 when not tied to a column
    via: tuple[str, ...] = ()
    level: Literal["error", "note", "failure"] = "error"

    def location(self) -> str:
        if not self.path:
            return "-"
        return f"{self.path}:{self.line}:{self.col}" if self.line else self.path

    def to_json(self) -> dict:
        d = asdict(self)
        d["via"] = list(self.via)
        return d


@dataclass
class Summary:
    """What a command prints as its last line and turns into its exit status."""

    verdict: Verdict
    reasons: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_FOR_VERDICT[self.verdict]
