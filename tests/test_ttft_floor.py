"""The limit's TTFT floor: a prompt's arithmetic over its GPUs' peaks, by hand and against every
gathered measurement that states a TTFT."""

from __future__ import annotations

import pytest

from inference_math import get_gpu
from inference_math.reality import measured_points as mp
from inference_math.reality.measured_points import _model
from inference_math.reality.ttft_floor import floor_of, public_floors, ttft_floor_s

A100_BF16, A100_FP8 = 312e12, 624e12  # dense tensor FLOP/s, NVIDIA A100 datasheet (INT8 for 8-bit)


def test_floor_of_llama_2_7b_on_one_a100_by_hand():
    """Llama 2 7B (config: hidden 4,096, intermediate 11,008, 32 layers of 32 heads, vocabulary
    32,000), one 2,048-token prompt on one A100 with 16-bit weights. The input embedding is a
    lookup; every layer's weight multiplies each token twice (a multiply and an add), the
    unembedding only the last token's, whose logits give the first token."""
    per_layer = 4 * 4096 * 4096 + 3 * 4096 * 11008
    layers, unembedding = 32 * per_layer, 32000 * 4096
    assert layers + unembedding == 6_607_077_376
    matmul = 2 * layers * 2048 + 2 * unembedding  # the logits of the last token only
    # scores and values: 4 FLOPs per head dimension, query and key, over the causal mean of
    # (2,048 - 1) / 2 earlier tokens plus itself
    attention = 4 * 32 * 4096 * 2048 * (2048 - 1) / 2
    model, gpu = _model("meta-llama/Llama-2-7b-hf"), get_gpu("a100")
    at_16 = ttft_floor_s(model, gpu, 1, 2048, weight_bits=16, kv_bits=16)
    assert at_16 == pytest.approx((matmul + attention) / A100_BF16, rel=1e-9)  # 88.54 ms
    # an 8-bit cache is attended at the 8-bit rate, the weights' products stay at 16 bits
    at_8 = ttft_floor_s(model, gpu, 1, 2048, weight_bits=16, kv_bits=8)
    assert at_8 == pytest.approx(matmul / A100_BF16 + attention / A100_FP8, rel=1e-9)
    # four GPUs share the same FLOPs
    assert ttft_floor_s(model, gpu, 4, 2048, 16, 16) == pytest.approx(at_16 / 4, rel=1e-12)


@pytest.mark.parametrize("tokens", [1.0, 100.0, 2048.0, 32768.0])
def test_floor_rises_and_is_convex_in_the_prompt(tokens):
    """F(T) = u + a·T + c·T² (u: the last token's logits): rising, and convex, as the mean
    prompt's floor bounding a mean TTFT (Jensen's inequality) needs."""
    model, gpu = _model("meta-llama/Llama-3.1-8B-Instruct"), get_gpu("h100")
    one, two, three = (ttft_floor_s(model, gpu, 8, k * tokens) for k in (1, 2, 3))
    assert 0 < one < two < three
    assert three - two >= (two - one) * (1 - 1e-12)


def test_no_measured_ttft_lies_below_the_floor():
    floors = public_floors()
    assert len(floors) >= 300  # 396 points state a TTFT, their prompt and their GPUs
    worst = max(floors, key=lambda f: f.ratio)
    assert worst.ratio <= 1.0, worst
    # the closest is a batch-one LMDeploy run of Llama 2 13B on one A100 (2,048 tokens)
    assert 0.5 < worst.ratio


def test_a_point_without_a_ttft_has_no_floor():
    point = next(p for p in mp.public_points() if not p["ttft_ms"])
    assert floor_of(point) is None


def test_the_limits_serving_ttft_is_the_floor_by_hand():
    """Llama 3.3 70B (config: hidden 8,192, intermediate 28,672, 80 layers, 64 query and 8 KV
    heads of 128, vocabulary 128,256), 1,024-token prompts, 16-bit weights and cache, on H100s
    at the preset's 1e15 FLOP/s: on 8 GPUs the first token cannot come before 17.7 ms, however
    many other requests the instance serves."""
    from inference_math.serving.serving_frontier import Workload, serving_frontier
    per_layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672
    flops = (2 * 80 * per_layer * 1024 + 2 * 128256 * 8192
             + 4 * 80 * 8192 * 1024 * (1024 - 1) / 2)
    by_hand = flops / (8 * 1e15)
    model, gpu = _model("meta-llama/Llama-3.3-70B-Instruct"), get_gpu("h100")
    front = serving_frontier(Workload(model, gpu, 1024, 1024, curve="limit"))
    on_8 = [p for p in front.points if p.decode["gpus"] == 8]
    assert on_8 and all(p.ttft_ms == pytest.approx(1e3 * by_hand, rel=1e-9) for p in on_8)
    # a TTFT limit just above the floor on 8 GPUs leaves the limit's 8-GPU points feasible
    tight = serving_frontier(Workload(model, gpu, 1024, 1024, curve="limit",
                                      ttft_ms=1e3 * by_hand * 1.01))
    assert any(p.decode["gpus"] == 8 for p in tight.points)
