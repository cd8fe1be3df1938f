"""Bands on the frontiers: what the numbers no source gives, and the estimate's errors, leave open.

Two sources of spread, combined per point of a frontier:

1. **The GPU's assumed and provisional values** (``assumed`` and ``provisional`` of a preset in
   ``presets/gpus.toml`` or of a user's GPU file). Each such field is spread over the range
   ``data/band_ranges.toml`` gives it, with the reason for that range (assumed values: within
   20% for the FLOP/s cap, 15% for the bandwidth cap, a factor 2 for the kernel launch time and
   an assumed NIC, 1.5x for an assumed price; provisional values: within 10%). A draw is
   log-uniform between value·low and value·high, each field independently; a reachable fraction
   drawn above 1 is taken as 1; ``node_size`` is not spread. A price given by the caller
   (``Setting.price``, ``Workload.price``, ``--price``) is not spread either. A value with a
   primary source is never spread: the paper's H100, whose every number has one, gets a
   zero-width band from this source.

   Monte Carlo with a fixed seed (:data:`SEED`) and :data:`DRAWS` draws; the band is the 10th and
   90th percentiles (:data:`QUANTILES`, those of the estimate's band) of the draws, NumPy's
   linear interpolation between order statistics. The uniform numbers behind the draws are one
   column per number field of the GPU schema, whatever is spread: with a given seed, widening one
   range moves each draw of that field further out and leaves the others alone.

2. **The estimate's band** (``serve`` and :func:`serving_band` on the 'estimate' curve only):
   the 10th and 90th percentiles of ln(measured / estimate) out of fold
   (:mod:`.estimate_fit`), a factor on one configuration's step time. It multiplies a
   configuration's output tokens/s per GPU and tokens/s per user by e^band and its cost by
   e^-band. Only those two quantiles are stored, not a distribution to draw from, so it is
   combined with the draws of 1. by multiplying the ends: low = (10th percentile of the draws)
   · e^low, high = (90th percentile) · e^high (cost: the other way round). For two independent
   normal errors in log that is wider than the 10th-90th percentiles of their product; it is
   never narrower than either band alone.

**What a point's band is.** A frontier point is a configuration (instance, batch, layout; the
drafter's layout with speculative decoding; the serving frontier's chunk or prefill pool). Its
band is the spread of *that configuration's* speed, throughput and cost under the drawn inputs:
each draw re-evaluates the configuration through the generated term functions
(:func:`~.full_model.compile_branch`, and :func:`~.serving_frontier.evaluate_points` for the
serving frontier), without searching again. Per draw, the configurations of the nominal frontier
form a frontier of their own; a search at the drawn inputs could only find configurations at
least as good, so that frontier's cost at a given speed is an upper bound of the re-searched one
(and its top speed a lower bound). :meth:`FrontierBand.cost_at_speed` and
:meth:`FrontierBand.max_speed` read each draw's frontier this way (``compare --band``). The gap
to a full re-search is measured in the README ("Bands"); a re-search per draw would take
:data:`DRAWS` searches of about a second each.

The draws are evaluated relative to the nominal configuration: a draw's value is the point's
value times (the configuration re-evaluated at the draw) / (re-evaluated at the stated values),
so a zero range gives exactly the point's value.

Python: ``frontier_band(setting)`` (a :class:`FrontierBand`, per point ``speed_low``,
``speed_high``, ``cost_low``, ``cost_high``), ``serving_band(workload)`` (a
:class:`ServingBand`); ``ranges()`` the ranges file, ``gpu_ranges(gpu)`` a GPU's spread fields.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from ..core.units import usd_per_million_tokens
from ..core.validation import InputError
from ..fullmodel import branch as fm
from ..fullmodel.pareto import pareto_front
from ..fullmodel.search import SCALEDOWN_VALUES, Frontier, Setting, frontier, pipeline_degrees
from ..fullmodel.spec_step import spec_latency_fn
from ..presets.hardware import GPU, NUMBER_FIELDS

DRAWS = 256
SEED = 0
QUANTILES = (0.10, 0.90)  # those of the estimate's band (estimate_fit.BAND_QUANTILES)
RANGE_FILE = "band_ranges.toml"
STATUSES = ("assumed", "provisional")
FRACTIONS = ("flop_cap", "bandwidth_cap")  # reachable fractions of peak: a draw above 1 is 1
WHOLE = ("node_size",)  # whole numbers: never spread
MAX_DRAWS = 100_000


@dataclass(frozen=True)
class Range:
    """Factors on a stated value between which a draw falls (log-uniform), and why."""

    low: float
    high: float
    reason: str = ""

    def __post_init__(self):
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or value <= 0:
                raise InputError(f"range {name} must be a finite number > 0, got {value!r}")
        if not self.low <= 1.0 <= self.high:
            raise InputError(f"a range must hold the stated value: low <= 1 <= high, got "
                             f"low {self.low!r}, high {self.high!r}")

    @property
    def width(self) -> float:
        """ln(high / low): 0 for a value not spread."""
        return math.log(self.high / self.low)


def parse_ranges(text: str, where: str = RANGE_FILE) -> dict[str, dict[str, Range]]:
    """The ranges of a ranges file: status -> number field -> :class:`Range`. Every number field
    of the GPU schema needs one under each status, with a reason; a whole number (node_size) is
    never spread. InputError naming ``where`` and the entry otherwise."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: malformed TOML: {exc}") from None
    extra = sorted(set(table) - set(STATUSES))
    if extra:
        raise InputError(f"{where}: unknown table {extra[0]!r} (known: {', '.join(STATUSES)})")
    out = {}
    for status in STATUSES:
        entries = table.get(status, {})
        unknown = sorted(set(entries) - set(NUMBER_FIELDS))
        if unknown:
            raise InputError(f"{where}: {status}.{unknown[0]} is not a number field of a GPU")
        out[status] = {}
        for name in NUMBER_FIELDS:
            entry = entries.get(name)
            here = f"{where}: {status}.{name}"
            if not isinstance(entry, dict):
                raise InputError(f"{here}: missing (every number field needs a range)")
            if set(entry) != {"low", "high", "reason"}:
                raise InputError(f"{here}: needs exactly low, high and reason, got "
                                 f"{', '.join(sorted(entry))}")
            if not isinstance(entry["reason"], str) or not entry["reason"].strip():
                raise InputError(f"{here}: reason must be a non-empty string")
            try:
                rng = Range(entry["low"], entry["high"], entry["reason"])
            except InputError as exc:
                raise InputError(f"{here}: {exc}") from None
            if name in WHOLE and rng.width:
                raise InputError(f"{here}: a whole number is not spread: low and high must be 1")
            out[status][name] = rng
    return out


@cache
def ranges() -> dict[str, dict[str, Range]]:
    """The shipped ranges (``data/band_ranges.toml``), validated by :func:`parse_ranges`."""
    path = resources.files("inference_math") / "data" / RANGE_FILE
    return parse_ranges(path.read_text(), RANGE_FILE)


def gpu_ranges(gpu: GPU, price_given: bool = False) -> dict[str, Range]:
    """The fields of ``gpu`` spread for its band, with their ranges: its ``assumed`` fields at
    the assumed ranges, then its ``provisional`` ones (a field in both takes the assumed range);
    fields whose range is zero-width are left out, and so is the price when the caller gives
    one (``price_given``)."""
    table = ranges()
    out = {}
    for status in STATUSES:
        for name in getattr(gpu, status):
            if name not in out and table[status][name].width > 0:
                out[name] = table[status][name]
    if price_given:
        out.pop("price_per_hour", None)
    return out


def _as_range(value) -> Range:
    return value if isinstance(value, Range) else Range(*value)


def _check_draws(draws, seed) -> None:
    if isinstance(draws, bool) or not isinstance(draws, int) or not 1 <= draws <= MAX_DRAWS:
        raise InputError(f"draws must be a whole number in [1, {MAX_DRAWS}], got {draws!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be a whole number >= 0, got {seed!r}")


def draw_factors(spread: Mapping[str, Range | tuple], draws: int = DRAWS,
                 seed: int = SEED) -> dict[str, np.ndarray]:
    """``draws`` factors per spread field, log-uniform between its range's ends.

    The uniform numbers are one column per number field of the GPU schema (NUMBER_FIELDS), drawn
    whatever is spread, so a field's draws depend on the seed and its own range only."""
    _check_draws(draws, seed)
    for name in spread:
        if name not in NUMBER_FIELDS:
            raise InputError(f"{name!r} is not a number field of a GPU "
                             f"(one of: {', '.join(NUMBER_FIELDS)})")
    u = np.random.default_rng(seed).random((draws, len(NUMBER_FIELDS)))
    out = {}
    for name, value in spread.items():
        rng = _as_range(value)
        if name in WHOLE and rng.width:
            raise InputError(f"{name} is a whole number: it is not spread")
        column = u[:, NUMBER_FIELDS.index(name)]
        out[name] = np.exp(math.log(rng.low) + column * rng.width)
    return out


def drawn_gpu(gpu: GPU, factors: Mapping[str, np.ndarray], k: int) -> GPU:
    """``gpu`` with each spread field multiplied by its ``k``-th factor (a reachable fraction at
    most 1; a field the GPU lacks stays absent)."""
    changes = {}
    for name, values in factors.items():
        factor = float(values[k])
        current = getattr(gpu, name)
        if current is None:
            continue
        if name == "flops_by_weight_bits":
            changes[name] = {bits: rate * factor for bits, rate in current.items()}
        elif name in FRACTIONS:
            changes[name] = min(1.0, current * factor)
        else:
            changes[name] = current * factor
    return dataclasses.replace(gpu, **changes) if changes else gpu


def quantile(values: np.ndarray, q: float) -> np.ndarray:
    """The ``q`` quantile over axis 0, linear between order statistics (NumPy's default), with
    infinite values allowed (an infeasible draw): infinite where it falls on or after one."""
    x = np.sort(np.asarray(values, dtype=float), axis=0)
    h = (x.shape[0] - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, x.shape[0] - 1)
    a, b = x[lo], x[hi]
    with np.errstate(invalid="ignore"):
        return np.where((h == lo) | (a == b), a, a + (h - lo) * (b - a))


# --- the full model's frontier -------------------------------------------------------------------

def _configuration(setting: Setting, points) -> dict:
    """The arrays of the points' configurations, and the drafter's layout at each (found once, at
    the stated values: the fastest of the drafter's branches at the point's N and b, as the
    search picks it)."""
    cfg = {key: np.array([getattr(pt, attr) for pt in points], dtype=float) for key, attr in
           (("n", "gpus"), ("b", "batch"), ("pp", "n_pp"), ("sigma", "attn_scaledown"),
            ("gamma", "gamma"))}
    cfg["two_d"] = np.array([pt.two_d for pt in points], dtype=bool)
    cfg["drafter"] = None
    spec = cfg["gamma"] > 1
    if setting.speculative and spec.any():
        n, b = cfg["n"][spec], cfg["b"][spec]
        pp = pipeline_degrees(setting.drafter, b, setting.use_pp)  # (P, degrees)
        steps = np.linspace(0.0, 1.0, SCALEDOWN_VALUES)
        sigma = (n[:, None] / pp)[:, :, None] ** steps  # (P, degrees, σ)
        pp = np.broadcast_to(pp[:, :, None], sigma.shape)
        best = None
        for layout in (False, True):
            value = np.broadcast_to(_drafter_branch(setting, setting.gpu, layout)["latency"](
                n[:, None, None], b[:, None, None], pp, sigma), sigma.shape).reshape(n.size, -1)
            k = np.argmin(value, axis=1)
            here = value[np.arange(n.size), k]
            pick = (np.full(n.size, layout), pp.reshape(n.size, -1)[np.arange(n.size), k],
                    sigma.reshape(n.size, -1)[np.arange(n.size), k], here)
            if best is None:
                best = pick
            else:
                wins = pick[3] < best[3]
                best = tuple(np.where(wins, new, old) for new, old in zip(pick, best, strict=True))
        cfg["drafter"] = dict(zip(("two_d", "pp", "sigma"), best[:3], strict=False))
        cfg["drafter"]["index"] = np.flatnonzero(spec)
    return cfg


def _drafter_branch(setting: Setting, gpu: GPU, layout: bool):
    return fm.compile_branch(setting.drafter, gpu, bool(layout), 1.0, setting.context,
                             setting.drafter.weight_bytes, curve=setting.curve_name,
                             kv_scale=setting.drafter_kv_scale)


def token_latency(setting: Setting, cfg: dict, gpu: GPU) -> np.ndarray:
    """Seconds per token per request of each configuration of ``cfg`` (:func:`_configuration`)
    on ``gpu``: the target's forward pass at q = γ and, with speculative decoding, the
    drafter's at its layout, by eq-spec-latency."""
    n, b, pp, sigma, gamma = cfg["n"], cfg["b"], cfg["pp"], cfg["sigma"], cfg["gamma"]
    target = np.empty(n.size)
    for g in np.unique(gamma):
        for layout in (False, True):
            here = (gamma == g) & (cfg["two_d"] == layout)
            if here.any():
                branch = fm.compile_branch(setting.model, gpu, layout, float(g), setting.context,
                                           setting.w, curve=setting.curve_name,
                                           kv_scale=setting.kv_scale)
                target[here] = branch["latency"](n[here], b[here], pp[here], sigma[here])
    drafter = cfg["drafter"]
    if drafter is None:
        return target
    index = drafter["index"]
    draft = np.empty(index.size)
    for layout in (False, True):
        here = drafter["two_d"] == layout
        if here.any():
            at = index[here]
            draft[here] = _drafter_branch(setting, gpu, layout)["latency"](
                n[at], b[at], drafter["pp"][here], drafter["sigma"][here])
    out = target.copy()
    for g in np.unique(gamma[index]):
        here = gamma[index] == g
        out[index[here]] = spec_latency_fn(target[index[here]], draft[here], int(g),
                                           setting.acceptance)
    return out


@dataclass
class FrontierBand:
    """The band of a frontier (module docstring): each point's speed and cost at every draw.

    ``speed`` and ``cost`` (shape (points,)) are the points' own tokens/s per request and $ per
    million output tokens; ``speed_draws`` and ``cost_draws`` (shape (draws, points)) the same
    configurations at each draw; ``spread`` the fields spread and their ranges.
    """

    frontier: Frontier
    speed: np.ndarray
    cost: np.ndarray
    speed_draws: np.ndarray
    cost_draws: np.ndarray
    spread: dict
    draws: int
    seed: int
    quantiles: tuple[float, float] = QUANTILES

    @property
    def speed_low(self) -> np.ndarray:
        return quantile(self.speed_draws, self.quantiles[0])

    @property
    def speed_high(self) -> np.ndarray:
        return quantile(self.speed_draws, self.quantiles[1])

    @property
    def cost_low(self) -> np.ndarray:
        return quantile(self.cost_draws, self.quantiles[0])

    @property
    def cost_high(self) -> np.ndarray:
        return quantile(self.cost_draws, self.quantiles[1])

    def rows(self) -> list[dict]:
        """Per point, in the frontier's order: tokens_per_s_low/high, usd_per_mtok_low/high
        (None where infinite: the configuration does not fit in that share of the draws)."""
        ends = [self.speed_low, self.speed_high, self.cost_low, self.cost_high]
        keys = ("tokens_per_s_low", "tokens_per_s_high", "usd_per_mtok_low", "usd_per_mtok_high")
        return [{key: _finite(values[i]) for key, values in zip(keys, ends, strict=True)}
                for i in range(self.speed.size)]

    def _per_draw(self, read) -> np.ndarray:
        out = np.empty(self.draws)
        for k in range(self.draws):
            speed, cost = self.speed_draws[k], self.cost_draws[k]
            front = pareto_front(np.where(speed > 0, 1.0 / np.where(speed > 0, speed, 1.0),
                                          np.inf), cost)
            out[k] = read(speed[front], cost[front])
        return out

    def max_speed(self) -> tuple[float, float]:
        """Quantiles of the top speed of each draw's frontier (a lower bound of a re-search's)."""
        top = self._per_draw(lambda speed, cost: speed.max() if speed.size else 0.0)
        return tuple(float(quantile(top, q)) for q in self.quantiles)

    def cost_at_speed(self, speed: float) -> tuple[float, float]:
        """Quantiles of the cost at ``speed`` tokens/s per request read off each draw's frontier
        as ``compare`` reads one (log-log interpolation; below its slowest point, its cheapest
        point's cost; beyond its top speed, infinite). An upper bound, draw by draw, of the
        frontier a search at the drawn values would give."""
        def read(fast, cost):
            if not fast.size or speed > fast.max():
                return math.inf
            order = np.argsort(fast)
            if speed <= fast[order[0]]:
                return float(cost[fast >= speed].min())
            return float(np.exp(np.interp(math.log(speed), np.log(fast[order]),
                                          np.log(cost[order]))))
        values = self._per_draw(read)
        return tuple(float(quantile(values, q)) for q in self.quantiles)


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _spread_of(gpu: GPU, price_given: bool, spread) -> dict[str, Range]:
    if spread is None:
        return gpu_ranges(gpu, price_given)
    out = {name: _as_range(value) for name, value in spread.items()}
    if price_given:
        out.pop("price_per_hour", None)
    return out


def frontier_band(setting: Setting, front: Frontier | None = None, *, draws: int = DRAWS,
                  seed: int = SEED, spread: Mapping | None = None,
                  exact: bool = False) -> FrontierBand:
    """The band of the frontier of ``setting`` (``front``, or :func:`~.search.frontier` with
    ``exact``): its configurations re-evaluated at ``draws`` draws of the GPU's spread fields
    (``spread``: field -> :class:`Range` or (low, high); default :func:`gpu_ranges`)."""
    _check_draws(draws, seed)
    front = frontier(setting, exact=exact) if front is None else front
    spread = _spread_of(setting.gpu, setting.price is not None, spread)
    factors = draw_factors(spread, draws, seed)
    cfg = _configuration(setting, front.points)
    speed = np.array([pt.tokens_per_s for pt in front.points])
    cost = np.array([pt.usd_per_mtok for pt in front.points])
    nominal = token_latency(setting, cfg, setting.gpu)
    per_token = cfg["n"] / cfg["b"]
    base_cost = usd_per_million_tokens(per_token * nominal, setting.usd_per_hour)
    speed_draws = np.empty((draws, speed.size))
    cost_draws = np.empty((draws, speed.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(draws):
            gpu = drawn_gpu(setting.gpu, factors, k)
            latency = token_latency(setting, cfg, gpu) if factors else nominal
            price = setting.usd_per_hour if setting.price is not None else gpu.price_per_hour
            speed_draws[k] = speed * (nominal / latency)
            cost_draws[k] = cost * (usd_per_million_tokens(per_token * latency, price) / base_cost)
    return FrontierBand(front, speed, cost, speed_draws, cost_draws, spread, draws, seed)


# --- the serving frontier ------------------------------------------------------------------------

SERVING_QUANTITIES = ("tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
                      "usd_per_mtok_output")


@dataclass
class ServingBand:
    """The band of a serving frontier (module docstring): per point, the draws of its speed per
    user, output tokens/s per GPU and $ per million output tokens (``draws_of[quantity]``, shape
    (draws, points)), and the estimate's band (``estimate``: ln factors, (0, 0) on the other
    curves) combined with them at the ends."""

    nominal: dict
    draws_of: dict
    estimate: tuple[float, float]
    spread: dict
    draws: int
    seed: int
    quantiles: tuple[float, float] = QUANTILES

    def low(self, quantity: str) -> np.ndarray:
        """The low end: the draws' low quantile times e^estimate_low (for the cost: the high
        quantile's counterpart, e^-estimate_high on the draws' low quantile)."""
        return self._end(quantity, 0)

    def high(self, quantity: str) -> np.ndarray:
        return self._end(quantity, 1)

    def _end(self, quantity: str, which: int) -> np.ndarray:
        values = quantile(self.draws_of[quantity], self.quantiles[which])
        if quantity == "usd_per_mtok_output":  # a cost falls as the rate rises
            return values * math.exp(-self.estimate[1 - which])
        return values * math.exp(self.estimate[which])

    def rows(self) -> list[dict]:
        """Per point, in the frontier's order: ``<quantity>_low`` and ``<quantity>_high`` for
        each of :data:`SERVING_QUANTITIES` (None where infinite)."""
        ends = {f"{q}_{end}": (self.low(q) if end == "low" else self.high(q))
                for q in SERVING_QUANTITIES for end in ("low", "high")}
        size = len(self.nominal[SERVING_QUANTITIES[0]])
        return [{key: _finite(values[i]) for key, values in ends.items()} for i in range(size)]


def serving_band(work, front=None, *, draws: int = DRAWS, seed: int = SEED,
                 spread: Mapping | None = None, estimate_band: bool = True) -> ServingBand:
    """The band of the serving frontier of ``work`` (``front``, or
    :func:`~.serving_frontier.serving_frontier`): its configurations re-evaluated at the draws
    of the GPU's spread fields, combined on the 'estimate' curve with the estimate's band (unless
    ``estimate_band`` is false)."""
    from ..serving import serving_frontier as sf
    from ..serving import step_time as st

    _check_draws(draws, seed)
    front = sf.serving_frontier(work) if front is None else front
    eff = st.fitted(work.gpu, work.engine) if work.curve == "estimate" else None
    spread = _spread_of(work.gpu, work.price is not None, spread)
    factors = draw_factors(spread, draws, seed)
    nominal = {q: np.array([getattr(p, q) for p in front.points], dtype=float)
               for q in SERVING_QUANTITIES}
    base = sf.evaluate_points(work, front.points, eff)
    out = {q: np.empty((draws, nominal[q].size)) for q in SERVING_QUANTITIES}
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(draws):
            gpu = drawn_gpu(work.gpu, factors, k)
            here = (sf.evaluate_points(dataclasses.replace(work, gpu=gpu), front.points, eff)
                    if factors else base)
            for q in SERVING_QUANTITIES:
                out[q][k] = nominal[q] * (here[q] / base[q])
    est = (eff.band_low, eff.band_high) if eff is not None and estimate_band else (0.0, 0.0)
    return ServingBand(nominal, out, est, spread, draws, seed)
