"""Each call-site rule carries its own examples (``analyzer/sites/rules.py``, Fixit's shape):
every INVALID source must be reported with the rule's code, no VALID source may be. One
parametrised test runs them all, so a rule and its documentation cannot drift apart.

Guards against: a rule that no longer fires on the code its docs show (a silent false safe),
and a rule that fires on the fix its docs recommend (a false alarm)."""

from __future__ import annotations

import pytest

from analyzer.sites import audit_tree
from analyzer.sites.rules import RULES

CASES = [(code, "invalid", i, src) for code, r in RULES.items()
         for i, src in enumerate(r.invalid_examples)] + \
        [(code, "valid", i, src) for code, r in RULES.items()
         for i, src in enumerate(r.valid_examples)]


@pytest.mark.parametrize("code, kind, i, source", CASES,
                         ids=[f"{c}-{k}-{i}" for c, k, i, _ in CASES])
def test_rule_examples(code, kind, i, source, tmp_path, monkeypatch):
    monkeypatch.setenv("FA4_AUDIT_CACHE", str(tmp_path / "cache"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "mod.py").write_text(source)
    report = audit_tree(tree, jobs=1)
    codes = {f.code for f in report.findings}
    shown = "\n".join(f"{f.code} {f.level} {f.location()} {f.message}" for f in report.findings)
    if kind == "invalid":
        assert code in codes, f"{code} example {i} not reported:\n{source}\n--\n{shown}"
        level = RULES[code].level
        assert any(f.code == code and f.level in (level, "note", "unknown", "error")
                   for f in report.findings)
    else:
        assert code not in codes, f"{code} fires on its own valid example {i}:\n{source}\n--\n{shown}"


def test_every_rule_has_examples_both_ways():
    for code, rule in RULES.items():
        assert rule.invalid_examples and rule.valid_examples, code
