"""Per-layer patterns read from the fields: the attention block of a layer (:func:`_gqa`), the
MoE block (:func:`_moe_block`), which layers hold it (:func:`_is_moe`), each layer's
feed-forward block (:func:`_ffn_layers`), and identical layers gathered into groups
(:func:`_group`).

Imports :mod:`.fields` and :mod:`.layer_kinds` of this package.
"""

from __future__ import annotations

from .fields import ALIASES, _Fields, _short
from .layer_kinds import Attention, FeedForward, LayerGroup


def _heads(n_q: int, n_kv: int) -> str:
    return "MHA" if n_kv == n_q else "MQA" if n_kv == 1 else "GQA"


def _gqa(f: _Fields, span: str, window: int | None, *, n_kv: int | None = None,
         d_head: int | None = None, n_q: int | None = None, d_v: int | None = None,
         **extra) -> Attention:
    """A GQA/MHA/MQA block of the config's heads, or of a layer's own: ``n_q`` query heads (as
    num_attention_heads_per_layer gives them), ``n_kv`` key-value heads, ``d_head`` the query and
    key width, ``d_v`` the value width (None: d_head), each the config's when None."""
    base = f.int("num_attention_heads")
    n_q = base if n_q is None else n_q
    n_kv = f.int("num_key_value_heads", base) if n_kv is None else n_kv
    if n_q % n_kv:
        raise f.error(f"num_key_value_heads={n_kv} does not divide num_attention_heads={n_q}")
    if d_head is None:
        d_model = f.int("hidden_size")
        d_head = f.int("head_dim", d_model // base if d_model % base == 0 else ...)
    if d_v is not None and d_v != d_head:
        if extra.get("m_q", 1) != 1 or extra.get("m_kv", 2) != 2:
            raise f.error(f"values {d_v} wide beside keys {d_head} wide are read without an "
                          "output gate or shared keys and values only")
        if (d_head + d_v) % 2:
            raise f.error(f"values {d_v} wide beside keys {d_head} wide: an odd sum of widths "
                          "is not read (the full model times their mean width)")
        return Attention(span, _heads(n_q, n_kv), n_q, n_kv, d_head, window, d_v=d_v, **extra)
    return Attention(span, _heads(n_q, n_kv), n_q, n_kv, d_head, window, **extra)


def _group(layers: list[tuple], stored: list[tuple]) -> tuple[LayerGroup, ...]:
    """Identical layers (same blocks, same storage) gathered into groups, in order of first
    appearance. ``stored``: each layer's ((block, bits, parameters), ...)."""
    counts: dict[tuple, int] = {}
    for layer, storage in zip(layers, stored, strict=True):
        key = (*layer, storage)
        counts[key] = counts.get(key, 0) + 1
    return tuple(LayerGroup(n, a, f, by_bits(q), q) for (a, f, q), n in counts.items())


def by_bits(blocks: tuple) -> tuple[tuple[float, float], ...]:
    """((bits, parameters), ...) of ((block, bits, parameters), ...), summed over blocks."""
    out: dict[float, float] = {}
    for _, bits, params in blocks:
        out[bits] = out.get(bits, 0.0) + params
    return tuple(sorted(out.items()))


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
    which = [i >= first_dense and i not in only_mlp and by_freq[i] and (i + 1) % step == 0
             and (i + 1) % interleave == 0 and (listed is None or i in listed) for i in range(n)]
    if not f.has("mlp_layer_types"):
        return which
    kinds = f.raw("mlp_layer_types")
    if not isinstance(kinds, list) or len(kinds) != n or \
            not all(k in ("dense", "sparse") for k in kinds):
        raise f.error(f"mlp_layer_types must list {n} entries of dense or sparse, got "
                      f"{_short(kinds)}")
    listed_kinds = [k == "sparse" for k in kinds]
    if listed_kinds != which and any(f.has(name) for name in _MOE_LAYER_FIELDS):
        i = next(i for i, (a, b) in enumerate(zip(listed_kinds, which, strict=True)) if a != b)
        raise f.error(f"mlp_layer_types[{i}]={kinds[i]!r} disagrees with "
                      f"{', '.join(n for n in _MOE_LAYER_FIELDS if f.has(n))}")
    return listed_kinds


#: The fields other than mlp_layer_types that say which layers hold the MoE block.
_MOE_LAYER_FIELDS = ("first_k_dense_replace", "mlp_only_layers", "moe_layer_freq",
                     "decoder_sparse_step", "interleave_moe_layer_step", "moe_layers")


def _ffn_layers(f: _Fields, n: int, n_in: int = 2) -> tuple[list[FeedForward], list[str]]:
    moe = _moe_block(f, n_in)
    if moe is None:
        return [FeedForward("dense", f.int("intermediate_size"), n_in=n_in)] * n, []
    which = _is_moe(f, n)
    features = []
    if not all(which):
        # MiniMax-M3: the dense layers' own width beside the experts' intermediate_size
        width = f.int("dense_intermediate_size", 0, minimum=0) or f.int("intermediate_size")
        dense = FeedForward("dense", width, n_in=n_in)
        features.append("mixed dense and MoE layers")
    else:
        dense = None
    if moe.n_shared:
        features.append("shared experts")
    return [moe if m else dense for m in which], features
