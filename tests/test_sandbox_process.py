"""analyzer.sandbox: one child process serves a whole run, identical requests are answered from
memory, and a failure never poisons the next request. The public API (run_function,
CallResult, SandboxRefused, SandboxFailed, check_source, SAFE_NAMES) is unchanged."""

from __future__ import annotations

import multiprocessing

import pytest

from analyzer.sandbox import CallResult, Sandbox, SandboxFailed, run_function, run_functions

ADD = "def f(a, b=1):\n    return (a + b, a)\n"
MUL = "def g(a):\n    return [a * 2]\n"


def test_many_requests_share_one_child():
    """Guards against one subprocess per evaluation (~40 ms each, the cost issue 11 names)."""
    with Sandbox() as sb:
        for i in range(5):
            assert sb.run(ADD, "f", [((i,), {})])[0].value == (i + 1, i)
            assert sb.run(MUL, "g", [((i,), {})])[0].value == [2 * i]
        assert sb.started == 1 and sb.requests == 10


def test_identical_request_is_answered_from_memory_with_identical_results():
    """Cached and uncached paths give the same results (and a caller mutating a result does
    not change what the next caller gets)."""
    calls = [((1,), {}), ((2,), {"b": 5}), (("x",), {})]
    with Sandbox() as sb:
        first = sb.run(ADD, "f", calls)
        first[0].value = "mutated"
        again = sb.run(ADD, "f", calls)
        assert sb.requests == 1
    with Sandbox() as fresh:
        uncached = fresh.run(ADD, "f", calls)
    assert again == uncached
    assert uncached[2].ok is False and uncached[2].error.startswith("TypeError")


def test_a_failure_ends_the_child_and_the_next_request_gets_a_fresh_one():
    spin = "def f(n=60):\n    return f(n - 1) + f(n - 1) if n else 0\n"
    with Sandbox() as sb:
        assert sb.run(ADD, "f", [((1,), {})])[0].value == (2, 1)
        with pytest.raises(SandboxFailed, match="timed out"):
            sb.run(spin, "f", [((), {})], timeout=1)
        with pytest.raises(SandboxFailed, match="memory"):
            sb.run("def f():\n    return 'x' * 3000000000\n", "f", [((), {})], memory_mb=256)
        assert sb.run(ADD, "f", [((2,), {})])[0].value == (3, 2)
        assert sb.started == 3


def test_memory_limit_is_per_request():
    """A low limit for one request does not stay on the child for the next."""
    big = "def f():\n    return len('x' * 300000000)\n"
    with Sandbox() as sb:
        assert sb.run(ADD, "f", [((1,), {})], memory_mb=256)[0].ok
        assert sb.run(big, "f", [((), {})], memory_mb=1024, allowed_names=["len"])[0].value == 300000000


def test_binding_errors_are_marked_as_the_callers_not_the_functions():
    """in_call tells 'the arguments did not fit' from 'the function raised TypeError'."""
    src = "def f(a):\n    return a + None\n"
    with Sandbox() as sb:
        inside, bad_call = sb.run(src, "f", [((1,), {}), ((1, 2), {})])
    assert not inside.ok and inside.error.startswith("TypeError") and inside.in_call is False
    assert not bad_call.ok and bad_call.in_call is True


_FORKED: list = []


def _child_uses(_):
    # runs in the forked worker, with the parent's Sandbox object inherited through fork
    return _FORKED[0].run(MUL, "g", [((21,), {})])[0].value


def test_a_forked_process_never_talks_to_its_parents_child():
    """The audit forks workers (table, codemod) after the sandbox may have started: two
    processes writing to one child would mix their answers."""
    with Sandbox() as sb:
        assert sb.run(ADD, "f", [((1,), {})])[0].value == (2, 1)
        _FORKED[:] = [sb]
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(1) as pool:
            assert pool.map(_child_uses, [0]) == [[42]]
        assert sb.run(ADD, "f", [((5,), {})])[0].value == (6, 5)
        assert sb.started == 1
    _FORKED.clear()


def test_run_function_and_batch_keep_the_old_result_shape():
    (r,) = run_function(ADD, "f", [((1,), {})])
    assert r == CallResult(True, (2, 1), None, [])
    assert run_functions([(ADD, "f", [((1,), {})], {}), (MUL, "g", [((3,), {})], {})]) == [
        [CallResult(True, (2, 1), None, [])], [CallResult(True, [6], None, [])]]


def test_a_lower_memory_limit_than_before_gets_a_fresh_child():
    """Guards: a child that once held 600 MB, given a 256 MB limit, could fail a harmless
    request with 'memory limit exceeded' (freed memory is not always returned)."""
    big = "def f():\n    return len('x' * 600000000)\n"
    with Sandbox() as sb:
        assert sb.run(big, "f", [((), {})], memory_mb=2048, allowed_names=["len"])[0].ok
        assert sb.run(ADD, "f", [((1,), {})], memory_mb=256)[0].value == (2, 1)
        assert sb.started == 2
        assert sb.run(MUL, "g", [((1,), {})], memory_mb=256)[0].value == [2]
        assert sb.started == 2
