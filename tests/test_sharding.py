"""Sharding for decode: Austin et al. (2025), generation sharding, Q7, App. C; notes on Pope et al.

Every expected value is typed fresh from the sources (or is an identity), never re-derived with
the package.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math import get_gpu
from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import (
    b,
    beta_bw,
    d_ff,
    d_model,
    hbm_bw,
    hbm_cap,
    ici_bw,
    k_1d,
    k_2d,
    msg_bytes,
    n_gpu,
    n_param,
    net_bw,
    p,
    p_act,
    seq_q,
    t_hop,
    x_2d,
    y_model,
    yz_2d,
)
from inference_math.core.validation import InputError
from inference_math.derivations import sharding

F, D, N, W = d_ff, d_model, n_gpu, ici_bw


# --- generation: Y_max ------------------------------------------------------------------------


def test_hbm_and_ici_times_at_bf16_are_the_sources(assert_same):
    """Austin et al. (2025), 'Generation': T_HBM = 2DF/(Y·W_hbm), T_ICI = 2BD/W_ici at bf16."""
    assert_same(sharding.hbm_time().rhs.subs(p, 2), 2 * D * F / (y_model * hbm_bw),
                (D, F, y_model, hbm_bw))
    assert_same(sharding.ici_time().rhs.subs(p_act, 2), 2 * b * D / W, (b, D, W))


def test_y_max_is_f_over_b_beta(assert_same):
    """Austin et al. (2025): Y > F/(B·beta) with beta = W_hbm/W_ici (equal weight/activation bytes)."""
    y = sharding.max_model_parallelism().rhs
    assert_same(y.subs(p_act, p), F / (b * beta_bw), (F, b, beta_bw))
    assert_same(y, p * F / (p_act * b * beta_bw), (p, F, p_act, b, beta_bw))


def test_y_max_balances_the_two_times():
    """Identity: at Y = Y_max (with W_ICI = B/beta) the HBM and ICI times are equal."""
    at = {y_model: sharding.max_model_parallelism().rhs, ici_bw: hbm_bw / beta_bw}
    diff = sharding.hbm_time().rhs.subs(at) - sharding.ici_time().rhs.subs(at)
    assert sp.simplify(diff) == 0


def test_check_12_y_max_is_64_exactly():
    """Check 12: F = 16384, B = 32, beta = 8 give 16384/(32·8) = 64 ways (exact)."""
    y = sharding.max_model_parallelism().rhs.subs({p: 2, p_act: 2, F: 16384, b: 32, beta_bw: 8})
    assert y == 64
    assert sharding.max_model_parallelism_value(16384, 32, 8) == 64


@given(st.floats(1e2, 1e5), st.floats(1, 1e3), st.floats(1, 100), st.floats(1.01, 10))
def test_y_max_falls_with_batch(f_value, batch, beta, factor):
    """Austin et al. (2025): smaller batches allow more model parallelism."""
    small = sharding.max_model_parallelism_value(f_value, batch, beta)
    large = sharding.max_model_parallelism_value(f_value, batch * factor, beta)
    assert large < small


@given(st.floats(1, 1e3), st.floats(0.05, 0.95))
def test_below_y_max_hbm_time_dominates(batch, fraction):
    """Austin et al. (2025): for Y < Y_max weight loading is slower than the ICI transfer."""
    d_value, f_value, bw, beta = 4096.0, 16384.0, 8.2e11, 8.0
    y_lim = f_value / (batch * beta)  # typed from the source
    hbm = compile_fn(sharding.hbm_time(), (p, d_model, d_ff, y_model, hbm_bw))
    ici = compile_fn(sharding.ici_time(), (p_act, b, d_model, ici_bw))
    y = fraction * y_lim
    assert float(hbm(2, d_value, f_value, y, bw)) > float(ici(2, batch, d_value, bw / beta))


def test_bandwidth_ratio_of_tpu_v5e():
    """beta of TPU v5e: 8.2e11/4.5e10 per link direction; twice the link gives 8.2e11/9e10."""
    v5e = get_gpu("tpu-v5e")
    assert sharding.bandwidth_ratio(v5e) == pytest.approx(8.2e11 / 4.5e10, rel=1e-12)
    assert sharding.bandwidth_ratio(v5e, 2) == pytest.approx(8.2e11 / 9e10, rel=1e-12)


def test_bandwidth_ratio_rejects_gpus_and_bad_directions():
    """The GPU presets have no ICI figure; only one or two directions make sense."""
    with pytest.raises(InputError, match="ici_bandwidth"):
        sharding.bandwidth_ratio(get_gpu("h100"))
    with pytest.raises(InputError, match="directions"):
        sharding.bandwidth_ratio(get_gpu("tpu-v4"), directions=3)


@pytest.mark.parametrize("field, args", [
    ("d_ff", (0, 32, 8)), ("batch", (16384, -1, 8)), ("beta", (16384, 32, float("nan"))),
    ("batch", (16384, [32, 0], 8)),
])
def test_y_max_rejects_bad_input(field, args):
    with pytest.raises(InputError, match=field):
        sharding.max_model_parallelism_value(*args)


# --- 2-D weight-stationary, scaling-book accounting -----------------------------------------------


def test_2d_comm_at_bf16_is_q7(assert_same):
    """Austin et al. (2025) Q7: T = 2BD/(X·W) + 4BF/(YZ·W)."""
    expected = 2 * b * D / (x_2d * W) + 4 * b * F / (yz_2d * W)
    assert_same(sharding.comm_time_2d().rhs.subs(p_act, 2), expected, (b, D, F, x_2d, yz_2d, W))


def test_1d_comm_at_bf16_is_q7(assert_same):
    """Austin et al. (2025) Q7: 1-D model parallelism T = 4BD/(3·W)."""
    assert_same(sharding.comm_time_1d().rhs.subs(p_act, 2), 4 * b * D / (3 * W), (b, D, W))


def test_general_optimum(assert_same):
    """Digest check 18, general F: X* = sqrt(N·D/(2F)), YZ* = N/X*, T* = 4√2·B·D·sqrt(F/D)/(√N·W)."""
    assert_same(sharding.optimal_x_2d(), sp.sqrt(N * D / (2 * F)), (N, D, F))
    assert_same(sharding.optimal_yz_2d(), sp.sqrt(2 * N * F / D), (N, D, F))
    expected_t = 4 * sp.sqrt(2) * b * D * sp.sqrt(F / D) / (sp.sqrt(N) * W)
    assert_same(sharding.optimal_comm_time_2d().rhs.subs(p_act, 2), expected_t, (b, D, F, N, W))


def test_optimal_split_uses_every_chip():
    """Identity: X*·(YZ)* = N."""
    product = sharding.optimal_x_2d().rhs * sharding.optimal_yz_2d().rhs
    assert sp.simplify(product - N) == 0


def test_q7_optimum_at_f_equal_4d():
    """Austin et al. (2025) Q7: X = sqrt(N/8), YZ = sqrt(8N), T = sqrt(128)·B·D/(sqrt(N)·W)."""
    spec = sharding.optimum_2d_at_ratio(4)
    assert sp.simplify(spec["x_star"] - sp.sqrt(N / 8)) == 0
    assert sp.simplify(spec["yz_star"] - sp.sqrt(8 * N)) == 0
    t_bf16 = spec["t_star"].subs(p_act, 2)
    assert sp.simplify(t_bf16 - sp.sqrt(128) * b * D / (sp.sqrt(N) * W)) == 0
    coefficient = sp.simplify(t_bf16 * sp.sqrt(N) * W / (b * D))
    assert float(coefficient) == pytest.approx(11.3, abs=0.05)  # the source's "≈ 11.3"


def test_q7_crossover_is_72_not_81():
    """Check 18 and erratum 1: 128·(3/4)^2 = 72 (the source prints 81); general N = 18F/D."""
    assert sharding.printed_crossover_q7() == 72
    assert sharding.optimum_2d_at_ratio(4)["n_cross"] == 72
    assert sp.simplify(sharding.crossover_2d_bytes().rhs - 18 * F / D) == 0
    # The source's general form, 32·(F/D)·(3/4)^2:
    assert sp.simplify(sharding.crossover_2d_bytes().rhs - 32 * (F / D) * sp.Rational(9, 16)) == 0


def test_2d_beats_1d_above_the_crossover():
    """At N > 18F/D the optimal 2-D time is below the 1-D time; below it, above."""
    t2 = compile_fn(sharding.optimal_comm_time_2d(), (n_gpu, p_act, b, d_model, d_ff, ici_bw))
    t1 = compile_fn(sharding.comm_time_1d(), (p_act, b, d_model, ici_bw))
    args = (2, 32, 4096, 16384, 4.5e10)
    one_d = float(t1(*args[:3], args[4]))
    assert float(t2(73, *args)) < one_d < float(t2(71, *args))


def test_square_root_law():
    """Austin et al. (2025) Q7: T* falls as 1/sqrt(N) (elasticity −1/2) and tends to zero."""
    t = sharding.optimal_comm_time_2d().rhs
    assert sp.simplify(sp.diff(sp.log(t), N) * N) == sp.Rational(-1, 2)
    assert sp.limit(t, N, sp.oo) == 0


@given(st.floats(0.01, 100), st.floats(1, 1e4), st.floats(1, 8))
def test_optimum_is_a_minimum(x_factor, chips, ratio):
    """T(X) with YZ = N/X is never below T* (hypothesis over X, N and F/D)."""
    d_value, batch, bw = 1.0, 1.0, 1.0
    t_fn = compile_fn(sharding.comm_time_2d(), (p_act, b, d_model, d_ff, x_2d, yz_2d, ici_bw))
    t_star = compile_fn(sharding.optimal_comm_time_2d(), (n_gpu, p_act, b, d_model, d_ff, ici_bw))
    x = x_factor * math.sqrt(chips / (2 * ratio))
    value = float(t_fn(2, batch, d_value, ratio, x, chips / x, bw))
    assert value >= float(t_star(chips, 2, batch, d_value, ratio, bw)) * (1 - 1e-12)


def test_comm_times_bytes_cross_at_72():
    """Numeric wrapper: T_1D = T*_2D at N = 72 when F = 4D."""
    one_d, two_d = sharding.comm_times_bytes(72, 32, 4096, 16384, 4.5e10)
    assert two_d == pytest.approx(one_d, rel=1e-12)
    assert one_d == pytest.approx(4 * 32 * 4096 / (3 * 4.5e10), rel=1e-12)


# --- element accounting (notes on Pope et al.) ----------------------------------------------------


def test_esti_1d(assert_same):
    """Notes on Pope et al.: 1-D weight-stationary costs 2·B·L·E/bandwidth (elements)."""
    assert_same(sharding.comm_time_1d_elements(), 2 * b * seq_q * D / net_bw, (b, seq_q, D, net_bw))


def test_esti_2d_optimum_is_the_printed_cost_at_f_equal_4e(assert_same):
    """Notes on Pope et al.: 8·B·L·E/(sqrt(n)·bandwidth) when d_ff = 4·d_model."""
    t = sharding.optimal_comm_time_2d_elements().rhs.subs(F, 4 * D)
    assert_same(t, 8 * b * seq_q * D / (sp.sqrt(N) * net_bw), (b, seq_q, D, N, net_bw))


def test_check_22_esti_crossover_is_16():
    """Check 22: 2BLE = 8BLE/sqrt(n) at n = 16 exactly; general crossover 4F/E."""
    assert sharding.printed_crossover_esti() == 16
    assert sp.simplify(sharding.crossover_2d_elements().rhs - 4 * F / D) == 0
    assert sharding.crossover_2d_elements().rhs.subs(F, 4 * D) == 16


def test_esti_x_star_is_half_sqrt_n_at_f_equal_4e():
    """Element accounting: X* = sqrt(n·E/F), i.e. sqrt(n)/2 at F = 4E."""
    x = sharding.optimal_x_2d_elements()
    assert sp.simplify(x - sp.sqrt(N * D / F)) == 0
    assert sp.simplify(x.subs(F, 4 * D) - sp.sqrt(N) / 2) == 0


# --- the two accountings reconciled ---------------------------------------------------------------


def test_axis_credit_gives_both_crossovers():
    """Crossover 4·k1²·F/(k2·D): (1, 1) is the notes' 4F/E, (3, 2) the scaling book's 18F/D."""
    n = sharding.crossover_with_axis_credit().rhs
    assert sp.simplify(n - 4 * k_1d**2 * F / (k_2d * D)) == 0
    assert n.subs({k_1d: 1, k_2d: 1, F: 4 * D}) == 16
    assert n.subs({k_1d: 3, k_2d: 2, F: 4 * D}) == 72


def test_crossover_does_not_depend_on_bytes_per_element():
    """Bytes versus elements cannot explain 16 versus 72: p_act and W cancel."""
    n = sharding.crossover_with_axis_credit().rhs
    assert not n.has(p_act) and not n.has(ici_bw)
    assert not sharding.crossover_2d_bytes().rhs.has(p_act)


# --- memory lower bound -------------------------------------------------------------------------


def test_check_21_palm_540b_int8_needs_17_chips():
    """Check 21 (notes on Pope et al.): 540e9 bytes / 32e9 = 16.875, so at least 17 chips."""
    eq = sharding.min_chips_for_weights().rhs
    assert eq.subs({p: 1, n_param: 540 * 10**9, hbm_cap: 32 * 10**9}) == 17
    assert sharding.min_chips(540e9, 1, 32e9) == 17
    assert sharding.min_chips(540e9, 1, get_gpu("tpu-v4").hbm_bytes) == 17


def test_min_chips_is_exact_at_a_whole_ratio():
    """ceil of a whole ratio is the ratio: 64e9 bytes on 32e9-byte chips need 2, not 3."""
    assert sharding.min_chips(32e9, 2, 32e9) == 2


@pytest.mark.parametrize("field, args", [
    ("n_params", (0, 1, 32e9)), ("bytes_per_weight", (540e9, -1, 32e9)),
    ("chip_bytes", (540e9, 1, "32e9")),
])
def test_min_chips_rejects_bad_input(field, args):
    with pytest.raises(InputError, match=field):
        sharding.min_chips(*args)


# --- latency-bound collectives (Appendix C) ------------------------------------------------------


def test_check_20_latency_bound_buffer_is_360_kb():
    """Check 20: 8 shards x 4.5e10 B/s x 1 µs = 360,000 B."""
    m = sharding.latency_bound_buffer().rhs
    values = {y_model: 8, ici_bw: 45 * 10**9, t_hop: sp.Rational(1, 10**6)}
    assert m.subs(values) == 360_000
    assert sharding.latency_bound_buffer_value(8, 4.5e10, 1e-6) == pytest.approx(360e3, rel=1e-12)


def test_check_20_y_bound_is_bd_over_45000():
    """Check 20: Y > B·D/45,000 in int8; B = 16, D = 8192 gives 131,072/45,000 = 2.91."""
    y = sharding.latency_bound_ways().rhs
    values = {p_act: 1, ici_bw: 45 * 10**9, t_hop: sp.Rational(1, 10**6)}
    assert sp.simplify(y.subs(values) - b * D / 45_000) == 0
    assert y.subs(values).subs({b: 16, D: 8192}) == sp.Rational(131_072, 45_000)
    assert sharding.latency_bound_ways_value(16, 8192, 4.5e10, 1e-6) == pytest.approx(2.91, abs=0.005)


def test_erratum_6_per_shard_not_total():
    """Erratum 6: 131,072 B total exceeds W·t = 45,000 B, yet per shard (8-way) it is below."""
    total, shards, threshold = 16 * 8192, 8, 45_000
    assert total > threshold  # the takeaway as printed would call it bandwidth bound
    hop = sharding.hop_time().rhs.subs({msg_bytes: total, y_model: shards, ici_bw: 45 * 10**9,
                                        t_hop: sp.Rational(1, 10**6)})
    assert hop == sp.Rational(1, 10**6)  # but the hop is latency bound, as the appendix says


def test_ring_formula_threshold_is_half_the_rule():
    """App. C's ring all-gather max(t·|X|/2, B/W) switches at half of |X|·W·t."""
    assert sp.simplify(sharding.ring_allgather_buffer() - y_model * ici_bw * t_hop / 2) == 0


@pytest.mark.parametrize("args", [(0, 4.5e10, 1e-6), (8, -1, 1e-6), (8, 4.5e10, True)])
def test_latency_buffer_rejects_bad_input(args):
    with pytest.raises(InputError):
        sharding.latency_bound_buffer_value(*args)


def test_numeric_wrappers_broadcast_arrays():
    """Arrays in, arrays out, equal to the scalar results."""
    batches = np.array([16.0, 32.0])
    out = sharding.latency_bound_ways_value(batches, 8192, 4.5e10, 1e-6)
    np.testing.assert_allclose(out, batches * 8192 / 45_000, rtol=1e-12)
    ys = sharding.max_model_parallelism_value(16384, batches, 8)
    np.testing.assert_allclose(ys, 16384 / (8 * batches), rtol=1e-12)
