"""What would make it cheaper: the change of one input alone that cuts the cost at a speed.

For each input the search can be re-run with (a hardware number, the price, the context, the
cache's bits), find the factor m by which it must move, everything else held, for the frontier's
cost at the speed per user to fall by a given factor F: the root of ln C(m·x) = ln C(x) − ln F,
found by the secant method in ln m from the elasticity's first guess (ln m ≈ −ln F / ε_C,
eq-sens-one-term or eq-sens-corner), each step a full search (:func:`.search.frontier`), the root
bracketed within [1/1000, 1000]. An input that cannot cut the cost by F within that range (the
cost has a floor in it: another term binds) is reported with the cut it reaches at the end of the
range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ..core.validation import InputError, positive
from ..fullmodel.search import KV_BITS, Setting, frontier, kv_bits_of
from .sensitivity import elasticities, gpu_inputs, scaled_gpu

RANGE = math.log(1000.0)
TOLERANCE = 0.005  # in ln C: the cost within 0.5% of the target
EVALUATIONS = 10


def _with_gpu(setting: Setting, name: str, factor: float) -> Setting:
    return replace(setting, gpu=scaled_gpu(setting.gpu, name, factor))


def settings(setting: Setting) -> dict:
    """For each input the search can vary, a function of a factor m giving the setting with that
    input multiplied by m (names as in :func:`.sensitivity.inputs`)."""
    out = {name: partial(_with_gpu, setting, name) for name in gpu_inputs(setting)}
    out["price_per_hour"] = lambda m: replace(setting, price=setting.usd_per_hour * m)
    bits = kv_bits_of(setting.model, setting.kv_bits)
    out["kv_bytes_per_token"] = lambda m: replace(setting, kv_bits=bits * m)
    if setting.context > 0:
        out["context"] = lambda m: replace(setting, context=setting.context * m)
    return out


def _within(setting: Setting, name: str, factor: float) -> bool:
    if name == "kv_bytes_per_token":
        return KV_BITS[0] <= kv_bits_of(setting.model, setting.kv_bits) * factor <= KV_BITS[1]
    return True


@dataclass(frozen=True)
class Cut:
    """The factor an input must move by to cut the cost by ``target`` (None if it cannot within
    [1/1000, 1000]) and the cut in cost it reaches."""

    name: str
    elasticity: float | None
    factor: float | None
    reached: float
    searches: int


def _log_cost(make, name: str, factor: float, speed: float) -> float:
    try:
        front = frontier(make(factor))
    except InputError:
        return math.inf  # nothing fits (a smaller HBM, a longer context)
    return _log_cost_at(front, speed)


def _log_cost_at(front, speed: float) -> float:
    """ln of the frontier's cost at ``speed``; below its slowest point, that point's (it serves
    any slower speed); infinite beyond its top speed."""
    speeds, costs = front.arrays()
    if speed < speeds.min():
        return math.log(float(costs[np.argmin(speeds)]))
    value = float(front.cost_at_speed(np.array([speed]))[0])
    return math.log(value) if math.isfinite(value) else math.inf


def cut(front, speed: float, target: float, names=None) -> list[Cut]:
    """For each input (or those in ``names``), the factor that alone cuts the frontier's cost at
    ``speed`` tokens/s per user by ``target`` (for example 2: to half)."""
    positive("target", target)
    if target <= 1:
        raise InputError(f"the cut must exceed 1 (a cost divided by it), got {target!r}")
    setting = front.setting
    base = float(front.cost_at_speed(np.array([speed]))[0])
    if not math.isfinite(base):
        raise InputError(f"{speed:g} tok/s per user is outside the frontier")
    goal = math.log(base) - math.log(target)
    slopes = elasticities(front, speed)["elasticities"]
    out = []
    for name, make in settings(setting).items():
        if names is not None and name not in names:
            continue
        eps = slopes.get(name)
        if eps is None or abs(eps) < 1e-3:
            out.append(Cut(name, eps, None, 1.0, 0))
            continue
        direction = -1.0 if eps > 0 else 1.0  # ln m moves this way to cut the cost

        def gap(x, make=make, name=name):
            if not _within(setting, name, math.exp(x)):
                return math.inf
            return _log_cost(make, name, math.exp(x), speed) - goal
        x0, g0 = 0.0, math.log(target)
        x1 = min(max(-math.log(target) / eps, -RANGE), RANGE)
        g1, searches = gap(x1), 1
        # widen until the root is bracketed or the range ends
        while g1 > 0 and abs(x1) < RANGE and searches < EVALUATIONS:
            x0, g0 = x1, g1
            x1 = direction * min(RANGE, 2.0 * abs(x1))
            g1, searches = gap(x1), searches + 1
        if g1 > 0:
            reached = math.exp(math.log(target) - g1) if math.isfinite(g1) else 1.0
            out.append(Cut(name, eps, None, reached, searches))
            continue
        # regula falsi between x0 (above the goal) and x1 (at or below it)
        while abs(g1) > TOLERANCE and searches < EVALUATIONS:
            x = x1 - g1 * (x1 - x0) / (g1 - g0) if math.isfinite(g1) else 0.5 * (x0 + x1)
            g, searches = gap(x), searches + 1
            if g > 0:
                x0, g0 = x, g
            else:
                x1, g1 = x, g
        out.append(Cut(name, eps, math.exp(x1), math.exp(math.log(target) - g1), searches))
    return out
