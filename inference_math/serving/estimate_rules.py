"""The estimate: the physical rules with a few global efficiencies, each with a physical meaning.

The limit (physical rules at the hardware's peaks) is what no deployment can beat; a real engine
reaches a fraction of it. The estimate names where the rest goes, with seven numbers shared by
every model and GPU, t_0, η_mem and η_flop once per vendor's software stack (fitted in
:mod:`~inference_math.reality.estimate_fit`):

- t_0, a fixed time of every step (scheduling, sampling, synchronizing the GPUs);
- η_mem and β_½: a kernel reading β bytes at a fraction η_mem of the peak bandwidth after a fixed
  start-up time τ_k reaches the fraction η_mem·β/(β + β_½) (eq-est-bandwidth-fraction), β_½ the
  bytes the start-up costs;
- η_flop and m_½: a matmul whose weights each see m tokens pays for m + m_½ rows (tile padding,
  the pipeline's fill) at a fraction η_flop of the peak: η_flop·m/(m + m_½)
  (eq-est-flop-fraction);
- ω, the share of the network time hidden behind memory and arithmetic (eq-phys-forward-latency);
- ρ_r, routing's overdispersion: a mixture-of-experts layer's routed experts multiply each its
  own tokens, each expert hit paying the padding m_½ (eq-est-expert-flop-fraction, with the
  experts hit of eq-est-experts-hit), and the step waits for the busiest expert-parallel rank,
  whose load exceeds the mean by ρ_r times what uniform routing gives (eq-est-busiest-rank).

A step then takes eq-est-step-latency: t_0 plus eq-phys-forward-latency at the peak memory and
arithmetic times divided by those fractions, with no separate launch time (t_0 and the
start-up costs hold it). The experts' dispatch and combine are the physical network time's
(eq-coll-all-to-all) and the shared experts multiply every token, as attention's weights do.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    beta_half,
    beta_layer,
    eta_flop,
    eta_mem,
    flops,
    hbm_bw,
    lam_rank,
    m_half,
    m_tokens,
    n_active,
    n_ep,
    n_experts,
    n_hit,
    omega_net,
    psi_exp,
    psi_flop,
    psi_mem,
    rho_route,
    t_est,
    t_fixed_step,
    t_flop,
    t_flop_exp,
    t_kernel,
    t_mem,
    t_net,
    tau_kernel,
)
from ..fullmodel import physical_rules as phys


@derivation("eq-est-bandwidth-fraction", "this book, from Erdil (2025) eqs. 29-30")
def bandwidth_fraction() -> sp.Eq:
    """Reachable fraction of the peak HBM bandwidth for a kernel reading β bytes per GPU
    (eq-est-bandwidth-fraction).

    The kernel takes β/(η_mem·B) + τ_k; the fraction ψ of the peak B it reaches solves
    β/(ψ·B) = β/(η_mem·B) + τ_k. Writing τ_k as the time of β_½ bytes at η_mem·B gives
    ψ = η_mem·β/(β + β_½).
    """
    (share,) = sp.solve(sp.Eq(beta_layer / (psi_mem * hbm_bw),
                              beta_layer / (eta_mem * hbm_bw) + tau_kernel), psi_mem)
    return sp.Eq(psi_mem, sp.factor(share.subs(tau_kernel, beta_half / (eta_mem * hbm_bw))))


@derivation("eq-est-flop-fraction", "this book, from Erdil (2025) eqs. 29-30")
def flop_fraction() -> sp.Eq:
    """Reachable fraction of the peak FLOP/s for matmuls whose weights each see m tokens
    (eq-est-flop-fraction): 2·m FLOPs per weight take the time of 2·(m + m_½) FLOPs at η_flop·C,
    so ψ·C·2(m + m_½)/(η_flop·C) = 2m gives ψ = η_flop·m/(m + m_½)."""
    work = 2 * m_tokens
    time = 2 * (m_tokens + m_half) / (eta_flop * flops)
    (share,) = sp.solve(sp.Eq(psi_flop * flops * time, work), psi_flop)
    return sp.Eq(psi_flop, sp.factor(share))


@derivation("eq-est-experts-hit", "this book, from the occupancy problem of Feller (1968), ch. II")
def experts_hit() -> sp.Eq:
    """Experts of a layer that at least one of the step's m tokens is routed to, in expectation,
    each token choosing its n_active of the n_expert experts uniformly (eq-est-experts-hit).

    A token misses a given expert with the probability
    binom(n_expert − 1, n_active)/binom(n_expert, n_active) = 1 − n_active/n_expert; m tokens
    routed independently all miss it with its m-th power, and the expected count of experts hit
    is n_expert times the complement (linearity of expectation).
    """
    e, k, m = n_experts, n_active, m_tokens
    miss_one = sp.combsimp(sp.binomial(e - 1, k) / sp.binomial(e, k))
    return sp.Eq(n_hit, e * (1 - miss_one ** m))


@derivation("eq-est-busiest-rank", "this book, from the maximal inequality for sub-Gaussian "
            "variables of Boucheron, Lugosi and Massart (2013), ch. 2")
def busiest_rank() -> sp.Eq:
    """Tokens of the busiest of N_EP expert-parallel ranks over the mean rank's
    (eq-est-busiest-rank).

    The step's m·k expert assignments land on a rank each with the probability 1/N_EP under
    uniform routing: a rank's load has the mean μ = m·k/N_EP and the variance
    m·k·(1/N_EP)·(1 − 1/N_EP). The largest of N_EP loads exceeds the mean by at most
    √(2·var·ln N_EP) in expectation (sub-Gaussian loads); routing that concentrates on some
    experts spreads the loads wider, by a factor ρ_r of the standard deviation (ρ_r = 1:
    uniform). λ_EP is the busiest load over μ, 1 on one rank, and at most N_EP (one rank
    with every assignment).
    """
    assignments = m_tokens * n_active
    mean = assignments / n_ep
    variance = assignments * (1 / n_ep) * (1 - 1 / n_ep)
    busiest = mean + rho_route * sp.sqrt(2 * variance * sp.log(n_ep))
    return sp.Eq(lam_rank, sp.Min(sp.simplify(busiest / mean), n_ep))


@derivation("eq-est-expert-flop-fraction", "this book, from Erdil (2025) eqs. 29-30 (eq-est-flop-fraction)")
def expert_flop_fraction() -> sp.Eq:
    """Reachable fraction of the peak FLOP/s for the routed experts' grouped matmul
    (eq-est-expert-flop-fraction): each expert multiplies its own tokens, and each of the
    n_hit experts hit pays the padding m_½ of eq-est-flop-fraction, so the m·k useful rows take
    the time of m·k + n_hit·m_½ at η_flop·C."""
    work = 2 * m_tokens * n_active
    time = 2 * (m_tokens * n_active + n_hit * m_half) / (eta_flop * flops)
    (share,) = sp.solve(sp.Eq(psi_exp * flops * time, work), psi_exp)
    return sp.Eq(psi_exp, sp.factor(share))


@derivation("eq-est-step-latency", "this book, from Erdil (2025) eqs. 29-30 (eq-phys-forward-latency)")
def step_latency() -> sp.Eq:
    """A step by the estimate (eq-est-step-latency): t_0 plus eq-phys-forward-latency with no
    launch time, the peak memory time t_mem over eq-est-bandwidth-fraction, the peak arithmetic
    time split in two, the routed experts' t_flop^E at eq-est-expert-flop-fraction on the
    busiest rank (eq-est-busiest-rank) and the rest at eq-est-flop-fraction (every token
    multiplies those weights: m tokens), and the share ω of t_net hidden. A dense model has
    t_flop^E = 0."""
    arithmetic = ((t_flop - t_flop_exp) / flop_fraction().rhs
                  + t_flop_exp * busiest_rank().rhs / expert_flop_fraction().rhs)
    pass_time = phys.forward_latency().rhs.subs({
        t_kernel: 0,
        t_mem: t_mem / bandwidth_fraction().rhs,
        t_flop: arithmetic}, simultaneous=True)
    return sp.Eq(t_est, t_fixed_step + pass_time)


#: The fitted parameters in the order of :data:`STEP_ARGS` after the terms.
PARAMETERS = (t_fixed_step, eta_mem, beta_half, eta_flop, m_half, omega_net, rho_route)
#: Arguments of the compiled eq-est-step-latency: the terms of a pass, then the parameters.
STEP_ARGS = (t_mem, t_flop, t_flop_exp, t_net, beta_layer, m_tokens, n_active, n_ep,
             n_hit) + PARAMETERS
