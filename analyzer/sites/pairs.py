"""Windows judged as pairs: what a (causal, left, right) becomes on an FA4 resolver, against
what the framework means by it (``-1`` and ``None`` = unbounded side, bottom-right aligned).

A pair is *wrong* on a release when the band that release's resolver produces differs from the
intended band (``analyzer.equivalence.semantics``). ``(-1, -1)`` is full attention on every
released resolver, so it is never wrong; only a single negative side next to a non-negative one
breaks, and only on resolvers after flash-attention PR #2490.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from analyzer.equivalence.model import ResolvedState
from analyzer.equivalence.semantics import band_verdict


@dataclass(frozen=True)
class Resolver:
    """An audited FA4 release (or a transcribed variant) as a function
    ``(causal, left, right) -> (causal, local, left, right)``."""

    label: str
    fn: Callable = None  # type: ignore[assignment]
    variant: str = ""

    def __hash__(self):
        return hash((self.label, self.variant))


def default_resolvers() -> list[Resolver]:
    """The two released rules (as transcribed), for a pass that audits no named release."""
    import transcriptions

    out = []
    for name in ("pre-2490", "post-2490"):
        t = transcriptions.get(name)
        first, last = t.releases[0], t.releases[-1]
        out.append(Resolver(f"{name} ({first}..{last})", t.function, name))
    return out


def resolvers_for(fa4_sources) -> list[Resolver]:
    """One resolver per audited FA4 source, matched to its transcription by the fingerprint of
    the function the release really calls (``analyzer.equivalence.extract``). A release whose
    resolver matches no transcription raises: the pass will not judge pairs with a rule it has
    not read."""
    import transcriptions
    from analyzer.equivalence.extract import extract_fa4

    out = []
    for src in fa4_sources:
        extracted = extract_fa4(src.root)
        found = []
        for ext in extracted:
            t = transcriptions.by_fingerprint(ext.fingerprint, "fa4-resolver")
            found.append((ext, t))
        if all(t is not None for _, t in found):
            names = {t.name for _, t in found}
            if len(names) == 1:
                t = next(t for e, t in found if t.role in ("shared", "fwd"))
                out.append(Resolver(src.label(), t.function, t.name))
                continue
        # a rule no transcription matches: run the release's own function (extracted, in the
        # sandbox, memoised); the forward rule judges every entry point
        ext = next((e for e, _ in found if e.role in ("shared", "fwd")), found[0][0])
        out.append(Resolver(src.label(), _sandboxed(ext), f"read from {src.label()}"))
    return out


def _sandboxed(ext):
    from analyzer.errors import AuditError

    memo: dict = {}

    def fn(causal, left, right):
        key = (bool(causal), left, right)
        if key not in memo:
            (res,) = ext.evaluate([key])
            memo[key] = res
        res = memo[key]
        if not res.ok:
            if res.error and res.error.split(":")[0] in ("NameError", "AttributeError",
                                                         "RecursionError"):
                raise AuditError(f"{ext.path}:{ext.line}: cannot evaluate {ext.name} on "
                                 f"{key}: {res.error}")
            raise ValueError(res.error or "raised")
        return res.value

    return fn


# FA4 takes window sizes as 32-bit ints, and no sequence it runs on reaches 2**31 tokens: a
# bound that large gives the same band as no bound on every input FA4 accepts
WIDEST = 2 ** 31


def _wide(x):
    return None if isinstance(x, int) and not isinstance(x, bool) and x >= WIDEST else x


@functools.lru_cache(maxsize=65536)
def _judge(resolver: Resolver, causal_recv: bool, wl, wr, causal_in: bool, L, R):
    wl, wr, L, R = _wide(wl), _wide(wr), _wide(L), _wide(R)
    try:
        state = ResolvedState.from_value(resolver.fn(bool(causal_recv), wl, wr))
    except Exception as exc:  # the release raises on this pair: not the intended band
        return "raises", f"raises {type(exc).__name__}"
    # a sentinel below -1 the tree writes (``-2``, ``-(2 ** 31)``) means what -1 does: no
    # bound on that side (TE itself asserts it never passes one)
    intended = tuple(-1 if isinstance(x, int) and not isinstance(x, bool) and x < -1 else x
                     for x in (L, R))
    verdict, _ = band_verdict(state, bool(causal_in), intended)
    return verdict, state.label()


def judge(resolver: Resolver, causal_recv, wl, wr, causal_in, L, R) -> tuple[str, str]:
    """(band verdict, resolved state label) for FA4 receiving ``(causal_recv, wl, wr)`` when the
    framework meant ``(causal_in, L, R)``."""
    return _judge(resolver, bool(causal_recv), wl, wr, bool(causal_in), L, R)


def fmt_pair(L, R) -> str:
    return f"({'None' if L is None else L}, {'None' if R is None else R})"


@dataclass(frozen=True)
class PairJudgement:
    status: str          # proved | broken | unknown
    witness: str
    pairs: tuple[str, ...] = ()


def judge_pairs(resolver: Resolver, pairs: Iterable[tuple], causal: Sequence[bool],
                causal_known: bool) -> PairJudgement:
    """``pairs`` is every (L, R) a call can hand FA4 unnormalised; ``causal`` the values its
    ``causal`` can take (both when unknown, ``causal_known`` False). Broken when some pair is
    wrong for a causal value the call can pass (for every causal value when that is unknown);
    unknown when it is wrong only for a causal value the call may never pass."""
    broken, maybe = [], []
    for L, R in sorted(set(pairs), key=lambda p: (str(p[0]), str(p[1]))):
        wrong = {}
        for c in causal:
            v, label = judge(resolver, c, L, R, c, L, R)
            if v != "exact":
                wrong[c] = f"causal={c} {fmt_pair(L, R)} -> {label} ({v})"
        if not wrong:
            continue
        if causal_known or len(wrong) == len(set(causal)):
            broken.extend(wrong[c] for c in sorted(wrong, reverse=True))
        else:
            maybe.extend(f"{w} if the call passes causal={c}" for c, w in sorted(wrong.items()))
    if broken:
        return PairJudgement("broken", broken[0], tuple(broken))
    if maybe:
        return PairJudgement("unknown", maybe[0], tuple(maybe))
    return PairJudgement("proved", "every pair it can pass gives the intended band")


def signatures_of(fa4_source) -> dict:
    """entry -> (positional parameter names, required count), read from a release's
    ``flash_attn/cute/interface.py`` with ``ast`` (never imported). Entries it lacks keep the
    vocabulary's default."""
    import ast
    from pathlib import Path

    from fa4_patch import names as N

    path = Path(fa4_source.root) / "flash_attn" / "cute" / "interface.py"
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, ValueError):
        return {}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in N.WINDOW_ENTRIES:
            a = node.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
                continue
            names = tuple(x.arg for x in a.args)
            out[node.name] = (names, len(names) - len(a.defaults))
    return out
