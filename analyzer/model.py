"""The data model shared by every part of the audit. Analysis builds these; renderers read them.

Part-specific records live beside their analysis (``analyzer.equivalence.model``,
``analyzer.sites.model``); what every report needs -- a finding, a verdict -- lives here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal

from analyzer import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, __version__

if TYPE_CHECKING:  # real types for the annotations; importing them here would be a cycle
    from analyzer.equivalence.model import EquivalenceTable
    from analyzer.sites.model import SitesReport
    from analyzer.sources import Source
    from analyzer.upgrade.model import UpgradeReport

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
    ``level`` is "error" for findings that make the verdict unsafe (something is broken),
    "unknown" for what could not be proved (the verdict becomes "unknown", never "safe"),
    "note" for information, "failure" for could-not-analyse (the verdict becomes "error").
    """

    code: str                 # stable, e.g. "FA4S001"
    name: str                 # kebab-case, e.g. "uncovered-fa4-call"
    message: str
    path: str = ""            # relative to the audited root, '/' separated
    line: int = 0             # 1-based; 0 when not tied to a line
    col: int = 0              # 1-based; 0 when not tied to a column
    via: tuple[str, ...] = ()
    level: Literal["error", "unknown", "note", "failure"] = "error"

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


AUDIT_SCHEMA_VERSION = 1


@dataclass
class CodemodPreview:
    """What ``python -m fa4_patch TE_DIR --diff`` would change (nothing is written)."""

    changed_files: list[str]
    diff: str
    error: str | None = None

    def to_json(self) -> dict:
        return {"changed_files": self.changed_files, "diff": self.diff, "error": self.error}


@dataclass
class AuditReport:
    """The whole audit of one tree against some FA4 releases, and its ONE decision.

    ``verdict`` (with ``reasons``/``errors``) is decided once, by ``analyzer.audit.decide``;
    the CLI, ``make-audit`` and the pytest gate read it and never decide again.
    """

    te: Source
    fa4: list[Source]
    table: EquivalenceTable | None       # None when the table could not be built (see errors)
    sites: SitesReport | None            # None when the call-site pass could not run
    codemod: CodemodPreview | None       # None when the dry run was not asked for
    verdict: Verdict
    reasons: list[str]
    errors: list[str]
    strict: bool
    command: str                         # the command that reproduces this audit
    breaking_fa4: list[str] = field(default_factory=list)  # FA4 labels that break TE's pairs
    gpu: dict | None = None              # a saved `fa4-audit verify-gpu` result
    upgrade: UpgradeReport | None = None  # `--upgrade`: version gates, CI blind spots, API drift

    @property
    def exit_code(self) -> int:
        return EXIT_FOR_VERDICT[self.verdict]

    def to_json(self) -> dict:
        return {
            "schema": "fa4-audit/audit",
            "schema_version": AUDIT_SCHEMA_VERSION,
            "tool_version": __version__,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "errors": self.errors,
            "strict": self.strict,
            "command": self.command,
            "te": self.te.to_json(),
            "fa4": [s.to_json() for s in self.fa4],
            "breaking_fa4": self.breaking_fa4,
            "table": self.table.to_json() if self.table is not None else None,
            "sites": self.sites.to_json() if self.sites is not None else None,
            "codemod": self.codemod.to_json() if self.codemod is not None else None,
            "gpu": self.gpu,
            # "upgrade" is added by audit_report only when --upgrade ran (output unchanged otherwise)
        }
