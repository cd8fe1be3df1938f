"""The decode roofline: arithmetic intensity, the critical batch and step-time bounds.

From "All About Transformer Inference" (Austin et al. 2025, part 7 of *How to Scale Your
Model*): sections "Linear operations: what bottlenecks us?", "What about attention?",
"Theoretical estimates for LLM latency and throughput" and Appendix A.

Notation: the book's b (batch), B (HBM bandwidth of one chip), C (FLOP/s of one chip),
p and p_act (bytes per weight and per activation or KV element), d_model and d_ff stand for the
source's B, W_hbm, C, 2, 2, D and F; an instance has N_GPU chips. S is the context length
attended to, T the query tokens per sequence, M_KV the KV-cache bytes per token of context.

Everything below is derived by SymPy from the byte and FLOP counts of the source; the numeric
helpers at the end evaluate those derivations and validate their inputs.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_half_tok,
    b_star,
    b_star_exact,
    d_ff,
    d_model,
    flops,
    hbm_bw,
    intensity,
    kv_bytes,
    n_gpu,
    n_param,
    p,
    p_act,
    seq_kv,
    seq_q,
    seq_q_star,
    t_step_min,
    t_token,
    tok_rate,
    tok_rate_max,
    tok_rate_mem,
)
from ..core.validation import positive

_SEC_LINEAR = "Austin et al. (2025), sec. 'Linear operations: what bottlenecks us?'"
_SEC_ATTN = "Austin et al. (2025), sec. 'What about attention?'"
_SEC_EST = "Austin et al. (2025), sec. 'Theoretical estimates for LLM latency and throughput'"

#: Inputs and answers *stated* in Austin et al. (2025), part 7, for the numbers of the chapter
#: that the hardware presets do not hold (the presets hold the TPU v5e's 1.97e14 and 3.94e14
#: FLOP/s and 8.2e11 B/s). Quoted so that the book can compare against them; never used as
#: model inputs where a preset or a derivation gives the value.
AUSTIN2025: Mapping[str, object] = {
    # sec. "Linear operations": the hardware intensity "= 240", int8 variants, the batch
    # and width bounds behind the large-D, F approximation
    "ridge_stated": 240,
    "b_crit_int8_weights_stated": 120,
    "b_crit_int8_int8_stated": 240,
    "int8_tops_stated": 400e12,  # "400 TOPs/s of int8 x int8"
    "max_batch_stated": 500,  # "usually our batches are at most 500"
    "min_width_stated": 10e3,  # "D and F > 10k"
    # sec. "What about attention?": prefill attention is compute bound for "roughly > 480"
    "prefill_tokens_stated": 480,
    # sec. "Theoretical estimates", pop quiz: 30B dense model, int8 weights, bf16 FLOPs, TPU v5e
    # 4x4, 8192 context, 100 kB/token KV; the answer uses 8.1e11 B/s per chip (the roofline
    # section uses 8.2e11) and rounds the KV cache to 819e6 bytes
    "pop_quiz": {
        "n_param": 30e9, "weight_bytes": 1, "chips": 16, "context": 8192,
        "kv_bytes_per_token": 100e3, "hbm_bw": 8.1e11, "batches": (4, 256),
        "stated_ms": (2.5, 21), "kv_seq_stated": 819e6,
    },
    # Appendix A: layer with d_model 8192, d_ff 32768, two matmuls, sharded 4 ways, "about 600M
    # parameters", "latency of roughly 365us at minimum", knee "around batch 240"
    "appendix_a": {
        "d_model": 8192, "d_ff": 32768, "matrices": 2, "n_param": 600e6, "weight_bytes": 2,
        "shards": 4, "stated_us": 365, "knee": 240,
    },
    # LLaMA 2-13B section: 13e9 parameters, 26 GB of bf16 weights on 8 TPU v5e
    "llama2_13b": {"n_param": 13e9, "weight_bytes": 2, "chips": 8},
}


# --- linear operations ------------------------------------------------------------------------


def matmul_flops() -> sp.Expr:
    """FLOPs of [b, d_model] x [d_model, d_ff]: one multiply and one add per product, 2·b·D·F."""
    return 2 * b * d_model * d_ff


def matmul_bytes() -> sp.Expr:
    """HBM bytes of the matmul: read the activations and the weights, write the result.

    p_act·b·D + p·D·F + p_act·b·F; the source's bf16 case is p = p_act = 2.
    """
    return p_act * b * d_model + p * d_model * d_ff + p_act * b * d_ff


@derivation("eq-intensity-matmul", _SEC_LINEAR)
def matmul_intensity() -> sp.Eq:
    """Arithmetic intensity of a decode matmul, FLOPs over bytes (eq-intensity-matmul)."""
    return sp.Eq(intensity, matmul_flops() / matmul_bytes())


@derivation("eq-intensity-matmul-limit", _SEC_LINEAR)
def matmul_intensity_limit() -> sp.Eq:
    """Intensity for d_model, d_ff >> b: the limit 2·b/p (eq-intensity-matmul-limit).

    Taken by SymPy as d_ff -> oo, then d_model -> oo; the weights dominate the traffic.
    """
    expr = matmul_intensity().rhs
    limit = sp.limit(sp.limit(expr, d_ff, sp.oo), d_model, sp.oo)
    return sp.Eq(intensity, limit)


def hardware_intensity() -> sp.Expr:
    """The ridge point of one chip's roofline, C/B FLOP per byte."""
    return flops / hbm_bw


@derivation("eq-intensity-critical-batch", _SEC_LINEAR)
def critical_batch() -> sp.Eq:
    """Critical batch b* = p·C/(2·B) (eq-intensity-critical-batch).

    Solved from limit intensity = hardware intensity; the source's B_crit = 240 is the bf16
    case p = 2 on TPU v5e, and the int8 variants follow from p = 1.
    """
    (solution,) = sp.solve(sp.Eq(matmul_intensity_limit().rhs, hardware_intensity()), b)
    return sp.Eq(b_star, solution)


def matmul_intensity_supremum() -> sp.Expr:
    """Intensity as b -> oo: 2·D·F/(p_act·(D + F)); the activations then dominate the traffic."""
    return sp.simplify(sp.limit(matmul_intensity().rhs, b, sp.oo))


@derivation("eq-intensity-critical-batch-exact", _SEC_LINEAR)
def critical_batch_exact() -> sp.Eq:
    """Exact compute-bound batch, activation traffic included (eq-intensity-critical-batch-exact).

    SymPy solves intensity = C/B for b. The intensity rises with b, so the matmul is compute
    bound exactly for b >= this value, which exists (is positive) only while the supremum
    :func:`matmul_intensity_supremum` exceeds C/B.
    """
    (solution,) = sp.solve(sp.Eq(matmul_intensity().rhs, hardware_intensity()), b)
    return sp.Eq(b_star_exact, sp.factor(solution))


# --- attention --------------------------------------------------------------------------------


def attention_flops() -> sp.Expr:
    """FLOPs of one attention head's QK^T and AV for b sequences: 2·b·S·T·D each."""
    return 2 * b * seq_kv * seq_q * d_model + 2 * b * seq_kv * seq_q * d_model


def attention_bytes() -> sp.Expr:
    """HBM bytes of one Flash-Attention fusion: read Q [b,T,D], read K and V [b,S,D], write [b,T,D]."""
    return p_act * (b * seq_q * d_model + 2 * b * seq_kv * d_model + b * seq_q * d_model)


@derivation("eq-intensity-attention", _SEC_ATTN)
def attention_intensity() -> sp.Eq:
    """Attention intensity 2·S·T/(p_act·(S + T)), i.e. S·T/(S + T) in bf16 (eq-intensity-attention)."""
    return sp.Eq(intensity, sp.factor(sp.simplify(attention_flops() / attention_bytes())))


@derivation("eq-intensity-prefill-length", _SEC_ATTN)
def prefill_attention_length() -> sp.Eq:
    """Shortest prompt whose self-attention (S = T) is compute bound: p_act·C/B.

    (eq-intensity-prefill-length.)
    """
    self_attention = attention_intensity().rhs.subs(seq_kv, seq_q)
    (solution,) = sp.solve(sp.Eq(self_attention, hardware_intensity()), seq_q)
    return sp.Eq(seq_q_star, solution)


@derivation("eq-intensity-attention-decode-limit", _SEC_ATTN)
def attention_decode_limit() -> sp.Eq:
    """Decode attention (T = 1) as S -> oo: intensity 2/p_act, 1 in bf16.

    (eq-intensity-attention-decode-limit.)
    """
    decode = attention_intensity().rhs.subs(seq_q, 1)
    return sp.Eq(intensity, sp.limit(decode, seq_kv, sp.oo))


# --- step time and throughput -----------------------------------------------------------------


def kv_bytes_per_sequence() -> sp.Expr:
    """KV-cache bytes one sequence reads per step: M_KV·S."""
    return kv_bytes * seq_kv


def attention_time() -> sp.Expr:
    """Reading b KV caches at the instance's bandwidth, b·M_KV·S/(N_GPU·B); always memory bound."""
    return b * kv_bytes_per_sequence() / (n_gpu * hbm_bw)


def weight_load_time() -> sp.Expr:
    """Reading every weight once at the instance's bandwidth, p·N/(N_GPU·B)."""
    return p * n_param / (n_gpu * hbm_bw)


def weight_flops_time() -> sp.Expr:
    """Arithmetic of the weight matmuls at the instance's FLOP/s, 2·b·N/(N_GPU·C)."""
    return 2 * b * n_param / (n_gpu * flops)


@derivation("eq-intensity-step-time-min", _SEC_EST)
def step_time_min() -> sp.Eq:
    """Memory-bound lower bound on the step time, (b·KV + weight bytes)/bandwidth.

    (eq-intensity-step-time-min.)
    """
    return sp.Eq(t_step_min, sp.together(attention_time() + weight_load_time()))


@derivation("eq-intensity-throughput-min", _SEC_EST)
def throughput_memory_bound() -> sp.Eq:
    """Tokens/s at the memory-bound step time, b/t_step_min (eq-intensity-throughput-min)."""
    return sp.Eq(tok_rate, sp.simplify(b / step_time_min().rhs))


@derivation("eq-intensity-step-time", _SEC_EST)
def step_time() -> sp.Eq:
    """General step time: attention read plus the roofline of the weight matmuls (eq-intensity-step-time)."""
    return sp.Eq(t_token, attention_time() + sp.Max(weight_flops_time(), weight_load_time()))


@derivation("eq-intensity-crossover-batch", "this book, from " + _SEC_EST)
def crossover_batch() -> sp.Eq:
    """Batch at which the FLOPs term equals the weight-load term (eq-intensity-crossover-batch).

    Solved by SymPy; N and N_GPU cancel and the result is the critical batch again.
    """
    (solution,) = sp.solve(sp.Eq(weight_flops_time(), weight_load_time()), b)
    return sp.Eq(b_star, solution)


@derivation("eq-intensity-throughput-ceiling-mem", "this book, from " + _SEC_EST)
def throughput_ceiling_memory_bound() -> sp.Eq:
    """Memory-bound throughput as b -> oo: N_GPU·B/(M_KV·S) (eq-intensity-throughput-ceiling-mem)."""
    return sp.Eq(tok_rate_mem, sp.limit(throughput_memory_bound().rhs, b, sp.oo))


@derivation("eq-intensity-half-saturation", "this book, from " + _SEC_EST)
def half_saturation_batch() -> sp.Eq:
    """Batch at which memory-bound throughput is half its ceiling: p·N/(M_KV·S).

    (eq-intensity-half-saturation.)

    At that batch the KV caches read per step weigh as much as the weights.
    """
    half = sp.Eq(throughput_memory_bound().rhs, throughput_ceiling_memory_bound().rhs / 2)
    (solution,) = sp.solve(half, b)
    return sp.Eq(b_half_tok, solution)


def step_time_regimes() -> dict[str, sp.Expr]:
    """The general step time on either side of the crossover batch b*.

    Below b* the weight load is the larger term of the maximum, above it the FLOPs term.
    """
    return {"below": attention_time() + weight_load_time(),
            "above": attention_time() + weight_flops_time()}


@derivation("eq-intensity-throughput-ceiling", "this book, from " + _SEC_EST)
def throughput_ceiling() -> sp.Eq:
    """Largest tokens/s under the general step time, reached at every b >= b*.

    (eq-intensity-throughput-ceiling.)

    Above b* the step time is proportional to b, so b/t_token no longer depends on b; below b*
    the throughput rises with b. SymPy checks both facts before returning the plateau.
    """
    regimes = step_time_regimes()
    plateau = sp.simplify(b / regimes["above"])
    if b in plateau.free_symbols:
        raise ArithmeticError("throughput above b* depends on b")
    rising = sp.simplify(sp.diff(b / regimes["below"], b))
    if not rising.is_positive:
        raise ArithmeticError("throughput below b* is not increasing")
    return sp.Eq(tok_rate_max, sp.factor(plateau))


# --- numeric helpers --------------------------------------------------------------------------

_STEP_ARGS = (b, kv_bytes, seq_kv, p, n_param, n_gpu, hbm_bw, flops)


def _step_inputs(batch, *, n_params, weight_bytes, kv_bytes_per_token, context, n_chips,
                 chip_flops, chip_bandwidth) -> tuple[float, ...]:
    return (
        positive("batch", batch),
        positive("kv_bytes_per_token", kv_bytes_per_token, allow_zero=True),
        positive("context", context, allow_zero=True),
        positive("weight_bytes", weight_bytes),
        positive("n_params", n_params),
        positive("n_chips", n_chips),
        positive("chip_bandwidth", chip_bandwidth),
        positive("chip_flops", chip_flops),
    )


def decode_step_time(batch, *, n_params, weight_bytes, kv_bytes_per_token, context, n_chips,
                     chip_flops, chip_bandwidth) -> float:
    """General decode step time in seconds (eq-intensity-step-time) for one set of scalars.

    ``kv_bytes_per_token`` and ``context`` may be zero (no attention, as in Appendix A).
    Raises InputError naming the field on bad input.
    """
    values = _step_inputs(batch, n_params=n_params, weight_bytes=weight_bytes,
                          kv_bytes_per_token=kv_bytes_per_token, context=context,
                          n_chips=n_chips, chip_flops=chip_flops, chip_bandwidth=chip_bandwidth)
    return float(compile_fn(step_time(), _STEP_ARGS)(*values))


def decode_step_time_min(batch, *, n_params, weight_bytes, kv_bytes_per_token, context,
                         n_chips, chip_bandwidth) -> float:
    """Memory-bound lower bound on the step time in seconds (eq-intensity-step-time-min)."""
    values = _step_inputs(batch, n_params=n_params, weight_bytes=weight_bytes,
                          kv_bytes_per_token=kv_bytes_per_token, context=context,
                          n_chips=n_chips, chip_flops=1.0, chip_bandwidth=chip_bandwidth)
    return float(compile_fn(step_time_min(), _STEP_ARGS[:-1])(*values[:-1]))


def critical_batch_of(gpu, weight_bytes: float = 2.0, compute_bits: int = 16) -> float:
    """b* = p·C/(2·B) of a hardware preset at its uncapped peaks (eq-intensity-critical-batch).

    ``compute_bits`` picks the preset's FLOP/s (16: bf16 arithmetic, 8: int8 x int8).
    """
    p_value = positive("weight_bytes", weight_bytes)
    rate = gpu.flops(compute_bits)
    return float(compile_fn(critical_batch(), (p, flops, hbm_bw))(p_value, rate, gpu.bandwidth()))
