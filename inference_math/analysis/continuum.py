"""The search in the continuum: the cheapest instance of one layout at a speed, N and b real.

The search (:mod:`.search`) evaluates a 400 × 400 log grid of instance sizes N and batches b;
its frontier moves in steps of the grid (3% in N) as an input moves, so a finite difference of
it has no limit as the step shrinks. Here the discrete choices of a frontier point (its layout:
1-D or 2-D tensor parallelism, the index of its pipeline degree and of its attention scale-down,
each a power of b or of N_TP as in the search) are held, and N and b are real: for each ln N
the largest feasible ln b at the speed is found by bisection (the step time, the memory need and
N_PP grow with b), and the cost per token, eq-search-cost, is minimized over ln N on grids
refined about their minimum. This is the optimum the grid search converges to as its grid is
refined, and the one whose derivatives :mod:`.sensitivity` takes.

A step's time is eq-phys-forward-latency of its parts (eq-full-forward-latency where ω = 0), the
largest of three smooth *pieces*: kernel launches and serial network time plus memory, plus
arithmetic, or plus the network time ω hides. Which pieces are largest at the optimum (the
binding terms) and whether the memory need fills the HBM decide its derivatives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..core import names as N
from ..core.validation import InputError
from ..fullmodel import branch as fm
from ..fullmodel.search import PP_VALUES, SCALEDOWN_VALUES, grid

#: The pieces of a step whose maximum is its time, in eq-phys-forward-latency's order.
PIECES = ("memory", "arithmetic", "network")
_NAMES = ("kernel", "network", "network_latency", "memory", "arithmetic", "need")
COARSE = 48  # grid of ln b on which the feasible batches are first found
BISECTIONS = 50  # then ln b to 2^-50 of a grid step: below a double's resolution of the step
LEVELS = 4  # refinements of ln N, each 100 times finer than the last
LEVEL_POINTS = 201
HALF_WIDTH = 1.0  # ln N searched within e^±1 of the grid's point
TIE = 1e-12  # costs (ln $ per token) within this of the least are equal


@dataclass(frozen=True)
class Layout:
    """The discrete choices of a frontier point: N_PP = min(b, L)^(k/9) (k = None: N_PP = 1)
    and σ = N_TP^(j/5), as the search parameterizes them."""

    two_d: bool
    pp_step: int | None
    sigma_step: int


def layout_of(setting, point) -> Layout:
    """The layout of a frontier point, read back from its N_PP and σ."""
    top = min(point.batch, setting.model.layers)
    pp_step = None  # N_PP = 1: the search's first degree, and its k = 0 (the same layout)
    if point.n_pp != 1.0 and top > 1.0:
        pp_step = int(round((PP_VALUES - 1) * math.log(point.n_pp) / math.log(top))) or None
    sigma_step = (0 if point.n_tp <= 1.0 else
                  int(round((SCALEDOWN_VALUES - 1) * math.log(point.attn_scaledown)
                            / math.log(point.n_tp))))
    return Layout(point.two_d, pp_step, sigma_step)


def _scaled_constants(branch, factors: dict):
    """A branch whose constants (CONSTANTS names) are multiplied by ``factors``."""
    if not factors:
        return branch
    if isinstance(branch, fm.GroupedBranch):
        def each(pieces):
            return None if pieces is None else [_scaled_constants(p, factors) for p in pieces]
        cap = branch.hbm_cap * factors.get(N.hbm_cap, 1.0)
        return replace(branch, pieces=each(branch.pieces), two_d_pieces=each(branch.two_d_pieces),
                       hbm_cap=cap)
    constants = list(branch.constants)
    for sym, factor in factors.items():
        constants[fm.CONSTANTS.index(sym)] *= factor
    return replace(branch, constants=tuple(constants))


@dataclass
class Problem:
    """One layout of one setting at given inputs: the parts of a step as functions of (N, b).

    ``branch`` is :func:`~.full_model.compile_branch` of the setting (at q = 1); ``latency_scale``
    multiplies the network's latency part (the collectives' hop latencies have no constant of
    their own in the generated terms)."""

    setting: object
    layout: Layout
    branch: object
    latency_scale: float = 1.0

    @classmethod
    def of(cls, setting, layout: Layout, gpu=None, context: float | None = None,
           kv_scale: float | None = None, constants: dict | None = None,
           latency_scale: float = 1.0) -> Problem:
        if setting.drafter is not None:
            raise InputError("the continuum search is for frontiers without speculative decoding")
        branch = fm.compile_branch(setting.model, gpu or setting.gpu, layout.two_d, 1.0,
                                   setting.context if context is None else context, setting.w,
                                   curve=setting.curve_name,
                                   kv_scale=setting.kv_scale if kv_scale is None else kv_scale)
        return cls(setting, layout, _scaled_constants(branch, constants or {}), latency_scale)

    @property
    def omega(self) -> float:
        if isinstance(self.branch, fm.GroupedBranch):
            return float(self.branch.omega)
        return float(self.branch.constants[fm.CONSTANTS.index(N.omega_net)])

    @property
    def hbm_cap(self) -> float:
        if isinstance(self.branch, fm.GroupedBranch):
            return float(self.branch.hbm_cap)
        return float(self.branch.constants[fm.CONSTANTS.index(N.hbm_cap)])

    def degrees(self, n, batch):
        """N_PP and σ of the layout at (N, b), as the search sets them."""
        if self.layout.pp_step is None:
            pp = np.ones_like(batch)
        else:
            top = np.minimum(batch, self.setting.model.layers)
            pp = top ** (self.layout.pp_step / (PP_VALUES - 1))
        tp = n / pp
        sigma = np.maximum(tp, 1.0) ** (self.layout.sigma_step / (SCALEDOWN_VALUES - 1))
        return pp, sigma

    def parts(self, log_n, log_b) -> dict:
        """kernel, network (its latency part scaled), memory, arithmetic and need at (ln N, ln b),
        with N_PP."""
        n, batch = np.exp(log_n), np.exp(log_b)
        pp, sigma = self.degrees(n, batch)
        out = {name: np.broadcast_to(self.branch[name](n, batch, pp, sigma), np.shape(n * batch))
               for name in _NAMES}
        out["network"] = out["network"] + (self.latency_scale - 1.0) * out["network_latency"]
        out["pp"] = pp
        return out

    def pieces(self, parts: dict) -> np.ndarray:
        """The three pieces of a step (:data:`PIECES`), stacked: their maximum is its time."""
        omega = self.omega
        serial = parts["kernel"] + (1.0 - omega) * parts["network"]
        return np.stack([serial + parts["memory"], serial + parts["arithmetic"],
                         parts["kernel"] + parts["network"]])

    def step_time(self, log_n, log_b) -> np.ndarray:
        return self.pieces(self.parts(log_n, log_b)).max(axis=0)

    def fits(self, parts: dict, log_n) -> np.ndarray:
        n = np.exp(log_n)
        return (parts["need"] <= n * self.hbm_cap) & (parts["pp"] <= n)


@dataclass(frozen=True)
class Optimum:
    """The cheapest instance of a layout at a speed: ln N, ln b, the step time, the cost's log
    (ln of N·t/b, GPU-seconds per token) and whether the speed binds."""

    log_n: float
    log_b: float
    step_s: float
    log_cost: float

    @property
    def gpus(self) -> float:
        return math.exp(self.log_n)

    @property
    def batch(self) -> float:
        return math.exp(self.log_b)


def _bounds(setting) -> tuple[float, float, float]:
    """ln N's upper bound and ln b's range: those of the search's grid (:func:`.search.grid`;
    N ≥ 1 follows from N_PP ≤ N)."""
    n, batch = grid(setting.model, setting.gpu, setting.w)
    return math.log(n[-1]), math.log(batch[0]), math.log(batch[-1])


def largest_batch(problem: Problem, log_n: np.ndarray, speed: float) -> np.ndarray:
    """For each ln N, the largest ln b at which the layout fits and serves ``speed`` (−inf where
    none does).

    The step time grows with b, so the speed alone allows every ln b up to one bound, found by
    bisection. Where the layout fits at that bound, it is the answer, however narrow the range of
    batches that fit (near the smallest N that serves the speed the memory need leaves only a
    sliver below it). The memory need need not fall as b grows, though: N_PP grows with b and
    spreads the weights over more stages, so a small batch can fail to fit where a larger one
    fits, and the reverse. Where the layout does not fit at the speed's bound, the feasible
    batches below it are found on a coarse grid of ln b, and the largest is refined by bisection
    between the last feasible grid point and the next.
    """
    _, low, high = _bounds(problem.setting)
    budget = 1.0 / speed

    def fast(log_b):
        return problem.pieces(problem.parts(log_n, log_b)).max(axis=0) <= budget

    def ok(log_b):
        parts = problem.parts(log_n, log_b)
        return problem.fits(parts, log_n) & (problem.pieces(parts).max(axis=0) <= budget)

    def refine(lo, hi, test):
        for _ in range(BISECTIONS):
            mid = 0.5 * (lo + hi)
            fine = test(mid)
            lo, hi = np.where(fine, mid, lo), np.where(fine, hi, mid)
        return lo

    ends = [np.full_like(log_n, x) for x in (low, high)]
    fast_low, fast_high = fast(ends[0]), fast(ends[1])
    by_speed = np.where(fast_high, high,
                        np.where(fast_low, refine(*ends, fast), -np.inf))
    at_bound = np.isfinite(by_speed)
    at_bound[at_bound] = problem.fits(
        problem.parts(log_n[at_bound], by_speed[at_bound]), log_n[at_bound])

    coarse = np.linspace(low, high, COARSE)
    good = np.stack([ok(np.full_like(log_n, x)) for x in coarse])  # (COARSE, len(log_n))
    any_good = good.any(axis=0)
    last = COARSE - 1 - np.argmax(good[::-1], axis=0)  # the largest feasible grid index
    lo = coarse[last]
    hi = coarse[np.minimum(last + 1, COARSE - 1)]
    top = last == COARSE - 1
    scanned = np.where(any_good, np.where(top, high, refine(lo, hi, ok)), -np.inf)
    return np.where(at_bound, by_speed, scanned)


def cheapest(problem: Problem, speed: float, near: float) -> Optimum | None:
    """The cheapest instance of the layout serving ``speed`` tokens/s per user, N within e^±1
    of ``near`` GPUs (widened while the optimum lies on the edge); None if none serves it."""
    top_n = _bounds(problem.setting)[0]
    centre, half = math.log(near), HALF_WIDTH
    for _ in range(8):
        lo, hi = max(centre - half, 0.0), min(centre + half, top_n)
        best = None
        for _level in range(LEVELS):
            log_n = np.linspace(lo, hi, LEVEL_POINTS)
            log_b = largest_batch(problem, log_n, speed)
            live = np.isfinite(log_b)
            if not live.any():
                return None
            cost = np.full_like(log_n, np.inf)
            cost[live] = (log_n[live] - log_b[live]
                          + np.log(problem.step_time(log_n[live], log_b[live])))
            # the fewest GPUs among the cheapest: past a sliver the cost can be flat in ln N to
            # rounding, and the cheapest point then lies at the flat part's left end
            k = int(np.argmax(cost <= cost.min() + TIE))
            best = (log_n[k], log_b[k], cost[k], k)
            step = (hi - lo) / (LEVEL_POINTS - 1)
            if _level == 0:
                edge = k in (0, LEVEL_POINTS - 1)
            lo, hi = max(log_n[k] - step, lo), min(log_n[k] + step, hi)
        at_bound = best[0] <= 0.0 or best[0] >= top_n
        if not edge or at_bound:
            break
        centre, half = best[0], 2.0 * half
    log_n, log_b, log_cost, _ = best
    step = float(problem.step_time(np.array([log_n]), np.array([log_b]))[0])
    return Optimum(float(log_n), float(log_b), step, float(log_cost))


def candidate_layouts(front, speed: float, spread: float = 0.1) -> list[tuple[Layout, float]]:
    """The layouts (with their GPUs) of the frontier's points within ``spread`` in ln speed of
    ``speed``, and of the point that serves it."""
    setting = front.setting
    serving = front.cheapest_at(speed)
    if serving is None:
        raise InputError(f"{speed:g} tok/s per user is beyond the top speed, "
                         f"{front.max_speed().tokens_per_s:.1f}")
    near = [pt for pt in front.points
            if abs(math.log(pt.tokens_per_s / speed)) <= spread] + [serving]
    out = {}
    for pt in near:
        out.setdefault(layout_of(setting, pt), pt.gpus)
    return list(out.items())


def ranked(setting, layouts, speed: float, **inputs) -> list[tuple[Optimum, Problem]]:
    """The cheapest instance of each layout that serves ``speed``, cheapest first (``inputs`` as
    :meth:`Problem.of`)."""
    found = []
    for layout, gpus in layouts:
        problem = Problem.of(setting, layout, **inputs)
        best = cheapest(problem, speed, gpus)
        if best is not None:
            found.append((best, problem))
    if not found:
        raise InputError(f"no layout of the frontier serves {speed:g} tok/s per user")
    return sorted(found, key=lambda pair: pair[0].log_cost)


def cheapest_of(setting, layouts, speed: float, **inputs) -> tuple[Optimum, Problem]:
    """The cheapest of the layouts at ``speed`` (``inputs`` as :meth:`Problem.of`)."""
    return ranked(setting, layouts, speed, **inputs)[0]
