"""Layer mixes (derivations.layer_mix): each identity symbolically, numerically and as a property."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.core.numeric import evaluate
from inference_math.derivations import architecture, deepseek_serving, kv_cache, layer_mix, moe

GATED = {S.n_ff_in: 2, S.n_ff_out: 1}


def _sum_groups(eq, count):
    """The sum over groups written out for ``count`` groups."""
    return eq.rhs.subs(S.n_groups, count).doit()


def _ix(symbol, i):
    return sp.Indexed(symbol, i)


# --- per-layer attention --------------------------------------------------------------------------

def test_gqa_layer_times_layers_is_the_papers_attention_count():
    """m_q = 1, m_kv = 2, n_kv = n_q/g: L·A is eq-arch-attention-params."""
    one = layer_mix.attention_params_gqa().rhs.subs({S.m_q: 1, S.m_kv: 2, S.n_kv: S.n_q / S.g})
    assert sp.simplify(S.n_layers * one - architecture.attention_params().rhs) == 0
    # and eq-kv-attention-params (the scaling book's 2·D·H·(N + K) per layer)
    plain = layer_mix.attention_params_gqa().rhs.subs({S.m_q: 1, S.m_kv: 2})
    assert sp.simplify(S.n_layers * plain - kv_cache.attention_params().rhs) == 0


def test_gqa_layer_numbers():
    """Llama 3.1 70B: 8192·128·(64 + 8 + 8 + 64); Qwen3.5's gated layer doubles the queries;
    Gemma 4's global layer (K = V) has no value projection."""
    eq = layer_mix.attention_params_gqa()
    base = {S.d_model: 8192, S.d_head: 128, S.n_q: 64, S.n_kv: 8}
    assert evaluate(eq, {**base, S.m_q: 1, S.m_kv: 2}) == 8192 * 128 * 144
    qwen35 = {S.d_model: 4096, S.d_head: 256, S.n_q: 32, S.n_kv: 2, S.m_q: 2, S.m_kv: 2}
    assert evaluate(eq, qwen35) == 4096 * 16384 + 2 * 4096 * 512 + 8192 * 4096
    gemma = {S.d_model: 2816, S.d_head: 512, S.n_q: 16, S.n_kv: 2, S.m_q: 1, S.m_kv: 1}
    assert evaluate(eq, gemma) == 2816 * 8192 + 2816 * 1024 + 8192 * 2816


def test_mla_layer_is_the_posts_matrices_with_value_width():
    eq = layer_mix.attention_params_mla()
    posts = sum(deepseek_serving.mla_matrices().values())
    assert sp.expand(eq.rhs.subs(S.d_v, S.d_head) - posts) == 0
    # Every head adds its query, key and value up-projections and its output projection.
    per_head = sp.diff(eq.rhs, S.n_q)
    expected = S.c_q * (S.d_head + S.d_rope) + S.c_kv * (S.d_head + S.d_v) + S.d_v * S.d_model
    assert sp.expand(per_head - expected) == 0


def test_mla_layer_numbers_deepseek_v3():
    """q_a, q_b, kv_a (latent and rotary key), kv_b, o of DeepSeek-V3, from their shapes."""
    values = {S.d_model: 7168, S.c_q: 1536, S.c_kv: 512, S.d_rope: 64, S.d_head: 128,
              S.d_v: 128, S.n_q: 128}
    hand = (7168 * 1536 + 1536 * 128 * (128 + 64) + 7168 * (512 + 64)
            + 512 * 128 * (128 + 128) + 128 * 128 * 7168)
    assert hand == 187_105_280
    assert evaluate(layer_mix.attention_params_mla(), values) == hand


def test_linear_attention_layer_numbers_qwen35():
    """Qwen3.5's Gated DeltaNet: in_proj_qkv, in_proj_z, in_proj_b/a, conv1d, out_proj."""
    values = {S.d_model: 4096, S.n_lk: 16, S.d_lk: 128, S.n_lv: 64, S.d_lv: 128, S.k_conv: 4}
    keys, vals = 16 * 128, 64 * 128
    hand = (4096 * (2 * keys + vals) + 4096 * vals + 2 * 64 * 4096 + 4 * (2 * keys + vals)
            + vals * 4096)
    assert evaluate(layer_mix.attention_params_linear(), values) == hand


# --- per-layer feed-forward -----------------------------------------------------------------------

def test_dense_layer_is_one_layer_one_expert_of_the_papers_count():
    eq = layer_mix.ff_params_dense()
    assert sp.simplify(S.n_layers * S.n_experts * eq.rhs
                       - architecture.feedforward_params().rhs) == 0
    assert evaluate(eq, {S.d_model: 8192, S.d_ff: 28672, **GATED}) == 3 * 8192 * 28672


def test_moe_layer_without_shared_experts_is_the_papers_count_plus_router():
    total, active = layer_mix.ff_params_moe().rhs, layer_mix.ff_params_moe_active().rhs
    routed = architecture.feedforward_params().rhs.subs(S.n_layers, 1)
    assert sp.expand(total.subs(S.n_sh, 0) - routed - S.n_experts * S.d_model) == 0
    # Total minus active: the experts a token does not use.
    gap = (S.n_ff_in + S.n_ff_out) * S.d_model * S.d_ff * (S.n_experts - S.n_active)
    assert sp.expand(total - active - gap) == 0


def test_moe_layer_numbers_deepseek_v3():
    values = {S.d_model: 7168, S.d_ff: 2048, S.n_experts: 256, S.n_active: 8, S.n_sh: 1,
              S.d_ff_shared: 2048, **GATED}
    expert = 3 * 7168 * 2048
    assert evaluate(layer_mix.ff_params_moe(), values) == 257 * expert + 256 * 7168
    assert evaluate(layer_mix.ff_params_moe_active(), values) == 9 * expert + 256 * 7168


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 512), st.integers(1, 16), st.integers(0, 4), st.integers(64, 8192))
def test_moe_params_grow_with_experts_and_active_ones_do_not(experts, top_k, shared, width):
    """Property: one more expert adds (m_in + m_out)·d_model·d_ff + d_model parameters; the
    active parameters change only by the router's new row."""
    top_k = min(top_k, experts)
    values = {S.d_model: 1024, S.d_ff: width, S.n_active: top_k, S.n_sh: shared,
              S.d_ff_shared: width, **GATED}
    total = [evaluate(layer_mix.ff_params_moe(), {**values, S.n_experts: e})
             for e in (experts, experts + 1)]
    active = [evaluate(layer_mix.ff_params_moe_active(), {**values, S.n_experts: e})
              for e in (experts, experts + 1)]
    assert total[1] - total[0] == 3 * 1024 * width + 1024
    assert active[1] - active[0] == 1024


# --- per-layer cache ------------------------------------------------------------------------------

def test_kv_layer_is_the_books_bytes_per_token_of_one_layer():
    assert sp.simplify(S.n_layers * layer_mix.kv_bytes_gqa().rhs
                       - kv_cache.bytes_per_token().rhs) == 0
    g_form = layer_mix.kv_bytes_gqa().rhs.subs(S.n_kv, S.n_q / S.g)
    assert sp.simplify(S.n_layers * g_form - architecture.kv_cache_bytes_per_token().rhs) == 0
    assert evaluate(layer_mix.kv_bytes_gqa(), {S.n_kv: 8, S.d_head: 64, S.p_act: 2}) == 2048


def test_mla_cache_has_no_head_count():
    eq = layer_mix.kv_bytes_mla()
    assert S.n_q not in eq.rhs.free_symbols
    assert sp.expand(eq.rhs - (S.c_kv + S.d_rope) * S.p_act) == 0
    assert evaluate(eq, {S.c_kv: 512, S.d_rope: 64, S.p_act: 2}) == 1152


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 256))
def test_mla_cache_independent_of_heads_property(heads):
    """Property: DeepSeek-V3's config with any head count caches the same bytes per token."""
    from inference_math.presets import hf_config as hc

    config = hc.load_config(hc.FIXTURES / "deepseek-ai--DeepSeek-V3.config.json")
    base = hc.parse(config)
    other = hc.parse({**config, "num_attention_heads": heads, "num_key_value_heads": heads})
    assert other.kv_bytes_per_token == base.kv_bytes_per_token == 61 * 1152
    assert other.total_params != base.total_params or heads == 128


def test_linear_state_does_not_grow_with_context():
    eq = layer_mix.state_bytes_linear()
    assert S.ctx not in eq.rhs.free_symbols and S.seq_kv not in eq.rhs.free_symbols
    values = {S.n_lk: 16, S.d_lk: 128, S.n_lv: 64, S.d_lv: 128, S.k_conv: 4, S.p_state: 4,
              S.p_act: 2}
    assert evaluate(eq, values) == 64 * 128 * 128 * 4 + 3 * (2 * 2048 + 8192) * 2


# --- sums over groups -----------------------------------------------------------------------------

def test_one_group_of_full_attention_is_bytes_per_token_times_context():
    expr = _sum_groups(layer_mix.kv_bytes_at_context(), 1)
    one = expr.subs({_ix(S.window, 1): sp.oo, _ix(S.state_layer, 1): 0})
    assert sp.simplify(one - _ix(S.n_layers, 1) * _ix(S.kv_layer, 1) * S.ctx) == 0


def test_a_window_stops_the_growth():
    expr = _sum_groups(layer_mix.kv_bytes_at_context(), 1).subs(_ix(S.state_layer, 1), 0)
    window = _ix(S.window, 1)
    beyond = expr.subs(S.ctx, window + S.ctx)  # ℓ = W + something >= W
    assert sp.simplify(beyond - _ix(S.n_layers, 1) * _ix(S.kv_layer, 1) * window) == 0


def test_one_group_total_and_active_are_eq_20_and_21():
    """G = 1: eq-layers-total-params is eq-moe-total-params with N_attn = L·A, N_ff = L·F."""
    L, A, F, Fa = (_ix(s, 1) for s in (S.n_layers, S.n_attn_layer, S.n_ff_layer,
                                        S.n_ff_layer_active))
    embed = kv_cache.embedding_params().rhs
    total = _sum_groups(layer_mix.total_params(), 1)
    paper = moe.total_params().rhs.subs({S.n_attn: L * A, S.n_ff: L * F, S.n_unembed: embed})
    assert sp.simplify(total - paper) == 0
    active = _sum_groups(layer_mix.active_params(), 1)
    paper = moe.active_params().rhs.subs({S.n_attn: L * A, S.n_ff: L * F, S.n_unembed: embed,
                                          S.s: F / Fa})
    assert sp.simplify(active - paper) == 0


def test_total_minus_active_is_the_unused_feed_forward():
    count = 3
    gap = _sum_groups(layer_mix.total_params(), count) - _sum_groups(layer_mix.active_params(),
                                                                     count)
    expected = sum(_ix(S.n_layers, i) * (_ix(S.n_ff_layer, i) - _ix(S.n_ff_layer_active, i))
                   for i in range(1, count + 1))
    assert sp.expand(gap - expected) == 0


def test_evaluate_groups_numbers():
    """gpt-oss-20b's cache at 1,000 tokens: 12 layers hold 128 tokens, 12 hold 1,000."""
    groups = {S.n_layers: [12, 12], S.kv_layer: [2048.0, 2048.0], S.window: [128, math.inf],
              S.state_layer: [0.0, 0.0]}
    got = layer_mix.evaluate_groups(layer_mix.kv_bytes_at_context(), groups, {S.ctx: 1000})
    assert got == 12 * 2048 * 128 + 12 * 2048 * 1000
    totals = layer_mix.evaluate_groups(
        layer_mix.total_params(), {S.n_layers: [3, 58], S.n_attn_layer: [1.0, 2.0],
                                   S.n_ff_layer: [10.0, 20.0]},
        {S.n_emb: 2, S.vocab: 100, S.d_model: 7})
    assert totals == 3 * 11 + 58 * 22 + 2 * 100 * 7


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 100), st.floats(1, 1e5), st.sampled_from([64, 1024, math.inf]),
                          st.floats(0, 1e7)), min_size=1, max_size=5),
       st.floats(0, 1e6), st.floats(0, 1e6))
def test_cache_grows_with_context_and_windows_cap_it(groups, ctx_a, ctx_b):
    """Property: the cache never shrinks as the context grows, and beyond the largest finite
    window it grows only through the full-attention layers."""
    values = {S.n_layers: [g[0] for g in groups], S.kv_layer: [g[1] for g in groups],
              S.window: [g[2] for g in groups], S.state_layer: [g[3] for g in groups]}

    def at(context):
        return layer_mix.evaluate_groups(layer_mix.kv_bytes_at_context(), values, {S.ctx: context})

    low, high = sorted((ctx_a, ctx_b))
    assert at(high) >= at(low) * (1 - 1e-12)
    slope = sum(n * kv for n, kv, w, _ in groups if math.isinf(w))
    start = 1024.0  # every finite window is full
    assert at(start + high) - at(start + low) == pytest.approx(slope * (high - low), rel=1e-9,
                                                               abs=1e-3)
    # the state term is paid once, whatever the context
    assert at(0.0) == pytest.approx(sum(n * state for n, _, _, state in groups))


def test_mtp_and_weight_bytes():
    mtp = layer_mix.mtp_params()
    assert evaluate(mtp, {S.n_mtp: 1, S.n_attn_layer: 10, S.n_ff_layer: 20, S.d_model: 3}) == 48
    assert sp.diff(mtp.rhs, S.n_mtp, 2) == 0
    bits = layer_mix.block_quantized_bits()
    assert bits.rhs.subs({S.bits_elem: 4, S.bits_scale: 8, S.block_elems: 32}) == sp.Rational(17, 4)
    w = layer_mix.weight_bytes().rhs
    # No quantized weights: p·N with p = b_w/8 bytes; all quantized: N·b_q/8.
    assert sp.simplify(w.subs(S.n_quant, 0) - S.bits_w / 8 * S.n_param) == 0
    assert sp.simplify(w.subs(S.n_quant, S.n_param) - S.bits_q / 8 * S.n_param) == 0
    assert evaluate(layer_mix.weight_bytes(), {S.n_quant: 100, S.bits_q: 4.25, S.bits_w: 16,
                                               S.n_param: 300}) == (425 + 3200) / 8


def test_evaluate_groups_refuses_mismatched_groups():
    with pytest.raises(ValueError, match="same number of groups"):
        layer_mix.evaluate_groups(layer_mix.kv_bytes_at_context(),
                                  {S.n_layers: [1, 2], S.kv_layer: [1.0], S.window: [1, 2],
                                   S.state_layer: [0, 0]}, {S.ctx: 1})
    arr = np.array([1.0])
    assert layer_mix.evaluate_groups(layer_mix.kv_bytes_at_context(),
                                     {S.n_layers: arr, S.kv_layer: arr, S.window: arr,
                                      S.state_layer: arr * 0}, {S.ctx: 5}) == 1.0


# --- more properties: one per identity not covered above ------------------------------------------

SHAPES = st.fixed_dictionaries({
    "d_model": st.integers(64, 16384), "d_head": st.integers(16, 512), "n_kv": st.integers(1, 16),
    "group": st.integers(1, 16)})


@settings(max_examples=60, deadline=None)
@given(SHAPES)
def test_gqa_attention_and_cache_order_mha_gqa_mqa(shape):
    """Property: fewer KV heads, fewer attention parameters and a smaller cache; dropping the
    value projection (K = V) saves exactly one K-sized matrix; the cache of MHA over that of n_kv
    heads is eq-kv-gqa-ratio."""
    n_q = shape["n_kv"] * shape["group"]
    base = {S.d_model: shape["d_model"], S.d_head: shape["d_head"], S.n_q: n_q, S.m_q: 1,
            S.p_act: 2}

    def attn(n_kv, m_kv=2):
        return evaluate(layer_mix.attention_params_gqa(), {**base, S.n_kv: n_kv, S.m_kv: m_kv})

    def kv(n_kv):
        return evaluate(layer_mix.kv_bytes_gqa(), {S.n_kv: n_kv, S.d_head: shape["d_head"],
                                                   S.p_act: 2})

    assert attn(n_q) >= attn(shape["n_kv"]) >= attn(1)
    assert attn(shape["n_kv"]) - attn(shape["n_kv"], 1) == (
        shape["d_model"] * shape["n_kv"] * shape["d_head"])
    assert kv(n_q) / kv(shape["n_kv"]) == pytest.approx(shape["group"])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 64), st.integers(16, 256), st.integers(1, 128), st.integers(16, 256),
       st.integers(2, 8), st.integers(256, 8192))
def test_linear_attention_params_and_state(n_k, d_k, n_v, d_v, conv, d_model):
    """Property: the layer's parameters are its matrices' shapes (q, k, v, z, b, a, conv, out)
    and its state grows with the value heads and the state precision, never with the context."""
    values = {S.d_model: d_model, S.n_lk: n_k, S.d_lk: d_k, S.n_lv: n_v, S.d_lv: d_v,
              S.k_conv: conv}
    shapes = [(d_model, n_k * d_k), (d_model, n_k * d_k), (d_model, n_v * d_v),
              (d_model, n_v * d_v), (d_model, n_v), (d_model, n_v),
              (conv, 2 * n_k * d_k + n_v * d_v), (n_v * d_v, d_model)]
    assert evaluate(layer_mix.attention_params_linear(), values) == sum(a * b for a, b in shapes)
    state = layer_mix.state_bytes_linear()
    small = evaluate(state, {**values, S.p_state: 2, S.p_act: 2})
    large = evaluate(state, {**values, S.p_state: 4, S.p_act: 2})
    more = evaluate(state, {**values, S.n_lv: n_v + 1, S.p_state: 2, S.p_act: 2})
    assert small < large and small < more
    assert large - small == 2 * n_v * d_k * d_v


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 100), st.floats(1e3, 1e9), st.floats(0, 1e10),
                          st.floats(0, 1)), min_size=1, max_size=6),
       st.integers(1000, 300000), st.integers(64, 16384), st.sampled_from([1, 2]))
def test_sums_over_groups_are_the_written_out_sums(groups, vocab, d_model, n_emb):
    """Property: evaluate_groups gives the sum written out by SymPy for G groups; active never
    exceeds total; the dense case (F_active = F) makes them equal."""
    count = len(groups)
    layers = [g[0] for g in groups]
    attn = [g[1] for g in groups]
    ff = [g[2] for g in groups]
    ff_active = [g[2] * g[3] for g in groups]
    scalars = {S.vocab: vocab, S.d_model: d_model, S.n_emb: n_emb}
    per_group = {S.n_layers: layers, S.n_attn_layer: attn, S.n_ff_layer: ff,
                 S.n_ff_layer_active: ff_active}
    total = layer_mix.evaluate_groups(layer_mix.total_params(), per_group, scalars)
    active = layer_mix.evaluate_groups(layer_mix.active_params(), per_group, scalars)
    written = _sum_groups(layer_mix.total_params(), count).xreplace(
        {**{_ix(sym, i + 1): sp.Float(v[i]) for sym, v in per_group.items() for i in range(count)},
         **{k: sp.Integer(v) for k, v in scalars.items()}})
    assert total == pytest.approx(float(written), rel=1e-12)
    assert active <= total * (1 + 1e-12)
    dense = layer_mix.evaluate_groups(layer_mix.active_params(),
                                      {**per_group, S.n_ff_layer_active: ff}, scalars)
    assert dense == pytest.approx(total, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(1, 64), st.integers(1, 32), st.integers(1, 4096),
       st.floats(1, 1e12), st.floats(0, 1), st.floats(1, 32), st.floats(1, 32))
def test_mtp_block_bits_and_weight_bytes_properties(n_mtp, elem, scale, block, n_param, share,
                                                    b_q, b_w):
    """Property: MTP parameters grow linearly with the layers; block scales add bits_scale/n_block
    to each element; weight bytes lie between all weights at the lower and at the higher bits."""
    one = evaluate(layer_mix.mtp_params(), {S.n_mtp: 1, S.n_attn_layer: 7.0, S.n_ff_layer: 11.0,
                                            S.d_model: 5})
    assert evaluate(layer_mix.mtp_params(), {S.n_mtp: n_mtp, S.n_attn_layer: 7.0,
                                             S.n_ff_layer: 11.0, S.d_model: 5}) == n_mtp * one
    bits = evaluate(layer_mix.block_quantized_bits(), {S.bits_elem: elem, S.bits_scale: scale,
                                                        S.block_elems: block})
    assert bits == pytest.approx(elem + scale / block) and bits > elem
    weights = evaluate(layer_mix.weight_bytes(), {S.n_quant: share * n_param, S.bits_q: b_q,
                                                  S.bits_w: b_w, S.n_param: n_param})
    low, high = sorted((b_q, b_w))
    assert n_param * low / 8 * (1 - 1e-9) <= weights <= n_param * high / 8 * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 65536), st.integers(64, 8192))
def test_dense_layer_is_linear_in_its_width(width, d_model):
    eq = layer_mix.ff_params_dense()
    one = evaluate(eq, {S.d_model: d_model, S.d_ff: 1, **GATED})
    assert evaluate(eq, {S.d_model: d_model, S.d_ff: width, **GATED}) == width * one == (
        3 * d_model * width)
