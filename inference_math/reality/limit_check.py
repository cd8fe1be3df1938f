"""Published measurements against the limit: efficiency = measured / limit, never above 1.

The limit (the curve 'limit' of :mod:`inference_math.fullmodel.physical_rules`) is the full model
under the physical rules at the hardware's peaks: no deployment described by its model, GPU,
precision and speed per user can serve more output tokens per second per GPU. For each public
measurement (:func:`inference_math.reality.measurements.frontier_conditions`) the limit is read
at the measurement's conditions, each unstated one taken at its most favourable value, so that
the comparison can only flatter the limit's rival:

- the decode context: the prompt's length (the shortest context any output token sees);
- the KV cache: its stated width, else 8 bits (the narrowest cache these engines serve);
- the weights: their stated width, else the narrowest the GPU has a FLOP/s figure for;
- speculation: a step yields at most T tokens (the stated mean acceptance; 8 where speculation
  is stated without it; the model's own multi-token-prediction layers plus one where the source
  does not say whether they were used), and a step takes at least a plain forward pass, so the
  limit at speed v is T times the plain limit's throughput at speed v/T;
- the instance: any size from the weights' floor up (the search's continuous sizes), and the
  cheapest point at least as fast as the measurement (:meth:`Frontier.cheapest_at`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..fullmodel.search import Frontier, Setting, frontier
from ..presets.hardware import get_gpu
from .measurements import FrontierConditions, frontier_conditions

UNSTATED_KV_BITS = 8
# Tokens a speculative step yields at most when a source states speculation but not its
# acceptance: every drafted token of the longest drafts these engines use (EAGLE-3's 7) and the
# target's own.
UNSTATED_TOKENS_PER_STEP = 8.0


@dataclass(frozen=True)
class LimitComparison:
    """One measurement against the limit at its conditions."""

    conditions: FrontierConditions
    limit_tok_s_per_gpu: float | None  # None: the limit cannot be read (see ``why``)
    tokens_per_step: float  # T: tokens a speculative step can yield (1 without speculation)
    kv_bits: float
    context: float
    why: str = ""

    @property
    def measured(self) -> float | None:
        return self.conditions.output_tok_s_per_gpu

    @property
    def efficiency(self) -> float | None:
        """Measured output tokens/s per GPU over the limit's at the measurement's speed."""
        if self.limit_tok_s_per_gpu is None or self.measured is None:
            return None
        return self.measured / self.limit_tok_s_per_gpu


def throughput_at(front: Frontier, speed: float) -> float:
    """The most output tokens/s per GPU the frontier serves at ``speed`` tokens/s per user or
    faster (0 when no point is that fast)."""
    rates = [pt.batch * pt.tokens_per_s / pt.gpus for pt in front.points
             if pt.tokens_per_s >= speed]
    return max(rates, default=0.0)


def tokens_per_step(cond: FrontierConditions, model) -> float:
    """T of the module docstring: the stated mean acceptance; where speculation is stated without
    it, :data:`UNSTATED_TOKENS_PER_STEP`; where the source does not say, the model's own MTP
    layers plus one."""
    if cond.speculative is False:
        return 1.0
    if cond.spec_accept_len is not None:
        return float(cond.spec_accept_len)
    if cond.speculative:
        return UNSTATED_TOKENS_PER_STEP
    mtp = getattr(getattr(model, "architecture", None), "n_mtp", 0) or 0
    return 1.0 + mtp


def narrowest_weight_bits(gpu) -> int:
    """The narrowest weights the GPU has a FLOP/s figure for: an unstated width at its most
    favourable."""
    return min(gpu.flops_by_weight_bits)


def limit_setting(cond: FrontierConditions) -> tuple[Setting, float]:
    """The limit's Setting at a measurement's conditions and its decode context."""
    model, gpu = cond.model_object(), get_gpu(cond.gpu)
    context = cond.input_len if cond.input_len is not None else (cond.avg_kv_len or 0.0)
    kv_bits = cond.kv_bits or UNSTATED_KV_BITS
    weight_bytes = (cond.weight_bits or narrowest_weight_bits(gpu)) / 8
    if math.isclose(weight_bytes, model.weight_bytes, rel_tol=0.2):
        weight_bytes = None  # the model's own mixed precision (FP8 blocks, MXFP4 experts)
    setting = Setting(model, gpu, weight_bytes=weight_bytes, context=float(context),
                      curve="limit", kv_bits=kv_bits, label=f"row {cond.row}")
    return setting, float(context)


def compare(cond: FrontierConditions) -> LimitComparison:
    """One measurement against the limit (module docstring)."""
    if cond.output_tok_s_per_gpu is None:
        return LimitComparison(cond, None, 1.0, float("nan"), float("nan"),
                               "no output tokens/s per GPU stated or derivable")
    setting, context = limit_setting(cond)
    steps = tokens_per_step(cond, setting.model)
    speed = (cond.tok_s_per_user or 0.0) / steps
    value = steps * throughput_at(frontier(setting), speed)
    return LimitComparison(cond, value, steps, float(setting.kv_bits), context)


def compare_all() -> list[LimitComparison]:
    """Every public measurement with an output throughput, against the limit."""
    return [compare(cond) for cond in frontier_conditions()
            if cond.output_tok_s_per_gpu is not None]
