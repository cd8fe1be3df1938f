"""Published serving measurements, and the full model's prediction for each that it can represent.

:func:`load` reads a file of ``inference_math/data/measurements`` (or of ``data``) as rows.
:func:`comparisons` pairs every measured point whose conditions the source states fully, on a
model the full model accepts today, with :func:`~inference_math.engine.predict.predict` at the
same deployment: no fitting, the GPU presets' global caps and latencies. :func:`pending` lists
the rows it does not compare, with what is missing.

What each kind of measurement is compared with:

- decode time per token (``tpot``): the prediction's time per output token;
- time to first token (``ttft``): the prefill pass of the batch's prompts (eq-prefill-ttft at one
  prompt);
- output tokens/s per GPU *with prefill included* (static batches and the vLLM sweep): a batch of
  B prompts prefilled together, then O decode steps at the mean context, B·O/(N·(t_pre + O·t)).
"""

from __future__ import annotations

import csv
import dataclasses
import statistics
from dataclasses import dataclass
from importlib import resources

from ..presets.hardware import get_gpu
from ..presets.models import Model, get_model
from .predict import Deployment, predict

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

#: Models of the serving file the full model represents today (dense, uniform layers).
SERVING_MODELS = {"Llama-2-13B": LLAMA2_13B, "Llama-2-70B": LLAMA2_70B,
                  "GPT-J 6B": get_model("gpt-j-6b")}
SERVING_GPUS = {"H200": "h200", "H100 SXM 80GB": "h100", "A100 SXM 80GB": "a100"}
PRECISION_BITS = {"FP8": 8, "FP16": 16, "BF16": 16}


@dataclass(frozen=True)
class Comparison:
    """One measured point against the prediction for the same deployment."""

    source: str
    row: str  # the row's id in its file
    model: str
    gpu: str
    setup: str  # TP, batch, input/output lengths, precision
    quantity: str  # 'tpot_ms', 'ttft_ms' or 'tokens_per_s_per_gpu' (prefill included)
    measured: float
    predicted: float | None  # None: the deployment does not fit in the model's memory
    binding: str  # or why there is no prediction

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
    def error(self) -> float | None:
        """|predicted − measured| / measured, of the quantity as measured."""
        if self.predicted is None:
            return None
        return abs(self.predicted - self.measured) / self.measured


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
    bits = f"{dep.weight_bits or dep.model.weight_bits}-bit"
    return (f"TP {dep.tp:g}, batch {dep.batch:g}, {dep.input_len:g}/{dep.output_len:g}, {bits}")


def _serving_rows() -> list[Comparison]:
    out = []
    for row in load("serving"):
        model = SERVING_MODELS.get(row["model"])
        gpu_key = SERVING_GPUS.get(str(row["gpu"]).split(" (")[0]) or SERVING_GPUS.get(row["gpu"])
        if model is None or gpu_key is None or not _stated(row):
            continue
        gpu = get_gpu(gpu_key)
        bits = PRECISION_BITS[str(row["weight_precision"]).split(" ")[0]]
        output = row["output_len"] or 1.0
        dep = Deployment(model=model, gpu=gpu, tp=row["tp"], batch=row["batch_or_concurrency"],
                         input_len=row["input_len"], output_len=output, weight_bits=bits)
        if row["output_tok_s_per_gpu"] is not None:
            value, binding = throughput_with_prefill(dep)
            quantity, measured = "tokens_per_s_per_gpu", row["output_tok_s_per_gpu"]
        else:
            result = predict(dataclasses.replace(dep, prefill_batch=dep.batch))
            value, binding = result.prefill_pass_ms, result.binding_prefill_pass
            quantity, measured = "ttft_ms", row["ttft_ms_mean"]
        out.append(Comparison(str(row["source_id"]), str(int(row["row_id"])), model.name,
                              gpu.name, _setup(dep), quantity, float(measured), value, binding))
    return out


def _stated(row: dict) -> bool:
    """Whether the conditions a prediction needs are all stated (numbers, not ranges)."""
    needed = ("tp", "batch_or_concurrency", "input_len", "weight_precision")
    return all(isinstance(row[key], float) or (key == "weight_precision" and row[key])
               for key in needed)


def _fastertransformer() -> list[Comparison]:
    out = []
    for row in load("fastertransformer"):
        dep = Deployment(model=KIPPLY_13B, gpu=A100_40GB, tp=row["tensor_parallel"], batch=1,
                         input_len=512, output_len=10, context=512)
        result = predict(dep)
        setup = f"TP {dep.tp:g}, batch 1, context 512, 16-bit"
        out.append(Comparison("FT-KIPPLY", f"TP{dep.tp:g} prefill", KIPPLY_13B.name,
                              A100_40GB.name, setup, "ttft_ms", row["measured_prefill_ms"],
                              result.ttft_ms, result.binding_prefill))
        out.append(Comparison("FT-KIPPLY", f"TP{dep.tp:g} decode", KIPPLY_13B.name,
                              A100_40GB.name, setup, "tpot_ms", row["measured_decode_step_ms"],
                              result.tpot_ms, result.binding_decode))
    return out


#: TensorRT-LLM's first-token latencies of LLaMA-7B at batch 1 (the file's last comment line).
TRT_7B_FIRST_TOKEN_MS = {128: 16.1, 2048: 120.5}


def _tensorrt_7b() -> list[Comparison]:
    a100 = get_gpu("a100")
    out = []
    for row in load("tensorrt_llm_7b"):
        dep = Deployment(model=LLAMA_7B, gpu=a100, tp=1, batch=row["batch"],
                         input_len=row["input_len"], output_len=row["output_len"])
        value, binding = throughput_with_prefill(dep)
        out.append(Comparison("TRTLLM-7B-A100", f"b{dep.batch:g} {dep.input_len:g}/"
                              f"{dep.output_len:g}", LLAMA_7B.name, a100.name, _setup(dep),
                              "tokens_per_s_per_gpu", row["measured_tokens_per_s_per_gpu"],
                              value, binding))
    for prompt, measured in TRT_7B_FIRST_TOKEN_MS.items():
        result = predict(Deployment(model=LLAMA_7B, gpu=a100, tp=1, batch=1, input_len=prompt,
                                    output_len=1))
        out.append(Comparison("TRTLLM-7B-A100", f"first token {prompt}", LLAMA_7B.name, a100.name,
                              f"TP 1, batch 1, {prompt} in, 16-bit", "ttft_ms", measured,
                              result.ttft_ms, result.binding_prefill))
    return out


def _vllm_sweep() -> list[Comparison]:
    h100 = get_gpu("h100")
    out = []
    for row in load("vllm_sweep"):
        model = get_model(row["model"])
        dep = Deployment(model=model, gpu=h100, tp=row["gpus"], batch=row["batch"],
                         input_len=row["input_tokens"], output_len=row["output_tokens"])
        value, binding = throughput_with_prefill(dep)
        # the sweep's tokens/s are for the whole instance
        out.append(Comparison("TE-VLLM", f"{row['model']} b{dep.batch:g}", model.name, h100.name,
                              _setup(dep), "tokens_per_s_per_gpu",
                              row["measured_tokens_per_s"] / dep.gpus, value, binding))
    return out


def comparisons() -> list[Comparison]:
    """Every measured point the full model represents today, with its prediction."""
    return _serving_rows() + _fastertransformer() + _tensorrt_7b() + _vllm_sweep()


def pending() -> list[dict]:
    """The serving file's rows not compared, with why: a model the full model cannot represent
    yet, or conditions the source leaves open."""
    out = []
    for row in load("serving"):
        if row["model"] in SERVING_MODELS and _stated(row) and (
                str(row["gpu"]).split(" (")[0] in SERVING_GPUS or row["gpu"] in SERVING_GPUS):
            continue
        model = str(row["model"])
        missing = [key for key in ("tp", "batch_or_concurrency", "input_len", "output_len",
                                   "weight_precision") if not isinstance(row[key], float)
                   and not (key == "weight_precision" and row[key])]
        if any(name in model for name in ("DeepSeek", "Kimi")):
            why = "shared expert and dense first layers: after the mixed-layer model"
        elif "gpt-oss" in model:
            why = "alternating sliding-window layers: after the mixed-layer model"
        elif missing:
            why = "not stated: " + ", ".join(missing)
            if "MLPERF" in str(row["source_id"]):
                why += "; MLPerf Server latencies depend on the arrival rate"
        else:
            why = "a GPU or precision without a preset"
        out.append({"row": int(row["row_id"]), "source": row["source_id"], "model": model,
                    "gpu": row["gpu"], "why": why})
    return out


def error_summary(rows: list[Comparison]) -> dict[str, tuple[int, float, float, float]]:
    """By source: (points, median |error|, smallest and largest |error|)."""
    by_source: dict[str, list[float]] = {}
    for row in rows:
        if row.error is not None:
            by_source.setdefault(row.source, []).append(row.error)
    return {src: (len(errs), statistics.median(errs), min(errs), max(errs))
            for src, errs in by_source.items()}
