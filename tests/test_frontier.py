"""Pareto frontiers of latency against cost (inference_math.fullmodel.pareto).

A configuration is dominated when another is at least as fast and at least as cheap and better
in one of the two (the Pareto order used for Figure 1 of Erdil 2025).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from inference_math.fullmodel.pareto import pareto_front, pareto_front_thresholds

INF = np.inf


def _front(latency, cost, **kwargs):
    return pareto_front(np.array(latency, float), np.array(cost, float), **kwargs).tolist()


# --- hand-made cases ----------------------------------------------------------------------------


def test_all_points_on_the_frontier_come_back_fastest_first():
    """Three mutually non-dominated points: all kept, sorted by latency."""
    assert _front([3, 1, 2], [1, 3, 2]) == [1, 2, 0]


def test_a_slower_and_dearer_point_is_dropped():
    """(2 s, $3) is dominated by (1 s, $2)."""
    assert _front([1, 2, 3], [2, 3, 1]) == [0, 2]


def test_infeasible_points_are_excluded_even_when_cheapest():
    """Latency inf (does not fit / over the demand cap) never enters the frontier."""
    assert _front([1, INF, 2], [5, 0.1, 1]) == [0, 2]


def test_non_finite_costs_are_excluded():
    """A nan or inf cost is not a configuration."""
    assert _front([1, 2, 3], [np.nan, INF, 1]) == [2]


def test_equal_latency_keeps_only_the_cheapest():
    """Tie in latency: the dearer point is dominated."""
    assert _front([1, 1, 2], [3, 2, 1]) == [1, 2]


def test_equal_cost_keeps_only_the_fastest():
    """Tie in cost: the slower point is dominated."""
    assert _front([1, 2], [1, 1]) == [0]


def test_exact_duplicates_are_kept_once():
    """Two identical configurations give one frontier point."""
    front = _front([1, 1, 2], [1, 1, 0.5])
    assert len(front) == 2
    assert front[0] in (0, 1) and front[1] == 2


def test_two_dimensional_grids_give_flat_indices():
    """Indices refer to the flattened grid (row-major), as for np.ravel."""
    latency = np.array([[1.0, 2.0], [3.0, 4.0]])
    cost = np.array([[4.0, 5.0], [2.0, 1.0]])
    assert pareto_front(latency, cost).tolist() == [0, 2, 3]


def test_an_all_infeasible_grid_has_an_empty_frontier():
    """No finite latency: the frontier is empty (and thresholds too)."""
    assert _front([INF, INF], [1, 2]) == []
    assert _front([], []) == []
    assert pareto_front_thresholds(np.array([INF]), np.array([1.0])).tolist() == []


def test_thresholds_stop_at_span_times_the_fastest_latency():
    """Reference code of Erdil (2025): thresholds run from t_fastest to span·t_fastest."""
    latency, cost = np.array([1.0, 2.0, 300.0]), np.array([3.0, 2.0, 1.0])
    assert pareto_front_thresholds(latency, cost, n=1000, span=100.0).tolist() == [0, 1]
    assert pareto_front_thresholds(latency, cost, n=1000, span=1000.0).tolist() == [0, 1, 2]


def test_thresholds_read_the_cheapest_point_under_each_threshold():
    """With two thresholds (1 s and 100 s) the 1.01 s point is never the cheapest under one."""
    latency, cost = np.array([1.0, 1.01, 50.0]), np.array([3.0, 2.0, 1.0])
    assert pareto_front_thresholds(latency, cost, n=2, span=100.0).tolist() == [0, 2]


def test_thresholds_include_a_point_exactly_at_a_threshold():
    """A point at exactly span·t_fastest counts as under the last threshold."""
    latency, cost = np.array([1.0, 100.0]), np.array([2.0, 1.0])
    assert pareto_front_thresholds(latency, cost, n=5, span=100.0).tolist() == [0, 1]


# --- properties (hypothesis) ------------------------------------------------------------------

values = st.one_of(
    st.floats(1e-3, 1e3),
    st.integers(1, 5).map(float),  # coarse values force ties
)
latencies = st.one_of(values, st.just(INF))
grids = st.lists(st.tuples(latencies, values), min_size=1, max_size=60)


def _arrays(grid):
    latency = np.array([point[0] for point in grid])
    cost = np.array([point[1] for point in grid])
    return latency, cost


@given(grids)
def test_no_frontier_point_is_dominated_by_any_grid_point(grid):
    """Pareto optimality of every returned point."""
    latency, cost = _arrays(grid)
    finite = np.isfinite(latency)
    for i in pareto_front(latency, cost):
        assert np.isfinite(latency[i])
        no_worse = finite & (latency <= latency[i]) & (cost <= cost[i])
        better = (latency < latency[i]) | (cost < cost[i])
        assert not (no_worse & better).any()


@given(grids)
def test_every_feasible_point_is_matched_or_beaten_by_the_frontier(grid):
    """Completeness: each finite point has a frontier point at least as fast and as cheap."""
    latency, cost = _arrays(grid)
    front = pareto_front(latency, cost)
    for j in np.flatnonzero(np.isfinite(latency)):
        assert ((latency[front] <= latency[j]) & (cost[front] <= cost[j])).any()


@given(grids)
def test_frontier_is_faster_first_and_strictly_cheaper_along(grid):
    """Along the frontier latency rises strictly and cost falls strictly."""
    latency, cost = _arrays(grid)
    front = pareto_front(latency, cost)
    assert np.all(np.diff(latency[front]) > 0)
    assert np.all(np.diff(cost[front]) < 0)


@given(grids, st.integers(1, 50), st.floats(1.0, 1e4))
def test_threshold_frontier_is_a_subset_of_the_exact_one(grid, n, span):
    """pareto_front_thresholds reads the exact frontier at thresholds: a subset, same order."""
    latency, cost = _arrays(grid)
    exact = pareto_front(latency, cost).tolist()
    sampled = pareto_front_thresholds(latency, cost, n=n, span=span).tolist()
    assert set(sampled) <= set(exact)
    assert sampled == [i for i in exact if i in set(sampled)]
    if exact:
        assert sampled[0] == exact[0]  # the fastest point is always read
