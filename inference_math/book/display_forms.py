"""Display forms: registered derivations arranged the way an author would typeset them.

A derivation returns the result SymPy computed, in SymPy's canonical form: ``2500/9`` where the
reader expects 10⁶ tokens per million over 3600 seconds per hour, ``N^{1/3} n^{2/3} ...`` where
the reader expects one cube root, NCCL's latency constants as fractions of a second inside one
long minimum. A display form is the same quantity written for reading, as a SymPy expression of
unevaluated parts (so that the printer shows it as written) and named constants.

``tests/test_display_forms.py`` proves every form equal to its derivation: after ``doit()`` and
the substitution of the named constants' values, the difference simplifies to zero and vanishes at
random positive values. :func:`display_eq` is what the chapters (through ``glue_eq``) and the
derivation index print, so a label shows the same form everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import sympy as sp

from .. import DERIVATIONS
from ..core import symbols as S
from .typeset import FlagCases, Log2, StatedCondition, WrittenMax, WrittenMin

R = sp.Rational


def _u(expr):
    """An unevaluated copy of ``expr``'s top level (kept as written by the printer)."""
    return sp.UnevaluatedExpr(expr)


def _pow(base, exponent):
    return sp.Pow(base, exponent, evaluate=False)


def _mul(*factors):
    return sp.Mul(*factors, evaluate=False)


@dataclass(frozen=True)
class DisplayForm:
    """How the equation ``label`` is shown: ``build()`` returns the Eq as printed; ``constants``
    maps each named constant of the form to its value (substituted by the test)."""

    label: str
    build: Callable[[], sp.Equality]
    constants: Callable[[], dict] = field(default=lambda: {})
    why: str = ""
    #: the constants are auxiliary quantities shown under the equation ("where A = ...")
    where: bool = False
    #: the auxiliary quantities are written for reading too (printed in the order written)
    written_where: bool = False


FORMS: dict[str, DisplayForm] = {}


def form(label: str, why: str, constants: Callable[[], dict] | None = None, where: bool = False,
         written_where: bool = False):
    def register(build):
        if label not in DERIVATIONS:
            raise ValueError(f"display form for {label!r}, which is no registered derivation")
        FORMS[label] = DisplayForm(label, build, constants or (lambda: {}), why, where,
                                   written_where)
        return build
    return register


# --- per-token cost: 10^6 tokens per million over 3600 seconds per hour -------------------------

MTOK = _pow(10, 6)
HOUR = sp.Integer(3600)


def _per_mtok(numerator, denominator):
    """``10^6 numerator / (3600 denominator)`` as written (no 2500/9)."""
    return sp.Mul(MTOK, *numerator, _pow(_mul(HOUR, *denominator), -1), evaluate=False)


@form("eq-deepseek-cost-per-mtok", "10^6 tokens per million and 3600 s per hour, not 2500/9")
def _cost_per_mtok():
    return sp.Eq(DERIVATIONS["eq-deepseek-cost-per-mtok"].function().lhs,
                 _per_mtok([S.price], [S.tok_rate_gpu]), evaluate=False)


@form("eq-search-cost", "10^6 tokens per million and 3600 s per hour, not 2500/9")
def _search_cost():
    return sp.Eq(DERIVATIONS["eq-search-cost"].function().lhs,
                 _per_mtok([S.n_gpu, S.price, S.t_token], [S.b]), evaluate=False)


@form("eq-prefill-input-cost", "10^6 tokens per million and 3600 s per hour, not 2500/9")
def _input_cost():
    return sp.Eq(DERIVATIONS["eq-prefill-input-cost"].function().lhs,
                 _per_mtok([S.n_gpu, S.price, S.t_prefill], [S.b, S.t_prompt]), evaluate=False)


@form("eq-longctx-kv-floor", "10^6 tokens per million and 3600 s per hour, not 2500/9")
def _kv_floor():
    return sp.Eq(DERIVATIONS["eq-longctx-kv-floor"].function().lhs,
                 _per_mtok([S.kv_bytes, S.price, S.ctx], [S.hbm_bw]), evaluate=False)


@form("eq-embeddings-cost-compute-bound", "10^6 tokens per million, not 1000000")
def _emb_cost():
    eq = DERIVATIONS["eq-embeddings-cost-compute-bound"].function()
    return sp.Eq(eq.lhs, sp.Mul(MTOK, eq.rhs / 10**6, evaluate=False), evaluate=False)


# --- the latency wall: one cube root instead of five fractional powers --------------------------

def _wall_latency(n_param=S.n_param, layers=S.n_layers, width_factor=1):
    """3 ∛(N p/B) (n_layers n_reduce t_hop)^{2/3} − 2 n_layers n_reduce t_hop."""
    return _mul(3, _pow(n_param * S.p / S.hbm_bw, R(1, 3)),
                _pow(layers * S.n_reduce * S.t_hop, R(2, 3)))


def _n_gpu_star() -> dict:
    return {S.n_gpu_star: DERIVATIONS["eq-wall-optimal-instance-size"].function().rhs}


@form("eq-wall-minimum-latency", "one cube root; the condition through the optimal instance size "
      "N_GPU* of eq-wall-optimal-instance-size, shown just before it", constants=_n_gpu_star)
def _wall_minimum():
    eq = DERIVATIONS["eq-wall-minimum-latency"].function()
    hop = _mul(S.n_layers, S.n_reduce, S.t_hop)
    large = sp.Add(_wall_latency(), _mul(-2, hop), evaluate=False)
    return sp.Eq(eq.lhs, sp.Piecewise((large, S.n_gpu_star > 1),
                                      (S.n_param * S.p / S.hbm_bw, True)), evaluate=False)


@form("eq-scaling-large-model-latency", "one cube root instead of five fractional powers")
def _scaling_large():
    return sp.Eq(S.t_min, _wall_latency(), evaluate=False)


@form("eq-scaling-square-root-law", "one cube root and one 2/3 power")
def _scaling_sqrt():
    eq = DERIVATIONS["eq-scaling-square-root-law"].function()
    k_l = next(s for s in eq.rhs.free_symbols if s.name == "k_{L}")
    return sp.Eq(eq.lhs, _mul(3, _pow(S.n_param, R(1, 2)), _pow(S.p / S.hbm_bw, R(1, 3)),
                              _pow(k_l * S.n_reduce * S.t_hop, R(2, 3))), evaluate=False)


@form("eq-scaling-depth-width", "one cube root and one 2/3 power")
def _scaling_depth_width():
    eq = DERIVATIONS["eq-scaling-depth-width"].function()
    k_d = next(s for s in eq.rhs.free_symbols if s.name == "k_{d}")
    return sp.Eq(eq.lhs, _mul(3, S.n_layers, _pow(k_d * S.p / S.hbm_bw, R(1, 3)),
                              _pow(S.d_model * S.n_reduce * S.t_hop, R(2, 3))), evaluate=False)


# --- ratios and roots written the way they are read ---------------------------------------------

@form("eq-rollouts-lora-throughput", "one over one plus the adapters' share of the bytes read")
def _lora_throughput():
    eq = DERIVATIONS["eq-rollouts-lora-throughput"].function()
    base = sp.Add(S.kv_bytes * S.seq_kv * S.b, S.n_param * S.p, evaluate=False)
    share = sp.Mul(S.n_lora * S.n_adapt * S.p, _pow(base, -1), evaluate=False)
    return sp.Eq(eq.lhs, _pow(sp.Add(1, share, evaluate=False), -1), evaluate=False)


_A2, _A1, _A0 = (sp.Symbol(f"A_{{{i}}}", positive=True) for i in (2, 1, 0))


def _crossover_coefficients() -> dict:
    return {_A2: S.n_layers * (4 * S.d_model + 5 * S.n_q),
            _A1: S.n_layers * S.d_model * (51 * S.d_model + 20) / 2,
            _A0: S.flops * S.n_param * S.p / S.hbm_bw}


@form("eq-embeddings-crossover-length", "the root of A_2 S^2 + A_1 S = A_0 with its coefficients "
      "named, instead of one square root of a five-term polynomial",
      constants=_crossover_coefficients, where=True)
def _emb_crossover():
    eq = DERIVATIONS["eq-embeddings-crossover-length"].function()
    root = sp.Add(_pow(sp.Add(_pow(_A1, 2), _mul(4, _A2, _A0), evaluate=False), R(1, 2)), -_A1,
                  evaluate=False)
    return sp.Eq(eq.lhs, sp.Mul(root, _pow(_mul(2, _A2), -1), evaluate=False), evaluate=False)


@form("eq-rollouts-reward-entropy", "log2 N instead of log N / log 2")
def _reward_entropy():
    eq = DERIVATIONS["eq-rollouts-reward-entropy"].function()
    return sp.Eq(eq.lhs, Log2(S.n_levels), evaluate=False)


# --- NCCL: the cheapest protocol, each protocol's time named ------------------------------------

@form("eq-coll-latency", "log2 of the nodes; the ranks per node minus one first")
def _coll_latency():
    coll, _ = _protocols()
    per_node = sp.Add(S.n_ranks / S.n_nodes_c, -1, evaluate=False)
    inner = sp.Add(_mul(S.lat_rank, per_node), _mul(S.lat_node, Log2(S.n_nodes_c)), evaluate=False)
    return sp.Eq(coll.protocol_latency().lhs, sp.Add(_mul(S.m_coll, inner), S.lat_base,
                                                     evaluate=False), evaluate=False)


def _protocols():
    from ..fullmodel import collectives as coll

    return coll, coll.PROTOCOLS


def _protocol_symbol(kind: str, name: str) -> sp.Symbol:
    return sp.Symbol(rf"t_{{\mathrm{{{kind}}}}}^{{\mathrm{{{name}}}}}", positive=True)


# --- symbols that only display forms use --------------------------------------------------------

@dataclass(frozen=True)
class DisplaySymbol:
    """A symbol that appears only in display forms, as the notation page lists it: ``latex`` is
    what the page shows (``t_lat^π`` for the three protocols' ``t_lat^LL``, ...), ``symbols`` the
    SymPy symbols of the forms it stands for."""

    latex: str
    unit: str
    meaning: str
    symbols: tuple[sp.Symbol, ...]


@cache
def display_symbols() -> tuple[DisplaySymbol, ...]:
    """Every symbol the display forms introduce, with its unit and meaning (the notation page's
    last table; ``tests/test_display_forms.py`` checks that none is missing)."""
    _, protocols = _protocols()
    names = ", ".join(p.name for p in protocols)
    return (
        DisplaySymbol(r"t_{\mathrm{lat}}^{\pi}", "s",
                      f"latency term of NCCL protocol π ∈ {{{names}}}: {{eq}}`eq-coll-latency` with "
                      "the protocol's constants (shown in {eq}`eq-coll-nccl`)",
                      tuple(_protocol_symbol("lat", p.name) for p in protocols)),
        DisplaySymbol(r"t_{\mathrm{bw}}^{\pi}", "s",
                      f"bandwidth term of NCCL protocol π ∈ {{{names}}}: {{eq}}`eq-coll-bandwidth` "
                      "with the protocol's constants (shown in {eq}`eq-coll-nccl`)",
                      tuple(_protocol_symbol("bw", p.name) for p in protocols)),
        DisplaySymbol(r"s_{\mathrm{node}}", "1",
                      "share of an all-to-all's message bound for other GPUs of the sender's "
                      "node outside its attention group, max(0, 1/n_nodes − 1/σ), in "
                      "{eq}`eq-coll-all-to-all`", (_NODE_SHARE,)),
        DisplaySymbol(r"s_{\mathrm{NIC}}", "1",
                      "share of an all-to-all's message bound for other nodes, min(1 − 1/σ, "
                      "1 − 1/n_nodes), in {eq}`eq-coll-all-to-all`", (_NIC_SHARE,)),
        DisplaySymbol(r"A_{2}", "FLOP/token²",
                      "coefficient of $S^2$ in the condition $A_2 S^2 + A_1 S = A_0$ whose positive "
                      "root is {eq}`eq-embeddings-crossover-length`: the FLOPs of a pass that "
                      "grow with the square of the input length $S$ (attention)", (_A2,)),
        DisplaySymbol(r"A_{1}", "FLOP/token",
                      "coefficient of $S$ in the same condition: the FLOPs per input token",
                      (_A1,)),
        DisplaySymbol(r"A_{0}", "FLOP",
                      r"right-hand side of the same condition, $C N_{\mathrm{param}} p / B$: the "
                      "FLOPs the GPU can do while it reads the weights once", (_A0,)),
        DisplaySymbol(r"s_{k}", "1",
                      r"slope of binding constraint $k$ when $N$ and $b$ grow together (more "
                      r"replicas, the same cost per token), $g_{k,N} + g_{k,b}$, in "
                      "{eq}`eq-sens-corner`", (_CORNER_S1, _CORNER_S2)),
        DisplaySymbol("D", "1",
                      r"determinant of the two binding constraints' slopes in $\ln N$ and "
                      r"$\ln b$, $g_{1,N} g_{2,b} - g_{1,b} g_{2,N}$, in {eq}`eq-sens-corner`",
                      (_CORNER_DET,)),
        DisplaySymbol(r"w_{\mathrm{qkv}}", "1",
                      r"channels of a linear-attention layer's queries, keys and values, "
                      r"$2 n_{\mathrm{lin},k} d_{\mathrm{lin},k} + n_{\mathrm{lin},v} "
                      r"d_{\mathrm{lin},v}$, in "
                      "{eq}`eq-layers-attention-linear` and {eq}`eq-layers-attention-kda`",
                      (_QKV,)),
        DisplaySymbol(r"r_{\mathrm{I}}", "1",
                      "times an attention group scores the whole cache with its indexer: once "
                      "per GPU of the group where every GPU runs the whole indexer (DeepSeek's), "
                      "once where each GPU scores for its own query heads, in "
                      "{eq}`eq-phys-flop-time`", (_INDEXER_COPIES,)),
        DisplaySymbol(r"F_{\mathrm{abs}}", "FLOP",
                      "FLOPs of an MLA layer's attention for one sequence's pass in the absorbed "
                      "form, in {eq}`eq-phys-mla-attention-flops`", (_F_ABSORBED,)),
        DisplaySymbol(r"F_{\mathrm{MHA}}", "FLOP",
                      "the same in the multi-head form, the cached latents' up-projection "
                      "included, in {eq}`eq-phys-mla-attention-flops`", (_F_MULTI_HEAD,)),
        DisplaySymbol(r"v_{\mathrm{in}}", "s",
                      "the binding resource's time a mixed step spends on its prompt chunk beyond "
                      "what the decode tokens alone take, in {eq}`eq-serve-mixed-split`",
                      (_SPLIT_IN,)),
        DisplaySymbol(r"v_{\mathrm{out}}", "s",
                      "the same for the decode tokens beyond what the chunk alone takes, in "
                      "{eq}`eq-serve-mixed-split`", (_SPLIT_OUT,)),
        DisplaySymbol(r"v_{\mathrm{sh}}", "s",
                      "the part both sides would take alone (the weights' read when memory "
                      "binds), shared by token count, in {eq}`eq-serve-mixed-split`",
                      (_SPLIT_SHARED,)),
        DisplaySymbol(r"\bar{t}_{\mathrm{TTFT}}^{\mathrm{burst}}", "s",
                      "mean TTFT of a run's first wave of $b$ prompts, {eq}`eq-queue-burst-mean`, "
                      "in {eq}`eq-queue-run-mean`", (_TTFT_BURST,)),
        DisplaySymbol(r"\bar{t}_{\mathrm{TTFT}}^{\mathrm{steady}}", "s",
                      "mean TTFT of the requests that replace those that ended, "
                      "{eq}`eq-queue-closed-mean`, in {eq}`eq-queue-run-mean`", (_TTFT_STEADY,)),
    )


def _nccl_constants() -> dict:
    coll, protocols = _protocols()
    out = {}
    for protocol in protocols:
        out[_protocol_symbol("lat", protocol.name)] = coll.protocol_latency().rhs.subs(
            protocol.values())
        out[_protocol_symbol("bw", protocol.name)] = coll.protocol_bandwidth_time().rhs.subs(
            protocol.values())
    return out


@form("eq-coll-nccl", "the protocols' times named t_lat^π + t_bw^π (eq-coll-latency, "
      "eq-coll-bandwidth with the table's constants) instead of 7/250000 s, 17/2500000 s",
      constants=_nccl_constants)
def _nccl():
    coll, protocols = _protocols()
    times = [sp.Add(_protocol_symbol("lat", p.name), _protocol_symbol("bw", p.name),
                    evaluate=False) for p in protocols]
    cheapest = WrittenMin(*times)
    return sp.Eq(coll.nccl_time().lhs,
                 sp.Piecewise((0, S.n_ranks <= 1), (cheapest, True)), evaluate=False)


def _over_groups(expr):
    return sp.Sum(sp.Indexed(expr, S.grp), (S.grp, 1, S.n_groups))


@form("eq-full-grouped-latency", "kernels, network, the hops counted once, then the overlap of the "
      "summed memory and arithmetic, as eq-full-forward-latency is written")
def _grouped_latency():
    from ..fullmodel import full_model as fm

    kernels = _mul(fm.KERNELS_PER_LAYER, S.t_kernel, _over_groups(S.n_layers))
    hops = _mul(-1, sp.Add(S.n_groups, -1, evaluate=False), S.t_pipe)
    overlap = WrittenMax(_over_groups(S.t_mem), _over_groups(S.t_flop))
    return sp.Eq(fm.grouped_latency().lhs,
                 sp.Add(kernels, _over_groups(S.t_net), hops, overlap, evaluate=False),
                 evaluate=False)


_EP_RANKS = sp.Symbol("r", positive=True)  # the ranks of a token's all-to-all


def _ep_ranks():
    return {_EP_RANKS: sp.Min(S.n_active, S.n_ep)}


@form("eq-full-expert-nodes", "the ranks min(n_active, N_EP) named r", constants=_ep_ranks, where=True)
def _expert_nodes_packed():
    from ..fullmodel import full_model as fm

    return sp.Eq(fm.expert_nodes_eq().lhs,
                 sp.ceiling(_mul(_EP_RANKS, _pow(S.node_size, -1)), evaluate=False), evaluate=False)


@form("eq-phys-expert-nodes", "the ranks min(n_active, N_EP) named r, as in eq-full-expert-nodes",
      constants=_ep_ranks, where=True)
def _expert_nodes_spread():
    from ..fullmodel import physical_rules as phys

    return sp.Eq(phys.expert_nodes_eq().lhs,
                 WrittenMin(_EP_RANKS, sp.ceiling(S.n_ep / S.node_size)), evaluate=False)


# --- the physical rules ------------------------------------------------------------------------

def _shared_params():
    """n_sh (m_in + m_out) d_model d_sh L, as written."""
    return _mul(S.n_sh, sp.Add(S.n_ff_in, S.n_ff_out, evaluate=False), S.d_model, S.d_ff_shared,
                S.n_layers)


_NODE_SHARE = sp.Symbol(r"s_{\mathrm{node}}", nonnegative=True)  # eq-coll-all-to-all's
_NIC_SHARE = sp.Symbol(r"s_{\mathrm{NIC}}", nonnegative=True)


@form("eq-coll-all-to-all", "the shares of the message that cross the node's links and that "
      "leave it through the GPU's own NIC named, each over its link's bandwidth",
      constants=lambda: {_NODE_SHARE: sp.Max(0, 1 / S.n_nodes_c - 1 / S.sigma_attn),
                         _NIC_SHARE: sp.Min(1 - 1 / S.sigma_attn, 1 - 1 / S.n_nodes_c)},
      where=True)
def _all_to_all():
    coll, _ = _protocols()
    shares = WrittenMax(_mul(_NODE_SHARE, _pow(S.bw_ar_intra, -1)),
                        _mul(_NIC_SHARE, _pow(S.bw_ar_inter, -1)))
    return sp.Eq(coll.all_to_all_bandwidth_time().lhs,
                 _mul(S.h_coll, S.msg_bytes, _pow(S.bw_eff, -1), shares),
                 evaluate=False)


def _cache_read():
    from ..fullmodel import physical_rules as phys
    return {S.read_cmp: phys.cache_read_bytes()}


@form("eq-phys-memory-time", "the bytes of one pass in the order of a layer (attention, shared "
      "experts, routed experts), then the cache read (eq-compressed-read: the main cache at its "
      "selection, the indexer's keys whole, a compressed layer's window and state), the "
      "indexers' weights and the head, over the stage's bandwidth", constants=_cache_read,
      where=True)
def _phys_memory_time():
    from ..fullmodel import full_model as fm
    from ..fullmodel import physical_rules as phys

    per_gpu = _mul(S.n_pp, _pow(_mul(S.n_gpu, S.hbm_bw), -1))
    cache = _mul(phys.kv_copies_eq().rhs, S.read_cmp, S.b_mu)
    indexers = _mul(S.sigma_attn, fm.N_TP_ATTN, S.p_attn, S.w_idx)
    head = _mul(S.p_emb, S.vocab, S.d_model)
    layers = sp.Add(phys.attention_bytes_dp(), phys.shared_bytes(), fm.ff_bytes(shared=False),
                    evaluate=False)
    return sp.Eq(phys.memory_time().lhs,
                 _mul(per_gpu, sp.Add(_mul(S.n_layers, layers), cache, indexers, head,
                                      evaluate=False)),
                 evaluate=False)


def _sparse_read():
    from ..derivations import sparse_attention
    mean = sparse_attention.mean_read().rhs
    return {S.ctx_read: mean, S.ctx_wread: mean.subs(S.k_top, S.ctx_win)}


# the indexer's scoring in eq-phys-flop-time: every GPU of the attention group scores the whole
# cache (DeepSeek's indexer, ξ_I = 1) or each scores for its own query heads (ξ_I = 0); the two
# cases are written out, the flag is not shown
_INDEXER_COPIES = sp.Symbol(r"r_{\mathrm{I}}", positive=True)


class _IndexerCases(FlagCases):
    cases = ("indexer on every GPU", "indexer split by heads")


def _flop_time_constants() -> dict:
    from ..fullmodel import full_model as fm
    return {**_sparse_read(), _INDEXER_COPIES: _IndexerCases(S.xi_idx, fm.N_TP_ATTN, 1)}


@form("eq-phys-flop-time", "attention's projections over the FLOP/s of their weights' "
      "precision, then the other weights each token multiplies, the head's q_LM tokens, then "
      "attention over the entries it selects (r_c tokens to an entry) and its window, the "
      "indexer over the whole cache r_I times (named under the equation: on every GPU of the "
      "attention group, or once, split with the heads), then the indexer's projections on the "
      "group's other GPUs, over the instance's FLOP/s; attention over the cache over its FLOP/s "
      "at the cache's precision", constants=_flop_time_constants, where=True)
def _phys_flop_time():
    from ..fullmodel import physical_rules as phys

    weights = sp.Add(_mul(S.n_ff, _pow(S.s, -1)), _shared_params(), evaluate=False)
    context = sp.Add(S.ctx, _mul(sp.Add(S.q_len, -1, evaluate=False), _pow(2, -1)),
                     evaluate=False)
    from ..fullmodel import full_model as fm

    entries = sp.Add(_mul(S.ctx_read, _pow(S.r_cmp, -1)), S.ctx_wread, evaluate=False)
    indexer = _mul(S.n_layers, _INDEXER_COPIES, S.f_idx, context, S.b, S.q_len)
    replicas = _mul(2, sp.Add(fm.N_TP_ATTN, -1, evaluate=False), S.w_idx, S.b, S.q_len)
    numerator = sp.Add(_mul(2, weights, S.b, S.q_len),
                       _mul(2, S.vocab, S.d_model, S.b, S.q_lm), indexer, replicas,
                       evaluate=False)
    over_cache = _mul(S.n_layers, 4, S.d_head, S.n_q, entries, S.b, S.q_len)
    projections = _mul(2, S.n_attn, S.b, S.q_len)
    return sp.Eq(phys.flop_time().lhs,
                 sp.Add(_mul(projections, _pow(_mul(S.n_gpu, S.flops_proj), -1)),
                        _mul(numerator, _pow(_mul(S.n_gpu, S.flops), -1)),
                        _mul(over_cache, _pow(_mul(S.n_gpu, S.flops_attn), -1)),
                        evaluate=False), evaluate=False)


def _cache_held():
    from ..fullmodel import physical_rules as phys
    return {S.held_cmp: phys.cache_stored_bytes()}


@form("eq-phys-memory-need", "the weights by how many copies the layout holds, each block at its "
      "own bytes (attention with its router and indexers, shared experts, routed experts), the "
      "embeddings at their own bytes, the indexers' copies on the group's other GPUs, then the whole batch's "
      "caches (eq-compressed-held: main, indexer, window and state) with their copies",
      constants=_cache_held, where=True)
def _phys_memory_need():
    from ..fullmodel import full_model as fm
    from ..fullmodel import physical_rules as phys

    copies = fm.N_TP_ATTN * S.g / S.n_q
    replicas = _mul(S.sigma_attn, sp.Add(fm.N_TP_ATTN, -1, evaluate=False), S.w_idx)
    weights = sp.Add(_mul(S.p_attn, sp.Add(_mul(S.sigma_attn, S.n_attn), replicas, evaluate=False)),
                     _mul(S.p_sh, S.sigma_attn, _shared_params()), _mul(S.p, S.n_ff),
                     evaluate=False)
    cache = _mul(WrittenMax(1, copies), S.held_cmp, S.b)
    return sp.Eq(phys.memory_need().lhs,
                 sp.Add(weights, _mul(S.p_emb, S.n_unembed), cache, evaluate=False),
                 evaluate=False)


@form("eq-sparse-mean-read", "the causal mean ℓ + (q − 1)/2 as in eq-full-flops; the partly "
      "selected case as k_sel less the entries the first k_sel − ℓ queries do not reach")
def _sparse_mean_read():
    from ..derivations import sparse_attention

    reach = sp.Add(S.k_top, -S.ctx, evaluate=False)
    partly = sp.Add(S.k_top, -_mul(reach, sp.Add(S.k_top, -S.ctx, 1, evaluate=False),
                                   _pow(_mul(2, S.q_len), -1)), evaluate=False)
    causal = sp.Add(S.ctx, _mul(sp.Add(S.q_len, -1, evaluate=False), _pow(2, -1)),
                    evaluate=False)
    last = sp.GreaterThan(S.k_top, sp.Add(S.ctx, S.q_len, -1, evaluate=False), evaluate=False)
    return sp.Eq(sparse_attention.mean_read().lhs,
                 sp.Piecewise((causal, last), (S.k_top, S.ctx >= S.k_top), (partly, True)),
                 evaluate=False)


@form("eq-compressed-attn-params", "the projections in the order a token meets them: the "
      "query's down and up, the cache head, the grouped output's down and up")
def _compressed_attn_params():
    from ..derivations import compressed_attention as ca

    rhs = sp.Add(_mul(S.d_model, S.c_q), _mul(S.c_q, S.n_q, S.d_kv), _mul(S.d_model, S.d_kv),
                 _mul(S.n_q, S.d_kv, S.r_o), _mul(S.n_og, S.r_o, S.d_model), evaluate=False)
    return sp.Eq(ca.attention_params().lhs, rhs, evaluate=False)


@form("eq-compressed-hc-params", "two matrices, each from the m_hc·d_model streams to the "
      "(2 + m_hc)·m_hc mixing weights")
def _compressed_hc_params():
    from ..derivations import compressed_attention as ca

    rhs = _mul(2, sp.Add(2, S.m_hc, evaluate=False), S.m_hc, S.m_hc, S.d_model)
    return sp.Eq(ca.hyper_connection_params().lhs, rhs, evaluate=False)


@form("eq-compressed-compressor-params", "the two projections, then the score offsets")
def _compressed_compressor_params():
    from ..derivations import compressed_attention as ca

    rhs = sp.Add(_mul(2, S.d_model, S.c_ov, S.d_kv), _mul(S.r_cmp, S.c_ov, S.d_kv),
                 evaluate=False)
    return sp.Eq(ca.compressor_params().lhs, rhs, evaluate=False)


@form("eq-compressed-held", "what grows with the context, then the window, then the state")
def _compressed_held():
    from ..derivations import compressed_attention as ca

    rhs = sp.Add(_mul(sp.Add(S.kv_layer, S.kv_idx, evaluate=False), S.ctx),
                 _mul(S.kv_win, sp.Min(S.ctx, S.ctx_win)), S.st_cmp, evaluate=False)
    return sp.Eq(ca.held_bytes().lhs, rhs, evaluate=False)


@form("eq-compressed-read", "the selected entries, the indexer's keys, the window, the state")
def _compressed_read():
    from ..derivations import compressed_attention as ca

    rhs = sp.Add(_mul(S.kv_layer, sp.Min(S.ctx, S.k_top)), _mul(S.kv_idx, S.ctx),
                 _mul(S.kv_win, sp.Min(S.ctx, S.ctx_win)), _mul(S.st_cmp, _pow(S.r_cmp, -1)),
                 evaluate=False)
    return sp.Eq(ca.read_bytes().lhs, rhs, evaluate=False)


# --- lookup -------------------------------------------------------------------------------------

@cache
def _by_result() -> dict:
    return {DERIVATIONS[label].function(): label for label in FORMS}


def label_of(eq: sp.Basic) -> str | None:
    """The label of the derivation with a display form whose result ``eq`` is, if any."""
    try:
        return _by_result().get(eq)
    except TypeError:  # an unhashable object
        return None




@form("eq-est-experts-hit", "the chance that one token misses an expert written 1 − n_active/n_expert")
def _experts_hit():
    from ..serving import estimate_rules as er

    miss = sp.Add(1, _mul(-1, S.n_active, _pow(S.n_experts, -1)), evaluate=False)
    hit = sp.Add(1, _mul(-1, _pow(miss, S.m_tokens)), evaluate=False)
    return sp.Eq(er.experts_hit().lhs, _mul(S.n_experts, hit), evaluate=False)


def _busiest_rank_written():
    """1 + ρ_r √(2 (N_EP − 1) ln N_EP / (m k)), at most N_EP, as written."""
    spread = _mul(2, sp.Add(S.n_ep, -1, evaluate=False), sp.log(S.n_ep),
                  _pow(_mul(S.m_tokens, S.n_active), -1))
    return WrittenMin(sp.Add(1, _mul(S.rho_route, _pow(spread, R(1, 2))), evaluate=False),
                      S.n_ep)


@form("eq-est-busiest-rank", "one plus the excess, the spread's square root whole")
def _busiest_rank():
    from ..serving import estimate_rules as er

    return sp.Eq(er.busiest_rank().lhs, _busiest_rank_written(), evaluate=False)


def _estimate_fractions():
    from ..serving import estimate_rules as er

    return {S.psi_mem: er.bandwidth_fraction().rhs, S.psi_flop: er.flop_fraction().rhs,
            S.psi_exp: er.expert_flop_fraction().rhs, S.lam_rank: _busiest_rank_written()}


@form("eq-est-step-latency", "the fractions of eq-est-bandwidth-fraction, eq-est-flop-fraction "
      "and eq-est-expert-flop-fraction and the busiest rank of eq-est-busiest-rank named; the "
      "network time's serial part first", constants=_estimate_fractions, where=True)
def _estimate_step():
    from ..serving import estimate_rules as er

    rest = _mul(sp.Add(S.t_flop, -S.t_flop_exp, evaluate=False), _pow(S.psi_flop, -1))
    experts = _mul(S.lam_rank, S.t_flop_exp, _pow(S.psi_exp, -1))
    longest = WrittenMax(_mul(S.omega_net, S.t_net), _mul(S.t_mem, _pow(S.psi_mem, -1)),
                         sp.Add(rest, experts, evaluate=False))
    serial = _mul(sp.Add(1, -S.omega_net, evaluate=False), S.t_net)
    return sp.Eq(er.step_latency().lhs, sp.Add(S.t_fixed_step, serial, longest, evaluate=False),
                 evaluate=False)


# eq-queue-run-mean's two kinds of request, each with its own mean TTFT
_TTFT_BURST = sp.Symbol(r"\bar{t}_{\mathrm{TTFT}}^{\mathrm{burst}}", positive=True)
_TTFT_STEADY = sp.Symbol(r"\bar{t}_{\mathrm{TTFT}}^{\mathrm{steady}}", positive=True)


def _run_means():
    from ..derivations import queueing as q

    # the burst's mean as (t_burst / 2)(1 + T_in (b + 1) / C): half a step, then the steps of
    # the prompts ahead, b + 1 whole
    ahead = _mul(S.t_prompt, sp.Add(S.b, 1, evaluate=False), _pow(S.chunk, -1))
    burst = _mul(_mul(S.t_burst, _pow(2, -1)), sp.Add(1, ahead, evaluate=False))
    return {_TTFT_BURST: burst, _TTFT_STEADY: q.closed_mean().rhs}


@form("eq-queue-run-mean", "the burst's and the steady state's means named, each weighed by its "
      "share of the run; the burst's mean as half a step and the steps of the prompts ahead",
      constants=_run_means, where=True, written_where=True)
def _run_mean():
    from ..derivations import queueing as q

    share = _mul(S.b, _pow(S.n_run, -1))
    rest = sp.Add(1, -share, evaluate=False)
    return sp.Eq(q.run_mean().lhs, sp.Add(_mul(share, _TTFT_BURST), _mul(rest, _TTFT_STEADY),
                                          evaluate=False), evaluate=False)


def display_eq(eq: sp.Basic) -> sp.Basic:
    """What the book prints for ``eq``: its display form if it is a derivation's result that has
    one, else ``eq`` itself."""
    label = label_of(eq)
    return FORMS[label].build() if label else eq


def where_lines(eq: sp.Basic) -> list[tuple[sp.Symbol, sp.Basic, bool]]:
    """The auxiliary quantities shown under ``eq``'s display form: (symbol, value, written)
    triples, ``written`` if the value is printed in the order it is written (a form's own
    quantities, or a minimum or maximum written for reading)."""
    label = label_of(eq)
    if not label or not FORMS[label].where:
        return []
    shown = FORMS[label]
    return [(symbol, value, shown.written_where or value.has(WrittenMin, WrittenMax))
            for symbol, value in shown.constants().items()]


@form("eq-sharding-wg-switch-2d", "numerator and denominator divided by N_GPU d_model")
def _wg_switch_2d():
    eq = DERIVATIONS["eq-sharding-wg-switch-2d"].function()
    ratio = _pow(_mul(S.d_ff, _pow(S.d_model, -1)), R(1, 2))
    gap = sp.Add(_mul(2, S.n_wg, ratio), -sp.sqrt(S.n_gpu), evaluate=False)
    return sp.Eq(eq.lhs, sp.Mul(_pow(S.n_wg, 2), S.d_ff, _pow(_mul(sp.sqrt(S.n_gpu), gap), -1),
                                evaluate=False), evaluate=False)


_CORNER_DET = sp.Symbol("D", real=True)  # eq-sens-corner's determinant
# each constraint's slope when N and b grow together (more replicas, the same cost per token)
_CORNER_S1, _CORNER_S2 = sp.symbols("s_1 s_2", real=True)


@form("eq-sens-corner", "the price's elasticity first, then each constraint's movement in x "
      "weighted by the other's slope when N and b grow together (s_k), over the corner's "
      "determinant D", constants=lambda: {_CORNER_S1: S.g1_n + S.g1_b,
                                           _CORNER_S2: S.g2_n + S.g2_b,
                                           _CORNER_DET: S.g1_n * S.g2_b - S.g1_b * S.g2_n},
      where=True)
def _sens_corner():
    from ..analysis import sensitivity as sens

    top = sp.Add(_mul(S.g2_x, _CORNER_S1), -_mul(S.g1_x, _CORNER_S2), evaluate=False)
    rhs = sp.Add(S.eps_price, sp.Mul(top, _pow(_CORNER_DET, -1), evaluate=False), evaluate=False)
    return sp.Eq(sens.corner().lhs, rhs, evaluate=False)


# --- one linear-attention layer: its matrices in the order of the layer -------------------------

# the channels that the queries, keys and values of a linear-attention layer span together
_QKV = sp.Symbol(r"w_{\mathrm{qkv}}", positive=True)


def _qkv() -> dict:
    return {_QKV: 2 * S.n_lk * S.d_lk + S.n_lv * S.d_lv}


def _values():
    return _mul(S.n_lv, S.d_lv)


@form("eq-layers-attention-linear", "the projections of queries, keys and values, the gates', "
      "the convolution, then the output projection, as the layer applies them; the queries', "
      "keys' and values' channels named w_qkv", constants=_qkv, where=True)
def _linear_attention():
    gates = _mul(S.n_lv, sp.Add(S.d_lv, 2, evaluate=False), S.d_model)  # output, decay, update
    return sp.Eq(S.n_attn_layer, sp.Add(_mul(_QKV, S.d_model), gates, _mul(S.k_conv, _QKV),
                                        _mul(_values(), S.d_model), evaluate=False),
                 evaluate=False)


@form("eq-layers-attention-kda", "the projections, the convolution over queries, keys and "
      "values, the two low-rank gates, then the output projection, as the layer applies them; "
      "the queries', keys' and values' channels named w_qkv", constants=_qkv, where=True)
def _kda_attention():
    projections = _mul(sp.Add(_QKV, S.n_lv, evaluate=False), S.d_model)
    gates = _mul(2, S.d_lv, sp.Add(S.d_model, _values(), evaluate=False))
    return sp.Eq(S.n_attn_layer, sp.Add(projections, _mul(S.k_conv, _QKV), gates,
                                        _mul(_values(), S.d_model), evaluate=False),
                 evaluate=False)


# --- MLA's two forms (physical rule 11): each form's FLOPs named under the equation ---------------

_F_ABSORBED = sp.Symbol(r"F_{\mathrm{abs}}", positive=True)
_F_MULTI_HEAD = sp.Symbol(r"F_{\mathrm{MHA}}", positive=True)


def _causal_mean():
    return sp.Add(S.ctx, _mul(sp.Add(S.q_len, -1, evaluate=False), _pow(2, -1)), evaluate=False)


def _mla_forms() -> dict:
    two = lambda *terms: _mul(2, sp.Add(*terms, evaluate=False))  # noqa: E731
    absorbed = _mul(S.n_q, S.q_len, sp.Add(two(S.c_kv, S.d_rope), _mul(2, S.c_kv),
                                           evaluate=False), _causal_mean())
    scores = sp.Add(two(S.d_nope, S.d_rope), _mul(2, S.d_head), evaluate=False)
    multi_head = sp.Add(_mul(S.n_q, S.q_len, scores, _causal_mean()),
                        _mul(2, S.c_kv, S.n_q, sp.Add(S.d_nope, S.d_head, evaluate=False), S.ctx),
                        evaluate=False)
    return {_F_ABSORBED: absorbed, _F_MULTI_HEAD: multi_head}


class _CanUpProject(StatedCondition):
    """ξ_MHA > 0, said as what it means: the layer holds the up-projections multi-head attention
    needs (a compressed layer does not, and runs absorbed only)."""

    words = "it can up-project"


@form("eq-phys-mla-attention-flops", "the two forms named under the equation, each written as "
      "the layer runs it: per head and entry the scores' and the sums' widths, times the causal "
      "mean context ℓ + (q − 1)/2; the multi-head form's up-projection of the ℓ cached latents",
      constants=_mla_forms, where=True)
def _mla_attention_flops():
    eq = DERIVATIONS["eq-phys-mla-attention-flops"].function()
    return sp.Eq(eq.lhs, sp.Piecewise((sp.Min(_F_ABSORBED, _F_MULTI_HEAD, evaluate=False),
                                       _CanUpProject(S.xi_mha > 0)), (_F_ABSORBED, True)),
                 evaluate=False)


# eq-serve-mixed-split's three parts of the binding resource's time: the chunk's own, the decode
# tokens' own and the part both would use alone (the weights' read when memory binds)
_SPLIT_IN, _SPLIT_OUT, _SPLIT_SHARED = sp.symbols(
    r"v_{\mathrm{in}} v_{\mathrm{out}} v_{\mathrm{sh}}", nonnegative=True, real=True)


@form("eq-serve-mixed-split", "the chunk's own part and its token share of the shared part, over "
      "the three parts (each named under the equation)",
      constants=lambda: {_SPLIT_IN: sp.Max(0, S.u_mix - S.u_dec),
                         _SPLIT_OUT: sp.Max(0, S.u_mix - S.u_chunk),
                         _SPLIT_SHARED: sp.Max(0, S.u_dec + S.u_chunk - S.u_mix)},
      where=True)
def _serve_mixed_split():
    eq = DERIVATIONS["eq-serve-mixed-split"].function()
    share = _mul(S.chunk, _pow(sp.Add(S.chunk, S.b, evaluate=False), -1))
    top = sp.Add(_SPLIT_IN, _mul(share, _SPLIT_SHARED), evaluate=False)
    bottom = sp.Add(_SPLIT_IN, _SPLIT_OUT, _SPLIT_SHARED, evaluate=False)
    return sp.Eq(eq.lhs, _mul(top, _pow(bottom, -1)), evaluate=False)


@form("eq-serve-gpu-seconds", "the plain steps, then the mixed steps' output and input sides, each "
      "weighted by the share of steps that carry a chunk (f_mix, named under the equation)",
      constants=lambda: {S.f_mix: S.t_prompt * S.b / (S.chunk * S.t_output)}, where=True)
def _serve_gpu_seconds():
    eq = DERIVATIONS["eq-serve-gpu-seconds"].function()
    plain = _mul(sp.Add(1, -S.f_mix, evaluate=False), S.t_dec)
    out = _mul(S.f_mix, sp.Add(1, -S.phi_in, evaluate=False), S.t_mix)
    inp = _mul(S.f_mix, S.phi_in, S.t_mix)
    return sp.Eq(eq.lhs, sp.Add(plain, out, inp, evaluate=False), evaluate=False)


# --- requests at a rate: the step's fixed point with its denominator as read --------------------

@form("eq-serve-open-loop-step", "t_fix over 1 − Λ T_out t_seq, not −t_fix over its negation")
def _open_loop_step():
    eq = DERIVATIONS["eq-serve-open-loop-step"].function()
    load = _mul(S.lam_req, S.t_output, S.t_step_seq)
    return sp.Eq(eq.lhs, sp.Mul(S.t_step_fixed,
                                _pow(sp.Add(1, _mul(-1, load), evaluate=False), -1),
                                evaluate=False), evaluate=False)
