"""Per-family rules: each family's reader turns the fields into one (mixer, feed-forward) pair per
layer and what the Architecture needs beside (features, untimed, state bytes, multi-token
prediction). Fields read by meaning (:func:`_generic`, :func:`_mla`, :func:`_qwen_hybrid`,
:func:`_block_configs`) and rules the fields cannot give, each tied to its model types and its
source (gpt-oss, Llama 4, Gemma 4, DeepSeek-V4, Kimi Linear, Nemotron-H).

Imports :mod:`.fields`, :mod:`.layer_kinds` and :mod:`.layer_patterns` of this package.
"""

from __future__ import annotations

from dataclasses import replace

from .fields import (
    _STATE_DTYPE_BYTES,
    ALTERNATING_WINDOWS,
    NON_GATED_TYPES,
    _Fields,
    _present,
    _short,
)
from .layer_kinds import NO_ATTENTION, NO_FFN, Attention, FeedForward, LayerGroup
from .layer_patterns import _ffn_layers, _gqa, _moe_block


def _generic(f: _Fields):
    """Any GQA/MHA/MQA decoder read by its fields (Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE,
    Qwen3-VL's language model, and model types never seen): full, sliding-window (all layers, or
    per layer_types) attention; dense or MoE feed-forward blocks."""
    n = f.int("num_hidden_layers")
    features = []
    if f.has("layer_types"):
        if f.has("hybrid_layer_pattern"):
            raise f.error("layer_types and hybrid_layer_pattern both say which layers slide")
        kinds = f.layer_types(n)
    elif f.has("hybrid_layer_pattern"):
        kinds = _hybrid_pattern(f, n)
    elif f.has("sliding_window_pattern") and f.has("sliding_window"):
        every = f.int("sliding_window_pattern")  # Gemma 3: every N-th layer is full
        kinds = ["full_attention" if (i + 1) % every == 0 else "sliding_attention"
                 for i in range(n)]
    elif f.model_type in ALTERNATING_WINDOWS and f.has("sliding_window"):
        kinds = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(n)]
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
    for i, kind in enumerate(kinds):
        if kind not in ("full_attention", "sliding_attention") or \
                kind == "sliding_attention" and not window:
            raise f.error(f"layer_types[{i}]={_short(kind)} is not read for {f.model_type}")
    heads = _layer_heads(f, n)
    gates = _output_gates(f, n)
    shapes = _kind_shapes(f, "sliding_attention" in kinds)
    if any(heads) and f.has("swa_num_attention_heads"):
        raise f.error("num_attention_heads_per_layer and swa_num_attention_heads both give the "
                      "sliding layers' query heads")
    mixers = []
    for i, kind in enumerate(kinds):
        shape = dict(shapes[kind])
        if heads[i]:
            shape["n_q"] = heads[i]
        mixers.append(_gqa(f, "full" if kind == "full_attention" else "sliding",
                           None if kind == "full_attention" else window, **shape,
                           m_q=2 if gates[i] == "element" else 1, head_gate=gates[i] == "head"))
    if any(heads):
        features.append("num_attention_heads_per_layer (query heads per layer)")
    if any(m.d_v for m in mixers):
        features.append("values narrower or wider than the keys (v_head_dim)")
    if shapes["sliding_attention"] != shapes["full_attention"] and "sliding_attention" in kinds:
        features.append("sliding-window layers with heads of their own (swa_*)")
    if any(gates):
        features.append("attention output gates (per head or per element)")
    ffns, more = _ffn_layers(f, n, 1 if f.model_type in NON_GATED_TYPES else 2)
    features += more
    layers = list(zip(mixers, ffns, strict=True))
    features += _rope_layers(f, n)
    # multi-token prediction: a layer of the last layer's kind (reported, not in the total)
    n_mtp = f.int("num_nextn_predict_layers", 0, minimum=0) or \
        f.int("mtp_num_hidden_layers", 0, minimum=0) or _mtp_modules(f)
    return layers, {"features": features, "n_mtp": n_mtp,
                    "mtp_layer": LayerGroup(n_mtp, *layers[-1]) if n_mtp else None}


def _hybrid_pattern(f: _Fields, n: int) -> list[str]:
    """MiMo-V2's hybrid_layer_pattern: one entry per layer, 0 full attention, 1 sliding window
    (MiMoV2FlashConfig; vLLM's and SGLang's mimo_v2_flash)."""
    pattern = f.raw("hybrid_layer_pattern")
    if not isinstance(pattern, list) or len(pattern) != n or \
            not all(v in (0, 1) and not isinstance(v, bool) for v in pattern):
        raise f.error(f"hybrid_layer_pattern must list {n} zeros (full) and ones (sliding), got "
                      f"{_short(pattern)}")
    return ["sliding_attention" if v else "full_attention" for v in pattern]


#: A sliding layer's own shape (MiMo-V2-Flash): each field and the full layers' field it
#: defaults to.
SLIDING_SHAPE = {"n_q": ("swa_num_attention_heads", "num_attention_heads"),
                 "n_kv": ("swa_num_key_value_heads", "num_key_value_heads"),
                 "d_head": ("swa_head_dim", "head_dim"),
                 "d_v": ("swa_v_head_dim", "v_head_dim")}


def _kind_shapes(f: _Fields, sliding: bool) -> dict[str, dict]:
    """The attention shape of each layer kind, as _gqa's keywords: the full layers' values
    v_head_dim wide (when the config gives it), the sliding layers' heads and widths their
    swa_* fields, each the full layers' when absent (but swa_v_head_dim, which without
    v_head_dim is the sliding layers' own key width). Sinks (vectors, not counted) as
    add_full_attention_sink_bias and add_swa_attention_sink_bias say. Without sliding layers
    the swa_* fields are unknown fields (policy.check_unknown)."""
    full = {"d_v": f.int("v_head_dim")} if f.has("v_head_dim") else {}
    if f.flag("add_full_attention_sink_bias", False):
        full["sinks"] = True
    swa = dict(full)
    swa.pop("sinks", None)
    if sliding:
        for key, (own, _) in SLIDING_SHAPE.items():
            if f.has(own):
                swa[key] = f.int(own)
        if f.flag("add_swa_attention_sink_bias", False):
            swa["sinks"] = True
        if "d_head" in swa and "d_v" not in swa:
            swa["d_v"] = swa["d_head"]  # values as wide as the sliding layers' own keys
    return {"full_attention": full, "sliding_attention": swa}


def _layer_heads(f: _Fields, n: int) -> list[int | None]:
    """Each layer's query heads (num_attention_heads_per_layer, Laguna), or None: the config's."""
    if not f.has("num_attention_heads_per_layer"):
        return [None] * n
    heads = f.int_list("num_attention_heads_per_layer", minimum=1)
    if len(heads) != n:
        raise f.error(f"num_attention_heads_per_layer has {len(heads)} entries for "
                      f"num_hidden_layers={n}")
    return heads


#: Laguna's output gates (modeling_laguna.py; gating_types rules over gating, and a bare true is
#: the per-head gate): "head", one softplus scalar per head; "element", one per output element.
_GATES = {"per_head": "head", "per-head": "head", "per_element": "element",
          "per-element": "element"}


def _output_gates(f: _Fields, n: int) -> list[str | None]:
    """Each layer's attention output gate: "head", "element" or None (gating_types per layer,
    else gating for every layer: true or 'per-head', 'per-element', false)."""
    if f.has("gating_types"):
        kinds = f.raw("gating_types")
        if not isinstance(kinds, list) or len(kinds) != n or not all(k in _GATES for k in kinds):
            raise f.error(f"gating_types must list {n} entries of per_head or per_element, got "
                          f"{_short(kinds)}")
        return [_GATES[k] for k in kinds]
    gating = f.raw("gating", False)
    if gating is False:
        return [None] * n
    if gating is True or gating in _GATES:
        return ["head" if gating is True else _GATES[gating]] * n
    raise f.error(f"gating must be true, false, per-head or per-element, got {_short(gating)}")


def _shared_indexers(f: _Fields, n: int) -> list[bool]:
    """Which layers reuse an earlier layer's top k (IndexShare, GLM-5.2): indexer_types[i]
    'shared' (its 'full' layers run their own indexer), checked against the schedule vLLM
    builds from the same config (index_topk_pattern 'S', or skip_topk = max(i - offset + 1, 0)
    % freq != 0, deepseek_v32's attention)."""
    if not f.has("indexer_types"):
        return [False] * n
    kinds = f.raw("indexer_types")
    if not isinstance(kinds, list) or len(kinds) != n or \
            not all(k in ("full", "shared") for k in kinds):
        raise f.error(f"indexer_types must list {n} entries of full or shared, got "
                      f"{_short(kinds)}")
    if kinds[0] != "full":
        raise f.error("indexer_types[0] is 'shared': the first layer has no earlier indexer")
    shared = [k == "shared" for k in kinds]
    if f.has("index_topk_pattern"):
        pattern = f.raw("index_topk_pattern")
        schedule = [c == "S" for c in pattern] if isinstance(pattern, str) else None
        field = "index_topk_pattern"
    elif f.has("index_topk_freq") or f.has("index_skip_topk_offset"):
        freq = f.int("index_topk_freq", 1)
        offset = f.int("index_skip_topk_offset", 1, minimum=0)
        schedule = [max(i - offset + 1, 0) % freq != 0 for i in range(n)]
        field = "index_topk_freq and index_skip_topk_offset"
    else:
        return shared
    if schedule != shared:
        raise f.error(f"indexer_types disagrees with the schedule of {field}")
    return shared


def _mtp_modules(f: _Fields) -> int:
    """MiniMax's multi-token-prediction modules (num_mtp_modules, each of
    mtp_transformer_layers layers; none when use_mtp is false): one layer each, with the
    projection eq-layers-mtp-params counts once per module."""
    modules = f.int("num_mtp_modules", 0, minimum=0)
    if not modules or not f.flag("use_mtp", True):
        return 0
    if f.int("mtp_transformer_layers", 1) != 1:
        raise f.error(f"mtp_transformer_layers={f.int('mtp_transformer_layers')}: MTP modules "
                      "of several layers (one projection per module) are not read")
    return modules


def _rope_layers(f: _Fields, n: int) -> list[str]:
    """layer_rope_theta: a rotary base per layer, 0 where a layer has none. Rotary embeddings
    hold no weights and change no cache width, so only the list is checked."""
    if not f.has("layer_rope_theta"):
        return []
    thetas = f.raw("layer_rope_theta")
    if not isinstance(thetas, list) or len(thetas) != n or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and t >= 0 for t in thetas):
        raise f.error(f"layer_rope_theta must list {n} numbers >= 0, got {_short(thetas)}")
    plain = sum(1 for t in thetas if t == 0)
    return [f"{plain} layers without rotary embedding (layer_rope_theta 0)"] if plain else []


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
    if f.has("qk_head_dim") and f.int("qk_head_dim") != f.int("qk_nope_head_dim") + mla[2]:
        raise f.error(f"qk_head_dim={f.int('qk_head_dim')} is not qk_nope_head_dim + "
                      f"qk_rope_head_dim = {f.int('qk_nope_head_dim') + mla[2]}")
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
    shared = _shared_indexers(f, n) if indexer else [False] * n
    if any(shared):
        reuse = replace(attention, index_shared=True)
        mixers = [reuse if s else attention for s in shared]
        features.append(f"IndexShare: {n - sum(shared)} of {n} layers run their own indexer, "
                        "the others reuse its top k")
    if f.has("linear_attn_config"):
        mixers = _kda_layers(f, n, attention)
        features.append("Kimi Delta Attention layers (constant state)")
        extra = {"state_bytes": 4.0}
    else:
        extra = {}
    return [(mixer, ffn) for mixer, ffn in zip(mixers, ffns, strict=True)], {**extra,
        "features": features, "untimed": untimed, "n_mtp": n_mtp,
        "mtp_layer": LayerGroup(n_mtp, attention, moe) if n_mtp else None}


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
    if n_mtp and f.flag("mtp_use_dedicated_embeddings"):
        raise f.error("mtp_use_dedicated_embeddings=true (the MTP layers' own embedding table) "
                      "is not read")
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
