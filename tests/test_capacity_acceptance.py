"""Erdil (2025) sec. 3.5 (memory capacity against speed) and sec. 4.1 (acceptance from log-probs).

Expected values are typed from the paper or are identities, never re-derived with the package.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.symbols import (
    accept,
    alpha_eps,
    eta_bw,
    hbm_bw,
    hbm_cap,
    n_alpha,
    surp_draft,
    surp_target,
    tv_dist,
    z_conf,
)
from inference_math.derivations import acceptance, capacity


def test_sweep_time_and_speed_are_reciprocal(assert_same):
    assert_same(capacity.memory_sweep_time(), hbm_cap / (eta_bw * hbm_bw), (hbm_cap, eta_bw, hbm_bw))
    assert_same(capacity.capacity_speed_limit(), eta_bw * hbm_bw / hbm_cap, (hbm_cap, eta_bw, hbm_bw))
    assert sp.simplify(capacity.memory_sweep_time().rhs * capacity.capacity_speed_limit().rhs) == 1


def test_paper_80_gb_at_3_3_tb_s():
    """Erdil (2025), sec. 3.5: 80 GB at 3.3 TB/s takes 'about 24 ms', so about 41 tokens/s."""
    values = {hbm_cap: 80e9, hbm_bw: 3.3e12, eta_bw: 1}
    sweep = float(capacity.memory_sweep_time().rhs.subs(values))
    assert sweep == pytest.approx(80 / 3300, rel=1e-12)  # 24.24 ms
    assert abs(sweep * 1e3 - 24) < 0.5
    assert abs(float(capacity.capacity_speed_limit().rhs.subs(values)) - 41) < 0.5


@given(st.floats(1e9, 1e12), st.floats(1e11, 1e14), st.floats(0.1, 1.0))
def test_speed_limit_falls_with_capacity_and_rises_with_bandwidth(cap, bw, eta):
    fn = sp.lambdify((hbm_cap, hbm_bw, eta_bw), capacity.capacity_speed_limit().rhs)
    assert fn(2 * cap, bw, eta) < fn(cap, bw, eta) < fn(cap, 2 * bw, eta)
    assert fn(cap, bw, eta) <= fn(cap, bw, 1.0)  # a sustained fraction lowers it ("even sooner")


def test_token_acceptance_is_min_one_ratio(assert_same):
    eq = acceptance.token_acceptance()
    fn = sp.lambdify((surp_target, surp_draft), eq.rhs)
    for p, q in [(0.2, 0.5), (0.5, 0.2), (0.3, 0.3), (1e-6, 0.9)]:
        assert fn(-math.log(p), -math.log(q)) == pytest.approx(min(1, p / q), rel=1e-12)


def test_overlap_form_on_a_small_vocabulary():
    """alpha = E_{z~Q} min(1, P/Q) = sum min(P, Q), checked on random 5-token pairs."""
    expr = acceptance.acceptance_overlap_sum()
    (total,) = [a for a in sp.preorder_traversal(expr) if isinstance(a, sp.Sum)]
    base_p, base_q = sorted({a.base for a in total.atoms(sp.Indexed)}, key=str)
    at_five = expr.subs(total.limits[0][2], 5).doit()
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.dirichlet(np.ones(5))
        q = rng.dirichlet(np.ones(5))
        want = float(np.sum(q * np.minimum(1, p / q)))
        assert want == pytest.approx(float(np.sum(np.minimum(p, q))), rel=1e-12)
        values = {base_p[i + 1]: p[i] for i in range(5)} | {base_q[i + 1]: q[i] for i in range(5)}
        assert float(at_five.subs(values)) == pytest.approx(want, rel=1e-12)


def test_identical_models_accept_everything():
    expr = acceptance.acceptance_overlap_sum()
    (total,) = [a for a in sp.preorder_traversal(expr) if isinstance(a, sp.Sum)]
    base_p, base_q = sorted({a.base for a in total.atoms(sp.Indexed)}, key=str)
    assert expr.subs(base_q, base_p).doit() == 1


def test_overlap_is_one_minus_total_variation(assert_same):
    assert_same(acceptance.acceptance_overlap(), 1 - tv_dist, (tv_dist,),
                overrides={tv_dist: lambda rng: rng.uniform(0, 1, 20)})
    assert sp.simplify(acceptance.acceptance_overlap_sum()
                       - (1 - acceptance.TV_SUM)) == 0


def test_standard_error_and_samples(assert_same):
    assert_same(acceptance.acceptance_standard_error(), sp.sqrt(accept * (1 - accept) / n_alpha),
                (accept, n_alpha), overrides={accept: lambda rng: rng.uniform(0.01, 0.99, 20)})
    assert_same(acceptance.acceptance_samples(), z_conf**2 * accept * (1 - accept) / alpha_eps**2,
                (z_conf, accept, alpha_eps))
    # by hand: alpha = 0.8, 95% (z = 1.96), +-0.05: 1.96^2 * 0.16 / 0.0025 = 245.86
    n = acceptance.acceptance_samples().rhs.subs({z_conf: 1.96, accept: 0.8, alpha_eps: 0.05})
    assert float(n) == pytest.approx(245.8624, rel=1e-9)


@given(st.floats(0.01, 0.99), st.integers(2, 10_000))
def test_bound_holds_for_bernoulli_terms_and_is_largest_at_half(alpha, n):
    """Terms that are 0 or 1 reach the bound exactly; it is largest at alpha = 1/2."""
    se = sp.lambdify((accept, n_alpha), acceptance.acceptance_standard_error().rhs)
    assert se(alpha, n) == pytest.approx(math.sqrt(alpha * (1 - alpha) / n), rel=1e-12)
    assert se(alpha, n) <= se(0.5, n) + 1e-15
    assert se(alpha, 4 * n) == pytest.approx(se(alpha, n) / 2, rel=1e-12)


def test_token_acceptance_symbolic(assert_same):
    assert_same(acceptance.token_acceptance(), sp.Min(1, sp.exp(surp_draft - surp_target)),
                (surp_target, surp_draft))


@given(st.floats(0, 20), st.floats(0, 20), st.floats(0.01, 5))
def test_token_acceptance_is_a_probability_falling_with_the_target_surprisal(s_p, s_q, step):
    fn = sp.lambdify((surp_target, surp_draft), acceptance.token_acceptance().rhs)
    a = fn(s_p, s_q)
    assert 0 < a <= 1
    assert fn(s_p + step, s_q) <= a  # a token the target finds less likely is kept less often
    assert fn(s_p, s_p) == 1  # equal log-probabilities: always kept
