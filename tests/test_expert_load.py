"""The estimate's mixture-of-experts terms (serving/estimate_rules.py): the experts a step hits,
the busiest expert-parallel rank and the grouped matmul's padding, checked symbolically, against
seeded simulations of routing, and by hand from the configs."""

import math

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.core.numeric import compile_fn
from inference_math.presets.hardware import get_gpu
from inference_math.presets.models import get_model
from inference_math.serving import estimate_rules as er
from inference_math.serving import step_time as stt


def test_experts_hit_limits():
    e = er.experts_hit().rhs
    assert sp.simplify(e.subs(S.m_tokens, 1) - S.n_active) == 0  # one token hits its k
    assert sp.simplify(e.subs(S.n_active, S.n_experts)) == S.n_experts  # k = E: every expert
    assert sp.limit(e.subs({S.n_experts: 256, S.n_active: 8}), S.m_tokens, sp.oo) == 256


def test_experts_hit_hand_value():
    """DeepSeek-V3's 256 experts, 8 a token, 32 tokens: 256·(1 − (31/32)^32)."""
    fn = compile_fn(er.experts_hit(), (S.n_experts, S.n_active, S.m_tokens))
    assert math.isclose(float(fn(256, 8, 32)), 256 * (1 - (31 / 32) ** 32), rel_tol=1e-12)
    assert math.isclose(float(fn(256, 8, 32)), 163.25, rel_tol=1e-3)


def test_experts_hit_matches_a_simulation_of_routing():
    """Tokens each drawing 8 distinct experts of 256 uniformly (a seeded generator, 1,000
    steps): the mean count of experts hit is the derived expectation within 1%."""
    rng = np.random.default_rng(7)
    fn = compile_fn(er.experts_hit(), (S.n_experts, S.n_active, S.m_tokens))
    for tokens in (4, 32, 128):
        counts = []
        for _ in range(1000):
            picks = np.argpartition(rng.random((tokens, 256)), 8, axis=1)[:, :8]
            counts.append(len(np.unique(picks)))
        assert math.isclose(np.mean(counts), float(fn(256, 8, tokens)), rel_tol=1e-2)


@given(st.integers(2, 512), st.integers(1, 16), st.floats(1, 1e5))
def test_experts_hit_grows_with_tokens_and_stays_between_k_and_e(experts, k, tokens):
    k = min(k, experts)
    fn = compile_fn(er.experts_hit(), (S.n_experts, S.n_active, S.m_tokens))
    hit, more = float(fn(experts, k, tokens)), float(fn(experts, k, tokens * 2))
    assert k - 1e-9 <= hit <= experts + 1e-9
    assert more >= hit - 1e-9


def test_busiest_rank_is_one_on_one_rank_and_at_many_tokens():
    lam = er.busiest_rank().rhs
    assert lam.subs(S.n_ep, 1) == 1
    (uncapped,) = [arg for arg in lam.args if arg != S.n_ep]  # λ_EP = min(·, N_EP)
    assert sp.limit(uncapped.subs({S.n_ep: 8, S.n_active: 8, S.rho_route: 1}), S.m_tokens,
                    sp.oo) == 1


def test_busiest_rank_bounds_a_simulation_of_uniform_routing():
    """8 ranks of 32 experts each, uniform routing (seeded, 500 steps): the mean busiest load over the
    mean load stays under λ_EP at ρ_r = 1 (an upper bound) and above half its excess."""
    rng = np.random.default_rng(11)
    fn = compile_fn(er.busiest_rank(), (S.m_tokens, S.n_active, S.n_ep, S.rho_route))
    for tokens in (16, 128, 512):
        ratios = []
        for _ in range(500):
            picks = np.argpartition(rng.random((tokens, 256)), 8, axis=1)[:, :8]
            loads = np.bincount((picks // 32).ravel(), minlength=8)
            ratios.append(loads.max() / (tokens * 8 / 8))
        bound = float(fn(tokens, 8, 8, 1.0))
        assert np.mean(ratios) <= bound
        assert np.mean(ratios) - 1 >= 0.5 * (bound - 1)


@given(st.floats(1, 1e5), st.integers(1, 16), st.integers(2, 256), st.floats(1, 30))
def test_busiest_rank_falls_with_tokens_rises_with_dispersion_and_stays_in_range(m, k, ep, rho):
    fn = compile_fn(er.busiest_rank(), (S.m_tokens, S.n_active, S.n_ep, S.rho_route))
    lam = float(fn(m, k, ep, rho))
    assert 1 <= lam <= ep + 1e-9
    assert float(fn(m * 2, k, ep, rho)) <= lam + 1e-12
    assert float(fn(m, k, ep, rho * 1.5)) >= lam - 1e-12


def test_expert_fraction_is_the_flop_fraction_at_each_experts_tokens():
    """Every expert hit (n_hit = E): the grouped matmul's fraction is eq-est-flop-fraction at
    the m·k/E tokens each expert multiplies."""
    grouped = er.expert_flop_fraction().rhs.subs(S.n_hit, S.n_experts)
    single = er.flop_fraction().rhs.subs(S.m_tokens, S.m_tokens * S.n_active / S.n_experts)
    assert sp.simplify(grouped - single) == 0


def test_routed_active_params_by_hand():
    """Routed weights a token multiplies, from the configs: DeepSeek-V3, 58 MoE layers of
    8 experts of 3·7168·2048 weights; Mixtral 8x7B, 32 layers of 2 experts of 3·4096·14336;
    a dense model none."""
    v3 = get_model("deepseek-v3")
    assert stt.routed_active_params(v3) == 58 * 8 * 3 * 7168 * 2048
    assert stt.routed_experts(v3) == (256, 8)
    mixtral = get_model("mixtral-8x7b")
    assert stt.routed_active_params(mixtral) == 32 * 2 * 3 * 4096 * 14336
    assert stt.routed_active_params(get_model("llama-3-70b")) == 0.0


def test_dense_estimate_is_unchanged_by_the_expert_terms():
    """A dense model: the experts' share is 0, so the step is t_0 + the larger of memory and
    arithmetic at their fractions (ω = 0), computed here by hand from the raw terms."""
    model, gpu = get_model("llama-3-70b"), get_gpu("h100")
    raw = stt.raw_terms(model, gpu, 4.0, 1.0, np.array([1.0, 64.0, 512.0]), 1.0, 1000.0)
    eff = stt.Efficiency(2e-3, 0.6, 5e6, 0.5, 40.0, 0.0, 7.0)
    mem = raw.memory / (eff.eta_mem * raw.beta / (raw.beta + eff.beta_half_bytes))
    tokens = np.array([1.0, 64.0, 512.0])
    flop = raw.arithmetic / (eff.eta_flop * tokens / (tokens + eff.m_half_tokens))
    hand = np.where(raw.fits, eff.t_fixed_s + raw.network + np.maximum(mem, flop), np.inf)
    assert raw.fits[:2].all() and not raw.fits[2]  # 512 sequences' cache does not fit
    assert np.all(raw.arithmetic_experts == 0)
    assert np.allclose(stt.estimate_latency(raw, eff), hand, rtol=1e-12)


def test_deepseek_expert_arithmetic_by_hand():
    """DeepSeek-V3 on 8 H200s, 256 sequences decoding: the routed experts' arithmetic at peak
    is 2·20.43e9·256 FLOPs over 8 GPUs' FP8 rate; expert parallelism is on (256 tokens ≥ 2·32),
    8 ranks; 256·(1 − (31/32)^256) experts hit."""
    model, gpu = get_model("deepseek-v3"), get_gpu("h200")
    raw = stt.raw_terms(model, gpu, 8.0, 1.0, np.array([256.0]), 1.0, 1000.0)
    routed = 58 * 8 * 3 * 7168 * 2048
    assert math.isclose(float(raw.arithmetic_experts[0]),
                        2 * routed * 256 / (8 * gpu.flops(8)), rel_tol=1e-12)
    assert float(raw.ep[0]) == 8
    assert math.isclose(float(raw.hit[0]), 256 * (1 - (31 / 32) ** 256), rel_tol=1e-12)
