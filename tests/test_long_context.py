"""Long context: Erdil (2025), section 4.3 (KV-read cost floor, attention arithmetic intensity)."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import (
    accept,
    b,
    c_kv,
    ctx,
    d_head,
    flops,
    g,
    gamma,
    hbm_bw,
    kv_bytes,
    n_gpu,
    n_layers,
    n_param,
    n_q,
    p,
    p_act,
    price,
    r_draft,
)
from inference_math.fullmodel import comparisons as C
from inference_math.fullmodel import long_context as lc
from inference_math.presets.hardware import get_gpu
from inference_math.presets.models import get_model

FLOOR_ARGS = (kv_bytes, ctx, hbm_bw, price)
# Section 4.3 typed fresh: 10^6 tokens · M_KV·ℓ bytes each, read at B bytes/s, at P $/hour.
FLOOR = 10**6 * kv_bytes * ctx / hbm_bw * price / 3600
floor_fn = compile_fn(lc.kv_floor(), FLOOR_ARGS)

positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
factor = st.floats(min_value=1.01, max_value=100.0)


def test_kv_read_time_is_the_kv_term_of_the_memory_time(assert_same):
    """Erdil (2025) eq. 34 and code: the cache of b sequences, M_KV·ℓ·b bytes over N·B."""
    assert_same(lc.kv_read_time(), kv_bytes * ctx * b / (n_gpu * hbm_bw),
                (kv_bytes, ctx, b, n_gpu, hbm_bw))


def test_kv_floor(assert_same):
    """Erdil (2025) sec. 4.3: c_KV = 10^6·M_KV·ℓ/B·P/3600 $/Mtok (N and b cancel)."""
    assert_same(lc.kv_floor(), FLOOR, FLOOR_ARGS)


def test_kv_floor_mistral_large_2_at_the_code_prices():
    """Hand computation: Mistral Large 2 at 100K on an H100 at $2.10/h and 75% of 3.3 TB/s.

    KV bytes per token 2·(96/12)·128·88·2 = 360,448; the reference code's own floor is $8.495.
    """
    kv = 2 * (96 / 12) * 128 * 88 * 2
    hand = 1e6 * kv * 1e5 / (0.75 * 3.3e12) * 2.10 / 3600
    model, gpu = get_model("mistral-large-2"), get_gpu("h100")
    assert model.kv_bytes_per_token == kv
    ours = float(floor_fn(model.kv_bytes_per_token, 1e5, gpu.bandwidth(capped=True),
                          gpu.price_per_hour))
    assert math.isclose(ours, hand, rel_tol=1e-12)
    code = C.reference_json("figure_claims_code_vs_paper")["sec4_3_long_context"]
    assert abs(ours - code["kv_read_floor_code_prices"]["at_2p1usd_h_0p75cap"]) < 5e-4


def test_the_papers_six_dollars():
    """Erdil (2025) sec. 4.3: 36 PB per million tokens · $2/h over 3.3 TB/s = $6.06 per Mtok."""
    ours = float(floor_fn(360e3, 1e5, 3.3e12, 2.0))  # the paper's rounded 360 KB per token
    assert math.isclose(1e6 * 360e3 * 1e5, 36e15)  # 36 PB read per million tokens
    assert round(ours, 2) == 6.06
    # With the preset's exact 360,448 bytes the same prices give $6.07 (the code prints 6.068).
    exact = float(floor_fn(get_model("mistral-large-2").kv_bytes_per_token, 1e5, 3.3e12, 2.0))
    assert round(exact, 3) == 6.068


@given(positive, positive, positive, positive, factor)
def test_kv_floor_is_monotone(kv, ell, bw, usd, k):
    """The floor grows with the cache, the context and the price, and falls with bandwidth."""
    base = float(floor_fn(kv, ell, bw, usd))
    assert float(floor_fn(kv * k, ell, bw, usd)) > base
    assert float(floor_fn(kv, ell * k, bw, usd)) > base
    assert float(floor_fn(kv, ell, bw, usd * k)) > base
    assert float(floor_fn(kv, ell, bw * k, usd)) < base


def test_kv_floor_bounds_the_reference_code_long_context_frontiers():
    """No point of the code's 100K-context frontiers is below the KV floor (no speculation)."""
    gpu = get_gpu("h100")
    for comparison, key in (("mistral_large_comparison", "mistral-large-2"),
                            ("deepseek_v3_context_len_comparison", "deepseek-v3-paper")):
        model = get_model(key)
        floor = float(floor_fn(model.kv_bytes_per_token, 1e5, gpu.bandwidth(capped=True),
                               gpu.price_per_hour))
        curve = C.reference_frontier(comparison, "Long context")
        assert np.all(curve["usd_per_mtok"] >= floor)


def test_attention_intensity(assert_same):
    """Erdil (2025) sec. 4.3: 4·L·n_h·d·ℓ FLOP over p·2·L·n_h·d·ℓ/g bytes = 2g/p."""
    assert_same(lc.attention_intensity(), 2 * g / p_act, (g, p_act))
    paper = (4 * n_layers * n_q * d_head * ctx) / (p_act * 2 * n_layers * n_q * d_head * ctx / g)
    assert_same(lc.attention_intensity(), paper, (g, p_act, n_layers, n_q, d_head, ctx))


def test_attention_intensity_mla(assert_same):
    """Code's MLA: 4·c_kv·n_q·L·ℓ FLOP over c_kv·L·ℓ·p_act bytes = 4·n_q/p_act (g = 2n_q)."""
    assert_same(lc.attention_intensity_mla(), 4 * n_q / p_act, (n_q, p_act))
    gqa = lc.attention_intensity().rhs.subs(g, 2 * n_q)
    assert sp.simplify(gqa - lc.attention_intensity_mla().rhs) == 0


def test_attention_intensities_of_the_two_models():
    """Mistral Large 2 (g = 12, 16-bit cache): 12 FLOP/byte; DeepSeek-V3 (n_q = 128): 256."""
    gqa = compile_fn(lc.attention_intensity(), (g, p_act))
    mla = compile_fn(lc.attention_intensity_mla(), (n_q, p_act))
    assert float(gqa(12, 2)) == 12.0
    assert float(mla(128, 2)) == 256.0


def test_multi_head_attention_utilization_is_below_one_percent():
    """Erdil (2025) sec. 4.3: with g = 1 an H100 (1e15 FLOP/s, 3.3 TB/s) is < 1% utilized."""
    bound = lc.attention_utilization_bound().subs(lc.attention_intensity().lhs,
                                                  lc.attention_intensity().rhs)
    value = float(bound.subs({g: 1, p_act: 2, hbm_bw: 3.3e12, flops: 1e15}))
    assert math.isclose(value, 1 * 3.3e12 / 1e15, rel_tol=1e-12)
    assert value < 0.01


def test_attention_flop_floor(assert_same):
    """Attention arithmetic priced like eq-search-cost: 10^6·4·c_kv·n_q·L·ℓ/C·P/3600."""
    expected = 10**6 * 4 * c_kv * n_q * n_layers * ctx / flops * price / 3600
    assert_same(lc.attention_flop_floor(mla=True), expected,
                (c_kv, n_q, n_layers, ctx, flops, price))


def test_kv_weight_crossover_batch(assert_same):
    """Erdil (2025) sec. 4.3: KV reads exceed the 244 GB of weights beyond a batch of about 7."""
    assert_same(lc.kv_weight_crossover_batch(), p * n_param / (kv_bytes * ctx),
                (p, n_param, kv_bytes, ctx))
    model = get_model("mistral-large-2")
    crossover = compile_fn(lc.kv_weight_crossover_batch(), (p, n_param, kv_bytes, ctx))
    value = float(crossover(2, model.total_params, model.kv_bytes_per_token, 1e5))
    assert math.isclose(value, 2 * model.total_params / (360448 * 1e5), rel_tol=1e-12)
    assert math.ceil(value) == 7


def test_speculative_floor_factor(assert_same):
    """Erdil (2025) eq. 46 with t_Q = t_P/r: (1 − α)(1 + γ/r)/(1 − α^γ)."""
    expected = (1 - accept) * (1 + gamma / r_draft) / (1 - accept**gamma)
    overrides = {accept: lambda rng: rng.uniform(0.05, 0.95, 20)}
    assert_same(lc.speculative_floor_factor(), expected, (accept, gamma, r_draft),
                overrides=overrides)
    fn = compile_fn(lc.speculative_floor_factor(), (accept, gamma, r_draft))
    hand = 0.2 * (1 + 5 / 22) / (1 - 0.8**5)  # Mistral Large 2 over Llama 3 8B MQA, γ = 5
    assert math.isclose(float(fn(0.8, 5, 22)), hand, rel_tol=1e-12)
    assert math.isclose(float(fn(0.8, 1, 22)), 1 + 1 / 22, rel_tol=1e-12)
