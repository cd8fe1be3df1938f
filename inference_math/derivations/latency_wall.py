"""Many GPUs: tensor parallelism and the latency wall (Erdil 2025, section 2.2).

Splitting the weights over N_GPU devices divides memory and arithmetic time by N_GPU but adds
n_reduce sequential all-reduces per layer. With a ring of sqrt(N_GPU) participants each
all-reduce costs 2·t_hop·(sqrt(N_GPU) - 1), which grows without bound, so there is an instance
size of minimum latency. Everything below is derived from the token latency by SymPy.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_star,
    cost_ratio,
    flops,
    gpu_s,
    n_gpu,
    n_gpu_star,
    n_layers,
    n_param,
    n_reduce,
    t_base,
    t_hop,
    t_min,
    t_reduce,
    t_token,
)
from .roofline import critical_batch, token_latency


def _split_over_gpus(expr: sp.Expr) -> sp.Expr:
    """Each argument of the single-GPU roofline maximum, divided over N_GPU devices."""
    return sp.Max(*(arg / n_gpu for arg in expr.args))


@derivation("eq-wall-all-reduce-ring", "Erdil (2025), sec. 2.2.1")
def all_reduce_time() -> sp.Eq:
    """Ring all-reduce over sqrt(N_GPU) ranks: 2·t_hop·(sqrt(N_GPU) - 1) (eq-wall-all-reduce-ring).

    R - 1 hops for the reduce-scatter and R - 1 for the all-gather, with R = sqrt(N_GPU) ranks
    because 2-D tensor parallelism slices each matrix along both dimensions.
    """
    ranks = sp.sqrt(n_gpu)
    return sp.Eq(t_reduce, 2 * t_hop * (ranks - 1))


@derivation("eq-wall-all-reduce-code", "Erdil (2025) code, section_2_2_token_latency_seconds")
def all_reduce_time_reference_code() -> sp.Eq:
    """The all-reduce latency the paper's code used for Figure 1 (eq-wall-all-reduce-code).

    2·t_hop·max(sqrt(N_GPU) - 1, 0) + t_base, with t_base = 6 µs: a fixed cost per collective
    that eq. 5 leaves out, and no negative latency below one GPU.
    """
    return sp.Eq(t_reduce, 2 * t_hop * sp.Max(sp.sqrt(n_gpu) - 1, 0) + t_base)


@derivation("eq-wall-token-latency", "Erdil (2025), eq. 3")
def token_latency_multi() -> sp.Eq:
    """Token latency of an N_GPU instance with per-layer all-reduces (eq-wall-token-latency, eq. 3)."""
    roofline = _split_over_gpus(token_latency().rhs)
    return sp.Eq(t_token, n_layers * n_reduce * t_reduce + roofline)


@derivation("eq-wall-gpu-seconds", "Erdil (2025), eq. 4")
def gpu_seconds_per_token_multi() -> sp.Eq:
    """GPU-seconds per token, N_GPU·latency/b (eq-wall-gpu-seconds, paper eq. 4)."""
    latency = token_latency_multi().rhs
    network, roofline = latency.as_independent(sp.Max, as_Add=True)
    per_token = sp.expand(n_gpu * network / b) + sp.Max(
        *(sp.expand(n_gpu * arg / b) for arg in roofline.args)
    )
    return sp.Eq(gpu_s, per_token)


@derivation("eq-wall-token-latency-hop", "Erdil (2025), eqs. 5 and 8")
def token_latency_hop() -> sp.Eq:
    """Eq. 3 with the ring all-reduce substituted (eq-wall-token-latency-hop, paper eqs. 5, 8)."""
    return sp.Eq(t_token, token_latency_multi().rhs.subs(t_reduce, all_reduce_time().rhs))


@derivation("eq-wall-token-latency-critical", "Erdil (2025), eq. 9")
def token_latency_at_critical_batch() -> sp.Eq:
    """Eq. 8 at b = b*, where both roofline terms coincide (eq-wall-token-latency-critical, eq. 9)."""
    latency = token_latency_hop().rhs.subs(b, critical_batch().rhs)
    return sp.Eq(t_token, latency)


def _interior_optimum() -> tuple[sp.Expr, sp.Expr]:
    """Stationary point of eq. 9 in N_GPU and the second derivative there."""
    latency = token_latency_at_critical_batch().rhs
    slope = sp.diff(latency, n_gpu)
    (stationary,) = sp.solve(sp.Eq(slope, 0), n_gpu)
    curvature = sp.simplify(sp.diff(latency, n_gpu, 2).subs(n_gpu, stationary))
    return stationary, curvature


def instance_size_ratio() -> sp.Expr:
    """p·N/(n_layers·n_reduce·t_hop·B): memory time on one GPU over the per-layer hop time.

    Obtained as (N_GPU at the stationary point)^(3/2); the optimum uses many GPUs exactly when
    this ratio exceeds 1.
    """
    stationary, _ = _interior_optimum()
    return sp.simplify(sp.powsimp(stationary ** sp.Rational(3, 2), force=True))


@derivation("eq-wall-optimal-instance-size", "Erdil (2025), eqs. 10-13")
def optimal_instance_size() -> sp.Eq:
    """N* = max(p·N/(L·n_reduce·t_hop·B), 1)^(2/3) (eq-wall-optimal-instance-size, eqs. 12-13).

    SymPy differentiates eq. 9, solves for the stationary point and checks that the second
    derivative is positive there. Below one GPU the network term would turn negative, so the
    optimum is clamped at one GPU.
    """
    stationary, curvature = _interior_optimum()
    if not curvature.is_positive:
        raise ArithmeticError("eq. 9 has no minimum in N_GPU: second derivative not positive")
    ratio = instance_size_ratio()
    if sp.simplify(ratio ** sp.Rational(2, 3) - stationary) != 0:
        raise ArithmeticError("stationary point is not ratio^(2/3)")
    return sp.Eq(n_gpu_star, sp.Max(ratio, 1) ** sp.Rational(2, 3))


def n_param_at_instance_size() -> sp.Expr:
    """N_param written through the interior optimum: the inverse of N* = ratio^(2/3) (eq. 12)."""
    (solution,) = sp.solve(sp.Eq(instance_size_ratio(), n_gpu_star ** sp.Rational(3, 2)), n_param)
    return solution


def minimum_token_latency_interior() -> sp.Expr:
    """Eq. 9 evaluated at the interior optimum (valid when N* > 1)."""
    stationary, _ = _interior_optimum()
    latency = token_latency_at_critical_batch().rhs.subs(n_gpu, stationary)
    return sp.expand(sp.powsimp(sp.expand(latency), force=True))


@derivation("eq-wall-minimum-latency", "Erdil (2025), eq. 14")
def minimum_token_latency() -> sp.Eq:
    """Minimum token latency (eq-wall-minimum-latency, paper eq. 14).

    3·(L·n_reduce·t_hop)^(2/3)·(p·N/B)^(1/3) - 2·L·n_reduce·t_hop when N* > 1, else p·N/B.
    """
    single_gpu = token_latency_at_critical_batch().rhs.subs(n_gpu, 1)
    return sp.Eq(
        t_min,
        sp.Piecewise(
            (minimum_token_latency_interior(), instance_size_ratio() > 1), (single_gpu, True)
        ),
    )


@derivation("eq-wall-cost-at-minimum-latency", "Erdil (2025), eqs. 15-17")
def cost_ratio_at_minimum_latency() -> sp.Eq:
    """Cost at minimum latency over the arithmetic floor 2·N/C, as a function of N*.

    (eq-wall-cost-at-minimum-latency, paper eqs. 15-17.) The cost is N*/b*·t_min (eq. 15); the
    ratio is exactly 3 - 2/sqrt(N*), which tends to the paper's factor 3 as N* grows.
    """
    cost = n_gpu_star / b_star * t_min
    floor = 2 * n_param / flops
    ratio = (cost / floor).subs(
        {
            t_min: minimum_token_latency_interior(),
            b_star: critical_batch().rhs,
        }
    ).subs(n_param, n_param_at_instance_size())
    return sp.Eq(cost_ratio, sp.simplify(ratio))


def cost_ratio_limit() -> sp.Expr:
    """lim_{N*->oo} of the cost ratio of eq-wall-cost-at-minimum-latency (the paper's 3)."""
    return sp.limit(cost_ratio_at_minimum_latency().rhs, n_gpu_star, sp.oo)

