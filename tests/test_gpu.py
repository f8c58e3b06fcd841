"""GPU verification: the real FA4 kernels through fa4_patch.wrap on a GPU, plus CPU tests of the
harness's reference mask, grading, rendering and the ``verify-gpu`` command.

The GPU tests need flash-attn-4 importable and an SM90 / SM100 GPU; elsewhere they are skipped
with the reason (``pytest -rs`` prints it). Everything else runs on any machine, against a
fake FA4 written here that reproduces the b36 resolver and band rule (DESIGN §2, §3).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from analyzer.gpu import harness, report

# --------------------------------------------------------------------------- fake FA4 (CPU)


def _resolve_post_2490(causal, left, right):
    """FA4 b30+: both sides negative -> no window; then causal pins the right side to 0."""
    if left is not None and right is not None and left < 0 and right < 0:
        left = right = None
    if causal:
        right = 0
    return _resolve_tail(causal, left, right)


def _resolve_pre_2490(causal, left, right):
    """FA4 b5..b29: causal pins right to 0 first; a negative sum means no window."""
    if causal:
        right = 0
    if left is not None and right is not None and left + right < 0:
        left = right = None
    return _resolve_tail(causal, left, right)


def _resolve_tail(causal, left, right):
    if left is None and right is None:
        return causal, False, None, None
    if left is None and right == 0:
        return True, False, None, None
    return False, True, left, right


def _fa4_band(causal, local, left, right, sq, sk):
    """FA4's mask for a resolved state: negative values are used literally."""
    d = sk - sq
    i = torch.arange(sq).unsqueeze(1)
    j = torch.arange(sk).unsqueeze(0)
    keep = torch.ones(sq, sk, dtype=torch.bool)
    if causal:
        keep &= j <= i + d
    if local:
        if left is not None:
            keep &= j >= i + d - left
        if right is not None:
            keep &= j <= i + d + right
    return keep


def _fake_attend(q, k, v, keep, scale):
    """float32 attention with autograd; an empty row gives out 0, lse -inf, zero gradients."""
    qh, kh, vh = (t.float().transpose(1, 2) for t in (q, k, v))
    s = (qh @ kh.transpose(-1, -2)) * scale
    s = s.masked_fill(~keep, -1e30)
    nonempty = keep.any(-1)
    p = torch.softmax(s, -1) * nonempty.unsqueeze(-1)
    out = (p @ vh).transpose(1, 2).to(q.dtype)
    lse = torch.logsumexp(s, -1).masked_fill(~nonempty, float("-inf"))
    return out, lse.detach()


class FakeFA4:
    """The four b36 entry points with b36's parameter names and window positions."""

    def __init__(self, resolver=_resolve_post_2490):
        self.resolver = resolver
        self.calls = []
        fake = self

        def core(q, k, v, causal, left, right, scale):
            fake.calls.append((causal, left, right))
            scale = scale if scale is not None else q.shape[-1] ** -0.5
            state = fake.resolver(causal, left, right)
            keep = _fa4_band(*state, q.shape[1], k.shape[1])
            return _fake_attend(q, k, v, keep, scale)

        def flash_attn_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None,
                            causal=False, window_size=(None, None), learnable_sink=None,
                            softcap=0.0, num_splits=1, pack_gqa=None, deterministic=False,
                            return_lse=False):
            return core(q, k, v, causal, window_size[0], window_size[1], softmax_scale)

        def flash_attn_varlen_func(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None,
                                   max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
                                   seqused_q=None, seqused_k=None, gather_kv_indices=None,
                                   page_table=None, softmax_scale=None, causal=False,
                                   window_size=(None, None), learnable_sink=None, softcap=0.0):
            outs, lses = [], []
            for n in range(len(cu_seqlens_q) - 1):
                qs = q[cu_seqlens_q[n]:cu_seqlens_q[n + 1]].unsqueeze(0)
                ks = k[cu_seqlens_k[n]:cu_seqlens_k[n + 1]].unsqueeze(0)
                vs = v[cu_seqlens_k[n]:cu_seqlens_k[n + 1]].unsqueeze(0)
                o, lse = core(qs, ks, vs, causal, window_size[0], window_size[1], softmax_scale)
                outs.append(o[0])
                lses.append(lse[0])
            return torch.cat(outs), torch.cat(lses, dim=-1)

        def _flash_attn_fwd(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None,
                            seqused_q=None, seqused_k=None, max_seqlen_q=None, max_seqlen_k=None,
                            min_seqlen_k=None, page_table=None, softmax_scale=None, causal=False,
                            softcap=None, window_size_left=None, window_size_right=None,
                            learnable_sink=None, return_lse=False):
            with torch.no_grad():
                out, lse = core(q, k, v, causal, window_size_left, window_size_right, softmax_scale)
            return out, (lse if return_lse else None), None, None, None

        def _flash_attn_bwd(q, k, v, out, dout, lse, softmax_scale=None, causal=False,
                            softcap=0.0, window_size_left=None, window_size_right=None,
                            deterministic=False):
            leaves = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
            with torch.enable_grad():
                o, _ = core(*leaves, causal, window_size_left, window_size_right, softmax_scale)
                o.backward(dout)
            return tuple(t.grad for t in leaves)

        self.fns = {"flash_attn_func": flash_attn_func,
                    "flash_attn_varlen_func": flash_attn_varlen_func,
                    "_flash_attn_fwd": _flash_attn_fwd, "_flash_attn_bwd": _flash_attn_bwd}


def _wrap():
    import fa4_patch

    return fa4_patch.wrap


# The GPU shapes scaled down for the CPU (same sq = sk / sq < sk structure; 160 > the sliding
# window's 128 so that window still cuts the band).
SMALL = {"batch": 2, "heads": 2, "head_dim": 32, "shapes": {"sq=sk": (160, 160), "sq<sk": (96, 160)}}


@pytest.fixture(scope="module")
def fake_run():
    """Every default pair through the fake b36 FA4, as-is and wrapped (CPU, a few seconds)."""
    fake = FakeFA4()
    pairs = harness.normalise_pairs(harness.DEFAULT_PAIRS)
    cases = harness.run_all(fake.fns, harness.wrap_all(fake.fns, _wrap()), pairs, "cpu",
                            dims=SMALL)
    return {"schema": harness.SCHEMA, "environment": {"gpu": "fake", "capability": "0.0"},
            "config": {"batch": SMALL["batch"], "heads": SMALL["heads"],
                       "head_dim": SMALL["head_dim"], "rtol": harness.RTOL, "atol": harness.ATOL,
                       "dtype": "bfloat16", "shapes": {}},
            "pairs": pairs, "cases": cases, "summary": harness.summarise(cases),
            "timing": None, "wrapper_overhead_cpu": None, "complete": True}


# --------------------------------------------------------------------------- reference math


def test_reference_causal_equals_torch_sdpa_in_float64():
    """Guards against a wrong band or alignment for TE's causal (-1, 0): the float64 reference
    must equal torch's causal SDPA (float64, CPU) at sq = sk."""
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 64, 3, 16, generator=g, dtype=torch.float64) for _ in range(3))
    mask = harness.intended_mask(True, -1, 0, 64, 64)
    ref = harness.reference(q, k, v, torch.zeros_like(q), mask, 16 ** -0.5)
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2)
    assert torch.allclose(ref["out"], sdpa, rtol=0, atol=1e-12)


def test_intended_mask_is_bottom_right_with_minus_one_unbounded():
    """Guards against top-left alignment or a literal -1: TE's (-1, 0) causal at sq < sk keeps
    j <= i + (sk - sq), and (-1, -1) keeps everything."""
    m = harness.intended_mask(True, -1, 0, 2, 4)
    assert m.tolist() == [[True, True, True, False], [True, True, True, True]]
    assert harness.intended_mask(False, -1, -1, 3, 5).all()
    band = harness.intended_mask(False, 1, 0, 3, 3)
    assert band.tolist() == [[True, False, False], [True, True, False], [False, True, True]]
    with pytest.raises(ValueError):
        harness.intended_mask(True, -2, 0, 2, 2)


def test_reference_backward_equals_autograd():
    """Guards against a wrong closed-form backward: dq/dk/dv must equal float64 autograd
    through masked softmax attention (sliding window, sq < sk)."""
    g = torch.Generator().manual_seed(5)
    q = torch.randn(1, 8, 2, 4, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(1, 12, 2, 4, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(1, 12, 2, 4, generator=g, dtype=torch.float64, requires_grad=True)
    do = torch.randn(1, 8, 2, 4, generator=g, dtype=torch.float64)
    mask = harness.intended_mask(True, 3, 0, 8, 12)
    s = (q.transpose(1, 2) @ k.transpose(1, 2).transpose(-1, -2)) * 0.5
    p = torch.softmax(s.masked_fill(~mask, float("-inf")), -1)
    (p @ v.transpose(1, 2)).transpose(1, 2).backward(do)
    ref = harness.reference(q.detach(), k.detach(), v.detach(), do, mask, 0.5)
    for name, t in (("dq", q), ("dk", k), ("dv", v)):
        assert torch.allclose(ref[name], t.grad, rtol=0, atol=1e-12), name


def test_reference_empty_row_gives_zero_output_and_minus_inf_lse():
    """Guards against NaN from an empty row in the reference (FA4's own empty-band outcome)."""
    q = torch.randn(1, 2, 1, 4, dtype=torch.float64)
    mask = torch.tensor([[True, True], [False, False]])
    ref = harness.reference(q, q, q, q, mask, 0.5)
    assert torch.isneginf(ref["lse"][0, 0, 1])
    assert not ref["out"][0, 1].any() and torch.isfinite(ref["dq"]).all()


# --------------------------------------------------------------------------- grading


def _ref_and_inputs(causal, window, sq=32, sk=32):
    g = torch.Generator().manual_seed(7)
    q, do = (torch.randn(1, sq, 2, 8, generator=g).bfloat16() for _ in range(2))
    k, v = (torch.randn(1, sk, 2, 8, generator=g).bfloat16() for _ in range(2))
    ref = harness.reference(q, k, v, do, harness.intended_mask(causal, *window, sq, sk), 8 ** -0.5)
    return (q, k, v, do), ref


def test_grade_names_all_zero_output_apart_from_tolerance():
    """Guards against an all-zero output being reported only as a large error: the flag is
    set, named first, and the LSE flag is separate."""
    _, ref = _ref_and_inputs(True, (-1, 0))
    got = {"out": torch.zeros_like(ref["out"]).bfloat16(), "lse": torch.full_like(ref["lse"], -math.inf),
           "dq": torch.zeros_like(ref["dq"]), "dk": torch.zeros_like(ref["dk"]),
           "dv": torch.zeros_like(ref["dv"])}
    rec = harness.grade(got, ref)
    assert rec["out_all_zero"] is True and rec["lse_all_neginf"] is True
    assert rec["failures"][:2] == ["output all zero", "LSE all -inf"]
    assert rec["errors"]["out"]["value"] == pytest.approx(1.0)
    assert rec["passed"] is False


def test_grade_passes_bf16_rounding_and_fails_a_shifted_band():
    """Guards against a tolerance so tight that bf16 rounding fails, or so loose that a band one
    key too wide passes."""
    _, ref = _ref_and_inputs(True, (-1, 0))
    ok = {name: ref[name].to(torch.bfloat16) for name in ("out", "dq", "dk", "dv")}
    ok["lse"] = ref["lse"].float()
    assert harness.grade(ok, ref)["passed"]
    _, wide = _ref_and_inputs(False, (-1, 1))     # one key past the diagonal
    bad = {name: wide[name].to(torch.bfloat16) for name in ("out", "dq", "dk", "dv")}
    rec = harness.grade(bad, ref)
    assert not rec["passed"] and not rec["out_all_zero"]
    assert any(f.startswith("out rel err") for f in rec["failures"])


def test_grade_uses_absolute_error_where_reference_is_zero():
    """Guards against dividing by ~0: window (0, 0) has dq = 0 exactly, graded absolutely."""
    _, ref = _ref_and_inputs(False, (0, 0))
    assert float(ref["dq"].abs().max()) <= harness.ZERO_REF
    got = {name: ref[name].to(torch.bfloat16) for name in ("out", "dq", "dk", "dv")}
    got["dq"] = got["dq"] + 1e-3
    rec = harness.grade(got, ref)
    assert rec["errors"]["dq"]["metric"] == "abs" and rec["passed"]
    got["dq"] = got["dq"] + 1.0
    assert "dq abs err" in " ".join(harness.grade(got, ref)["failures"])


def test_grade_flags_nan_output():
    """Guards against NaN comparing as 'not greater than the tolerance'."""
    _, ref = _ref_and_inputs(False, (-1, -1))
    got = {name: ref[name].to(torch.bfloat16) for name in ("out", "dq", "dk", "dv")}
    got["dk"][0, 0, 0, 0] = float("nan")
    rec = harness.grade(got, ref)
    assert "dk not finite" in rec["failures"]


# --------------------------------------------------------------------------- the harness on a fake FA4


def test_fake_b36_as_is_fails_exactly_the_negative_sentinel_pairs(fake_run):
    """Guards against the harness missing the defect or inventing one: through a fake with b36's
    resolver, as-is fails exactly the pairs whose window carries -1 with right = 0 (causal
    (-1,0), the CP diagonal and the direct non-causal (-1,0)), each with an all-zero output."""
    for c in fake_run["cases"]:
        if c["mode"] != "as-is":
            continue
        broken = list(c["window"]) == [-1, 0]
        assert c["passed"] is (not broken), (c["entry"], c["pair"], c["shape"], c["failures"])
        assert c["out_all_zero"] is broken
        if c["entry"] == "_flash_attn_fwd/_flash_attn_bwd":
            assert c["lse_all_neginf"] is broken


def test_fake_b36_wrapped_passes_every_case(fake_run):
    """Guards against fa4_patch.wrap not reaching one of the four entry points (or the harness
    not calling the wrapped one): every wrapped case passes on the fake b36."""
    wrapped = [c for c in fake_run["cases"] if c["mode"] == "wrapped"]
    assert len(wrapped) == fake_run["summary"]["wrapped"]["planned"] == 40
    assert all(c["passed"] for c in wrapped), [c["failures"] for c in wrapped if not c["passed"]]
    assert report.exit_status(fake_run) == 0


def test_pre_2490_resolver_passes_as_is():
    """Guards against grading that fails correct kernels: with the pre-#2490 resolver the
    as-is TE pairs are right, so they must pass."""
    fake = FakeFA4(_resolve_pre_2490)
    pairs = harness.normalise_pairs([p for p in harness.DEFAULT_PAIRS
                                     if p["label"] in ("causal", "causal_bottom_right")])
    cases = harness.run_all(fake.fns, None, [dict(p, entries=["flash_attn_func"]) for p in pairs],
                            "cpu", dims=SMALL)
    as_is = [c for c in cases if c["mode"] == "as-is"]
    assert as_is and all(c["passed"] for c in as_is)
    # and wrap missing is an error for the wrapped cases, not a silent pass
    assert all(c["passed"] is False for c in cases if c["mode"] == "wrapped")


def test_wrapped_call_reaches_fa4_with_none(fake_run):
    """Guards against the harness passing a pre-normalised window: the bare fake must see TE's
    literal -1 and the wrapped one None."""
    fake = FakeFA4()
    inputs = harness.make_inputs(8, 8, "cpu", dims=SMALL)
    harness.call_entry("flash_attn_func", fake.fns, *inputs, True, (-1, 0), 0.1)
    wrapped = harness.wrap_all(fake.fns, _wrap())
    harness.call_entry("_flash_attn_fwd/_flash_attn_bwd", wrapped, *inputs, True, (-1, 0), 0.1)
    assert fake.calls == [(True, -1, 0), (True, None, 0), (True, None, 0)]


def test_deadline_marks_cases_not_run_and_exit_status_is_2(fake_run):
    """Guards against an incomplete run being judged: cases past the deadline are 'not run' and
    the result exits 2."""
    fake = FakeFA4()
    pairs = harness.normalise_pairs(harness.DEFAULT_PAIRS[:1])
    cases = harness.run_all(fake.fns, fake.fns, pairs, "cpu", deadline=0.0, dims=SMALL)
    assert all(c["passed"] is None for c in cases)
    assert report.exit_status(dict(fake_run, cases=cases)) == 2


def test_normalise_pairs_rejects_bad_input():
    """Guards against a malformed --pairs file running something else than asked."""
    for bad in ([], [{"causal": True}], [{"causal": "yes", "window": [-1, 0]}],
                [{"causal": True, "window": [-2, 0]}], [{"causal": True, "window": [1.5, 0]}],
                [{"causal": True, "window": [-1, 0], "shapes": ["sq>sk"]}]):
        with pytest.raises(ValueError):
            harness.normalise_pairs(bad)


def test_harness_json_is_strict_and_round_trips(tmp_path, fake_run):
    """Guards against Infinity/NaN in the JSON (not JSON to other tools)."""
    path = tmp_path / "r.json"
    harness._write_json(path, dict(fake_run, extra=[math.inf, -math.inf, math.nan]))
    text = path.read_text()
    assert "Infinity" not in text and "NaN" not in text
    data = json.loads(text)
    assert data["extra"] == ["inf", "-inf", "nan"]
    assert report.exit_status(data) == 0


def test_cpu_wrapper_overhead_measures_and_checks_normalisation():
    """Guards against timing a wrapper that does not normalise: each measured call also checks
    the window the dummy received."""
    res = harness.wrapper_overhead_cpu(_wrap(), number=2000, repeat=2)
    assert all(r["normalised_ok"] for r in res["rows"]), res["rows"]
    assert all(r["wrapped_ns"] > 0 and r["bare_ns"] > 0 for r in res["rows"])


# --------------------------------------------------------------------------- rendering, command


def test_render_puts_failing_rows_first_and_shows_flags(fake_run):
    """Guards against a table that hides the as-is failures or renumbers values."""
    md = report.render(fake_run, "markdown")
    lines = [ln for ln in md.splitlines() if ln.startswith("| ")]
    rows = lines[1:]                                               # lines[0] is the header
    assert "FAIL: out all 0; LSE all -inf; over tol: out/dq/dk/dv" in rows[0]
    assert rows[0].index("| yes ") < rows[0].index("FAIL")        # the flag column says it too
    assert all("FAIL" in ln for ln in rows[:16])                   # the 16 failing rows first
    assert all("FAIL" not in ln for ln in rows[16:])
    assert "wrapped 40/40 pass" in md and "as-is 24/40 pass" in md
    text = report.render(fake_run, "text")
    assert "FAIL: out all 0" in text and not any(ln.startswith("|") for ln in text.splitlines())
    assert json.loads(report.render(fake_run, "json"))["schema"] == harness.SCHEMA


def test_exit_status_is_1_when_a_wrapped_case_fails(fake_run):
    """Guards against the exit status following as-is failures instead of wrapped ones."""
    cases = [dict(c) for c in fake_run["cases"]]
    assert report.exit_status(dict(fake_run, cases=cases)) == 0      # as-is failures: still 0
    w = next(c for c in cases if c["mode"] == "wrapped")
    w.update(passed=False, failures=["output all zero"])
    assert report.exit_status(dict(fake_run, cases=cases)) == 1


def test_verify_gpu_results_renders_saved_file(cli, tmp_path, fake_run):
    """Guards against --results needing a GPU, and against it ignoring the judgement."""
    path = tmp_path / "r.json"
    harness._write_json(path, fake_run)
    r = cli("verify-gpu", "--results", str(path), "--format", "markdown", "--out", str(tmp_path / "o"))
    assert r.code == 0, r.err
    assert "| flash_attn_func" in r.out
    assert (tmp_path / "o" / "gpu-verify.md").read_text() == r.out


def test_verify_gpu_results_bad_file_exits_2_one_line(cli, tmp_path):
    """Guards against a traceback or a pass on a file that is not a harness result."""
    p = tmp_path / "x.json"
    p.write_text('{"schema": "other"}')
    r = cli("verify-gpu", "--results", str(p))
    assert r.code == 2 and r.err.count("\n") == 1 and "schema" in r.err


RESULTS = Path(__file__).resolve().parents[1] / "docs" / "gpu-results"


@pytest.mark.parametrize("name", ["h200-fa4-b36"])
def test_committed_gpu_results_are_consistent_and_rendered(name):
    """Guards against a committed GPU table that is stale (not the rendering of the committed
    JSON) or a result file that contradicts its own flags: every as-is failure of the H200 b36
    run is an all-zero output of a (-1, 0) window, and every wrapped case passed."""
    result = report.load_result(RESULTS / f"{name}.json")
    assert (RESULTS / f"{name}.md").read_text() == report.render(result, "markdown")
    assert result["complete"] and report.exit_status(result) == 0
    for c in result["cases"]:
        if c["mode"] == "as-is" and not c["passed"]:
            assert c["window"] == [-1, 0] and c["out_all_zero"], c
        if c["passed"]:
            assert not c["out_all_zero"] and all(e["ok"] for e in c["errors"].values())


def _gpu_skip_reason() -> str | None:
    return harness.unavailable_reason()


def test_verify_gpu_without_gpu_exits_2_with_one_line(cli):
    """Guards against verify-gpu crashing or passing where it cannot run the kernels."""
    reason = _gpu_skip_reason()
    if reason is None:
        pytest.skip("a supported GPU with FA4 is present: the no-GPU path cannot be exercised")
    r = cli("verify-gpu", "--quiet")
    assert r.code == 2, r.out + r.err
    assert r.err.count("\n") == 1 and "cannot run here" in r.err, r.err
    assert r.out == ""


# --------------------------------------------------------------------------- the real kernels


_WRAPPED = [(p["label"], shape, entry)
            for p in harness.normalise_pairs(harness.DEFAULT_PAIRS)
            for entry in p["entries"] for shape in p["shapes"]]


@pytest.fixture(scope="module")
def real_fa4():
    reason = _gpu_skip_reason()
    if reason is not None:
        pytest.skip(f"GPU verification not possible here: {reason}")
    fns = harness.load_fa4()
    return harness.wrap_all(fns, harness.load_wrap())


@pytest.mark.gpu
@pytest.mark.parametrize("label,shape,entry", _WRAPPED,
                         ids=[f"{e}-{lab}-{s}" for lab, s, e in _WRAPPED])
def test_wrapped_entry_point_on_gpu(real_fa4, label, shape, entry):
    """Guards against the wrapped FA4 entry points returning an all-zero output (the empty
    band) or a wrong mask, on the real kernels, for every pair TE emits."""
    pair = next(p for p in harness.normalise_pairs(harness.DEFAULT_PAIRS) if p["label"] == label)
    sq, sk = harness.SHAPES[shape]
    inputs = harness.make_inputs(sq, sk, "cuda")
    mask = harness.intended_mask(pair["causal"], *pair["window"], sq, sk, device="cuda")
    ref = harness.reference(*inputs, mask, harness.HEAD_DIM ** -0.5)
    case = {"entry": entry, "causal": pair["causal"], "window": pair["window"]}
    rec = harness.run_case(case, real_fa4, inputs, ref, harness.HEAD_DIM ** -0.5)
    assert rec["error"] is None, rec["error"]
    assert rec["out_all_zero"] is False, "wrapped call returned an all-zero output"
    assert not rec["lse_all_neginf"], "wrapped call returned an all -inf LSE"
    assert rec["passed"], rec["failures"]
