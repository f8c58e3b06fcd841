"""analyzer.sandbox: the allowlist refuses before running; what runs is batched, bounded, and
returns values exactly (tuples stay tuples)."""

from __future__ import annotations

import time

import pytest

from analyzer.errors import AuditError
from analyzer.sandbox import CallResult, SandboxFailed, SandboxRefused, check_source, run_function

RULE = '''
def rule(mode, window=None):
    """A TE-like rule: warns, asserts, returns tuples or lists as given."""
    if window is None:
        return (-1, 0)
    if window == (-1, -1):
        warnings.warn("cut to causal for " + mode)
        return (window[0], 0)
    assert window[0] >= 0, "bad window for " + mode
    return window
'''


def test_values_warnings_and_errors_come_back_per_call():
    """Guards against losing the tuple/list distinction, warnings, or exception text."""
    res = run_function(RULE, "rule",
                       [(("causal",), {}), (("causal", (-1, -1)), {}), (("causal", [3, 0]), {}),
                        (("causal",), {"window": (-2, 0)})],
                       allowed_names=["warnings"], allowed_attrs=["warn"])
    assert res[0] == CallResult(True, (-1, 0), None, [])
    assert isinstance(res[0].value, tuple)
    assert res[1].value == (-1, 0) and res[1].warnings == ["cut to causal for causal"]
    assert res[2].value == [3, 0] and isinstance(res[2].value, list)
    assert res[3].ok is False and res[3].error == "AssertionError: bad window for causal"


def test_hundreds_of_calls_run_in_one_subprocess():
    """Guards against one subprocess per call (history evaluates hundreds of inputs): the
    sandbox starts at most one child for 500 calls. (Counted, not timed: a wall-clock bound
    fails on a loaded machine; ``make bench`` prints the speed.)"""
    from analyzer.sandbox import default_sandbox

    box = default_sandbox()
    before = box.started
    calls = [(("causal", (w, 0)), {}) for w in range(500)]
    res = run_function(RULE, "rule", calls, allowed_names=["warnings"], allowed_attrs=["warn"])
    assert box.started - before <= 1
    assert [r.value for r in res] == [(w, 0) for w in range(500)]


def test_helpers_defined_in_the_source_may_be_called():
    src = "def helper(x):\n    return x + 1\n\ndef f(x):\n    return helper(x) * 2\n"
    assert run_function(src, "f", [((3,), {})])[0].value == 8


def test_no_builtins_beyond_the_chosen_ones():
    """A name that is not passed in does not exist at runtime (NameError), even a builtin."""
    src = "def f(x):\n    return len\n"
    res = run_function(src, "f", [((1,), {})])
    assert not res[0].ok and res[0].error.startswith("NameError")


@pytest.mark.parametrize("body, node", [
    ("import os\n    return 1", "Import"),
    ("from os import path\n    return 1", "ImportFrom"),
    ("while True:\n        pass", "While"),
    ("for i in x:\n        pass", "For"),
    ("return [i for i in x]", "ListComp"),
    ("return {i: 1 for i in x}", "DictComp"),
    ("return (i for i in x)", "GeneratorExp"),
    ("return lambda: 1", "Lambda"),
    ("global y\n    return 1", "Global"),
    ("yield 1", "Yield"),
    ("with x:\n        pass", "With"),
    ("del x\n    return 1", "Delete"),
    ("try:\n        pass\n    except Exception:\n        pass", "Try"),
    ("class C:\n        pass", "ClassDef"),
    ("return x ** 1000", "Pow"),
    ("def g():\n        return 1\n    return g()", "FunctionDef"),
])
def test_forbidden_constructs_are_refused_with_node_and_line(body, node):
    """Guards against running audited code that imports, loops or escapes the allowlist."""
    src = f"def f(x):\n    {body}\n"
    with pytest.raises(SandboxRefused) as exc:
        run_function(src, "f", [((1,), {})])
    assert node in str(exc.value) and "line 2" in str(exc.value)
    assert isinstance(exc.value, AuditError)


@pytest.mark.parametrize("src, why", [
    ("def f(x):\n    return x.shape\n", "attribute access .shape"),
    ("def f(x):\n    return ().__class__\n", "__class__"),
    ("def f(x):\n    return __builtins__\n", "dunder name"),
    ("def f(x):\n    return open('/etc/passwd')\n", "call to 'open'"),
    ("def f(x):\n    return x()\n", "call to 'x'"),
    ("def f(x):\n    return warnings.simplefilter('ignore')\n", "attribute access .simplefilter"),
    ("def f(*a):\n    return 1\n", "*args"),
    ("x = 1\ndef f(x):\n    return x\n", "only def statements"),
    ("@dec\ndef f(x):\n    return x\n", "decorated"),
    ("def f(x):\n    return (f,)[0].__code__\n", "__code__"),
])
def test_attribute_dunder_call_and_top_level_escapes_are_refused(src, why):
    with pytest.raises(SandboxRefused) as exc:
        run_function(src, "f", [((1,), {})], allowed_names=["warnings"], allowed_attrs=["warn"])
    assert why in str(exc.value)


def test_refusal_happens_before_anything_runs(tmp_path):
    """A refused source must not execute even partially (no file appears)."""
    marker = tmp_path / "ran"
    src = f"def f():\n    open({str(marker)!r}, 'w')\n    import os\n"
    with pytest.raises(SandboxRefused):
        run_function(src, "f", [((), {})])
    assert not marker.exists()


def test_missing_function_and_oversized_source_are_refused():
    with pytest.raises(SandboxRefused, match="no top-level function 'g'"):
        run_function("def f():\n    return 1\n", "g", [((), {})])
    with pytest.raises(SandboxRefused, match="too large"):
        check_source("def f():\n    return 1\n" + "#" * 50_000)


def test_unsafe_allowed_name_is_a_programming_error():
    with pytest.raises(ValueError):
        run_function("def f():\n    return 1\n", "f", [((), {})], allowed_names=["open"])


def test_runaway_recursion_times_out():
    """No loops, but exponential recursion still cannot hang the audit."""
    src = "def f(n=60):\n    return f(n - 1) + f(n - 1) if n else 0\n"
    t0 = time.perf_counter()
    with pytest.raises(SandboxFailed, match="timed out"):
        run_function(src, "f", [((), {})], timeout=1.5)
    assert time.perf_counter() - t0 < 5


def test_memory_cap_fails_the_evaluation():
    src = "def f():\n    return 'x' * 3000000000\n"
    with pytest.raises(SandboxFailed, match="memory"):
        run_function(src, "f", [((), {})], memory_mb=256)


def test_annotations_are_not_evaluated():
    """TE's signature says Tuple[int, int]; typing is not available inside, and must not be."""
    src = "def f(a: str, w: Tuple[int, int] = None) -> Tuple[int, int]:\n    return w\n"
    assert run_function(src, "f", [(("causal", (1, 2)), {})])[0].value == (1, 2)


def test_unserialisable_result_is_a_call_error_not_a_crash():
    src = "def f():\n    return f\n"
    res = run_function(src, "f", [((), {})])
    assert not res[0].ok and "cannot leave the sandbox" in res[0].error


def test_environment_errors_are_not_read_as_rejections():
    """Guards: a NameError (a name the sandbox lacks) being read as 'TE rejected this window'
    or 'the resolver raises' -- a verdict about the sandbox, not about the rule."""
    from analyzer.sandbox import CallResult, SandboxFailed, raise_if_environment_error

    raise_if_environment_error("f", (1,), CallResult(False, None, "AssertionError: no", []))
    raise_if_environment_error("f", (1,), CallResult(True, 3, None, []))
    for err in ("NameError: name 'x' is not defined", "RecursionError: too deep",
                "AttributeError: 'int' object has no attribute 'y'"):
        with pytest.raises(SandboxFailed, match="could not evaluate"):
            raise_if_environment_error("f", (1,), CallResult(False, None, err, []))
