"""transcriptions: the hand-written rules, their registry, and their agreement with the real
functions extracted from released wheels (fetched into the cache on first run)."""

from __future__ import annotations

import warnings

import pytest

import transcriptions
from transcriptions import fa4, te

V1_V2 = (fa4.inline_fwd, fa4.inline_bwd, fa4.resolve_pre_2490)
V3 = fa4.resolve_post_2490


# DESIGN.md §2, "Results on a few inputs" (mode, L, R) -- measured on the released wheels.
@pytest.mark.parametrize("causal, given, old, new", [
    (True, (-1, 0), (True, False, None, None), (False, True, -1, 0)),
    (False, (-1, -1), (False, False, None, None), (False, False, None, None)),
    (False, (-1, 0), (False, False, None, None), (False, True, -1, 0)),
    (False, (7, -8), (False, False, None, None), (False, True, 7, -8)),
    (True, (-8, 7), (True, False, None, None), (False, True, -8, 0)),
    (True, (128, 0), (False, True, 128, 0), (False, True, 128, 0)),
    (True, (None, 0), (True, False, None, None), (True, False, None, None)),
    (False, (None, None), (False, False, None, None), (False, False, None, None)),
])
def test_fa4_variants_on_the_documented_inputs(causal, given, old, new):
    """Guards against a transcription drifting from the measured behaviour of each variant."""
    for fn in V1_V2:
        assert fn(causal, *given) == old, fn.__name__
    assert V3(causal, *given) == new


def test_mask_mod_short_circuits_forward_only():
    marker = object()
    assert fa4.inline_fwd(True, -1, 0, marker) == (False, False, -1, 0)
    assert fa4.resolve_pre_2490(True, 5, 5, marker) == (False, False, 5, 5)
    assert fa4.resolve_post_2490(True, 5, 5, marker) == (False, False, 5, 5)
    with pytest.raises(TypeError):
        fa4.inline_bwd(True, -1, 0, marker)  # the backward has no mask_mod


@pytest.mark.parametrize("mask, given, emitted, warns", [
    ("causal", None, (-1, 0), False),
    ("causal", (-1, -1), (-1, 0), True),
    ("padding_causal_bottom_right", (128, 64), (128, 0), True),
    ("causal", (-1, 0), (-1, 0), False),
    ("causal", (128, 0), (128, 0), False),
    ("no_mask", None, (-1, -1), False),
    ("padding", (-1, 0), (-1, -1), True),
    ("arbitrary", (-1, -1), (-1, -1), False),
    ("no_mask", (128, 64), (128, 64), False),
    ("no_mask", [128, 64], [128, 64], False),
])
def test_te_rule_emits_and_warns(mask, given, emitted, warns):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = te.check_set_window_size(mask, given)
    assert out == emitted and type(out) is type(emitted)
    assert bool(caught) == warns


@pytest.mark.parametrize("mask, given", [
    ("causal", (-2, 0)), ("causal", [-1, 0]), ("no_mask", (-1, 5)), ("padding", [-1, -1]),
    ("no_mask", (3, -1)), ("sliding", None),
])
def test_te_rule_rejects_with_assertion(mask, given):
    """Lists are compared with == against tuples, so a list holding -1 asserts."""
    with pytest.raises(AssertionError):
        te.check_set_window_size(mask, given)


def test_registry_has_provenance_for_each_variant_and_one_entry_per_role():
    names = {(t.name, t.role) for t in transcriptions.REGISTRY}
    assert names == {("inline", "fwd"), ("inline", "bwd"), ("pre-2490", "shared"),
                     ("post-2490", "shared"), ("te-check-set-window-size", "check")}
    for t in transcriptions.REGISTRY:
        assert t.repository.startswith("https://github.com/") and t.commit and t.releases
        assert t.fingerprints and callable(t.function) and t.where
    assert transcriptions.get("pre-2490").commit.startswith("59cf537812")
    assert transcriptions.get("post-2490").commit.startswith("7d6a6d25")
    fa4_releases = [r for t in transcriptions.REGISTRY if t.kind == "fa4-resolver"
                    and t.role != "bwd" for r in t.releases]
    assert len(fa4_releases) == len(set(fa4_releases)) == 33


def test_unknown_fingerprint_maps_to_nothing():
    """An unknown fingerprint must never be mapped silently to a known variant."""
    assert transcriptions.by_fingerprint("0" * 16) is None
    known = transcriptions.get("post-2490").fingerprints[0]
    assert transcriptions.by_fingerprint(known, "te-window") is None
    assert transcriptions.by_fingerprint(known, "fa4-resolver").name == "post-2490"


def test_transcriptions_import_nothing_of_the_project():
    import ast
    import pathlib
    for p in pathlib.Path(transcriptions.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("analyzer", "fa4_patch")), p
            if isinstance(node, ast.Import):
                assert all(not a.name.startswith(("analyzer", "fa4_patch")) for a in node.names)


# ----------------------------------------------------------------------------- real releases

@pytest.mark.network
@pytest.mark.parametrize("version, expected", [
    ("4.0.0b3", {("inline", "fwd"), ("inline", "bwd")}),
    ("4.0.0b11", {("pre-2490", "shared")}),
    ("4.0.0b29", {("pre-2490", "shared")}),
    ("4.0.0b30", {("post-2490", "shared")}),
    ("4.0.0b36", {("post-2490", "shared")}),
])
def test_transcription_equals_real_release_over_the_whole_domain(version, expected):
    """Each variant's transcription vs the function extracted from a real wheel, over causal x
    {None} U [-3, 8] squared: any difference is an error naming the input."""
    from analyzer.equivalence.check import check_extracted
    from analyzer.equivalence.extract import extract_fa4
    from analyzer.sources import fetch_release

    found = extract_fa4(fetch_release("fa4", version))
    assert {(e.variant, e.role) for e in found} == expected
    for e in found:
        assert e.transcription is not None
        assert check_extracted(e) == []


@pytest.mark.network
@pytest.mark.parametrize("version", ["2.15.0", "2.20.2"])
def test_te_transcription_equals_real_check_set_window_size(version):
    from analyzer.equivalence.check import check_extracted
    from analyzer.equivalence.extract import extract_te
    from analyzer.sources import fetch_release

    e = extract_te(fetch_release("te", version))
    assert e.variant == "te-check-set-window-size"
    assert check_extracted(e) == []


@pytest.mark.network
def test_a_wrong_transcription_is_reported_with_the_input():
    """The check must be able to fail: pair b36's real resolver with the pre-#2490 rule."""
    from analyzer.equivalence.check import check_extracted
    from analyzer.equivalence.extract import extract_fa4
    from analyzer.sources import fetch_release

    (real,) = extract_fa4(fetch_release("fa4", "4.0.0b36"))
    diffs = check_extracted(real, transcriptions.get("pre-2490"), limit=1000)
    assert diffs
    assert any("causal=True, left=-1, right=0" in d and "real (False, True, -1, 0)" in d
               for d in diffs)
