"""Estimating the acceptance rate of speculative decoding from log-probabilities (Erdil 2025, 4.1).

Speculative sampling (Leviathan et al. 2023) keeps a token z drafted by Q with probability
min(1, P(z)/Q(z)). Averaged over z ~ Q this is the acceptance rate alpha, which equals the overlap
of the two next-token distributions. Erdil's procedure samples z from the draft, reads both
models' log-probabilities of it, and averages min(1, exp(l_P - l_Q)); an API that returns
log-probabilities is enough (the derivations use surprisals s = -l, which are positive).
Each term lies in [0, 1], which bounds the estimator's variance.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    accept,
    accept_token,
    alpha_eps,
    alpha_se,
    n_alpha,
    surp_draft,
    surp_target,
    tv_dist,
    z_conf,
)

# The two next-token distributions over a vocabulary of K tokens, indexed by the token z. They are
# placeholders of a summation, not model quantities, so they are not in the symbol registry.
_P = sp.IndexedBase("P", positive=True)
_Q = sp.IndexedBase("Q", positive=True)
_z = sp.Symbol("z", integer=True, positive=True)
_K = sp.Symbol("K", integer=True, positive=True)


@derivation("eq-accept-token", "Erdil (2025), sec. 4.1, step 3; Leviathan et al. (2023)")
def token_acceptance() -> sp.Eq:
    """min(1, p/q) from surprisals s = -log p: min(1, exp(s_Q - s_P)) (eq-accept-token)."""
    p_val, q_val = sp.exp(-surp_target), sp.exp(-surp_draft)
    return sp.Eq(accept_token, sp.Min(1, sp.powsimp(p_val / q_val)))


def acceptance_overlap_sum() -> sp.Expr:
    """E_{z~Q}[min(1, P/Q)] over a vocabulary of K tokens, reduced to 1 - (1/2)·sum |P - Q|.

    Q(z)·min(1, P(z)/Q(z)) = min(P(z), Q(z)) = (P + Q - |P - Q|)/2, and P and Q each sum to one.
    The distributions are summation placeholders, so this is an expression, not a registered
    derivation; eq-accept-overlap names the sum.
    """
    per_token = sp.Min(_Q[_z], _Q[_z] * _P[_z] / _Q[_z]).rewrite(sp.Abs)
    total = 0
    for part in sp.Add.make_args(sp.expand(per_token)):
        coefficient, term = part.as_coeff_Mul()
        total += coefficient * sp.Sum(term, (_z, 1, _K))
    normalised = {sp.Sum(_P[_z], (_z, 1, _K)): 1, sp.Sum(_Q[_z], (_z, 1, _K)): 1}
    return sp.simplify(total.subs(normalised))


#: Total-variation distance of the placeholders: half the sum of |P(z) - Q(z)|.
TV_SUM = sp.Sum(sp.Abs(_P[_z] - _Q[_z]), (_z, 1, _K)) / 2


@derivation("eq-accept-overlap", "Leviathan et al. (2023), sec. 3.1 (derived)")
def acceptance_overlap() -> sp.Eq:
    """alpha = 1 - d_TV(P, Q) (eq-accept-overlap): the acceptance rate is the distributions' overlap.

    From acceptance_overlap_sum with the total-variation distance named.
    """
    named = acceptance_overlap_sum().subs(TV_SUM, tv_dist)
    if named.has(_P) or named.has(_Q):
        raise ArithmeticError(f"the sum did not reduce to the total-variation distance: {named}")
    return sp.Eq(accept, named)


@derivation("eq-accept-se", "Erdil (2025), sec. 4.1, step 4 (bound derived)")
def acceptance_standard_error() -> sp.Eq:
    """Largest standard error of the mean of n_alpha terms in [0, 1]: sqrt(alpha(1-alpha)/n).

    (eq-accept-se.) A term X in [0, 1] has X^2 <= X, so Var X = E[X^2] - alpha^2 <= alpha - alpha^2;
    equality holds when every term is 0 or 1.
    """
    variance_bound = accept - accept**2
    return sp.Eq(alpha_se, sp.sqrt(sp.factor(variance_bound) / n_alpha))


@derivation("eq-accept-samples", "Erdil (2025), sec. 4.1, step 4 (derived)")
def acceptance_samples() -> sp.Eq:
    """Samples that guarantee a half-width epsilon at quantile z: z^2·alpha(1-alpha)/epsilon^2.

    (eq-accept-samples.) Solves z·sigma = epsilon with the bound of eq-accept-se for n_alpha.
    """
    (n,) = sp.solve(sp.Eq(z_conf * acceptance_standard_error().rhs, alpha_eps), n_alpha)
    readable = z_conf**2 * accept * (1 - accept) / alpha_eps**2
    if sp.simplify(n - readable) != 0:
        raise ArithmeticError(f"unexpected sample size {n}")
    return sp.Eq(n_alpha, readable)
