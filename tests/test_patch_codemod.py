"""fa4_patch.codemod: golden before/after pairs for every import form, after -> after unchanged,
the inserted code judged by what it does (a recording stand-in FA4, every window form), the
tree's own formatter (black with TE's settings), original line numbers in --check/--diff, the
content cache and the parse budget, the CLI's exit codes, and real TE releases 2.15 and 2.20.2
checked by an independent route (``ast`` read-back, ``compile()``, executing the patched block)."""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import io
import itertools
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from fa4_patch import codemod
from fa4_patch.__main__ import main as patch_main
from fa4_patch.codemod import (HELPER_SOURCE, IMPORT_SOURCE, KWARGS_HELPER_SOURCE, CodemodError,
                               Formatter, patch_source)

HELPER = "\n\n" + HELPER_SOURCE + "\n\n"     # as inserted before a top-level statement
# TE's black hook (TransformerEngine/.pre-commit-config.yaml, main, Aug 2026)
TE_PRECOMMIT = """\
repos:
  - repo: https://github.com/psf/black
    rev: 24.4.2
    hooks:
      - id: black
        name: Format python code
        args: [--line-length=100, --preview, --enable-unstable-feature=string_processing]
        types: [python]
"""


def d(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


# (id, path, before, after); "<<HELPER>>" stands for the inserted helpers (two blank lines
# around them), "<<HELPER0>>" for the helpers at the top of the file
GOLDEN = [
    ("from-m-import-f", "transformer_engine/a.py", d("""
        import os
        from flash_attn.cute.interface import flash_attn_func
        x = 1
        """), d("""
        import functools
        import os
        <<HELPER>>from flash_attn.cute.interface import flash_attn_func
        flash_attn_func = _fa4_window_wrapper(flash_attn_func, size_at=7)
        x = 1
        """)),
    ("as-g", "transformer_engine/a.py", d("""
        from flash_attn.cute.interface import flash_attn_varlen_func as g  # keep me
        """), d("""
        <<HELPER0>>from flash_attn.cute.interface import flash_attn_varlen_func as g  # keep me
        g = _fa4_window_wrapper(g, size_at=15)
        """)),
    ("package-reexport", "transformer_engine/a.py", d("""
        from flash_attn.cute import flash_attn_func as fa4
        """), d("""
        <<HELPER0>>from flash_attn.cute import flash_attn_func as fa4
        fa4 = _fa4_window_wrapper(fa4, size_at=7)
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
        import functools
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
            flash_attn_func_v4 = _fa4_window_wrapper(flash_attn_func_v4, size_at=7)
            flash_attn_varlen_func_v4 = _fa4_window_wrapper(flash_attn_varlen_func_v4, size_at=15)

            setup()
        """)),
    ("te-2.20-wrapped-and-self-rebound", "transformer_engine/b.py", d("""
        import functools

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
        import functools

        x = 1
        <<HELPER>>try:
            from flash_attn.cute.interface import (
                flash_attn_func as _flash_attn_func_v4,
                _validate_head_dims as _fa4_validate_head_dims,
                _flash_attn_fwd as _flash_attn_fwd_v4,
            )
            _flash_attn_func_v4 = _fa4_window_wrapper(_flash_attn_func_v4, size_at=7)
            _flash_attn_fwd_v4 = _fa4_window_wrapper(_flash_attn_fwd_v4, left_at=15, right_at=16)
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
        import functools
        import torch
        <<HELPER>>def forward(q, causal):
            if True:
                from flash_attn.cute.interface import _flash_attn_fwd, _flash_attn_bwd
                _flash_attn_fwd = _fa4_window_wrapper(_flash_attn_fwd, left_at=15, right_at=16)
                _flash_attn_bwd = _fa4_window_wrapper(_flash_attn_bwd, left_at=9, right_at=10)

                kwargs = {"window_size_left": -1}
                return _flash_attn_fwd(q, **kwargs)
        """)),
    ("one-line-suite", "transformer_engine/a.py", d("""
        try: from flash_attn.cute.interface import flash_attn_func as f
        except ImportError: f = None
        """), d("""
        <<HELPER0>>try: from flash_attn.cute.interface import flash_attn_func as f; f = _fa4_window_wrapper(f, size_at=7)
        except ImportError: f = None
        """)),
    ("relative-import-inside-flash_attn", "flash_attn/cute/extra.py", d("""
        from .interface import _flash_attn_bwd as bwd
        """), d("""
        <<HELPER0>>from .interface import _flash_attn_bwd as bwd
        bwd = _fa4_window_wrapper(bwd, left_at=9, right_at=10)
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
    return (after.replace("<<HELPER0>>", "import functools\n\n\n" + HELPER_SOURCE + "\n\n")
            .replace("<<HELPER>>", HELPER))


@pytest.mark.parametrize("case", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_golden_before_after(case):
    _, path, before, after = case
    got = patch_source(before, path)
    assert got.after == _expand(after), got.diff()
    compile(got.after, path, "exec")


@pytest.mark.parametrize("case", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_after_is_a_fixed_point(case):
    """Idempotence: patching the patched text changes nothing, in any style."""
    _, path, _, after = case
    for style in codemod.STYLES:
        again = patch_source(_expand(after), path, style=style)
        assert not again.changed, (style, again.diff())


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


def test_inserted_code_reads_as_the_frameworks_own():
    """No mention of this tool, neutral names, short; plain Python only (no imports inside, no
    arithmetic, no dunder access, no inspect): what the behavioural check can run."""
    for src in (HELPER_SOURCE, KWARGS_HELPER_SOURCE):
        low = src.lower()
        assert "fa4_patch" not in low and "fa4-audit" not in low and "fa4_audit" not in low
        assert len(src.splitlines()) <= 45       # the old helpers were 66 lines
        tree = ast.parse(src)
        assert all(isinstance(n, ast.FunctionDef) for n in tree.body)
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.Import, ast.ImportFrom, ast.BinOp, ast.AugAssign,
                                         ast.Lambda, ast.For, ast.While, ast.comprehension))
            if isinstance(node, ast.Attribute):
                assert (ast.unparse(node)) == "functools.wraps"
            if isinstance(node, ast.Compare):   # a constant on one side, or len(args) > index
                sides = [node.left, *node.comparators]
                assert any(isinstance(c, ast.Constant) for c in sides) or \
                    ast.unparse(node.left) == "len(args)", ast.unparse(node)
        calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert calls <= {"isinstance", "len", "list", "functools.wraps", "fn",
                         "_fa4_window_bound", "_fa4_window_size"}, calls


# ----------------------------------------------------------------------------- behaviour

def _helpers(style: str) -> dict:
    ns: dict = {"functools": functools}
    exec(compile(codemod.helper_source(style), f"<{style} helpers>", "exec"), ns)
    return ns


def _recorder(params: list[str]):
    """A stand-in FA4 entry point with ``params`` (FA4's order) that returns what it received."""
    src = (f"def entry({', '.join(p + '=None' for p in params)}):\n"
           f"    return dict({', '.join(f'{p}={p}' for p in params)})\n")
    ns: dict = {}
    exec(src, ns)
    return ns["entry"]


# FA4 b36's leading parameters (enough to reach every window parameter positionally)
B36_PARAMS = {
    "flash_attn_func": ["q", "k", "v", "qv", "gather_kv_indices", "softmax_scale", "causal",
                        "window_size", "learnable_sink"],
    "flash_attn_varlen_func": ["q", "k", "v", "qv", "cu_seqlens_q", "cu_seqlens_k",
                               "max_seqlen_q", "max_seqlen_k", "min_seqlen_k", "seqused_q",
                               "seqused_k", "gather_kv_indices", "page_table", "softmax_scale",
                               "causal", "window_size", "learnable_sink"],
    "_flash_attn_fwd": ["q", "k", "v", "qv", "cu_seqlens_q", "cu_seqlens_k", "seqused_q",
                        "seqused_k", "max_seqlen_q", "max_seqlen_k", "min_seqlen_k",
                        "page_table", "softmax_scale", "causal", "softcap", "window_size_left",
                        "window_size_right", "learnable_sink"],
    "_flash_attn_bwd": ["q", "k", "v", "out", "dout", "lse", "softmax_scale", "causal",
                        "softcap", "window_size_left", "window_size_right", "m_block_size"],
}
BOUNDS = [-(2 ** 40), -129, -2, -1, 0, 1, 7, 128, None]


def _expect(b):
    return None if isinstance(b, int) and b < 0 else b


@pytest.mark.parametrize("entry", sorted(B36_PARAMS))
def test_wrapper_normalises_every_negative_bound_in_every_form(entry):
    """The soundness contract: whatever form a call uses -- window_size as a tuple or a list,
    by keyword or by position; window_size_left/right by keyword or by position -- every
    negative bound reaches FA4 as None and every other bound unchanged."""
    params = B36_PARAMS[entry]
    fn = _helpers("wrapper")["_fa4_window_wrapper"](_recorder(params), **dict(codemod.POSITIONS[entry]))
    for left, right in itertools.product(BOUNDS, BOUNDS):
        if "window_size" in params:
            i = params.index("window_size")
            for make in (tuple, list):
                w = make([left, right])
                want = make([_expect(left), _expect(right)])
                got = fn(*[None] * i, w)["window_size"]
                assert got == want and type(got) is make, (entry, w, "positional")
                got = fn(window_size=w)["window_size"]
                assert got == want and type(got) is make, (entry, w, "keyword")
        else:
            i = params.index("window_size_left")
            got = fn(*[None] * i, left, right)
            assert (got["window_size_left"], got["window_size_right"]) == (_expect(left), _expect(right))
            got = fn(window_size_left=left, window_size_right=right)
            assert (got["window_size_left"], got["window_size_right"]) == (_expect(left), _expect(right))
            got = fn(*[None] * i, left, window_size_right=right)
            assert (got["window_size_left"], got["window_size_right"]) == (_expect(left), _expect(right))


def test_wrapper_leaves_everything_else_alone():
    params = B36_PARAMS["flash_attn_func"]
    fn = _helpers("wrapper")["_fa4_window_wrapper"](_recorder(params), size_at=7)
    got = fn("q", "k", "v", None, None, -0.5, True, (-1, 0), "sink")
    assert got == dict(q="q", k="k", v="v", qv=None, gather_kv_indices=None, softmax_scale=-0.5,
                       causal=True, window_size=(None, 0), learnable_sink="sink")
    # on 4.0.0b3-b8 the slots hold other parameters: a float / tensor-like / tuple of sizes pass
    fwd = _helpers("wrapper")["_fa4_window_wrapper"](_recorder([f"p{i}" for i in range(17)]),
                                                     left_at=15, right_at=16)
    sink, tile = object(), (128, 128)
    got = fwd(*range(15), sink, tile)
    assert got["p15"] is sink and got["p16"] is tile
    assert fn.__name__ == "entry" and fn.__wrapped__ is not None


def test_kwargs_style_is_the_seed_prs_form():
    """The kwargs style rewrites the keyword arguments only (as the seed PR's wrapper did)."""
    params = B36_PARAMS["_flash_attn_fwd"]
    fn = _helpers("kwargs")["_fa4_window_kwargs"](_recorder(params))
    for left, right in itertools.product(BOUNDS, BOUNDS):
        got = fn(window_size_left=left, window_size_right=right)
        assert (got["window_size_left"], got["window_size_right"]) == (_expect(left), _expect(right))
    f = _helpers("kwargs")["_fa4_window_kwargs"](_recorder(B36_PARAMS["flash_attn_func"]))
    assert f(window_size=[-1, 0])["window_size"] == [None, 0]
    got = patch_source("from flash_attn.cute import _flash_attn_fwd as f\n", "transformer_engine/a.py",
                       style="kwargs")
    assert "f = _fa4_window_kwargs(f)" in got.after and "def _fa4_window_kwargs" in got.after
    assert "def _fa4_window_wrapper" not in got.after


@pytest.mark.network
@pytest.mark.parametrize("version", ["4.0.0b9", "4.0.0b36"])
def test_positions_match_the_released_signatures(version):
    """POSITIONS is what FA4's interface.py says (b9 is the first release with these indices)."""
    from analyzer.sources import resolve

    tree = ast.parse((resolve("fa4", version).package_dir / "cute" / "interface.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in codemod.POSITIONS:
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            for key, index in codemod.POSITIONS[node.name]:
                param = {"size_at": "window_size", "left_at": "window_size_left",
                         "right_at": "window_size_right"}[key]
                assert names.index(param) == index, (version, node.name, param)


# ----------------------------------------------------------------------------- helpers

def test_import_mode_imports_fa4_patch_after_the_last_top_level_import():
    before = d("""
        import os
        import sys

        try:
            from flash_attn.cute.interface import flash_attn_func as f
        except ImportError:
            f = None
        """)
    got = patch_source(before, "transformer_engine/a.py", style="import")
    assert got.after == d("""
        import os
        import sys
        from fa4_patch import wrap as _fa4_patch_wrap

        try:
            from flash_attn.cute.interface import flash_attn_func as f
            f = _fa4_patch_wrap(f)
        except ImportError:
            f = None
        """)
    assert IMPORT_SOURCE.strip() in got.after
    assert not patch_source(got.after, "transformer_engine/a.py", style="import").changed
    assert not patch_source(got.after, "transformer_engine/a.py").changed


def test_sabotaged_normaliser_is_restored():
    """A helper whose body no longer maps negatives to None is put back to the canonical code."""
    good = patch_source("from flash_attn.cute.interface import flash_attn_func as f\n",
                        "transformer_engine/a.py").after
    bad = good.replace("    if isinstance(bound, int) and bound < 0:\n        return None\n", "")
    assert bad != good
    got = patch_source(bad, "transformer_engine/a.py")
    assert got.helper == "restored" and got.after == good
    # a docstring edit alone is not a change
    reworded = good.replace("TE spells it -1.", "TE spells it minus one.")
    assert reworded != good and not patch_source(reworded, "transformer_engine/a.py").changed


def test_removed_wrap_line_is_put_back_without_a_second_helper():
    good = patch_source("from flash_attn.cute.interface import flash_attn_func as f\n",
                        "transformer_engine/a.py").after
    bad = good.replace("f = _fa4_window_wrapper(f, size_at=7)\n", "")
    got = patch_source(bad, "transformer_engine/a.py")
    assert got.after == good and got.helper is None
    assert got.after.count("def _fa4_window_wrapper") == 1
    assert got.after.count("import functools") == 1


def test_helper_defined_after_use_is_an_error():
    src = ("import functools\n"
           "from flash_attn.cute.interface import flash_attn_func as f\n"
           "f = _fa4_window_wrapper(f, size_at=7)\n\n\n" + HELPER_SOURCE)
    with pytest.raises(CodemodError, match="after their first use"):
        patch_source(src, "transformer_engine/a.py")


# ----------------------------------------------------------------------------- formatter

def _black_ok(text: str, root: Path) -> bool:
    import black

    return black.format_str(text, mode=codemod._black_mode(codemod.detect_formatter(root))) == text


def test_formatter_detected_from_pre_commit_and_pyproject(tmp_path):
    (tmp_path / ".pre-commit-config.yaml").write_text(TE_PRECOMMIT)
    f = codemod.detect_formatter(tmp_path)
    assert f.tool == "black" and f.pinned == "24.4.2"
    assert dict(f.options) == {"line_length": 100, "preview": True,
                               "enabled_features": ("string_processing",)}
    (tmp_path / ".pre-commit-config.yaml").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 79\n"
                                             "skip-string-normalization = true\n")
    f = codemod.detect_formatter(tmp_path)
    assert dict(f.options) == {"line_length": 79, "string_normalization": False}
    (tmp_path / "pyproject.toml").write_text("[tool.ruff.format]\nquote-style = 'single'\n")
    assert codemod.detect_formatter(tmp_path).tool == "ruff"
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert codemod.detect_formatter(tmp_path).tool == "none"


def test_black_with_the_trees_settings_formats_only_the_changed_lines(tmp_path):
    """A badly formatted module stays badly formatted where the codemod did not touch it; the
    inserted lines come out as black (line length 60 here) would write them."""
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 60\n")
    src = d("""
        import os
        x = [1,2,   3]
        try:
            from flash_attn.cute.interface import _flash_attn_fwd as _flash_attn_fwd_v4
        except ImportError:
            _flash_attn_fwd_v4 = None
        """)
    got = patch_source(src, "transformer_engine/a.py", formatter=codemod.detect_formatter(tmp_path))
    assert "x = [1,2,   3]\n" in got.after                 # untouched line kept as it was
    assert "    _flash_attn_fwd_v4 = _fa4_window_wrapper(\n" in got.after   # 60 columns
    # what black would still change is only ever a line the codemod did not write
    import black

    full = black.format_str(got.after, mode=black.Mode(line_length=60))
    sm = difflib.SequenceMatcher(None, got.after.splitlines(), full.splitlines(), autojunk=False)
    touched = [got.after.splitlines()[i] for op, i1, i2, _, _ in sm.get_opcodes() if op != "equal"
               for i in range(i1, i2)]
    assert touched and set(touched) <= set(src.splitlines()), touched
    assert got.notes and "black" in got.notes[0]


@pytest.mark.network
def test_te_2202_patched_passes_tes_own_black(tmp_path):
    """Issue 12: TE's pre-commit black (args of TE's .pre-commit-config.yaml) passes on the
    patched backends.py; it failed on the old codemod's output (a blank line after imports)."""
    root = _copy_te("2.20.2", tmp_path)
    (root / ".pre-commit-config.yaml").write_text(TE_PRECOMMIT)
    backends = "transformer_engine/pytorch/attention/dot_product_attention/backends.py"
    assert _black_ok((root / backends).read_text(), root)      # the release itself passes
    code, out, err = _run(str(root), "--write", "--no-cache")
    assert code == 0, err
    assert "formatted with black" in err
    assert _black_ok((root / backends).read_text(), root)
    # without the formatter the old failure mode is back: the check above can fail
    plain = _copy_te("2.20.2", tmp_path / "plain")
    (plain / ".pre-commit-config.yaml").write_text(TE_PRECOMMIT)
    assert _run(str(plain), "--write", "--no-format", "--no-cache")[0] == 0
    assert not _black_ok((plain / backends).read_text(), plain)


# ----------------------------------------------------------------------------- lines, cache, speed

def test_check_and_diff_report_lines_of_the_original_file(tmp_path):
    src = "import os\n\n\n" + "x = 1\n" * 30 + d("""
        try:
            from flash_attn.cute.interface import (
                flash_attn_func as f,
                _flash_attn_bwd as b,
            )
        except ImportError:
            f = b = None
        """)
    root = _tree(tmp_path, {"transformer_engine/a.py": src})
    code, out, _ = _run(str(root), "--check")
    assert code == 1
    assert "f (line 36)" in out and "b (line 37)" in out, out       # where they are bound now
    lines = src.splitlines()
    assert lines[35].strip().startswith("flash_attn_func as f") and lines[36].strip().startswith("_flash_attn_bwd")
    code, out, _ = _run(str(root), "--diff")
    # every hunk's '-' side is the original file at the line numbers it names
    hunks, cur = [], None
    for ln in out.splitlines()[2:]:
        if ln.startswith("@@"):
            cur = (int(ln.split()[1].split(",")[0][1:]), [])
            hunks.append(cur)
        elif not ln.startswith("+"):
            cur[1].append(ln[1:])
    assert len(hunks) >= 2
    for start, old_side in hunks:
        assert lines[start - 1:start - 1 + len(old_side)] == old_side, start


def test_dry_run_is_cached_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("FA4_AUDIT_CACHE", str(tmp_path / "cache"))
    root = _tree(tmp_path / "t", {"transformer_engine/a.py":
                                  "from flash_attn.cute.interface import flash_attn_func as f\n"})
    first = codemod.plan(root)
    calls = []
    real = codemod.patch_source
    monkeypatch.setattr(codemod, "patch_source", lambda *a, **k: calls.append(a) or real(*a, **k))
    again = codemod.plan(root)
    assert calls == [] and [p.after for p in again] == [p.after for p in first]
    (root / "transformer_engine/a.py").write_text("from flash_attn.cute import _flash_attn_fwd as g\n")
    changed = codemod.plan(root)
    assert len(calls) == 1 and "g = _fa4_window_wrapper(g, left_at=15, right_at=16)" in changed[0].after
    assert len(list((tmp_path / "cache" / "codemod").glob("*.json"))) == 2


@pytest.mark.network
def test_only_the_statements_it_changes_are_parsed(monkeypatch):
    """TE 2.20.2's backends.py is 114 KB; libcst sees only the FA4 binding block (a few KB)."""
    from analyzer.sources import resolve

    backends = "transformer_engine/pytorch/attention/dot_product_attention/backends.py"
    text = (resolve("te", "2.20.2").root / backends).read_text()
    parsed = []
    real = codemod.cst.parse_module
    monkeypatch.setattr(codemod.cst, "parse_module", lambda s, *a, **k: parsed.append(len(s)) or real(s, *a, **k))
    got = patch_source(text, backends)
    assert got.changed and len(got.wrapped) == 4
    assert sum(parsed) < 5_000 < len(text) // 20, parsed


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
    assert "+f = _fa4_window_wrapper(f, size_at=7)" in out
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
            and stmt.value.func.id == "_fa4_window_wrapper" and len(stmt.value.args) == 1
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

    ns = {"functools": __import__("functools"), "PkgVersion": str, "get_pkg_version": lambda name: "4.0.0b36",
          "PackageNotFoundError": ModuleNotFoundError, "no_torch_dynamo": no_torch_dynamo,
          "fa_utils": types.SimpleNamespace(set_flash_attention_4_params=lambda: None),
          "warnings": __import__("warnings")}
    wanted = [n for n in tree.body
              if (isinstance(n, ast.FunctionDef) and n.name.startswith("_fa4_window_"))
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
                    and isinstance(n.func, ast.Name) and n.func.id == "_fa4_window_wrapper")
    for name in ("_fa4_window_bound", "_fa4_window_size", "_fa4_window_wrapper"):
        assert defs[name].lineno < first_use
    assert "fa4_patch" not in text and "fa4-audit" not in text and "fa4_audit" not in text
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
    assert added[0] == "from fa4_patch import wrap as _fa4_patch_wrap"
    assert len(added) == 5 and "def _fa4_window" not in out


def test_crlf_and_tab_indented_file_keeps_its_style():
    """A CRLF, tab-indented module stays CRLF everywhere (docstrings too) and tab-indented."""
    src = ("import os\r\ntry:\r\n\tfrom flash_attn.cute.interface import flash_attn_func as f\r\n"
           "except ImportError:\r\n\tf = None\r\n")
    got = patch_source(src, "transformer_engine/a.py")
    assert got.after.count("\n") == got.after.count("\r\n")
    assert "\r\n\tf = _fa4_window_wrapper(f, size_at=7)\r\n" in got.after
    compile(got.after, "a.py", "exec")
    assert not patch_source(got.after, "transformer_engine/a.py").changed


def test_ruff_format_runs_on_the_changed_range_only(tmp_path, monkeypatch):
    """A tree that uses ruff-format gets `ruff format --range START-END` on the inserted lines,
    with the file's own path (so ruff reads the tree's settings); a failing ruff is exit 2."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff.format]\nquote-style = 'double'\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "ruff.log"
    ruff = bindir / "ruff"
    ruff.write_text("#!/bin/sh\n"
                    f"echo \"$@\" >> {log}\n"
                    "if [ \"$1\" = \"--version\" ]; then echo 'ruff 0.0.0-stub'; exit 0; fi\n"
                    "cat\n")
    ruff.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    fmt = codemod.detect_formatter(tmp_path)
    assert fmt.tool == "ruff"
    src = "x = 1\ntry:\n    from flash_attn.cute import flash_attn_func as f\nexcept ImportError:\n    f = None\n"
    got = patch_source(src, "transformer_engine/a.py", formatter=fmt)
    calls = [ln.split() for ln in log.read_text().splitlines() if ln.startswith("format")]
    assert calls and all(c[:2] == ["format", "--range"] and c[-1] == "-" for c in calls)
    assert all(c[3] == "--stdin-filename" and c[4].endswith("transformer_engine/a.py") for c in calls)
    first, last = map(int, calls[-1][2].split("-"))
    assert got.after.splitlines()[first - 1:last] and "f = _fa4_window_wrapper(f, size_at=7)" in got.after
    assert any("ruff" in n for n in got.notes)
    ruff.write_text("#!/bin/sh\necho 'error: bad config' >&2\nexit 2\n")
    with pytest.raises(CodemodError, match="ruff format failed: error: bad config"):
        patch_source(src, "transformer_engine/a.py", formatter=fmt)
