"""Families read through other names and rules, each counted by hand from its config's fields.

Weight matrices only (biases, norms and GPT-2's learned position table are not counted, as the
reader's conventions say); every number below is read off the config file named, and the
tolerance is exact (1e-12 relative) since both sides count the same matrices.
"""

from __future__ import annotations

import json

import pytest

from inference_math.core.validation import InputError
from inference_math.presets import hf_config as hc

MORE = hc.FIXTURES / "more"
MLC_OPTIONS = frozenset({"context_window_size", "prefill_chunk_size", "tensor_parallel_shards",
                         "max_batch_size", "attention_sink_size"})


def _read(stem: str) -> hc.Architecture:
    return hc.read_architecture(MORE / f"{stem}.config.json", ignore=MLC_OPTIONS)


def test_gpt2_small_by_hand():
    """n_embd 768, n_layer 12, n_head 12, n_inner null (4·768), vocab 50257, tied (GPT2Config's
    default): per layer q, k, v, o 4·768² and c_fc, c_proj 2·768·3072; one table."""
    arch = _read("openai-community--gpt2")
    layer = 4 * 768**2 + 2 * 768 * 3072
    assert arch.total_params == pytest.approx(12 * layer + 50257 * 768, rel=1e-12)
    assert arch.tied and any("position table" in note for note in arch.notes)


def test_gpt_j_by_hand():
    """n_embd 4096, n_layer 28, n_inner null (4·4096), vocab 50400, untied; rotary_dim 64 holds
    no weights."""
    arch = _read("EleutherAI--gpt-j-6b")
    layer = 4 * 4096**2 + 2 * 4096 * 16384
    assert arch.total_params == pytest.approx(28 * layer + 2 * 50400 * 4096, rel=1e-12)


def test_santacoder_multi_query_by_hand():
    """multi_query: one key and one value head of 2048/16 = 128; n_inner 8192; tied."""
    arch = _read("bigcode--gpt_bigcode-santacoder")
    layer = 2 * 2048**2 + 2 * 2048 * 128 + 2 * 2048 * 8192
    assert arch.total_params == pytest.approx(24 * layer + 49280 * 2048, rel=1e-12)
    assert arch.groups[0].attention.n_kv == 1


def test_qwen_1_halved_width_by_hand():
    """intermediate_size 11008 is w1's and w2's together: three matrices of 5504; kv_channels
    128 = 2048/16."""
    arch = _read("Qwen--Qwen-1_8B-Chat")
    layer = 4 * 2048**2 + 3 * 2048 * 5504
    assert arch.total_params == pytest.approx(24 * layer + 2 * 151936 * 2048, rel=1e-12)


def test_chatglm3_by_hand():
    """num_layers 28, multi_query_group_num 2 key/value heads of kv_channels 128, SwiGLU of
    ffn_hidden_size 13696, padded_vocab_size 65024, untied."""
    arch = _read("THUDM--chatglm3-6b")
    attention = 2 * 4096 * 32 * 128 + 2 * 4096 * 2 * 128
    layer = attention + 3 * 4096 * 13696
    assert arch.total_params == pytest.approx(28 * layer + 2 * 65024 * 4096, rel=1e-12)
    # the cache: 2 heads of 128, keys and values, 2 bytes, 28 layers
    assert arch.kv_bytes_per_token == pytest.approx(28 * 2 * 2 * 128 * 2, rel=1e-12)


def test_gemma2_window_renamed_by_mlc():
    """sliding_window_size read as sliding_window; even layers slide (Gemma 2's rule): 21
    sliding and 21 global layers of 8 key/value heads of 256."""
    arch = _read("google--gemma-2-9b-it")
    windows = sorted(layer["window"] for layer in arch.layers)
    assert [g.count for g in arch.groups] == [21, 21] and windows[0] == 4096


def test_minicpm_moe_by_hand():
    """8 experts of 5760, top 2, router 8 x 2304; tied; the muP scalars change nothing."""
    arch = _read("openbmb--MiniCPM-MoE-8x2B")
    attention, expert = 4 * 2304**2, 3 * 2304 * 5760
    table = 122753 * 2304
    assert arch.total_params == pytest.approx(40 * (attention + 8 * expert + 8 * 2304) + table,
                                              rel=1e-12)
    assert arch.active_params == pytest.approx(40 * (attention + 2 * expert + 8 * 2304) + table,
                                               rel=1e-12)


def test_minimax_m2_mtp_modules_beside_the_total():
    """62 layers of 48 query and 8 key/value heads of 128 and 256 experts of 1536 (router
    256 x 3072); the 3 MTP modules (num_mtp_modules, one layer each) are reported beside the
    total, each a layer plus its 2·3072² projection (eq-layers-mtp-params)."""
    arch = _read("MiniMaxAI--MiniMax-M2.5")
    attention = 2 * 3072 * 48 * 128 + 2 * 3072 * 8 * 128
    moe = 256 * 3 * 3072 * 1536 + 256 * 3072
    assert arch.total_params == pytest.approx(62 * (attention + moe) + 2 * 200064 * 3072,
                                              rel=1e-12)
    assert arch.n_mtp == 3
    assert arch.mtp_params == pytest.approx(3 * (attention + moe + 2 * 3072**2), rel=1e-12)
    described = hc.describe_architecture(arch)
    assert described["mtp_params"] == arch.mtp_params and described["mtp_layers"] == 3


def test_glm52_index_share_by_hand():
    """GLM-5.2: 21 of its 78 layers run their own indexer (layers 0-2, then every fourth from 6,
    as indexer_types and index_topk_freq 4 / index_skip_topk_offset 3 agree); the 57 others
    reuse its top 2048 and hold none of its weights (wq_b 2048 x 32·128, wk 6144 x 128,
    weights_proj 6144 x 32) or keys. GLM-5.1 indexes every layer."""
    full, shared = _read("zai-org--GLM-5.1"), _read("zai-org--GLM-5.2")
    indexer = 2048 * 32 * 128 + 6144 * 128 + 6144 * 32
    assert full.total_params - shared.total_params == pytest.approx(57 * indexer, rel=1e-12)
    own = [g.count for g in shared.groups if g.attention.indexer and
           not g.attention.index_shared]
    assert sum(own) == 21
    # FP8 keys and one FP32 scale per 128 elements (reference code), 128 wide: 132 bytes
    assert full.kv_bytes_per_token - shared.kv_bytes_per_token == pytest.approx(57 * 132,
                                                                                rel=1e-12)


def test_llava_reads_its_language_model_with_llamaconfig_defaults():
    """LLaVA-1.5-7B's text_config holds only vocab_size 32064: LlamaConfig's defaults (4096
    wide, 32 layers of 32 heads, 11008) make it Llama 2 7B's shape; the vision tower is noted,
    not counted."""
    arch = _read("llava-hf--llava-1.5-7b-hf")
    layer = 4 * 4096**2 + 3 * 4096 * 11008
    assert arch.total_params == pytest.approx(32 * layer + 2 * 32064 * 4096, rel=1e-12)
    assert any("vision_config" in note for note in arch.notes)


def test_muse_glimmer_by_hand():
    """52 layers (13 full without rotary embedding, 39 sliding over 2048), 32 query and 2
    key/value heads of 128 in 6656, SwiGLU 19968, untied vocab 202048; layer_rope_theta changes
    no count."""
    arch = _read("meta-models--Muse-Glimmer-30B")
    layer = 2 * 6656 * 32 * 128 + 2 * 6656 * 2 * 128 + 3 * 6656 * 19968
    assert arch.total_params == pytest.approx(52 * layer + 2 * 202048 * 6656, rel=1e-12)
    assert any("13 layers without rotary" in feature for feature in arch.features)


def test_laguna_xs2_by_hand():
    """40 layers of 2048: the 10 full ones (0, 4, ...) of 48 query heads, the 30 sliding ones
    (window 512) of 64, all with 8 key/value heads of 128 and a per-head output gate (gating
    true: g_proj, 2048 x heads); layer 0 dense (8192), the others 256 experts of 512, top 8,
    with a shared expert of 512 and a router 256 x 2048; untied vocab 100352."""
    arch = _read("poolside--Laguna-XS.2-FP8")

    def attention(heads):
        return 2 * 2048 * heads * 128 + 2 * 2048 * 8 * 128 + 2048 * heads

    moe = 256 * 3 * 2048 * 512 + 3 * 2048 * 512 + 256 * 2048
    layers = 10 * attention(48) + 30 * attention(64) + 3 * 2048 * 8192 + 39 * moe
    assert arch.total_params == pytest.approx(layers + 2 * 100352 * 2048, rel=1e-12)
    active = 10 * attention(48) + 30 * attention(64) + 3 * 2048 * 8192 \
        + 39 * (8 * 3 * 2048 * 512 + 3 * 2048 * 512 + 256 * 2048)
    assert arch.active_params == pytest.approx(active + 2 * 100352 * 2048, rel=1e-12)
    windows = {g.attention.n_q: g.attention.window for g in arch.groups}
    assert windows == {48: None, 64: 512}


@pytest.mark.parametrize("path, extra, field", [
    (hc.FIXTURES / "Qwen--Qwen3-8B.config.json", {"n_embd": 1024}, "n_embd"),
    # one key/value head against the config's 8
    (hc.FIXTURES / "Qwen--Qwen3-8B.config.json", {"multi_query": True}, "num_key_value_heads"),
    (hc.FIXTURES / "Qwen--Qwen3-8B.config.json", {"layer_rope_theta": [1.0]}, "layer_rope_theta"),
    (hc.FIXTURES / "Qwen--Qwen3-30B-A3B.config.json", {"mlp_layer_types": ["dense"] * 48},
     "mlp_layer_types"),
    (MORE / "zai-org--GLM-5.2.config.json", {"index_topk_freq": 3}, "indexer_types"),
    (MORE / "MiniMaxAI--MiniMax-M2.5.config.json", {"mtp_transformer_layers": 2},
     "mtp_transformer_layers"),
    (MORE / "poolside--Laguna-XS.2-FP8.config.json", {"num_attention_heads_per_layer": [48]},
     "num_attention_heads_per_layer"),
    (MORE / "poolside--Laguna-XS.2-FP8.config.json", {"gating": "per-row"}, "gating"),
])
def test_contradictions_are_refused_in_one_line(path, extra, field):
    config = {**json.loads(path.read_text()), **extra}
    with pytest.raises(InputError) as err:
        hc.parse(config, "mutated")
    assert field in str(err.value) and "\n" not in str(err.value)
