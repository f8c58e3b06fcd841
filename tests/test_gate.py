"""The pytest gate (`analyzer.pytest_plugin`) on real TE 2.20.2, unpatched and patched.

Run as a framework's CI would: a separate `pytest` process in a folder with no tests of its
own, the plugin enabled with `-p` (it is also auto-loaded as a pytest11 entry point of the same
name; the two must not clash)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


pytestmark = pytest.mark.network


def _gate(tmp_path, te: str, *extra: str, plugin_flag: bool = True):
    work = tmp_path / "ci"
    work.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider",
           f"--fa4-audit-te={te}", "--fa4-audit-fa4=4.0.0b36", *extra]
    if plugin_flag:
        cmd[3:3] = ["-p", "analyzer.pytest_plugin"]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return proc.returncode, proc.stdout + proc.stderr






def test_gate_fails_on_unpatched_release(tmp_path, te_2202):
    """Guards: the gate passing on TE 2.20.2 as released, whose FA4 calls hand (-1, 0) to a
    post-#2490 resolver. Each uncovered FA4 call is its own failing test, with its finding."""
    code, out = _gate(tmp_path, str(te_2202.root))
    assert code == 1, out
    failed = [ln for ln in out.splitlines() if ln.startswith("FAILED fa4-audit::call::")]
    assert len(failed) == 7, out            # the 7 FA4-reaching calls of 2.20.2, all uncovered
    assert "FA4S001" in out and "context_parallel.py" in out and "backends.py" in out
    assert "FAILED fa4-audit::verdict" in out
    # the claims about the fix itself hold: they are passing tests, not failures
    assert "FAILED fa4-audit::claim" not in out


def test_gate_passes_on_patched_release(tmp_path, patched_2202):
    """Guards: the gate failing a correctly patched tree (a false alarm blocks CI)."""
    code, out = _gate(tmp_path, str(patched_2202))
    assert code == 0, out
    assert "passed" in out and "failed" not in out


def test_gate_autoloads_without_clash(tmp_path, patched_2202):
    """Guards: `-p analyzer.pytest_plugin` and the pytest11 entry point registering twice."""
    code, out = _gate(tmp_path, str(patched_2202), plugin_flag=False)
    assert code == 0, out
    assert "passed" in out


def test_gate_fails_not_skips_when_analysis_cannot_complete(tmp_path):
    """Guards: a CI gate that goes green (or skips) when it could not read the tree."""
    code, out = _gate(tmp_path, str(tmp_path / "no-such-tree"))
    assert code == 1, out
    assert "FAILED fa4-audit::analysis" in out
    assert "skipped" not in out
