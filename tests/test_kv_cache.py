"""KV-cache economics: Austin et al. (2025) "All About Transformer Inference" and Pope et al. (2023).

Expected closed forms are typed fresh from the sources; expected numbers are the values printed
there (or, where marked, the digest's recomputation of them) with the digest's tolerances.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import (
    b,
    b_star,
    d_ff,
    d_head,
    d_model,
    flops,
    g,
    hbm_bw,
    hbm_cap,
    kv_seq,
    n_active,
    n_emb,
    n_experts,
    n_gpu,
    n_kv,
    n_layers,
    n_param,
    n_q,
    p,
    p_act,
    seq_kv,
    vocab,
)
from inference_math.core.validation import InputError
from inference_math.derivations import architecture, kv_cache

L, D, F, N, K, H, V = n_layers, d_model, d_ff, n_q, n_kv, d_head, vocab
SHAPE = (L, D, F, N, K, H, V, n_emb, n_experts, n_active)

# The source's 13B model and worked-problem model, typed here from the source.
LLAMA_13B = dict(n_layers=40, d_model=5120, d_ff=13824, n_q=40, n_kv=40, d_head=128, vocab=32000)
WORKED = dict(n_layers=64, d_model=4096, d_ff=16384, n_q=32, n_kv=8, d_head=256, vocab=32128)


# --- closed forms -----------------------------------------------------------------------------


def test_attention_params(assert_same):
    """Austin et al. (2025): attention [2·D·N·H + 2·D·K·H]·L = L·2·D·H·(N + K)."""
    assert_same(kv_cache.attention_params(), L * 2 * D * H * (N + K), (L, D, H, N, K))


def test_attention_params_match_eq_arch_with_g_equal_n_over_k(assert_same):
    """Identity: eq-arch-attention-params with g = N/K is the scaling book's count."""
    arch = architecture.attention_params().rhs.subs(g, N / K)
    assert_same(kv_cache.attention_params(), arch, (L, D, H, N, K))


def test_feedforward_params(assert_same):
    """Austin et al. (2025): gated FFW D·F·3·L per dense layer stack, E copies in an MoE."""
    assert_same(kv_cache.feedforward_params(), 3 * L * D * F * n_experts, (L, D, F, n_experts))


def test_embedding_params(assert_same):
    """Austin et al. (2025): 2·V·D untied, D·V tied."""
    assert_same(kv_cache.embedding_params(), n_emb * V * D, (n_emb, V, D))


def test_total_params(assert_same):
    """Austin et al. (2025) Q1 and Q5: L·D·(3·E·F + 2·H·(N + K)) + m·D·V."""
    expected = L * D * (3 * n_experts * F + 2 * H * (N + K)) + n_emb * D * V
    assert_same(kv_cache.total_params(), expected, SHAPE)


def test_total_params_tied_dense_is_the_q1_formula(assert_same):
    """Austin et al. (2025) Q1: L·D·(3F + 2H(N + K)) + D·V for a dense model, tied embeddings."""
    dense_tied = kv_cache.total_params().rhs.subs({n_experts: 1, n_emb: 1})
    assert_same(dense_tied, L * D * (3 * F + 2 * H * (N + K)) + D * V, (L, D, F, N, K, H, V))


def test_active_params(assert_same):
    """Austin et al. (2025) Q5 [later rev.]: L·D·(3·k·F + 2·H·(N + K)) + D·V."""
    expected = L * D * (3 * n_active * F + 2 * H * (N + K)) + n_emb * D * V
    assert_same(kv_cache.active_params(), expected, SHAPE)


def test_active_params_of_a_dense_model_are_all_params():
    """Identity: k = E gives the total."""
    active = kv_cache.active_params().rhs.subs(n_active, n_experts)
    assert sp.simplify(active - kv_cache.total_params().rhs) == 0


def test_kv_bytes_per_token(assert_same):
    """Austin et al. (2025): KV = 2 · bytes per float · H · K · L per token."""
    assert_same(kv_cache.bytes_per_token(), 2 * p_act * H * K * L, (p_act, H, K, L))


def test_kv_bytes_match_eq_arch_with_g_equal_n_over_k(assert_same):
    """Identity: eq-arch-kv-bytes with g = N/K."""
    arch = architecture.kv_cache_bytes_per_token().rhs.subs(g, N / K)
    assert_same(kv_cache.bytes_per_token(), arch, (p_act, H, K, L, N))


def test_sequence_bytes(assert_same):
    """Austin et al. (2025): KV cache size for T tokens, 2·bytes·H·K·L·T."""
    assert_same(kv_cache.sequence_bytes(), 2 * p_act * H * K * L * seq_kv, (p_act, H, K, L, seq_kv))


def test_gqa_ratio(assert_same):
    """Austin et al. (2025), tricks: the cache shrinks by the Q:KV ratio N/K."""
    assert_same(kv_cache.gqa_ratio(), N / K, (N, K))


def test_step_time_per_sequence(assert_same):
    """Austin et al. (2025): min step time (B·KV + params)/total bandwidth."""
    expected = (b * kv_seq + p * n_param) / (n_gpu * hbm_bw)
    assert_same(kv_cache.step_time_per_sequence(), expected, (b, kv_seq, p, n_param, n_gpu, hbm_bw))


def test_throughput_per_sequence(assert_same):
    """Austin et al. (2025): max tokens/s = B·bandwidth/(B·KV + params)."""
    expected = b * n_gpu * hbm_bw / (b * kv_seq + p * n_param)
    assert_same(kv_cache.throughput_per_sequence(), expected,
                (b, kv_seq, p, n_param, n_gpu, hbm_bw))


def test_throughput_tends_to_bandwidth_over_cache():
    """Limit b → ∞ of the throughput: N_GPU·B/M_seq (the KV-bound ceiling)."""
    limit = sp.limit(kv_cache.throughput_per_sequence().rhs, b, sp.oo)
    assert sp.simplify(limit - n_gpu * hbm_bw / kv_seq) == 0


def test_max_batch(assert_same):
    """This book: floor((n·HBM − P)/KV per sequence)."""
    eq = kv_cache.max_batch()
    assert isinstance(eq.rhs, sp.floor)
    assert_same(eq.rhs.args[0], (n_gpu * hbm_cap - p * n_param) / kv_seq,
                (n_gpu, hbm_cap, p, n_param, kv_seq))


def test_moe_critical_batch(assert_same):
    """Austin et al. (2025) Q5 [later rev.]: the HBM roofline rises by E/k."""
    assert_same(kv_cache.moe_critical_batch(), b_star * n_experts / n_active,
                (b_star, n_experts, n_active))


def test_moe_critical_batch_in_hardware_terms(assert_same):
    """b*·E/k with b* = p·C/(2·B): p·C·E/(2·B·k)."""
    expanded = kv_cache.moe_critical_batch().rhs.subs(b_star, p * flops / (2 * hbm_bw))
    assert_same(expanded, p * flops * n_experts / (2 * hbm_bw * n_active),
                (p, flops, hbm_bw, n_experts, n_active))


def test_tokens_equal_params(assert_same):
    """Pope et al. notes: 2·N = 2·2·B·S·L·d_head (MQA) gives B·S = 2N/(4·L·d_head)."""
    assert_same(kv_cache.tokens_equal_params(), p * n_param / (2 * p_act * H * K * L),
                (p, n_param, p_act, H, K, L))
    mqa = kv_cache.tokens_equal_params().rhs.subs({K: 1, p: 2, p_act: 2})
    assert sp.simplify(mqa - 2 * n_param / (4 * L * H)) == 0


def test_kv_cache_does_not_depend_on_experts():
    """Austin et al. (2025) Q5.3: the MoE leaves the KV cache unchanged."""
    assert n_experts not in kv_cache.bytes_per_token().rhs.free_symbols
    assert n_active not in kv_cache.bytes_per_token().rhs.free_symbols


# --- the sources' numbers ---------------------------------------------------------------------


def test_llama_2_13b_params():
    """Check 7: 13.015e9 = 8.49e9 (FFW) + 0.328e9 (vocab) + 4.19e9 (attention), rtol 1%."""
    counts = kv_cache.parameter_counts(**LLAMA_13B, tied=False)
    assert counts["total"] == pytest.approx(13.015e9, rel=0.01)
    assert counts["ff"] == pytest.approx(8.49e9, rel=0.01)
    assert counts["embedding"] == pytest.approx(0.328e9, rel=0.01)
    assert counts["attention"] == pytest.approx(4.19e9, rel=0.01)
    assert counts["total"] == pytest.approx(13e9, rel=0.01)  # stated


def test_llama_2_13b_d_ff_from_the_multiplier():
    """Austin et al. (2025): F // D = 2.7 for LLaMA 2-13B, i.e. F = 13,824."""
    spec = kv_cache.LLAMA2_13B
    assert spec["ffw_multiplier"] * spec["d_model"] == pytest.approx(13824, abs=1e-9)


def test_llama_2_13b_kv():
    """Check 8: 819,200 B/token and 6.711e9 B at 8192 tokens in bf16 (stated 6.7 GB), rtol 1%."""
    per_token = kv_cache.kv_bytes_per_token(n_layers=40, n_kv=40, d_head=128, bytes_per_element=2)
    assert per_token == pytest.approx(819_200, rel=0.01)
    assert per_token * 8192 == pytest.approx(6.711e9, rel=0.01)
    assert per_token * 8192 == pytest.approx(6.7e9, rel=0.01)


TABLE_BATCHES = np.array([1, 8, 16, 32, 64, 240], dtype=float)
TABLE_A_MS = [4.98, 12.13, 20.30, 36.65, 69.33, 249.09]
TABLE_A_TOK = [200.61, 659.30, 787.99, 873.21, 923.13, 963.53]
TABLE_B_MS = [4.17, 5.60, 7.23, 10.50, 17.04, 52.99]
TABLE_B_TOK = [239.94, 1429.19, 2212.48, 3047.62, 3756.62, 4529.34]
ARGS = (b, kv_seq, p, n_param, n_gpu, hbm_bw)


@pytest.mark.parametrize("kv_gb, step_ms, tok_s", [(6.7, TABLE_A_MS, TABLE_A_TOK),
                                                    (1.34, TABLE_B_MS, TABLE_B_TOK)])
def test_llama_2_13b_tables(kv_gb, step_ms, tok_s):
    """Checks 9 and 10: tables A and B cell for cell (abs 0.01), GB = 1e9 B, 8 × 8.2e11 B/s."""
    step = compile_fn(kv_cache.step_time_per_sequence(), ARGS)
    rate = compile_fn(kv_cache.throughput_per_sequence(), ARGS)
    inputs = (TABLE_BATCHES, kv_gb * 1e9, 1, 26e9, 8, 8.2e11)
    np.testing.assert_allclose(1e3 * step(*inputs), step_ms, atol=0.01, rtol=0)
    np.testing.assert_allclose(rate(*inputs), tok_s, atol=0.01, rtol=0)


def test_module_tables_are_the_printed_ones():
    """The data dict holds the printed tables (checks 9 and 10 inputs)."""
    tables = kv_cache.LLAMA2_13B_TABLES
    assert tables["mha"]["step_ms"] == tuple(TABLE_A_MS)
    assert tables["gqa"]["tokens_per_s"] == tuple(TABLE_B_TOK)


@pytest.mark.parametrize("kv_seq_bytes, expected", [(6.7e9, 16), (1.34e9, 83)])
def test_max_batch_in_128_gib(kv_seq_bytes, expected):
    """Check 11 (derived): 128 GiB = 137.44e9 B, P = 26e9 B: 16 (MHA) and 83 (GQA), exact floors."""
    got = kv_cache.largest_batch(n_chips=8, hbm_per_chip=16 * 2**30, n_params=26e9,
                                 bytes_per_param=1, kv_seq_bytes=kv_seq_bytes)
    assert got == expected


def test_worked_model_params_and_kv():
    """Checks 13 and 14: 18,385,207,296 params (stated 18.4e9); 262,144 B int8, 524,288 B bf16."""
    counts = kv_cache.parameter_counts(**WORKED, tied=True)
    assert counts["total"] == 18_385_207_296
    assert counts["total"] == pytest.approx(18.4e9, rel=0.005)
    for width, expected in ((1, 262_144), (2, 524_288)):
        got = kv_cache.kv_bytes_per_token(n_layers=64, n_kv=8, d_head=256, bytes_per_element=width)
        assert got == expected


def test_worked_q2_max_batch():
    """Check 15 [later rev.]: (16·16e9 − 18.4e9)/(128e3 · 262,144) → 7; K = 1 → 56 ± 1."""
    common = dict(n_chips=16, hbm_per_chip=16e9, n_params=18.4e9, bytes_per_param=1)
    assert kv_cache.largest_batch(**common, kv_seq_bytes=128e3 * 262_144) == 7
    one_head = kv_cache.largest_batch(**common, kv_seq_bytes=128e3 * 262_144 / 8)
    assert abs(one_head - 56) <= 1


def test_worked_q3_weight_load():
    """Check 16 [later rev.]: 18.4e9 B over 16 × 8.2e11 B/s ≈ 1.4 ms (within 0.1 ms)."""
    load = kv_cache.step_time_per_sequence().rhs.subs(b, 0)
    value = float(compile_fn(load, (p, n_param, n_gpu, hbm_bw))(1, 18.4e9, 16, 8.2e11))
    assert abs(1e3 * value - 1.4) < 0.1


def test_worked_q5_moe():
    """Check 17 [later rev.]: 211.66e9 total (stated 212e9), 31.27e9 active, B_crit 1920."""
    counts = kv_cache.parameter_counts(**WORKED, tied=True, n_experts=16, n_active=2)
    assert counts["total"] == pytest.approx(211.66e9, rel=0.005)
    assert counts["total"] == pytest.approx(212e9, rel=0.005)
    assert counts["active"] == pytest.approx(31.27e9, rel=0.005)
    bcrit = compile_fn(kv_cache.moe_critical_batch(), (b_star, n_experts, n_active))
    assert float(bcrit(240, 16, 2)) == 1920


def test_pope_kv_equals_params():
    """Check 23: 2 × 540e9 = 1.08e12 B; B·S = 5.96e6 (L = 118, d_head = 384, MQA); B = 2909 at 2048."""
    tokens = kv_cache.cached_tokens_equal_to_params(n_params=540e9, bytes_per_param=2,
                                                    n_layers=118, n_kv=1, d_head=384,
                                                    bytes_per_element=2)
    assert tokens == pytest.approx(1.08e12 / (4 * 118 * 384), rel=1e-12)
    assert tokens == pytest.approx(5.96e6, rel=0.01)
    assert tokens / 2048 == pytest.approx(2909, rel=0.01)


# --- monotonicity (hypothesis) ----------------------------------------------------------------

_step = compile_fn(kv_cache.step_time_per_sequence(), ARGS)
_rate = compile_fn(kv_cache.throughput_per_sequence(), ARGS)
instances = st.tuples(st.floats(1e6, 1e11),  # KV bytes per sequence
                      st.floats(1e8, 1e12),  # parameter bytes
                      st.integers(1, 256),  # chips
                      st.floats(1e11, 1e13))  # bandwidth per chip


@given(instances, st.floats(1.0, 1e4), st.floats(1.01, 10.0))
def test_step_time_and_throughput_rise_with_batch(inst, batch, factor):
    """Austin et al. (2025): bigger batches are slower per step but yield more tokens per second."""
    kv, params, chips, bw = inst
    small = (batch, kv, 1, params, chips, bw)
    large = (batch * factor, kv, 1, params, chips, bw)
    assert _step(*large) > _step(*small)
    assert _rate(*large) > _rate(*small)
    assert _rate(*large) < chips * bw / kv  # below the ceiling


@given(instances, st.floats(1.01, 100.0))
def test_max_batch_never_grows_with_a_larger_cache(inst, factor):
    """eq-kv-max-batch: a bigger cache per sequence never fits more sequences."""
    kv, params, chips, _ = inst
    hbm = 16e9
    if params > chips * hbm:
        return
    kwargs = dict(n_chips=chips, hbm_per_chip=hbm, n_params=params, bytes_per_param=1)
    assert (kv_cache.largest_batch(**kwargs, kv_seq_bytes=kv * factor)
            <= kv_cache.largest_batch(**kwargs, kv_seq_bytes=kv))


# --- input validation -------------------------------------------------------------------------


@pytest.mark.parametrize("field, value", [("n_layers", 0), ("d_model", -1), ("n_kv", 2.5),
                                          ("vocab", "32000"), ("n_q", True)])
def test_parameter_counts_rejects_bad_shapes(field, value):
    with pytest.raises(InputError, match=field):
        kv_cache.parameter_counts(**{**WORKED, field: value}, tied=True)


def test_parameter_counts_rejects_bad_options():
    with pytest.raises(InputError, match="tied"):
        kv_cache.parameter_counts(**WORKED, tied=1)
    with pytest.raises(InputError, match="n_active"):
        kv_cache.parameter_counts(**WORKED, tied=True, n_experts=2, n_active=4)
    with pytest.raises(InputError, match="n_kv"):
        kv_cache.parameter_counts(**{**WORKED, "n_kv": 5}, tied=True)


def test_largest_batch_rejects_weights_that_do_not_fit():
    with pytest.raises(InputError, match="n_params"):
        kv_cache.largest_batch(n_chips=1, hbm_per_chip=16e9, n_params=18.4e9, bytes_per_param=1,
                               kv_seq_bytes=1e9)
    with pytest.raises(InputError, match="kv_seq_bytes"):
        kv_cache.largest_batch(n_chips=16, hbm_per_chip=16e9, n_params=18.4e9, bytes_per_param=1,
                               kv_seq_bytes=0)


@pytest.mark.parametrize("field", ["n_params", "bytes_per_param", "n_layers", "n_kv", "d_head",
                                   "bytes_per_element"])
def test_cached_tokens_rejects_bad_input(field):
    kwargs = dict(n_params=540e9, bytes_per_param=2, n_layers=118, n_kv=1, d_head=384,
                  bytes_per_element=2)
    with pytest.raises(InputError, match=field):
        kv_cache.cached_tokens_equal_to_params(**{**kwargs, field: -1})


def test_kv_bytes_per_token_rejects_bad_input():
    with pytest.raises(InputError, match="bytes_per_element"):
        kv_cache.kv_bytes_per_token(n_layers=1, n_kv=1, d_head=1, bytes_per_element=math.nan)
