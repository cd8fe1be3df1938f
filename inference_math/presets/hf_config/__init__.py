"""Models read from a Hugging Face ``config.json``: layer groups, parameter counts, cache, weights.

:func:`read_architecture` reads a ``config.json`` (a path to the file or a folder holding one; no
network) into an :class:`Architecture`: the layers grouped by kind, each group with its count, a
mixer (attention MHA/GQA/MQA/MLA, full, sliding-window or chunked; linear attention; a Mamba-2
state-space layer; or none) and a feed-forward block (dense, MoE with routed and shared experts, or
none). Every count is evaluated from the derivations of :mod:`inference_math.derivations.layer_mix`,
through the NumPy code generated from them (:mod:`inference_math.presets.counts`).

The reader goes by what fields mean, not by the ``model_type``'s name: each quantity has its known
aliases (:data:`ALIASES`), 0 or null means absent, and a multimodal wrapper's ``text_config`` is the
language model. Every field it uses is a row of one table (:data:`FIELD_GROUPS`: meaning, counts
changed, source; :func:`field_table_markdown`). A field outside the table is classified by what it
could change (:func:`classify`): a structural one (a count, width, list or pattern of layers, heads,
experts, ranks, groups, windows) is refused in one line naming it, a harmless one (a flag, a
fractional number, a string, null) is ignored and noted; ``read_architecture(path, assume=...,
ignore=...)`` reads as if the config held or lacked fields, and the Architecture records what was
assumed and ignored (``assumed``, ``ignored``, ``notes``). A ``model_type`` never seen before is read
by its fields (:attr:`Architecture.read_by_fields`). Rules
that fields cannot give (Llama 4's shared expert, Nemotron-H's squared-ReLU feed-forward) are tied
to their model types, each with its source. The checkpoint's quantization (``quantization_config``
or an ``hf_quant_config.json`` beside the config) is read by
:mod:`inference_math.presets.checkpoint_precision`, module by module.

Conventions: weight matrices are counted (attention projections, experts, shared experts, routers,
embeddings), vectors are not (norms, biases, attention sinks, Mamba's A, D and time-step biases),
nor GPT-2's learned position table (noted); a multimodal model's vision tower is not counted
(noted), only its language model; the active count includes both embeddings, as eq. 21 of Erdil
(2025) does, and ``describe-model`` also reports it without the input embedding;
multi-token-prediction layers are reported beside the total, not in it; a layer whose values reuse
its keys (Gemma 4's attention_k_eq_v) is assumed to cache both, as the transformers cache does;
a layer kind may have heads and widths of its own (Gemma 4's global layers, MiMo-V2-Flash's
sliding layers with their swa_* fields), and values narrower than keys (v_head_dim) are counted at
the mean of the two widths, which is exact for the projections, the cache and attention's FLOPs
(:func:`.architecture.gqa_width`).

What it cannot count it refuses with an InputError of one line naming the ``model_type`` and the
field (DeepSeek-V4's compressed attention, blocks replaced by a linear layer, malformed JSON,
missing or non-numeric fields). What it counts but the full model cannot time yet (MLA with a
direct query projection, block_configs' layers without attention or feed-forward block) is
listed in :attr:`Architecture.untimed`. It never guesses a count.

The modules, from the bottom up; each imports only modules listed before it, so there is no
cycle:

1. ``fields``: the table of fields (known model types, aliases, neutral and refused fields) and
   the typed access to a config's values.
2. ``layer_kinds``: a layer's mixer and feed-forward block, a group of identical layers.
3. ``architecture``: the counts of a read model (imports 2).
4. ``layer_patterns``: per-layer patterns from the fields: attention and MoE blocks, which layers
   hold experts, grouping (imports 1, 2).
4a. ``policy``: unknown fields classified (structural or harmless); assume and ignore applied
   (imports 1).
4b. ``renames``: other families' names (GPT-2's n_embd, ChatGLM's ffn_hidden_size, MLC's
   sliding_window_size, ...) read as the readers' names, with their model code's rules (GPT-2's
   4·n_embd, Qwen (1)'s halved width, multi-query heads) and a wrapper's text_config completed
   with its configuration class's defaults (imports 1).
5. ``quantization``: each layer's weight matrices by module name and the bits the checkpoint
   stores them at (imports 1, 2).
6. ``families``: each family's reader (imports 1, 2, 4).
7. ``reader``: loading, checking and parsing a config into an Architecture (imports 1 to 6,
   4a and 4b).
8. ``describe``: the full model's fields and describe-model's report (imports 3).
9. ``published``: the shipped configs and their published totals (imports 7).

This package re-exports every name other modules, the tests and the book use.
"""

from .architecture import (
    INDEXER_KEY_BYTES,
    INDEXER_SCALE_BLOCK,
    INDEXER_SCALE_BYTES,
    V4_STATE_BYTES,
    Architecture,
)
from .describe import CONTEXTS, describe_architecture, model_fields
from .fields import (
    ALIASES,
    DTYPE_BITS,
    FIELD_GROUPS,
    FIELDS,
    KNOWN_TYPES,
    LAYER_KINDS,
    MAX_FIELD,
    NEUTRAL,
    SSM_FIELDS,
    SSM_TYPES,
    SUPPORTED,
    UNREAD,
    V4_TYPES,
    field_table_markdown,
)
from .layer_kinds import NO_ATTENTION, NO_FFN, Attention, FeedForward, LayerGroup
from .layer_patterns import _heads as _heads  # presets.models names a model's heads with it
from .policy import classify
from .published import FIXTURES, PUBLISHED, V4_CARDS, published_comparison
from .quantization import V4_FP4, layer_matrices
from .quantization import _naming as _naming  # the tests check module names with these two
from .quantization import _v4_matrices as _v4_matrices
from .reader import (
    config_path,
    load_config,
    model_name,
    parse,
    read_architecture,
    reading_options,
)

__all__ = [
    "ALIASES", "CONTEXTS", "DTYPE_BITS", "FIXTURES", "INDEXER_KEY_BYTES", "INDEXER_SCALE_BLOCK",
    "INDEXER_SCALE_BYTES", "KNOWN_TYPES", "LAYER_KINDS", "MAX_FIELD", "NEUTRAL", "NO_ATTENTION",
    "NO_FFN", "PUBLISHED", "SSM_FIELDS", "SSM_TYPES", "SUPPORTED", "UNREAD", "V4_CARDS", "V4_FP4",
    "V4_STATE_BYTES", "V4_TYPES", "Architecture", "Attention", "FeedForward", "LayerGroup",
    "config_path", "describe_architecture", "layer_matrices", "load_config", "model_fields",
    "model_name", "parse", "published_comparison", "read_architecture", "reading_options",
    "FIELD_GROUPS", "FIELDS", "field_table_markdown", "classify",
]
