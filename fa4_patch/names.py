"""One vocabulary of FlashAttention 4 names, shared by ``fa4_patch``, the call-site pass
(``analyzer.sites``) and the GPU harness (``analyzer.gpu``).

Imports nothing (``fa4_patch``'s runtime part must not depend on ``analyzer``).

Parameter lists were read from the released ``flash_attn/cute/interface.py`` of 4.0.0b36 (the
newest release when written); the positions of the window parameters moved between releases
(``WINDOW_POSITIONS`` lists every position seen, b3 .. b36). The call-site pass prefers the
parameter list of the release it audits when it has one; these are its fallback.
"""

from __future__ import annotations

#: modules whose functions are FA4 (the package re-exports the public two)
FA4_MODULES = ("flash_attn.cute", "flash_attn.cute.interface")

#: the window parameters, in either spelling
WINDOW_KEYS = ("window_size", "window_size_left", "window_size_right")

#: the four entry points TE binds, plus get_scheduler_metadata (b25+), which resolves windows too
ENTRY_POINTS = ("flash_attn_func", "flash_attn_varlen_func", "_flash_attn_fwd", "_flash_attn_bwd")
WINDOW_ENTRIES = ENTRY_POINTS + ("get_scheduler_metadata",)

#: the function every release since b5 resolves (causal, window) with
RESOLVER = "_resolve_causal_local_window"

#: module-level names of ``flash_attn.cute.interface`` / ``flash_attn.cute`` whose source
#: never mentions a window in any release b3 .. b36 (read from each release's files; the
#: test ``tests/test_extract.py::test_window_free_names_are_measured`` reads them again):
#: a tree may call or hand them on freely. Every other name of FA4 -- ``FlashAttnFunc`` and
#: ``FlashAttnVarlenFunc`` (their ``apply`` hands the window straight to ``_flash_attn_fwd``),
#: a name a later release adds, a name of another FA4 module -- may carry a window.
WINDOW_FREE = frozenset({
    "BIN_BATCH_SEARCH_THRESH", "BwdConfig", "FwdConfig", "S_PING_PONG_MIN_N_BLOCKS_PER_SPLIT",
    "USE_BLOCKS_TO_BATCH", "_LEARNABLE_SINK_DTYPES", "_blocks_to_batch_size",
    "_bwd_dsink_reduce", "_bwd_postprocess_convert", "_bwd_preprocess",
    "_compile_bwd_postprocess", "_compile_bwd_preprocess", "_compile_fwd_combine",
    "_compile_options", "_compile_sparse_mla_dk", "_compile_sparse_mla_dq_dqv",
    "_compute_blocks_to_batch", "_compute_tile_cumsum", "_fit_sm90_fwd_tile_to_block_sparsity",
    "_flash_attn_bwd_sparse_mla", "_flash_attn_fwd_combine", "_get_device_arch",
    "_get_scheduler_metadata", "_mla_1cta_route", "_mla_fwd_plan", "_parse_arch_str",
    "_sparse_mla_dk", "_sparse_mla_dq_dqv", "_tile_size_bwd_sm90", "_tile_size_fwd_sm90",
    "_validate_gather_bwd_kwargs", "_validate_head_dims", "_validate_tensor",
    "flash_attn_combine", "make_fake_bwd_tensors", "maybe_contiguous", "num_splits_heuristic",
    "torch2cute_dtype_map"})

#: metadata every module has: nothing is called through it
METADATA = frozenset({"__version__", "__name__", "__file__", "__doc__", "__all__", "__spec__",
                      "__path__", "__package__", "__loader__"})


def window_free(module: str, name: str) -> bool:
    """``module.name`` is something of FA4 no window goes through: metadata, the resolver (a
    pure function of the window it is given), or a name of FA4's interface in
    ``WINDOW_FREE``. One rule for the import graph and the escape check."""
    return name in METADATA or name == RESOLVER or \
        (module in FA4_MODULES and name in WINDOW_FREE)

#: positional index of each window parameter, every value seen across releases (b3-b8 / b9-b36)
WINDOW_POSITIONS: dict[str, dict[str, tuple[int, ...]]] = {
    "flash_attn_func": {"window_size": (5, 7)},
    "flash_attn_varlen_func": {"window_size": (12, 15)},
    "_flash_attn_fwd": {"window_size_left": (13, 15), "window_size_right": (14, 16)},
    "_flash_attn_bwd": {"window_size_left": (9,), "window_size_right": (10,)},
    "get_scheduler_metadata": {"window_size_left": (9,), "window_size_right": (10,)},
}

#: the first position any entry point takes a window at, on any release (5: flash_attn_func
#: on b3-b8): a call, or a ``functools.partial``, with more positional arguments may hand one
FIRST_WINDOW_AT = min(i for keys in WINDOW_POSITIONS.values() for at in keys.values() for i in at)

#: positional index of ``causal``, every value seen across releases (b3-b36, read from each
#: release's interface.py); a call that passes it by position means a different argument on
#: the releases where it moved
CAUSAL_POSITIONS: dict[str, tuple[int, ...]] = {
    "flash_attn_func": (4, 6),
    "flash_attn_varlen_func": (11, 14),
    "_flash_attn_fwd": (11, 13),
    "_flash_attn_bwd": (7,),
    "get_scheduler_metadata": (8,),
}

#: positional parameter names of 4.0.0b36 (all keyword-capable; no *args / **kwargs)
PARAMS_B36: dict[str, tuple[str, ...]] = {
    "flash_attn_func": (
        "q", "k", "v", "qv", "gather_kv_indices", "softmax_scale", "causal", "window_size",
        "learnable_sink", "softcap", "num_splits", "pack_gqa", "deterministic", "score_mod",
        "score_mod_bwd", "mask_mod", "aux_tensors", "aux_scalars", "block_sparse_tensors",
        "block_sparse_tensors_bwd", "return_lse", "gather_bwd_recompute_p",
        "gather_bwd_token_chunk"),
    "flash_attn_varlen_func": (
        "q", "k", "v", "qv", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
        "min_seqlen_k", "seqused_q", "seqused_k", "gather_kv_indices", "page_table",
        "softmax_scale", "causal", "window_size", "learnable_sink", "softcap", "num_splits",
        "pack_gqa", "deterministic", "score_mod", "score_mod_bwd", "mask_mod",
        "block_sparse_tensors", "aux_tensors", "aux_scalars", "return_lse", "scheduler_metadata",
        "seqlen_k_per_split", "disable_scheduler_metadata", "gather_bwd_recompute_p",
        "gather_bwd_token_chunk"),
    "_flash_attn_fwd": (
        "q", "k", "v", "qv", "cu_seqlens_q", "cu_seqlens_k", "seqused_q", "seqused_k",
        "max_seqlen_q", "max_seqlen_k", "min_seqlen_k", "page_table", "softmax_scale", "causal",
        "softcap", "window_size_left", "window_size_right", "learnable_sink", "tile_mn",
        "mma_pv_is_rs", "intra_wg_overlap", "num_threads", "num_splits", "pack_gqa", "_arch",
        "score_mod", "mask_mod", "block_sparse_tensors", "return_lse", "out", "lse",
        "aux_tensors", "aux_scalars", "q_descale", "k_descale", "v_descale", "gather_kv_indices",
        "scheduler_metadata", "seqlen_k_per_split", "disable_scheduler_metadata",
        "gather_bwd_recompute_p"),
    "_flash_attn_bwd": (
        "q", "k", "v", "out", "dout", "lse", "softmax_scale", "causal", "softcap",
        "window_size_left", "window_size_right", "m_block_size", "n_block_size", "num_threads",
        "pack_gqa", "num_stages_Q", "num_stages_dO", "SdP_swapAB", "dKV_swapAB", "dQ_swapAB",
        "AtomLayoutMSdP", "AtomLayoutNdKV", "AtomLayoutMdQ", "V_in_regs", "cu_seqlens_q",
        "cu_seqlens_k", "seqused_q", "seqused_k", "max_seqlen_q", "max_seqlen_k",
        "deterministic", "dq", "dk", "dv", "score_mod", "score_mod_bwd", "mask_mod",
        "aux_tensors", "aux_scalars", "block_sparse_tensors", "dlse", "learnable_sink"),
    "get_scheduler_metadata": (
        "max_seqlen_q", "max_seqlen_k", "nheads", "nheads_kv", "headdim", "num_splits",
        "headdim_v", "pack_gqa", "causal", "window_size_left", "window_size_right",
        "seqlen_k_new", "cu_seqlens_q", "cu_seqlens_k", "cu_seqlens_k_new", "seqused_q",
        "seqused_k", "leftpad_k", "seqlen_k_per_split", "_arch"),
}

#: how many leading parameters have no default (q, k, v for the attention entries)
REQUIRED_B36 = {"flash_attn_func": 3, "flash_attn_varlen_func": 3, "_flash_attn_fwd": 3,
                "_flash_attn_bwd": 6, "get_scheduler_metadata": 6}


def window_keys_of(entry: str) -> tuple[str, ...]:
    """The window parameters ``entry`` takes: ("window_size",) or the left/right pair."""
    return tuple(WINDOW_POSITIONS.get(entry, {}))
