"""Why embeddings are cheap (Mazurek 2025, "Why are embeddings so cheap?", Tensor Economics).

An embedding model such as Qwen3-Embedding-8B returns the last hidden state of one forward pass
over the input: the FLOPs of a prefill without the LM head. For inputs longer than a few hundred
tokens that pass is compute bound, so batching adds almost no throughput, and the cost of a
million tokens is set by the FLOPs a dollar of GPU rental buys.

The FLOP count reuses the per-layer counts of :mod:`dense_economics` (eq-dense-prefill-flops), the
memory time is eq-roofline-token-latency's p·N/B, and the price of a million tokens is
eq-deepseek-cost-per-mtok; this module registers only what is new: the embedding pass, its
batch time and rate, the critical batch and crossover length, FLOPs per dollar and the cost of
a compute-bound pass.

Registry symbols for the post's names: h = d_model, n_h = n_q, L = n_layers, S = seq_kv (the
input attends to itself), intermediate_size = d_ff.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_star,
    d_ff,
    d_head,
    d_model,
    emb_rate,
    flop_usd,
    flops,
    flops_emb,
    hbm_bw,
    n_kv,
    n_layers,
    n_param,
    n_q,
    p,
    price,
    seq_emb_star,
    seq_kv,
    t_emb,
    tok_rate_gpu,
    usd_mtok_emb,
    util,
    vocab,
)
from ..core.units import SECONDS_PER_HOUR
from ..core.validation import InputError, positive, positive_int
from . import deepseek_serving, roofline
from .dense_economics import llama_form, lm_head_flops, prefill_flops

_POST = "Mazurek (2025), 'Why are embeddings so cheap?'"
_DERIVED = f"this book, from {_POST}"

# --- the post's inputs and stated results ---------------------------------------------------
# Typed from the text of the post (its tables and figures are images and are not used). Decimal
# commas of the post ("0,021s", "$0,01062") are written with points. Quoted so that the book can
# compare against them; never used as model inputs where a preset or a derivation gives the value.

#: Everything Mazurek (2025), "Why are embeddings so cheap?", states that the book reproduces.
MAZUREK2025_EMBEDDINGS: Mapping[str, object] = {
    # "Introduction": list prices, 8-13.09.2025 ($ per million tokens)
    "prices": {"o1_input": 15, "o1_output": 60, "ada_002": 0.10, "gemini_embedding_001": 0.15,
               "cohere_embed_4": 0.12},
    # the English Wikipedia example
    "wikipedia": {"words": 4.9e9, "tokens_per_word": sp.Rational(4, 3), "usd_stated": 650,
                  "pages": 10e6},
    # "Counting FLOPs": Fig. 4 config values used by the post
    "config": {"num_hidden_layers": 36, "hidden_size": 4096, "num_attention_heads": 32,
               "intermediate_size": 12288},
    "ffn_ratio_llama": sp.Rational(7, 2),  # "compared to Llama's 3.5"
    "seq_len": 1024,
    "seq_len_experiment": 1040,  # footnote 3
    "flops_stated": 16.4e12,
    # hardware of the text
    "h100_flops_marketing": 989e12,
    "h100_bandwidth": 3.3e12,
    "h100_flops_measured": 750e12,  # Fig. 5, "~750 TFLOPS"
    "tensor_cores": 528,
    "clock_hz": 1.830e9,
    "flop_per_instruction": 1024,
    # "Counting FLOPs": weights and the roofline of one embedding
    "n_params_stated": 7.57e9,
    "bytes_per_param": 2,
    "weights_gb_stated": 15.14,
    "weights_gb_alt_stated": 15.2,  # "occupying only 15.2 GB"
    "t_mem_stated_s": 0.0046,
    "t_comp_stated_s": 0.021,
    "emb_per_s_stated": 47,
    # "Real world benchmark" (H100 SXM, SGLang 0.5.1)
    "measured_emb_per_s_b1": 25.3,
    "theory_over_measured_stated": 1.86,
    "batch_gain_short_stated": 2.3,  # "260 and 520 tokens", batch 1 -> 64
    "batch_gain_short_seq": (260, 520),
    "batch_gain_batches": (1, 64),
    "long_seq": 5200,
    # "From FLOPs to dollars"
    "emb_per_s_b4": 32.2,
    "tok_per_s_b4_stated": 33488,
    "saturation_tok_per_s": 45e3,
    "h100_price": 2.0,
    "usd_per_mtok_h100_stated": 0.0166,
    "utilisation": 0.1,
    "requests_stated": 276e3,
    "usd_per_mtok_util_stated": 0.16,
    # "Our metric - FLOPS per dollar"
    "tflops_per_usd_h100_real_stated": 375,
    "tflops_per_usd_4090_stated": 445,
    "rtx4090_flops": 165e12,
    "rtx4090_price": 0.37,
    "price_ratio_stated": 5.4,
    "flops_ratio_stated": 4.5,
    "perf_ratio_b1": {"h100": 25.3, "rtx4090": 7.2, "stated": 3.5},
    "perf_ratio_large": {"h100": 45.2, "rtx4090": 10.8, "stated": 4.2},
    "tok_per_s_4090_b4": 9672,
    "usd_per_mtok_4090_stated": 0.01062,
    "saving_stated": 0.36,
    "tok_per_s_4090_headline": 11440,
    "usd_per_mtok_headline_stated": 0.0090,
    "tok_per_s_4090_b32": 11024,
    "daily_rent_stated": 8.8,
    "tokens_per_day_stated": 952e6,
    # "What profiling reveals"
    "flash_attention_share": {2600: 0.06, 8000: 0.15},
    # footnote 5: purchase prices
    "rtx4090_purchase_usd": 3200,
    "h100_purchase_multiple": 10,
}


def shape_of(model) -> dict[str, int]:
    """The shape the functions below read, from a model preset (e.g. ``qwen3-embedding-8b``).

    The post's Fig. 4 quotes Qwen3-Embedding-8B's layers, width, heads and feed-forward width; its
    preset adds the KV heads and vocabulary. ``model`` needs the attributes of
    :class:`inference_math.presets.models.Model`.
    """
    return {"n_layers": model.layers, "d_model": model.d_model, "n_q": model.n_q_heads,
            "n_kv": model.n_q_heads // model.group_size, "d_head": model.head_dim,
            "d_ff": model.d_ff, "vocab": model.vocab}


#: Qwen3-8B's shape ratios: one query head per d_head of the width, a KV head for every four
#: query heads and a feed-forward width of 3 d_model.
QWEN3_RATIOS: Mapping[sp.Symbol, sp.Expr] = {d_head: d_model / n_q, n_kv: n_q / 4, d_ff: 3 * d_model}

_SHAPE_SYMBOLS = {"n_layers": n_layers, "d_model": d_model, "n_q": n_q, "n_kv": n_kv,
                  "d_head": d_head, "d_ff": d_ff}


def _per_layer_form(expr: sp.Expr) -> sp.Expr:
    """L·(...): the form the post prints, the bracket expanded."""
    return n_layers * sp.expand(expr / n_layers)


# --- FLOPs of one embedding ----------------------------------------------------------------


@derivation("eq-embeddings-flops", f"{_POST}, 'Counting FLOPs'")
def embedding_flops() -> sp.Eq:
    """FLOPs of one embedding pass over S tokens: the prefill without its LM head (eq-embeddings-flops).

    eq-dense-prefill-flops minus the 2·h·V of the LM head: the embedding is the last hidden state
    of the [EOS] token, so no logits are computed (the pooling FLOPs are negligible).
    """
    expr = sp.expand(prefill_flops().rhs - lm_head_flops(1))
    if vocab in expr.free_symbols:
        raise ArithmeticError("the LM head was not removed")
    return sp.Eq(flops_emb, _per_layer_form(expr))


@derivation("eq-embeddings-flops-post", f"{_POST}, 'Counting FLOPs'")
def embedding_flops_post() -> sp.Eq:
    """The post's count: eq-embeddings-flops with Llama's ratios, L·(10Sh + 25.5Sh² + 4S²h + 5S²n_h).

    (eq-embeddings-flops-post.) Llama's 3.5× feed-forward and one KV head per eight query heads,
    which the post keeps for Qwen.
    """
    return sp.Eq(flops_emb, _per_layer_form(llama_form(embedding_flops().rhs)))


@derivation("eq-embeddings-flops-qwen", _DERIVED)
def embedding_flops_qwen() -> sp.Eq:
    """eq-embeddings-flops with Qwen3-8B's own ratios: 23Sh² in place of 25.5Sh² (eq-embeddings-flops-qwen).

    A 3× feed-forward (18Sh²) and a KV head per four query heads (Q, K, V and O: 5Sh²).
    """
    return sp.Eq(flops_emb, _per_layer_form(sp.expand(embedding_flops().rhs.subs(QWEN3_RATIOS))))


# --- time, rate and the compute-bound threshold ------------------------------------------------


def compute_time() -> sp.Expr:
    """Arithmetic of a batch of b embeddings at C FLOP/s: b·F_emb/C."""
    return b * flops_emb / flops


@derivation("eq-embeddings-batch-time", f"{_POST}, 'Counting FLOPs'")
def batch_time() -> sp.Eq:
    """Time of one pass over b inputs: the larger of the weight read and the arithmetic.

    (eq-embeddings-batch-time.) The weights are read once whatever b (the memory time of
    eq-roofline-token-latency); the FLOPs grow with b. Attention reads no KV cache: the keys and
    values of the input are computed in the same pass.
    """
    return sp.Eq(t_emb, sp.Max(roofline.memory_time(), compute_time()))


@derivation("eq-embeddings-rate", _DERIVED)
def embedding_rate() -> sp.Eq:
    """Embeddings per second, b/t_emb; dividing a maximum by b > 0 gives a minimum (eq-embeddings-rate)."""
    return sp.Eq(emb_rate, sp.Min(*(sp.expand(b / arg) for arg in batch_time().rhs.args)))


def rate_ceiling() -> sp.Expr:
    """The rate as b → ∞: C/F_emb, the compute-bound throughput, reached at every b ≥ b*.

    Both arguments of the minimum are non-decreasing in b, so the limit of the minimum is the
    minimum of their limits (SymPy's limit does not take a Min directly).
    """
    return sp.Min(*(sp.limit(arg, b, sp.oo) for arg in embedding_rate().rhs.args))


@derivation("eq-embeddings-critical-batch", _DERIVED)
def critical_batch() -> sp.Eq:
    """Batch at which the arithmetic of the pass equals its weight read: p·N·C/(B·F_emb).

    (eq-embeddings-critical-batch.) Solved by SymPy. Below one, even a single input is compute
    bound and batching cannot raise the throughput.
    """
    (solution,) = sp.solve(sp.Eq(roofline.memory_time(), compute_time()), b)
    return sp.Eq(b_star, solution)


@cache
def crossover_length_of(flops_expr: sp.Expr) -> sp.Expr:
    """Positive root S of flops_expr(S) = p·N·C/B: the input length at which b* = 1."""
    roots = sp.solve(sp.Eq(flops_expr, critical_batch().rhs * flops_emb), seq_kv)
    positive_roots = [r for r in roots if r.is_positive is not False]
    if len(positive_roots) != 1:
        raise ArithmeticError(f"expected one positive crossover length, got {roots}")
    return positive_roots[0]


@derivation("eq-embeddings-crossover-length", _DERIVED)
def crossover_length() -> sp.Eq:
    """Shortest input whose embedding pass is compute bound at b = 1 (eq-embeddings-crossover-length).

    SymPy solves eq-embeddings-flops-post = p·N·C/B for S (eq-embeddings-critical-batch = 1)
    and keeps the positive root of the quadratic.
    """
    return sp.Eq(seq_emb_star, crossover_length_of(embedding_flops_post().rhs))


# --- dollars -----------------------------------------------------------------------------------


@derivation("eq-embeddings-flop-per-dollar", f"{_POST}, 'Our metric - FLOPS per dollar'")
def flop_per_dollar() -> sp.Eq:
    """FLOPs a dollar of rental buys: 3600·C/P_GPU (eq-embeddings-flop-per-dollar).

    The post's TFLOPS/($/h) is the same ratio in other units.
    """
    return sp.Eq(flop_usd, SECONDS_PER_HOUR * flops / price)


@derivation("eq-embeddings-cost-compute-bound", _DERIVED)
def cost_compute_bound() -> sp.Eq:
    """Cost of a million tokens of a compute-bound pass: 10⁶·F_emb/(u·S·Φ).

    (eq-embeddings-cost-compute-bound.) eq-deepseek-cost-per-mtok with one GPU producing
    u·S·C/F_emb tokens per second (the rate ceiling, S tokens per embedding, busy a fraction u of
    the time), then C written through eq-embeddings-flop-per-dollar: only FLOPs per token and
    FLOPs per dollar remain.
    """
    cost = deepseek_serving.cost_per_million_tokens().rhs
    tokens_per_s = util * seq_kv * rate_ceiling()
    (c_of_phi,) = sp.solve(sp.Eq(flop_usd, flop_per_dollar().rhs), flops)
    expr = sp.simplify(cost.subs(tok_rate_gpu, tokens_per_s).subs(flops, c_of_phi))
    return sp.Eq(usd_mtok_emb, expr)


# --- numeric helpers -----------------------------------------------------------------------------

_FORMS = {"post": embedding_flops_post, "shape": embedding_flops}
_FLOP_ARGS = (seq_kv, n_layers, d_model, n_q, n_kv, d_head, d_ff)


def _shape_values(shape: Mapping[str, int]) -> tuple[int, ...]:
    try:
        return tuple(positive_int(f"shape[{key!r}]", shape[key]) for key in _SHAPE_SYMBOLS)
    except KeyError as missing:
        raise InputError(f"shape lacks {missing}; it needs {', '.join(_SHAPE_SYMBOLS)}") from None


def _form(form: str):
    if form not in _FORMS:
        raise InputError(f"form must be one of {', '.join(_FORMS)}, got {form!r}")
    return _FORMS[form]()


def flops_per_embedding(seq_len, *, shape: Mapping[str, int],
                        form: str = "post") -> float:
    """FLOPs of one embedding of ``seq_len`` tokens.

    ``form`` "post" evaluates eq-embeddings-flops-post (Llama's ratios, only L, h and n_h of
    ``shape`` matter), "shape" evaluates eq-embeddings-flops with the model's own n_kv, d_head and
    d_ff. Raises InputError naming the field on bad input.
    """
    length = positive("seq_len", seq_len)
    return float(compile_fn(_form(form), _FLOP_ARGS)(length, *_shape_values(shape)))


def embedding_pass(seq_len, batch, *, chip_flops, chip_bandwidth, n_params, weight_bytes=2.0,
                   shape: Mapping[str, int], form: str = "post") -> dict:
    """Memory time, compute time, pass time (eq-embeddings-batch-time) and rates of one batch.

    Returns seconds for ``t_mem``, ``t_comp`` and ``time``, and ``emb_per_s`` (eq-embeddings-rate)
    and ``tok_per_s`` = seq_len·emb_per_s.
    """
    values = {
        flops_emb: flops_per_embedding(seq_len, shape=shape, form=form),
        b: positive("batch", batch), flops: positive("chip_flops", chip_flops),
        hbm_bw: positive("chip_bandwidth", chip_bandwidth), n_param: positive("n_params", n_params),
        p: positive("weight_bytes", weight_bytes),
    }
    args = tuple(values)
    out = {
        "t_mem": float(compile_fn(roofline.memory_time(), args)(*values.values())),
        "t_comp": float(compile_fn(compute_time(), args)(*values.values())),
        "time": float(compile_fn(batch_time(), args)(*values.values())),
        "emb_per_s": float(compile_fn(embedding_rate(), args)(*values.values())),
    }
    out["tok_per_s"] = out["emb_per_s"] * float(seq_len)
    return out


def crossover_tokens(*, chip_flops, chip_bandwidth, n_params, weight_bytes=2.0,
                     shape: Mapping[str, int], form: str = "post") -> float:
    """Input length at which one embedding pass turns compute bound (eq-embeddings-crossover-length)."""
    root = crossover_length_of(_form(form).rhs)
    args = (flops, hbm_bw, n_param, p, *_FLOP_ARGS[1:])
    values = (positive("chip_flops", chip_flops), positive("chip_bandwidth", chip_bandwidth),
              positive("n_params", n_params), positive("weight_bytes", weight_bytes),
              *_shape_values(shape))
    return float(compile_fn(root, args)(*values))


def usd_per_million_tokens(price_per_hour, tokens_per_s, utilisation=1.0) -> float:
    """eq-deepseek-cost-per-mtok for one GPU, divided by the utilisation ``utilisation`` in (0, 1].

    A GPU busy a fraction u of the time produces u·tokens_per_s on average, so the cost of a
    million tokens is the full-utilisation cost over u.
    """
    u = positive("utilisation", utilisation)
    if u > 1:
        raise InputError(f"utilisation must be at most 1, got {utilisation!r}")
    cost = deepseek_serving.cost_per_million_tokens()
    rate = u * positive("tokens_per_s", tokens_per_s)
    return float(compile_fn(cost, (price, tok_rate_gpu))(positive("price_per_hour", price_per_hour),
                                                         rate))
