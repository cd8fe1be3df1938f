"""The record's rows from Mazurek and coauthors' posts (2025): a dense transformer's counts,
prefill and decode, pricing, DeepSeek-V3's anatomy, embeddings and RL rollouts."""

from __future__ import annotations

import numpy as np

from .rows import (
    DEEPSEEK,
    MAZUREK,
    MAZUREK_EMB,
    MAZUREK_EXP,
    MAZUREK_MOE,
    Group,
    Row,
)

_GB = 1e9


# ---- Mazurek and Gabriel (2025), the counts of Llama 3.3 70B ("Counting a dense transformer") --

def _llama33_shape() -> tuple[dict, int]:
    """The post's config as exact shape symbols, and its bytes per weight."""
    from ...core import symbols as S
    from ...derivations import dense_economics as de

    cfg = de.MAZUREK2025["config"]
    shape = {S.d_model: cfg["hidden_size"], S.d_ff: cfg["intermediate_size"],
             S.n_layers: cfg["num_hidden_layers"], S.n_q: cfg["num_attention_heads"],
             S.n_kv: cfg["num_key_value_heads"], S.d_head: cfg["head_dim"],
             S.vocab: cfg["vocab_size"]}
    return shape, cfg["dtype_bytes"]


def dense_parameters() -> Group:
    from ...derivations import dense_economics as de

    post = de.MAZUREK2025
    shape, width = _llama33_shape()
    n = int(de.total_params().rhs.subs(shape))
    hbm = post["hbm_gb"] * _GB
    rows = (
        # exact counts: to 0.01 billion and 0.01 GB
        Row("params, bn", post["total_params"] / 1e9, n / 1e9, 0, decimals=2),
        Row("weights, GB", post["weight_bytes"] / _GB, width * n / _GB, 0, decimals=2),
        Row("filled, %", 100 * post["two_gpu_fraction_stated"],
            100 * width * n / (2 * hbm), 0, 0.5),
        Row("free, GB", post["two_gpu_free_gb_stated"], (2 * hbm - width * n) / _GB,
            0, 1),
    )
    return Group(MAZUREK, "Parameters", "dense-counting-parameters", rows,
                 "Llama 3.3 70B's parameters and bf16 weights, and how much of two H100s they "
                 "fill and leave free")


def dense_prefill_flops() -> Group:
    from ...core import symbols as S
    from ...derivations import dense_economics as de

    post = de.MAZUREK2025
    shape, _ = _llama33_shape()
    total = de.prefill_flops().rhs.subs({**shape, S.seq_kv: post["prefill_tokens"]})
    head = de.lm_head_flops(1).subs(shape)
    per_layer = (total - head) / shape[S.n_layers]
    rows = (
        Row("all, TFLOP", post["prefill_flops_stated"] / 1e12, float(total) / 1e12, 1e-4),
        Row("layer, TFLOP", post["per_layer_flops_stated"] / 1e12, float(per_layer) / 1e12,
            1e-4),
        Row("head, GFLOP", post["lm_head_flops_stated"] / 1e9, float(head) / 1e9, 1e-4),
    )
    return Group(MAZUREK, "Prefill FLOPs", "dense-counting-prefill-flops", rows,
                 f"a prompt of {post['prefill_tokens']:,} tokens: its FLOPs in all, in one layer "
                 "and in the LM head")


def dense_kv_cache() -> Group:
    from ...core import symbols as S
    from ...derivations import dense_economics as de
    from ...derivations import kv_cache as kv

    post = de.MAZUREK2025
    shape, width = _llama33_shape()
    values = {S.n_layers: shape[S.n_layers], S.n_kv: shape[S.n_kv], S.d_head: shape[S.d_head],
              S.p_act: width}
    seq = kv.sequence_bytes().rhs
    short = float(seq.subs({**values, S.seq_kv: post["prefill_tokens"]}))
    long = float(seq.subs({**values, S.seq_kv: post["kv_long_context"]}))
    box = "erratum-dense-counting-decimal-and-binary-units-and-a"
    rows = (
        Row("2K tok, MB", post["kv_mb_stated"], short / 1e6, 0, 0.5),
        Row("draft, MB", post["kv_mb_draft"], short / 1e6, 0, 0.5, box),
        Row("128K tok, GB", post["kv_long_gb_stated"], long / _GB, 0,
            0.5, box),
    )
    return Group(MAZUREK, "KV cache", "dense-counting-kv-cache", rows,
                 f"the cache of one sequence of {post['prefill_tokens']:,} tokens (2K), also as "
                 f"the post's draft printed it, and of {post['kv_long_context']:,} (128K), printed "
                 "to whole MB and GB")


# ---- Mazurek and Gabriel (2025), time (chapter "Prefill and decode") ---------------------------

def prefill_decode_one_gpu() -> Group:
    from ...derivations import dense_economics as de
    from ...presets.models import get_model

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
        Row("weight read, s", post["load_time_stated_s"], t_load, 0, 0.005),
        Row("prefill/read", post["prefill_over_load_stated"], t_pre / t_load, 0, 0.1),
        Row("decode, TFLOP", post["decode_tflops_stated"], f_dec / 1e12, 0, 0.005),
        Row("compute, ms", 1e3 * post["decode_compute_stated_s"], 1e3 * f_dec / c1,
            0.05),
        Row("decode read, s", post["load_time_stated_s"], t_dec_memory, 0, 0.005),
    )
    return Group(MAZUREK, "One prompt", "prefill-decode-one-prompt", rows,
                 f"a prompt of {tokens:,} tokens and its next token (decode) on one H100: the "
                 "time of the prefill and of one read of the weights, and their ratio; then the "
                 "decode's FLOPs, the time to compute them and the time of its reads")


def prefill_decode_tensor_parallel() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import dense_economics as de
    from ...presets.models import get_model

    tp, llama = de.MAZUREK2025["tp"], get_model("llama-3.3-70b")
    args = (S.n_reduce, S.p_act, S.d_model, S.n_layers, S.n_gpu, S.ici_bw)
    t_tp = float(compile_fn(de.tp_overhead(), args)(
        tp["syncs_per_layer"], tp["bytes"], llama.d_model, llama.layers, tp["n_gpu"],
        tp["nvlink_bandwidth"]))
    rows = (Row("all-reduces, µs", tp["stated_us"], 1e6 * t_tp, 0, 0.5),)
    return Group(MAZUREK, "Tensor parallelism", "prefill-decode-tensor-parallelism", rows,
                 f"the ideal NVLink transfers of one decoded token's all-reduces over "
                 f"{tp['n_gpu']} H100s")


def prefill_decode_figure16() -> Group:
    from ...derivations import dense_economics as de
    from ...presets.models import get_model

    tm, llama = de.MAZUREK2025["throughput_model"], get_model("llama-3.3-70b")
    hw = de.post_hardware()
    rows = []
    for i, batch in enumerate(tm["batches"]):
        run = de.simple_model(llama, batch, prompt=tm["prompt"], output=tm["output"], hardware=hw)
        rows.append(Row(f"b={batch} tok/s", tm["total_tok_s"][i], run.tokens_per_s, 0, 0.05))
        rows.append(Row(f"b={batch} each", tm["per_request_tok_s"][i],
                        run.per_request_tokens_per_s, 0, 0.05))
    return Group(MAZUREK, "Fig. 16", "prefill-decode-time-model", tuple(rows),
                 "the throughput of the post's time model on four H100s, in tok/s for the batch "
                 "and for each of its users, printed to 0.1 tok/s",
                 "erratum-prefill-decode-the-saturation-of-fig-16-is")


# ---- Mazurek and Gabriel (2025), the cost of Llama 3.3 70B on H100s (chapter "Pricing") -----

def pricing_table1() -> Group:
    from ...core import symbols as S
    from ...core.numeric import compile_fn
    from ...derivations import dense_economics as de

    post = de.MAZUREK2025
    pr, t1, elapsed = post["pricing"], post["table1"], post["fig18_elapsed_s"]
    price_fn = compile_fn(de.output_price(), (S.n_gpu, S.price, S.t_batch, S.b, S.t_prompt,
                                               S.t_output, S.gamma_in))
    rows = []
    for i, batch in enumerate(t1["batch"]):
        beta = 1e6 * float(price_fn(pr["n_gpu"], pr["gpu_price_per_hour"], elapsed[batch], batch,
                                    pr["prompt"], pr["output"], pr["gamma"]))
        tok_s = batch * (pr["prompt"] + pr["output"]) / elapsed[batch]
        rows.append(Row(f"b={batch} in", t1["input_per_m"][i], pr["gamma"] * beta, 0, 0.005))
        rows.append(Row(f"b={batch} out", t1["output_per_m"][i], beta, 0, 0.005))
        wrong = "erratum-pricing-one-tokens-per-second-cell-of" if batch == 64 else None
        rows.append(Row(f"b={batch} tok/s", t1["tokens_per_s"][i], tok_s, 0, 0.01, wrong))
    return Group(MAZUREK, "Table 1", "pricing-cost-table", tuple(rows),
                 "prices in $ per million input (in) and output (out) tokens, and tokens per "
                 "second, by batch size b")


# ---- DeepSeek-V3, its report and Mazurek and Schreiber (2025) (chapter "MoE anatomy") ---------

def deepseek_architecture() -> Group:
    from ...derivations import deepseek_serving as ds

    arch, counts = ds.DEEPSEEK_V3, ds.parameter_counts()
    rows = (
        Row("params, bn", arch["published_total_params"] / 1e9, counts["total"] / 1e9,
            1e-3),
        Row("active, bn", arch["published_active_params"] / 1e9, counts["active"] / 1e9,
            0.02),
    )
    return Group(DEEPSEEK, "Parameters", "deepseek-v3-architecture", rows,
                 "the published totals, against a count of the real layer mix")


def deepseek_mla_weights() -> Group:
    from ...derivations import deepseek_serving as ds

    post = ds.POST
    matrices = ds.mla_matrix_bytes()
    per_layer = ds.mla_bytes_per_layer()
    total = ds.DEEPSEEK_V3["n_layers"] * per_layer
    rows = [Row(f"{name}, MB", stated, matrices[name] / 1e6, 0, 0.05)
            for name, stated in post["mla_mb"].items()]
    rows += [
        Row("layer, MB", post["mla_mb_per_layer"], per_layer / 1e6, 0, 0.1),
        Row("all layers, GB", post["mla_gb"], total / _GB, 0, 0.05),
        Row("per GPU, GB", post["mla_gb_dp_paragraph"], total / _GB, 0, 0.5,
            "erratum-deepseek-v3-approximately-10-gb-of-mla-weights"),
    ]
    return Group(MAZUREK_MOE, "MLA weights", "deepseek-v3-mla-weights", tuple(rows),
                 "the attention matrices in FP8, printed to 0.1 MB, then one layer's and all "
                 "layers', and the copy each GPU holds")


def deepseek_latent_cache() -> Group:
    from ...derivations import deepseek_serving as ds
    from ...derivations import kv_cache as kv

    post, lim = ds.POST, ds.POST["kv_limit"]
    token = ds.kv_bytes_per_token(ds.DEEPSEEK_V3["n_layers"], post["kv_element_bytes"])
    other = {key: kv.kv_bytes_per_token(**cfg) for key, cfg in ds.KV_COMPARISON.items()}
    batch = ds.kv_limited_batch(lim["nodes"] * lim["gpus_per_node"], lim["kv_gb_per_gpu"] * _GB,
                                lim["kv_bytes"], lim["context"])
    rows = (
        Row("V3, kB/tok", post["kv_kb"], token / 1e3, 0, 1),
        Row("Llama, kB/tok", post["kv_kb_llama_405b"],
            other["llama-3.1-405b"] / 1e3, 0, 1),
        Row("Qwen3, kB/tok", post["kv_kb_qwen3_32b"], other["qwen3-32b"] / 1e3, 0, 1,
            "erratum-deepseek-v3-the-cache-of-qwen3-32b"),
        Row("batch", lim["batch"], batch, 0, 0.5),
    )
    return Group(MAZUREK_MOE, "Latent cache", "deepseek-v3-latent-cache", rows,
                 "the cache per token of context of DeepSeek-V3 (V3), Llama 3.1 405B and Qwen3 "
                 f"32B, and the batch whose caches of {lim['context']:,} tokens fill 32 H100s")


def deepseek_experts() -> Group:
    from ...derivations import deepseek_serving as ds

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
    act_mla = post["kv_element_bytes"] * arch["d_model"] * arch["n_layers"]
    rows = (
        Row("expert matrix, MB", post["expert_matrix_mb"], expert / 3 / 1e6, 0.03),
        Row("expert, MB", post["expert_mb"], expert / 1e6, 0, 0.5, box),
        Row("dense matrix, MB", post["dense_matrix_mb"], dense_layer / 3 / 1e6, 0.03),
        Row("dense, MB", post["dense_layer_mb"], dense_layer / 1e6, 0.03),
        Row("all dense, GB", post["dense_gb"], arch["n_dense"] * dense_layer / _GB, 0.03),
        Row("embed., GB", post["embeddings_gb"], ds.embedding_bytes() / _GB, 0.03),
        Row("experts, bn", post["expert_layer_params"] / 1e9,
            counts["experts"] / 1e9, 0, 0.5, box),
        Row("experts, %", 100 * post["expert_layer_share"],
            100 * counts["experts"] / counts["total"], 0, 0.05, box),
        Row("MLA acts, MB", post["act_mla_mb"], act_mla / 1e6, 0.03),
        Row("acts, MB", post["act_ep_mb"], act_ep / 1e6, 0, 0.05, box),
        # "in configurations exceeding 64 GPUs" the MLA weights outweigh a GPU's experts
        Row("MLA > EP, GPUs", post["mla_exceeds_experts_above_gpus"],
            crossing - 1, 0),
        Row("prefill/GPU", post["deepseek_prefill"]["routed_per_gpu"],
            ds.routed_experts_per_gpu(post["deepseek_prefill"]["ep"],
                                      post["deepseek_prefill"]["redundant"]), 0),
        Row("decode/GPU", post["deepseek_decode"]["routed_per_gpu"],
            ds.routed_experts_per_gpu(post["deepseek_decode"]["ep"],
                                      post["deepseek_decode"]["redundant"]), 0),
    )
    return Group(MAZUREK_MOE, "Experts", "deepseek-v3-experts", rows,
                 "the FP8 bytes of an expert's matrix and of an expert, of a dense layer's "
                 "matrix and of a dense layer, of the three dense layers together and of the "
                 "embeddings (embed.); the expert layers' parameters and share of all; the "
                 "activations (acts) of a sequence at the attention (MLA) and those the experts "
                 "exchange; the GPU count above which "
                 "a GPU's MLA weights outweigh its experts (EP); the experts on each GPU in "
                 "prefill and in decode")


def deepseek_all_to_all() -> Group:
    from ...derivations import deepseek_serving as ds

    post = ds.POST
    coefficient = ds.a2a_bytes_value(1, 1, post["comm_layers"])
    rows = (
        Row("GB/tok", post["comm_gb"], coefficient / _GB, 0, 0.00005),
        Row("imbalance", post["imbalance_stated"],
            float(ds.imbalance_factor(post["imbalance_gpus"])), 0, 0.1),
    )
    return Group(MAZUREK_MOE, "All-to-all", "deepseek-v3-all-to-all", rows,
                 "the traffic of expert parallelism per token over all layers, and the load "
                 "imbalance that the shared expert puts on 16 GPUs")


def deepseek_dollars() -> Group:
    from fractions import Fraction

    from ...derivations import deepseek_serving as ds

    eco, pi = ds.POST["economics"], ds.POST["prime_intellect"]
    rows = (
        Row("tokens/day, bn", eco["tokens_day_b"],
            ds.daily_tokens(eco["tok_s_per_gpu"], eco["n_gpu"]) / 1e9, 0, 0.05),
        Row("tok/s per user", eco["req_tok_s"],
            ds.request_rate_value(eco["tok_s_per_gpu"], eco["batch_per_gpu"]), 0, 0.05),
        Row(f"{eco['n_gpu']} GPUs, $/day", eco["cost_day"], eco["n_gpu"] * eco["usd_per_gpu_hour"]
            * ds.HOURS_PER_DAY, 0),
        Row("$/Mtok", eco["usd_per_mtok"],
            ds.cost_per_mtok(eco["tok_s_per_gpu"], eco["usd_per_gpu_hour"]), 0, 0.005),
        Row(f"{pi['n_gpu']} GPUs, $/day", pi["usd_day"], float(Fraction(pi["usd_per_gpu_hour"])
                                                        * pi["n_gpu"] * ds.HOURS_PER_DAY), 0, 0.5),
    )
    return Group(MAZUREK_MOE, "Tokens to dollars", "deepseek-v3-dollars", rows,
                 "SGLang's measured rate on 72 H100s at 2 USD an hour, what they cost a day and "
                 "per million tokens, and what a rented cluster of 64 costs a day")


def deepseek_daily_profit() -> Group:
    from fractions import Fraction

    from ...derivations import deepseek_serving as ds

    orr = ds.POST["openrouter"]
    rev = ds.revenue(orr["input_btok"], orr["cached_share"], orr["usd_cached"], orr["usd_miss"],
                     orr["output_btok"], orr["usd_output"])
    stated = dict(zip(("cached_input", "miss_input", "output"), orr["parts"], strict=True))
    stated["total"] = orr["total"]
    rows = tuple(Row(f"{label}, $", float(Fraction(stated[key])), float(rev[key]), 0)
                 for key, label in (("cached_input", "cached"),
                                    ("miss_input", "uncached"), ("output", "output"),
                                    ("total", "total")))
    return Group(MAZUREK_MOE, "Daily Profit", "deepseek-v3-missing-tokens", rows,
                 "what DeepSeek V3.1's OpenRouter tokens of a day bring in, to the cent: input "
                 "tokens cached and uncached, and output",
                 "erratum-deepseek-v3-daily-profit-is-revenue")


# ---- Mazurek (2025), embeddings (chapter "Why embeddings are cheap") -------------------------

def _embeddings():
    from ...derivations import embeddings as E
    from ...presets.models import get_model

    return E, E.MAZUREK2025_EMBEDDINGS, E.shape_of(get_model("qwen3-embedding-8b"))


def embeddings_prices() -> Group:
    _, post, _ = _embeddings()
    wiki = post["wikipedia"]
    wiki_usd = float(wiki["words"] * wiki["tokens_per_word"] * post["prices"]["ada_002"] / 10**6)
    rows = (Row("Wikipedia, $", wiki["usd_stated"], wiki_usd, 0.01),)
    return Group(MAZUREK_EMB, "Prices", "embeddings-intro", rows,
                 "what embedding the English Wikipedia costs at OpenAI's price")


def embeddings_forward_pass() -> Group:
    E, post, qwen = _embeddings()
    flops = E.flops_per_embedding(post["seq_len"], shape=qwen)
    rows = (
        Row("pass, TFLOP", post["flops_stated"] / 1e12, flops / 1e12,
            5e-3),
        Row("weights, GB", post["weights_gb_stated"],
            post["n_params_stated"] * post["bytes_per_param"] / _GB, 0, 1e-9),
    )
    return Group(MAZUREK_EMB, "One forward pass", "embeddings-forward-pass", rows,
                 "Qwen3-Embedding-8B counted with the post's coefficients: the FLOPs of one "
                 f"pass over {post['seq_len']:,} tokens, and its weights",
                 "erratum-embeddings-the-feed-forward-coefficient")


def embeddings_weights_arithmetic() -> Group:
    E, post, qwen = _embeddings()
    one = E.embedding_pass(post["seq_len"], 1, chip_flops=post["h100_flops_measured"],
                           chip_bandwidth=post["h100_bandwidth"], n_params=post["n_params_stated"],
                           shape=qwen)
    marketing = post["clock_hz"] * post["tensor_cores"] * post["flop_per_instruction"]
    box = "erratum-embeddings-the-compute-time-and-the-embedding"
    rows = (
        Row("read, s", post["t_mem_stated_s"], one["t_mem"], 0, 1e-4),
        Row("compute, s", post["t_comp_stated_s"], one["t_comp"], 0, 1e-3),
        Row("max emb/s", post["emb_per_s_stated"], one["emb_per_s"], 0, 0.5, box),
        Row("max, ×", post["theory_over_measured_stated"],
            one["emb_per_s"] / post["measured_emb_per_s_b1"], 0, 0.005, box),
        Row("TFLOP/s", post["h100_flops_marketing"] / 1e12, marketing / 1e12,
            1e-3),
    )
    return Group(MAZUREK_EMB, "Weights against arithmetic", "embeddings-weights-arithmetic",
                 rows, "one input of 1,024 tokens on an H100 at the measured 750 TFLOP/s: the "
                 "weights' read and the compute time, the most embeddings per second (emb/s) these "
                 "allow and how many times the measured rate that is, and the H100's datasheet "
                 "TFLOP/s")


def embeddings_dollars() -> Group:
    from ...core.units import HOURS_PER_DAY, SECONDS_PER_HOUR

    E, post, _ = _embeddings()
    tok_b4 = post["emb_per_s_b4"] * post["seq_len_experiment"]
    cost = E.usd_per_million_tokens(post["h100_price"], tok_b4)
    u = post["utilisation"]
    requests = post["emb_per_s_b4"] * float(SECONDS_PER_HOUR * HOURS_PER_DAY) * u
    rows = (
        Row("b=4 tok/s", post["tok_per_s_b4_stated"], tok_b4, 0, 5e-7),
        Row("$/Mtok", post["usd_per_mtok_h100_stated"], cost, 0, 5e-5),
        Row("requests", post["requests_stated"], requests, 0, 500,
            "erratum-embeddings-the-number-of-requests"),
        # The post truncates to the cent.
        Row("idle $/Mtok", post["usd_per_mtok_util_stated"],
            E.usd_per_million_tokens(post["h100_price"], tok_b4, utilisation=u), 0, 0.01),
    )
    return Group(MAZUREK_EMB, "From FLOPs to dollars", "embeddings-dollars", rows,
                 "the measured rate of an H100 at 2 USD an hour, its cost per million tokens, "
                 f"and, busy only {100 * u:.0f}% of a day (idle), the requests it serves and their "
                 "$/Mtok")


def embeddings_flops_per_dollar() -> Group:
    from ...core.units import HOURS_PER_DAY, SECONDS_PER_HOUR

    E, post, _ = _embeddings()
    h100 = E.usd_per_million_tokens(post["h100_price"], post["emb_per_s_b4"] * post["seq_len_experiment"])
    rtx = E.usd_per_million_tokens(post["rtx4090_price"], post["tok_per_s_4090_b4"])
    rows = [
        Row("H100", post["tflops_per_usd_h100_real_stated"],
            post["h100_flops_measured"] / 1e12 / post["h100_price"], 0, 1),
        Row("RTX 4090", post["tflops_per_usd_4090_stated"],
            post["rtx4090_flops"] / 1e12 / post["rtx4090_price"], 0, 1),
        Row("price, ×", post["price_ratio_stated"],
            post["h100_price"] / post["rtx4090_price"], 0, 0.05),
        Row("FLOP/s, ×", post["flops_ratio_stated"],
            post["h100_flops_measured"] / post["rtx4090_flops"], 0, 0.05),
    ]
    for key, label in (("perf_ratio_b1", "b=1"), ("perf_ratio_large", "large b")):
        r = post[key]
        rows.append(Row(f"{label}, ×", r["stated"], r["h100"] / r["rtx4090"], 0, 0.05))
    rows += [
        Row("$/Mtok", post["usd_per_mtok_4090_stated"], rtx, 0, 1e-5),
        Row("saving, %", 100 * post["saving_stated"], 100 * (1 - rtx / h100), 0, 1),
        Row("top $/Mtok", post["usd_per_mtok_headline_stated"],
            E.usd_per_million_tokens(post["rtx4090_price"], post["tok_per_s_4090_headline"]), 0,
            5e-5),
        Row("Mtok/day", post["tokens_per_day_stated"] / 1e6,
            post["tok_per_s_4090_b32"] * float(SECONDS_PER_HOUR * HOURS_PER_DAY) / 1e6, 0, 0.5),
        Row("rent, $/day", post["daily_rent_stated"], 24 * post["rtx4090_price"], 0,
            0.1),
    ]
    return Group(MAZUREK_EMB, "FLOPs per dollar", "embeddings-flops-per-dollar", tuple(rows),
                 "an H100 against an RTX 4090 rented at 0.37 USD an hour: each one's measured "
                 "TFLOP/s per \\$/h (first two rows); the H100's price, FLOP/s and speed at "
                 "batch 1 and at a large batch, over the 4090's (×); the 4090's \\$/Mtok at "
                 "batch 4, the H100's saving against it, the 4090's headline (top) \\$/Mtok, and "
                 "its Mtok and rent a day")


# ---- Mazurek (2025), the era of experience (chapter "RL rollouts and LoRA") --------------------

def rollouts_prices() -> Group:
    from ...derivations import rollouts as RL

    post = RL.MAZUREK2025_EXPERIENCE
    caching = post["cached_usd_per_m"] * post["cached_tokens"] * post["requests"] / 10**6
    rows = (
        Row("price drop, ×", post["price_drop_stated"],
            post["price_v3"] / post["price_v32"], 0, 0.3),
        Row("cached, $", post["caching_usd_stated"], float(caching), 0),
    )
    return Group(MAZUREK_EXP, "Prices", "rl-rollouts-intro", rows,
                 "the drop in DeepSeek's output price, and the cost of a cached prompt a million "
                 "times")


def rollouts_advantage() -> Group:
    from fractions import Fraction

    from ...derivations import rollouts as RL

    wordle = RL.MAZUREK2025_EXPERIENCE["wordle"]
    group = [wordle["reward"]] + [Fraction(0)] * (int(1 / wordle["baseline"]) - 1)
    rows = (Row("advantage", float(wordle["advantage_stated"]),
                float(RL.grpo_advantages(group)[0]), 0),)
    return Group(MAZUREK_EXP, "One advantage per rollout", "rl-rollouts-advantage", rows,
                 "GRPO's advantage of a WORDLE success against a baseline of 0.2")


def rollouts_bits() -> Group:
    import sympy as sp

    from ...core import symbols as S
    from ...derivations import rollouts as RL

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

    from ...core import symbols as S
    from ...derivations import rollouts as RL

    post = RL.MAZUREK2025_EXPERIENCE
    dp = post["down_proj"]
    d_in, d_out = dp["d_intermediate"], dp["d_hidden"]
    (r_lo, r_hi), (o_lo, _) = post["typical_ranks"], post["orders_stated"]
    adapter = RL.lora_params().subs({S.lora_rank: r_lo, S.d_in: d_in, S.d_out: d_out})
    rows = (
        Row("full, M", post["full_params_stated"] / 1e6, d_in * d_out / 1e6, 0, decimals=1),
        Row("r=1 params", post["lora_params_stated"], float(adapter), 0),
        Row("r=1, %", post["fraction_pct_stated"],
            100 * RL.lora_fraction_of(r_lo, d_in, d_out), 0, 5e-4),
        # "3 to 4 orders of magnitude smaller" for ranks 1 to 16
        Row(f"r={r_hi} orders", o_lo,
            -math.log10(RL.lora_fraction_of(r_hi, d_in, d_out)), 0,
            erratum="erratum-rl-rollouts-how-many-orders-of-magnitude-smaller"),
    )
    return Group(MAZUREK_EXP, "LoRA parameters", "rl-rollouts-lora-parameters", rows,
                 "an adapter on Llama 3.3 70B's down projection: the projection's parameters in "
                 "millions (M), those of an adapter of rank r = 1 and their share of them, and by "
                 f"how many orders of magnitude an adapter of rank {r_hi} is smaller")


def rollouts_lora_flops() -> Group:
    from ...core import symbols as S
    from ...derivations import rollouts as RL

    post = RL.MAZUREK2025_EXPERIENCE
    rows = (
        Row("LoRA, ×", float(post["training_ratio_stated"]),
            float(RL.training_flops_ratio().rhs.limit(S.lora_rank, 0)), 0, decimals=3),
        Row("backward, ×", post["backward_over_forward_stated"],
            float(RL.backward_over_forward()), 0),
    )
    return Group(MAZUREK_EXP, "LoRA training FLOPs", "rl-rollouts-lora-flops", rows,
                 "the FLOPs of a LoRA training step over a full one as the rank tends to zero "
                 "(printed as 2/3), and of a backward pass over a forward one")
