"""Closing the loop: TE 2.20.2 patched by ``python -m fa4_patch --write`` is judged safe by the
call-site pass (``analyzer.sites.audit_tree``), and every planted regression flips it back.

Mutations are planted in a copy of the PATCHED tree, one at a time, found by structure (ast),
never by line number; each must turn the verdict from "safe" to "unsafe" or "unknown" (both
fail the gate) with a finding.
The kill count is printed (``pytest -s``) and must be total.
"""

from __future__ import annotations

import ast
import io
import shutil
from pathlib import Path

import pytest

from fa4_patch.__main__ import main as patch_main

pytestmark = pytest.mark.network

BACKENDS = "transformer_engine/pytorch/attention/dot_product_attention/backends.py"
CP = "transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py"
FA4_BINDINGS = ("_flash_attn_func_v4", "_flash_attn_varlen_func_v4", "_flash_attn_fwd_v4",
                "_flash_attn_bwd_v4")


def _sites():
    sites = pytest.importorskip(
        "analyzer.sites", reason="the call-site pass (analyzer.sites) is not in this checkout")
    if not hasattr(sites, "audit_tree"):
        pytest.skip("analyzer.sites.audit_tree is not there yet")
    return sites


def _patch(root: Path, *extra) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = patch_main([str(root), "--write", *extra], out, err)
    assert code == 0, err.getvalue()
    return out.getvalue()


@pytest.fixture(scope="module")
def patched_tree(tmp_path_factory):
    from analyzer.sources import resolve

    src = resolve("te", "2.20.2")
    root = tmp_path_factory.mktemp("te-2.20.2-patched")
    shutil.copytree(src.package_dir, root / "transformer_engine")
    _patch(root)
    return root


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _segment_lines(text: str, node: ast.AST) -> tuple[int, int]:
    return node.lineno - 1, node.end_lineno


# ----------------------------------------------------------------------------- mutations
# each: (id, {relative path: new text or a function old_text -> new_text})

def remove_wrap_of(name):
    def mutate(text: str) -> str:
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name)
                    and node.value.func.id == "_fa4_window_wrapper"
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name):
                lines = _lines(text)
                a, b = _segment_lines(text, node)
                return "".join(lines[:a] + lines[b:])
        raise AssertionError(f"no wrap line for {name}")
    return mutate


NEW_MODULE = '''\
"""A new module that calls FA4 directly with TE's causal window."""
from flash_attn.cute.interface import flash_attn_func


def direct_attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))
'''


def cp_helper_imports_fa4(text: str) -> str:
    """Replace the first function-local re-import of the wrapped `_flash_attn_fwd_v4` in
    context_parallel.py by an import straight from flash_attn.cute.interface."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if (isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("backends")
                and [a.name for a in node.names] == ["_flash_attn_fwd_v4"]):
            lines = _lines(text)
            a, b = _segment_lines(text, node)
            indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
            new = f"{indent}from flash_attn.cute.interface import _flash_attn_fwd as _flash_attn_fwd_v4\n"
            return "".join(lines[:a] + [new] + lines[b:])
    raise AssertionError("no function-local import of _flash_attn_fwd_v4 in context_parallel.py")


def unwrapped_alias_with_literal(text: str) -> str:
    """Next to the wrapped bindings, a second, unwrapped alias, called with a literal -1."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if (isinstance(node, ast.ImportFrom) and node.module == "flash_attn.cute.interface"):
            lines = _lines(text)
            a, b = _segment_lines(text, node)
            indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
            new = f"{indent}from flash_attn.cute.interface import _flash_attn_fwd as _fa4_raw_fwd\n"
            probe = ("\n\ndef _fa4_probe(q, k, v):\n"
                     "    return _fa4_raw_fwd(q, k, v, causal=True, window_size_left=-1, "
                     "window_size_right=0)\n")
            return "".join(lines[:b] + [new] + lines[b:]) + probe
    raise AssertionError("no FA4 import in backends.py")


def sabotage_normaliser(body: str):
    """Replace the body of the codemod's bound normaliser (``_fa4_window_bound``)."""
    def mutate(text: str) -> str:
        tree = ast.parse(text)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "_fa4_window_bound":
                lines = _lines(text)
                a, b = node.lineno - 1, node.end_lineno
                new = f"def _fa4_window_bound(bound):\n{body}"
                return "".join(lines[:a] + [new] + lines[b:])
        raise AssertionError("no _fa4_window_bound in backends.py")
    return mutate


MUTATIONS = [
    *[(f"wrapper-removed-{n}", {BACKENDS: remove_wrap_of(n)}) for n in FA4_BINDINGS],
    ("new-module-calls-fa4-directly", {"transformer_engine/pytorch/fa4_direct.py": NEW_MODULE}),
    ("cp-helper-imports-flash_attn.cute", {CP: cp_helper_imports_fa4}),
    ("literal-minus-1-to-unwrapped-alias", {BACKENDS: unwrapped_alias_with_literal}),
    ("normaliser-returns-inputs", {BACKENDS: sabotage_normaliser("    return bound\n")}),
    ("normaliser-maps-to-zero", {BACKENDS: sabotage_normaliser(
        "    if isinstance(bound, int) and bound < 0:\n        return 0\n    return bound\n")}),
]


def _apply(root: Path, mutation: dict) -> dict[Path, str | None]:
    """Plant a mutation; returns what to restore (None: delete the new file)."""
    saved: dict[Path, str | None] = {}
    for rel, change in mutation.items():
        p = root / rel
        saved[p] = p.read_text() if p.exists() else None
        new = change(saved[p]) if callable(change) else change
        assert new != saved[p], f"mutation of {rel} changed nothing"
        p.write_text(new)
    return saved


def _restore(saved: dict[Path, str | None]) -> None:
    for p, text in saved.items():
        if text is None:
            p.unlink()
        else:
            p.write_text(text)


def test_unpatched_2202_is_unsafe(tmp_path):
    """The premise: before the codemod, the pass reports the FA4 bindings/calls."""
    sites = _sites()
    from analyzer.sources import resolve

    rep = sites.audit_tree(resolve("te", "2.20.2").root)
    assert rep.verdict == "unsafe" and rep.findings


def test_patched_2202_is_safe_with_no_finding_and_a_second_write_changes_nothing(patched_tree):
    sites = _sites()
    rep = sites.audit_tree(patched_tree)
    assert rep.verdict == "safe", [f.location() + " " + f.code + " " + f.message
                                   for f in rep.findings]
    assert not [f for f in rep.findings if f.level != "note"]
    before = {p: p.read_bytes() for p in patched_tree.rglob("*.py")}
    assert _patch(patched_tree) == ""
    assert {p: p.read_bytes() for p in patched_tree.rglob("*.py")} == before


def test_every_planted_regression_flips_the_verdict(patched_tree, capsys):
    sites = _sites()
    assert sites.audit_tree(patched_tree).verdict == "safe"
    killed, survived = [], []
    for ident, mutation in MUTATIONS:
        saved = _apply(patched_tree, mutation)
        try:
            rep = sites.audit_tree(patched_tree)
        finally:
            _restore(saved)
        # unknown fails the gate as unsafe does (exit 1); either, with its finding, kills
        codes = sorted({f.code for f in rep.findings if f.level in ("error", "unknown")})
        (killed if rep.verdict in ("unsafe", "unknown") and codes else survived).append(
            (ident, rep.verdict, codes))
    assert sites.audit_tree(patched_tree).verdict == "safe"   # restored cleanly
    with capsys.disabled():
        print(f"\nmutation test: killed {len(killed)}/{len(MUTATIONS)}")
        for ident, verdict, codes in killed + survived:
            print(f"  {'killed  ' if (ident, verdict, codes) in killed else 'SURVIVED'} "
                  f"{ident}: {verdict} {', '.join(codes)}")
    assert not survived, survived


def test_import_mode_patch_is_safe_too(tmp_path):
    """--import: the tree imports fa4_patch.wrap; the pass trusts it after running
    fa4_patch.normalize.normalize_pair in its sandbox."""
    sites = _sites()
    from analyzer.sources import resolve

    root = tmp_path / "te"
    shutil.copytree(resolve("te", "2.20.2").package_dir, root / "transformer_engine")
    _patch(root, "--import")
    rep = sites.audit_tree(root)
    assert rep.verdict == "safe", [f"{f.location()} {f.code} {f.message}" for f in rep.findings]


def test_kwargs_style_patch_is_safe_too(tmp_path):
    """--style kwargs (the seed PR's form: the keyword arguments are normalised) on TE 2.20.2,
    which passes every window by keyword: judged safe by what the wrapper does."""
    sites = _sites()
    from analyzer.sources import resolve

    root = tmp_path / "te"
    shutil.copytree(resolve("te", "2.20.2").package_dir, root / "transformer_engine")
    _patch(root, "--style", "kwargs")
    rep = sites.audit_tree(root)
    assert rep.verdict == "safe", [f"{f.location()} {f.code} {f.message}" for f in rep.findings]
