"""Serving DeepSeek-V3: MLA bytes and FLOPs, experts, all-to-all, two-batch overlap, dollars.

Follows "MoE Inference Economics from First Principles" (Mazurek and Schreiber 2025, cited as
mazurek2025moe), which prices DeepSeek-V3/R1/V3.1 tokens from a decode model: a data-parallel block
(multi-head latent attention, the dense layers and the embeddings) and an expert-parallel block,
each the maximum of its memory and arithmetic time, plus the all-to-all traffic between them,
optionally overlapped by splitting the batch in two (two-batch overlap, TBO).

The architecture numbers are DeepSeek-V3's released configuration (DeepSeek-AI 2024). The book's
``deepseek-v3-paper`` preset of :mod:`models` follows the reference code of Erdil (2025) instead (58 MoE
layers, the shared expert as a ninth routed one, no rotary key); :class:`models.Model` has one layer
type, so the real layer mix lives in :data:`DEEPSEEK_V3` here.

Notation of the post -> registry symbols: d = d_model, d_c = c_kv, d_c' = c_q, d_h = d_head,
d_h^R = d_rope, n_h = n_q, L = n_layers, d_moe = d_ff, d_dense = d_ff_dense, n_r^E = n_experts,
n_{r,u}^E = n_active, n_s^E = n_shared, B = b (the batch of the whole expert-parallel group),
S = seq_kv, n_GPUs = n_gpu.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    a2a_bytes,
    b,
    b_gpu,
    b_tbo,
    b_tbo_peak,
    beta_eb,
    bw_inter,
    bw_intra,
    c_kv,
    c_q,
    d_ff,
    d_head,
    d_model,
    d_rope,
    flop_absorbed,
    flop_vanilla,
    hbm_cap,
    imbalance,
    kappa_seq,
    kv_bytes,
    kv_seq,
    n_active,
    n_busy,
    n_dense,
    n_experts,
    n_extra,
    n_gpu,
    n_layers,
    n_nodes,
    n_param,
    n_q,
    n_shared,
    p,
    p_act,
    p_combine,
    p_dispatch,
    price,
    s,
    seq_absorb,
    seq_kv,
    t_comm,
    t_fixed,
    t_token,
    tau_seq,
    tbo_gain,
    tok_rate_gpu,
    tok_rate_req,
    tokens_day,
    usd_per_mtok,
    vocab,
    w_ep_gpu,
    w_expert,
    w_mla,
)
from ..core.units import HOURS_PER_DAY, SECONDS_PER_HOUR
from ..core.validation import InputError, positive, positive_int
from . import architecture, kv_cache, moe

if TYPE_CHECKING:  # a type only: derivations never import the presets
    from ..presets.hardware import GPU

_POST = "Mazurek and Schreiber (2025)"

# --- the sources' inputs and stated results ----------------------------------------------------

#: DeepSeek-V3's released configuration (DeepSeek-AI 2024; config.json keys in comments). The post
#: notes that R1 and V3.1 share it. Total and active parameters are the report's published counts
#: (main model, without the multi-token-prediction module).
DEEPSEEK_V3 = {
    "d_model": 7168,  # hidden_size
    "c_q": 1536,  # q_lora_rank
    "c_kv": 512,  # kv_lora_rank
    "d_head": 128,  # qk_nope_head_dim = v_head_dim
    "d_rope": 64,  # qk_rope_head_dim
    "n_heads": 128,  # num_attention_heads
    "n_layers": 61,  # num_hidden_layers
    "n_dense": 3,  # first_k_dense_replace
    "d_ff_dense": 18432,  # intermediate_size
    "d_ff_expert": 2048,  # moe_intermediate_size
    "n_routed": 256,  # n_routed_experts
    "n_shared": 1,  # n_shared_experts
    "n_active": 8,  # num_experts_per_tok
    "vocab": 129280,  # vocab_size
    "published_total_params": 671e9,
    "published_active_params": 37e9,
}

#: What Mazurek and Schreiber (2025) state, typed from the post. Sizes are in the post's decimal
#: units (MB = 1e6 bytes, GB = 1e9 bytes); prices in dollars. Strings keep exact decimals.
POST = {
    # precision the post assumes: FP8 weights, BF16 latent cache and activations
    "weight_bytes": 1,
    "kv_element_bytes": 2,
    # MLA weight matrices in FP8 (sec. "Memory Loading"), their sum and its 61-layer total
    "mla_mb": {"W_DQ": 11.0, "W_UQ": 25.2, "W_QR": 12.6, "W_DKV": 3.7, "W_UK": 8.4, "W_UV": 8.4,
               "W_KR": 0.5, "W_O": 117.4},
    "mla_mb_per_layer": 187.2,
    "mla_gb": 11.4,
    "mla_gb_dp_paragraph": 10,  # "approximately 10 GB" (sec. "Data Parallel Attention")
    "mla_exceeds_experts_above_gpus": 64,  # "in configurations exceeding 64 GPUs"
    # KV cache per token and the comparison models
    "kv_kb": 70,
    "kv_kb_qwen3_32b": 163,
    "kv_kb_llama_405b": 516,
    "kv_reduction": (2, 7),  # "a 2-7x reduction"
    # activations per sequence, MLA side and expert side
    "act_mla_mb": 0.9,
    "act_ep_mb": 1.4,
    # experts, dense layers, embeddings
    "expert_matrix_mb": 14.7,
    "expert_mb": 45,
    "dense_matrix_mb": 132,
    "dense_layer_mb": 396,
    "dense_gb": 1.2,
    "embeddings_gb": 1.9,
    "expert_layer_params": 661e9,
    "expert_layer_share": 0.985,
    "total_params": 671e9,
    "active_params": 37e9,
    "fig9_shared_experts": 3,  # the caption of the post's Fig. 9
    # all-to-all
    "comm_gb": 0.0118,  # "B/n_GPUs x 0.0118 GB"
    "comm_layers": 61,
    "comm_dispatch_bytes": 1,
    "comm_combine_bytes": 2,
    "imbalance_gpus": 16,  # "2x8 H100"
    "imbalance_stated": 2.7,  # written "2,7x"
    # expert-parallel layouts quoted from DeepSeek and SGLang
    "deepseek_prefill": {"ep": 32, "nodes": 4, "redundant": 32, "routed_per_gpu": 9},
    "deepseek_decode": {"ep": 144, "nodes": 18, "redundant": 32, "routed_per_gpu": 2},
    "sglang_decode": {"ep": 72, "nodes": 9, "redundant": 32},
    # KV-limited batch on 4x8 H100
    "kv_limit": {"kv_gb_per_gpu": 20, "nodes": 4, "gpus_per_node": 8, "kv_bytes": 70e3,
                 "context": 32768, "batch": 279},
    "deepseek_mean_context": 4989,
    # inefficiency factors of the decode model (sec. "From Parts to the Whole")
    "inefficiency": {"deepep_gb_s": 40, "link_gb_s": 50, "flashmla_mfu": 0.66,
                     "deepgemm_tflops": 1550, "fp8_peak_tflops": 1980, "kernel_penalty": 0.10,
                     "memory_factor": 2.0},
    "nvlink_gb_s": 450,
    "infiniband_gb_s": 50,
    # tokens to dollars (H100 EP72 at batch 64, SGLang's measurement, 2000 in / 100 out)
    "economics": {"tok_s_per_gpu": 1400, "n_gpu": 72, "batch_per_gpu": 64, "usd_per_gpu_hour": 2,
                  "b200_usd_per_gpu_hour": 8, "tokens_day_b": 8.7, "req_tok_s": 21.9,
                  "cost_day": 3456, "usd_per_mtok": 0.40, "input_tokens": 2000,
                  "output_tokens": 100},
    # OpenRouter "Daily Profit" (billions of tokens per day, $ per million tokens)
    "openrouter": {"input_btok": "28", "cached_share": "0.56", "usd_cached": "0.07",
                   "usd_miss": "0.27", "output_btok": "0.800", "usd_output": "1.1",
                   "parts": ("1097.60", "3326.40", "880.00"), "total": "5304.00",
                   "prose_total_btok": 30, "prose_output_btok": 1},
    # Prime Intellect cluster (caption of the post's Fig. 30)
    "prime_intellect": {"usd_per_gpu_hour": "2.49", "n_gpu": 64, "usd_hour": 160, "usd_day": 3825,
                        "synthetic_tokens_day": 30e9},
    "deepseek_cache": {"input_btok": 608, "hit_btok": 342, "hit_share": 0.563},
    "cache_price": {"hit_units": 7, "miss_units": 27, "stated_discount": 0.75},
    "latency": {"tokens": 3000, "tok_s": 25, "seconds": 120},
    "chutes": {"output_btok": "0.2", "usd_per_mtok": "0.80", "usd_day": 160},
    "deepseek_output_btok_day": 168,
}

#: Grouped-query models the post compares the latent cache with: Llama 3.1 405B (Dubey et al.
#: 2024) and Qwen3 32B (its released configuration), both with a BF16 cache.
KV_COMPARISON = {
    "llama-3.1-405b": {"n_layers": 126, "n_kv": 8, "d_head": 128, "bytes_per_element": 2},
    "qwen3-32b": {"n_layers": 64, "n_kv": 8, "d_head": 128, "bytes_per_element": 2},
}


# --- MLA: weights, cache, FLOPs -----------------------------------------------------------------

def mla_matrices() -> dict[str, sp.Expr]:
    """Elements of each MLA weight matrix of one layer, from its shape (the post's list)."""
    return {
        "W_DQ": c_q * d_model,
        "W_UQ": d_head * n_q * c_q,
        "W_QR": d_rope * n_q * c_q,
        "W_DKV": c_kv * d_model,
        "W_UK": d_head * n_q * c_kv,
        "W_UV": d_head * n_q * c_kv,
        "W_KR": d_rope * d_model,
        "W_O": d_model * d_head * n_q,
    }


@derivation("eq-deepseek-mla-bytes", f"{_POST}, 'Memory Loading: MLA'")
def mla_bytes() -> sp.Eq:
    """Bytes of one layer's MLA weights: p times the sum of the eight matrices (eq-deepseek-mla-bytes).

    Includes the rotary projections W^QR and W^KR, which eq-arch-attention-params-mla leaves out.
    """
    return sp.Eq(w_mla, p * sp.factor(sum(mla_matrices().values()), d_model))


@derivation("eq-deepseek-kv-bytes", f"{_POST}, 'KV Cache'")
def kv_bytes_per_token_mla_rope() -> sp.Eq:
    """Latent cache per token with the rotary key: (c_kv + d_h^R)·L·p_act (eq-deepseek-kv-bytes).

    eq-arch-kv-bytes-mla with the shared rotary key of width d_h^R cached beside the latent.
    """
    return sp.Eq(kv_bytes, architecture.kv_cache_bytes_per_token_mla().rhs.subs(c_kv, c_kv + d_rope))


def _matmul(rows, inner, cols) -> sp.Expr:
    """FLOPs of a [rows, inner] x [inner, cols] product: one multiply and one add per term."""
    return 2 * rows * inner * cols


def mla_decode_terms(absorbed: bool) -> dict[str, sp.Expr]:
    """Decode FLOPs of one token in one MLA layer, term by term, as the post counts them.

    ``absorbed=False`` up-projects every cached latent to keys and values (the post's "vanilla"
    table); ``absorbed=True`` folds W^UK into the query and W^UV into the output projection,
    computing the products on the fly. The attention terms are the post's: the vanilla one counts
    the value product once per element, the absorbed one adds the sum over t separately.
    """
    heads = n_q
    common = {
        "q_down": _matmul(1, d_model, c_q),
        "q_rope": _matmul(1, c_q, heads * d_rope),
        "kv_down": _matmul(1, d_model, c_kv),
        "k_rope": _matmul(1, d_model, d_rope),
    }
    if not absorbed:
        return {
            **common,
            "q_up": _matmul(1, c_q, heads * d_head),
            "k_up": _matmul(seq_kv, c_kv, heads * d_head),
            "v_up": _matmul(seq_kv, c_kv, heads * d_head),
            "attention": heads * seq_kv * (3 * d_head + 2 * d_rope),
            "out": _matmul(1, heads * d_head, d_model),
        }
    return {
        **common,
        "q_uq": _matmul(1, c_q, heads * d_head),
        "q_uk": _matmul(heads, d_head, c_kv),
        "scores": _matmul(heads, c_kv + d_rope, seq_kv),
        "times_v": heads * seq_kv * c_kv,
        "sum_t": heads * seq_kv * c_kv,
        "out": _matmul(1, heads * d_head, d_model) + _matmul(heads, c_kv, d_head),
    }


def _collect_context(expr: sp.Expr) -> sp.Expr:
    return sp.collect(sp.expand(expr), seq_kv, func=sp.factor)


@derivation("eq-deepseek-mla-flops-vanilla", f"{_POST}, 'Vanilla MLA Implementation'")
def mla_flops_vanilla() -> sp.Eq:
    """Decode FLOPs per token and layer without absorption (eq-deepseek-mla-flops-vanilla)."""
    return sp.Eq(flop_vanilla, _collect_context(sum(mla_decode_terms(False).values())))


@derivation("eq-deepseek-mla-flops-absorbed", f"{_POST}, 'Matrix-Absorbed MLA Implementation'")
def mla_flops_absorbed() -> sp.Eq:
    """Decode FLOPs per token and layer with W^UK and W^UV absorbed (eq-deepseek-mla-flops-absorbed)."""
    return sp.Eq(flop_absorbed, _collect_context(sum(mla_decode_terms(True).values())))


def absorption_saving() -> sp.Expr:
    """Vanilla minus absorbed decode FLOPs per token and layer, simplified by SymPy."""
    return _collect_context(mla_flops_vanilla().rhs - mla_flops_absorbed().rhs)


@derivation("eq-deepseek-absorb-context", f"this book, from {_POST}")
def absorption_crossover() -> sp.Eq:
    """Context at which both MLA variants cost the same (eq-deepseek-absorb-context).

    Solved by SymPy from vanilla = absorbed; beyond it absorption saves FLOPs. Absorption adds a
    fixed 4·n_q·d_head·c_kv per token and removes a cost proportional to the context.
    """
    (solution,) = sp.solve(sp.Eq(mla_flops_vanilla().rhs, mla_flops_absorbed().rhs), seq_kv)
    return sp.Eq(seq_absorb, sp.factor(solution))


def absorption_slope_ratio() -> sp.Expr:
    """FLOPs per cached token, vanilla over absorbed: the large-context limit of their ratio."""
    ratio = sp.limit(mla_flops_vanilla().rhs / mla_flops_absorbed().rhs, seq_kv, sp.oo)
    return sp.factor(ratio)


# --- experts, dense layers, embeddings ----------------------------------------------------------

@derivation("eq-deepseek-expert-bytes", f"{_POST}, 'Expert Networks'")
def expert_bytes() -> sp.Eq:
    """Bytes of one SwiGLU expert: p·3·d_model·d_ff (eq-deepseek-expert-bytes).

    eq-kv-ff-params for one layer and one expert, times the bytes per weight.
    """
    one = kv_cache.feedforward_params().rhs.subs({n_layers: 1, n_experts: 1})
    return sp.Eq(w_expert, p * one)


@derivation("eq-deepseek-ep-bytes-per-gpu", f"{_POST}, 'Expert Networks'")
def ep_bytes_per_gpu() -> sp.Eq:
    """Expert and router bytes per GPU of an expert-parallel group (eq-deepseek-ep-bytes-per-gpu).

    Each of the n_layers - n_dense MoE layers spreads its shared, routed and redundant experts
    evenly over the GPUs (a whole number per GPU, hence the ceiling) and, as the post assumes, one
    GPU holds the whole router d_model x n_expert.
    """
    per_gpu = sp.ceiling((n_shared + n_experts + n_extra) / n_gpu)
    router = p * d_model * n_experts
    return sp.Eq(w_ep_gpu, (n_layers - n_dense) * (expert_bytes().rhs * per_gpu + router))


def routed_probability() -> sp.Expr:
    """Probability that a token routed to n_active of n_expert experts uniformly picks a given one.

    C(N-1, k-1)/C(N, k): the choices that contain the expert over all choices; SymPy simplifies it
    to k/N.
    """
    return sp.combsimp(sp.binomial(n_experts - 1, n_active - 1) / sp.binomial(n_experts, n_active))


@derivation("eq-deepseek-busy-experts",
            "this book, from Mazurek and Schreiber (2025) and Erdil (2025) eq. 22")
def busy_experts() -> sp.Eq:
    """Expected routed experts that at least one of b tokens uses: N·(1 - (1 - k/N)^b).

    (eq-deepseek-busy-experts.) Each token picks n_active distinct experts of n_expert uniformly and
    independently of the other tokens; by linearity of expectation the count is n_expert times the
    probability that a given expert is picked at least once.
    """
    idle = (1 - routed_probability()) ** b
    return sp.Eq(n_busy, n_experts * (1 - idle))


def busy_experts_from_params_read() -> sp.Expr:
    """n_expert times the expected fraction read of eq-moe-params-read, with s = n_expert/n_active."""
    return n_experts * moe.expert_fraction_read().subs(s, n_experts / n_active)


# --- all-to-all communication -------------------------------------------------------------------

@derivation("eq-deepseek-a2a-bytes", f"{_POST}, 'Communication'")
def a2a_bytes_per_pass() -> sp.Eq:
    """All-to-all bytes through one GPU's link per forward pass (eq-deepseek-a2a-bytes).

    Two micro-batches of b/(2·N_GPU) tokens per link, each token sent to its n_active + n_shared
    experts (dispatch) and back (combine) in every layer, over the balancedness beta_eb.
    """
    per_link = b / (2 * n_gpu)
    two_micro_batches = 2 * (p_dispatch + p_combine) * per_link * (n_active + n_shared) * d_model
    return sp.Eq(a2a_bytes, sp.simplify(two_micro_batches * n_layers / beta_eb))


@derivation("eq-deepseek-comm-time", f"{_POST}, 'Improvement 1'")
def comm_time() -> sp.Eq:
    """All-to-all time over intra- and inter-node links (eq-deepseek-comm-time).

    A fraction 1/n_nodes of the traffic stays in the node; the slower share sets the time.
    """
    inter = (n_nodes - 1) / (n_nodes * bw_inter)
    intra = 1 / (n_nodes * bw_intra)
    return sp.Eq(t_comm, a2a_bytes * sp.Max(inter, intra))


@derivation("eq-deepseek-imbalance", f"{_POST}, 'Expert Balancedness'")
def shared_expert_imbalance() -> sp.Eq:
    """Load of the GPU holding the only shared expert over the others' (eq-deepseek-imbalance).

    The others receive (n_shared + n_active)/N_GPU messages per token on average; that GPU also
    receives every token once.
    """
    average = (n_shared + n_active) / n_gpu
    return sp.Eq(imbalance, sp.factor(sp.simplify((1 + average) / average)))


# --- decode step time and two-batch overlap -----------------------------------------------------

def _blocks(batch: sp.Expr) -> sp.Expr:
    """Compute blocks of a pass in the affine model: weight reads plus a cost per sequence."""
    return t_fixed + tau_seq * batch


def _comm(batch: sp.Expr) -> sp.Expr:
    return kappa_seq * batch


@derivation("eq-deepseek-step-serial", f"{_POST}, 'From Parts to the Whole' (affine form: this book)")
def step_time_serial() -> sp.Eq:
    """Serial decode step, T_MLA + T_EP + T_comm, with affine blocks (eq-deepseek-step-serial)."""
    return sp.Eq(t_token, _blocks(b) + _comm(b))


@derivation("eq-deepseek-step-tbo", f"{_POST}, 'From Parts to the Whole' (affine form: this book)")
def step_time_tbo() -> sp.Eq:
    """Two-batch overlap, 2·max(blocks(b/2), comm(b/2)), with affine blocks (eq-deepseek-step-tbo).

    Each half batch reads all the weights again; its communication hides behind the other half's
    compute.
    """
    half = b / 2
    return sp.Eq(t_token, sp.Max(sp.expand(2 * _blocks(half)), sp.expand(2 * _comm(half))))


@derivation("eq-deepseek-tbo-breakeven", "this book, from Mazurek and Schreiber (2025)")
def tbo_breakeven() -> sp.Eq:
    """Batch above which two-batch overlap is faster: T_0/kappa (eq-deepseek-tbo-breakeven).

    The TBO step exceeds the serial one only through its first argument, 2·T_0 + tau·b (the second,
    kappa·b, is always below the serial step); SymPy solves for equality.
    """
    serial = step_time_serial().rhs
    blocks_branch, comm_branch = _tbo_branches()
    if not sp.simplify(serial - comm_branch).is_positive:
        raise ArithmeticError("the communication branch of TBO is not below the serial step")
    (solution,) = sp.solve(sp.Eq(blocks_branch, serial), b)
    return sp.Eq(b_tbo, solution)


def tbo_speedup() -> sp.Expr:
    """Serial over TBO step time, as a function of b (a Max in the denominator)."""
    return step_time_serial().rhs / step_time_tbo().rhs


def _tbo_branches() -> tuple[sp.Expr, sp.Expr]:
    """The two arguments of the TBO step's Max: (compute blocks, communication)."""
    branches = step_time_tbo().rhs.args
    (blocks_branch,) = [arg for arg in branches if arg.has(t_fixed)]
    (comm_branch,) = [arg for arg in branches if not arg.has(t_fixed)]
    return blocks_branch, comm_branch


@derivation("eq-deepseek-tbo-peak", "this book, from Mazurek and Schreiber (2025)")
def tbo_peak_batch() -> sp.Eq:
    """Batch where the two arguments of the TBO step meet (eq-deepseek-tbo-peak): there the
    speed-up peaks when communication per sequence exceeds compute per sequence."""
    blocks_branch, comm_branch = _tbo_branches()
    (kink,) = sp.solve(sp.Eq(blocks_branch, comm_branch), b)
    return sp.Eq(b_tbo_peak, kink)


@derivation("eq-deepseek-tbo-gain", "this book, from Mazurek and Schreiber (2025)")
def tbo_largest_gain() -> sp.Eq:
    """Largest speed-up TBO can give in the affine model (eq-deepseek-tbo-gain).

    If communication per sequence exceeds compute per sequence (kappa > tau), the speed-up rises
    while the blocks dominate the TBO step and falls once communication does, so it peaks where the
    two arguments meet, b = 2·T_0/(kappa - tau). Otherwise it rises for ever, towards its limit as
    b -> oo. Both branches are 2 at kappa = tau and below 2 elsewhere.
    """
    serial = step_time_serial().rhs
    blocks_branch, comm_branch = _tbo_branches()
    kink = tbo_peak_batch().rhs
    rising = sp.simplify(sp.diff(serial / blocks_branch, b))
    falling = sp.simplify(sp.diff(serial / comm_branch, b))
    if not (rising.is_positive and falling.is_negative):
        raise ArithmeticError("speed-up is not rising then falling around the kink")
    peak = sp.simplify((serial / comm_branch).subs(b, kink))
    limit = sp.limit(serial / blocks_branch, b, sp.oo)
    return sp.Eq(tbo_gain, sp.Piecewise((sp.expand(peak), kappa_seq > tau_seq), (sp.expand(limit), True)))


# --- tokens to dollars --------------------------------------------------------------------------

@derivation("eq-deepseek-tokens-per-day", f"{_POST}, 'From Tokens to Dollars'")
def tokens_per_day() -> sp.Eq:
    """Daily tokens of a deployment: R_GPU·N_GPU·3600·24 (eq-deepseek-tokens-per-day)."""
    return sp.Eq(tokens_day, tok_rate_gpu * n_gpu * SECONDS_PER_HOUR * HOURS_PER_DAY)


@derivation("eq-deepseek-cost-per-mtok", f"{_POST}, 'From Tokens to Dollars'")
def cost_per_million_tokens() -> sp.Eq:
    """Daily GPU cost over daily tokens in millions (eq-deepseek-cost-per-mtok).

    N_GPU cancels: the cost of a million tokens is the GPU-hour price over one GPU's hourly output.
    """
    daily_cost = n_gpu * price * HOURS_PER_DAY
    return sp.Eq(usd_per_mtok, sp.simplify(daily_cost / (tokens_per_day().rhs / 10**6)))


@derivation("eq-deepseek-request-rate", f"{_POST}, 'From Tokens to Dollars'")
def request_rate() -> sp.Eq:
    """Tokens per second each request sees: R_GPU/b_GPU (eq-deepseek-request-rate)."""
    return sp.Eq(tok_rate_req, tok_rate_gpu / b_gpu)


# --- numbers ------------------------------------------------------------------------------------

def symbol_values(arch: dict | None = None) -> dict[sp.Symbol, float]:
    """Registry symbols -> DeepSeek-V3's values (expert width as d_ff, FP8 weights, BF16 cache)."""
    a = DEEPSEEK_V3 if arch is None else arch
    return {
        d_model: a["d_model"], c_q: a["c_q"], c_kv: a["c_kv"], d_head: a["d_head"],
        d_rope: a["d_rope"], n_q: a["n_heads"], n_layers: a["n_layers"], n_dense: a["n_dense"],
        d_ff: a["d_ff_expert"], n_experts: a["n_routed"], n_shared: a["n_shared"],
        n_active: a["n_active"], p: POST["weight_bytes"], p_act: POST["kv_element_bytes"],
    }


def _eval(expr, **changes) -> float:
    """Evaluate an expression at DeepSeek-V3's values, some replaced (keyword = symbol name)."""
    from ..core import symbols as S

    values = symbol_values()
    for name, value in changes.items():
        values[getattr(S, name)] = value
    expr = expr.rhs if isinstance(expr, sp.Equality) else expr
    args = tuple(sorted(expr.free_symbols, key=lambda sym: sym.name))
    missing = [sym for sym in args if sym not in values]
    if missing:
        raise InputError(f"no value for {', '.join(str(m) for m in missing)}")
    return float(compile_fn(expr, args)(*(values[sym] for sym in args)))


def mla_matrix_bytes(weight_bytes: float = 1.0) -> dict[str, float]:
    """Bytes of each of DeepSeek-V3's MLA matrices of one layer (the post's list)."""
    width = positive("weight_bytes", weight_bytes)
    return {name: width * _eval(elements) for name, elements in mla_matrices().items()}


def mla_bytes_per_layer(weight_bytes: float = 1.0) -> float:
    """eq-deepseek-mla-bytes for DeepSeek-V3."""
    return _eval(mla_bytes(), p=positive("weight_bytes", weight_bytes))


def kv_bytes_per_token(n_layers: int = 61, bytes_per_element: float = 2.0,
                       with_rope: bool = True) -> float:
    """Latent cache per token: eq-deepseek-kv-bytes, or eq-arch-kv-bytes-mla without the rope key."""
    layers = positive_int("n_layers", n_layers)
    width = positive("bytes_per_element", bytes_per_element)
    eq = kv_bytes_per_token_mla_rope() if with_rope else architecture.kv_cache_bytes_per_token_mla()
    return _eval(eq, n_layers=layers, p_act=width)


def mla_decode_flops(context, absorbed: bool) -> np.ndarray | float:
    """Decode FLOPs of one token in one MLA layer at the given context (tokens)."""
    ctx = np.asarray(context, dtype=float)
    if np.any(~np.isfinite(ctx)) or np.any(ctx <= 0):
        raise InputError(f"context must be positive and finite, got {context!r}")
    eq = mla_flops_absorbed() if absorbed else mla_flops_vanilla()
    values = symbol_values()
    args = (seq_kv, d_model, c_q, c_kv, d_head, d_rope, n_q)
    out = compile_fn(eq, args)(ctx, *(values[sym] for sym in args[1:]))
    return float(out) if out.ndim == 0 else out


def expert_bytes_value(d_ff_value: int | None = None, weight_bytes: float = 1.0) -> float:
    """eq-deepseek-expert-bytes: one expert (d_ff = 2048) or, with d_ff_value, a dense layer."""
    width = DEEPSEEK_V3["d_ff_expert"] if d_ff_value is None else positive_int("d_ff_value", d_ff_value)
    return _eval(expert_bytes(), d_ff=width, p=positive("weight_bytes", weight_bytes))


def embedding_bytes(weight_bytes: float = 1.0) -> float:
    """Input and output embeddings: eq-arch-embedding-params times the bytes per weight."""
    width = positive("weight_bytes", weight_bytes)
    count = compile_fn(architecture.embedding_params(), (vocab, d_model))
    return width * float(count(DEEPSEEK_V3["vocab"], DEEPSEEK_V3["d_model"]))


def ep_bytes_per_gpu_value(n_gpu_value: int, n_redundant: int = 0, weight_bytes: float = 1.0) -> float:
    """eq-deepseek-ep-bytes-per-gpu for DeepSeek-V3 on n_gpu_value GPUs."""
    gpus = positive_int("n_gpu", n_gpu_value)
    extra = _non_negative_int("n_redundant", n_redundant)
    expr = ep_bytes_per_gpu().rhs.subs(n_extra, extra)
    return _eval(expr, n_gpu=gpus, p=positive("weight_bytes", weight_bytes))


def _non_negative_int(field_name: str, value) -> int:
    number = positive(field_name, value, allow_zero=True)
    if number != int(number):
        raise InputError(f"{field_name} must be a whole number, got {value!r}")
    return int(number)


def routed_experts_per_gpu(n_gpu_value: int, n_redundant: int = 0, n_routed: int = 256) -> int:
    """Routed experts (with redundant copies) per GPU; InputError unless they divide evenly.

    The post requires (n_routed + n_redundant) mod EP size = 0.
    """
    gpus = positive_int("n_gpu", n_gpu_value)
    total = positive_int("n_routed", n_routed) + _non_negative_int("n_redundant", n_redundant)
    if total % gpus:
        raise InputError(f"n_gpu: {total} routed experts do not divide evenly over {gpus} GPUs")
    return total // gpus


def busy_experts_value(batch, n_routed: int = 256, n_active_value: int = 8):
    """eq-deepseek-busy-experts: expected routed experts in use for a batch of tokens."""
    routed = positive_int("n_routed", n_routed)
    active = positive_int("n_active", n_active_value)
    if active > routed:
        raise InputError(f"n_active {active} exceeds n_routed {routed}")
    tokens = np.asarray(batch, dtype=float)
    if np.any(~np.isfinite(tokens)) or np.any(tokens < 0):
        raise InputError(f"batch must be >= 0 and finite, got {batch!r}")
    out = compile_fn(busy_experts(), (b, n_experts, n_active))(tokens, routed, active)
    return float(out) if out.ndim == 0 else out


def a2a_bytes_value(batch, n_gpu_value: int, n_layers_value: int = 61, beta: float = 1.0,
                    dispatch_bytes: float = 1.0, combine_bytes: float = 2.0):
    """eq-deepseek-a2a-bytes for DeepSeek-V3 (n_active = 8, n_shared = 1, d_model = 7168)."""
    tokens = np.asarray(batch, dtype=float)
    if np.any(~np.isfinite(tokens)) or np.any(tokens < 0):
        raise InputError(f"batch must be >= 0 and finite, got {batch!r}")
    args = (b, n_gpu, n_layers, beta_eb, p_dispatch, p_combine, n_active, n_shared, d_model)
    given = (positive_int("n_gpu", n_gpu_value), positive_int("n_layers", n_layers_value),
             positive("beta", beta), positive("dispatch_bytes", dispatch_bytes),
             positive("combine_bytes", combine_bytes), DEEPSEEK_V3["n_active"],
             DEEPSEEK_V3["n_shared"], DEEPSEEK_V3["d_model"])
    if not 0 < given[2] <= 1:
        raise InputError(f"beta must be in (0, 1], got {beta!r}")
    out = compile_fn(a2a_bytes_per_pass(), args)(tokens, *given)
    return float(out) if out.ndim == 0 else out


def comm_seconds_per_byte(n_nodes_value: int, bw_inter_value: float, bw_intra_value: float) -> float:
    """eq-deepseek-comm-time per byte of all-to-all traffic."""
    nodes = positive_int("n_nodes", n_nodes_value)
    args = (a2a_bytes, n_nodes, bw_inter, bw_intra)
    return float(compile_fn(comm_time(), args)(1.0, nodes, positive("bw_inter", bw_inter_value),
                                                positive("bw_intra", bw_intra_value)))


def imbalance_factor(n_gpu_value: int, n_shared_value: int = 1, n_active_value: int = 8) -> sp.Rational:
    """eq-deepseek-imbalance as an exact rational."""
    values = {n_gpu: positive_int("n_gpu", n_gpu_value),
              n_shared: positive_int("n_shared", n_shared_value),
              n_active: positive_int("n_active", n_active_value)}
    return sp.nsimplify(shared_expert_imbalance().rhs.subs(values))


def kv_limited_batch(n_gpu_value: int, kv_bytes_per_gpu: float, kv_bytes_per_token_value: float,
                     context: float) -> float:
    """Sequences whose caches fill the KV memory of a group: eq-kv-max-batch, unrounded.

    The post states the memory left for the cache directly, so the weight term of eq-kv-max-batch
    is zero and M_HBM is the KV memory per GPU.
    """
    unrounded = kv_cache.max_batch().rhs.args[0].subs(n_param, 0)
    args = (n_gpu, hbm_cap, kv_seq)
    seq = positive("kv_bytes_per_token", kv_bytes_per_token_value) * positive("context", context)
    return float(compile_fn(unrounded, args)(positive_int("n_gpu", n_gpu_value),
                                             positive("kv_bytes_per_gpu", kv_bytes_per_gpu), seq))


def parameter_counts() -> dict[str, float]:
    """DeepSeek-V3's parameters from its real layer mix (MLA with rotary parts, 3 dense layers,
    58 MoE layers of 256 routed and 1 shared expert plus the router, untied embeddings)."""
    a = DEEPSEEK_V3
    moe_layers = a["n_layers"] - a["n_dense"]
    mla = a["n_layers"] * mla_bytes_per_layer(1.0)
    dense = a["n_dense"] * expert_bytes_value(a["d_ff_dense"])
    expert = expert_bytes_value()
    experts = moe_layers * (a["n_routed"] + a["n_shared"]) * expert
    router = moe_layers * a["d_model"] * a["n_routed"]
    embed = embedding_bytes(1.0)
    active_experts = moe_layers * (a["n_active"] + a["n_shared"]) * expert
    return {"mla": mla, "dense": dense, "experts": experts, "router": router, "embeddings": embed,
            "total": mla + dense + experts + router + embed,
            "active": mla + dense + active_experts + router + embed}


def daily_tokens(tok_s_per_gpu: float, n_gpu_value: int) -> float:
    """eq-deepseek-tokens-per-day."""
    return float(compile_fn(tokens_per_day(), (tok_rate_gpu, n_gpu))(
        positive("tok_s_per_gpu", tok_s_per_gpu), positive_int("n_gpu", n_gpu_value)))


def cost_per_mtok(tok_s_per_gpu: float, usd_per_gpu_hour: float) -> float:
    """eq-deepseek-cost-per-mtok."""
    return float(compile_fn(cost_per_million_tokens(), (tok_rate_gpu, price))(
        positive("tok_s_per_gpu", tok_s_per_gpu), positive("usd_per_gpu_hour", usd_per_gpu_hour)))


def request_rate_value(tok_s_per_gpu: float, batch_per_gpu: float) -> float:
    """eq-deepseek-request-rate."""
    return float(compile_fn(request_rate(), (tok_rate_gpu, b_gpu))(
        positive("tok_s_per_gpu", tok_s_per_gpu), positive("batch_per_gpu", batch_per_gpu)))


def revenue(input_btok, cached_share, usd_cached, usd_miss, output_btok, usd_output) -> dict[str, Fraction]:
    """Daily revenue in dollars, exact: cached input + cache-miss input + output.

    Token counts in billions per day, prices in dollars per million tokens; every argument is
    converted exactly (pass decimals as strings), so the result is exact to the cent.
    """
    def exact(field_name, value):
        try:
            number = Fraction(str(value))
        except (ValueError, ZeroDivisionError):
            raise InputError(f"{field_name} must be a number, got {value!r}") from None
        positive(field_name, float(number), allow_zero=True)
        return number

    tin = exact("input_btok", input_btok)
    hit = exact("cached_share", cached_share)
    if hit > 1:
        raise InputError(f"cached_share must be at most 1, got {cached_share!r}")
    million_per_billion = 1000
    cached = tin * million_per_billion * hit * exact("usd_cached", usd_cached)
    miss = tin * million_per_billion * (1 - hit) * exact("usd_miss", usd_miss)
    out = exact("output_btok", output_btok) * million_per_billion * exact("usd_output", usd_output)
    return {"cached_input": cached, "miss_input": miss, "output": out, "total": cached + miss + out}


# --- the decode model -----------------------------------------------------------------------------

@dataclass(frozen=True)
class DecodeSetup:
    """An expert-parallel deployment of DeepSeek-V3 for the post's decode model.

    Attention, the dense layers and the embeddings are data parallel (each GPU holds them all and
    serves batch/n_gpu sequences); routed experts (with redundant copies) are spread over the GPUs
    and each GPU keeps a copy of the shared expert, as in DeepSeek's and SGLang's deployments.
    Raises InputError on construction if a field is invalid.
    """

    name: str
    n_gpu: int
    n_nodes: int
    context: float
    gpu: GPU
    n_redundant: int = 0
    beta: float = 1.0
    bw_intra: float = POST["nvlink_gb_s"] * 1e9
    bw_inter: float = POST["infiniband_gb_s"] * 1e9
    n_moe_layers: int = DEEPSEEK_V3["n_layers"] - DEEPSEEK_V3["n_dense"]

    def __post_init__(self):
        where = f"setup {self.name!r}"
        positive_int(f"{where}: n_gpu", self.n_gpu)
        positive_int(f"{where}: n_nodes", self.n_nodes)
        if self.n_gpu % self.n_nodes:
            raise InputError(f"{where}: n_nodes {self.n_nodes} does not divide n_gpu {self.n_gpu}")
        positive(f"{where}: context", self.context)
        _non_negative_int(f"{where}: n_redundant", self.n_redundant)
        if not 0 < positive(f"{where}: beta", self.beta) <= 1:
            raise InputError(f"{where}: beta must be in (0, 1], got {self.beta!r}")
        positive(f"{where}: bw_intra", self.bw_intra)
        positive(f"{where}: bw_inter", self.bw_inter)
        positive_int(f"{where}: n_moe_layers", self.n_moe_layers)


def rates(setup: DecodeSetup) -> dict[str, float]:
    """Effective bandwidths and FLOP/s of the decode model: peaks times the post's inefficiencies.

    Memory at 1/2 of peak; MLA arithmetic in BF16 at FlashMLA's MFU with a further 10% penalty;
    expert GEMMs in FP8 at DeepGEMM's fraction of peak with the same penalty; links at DeepEP's
    fraction of their bandwidth.
    """
    ineff = POST["inefficiency"]
    penalty = 1 + ineff["kernel_penalty"]
    return {
        "hbm": setup.gpu.bandwidth() / ineff["memory_factor"],
        "mla_flops": setup.gpu.flops(16) * ineff["flashmla_mfu"] / penalty,
        "ep_flops": setup.gpu.flops(8) * ineff["deepgemm_tflops"] / ineff["fp8_peak_tflops"] / penalty,
        "link_factor": ineff["link_gb_s"] / ineff["deepep_gb_s"],
    }


@dataclass(frozen=True)
class DecodeTimes:
    """Times (s) of one decode step for the batches given, per component and in total."""

    batch: np.ndarray
    dp_memory: np.ndarray
    dp_compute: np.ndarray
    ep_memory: np.ndarray
    ep_compute: np.ndarray
    comm: np.ndarray
    serial: np.ndarray
    tbo: np.ndarray
    n_gpu: int

    @property
    def step(self) -> np.ndarray:
        """The step time the post's model uses: with two-batch overlap."""
        return self.tbo

    @property
    def tok_s_per_gpu(self) -> np.ndarray:
        return self.batch / self.tbo / self.n_gpu

    @property
    def tok_s_per_request(self) -> np.ndarray:
        return 1 / self.tbo


def _components(batch: np.ndarray, setup: DecodeSetup) -> dict[str, np.ndarray]:
    a = DEEPSEEK_V3
    r = rates(setup)
    per_gpu = batch / setup.n_gpu
    layers, moe_layers = a["n_layers"], setup.n_moe_layers
    d = a["d_model"]
    dp_weights = (layers * mla_bytes_per_layer() + a["n_dense"] * expert_bytes_value(a["d_ff_dense"])
                  + embedding_bytes())
    kv = kv_bytes_per_token(layers, POST["kv_element_bytes"]) * setup.context
    act_mla = POST["kv_element_bytes"] * d * layers  # written once per layer (the post's 2·d·L)
    dp_memory = (dp_weights + per_gpu * (kv + act_mla)) / r["hbm"]
    dense_flops = 2 * 3 * d * a["d_ff_dense"] * a["n_dense"]
    dp_compute = per_gpu * (layers * mla_decode_flops(setup.context, absorbed=True) / r["mla_flops"]
                            + dense_flops / r["ep_flops"])
    used = a["n_active"] + a["n_shared"]
    slots = math.ceil((a["n_routed"] + setup.n_redundant) / setup.n_gpu)
    read = busy_experts_value(batch, a["n_routed"], a["n_active"]) / a["n_routed"]
    expert = expert_bytes_value()
    router = POST["weight_bytes"] * d * a["n_routed"]
    act_ep = (POST["comm_dispatch_bytes"] + POST["comm_combine_bytes"]) * d * moe_layers
    ep_memory = (moe_layers * (expert * (a["n_shared"] + slots * read) + router)
                 + act_ep * batch * used / (setup.n_gpu * setup.beta)) / r["hbm"]
    ep_flops = moe_layers * (2 * 3 * d * a["d_ff_expert"] * batch * used / (setup.n_gpu * setup.beta)
                             + 2 * d * a["n_routed"] * per_gpu)
    ep_compute = ep_flops / r["ep_flops"]
    traffic = a2a_bytes_value(batch, setup.n_gpu, moe_layers, setup.beta,
                              POST["comm_dispatch_bytes"], POST["comm_combine_bytes"])
    comm = traffic * comm_seconds_per_byte(setup.n_nodes, setup.bw_inter, setup.bw_intra) \
        * r["link_factor"]
    return {"dp_memory": dp_memory, "dp_compute": dp_compute, "ep_memory": ep_memory,
            "ep_compute": ep_compute, "comm": comm}


def _block_time(parts: dict[str, np.ndarray]) -> np.ndarray:
    return (np.maximum(parts["dp_memory"], parts["dp_compute"])
            + np.maximum(parts["ep_memory"], parts["ep_compute"]))


def decode_step(batch, setup: DecodeSetup) -> DecodeTimes:
    """The post's decode model for a batch of the whole group (scalar or array).

    Components are for the full batch; ``serial`` adds them, ``tbo`` runs two half batches,
    2·max(blocks(b/2), comm(b/2)). Routed experts are read with the probability that some token of
    the (half) batch uses them, eq-deepseek-busy-experts.
    """
    tokens = np.atleast_1d(np.asarray(batch, dtype=float))
    if np.any(~np.isfinite(tokens)) or np.any(tokens <= 0):
        raise InputError(f"batch must be positive and finite, got {batch!r}")
    full = _components(tokens, setup)
    half = _components(tokens / 2, setup)
    serial = _block_time(full) + full["comm"]
    tbo = 2 * np.maximum(_block_time(half), half["comm"])
    return DecodeTimes(tokens, full["dp_memory"], full["dp_compute"], full["ep_memory"],
                       full["ep_compute"], full["comm"], serial, tbo, setup.n_gpu)


def affine_parameters(setup: DecodeSetup) -> dict[str, float]:
    """T_0, tau and kappa of eq-deepseek-step-serial for a memory-bound step with every expert read.

    T_0: the weight bytes of one GPU (data-parallel block, its shared expert, all of its routed
    expert slots and the router); tau: the cache and activation bytes per sequence of the group,
    per GPU; kappa: the all-to-all time per sequence. All times use the rates of :func:`rates`.
    """
    a = DEEPSEEK_V3
    hbm = rates(setup)["hbm"]
    zero = _components(np.array([0.0]), setup)  # no sequence: weights only, no routed expert read
    slots = math.ceil((a["n_routed"] + setup.n_redundant) / setup.n_gpu)
    routed = setup.n_moe_layers * slots * expert_bytes_value()
    t_fixed_value = float(zero["dp_memory"][0] + zero["ep_memory"][0]) + routed / hbm
    one = _components(np.array([1.0]), setup)
    saturated = 1 - busy_experts_value(1.0) / a["n_routed"]  # routed reads at b = 1, to remove
    per_seq = float(one["dp_memory"][0] + one["ep_memory"][0]) + routed * saturated / hbm
    return {"t_fixed": t_fixed_value, "tau_seq": per_seq - t_fixed_value,
            "kappa_seq": float(one["comm"][0])}
