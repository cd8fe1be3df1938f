"""KV-cache economics: parameters, cache bytes and the batch that fits.

Follows "All About Transformer Inference" of the scaling book (Austin et al. 2025: "What about
memory?", the LLaMA 2-13B tables, the tricks section, worked problems 1-3 and 5) and the memory
costs in the notes on Pope et al. (2023). A decoding step reads every weight once and every
sequence's keys and values once, so the cache adds a term proportional to the batch to the bytes
of a step (the step time itself is eq-intensity-step-time-min of :mod:`intensity`); it also has
to fit in HBM beside the weights, which caps the batch.

Notation of the scaling book -> registry symbols: L = n_layers, D = d_model, F = d_ff,
N = n_q, K = n_kv, H = d_head, V = vocab, E = n_experts, k = n_active, the context length T or S =
seq_kv (S of the intensity chapter).
"""

from __future__ import annotations

import math

import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_max,
    b_star,
    b_star_moe,
    d_ff,
    d_head,
    d_model,
    hbm_cap,
    kv_bytes,
    kv_ratio,
    kv_seq,
    n_active,
    n_active_param,
    n_attn,
    n_emb,
    n_experts,
    n_ff,
    n_ff_in,
    n_ff_out,
    n_gpu,
    n_kv,
    n_layers,
    n_param,
    n_q,
    n_tok_eq,
    n_unembed,
    p,
    p_act,
    s,
    seq_kv,
    vocab,
)
from ..core.validation import InputError, positive, positive_int
from . import architecture, intensity, moe, roofline

_BOOK = "Austin et al. (2025)"
_POPE = "Pope et al. (2023), as summarised in the notes"

# --- the sources' inputs and stated results ----------------------------------------------------
# Every number below is typed from a source and names it. "[later rev.]": from a later revision of
# the scaling-book chapter (the worked problems 2, 3 and 5 have no answers in the revision cited).

#: LLaMA 2-13B as the scaling book tabulates it ("What about memory?"); F is given as F/D = 2.7.
LLAMA2_13B = {"n_layers": 40, "d_model": 5120, "ffw_multiplier": 2.7, "n_q": 40, "n_kv": 40,
              "d_head": 128, "vocab": 32000}

#: What the scaling book states for LLaMA 2-13B: the parameter table (in parameters, although its
#: header says bytes), bf16 weights, the KV cache of one 8192-token sequence in bf16, the size of
#: one prefill activation of 8192 tokens, and "just 4 of these exceed" the weights.
LLAMA2_13B_STATED = {"ff_params": 8.5e9, "vocab_params": 0.3e9, "attention_params": 4.2e9,
                     "total_params": 13e9, "bytes_per_param": 2, "weights_bytes": 26e9,
                     "context": 8192, "bytes_per_element": 2, "kv_seq_bytes": 6.7e9,
                     "prefill_activation_bytes": 80e6, "sequences_exceeding_weights": 4}

#: The two LLaMA 2-13B tables of the scaling book ("Modeling throughput and latency for LLaMA
#: 2-13B"), verbatim: 8 TPU v5e, memory-bound step time. Table B keeps the parameters and shrinks
#: the cache 5x ("1:5 GMQA", 8 KV heads over 40 query heads). The memory rows are labelled GiB.
#: The prose gives the slice as "128GiB of HBM, 6.5TiB/s of HBM bandwidth (0.82TiB/s each) and
#: 1600TF/s"; the roofline section uses 8.2e11 B/s per chip. The text says "We OOM beyond batch
#: size 16" for table A and "We can fit a much bigger batch of 64" for table B.
LLAMA2_13B_TABLES = {
    "n_chips": 8,
    "hbm_bw_per_chip": 8.2e11,
    "prose_hbm_gib": 128,
    "prose_bw_tib_s": 6.5,
    "prose_bw_per_chip_tib_s": 0.82,
    "params_gb": 26,
    "batches": (1, 8, 16, 32, 64, 240),
    "b_crit": 240,
    "oom_beyond": 16,
    "gqa_fits": 64,
    "mha": {
        "kv_seq_gb": 6.7,
        "kv_gib": (6.7, 53.6, 107.2, 214.4, 428.8, 1608),
        "total_gib": (32.7, 79.6, 133.2, 240.4, 454.8, 1634),
        "step_ms": (4.98, 12.13, 20.30, 36.65, 69.33, 249.09),
        "tokens_per_s": (200.61, 659.30, 787.99, 873.21, 923.13, 963.53),
    },
    "gqa": {
        "n_kv": 8,
        "kv_shrink": 5,
        "kv_seq_gb": 1.34,
        "kv_gib": (1.34, 10.72, 21.44, 42.88, 85.76, 321.6),
        "total_gib": (27.34, 36.72, 47.44, 68.88, 111.76, 347.6),
        "step_ms": (4.17, 5.60, 7.23, 10.50, 17.04, 52.99),
        "tokens_per_s": (239.94, 1429.19, 2212.48, 3047.62, 3756.62, 4529.34),
    },
}

#: The model the scaling book invents for its worked problems ("based on LLaMA-2 13B").
WORKED_MODEL = {"n_layers": 64, "d_model": 4096, "d_ff": 16384, "n_q": 32, "n_kv": 8,
                "d_head": 256, "vocab": 32128}

#: Question 1 (tied embeddings): "about 18.4 billion parameters"; [later rev.] KV "2 * 64 * 8 *
#: 256 = 262kB" per token in int8.
WORKED_Q1 = {"params": 18.4e9, "kv_per_token_int8": 262e3, "bytes_per_element": 1}

#: Question 2 [later rev.]: a TPU v5e 4x4 slice, 16 GB of HBM per chip, int8 everywhere, 128k
#: (written 128e3) token sequences, KV cache fully sharded; "(16 * 16e9 - 18.4e9) / 33.5e9 = 7",
#: and with one KV head "8 times this, aka about 56".
WORKED_Q2 = {"n_chips": 16, "hbm_per_chip": 16e9, "param_bytes": 18.4e9, "context": 128e3,
             "context_binary": 131072, "kv_per_seq": 33.5e9, "answer": 7, "answer_one_kv_head": 56}

#: Question 3 [later rev.]: int8 parameters on a 4x4 slice at 8.2e11 B/s per chip,
#: "18e9 / (8.2e11 * 16) = 1.4ms"; another copy of that revision: "18e9 / (8.1e11 * 16) = 1.3ms".
WORKED_Q3 = {"n_chips": 16, "hbm_bw_per_chip": 8.2e11, "param_bytes": 18e9, "answer_ms": 1.4,
             "variant_bw_per_chip": 8.1e11, "variant_answer_ms": 1.3}

#: Question 5 [later rev.]: the worked model as an MoE with E = 16 experts, k = 2 per token:
#: "212e9 total parameters", "an increase of about 12x", "31.2e9" activated, "an increase of less
#: than 2x", "240 * (16 / 2) = 1920" tokens to be FLOPs bound, "2 * 31.2e9 * T" FLOPs.
WORKED_Q5 = {"n_experts": 16, "n_active": 2, "total_params": 212e9, "active_params": 31.2e9,
             "b_crit": 240, "moe_b_crit": 1920, "total_growth": 12, "active_growth": 2,
             "flop_per_param": 2}

#: Pope et al. (2023) notes, "Memory Costs": PaLM 540B with multi-query attention (one KV head),
#: two bytes per float; "2 * N = 1080 GB", 4·B·S·L·d_head bytes of cache, "B * S ≈ 59500", "a
#: batch size of around 290" at sequence length 2048.
PALM_MEMORY = {"n_param": 540e9, "bytes_per_param": 2, "param_mem_gb": 1080, "n_layers": 118,
               "d_head": 384, "n_kv": 1, "bytes_per_element": 2, "tokens": 59500,
               "context": 2048, "batch": 290}


# --- derivations ---------------------------------------------------------------------------------

def attention_matrix_params() -> dict[str, sp.Expr]:
    """Parameters of one layer's four attention matrices, from their shapes."""
    return {
        "W_Q": d_model * n_q * d_head,
        "W_K": d_model * n_kv * d_head,
        "W_V": d_model * n_kv * d_head,
        "W_O": n_q * d_head * d_model,
    }


@derivation("eq-kv-attention-params", f"{_BOOK}, 'What about memory?' and question 1")
def attention_params() -> sp.Eq:
    """Attention parameters of all layers: 2·L·D·H·(N + K) (eq-kv-attention-params).

    The sum of W_Q [D, N, H], W_K and W_V [D, K, H] and W_O [N, H, D], factored.
    """
    return sp.Eq(n_attn, sp.factor(n_layers * sum(attention_matrix_params().values())))


@derivation("eq-kv-ff-params", f"{_BOOK}, 'What about memory?' and question 5")
def feedforward_params() -> sp.Eq:
    """Gated feed-forward parameters: 3·L·E·D·F (eq-kv-ff-params).

    eq-arch-ff-params with two input matrices (gate and up projection) and one output matrix;
    E = 1 for a dense model.
    """
    gated = {n_ff_in: 2, n_ff_out: 1}
    return sp.Eq(n_ff, architecture.feedforward_params().rhs.subs(gated))


@derivation("eq-kv-embedding-params", f"{_BOOK}, 'What about memory?' and question 1")
def embedding_params() -> sp.Eq:
    """Vocabulary parameters m_emb·V·D, m_emb = 2 untied, 1 tied (eq-kv-embedding-params)."""
    return sp.Eq(n_unembed, n_emb * vocab * d_model)


def _collect_per_layer(expr: sp.Expr) -> sp.Expr:
    """Write a parameter count as L·D·(...) + m_emb·V·D, the scaling book's form."""
    embed = embedding_params().rhs
    per_layer = sp.expand((sp.expand(expr) - embed) / (n_layers * d_model))
    return n_layers * d_model * sp.collect(per_layer, d_head, func=sp.factor) + embed


def _parts() -> dict[sp.Symbol, sp.Expr]:
    return {n_attn: attention_params().rhs, n_ff: feedforward_params().rhs,
            n_unembed: embedding_params().rhs}


@derivation("eq-kv-params", f"{_BOOK}, question 1 (dense, tied) and question 5 (MoE)")
def total_params() -> sp.Eq:
    """All parameters: L·D·(3·E·F + 2·H·(N + K)) + m_emb·V·D (eq-kv-params).

    eq-moe-total-params with the three counts above substituted.
    """
    return sp.Eq(n_param, _collect_per_layer(moe.total_params().rhs.subs(_parts())))


@derivation("eq-kv-active-params", f"{_BOOK}, question 5 [later rev.]")
def active_params() -> sp.Eq:
    """Parameters one token multiplies by: L·D·(3·k·F + 2·H·(N + K)) + m_emb·V·D.

    (eq-kv-active-params.) eq-moe-active-params with s = E/k and the counts above substituted.
    """
    active = moe.active_params().rhs.subs({**_parts(), s: n_experts / n_active})
    return sp.Eq(n_active_param, _collect_per_layer(active))


@derivation("eq-kv-bytes-per-token", f"{_BOOK}, 'What about memory?'")
def bytes_per_token() -> sp.Eq:
    """KV-cache bytes per token: 2·L·K·H·p_act (eq-kv-bytes-per-token).

    One key and one value vector of K·H elements per layer, p_act bytes each.
    """
    keys = values = n_kv * d_head
    return sp.Eq(kv_bytes, sp.factor(n_layers * (keys + values) * p_act))


@derivation("eq-kv-sequence-bytes", f"{_BOOK}, 'What about memory?'")
def sequence_bytes() -> sp.Eq:
    """KV-cache bytes of one sequence of S tokens: 2·L·K·H·p_act·S (eq-kv-sequence-bytes)."""
    return sp.Eq(kv_seq, bytes_per_token().rhs * seq_kv)


@derivation("eq-kv-gqa-ratio", f"{_BOOK}, 'Tricks'; {_POPE}")
def gqa_ratio() -> sp.Eq:
    """Cache of multi-head attention (K = N) over a cache with K heads: N/K (eq-kv-gqa-ratio)."""
    per_token = bytes_per_token().rhs
    return sp.Eq(kv_ratio, sp.simplify(per_token.subs(n_kv, n_q) / per_token))


@derivation("eq-kv-step-time-per-sequence",
            f"{_BOOK}, 'Modeling throughput and latency' (its LLaMA 2-13B tables)")
def step_time_per_sequence() -> sp.Eq:
    """eq-intensity-step-time-min with each sequence's cache written as M_seq (eq-kv-sequence-bytes).

    (b·M_seq + p·N)/(N_GPU·B): the form of the scaling book's LLaMA 2-13B tables, which give the
    cache per sequence (eq-kv-step-time-per-sequence).
    """
    eq = intensity.step_time_min()
    return sp.Eq(eq.lhs, sp.simplify(eq.rhs.subs(kv_bytes, kv_seq / seq_kv)))


@derivation("eq-kv-throughput-per-sequence",
            f"{_BOOK}, 'Modeling throughput and latency' (its LLaMA 2-13B tables)")
def throughput_per_sequence() -> sp.Eq:
    """eq-intensity-throughput-min in the same form: b·N_GPU·B/(b·M_seq + p·N)
    (eq-kv-throughput-per-sequence)."""
    eq = intensity.throughput_memory_bound()
    return sp.Eq(eq.lhs, sp.simplify(eq.rhs.subs(kv_bytes, kv_seq / seq_kv)))


@derivation("eq-kv-max-batch", f"this book, from {_BOOK}, 'Modeling throughput and latency'")
def max_batch() -> sp.Eq:
    """Largest batch that fits: floor((N_GPU·M_HBM − p·N)/M_seq) (eq-kv-max-batch).

    Solved from weights plus b caches = the HBM of the slice, rounded down.
    """
    (solution,) = sp.solve(sp.Eq(b * kv_seq + p * n_param, n_gpu * hbm_cap), b)
    return sp.Eq(b_max, sp.floor(solution))


@derivation("eq-kv-moe-critical-batch", f"{_BOOK}, question 5 [later rev.]")
def moe_critical_batch() -> sp.Eq:
    """Critical batch of an MoE feed-forward block: b*·E/k (eq-kv-moe-critical-batch).

    Once every expert is read, the block's memory time is p·N_ff/B while a token multiplies only
    k/E of N_ff; solving memory time = arithmetic time and dividing by the dense b* leaves E/k.
    """
    memory = roofline.memory_time().subs(n_param, n_ff)
    arithmetic = roofline.arithmetic_time().subs(n_param, n_ff * n_active / n_experts)
    (solution,) = sp.solve(sp.Eq(memory, arithmetic), b)
    factor = sp.simplify(solution / roofline.critical_batch().rhs)
    return sp.Eq(b_star_moe, b_star * factor)


@derivation("eq-kv-equals-params", f"{_POPE}, 'Memory Costs'")
def tokens_equal_params() -> sp.Eq:
    """Cached tokens b·S whose KV bytes equal the weight bytes: p·N/M_KV (eq-kv-equals-params)."""
    (solution,) = sp.solve(sp.Eq(n_tok_eq * bytes_per_token().rhs, p * n_param), n_tok_eq)
    return sp.Eq(n_tok_eq, solution)


# --- numbers -------------------------------------------------------------------------------------

# Argument tuples are module constants: the keyword arguments of the functions below shadow the
# symbol names inside them.
_SHAPE = (n_layers, d_model, d_ff, n_q, n_kv, d_head, vocab, n_emb, n_experts, n_active)
_KV_ARGS = (n_layers, n_kv, d_head, p_act)
_EQUAL_ARGS = (n_param, p, n_layers, n_kv, d_head, p_act)


def parameter_counts(*, n_layers: int, d_model: int, d_ff: int, n_q: int, n_kv: int, d_head: int,
                     vocab: int, tied: bool, n_experts: int = 1, n_active: int = 1) -> dict:
    """Attention, feed-forward, vocabulary, total and active parameters of a gated transformer.

    Evaluates eq-kv-attention-params, eq-kv-ff-params, eq-kv-embedding-params, eq-kv-params and
    eq-kv-active-params. Raises InputError naming the field on bad input.
    """
    values = [positive_int(name, value) for name, value in (
        ("n_layers", n_layers), ("d_model", d_model), ("d_ff", d_ff), ("n_q", n_q),
        ("n_kv", n_kv), ("d_head", d_head), ("vocab", vocab))]
    if not isinstance(tied, bool):
        raise InputError(f"tied must be True or False, got {tied!r}")
    experts = positive_int("n_experts", n_experts)
    active = positive_int("n_active", n_active)
    if active > experts:
        raise InputError(f"n_active {active} exceeds n_experts {experts}")
    if values[3] % values[4]:
        raise InputError(f"n_kv {values[4]} does not divide n_q {values[3]}")
    args = (*values, 1 if tied else 2, experts, active)
    eqs = {"attention": attention_params(), "ff": feedforward_params(),
           "embedding": embedding_params(), "total": total_params(), "active": active_params()}
    return {key: float(compile_fn(eq, _SHAPE)(*args)) for key, eq in eqs.items()}


def kv_bytes_per_token(*, n_layers: int, n_kv: int, d_head: int, bytes_per_element: float) -> float:
    """KV-cache bytes per token of context, eq-kv-bytes-per-token."""
    args = (positive_int("n_layers", n_layers), positive_int("n_kv", n_kv),
            positive_int("d_head", d_head), positive("bytes_per_element", bytes_per_element))
    return float(compile_fn(bytes_per_token(), _KV_ARGS)(*args))


def largest_batch(*, n_chips: int, hbm_per_chip: float, n_params: float, bytes_per_param: float,
                  kv_seq_bytes: float) -> int:
    """Largest whole batch whose caches fit beside the weights, eq-kv-max-batch.

    Raises InputError if the weights alone do not fit in the slice.
    """
    chips = positive_int("n_chips", n_chips)
    cap = positive("hbm_per_chip", hbm_per_chip)
    params = positive("n_params", n_params)
    width = positive("bytes_per_param", bytes_per_param)
    seq = positive("kv_seq_bytes", kv_seq_bytes)
    if params * width > chips * cap:
        raise InputError(f"n_params: {params * width:.4g} bytes of weights exceed the "
                         f"{chips * cap:.4g} bytes of HBM of {chips} chips")
    unrounded = compile_fn(max_batch().rhs.args[0], (n_gpu, hbm_cap, p, n_param, kv_seq))
    return math.floor(float(unrounded(chips, cap, width, params, seq)))


def cached_tokens_equal_to_params(*, n_params: float, bytes_per_param: float, n_layers: int,
                                  n_kv: int, d_head: int, bytes_per_element: float) -> float:
    """Tokens b·S whose KV bytes equal the weight bytes, eq-kv-equals-params."""
    args = (positive("n_params", n_params), positive("bytes_per_param", bytes_per_param),
            positive_int("n_layers", n_layers), positive_int("n_kv", n_kv),
            positive_int("d_head", d_head), positive("bytes_per_element", bytes_per_element))
    return float(compile_fn(tokens_equal_params(), _EQUAL_ARGS)(*args))
