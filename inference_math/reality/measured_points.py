"""Measured serving points (the gathered public ones, or a user's own file) and what each curve
says at their conditions.

A points file is a CSV with the columns of :data:`COLUMNS` (``data/measurements/README.md``
describes them; ``points_*.csv`` there are the public ones). :func:`read_points` checks every
value and names the first bad field with its row; :func:`probe` turns a point into the grid of
steps its scenario needs; :meth:`Probe.predict` composes them, under a curve, into the
quantities the source measured:

- ``concurrency`` (a fixed number of requests in flight) and ``decode-only``: b = concurrency
  per instance decoding with chunked prefill at the engines' token budget of
  :data:`ENGINE_CHUNK` tokens (or the batch's share b·T_in/T_out when larger):
  eq-serve-aggregated-rate, 1/eq-serve-mean-step (decode-only: b over N·t_dec); the TTFT over a
  run of :func:`run_length` requests whose first b arrive at once (eq-queue-run-mean,
  eq-queue-run-quantile);
- ``rate``: the decode batch its arrivals sustain (eq-serve-open-loop-rate), the TTFT with the
  wait for the prompt work queued ahead, an M/D/1 queue (eq-queue-open-mean,
  eq-queue-open-quantile);
- ``static-batch`` (and ``offline`` with a stated number of requests sent at once): the batch
  prefilled in one pass, then T_out decode steps at the mean context; output tokens per second
  per GPU b·T_out/(N·(t_pre + T_out·t_dec));
- ``offline``: the most output tokens per second per GPU of any batch and chunk at the stated
  layout (or any instance up to the stated GPUs when it is not stated);
- ``server`` and ``interactive``: the same under the scenario's TPOT and TTFT limits;
- ``prefill-only``: input tokens per second per GPU of a pass of P prompts (the most over P
  when the source gives no batch).

The TTFT of a rate or a concurrency row is the statistic its note states, a mean, a median or a
percentile (:func:`ttft_statistic`; a mean where it states none); under the limit every row's
TTFT is one prompt's floor, which no statistic of any run lies below.

An instance is max(``tp``·``pp``, ``ep``) GPUs (the model runs them as one stage); attention
is data-parallel over it where ``dp_attention`` is 1 (SGLang's and vLLM's DP attention), else
over N/(tp·pp) groups of tp·pp GPUs; the row's GPUs are gpus/N instances. A row that leaves
the weight width open is not compared; one that leaves the cache's width open is read at the
model's own under the estimate and at 8 bits (the most favourable the engines offer) under the
limit.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
import re
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from ..core.validation import InputError
from ..presets.hardware import GPU, get_gpu
from ..presets.models import get_model
from ..serving import serving_frontier as sf
from ..serving import step_time as st

COLUMNS = ("point_id", "source_id", "source", "source_detail", "model", "gpu", "gpus",
           "weight_bits", "kv_bits", "engine", "engine_version", "tp", "ep", "pp", "dp_attention",
           "disaggregated", "prefill_gpus", "decode_gpus", "scenario", "concurrency", "request_rate",
           "input_len", "output_len", "ttft_limit_ms", "tpot_limit_ms", "spec_decode", "spec_accept_len",
           "output_tok_s_per_gpu", "tok_s_per_user", "tpot_ms", "ttft_ms", "input_tok_s_per_gpu",
           "derived", "note")
REQUIRED = ("model", "gpu", "gpus", "scenario", "input_len", "output_len")
NUMBERS = ("gpus", "weight_bits", "kv_bits", "tp", "ep", "pp", "dp_attention", "disaggregated",
           "prefill_gpus", "decode_gpus", "concurrency", "request_rate", "input_len", "output_len",
           "ttft_limit_ms", "tpot_limit_ms", "spec_accept_len", "output_tok_s_per_gpu",
           "tok_s_per_user", "tpot_ms", "ttft_ms", "input_tok_s_per_gpu")
MEASURED = ("output_tok_s_per_gpu", "tok_s_per_user", "tpot_ms", "ttft_ms", "input_tok_s_per_gpu")
SCENARIOS = ("concurrency", "rate", "offline", "server", "interactive", "static-batch",
             "decode-only", "prefill-only")
PUBLIC_FILES = ("points_mlperf.csv", "points_vendors.csv", "points_engines.csv",
                "points_benchmarks.csv", "points_vendors_more.csv", "points_engines_more.csv")
#: The share of the output tokens its arrivals bring below which a request-rate run fell behind:
#: a run of 1,000 Poisson arrivals spreads its rate by about 1/√1,000 ≈ 3%, so a shortfall beyond
#: 10% is the engine's, not chance's.
KEPT_UP = 0.9
#: Prompt tokens an engine's step carries by default (vLLM's max_num_batched_tokens, SGLang's
#: chunked_prefill_size and TensorRT-LLM's max_num_tokens are all 8,192 in their defaults).
ENGINE_CHUNK = 8192.0
#: Hugging Face ids of the gathered points whose architecture is another id's (fine-tunes,
#: re-quantized checkpoints), and models the presets name.
MODEL_ALIASES = {
    "meta-llama/llama-2-70b-chat-hf": "measurements:LLAMA2_70B",
    "meta-llama/llama-2-70b-hf": "measurements:LLAMA2_70B",
    "meta-llama/llama-2-13b-hf": "measurements:LLAMA2_13B",
    "meta-llama/llama-2-7b-hf": "measurements:LLAMA_7B",
    "meta-llama/llama-3.1-70b-instruct": "llama-3.3-70b",
    "meta-llama/llama-3.3-70b-instruct": "llama-3.3-70b",
    "neuralmagic/meta-llama-3.1-70b-instruct-fp8": "llama-3.3-70b",
    "meta-llama/llama-3.1-8b-instruct": "llama-3.1-8b",
    "meta-llama/llama-3.1-8b": "llama-3.1-8b",
    "neuralmagic/meta-llama-3.1-8b-fp8": "llama-3.1-8b",
    "meta-llama/llama-3.1-405b-instruct": "llama-3.1-405b-config",
    "nousresearch/hermes-3-llama-3.1-405b-fp8": "llama-3.1-405b-config",
    "mistralai/mixtral-8x7b-instruct-v0.1": "mixtral-8x7b",
    "mistralai/mixtral-8x22b-instruct-v0.1": "mixtral-8x22b",
    "deepseek-ai/deepseek-r1": "deepseek-v3",
    "deepseek-ai/deepseek-v3": "deepseek-v3",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    "eleutherai/gpt-j-6b": "gpt-j-6b",
    "qwen/qwen3-235b-a22b": "qwen3-235b-a22b",
    "qwen/qwen3-235b-a22b-instruct-2507": "qwen3-235b-a22b",
    "qwen/qwen3-235b-a22b-instruct-2507-fp8": "qwen3-235b-a22b",
    "qwen/qwen3-235b-a22b-fp8": "qwen3-235b-a22b",
    "deepseek-ai/deepseek-r1-0528": "deepseek-v3",
    "nvidia/deepseek-r1-0528-fp4": "deepseek-v3",
    "nvidia/deepseek-r1-fp4": "deepseek-v3",
    "qwen/qwen3-8b-fp8": "hf_configs/Qwen--Qwen3-8B.config.json",
    "qwen/qwen3-30b-a3b-fp8": "hf_configs/Qwen--Qwen3-30B-A3B.config.json",
    "qwen/qwen3-32b-fp8": "hf_configs/Qwen--Qwen3-32B.config.json",
    "deepseek-ai/deepseek-v3.2": "hf_configs/deepseek-ai--DeepSeek-V3.2.config.json",
}


class PointsError(InputError):
    """A bad points file, naming the row and field (``field``)."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass(frozen=True)
class Point:
    """One measured point: its text fields as given, its numbers as floats (None: not stated)."""

    values: dict
    line: int = 0

    def __getitem__(self, name):
        return self.values.get(name)

    @property
    def point_id(self) -> str:
        return str(self.values.get("point_id") or f"row {self.line}")

    @property
    def primary(self) -> str | None:
        """The quantity a point is judged by: output tokens/s per GPU, else tokens/s per user
        (or 1000/TPOT), else input tokens/s per GPU of a prefill-only row; at a request rate
        tokens/s per user first."""
        if self["scenario"] == "prefill-only":
            return "input_tok_s_per_gpu" if self["input_tok_s_per_gpu"] else None
        # at a rate the throughput is the rate's (a finite run's arrivals come a little early or
        # late), and the speed per user is what the rate costs, unless the run fell behind
        if self["scenario"] == "rate" and not self.overloaded and (self["tok_s_per_user"]
                                                                   or self["tpot_ms"]):
            return "tok_s_per_user"
        for name in ("output_tok_s_per_gpu", "tok_s_per_user"):
            if self[name]:
                return name
        return "tok_s_per_user" if self["tpot_ms"] else None

    @property
    def offered(self) -> float | None:
        """Output tokens per second per GPU that a request-rate point's arrivals bring."""
        if self["scenario"] != "rate" or not self["request_rate"]:
            return None
        return self["request_rate"] * self["output_len"] / self["gpus"]

    @property
    def overloaded(self) -> bool:
        """A request-rate run that fell behind its arrivals: it served under
        :data:`KEPT_UP` of the output tokens they brought, so its queue grew and it ran at the
        most throughput its engine allowed, as an offline run does."""
        offered, served = self.offered, self["output_tok_s_per_gpu"]
        return bool(offered and served and served < KEPT_UP * offered)

    @property
    def compared(self) -> str | None:
        """The quantity a user's point is compared on: the :attr:`primary` rate, but a time
        where the row states no rate of its own: its TPOT (a TPOT-only row) or its TTFT (a
        TTFT-only row)."""
        if self["scenario"] != "prefill-only" and not self["output_tok_s_per_gpu"] \
                and not self["tok_s_per_user"] and self["tpot_ms"]:
            return "tpot_ms"
        if self.primary is None and self["ttft_ms"]:
            return "ttft_ms"
        return self.primary

    def measured(self, name: str) -> float | None:
        if name == "tok_s_per_user" and not self[name] and self["tpot_ms"]:
            return 1000.0 / self["tpot_ms"]
        return self[name]


#: Quantities that are times (a smaller value is faster).
TIMES = ("tpot_ms", "ttft_ms")

#: How each scenario's requests arrive, as the model reads them (the module docstring): a short
#: name and what it means.
ARRIVALS = {
    "concurrency": ("closed loop", "the stated requests always in flight, each replaced as it "
                                   "ends (chunked prefill in the decode steps), the first of them "
                                   "sent at once (eq-queue-run-mean)"),
    "rate": ("open loop", "requests arriving at a stated rate: the decode batch Little's law gives "
                          "at that rate (eq-serve-open-loop-rate), a prompt waiting for the prompt "
                          "work queued ahead and the step it arrives in (eq-queue-open-mean)"),
    "offline": ("all at once", "every request queued at the start: the most throughput of any "
                               "batch"),
    "server": ("best under limits", "the most throughput of any load within the TTFT and TPOT "
                                    "limits"),
    "interactive": ("best under limits", "the most throughput of any load within the TTFT and "
                                         "TPOT limits"),
    "static-batch": ("static batch", "one batch prefilled together, then decoded together"),
    "decode-only": ("steady decode", "a batch decoding, no prompts arriving"),
    "prefill-only": ("prefill only", "prompts only: one pass of a batch of them"),
}
BURST = ("burst", "the stated requests sent at once: one static batch")


def arrivals(point: Point) -> tuple[str, str]:
    """The arrival model the comparison of ``point`` uses: its short name and its meaning
    (:data:`ARRIVALS`)."""
    if point["scenario"] == "offline" and point["concurrency"]:
        return BURST
    return ARRIVALS[point["scenario"]]


def _number(text: str, name: str, where: str) -> float | None:
    text = text.strip()
    if text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise PointsError(name, f"{where}: not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise PointsError(name, f"{where}: must be a finite number ≥ 0, got {text!r}")
    return value


def parse_points(text: str, origin: str = "points", strict: bool = True) -> list[Point]:
    """Points of a CSV text ('#' lines skipped); PointsError naming the first bad field.

    ``strict=False`` (the gathered public files) keeps a row that leaves a needed condition
    empty; :func:`resolve` then gives it as the reason the row is not compared."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    if not lines or not lines[0].strip():
        raise PointsError("header", f"{origin} has no header row")
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    header = reader.fieldnames or []
    if strict:
        unknown = [name for name in header if name not in COLUMNS]
        if unknown:
            close = difflib.get_close_matches(unknown[0], COLUMNS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise PointsError(unknown[0], f"{origin} has an unknown column {unknown[0]!r}{hint}")
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise PointsError(missing[0], f"{origin} has no column {missing[0]!r} (needed: "
                                      f"{', '.join(REQUIRED)})")
    if not any(name in header for name in MEASURED):
        raise PointsError("output_tok_s_per_gpu", f"{origin} has none of the measured columns "
                                                  f"({', '.join(MEASURED)})")
    points = []
    for k, row in enumerate(reader, start=2):
        where = f"{origin} row {k}"
        if None in row or any(v is None for v in row.values()):
            raise PointsError("row", f"{where}: has {len(header)} columns in the header but "
                                     f"a different number of fields")
        values = {name: (row.get(name) or "").strip() for name in COLUMNS}
        for name in NUMBERS:
            values[name] = _number(values[name], name, where)
        for name in REQUIRED:
            if values[name] in ("", None) and strict:
                raise PointsError(name, f"{where}: is empty")
        if values["scenario"] not in SCENARIOS:
            raise PointsError("scenario", f"{where}: must be one of {', '.join(SCENARIOS)}, "
                                          f"got {values['scenario']!r}")
        if 0 in (values["gpus"], values["input_len"], values["output_len"]):
            raise PointsError("gpus", f"{where}: gpus, input_len and output_len must be > 0")
        if not any(values[name] for name in MEASURED):
            raise PointsError("output_tok_s_per_gpu", f"{where}: no measured value")
        points.append(Point(values, k))
    if not points:
        raise PointsError("rows", f"{origin} has no rows")
    return points


def read_points(path) -> list[Point]:
    """The points of a user's CSV file (PointsError naming the field on bad input)."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise PointsError("file", f"cannot read {path}: {exc.__class__.__name__}") from None
    points = parse_points(text, path.name)
    for point in points:
        _check_names(point, f"{path.name} row {point.line}")
    return points


def _check_names(point: Point, where: str) -> None:
    """PointsError when a row names a model or a GPU nothing knows (a known GPU without the
    full model's collectives is kept: :func:`resolve` gives it as the reason)."""
    try:
        _model(str(point["model"]))
    except InputError:
        raise PointsError("model", f"{where}: unknown model {point['model']!r} (a preset, a "
                                   "bundled Hugging Face id or a path to a config.json)") from None
    try:
        get_gpu(str(point["gpu"]))
    except InputError:
        raise PointsError("gpu", f"{where}: unknown GPU {point['gpu']!r} (see "
                                 "'inference-math gpus', or a path to a GPU file)") from None


@cache
def public_points() -> tuple[Point, ...]:
    """Every gathered public point (``data/measurements/points_*.csv``), in file order."""
    out = []
    for name in PUBLIC_FILES:
        text = (resources.files("inference_math") / "data" / "measurements" / name).read_text()
        out += parse_points(text, name, strict=False)
    return tuple(out)


# --- from a point to a deployment -------------------------------------------------------------

def _model(name: str):
    key = MODEL_ALIASES.get(name.lower())
    if key is None:
        path = resources.files("inference_math") / "data" / "hf_configs" / \
            f"{name.replace('/', '--')}.config.json"
        if "/" in name and path.is_file():
            return get_model(str(path))
        return get_model(name)
    if key.startswith("hf_configs/"):
        return get_model(str(resources.files("inference_math") / "data" / key))
    if key.startswith("measurements:"):
        from . import measurements
        return getattr(measurements, key.split(":")[1])
    return get_model(key)


@dataclass(frozen=True)
class Resolved:
    """A point's model, GPU and instance, or why it cannot be compared (``reason``)."""

    point: Point
    model: object = None
    gpu: GPU | None = None
    n: float = 0.0  # GPUs of one instance (0: not stated, searched up to the row's GPUs)
    sigma: float = 1.0
    reason: str = ""


def resolve(point: Point, times: bool = False) -> Resolved:
    """The point's model and GPU objects and instance, or the reason it is not compared; with
    ``times`` a point that states only a time (:attr:`Point.compared`) is compared too."""
    for name in REQUIRED:
        if point[name] in ("", None):
            return Resolved(point, reason=f"{name} not stated")
    if (point.compared if times else point.primary) is None:
        return Resolved(point, reason="no measured rate")
    spec = str(point["spec_decode"] or "").lower()
    if spec and spec != "none":
        return Resolved(point, reason="speculative decoding")
    if point["scenario"] == "rate" and not point["request_rate"]:
        return Resolved(point, reason="request rate not stated")
    if point["disaggregated"] == 1 and point["scenario"] not in ("decode-only", "prefill-only"):
        return Resolved(point, reason="disaggregated pools of stated sizes")
    try:
        model = _model(str(point["model"]))
    except InputError:
        return Resolved(point, reason=f"model {point['model']} not represented")
    try:
        gpu = get_gpu(str(point["gpu"]))
        gpu.require_collective_model()
        bits = point["weight_bits"]
        gpu.flops(model.weight_bits if bits is None else round(bits))
    except InputError:
        return Resolved(point, reason=f"GPU {point['gpu'] or '(unstated)'} not a full-model preset")
    tp, pp, ep = point["tp"], point["pp"] or 1.0, point["ep"]
    if point["scenario"] == "concurrency" and not point["concurrency"]:
        return Resolved(point, reason="concurrency not stated")
    if tp is None:
        if point["concurrency"] or point["scenario"] == "rate":
            return Resolved(point, reason="layout not stated")
        return Resolved(point, model, gpu, 0.0, 1.0)
    n = max(tp * pp, ep or 1.0)
    return Resolved(point, model, gpu, n, n if point["dp_attention"] == 1 else n / (tp * pp))


def favourable_bits(gpu: GPU) -> float:
    """The narrowest weights a GPU computes with natively: 4 bits where it has FP4 tensor cores
    (its 4-bit FLOP/s exceed its 8-bit ones), else 8."""
    rates = gpu.flops_by_weight_bits
    return 4.0 if rates.get(4, 0.0) > rates.get(8, 0.0) else 8.0


@dataclass
class Probe:
    """The steps a point's scenario needs, on its deployment: ``steps`` (decode and chunked
    decode at the mean context) and ``passes`` (prefill passes at an empty context), each a
    grid of (instance, σ, batch, q); their raw terms are kept for the estimate's fit. Rows of
    ``steps`` marked ``helper`` are no candidate of their own: they give another row's TTFT a
    step it needs (:func:`probe`), at ``burst_index`` (a step carrying a whole budget of prompt
    tokens) and ``own_index`` (a step carrying one prompt's chunk)."""

    resolved: Resolved
    steps: sf._Grid
    passes: sf._Grid | None
    work: sf.Workload
    dec_index: np.ndarray
    _raw: dict = field(default_factory=dict)
    helper: np.ndarray | None = None
    burst_index: np.ndarray | None = None
    own_index: np.ndarray | None = None

    def _helper(self) -> np.ndarray:
        return np.zeros(self.steps.n.shape, dtype=bool) if self.helper is None else self.helper

    @property
    def estimable(self) -> bool:
        """The estimate needs the weights' width; the limit takes the most favourable."""
        return self.resolved.point["weight_bits"] is not None

    def work_for(self, curve: str) -> sf.Workload:
        """The workload a curve reads: under the limit, an unstated cache width at 8 bits and
        unstated weights at :func:`favourable_bits`."""
        point = self.resolved.point
        if curve != "limit" or (point["kv_bits"] is not None and point["weight_bits"]
                                is not None):
            return self.work
        from dataclasses import replace
        return replace(self.work, kv_bits=point["kv_bits"] or 8.0,
                       weight_bits=point["weight_bits"] or favourable_bits(self.work.gpu))

    def latencies(self, curve: str, eff=None) -> tuple[np.ndarray, np.ndarray | None]:
        """Latency of every step and pass under ``curve``."""
        work = self.work_for(curve)
        out = []
        for name, grid, context in (("steps", self.steps, work.context),
                                    ("passes", self.passes, 0.0)):
            if grid is None:
                out.append(None)
                continue
            if curve == "estimate":
                if name not in self._raw:
                    self._raw[name] = sf.mixed_raw(self.work, grid) if name == "steps" else \
                        st.raw_terms(self.work.model, self.work.gpu, grid.n, grid.sigma,
                                     grid.batch, grid.q, context, self.work.weight_bytes, 1.0,
                                     self.work.kv_scale)
                out.append(st.estimate_latency(self._raw[name], eff or st.fitted(self.work.gpu)))
            elif name == "steps":
                out.append(sf.decode_steps(replace(work, curve=curve), grid, eff).latency)
            else:
                out.append(st.step(curve, work.model, work.gpu, grid.n, grid.sigma, grid.batch,
                                   grid.q, context, work.weight_bytes, 1.0, work.kv_scale)[0])
        return out[0], out[1]

    def candidates(self, curve: str, eff=None) -> dict[str, np.ndarray]:
        """Every candidate of the point's scenario (a batch, and a chunk where prompts ride
        decode steps) with the quantities it would measure, as arrays; the limit's TTFT is a
        prompt's floor on the candidate's GPUs (:func:`~.serving_frontier.prompt_floor`)."""
        found = self._candidates(curve, eff)
        if curve == "limit" and "ttft_ms" in found:
            kind, g = _kind(self.resolved.point), self.steps
            if kind == "prefill":
                n = self.passes.n
            else:  # the rows _candidates keeps: plain steps of a static batch, else mixed
                n = g.n[g.extra == 0] if kind == "static" else \
                    g.n[(g.extra > 0) & ~self._helper()]
            found["ttft_ms"] = sf.prompt_floor(self.work, n) * 1e3
        return found

    def _candidates(self, curve: str, eff=None) -> dict[str, np.ndarray]:
        work = self.work
        steps, passes = self.latencies(curve, eff)
        g = self.steps
        kind = _kind(self.resolved.point)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if kind == "prefill":
                gp = self.passes
                return dict(batch=gp.batch, input_tok_s_per_gpu=gp.batch * work.input_len /
                            (gp.n * passes), ttft_ms=passes * 1e3)
            t_dec = steps[self.dec_index]
            plain = g.extra == 0
            if kind == "decode":
                return dict(batch=g.batch[plain], output_tok_s_per_gpu=(g.batch / (g.n * steps))
                            [plain], tok_s_per_user=1.0 / steps[plain])
            if kind == "static":
                total = passes + work.output_len * steps[plain]
                return dict(batch=g.batch[plain], tok_s_per_user=1.0 / steps[plain],
                            output_tok_s_per_gpu=g.batch[plain] * work.output_len /
                            (g.n[plain] * total), ttft_ms=passes * 1e3)
            fns = sf.serve_fns()
            tpot = fns["mean_step"](g.batch, g.extra, work.input_len, work.output_len, t_dec,
                                    steps)
            chunks = fns["chunks_of_prompt"](work.input_len, g.extra)
            requests_s = fns["open_loop_rate"](g.batch, work.output_len, tpot)
            ttft = self._ttft(fns, steps, t_dec, tpot, chunks, requests_s)
            mixed = ~plain & ~self._helper()
            return dict(batch=g.batch[mixed], output_tok_s_per_gpu=(g.batch / (g.n * tpot))
                        [mixed], tok_s_per_user=1.0 / tpot[mixed], ttft_ms=ttft[mixed] * 1e3,
                        tpot_s=tpot[mixed], n=g.n[mixed], chunk=g.extra[mixed],
                        requests_s=requests_s[mixed])

    def _ttft(self, fns, steps, t_dec, tpot, chunks, requests_s) -> np.ndarray:
        """The TTFT (s) of every row, as the statistic the point states (:func:`ttft_statistic`)
        over its arrivals: at a rate, the residual of the step a prompt arrives in, the M/D/1
        wait for the prompt work ahead at the pace of a step carrying the whole budget, and its
        own chunks (eq-queue-open-mean, eq-queue-open-quantile); at a concurrency, a run of
        :func:`run_length` requests whose first wave is an initial burst of the batch, the rest
        in steady state (eq-queue-run-mean, eq-queue-run-quantile); without a statistic to
        match (a row of the serving frontier's searches), eq-serve-aggregated-ttft."""
        from ..serving import queueing as qu
        point, work, g = self.resolved.point, self.work, self.steps
        quantile = ttft_statistic(point["note"])
        burst = g.extra if self.burst_index is None else g.extra[self.burst_index]
        t_burst = steps if self.burst_index is None else steps[self.burst_index]
        t_own = steps if self.own_index is None else steps[self.own_index]
        if point["scenario"] == "rate":
            share = fns["chunk_share"](g.batch, g.extra, work.input_len, work.output_len)
            return qu.open_loop_ttft(quantile, requests_s, share, t_dec, steps, chunks,
                                     work.input_len, burst, t_burst)
        if point["scenario"] == "concurrency" and point["concurrency"]:
            run = run_length(point) * g.n / point["gpus"]
            own_chunks = fns["chunks_of_prompt"](work.input_len, burst)
            return qu.closed_loop_ttft(quantile, g.batch, run, tpot, own_chunks, t_own,
                                       work.input_len, burst, t_burst)
        return fns["aggregated_ttft"](steps, chunks)

    def predict(self, curve: str, eff=None, by: str | None = None) -> dict[str, float | None]:
        """The point's measured quantities as ``curve`` gives them (None where it has none):
        at the stated concurrency (or the most sequences that fit, when the cache of all of
        them does not), else at the candidate with the most tokens per second per GPU within
        the scenario's limits; a point judged ``by`` a time (:data:`TIMES`) with no stated
        concurrency, at the candidate with the shortest such time."""
        point = self.resolved.point
        if curve != "limit" and not self.estimable:
            return _finite()
        c = self.candidates(curve, eff)
        rate_name = "input_tok_s_per_gpu" if "input_tok_s_per_gpu" in c else \
            "output_tok_s_per_gpu"
        rate = c[rate_name]
        ok = np.isfinite(rate) & (rate > 0)
        if point["scenario"] in ("server", "interactive"):
            if point["tpot_limit_ms"]:
                ok &= c["tpot_s"] <= point["tpot_limit_ms"] / 1e3
            if point["ttft_limit_ms"]:
                ok &= c["ttft_ms"] <= point["ttft_limit_ms"]
        if not ok.any():
            return _finite()
        if point["scenario"] == "rate":
            return self._at_rate(c, ok, curve)
        if point["concurrency"]:
            i = int(np.argmax(np.where(ok, c["batch"], -np.inf)))
        elif by in TIMES:
            needed = "ttft_ms" if by == "ttft_ms" else "tok_s_per_user"
            if needed not in c:
                return _finite()
            with np.errstate(divide="ignore"):
                time = c["ttft_ms"] if by == "ttft_ms" else 1e3 / c["tok_s_per_user"]
            ok &= np.isfinite(time) & (time > 0)
            if not ok.any():
                return _finite()
            i = int(np.argmin(np.where(ok, time, np.inf)))
        else:
            i = int(np.argmax(np.where(ok, rate, -np.inf)))
        return _finite(**{name: values[i] for name, values in c.items()
                          if name in MEASURED})

    def _at_rate(self, c: dict, ok: np.ndarray, curve: str) -> dict[str, float | None]:
        """A request-rate point at the decode batch its rate sustains in steady state
        (eq-serve-open-loop-rate): between the two batches of the grid whose rates bracket the
        instance's share of the arrivals, log-linear in the rate, each step carrying
        :func:`rate_chunk`'s prompt tokens (a run that fell behind, :attr:`Point.overloaded`, at
        its most throughput); under the limit at the smaller of them, whose step
        is no longer than the steady state's (a step does not shorten as its batch grows), and
        at the chunk of the shorter mean step, so the limit stays a bound. A rate above every batch's
        is beyond the instance: the queue grows and the point runs at its most throughput; its
        TTFT grows with the queue and its TPOT depends on the batch the engine caps (neither is
        given, but the limit's speed is a sequence decoding alone)."""
        point = self.resolved.point
        engine = c["chunk"] == rate_chunk(c["batch"] * self.work.input_len / self.work.output_len,
                                          self.work.input_len)
        if curve == "limit":  # at each batch the chunk of the shorter mean step
            key = np.where(ok, c["tpot_s"], np.inf)
            fastest = np.lexsort((key, c["batch"]))
            first = np.concatenate([[True], np.diff(c["batch"][fastest]) != 0])
            keep = np.zeros(ok.shape, dtype=bool)
            keep[fastest[first]] = True
        else:
            keep = engine
        load = point["request_rate"] * c["n"] / point["gpus"]  # requests/s of one instance
        order = np.argsort(c["batch"], kind="stable")
        order = order[(ok & keep)[order]]
        carried = c["requests_s"][order] >= load[order]
        if point.overloaded or not carried.any():  # the limit's speed: a sequence alone
            fastest = float(np.max(c["tok_s_per_user"][order])) if curve == "limit" else math.nan
            return _finite(output_tok_s_per_gpu=float(np.max(c["output_tok_s_per_gpu"][order])),
                           tok_s_per_user=fastest)
        j = int(np.argmax(carried))
        rate = point["request_rate"] * self.work.output_len / point["gpus"]
        if j == 0:
            at = {name: c[name][order[0]] for name in ("tok_s_per_user", "ttft_ms")}
        elif curve == "limit":
            at = {name: c[name][order[j - 1]] for name in ("tok_s_per_user", "ttft_ms")}
        else:
            lo, hi = order[j - 1], order[j]
            w = math.log(load[lo] / c["requests_s"][lo]) / math.log(c["requests_s"][hi] /
                                                                    c["requests_s"][lo])
            at = {name: math.exp((1 - w) * math.log(c[name][lo]) + w * math.log(c[name][hi]))
                  for name in ("tok_s_per_user", "ttft_ms")}
        return _finite(output_tok_s_per_gpu=rate, **at)


#: How a note names the statistic of its TTFT, tried in order (the first match wins): "TTFT is
#: the median", "TTFT and TPOT are means", "TTFT/TPOT means", then "median TTFT", "mean TTFT",
#: "p99 TTFT", "TTFT p99". A note that names none (or "average") is read as a mean.
_STATISTIC = (re.compile(r"\bttft(?:\s*(?:and|/)\s*tpot)?\s+(?:is|are)\s+(?:the\s+)?"
                         r"(means?|medians?|averages?|p\d+)\b"),
              re.compile(r"\bttft\s*/\s*tpot\s+(means?|medians?|averages?)\b"),
              re.compile(r"\b(mean|median|average|p\d+)\s+ttft\b"),
              re.compile(r"\bttft\s+(p\d+)\b"))


def ttft_statistic(note: str | None) -> float | None:
    """The quantile a point's TTFT is (0.5 for a median, 0.99 for a p99), None for a mean,
    read from its note (:data:`_STATISTIC`)."""
    text = str(note or "").lower()
    for pattern in _STATISTIC:
        found = pattern.search(text)
        if found:
            word = found.group(1)
            if word.startswith("median"):
                return 0.5
            if word.startswith("p"):
                return min(float(word[1:]), 99.99) / 100.0
            return None
    return None


#: How a note states the requests of a closed-loop run: "--num-prompts 500", "500 of 500
#: prompts", "64 requests at (max) concurrency", "num-prompts 10x concurrency".
_RUN = (re.compile(r"num[-_ ]prompts\s+(\d+)\s*x\s*concurrency"),
        re.compile(r"num[-_]prompts[= ]+(\d+)\b(?!\s*x)"),
        re.compile(r"\b(\d+) of \d+ prompts"),
        re.compile(r"\b(\d+) (?:requests|prompts) at (?:max )?concurrency"))


def run_length(point: Point) -> float:
    """Requests a closed-loop point's run sent over all its GPUs: as its note states them
    (:data:`_RUN`), else :data:`~inference_math.serving.queueing.DEFAULT_RUN_PER_CONCURRENCY`
    per request in flight; never fewer than the concurrency."""
    from ..serving.queueing import DEFAULT_RUN_PER_CONCURRENCY
    text, concurrency = str(point["note"] or "").lower(), point["concurrency"] or 1.0
    for k, pattern in enumerate(_RUN):
        found = pattern.search(text)
        if found:
            count = float(found.group(1)) * (concurrency if k == 0 else 1.0)
            return max(count, concurrency)
    return DEFAULT_RUN_PER_CONCURRENCY * concurrency


def rate_chunk(share: float, input_len: float) -> float:
    """The prompt tokens a mixed step carries under arrivals at a rate: a whole prompt where
    arrivals are sparse (a step takes what waits, up to the budget :data:`ENGINE_CHUNK`), and
    the tokens that arrive per step, ``share`` = b·T_in/T_out, once they are more."""
    return np.maximum(share, min(input_len, ENGINE_CHUNK))


def _kind(point: Point) -> str:
    """How a scenario composes steps: 'serving' (chunked prefill in decode steps), 'static'
    (a static batch, or an offline burst of a stated number of requests sent at once: one
    wave, its prompts prefilled before its tokens decode), 'decode' or 'prefill'."""
    if point["scenario"] == "offline" and point["concurrency"]:
        return "static"
    return {"static-batch": "static", "decode-only": "decode",
            "prefill-only": "prefill"}.get(point["scenario"], "serving")


def _finite(**values) -> dict[str, float | None]:
    out = dict.fromkeys(MEASURED)
    for name, value in values.items():
        value = float(value)
        out[name] = value if math.isfinite(value) and value > 0 else None
    if out["tok_s_per_user"] is not None:
        out["tpot_ms"] = 1000.0 / out["tok_s_per_user"]
    return out


def _sizes(resolved: Resolved) -> list[tuple[float, float]]:
    if resolved.n:
        return [(resolved.n, resolved.sigma)]
    gpus = resolved.point["gpus"]
    moe = resolved.model.n_experts > 1
    return [(n, s) for n in sf.instance_sizes(resolved.gpu) if n <= gpus
            for s in ((1.0, n) if moe and n > 1 else (1.0,))]


def probe(resolved: Resolved) -> Probe:
    """The grid of steps (and prefill passes) the point's scenario needs (module docstring):
    at a stated concurrency, that many sequences per instance and every smaller batch of
    :data:`~.serving_frontier.BATCHES` (the engine holds fewer when their cache does not
    fit); else every batch."""
    point = resolved.point
    work = sf.Workload(resolved.model, resolved.gpu, point["input_len"], point["output_len"],
                       weight_bits=point["weight_bits"], kv_bits=point["kv_bits"],
                       curve="estimate")
    kind = _kind(point)
    ratio = work.input_len / work.output_len
    rows, prefill, helpers = [], [], []
    for n, s in _sizes(resolved):
        if point["concurrency"]:
            wanted = max(1.0, point["concurrency"] * n / point["gpus"])
            batches = [wanted] + [x for x in sf.BATCHES if x < wanted]
            # fewer sequences than data-parallel attention groups: as many groups as sequences,
            # each over a larger share of the GPUs (no slower than the engine's layout, whose
            # idle groups' GPUs add nothing to attention)
            s = min(s, math.floor(wanted))
        else:
            batches = list(sf.BATCHES)
        for batch in batches:
            if batch < s:  # each data-parallel group holds a sequence
                continue
            share = batch * ratio
            rows.append((n, s, batch, 0.0))
            prefill.append((n, s, batch))
            if kind != "serving":
                continue
            budget = max(ENGINE_CHUNK, share)  # a step with prompts waiting beyond it
            own = float(rate_chunk(share, work.input_len))  # a step carrying a prompt's chunk
            if point["scenario"] == "rate":
                rows.append((n, s, batch, own))
                if share < own:  # every step carrying what arrived: the limit's option
                    rows.append((n, s, batch, share))
                if budget != own:  # the prefill queue's pace (helper)
                    helpers.append((n, s, batch, budget))
            elif point["concurrency"]:  # the engine's budget
                rows.append((n, s, batch, budget))
                if own != budget:  # the steady state's steps of a prompt's chunk (helper)
                    helpers.append((n, s, batch, own))
            else:  # the budgets of serving_frontier._decode_grid
                if share >= sf.CHUNKS[0]:
                    rows.append((n, s, batch, share))
                rows += [(n, s, batch, c) for c in sf.CHUNKS if c > share]
    helper = np.array([False] * len(rows) + [True] * len(helpers))
    rows += helpers
    n, s, batch, chunk = (np.array(col, dtype=float) for col in zip(*rows, strict=False))
    steps = sf._Grid(n, s, batch, 1.0 + chunk / batch, chunk)
    key = {(a, c, d): i for i, (a, c, d, e) in enumerate(rows) if e == 0.0}
    dec_index = np.array([key[(a, c, d)] for a, c, d, _ in rows])
    where = {}
    for i, row in enumerate(rows):
        where.setdefault(row, i)
    burst_index = np.array([where.get((a, c, d, max(ENGINE_CHUNK, d * ratio)), i)
                            for i, (a, c, d, _) in enumerate(rows)])
    own_index = np.array([where.get((a, c, d, float(rate_chunk(d * ratio, work.input_len))), i)
                          for i, (a, c, d, _) in enumerate(rows)])
    passes = None
    if kind in ("static", "prefill"):
        pn, ps, pb = (np.array(col, dtype=float) for col in zip(*prefill, strict=False))
        passes = sf._Grid(pn, ps, pb, np.full(pn.shape, work.input_len), pb)
    return Probe(resolved, steps, passes, work, dec_index, helper=helper,
                 burst_index=burst_index, own_index=own_index)
