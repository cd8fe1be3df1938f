"""Compressed attention: a sliding window of plain entries, and the rest of the context pooled.

DeepSeek-V4 (the classes ``Compressor``, ``Indexer``, ``Attention`` and ``Block`` of its reference
``inference/model.py``, DeepSeek-AI 2026) gives every layer one cache head of width d_c (the key
is the value, multi-query), queries from a low-rank latent c_q, and an output projection in G_o
groups of rank r_o. Each layer keeps its last ℓ_W tokens uncompressed (a sliding window, 128)
and, by its entry of ``compress_ratios``:

* r_c = 0: nothing more (a sliding-window layer);
* r_c = 128 ("heavily compressed"): one entry per 128 tokens, a learned softmax-gated pooling
  of their projections; every query attends to all of them;
* r_c = 4 ("compressed sparse"): one entry per 4 tokens, the pooling windows overlapping (the
  compressor twice as wide, c_ov = 2); an indexer as DeepSeek-V3.2's (eq-sparse-*), but over
  the compressed entries and with a compressor of its own in place of a key projection, picks
  the top k entries each query attends to.

The compressor holds, per sequence, the projections and gate scores of the tokens not yet
pooled (``kv_state`` and ``score_state``, c_ov·r_c rows of c_ov·d_c elements each, FP32).
Every block mixes m_hc residual streams by hyper-connections: two matrices per layer, from the
m_hc·d_model streams to (2 + m_hc)·m_hc mixing weights.

The derivations give the parameters, the cache per token, the held and read bytes of one layer
per query. Vectors (norms, biases, attention sinks, the mixing weights' bases and scales) are
not counted, as no norm is in the book's counts.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    attn_c_params,
    c_ov,
    c_q,
    cmp_params,
    ctx,
    ctx_win,
    d_kv,
    d_model,
    hc_params,
    held_cmp,
    k_top,
    kv_idx,
    kv_layer,
    kv_win,
    m_hc,
    n_og,
    n_q,
    p_act,
    p_st,
    r_cmp,
    r_o,
    read_cmp,
    st_cmp,
)

_SOURCE = "DeepSeek-AI (2026), DeepSeek-V4, inference/model.py"


@derivation("eq-compressed-attn-params", _SOURCE + ", class Attention")
def attention_params() -> sp.Eq:
    """Attention parameters of one layer before its compressor and indexer
    (eq-compressed-attn-params): the query's down- and up-projection (d_model × c_q, then
    c_q × n_q·d_c), the one cache head's projection (d_model × d_c), and the grouped output:
    each of G_o groups maps its n_q·d_c/G_o head outputs to rank r_o (n_q·d_c·r_o in all),
    then G_o·r_o back to d_model."""
    matrices = {"wq_a": d_model * c_q, "wq_b": c_q * n_q * d_kv, "wkv": d_model * d_kv,
                "wo_a": n_og * (n_q * d_kv / n_og) * r_o, "wo_b": n_og * r_o * d_model}
    return sp.Eq(attn_c_params, sp.expand(sum(matrices.values())))


@derivation("eq-compressed-compressor-params", _SOURCE + ", class Compressor")
def compressor_params() -> sp.Eq:
    """Parameters of one compressor (eq-compressed-compressor-params): the projection of each
    token and its gate scores (d_model × c_ov·d_c each) and a learned score offset for each of
    the r_c positions of a pooling window (r_c × c_ov·d_c)."""
    return sp.Eq(cmp_params, 2 * d_model * c_ov * d_kv + r_cmp * c_ov * d_kv)


@derivation("eq-compressed-hc-params", _SOURCE + ", class Block")
def hyper_connection_params() -> sp.Eq:
    """Hyper-connection parameters of one layer (eq-compressed-hc-params): before attention and
    before the feed-forward block, a matrix from the m_hc streams of d_model to the
    (2 + m_hc)·m_hc weights that mix them (pre, post and the m_hc × m_hc combination)."""
    return sp.Eq(hc_params, 2 * (2 + m_hc) * m_hc * (m_hc * d_model))


@derivation("eq-compressed-cache", _SOURCE + ", classes Attention and Compressor")
def cache_bytes_per_token() -> sp.Eq:
    """Bytes one token adds to a compressed layer's pooled cache (eq-compressed-cache): one
    entry of d_c elements per r_c tokens, held as the reference code holds it (its FP8 is
    simulated in training; the cache is BF16, p_act bytes)."""
    return sp.Eq(kv_layer, d_kv * p_act / r_cmp)


@derivation("eq-compressed-state", _SOURCE + ", class Compressor")
def state_bytes() -> sp.Eq:
    """Bytes of one compressor's pending state per sequence (eq-compressed-state): the
    projections and the gate scores of c_ov·r_c tokens, c_ov·d_c elements each, in FP32."""
    return sp.Eq(st_cmp, 2 * (c_ov * r_cmp) * (c_ov * d_kv) * p_st)


@derivation("eq-compressed-held", "this book, from " + _SOURCE)
def held_bytes() -> sp.Eq:
    """Cache bytes one sequence holds in one layer at context ℓ (eq-compressed-held): the pooled
    entries and the indexer's keys (M_KV and M_I per token), the window's min(ℓ, ℓ_W) plain
    entries (M_W each) and the compressor's pending state. A dense layer is M_W = S_cmp = 0."""
    return sp.Eq(held_cmp, (kv_layer + kv_idx) * ctx + kv_win * sp.Min(ctx, ctx_win) + st_cmp)


@derivation("eq-compressed-read", "this book, from " + _SOURCE)
def read_bytes() -> sp.Eq:
    """Cache bytes one query reads in one layer at context ℓ (eq-compressed-read): the window's
    min(ℓ, ℓ_W) entries, the pooled entries of its top k_sel tokens (k_sel = r_c times the
    indexer's top k; all of them, k_sel = ∞, without an indexer), the indexer's keys of the whole
    context, and the compressor's state once per r_c tokens (when a window is pooled). A dense
    layer is M_W = S_cmp = 0, r_c = 1: eq-sparse-indexer-cache's rule 9."""
    return sp.Eq(read_cmp, kv_layer * sp.Min(ctx, k_top) + kv_idx * ctx
                 + kv_win * sp.Min(ctx, ctx_win) + st_cmp / r_cmp)
