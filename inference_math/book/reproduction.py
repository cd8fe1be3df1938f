"""The reproduction record: every number the book reproduces from a source, next to ours.

Each group below recomputes one comparison of a chapter with the functions that chapter uses, and
reads the source's value from the data files that chapter reads, so the record cannot drift from
the chapters. A row holds within its tolerance, or, where the source is wrong (an erratum), is
checked against the corrected value instead and links to the erratum box.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

import numpy as np

ERDIL = "erdil2025inference"
AUSTIN = "austin2025scaling"
POPE = "pope2022efficiently"
MAZUREK = "mazurek2025llm"
MAZUREK_MOE = "mazurek2025moe"
MAZUREK_EMB = "mazurek2025embeddings"
MAZUREK_EXP = "mazurek2025experience"
DEEPSEEK = "deepseekai2024v3"
DATA = resources.files("inference_math") / "data"
_GB = 1e9


@dataclass(frozen=True)
class Row:
    quantity: str  # short: what the row compares
    source: float  # the source's value, read from the data files
    ours: float  # the book's value, computed by the model
    rel: float  # tolerance relative to the reference value
    abs: float = 0.0  # or absolute (half a unit of the last printed digit); the larger counts
    erratum: str | None = None  # the erratum box's name, when the source is wrong here
    corrected: float | None = None  # what ``ours`` is checked against when it is an erratum

    @property
    def reference(self) -> float:
        """The value the row is checked against: the source's, or the corrected one if given."""
        return self.source if self.corrected is None else self.corrected

    @property
    def difference(self) -> float:
        """Ours relative to the source's value."""
        return self.ours / self.source - 1

    @property
    def allowed(self) -> float:
        """The largest accepted |ours - reference|."""
        return max(self.rel * abs(self.reference), self.abs)

    def holds(self) -> bool:
        """Ours within the tolerance of the reference; for an erratum with no corrected value
        given, ours still outside the tolerance of the source's (wrong) value."""
        close = abs(self.ours - self.reference) <= self.allowed
        return not close if self.erratum and self.corrected is None else close


@dataclass(frozen=True)
class Group:
    work: str  # bibliography key of the source
    title: str  # the source's table or figure, as the reader looks it up
    section: str  # the label of the chapter section that derives it
    rows: tuple[Row, ...]
    note: str = ""  # MyST: what the source's value is (printed, the author's code's output, ...)
    erratum: str | None = None  # an erratum on the group as a whole (e.g. its caption)


def _reference() -> dict:
    return json.loads((DATA / "erdil2025_reference.json").read_text())


def _paper_row(quantity, paper, ours, rel, decimals=0, **extra) -> Row:
    """A printed value: within rel of it, or within half a unit of its last printed digit."""
    return Row(quantity, float(paper), float(ours), rel, 0.5 * 10.0**-decimals, **extra)


# ---- Erdil (2025), section 2: the toy model (chapter "Many GPUs: the latency wall") ----------

def table1() -> Group:
    from ..fullmodel.toy_model import max_speed
    from ..presets.hardware import get_gpu
    from ..presets.models import get_model

    ref = _reference()["table1"]
    h100 = get_gpu("h100")
    rows = []
    for row in ref["rows"]:
        ours = max_speed(get_model(row["model"]), h100, t_hop=ref["t_hop_s"], n_reduce=ref["n_reduce"])
        rows.append(Row(f"{row['label']} tok/s", row["tokens_per_s"], ours.tokens_per_s, 0, 0.5))
        rows.append(Row(f"{row['label']} GPUs", row["gpus"], ours.n_gpu_star, 0, 1))
    return Group(ERDIL, "Table 1", "latency-wall-table-1", tuple(rows),
                 "printed to whole tokens/s and GPUs")


def figure1() -> Group:
    from ..fullmodel.toy_model import reference_code_frontier
    from ..presets.hardware import get_gpu
    from ..presets.models import get_model

    ref = _reference()["figure1"]
    code = ref["reference_code"]
    h100, cap = get_gpu("h100"), ref["demand_caps_tokens_per_s"][0]
    f70 = reference_code_frontier(get_model("llama-3-70b"), h100, demand_cap=cap)
    f8 = reference_code_frontier(get_model("llama-3-8b"), h100, demand_cap=cap)
    probe = ref["probe_fraction_of_max_speed"] * f70.tokens_per_s[0]
    rows = (
        Row("70B top tok/s", code["llama-3-70b"]["max_tokens_per_s"], f70.tokens_per_s[0], 0.01),
        Row("70B GPUs at top", code["llama-3-70b"]["gpus_at_max"], f70.n_gpu[0], 0.01),
        Row("8B top tok/s", code["llama-3-8b"]["max_tokens_per_s"], f8.tokens_per_s[0], 0.01),
        Row("70B $/Mtok at 90% of top",
            code["llama-3-70b_usd_per_mtok_at_90pct_of_max_speed_10k_demand"],
            f70.cost_at_speed(probe), 0.05),
        Row(f"8B $/Mtok at {ref['probe_tokens_per_s']} tok/s",
            code["llama-3-8b_usd_per_mtok_at_400_tok_s_10k_demand"],
            f8.cost_at_speed(ref["probe_tokens_per_s"]), 0.05),
    )
    return Group(ERDIL, "Figure 1", "latency-wall-figure-1", rows,
                 "the author's code's output, demand capped at 10,000 tokens/s")


def square_root_law() -> Group:
    from ..derivations import scaling
    from ..presets.models import get_model

    sq = _reference()["square_root_law"]
    keys = ["palm-8b", "palm-62b", "palm-540b"]
    params = np.array([get_model(k).total_params for k in keys])
    ms = np.array([sq["palm_best_latency_ms"][k] for k in keys])
    slope = float(np.polyfit(np.log(params), np.log(ms), 1)[0])
    nominal, base = sq["nominal_params"], sq["baseline_tokens_per_s"]
    # The source's measured latencies give the exponent; ours is the derived one (1/2).
    rows = [Row("exponent, PaLM fit", slope, float(scaling.square_root_exponent()), 0, 0.05)]
    for key, label in (("llama-3-70b", "70B"), ("llama-3.1-405b", "405B")):
        ours = scaling.square_root_law_speed(base, nominal["llama-3-8b"], nominal[key])
        rows.append(Row(f"{label} predicted tok/s", sq["predicted_tokens_per_s"][key], ours, 0, 0.5))
    return Group(ERDIL, "Section 2.2.3", "latency-wall-square-root-law", tuple(rows),
                 "the exponent of PaLM's measured latencies, and the speeds the law predicts")


def takeaways() -> Group:
    from ..derivations import scaling

    ref = _reference()["takeaways"]
    rows = (
        Row("latency cut, 2× bandwidth", ref["doubling_bandwidth_latency_reduction"],
            -float(scaling.doubling_bandwidth_latency_change()), 0, 0.01),
        Row("speed-up, half precision", ref["halving_precision_speedup"],
            float(scaling.halving_precision_speedup()), 0, 0.005),
    )
    return Group(ERDIL, "Takeaway 3", "latency-wall-speed-ups", rows, "printed as percentages")


# ---- Austin et al. (2025), the roofline of a decoding step (chapter "The decode roofline") ----

def _roofline():
    """The chapter's step-time functions, of (b, kv bytes per token, context, p, N, chips, B, C)."""
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import intensity

    args = (S.b, S.kv_bytes, S.seq_kv, S.p, S.n_param, S.n_gpu, S.hbm_bw, S.flops)
    return (compile_fn(intensity.step_time(), args),
            compile_fn(intensity.step_time_min(), args[:-1]))


def roofline_critical_batch() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import intensity
    from ..presets.hardware import get_gpu

    src, v5e = intensity.AUSTIN2025, get_gpu("tpu-v5e")
    bstar_fn = compile_fn(intensity.critical_batch(), (S.p, S.flops, S.hbm_bw))
    rows = (
        Row("b*, bf16", src["ridge_stated"], float(bstar_fn(2, v5e.flops(16), v5e.bandwidth())),
            0.01),
        Row("b*, int8 weights", src["b_crit_int8_weights_stated"],
            float(bstar_fn(1, v5e.flops(16), v5e.bandwidth())), 0.01),
        Row("b*, int8 × int8", src["b_crit_int8_int8_stated"],
            float(bstar_fn(1, v5e.flops(8), v5e.bandwidth())), 0.02),
    )
    return Group(AUSTIN, "Critical batch", "decode-roofline-linear-operations", rows,
                 "the batch at which a TPU v5e's matmuls turn compute bound")


def roofline_attention() -> Group:
    from ..core import symbols as S
    from ..derivations import intensity

    src = intensity.AUSTIN2025
    # The source's own rounded chip intensity of 240 FLOP per byte, as the chapter checks it.
    tokens = intensity.prefill_attention_length().rhs.subs(
        {S.p_act: 2, S.flops: src["ridge_stated"], S.hbm_bw: 1})
    rows = (Row("prefill tokens", src["prefill_tokens_stated"], float(tokens), 0),)
    return Group(AUSTIN, "Attention", "decode-roofline-attention", rows,
                 "the prompt length above which prefill attention is compute bound")


def roofline_pop_quiz() -> Group:
    from ..derivations import intensity
    from ..presets.hardware import get_gpu

    pq, v5e = intensity.AUSTIN2025["pop_quiz"], get_gpu("tpu-v5e")
    step_fn, step_min_fn = _roofline()
    hw = (pq["kv_bytes_per_token"], pq["context"], pq["weight_bytes"], pq["n_param"], pq["chips"],
          pq["hbm_bw"])
    (small, large), (ms_small, ms_large) = pq["batches"], pq["stated_ms"]
    rows = (
        Row(f"b={small} ms", ms_small, 1e3 * float(step_min_fn(small, *hw)), 0.05),
        Row(f"b={large} ms", ms_large, 1e3 * float(step_fn(large, *hw, v5e.flops(16))), 0.03),
    )
    return Group(AUSTIN, "Pop quiz", "decode-roofline-pop-quiz", rows,
                 "a 30-billion-parameter model on 16 TPU v5e, with the quiz's own bandwidth",
                 "erratum-decode-roofline-two-bandwidths-for-one-chip")


def roofline_appendix_a() -> Group:
    from ..derivations import intensity
    from ..presets.hardware import get_gpu

    app, v5e = intensity.AUSTIN2025["appendix_a"], get_gpu("tpu-v5e")
    _, step_min_fn = _roofline()
    layer = float(step_min_fn(1, 0, 0, app["weight_bytes"], app["n_param"], app["shards"],
                              v5e.bandwidth()))
    rows = (Row("one layer, µs", app["stated_us"], 1e6 * layer, 0.01),)
    return Group(AUSTIN, "Appendix A", "decode-roofline-appendix-a", rows,
                 "the least latency of one feed-forward layer over 4 chips")


# ---- Austin et al. (2025) and the notes on Pope et al. (2022) (chapter "KV-cache economics") --

def _llama2_13b() -> tuple[dict, float]:
    """LLaMA 2-13B's parameter counts and its bf16 cache of one sequence, as the chapter has them."""
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import kv_cache as kv

    shape, stated = kv.LLAMA2_13B, kv.LLAMA2_13B_STATED
    d_ff = round(shape["ffw_multiplier"] * shape["d_model"])
    counts = kv.parameter_counts(**{k: shape[k] for k in ("n_layers", "d_model", "n_q", "n_kv",
                                                          "d_head", "vocab")},
                                 d_ff=d_ff, tied=False)
    seq_fn = compile_fn(kv.sequence_bytes(), (S.n_layers, S.n_kv, S.d_head, S.p_act, S.seq_kv))
    seq = float(seq_fn(shape["n_layers"], shape["n_kv"], shape["d_head"],
                       stated["bytes_per_element"], stated["context"]))
    return counts, seq


def kv_llama_memory() -> Group:
    from ..derivations import kv_cache as kv

    stated = kv.LLAMA2_13B_STATED
    counts, seq = _llama2_13b()
    weights = stated["bytes_per_param"] * counts["total"]
    activation = stated["context"] * kv.LLAMA2_13B["d_model"] * stated["bytes_per_element"]
    rows = [Row(f"{label}, billions", stated[key] / 1e9, counts[part] / 1e9, 0, 0.05)
            for label, part, key in (("feed-forward", "ff", "ff_params"),
                                     ("vocabulary", "embedding", "vocab_params"),
                                     ("attention", "attention", "attention_params"))]
    rows += [
        Row("parameters, billions", stated["total_params"] / 1e9, counts["total"] / 1e9, 0.01),
        Row("bf16 weights, GB", stated["weights_bytes"] / _GB, weights / _GB, 0.01),
        Row("cache per sequence, GB", stated["kv_seq_bytes"] / _GB, seq / _GB, 0.01),
        Row("caches exceeding weights", stated["sequences_exceeding_weights"],
            float(np.ceil(weights / seq)), 0),
        Row("prefill activation, MB", stated["prefill_activation_bytes"] / 1e6, activation / 1e6,
            0.05),
    ]
    return Group(AUSTIN, "LLaMA 2-13B", "kv-cache-llama-2-13b", tuple(rows),
                 "parameters printed to one decimal in billions, bf16 bytes in GB and MB")


def _kv_table(kind: str, title: str, note: str) -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import kv_cache as kv
    from ..presets.hardware import get_gpu

    tables = kv.LLAMA2_13B_TABLES
    src = tables[kind]
    v5e = get_gpu("tpu-v5e")
    _, seq = _llama2_13b()
    shrink = 1.0
    if kind == "gqa":
        shrink = float(kv.gqa_ratio().rhs.subs({S.n_q: kv.LLAMA2_13B["n_q"], S.n_kv: src["n_kv"]}))
    args = (S.b, S.kv_seq, S.p, S.n_param, S.n_gpu, S.hbm_bw)
    step_fn = compile_fn(kv.step_time_per_sequence(), args)
    rate_fn = compile_fn(kv.throughput_per_sequence(), args)
    rows = [Row("cache per sequence, GB", src["kv_seq_gb"], seq / shrink / _GB, 0.01)]
    # The source's own inputs: its rounded cache and weights (p = 1 with N in bytes), in GB.
    inputs = (src["kv_seq_gb"] * _GB, 1, tables["params_gb"] * _GB, tables["n_chips"],
              v5e.hbm_bandwidth)
    for i, batch in enumerate(tables["batches"]):
        rows.append(Row(f"b={batch} ms", src["step_ms"][i],
                        1e3 * float(step_fn(batch, *inputs)), 0, 0.01 + 1e-9))
        rows.append(Row(f"b={batch} tok/s", src["tokens_per_s"][i],
                        float(rate_fn(batch, *inputs)), 0, 0.01 + 1e-9))
    if kind == "mha":  # "We OOM beyond batch size 16", in the slice's 128 GiB
        fit = kv.largest_batch(n_chips=tables["n_chips"], hbm_per_chip=tables["prose_hbm_gib"]
                               * 2**30 / tables["n_chips"], n_params=tables["params_gb"] * _GB,
                               bytes_per_param=1, kv_seq_bytes=src["kv_seq_gb"] * _GB)
        rows.append(Row("largest batch", tables["oom_beyond"], fit, 0))
    return Group(AUSTIN, title, "kv-cache-llama-tables", tuple(rows), note,
                 "erratum-kv-cache-the-tables-are-in-gb-not")


def kv_table_mha() -> Group:
    return _kv_table("mha", "LLaMA 2-13B, first table",
                     "step time and throughput on 8 TPU v5e, printed to two decimals")


def kv_table_gqa() -> Group:
    return _kv_table("gqa", "LLaMA 2-13B, second table",
                     "the same with the cache shrunk five times by grouped-query attention")


def kv_worked_problems() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import kv_cache as kv
    from ..presets.hardware import get_gpu

    shape, q1, q2, q3, q5 = (kv.WORKED_MODEL, kv.WORKED_Q1, kv.WORKED_Q2, kv.WORKED_Q3,
                             kv.WORKED_Q5)
    v5e = get_gpu("tpu-v5e")
    dense = kv.parameter_counts(**shape, tied=True)
    per_token = kv.kv_bytes_per_token(n_layers=shape["n_layers"], n_kv=shape["n_kv"],
                                      d_head=shape["d_head"], bytes_per_element=1)
    seq = per_token * q2["context"]
    fits = {n_kv: kv.largest_batch(n_chips=q2["n_chips"], hbm_per_chip=q2["hbm_per_chip"],
                                   n_params=q2["param_bytes"], bytes_per_param=1,
                                   kv_seq_bytes=seq * n_kv / shape["n_kv"])
            for n_kv in (shape["n_kv"], 1)}
    load_fn = compile_fn(kv.step_time_per_sequence().rhs.subs(S.b, 0),
                         (S.p, S.n_param, S.n_gpu, S.hbm_bw))
    load = float(load_fn(1, dense["total"], q3["n_chips"], v5e.hbm_bandwidth))
    moe = kv.parameter_counts(**shape, tied=True, n_experts=q5["n_experts"],
                              n_active=q5["n_active"])
    bcrit_fn = compile_fn(kv.moe_critical_batch(), (S.b_star, S.n_experts, S.n_active))
    rows = (
        Row("Q1 parameters, billions", q1["params"] / 1e9, dense["total"] / 1e9, 0.005),
        Row("Q1 int8 cache per token, kB", q1["kv_per_token_int8"] / 1e3, per_token / 1e3, 0.001),
        Row("Q2 cache per sequence, GB", q2["kv_per_seq"] / _GB, seq / _GB, 0.005),
        Row("Q2 largest batch", q2["answer"], fits[shape["n_kv"]], 0),
        Row("Q2 same, one KV head", q2["answer_one_kv_head"], fits[1], 0, 1),
        Row("Q3 weight load, ms", q3["answer_ms"], 1e3 * load, 0, 0.1),
        Row("Q5 parameters, billions", q5["total_params"] / 1e9, moe["total"] / 1e9, 0.005),
        # The source's 31.2 is not ours rounded to its digit (31.3): an erratum.
        Row("Q5 active, billions", q5["active_params"] / 1e9, moe["active"] / 1e9, 0, 0.05,
            "erratum-kv-cache-active-parameters-of-question-5"),
        Row("Q5 critical batch", q5["moe_b_crit"],
            float(bcrit_fn(q5["b_crit"], q5["n_experts"], q5["n_active"])), 0),
    )
    return Group(AUSTIN, "Worked problems", "kv-cache-worked-problems", rows,
                 "the answers of the scaling book's problems, 2 to 5 from its later revision")


def kv_pope_crossover() -> Group:
    from ..derivations import kv_cache as kv

    palm = kv.PALM_MEMORY
    weights = palm["bytes_per_param"] * palm["n_param"]
    equal = kv.cached_tokens_equal_to_params(
        n_params=palm["n_param"], bytes_per_param=palm["bytes_per_param"],
        n_layers=palm["n_layers"], n_kv=palm["n_kv"], d_head=palm["d_head"],
        bytes_per_element=palm["bytes_per_element"])
    box = "erratum-kv-cache-the-crossover-of-the-notes-on"
    rows = (
        Row("PaLM 540B weights, GB", palm["param_mem_gb"], weights / _GB, 1e-12),
        Row("tokens B·S", palm["tokens"], equal, 0.01, erratum=box),
        Row(f"batch at S={palm['context']}", palm["batch"], equal / palm["context"], 0.01,
            erratum=box),
    )
    return Group(POPE, "Memory costs", "kv-cache-pope-crossover", rows,
                 "PaLM 540B with one key-value head: where the cache weighs as much as the weights")


# ---- Austin et al. (2025), the worked problems again (chapter "Worked problems") -------------

def worked_question3() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import intensity
    from ..derivations import kv_cache as kv

    q3 = kv.WORKED_Q3
    counts = kv.parameter_counts(**kv.WORKED_MODEL, tied=True)
    load_fn = compile_fn(intensity.step_time_min().rhs.subs(S.b, 0),
                         (S.p, S.n_param, S.n_gpu, S.hbm_bw))
    at_variant = float(load_fn(1, counts["total"], q3["n_chips"], q3["variant_bw_per_chip"]))
    rows = (Row(f"weight load at {q3['variant_bw_per_chip'] / 1e9:.0f} GB/s, ms",
                q3["variant_answer_ms"], 1e3 * at_variant, 0, 0.1,
                "erratum-worked-problems-two-printed-answers-neither-from-the"),)
    return Group(AUSTIN, "Worked problems: question 3", "worked-problems-q3", rows,
                 "another copy of the later revision, with a lower bandwidth")


def worked_question5() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import kv_cache as kv
    from ..derivations import roofline

    q5, shape = kv.WORKED_Q5, kv.WORKED_MODEL
    dense = kv.parameter_counts(**shape, tied=True)
    moe = kv.parameter_counts(**shape, tied=True, n_experts=q5["n_experts"],
                              n_active=q5["n_active"])
    fwd = (roofline.arithmetic_time() * S.flops).subs({S.n_param: S.n_active_param, S.b: S.seq_q})
    per_token = float(compile_fn(fwd, (S.n_active_param, S.seq_q))(moe["active"], 1))
    box = "erratum-worked-problems-the-active-parameters"
    rows = (
        Row("growth of all parameters", q5["total_growth"], moe["total"] / dense["total"], 0, 0.5),
        Row("active, billions", q5["active_params"] / 1e9, moe["active"] / 1e9, 0, 0.05, box),
        # The source's FLOPs per token, 2 × its 31.2e9 active parameters, inherit the slip.
        Row("FLOPs per token, billions", q5["flop_per_param"] * q5["active_params"] / 1e9,
            per_token / 1e9, 0, 0.05, box),
    )
    return Group(AUSTIN, "Worked problems: question 5", "worked-problems-q5", rows,
                 "the worked model as a mixture of 16 experts, 2 of them active")


# ---- Austin et al. (2025) and the notes on Pope et al. (2022) (chapter "How many chips") -------

def sharding_generation() -> Group:
    from ..core import symbols as S
    from ..derivations import sharding
    from ..presets.hardware import get_gpu

    src = sharding.QUOTED
    y_max = sharding.max_model_parallelism().rhs.subs(S.p_act, S.p).subs(
        {S.d_ff: src["gen_d_ff"], S.b: src["gen_batch"], S.beta_bw: src["gen_beta"]})
    rows = (
        Row("largest Y", src["gen_y_max"], float(y_max), 0),
        # "around 8" for the TPU v5e, with a link counted in both directions
        Row("β of the TPU v5e", src["gen_beta"],
            sharding.bandwidth_ratio(get_gpu("tpu-v5e"), 2), 0.15),
    )
    return Group(AUSTIN, "Generation", "sharding-model-parallelism", rows,
                 "how far model parallelism goes before the network is the bottleneck")


def sharding_question7() -> Group:
    import sympy as sp

    from ..core import symbols as S
    from ..derivations import sharding

    src = sharding.QUOTED
    spec = sharding.optimum_2d_at_ratio(src["q7_f_over_d"])
    # The coefficient of T*_2D at bf16, in units of b·d_model/(sqrt(N)·W_ici).
    coeff = float(spec["t_star"].subs(S.p_act, 2) * sp.sqrt(S.n_gpu) * S.ici_bw
                     / (S.b * S.d_model))
    rows = (
        Row("coefficient of T*", src["q7_t_coeff"], coeff, 0, 0.05),
        Row("1-D/2-D crossover, chips", src["q7_crossover_printed"], float(spec["n_cross"]), 0,
            erratum="erratum-sharding-the-q7-crossover-is-not-the",
            corrected=float(src["q7_crossover_later_rev"])),
    )
    return Group(AUSTIN, "Question 7", "sharding-two-dimensions", rows,
                 "2-D weight-stationary sharding at a feed-forward width of four model widths")


def sharding_appendix_c() -> Group:
    import sympy as sp

    from ..core import symbols as S
    from ..derivations import sharding

    src = sharding.QUOTED
    appc = {S.y_model: src["appc_shards"], S.ici_bw: int(src["appc_ici_bw"]),
            S.t_hop: sp.Rational(1, 10**6)}
    buffer = sharding.latency_bound_buffer().rhs.subs(appc)
    acts = src["appc_batch"] * src["appc_d_model"] * src["appc_act_bytes"]
    rows = (
        Row("latency-bound buffer, kB", src["appc_buffer"] / 1e3, float(buffer) / 1e3, 0),
        Row("int8 activations, kB", src["appc_act_printed"] / 1e3, acts / 1e3, 0.001),
        Row("divisor of B·D", src["appc_divisor"], float((S.ici_bw * S.t_hop).subs(appc)), 0),
    )
    return Group(AUSTIN, "Appendix C", "sharding-latency-bound", rows,
                 "when the collectives of decode are latency bound, on 8 TPU v5e")


def sharding_elements() -> Group:
    from ..derivations import sharding

    src = sharding.QUOTED
    rows = (Row("1-D/2-D crossover, chips", src["esti_crossover"],
                float(sharding.printed_crossover_esti()), 0),)
    return Group(POPE, "2D weight stationary", "sharding-elements", rows,
                 "the chip count above which 2-D sharding moves fewer elements")


def sharding_min_chips() -> Group:
    from ..core import symbols as S
    from ..derivations import sharding

    src = sharding.QUOTED
    values = {S.p: src["esti_bytes_per_weight"], S.n_param: int(src["esti_params"]),
              S.hbm_cap: int(src["esti_chip_bytes"])}
    chips = sharding.min_chips_for_weights().rhs.subs(values)
    rows = (Row("fewest chips", src["esti_min_chips"], float(chips), 0),)
    return Group(POPE, "Partitioning the MLP", "sharding-min-chips", rows,
                 "540 billion int8 weights on chips of 32 GB")


# ---- Mazurek and Gabriel (2025), the counts of Llama 3.3 70B ("Counting a dense transformer") --

def _llama33_shape() -> tuple[dict, int]:
    """The post's config as exact shape symbols, and its bytes per weight."""
    from ..core import symbols as S
    from ..derivations import dense_economics as de

    cfg = de.MAZUREK2025["config"]
    shape = {S.d_model: cfg["hidden_size"], S.d_ff: cfg["intermediate_size"],
             S.n_layers: cfg["num_hidden_layers"], S.n_q: cfg["num_attention_heads"],
             S.n_kv: cfg["num_key_value_heads"], S.d_head: cfg["head_dim"],
             S.vocab: cfg["vocab_size"]}
    return shape, cfg["dtype_bytes"]


def dense_parameters() -> Group:
    from ..derivations import dense_economics as de

    post = de.MAZUREK2025
    shape, width = _llama33_shape()
    n = int(de.total_params().rhs.subs(shape))
    hbm = post["hbm_gb"] * _GB
    rows = (
        Row("parameters, billions", post["total_params"] / 1e9, n / 1e9, 0),
        Row("bf16 weights, GB", post["weight_bytes"] / _GB, width * n / _GB, 0),
        Row("two H100s filled, %", 100 * post["two_gpu_fraction_stated"],
            100 * width * n / (2 * hbm), 0, 0.5),
        Row("two H100s free, GB", post["two_gpu_free_gb_stated"], (2 * hbm - width * n) / _GB,
            0, 1),
    )
    return Group(MAZUREK, "Parameters", "dense-counting-parameters", rows,
                 "Llama 3.3 70B's weights and the two H100s they nearly fill")


def dense_prefill_flops() -> Group:
    from ..core import symbols as S
    from ..derivations import dense_economics as de

    post = de.MAZUREK2025
    shape, _ = _llama33_shape()
    total = de.prefill_flops().rhs.subs({**shape, S.seq_kv: post["prefill_tokens"]})
    head = de.lm_head_flops(1).subs(shape)
    per_layer = (total - head) / shape[S.n_layers]
    rows = (
        Row("prefill, TFLOP", post["prefill_flops_stated"] / 1e12, float(total) / 1e12, 1e-4),
        Row("per layer, TFLOP", post["per_layer_flops_stated"] / 1e12, float(per_layer) / 1e12,
            1e-4),
        Row("LM head, GFLOP", post["lm_head_flops_stated"] / 1e9, float(head) / 1e9, 1e-4),
    )
    return Group(MAZUREK, "Prefill FLOPs", "dense-counting-prefill-flops", rows,
                 f"a prompt of {post['prefill_tokens']:,} tokens")


def dense_kv_cache() -> Group:
    from ..core import symbols as S
    from ..derivations import dense_economics as de
    from ..derivations import kv_cache as kv

    post = de.MAZUREK2025
    shape, width = _llama33_shape()
    values = {S.n_layers: shape[S.n_layers], S.n_kv: shape[S.n_kv], S.d_head: shape[S.d_head],
              S.p_act: width}
    seq = kv.sequence_bytes().rhs
    short = float(seq.subs({**values, S.seq_kv: post["prefill_tokens"]}))
    long = float(seq.subs({**values, S.seq_kv: post["kv_long_context"]}))
    box = "erratum-dense-counting-decimal-and-binary-units-and-a"
    rows = (
        Row(f"{post['prefill_tokens']:,} tokens, MB", post["kv_mb_stated"], short / 1e6, 0, 0.5),
        Row("same, draft, MB", post["kv_mb_draft"], short / 1e6, 0, 0.5, box),
        Row(f"{post['kv_long_context']:,} tokens, GB", post["kv_long_gb_stated"], long / _GB, 0,
            0.5, box),
    )
    return Group(MAZUREK, "KV cache", "dense-counting-kv-cache", rows,
                 "the cache of one sequence, printed to whole MB and GB")


# ---- Mazurek and Gabriel (2025), time (chapter "Prefill and decode") ---------------------------

def prefill_decode_one_gpu() -> Group:
    from ..derivations import dense_economics as de
    from ..presets.models import get_model

    post, llama = de.MAZUREK2025, get_model("llama-3.3-70b")
    c1, b1 = post["h100_flops"], post["h100_bandwidth"]
    weights = llama.weight_bytes * de.post_param_count(llama)
    tokens = post["prefill_tokens"]
    t_pre = float(de.prefill_flops_of(llama, tokens)) / c1
    t_load = weights / b1
    f_dec = float(de.decode_flops_of(llama, tokens))
    t_dec_memory = (weights + llama.kv_bytes_per_token * tokens) / b1
    rows = (
        Row("prefill, s", post["prefill_time_stated_s"], t_pre, 0, 0.005),
        Row("weight reads, s", post["load_time_stated_s"], t_load, 0, 0.005),
        Row("prefill over reads", post["prefill_over_load_stated"], t_pre / t_load, 0, 0.1),
        Row("decode, TFLOP", post["decode_tflops_stated"], f_dec / 1e12, 0, 0.005),
        Row("decode arithmetic, ms", 1e3 * post["decode_compute_stated_s"], 1e3 * f_dec / c1,
            0.05),
        Row("decode reads, s", post["load_time_stated_s"], t_dec_memory, 0, 0.005),
    )
    return Group(MAZUREK, "One prompt", "prefill-decode-one-prompt", rows,
                 f"a prompt of {tokens:,} tokens and its next token on one H100")


def prefill_decode_tensor_parallel() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import dense_economics as de
    from ..presets.models import get_model

    tp, llama = de.MAZUREK2025["tp"], get_model("llama-3.3-70b")
    args = (S.n_reduce, S.p_act, S.d_model, S.n_layers, S.n_gpu, S.ici_bw)
    t_tp = float(compile_fn(de.tp_overhead(), args)(
        tp["syncs_per_layer"], tp["bytes"], llama.d_model, llama.layers, tp["n_gpu"],
        tp["nvlink_bandwidth"]))
    rows = (Row("all-reduces per token, µs", tp["stated_us"], 1e6 * t_tp, 0, 0.5),)
    return Group(MAZUREK, "Tensor parallelism", "prefill-decode-tensor-parallelism", rows,
                 f"the ideal NVLink transfers of one decoded token over {tp['n_gpu']} H100s")


def prefill_decode_figure16() -> Group:
    from ..derivations import dense_economics as de
    from ..presets.models import get_model

    tm, llama = de.MAZUREK2025["throughput_model"], get_model("llama-3.3-70b")
    hw = de.post_hardware()
    rows = []
    for i, batch in enumerate(tm["batches"]):
        run = de.simple_model(llama, batch, prompt=tm["prompt"], output=tm["output"], hardware=hw)
        rows.append(Row(f"b={batch} tok/s", tm["total_tok_s"][i], run.tokens_per_s, 0, 0.05))
        rows.append(Row(f"b={batch} per user", tm["per_request_tok_s"][i],
                        run.per_request_tokens_per_s, 0, 0.05))
    return Group(MAZUREK, "Fig. 16", "prefill-decode-time-model", tuple(rows),
                 "the throughput of the post's time model on four H100s, printed to 0.1 tokens/s",
                 "erratum-prefill-decode-the-saturation-of-fig-16-is")


# ---- Mazurek and Gabriel (2025), the cost of Llama 3.3 70B on H100s (chapter "Pricing") -----

def pricing_table1() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import dense_economics as de

    post = de.MAZUREK2025
    pr, t1, elapsed = post["pricing"], post["table1"], post["fig18_elapsed_s"]
    price_fn = compile_fn(de.output_price(), (S.n_gpu, S.price, S.t_batch, S.b, S.t_prompt,
                                               S.t_output, S.gamma_in))
    rows = []
    for i, batch in enumerate(t1["batch"]):
        beta = 1e6 * float(price_fn(pr["n_gpu"], pr["gpu_price_per_hour"], elapsed[batch], batch,
                                    pr["prompt"], pr["output"], pr["gamma"]))
        tok_s = batch * (pr["prompt"] + pr["output"]) / elapsed[batch]
        rows.append(Row(f"b={batch} input $/M", t1["input_per_m"][i], pr["gamma"] * beta, 0, 0.005))
        rows.append(Row(f"b={batch} output $/M", t1["output_per_m"][i], beta, 0, 0.005))
        wrong = "erratum-pricing-one-tokens-per-second-cell-of" if batch == 64 else None
        rows.append(Row(f"b={batch} tok/s", t1["tokens_per_s"][i], tok_s, 0, 0.01, wrong))
    return Group(MAZUREK, "Table 1", "pricing-cost-table", tuple(rows),
                 "prices per million tokens and tokens per second by batch size")


# ---- DeepSeek-V3, its report and Mazurek and Schreiber (2025) (chapter "MoE anatomy") ---------

def deepseek_architecture() -> Group:
    from ..derivations import deepseek_serving as ds

    arch, counts = ds.DEEPSEEK_V3, ds.parameter_counts()
    rows = (
        Row("parameters, billions", arch["published_total_params"] / 1e9, counts["total"] / 1e9,
            1e-3),
        Row("active, billions", arch["published_active_params"] / 1e9, counts["active"] / 1e9,
            0.02),
    )
    return Group(DEEPSEEK, "Parameters", "deepseek-v3-architecture", rows,
                 "the published totals, against a count of the real layer mix")


def deepseek_mla_weights() -> Group:
    from ..derivations import deepseek_serving as ds

    post = ds.POST
    matrices = ds.mla_matrix_bytes()
    per_layer = ds.mla_bytes_per_layer()
    total = ds.DEEPSEEK_V3["n_layers"] * per_layer
    rows = [Row(f"{name}, MB", stated, matrices[name] / 1e6, 0, 0.05)
            for name, stated in post["mla_mb"].items()]
    rows += [
        Row("one layer, MB", post["mla_mb_per_layer"], per_layer / 1e6, 0, 0.1),
        Row("all layers, GB", post["mla_gb"], total / _GB, 0, 0.05),
        Row("copy per GPU, GB", post["mla_gb_dp_paragraph"], total / _GB, 0, 0.5,
            "erratum-deepseek-v3-approximately-10-gb-of-mla-weights"),
    ]
    return Group(MAZUREK_MOE, "MLA weights", "deepseek-v3-mla-weights", tuple(rows),
                 "the attention matrices in FP8, printed to 0.1 MB")


def deepseek_latent_cache() -> Group:
    from ..derivations import deepseek_serving as ds
    from ..derivations import kv_cache as kv

    post, lim = ds.POST, ds.POST["kv_limit"]
    token = ds.kv_bytes_per_token(ds.DEEPSEEK_V3["n_layers"], post["kv_element_bytes"])
    other = {key: kv.kv_bytes_per_token(**cfg) for key, cfg in ds.KV_COMPARISON.items()}
    batch = ds.kv_limited_batch(lim["nodes"] * lim["gpus_per_node"], lim["kv_gb_per_gpu"] * _GB,
                                lim["kv_bytes"], lim["context"])
    rows = (
        Row("DeepSeek-V3, kB/token", post["kv_kb"], token / 1e3, 0, 1),
        Row("Llama 3.1 405B, kB/token", post["kv_kb_llama_405b"],
            other["llama-3.1-405b"] / 1e3, 0, 1),
        Row("Qwen3 32B, kB/token", post["kv_kb_qwen3_32b"], other["qwen3-32b"] / 1e3, 0, 1,
            "erratum-deepseek-v3-the-cache-of-qwen3-32b"),
        Row(f"batch at {lim['context']:,} tokens", lim["batch"], batch, 0, 0.5),
    )
    return Group(MAZUREK_MOE, "Latent cache", "deepseek-v3-latent-cache", rows,
                 "bytes per token of context, and the batch whose caches fill 32 H100s")


def deepseek_experts() -> Group:
    from ..derivations import deepseek_serving as ds

    post, arch, counts = ds.POST, ds.DEEPSEEK_V3, ds.parameter_counts()
    expert = ds.expert_bytes_value()
    dense_layer = ds.expert_bytes_value(arch["d_ff_dense"])
    act_ep = (post["comm_dispatch_bytes"] + post["comm_combine_bytes"]) * arch["d_model"] \
        * arch["n_layers"]
    per_layer = ds.mla_bytes_per_layer()
    gpus = np.arange(1, 257)
    ep = np.array([ds.ep_bytes_per_gpu_value(int(n)) for n in gpus])
    crossing = int(gpus[np.argmax(ep < arch["n_layers"] * per_layer)])
    box = "erratum-deepseek-v3-the-expert-numbers"
    rows = (
        Row("one expert, MB", post["expert_mb"], expert / 1e6, 0, 0.5, box),
        Row("one dense layer, MB", post["dense_layer_mb"], dense_layer / 1e6, 0.03),
        Row("dense layers, GB", post["dense_gb"], arch["n_dense"] * dense_layer / _GB, 0.03),
        Row("embeddings, GB", post["embeddings_gb"], ds.embedding_bytes() / _GB, 0.03),
        Row("expert layers, billions", post["expert_layer_params"] / 1e9,
            counts["experts"] / 1e9, 0, 0.5, box),
        Row("expert layers, % of all", 100 * post["expert_layer_share"],
            100 * counts["experts"] / counts["total"], 0, 0.05, box),
        Row("expert activations, MB", post["act_ep_mb"], act_ep / 1e6, 0, 0.05, box),
        # "in configurations exceeding 64 GPUs" the MLA weights outweigh a GPU's experts
        Row("MLA heavier above, GPUs", post["mla_exceeds_experts_above_gpus"],
            crossing - 1, 0),
        Row("experts per GPU, prefill", post["deepseek_prefill"]["routed_per_gpu"],
            ds.routed_experts_per_gpu(post["deepseek_prefill"]["ep"],
                                      post["deepseek_prefill"]["redundant"]), 0),
        Row("experts per GPU, decode", post["deepseek_decode"]["routed_per_gpu"],
            ds.routed_experts_per_gpu(post["deepseek_decode"]["ep"],
                                      post["deepseek_decode"]["redundant"]), 0),
    )
    return Group(MAZUREK_MOE, "Experts", "deepseek-v3-experts", rows,
                 "the FP8 bytes of experts, dense layers and embeddings, and how they are spread")


def deepseek_all_to_all() -> Group:
    from ..derivations import deepseek_serving as ds

    post = ds.POST
    coefficient = ds.a2a_bytes_value(1, 1, post["comm_layers"])
    rows = (
        Row("bytes per token, GB", post["comm_gb"], coefficient / _GB, 0, 0.00005),
        Row("shared-expert imbalance", post["imbalance_stated"],
            float(ds.imbalance_factor(post["imbalance_gpus"])), 0, 0.1),
    )
    return Group(MAZUREK_MOE, "All-to-all", "deepseek-v3-all-to-all", rows,
                 "the traffic of expert parallelism over all layers, and the load of 16 GPUs")


def deepseek_dollars() -> Group:
    from fractions import Fraction

    from ..derivations import deepseek_serving as ds

    eco, pi = ds.POST["economics"], ds.POST["prime_intellect"]
    rows = (
        Row("tokens per day, billions", eco["tokens_day_b"],
            ds.daily_tokens(eco["tok_s_per_gpu"], eco["n_gpu"]) / 1e9, 0, 0.05),
        Row("tok/s per user", eco["req_tok_s"],
            ds.request_rate_value(eco["tok_s_per_gpu"], eco["batch_per_gpu"]), 0, 0.05),
        Row(f"{eco['n_gpu']} GPUs a day, $", eco["cost_day"], eco["n_gpu"] * eco["usd_per_gpu_hour"]
            * ds.HOURS_PER_DAY, 0),
        Row("$/Mtok", eco["usd_per_mtok"],
            ds.cost_per_mtok(eco["tok_s_per_gpu"], eco["usd_per_gpu_hour"]), 0, 0.005),
        Row(f"{pi['n_gpu']} GPUs a day, $", pi["usd_day"], float(Fraction(pi["usd_per_gpu_hour"])
                                                        * pi["n_gpu"] * ds.HOURS_PER_DAY), 0, 0.5),
    )
    return Group(MAZUREK_MOE, "Tokens to dollars", "deepseek-v3-dollars", rows,
                 "SGLang's measured rate on 72 H100s at 2 USD an hour, and a rented cluster of 64")


def deepseek_daily_profit() -> Group:
    from fractions import Fraction

    from ..derivations import deepseek_serving as ds

    orr = ds.POST["openrouter"]
    rev = ds.revenue(orr["input_btok"], orr["cached_share"], orr["usd_cached"], orr["usd_miss"],
                     orr["output_btok"], orr["usd_output"])
    stated = dict(zip(("cached_input", "miss_input", "output"), orr["parts"], strict=True))
    stated["total"] = orr["total"]
    rows = tuple(Row(f"{label}, $", float(Fraction(stated[key])), float(rev[key]), 0)
                 for key, label in (("cached_input", "cached input"),
                                    ("miss_input", "other input"), ("output", "output"),
                                    ("total", "total")))
    return Group(MAZUREK_MOE, "Daily Profit", "deepseek-v3-missing-tokens", rows,
                 "what DeepSeek V3.1's OpenRouter tokens of a day bring in, to the cent",
                 "erratum-deepseek-v3-daily-profit-is-revenue")


# ---- Mazurek (2025), embeddings (chapter "Why embeddings are cheap") -------------------------

def _embeddings():
    from ..derivations import embeddings as E
    from ..presets.models import get_model

    return E, E.MAZUREK2025_EMBEDDINGS, E.shape_of(get_model("qwen3-embedding-8b"))


def embeddings_prices() -> Group:
    _, post, _ = _embeddings()
    wiki = post["wikipedia"]
    wiki_usd = float(wiki["words"] * wiki["tokens_per_word"] * post["prices"]["ada_002"] / 10**6)
    rows = (Row("Wikipedia at ada's price, $", wiki["usd_stated"], wiki_usd, 0.01),)
    return Group(MAZUREK_EMB, "Prices", "embeddings-intro", rows,
                 "what embedding the English Wikipedia costs at OpenAI's price")


def embeddings_forward_pass() -> Group:
    E, post, qwen = _embeddings()
    flops = E.flops_per_embedding(post["seq_len"], shape=qwen)
    rows = (
        Row(f"FLOPs at {post['seq_len']} tokens, TFLOP", post["flops_stated"] / 1e12, flops / 1e12,
            5e-3),
        Row("weights, GB", post["weights_gb_stated"],
            post["n_params_stated"] * post["bytes_per_param"] / _GB, 0, 1e-9),
    )
    return Group(MAZUREK_EMB, "One forward pass", "embeddings-forward-pass", rows,
                 "Qwen3-Embedding-8B counted with the post's coefficients",
                 "erratum-embeddings-the-feed-forward-coefficient")


def embeddings_weights_arithmetic() -> Group:
    E, post, qwen = _embeddings()
    one = E.embedding_pass(post["seq_len"], 1, chip_flops=post["h100_flops_measured"],
                           chip_bandwidth=post["h100_bandwidth"], n_params=post["n_params_stated"],
                           shape=qwen)
    marketing = post["clock_hz"] * post["tensor_cores"] * post["flop_per_instruction"]
    box = "erratum-embeddings-the-compute-time-and-the-embedding"
    rows = (
        Row("weight reads, s", post["t_mem_stated_s"], one["t_mem"], 0, 1e-4),
        Row("arithmetic, s", post["t_comp_stated_s"], one["t_comp"], 0, 1e-3),
        Row("embeddings/s, bound", post["emb_per_s_stated"], one["emb_per_s"], 0, 0.5, box),
        Row("bound over measured", post["theory_over_measured_stated"],
            one["emb_per_s"] / post["measured_emb_per_s_b1"], 0, 0.005, box),
        Row("H100 datasheet, TFLOP/s", post["h100_flops_marketing"] / 1e12, marketing / 1e12,
            1e-3),
    )
    return Group(MAZUREK_EMB, "Weights against arithmetic", "embeddings-weights-arithmetic",
                 rows, "one input of 1,024 tokens on an H100 at the measured 750 TFLOP/s")


def embeddings_dollars() -> Group:
    from ..core.units import HOURS_PER_DAY, SECONDS_PER_HOUR

    E, post, _ = _embeddings()
    tok_b4 = post["emb_per_s_b4"] * post["seq_len_experiment"]
    cost = E.usd_per_million_tokens(post["h100_price"], tok_b4)
    u = post["utilisation"]
    requests = post["emb_per_s_b4"] * float(SECONDS_PER_HOUR * HOURS_PER_DAY) * u
    rows = (
        Row("b=4 tok/s", post["tok_per_s_b4_stated"], tok_b4, 0, 5e-7),
        Row("$/Mtok", post["usd_per_mtok_h100_stated"], cost, 0, 5e-5),
        Row(f"requests in {100 * u:.0f}% of a day", post["requests_stated"], requests, 0, 500,
            "erratum-embeddings-the-number-of-requests"),
        # The post truncates to the cent.
        Row(f"$/Mtok at {100 * u:.0f}% busy", post["usd_per_mtok_util_stated"],
            E.usd_per_million_tokens(post["h100_price"], tok_b4, utilisation=u), 0, 0.01),
    )
    return Group(MAZUREK_EMB, "From FLOPs to dollars", "embeddings-dollars", rows,
                 "the measured rate of an H100 at 2 USD an hour")


def embeddings_flops_per_dollar() -> Group:
    from ..core.units import HOURS_PER_DAY, SECONDS_PER_HOUR

    E, post, _ = _embeddings()
    h100 = E.usd_per_million_tokens(post["h100_price"], post["emb_per_s_b4"] * post["seq_len_experiment"])
    rtx = E.usd_per_million_tokens(post["rtx4090_price"], post["tok_per_s_4090_b4"])
    rows = [
        Row("H100 TFLOP/s per $/h", post["tflops_per_usd_h100_real_stated"],
            post["h100_flops_measured"] / 1e12 / post["h100_price"], 0, 1),
        Row("RTX 4090 TFLOP/s per $/h", post["tflops_per_usd_4090_stated"],
            post["rtx4090_flops"] / 1e12 / post["rtx4090_price"], 0, 1),
        Row("H100 over 4090, price", post["price_ratio_stated"],
            post["h100_price"] / post["rtx4090_price"], 0, 0.05),
        Row("H100 over 4090, FLOP/s", post["flops_ratio_stated"],
            post["h100_flops_measured"] / post["rtx4090_flops"], 0, 0.05),
    ]
    for key, label in (("perf_ratio_b1", "batch 1"), ("perf_ratio_large", "large batch")):
        r = post[key]
        rows.append(Row(f"H100 over 4090, {label}", r["stated"], r["h100"] / r["rtx4090"], 0, 0.05))
    rows += [
        Row("RTX 4090 $/Mtok, batch 4", post["usd_per_mtok_4090_stated"], rtx, 0, 1e-5),
        Row("saving on the H100, %", 100 * post["saving_stated"], 100 * (1 - rtx / h100), 0, 1),
        Row("RTX 4090 $/Mtok, headline", post["usd_per_mtok_headline_stated"],
            E.usd_per_million_tokens(post["rtx4090_price"], post["tok_per_s_4090_headline"]), 0,
            5e-5),
        Row("RTX 4090 Mtok a day", post["tokens_per_day_stated"] / 1e6,
            post["tok_per_s_4090_b32"] * float(SECONDS_PER_HOUR * HOURS_PER_DAY) / 1e6, 0, 0.5),
        Row("RTX 4090 rent a day, $", post["daily_rent_stated"], 24 * post["rtx4090_price"], 0,
            0.1),
    ]
    return Group(MAZUREK_EMB, "FLOPs per dollar", "embeddings-flops-per-dollar", tuple(rows),
                 "an H100 against an RTX 4090 rented at 0.37 USD an hour")


# ---- Mazurek (2025), the era of experience (chapter "RL rollouts and LoRA") --------------------

def rollouts_prices() -> Group:
    from ..derivations import rollouts as RL

    post = RL.MAZUREK2025_EXPERIENCE
    caching = post["cached_usd_per_m"] * post["cached_tokens"] * post["requests"] / 10**6
    rows = (
        Row("DeepSeek price drop, ×", post["price_drop_stated"],
            post["price_v3"] / post["price_v32"], 0, 0.3),
        Row("cached prompts, $", post["caching_usd_stated"], float(caching), 0),
    )
    return Group(MAZUREK_EXP, "Prices", "rl-rollouts-intro", rows,
                 "DeepSeek's output prices and the cost of a cached prompt a million times")


def rollouts_advantage() -> Group:
    from fractions import Fraction

    from ..derivations import rollouts as RL

    wordle = RL.MAZUREK2025_EXPERIENCE["wordle"]
    group = [wordle["reward"]] + [Fraction(0)] * (int(1 / wordle["baseline"]) - 1)
    rows = (Row("WORDLE advantage", float(wordle["advantage_stated"]),
                float(RL.grpo_advantages(group)[0]), 0),)
    return Group(MAZUREK_EXP, "One advantage per rollout", "rl-rollouts-advantage", rows,
                 "GRPO's advantage of a success against a baseline of 0.2")


def rollouts_bits() -> Group:
    import sympy as sp

    from ..core import symbols as S
    from ..derivations import rollouts as RL

    post = RL.MAZUREK2025_EXPERIENCE
    entropy, levels = RL.reward_entropy().rhs, len(post["reward_levels"])
    rows = (
        Row("bits, pass or fail", post["bits_binary_stated"],
            float(entropy.subs(S.n_levels, 2)), 0),
        Row(f"bits, {levels} levels", post["bits_levels_stated"],
            float(entropy.subs(S.n_levels, sp.Integer(levels))), 0, 0.05),
    )
    return Group(MAZUREK_EXP, "What a rollout teaches", "rl-rollouts-bits", rows,
                 "the entropy of a reward, the most a rollout can teach")


def rollouts_lora() -> Group:
    import math

    from ..core import symbols as S
    from ..derivations import rollouts as RL

    post = RL.MAZUREK2025_EXPERIENCE
    dp = post["down_proj"]
    d_in, d_out = dp["d_intermediate"], dp["d_hidden"]
    (r_lo, r_hi), (o_lo, _) = post["typical_ranks"], post["orders_stated"]
    adapter = RL.lora_params().subs({S.lora_rank: r_lo, S.d_in: d_in, S.d_out: d_out})
    rows = (
        Row("down projection, millions", post["full_params_stated"] / 1e6, d_in * d_out / 1e6, 0),
        Row("rank-1 adapter, parameters", post["lora_params_stated"], float(adapter), 0),
        Row("rank-1 adapter, % of it", post["fraction_pct_stated"],
            100 * RL.lora_fraction_of(r_lo, d_in, d_out), 0, 5e-4),
        # "3 to 4 orders of magnitude smaller" for ranks 1 to 16
        Row(f"rank {r_hi}, orders smaller", o_lo,
            -math.log10(RL.lora_fraction_of(r_hi, d_in, d_out)), 0,
            erratum="erratum-rl-rollouts-how-many-orders-of-magnitude-smaller"),
    )
    return Group(MAZUREK_EXP, "LoRA parameters", "rl-rollouts-lora-parameters", rows,
                 "an adapter on Llama 3.3 70B's down projection")


def rollouts_lora_flops() -> Group:
    from ..core import symbols as S
    from ..derivations import rollouts as RL

    post = RL.MAZUREK2025_EXPERIENCE
    rows = (
        Row("LoRA over full training", float(post["training_ratio_stated"]),
            float(RL.training_flops_ratio().rhs.limit(S.lora_rank, 0)), 0),
        Row("backward over forward", post["backward_over_forward_stated"],
            float(RL.backward_over_forward()), 0),
    )
    return Group(MAZUREK_EXP, "LoRA training FLOPs", "rl-rollouts-lora-flops", rows,
                 "the FLOPs of a training step as the rank tends to zero")


# ---- Erdil (2025), sections 4-5: the full model (Part III) -----------------------------------

def network_eq24() -> Group:
    from ..core import symbols as S
    from ..fullmodel import collectives as coll
    from ..presets.hardware import get_gpu

    eq24, h100 = _reference()["network_eq24"], get_gpu("h100")
    msg = eq24["bytes"] * eq24["d_model"] * eq24["batch"]
    ll = coll.PROTOCOLS[0]
    bandwidth_time = coll.protocol_bandwidth_time().rhs.subs(coll.ALL_REDUCE).subs(ll.values())
    ours = float(bandwidth_time.subs({S.n_ranks: eq24["gpus"], S.n_nodes_c: 1, S.msg_bytes: msg,
                                      S.bw_ar_intra: h100.intranode_allreduce_bandwidth,
                                      S.bw_ar_inter: h100.internode_allreduce_bandwidth}))
    # The paper's own form, M (N - 1)/(N f W_intra), with its 112 GB/s for f W_intra.
    paper_form = msg * (eq24["gpus"] - 1) / (eq24["gpus"] * eq24["ll_gbps"] * 1e9)
    rows = (
        Row("all-reduce, µs", eq24["us"], 1e6 * ours, 0, 0.5),
        Row(f"same at {eq24['ll_gbps']} GB/s, µs", eq24["us"], 1e6 * paper_form, 0, 0.5),
    )
    return Group(ERDIL, "Equation 24", "full-model-eq-24", rows,
                 "the time an all-reduce of one DGX H100 adds, printed to the microsecond")


def capacity_sec35() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import capacity
    from ..presets.hardware import get_gpu

    sec, h100 = _reference()["capacity_sec35"], get_gpu("h100")
    args = (S.hbm_cap, S.eta_bw, S.hbm_bw)
    sweep = float(compile_fn(capacity.memory_sweep_time(), args)(h100.hbm_bytes, 1.0,
                                                                 h100.hbm_bandwidth))
    speed = float(compile_fn(capacity.capacity_speed_limit(), args)(h100.hbm_bytes, 1.0,
                                                                    h100.hbm_bandwidth))
    rows = (
        Row(f"reading {sec['hbm_gb']} GB, ms", sec["sweep_ms"], 1e3 * sweep, 0, 0.5),
        Row("fronts meet above, tok/s", sec["speed"], speed, 0, 0.5),
    )
    return Group(ERDIL, "Section 3.5", "full-model-section-3-5", rows,
                 "an H100's memory read once at its peak bandwidth, printed to whole units")


def long_context_sec43() -> Group:
    import math

    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..fullmodel import comparisons as C
    from ..fullmodel import long_context as lc

    paper = _reference()["long_context_sec43"]
    mistral_long = C.settings("mistral_large_comparison")["Long context"]
    deepseek = C.settings("deepseek_v3_context_len_comparison")["Long context"].model
    mistral, context = mistral_long.model, mistral_long.context
    crossover = float(compile_fn(lc.kv_weight_crossover_batch(), (S.p, S.n_param, S.kv_bytes, S.ctx))(
        mistral_long.w, mistral.total_params, mistral.kv_bytes_per_token, context))
    # The paper's floor from its own rounded inputs: 360 KB per token, 3.3 TB/s, $2 per hour.
    floor = float(compile_fn(lc.kv_floor(), (S.kv_bytes, S.ctx, S.hbm_bw, S.price))(
        paper["kv_kb"] * 1e3, context, paper["bandwidth_tbps"] * 1e12, paper["usd_per_hour"]))
    rows = (
        Row("Mistral Large 2, kB/token", paper["kv_kb"], mistral.kv_bytes_per_token / 1e3, 0,
            0.5),
        Row("Mistral Large 2 weights, GB", paper["weights_gb"],
            mistral_long.w * mistral.total_params / _GB, 0.01),
        Row("cache heavier above batch", paper["crossover_batch"], math.ceil(crossover), 0),
        Row("KV-read floor, $/Mtok", paper["floor"], floor, 0, 0.005),
        Row("DeepSeek-V3, kB/token", paper["deepseek_kv_kb"], deepseek.kv_bytes_per_token / 1e3,
            0, 5),
    )
    return Group(ERDIL, "Section 4.3", "long-context-kv-floor", rows,
                 "the price floor that reading a 128K-token cache sets")


_FRONTIERS: dict = {}
# (name, our attribute, the code's key, the paper's key, tolerance, printed decimals)
_SPEED = ("tok/s", "tokens_per_s", "tokens_per_s_per_request", "tokens_per_s", 0.01, 0)
_COST = ("$/Mtok", "usd_per_mtok", "usd_per_mtok", "usd_per_mtok", 0.02, 2)
_GPUS = ("GPUs", "gpus", "gpus", "gpus", 0.05, 0)
_BATCH = ("batch", "batch", "batch_size", "batch_size", 0.05, 0)
_SHORT = {"Mixtral 8x22B 16-bit": "Mixtral", "Llama 3 70B 8-bit": "70B",
          "Llama 3.1 405B 8-bit": "405B", "GPT-4 16-bit (speculative)": "GPT-4",
          "DeepSeek-V3 8-bit": "DeepSeek", "Llama 3 70B (no spec dec)": "70B",
          "Llama 3 70B (8B acceptance=0.8)": "70B spec.",
          "Llama 3.1 405B (no spec dec)": "405B",
          "Llama 3.1 405B (8B acceptance=0.8)": "405B spec."}
SPEC_COMPARISON = "all_models_comparison_with_spec_dec"  # Tables 2 and 3


def _frontier(comparison: str, label: str):
    """One frontier of the paper's comparisons, computed once per process (and cached on disk
    when the chapters' cache is on)."""
    from ..fullmodel import comparisons as C
    from ..fullmodel.search import frontier

    if (comparison, label) not in _FRONTIERS:
        _FRONTIERS[comparison, label] = frontier(C.settings(comparison)[label])
    return _FRONTIERS[comparison, label]


def _table(number: int, comparison: str, point: str, quantities, section: str, note: str,
           erratum: str | None = None, rows_erratum: str | None = None,
           short: dict | None = None) -> Group:
    """One of the paper's Tables 2-6: each printed cell against our frontier's point.

    ``rows_erratum``: every cell is wrong in the paper (the box says why); each is then checked
    against the author's final code instead."""
    from ..fullmodel import comparisons as C

    printed = C.reference_json("tables_code_vs_paper")[f"table{number}"]["rows"]
    rows = []
    for label, entry in printed.items():
        front = _frontier(comparison, label)
        ours = front.max_speed() if point == "max_speed" else front.preferred(3.0)
        code = C.reference_point(comparison, label, point)
        for name, attr, code_key, paper_key, tol, decimals in quantities:
            value = getattr(ours, attr)
            extra = {}
            if rows_erratum:
                extra = {"erratum": rows_erratum, "corrected": float(code[code_key])}
            rows.append(_paper_row(f"{(short or _SHORT).get(label, label)} {name}", entry["paper"][paper_key],
                                   value, tol, decimals, **extra))
    return Group(ERDIL, f"Table {number}", section, tuple(rows), note, erratum)


def table2() -> Group:
    return _table(2, SPEC_COMPARISON, "max_speed", (_SPEED, _GPUS), "todays-models-table-2",
                  "the fastest each model can go")


def table3() -> Group:
    return _table(3, SPEC_COMPARISON, "pref_alpha3", (_SPEED, _COST, _GPUS, _BATCH),
                  "todays-models-table-3", "the setups customers would choose",
                  erratum="erratum-todays-models-table-3-uses-not")


def table4() -> Group:
    return _table(4, "gpus_comparison", "max_speed", (_SPEED, _GPUS), "gpu-generations-table-4",
                  "Llama 3 70B's top speed on each GPU")


def table5() -> Group:
    return _table(5, "spec_dec_comparison", "pref_alpha3", (_SPEED, _COST, _GPUS, _BATCH),
                  "speculative-decoding-table-5", "with and without speculative decoding",
                  rows_erratum="erratum-speculative-decoding-table-5-comes-from-an-earlier")


def table6() -> Group:
    return _table(6, "quantization_comparison", "pref_alpha3", (_SPEED, _COST, _GPUS, _BATCH),
                  "quantization-table-6", "Llama 3 70B with 4-, 8- and 16-bit weights",
                  erratum="erratum-quantization-table-6-uses-not",
                  short={f"Llama 3 70B {bits}-bit": f"{bits}-bit" for bits in (4, 8, 16)})


GROUPS = (table1, figure1, square_root_law, takeaways, roofline_critical_batch, roofline_attention,
          roofline_pop_quiz, roofline_appendix_a, kv_llama_memory, kv_table_mha, kv_table_gqa,
          kv_worked_problems, kv_pope_crossover, sharding_generation, sharding_question7,
          sharding_appendix_c, sharding_elements, sharding_min_chips, worked_question3,
          worked_question5, dense_parameters, dense_prefill_flops, dense_kv_cache,
          prefill_decode_one_gpu, prefill_decode_tensor_parallel, prefill_decode_figure16,
          pricing_table1, deepseek_architecture, deepseek_mla_weights, deepseek_latent_cache,
          deepseek_experts, deepseek_all_to_all, deepseek_dollars, deepseek_daily_profit,
          embeddings_prices, embeddings_forward_pass, embeddings_weights_arithmetic, embeddings_dollars,
          embeddings_flops_per_dollar, rollouts_prices, rollouts_advantage, rollouts_bits,
          rollouts_lora, rollouts_lora_flops, network_eq24, capacity_sec35, table2, table3, table4,
          table5, table6, long_context_sec43)


def groups() -> list[Group]:
    """Every group of the record, in the order of the book."""
    return [make() for make in GROUPS]


# ---- the page ----------------------------------------------------------------------------------

def chapter_of(label: str, root=None) -> str:
    """The chapter (file stem) whose source sets the link target ``label``."""
    from pathlib import Path

    from .errata import ROOT

    book = Path(root or ROOT) / "book"
    homes = [p.stem for p in sorted(book.glob("*.md")) if f"\n({label})=\n" in p.read_text()]
    if len(homes) != 1:
        raise ValueError(f"link target {label!r} is set in {homes or 'no chapter'}")
    return homes[0]


def _number(x: float, source: float) -> str:
    """Ours, to one digit more than the source prints (as many past a thousand)."""
    printed = f"{source:.6g}"
    decimals = len(printed.split(".")[1]) if "." in printed and "e" not in printed else 0
    return f"{x:,.{decimals + (abs(source) < 1000)}f}"


def _tolerance(row: Row) -> str:
    if row.erratum:
        return f"{{ref}}`erratum <{row.erratum}>`"
    if row.allowed <= 1e-9 * abs(row.reference):  # none, but for floating-point rounding
        return "exact"
    if row.rel * abs(row.reference) >= row.abs:
        return f"±{100 * row.rel:g}%"
    return f"±{row.abs:.12f}".rstrip("0").rstrip(".")  # ±0.00005, not ±5e-05


def markdown(group: Group, box_titles: dict[str, str]) -> str:
    """One group as MyST: where it is derived, then a table of five short columns."""
    from .display import markdown_table, signed

    lines = [f"**{group.title}**: {group.note}; derived in {{ref}}`{group.section}`."]
    if group.erratum:
        lines.append(f"The source errs here: {{ref}}`{box_titles[group.erratum]} <{group.erratum}>`.")
    rows = [[row.quantity, f"{row.source:,.6g}", _number(row.ours, row.source),
             signed(100 * row.difference, 2, "%"), _tolerance(row)] for row in group.rows]
    table = markdown_table(["quantity", "source", "ours", "diff.", "tol."], rows)
    return "\n".join(lines) + "\n\n" + table + "\n"
