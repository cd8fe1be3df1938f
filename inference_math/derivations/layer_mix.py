"""Layer mixes: counting a model whose layers differ, group by group.

Today's open models are not the uniform stacks of Erdil (2025): DeepSeek-V3 puts three dense layers
ahead of its MoE layers, gpt-oss alternates sliding-window and full attention, Llama 4 Maverick
alternates dense and MoE layers and Qwen3.5 puts three linear-attention layers between full ones.
A model is therefore described as G layer groups, group i holding L_i identical layers, and each
count is a sum over the groups of L_i times the count of one layer of that group. The per-layer
counts below are the matrices of each block (vectors such as norms, biases and attention sinks are
left out, as in the reference code; they are below 0.1% of every model counted here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    bits_elem,
    bits_q,
    bits_scale,
    bits_w,
    block_elems,
    ctx,
    d_ff,
    d_ff_shared,
    d_head,
    d_lk,
    d_lv,
    d_model,
    d_v,
    grp,
    k_conv,
    kv_layer,
    kv_seq,
    m_kv,
    m_q,
    n_active,
    n_active_param,
    n_attn_layer,
    n_experts,
    n_ff_layer,
    n_ff_layer_active,
    n_groups,
    n_kv,
    n_layers,
    n_lk,
    n_lv,
    n_mtp,
    n_param,
    n_param_mtp,
    n_q,
    n_quant,
    n_sh,
    p_act,
    p_state,
    state_layer,
    weight_mem,
    window,
)
from . import architecture, deepseek_serving, kv_cache

_HF = "Hugging Face transformers model code"
_DSV3 = "DeepSeek-AI (2024), DeepSeek-V3 technical report, sec. 2"


def per_group(symbol: sp.Symbol) -> sp.Indexed:
    """The value of a per-layer quantity in layer group i: ``symbol`` indexed by i."""
    return sp.Indexed(symbol, grp)


def _over_groups(summand: sp.Expr) -> sp.Sum:
    return sp.Sum(summand, (grp, 1, n_groups))


# --- one layer: attention ------------------------------------------------------------------------

@derivation("eq-layers-attention-gqa", "Erdil (2025) reference code; Austin et al. (2025), "
            "'What about memory?'")
def attention_params_gqa() -> sp.Eq:
    """Attention parameters of one layer with n_kv key-value heads (eq-layers-attention-gqa).

    m_q query-sized input projections (2 with an output gate), m_kv key-value projections (1 when
    the values reuse the keys) and the output projection. With m_q = 1, m_kv = 2 and n_kv = n_q/g
    it is eq-arch-attention-params of one layer; MHA has n_kv = n_q, MQA n_kv = 1.
    """
    inputs = (m_q * n_q + m_kv * n_kv) * d_head * d_model
    output = n_q * d_head * d_model
    return sp.Eq(n_attn_layer, inputs + output)


def mla_matrices() -> dict[str, sp.Expr]:
    """The MLA matrices of one layer with value heads of width d_v (d_head: position-free q/k)."""
    matrices = dict(deepseek_serving.mla_matrices())
    matrices["W_UV"] = matrices["W_UV"].subs(d_head, d_v)
    matrices["W_O"] = matrices["W_O"].subs(d_head, d_v)
    return matrices


@derivation("eq-layers-attention-mla", "Mazurek and Schreiber (2025), 'Memory Loading: MLA', "
            f"values of their own width; {_DSV3}.1")
def attention_params_mla() -> sp.Eq:
    """Multi-head latent attention parameters of one layer (eq-layers-attention-mla).

    The eight matrices of eq-deepseek-mla-bytes (rotary projections included), the value
    up-projection and the output projection at value width d_v.
    """
    return sp.Eq(n_attn_layer, sp.factor(sum(mla_matrices().values()), d_model))


@derivation("eq-layers-attention-linear",
            f"this book: the Gated DeltaNet layer of Qwen3-Next and Qwen3.5 ({_HF}) counted by "
            "its matrix shapes, as Austin et al. (2025) count attention")
def attention_params_linear() -> sp.Eq:
    """Parameters of one gated linear-attention (Gated DeltaNet) layer (eq-layers-attention-linear).

    Query and key projections (n_lin,k heads), value and output-gate projections (n_lin,v heads),
    one decay and one update-strength gate per value head, a depthwise causal convolution of
    length k_conv over queries, keys and values, and the output projection.
    """
    keys = n_lk * d_lk
    values = n_lv * d_lv
    projections = (2 * keys + 2 * values) * d_model + 2 * n_lv * d_model
    convolution = k_conv * (2 * keys + values)
    output = values * d_model
    return sp.Eq(n_attn_layer, projections + convolution + output)


@derivation("eq-layers-attention-kda",
            "this book: Kimi Delta Attention of Kimi Team (2025), Kimi Linear "
            "(KimiDeltaAttention of its modeling_kimi.py), counted by its matrix shapes")
def attention_params_kda() -> sp.Eq:
    """Parameters of one Kimi Delta Attention layer (eq-layers-attention-kda).

    Query and key projections (n_lin,k heads) and the value projection (n_lin,v heads) with
    their short convolutions, as Gated DeltaNet's; one update-strength gate per value head; a
    decay gate and an output gate, each low-rank (d_model to d_lin,v, then to every value
    head's d_lin,v channels); and the output projection. Its state is eq-layers-state-linear.
    """
    keys = n_lk * d_lk
    values = n_lv * d_lv
    projections = (2 * keys + values) * d_model + n_lv * d_model
    convolution = k_conv * (2 * keys + values)
    low_rank_gates = 2 * (d_model * d_lv + d_lv * values)
    output = values * d_model
    return sp.Eq(n_attn_layer, projections + convolution + low_rank_gates + output)


# --- one layer: feed-forward ---------------------------------------------------------------------

@derivation("eq-layers-ff-dense", "Erdil (2025), sec. 3.2 and reference code")
def ff_params_dense() -> sp.Eq:
    """Feed-forward parameters of one dense layer: eq-arch-ff-params with one layer and one expert.

    (eq-layers-ff-dense.) Every token multiplies all of them.
    """
    return sp.Eq(n_ff_layer, architecture.feedforward_params().rhs.subs({n_layers: 1, n_experts: 1}))


def _moe_ff(experts: sp.Expr) -> sp.Expr:
    expert_width = n_ff_params_per_width()
    router = n_experts * d_model
    return expert_width * (experts * d_ff + n_sh * d_ff_shared) + router


def n_ff_params_per_width() -> sp.Expr:
    """Parameters of a gated expert per unit of its width: (m_in + m_out)·d_model."""
    return ff_params_dense().rhs / d_ff


@derivation("eq-layers-ff-moe", f"Erdil (2025), sec. 3.2, with the shared experts and router of {_DSV3}.2")
def ff_params_moe() -> sp.Eq:
    """Feed-forward parameters of one MoE layer (eq-layers-ff-moe).

    n_expert routed experts of width d_ff, n_sh shared experts of width d_sh (0 for Mixtral and
    Qwen3; Gemma 4's dense MLP beside its experts is one) and the router, an n_expert x d_model
    matrix.
    """
    return sp.Eq(n_ff_layer, _moe_ff(n_experts))


@derivation("eq-layers-ff-moe-active",
            f"Erdil (2025), eq. 21, with the shared experts and router of {_DSV3}.2")
def ff_params_moe_active() -> sp.Eq:
    """Feed-forward parameters one token multiplies in an MoE layer (eq-layers-ff-moe-active).

    Its n_active routed experts, every shared expert and the whole router (every token is scored
    against every expert).
    """
    return sp.Eq(n_ff_layer_active, _moe_ff(n_active))


# --- one layer: the cache ------------------------------------------------------------------------

@derivation("eq-layers-kv-gqa", "Austin et al. (2025), 'What about memory?'")
def kv_bytes_gqa() -> sp.Eq:
    """KV-cache bytes one token leaves in one attention layer: eq-kv-bytes-per-token at L = 1.

    (eq-layers-kv-gqa.)
    """
    return sp.Eq(kv_layer, kv_cache.bytes_per_token().rhs.subs(n_layers, 1))


@derivation("eq-layers-kv-mla", "Mazurek and Schreiber (2025), 'KV Cache'")
def kv_bytes_mla() -> sp.Eq:
    """Cache bytes one token leaves in one MLA layer, latent and rotary key (eq-layers-kv-mla).

    eq-deepseek-kv-bytes at L = 1: it has no n_q, so the cache does not grow with the heads.
    """
    return sp.Eq(kv_layer, deepseek_serving.kv_bytes_per_token_mla_rope().rhs.subs(n_layers, 1))


@derivation("eq-layers-state-linear",
            f"this book: the Gated DeltaNet state of Qwen3-Next and Qwen3.5 ({_HF}), in place of "
            "the KV cache of Austin et al. (2025)")
def state_bytes_linear() -> sp.Eq:
    """Constant state of one linear-attention layer per sequence (eq-layers-state-linear).

    A d_lin,k x d_lin,v matrix per value head (in p_state bytes: Qwen3.5 keeps it in float32) and
    the last k_conv - 1 inputs of the convolution; neither grows with the context.
    """
    recurrent = n_lv * d_lk * d_lv * p_state
    convolution = (k_conv - 1) * (2 * n_lk * d_lk + n_lv * d_lv) * p_act
    return sp.Eq(state_layer, recurrent + convolution)


# --- sums over the layer groups ------------------------------------------------------------------

@derivation("eq-layers-kv-context", "this book, from Austin et al. (2025), with sliding windows")
def kv_bytes_at_context() -> sp.Eq:
    """Cache bytes of one sequence at context ℓ, summed over the layer groups (eq-layers-kv-context).

    A layer keeps min(ℓ, W) tokens: W is its sliding window or attention chunk, infinite for full
    attention; a linear-attention layer keeps its constant state instead (κ = 0, σ > 0).
    """
    held = sp.Min(ctx, per_group(window))
    layer = per_group(kv_layer) * held + per_group(state_layer)
    return sp.Eq(kv_seq, _over_groups(per_group(n_layers) * layer))


@derivation("eq-layers-total-params", "Erdil (2025), eq. 20, summed over layer groups")
def total_params() -> sp.Eq:
    """All parameters: the layers of every group plus the embeddings (eq-layers-total-params).

    eq-moe-total-params with N_attn + N_ff written as a sum over the groups of L_i·(A_i + F_i).
    """
    layers = per_group(n_layers) * (per_group(n_attn_layer) + per_group(n_ff_layer))
    return sp.Eq(n_param, _over_groups(layers) + kv_cache.embedding_params().rhs)


@derivation("eq-layers-active-params", "Erdil (2025), eq. 21, summed over layer groups")
def active_params() -> sp.Eq:
    """Parameters one token multiplies: every group's attention and active feed-forward
    parameters, and the embeddings (eq-layers-active-params).

    The embeddings are counted in full, as eq-moe-active-params does; some model cards leave the
    input embedding (a table lookup) out.
    """
    layers = per_group(n_layers) * (per_group(n_attn_layer) + per_group(n_ff_layer_active))
    return sp.Eq(n_active_param, _over_groups(layers) + kv_cache.embedding_params().rhs)


@derivation("eq-layers-mtp-params", f"Erdil (2025) counting of the multi-token prediction of {_DSV3}.2")
def mtp_params() -> sp.Eq:
    """Parameters of the multi-token-prediction module (eq-layers-mtp-params).

    n_MTP extra layers, each with its attention, its feed-forward block and a projection of the
    concatenated hidden state and next-token embedding (2·d_model wide) back to d_model; the
    embeddings and output head are shared with the main model.
    """
    return sp.Eq(n_param_mtp, n_mtp * (n_attn_layer + n_ff_layer + 2 * d_model**2))


@derivation("eq-layers-block-bits", "this book, from the OCP Microscaling (MX) formats (Rouhani et "
            "al. 2023), for the weight bytes of Erdil (2025)")
def block_quantized_bits() -> sp.Eq:
    """Bits per weight of a block-quantized format: element bits plus the block's scale shared
    among its n_block weights (eq-layers-block-bits). MXFP4: 4 + 8/32 = 4.25."""
    return sp.Eq(bits_q, bits_elem + bits_scale / block_elems)


@derivation("eq-layers-weight-bytes", "this book, extending the weight bytes p·N of Erdil (2025)")
def weight_bytes() -> sp.Eq:
    """Weight bytes with N_q parameters quantized to b_q bits and the rest at b_w bits
    (eq-layers-weight-bytes)."""
    return sp.Eq(weight_mem, (n_quant * bits_q + (n_param - n_quant) * bits_w) / 8)


# --- evaluation ----------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def compiled(expr: sp.Expr, args: tuple[sp.Symbol, ...]):
    """compile_fn of ``expr`` in ``args``, kept: a model's counts evaluate the same few
    expressions many times."""
    return compile_fn(expr, args)


def evaluate_at(eq: sp.Eq | sp.Expr, values: Mapping[sp.Symbol, float]) -> float:
    """core.numeric.evaluate of an expression at scalar values, through :func:`compiled`."""
    expr = eq.rhs if isinstance(eq, sp.Equality) else eq
    args = _arguments(expr)
    return float(compiled(expr, args)(*(values[a] for a in args)))


@lru_cache(maxsize=256)
def _arguments(expr: sp.Expr) -> tuple[sp.Symbol, ...]:
    return tuple(sorted(expr.free_symbols, key=sp.default_sort_key))


@lru_cache(maxsize=64)
def _plan(expr: sp.Expr):
    """The sums over groups of ``expr``, each with its summand's symbols, and the rest of it.

    Worked out once per expression: each sum's summand with the indexed values replaced by their
    symbols, and the expression with each sum replaced by a placeholder.
    """
    sums, dummies = [], {}
    for k, total in enumerate(sorted(expr.atoms(sp.Sum), key=sp.default_sort_key)):
        (index, low, high), summand = total.limits[0], total.function
        if (index, low, high) != (grp, 1, n_groups):
            raise ValueError(f"{total} is not a sum over the layer groups")
        body = summand.xreplace({item: item.base.label for item in summand.atoms(sp.Indexed)})
        sums.append((body, tuple(sorted(body.free_symbols, key=sp.default_sort_key))))
        dummies[total] = sp.Dummy(f"sum{k}", positive=True)
    rest = expr.xreplace(dummies)
    others = tuple(sorted(rest.free_symbols - set(dummies.values()), key=sp.default_sort_key))
    return tuple(sums), tuple(dummies.values()), rest, others


def evaluate_groups(eq: sp.Eq | sp.Expr, groups: Mapping[sp.Symbol, Sequence[float]],
                    scalars: Mapping[sp.Symbol, float] | None = None) -> float:
    """Evaluate a sum over layer groups: ``groups`` maps each per-layer symbol to its G values.

    Each ``Sum`` over i is compiled once with its per-group symbols as arrays (compile_fn) and
    summed; the rest of the expression is compiled with ``scalars``.
    """
    expr = eq.rhs if isinstance(eq, sp.Equality) else eq
    scalars = dict(scalars or {})
    sizes = {len(values) for values in groups.values()}
    if len(sizes) != 1:
        raise ValueError(f"every per-group symbol needs the same number of groups, got {sizes}")
    (count,) = sizes
    sums, dummies, rest, others = _plan(expr)
    values = []
    for body, args in sums:
        inputs = [np.asarray(groups[a], dtype=float) if a in groups else scalars[a] for a in args]
        values.append(float(np.sum(compiled(body, args)(*inputs))))
    values += [count if a is n_groups else scalars[a] for a in others]
    return float(compiled(rest, dummies + others)(*values))
