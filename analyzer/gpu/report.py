"""Render a ``python3 -m analyzer.gpu.harness`` result (JSON) as text or markdown, and judge it.

Used by ``fa4-audit verify-gpu`` and by the audit report (``--gpu-results``). Imports neither
torch nor libcst: a saved result renders on any machine.

Judgement (``exit_status``), documented in docs/gpu.md:

* 0 -- every case ran and every WRAPPED case passed (the fix works on this GPU);
* 1 -- a wrapped case failed or raised (the fix does not work here: a finding);
* 2 -- the result is incomplete (cases not run) or holds no wrapped case: could not verify.

As-is failures are the defect being demonstrated: they are reported in the table, never turned
into the exit status (an FA4 release that is fixed upstream must not make verification "fail").
"""

from __future__ import annotations

import json
from pathlib import Path

from tabulate import tabulate

from analyzer import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS

SCHEMA = "fa4-audit/gpu-verify/1"
TENSORS = ("out", "dq", "dk", "dv")
FORMATS = ("text", "markdown", "json")


class ResultError(ValueError):
    """The file is not a harness result this renderer understands."""


def validate(result) -> dict:
    """Check the parts the renderer and the judgement read; ResultError says what is wrong."""
    if not isinstance(result, dict):
        raise ResultError("not a JSON object")
    if result.get("schema") != SCHEMA:
        raise ResultError(f"schema is {result.get('schema')!r}, expected {SCHEMA!r}")
    cases = result.get("cases")
    if not isinstance(cases, list):
        raise ResultError("'cases' is not a list")
    for n, c in enumerate(cases):
        if not isinstance(c, dict):
            raise ResultError(f"cases[{n}] is not an object")
        for key in ("entry", "pair", "mode", "causal", "window", "shape", "passed"):
            if key not in c:
                raise ResultError(f"cases[{n}] has no {key!r}")
        if c["mode"] not in ("as-is", "wrapped"):
            raise ResultError(f"cases[{n}].mode is {c['mode']!r}")
        if c["passed"] not in (True, False, None):
            raise ResultError(f"cases[{n}].passed is {c['passed']!r}")
    return result


def load_result(path) -> dict:
    """Read and validate a saved result; ResultError (with the path) when it cannot be used."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultError(f"{path}: cannot read: {exc}") from None
    except ValueError as exc:
        raise ResultError(f"{path}: not JSON: {exc}") from None
    try:
        return validate(data)
    except ResultError as exc:
        raise ResultError(f"{path}: {exc}") from None


def counts(result: dict, mode: str | None = None) -> dict:
    sel = [c for c in result["cases"] if mode is None or c["mode"] == mode]
    run = [c for c in sel if c["passed"] is not None]
    return {"planned": len(sel), "run": len(run), "passed": sum(1 for c in run if c["passed"]),
            "failed": sum(1 for c in run if not c["passed"]), "not_run": len(sel) - len(run)}


def exit_status(result: dict) -> int:
    """0 every wrapped case passed, 1 a wrapped case failed, 2 incomplete (see module doc)."""
    validate(result)
    everything = counts(result)
    wrapped = counts(result, "wrapped")
    if everything["not_run"] or wrapped["run"] == 0:
        return EXIT_ERROR
    if wrapped["failed"]:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def verdict_line(result: dict) -> str:
    w, a, e = counts(result, "wrapped"), counts(result, "as-is"), counts(result)
    code = exit_status(result)
    word = {EXIT_CLEAN: "fix verified", EXIT_FINDINGS: "FIX FAILS",
            EXIT_ERROR: "incomplete"}[code]
    line = (f"{word}: wrapped {w['passed']}/{w['planned']} pass; as-is {a['passed']}/"
            f"{a['planned']} pass ({a['failed']} fail: the defect as shipped)")
    if e["not_run"]:
        line += f"; {e['not_run']} case(s) not run"
    return line


# --------------------------------------------------------------------------- cells

def _num(v, digits=1) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):               # "inf" / "nan" from the harness's strict JSON
        return v
    if v == 0:
        return "0"
    return f"{v:.{digits}e}"


def _err(e) -> str:
    if not e:
        return "-"
    m = e.get("metric")
    if m in ("missing", "shape"):
        return m
    s = _num(e.get("value"))
    return f"abs {s}" if m == "abs" else s


def _errors(case) -> str:
    errs = case.get("errors") or {}
    if not errs:
        return "-"
    return " / ".join(_err(errs.get(t)) for t in TENSORS)


def _flag(v) -> str:
    return "-" if v is None else ("yes" if v else "no")


def _outcome(case) -> str:
    """pass / not run / FAIL: the flags first, then which tensors are over tolerance."""
    if case is None:
        return "-"
    if case["passed"] is None:
        return "not run"
    if case["passed"]:
        return "pass"
    reasons, over = [], []
    for f in case.get("failures") or ["?"]:
        if f == "output all zero":
            reasons.append("out all 0")
        elif " err " in f and f.split(" ", 1)[0] in TENSORS:
            over.append(f.split(" ", 1)[0])
        else:
            reasons.append(f)
    if over:
        reasons.append("over tol: " + "/".join(over))
    return "FAIL: " + "; ".join(reasons)


def _window(w) -> str:
    return "(" + ", ".join("None" if x is None else str(x) for x in w) + ")"


def _shape(case) -> str:
    sq, sk = case.get("seqlen_q"), case.get("seqlen_k")
    return f"{sq}x{sk}" if sq is not None else case["shape"]


def verification_rows(result: dict):
    """One row per (entry point, pair, shape): as-is next to wrapped. Rows where something
    fails come first; otherwise the harness's order (entry point, pair, shape)."""
    groups: dict[tuple, dict] = {}
    for c in result["cases"]:
        key = (c["entry"], c["pair"], c["shape"])
        groups.setdefault(key, {})[c["mode"]] = c
    rows = []
    for n, ((entry, pair, _shape_key), modes) in enumerate(groups.items()):
        any_c = modes.get("as-is") or modes.get("wrapped")
        a, w = modes.get("as-is"), modes.get("wrapped")
        bad = any(c is not None and c["passed"] is not True for c in (a, w))
        rows.append((0 if bad else 1, n, [
            entry, pair, "yes" if any_c.get("emitted_by_te", True) else "no",
            str(any_c["causal"]), _window(any_c["window"]), _shape(any_c),
            _flag(a.get("out_all_zero")) if a else "-",
            _flag(a.get("lse_all_neginf")) if a else "-",
            _errors(a) if a else "-", _outcome(a),
            _flag(w.get("out_all_zero")) if w else "-",
            _errors(w) if w else "-", _outcome(w)]))
    rows.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in rows]


VERIFY_HEADERS = ["entry point", "pair", "TE emits", "causal", "window", "sq x sk",
                  "as-is: out all 0", "as-is: LSE all -inf", "as-is: err out/dq/dk/dv",
                  "as-is", "wrapped: out all 0", "wrapped: err out/dq/dk/dv", "wrapped"]


def _table(headers, rows, fmt) -> str:
    return tabulate(rows, headers=headers, tablefmt="github" if fmt == "markdown" else "simple",
                    disable_numparse=True, missingval="-")


def environment_line(result: dict) -> str:
    env = result.get("environment") or {}
    parts = [f"{env.get('gpu', '?')} (SM{str(env.get('capability', '?')).replace('.', '')})",
             f"flash-attn-4 {env.get('flash-attn-4', '?')}",
             f"nvidia-cutlass-dsl {env.get('nvidia-cutlass-dsl', '?')}",
             f"torch {env.get('torch', '?')}", f"python {env.get('python', '?')}"]
    if env.get("quack-kernels"):
        parts.append(f"quack-kernels {env['quack-kernels']}")
    return ", ".join(parts)


def render(result: dict, fmt: str = "markdown") -> str:
    """The verification table, then timing and wrapper cost when measured. ``fmt``: text,
    markdown or json (json returns the result itself, pretty-printed)."""
    validate(result)
    if fmt == "json":
        return json.dumps(result, indent=1) + "\n"
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    md = fmt == "markdown"
    cfg = result.get("config") or {}
    out = []
    title = "GPU verification of FA4 entry points, as-is and through fa4_patch.wrap"
    out.append(f"### {title}" if md else title)
    out.append("")
    out.append(f"{environment_line(result)}.")
    out.append("")
    shapes = cfg.get("shapes") or {}
    shape_txt = ", ".join(f"{k} ({v.get('seqlen_q')}x{v.get('seqlen_k')})" for k, v in shapes.items())
    out.append(f"{verdict_line(result)}. Graded against {cfg.get('reference', 'a float64 reference')}; "
               f"b={cfg.get('batch')}, h={cfg.get('heads')}, d={cfg.get('head_dim')}, "
               f"{cfg.get('dtype')}, {shape_txt}. Error = max|x-ref|/max|ref| "
               f"(tolerance {cfg.get('rtol')}); 'abs' = max|x-ref| where the reference is ~0 "
               f"(tolerance {cfg.get('atol')}). All-zero output and all -inf LSE are checked "
               f"apart from the tolerance.")
    out.append("")
    out.append(_table(VERIFY_HEADERS, verification_rows(result), fmt))
    timing = result.get("timing")
    if timing:
        out.append("")
        if "error" in timing:
            out.append(f"timing failed: {timing['error']}")
        else:
            sh = timing.get("shape", {})
            head = (f"flash_attn_func causal forward, b={sh.get('batch')}, s={sh.get('seqlen')}, "
                    f"h={sh.get('heads')}, d={sh.get('dim')}, {sh.get('dtype')}; "
                    f"{timing.get('method')}")
            out.append(f"**Timing**: {head}." if md else f"Timing: {head}.")
            out.append("")
            rows = [[r["variant"], _ms(r["median_ms"]), _ms(r["p10_ms"]), _ms(r["p90_ms"]),
                     f"{r['host_us_median']:.1f}", f"{r['tflops']:.1f}"] for r in timing["rows"]]
            out.append(_table(["variant", "median ms", "p10 ms", "p90 ms", "host us/call",
                               "TFLOP/s (causal FLOPs)"], rows, fmt))
            delta = wrapper_delta(timing)
            if delta:
                out.append("")
                out.append(f"wrapped (-1, 0) vs bare: {delta['gpu_ms']:+.4f} ms median on the GPU "
                           f"({delta['gpu_percent']:+.1f} %), {delta['host_us']:+.1f} us host time "
                           f"per call (FA4's own host time: {delta['bare_host_us']:.0f} us).")
    cpu = result.get("wrapper_overhead_cpu")
    if cpu:
        out.append("")
        head = (f"pure-Python wrapper cost per call on dummy functions (python {cpu.get('python')}, "
                f"{cpu.get('statistic')}, {cpu.get('number')} calls x {cpu.get('repeat')})")
        out.append(f"**Wrapper cost**: {head}." if md else f"Wrapper cost: {head}.")
        out.append("")
        rows = [[r["call"], f"{r['bare_ns']:.1f}", f"{r['wrapped_ns']:.1f}",
                 f"{r['overhead_ns']:.1f}", _window(r["normalised_to"]),
                 "yes" if r["normalised_ok"] else "NO"] for r in cpu["rows"]]
        out.append(_table(["call", "bare ns", "wrapped ns", "overhead ns", "window reaching fn",
                           "as expected"], rows, fmt))
    return "\n".join(out) + "\n"


def wrapper_delta(timing: dict) -> dict | None:
    """Wrapped (TE's (-1, 0)) minus bare (default window) from the harness's timing rows."""
    rows = timing.get("rows") or []
    bare = next((r for r in rows if r["variant"].startswith("bare, window_size default")), None)
    wrapped = next((r for r in rows if r["variant"].startswith("wrapped, window_size=(-1, 0)")), None)
    if bare is None or wrapped is None:
        return None
    d = wrapped["median_ms"] - bare["median_ms"]
    return {"gpu_ms": d, "gpu_percent": 100 * d / bare["median_ms"],
            "host_us": wrapped["host_us_median"] - bare["host_us_median"],
            "bare_host_us": bare["host_us_median"]}


def _ms(v) -> str:
    return f"{v:.4f}"
