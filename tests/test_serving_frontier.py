"""The serving frontier (serving/serving_frontier.py): shape, the limit above the estimate,
a hand-checked step, and infeasible workloads reported."""

import math

import pytest

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
