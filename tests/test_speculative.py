"""Speculative decoding: Erdil (2025), section 4.1, eq. 46, and the optimal number of drafts."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.symbols import accept, gamma, r_draft, t_draft, t_target
from inference_math.fullmodel import speculative

# Eq. 46 typed fresh from the paper: (1 − α)(t_P + γ·t_Q) / (1 − α^γ).
EQ46 = (1 - accept) * (t_target + gamma * t_draft) / (1 - accept**gamma)
ARGS = (t_target, t_draft, gamma, accept)
ACCEPTANCE = {accept: lambda rng: rng.uniform(0.01, 0.99, 20)}  # α in (0, 1)
DRAFTS = {gamma: lambda rng: rng.integers(1, 12, 20).astype(float)}


def eq46(tp, tq, g, a):
    """Eq. 46 by hand: time per step over the expected tokens per step."""
    tokens = sum(a**k for k in range(g))  # 1 + α + ... + α^(γ−1) = (1 − α^γ)/(1 − α)
    return (tp + g * tq) / tokens


def test_spec_latency(assert_same):
    """Erdil (2025) eq. 46, symbolic and at 20 random points with α in (0, 1)."""
    assert_same(speculative.spec_latency(), EQ46, ARGS, overrides={**ACCEPTANCE, **DRAFTS})


def test_spec_latency_is_time_per_step_over_truncated_geometric_mean():
    """Erdil (2025) sec. 4.1: V = (1 − α^γ)/(1 − α) is the sum of α^k, k < γ (γ = 1..8)."""
    rhs = speculative.spec_latency().rhs
    for g in range(1, 9):
        tokens = sum(accept**k for k in range(g))
        assert sp.simplify(rhs.subs(gamma, g) - (t_target + g * t_draft) / tokens) == 0


def test_one_draft_costs_both_passes_for_one_token():
    """Eq. 46 at γ = 1: one drafter and one target pass per token, t_P + t_Q, for every α."""
    assert sp.simplify(speculative.spec_latency().rhs.subs(gamma, 1) - (t_target + t_draft)) == 0


def test_no_acceptance_limit():
    """Eq. 46, α → 0: every draft after the first is wasted, one token per t_P + γ·t_Q."""
    limit = sp.limit(speculative.spec_latency().rhs, accept, 0, dir="+")
    assert sp.simplify(limit - (t_target + gamma * t_draft)) == 0


def test_full_acceptance_limit():
    """Eq. 46, α → 1: every draft is kept, γ tokens per t_P + γ·t_Q (at γ = 1..6)."""
    for g in range(1, 7):
        limit = sp.limit(speculative.spec_latency().rhs.subs(gamma, g), accept, 1, dir="-")
        assert sp.simplify(limit - (t_target + g * t_draft) / g) == 0


def test_free_drafter_limit():
    """Eq. 46, t_Q → 0 and γ → ∞: the target runs once per 1/(1 − α) tokens."""
    u = sp.Symbol("u", positive=True)  # α = e^(−u) covers 0 < α < 1
    free = speculative.spec_latency().rhs.subs({t_draft: 0, accept: sp.exp(-u)})
    assert sp.simplify(sp.limit(free, gamma, sp.oo) - (1 - sp.exp(-u)) * t_target) == 0


def test_relative_latency(assert_same):
    """t_spec/t_Q with t_P = r·t_Q: (1 − α)(r + γ)/(1 − α^γ)."""
    expected = (1 - accept) * (r_draft + gamma) / (1 - accept**gamma)
    assert_same(speculative.relative_latency(), expected, (r_draft, gamma, accept),
                overrides={**ACCEPTANCE, **DRAFTS})


@pytest.mark.parametrize(("tp", "tq", "g", "a"), [
    (0.020, 0.002, 4, 0.8), (0.047, 0.0024, 5, 0.8), (1.0, 0.1, 3, 0.5), (2.0, 1.0, 2, 0.9)])
def test_spec_latency_fn_spot_values(tp, tq, g, a):
    """The compiled eq. 46 against the sum of α^k by hand."""
    got = speculative.spec_latency_fn(np.array([tp]), np.array([tq]), g, a)
    assert float(got[0]) == pytest.approx(eq46(tp, tq, g, a), rel=1e-12)


@pytest.mark.parametrize(("tp", "tq", "g", "latency"), [
    # The reference code's α = 3 points of Table 5's speculative rows (final model, c2c4fa9):
    # target forward at q = γ, drafter forward and the recomputed per-token latency.
    (0.01817375213508516, 0.002611440701433996, 4, 0.009694957635779518),   # Llama 3 70B (S)
    (0.047084278452189716, 0.0023817647274591578, 5, 0.01754911413894738),  # Llama 3.1 405B (S)
])
def test_spec_latency_reproduces_reference_code_points(tp, tq, g, latency):
    """Erdil (2025) reference code: eq. 46 at α = 0.8 gives the code's per-token latency."""
    got = speculative.spec_latency_fn(np.array([tp]), np.array([tq]), g, 0.8)
    assert float(got[0]) == pytest.approx(latency, rel=1e-9)


# --- the optimal γ ------------------------------------------------------------------------

def gamma_star(ratio: float, acceptance: float) -> float:
    """eq-spec-optimal-gamma at one point (mpmath: NumPy has no Lambert W)."""
    expr = speculative.optimal_gamma().rhs.subs({r_draft: ratio, accept: acceptance})
    return float(sp.re(sp.N(expr, 30)))


def dt_dgamma(ratio: float, g: float, a: float) -> float:
    """d/dγ of (1 − α)(r + γ)/(1 − α^γ), by hand."""
    den = 1 - a**g
    return (1 - a) * (den + (ratio + g) * a**g * math.log(a)) / den**2


def test_optimal_gamma_closed_form():
    """eq-spec-optimal-gamma: γ* = W₋₁(−α^r/e)/ln α − r + 1/ln α, an Eq for γ (symbolic)."""
    eq = speculative.optimal_gamma()
    assert isinstance(eq, sp.Equality) and eq.lhs == gamma
    ln_a = sp.log(accept)
    fresh = sp.LambertW(-accept**r_draft * sp.exp(-1), -1) / ln_a - r_draft + 1 / ln_a
    assert sp.simplify(eq.rhs - fresh) == 0


def test_optimal_gamma_is_a_root_of_the_stationarity_condition():
    """eq-spec-optimal-gamma solves α^γ (1 − (r + γ) ln α) = 1 (d t_spec/dγ = 0)."""
    for a in (0.6, 0.7, 0.8, 0.9, 0.95):
        for ratio in (2.0, 5.0, 10.0, 30.0, 100.0):
            g = gamma_star(ratio, a)
            assert g > 0
            assert a**g * (1 - (ratio + g) * math.log(a)) == pytest.approx(1, rel=1e-10)
            assert abs(dt_dgamma(ratio, g, a)) < 1e-12
            # A minimum: eq. 46 falls before γ* and rises after it.
            assert dt_dgamma(ratio, 0.9 * g, a) < 0 < dt_dgamma(ratio, 1.1 * g, a)


def test_the_principal_branch_solves_the_condition_but_is_negative():
    """SymPy's own root (on W₀) also satisfies the condition, but γ < 0 there: the derivation's
    switch to W₋₁ picks the only positive stationary point."""
    principal = speculative.optimal_gamma().rhs.replace(
        sp.LambertW, lambda z, k: sp.LambertW(z, 0))
    for a in (0.6, 0.8, 0.95):
        for ratio in (2.0, 10.0, 100.0):
            # at 60 digits: at this root 1 − (r + γ) ln α is tiny and α^γ huge
            point = {r_draft: sp.Float(ratio, 60), accept: sp.Float(a, 60)}
            g = sp.re(sp.N(principal.subs(point), 60))
            condition = point[accept]**g * (1 - (point[r_draft] + g) * sp.log(point[accept]))
            assert float(sp.N(condition, 60)) == pytest.approx(1, rel=1e-9)
            assert g < 0 < gamma_star(ratio, a)


def test_packaged_stationarity_condition_vanishes_at_optimal_gamma():
    """speculative.stationarity_condition() is zero at eq-spec-optimal-gamma (r = 7, α = 0.8)."""
    g = gamma_star(7.0, 0.8)
    value = speculative.stationarity_condition().subs({r_draft: 7.0, accept: 0.8, gamma: g})
    assert abs(float(value)) < 1e-12
    assert float(value.subs(gamma, g)) == pytest.approx(dt_dgamma(7.0, g, 0.8), abs=1e-12)


@pytest.mark.parametrize(("a", "ratio"), [(0.8, 7.0), (0.7, 20.0), (0.9, 3.0)])
def test_optimal_gamma_against_mpmath_root(a, ratio):
    """eq-spec-optimal-gamma against mpmath's root of the stationarity condition."""
    root = mpmath.findroot(
        lambda x: a**x * (1 - (ratio + x) * mpmath.log(a)) - 1, 2 * math.log(ratio + 2) + 2)
    assert gamma_star(ratio, a) == pytest.approx(float(root), rel=1e-10)


def test_optimal_gamma_grows_like_log_ratio():
    """For t_P ≫ t_Q, γ* ≈ log(r)/(−ln α): r ×10 adds about ln 10/(−ln α) drafts."""
    a = 0.8
    step = gamma_star(1e6, a) - gamma_star(1e5, a)
    assert step == pytest.approx(math.log(10) / -math.log(a), rel=0.05)


def brute_force_gamma(ratio: float, a: float, gamma_max: int = 64) -> int:
    values = [eq46(ratio, 1.0, g, a) for g in range(1, gamma_max + 1)]
    return int(np.argmin(values)) + 1


@pytest.mark.parametrize("a", [0.5, 0.7, 0.8, 0.9])
@pytest.mark.parametrize("ratio", [0.3, 1.0, 2.5, 7.0, 15.0, 40.0, 200.0])
def test_best_integer_gamma_matches_brute_force(ratio, a):
    """best_integer_gamma is the argmin of eq. 46 over γ = 1..64 (t_P = r·t_Q fixed)."""
    assert speculative.best_integer_gamma(ratio, a) == brute_force_gamma(ratio, a)


@pytest.mark.parametrize("a", [0.7, 0.8, 0.9])
@pytest.mark.parametrize("ratio", [2.5, 7.0, 15.0, 40.0, 200.0])
def test_best_integer_gamma_is_next_to_the_continuous_optimum(ratio, a):
    """The integer optimum is ⌊γ*⌋ or ⌈γ*⌉ (eq. 46 is unimodal in γ)."""
    g = gamma_star(ratio, a)
    assert speculative.best_integer_gamma(ratio, a) in (math.floor(g), math.ceil(g))


# --- monotonicity (hypothesis) -------------------------------------------------------------

latencies = st.floats(1e-4, 1.0)
drafts = st.integers(1, 16)
acceptances = st.floats(0.01, 0.97)  # below 1 after a step of up to 0.02: eq. 46 is 0/0 at 1


@given(latencies, latencies, drafts, acceptances, st.floats(0.001, 0.02))
def test_latency_falls_as_acceptance_rises(tp, tq, g, a, da):
    """Eq. 46: a higher acceptance never slows decoding (strictly faster for γ ≥ 2)."""
    slow = eq46_fn(tp, tq, g, a)
    fast = eq46_fn(tp, tq, g, a + da)
    if g == 1:
        assert fast == pytest.approx(slow, rel=1e-12)
    else:
        assert fast < slow


@given(latencies, latencies, drafts, acceptances, st.floats(1.01, 10.0))
def test_latency_rises_with_either_forward_pass(tp, tq, g, a, k):
    """Eq. 46: a slower target or drafter pass slows every token."""
    base = eq46_fn(tp, tq, g, a)
    assert eq46_fn(tp * k, tq, g, a) > base
    assert eq46_fn(tp, tq * k, g, a) > base


@given(st.floats(0.5, 500.0), st.floats(0.3, 0.95), st.floats(0.005, 0.04))
def test_continuous_optimum_grows_with_acceptance_and_ratio(ratio, a, da):
    """eq-spec-optimal-gamma: more drafts when they are more often kept or relatively cheaper."""
    g = gamma_star(ratio, a)
    assert gamma_star(ratio, a + da) > g
    assert gamma_star(ratio * 1.5, a) > g


def eq46_fn(tp, tq, g, a):
    return float(speculative.spec_latency_fn(np.array([tp]), np.array([tq]), g, a)[0])
