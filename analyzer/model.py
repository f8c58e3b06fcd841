"""The data model shared by every part of the audit. Analysis builds these; renderers read them.

Part-specific records live beside their analysis (``analyzer.equivalence.model``,
``analyzer.sites.model``); what every report needs -- a finding, a verdict -- lives here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from analyzer import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS

# safe     -- every FA4-reaching call is proved right on every audited release;
# unsafe   -- some call is broken: an emitted pair, a path and a release give a wrong band;
# unknown  -- nothing is broken, but some call could not be proved (never safe: exit 1);
# no-fa4   -- the tree provably never reaches FA4 (nothing to prove: exit 0, but not "safe");
# error    -- the tool could not analyse something it needed (fail closed: exit 2).
Verdict = Literal["safe", "unsafe", "unknown", "no-fa4", "error"]

EXIT_FOR_VERDICT = {"safe": EXIT_CLEAN, "no-fa4": EXIT_CLEAN, "unsafe": EXIT_FINDINGS,
                    "unknown": EXIT_FINDINGS, "error": EXIT_ERROR}

_RANK = {"no-fa4": 0, "safe": 1, "unknown": 2, "unsafe": 3, "error": 4}


def combine(*verdicts: Verdict) -> Verdict:
    """error beats unsafe beats unknown beats safe beats no-fa4: the audit is only as sure as
    its weakest part (an empty argument list is "no-fa4": nothing was there to prove)."""
    return max(verdicts, key=_RANK.__getitem__, default="no-fa4")


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
