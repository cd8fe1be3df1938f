"""What eq. 14 implies for model shape and hardware: Erdil (2025), sec. 2.2.3, 4.2 and 5.1."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import (
    d_model,
    hbm_bw,
    k_depth,
    k_width,
    n_gpu_star,
    n_layers,
    n_param,
    n_reduce,
    p,
    t_hop,
)
from inference_math.derivations import scaling

THIRD, TWO_THIRDS = sp.Rational(1, 3), sp.Rational(2, 3)
NET = n_layers * n_reduce * t_hop
# Eq. 18 typed from the paper: eq. 14 for N* >> 1.
EQ18 = 3 * NET**TWO_THIRDS * (p * n_param / hbm_bw) ** THIRD
EQ14_INTERIOR = EQ18 - 2 * NET
EQ14_ARGS = (p, n_param, hbm_bw, n_layers, n_reduce, t_hop)


def _log_slope(expr, var):
    """d log(expr) / d log(var), computed here independently of the package."""
    return sp.simplify(sp.diff(sp.log(expr), var) * var)


def test_large_model_latency(assert_same):
    """Erdil (2025) eq. 18: t_min ≈ 3·(L·n_reduce·t_hop)^(2/3)·(p·N/B)^(1/3)."""
    assert_same(scaling.minimum_latency_large_model(), EQ18, EQ14_ARGS)


def test_eq_18_is_the_large_model_limit_of_eq_14():
    """Erdil (2025) eqs. 14 and 18: their ratio tends to 1 as N → ∞."""
    assert sp.limit(EQ14_INTERIOR / scaling.minimum_latency_large_model().rhs, n_param, sp.oo) == 1


def test_square_root_law(assert_same):
    """Erdil (2025) eq. 19: with L = k_L·N^(1/4), t_min = 3(k_L N^(1/4) n t)^(2/3)(pN/B)^(1/3)."""
    expected = EQ18.subs(n_layers, k_depth * n_param ** sp.Rational(1, 4))
    assert_same(scaling.square_root_law(), expected,
                (p, n_param, hbm_bw, k_depth, n_reduce, t_hop))


def test_square_root_law_exponent_is_one_half():
    """Erdil (2025) eq. 19: minimum latency ∝ N^(1/2) when depth ∝ N^(1/4)."""
    assert _log_slope(scaling.square_root_law().rhs, n_param) == sp.Rational(1, 2)
    assert scaling.square_root_exponent() == sp.Rational(1, 2)


def test_square_root_law_predictions_printed_in_the_paper(reference):
    """Erdil (2025) sec. 2.2.3: 400 tok/s for Llama 3 8B predicts 135 (70B) and 56 (405B)."""
    law = reference["square_root_law"]
    latency = scaling.square_root_law().rhs
    base_n = law["nominal_params"]["llama-3-8b"]
    for model, printed in law["predicted_tokens_per_s"].items():
        n = law["nominal_params"][model]
        slowdown = sp.simplify(latency.subs(n_param, n) / latency.subs(n_param, base_n))
        speed = law["baseline_tokens_per_s"] / float(slowdown)
        assert abs(speed - printed) <= 0.5, (model, speed)  # the paper prints whole tok/s


def test_latency_in_depth_and_width(assert_same):
    """Erdil (2025) sec. 2.2.3: with N = k_d·d_model²·L,
    t_min = 3·(L·n·t)^(2/3)·(p·k_d·d²·L/B)^(1/3)."""
    expected = EQ18.subs(n_param, k_width * d_model**2 * n_layers)
    assert_same(scaling.latency_in_depth_and_width(), expected,
                (p, k_width, d_model, n_layers, hbm_bw, n_reduce, t_hop))


def test_latency_is_linear_in_depth_and_two_thirds_power_in_width():
    """Erdil (2025) sec. 2.2.3: latency ∝ L·d_model^(2/3)."""
    latency = scaling.latency_in_depth_and_width().rhs
    assert _log_slope(latency, n_layers) == 1
    assert _log_slope(latency, d_model) == TWO_THIRDS
    assert scaling.depth_width_exponents() == {"n_layers": 1, "d_model": TWO_THIRDS}


def test_bandwidth_elasticity(assert_same):
    """Erdil (2025) sec. 5.1: d log t_min/d log B = −1/(3 − 2/sqrt(N*)) through eq. 13."""
    assert_same(scaling.bandwidth_elasticity(), -1 / (3 - 2 / sp.sqrt(n_gpu_star)),
                (n_gpu_star,), overrides={n_gpu_star: lambda rng: 1 + 10 ** rng.uniform(-3, 3, 20)})


def test_bandwidth_elasticity_limits():
    """Erdil (2025) sec. 5.1 takeaway 3: −1/3 for N* → ∞; −1 at N* = 1 (memory bound)."""
    elasticity = scaling.bandwidth_elasticity().rhs
    assert sp.limit(elasticity, n_gpu_star, sp.oo) == -THIRD
    assert scaling.bandwidth_elasticity_limit() == -THIRD
    assert sp.simplify(elasticity.subs(n_gpu_star, 1)) == -1


def test_bandwidth_elasticity_matches_a_numeric_log_derivative_of_eq_14():
    """Erdil (2025) eq. 14: central finite difference of log t_min in log B at random points."""
    elasticity = compile_fn(scaling.bandwidth_elasticity(), (n_gpu_star,))
    t_min = sp.lambdify(EQ14_ARGS, EQ14_INTERIOR, "numpy")
    rng = np.random.default_rng(0)
    pp, n, bw = 2.0, 10 ** rng.uniform(9, 13, 20), 10 ** rng.uniform(11, 13, 20)
    layers, n_red, hop = 80.0, 4.0, 10 ** rng.uniform(-7, -5, 20)
    n_star = (pp * n / (layers * n_red * hop * bw)) ** (2 / 3)
    assert (n_star > 1).all()
    h = 1e-5
    slope = (np.log(t_min(pp, n, bw * np.exp(h), layers, n_red, hop))
             - np.log(t_min(pp, n, bw * np.exp(-h), layers, n_red, hop))) / (2 * h)
    np.testing.assert_allclose(elasticity(n_star), slope, rtol=1e-6)


@pytest.mark.parametrize(
    ("var", "exponent"),
    [(p, THIRD), (n_param, THIRD), (hbm_bw, -THIRD), (n_layers, TWO_THIRDS),
     (n_reduce, TWO_THIRDS), (t_hop, TWO_THIRDS)],
)
def test_large_model_change_is_factor_to_the_eq_18_exponent(var, exponent):
    """Erdil (2025) eq. 18: scaling one input by f scales t_min by f^exponent."""
    for factor in (2, sp.Rational(1, 2), 10):
        assert sp.simplify(scaling.large_model_change(var, factor) - factor**exponent) == 0


def test_doubling_bandwidth_cuts_latency_by_about_20_percent(reference):
    """Erdil (2025) sec. 5.1 takeaway 3: doubling B gives 2^(−1/3) − 1 ≈ −20%."""
    change = scaling.doubling_bandwidth_latency_change()
    assert sp.simplify(change - (2 ** -THIRD - 1)) == 0
    printed = reference["takeaways"]["doubling_bandwidth_latency_reduction"]
    assert abs(-float(change) - printed) < 0.01  # printed as "20%"


def test_halving_precision_gives_about_26_percent_speedup(reference):
    """Erdil (2025) sec. 4.2: halving p speeds up by 2^(1/3) − 1 ≈ 26%."""
    speedup = scaling.halving_precision_speedup()
    assert sp.simplify(speedup - (2**THIRD - 1)) == 0
    printed = reference["takeaways"]["halving_precision_speedup"]
    assert abs(float(speedup) - printed) < 0.005  # printed as "26%"
