"""Layer kinds: a layer's mixer (:class:`Attention`), its feed-forward block
(:class:`FeedForward`) and a run of identical layers (:class:`LayerGroup`), with the one-line
description and the JSON-ready dict describe-model prints for each.

Imports nothing of this package.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    # IndexShare: the layer attends to the top k the last layer with its own indexer chose,
    # and holds no indexer weights or keys of its own
    index_shared: bool = False
    # an output gate of one scalar per head (Laguna's g_proj: d_model x n_q, softplus); the
    # per-element gate is m_q = 2
    head_gate: bool = False
    # compressed attention (DeepSeek-V4): (r_c tokens per pooled entry, 0 for none; c_q query
    # rank; rope dims; G_o output groups; r_o their rank; m_hc residual streams). The window
    # is ``window``, the one cache head d_head wide.
    compressed: tuple[int, int, int, int, int, int] | None = None
    # values of their own width (MiMo-V2-Flash: keys 192 wide, values 128): d_head is then the
    # query and key heads' width; None when the values are d_head wide
    d_v: int | None = None

    @property
    def widths(self) -> str:
        """The head width, or the key and value widths when they differ."""
        return f"{self.d_head}" if self.d_v is None else f"{self.d_head} (values {self.d_v})"

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
            heads = f"{self.heads} ({self.n_q} q / {self.n_kv} kv heads of {self.widths})"
        extras = [text for flag, text in ((self.m_q == 2, "output gate"),
                                          (self.head_gate, "per-head output gate"),
                                          (self.m_kv == 1, "K = V"), (self.sinks, "sinks")) if flag]
        if self.indexer and self.index_shared:
            extras.append(f"sparse: the top {self.indexer[2]} of the last layer's own indexer")
        elif self.indexer:
            extras.append(f"sparse: top {self.indexer[2]} by an indexer of {self.indexer[0]} "
                          f"heads of {self.indexer[1]}")
        return f"{heads} {span} attention" + (f" [{', '.join(extras)}]" if extras else "")

    def as_dict(self) -> dict:
        out = {"span": self.span, "heads": self.heads, "n_q": self.n_q, "n_kv": self.n_kv,
               "d_head": self.d_head, "window": self.window}
        if self.d_v is not None and not self.mla:
            out["v_head_dim"] = self.d_v
        if self.m_q != 1:
            out["output_gate"] = True
        if self.head_gate:
            out["per_head_gate"] = True
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
            if self.index_shared:
                out["index_shared"] = True
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
    # the same by block: ((block, bits, parameters per layer), ...), block 'attention' (its
    # router and indexer with it), 'experts' (routed), 'shared' or 'dense' (a dense feed-forward
    # block), so that each block's weights are read at their own bytes
    blocks: tuple[tuple[str, float, float], ...] = ()

    def block_bits(self, block: str, params: float, other_bits: float) -> float:
        """Mean bits per weight of ``params`` parameters of one block of a layer: its quantized
        matrices at their formats, the rest at ``other_bits`` (the checkpoint's dtype)."""
        if not params:
            return other_bits
        stored = [(bits, n) for name, bits, n in self.blocks if name == block]
        quantized = sum(n for _, n in stored)
        return (sum(bits * n for bits, n in stored) + (params - quantized) * other_bits) / params
