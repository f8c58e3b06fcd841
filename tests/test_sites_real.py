"""The call-site pass on real TransformerEngine releases (fetched into the cache).

Every expectation is checked by an independent route, not by freezing the pass's first output:
an ``ast`` grep written here finds FA4 imports, wrapping assignments and the calls made under
``if [ctx.]use_flash_attn_4:``, and the reported lines are read back to check they spell what the
pass says is there.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from analyzer import sources
from analyzer.sites import audit_tree

pytestmark = pytest.mark.network

FA4_MODULES = {"flash_attn.cute", "flash_attn.cute.interface"}
FA4_ENTRIES = {"flash_attn_func", "flash_attn_varlen_func", "_flash_attn_fwd", "_flash_attn_bwd"}


@pytest.fixture(scope="module")
def te():
    def get(version):
        return sources.fetch_release("te", version)
    return get


@pytest.fixture(scope="module")
def report_for(te):
    cache = {}

    def run(version):
        if version not in cache:
            cache[version] = audit_tree(te(version), package_dir="transformer_engine")
        return cache[version]
    return run


# ----------------------------------------------------------------------------- the ast grep

def grep(root: Path):
    """Independent facts from ``ast``: FA4 import aliases (module level), module-level
    ``X = ...(raw)`` wrapping assignments of those aliases, and FA-looking calls made in the
    body of an ``if use_flash_attn_4`` / ``if ctx.use_flash_attn_4`` branch."""
    imports, wraps, calls = set(), {}, set()
    for f in sorted((root / "transformer_engine").rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        tree = ast.parse(f.read_bytes())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in FA4_MODULES and node.level == 0:
                for a in node.names:
                    if a.name in FA4_ENTRIES:
                        imports.add((rel, a.asname or a.name))
        raw = {name for r, name in imports if r == rel}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
                inner = node.value
                while isinstance(inner, ast.Call) and len(inner.args) == 1:
                    inner = inner.args[0]
                if isinstance(inner, ast.Name) and inner.id in raw:
                    wraps[(rel, node.targets[0].id)] = node.lineno
            if isinstance(node, ast.If):
                t = node.test
                flag = (isinstance(t, ast.Name) and t.id == "use_flash_attn_4") or \
                    (isinstance(t, ast.Attribute) and t.attr == "use_flash_attn_4")
                if not flag:
                    continue
                for stmt in node.body:
                    for sub in ast.walk(stmt):
                        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and (
                                sub.func.id in ("func", "flash_attn_fwd", "flash_attn_bwd")
                                or "_v4" in sub.func.id):
                            calls.add((rel, sub.lineno))
    return imports, wraps, calls


def line_text(root: Path, rel: str, line: int) -> str:
    return (root / rel).read_text().splitlines()[line - 1]


# ----------------------------------------------------------------------------- releases

def test_te_2_14_has_no_fa4(te, report_for):
    """2.14 predates FA4 support: no FA4 binding, call or window site; FA2 calls are found and
    not reported; the verdict is "no FA4 here", never "safe" (nothing was proved)."""
    root = te("2.14.0")
    imports, _, _ = grep(root)
    assert imports == set()
    r = report_for("2.14.0")
    assert r.verdict == "no-fa4" and r.findings == []
    assert r.reach["reaching"] == []
    assert not any("fa4" in b.versions for b in r.bindings)
    assert r.calls and all(c.versions == ("fa2",) for c in r.calls)
    assert not any("fa4" in w.versions for w in r.window_sites)


def test_te_2_15_direct_aliases(te, report_for):
    """2.15 imports FA4 directly as *_v4 aliases: exactly those bindings are unwrapped, and the
    single FA4-reaching call (FlashAttention.forward) is uncovered."""
    root = te("2.15.0")
    imports, _, calls = grep(root)
    r = report_for("2.15.0")
    unwrapped = {(f.path, line_text(root, f.path, f.line).split(" as ")[-1].strip(" ,()"))
                 for f in r.findings if f.code == "FA4S002"}
    assert unwrapped == imports == {
        ("transformer_engine/pytorch/attention/dot_product_attention/backends.py", "flash_attn_func_v4"),
        ("transformer_engine/pytorch/attention/dot_product_attention/backends.py", "flash_attn_varlen_func_v4")}
    fa4_calls = {(c.path, c.line) for c in r.fa4_calls}
    assert fa4_calls == calls and len(fa4_calls) == 1
    # the window is FlashAttention.forward's parameter: the pass cannot bound it, so the call
    # is unknown (a failing finding), never safe; (-1, 0) is named as what may break
    assert all(c.status == "unknown" for c in r.fa4_calls)
    assert any("(-1, 0)" in v.witness for c in r.fa4_calls for v in c.verdicts)
    assert r.verdict == "unknown"


def test_te_2_20_2_wrapped_bindings_and_cp(te, report_for):
    """2.20.2 wraps FA4 in no_torch_dynamo (not a normaliser) and adds context parallelism: the
    four wrapped names are the unwrapped FA4 bindings, and the FA4-reaching calls are exactly the
    calls made under ``if [ctx.]use_flash_attn_4`` (forward + 6 CP), all uncovered."""
    root = te("2.20.2")
    imports, wraps, calls = grep(root)
    r = report_for("2.20.2")
    got = {(f.path, f.line) for f in r.findings if f.code == "FA4S002"}
    assert got == {(rel, line) for (rel, _), line in wraps.items()}
    assert {name for _, name in wraps} == {"flash_attn_func_v4", "flash_attn_varlen_func_v4",
                                           "_flash_attn_fwd_v4", "_flash_attn_bwd_v4"}
    for f in r.findings:
        if f.code == "FA4S002":
            text = line_text(root, f.path, f.line)
            assert "no_torch_dynamo()(" in text and text.strip().startswith(f.message.split()[0])
    fa4_calls = {(c.path, c.line) for c in r.fa4_calls}
    assert fa4_calls == calls and len(calls) == 7
    assert all(c.coverage == "uncovered" for c in r.fa4_calls)
    # every FA4 call is broken or unknown; the P2P calls pass the literal (-1, 0) and break on
    # the post-#2490 rule only; the verdict is unsafe
    assert {f.line for f in r.findings if f.code in ("FA4S001", "FA4S005")} == \
        {line for _, line in calls}
    broken = [c for c in r.fa4_calls if c.status == "broken"]
    assert broken and all(
        {v.release.split()[0]: v.status for v in c.verdicts} == {"pre-2490": "unknown",
                                                                 "post-2490": "broken"}
        for c in broken)
    assert all("(-1, 0)" in v.witness for c in broken for v in c.verdicts if v.status == "broken")
    assert r.verdict == "unsafe"
    # the reported callee is spelled at the reported column
    for c in r.calls:
        text = line_text(root, c.path, c.line)
        assert text[c.col - 1:].startswith(c.callee), (c.id, text)
    # every window site line spells its key, and the value text is there too
    for w in r.window_sites:
        text = line_text(root, w.path, w.line)
        assert w.key in text, (w.id, text)
        assert w.value.split("(")[0].strip() in (text + " " + line_text(root, w.path, w.line + 1))
    # FA2/FA3 calls stay off FA4, and no look-alike (fused attention) is a site
    assert sum(1 for c in r.calls if not c.reaches_fa4) == len(r.calls) - 7
    assert not any("fused_attn" in c.callee for c in r.calls)
    assert r.verdict == "unsafe"
    assert r.files_parsed < r.files_total   # the prefilter skipped files that cannot matter


def test_te_2_20_2_ctx_and_literal_windows(te, report_for):
    """CP windows: literal -1s (P2P tiles) reach FA4, the A2A backward reads them back from ctx."""
    r = report_for("2.20.2")
    fa4_sites = [w for w in r.window_sites if "fa4" in w.versions]
    assert any(w.value == "-1" and "-1" in w.values for w in fa4_sites)
    assert any(w.value.startswith("ctx.window_size") for w in fa4_sites)
    assert all(not w.provably_safe for w in fa4_sites if "-1" in w.values)


def test_codemod_patched_2_20_2_is_safe(te, tmp_path):
    """End to end with the patch: the codemod's output passes -- every FA4 binding is wrapped by
    a normaliser proved by behaviour and every FA4-reaching call is proved (exit 0)."""
    from fa4_patch import codemod

    tree = tmp_path / "te"
    shutil.copytree(te("2.20.2"), tree)
    codemod.write(tree, codemod.plan(tree))
    r = audit_tree(tree, package_dir="transformer_engine", use_cache=False)
    assert r.verdict == "safe", [f.message for f in r.findings]
    assert r.wrappers and all(w.trusted for w in r.wrappers)
    assert len([c for c in r.fa4_calls if c.scope != "_fa4_window_wrapper.<locals>.wrapper"]) == 7
    assert all(c.coverage == "covered" for c in r.fa4_calls)


def test_cli_exit_codes(cli):
    """`fa4-audit sites --te 2.20.2` exits 1 (findings); 2.14 exits 0."""
    assert cli("sites", "--te", "2.20.2", "--quiet").code == 1
    assert cli("sites", "--te", "2.14.0", "--quiet").code == 0


@pytest.mark.parametrize("variant", ["any-negative", "exactly-minus-one",
                                     "left-only", "no-split-keys"])
def test_seed_shaped_kwargs_fix(te, tmp_path, variant):
    """Issue 9's done-when on TE 2.20.2: the seed PR's fix shape (a kwargs-dict normaliser per
    entry point, applied inside ``no_torch_dynamo()(...)``, written in tests/fixtures/seedfix)
    is safe with no flags in both spellings ("any negative", "exactly -1"); the copy that
    normalises only the left bound and the copy that ignores window_size_left/right are
    unsafe. Guards against the false alarm on the real fix and the false "safe" on its
    sabotaged copies."""
    from tests.fixtures import seedfix

    tree = tmp_path / "te"
    shutil.copytree(te("2.20.2"), tree)
    seedfix.apply(tree, variant)
    r = audit_tree(tree, package_dir="transformer_engine", use_cache=False)
    want = "safe" if variant in seedfix.SAFE else "unsafe"
    assert r.verdict == want, [f"{f.code} {f.path}:{f.line} {f.message}" for f in r.findings]
    if want == "unsafe":
        # the witness: the wrapper reported untrusted with its counterexample (FA4S004), or a
        # call broken through it with the pair that breaks it
        bad = [f for f in r.findings if f.code == "FA4S004" and f.level == "error"
               and "broken" in f.message and "(-1" in f.message]
        broken = [v for c in r.fa4_calls for v in c.verdicts
                  if v.status == "broken" and "(-1" in (v.witness or "")]
        assert bad or broken, "a sabotaged normaliser must be reported with its counterexample"
