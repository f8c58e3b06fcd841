"""The sound byte prefilter.

A file can only *originate* something the pass reports if its bytes spell ``flash_attn`` (every
FA origin module -- ``flash_attn``, ``flash_attn.cute``, ``flash_attn_interface``,
``flash_attn_2_cuda`` -- contains it), a recognised wrapper's name, or a name bound elsewhere to
an FA entry point (an import of a re-export). A file that spells none of them can still
*forward* an FA callee or a window dict it is given (a helper); those files are found by
following callers and callees by name (``names``), never by skipping silently.
"""

from __future__ import annotations

SEED = (b"flash_attn",)


def seeds(wrapper_names) -> tuple[bytes, ...]:
    extra = {b"fa4_patch", b"_fa4_audit_wrap", b"_fa4_audit_normalize_pair"}
    extra |= {n.rsplit(".", 1)[-1].encode() for n in wrapper_names if n}
    return SEED + tuple(sorted(extra))


def matches(data: bytes, needles) -> bool:
    return any(n in data for n in needles)


def mentions_fa(data: bytes) -> bool:
    """For fail-closed decisions: could this file matter at all?"""
    return b"flash_attn" in data or b"window_size" in data
