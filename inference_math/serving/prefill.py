"""Prefill in the full model: time to first token, the price of input tokens, and the split of
disaggregated serving.

A prompt of T_in tokens is one forward pass of the full model (eq-full-forward-latency) with
q = T_in tokens per sequence after a context of ℓ = 0: the attention term's mean context
ℓ + (q − 1)/2 already makes its arithmetic grow with the square of the prompt (causal attention,
each token attending to the ones before it), the weight matmuls see T_in tokens at once, and
the all-reduces carry the prompt's activations. With pipeline parallelism the prompt is one
micro-batch (b_μ = 1, b = N_PP) crossing every stage, so the same terms hold at any N_PP.

    t_TTFT = t_fwd(q = T_in, ℓ = 0, b_μ = 1)                        (eq-prefill-ttft)
    c_in = 10⁶ · N · t_prefill / (b · T_in) · P / 3600               (eq-prefill-input-cost)
    r_PD = ρ_io · c_in / c_out                                       (eq-prefill-disagg-ratio)

The prompt's own KV-cache writes (T_in · KV bytes) are not counted: the full model's memory term
reads the cache of the context ℓ, which is empty here.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_mu,
    c_kv,
    ctx,
    d_head,
    n_layers,
    n_pp,
    n_q,
    price,
    q_len,
    r_pd,
    rho_io,
    t_flop,
    t_mem,
    t_prefill,
    t_prompt,
    t_token,
    t_ttft,
    tok_rate,
    usd_mtok_full,
    usd_mtok_in,
)
from ..fullmodel import full_model as fm
from ..fullmodel.search_rules import cost_per_million_tokens

#: The prefill point of the full model's forward pass: q = T_in, an empty cache, one prompt
#: per micro-batch.
PROMPT_PASS = {q_len: t_prompt, ctx: 0, b: n_pp, b_mu: 1}


def _at_prompt(expr: sp.Expr) -> sp.Expr:
    return expr.subs(PROMPT_PASS, simultaneous=True)


@derivation("eq-prefill-ttft", "this book, from Erdil (2025) eqs. 29-34 (eq-full-forward-latency)")
def ttft(mla: bool = False) -> sp.Eq:
    """Time to first token (eq-prefill-ttft): eq-full-forward-latency at q = T_in, ℓ = 0, b_μ = 1.

    The memory (eq-full-memory-time) and arithmetic (eq-full-flop-time) terms are written out at
    that point; the network time keeps its symbol (its collectives carry T_in tokens'
    activations). The arithmetic has a T_in² term from attention's mean context (T_in − 1)/2.
    """
    latency = fm.forward_latency().rhs.subs({
        t_mem: _at_prompt(fm.memory_time(mla).rhs), t_flop: prompt_flop_time(mla)})
    return sp.Eq(t_ttft, latency)


def prompt_flop_time(mla: bool = False) -> sp.Expr:
    """eq-full-flop-time at the prefill point: the arithmetic of eq-prefill-ttft, with attention's
    d_head·n_q·L·(T_in − 1) per prompt token collected."""
    attention = (c_kv if mla else d_head) * n_q * n_layers
    flop = sp.expand(_at_prompt(fm.flop_time(mla).rhs))
    return sp.factor_terms(sp.collect(flop, attention))


@derivation("eq-prefill-input-cost", "this book, from Erdil (2025) sec. 3 (eq-search-cost)")
def input_cost() -> sp.Eq:
    """Price of a million input tokens at cost (eq-prefill-input-cost).

    eq-search-cost with the GPU time of an input token: a pass prefilling b prompts of T_in
    tokens in t_prefill costs N·t_prefill GPU-seconds for b·T_in tokens (t_token = t_prefill/T_in
    per sequence). At b = 1 (per micro-batch) t_prefill is eq-prefill-ttft.
    """
    cost = cost_per_million_tokens().rhs.subs(t_token, t_prefill / t_prompt)
    return sp.Eq(usd_mtok_in, sp.simplify(cost))


@derivation("eq-prefill-disagg-ratio", "this book, from Erdil (2025) sec. 3 (eq-search-cost)")
def disaggregated_ratio() -> sp.Eq:
    """Prefill GPUs per decode GPU of disaggregated serving (eq-prefill-disagg-ratio).

    A traffic of R output tokens/s brings ρ_io·R input tokens/s. Each pool needs as many GPUs as
    GPU-seconds per second of its traffic; at one price P per GPU-hour a pool's GPU-seconds per
    token are its price per token over P, so the ratio of the pools is ρ_io·c_in/c_out.
    """
    rate = tok_rate  # output tokens/s of the traffic; cancels
    per_gpu_second = 3600 / (10**6 * price)  # GPU-seconds per token per $/Mtok (eq-search-cost)
    prefill_gpus = rho_io * rate * usd_mtok_in * per_gpu_second
    decode_gpus = rate * usd_mtok_full * per_gpu_second
    return sp.Eq(r_pd, sp.simplify(prefill_gpus / decode_gpus))
