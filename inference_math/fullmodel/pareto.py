"""Pareto frontiers of speed against cost over a grid of serving configurations.

Two extractions of the same frontier:

* :func:`pareto_front` is exact: sort points by latency and keep each point cheaper than every
  faster one (a running minimum of cost).
* :func:`pareto_front_thresholds` samples it the way the reference code of Erdil (2025) did: for
  each of ``n`` latency thresholds from the fastest latency to ``span`` times it, the cheapest
  point at or below the threshold. It is the exact frontier read at those thresholds.

Both are vectorized over the whole grid; infeasible points (latency ``inf``) never enter.
"""

from __future__ import annotations

import numpy as np


def pareto_front(latency: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Indices (into the flattened arrays) of the exact Pareto frontier, fastest first.

    A point is on the frontier when it is strictly cheaper than every faster point; of points
    with equal latency only the cheapest is kept, and a slower point costing the same as a
    faster one is dropped.
    """
    latency = np.ravel(latency)
    cost = np.ravel(cost)
    ok = np.flatnonzero(np.isfinite(latency) & np.isfinite(cost))
    if ok.size == 0:
        return ok
    # sorted by latency, the cheapest first among equal latencies (a sort on both keys is an
    # order of magnitude slower, so it is done only when two latencies are equal)
    order = np.argsort(latency[ok])
    fast = latency[ok][order]
    if np.any(fast[1:] == fast[:-1]):
        order = np.lexsort((cost[ok], latency[ok]))
    order = ok[order]
    running = np.minimum.accumulate(cost[order])
    improves = np.empty(order.size, dtype=bool)
    improves[0] = True
    improves[1:] = cost[order][1:] < running[:-1]
    return order[improves]


def pareto_front_thresholds(
    latency: np.ndarray, cost: np.ndarray, n: int = 1000, span: float | None = 100.0
) -> np.ndarray:
    """Indices of the cheapest point under each of ``n`` log-spaced latency thresholds.

    Thresholds run from the minimum finite latency to ``span`` times it (None: to the slowest
    frontier point); repeated points are kept once, fastest first. This is the extraction of
    the reference code (span 100).
    """
    front = pareto_front(latency, cost)
    if front.size == 0:
        return front
    lat = np.ravel(latency)[front]
    top = span * lat[0] if span is not None else lat[-1]
    thresholds = np.logspace(np.log10(lat[0]), np.log10(top), n)
    # the frontier is sorted by latency and its cost falls, so the cheapest point under a
    # threshold is the last frontier point at or below it
    position = np.searchsorted(lat, thresholds * (1 + 1e-12), side="right") - 1
    return front[np.unique(position)]
