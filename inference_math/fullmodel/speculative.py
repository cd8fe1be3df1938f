"""Speculative decoding in the full model (Erdil 2025, section 4.1, eq. 46).

A drafter Q proposes γ tokens one at a time; the target P verifies them in one forward pass of
γ tokens per sequence. With each token accepted independently with probability α, a step yields
(1 − α^γ)/(1 − α) tokens on average (the paper's truncated geometric count, which does not add
the target's bonus token), so the mean latency per token is

    t_spec = (1 − α)(t_P(γ) + γ·t_Q) / (1 − α^γ)                    (eq-spec-latency)

In the reference code t_P(γ) is the full model's forward latency at q = γ, t_Q the drafter's at
q = 1 on the same instance and batch, and γ ≤ 5; γ = 1 means no speculation (t_P(1)).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import accept, gamma, r_draft, t_draft, t_spec, t_target
from .spec_step import spec_latency_fn as spec_latency_fn  # evaluated without SymPy there


@derivation("eq-spec-latency", "Erdil (2025), eq. 46")
def spec_latency() -> sp.Eq:
    """Mean latency per token with speculative decoding (eq-spec-latency, paper eq. 46)."""
    return sp.Eq(t_spec, (1 - accept) * (t_target + gamma * t_draft) / (1 - accept**gamma))


def relative_latency() -> sp.Expr:
    """t_spec / t_Q as a function of r = t_P/t_Q, γ and α (t_P taken independent of γ)."""
    expr = spec_latency().rhs.subs(t_target, r_draft * t_draft) / t_draft
    return sp.simplify(expr)


@derivation("eq-spec-optimal-gamma", "this book, from Erdil (2025) eq. 46")
def optimal_gamma() -> sp.Eq:
    """The continuous γ minimizing eq. 46 when t_P does not depend on γ (eq-spec-optimal-gamma).

    d t_spec/dγ = 0 (:func:`stationarity_condition`) is α^γ (1 − (r + γ) ln α) = 1 with
    r = t_P/t_Q. ``sympy.solve`` returns its root through Lambert's W on the principal branch W₀.
    For 0 < α < 1 the argument −α^r/e lies in (−1/e, 0), where w·e^w = z has a second real
    solution, on the branch W₋₁; the same root on that branch is the positive γ that minimizes
    (the W₀ root is negative; the tests check both). The integer optimum is the better of the two
    integers around it.
    """
    numerator = sp.numer(sp.together(stationarity_condition()))
    (principal,) = sp.solve(numerator, gamma)
    if not principal.has(sp.LambertW):
        raise ArithmeticError("the stationary γ is no longer a Lambert-W expression")
    root = principal.replace(sp.LambertW, lambda z: sp.LambertW(z, -1))
    return sp.Eq(gamma, root, evaluate=False)


def stationarity_condition() -> sp.Expr:
    """d t_spec/dγ (with t_P fixed), whose zero is eq-spec-optimal-gamma."""
    return sp.diff(relative_latency(), gamma)


def best_integer_gamma(ratio: float, acceptance: float, gamma_max: int = 64) -> int:
    """The integer γ ≥ 1 minimizing eq. 46 for t_P/t_Q = ``ratio`` (t_P independent of γ)."""
    fn = compile_fn(relative_latency(), (r_draft, gamma, accept))
    values = fn(ratio, np.arange(1, gamma_max + 1), acceptance)
    return int(np.argmin(values)) + 1
