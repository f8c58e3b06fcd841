"""The corpus (tests/corpus/cases.py): every shape and its twin, judged statically, and checked
against a differential oracle that imports each tree against a recording stand-in FA4 and
calls its entry points.

Guards against: a static "safe" for a tree that hands FA4 a wrong window at run time (a false
safe -- the one thing this product must never say), and a static "unknown"/"unsafe" for a tree
whose every path was run and every window reached FA4 right (a false alarm).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.sites import audit_tree
from tests.corpus import standin
from tests.corpus.cases import BY_NAME, CASES, SHAPES


def materialise(case, root: Path) -> Path:
    for rel, text in case.files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("FA4_AUDIT_CACHE", str(tmp_path_factory.mktemp("cache")))
    out = {}
    for case in CASES:
        root = materialise(case, tmp_path_factory.mktemp(case.name.replace("/", "_")))
        out[case.name] = (root, audit_tree(root, jobs=1))
    mp.undo()
    return out


@pytest.fixture(scope="module")
def fa4_standin(tmp_path_factory):
    return standin.write(tmp_path_factory.mktemp("standin"))


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_static_verdict(name, verdicts):
    """Each tree gets the verdict its behaviour calls for (see the case's ``why``)."""
    root, report = verdicts[name]
    case = BY_NAME[name]
    assert report.verdict == case.expect, (
        f"{name}: {case.why}\n" + "\n".join(f"{f.code} {f.level} {f.location()} {f.message}"
                                          for f in report.findings))


@pytest.mark.parametrize("name", [c.name for c in CASES if c.oracle and c.drive])
def test_oracle_agrees(name, verdicts, fa4_standin, tmp_path):
    """Run the tree against the stand-in FA4: safe must mean no wrong window reached it;
    unknown/unsafe on an exhaustive drive must mean some wrong window did; no-fa4 must mean
    FA4 was never called."""
    root, report = verdicts[name]
    case = BY_NAME[name]
    log = tmp_path / "fa4.log"
    env = dict(os.environ, FA4_STANDIN_LOG=str(log), PYTHONDONTWRITEBYTECODE="1")
    code = f"import sys\nsys.path[:0] = [{str(fa4_standin)!r}, {str(root)!r}]\n" + case.drive
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    received = standin.read_log(log)
    bad = [r for r in received if standin.wrong(r)]
    if report.verdict == "safe":
        assert received and not bad, f"static safe, but FA4 received {bad or 'nothing'}"
    elif report.verdict == "no-fa4":
        assert not received, f"static no-fa4, but FA4 was called: {received}"
    elif case.exhaustive:
        assert bad, (f"static {report.verdict} on a tree whose every path hands FA4 a right "
                     f"window: {json.dumps(received)}")


def test_every_shape_has_a_twin():
    """Each shape is a pair, and the pair differs in its verdict (what the code does)."""
    for shape in SHAPES:
        assert shape in BY_NAME and f"{shape}/twin" in BY_NAME, shape
        assert BY_NAME[shape].expect != BY_NAME[f"{shape}/twin"].expect, shape


def test_reports_are_deterministic(verdicts, tmp_path):
    """Reasons and ids do not depend on the run: the JSON of a second run is identical
    (timings aside)."""
    from analyzer.sites import render

    for name in ("reexport", "seed_kwargs_wrapper/twin", "kwargs_by_helper"):
        root, first = verdicts[name]
        second = audit_tree(root, jobs=1, use_cache=False)
        a, b = first.to_json(), second.to_json()
        a.pop("timings"), b.pop("timings")
        assert a == b, name
        assert render(first, "sarif") == render(second, "sarif")


def test_cached_report_is_the_uncached_one(tmp_path, monkeypatch):
    """The whole-report cache (keyed by the tree's bytes, the options and the tool's code) gives
    exactly what a fresh analysis gives, and a changed file is never served from it."""
    monkeypatch.setenv("FA4_AUDIT_CACHE", str(tmp_path / "cache"))
    root = materialise(BY_NAME["kwargs_by_helper"], tmp_path / "tree")
    fresh = audit_tree(root, jobs=1, use_cache=False).to_json()
    first = audit_tree(root, jobs=1).to_json()
    again = audit_tree(root, jobs=1)
    assert again.from_cache
    for d in (fresh, first):
        d.pop("timings")
    second = again.to_json()
    second.pop("timings")
    assert fresh == first == second
    (root / "attn.py").write_text((root / "attn.py").read_text().replace("= -1", "= None"))
    changed = audit_tree(root, jobs=1)
    assert not changed.from_cache and changed.verdict != again.verdict
