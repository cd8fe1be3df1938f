"""Dense-model economics from first principles (Mazurek and Gabriel 2025, Tensor Economics).

"LLM Inference Economics from First Principles" counts Llama 3.3 70B by hand (parameters, prefill
and decode FLOPs, KV-cache bytes), turns the counts into a time model of a tensor-parallel
instance (prefill compute bound, decode the larger of compute and memory, plus the all-reduce
transfers), compares that model with a vLLM sweep on four H100s, and prices the wall time of a
batch as input and output tokens at a fixed price ratio.

Registry symbols for the post's names: h = d_model, n_h = n_q, L = n_layers, V = vocab,
intermediate_size = d_ff, S = seq_kv (the context a token attends to; in prefill the prompt
attends to itself), T = seq_q (query tokens per sequence in one pass), N_in = t_prompt,
N_out = t_output, B (batch) = b, gamma = gamma_in, beta = beta_out. The NVLink bandwidth that the
post charges its all-reduces against is the registry's collective bandwidth ici_bw.

The post's time model is the "simple script" of its repository
(github.com/tugot17/tokenomics-from-first-principles, throughput_simulations/tokenomics_model.py):
its FLOP counts are the post's, except that its prefill charges the LM head for every prompt
token. Everything here is derived by SymPy from those counts; the numeric helpers at the end
evaluate the derivations and validate their inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_star_kv,
    beta_floor,
    beta_out,
    d_ff,
    d_head,
    d_model,
    f_decode,
    f_prefill,
    flops,
    g,
    gamma_in,
    hbm_bw,
    ici_bw,
    kv_bytes,
    n_experts,
    n_ff_in,
    n_ff_out,
    n_gpu,
    n_kv,
    n_layers,
    n_norm,
    n_param,
    n_q,
    n_reduce,
    p,
    p_act,
    price,
    price_be,
    seq_attn,
    seq_crit,
    seq_kv,
    seq_q,
    t_batch,
    t_decode,
    t_output,
    t_prefill,
    t_prompt,
    t_token,
    t_tp,
    tok_rate,
    tok_rate_be,
    tok_rate_inf,
    vocab,
)
from ..core.units import SECONDS_PER_HOUR
from ..core.validation import InputError, positive, positive_int
from . import architecture, kv_cache

_POST = "Mazurek and Gabriel (2025)"
_DERIVED = f"this book, from {_POST}"

# --- the post's inputs and stated results ---------------------------------------------------
# Typed from the post (text) or, where marked [draft], from the Notion draft in the authors'
# repository, which carries in plain text what the post shows only as images (Fig. 1 config,
# Fig. 18 benchmark JSON, Table 1). [repo] marks the simple script's own numbers, which the
# digest of the post re-ran (Fig. 16 values are read from the repository's image and reproduce
# exactly). Quoted so that the book can compare against them.

#: Everything Mazurek and Gabriel (2025) state that the book reproduces.
MAZUREK2025: Mapping[str, object] = {
    # Fig. 1, the Hugging Face config of Llama 3.3 70B [draft]
    "config": {"hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
               "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
               "vocab_size": 128256, "max_position_embeddings": 131072, "dtype_bytes": 2},
    # "Model parameters and hardware requirements"
    "total_params": 70_553_706_496,
    "weight_bytes": 141_107_412_992,
    "weights_gb_stated": 141,
    "hbm_gb": 80,
    # "Compute and memory bound": the spec-sheet numbers of the text
    "h100_flops": 9.89e14,
    "h100_bandwidth": 3.35e12,
    "a100_flops": 3.12e14,
    "a100_bandwidth": 2.03e12,
    "a100_bandwidth_fig3": 2039e9,
    # "Total FLOPs in a Llama Model", example at S = 2048
    "prefill_tokens": 2048,
    "prefill_flops_stated": 291.49e12,
    "per_layer_flops_stated": 3.6436e12,
    "lm_head_flops_stated": 2.1013e9,
    "prefill_time_stated_s": 0.29,
    "load_time_stated_s": 0.04,
    "prefill_over_load_stated": 7,
    # "The decode phase"
    "decode_tflops_stated": 0.14,
    "decode_compute_stated_s": 0.00014,
    "kv_gb_rounded_stated": 0.6,
    "weights_plus_kv_gb_stated": 142,
    "kv_mb_stated": 671,
    "kv_mb_draft": 640,
    "kv_long_context": 131072,
    "kv_long_gb_stated": 40,
    # "Multi GPU inference"
    "two_gpu_fraction_stated": 0.88,
    "two_gpu_free_gb_stated": 19,
    "usable_memory_fraction": 0.95,
    "node_gpus": 8,
    "node_gb_stated": 640,
    "node_batch_stated": 8,
    # "Tensor parallelism": ideal NVLink all-reduce transfer
    "tp": {"bytes": 2, "syncs_per_layer": 2, "n_gpu": 4, "nvlink_bandwidth": 450e9,
           "stated_us": 4, "latency_us": (3, 5), "total_stated_us": (8, 9)},
    # "Throughput: theory vs practice": the simple script on 4 x H100, 100% utilization
    # [repo; Fig. 16 values read from the repository's image, reproduced by re-running it]
    "throughput_model": {
        "n_gpu": 4, "prompt": 2035, "output": 300,
        "repo_utilization": {"compute": 0.6, "memory": 0.7},
        "batches": (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
        "total_tok_s": (91.9, 178.2, 335.7, 601.4, 995.5, 1480.5, 1957.4, 2333.0, 2580.7,
                        2725.4),
        "per_request_tok_s": (91.9, 89.1, 83.9, 75.2, 62.2, 46.3, 30.6, 18.2, 10.1, 5.3),
    },
    "efficiency_text": (0.6, 0.4),  # "from around ~60% ... to around 40%"
    "gpu_utilization_text": (0.5, 0.7),  # "GPUs typically achieve only 50-70%"
    # Fig. 18 [draft JSON]: vLLM, TP = 4 on 4 x H100, 2035 in / 300 out, elapsed seconds of a batch
    "fig18_elapsed_s": {1: 5.565227147541009, 2: 5.83159231254831, 4: 6.580546063836664,
                        8: 7.507091326988302, 16: 8.966848284006119, 32: 12.410703025874682,
                        64: 19.927982787950896, 128: 36.80827986204531, 256: 66.85448617395014,
                        512: 129.60231457301416},
    "fig18_tokens_per_s": {1: 53.906158417337465, 2: 102.88852564309295, 4: 182.50572803685048,
                           8: 319.7977776715139, 16: 535.3051675015347, 32: 773.5258824927948,
                           64: 964.1459849127925, 128: 1036.7109688230596,
                           256: 1146.853722836619, 512: 1182.0893502232486},
    # "From tokens to dollars": the pricing example
    "pricing": {"gpu_price_per_hour": 2.5, "n_gpu": 4, "gamma": 0.3, "batch": 16,
                "prompt": 2035, "output": 300, "runtime_s": 8.96, "cost_per_s_stated": 0.0028,
                "output_per_m_stated": 1.72, "input_per_m_stated": 0.51},
    # Table 1 [draft; the post shows it as a Datawrapper iframe]
    "table1": {"batch": (1, 2, 4, 8, 16, 32, 64),
               "input_per_m": (5.09, 2.67, 1.51, 0.86, 0.51, 0.35, 0.28),
               "output_per_m": (16.98, 8.90, 5.02, 2.86, 1.71, 1.18, 0.95),
               "tokens_per_s": (419.57, 800.81, 1419.34, 2488.31, 4166.46, 6020.61, 7453.62)},
}

#: Llama's shape ratios, as the post substitutes them: one query head per d_head of the width,
#: a KV head for every eight query heads, and a feed-forward width of 3.5 d_model.
LLAMA_RATIOS: Mapping[sp.Symbol, sp.Expr] = {
    d_head: d_model / n_q, n_kv: n_q / 8, d_ff: sp.Rational(7, 2) * d_model}


def llama_form(expr: sp.Expr) -> sp.Expr:
    """``expr`` with Llama's ratios substituted (LLAMA_RATIOS) and expanded."""
    return sp.expand(expr.subs(LLAMA_RATIOS))


# --- parameters -----------------------------------------------------------------------------


def block_params() -> dict[str, sp.Expr]:
    """Parameters of one transformer block, matrix by matrix, as the post lists them."""
    attention = {name.lower(): size for name, size in kv_cache.attention_matrix_params().items()}
    return {
        **attention,
        "w_1": d_model * d_ff,
        "w_2": d_model * d_ff,
        "w_3": d_ff * d_model,
        "rmsnorm": 2 * d_model,
    }


@derivation("eq-dense-params", f"{_POST}, 'Model parameters and hardware requirements'")
def total_params() -> sp.Eq:
    """All parameters: embedding, L blocks, final RMSNorm and LM head (eq-dense-params).

    Input embedding V·h, per block the attention and SwiGLU matrices plus two RMSNorm vectors,
    the final RMSNorm h and an untied LM head h·V. With Llama's ratios the block is 12.75h² + 2h.
    """
    block = sum(block_params().values())
    return sp.Eq(n_param, vocab * d_model + n_layers * block + d_model + d_model * vocab)


@derivation("eq-dense-norm-params", f"{_DERIVED} and Erdil (2025) reference code")
def norm_params() -> sp.Eq:
    """What the post counts and eq-arch-* do not: the RMSNorm weights (eq-dense-norm-params).

    SymPy subtracts eq-arch-attention-params + eq-arch-ff-params + eq-arch-embedding-params
    (dense, SwiGLU, g = n_q/n_kv) from eq-dense-params; (2·L + 1)·d_model is left.
    """
    shape = {n_experts: 1, n_ff_in: 2, n_ff_out: 1, g: n_q / n_kv}
    book = sum(eq().rhs for eq in (architecture.attention_params, architecture.feedforward_params,
                                   architecture.embedding_params)).subs(shape)
    return sp.Eq(n_norm, sp.factor(sp.simplify(total_params().rhs - book)))


# --- FLOPs ----------------------------------------------------------------------------------


def layer_flops(tokens: sp.Expr = seq_q, context: sp.Expr = seq_kv) -> dict[str, sp.Expr]:
    """FLOPs of one layer for ``tokens`` query tokens attending to ``context`` tokens, by part.

    The post's counts: RMSNorm 4 per element, RoPE 6 per query element, naive attention (QK^T
    and AV at 2 FLOPs per product, softmax 5 per score), matmuls at 2mno. The SwiGLU's SiLU and
    elementwise product (6 per intermediate element) and the RMSNorm's per-token 2 are dropped,
    as in the post's per-block total and in its script.
    """
    q_width, kv_width = n_q * d_head, n_kv * d_head
    return {
        "rmsnorm": 4 * tokens * d_model,
        "q_proj": 2 * tokens * d_model * q_width,
        "kv_proj": 2 * 2 * tokens * d_model * kv_width,
        "rope": 6 * tokens * q_width,
        "scores": 2 * tokens * context * q_width,
        "softmax": 5 * tokens * context * n_q,
        "attn_v": 2 * tokens * context * q_width,
        "o_proj": 2 * tokens * q_width * d_model,
        "mlp": 3 * 2 * tokens * d_model * d_ff,
    }


def mlp_elementwise_flops(tokens: sp.Expr = seq_q) -> sp.Expr:
    """The MLP's SiLU (5 per element) and gate product (1 per element), dropped from the totals."""
    return (5 + 1) * tokens * d_ff


def lm_head_flops(positions: sp.Expr = 1) -> sp.Expr:
    """LM head for ``positions`` tokens: 2·positions·h·V."""
    return 2 * positions * d_model * vocab


def attention_part(flops_by_part: Mapping[str, sp.Expr]) -> sp.Expr:
    """The attention half of a layer: every part but the MLP."""
    return sum(v for k, v in flops_by_part.items() if k != "mlp")


@derivation("eq-dense-prefill-flops", f"{_POST}, 'Total FLOPs in a Llama Model'")
def prefill_flops() -> sp.Eq:
    """Prefill FLOPs of a prompt of S tokens, LM head on the last token only (eq-dense-prefill-flops)."""
    layer = sum(layer_flops(seq_kv, seq_kv).values())
    return sp.Eq(f_prefill, n_layers * sp.expand(layer) + lm_head_flops(1))


@derivation("eq-dense-prefill-flops-script", f"{_POST}, repository script tokenomics_model.py")
def prefill_flops_script() -> sp.Eq:
    """Prefill FLOPs as the post's script counts them: LM head on all S tokens.

    (eq-dense-prefill-flops-script.) The time model and its Fig. 16 use this count.
    """
    layer = sum(layer_flops(seq_kv, seq_kv).values())
    return sp.Eq(f_prefill, n_layers * sp.expand(layer) + lm_head_flops(seq_kv))


@derivation("eq-dense-decode-flops", f"{_POST}, 'The decode phase' and repository script")
def decode_flops() -> sp.Eq:
    """FLOPs of one decode step of one sequence at context S (eq-dense-decode-flops).

    The layer count with one query token against S cached keys and values, plus the LM head on
    that token.
    """
    layer = sum(layer_flops(1, seq_kv).values())
    return sp.Eq(f_decode, n_layers * sp.expand(layer) + lm_head_flops(1))


@derivation("eq-dense-attention-crossover", _DERIVED)
def attention_crossover() -> sp.Eq:
    """Prompt length at which a layer's attention FLOPs equal its MLP FLOPs.

    (eq-dense-attention-crossover.) Both sides of the prefill count at T = S are divided by S,
    which leaves a linear equation; SymPy solves it.
    """
    parts = layer_flops(seq_kv, seq_kv)
    (solution,) = sp.solve(sp.Eq(attention_part(parts), parts["mlp"]), seq_kv)
    return sp.Eq(seq_attn, sp.factor(solution))


def quadratic_crossover() -> sp.Expr:
    """Prompt length at which the S² terms of a layer equal all its terms linear in S.

    Not registered: a second way of saying where prefill turns attention-dominated.
    """
    layer = sp.Poly(sp.expand(sum(layer_flops(seq_kv, seq_kv).values())), seq_kv)
    quad, lin = layer.coeff_monomial(seq_kv**2), layer.coeff_monomial(seq_kv)
    (solution,) = sp.solve(sp.Eq(quad * seq_kv**2, lin * seq_kv), seq_kv)
    return sp.factor(solution)


# --- time model -----------------------------------------------------------------------------


@derivation("eq-dense-tp-overhead", f"{_POST}, 'Tensor parallelism'")
def tp_overhead() -> sp.Eq:
    """Ideal all-reduce transfer time of one token through all layers (eq-dense-tp-overhead).

    n_reduce all-reduces per layer of a d_model vector of p_act-byte elements; each GPU of the
    ring sends (N_GPU − 1)/N_GPU of it over a link of bandwidth W.
    """
    fraction = (n_gpu - 1) / n_gpu
    return sp.Eq(t_tp, n_reduce * p_act * d_model * n_layers * fraction / ici_bw)


def comm_time(tokens: sp.Expr) -> sp.Expr:
    """The script's all-reduce time for ``tokens`` tokens: n_reduce·L·tokens·h·p_act/W.

    Unlike eq-dense-tp-overhead, the script charges the whole vector, not (N−1)/N of it.
    """
    return n_reduce * n_layers * tokens * d_model * p_act / ici_bw


@derivation("eq-dense-prefill-time", f"{_POST}, 'Throughput: theory vs practice' and repository script")
def prefill_time() -> sp.Eq:
    """Prefill of b prompts of T_in tokens: compute bound, plus the all-reduces (eq-dense-prefill-time).

    F_prefill is eq-dense-prefill-flops-script at S = T_in.
    """
    return sp.Eq(t_prefill, b * f_prefill / (n_gpu * flops) + comm_time(b * t_prompt))


def step_compute_time() -> sp.Expr:
    """Arithmetic of one decode step of b sequences: b·F_decode/(N_GPU·C)."""
    return b * f_decode / (n_gpu * flops)


def step_memory_time() -> sp.Expr:
    """Memory reads of one decode step: weights plus b KV caches of S tokens, (p·N + b·M_KV·S)/(N_GPU·B)."""
    return (p * n_param + b * kv_bytes * seq_kv) / (n_gpu * hbm_bw)


@derivation("eq-dense-step-time", f"{_POST}, 'Throughput: theory vs practice' and repository script")
def step_time() -> sp.Eq:
    """One decode step at context S: the larger of arithmetic and memory, plus all-reduces.

    (eq-dense-step-time.) F_decode is eq-dense-decode-flops.
    """
    return sp.Eq(t_token, sp.Max(step_compute_time(), step_memory_time()) + comm_time(b))


@derivation("eq-dense-decode-time", _DERIVED)
def decode_time() -> sp.Eq:
    """All T_out decode steps, contexts T_in … T_in + T_out − 1, every step memory bound.

    (eq-dense-decode-time.) SymPy sums the memory branch of eq-dense-step-time in closed form,
    part by part: the weights, the KV caches (an arithmetic series in the context) and the
    all-reduces.
    """
    i = sp.Symbol("i", integer=True, nonnegative=True)  # summation index, bound
    weights = p * n_param / (n_gpu * hbm_bw)
    caches = b * kv_bytes * seq_kv / (n_gpu * hbm_bw)
    if sp.simplify(weights + caches - step_memory_time()) != 0:
        raise ArithmeticError("the memory time does not split into weights and caches")
    parts = (weights, caches, comm_time(b))
    sums = [sp.factor(sp.summation(part.subs(seq_kv, t_prompt + i), (i, 0, t_output - 1)))
            for part in parts]
    return sp.Eq(t_decode, sp.Add(*sums))


@derivation("eq-dense-throughput", _DERIVED)
def throughput() -> sp.Eq:
    """Output tokens per second of a batch: b·T_out/(t_prefill + t_decode) (eq-dense-throughput).

    Prefill by eq-dense-prefill-time, decode by eq-dense-decode-time (memory bound).
    """
    total = prefill_time().rhs + decode_time().rhs
    return sp.Eq(tok_rate, b * t_output / total)


def batch_time_terms() -> tuple[sp.Expr, ...]:
    """The additive terms of t_prefill + t_decode (eq-dense-prefill-time, eq-dense-decode-time)."""
    return sp.Add.make_args(prefill_time().rhs) + sp.Add.make_args(decode_time().rhs)


@derivation("eq-dense-throughput-limit", _DERIVED)
def throughput_limit() -> sp.Eq:
    """Throughput of eq-dense-throughput as b → ∞ (eq-dense-throughput-limit).

    Every term of the batch time grows like b except the weight reads, so the limit is finite:
    prefill, KV reads and all-reduces per sequence set it. SymPy takes the limit of the batch
    time per sequence term by term and checks the result against the limit of the whole.
    """
    per_sequence = sp.Add(*(sp.factor(sp.limit(term / b, b, sp.oo)) for term in batch_time_terms()))
    limit = t_output / per_sequence
    whole = sp.limit(throughput().rhs, b, sp.oo)
    if sp.simplify(whole - limit) != 0:
        raise ArithmeticError("term-by-term limit differs from the limit of the throughput")
    return sp.Eq(tok_rate_inf, limit)


@derivation("eq-dense-critical-batch", _DERIVED)
def critical_batch() -> sp.Eq:
    """Batch at which a decode step at context S turns compute bound (eq-dense-critical-batch).

    SymPy solves arithmetic time = memory time of eq-dense-step-time for b; unlike
    eq-intensity-crossover-batch, the memory side includes the KV reads and the arithmetic side
    the attention FLOPs.
    """
    (solution,) = sp.solve(sp.Eq(step_compute_time(), step_memory_time()), b)
    return sp.Eq(b_star_kv, sp.factor(solution))


@derivation("eq-dense-critical-context", _DERIVED)
def critical_context() -> sp.Eq:
    """Context beyond which no batch makes decode compute bound (eq-dense-critical-context).

    The denominator of eq-dense-critical-batch, with F_decode from eq-dense-decode-flops, is
    linear in S; SymPy solves for its zero. It falls with S, so that beyond the zero the
    critical batch is negative (no batch is compute bound), exactly when
    :func:`critical_context_condition` holds.
    """
    (solution,) = sp.solve(critical_batch_denominator(), seq_kv)
    flops_at_zero = sp.factor(decode_flops().rhs.subs(seq_kv, 0))
    flops_per_token = sp.factor(sp.diff(decode_flops().rhs, seq_kv))
    tidy = hbm_bw * flops_at_zero / (flops * kv_bytes - hbm_bw * flops_per_token)
    if sp.simplify(tidy - solution) != 0:
        raise ArithmeticError("S_crit is not F_decode(0)·B/(C·M_KV − B·dF_decode/dS)")
    return sp.Eq(seq_crit, tidy)


def critical_batch_denominator() -> sp.Expr:
    """Denominator of eq-dense-critical-batch with eq-dense-decode-flops substituted, expanded."""
    denominator = sp.denom(critical_batch().rhs)
    return sp.expand(denominator.subs(f_decode, decode_flops().rhs))


def critical_context_condition() -> sp.Expr:
    """Slope of that denominator in S; S_crit exists (and the denominator falls) when it is < 0.

    Equivalently, the FLOPs that one more cached token adds to a step, per KV byte it adds, lie
    below the ridge C/B.
    """
    return sp.diff(critical_batch_denominator(), seq_kv)


# --- pricing --------------------------------------------------------------------------------


def instance_cost() -> sp.Expr:
    """Dollars of GPU time of one batch: N_GPU·P_GPU·t_batch/3600."""
    return n_gpu * price * t_batch / SECONDS_PER_HOUR


@derivation("eq-dense-output-price", f"{_POST}, 'From tokens to dollars'")
def output_price() -> sp.Eq:
    """Price of an output token that recovers a batch's GPU time (eq-dense-output-price).

    Input tokens cost gamma times an output token; the batch's b·T_in input and b·T_out output
    tokens pay for N_GPU GPUs for t_batch seconds. SymPy solves for beta.
    """
    beta = sp.Symbol("beta", positive=True)  # the unknown, replaced by beta_out below
    revenue = gamma_in * beta * b * t_prompt + beta * b * t_output
    (solution,) = sp.solve(sp.Eq(revenue, instance_cost()), beta)
    return sp.Eq(beta_out, solution)


def price_from_throughput() -> sp.Expr:
    """eq-dense-output-price with t_batch = b·T_out/R_tok: the price is inverse to throughput."""
    return sp.simplify(output_price().rhs.subs(t_batch, b * t_output / tok_rate))


@derivation("eq-dense-price-floor", _DERIVED)
def price_floor() -> sp.Eq:
    """The output price of eq-dense-output-price as b → ∞, batch time from the time model.

    (eq-dense-price-floor.) With t_batch = b·T_out/R_tok the price no longer depends on b except
    through R_tok, which tends to R_tok^∞ (eq-dense-throughput-limit). SymPy checks the compact
    form against the limit of the full expression.
    """
    compact = price_from_throughput().subs(tok_rate, tok_rate_inf)
    full = price_from_throughput().subs(tok_rate, throughput().rhs)
    if sp.simplify(sp.limit(full, b, sp.oo) - compact.subs(tok_rate_inf, throughput_limit().rhs)) != 0:
        raise ArithmeticError("price floor does not match the limit of the price")
    return sp.Eq(beta_floor, compact)


# --- numbers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hardware:
    """The instance of the post's time model: N_GPU GPUs, tensor parallel."""

    n_gpu: int
    flops: float  # FLOP/s of one GPU
    bandwidth: float  # HBM bytes/s of one GPU
    link_bandwidth: float  # bytes/s an all-reduce is charged against

    def __post_init__(self):
        positive_int("n_gpu", self.n_gpu)
        for name in ("flops", "bandwidth", "link_bandwidth"):
            positive(name, getattr(self, name))


def post_hardware(n_gpu: int | None = None, utilization: tuple[float, float] = (1.0, 1.0)) -> Hardware:
    """H100s with the post's spec-sheet numbers (989 TFLOP/s, 3.35 TB/s, NVLink 450 GB/s).

    ``utilization`` = (compute, memory) fractions of peak, (1, 1) for the post's Fig. 16.
    """
    u_c, u_m = (positive("utilization", u) for u in utilization)
    if u_c > 1 or u_m > 1:
        raise InputError(f"utilization must be at most 1, got {utilization!r}")
    tp = MAZUREK2025["tp"]
    count = tp["n_gpu"] if n_gpu is None else positive_int("n_gpu", n_gpu)
    return Hardware(count, MAZUREK2025["h100_flops"] * u_c, MAZUREK2025["h100_bandwidth"] * u_m,
                    tp["nvlink_bandwidth"])


def shape_values(model) -> dict[sp.Symbol, float]:
    """Values of the shape symbols of a preset, n_kv = n_q/g included."""
    values = model.symbol_values()
    values[n_kv] = model.n_q_heads // model.group_size
    return values


#: Explicit argument tuples of the compiled derivations (never expr.free_symbols).
_SHAPE_ARGS = (d_model, d_ff, d_head, n_q, n_kv, n_layers, vocab)
_FLOP_ARGS = _SHAPE_ARGS + (seq_kv,)
_PREFILL_TIME_ARGS = (b, f_prefill, n_gpu, flops, n_reduce, n_layers, t_prompt, d_model, p_act,
                      ici_bw)
_STEP_ARGS = (b, f_decode, n_gpu, flops, p, n_param, kv_bytes, seq_kv, hbm_bw, n_reduce, n_layers,
              d_model, p_act, ici_bw)


def _eval(expr: sp.Expr, args: tuple[sp.Symbol, ...], values: Mapping[sp.Symbol, object]):
    """``expr`` compiled with the explicit ``args`` and evaluated at ``values[arg]``."""
    return compile_fn(expr, args)(*(values[a] for a in args))


def post_param_count(model) -> int:
    """Parameters of a dense preset counted as the post does, norms included (eq-dense-params)."""
    if model.n_experts != 1 or model.is_mla:
        raise InputError(f"model {model.name!r}: the post's count is for dense GQA models")
    return int(round(float(_eval(total_params().rhs, _SHAPE_ARGS, shape_values(model)))))


def prefill_flops_of(model, tokens, *, lm_head_all_tokens: bool = False):
    """Prefill FLOPs of one prompt of ``tokens`` tokens (eq-dense-prefill-flops[-script])."""
    tokens = _tokens("tokens", tokens)
    eq = prefill_flops_script() if lm_head_all_tokens else prefill_flops()
    return _eval(eq.rhs, _FLOP_ARGS, {**shape_values(model), seq_kv: tokens})


def decode_flops_of(model, context):
    """FLOPs of one decode step of one sequence at ``context`` tokens (eq-dense-decode-flops)."""
    return _eval(decode_flops().rhs, _FLOP_ARGS,
                 {**shape_values(model), seq_kv: _tokens("context", context)})


def _tokens(field: str, value):
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return positive(field, float(array))
    if not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise InputError(f"{field} must be finite and > 0")
    return array


@dataclass(frozen=True)
class ModelRun:
    """The post's simple model for one batch size."""

    batch: int
    prompt: int
    output: int
    prefill_s: float
    decode_s: float
    compute_bound_steps: int

    @property
    def total_s(self) -> float:
        return self.prefill_s + self.decode_s

    @property
    def tokens_per_s(self) -> float:
        """Total output tokens per second of the instance (the post's "total throughput")."""
        return self.batch * self.output / self.total_s

    @property
    def per_request_tokens_per_s(self) -> float:
        return self.tokens_per_s / self.batch


def simple_model(model, batch, *, prompt: int, output: int, hardware: Hardware,
                 n_reduce_per_layer: int = 2) -> ModelRun:
    """The post's throughput model for one batch: eq-dense-prefill-time plus every step of eq-dense-step-time.

    The decode steps are summed one by one with the exact maximum (not the memory-bound closed
    form); the weights are the post's count (eq-dense-params) at the model's bytes per weight.
    A single GPU has no all-reduces. Raises InputError naming the field on bad input.
    """
    batch = positive_int("batch", batch)
    prompt = positive_int("prompt", prompt)
    output = positive_int("output", output)
    n_red = positive_int("n_reduce_per_layer", n_reduce_per_layer)
    if not isinstance(hardware, Hardware):
        raise InputError(f"hardware must be a Hardware, got {hardware!r}")
    shape = shape_values(model)
    link = hardware.link_bandwidth if hardware.n_gpu > 1 else np.inf
    common = {**shape, b: batch, n_gpu: hardware.n_gpu, flops: hardware.flops,
              hbm_bw: hardware.bandwidth, ici_bw: link, n_reduce: n_red,
              n_param: post_param_count(model), kv_bytes: model.kv_bytes_per_token}
    contexts = prompt + np.arange(output, dtype=float)
    f_pre = prefill_flops_of(model, prompt, lm_head_all_tokens=True)
    t_pre = float(_eval(prefill_time().rhs, _PREFILL_TIME_ARGS,
                        {**common, f_prefill: f_pre, t_prompt: prompt}))
    f_dec = decode_flops_of(model, contexts)
    step_values = {**common, f_decode: f_dec, seq_kv: contexts}
    steps = _eval(step_time().rhs, _STEP_ARGS, step_values)
    compute = _eval(step_compute_time(), _STEP_ARGS, step_values)
    memory = _eval(step_memory_time(), _STEP_ARGS, step_values)
    return ModelRun(batch, prompt, output, t_pre, float(np.sum(steps)),
                    int(np.count_nonzero(compute > memory)))


_PRICE_ARGS = (b, t_prompt, t_output, t_batch, n_gpu, price, gamma_in)


def output_price_per_token(*, batch, prompt, output, seconds, n_gpu, gpu_price_per_hour,
                           gamma) -> float:
    """beta of eq-dense-output-price in $ per output token; gamma·beta per input token.

    Raises InputError naming the field on bad input.
    """
    values = (positive("batch", batch), positive("prompt", prompt), positive("output", output),
              positive("seconds", seconds), positive("n_gpu", n_gpu),
              positive("gpu_price_per_hour", gpu_price_per_hour), positive("gamma", gamma))
    return float(compile_fn(output_price(), _PRICE_ARGS)(*values))


# --- market prices against the cost model (the post's Fig. 24) ----------------------------------


@derivation("eq-dense-breakeven-throughput",
            "Mazurek and Gabriel (2025), Fig. 24 against eq-dense-output-price (derived)")
def breakeven_throughput() -> sp.Eq:
    """Output tokens/s at which a price beta_out (input at gamma_in·beta_out) pays the rent.

    (eq-dense-breakeven-throughput.) eq-dense-output-price with t_batch = b·T_out/R_tok, solved
    for R_tok.
    """
    (root,) = sp.solve(sp.Eq(beta_out, price_from_throughput()), tok_rate)
    return sp.Eq(tok_rate_be, sp.simplify(root))


@derivation("eq-dense-breakeven-gpu-price",
            "Mazurek and Gabriel (2025), Fig. 24 against eq-dense-output-price (derived)")
def breakeven_gpu_price() -> sp.Eq:
    """Highest GPU-hour price a token price covers at output throughput R_tok.

    (eq-dense-breakeven-gpu-price.) The same balance solved for P_GPU.
    """
    (root,) = sp.solve(sp.Eq(beta_out, price_from_throughput()), price)
    return sp.Eq(price_be, sp.simplify(root))
