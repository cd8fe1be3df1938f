"""Fitting the estimate's six global parameters on the public measurements, and its band.

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
   of an untuned engine, a tuned submission) do not pull the rest; each setup weighted by
   1/√(its rows) so a long sweep does not outvote a single point. The parameters are fitted in unconstrained
   coordinates: logarithms of t_0, β_½ and m_½, logits of η_mem, η_flop and ω (each in (0, 1)).
   ``scipy.optimize.least_squares`` (trust-region reflective) from each of :data:`STARTS`,
   keeping the least cost.
3. The band is the 10th and 90th percentiles of r on the held-out split.

``python -m inference_math.engine.estimate_fit`` refits and writes
``data/estimate_parameters.json``; ``tests/test_estimate_fit.py`` refits and compares.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from . import measured_points as mp
from . import step_time as st

HELD_OUT_SHARE = 0.3
LOSS_SCALE = 0.2  # ln units: misses beyond a factor of about 1.2 count linearly
BAND_QUANTILES = (0.10, 0.90)
#: A point the estimate cannot serve (its batch does not fit) counts as this miss in ln.
INFEASIBLE_MISS = 3.0
START = (2e-3, 0.8, 2e6, 0.6, 64.0, 0.5)
#: Further starting points (least squares on a max over a grid has local minima): the fit
#: keeps the one of least training cost.
STARTS = (START, (5e-3, 0.6, 5e5, 0.4, 16.0, 0.2), (1e-3, 0.9, 1e7, 0.8, 256.0, 0.8),
          (1e-2, 0.5, 1e6, 0.3, 128.0, 0.5))
FRACTIONS = (1, 3, 5)  # η_mem, η_flop, ω: logits; the others: logarithms


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


def to_vector(z) -> tuple[float, ...]:
    z = np.asarray(z, dtype=float)
    return tuple(float(1 / (1 + math.exp(-v))) if k in FRACTIONS else float(math.exp(v))
                 for k, v in enumerate(z))


def to_coordinates(values) -> np.ndarray:
    return np.array([math.log(v / (1 - v)) if k in FRACTIONS else math.log(v)
                     for k, v in enumerate(values)])


def log_ratios(items, eff: st.Efficiency) -> np.ndarray:
    """ln(measured / estimate) of each sample (INFEASIBLE_MISS where the estimate has none)."""
    out = []
    for sample in items:
        value = sample.probe.predict("estimate", eff)[sample.quantity]
        out.append(INFEASIBLE_MISS if value is None else math.log(sample.measured / value))
    return np.array(out)


def _weights(items) -> np.ndarray:
    count = Counter(sample.setup for sample in items)
    return np.array([1 / math.sqrt(count[sample.setup]) for sample in items])


def fit(items=None) -> st.Efficiency:
    """Least squares on the training split (module docstring, step 2)."""
    from scipy.optimize import least_squares
    train = [s for s in (samples() if items is None else items) if not s.held_out]
    weights = _weights(train)

    def residuals(z):
        return weights * log_ratios(train, st.Efficiency.from_vector(to_vector(z)))
    results = [least_squares(residuals, to_coordinates(start), method="trf", diff_step=1e-3,
                             max_nfev=400, loss="soft_l1", f_scale=LOSS_SCALE)
               for start in STARTS]
    best = min(results, key=lambda result: result.cost)
    return st.Efficiency.from_vector(to_vector(best.x))


def report(eff: st.Efficiency, items=None) -> dict:
    """Errors of the estimate on both splits, and the band from the held-out one."""
    items = samples() if items is None else items
    out = {}
    for name, part in (("train", [s for s in items if not s.held_out]),
                       ("test", [s for s in items if s.held_out])):
        r = log_ratios(part, eff)
        out[name] = {"points": len(part), "setups": len({s.setup for s in part}),
                     "median_abs_log": float(np.median(np.abs(r))),
                     "median_log": float(np.median(r)),
                     "p10_log": float(np.quantile(r, BAND_QUANTILES[0])),
                     "p90_log": float(np.quantile(r, BAND_QUANTILES[1]))}
    test = log_ratios([s for s in items if s.held_out], eff)
    low, high = (float(np.quantile(test, q)) for q in BAND_QUANTILES)
    out["band"] = {"low": low, "high": high, "quantiles": list(BAND_QUANTILES)}
    out["test"]["inside_band"] = float(np.mean((test >= low) & (test <= high)))
    return out


def record(eff: st.Efficiency | None = None) -> dict:
    """What data/estimate_parameters.json holds."""
    eff = fit() if eff is None else eff
    rep = report(eff)
    return {
        "parameters": dict(zip(st.PARAMETER_NAMES, (round(v, 6) for v in eff.vector), strict=False)),
        "band": {k: round(v, 4) if isinstance(v, float) else v for k, v in rep["band"].items()},
        "train": {k: round(v, 4) if isinstance(v, float) else v for k, v in rep["train"].items()},
        "test": {k: round(v, 4) if isinstance(v, float) else v for k, v in rep["test"].items()},
        "method": f"soft-L1 least squares (scale {LOSS_SCALE:g}) on ln(measured/estimate), "
                  "setups weighted 1/sqrt(rows), "
                  f"held out: setups whose SHA-256 starts below {HELD_OUT_SHARE:g}*256, "
                  f"band: held-out {BAND_QUANTILES[0]:g}-{BAND_QUANTILES[1]:g} quantiles",
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
