"""The gathered corpus: 107 config.json files of models outside the shipped set
(``inference_math/data/hf_configs/more``, origins in the data README), each read, with its totals
within 2% of a published figure where one is stated, or refused in one line naming the field
that may change a count (the reason is given here).

MLC LLM's copies carry its runtime options (context_window_size, prefill_chunk_size, ...), which
the Hub's files do not hold: they are read with ``ignore`` of those, as a user would.
"""

from __future__ import annotations

import pytest

from inference_math.core.validation import InputError
from inference_math.presets import hf_config as hc

MORE = hc.FIXTURES / "more"
STEMS = sorted(p.name.removesuffix(".config.json") for p in MORE.glob("*.config.json"))
#: MLC LLM's own fields, added to the configs it presets (python/mlc_llm/model/model_preset.py).
MLC_OPTIONS = frozenset({"context_window_size", "prefill_chunk_size", "tensor_parallel_shards",
                         "max_batch_size", "attention_sink_size"})
_NAME = "the model's name"


def _fig(total, active=None, counts="all", source=_NAME, tolerance=0.02, active_tolerance=0.02,
         why="", total_counts="all"):
    """A published figure; ``counts``/``total_counts``: "all", or "no input embedding" when the
    figure leaves the input table out."""
    return {"total": total, "active": active, "counts": counts, "source": source,
            "tolerance": tolerance, "active_tolerance": active_tolerance, "why": why,
            "total_counts": total_counts}


_QWEN2 = "Qwen2 announcement, table of models (Params: 0.49B, 1.54B, 7.07B)"
_QWEN3_4B = _fig(4.0e9, 4.0e9, source="Qwen3-4B model cards ('Number of Parameters: 4.0B')")
_KIMI = _fig(1.04e12, 32e9, "no input embedding", "Kimi K2 technical report (1.04T total, 32B "
             "activated)", 0.015, why="the report's 1.04T exceeds the 1.026T the config holds "
                                      "by about one MoE layer")
_PHI = _fig(3.8e9, 3.8e9, source="Phi-3 / Phi-3.5 / Phi-4-mini model cards (3.8B parameters)")
_SMOL = "SmolLM / SmolLM2 model cards (135M, 360M, 1.7B)"

_GLM5_FIG = _fig(744e9, 40e9, "no input embedding", "GLM-5 announcement (744B parameters, 40B "
                 "active)", 0.02, 0.025, why="40B is given to two figures (±1.3%) and may count "
                                             "the input table")
#: Published figures of the configs that are read, with their sources.
FIGURES = {
    "CohereForAI--aya-23-8B": _fig(8e9, 8e9),
    "HuggingFaceTB--SmolLM-135M-Instruct": _fig(135e6, 135e6, source=_SMOL),
    "HuggingFaceTB--SmolLM-360M-Instruct": _fig(360e6, 360e6, source=_SMOL),
    "HuggingFaceTB--SmolLM-1.7B-Instruct": _fig(1.7e9, 1.7e9, source=_SMOL),
    "HuggingFaceTB--SmolLM2-135M-Instruct": _fig(135e6, 135e6, source=_SMOL),
    "HuggingFaceTB--SmolLM2-360M-Instruct": _fig(360e6, 360e6, source=_SMOL),
    "HuggingFaceTB--SmolLM2-1.7B-Instruct": _fig(1.7e9, 1.7e9, source=_SMOL),
    "Qwen--Qwen1.5-MoE-A2.7B-Chat": _fig(14.3e9, 2.7e9, source="Qwen1.5-MoE-A2.7B model card "
                                         "('14.3B parameters in total and 2.7B activated')"),
    "Qwen--Qwen2-0.5B-Instruct": _fig(0.49e9, 0.49e9, source=_QWEN2),
    "Qwen--Qwen2-1.5B-Instruct": _fig(1.54e9, 1.54e9, source=_QWEN2),
    "Qwen--Qwen2-7B-Instruct": _fig(7.07e9, 7.07e9, "no input embedding", _QWEN2,
                                    why="7.07B matches the count without the input table",
                                    total_counts="no input embedding"),
    "Qwen--Qwen2.5-3B-Instruct": _fig(3.09e9, 3.09e9, source="Qwen2.5-3B-Instruct model card "
                                      "('Number of Parameters: 3.09B')"),
    "Qwen--Qwen3-4B": _QWEN3_4B, "Qwen--Qwen3-4B-Instruct-2507": _QWEN3_4B,
    "Qwen--Qwen3-4B-Thinking-2507": _QWEN3_4B,
    "Qwen--Qwen3-Coder-480B-A35B-Instruct": _fig(480e9, 35e9, source="Qwen3-Coder model card "
                                                 "('480B in total and 35B activated')"),
    "Qwen--Qwen3-Next-80B-A3B-Thinking": _fig(80e9, source="Qwen3-Next model card ('80B in total "
                                              "and 3B activated')",
                                              why="3B active is given to one figure"),
    "Qwen--Qwen3-VL-235B-A22B-Instruct": _fig(235e9, 22e9),
    "Qwen--Qwen3-VL-235B-A22B-Thinking": _fig(235e9, 22e9),
    "Qwen--Qwen3.6-35B-A3B": _fig(35e9, why="A3B is given to one figure"),
    "Qwen--Qwen3.8-2.4T-A95B": _fig(2.4e12, 95e9),
    "Qwen--Qwen3.8-2.4T-A95B-FP8": _fig(2.4e12, 95e9),
    "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8": _fig(
        284e9, 13e9, "no input embedding", "DeepSeek-V4-Flash model card (284B total, 13B "
        "activated)", 0.02, 0.04, why="13B is given to two figures (±3.8%)"),
    "TinyLlama--TinyLlama-1.1B-Chat-v0.4": _fig(1.1e9, 1.1e9),
    "TinyLlama--TinyLlama-1.1B-Chat-v1.0": _fig(1.1e9, 1.1e9),
    "deepseek-ai--DeepSeek-V2-Lite-Chat": _fig(
        15.7e9, 2.4e9, "no input embedding", "DeepSeek-V2 model card (Lite: 15.7B total, 2.4B "
        "activated)", 0.02, 0.025, why="2.4B is given to two figures (±2.1%)"),
    "deepseek-ai--deepseek-moe-16b-chat": _fig(16.4e9, 2.8e9, source="DeepSeekMoE 16B model card "
                                               "(16.4B parameters, 2.8B activated)"),
    "google--gemma-2b": _fig(2.51e9, 2.51e9, source="Gemma report, table of parameters (2B: "
                             "524M embedding + 1,982M non-embedding)"),
    "google--gemma-2-2b-it": _fig(2.6e9, 2.6e9, source="Gemma 2 report (2.6B)"),
    "google--gemma-2-2b-jpn-it": _fig(2.6e9, 2.6e9, source="Gemma 2 report (2.6B)"),
    "google--gemma-3-1b-it": _fig(1e9, 1e9),
    "meta-llama--Llama-3.2-1B-Instruct": _fig(1.23e9, 1.23e9, source="Llama 3.2 model card "
                                              "(1B: 1.23B)"),
    "meta-llama--Llama-3.2-3B-Instruct": _fig(3.21e9, 3.21e9, source="Llama 3.2 model card "
                                              "(3B: 3.21B)"),
    "meta-llama--Llama-3.3-70B-Instruct": _fig(70e9, 70e9),
    "meta-llama--Meta-Llama-3-70B-Instruct": _fig(70e9, 70e9),
    "meta-llama--Meta-Llama-3-8B-Instruct": _fig(8e9, 8e9),
    "microsoft--Phi-3-mini-4k-instruct": _PHI, "microsoft--Phi-3.5-mini-instruct": _PHI,
    "microsoft--Phi-4-mini-instruct": _PHI,
    "mistralai--Mistral-7B-Instruct-v0.3": _fig(7.3e9, 7.3e9, source="Mistral 7B announcement "
                                                "('a 7.3B parameter model')"),
    "moonshotai--Kimi-K2-Thinking": _KIMI,
    "nvidia--Llama-3_3-Nemotron-Super-49B-v1": _fig(49e9, 49e9),
    "togethercomputer--RedPajama-INCITE-Chat-3B-v1": _fig(2.8e9, 2.8e9, source="RedPajama-INCITE "
                                                          "model card (2.8B parameters)"),
    "zai-org--GLM-4.7-FP8": _fig(355e9, source="GLM-4.5/4.7 model cards (355B total, 32B active)",
                                 why="32B active is not compared: this copy has no MTP layer "
                                     "and the card does not say what the 32B counts"),
    "zai-org--GLM-4.7-Flash": _fig(30e9, why="A3B is given to one figure"),
    **{stem: _GLM5_FIG for stem in ("zai-org--GLM-5", "zai-org--GLM-5-FP8", "zai-org--GLM-5.1",
                                    "zai-org--GLM-5.1-FP8", "nvidia--GLM-5-NVFP4")},
}
#: Read, but no published figure precise to 2% (names that round: 7B for 6.74B, ...).
READ_WITHOUT_FIGURE = {
    "OrionStarAI--Orion-14B-Chat", "XiaomiMiMo--MiMo-7B-Base", "allenai--OLMo-2-0325-32B-Instruct",
    "allenai--OLMo-2-1124-13B-Instruct", "allenai--OLMo-2-1124-7B-Instruct",
    "baichuan-inc--Baichuan2-7B-Chat", "bigcode--starcoder2-7b", "codellama--CodeLlama-13b-hf",
    "codellama--CodeLlama-34b-hf", "codellama--CodeLlama-7b-hf", "internlm--internlm-chat-7b",
    "internlm--internlm2-chat-7b", "internlm--internlm2_5-7b-chat", "meta-llama--Llama-2-13b-hf",
    "meta-llama--Llama-2-70b-chat-hf", "meta-llama--Llama-2-7b-chat-hf",
    "Qwen--Qwen1.5-1.8B-Chat", "stabilityai--stablelm-2-zephyr-1_6b",
    "stabilityai--stablelm-zephyr-3b", "stepfun-ai--Step-3.7-Flash",
    "stepfun-ai--Step-3.7-Flash-FP8",
}
_GPT = "GPT-2-style names (n_embd, n_layer, n_head) are not aliases the reader knows"
_GLM5 = ("GLM-5.1+'s sparse attention holds per-layer indexer fields of its own (indexer_types, "
         "index_skip_topk_offset): which layers share an indexer is not read")
#: Refused: (the field the refusal names, why the refusal is right or what it would take).
REFUSED = {
    "EleutherAI--gpt-j-6b": ("n_embd", _GPT),
    "bigcode--gpt_bigcode-santacoder": ("n_embd", _GPT),
    "microsoft--phi-1_5": ("n_embd", _GPT), "microsoft--phi-2": ("n_embd", _GPT),
    "openai-community--gpt2": ("n_ctx", _GPT), "openai-community--gpt2-medium": ("n_ctx", _GPT),
    "MiniMaxAI--MiniMax-M2.5": ("mtp_transformer_layers", "MiniMax's MTP modules: their "
                                "layers are not read"),
    "MiniMaxAI--MiniMax-M2.7": ("mtp_transformer_layers", "as MiniMax-M2.5"),
    "nvidia--MiniMax-M2.5-NVFP4": ("mtp_transformer_layers", "as MiniMax-M2.5"),
    "nvidia--MiniMax-M2.7-NVFP4": ("mtp_transformer_layers", "as MiniMax-M2.5"),
    "MiniMaxAI--MiniMax-M3": ("dense_intermediate_size", "a dense width beside the experts' "
                              "that no alias names"),
    "nvidia--MiniMax-M3-NVFP4": ("dense_intermediate_size", "as MiniMax-M3"),
    "Qwen--Qwen-1_8B-Chat": ("kv_channels", "Qwen (1)'s own names for the head width"),
    "THUDM--chatglm3-6b": ("ffn_hidden_size", "ChatGLM's own names for the widths"),
    "XiaomiMiMo--MiMo-V2-Flash": ("sliding_window_size", "a hybrid sliding-window layout with "
                                  "its own heads and head widths"),
    "google--gemma-2-9b-it": ("sliding_window_size", "MLC's copy renames the window; Gemma 2 "
                              "alternates sliding and global layers"),
    "google--gemma-2-27b-it": ("sliding_window_size", "as gemma-2-9b-it"),
    "mistralai--Mistral-7B-Instruct-v0.1": ("sliding_window_size", "MLC's copy renames the "
                                            "window"),
    "llava-hf--llava-1.5-7b-hf": ("vision_feature_layer", "the vision tower's fields"),
    "microsoft--Phi-3.5-vision-instruct": ("img_processor", "the vision tower's fields"),
    "mistralai--Ministral-3-3B-Instruct-2512": ("spatial_merge_size", "the vision tower's "
                                                "fields"),
    "mistralai--Ministral-3-3B-Reasoning-2512": ("spatial_merge_size", "the vision tower's "
                                                 "fields"),
    "meta-models--Muse-Glimmer-30B": ("layer_rope_theta", "a per-layer list: its 0 entries "
                                      "mark layers without RoPE, a layout not read"),
    "moonshotai--Kimi-K3": ("attn_res_block_size", "Kimi K3's blocks of attention residuals"),
    "openbmb--MiniCPM-2B-dpo-fp16": ("dim_model_base", "MiniCPM's width scaling (muP)"),
    "openbmb--MiniCPM-2B-sft-bf16": ("dim_model_base", "as MiniCPM-2B-dpo"),
    "openbmb--MiniCPM-MoE-8x2B": ("dim_model_base", "as MiniCPM-2B-dpo"),
    "poolside--Laguna-S-2.1-FP8": ("mlp_layer_types", "a per-layer dense/sparse list under a "
                                   "name the reader does not know"),
    "poolside--Laguna-XS.2-FP8": ("mlp_layer_types", "as Laguna-S-2.1"),
    **{f"{org}--GLM-{v}{s}": (field, _GLM5) for org, v, s, field in (
        ("nvidia", "5.1", "-NVFP4", "indexer_types"),
        ("zai-org", "5.2", "", "index_skip_topk_offset"),
        ("zai-org", "5.2", "-FP8", "index_skip_topk_offset"),
        ("nvidia", "5.2", "-NVFP4", "index_skip_topk_offset"),
        ("zai-org", "5.3", "", "index_skip_topk_offset"),
        ("zai-org", "5.3", "-FP8", "index_skip_topk_offset"),
        ("nvidia", "5.3", "-NVFP4", "index_skip_topk_offset"))},
}


def _read(stem: str) -> hc.Architecture:
    """A config of the corpus, read with MLC LLM's runtime options ignored (only MLC's copies
    hold them; ignoring an absent field only adds a note)."""
    return hc.read_architecture(MORE / f"{stem}.config.json", ignore=MLC_OPTIONS)


def test_the_corpus_is_large_and_new():
    shipped = {p.name for p in hc.FIXTURES.glob("*.config.json")}
    assert len(STEMS) >= 100
    assert not shipped & {f"{s}.config.json" for s in STEMS}


def test_every_config_has_a_figure_a_reason_or_is_listed():
    assert set(FIGURES) | READ_WITHOUT_FIGURE | set(REFUSED) == set(STEMS)
    assert not set(FIGURES) & set(REFUSED) and not READ_WITHOUT_FIGURE & set(REFUSED)
    assert all(why for _, why in REFUSED.values())


def test_every_config_has_its_origin_in_the_readme():
    readme = (hc.FIXTURES / "README.md").read_text()
    assert all(f"`{stem}.config.json`" in readme for stem in STEMS)


@pytest.mark.parametrize("stem", sorted(FIGURES))
def test_counts_match_published_figures(stem):
    arch, figure = _read(stem), FIGURES[stem]
    total = arch.total_params - (arch.input_embedding_params
                                 if figure["total_counts"] == "no input embedding" else 0)
    assert abs(total / figure["total"] - 1) <= figure["tolerance"], stem
    if figure["active"]:
        active = arch.active_params - (arch.input_embedding_params
                                       if figure["counts"] == "no input embedding" else 0)
        assert abs(active / figure["active"] - 1) <= figure["active_tolerance"], stem


@pytest.mark.parametrize("stem", sorted(READ_WITHOUT_FIGURE))
def test_read_without_a_figure(stem):
    assert _read(stem).total_params > 0


@pytest.mark.parametrize("stem", sorted(REFUSED))
def test_refused_in_one_line_naming_the_field(stem):
    field, _ = REFUSED[stem]
    with pytest.raises(InputError) as err:
        _read(stem)
    assert f"field {field!r} is not understood" in str(err.value)
    assert "\n" not in str(err.value)


def test_shares():
    """How many are read (71 of 107) and compared with a stated figure (50, each within 2% or
    its stated tolerance)."""
    read = len(FIGURES) + len(READ_WITHOUT_FIGURE)
    assert (read, len(STEMS), len(FIGURES)) == (71, 107, 50)
