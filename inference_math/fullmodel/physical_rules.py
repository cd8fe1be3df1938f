"""The book's physical rules: the full model's terms as today's engines incur them.

The reference code of Erdil (2025) keeps several simplifications that are harmless for the
paper's dense models on H100 nodes and wrong past them. The paper's reproductions keep them
(:mod:`inference_math.fullmodel.full_model`, each an erratum box in the book); every model read
from a config, and the curves 'physical' and 'limit', use these terms instead:

1. A token's expert outputs are summed where they are computed: the feed-forward all-reduce
   carries one d_model vector per token, not one per active expert (eq-phys-network-time).
2. Expert parallelism switches on with the tokens in flight, b_μ·q, not the sequences
   (eq-phys-expert-parallel): one long prompt is many tokens.
3. The KV cache is held once per KV head: a tensor-parallel attention group wider than the
   KV heads (MLA: one latent) holds every entry N_TP^attn·g/n_q times (eq-phys-kv-copies),
   in HBM and in the bytes read.
4. An all-to-all pushes each GPU's inter-node share through its own NIC (eq-coll-all-to-all),
   and moves only what is bound outside the sender's attention group: the local share is
   removed once, and with tensor-parallel attention (σ = 1) no all-to-all runs at all.
5. The instance holds the whole batch's cache, not one micro-batch's (eq-phys-memory-need).
6. The input embedding is a lookup (no FLOPs), and a pass computes logits only for the q_LM
   tokens that need them: q in decode and verification, 1 in prefill (eq-phys-flop-time).
   Attention's scores and values over the cache run at the cache's precision (BF16 unless the
   cache is 8-bit), every matmul by weights at the weights'.
7. The attention scale-down σ is attention's data-parallel degree: σ groups of N_TP/σ GPUs,
   each attending for its own b_μ/σ sequences with a full copy of attention's weights and
   its own sequences' cache; at σ = N_TP attention is data-parallel, with no all-reduce
   (eq-phys-memory-time, eq-phys-network-time). Shared experts and dense feed-forward blocks
   follow attention's layout (every GPU reads them with data-parallel attention, and they are
   all-reduced within the group only) and the expert dispatch travels at
   p_disp bytes per element (FP8 where the weights are 8-bit or less).
8. A second micro-batch hides the share ω of the network time behind memory and arithmetic
   (eq-phys-forward-latency): ω = 0 for the curve 'physical', 1 for the limit.
9. A sparse-attention layer (DeepSeek-V3.2's) reads its indexer's key cache for the whole
   context and only min(ℓ, k_sel) entries of its main cache per sequence (for a pass of q > 1
   tokens this is a lower bound: the queries' selections may differ), attends over the mean
   of eq-sparse-mean-read, scores every cached token (eq-sparse-indexer-flops) and stores both
   caches (eq-sparse-indexer-cache); a dense layer is the case k_sel = ∞, W_I = M_I = F_I = 0.
   The indexer is replicated on every GPU of an attention group, as the engines run it
   (DeepSeek's reference code and vLLM's and SGLang's replicated linear layers: every rank
   selects the same tokens): each GPU holds and reads its weights, projects its group's tokens
   and scores their whole cache. Block-sparse attention is the same terms with one mean key per
   block as the indexer's key (eq-sparse-block-*), no indexer weights, and the scoring split
   with the query heads (ξ_I = 0).
10. A compressed-attention layer (DeepSeek-V4's) holds and reads its last ℓ_W tokens as plain
   entries and one entry per r_c tokens beyond them (eq-compressed-held, eq-compressed-read);
   with an indexer (rule 9, over the pooled entries) a query attends to the k_sel/r_c entries
   of its top k_sel tokens, without one to all of them; each attended entry costs attention's
   4·d_c·n_q FLOPs. Its compressors' pending state (eq-compressed-state) is held and read once
   per r_c tokens; the limit counts none of it, since a running softmax can pool a window in
   a few vectors. The one cache head is held whole by every GPU of an attention group, as an
   MLA latent is (eq-phys-kv-copies).
11. An MLA layer attends in the cheaper of its two forms (eq-phys-mla-attention-flops):
   absorbed, 2·(d_c + d_R) + 2·d_c FLOPs per head and cached entry (the paper's 4·d_c leaves out
   the rotary key), or as multi-head attention over keys and values up-projected from the
   latents, 2·(d_nope + d_R) + 2·d_head per head and token pair after up-projecting the ℓ cached
   latents: decode runs absorbed, a prompt multi-head, as vLLM and SGLang run MLA. A sparse
   layer (rule 9) attends to its selection absorbed, to every token multi-head.
12. An MLA layer reads the attention weights it holds, its counted N_attn/L (the router's
   included, the indexer's read apart by rule 9), not the reference code's shapes, which
   up-project queries, keys and values each from both latents, (n_q + 2·n_q/g)·d_head·(d_c +
   d_c'): for DeepSeek-V3 232.8M weights a layer where it holds 187.1M and a router of 1.8M
   (eq-phys-memory-time). A layer of any other kind reads what its shapes hold and its MoE
   router.
13. Each block is read and held at the bytes its checkpoint stores it in: attention with its
   router and indexer at p_attn, the shared experts at p_sh, the routed experts or a dense
   block at p (gpt-oss: BF16 attention beside MXFP4 experts), and attention's projections
   multiply at their precision's FLOP/s, C_proj; the paper's rules keep one p, the layers'
   mean (eq-phys-memory-time, eq-phys-memory-need, eq-phys-flop-time).
14. A query of a sliding-window layer attends to at most the window, its pass's own tokens
   among them: eq-sparse-mean-read with k_sel = W (a prompt's chunk of 4,096 tokens in a
   window of 128: 126 tokens a query, not 2,048).

Each term is a SymPy expression in the registry's symbols, composed into branches exactly as
the reference terms are (:func:`inference_math.fullmodel.terms.branch_terms`).
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_mu,
    c_kv,
    ctx,
    ctx_win,
    d_ff,
    d_ff_shared,
    d_head,
    d_model,
    d_nope,
    d_rope,
    f_idx,
    flop_mla,
    flops,
    flops_attn,
    flops_proj,
    g,
    hbm_bw,
    k_top,
    kv_bytes,
    kv_copies,
    kv_layer,
    mem_need,
    n_active,
    n_attn,
    n_ep,
    n_experts,
    n_ff,
    n_ff_in,
    n_ff_out,
    n_gpu,
    n_layers,
    n_nodes_c,
    n_pp,
    n_q,
    n_sh,
    n_tp,
    n_unembed,
    omega_net,
    p,
    p_act,
    p_attn,
    p_disp,
    p_emb,
    p_sh,
    q_len,
    q_lm,
    r_cmp,
    s,
    sigma_attn,
    t_flop,
    t_fwd,
    t_kernel,
    t_mem,
    t_net,
    vocab,
    w_idx,
    xi_ep,
    xi_idx,
    xi_mha,
)
from ..derivations import compressed_attention, sparse_attention
from . import full_model as fm

RW, AR, A2A, P2P = fm.RW, fm.AR, fm.A2A, fm.P2P
N_TP_ATTN, N_TP_FF, F_USED = fm.N_TP_ATTN, fm.N_TP_FF, fm.F_USED


@derivation("eq-phys-expert-nodes", "this book (physical rules), from Erdil (2025), reference code")
def expert_nodes_eq() -> sp.Eq:
    """Nodes an MoE's all-to-all spans with experts placed round the whole expert-parallel group
    (eq-phys-expert-nodes): a node per rank of min(n_active, N_EP), at most the group's
    ⌈N_EP/n_node⌉; the reference code's packing (eq-full-expert-nodes) at ξ_EP = 0, this at 1."""
    ranks = sp.Min(n_active, n_ep)
    return sp.Eq(n_nodes_c, fm.expert_nodes(ranks, spread=True).subs(xi_ep, 1))


@derivation("eq-phys-kv-copies", "this book (physical rules), from Pope et al. (2023)")
def kv_copies_eq(mla: bool = False) -> sp.Eq:
    """Copies of each KV-cache entry an attention group holds (eq-phys-kv-copies).

    Tensor parallelism splits the n_q/g KV heads over the N_TP^attn GPUs of an attention group;
    a group wider than the heads replicates each head on N_TP^attn·g/n_q GPUs. MLA caches one
    latent per token, shared by every head: every GPU of the group holds all of it.
    """
    heads = 1 if mla else n_q / g
    return sp.Eq(kv_copies, sp.Max(1, N_TP_ATTN / heads))


def cache_read_bytes() -> sp.Expr:
    """Cache bytes one sequence's pass reads, per copy: eq-compressed-read with the group's
    caches (the main cache at min(ℓ, k_sel) tokens, the indexer's keys at all ℓ, a compressed
    layer's window and its compressors' state; a dense layer: M_KV·ℓ)."""
    return compressed_attention.read_bytes().rhs.subs(kv_layer, kv_bytes)


def cache_stored_bytes() -> sp.Expr:
    """Cache bytes one sequence holds, per copy: eq-compressed-held with the group's caches."""
    return compressed_attention.held_bytes().rhs.subs(kv_layer, kv_bytes)


@derivation("eq-phys-mla-attention-flops",
            "this book (physical rules), from DeepSeek-AI (2024), DeepSeek-V2, sec. 2.1, and "
            "SGLang (2025), MHA prefill of MLA models")
def mla_attention_flops(entries: sp.Expr | None = None) -> sp.Eq:
    """FLOPs of one MLA layer's attention for one sequence's pass of q tokens after ℓ cached
    ones (eq-phys-mla-attention-flops): the scores and the values, in the cheaper of two forms.

    *Absorbed* (W^UK folded into the query, W^UV into the output): every head scores each
    cached entry over its d_c-wide latent and its d_R-wide rotary key, 2·(d_c + d_R) FLOPs, and
    sums the latents, 2·d_c. *Multi-head* (the latents up-projected to keys and values): a
    head scores over d_nope + d_R and sums d_head-wide values, 2·(d_nope + d_R) + 2·d_head per
    entry, after up-projecting each of the ℓ cached latents to the n_q heads' keys and values,
    2·d_c·n_q·(d_nope + d_head) FLOPs apiece (the pass's own q tokens are up-projected by its
    projections either way: their weights are the same matrices). Decode (q small, ℓ large)
    runs absorbed and a prompt (ℓ = 0) multi-head, as SGLang and vLLM run MLA; a pass takes the
    cheaper. (vLLM chooses by phase, not by cost: a prefill chunk of fewer than about 170 tokens
    over a long cache it runs multi-head, at more FLOPs than this counts.) The absorbed form
    attends over ``entries`` (default: the causal mean ℓ + (q − 1)/2; a sparse layer's
    selection, eq-sparse-mean-read), the multi-head form over every cached token, as SGLang
    runs DeepSeek-V3.2's prompts under 2,048 tokens (masked multi-head attention); a layer
    without up-projections (ξ_MHA = 0: DeepSeek-V4's compressed attention, rule 10) runs
    absorbed only.
    """
    forms = mla_forms(entries)
    return sp.Eq(flop_mla, sp.Piecewise((sp.Min(forms["absorbed"], forms["multi_head"]),
                                         xi_mha > 0), (forms["absorbed"], True)))


def mla_forms(entries: sp.Expr | None = None) -> dict[str, sp.Expr]:
    """The two forms of eq-phys-mla-attention-flops, 'absorbed' and 'multi_head': FLOPs of one
    MLA layer's attention for one sequence's pass (see :func:`mla_attention_flops`), and
    'up_projection', the multi-head form's up-projection of the ℓ cached latents (a matmul by
    weights, inside 'multi_head')."""
    mean = fm.mean_context()
    seen = mean if entries is None else entries
    up = 2 * c_kv * n_q * (d_nope + d_head) * ctx
    return {"absorbed": q_len * n_q * (2 * (c_kv + d_rope) + 2 * c_kv) * seen,
            "multi_head": q_len * n_q * (2 * (d_nope + d_rope) + 2 * d_head) * mean + up,
            "up_projection": up}


def attention_flops(mla: bool = False) -> sp.Expr:
    """FLOPs of attending over the mean selected entries of eq-sparse-mean-read (eq-full-flops'
    4·d_head·n_q per layer, query and cached entry; with MLA eq-phys-mla-attention-flops), plus
    the indexer's scoring of every cached token (eq-sparse-indexer-flops per query and entry,
    at the causal mean ℓ + (q − 1)/2) on each of the N_TP^attn GPUs of the attention group (rule
    9), and its projections' 2 FLOPs per weight and token on the group's other GPUs."""
    parts = attention_flop_parts(mla)
    return parts["cache"] + parts["weights"]


def attention_flop_parts(mla: bool = False) -> dict[str, sp.Expr]:
    """:func:`attention_flops` split by the rate they run at (eq-phys-flop-time): 'cache', the
    scores and values over the cached entries, at the cache's precision; 'weights', the
    indexer's scoring and projections and an MLA layer's up-projection of its cached latents,
    at the weights'. Their sum is eq-phys-mla-attention-flops' choice of form."""
    selected = sparse_attention.mean_read().rhs
    # a compressed layer: its selected tokens are pooled r_c to an entry; its window is read as
    # a top-ℓ_W of plain entries (rule 10)
    window = sparse_attention.mean_read().rhs.subs(k_top, ctx_win)
    entries = selected / r_cmp + window
    # the scoring runs on every GPU of the group (DeepSeek's replicated indexer, ξ_I = 1) or
    # split with the query heads (block-sparse, ξ_I = 0)
    scorers = xi_idx * N_TP_ATTN + 1 - xi_idx
    indexer = b * q_len * (scorers * n_layers * f_idx * fm.mean_context()
                           + (N_TP_ATTN - 1) * 2 * w_idx)
    if mla:
        forms = mla_forms(entries)
        # the form eq-phys-mla-attention-flops takes (absorbed on a tie, as its Min)
        multi_head = sp.And(xi_mha > 0, forms["multi_head"] < forms["absorbed"])
        over_cache = sp.Piecewise((forms["multi_head"] - forms["up_projection"], multi_head),
                                  (forms["absorbed"], True))
        up = sp.Piecewise((forms["up_projection"], multi_head), (0, True))
        return {"cache": b * n_layers * over_cache, "weights": b * n_layers * up + indexer}
    full = fm.attention_flops(mla)
    per_entry = sp.cancel(full / (n_layers * fm.mean_context() * b * q_len))  # 4·d·n_q
    return {"cache": b * q_len * n_layers * per_entry * entries, "weights": indexer}


def shape_weights(mla: bool = False) -> sp.Expr:
    """Weights of one layer's attention as :func:`~.full_model.attention_bytes` shapes them,
    the m·k of each of its matrices (eq-full-matmul-bytes)."""
    return fm.attention_bytes(mla).replace(RW, lambda m, k, n, tp, *weight: m * k)


def at_bytes(expr: sp.Expr, weight_bytes: sp.Expr) -> sp.Expr:
    """``expr`` with each matmul's weights read at ``weight_bytes`` per parameter, not p: the
    fifth argument of M_rw (eq-full-matmul-bytes with p = ``weight_bytes``)."""
    return expr.replace(RW, lambda m, k, n, tp, *weight: RW(m, k, n, tp, weight_bytes))


def attention_weight_bytes(mla: bool = False) -> sp.Expr:
    """One layer's attention-projection traffic with its weights at p_attn, the bytes a
    checkpoint stores attention in (gpt-oss's BF16 beside MXFP4 experts)."""
    return at_bytes(fm.attention_bytes(mla), p_attn)


def held_weights_correction(mla: bool = False) -> sp.Expr:
    """Bytes one layer's attention reads beyond its shapes' weights (rule 12): a layer reads
    its counted weights, (N_attn − W_I)/L, in place of the shapes' (an MLA layer's latents;
    the MoE router, which the shapes leave out; 0 where they agree)."""
    return p_attn * ((n_attn - w_idx) / n_layers - shape_weights(mla))


def attention_bytes_dp(mla: bool = False) -> sp.Expr:
    """Attention-projection traffic of one layer in σ data-parallel groups, each multiplying its
    own b_μ·q/σ tokens by a full copy of the weights sharded over N_TP/σ GPUs (an MLA layer's
    weights those it holds, rule 12)."""
    per_group = (attention_weight_bytes(mla)
                 + held_weights_correction(mla)).subs(b_mu, b_mu / sigma_attn)
    return sigma_attn * per_group


def _rw_floor(m, k, n, tp, weight=p):
    """A lower bound of eq-full-matmul-bytes over every tp ≥ 1 and every split: the weights once,
    the inputs and outputs once (t_1 ≥ 1 and tp/t_1 ≥ 1)."""
    return m * k * weight + n * (m + k) * p_act


def shared_bytes() -> sp.Expr:
    """The shared experts' traffic of one layer: they follow attention's layout, each of the σ
    groups reading its own copy, sharded over its N_TP/σ GPUs, for its own b_μ·q/σ tokens
    (with data-parallel attention every GPU reads the whole shared expert)."""
    return n_sh * (n_ff_in + n_ff_out) * sigma_attn * RW(d_model, d_ff_shared,
                                                         fm.tokens() / sigma_attn, N_TP_ATTN, p_sh)


def shared_bytes_floor() -> sp.Expr:
    """A lower bound of :func:`shared_bytes` over σ: one copy, its inputs and outputs once."""
    return n_sh * (n_ff_in + n_ff_out) * _rw_floor(d_model, d_ff_shared, fm.tokens(), 1, p_sh)


@derivation("eq-phys-memory-time", "this book (physical rules), from Erdil (2025), eq. 34")
def memory_time(mla: bool = False, shared: bool = True, moe: bool = True) -> sp.Eq:
    """Memory time of one forward pass under the physical rules (eq-phys-memory-time).

    As eq-full-memory-time, with attention's weights read by each of its σ data-parallel
    groups, the cache read once per copy (eq-phys-kv-copies) and the shared experts, and a
    dense model's feed-forward block, read as attention's weights are, once per group.
    """
    return sp.Eq(t_mem, sum(memory_parts(mla, shared, moe).values()))


def dense_ff_bytes() -> sp.Expr:
    """A dense feed-forward block's traffic of one layer, in attention's layout: each of the σ
    groups reads its copy, sharded over N_TP/σ GPUs, for its own b_μ·q/σ tokens."""
    return (n_ff_in + n_ff_out) * sigma_attn * RW(d_model, d_ff, fm.tokens() / sigma_attn,
                                                  N_TP_ATTN)


def memory_parts(mla: bool = False, shared: bool = True, moe: bool = True) -> dict[str, sp.Expr]:
    """eq-phys-memory-time split into its σ-dependent 'attention' part and the 'rest'."""
    per_gpu = n_pp / (n_gpu * hbm_bw)
    copies = kv_copies_eq(mla).rhs
    attention = (n_layers * attention_bytes_dp(mla) + copies * cache_read_bytes() * b_mu
                 + sigma_attn * N_TP_ATTN * p_attn * w_idx)
    if moe:
        if shared:
            attention += n_layers * shared_bytes()
        rest = n_layers * fm.ff_bytes(shared=False) + p_emb * vocab * d_model
    else:
        attention += n_layers * dense_ff_bytes()
        rest = p_emb * vocab * d_model
    return {"attention": per_gpu * attention, "rest": per_gpu * rest}


def memory_floor(mla: bool = False, shared: bool = True, moe: bool = True) -> sp.Expr:
    """A lower bound of eq-phys-memory-time over every σ in [1, N_TP]: attention's weights read
    once and its activations once (:func:`_rw_floor`), the cache read once."""
    per_gpu = n_pp / (n_gpu * hbm_bw)
    attention = attention_weight_bytes(mla).replace(RW, _rw_floor) + held_weights_correction(mla)
    if moe:
        ff = fm.ff_bytes(shared=False) + (shared_bytes_floor() if shared else 0)
    else:
        ff = (n_ff_in + n_ff_out) * _rw_floor(d_model, d_ff, fm.tokens(), 1)
    return per_gpu * (n_layers * (attention + ff) + cache_read_bytes() * b_mu
                      + sigma_attn * N_TP_ATTN * p_attn * w_idx + p_emb * vocab * d_model)


@derivation("eq-phys-flop-time", "this book (physical rules), from Erdil (2025), eq. 33")
def flop_time(mla: bool = False, shared: bool = True) -> sp.Eq:
    """Arithmetic time under the physical rules (eq-phys-flop-time).

    Every GPU shares the work: data-parallel attention groups split the sequences, not repeat
    them (no σ factor). The input embedding is a lookup; the output head multiplies the
    q_LM tokens of each sequence that need logits (n_vocab·d_model weights each). Attention's
    scores and values over the cache run at the cache's precision, C_attn (a 16-bit cache
    beside 8-bit weights: the BF16 rate, as FlashAttention and FlashMLA run it); attention's
    projections at their weights' precision, C_proj (rule 13: gpt-oss's BF16 attention beside
    its MXFP4 experts); every other matmul by weights at the weights' C.
    """
    return sp.Eq(t_flop, sum(flop_parts(mla, shared).values()))


def flop_parts(mla: bool = False, shared: bool = True) -> dict[str, sp.Expr]:
    """eq-phys-flop-time split into 'attention', the scores and values over the cache at its
    precision's FLOP/s C_attn, and the 'rest': attention's projections at C_proj, the other
    matmuls at the weights' C."""
    experts = 2 * (n_ff / s + (fm.shared_expert_params() if shared else 0)) * b * q_len
    projections = 2 * n_attn * b * q_len
    logits = 2 * vocab * d_model * b * q_lm
    attention = attention_flop_parts(mla)
    return {"attention": attention["cache"] / (n_gpu * flops_attn),
            "rest": projections / (n_gpu * flops_proj)
            + (experts + logits + attention["weights"]) / (n_gpu * flops)}


def _words_all_reduced(two_d: bool, mla: bool, shared: bool,
                       moe: bool = True) -> tuple[list, list]:
    """Elements per token all-reduced by attention (per data-parallel group: its own tokens) and
    by the feed-forward block (one d_model vector: a token's experts are summed locally; a dense
    block over attention's group)."""
    layout = fm.Layout(two_d)
    hidden = n_active * d_ff + n_sh * d_ff_shared if shared else n_active * d_ff
    group = N_TP_FF if moe else N_TP_ATTN
    spread = n_tp if moe else N_TP_ATTN  # the GPUs a token's feed-forward block runs on
    if two_d:
        attn_red = layout.reduced_over(N_TP_ATTN)
        attn = [d_model / attn_red, (n_q + 2 * n_q / g) * d_head / attn_red]
        ff_red = spread / layout.ranks(group)
        ff = [hidden * n_ff_in / ff_red, n_ff_out * d_model / ff_red]
    else:
        attn = [d_model]
        ff = [d_model / (spread / layout.ranks(group))]
    return [w / sigma_attn for w in attn], ff


@derivation("eq-phys-network-time", "this book (physical rules), from Erdil (2025), eqs. 23-24")
def network_time(two_d: bool = False, moe: bool = False, mla: bool = False,
                 shared: bool = True) -> sp.Eq:
    """Network time of one forward pass under the physical rules (eq-phys-network-time).

    Per layer: each of the σ attention groups all-reduces its own tokens over its N_TP/σ GPUs;
    the feed-forward block all-reduces one d_model vector per token over N_TP^ff GPUs; an MoE
    under expert parallelism sends the share 1 − 1/σ of its tokens to experts outside their
    attention group, dispatched at p_disp bytes and combined at p_act bytes, each an all-to-all
    over min(n_active, N_EP) ranks (eq-coll-all-to-all), and the attention group all-reduces
    the expert outputs with the shared experts' partial sums; N_PP − 1 pipeline hops.
    """
    return sp.Eq(t_net, sum(network_parts(two_d, moe, mla, shared).values()))


def network_parts(two_d: bool = False, moe: bool = False, mla: bool = False,
                  shared: bool = True) -> dict[str, sp.Expr]:
    layout = fm.Layout(two_d)
    attn_words, ff_words = _words_all_reduced(two_d, mla, shared, moe)
    per_token = fm.tokens() * p_act
    attn = sum(AR(layout.ranks(N_TP_ATTN), layout.nodes(N_TP_ATTN), w * per_token)
               for w in attn_words)
    if moe:
        ff = sum(AR(layout.ranks(N_TP_FF), layout.nodes(N_TP_FF), w * per_token) for w in ff_words)
    else:
        # a dense block in attention's layout: each group all-reduces its own tokens' outputs
        # (N_TP^ff = N_TP^attn·σ: the words per token of eq-phys-network-time's groups)
        ff = sp.Integer(0)
        attn += sum(AR(layout.ranks(N_TP_ATTN), layout.nodes(N_TP_ATTN), w * per_token / sigma_attn)
                    for w in ff_words)
    parts = {"attention": n_layers * attn, "feedforward": n_layers * ff,
             "experts": sp.Integer(0),
             "pipeline": (n_pp - 1) * P2P(2, 2, d_model * per_token / n_tp)}
    if moe:
        # Every GPU of an attention group holds its group's tokens. Under expert parallelism the
        # share 1 − 1/σ of a token's experts sits outside its group: dispatched there and
        # combined back by all-to-alls (eq-coll-all-to-all moves only that share; at σ = 1 no
        # all-to-all runs, nor pays its latency). The group then all-reduces the expert outputs
        # its GPUs computed, with the shared experts' partial sums, so that each holds the
        # layer's output (σ = N_TP: all-to-alls alone; σ = 1: the all-reduce alone).
        ranks = sp.Min(n_active, n_ep)
        nodes = fm.expert_nodes(ranks, spread=True)
        held = d_model * ranks * fm.tokens() / n_tp  # a vector per (token, expert GPU) per GPU
        reduce = AR(layout.ranks(N_TP_ATTN), layout.nodes(N_TP_ATTN),
                    d_model * per_token / sigma_attn)
        moved = sp.Piecewise((A2A(ranks, nodes, held * p_disp) + A2A(ranks, nodes, held * p_act),
                              sigma_attn > 1), (0, True))
        parts["attention"] += n_layers * sp.Piecewise((moved + reduce, n_ep > 1), (0, True))
    return parts


@derivation("eq-phys-memory-need", "this book (physical rules), from Erdil (2025)")
def memory_need(shared: bool = True, mla: bool = False, moe: bool = True) -> sp.Eq:
    """HBM an instance needs under the physical rules (eq-phys-memory-need).

    The weights, attention's, the shared experts' and a dense model's feed-forward block's once
    per data-parallel group (σ copies), plus the cache of the whole batch b (every
    micro-batch's), each entry held eq-phys-kv-copies times.
    """
    shared_params = fm.shared_expert_params() if shared and moe else 0
    indexers = sigma_attn * (N_TP_ATTN - 1) * w_idx  # replicated on every GPU (rule 9)
    # each block at its own bytes: attention (router, indexers) at p_attn, shared experts at
    # p_sh, the routed experts (once) or a dense block (once per group) at p
    weights = (p_attn * (sigma_attn * n_attn + indexers) + p_sh * sigma_attn * shared_params
               + p * n_ff * (1 if moe else sigma_attn))
    return sp.Eq(mem_need, weights + p_emb * n_unembed
                 + kv_copies_eq(mla).rhs * cache_stored_bytes() * b)


def memory_need_floor(shared: bool = True) -> sp.Expr:
    """A lower bound of eq-phys-memory-need over σ and N_EP: one copy of everything."""
    weights = (p_attn * (n_attn + (sigma_attn * N_TP_ATTN - 1) * w_idx)  # indexers: N_TP copies
               + p * n_ff + p_sh * (fm.shared_expert_params() if shared else 0))
    return weights + p_emb * n_unembed + cache_stored_bytes() * b


@derivation("eq-phys-expert-parallel", "this book (physical rules), from Erdil (2025), reference code")
def expert_parallel_degree() -> sp.Eq:
    """Expert-parallel degree under the physical rules (eq-phys-expert-parallel): min(N_TP, E)
    once the tokens in flight of a micro-batch, b_μ·q, reach twice the sparsity, else 1."""
    return sp.Eq(n_ep, sp.Piecewise(
        (sp.Min(n_tp, n_experts), b_mu * q_len >= fm.EP_MIN_TOKENS_PER_EXPERT * s), (1, True)))


@derivation("eq-phys-forward-latency", "this book (physical rules), from Erdil (2025), eqs. 29-30")
def forward_latency() -> sp.Eq:
    """Latency of one forward pass under the physical rules (eq-phys-forward-latency).

    Derived from eq-full-forward-latency by letting a second micro-batch hide the share ω of
    the network time: that share runs beside memory and arithmetic (so enters their maximum),
    the rest stays serial. ω = 0 gives eq-full-forward-latency.
    """
    serial = fm.forward_latency().rhs.subs(t_net, (1 - omega_net) * t_net)
    hidden = sp.Max(t_mem, t_flop, omega_net * t_net)
    return sp.Eq(t_fwd, serial - sp.Max(t_mem, t_flop) + hidden)


def combine(kernel, network, memory, arithmetic) -> sp.Expr:
    """eq-phys-forward-latency at given terms."""
    return forward_latency().rhs.subs({t_kernel: kernel / (fm.KERNELS_PER_LAYER * n_layers),
                                       t_net: network, t_mem: memory, t_flop: arithmetic},
                                      simultaneous=True)

