"""`make audit` again with nothing changed reuses the patched copy and both audits; any changed
input is recomputed; the cached and uncached paths give identical reports (timings aside)."""

from __future__ import annotations

import json
import re

import pytest

from analyzer import sources
from analyzer.audit import audit_key, cached_reports, patched_copy, store_reports

_TIMINGS = re.compile(r'"(read|reach|parse|solve|judge|total)_s": [0-9.e-]+')


def _reports(d):
    return {p.relative_to(d).as_posix(): _TIMINGS.sub("", p.read_text())
            for p in sorted(d.rglob("*")) if p.is_file()}


def _tree(tmp_path, name, text):
    root = tmp_path / name
    (root / "transformer_engine").mkdir(parents=True)
    (root / "transformer_engine" / "__init__.py").write_text(text)
    return sources.Source("te", str(root), "tree", root, None)


@pytest.mark.parametrize("verdict", ["safe", "unsafe", "unknown", "no-fa4"])
def test_every_verdict_but_error_is_reused(isolated_cache, verdict):
    """Guards: the verdict set grows (unknown, no-fa4); a cache that only knew safe/unsafe
    would silently recompute them every time, and one that kept 'error' would never retry."""
    files = {"audit.md": "# r\n", "audit.json": "{}\n", "audit.sarif": "{}\n"}
    store_reports(f"k-{verdict}", files, verdict, f"line {verdict}")
    hit = cached_reports(f"k-{verdict}")
    assert hit == {"files": files, "verdict": verdict, "one_line": f"line {verdict}"}


def test_an_error_is_never_stored_or_reused(isolated_cache):
    files = {"audit.md": "", "audit.json": "", "audit.sarif": ""}
    store_reports("k-err", files, "error", "x")
    assert cached_reports("k-err") is None
    d = isolated_cache / "audit" / "forged"
    d.mkdir(parents=True)
    for n in files:
        (d / n).write_text("")
    (d / "meta.json").write_text(json.dumps({"verdict": "error", "one_line": "x"}))
    assert cached_reports("forged") is None
    (d / "meta.json").write_text(json.dumps({"verdict": "safe"}))     # malformed: no one_line
    assert cached_reports("forged") is None


def test_the_key_follows_every_byte_and_option(tmp_path):
    a = _tree(tmp_path, "a", "x = 1\n")
    key = audit_key(a, [], {"strict": False})
    assert audit_key(a, [], {"strict": False}) == key
    assert audit_key(a, [], {"strict": True}) != key
    (a.root / "transformer_engine" / "__init__.py").write_text("x = 2\n")   # same size, new bytes
    assert audit_key(a, [], {"strict": False}) != key
    (a.root / "transformer_engine" / "new.py").write_text("")
    assert audit_key(a, [], {"strict": False}) != key


@pytest.mark.network
def test_patched_copy_is_kept_and_reused(isolated_cache, te_2202, monkeypatch):
    """Without a destination the patched tree lives in the cache and a second call does not
    copy or patch again; with one, the caller gets a fresh copy (the test fixtures' form)."""
    from fa4_patch import codemod

    first = patched_copy(te_2202)
    assert "_fa4_" in (first.root / "transformer_engine/pytorch/attention/dot_product_attention/"
                       "backends.py").read_text()

    def no_codemod(*a, **k):
        raise AssertionError("patched again although nothing changed")

    monkeypatch.setattr(codemod, "write", no_codemod)
    again = patched_copy(te_2202)
    assert again.root == first.root and again.version == first.version


@pytest.mark.network
def test_make_audit_again_reuses_both_audits_with_identical_reports(cli, isolated_cache, tmp_path,
                                                                     monkeypatch):
    from fa4_patch import codemod

    args = ("make-audit", "--fa4", "4.0.0b11", "--fa4", "4.0.0b36")
    first = cli(*args, "--out", str(tmp_path / "a"))
    assert first.code == 0, first.err
    import analyzer.audit as audit_mod

    def no_audit(*a, **k):
        raise AssertionError("re-audited although nothing changed")

    with monkeypatch.context() as m:
        m.setattr(audit_mod, "run_audit", no_audit)
        m.setattr(codemod, "write", no_audit)
        again = cli(*args, "--out", str(tmp_path / "b"))
    assert again.code == 0 and again.out.replace("/b/", "/a/") == first.out
    assert _reports(tmp_path / "a") == _reports(tmp_path / "b")
    fresh = cli(*args, "--out", str(tmp_path / "c"), "--no-cache")      # the uncached path
    assert fresh.code == 0
    assert _reports(tmp_path / "c") == _reports(tmp_path / "a")
