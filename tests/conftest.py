"""Shared fixtures. Real releases come from the package index into the user cache
(``analyzer.sources.cache_dir()``); the first run fetches (~1 s a release), later runs reuse it."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli():
    """Run ``fa4-audit ARGS`` in-process: ``cli("table", "--fa4", "b36") -> CliResult``."""
    from analyzer.cli import main

    def _run(*argv: str) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), out, err)
        return CliResult(code, out.getvalue(), err.getvalue())

    return _run


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """An empty cache folder for tests that must not see (or pollute) the user cache."""
    d = tmp_path / "cache"
    monkeypatch.setenv("FA4_AUDIT_CACHE", str(d))
    monkeypatch.delenv("FA4_AUDIT_OFFLINE", raising=False)
    return d


@pytest.fixture(scope="session")
def te_2202():
    """TE 2.20.2 as released, from the package index into the user cache."""
    from analyzer import sources

    return sources.resolve("te", "2.20.2")


@pytest.fixture(scope="session")
def patched_2202(te_2202, tmp_path_factory):
    """A copy of TE 2.20.2 patched by the codemod, exactly as `make audit` patches it."""
    from analyzer.audit import patched_copy

    return patched_copy(te_2202, tmp_path_factory.mktemp("patched")).root
