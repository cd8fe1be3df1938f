"""The full model's terms composed for one structure of a branch, as SymPy expressions.

:func:`term_expression` gives one term of eq-full-forward-latency (the reference code's rules,
:mod:`inference_math.fullmodel.full_model`) or of eq-phys-forward-latency (the physical rules
and the limit, :mod:`inference_math.fullmodel.physical_rules`) for a :class:`~.branch.Structure`,
in (N, b, N_PP, σ) and the constants of :data:`~.branch.CONSTANTS`: the unevaluated matmul and
collective functions replaced by their derivations (eq-full-matmul-bytes, eq-coll-*), the layout's
degrees by N, b, N_PP and σ. :mod:`inference_math.codegen.full_model_codegen` writes these as
the NumPy modules :mod:`inference_math.fullmodel.branch` evaluates; no command imports this one.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..core.symbols import (
    b,
    b_mu,
    hbm_cap,
    mm_k,
    mm_m,
    mm_n,
    msg_bytes,
    n_ep,
    n_gpu,
    n_layers,
    n_nodes_c,
    n_pp,
    n_ranks,
    n_tp,
    p,
    sigma_attn,
    t_kernel,
)
from ..derivations.moe import expert_fraction_read
from . import collectives as coll
from . import physical_rules as phys
from .branch import KERNELS_PER_LAYER, Structure
from .full_model import (
    A2A,
    AR,
    F_USED,
    N_TP_ATTN,
    N_TP_FF,
    P2P,
    RW,
    expert_parallel_degree,
    flop_parts,
    matmul_bytes,
    memory_need,
    memory_parts,
    network_parts,
    network_time,
    tokens,
)


def _rw(m, k, n, tp, weight=None):
    """eq-full-matmul-bytes at (m, k, n, tp), its weights at ``weight`` bytes (default p)."""
    values = {mm_m: m, mm_k: k, mm_n: n, n_tp: tp}
    if weight is not None:
        values[p] = weight
    return matmul_bytes().rhs.subs(values, simultaneous=True)


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
        ep = phys.expert_parallel_degree().rhs
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
