"""The table of fields: what each ``config.json`` field the reader knows means, and typed access.

:data:`FIELD_GROUPS` is the table (fields, meaning, counts changed, source), :data:`FIELDS` indexes
it by field and :func:`field_table_markdown` renders it; a field outside it is classified by
:mod:`.policy`.

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
#: A sliding-window layer's own heads and widths (MiMo-V2-Flash), read only in a config whose
#: layers slide (:func:`declares_sliding`); elsewhere they are unknown fields.
SLIDING_FIELDS = ("swa_num_attention_heads", "swa_num_key_value_heads", "swa_head_dim",
                  "swa_v_head_dim")


def declares_sliding(config: dict) -> bool:
    """Whether a config's per-layer layout names sliding-window layers (hybrid_layer_pattern
    with a 1, layer_types with sliding_attention, or sliding_window_pattern)."""
    pattern, kinds = config.get("hybrid_layer_pattern"), config.get("layer_types")
    return (isinstance(pattern, list) and 1 in pattern) or \
        (isinstance(kinds, list) and "sliding_attention" in kinds) or \
        bool(config.get("sliding_window_pattern"))


#: The table of fields: every field the reader uses or knows, as groups of
#: (fields, what they mean, which counts they change, where the meaning comes from). ``none`` in
#: the third column: the field changes no count. ``text_config.X`` names a field of the language
#: model nested in a multimodal wrapper; ``block_configs[].X`` and ``linear_attn_config.X`` fields
#: of those objects. :data:`FIELDS` indexes it by field, :func:`field_table_markdown` renders it.
_TRANSFORMERS = "transformers PretrainedConfig"
FIELD_GROUPS: tuple[tuple[str, str, str, str], ...] = (
    ("num_hidden_layers", "number of decoder layers", "parameters, KV cache, time",
     "transformers LlamaConfig"),
    ("hidden_size", "width of the residual stream, d_model", "parameters, KV cache, time",
     "transformers LlamaConfig"),
    ("intermediate_size", "width of a dense feed-forward block (or of an expert when no expert "
     "width is given)", "parameters, time", "transformers LlamaConfig"),
    ("num_attention_heads", "query heads of an attention layer", "parameters, time",
     "transformers LlamaConfig"),
    ("num_key_value_heads", "key/value heads (GQA; equal to the query heads: MHA; 1: MQA)",
     "parameters, KV cache", "transformers LlamaConfig"),
    ("head_dim attention_head_dim", "width of one attention head (default hidden_size / heads)",
     "parameters, KV cache", "transformers LlamaConfig; NemotronHConfig"),
    ("vocab_size", "rows of the embedding tables", "parameters", "transformers LlamaConfig"),
    ("n_layer num_layers", "number of decoder layers, read as num_hidden_layers (GPT-2's and "
     "ChatGLM's name)", "parameters, KV cache, time",
     "transformers GPT2Config/GPTJConfig/GPTBigCodeConfig; THUDM ChatGLMConfig"),
    ("n_embd", "width of the residual stream, read as hidden_size (GPT-2's name)",
     "parameters, KV cache, time", "transformers GPT2Config/GPTJConfig/GPTBigCodeConfig"),
    ("n_head", "query heads, read as num_attention_heads (GPT-2's name)", "parameters, time",
     "transformers GPT2Config/GPTJConfig/GPTBigCodeConfig"),
    ("n_head_kv multi_query multi_query_attention multi_query_group_num", "key/value heads: "
     "phi-msft's count (null: one per query head); GPT-BigCode's multi_query (one head); "
     "ChatGLM's multi_query_attention with its multi_query_group_num heads",
     "parameters, KV cache", "phi-msft PhiConfig; transformers GPTBigCodeConfig; THUDM "
     "ChatGLMConfig"),
    ("n_inner ffn_hidden_size", "width of the dense feed-forward block, read as "
     "intermediate_size (n_inner null: 4·n_embd, as GPT-2, GPT-J, GPT-BigCode and phi-msft "
     "build it)", "parameters, time", "transformers GPT2MLP/GPTJMLP; THUDM ChatGLM MLP"),
    ("kv_channels", "width of one attention head, read as head_dim (Qwen (1), ChatGLM)",
     "parameters, KV cache", "Qwen QWenConfig; THUDM ChatGLMConfig"),
    ("padded_vocab_size", "rows of the embedding tables, read as vocab_size (ChatGLM)",
     "parameters", "THUDM ChatGLMConfig"),
    ("sliding_window_size", "MLC LLM's name for sliding_window in its copies of the configs",
     "KV cache, time", "MLC LLM model_preset.py"),
    ("n_positions n_ctx n_special", "GPT-2's trained context (the rows of its learned position "
     "table, noted and not counted) and OpenAI GPT's special tokens", "none",
     "transformers GPT2Config"),
    ("tie_word_embeddings", "the output projection reuses the input embedding", "parameters",
     _TRANSFORMERS),
    ("torch_dtype dtype", "precision of the weights and activations", "weight bytes, KV cache",
     _TRANSFORMERS),
    ("quantization_config", "how the checkpoint quantizes its weights and cache, module by "
     "module", "weight bytes, KV cache", "transformers quantizers; compressed-tensors; ModelOpt"),
    ("layer_types", "per-layer attention kind: full_attention, sliding_attention, "
     "chunked_attention, linear_attention", "KV cache, parameters",
     "transformers Gemma3/Qwen3/gpt-oss configs"),
    ("sliding_window", "tokens a sliding-window layer attends to", "KV cache, time",
     "transformers MistralConfig"),
    ("use_sliding_window", "whether sliding-window layers exist (Qwen2: from max_window_layers "
     "on; refused when true)", "KV cache", "transformers Qwen2Config"),
    ("max_window_layers", "Qwen2's first layer without a sliding window (read only with "
     "use_sliding_window)", "none", "transformers Qwen2Config"),
    ("sliding_window_pattern", "every N-th layer is full attention, the others slide (when "
     "there is no layer_types)", "KV cache", "transformers Gemma3TextConfig"),
    ("attention_chunk_size", "tokens of a chunked-attention layer's chunk", "KV cache, time",
     "transformers Llama4TextConfig"),
    ("no_rope_layers no_rope_layer_interval", "which layers have no rotary embedding (Llama 4: "
     "its full-attention layers)", "KV cache", "transformers Llama4TextConfig"),
    (" ".join(ALIASES["experts"]), "routed experts of an MoE layer", "parameters",
     "transformers Mixtral/Qwen3-MoE/DeepSeek-V3 configs"),
    (" ".join(ALIASES["experts_per_token"]), "routed experts a token uses", "active parameters, "
     "time", "transformers Mixtral/Qwen3-MoE/DeepSeek-V3 configs"),
    (" ".join(ALIASES["expert_width"]), "width of one routed expert", "parameters",
     "transformers Qwen3MoeConfig"),
    (" ".join(ALIASES["shared_experts"]), "shared experts (run for every token), of the routed "
     "experts' width", "parameters", "transformers DeepseekV3Config"),
    (" ".join(ALIASES["shared_width"]), "whole width of the shared expert block", "parameters",
     "transformers Qwen2MoeConfig; NemotronHConfig"),
    ("moe_latent_size", "routed experts work in this width, projected to and from it",
     "parameters", "NemotronHConfig (Nemotron 3 Super/Ultra)"),
    ("first_k_dense_replace moe_layer_freq decoder_sparse_step interleave_moe_layer_step "
     "mlp_only_layers moe_layers mlp_layer_types", "which layers hold the MoE block (the others "
     "are dense); mlp_layer_types lists dense or sparse per layer and must agree with the others",
     "parameters", "transformers DeepseekV3/Qwen3Moe/Llama4Text/GlmMoeDsa configs"),
    ("dense_intermediate_size", "width of the dense layers' feed-forward block where "
     "intermediate_size is the experts' (MiniMax-M3)", "parameters", "MiniMax-M3 config"),
    ("intermediate_size_mlp", "Llama 4's dense layers' width", "parameters",
     "transformers Llama4TextConfig"),
    ("kv_lora_rank q_lora_rank qk_nope_head_dim qk_rope_head_dim v_head_dim",
     "multi-head latent attention: ranks of the key-value and query latents, head widths "
     "(v_head_dim without kv_lora_rank: the values' width in a GQA layer, MiMo-V2)",
     "parameters, KV cache", "transformers DeepseekV3Config"),
    ("qk_head_dim", "MLA's query-key head width, qk_nope_head_dim + qk_rope_head_dim (redundant: "
     "checked against them)", "none", "transformers DeepseekV3Config (GLM-5's configs)"),
    ("index_n_heads index_head_dim index_topk", "DeepSeek sparse attention's indexer: heads, "
     "width, entries kept", "parameters, KV cache, time", "DeepSeek-V3.2 inference/model.py"),
    ("indexer_types index_topk_freq index_skip_topk_offset index_topk_pattern", "indexers "
     "shared across layers (IndexShare): 'full' runs the layer's own indexer, 'shared' reuses "
     "the last full layer's top k and holds no indexer weights or keys; the schedule "
     "(freq, offset or pattern) is checked against the list", "parameters, KV cache, time",
     "transformers GlmMoeDsaConfig; vLLM deepseek_v32 (skip_topk)"),
    ("index_share_for_mtp_iteration indexer_rope_interleave moe_router_dtype", "IndexShare's "
     "reuse across MTP steps, the indexer's rotary layout, the router's precision", "none",
     "transformers GlmMoeDsaConfig"),
    ("num_nextn_predict_layers mtp_num_hidden_layers", "multi-token-prediction layers "
     "(reported beside the total)", "MTP parameters", "DeepSeek-V3 card; Qwen3-Next config"),
    ("use_mtp num_mtp_modules mtp_transformer_layers", "MiniMax's multi-token-prediction "
     "modules: built or not, how many, layers in each (one: eq-layers-mtp-params' projection is "
     "per module); reported beside the total", "MTP parameters", "MiniMax-M2 "
     "configuration_minimax_m2.py"),
    ("mtp_use_dedicated_embeddings", "the MTP layers hold their own embedding table (only "
     "false is read; true is refused)", "MTP parameters", "Qwen3.5 configs"),
    ("full_attention_interval", "every n-th layer is full attention, the others linear",
     "parameters, KV cache, state", "transformers Qwen3NextConfig"),
    ("attn_output_gate", "a gate on the attention output (query projection doubled)",
     "parameters", "transformers Qwen3NextConfig"),
    ("gating gating_types", "attention output gates: per head (g_proj, d_model x heads; a bare "
     "true) or per element (query projection doubled); gating_types per layer rules over "
     "gating", "parameters", "poolside Laguna modeling_laguna.py"),
    ("num_attention_heads_per_layer", "each layer's query heads (the head width and key/value "
     "heads are the config's)", "parameters, time", "poolside Laguna configs"),
    ("hybrid_layer_pattern", "per-layer attention kind: 0 full attention, 1 sliding window",
     "KV cache, parameters, time", "transformers MiMoV2FlashConfig"),
    (" ".join(SLIDING_FIELDS), "a sliding-window layer's own query heads, key-value heads, key "
     "width and value width, each the full layers' when absent (read only beside sliding "
     "layers: without them the fields are unknown ones)", "parameters, KV cache, time",
     "transformers MiMoV2FlashConfig"),
    ("add_swa_attention_sink_bias add_full_attention_sink_bias attention_value_scale "
     "swa_rope_theta", "attention sinks of the sliding and of the full layers (vectors, not "
     "counted), the values' scale, the sliding layers' rotary base", "none",
     "transformers MiMoV2FlashConfig"),
    ("moe_routed_scaling_factor moe_apply_router_weight_on_input "
     "moe_router_logit_softcapping", "Laguna's routing: scaling, where the weight applies, soft "
     "cap", "none", "poolside Laguna configs"),
    ("linear_conv_kernel_dim linear_key_head_dim linear_num_key_heads linear_num_value_heads "
     "linear_value_head_dim", "Gated DeltaNet layers: convolution, key/value heads and widths",
     "parameters, state", "transformers Qwen3NextConfig"),
    ("mamba_ssm_dtype mamba_ssm_cache_dtype", "precision of a linear-attention or Mamba state",
     "state", "transformers Qwen3NextConfig; NemotronHConfig"),
    ("layers_block_type hybrid_override_pattern", "per-layer block: Mamba-2, attention, MLP or "
     "MoE (nemotron_h only)", "parameters, KV cache, state", "transformers NemotronHConfig"),
    ("n_groups ssm_state_size mamba_num_heads mamba_head_dim conv_kernel", "Mamba-2 layers: "
     "groups, state size, heads, head width, convolution (nemotron_h only)", "parameters, state",
     "transformers NemotronHConfig"),
    ("attn_layer_indices mamba_d_state mamba_expand state_size", "state-space layers of other "
     "families: refused outside nemotron_h", "parameters, state", "Jamba/Zamba/Bamba configs"),
    ("chunk_size expand mamba_hidden_act mamba_proj_bias time_step_floor time_step_limit "
     "time_step_max time_step_min time_step_rank use_conv_bias use_mamba_kernels "
     "residual_in_fp32 use_bias num_logits_to_keep mlp_hidden_act "
     "moe_shared_expert_overlap mtp_hybrid_override_pattern mtp_layers_block_type",
     "Mamba kernels' options, biases, activations and the MTP block's pattern (nemotron_h)",
     "none", "transformers NemotronHConfig"),
    ("block_configs", "per-layer attention (n_heads_in_group, no_op) and feed-forward "
     "(ffn_mult, no_op) of a DeciLM / Nemotron-NAS model", "parameters, KV cache",
     "nvidia Llama-Nemotron modeling_decilm.py"),
    ("linear_attn_config", "Kimi Delta Attention: kda_layers, num_heads, head_dim, "
     "short_conv_kernel_size", "parameters, state", "moonshotai Kimi-Linear configuration"),
    ("mla_use_nope moe_renormalize moe_router_activation_func use_grouped_topk "
     "num_expert_group", "Kimi Linear's routing and rotary options", "none",
     "moonshotai Kimi-Linear configuration"),
    ("num_global_key_value_heads global_head_dim attention_k_eq_v", "Gemma 4's global layers: "
     "key-value heads, head width, values reusing the keys", "parameters, KV cache",
     "transformers Gemma4TextConfig"),
    ("enable_moe_block use_double_wide_mlp", "Gemma 4: experts beside the dense MLP; a "
     "double-width MLP (refused)", "parameters", "transformers Gemma4TextConfig"),
    ("vocab_size_per_layer_input use_bidirectional_attention attn_temperature_tuning "
     "floor_scale attn_scale initial_context_length swiglu_limit experts_per_token",
     "per-layer input vocabulary, attention masks and scales, activation limits",
     "none", "transformers Gemma4/Llama4/gpt-oss configs"),
    (" ".join(sorted(UNREAD)), "layer kinds counted for their own model types only (refused "
     "elsewhere, by name)", "parameters, KV cache", "DeepSeek-V4 inference/model.py; Gemma 3n"),
    ("o_groups hc_eps hc_sinkhorn_iters compress_rope_theta expert_dtype",
     "DeepSeek-V4: output groups, hyper-connection options, compressor RoPE, expert precision",
     "parameters, weight bytes", "DeepSeek-V4 inference/model.py"),
    ("text_config", "the language model of a multimodal wrapper (read in its place)",
     "everything", _TRANSFORMERS),
    ("vision_config audio_config image_token_id video_token_id vision_start_token_id "
     "vision_end_token_id audio_token_id boa_token_id boi_token_id eoa_token_id "
     "eoa_token_index eoi_token_id ignore_index media_placeholder_token_id "
     "use_unified_vision_chunk video_placeholder vision_soft_tokens_per_image "
     "language_model_only vision_feature_layer vision_feature_select_strategy "
     "image_token_index image_seq_length projector_hidden_act multimodal_projector_bias "
     "spatial_merge_size img_processor embd_layer out_hidden_size projector_hidden_size",
     "encoders, projectors and special tokens of a multimodal model: the vision tower is not "
     "counted, only the language model", "none",
     "transformers Qwen3-VL/Gemma 4/Kimi-VL/LLaVA/Mistral3 configs; Phi-3.5-vision config"),
    ("dim_model_base scale_emb scale_depth", "MiniCPM's muP scalings: logits divided by "
     "hidden_size/dim_model_base, embeddings times scale_emb, residual branches times "
     "scale_depth/sqrt(layers); no weights", "none", "openbmb MiniCPM modeling_minicpm.py"),
    ("layer_rope_theta", "per-layer rotary base; 0 marks a layer without rotary embedding "
     "(rotary embeddings hold no weights; checked: one number >= 0 per layer)", "none",
     "Muse-Glimmer config"),
    ("rope_parameters rope_scaling rope_theta rotary_dim rotary_emb_base rope_interleave "
     "rope_type original_max_position_embeddings use_scaled_rope mrope_section "
     "partial_rotary_factor rope_local_base_freq max_position_embeddings",
     "rotary position embedding: base, scaling, rotated fraction, trained context", "none",
     _TRANSFORMERS),
    ("rms_norm_eps layer_norm_epsilon layer_norm_eps norm_eps use_qk_norm qk_layernorm "
     "attention_k_norm qk_norm_type rescale_prenorm_residual", "normalization: epsilon, "
     "query/key norms (vectors, not counted)", "none", _TRANSFORMERS),
    ("hidden_act hidden_activation output_gate_type", "activation functions", "none",
     _TRANSFORMERS),
    ("attention_bias mlp_bias attention_out_bias qkv_bias bias clip_qkv", "biases (vectors, "
     "not counted) and clipping", "none", _TRANSFORMERS),
    ("norm_topk_prob routed_scaling_factor scoring_func seq_aux topk_group topk_method n_group "
     "ep_size use_routing_bias router_bias moe_router_enable_expert_bias router_jitter_noise "
     "shared_expert_gate", "routing rules: scores, groups, bias, scaling (the router's matrix is "
     "counted from the experts)", "none", "transformers DeepseekV3/Qwen2Moe configs"),
    ("aux_loss_alpha router_aux_loss_coef moe_aux_loss_coeff aux_loss_coef router_z_loss_coef "
     "output_router_logits", "training losses of the router", "none", _TRANSFORMERS),
    ("attention_dropout resid_pdrop embd_pdrop hidden_dropout residual_dropout "
     "initializer_range initializer_factor", "training only: dropout and initialization",
     "none", _TRANSFORMERS),
    ("final_logit_softcapping attn_logit_softcapping query_pre_attn_scalar "
     "embedding_multiplier residual_multiplier attention_multiplier logits_scaling "
     "attention_softmax_in_fp32", "scalings and soft caps of scores and logits", "none",
     _TRANSFORMERS),
    ("_name_or_path architectures auto_map model_type transformers_version tokenizer_class "
     "id2label label2id problem_type finetuning_task prefix task_specific_params "
     "keys_to_ignore_at_inference _attn_implementation use_flash_attn use_bfloat16 torchscript "
     "tf_legacy_loss return_dict output_attentions output_hidden_states pruned_heads "
     "chunk_size_feed_forward is_decoder is_encoder_decoder add_cross_attention "
     "cross_attention_hidden_size tie_encoder_decoder decoder_start_token_id pretraining_tp",
     "metadata and library options", "none", _TRANSFORMERS),
    ("bos_token_id eos_token_id pad_token_id sep_token_id use_cache cache_implementation "
     "seq_length max_seq_len model_max_length", "special tokens and cache options", "none",
     _TRANSFORMERS),
    ("bad_words_ids begin_suppress_tokens diversity_penalty do_sample early_stopping "
     "encoder_no_repeat_ngram_size exponential_decay_length_penalty forced_bos_token_id "
     "forced_eos_token_id length_penalty max_length min_length no_repeat_ngram_size "
     "num_beam_groups num_beams num_return_sequences output_scores remove_invalid_values "
     "repetition_penalty return_dict_in_generate suppress_tokens temperature top_k top_p "
     "typical_p", "generation defaults", "none", "transformers GenerationConfig"),
)
#: Each field of :data:`FIELD_GROUPS`: (meaning, counts it changes, source).
FIELDS: dict[str, tuple[str, str, str]] = {
    name: (meaning, changes, source)
    for names, meaning, changes, source in FIELD_GROUPS for name in names.split()}


def field_table_markdown() -> str:
    """The table of fields as Markdown: one row per group of fields, with what they mean, which
    counts they change and the source of the meaning."""
    rows = ["| fields | meaning | changes | source |", "|---|---|---|---|"]
    for names, meaning, changes, source in FIELD_GROUPS:
        cells = (", ".join(f"`{n}`" for n in names.split()), meaning, changes, source)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


#: Model types whose configuration class ties the output projection to the input embedding when
#: config.json omits tie_word_embeddings (transformers' defaults); the reader's default is
#: untied otherwise, as LlamaConfig's.
TIED_BY_DEFAULT = {
    "gemma": "transformers GemmaConfig", "gemma2": "transformers Gemma2Config",
    "gemma3_text": "transformers Gemma3TextConfig", "cohere": "transformers CohereConfig",
    "cohere2": "transformers Cohere2Config", "starcoder2": "transformers Starcoder2Config",
    "gpt2": "transformers GPT2Config (PretrainedConfig: tie_word_embeddings=True)",
    "gpt_bigcode": "transformers GPTBigCodeConfig (PretrainedConfig: tie_word_embeddings=True)",
}
#: Model types whose feed-forward block is two matrices (up, activation, down) rather than the
#: gated three (SwiGLU) of every other type: the fields do not say which, the model code does.
NON_GATED_TYPES = {
    "starcoder2": "transformers Starcoder2MLP (c_fc, c_proj)",
    "gpt2": "transformers GPT2MLP (c_fc, c_proj)", "gptj": "transformers GPTJMLP (fc_in, fc_out)",
    "gpt_bigcode": "transformers GPTBigCodeMLP (c_fc, c_proj)",
    "phi-msft": "phi-msft MLP (fc1, fc2)",
    "gpt_neox": "transformers GPTNeoXMLP (dense_h_to_4h, dense_4h_to_h)",
}
#: Model types whose sliding-window and full layers alternate without a layer_types field:
#: (rule, source). gemma2: even layers slide; sliding_window_pattern N (Gemma 3): every N-th
#: layer is full, the others slide.
ALTERNATING_WINDOWS = {
    "gemma2": "transformers Gemma2DecoderLayer: layer i slides when i is even",
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
