"""The serving frontier's rules (serving/serving_rules.py) and the estimate's (estimate_rules.py):
identities checked symbolically and numerically, limits and monotonicity, hand values."""

import math

import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.core.numeric import compile_fn
from inference_math.fullmodel import physical_rules as phys
from inference_math.serving import estimate_rules as er
from inference_math.serving import serving_rules as sr

positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


def test_chunk_share_balances_the_prompt_tokens():
    """f_mix·C prompt tokens per step equal the b·T_in/T_out the finishing requests bring."""
    f = sr.chunk_share().rhs
    assert sp.simplify(f * S.chunk - S.b * S.t_prompt / S.t_output) == 0


def test_mean_step_is_the_share_weighted_mean():
    f = sr.chunk_share().rhs
    weighted = f * S.t_mix + (1 - f) * S.t_dec
    assert sp.simplify(sr.mean_step().rhs - weighted) == 0
    # no prompt tokens (T_in → 0): every step is a plain decode step
    assert sp.limit(sr.mean_step().rhs, S.t_prompt, 0) == S.t_dec


def test_gpu_seconds_split_is_whole():
    assert sp.simplify(sr.gpu_seconds().rhs - sr.mean_step().rhs) == 0


def test_disaggregated_rate_is_one_over_the_gpu_seconds_of_both_pools():
    """1/R_GPU = 1/R_dec + ρ_io/R_pre: a decode GPU-second per R_dec output tokens, and the
    ρ_io input tokens per output token at R_pre per prefill GPU-second."""
    rate = sr.disaggregated_rate().rhs
    assert sp.simplify(1 / rate - (1 / S.rate_dec + S.rho_io / S.rate_pre)) == 0


@given(positive, positive, positive)
def test_disaggregated_rate_grows_with_either_pool(r_dec, r_pre, rho):
    fn = compile_fn(sr.disaggregated_rate(), (S.rate_dec, S.rate_pre, S.rho_io))
    base = float(fn(r_dec, r_pre, rho))
    assert float(fn(r_dec * 1.1, r_pre, rho)) > base
    assert float(fn(r_dec, r_pre * 1.1, rho)) > base
    assert base < r_dec  # the prefill pool always costs some GPUs


def test_kv_transfer_hand_value():
    """A 2,000-token prompt of DeepSeek-V3 at 70,272 bytes per token (its MLA latent, 512 + 64
    elements in each of 61 layers, at 16 bits; 35,136 at FP8) over 8 GPUs' 50 GB/s links
    (400 Gb/s NICs): 140.5 MB / 400 GB/s = 0.3514 ms. Recomputed from the config by a checker
    who did not write the term."""
    fn = compile_fn(sr.kv_transfer(), (S.kv_prompt, S.n_send, S.bw_nic))
    assert math.isclose(float(fn(2000 * 70272, 8, 50e9)), 3.514e-4, rel_tol=1e-3)


def test_aggregated_ttft_counts_the_wait_and_the_chunks():
    fn = compile_fn(sr.aggregated_ttft(), (S.t_mix, S.n_chunks))
    assert float(fn(0.05, 3)) == 0.2  # one step waited, three carrying the prompt


def test_bandwidth_fraction_reaches_half_at_beta_half_and_the_ceiling_at_large_kernels():
    e = er.bandwidth_fraction().rhs
    assert sp.simplify(e.subs(S.beta_layer, S.beta_half) - S.eta_mem / 2) == 0
    assert sp.limit(e, S.beta_layer, sp.oo) == S.eta_mem


def test_flop_fraction_limits():
    e = er.flop_fraction().rhs
    assert sp.limit(e, S.m_tokens, sp.oo) == S.eta_flop
    assert sp.limit(e, S.m_tokens, 0) == 0


def test_estimate_with_perfect_efficiencies_is_the_limit_combination():
    """t_0 = 0, full fractions at any size (β_½ = m_½ = 0, η = 1): eq-est-step-latency is
    eq-phys-forward-latency without launches, which is how the limit combines its terms."""
    est = er.step_latency().rhs.subs({S.t_fixed_step: 0, S.beta_half: 0, S.m_half: 0,
                                      S.eta_mem: 1, S.eta_flop: 1})
    limit = phys.forward_latency().rhs.subs(S.t_kernel, 0)
    assert sp.simplify(est - limit) == 0


@given(positive, positive, positive, st.floats(min_value=0, max_value=1))
def test_estimate_never_beats_its_terms_at_peak(mem, flop, net, omega):
    fn = compile_fn(er.step_latency(), er.STEP_ARGS)
    value = float(fn(mem, flop, net, 1e6, 100.0, 1e-3, 0.9, 1e6, 0.7, 50.0, omega))
    assert value >= max(mem, flop) + 1e-3 - 1e-12
