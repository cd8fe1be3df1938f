"""Published serving measurements, and the full model's prediction for each that it can represent.

:func:`load` reads a file of ``inference_math/data/measurements`` (or of ``data``) as rows.
:func:`comparisons` pairs every point whose layout, batch and weight precision the source states,
on a model the full model accepts today (the conditions a source leaves open, such as the KV
cache's width, are named in each comparison's ``unstated``), with
:func:`~inference_math.serving.predict.predict` at the same deployment: no fitting, the GPU
presets' global caps and latencies. :func:`pending` lists the rows it does not compare, with what
is missing. :func:`frontier_conditions` gives, for every row of the serving file, the conditions
a frontier needs to be compared with it (model and GPU presets, GPU count, weight and KV bits,
lengths, the measured rates per GPU and per user, whether speculation was used), not yet wired
to any search.

What each kind of measurement is compared with:

- decode time per token (``tpot``): the prediction's time per output token;
- time to first token (``ttft``): the prefill pass of the batch's prompts (eq-prefill-ttft at one
  prompt);
- output tokens/s per GPU *with prefill included* (static batches, offline benchmarks and the vLLM
  sweep): a batch of B prompts prefilled together, then O decode steps at the mean context,
  B·O/(N·(t_pre + O·t));
- output tokens/s per GPU of a *decode-only* measurement (disaggregated decode): B/(N·t) at the
  stated KV length;
- input tokens/s per GPU of a *prefill-only* measurement: the prompts of one prefill batch over
  its pass, B·T_in/(N·t_pre);
- tokens/s per user at batch one: 1/t, with multi-token prediction at the stated accepted length.

A miss is reported as a factor: |ln(model/measured)| (:attr:`Comparison.log_error`) and its
exponential (:attr:`Comparison.factor`, "a factor of 1.3"), the same for a time and for a rate;
medians and quartiles are taken of the logarithms (:func:`factor_quantile`). Each comparison
names the conditions its source leaves open (``unstated``) and whether the point was measured
or simulated from a profiler trace (``kind``).

Deployments with data-parallel attention and expert parallelism (DeepSeek's, SGLang's,
TensorRT-LLM's ``enable_attention_dp``) are one replica of all their expert-parallel GPUs with
``dp_attention`` (see :mod:`~inference_math.serving.predict`).

A batch-one row the sources leave a length of open (or state as "1K") is still compared when the
model's prediction for it changes by less than :data:`INSENSITIVE` between an empty context and
:data:`PROBE_CONTEXT` tokens (batch-one decode of a model whose weights dwarf its cache), at the
stated value or :data:`ASSUMED_LENGTH`; the comparison says so in its setup.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import statistics
from dataclasses import dataclass
from importlib import resources

from ..presets.hardware import get_gpu
from ..presets.layered import LayeredModel
from ..presets.models import Model, get_model
from ..serving.predict import Deployment, predict

FILES = {
    "serving": "measurements/serving_measurements_public.csv",
    "fastertransformer": "measurements/kipply_fastertransformer_13b_a100.csv",
    "tensorrt_llm_7b": "measurements/tensorrt_llm_llama7b_a100.csv",
    "vllm_sweep": "tensor_economics_vllm_h100.csv",
}


def _value(text: str):
    text = text.strip()
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        return text


def load(name: str) -> list[dict]:
    """Rows of a measurement file (a key of :data:`FILES`): '#' lines skipped, numbers as floats,
    empty fields as None, other text as printed."""
    path = resources.files("inference_math") / "data" / FILES[name]
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return [{key: _value(value) for key, value in row.items()} for row in csv.DictReader(lines)]


def comments(name: str) -> list[str]:
    """The '#' lines of a measurement file (its source and notes), without the '#'."""
    path = resources.files("inference_math") / "data" / FILES[name]
    return [line.lstrip("# ") for line in path.read_text().splitlines() if line.startswith("#")]


# --- models the presets do not have, from their published shapes --------------------------

LLAMA2_13B = Model("Llama 2 13B", d_model=5120, d_ff=13824, layers=40, n_q_heads=40,
                   ff_matrix_count=(2, 1), vocab=32000, source="touvron2023llama2")
LLAMA2_70B = Model("Llama 2 70B", d_model=8192, d_ff=28672, layers=80, n_q_heads=64,
                   group_size=8, ff_matrix_count=(2, 1), vocab=32000, source="touvron2023llama2")
LLAMA_7B = Model("LLaMA 7B", d_model=4096, d_ff=11008, layers=32, n_q_heads=32,
                 ff_matrix_count=(2, 1), vocab=32000, source="touvron2023llama2",
                 note="the shape of Llama 2 7B, which LLaMA 7B shares")
KIPPLY_13B = Model("13B (kipply)", d_model=5120, d_ff=4 * 5120, layers=40, n_q_heads=40,
                   source="kipply2022arithmetic",
                   note="the shape kipply states; a 4x feed-forward, no vocabulary counted")
#: The A100 kipply measured on: 40 GB at 1.5 TB/s (the file's header), else the A100 preset.
A100_40GB = dataclasses.replace(get_gpu("a100"), name="A100 SXM 40GB", hbm_bytes=40e9,
                                hbm_bandwidth=1.5e12)

#: Models of the serving file the full model represents: dense ones with uniform layers, and
#: DeepSeek-V3 (R1 shares its architecture), Kimi K2 and gpt-oss read from their configs with
#: their layer groups.
SERVING_MODELS = {"Llama-2-13B": LLAMA2_13B, "Llama-2-70B": LLAMA2_70B,
                  "GPT-J 6B": get_model("gpt-j-6b"),
                  **{name: get_model("deepseek-v3") for name in (
                      "DeepSeek-V3", "DeepSeek-R1", "DeepSeek-R1-0528", "DeepSeek V3/R1 671B")},
                  "Kimi K2 Instruct": get_model("kimi-k2"),
                  "gpt-oss-120b": get_model("gpt-oss-120b")}
SERVING_GPUS = {"H200": "h200", "H100 SXM 80GB": "h100", "A100 SXM 80GB": "a100", "H100": "h100",
                "H800": "h800", "B200": "b200", "GB200": "gb200-nvl72", "MI300X": "mi300x"}
PRECISION_BITS = {"FP8": 8, "FP16": 16, "BF16": 16, "NVFP4": 4, "MXFP4": 4}
#: The rule for rows with a length left open: see the module docstring.
INSENSITIVE, PROBE_CONTEXT, ASSUMED_LENGTH = 0.05, 8192, 1024
#: DeepSeek's production decode (row 1 of the serving file): its own section of the chapter.
PRODUCTION_ROW = 1


@dataclass(frozen=True)
class Comparison:
    """One measured point against the prediction for the same deployment."""

    source: str
    row: str  # the row's id in its file
    model: str
    gpu: str
    setup: str  # layout (TP, or DP attention with its EP degree), batch, lengths, precision
    quantity: str  # 'tpot_ms', 'ttft_ms', 'tokens_per_s_per_gpu' (prefill included),
    #                'decode_tokens_per_s_per_gpu', 'prefill_tokens_per_s_per_gpu' or
    #                'tokens_per_s_per_user'
    measured: float
    predicted: float | None  # None: the deployment does not fit in the model's memory
    binding: str  # or why there is no prediction
    kind: str = "measured"  # or SIMULATED_FROM_TRACE (see :data:`TRACE_DERIVED`)
    unstated: tuple[str, ...] = ()  # conditions the source leaves open (the model assumes them)

    @property
    def ratio(self) -> float | None:
        """Predicted speed over measured speed: above 1 the model is faster than the measurement
        (for times, measured over predicted)."""
        if self.predicted is None:
            return None
        if self.quantity.endswith("_ms"):
            return self.measured / self.predicted
        return self.predicted / self.measured

    @property
    def log_error(self) -> float | None:
        """The miss |ln(model / measured)|: the same for a time and for a rate (a 2.4x miss is
        ln 2.4 either way), and for a model too fast or too slow by the same factor."""
        if self.predicted is None:
            return None
        return abs(math.log(self.predicted / self.measured))

    @property
    def factor(self) -> float | None:
        """The miss as a factor, exp |ln(model / measured)| ≥ 1: 'a factor of 1.3'."""
        return None if self.predicted is None else math.exp(self.log_error)


def factor_quantile(rows: list[Comparison], q: float) -> float:
    """The ``q`` quantile (0-1) of the rows' misses as a factor: exp of the quantile of
    |ln(model/measured)| (linear interpolation between the logs)."""
    import numpy as np

    logs = [r.log_error for r in rows if r.log_error is not None]
    return math.exp(float(np.quantile(logs, q)))


def median_factor(rows: list[Comparison]) -> float:
    """The median miss of the rows, as a factor (see :func:`factor_quantile`)."""
    return factor_quantile(rows, 0.5)


def throughput_with_prefill(dep: Deployment) -> tuple[float, str]:
    """Output tokens/s per GPU of a static batch: its prompts prefilled in one pass, then every
    decode step at the mean context; and the binding term of the larger of the two phases."""
    whole = dataclasses.replace(dep, prefill_batch=dep.batch / dep.pp)
    result = predict(whole)
    if not result.fits:
        return None, f"does not fit ({result.memory_need_gb:,.0f} of {result.memory_gb:,.0f} GB)"
    prefill_s = result.prefill_pass_ms / 1e3
    decode_s = dep.output_len * result.tpot_ms / 1e3
    binding = result.binding_decode if decode_s >= prefill_s else (
        f"{result.binding_prefill_pass} (prefill)")
    return dep.batch * dep.output_len / (dep.gpus * (prefill_s + decode_s)), binding


def _setup(dep: Deployment) -> str:
    """The deployment as the table shows it: the tensor-parallel degree, or for data-parallel
    attention its expert-parallel degree (the replica's GPUs), then batch, lengths and bits."""
    bits = f"{dep.weight_bits or dep.model.weight_bits}-bit"
    layout = f"DP attention, EP {dep.tp:g}" if dep.dp_attention else f"TP {dep.tp:g}"
    return f"{layout}, batch {dep.batch:g}, {dep.input_len:g}/{dep.output_len:g}, {bits}"


_PER_GPU = ("per GPU", "per device", "per decode rank")


def _length(value) -> float | None:
    """A length as stated: a number, or text such as '1K' (read as 1,024)."""
    if isinstance(value, float):
        return value
    if isinstance(value, str) and value.upper().endswith("K") and value[:-1].isdigit():
        return 1024.0 * int(value[:-1])
    return None


def _is_mtp(row: dict) -> bool:
    spec = str(row["spec_decode"] or "none").lower()
    return not spec.startswith("none")


def _missing(row: dict) -> list[str]:
    """The conditions a prediction needs that the row does not state (numbers, not ranges)."""
    missing = [key for key in ("tp", "batch_or_concurrency", "input_len")
               if not isinstance(row[key], float)]
    if not row["weight_precision"]:
        missing.append("weight_precision")
    if _is_mtp(row) and not isinstance(row["spec_accept_len"], float):
        missing.append("spec_accept_len")
    return missing


#: What a row of the serving file is when its engine is a profiler trace (InferSim's DeepSeek-V3
#: "Actual" columns: DeepSeek's published profile with balanced routing simulated, not an
#: end-to-end run), and what it is otherwise.
SIMULATED_FROM_TRACE, MEASURED = "simulated from a profiler trace", "measured"


def _kind(row: dict) -> str:
    """Whether a serving row was measured end to end or simulated from a profiler trace."""
    return SIMULATED_FROM_TRACE if "trace" in str(row["engine"]) else MEASURED


def _unstated(row: dict) -> tuple[str, ...]:
    """The conditions of a compared serving row that its source leaves open, which the model
    then assumes: the KV cache's width (the model's 16 bits), lengths not printed (or printed
    as '1K'), a precision read from a simulation script rather than the measurement."""
    out = []
    if "sim" in str(row["weight_precision"]):
        out.append("weight precision (from InferSim's simulation script)")
    if not row["kv_cache_precision"]:
        out.append("KV width")
    if not isinstance(row["input_len"], float):
        out.append("lengths (printed as " + f"{row['input_len']}/{row['output_len']})"
                   if _length(row["input_len"]) else "lengths")
    return tuple(out)


#: The conditions the files beside the serving file leave open (their headers state no
#: precision; the vLLM sweep's post does not state the 8B model's GPU count).
_UNSTATED_OTHER = {"FT-KIPPLY": ("weight width", "KV width"),
                   "TRTLLM-7B-A100": ("weight width", "KV width"),
                   "TE-VLLM": ("weight width", "KV width")}


def _stated(row: dict) -> bool:
    """Whether the conditions a prediction needs are all stated (numbers, not ranges)."""
    return not _missing(row)


def _bits(row: dict, model) -> int | None:
    """Weight bits of the row's precision; None when they are the model's own (a LayeredModel
    keeps its groups' bytes: DeepSeek's FP8 layers with 16-bit embeddings)."""
    bits = PRECISION_BITS[str(row["weight_precision"]).split(" ")[0]]
    return None if isinstance(model, LayeredModel) and bits == model.weight_bits else bits


def _deployment(row: dict, model, gpu, input_len: float, output_len: float) -> Deployment:
    """The replica of a row: its TP group, or with data-parallel attention and expert
    parallelism all the EP group's GPUs as one replica (see the module docstring)."""
    dp = isinstance(row["dp"], float) and row["dp"] > 1 and isinstance(row["ep"], float)
    gpus = max(row["ep"], row["tp"]) if dp else row["tp"]
    batch = row["batch_or_concurrency"]
    definition = str(row["batch_definition"]).split(";")[0]
    if any(text in definition for text in _PER_GPU):
        batch *= gpus
    if definition.startswith("tokens"):
        batch /= input_len  # a prefill batch stated in tokens: its prompts
    return Deployment(model=model, gpu=gpu, tp=gpus, batch=batch, input_len=input_len,
                      output_len=output_len, weight_bits=_bits(row, model), dp_attention=dp,
                      curve="physical")


def _lengths(row: dict, model, gpu) -> tuple[float, float, str] | None:
    """(input, output, note) of a row: as stated, or assumed where the model's prediction does
    not depend on them (:data:`INSENSITIVE`); None where it does."""
    stated_in, stated_out = _length(row["input_len"]), _length(row["output_len"])
    if isinstance(row["input_len"], float):
        return stated_in, row["output_len"] or 1.0, ""
    if row["batch_or_concurrency"] != 1:
        return None
    probe = _deployment(row, model, gpu, ASSUMED_LENGTH, 1.0)
    times = [predict(dataclasses.replace(probe, context=c)).tpot_ms for c in (0, PROBE_CONTEXT)]
    if None in times or times[1] / times[0] - 1 > INSENSITIVE:
        return None
    note = "lengths as printed" if stated_in else "lengths assumed"
    return (stated_in or ASSUMED_LENGTH, stated_out or 1.0,
            f"; {note} (≤{100 * (times[1] / times[0] - 1):.1f}% effect)")


def _comparable(row: dict) -> tuple | None:
    """(model, GPU, input, output, note) of a serving row the model compares, else None."""
    model = SERVING_MODELS.get(row["model"])
    gpu_key = SERVING_GPUS.get(str(row["gpu"]).split(" (")[0]) or SERVING_GPUS.get(row["gpu"])
    if model is None or gpu_key is None or int(row["row_id"]) == PRODUCTION_ROW:
        return None
    missing = _missing(row)
    if not missing:
        return model, get_gpu(gpu_key), row["input_len"], row["output_len"] or 1.0, ""
    if not set(missing) <= {"input_len"}:
        return None
    lengths = _lengths(row, model, get_gpu(gpu_key))
    return None if lengths is None else (model, get_gpu(gpu_key), *lengths)


def _scaled(gpu, kernel_scale: float):
    """The GPU with its kernel-launch time times ``kernel_scale`` (1: the preset's)."""
    if kernel_scale == 1:
        return gpu
    return dataclasses.replace(gpu, kernel_launch_s=gpu.kernel_launch_s * kernel_scale)


def _serving_rows(kernel_scale: float = 1.0) -> list[Comparison]:
    out = []
    for row in load("serving"):
        found = _comparable(row)
        if found is None:
            continue
        model, gpu, input_len, output, note = found
        gpu = _scaled(gpu, kernel_scale)
        dep = _deployment(row, model, gpu, input_len, output)
        scenario = f"{row['scenario']} {row['disaggregated']}".lower()
        if _is_mtp(row) and row["spec_accept_len"] > 1:
            dep = dataclasses.replace(dep, mtp_accepted=row["spec_accept_len"])
        if isinstance(row["prefill_tok_s_per_gpu"], float):
            result = predict(dataclasses.replace(dep, prefill_batch=dep.batch))
            value = dep.batch * input_len / (dep.gpus * result.prefill_pass_ms / 1e3)
            binding = f"{result.binding_prefill_pass} (prefill)"
            quantity, measured = "prefill_tokens_per_s_per_gpu", row["prefill_tok_s_per_gpu"]
        elif isinstance(row["output_tok_s_per_gpu"], float) and "decode" in scenario and (
                "only" in scenario or "isolation" in scenario):
            context = row["avg_kv_len"] if isinstance(row["avg_kv_len"], float) else input_len
            result = predict(dataclasses.replace(dep, context=context))
            value = result.output_tokens_per_s_per_gpu
            binding = result.binding_decode if result.fits else _unfit(result)
            quantity, measured = "decode_tokens_per_s_per_gpu", row["output_tok_s_per_gpu"]
        elif isinstance(row["output_tok_s_per_gpu"], float) and dep.batch > 1:
            value, binding = throughput_with_prefill(dep)
            quantity, measured = "tokens_per_s_per_gpu", row["output_tok_s_per_gpu"]
        elif isinstance(row["tok_s_per_user"], float):
            result = predict(dep)
            value, binding = result.tokens_per_s_per_user, result.binding_decode
            quantity, measured = "tokens_per_s_per_user", row["tok_s_per_user"]
        else:
            result = predict(dataclasses.replace(dep, prefill_batch=dep.batch))
            value, binding = result.prefill_pass_ms, result.binding_prefill_pass
            quantity, measured = "ttft_ms", row["ttft_ms_mean"]
        setup = _setup(dep) + (f", MTP {dep.mtp_accepted:g}" if dep.mtp_accepted else "") + note
        out.append(Comparison(str(row["source_id"]), str(int(row["row_id"])), model.name,
                              gpu.name, setup, quantity, float(measured), value, binding,
                              _kind(row), _unstated(row)))
    return out


def _unfit(result) -> str:
    return f"does not fit ({result.memory_need_gb:,.0f} of {result.memory_gb:,.0f} GB)"


def _fastertransformer(kernel_scale: float = 1.0) -> list[Comparison]:
    out = []
    for row in load("fastertransformer"):
        dep = Deployment(model=KIPPLY_13B, gpu=_scaled(A100_40GB, kernel_scale),
                         tp=row["tensor_parallel"], batch=1, input_len=512, output_len=10,
                         context=512, curve="physical")
        result = predict(dep)
        setup = f"TP {dep.tp:g}, batch 1, context 512, 16-bit"
        out.append(Comparison("FT-KIPPLY", f"TP{dep.tp:g} prefill", KIPPLY_13B.name,
                              A100_40GB.name, setup, "ttft_ms", row["measured_prefill_ms"],
                              result.ttft_ms, result.binding_prefill,
                              unstated=_UNSTATED_OTHER["FT-KIPPLY"]))
        out.append(Comparison("FT-KIPPLY", f"TP{dep.tp:g} decode", KIPPLY_13B.name,
                              A100_40GB.name, setup, "tpot_ms", row["measured_decode_step_ms"],
                              result.tpot_ms, result.binding_decode,
                              unstated=_UNSTATED_OTHER["FT-KIPPLY"]))
    return out


#: TensorRT-LLM's first-token latencies of LLaMA-7B at batch 1 (the file's last comment line).
TRT_7B_FIRST_TOKEN_MS = {128: 16.1, 2048: 120.5}


def _tensorrt_7b(kernel_scale: float = 1.0) -> list[Comparison]:
    a100 = _scaled(get_gpu("a100"), kernel_scale)
    out = []
    for row in load("tensorrt_llm_7b"):
        dep = Deployment(model=LLAMA_7B, gpu=a100, tp=1, batch=row["batch"],
                         input_len=row["input_len"], output_len=row["output_len"],
                         curve="physical")
        value, binding = throughput_with_prefill(dep)
        out.append(Comparison("TRTLLM-7B-A100", f"b{dep.batch:g} {dep.input_len:g}/"
                              f"{dep.output_len:g}", LLAMA_7B.name, a100.name, _setup(dep),
                              "tokens_per_s_per_gpu", row["measured_tokens_per_s_per_gpu"],
                              value, binding, unstated=_UNSTATED_OTHER["TRTLLM-7B-A100"]))
    for prompt, measured in TRT_7B_FIRST_TOKEN_MS.items():
        result = predict(Deployment(model=LLAMA_7B, gpu=a100, tp=1, batch=1, input_len=prompt,
                                    output_len=1, curve="physical"))
        out.append(Comparison("TRTLLM-7B-A100", f"first token {prompt}", LLAMA_7B.name, a100.name,
                              f"TP 1, batch 1, {prompt} in, 16-bit", "ttft_ms", measured,
                              result.ttft_ms, result.binding_prefill,
                              unstated=_UNSTATED_OTHER["TRTLLM-7B-A100"]))
    return out


def _vllm_sweep(kernel_scale: float = 1.0) -> list[Comparison]:
    h100 = _scaled(get_gpu("h100"), kernel_scale)
    out = []
    for row in load("vllm_sweep"):
        model = get_model(row["model"])
        dep = Deployment(model=model, gpu=h100, tp=row["gpus"], batch=row["batch"],
                         input_len=row["input_tokens"], output_len=row["output_tokens"],
                         curve="physical")
        value, binding = throughput_with_prefill(dep)
        # the sweep's tokens/s are for the whole instance; the 8B model's one GPU is the
        # benchmark repository's default, which the post does not state (the file's header)
        unstated = _UNSTATED_OTHER["TE-VLLM"] + (("GPU count",) if "8b" in row["model"] else ())
        out.append(Comparison("TE-VLLM", f"{row['model']} b{dep.batch:g}", model.name, h100.name,
                              _setup(dep), "tokens_per_s_per_gpu",
                              row["measured_tokens_per_s"] / dep.gpus, value, binding,
                              unstated=unstated))
    return out


def comparisons(kernel_scale: float = 1.0) -> list[Comparison]:
    """Every measured point the full model represents today, with its prediction; every GPU's
    kernel-launch time times ``kernel_scale`` (1: the presets', uncalibrated)."""
    return (_serving_rows(kernel_scale) + _fastertransformer(kernel_scale)
            + _tensorrt_7b(kernel_scale) + _vllm_sweep(kernel_scale))


#: The one calibration: the rows it uses. SGLang's batch-one decode of gpt-oss-120b (four points,
#: two GPUs, two precisions), where a step is almost all fixed time. The parameter (the kernel
#: launch time) and this subset were chosen after reading the residuals of every point, so the
#: points outside the subset are not a held-out test of it.
CALIBRATION_SOURCE = "LMSYS-GPTOSS"


def calibrate_kernel(rows: list[Comparison] | None = None) -> tuple[float, list[float]]:
    """The global factor on every GPU's kernel-launch time, fitted on
    :data:`CALIBRATION_SOURCE` (chosen after reading every residual): the median over its rows
    of the factor that makes each row's time per token equal the measured one, and those
    factors.

    A step's latency is the kernel launches plus terms that do not depend on them
    (eq-full-forward-latency), so each row's time per token is a + k·c: c and a follow from the
    predictions at k = 1 and k = 2, and the row's factor is (t_measured − a)/c.
    """
    one = [r for r in (rows or comparisons()) if r.source == CALIBRATION_SOURCE]
    two = {r.row: r for r in _serving_rows(2.0) if r.source == CALIBRATION_SOURCE}
    factors = []
    for row in one:
        t1, t2 = 1 / row.predicted, 1 / two[row.row].predicted
        per_unit = t2 - t1
        factors.append((1 / row.measured - (t1 - per_unit)) / per_unit)
    return statistics.median(factors), factors


def pending() -> list[dict]:
    """The serving file's rows not compared, with why: conditions the source leaves open (named),
    a GPU without a preset, or DeepSeek's production fleet (placed against the frontier)."""
    out = []
    for row in load("serving"):
        if _comparable(row) is not None:
            continue
        model = str(row["model"])
        missing = _missing(row)
        if int(row["row_id"]) == PRODUCTION_ROW:
            why = ("a production fleet: the batch is not stated; placed against the frontier "
                   "at its speed and KV length")
        elif missing:
            why = "not stated: " + ", ".join(missing)
            if "MLPERF" in str(row["source_id"]):
                why += "; MLPerf Server latencies depend on the arrival rate"
        elif not any(name in model for name in SERVING_MODELS):
            why = "a model without a preset"
        else:
            why = "a GPU or precision without a preset"
        out.append({"row": int(row["row_id"]), "source": row["source_id"], "model": model,
                    "gpu": row["gpu"], "why": why})
    return out


def error_summary(rows: list[Comparison]) -> dict[str, tuple[int, float, float, float]]:
    """By source: (points, median miss, smallest and largest miss), each miss as a factor
    exp |ln(model/measured)| (:attr:`Comparison.factor`)."""
    by_source: dict[str, list[Comparison]] = {}
    for row in rows:
        if row.predicted is not None:
            by_source.setdefault(row.source, []).append(row)
    return {src: (len(pts), median_factor(pts), min(r.factor for r in pts),
                  max(r.factor for r in pts))
            for src, pts in by_source.items()}


# --- DeepSeek's production report against the frontier --------------------------------------

#: DeepSeek's online service over 24 hours (deepseekai2025inferencesystem, rows 1-2 of the
#: serving file and their notes): H800s at $2 per GPU-hour, 20-22 output tokens/s per user,
#: 1,850 output tokens/s per decode GPU at a mean KV length of 4,989, decode on 18-node units
#: (EP144, data-parallel attention); 226.75 nodes on average for prefill and decode, $87,072 a
#: day, 168 B output and 608 B input tokens a day, 342 B of the input served from the on-disk cache.
DEEPSEEK_PRODUCTION = {"price": 2.0, "speed": (20.0, 22.0), "decode_tok_s_per_gpu": 1850.0,
                       "kv_len": 4989.0, "decode_gpus": 144, "prefill_gpus": 32,
                       "usd_per_day": 87_072.0, "output_tokens_per_day": 168e9,
                       "input_tokens_per_day": 608e9, "cached_input_tokens_per_day": 342e9}
#: DeepSeek-V3's multi-token prediction: the second token accepted 85-90% of the time
#: (deepseekai2024v3); the lower end, T = 1.85 tokens per decode pass. A what-if only: the
#: production report (deepseekai2025inferencesystem) does not say whether its decode uses MTP.
DEEPSEEK_MTP_ACCEPTED = 1.85
#: The prefill unit of the report (EP32, data-parallel attention) at the profile's prompt of
#: 4,096 tokens and 16,384 tokens per GPU (row 3 of the serving file).
DEEPSEEK_PREFILL = {"gpus": 32, "prompt": 4096.0, "tokens_per_gpu": 16384.0}


def _fastest_batch(model, gpu, gpus: int, speed: float, context: float, price: float,
                   mtp: float | None):
    """The largest whole batch per GPU of an EP/data-parallel-attention replica of ``gpus``
    decoding at ``speed`` tokens/s per user or faster, and its prediction (bisection: the speed
    falls as the batch grows)."""
    def at(per_gpu):
        return predict(Deployment(model=model, gpu=gpu, tp=gpus, batch=gpus * per_gpu,
                                  input_len=context, output_len=1, context=context, price=price,
                                  mtp_accepted=mtp, dp_attention=True, curve="physical"))
    lo, hi = 1, 1024
    while hi - lo > 1:
        mid = (lo + hi) // 2
        result = at(mid)
        lo, hi = (mid, hi) if result.fits and result.tokens_per_s_per_user >= speed else (lo, mid)
    return lo, at(lo)


def deepseek_production(front=None) -> dict:
    """DeepSeek's production decode against the full model for the real DeepSeek-V3 on H800s.

    ``front``: the frontier of ``Setting(get_model('deepseek-v3'), get_gpu('h800'),
    context=4989, price=2)`` (computed if not given). Returns the measured speed and cost, the
    frontier's cost and output tokens/s per GPU at the report's lower speed, the report's own
    layout (EP144, data-parallel attention) without and with MTP (a what-if: the report does not
    say whether decode uses it), and the cost of a served output token with the prefill the
    model adds, for each layout, beside the fleet's.
    """
    import numpy as np

    from ..fullmodel.search import Setting, frontier

    report = DEEPSEEK_PRODUCTION
    model, gpu, price = get_model("deepseek-v3"), get_gpu("h800"), report["price"]
    if front is None:
        front = frontier(Setting(model, gpu, context=report["kv_len"], price=price), exact=True)
    speed = report["speed"][0]
    cost = float(front.cost_at_speed(np.array([speed]))[0])
    point = min(front.points, key=lambda pt: abs(pt.tokens_per_s - speed))
    per_gpu = price * 1e6 / 3600 / cost  # eq-search-cost solved for tokens/s per GPU
    measured_cost = price * 1e6 / 3600 / report["decode_tok_s_per_gpu"]
    layouts = {}
    for label, mtp in (("plain", None), ("mtp", DEEPSEEK_MTP_ACCEPTED)):
        batch, result = _fastest_batch(model, gpu, report["decode_gpus"], speed, report["kv_len"],
                                       price, mtp)
        layouts[label] = {"batch_per_gpu": batch, "tok_s_per_gpu": result.output_tokens_per_s_per_gpu,
                          "usd_per_mtok": result.usd_per_mtok_output, "binding": result.binding_decode,
                          "terms_ms": result.decode_terms_ms}
    pre = DEEPSEEK_PREFILL
    prompts = pre["gpus"] * pre["tokens_per_gpu"] / pre["prompt"]
    prefill = predict(Deployment(model=model, gpu=gpu, tp=pre["gpus"], batch=prompts,
                                 input_len=pre["prompt"], output_len=1, price=price,
                                 prefill_batch=prompts, dp_attention=True,
                                 curve="physical"))
    computed_in = report["input_tokens_per_day"] - report["cached_input_tokens_per_day"]
    in_per_out = computed_in / report["output_tokens_per_day"]
    return {
        "speed": speed, "kv_len": report["kv_len"], "price": price,
        "measured_tok_s_per_gpu": report["decode_tok_s_per_gpu"],
        "measured_usd_per_mtok": measured_cost,
        "frontier_usd_per_mtok": cost, "frontier_tok_s_per_gpu": per_gpu,
        "frontier_ratio": report["decode_tok_s_per_gpu"] / per_gpu,
        "frontier_point": point, "layouts": layouts,
        "mtp_ratio": report["decode_tok_s_per_gpu"] / layouts["mtp"]["tok_s_per_gpu"],
        "plain_ratio": report["decode_tok_s_per_gpu"] / layouts["plain"]["tok_s_per_gpu"],
        "fleet_usd_per_mtok": report["usd_per_day"] / report["output_tokens_per_day"] * 1e6,
        "prefill_usd_per_mtok_input": prefill.usd_per_mtok_input,
        "input_per_output": in_per_out,
        # a served output token: the layout's decode plus the prefill of its input tokens
        **{f"model_fleet_usd_per_mtok_{label}": layout["usd_per_mtok"]
           + in_per_out * prefill.usd_per_mtok_input for label, layout in layouts.items()},
    }


# --- the conditions a frontier needs, row by row -------------------------------------------

#: The model of each serving row, by the start of its ``model`` text: a preset name, a bundled
#: config (``hf_configs/...``, see :func:`FrontierConditions.model_object`) or a model this
#: module defines (``LLAMA2_13B``, ``LLAMA2_70B``). First match wins.
FRONTIER_MODELS = (
    ("DeepSeek", "deepseek-v3"),  # V3, R1, R1-0528 and the combined traffic share one architecture
    ("Kimi K2", "kimi-k2"),
    ("gpt-oss-120b", "gpt-oss-120b"),
    ("Qwen3-235B-A22B", "qwen3-235b-a22b"),
    ("Qwen3-30B-A3B", "hf_configs/Qwen--Qwen3-30B-A3B.config.json"),
    ("Qwen3-8B", "hf_configs/Qwen--Qwen3-8B.config.json"),
    ("Llama-2-13B", "LLAMA2_13B"),
    ("Llama-2-70B", "LLAMA2_70B"),
    ("Llama 2 70B", "LLAMA2_70B"),
    ("GPT-J 6B", "gpt-j-6b"),
    ("Llama 3.1 8B", "llama-3.1-8b"),
    ("Llama 3.3 70B", "llama-3.3-70b"),
    ("Llama 3.1 405B", "llama-3.1-405b-config"),
    ("Mixtral 8x7B", "mixtral-8x7b"),
)
#: The GPU preset of each serving row, by the first word of its ``gpu`` text.
FRONTIER_GPUS = {"H800": "h800", "H100": "h100", "H200": "h200", "H20": "h20", "A100": "a100",
                 "B200": "b200", "GB200": "gb200-nvl72", "MI300X": "mi300x"}
#: Batch definitions that count whole sequences on each GPU (else on the whole gpu_count).
_PER_GPU_SEQUENCES = ("per GPU", "per device", "per decode rank", "per decode GPU")


@dataclass(frozen=True)
class FrontierConditions:
    """What a row of the serving file states that a frontier needs to be compared with it.

    ``None`` is a condition the source does not state (or states only in a simulation script).
    ``phase``: 'decode' (decode measured alone: disaggregated decode, a decode-only profile or
    batch-one decode), 'prefill' (input tokens only: no output rate) or 'serving' (whole
    requests, prefill included in the output rate). ``tok_s_per_user_from`` says how the rate
    per user was obtained: 'stated'; 'stated, prefill included' (TensorRT-LLM's '[w/ ctx]');
    'stated range A-B, upper end' (the stricter check against a curve that falls with speed);
    '1000 / TPOT'; 'throughput / concurrency' (output tokens/s of the GPUs over the sequences
    they serve at once); '' when none of these is available. ``speculative``: True when the
    source states speculative decoding or multi-token prediction (simulated or real), False
    when it states none, None when it does not say.
    """

    row: int
    source: str
    kind: str  # MEASURED or SIMULATED_FROM_TRACE
    model: str  # a preset, a bundled config 'hf_configs/...', or 'LLAMA2_13B' / 'LLAMA2_70B'
    gpu: str  # a GPU preset
    gpu_count: int
    weight_bits: int | None
    kv_bits: int | None
    input_len: float | None
    output_len: float | None
    avg_kv_len: float | None
    phase: str
    output_tok_s_per_gpu: float | None
    tok_s_per_user: float | None
    tok_s_per_user_from: str
    speculative: bool | None
    spec_accept_len: float | None

    def model_object(self):
        """The model itself: a preset, a bundled config read by ``get_model``, or this module's
        Llama 2."""
        if self.model.startswith("hf_configs/"):
            return get_model(str(resources.files("inference_math") / "data" / self.model))
        own = {"LLAMA2_13B": LLAMA2_13B, "LLAMA2_70B": LLAMA2_70B}
        return own[self.model] if self.model in own else get_model(self.model)


def _frontier_model(text: str) -> str:
    return next(key for start, key in FRONTIER_MODELS if text.startswith(start))


def _bits_of(text) -> int | None:
    """Bits of a precision as printed ('FP8 (matmuls)', 'NVFP4 MoE ...', 'FP16/BF16 ...'); None
    when empty or taken only from a simulation script."""
    if not text or "sim" in str(text):
        return None
    return PRECISION_BITS[str(text).split(" ")[0].split("/")[0]]


def _phase(row: dict) -> str:
    scenario, disagg = str(row["scenario"]).lower(), str(row["disaggregated"]).lower()
    if "prefill" in scenario:
        return "prefill"
    if "decode" in scenario and (disagg.startswith("yes") or "decode-only" in disagg
                                 or scenario.startswith("decode")):
        return "decode"
    return "serving"


def _concurrency(row: dict) -> float | None:
    """Sequences served at once by the row's GPUs, where the source states them: a batch of
    sequences (not of tokens, not an engine's cap, not a simulation script's setting)."""
    batch = row["batch_or_concurrency"]
    definition = str(row["batch_definition"]).split(";")[0]
    if not isinstance(batch, float) or not definition or definition == "None":
        return None
    if any(word in definition for word in ("token", "sim", "max concurrency", "gpu_batch_size",
                                           "not fixed")):
        return None
    per_gpu = any(text in definition for text in _PER_GPU_SEQUENCES)
    return batch * row["gpu_count"] if per_gpu else batch


def _per_user(row: dict, per_gpu: float | None) -> tuple[float | None, str]:
    stated = row["tok_s_per_user"]
    if isinstance(stated, float):
        with_prefill = "w/ ctx" in str(row["note"])
        return stated, "stated, prefill included" if with_prefill else "stated"
    if isinstance(stated, str) and "-" in stated:
        lo, hi = (float(x) for x in stated.split("-"))
        return hi, f"stated range {lo:g}-{hi:g}, upper end"
    if isinstance(row["tpot_ms_mean"], float):
        return 1000.0 / row["tpot_ms_mean"], "1000 / TPOT"
    concurrency = _concurrency(row)
    if per_gpu is not None and concurrency:
        return per_gpu * row["gpu_count"] / concurrency, "throughput / concurrency"
    return None, ""


def frontier_conditions() -> list[FrontierConditions]:
    """For each of the serving file's rows, the conditions needed to compare it with a frontier:
    model and GPU presets, GPU count, weight and KV bits, lengths, measured output tokens/s per
    GPU and tokens/s per user where derivable, and whether speculation was used (see
    :class:`FrontierConditions`). Not yet wired to any search: the rows as data."""
    out = []
    for row in load("serving"):
        phase = _phase(row)
        per_gpu = row["output_tok_s_per_gpu"]
        if not isinstance(per_gpu, float) and isinstance(row["output_tok_s_total"], float):
            per_gpu = row["output_tok_s_total"] / row["gpu_count"]
        if phase == "prefill":
            per_gpu = None
        per_user, how = _per_user(row, per_gpu)
        spec = row["spec_decode"]
        speculative = None if spec is None else not str(spec).lower().startswith("none")
        accept = row["spec_accept_len"] if isinstance(row["spec_accept_len"], float) else None
        out.append(FrontierConditions(
            row=int(row["row_id"]), source=str(row["source_id"]), kind=_kind(row),
            model=_frontier_model(str(row["model"])),
            gpu=FRONTIER_GPUS[str(row["gpu"]).split(" ")[0]], gpu_count=int(row["gpu_count"]),
            weight_bits=_bits_of(row["weight_precision"]),
            kv_bits=_bits_of(row["kv_cache_precision"]),
            input_len=_length(row["input_len"]), output_len=_length(row["output_len"]),
            avg_kv_len=row["avg_kv_len"] if isinstance(row["avg_kv_len"], float) else None,
            phase=phase, output_tok_s_per_gpu=per_gpu, tok_s_per_user=per_user,
            tok_s_per_user_from=how, speculative=speculative, spec_accept_len=accept))
    return out
