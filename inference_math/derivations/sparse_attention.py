"""Sparse top-k attention: an indexer reads every cached key, the attention only the top k.

DeepSeek sparse attention (DeepSeek-V3.2; the class ``Indexer`` of DeepSeek-V3.2-Exp's
``inference/model.py``, github:deepseek-ai/DeepSeek-V3.2-Exp at commit
6d8cb70dfdd6f37c83c5208105a3e2c8da117485) adds to each MLA layer a *lightning indexer*:
H_I small query heads of width d_I (projected from the query latent), one key of width d_I per
token (projected from the hidden state), cached in FP8 with one FP32 scale per block of 128
elements, and one weight per head. Every query scores every cached token, Σ_h w_h·ReLU(q_h·k),
and the layer's attention then reads only the k_sel best-scoring tokens of the main (MLA)
cache.

So a sparse layer stores two caches per token (the main one and the indexer's keys) and, per
query, reads the indexer's keys of the whole context but only min(ℓ, k_sel) entries of the
main cache. The derivations here give the indexer's parameters, its cache per token, its FLOPs
per scored token, and the mean number of main-cache entries a query of a pass of q tokens
attends to; the full model's physical rules (:mod:`inference_math.fullmodel.physical_rules`)
compose them.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    blk_idx,
    blk_sz,
    c_q,
    ctx,
    ctx_read,
    d_head,
    d_idx,
    d_model,
    f_idx,
    g,
    idx_params,
    j_query,
    k_top,
    kv_idx,
    n_idx,
    n_q,
    p_act,
    p_idx,
    p_scale,
    q_len,
)

_SOURCE = "DeepSeek-AI (2025), DeepSeek-V3.2-Exp, inference/model.py, class Indexer"


@derivation("eq-sparse-indexer-params", _SOURCE)
def indexer_params() -> sp.Eq:
    """Parameters of one layer's indexer (eq-sparse-indexer-params): the query up-projection
    from the query latent (c_q × H_I·d_I), the key projection (d_model × d_I) and one weight
    per head (d_model × H_I). The key's LayerNorm is two vectors, not counted, as no norm is."""
    matrices = {"wq_b": c_q * n_idx * d_idx, "wk": d_model * d_idx, "weights_proj": d_model * n_idx}
    return sp.Eq(idx_params, sum(matrices.values()))


@derivation("eq-sparse-indexer-cache", _SOURCE)
def indexer_cache_bytes() -> sp.Eq:
    """Bytes of the indexer's key cache per token, one layer (eq-sparse-indexer-cache): d_I
    elements of p_I bytes and one scale of p_sc bytes per B_sc elements (DeepSeek: FP8 keys,
    an FP32 scale per 128, so 128 + 4 = 132 bytes)."""
    return sp.Eq(kv_idx, d_idx * p_idx + p_scale * d_idx / blk_idx)


@derivation("eq-sparse-indexer-flops", _SOURCE)
def indexer_flops() -> sp.Eq:
    """Indexer FLOPs per query per cached token, one layer (eq-sparse-indexer-flops): H_I dot
    products of width d_I (2·d_I each), and each head's score weighted and summed (2 each)."""
    dot_products = n_idx * 2 * d_idx
    weighting = n_idx * 2
    return sp.Eq(f_idx, sp.factor(dot_products + weighting))


def _mean_min(upper) -> sp.Expr:
    """(1/q)·Σ_j min(ℓ + j, k_sel) over the queries j < ``upper`` that have not yet reached
    k_sel, and k_sel for the others, summed in closed form by SymPy."""
    below = sp.summation(ctx + j_query, (j_query, 0, upper - 1))
    return (below + (q_len - upper) * k_top) / q_len


@derivation("eq-sparse-mean-read", "this book, from " + _SOURCE)
def mean_read() -> sp.Eq:
    """Mean number of main-cache entries a query of a pass attends to (eq-sparse-mean-read).

    Query j of a pass of q tokens at context ℓ sees ℓ + j earlier tokens (the book's causal
    count, whose mean is ℓ + (q − 1)/2) and attends to min(ℓ + j, k_sel) of them. The mean over
    the pass, (1/q)·Σ_j min(ℓ + j, k_sel), is summed in three cases: every query below k_sel,
    every query at it, and the queries j < k_sel − ℓ below it with the rest at it.
    """
    all_below = sp.simplify(_mean_min(q_len))
    some_below = sp.factor(sp.simplify(_mean_min(k_top - ctx)))
    return sp.Eq(ctx_read, sp.Piecewise((all_below, k_top >= ctx + q_len - 1),
                                        (k_top, k_top <= ctx),
                                        (some_below, True)))


# --- block-sparse attention: the same terms with a block's mean key as the indexer's key ---------

_MOBA = "Lu et al. (2025), MoBA: Mixture of Block Attention for Long-Context LLMs"


@derivation("eq-sparse-block-cache", _MOBA)
def block_summary_bytes() -> sp.Eq:
    """Bytes per token of a block-sparse layer's block summaries (eq-sparse-block-cache): one
    mean-pooled key per block of B_blk tokens and per KV head (n_q/g heads of d_head), held at
    the cache's precision beside the keys and values it summarizes. They are the indexer's key
    cache M_I of rule 9; the layer attends to the k_sel = k_blk·B_blk tokens of its best
    blocks."""
    return sp.Eq(kv_idx, (n_q / g) * d_head * p_act / blk_sz)


@derivation("eq-sparse-block-flops", _MOBA)
def block_scoring_flops() -> sp.Eq:
    """Scoring FLOPs per query per cached token of a block-sparse layer (eq-sparse-block-flops):
    every query head dots every block's mean key of its KV head (2·d_head each), once per
    B_blk tokens. They are the indexer's F_I of rule 9; there are no indexer weights."""
    return sp.Eq(f_idx, n_q * 2 * d_head / blk_sz)
