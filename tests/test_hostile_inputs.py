"""Issue 6 item 1: bad input never gives a wrong answer.

Every hostile input goes through the real CLI (``analyzer.cli.main`` in-process, and one real
``python -m analyzer`` subprocess). Each must end in exit 2 with exactly one
``fa4-audit: error:`` line on stderr and no traceback -- or, where the input is legitimately
analysable, in the right answer. Never exit 0 / "safe" on what was not seen.

The FA4 and TE trees are written here (my own imitations of the layouts, not copied code):
an FA4 tree holds ``flash_attn/cute/interface.py`` with ``_flash_attn_fwd/_bwd`` calling a
resolver; a TE tree holds ``transformer_engine/__init__.py``, a ``check_set_window_size`` and
one FA4 call that passes TE's ``-1`` sentinels unnormalised.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable

# ----------------------------------------------------------------------------- tree writers

# the post-#2490 rule in my own words: both sides negative -> unbounded, then causal pins R=0
POST_RULE = '''
def _window_state(is_causal, lo, hi, mask_mod=None):
    if mask_mod is not None:
        return False, False, lo, hi
    if lo is not None and hi is not None and lo < 0 and hi < 0:
        lo, hi = None, None
    if is_causal:
        hi = 0
    if lo is None and hi is None:
        return is_causal, False, None, None
    if lo is None and hi == 0:
        return True, False, None, None
    return False, True, lo, hi
'''

# the pre-#2490 rule: causal first, then a negative sum widens to unbounded
PRE_RULE = POST_RULE.replace(
    "    if lo is not None and hi is not None and lo < 0 and hi < 0:\n"
    "        lo, hi = None, None\n    if is_causal:\n        hi = 0\n",
    "    if is_causal:\n        hi = 0\n"
    "    if lo is not None and hi is not None and lo + hi < 0:\n        lo, hi = None, None\n")
assert PRE_RULE != POST_RULE

ENTRY_POINTS = '''

def _flash_attn_fwd(q, k, v, causal=False, window_size_left=None, window_size_right=None,
                    mask_mod=None):
    causal, local, window_size_left, window_size_right = {callee}(
        causal, window_size_left, window_size_right, mask_mod)
    return q


def _flash_attn_bwd(q, k, v, out, dout, lse, causal=False, window_size_left=None,
                    window_size_right=None):
    causal, local, window_size_left, window_size_right = {callee}(
        causal, window_size_left, window_size_right)
    return q
'''


def write_fa4(root: Path, interface: str | None = None, *, rule: str = POST_RULE,
              callee: str = "_window_state", extra: dict[str, str | bytes] | None = None) -> Path:
    """An FA4-like tree at ``root`` (the folder holding flash_attn/)."""
    cute = root / "flash_attn" / "cute"
    cute.mkdir(parents=True, exist_ok=True)
    (root / "flash_attn" / "__init__.py").write_text("")
    (cute / "__init__.py").write_text("")
    if interface is None:
        interface = rule + ENTRY_POINTS.format(callee=callee)
    (cute / "interface.py").write_text(interface)
    for rel, data in (extra or {}).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data) if isinstance(data, bytes) else p.write_text(data)
    return root


TE_CHECK = '''import warnings


def check_set_window_size(attn_mask_type, window_size=None):
    if "causal" in attn_mask_type:
        if window_size is None:
            return (-1, 0)
        if window_size == (-1, -1) or (window_size[0] >= 0 and window_size[1] != 0):
            warnings.warn("cut to causal for " + attn_mask_type)
            return (window_size[0], 0)
        assert window_size == (-1, 0) or (window_size[0] >= 0 and window_size[1] == 0), "bad"
        return window_size
    if attn_mask_type in ("no_mask", "padding", "arbitrary"):
        if window_size is None:
            return (-1, -1)
        if window_size == (-1, 0):
            warnings.warn("widened for " + attn_mask_type)
            return (-1, -1)
        assert window_size == (-1, -1) or (window_size[0] >= 0 and window_size[1] >= 0), "bad"
        return window_size
    raise AssertionError("Invalid attn_mask_type: " + attn_mask_type)
'''

TE_BACKENDS = '''from flash_attn.cute.interface import flash_attn_func as flash_attn_func_v4


def attend(q, k, v, attn_mask_type, window_size):
    return flash_attn_func_v4(q, k, v, causal="causal" in attn_mask_type,
                              window_size=window_size)
'''


def write_te(root: Path, extra: dict[str, str | bytes] | None = None) -> Path:
    """A TE-like tree: check_set_window_size in pytorch/utils.py, an unwrapped FA4 call in
    pytorch/backends.py (so the right answer is: unsafe against a post-#2490 FA4)."""
    pkg = root / "transformer_engine"
    (pkg / "pytorch").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text('"""TE-like fixture."""\n')
    (pkg / "pytorch" / "__init__.py").write_text("")
    (pkg / "pytorch" / "utils.py").write_text(TE_CHECK)
    (pkg / "pytorch" / "backends.py").write_text(TE_BACKENDS)
    for rel, data in (extra or {}).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data) if isinstance(data, bytes) else p.write_text(data)
    return root


# ----------------------------------------------------------------------------- assertions

def assert_one_line_error(r, *needles: str) -> str:
    """exit 2, exactly one stderr line ``fa4-audit: error: ...``, no traceback, no 'safe'."""
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert r.code == 2, (r.code, r.out[-500:], r.err[-500:])
    assert len(lines) == 1 and lines[0].startswith("fa4-audit: error: "), r.err
    assert "Traceback" not in r.err + r.out
    assert "internal error" not in lines[0], lines[0]
    assert "verdict: safe" not in r.out
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def table_json(r) -> dict:
    assert "Traceback" not in r.err + r.out
    return json.loads(r.out)


def causal_te_row(d: dict) -> dict:
    """The row for mask 'causal', user window None (TE emits causal (-1, 0))."""
    (row,) = [x for x in d["rows"] if x["mask_type"] == "causal" and x["user_window"] == "None"]
    return row


def assert_post_2490_answer(r):
    """The right answer for a post-#2490 resolver: unsafe, TE's causal (-1, 0) -> empty band."""
    assert r.code == 1, (r.code, r.err)
    d = table_json(r)
    assert d["summary"]["verdict"] == "unsafe"
    asis = [c for c in causal_te_row(d)["cells"] if c["input"] == "as-is"][0]
    assert (asis["mode"], asis["left"], asis["right"], asis["band"]) == ("LOCAL", -1, 0, "empty")


def has_sites_command() -> bool:
    try:
        import analyzer.commands.sites  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


needs_sites = pytest.mark.skipif(not has_sites_command(),
                                 reason="`fa4-audit sites` is not registered yet "
                                        "(analyzer/commands/sites.py missing)")


@pytest.fixture(autouse=True)
def _own_cache(isolated_cache):
    """Every test here gets an empty cache (extraction / IR caches must not mask a failure)."""
    return isolated_cache


@pytest.fixture
def fa4_post(tmp_path):
    return write_fa4(tmp_path / "fa4_post")


@pytest.fixture
def te_tree(tmp_path):
    return write_te(tmp_path / "te")


# ----------------------------------------------------------------------------- missing / unreadable

@pytest.mark.parametrize("argv", [
    ["table", "--fa4", "{missing}"],
    ["table", "--fa4", "{fa4}", "--te", "{missing}"],
    ["history", "--fa4", "b36", "--te", "{missing}"],
    ["audit", "--te", "{missing}", "--fa4", "{fa4}", "--out", "{out}"],
    ["sites", "--tree", "{missing}"],
], ids=["table-fa4", "table-te", "history-te", "audit-te", "sites-tree"])
def test_missing_path_is_a_one_line_error(cli, tmp_path, fa4_post, argv):
    """Guards: a typo'd path audited as 'nothing found' (exit 0) or a traceback."""
    if argv[0] == "sites" and not has_sites_command():
        pytest.skip("`fa4-audit sites` is not registered yet")
    subst = {"missing": str(tmp_path / "no" / "such"), "fa4": str(fa4_post),
             "out": str(tmp_path / "out")}
    r = cli(*[a.format(**subst) for a in argv])
    assert_one_line_error(r, "no such")


def test_unreadable_folder_is_an_error_or_read_honestly(cli, tmp_path, fa4_post):
    """chmod 000 on the FA4 folder. As root the permission does not bite (root reads it):
    then the answer must be the same as for a readable copy; as a user it must be exit 2."""
    readable = cli("table", "--fa4", str(fa4_post), "--no-simulate", "--format", "json", "-q")
    assert_post_2490_answer(readable)
    locked = write_fa4(tmp_path / "locked")
    os.chmod(locked, 0)
    try:
        r = cli("table", "--fa4", str(locked), "--no-simulate", "--format", "json", "-q")
    finally:
        os.chmod(locked, 0o755)
    if os.geteuid() == 0:
        assert_post_2490_answer(r)
        assert table_json(r)["summary"]["findings"] and r.code == readable.code
    else:
        assert_one_line_error(r, "not readable")


def test_dangling_py_symlink_is_an_error(cli, te_tree, fa4_post):
    """An entry that cannot be read (root cannot read a dangling link either) is never skipped."""
    (te_tree / "transformer_engine" / "pytorch" / "gone.py").symlink_to(te_tree / "nowhere.py")
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate")
    assert_one_line_error(r, "gone.py", "cannot read")


def test_fifo_named_py_is_an_error_not_a_hang(cli, te_tree, fa4_post):
    """Guards: reading a FIFO blocks forever (it hung `table` and the sites pass before the fix
    in sources.iter_py_files)."""
    os.mkfifo(te_tree / "transformer_engine" / "pytorch" / "pipe.py")
    t0 = time.perf_counter()
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate")
    assert_one_line_error(r, "pipe.py", "not a regular file")
    assert time.perf_counter() - t0 < 10


def test_codemod_on_a_fifo_does_not_hang(te_tree):
    os.mkfifo(te_tree / "transformer_engine" / "pytorch" / "pipe.py")
    try:
        p = subprocess.run([PY, "-m", "fa4_patch", str(te_tree), "--check"], cwd=REPO,
                           capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail("python -m fa4_patch hung on a FIFO")
    assert p.returncode == 2 and "Traceback" not in p.stderr


# ----------------------------------------------------------------------------- TE trees

SYNTAX_ERROR = "def broken(:\n    pass\n"


def test_syntax_error_in_the_file_with_check_set_window_size_is_an_error(cli, te_tree, fa4_post):
    utils = te_tree / "transformer_engine" / "pytorch" / "utils.py"
    utils.write_text(utils.read_text() + "\n" + SYNTAX_ERROR)
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate")
    assert_one_line_error(r, "utils.py", "does not parse")


def test_syntax_error_in_an_unrelated_file_is_ignored_by_the_table(cli, te_tree, fa4_post):
    """A broken file that never mentions the function cannot change what TE emits."""
    write_te(te_tree, {"transformer_engine/pytorch/unrelated.py": SYNTAX_ERROR})
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate",
            "--format", "json", "-q")
    assert_post_2490_answer(r)
    assert table_json(r)["te"]["spec"] == str(te_tree)


@needs_sites
def test_sites_syntax_error_in_a_file_that_mentions_flash_attn_is_an_error(cli, te_tree):
    """Guards: a call site in an unparseable file silently dropped (reported 'covered')."""
    write_te(te_tree, {"transformer_engine/pytorch/broken.py":
                       "from flash_attn.cute import flash_attn_func\n" + SYNTAX_ERROR})
    r = cli("sites", "--tree", str(te_tree))
    assert r.code == 2, (r.code, r.out, r.err)
    assert "Traceback" not in r.out + r.err and "broken.py" in r.out + r.err


@needs_sites
def test_sites_syntax_error_in_a_file_without_flash_attn_is_skipped(cli, te_tree):
    """The byte prefilter is sound here: the unrelated file cannot originate an FA call, so the
    tree is still analysed and the real finding in backends.py is reported (exit 1)."""
    write_te(te_tree, {"transformer_engine/pytorch/unrelated.py": SYNTAX_ERROR})
    r = cli("sites", "--tree", str(te_tree), "--format", "json")
    assert r.code == 1, (r.code, r.err)
    assert "backends.py" in r.out and "unrelated.py" not in r.out


def test_non_utf8_file_in_the_te_tree_fails_closed_for_the_table(cli, te_tree, fa4_post):
    """The table reads every TE file as UTF-8 text to find check_set_window_size; a file it
    cannot decode is an error (conservative: it cannot tell whether it holds the function)."""
    write_te(te_tree, {"transformer_engine/pytorch/latin.py": b"# caf\xe9\nX = 1\n"})
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate")
    assert_one_line_error(r, "latin.py", "cannot read")


@needs_sites
def test_sites_non_utf8_file_that_mentions_flash_attn_is_an_error(cli, te_tree):
    write_te(te_tree, {"transformer_engine/pytorch/latin.py":
                       b"from flash_attn.cute import flash_attn_func\n# caf\xe9\n"})
    r = cli("sites", "--tree", str(te_tree))
    assert r.code == 2 and "Traceback" not in r.out + r.err
    assert "latin.py" in r.out + r.err


def test_non_utf8_file_in_the_fa4_tree_is_an_error(cli, tmp_path):
    root = write_fa4(tmp_path / "fa4", extra={"flash_attn/cute/blob.py": b"\xff\xfe\x00bad"})
    r = cli("table", "--fa4", str(root), "--no-simulate")
    assert_one_line_error(r, "blob.py")


def test_empty_interface_is_an_error(cli, tmp_path):
    root = write_fa4(tmp_path / "fa4", interface="")
    r = cli("table", "--fa4", str(root))
    assert_one_line_error(r, "_flash_attn_fwd")


def test_empty_te_utils_is_an_error(cli, te_tree, fa4_post):
    (te_tree / "transformer_engine" / "pytorch" / "utils.py").write_text("")
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree))
    assert_one_line_error(r, "no def check_set_window_size")


def test_empty_extra_te_file_changes_nothing(cli, te_tree, fa4_post):
    write_te(te_tree, {"transformer_engine/pytorch/empty.py": ""})
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate",
            "--format", "json", "-q")
    assert_post_2490_answer(r)


def test_empty_wheel_is_an_error(cli, tmp_path):
    whl = tmp_path / "flash_attn_4-4.0.0b97-py3-none-any.whl"
    whl.write_bytes(b"")
    assert_one_line_error(cli("table", "--fa4", str(whl)), "corrupt or truncated")


def _generated(n_bytes: int, mention_fa: bool) -> str:
    head = "from flash_attn.cute import flash_attn_func\n\n" if mention_fa else "# generated\n"
    chunk = "".join(f"def gen_{i}(x):\n    return x + {i}\n\n\n" for i in range(2000))
    reps = n_bytes // len(chunk) + 2
    parts = [head]
    for r in range(reps):
        parts.append(chunk.replace("def gen_", f"def g{r}_"))
    return "".join(parts)


def test_5mb_generated_file_without_fa_is_fast_and_analysed(cli, te_tree, fa4_post):
    """A 5 MB generated module that never mentions flash_attn: the table finishes in seconds
    with the right answer."""
    big = _generated(5_000_000, mention_fa=False)
    assert len(big) >= 5_000_000
    write_te(te_tree, {"transformer_engine/pytorch/generated.py": big})
    t0 = time.perf_counter()
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate",
            "--format", "json", "-q")
    took = time.perf_counter() - t0
    assert_post_2490_answer(r)
    assert took < 8, took


@needs_sites
def test_5mb_generated_file_without_fa_is_fast_for_sites(cli, te_tree):
    write_te(te_tree, {"transformer_engine/pytorch/generated.py":
                       _generated(5_000_000, mention_fa=False)})
    t0 = time.perf_counter()
    r = cli("sites", "--tree", str(te_tree), "--format", "json")
    took = time.perf_counter() - t0
    assert r.code == 1 and "backends.py" in r.out, (r.code, r.err)
    assert took < 8, took


@needs_sites
def test_5mb_generated_file_with_fa_finishes_in_seconds(tmp_path):
    te = write_te(tmp_path / "te", {"transformer_engine/pytorch/generated.py":
                                    _generated(5_000_000, mention_fa=True)})
    env = {**os.environ, "FA4_AUDIT_CACHE": str(tmp_path / "c")}
    try:
        p = subprocess.run([PY, "-m", "analyzer", "sites", "--tree", str(te)], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("sites on a 5 MB file that mentions flash_attn took over 10 s")
    assert p.returncode in (1, 2) and "Traceback" not in p.stderr


def test_symlink_loops_do_not_trap_the_walk(cli, te_tree, fa4_post):
    """A folder loop is not followed: the tree is analysed as usual."""
    (te_tree / "transformer_engine" / "pytorch" / "loop").symlink_to(
        te_tree / "transformer_engine", target_is_directory=True)
    t0 = time.perf_counter()
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate",
            "--format", "json", "-q")
    assert_post_2490_answer(r)
    assert time.perf_counter() - t0 < 10


def test_self_looping_py_symlink_is_an_error(cli, te_tree, fa4_post):
    loop = te_tree / "transformer_engine" / "pytorch" / "selfloop.py"
    loop.symlink_to(loop)
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate")
    assert_one_line_error(r, "selfloop.py")


def test_spec_that_is_a_symlink_loop_is_an_error(cli, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    assert_one_line_error(cli("table", "--fa4", str(a)), "cannot resolve path")


# ----------------------------------------------------------------------------- FA4 resolver shapes

def test_missing_resolver_is_an_error(cli, tmp_path):
    iface = ENTRY_POINTS.format(callee="_window_state").replace(
        "causal, local, window_size_left, window_size_right = _window_state(\n"
        "        causal, window_size_left, window_size_right, mask_mod)",
        "scale = q").replace(
        "causal, local, window_size_left, window_size_right = _window_state(\n"
        "        causal, window_size_left, window_size_right)", "scale = q")
    assert "_window_state" not in iface
    r = cli("table", "--fa4", str(write_fa4(tmp_path / "f", iface)))
    assert_one_line_error(r, "neither calls a window resolver nor resolves")


def test_resolver_called_but_not_defined_is_an_error(cli, tmp_path):
    r = cli("table", "--fa4", str(write_fa4(tmp_path / "f", rule="", callee="_gone")))
    assert_one_line_error(r, "no def _gone")


def test_renamed_resolver_is_found_by_structure(cli, tmp_path):
    root = write_fa4(tmp_path / "f", rule=POST_RULE.replace("_window_state", "zz_misc"),
                     callee="zz_misc")
    r = cli("table", "--fa4", str(root), "--no-simulate", "--format", "json", "-q")
    assert_post_2490_answer(r)
    assert table_json(r)["fa4"][0]["resolvers"][0]["name"] == "zz_misc"


# The post-#2490 rule spread over two module-level helpers (sentinel rule, then the tail).
SPLIT_POST = '''
def _drop_sentinels(lo, hi):
    if lo is not None and hi is not None and lo < 0 and hi < 0:
        return None, None
    return lo, hi


def _finish(is_causal, lo, hi):
    if lo is None and hi is None:
        return is_causal, False, None, None
    if lo is None and hi == 0:
        return True, False, None, None
    return False, True, lo, hi


def _window_state(is_causal, lo, hi, mask_mod=None):
    if mask_mod is not None:
        return False, False, lo, hi
    lo, hi = _drop_sentinels(lo, hi)
    if is_causal:
        hi = 0
    return _finish(is_causal, lo, hi)
'''

SPLIT_PRE = SPLIT_POST.replace(
    "    lo, hi = _drop_sentinels(lo, hi)\n    if is_causal:\n        hi = 0\n",
    "    if is_causal:\n        hi = 0\n    lo, hi = _widen_negative_sum(lo, hi)\n").replace(
    "def _drop_sentinels(lo, hi):\n    if lo is not None and hi is not None and lo < 0 and hi < 0:",
    "def _widen_negative_sum(lo, hi):\n    if lo is not None and hi is not None and lo + hi < 0:")


def test_resolver_split_across_two_helpers_gives_the_right_table(cli, tmp_path):
    """Post-#2490 rule split over helpers: unsafe, with the empty band; the same split with the
    pre-#2490 order: safe. Both must come out of the real helpers, not a guess by name."""
    assert SPLIT_PRE != SPLIT_POST and "_widen_negative_sum" in SPLIT_PRE
    post = cli("table", "--fa4", str(write_fa4(tmp_path / "post", rule=SPLIT_POST)),
               "--no-simulate", "--format", "json", "-q")
    assert_post_2490_answer(post)
    notes = table_json(post)["fa4"][0]["resolvers"][0]["notes"]
    assert any("_drop_sentinels" in n for n in notes) and any("_finish" in n for n in notes)
    pre = cli("table", "--fa4", str(write_fa4(tmp_path / "pre", rule=SPLIT_PRE)),
              "--no-simulate", "--format", "json", "-q")
    assert pre.code == 0, pre.err
    d = table_json(pre)
    assert d["summary"]["verdict"] == "safe"
    asis = [c for c in causal_te_row(d)["cells"] if c["input"] == "as-is"][0]
    assert (asis["mode"], asis["band"]) == ("CAUSAL", "exact")


def test_helper_imported_from_another_module_is_refused_not_guessed(cli, tmp_path):
    """The rule's first half lives in another module: the extracted text cannot run it, so
    exit 2 (refused before running) -- not a table in which every call 'raises'."""
    rule = SPLIT_POST.split("def _finish")[0]  # only _drop_sentinels
    body = "from .rules import _drop_sentinels\n" + "def _finish" + SPLIT_POST.split("def _finish")[1]
    root = write_fa4(tmp_path / "f", interface=body + ENTRY_POINTS.format(callee="_window_state"),
                     extra={"flash_attn/cute/rules.py": rule})
    r = cli("table", "--fa4", str(root), "--no-simulate")
    assert_one_line_error(r, "refused to evaluate", "_drop_sentinels")


def test_module_constant_used_by_the_resolver_is_refused_not_read_as_raises(cli, tmp_path):
    """Guards (fixed in analyzer/sandbox.py): a module-level constant left behind by the
    extraction made every call raise NameError, shown as 'RAISES' rows with exit 1."""
    rule = "_UNBOUNDED = None\n" + POST_RULE.replace("lo, hi = None, None",
                                                     "lo, hi = _UNBOUNDED, _UNBOUNDED")
    r = cli("table", "--fa4", str(write_fa4(tmp_path / "f", rule=rule)), "--no-simulate")
    assert_one_line_error(r, "refused to evaluate", "_UNBOUNDED")


def test_te_module_constant_is_refused_not_read_as_rejection(cli, te_tree, fa4_post):
    """Guards (fixed in analyzer/sandbox.py): TE's function reading a module constant raised
    NameError on every call, every pair counted as 'rejected', and the table said
    'compared 0/0 ... verdict: safe (exit 0)' against a post-#2490 resolver."""
    utils = te_tree / "transformer_engine" / "pytorch" / "utils.py"
    text = utils.read_text().replace(
        'import warnings\n', 'import warnings\n\n_CAUSAL_MASKS = ("causal", "padding_causal")\n'
    ).replace('if "causal" in attn_mask_type:', "if attn_mask_type in _CAUSAL_MASKS:")
    utils.write_text(text)
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate")
    assert_one_line_error(r, "refused to evaluate", "_CAUSAL_MASKS")


def test_te_that_emits_nothing_is_not_safe(cli, te_tree, fa4_post):
    utils = te_tree / "transformer_engine" / "pytorch" / "utils.py"
    utils.write_text("def check_set_window_size(attn_mask_type, window_size=None):\n"
                     "    raise AssertionError('no window is accepted')\n")
    r = cli("table", "--fa4", str(fa4_post), "--te", str(te_tree), "--no-simulate")
    assert r.code != 0 and "verdict: safe" not in r.out


def test_resolver_result_unpacked_in_two_steps_fails_closed(cli, tmp_path):
    """``state = resolve(...)`` then ``causal, local, l, r = state``: not the 4-tuple call
    shape; the tool must not guess (exit 2), never report a table from some other code."""
    iface = POST_RULE + ENTRY_POINTS.format(callee="_window_state").replace(
        "causal, local, window_size_left, window_size_right = _window_state(",
        "state = _window_state(").replace(
        "    return q\n",
        "    causal, local, window_size_left, window_size_right = state\n    return q\n")
    r = cli("table", "--fa4", str(write_fa4(tmp_path / "f", iface)), "--no-simulate")
    assert_one_line_error(r)


def test_two_different_definitions_of_the_resolver_are_an_error(cli, tmp_path):
    root = write_fa4(tmp_path / "f", extra={
        "flash_attn/cute/other.py": PRE_RULE})
    # interface.py defines the post rule and other.py the pre rule under the same name; the
    # entry points call the local one, which must be the one used (same-module first)
    r = cli("table", "--fa4", str(root), "--no-simulate", "--format", "json", "-q")
    assert_post_2490_answer(r)
    dup = write_fa4(tmp_path / "g", interface=POST_RULE + "\n\nclass K:\n    @staticmethod\n"
                    + textwrap.indent(PRE_RULE.strip(), "    ") + "\n"
                    + ENTRY_POINTS.format(callee="_window_state"),
                    extra={"flash_attn/cute/interface2.py":
                           ENTRY_POINTS.format(callee="_window_state")})
    r2 = cli("table", "--fa4", str(dup), "--no-simulate")
    assert_one_line_error(r2, "defined more than once")


# ----------------------------------------------------------------------------- releases, wheels

@pytest.mark.network
def test_unknown_release_version_is_an_error(cli):
    assert_one_line_error(cli("table", "--fa4", "4.0.0b999", "--no-simulate"),
                          "could not fetch flash-attn-4==4.0.0b999")
    r = cli("history", "--fa4", "4.0.0b999")
    assert r.code == 2 and "Traceback" not in r.out + r.err and "could not fetch" in r.out


def _wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def test_good_fake_wheel_is_analysed(cli, tmp_path):
    whl = _wheel(tmp_path / "flash_attn_4-4.0.0b98-py3-none-any.whl", {
        "flash_attn/__init__.py": "", "flash_attn/cute/__init__.py": "",
        "flash_attn/cute/interface.py": POST_RULE + ENTRY_POINTS.format(callee="_window_state")})
    r = cli("table", "--fa4", str(whl), "--no-simulate", "--format", "json", "-q")
    assert_post_2490_answer(r)
    assert table_json(r)["fa4"][0]["version"] == "4.0.0b98"


@pytest.mark.parametrize("kind", ["truncated", "garbage", "no-interface", "truncated-sdist"])
def test_corrupt_or_truncated_archive_is_an_error(cli, tmp_path, kind):
    good = _wheel(tmp_path / "good.whl", {
        "flash_attn/cute/interface.py": POST_RULE + ENTRY_POINTS.format(callee="_window_state")})
    if kind == "truncated":
        bad = tmp_path / "flash_attn_4-4.0.0b96-py3-none-any.whl"
        bad.write_bytes(good.read_bytes()[: good.stat().st_size * 2 // 3])
        needle = "corrupt or truncated"
    elif kind == "garbage":
        bad = tmp_path / "flash_attn_4-4.0.0b95-py3-none-any.whl"
        bad.write_bytes(os.urandom(4096))
        needle = "corrupt or truncated"
    elif kind == "no-interface":
        bad = _wheel(tmp_path / "flash_attn_4-4.0.0b94-py3-none-any.whl",
                     {"flash_attn/__init__.py": ""})
        needle = "no flash_attn/cute/interface.py inside"
    else:
        src = write_fa4(tmp_path / "sd" / "flash_attn_4-4.0.0b93")
        tgz = tmp_path / "flash_attn_4-4.0.0b93.tar.gz"
        with tarfile.open(tgz, "w:gz") as tf:
            tf.add(src, arcname="flash_attn_4-4.0.0b93")
        bad = tmp_path / "flash_attn_4-4.0.0b92.tar.gz"
        bad.write_bytes(tgz.read_bytes()[: tgz.stat().st_size // 2])
        needle = "corrupt or truncated"
    assert_one_line_error(cli("table", "--fa4", str(bad)), needle)


# ----------------------------------------------------------------------------- index unreachable

UNREACHABLE = {"PIP_CONFIG_FILE": "/dev/null", "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
               "PIP_EXTRA_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_FIND_LINKS": "",
               "FA4_AUDIT_PIP_TIMEOUT": "3"}


@pytest.fixture
def unreachable(monkeypatch):
    for k, v in UNREACHABLE.items():
        monkeypatch.setenv(k, v)


def test_unreachable_index_with_a_cold_cache_is_a_quick_error(cli, unreachable):
    t0 = time.perf_counter()
    assert_one_line_error(cli("table", "--fa4", "b36"), "could not fetch flash-attn-4==4.0.0b36")
    assert_one_line_error(cli("table", "--fa4", "newest"), "cannot list flash-attn-4 releases")
    r = cli("history")
    assert_one_line_error(r, "cannot list flash-attn-4 releases")
    assert time.perf_counter() - t0 < 60


def test_unreachable_index_subprocess(tmp_path):
    """The one real `python -m analyzer` run: environment exactly as the issue says."""
    env = {**os.environ, **UNREACHABLE, "FA4_AUDIT_CACHE": str(tmp_path / "cold")}
    env.pop("FA4_AUDIT_OFFLINE", None)
    p = subprocess.run([PY, "-m", "analyzer", "table", "--fa4", "4.0.0b36"], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=120)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and p.stdout == ""
    assert len(lines) == 1 and lines[0].startswith("fa4-audit: error: could not fetch"), p.stderr


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache filled from the real index (b36 + the release list), then copied per use."""
    from analyzer import sources

    d = tmp_path_factory.mktemp("warm") / "cache"
    old = os.environ.get("FA4_AUDIT_CACHE")
    os.environ["FA4_AUDIT_CACHE"] = str(d)
    try:
        sources.resolve("fa4", "4.0.0b36")
        sources.index_versions("fa4")
    finally:
        if old is None:
            os.environ.pop("FA4_AUDIT_CACHE", None)
        else:
            os.environ["FA4_AUDIT_CACHE"] = old
    return d


@pytest.mark.network
@pytest.mark.parametrize("offline", [False, True], ids=["unreachable", "unreachable+OFFLINE"])
def test_warm_cache_works_without_the_index(cli, tmp_path, monkeypatch, unreachable, warm_cache,
                                            offline):
    cache = tmp_path / "copy"
    shutil.copytree(warm_cache, cache)
    monkeypatch.setenv("FA4_AUDIT_CACHE", str(cache))
    if offline:
        monkeypatch.setenv("FA4_AUDIT_OFFLINE", "1")
    r = cli("table", "--fa4", "b36", "--no-simulate", "--format", "json", "-q")
    assert_post_2490_answer(r)
    assert table_json(r)["fa4"][0]["resolvers"][0]["variant"] == "post-2490"
    # 'newest' comes from the remembered release list; it is b36 in that list's cache
    newest = cli("table", "--fa4", "newest", "--no-simulate", "--format", "json", "-q")
    assert newest.code in (1, 2) and "Traceback" not in newest.err
    if newest.code == 2:  # the list knows a newer release than the cache holds: fail closed
        assert_one_line_error(newest, "not")
    h = cli("history", "--fa4", "b36", "--format", "json")
    assert h.code == 1, h.err
    assert json.loads(h.out)["releases"][0]["breaks"] is True
    # a release the cache does not hold is still an error, never skipped
    miss = cli("table", "--fa4", "b35")
    assert_one_line_error(miss, "4.0.0b35")


# ----------------------------------------------------------------------------- the whole audit

def _audit_ready() -> bool:
    import importlib.util
    return has_sites_command() and importlib.util.find_spec("analyzer.sites.render") is not None


needs_audit = pytest.mark.skipif(not _audit_ready(), reason="the call-site pass is not wired yet "
                                 "(analyzer/commands/sites.py or analyzer/sites/render.py missing)")


@needs_audit
def test_audit_right_answer_on_a_small_te_tree(cli, tmp_path, te_tree, fa4_post):
    """Control for the hostile cases below: an unwrapped FA4 call whose window comes from outside
    the tree, judged on a post-#2490 FA4 read from the fixture (its own resolver, run in the
    sandbox): unknown -- exit 1, never safe -- with TE's (-1, 0) named as what breaks."""
    r = cli("audit", "--te", str(te_tree), "--fa4", str(fa4_post), "--out", str(tmp_path / "o"))
    assert r.code == 1, (r.out, r.err)
    doc = json.loads((tmp_path / "o" / "audit.json").read_text())
    assert doc["verdict"] == "unknown"
    assert "(-1, 0)" in " ".join(doc["reasons"])


@needs_audit
@pytest.mark.parametrize("name, data", [
    ("syntax", b"from flash_attn.cute import flash_attn_func\ndef broken(:\n"),
    ("latin1", b"from flash_attn.cute import flash_attn_func\n# caf\xe9\n"),
], ids=["syntax-error", "non-utf8"])
def test_audit_on_an_unparseable_fa_file_is_error_never_safe(cli, tmp_path, te_tree, fa4_post,
                                                             name, data):
    write_te(te_tree, {f"transformer_engine/pytorch/{name}.py": data})
    out = tmp_path / "o"
    r = cli("audit", "--te", str(te_tree), "--fa4", str(fa4_post), "--out", str(out))
    assert r.code == 2, (r.out, r.err)
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err
    assert json.loads((out / "audit.json").read_text())["verdict"] == "error"


def test_a_vendored_copy_with_one_entry_point_and_the_resolver_is_fa4(tmp_path):
    """Guards against a false "no FA4": a vendored copy that defines only ``flash_attn_func``
    beside FA4's ``_resolve_causal_local_window`` (or only a ``_flash_attn_fwd`` taking the
    split bounds) was not recognised (two entry points were required)."""
    from analyzer.sites import audit_tree

    pkg = tmp_path / "fa4copy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "interface.py").write_text(
        "def _resolve_causal_local_window(causal, window_size_left, window_size_right):\n"
        "    return causal, window_size_left, window_size_right\n\n\n"
        "def flash_attn_func(q, k, v, softmax_scale=None, causal=False,\n"
        "                    window_size=(None, None)):\n    return q\n")
    (tmp_path / "main.py").write_text(
        "from fa4copy.interface import flash_attn_func\n\n\ndef run(q, k, v):\n"
        "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unsafe"


def test_an_fa4_module_kept_as_a_class_attribute_escapes(tmp_path):
    """Guards against a false safe: ``class H: mod = fi`` (fi the FA4 module) then
    ``H.mod.flash_attn_func(..., window_size=(-1, 0))`` was not followed and not reported."""
    from analyzer.sites import audit_tree

    (tmp_path / "main.py").write_text(
        "import flash_attn.cute.interface as fi\n\n\nclass H:\n    mod = fi\n\n\n"
        "def run(q, k, v):\n"
        "    return H.mod.flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("code", [
    # a module-level call through a name eval gives
    "from flash_attn.cute.interface import flash_attn_func\nf = eval('flash_attn_func')\n"
    "f(1, 2, 3, causal=True, window_size=(-1, 0))\n",
    # exec of constant code that imports FA4 itself and calls it
    "src = 'from flash_attn.cute import flash_attn_func\\n"
    "flash_attn_func(1, 2, 3, causal=True, window_size=(-1, 0))\\n'\nexec(src)\n",
])
def test_code_run_at_module_level_that_reaches_fa4_is_not_safe(tmp_path, code):
    """Guards against a false safe / "no FA4": window calls at a module's top level were not
    looked at for unresolved callees, and exec'd code whose own import binds the name it
    calls was read as reading a module name (and dropped its import edge)."""
    from analyzer.sites import audit_tree

    (tmp_path / "main.py").write_text(code)
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"
