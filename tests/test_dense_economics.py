"""Dense-model economics: Mazurek and Gabriel (2025), "LLM Inference Economics from First Principles".

Expected closed forms are typed fresh from the post (or, where marked, from its repository script
or the digest's derivation); expected numbers are the values printed in the post, its draft or the
digest of it, with the digest's tolerances (section 7, checks 1-10).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math import get_model
from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import (
    b,
    d_ff,
    d_head,
    d_model,
    f_decode,
    f_prefill,
    flops,
    gamma_in,
    hbm_bw,
    ici_bw,
    kv_bytes,
    n_gpu,
    n_kv,
    n_layers,
    n_param,
    n_q,
    n_reduce,
    p,
    p_act,
    price,
    seq_kv,
    t_batch,
    t_output,
    t_prompt,
    tok_rate_inf,
    vocab,
)
from inference_math.core.validation import InputError
from inference_math.derivations import dense_economics as de
from inference_math.derivations import intensity, kv_cache

h, L, V, nh, S = d_model, n_layers, vocab, n_q, seq_kv
SHAPE = (d_model, d_ff, d_head, n_q, n_kv, n_layers, vocab)
# Llama 3.3 70B, typed from the post's Fig. 1 config.
LLAMA = {d_model: 8192, d_ff: 28672, d_head: 128, n_q: 64, n_kv: 8, n_layers: 80, vocab: 128256}
R = sp.Rational


def llama(expr):
    """Llama's ratios as the post states them: d_head·n_h = h, n_kv = n_h/8, d_ff = 3.5h."""
    return sp.expand(expr.subs({d_head: h / nh, n_kv: nh / 8, d_ff: R(7, 2) * h}))


# --- parameters -------------------------------------------------------------------------------


def test_params_closed_form(assert_same):
    """The post: V·h + L·(w_q + w_k + w_v + w_o + w_1 + w_2 + w_3 + 2h) + h + h·V."""
    block = (h * d_head * nh + 2 * h * d_head * n_kv + nh * d_head * h + 3 * h * d_ff + 2 * h)
    assert_same(de.total_params(), V * h + L * block + h + h * V, SHAPE)


def test_params_llama_form_is_12_75_h_squared():
    """The post: per block 12.75·h² + 2·h with Llama's ratios (exact)."""
    expected = V * h + L * (R(51, 4) * h**2 + 2 * h) + h + h * V
    assert sp.expand(llama(de.total_params().rhs) - expected) == 0


def test_check_1_and_2_llama_3_3_70b_parameters_and_bytes():
    """Checks 1 and 2 (exact): 70,553,706,496 parameters, 141,107,412,992 bytes in bf16."""
    n = de.total_params().rhs.subs(LLAMA)
    assert n == 70_553_706_496
    assert 2 * n == 141_107_412_992
    assert de.post_param_count(get_model("llama-3.3-70b")) == 70_553_706_496


def test_norm_params_are_the_difference_from_the_book_count(assert_same):
    """Identity: (2L + 1)·h RMSNorm weights; numerically 1,318,912 for Llama 3.3 70B."""
    assert_same(de.norm_params(), (2 * L + 1) * h, (L, h))
    book = get_model("llama-3-70b").total_params
    assert book == 70_552_387_584
    assert 70_553_706_496 - book == 1_318_912 == de.norm_params().rhs.subs(LLAMA)


# --- FLOPs ------------------------------------------------------------------------------------


def test_prefill_flops_post_polynomial():
    """The post: L·(10Sh + 25.5Sh² + 4S²h + 5S²n_h) + 2hV with Llama's ratios (exact)."""
    expected = L * (10 * S * h + R(51, 2) * S * h**2 + 4 * S**2 * h + 5 * S**2 * nh) + 2 * h * V
    assert sp.expand(llama(de.prefill_flops().rhs) - expected) == 0


def test_check_3_prefill_flops_at_2048():
    """Check 3 (rel 1e-4): 291.49 TFLOP; per layer 3.6436e12; LM head 2.1013e9."""
    total = de.prefill_flops().rhs.subs({**LLAMA, S: 2048})
    lm_head = 2 * 8192 * 128256
    assert total == 291_493_478_662_144  # the digest's exact value
    assert abs(total / 291.49e12 - 1) < 1e-4
    assert abs((total - lm_head) / 80 / 3.6436e12 - 1) < 1e-4
    assert abs(lm_head / 2.1013e9 - 1) < 1e-4
    assert float(de.prefill_flops_of(get_model("llama-3.3-70b"), 2048)) == float(total)


def test_prefill_flops_script_charges_the_lm_head_for_every_token(assert_same):
    """Repository script: LM head 2·S·h·V, i.e. 2·(S − 1)·h·V more than the post (≈4.3 TFLOP at 2035)."""
    gap = de.prefill_flops_script().rhs - de.prefill_flops().rhs
    assert_same(gap, 2 * (S - 1) * h * V, (S, h, V))
    assert abs(float(gap.subs({**LLAMA, S: 2035})) / 4.3e12 - 1) < 0.01


def test_decode_flops_script_formula():
    """Repository script: L(4h + 2h² + 0.5h² + 6h + 2Sh + 5S·n_h + 2Sh + 2h² + 21h²) + 2hV."""
    per_layer = (4 * h + 2 * h**2 + R(1, 2) * h**2 + 6 * h + 2 * S * h + 5 * S * nh + 2 * S * h
                 + 2 * h**2 + 21 * h**2)
    assert sp.expand(llama(de.decode_flops().rhs) - (L * per_layer + 2 * h * V)) == 0


def test_decode_flops_at_2048_is_about_0_14_tflop():
    """The post: "~291/2048 ≈ 0.14 TFLOPs" for token 2049 (within 0.005 TFLOP)."""
    assert abs(float(de.decode_flops().rhs.subs({**LLAMA, S: 2048})) / 1e12 - 0.14) < 0.005


def test_attention_crossover_llama_closed_form():
    """Derived: 10Sh + 4.5Sh² + 4S²h + 5S²n_h = 21Sh² at S = (16.5h² − 10h)/(4h + 5n_h)."""
    expected = (R(33, 2) * h**2 - 10 * h) / (4 * h + 5 * nh)
    got = de.attention_crossover().rhs.subs({d_head: h / nh, n_kv: nh / 8, d_ff: R(7, 2) * h})
    assert sp.simplify(got - expected) == 0
    assert abs(float(got.subs(LLAMA)) - 1_107_214_336 / 33_088) < 1e-6


def test_quadratic_crossover_matches_the_digest():
    """Digest (derived): 4S²h + 5S²n_h = 25.5Sh² + 10Sh at S ≈ 51,721 for Llama 70B (1%)."""
    expected = (R(51, 2) * h**2 + 10 * h) / (4 * h + 5 * nh)
    got = de.quadratic_crossover().subs({d_head: h / nh, n_kv: nh / 8, d_ff: R(7, 2) * h})
    assert sp.simplify(got - expected) == 0
    assert abs(float(got.subs(LLAMA)) / 51_721 - 1) < 0.01


# --- KV cache ---------------------------------------------------------------------------------


def test_check_6_kv_bytes_post_formula():
    """Checks 6 and 6b (exact): 2·2·80·128·8·S = 671,088,640 at 2048, 40 GiB at 131,072."""
    post = 2 * p_act * L * d_head * n_kv * S
    assert sp.simplify(kv_cache.sequence_bytes().rhs - post) == 0
    values = {p_act: 2, L: 80, d_head: 128, n_kv: 8}
    assert post.subs({**values, S: 2048}) == 671_088_640 == 640 * 2**20
    assert post.subs({**values, S: 131072}) == 42_949_672_960 == 40 * 2**30


def test_presets_have_the_configs_of_the_post():
    """Fig. 1 (draft): Llama 3.3 70B shape; Llama 3.1 8B: h 4096, 32 layers, 8 KV heads."""
    big, small = get_model("llama-3.3-70b"), get_model("llama-3.1-8b")
    assert (big.d_model, big.d_ff, big.layers, big.n_q_heads, big.head_dim, big.vocab) == (
        8192, 28672, 80, 64, 128, 128256)
    assert big.n_q_heads // big.group_size == 8
    assert big.kv_bytes_per_token == 327_680
    assert small.kv_bytes_per_token == 2 * 2 * 32 * 128 * 8


# --- time model -------------------------------------------------------------------------------


def test_check_7_tp_overhead(assert_same):
    """The post: params·comms/layer·h·L·(N−1)/N / bandwidth = 4.369 µs (check 7, rel 1e-3)."""
    expected = p_act * n_reduce * h * L * (n_gpu - 1) / n_gpu / ici_bw
    assert_same(de.tp_overhead(), expected, (p_act, n_reduce, h, L, n_gpu, ici_bw))
    value = de.tp_overhead().rhs.subs({p_act: 2, n_reduce: 2, h: 8192, L: 80, n_gpu: 4,
                                       ici_bw: 450e9})
    assert abs(float(value) / 4.369e-6 - 1) < 1e-3


def test_prefill_time(assert_same):
    """Repository script: B·F/(N·C) + 2·L·(B·S·h·2 bytes)/NVLink bandwidth."""
    expected = b * f_prefill / (n_gpu * flops) + n_reduce * L * b * t_prompt * h * p_act / ici_bw
    assert_same(de.prefill_time(), expected,
                (b, f_prefill, n_gpu, flops, n_reduce, L, t_prompt, h, p_act, ici_bw))


def test_step_time_is_the_roofline_plus_comms():
    """Repository script: max(B·F/(N·C), (W + B·k·S)/(N·BW)) + 2·L·(B·h·2 bytes)/NVLink."""
    expected = (sp.Max(b * f_decode / (n_gpu * flops), (p * n_param + b * kv_bytes * S) / (n_gpu * hbm_bw))
                + n_reduce * L * b * h * p_act / ici_bw)
    assert sp.simplify(de.step_time().rhs - expected) == 0


def test_decode_time_is_the_arithmetic_series(assert_same):
    """Digest (derived): O·(W + B·k·S0)/BW + B·k·O(O−1)/2/BW, plus O all-reduce steps."""
    n_out, S0 = t_output, t_prompt
    bw = n_gpu * hbm_bw
    expected = (n_out * (p * n_param + b * kv_bytes * S0) / bw + b * kv_bytes * n_out * (n_out - 1) / 2 / bw
                + n_out * n_reduce * L * b * h * p_act / ici_bw)
    args = (n_out, S0, p, n_param, b, kv_bytes, n_gpu, hbm_bw, n_reduce, L, h, p_act, ici_bw)
    assert_same(de.decode_time(), expected, args)


def test_decode_time_equals_the_loop_at_integer_points():
    """The closed form equals the explicit sum of memory-bound steps (identity, numeric)."""
    step = (p * n_param + b * kv_bytes * S) / (n_gpu * hbm_bw) + n_reduce * L * b * h * p_act / ici_bw
    values = {p: 2, n_param: 7e10, b: 3, kv_bytes: 3e5, n_gpu: 4, hbm_bw: 3e12, n_reduce: 2, L: 80,
              h: 8192, p_act: 2, ici_bw: 4e11}
    loop = sum(float(step.subs({**values, S: s})) for s in range(100, 137))
    closed = float(de.decode_time().rhs.subs({**values, t_prompt: 100, t_output: 37}))
    assert abs(closed / loop - 1) < 1e-12


@pytest.fixture(scope="module")
def sweep():
    model = get_model("llama-3.3-70b")
    hw = de.post_hardware()
    return {batch: de.simple_model(model, batch, prompt=2035, output=300, hardware=hw)
            for batch in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)}


@pytest.mark.parametrize(("batch", "total"), [(1, 91.9), (16, 995.5), (64, 1957.4), (512, 2725.4)])
def test_check_10_figure_16_total_throughput(sweep, batch, total):
    """Check 10: 4×H100, 989 TFLOP/s, 3350 GB/s, u = 1, NVLink 450 GB/s, 2035/300 (±0.05 tok/s)."""
    assert abs(sweep[batch].tokens_per_s - total) < 0.05


def test_check_10_per_request_at_16(sweep):
    """Check 10: per-request throughput 62.2 tok/s at B = 16 (±0.05)."""
    assert abs(sweep[16].per_request_tokens_per_s - 62.2) < 0.05


def test_sweep_is_memory_bound_and_prefill_dominates_at_512(sweep):
    """Digest: at B = 512 compute 18.7 ms < memory 36.0 ms per step; prefill 44.1 s vs decode 12.26 s."""
    assert all(run.compute_bound_steps == 0 for run in sweep.values())
    assert abs(sweep[512].prefill_s - 44.1) < 0.05
    assert abs(sweep[512].decode_s - 12.26) < 0.005


def test_throughput_limit(assert_same):
    """Digest (derived): O/(t_prefill,1 + k·(O·S0 + O(O−1)/2)/BW + O·t_comm,1) ≈ 2887 tok/s."""
    n_out, S0 = t_output, t_prompt
    per_seq = (f_prefill / (n_gpu * flops) + n_reduce * L * S0 * h * p_act / ici_bw
               + kv_bytes * (n_out * S0 + n_out * (n_out - 1) / 2) / (n_gpu * hbm_bw)
               + n_out * n_reduce * L * h * p_act / ici_bw)
    args = (n_out, S0, f_prefill, n_gpu, flops, n_reduce, L, h, p_act, ici_bw, kv_bytes, hbm_bw)
    assert_same(de.throughput_limit(), n_out / per_seq, args)
    assert sp.simplify(sp.limit(de.throughput().rhs, b, sp.oo) - de.throughput_limit().rhs) == 0
    model = get_model("llama-3.3-70b")
    values = {n_out: 300, S0: 2035, n_gpu: 4, flops: 989e12, hbm_bw: 3.35e12, ici_bw: 450e9,
              n_reduce: 2, L: 80, h: 8192, p_act: 2, kv_bytes: 327680,
              f_prefill: float(de.prefill_flops_of(model, 2035, lm_head_all_tokens=True))}
    assert abs(float(de.throughput_limit().rhs.subs(values)) - 2887) < 1


def test_critical_batch(assert_same):
    """Digest (derived): B* = W/(F_tok·BW/FLOPS − k·S), the instance size cancelling."""
    expected = p * n_param / (f_decode * hbm_bw / flops - kv_bytes * S)
    assert_same(de.critical_batch(), expected, (p, n_param, f_decode, hbm_bw, flops, kv_bytes, S),
                overrides={f_decode: lambda rng: 10 ** rng.uniform(6, 9, 20),
                           kv_bytes: lambda rng: 10 ** rng.uniform(-3, 0, 20)})


def test_critical_batch_reduces_to_the_weights_only_one():
    """Identity: at S = 0 with F = 2N it is eq-intensity-critical-batch, p·C/(2·B)."""
    reduced = de.critical_batch().rhs.subs({S: 0, f_decode: 2 * n_param})
    assert sp.simplify(reduced - intensity.critical_batch().rhs) == 0


def test_critical_batch_and_context_for_llama_on_h100():
    """Digest (derived, 1%): B*(S → 0) ≈ 300 and S_crit ≈ 1,477 tokens (989 TFLOP/s, 3.35 TB/s)."""
    values = {**LLAMA, p: 2, n_param: 70_553_706_496, kv_bytes: 327_680, flops: 989e12,
              hbm_bw: 3.35e12}
    crit = de.critical_batch().rhs.subs(f_decode, de.decode_flops().rhs)
    assert abs(float(crit.subs({**values, S: 0})) / 300 - 1) < 0.01
    s_crit = float(de.critical_context().rhs.subs(values))
    assert abs(s_crit / 1477 - 1) < 0.01
    assert float(de.critical_context_condition().subs(values)) < 0
    # At S_crit the denominator of the critical batch vanishes (identity, numeric).
    assert abs(float(sp.denom(crit).subs({**values, S: s_crit}))) < 1e-6 * 989e12 * 327_680 * s_crit


# --- pricing ----------------------------------------------------------------------------------


def test_output_price_closed_form(assert_same):
    """The post: γβ·N_in + β·N_out = GPU time cost, summed over the batch; cost = N·P·t/3600."""
    expected = n_gpu * price * t_batch / 3600 / (b * (gamma_in * t_prompt + t_output))
    assert_same(de.output_price(), expected, (n_gpu, price, t_batch, b, gamma_in, t_prompt, t_output))


def test_check_8_rounded_rate():
    """Check 8: $0.0028/s × 8.96 s / (16·(0.3·2035 + 300)) = $1.72 per M output (±0.005)."""
    beta = 0.0028 * 8.96 / (16 * (0.3 * 2035 + 300))
    assert abs(1e6 * beta - 1.72) < 0.005
    # The library's formula at the rate 4 × $2.5/h: the exact rate, check 8b.
    exact = de.output_price_per_token(batch=16, prompt=2035, output=300, seconds=8.96, n_gpu=4,
                                      gpu_price_per_hour=2.5, gamma=0.3)
    assert abs(1e6 * exact - 1.71) < 0.005
    assert abs(1e6 * 0.3 * exact - 0.51) < 0.005


@pytest.mark.parametrize(("batch", "elapsed", "price_in", "price_out", "tok_s"), [
    (1, 5.565227147541009, 5.09, 16.98, 419.57),
    (8, 7.507091326988302, 0.86, 2.86, 2488.31),
    (32, 12.410703025874682, 0.35, 1.18, 6020.61),
])
def test_check_9_table_1(batch, elapsed, price_in, price_out, tok_s):
    """Check 9: Table 1 cells from Fig. 18 elapsed times, $10/3600/s, γ = 0.3 (±$0.005, ±0.01 tok/s)."""
    beta = de.output_price_per_token(batch=batch, prompt=2035, output=300, seconds=elapsed,
                                     n_gpu=4, gpu_price_per_hour=2.5, gamma=0.3)
    assert abs(1e6 * beta - price_out) < 0.005
    assert abs(1e6 * 0.3 * beta - price_in) < 0.005
    assert abs(batch * (2035 + 300) / elapsed - tok_s) < 0.01


def test_table_1_batch_64_tokens_per_second_does_not_recompute():
    """Discrepancy 4: 64·2335/19.928 s = 7,499.0, not the table's 7,453.62; the costs do match."""
    tok_s = 64 * 2335 / 19.927982787950896
    assert abs(tok_s - 7499.0) < 0.05 and abs(tok_s - 7453.62) > 40
    beta = de.output_price_per_token(batch=64, prompt=2035, output=300, seconds=19.927982787950896,
                                     n_gpu=4, gpu_price_per_hour=2.5, gamma=0.3)
    assert abs(1e6 * beta - 0.95) < 0.005 and abs(3e5 * beta - 0.28) < 0.005


def test_price_floor(assert_same):
    """Derived: β∞ = N·P·T_out/(3600·R∞·(γ·T_in + T_out)), the price at the throughput limit."""
    expected = n_gpu * price * t_output / (3600 * tok_rate_inf * (gamma_in * t_prompt + t_output))
    assert_same(de.price_floor(), expected, (n_gpu, price, t_output, tok_rate_inf, gamma_in, t_prompt))


# --- monotonicity -----------------------------------------------------------------------------

_THR_ARGS = (b, f_prefill, t_prompt, t_output, n_gpu, flops, hbm_bw, ici_bw, n_reduce, L, h, p_act,
             p, n_param, kv_bytes)
_POST_VALUES = (2.958e14, 2035, 300, 4, 989e12, 3.35e12, 450e9, 2, 80, 8192, 2, 2, 70_553_706_496,
                327_680)


@given(st.floats(1, 4096), st.floats(1.01, 8))
def test_throughput_rises_and_per_request_speed_falls_with_the_batch(batch, factor):
    """The post: total throughput grows with the batch, per-request throughput falls."""
    fn = compile_fn(de.throughput(), _THR_ARGS)
    small, large = float(fn(batch, *_POST_VALUES)), float(fn(batch * factor, *_POST_VALUES))
    assert large > small
    assert large / (batch * factor) < small / batch


# --- input validation -------------------------------------------------------------------------


def test_bad_inputs_raise_input_error_naming_the_field():
    model = get_model("llama-3.3-70b")
    hw = de.post_hardware()
    with pytest.raises(InputError, match="batch"):
        de.simple_model(model, 0, prompt=2035, output=300, hardware=hw)
    with pytest.raises(InputError, match="prompt"):
        de.simple_model(model, 1, prompt=-5, output=300, hardware=hw)
    with pytest.raises(InputError, match="hardware"):
        de.simple_model(model, 1, prompt=2035, output=300, hardware="h100")
    with pytest.raises(InputError, match="utilization"):
        de.post_hardware(utilization=(1.2, 0.7))
    with pytest.raises(InputError, match="gamma"):
        de.output_price_per_token(batch=1, prompt=1, output=1, seconds=1, n_gpu=1,
                                  gpu_price_per_hour=1, gamma=0)
    with pytest.raises(InputError, match="tokens"):
        de.prefill_flops_of(model, np.array([1.0, -2.0]))
    with pytest.raises(InputError, match="dense"):
        de.post_param_count(get_model("deepseek-v3-paper"))
