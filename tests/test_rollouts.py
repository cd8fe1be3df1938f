"""RL rollouts and LoRA (inference_math.derivations.rollouts), against Mazurek (2025), Hu et al. (2021) and
Shao et al. (2024).

Expected values are typed fresh from "AI infrastructure in the 'Era of experience'", from the
LoRA and GRPO definitions, or from the digest's numbered checks (post0) with their tolerances.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math import get_gpu, get_model
from inference_math.core.symbols import (
    b,
    b_adapt,
    d_ff,
    d_head,
    d_in,
    d_model,
    d_out,
    flops,
    hbm_bw,
    hbm_cap,
    kv_bytes,
    lora_rank,
    n_adapt,
    n_gpu,
    n_kv,
    n_layers,
    n_levels,
    n_lora,
    n_param,
    n_q,
    n_samples,
    p,
    seq_kv,
    sigma_lw,
)
from inference_math.core.validation import InputError
from inference_math.derivations import intensity
from inference_math.derivations import rollouts as R

POST = R.MAZUREK2025_EXPERIENCE
LORA_ARGS = (lora_rank, d_in, d_out)
SERVE = (b, kv_bytes, seq_kv, p, n_param, n_gpu, hbm_bw, flops, n_lora, n_adapt)
LLAMA70 = get_model("llama-3-70b")
H100 = get_gpu("h100")


# --- LoRA parameters ---------------------------------------------------------------------------


def test_lora_fraction(assert_same):
    """Hu et al. (2021): A is r x d_in, B is d_out x r; fraction r(d_in + d_out)/(d_in·d_out)."""
    assert_same(R.lora_fraction(), lora_rank * (d_in + d_out) / (d_in * d_out), LORA_ARGS)


def test_checks_3_3b_3c_down_projection_rank_1():
    """Checks 3, 3b, 3c: 28,672 x 8,192 = 234,881,024; r = 1 gives 36,864; fraction 1.5694e-4
    (post '≈0.016%'), ±0.0005 percentage points."""
    dims = POST["down_proj"]
    full = dims["d_intermediate"] * dims["d_hidden"]
    assert full == POST["full_params_stated"] == 234_881_024
    adapter = R.lora_params().subs({lora_rank: 1, d_in: dims["d_intermediate"], d_out: dims["d_hidden"]})
    assert adapter == POST["lora_params_stated"] == 36_864
    fraction = R.lora_fraction_of(1, dims["d_intermediate"], dims["d_hidden"])
    assert fraction == pytest.approx(36_864 / 234_881_024, rel=1e-15)
    assert abs(100 * fraction - POST["fraction_pct_stated"]) <= 5e-4


def test_discrepancy_18_orders_of_magnitude():
    """Discrepancy 18: rank 1 is 3.8 orders of magnitude smaller, rank 16 only 2.6."""
    orders = {r: -math.log10(R.lora_fraction_of(r, 28_672, 8_192)) for r in (1, 16)}
    assert abs(orders[1] - 3.80) < 0.01
    assert abs(orders[16] - 2.60) < 0.01
    assert abs(R.lora_fraction_of(16, 28_672, 8_192) - 0.0025) < 2e-5  # ≈0.25%


def test_adapter_params_of_every_attention_and_mlp_matrix(assert_same):
    """r·L·Σ(d_in + d_out) over Q, K, V, O (GQA widths) and gate, up, down."""
    q, kv = n_q * d_head, n_kv * d_head
    per_layer = ((d_model + q) + 2 * (d_model + kv) + (q + d_model) + 2 * (d_model + d_ff)
                 + (d_ff + d_model))
    assert_same(R.adapter_params(), lora_rank * n_layers * per_layer,
                (lora_rank, n_layers, d_model, d_ff, n_q, n_kv, d_head))


def test_llama_3_70b_adapter_rank_1():
    """Llama 3 70B: 80 layers of 16,384 + 2·9,216 + 16,384 + 3·36,864 = 161,792 per rank."""
    assert R.adapter_param_count(LLAMA70, 1) == 80 * 161_792 == 12_943_360
    assert R.adapter_param_count(LLAMA70, 32) == 32 * 12_943_360


# --- training FLOPs -------------------------------------------------------------------------------


def test_check_4_training_flops_ratio(assert_same):
    """Check 4: full = F + 2F, LoRA = F + F, ratio 2/3 exactly as r → 0; the adapters add
    exactly their parameter fraction."""
    assert_same(R.training_flops_ratio(),
                sp.Rational(2, 3) + lora_rank * (d_in + d_out) / (d_in * d_out), LORA_ARGS)
    assert sp.limit(R.training_flops_ratio().rhs, lora_rank, 0) == sp.Rational(2, 3)
    forward = sp.Symbol("F", positive=True)
    assert (forward + forward) / (forward + 2 * forward) == sp.Rational(2, 3) == POST["training_ratio_stated"]


def test_backward_is_twice_the_forward():
    """Mazurek (2025): the backward pass does two matmuls per forward matmul."""
    assert R.backward_over_forward() == 2 == POST["backward_over_forward_stated"]


def test_training_ratio_at_rank_1_of_the_down_projection():
    """2/3 + 1.57e-4: the rank-1 adapter's own matmuls are negligible."""
    ratio = R.training_flops_ratio().rhs.subs({lora_rank: 1, d_in: 28_672, d_out: 8_192})
    assert ratio == sp.Rational(2, 3) + sp.Rational(36_864, 234_881_024)


# --- gradients ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sizes", [(3, 2, 1, 2), (2, 3, 2, 1), (4, 2, 2, 2)])
def test_lora_gradients_match_sympy(sizes):
    """Mazurek (2025) / Hu et al. (2021): ∂J/∂B = G(Ax)ᵀ, ∂J/∂A = BᵀGxᵀ, and ∂J/∂W = Gxᵀ is the
    gradient LoRA skips; SymPy differentiates J = Σφ(z) entry by entry."""
    residuals = R.lora_gradient_residuals(*sizes)
    assert set(residuals) == {"A", "B", "x", "W"}
    assert all(m.is_zero_matrix for m in residuals.values())


def test_backprop_of_a_two_layer_sigmoid_mlp_matches_sympy():
    """Mazurek (2025), steps 1-9, in matrix form (examples as columns)."""
    residuals = R.backprop_residuals()
    assert set(residuals) == {"W1", "b1", "W2", "b2"}
    assert all(m.is_zero_matrix for m in residuals.values())


def test_sigmoid_derivative_is_sigma_times_one_minus_sigma():
    """σ(z) = 1/(1 + e^(-z)) has σ' = σ(1 − σ), the identity the SymPy function encodes."""
    z = sp.Symbol("z", real=True)
    explicit = 1 / (1 + sp.exp(-z))
    assert sp.simplify(sp.diff(explicit, z) - explicit * (1 - explicit)) == 0
    assert sp.simplify(R.sigmoid(z).rewrite(sp.exp) - explicit) == 0
    assert sp.diff(R.sigmoid(z), z) == R.sigmoid(z) * (1 - R.sigmoid(z))


# --- information ---------------------------------------------------------------------------


def test_checks_2_and_2b_reward_entropy(assert_same):
    """Checks 2, 2b: a binary reward carries 1 bit, five levels log₂5 = 2.3219 (post '2.3')."""
    assert_same(R.reward_entropy(), sp.log(n_levels) / sp.log(2), (n_levels,))
    h = R.reward_entropy().rhs
    assert h.subs(n_levels, 2) == POST["bits_binary_stated"] == 1
    assert abs(float(h.subs(n_levels, len(POST["reward_levels"]))) - POST["bits_levels_stated"]) < 0.05
    assert float(h.subs(n_levels, 5)) == pytest.approx(2.321928, abs=1e-6)


# --- GRPO and ESS ----------------------------------------------------------------------------


def test_check_6_wordle_advantage():
    """Check 6: reward 1.0 against a baseline of 0.2 gives +0.8, e.g. one success in five."""
    advantages = R.grpo_advantages([1, 0, 0, 0, 0])
    assert advantages[0] == sp.Rational(4, 5) == POST["wordle"]["advantage_stated"]
    assert POST["wordle"]["reward"] - POST["wordle"]["baseline"] == POST["wordle"]["advantage_stated"]


def test_check_8_grpo_advantages_sum_to_zero():
    """Check 8 (Shao et al. 2024): A_i = r_i − mean(r), so Σ A_i = 0 for any G and rewards."""
    _, total = R.grpo_advantage_sum()
    assert total == 0


@given(st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=20), min_size=1, max_size=12))
def test_grpo_advantages_sum_to_zero_for_any_rewards(rewards):
    """Exact arithmetic: the advantages of any group sum to zero and keep the rewards' order."""
    advantages = R.grpo_advantages(rewards)
    assert sp.Add(*advantages) == 0
    assert [a - advantages[0] for a in advantages] == [sp.Rational(r - rewards[0]) for r in rewards]


def test_checks_7_7b_7c_effective_sample_size():
    """Checks 7, 7b, 7c: w = (1,1,1,1) gives 1, (1,0,0,0) gives 1/4, one nonzero weight 1/n."""
    assert R.ess_of([1, 1, 1, 1]) == 1
    assert R.ess_of([1, 0, 0, 0]) == sp.Rational(1, 4)
    limits = R.ess_limits()
    assert limits["equal"] == 1
    assert limits["single"] == 1 / n_samples


@given(st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=50))
def test_ess_lies_between_one_over_n_and_one(weights):
    """Cauchy-Schwarz: 1/n ≤ (Σw)²/(n·Σw²) ≤ 1."""
    value = R.ess_of(weights)
    n = len(weights)
    assert 1 / n - 1e-12 <= value <= 1 + 1e-12


def test_ess_of_log_normal_weights(assert_same):
    """E[w]²/E[w²] for log w ~ N(−σ²/2, σ²) is exp(−σ²); a seeded sample of 200,000 agrees."""
    assert_same(R.ess_lognormal(), sp.exp(-sigma_lw**2), (sigma_lw,),
                overrides={sigma_lw: lambda rng: rng.uniform(0.01, 3, 20)})
    rng = np.random.default_rng(1)
    w = np.exp(rng.normal(-0.125, 0.5, 200_000))
    assert w.sum() ** 2 / (len(w) * (w**2).sum()) == pytest.approx(math.exp(-0.25), rel=0.01)


# --- multi-LoRA serving -----------------------------------------------------------------------


def test_multi_lora_step_time(assert_same):
    """Base weights read once, n adapters read once each, every token through base and adapter."""
    expected = (b * kv_bytes * seq_kv / (n_gpu * hbm_bw)
                + sp.Max(2 * b * (n_param + n_lora) / (n_gpu * flops),
                         p * (n_param + n_adapt * n_lora) / (n_gpu * hbm_bw)))
    assert_same(R.multi_lora_step_time(), expected, SERVE, simplify=False)


def test_without_adapters_it_is_the_base_step_time():
    """N_LoRA = 0 turns the multi-LoRA step into eq-intensity-step-time."""
    no_adapter = R.multi_lora_step_time().rhs.subs(n_lora, 0)
    assert sp.simplify(no_adapter - intensity.step_time().rhs) == 0


def test_multi_lora_cost(assert_same):
    """GPU-seconds per token N_GPU·t/b with b = n_adapt·b_adapt."""
    step = R.multi_lora_step_time().rhs
    expected = (n_gpu * step / b).subs(b, n_adapt * b_adapt)
    args = (n_adapt, b_adapt, kv_bytes, seq_kv, p, n_param, n_gpu, hbm_bw, flops, n_lora)
    assert_same(R.multi_lora_gpu_seconds(), expected, args, simplify=False)


def test_adapters_critical(assert_same):
    """2·n·b_a·(N + N_a)/C = p·(N + n·N_a)/B solved for n; with N_a → 0 it is b*/b_a."""
    expected = p * flops * n_param / (2 * hbm_bw * b_adapt * (n_param + n_lora) - p * flops * n_lora)
    args = (p, flops, n_param, hbm_bw, b_adapt, n_lora)
    assert_same(R.adapters_critical(), expected, args, simplify=True,
                overrides={n_lora: lambda rng: 1e-6 * rng.uniform(0, 1, 20),
                           flops: lambda rng: rng.uniform(1, 2, 20)})
    assert sp.simplify(R.adapters_critical().rhs.subs(n_lora, 0) - p * flops / (2 * hbm_bw) / b_adapt) == 0


def test_max_adapters():
    """p·(N + n·N_a) + n·b_a·M_KV·S = N_GPU·M_HBM, rounded down."""
    expected = sp.floor((n_gpu * hbm_cap - p * n_param) / (p * n_lora + b_adapt * kv_bytes * seq_kv))
    assert sp.simplify(R.max_adapters().rhs.args[0] - expected.args[0]) == 0
    assert isinstance(R.max_adapters().rhs, sp.floor)


def test_lora_throughput_ratio(assert_same):
    """Memory bound, same batch: (b·M_KV·S + p·N)/(b·M_KV·S + p·(N + n·N_a)); → N/(N + n·N_a)."""
    cache = b * kv_bytes * seq_kv
    expected = (cache + p * n_param) / (cache + p * (n_param + n_adapt * n_lora))
    assert_same(R.lora_throughput_ratio(), expected, (b, kv_bytes, seq_kv, p, n_param, n_adapt, n_lora))
    small_batch = sp.limit(R.lora_throughput_ratio().rhs, b, 0)
    assert sp.simplify(small_batch - n_param / (n_param + n_adapt * n_lora)) == 0


@given(st.floats(1, 200), st.floats(1, 100), st.floats(1, 64))
def test_cost_per_token_never_rises_with_more_adapters(n, extra, per_adapter):
    """Pooling adapters only adds sequences to the batch: the cost per token does not rise."""
    na = R.adapter_param_count(LLAMA70, 32)
    kwargs = {"per_adapter_batch": per_adapter, "adapter_params_count": na, "context": 2048,
              "model": LLAMA70, "gpu": H100, "n_chips": 4}
    costs = R.multi_lora_serving([n, n + extra], **kwargs)["usd_per_mtok"]
    assert costs[1] <= costs[0] * (1 + 1e-12)


def test_serving_helper_without_adapters_is_the_decode_step():
    """One adapter of zero parameters and b_adapt sequences: eq-intensity-step-time at b = b_adapt."""
    out = R.multi_lora_serving([1], per_adapter_batch=16, adapter_params_count=0, context=2048,
                               model=LLAMA70, gpu=H100, n_chips=4)
    step = intensity.decode_step_time(16, n_params=LLAMA70.total_params, weight_bytes=2,
                                      kv_bytes_per_token=LLAMA70.kv_bytes_per_token, context=2048,
                                      n_chips=4, chip_flops=H100.flops(16),
                                      chip_bandwidth=H100.bandwidth())
    assert out["step_s"][0] == pytest.approx(step, rel=1e-12)
    assert out["usd_per_mtok"][0] == pytest.approx(4 * step / 16 * H100.price_per_hour / 3600 * 1e6,
                                                   rel=1e-12)


def test_adapter_limits_are_consistent():
    """At n^max the weights, adapters and caches fit and one more adapter does not."""
    na = R.adapter_param_count(LLAMA70, 32)
    lim = R.adapter_limits(per_adapter_batch=8, adapter_params_count=na, context=2048,
                           model=LLAMA70, gpu=H100, n_chips=4)

    def used(n):
        return 2 * (LLAMA70.total_params + n * na) + n * 8 * LLAMA70.kv_bytes_per_token * 2048

    assert used(lim["max"]) <= 4 * H100.hbm_bytes < used(lim["max"] + 1)
    assert lim["critical"] > 1


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "field"), [
    (lambda: R.lora_fraction_of(0, 10, 10), "rank"),
    (lambda: R.lora_fraction_of(1, 10.5, 10), "matrix_in"),
    (lambda: R.grpo_advantages([]), "rewards"),
    (lambda: R.ess_of([1, -1]), "weights"),
    (lambda: R.ess_of([0, 0]), "weights"),
    (lambda: R.lora_gradient_residuals(0), "d_input"),
    (lambda: R.adapter_param_count(get_model("deepseek-v3-paper"), 1), "dense"),
    (lambda: R.multi_lora_serving([], per_adapter_batch=1, adapter_params_count=0, context=1,
                                  model=LLAMA70, gpu=H100, n_chips=4), "adapters"),
    (lambda: R.multi_lora_serving([1], per_adapter_batch=0, adapter_params_count=0, context=1,
                                  model=LLAMA70, gpu=H100, n_chips=4), "per_adapter_batch"),
    (lambda: R.adapter_limits(per_adapter_batch=1, adapter_params_count=0, context=1,
                              model=LLAMA70, gpu=H100, n_chips=1), "does not fit"),
])
def test_bad_input_raises_input_error_naming_the_field(call, field):
    """Public helpers refuse bad input with InputError naming the field."""
    with pytest.raises(InputError, match=field):
        call()
