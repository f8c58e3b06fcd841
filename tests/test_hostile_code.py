"""Issue 6 item 2: extracted code is untrusted.

The FA4 resolver and TE's ``check_set_window_size`` come from packages not yet vetted. Each
hostile body below must be refused before anything runs (SandboxRefused -> exit 2 with the
reason) or be stopped by the sandbox's time / memory limits (SandboxFailed -> exit 2), and
nothing outside the sandbox may change: no marker file appears, the environment and the working
directory are as before. Tested on ``analyzer.sandbox.run_function`` directly and end to end
through ``fa4-audit table --fa4 <fake tree or wheel>`` / ``--te <fake tree>``.
"""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path

import pytest

from analyzer.sandbox import SandboxFailed, SandboxRefused, run_function

FA4_NAMES = ("isinstance", "int", "bool", "AssertionError", "ValueError", "TypeError")


@pytest.fixture(autouse=True)
def _own_cache(isolated_cache):
    return isolated_cache


@pytest.fixture
def marker(tmp_path):
    """A path hostile code tries to create; plus a snapshot of what must not change."""
    m = tmp_path / "pwned"
    env, cwd = dict(os.environ), os.getcwd()
    yield m
    assert not m.exists(), "hostile code wrote a file outside the sandbox"
    assert not Path("/tmp/pwned").exists()
    assert os.getcwd() == cwd
    now = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    assert now == {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}


def hostile(body: str, *, header: str = "", params: str = "is_causal, lo, hi") -> str:
    """A resolver-shaped function whose first statements are ``body``."""
    lines = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return f"{header}def f({params}):\n{lines}\n    return is_causal, False, lo, hi\n"


# (id, source, "refused"|"failed"|"stopped", substring of the reason)
CASES = [
    ("import-os", hostile("import os\nos.system('touch {m}')"), "refused", "Import"),
    ("from-import", hostile("from os import system\nsystem('touch {m}')"), "refused", "ImportFrom"),
    ("dunder-import", hostile("x = __import__('os')"), "refused", "__import__"),
    ("subclasses-walk", hostile("x = ().__class__.__bases__[0].__subclasses__()"), "refused",
     "__subclasses__"),
    ("getattr-globals", hostile("g = getattr(f, '__globals__')"), "refused", "call to 'getattr'"),
    ("getattr-spelled", hostile("g = getattr(f, '_' + '_globals_' + '_')"), "refused",
     "call to 'getattr'"),
    ("while-true", hostile("while True:\n    pass"), "refused", "While"),
    ("for-loop", hostile("for i in [1] * 9:\n    pass"), "refused", "For"),
    ("pow-list", hostile("x = [0] * 10**10"), "refused", "Pow"),
    ("pow-str", hostile("x = 'x' * 10**10"), "refused", "Pow"),
    ("open-write", hostile("open('{m}', 'w')"), "refused", "call to 'open'"),
    ("open-tmp", hostile("open('/tmp/pwned', 'w')"), "refused", "call to 'open'"),
    ("exec", hostile("exec(\"open('{m}', 'w')\")"), "refused", "call to 'exec'"),
    ("eval", hostile("eval(\"open('{m}', 'w')\")"), "refused", "call to 'eval'"),
    ("compile", hostile("c = compile('1', 'x', 'eval')"), "refused", "call to 'compile'"),
    ("decorator", hostile("pass", header="@open('{m}', 'w')\n"), "refused", "decorated"),
    ("default-arg", hostile("pass", params="is_causal, lo, hi, x=open('{m}', 'w')"), "refused",
     "call to 'open'"),
    ("lambda", hostile("g = lambda: open('{m}', 'w')"), "refused", "Lambda"),
    ("fstring-r-dunder", hostile("s = f'{is_causal.__class__!r}'"), "refused", "FormattedValue"),
    ("fstring-dunder", hostile("s = f'{is_causal.__class__}'"), "refused", "__class__"),
    ("fstring-r", hostile("s = f'{is_causal!r}'"), "refused", "f-string conversion"),
    ("fstring-spec", hostile("s = f'{lo:{hi}}'"), "refused", "format spec"),
    ("warn-globals", hostile("g = warnings.warn.__globals__"), "refused", "__globals__"),
    ("starred-call", hostile("f(*lo)"), "refused", "Starred"),
    ("kwargs-splat", hostile("f(**lo)"), "refused", "** argument"),
    ("walrus", hostile("if (x := 1):\n    pass"), "refused", "NamedExpr"),
    ("try", hostile("try:\n    pass\nexcept Exception:\n    pass"), "refused", "Try"),
    ("with", hostile("with lo:\n    pass"), "refused", "With"),
    ("class", hostile("class K:\n    pass"), "refused", "ClassDef"),
    ("global", hostile("global lo"), "refused", "Global"),
    ("nested-def", hostile("def g():\n    return 1"), "refused", "nested function"),
    ("bytes", hostile("x = b'\\x00'"), "refused", "bytes"),
    ("top-level-code", "open('{m}', 'w')\n" + hostile("pass"), "refused", "only def statements"),
    ("async-def", "async def f(is_causal, lo, hi):\n    return 1\n", "refused",
     "only def statements"),
    ("module-name", hostile("x = os_module"), "refused", "not defined in the evaluated source"),
    ("huge-source", hostile("pass") + "#" * 50_000, "refused", "too large"),
    ("list-bomb", hostile("x = [0] * 10000000000"), "failed", "memory"),
    ("str-bomb", hostile("x = 'x' * 10000000000"), "failed", "memory"),
    ("square-bomb", hostile("n = 10\n" + "n = n * n\n" * 34), "failed", ""),
    ("recursion-bomb", "def spin(n):\n    return spin(n - 1) + spin(n - 1) if n else 0\n\n"
     + hostile("x = spin(64)"), "failed", "timed out"),
    ("infinite-recursion", hostile("x = f(is_causal, lo, hi)"), "stopped", "RecursionError"),
    ("builtin-reference", hostile("x = eval"), "stopped", "NameError"),
]


@pytest.mark.parametrize("case_id, source, outcome, why", CASES, ids=[c[0] for c in CASES])
def test_run_function_refuses_or_stops_hostile_bodies(marker, case_id, source, outcome, why):
    src = source.replace("{m}", str(marker))
    calls = [((False, 3, 4), {})]
    t0 = time.perf_counter()
    if outcome == "refused":
        with pytest.raises(SandboxRefused) as exc:
            run_function(src, "f", calls, allowed_names=FA4_NAMES + ("warnings",),
                         allowed_attrs=("warn",), timeout=2)
        assert why in str(exc.value)
        assert time.perf_counter() - t0 < 1  # refused statically: nothing was started
    elif outcome == "failed":
        with pytest.raises(SandboxFailed) as exc:
            run_function(src, "f", calls, allowed_names=FA4_NAMES, timeout=2, memory_mb=256)
        assert why in str(exc.value)
        assert time.perf_counter() - t0 < 6
    else:  # runs, and the sandbox turns the escape into a call error
        (res,) = run_function(src, "f", calls, allowed_names=FA4_NAMES, timeout=2)
        assert not res.ok and res.error.startswith(why), res


def test_sandbox_child_has_no_builtins_beyond_the_chosen_ones(marker):
    """Even code that passed the allowlist cannot reach open: it does not exist in there."""
    src = "def f():\n    return open\n"
    (res,) = run_function(src, "f", [((), {})])
    assert not res.ok and "NameError" in res.error


# ----------------------------------------------------------------------------- end to end

ENTRY_POINTS = '''

def _flash_attn_fwd(q, k, v, causal=False, window_size_left=None, window_size_right=None,
                    mask_mod=None):
    causal, local, window_size_left, window_size_right = _window_state(
        causal, window_size_left, window_size_right, mask_mod)
    return q


def _flash_attn_bwd(q, k, v, out, dout, lse, causal=False, window_size_left=None,
                    window_size_right=None):
    causal, local, window_size_left, window_size_right = _window_state(
        causal, window_size_left, window_size_right)
    return q
'''

RULE_HEAD = "def _window_state(is_causal, lo, hi, mask_mod=None):\n"
RULE_BODY = '''    if mask_mod is not None:
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


def fa4_tree(root: Path, injected: str = "", *, head: str = RULE_HEAD, prefix: str = "",
             module_code: str = "") -> Path:
    cute = root / "flash_attn" / "cute"
    cute.mkdir(parents=True)
    (root / "flash_attn" / "__init__.py").write_text(module_code)
    (cute / "__init__.py").write_text(module_code)
    inj = "".join("    " + ln + "\n" for ln in injected.strip("\n").splitlines())
    (cute / "interface.py").write_text(module_code + prefix + head + inj + RULE_BODY
                                       + ENTRY_POINTS)
    return root


def one_error_line(r) -> str:
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert r.code == 2, (r.code, r.out[-400:], r.err)
    assert len(lines) == 1 and lines[0].startswith("fa4-audit: error: "), r.err
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err
    return lines[0]


E2E = [
    ("import-os", "import os\nos.system('touch {m}')", "Import"),
    ("dunder-import", "m = __import__('os')", "__import__"),
    ("subclasses", "x = ().__class__.__bases__[0].__subclasses__()", "__subclasses__"),
    ("getattr", "g = getattr(lo, '__globals__')", "getattr"),
    ("while-true", "while True:\n    pass", "While"),
    ("pow-bomb", "x = [0] * 10**10", "Pow"),
    ("open", "open('{m}', 'w')", "open"),
    ("exec", "exec(\"open('{m}', 'w')\")", "exec"),
    ("eval", "eval(\"open('{m}', 'w')\")", "eval"),
    ("lambda", "g = lambda: open('{m}', 'w')", "Lambda"),
    ("fstring-r-dunder", "s = f'{lo.__class__!r}'", "f-string conversion"),
    ("fstring-dunder", "s = f'{lo.__class__}'", "__class__"),
    ("list-bomb", "x = [0] * 10000000000", "memory"),
    ("str-bomb", "x = 'x' * 10000000000", "memory"),
]


@pytest.mark.parametrize("case_id, body, why", E2E, ids=[c[0] for c in E2E])
def test_table_on_a_hostile_fa4_resolver_is_exit_2(cli, tmp_path, marker, case_id, body, why):
    root = fa4_tree(tmp_path / "fa4", body.replace("{m}", str(marker)))
    line = one_error_line(cli("table", "--fa4", str(root), "--no-simulate"))
    assert "interface.py" in line and "_window_state" in line and why in line, line


def test_table_on_a_hostile_wheel_is_exit_2(cli, tmp_path, marker):
    src = fa4_tree(tmp_path / "src", f"open('{marker}', 'w')")
    whl = tmp_path / "flash_attn_4-4.0.0b91-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        for p in sorted(src.rglob("*.py")):
            zf.write(p, p.relative_to(src).as_posix())
    line = one_error_line(cli("table", "--fa4", str(whl), "--no-simulate"))
    assert "refused to evaluate" in line and "open" in line


def test_hostile_default_argument_and_decorator_never_run(cli, tmp_path, marker):
    head = f"def _window_state(is_causal, lo, hi, mask_mod=None, _x=open('{marker}', 'w')):\n"
    line = one_error_line(cli("table", "--fa4", str(fa4_tree(tmp_path / "a", head=head))))
    assert "refused to evaluate" in line and "open" in line
    deco = f"@register(open('{marker}', 'w'))\n"
    line = one_error_line(cli("table", "--fa4",
                              str(fa4_tree(tmp_path / "b", prefix=deco))))
    assert "decorated with register" in line


def test_hostile_helper_called_by_the_resolver_is_refused(cli, tmp_path, marker):
    helper = f"def _helper(x):\n    import os\n    os.system('touch {marker}')\n    return x\n\n\n"
    root = fa4_tree(tmp_path / "fa4", "lo = _helper(lo)", prefix=helper)
    line = one_error_line(cli("table", "--fa4", str(root), "--no-simulate"))
    assert "Import" in line


def test_module_level_code_of_the_audited_package_is_never_imported(cli, tmp_path, marker):
    """The audited files are read, never imported: their top-level code does not run, and
    the (safe) resolver is still analysed correctly."""
    code = f"open({str(marker)!r}, 'w').write('imported')\n"
    root = fa4_tree(tmp_path / "fa4", module_code=code)
    r = cli("table", "--fa4", str(root), "--no-simulate")
    assert r.code == 1 and "LOCAL -1/0" in r.out, r.err  # the post-#2490 rule, read correctly


def test_resolver_time_bomb_is_stopped_by_the_time_limit(cli, tmp_path, marker):
    """Exponential recursion passes the allowlist (no loops needed); the real limit (10 s wall,
    10 s CPU) stops it and the audit says why."""
    helper = ("def _spin(n):\n    if n == 0:\n        return 0\n"
              "    return _spin(n - 1) + _spin(n - 1)\n\n\n")
    root = fa4_tree(tmp_path / "fa4", "x = _spin(64)", prefix=helper)
    t0 = time.perf_counter()
    line = one_error_line(cli("table", "--fa4", str(root), "--no-simulate"))
    assert "timed out" in line or "CPU time" in line, line
    assert time.perf_counter() - t0 < 20


def test_shadowed_inert_decorator_is_not_trusted_by_name(cli, tmp_path):
    # the bare rule is pre-#2490 (safe); the local "lru_cache" turns it into one that empties
    # TE's causal (-1, 0): a wrong "safe" unless the decorator's origin is checked
    spoof = ("def lru_cache(fn):\n"
             "    def broken(is_causal, lo, hi, mask_mod=None):\n"
             "        return False, True, lo, hi\n"
             "    return broken\n\n\n@lru_cache\n")
    pre_body = RULE_BODY.replace(
        "    if lo is not None and hi is not None and lo < 0 and hi < 0:\n"
        "        lo, hi = None, None\n    if is_causal:\n        hi = 0\n",
        "    if is_causal:\n        hi = 0\n"
        "    if lo is not None and hi is not None and lo + hi < 0:\n        lo, hi = None, None\n")
    assert pre_body != RULE_BODY
    root = tmp_path / "fa4"
    fa4_tree(root, prefix=spoof)
    iface = root / "flash_attn" / "cute" / "interface.py"
    iface.write_text(iface.read_text().replace(RULE_BODY, pre_body))
    r = cli("table", "--fa4", str(root), "--no-simulate")
    assert r.code != 0, "a shadowed decorator was trusted by its name: reported safe"


# ----------------------------------------------------------------------------- TE side

TE_HEAD = "def check_set_window_size(attn_mask_type, window_size=None):\n"
TE_BODY = '''    if "causal" in attn_mask_type:
        if window_size is None:
            return (-1, 0)
        return window_size
    if window_size is None:
        return (-1, -1)
    return window_size
'''


@pytest.mark.parametrize("body, why", [
    ("import os\nos.system('touch {m}')", "Import"),
    ("__import__('os')", "__import__"),
    ("open('{m}', 'w')", "open"),
    ("while True:\n    pass", "While"),
    ("x = warnings.warn.__globals__", "__globals__"),
    ("x = 'x' * 10000000000", "memory"),
], ids=["import", "dunder-import", "open", "while", "warn-globals", "str-bomb"])
def test_table_on_a_hostile_te_check_set_window_size_is_exit_2(cli, tmp_path, marker, body, why):
    te = tmp_path / "te" / "transformer_engine"
    te.mkdir(parents=True)
    (te / "__init__.py").write_text(f"open({str(marker)!r}, 'w')\n")  # never imported either
    inj = "".join("    " + ln + "\n" for ln in body.replace("{m}", str(marker)).splitlines())
    (te / "utils.py").write_text("import warnings\n\n\n" + TE_HEAD + inj + TE_BODY)
    fa4 = fa4_tree(tmp_path / "fa4")
    line = one_error_line(cli("table", "--fa4", str(fa4), "--te", str(tmp_path / "te"),
                              "--no-simulate"))
    assert "check_set_window_size" in line and why in line, line


@pytest.mark.parametrize("line, comment", [
    (b"x = 1  # see inspect.unwrap", True),
    # the line may continue a long string begun above: what follows its quotes is code
    (b'notes # x""" ; inspect.unwrap(g)', False),
    (b'y = inspect.unwrap(g)  # ok', False),
    (b's = "#"; inspect.unwrap(g)', False),
])
def test_reflection_scan_skips_only_real_comments(line, comment):
    """The text scan for ``__wrapped__``/``unwrap``/``gc.get_objects`` (escape.py) leaves out
    words in comments. Guards against a read hidden after a ``#`` that is not a comment (in a
    string, or after a long string closes on that line) being skipped: ``functools.wraps(fa4)``
    would then be taken as harmless, a false safe."""
    from analyzer.sites.escape import _in_comment

    assert _in_comment(line, line.index(b"unwrap")) is comment
