"""Models read from a Hugging Face ``config.json``: layer groups, parameter counts, cache, weights.

:func:`read_architecture` reads a ``config.json`` (a path to the file or a folder holding one; no
network) into an :class:`Architecture`: the layers grouped by kind, each group with its count, an
attention block (MHA/GQA/MQA/MLA or linear attention; full, sliding-window or chunked) and a
feed-forward block (dense, or MoE with routed and shared experts). Every count is evaluated from the
derivations of :mod:`inference_math.derivations.layer_mix`.

Conventions: weight matrices are counted (attention projections, experts, shared experts,
routers, embeddings), vectors are not (norms, biases, attention sinks); the active count includes
both embeddings, as eq. 21 of Erdil (2025) does, and ``describe-model`` also reports it without the
input embedding; multi-token-prediction layers are reported beside the total, not in it; a layer
whose values reuse its keys (Gemma 4's attention_k_eq_v) is assumed to cache both, as the
transformers cache does.

What the reader cannot represent it refuses with an InputError of one line naming the
``model_type`` and the field: state-space (Mamba) layers, per-layer block configurations, unknown
model types and layer kinds, malformed JSON, missing or non-numeric fields. It never guesses a
count.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..core import symbols as S
from ..core.validation import InputError
from ..derivations import layer_mix as lm

#: model_type values the reader maps, and the family parser that reads each.
SUPPORTED = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "deepseek_v3",
             "kimi_k2", "gpt_oss", "llama4", "llama4_text", "gemma4", "gemma4_text",
             "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_next")
#: Fields or model types of state-space (Mamba) hybrids, which have no attention-like layer here.
SSM_TYPES = ("mamba", "mamba2", "jamba", "zamba", "zamba2", "falcon_mamba", "falcon_h1", "bamba",
             "nemotron_h", "granitemoehybrid", "plamo2", "lfm2")
SSM_FIELDS = ("layers_block_type", "hybrid_override_pattern", "attn_layer_indices",
              "mamba_d_state", "ssm_state_size", "mamba_expand", "state_size")
#: Fields that give every layer its own block, which layer groups of one kind cannot hold.
PER_LAYER_FIELDS = ("block_configs",)
LAYER_KINDS = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")
#: Largest whole number a field may hold: far above any model, low enough that no count overflows.
MAX_FIELD = 10**9
#: Bits of the weights for a torch dtype.
DTYPE_BITS = {"bfloat16": 16, "float16": 16, "float32": 32, "float": 32, "half": 16}
#: Contexts at which describe-model reports the cache of one sequence.
CONTEXTS = (1024, 32768, 131072)
#: MXFP4 (OCP MX v1.0): 4-bit E2M1 elements, one 8-bit E8M0 scale per block of 32.
MXFP4 = {"bits_elem": 4, "bits_scale": 8, "block_elems": 32}
#: FP8 with block scales: 8-bit elements, one float32 scale per weight_block_size block.
FP8_SCALE_BITS = 32


@dataclass(frozen=True)
class Attention:
    """The attention block of a layer. ``span``: full, sliding, chunked or linear."""

    span: str
    heads: str  # MHA, GQA, MQA, MLA or linear
    n_q: int
    n_kv: int
    d_head: int
    window: int | None = None  # sliding window or chunk, tokens
    m_q: int = 1  # 2 with an output gate
    m_kv: int = 2  # 1 when the values reuse the keys
    sinks: bool = False
    mla: tuple[int, int, int, int] | None = None  # (q_lora_rank, kv_lora_rank, rope dim, v dim)
    linear: tuple[int, int, int, int, int] | None = None  # (n_k, d_k, n_v, d_v, conv kernel)

    def describe(self) -> str:
        if self.span == "linear":
            n_k, d_k, n_v, d_v, conv = self.linear
            return (f"linear attention ({n_k} key / {n_v} value heads of {d_k}/{d_v}, "
                    "constant state)")
        span = {"full": "full", "sliding": f"sliding-window {self.window}",
                "chunked": f"chunked {self.window}"}[self.span]
        if self.mla:
            c_q, c_kv, rope, _ = self.mla
            heads = f"MLA ({self.n_q} heads, kv rank {c_kv}, q rank {c_q}, rope {rope})"
        else:
            heads = f"{self.heads} ({self.n_q} q / {self.n_kv} kv heads of {self.d_head})"
        extras = [text for flag, text in ((self.m_q == 2, "output gate"),
                                          (self.m_kv == 1, "K = V"), (self.sinks, "sinks")) if flag]
        return f"{heads} {span} attention" + (f" [{', '.join(extras)}]" if extras else "")

    def as_dict(self) -> dict:
        out = {"span": self.span, "heads": self.heads, "n_q": self.n_q, "n_kv": self.n_kv,
               "d_head": self.d_head, "window": self.window}
        if self.m_q != 1:
            out["output_gate"] = True
        if self.m_kv != 2:
            out["values_reuse_keys"] = True
        if self.sinks:
            out["attention_sinks"] = True
        if self.mla:
            out.update(dict(zip(("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim"),
                                self.mla, strict=True)))
        if self.linear:
            out.update(dict(zip(("key_heads", "key_head_dim", "value_heads", "value_head_dim",
                                 "conv_kernel"), self.linear, strict=True)))
        return out


@dataclass(frozen=True)
class FeedForward:
    """The feed-forward block of a layer: dense (one expert) or MoE."""

    kind: str  # dense or moe
    d_ff: int  # width of the dense block or of one routed expert
    n_experts: int = 1
    top_k: int = 1
    n_shared: int = 0
    d_shared: int | None = None

    def describe(self) -> str:
        if self.kind == "dense":
            return f"dense FFN (d_ff {self.d_ff})"
        shared = (f" + {self.n_shared} shared of {self.d_shared}" if self.n_shared else "")
        return f"MoE FFN (top-{self.top_k} of {self.n_experts} experts of {self.d_ff}{shared})"

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "d_ff": self.d_ff}
        if self.kind == "moe":
            out.update({"n_experts": self.n_experts, "top_k": self.top_k,
                        "n_shared": self.n_shared, "d_shared": self.d_shared})
        return out


@dataclass(frozen=True)
class LayerGroup:
    count: int
    attention: Attention
    ffn: FeedForward


@dataclass(frozen=True)
class Architecture:
    """A model's layer mix and what counting it needs."""

    name: str
    model_type: str
    d_model: int
    vocab: int
    tied: bool
    groups: tuple[LayerGroup, ...]
    dtype_bits: float = 16.0
    activation_bytes: float = 2.0
    state_bytes: float = 2.0  # bytes per element of a linear-attention state
    n_mtp: int = 0
    mtp_layer: LayerGroup | None = None
    quantization: dict | None = None  # {"method", "bits" (per quantized weight), "which"}
    features: tuple[str, ...] = ()  # what the uniform full model does not represent

    # --- per-layer values, evaluated from the derivations -----------------------------------
    def _layer(self, group: LayerGroup) -> dict:
        a, f = group.attention, group.ffn
        shape = {S.d_model: self.d_model, S.n_ff_in: 2, S.n_ff_out: 1, S.p_act: self.activation_bytes,
                 S.p_state: self.state_bytes}
        if a.linear:
            n_k, d_k, n_v, d_v, conv = a.linear
            shape.update({S.n_lk: n_k, S.d_lk: d_k, S.n_lv: n_v, S.d_lv: d_v, S.k_conv: conv})
            attn_eq, kv, state = lm.attention_params_linear(), 0.0, _eval(lm.state_bytes_linear(),
                                                                          shape)
        elif a.mla:
            c_q, c_kv, rope, d_v = a.mla
            shape.update({S.n_q: a.n_q, S.d_head: a.d_head, S.c_q: c_q, S.c_kv: c_kv,
                          S.d_rope: rope, S.d_v: d_v})
            attn_eq, kv, state = lm.attention_params_mla(), _eval(lm.kv_bytes_mla(), shape), 0.0
        else:
            shape.update({S.n_q: a.n_q, S.n_kv: a.n_kv, S.d_head: a.d_head, S.m_q: a.m_q,
                          S.m_kv: a.m_kv})
            attn_eq, kv, state = lm.attention_params_gqa(), _eval(lm.kv_bytes_gqa(), shape), 0.0
        shape.update({S.d_ff: f.d_ff, S.n_experts: f.n_experts, S.n_active: f.top_k,
                      S.n_sh: f.n_shared, S.d_ff_shared: f.d_shared or 1})
        if f.kind == "dense":
            ff = ff_active = _eval(lm.ff_params_dense(), shape)
        else:
            ff = _eval(lm.ff_params_moe(), shape)
            ff_active = _eval(lm.ff_params_moe_active(), shape)
        experts = _eval(lm.ff_params_dense(), {**shape, S.d_ff: f.d_ff}) * f.n_experts \
            if f.kind == "moe" else 0.0
        return {"attention": _eval(attn_eq, shape), "ff": ff, "ff_active": ff_active,
                "routed_experts": experts, "kv": kv, "state": state,
                "window": float(a.window) if a.window and a.span != "linear" else math.inf,
                "linear": a.span == "linear"}

    @cached_property
    def layers(self) -> list[dict]:
        return [self._layer(group) for group in self.groups]

    def _groups(self, *keys) -> dict:
        symbols = {"attention": S.n_attn_layer, "ff": S.n_ff_layer, "ff_active": S.n_ff_layer_active,
                   "kv": S.kv_layer, "state": S.state_layer, "window": S.window}
        out = {S.n_layers: [g.count for g in self.groups]}
        out.update({symbols[k]: [layer[k] for layer in self.layers] for k in keys})
        return out

    @property
    def _embedding_values(self) -> dict:
        return {S.n_emb: 1 if self.tied else 2, S.vocab: self.vocab, S.d_model: self.d_model}

    @cached_property
    def total_params(self) -> float:
        """eq-layers-total-params (the multi-token-prediction layers are not in it)."""
        return lm.evaluate_groups(lm.total_params(), self._groups("attention", "ff"),
                                  self._embedding_values)

    @cached_property
    def active_params(self) -> float:
        """eq-layers-active-params: both embeddings counted in full, as eq. 21 does."""
        return lm.evaluate_groups(lm.active_params(), self._groups("attention", "ff_active"),
                                  self._embedding_values)

    @property
    def embedding_params(self) -> float:
        return self.vocab * self.d_model * (1 if self.tied else 2)

    @property
    def input_embedding_params(self) -> float:
        """The input table, a lookup of one row per token (what some model cards leave out)."""
        return 0.0 if self.tied else self.vocab * self.d_model

    @cached_property
    def mtp_params(self) -> float:
        """eq-layers-mtp-params: 0 without a multi-token-prediction module."""
        if not self.n_mtp:
            return 0.0
        layer = self._layer(self.mtp_layer)
        return lm.evaluate_at(lm.mtp_params(), {S.n_mtp: self.n_mtp, S.n_attn_layer: layer["attention"],
                                          S.n_ff_layer: layer["ff"], S.d_model: self.d_model})

    def kv_bytes_at(self, context: float) -> float:
        """eq-layers-kv-context: cache bytes of one sequence at ``context`` tokens."""
        return lm.evaluate_groups(lm.kv_bytes_at_context(),
                                  self._groups("kv", "state", "window"), {S.ctx: context})

    @property
    def kv_bytes_per_token(self) -> float:
        """Bytes one token adds while every window is still open: eq-layers-kv-context's slope."""
        return sum(g.count * layer["kv"] for g, layer in zip(self.groups, self.layers, strict=True))

    @property
    def kv_bytes_per_token_long(self) -> float:
        """Bytes one token adds once every window and chunk is full: the full-attention layers."""
        return sum(g.count * layer["kv"] for g, layer in zip(self.groups, self.layers, strict=True)
                   if math.isinf(layer["window"]))

    @property
    def state_bytes_per_sequence(self) -> float:
        return sum(g.count * layer["state"] for g, layer in zip(self.groups, self.layers,
                                                                 strict=True))

    @property
    def quantized_params(self) -> float:
        """Parameters stored in the quantized format of ``quantization`` (0 without one)."""
        if not self.quantization:
            return 0.0
        if self.quantization["which"] == "routed experts":
            return sum(g.count * layer["routed_experts"]
                       for g, layer in zip(self.groups, self.layers, strict=True))
        # every linear layer: all but the embeddings and the routers
        routers = sum(g.count * g.ffn.n_experts * self.d_model for g in self.groups
                      if g.ffn.kind == "moe")
        return self.total_params - self.embedding_params - routers

    def weight_bits_used(self, weight_bits: float | None = None) -> tuple[float, float, float]:
        """(N_q, b_q, b_w): quantized parameters, their bits, the bits of the others."""
        if weight_bits is not None:
            return 0.0, weight_bits, weight_bits
        if not self.quantization:
            return 0.0, self.dtype_bits, self.dtype_bits
        return self.quantized_params, self.quantization["bits"], self.dtype_bits

    def weight_bytes(self, weight_bits: float | None = None) -> float:
        """eq-layers-weight-bytes; ``weight_bits`` stores every weight at that many bits."""
        n_q, b_q, b_w = self.weight_bits_used(weight_bits)
        return lm.evaluate_at(lm.weight_bytes(), {S.n_quant: n_q, S.bits_q: b_q, S.bits_w: b_w,
                                            S.n_param: self.total_params})

    def layer_rows(self) -> list[dict]:
        rows = []
        for group, layer in zip(self.groups, self.layers, strict=True):
            rows.append({
                "count": group.count, "attention": group.attention.as_dict(),
                "ffn": group.ffn.as_dict(), "description": f"{group.attention.describe()} + "
                                                           f"{group.ffn.describe()}",
                "params_per_layer": layer["attention"] + layer["ff"],
                "active_params_per_layer": layer["attention"] + layer["ff_active"],
                "kv_bytes_per_token_per_layer": layer["kv"],
                "state_bytes_per_layer": layer["state"],
            })
        return rows


def _eval(eq, values: dict) -> float:
    return lm.evaluate_at(eq, values)


# --- reading -------------------------------------------------------------------------------------

def config_path(path) -> Path:
    """The config.json a path names: the file itself, or ``config.json`` in a folder."""
    where = Path(path)
    if where.is_dir():
        where = where / "config.json"
    if not where.is_file():
        raise InputError(f"no config.json at {str(path)!r}")
    return where


def load_config(path) -> dict:
    """The JSON object of a config.json; InputError (one line) if it is missing or malformed."""
    where = config_path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {where.name}: {exc}") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where.name} is not valid JSON ({exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{where.name} is nested too deeply to read") from None
    if not isinstance(config, dict):
        raise InputError(f"{where.name} must hold a JSON object, got {type(config).__name__}")
    return config


def model_name(path) -> str:
    """A name for a config: its folder's name, or the file's name before '.config.json'."""
    where = Path(path)
    if where.is_dir() or where.name == "config.json":
        return (where if where.is_dir() else where.parent).resolve().name or "config.json"
    return where.name.removesuffix(".json").removesuffix(".config").replace("--", "/")


def read_architecture(path) -> Architecture:
    """The Architecture of the config.json at ``path`` (a file, or a folder holding one)."""
    return parse(load_config(path), model_name(path))


def _short(value) -> str:
    """repr of a config value, cut to one readable stretch (a per-layer list can be long)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Fields:
    """Typed access to a config's fields; every error names the model_type and the field."""

    def __init__(self, config: dict, model_type: str):
        self.config, self.model_type = config, model_type

    def error(self, text: str) -> InputError:
        return InputError(f"{self.model_type}: {text}")

    def has(self, name: str) -> bool:
        return self.config.get(name) is not None

    def raw(self, name: str, default=...):
        if self.config.get(name) is None:
            if default is ...:
                raise self.error(f"config.json has no {name!r}")
            return default
        return self.config[name]

    def int(self, name: str, default=..., minimum: int = 1) -> int:
        value = self.raw(name, default)
        if value is default and default is not ...:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value != int(value) or value < minimum:
            raise self.error(f"{name} must be a whole number >= {minimum}, got {_short(value)}")
        if value > MAX_FIELD:
            raise self.error(f"{name} must be at most {MAX_FIELD:.0e}, got {_short(value)}")
        return int(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.raw(name, default)
        if not isinstance(value, bool):
            raise self.error(f"{name} must be true or false, got {_short(value)}")
        return value

    def int_list(self, name: str, default=..., minimum: int = 0) -> list[int]:
        value = self.raw(name, default)
        if not isinstance(value, list) or any(
                isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in value):
            raise self.error(f"{name} must be a list of whole numbers >= {minimum}, "
                             f"got {_short(value)}")
        return value

    def layer_types(self, n_layers: int, default=...) -> list[str]:
        kinds = self.raw("layer_types", default)
        if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
            raise self.error(f"layer_types must be a list of strings, got {_short(kinds)}")
        if len(kinds) != n_layers:
            raise self.error(f"layer_types has {len(kinds)} entries for num_hidden_layers="
                             f"{n_layers}")
        for i, kind in enumerate(kinds):
            if kind not in LAYER_KINDS:
                raise self.error(f"layer_types[{i}]={_short(kind)} is not a layer kind the reader maps "
                                 f"({', '.join(LAYER_KINDS)})")
        return kinds


def _heads(n_q: int, n_kv: int) -> str:
    return "MHA" if n_kv == n_q else "MQA" if n_kv == 1 else "GQA"


def _gqa(f: _Fields, span: str, window: int | None, *, n_kv: int | None = None,
         d_head: int | None = None, **extra) -> Attention:
    n_q = f.int("num_attention_heads")
    n_kv = f.int("num_key_value_heads", n_q) if n_kv is None else n_kv
    if n_q % n_kv:
        raise f.error(f"num_key_value_heads={n_kv} does not divide num_attention_heads={n_q}")
    if d_head is None:
        d_model = f.int("hidden_size")
        d_head = f.int("head_dim", d_model // n_q if d_model % n_q == 0 else ...)
    return Attention(span, _heads(n_q, n_kv), n_q, n_kv, d_head, window, **extra)


def _group(layers: list[tuple[Attention, FeedForward]]) -> tuple[LayerGroup, ...]:
    """Identical layers gathered into groups, in order of first appearance."""
    counts: dict[tuple[Attention, FeedForward], int] = {}
    for layer in layers:
        counts[layer] = counts.get(layer, 0) + 1
    return tuple(LayerGroup(n, a, f) for (a, f), n in counts.items())


def _dtype_bits(f: _Fields, top: dict) -> float:
    dtype = f.config.get("torch_dtype") or f.config.get("dtype") or top.get("torch_dtype") \
        or top.get("dtype") or "bfloat16"
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise f.error(f"torch_dtype {_short(dtype)} is not one the reader maps "
                      f"({', '.join(DTYPE_BITS)})")
    return float(DTYPE_BITS[dtype])


def _quantization(f: _Fields, top: dict) -> dict | None:
    quant = top.get("quantization_config") or f.config.get("quantization_config")
    if quant is None:
        return None
    if not isinstance(quant, dict):
        raise f.error(f"quantization_config must be an object, got {_short(quant)}")
    method = quant.get("quant_method")
    if method == "mxfp4":
        keep = quant.get("modules_to_not_convert") or []
        if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
            raise f.error(f"quantization_config: modules_to_not_convert must be a list of names, "
                          f"got {_short(keep)}")
        expected = {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
                    "lm_head"}
        if not expected <= set(keep):
            raise f.error("quantization_config: mxfp4 with modules_to_not_convert="
                          f"{_short(keep)} (the reader maps MXFP4 routed experts with attention, "
                          "router and embeddings unquantized); pass --weight-bits")
        bits = lm.evaluate_at(lm.block_quantized_bits(), {S.bits_elem: MXFP4["bits_elem"],
                                                     S.bits_scale: MXFP4["bits_scale"],
                                                     S.block_elems: MXFP4["block_elems"]})
        return {"method": "mxfp4", "bits": bits, "which": "routed experts"}
    if method == "fp8":
        block = quant.get("weight_block_size")
        if not (isinstance(block, list) and len(block) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in block)):
            raise f.error(f"quantization_config: fp8 needs weight_block_size [rows, columns], "
                          f"got {_short(block)}")
        bits = lm.evaluate_at(lm.block_quantized_bits(), {S.bits_elem: 8, S.bits_scale: FP8_SCALE_BITS,
                                                     S.block_elems: block[0] * block[1]})
        return {"method": "fp8", "bits": bits, "which": "linear layers"}
    raise f.error(f"quantization_config quant_method {_short(method)} is not read (mxfp4 and fp8 are); "
                  "pass --weight-bits")


def parse(config: dict, name: str = "config.json") -> Architecture:
    """The Architecture of a parsed config.json (``name`` labels it)."""
    model_type = config.get("model_type")
    if model_type is None:
        raise InputError("config.json has no 'model_type'")
    if not isinstance(model_type, str):
        raise InputError(f"model_type must be a string, got {_short(model_type)}")
    text = config.get("text_config")
    inner = text if isinstance(text, dict) else config
    if text is not None and not isinstance(text, dict):
        raise InputError(f"{model_type}: text_config must be an object, got {_short(text)}")
    for source in (config, inner):
        mt = source.get("model_type", model_type)
        if mt in SSM_TYPES:
            raise InputError(f"{mt}: state-space (Mamba) layers are not represented (model_type "
                             f"{mt!r}); only attention, linear attention and feed-forward blocks")
        for key in SSM_FIELDS:
            if key in source:
                raise InputError(f"{mt}: state-space (Mamba) layers ({key}) are not represented; "
                                 "only attention, linear attention and feed-forward blocks")
        for key in PER_LAYER_FIELDS:
            if key in source:
                raise InputError(f"{mt}: per-layer blocks ({key}) cannot be mapped onto layer "
                                 "groups")
    if model_type not in SUPPORTED:
        raise InputError(f"model_type {_short(model_type)} is not one the reader maps "
                         f"({', '.join(SUPPORTED)})")
    f = _Fields(inner, model_type)
    reader = {"deepseek_v3": _deepseek, "kimi_k2": _deepseek, "gpt_oss": _gpt_oss,
              "llama4": _llama4, "llama4_text": _llama4, "gemma4": _gemma4,
              "gemma4_text": _gemma4, "qwen3_5_moe": _qwen_hybrid,
              "qwen3_5_moe_text": _qwen_hybrid, "qwen3_next": _qwen_hybrid}.get(model_type,
                                                                                _llama_like)
    layers, extra = reader(f)
    for _, ffn in set(layers):
        if ffn.top_k > ffn.n_experts:
            raise f.error(f"{ffn.top_k} experts per token exceed the {ffn.n_experts} experts "
                          "of a layer")
    outer = _Fields(config, model_type)
    tied = f.flag("tie_word_embeddings", outer.flag("tie_word_embeddings", False))
    dtype_bits = _dtype_bits(f, config)
    groups = _group(layers)
    features = list(extra.pop("features", []))
    if len(groups) > 1 and not features:
        features.append("layers of different kinds")
    return Architecture(name=name, model_type=model_type, d_model=f.int("hidden_size"),
                        vocab=f.int("vocab_size"), tied=tied, groups=groups,
                        dtype_bits=dtype_bits, activation_bytes=dtype_bits / 8,
                        quantization=_quantization(f, config), features=tuple(features), **extra)


# --- families ------------------------------------------------------------------------------------

def _llama_like(f: _Fields):
    """Llama, Mistral, Mixtral, Qwen2, Qwen3 and Qwen3-MoE: one attention kind, dense or MoE."""
    n = f.int("num_hidden_layers")
    features = []
    window = None
    if f.model_type in ("qwen2", "qwen3", "qwen3_moe"):
        if f.flag("use_sliding_window"):
            raise f.error("use_sliding_window=true (sliding window from max_window_layers on) is "
                          "not read")
    elif f.has("sliding_window"):
        window = f.int("sliding_window")
        features.append(f"sliding_window={window} (sliding-window attention)")
    attention = _gqa(f, "sliding" if window else "full", window)
    dense = FeedForward("dense", f.int("intermediate_size"))
    moe = None
    if f.model_type == "mixtral":
        moe = FeedForward("moe", f.int("intermediate_size"), f.int("num_local_experts"),
                          f.int("num_experts_per_tok"))
    elif f.model_type == "qwen3_moe" and f.int("num_experts", 0, minimum=0):
        moe = FeedForward("moe", f.int("moe_intermediate_size"), f.int("num_experts"),
                          f.int("num_experts_per_tok"))
        if f.has("shared_expert_intermediate_size"):
            raise f.error("shared_expert_intermediate_size (a shared expert) is not read for "
                          "qwen3_moe")
    if moe and moe.top_k > moe.n_experts:
        raise f.error(f"num_experts_per_tok={moe.top_k} exceeds the {moe.n_experts} experts")
    if moe is None:
        return [(attention, dense)] * n, {"features": features}
    step = f.int("decoder_sparse_step", 1)
    only_mlp = set(f.int_list("mlp_only_layers", []))
    kinds = [moe if i not in only_mlp and (i + 1) % step == 0 else dense for i in range(n)]
    if dense in kinds:
        features.append("mlp_only_layers/decoder_sparse_step (mixed dense and MoE layers)")
    return [(attention, kind) for kind in kinds], {"features": features}


def _deepseek(f: _Fields):
    """DeepSeek-V3 and Kimi K2: MLA, dense layers first, routed and shared experts, MTP."""
    n = f.int("num_hidden_layers")
    n_q = f.int("num_attention_heads")
    if not f.has("q_lora_rank"):
        raise f.error("q_lora_rank=null (queries without a low-rank projection) is not read")
    mla = (f.int("q_lora_rank"), f.int("kv_lora_rank"), f.int("qk_rope_head_dim"),
           f.int("v_head_dim"))
    attention = Attention("full", "MLA", n_q, n_q, f.int("qk_nope_head_dim"), mla=mla)
    dense = FeedForward("dense", f.int("intermediate_size"))
    n_shared = f.int("n_shared_experts", 0, minimum=0)
    moe = FeedForward("moe", f.int("moe_intermediate_size"), f.int("n_routed_experts"),
                      f.int("num_experts_per_tok"), n_shared,
                      f.int("moe_intermediate_size") if n_shared else None)
    first_dense = f.int("first_k_dense_replace", 0, minimum=0)
    freq = f.int("moe_layer_freq", 1)
    kinds = [moe if i >= first_dense and i % freq == 0 else dense for i in range(n)]
    features = [f"MLA (kv_lora_rank={mla[1]}, q_lora_rank={mla[0]})"]
    if dense in kinds:
        features.insert(0, f"first_k_dense_replace={first_dense} (mixed dense and MoE layers)")
    if n_shared:
        features.append(f"n_shared_experts={n_shared} (shared experts)")
    n_mtp = f.int("num_nextn_predict_layers", 0, minimum=0)
    return [(attention, kind) for kind in kinds], {
        "features": features, "n_mtp": n_mtp,
        "mtp_layer": LayerGroup(n_mtp, attention, moe) if n_mtp else None}


def _gpt_oss(f: _Fields):
    """gpt-oss: alternating sliding-window and full attention with sinks, MoE in every layer."""
    n = f.int("num_hidden_layers")
    window = f.int("sliding_window")
    kinds = f.layer_types(n)
    moe = FeedForward("moe", f.int("intermediate_size"), f.int("num_local_experts"),
                      f.int("num_experts_per_tok"))
    spans = {"full_attention": ("full", None), "sliding_attention": ("sliding", window)}
    layers = []
    for i, kind in enumerate(kinds):
        if kind not in spans:
            raise f.error(f"layer_types[{i}]={_short(kind)} is not read for gpt_oss")
        span, w = spans[kind]
        layers.append((_gqa(f, span, w, sinks=True), moe))
    return layers, {"features": [f"layer_types (sliding_window={window} and full attention)",
                                 "attention sinks", "MXFP4 experts"]}


def _llama4(f: _Fields):
    """Llama 4: chunked attention with a full (NoPE) layer every fourth, MoE every k-th layer."""
    n = f.int("num_hidden_layers")
    chunk = f.int("attention_chunk_size")
    step = f.int("interleave_moe_layer_step", 1)
    moe_layers = set(f.int_list("moe_layers", list(range(step - 1, n, step))))
    if f.has("no_rope_layers"):
        no_rope = f.int_list("no_rope_layers")
        if len(no_rope) != n:
            raise f.error(f"no_rope_layers has {len(no_rope)} entries for num_hidden_layers={n}")
    else:
        interval = f.int("no_rope_layer_interval", 4)
        no_rope = [int((i + 1) % interval != 0) for i in range(n)]
    if f.has("layer_types"):
        kinds = f.layer_types(n)
    else:  # transformers' default: rotary layers are chunked, the others full
        kinds = ["chunked_attention" if no_rope[i] else "full_attention" for i in range(n)]
    expert = f.int("intermediate_size")
    moe = FeedForward("moe", expert, f.int("num_local_experts"), f.int("num_experts_per_tok"),
                      1, expert)  # one shared expert per MoE layer (Llama4TextMoe's shared_expert)
    spans = {"full_attention": ("full", None), "chunked_attention": ("chunked", chunk)}
    layers = []
    for i, kind in enumerate(kinds):
        if kind not in spans:
            raise f.error(f"layer_types[{i}]={_short(kind)} is not read for llama4")
        span, w = spans[kind]
        ffn = moe if i in moe_layers else FeedForward("dense", f.int("intermediate_size_mlp"))
        layers.append((_gqa(f, span, w), ffn))
    features = [f"attention_chunk_size={chunk} (chunked attention)", "shared experts"]
    if len(moe_layers) < n:
        features.insert(0, f"interleave_moe_layer_step={step} (mixed dense and MoE layers)")
    return layers, {"features": features}


def _gemma4(f: _Fields):
    """Gemma 4: sliding-window and global layers of different shapes, dense MLP beside experts."""
    n = f.int("num_hidden_layers")
    for name in ("hidden_size_per_layer_input", "num_kv_shared_layers"):
        if f.int(name, 0, minimum=0):
            raise f.error(f"{name}={f.int(name, 0, minimum=0)} is not read (per-layer inputs and "
                          "layers sharing another layer's cache)")
    if f.flag("use_double_wide_mlp"):
        raise f.error("use_double_wide_mlp=true is not read")
    window = f.int("sliding_window")
    kinds = f.layer_types(n)
    k_eq_v = f.flag("attention_k_eq_v")
    sliding = _gqa(f, "sliding", window)
    full = _gqa(f, "full", None, n_kv=f.int("num_global_key_value_heads")
                if k_eq_v else f.int("num_key_value_heads"),
                d_head=f.int("global_head_dim", f.int("head_dim")), m_kv=1 if k_eq_v else 2)
    dense_width = f.int("intermediate_size")
    if f.flag("enable_moe_block"):
        ffn = FeedForward("moe", f.int("moe_intermediate_size"), f.int("num_experts"),
                          f.int("top_k_experts"), 1, dense_width)  # the dense MLP beside them
    else:
        ffn = FeedForward("dense", dense_width)
    spans = {"full_attention": full, "sliding_attention": sliding}
    layers = []
    for i, kind in enumerate(kinds):
        if kind not in spans:
            raise f.error(f"layer_types[{i}]={_short(kind)} is not read for gemma4")
        layers.append((spans[kind], ffn))
    return layers, {"features": [f"layer_types (sliding_window={window} and global attention of "
                                 "another shape)", "a dense MLP beside the experts"]}


_STATE_DTYPE_BYTES = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}


def _qwen_hybrid(f: _Fields):
    """Qwen3-Next and Qwen3.5: gated linear attention between gated full-attention layers."""
    n = f.int("num_hidden_layers")
    if f.has("layer_types"):
        kinds = f.layer_types(n)
    else:
        interval = f.int("full_attention_interval")
        kinds = ["full_attention" if (i + 1) % interval == 0 else "linear_attention"
                 for i in range(n)]
    gate = 2 if f.flag("attn_output_gate", True) else 1
    full = _gqa(f, "full", None, m_q=gate)
    linear = Attention("linear", "linear", f.int("linear_num_value_heads"),
                       f.int("linear_num_key_heads"), f.int("linear_value_head_dim"), linear=(
        f.int("linear_num_key_heads"), f.int("linear_key_head_dim"),
        f.int("linear_num_value_heads"), f.int("linear_value_head_dim"),
        f.int("linear_conv_kernel_dim")))
    n_shared_width = f.int("shared_expert_intermediate_size", 0, minimum=0)
    moe = FeedForward("moe", f.int("moe_intermediate_size"), f.int("num_experts"),
                      f.int("num_experts_per_tok"), 1 if n_shared_width else 0,
                      n_shared_width or None)
    dense = FeedForward("dense", f.int("intermediate_size", 1))
    only_mlp = set(f.int_list("mlp_only_layers", []))
    step = f.int("decoder_sparse_step", 1)
    spans = {"full_attention": full, "linear_attention": linear}
    layers = []
    for i, kind in enumerate(kinds):
        if kind not in spans:
            raise f.error(f"layer_types[{i}]={_short(kind)} is not read for {f.model_type}")
        is_moe = i not in only_mlp and (i + 1) % step == 0
        if not is_moe and not f.has("intermediate_size"):
            raise f.error("config.json has no 'intermediate_size' for its dense layers")
        layers.append((spans[kind], moe if is_moe else dense))
    state_dtype = f.raw("mamba_ssm_dtype", "float32")
    if not isinstance(state_dtype, str) or state_dtype not in _STATE_DTYPE_BYTES:
        raise f.error(f"mamba_ssm_dtype {_short(state_dtype)} is not one the reader maps")
    n_mtp = f.int("mtp_num_hidden_layers", 0, minimum=0)
    return layers, {"features": ["linear_attention layers (constant state)",
                                 "attn_output_gate (gated attention)", "shared experts"],
                    "state_bytes": _STATE_DTYPE_BYTES[state_dtype], "n_mtp": n_mtp,
                    "mtp_layer": LayerGroup(n_mtp, full, moe) if n_mtp else None}


# --- the uniform full model ----------------------------------------------------------------------

def model_fields(arch: Architecture) -> dict:
    """Keyword arguments of presets.models.Model for an architecture that maps onto it exactly.

    The full model represents uniform layers: one group of full GQA/MHA/MQA attention without
    gates or sinks, and a dense or routed-only MoE feed-forward block, all weights at one precision.
    Anything else raises an InputError naming what the full model does not yet represent.
    """
    problems = list(arch.features)
    if arch.quantization and not any("MXFP4" in p for p in problems):
        problems.append(f"quantization_config {arch.quantization['method']} (mixed precision)")
    if len(arch.groups) != 1 and not problems:
        problems.append("layers of different kinds")
    if problems:
        raise InputError(f"{arch.model_type}: {'; '.join(problems)} "
                         f"{'is' if len(problems) == 1 else 'are'} not yet in the full model; "
                         "describe-model reads it")
    (group,) = arch.groups
    a, ffn = group.attention, group.ffn
    fields = {
        "name": arch.name, "d_model": arch.d_model, "d_ff": ffn.d_ff, "layers": group.count,
        "n_q_heads": a.n_q, "group_size": a.n_q // a.n_kv, "ff_matrix_count": (2, 1),
        "n_experts": ffn.n_experts, "n_active_experts": ffn.top_k, "vocab": arch.vocab,
        "embedding_matrices": 1 if arch.tied else 2, "weight_bytes": arch.dtype_bits / 8,
        "activation_bytes": arch.activation_bytes, "source": f"config.json ({arch.model_type})",
        "note": "read from a Hugging Face config.json", "experts_spread": True,
    }
    if arch.d_model % a.n_q or arch.d_model // a.n_q != a.d_head:
        fields["d_head"] = a.d_head
    return fields


# --- describe-model ------------------------------------------------------------------------------

def describe_architecture(arch: Architecture, weight_bits: float | None = None) -> dict:
    """What ``inference-math describe-model`` prints for a config.json, as a JSON-ready dict."""
    n_q, b_q, b_w = arch.weight_bits_used(weight_bits)
    full_model = None  # every architecture read here is timed, uniform or by layer groups
    at_context = [arch.kv_bytes_at(c) for c in CONTEXTS]
    return {
        "name": arch.name, "model_type": arch.model_type, "source": "config.json",
        "total_params": arch.total_params, "active_params": arch.active_params,
        "active_params_without_input_embedding": arch.active_params - arch.input_embedding_params,
        "embedding_params": arch.embedding_params, "tied_embeddings": arch.tied,
        "mtp_layers": arch.n_mtp, "mtp_params": arch.mtp_params,
        "layer_count": sum(g.count for g in arch.groups), "layers": arch.layer_rows(),
        "kv_bytes_per_token": arch.kv_bytes_per_token,
        "kv_bytes_per_token_beyond_windows": arch.kv_bytes_per_token_long,
        "kv_state_bytes_per_sequence": arch.state_bytes_per_sequence,
        "kv_bytes_at_context": dict(zip(map(str, CONTEXTS), at_context, strict=True)),
        "weight_bits": b_w, "quantized_params": n_q,
        "quantized_bits": b_q if n_q else None,
        "quantization": (arch.quantization or {}).get("method") if weight_bits is None else None,
        "weight_bytes": arch.weight_bytes(weight_bits),
        "full_model": full_model,
    }


# --- the fixtures and their published totals -----------------------------------------------------

#: Folder of the config.json files shipped with the package (data/hf_configs/README.md).
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "hf_configs"

#: Published totals, typed from the model cards (Kimi K2: its technical report; Gemma 4: only the
#: name "26B-A4B" is compared). ``active_counts`` names the count a card's active figure matches:
#: "all" is eq-layers-active-params (both embeddings, as eq. 21 of Erdil 2025), "no input
#: embedding" leaves the input table out, as OpenAI's gpt-oss card does explicitly. ``tolerance``
#: is 1% unless ``why`` says why a published figure cannot be held to it.
PUBLISHED = {
    "meta-llama--Meta-Llama-3.1-8B": {"total": 8.0e9, "active": 8.0e9, "active_counts": "all"},
    "meta-llama--Meta-Llama-3.1-70B": {"total": 70e9, "active": 70e9, "active_counts": "all"},
    "meta-llama--Meta-Llama-3.1-405B": {"total": 405e9, "active": 405e9, "active_counts": "all"},
    "mistralai--Mixtral-8x7B-v0.1": {"total": 46.7e9, "active": 12.9e9, "active_counts": "all"},
    "mistralai--Mixtral-8x22B-v0.1": {"total": 141e9, "active": 39e9, "active_counts": "all"},
    "Qwen--Qwen3-30B-A3B": {
        "total": 30.5e9, "active": 3.3e9, "active_counts": "all", "active_tolerance": 0.02,
        "why": "the card's 3.3B active is 3.35B cut to two figures; its non-embedding total, "
               "29.9B, is ours to 0.1%"},
    "Qwen--Qwen3-235B-A22B": {"total": 235e9, "active": 22e9, "active_counts": "all"},
    "deepseek-ai--DeepSeek-V3": {
        "total": 671e9, "active": 37e9, "active_counts": "no input embedding",
        "active_tolerance": 0.015, "mtp": 14e9,
        "why": "37B is given to two figures (±1.4%); with the input embedding the count is 37.6B, "
               "which would round to 38B"},
    "moonshotai--Kimi-K2-Instruct": {
        "total": 1.04e12, "active": 32e9, "active_counts": "no input embedding",
        "total_tolerance": 0.015,
        "why": "the report's 1.04T exceeds the 1.026T the released config holds by about one MoE "
               "layer (the release has num_nextn_predict_layers = 0)"},
    "openai--gpt-oss-120b": {"total": 116.8e9, "active": 5.1e9,
                             "active_counts": "no input embedding"},
    "openai--gpt-oss-20b": {"total": 20.9e9, "active": 3.6e9, "active_counts": "no input embedding"},
    "meta-llama--Llama-4-Scout-17B-16E-Instruct": {
        "total": 109e9, "active": 17e9, "active_counts": "all", "total_tolerance": 0.015,
        "active_tolerance": 0.015,
        "why": "109B counts the vision encoder, which this config (no vision_config) does not "
               "describe; 17B is given to two figures (±2.9%)"},
    "meta-llama--Llama-4-Maverick-17B-128E-Instruct": {
        "total": 400e9, "active": 17e9, "active_counts": "all", "active_tolerance": 0.015,
        "why": "17B is given to two figures (±2.9%)"},
    "Qwen--Qwen3.5-397B-A17B": {
        "total": 397e9, "active": 17e9, "active_counts": "all", "active_tolerance": 0.03,
        "why": "17B is given to two figures (±2.9%)"},
    "google--gemma-4-26B-A4B": {
        "total": 26e9, "active": 4e9, "active_counts": "all", "total_tolerance": 0.04,
        "active_tolerance": 0.125,
        "why": "only the name's 26B and A4B (to the nearest billion); the 26B also counts the "
               "vision encoder (vision_config), which the text model's count leaves out"},
}


def published_comparison() -> list[dict]:
    """Each fixture's counts next to its published totals: the rows of the chapter's table."""
    rows = []
    for stem, published in PUBLISHED.items():
        arch = read_architecture(FIXTURES / f"{stem}.config.json")
        active = arch.active_params - (arch.input_embedding_params
                                       if published["active_counts"] == "no input embedding" else 0)
        rows.append({
            "model": stem.replace("--", "/"), "total": arch.total_params, "active": active,
            "published_total": published["total"], "published_active": published["active"],
            "total_gap": arch.total_params / published["total"] - 1,
            "active_gap": active / published["active"] - 1,
            "total_tolerance": published.get("total_tolerance", 0.01),
            "active_tolerance": published.get("active_tolerance", 0.01),
            "active_counts": published["active_counts"], "why": published.get("why", ""),
            "mtp": arch.mtp_params,
        })
    return rows
