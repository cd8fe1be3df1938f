"""Counting a transformer: parameters and KV-cache bytes from its shape.

The counting follows the reference code of Erdil (2025) so that parameter totals match the
paper's tables: K and V heads are counted separately (2·n_q/g of them), SwiGLU experts have
m_in = 2 input matrices, every expert of every layer is counted, and the total includes
2·n_vocab·d_model of input and output embeddings.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    c_kv,
    c_q,
    d_ff,
    d_head,
    d_model,
    g,
    kv_bytes,
    n_attn,
    n_experts,
    n_ff,
    n_ff_in,
    n_ff_out,
    n_layers,
    n_q,
    n_unembed,
    p_act,
    vocab,
)


def kv_heads() -> sp.Expr:
    """Key plus value heads per layer: 2·n_q/g."""
    return 2 * n_q / g


@derivation("eq-arch-attention-params", "Erdil (2025), sec. 3.1 and reference code")
def attention_params() -> sp.Eq:
    """Attention parameters of all layers, grouped-query attention (eq-arch-attention-params).

    Q, K, V projections ((n_q + 2·n_q/g)·d_head·d_model) plus the output projection
    (n_q·d_head·d_model), in each of n_layers layers.
    """
    per_layer = (n_q + kv_heads()) * d_head * d_model + n_q * d_head * d_model
    return sp.Eq(n_attn, n_layers * per_layer)


@derivation("eq-arch-attention-params-mla", "Erdil (2025), sec. 3.1 and reference code")
def attention_params_mla() -> sp.Eq:
    """Attention parameters with multi-head latent attention (eq-arch-attention-params-mla).

    Down-projections to c_kv (for K and V) and c_q, up-projections from them to the heads, and
    the output projection.
    """
    per_layer = (
        2 * c_kv * d_model
        + c_q * d_model
        + kv_heads() * d_head * c_kv
        + n_q * d_head * c_q
        + n_q * d_head * d_model
    )
    return sp.Eq(n_attn, n_layers * per_layer)


@derivation("eq-arch-ff-params", "Erdil (2025), sec. 3.2 and reference code")
def feedforward_params() -> sp.Eq:
    """Feed-forward parameters of all layers and experts (eq-arch-ff-params)."""
    return sp.Eq(n_ff, n_layers * n_experts * (n_ff_in + n_ff_out) * d_model * d_ff)


@derivation("eq-arch-embedding-params", "Erdil (2025) reference code")
def embedding_params() -> sp.Eq:
    """Input and output embeddings, untied: 2·n_vocab·d_model (eq-arch-embedding-params)."""
    return sp.Eq(n_unembed, 2 * vocab * d_model)


@derivation("eq-arch-kv-bytes", "Erdil (2025), sec. 3.1")
def kv_cache_bytes_per_token() -> sp.Eq:
    """KV-cache bytes per token of context: (2·n_q/g)·d_head·n_layers·p_act (eq-arch-kv-bytes)."""
    return sp.Eq(kv_bytes, kv_heads() * d_head * n_layers * p_act)


@derivation("eq-arch-kv-bytes-mla", "Erdil (2025), sec. 3.1")
def kv_cache_bytes_per_token_mla() -> sp.Eq:
    """KV-cache bytes per token with MLA: the latent c_kv per layer (eq-arch-kv-bytes-mla)."""
    return sp.Eq(kv_bytes, c_kv * n_layers * p_act)
