"""The limit's time to first token: no engine returns a prompt's first token before the GPUs
serving it could have done the prompt's arithmetic at their peaks.

A prompt of T tokens costs the FLOPs of one forward pass over T tokens at no prior context
(its own tokens attend causally) and the logits of its last token, each product at the peak
rate of its precision (eq-phys-flop-time, the limit's arithmetic time). However the GPUs
divide that work (tensor, expert, pipeline, sequence or context parallelism), it takes at
least those FLOPs over the peak of all of them. So a measured TTFT can never lie below

    t_TTFT ≥ F(T) / (N · C)

whatever else the GPUs do at the same time (other requests only add work), and whatever the
arrival of requests. Conditions a source leaves open take their most favourable value, as in
:mod:`.limit_check`: the narrowest weights the GPU has a FLOP/s figure for, an 8-bit cache,
every GPU of the row serving the prompt (the prefill pool's where the row states one).

F(T) = a·T + c·T² is convex, so for prompts of varied lengths the mean TTFT is at least the
floor at the mean length (Jensen's inequality): the floor holds for a stated mean too.
Prefix caching could beat it (a cached prefix skips its arithmetic); the benchmarks read here
send random or distinct prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.validation import InputError
from ..presets.hardware import get_gpu
from ..serving.serving_frontier import Workload, prompt_floor
from .limit_check import UNSTATED_KV_BITS, narrowest_weight_bits


@dataclass(frozen=True)
class TtftFloor:
    """One measured TTFT against the limit's floor (module docstring)."""

    point_id: str
    measured_ms: float
    floor_ms: float
    gpus: float
    input_len: float

    @property
    def ratio(self) -> float:
        """The floor over the measured time: 1 would be an engine at the floor, above 1 a
        measurement the limit says is impossible."""
        return self.floor_ms / self.measured_ms


def ttft_floor_s(model, gpu, gpus: float, input_len: float, weight_bits: float | None = None,
                 kv_bits: float | None = None) -> float:
    """Seconds of the prompt's arithmetic on ``gpus`` GPUs at their peaks (module docstring),
    the logits of its last token only; ``weight_bits`` and ``kv_bits`` None: the most
    favourable the GPU serves."""
    work = Workload(model, gpu, float(input_len), 1.0,
                    weight_bits=weight_bits or narrowest_weight_bits(gpu),
                    kv_bits=kv_bits or UNSTATED_KV_BITS, curve="limit")
    return float(prompt_floor(work, np.array([float(gpus)]))[0])


def floor_of(point) -> TtftFloor | None:
    """A gathered point (:mod:`.measured_points`) that states a TTFT, its prompt's length and
    its GPUs, against the floor; None when it states none of these or its model or GPU cannot
    be represented."""
    from .measured_points import _model
    gpus = point["prefill_gpus"] if point["disaggregated"] == 1 and point["prefill_gpus"] \
        else point["gpus"]
    if not (point["ttft_ms"] and point["input_len"] and gpus):
        return None
    try:
        model, gpu = _model(str(point["model"])), get_gpu(str(point["gpu"]))
        gpu.flops(model.weight_bits if point["weight_bits"] is None
                  else round(point["weight_bits"]))
        floor = ttft_floor_s(model, gpu, gpus, point["input_len"], point["weight_bits"],
                             point["kv_bits"])
    except InputError:
        return None
    return TtftFloor(point.point_id, float(point["ttft_ms"]), 1e3 * floor, float(gpus),
                     float(point["input_len"]))


def public_floors() -> list[TtftFloor]:
    """Every gathered public point with a TTFT against the floor."""
    from .measured_points import public_points
    return [f for f in map(floor_of, public_points()) if f is not None]
