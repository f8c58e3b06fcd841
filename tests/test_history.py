"""fa4-audit history: variant and breakage per release, from the cache on a second run and
offline. Uses an isolated cache so the offline behaviour is really tested."""

from __future__ import annotations

import json

import pytest

from analyzer.equivalence.history import history, history_verdict

pytestmark = pytest.mark.network


def _calls_to_pip(monkeypatch):
    from analyzer import sources
    calls = []
    real = sources._pip

    def spy(*args, **kw):
        calls.append(args[0])
        return real(*args, **kw)

    monkeypatch.setattr(sources, "_pip", spy)
    return calls


def test_history_names_variants_and_breakage_then_reruns_from_cache(isolated_cache, monkeypatch):
    """b29 (pre-#2490) keeps TE's pairs exact; b30 (post-#2490) empties the causal ones.
    The second run must not download anything."""
    rows, te = history(["b29", "4.0.0b30"], None)
    assert [(r["version"], r["variant"], r["breaks"]) for r in rows] == [
        ("4.0.0b29", "pre-2490", False), ("4.0.0b30", "post-2490", True)]
    assert "causal=True (-1, 0): LOCAL -1/0 (empty)" in rows[1]["first_broken"]
    assert rows[1]["broken_pairs"] > 0 and rows[0]["first_broken"] is None
    assert history_verdict(rows, te) == "unsafe"

    calls = _calls_to_pip(monkeypatch)
    again, _ = history(["b29", "4.0.0b30"], None)
    assert calls == [] and again == rows


def test_offline_works_from_the_cache_and_fails_closed_on_what_is_missing(isolated_cache, cli,
                                                                          monkeypatch):
    history(["b29"], None)  # warm the isolated cache
    monkeypatch.setenv("FA4_AUDIT_OFFLINE", "1")
    calls = _calls_to_pip(monkeypatch)
    rows, te = history(None, None)  # the release list falls back to what is cached
    assert [r["version"] for r in rows] == ["4.0.0b29"] and rows[0]["breaks"] is False
    rows, te = history(["b29", "b31"], None)
    assert rows[1]["breaks"] is None and "not in the cache" in rows[1]["error"]
    assert history_verdict(rows, te) == "error"
    r = cli("history", "--fa4", "b29", "--fa4", "b31")
    assert r.code == 2 and "error" in r.out
    assert calls == []


def test_cli_history_json_and_exit_code(isolated_cache, cli):
    r = cli("history", "--fa4", "b11", "--fa4", "b36", "--format", "json")
    assert r.code == 1, r.err
    d = json.loads(r.out)
    assert [x["variant"] for x in d["releases"]] == ["pre-2490", "post-2490"]
    assert all(len(x["fingerprint"]) == 16 for x in d["releases"])
    ok = cli("history", "--fa4", "b11", "--format", "markdown")
    assert ok.code == 0 and "| 4.0.0b11" in ok.out


def test_unknown_release_is_an_error_row(isolated_cache):
    rows, te = history(["4.0.0b999"], None)
    assert rows[0]["breaks"] is None and "could not fetch" in rows[0]["error"]
