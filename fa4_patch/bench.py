"""Per-call overhead of ``fa4_patch.wrap`` over the bare call (printed, never asserted).

Run: ``.venv/bin/python -m fa4_patch.bench [--number N] [--repeat R]``.

The targets are stand-ins with FA4 b36's real parameter lists (read from this file, not from
FA4, which needs CUDA) and an empty body, so what is timed is the call machinery alone: the bare
call, the wrapped call, and their difference, for the call shapes TE uses (window by keyword,
by position, the left/right pair by keyword, and no window at all). Minimum over repeats.
"""

from __future__ import annotations

import argparse
import sys
import timeit

from fa4_patch.wrapper import wrap


def flash_attn_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None, causal=False,
                    window_size=(None, None), learnable_sink=None, softcap=0.0, num_splits=1,
                    pack_gqa=None, deterministic=False, score_mod=None, score_mod_bwd=None,
                    mask_mod=None, aux_tensors=None, aux_scalars=None, block_sparse_tensors=None,
                    block_sparse_tensors_bwd=None, return_lse=False, gather_bwd_recompute_p=None,
                    gather_bwd_token_chunk=None):
    return None


def _flash_attn_fwd(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None,
                    seqused_k=None, max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
                    page_table=None, softmax_scale=None, causal=False, softcap=None,
                    window_size_left=None, window_size_right=None, learnable_sink=None,
                    tile_mn=None, mma_pv_is_rs=True, intra_wg_overlap=True, num_threads=384,
                    num_splits=1, pack_gqa=None, _arch=None, score_mod=None, mask_mod=None,
                    block_sparse_tensors=None, return_lse=False, out=None, lse=None,
                    aux_tensors=None):
    return None


CASES = [
    ("flash_attn_func, window_size=(-1, 0) by keyword", flash_attn_func,
     "f(q, k, v, softmax_scale=0.1, causal=True, window_size=(-1, 0))"),
    ("flash_attn_func, window_size=(128, 0) by keyword (unchanged)", flash_attn_func,
     "f(q, k, v, softmax_scale=0.1, causal=True, window_size=(128, 0))"),
    ("flash_attn_func, window_size=(-1, 0) at position 7", flash_attn_func,
     "f(q, k, v, None, None, 0.1, True, (-1, 0))"),
    ("flash_attn_func, no window", flash_attn_func, "f(q, k, v, softmax_scale=0.1, causal=True)"),
    ("_flash_attn_fwd, window_size_left/right=-1/0 by keyword", _flash_attn_fwd,
     "f(q, k, v, softmax_scale=0.1, causal=True, window_size_left=-1, window_size_right=0, "
     "return_lse=True)"),
]


def _inline_wrap():
    """The codemod's self-contained wrapper factory (the text it writes into TE)."""
    import functools

    from fa4_patch.codemod import HELPER_SOURCE, POSITIONS, WRAP_NAME   # needs libcst

    ns: dict = {"functools": functools}
    exec(compile(HELPER_SOURCE, "<fa4_patch inline helper>", "exec"), ns)
    return lambda fn: ns[WRAP_NAME](fn, **dict(POSITIONS[fn.__name__]))


def _trampoline(fn):
    """The floor any Python-level wrapper pays: forward ``*args, **kwargs`` and nothing else."""
    def trampoline(*args, **kwargs):
        return fn(*args, **kwargs)
    return trampoline


def measure(number: int, repeat: int):
    rows = []
    for label, fn, stmt in CASES:
        env = {"q": 1, "k": 2, "v": 3}
        bare = min(timeit.repeat(stmt, globals={**env, "f": fn}, number=number, repeat=repeat))
        wrapped = min(timeit.repeat(stmt, globals={**env, "f": wrap(fn)}, number=number,
                                    repeat=repeat))
        tramp = min(timeit.repeat(stmt, globals={**env, "f": _trampoline(fn)}, number=number,
                                  repeat=repeat))
        inline = min(timeit.repeat(stmt, globals={**env, "f": _inline_wrap()(fn)},
                                   number=number, repeat=repeat))
        rows.append((label, bare / number * 1e9, wrapped / number * 1e9, tramp / number * 1e9,
                     inline / number * 1e9))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fa4_patch.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--number", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rows = measure(args.number, args.repeat)
    print(f"fa4_patch.wrap overhead per call (Python {sys.version.split()[0]}, "
          f"min of {args.repeat} x {args.number} calls; goal <= 1000 ns)")
    width = max(len(r[0]) for r in rows)
    print(f"{'call':<{width}}  {'bare':>6}  {'wrap':>6}  {'overhead':>8}  {'floor':>6}  "
          f"{'inline':>6}")
    for label, bare, wrapped, tramp, inline in rows:
        print(f"{label:<{width}}  {bare:6.0f}  {wrapped:6.0f}  {wrapped - bare:8.0f}  "
              f"{tramp - bare:6.0f}  {inline - bare:6.0f}")
    print("ns per call. overhead = fa4_patch.wrap - bare; floor = the overhead of a wrapper that "
          "only forwards *args, **kwargs; inline = the overhead of the codemod's _fa4_audit_wrap")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
