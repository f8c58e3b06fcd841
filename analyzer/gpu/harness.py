"""Run TE's emitted window pairs through the real FA4 kernels, as-is and through fa4_patch.

A standalone script for a machine with flash-attn-4 and an SM90 / SM100 GPU::

    python3 -m analyzer.gpu.harness --out RESULT.json [--pairs PAIRS.json] [--no-timing]

It imports only torch, the standard library, ``flash_attn.cute.interface`` and ``fa4_patch``
(never libcst or the rest of ``analyzer``), so it runs with nothing but the kernels installed.

For every pair (mask_type, causal, window) and shape (sq = sk, sq < sk) it calls each of the
four FA4 entry points -- ``flash_attn_func``, ``flash_attn_varlen_func`` (cu_seqlens), and the
``_flash_attn_fwd`` + ``_flash_attn_bwd`` pair that TE's context-parallel code binds -- once
as-is and once through ``fa4_patch.wrap``, and grades the forward output and the backward
dq / dk / dv against a float64 reference of the mask TE *intends* (bottom-right alignment,
-1 = unbounded side), never against another backend. An all-zero output and an all ``-inf`` LSE
are recorded as their own flags, apart from the tolerance, so the specific failure is named.

Tolerance (bf16 inputs and outputs): the error of a tensor is ``max|x - ref| / max|ref|``.
bf16 keeps 8 significant bits, so rounding the output alone costs up to 2**-9 ~ 2e-3 of the
largest value, which is what correct kernels measure here (2e-3 .. 3e-3, DESIGN §6); a wrong
mask costs O(1) (an empty band gives exactly 1.0). ``RTOL = 2e-2`` sits ~8x above the first and
~50x below the second. Where the reference is ~0 (``max|ref| <= 1e-6``; e.g. window (0, 0),
where a single key gets all the weight and dq is exactly 0) a relative error is meaningless and
the absolute error ``max|x|`` is graded against ``ATOL = 2e-2`` instead, in the units of
gradients whose non-zero siblings are O(1) with these unit-variance inputs.

The result is JSON (schema ``fa4-audit/gpu-verify/1``, see docs/gpu.md); it is rewritten after
every case, so a run stopped part-way still leaves what it measured. Exit status: 0 the run
finished (whatever it found: judging is ``analyzer.gpu.report``'s job), 2 it could not run here
(no CUDA GPU of a supported architecture, FA4 or fa4_patch not importable), with one line on
stderr saying why.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import os
import platform
import statistics
import sys
import time
import timeit
from importlib import metadata
from pathlib import Path

import torch

SCHEMA = "fa4-audit/gpu-verify/1"

RTOL = 2e-2          # relative tolerance, bf16 (see module docstring)
ATOL = 2e-2          # absolute tolerance where the reference is ~0
ZERO_REF = 1e-6      # max|ref| at or below this: the reference is ~0, grade absolutely

BATCH, HEADS, HEAD_DIM = 2, 8, 128
SHAPES = {"sq=sk": (512, 512), "sq<sk": (256, 512)}     # name -> (seqlen_q, seqlen_k)
DIMS = {"batch": BATCH, "heads": HEADS, "head_dim": HEAD_DIM, "shapes": SHAPES}
SUPPORTED_MAJOR = (9, 10)    # SM90 (Hopper), SM100 (Blackwell)
DEVICE = "cuda"

ENTRY_POINTS = ("flash_attn_func", "_flash_attn_fwd/_flash_attn_bwd", "flash_attn_varlen_func")
MODES = ("as-is", "wrapped")
TENSORS = ("out", "dq", "dk", "dv")

# TE 2.20.2's emitted pairs (DESIGN §4). "shapes"/"entries" narrow a pair to where TE makes it.
DEFAULT_PAIRS = [
    {"label": "causal", "mask_type": "causal", "causal": True, "window": [-1, 0],
     "emitted_by_te": True, "shapes": ["sq=sk"],
     "note": "check_set_window_size: None or (-1,-1) -> (-1,0); TE keeps top-left 'causal' "
             "off FA when sq != sk, so only sq = sk"},
    {"label": "causal_bottom_right", "mask_type": "causal_bottom_right", "causal": True,
     "window": [-1, 0], "emitted_by_te": True,
     "note": "bottom-right causal, also with sq < sk"},
    {"label": "no_mask", "mask_type": "no_mask", "causal": False, "window": [-1, -1],
     "emitted_by_te": True, "note": "None -> (-1,-1) for no_mask/padding"},
    {"label": "sliding_causal", "mask_type": "causal_bottom_right", "causal": True,
     "window": [128, 0], "emitted_by_te": True, "note": "genuine sliding window, causal"},
    {"label": "sliding_both", "mask_type": "no_mask", "causal": False, "window": [64, 64],
     "emitted_by_te": True, "note": "two-sided window"},
    {"label": "diagonal_only", "mask_type": "no_mask", "causal": False, "window": [0, 0],
     "emitted_by_te": True, "note": "each query sees only its diagonal key (dq = 0)"},
    {"label": "cp_p2p_diagonal", "mask_type": "causal", "causal": True, "window": [-1, 0],
     "emitted_by_te": True, "shapes": ["sq=sk"], "entries": ["_flash_attn_fwd/_flash_attn_bwd"],
     "note": "context parallelism (2.20.2), P2P diagonal tile: _flash_attn_fwd/_bwd_v4 direct"},
    {"label": "direct_noncausal_-1_0", "mask_type": "(direct FA call)", "causal": False,
     "window": [-1, 0], "emitted_by_te": False,
     "note": "not emitted by TE (it maps (-1,0) to (-1,-1) without causal); users call FA "
             "directly like this"},
]


# --------------------------------------------------------------------------- reference

def intended_mask(causal: bool, left, right, seqlen_q: int, seqlen_k: int, device=None):
    """TE's intended key band as a (seqlen_q, seqlen_k) bool tensor.

    Row i keeps key j with ``i + d - left <= j <= i + d + right`` (d = seqlen_k - seqlen_q,
    bottom-right alignment); a side that is -1 or None is unbounded; ``causal`` adds
    ``j <= i + d``. Other negative values are not something TE emits: ValueError.
    """
    for name, side in (("left", left), ("right", right)):
        if side is not None and (isinstance(side, bool) or not isinstance(side, int) or side < -1):
            raise ValueError(f"window {name}={side!r}: TE emits -1 (unbounded) or w >= 0")
    d = seqlen_k - seqlen_q
    i = torch.arange(seqlen_q, device=device).unsqueeze(1)
    j = torch.arange(seqlen_k, device=device).unsqueeze(0)
    keep = torch.ones(seqlen_q, seqlen_k, dtype=torch.bool, device=device)
    if left is not None and left >= 0:
        keep &= j >= i + d - left
    if right is not None and right >= 0:
        keep &= j <= i + d + right
    if causal:
        keep &= j <= i + d
    return keep


def reference(q, k, v, dout, mask, softmax_scale: float) -> dict:
    """Attention forward and backward in float64 under ``mask`` (True = keep).

    Tensors are (batch, seqlen, heads, dim); returns out, dq, dk, dv in that layout and lse as
    (batch, heads, seqlen_q). A row with no key gets out = 0, lse = -inf and zero gradients.
    The backward is the closed form (dS = P * (dP - rowsum(dO * O))), checked against autograd
    by tests/test_gpu.py.
    """
    qh, kh, vh, doh = (t.to(torch.float64).transpose(1, 2) for t in (q, k, v, dout))
    s = torch.matmul(qh, kh.transpose(-1, -2)) * softmax_scale
    s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse.unsqueeze(-1))
    p = torch.where(mask, p, torch.zeros((), dtype=p.dtype, device=p.device))
    o = torch.matmul(p, vh)
    dp = torch.matmul(doh, vh.transpose(-1, -2))
    delta = (doh * o).sum(dim=-1, keepdim=True)
    ds = p * (dp - delta)
    dq = torch.matmul(ds, kh) * softmax_scale
    dk = torch.matmul(ds.transpose(-1, -2), qh) * softmax_scale
    dv = torch.matmul(p.transpose(-1, -2), doh)
    return {"out": o.transpose(1, 2), "lse": lse, "dq": dq.transpose(1, 2),
            "dk": dk.transpose(1, 2), "dv": dv.transpose(1, 2)}


# --------------------------------------------------------------------------- grading

def compare(x, ref) -> dict:
    """Error of ``x`` against the float64 ``ref``: relative to max|ref|, absolute where ~0."""
    if x is None:
        return {"metric": "missing", "value": None, "tol": None, "ok": False}
    if tuple(x.shape) != tuple(ref.shape):
        return {"metric": "shape", "value": None, "tol": None, "ok": False,
                "detail": f"shape {tuple(x.shape)} != reference {tuple(ref.shape)}"}
    x64 = x.detach().to(torch.float64)
    finite = bool(torch.isfinite(x64).all())
    diff = (x64 - ref).abs()
    err = float(diff.max()) if finite else math.inf
    ref_max = float(ref.abs().max())
    if ref_max <= ZERO_REF:
        return {"metric": "abs", "value": err, "tol": ATOL, "ok": finite and err <= ATOL,
                "finite": finite}
    value = err / ref_max
    return {"metric": "rel", "value": value, "tol": RTOL, "ok": finite and value <= RTOL,
            "finite": finite}


def grade(got: dict, ref: dict) -> dict:
    """Grade one call's tensors. The all-zero output and all -inf LSE flags are kept apart
    from the tolerance, and named first among the failures."""
    out = got.get("out")
    rec: dict = {}
    rec["out_all_zero"] = bool(out is not None and out.numel() > 0 and not bool(out.any()))
    lse = got.get("lse")
    rec["lse_returned"] = lse is not None
    rec["lse_all_neginf"] = (bool(torch.isneginf(lse).all()) if lse is not None else None)
    if lse is not None and tuple(lse.shape) == tuple(ref["lse"].shape):
        ref_lse = ref["lse"]
        both_inf = torch.isneginf(lse.to(torch.float64)) & torch.isneginf(ref_lse)
        d = (lse.to(torch.float64) - ref_lse).abs().masked_fill(both_inf, 0.0)
        rec["lse_max_abs_err"] = float(d.max()) if bool(torch.isfinite(d).all()) else math.inf
    else:
        rec["lse_max_abs_err"] = None
    rec["errors"] = {name: compare(got.get(name), ref[name]) for name in TENSORS}
    failures = []
    if rec["out_all_zero"]:
        failures.append("output all zero")
    if rec["lse_all_neginf"]:
        failures.append("LSE all -inf")
    for name in TENSORS:
        e = rec["errors"][name]
        if e["ok"]:
            continue
        if e["metric"] in ("missing", "shape"):
            failures.append(f"{name} {e['metric']}" + (f": {e['detail']}" if "detail" in e else ""))
        elif not e.get("finite", True):
            failures.append(f"{name} not finite")
        else:
            failures.append(f"{name} {e['metric']} err {e['value']:.2g} > {e['tol']:g}")
    rec["failures"] = failures
    rec["passed"] = not failures
    return rec


# --------------------------------------------------------------------------- entry points

def _split(result):
    """FA4 returns (out, lse, ...) or out; give (out, lse-or-None)."""
    if isinstance(result, (tuple, list)):
        return result[0], (result[1] if len(result) > 1 else None)
    return result, None


def _leaf(t):
    return t.detach().clone().requires_grad_(True)


def call_entry(entry: str, fns: dict, q, k, v, dout, causal: bool, window, softmax_scale: float):
    """Call one FA4 entry point the way TE does and return out / lse / dq / dk / dv in the
    reference layout ((b, s, h, d); lse (b, h, sq)). ``fns`` maps FA4 names to callables (bare
    or wrapped). ``window`` is passed exactly as given (TE's -1 included)."""
    left, right = window
    if entry == "flash_attn_func":
        ql, kl, vl = _leaf(q), _leaf(k), _leaf(v)
        out, lse = _split(fns["flash_attn_func"](ql, kl, vl, softmax_scale=softmax_scale,
                                                 causal=causal, window_size=(left, right)))
        out.backward(dout)
        return {"out": out.detach(), "lse": None if lse is None else lse.detach(),
                "dq": ql.grad, "dk": kl.grad, "dv": vl.grad}
    if entry == "flash_attn_varlen_func":
        b, sq, h, d = q.shape
        sk = k.shape[1]
        ql = _leaf(q.reshape(b * sq, h, d))
        kl = _leaf(k.reshape(b * sk, h, d))
        vl = _leaf(v.reshape(b * sk, h, v.shape[-1]))
        cu_q = torch.arange(0, (b + 1) * sq, sq, dtype=torch.int32, device=q.device)
        cu_k = torch.arange(0, (b + 1) * sk, sk, dtype=torch.int32, device=q.device)
        out, lse = _split(fns["flash_attn_varlen_func"](
            ql, kl, vl, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=sq, max_seqlen_k=sk,
            softmax_scale=softmax_scale, causal=causal, window_size=(left, right)))
        out.backward(dout.reshape(b * sq, h, dout.shape[-1]))
        if lse is not None:
            lse = lse.detach()
            if tuple(lse.shape) == (h, b * sq):          # varlen LSE is (heads, total_q)
                lse = lse.reshape(h, b, sq).permute(1, 0, 2)
        return {"out": out.detach().reshape(b, sq, h, -1), "lse": lse,
                "dq": ql.grad.reshape(b, sq, h, d), "dk": kl.grad.reshape(b, sk, h, d),
                "dv": vl.grad.reshape(b, sk, h, -1)}
    if entry == "_flash_attn_fwd/_flash_attn_bwd":
        fwd, bwd = fns["_flash_attn_fwd"], fns["_flash_attn_bwd"]
        res = fwd(q, k, v, softmax_scale=softmax_scale, causal=causal,
                  window_size_left=left, window_size_right=right, return_lse=True)
        out, lse = _split(res)
        grads = bwd(q, k, v, out, dout, lse, softmax_scale=softmax_scale, causal=causal,
                    window_size_left=left, window_size_right=right)
        dq, dk, dv = grads[:3]
        return {"out": out, "lse": lse, "dq": dq, "dk": dk, "dv": dv}
    raise ValueError(f"unknown entry point {entry!r}")


from fa4_patch.names import ENTRY_POINTS as FA4_NAMES  # noqa: E402  (the one vocabulary)


def load_fa4() -> dict:
    """The four FA4 entry points from ``flash_attn.cute.interface``."""
    mod = importlib.import_module("flash_attn.cute.interface")
    return {name: getattr(mod, name) for name in FA4_NAMES}


def load_wrap():
    """``fa4_patch.wrap`` (the wrapper under test)."""
    return importlib.import_module("fa4_patch").wrap


def wrap_all(fns: dict, wrap) -> dict:
    return {name: wrap(fn) for name, fn in fns.items()}


# --------------------------------------------------------------------------- cases

def normalise_pairs(pairs: list) -> list:
    """Validate a pair list (from JSON) and fill defaults; ValueError names what is wrong."""
    if not isinstance(pairs, list) or not pairs:
        raise ValueError("pairs: expected a non-empty JSON list")
    done = []
    for n, p in enumerate(pairs):
        if not isinstance(p, dict):
            raise ValueError(f"pairs[{n}]: expected an object")
        w = p.get("window")
        if (not isinstance(w, list) or len(w) != 2
                or any(x is not None and (isinstance(x, bool) or not isinstance(x, int)) for x in w)):
            raise ValueError(f"pairs[{n}].window: expected [left, right] of ints or null")
        if not isinstance(p.get("causal"), bool):
            raise ValueError(f"pairs[{n}].causal: expected true or false")
        intended_mask(p["causal"], w[0], w[1], 4, 4)      # rejects windows TE never emits
        shapes = p.get("shapes", list(SHAPES))
        entries = p.get("entries", list(ENTRY_POINTS))
        for s in shapes:
            if s not in SHAPES:
                raise ValueError(f"pairs[{n}].shapes: unknown {s!r} (known: {', '.join(SHAPES)})")
        for e in entries:
            if e not in ENTRY_POINTS:
                raise ValueError(f"pairs[{n}].entries: unknown {e!r}")
        q = dict(p)
        q.setdefault("label", f"{p.get('mask_type', 'pair')}{tuple(w)}")
        q.setdefault("mask_type", "")
        q.setdefault("emitted_by_te", True)
        q["shapes"], q["entries"] = list(shapes), list(entries)
        done.append(q)
    return done


def plan_cases(pairs: list, shapes: dict = SHAPES) -> list:
    """Every (entry, pair, shape, mode) to run, entry point outermost (so a run stopped
    part-way has whole entry points)."""
    cases = []
    for entry in ENTRY_POINTS:
        for p in pairs:
            if entry not in p["entries"]:
                continue
            for shape in shapes:
                if shape not in p["shapes"]:
                    continue
                sq, sk = shapes[shape]
                for mode in MODES:
                    cases.append({"entry": entry, "pair": p["label"], "mask_type": p["mask_type"],
                                  "causal": p["causal"], "window": list(p["window"]),
                                  "emitted_by_te": p["emitted_by_te"], "shape": shape,
                                  "seqlen_q": sq, "seqlen_k": sk, "mode": mode})
    return cases


def make_inputs(seqlen_q: int, seqlen_k: int, device, dtype=torch.bfloat16, seed: int = 0,
                dims: dict = DIMS):
    """Unit-variance q, k, v, dout, the same for every case of one shape (CPU generator, so the
    values do not depend on the device)."""
    g = torch.Generator().manual_seed(seed + 1000 * seqlen_q + seqlen_k)
    shape_q = (dims["batch"], seqlen_q, dims["heads"], dims["head_dim"])
    shape_k = (dims["batch"], seqlen_k, dims["heads"], dims["head_dim"])
    q, do = (torch.randn(shape_q, generator=g) for _ in range(2))
    k, v = (torch.randn(shape_k, generator=g) for _ in range(2))
    return tuple(t.to(device=device, dtype=dtype).contiguous() for t in (q, k, v, do))


def run_case(case: dict, fns: dict, inputs, ref: dict, softmax_scale: float) -> dict:
    """Run and grade one case; an exception is recorded (and fails the case), not raised."""
    rec = dict(case)
    t0 = time.perf_counter()
    try:
        got = call_entry(case["entry"], fns, *inputs, case["causal"], tuple(case["window"]),
                         softmax_scale)
        if inputs[0].is_cuda:
            torch.cuda.synchronize()
        rec.update(grade(got, ref))
        rec["error"] = None
    except Exception as exc:  # noqa: BLE001 - a kernel that raises is a result
        msg = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
        rec.update({"out_all_zero": None, "lse_returned": None, "lse_all_neginf": None,
                    "lse_max_abs_err": None, "errors": {}, "failures": [f"raised {msg}"],
                    "passed": False, "error": msg})
    rec["seconds"] = round(time.perf_counter() - t0, 3)
    return rec


def summarise(cases: list) -> dict:
    def count(sel):
        run = [c for c in sel if c.get("passed") is not None]
        return {"planned": len(sel), "run": len(run),
                "passed": sum(1 for c in run if c["passed"]),
                "failed": sum(1 for c in run if not c["passed"]),
                "not_run": len(sel) - len(run)}
    s = count(cases)
    s["as-is"] = count([c for c in cases if c["mode"] == "as-is"])
    s["wrapped"] = count([c for c in cases if c["mode"] == "wrapped"])
    return s


def run_all(fns: dict, wrapped: dict | None, pairs: list, device, *, deadline: float | None = None,
            on_case=None, seed: int = 0, dims: dict = DIMS) -> list:
    """Run every planned case; ``wrapped`` None marks the wrapped cases as errors (wrap missing).
    ``deadline`` (time.monotonic() value): cases not started by then are recorded as not run.
    ``on_case(done_list, total)`` is called after each case (for incremental writes).
    ``dims`` (batch, heads, head_dim, shapes) lets CPU tests run small; the GPU run uses DIMS."""
    cases = plan_cases(pairs, dims["shapes"])
    softmax_scale = 1.0 / math.sqrt(dims["head_dim"])
    inputs_cache, ref_cache, done = {}, {}, []
    for n, case in enumerate(cases):
        if deadline is not None and time.monotonic() > deadline:
            rec = dict(case, passed=None, failures=["not run: deadline"], error=None)
        elif case["mode"] == "wrapped" and wrapped is None:
            rec = dict(case, passed=False, failures=["fa4_patch.wrap unavailable"],
                       error="fa4_patch.wrap unavailable", errors={})
        else:
            sq, sk = case["seqlen_q"], case["seqlen_k"]
            if (sq, sk) not in inputs_cache:
                inputs_cache[(sq, sk)] = make_inputs(sq, sk, device, seed=seed, dims=dims)
            inputs = inputs_cache[(sq, sk)]
            rkey = (sq, sk, case["causal"], tuple(case["window"]))
            if rkey not in ref_cache:
                mask = intended_mask(case["causal"], *case["window"], sq, sk, device=inputs[0].device)
                ref_cache[rkey] = reference(*inputs, mask, softmax_scale)
            use = wrapped if case["mode"] == "wrapped" else fns
            rec = run_case(case, use, inputs, ref_cache[rkey], softmax_scale)
        done.append(rec)
        if on_case is not None:
            on_case(done, len(cases))
    return done


# --------------------------------------------------------------------------- timing

def _dummy_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None, causal=False,
                window_size=(None, None), learnable_sink=None, softcap=0.0, num_splits=1,
                pack_gqa=None, deterministic=False, return_lse=False):
    """Stands in for flash_attn_func (same leading parameters, window_size at index 7)."""
    return window_size


def _dummy_fwd(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None,
               seqused_k=None, max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
               page_table=None, softmax_scale=None, causal=False, softcap=None,
               window_size_left=None, window_size_right=None, return_lse=False):
    """Stands in for _flash_attn_fwd (window_size_left/right keywords)."""
    return window_size_left, window_size_right


def wrapper_overhead_cpu(wrap, number: int = 100_000, repeat: int = 5) -> dict:
    """Pure-Python cost of ``wrap`` per call, on dummy functions (no tensors, no GPU)."""
    q = k = v = object()
    wf, wfwd = wrap(_dummy_func), wrap(_dummy_fwd)
    calls = {
        "window_size=(-1, 0) by keyword": (
            lambda: _dummy_func(q, k, v, causal=True, window_size=(-1, 0)),
            lambda: wf(q, k, v, causal=True, window_size=(-1, 0)), (None, 0)),
        "window_size=(-1, 0) by position": (
            lambda: _dummy_func(q, k, v, None, None, None, True, (-1, 0)),
            lambda: wf(q, k, v, None, None, None, True, (-1, 0)), (None, 0)),
        "no window argument": (
            lambda: _dummy_func(q, k, v, causal=True),
            lambda: wf(q, k, v, causal=True), (None, None)),
        "window_size_left=-1, window_size_right=0": (
            lambda: _dummy_fwd(q, k, v, causal=True, window_size_left=-1, window_size_right=0),
            lambda: wfwd(q, k, v, causal=True, window_size_left=-1, window_size_right=0),
            (None, 0)),
    }
    rows = []
    for name, (bare, wrapped, expect) in calls.items():
        got = tuple(wrapped())
        tb = [t / number * 1e9 for t in timeit.repeat(bare, number=number, repeat=repeat)]
        tw = [t / number * 1e9 for t in timeit.repeat(wrapped, number=number, repeat=repeat)]
        rows.append({"call": name, "bare_ns": round(min(tb), 1), "wrapped_ns": round(min(tw), 1),
                     "overhead_ns": round(min(tw) - min(tb), 1),
                     "overhead_ns_median": round(statistics.median(tw) - statistics.median(tb), 1),
                     "normalised_to": list(got), "normalised_ok": got == expect})
    return {"number": number, "repeat": repeat, "statistic": "min over repeats (median also given)",
            "python": sys.version.split()[0], "rows": rows}


def time_forward(fns: dict, wrapped: dict | None, *, batch=2, seqlen=4096, heads=16, dim=128,
                 warmup=20, iters=50, rounds=8, device="cuda") -> dict:
    """Causal forward of flash_attn_func, bare vs wrapped, CUDA events around each call,
    variants interleaved round by round, the order rotated every round (each variant goes
    first equally often, so no variant always follows a synchronize); median (and p10/p90)
    over rounds*iters calls. host_us is the time the Python call takes to return (launch
    included, no synchronisation)."""
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(batch, seqlen, heads, dim, generator=g)
               .to(device, torch.bfloat16) for _ in range(3))
    bare = fns["flash_attn_func"]
    variants = [("bare, window_size default (None, None)", bare, {})]
    if wrapped is not None:
        variants.append(("wrapped, window_size=(-1, 0) as TE passes it",
                         wrapped["flash_attn_func"], {"window_size": (-1, 0)}))
        variants.append(("wrapped, window_size default (None, None)",
                         wrapped["flash_attn_func"], {}))
    variants.append(("as-is, window_size=(-1, 0): empty band, wrong output",
                     bare, {"window_size": (-1, 0)}))
    samples = {name: [] for name, _, _ in variants}
    host = {name: [] for name, _, _ in variants}
    with torch.no_grad():
        for name, f, kw in variants:
            for _ in range(warmup):
                f(q, k, v, causal=True, **kw)
        torch.cuda.synchronize()
        for r in range(rounds):
            shift = r % len(variants)
            for name, f, kw in variants[shift:] + variants[:shift]:
                events = []
                for _ in range(iters):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    t0 = time.perf_counter()
                    s.record()
                    f(q, k, v, causal=True, **kw)
                    e.record()
                    host[name].append((time.perf_counter() - t0) * 1e6)
                    events.append((s, e))
                torch.cuda.synchronize()
                samples[name].extend(s.elapsed_time(e) for s, e in events)
    rows = []
    for name, _, _ in variants:
        xs = sorted(samples[name])
        rows.append({"variant": name, "median_ms": round(statistics.median(xs), 4),
                     "p10_ms": round(xs[len(xs) // 10], 4), "p90_ms": round(xs[(9 * len(xs)) // 10], 4),
                     "host_us_median": round(statistics.median(host[name]), 1), "n": len(xs)})
    flops = 4 * batch * heads * seqlen * seqlen * dim / 2       # causal: half the matrix
    for r in rows:
        r["tflops"] = round(flops / (r["median_ms"] * 1e-3) / 1e12, 1)
    return {"shape": {"batch": batch, "seqlen": seqlen, "heads": heads, "dim": dim,
                      "dtype": "bfloat16", "causal": True},
            "method": f"CUDA events per call, {warmup} warm-up calls per variant, "
                      f"{rounds} interleaved rounds x {iters} calls, order rotated each round",
            "rows": rows}


# --------------------------------------------------------------------------- environment

def _dist_version(name: str):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _sha256(path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def environment() -> dict:
    env = {"python": sys.version.split()[0], "platform": platform.platform(),
           "torch": torch.__version__, "torch_cuda": torch.version.cuda}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update({"gpu": props.name, "capability": f"{props.major}.{props.minor}",
                    "multiprocessors": props.multi_processor_count,
                    "gpu_memory_gib": round(props.total_memory / 2**30, 1)})
    for dist in ("flash-attn-4", "nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-base",
                 "nvidia-cutlass-dsl-libs-cu13", "nvidia-cutlass-dsl-libs-cu12", "quack-kernels",
                 "apache-tvm-ffi", "torch-c-dlpack-ext", "cuda-bindings"):
        env[dist] = _dist_version(dist)
    mod = sys.modules.get("flash_attn.cute.interface")
    if mod is not None:
        env["fa4_interface_path"] = mod.__file__
    try:
        import cutlass  # noqa: PLC0415
        env["cutlass_module_version"] = getattr(cutlass, "__version__", None)
    except Exception:  # noqa: BLE001
        env["cutlass_module_version"] = None
    patch = sys.modules.get("fa4_patch")
    if patch is not None:
        pdir = Path(patch.__file__).parent
        env["fa4_patch"] = {p.name: _sha256(p) for p in sorted(pdir.glob("*.py"))
                            if p.name in ("__init__.py", "wrapper.py", "normalize.py")}
    env["git_commit"] = os.environ.get("FA4_AUDIT_COMMIT")
    return env


def unavailable_reason(load=load_fa4, load_wrap_fn=load_wrap) -> str | None:
    """Why the real kernels cannot be verified on this machine, or None when they can."""
    if not torch.cuda.is_available():
        return f"no CUDA GPU visible to torch {torch.__version__} (needs an SM90 or SM100 GPU)"
    major, minor = torch.cuda.get_device_capability(0)
    if major not in SUPPORTED_MAJOR:
        return (f"GPU {torch.cuda.get_device_name(0)} is SM{major}{minor}; "
                f"verification covers SM90 and SM100 only")
    try:
        load()
    except Exception as exc:  # noqa: BLE001
        return f"flash_attn.cute.interface (flash-attn-4) not importable: {type(exc).__name__}: {exc}"
    try:
        load_wrap_fn()
    except Exception as exc:  # noqa: BLE001
        return f"fa4_patch.wrap not importable: {type(exc).__name__}: {exc}"
    return None


# --------------------------------------------------------------------------- main

def jsonable(x):
    """Strict JSON: non-finite floats become the strings "inf", "-inf", "nan"."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(jsonable(data), indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m analyzer.gpu.harness",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, metavar="RESULT.json", help="where to write the result")
    p.add_argument("--pairs", metavar="PAIRS.json",
                   help="JSON list of {mask_type, causal, window: [L, R], ...} "
                        "(default: TE 2.20.2's emitted pairs)")
    p.add_argument("--no-timing", action="store_true", help="skip the GPU timing and the CPU overhead")
    p.add_argument("--deadline", type=float, default=None, metavar="SECONDS",
                   help="start no new case after this many seconds (they are recorded as not run)")
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    started = time.monotonic()
    try:
        pairs = normalise_pairs(json.loads(Path(args.pairs).read_text()) if args.pairs
                                else DEFAULT_PAIRS)
    except (OSError, ValueError) as exc:
        print(f"harness: error: --pairs: {exc}", file=sys.stderr)
        return 2
    reason = unavailable_reason()
    if reason is not None:
        print(f"harness: cannot run here: {reason}", file=sys.stderr)
        return 2
    fns = load_fa4()
    wrapped = wrap_all(fns, load_wrap())
    out = Path(args.out)
    result = {"schema": SCHEMA, "environment": environment(),
              "config": {"batch": DIMS["batch"], "heads": DIMS["heads"], "head_dim": DIMS["head_dim"],
                         "shapes": {k: {"seqlen_q": v[0], "seqlen_k": v[1]}
                                    for k, v in DIMS["shapes"].items()},
                         "dtype": "bfloat16", "reference": "float64, TE's intended mask "
                         "(bottom-right, -1 = unbounded)", "rtol": RTOL, "atol": ATOL,
                         "zero_ref": ZERO_REF, "seed": args.seed,
                         "error_metric": "max|x-ref|/max|ref| (rel); max|x-ref| (abs) where "
                                         "max|ref| <= zero_ref"},
              "pairs": pairs, "cases": [], "summary": {}, "timing": None,
              "wrapper_overhead_cpu": None, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "complete": False}

    def on_case(done, total):
        c = done[-1]
        status = "PASS" if c["passed"] else ("not run" if c["passed"] is None else
                                            "FAIL: " + "; ".join(c["failures"]))
        print(f"[{len(done)}/{total}] {c['entry']} {c['pair']} causal={c['causal']} "
              f"window={tuple(c['window'])} {c['shape']} {c['mode']}: {status} "
              f"({c.get('seconds', 0)} s)", file=sys.stderr, flush=True)
        result["cases"] = done
        result["summary"] = summarise(done)
        _write_json(out, result)

    deadline = None if args.deadline is None else started + args.deadline
    result["cases"] = run_all(fns, wrapped, pairs, DEVICE, deadline=deadline, on_case=on_case,
                              seed=args.seed, dims=DIMS)
    result["summary"] = summarise(result["cases"])
    _write_json(out, result)
    if not args.no_timing:
        try:
            result["timing"] = time_forward(fns, wrapped)
        except Exception as exc:  # noqa: BLE001
            result["timing"] = {"error": f"{type(exc).__name__}: {exc}"}
        _write_json(out, result)
        result["wrapper_overhead_cpu"] = wrapper_overhead_cpu(load_wrap())
    result["seconds"] = round(time.monotonic() - started, 1)
    result["complete"] = result["summary"]["not_run"] == 0
    _write_json(out, result)
    s = result["summary"]
    print(f"harness: {s['run']}/{s['planned']} cases run; wrapped {s['wrapped']['passed']}/"
          f"{s['wrapped']['planned']} pass, as-is {s['as-is']['passed']}/{s['as-is']['planned']} "
          f"pass; wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
