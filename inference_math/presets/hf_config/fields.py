"""The table of fields: what each ``config.json`` field the reader knows means, and typed access.

Which ``model_type`` values the reader has been checked against (:data:`KNOWN_TYPES`), the
aliases of each quantity (:data:`ALIASES`), the fields that change no count (:data:`NEUTRAL`),
those refused by name (:data:`UNREAD`), those of state-space layers (:data:`SSM_FIELDS`) and of
the families' own readers; and :class:`_Fields`, the typed access through which every value is
read, each error naming the model_type and the field.

Imports nothing of this package (the bottom of :mod:`inference_math.presets.hf_config`).
"""

from __future__ import annotations

import math

from ...core.validation import InputError

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
#: Bytes per element of a linear-attention or Mamba state, by the dtype a config names.
_STATE_DTYPE_BYTES = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}
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
#: The fields of DeepSeek-V4's configs the reader reads (the others are in NEUTRAL).
_V4_FIELDS = frozenset("""
    compress_ratios hc_mult hc_eps hc_sinkhorn_iters o_groups o_lora_rank num_hash_layers
    compress_rope_theta expert_dtype index_n_heads index_head_dim index_topk swiglu_limit
    """.split())


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
