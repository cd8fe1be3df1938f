"""Sparse top-k attention (derivations/sparse_attention.py) and its terms in the physical rules:
the closed forms against brute-force sums, their limits and monotonicity, and DeepSeek-V3.2's
indexer and decode step against numbers worked out by hand from its config.json."""

import math

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math.core.symbols import ctx, k_top, q_len
from inference_math.derivations import sparse_attention as sa
from inference_math.fullmodel import full_model as fm
from inference_math.fullmodel import physical_rules as phys
from inference_math.presets.hardware import get_gpu
from inference_math.presets.layered import LayeredModel, from_hf_config
from inference_math.serving.predict import Deployment, predict

CONFIGS = "inference_math/data/hf_configs"
V32 = from_hf_config(f"{CONFIGS}/deepseek-ai--DeepSeek-V3.2.config.json")
R1 = from_hf_config(f"{CONFIGS}/deepseek-ai--DeepSeek-R1.config.json")
MEAN_READ = sp.lambdify((ctx, q_len, k_top), sa.mean_read().rhs, "math")
# FLOPs per head and attended entry of absorbed MLA (eq-phys-mla-attention-flops), at the configs'
# kv_lora_rank 512 and qk_rope_head_dim 64: the latent and the rotary key scored, the latent summed
ABSORBED = 2 * (512 + 64) + 2 * 512
# The indexers' weights under rule 13: attention's weights, its router's and its indexer's at
# their mean bytes p_attn (FP8 blocks, 1 + 4/128² bytes, beside the BF16 router of 7,168·256
# in the 58 MoE layers); each layer's exact bytes are then p_attn times its weights.
_FP8 = 1 + 4 / 128**2
_MLA, _ROUTER, _INDEXER = 187_105_280, 7168 * 256, 13_959_168
_P_MOE = (_FP8 * (_MLA + _INDEXER) + 2 * _ROUTER) / (_MLA + _INDEXER + _ROUTER)
# With data-parallel attention each of the 8 GPUs reads its own copy of every layer: V3.2's
# exact bytes less R1's, FP8·W_I a layer, 8 times.
INDEXER_READ_DP = 8 * 61 * _INDEXER * _FP8
# With tensor-parallel attention a GPU reads its eighth of the held weights, p_attn·(N − W_I)/8,
# and the whole indexer, p_attn·W_I: beyond R1's eighth, W_I·(FP8 + 7·p_attn)/8 a layer.
INDEXER_READ_TP = _INDEXER * (3 * _FP8 + 58 * (_FP8 + 7 * _P_MOE) / 8)


def brute_mean_read(ell: int, q: int, k: int) -> float:
    return sum(min(ell + j, k) for j in range(q)) / q


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5000), st.integers(1, 400), st.integers(1, 6000))
def test_mean_read_is_the_mean_of_the_queries_selections(ell, q, k):
    assert math.isclose(MEAN_READ(ell, q, k), brute_mean_read(ell, q, k), rel_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000), st.integers(1, 400), st.integers(1, 6000))
def test_mean_read_is_monotone_and_below_both_of_its_caps(ell, q, k):
    value = MEAN_READ(ell, q, k)
    assert value <= min(k, ell + (q - 1) / 2) + 1e-9  # concavity of min: below the min of means
    assert MEAN_READ(ell, q, k + 1) >= value - 1e-9
    assert MEAN_READ(ell + 1, q, k) >= value - 1e-9


def test_mean_read_branches_meet_and_reduce_to_dense_attention():
    expr = sa.mean_read().rhs
    (dense, _), (capped, _), (between, _) = expr.args
    assert sp.simplify(dense - fm.mean_context()) == 0  # k_sel = ∞: every earlier token
    assert sp.simplify(between.subs(k_top, ctx + q_len - 1) - dense) == 0
    assert sp.simplify(between.subs(k_top, ctx) - capped.subs(k_top, ctx)) == 0
    # any k_sel past the pass's last query reads as dense attention: (10 + 11 + 12 + 13)/4
    assert expr.subs({ctx: 10, q_len: 4, k_top: 10**9}) == sp.Rational(23, 2)
    assert expr.subs({ctx: 10, q_len: 4, k_top: 11}) == sp.Rational(10 + 11 + 11 + 11, 4)


def test_the_indexer_of_deepseek_v32_by_hand():
    """config.json: q_lora_rank 1536, index_n_heads 64, index_head_dim 128, hidden_size 7168,
    61 layers (3 dense, 58 MoE), index_topk 2048. By hand: wq_b 1536·64·128 = 12,582,912,
    wk 7168·128 = 917,504, weights_proj 7168·64 = 458,752: 13,959,168 a layer; keys of 128
    FP8 bytes and one FP32 scale, 132 bytes a token a layer; 64 heads · 2 · (128 + 1) = 16,512
    FLOPs a query and cached token."""
    assert isinstance(V32, LayeredModel)
    dense, moe = V32.pieces
    assert dense.top_k == moe.top_k == 2048
    assert dense.indexer_params == 3 * 13_959_168 and moe.indexer_params == 58 * 13_959_168
    assert dense.indexer_bytes_per_token == 3 * 132 and moe.indexer_bytes_per_token == 58 * 132
    assert dense.indexer_flops == moe.indexer_flops == 16_512
    # the main cache is R1's (MLA's 512 + 64 latent at 2 bytes); the model's cache adds the keys
    assert V32.kv_bytes_per_token - R1.kv_bytes_per_token == 61 * 132
    assert V32.kv_bytes_at(100_000) == 100_000 * 61 * (1152 + 132)
    # the indexer is the only difference in parameters: 61 of them
    assert V32.architecture.total_params - R1.architecture.total_params == 61 * 13_959_168


def _decode(model, context, curve="physical", batch=32):
    return predict(Deployment(model, get_gpu("h200"), tp=8, dp_attention=True, batch=batch,
                              input_len=context, output_len=1, curve=curve))


def test_decode_memory_by_hand_against_dense_mla():
    """Under the limit (the H200's peak 4.8 TB/s), batch 32 with attention data-parallel over 8
    H200s (σ = 8: each GPU holds its 4
    sequences' caches and reads every attention weight). At ℓ tokens V3.2 reads, per sequence,
    2048 entries of the 1,152-byte latent and ℓ indexer keys of 132 bytes in each of 61 layers
    where R1 reads ℓ latents; and each GPU reads the 61 indexers' weights in FP8 blocks. So the
    memory times differ by [32·61·(1152·(2048 − ℓ) + 132·ℓ) + 8·61·13,959,168·(1 + 4/128²)]
    / (8 · 4.8e12) seconds."""
    for context in (16_000, 100_000):
        sparse, dense = _decode(V32, context, "limit"), _decode(R1, context, "limit")
        ell = sparse.context
        weights = INDEXER_READ_DP
        by_hand = (32 * 61 * (1152 * (2048 - ell) + 132 * ell) + weights) / (8 * 4.8e12)
        got = (sparse.decode_terms_ms["memory"] - dense.decode_terms_ms["memory"]) / 1e3
        assert math.isclose(got, by_hand, rel_tol=1e-9), (context, got, by_hand)
        assert sparse.tpot_ms < dense.tpot_ms
    # under the physical curve (an engine's 90% of HBM) 32 sequences of 100,000 tokens do not fit
    # both models; at 16,000 they do, and V3.2 is the faster there too
    assert _decode(V32, 16_000).tpot_ms < _decode(R1, 16_000).tpot_ms


def test_under_tensor_parallelism_every_gpu_runs_the_whole_indexer():
    """Batch 8 on 8 H200s, attention tensor-parallel (σ = 1), under the limit: MLA's latent is
    held whole on every GPU (eq-phys-kv-copies), and so is the indexer, as the engines run it
    (replicated linear layers). Each GPU reads the 8 sequences' caches and all 61 indexers'
    weights (at attention's bytes), so the memory times differ by
    [8·61·(1152·(2048 − ℓ) + 132·ℓ) + INDEXER_READ_TP] / 4.8e12 s (above), and each
    GPU scores the 8 sequences' whole caches: 8·61·16,512·ℓ FLOPs beside its share of the
    rest."""
    gpu = get_gpu("h200")
    kw = dict(tp=8, batch=8, input_len=16_000, output_len=1, curve="limit")
    sparse = predict(Deployment(V32, gpu, **kw))
    dense = predict(Deployment(R1, gpu, **kw))
    ell = sparse.context
    by_hand = (8 * 61 * (1152 * (2048 - ell) + 132 * ell) + INDEXER_READ_TP) / 4.8e12
    got = (sparse.decode_terms_ms["memory"] - dense.decode_terms_ms["memory"]) / 1e3
    assert math.isclose(got, by_hand, rel_tol=1e-4), (got, by_hand)
    flops = gpu.flops(8)
    by_hand = (8 * 61 * (ABSORBED * 128 * (2048 - ell) / 8 + 16_512 * ell)
               + 2 * 61 * 13_959_168 * 8) / flops
    got = (sparse.decode_terms_ms["arithmetic"] - dense.decode_terms_ms["arithmetic"]) / 1e3
    assert math.isclose(got, by_hand, rel_tol=1e-6), (got, by_hand)


def test_the_indexer_scores_every_token_in_the_arithmetic():
    """Arithmetic of a decode step (q = 1) at ℓ under the limit: (2·(512 + 64) + 2·512)·128
    FLOPs per layer and attended entry for the absorbed MLA (eq-phys-mla-attention-flops: the
    latent and the rotary key scored, the latent summed), over min(ℓ, 2048) entries where R1
    attends to all ℓ,
    plus 16,512 per cached token for the indexer and 2 per indexer weight, in 61 layers, for 32
    sequences shared by 8 GPUs at the H200's FP8 peak."""
    for context in (16_000, 100_000):
        sparse, dense = _decode(V32, context, "limit"), _decode(R1, context, "limit")
        ell = sparse.context
        flops = get_gpu("h200").flops(8)
        by_hand = 32 * 61 * (ABSORBED * 128 * (min(ell, 2048) - ell) + 16_512 * ell) / (8 * flops)
        # the indexer's projections: 2 FLOPs per weight per token
        by_hand += 2 * 61 * 13_959_168 * 32 / (8 * flops)
        got = (sparse.decode_terms_ms["arithmetic"] - dense.decode_terms_ms["arithmetic"]) / 1e3
        assert math.isclose(got, by_hand, rel_tol=1e-6), (context, got, by_hand)


def test_a_dense_layer_is_the_sparse_terms_at_their_neutral_values():
    """k_sel = ∞ and no indexer give the full model's dense terms (derived there separately):
    the cache read and stored, M_KV·ℓ, and the attention FLOPs of eq-full-flops."""
    from inference_math.core.symbols import f_idx, kv_bytes, kv_idx, kv_win, r_cmp, st_cmp, w_idx
    # a layer that compresses nothing (tests/test_compressed_attention.py checks the window's
    # share of the FLOPs at ℓ_W = 0)
    dense = {k_top: sp.oo, kv_idx: 0, f_idx: 0, w_idx: 0, kv_win: 0, st_cmp: 0, r_cmp: 1}
    assert sp.simplify(phys.cache_read_bytes().subs(dense) - kv_bytes * ctx) == 0
    assert sp.simplify(phys.cache_stored_bytes().subs(dense) - kv_bytes * ctx) == 0
    for piece in R1.pieces:
        assert math.isinf(piece.top_k) and piece.indexer_bytes_per_token == 0
        assert piece.indexer_flops == 0 and piece.indexer_params == 0


def test_describe_model_names_the_indexers_keys(capsys):
    """61 layers x 132 bytes = 8,052 of V3.2's bytes per token are the indexer's keys; R1 has
    none."""
    import json

    from inference_math.cli import main
    assert main(["describe-model", f"{CONFIGS}/deepseek-ai--DeepSeek-V3.2.config.json",
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kv_indexer_bytes_per_token"] == 61 * 132
    assert info["kv_bytes_per_token"] == 61 * (1152 + 132)
    assert main(["describe-model", f"{CONFIGS}/deepseek-ai--DeepSeek-R1.config.json",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kv_indexer_bytes_per_token"] == 0


def test_block_sparse_attention_by_hand():
    """Llama 3.1 405B made block-sparse, blocks of 64 tokens and the best 32 of them (2,048
    tokens, V3.2's selection): one mean key per block and KV head, 8 x 128 x 2 bytes / 64 = 32
    bytes a token and layer, and 2 x 128 x 128 / 64 = 512 FLOPs of scoring a token and layer.
    Batch 8 on 8 H200s with attention tensor-parallel (one KV head a GPU, each GPU scoring for
    its own 16 query heads), under the limit: against the dense model, the memory time differs
    by 8·126·(4096·(2048 − ℓ) + 32·ℓ)/(8·4.8e12) s and the arithmetic by
    8·126·(65,536·(2048 − ℓ) + 512·ℓ)/(8·F) s, F the H200's 16-bit peak."""
    from inference_math.presets import hf_config as hc
    from inference_math.presets.layered import block_sparse
    arch = hc.read_architecture(f"{CONFIGS}/meta-llama--Meta-Llama-3.1-405B.config.json")
    dense = LayeredModel.from_architecture(arch)
    sparse = block_sparse(arch, 64, 32)
    (piece,) = sparse.pieces
    assert piece.top_k == 2048 and not piece.indexer_replicated
    assert piece.indexer_bytes_per_token == 126 * 32 and piece.indexer_flops == 512
    gpu = get_gpu("h200")
    kw = dict(tp=8, batch=8, input_len=50_000, output_len=1, curve="limit")  # 1 TB of 1.1
    a, b = predict(Deployment(sparse, gpu, **kw)), predict(Deployment(dense, gpu, **kw))
    ell = a.context
    memory = 8 * 126 * (4096 * (2048 - ell) + 32 * ell) / (8 * 4.8e12)
    got = (a.decode_terms_ms["memory"] - b.decode_terms_ms["memory"]) / 1e3
    assert math.isclose(got, memory, rel_tol=1e-9), (got, memory)
    arithmetic = 8 * 126 * (65_536 * (2048 - ell) + 512 * ell) / (8 * gpu.flops(16))
    got = (a.decode_terms_ms["arithmetic"] - b.decode_terms_ms["arithmetic"]) / 1e3
    assert math.isclose(got, arithmetic, rel_tol=1e-9), (got, arithmetic)
    assert sparse.kv_bytes_at(1e5) == dense.kv_bytes_at(1e5) + 1e5 * 126 * 32
