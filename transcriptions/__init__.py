"""Transcriptions: hand-written equivalents of every FA4 window-resolver variant and of TE's
``check_set_window_size``, each with its provenance, in one registry.

They are the reference the audit trusts when it cannot read a real source, and the yardstick
the real, extracted functions are checked against (``fa4-audit table`` runs that check).
This package imports nothing of the project.

``fingerprints`` lists the normalised-source hashes (see ``analyzer.equivalence.extract``) of
the real functions each entry transcribes, as measured on the released wheels; an extracted
function whose hash is not listed anywhere is reported as a *new* variant, never mapped to a
known one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from transcriptions import fa4, te

FA4_REPO = "https://github.com/Dao-AILab/flash-attention"
TE_REPO = "https://github.com/NVIDIA/TransformerEngine"


def _fa4_betas(first: int, last: int) -> tuple[str, ...]:
    # 4.0.0b6 was never published on PyPI; the others in the range were.
    return tuple(f"4.0.0b{n}" for n in range(first, last + 1) if n != 6)


@dataclass(frozen=True)
class Transcription:
    name: str                   # variant name shown in reports
    kind: str                   # "fa4-resolver" | "te-window"
    role: str                   # "fwd" | "bwd" | "shared" (fa4) ; "check" (te)
    repository: str
    commit: str                 # a commit whose text the rule was read from
    releases: tuple[str, ...]   # released versions that ship this rule
    where: str                  # where it lives in those releases
    function: Callable
    fingerprints: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "role": self.role,
                "repository": self.repository, "commit": self.commit,
                "releases": list(self.releases), "where": self.where,
                "fingerprints": list(self.fingerprints)}


REGISTRY: tuple[Transcription, ...] = (
    Transcription(
        name="inline", kind="fa4-resolver", role="fwd", repository=FA4_REPO,
        commit="v4.0.0.beta3 wheel (no named commit; read from the released files)",
        releases=_fa4_betas(3, 4),
        where="flash_attn/cute/interface.py: statements inside _flash_attn_fwd",
        function=fa4.inline_fwd,
        fingerprints=("d4eb102c4fb578c5",),
    ),
    Transcription(
        name="inline", kind="fa4-resolver", role="bwd", repository=FA4_REPO,
        commit="v4.0.0.beta3 wheel (no named commit; read from the released files)",
        releases=_fa4_betas(3, 4),
        where="flash_attn/cute/interface.py: statements inside _flash_attn_bwd",
        function=fa4.inline_bwd,
        fingerprints=("b2059ffaf1a896ba",),
    ),
    Transcription(
        name="pre-2490", kind="fa4-resolver", role="shared", repository=FA4_REPO,
        commit="59cf537812", releases=_fa4_betas(5, 29),
        where="flash_attn/cute/interface.py: _resolve_causal_local_window",
        function=fa4.resolve_pre_2490,
        fingerprints=("efa18787c3ef642f",),
    ),
    Transcription(
        name="post-2490", kind="fa4-resolver", role="shared", repository=FA4_REPO,
        commit="7d6a6d25", releases=_fa4_betas(30, 36),
        where="flash_attn/cute/interface.py: _resolve_causal_local_window",
        function=fa4.resolve_post_2490,
        fingerprints=("b014f205ab2f5454",),
    ),
    Transcription(
        name="te-check-set-window-size", kind="te-window", role="check", repository=TE_REPO,
        commit="v2.20.2 (identical text in v2.15.0 .. v2.19.0)",
        releases=("2.15.0", "2.16.0", "2.16.1", "2.17.0", "2.17.1", "2.18.0", "2.19.0", "2.20.2"),
        where="transformer_engine/pytorch/attention/dot_product_attention/utils.py: check_set_window_size",
        function=te.check_set_window_size,
        fingerprints=("50a34e5720aaeae0",),
    ),
)


def by_fingerprint(fingerprint: str, kind: str | None = None) -> Transcription | None:
    """The transcription whose real counterpart has this fingerprint, or None (a new variant)."""
    for t in REGISTRY:
        if fingerprint in t.fingerprints and (kind is None or t.kind == kind):
            return t
    return None


def get(name: str, role: str | None = None) -> Transcription:
    """A registry entry by variant name (and role, for the inline form's fwd/bwd pair)."""
    hits = [t for t in REGISTRY if t.name == name and (role is None or t.role == role)]
    if len(hits) != 1:
        raise KeyError(f"no single transcription named {name!r} (role {role!r})")
    return hits[0]


def for_release(version: str, kind: str = "fa4-resolver") -> list[Transcription]:
    """The transcriptions that the registry says ship in a release."""
    return [t for t in REGISTRY if t.kind == kind and version in t.releases]


TE_CHECK = get("te-check-set-window-size")

__all__ = ["Transcription", "REGISTRY", "TE_CHECK", "by_fingerprint", "get", "for_release",
           "fa4", "te", "FA4_REPO", "TE_REPO"]
