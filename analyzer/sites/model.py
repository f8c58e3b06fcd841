"""Records of the call-site pass. Analysis builds them; ``render`` only reads them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from analyzer.model import Finding, Verdict

SCHEMA_VERSION = 1


@dataclass
class Binding:
    """A statement that binds a name to a FlashAttention entry point."""

    id: str                   # "B<n>"
    path: str
    line: int
    col: int
    scope: str                # "<module>" or the enclosing function's qualified name
    name: str                 # the bound name
    kind: str                 # import | reexport | wrap | alias | decorated
    versions: tuple[str, ...]  # subset of ("fa2", "fa3", "fa4")
    entries: tuple[str, ...]  # "flash_attn.cute.interface.flash_attn_func", ...
    wrappers: tuple[str, ...] = ()   # wrapper chain, innermost first
    normalised: bool = False  # a trusted normaliser is in the chain of every FA4 entry
    live: bool = True         # still the value of the name after the module has run
    fallback_none: bool = False   # the name is also bound to None on some path
    via: tuple[str, ...] = ()

    def to_json(self) -> dict:
        d = asdict(self)
        for k in ("versions", "entries", "wrappers", "via"):
            d[k] = list(d[k])
        return d


@dataclass
class WindowSite:
    """A place where a window is written toward an FA call."""

    id: str                   # "W<n>"
    path: str
    line: int
    col: int
    key: str                  # window_size | window_size_left | window_size_right
    style: str                # keyword | dict-literal | subscript-store | update | dict-call | positional
    value: str                # the value expression's source text
    values: tuple[str, ...]   # what it can be: "-1", "0", "None", "unknown: ..."
    provably_safe: bool       # every value is None or a non-negative int
    versions: tuple[str, ...]  # FA versions it can reach
    calls: tuple[str, ...]    # ids of the FA calls it feeds
    via: tuple[str, ...] = ()

    def to_json(self) -> dict:
        d = asdict(self)
        for k in ("values", "versions", "calls", "via"):
            d[k] = list(d[k])
        return d


CallStatus = Literal["proved", "broken", "unknown"]


@dataclass(frozen=True)
class CallVerdict:
    """One FA4-reaching call judged against one audited FA4 release (or resolver variant).

    * proved  -- ``witness`` names the code that proves it (a behaviour-checked normaliser
      between the call and FA4, or the exact set of pairs the call can pass, all right);
    * broken  -- ``pairs`` lists the pairs the call can pass that this release turns into a
      wrong band ("causal=True (-1, 0) -> LOCAL -1/0 (empty), intended CAUSAL"), ``witness``
      the path the pair takes;
    * unknown -- ``witness`` says what stopped the proof (a value from outside the tree, an
      unknown callee that receives the kwargs, a non-constant dynamic import...).
    """

    release: str
    status: CallStatus
    witness: str
    pairs: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"release": self.release, "status": self.status, "witness": self.witness,
                "pairs": list(self.pairs)}


@dataclass
class FACall:
    """A call expression that can reach a FlashAttention entry point."""

    id: str                   # "C<n>"
    path: str
    line: int
    col: int
    scope: str
    callee: str               # source text of the callee expression
    entries: tuple[str, ...]
    versions: tuple[str, ...]
    bindings: tuple[str, ...]  # ids of the bindings it can reach
    windows: tuple[str, ...]  # ids of window sites that reach it
    opaque_windows: tuple[str, ...]  # inputs that may carry a window we cannot see
    reaches_fa4: bool
    coverage: str             # covered | uncovered | n/a (does not reach FA4)
    coverage_reason: str
    in_try_typeerror: bool = False
    via: tuple[str, ...] = ()
    # the worst status over ``verdicts`` ("n/a" when the call does not reach FA4)
    status: str = "n/a"
    verdicts: tuple[CallVerdict, ...] = ()

    def to_json(self) -> dict:
        d = asdict(self)
        for k in ("entries", "versions", "bindings", "windows", "opaque_windows", "via"):
            d[k] = list(d[k])
        d["verdicts"] = [v.to_json() for v in self.verdicts]
        return d


@dataclass
class WrapperTrust:
    """A recognised normalising wrapper and whether the sandbox check trusted it."""

    name: str
    kind: str                 # fa4_patch | tree
    path: str
    line: int
    normaliser: str           # the function run in the sandbox ("" if none found)
    trusted: bool
    reason: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class SitesReport:
    root: str
    package_dir: str | None
    files_total: int
    files_parsed: int
    files_skipped: int        # by the byte prefilter (provably cannot matter)
    cache_hits: int
    bindings: list[Binding] = field(default_factory=list)
    window_sites: list[WindowSite] = field(default_factory=list)
    calls: list[FACall] = field(default_factory=list)
    wrappers: list[WrapperTrust] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    analyzer_version: str = ""
    releases: list = field(default_factory=list)    # labels of the audited FA4 releases
    reach: dict = field(default_factory=dict)       # the import graph's answer (origins, files)
    reaches_fa4: bool = True
    from_cache: bool = False                        # served by the whole-report cache (not in JSON)

    @property
    def verdict(self) -> Verdict:
        """error (could not analyse) > unsafe (a call is broken) > unknown (something is not
        proved) > safe (every FA4-reaching call proved) ; no-fa4 when nothing reaches FA4."""
        levels = {f.level for f in self.findings}
        statuses = {c.status for c in self.calls if c.reaches_fa4}
        if "failure" in levels:
            return "error"
        if "error" in levels or "broken" in statuses:
            return "unsafe"
        if "unknown" in levels or "unknown" in statuses:
            return "unknown"
        if not self.reaches_fa4:
            return "no-fa4"
        return "safe"

    @property
    def fa4_calls(self) -> list[FACall]:
        return [c for c in self.calls if c.reaches_fa4]

    def counts(self) -> dict:
        return {
            "files": self.files_total, "files_parsed": self.files_parsed,
            "files_skipped_by_prefilter": self.files_skipped,
            "bindings": len(self.bindings),
            "fa4_bindings": sum(1 for b in self.bindings if "fa4" in b.versions),
            "fa4_bindings_unwrapped": sum(1 for f in self.findings if f.code == "FA4S002"),
            "window_sites": len(self.window_sites),
            "window_sites_reaching_fa4": sum(1 for w in self.window_sites if "fa4" in w.versions),
            "fa_calls": len(self.calls),
            "fa4_calls": len(self.fa4_calls),
            "fa4_calls_uncovered": sum(1 for c in self.fa4_calls if c.coverage == "uncovered"),
            "fa4_calls_proved": sum(1 for c in self.fa4_calls if c.status == "proved"),
            "fa4_calls_broken": sum(1 for c in self.fa4_calls if c.status == "broken"),
            "fa4_calls_unknown": sum(1 for c in self.fa4_calls if c.status == "unknown"),
            "findings": sum(1 for f in self.findings if f.level == "error"),
            "unknowns": sum(1 for f in self.findings if f.level == "unknown"),
            "notes": sum(1 for f in self.findings if f.level == "note"),
            "failures": sum(1 for f in self.findings if f.level == "failure"),
        }

    def to_json(self) -> dict:
        return {
            "schema": "fa4-audit/sites", "schema_version": SCHEMA_VERSION,
            "analyzer_version": self.analyzer_version,
            "root": self.root, "package_dir": self.package_dir,
            "verdict": self.verdict, "counts": self.counts(),
            "releases": list(self.releases), "reach": dict(self.reach),
            "bindings": [b.to_json() for b in self.bindings],
            "window_sites": [w.to_json() for w in self.window_sites],
            "calls": [c.to_json() for c in self.calls],
            "wrappers": [w.to_json() for w in self.wrappers],
            "findings": [f.to_json() for f in self.findings],
            "timings": dict(self.timings),
        }
