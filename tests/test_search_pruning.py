"""The search's pruning helpers against brute force: the frontier latency bound of a point, the
float32 lower bounds and the minimum over branches (inference_math.fullmodel.search)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from inference_math.fullmodel import search as S

positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _dominated(latency, per_token, reached, reached_per_token):
    """Brute force: some reached point is strictly faster and strictly cheaper (cost = N/b · t)."""
    faster = reached < latency
    cheaper = reached_per_token * reached < per_token * latency
    return bool(np.any(faster & cheaper))


@given(st.lists(st.tuples(positive, positive), min_size=1, max_size=12),
       st.lists(st.tuples(positive, positive), min_size=1, max_size=6))
def test_the_frontier_latency_separates_dominated_latencies(reached, queries):
    """Above the bound a latency is dominated, below it (by a margin) it is not."""
    upper = np.array([r[0] for r in reached])
    per_token = np.array([r[1] for r in reached])
    query_per_token = np.array([q[1] for q in queries])
    # the bound is computed for the reached points and for the queries' own N/b together
    everything = np.concatenate([per_token, query_per_token])
    limit = S._frontier_latency(everything, np.concatenate([upper, np.full(len(queries), np.inf)]))
    for (latency, p), bound in zip(queries, limit[len(reached):], strict=True):
        for t in (latency, bound * (1 + 1e-6), bound * (1 - 1e-6)):
            if not np.isfinite(t):
                continue
            if t > bound:
                assert _dominated(t, p, upper, per_token)
            elif t < bound / (1 + 1e-8):
                assert not _dominated(t, p, upper, per_token)


def test_no_reached_point_dominates_nothing():
    limit = S._frontier_latency(np.array([1.0, 2.0]), np.array([np.inf, np.inf]))
    assert np.all(np.isinf(limit))


def test_the_frontier_latency_of_one_reached_point():
    """One point reaching 2 s at N/b = 3 (cost 6): a point at N/b = 1 is dominated above 6 s (its
    cost then exceeds 6), a point at N/b = 6 above 2 s (faster than 2 s it is not beaten)."""
    limit = S._frontier_latency(np.array([3.0, 1.0, 6.0]), np.array([2.0, np.inf, np.inf]))
    np.testing.assert_allclose(limit[1:], [6.0, 2.0], rtol=1e-8)


@given(st.lists(st.floats(min_value=1e-30, max_value=1e30), min_size=1, max_size=20))
def test_rounded_down_bounds_are_float32_and_never_above(values):
    bound = np.array(values)
    low = S._rounded_down(bound)
    assert low.dtype == np.float32
    assert np.all(low.astype(float) <= bound)
    np.testing.assert_allclose(low, bound, rtol=2.0**-21)


def test_rounded_down_keeps_infinities_and_caps_huge_bounds():
    low = S._rounded_down(np.array([np.inf, 1e300, 0.0]))
    assert low[0] == np.inf
    assert low[1] == np.finfo(np.float32).max
    assert low[2] == 0.0


def test_the_minimum_over_branches_is_numpys():
    values = np.random.default_rng(7).random((5, 4, 22)).astype(np.float32)
    values[0, 0, 3] = np.inf
    values[1, 2, 5] = np.nan
    np.testing.assert_array_equal(S._last_axis_min(values), np.min(values, axis=-1))
