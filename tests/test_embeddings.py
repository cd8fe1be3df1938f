"""Why embeddings are cheap (inference_math.derivations.embeddings), against Mazurek (2025).

Expected values are typed fresh from the post ("Why are embeddings so cheap?"), from the per-layer
FLOP table of "LLM Inference Economics from First Principles" that it reuses, or from the digest's
numbered checks (post1) with their tolerances.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math import get_gpu, get_model
from inference_math.core.symbols import (
    b,
    d_ff,
    d_head,
    d_model,
    flop_usd,
    flops,
    flops_emb,
    hbm_bw,
    n_kv,
    n_layers,
    n_param,
    n_q,
    p,
    price,
    seq_kv,
    util,
)
from inference_math.core.validation import InputError
from inference_math.derivations import embeddings as E
from inference_math.derivations import kv_cache

SHAPE = (seq_kv, n_layers, d_model, n_q, n_kv, d_head, d_ff)
S_, L_, H_, NQ = seq_kv, n_layers, d_model, n_q
POST = E.MAZUREK2025_EMBEDDINGS
QWEN = E.shape_of(get_model("qwen3-embedding-8b"))
H100_REAL = {"chip_flops": 750e12, "chip_bandwidth": 3.3e12, "n_params": 7.57e9, "shape": QWEN}


POST_COEFF = sp.Rational(51, 2)  # the post's 25.5


def post_polynomial(seq: int, layers=36, h=4096, heads=32, coeff=POST_COEFF) -> int:
    """The post's L·(10Sh + 25.5Sh² + 4S²h + 5S²n_h), in exact integers."""
    return layers * (10 * seq * h + coeff * seq * h**2 + 4 * seq**2 * h + 5 * seq**2 * heads)


# --- FLOPs -------------------------------------------------------------------------------------


def test_embedding_flops_are_the_per_layer_table_without_lm_head(assert_same):
    """Mazurek and Gabriel (2025) per-layer counts: RMSNorm 4Sh, RoPE 6 per query element,
    Q/K/V/O projections, QKᵀ and AV 2S² per head width, softmax 5S²n_h, SwiGLU 3·2ShF; no LM head."""
    qw, kvw = n_q * d_head, n_kv * d_head
    layer = (4 * S_ * H_ + 6 * S_ * qw + 2 * S_ * H_ * qw + 2 * 2 * S_ * H_ * kvw + 2 * S_ * qw * H_
             + 2 * S_**2 * qw + 5 * S_**2 * n_q + 2 * S_**2 * qw + 3 * 2 * S_ * H_ * d_ff)
    assert_same(E.embedding_flops(), n_layers * layer, SHAPE)


def test_post_form_has_the_25_5_coefficient(assert_same):
    """Mazurek (2025), 'Counting FLOPs': L·(10Sh + 25.5Sh² + 4S²h + 5S²n_h)."""
    expected = L_ * (10 * S_ * H_ + sp.Rational(51, 2) * S_ * H_**2 + 4 * S_**2 * H_ + 5 * S_**2 * NQ)
    assert_same(E.embedding_flops_post(), expected, SHAPE)


def test_qwen_form_has_the_23_coefficient(assert_same):
    """Digest discrepancy 17: Q + KV + O = 2 + 1 + 2 and a 3h MLP give 5 + 18 = 23 Sh²."""
    expected = L_ * (10 * S_ * H_ + 23 * S_ * H_**2 + 4 * S_**2 * H_ + 5 * S_**2 * NQ)
    assert_same(E.embedding_flops_qwen(), expected, SHAPE)


def test_check_1_flops_at_1024_tokens():
    """Check 1: F_emb(1024) with the post's coefficients = 16.4 TFLOPs (16.397), rel 5e-3."""
    ours = E.flops_per_embedding(POST["seq_len"], shape=QWEN)
    assert ours == int(post_polynomial(1024))
    assert ours == 16_397_144_948_736
    assert abs(ours / POST["flops_stated"] - 1) < 5e-3


def test_qwen_shape_flops_at_1024_tokens():
    """Discrepancy 17: with Qwen3-Embedding-8B's own shape the count is 14.85 TFLOPs."""
    assert E.flops_per_embedding(1024, form="shape", shape=QWEN) == post_polynomial(1024, coeff=23)
    assert abs(E.flops_per_embedding(1024, form="shape", shape=QWEN) / 14.85e12 - 1) < 1e-3


def test_flops_at_1040_tokens():
    """Digest sec. 3.3: at S = 1040 the post's formula gives 16.663 TFLOPs."""
    assert abs(E.flops_per_embedding(1040, shape=QWEN) / 16.663e12 - 1) < 1e-4


def test_check_2_parameters_and_weight_bytes():
    """Check 2: 7.57e9 parameters x 2 bytes = 15.14 GB. The shape (one vocabulary matrix, no LM
    head) counts 36·4096·(3·12288 + 2·128·40) + 151665·4096 = 7,566,987,264 parameters."""
    counts = kv_cache.parameter_counts(n_layers=36, d_model=4096, d_ff=12288, n_q=32, n_kv=8,
                                       d_head=128, vocab=151665, tied=True)
    assert counts["total"] == 36 * 4096 * (3 * 12288 + 2 * 128 * 40) + 151665 * 4096
    assert counts["total"] == 7_566_987_264
    assert round(counts["total"] / 1e7) * 1e7 == POST["n_params_stated"]
    assert POST["n_params_stated"] * POST["bytes_per_param"] == pytest.approx(15.14e9, rel=1e-12)


def test_checks_2b_and_3_memory_and_compute_time():
    """Checks 2b and 3: t_mem = 15.14e9/3.3e12 = 0.0046 s (±1e-4), t_comp = 16.4e12/750e12 =
    0.021 s (0.02187, ±1e-3); the rate bound is 45.7 embeddings/s (accept 45-48)."""
    one = E.embedding_pass(1024, 1, **H100_REAL)
    assert abs(one["t_mem"] - 0.0046) <= 1e-4
    assert abs(one["t_comp"] - 0.021) <= 1e-3
    assert one["time"] == one["t_comp"]  # compute bound
    assert 45 <= one["emb_per_s"] <= 48
    assert one["emb_per_s"] == pytest.approx(750e12 / 16_397_144_948_736, rel=1e-12)
    assert one["tok_per_s"] == pytest.approx(1024 * one["emb_per_s"], rel=1e-12)


# --- time, rate, critical batch, crossover ------------------------------------------------------


def test_batch_time_is_the_larger_of_weight_read_and_arithmetic():
    """Mazurek (2025): 'the factor limiting our performance will be the larger of these two'."""
    assert E.batch_time().rhs == sp.Max(p * n_param / hbm_bw, b * flops_emb / flops)


def test_rate_is_b_over_time(assert_same):
    """R = b/t: min(b·B/(p·N), C/F) at random points; the ceiling is C/F."""
    args = (b, p, n_param, hbm_bw, flops, flops_emb)
    assert_same(E.embedding_rate(), b / sp.Max(p * n_param / hbm_bw, b * flops_emb / flops), args,
                simplify=False)
    assert E.rate_ceiling() == flops / flops_emb


def test_critical_batch(assert_same):
    """b·F/C = p·N/B gives b* = p·N·C/(B·F)."""
    assert_same(E.critical_batch(), p * n_param * flops / (hbm_bw * flops_emb),
                (p, n_param, flops, hbm_bw, flops_emb))


def test_crossover_length_solves_the_quadratic():
    """Digest sec. 3.6: F(S)/750e12 = 15.14e9/3.3e12 at S ≈ 221 tokens (post coefficients)."""
    s_star = E.crossover_tokens(**H100_REAL)
    assert abs(s_star / 221 - 1) < 0.01
    target = 2 * 7.57e9 * 750e12 / 3.3e12
    assert float(post_polynomial(sp.Float(s_star, 30))) == pytest.approx(target, rel=1e-10)


def test_crossover_length_is_near_the_critical_batch():
    """To first order F ≈ 2·N_layers-params·S, so S* is close to b* = p·C/(2·B) = 227."""
    s_star = E.crossover_tokens(**H100_REAL)
    b_star = 2 * 750e12 / (2 * 3.3e12)
    assert abs(s_star / b_star - 1) < 0.05


@given(st.floats(1, 4096), st.floats(1, 8192), st.floats(1, 512))
def test_rate_grows_with_batch_and_never_exceeds_the_ceiling(seq, batch, extra):
    """R(b) is non-decreasing in b and bounded by C/F (eq-embeddings-rate)."""
    low = E.embedding_pass(seq, batch, **H100_REAL)
    high = E.embedding_pass(seq, batch + extra, **H100_REAL)
    ceiling = 750e12 / E.flops_per_embedding(seq, shape=QWEN)
    assert high["emb_per_s"] >= low["emb_per_s"] * (1 - 1e-12)
    assert high["emb_per_s"] <= ceiling * (1 + 1e-12)


@given(st.floats(300, 8192), st.floats(1, 256))
def test_batching_does_not_help_above_the_crossover(seq, batch):
    """Above S* one input is already compute bound, so b inputs take b times as long."""
    one = E.embedding_pass(seq, 1, **H100_REAL)
    many = E.embedding_pass(seq, batch, **H100_REAL)
    assert many["emb_per_s"] == pytest.approx(one["emb_per_s"], rel=1e-12)


# --- dollars -----------------------------------------------------------------------------------


def test_flop_per_dollar(assert_same):
    """FLOPS/$ = TFLOPS/($/h) of the post, as FLOPs per dollar: 3600·C/P."""
    assert_same(E.flop_per_dollar(), 3600 * flops / price, (flops, price))


def test_check_9_flops_per_dollar():
    """Check 9: 989/2 = 494.5, 750/2 = 375, 165/0.37 = 445.9 (post 445), ±1."""
    phi = sp.lambdify((flops, price), E.flop_per_dollar().rhs)
    for tflops, usd, stated in ((989, 2, 494.5), (750, 2, 375), (165, 0.37, 445)):
        assert abs(phi(tflops * 1e12, usd) / 3600 / 1e12 - stated) <= 1


def test_cost_of_a_compute_bound_pass(assert_same):
    """10⁶·F/(u·S·Φ), and with Φ = 3600·C/P it is the post's $/h ÷ (tokens/s·3600) × 10⁶."""
    assert_same(E.cost_compute_bound(), 10**6 * flops_emb / (util * seq_kv * flop_usd),
                (flops_emb, util, seq_kv, flop_usd))
    tokens_per_s = seq_kv * flops / flops_emb
    post = price / (tokens_per_s * 3600) * 10**6
    ours = E.cost_compute_bound().rhs.subs({util: 1, flop_usd: 3600 * flops / price})
    assert sp.simplify(ours - post) == 0


def test_checks_5b_6_7_and_utilisation_cost():
    """Checks 5b, 6, 7: $0.0166 (±5e-5), $0.01062 (0.010626, ±1e-5) and 36% cheaper (±1 pp),
    $0.0090 (0.008984, ±5e-5); 10% utilisation multiplies the cost by ten ($0.166)."""
    h100 = E.usd_per_million_tokens(2.0, 33_488)
    rtx = E.usd_per_million_tokens(0.37, 9_672)
    assert abs(h100 - 0.0166) <= 5e-5
    assert abs(rtx - 0.01062) <= 1e-5
    assert abs(100 * (1 - rtx / h100) - 36) <= 1
    assert abs(E.usd_per_million_tokens(0.37, 11_440) - 0.0090) <= 5e-5
    assert E.usd_per_million_tokens(2.0, 33_488, utilisation=0.1) == pytest.approx(10 * h100)


def test_rtx_4090_preset_matches_the_datasheet_and_the_post():
    """NVIDIA (2022): 165.2 TFLOP/s dense FP16 with FP32 accumulate, 24 GB at 1008 GB/s; the post
    rents it at $0.37/h and quotes 165 TFLOPS."""
    rtx = get_gpu("rtx-4090")
    assert rtx.flops(16) == 165.2e12
    assert abs(rtx.flops(16) / POST["rtx4090_flops"] - 1) < 0.002
    assert rtx.hbm_bandwidth == 1008e9 and rtx.hbm_bytes == 24e9
    assert rtx.price_per_hour == POST["rtx4090_price"]
    assert rtx.flop_cap == rtx.bandwidth_cap == 1.0


def test_rtx_4090_pass_is_compute_bound_too():
    """On the 4090 one 1024-token embedding takes 16.4e12/165.2e12 ≈ 0.099 s of arithmetic against
    15.14e9/1008e9 ≈ 0.015 s of weight reads."""
    rtx = get_gpu("rtx-4090")
    one = E.embedding_pass(1024, 1, chip_flops=rtx.flops(16), chip_bandwidth=rtx.bandwidth(),
                           n_params=7.57e9, shape=QWEN)
    assert one["t_comp"] == pytest.approx(16_397_144_948_736 / 165.2e12, rel=1e-12)
    assert one["t_mem"] == pytest.approx(15.14e9 / 1008e9, rel=1e-12)
    assert one["t_comp"] > one["t_mem"]


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "field"), [
    (lambda: E.flops_per_embedding(0, shape=QWEN), "seq_len"),
    (lambda: E.flops_per_embedding(1024, form="exact", shape=QWEN), "form"),
    (lambda: E.flops_per_embedding(1024, shape={**QWEN, "n_kv": 0}), "n_kv"),
    (lambda: E.flops_per_embedding(1024, shape={"d_model": 4096}), "n_layers"),
    (lambda: E.embedding_pass(1024, -1, **H100_REAL), "batch"),
    (lambda: E.embedding_pass(1024, 1, chip_flops=0, chip_bandwidth=1, n_params=1, shape=QWEN), "chip_flops"),
    (lambda: E.usd_per_million_tokens(2.0, 1000, utilisation=1.5), "utilisation"),
    (lambda: E.usd_per_million_tokens(-2.0, 1000), "price_per_hour"),
    (lambda: E.crossover_tokens(chip_flops=1, chip_bandwidth=1, n_params=math.nan, shape=QWEN), "n_params"),
])
def test_bad_input_raises_input_error_naming_the_field(call, field):
    """Public helpers refuse bad input with InputError naming the field."""
    with pytest.raises(InputError, match=field):
        call()
