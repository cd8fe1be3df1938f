"""Model presets: architecture numbers and the parameter counts derived from them.

Architectures follow the reference code of Erdil (2025) (its GPT-4 is the rumoured 16-expert
layout the paper cites). Counts are evaluated from the SymPy expressions of
:mod:`inference_math.derivations.architecture`, never re-typed here, through the NumPy code
generated from them (:mod:`inference_math.presets.counts`); the
uniform model itself is :class:`~inference_math.presets.uniform.Model`, re-exported here.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

from ..core import names as N
from ..core.validation import InputError, lookup
from . import hf_config, layered
from .counts import count
from .uniform import Model

__all__ = ["Model", "MODELS", "CONFIG_PRESETS", "describe", "get_model", "is_path", "preset_names"]


_LLAMA3 = "dubey2024llama3,erdil2025inference"
_PALM = "chowdhery2022palm,erdil2025inference"

MODELS: dict[str, Model] = {
    "llama-3-8b": Model("Llama 3 8B", d_model=4096, d_ff=14336, layers=32, n_q_heads=32,
                        group_size=4, ff_matrix_count=(2, 1), vocab=128256, source=_LLAMA3),
    "llama-3-70b": Model("Llama 3 70B", d_model=8192, d_ff=28672, layers=80, n_q_heads=64,
                         group_size=8, ff_matrix_count=(2, 1), vocab=128256, source=_LLAMA3),
    "gpt-3": Model("GPT-3 175B", d_model=12288, d_ff=49152, layers=96, n_q_heads=96,
                   vocab=50257, source="brown2020gpt3,erdil2025inference"),
    "palm-8b": Model("PaLM 8B", d_model=4096, d_ff=16384, layers=32, n_q_heads=16,
                     group_size=16, d_head=256, ff_matrix_count=(2, 1), vocab=256000,
                     parallel_attention=True, source=_PALM,
                     note="the reference code stores 1-byte weights for PaLM 8B; 16-bit here"),
    "palm-62b": Model("PaLM 62B", d_model=8192, d_ff=32768, layers=64, n_q_heads=32,
                      group_size=32, d_head=256, ff_matrix_count=(2, 1), vocab=256000,
                      parallel_attention=True, source="chowdhery2022palm",
                      note="not in the reference code; shape from the PaLM paper, Table 1"),
    "palm-540b": Model("PaLM 540B", d_model=18432, d_ff=73728, layers=118, n_q_heads=48,
                       group_size=48, d_head=256, ff_matrix_count=(2, 1), vocab=256000,
                       parallel_attention=True, source=_PALM),
    "gpt-4": Model("GPT-4", d_model=12288, d_ff=36864, layers=120, n_q_heads=96, group_size=96,
                   d_head=192, n_experts=16, n_active_experts=2, vocab=100256,
                   source="patel2023gpt4,erdil2025inference",
                   note="the rumoured architecture the paper assumes, not a published one"),
    "mixtral-8x22b": Model("Mixtral 8x22B", d_model=6144, d_ff=16384, layers=56, n_q_heads=48,
                           group_size=6, ff_matrix_count=(2, 1), n_experts=8,
                           n_active_experts=2, vocab=32000,
                           source="mistral2024mixtral8x22b,erdil2025inference"),
    "deepseek-v3-paper": Model("DeepSeek-V3", d_model=7168, d_ff=2048, layers=58, n_q_heads=128,
                         d_head=128, ff_matrix_count=(2, 1), n_experts=256, n_active_experts=9,
                         weight_bytes=1, vocab=129280, mla_kv_dim=512, mla_q_dim=1536,
                         source="deepseekai2024v3,erdil2025inference",
                         note="as in the reference code: the shared expert is a ninth routed "
                              "expert and all 58 layers are MoE"),
    # --- the full model of Erdil (2025): the reference code's other models ---
    "llama-3-8b-mqa": Model("Llama 3 8B MQA", d_model=4096, d_ff=14336, layers=32, n_q_heads=32,
                            group_size=32, ff_matrix_count=(2, 1), vocab=128256, source=_LLAMA3,
                            note="hypothetical: Llama 3 8B with one KV head (the paper's "
                                 "long-context drafter)"),
    "llama-3-8b-8bit": Model("Llama 3 8B 8-bit", d_model=4096, d_ff=14336, layers=32,
                             n_q_heads=32, group_size=4, ff_matrix_count=(2, 1), vocab=128256,
                             weight_bytes=1, source=_LLAMA3,
                             note="the reference code's object swaps weight and activation bytes "
                                  "(unused there); here 8-bit weights, 16-bit activations"),
    "llama-3-70b-mqa": Model("Llama 3 70B MQA", d_model=8192, d_ff=28672, layers=80, n_q_heads=64,
                             group_size=64, ff_matrix_count=(2, 1), vocab=128256, source=_LLAMA3,
                             note="hypothetical: Llama 3 70B with one KV head"),
    "llama-3-70b-8bit": Model("Llama 3 70B 8-bit", d_model=8192, d_ff=28672, layers=80,
                              n_q_heads=64, group_size=8, ff_matrix_count=(2, 1), vocab=128256,
                              weight_bytes=1, source=_LLAMA3),
    "llama-3-70b-4bit": Model("Llama 3 70B 4-bit", d_model=8192, d_ff=28672, layers=80,
                              n_q_heads=64, group_size=8, ff_matrix_count=(2, 1), vocab=128256,
                              weight_bytes=0.5, source=_LLAMA3),
    "llama-3.1-405b": Model("Llama 3.1 405B", d_model=16384, d_ff=53248, layers=126,
                            n_q_heads=128, group_size=8, ff_matrix_count=(2, 1), vocab=128256,
                            source=_LLAMA3),
    "llama-3.1-405b-8bit": Model("Llama 3.1 405B 8-bit", d_model=16384, d_ff=53248, layers=126,
                                 n_q_heads=128, group_size=8, ff_matrix_count=(2, 1),
                                 vocab=128256, weight_bytes=1, source=_LLAMA3),
    "mixtral-8x22b-mqa": Model("Mixtral 8x22B MQA", d_model=6144, d_ff=16384, layers=56,
                               n_q_heads=48, group_size=48, ff_matrix_count=(2, 1), n_experts=8,
                               n_active_experts=2, vocab=32000,
                               source="mistral2024mixtral8x22b,erdil2025inference",
                               note="hypothetical: Mixtral 8x22B with one KV head"),
    "mixtral-8x7b": Model("Mixtral 8x7B", d_model=4096, d_ff=14336, layers=32, n_q_heads=32,
                          group_size=4, ff_matrix_count=(2, 1), n_experts=8, n_active_experts=2,
                          vocab=32000, source="jiang2024mixtral,erdil2025inference"),
    "mistral-large-2": Model("Mistral Large 2", d_model=12288, d_ff=28672, layers=88,
                             n_q_heads=96, group_size=12, d_head=128, ff_matrix_count=(2, 1),
                             vocab=32768, source="mistral2024large2,erdil2025inference"),
    "falcon-180b": Model("Falcon 180B", d_model=14848, d_ff=59392, layers=80, n_q_heads=232,
                         group_size=232, d_head=64, vocab=65024,
                         source="almazrouei2023falcon,erdil2025inference",
                         note="as in the reference code: one KV head (multi-query)"),
    "gpt-3.5": Model("GPT-3.5", d_model=4608, d_ff=18432, layers=32, n_q_heads=32, group_size=32,
                     d_head=144, n_experts=4, n_active_experts=2, source="erdil2025inference",
                     note="a guess of the reference code, not a published architecture; no "
                          "vocabulary counted"),
    "gpt-j-6b": Model("GPT-J 6B", d_model=4096, d_ff=16384, layers=28, n_q_heads=16, d_head=256,
                      vocab=50257, source="wang2021gptj,erdil2025inference"),
    # --- Tensor Economics presets (owner: dense_economics) ---
    "llama-3.3-70b": Model("Llama 3.3 70B", d_model=8192, d_ff=28672, layers=80, n_q_heads=64,
                           group_size=8, ff_matrix_count=(2, 1), vocab=128256,
                           source="mazurek2025llm,dubey2024llama3",
                           note="the shape of Llama 3 70B; the config Mazurek and Gabriel (2025) "
                                "show in their Fig. 1"),
    "llama-3.1-8b": Model("Llama 3.1 8B", d_model=4096, d_ff=14336, layers=32, n_q_heads=32,
                          group_size=4, ff_matrix_count=(2, 1), vocab=128256,
                          source="mazurek2025llm,dubey2024llama3",
                          note="the shape of Llama 3 8B; measured in the vLLM sweep of "
                               "Mazurek and Gabriel (2025)"),
    # --- Tensor Economics presets (owner: deepseek_serving) ---
    # --- Tensor Economics presets (owner: rollouts) ---
    "qwen3-embedding-8b": Model("Qwen3-Embedding-8B", d_model=4096, d_ff=12288, layers=36,
                                n_q_heads=32, group_size=4, d_head=128, ff_matrix_count=(2, 1),
                                vocab=151665, embedding_matrices=1,
                                source="qwen2025qwen3embedding,mazurek2025embeddings",
                                note="an embedding model: input embedding, no LM head"),
}


def is_path(name) -> bool:
    """Whether a model name is a path to a config.json (or its folder) rather than a preset.

    A name with a path separator or ending in .json is a path; a preset's name is a preset even
    if a file of that name exists; any other name is a path if it exists.
    """
    text = str(name)
    if "/" in text or "\\" in text or text.endswith(".json"):
        return True
    try:
        lookup("model", text, MODELS)
        return False
    except InputError:
        return Path(text).exists()


#: Presets read from the Hugging Face configs in inference_math/data/hf_configs (the models of
#: "Serving today's frontier models"), with the bib keys of their model cards.
CONFIG_PRESETS: dict[str, tuple[str, str]] = {
    "deepseek-v3": ("deepseek-ai--DeepSeek-V3", "deepseekai2024v3"),
    "kimi-k2": ("moonshotai--Kimi-K2-Instruct", "kimi2025k2"),
    "qwen3-235b-a22b": ("Qwen--Qwen3-235B-A22B", "qwen2025qwen3"),
    "gpt-oss-120b": ("openai--gpt-oss-120b", "openai2025gptoss"),
    "llama-4-maverick": ("meta-llama--Llama-4-Maverick-17B-128E-Instruct", "meta2025llama4"),
    "llama-3.1-405b-config": ("meta-llama--Meta-Llama-3.1-405B", "dubey2024llama3"),
}
HF_CONFIGS = Path(__file__).resolve().parent.parent / "data" / "hf_configs"


def preset_names() -> list[str]:
    """Every model preset: the paper's and the configs' (:data:`CONFIG_PRESETS`)."""
    return [*MODELS, *CONFIG_PRESETS]


def get_model(name):
    """The model preset called ``name`` (e.g. 'llama-3-70b', 'deepseek-v3'), or the model of a
    config.json: a Model, or a LayeredModel for a config whose layers differ.

    A path (see :func:`is_path`) is read with :func:`inference_math.presets.layered.from_hf_config`;
    a name of :data:`CONFIG_PRESETS` reads its bundled config; anything else is looked up among
    the presets (InputError listing them all).
    """
    if is_path(name):
        return layered.from_hf_config(name)
    key = lookup("model", name, {key: key for key in preset_names()})
    return _config_preset(key) if key in CONFIG_PRESETS else MODELS[key]


@cache
def _config_preset(key: str):
    stem, bib = CONFIG_PRESETS[key]
    # a bundled config is read as shipped, whatever a command line assumes or ignores
    arch = hf_config.read_architecture(HF_CONFIGS / f"{stem}.config.json", {}, ())
    try:
        return Model(**{**hf_config.model_fields(arch), "source": bib})
    except InputError:
        return layered.LayeredModel.from_architecture(arch, source=bib)


def describe(name, weight_bits: float | None = None) -> dict:
    """What ``inference-math describe-model`` prints for a preset or a config.json path.

    A preset is one group of uniform layers counted as the preset counts them (its conventions:
    no router, the MLA formula of eq-arch-attention-params-mla), its cache growing without cap.
    """
    if is_path(name):
        return hf_config.describe_architecture(hf_config.read_architecture(name), weight_bits)
    key = lookup("model", name, {key: key for key in preset_names()})
    if key in CONFIG_PRESETS:
        path = HF_CONFIGS / f"{CONFIG_PRESETS[key][0]}.config.json"
        return {**hf_config.describe_architecture(hf_config.read_architecture(path, {}, ()),
                                                  weight_bits),
                "source": f"preset {key} (config.json)"}
    model = MODELS[key]
    moe = model.n_experts > 1
    attention = {"span": "full", "heads": "MLA" if model.is_mla else hf_config._heads(
        model.n_q_heads, model.n_q_heads // model.group_size), "n_q": model.n_q_heads,
        "n_kv": model.n_q_heads // model.group_size, "d_head": model.head_dim, "window": None}
    ffn = {"kind": "moe" if moe else "dense", "d_ff": model.d_ff}
    if moe:
        ffn.update({"n_experts": model.n_experts, "top_k": model.n_active_experts, "n_shared": 0,
                    "d_shared": None})
    per_layer = (model.attention_params + model.ff_params) / model.layers
    active_layer = (model.attention_params + model.ff_params / model.sparsity) / model.layers
    heads = attention["heads"]
    description = (f"{heads} ({model.n_q_heads} q / {attention['n_kv']} kv heads of "
                   f"{model.head_dim}) full attention + "
                   + (f"MoE FFN (top-{model.n_active_experts} of {model.n_experts} experts of "
                      f"{model.d_ff})" if moe else f"dense FFN (d_ff {model.d_ff})"))
    kv_layer = model.kv_bytes_per_token / model.layers
    at_context = [count("kv_bytes_at_context", {
        N.n_layers: [model.layers], N.kv_layer: [kv_layer], N.window: [math.inf],
        N.state_layer: [0.0], N.ctx: context}) for context in hf_config.CONTEXTS]
    bits = model.weight_bytes * 8 if weight_bits is None else weight_bits
    input_embedding = model.embedding_params / 2 if model.embedding_matrices == 2 else 0.0
    return {
        "name": model.name, "model_type": None, "source": "preset",
        "total_params": model.total_params, "active_params": model.active_params,
        "active_params_without_input_embedding": model.active_params - input_embedding,
        "embedding_params": model.embedding_params,
        "tied_embeddings": model.embedding_matrices == 1, "mtp_layers": 0, "mtp_params": 0.0,
        "layer_count": model.layers,
        "layers": [{"count": model.layers, "attention": attention, "ffn": ffn,
                    "description": description, "params_per_layer": per_layer,
                    "active_params_per_layer": active_layer,
                    "kv_bytes_per_token_per_layer": kv_layer, "state_bytes_per_layer": 0.0}],
        "kv_bytes_per_token": model.kv_bytes_per_token,
        "kv_bytes_per_token_beyond_windows": model.kv_bytes_per_token,
        "kv_state_bytes_per_sequence": 0.0,
        "kv_indexer_bytes_per_token": 0.0,
        "kv_bytes_at_context": dict(zip(map(str, hf_config.CONTEXTS), at_context, strict=True)),
        "read_by_fields": False, "kv_cache_bits": model.kv_cache_bits,
        "weight_bits": bits, "quantized_params": 0.0, "quantized_bits": None,
        "quantization": None,
        "weight_bytes": count("weight_bytes", {
            N.n_quant: 0.0, N.bits_q: bits, N.bits_w: bits, N.n_param: model.total_params}),
        "full_model": None,
    }
