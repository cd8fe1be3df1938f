"""The price of a token and a customer's preference along a frontier, derived.

eq-search-cost prices a million tokens at cost from the GPU-seconds a token takes; the search
(:mod:`.search`) evaluates it, and eq-search-preference, through the NumPy code generated from
them (:mod:`inference_math.fullmodel.formulas_numpy`), so that a command imports no SymPy.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import b, n_gpu, pref_exp, preference, price, speed, t_token, usd_mtok_full


@derivation("eq-search-cost", "Erdil (2025), sec. 3 and reference code")
def cost_per_million_tokens() -> sp.Eq:
    """Price of a million tokens at cost (eq-search-cost): N·t/b GPU-seconds per token at P $/h."""
    gpu_seconds = n_gpu * t_token / b
    return sp.Eq(usd_mtok_full, 10**6 * gpu_seconds * price / 3600)


@derivation("eq-search-preference", "Erdil (2025), eq. 45")
def user_preference() -> sp.Eq:
    """What a customer maximizes along a frontier (eq-search-preference, paper eq. 45)."""
    return sp.Eq(preference, speed**pref_exp / usd_mtok_full)
