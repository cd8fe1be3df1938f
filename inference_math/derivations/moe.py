"""Mixture-of-experts: parameters multiplied and parameters read (Erdil 2025, section 3.2).

A token multiplies only 1/s of the feed-forward weights, but a batch of b tokens routed
independently and uniformly touches many experts: an expert is idle for the whole batch with
probability (1 - 1/s)^b, so the expected weights read grow from the active parameters at b = 1
to all parameters as b -> oo.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import b, b_half, n_active_param, n_attn, n_ff, n_param, n_read, n_unembed, s


@derivation("eq-moe-total-params", "Erdil (2025), eq. 20")
def total_params() -> sp.Eq:
    """N = N_attn + N_ff + N_unembed (eq-moe-total-params, paper eq. 20)."""
    return sp.Eq(n_param, n_attn + n_ff + n_unembed)


@derivation("eq-moe-active-params", "Erdil (2025), eq. 21")
def active_params() -> sp.Eq:
    """Parameters one token multiplies by: N_attn + N_ff/s + N_unembed (eq-moe-active-params)."""
    return sp.Eq(n_active_param, n_attn + n_ff / s + n_unembed)


def expert_fraction_read() -> sp.Expr:
    """Expected fraction of experts that at least one of b tokens is routed to: 1 - (1 - 1/s)^b."""
    return 1 - (1 - 1 / s) ** b


@derivation("eq-moe-params-read", "Erdil (2025), eq. 22")
def params_read() -> sp.Eq:
    """Expected parameters read per forward pass (eq-moe-params-read, paper eq. 22)."""
    return sp.Eq(n_read, n_attn + expert_fraction_read() * n_ff + n_unembed)


@derivation("eq-moe-half-experts-batch", "this book, from Erdil (2025) eq. 22")
def half_experts_batch() -> sp.Eq:
    """Batch at which half of the experts are read: b = -log 2 / log(1 - 1/s) ≈ s·ln 2.

    (eq-moe-half-experts-batch.)
    """
    (solution,) = sp.solve(sp.Eq(expert_fraction_read(), sp.Rational(1, 2)), b)
    return sp.Eq(b_half, sp.simplify(solution))


def params_read_limits() -> dict[str, sp.Expr]:
    """The three limits of eq. 22: b -> oo, s -> 1 (dense) and b = 1 (one token)."""
    read = params_read().rhs
    return {
        "batch_to_infinity": sp.limit(read.subs(s, s + 1), b, sp.oo),  # s > 1 strictly
        "dense": sp.limit(read, s, 1, dir="+"),
        "single_token": sp.simplify(read.subs(b, 1)),
    }
