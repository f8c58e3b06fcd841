"""Evaluate a function extracted from audited source code, safely.

The audited code is untrusted text. Before anything runs, its AST must pass an allowlist:

* at top level only ``def`` statements (a docstring allowed); no decorators;
* no ``import``, loops, comprehensions, ``lambda``, ``global``/``nonlocal``, ``yield``,
  ``await``, ``class``, ``with``, ``del``, ``try``, nested ``def``, walrus, starred arguments;
* no name or attribute spelled ``__dunder__`` (or starting with ``__``);
* attribute access only for names the caller allows (``allowed_attrs``, e.g. ``warn``), and
  only on a name the caller allows (``warnings``);
* calls only to the top-level functions of the source and to ``allowed_names``;
* bounded source size.

What passes runs in a ``python -I -S`` subprocess, with no builtins but the ones the
caller picks from :data:`SAFE_NAMES`, under ``RLIMIT_AS``/``RLIMIT_CPU`` and a wall-time
limit. One child serves a whole run (:class:`Sandbox`; started on first use, replaced after
any failure), and an identical request is answered from memory; results come back as JSON
with tuples kept as tuples.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

from analyzer.errors import AuditError

MAX_SOURCE_CHARS = 40_000

# The names a caller may make available inside the sandbox (by name; values live in the child).
SAFE_NAMES = frozenset({
    "isinstance", "int", "bool", "len", "min", "max", "abs", "tuple", "list", "str", "float",
    "TypeError", "ValueError", "AssertionError", "warnings",
})


class SandboxRefused(AuditError):
    """The source failed the AST allowlist; nothing was run."""


class SandboxFailed(AuditError):
    """The subprocess timed out, ran out of memory or CPU, or crashed."""


@dataclass
class CallResult:
    ok: bool
    value: Any = None
    error: str | None = None          # "AssertionError: msg" when the call raised
    warnings: list[str] = field(default_factory=list)
    # True when the error was raised by the call itself -- the arguments did not bind to the
    # function's parameters -- before any of the audited code ran: the caller's mistake, not
    # the function's answer
    in_call: bool = False

    def to_json(self) -> dict:
        return {"ok": self.ok, "value": _encode(self.value), "error": self.error,
                "warnings": list(self.warnings), "in_call": self.in_call}


# ----------------------------------------------------------------------------- allowlist

_ALLOWED_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AugAssign,
    ast.If, ast.IfExp, ast.Expr, ast.Assert, ast.Raise, ast.Pass,
    ast.Name, ast.Load, ast.Store, ast.Constant, ast.Tuple, ast.List,
    ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod,
    ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot,
    ast.In, ast.NotIn,
    ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Slice,
    ast.JoinedStr, ast.FormattedValue,
)


def _is_dunder(name: str) -> bool:
    return name.startswith("__")


def _strip_annotations(tree: ast.Module) -> None:
    """Annotations are never evaluated here (they would need typing names); drop them."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.returns = None
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    arg.annotation = None
                    arg.type_comment = None
            node.type_comment = None


def check_source(source: str, *, allowed_names: Iterable[str] = (),
                 allowed_attrs: Iterable[str] = ()) -> ast.Module:
    """Parse and check ``source`` against the allowlist; return the (annotation-free) tree.

    Raises :class:`SandboxRefused` naming the offending node and line.
    """
    allowed_names = frozenset(allowed_names)
    allowed_attrs = frozenset(allowed_attrs)
    unknown = allowed_names - SAFE_NAMES
    if unknown:
        raise ValueError(f"not a sandbox-safe name: {sorted(unknown)}")
    if len(source) > MAX_SOURCE_CHARS:
        raise SandboxRefused(f"source too large to evaluate ({len(source)} > {MAX_SOURCE_CHARS} chars)")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise SandboxRefused(f"source does not parse: {exc.msg} (line {exc.lineno})") from None
    _strip_annotations(tree)

    lines: dict[int, int] = {}
    for parent in ast.walk(tree):  # operators carry no position: use the nearest ancestor's
        for child in ast.iter_child_nodes(parent):
            lines[id(child)] = getattr(child, "lineno", None) or lines.get(id(parent), 0)

    def refuse(node: ast.AST, why: str) -> SandboxRefused:
        line = getattr(node, "lineno", None) or lines.get(id(node), 0)
        return SandboxRefused(f"refused to evaluate: {why} ({type(node).__name__}, line {line})")

    top_defs: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            if stmt.decorator_list:
                raise refuse(stmt, f"decorated function {stmt.name!r}")
            top_defs.add(stmt.name)
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                  and isinstance(stmt.value.value, str)):
            raise refuse(stmt, "only def statements are accepted at top level")
    callable_names = top_defs | allowed_names

    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise refuse(node, "statement or expression not on the allowlist")
        if isinstance(node, ast.FunctionDef):
            if node not in tree.body:
                raise refuse(node, f"nested function {node.name!r}")
            if _is_dunder(node.name):
                raise refuse(node, f"dunder name {node.name!r}")
            if node.decorator_list:
                raise refuse(node, f"decorated function {node.name!r}")
        elif isinstance(node, ast.arg):
            if _is_dunder(node.arg):
                raise refuse(node, f"dunder name {node.arg!r}")
        elif isinstance(node, ast.Name):
            if _is_dunder(node.id):
                raise refuse(node, f"dunder name {node.id!r}")
        elif isinstance(node, ast.Attribute):
            if _is_dunder(node.attr) or node.attr not in allowed_attrs:
                raise refuse(node, f"attribute access .{node.attr}")
            if not (isinstance(node.value, ast.Name) and node.value.id in allowed_names):
                raise refuse(node, f"attribute .{node.attr} read from something other than an allowed name")
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                if f.id not in callable_names:
                    raise refuse(node, f"call to {f.id!r}, not an allowed callable")
            elif isinstance(f, ast.Attribute):
                pass  # the Attribute itself is checked above (allowed name, allowed attr)
            else:
                raise refuse(node, "call of a computed callee")
        elif isinstance(node, ast.keyword):
            if node.arg is None:
                raise refuse(node, "** argument")
        elif isinstance(node, ast.arguments):
            if node.vararg is not None or node.kwarg is not None:
                raise refuse(node, "*args / **kwargs parameter")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bytes) or node.value is Ellipsis:
                raise refuse(node, "bytes or Ellipsis constant")
        elif isinstance(node, ast.Raise):
            if node.cause is not None:
                raise refuse(node, "raise ... from ...")
        elif isinstance(node, ast.FormattedValue):
            if node.format_spec is not None or node.conversion not in (-1,):
                raise refuse(node, "f-string conversion or format spec")
    _check_free_names(tree, callable_names, refuse)
    return tree


def _check_free_names(tree: ast.Module, known: frozenset[str] | set[str], refuse) -> None:
    """Refuse a name a function reads but that nothing in the evaluated source defines: a
    module-level constant or import of the audited file that extraction did not carry along.
    At run time it would be a NameError, which callers would read as the audited function
    raising (TE "rejects" the input, FA4 "raises") -- a wrong answer, not a failure.
    Builtins that were not passed in are left to fail at run time (NameError), as before."""
    import builtins

    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        a = fn.args
        local = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
        local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)}
        for n in ast.walk(fn):
            if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                    and n.id not in local and n.id not in known
                    and not hasattr(builtins, n.id)):
                raise refuse(n, f"name {n.id!r} is not defined in the evaluated source "
                                f"(a module-level name of the audited file?)")
    # defaults are evaluated at definition time, outside any function scope
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            for d in [*fn.args.defaults, *fn.args.kw_defaults]:
                for n in ast.walk(d) if d is not None else ():
                    if (isinstance(n, ast.Name) and n.id not in known
                            and not hasattr(builtins, n.id)):
                        raise refuse(n, f"name {n.id!r} is not defined in the evaluated source")


# ----------------------------------------------------------------------------- JSON with tuples

def _encode(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, tuple):
        return {"$tuple": [_encode(x) for x in v]}
    if isinstance(v, list):
        return [_encode(x) for x in v]
    if isinstance(v, dict):
        return {"$dict": [[_encode(k), _encode(x)] for k, x in v.items()]}
    raise TypeError(f"cannot pass {type(v).__name__} into the sandbox")


def _decode(v):
    if isinstance(v, list):
        return [_decode(x) for x in v]
    if isinstance(v, dict):
        if "$tuple" in v:
            return tuple(_decode(x) for x in v["$tuple"])
        if "$dict" in v:
            return {_decode(k): _decode(x) for k, x in v["$dict"]}
        raise ValueError("malformed sandbox JSON")
    return v


# The child program. It is trusted code; the audited source is compiled inside it with a
# globals dict that holds only the chosen safe names and an empty __builtins__. It serves one
# request per line of stdin (one JSON object: source, function, calls, limits) and answers one
# line, so one child serves a whole run. Every request gets fresh globals and a fresh warnings
# stub; the audited code can reach nothing else (no attribute access but .warn, no builtins),
# so nothing of one request survives into the next. The limits are set per request: address
# space (RLIMIT_AS) to the request's memory, the CPU soft limit to the CPU used so far plus the
# request's allowance (SIGXCPU ends the child); the parent enforces the wall-time limit.
_CHILD = r"""
import json, os, resource, sys
sys.setrecursionlimit(200)
import builtins

def enc(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, tuple):
        return {"$tuple": [enc(x) for x in v]}
    if isinstance(v, list):
        return [enc(x) for x in v]
    if isinstance(v, dict):
        return {"$dict": [[enc(k), enc(x)] for k, x in v.items()]}
    raise TypeError("result of type %s cannot leave the sandbox" % type(v).__name__)

def dec(v):
    if isinstance(v, list):
        return [dec(x) for x in v]
    if isinstance(v, dict):
        if "$tuple" in v:
            return tuple(dec(x) for x in v["$tuple"])
        return {dec(k): dec(x) for k, x in v["$dict"]}
    return v

class _Warnings:
    def __init__(self):
        self.log = []
    def warn(self, message, *args, **kwargs):
        self.log.append(str(message))

SAFE = {n: getattr(builtins, n) for n in
        ("isinstance", "int", "bool", "len", "min", "max", "abs", "tuple", "list", "str",
         "float", "TypeError", "ValueError", "AssertionError")}
_, HARD_AS = resource.getrlimit(resource.RLIMIT_AS)
_, HARD_CPU = resource.getrlimit(resource.RLIMIT_CPU)

def cap(want, hard):
    return want if hard == resource.RLIM_INFINITY else min(want, hard)

def serve(req):
    mem = req["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap(mem, HARD_AS), HARD_AS))
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cap(spent + req["cpu_s"], HARD_CPU), HARD_CPU))
    stub = _Warnings()
    g = {"__builtins__": {}, "__name__": "sandboxed"}
    for n in req["names"]:
        g[n] = stub if n == "warnings" else SAFE[n]
    code = compile(req["source"], "<audited>", "exec", dont_inherit=True)
    exec(code, g)
    fn = g[req["func"]]
    out = []
    for args, kwargs in req["calls"]:
        args, kwargs = dec(args), dec(kwargs)
        stub.log = []
        try:
            value = fn(*args, **kwargs)
            out.append({"ok": True, "value": enc(value), "error": None, "warnings": stub.log,
                        "in_call": False})
        except MemoryError:
            raise
        except Exception as exc:
            # no frame below this one: the call itself failed (arguments that do not bind)
            # before any audited code ran
            tb = exc.__traceback__
            out.append({"ok": False, "value": None, "in_call": tb is not None and tb.tb_next is None,
                        "error": "%s: %s" % (type(exc).__name__, exc), "warnings": stub.log})
    return {"results": out}

for line in sys.stdin:
    try:
        answer = json.dumps(serve(json.loads(line)))
    except MemoryError:
        answer = None
    if answer is None:
        os.write(1, b'{"fatal": "memory limit exceeded"}\n')
        sys.exit(3)
    data = (answer + "\n").encode()
    while data:
        data = data[os.write(1, data):]
"""


class Sandbox:
    """One sandbox child process that serves every evaluation of a run, plus a memo of the
    answers: the same request (source text, function, names, calls, limits) is evaluated once.

    A child that times out, runs out of memory or CPU, or crashes is killed and discarded; the
    next request starts a fresh one. Safe across ``fork``: a forked process never talks to its
    parent's child. Used through :func:`run_function` (the process-wide instance), or directly:
    ``with Sandbox() as sb: sb.run(...)``.
    """

    def __init__(self):
        import threading
        self._proc = None
        self._owner = None
        self._lock = threading.Lock()
        self._memo: dict[str, list[CallResult]] = {}
        self._stderr = None
        self._max_mem = 0
        self.started = 0            # children started (for tests and the benchmark)
        self.requests = 0           # requests actually sent to a child

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- process management
    def _alive(self) -> bool:
        import os
        if self._proc is not None and self._owner != os.getpid():
            self._proc = None        # inherited through fork: the parent's, not ours
            self._stderr = None
        return self._proc is not None and self._proc.poll() is None

    def _start(self):
        import os
        import tempfile
        self._drop_stderr()
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _CHILD],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, env={}, bufsize=0)
        self._owner = os.getpid()
        self.started += 1

    def _kill(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        rc = proc.wait()
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        return rc

    def close(self) -> None:
        """End the child (idempotent). The memo is kept."""
        with self._lock:
            if self._alive():
                try:
                    self._proc.stdin.close()
                    self._proc.wait(timeout=2)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._kill()
            self._drop_stderr()

    def _drop_stderr(self) -> None:
        if self._stderr is not None:
            try:
                self._stderr.close()
            except OSError:
                pass
            self._stderr = None

    def _failure(self, rc) -> str:
        err = b""
        if self._stderr is not None:
            try:
                self._stderr.seek(0)
                err = self._stderr.read()[-4000:]
            except OSError:
                pass
        self._drop_stderr()
        return _child_failure(subprocess.CompletedProcess([], rc if rc is not None else -9,
                                                          "", err.decode(errors="replace")))

    def _exchange(self, payload: str, timeout: float, func_name: str, memory_mb: int) -> dict:
        import os
        import select
        import time
        # A lower address-space limit than an earlier request's could fail at once on memory
        # the child already holds (freed arenas are not always returned): start afresh.
        if self._alive() and memory_mb < self._max_mem:
            self._kill()
        if not self._alive():
            self._kill()
            self._start()
            self._max_mem = 0
        self._max_mem = max(self._max_mem, memory_mb)
        self.requests += 1
        proc = self._proc
        try:
            proc.stdin.write(payload.encode() + b"\n")
        except (BrokenPipeError, OSError):
            rc = self._kill()
            raise SandboxFailed(f"evaluating {func_name!r} failed: {self._failure(rc)}") from None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = bytearray()
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill()
                raise SandboxFailed(f"evaluating {func_name!r} timed out after {timeout:g}s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:         # the child died
                if buf:
                    break
                rc = self._kill()
                raise SandboxFailed(f"evaluating {func_name!r} failed: {self._failure(rc)}")
            buf += chunk
        try:
            data = json.loads(bytes(buf))
        except ValueError:
            self._kill()
            raise SandboxFailed(f"evaluating {func_name!r}: unreadable result from the sandbox") from None
        if "fatal" in data:
            self._kill()
            raise SandboxFailed(f"evaluating {func_name!r} failed: {data['fatal']}")
        return data

    # -- the API
    def run(self, source: str, func_name: str, calls: list[tuple[tuple, dict]], *,
            allowed_names: Iterable[str] = (), allowed_attrs: Iterable[str] = (),
            timeout: float = 10.0, memory_mb: int = 512) -> list[CallResult]:
        """See :func:`run_function`."""
        import copy
        import hashlib
        allowed_names = sorted(set(allowed_names))
        tree = check_source(source, allowed_names=allowed_names, allowed_attrs=allowed_attrs)
        if func_name not in {s.name for s in tree.body if isinstance(s, ast.FunctionDef)}:
            raise SandboxRefused(f"refused to evaluate: no top-level function {func_name!r} in the source")
        clean = ast.unparse(tree)  # annotations stripped; what runs is exactly what was checked
        try:
            payload = json.dumps({
                "source": clean, "func": func_name, "names": allowed_names,
                "calls": [[_encode(tuple(a)), _encode(dict(k))] for a, k in calls],
                "memory_mb": int(memory_mb), "cpu_s": max(1, int(timeout + 0.999)),
            })
        except TypeError as exc:
            raise ValueError(str(exc)) from None
        key = hashlib.sha256(payload.encode()).hexdigest()
        with self._lock:
            hit = self._memo.get(key)
            if hit is None:
                data = self._exchange(payload, timeout, func_name, int(memory_mb))
                try:
                    results = data["results"]
                    hit = [CallResult(ok=r["ok"], value=_decode(r["value"]), error=r["error"],
                                      warnings=list(r["warnings"]), in_call=bool(r["in_call"]))
                           for r in results]
                except (KeyError, TypeError, ValueError):
                    self._kill()
                    raise SandboxFailed(f"evaluating {func_name!r}: unreadable result from the sandbox") from None
                if len(hit) != len(calls):
                    raise SandboxFailed(f"evaluating {func_name!r}: {len(hit)} results for {len(calls)} calls")
                self._memo[key] = hit
        return copy.deepcopy(hit)

    def run_many(self, jobs) -> list[list[CallResult]]:
        """Batch form: ``jobs`` is a sequence of ``(source, func_name, calls, options)`` with
        ``options`` the keyword arguments of :meth:`run`; returns one result list per job, in
        order. All go to this instance's one child (and memo); the first refusal or failure
        raises."""
        return [self.run(src, fn, calls, **dict(opts)) for src, fn, calls, opts in jobs]


_DEFAULT: Sandbox | None = None


def default_sandbox() -> Sandbox:
    """The process-wide :class:`Sandbox` that :func:`run_function` uses (ended at exit)."""
    global _DEFAULT
    if _DEFAULT is None:
        import atexit
        _DEFAULT = Sandbox()
        atexit.register(_DEFAULT.close)
    return _DEFAULT


def run_function(source: str, func_name: str, calls: list[tuple[tuple, dict]], *,
                 allowed_names: Iterable[str] = (), allowed_attrs: Iterable[str] = (),
                 timeout: float = 10.0, memory_mb: int = 512) -> list[CallResult]:
    """Run ``func_name`` from ``source`` on every ``(args, kwargs)`` in ``calls`` in the
    sandbox and return one :class:`CallResult` per call, in order.

    Raises :class:`SandboxRefused` before running anything when the source fails the
    allowlist (or ``func_name`` is not one of its top-level functions), and
    :class:`SandboxFailed` on timeout, memory or CPU exhaustion, or a crash.

    Every call of a run goes to one sandbox child process (started on first use), and a
    request identical to an earlier one is answered from memory; a call whose arguments do not
    bind to the function comes back with ``in_call=True``.
    """
    return default_sandbox().run(source, func_name, calls, allowed_names=allowed_names,
                                 allowed_attrs=allowed_attrs, timeout=timeout,
                                 memory_mb=memory_mb)


def run_functions(jobs) -> list[list[CallResult]]:
    """Batch form of :func:`run_function` (see :meth:`Sandbox.run_many`)."""
    return default_sandbox().run_many(jobs)


def _child_failure(proc: subprocess.CompletedProcess) -> str:
    rc = proc.returncode
    try:
        fatal = json.loads(proc.stdout).get("fatal")
    except (ValueError, AttributeError):
        fatal = None
    if fatal:
        return fatal
    if rc < 0:
        import signal
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        if name == "SIGXCPU":
            return "CPU time limit exceeded"
        return f"killed by {name}"
    tail = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    if tail and tail[-1].startswith("MemoryError"):
        return "memory limit exceeded"
    return tail[-1] if tail else f"exit status {rc}"


# Exceptions that say the sandbox could not run the rule as written (a name or attribute the
# restricted environment lacks, a runaway recursion), not that the rule rejected its input.
# Callers turn them into "could not evaluate" (exit 2) instead of reading them as a rejection.
ENVIRONMENT_ERRORS = frozenset({"NameError", "UnboundLocalError", "AttributeError",
                                "RecursionError", "MemoryError", "ImportError",
                                "ModuleNotFoundError"})


def raise_if_environment_error(where: str, call_input, result) -> None:
    """AuditError when ``result`` failed for a reason of the sandbox, not of the rule."""
    if result.ok or not result.error:
        return
    kind = result.error.split(":", 1)[0].strip()
    if kind in ENVIRONMENT_ERRORS:
        raise SandboxFailed(f"{where}: could not evaluate on input {call_input!r}: {result.error}")
