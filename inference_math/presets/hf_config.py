"""Models read from a Hugging Face ``config.json``: layer groups, parameter counts, cache, weights.

:func:`read_architecture` reads a ``config.json`` (a path to the file or a folder holding one; no
network) into an :class:`Architecture`: the layers grouped by kind, each group with its count, a
mixer (attention MHA/GQA/MQA/MLA, full, sliding-window or chunked; linear attention; a Mamba-2
state-space layer; or none) and a feed-forward block (dense, MoE with routed and shared experts, or
none). Every count is evaluated from the derivations of :mod:`inference_math.derivations.layer_mix`,
through the NumPy code generated from them (:mod:`inference_math.presets.counts`).

The reader goes by what fields mean, not by the ``model_type``'s name: each quantity has its known
aliases (:data:`ALIASES`), 0 or null means absent, and a multimodal wrapper's ``text_config`` is the
language model. A ``model_type`` never seen before is read when every field it holds is understood
(:attr:`Architecture.read_by_fields`); a field that is not is refused in one line naming it. Rules
that fields cannot give (Llama 4's shared expert, Nemotron-H's squared-ReLU feed-forward) are tied
to their model types, each with its source. The checkpoint's quantization (``quantization_config``
or an ``hf_quant_config.json`` beside the config) is read by
:mod:`inference_math.presets.checkpoint_precision`, module by module.

Conventions: weight matrices are counted (attention projections, experts, shared experts,
routers, embeddings), vectors are not (norms, biases, attention sinks, Mamba's A, D and time-step
biases); the active count includes both embeddings, as eq. 21 of Erdil (2025) does, and
``describe-model`` also reports it without the input embedding; multi-token-prediction layers are
reported beside the total, not in it; a layer whose values reuse its keys (Gemma 4's
attention_k_eq_v) is assumed to cache both, as the transformers cache does.

What it cannot count it refuses with an InputError of one line naming the ``model_type`` and the
field (DeepSeek-V4's compressed attention, blocks replaced by a linear layer, malformed JSON,
missing or non-numeric fields). What it counts but the full model cannot time yet (MLA with a
direct query projection, block_configs' layers without attention or feed-forward block) is
listed in :attr:`Architecture.untimed`. It never guesses a count.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..core import symbols as S
from ..core.validation import InputError
from . import checkpoint_precision as cp
from .counts import count

#: model_type values whose configurations this reader has been checked against; any other is
#: read by its fields (read_by_fields) when every field is understood.
KNOWN_TYPES = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "deepseek_v3",
               "deepseek_v32", "kimi_k2", "kimi_k25", "gpt_oss", "llama4", "llama4_text",
               "gemma4", "gemma4_text", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
               "qwen3_5_moe_text", "qwen3_next", "qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe",
               "qwen3_vl_moe_text", "nemotron_h", "deepseek_v4", "deepseek_ref")
#: The model types of DeepSeek-V4's configs (deepseek_ref: SGLang's FP8 conversion), whose
#: compressed attention, grouped output projection, hash routing and hyper-connections the
#: reader counts from DeepSeek-V4's reference code (_deepseek_v4).
V4_TYPES = ("deepseek_v4", "deepseek_ref")
SUPPORTED = KNOWN_TYPES  # the name earlier versions exported
#: Other state-space model types, whose layers this reader does not know.
SSM_TYPES = ("mamba", "mamba2", "jamba", "zamba", "zamba2", "falcon_mamba", "falcon_h1", "bamba",
             "granitemoehybrid", "plamo2", "lfm2")
LAYER_KINDS = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")
#: Every alias of each quantity, in the order they are tried.
ALIASES = {
    "experts": ("n_routed_experts", "num_experts", "num_local_experts"),
    "experts_per_token": ("num_experts_per_tok", "num_experts_per_token", "moe_topk",
                          "top_k_experts"),
    "expert_width": ("moe_intermediate_size", "expert_intermediate_size"),
    "shared_experts": ("n_shared_experts", "num_shared_experts"),
    "shared_width": ("moe_shared_expert_intermediate_size", "shared_expert_intermediate_size",
                     "shared_intermediate_size", "share_expert_dim"),
}
#: Fields that change no count the reader makes (metadata, rotary embeddings, routing rules,
#: norms, dropout, generation defaults): a new model_type may hold them.
NEUTRAL = frozenset("""
    _name_or_path add_cross_attention architectures attention_bias attention_dropout auto_map
    aux_loss_alpha bad_words_ids begin_suppress_tokens bos_token_id chunk_size_feed_forward
    cross_attention_hidden_size decoder_start_token_id diversity_penalty do_sample dtype
    early_stopping encoder_no_repeat_ngram_size eos_token_id ep_size exponential_decay_length_penalty
    final_logit_softcapping finetuning_task forced_bos_token_id forced_eos_token_id head_dim
    hidden_act hidden_activation id2label initializer_range is_decoder is_encoder_decoder label2id
    length_penalty max_length max_position_embeddings min_length mlp_bias model_type n_group
    no_repeat_ngram_size norm_eps norm_topk_prob num_beam_groups num_beams num_return_sequences
    output_attentions output_hidden_states output_router_logits output_scores pad_token_id
    partial_rotary_factor prefix pretraining_tp problem_type pruned_heads remove_invalid_values
    repetition_penalty return_dict return_dict_in_generate rms_norm_eps layer_norm_epsilon
    rope_parameters rope_scaling rope_theta routed_scaling_factor router_aux_loss_coef
    router_jitter_noise scoring_func sep_token_id seq_aux suppress_tokens task_specific_params
    temperature tf_legacy_loss tie_encoder_decoder tokenizer_class top_k top_p topk_group
    topk_method torch_dtype torchscript transformers_version typical_p use_bfloat16 use_cache
    use_qk_norm qk_layernorm attention_k_norm max_window_layers use_sliding_window sliding_window
    rotary_dim rotary_emb_base rope_interleave rope_type original_max_position_embeddings
    use_scaled_rope mrope_section qk_norm_type use_routing_bias router_bias
    moe_router_enable_expert_bias moe_aux_loss_coeff aux_loss_coef router_z_loss_coef
    _attn_implementation attention_softmax_in_fp32 initializer_factor seq_length max_seq_len
    model_max_length layer_norm_eps use_flash_attn embedding_multiplier residual_multiplier
    attention_multiplier logits_scaling clip_qkv keys_to_ignore_at_inference resid_pdrop
    embd_pdrop hidden_dropout residual_dropout attention_out_bias qkv_bias bias
    query_pre_attn_scalar attn_logit_softcapping cache_implementation rope_local_base_freq
    image_token_id video_token_id vision_start_token_id vision_end_token_id vision_config
    audio_config text_config quantization_config tie_word_embeddings vocab_size hidden_size
    num_hidden_layers num_attention_heads num_key_value_heads intermediate_size layer_types
    mlp_only_layers decoder_sparse_step first_k_dense_replace moe_layer_freq
    interleave_moe_layer_step num_nextn_predict_layers mtp_num_hidden_layers
    full_attention_interval attn_output_gate linear_conv_kernel_dim linear_key_head_dim
    linear_num_key_heads linear_num_value_heads linear_value_head_dim mamba_ssm_dtype
    kv_lora_rank q_lora_rank qk_nope_head_dim qk_rope_head_dim v_head_dim shared_expert_gate
    """.split()) | frozenset(name for names in ALIASES.values() for name in names)
#: Fields that change the counts in ways no layer kind here represents: refused by name, with
#: the kind they describe and why it cannot be counted from the fields.
UNREAD = {
    "compress_ratios": ("compressed attention", "its compressor and indexer weights are "
                        "counted from DeepSeek-V4's model code, for its model types "
                        f"({', '.join(V4_TYPES)}) only"),
    "hc_mult": ("hyper-connections", "several residual streams mixed by learned matrices, "
                "counted for DeepSeek-V4's model types only"),
    "o_lora_rank": ("a grouped low-rank output projection", "its shapes are DeepSeek-V4's, "
                    "counted for its model types only"),
    "num_hash_layers": ("hash-routed MoE layers", "their routing tables are DeepSeek-V4's, "
                        "read for its model types only"),
    "hidden_size_per_layer_input": ("per-layer inputs", "their embedding tables and gates are "
                                    "not counted"),
    "num_kv_shared_layers": ("layers sharing another layer's cache", "the cache of the sharing "
                             "layers is not modelled"),
}
#: Largest whole number a field may hold: far above any model, low enough that no count overflows.
MAX_FIELD = 10**9
#: Bits of the weights for a torch dtype.
DTYPE_BITS = {"bfloat16": 16, "float16": 16, "float32": 32, "float": 32, "half": 16}
#: Contexts at which describe-model reports the cache of one sequence.
CONTEXTS = (1024, 32768, 131072)
_STATE_DTYPE_BYTES = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}


@dataclass(frozen=True)
class Attention:
    """The mixer of a layer. ``span``: full, sliding, chunked, linear, mamba, or none (a layer
    with a feed-forward block only)."""

    span: str
    heads: str  # MHA, GQA, MQA, MLA, linear, mamba2 or none
    n_q: int
    n_kv: int
    d_head: int
    window: int | None = None  # sliding window or chunk, tokens
    m_q: int = 1  # 2 with an output gate
    m_kv: int = 2  # 1 when the values reuse the keys
    sinks: bool = False
    mla: tuple[int, int, int, int] | None = None  # (q_lora_rank, kv_lora_rank, rope dim, v dim)
    # (n_k, d_k, n_v, d_v, conv kernel); for Mamba-2: (groups, state size, heads, head dim, conv)
    linear: tuple[int, int, int, int, int] | None = None
    indexer: tuple[int, int, int] | None = None  # sparse attention: (heads, head dim, top k)
    # compressed attention (DeepSeek-V4): (r_c tokens per pooled entry, 0 for none; c_q query
    # rank; rope dims; G_o output groups; r_o their rank; m_hc residual streams). The window
    # is ``window``, the one cache head d_head wide.
    compressed: tuple[int, int, int, int, int, int] | None = None

    def describe(self) -> str:
        if self.span == "none":
            return "no attention"
        if self.span == "mamba":
            groups, state, heads, head_dim, _ = self.linear
            return (f"Mamba-2 ({heads} heads of {head_dim}, state {state}, {groups} groups, "
                    "constant state)")
        if self.span == "linear":
            n_k, d_k, n_v, d_v, conv = self.linear
            kind = "Kimi Delta Attention" if self.heads == "KDA" else "linear attention"
            return (f"{kind} ({n_k} key / {n_v} value heads of {d_k}/{d_v}, "
                    "constant state)")
        if self.compressed:
            ratio, c_q, _, groups, rank, streams = self.compressed
            pooled = {0: "", 4: f" + 1 entry per 4 tokens, the top {self.indexer[2]} by an "
                                f"indexer of {self.indexer[0]} heads of {self.indexer[1]}"
                      if self.indexer else " + 1 entry per 4 tokens"}.get(
                ratio, f" + 1 entry per {ratio} tokens")
            return (f"compressed attention ({self.n_q} heads, one cache head of {self.d_head}, "
                    f"q rank {c_q}; window {self.window}{pooled}; output in {groups} groups of "
                    f"rank {rank}; {streams} hyper-connected streams)")
        span = {"full": "full", "sliding": f"sliding-window {self.window}",
                "chunked": f"chunked {self.window}"}[self.span]
        if self.mla:
            c_q, c_kv, rope, _ = self.mla
            heads = f"MLA ({self.n_q} heads, kv rank {c_kv}, q rank {c_q}, rope {rope})"
        else:
            heads = f"{self.heads} ({self.n_q} q / {self.n_kv} kv heads of {self.d_head})"
        extras = [text for flag, text in ((self.m_q == 2, "output gate"),
                                          (self.m_kv == 1, "K = V"), (self.sinks, "sinks")) if flag]
        if self.indexer:
            extras.append(f"sparse: top {self.indexer[2]} by an indexer of {self.indexer[0]} "
                          f"heads of {self.indexer[1]}")
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
        if self.linear and self.span == "linear":
            out.update(dict(zip(("key_heads", "key_head_dim", "value_heads", "value_head_dim",
                                 "conv_kernel"), self.linear, strict=True)))
        if self.linear and self.span == "mamba":
            out.update(dict(zip(("groups", "state_size", "heads", "head_dim", "conv_kernel"),
                                self.linear, strict=True)))
        if self.indexer:
            out.update(dict(zip(("index_heads", "index_head_dim", "index_topk"), self.indexer,
                                strict=True)))
        if self.compressed:
            out.update(dict(zip(("compress_ratio", "q_lora_rank", "qk_rope_head_dim", "o_groups",
                                 "o_lora_rank", "hc_mult"), self.compressed, strict=True)))
        return out


NO_ATTENTION = Attention("none", "none", 0, 0, 0)


@dataclass(frozen=True)
class FeedForward:
    """The feed-forward block of a layer: dense (one expert), MoE, or none."""

    kind: str  # dense, moe or none
    d_ff: int  # width of the dense block or of one routed expert
    n_experts: int = 1
    top_k: int = 1
    n_shared: int = 0
    d_shared: int | None = None
    n_in: int = 2  # input matrices of an expert: 2 gated (SwiGLU), 1 plain (squared ReLU)
    latent: int | None = None  # routed experts work in this width, projected to and from it

    def describe(self) -> str:
        if self.kind == "none":
            return "no feed-forward"
        if self.kind == "dense":
            return f"dense FFN (d_ff {self.d_ff})"
        shared = (f" + {self.n_shared} shared of {self.d_shared}" if self.n_shared else "")
        latent = f", latent {self.latent}" if self.latent else ""
        return (f"MoE FFN (top-{self.top_k} of {self.n_experts} experts of {self.d_ff}{shared}"
                f"{latent})")

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "d_ff": self.d_ff}
        if self.kind == "moe":
            out.update({"n_experts": self.n_experts, "top_k": self.top_k,
                        "n_shared": self.n_shared, "d_shared": self.d_shared})
            if self.latent:
                out["latent"] = self.latent
        if self.n_in != 2:
            out["gated"] = False
        return out


NO_FFN = FeedForward("none", 0)


@dataclass(frozen=True)
class LayerGroup:
    count: int
    attention: Attention
    ffn: FeedForward
    # the layer's weights by storage: ((bits, parameters per layer), ...) of its quantized
    # matrices, as the checkpoint states them (empty: every weight at the checkpoint's dtype)
    quantized: tuple[tuple[float, float], ...] = ()


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
    state_bytes: float = 2.0  # bytes per element of a linear-attention or Mamba state
    n_mtp: int = 0
    mtp_layer: LayerGroup | None = None
    quantization: dict | None = None  # {"method", "bits" (mean of the quantized), "which"}
    features: tuple[str, ...] = ()  # what the uniform full model does not represent
    untimed: tuple[str, ...] = ()  # what the full model cannot time yet (one line each)
    read_by_fields: bool = False  # a model_type not in KNOWN_TYPES, read by its fields
    kv_cache_bits: float | None = None  # the KV-cache precision the checkpoint states
    embedding_quantized: tuple[tuple[float, float], ...] = ()  # (bits, params) of the tables

    # --- per-layer values, evaluated from the derivations -----------------------------------
    def _layer(self, group: LayerGroup) -> dict:
        a, f = group.attention, group.ffn
        shape = {S.d_model: self.d_model, S.n_ff_in: f.n_in, S.n_ff_out: 1,
                 S.p_act: self.activation_bytes, S.p_state: self.state_bytes}
        if a.span == "none":
            attention, kv, state = 0.0, 0.0, 0.0
        elif a.linear:
            n_k, d_k, n_v, d_v, conv = a.linear
            shape.update({S.n_lk: n_k, S.d_lk: d_k, S.n_lv: n_v, S.d_lv: d_v, S.k_conv: conv})
            # Kimi Delta Attention: its own low-rank gates (eq-layers-attention-kda)
            attention = _eval("attention_params_kda" if a.heads == "KDA"
                              else "attention_params_linear", shape)
            if a.span == "mamba":
                # Mamba-2 (transformers' Mamba2Mixer, NemotronHMamba2Mixer): in_proj gives the
                # gate z and x (n_v·d_v each), B and C (groups x state each) and one time step
                # per head; conv1d runs over x, B and C; out_proj maps n_v·d_v back. That is
                # eq-layers-attention-linear with keys = groups x state, less one of its two
                # per-head gates; its state is eq-layers-state-linear exactly.
                attention -= n_v * self.d_model
            kv, state = 0.0, _eval("state_bytes_linear", shape)
        elif a.compressed:
            return self._compressed_layer(a, f, shape)
        elif a.mla:
            c_q, c_kv, rope, d_v = a.mla
            shape.update({S.n_q: a.n_q, S.d_head: a.d_head, S.c_q: c_q, S.c_kv: c_kv,
                          S.d_rope: rope, S.d_v: d_v})
            attention, kv, state = (_eval("attention_params_mla", shape),
                                    _eval("kv_bytes_mla", shape), 0.0)
            if not c_q:
                # q_lora_rank null: one query projection d_model x n_q·(d_head + rope) in place of
                # the low-rank pair (DeepSeek-V2's and Kimi Linear's q_proj); eq-layers-attention-
                # mla at c_q = 0 holds the rest
                attention += self.d_model * a.n_q * (a.d_head + rope)
        else:
            shape.update({S.n_q: a.n_q, S.n_kv: a.n_kv, S.d_head: a.d_head, S.m_q: a.m_q,
                          S.m_kv: a.m_kv})
            attention, kv, state = (_eval("attention_params_gqa", shape),
                                    _eval("kv_bytes_gqa", shape), 0.0)
        index = {}
        if a.indexer:
            index = _indexer_counts(a, self.d_model)
            attention += index["index_params"]
            kv += index["index_kv"]
        return self._with_ffn(a, f, shape, attention, kv, state, index)

    def _with_ffn(self, a: Attention, f: FeedForward, shape: dict, attention: float, kv: float,
                  state: float, index: dict, window: float | None = None) -> dict:
        if f.kind == "none":
            ff = ff_active = experts = 0.0
        else:
            width = {**shape, S.d_model: f.latent or self.d_model}
            expert = _eval("ff_params_dense", {**width, S.d_ff: f.d_ff})
            if f.kind == "dense":
                ff = ff_active = expert
                experts = 0.0
            else:
                shape.update({S.d_ff: f.d_ff, S.n_experts: f.n_experts, S.n_active: f.top_k,
                              S.n_sh: f.n_shared, S.d_ff_shared: f.d_shared or 1})
                ff = _eval("ff_params_moe", shape)
                ff_active = _eval("ff_params_moe_active", shape)
                experts = expert * f.n_experts
                if f.latent:
                    # latent MoE (NemotronHMoE with moe_latent_size): routed experts map the
                    # latent width, with one projection into it and one out of it per layer
                    full = _eval("ff_params_dense", {**shape, S.d_ff: f.d_ff})
                    latent = 2 * self.d_model * f.latent
                    ff += (expert - full) * f.n_experts + latent
                    ff_active += (expert - full) * f.top_k + latent
        if window is None:
            window = float(a.window) if a.window and a.span in ("sliding", "chunked") \
                else math.inf
        return {"attention": attention, "ff": ff, "ff_active": ff_active,
                "routed_experts": experts, "kv": kv, "state": state, **index,
                "window": window, "linear": a.span in ("linear", "mamba")}

    def _compressed_layer(self, a: Attention, f: FeedForward, shape: dict) -> dict:
        """One DeepSeek-V4 layer (eq-compressed-*): attention, its compressor and indexer, the
        hyper-connections, and its caches. A layer that pools (r_c > 0) holds its window of
        plain entries and its compressors' pending state as a constant per sequence (``state``,
        in eq-layers-kv-context; ``window_kv``, ``window_tokens`` and ``cmp_state`` apart for
        the full model) and one entry per r_c tokens (``kv``); a layer that does not is a
        sliding-window layer."""
        ratio, c_q, rope, groups, rank, streams = a.compressed
        values = {**shape, S.c_q: c_q, S.n_q: a.n_q, S.d_kv: a.d_head, S.n_og: groups,
                  S.r_o: rank, S.m_hc: streams, S.p_st: V4_STATE_BYTES}
        attention = _eval("compressed_attention_params", values) \
            + _eval("hyper_connection_params", values)
        entry = _eval("compressed_cache_bytes", {**values, S.r_cmp: 1})
        if not ratio:
            return {**self._with_ffn(a, f, shape, attention, entry, 0.0, {}), "ratio": 0}
        overlap = 2 if ratio == 4 else 1  # Compressor: overlap = compress_ratio == 4
        pooled = {**values, S.r_cmp: ratio, S.c_ov: overlap}
        attention += _eval("compressor_params", pooled)
        kv = _eval("compressed_cache_bytes", pooled)
        cmp_state = _eval("compressor_state_bytes", pooled)
        index = {}
        if a.indexer:
            heads, head_dim, top = a.indexer
            keys = {**pooled, S.d_kv: head_dim, S.c_ov: 2}
            # eq-sparse-indexer-* over pooled entries: the key projection (d_model·d_I) is the
            # indexer's own compressor; its keys are held in BF16 (no scale), one per r_c tokens
            sparse = {S.c_q: c_q, S.n_idx: heads, S.d_idx: head_dim, S.d_model: self.d_model,
                      S.p_idx: self.activation_bytes, S.p_scale: 1.0, S.blk_idx: math.inf}
            params = _eval("indexer_params", sparse) - self.d_model * head_dim \
                + _eval("compressor_params", keys)
            index = {"index_params": params,
                     "index_kv": _eval("indexer_cache_bytes", sparse) / ratio,
                     "index_flops": _eval("indexer_flops", sparse) / ratio,
                     "top_tokens": float(top * ratio)}
            attention += params
            kv += index["index_kv"]
            cmp_state += _eval("compressor_state_bytes", keys)
        window_kv = entry * a.window
        out = self._with_ffn(a, f, shape, attention, kv, window_kv + cmp_state, index,
                             window=math.inf)
        return {**out, "ratio": ratio, "window_kv": entry, "window_tokens": float(a.window),
                "cmp_state": cmp_state}

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
        return count("total_params", {**self._groups("attention", "ff"),
                                      **self._embedding_values})

    @cached_property
    def active_params(self) -> float:
        """eq-layers-active-params: both embeddings counted in full, as eq. 21 does."""
        return count("active_params", {**self._groups("attention", "ff_active"),
                                       **self._embedding_values})

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
        return count("mtp_params", {S.n_mtp: self.n_mtp, S.n_attn_layer: layer["attention"],
                                    S.n_ff_layer: layer["ff"], S.d_model: self.d_model})

    def kv_bytes_at(self, context: float) -> float:
        """eq-layers-kv-context: cache bytes of one sequence at ``context`` tokens."""
        return count("kv_bytes_at_context", {**self._groups("kv", "state", "window"),
                                             S.ctx: context})

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

    # --- storage -------------------------------------------------------------------------------
    def group_quantized(self, index: int) -> tuple[float, float]:
        """(N_q, b_q) of one layer of group ``index``: its parameters in a quantized format and
        their mean bits (0 and the dtype's bits without any)."""
        pairs = self.groups[index].quantized
        params = sum(n for _, n in pairs)
        if not params:
            return 0.0, self.dtype_bits
        return params, sum(bits * n for bits, n in pairs) / params

    @property
    def embedding_bits(self) -> float:
        """Mean bits of the embedding tables (the output head may be quantized)."""
        quantized = sum(n for _, n in self.embedding_quantized)
        return (sum(b * n for b, n in self.embedding_quantized)
                + (self.embedding_params - quantized) * self.dtype_bits) / self.embedding_params

    @property
    def quantized_params(self) -> float:
        """Parameters stored in a quantized format (0 without one)."""
        return sum(g.count * self.group_quantized(i)[0] for i, g in enumerate(self.groups)) \
            + sum(n for _, n in self.embedding_quantized)

    @property
    def quantized_bits(self) -> float:
        """Mean bits of the quantized parameters (the dtype's without any)."""
        params = self.quantized_params
        if not params:
            return self.dtype_bits
        layers = sum(g.count * self.group_quantized(i)[0] * self.group_quantized(i)[1]
                     for i, g in enumerate(self.groups))
        return (layers + sum(b * n for b, n in self.embedding_quantized)) / params

    def weight_bits_used(self, weight_bits: float | None = None) -> tuple[float, float, float]:
        """(N_q, b_q, b_w): quantized parameters, their mean bits, the bits of the others."""
        if weight_bits is not None:
            return 0.0, weight_bits, weight_bits
        if not self.quantized_params:
            return 0.0, self.dtype_bits, self.dtype_bits
        return self.quantized_params, self.quantized_bits, self.dtype_bits

    def weight_bytes(self, weight_bits: float | None = None) -> float:
        """eq-layers-weight-bytes; ``weight_bits`` stores every weight at that many bits."""
        n_q, b_q, b_w = self.weight_bits_used(weight_bits)
        return count("weight_bytes", {S.n_quant: n_q, S.bits_q: b_q, S.bits_w: b_w,
                                      S.n_param: self.total_params})

    def layer_rows(self) -> list[dict]:
        rows = []
        for index, (group, layer) in enumerate(zip(self.groups, self.layers, strict=True)):
            n_q, b_q = self.group_quantized(index)
            rows.append({
                "count": group.count, "attention": group.attention.as_dict(),
                "ffn": group.ffn.as_dict(), "description": f"{group.attention.describe()} + "
                                                           f"{group.ffn.describe()}",
                "params_per_layer": layer["attention"] + layer["ff"],
                "active_params_per_layer": layer["attention"] + layer["ff_active"],
                "kv_bytes_per_token_per_layer": layer["kv"],
                "state_bytes_per_layer": layer["state"],
                "quantized_params_per_layer": n_q, "quantized_bits": b_q if n_q else None,
            })
        return rows


def _eval(name: str, values: dict) -> float:
    """A count of :mod:`inference_math.presets.counts` (generated from the derivation of that
    name in presets.counts_codegen.COUNTS)."""
    return count(name, values)


#: DeepSeek-V4's compressor keeps its pending projections and scores in FP32 (kv_state and
#: score_state of class Compressor).
V4_STATE_BYTES = 4.0
#: The indexer's key cache as DeepSeek-V3.2's reference code holds it (class Indexer: FP8 keys,
#: one FP32 scale per block of 128 elements): the config does not state it.
INDEXER_KEY_BYTES, INDEXER_SCALE_BYTES, INDEXER_SCALE_BLOCK = 1.0, 4.0, 128.0


def _indexer_counts(a: Attention, d_model: int) -> dict[str, float]:
    """The lightning indexer of DeepSeek sparse attention, one layer: its parameters
    (eq-sparse-indexer-params), its key cache per token (eq-sparse-indexer-cache, at the
    reference code's FP8 keys and FP32 block scales) and its FLOPs per query per cached token
    (eq-sparse-indexer-flops)."""
    heads, head_dim, _ = a.indexer
    values = {S.c_q: a.mla[0], S.n_idx: heads, S.d_idx: head_dim, S.d_model: d_model,
              S.p_idx: INDEXER_KEY_BYTES, S.p_scale: INDEXER_SCALE_BYTES,
              S.blk_idx: INDEXER_SCALE_BLOCK}
    return {"index_params": _eval("indexer_params", values),
            "index_kv": _eval("indexer_cache_bytes", values),
            "index_flops": _eval("indexer_flops", values)}


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
    """The Architecture of the config.json at ``path`` (a file, or a folder holding one), with
    the hf_quant_config.json beside it if there is one."""
    config = load_config(path)
    hf_quant = cp.load_quant_file(cp.quant_file_beside(config_path(path)))
    return parse(config, model_name(path), hf_quant)


def _short(value) -> str:
    """repr of a config value, cut to one readable stretch (a per-layer list can be long)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _present(value) -> bool:
    """0, null, false and empty values mean absent."""
    return value is not None and value is not False and value != 0 and value != [] \
        and value != "" and value != {}


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

    def alias(self, quantity: str) -> tuple[str | None, int]:
        """(field, value) of the first alias of ``quantity`` that is present; (None, 0) when none
        is or its value is 0 or null (absent)."""
        for name in ALIASES[quantity]:
            if self.has(name):
                value = self.int(name, minimum=0)
                if value:
                    return name, value
        return None, 0

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


def _group(layers: list[tuple], quantized: list[tuple]) -> tuple[LayerGroup, ...]:
    """Identical layers (same blocks, same storage) gathered into groups, in order of first
    appearance."""
    counts: dict[tuple, int] = {}
    for layer, storage in zip(layers, quantized, strict=True):
        key = (*layer, storage)
        counts[key] = counts.get(key, 0) + 1
    return tuple(LayerGroup(n, a, f, q) for (a, f, q), n in counts.items())


def _dtype_bits(f: _Fields, top: dict) -> float:
    dtype = f.config.get("torch_dtype") or f.config.get("dtype") or top.get("torch_dtype") \
        or top.get("dtype") or "bfloat16"
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise f.error(f"torch_dtype {_short(dtype)} is not one the reader maps "
                      f"({', '.join(DTYPE_BITS)})")
    return float(DTYPE_BITS[dtype])


# --- the checkpoint's modules, for their storage ---------------------------------------------------

#: Module names of each block in the transformers model code of each family (the names the
#: quantization descriptions use), with the defaults of the Llama/Qwen/DeepSeek codes.
_NAMING = {
    "default": {"prefix": "model.", "attn": "self_attn", "linear": "linear_attn",
                "mamba": "mixer", "mlp": "mlp", "experts": "mlp.experts",
                "shared": "mlp.shared_experts", "router": "mlp.gate", "embed": "embed_tokens"},
    "qwen": {"shared": "mlp.shared_expert"},  # Qwen2/3-MoE, Qwen3-Next, Qwen3.5: one shared expert
    "gpt_oss": {"router": "mlp.router"},
    "llama4": {"mlp": "feed_forward", "experts": "feed_forward.experts",
               "shared": "feed_forward.shared_expert", "router": "feed_forward.router"},
    "gemma4": {"experts": "experts", "router": "router", "shared": "mlp"},
    "nemotron_h": {"prefix": "backbone.", "attn": "mixer", "mlp": "mixer",
                   "experts": "mixer.experts", "shared": "mixer.shared_experts",
                   "router": "mixer.gate", "embed": "embeddings"},
}


def _naming(model_type: str) -> dict:
    family = next((key for key in ("gpt_oss", "llama4", "gemma4", "nemotron_h")
                   if model_type.startswith(key)), "qwen" if model_type.startswith("qwen")
                  else "default")
    return {**_NAMING["default"], **_NAMING.get(family, {})}


def layer_matrices(a: Attention, f: FeedForward, d: int, names: dict) -> list[tuple[str, float, str]]:
    """The weight matrices of one layer: (module name below the layer, parameters, kind), kind
    'linear', 'router' or 'other' (convolutions). They sum to the layer's count."""
    out = []
    if a.span == "mamba":
        groups, state, heads, head_dim, conv = a.linear
        inner = heads * head_dim
        out += [(f"{names['mamba']}.in_proj", d * (2 * inner + 2 * groups * state + heads), "linear"),
                (f"{names['mamba']}.conv1d", conv * (inner + 2 * groups * state), "other"),
                (f"{names['mamba']}.out_proj", inner * d, "linear")]
    elif a.heads == "KDA":
        _, d_k, n_v, d_v, conv = a.linear
        m = names["attn"]
        out += [(f"{m}.{p}_proj", n_v * d_k * d, "linear") for p in ("q", "k")]
        out += [(f"{m}.v_proj", n_v * d_v * d, "linear"),
                (f"{m}.q_conv1d", conv * (2 * n_v * d_k + n_v * d_v), "other"),
                (f"{m}.f_a_proj", d * d_v, "linear"), (f"{m}.f_b_proj", d_v * n_v * d_v, "linear"),
                (f"{m}.b_proj", d * n_v, "linear"),
                (f"{m}.g_a_proj", d * d_v, "linear"), (f"{m}.g_b_proj", d_v * n_v * d_v, "linear"),
                (f"{m}.o_proj", n_v * d_v * d, "linear")]
    elif a.span == "linear":
        n_k, d_k, n_v, d_v, conv = a.linear
        m = names["linear"]
        out += [(f"{m}.in_proj_qkv", (2 * n_k * d_k + n_v * d_v) * d, "linear"),
                (f"{m}.in_proj_z", n_v * d_v * d, "linear"), (f"{m}.in_proj_a", n_v * d, "linear"),
                (f"{m}.in_proj_b", n_v * d, "linear"),
                (f"{m}.conv1d", conv * (2 * n_k * d_k + n_v * d_v), "other"),
                (f"{m}.out_proj", n_v * d_v * d, "linear")]
    elif a.mla:
        c_q, c_kv, rope, d_v = a.mla
        m = names["attn"]
        out += [(f"{m}.q_a_proj", d * c_q, "linear"),
                (f"{m}.q_b_proj", c_q * a.n_q * (a.d_head + rope), "linear")] if c_q else [
                (f"{m}.q_proj", d * a.n_q * (a.d_head + rope), "linear")]
        out += [
                (f"{m}.kv_a_proj_with_mqa", d * (c_kv + rope), "linear"),
                (f"{m}.kv_b_proj", c_kv * a.n_q * (a.d_head + d_v), "linear"),
                (f"{m}.o_proj", a.n_q * d_v * d, "linear")]
    elif a.span != "none":
        m = names["attn"]
        out += [(f"{m}.q_proj", a.m_q * a.n_q * a.d_head * d, "linear"),
                (f"{m}.k_proj", a.n_kv * a.d_head * d, "linear")]
        if a.m_kv == 2:
            out.append((f"{m}.v_proj", a.n_kv * a.d_head * d, "linear"))
        out.append((f"{m}.o_proj", a.n_q * a.d_head * d, "linear"))
    if a.indexer:
        heads, head_dim, _ = a.indexer
        m = names["attn"]
        out += [(f"{m}.indexer.wq_b", a.mla[0] * heads * head_dim, "linear"),
                (f"{m}.indexer.wk", d * head_dim, "linear"),
                (f"{m}.indexer.weights_proj", d * heads, "linear")]
    projections = ("gate_proj", "up_proj", "down_proj") if f.n_in == 2 else ("up_proj", "down_proj")
    if f.kind == "dense":
        out += [(f"{names['mlp']}.{p}", d * f.d_ff, "linear") for p in projections]
    elif f.kind == "moe":
        width = f.latent or d
        out.append((names["router"], f.n_experts * d, "router"))
        out += [(f"{names['experts']}.0.{p}", f.n_experts * width * f.d_ff, "linear")
                for p in projections]
        if f.latent:
            out += [(f"{names['mlp']}.fc1_latent_proj", d * f.latent, "linear"),
                    (f"{names['mlp']}.fc2_latent_proj", f.latent * d, "linear")]
        if f.n_shared:
            out += [(f"{names['shared']}.{p}", f.n_shared * d * f.d_shared, "linear")
                    for p in projections]
    return out


def _storage(layers: list[tuple], precision: cp.Precision | None, names: dict, d: int,
             vocab: int, tied: bool) -> tuple[list[tuple], tuple]:
    """Each layer's quantized weights ((bits, parameters), ...) and the embeddings' own."""
    if precision is None:
        return [()] * len(layers), ()
    prefix = precision.prefix or names["prefix"]
    storage = []
    for i, (a, f) in enumerate(layers):
        by_bits: dict[float, float] = {}
        for module, params, kind in layer_matrices(a, f, d, names):
            fmt = precision.format_of((f"{prefix}layers.{i}.{module}",), linear=kind != "other",
                                      router=kind == "router")
            if fmt is not None:
                by_bits[fmt.bits] = by_bits.get(fmt.bits, 0.0) + params
        storage.append(tuple(sorted(by_bits.items())))
    embeddings = []
    head = precision.format_of(("lm_head", "language_model.lm_head", "head"),
                               head=True)
    if head is not None and not tied:
        embeddings.append((head.bits, float(vocab * d)))
    table = precision.format_of((f"{prefix}{names['embed']}",), linear=False)
    if table is not None:
        embeddings.append((table.bits, float(vocab * d)))
    return storage, tuple(embeddings)


def _quantization_summary(precision: cp.Precision | None, groups, embeddings) -> dict | None:
    if precision is None:
        return None
    params = sum(g.count * n for g in groups for _, n in g.quantized) + sum(n for _, n in embeddings)
    if not params:
        return None
    bits = (sum(g.count * b * n for g in groups for b, n in g.quantized)
            + sum(b * n for b, n in embeddings)) / params
    return {"method": precision.method, "bits": bits, "which": "as the checkpoint states",
            "source": precision.source}


# --- parse -----------------------------------------------------------------------------------------

#: Fields of state-space layers, read for nemotron_h only.
SSM_FIELDS = ("layers_block_type", "hybrid_override_pattern", "attn_layer_indices",
              "mamba_d_state", "ssm_state_size", "mamba_expand", "state_size", "mamba_num_heads")
#: Fields each family reader understands beyond NEUTRAL (for the check of a new model_type).
_FAMILY_FIELDS = frozenset("""
    index_head_dim index_n_heads index_topk attention_chunk_size no_rope_layers
    no_rope_layer_interval intermediate_size_mlp moe_layers attn_temperature_tuning floor_scale
    attn_scale num_global_key_value_heads global_head_dim attention_k_eq_v enable_moe_block
    use_double_wide_mlp vocab_size_per_layer_input use_bidirectional_attention
    initial_context_length swiglu_limit experts_per_token block_configs linear_attn_config
    mla_use_nope moe_renormalize moe_router_activation_func use_grouped_topk num_expert_group
    """.split())


def _check_fields(config: dict, model_type: str) -> None:
    """A new model_type is read only when every field it holds is understood."""
    for key in config:
        if key not in NEUTRAL and key not in _FAMILY_FIELDS and key not in SSM_FIELDS:
            raise InputError(f"{model_type}: field {key!r} is not understood (a new model_type "
                             "is read by its fields only when every field is known); it may "
                             "change the counts")


def parse(config: dict, name: str = "config.json", hf_quant: dict | None = None) -> Architecture:
    """The Architecture of a parsed config.json (``name`` labels it; ``hf_quant``: the JSON of
    an hf_quant_config.json beside it)."""
    model_type = config.get("model_type")
    if model_type is None:
        raise InputError("config.json has no 'model_type'")
    if not isinstance(model_type, str):
        raise InputError(f"model_type must be a string, got {_short(model_type)}")
    text = config.get("text_config")
    if text is not None and not isinstance(text, dict):
        raise InputError(f"{model_type}: text_config must be an object, got {_short(text)}")
    inner = text if text else config
    inner_type = inner.get("model_type", model_type) if text else model_type
    if not isinstance(inner_type, str):
        inner_type = model_type
    for source in (config, inner):
        mt = source.get("model_type", model_type)
        mt = mt if isinstance(mt, str) else model_type
        if mt in SSM_TYPES:
            raise InputError(f"{mt}: state-space (Mamba) layers are not represented (model_type "
                             f"{mt!r}); only attention, linear attention, Mamba-2 of nemotron_h "
                             "and feed-forward blocks")
        for key, (kind, why) in UNREAD.items():
            if _present(source.get(key)) and not (mt in V4_TYPES and key in _V4_FIELDS):
                raise InputError(f"{mt}: {key} ({kind}) is not read: {why}")
        if mt != "nemotron_h" and model_type != "nemotron_h":
            for key in SSM_FIELDS:
                if key in source:
                    raise InputError(f"{mt}: state-space (Mamba) layers ({key}) are not "
                                     "represented outside nemotron_h; only attention, linear "
                                     "attention and feed-forward blocks")
    read_by_fields = model_type not in KNOWN_TYPES and inner_type not in KNOWN_TYPES
    if read_by_fields:
        _check_fields(inner, model_type)
    family = inner_type if inner_type in KNOWN_TYPES else model_type
    f = _Fields(inner, model_type)
    if family in V4_TYPES:
        reader = _deepseek_v4
    elif f.has("block_configs"):
        reader = _block_configs
    elif f.has("kv_lora_rank"):
        reader = _mla
    elif family == "nemotron_h":
        reader = _nemotron_h
    elif f.has("linear_num_value_heads"):
        reader = _qwen_hybrid
    elif family.startswith("gpt_oss"):
        reader = _gpt_oss
    elif family.startswith("llama4"):
        reader = _llama4
    elif family.startswith("gemma4"):
        reader = _gemma4
    else:
        reader = _generic
    layers, extra = reader(f)
    for _, ffn in set(layers):
        if ffn.kind == "moe" and ffn.top_k > ffn.n_experts:
            raise f.error(f"{ffn.top_k} experts per token exceed the {ffn.n_experts} experts "
                          "of a layer")
    outer = _Fields(config, model_type)
    tied = f.flag("tie_word_embeddings", outer.flag("tie_word_embeddings", False))
    dtype_bits = _dtype_bits(f, config)
    d_model, vocab = f.int("hidden_size"), f.int("vocab_size")
    quant = config.get("quantization_config") or inner.get("quantization_config")
    precision = cp.read_precision(quant, hf_quant, model_type)
    if reader is _deepseek_v4:
        storage, embeddings = _v4_storage(layers, precision, f, d_model), ()
    else:
        storage, embeddings = _storage(layers, precision, _naming(family), d_model, vocab, tied)
    groups = _group(layers, storage)
    features = list(extra.pop("features", []))
    if len(groups) > 1 and not features:
        features.append("layers of different kinds")
    untimed = list(extra.pop("untimed", []))
    return Architecture(name=name, model_type=model_type, d_model=d_model, vocab=vocab, tied=tied,
                        groups=groups, dtype_bits=dtype_bits, activation_bytes=dtype_bits / 8,
                        quantization=_quantization_summary(precision, groups, embeddings),
                        features=tuple(features), untimed=tuple(untimed),
                        read_by_fields=read_by_fields,
                        kv_cache_bits=precision.kv_cache_bits if precision else None,
                        embedding_quantized=embeddings, **extra)


# --- the feed-forward blocks, by their fields -------------------------------------------------------

def _moe_block(f: _Fields, n_in: int = 2) -> FeedForward | None:
    """The MoE block the fields describe (None when the experts field is absent, 0 or null):
    experts, experts per token, expert width, shared experts (count and width), latent width."""
    experts_field, experts = f.alias("experts")
    if not experts:
        return None
    top_field, top_k = f.alias("experts_per_token")
    if not top_k:
        raise f.error(f"config.json has no experts per token ({' or '.join(ALIASES['experts_per_token'])})")
    if top_k > experts:
        raise f.error(f"{top_field}={top_k} exceeds the {experts} experts")
    width_field, width = f.alias("expert_width")
    if not width:
        width = f.int("intermediate_size")
    _, n_shared = f.alias("shared_experts")
    _, shared_width = f.alias("shared_width")
    if shared_width:
        # a width field gives the shared block's whole width (Qwen's shared_expert_intermediate_size,
        # Nemotron's moe_shared_expert_intermediate_size): one shared expert of that width
        n_shared, d_shared = 1, shared_width
    elif n_shared:
        d_shared = width  # DeepSeek: n_shared_experts experts of the routed experts' width
    else:
        d_shared = None
    latent = f.int("moe_latent_size", 0, minimum=0) or None
    return FeedForward("moe", width, experts, top_k, n_shared, d_shared, n_in, latent)


def _is_moe(f: _Fields, n: int) -> list[bool]:
    """Which layers hold the MoE block: first_k_dense_replace, moe_layer_freq (a number or a list
    per layer), decoder_sparse_step, interleave_moe_layer_step, mlp_only_layers, moe_layers."""
    first_dense = f.int("first_k_dense_replace", 0, minimum=0)
    only_mlp = set(f.int_list("mlp_only_layers", []))
    freq = f.raw("moe_layer_freq", 1)
    if isinstance(freq, list):
        if len(freq) != n or not all(v in (0, 1) for v in freq):
            raise f.error(f"moe_layer_freq must be a number or a list of {n} zeros and ones, "
                          f"got {_short(freq)}")
        by_freq = [bool(v) for v in freq]
    else:
        step = f.int("moe_layer_freq", 1)
        by_freq = [i % step == 0 for i in range(n)]  # DeepSeek: layer_idx % moe_layer_freq == 0
    step = f.int("decoder_sparse_step", 1)
    interleave = f.int("interleave_moe_layer_step", 1)
    listed = set(f.int_list("moe_layers")) if f.has("moe_layers") else None
    return [i >= first_dense and i not in only_mlp and by_freq[i] and (i + 1) % step == 0
            and (i + 1) % interleave == 0 and (listed is None or i in listed) for i in range(n)]


def _ffn_layers(f: _Fields, n: int, n_in: int = 2) -> tuple[list[FeedForward], list[str]]:
    moe = _moe_block(f, n_in)
    if moe is None:
        return [FeedForward("dense", f.int("intermediate_size"), n_in=n_in)] * n, []
    which = _is_moe(f, n)
    features = []
    if not all(which):
        dense = FeedForward("dense", f.int("intermediate_size"), n_in=n_in)
        features.append("mixed dense and MoE layers")
    else:
        dense = None
    if moe.n_shared:
        features.append("shared experts")
    return [moe if m else dense for m in which], features


# --- families ------------------------------------------------------------------------------------

def _generic(f: _Fields):
    """Any GQA/MHA/MQA decoder read by its fields (Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE,
    Qwen3-VL's language model, and model types never seen): full, sliding-window (all layers, or
    per layer_types) attention; dense or MoE feed-forward blocks."""
    n = f.int("num_hidden_layers")
    features = []
    if f.has("layer_types"):
        kinds = f.layer_types(n)
    elif "use_sliding_window" in f.config and f.flag("use_sliding_window"):
        raise f.error("use_sliding_window=true (sliding window from max_window_layers on) is "
                      "not read")
    elif f.has("sliding_window") and "use_sliding_window" not in f.config:
        kinds = ["sliding_attention"] * n  # Mistral's meaning: every layer slides
    else:
        kinds = ["full_attention"] * n
    window = f.int("sliding_window") if "sliding_attention" in kinds else None
    if window:
        features.append(f"sliding_window={window} (sliding-window attention)")
    spans = {"full_attention": _gqa(f, "full", None)}
    if window:
        spans["sliding_attention"] = _gqa(f, "sliding", window)
    for i, kind in enumerate(kinds):
        if kind not in spans:
            raise f.error(f"layer_types[{i}]={_short(kind)} is not read for {f.model_type}")
    ffns, more = _ffn_layers(f, n)
    features += more
    layers = [(spans[k], ffn) for k, ffn in zip(kinds, ffns, strict=True)]
    # multi-token prediction: a layer of the last layer's kind (reported, not in the total)
    n_mtp = f.int("num_nextn_predict_layers", 0, minimum=0) or \
        f.int("mtp_num_hidden_layers", 0, minimum=0)
    return layers, {"features": features, "n_mtp": n_mtp,
                    "mtp_layer": LayerGroup(n_mtp, *layers[-1]) if n_mtp else None}


def _mla(f: _Fields):
    """Multi-head latent attention (DeepSeek-V3, R1, V3.2, Kimi K2 and its wrappers): dense
    layers first, routed and shared experts, MTP; DeepSeek-V3.2's indexer (sparse attention)."""
    n = f.int("num_hidden_layers")
    n_q = f.int("num_attention_heads")
    untimed = []
    c_q = f.int("q_lora_rank", 0, minimum=0)
    if not c_q:
        untimed.append("q_lora_rank=null: MLA with a direct query projection is not yet timed by "
                       "the full model")
    mla = (c_q, f.int("kv_lora_rank"), f.int("qk_rope_head_dim"), f.int("v_head_dim"))
    indexer = None
    if f.has("index_topk"):
        indexer = (f.int("index_n_heads"), f.int("index_head_dim"), f.int("index_topk"))
    attention = Attention("full", "MLA", n_q, n_q, f.int("qk_nope_head_dim"), mla=mla,
                          indexer=indexer)
    ffns, more = _ffn_layers(f, n)
    features = [f"MLA (kv_lora_rank={mla[1]}, q_lora_rank={mla[0]})", *more]
    n_mtp = f.int("num_nextn_predict_layers", 0, minimum=0)
    moe = next((ffn for ffn in ffns if ffn.kind == "moe"), ffns[-1])
    mixers = [attention] * n
    if f.has("linear_attn_config"):
        mixers = _kda_layers(f, n, attention)
        features.append("Kimi Delta Attention layers (constant state)")
        extra = {"state_bytes": 4.0}
    else:
        extra = {}
    return [(mixer, ffn) for mixer, ffn in zip(mixers, ffns, strict=True)], {**extra,
        "features": features, "untimed": untimed, "n_mtp": n_mtp,
        "mtp_layer": LayerGroup(n_mtp, attention, moe) if n_mtp else None}


#: The fields of DeepSeek-V4's configs the reader reads (the others are in NEUTRAL).
_V4_FIELDS = frozenset("""
    compress_ratios hc_mult hc_eps hc_sinkhorn_iters o_groups o_lora_rank num_hash_layers
    compress_rope_theta expert_dtype index_n_heads index_head_dim index_topk swiglu_limit
    """.split())


def _deepseek_v4(f: _Fields):
    """DeepSeek-V4 (Flash, Pro and their conversions), as its reference inference/model.py
    builds it: in every layer, compressed attention (one cache head of head_dim, queries from a
    rank-q_lora_rank latent, a sliding window, and the pooling of compress_ratios[i]: 0 none,
    4 with an indexer, else all pooled entries attended), the grouped low-rank output
    projection (o_groups, o_lora_rank), hyper-connections (hc_mult streams) and a DeepSeek MoE
    block of routed experts and one shared expert; its first num_hash_layers layers route by a
    table of token ids (a lookup, not counted) and hold the same weights. compress_ratios has
    one entry per layer, then one per multi-token-prediction layer."""
    n = f.int("num_hidden_layers")
    n_mtp = f.int("num_nextn_predict_layers", 0, minimum=0)
    ratios = f.int_list("compress_ratios")
    if len(ratios) not in (n, n + n_mtp):
        raise f.error(f"compress_ratios has {len(ratios)} entries for num_hidden_layers={n} "
                      f"and num_nextn_predict_layers={n_mtp}")
    n_q = f.int("num_attention_heads")
    if f.int("num_key_value_heads", 1) != 1:
        raise f.error("num_key_value_heads must be 1 for compressed attention (one cache head)")
    head_dim, rope = f.int("head_dim"), f.int("qk_rope_head_dim")
    groups = f.int("o_groups")
    if n_q % groups:
        raise f.error(f"o_groups={groups} does not divide num_attention_heads={n_q}")
    shape = (f.int("q_lora_rank"), rope, groups, f.int("o_lora_rank"), f.int("hc_mult"))
    window = f.int("sliding_window")
    indexer = (f.int("index_n_heads"), f.int("index_head_dim"), f.int("index_topk"))

    def attention(ratio: int) -> Attention:
        return Attention("compressed" if ratio else "sliding", "MQA", n_q, 1, head_dim, window,
                         m_kv=1, sinks=True, compressed=(ratio, *shape),
                         indexer=indexer if ratio == 4 else None)

    moe = _moe_block(f)
    if moe is None or moe.n_shared != 1:
        raise f.error("DeepSeek-V4's MoE block needs n_routed_experts and one shared expert")
    layers = [(attention(r), moe) for r in ratios[:n]]
    kinds = sorted(set(ratios[:n]))
    features = [f"compressed attention (compress_ratios {', '.join(map(str, kinds))}; "
                f"sliding_window={window})", "shared experts", f"hc_mult={shape[-1]} "
                "(hyper-connections)", f"o_groups={groups} (grouped output projection)"]
    mtp = attention(ratios[n]) if len(ratios) > n and n_mtp else layers[-1][0]
    return layers, {"features": features, "n_mtp": n_mtp,
                    "mtp_layer": LayerGroup(n_mtp, mtp, moe) if n_mtp else None}


def _v4_matrices(a: Attention, f: FeedForward, d: int) -> list[tuple[str, float, str]]:
    """One DeepSeek-V4 layer's weights with their module names and the format its reference
    checkpoint stores them in: 'fp8' (the default), 'bf16' (wo_a, the compressors, the
    indexer's weights_proj, the router), 'fp32' (the hyper-connections and the compressors'
    score offsets) and 'experts' (expert_dtype). They sum to the layer's count."""
    ratio, c_q, _, groups, rank, streams = a.compressed
    width = a.d_head
    out = [("attn.wq_a", d * c_q, "fp8"), ("attn.wq_b", c_q * a.n_q * width, "fp8"),
           ("attn.wkv", d * width, "fp8"), ("attn.wo_a", a.n_q * width * rank, "bf16"),
           ("attn.wo_b", groups * rank * d, "fp8"),
           ("hc", 2 * (2 + streams) * streams * streams * d, "fp32")]

    def compressor(module: str, dim: int) -> list:
        c = 2 if ratio == 4 else 1
        return [(f"{module}.wkv", d * c * dim, "bf16"), (f"{module}.wgate", d * c * dim, "bf16"),
                (f"{module}.ape", ratio * c * dim, "fp32")]
    if ratio:
        out += compressor("attn.compressor", width)
    if a.indexer:
        heads, head_dim, _ = a.indexer
        out += [("attn.indexer.wq_b", c_q * heads * head_dim, "fp8"),
                ("attn.indexer.weights_proj", d * heads, "bf16"),
                *compressor("attn.indexer.compressor", head_dim)]
    out += [("ffn.gate", f.n_experts * d, "bf16"),
            ("ffn.experts", f.n_experts * 3 * d * f.d_ff, "experts"),
            ("ffn.shared_experts", 3 * d * f.d_shared, "fp8")]
    return out


#: DeepSeek-V4's FP4 experts (expert_dtype "fp4"): E2M1 elements with one E8M0 scale per 32
#: (its Linear: float4_e2m1fn_x2 weights, float8_e8m0fnu scales per fp4_block_size = 32).
V4_FP4 = cp.Format("FP4 (E2M1, E8M0 scale per 32)", cp.block_bits(4, 8, 32))


def _v4_storage(layers: list[tuple], precision: cp.Precision | None, f: _Fields,
                d: int) -> list[tuple]:
    """Each DeepSeek-V4 layer's stored formats: the reference checkpoint's (_v4_matrices), with
    the routed experts in the format a checkpoint names them in (NVIDIA's NVFP4
    quantized_layers: its producer, 'dsv4-nvfp4-experts', requantizes the experts only, the
    rest keeping the original's formats), else FP4 when expert_dtype is 'fp4' and FP8 without
    it (SGLang's FP8 conversion). No quantization: every weight at the dtype."""
    if precision is None:
        return [()] * len(layers)
    fp8 = precision.format_of(("attn.wq_a",)) or cp.Format("FP8", 8.0)
    fp4 = f.raw("expert_dtype", None) == "fp4"
    storage = []
    for i, (a, ffn) in enumerate(layers):
        by_bits: dict[float, float] = {}
        for module, params, kind in _v4_matrices(a, ffn, d):
            if kind == "experts":
                named = precision.format_of((f"layers.{i}.{module}.0.w1",))
                fmt = named if named is not None and named.bits != fp8.bits else \
                    V4_FP4 if fp4 else fp8
            else:
                fmt = {"fp8": fp8, "fp32": cp.Format("FP32", 32.0)}.get(kind)
            if fmt is not None:
                by_bits[fmt.bits] = by_bits.get(fmt.bits, 0.0) + params
        storage.append(tuple(sorted(by_bits.items())))
    return storage


def _kda_layers(f: _Fields, n: int, mla: Attention) -> list[Attention]:
    """Kimi Linear's mixers: Kimi Delta Attention in the layers linear_attn_config.kda_layers
    names (counted from 1, as KimiLinearConfig.is_kda_layer does), MLA in the others. The state
    is kept in float32 (fla's chunk_kda returns its final state in float32)."""
    spec = f.raw("linear_attn_config")
    if not isinstance(spec, dict):
        raise f.error(f"linear_attn_config must be an object, got {_short(spec)}")
    inner = _Fields(spec, f.model_type)
    kda = set(inner.int_list("kda_layers", minimum=1))
    if any(i > n for i in kda):
        raise f.error(f"linear_attn_config.kda_layers names a layer beyond num_hidden_layers={n}")
    heads, head_dim = inner.int("num_heads"), inner.int("head_dim")
    layer = Attention("linear", "KDA", heads, heads, head_dim,
                      linear=(heads, head_dim, heads, head_dim, inner.int("short_conv_kernel_size")))
    return [layer if i + 1 in kda else mla for i in range(n)]


def _gpt_oss(f: _Fields):
    """gpt-oss: alternating sliding-window and full attention with sinks, MoE in every layer."""
    n = f.int("num_hidden_layers")
    window = f.int("sliding_window")
    kinds = f.layer_types(n)
    moe = _moe_block(f)
    if moe is None:
        raise f.error("config.json has no 'num_local_experts'")
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
    routed = _moe_block(f)
    if routed is None:
        raise f.error("config.json has no 'num_local_experts'")
    # one shared expert of the routed experts' width per MoE layer: not a config field but
    # Llama4TextMoe's shared_expert (transformers models/llama4/modeling_llama4.py)
    moe = FeedForward("moe", expert, routed.n_experts, routed.top_k, 1, expert)
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
        # the dense MLP that runs beside the experts in every layer (Gemma4TextDecoderLayer)
        # is counted as their one shared expert
        ffn = FeedForward("moe", f.int("moe_intermediate_size"), f.int("num_experts"),
                          f.int("top_k_experts"), 1, dense_width)
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


def _qwen_hybrid(f: _Fields):
    """Gated linear attention (Gated DeltaNet) between gated full-attention layers, dense or MoE
    (Qwen3-Next, Qwen3.5, Qwen3.6)."""
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
    ffns, more = _ffn_layers(f, n)
    spans = {"full_attention": full, "linear_attention": linear}
    layers = []
    for i, kind in enumerate(kinds):
        if kind not in spans:
            raise f.error(f"layer_types[{i}]={_short(kind)} is not read for {f.model_type}")
        layers.append((spans[kind], ffns[i]))
    state_dtype = f.raw("mamba_ssm_dtype", "float32")
    if not isinstance(state_dtype, str) or state_dtype not in _STATE_DTYPE_BYTES:
        raise f.error(f"mamba_ssm_dtype {_short(state_dtype)} is not one the reader maps")
    n_mtp = f.int("mtp_num_hidden_layers", 0, minimum=0)
    return layers, {"features": ["linear_attention layers (constant state)",
                                 "attn_output_gate (gated attention)", *more],
                    "state_bytes": _STATE_DTYPE_BYTES[state_dtype], "n_mtp": n_mtp,
                    "mtp_layer": LayerGroup(n_mtp, full, ffns[-1]) if n_mtp else None}


def _ffn_mult_width(ffn_mult: float, d_model: int) -> int:
    """DeciLM's feed-forward width from ffn_mult (modeling_decilm.py of nvidia's Nemotron-NAS
    models, _ffn_mult_to_intermediate_size): int(2·ffn_mult·d_model/3) rounded up to a multiple
    of 256."""
    width = int(2 * ffn_mult * d_model / 3)
    return width if width % 256 == 0 else width + 256 - width % 256


_BLOCK_KEYS = {"attention": {"no_op", "replace_with_linear", "n_heads_in_group", "sparsify",
                             "num_sink_tokens", "use_prefill_window_in_sink_attention",
                             "unshifted_sink", "window_length"},
               "ffn": {"no_op", "replace_with_linear", "ffn_mult", "sparsify"}}


def _block_configs(f: _Fields):
    """Per-layer heterogeneous blocks (DeciLM / Nemotron-NAS ``block_configs``): each layer's
    attention has its own key-value heads (n_heads_in_group query heads share one) or is absent
    (no_op), each feed-forward block its own width (ffn_mult) or is absent; layers alike are
    grouped."""
    n = f.int("num_hidden_layers")
    blocks = f.raw("block_configs")
    if not isinstance(blocks, list) or len(blocks) != n or not all(
            isinstance(b, dict) and isinstance(b.get("attention"), dict)
            and isinstance(b.get("ffn"), dict) for b in blocks):
        raise f.error(f"block_configs must list {n} objects with 'attention' and 'ffn', got "
                      f"{_short(blocks)}")
    d_model, n_q = f.int("hidden_size"), f.int("num_attention_heads")
    layers, absent = [], False
    for i, block in enumerate(blocks):
        for part in ("attention", "ffn"):
            spec = block[part]
            for key, value in spec.items():
                where = f"block_configs[{i}].{part}.{key}"
                if key not in _BLOCK_KEYS[part]:
                    raise f.error(f"{where} is not understood")
                if key in ("replace_with_linear", "sparsify", "window_length",
                           "num_sink_tokens") and _present(value):
                    raise f.error(f"{where}={_short(value)} (a {part} block replaced or "
                                  "sparsified) is not read")
        attention_spec, ffn_spec = block["attention"], block["ffn"]
        if attention_spec.get("no_op"):
            attention, absent = NO_ATTENTION, True
        else:
            group = attention_spec.get("n_heads_in_group")
            if isinstance(group, bool) or not isinstance(group, int) or group < 1 or n_q % group:
                raise f.error(f"block_configs[{i}].attention.n_heads_in_group must divide "
                              f"num_attention_heads={n_q}, got {_short(group)}")
            attention = _gqa(f, "full", None, n_kv=n_q // group)
        if ffn_spec.get("no_op"):
            ffn, absent = NO_FFN, True
        else:
            mult = ffn_spec.get("ffn_mult")
            if isinstance(mult, bool) or not isinstance(mult, (int, float)) or \
                    not 0 < mult < 1e3:
                raise f.error(f"block_configs[{i}].ffn.ffn_mult must be a positive number, got "
                              f"{_short(mult)}")
            ffn = FeedForward("dense", _ffn_mult_width(mult, d_model))
        layers.append((attention, ffn))
    untimed = ["block_configs: layers without attention or without a feed-forward block (no_op) "
               "are not yet timed by the full model"] if absent else []
    return layers, {"features": ["block_configs (per-layer heterogeneous blocks)"],
                    "untimed": untimed}


#: Nemotron-H's block letters (transformers models/nemotron_h/configuration_nemotron_h.py).
_NEMOTRON_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}


def _nemotron_h(f: _Fields):
    """Nemotron-H and Nemotron-3: one block per layer, a Mamba-2 mixer, attention, an MLP or an
    MoE block, in the order of hybrid_override_pattern (or layers_block_type)."""
    if f.has("layers_block_type"):
        field, blocks = "layers_block_type", f.raw("layers_block_type")
        if not isinstance(blocks, list) or not all(b in _NEMOTRON_BLOCKS.values() for b in blocks):
            raise f.error(f"layers_block_type must list mamba, attention, mlp or moe, got "
                          f"{_short(blocks)}")
    else:
        field, pattern = "hybrid_override_pattern", f.raw("hybrid_override_pattern")
        if not isinstance(pattern, str) or not all(c in _NEMOTRON_BLOCKS for c in pattern):
            raise f.error(f"hybrid_override_pattern must be letters of M * - E, got "
                          f"{_short(pattern)}")
        blocks = [_NEMOTRON_BLOCKS[c] for c in pattern]
    n = f.int("num_hidden_layers", len(blocks))
    if len(blocks) != n or not blocks:
        raise f.error(f"{field} has {len(blocks)} entries for num_hidden_layers={n}")
    groups, state, heads, head_dim = (f.int("n_groups"), f.int("ssm_state_size"),
                                      f.int("mamba_num_heads"), f.int("mamba_head_dim"))
    if heads % groups:
        raise f.error(f"n_groups={groups} does not divide mamba_num_heads={heads}")
    mamba = Attention("mamba", "mamba2", heads, groups, head_dim,
                      linear=(groups, state, heads, head_dim, f.int("conv_kernel")))
    d_head = f.int("head_dim", 0, minimum=0) or f.int("attention_head_dim", 0, minimum=0) or None
    attention = _gqa(f, "full", None, d_head=d_head)
    # NemotronHMLP and its experts: up_proj, squared ReLU, down_proj; no gate matrix
    # (transformers models/nemotron_h/modeling_nemotron_h.py)
    n_in = 1
    moe = _moe_block(f, n_in) if "moe" in blocks else None
    if "moe" in blocks and moe is None:
        raise f.error("config.json has no n_routed_experts for its MoE blocks ('E')")
    dense = FeedForward("dense", f.int("intermediate_size"), n_in=n_in) if "mlp" in blocks \
        else None
    by_kind = {"mamba": (mamba, NO_FFN), "attention": (attention, NO_FFN),
               "mlp": (NO_ATTENTION, dense), "moe": (NO_ATTENTION, moe)}
    state_dtype = f.raw("mamba_ssm_cache_dtype", f.raw("dtype", f.raw("torch_dtype", "bfloat16")))
    if not isinstance(state_dtype, str) or state_dtype not in _STATE_DTYPE_BYTES:
        raise f.error(f"mamba_ssm_cache_dtype {_short(state_dtype)} is not one the reader maps")
    n_mtp = f.int("num_nextn_predict_layers", 0, minimum=0)
    features = ["Mamba-2 state-space layers", "blocks of one kind per layer"]
    if moe and moe.latent:
        features.append(f"moe_latent_size={moe.latent} (latent MoE)")
    return [by_kind[b] for b in blocks], {
        "features": features, "state_bytes": _STATE_DTYPE_BYTES[state_dtype], "n_mtp": n_mtp,
        "mtp_layer": LayerGroup(n_mtp, attention, moe or dense or NO_FFN) if n_mtp else None}


# --- the uniform full model ----------------------------------------------------------------------

def model_fields(arch: Architecture) -> dict:
    """Keyword arguments of presets.models.Model for an architecture that maps onto it exactly.

    The full model represents uniform layers: one group of full GQA/MHA/MQA attention without
    gates or sinks, and a dense or routed-only MoE feed-forward block, all weights at one precision.
    Anything else raises an InputError naming what the full model does not yet represent.
    """
    if arch.untimed:
        raise InputError(f"{arch.model_type}: {arch.untimed[0]}")
    problems = list(arch.features)
    if arch.quantization and not any("MXFP4" in p for p in problems):
        problems.append(f"quantization {arch.quantization['method']} (mixed precision)")
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
        "kv_cache_bits": arch.kv_cache_bits,
    }
    if arch.d_model % a.n_q or arch.d_model // a.n_q != a.d_head:
        fields["d_head"] = a.d_head
    return fields


# --- describe-model ------------------------------------------------------------------------------

def describe_architecture(arch: Architecture, weight_bits: float | None = None) -> dict:
    """What ``inference-math describe-model`` prints for a config.json, as a JSON-ready dict."""
    n_q, b_q, b_w = arch.weight_bits_used(weight_bits)
    # every architecture read here is timed, uniform or by layer groups, but what is untimed
    full_model = "; ".join(arch.untimed) or None
    at_context = [arch.kv_bytes_at(c) for c in CONTEXTS]
    return {
        "name": arch.name, "model_type": arch.model_type, "source": "config.json",
        "read_by_fields": arch.read_by_fields, "kv_cache_bits": arch.kv_cache_bits,
        "total_params": arch.total_params, "active_params": arch.active_params,
        "active_params_without_input_embedding": arch.active_params - arch.input_embedding_params,
        "embedding_params": arch.embedding_params, "tied_embeddings": arch.tied,
        "mtp_layers": arch.n_mtp, "mtp_params": arch.mtp_params,
        "layer_count": sum(g.count for g in arch.groups), "layers": arch.layer_rows(),
        "kv_bytes_per_token": arch.kv_bytes_per_token,
        "kv_bytes_per_token_beyond_windows": arch.kv_bytes_per_token_long,
        "kv_state_bytes_per_sequence": arch.state_bytes_per_sequence,
        "kv_indexer_bytes_per_token": sum(g.count * layer.get("index_kv", 0.0)
                                          for g, layer in zip(arch.groups, arch.layers,
                                                              strict=True)),
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
