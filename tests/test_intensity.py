"""The decode roofline: Austin et al. (2025), "All About Transformer Inference", sections on
linear operations, attention, theoretical estimates and Appendix A.

Expected expressions are typed fresh from the source (generalised from its bf16 case to p bytes
per weight and p_act per activation); expected numbers are the source's printed values with the
tolerances of the digest's check table (check numbers in the docstrings).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import (
    b,
    d_ff,
    d_model,
    flops,
    hbm_bw,
    kv_bytes,
    n_gpu,
    n_param,
    p,
    p_act,
    seq_kv,
    seq_q,
)
from inference_math.core.validation import InputError
from inference_math.derivations import intensity as it
from inference_math.derivations import roofline
from inference_math.presets.hardware import get_gpu

# Typed from the source: bf16[B, D] x bf16[D, F], generalised to p and p_act bytes.
MATMUL_I = 2 * b * d_model * d_ff / (p_act * b * d_model + p * d_model * d_ff + p_act * b * d_ff)
# Source, bf16: 2BDF / (2BD + 2DF + 2BF).
MATMUL_I_BF16 = 2 * b * d_model * d_ff / (2 * b * d_model + 2 * d_model * d_ff + 2 * b * d_ff)
# Source: 4BSTD / (4BSD + 4BTD) = ST/(S+T) in bf16; generalised, 2ST/(p_act (S+T)).
ATTN_I = 2 * seq_kv * seq_q / (p_act * (seq_kv + seq_q))
KV_SEQ = kv_bytes * seq_kv  # bytes/token times context
STEP_MIN = (b * KV_SEQ + p * n_param) / (n_gpu * hbm_bw)
STEP = b * KV_SEQ / (n_gpu * hbm_bw) + sp.Max(2 * b * n_param / (n_gpu * flops),
                                              p * n_param / (n_gpu * hbm_bw))
STEP_ARGS = (b, kv_bytes, seq_kv, p, n_param, n_gpu, hbm_bw, flops)

# TPU v5e numbers as the source prints them.
C_BF16, C_INT8, W_ROOFLINE, W_QUIZ = 1.97e14, 3.94e14, 8.2e11, 8.1e11

POP_QUIZ = dict(n_params=30e9, weight_bytes=1, kv_bytes_per_token=100e3, context=8192,
                n_chips=16, chip_bandwidth=W_QUIZ)


def rel(a, b_):
    return abs(a / b_ - 1)


# --- linear operations ------------------------------------------------------------------------


def test_matmul_intensity(assert_same):
    """Sec. 'Linear operations': 2BDF FLOPs over activation, weight and output bytes."""
    assert_same(it.matmul_intensity(), MATMUL_I, (b, d_model, d_ff, p, p_act))


def test_matmul_intensity_in_bf16_is_the_source_display(assert_same):
    """Sec. 'Linear operations': 2BDF/(2BD + 2DF + 2BF) at p = p_act = 2."""
    derived = it.matmul_intensity().rhs.subs({p: 2, p_act: 2})
    assert_same(derived, MATMUL_I_BF16, (b, d_model, d_ff))


def test_matmul_intensity_limit_is_2b_over_p():
    """Sec. 'Linear operations': D, F >> B gives 2BDF/2DF = B in bf16, i.e. 2b/p."""
    assert sp.simplify(it.matmul_intensity_limit().rhs - 2 * b / p) == 0
    assert it.matmul_intensity_limit().rhs.subs(p, 2) == b


def test_critical_batch_is_p_C_over_2B(assert_same):
    """Digest A2.2: B >= (b_w/2)·C/W; identical to Erdil's b* (an identity between chapters)."""
    assert_same(it.critical_batch(), p * flops / (2 * hbm_bw), (p, flops, hbm_bw))
    assert sp.simplify(it.critical_batch().rhs - roofline.critical_batch().rhs) == 0


def test_check_1_tpu_v5e_bf16_critical_batch_is_240():
    """Check 1: 1.97e14/8.2e11 = 240.24, stated '240', rtol 1%."""
    fn = compile_fn(it.critical_batch(), (p, flops, hbm_bw))
    assert rel(float(fn(2, C_BF16, W_ROOFLINE)), 240) < 0.01
    assert rel(float(fn(2, C_BF16, W_ROOFLINE)), 240.24) < 1e-3


def test_check_2_int8_weights_bf16_flops_is_120():
    """Check 2: int8 weights with bf16 arithmetic halve B_crit to 120 (rtol 1%)."""
    fn = compile_fn(it.critical_batch(), (p, flops, hbm_bw))
    assert rel(float(fn(1, C_BF16, W_ROOFLINE)), 120) < 0.01


def test_check_3_int8_by_int8_is_back_to_240():
    """Check 3: int8 x int8 at 3.94e14 OP/s gives 240 again (rtol 2%)."""
    fn = compile_fn(it.critical_batch(), (p, flops, hbm_bw))
    assert rel(float(fn(1, C_INT8, W_ROOFLINE)), 240) < 0.02


def test_critical_batch_of_the_v5e_preset():
    """Checks 1-3 through the preset: 240, 120 and 240 (rtol 1%, 1%, 2%)."""
    v5e = get_gpu("tpu-v5e")
    assert rel(it.critical_batch_of(v5e, 2, 16), 240) < 0.01
    assert rel(it.critical_batch_of(v5e, 1, 16), 120) < 0.01
    assert rel(it.critical_batch_of(v5e, 1, 8), 240) < 0.02


def test_exact_critical_batch_solves_the_full_condition(assert_same):
    """Intensity = C/B at b*_exact, typed: (C/B)·p·D·F / (2DF − (C/B)·p_act·(D + F))."""
    r = flops / hbm_bw
    expected = r * p * d_model * d_ff / (2 * d_model * d_ff - r * p_act * (d_model + d_ff))
    large = {p_act: lambda rng: 10 ** rng.uniform(-3, -1, 20)}  # keeps the denominator positive
    assert_same(it.critical_batch_exact(), expected, (flops, hbm_bw, p, p_act, d_model, d_ff),
                overrides=large)


def test_exact_critical_batch_tends_to_b_star():
    """For D, F -> oo the exact threshold is the source's B_crit (limit)."""
    exact = it.critical_batch_exact().rhs
    limit = sp.limit(sp.limit(exact, d_ff, sp.oo), d_model, sp.oo)
    assert sp.simplify(limit - p * flops / (2 * hbm_bw)) == 0


def test_exact_critical_batch_for_d_equal_f_16384():
    """Digest A3 [derived]: D = F = 16384 at hardware intensity 240 gives 247.2 (typed)."""
    fn = compile_fn(it.critical_batch_exact(), (flops, hbm_bw, p, p_act, d_model, d_ff))
    value = float(fn(240, 1, 2, 2, 16384, 16384))
    assert abs(value - 240 * 16384 / (16384 - 480)) < 1e-9
    assert abs(value - 247.2) < 0.05


def test_matmul_intensity_supremum():
    """As b -> oo the weights stop mattering: 2DF/(p_act (D + F))."""
    expected = 2 * d_model * d_ff / (p_act * (d_model + d_ff))
    assert sp.simplify(it.matmul_intensity_supremum() - expected) == 0


@given(st.floats(1, 1e4), st.floats(1.01, 10), st.floats(1e3, 1e5), st.floats(1e3, 1e5))
def test_matmul_intensity_increases_with_batch(batch, factor, dm, dff):
    """More sequences share the same weight bytes: intensity is increasing in b."""
    fn = compile_fn(it.matmul_intensity(), (b, d_model, d_ff, p, p_act))
    assert fn(batch * factor, dm, dff, 2, 2) > fn(batch, dm, dff, 2, 2)


# --- attention --------------------------------------------------------------------------------


def test_attention_intensity(assert_same):
    """Sec. 'What about attention?': 4BSTD/(4BSD + 4BTD) = ST/(S + T) in bf16."""
    assert_same(it.attention_intensity(), ATTN_I, (seq_kv, seq_q, p_act))
    bf16 = it.attention_intensity().rhs.subs(p_act, 2)
    assert sp.simplify(bf16 - seq_kv * seq_q / (seq_kv + seq_q)) == 0


def test_check_4_prefill_attention_needs_480_tokens():
    """Check 4: S = T and intensity >= 240 requires T >= 480 (exact)."""
    t_star = it.prefill_attention_length().rhs
    assert t_star.subs({p_act: 2, flops: 240, hbm_bw: 1}) == 480
    self_attn = (seq_kv * seq_q / (seq_kv + seq_q)).subs(seq_kv, seq_q)
    assert sp.solve(sp.Eq(self_attn, 240), seq_q) == [480]


def test_check_4_decode_attention_intensity_tends_to_one():
    """Check 4: T = 1, S -> oo gives intensity -> 1 in bf16 (exact, sp.limit)."""
    assert it.attention_decode_limit().rhs.subs(p_act, 2) == 1
    assert sp.limit(seq_kv / (seq_kv + 1), seq_kv, sp.oo) == it.attention_decode_limit().rhs.subs(
        p_act, 2)


@given(st.floats(1, 1e7), st.floats(0.5, 4))
def test_decode_attention_never_reaches_its_limit(context, act_bytes):
    """Decode attention intensity 2S/(p_act(S+1)) < 2/p_act at every finite context."""
    fn = compile_fn(it.attention_intensity(), (seq_kv, seq_q, p_act))
    assert fn(context, 1, act_bytes) < 2 / act_bytes


# --- step time and throughput -----------------------------------------------------------------


def test_step_time_min(assert_same):
    """Sec. 'Theoretical estimates': (batch·KV + parameter bytes)/total bandwidth."""
    assert_same(it.step_time_min(), STEP_MIN, STEP_ARGS[:-1])


def test_throughput_memory_bound(assert_same):
    """Sec. 'Theoretical estimates': batch·bandwidth/(batch·KV + parameter bytes)."""
    expected = b * n_gpu * hbm_bw / (b * KV_SEQ + p * n_param)
    assert_same(it.throughput_memory_bound(), expected, STEP_ARGS[:-1])


def test_general_step_time(assert_same):
    """Sec. 'Theoretical estimates': B·KV/W + max(2·B·P/C, P bytes/W), totals over chips."""
    assert_same(it.step_time(), STEP, STEP_ARGS)


def test_general_step_time_is_the_minimum_below_the_crossover():
    """Below b* the FLOPs term is inactive and the general formula is the memory-bound one."""
    general = compile_fn(it.step_time(), STEP_ARGS)
    minimum = compile_fn(it.step_time_min(), STEP_ARGS[:-1])
    hw = (100e3, 8192, 1, 30e9, 16, W_QUIZ)
    batches = np.array([1.0, 4.0, 64.0, 120.0])  # b* = 1.97e14/(2·8.1e11) = 121.6
    np.testing.assert_allclose(general(batches, *hw, C_BF16), minimum(batches, *hw), rtol=1e-12)


def test_check_5_pop_quiz_batch_4():
    """Check 5: (4·819.2e6 + 30e9)/(16·8.1e11) = 2.57 ms, stated '2.5 ms' (rtol 5%)."""
    t = it.decode_step_time_min(4, **POP_QUIZ)
    assert rel(t, 2.5e-3) < 0.05
    assert rel(t, (4 * 100e3 * 8192 + 30e9) / (16 * 8.1e11)) < 1e-12
    assert rel(it.decode_step_time(4, chip_flops=C_BF16, **POP_QUIZ), t) < 1e-12


def test_check_6_pop_quiz_batch_256():
    """Check 6: 16.18 + 4.87 = 21.05 ms, stated '21ms' (rtol 3%); FLOPs 4.87 ms > load 2.31 ms."""
    t = it.decode_step_time(256, chip_flops=C_BF16, **POP_QUIZ)
    assert rel(t, 21e-3) < 0.03
    assert rel(t, 21.05e-3) < 1e-3
    flops_term = float(compile_fn(it.weight_flops_time(), (b, n_param, n_gpu, flops))(
        256, 30e9, 16, C_BF16))
    load_term = float(compile_fn(it.weight_load_time(), (p, n_param, n_gpu, hbm_bw))(
        1, 30e9, 16, W_QUIZ))
    assert rel(flops_term, 4.87e-3) < 3e-3 and rel(load_term, 2.31e-3) < 3e-3
    assert flops_term > load_term


def test_crossover_batch_is_the_critical_batch():
    """Digest A2.4 [derived]: the FLOPs term overtakes the weight load at B* = (b/2)·C/W."""
    assert sp.simplify(it.crossover_batch().rhs - p * flops / (2 * hbm_bw)) == 0


def test_check_25_llama_2_13b_knee_at_240():
    """Check 25: 2·240·13e9/(8·1.97e14) = 3.96 ms vs 26e9/(8·8.2e11) = 3.96 ms (rtol 1%)."""
    hw = dict(n_params=13e9, weight_bytes=2, kv_bytes_per_token=0, context=0, n_chips=8,
              chip_flops=C_BF16, chip_bandwidth=W_ROOFLINE)
    at_knee = it.decode_step_time(240, **hw)
    load = it.decode_step_time_min(240, **{k: v for k, v in hw.items() if k != "chip_flops"})
    assert rel(at_knee, 3.96e-3) < 0.01 and rel(load, 3.96e-3) < 0.01
    assert rel(2 * 240 * 13e9 / (8 * C_BF16), 26e9 / 6.56e12) < 0.01


def test_throughput_ceiling_memory_bound():
    """Digest A2.4 [derived]: the memory-bound throughput saturates at W/KV_seq."""
    ceiling = it.throughput_ceiling_memory_bound().rhs
    assert sp.simplify(ceiling - n_gpu * hbm_bw / KV_SEQ) == 0


def test_half_saturation_batch():
    """Digest A2.4 [derived]: half the ceiling at B_1/2 = parameter bytes / KV_seq."""
    half = it.half_saturation_batch().rhs
    assert sp.simplify(half - p * n_param / KV_SEQ) == 0
    rate = b * n_gpu * hbm_bw / (b * KV_SEQ + p * n_param)
    assert sp.simplify(rate.subs(b, half) - n_gpu * hbm_bw / (2 * KV_SEQ)) == 0


def test_half_saturation_of_the_llama_tables():
    """Digest A3 [derived]: 26/6.7 = 3.9 (MHA) and 26/1.34 = 19.4 (GQA) sequences."""
    fn = compile_fn(it.half_saturation_batch(), (p, n_param, kv_bytes, seq_kv))
    assert abs(float(fn(2, 13e9, 6.7e9, 1)) - 3.9) < 0.05
    assert abs(float(fn(2, 13e9, 1.34e9, 1)) - 19.4) < 0.05


def test_general_throughput_ceiling(assert_same):
    """b/t_step above b*: N_GPU/(M_KV·S/B + 2N/C), typed."""
    expected = n_gpu / (KV_SEQ / hbm_bw + 2 * n_param / flops)
    assert_same(it.throughput_ceiling(), expected, STEP_ARGS[1:])


@given(st.floats(1, 1e4), st.floats(1.01, 10))
def test_throughput_rises_then_plateaus(batch, factor):
    """b/t_step is non-decreasing in b and never above the general ceiling (pop-quiz model)."""
    step = compile_fn(it.step_time(), STEP_ARGS)
    hw = (100e3, 8192, 1, 30e9, 16, W_QUIZ, C_BF16)
    ceiling = 16 / (100e3 * 8192 / W_QUIZ + 2 * 30e9 / C_BF16)
    lo, hi = batch / step(batch, *hw), batch * factor / step(batch * factor, *hw)
    assert hi >= lo * (1 - 1e-12)
    assert hi <= ceiling * (1 + 1e-12)


@given(st.floats(1, 1e4), st.floats(1.01, 10))
def test_step_time_grows_with_batch(batch, factor):
    """Each extra sequence adds its KV cache (and, above b*, its FLOPs): t_step is increasing."""
    step = compile_fn(it.step_time(), STEP_ARGS)
    hw = (100e3, 8192, 1, 30e9, 16, W_QUIZ, C_BF16)
    assert step(batch * factor, *hw) > step(batch, *hw)


def test_general_ceiling_is_below_the_memory_bound_ceiling():
    """Adding the FLOPs time can only lower the ceiling (identity: the difference is positive)."""
    gap = it.throughput_ceiling_memory_bound().rhs - it.throughput_ceiling().rhs
    assert sp.simplify(gap).is_positive


def test_check_19_appendix_a_layer_time():
    """Check 19: 600e6 bf16 parameters over 4 chips at 8.2e11 B/s: 365.9 us, stated '365us' (1%)."""
    t = it.decode_step_time_min(1, n_params=600e6, weight_bytes=2, kv_bytes_per_token=0,
                                context=0, n_chips=4, chip_bandwidth=W_ROOFLINE)
    assert rel(t, 365e-6) < 0.01
    assert rel(t, 365.85e-6) < 1e-4


# --- input validation -------------------------------------------------------------------------


@pytest.mark.parametrize("field, value", [
    ("batch", 0), ("batch", -1), ("n_params", float("nan")), ("weight_bytes", True),
    ("n_chips", 0), ("chip_bandwidth", "8e11"), ("kv_bytes_per_token", -1), ("context", -5),
    ("chip_flops", 0),
])
def test_bad_step_time_input_names_the_field(field, value):
    """Every numeric helper raises InputError naming the offending field."""
    kwargs = dict(batch=4, n_params=30e9, weight_bytes=1, kv_bytes_per_token=100e3,
                  context=8192, n_chips=16, chip_flops=C_BF16, chip_bandwidth=W_QUIZ)
    kwargs[field] = value
    batch = kwargs.pop("batch")
    with pytest.raises(InputError, match=field):
        it.decode_step_time(batch, **kwargs)


def test_bad_critical_batch_input():
    """Unknown compute precision and non-positive weight bytes are refused."""
    v5e = get_gpu("tpu-v5e")
    with pytest.raises(InputError, match="weight_bytes"):
        it.critical_batch_of(v5e, 0)
    with pytest.raises(InputError, match="4-bit"):
        it.critical_batch_of(v5e, 0.5, 4)
