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


def test_aggregated_ttft_counts_the_step_in_flight_and_the_chunks():
    fn = compile_fn(sr.aggregated_ttft(), (S.t_mix, S.n_chunks))
    # one step in flight, three carrying the prompt
    assert math.isclose(float(fn(0.05, 3)), 0.2)


def test_aggregated_ttft_does_not_wait_for_a_chunk_to_fill_hand_value():
    """DeepSeek-R1 on 8 B200s, b = 1,024, a budget of C = 4,096 prompt tokens per step,
    1,024/1,024 tokens: the finishing requests bring 1,024 prompt tokens per step on average
    (f_mix = 0.25 of a 4,096-token chunk), but a step takes a waiting prompt up to the budget:
    the prompt waits for the step in flight (at worst a mixed one, 32.52 ms on the physical
    curve) and rides one step (32.52 ms): 65.04 ms, whatever f_mix is. One sequence served
    alone (b = 1, f_mix = 1/4,096) waits no longer: there are no steps to wait for."""
    fn = compile_fn(sr.aggregated_ttft(), (S.t_mix, S.n_chunks))
    chunks = compile_fn(sr.chunks_of_prompt(), (S.t_prompt, S.chunk))
    assert float(chunks(1024, 4096)) == 1
    assert math.isclose(float(fn(32.52e-3, 1)), 65.04e-3, rel_tol=1e-12)
    assert S.f_mix not in sr.aggregated_ttft().rhs.free_symbols
    assert float(chunks(1024, 512)) == 2  # a 512-token budget: the prompt rides two steps


def test_mixed_split_when_memory_binds_hand_value():
    """A step reading 100 GB of weights, the decode tokens' 40 GB of cache and the chunk's
    5 GB of activations, at 8 TB/s: u_dec = 140/8 = 17.5 ms, u_chunk = 105/8 = 13.125 ms,
    u_mix = 145/8 = 18.125 ms. The chunk's own bytes are 5 GB, the decode tokens' 40 GB, the
    shared 100 GB; b = 64 decode tokens and C = 192 prompt tokens divide the shared read 1:3,
    so the chunk pays (5 + 75)/145 = 0.5517 of the step."""
    fn = compile_fn(sr.mixed_split(), (S.u_mix, S.u_dec, S.u_chunk, S.b, S.chunk))
    assert math.isclose(float(fn(145 / 8, 140 / 8, 105 / 8, 64, 192)), 80 / 145, rel_tol=1e-12)


def test_mixed_split_when_arithmetic_binds_is_the_share_of_flops():
    """FLOPs add: u_mix = u_dec + u_chunk, nothing is shared, and the chunk pays its FLOPs'
    share: 3 of 3 + 1."""
    fn = compile_fn(sr.mixed_split(), (S.u_mix, S.u_dec, S.u_chunk, S.b, S.chunk))
    assert math.isclose(float(fn(4.0, 1.0, 3.0, 64, 4096)), 0.75, rel_tol=1e-12)


@given(positive, positive, positive, positive, positive)
def test_mixed_split_is_a_share(u_mix, u_dec, u_chunk, batch, chunk):
    """Whatever the three times (even a mixed step cheaper than one of its sides, which an
    engine's efficiencies can make), φ_in lies in [0, 1]: both sides pay at least zero and
    together the whole step."""
    fn = compile_fn(sr.mixed_split(), (S.u_mix, S.u_dec, S.u_chunk, S.b, S.chunk))
    share = float(fn(u_mix, u_dec, u_chunk, batch, chunk))
    assert 0.0 <= share <= 1.0 and math.isfinite(share)


def test_bandwidth_fraction_reaches_half_at_beta_half_and_the_ceiling_at_large_kernels():
    e = er.bandwidth_fraction().rhs
    assert sp.simplify(e.subs(S.beta_layer, S.beta_half) - S.eta_mem / 2) == 0
    assert sp.limit(e, S.beta_layer, sp.oo) == S.eta_mem


def test_flop_fraction_limits():
    e = er.flop_fraction().rhs
    assert sp.limit(e, S.m_tokens, sp.oo) == S.eta_flop
    assert sp.limit(e, S.m_tokens, 0) == 0


def test_estimate_with_perfect_efficiencies_is_the_limit_combination():
    """t_0 = 0, full fractions at any size (β_½ = m_½ = 0, η = 1), one expert-parallel rank:
    eq-est-step-latency is eq-phys-forward-latency without launches, which is how the limit
    combines its terms."""
    est = er.step_latency().rhs.subs({S.t_fixed_step: 0, S.beta_half: 0, S.m_half: 0,
                                      S.eta_mem: 1, S.eta_flop: 1, S.n_ep: 1})
    limit = phys.forward_latency().rhs.subs(S.t_kernel, 0)
    assert sp.simplify(est - limit) == 0


@given(positive, positive, positive, st.floats(min_value=0, max_value=1))
def test_estimate_never_beats_its_terms_at_peak(mem, flop, net, omega):
    fn = compile_fn(er.step_latency(), er.STEP_ARGS)
    # a third of the arithmetic in the routed experts: 100 tokens, 8 a token, 8 ranks, 200 hit
    value = float(fn(mem, flop, flop / 3, net, 1e6, 100.0, 8.0, 8.0, 200.0, 1e-3, 0.9, 1e6,
                     0.7, 50.0, omega, 2.0))
    assert value >= max(mem, flop) + 1e-3 - 1e-12
