"""The estimate: the physical rules with a few global efficiencies, each with a physical meaning.

The limit (physical rules at the hardware's peaks) is what no deployment can beat; a real engine
reaches a fraction of it. The estimate names where the rest goes, with six numbers shared by
every model and GPU, t_0, η_mem and η_flop once per vendor's software stack (fitted in
:mod:`~inference_math.reality.estimate_fit`):

- t_0, a fixed time of every step (scheduling, sampling, synchronizing the GPUs);
- η_mem and β_½: a kernel reading β bytes at a fraction η_mem of the peak bandwidth after a fixed
  start-up time τ_k reaches the fraction η_mem·β/(β + β_½) (eq-est-bandwidth-fraction), β_½ the
  bytes the start-up costs;
- η_flop and m_½: a matmul whose weights each see m tokens pays for m + m_½ rows (tile padding,
  the pipeline's fill) at a fraction η_flop of the peak: η_flop·m/(m + m_½)
  (eq-est-flop-fraction);
- ω, the share of the network time hidden behind memory and arithmetic (eq-phys-forward-latency).

A step then takes eq-est-step-latency: t_0 plus eq-phys-forward-latency at the peak memory and
arithmetic times divided by those fractions, with no separate launch time (t_0 and the
start-up costs hold it).
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
    m_half,
    m_tokens,
    omega_net,
    peak_share,
    t_est,
    t_fixed_step,
    t_flop,
    t_kernel,
    t_mem,
    t_net,
    tau_kernel,
)
from ..fullmodel import physical_rules as phys

_fraction = peak_share


@derivation("eq-est-bandwidth-fraction", "this book, from Erdil (2025) eqs. 29-30")
def bandwidth_fraction() -> sp.Eq:
    """Reachable fraction of the peak HBM bandwidth for a kernel reading β bytes per GPU
    (eq-est-bandwidth-fraction).

    The kernel takes β/(η_mem·B) + τ_k; the fraction e of the peak B it reaches solves
    β/(e·B) = β/(η_mem·B) + τ_k. Writing τ_k as the time of β_½ bytes at η_mem·B gives
    e = η_mem·β/(β + β_½).
    """
    (share,) = sp.solve(sp.Eq(beta_layer / (_fraction * hbm_bw),
                              beta_layer / (eta_mem * hbm_bw) + tau_kernel), _fraction)
    return sp.Eq(_fraction, sp.factor(share.subs(tau_kernel, beta_half / (eta_mem * hbm_bw))))


@derivation("eq-est-flop-fraction", "this book, from Erdil (2025) eqs. 29-30")
def flop_fraction() -> sp.Eq:
    """Reachable fraction of the peak FLOP/s for matmuls whose weights each see m tokens
    (eq-est-flop-fraction): 2·m FLOPs per weight done in the time of 2·(m + m_½) at η_flop·F,
    so e·F·2(m + m_½)/(η_flop·F) = 2m gives e = η_flop·m/(m + m_½)."""
    work = 2 * m_tokens
    time = 2 * (m_tokens + m_half) / (eta_flop * flops)
    (share,) = sp.solve(sp.Eq(_fraction * flops * time, work), _fraction)
    return sp.Eq(_fraction, sp.factor(share))


@derivation("eq-est-step-latency", "this book, from Erdil (2025) eqs. 29-30 (eq-phys-forward-latency)")
def step_latency() -> sp.Eq:
    """A step by the estimate (eq-est-step-latency): t_0 plus eq-phys-forward-latency with no
    launch time, the peak memory time t_mem over eq-est-bandwidth-fraction and the peak
    arithmetic time t_flop over eq-est-flop-fraction, the share ω of t_net hidden."""
    pass_time = phys.forward_latency().rhs.subs({
        t_kernel: 0,
        t_mem: t_mem / bandwidth_fraction().rhs,
        t_flop: t_flop / flop_fraction().rhs}, simultaneous=True)
    return sp.Eq(t_est, t_fixed_step + pass_time)


#: The fitted parameters in the order of :data:`STEP_ARGS` after the terms.
PARAMETERS = (t_fixed_step, eta_mem, beta_half, eta_flop, m_half, omega_net)
#: Arguments of the compiled eq-est-step-latency: the terms of a pass, then the parameters.
STEP_ARGS = (t_mem, t_flop, t_net, beta_layer, m_tokens) + PARAMETERS
