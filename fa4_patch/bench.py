"""Per-call overhead of ``fa4_patch.wrap`` over the bare call, in every call form (printed,
never asserted).

Run: ``.venv/bin/python -m fa4_patch.bench [--number N] [--repeat R]``.

The targets are stand-ins with FA4 4.0.0b36's parameter lists (names and defaults as in the
released ``flash_attn/cute/interface.py``; FA4 itself needs CUDA) and an empty body, so what is
timed is the call machinery alone. Each form is timed as R repeats of N calls, the bare call,
``fa4_patch.wrap``, a wrapper that only forwards ``*args, **kwargs`` (the floor of any Python
wrapper) and the codemod's inline helper *interleaved* in every repeat, so a burst of load from
another process hits all four alike. The overhead is reported from the minimum (the machine at
its quietest) and from the median of the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit

from fa4_patch.wrapper import wrap


def flash_attn_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None, causal=False,
                    window_size=(None, None), learnable_sink=None, softcap=0.0, num_splits=1,
                    pack_gqa=None, deterministic=False, score_mod=None, score_mod_bwd=None,
                    mask_mod=None, aux_tensors=None, aux_scalars=None, block_sparse_tensors=None,
                    block_sparse_tensors_bwd=None, return_lse=False, gather_bwd_recompute_p=False,
                    gather_bwd_token_chunk=None):
    return None


def flash_attn_varlen_func(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None,
                           max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
                           seqused_q=None, seqused_k=None, gather_kv_indices=None,
                           page_table=None, softmax_scale=None, causal=False,
                           window_size=(None, None), learnable_sink=None, softcap=0.0,
                           num_splits=1, pack_gqa=None, deterministic=False, score_mod=None,
                           score_mod_bwd=None, mask_mod=None, block_sparse_tensors=None,
                           aux_tensors=None, aux_scalars=None, return_lse=False,
                           scheduler_metadata=None, seqlen_k_per_split=None,
                           disable_scheduler_metadata=False, gather_bwd_recompute_p=False,
                           gather_bwd_token_chunk=None):
    return None


def _flash_attn_fwd(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None,
                    seqused_k=None, max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
                    page_table=None, softmax_scale=None, causal=False, softcap=None,
                    window_size_left=None, window_size_right=None, learnable_sink=None,
                    tile_mn=None, mma_pv_is_rs=None, intra_wg_overlap=None, num_threads=384,
                    num_splits=1, pack_gqa=None, _arch=None, score_mod=None, mask_mod=None,
                    block_sparse_tensors=None, return_lse=False, out=None, lse=None,
                    aux_tensors=None, aux_scalars=None, q_descale=None, k_descale=None,
                    v_descale=None, gather_kv_indices=None, scheduler_metadata=None,
                    seqlen_k_per_split=None, disable_scheduler_metadata=False,
                    gather_bwd_recompute_p=False):
    return None


def _flash_attn_bwd(q, k, v, out, dout, lse, softmax_scale=None, causal=False, softcap=0.0,
                    window_size_left=None, window_size_right=None, m_block_size=64,
                    n_block_size=128, num_threads=256, pack_gqa=False, num_stages_Q=2,
                    num_stages_dO=2, SdP_swapAB=False, dKV_swapAB=False, dQ_swapAB=False,
                    AtomLayoutMSdP=2, AtomLayoutNdKV=2, AtomLayoutMdQ=2, V_in_regs=False,
                    cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None, seqused_k=None,
                    max_seqlen_q=None, max_seqlen_k=None, deterministic=False, dq=None, dk=None,
                    dv=None, score_mod=None, score_mod_bwd=None, mask_mod=None, aux_tensors=None,
                    aux_scalars=None, block_sparse_tensors=None, dlse=None, learnable_sink=None):
    return None


_VARLEN = "cu_seqlens_q=1, cu_seqlens_k=2, max_seqlen_q=3, max_seqlen_k=4, "
_FWD = "cu_seqlens_q=1, cu_seqlens_k=2, max_seqlen_q=3, max_seqlen_k=4, softmax_scale=0.1, causal=True, "

#: (label, target, call statement): every form TE 2.20.2 uses, plus the other ways a caller can
#: pass the window (list, one side, by position, None), so the worst form is not missed.
CASES = [
    ("flash_attn_func, window_size=(-1, 0) by keyword", flash_attn_func,
     "f(q, k, v, softmax_scale=0.1, causal=True, window_size=(-1, 0))"),
    ("flash_attn_func, window_size=(128, 0) by keyword (unchanged)", flash_attn_func,
     "f(q, k, v, softmax_scale=0.1, causal=True, window_size=(128, 0))"),
    ("flash_attn_func, window_size=[-1, 0] (list) by keyword", flash_attn_func,
     "f(q, k, v, softmax_scale=0.1, causal=True, window_size=[-1, 0])"),
    ("flash_attn_func, window_size=None by keyword", flash_attn_func,
     "f(q, k, v, softmax_scale=0.1, causal=True, window_size=None)"),
    ("flash_attn_func, window_size=(-1, 0) at position 7", flash_attn_func,
     "f(q, k, v, None, None, 0.1, True, (-1, 0))"),
    ("flash_attn_func, no window", flash_attn_func, "f(q, k, v, softmax_scale=0.1, causal=True)"),
    ("flash_attn_varlen_func, window_size=(-1, 0) by keyword", flash_attn_varlen_func,
     "f(q, k, v, " + _VARLEN + "softmax_scale=0.1, causal=True, window_size=(-1, 0))"),
    ("flash_attn_varlen_func, window_size=(-1, 0) at position 15", flash_attn_varlen_func,
     "f(q, k, v, None, 1, 2, 3, 4, None, None, None, None, None, 0.1, True, (-1, 0))"),
    ("_flash_attn_fwd, window_size_left/right=-1/0 by keyword", _flash_attn_fwd,
     "f(q, k, v, " + _FWD + "window_size_left=-1, window_size_right=0, return_lse=True)"),
    ("_flash_attn_fwd, window_size_left/right=128/0 by keyword (unchanged)", _flash_attn_fwd,
     "f(q, k, v, " + _FWD + "window_size_left=128, window_size_right=0, return_lse=True)"),
    ("_flash_attn_fwd, window_size_left=-1 only", _flash_attn_fwd,
     "f(q, k, v, " + _FWD + "window_size_left=-1, return_lse=True)"),
    ("_flash_attn_fwd, window_size_left/right=-1/0 at positions 15/16", _flash_attn_fwd,
     "f(q, k, v, None, 1, 2, None, None, 3, 4, None, None, 0.1, True, None, -1, 0)"),
    ("_flash_attn_fwd, no window", _flash_attn_fwd, "f(q, k, v, " + _FWD + "return_lse=True)"),
    ("_flash_attn_bwd, window_size_left/right=-1/0 by keyword", _flash_attn_bwd,
     "f(q, k, v, o, do, lse, softmax_scale=0.1, causal=True, window_size_left=-1, "
     "window_size_right=0, deterministic=False)"),
]


def _inline_wrap():
    """The codemod's self-contained wrapper factory (the text it writes into TE), or None when
    it cannot be loaded (the codemod needs libcst)."""
    import functools

    try:
        from fa4_patch.codemod import HELPER_SOURCE, POSITIONS, WRAP_NAME   # needs libcst
    except Exception:
        return None
    ns: dict = {"functools": functools}
    exec(compile(HELPER_SOURCE, "<fa4_patch inline helper>", "exec"), ns)
    return lambda fn: ns[WRAP_NAME](fn, **dict(POSITIONS[fn.__name__]))


def _trampoline(fn):
    """The floor any Python-level wrapper pays: forward ``*args, **kwargs`` and nothing else."""
    def trampoline(*args, **kwargs):
        return fn(*args, **kwargs)
    return trampoline


def measure(number: int, repeat: int, cases=None):
    """One dict per case: label, and per variant (bare, wrap, floor, inline) the min and the
    median of the per-call time in ns (inline None when unavailable)."""
    inline = _inline_wrap()
    rows = []
    env = {"q": 1, "k": 2, "v": 3, "o": 4, "do": 5, "lse": 6}
    for label, fn, stmt in cases or CASES:
        variants = {"bare": fn, "wrap": wrap(fn), "floor": _trampoline(fn)}
        if inline is not None:
            try:
                variants["inline"] = inline(fn)
            except Exception:
                pass
        timers = {k: timeit.Timer(stmt, globals={**env, "f": f}) for k, f in variants.items()}
        for t in timers.values():
            t.timeit(max(1, number // 10))            # warm up
        samples: dict[str, list[float]] = {k: [] for k in timers}
        for _ in range(repeat):                        # interleaved: same conditions for all
            for k, t in timers.items():
                samples[k].append(t.timeit(number) / number * 1e9)
        row = {"label": label}
        for k in ("bare", "wrap", "floor", "inline"):
            s = samples.get(k)
            row[k] = (min(s), statistics.median(s)) if s else None
        rows.append(row)
    return rows


def overhead(row, variant: str, stat: int) -> float | None:
    """``row[variant] - row["bare"]`` at ``stat`` 0 (min) or 1 (median), ns."""
    if row.get(variant) is None:
        return None
    return row[variant][stat] - row["bare"][stat]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fa4_patch.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--number", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    rows = measure(args.number, args.repeat)
    print(f"fa4_patch.wrap overhead per call (Python {sys.version.split()[0]}, {args.repeat} "
          f"interleaved repeats x {args.number} calls; goal <= 1000 ns)")
    width = max(len(r["label"]) for r in rows)
    print(f"{'call':<{width}}  {'bare':>5}  {'wrap min/med':>12}  {'floor':>5}  {'inline min/med':>14}")

    def pair(r, v):
        a, b = overhead(r, v, 0), overhead(r, v, 1)
        return "-" if a is None else f"{a:.0f}/{b:.0f}"

    for r in rows:
        print(f"{r['label']:<{width}}  {r['bare'][0]:5.0f}  {pair(r, 'wrap'):>12}  "
              f"{overhead(r, 'floor', 0):5.0f}  {pair(r, 'inline'):>14}")
    worst = max(rows, key=lambda r: overhead(r, "wrap", 1))
    print(f"ns per call. wrap / inline = overhead of fa4_patch.wrap / of the codemod's inline "
          f"helper over the bare call (min/median of repeats); floor = overhead of a wrapper "
          f"that only forwards *args, **kwargs.\nworst form (median): {worst['label']}: "
          f"{overhead(worst, 'wrap', 1):.0f} ns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
