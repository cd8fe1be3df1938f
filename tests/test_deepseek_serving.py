"""DeepSeek-V3 serving: Mazurek and Schreiber (2025), "MoE Inference Economics from First Principles".

Expected values are typed from the post (its formulas and printed numbers, with the tolerances of
the digest's checks 1-10, "post2"), from DeepSeek-V3's configuration (DeepSeek-AI 2024), or are
identities.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.symbols import (
    a2a_bytes,
    b,
    b_gpu,
    beta_eb,
    bw_inter,
    bw_intra,
    c_kv,
    c_q,
    d_ff,
    d_head,
    d_model,
    d_rope,
    kappa_seq,
    n_active,
    n_dense,
    n_experts,
    n_extra,
    n_gpu,
    n_layers,
    n_nodes,
    n_q,
    n_shared,
    p,
    p_act,
    p_combine,
    p_dispatch,
    price,
    s,
    seq_kv,
    t_fixed,
    tau_seq,
    tok_rate_gpu,
)
from inference_math.core.validation import InputError
from inference_math.derivations import deepseek_serving as ds
from inference_math.derivations import moe
from inference_math.presets.hardware import get_gpu

MB, GB = 1e6, 1e9
H100 = get_gpu("h100")
MLA_ARGS = (c_q, c_kv, d_head, d_rope, n_q, d_model, seq_kv, p, p_act, n_layers)
# k < N, as for any MoE layer: N in [100, 1000], k in [1, 99].
ROUTING = {n_experts: lambda rng: rng.uniform(100, 1000, 20), n_active: lambda rng: rng.uniform(1, 99, 20)}


# --- MLA weights and cache (checks 1 and 2) -----------------------------------------------------

def test_mla_bytes_is_the_posts_sum_of_eight_matrices(assert_same):
    """Mazurek and Schreiber (2025), 'Memory Loading': the sum of the eight MLA matrices, W^DQ to W^O."""
    expected = p * (c_q * d_model + d_head * n_q * c_q + d_rope * n_q * c_q + c_kv * d_model
                    + d_head * n_q * c_kv + d_head * n_q * c_kv + d_rope * d_model
                    + d_model * d_head * n_q)
    assert_same(ds.mla_bytes(), expected, MLA_ARGS)


def test_mla_matrix_sizes_match_the_post():
    """Check 1: 11.0, 25.2, 12.6, 3.7, 8.4, 8.4, 0.5, 117.4 MB (±0.05); 187.2 MB/layer (±0.1);
    11.4 GB (±0.05)."""
    stated = {"W_DQ": 11.0, "W_UQ": 25.2, "W_QR": 12.6, "W_DKV": 3.7, "W_UK": 8.4, "W_UV": 8.4,
              "W_KR": 0.5, "W_O": 117.4}
    ours = ds.mla_matrix_bytes()
    for name, mb in stated.items():
        assert abs(ours[name] / MB - mb) <= 0.05, name
    assert ds.mla_bytes_per_layer() == 187_105_280  # exact: 187.105 MB
    assert abs(ds.mla_bytes_per_layer() / MB - 187.2) <= 0.1
    assert abs(61 * ds.mla_bytes_per_layer() / GB - 11.4) <= 0.05


def test_kv_bytes_per_token_with_rope_key(assert_same):
    """'KV Cache': (d_c + d_h^R)·L elements of p_act bytes per token."""
    assert_same(ds.kv_bytes_per_token_mla_rope(), (c_kv + d_rope) * n_layers * p_act, MLA_ARGS)


def test_kv_bytes_value_and_the_presets_count():
    """Check 2: 2·(512 + 64)·61 = 70,272 B (post: "70 KB"); without the rope key, 58 layers: 59,392 B."""
    assert ds.kv_bytes_per_token(61, 2) == 70_272
    assert abs(ds.kv_bytes_per_token(61, 2) / 1e3 - 70) <= 1
    assert ds.kv_bytes_per_token(58, 2, with_rope=False) == 512 * 58 * 2 == 59_392


def test_kv_limited_batch():
    """Check 4: 20e9·4·8/(70e3·32768) ≈ 279 (±0.5)."""
    assert abs(ds.kv_limited_batch(32, 20e9, 70e3, 32768) - 279) <= 0.5
    assert ds.kv_limited_batch(32, 20e9, 70e3, 32768) == pytest.approx(20e9 * 32 / (70e3 * 32768))


# --- matrix absorption ----------------------------------------------------------------------------

VANILLA = (2 * d_model * c_q + 2 * c_q * n_q * d_head + 2 * c_q * n_q * d_rope + 2 * d_model * c_kv
           + 2 * seq_kv * n_q * c_kv * d_head + 2 * d_model * d_rope + 2 * seq_kv * n_q * c_kv * d_head
           + n_q * seq_kv * (3 * d_head + 2 * d_rope) + 2 * n_q * d_head * d_model)
ABSORBED = (2 * d_model * c_q + 2 * c_q * n_q * d_rope + 2 * d_model * c_kv + 2 * d_model * d_rope
            + 2 * n_q * d_head * c_q + 2 * n_q * d_head * c_kv + 2 * seq_kv * n_q * (c_kv + d_rope)
            + seq_kv * n_q * c_kv + seq_kv * n_q * c_kv + 2 * (n_q * d_head * d_model + n_q * d_head * c_kv))


def test_vanilla_decode_flops(assert_same):
    """'Vanilla MLA Implementation', decode, B = 1: the post's nine terms."""
    assert_same(ds.mla_flops_vanilla(), VANILLA, MLA_ARGS)


def test_absorbed_decode_flops(assert_same):
    """'Matrix-Absorbed MLA Implementation', decode, B = 1: the post's ten terms."""
    assert_same(ds.mla_flops_absorbed(), ABSORBED, MLA_ARGS)


def test_absorption_crossover(assert_same):
    """Vanilla = absorbed at S = 4·c_kv·d_h/(4·c_kv·d_h + 3·d_h − 4·c_kv); about 1 for DeepSeek-V3."""
    expected = 4 * c_kv * d_head / (4 * c_kv * d_head + 3 * d_head - 4 * c_kv)
    assert_same(ds.absorption_crossover(), expected, MLA_ARGS,
                overrides={c_kv: lambda rng: rng.uniform(2, 1000, 20),
                           d_head: lambda rng: rng.uniform(2, 1000, 20)})
    value = float(ds.absorption_crossover().rhs.subs({c_kv: 512, d_head: 128}))
    assert 1 < value < 2
    assert ds.mla_decode_flops(2.0, absorbed=True) < ds.mla_decode_flops(2.0, absorbed=False)


def test_absorption_is_associativity():
    """(W_UQ c_Q)^T (W_UK c_KV) = c_Q^T (W_UQ^T W_UK) c_KV: the identity absorption rests on."""
    A, B = sp.MatrixSymbol("A", 3, 4).as_explicit(), sp.MatrixSymbol("B", 3, 2).as_explicit()
    x, y = sp.MatrixSymbol("x", 4, 1).as_explicit(), sp.MatrixSymbol("y", 2, 1).as_explicit()
    assert sp.expand(((A * x).T * (B * y))[0] - (x.T * (A.T * B) * y)[0]) == 0


def test_absorbed_flops_grow_slower_with_context():
    """The per-cached-token slope ratio is (4·c_kv·d_h + 3·d_h + 2·d_R)/(4·c_kv + 2·d_R) ≈ 120.7."""
    ratio = float(ds.absorption_slope_ratio().subs({c_kv: 512, d_head: 128, d_rope: 64}))
    assert ratio == pytest.approx((4 * 512 * 128 + 3 * 128 + 2 * 64) / (4 * 512 + 2 * 64))


# --- experts, dense layers, embeddings (check 9) ------------------------------------------------

def test_expert_bytes(assert_same):
    """'Expert Networks': W_E = W_1 + W_Gate + W_2 = 3·d_moe·d, times the bytes per weight."""
    assert_same(ds.expert_bytes(), 3 * d_ff * d_model * p, (d_ff, d_model, p))


def test_expert_dense_embedding_bytes():
    """Check 9: 44,040,192 B (≈45 MB), 396,361,728 B (396 MB), 1.19 GB (1.2), 1.853 GB (1.9), ±3%."""
    assert ds.expert_bytes_value() == 44_040_192
    assert ds.expert_bytes_value(18432) == 396_361_728
    assert ds.embedding_bytes() == 2 * 129280 * 7168
    for ours, stated in ((ds.expert_bytes_value() / MB, 45), (ds.expert_bytes_value(18432) / MB, 396),
                         (3 * ds.expert_bytes_value(18432) / GB, 1.2), (ds.embedding_bytes() / GB, 1.9)):
        assert abs(ours / stated - 1) < 0.03


def test_parameter_counts():
    """Expert layers 58·257·44,040,192 = 656.5B (post: 661B); total within 0.1% of the published 671B."""
    counts = ds.parameter_counts()
    assert counts["experts"] == 58 * 257 * 44_040_192
    assert abs(counts["total"] / 671e9 - 1) < 1e-3
    assert abs(counts["active"] / 37e9 - 1) < 0.02


def test_ep_bytes_per_gpu(assert_same):
    """'Expert Networks': n_layers^experts·(W_E·ceil((shared + routed + additional)/n_GPUs) + W_router)."""
    per_gpu = sp.ceiling((n_shared + n_experts + n_extra) / n_gpu)
    expected = (n_layers - n_dense) * (3 * d_ff * d_model * p * per_gpu + p * d_model * n_experts)
    assert sp.simplify(ds.ep_bytes_per_gpu().rhs - expected) == 0
    assert ds.ep_bytes_per_gpu_value(32) == 58 * (44_040_192 * 9 + 7168 * 256)


def test_mla_outweighs_experts_beyond_64_gpus():
    """The post: beyond 64 GPUs the replicated MLA weights exceed the expert weights per GPU."""
    mla = 61 * ds.mla_bytes_per_layer()
    assert ds.ep_bytes_per_gpu_value(64) > mla > ds.ep_bytes_per_gpu_value(65)


def test_expert_parallel_layouts():
    """Check 8: (256 + 32)/32 = 9 and (256 + 32)/144 = 2 routed experts per GPU."""
    assert ds.routed_experts_per_gpu(32, 32) == 9
    assert ds.routed_experts_per_gpu(144, 32) == 2
    with pytest.raises(InputError, match="n_gpu"):
        ds.routed_experts_per_gpu(16, 1)


# --- busy experts (check 10) and eq. 22 -----------------------------------------------------------

def test_busy_experts_formula(assert_same):
    """Uniform top-k routing: E[distinct experts] = N·(1 − (1 − k/N)^B)."""
    expected = n_experts * (1 - (1 - n_active / n_experts) ** b)
    assert_same(ds.busy_experts(), expected, (n_experts, n_active, b), overrides=ROUTING)


def test_busy_experts_agree_with_eq_22(assert_same):
    """Erdil (2025) eq. 22 with s = N/k: N·(1 − (1 − 1/s)^b) is the same count."""
    via_eq22 = n_experts * (1 - (1 - 1 / s) ** b)
    assert_same(ds.busy_experts(), via_eq22.subs(s, n_experts / n_active), (n_experts, n_active, b),
                overrides=ROUTING)
    assert sp.simplify(ds.busy_experts_from_params_read() - via_eq22.subs(s, n_experts / n_active)) == 0
    assert sp.simplify(moe.expert_fraction_read().subs(s, n_experts / n_active) * n_experts
                       - ds.busy_experts().rhs) == 0


def test_busy_experts_values():
    """Check 10: N = 256, k = 8: 8, 163.31, 222.44, 251.60 at B = 1, 32, 64, 128 (rel 1e-4)."""
    for batch, value in ((1, 8), (32, 163.31), (64, 222.44), (128, 251.60)):
        assert abs(ds.busy_experts_value(batch) / value - 1) < 1e-4


def test_one_token_uses_k_experts():
    """b = 1: exactly k experts are busy."""
    assert sp.simplify(ds.busy_experts().rhs.subs(b, 1) - n_active) == 0


@given(st.floats(0, 5000), st.floats(0.01, 100))
def test_busy_experts_rise_with_batch_and_stay_below_n(batch, step):
    """More tokens never wake fewer experts, and never more than N."""
    low, high = ds.busy_experts_value(batch), ds.busy_experts_value(batch + step)
    assert low <= high + 1e-9
    assert high <= 256 + 1e-9


# --- all-to-all (checks 3 and 7) ------------------------------------------------------------------

def test_a2a_bytes(assert_same):
    """'Communication': 2·(1 + 2 bytes)·B/(2·n_GPUs)·n_total,u·d·L, with 1/β_eb for imbalance."""
    per_link = b / (2 * n_gpu)
    expected = 2 * (p_dispatch + p_combine) * per_link * (n_active + n_shared) * d_model * n_layers / beta_eb
    assert_same(ds.a2a_bytes_per_pass(), expected,
                (b, n_gpu, p_dispatch, p_combine, n_active, n_shared, d_model, n_layers, beta_eb))


def test_a2a_coefficient():
    """Check 3: 3·(8 + 1)·7168·61 = 11,805,696 B, i.e. B/n_GPUs × 0.0118 GB."""
    assert ds.a2a_bytes_value(1, 1, 61) == 11_805_696
    assert round(ds.a2a_bytes_value(1, 1, 61) / GB, 4) == 0.0118
    assert ds.a2a_bytes_value(64, 8, 61) == pytest.approx(64 / 8 * 11_805_696)


def test_a2a_is_symmetric_in_dispatch_and_combine_widths():
    """Discrepancy 11: whichever direction is FP8, the 3-byte total is the same."""
    rhs = ds.a2a_bytes_per_pass().rhs
    swapped = rhs.subs({p_dispatch: p_combine, p_combine: p_dispatch}, simultaneous=True)
    assert sp.simplify(rhs - swapped) == 0


def test_comm_time(assert_same):
    """'Improvement 1': comm·max((n_nodes − 1)/n_nodes/bw_inter, 1/n_nodes/bw_intra)."""
    expected = a2a_bytes * sp.Max((n_nodes - 1) / n_nodes / bw_inter, 1 / n_nodes / bw_intra)
    assert sp.simplify(ds.comm_time().rhs - expected) == 0
    assert ds.comm_seconds_per_byte(1, 50e9, 450e9) == pytest.approx(1 / 450e9)
    assert ds.comm_seconds_per_byte(9, 50e9, 450e9) == pytest.approx(8 / 9 / 50e9)


def test_shared_expert_imbalance():
    """Check 7: (1 + 9/16)/(9/16) = 25/9 ≈ 2.78 (post: "2,7×", ±0.1)."""
    m = (n_shared + n_active) / n_gpu
    assert sp.simplify(ds.shared_expert_imbalance().rhs - (1 + m) / m) == 0
    assert ds.imbalance_factor(16) == sp.Rational(25, 9)
    assert abs(float(ds.imbalance_factor(16)) - 2.7) <= 0.1


# --- two-batch overlap ----------------------------------------------------------------------------

AFFINE = (t_fixed, tau_seq, kappa_seq, b)


def test_serial_and_tbo_step_times(assert_same):
    """'From Parts to the Whole': T_noTBO = blocks + comm; T_TBO = 2·max(blocks(B/2), comm(B/2))."""
    assert_same(ds.step_time_serial(), t_fixed + tau_seq * b + kappa_seq * b, AFFINE)
    expected = 2 * sp.Max(t_fixed + tau_seq * b / 2, kappa_seq * b / 2)
    assert_same(ds.step_time_tbo(), expected, AFFINE, simplify=False)


def test_tbo_breakeven_and_gain():
    """TBO pays above b = T_0/kappa; its peak gain is (3·kappa + tau)/(2·kappa) if kappa > tau, else
    1 + kappa/tau (checked against a numeric maximum over b)."""
    assert sp.simplify(ds.tbo_breakeven().rhs - t_fixed / kappa_seq) == 0
    gain = ds.tbo_largest_gain().rhs
    rng = np.random.default_rng(1)
    grid = np.logspace(-3, 9, 200001)
    for _ in range(10):
        t0, tau, kappa = 10 ** rng.uniform(-3, 0), 10 ** rng.uniform(-7, -5), 10 ** rng.uniform(-7, -5)
        serial = t0 + (tau + kappa) * grid
        tbo = np.maximum(2 * t0 + tau * grid, kappa * grid)
        numeric = np.max(serial / tbo)
        closed = (3 * kappa + tau) / (2 * kappa) if kappa > tau else 1 + kappa / tau
        assert float(gain.subs({t_fixed: t0, tau_seq: tau, kappa_seq: kappa})) == pytest.approx(closed)
        assert numeric == pytest.approx(closed, rel=1e-3)
        assert closed <= 2


def test_decode_model_reads_weights_twice_under_tbo_at_small_batch():
    """At a small batch TBO is slower (weights read twice); at a large one faster."""
    setup = ds.DecodeSetup("9x8 H100", 72, 9, 2000, gpu=H100, n_redundant=32)
    times = ds.decode_step(np.array([1, 1024]) * 72, setup)
    assert times.tbo[0] > times.serial[0]
    assert times.tbo[1] < times.serial[1]
    np.testing.assert_allclose(times.tok_s_per_gpu, times.batch / times.tbo / 72)


@given(st.floats(1, 1e5), st.floats(1.01, 4))
def test_decode_step_time_rises_with_batch(batch, factor):
    """A larger batch never takes less time per step (every component is non-decreasing in b)."""
    setup = ds.DecodeSetup("4x8 H100", 32, 4, 2000, gpu=H100)
    times = ds.decode_step([batch, batch * factor], setup)
    assert times.tbo[1] >= times.tbo[0] * (1 - 1e-12)
    assert times.serial[1] >= times.serial[0] * (1 - 1e-12)


def test_decode_setup_validation():
    """Bad setups raise InputError naming the field."""
    with pytest.raises(InputError, match="n_nodes"):
        ds.DecodeSetup("bad", 30, 4, 2000, gpu=H100)
    with pytest.raises(InputError, match="beta"):
        ds.DecodeSetup("bad", 32, 4, 2000, gpu=H100, beta=1.5)
    with pytest.raises(InputError, match="context"):
        ds.DecodeSetup("bad", 32, 4, -1, gpu=H100)
    with pytest.raises(InputError, match="batch"):
        ds.decode_step(0, ds.DecodeSetup("ok", 32, 4, 2000, gpu=H100))


# --- tokens to dollars (checks 5, 6) --------------------------------------------------------------

def test_cost_per_million_tokens_closed_form(assert_same):
    """'From Tokens to Dollars': (n·P·24)/(R·n·3600·24/1e6) = 1e6·P/(3600·R): n_GPU cancels."""
    assert_same(ds.cost_per_million_tokens(), 10**6 * price / (3600 * tok_rate_gpu), (price, tok_rate_gpu))
    assert_same(ds.request_rate(), tok_rate_gpu / b_gpu, (tok_rate_gpu, b_gpu))


def test_h100_ep72_economics():
    """Checks 5-5d: 8,709,120,000 tokens/day (8.7B); 21.875 (21.9 ±0.05); $3,456/day; $0.397 (0.40 ±0.005)."""
    assert ds.daily_tokens(1400, 72) == 8_709_120_000
    assert abs(ds.request_rate_value(1400, 64) - 21.9) <= 0.05
    assert 72 * 2 * 24 == 3456
    assert ds.cost_per_mtok(1400, 2) == pytest.approx(3456 / 8709.12)
    assert abs(ds.cost_per_mtok(1400, 2) - 0.40) <= 0.005


def test_openrouter_revenue_to_the_cent():
    """Check 6: $1,097.60 + $3,326.40 + $880.00 = $5,304.00 exactly."""
    rev = ds.revenue("28", "0.56", "0.07", "0.27", "0.800", "1.1")
    assert rev["cached_input"] == Fraction("1097.60")
    assert rev["miss_input"] == Fraction("3326.40")
    assert rev["output"] == Fraction("880.00")
    assert rev["total"] == Fraction("5304.00")
    with pytest.raises(InputError, match="cached_share"):
        ds.revenue("28", "1.5", "0.07", "0.27", "0.8", "1.1")


def test_public_functions_validate_input():
    """Bad numbers raise InputError naming the field."""
    with pytest.raises(InputError, match="n_gpu"):
        ds.ep_bytes_per_gpu_value(0)
    with pytest.raises(InputError, match="batch"):
        ds.busy_experts_value(-1)
    with pytest.raises(InputError, match="beta"):
        ds.a2a_bytes_value(1, 8, 61, beta=2)
    with pytest.raises(InputError, match="context"):
        ds.mla_decode_flops(0, absorbed=True)
    with pytest.raises(InputError, match="tok_s_per_gpu"):
        ds.cost_per_mtok(-1, 2)


def test_tbo_peak_is_where_the_two_arguments_meet():
    """At eq-deepseek-tbo-peak the TBO step's two arguments are equal, and the speed-up there is
    the first branch of eq-deepseek-tbo-gain; checked at sampled values."""
    peak = ds.tbo_peak_batch().rhs
    blocks, comm = ds.step_time_tbo().rhs.args
    assert sp.simplify(blocks.subs(b, peak) - comm.subs(b, peak)) == 0
    speedup = ds.step_time_serial().rhs / ds.step_time_tbo().rhs
    gain = ds.tbo_largest_gain().rhs.args[0][0]
    for t0, tau, kappa in ((1e-3, 1e-6, 3e-6), (5e-2, 2e-5, 2.5e-5)):
        values = {t_fixed: t0, tau_seq: tau, kappa_seq: kappa}
        at_peak = float(peak.subs(values))
        assert at_peak == pytest.approx(2 * t0 / (kappa - tau), rel=1e-12)
        assert float(speedup.subs(values).subs(b, at_peak)) == pytest.approx(
            float(gain.subs(values)), rel=1e-9)
        around = [float(speedup.subs(values).subs(b, at_peak * f)) for f in (0.5, 2.0)]
        assert max(around) < float(gain.subs(values))
