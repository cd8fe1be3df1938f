"""The paper's comparisons: the 35 canonical frontiers of Erdil (2025) and the code's outputs.

Each comparison of the reference code (commit c2c4fa9, pipeline search on, $2.10/h H100 with
70%/75% caps, α = 3) is rebuilt here as :class:`~inference_math.fullmodel.search.Setting` objects from
``data/erdil_code/summary_final_model.json``, so the settings cannot drift from the run they are
compared with. The code's own frontier curves and summaries are loaded for the reproduction
checks.
"""

from __future__ import annotations

import csv
import json
import re
from functools import cache
from importlib import resources

import numpy as np

from ..core.validation import InputError
from ..presets.hardware import get_gpu
from ..presets.models import get_model
from .search import Setting

# The reference code's model objects, by (name, weight bytes), and GPUs, as presets here.
_MODELS = {
    ("GPT-4", 2.0): "gpt-4",
    ("LLaMa 3 405B", 2.0): "llama-3.1-405b",
    ("LLaMa 3 405B", 1.0): "llama-3.1-405b-8bit",
    ("LLaMa 3 70B", 2.0): "llama-3-70b",
    ("LLaMa 3 70B 8-bit", 1.0): "llama-3-70b-8bit",
    ("LLaMa 3 70B 4-bit", 0.5): "llama-3-70b-4bit",
    ("LLaMa 3 8B", 2.0): "llama-3-8b",
    ("LLaMa 3 8B MQA", 2.0): "llama-3-8b-mqa",
    ("Mixtral 8x22B", 2.0): "mixtral-8x22b",
    ("DeepSeek V3", 1.0): "deepseek-v3-paper",
    ("Mistral Large 2", 2.0): "mistral-large-2",
}
_DRAFTERS = {"LLaMa 3 8B": "llama-3-8b", "LLaMa 3 8B MQA": "llama-3-8b-mqa",
             "LLaMa 3 70B": "llama-3-70b"}
_GPUS = {"H100": "h100", "A100": "a100", "V100": "v100"}

TOY_COMPARISON = "llama_comparison_sec22"  # the section 2.2 model of Figure 1 (toy_model.py)


def _data(name: str):
    return resources.files("inference_math") / "data" / "erdil_code" / name


@cache
def summary(which: str = "final") -> dict:
    """The reference code's summary: 'final' (c2c4fa9, pipeline on) or 'earlier_pp' / 'earlier_no_pp'."""
    files = {"final": "summary_final_model.json", "earlier_pp": "summary_earlier_model_pp.json",
             "earlier_no_pp": "summary_earlier_model_no_pp.json"}
    return json.loads(_data(files[which]).read_text())


@cache
def reference_json(name: str) -> dict:
    """One of the shared JSON files: 'tables_code_vs_paper', 'figure_claims_code_vs_paper',
    'timings_original_code', 'models_and_gpus'."""
    return json.loads(_data(f"{name}.json").read_text())


def comparison_names() -> list[str]:
    return list(summary()["comparisons"])


def reference_settings(comparison: str, which: str = "final") -> list[dict]:
    """The reference code's settings (and its max-speed and preferred points) of one comparison."""
    comparisons = summary(which)["comparisons"]
    if comparison not in comparisons:
        raise InputError(f"unknown comparison {comparison!r}; choose one of: {', '.join(comparisons)}")
    return comparisons[comparison]["settings"]


def setting_from_reference(entry: dict, use_pp: bool = True) -> Setting:
    """A Setting equal to one entry of the reference summary."""
    key = (entry["model"], float(entry["weight_precision_bytes"]))
    model = get_model(_MODELS[key])
    drafter = None
    acceptance = 0.8
    if entry["spec_dec"] and entry["acceptance_prob"]:
        drafter = get_model(_DRAFTERS[entry["approx_model"]])
        acceptance = float(entry["acceptance_prob"])
    return Setting(model=model, gpu=get_gpu(_GPUS[entry["gpu"]]),
                   weight_bytes=float(entry["weight_precision_bytes"]),
                   context=float(entry["input_len"]), drafter=drafter, acceptance=acceptance,
                   use_pp=use_pp, price=float(entry["gpu_price_usd_per_hour"]),
                   label=entry["name"])


def settings(comparison: str, use_pp: bool = True) -> dict[str, Setting]:
    """The settings of one of the paper's comparisons, by label (as in the reference code)."""
    if comparison == TOY_COMPARISON:
        raise InputError("the section 2.2 comparison uses the toy model: see toy_model.py")
    return {e["name"]: setting_from_reference(e, use_pp) for e in reference_settings(comparison)}


def csv_name(comparison: str, label: str) -> str:
    """File name of a reference frontier: every non-alphanumeric character becomes '_'."""
    return f"frontier_{comparison}__{re.sub(r'[^A-Za-z0-9]', '_', label).strip('_')}.csv"


def reference_frontier(comparison: str, label: str) -> dict[str, np.ndarray]:
    """The reference code's frontier curve of one setting, column by column."""
    path = _data("frontiers") / csv_name(comparison, label)
    if comparison == TOY_COMPARISON:
        path = resources.files("inference_math") / "data" / csv_name(comparison, label)
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    return {key: np.array([float(row[key]) for row in rows]) for key in rows[0]}


def reference_point(comparison: str, label: str, which: str = "max_speed",
                    code: str = "final") -> dict:
    """The reference code's 'max_speed', 'pref_alpha3' or 'pref_alpha4' point of one setting."""
    for entry in reference_settings(comparison, code):
        if entry["name"] == label:
            return entry[which]
    raise InputError(f"no setting {label!r} in comparison {comparison!r}")


#: The settings at whose every frontier point the full-model chapter re-times the code's winning
#: branch: dense and MoE, MLA, a 100K-token context, and speculative decoding.
LATENCY_CHECKS = (("quantization_comparison", "Llama 3 70B 8-bit"),
                  ("all_models_comparison", "Mixtral 8x22B 16-bit"),
                  ("all_models_comparison", "DeepSeek-V3 8-bit"),
                  ("mistral_large_comparison", "Long context"),
                  ("all_models_comparison_with_spec_dec", "Llama 3 70B 8-bit"))


def branch_latency(setting: Setting, ref: dict[str, np.ndarray]) -> np.ndarray:
    """eq-full-forward-latency of the code's winning branch at each point of its frontier ``ref``
    (:func:`reference_frontier`): the saved layout, instance, batch, pipeline and scale-down, and
    for a speculative setting q = γ."""
    from .full_model import compile_branch

    out = np.full(ref["gpus"].size, np.nan)
    for two_d in (0, 1):
        for q in np.unique(ref["gamma"]):
            rows = (ref["two_d"] == two_d) & (ref["gamma"] == q)
            if not rows.any():
                continue
            fn = compile_branch(setting.model, setting.gpu, bool(two_d), q=float(q),
                                context=setting.context, weight_bytes=setting.w)["latency"]
            out[rows] = fn(ref["gpus"][rows], ref["batch_size"][rows], ref["n_pp"][rows],
                           ref["attn_scaledown"][rows])
    return out


def code_latency(setting: Setting, ref: dict[str, np.ndarray]) -> np.ndarray:
    """The forward latency the code saved at each point of ``ref``: the target's, with
    speculative decoding; otherwise one over the speed where the target's is not saved."""
    target = ref["target_fwd_latency_s"]
    if setting.speculative:
        return target
    return np.where(np.isfinite(target), target, 1 / ref["tokens_per_s_per_request"])


def curve_costs(front, ref: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The code's frontier ``ref`` (:func:`reference_frontier`) at its speeds within the range of
    our ``front``: those speeds, the code's cost there and ours at the same speed."""
    x_ref, y_ref = ref["tokens_per_s_per_request"], ref["usd_per_mtok"]
    speeds = np.asarray(front.arrays()[0])
    inside = (x_ref >= speeds.min()) & (x_ref <= speeds.max())
    return x_ref[inside], y_ref[inside], np.asarray(front.cost_at_speed(x_ref[inside]))


def curve_gap(front, ref: dict[str, np.ndarray]) -> tuple[float, float, float, float]:
    """|cost ratio - 1| of our frontier against the code's CSV at the CSV's speeds, where both
    exist: its median and largest, and the lowest and highest of those speeds."""
    x, code, ours = curve_costs(front, ref)
    gap = np.abs(ours / code - 1)
    return float(np.median(gap)), float(np.max(gap)), float(x.min()), float(x.max())


def median_gap_point(front, ref: dict[str, np.ndarray]) -> tuple[float, float, float]:
    """The point of :func:`curve_costs` whose cost gap is the curve's median (the upper of the
    middle two for an even count): its speed, the code's cost and ours."""
    x, code, ours = curve_costs(front, ref)
    at = int(np.argsort(np.abs(ours / code - 1), kind="stable")[x.size // 2])
    return float(x[at]), float(code[at]), float(ours[at])
