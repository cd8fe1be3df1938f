"""The record's rows from Austin et al. (2025) and the notes on Pope et al. (2023): the decode
roofline, KV-cache economics, the worked problems and how many chips."""

from __future__ import annotations

import numpy as np

from .rows import (
    AUSTIN,
    POPE,
    Group,
    Row,
)

_GB = 1e9


# ---- Austin et al. (2025), the roofline of a decoding step (chapter "Matmul by matmul") ------

def _roofline():
    """The chapter's step-time functions, of (b, kv bytes per token, context, p, N, chips, B, C)."""
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import intensity

    args = (S.b, S.kv_bytes, S.seq_kv, S.p, S.n_param, S.n_gpu, S.hbm_bw, S.flops)
    return (compile_fn(intensity.step_time(), args),
            compile_fn(intensity.step_time_min(), args[:-1]))


def roofline_critical_batch() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import intensity
    from ...presets.hardware import get_gpu

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
    from ...core import symbols as S
    from ...derivations import intensity

    src = intensity.AUSTIN2025
    # The source's own rounded chip intensity of 240 FLOP per byte, as the chapter checks it.
    tokens = intensity.prefill_attention_length().rhs.subs(
        {S.p_act: 2, S.flops: src["ridge_stated"], S.hbm_bw: 1})
    rows = (Row("prefill tokens", src["prefill_tokens_stated"], float(tokens), 0),)
    return Group(AUSTIN, "Attention", "decode-roofline-attention", rows,
                 "the prompt length above which prefill attention is compute bound")


def roofline_pop_quiz() -> Group:
    from ...derivations import intensity
    from ...presets.hardware import get_gpu

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
    from ...derivations import intensity
    from ...presets.hardware import get_gpu

    app, v5e = intensity.AUSTIN2025["appendix_a"], get_gpu("tpu-v5e")
    _, step_min_fn = _roofline()
    layer = float(step_min_fn(1, 0, 0, app["weight_bytes"], app["n_param"], app["shards"],
                              v5e.bandwidth()))
    rows = (Row("one layer, µs", app["stated_us"], 1e6 * layer, 0.01),)
    return Group(AUSTIN, "Appendix A", "decode-roofline-appendix-a", rows,
                 "the least latency of one feed-forward layer over 4 chips")


# ---- Austin et al. (2025) and the notes on Pope et al. (2023) (chapter "KV-cache economics") --

def _llama2_13b() -> tuple[dict, float]:
    """LLaMA 2-13B's parameter counts and its bf16 cache of one sequence, as the chapter has them."""
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import kv_cache as kv

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
    from ...derivations import kv_cache as kv

    stated = kv.LLAMA2_13B_STATED
    counts, seq = _llama2_13b()
    weights = stated["bytes_per_param"] * counts["total"]
    activation = stated["context"] * kv.LLAMA2_13B["d_model"] * stated["bytes_per_element"]
    rows = [Row(f"{label}, bn", stated[key] / 1e9, counts[part] / 1e9, 0, 0.05)
            for label, part, key in (("feed-forward", "ff", "ff_params"),
                                     ("vocabulary", "embedding", "vocab_params"),
                                     ("attention", "attention", "attention_params"))]
    rows += [
        Row("parameters, bn", stated["total_params"] / 1e9, counts["total"] / 1e9, 0.01),
        Row("bf16 weights, GB", stated["weights_bytes"] / _GB, weights / _GB, 0.01),
        Row("cache, GB", stated["kv_seq_bytes"] / _GB, seq / _GB, 0.01),
        Row("caches > weights", stated["sequences_exceeding_weights"],
            float(np.ceil(weights / seq)), 0),
        Row("activations, MB", stated["prefill_activation_bytes"] / 1e6, activation / 1e6,
            0.05),
    ]
    return Group(AUSTIN, "LLaMA 2-13B", "kv-cache-llama-2-13b", tuple(rows),
                 "parameters printed to one decimal in billions (bn); the bf16 bytes of the "
                 "weights, of one sequence's cache and of a prefill's activations; how many caches "
                 "outweigh the weights")


def _kv_table(kind: str, title: str, note: str) -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import kv_cache as kv
    from ...presets.hardware import get_gpu

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
    rows = [Row("cache, GB", src["kv_seq_gb"], seq / shrink / _GB, 0.01)]
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
        rows.append(Row("max batch", tables["oom_beyond"], fit, 0))
    return Group(AUSTIN, title, "kv-cache-llama-tables", tuple(rows), note,
                 "erratum-kv-cache-the-tables-are-in-gb-not")


def kv_table_mha() -> Group:
    return _kv_table("mha", "LLaMA 2-13B, first table",
                     "one sequence's cache, then step time and throughput on 8 TPU v5e, "
                     "printed to two decimals, and the largest batch that fits")


def kv_table_gqa() -> Group:
    return _kv_table("gqa", "LLaMA 2-13B, second table",
                     "the same with the cache shrunk five times by grouped-query attention")


def kv_pope_crossover() -> Group:
    from ...derivations import kv_cache as kv

    palm = kv.PALM_MEMORY
    weights = palm["bytes_per_param"] * palm["n_param"]
    equal = kv.cached_tokens_equal_to_params(
        n_params=palm["n_param"], bytes_per_param=palm["bytes_per_param"],
        n_layers=palm["n_layers"], n_kv=palm["n_kv"], d_head=palm["d_head"],
        bytes_per_element=palm["bytes_per_element"])
    box = "erratum-kv-cache-the-crossover-of-the-notes-on"
    rows = (
        Row("size, GB", palm["param_mem_gb"], weights / _GB, 1e-12),
        Row("B·S", palm["tokens"], equal, 0.01, erratum=box),
        Row("batch B", palm["batch"], equal / palm["context"], 0.01,
            erratum=box),
    )
    return Group(POPE, "Memory costs", "kv-cache-pope-crossover", rows,
                 "PaLM 540B with one key-value head: the size of its weights, and the tokens B·S, or the "
                 f"batch B at S = {palm['context']:,}, whose cache weighs as much")


# ---- Austin et al. (2025), the worked problems (chapter "Worked problems") ------------------

def kv_worked_problems() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import kv_cache as kv
    from ...presets.hardware import get_gpu

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
        Row("Q1 params, bn", q1["params"] / 1e9, dense["total"] / 1e9, 0.005),
        Row("Q1 kB/tok", q1["kv_per_token_int8"] / 1e3, per_token / 1e3, 0.001),
        Row("Q2 cache, GB", q2["kv_per_seq"] / _GB, seq / _GB, 0.005),
        Row("Q2 max batch", q2["answer"], fits[shape["n_kv"]], 0),
        Row("Q2 1 KV head", q2["answer_one_kv_head"], fits[1], 0, 1),
        Row("Q3 load, ms", q3["answer_ms"], 1e3 * load, 0, 0.1),
        # Q5's active parameters, an erratum, are in worked_question5
        Row("Q5 params, bn", q5["total_params"] / 1e9, moe["total"] / 1e9, 0.005),
        Row("Q5 b*", q5["moe_b_crit"],
            float(bcrit_fn(q5["b_crit"], q5["n_experts"], q5["n_active"])), 0),
    )
    return Group(AUSTIN, "Worked problems", "worked-problems-q1", rows,
                 "the answers of the scaling book's problems (Q2, Q3, Q5 and Q1's cache from its "
                 "later revision): Q1's parameters and int8 cache per token, Q2's cache per "
                 "sequence and largest batch (also with one KV head), Q3's weight load, Q5's "
                 "parameters and critical batch b*, from the source's rounded b* of the dense "
                 "model as the source computes it")


def worked_question3() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import intensity
    from ...derivations import kv_cache as kv

    q3 = kv.WORKED_Q3
    counts = kv.parameter_counts(**kv.WORKED_MODEL, tied=True)
    load_fn = compile_fn(intensity.step_time_min().rhs.subs(S.b, 0),
                         (S.p, S.n_param, S.n_gpu, S.hbm_bw))
    at_variant = float(load_fn(1, counts["total"], q3["n_chips"], q3["variant_bw_per_chip"]))
    rows = (Row("load, ms",
                q3["variant_answer_ms"], 1e3 * at_variant, 0, 0.1,
                "erratum-worked-problems-two-printed-answers-neither-from-the"),)
    return Group(AUSTIN, "Worked problems: question 3", "worked-problems-q3", rows,
                 "another copy of the later revision: the weight load at a lower bandwidth, "
                 f"{q3['variant_bw_per_chip'] / 1e9:.0f} GB/s")


def worked_question5() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import kv_cache as kv
    from ...derivations import roofline

    q5, shape = kv.WORKED_Q5, kv.WORKED_MODEL
    dense = kv.parameter_counts(**shape, tied=True)
    moe = kv.parameter_counts(**shape, tied=True, n_experts=q5["n_experts"],
                              n_active=q5["n_active"])
    fwd = (roofline.arithmetic_time() * S.flops).subs({S.n_param: S.n_active_param, S.b: S.seq_q})
    per_token = float(compile_fn(fwd, (S.n_active_param, S.seq_q))(moe["active"], 1))
    box = "erratum-worked-problems-the-active-parameters"
    rows = (
        Row("all params, ×", q5["total_growth"], moe["total"] / dense["total"], 0, 0.5),
        Row("active, bn", q5["active_params"] / 1e9, moe["active"] / 1e9, 0, 0.05, box),
        # The source's FLOPs per token, 2 × its 31.2e9 active parameters, inherit the slip.
        Row("GFLOP/token", q5["flop_per_param"] * q5["active_params"] / 1e9,
            per_token / 1e9, 0, 0.05, box),
    )
    return Group(AUSTIN, "Worked problems: question 5", "worked-problems-q5", rows,
                 "the worked model as a mixture of 16 experts, 2 of them active: how many "
                 "times its parameters grow, its active parameters and its FLOPs per token")


# ---- Austin et al. (2025) and the notes on Pope et al. (2023) (chapter "How many chips") -------

def sharding_generation() -> Group:
    from ...core import symbols as S
    from ...derivations import sharding
    from ...presets.hardware import get_gpu

    src = sharding.QUOTED
    y_max = sharding.max_model_parallelism().rhs.subs(S.p_act, S.p).subs(
        {S.d_ff: src["gen_d_ff"], S.b: src["gen_batch"], S.beta_bw: src["gen_beta"]})
    rows = (
        Row("largest Y", src["gen_y_max"], float(y_max), 0),
        # "around 8" for the TPU v5e, with a link counted in both directions
        Row("β, TPU v5e", src["gen_beta"],
            sharding.bandwidth_ratio(get_gpu("tpu-v5e"), 2), 0.15),
    )
    return Group(AUSTIN, "Generation", "sharding-model-parallelism", rows,
                 "how far model parallelism goes before the network is the bottleneck")


def sharding_question7() -> Group:
    import sympy as sp

    from ...core import symbols as S
    from ...derivations import sharding

    src = sharding.QUOTED
    spec = sharding.optimum_2d_at_ratio(src["q7_f_over_d"])
    # The coefficient of T*_2D at bf16, in units of b·d_model/(sqrt(N)·W_ici).
    coeff = float(spec["t_star"].subs(S.p_act, 2) * sp.sqrt(S.n_gpu) * S.ici_bw
                     / (S.b * S.d_model))
    rows = (
        Row("coeff. of T*", src["q7_t_coeff"], coeff, 0, 0.05),
        Row("1-D/2-D, chips", src["q7_crossover_printed"], float(spec["n_cross"]), 0,
            erratum="erratum-sharding-the-q7-crossover-is-not-the",
            corrected=float(src["q7_crossover_later_rev"])),
    )
    return Group(AUSTIN, "Question 7", "sharding-two-dimensions", rows,
                 "2-D weight-stationary sharding at a feed-forward width of four model widths: "
                 "the coefficient of its step time T*, and the chip count where it overtakes 1-D")


def sharding_appendix_c() -> Group:
    import sympy as sp

    from ...core import symbols as S
    from ...derivations import sharding

    src = sharding.QUOTED
    appc = {S.y_model: src["appc_shards"], S.ici_bw: int(src["appc_ici_bw"]),
            S.t_hop: sp.Rational(1, 10**6)}
    buffer = sharding.latency_bound_buffer().rhs.subs(appc)
    acts = src["appc_batch"] * src["appc_d_model"] * src["appc_act_bytes"]
    rows = (
        Row("buffer, kB", src["appc_buffer"] / 1e3, float(buffer) / 1e3, 0),
        Row("int8 acts, kB", src["appc_act_printed"] / 1e3, acts / 1e3, 0.001),
        Row("divisor of B·D", src["appc_divisor"], float((S.ici_bw * S.t_hop).subs(appc)), 0),
    )
    return Group(AUSTIN, "Appendix C", "sharding-latency-bound", rows,
                 "when the collectives of decode are latency bound, on 8 TPU v5e: the buffer "
                 "below which they are, a batch's int8 activations (acts), and the divisor of B·D")


def sharding_prefill() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import sharding
    from ...presets.hardware import get_gpu

    v5p = get_gpu("tpu-v5p")
    alpha_fn = compile_fn(sharding.ici_intensity_definition(), (S.flops, S.ici_bw))
    # 16-bit arithmetic over both directions of a link, the TPU v5p's
    alpha = float(alpha_fn(v5p.flops(16), 2 * v5p.ici_bandwidth))
    rows = (Row("FLOP/s per ICI byte/s, TPU v5p", sharding.QUOTED["prefill_alpha"], alpha, 0,
                1e-9),)
    return Group(AUSTIN, "Prefill", "serving-engines-prefill", rows,
                 "the ratio of arithmetic rate to ICI bandwidth in the rule of model parallelism "
                 "for prefill (the feed-forward width over that ratio); the source does not name "
                 "its chip, and the TPU v5p's, in 16-bit arithmetic with both link directions, "
                 "matches")


def sharding_elements() -> Group:
    from ...derivations import sharding

    src = sharding.QUOTED
    rows = (Row("1-D/2-D, chips", src["esti_crossover"],
                float(sharding.printed_crossover_esti()), 0),)
    return Group(POPE, "2D weight stationary", "sharding-elements", rows,
                 "the chip count above which 2-D sharding moves fewer elements")


def sharding_weight_gathered() -> Group:
    from ...derivations import sharding
    from ...presets.hardware import get_gpu

    links = 2 * 3  # a chip of a 3-D torus: two one-direction links per axis
    ours = links * get_gpu("tpu-v4").ici_bandwidth
    rows = (Row("network, GB/s", sharding.QUOTED["esti_net_bytes_per_s"] / 1e9, ours / 1e9, 0,
                1e-9),)
    return Group(POPE, "Weight gathered", "sharding-weight-gathered", rows,
                 "the network bandwidth of a TPU v4 chip in a 3-D torus, as six one-direction "
                 "links of the preset",
                 "erratum-sharding-the-layout-for-very-large-batches")


def sharding_min_chips() -> Group:
    from ...core import symbols as S
    from ...derivations import sharding

    src = sharding.QUOTED
    values = {S.p: src["esti_bytes_per_weight"], S.n_param: int(src["esti_params"]),
              S.hbm_cap: int(src["esti_chip_bytes"])}
    chips = sharding.min_chips_for_weights().rhs.subs(values)
    rows = (Row("fewest chips", src["esti_min_chips"], float(chips), 0),)
    return Group(POPE, "Partitioning the MLP", "sharding-min-chips", rows,
                 "540 billion int8 weights on chips of 32 GB")
