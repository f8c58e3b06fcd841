"""analyzer.bench's own machinery (no timing is asserted anywhere): the scaled trees really hold
N copies, a measured command's exit code and output come back, the snapshot holds the tool."""

from __future__ import annotations

import sys

from analyzer import bench


def _te(tmp_path):
    pkg = tmp_path / "te" / "transformer_engine"
    (pkg / "pytorch").mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    (pkg / "pytorch" / "a.py").write_text("def f():\n    return 2\n")
    return tmp_path / "te"


def test_scaled_tree_holds_n_copies_of_the_code(tmp_path):
    root = _te(tmp_path)
    n1, size1 = bench.py_files(root)
    for n in (1, 2, 4):
        scaled = bench.scaled_tree(root, n, tmp_path / f"s{n}")
        assert bench.py_files(scaled) == (n * n1, n * size1)


def test_run_once_reports_exit_code_last_line_and_memory(tmp_path):
    took, code, rss, last = bench.run_once([sys.executable, "-c", "print('a'); print('b'); "
                                            "raise SystemExit(3)"], env={})
    assert code == 3 and last == "b" and rss > 0 and took > 0


def test_floor_program_parses_every_file(tmp_path):
    root = _te(tmp_path)
    _, code, _, last = bench.run_once([sys.executable, "-c", bench._FLOOR,
                                       str(root / "transformer_engine")], env={})
    assert code == 0 and last == "2 files parsed"


def test_snapshot_is_a_runnable_copy_of_the_tool(tmp_path):
    snap = bench.snapshot(tmp_path / "tool")
    _, code, _, last = bench.run_once([sys.executable, "-c", "import analyzer, fa4_patch, "
                                       "transcriptions; print(analyzer.__file__)"], env={},
                                      cwd=snap)
    assert code == 0 and last.startswith(str(snap))


def test_parse_only_parses_the_files_that_spell_flashattention(tmp_path):
    """Guards against a floor that measures nothing: the bench's "cut after the libcst parse"
    run must go through the CLI and parse exactly the files that spell FlashAttention (and
    fail when one does not parse)."""
    import subprocess
    import sys

    (tmp_path / "a.py").write_text("from flash_attn.cute import flash_attn_func\n")
    (tmp_path / "b.py").write_text("X = 1\n")
    cmd = [sys.executable, "-c", "from analyzer.bench import parse_only; parse_only()",
           "sites", "--tree", str(tmp_path), "--quiet", "--no-cache"]
    got = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert got.stderr.strip().splitlines()[-1] == "parsed 1 files"
    (tmp_path / "c.py").write_text("import flash_attn\ndef f(:\n")
    got = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert got.returncode == 1 and "errors in ['c.py']" in got.stderr
