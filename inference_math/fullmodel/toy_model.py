"""Numbers from the toy model of Erdil (2025), section 2: Table 1 and Figure 1.

Everything evaluates the SymPy derivations of :mod:`latency_wall` (eqs. 3, 9, 13-14: eq-wall-*)
and the memory floor of :mod:`sharding` (eq-sharding-min-chips) through the NumPy code generated
from them (:mod:`.formulas_numpy`, by :mod:`inference_math.codegen.formulas_codegen`, which also
composes the optimum above the floor); no formula is written again here, and no SymPy runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.units import usd_per_million_tokens
from ..core.validation import InputError, of_kind, positive, positive_int
from ..presets.hardware import GPU
from ..presets.models import Model
from . import formulas_numpy as gen
from .pareto import pareto_front, pareto_front_thresholds


@dataclass(frozen=True)
class ToyMaxSpeed:
    """Eq. 13-14 evaluated for one model on one GPU, on at least the GPUs that hold the weights."""

    model: str
    gpu: str
    n_gpu_star: float
    min_latency_s: float
    n_gpu_floor: float = 1.0  # eq-sharding-min-chips: the fewest GPUs whose HBM holds the weights
    memory_bound: bool = False  # the floor, not eq. 13, sets the instance size

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.min_latency_s


def _generated(fn, *values):
    """A generated function at float64 ``values`` (as SymPy's compiled functions took them)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return fn(*(np.asarray(v, dtype=float) for v in values))


def max_speed(model: Model, gpu: GPU, t_hop: float = 1e-6, n_reduce: float = 4,
              capped: bool = False) -> ToyMaxSpeed:
    """Maximum tokens/s per request and the instance size that reaches it (eqs. 13-14).

    Table 1 of the paper uses t_hop = 1 µs, n_reduce = 4 and the uncapped HBM bandwidth. The
    instance is never smaller than the GPUs that hold the weights (eq-sharding-min-chips).
    """
    of_kind("model", model, Model)
    of_kind("gpu", gpu, GPU)
    t_hop = positive("t_hop", t_hop)
    n_reduce = positive("n_reduce", n_reduce)
    values = (model.weight_bytes, model.total_params, gpu.bandwidth(capped), model.layers,
              n_reduce, t_hop, gpu.hbm_bytes)
    # eq-sharding-min-chips, and eqs. 13-14 above it (eq. 9 at the floor where the floor binds)
    floor, n_star, t_min, binds = (float(_generated(fn, *values)) for fn in (
        gen.toy_floor, gen.toy_n_star, gen.toy_min_latency, gen.toy_floor_binds))
    if not all(np.isfinite([floor, n_star, t_min])) or t_min <= 0:
        raise InputError(f"t_hop = {t_hop!r} s with n_reduce = {n_reduce!r} gives no finite "
                         f"optimum for {model.name} on {gpu.name}")
    return ToyMaxSpeed(model.name, gpu.name, n_star, t_min, floor, bool(binds))


@dataclass(frozen=True)
class Frontier:
    """A cost-speed frontier; arrays run from the fastest point to the cheapest."""

    label: str
    tokens_per_s: np.ndarray  # per request
    usd_per_mtok: np.ndarray
    n_gpu: np.ndarray
    batch: np.ndarray

    def cost_at_speed(self, speed: float) -> float:
        """Cheapest $/Mtok on the frontier at ``speed`` tok/s or faster (nan if too fast)."""
        ok = self.tokens_per_s >= speed
        return float(self.usd_per_mtok[ok].min()) if ok.any() else float("nan")


def reference_code_frontier(
    model: Model,
    gpu: GPU,
    demand_cap: float | None = None,
    price_per_hour: float | None = None,
    grid: int = 400,
    t_hop: float = 1e-6,
    t_base: float = 6e-6,
    n_reduce: float | None = None,
    capped: bool = True,
    exact: bool = False,
) -> Frontier:
    """The Figure 1 frontier as the paper's code computed it.

    Token latency is eq. 3 with the reference code's all-reduce (a 6 µs base per collective) at
    capped bandwidth and FLOP/s. The grid is ``grid`` x ``grid`` log-spaced points: instance
    sizes from the fewest GPUs that hold the weights (fractional allowed) to 2^18, batches from
    1 to 2^18. Points whose weights and KV cache (one token of context) do not fit are
    infeasible; points whose aggregate throughput b/latency exceeds ``demand_cap`` tok/s are
    excluded. ``exact`` selects the exact frontier instead of the code's 1,000 thresholds.
    """
    of_kind("model", model, Model)
    of_kind("gpu", gpu, GPU)
    # zero is a network without hop latency or without a fixed cost: still a finite latency
    t_hop = positive("t_hop", t_hop, allow_zero=True)
    t_base = positive("t_base", t_base, allow_zero=True)
    grid = positive_int("grid", grid)
    if grid < 2:
        raise InputError(f"grid must be at least 2 points per axis, got {grid}")
    price = positive("price_per_hour", gpu.price_per_hour if price_per_hour is None else price_per_hour)
    if demand_cap is not None:
        demand_cap = positive("demand_cap", demand_cap)
    n_reduce = (2 if model.parallel_attention else 4) if n_reduce is None else n_reduce
    n_reduce = positive("n_reduce", n_reduce)
    weights = model.weights_bytes
    n_min = weights / gpu.hbm_bytes
    n_gpu = np.logspace(np.log2(n_min), 18, grid, base=2.0)[:, None]
    batch = np.logspace(0, 18 + np.log2(model.sparsity), grid, base=2.0)[None, :]
    # eq. 3 (eq-wall-token-latency) with the reference code's all-reduce (eq-wall-all-reduce-code)
    latency = np.broadcast_to(_generated(
        gen.toy_reference_latency, n_gpu, batch, model.weight_bytes, model.total_params,
        gpu.bandwidth(capped), gpu.flops(model.weight_bits, capped), model.layers, n_reduce,
        t_hop, t_base), np.broadcast_shapes(n_gpu.shape, batch.shape))
    fits = n_gpu * gpu.hbm_bytes >= weights + model.kv_bytes_per_token * 1 * batch
    latency = np.where(fits, latency, np.inf)
    if demand_cap is not None:
        latency = np.where(batch / latency <= demand_cap, latency, np.inf)
    gpu_seconds = n_gpu * latency / batch
    pick = pareto_front(latency, gpu_seconds) if exact else pareto_front_thresholds(latency, gpu_seconds)
    if pick.size == 0:
        raise InputError(f"{model.name} cannot be served on {gpu.name}: no feasible configuration")
    n_flat = np.broadcast_to(n_gpu, latency.shape).ravel()[pick]
    b_flat = np.broadcast_to(batch, latency.shape).ravel()[pick]
    lat = latency.ravel()[pick]
    usd = usd_per_million_tokens(gpu_seconds.ravel()[pick], price)
    return Frontier(model.name, 1 / lat, usd, n_flat, b_flat)
