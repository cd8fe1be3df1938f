"""Model presets: architecture numbers and the parameter counts derived from them.

Architectures follow the reference code of Erdil (2025) (its GPT-4 is the rumoured 16-expert
layout the paper cites). Counts are evaluated from the SymPy expressions of
:mod:`inference_math.derivations.architecture`, never re-typed here, through the NumPy code
generated from them (:mod:`inference_math.presets.counts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import numpy as np

from ..core import symbols as S
from ..core.validation import InputError, lookup, positive, positive_int
from . import hf_config
from .counts import count


@dataclass(frozen=True)
class Model:
    """A transformer's shape. Raises InputError on construction if a field is invalid."""

    name: str
    d_model: int
    d_ff: int
    layers: int
    n_q_heads: int
    source: str  # bib keys, comma separated
    ff_matrix_count: tuple[int, int] = (1, 1)  # (d_model->d_ff, d_ff->d_model) matrices
    group_size: int = 1  # query heads per KV head
    d_head: int | None = None  # defaults to d_model // n_q_heads
    n_experts: int = 1
    n_active_experts: int = 1
    weight_bytes: float = 2.0
    activation_bytes: float = 2.0
    vocab: int = 0
    parallel_attention: bool = False
    embedding_matrices: int = 2  # 2: untied input and output embeddings; 1: tied, or no LM head
    mla_kv_dim: int | None = None  # set for multi-head latent attention
    mla_q_dim: int | None = None
    # MLA's rotary key and position-free query/key widths per head (qk_rope_head_dim,
    # qk_nope_head_dim; d_head is the value head), and whether its layers can also run as
    # multi-head attention (eq-phys-mla-attention-flops); 0, None and False leave the absorbed
    # form without a rotary part, as the paper counts it
    mla_rope_dim: int = 0
    mla_nope_dim: int | None = None
    mla_multi_head: bool = False
    note: str = field(default="")
    # False: a token's experts share a node (the reference code); True: they are spread over the
    # expert-parallel group's nodes (eq-full-expert-nodes), as for the models read from configs
    experts_spread: bool = False
    # the KV-cache precision the checkpoint states (kv_cache_quant_algo, kv_cache_scheme), in
    # bits; None when it states none
    kv_cache_bits: float | None = None

    def __post_init__(self):
        where = f"model {self.name!r}"
        for name in ("d_model", "d_ff", "layers", "n_q_heads", "group_size", "n_experts",
                     "n_active_experts"):
            positive_int(f"{where}: {name}", getattr(self, name))
        if self.d_head is not None:
            positive_int(f"{where}: d_head", self.d_head)
        elif self.d_model % self.n_q_heads:
            raise InputError(f"{where}: d_head is needed because n_q_heads {self.n_q_heads} "
                             f"does not divide d_model {self.d_model}")
        if self.vocab != 0:
            positive_int(f"{where}: vocab", self.vocab)
        if self.embedding_matrices not in (1, 2):
            raise InputError(f"{where}: embedding_matrices must be 1 or 2, got {self.embedding_matrices!r}")
        for name in ("weight_bytes", "activation_bytes"):
            positive(f"{where}: {name}", getattr(self, name))
        if len(self.ff_matrix_count) != 2:
            raise InputError(f"{where}: ff_matrix_count must be a pair, got {self.ff_matrix_count!r}")
        for matrices in self.ff_matrix_count:
            positive_int(f"{where}: ff_matrix_count", matrices)
        if self.n_q_heads % self.group_size:
            raise InputError(
                f"{where}: group_size {self.group_size} does not divide n_q_heads {self.n_q_heads}"
            )
        if self.n_active_experts > self.n_experts:
            raise InputError(
                f"{where}: n_active_experts {self.n_active_experts} exceeds n_experts {self.n_experts}"
            )
        if (self.mla_kv_dim is None) != (self.mla_q_dim is None):
            raise InputError(f"{where}: MLA needs both mla_kv_dim and mla_q_dim")
        if self.is_mla:
            positive_int(f"{where}: mla_kv_dim", self.mla_kv_dim)
            positive_int(f"{where}: mla_q_dim", self.mla_q_dim)
            if self.mla_rope_dim:
                positive_int(f"{where}: mla_rope_dim", self.mla_rope_dim)
            if self.mla_nope_dim is not None:
                positive_int(f"{where}: mla_nope_dim", self.mla_nope_dim)
            if self.group_size != 1:
                raise InputError(f"{where}: MLA models need group_size 1, got {self.group_size}")
        if not self.source:
            raise InputError(f"{where}: source must name a bib key")

    @property
    def is_mla(self) -> bool:
        return self.mla_kv_dim is not None

    @property
    def head_dim(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_q_heads

    @property
    def sparsity(self) -> int:
        """s = n_experts // n_active: whole-number division, as in the paper's code."""
        return self.n_experts // self.n_active_experts

    @property
    def weight_bits(self) -> int:
        return round(8 * self.weight_bytes)

    def symbol_values(self) -> dict:
        """Values of the registry's architecture symbols for this model."""
        values = {
            S.d_model: self.d_model, S.d_ff: self.d_ff, S.n_layers: self.layers,
            S.n_q: self.n_q_heads, S.g: self.group_size, S.d_head: self.head_dim,
            S.n_experts: self.n_experts, S.n_active: self.n_active_experts, S.s: self.sparsity,
            S.n_ff_in: self.ff_matrix_count[0], S.n_ff_out: self.ff_matrix_count[1],
            S.vocab: self.vocab, S.p: self.weight_bytes, S.p_act: self.activation_bytes,
            S.n_emb: self.embedding_matrices,
        }
        if self.is_mla:
            values.update({S.c_kv: self.mla_kv_dim, S.c_q: self.mla_q_dim,
                           S.d_rope: self.mla_rope_dim,
                           S.d_nope: (self.head_dim if self.mla_nope_dim is None
                                      else self.mla_nope_dim),
                           S.xi_mha: 1.0 if self.mla_multi_head else 0.0})
        return values

    def _count(self, name: str) -> float:
        """The count ``name`` of presets.counts (NumPy code generated from its derivation)."""
        return count(name, self.symbol_values())

    @cached_property
    def attention_params(self) -> float:
        return self._count("attention_params_mla_uniform" if self.is_mla else "attention_params")

    @cached_property
    def ff_params(self) -> float:
        return self._count("feedforward_params")

    @cached_property
    def embedding_params(self) -> float:
        """m_emb·vocab·d_model (eq-kv-embedding-params; m_emb = 2 gives eq-arch-embedding-params)."""
        return self._count("embedding_params") if self.vocab else 0.0

    def _parts(self) -> dict:
        return {S.n_attn: self.attention_params, S.n_ff: self.ff_params,
                S.n_unembed: self.embedding_params}

    @cached_property
    def total_params(self) -> float:
        """N_attn + N_ff + N_unembed, evaluated from eq-moe-total-params (paper eq. 20)."""
        return count("moe_total_params", self._parts())

    @cached_property
    def active_params(self) -> float:
        """Parameters one token multiplies by: eq-moe-active-params (paper eq. 21), with the
        sparsity s by whole-number division of the experts, as the reference code has it."""
        return count("moe_active_params", {**self._parts(), S.s: self.sparsity})

    @cached_property
    def kv_bytes_per_token(self) -> float:
        return self._count("kv_cache_bytes_per_token_mla" if self.is_mla
                           else "kv_cache_bytes_per_token")

    @property
    def weights_bytes(self) -> float:
        return self.weight_bytes * self.total_params

    @classmethod
    def from_hf_config(cls, path) -> Model:
        """The Model of a Hugging Face config.json (a file or a folder holding one).

        Only architectures that map exactly onto uniform layers are accepted (Llama, Qwen3 dense,
        Mixtral, Qwen3-MoE); any other raises an InputError naming what the full model does not
        yet represent. The Model has no router term, so its MoE counts are those of
        hf_config.read_architecture less the routers (n_experts·d_model per layer).
        """
        return cls(**hf_config.model_fields(hf_config.read_architecture(path)))


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
    from . import layered
    if is_path(name):
        return layered.from_hf_config(name)
    key = lookup("model", name, {key: key for key in preset_names()})
    return _config_preset(key) if key in CONFIG_PRESETS else MODELS[key]


@cache
def _config_preset(key: str):
    from . import layered
    stem, bib = CONFIG_PRESETS[key]
    arch = hf_config.read_architecture(HF_CONFIGS / f"{stem}.config.json")
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
        return {**hf_config.describe_architecture(hf_config.read_architecture(path), weight_bits),
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
        S.n_layers: [model.layers], S.kv_layer: [kv_layer], S.window: [np.inf],
        S.state_layer: [0.0], S.ctx: context}) for context in hf_config.CONTEXTS]
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
            S.n_quant: 0.0, S.bits_q: bits, S.bits_w: bits, S.n_param: model.total_params}),
        "full_model": None,
    }
