"""What leaves the reader: the keyword arguments of the uniform full model
(:func:`model_fields`, presets.models.Model) when an architecture maps onto it exactly, and what
``inference-math describe-model`` prints (:func:`describe_architecture`).

Imports :mod:`.architecture` of this package.
"""

from __future__ import annotations

import json

from ...core.validation import InputError
from .architecture import Architecture

#: Contexts at which describe-model reports the cache of one sequence.
CONTEXTS = (1024, 32768, 131072)


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
        # what the reading assumed and ignored, one line each in notes
        "assumed": {field: json.loads(value) for field, value in arch.assumed},
        "ignored": list(arch.ignored), "notes": list(arch.notes),
    }
