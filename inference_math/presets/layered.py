"""Models whose layers are not all alike, for the full model: one uniform piece per layer group.

A Hugging Face config such as DeepSeek-V3's (3 dense layers, then 58 MoE layers with a shared
expert) or Llama 4 Maverick's (chunked and full attention, dense and MoE layers alternating) is
read by :mod:`inference_math.presets.hf_config` into layer groups. The full model's terms are
sums over layers of per-layer terms plus terms paid once per pass (the unembedding, the pipeline
hops), so a model with groups is timed as the sum of its groups, each a uniform :class:`Model` of
its own layers (eq-full-grouped-latency). Each group carries the counts the layer-mix derivations
give it (attention with its router, routed experts, shared experts, KV bytes per token) and the
window its cache is capped at.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

from ..core import names as N
from ..core.validation import InputError, positive_int
from . import hf_config
from .counts import count
from .hf_config.architecture import gqa_width
from .uniform import Model


@dataclass(frozen=True)
class LayerPiece:
    """One layer group as the full model sees it: a uniform shape and the counts of its layers.

    ``shape`` sets the matrices' shapes in the memory-traffic and network terms; the counts below
    (from eq-layers-attn-*, eq-layers-ff-* and eq-layers-kv-*) replace its own parameter counts.
    """

    shape: Model
    attention_params: float  # all layers of the group, attention and the MoE router
    ff_params: float  # routed experts (MoE) or the dense feed-forward block, all layers
    shared_params: float  # shared experts, all layers
    n_shared: int
    d_shared: int
    kv_bytes_per_token: float  # all layers of the group, per token of context
    window: float  # tokens the group's cache holds at most (inf: full attention)
    weight_bytes: float  # bytes per parameter of this group, the mean over its blocks
    # a linear-attention group: its constant state, read and written by every pass, as the cache
    # of this many tokens (d_lin,v), whatever the context (None: a cache that grows)
    fixed_context: float | None = None
    quantized_params: float = 0.0  # of the group's parameters, those in the quantized format
    quantized_bits: float = 16.0
    other_bits: float = 16.0
    # (bits per weight, parameters) of each format the group's quantized weights are stored in,
    # when there are several (FP8 attention beside NVFP4 experts); empty: quantized_bits holds
    formats: tuple[tuple[float, float], ...] = ()
    # sparse top-k attention (DeepSeek-V3.2): the main-cache entries a query attends to (inf:
    # all), and the indexer's key cache per token (all layers; kv_bytes_per_token is the main
    # cache only), FLOPs per query per cached token (one layer) and weights (all layers, in
    # attention_params too): eq-sparse-*
    top_k: float = math.inf
    indexer_bytes_per_token: float = 0.0
    indexer_flops: float = 0.0
    indexer_params: float = 0.0
    # compressed attention (DeepSeek-V4): tokens pooled into one main-cache entry (r_c; the
    # top_k and kv_bytes_per_token above are then per token, k_sel = r_c·k), the plain cache of
    # its sliding window per token (all layers) and that window in tokens, and the compressors'
    # pending state per sequence (all layers): eq-compressed-*
    # whether every GPU of an attention group runs the whole indexer (DeepSeek's), or each
    # scores for its own query heads (block-sparse)
    indexer_replicated: bool = True
    compression: float = 1.0
    window_bytes_per_token: float = 0.0
    window_tokens: float = 0.0
    state_bytes: float = 0.0
    # bytes per parameter of each block where a checkpoint stores them apart (gpt-oss's BF16
    # attention and router beside MXFP4 experts): attention with its router and indexer, the
    # routed experts (or the dense feed-forward block), the shared experts (None: weight_bytes)
    attention_bytes: float | None = None
    ff_bytes: float | None = None
    shared_bytes: float | None = None
    # a sliding window (each query attends to the last `window` tokens; not a chunked layer's
    # window, whose query sees only its own chunk's earlier tokens)
    sliding: bool = False

    @property
    def params(self) -> float:
        return self.attention_params + self.ff_params + self.shared_params

    @property
    def params_by_bits(self) -> tuple[tuple[float, float], ...]:
        """(bits per weight, parameters) of the group's weights: its quantized and other ones."""
        quantized = self.formats or ((self.quantized_bits, self.quantized_params),)
        return (*quantized, (self.other_bits, self.params - self.quantized_params))

    @property
    def active_ff_params(self) -> float:
        return self.ff_params / self.shape.sparsity + self.shared_params


@dataclass(frozen=True)
class LayeredModel:
    """A model whose layer groups differ (attention kind, window, dense or MoE, shared experts).

    Built from a Hugging Face config by :meth:`from_architecture`. The first piece carries the
    embeddings; every piece its own layers. ``weight_bytes`` is the mean over all parameters.
    A linear-attention group (Qwen3.5, Qwen3-Next) reads and writes its constant state (eq-
    layers-state-linear) every pass: it is timed as attention over d_lin,v tokens with
    d_lin,k-wide heads, the state as their cache.

    A Mamba-2 group (Nemotron-H, Nemotron-3) is a linear layer with a constant state too, and the
    existing symbols express it with no new term: its weights (in_proj, conv1d, out_proj; A, D,
    dt biases and the norm are vectors, not counted) in the shape's projections, read once per
    pass; its conv and SSM state (eq-layers-state-linear) as the cache of a fixed context, read
    once per sequence per pass (as a linear-attention state is: its write-back is not counted);
    2 FLOPs per parameter per token plus attention's 4 per cached element, 4·H·P·N per token
    for the state's decay, update and readout. A layer holding only a mixer or only a
    feed-forward block (Nemotron's one block per layer) is a group whose absent block has no
    parameters; the shape's one-wide placeholder adds 2 or 4 d_model-vectors of weight traffic
    per layer, and each such layer still pays both all-reduces and 4 kernel launches of a
    two-block layer (the limit counts neither launches nor, at ω = 1, exposed network time).
    """

    name: str
    pieces: tuple[LayerPiece, ...]
    embedding_params: float
    embedding_bytes: float
    source: str
    architecture: hf_config.Architecture | None = field(default=None, repr=False, compare=False)
    note: str = ""
    # the KV-cache precision the checkpoint states, in bits (None: it states none)
    kv_cache_bits: float | None = None

    @classmethod
    def from_architecture(cls, arch: hf_config.Architecture, name: str | None = None,
                          source: str | None = None, note: str = "") -> LayeredModel:
        """The full model's view of an Architecture; InputError for what it cannot time."""
        if arch.untimed:
            raise InputError(f"{arch.model_type}: {arch.untimed[0]}")
        b_w = arch.dtype_bits
        pieces = []
        for number, (group, layer) in enumerate(zip(arch.groups, arch.layers, strict=True)):
            a, ffn = group.attention, group.ffn
            count = group.count
            router = ffn.n_experts * arch.d_model if ffn.kind == "moe" else 0.0
            routed = layer["routed_experts"] if ffn.kind == "moe" else layer["ff"]
            shared = layer["ff"] - routed - router if ffn.kind == "moe" else 0.0
            attention = layer["attention"] + router
            quantized, b_q = arch.group_quantized(number)  # per layer, as the checkpoint states
            params = attention + routed + shared
            bits = (quantized * b_q + (params - quantized) * b_w) / params
            by_block = {"attention_bytes": group.block_bits("attention", attention, b_w) / 8,
                        "ff_bytes": group.block_bits("experts" if ffn.kind == "moe" else "dense",
                                                     routed, b_w) / 8,
                        "shared_bytes": group.block_bits("shared", shared, b_w) / 8}
            # a block absent from the layer (Nemotron-H's one block per layer) has no parameters
            # (its counts are 0); the shape keeps a one-wide placeholder, which the models'
            # shapes need: 2 (feed-forward) or 4 (attention) d_model-vectors of weights per layer
            n_in = ffn.n_in if ffn.kind != "none" else 1
            shape = {"name": f"{arch.name}, layers of group {number + 1}", "d_model": arch.d_model,
                     "d_ff": ffn.d_ff or 1, "layers": count, "ff_matrix_count": (n_in, 1),
                     "n_experts": ffn.n_experts, "n_active_experts": ffn.top_k,
                     "weight_bytes": bits / 8, "activation_bytes": arch.activation_bytes,
                     "vocab": arch.vocab if number == 0 else 0,
                     "embedding_matrices": 1 if arch.tied else 2,
                     "source": source or f"config.json ({arch.model_type})",
                     "experts_spread": True}
            kv, fixed = count * layer["kv"], None
            if a.mla:
                c_q, c_kv, rope, d_v = a.mla
                # either form, sparse layers too (eq-phys-mla-attention-flops)
                shape.update(n_q_heads=a.n_q, d_head=d_v, mla_kv_dim=c_kv, mla_q_dim=c_q,
                             mla_rope_dim=rope, mla_nope_dim=a.d_head, mla_multi_head=True)
            elif a.span == "mamba":
                # A Mamba-2 layer is a linear layer with a constant state, as a linear-attention
                # layer is: no new symbol. Its G groups of B and C are the key heads, its H heads
                # of P the value heads (g = H/G); d_head is set so that the shape's projections,
                # (2H + 2G)·d_head·d_model weights, hold its counted parameters (in_proj, out_proj,
                # conv1d). Its state (eq-layers-state-linear) is the cache of P·N/d_head tokens,
                # so that attention's 4·d_head·n_q FLOPs per cached token give 4·H·P·N a token:
                # the decay, update and readout of every state element.
                groups, state, heads, head_dim, _ = a.linear
                d_head = max(1, round(layer["attention"]
                                      / (arch.d_model * (2 * heads + 2 * groups))))
                shape.update(n_q_heads=heads, group_size=heads // groups, d_head=d_head)
                fixed = head_dim * state / d_head
                kv = count * layer["state"] / fixed
            elif a.linear:
                # n_v value heads, each a d_k x d_v state updated and read once per token: the
                # arithmetic of attending over d_v tokens with d_k-wide heads
                n_k, d_k, n_v, d_v, _ = a.linear
                shape.update(n_q_heads=n_v, group_size=n_v // n_k if n_v % n_k == 0 else 1,
                             d_head=d_k)
                kv, fixed = count * layer["state"] / d_v, float(d_v)
            elif a.compressed:
                # DeepSeek-V4: one cache head of d_c shared by every query head, as an MLA latent
                # is (c_kv = d_c: its attention FLOPs and its copies under tensor parallelism);
                # d_head is set so that the shape's projections, 3·n_q·d_head·(c_kv + c_q) +
                # (c_kv + c_q)·d_model + d_model·n_q·d_head weights, hold the counted attention
                # weights but the indexer's (read apart, eq-sparse-*)
                c_q = a.compressed[1]
                held = layer["attention"] - layer.get("index_params", 0.0)
                latent = a.d_head + c_q
                d_head = max(1, round((held - latent * arch.d_model)
                                      / (a.n_q * (3 * latent + arch.d_model))))
                shape.update(n_q_heads=a.n_q, d_head=d_head, mla_kv_dim=a.d_head, mla_q_dim=c_q)
            elif a.span == "none":
                # no mixer: one head of width 1 and no cache (a fixed context of 0 tokens, so
                # no attention FLOPs either)
                shape.update(n_q_heads=1, group_size=1, d_head=1)
                fixed = 0.0
            else:
                # values of their own width: the shape's heads at the mean of the key and value
                # widths, at which its projections, cache and attention FLOPs are exact
                # (architecture.gqa_width; the 2-D layout's all-gathered queries, n_q·d_k
                # wide, are then counted n_q·(d_k - d_v)/2 narrower)
                shape.update(n_q_heads=a.n_q, group_size=a.n_q // a.n_kv,
                             d_head=round(gqa_width(a)))
            sparse = {}
            if a.indexer:
                # DeepSeek sparse attention: the indexer's cache is stored beside the main one
                # (layer["kv"] holds both) but read whole, the main cache only at the top k
                index_kv = count * layer["index_kv"]
                kv -= index_kv
                sparse = dict(top_k=layer.get("top_tokens", float(a.indexer[2])),
                              indexer_bytes_per_token=index_kv,
                              indexer_flops=layer["index_flops"],
                              indexer_params=count * layer["index_params"])
            if layer.get("ratio"):
                # its window and compressors' state apart from the pooled cache (eq-compressed-held)
                sparse.update(compression=float(layer["ratio"]),
                              window_bytes_per_token=count * layer["window_kv"],
                              window_tokens=layer["window_tokens"],
                              state_bytes=count * layer["cmp_state"])
            pieces.append(LayerPiece(
                shape=Model(**shape), attention_params=count * attention,
                ff_params=count * routed, shared_params=count * shared,
                n_shared=ffn.n_shared if ffn.kind == "moe" else 0,
                d_shared=(ffn.d_shared or ffn.d_ff) if ffn.kind == "moe" else ffn.d_ff,
                kv_bytes_per_token=kv, window=layer["window"], fixed_context=fixed,
                weight_bytes=bits / 8, quantized_params=count * quantized, quantized_bits=b_q,
                other_bits=b_w, formats=tuple((b, count * n) for b, n in group.quantized),
                sliding=a.span == "sliding", **by_block, **sparse))
        return cls(name=name or arch.name, pieces=tuple(pieces),
                   embedding_params=arch.embedding_params, embedding_bytes=arch.embedding_bits / 8,
                   kv_cache_bits=arch.kv_cache_bits,
                   source=source or f"config.json ({arch.model_type})", architecture=arch,
                   note=note or "read from a Hugging Face config.json")

    # --- what the search and the CLI read, as for a uniform Model -------------------------------
    @property
    def d_model(self) -> int:
        return self.pieces[0].shape.d_model

    @property
    def layers(self) -> int:
        return sum(piece.shape.layers for piece in self.pieces)

    @property
    def n_experts(self) -> int:
        return max(piece.shape.n_experts for piece in self.pieces)

    @property
    def n_active_experts(self) -> int:
        return max(piece.shape.n_active_experts for piece in self.pieces)

    @property
    def sparsity(self) -> int:
        """The largest s of the groups: it sets the batch sizes the search tries."""
        return max(piece.shape.sparsity for piece in self.pieces)

    @property
    def is_mla(self) -> bool:
        return any(piece.shape.is_mla for piece in self.pieces)

    @cached_property
    def total_params(self) -> float:
        return sum(piece.params for piece in self.pieces) + self.embedding_params

    @cached_property
    def active_params(self) -> float:
        """Both embeddings counted in full, as eq-moe-active-params (paper eq. 21) does."""
        return sum(piece.attention_params + piece.active_ff_params for piece in self.pieces) \
            + self.embedding_params

    @cached_property
    def weights_bytes(self) -> float:
        return sum(piece.params * piece.weight_bytes for piece in self.pieces) \
            + self.embedding_params * self.embedding_bytes

    @property
    def weight_bytes(self) -> float:
        """Mean bytes per parameter."""
        return self.weights_bytes / self.total_params

    @property
    def weight_bits(self) -> int:
        """The bits that choose the GPU's FLOP/s: those of the weights most parameters are stored
        in (gpt-oss's MXFP4 experts: 4; DeepSeek-V3's FP8 blocks: 8), rounded."""
        by_bits: dict[int, float] = {}
        for piece in self.pieces:
            for bits, params in piece.params_by_bits:
                by_bits[round(bits)] = by_bits.get(round(bits), 0.0) + params
        return max(by_bits, key=by_bits.get)

    @property
    def kv_bytes_per_token(self) -> float:
        """Bytes one token adds while every window is still open (linear-attention states are
        constant: :attr:`state_bytes_per_sequence`)."""
        return sum(piece.kv_bytes_per_token + piece.indexer_bytes_per_token
                   for piece in self.pieces if piece.fixed_context is None)

    @property
    def state_bytes_per_sequence(self) -> float:
        """Constant bytes per sequence: linear-attention states; a compressed group's full window
        and its compressors' pending state (as Architecture.state_bytes_per_sequence counts
        them)."""
        return sum(piece.kv_bytes_per_token * piece.fixed_context for piece in self.pieces
                   if piece.fixed_context is not None) \
            + sum(piece.window_bytes_per_token * piece.window_tokens + piece.state_bytes
                  for piece in self.pieces)

    def kv_bytes_at(self, context: float) -> float:
        """Cache bytes of one sequence of ``context`` tokens: windows cap their groups' caches,
        linear-attention states are constant; a compressed group holds eq-compressed-held."""
        return sum(piece.kv_bytes_per_token * piece_context(piece, context)
                   + piece.indexer_bytes_per_token * context
                   + piece.window_bytes_per_token * min(context, piece.window_tokens)
                   + piece.state_bytes for piece in self.pieces)

    @property
    def parallel_attention(self) -> bool:
        return False

    def describe_groups(self) -> list[str]:
        out = []
        for piece, group in zip(self.pieces, self.architecture.groups if self.architecture
                                else [None] * len(self.pieces), strict=True):
            text = f"{piece.shape.layers} layers"
            if group is not None:
                text += f": {group.attention.describe()} + {group.ffn.describe()}"
            out.append(text)
        return out


def piece_context(piece: LayerPiece, context: float) -> float:
    """The tokens of cache a group holds at ``context``: the context capped at its window, or
    the fixed context of a linear-attention state."""
    if piece.fixed_context is not None:
        return piece.fixed_context
    return min(context, piece.window)


def from_hf_config(path) -> Model | LayeredModel:
    """A Hugging Face config as the full model times it: a uniform Model when its layers map
    onto one exactly (hf_config.model_fields), else a LayeredModel (InputError for what neither
    represents, naming the feature)."""
    arch = hf_config.read_architecture(path)
    try:
        return Model(**hf_config.model_fields(arch))
    except InputError:
        return LayeredModel.from_architecture(arch)


def block_sparse(model: LayeredModel | hf_config.Architecture, block: int,
                 blocks: int) -> LayeredModel:
    """``model`` with block-sparse attention in every full-attention group (eq-sparse-block-*):
    each query scores one mean key per ``block`` tokens and KV head, and attends to the tokens
    of its best ``blocks`` blocks. The summaries are rule 9's indexer keys; there are no indexer
    weights. InputError for a model with no full-attention group of separate KV heads (MLA's
    latent, windows and linear layers are not block-sparse here)."""
    positive_int("block", block)
    positive_int("blocks", blocks)
    if isinstance(model, hf_config.Architecture):
        model = LayeredModel.from_architecture(model)
    pieces, changed = [], 0
    for piece in model.pieces:
        shape = piece.shape
        dense = (piece.fixed_context is None and math.isinf(piece.window)
                 and math.isinf(piece.top_k) and not shape.is_mla and piece.compression == 1)
        if not dense:
            pieces.append(piece)
            continue
        values = {N.n_q: shape.n_q_heads, N.g: shape.group_size, N.d_head: shape.head_dim,
                  N.p_act: shape.activation_bytes, N.blk_sz: block}
        pieces.append(replace(
            piece, top_k=float(block * blocks),
            indexer_bytes_per_token=shape.layers * count("block_summary_bytes", values),
            indexer_flops=count("block_scoring_flops", values), indexer_replicated=False))
        changed += 1
    if not changed:
        raise InputError(f"{model.name} has no full-attention group with separate KV heads to "
                         "make block-sparse")
    return replace(model, name=f"{model.name}, block-sparse ({blocks} x {block} tokens)",
                   pieces=tuple(pieces))


MTP_DRAFTER = "mtp"  # the name --drafter takes for a model's own multi-token-prediction module


def mtp_drafter(model) -> LayeredModel:
    """A model's own multi-token-prediction module as a drafter for speculative decoding
    (eq-spec-latency): its one MTP layer (DeepSeek-V3's ``num_nextn_predict_layers``), stored as
    the model's layers of its kind, run once per drafted token with the model's embeddings and
    output head, as DeepSeek's engines chain it. InputError if the model states no MTP layer."""
    arch = getattr(model, "architecture", None)
    if arch is None or not arch.n_mtp or arch.mtp_layer is None:
        raise InputError(f"{getattr(model, 'name', model)} has no multi-token-prediction layer "
                         f"(num_nextn_predict_layers) to draft with")
    one = replace(arch.mtp_layer, count=1)
    # stored as the model's own layers of its kind are (DeepSeek-V3's FP8 blocks)
    kin = next((g for g in arch.groups if (g.attention, g.ffn) == (one.attention, one.ffn)), None)
    if kin is not None and not one.quantized:
        one = replace(one, quantized=kin.quantized, blocks=kin.blocks)
    module = replace(arch, name=f"{arch.name} MTP module", groups=(one,), n_mtp=0,
                     mtp_layer=None)
    return LayeredModel.from_architecture(module, name=f"{model.name} (MTP module)",
                                          note="the model's own multi-token-prediction layer")
