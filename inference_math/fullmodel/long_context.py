"""Long context (Erdil 2025, section 4.3): reading the KV cache sets a floor on the cost of a token.

At every decoding step each sequence of the batch reads its whole KV cache, M_KV·ℓ bytes, from
HBM. Spread over N GPUs of bandwidth B, that alone takes M_KV·ℓ·b/(N·B) seconds per step, and the
instance and batch cancel out of the cost per token:

    c_KV = 10^6 · M_KV·ℓ/B · P/3600  $/Mtok                                (eq-longctx-kv-floor)

Attention over that cache does 4·d_head·n_q·n_layers·ℓ FLOP per token against
(2n_q/g)·d_head·n_layers·ℓ·p_act bytes read, an arithmetic intensity of

    I_attn = 2g/p_act  FLOP/byte                                 (eq-longctx-attention-intensity)

whatever the model's width or depth, so at long context the GQA group size g decides how far
below the GPU's FLOP/byte ratio decoding runs. Both are derived here from the full model's own
terms (eq-full-memory-time, eq-full-flops, eq-arch-kv-bytes, eq-search-cost), not typed.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_mu,
    ctx,
    flops,
    hbm_bw,
    intensity_attn,
    kv_bytes,
    n_gpu,
    n_param,
    n_pp,
    p,
    q_len,
    r_draft,
    t_draft,
    t_target,
    t_token,
    usd_mtok_floor,
)
from ..derivations import architecture as arch
from . import full_model as fm
from .search_rules import cost_per_million_tokens
from .speculative import spec_latency


def kv_read_time() -> sp.Expr:
    """Seconds per step spent reading the KV cache: the KV term of eq-full-memory-time.

    Each of the N_PP micro-batches of b/N_PP sequences reads its cache, so the pipeline degree
    cancels: M_KV·ℓ·b/(N·B).
    """
    rest = sp.expand(fm.memory_parts()["rest"])
    kv_term = sp.Add(*(term for term in sp.Add.make_args(rest) if term.has(kv_bytes)))
    return sp.simplify(kv_term.subs(b_mu, b / n_pp))


@derivation("eq-longctx-kv-floor", "Erdil (2025), sec. 4.3")
def kv_floor() -> sp.Eq:
    """Cost floor of reading the KV cache once per generated token (eq-longctx-kv-floor).

    eq-search-cost with the token latency replaced by the KV read time alone: the instance size
    N and the batch b cancel, leaving 10^6·M_KV·ℓ·P/(3600·B) $/Mtok.
    """
    cost = cost_per_million_tokens().rhs.subs(t_token, kv_read_time())
    return sp.Eq(usd_mtok_floor, sp.simplify(cost))


def attention_flops_per_token(mla: bool = False) -> sp.Expr:
    """FLOPs of attending over the cache for one new token (eq-full-flops at b = q = 1)."""
    return fm.attention_flops(mla).subs({b: 1, q_len: 1})


def kv_bytes_per_sequence(mla: bool = False) -> sp.Expr:
    """Bytes of one sequence's cache, M_KV·ℓ, with M_KV from eq-arch-kv-bytes(-mla)."""
    per_token = arch.kv_cache_bytes_per_token_mla() if mla else arch.kv_cache_bytes_per_token()
    return per_token.rhs * ctx


@derivation("eq-longctx-attention-intensity", "Erdil (2025), sec. 4.3")
def attention_intensity() -> sp.Eq:
    """FLOPs of attention per byte of KV cache read (eq-longctx-attention-intensity): 2g/p_act."""
    ratio = attention_flops_per_token(mla=False) / kv_bytes_per_sequence(mla=False)
    return sp.Eq(intensity_attn, sp.simplify(ratio))


@derivation("eq-longctx-attention-intensity-mla", "Erdil (2025), sec. 4.3 and reference code")
def attention_intensity_mla() -> sp.Eq:
    """The same ratio for multi-head latent attention as the code counts it: 4·n_q/p_act
    (eq-longctx-attention-intensity-mla).

    Every query head attends with width c_kv over one cached latent that serves as both key and
    value, so MLA sits in eq-longctx-attention-intensity with 2n_q/g = 1, i.e. g = 2n_q.
    """
    ratio = attention_flops_per_token(mla=True) / kv_bytes_per_sequence(mla=True)
    return sp.Eq(intensity_attn, sp.simplify(ratio))


def attention_utilization_bound() -> sp.Expr:
    """Highest arithmetic utilization of a step that only reads the cache: I_attn·B/C.

    The step takes at least its memory time (bytes/B) and uses I_attn·bytes/C of arithmetic time.
    """
    return intensity_attn * hbm_bw / flops


def attention_flop_floor(mla: bool = False) -> sp.Expr:
    """$/Mtok of the attention arithmetic alone (eq-search-cost with the attention FLOP time).

    Like eq-longctx-kv-floor the instance and batch cancel: 10^6·F_attn·P/(3600·C).
    """
    flop_time = attention_flops_per_token(mla) * b / (n_gpu * flops)
    return sp.simplify(cost_per_million_tokens().rhs.subs(t_token, flop_time))


@derivation("eq-longctx-kv-weight-crossover", "Erdil (2025), sec. 4.3")
def kv_weight_crossover_batch() -> sp.Eq:
    """Batch beyond which a step reads more KV cache than weights: M_KV·ℓ·b = p·N_param
    (eq-longctx-kv-weight-crossover)."""
    (solution,) = sp.solve(sp.Eq(kv_bytes * ctx * b, p * n_param), b)
    return sp.Eq(b, solution)


def speculative_floor_factor() -> sp.Expr:
    """Factor by which speculative decoding lowers the floor of a step bound by KV reads.

    eq-spec-latency over t_P, with t_Q = t_P/r: (1 − α)(1 + γ/r)/(1 − α^γ). When both passes
    only read their caches on the same instance and batch, r is the ratio of the target's to the
    drafter's KV bytes per token: one target read of the cache now serves (1 − α^γ)/(1 − α)
    tokens, at the price of γ drafter reads of the drafter's (smaller) cache.
    """
    expr = spec_latency().rhs.subs(t_draft, t_target / r_draft) / t_target
    return sp.simplify(expr)
