"""The full inference model of Erdil (2025), section 3, as its reference code computes it.

One forward pass of a batch of b sequences, each adding q tokens after a context of ℓ tokens, on
an instance of N GPUs, takes

    t_fwd = 4·L·t_kernel + t_net + max(t_mem, t_FLOP)            (eq-full-forward-latency)

for one choice of parallel layout (a *branch*): 1-D or 2-D tensor parallelism, a pipeline degree
N_PP, an attention scale-down σ, and the expert-parallel degree that the rule of
eq-full-expert-parallel sets. The search takes the fastest branch at every (N, b).

Every term is a SymPy expression in the registry's symbols. :func:`branch_terms` composes them
into expressions of (N, b, N_PP, σ) for each structure of a layout (:func:`term_expression`);
:mod:`inference_math.codegen.full_model_codegen` writes those as plain NumPy functions into the committed
module :mod:`inference_math.fullmodel.full_model_numpy` (a test checks it is current), and
:func:`compile_branch` binds a model's and a GPU's numbers to them, with no SymPy work at run time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    REGISTRY,
    b,
    b_mu,
    bw_ar_inter,
    bw_ar_intra,
    c_kv,
    c_q,
    ctx,
    ctx_win,
    d_ff,
    d_ff_shared,
    d_head,
    d_model,
    d_nope,
    d_rope,
    f_idx,
    f_used,
    flops,
    flops_fwd,
    g,
    grp,
    hbm_bw,
    hbm_cap,
    k_top,
    kv_bytes,
    kv_idx,
    kv_win,
    mem_need,
    mm_k,
    mm_m,
    mm_n,
    msg_bytes,
    n_active,
    n_attn,
    n_ep,
    n_experts,
    n_ff,
    n_ff_in,
    n_ff_out,
    n_gpu,
    n_groups,
    n_layers,
    n_nodes_c,
    n_pp,
    n_q,
    n_ranks,
    n_sh,
    n_tp,
    n_tp_attn,
    n_tp_ff,
    n_unembed,
    node_size,
    omega_net,
    p,
    p_act,
    p_disp,
    p_emb,
    q_len,
    q_lm,
    r_cmp,
    rw_bytes,
    s,
    sigma_attn,
    st_cmp,
    t_flop,
    t_fwd,
    t_kernel,
    t_mem,
    t_net,
    t_pipe,
    tp_rows,
    vocab,
    w_idx,
    xi_ep,
    xi_idx,
    xi_mha,
)
from ..derivations.moe import expert_fraction_read
from ..presets.layered import LayeredModel, piece_context
from . import collectives as coll

# Functions shown unevaluated in the book's equations and replaced by their own derivations
# when a branch is composed.
RW = sp.Function(r"M_{\mathrm{rw}}")  # M_rw(m, k, n, tp): eq-full-matmul-bytes
AR = sp.Function(r"t_{\mathrm{AR}}")  # all-reduce time (ranks, nodes, bytes): eq-coll-nccl
A2A = sp.Function(r"t_{\mathrm{A2A}}")  # all-to-all time (ranks, nodes, bytes)
P2P = sp.Function(r"t_{\mathrm{P2P}}")  # point-to-point time (ranks, nodes, bytes)

KERNELS_PER_LAYER = 4  # serial matmuls per layer, each paying one launch (reference code)
EP_MIN_TOKENS_PER_EXPERT = 2  # expert parallelism switches on at a micro-batch of 2·s
N_TP_FF = n_tp_ff
N_TP_ATTN = n_tp_attn
F_USED = f_used


# --- arithmetic ---------------------------------------------------------------------------

def mean_context() -> sp.Expr:
    """Mean context a verified token attends to: ℓ + (q − 1)/2."""
    return ctx + (q_len - 1) / sp.Integer(2)


def attention_flops(mla: bool = False) -> sp.Expr:
    """FLOPs of attending over the KV cache: 4·d·n_q·L·(ℓ + (q−1)/2)·b·q (d = c_kv with MLA)."""
    width = c_kv if mla else d_head
    return 4 * width * n_q * n_layers * mean_context() * b * q_len


def shared_expert_params() -> sp.Expr:
    """Parameters of the shared experts, all layers: n_sh·(m_in + m_out)·d_model·d_sh·L.

    The paper's models have none (n_sh = 0); DeepSeek-V3, Kimi K2 and Llama 4 have one per MoE
    layer, which every token passes through.
    """
    return n_sh * (n_ff_in + n_ff_out) * d_model * d_ff_shared * n_layers


@derivation("eq-full-flops", "Erdil (2025), sec. 3.1 and reference code")
def forward_flops(mla: bool = False, shared: bool = False) -> sp.Eq:
    """FLOPs of one forward pass (eq-full-flops): 2 per active parameter per token plus attention.

    The active parameters are N_attn + N_ff/s + N_unembed (eq-moe-active-params); ``shared``
    adds the shared experts (:func:`shared_expert_params`), which every token multiplies.
    """
    active = n_attn + n_ff / s + n_unembed + (shared_expert_params() if shared else 0)
    return sp.Eq(flops_fwd, 2 * active * b * q_len + attention_flops(mla))


# --- memory traffic -----------------------------------------------------------------------

@derivation("eq-full-matmul-bytes", "Erdil (2025), reference code (2-D TP matmul traffic)")
def matmul_bytes() -> sp.Eq:
    """Bytes a weight matrix of m×k sharded over tp GPUs reads and writes for n tokens.

    The weights are read once (m·k·p); the k-wide inputs are replicated over t_1 GPUs and the
    m-wide outputs over tp/t_1, with t_1 = clip(√(m·tp/k), 1, tp), the split of a 2-D grid that
    balances the two (eq-full-matmul-bytes).
    """
    t1 = sp.Min(sp.Max(sp.sqrt(mm_m * n_tp / mm_k), 1), n_tp)
    expr = mm_m * mm_k * p + tp_rows * mm_k * mm_n * p_act + (n_tp / tp_rows) * mm_m * mm_n * p_act
    return sp.Eq(rw_bytes, expr.subs(tp_rows, t1))


def tokens() -> sp.Expr:
    """Tokens one micro-batch sends through a layer: b_μ·q."""
    return b_mu * q_len


def ff_bytes(shared: bool = False) -> sp.Expr:
    """Feed-forward traffic of one layer: the expected busy experts, each seeing b_μ·q/s tokens.

    ``shared`` adds the n_sh shared experts, always read and each seeing all b_μ·q tokens.
    """
    per_expert = RW(d_model, d_ff, tokens() / s, N_TP_FF)
    routed = F_USED * n_experts * (n_ff_in + n_ff_out) * per_expert
    if not shared:
        return routed
    return routed + n_sh * (n_ff_in + n_ff_out) * RW(d_model, d_ff_shared, tokens(), N_TP_FF)


def attention_bytes(mla: bool = False) -> sp.Expr:
    """Attention-projection traffic of one layer: QKV and output (MLA: down- and up-projection)."""
    heads = (n_q + 2 * n_q / g) * d_head
    out = RW(d_model, n_q * d_head, tokens(), N_TP_ATTN)
    if mla:
        latent = c_kv + c_q
        return RW(heads, latent, tokens(), N_TP_ATTN) + RW(latent, d_model, tokens(), N_TP_ATTN) + out
    return RW(heads, d_model, tokens(), N_TP_ATTN) + out


@derivation("eq-full-memory-time", "Erdil (2025), eq. 34 and reference code")
def memory_time(mla: bool = False, shared: bool = False) -> sp.Eq:
    """Memory time of one forward pass (eq-full-memory-time).

    Each of the N_PP micro-batches reads its KV cache, every layer's weights and activations and
    the unembedding; attention runs on N/σ of the GPUs, so its traffic sees 1/σ of the bandwidth.
    """
    return sp.Eq(t_mem, sum(memory_parts(mla, shared).values()))


def memory_parts(mla: bool = False, shared: bool = False) -> dict[str, sp.Expr]:
    """eq-full-memory-time split into its 'attention' part and the 'rest'."""
    per_gpu = n_pp / (n_gpu * hbm_bw)
    rest = kv_bytes * ctx * b_mu + n_layers * ff_bytes(shared) + p * vocab * d_model
    return {"attention": per_gpu * n_layers * sigma_attn * attention_bytes(mla),
            "rest": per_gpu * rest}


@derivation("eq-full-flop-time", "Erdil (2025), eq. 33 and reference code")
def flop_time(mla: bool = False, shared: bool = False) -> sp.Eq:
    """Arithmetic time (eq-full-flop-time): experts and attention over N GPUs, projections over N/σ."""
    return sp.Eq(t_flop, sum(flop_parts(mla, shared).values()))


def flop_parts(mla: bool = False, shared: bool = False) -> dict[str, sp.Expr]:
    """eq-full-flop-time split into the projections on N/σ GPUs ('attention') and the 'rest'."""
    experts = 2 * (n_ff / s + (shared_expert_params() if shared else 0)) * b * q_len
    projections = 2 * (n_attn + n_unembed) * b * q_len
    return {"attention": sigma_attn * projections / (n_gpu * flops),
            "rest": (experts + attention_flops(mla)) / (n_gpu * flops)}


@derivation("eq-full-memory-need", "Erdil (2025), reference code (capacity check)")
def memory_need(shared: bool = False) -> sp.Eq:
    """HBM an instance needs (eq-full-memory-need): all weights plus one micro-batch's KV cache.

    The reference code checks the micro-batch's cache, which undercounts the cache N_PP-fold when
    N_PP > 1 (an erratum the book keeps, to reproduce the tables). ``shared`` adds the shared
    experts' weights.
    """
    weights = n_attn + n_ff + n_unembed + (shared_expert_params() if shared else 0)
    return sp.Eq(mem_need, p * weights + kv_bytes * ctx * b_mu)


# --- parallel layout ----------------------------------------------------------------------

@derivation("eq-full-expert-parallel", "Erdil (2025), reference code (expert-parallel rule)")
def expert_parallel_degree() -> sp.Eq:
    """Expert-parallel degree (eq-full-expert-parallel): min(N_TP, E) once b_μ ≥ 2·s, else 1."""
    return sp.Eq(n_ep, sp.Piecewise((sp.Min(n_tp, n_experts), b_mu >= EP_MIN_TOKENS_PER_EXPERT * s),
                                    (1, True)))


@dataclass(frozen=True)
class Layout:
    """How a tensor-parallel group of tp GPUs is arranged: a 1-D ring or a √tp × √tp grid."""

    two_d: bool

    def ranks(self, tp):
        return sp.sqrt(tp) if self.two_d else tp

    def reduced_over(self, tp):
        """GPUs a partial sum is already spread over before the all-reduce (2-D: √tp)."""
        return sp.sqrt(tp) if self.two_d else sp.Integer(1)

    def nodes(self, tp):
        whole = sp.ceiling(tp / node_size)
        return sp.sqrt(whole) if self.two_d else whole


def _words_all_reduced(layout: Layout, mla: bool, shared: bool = False) -> tuple[list, list]:
    """Elements per token all-reduced by the attention and the feed-forward block of a layer.

    ``shared``: the shared experts' partial sums travel with those of the routed experts.
    """
    experts = n_active + n_sh if shared else n_active
    hidden = n_active * d_ff + n_sh * d_ff_shared if shared else n_active * d_ff
    if layout.two_d:
        attn_red = layout.reduced_over(N_TP_ATTN)
        attn = [d_model / attn_red, (n_q + 2 * n_q / g) * d_head / attn_red]
        ff_red = n_tp / layout.ranks(N_TP_FF)
        ff = [hidden * n_ff_in / ff_red, experts * n_ff_out * d_model / ff_red]
    else:
        attn = [d_model]
        ff = [experts * n_ff_out * d_model / (n_tp / layout.ranks(N_TP_FF))]
    return attn, ff


def network_parts(two_d: bool = False, moe: bool = False, mla: bool = False,
                  shared: bool = False, spread: bool = False) -> dict[str, sp.Expr]:
    """The network time of one forward pass by block: 'attention', 'feedforward', 'experts',
    'pipeline' (their sum is eq-full-network-time). ``shared``: with the shared experts' partial
    sums; ``spread``: the all-to-alls' nodes of :func:`expert_nodes` with ξ_EP."""
    layout = Layout(two_d)
    attn_words, ff_words = _words_all_reduced(layout, mla, shared)
    per_token = tokens() * p_act
    attn = sum(AR(layout.ranks(N_TP_ATTN), layout.nodes(N_TP_ATTN), w * per_token)
               for w in attn_words)
    ff = sum(AR(layout.ranks(N_TP_FF), layout.nodes(N_TP_FF), w * per_token) for w in ff_words)
    parts = {"attention": n_layers * attn, "feedforward": n_layers * ff,
             "experts": sp.Integer(0),
             "pipeline": (n_pp - 1) * P2P(2, 2, d_model * per_token / n_tp)}
    if moe:
        ranks = sp.Min(n_active, n_ep)
        parts["experts"] = 2 * n_layers * A2A(ranks, expert_nodes(ranks, spread),
                                              d_model * ranks * per_token / n_tp)
    return parts


@derivation("eq-full-expert-nodes", "Erdil (2025), reference code; this book (spread experts)")
def expert_nodes_eq(spread: bool = True) -> sp.Eq:
    """eq-full-expert-nodes for the ranks min(n_active, N_EP) of an MoE's all-to-all."""
    return sp.Eq(n_nodes_c, expert_nodes(sp.Min(n_active, n_ep), spread))


def expert_nodes(ranks: sp.Expr, spread: bool = False) -> sp.Expr:
    """Nodes an all-to-all to a token's ``ranks`` expert GPUs spans (eq-full-expert-nodes).

    The reference code packs them into ⌈ranks/n_node⌉ nodes; ``spread`` adds ξ_EP, which set to 1
    spreads them over the ⌈N_EP/n_node⌉ nodes of the expert-parallel group (at most one node per
    rank), as experts placed round the whole group are: crossing the scale-up domain once the
    group outgrows it.
    """
    packed = sp.ceiling(ranks / node_size)
    if not spread:
        return packed
    return (1 - xi_ep) * packed + xi_ep * sp.Min(ranks, sp.ceiling(n_ep / node_size))


@derivation("eq-full-network-time", "Erdil (2025), eqs. 23-24 and reference code")
def network_time(two_d: bool = False, moe: bool = False, mla: bool = False,
                 shared: bool = False, spread: bool = False) -> sp.Eq:
    """Network time of one forward pass (eq-full-network-time).

    Per layer, the tensor-parallel all-reduces of attention (on N_TP/σ GPUs) and of the
    feed-forward block (on N_TP^ff GPUs); for an MoE, two all-to-alls over min(n_active, N_EP)
    ranks; and N_PP − 1 point-to-point hops between pipeline stages.
    """
    return sp.Eq(t_net, sum(network_parts(two_d, moe, mla, shared, spread).values()))


@derivation("eq-full-forward-latency", "Erdil (2025), eqs. 29-30 and reference code")
def forward_latency() -> sp.Eq:
    """Latency of one forward pass for one branch (eq-full-forward-latency).

    Kernel launches and network time are serial; memory and arithmetic overlap.
    """
    return sp.Eq(t_fwd, KERNELS_PER_LAYER * n_layers * t_kernel + t_net + sp.Max(t_mem, t_flop))


# --- composing a branch -------------------------------------------------------------------

@dataclass(frozen=True)
class Structure:
    """What changes the shape of the latency expression (not just its numbers)."""

    two_d: bool
    moe: bool
    mla: bool
    collective_model: str  # 'nccl' or 'torus'
    rules: str = "paper"  # 'paper' (the reference code's), 'physical' or 'limit': RULES


def _rw(m, k, n, tp):
    return matmul_bytes().rhs.subs({mm_m: m, mm_k: k, mm_n: n, n_tp: tp}, simultaneous=True)


def _collective(kind: dict, model: str, part: str | None = None, rules: str = "paper",
                all_to_all: bool = False):
    """A collective's time (or its 'latency' or 'bandwidth' part) under ``rules``: the
    reference's eq-coll-nccl or eq-coll-torus; the physical rules' all-to-all of
    eq-coll-all-to-all; the limit's eq-coll-line-rate (no latency; an all-reduce no faster than
    each GPU sending its share once, as in-switch reduction does)."""
    if rules == "limit":
        whole = coll.line_rate(model, coll.ONE_WAY, all_to_all)
        expr = sp.Integer(0) if part == "latency" else whole
    elif rules == "physical" and all_to_all:
        expr = coll.all_to_all_time(model) if part is None else coll.all_to_all_part(model, part)
    else:
        expr = (coll.collective_time(model, kind) if part is None
                else coll.collective_part(model, kind, part))

    def build(ranks, nodes, size):
        return expr.subs({n_ranks: ranks, n_nodes_c: nodes, msg_bytes: size}, simultaneous=True)
    return build


def _layout_values(moe: bool, rules: str = "paper") -> dict:
    """N_TP, b_μ, N_EP and the feed-forward and attention TP degrees in terms of N, b, N_PP, σ."""
    tp = n_gpu / n_pp
    if not moe:
        ep = sp.Integer(1)
    elif rules == "paper":
        ep = expert_parallel_degree().rhs
    else:
        from . import physical_rules
        ep = physical_rules.expert_parallel_degree().rhs
    return {n_tp: tp, b_mu: b / n_pp, n_ep: ep,
            N_TP_FF: sp.Max(1, n_tp / sp.Max(1, n_ep)), N_TP_ATTN: n_tp / sigma_attn}


def _substitute_layout(expr: sp.Expr, moe: bool, rules: str = "paper") -> sp.Expr:
    values = _layout_values(moe, rules)
    # inner definitions first: the FF degree uses N_EP, which uses N_TP and b_μ
    for sym in (N_TP_FF, N_TP_ATTN, n_ep, n_tp, b_mu):
        expr = expr.subs(sym, values[sym])
    return expr


def _compose(expr: sp.Expr, structure: Structure, part: str | None = None) -> sp.Expr:
    """Replace the unevaluated matmul and collective functions by their derivations.

    ``part`` ('latency' or 'bandwidth') keeps only that part of each collective's time.
    """
    model, rules = structure.collective_model, structure.rules
    expr = expr.replace(RW, _rw)
    expr = expr.replace(AR, _collective(coll.ALL_REDUCE, model, part, rules))
    expr = expr.replace(A2A, _collective(coll.ONE_WAY, model, part, rules, all_to_all=True))
    expr = expr.replace(P2P, _collective(coll.ONE_WAY, model, part, rules))
    expr = expr.subs(F_USED, expert_fraction_read().subs(b, tokens()))
    return _substitute_layout(expr, structure.moe, rules)


@lru_cache(maxsize=32)
def branch_terms(structure: Structure) -> dict[str, sp.Expr]:
    """The terms of eq-full-forward-latency for one structure, in N, b, N_PP, σ, q, ℓ and constants.

    Keys: 'kernel', 'network', 'memory', 'arithmetic', 'need' (eq-full-memory-need), and the
    parts the search evaluates separately: 'network_attention' and 'network_rest',
    'memory_attention' and 'memory_rest', 'arithmetic_attention' and 'arithmetic_rest' (only the
    '_attention' parts depend on σ), and 'pipeline' (the point-to-point hops, part of
    'network_rest'). The terms include the shared experts (n_sh, d_sh) and the spread of a
    token's experts over the expert-parallel group's nodes (ξ_EP): zero shared experts and
    ξ_EP = 0 for the paper's models, where they vanish.
    """
    moe, mla = structure.moe, structure.mla
    if structure.rules == "paper":
        net = network_parts(structure.two_d, moe, mla, shared=True, spread=True)
        mem = memory_parts(mla, shared=True)
        flop = flop_parts(mla, shared=True)
        need = memory_need(shared=True).rhs
    else:
        from . import physical_rules as phys
        net = phys.network_parts(structure.two_d, moe, mla)
        mem = phys.memory_parts(mla, moe=moe)
        flop = phys.flop_parts(mla)
        need = phys.memory_need(mla=mla, moe=moe).rhs
    raw = {
        "kernel": KERNELS_PER_LAYER * n_layers * t_kernel,
        "network_attention": net["attention"],
        "network_rest": net["feedforward"] + net["experts"] + net["pipeline"],
        "memory_attention": mem["attention"], "memory_rest": mem["rest"],
        "arithmetic_attention": flop["attention"], "arithmetic_rest": flop["rest"],
        "need": need,
        "pipeline": net["pipeline"],
    }
    if structure.rules != "paper":
        raw["memory_floor"] = phys.memory_floor(mla, moe=moe)
        raw["need_floor"] = phys.memory_need_floor()
    terms = {name: _compose(expr, structure) for name, expr in raw.items()}
    for name in ("network", "memory", "arithmetic"):
        terms[name] = terms[f"{name}_attention"] + terms[f"{name}_rest"]
    return terms


BRANCH_ARGS = (n_gpu, b, n_pp, sigma_attn)
CONSTANTS = (q_len, ctx, p, p_act, d_model, d_ff, n_layers, n_q, g, d_head, n_experts, n_active, s,
             n_ff_in, n_ff_out, vocab, c_kv, c_q, n_attn, n_ff, n_unembed, kv_bytes, flops, hbm_bw,
             hbm_cap, t_kernel, node_size, bw_ar_intra, bw_ar_inter, n_sh, d_ff_shared, xi_ep,
             omega_net, q_lm, p_disp, p_emb, k_top, kv_idx, f_idx, w_idx, kv_win, ctx_win,
             r_cmp, st_cmp, xi_idx, d_rope, d_nope, xi_mha)


# The limit counts no kernel launch: a captured graph launches its kernels back to back, and
# programmatic dependent launch overlaps each kernel's start with the previous one's end; a
# launch time is a measured property of a software stack, not a floor of the hardware.
LIMIT_KERNEL_S = 0.0


def model_values(model, gpu, weight_bytes: float | None = None,
                 flop_bits: int | None = None, curve: str = "paper") -> dict:
    """Numbers for the model and GPU symbols: capped FLOP/s and bandwidth, as the paper uses
    (the curves 'paper' and 'physical'), or their peaks and no launch time ('limit').

    The FLOP/s are those of ``flop_bits``-bit weights (default: the bytes per weight, rounded).
    The expert dispatch travels in FP8 (p_disp = 1) where the weights are 8-bit or narrower,
    as DeepSeek's engine sends it, else at the activations' bytes; the limit always in FP8.
    No network time is hidden (ω = 0) except in the limit (ω = 1).
    """
    w = model.weight_bytes if weight_bytes is None else weight_bytes
    values = {sym: 0.0 for sym in CONSTANTS}
    values.update(model.symbol_values())
    intra = gpu.intranode_allreduce_bandwidth
    limit = curve == "limit"
    values.update({
        p: w, n_attn: model.attention_params, n_ff: model.ff_params,
        n_unembed: model.embedding_params, kv_bytes: model.kv_bytes_per_token,
        flops: gpu.flops(round(8 * w) if flop_bits is None else flop_bits, capped=not limit),
        hbm_bw: gpu.bandwidth(capped=not limit),
        hbm_cap: gpu.hbm_bytes, t_kernel: LIMIT_KERNEL_S if limit else gpu.kernel_launch_s,
        node_size: gpu.node_size,
        bw_ar_intra: math.inf if intra is None else intra,
        bw_ar_inter: gpu.internode_allreduce_bandwidth,
        n_sh: 0.0, d_ff_shared: model.d_ff, xi_ep: 1.0 if model.experts_spread else 0.0,
        omega_net: 1.0 if limit else 0.0, q_lm: 1.0,
        p_disp: 1.0 if limit or w <= 1 else model.activation_bytes, p_emb: w,
        # dense attention: every cached token read, no indexer (eq-sparse-mean-read at k = ∞)
        k_top: math.inf, kv_idx: 0.0, f_idx: 0.0, w_idx: 0.0,
        # no compression, window or compressor (eq-compressed-read at r_c = 1, M_W = S_cmp = 0)
        kv_win: 0.0, ctx_win: 0.0, r_cmp: 1.0, st_cmp: 0.0, xi_idx: 1.0,
    })
    return values


def structure_of(model, gpu, two_d: bool, curve: str = "paper") -> Structure:
    return Structure(two_d=two_d, moe=model.n_experts > 1, mla=model.is_mla,
                     collective_model=gpu.collective_model, rules=curve)


TERM_NAMES = ("kernel", "network_attention", "network_rest", "memory_attention", "memory_rest",
              "arithmetic_attention", "arithmetic_rest", "need", "network", "memory", "arithmetic",
              "latency", "feasible", "fixed", "network_latency", "network_bandwidth", "latency_lower",
              "pipeline", "pipeline_latency", "pipeline_bandwidth")
# What the search evaluates over the whole grid at σ = 1, as one function sharing subexpressions:
# the lower bound over σ and the attention all-reduces (lower bound + them = latency at σ = 1).
SEARCH_TERMS = ("latency_lower", "network_attention")
# Under the physical rules σ changes more than the attention all-reduces, so the search
# evaluates the latency at σ = 1 itself.
SEARCH_TERMS_PHYSICAL = ("latency_lower", "latency")
# What a GroupedBranch sums over its groups, as one function sharing subexpressions.
PARTS = ("kernel", "network_rest", "network_attention", "memory", "arithmetic", "need", "pipeline")
PARTS_PHYSICAL = PARTS + ("memory_floor", "need_floor")
# The rules a structure's terms follow: the reference code's, the book's physical rules at the
# presets' caps, and the limit (the physical rules at the hardware's peaks, at line rate).
RULES = ("paper", "physical", "limit")
TERM_NAMES_PHYSICAL = TERM_NAMES + ("memory_floor", "need_floor")
STRUCTURES = tuple(Structure(two_d, moe, mla, model, rules) for rules in RULES
                   for model in ("nccl", "torus")
                   for moe in (False, True) for mla in (False, True) for two_d in (False, True))


def search_terms(structure: Structure) -> tuple[str, ...]:
    return SEARCH_TERMS if structure.rules == "paper" else SEARCH_TERMS_PHYSICAL


def parts_of(structure: Structure) -> tuple[str, ...]:
    return PARTS if structure.rules == "paper" else PARTS_PHYSICAL


def term_names(structure: Structure) -> tuple[str, ...]:
    return TERM_NAMES if structure.rules == "paper" else TERM_NAMES_PHYSICAL


def term_expression(structure: Structure, name: str) -> sp.Expr:
    """One term of a structure as a SymPy expression of (N, b, N_PP, σ, *CONSTANTS).

    Names: those of :func:`branch_terms`, plus 'latency' (eq-full-forward-latency, infinite where
    the branch is infeasible: the weights and the micro-batch's KV cache do not fit
    (eq-full-memory-need), or N_PP exceeds N or b), 'feasible' (1 or 0), 'fixed' (kernel
    launches plus the σ-free network time), 'network_latency' and 'network_bandwidth' (the
    two parts of eq-full-network-time at the protocol each collective uses) and
    'latency_lower': eq-full-forward-latency without the attention all-reduces, evaluated at
    σ = 1 a lower bound for every σ (attention's memory and arithmetic are smallest at σ = 1,
    when all the stage's GPUs share them, and its all-reduces only add time); 'pipeline',
    'pipeline_latency' and 'pipeline_bandwidth': the pipeline's point-to-point hops and their
    two parts (counted once per forward pass, not per layer group: see :class:`GroupedBranch`).
    """
    if structure.rules != "paper":
        return _physical_term(structure, name)
    if name in ("network_latency", "network_bandwidth"):
        whole = network_time(structure.two_d, structure.moe, structure.mla, shared=True,
                             spread=True).rhs
        return _compose(whole, structure, name.removeprefix("network_"))
    if name in ("pipeline_latency", "pipeline_bandwidth"):
        hops = network_parts(structure.two_d, structure.moe, structure.mla)["pipeline"]
        return _compose(hops, structure, name.removeprefix("pipeline_"))
    terms = branch_terms(structure)
    fits = sp.And(n_gpu * hbm_cap >= terms["need"], n_pp <= n_gpu, n_pp <= b)
    if name in ("latency", "latency_lower"):
        network = terms["network" if name == "latency" else "network_rest"]
        latency = terms["kernel"] + network + sp.Max(terms["memory"], terms["arithmetic"])
        return sp.Piecewise((latency, fits), (sp.oo, True))
    if name == "feasible":
        return sp.Piecewise((1, fits), (0, True))
    if name == "fixed":
        return terms["kernel"] + terms["network_rest"]
    return terms[name]


def _physical_term(structure: Structure, name: str) -> sp.Expr:
    """term_expression under the physical rules (and the limit): eq-phys-forward-latency, and a
    'latency_lower' from the floors of memory and need over σ (physical_rules)."""
    from . import physical_rules as phys
    if name in ("network_latency", "network_bandwidth"):
        whole = phys.network_time(structure.two_d, structure.moe, structure.mla).rhs
        return _compose(whole, structure, name.removeprefix("network_"))
    if name in ("pipeline_latency", "pipeline_bandwidth"):
        hops = phys.network_parts(structure.two_d, structure.moe, structure.mla)["pipeline"]
        return _compose(hops, structure, name.removeprefix("pipeline_"))
    terms = branch_terms(structure)
    if name in ("latency", "latency_lower", "feasible"):
        lower = name == "latency_lower"
        need = terms["need_floor" if lower else "need"]
        fits = sp.And(n_gpu * hbm_cap >= need, n_pp <= n_gpu, n_pp <= b)
        if name == "feasible":
            return sp.Piecewise((1, fits), (0, True))
        network = terms["network_rest" if lower else "network"]
        memory = terms["memory_floor" if lower else "memory"]
        latency = phys.combine(terms["kernel"], network, memory, terms["arithmetic"])
        return sp.Piecewise((latency, fits), (sp.oo, True))
    if name == "fixed":
        return terms["kernel"] + terms["network_rest"]
    return terms[name]


def compile_term(structure: Structure, name: str) -> callable:
    """NumPy function of (N, b, N_PP, σ, *CONSTANTS) for one term (see :func:`term_expression`),
    for 'search' (of a 1-D structure) the tuple of :data:`SEARCH_TERMS` of the 1-D and then of
    the 2-D layout, and for 'parts' the tuple of :data:`PARTS`.

    The function is generated from :func:`term_expression` ahead of time by
    :mod:`inference_math.codegen.full_model_codegen` into :mod:`inference_math.fullmodel.full_model_numpy`, so
    evaluating the model needs no SymPy work.
    """
    return _generated(structure.rules).TERMS[(structure.two_d, structure.moe, structure.mla,
                                              structure.collective_model, structure.rules, name)]


@cache
def _generated(rules: str):
    """The generated module of one set of rules, imported on first use."""
    import importlib
    suffix = "" if rules == "paper" else f"_{rules}"
    return importlib.import_module(f"{__package__}.full_model_numpy{suffix}")


def compile_branch(model, gpu, two_d: bool, q: float = 1.0, context: float = 0.0,
                   weight_bytes: float | None = None, curve: str = "paper",
                   logits: float | None = None, kv_scale: float = 1.0) -> Branch | GroupedBranch:
    """Functions of (N, b, N_PP, σ) for one model, GPU, layout, tokens per pass q and context ℓ.

    ``compile_branch(...)["latency"](N, b, N_PP, σ)``; any name of :func:`compile_term`. ``q``
    may be an array, whose shape is then broadcast in front of the arguments'. A model with
    layer groups (:class:`~inference_math.presets.layered.LayeredModel`) gets a
    :class:`GroupedBranch`, with the same names. ``curve`` picks the rules (:data:`RULES`);
    ``logits`` is q_LM, the tokens per sequence whose logits the pass computes (default q; 1
    for a prefill pass); ``kv_scale`` multiplies the cache's bytes (another KV precision).
    """
    if curve not in RULES:
        raise ValueError(f"unknown curve {curve!r} (known: {', '.join(RULES)})")
    options = (q, context, weight_bytes, curve, logits, kv_scale)
    if isinstance(model, LayeredModel):
        layouts = {layout: [_piece_branch(piece, model, gpu, layout, *options)
                            for piece in model.pieces] for layout in (False, True)}
        return GroupedBranch(layouts[two_d], layouts[True] if not two_d else None,
                             gpu.hbm_bytes, curve)
    values = model_values(model, gpu, weight_bytes, curve=curve)
    values.update({q_len: q, ctx: float(context), kv_bytes: values[kv_bytes] * kv_scale})
    return Branch(structure_of(model, gpu, two_d, curve), _constants(values, q, logits))


def _constants(values: dict, q, logits: float | None = None) -> tuple:
    lm = q if logits is None else logits
    return tuple(q if sym is q_len and isinstance(q, np.ndarray)
                 else lm if sym is q_lm and isinstance(lm, np.ndarray)
                 else float(lm) if sym is q_lm else float(values[sym])
                 for sym in CONSTANTS)


def _piece_branch(piece, model, gpu, two_d: bool, q, context: float,
                  weight_bytes: float | None, curve: str = "paper", logits: float | None = None,
                  kv_scale: float = 1.0) -> Branch:
    """One layer group of a LayeredModel as a uniform Branch: its own counts, its cache capped
    at its window, and the FLOP/s of the model's weights (not of the group's)."""
    own = weight_bytes is None or weight_bytes == model.weight_bytes
    bits = model.weight_bits if own else round(8 * weight_bytes)
    values = model_values(piece.shape, gpu, piece.weight_bytes if own else weight_bytes, bits,
                          curve=curve)
    values.update({
        q_len: q, ctx: piece_context(piece, float(context)),
        n_attn: piece.attention_params, n_ff: piece.ff_params,
        kv_bytes: piece.kv_bytes_per_token * kv_scale, n_sh: float(piece.n_shared),
        d_ff_shared: float(piece.d_shared),
        k_top: piece.top_k, kv_idx: piece.indexer_bytes_per_token,
        f_idx: piece.indexer_flops, w_idx: piece.indexer_params,
        kv_win: piece.window_bytes_per_token * kv_scale, ctx_win: piece.window_tokens,
        r_cmp: piece.compression,
        # the compressors' pending state as the reference code holds it; the limit counts none
        # (a running softmax pools a window in a few vectors, whatever r_c)
        st_cmp: 0.0 if curve == "limit" else piece.state_bytes,
        xi_idx: 1.0 if piece.indexer_replicated else 0.0,
    })
    if curve != "limit" and not own:
        values[p_disp] = 1.0 if weight_bytes <= 1 else piece.shape.activation_bytes
    elif curve != "limit":
        values[p_disp] = 1.0 if model.weight_bits <= 8 else piece.shape.activation_bytes
    # the embeddings at their own bytes (BF16 beside FP8 layers), every weight at weight_bytes
    values[p_emb] = model.embedding_bytes if own else weight_bytes
    return Branch(structure_of(piece.shape, gpu, two_d, curve), _constants(values, q, logits))


@dataclass(frozen=True)
class Branch:
    """A structure with its numbers bound: ``branch[name]`` is a function of (N, b, N_PP, σ)."""

    structure: Structure
    constants: tuple

    def __getitem__(self, name: str):
        fn = compile_term(self.structure, name)
        constants = self.constants

        def call(n, batch, pp, sigma):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return fn(n, batch, pp, sigma, *constants)
        return call


_ADDITIVE = ("kernel", "network_attention", "network_rest", "memory_attention", "memory_rest",
             "arithmetic_attention", "arithmetic_rest", "need", "network", "memory", "arithmetic",
             "fixed", "network_latency", "network_bandwidth", "pipeline", "pipeline_latency",
             "pipeline_bandwidth")
# terms that hold the pipeline's hops, paid once per pass however many groups there are
_ONCE = {"network_rest": "pipeline", "network": "pipeline", "fixed": "pipeline",
         "network_latency": "pipeline_latency", "network_bandwidth": "pipeline_bandwidth",
         "pipeline": "pipeline", "pipeline_latency": "pipeline_latency",
         "pipeline_bandwidth": "pipeline_bandwidth"}


@derivation("eq-full-grouped-latency", "this book, from Erdil (2025), eqs. 29-34")
def grouped_latency() -> sp.Eq:
    """Forward latency of a model with layer groups (eq-full-grouped-latency).

    Every term of eq-full-forward-latency is a sum over layers plus terms paid once per pass
    (the unembedding, the pipeline hops t_pipe). Writing group i's network, memory and arithmetic
    times with its own layer count L_i, shapes and window, and counting each group's hops, the
    pass takes the sum of each over the groups, less the hops counted G - 1 times too many, and
    the larger of the summed memory and arithmetic times (they overlap across the whole pass,
    not group by group). With one group it is eq-full-forward-latency.
    """
    from ..derivations.layer_mix import per_group

    def total(expr):
        return sp.Sum(expr, (grp, 1, n_groups))
    kernels = forward_latency().rhs.coeff(t_kernel).subs(n_layers, per_group(n_layers))
    return sp.Eq(t_fwd, total(kernels) * t_kernel + total(per_group(t_net))
                 - (n_groups - 1) * t_pipe
                 + sp.Max(total(per_group(t_mem)), total(per_group(t_flop))))


@dataclass(frozen=True)
class GroupedBranch:
    """A LayeredModel's branch: the Branches of its groups combined (eq-full-grouped-latency).

    ``branch[name]`` has the names of :func:`term_expression`. The additive terms are summed
    over the groups with the pipeline's hops counted once; 'latency' and 'latency_lower' take the
    larger of the summed memory and arithmetic times; feasibility needs the summed weights and
    cache to fit. 'search' (of a 1-D branch) needs the 2-D groups, kept in ``two_d_pieces``.
    Under the physical rules ('physical', 'limit') the latency is eq-phys-forward-latency of the
    summed terms, and 'latency_lower' takes the floors of memory and need over σ.
    """

    pieces: list
    two_d_pieces: list | None
    hbm_cap: float
    curve: str = "paper"

    @property
    def structure(self) -> Structure:
        """The first group's structure (its rules are every group's)."""
        return self.pieces[0].structure

    @property
    def omega(self) -> float:
        return self.pieces[0].constants[CONSTANTS.index(omega_net)]

    def _sum(self, pieces, name, n, batch, pp, sigma):
        total = sum(piece[name](n, batch, pp, sigma) for piece in pieces)
        if name in _ONCE and len(pieces) > 1:
            total = total - (len(pieces) - 1) * pieces[0][_ONCE[name]](n, batch, pp, sigma)
        return total

    def _parts(self, pieces, n, batch, pp, sigma) -> dict:
        """The terms of :data:`PARTS` summed over the groups, the hops counted once."""
        names = PARTS if self.curve == "paper" else PARTS_PHYSICAL
        each = [piece["parts"](n, batch, pp, sigma) for piece in pieces]
        out = {name: sum(values[k] for values in each) for k, name in enumerate(names)}
        hops = each[0][PARTS.index("pipeline")]
        out["network_rest"] = out["network_rest"] - (len(pieces) - 1) * hops
        return out

    def _latency(self, pieces, lower: bool, n, batch, pp, sigma):
        """The latency (or its lower bound over σ) and, for the search at σ = 1, what completes
        it there: the attention all-reduces (paper rules) or the latency itself."""
        part = self._parts(pieces, n, batch, pp, sigma)
        network = part["network_rest"] + (0.0 if lower else part["network_attention"])
        if self.curve == "paper":
            latency = part["kernel"] + network + np.maximum(part["memory"], part["arithmetic"])
            fits = self._fits(part["need"], n, batch, pp)
            return np.where(fits, latency, np.inf), part["network_attention"]
        memory, need = (part["memory_floor"], part["need_floor"]) if lower else (part["memory"],
                                                                                 part["need"])
        value = np.where(self._fits(need, n, batch, pp),
                         _overlapped(part["kernel"], network, memory, part["arithmetic"],
                                     self.omega), np.inf)
        if not lower:
            return value, None
        return value, self._latency(pieces, False, n, batch, pp, sigma)[0]

    def _fits(self, need, n, batch, pp):
        """The feasibility of eq-full-memory-need (the summed need) and of N_PP ≤ min(N, b)."""
        return (n * self.hbm_cap >= need) & (pp <= n) & (pp <= batch)

    def __getitem__(self, name: str):
        pieces = self.pieces

        def call(n, batch, pp, sigma):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                if name in _ADDITIVE or name in ("memory_floor", "need_floor"):
                    return self._sum(pieces, name, n, batch, pp, sigma)
                if name in ("latency", "latency_lower"):
                    return self._latency(pieces, name == "latency_lower", n, batch, pp, sigma)[0]
                if name == "feasible":
                    need = self._sum(pieces, "need", n, batch, pp, sigma)
                    return np.asarray(self._fits(need, n, batch, pp), dtype=float)
                if name == "search":
                    out = []
                    for group in (pieces, self.two_d_pieces):
                        out += self._latency(group, True, n, batch, pp, sigma)
                    return tuple(out)
                raise KeyError(name)
        return call


def _overlapped(kernel, network, memory, arithmetic, omega):
    """eq-phys-forward-latency, generated from physical_rules.forward_latency."""
    return _generated("physical").overlapped(kernel, network, memory, arithmetic, omega)


# --- reading one point --------------------------------------------------------------------

def expert_parallel_value(model, tp: float, micro_batch: float, q: float = 1.0) -> float:
    """eq-full-expert-parallel at one point (1 for a dense model; for a LayeredModel, that of
    its sparsest MoE group); with ``q`` tokens per sequence, eq-phys-expert-parallel (pass
    q = 1 for the reference rule, which counts sequences)."""
    if isinstance(model, LayeredModel):
        model = max((piece.shape for piece in model.pieces), key=lambda shape: shape.sparsity)
    if model.n_experts == 1 or micro_batch * q < EP_MIN_TOKENS_PER_EXPERT * model.sparsity:
        return 1.0
    return float(min(tp, model.n_experts))


def forward_flops_fn(model):
    """eq-full-flops for one model as a NumPy function of (b, q, ℓ); a LayeredModel's is the
    sum over its groups, each at the entries its queries attend to: the context capped at its
    window, a sparse group's selection, a compressed group's pooled entries and window (rules 9
    and 10; the indexers' scoring is not counted)."""
    if isinstance(model, LayeredModel):
        parts = [(forward_flops_fn_values(piece.shape, _piece_flop_values(piece), shared=True),
                  piece) for piece in model.pieces]

        def total(batch, q, context):
            return sum(fn(batch, q, _attended(piece, context)) for fn, piece in parts)
        return total
    return forward_flops_fn_values(model, model_values_for_flops(model))


def _attended(piece, context):
    """The cached entries a query of a group attends to at ``context``, in eq-full-flops' ℓ."""
    if piece.fixed_context is not None:
        return piece.fixed_context
    seen = np.minimum(context, piece.window)
    return (np.minimum(seen, piece.top_k) / piece.compression
            + np.minimum(seen, piece.window_tokens))


def _piece_flop_values(piece) -> dict:
    values = model_values_for_flops(piece.shape)
    values.update({n_attn: piece.attention_params, n_ff: piece.ff_params,
                   n_sh: piece.n_shared, d_ff_shared: piece.d_shared})
    return values


def forward_flops_fn_values(model, values: dict, shared: bool = False):
    """eq-full-flops at ``values`` as a function of (b, q, ℓ), generated from its derivation into
    :mod:`.formulas_numpy` (no SymPy at run time)."""
    from . import formulas_numpy as gen
    name = f"forward_flops_{'mla' if model.is_mla else 'gqa'}{'_shared' if shared else ''}"
    fn = getattr(gen, name)
    symbols = {info.name: info.symbol for info in REGISTRY.values()}
    bound = [float(values[symbols[arg]]) for arg in gen.ARGUMENTS[name][3:]]
    return lambda batch, q, context: fn(batch, q, context, *bound)


def model_values_for_flops(model) -> dict:
    values = dict(model.symbol_values())
    values.update({n_attn: model.attention_params, n_ff: model.ff_params,
                   n_unembed: model.embedding_params})
    return values
