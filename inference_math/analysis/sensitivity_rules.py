"""The elasticities of a serving cost in its inputs, derived: eq-sens-one-term and eq-sens-corner.

The cost at a speed per user is the least ln N − ln b + ln t over (ln N, ln b) with the step
time within 1/S (:mod:`.sensitivity`, which evaluates these through the NumPy code generated
from them, :mod:`inference_math.fullmodel.formulas_numpy`). By the envelope theorem the
elasticity is the Lagrangian's partial in ln x at the optimum: with one binding piece
eq-sens-one-term, with two binding constraints eq-sens-corner (the implicit function theorem).
"""

from __future__ import annotations

import sympy as sp

from ..core import symbols as S
from ..core.registry import derivation


def _linearized(k: int, log_n, log_b, u) -> sp.Expr:
    """Constraint k (1 or 2) to first order about the optimum, in ln N, ln b and ln x."""
    gn, gb, gx = ((S.g1_n, S.g1_b, S.g1_x), (S.g2_n, S.g2_b, S.g2_x))[k - 1]
    return gn * log_n + gb * log_b + gx * u


@derivation("eq-sens-one-term", "this book: the envelope theorem on the cost of Erdil (2025), "
            "eq-search-cost, at a speed")
def one_term() -> sp.Eq:
    """Elasticity of the cost at a speed where one piece of the step binds (eq-sens-one-term).

    The cost's log is ln P + ln N − ln b − ln S subject to g = ln t + ln S ≤ 0, with N at its
    best. The Lagrangian's stationarity in ln b gives the multiplier; by the envelope theorem
    the cost's derivative in ln x is the Lagrangian's partial in ln x.
    """
    u = S.u_log
    log_n, log_b, lam = sp.symbols("n beta lambda", real=True)
    log_p = sp.Function("ln_P")(u)
    lagrangian = log_p + log_n - log_b + lam * _linearized(1, log_n, log_b, u)
    multiplier = sp.solve(sp.diff(lagrangian, log_b), lam)[0]
    slope = sp.diff(lagrangian, u).subs(lam, multiplier)
    return sp.Eq(S.eps_cost, slope.subs(sp.Derivative(log_p, u), S.eps_price))


@derivation("eq-sens-corner", "this book: the implicit function theorem on the cost of Erdil "
            "(2025), eq-search-cost, where two constraints bind")
def corner() -> sp.Eq:
    """Elasticity of the cost at a speed where two constraints bind (eq-sens-corner).

    At a corner the optimum (ln N, ln b) is where both constraints hold with equality, so it
    moves with x as g_1 = g_2 = 0 require: SymPy differentiates both in ln x, solves for the
    movements of ln N and ln b, and differentiates the cost's log ln P + ln N − ln b.
    """
    u = S.u_log
    log_n, log_b = sp.Function("n")(u), sp.Function("beta")(u)
    log_p = sp.Function("ln_P")(u)
    dn, db = sp.symbols("dn db", real=True)
    rates = {sp.Derivative(log_n, u): dn, sp.Derivative(log_b, u): db,
             sp.Derivative(log_p, u): S.eps_price}
    moves = sp.solve([sp.diff(_linearized(k, log_n, log_b, u), u).subs(rates) for k in (1, 2)],
                     [dn, db], dict=True)[0]
    slope = sp.diff(log_p + log_n - log_b, u).subs(rates).subs(moves)
    return sp.Eq(S.eps_cost, sp.factor(sp.expand(slope - S.eps_price)) + S.eps_price)
