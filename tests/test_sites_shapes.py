"""The call-site pass on one fixture per code shape of DESIGN §5 (tests/fixtures/sites/).

Fixtures carry semgrep-style annotations on the line(s) above the line they are about:
  ``# fa4s: CODE``          a finding with that rule id is expected on the next code line
  ``# fa4s-window: V[/V]``  a window site reaching exactly those FA versions is expected there
  ``# ok: why``             nothing may be reported on the next code line
Annotations stack (two ``fa4s-window`` lines = two sites on that line). Each test compares the
exact multiset, so both a missed shape and a reported look-alike fail it.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from analyzer.sites import audit_tree

FIXTURES = Path(__file__).parent / "fixtures" / "sites"
SHAPES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def annotations(root: Path):
    """(findings, windows, oks): Counters of (path, line, code/versions) and a set of lines."""
    findings, windows, oks = Counter(), Counter(), set()
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        lines = f.read_text().splitlines()
        pending = []
        for i, text in enumerate(lines, 1):
            s = text.strip()
            if s.startswith("# fa4s:"):
                pending.append(("finding", s.split(":", 1)[1].strip()))
            elif s.startswith("# fa4s-window:"):
                pending.append(("window", s.split(":", 1)[1].strip()))
            elif s.startswith("# ok:"):
                pending.append(("ok", None))
            elif s and not s.startswith("#"):
                for kind, val in pending:
                    if kind == "finding":
                        findings[(rel, i, val)] += 1
                    elif kind == "window":
                        windows[(rel, i, val)] += 1
                    else:
                        oks.add((rel, i))
                pending = []
    return findings, windows, oks


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("FA4_AUDIT_CACHE", str(cache))
    out = {name: audit_tree(FIXTURES / name, jobs=1) for name in SHAPES}
    mp.undo()
    return out


@pytest.mark.parametrize("shape", SHAPES)
def test_findings_match_annotations(shape, reports):
    """Guards against a missed FA4 call/binding and against reporting a look-alike or an
    FA2/FA3-only call (exact multiset of (file, line, rule))."""
    expected, _, oks = annotations(FIXTURES / shape)
    report = reports[shape]
    got = Counter((f.path, f.line, f.code) for f in report.findings)
    assert got == expected, _diff(got, expected, report)
    for f in report.findings:
        assert (f.path, f.line) not in oks, f"reported an ok line: {f.location()} {f.code}"


@pytest.mark.parametrize("shape", SHAPES)
def test_window_sites_match_annotations(shape, reports):
    """Guards against missing a window-writing shape (dict literal, subscript store in a branch,
    .update, ** of a helper result, *args into a helper, ctx round trip, positional) and
    against mis-attributing FA versions (a FA2/FA3-only window reported as reaching FA4)."""
    _, expected, _ = annotations(FIXTURES / shape)
    report = reports[shape]
    got = Counter((w.path, w.line, "/".join(w.versions)) for w in report.window_sites)
    assert got == expected, _diff(got, expected, report)


def _diff(got, expected, report):
    missing = expected - got
    extra = got - expected
    lines = [f"missing: {sorted(missing)}", f"unexpected: {sorted(extra)}"]
    lines += [f"  {f.location()} {f.code} {f.message}" for f in report.findings]
    lines += [f"  W {w.path}:{w.line} {w.key} {w.style} {w.value} {w.versions}" for w in report.window_sites]
    return "\n".join(lines)


def test_lookalikes_are_not_sites(reports):
    """cuDNN fused attention, config dicts, TE modules and JAX calls taking window_size are
    neither FA calls nor window sites."""
    r = reports["lookalikes"]
    assert r.calls == [] and r.window_sites == [] and r.verdict == "no-fa4"


def test_facts_keep_fa3_branch_off_fa4(reports):
    """The FA3 call in the else of ``if use_flash_attn_4`` reaches FA3 only, and sits in a
    try/except TypeError (recorded)."""
    r = reports["callee_facts"]
    fa3 = [c for c in r.calls if c.versions == ("fa3",)]
    assert len(fa3) == 1 and fa3[0].in_try_typeerror and not fa3[0].reaches_fa4
    fa4 = [c for c in r.calls if c.reaches_fa4]
    assert len(fa4) == 1 and fa4[0].coverage == "uncovered"
    assert set(fa4[0].entries) == {"flash_attn.cute.interface.flash_attn_func",
                                   "flash_attn.cute.interface.flash_attn_varlen_func"}


def test_cp_helper_paths_and_values(reports):
    """The FA4 call in the helper is reached through *args (callee and dict), and its window
    values are the literal -1s written in the caller and in the helper."""
    r = reports["cp_helpers"]
    (fa4,) = [c for c in r.calls if c.reaches_fa4]
    assert fa4.scope == "tile"
    assert any("parameter flash_attn_fwd of tile" in step for step in fa4.via)
    sites = {w.id: w for w in r.window_sites}
    values = {sites[i].value for i in fa4.windows}
    assert values == {"-1", "0 if causal else -1"}
    assert {s for i in fa4.windows for s in sites[i].values} == {"-1", "0"}


def test_trusted_wrapper_in_every_position(reports):
    """A self-contained keyword normaliser is judged by behaviour: every call through it
    (separate statement, inside and outside no_torch_dynamo, self-rebinding) is proved, and
    what it misses (positional windows, which no call uses) is a note, never the verdict."""
    r = reports["wrapped_trusted"]
    assert r.verdict == "safe", [f.message for f in r.findings if f.level != "note"]
    assert {f.level for f in r.findings} == {"note"}
    assert all(c.status == "proved" for c in r.calls if c.reaches_fa4)
    used = [w for w in r.wrappers if w.trusted]
    assert used and all("checked on" in w.reason for w in used)


def test_untrusted_wrapper_reason(reports):
    """A wrapper that maps -1 to 0 is untrusted by its behaviour, and the finding carries the
    counterexample (the pair, the form, what FA4 received and the band it gives)."""
    r = reports["untrusted_wrapper"]
    (f,) = [f for f in r.findings if f.code == "FA4S004"]
    assert f.level == "error" and "FA4 receives (0, " in f.message and "->" in f.message
    assert not any(w.trusted for w in r.wrappers)


def test_wrapper_judged_by_behaviour_not_name(tmp_path, isolated_cache):
    """Any name: a correct normalising wrapper called ``my_wrap`` is proved with no flags; the
    same tree whose wrapper computes the normalised window and then drops it is unsafe."""
    good = (
        "def clamp(left, right):\n"
        "    if left is not None and left < 0:\n        left = None\n"
        "    if right is not None and right < 0:\n        right = None\n"
        "    return left, right\n\n"
        "def my_wrap(fn):\n"
        "    def inner(q, k, v, window_size=(None, None), **kw):\n"
        "        return fn(q, k, v, window_size=clamp(*window_size), **kw)\n"
        "    return inner\n\n"
        "from flash_attn.cute import flash_attn_func\n"
        "flash_attn_func = my_wrap(flash_attn_func)\n\n"
        "def run(q, k, v):\n"
        "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")
    (tmp_path / "m.py").write_text(good)
    r = audit_tree(tmp_path, jobs=1)
    assert r.verdict == "safe", [f.message for f in r.findings]
    (tmp_path / "m.py").write_text(good.replace(
        "return fn(q, k, v, window_size=clamp(*window_size), **kw)",
        "fixed = clamp(*window_size)\n        return fn(q, k, v, window_size=window_size, **kw)"))
    r = audit_tree(tmp_path, jobs=1)
    assert r.verdict == "unsafe"
    assert "FA4S001" in {f.code for f in r.findings}


# ----------------------------------------------------------------------------- fail closed

def test_unparseable_file_mentioning_fa_is_an_error(tmp_path, isolated_cache, cli):
    """A file that spells flash_attn and does not parse makes the verdict error (exit 2)."""
    (tmp_path / "bad.py").write_text("from flash_attn.cute import flash_attn_func\ndef f(:\n")
    (tmp_path / "good.py").write_text("x = 1\n")
    r = audit_tree(tmp_path, jobs=1)
    assert r.verdict == "error"
    assert [(f.code, f.path, f.level) for f in r.findings] == [("FA4S900", "bad.py", "failure")]
    res = cli("sites", "--tree", str(tmp_path), "--quiet")
    assert res.code == 2


def test_unparseable_file_without_fa_is_ignored(tmp_path, isolated_cache, cli):
    """A broken file that never mentions FlashAttention provably cannot matter (exit 0)."""
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "ok.py").write_text("from flash_attn import flash_attn_func\n"
                                    "def g(q, k, v):\n    return flash_attn_func(q, k, v)\n")
    r = audit_tree(tmp_path, jobs=1)
    assert r.verdict == "no-fa4" and r.findings == []
    assert cli("sites", "--tree", str(tmp_path), "--quiet").code == 0


def test_unreadable_file_is_an_error(tmp_path, isolated_cache):
    """A .py file that cannot be read (here a dangling symlink) might call FA: verdict error,
    never safe."""
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "ghost.py").symlink_to(tmp_path / "missing.py")
    r = audit_tree(tmp_path, jobs=1)
    assert r.verdict == "error"
    assert [(f.code, f.path) for f in r.findings] == [("FA4S900", "ghost.py")]


def test_cache_warm_run_reuses_and_invalidates(tmp_path, isolated_cache):
    """A second run is served from the cache with identical results; an edited file is
    analysed again (content-keyed, never stale), and its per-file IR is parsed anew."""
    tree = tmp_path / "t"
    shutil.copytree(FIXTURES / "direct_alias", tree)
    cold = audit_tree(tree, jobs=1)
    warm = audit_tree(tree, jobs=1)
    assert cold.cache_hits == 0 and warm.from_cache
    assert [f.to_json() for f in warm.findings] == [f.to_json() for f in cold.findings]
    f = tree / "attn.py"
    f.write_text(f.read_text().replace("window_size=(-1, 0))\n    # ok", "window_size=(None, 0))\n    # ok"))
    edited = audit_tree(tree, jobs=1)
    assert edited.cache_hits == 0 and not edited.from_cache
    assert sum(1 for x in edited.findings if x.code == "FA4S001") == 0


def test_parallel_and_chunked_parse_agree(tmp_path, isolated_cache):
    """Splitting a big file at top-level defs across processes gives the same IR-derived
    results (positions included) as parsing it whole in one process."""
    import analyzer.sites as S
    src = (FIXTURES / "callee_facts" / "backends.py").read_text()
    filler = "".join(f"\n\ndef filler_{i}(x):\n    return x + {i}\n" for i in range(2500))
    (tmp_path / "big.py").write_text(src + filler)
    assert len(list(S._chunks((tmp_path / "big.py").read_bytes(), 4))) > 1
    one = audit_tree(tmp_path, jobs=1, use_cache=False)
    many = audit_tree(tmp_path, jobs=4, use_cache=False)
    assert [f.to_json() for f in one.findings] == [f.to_json() for f in many.findings]
    assert [w.to_json() for w in one.window_sites] == [w.to_json() for w in many.window_sites]


def test_oversized_file_mentioning_fa_fails_fast(tmp_path, isolated_cache, monkeypatch):
    """A file over the parse cap that mentions flash_attn is a failure (exit 2) in well under a
    second, not minutes of parsing; the cap is configurable."""
    import time
    monkeypatch.setenv("FA4_AUDIT_SITES_MAX_MB", "0.05")
    (tmp_path / "gen.py").write_text("import flash_attn\n" + "x = 1\n" * 20000)
    t0 = time.perf_counter()
    r = audit_tree(tmp_path, jobs=1)
    assert time.perf_counter() - t0 < 5
    assert r.verdict == "error" and r.findings[0].code == "FA4S900" and "cap" in r.findings[0].message
