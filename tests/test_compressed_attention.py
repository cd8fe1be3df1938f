"""Compressed attention (derivations/compressed_attention.py) and DeepSeek-V4 as the reader and
the full model see it: the held and read bytes against their dense limits and each other, and
V4-Flash's weights, caches and decode step against numbers worked out by hand from its
config.json and the shapes of its reference inference/model.py."""

import math
from dataclasses import replace

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.derivations import compressed_attention as ca
from inference_math.fullmodel import full_model as fm
from inference_math.fullmodel import physical_rules as phys
from inference_math.presets import hf_config as hc
from inference_math.presets.hardware import get_gpu
from inference_math.presets.layered import LayeredModel, from_hf_config
from inference_math.serving.predict import Deployment, predict

CONFIGS = "inference_math/data/hf_configs"
FLASH = from_hf_config(f"{CONFIGS}/deepseek-ai--DeepSeek-V4-Flash.config.json")
DENSE = {S.k_top: sp.oo, S.kv_idx: 0, S.f_idx: 0, S.w_idx: 0, S.kv_win: 0, S.ctx_win: 0,
         S.r_cmp: 1, S.st_cmp: 0}
_READ = sp.lambdify((S.ctx, S.k_top, S.kv_layer, S.kv_idx, S.kv_win, S.ctx_win, S.st_cmp,
                     S.r_cmp), ca.read_bytes().rhs, "math")
_HELD = sp.lambdify((S.ctx, S.kv_layer, S.kv_idx, S.kv_win, S.ctx_win, S.st_cmp),
                    ca.held_bytes().rhs, "math")

# DeepSeek-V4-Flash's config.json: hidden_size 4096, 64 heads, head_dim 512, q_lora_rank 1024,
# o_groups 8, o_lora_rank 1024, hc_mult 4, index_n_heads 64, index_head_dim 128,
# index_topk 512, sliding_window 128; compress_ratios: 2 layers of 0, then 21 of 4 and 20 of 128
D, H, DC, CQ, G, RO, M = 4096, 64, 512, 1024, 8, 1024, 4
BASE = D * CQ + CQ * H * DC + D * DC + H * DC * RO + G * RO * D  # wq_a wq_b wkv wo_a wo_b
assert BASE == 4_194_304 + 33_554_432 + 2_097_152 + 33_554_432 + 33_554_432 == 106_954_752
HC = 2 * (2 + M) * M * (M * D)  # hc_attn_fn and hc_ffn_fn: 24 x 16,384 each
CSA_COMPRESSOR = 2 * D * 2 * DC + 4 * 2 * DC  # wkv, wgate (overlapping: 2·512 wide), ape
HCA_COMPRESSOR = 2 * D * DC + 128 * DC
INDEXER = CQ * 64 * 128 + D * 64 + (2 * D * 2 * 128 + 4 * 2 * 128)  # wq_b, weights_proj, its own
ROUTER = 256 * D


def _vanishes(expr) -> bool:
    """0, or a Piecewise whose every branch is 0 where its condition can hold: a window of 0
    tokens leaves min(ℓ + j, 0) over a pass, ℓ + (q − 1)/2 where ℓ + q ≤ 1 (ℓ = 0, q = 1)."""
    if expr == 0:
        return True
    return isinstance(expr, sp.Piecewise) and all(
        sp.simplify(e) == 0 if c == sp.true else sp.simplify(e.subs({S.ctx: 0, S.q_len: 1})) == 0
        for e, c in expr.args)


def test_dense_layers_are_the_compressed_terms_at_their_neutral_values():
    """r_c = 1, no window, no state, no indexer: M_KV·ℓ read and held, and eq-full-flops."""
    dense = {**DENSE, S.kv_layer: S.kv_bytes}
    for expr in (ca.read_bytes().rhs, ca.held_bytes().rhs):
        assert sp.simplify(expr.subs(dense) - S.kv_bytes * S.ctx) == 0
    # MLA: eq-phys-mla-attention-flops without a rotary key, absorbed only, is the paper's count
    absorbed_only = {S.d_rope: 0, S.xi_mha: 0}
    for mla in (False, True):
        # absorbed only first: the form's choice (a comparison of the two forms) is then decided
        assert _vanishes(sp.simplify(phys.attention_flops(mla).subs(absorbed_only).subs(DENSE)
                                     - fm.attention_flops(mla)))
    assert phys.cache_read_bytes() == ca.read_bytes().rhs.subs(S.kv_layer, S.kv_bytes)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**7), st.integers(1, 10**6), st.floats(0, 1e4), st.floats(0, 1e3),
       st.floats(0, 1e4), st.integers(0, 4096), st.floats(0, 1e7), st.integers(1, 256))
def test_a_query_reads_at_most_what_its_sequence_holds_and_both_grow(ell, k, kv, idx, win,
                                                                    w_len, state, ratio):
    read = _READ(ell, k, kv, idx, win, w_len, state, ratio)
    held = _HELD(ell, kv, idx, win, w_len, state)
    assert 0 <= read <= held * (1 + 1e-12) + 1e-9
    assert _READ(ell + 1, k, kv, idx, win, w_len, state, ratio) >= read
    assert _READ(ell, k + 1, kv, idx, win, w_len, state, ratio) >= read
    assert _HELD(ell + 1, kv, idx, win, w_len, state) >= held


def test_v4_flash_weights_by_hand():
    """Per layer, by the reference code's shapes: the attention block 106,954,752 weights, the
    hyper-connections 786,432, a compressor of 8,392,704 (r_c = 4, overlapping) or 4,259,840
    (r_c = 128), the indexer 10,748,928 (wq_b, weights_proj and a compressor of its own); each
    MoE block 256 routed experts and one shared of 3·4096·2048 and a router of 256·4096. With
    both 129,280 x 4096 embeddings: 284.33B in all, the card's '284B'."""
    assert isinstance(FLASH, LayeredModel)
    window, csa, hca = FLASH.pieces
    assert (window.shape.layers, csa.shape.layers, hca.shape.layers) == (2, 21, 20)
    attention = {"window": BASE + HC, "csa": BASE + HC + CSA_COMPRESSOR + INDEXER,
                 "hca": BASE + HC + HCA_COMPRESSOR}
    assert attention["csa"] == 126_882_816
    for piece, name in zip(FLASH.pieces, attention, strict=True):
        assert piece.attention_params == piece.shape.layers * (attention[name] + ROUTER)
        assert piece.ff_params == piece.shape.layers * 256 * 3 * D * 2048
        assert piece.shared_params == piece.shape.layers * 3 * D * 2048
    assert csa.indexer_params == 21 * INDEXER
    layers = sum(p.shape.layers * (attention[n] + ROUTER + 257 * 3 * D * 2048)
                 for p, n in zip(FLASH.pieces, attention, strict=True))
    assert FLASH.total_params == layers + 2 * 129_280 * D
    assert math.isclose(FLASH.total_params, 284.3e9, rel_tol=1e-3)


def test_v4_flash_checkpoint_weighs_what_its_formats_give():
    """The reference checkpoint: routed experts in FP4 with an E8M0 scale per 32 (4.25 bits),
    the other matrices FP8 in 128 x 128 blocks, wo_a, the compressors' projections, the
    indexer's weights_proj, the router and the embeddings BF16, the hyper-connections and the
    compressors' score offsets FP32: about 157 GB, the '158B' and '160GB' download sizes the
    model's hosts list (featherless.ai, localainews.co)."""
    assert 155e9 < FLASH.weights_bytes < 160e9
    assert FLASH.weight_bits == 4
    fp8 = from_hf_config(f"{CONFIGS}/sgl-project--DeepSeek-V4-Flash-FP8.config.json")
    assert 2.0 * FLASH.total_params > fp8.weights_bytes > 0.95 * FLASH.total_params


def test_v4_flash_cache_by_hand():
    """BF16 entries of 512 elements (1,024 bytes); a compressed sparse layer pools 4 tokens to
    one entry and keeps its indexer's 128-wide key per entry (256 bytes), a heavily compressed
    layer 128 tokens; every layer keeps a window of 128 plain entries; the compressors hold
    2·(c_ov·r_c)·(c_ov·d)·4 bytes of FP32 state: 65,536 (main, r_c = 4), 16,384 (indexer) and
    524,288 (r_c = 128). At 1M tokens one sequence holds 7,232,045,056 bytes."""
    ell, entry = 2**20, 1024
    csa = ell // 4 * (entry + 256) + 128 * entry + 65_536 + 16_384
    hca = ell // 128 * entry + 128 * entry + 524_288
    by_hand = 21 * csa + 20 * hca + 2 * 128 * entry
    assert by_hand == 7_232_045_056
    assert FLASH.kv_bytes_at(ell) == by_hand
    assert FLASH.architecture.kv_bytes_at(ell) == by_hand
    _, csa_piece, hca_piece = FLASH.pieces
    assert csa_piece.top_k == 4 * 512 and math.isinf(hca_piece.top_k)
    assert csa_piece.indexer_flops == 64 * 2 * (128 + 1) / 4


def _decode(context, curve="limit", batch=32):
    return predict(Deployment(FLASH, get_gpu("b200"), tp=8, dp_attention=True, batch=batch,
                              input_len=context, output_len=1, curve=curve))


def test_v4_flash_decode_grows_with_the_context_as_worked_by_hand():
    """Batch 32 on 8 B200s, attention data-parallel (each GPU holds its 4 sequences' caches),
    under the limit (peak bandwidth and FLOP/s). Past the top 512 entries (2,048 tokens) and
    the window, one more token of context adds, per sequence, a 64-byte indexer key read and
    4,128 FLOPs of scoring in each of 21 compressed sparse layers, and 1/128 of an entry (8
    bytes, 1,024 FLOPs of attending) in each of 20 heavily compressed layers: 1,504 bytes and
    107,168 FLOPs a token."""
    gpu = get_gpu("b200")
    near, far = _decode(16_000), _decode(100_000)
    grown = far.context - near.context
    memory = (far.decode_terms_ms["memory"] - near.decode_terms_ms["memory"]) / 1e3
    assert math.isclose(memory, 32 * 1504 * grown / (8 * gpu.bandwidth(capped=False)),
                        rel_tol=1e-9)
    arithmetic = (far.decode_terms_ms["arithmetic"] - near.decode_terms_ms["arithmetic"]) / 1e3
    assert math.isclose(arithmetic, 32 * 107_168 * grown / (8 * gpu.flops(4, capped=False)),
                        rel_tol=1e-9)


def test_the_physical_curve_reads_the_compressors_state_once_per_pooled_window():
    """The physical rules read each compressor's FP32 state once per r_c tokens: per sequence
    21·(65,536 + 16,384)/4 + 20·524,288/128 = 512,000 bytes a step beyond the same model
    without it, at the physical curve's (capped) bandwidth; the limit counts none of it."""
    state = 21 * (65_536 + 16_384) / 4 + 20 * 524_288 / 128
    assert state == 512_000
    stateless = replace(FLASH, pieces=tuple(replace(p, state_bytes=0.0) for p in FLASH.pieces))
    kw = dict(tp=8, dp_attention=True, batch=32, input_len=16_000, output_len=1)
    gpu = get_gpu("b200")
    for curve, extra in (("physical", 32 * state / (8 * gpu.bandwidth(capped=True))),
                         ("limit", 0.0)):
        with_state = predict(Deployment(FLASH, gpu, curve=curve, **kw))
        without = predict(Deployment(stateless, gpu, curve=curve, **kw))
        got = (with_state.decode_terms_ms["memory"] - without.decode_terms_ms["memory"]) / 1e3
        assert math.isclose(got, extra, rel_tol=1e-9, abs_tol=1e-15), (curve, got, extra)


def test_describe_model_reads_v4(capsys):
    import json

    from inference_math.cli import main
    assert main(["describe-model", f"{CONFIGS}/deepseek-ai--DeepSeek-V4-Flash.config.json",
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kv_bytes_at_context"]["131072"] == FLASH.kv_bytes_at(131072)
    assert info["kv_indexer_bytes_per_token"] == 21 * 64
    arch = hc.read_architecture(f"{CONFIGS}/deepseek-ai--DeepSeek-V4-Pro.config.json")
    assert math.isclose(arch.total_params, 1.6e12, rel_tol=0.02)


def test_mfu_counts_the_entries_a_query_attends_to():
    """At 1M tokens a dense count of attention (every cached token, eq-full-flops) would put
    V4-Flash's and V3.2's frontiers above 100% MFU under the limit; counting the entries read
    (the window, the pooled entries, the selection) keeps every point below it."""
    from inference_math import frontier
    from inference_math.fullmodel.search import Setting
    v32 = from_hf_config(f"{CONFIGS}/deepseek-ai--DeepSeek-V3.2.config.json")
    for model in (FLASH, v32):
        front = frontier(Setting(model, get_gpu("b200"), context=1e6, curve="limit"))
        assert max(pt.mfu for pt in front.points) < 1.0, model.name
    # the entries one decode query of a V4-Flash sparse layer attends to at 1M: 512 + 128
    _, csa, hca = FLASH.pieces
    assert fm._attended(csa, 1e6) == 512 + 128
    assert fm._attended(hca, 1e6) == 1e6 / 128 + 128


def test_the_full_model_and_the_reader_agree_on_v4s_cache():
    """The LayeredModel and the Architecture count the same bytes per token (the pooled entries
    and the indexer's keys, 6,880, with the two sliding-window layers' 2,048 while their windows
    are open) and the same constant state (every pooling layer's 128-entry window and its
    compressors' FP32 state); a KV precision halves the window with the rest of the cache."""
    from inference_math.serving.predict import Deployment
    arch = FLASH.architecture
    assert FLASH.kv_bytes_per_token == arch.kv_bytes_per_token == 8928
    assert FLASH.state_bytes_per_sequence == arch.state_bytes_per_sequence == 17_580_032
    half = Deployment(FLASH, get_gpu("b200"), tp=8, batch=1, input_len=2**20, output_len=1,
                      kv_bits=8, curve="physical")
    ell = 2**20
    pooled = 21 * (ell // 4) * 1024 + 20 * (ell // 128) * 1024 + 43 * 128 * 1024
    assert FLASH.kv_bytes_at(ell) - half.kv_bytes_at(ell) == pooled / 2


def test_v4_storage_lists_every_weight_once():
    """The matrices the storage reader assigns formats to sum to each layer's count, so every
    weight is stored in exactly one format."""
    for stem in ("deepseek-ai--DeepSeek-V4-Flash", "deepseek-ai--DeepSeek-V4-Pro"):
        arch = hc.read_architecture(f"{CONFIGS}/{stem}.config.json")
        for group, layer in zip(arch.groups, arch.layers, strict=True):
            listed = sum(n for _, n, _ in hc._v4_matrices(group.attention, group.ffn,
                                                          arch.d_model))
            assert listed == layer["attention"] + layer["ff"], (stem, group.count)
