"""The record's rows from Erdil (2025): the toy model (section 2) and the full model's examples and
Tables 2-6 (sections 3-5)."""

from __future__ import annotations

import numpy as np

from .rows import (
    ERDIL,
    Group,
    Row,
    _paper_row,
    _reference,
)

_GB = 1e9


# ---- Erdil (2025), section 2: the toy model (chapter "Many GPUs: the latency wall") ----------

def table1() -> Group:
    from ...fullmodel.toy_model import max_speed
    from ...presets.hardware import get_gpu
    from ...presets.models import get_model

    ref = _reference()["table1"]
    h100 = get_gpu("h100")
    rows = []
    for row in ref["rows"]:
        ours = max_speed(get_model(row["model"]), h100, t_hop=ref["t_hop_s"], n_reduce=ref["n_reduce"])
        name = row["label"].replace("Llama 3 ", "Llama ")  # the caption says which Llama
        rows.append(Row(f"{name} tok/s", row["tokens_per_s"], ours.tokens_per_s, 0, 0.5))
        rows.append(Row(f"{name} GPUs", row["gpus"], ours.n_gpu_star, 0, 1))
    return Group(ERDIL, "Table 1", "latency-wall-table-1", tuple(rows),
                 "printed to whole tokens/s and GPUs; Llama is Llama 3")


def figure1() -> Group:
    from ...fullmodel.toy_model import reference_code_frontier
    from ...presets.hardware import get_gpu
    from ...presets.models import get_model

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
        Row("70B $/Mtok",
            code["llama-3-70b_usd_per_mtok_at_90pct_of_max_speed_10k_demand"],
            f70.cost_at_speed(probe), 0.05),
        Row("8B $/Mtok",
            code["llama-3-8b_usd_per_mtok_at_400_tok_s_10k_demand"],
            f8.cost_at_speed(ref["probe_tokens_per_s"]), 0.05),
    )
    return Group(ERDIL, "Figure 1", "latency-wall-figure-1", rows,
                 "the author's code's output for Llama 3 70B and 8B, demand capped at 10,000 "
                 "tokens/s; the cost at 90% of the 70B's top speed and at "
                 f"{ref['probe_tokens_per_s']} tok/s for the 8B")


def square_root_law() -> Group:
    from ...derivations import scaling
    from ...presets.models import get_model

    sq = _reference()["square_root_law"]
    keys = ["palm-8b", "palm-62b", "palm-540b"]
    params = np.array([get_model(k).total_params for k in keys])
    ms = np.array([sq["palm_best_latency_ms"][k] for k in keys])
    slope = float(np.polyfit(np.log(params), np.log(ms), 1)[0])
    nominal, base = sq["nominal_params"], sq["baseline_tokens_per_s"]
    # The source's measured latencies give the exponent; ours is the derived one (1/2).
    rows = [Row("exponent", slope, float(scaling.square_root_exponent()), 0, 0.05, decimals=3)]
    for key, label in (("llama-3-70b", "70B"), ("llama-3.1-405b", "405B")):
        ours = scaling.square_root_law_speed(base, nominal["llama-3-8b"], nominal[key])
        rows.append(Row(f"{label} tok/s", sq["predicted_tokens_per_s"][key], ours, 0, 0.5))
    return Group(ERDIL, "Section 2.2.3", "latency-wall-square-root-law", tuple(rows),
                 "the exponent fitted to PaLM's measured latencies (shown to three decimals; ours "
                 "is the law's), and the speeds the law predicts for Llama 3 70B and 3.1 405B")


def takeaways() -> Group:
    from ...derivations import scaling

    ref = _reference()["takeaways"]
    rows = (
        Row("latency cut", ref["doubling_bandwidth_latency_reduction"],
            -float(scaling.doubling_bandwidth_latency_change()), 0, 0.01),
        Row("speed-up", ref["halving_precision_speedup"],
            float(scaling.halving_precision_speedup()), 0, 0.005),
    )
    return Group(ERDIL, "Takeaway 3", "latency-wall-speed-ups", rows,
                 "the latency cut by twice the bandwidth and the speed-up from half the "
                 "precision, printed as percentages")




# ---- Erdil (2025), sections 4-5: the full model (Part III) -----------------------------------

def network_eq24() -> Group:
    from ...core import symbols as S
    from ...fullmodel import collectives as coll
    from ...presets.hardware import get_gpu

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
        Row(f"at {eq24['ll_gbps']} GB/s, µs", eq24["us"], 1e6 * paper_form, 0, 0.5),
    )
    return Group(ERDIL, "Equation 24", "full-model-eq-24", rows,
                 "the time an all-reduce of one DGX H100 adds, also in the paper's own form, "
                 "printed to the microsecond")


def capacity_sec35() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import capacity
    from ...presets.hardware import get_gpu

    sec, h100 = _reference()["capacity_sec35"], get_gpu("h100")
    args = (S.hbm_cap, S.eta_bw, S.hbm_bw)
    sweep = float(compile_fn(capacity.memory_sweep_time(), args)(h100.hbm_bytes, 1.0,
                                                                 h100.hbm_bandwidth))
    speed = float(compile_fn(capacity.capacity_speed_limit(), args)(h100.hbm_bytes, 1.0,
                                                                    h100.hbm_bandwidth))
    rows = (
        Row(f"read {sec['hbm_gb']} GB, ms", sec["sweep_ms"], 1e3 * sweep, 0, 0.5),
        Row("fronts meet, tok/s", sec["speed"], speed, 0, 0.5),
    )
    return Group(ERDIL, "Section 3.5", "full-model-section-3-5", rows,
                 "an H100's memory read once at its peak bandwidth, and the speed above which the "
                 "fronts with that memory and with unlimited memory meet, printed to whole units")


# The settings of the full-model chapter's latency check, named by the figure of the code each
# belongs to.
_LATENCY_SHORT = {("quantization_comparison", "Llama 3 70B 8-bit"): "70B 8-bit",
                  ("all_models_comparison", "Mixtral 8x22B 16-bit"): "Mixtral",
                  ("all_models_comparison", "DeepSeek-V3 8-bit"): "DeepSeek-V3",
                  ("mistral_large_comparison", "Long context"): "Mistral L. 100K",
                  ("all_models_comparison_with_spec_dec", "Llama 3 70B 8-bit"): "70B 8-bit spec."}


def full_model_frontier_points() -> Group:
    """Each point of five of the code's frontiers re-timed with eq-full-forward-latency at the
    branch the code saved; a row per setting, at the point where ours is farthest from it."""
    from ...fullmodel import comparisons as C

    rows, points = [], 0
    for comparison, label in C.LATENCY_CHECKS:
        setting = C.settings(comparison)[label]
        ref = C.reference_frontier(comparison, label)
        code, ours = C.code_latency(setting, ref), C.branch_latency(setting, ref)
        far = int(np.argmax(np.abs(ours / code - 1)))
        points += code.size
        # 1e-3, the chapter's: the saved inputs and latency are rounded to six digits (~1e-5)
        rows.append(Row(f"{_LATENCY_SHORT[comparison, label]}, ms", 1e3 * code[far],
                        1e3 * ours[far], 1e-3))
    return Group(ERDIL, "Frontier points, as the code computed them",
                 "full-model-every-frontier-point", tuple(rows),
                 f"the forward latency the reference code saved with each point of its frontiers "
                 f"({points:,} points of the Llama 3 70B, Mixtral 8x22B, DeepSeek-V3 and Mistral "
                 f"Large 2 settings, the last at a 100K-token context, and of Llama 3 70B with "
                 f"speculative decoding, the target's), against ours at the branch it saved; each "
                 f"row is the point of its setting where the two are farthest apart")

def long_context_sec43() -> Group:
    import math

    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...fullmodel import comparisons as C
    from ...fullmodel import long_context as lc

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
        Row("cache, kB/tok", paper["kv_kb"], mistral.kv_bytes_per_token / 1e3, 0,
            0.5),
        Row("weights, GB", paper["weights_gb"],
            mistral_long.w * mistral.total_params / _GB, 0.01),
        Row("crossover b", paper["crossover_batch"], math.ceil(crossover), 0),
        Row("floor, $/Mtok", paper["floor"], floor, 0, 0.005),
        Row("V3, kB/tok", paper["deepseek_kv_kb"], deepseek.kv_bytes_per_token / 1e3,
            0, 5),
    )
    return Group(ERDIL, "Section 4.3", "long-context-kv-floor", rows,
                 "Mistral Large 2's cache and weights, the batch b above which its caches of "
                 "128K tokens outweigh the weights, the price floor that reading such a cache "
                 "sets, and DeepSeek-V3's (V3) cache")


_LONG_CONTEXT = {"mistral_large_comparison": "Mistral", "deepseek_v3_context_len_comparison": "V3"}
_LONG_SHORT = {"Short context": "short", "Short context with speculative decoding": "short+spec",
               "Long context": "long", "Long context with speculative decoding": "long+spec",
               "Empty context": "empty", "Context of 1K tokens": "1K",
               "Context of 10K tokens": "10K"}


def long_context_speeds() -> Group:
    """The top speed of each frontier of section 4.3's figures against the reference code's."""
    from ...fullmodel import comparisons as C

    rows = tuple(
        Row(f"{model} {_LONG_SHORT[label]}",
            float(C.reference_point(comparison, label, "max_speed")["tokens_per_s_per_request"]),
            _frontier(comparison, label).max_speed().tokens_per_s, 0.01, decimals=1)
        for comparison, model in _LONG_CONTEXT.items() for label in C.settings(comparison))
    return Group(ERDIL, "Figures 9 and 10: top speeds, as the code computed them",
                 "long-context-maximum-speeds", rows,
                 "the top speed (tok/s per user) on each frontier of the long-context figures "
                 "(Mistral Large 2 and the paper's DeepSeek-V3, V3); 'cited' is the reference "
                 "code's output; +spec: with speculative decoding")


def long_context_curves() -> Group:
    """Each frontier of section 4.3's figures (and the code's three Llama 3 70B contexts): its
    least cost against the least of the reference code's curve (its CSV)."""
    from ...fullmodel import comparisons as C

    models = {**_LONG_CONTEXT, "context_length_comparison": "70B"}
    rows = []
    for comparison, model in models.items():
        for label in C.settings(comparison):
            code_min = float(C.reference_frontier(comparison, label)["usd_per_mtok"].min())
            ours = float(_frontier(comparison, label).arrays()[1].min())
            rows.append(Row(f"{model} {_LONG_SHORT[label]}", code_min, ours, 0.02, decimals=4))
    return Group(ERDIL, "Figures 9 and 10 and the context sweep, as the code drew them",
                 "long-context-code-curves", tuple(rows),
                 "the least cost ($/Mtok) on each frontier of the long-context figures (Mistral Large 2 "
                 "and the paper's DeepSeek-V3, V3) and of the code's sweep of Llama 3 70B's "
                 "context (70B); 'cited' is the least cost on the reference code's curve, its "
                 "output rather than a printed value; +spec: with speculative decoding")


_FRONTIERS: dict = {}
# (name, our attribute, the code's key, the paper's key, tolerance, printed decimals)
_SPEED = ("tok/s", "tokens_per_s", "tokens_per_s_per_request", "tokens_per_s", 0.01, 0)
_COST = ("$/Mtok", "usd_per_mtok", "usd_per_mtok", "usd_per_mtok", 0.02, 2)
_GPUS = ("GPUs", "gpus", "gpus", "gpus", 0.05, 0)
_BATCH = ("batch", "batch", "batch_size", "batch_size", 0.05, 0)
_SHORT = {"Mixtral 8x22B 16-bit": "Mixtral", "Llama 3 70B 8-bit": "70B",
          "Llama 3.1 405B 8-bit": "405B", "GPT-4 16-bit (speculative)": "GPT-4",
          "DeepSeek-V3 8-bit": "DeepSeek", "Llama 3 70B (no spec dec)": "70B",
          "Llama 3 70B (8B acceptance=0.8)": "70B*",
          "Llama 3.1 405B (no spec dec)": "405B",
          "Llama 3.1 405B (8B acceptance=0.8)": "405B*"}
SPEC_COMPARISON = "all_models_comparison_with_spec_dec"  # Tables 2 and 3


# Figures 3 and 4's models by a short name (the labels' widths are not the ones Figure 3 draws).
_CURVE_SHORT = {"Mixtral 8x22B 16-bit": "Mixtral", "Llama 3 70B 8-bit": "70B",
                "Llama 3.1 405B 8-bit": "405B", "GPT-4 16-bit (speculative)": "GPT-4",
                "DeepSeek-V3 8-bit": "DeepSeek-V3"}


def _curve_row(comparison: str, label: str, name: str) -> Row:
    """A curve of the code against ours at the speed of their median cost gap: the chapters'
    check, that median within 2%."""
    from ...fullmodel import comparisons as C

    _, code, ours = C.median_gap_point(_frontier(comparison, label),
                                       C.reference_frontier(comparison, label))
    return Row(f"{name}, $/Mtok", code, ours, 0.02)


def todays_models_curves() -> Group:
    """Figures 3 and 4: each of our frontiers against the code's curve."""
    from ...fullmodel import comparisons as C

    rows = tuple(_curve_row(comparison, label, _CURVE_SHORT[label] + suffix)
                 for comparison, suffix in (("all_models_comparison", ""),
                                            ("all_models_comparison_with_spec_dec", " spec."))
                 for label in C.settings(comparison))
    return Group(ERDIL, "Figures 3 and 4, as the code drew them", "todays-models-frontiers", rows,
                 "the cost of the code's curve at the speed where ours differs from it by the "
                 "median of the curve's points within our speeds, for the five models without "
                 "speculative decoding (Figure 3, whose Llamas the code draws with 16-bit weights) "
                 "and with it (spec., Figure 4)")


def quantization_curves() -> Group:
    """Figure 8: each of our frontiers against the code's curve."""
    from ...fullmodel import comparisons as C

    comparison = "quantization_comparison"
    rows = tuple(_curve_row(comparison, label, "70B " + label.removeprefix("Llama 3 70B "))
                 for label in C.settings(comparison))
    return Group(ERDIL, "Figure 8, as the code drew it", "quantization-frontiers", rows,
                 "the cost of the code's curve at the speed where ours differs from it by the "
                 "median of the curve's points within our speeds, for Llama 3 70B with 16-, 8- "
                 "and 4-bit weights")

def _frontier(comparison: str, label: str):
    """One frontier of the paper's comparisons, computed once per process (and cached on disk
    when the chapters' cache is on)."""
    from ...fullmodel import comparisons as C
    from ...fullmodel.search import frontier

    if (comparison, label) not in _FRONTIERS:
        _FRONTIERS[comparison, label] = frontier(C.settings(comparison)[label])
    return _FRONTIERS[comparison, label]


def _table(number: int, comparison: str, point: str, quantities, section: str, note: str,
           erratum: str | None = None, rows_erratum: str | None = None,
           short: dict | None = None) -> Group:
    """One of the paper's Tables 2-6: each printed cell against our frontier's point.

    ``rows_erratum``: every cell is wrong in the paper (the box says why); each is then checked
    against the author's final code instead."""
    from ...fullmodel import comparisons as C

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
                  "speculative-decoding-table-5",
                  "Llama 3 70B and 3.1 405B without and, marked *, with speculative decoding "
                  "(an 8B draft, acceptance 0.8)",
                  rows_erratum="erratum-speculative-decoding-table-5-comes-from-an-earlier")


def table6() -> Group:
    return _table(6, "quantization_comparison", "pref_alpha3", (_SPEED, _COST, _GPUS, _BATCH),
                  "quantization-table-6", "Llama 3 70B with 4-, 8- and 16-bit weights",
                  erratum="erratum-quantization-table-6-uses-not",
                  short={f"Llama 3 70B {bits}-bit": f"{bits}-bit" for bits in (4, 8, 16)})
