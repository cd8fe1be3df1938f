"""The counts of a read model: :class:`Architecture` evaluates each layer group's parameters,
cache and state from the derivations (through :mod:`inference_math.presets.counts`), and the
model's totals, cache at a context and weight bytes; DeepSeek sparse attention's indexer and
DeepSeek-V4's compressed attention are counted here too.

Imports :mod:`.layer_kinds` of this package.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from ...core import names as S
from ..counts import count
from .layer_kinds import Attention, FeedForward, LayerGroup


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
    # what the reading assumed and ignored (policy.apply_overrides, policy.check_unknown):
    # (field, value as JSON) the user assumed; fields ignored (unknown and harmless, or as
    # asked); one line each of what was assumed or ignored and why
    assumed: tuple[tuple[str, str], ...] = ()
    ignored: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

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
            shape.update({S.n_q: a.n_q, S.n_kv: a.n_kv, S.d_head: gqa_width(a), S.m_q: a.m_q,
                          S.m_kv: a.m_kv})
            attention, kv, state = (_eval("attention_params_gqa", shape),
                                    _eval("kv_bytes_gqa", shape), 0.0)
            if a.head_gate:
                # one gate per head: g_proj, d_model x n_q, beside eq-layers-attention-gqa's
                # projections (Laguna's modeling_laguna.py)
                attention += self.d_model * a.n_q
        index = {}
        if a.indexer and a.index_shared:
            # IndexShare: the top k of an earlier layer's indexer, no weights, keys or scoring
            index = {"index_params": 0.0, "index_kv": 0.0, "index_flops": 0.0}
        elif a.indexer:
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


def gqa_width(a: Attention) -> float:
    """The head width at which eq-layers-attention-gqa and eq-layers-kv-gqa count a layer whose
    values (d_v) are narrower or wider than its queries and keys (d_head): their mean.

    Each count pairs one key-width term with one value-width term, so the mean is exact: the
    query and output projections, n_q·(d_k + d_v)·d_model = 2·n_q·d̄·d_model; the key and value
    projections, n_kv·(d_k + d_v)·d_model = 2·n_kv·d̄·d_model; the cache, n_kv·(d_k + d_v)·p_act
    = 2·n_kv·d̄·p_act; and attention's FLOPs per cached token, 2·n_q·d_k for the scores plus
    2·n_q·d_v for the weighted values = 4·n_q·d̄. It holds for m_q = 1 and m_kv = 2 only (an
    output gate is as wide as the values, shared keys and values are one width): the reader
    refuses the others."""
    if a.d_v is None:
        return a.d_head
    if a.m_q != 1 or a.m_kv != 2:
        raise ValueError("values of their own width are counted without an output gate or "
                         "shared keys and values")
    return (a.d_head + a.d_v) / 2


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
