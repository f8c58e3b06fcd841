"""The pre-commit hook (.pre-commit-hooks.yaml) runs from a fresh clone of a small repository.

Two routes: the hook's ``entry`` run the way pre-commit runs it (``pass_filenames: false``: no
file arguments, in the clone's root), and -- when pre-commit itself is installed -- ``pre-commit
run`` on a local hook with the same entry (``language: system``, so no environment is built
from the network). Each has a broken and a fixed twin: the hook must fail, then pass."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

HOOKS = Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml"
BROKEN = ("from flash_attn.cute.interface import flash_attn_func\n\n\n"
          "def attn(q, k, v):\n"
          "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")
FIXED = BROKEN.replace("(-1, 0)", "(None, 0)")


def _git(cwd, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def _fixture_repo(tmp_path: Path, source: str) -> Path:
    """A repository committed in one folder and cloned fresh into another."""
    origin = tmp_path / "origin"
    (origin / "mypkg").mkdir(parents=True)
    (origin / "mypkg" / "__init__.py").write_text("")
    (origin / "mypkg" / "attn.py").write_text(source)
    (origin / "pyproject.toml").write_text("[project]\nname = 'mypkg'\n")
    _git(origin, "init", "-q", ".")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "fixture")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    return clone


def _hook() -> dict:
    hooks = yaml.safe_load(HOOKS.read_text())
    assert isinstance(hooks, list) and len(hooks) == 1
    hook = hooks[0]
    assert {"id", "name", "entry", "language"} <= set(hook)
    return hook


def _env():
    bindir = str(Path(sys.executable).parent)     # where fa4-audit is installed
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}


def test_hook_definition_is_a_whole_tree_check():
    hook = _hook()
    assert hook["id"] == "fa4-audit-sites" and hook["language"] == "python"
    # windows cross files: the hook must not be run on the changed files alone
    assert hook["pass_filenames"] is False
    assert shlex.split(hook["entry"])[:2] == ["fa4-audit", "sites"]


@pytest.mark.parametrize("source,code", [(BROKEN, 1), (FIXED, 0)], ids=["broken", "fixed"])
def test_entry_runs_from_a_fresh_clone(tmp_path, source, code):
    clone = _fixture_repo(tmp_path, source)
    r = subprocess.run(shlex.split(_hook()["entry"]), cwd=clone, capture_output=True, text=True,
                       env=_env(), timeout=300)
    assert r.returncode == code, r.stdout + r.stderr
    if code:
        assert "mypkg/attn.py:5" in r.stdout and "FA4S001" in r.stdout
        assert str(tmp_path) not in r.stdout         # paths relative to the repository


@pytest.mark.parametrize("source,code", [(BROKEN, 1), (FIXED, 0)], ids=["broken", "fixed"])
def test_pre_commit_runs_the_hook(tmp_path, source, code):
    pre_commit = shutil.which("pre-commit", path=_env()["PATH"])
    if pre_commit is None:
        pytest.skip("pre-commit is not installed")
    clone = _fixture_repo(tmp_path, source)
    hook = {**_hook(), "language": "system"}
    (clone / ".pre-commit-config.yaml").write_text(yaml.safe_dump(
        {"repos": [{"repo": "local", "hooks": [hook]}]}, sort_keys=False))
    env = {**_env(), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    r = subprocess.run([pre_commit, "run", "--all-files"], cwd=clone, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == code, r.stdout + r.stderr
    assert ("Failed" if code else "Passed") in r.stdout
