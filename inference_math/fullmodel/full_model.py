"""The full inference model of Erdil (2025), section 3, as its reference code computes it.

One forward pass of a batch of b sequences, each adding q tokens after a context of ℓ tokens, on
an instance of N GPUs, takes

    t_fwd = 4·L·t_kernel + t_net + max(t_mem, t_FLOP)            (eq-full-forward-latency)

for one choice of parallel layout (a *branch*): 1-D or 2-D tensor parallelism, a pipeline degree
N_PP, an attention scale-down σ, and the expert-parallel degree that the rule of
eq-full-expert-parallel sets. The search takes the fastest branch at every (N, b).

Every term is a SymPy expression in the registry's symbols (the derivations are here).
:mod:`inference_math.fullmodel.terms` composes them into expressions of (N, b, N_PP, σ) for each
structure of a layout (``terms.term_expression``); :mod:`inference_math.codegen.full_model_codegen`
writes those as plain NumPy functions into the committed module
:mod:`inference_math.fullmodel.full_model_numpy` (a test checks it is current), and
:func:`~inference_math.fullmodel.branch.compile_branch` binds a model's and a GPU's numbers to
them, with no SymPy at run time (:mod:`inference_math.fullmodel.branch`, whose names are
re-exported here; its name-keyed numbers are keyed by the registry's Symbols here, for the book).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_mu,
    by_name,
    c_kv,
    c_q,
    ctx,
    d_ff,
    d_ff_shared,
    d_head,
    d_model,
    f_used,
    flops,
    flops_fwd,
    g,
    grp,
    hbm_bw,
    kv_bytes,
    mem_need,
    mm_k,
    mm_m,
    mm_n,
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
    n_sh,
    n_tp,
    n_tp_attn,
    n_tp_ff,
    n_unembed,
    node_size,
    p,
    p_act,
    q_len,
    rw_bytes,
    s,
    sigma_attn,
    t_flop,
    t_fwd,
    t_kernel,
    t_mem,
    t_net,
    t_pipe,
    tp_rows,
    vocab,
    xi_ep,
)
from . import branch as _branch
from .branch import EP_MIN_TOKENS_PER_EXPERT as EP_MIN_TOKENS_PER_EXPERT
from .branch import KERNELS_PER_LAYER as KERNELS_PER_LAYER
from .branch import LIMIT_KERNEL_S as LIMIT_KERNEL_S
from .branch import PARTS as PARTS
from .branch import PARTS_PHYSICAL as PARTS_PHYSICAL
from .branch import RULES as RULES
from .branch import SEARCH_TERMS as SEARCH_TERMS
from .branch import SEARCH_TERMS_PHYSICAL as SEARCH_TERMS_PHYSICAL
from .branch import STRUCTURES as STRUCTURES
from .branch import TERM_NAMES as TERM_NAMES
from .branch import TERM_NAMES_PHYSICAL as TERM_NAMES_PHYSICAL
from .branch import Branch as Branch
from .branch import GroupedBranch as GroupedBranch
from .branch import Structure as Structure
from .branch import _attended as _attended
from .branch import compile_branch as compile_branch
from .branch import compile_term as compile_term
from .branch import expert_parallel_value as expert_parallel_value
from .branch import forward_flops_fn as forward_flops_fn
from .branch import parts_of as parts_of
from .branch import search_terms as search_terms
from .branch import structure_of as structure_of
from .branch import term_names as term_names

# Functions shown unevaluated in the book's equations and replaced by their own derivations
# when a branch is composed.
RW = sp.Function(r"M_{\mathrm{rw}}")  # M_rw(m, k, n, tp): eq-full-matmul-bytes
AR = sp.Function(r"t_{\mathrm{AR}}")  # all-reduce time (ranks, nodes, bytes): eq-coll-nccl
A2A = sp.Function(r"t_{\mathrm{A2A}}")  # all-to-all time (ranks, nodes, bytes)
P2P = sp.Function(r"t_{\mathrm{P2P}}")  # point-to-point time (ranks, nodes, bytes)

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


@derivation("eq-full-expert-nodes", "Erdil (2025), reference code")
def expert_nodes_eq() -> sp.Eq:
    """eq-full-expert-nodes: the nodes of an MoE's all-to-all over min(n_active, N_EP) ranks as
    the reference code packs them (the spread of the physical rules is eq-phys-expert-nodes)."""
    return sp.Eq(n_nodes_c, expert_nodes(sp.Min(n_active, n_ep)))


def expert_nodes(ranks: sp.Expr, spread: bool = False) -> sp.Expr:
    """Nodes an all-to-all to a token's ``ranks`` expert GPUs spans (eq-full-expert-nodes).

    The reference code packs them into ⌈ranks/n_node⌉ nodes (eq-full-expert-nodes); ``spread``
    weights that by 1 − ξ_EP and adds ξ_EP times the spread of eq-phys-expert-nodes, over the
    ⌈N_EP/n_node⌉ nodes of the expert-parallel group (at most one node per rank), as experts
    placed round the whole group are: crossing the scale-up domain once the group outgrows it.
    ξ_EP is 1 for the models read from configs, 0 for the paper's, so that one generated
    function serves both.
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


# --- the run-time branch's numbers keyed by Symbols, for the book and the tests ---------------

BRANCH_ARGS = tuple(by_name(name) for name in _branch.BRANCH_ARGS)
CONSTANTS = tuple(by_name(name) for name in _branch.CONSTANTS)


def model_values(model, gpu, weight_bytes: float | None = None,
                 flop_bits: int | None = None, curve: str = "paper") -> dict:
    """:func:`inference_math.fullmodel.branch.model_values` keyed by the registry's Symbols."""
    return {by_name(name): value for name, value in
            _branch.model_values(model, gpu, weight_bytes, flop_bits, curve).items()}


def model_values_for_flops(model) -> dict:
    """:func:`inference_math.fullmodel.branch.model_values_for_flops` keyed by Symbols."""
    return {by_name(name): value for name, value in _branch.model_values_for_flops(model).items()}
