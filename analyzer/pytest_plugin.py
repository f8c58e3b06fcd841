"""pytest gate: run the fa4-audit inside a framework's test suite.

Enable it with ``-p analyzer.pytest_plugin`` (it is also registered as a ``pytest11`` entry point
of that same name, so it auto-loads wherever fa4-audit is installed; it does nothing unless
``--fa4-audit-te`` is given):

    pytest --fa4-audit-te=. --fa4-audit-fa4=4.0.0b36 [--fa4-audit-fa4=newest] [--fa4-audit-strict]

It contributes one test per equivalence claim and one per FA4-reaching call site (each fails
with the finding's message), plus ``fa4-audit::verdict``. When the analysis cannot complete, a
test named ``fa4-audit::analysis`` FAILS (it is never skipped): fail closed.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("fa4-audit", "FlashAttention 4 window-sentinel audit")
    group.addoption("--fa4-audit-te", action="store", default=None, metavar="SPEC",
                    help="TE tree to audit (path, version or 'installed'); enables the gate")
    group.addoption("--fa4-audit-fa4", action="append", default=None, metavar="SPEC",
                    help="flash-attn-4 SPEC to audit against (repeatable; default: newest)")
    group.addoption("--fa4-audit-strict", action="store_true", default=False,
                    help="latent call-site findings fail too")
    group.addoption("--fa4-audit-wrapper", action="append", default=[], metavar="NAME",
                    help="extra wrapper name recognised as a normaliser")
    group.addoption("--fa4-audit-upgrade", action="store_true", default=False,
                    help="also run `fa4-audit upgrade` (version gates, CI blind spots, API drift): "
                         "one failing test per hazard")


class AuditItem(pytest.Item):
    """One gate check: passes, or fails with the finding's message."""

    def __init__(self, *, failure: str | None, location: tuple[str, int | None, str] | None = None,
                 **kwargs):
        super().__init__(**kwargs)
        self._failure = failure
        self._location = location

    def runtest(self):
        if self._failure is not None:
            raise AuditGateFailure(self._failure)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, AuditGateFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        if self._location is not None:
            return self._location
        return self.path, None, self.name


class AuditGateFailure(Exception):
    pass


class AuditCollector(pytest.Collector):
    """Parent of the gate's items, so their ids read ``fa4-audit::claim::a`` etc."""

    def collect(self):
        return []


def _items_for(session, config) -> list[AuditItem]:
    from analyzer.audit import run_audit
    from analyzer.errors import AuditError

    te_spec = config.getoption("fa4_audit_te")
    fa4_specs = config.getoption("fa4_audit_fa4") or ["newest"]
    strict = config.getoption("fa4_audit_strict")
    wrappers = config.getoption("fa4_audit_wrapper") or []

    parent = AuditCollector.from_parent(session, name="fa4-audit", nodeid="fa4-audit")

    def item(name, failure, location=None):
        return AuditItem.from_parent(parent, name=name, failure=failure, location=location)

    try:
        report = run_audit(te_spec, fa4_specs, strict=strict, wrappers=wrappers, with_codemod=False,
                           upgrade=config.getoption("fa4_audit_upgrade"))
        return _report_items(report, item, strict)
    except AuditError as exc:
        return [item("analysis", f"fa4-audit could not analyse: {exc}")]
    except Exception as exc:  # fail closed on anything unexpected
        return [item("analysis", f"fa4-audit could not analyse: {type(exc).__name__}: {exc}")]


def _report_items(report, item, strict: bool) -> list[AuditItem]:
    """The gate's items, read from the audit's own decision (``report.verdict`` and each FA4
    call's per-release verdicts); nothing here decides again. ``strict`` is already part of
    the report's decision and is kept for the signature's sake."""
    from analyzer.model import EXIT_FOR_VERDICT

    failing = EXIT_FOR_VERDICT[report.verdict] != 0
    items: list[AuditItem] = []
    if report.verdict == "error":
        items.append(item("analysis", "fa4-audit could not analyse: " + "; ".join(report.errors)))
    else:
        items.append(item("analysis", None))
    if report.table is not None:
        for claim in report.table.claims:
            msg = None
            if not claim.holds:
                examples = "; ".join(str(c) for c in claim.counterexamples[:5])
                msg = f"claim '{claim.name}' fails on {len(claim.counterexamples)} input(s): {examples}"
            items.append(item(f"claim::{claim.name}", msg))
    if report.sites is not None:
        findings = {(f.path, f.line, f.col): f for f in report.sites.findings
                    if f.level in ("error", "unknown")}
        for call in report.sites.fa4_calls:
            where = f"{call.path}:{call.line}:{call.col}"
            msg = None
            f = findings.get((call.path, call.line, call.col))
            if call.verdicts:      # per release: proved / broken / unknown, with its witness
                bad = [v for v in call.verdicts if v.status != "proved"]
                if bad:
                    code = f"{f.code} [{f.name}] " if f is not None else ""
                    msg = where + ": " + code + "; ".join(
                        f"{v.release}: {v.status}: {v.witness}"
                        + "".join(f"\n    pair {p}" for p in v.pairs) for v in bad)
            elif failing and f is not None:
                via = "".join(f"\n    via {v}" for v in f.via)
                msg = (f"{where}: {f.code} [{f.name}] {f.message} "
                       f"(audit verdict {report.verdict}){via}")
            items.append(item(f"call::{where}", msg,
                              (call.path, call.line - 1, f"FA4 call {call.callee}(...)")))
    upgrade = getattr(report, "upgrade", None)
    if upgrade is not None:     # one item per upgrade hazard (analyzer.upgrade), each failing
        seen: dict[str, int] = {}
        for h in upgrade.sorted_hazards():
            name = f"upgrade::{h.kind}::{h.path}:{h.line}"
            seen[name] = seen.get(name, 0) + 1
            items.append(item(name + (f"#{seen[name]}" if seen[name] > 1 else ""),
                              f"{h.path}:{h.line}: {h.code} [{h.kind}] ({h.certainty}) {h.message}",
                              (h.path, h.line - 1, f"upgrade hazard {h.kind}")))
    items.append(item("verdict", None if not failing else
                      f"verdict {report.verdict}: " + "; ".join(report.errors or report.reasons)))
    return items


def pytest_collection_modifyitems(session, config, items):
    if not config.getoption("fa4_audit_te"):
        return
    items.extend(_items_for(session, config))
