"""The serving frontier (serving/serving_frontier.py): shape, the limit above the estimate,
a hand-checked step, and infeasible workloads reported."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from inference_math import get_gpu, get_model
from inference_math.serving import step_time as st
from inference_math.serving.serving_frontier import ServeError, Workload, serving_frontier

LLAMA, H100 = get_model("llama-3.3-70b"), get_gpu("h100")


@pytest.fixture(scope="module")
def fronts():
    return {curve: serving_frontier(Workload(LLAMA, H100, 1000, 1000, weight_bits=8,
                                             curve=curve, ttft_ms=2000))
            for curve in ("estimate", "limit")}


def test_frontier_is_pareto_fastest_first(fronts):
    for front in fronts.values():
        speeds = [p.tokens_per_s_per_user for p in front.points]
        rates = [p.output_tokens_per_s_per_gpu for p in front.points]
        assert speeds == sorted(speeds, reverse=True)
        assert rates == sorted(rates)
        assert all(p.ttft_ms <= 2000 for p in front.points)


def test_limit_is_above_the_estimate_everywhere(fronts):
    for p in fronts["estimate"].points:
        assert fronts["limit"].throughput_at(p.tokens_per_s_per_user) >= \
            p.output_tokens_per_s_per_gpu


def test_estimate_band_brackets_the_estimate(fronts):
    eff = st.fitted(fronts['estimate'].workload.gpu)
    for p in fronts["estimate"].points:
        assert math.isclose(p.band_low, p.output_tokens_per_s_per_gpu * math.exp(eff.band_low))
        assert p.band_low <= p.output_tokens_per_s_per_gpu <= p.band_high


def test_limit_decode_step_by_hand():
    """Batch-one decode of Llama 3.3 70B with 8-bit weights on 8 H100s at the limit, recomputed
    from the Llama 3.1 70B config by a checker who did not write the term: 70,553,706,496
    parameters less the input embedding (1,050,673,152: decode looks up one row), one byte
    each, plus 1,500 tokens of 16-bit cache (327,680 bytes each) and about 57 MB of activation
    traffic, at 8 × 3.3 TB/s: 2.6513 ms."""
    latency, terms = st.step("limit", LLAMA, H100, 8.0, 1.0, 1.0, 1.0, 1500.0, 1.0)
    assert math.isclose(float(terms["memory"]), 2.6513e-3, rel_tol=0.005)
    assert math.isclose(float(latency), 2.6513e-3, rel_tol=0.05)


def test_disaggregated_points_carry_both_pools():
    front = serving_frontier(Workload(get_model("deepseek-v3"), get_gpu("h200"), 2000, 500,
                                      disaggregated=True, ttft_ms=3000))
    for p in front.points:
        assert p.mode == "disaggregated" and p.prefill["prompts"] >= 1
        assert p.ttft_ms <= 3000 and p.prefill_gpus_per_decode_gpu > 0


def test_infeasible_limits_are_one_error_naming_them():
    with pytest.raises(ServeError, match="TPOT 0.001 ms"):
        serving_frontier(Workload(LLAMA, H100, 1000, 1000, tpot_ms=0.001))


def test_predict_on_the_estimate_is_below_the_limit_and_carries_its_band():
    from inference_math.serving.predict import Deployment, predict
    for model, gpu, extra in ((LLAMA, H100, {"weight_bits": 8}),
                              (get_model("deepseek-v3"), get_gpu("h200"),
                               {"dp_attention": True})):
        base = dict(model=model, gpu=gpu, tp=8, batch=64, input_len=2000, output_len=500,
                    **extra)
        est = predict(Deployment(**base, curve="estimate"))
        lim = predict(Deployment(**base, curve="limit"))
        assert est.tpot_ms > lim.tpot_ms and est.ttft_ms > lim.ttft_ms
        assert est.band_low < est.output_tokens_per_s_per_gpu < est.band_high
        assert lim.band_low is None


@pytest.mark.parametrize("gpu, bits, weights_rate_bits", [
    ("h100", 4, 16),   # no FP4 tensor cores: W4A16
    ("b200", 4, 8),    # FP4 tensor cores: MXFP4 weights with FP8 activations (W4A8)
    ("mi355x", 4, 8),
    ("h100", 8, 8), ("b200", 16, 16)])
def test_compute_rates_follow_the_kernels_precision(gpu, bits, weights_rate_bits):
    chip = get_gpu(gpu)
    limit, weights, attention = st.compute_rates(LLAMA, chip, bits / 8)
    assert limit == chip.flops(bits)
    assert weights == chip.flops(weights_rate_bits)
    assert attention == chip.flops(16)


NAMED = ("gpt-oss-120b", "llama-4-maverick", "kimi-k2", "qwen3-235b-a22b")


def _prices_are_positive(model: str, gpu: str) -> None:
    front = serving_frontier(Workload(get_model(model), get_gpu(gpu), 1024, 1024))
    for p in front.points:
        assert math.isfinite(p.usd_per_mtok_input) and p.usd_per_mtok_input > 0, (model, gpu, p)
        assert math.isfinite(p.usd_per_mtok_output) and p.usd_per_mtok_output > 0, (model, gpu, p)


@pytest.mark.parametrize("model", NAMED)
@pytest.mark.parametrize("gpu", ("h200", "h100"))
def test_input_and_output_prices_are_positive(model, gpu):
    """A mixed step's time is divided between its chunk and its decode tokens
    (eq-serve-mixed-split), never as the difference of two steps, which an engine's
    efficiencies can make negative (gpt-oss-120b on H200 at 1,024/1,024 priced input at
    −$0.42 per million tokens when it was)."""
    _prices_are_positive(model, gpu)


@settings(max_examples=4, deadline=None)
@given(hst.sampled_from(("llama-3.3-70b", "deepseek-v3", "mixtral-8x7b", "llama-3.1-8b",
                         "qwen3-235b-a22b", "gpt-oss-120b", "kimi-k2", "llama-3.1-405b")),
       hst.sampled_from(("a100", "h100", "h200", "b200", "gb200-nvl72", "mi300x", "mi355x")))
def test_prices_are_positive_on_a_sample_of_presets(model, gpu):
    try:
        _prices_are_positive(model, gpu)
    except ServeError:  # the model does not fit the largest instance
        pass


def test_prefill_pass_holds_its_prompts_cache():
    """DeepSeek-R1 (DeepSeek-V3's shapes) prefilling P prompts of 1,024 tokens on 4 B200s
    with data-parallel attention, each prompt's latent cache held once. The weights at an empty
    cache (eq-phys-memory-need, σ = 4): FP8 blocks (1 + 4/128² bytes a weight) for each group's
    copy of the 61 layers' 187,105,280 MLA weights, the 3 dense blocks' 3·7,168·18,432 and the
    58 shared experts' 3·7,168·2,048, one copy of the 58·256 routed experts, the 58 BF16
    routers (7,168·256) in each copy, and the BF16 embeddings, 719.27 GB; plus P·1,024·70,272
    bytes (576 16-bit elements in 61 layers). P = 10: 719.99 GB ≤ 720 GB; P = 11: 720.06 GB
    > 720 GB; P = 64: 723.87 GB. The limit fills all of the HBM and holds at most 10; the
    physical rules fill 90% of it, 648 GB, and hold none."""
    model, gpu = get_model("deepseek-v3"), get_gpu("b200")
    fp8, d = 1 + 4 / 128**2, 7168
    weights = (fp8 * (4 * 61 * 187_105_280 + 4 * 3 * 3 * d * 18432 + 4 * 58 * 3 * d * 2048
                      + 58 * 256 * 3 * d * 2048)
               + 2 * 4 * 58 * d * 256 + 2 * 2 * 129280 * d)
    assert weights == pytest.approx(719.27e9, abs=0.005e9)
    for prompts in (10.0, 11.0, 64.0):
        need = weights + prompts * 1024 * 2 * 576 * 61
        fits = st.fits("limit", model, gpu, 4.0, 4.0, prompts, 1024.0, 1024.0, logits=1.0)
        assert bool(fits) == (need <= 4 * 180e9), prompts
        assert not st.fits("physical", model, gpu, 4.0, 4.0, prompts, 1024.0, 1024.0,
                           logits=1.0)


def test_disaggregated_prefill_pool_fits_with_its_cache():
    """The pool the physical frontier of R1 on B200s picks stores its prompts' cache within
    90% of its HBM (hand bound: the 673 GB of weights alone exceed 0.9·4·180 = 648 GB, so no
    4-GPU pool)."""
    front = serving_frontier(Workload(get_model("deepseek-v3"), get_gpu("b200"), 1024, 1024,
                                      curve="physical", disaggregated=True))
    pool = front.points[0].prefill
    assert pool["gpus"] >= 8
    need = 673e9 * (pool["dp"] > 1) + pool["prompts"] * 1024 * 70272  # a lower bound
    assert need <= 0.9 * pool["gpus"] * 180e9


def test_physical_curve_fills_the_engine_share_of_hbm():
    """DeepSeek-V3's 671.0e9 parameters at one byte at least exceed 0.9 × 4 × 180 GB = 648 GB
    but not 720 GB: one sequence on 4 B200s is infeasible under the physical rules (an
    engine's 90%) and feasible under the limit (all of the HBM, a bound)."""
    model, gpu = get_model("deepseek-v3"), get_gpu("b200")
    assert 671.0e9 > 0.9 * 4 * 180e9
    physical, _ = st.step("physical", model, gpu, 4.0, 1.0, 1.0, 1.0, 1536.0, logits=1.0)
    limit, _ = st.step("limit", model, gpu, 4.0, 1.0, 1.0, 1.0, 1536.0, logits=1.0)
    assert not math.isfinite(float(physical)) and math.isfinite(float(limit))


def test_chunk_attends_over_its_own_prompts_in_the_cheaper_mla_form():
    """R1 on 8 B200s, b = 1,024 decoding at ℓ = 1,536 with a chunk of C = 4,096 prompt tokens
    (4 prompts of 1,024). Timed as 4 extra queries on each decode sequence in MLA's absorbed
    form, the chunk's attention was 4,096 · 128 heads · 2·(576 + 512) · 61 layers · 1,538
    (ℓ + (5 − 1)/2) = 107.03 TFLOP; over its own prompts, causally (mean 511.5) in the MHA
    form (2·(192 + 128) per head), 4,096 · 128 · 640 · 61 · 511.5 = 10.47 TFLOP. The limit's
    arithmetic falls by the difference at 8 × 4.5 PFLOP/s (FP8) = 2.685 ms, less the chunk's
    4 logits (4 · 2 · 7,168 · 129,280 = 7.4 GFLOP, 0.2 µs)."""
    from inference_math.serving.serving_frontier import _Grid, decode_steps
    work = Workload(get_model("deepseek-v3"), get_gpu("b200"), 1024, 1024, curve="limit")
    one = np.ones(1)
    grid = _Grid(8 * one, 8 * one, 1024 * one, (1 + 4096 / 1024) * one, 4096 * one)
    _, uniform = st.step("limit", work.model, work.gpu, 8.0, 8.0, 1024.0, 5.0, 1536.0,
                         logits=1.0)
    steps = decode_steps(work, grid, None)
    old = 4096 * 128 * 2 * (576 + 512) * 61 * 1538
    new = 4096 * 128 * 640 * 61 * 511.5 + 4 * 2 * 7168 * 129280
    expected = (old - new) / (8 * 4.5e15)
    drop = float(uniform["arithmetic"]) - float(steps.terms["arithmetic"][0])
    assert math.isclose(drop, expected, rel_tol=0.01)
