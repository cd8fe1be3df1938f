"""Fitting the estimate's parameters (six, three of them per software stack) on the public
measurements, and its band.

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
   in all; the chapter compares them with one set of six for both stacks
   (``fit(per_stack=False)``).
   ``scipy.optimize.least_squares`` (trust-region reflective) from each of :data:`STARTS`,
   keeping the least cost.
3. The band is the 10th and 90th percentiles of r out of fold on the training split: the
   training setups cut into :data:`FOLDS` folds (the SHA-256's second byte), each fold's points
   estimated by a fit on the other folds. The held-out split is used once, to report the error
   and the share of its points inside the band, neither of which it helped to set.

``python -m inference_math.reality.estimate_fit`` refits and writes
``data/estimate_parameters.json``: both fits (per stack and one set for all), the band and the
errors. The book reads that file and refits nothing; the tests refit from several starts, with
one thread and with two, and compare.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from ..serving import step_time as st
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
    """Coordinates of a start: the same six values for every stack."""
    shared = to_coordinates(values)
    if not per_stack:
        return shared
    extra = [shared[st.PARAMETER_NAMES.index(name)] for _ in st.FITTED_STACKS[1:]
             for name in st.PER_STACK]
    return np.concatenate([shared, extra])


def to_efficiencies(z) -> dict[str, st.Efficiency]:
    """The efficiencies of each stack from the fit's coordinates: six shared, then
    :data:`~.step_time.PER_STACK` of each further stack."""
    z = np.asarray(z, dtype=float)
    out = {st.FITTED_STACKS[0]: st.Efficiency.from_vector(to_vector(z[:6]))}
    if len(z) == 6:  # one set for every stack
        return dict.fromkeys(st.FITTED_STACKS, out[st.FITTED_STACKS[0]])
    k = 6
    for stack in st.FITTED_STACKS[1:]:
        own = z[:6].copy()
        for name in st.PER_STACK:
            own[st.PARAMETER_NAMES.index(name)] = z[k]
            k += 1
        out[stack] = st.Efficiency.from_vector(to_vector(own))
    return out


def coordinates_of(effs: dict[str, st.Efficiency]) -> np.ndarray:
    """The inverse of :func:`to_efficiencies`."""
    first = to_coordinates(effs[st.FITTED_STACKS[0]].vector)
    extra = [to_coordinates(effs[stack].vector)[st.PARAMETER_NAMES.index(name)]
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
    """Lower and upper bounds of the fit's coordinates: six shared, then
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
    false, one set of six for all (the comparison the chapter draws)."""
    from scipy.optimize import least_squares
    train = [s for s in samples() if not s.held_out] if items is None else list(items)
    weights = _weights(train)

    def residuals(z):
        return weights * log_ratios(train, to_efficiencies(z))
    starts = [_start(values, per_stack) for values in STARTS] if starts is None else starts
    low, high = coordinate_bounds(per_stack=len(starts[0]) > 6)
    results = [least_squares(residuals, np.clip(start, low, high), bounds=(low, high),
                             method="trf", diff_step=1e-3, max_nfev=400, loss="soft_l1",
                             f_scale=LOSS_SCALE)
               for start in starts]
    best = min(results, key=lambda result: result.cost)
    return to_efficiencies(best.x)


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
        other = fit([s for s, k in zip(train, inside, strict=True) if not k],
                    starts=(coordinates_of(effs),))
        out[inside] = log_ratios([s for s, k in zip(train, inside, strict=True) if k], other)
    return out


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
    set per stack) or ``"one_set"`` (one set of six for all)."""
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
