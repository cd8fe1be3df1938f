"""Fitting the estimate's parameters (six fitted, three of them per software stack; one fixed)
on the public measurements, and its band.

Method (the book's chapter "How close real systems come" reports every number):

1. The public points (:func:`~.measured_points.public_points`) that the full model represents
   (:func:`~.measured_points.resolve`) are split by *setup*, never row by row: a setup is a
   source, model, GPU and engine, and all its rows (a concurrency sweep, say) fall on the same
   side. A setup is held out when the first byte of the SHA-256 of its name is below
   :data:`HELD_OUT_SHARE` of 256: a split no one chose by looking at the rows.
2. On the training split, robust least squares on r = ln(measured / estimate) of each point's
   primary quantity (:attr:`~.measured_points.Point.primary`): the soft-L1 loss
   2·s²·(√(1 + (r/s)²) − 1) with s = :data:`LOSS_SCALE`, quadratic for small misses and linear
   for large ones, so the few setups that miss by a factor of three or more (a short benchmark
   of an untuned engine, a tuned submission) do not pull the rest; each row weighted by
   1/√(rows of its source), so a source that publishes hundreds of rows does not outvote one
   that publishes a few (weighting by setup instead gave a larger out-of-fold error, 1.50
   against 1.38, on the training split). Every parameter is bounded to a physical range
   (:data:`BOUNDS`); the fit's coordinates are the logarithms of t_0, β_½ and m_½ and the
   fractions η_mem, η_flop and ω themselves, each inside its bounds, so no trial step can leave
   the range or overflow (unbounded coordinates once let the optimizer, on some CPUs, step to
   ``exp`` of a huge number).
   The parameters the vendor's software sets, t_0, η_mem and η_flop
   (:data:`~.step_time.PER_STACK`), have one value per software stack
   (:data:`~.step_time.FITTED_STACKS`: CUDA and ROCm); the other three are shared. Nine numbers
   in all; the chapter compares them with one set for both stacks
   (``fit(per_stack=False)``).
   ``scipy.optimize.least_squares`` (trust-region reflective) from each of :data:`STARTS`,
   keeping the least cost.
3. The band is the 10th and 90th percentiles of r out of fold on the training split: the
   training setups cut into :data:`FOLDS` folds (the SHA-256's second byte), each fold's points
   estimated by a fit on the other folds. The held-out split is used once, to report the error
   and the share of its points inside the band, neither of which it helped to set.
4. By engine (:func:`engine_record`, the section "The fit by engine" below): each engine
   family with enough training setups gets its own t_0, η_mem and η_flop on its stack, pulled
   toward the stack's values by a penalty whose weight cross-validation chooses; the pooled
   fit above is its prior and is left as it is.
5. By release (:func:`release_record`), measured and not adopted: an offset in ln per release
   line of an engine, its setups' mean misses shrunk by n0 pseudo-setups chosen out of fold,
   and the held-out miss left were each held-out setup's own mean miss known.

``python -m inference_math.reality.estimate_fit`` refits and writes
``data/estimate_parameters.json``: both fits (per stack and one set for all), the band and the
errors, and the fit by engine family (:func:`engine_record`). The book reads that file and refits
nothing; the tests refit from every start and compare, and compare a small fit run with one
thread and with two.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

import numpy as np

from ..serving import step_time as st
from ..serving.engines import UNKNOWN, family
from . import measured_points as mp

HELD_OUT_SHARE = 0.3
FOLDS = 5
LOSS_SCALE = 0.2  # ln units: misses beyond a factor of about 1.2 count linearly
BAND_QUANTILES = (0.10, 0.90)
#: A point the estimate cannot serve (its batch does not fit) counts as this miss in ln.
INFEASIBLE_MISS = 3.0
START = (2e-3, 0.8, 2e6, 0.6, 64.0, 0.5)
#: Further starting points (least squares on a max over a grid has local minima): the fit
#: keeps the one of least training cost.
STARTS = (START, (5e-3, 0.6, 5e5, 0.4, 16.0, 0.2), (1e-3, 0.9, 1e7, 0.8, 256.0, 0.8),
          (1e-2, 0.5, 1e6, 0.3, 128.0, 0.5))
FRACTIONS = (1, 3, 5)  # η_mem, η_flop, ω: the values themselves; the others: logarithms
#: The physical range of each parameter (in the order of step_time.PARAMETER_NAMES): a fixed
#: time per step from 10 µs (one kernel launch) to 100 ms; fractions of a peak from 1% to all of
#: it (ω, the share of the shorter time hidden under the longer, from none to all); a kernel's
#: start-up worth 1 byte to 1 GB, and a GEMM's half-efficiency size of 1 to 16,384 tokens.
BOUNDS = ((1e-5, 0.1), (0.01, 1.0), (1.0, 1e9), (0.01, 1.0), (1.0, 16384.0), (0.0, 1.0))
#: Fitted parameters per set (the first of :data:`~.step_time.PARAMETER_NAMES`).
K = len(BOUNDS)
#: Routing's overdispersion ρ_r is not fitted: the measurements do not carry it (the training
#: cost, :func:`training_cost`, changes by a few percent between ρ_r = 1 and 30, and a fit drifts
#: to the bound; the chapter computes the change). The estimate keeps
#: uniform routing, the least unevenness an engine cannot avoid.
RHO_ROUTE = 1.0


@dataclass(frozen=True)
class Sample:
    """A point the estimate is fitted or tested on."""

    probe: mp.Probe
    quantity: str
    measured: float
    setup: str
    held_out: bool


def setup_of(point: mp.Point) -> str:
    return " | ".join(str(point[name]) for name in ("source_id", "model", "gpu", "engine"))


def is_held_out(setup: str) -> bool:
    return hashlib.sha256(setup.encode()).digest()[0] < HELD_OUT_SHARE * 256


@cache
def samples() -> tuple[Sample, ...]:
    out = []
    for point in mp.public_points():
        resolved = mp.resolve(point)
        if resolved.reason:
            continue
        probe = mp.probe(resolved)
        if not probe.estimable:
            continue
        quantity = point.primary
        setup = setup_of(point)
        out.append(Sample(probe, quantity, point.measured(quantity), setup, is_held_out(setup)))
    return tuple(out)


def _start(values, per_stack: bool = True) -> np.ndarray:
    """Coordinates of a start: the same values for every stack."""
    shared = to_coordinates(values)
    if not per_stack:
        return shared
    extra = [shared[st.PARAMETER_NAMES.index(name)] for _ in st.FITTED_STACKS[1:]
             for name in st.PER_STACK]
    return np.concatenate([shared, extra])


def to_efficiencies(z) -> dict[str, st.Efficiency]:
    """The efficiencies of each stack from the fit's coordinates: :data:`K` shared, then
    :data:`~.step_time.PER_STACK` of each further stack."""
    z = np.asarray(z, dtype=float)
    out = {st.FITTED_STACKS[0]: st.Efficiency.from_vector(to_vector(z[:K]) + (RHO_ROUTE,))}
    if len(z) == K:  # one set for every stack
        return dict.fromkeys(st.FITTED_STACKS, out[st.FITTED_STACKS[0]])
    k = K
    for stack in st.FITTED_STACKS[1:]:
        own = z[:K].copy()
        for name in st.PER_STACK:
            own[st.PARAMETER_NAMES.index(name)] = z[k]
            k += 1
        out[stack] = st.Efficiency.from_vector(to_vector(own) + (RHO_ROUTE,))
    return out


def coordinates_of(effs: dict[str, st.Efficiency]) -> np.ndarray:
    """The inverse of :func:`to_efficiencies`."""
    first = to_coordinates(effs[st.FITTED_STACKS[0]].vector[:K])
    extra = [to_coordinates(effs[stack].vector[:K])[st.PARAMETER_NAMES.index(name)]
             for stack in st.FITTED_STACKS[1:] for name in st.PER_STACK]
    return np.concatenate([first, extra])


def to_vector(z) -> tuple[float, ...]:
    """Parameter values from the fit's coordinates (clipped to :data:`BOUNDS`, where the
    optimizer keeps them anyway)."""
    low, high = to_coordinates([b[0] for b in BOUNDS]), to_coordinates([b[1] for b in BOUNDS])
    z = np.clip(np.asarray(z, dtype=float), low, high)
    return tuple(float(v) if k in FRACTIONS else float(min(max(math.exp(v), BOUNDS[k][0]),
                                                             BOUNDS[k][1]))
                 for k, v in enumerate(z))


def to_coordinates(values) -> np.ndarray:
    """The fit's coordinates of parameter values, each taken inside :data:`BOUNDS`."""
    inside = [min(max(float(v), low), high) for v, (low, high) in zip(values, BOUNDS, strict=True)]
    return np.array([v if k in FRACTIONS else math.log(v) for k, v in enumerate(inside)])


def coordinate_bounds(per_stack: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the fit's coordinates: :data:`K` shared, then
    :data:`~.step_time.PER_STACK` of each further stack (:func:`to_efficiencies`)."""
    low, high = to_coordinates([b[0] for b in BOUNDS]), to_coordinates([b[1] for b in BOUNDS])
    if per_stack:
        extra = [st.PARAMETER_NAMES.index(name) for _ in st.FITTED_STACKS[1:]
                 for name in st.PER_STACK]
        low, high = np.concatenate([low, low[extra]]), np.concatenate([high, high[extra]])
    return low, high


def log_ratios(items, effs: dict[str, st.Efficiency]) -> np.ndarray:
    """ln(measured / estimate) of each sample, at the efficiencies of its GPU's stack
    (INFEASIBLE_MISS where the estimate has none)."""
    out = []
    for sample in items:
        eff = effs[st.stack_of(sample.probe.work.gpu)]
        value = sample.probe.predict("estimate", eff)[sample.quantity]
        out.append(INFEASIBLE_MISS if value is None else math.log(sample.measured / value))
    return np.array(out)


def source_of(sample: Sample) -> str:
    """The publisher of a sample: its source id without a snapshot date (AMD's performance
    page, read on six dates, is one source)."""
    return re.sub(r"-\d{8}$", "", str(sample.probe.resolved.point["source_id"]))


def _weights(items) -> np.ndarray:
    """1/√(rows of the sample's source): a source with many rows does not outvote one with
    few (the squares of the weights of a source's rows sum to one)."""
    count = Counter(source_of(sample) for sample in items)
    return np.array([1 / math.sqrt(count[source_of(sample)]) for sample in items])


def fit(items=None, starts=None, per_stack: bool = True) -> dict[str, st.Efficiency]:
    """Robust least squares on the training split (module docstring, step 2); ``items``: the
    samples to fit (default: the training split), ``starts``: the starting coordinates (default:
    :data:`STARTS` for every stack). Returns the efficiencies of each stack; with ``per_stack``
    false, one set for all (the comparison the chapter draws)."""
    from scipy.optimize import least_squares
    train = [s for s in samples() if not s.held_out] if items is None else list(items)
    weights = _weights(train)

    def residuals(z):
        return weights * log_ratios(train, to_efficiencies(z))
    starts = [_start(values, per_stack) for values in STARTS] if starts is None else starts
    low, high = coordinate_bounds(per_stack=len(starts[0]) > K)
    results = [least_squares(residuals, np.clip(start, low, high), bounds=(low, high),
                             method="trf", diff_step=1e-3, max_nfev=400, loss="soft_l1",
                             f_scale=LOSS_SCALE)
               for start in starts]
    best = min(results, key=lambda result: result.cost)
    return to_efficiencies(best.x)


def training_cost(effs: dict[str, st.Efficiency]) -> float:
    """The cost the fit minimizes at ``effs`` (module docstring, step 2): the weighted soft-L1
    loss of the training split, half the sum of ``_soft`` of the weighted misses squared."""
    train = training()
    r = _weights(train) * log_ratios(train, effs)
    return float(0.5 * np.sum(_soft(r) ** 2))


def fold_of(setup: str) -> int:
    """The cross-validation fold of a setup (the SHA-256's second byte, modulo FOLDS)."""
    return hashlib.sha256(setup.encode()).digest()[1] % FOLDS


def cross_validated(effs: dict[str, st.Efficiency]) -> np.ndarray:
    """Out-of-fold ln(measured / estimate) of every training sample: each fold of setups
    (:func:`fold_of`) predicted by a fit on the other folds, started from ``effs`` (the fit on
    the whole training split)."""
    train = [s for s in samples() if not s.held_out]
    out = np.empty(len(train))
    for fold in range(FOLDS):
        inside = np.array([fold_of(s.setup) == fold for s in train])
        if not inside.any():
            continue
        out[inside] = log_ratios([s for s, k in zip(train, inside, strict=True) if k],
                                 fold_fit(fold, effs))
    return out


def fold_fit(fold: int, effs: dict[str, st.Efficiency]) -> dict[str, st.Efficiency]:
    """The fit on the training setups outside ``fold``, started from ``effs`` (kept: the
    engines' cross-validation reuses it: :func:`out_of_fold`)."""
    return _fold_fit(fold, tuple(coordinates_of(effs)))


@cache
def _fold_fit(fold: int, start: tuple[float, ...]) -> dict[str, st.Efficiency]:
    train = [s for s in samples() if not s.held_out and fold_of(s.setup) != fold]
    return fit(train, starts=(np.array(start),))


def report(effs: dict[str, st.Efficiency], items=None, band=None) -> dict:
    """Errors of the estimate on both splits; the band (10th and 90th percentiles of the
    training split's out-of-fold errors, :func:`cross_validated`, unless ``band`` gives them)
    and the share of held-out points inside it."""
    items = samples() if items is None else items
    if band is None:
        folds = cross_validated(effs)
        band = tuple(float(np.quantile(folds, q)) for q in BAND_QUANTILES)
        cv = {"median_abs_log": float(np.median(np.abs(folds))), "folds": FOLDS}
    else:
        cv = None
    out = {}
    for name, part in (("train", [s for s in items if not s.held_out]),
                       ("test", [s for s in items if s.held_out])):
        r = log_ratios(part, effs)
        out[name] = {"points": len(part), "setups": len({s.setup for s in part}),
                     "median_abs_log": float(np.median(np.abs(r))),
                     "median_log": float(np.median(r)),
                     "p10_log": float(np.quantile(r, BAND_QUANTILES[0])),
                     "p90_log": float(np.quantile(r, BAND_QUANTILES[1]))}
    test = log_ratios([s for s in items if s.held_out], effs)
    low, high = band
    out["band"] = {"low": low, "high": high, "quantiles": list(BAND_QUANTILES)}
    out["test"]["inside_band"] = float(np.mean((test >= low) & (test <= high)))
    if cv is not None:
        out["cross_validation"] = cv
    return out


def stored(key: str = "parameters") -> dict[str, st.Efficiency]:
    """The stored fit's efficiencies of each stack, with the stored band: ``"parameters"`` (a
    set per stack) or ``"one_set"`` (one set for all)."""
    rec = st.fitted_record()
    band = (rec["band"]["low"], rec["band"]["high"])
    return {stack: st.Efficiency(**values, band_low=band[0], band_high=band[1])
            for stack, values in rec[key].items()}


def _rounded(effs: dict[str, st.Efficiency]) -> dict:
    return {stack: dict(zip(st.PARAMETER_NAMES, (round(v, 6) for v in eff.vector), strict=True))
            for stack, eff in effs.items()}


def record(effs: dict[str, st.Efficiency] | None = None) -> dict:
    """What data/estimate_parameters.json holds."""
    effs = fit() if effs is None else effs
    rep = report(effs)
    band = (round(rep["band"]["low"], 4), round(rep["band"]["high"], 4))
    return {
        "parameters": _rounded(effs),
        "one_set": _rounded(fit(per_stack=False)),
        "per_stack": list(st.PER_STACK),
        "band": {k: round(v, 4) if isinstance(v, float) else v for k, v in rep["band"].items()},
        "train": {k: round(v, 4) if isinstance(v, float) else v for k, v in rep["train"].items()},
        "test": {k: round(v, 4) if isinstance(v, float) else v for k, v in rep["test"].items()},
        "cross_validation": {k: round(v, 4) if isinstance(v, float) else v
                             for k, v in rep["cross_validation"].items()},
        "method": f"{', '.join(st.PER_STACK)} per software stack "
                  f"({', '.join(st.FITTED_STACKS)}), the others shared; soft-L1 least squares "
                  f"(scale {LOSS_SCALE:g}) on ln(measured/estimate), "
                  "rows weighted 1/sqrt(rows of their source), "
                  f"held out: setups whose SHA-256 starts below {HELD_OUT_SHARE:g}*256, "
                  f"band: {BAND_QUANTILES[0]:g}-{BAND_QUANTILES[1]:g} quantiles of the "
                  f"training split's out-of-fold errors ({FOLDS} folds of setups)",
        "engines": engine_record(effs, band),
    }


# The fit by engine.
_ENGINE_METHOD = """The estimate by serving engine: each engine family's own efficiencies, partially pooled
toward its software stack's.

The pooled fit (:mod:`.estimate_fit`) gives one set of efficiencies per software stack; engines
on the same GPU and model differ by up to three times, and one set cannot be close to all of
them. Here (the same points, the same held-out split by setup):

1. Each point's engine is named as a family (:func:`~inference_math.serving.engines.family`);
   a *group* is a family on a stack (vLLM on CUDA and vLLM on ROCm are two groups: their kernels differ).
2. The shared parameters (β_½, m_½, ω) and each stack's values are the pooled fit's, unchanged:
   the prior. A group with at least :data:`MIN_SETUPS` training setups gets its own
   :data:`PER_ENGINE` (the fixed time per step and the two fractions of peak the stack has of
   its own) by the pooled fit's soft-L1 least squares on its own points, rows weighted as there,
   plus the penalty λ·Σ (ln p_engine − ln p_stack)² over the three: the coordinates are the
   logarithms of the three, inside :data:`BOUNDS`, started from the stack's
   values and from :data:`OFFSETS` about them, keeping the least cost. λ = ∞ is the stack's
   values. A group with fewer setups (or no family) takes its stack's values and the pooled band.
3. λ is chosen on the training split alone, from :data:`LAMBDAS`, by the least median absolute
   out-of-fold miss: in each fold of setups (:func:`fold_of`) the stacks are
   refitted on the other folds (as the pooled band is) and the groups on the other folds'
   points. Ties go to the larger λ.
4. A group's band is the 10th and 90th percentiles of its training points' out-of-fold misses at
   the chosen λ, when it has its own values and at least :data:`MIN_BAND_POINTS` points; else
   the pooled band.

The held-out split is then used once: the median factor exp(median |ln(measured/estimate)|)
and the share inside the band, with each point's engine given and without (the pooled
estimate), for all points and for dense and mixture-of-experts models apart.
``python -m inference_math.reality.estimate_fit`` writes the result under ``engines`` in
``data/estimate_parameters.json``, next to the pooled fit, which it leaves as it was.
"""

#: The parameters each engine family has its own value of (those of a stack).
PER_ENGINE = st.PER_STACK
#: Fewest training setups a group needs for values of its own.
MIN_SETUPS = 3
#: Fewest out-of-fold points a group needs for a band of its own.
MIN_BAND_POINTS = 20
#: The penalty weights tried (math.inf: the stack's values).
LAMBDAS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, math.inf)
#: Starts of a group's fit, as offsets of (ln t_0, ln η_mem, ln η_flop) from its stack's.
OFFSETS = ((0.0, 0.0, 0.0), (math.log(3), -math.log(1.5), -math.log(1.5)),
           (-math.log(3), math.log(1.25), math.log(1.25)))
_INDEX = [st.PARAMETER_NAMES.index(name) for name in PER_ENGINE]
_ENGINE_LOW = np.log([BOUNDS[i][0] for i in _INDEX])
_ENGINE_HIGH = np.log([BOUNDS[i][1] for i in _INDEX])


def engine_of(sample: Sample) -> str:
    """The engine family of a sample's row."""
    return family(sample.probe.resolved.point["engine"])


def group_of(sample: Sample) -> tuple[str, str]:
    """(engine family, software stack) of a sample."""
    return engine_of(sample), st.stack_of(sample.probe.work.gpu)


def is_moe(sample: Sample) -> bool:
    model = sample.probe.work.model
    return model.active_params < model.total_params


def _log_values(eff: st.Efficiency) -> np.ndarray:
    return np.clip(np.log([eff.vector[i] for i in _INDEX]), _ENGINE_LOW, _ENGINE_HIGH)


def with_values(eff: st.Efficiency, u) -> st.Efficiency:
    """``eff`` with :data:`PER_ENGINE` set to exp(u) (u clipped to the bounds)."""
    u = np.clip(np.asarray(u, dtype=float), _ENGINE_LOW, _ENGINE_HIGH)
    return replace(eff, **{name: float(math.exp(v)) for name, v in zip(PER_ENGINE, u,
                                                                       strict=True)})


def _soft(r: np.ndarray) -> np.ndarray:
    """Residuals whose half sum of squares is the soft-L1 cost of r (scale LOSS_SCALE), so a
    quadratic penalty can sit next to them in plain least squares."""
    s = LOSS_SCALE
    return s * np.sign(r) * np.sqrt(2 * (np.sqrt(1 + (r / s) ** 2) - 1))


def _ratios(items, eff: st.Efficiency) -> np.ndarray:
    return log_ratios(items, dict.fromkeys(st.FITTED_STACKS, eff))


def fit_group(items, prior: st.Efficiency, lam: float, weights) -> st.Efficiency:
    """One group's efficiencies: soft-L1 least squares on its ``items`` (``weights`` per row)
    plus λ·Σ (ln p − ln p_prior)² over :data:`PER_ENGINE`; ``prior`` at λ = ∞."""
    if math.isinf(lam):
        return prior
    from scipy.optimize import least_squares
    u0 = _log_values(prior)
    weights = np.asarray(weights, dtype=float)

    def residuals(u):
        return np.concatenate([_soft(weights * _ratios(items, with_values(prior, u))),
                               math.sqrt(2 * lam) * (u - u0)])
    results = [least_squares(residuals, np.clip(u0 + np.array(offset), _ENGINE_LOW, _ENGINE_HIGH),
                             bounds=(_ENGINE_LOW, _ENGINE_HIGH), method="trf", diff_step=1e-3, max_nfev=200)
               for offset in OFFSETS]
    best = min(results, key=lambda result: result.cost)
    return with_values(prior, best.x)


def fit_groups(items, stacks: dict[str, st.Efficiency], lam: float) -> dict:
    """Own efficiencies of every group of ``items`` with at least MIN_SETUPS setups, pooled
    toward ``stacks`` with weight ``lam``: {(family, stack): Efficiency}."""
    items = list(items)
    weights = _weights(items)
    groups = defaultdict(list)
    for k, sample in enumerate(items):
        groups[group_of(sample)].append(k)
    out = {}
    for group in sorted(groups):
        index = groups[group]
        if group[0] == UNKNOWN or len({items[k].setup for k in index}) < MIN_SETUPS:
            continue
        out[group] = fit_group([items[k] for k in index], stacks[group[1]], lam, weights[index])
    return out


def ratios(items, stacks: dict[str, st.Efficiency], groups: dict) -> np.ndarray:
    """ln(measured / estimate) of each sample at its group's efficiencies (its stack's if the
    group has none)."""
    out = []
    for sample in items:
        stack = st.stack_of(sample.probe.work.gpu)
        out.append(_ratios([sample], groups.get(group_of(sample), stacks[stack]))[0])
    return np.array(out)


def training() -> list[Sample]:
    return [s for s in samples() if not s.held_out]


def out_of_fold(pooled: dict[str, st.Efficiency], lam: float) -> np.ndarray:
    """Out-of-fold misses of every training sample at ``lam`` (module docstring, step 3)."""
    train = training()
    out = np.empty(len(train))
    for fold in range(FOLDS):
        inside = np.array([fold_of(s.setup) == fold for s in train])
        if not inside.any():
            continue
        stacks = fold_fit(fold, pooled)
        others = [s for s, k in zip(train, inside, strict=True) if not k]
        groups = fit_groups(others, stacks, lam)
        out[inside] = ratios([s for s, k in zip(train, inside, strict=True) if k], stacks,
                             groups)
    return out


def choose_lambda(pooled: dict[str, st.Efficiency]) -> tuple[float, dict, np.ndarray]:
    """The λ of least median absolute out-of-fold miss (ties: the larger), the median at each
    λ, and the out-of-fold misses at the chosen one."""
    scores, misses = {}, {}
    for lam in LAMBDAS:
        misses[lam] = out_of_fold(pooled, lam)
        scores[lam] = float(np.median(np.abs(misses[lam])))
    best = min(LAMBDAS, key=lambda lam: (round(scores[lam], 6), -lam))
    return best, scores, misses[best]


def _summary(r: np.ndarray, items, inside, widths) -> dict:
    """Held-out errors of ``items``: the median factor, the share inside the band and the
    median width of the band each point is given (its 90th over its 10th percentile)."""
    if not len(r):
        return {"points": 0, "setups": 0}
    return {"points": len(r), "setups": len({s.setup for s in items}),
            "median_abs_log": round(float(np.median(np.abs(r))), 4),
            "median_factor": round(float(math.exp(np.median(np.abs(r)))), 4),
            "inside_band": round(float(np.mean(inside)), 4),
            "band_width": round(float(math.exp(np.median(widths))), 4)}


def _band_text(band) -> dict:
    return {"low": round(float(band[0]), 4), "high": round(float(band[1]), 4)}


def engine_record(pooled: dict[str, st.Efficiency], pooled_band: tuple[float, float]) -> dict:
    """The ``engines`` part of data/estimate_parameters.json: λ, each group's values, points
    and band, and the held-out errors with the engine given and without."""
    lam, scores, folds = choose_lambda(pooled)
    train = training()
    test = [s for s in samples() if s.held_out]
    groups = fit_groups(train, pooled, lam)
    bands = {}
    for group in groups:
        mine = np.array([group_of(s) == group for s in train])
        if mine.sum() >= MIN_BAND_POINTS:
            bands[group] = tuple(float(np.quantile(folds[mine], q)) for q in BAND_QUANTILES)
    families: dict = {}
    for group in sorted({group_of(s) for s in samples()}):
        name, stack = group
        tr = [s for s in train if group_of(s) == group]
        te = [s for s in test if group_of(s) == group]
        own = groups.get(group)
        entry = {"train_points": len(tr), "train_setups": len({s.setup for s in tr}),
                 "test_points": len(te), "test_setups": len({s.setup for s in te}),
                 "own": own is not None,
                 "parameters": None if own is None else
                 dict(zip(st.PARAMETER_NAMES, (round(v, 6) for v in own.vector), strict=True)),
                 "band": _band_text(bands.get(group, pooled_band)),
                 "band_from": "own" if group in bands else "pooled"}
        if own is None:
            entry["fallback"] = ("no engine named" if name == UNKNOWN else
                                 f"fewer than {MIN_SETUPS} training setups: the stack's values")
        families.setdefault(name, {})[stack] = entry
    with_engine = ratios(test, pooled, groups)
    without = log_ratios(test, pooled)
    inside_engine = np.array([bands.get(group_of(s), pooled_band)[0] <= r
                              <= bands.get(group_of(s), pooled_band)[1]
                              for s, r in zip(test, with_engine, strict=True)])
    inside_pooled = (without >= pooled_band[0]) & (without <= pooled_band[1])
    width_engine = np.array([np.subtract(*bands.get(group_of(s), pooled_band)[::-1])
                             for s in test])
    width_pooled = np.full(len(test), pooled_band[1] - pooled_band[0])
    held_out = {}
    for part, keep in (("all", lambda s: True), ("dense", lambda s: not is_moe(s)),
                       ("moe", is_moe)):
        mask = np.array([keep(s) for s in test])
        items = [s for s, k in zip(test, mask, strict=True) if k]
        held_out[part] = {"with_engine": _summary(with_engine[mask], items, inside_engine[mask],
                                                  width_engine[mask]),
                          "pooled": _summary(without[mask], items, inside_pooled[mask],
                                             width_pooled[mask])}
    return {
        "lambda": lam if math.isfinite(lam) else "inf",
        "lambda_grid": [x if math.isfinite(x) else "inf" for x in LAMBDAS],
        "cv_median_abs_log": {("inf" if math.isinf(x) else f"{x:g}"): round(v, 4)
                              for x, v in scores.items()},
        "per_engine": list(PER_ENGINE),
        "min_setups": MIN_SETUPS,
        "min_band_points": MIN_BAND_POINTS,
        "families": families,
        "test": held_out,
        "release": release_record(pooled, lam, groups),
        "method": f"{', '.join(PER_ENGINE)} per engine family and stack, the others and each "
                  "stack's values the pooled fit's; soft-L1 least squares on the family's "
                  f"training points plus lambda*sum (ln p - ln p_stack)^2, lambda from "
                  f"{len(LAMBDAS)} values by the least median |out-of-fold miss| over "
                  f"{FOLDS} folds of training setups; families with fewer than {MIN_SETUPS} "
                  "training setups take their stack's values; band: 0.1-0.9 quantiles of the "
                  f"family's out-of-fold misses (at least {MIN_BAND_POINTS} points), else the "
                  "pooled band",
    }


# A release layer, measured but not adopted (the chapter's "The estimate given the engine").
#: Pooling strengths tried for a release's offset, in setups (math.inf: no offset).
RELEASE_N0 = (0.5, 1.0, 2.0, 4.0, 8.0, math.inf)


def release_of(sample: Sample) -> str | None:
    """The release line ("major.minor") of a sample's engine version, or None where the row
    names none (a commit, a dated image, no version)."""
    match = re.search(r"(\d+)\.(\d+)", str(sample.probe.resolved.point["engine_version"] or ""))
    return None if match is None else f"{match.group(1)}.{match.group(2)}"


def release_key(sample: Sample):
    release = release_of(sample)
    return None if release is None else (*group_of(sample), release)


def release_offsets(items, r, n0: float) -> dict:
    """Each release line's offset in ln: the sum of its setups' mean misses ``r`` over
    (setups + ``n0``), so a release seen in one setup moves little and n0 = ∞ is none."""
    by = defaultdict(lambda: defaultdict(list))
    for sample, x in zip(items, r, strict=True):
        key = release_key(sample)
        if key is not None:
            by[key][sample.setup].append(x)
    if math.isinf(n0):
        return {}
    return {key: sum(float(np.mean(v)) for v in setups.values()) / (len(setups) + n0)
            for key, setups in by.items()}


def _less(items, r, offsets) -> np.ndarray:
    return np.array([x - offsets.get(release_key(s), 0.0) for s, x in zip(items, r, strict=True)])


def release_record(pooled: dict[str, st.Efficiency], lam: float, groups: dict) -> dict:
    """What a release line would add to the engine: each n0's median factor out of fold on the
    training split (each fold's offsets from the other folds' misses at that fold's fit), the n0
    of the least, its held-out median factor, and the held-out factor were each held-out
    setup's own mean miss known (the floor of any correction by setup)."""
    train, test = training(), [s for s in samples() if s.held_out]
    per_fold = []
    for fold in range(FOLDS):
        inside = np.array([fold_of(s.setup) == fold for s in train])
        stacks = fold_fit(fold, pooled)
        others = [s for s, k in zip(train, inside, strict=True) if not k]
        mine = [s for s, k in zip(train, inside, strict=True) if k]
        fold_groups = fit_groups(others, stacks, lam)
        per_fold.append((inside, others, ratios(others, stacks, fold_groups), mine,
                         ratios(mine, stacks, fold_groups)))
    scores = {}
    for n0 in RELEASE_N0:
        oof = np.empty(len(train))
        for inside, others, r_others, mine, r_mine in per_fold:
            oof[inside] = _less(mine, r_mine, release_offsets(others, r_others, n0))
        scores[n0] = float(np.median(np.abs(oof)))
    best = min(RELEASE_N0, key=lambda k: (round(scores[k], 6), -k))
    r_test = ratios(test, pooled, groups)
    offsets = release_offsets(train, ratios(train, pooled, groups), best)
    by_setup = defaultdict(list)
    for sample, x in zip(test, r_test, strict=True):
        by_setup[sample.setup].append(x)
    floor = np.array([x - np.mean(by_setup[s.setup]) for s, x in zip(test, r_test, strict=True)])
    return {
        "n0_grid": [k if math.isfinite(k) else "inf" for k in RELEASE_N0],
        "cv_factor": {("inf" if math.isinf(k) else f"{k:g}"): round(math.exp(v), 4)
                      for k, v in scores.items()},
        "n0": best if math.isfinite(best) else "inf",
        "releases": len(release_offsets(train, np.zeros(len(train)), 0.0)),
        "test_points_with_release": int(sum(release_key(s) in offsets for s in test)),
        "test_factor": round(float(math.exp(np.median(np.abs(_less(test, r_test, offsets))))), 4),
        "test_factor_setup_known": round(float(math.exp(np.median(np.abs(floor)))), 4),
    }


def main() -> int:
    out = record()
    path = resources.files("inference_math") / "data" / st.PARAMETER_FILE
    text = json.dumps(out, indent=2) + "\n"
    with open(str(path), "w") as handle:
        handle.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
