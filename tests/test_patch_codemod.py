"""fa4_patch.codemod: golden before/after pairs for every import form, after -> after unchanged,
the CLI's exit codes, and real TE releases 2.15 and 2.20.2 checked by an independent route
(``ast`` read-back, ``compile()``, and executing the patched FA4 block against a fake FA4)."""

from __future__ import annotations

import ast
import difflib
import hashlib
import io
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from fa4_patch.__main__ import main as patch_main
from fa4_patch.codemod import CodemodError, HELPER_SOURCE, IMPORT_SOURCE, patch_source

HELPER = "\n\n" + HELPER_SOURCE + "\n\n"     # as inserted before a top-level statement


def d(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


# (id, path, before, after); "<<HELPER>>" stands for the inserted self-contained helpers
GOLDEN = [
    ("from-m-import-f", "transformer_engine/a.py", d("""
        import os
        from flash_attn.cute.interface import flash_attn_func
        x = 1
        """), d("""
        import os
        <<HELPER>>from flash_attn.cute.interface import flash_attn_func
        flash_attn_func = _fa4_audit_wrap(flash_attn_func)
        x = 1
        """)),
    ("as-g", "transformer_engine/a.py", d("""
        from flash_attn.cute.interface import flash_attn_varlen_func as g  # keep me
        """), d("""
        <<HELPER0>>from flash_attn.cute.interface import flash_attn_varlen_func as g  # keep me
        g = _fa4_audit_wrap(g)
        """)),
    ("package-reexport", "transformer_engine/a.py", d("""
        from flash_attn.cute import flash_attn_func as fa4
        """), d("""
        <<HELPER0>>from flash_attn.cute import flash_attn_func as fa4
        fa4 = _fa4_audit_wrap(fa4)
        """)),
    ("te-2.15-else-block", "transformer_engine/b.py", d("""
        import sys

        # Try to import Flash Attention v4
        try:
            v = get("flash-attn-4")
        except PackageNotFoundError:
            flash_attn_func_v4 = None
            flash_attn_varlen_func_v4 = None
        else:
            from flash_attn.cute.interface import (  # pylint: disable=ungrouped-imports
                flash_attn_func as flash_attn_func_v4,
                flash_attn_varlen_func as flash_attn_varlen_func_v4,
            )

            setup()
        """), d("""
        import sys
        <<HELPER>># Try to import Flash Attention v4
        try:
            v = get("flash-attn-4")
        except PackageNotFoundError:
            flash_attn_func_v4 = None
            flash_attn_varlen_func_v4 = None
        else:
            from flash_attn.cute.interface import (  # pylint: disable=ungrouped-imports
                flash_attn_func as flash_attn_func_v4,
                flash_attn_varlen_func as flash_attn_varlen_func_v4,
            )
            flash_attn_func_v4 = _fa4_audit_wrap(flash_attn_func_v4)
            flash_attn_varlen_func_v4 = _fa4_audit_wrap(flash_attn_varlen_func_v4)

            setup()
        """)),
    ("te-2.20-wrapped-and-self-rebound", "transformer_engine/b.py", d("""
        x = 1

        try:
            from flash_attn.cute.interface import (
                flash_attn_func as _flash_attn_func_v4,
                _validate_head_dims as _fa4_validate_head_dims,
                _flash_attn_fwd as _flash_attn_fwd_v4,
            )
        except ImportError:
            flash_attn_func_v4 = None
            _flash_attn_fwd_v4 = None
        else:
            flash_attn_func_v4 = no_torch_dynamo()(_flash_attn_func_v4)
            _flash_attn_fwd_v4 = no_torch_dynamo()(_flash_attn_fwd_v4)
        """), d("""
        x = 1
        <<HELPER>>try:
            from flash_attn.cute.interface import (
                flash_attn_func as _flash_attn_func_v4,
                _validate_head_dims as _fa4_validate_head_dims,
                _flash_attn_fwd as _flash_attn_fwd_v4,
            )
            _flash_attn_func_v4 = _fa4_audit_wrap(_flash_attn_func_v4)
            _flash_attn_fwd_v4 = _fa4_audit_wrap(_flash_attn_fwd_v4)
        except ImportError:
            flash_attn_func_v4 = None
            _flash_attn_fwd_v4 = None
        else:
            flash_attn_func_v4 = no_torch_dynamo()(_flash_attn_func_v4)
            _flash_attn_fwd_v4 = no_torch_dynamo()(_flash_attn_fwd_v4)
        """)),
    ("function-local-import-cp-helper", "transformer_engine/cp.py", d("""
        import torch


        def forward(q, causal):
            if True:
                from flash_attn.cute.interface import _flash_attn_fwd, _flash_attn_bwd

                kwargs = {"window_size_left": -1}
                return _flash_attn_fwd(q, **kwargs)
        """), d("""
        import torch
        <<HELPER>>def forward(q, causal):
            if True:
                from flash_attn.cute.interface import _flash_attn_fwd, _flash_attn_bwd
                _flash_attn_fwd = _fa4_audit_wrap(_flash_attn_fwd)
                _flash_attn_bwd = _fa4_audit_wrap(_flash_attn_bwd)

                kwargs = {"window_size_left": -1}
                return _flash_attn_fwd(q, **kwargs)
        """)),
    ("one-line-suite", "transformer_engine/a.py", d("""
        try: from flash_attn.cute.interface import flash_attn_func as f
        except ImportError: f = None
        """), d("""
        <<HELPER0>>try: from flash_attn.cute.interface import flash_attn_func as f; f = _fa4_audit_wrap(f)
        except ImportError: f = None
        """)),
    ("relative-import-inside-flash_attn", "flash_attn/cute/extra.py", d("""
        from .interface import _flash_attn_bwd as bwd
        """), d("""
        <<HELPER0>>from .interface import _flash_attn_bwd as bwd
        bwd = _fa4_audit_wrap(bwd)
        """)),
]

# files the codemod must leave byte-for-byte alone
UNCHANGED = [
    ("relative-reimport-of-a-wrapped-binding", "transformer_engine/pytorch/cp.py", d("""
        def f():
            from .backends import _flash_attn_fwd_v4
            from ..attention.backends import flash_attn_func_v4 as g
            return g
        """)),
    ("fa2-and-fa3-name-traps", "transformer_engine/a.py", d("""
        from flash_attn import flash_attn_func
        from flash_attn.flash_attn_interface import _flash_attn_forward as _flash_attn_fwd
        from flash_attn_interface import flash_attn_func as flash_attn_func_v3
        from flash_attn_interface import _flash_attn_forward as _flash_attn_fwd_v3
        flash_attn_func_v4 = None  # a name is not an origin
        """)),
    ("fa4-but-not-an-entry-point", "transformer_engine/a.py", d("""
        from flash_attn.cute.interface import _validate_head_dims as v
        from flash_attn.cute import utils
        import flash_attn.cute.interface as fai
        ok = fai._validate_head_dims
        """)),
    ("comment-and-string-mentions", "transformer_engine/a.py", d("""
        # calls flash_attn.cute.interface._flash_attn_fwd
        DOC = "from flash_attn.cute.interface import flash_attn_func"
        """)),
    ("hand-wrapped-with-fa4_patch", "transformer_engine/a.py", d("""
        import fa4_patch
        from fa4_patch import wrap as w
        from flash_attn.cute.interface import flash_attn_func as f, _flash_attn_fwd as g
        f = fa4_patch.wrap(f)
        g = w(no_torch_dynamo()(g))
        """)),
]

REFUSED = [
    ("import-m-attribute-use", d("""
        import flash_attn.cute.interface
        out = flash_attn.cute.interface.flash_attn_func(q, k, v, window_size=(-1, 0))
        """), "2:7", "module attribute"),
    ("import-m-as-alias", d("""
        import flash_attn.cute.interface as fai

        def f():
            return fai._flash_attn_fwd
        """), "4:12", "module attribute"),
    ("from-package-import-module", d("""
        from flash_attn import cute
        f = cute.flash_attn_varlen_func
        """), "2:5", "module attribute"),
    ("star", "from flash_attn.cute.interface import *\n", "1:1", "star import"),
    ("dynamic", 'import importlib\nm = importlib.import_module("flash_attn.cute.interface")\n',
     "2:5", "dynamic import"),
    ("syntax-error", "def f(:\n    pass\n", "1:", "cannot parse"),
    ("same-line", "from flash_attn.cute.interface import flash_attn_func as f; f(1)\n", "",
     "same line"),
]


def _expand(after: str) -> str:
    return after.replace("<<HELPER0>>", HELPER_SOURCE + "\n\n").replace("<<HELPER>>", HELPER)


@pytest.mark.parametrize("case", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_golden_before_after(case):
    _, path, before, after = case
    got = patch_source(before, path)
    assert got.after == _expand(after), got.diff()
    compile(got.after, path, "exec")


@pytest.mark.parametrize("case", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_after_is_a_fixed_point(case):
    """Idempotence: patching the patched text changes nothing."""
    _, path, _, after = case
    again = patch_source(_expand(after), path)
    assert not again.changed, again.diff()


@pytest.mark.parametrize("case", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_smallest_diff_only_inserts_lines(case):
    """Formatting preserved: every original line survives, in order (one-line suites aside)."""
    _, path, before, _ = case
    got = patch_source(before, path)
    ops = difflib.SequenceMatcher(a=before.splitlines(), b=got.after.splitlines(),
                                  autojunk=False).get_opcodes()
    kinds = {op for op, *_ in ops}
    if case[0] == "one-line-suite":
        assert kinds <= {"equal", "insert", "replace"}
    else:
        assert kinds <= {"equal", "insert"}, ops


@pytest.mark.parametrize("case", UNCHANGED, ids=[c[0] for c in UNCHANGED])
def test_left_alone(case):
    _, path, before = case
    got = patch_source(before, path)
    assert not got.changed, got.diff()


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_with_a_one_line_error(case):
    _, source, where, words = case
    with pytest.raises(CodemodError) as info:
        patch_source(source, "transformer_engine/x.py")
    msg = str(info.value)
    assert "\n" not in msg and words in msg
    assert msg.startswith(f"transformer_engine/x.py:{where}")


def test_import_mode_imports_fa4_patch_after_the_last_top_level_import():
    before = d("""
        import os
        import sys

        try:
            from flash_attn.cute.interface import flash_attn_func as f
        except ImportError:
            f = None
        """)
    got = patch_source(before, "transformer_engine/a.py", mode="import")
    assert got.after == d("""
        import os
        import sys
        from fa4_patch import wrap as _fa4_audit_wrap

        try:
            from flash_attn.cute.interface import flash_attn_func as f
            f = _fa4_audit_wrap(f)
        except ImportError:
            f = None
        """)
    assert IMPORT_SOURCE.strip() in got.after
    assert not patch_source(got.after, "transformer_engine/a.py", mode="import").changed
    assert not patch_source(got.after, "transformer_engine/a.py").changed


def test_sabotaged_normaliser_is_restored():
    """A helper whose body no longer maps negatives to None is put back to the canonical code."""
    good = patch_source("from flash_attn.cute.interface import flash_attn_func as f\n",
                        "transformer_engine/a.py").after
    bad = good.replace("        if left < 0:\n            left = None\n", "")
    assert bad != good
    got = patch_source(bad, "transformer_engine/a.py")
    assert got.helper == "restored" and got.after == good
    # a docstring edit alone is not a change
    reworded = good.replace("Added by fa4_patch:", "Added by a bot:")
    assert not patch_source(reworded, "transformer_engine/a.py").changed


def test_removed_wrap_line_is_put_back_without_a_second_helper():
    good = patch_source("from flash_attn.cute.interface import flash_attn_func as f\n",
                        "transformer_engine/a.py").after
    bad = good.replace("f = _fa4_audit_wrap(f)\n", "")
    got = patch_source(bad, "transformer_engine/a.py")
    assert got.after == good and got.helper is None
    assert got.after.count("def _fa4_audit_wrap") == 1


def test_helper_defined_after_use_is_an_error():
    src = ("from flash_attn.cute.interface import flash_attn_func as f\n"
           "f = _fa4_audit_wrap(f)\n\n\n" + HELPER_SOURCE)
    with pytest.raises(CodemodError, match="after the first use"):
        patch_source(src, "transformer_engine/a.py")


# ----------------------------------------------------------------------------- CLI

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = patch_main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_cli_check_diff_write_exit_codes(tmp_path):
    root = _tree(tmp_path, {
        "transformer_engine/__init__.py": "",
        "transformer_engine/backends.py": "from flash_attn.cute.interface import "
                                          "flash_attn_func as f\n",
        "transformer_engine/other.py": "x = 1\n",
    })
    code, out, err = _run(str(root), "--check")
    assert code == 1 and "transformer_engine/backends.py" in out and "need a change" in err
    code, out, _ = _run(str(root), "--diff")
    assert code == 1 and out.startswith("--- a/transformer_engine/backends.py")
    assert "+f = _fa4_audit_wrap(f)" in out
    code, out, _ = _run(str(root), "--write")
    assert code == 0 and "patched transformer_engine/backends.py" in out
    assert _run(str(root), "--check")[0] == 0
    code, out, err = _run(str(root), "--diff")
    assert code == 0 and out == "" and "nothing to change" in err
    # the package folder itself is accepted too
    assert _run(str(root / "transformer_engine"), "--check")[0] == 0


def test_cli_errors_are_one_line_exit_2_and_write_nothing(tmp_path):
    root = _tree(tmp_path, {
        "transformer_engine/a.py": "from flash_attn.cute.interface import flash_attn_func\n",
        "transformer_engine/b.py": "import flash_attn.cute.interface as m\nm.flash_attn_func\n",
    })
    before = (root / "transformer_engine/a.py").read_text()
    code, out, err = _run(str(root), "--write")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fa4_patch: error: transformer_engine/b.py:2:1")
    assert (root / "transformer_engine/a.py").read_text() == before
    code, _, err = _run(str(tmp_path / "nowhere"), "--check")
    assert code == 2 and "no such folder" in err
    code, _, err = _run(str(tmp_path / "transformer_engine"), "--check")
    assert code == 2


def test_cli_usage_errors_exit_2(capsys):
    assert _run("--check")[0] == 2
    assert _run("x", "--check", "--write")[0] == 2


def test_cli_subprocess(tmp_path):
    root = _tree(tmp_path, {"transformer_engine/a.py":
                            "from flash_attn.cute import flash_attn_func\n"})
    r = subprocess.run([sys.executable, "-m", "fa4_patch", str(root), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "would patch transformer_engine/a.py" in r.stdout
    r = subprocess.run([sys.executable, "-m", "fa4_patch", "--help"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "exit status" in r.stdout


# ----------------------------------------------------------------------------- real TE

def _copy_te(version: str, tmp_path: Path) -> Path:
    from analyzer.sources import resolve

    src = resolve("te", version)
    dst = tmp_path / f"te-{version}"
    shutil.copytree(src.package_dir, dst / "transformer_engine")
    return dst


def _digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.py"))}


def _fa4_bindings_by_ast(tree: ast.Module):
    """Independent of the codemod: (import node, local name, enclosing body) for every import
    of an FA4 entry point from flash_attn.cute(.interface)."""
    out = []
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(parent, field, None)
            if not isinstance(body, list):
                continue
            for i, node in enumerate(body):
                if (isinstance(node, ast.ImportFrom) and node.level == 0
                        and node.module in ("flash_attn.cute", "flash_attn.cute.interface")):
                    for a in node.names:
                        if a.name in ("flash_attn_func", "flash_attn_varlen_func",
                                      "_flash_attn_fwd", "_flash_attn_bwd"):
                            out.append((node, a.asname or a.name, body[i + 1:]))
    return out


def _is_wrap_of(stmt: ast.stmt, name: str) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name
            and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id == "_fa4_audit_wrap" and len(stmt.value.args) == 1
            and isinstance(stmt.value.args[0], ast.Name) and stmt.value.args[0].id == name)


def _fake_fa4_module():
    m = types.ModuleType("flash_attn.cute.interface")
    exec(d('''
        def flash_attn_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None,
                            causal=False, window_size=(None, None), learnable_sink=None):
            return window_size
        def flash_attn_varlen_func(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None,
                                   max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
                                   seqused_q=None, seqused_k=None, gather_kv_indices=None,
                                   page_table=None, softmax_scale=None, causal=False,
                                   window_size=(None, None)):
            return window_size
        def _flash_attn_fwd(q, k, v, causal=False, window_size_left=None, window_size_right=None):
            return (window_size_left, window_size_right)
        def _flash_attn_bwd(q, k, v, out, dout, lse, softmax_scale=None, causal=False,
                            softcap=0.0, window_size_left=None, window_size_right=None):
            return (window_size_left, window_size_right)
        def _validate_head_dims(*a):
            return True
        '''), m.__dict__)
    return m


def _run_patched_fa4_block(patched: str, monkeypatch) -> dict:
    """Execute the helper defs and the top-level statement holding the FA4 import, with a fake
    FA4 in sys.modules and stubs for TE's names: the namespace TE's backends would hold."""
    tree = ast.parse(patched)
    fa4 = _fake_fa4_module()
    monkeypatch.setitem(sys.modules, "flash_attn.cute.interface", fa4)
    monkeypatch.setitem(sys.modules, "flash_attn.cute", types.ModuleType("flash_attn.cute"))
    monkeypatch.setitem(sys.modules, "flash_attn", types.ModuleType("flash_attn"))

    def no_torch_dynamo():
        import functools

        def deco(f):
            @functools.wraps(f)
            def inner(*a, **k):
                return f(*a, **k)
            return inner
        return deco

    ns = {"PkgVersion": str, "get_pkg_version": lambda name: "4.0.0b36",
          "PackageNotFoundError": ModuleNotFoundError, "no_torch_dynamo": no_torch_dynamo,
          "fa_utils": types.SimpleNamespace(set_flash_attention_4_params=lambda: None),
          "warnings": __import__("warnings")}
    wanted = [n for n in tree.body
              if (isinstance(n, ast.FunctionDef) and n.name.startswith("_fa4_audit_"))
              or any(isinstance(x, ast.ImportFrom) and x.module == "flash_attn.cute.interface"
                     for x in ast.walk(n))]
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "<patched>", "exec"), ns)
    return ns


@pytest.mark.network
@pytest.mark.parametrize("version,names", [
    ("2.15.0", ["flash_attn_func_v4", "flash_attn_varlen_func_v4"]),
    ("2.20.2", ["_flash_attn_func_v4", "_flash_attn_varlen_func_v4", "_flash_attn_fwd_v4",
                "_flash_attn_bwd_v4"]),
])
def test_real_te_release(version, names, tmp_path, monkeypatch):
    root = _copy_te(version, tmp_path)
    before = _digest(root)
    code, out, err = _run(str(root), "--write")
    assert code == 0, err
    after = _digest(root)
    changed = sorted(k for k in after if before[k] != after[k])
    backends = "transformer_engine/pytorch/attention/dot_product_attention/backends.py"
    assert changed == [backends]
    text = (root / backends).read_text()
    compile(text, backends, "exec")
    # independent read-back: every FA4 binding is followed by its wrap in the same block
    tree = ast.parse(text)
    found = _fa4_bindings_by_ast(tree)
    assert sorted(n for _, n, _ in found) == sorted(names)
    for node, name, rest in found:
        assert any(_is_wrap_of(s, name) for s in rest), name
    # helpers at module level, canonical, before their first use
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    first_use = min(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name) and n.func.id == "_fa4_audit_wrap")
    for name in ("_fa4_audit_normalize_pair", "_fa4_audit_wrap"):
        assert defs[name].lineno < first_use
    # only insertions
    from analyzer.sources import resolve
    original = (resolve("te", version).root / backends).read_text()
    ops = difflib.SequenceMatcher(a=original.splitlines(), b=text.splitlines(),
                                  autojunk=False).get_opcodes()
    assert {op for op, *_ in ops} <= {"equal", "insert"}
    # second --write changes nothing
    assert _run(str(root), "--write")[0] == 0
    assert _digest(root) == after
    assert _run(str(root), "--check")[0] == 0
    # the patched code runs: TE's names now normalise what they pass to (fake) FA4
    ns = _run_patched_fa4_block(text, monkeypatch)
    public = "flash_attn_func_v4"
    assert ns[public]("q", "k", "v", causal=True, window_size=(-1, 0)) == (None, 0)
    assert ns[public]("q", "k", "v", None, None, 0.1, True, (-1, -1)) == (None, None)
    assert ns["flash_attn_varlen_func_v4"]("q", "k", "v", window_size=[128, -1]) == [128, None]
    if version == "2.20.2":
        assert ns["_flash_attn_fwd_v4"]("q", "k", "v", causal=True, window_size_left=-1,
                                        window_size_right=0) == (None, 0)
        assert ns["_flash_attn_bwd_v4"]("q", "k", "v", "o", "do", "lse", 0.1, True, 0.0, -1,
                                        -1) == (None, None)


@pytest.mark.network
def test_real_te_2202_import_mode(tmp_path):
    root = _copy_te("2.20.2", tmp_path)
    code, out, err = _run(str(root), "--diff", "--import")
    assert code == 1
    added = [l[1:] for l in out.splitlines() if l.startswith("+") and not l.startswith("+++")]
    assert added[0] == "from fa4_patch import wrap as _fa4_audit_wrap"
    assert len(added) == 5 and "def _fa4_audit_wrap" not in out


def test_crlf_and_tab_indented_file_keeps_its_style():
    """A CRLF, tab-indented module stays CRLF everywhere (docstrings too) and tab-indented."""
    src = ("import os\r\ntry:\r\n\tfrom flash_attn.cute.interface import flash_attn_func as f\r\n"
           "except ImportError:\r\n\tf = None\r\n")
    got = patch_source(src, "transformer_engine/a.py")
    assert got.after.count("\n") == got.after.count("\r\n")
    assert "\r\n\tf = _fa4_audit_wrap(f)\r\n" in got.after
    compile(got.after, "a.py", "exec")
    assert not patch_source(got.after, "transformer_engine/a.py").changed
