"""What the minimum latency of eq. 14 says about model shape and hardware (Erdil 2025, 2.2.3).

For large models N* >> 1 and eq. 14 tends to 3·(L·n_reduce·t_hop)^(2/3)·(p·N/B)^(1/3) (eq. 18).
From it: latency grows as sqrt(N) when depth grows as N^(1/4) (eq. 19), as L·d_model^(2/3) in
depth and width, and falls only as B^(-1/3) in memory bandwidth.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    d_model,
    elasticity,
    hbm_bw,
    k_depth,
    k_width,
    n_gpu_star,
    n_layers,
    n_param,
    p,
    t_min,
)
from .latency_wall import minimum_token_latency_interior, n_param_at_instance_size


def _leading_term(expr: sp.Expr) -> sp.Expr:
    """The term of eq. 14's interior branch that dominates when p·N/B >> L·n_reduce·t_hop."""
    terms = sp.Add.make_args(sp.expand(expr))
    return next(t for t in terms if t.has(n_param))


@derivation("eq-scaling-large-model-latency", "Erdil (2025), eq. 18")
def minimum_latency_large_model() -> sp.Eq:
    """Eq. 14 for N* >> 1: 3·(L·n_reduce·t_hop)^(2/3)·(p·N/B)^(1/3) (eq-scaling-large-model-latency)."""
    return sp.Eq(t_min, _leading_term(minimum_token_latency_interior()))


def log_elasticity(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """d log(expr) / d log(var), simplified."""
    return sp.simplify(sp.diff(expr, var) * var / expr)


@derivation("eq-scaling-square-root-law", "Erdil (2025), eq. 19")
def square_root_law() -> sp.Eq:
    """With n_layers = k_L·N^(1/4), minimum latency ∝ N^(1/2) (eq-scaling-square-root-law, eq. 19)."""
    latency = minimum_latency_large_model().rhs.subs(n_layers, k_depth * n_param ** sp.Rational(1, 4))
    latency = sp.powsimp(sp.powdenest(latency, force=True), force=True)
    return sp.Eq(t_min, latency)


def square_root_exponent() -> sp.Expr:
    """d log t_min / d log N under the aspect-ratio law: the exponent of eq. 19 (1/2)."""
    return log_elasticity(square_root_law().rhs, n_param)


@derivation("eq-scaling-depth-width", "Erdil (2025), sec. 2.2.3")
def latency_in_depth_and_width() -> sp.Eq:
    """With N = k_d·d_model^2·L, eq. 18 ∝ L·d_model^(2/3) (eq-scaling-depth-width)."""
    latency = minimum_latency_large_model().rhs.subs(n_param, k_width * d_model**2 * n_layers)
    return sp.Eq(t_min, sp.powsimp(sp.powdenest(latency, force=True), force=True))


def depth_width_exponents() -> dict[str, sp.Expr]:
    """Exponents of n_layers and d_model in eq-scaling-depth-width (1 and 2/3)."""
    latency = latency_in_depth_and_width().rhs
    return {"n_layers": log_elasticity(latency, n_layers), "d_model": log_elasticity(latency, d_model)}


@derivation("eq-scaling-bandwidth-elasticity", "Erdil (2025), sec. 5.1 takeaway 3")
def bandwidth_elasticity() -> sp.Eq:
    """d log t_min / d log B of eq. 14, written through N*: -1/(3 - 2/sqrt(N*)).

    (eq-scaling-bandwidth-elasticity.) It tends to -1/3 for N* >> 1 and is -1 at N* = 1, where a
    single GPU is memory bound.
    """
    raw = log_elasticity(minimum_token_latency_interior(), hbm_bw)
    return sp.Eq(elasticity, sp.simplify(raw.subs(n_param, n_param_at_instance_size())))


def bandwidth_elasticity_limit() -> sp.Expr:
    """The large-instance limit of eq-scaling-bandwidth-elasticity (-1/3)."""
    return sp.limit(bandwidth_elasticity().rhs, n_gpu_star, sp.oo)


def change_ratio(expr: sp.Expr, var: sp.Symbol, factor) -> sp.Expr:
    """expr(var·factor)/expr(var), simplified: how a law scales when one input is multiplied."""
    return sp.simplify(expr.subs(var, var * factor) / expr)


def large_model_change(var: sp.Symbol, factor: sp.Expr) -> sp.Expr:
    """t_min(var·factor)/t_min(var) for eq. 18, exact: factor^(elasticity)."""
    return change_ratio(minimum_latency_large_model().rhs, var, factor)


def square_root_law_speed(speed_from: float, params_from: float, params_to: float) -> float:
    """Speed predicted by eq. 19 for a model of ``params_to`` from one measured at ``params_from``."""
    ratio = change_ratio(square_root_law().rhs, n_param, sp.nsimplify(params_to / params_from))
    return float(speed_from / ratio)


def doubling_bandwidth_latency_change() -> sp.Expr:
    """Relative latency change when B doubles, large-model limit: 2^(-1/3) - 1 ≈ -20.6%."""
    return large_model_change(hbm_bw, 2) - 1


def halving_precision_speedup() -> sp.Expr:
    """Relative speed gain when p halves, large-model limit: 2^(1/3) - 1 ≈ 26% (section 4.2)."""
    return 1 / large_model_change(p, sp.Rational(1, 2)) - 1
