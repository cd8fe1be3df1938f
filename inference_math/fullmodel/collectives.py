"""Collective communication time: NCCL's protocol model, and the torus model for TPUs.

The full model of Erdil (2025) charges every all-reduce, all-to-all and pipeline hop with the
cost model NCCL itself uses to choose an algorithm: a latency that grows with the ranks in a
node and with the logarithm of the nodes, plus the bytes over the bandwidth the protocol
reaches. Three protocols trade latency for bandwidth (LL, LL128, Simple); the cheapest one is
taken at every point. The intra-node (NVLink) and inter-node (InfiniBand) transfers overlap, so
the bandwidth time is the larger of the two, not their sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    bw_ar_inter,
    bw_ar_intra,
    bw_eff,
    h_coll,
    lat_base,
    lat_node,
    lat_rank,
    m_coll,
    msg_bytes,
    n_nodes_c,
    n_ranks,
    sigma_attn,
    t_coll_bw,
    t_coll_lat,
    t_collective,
    t_hop,
)

US = sp.Rational(1, 10**6)


@dataclass(frozen=True)
class Protocol:
    """One NCCL protocol of the tuning model: latencies in seconds (exact), bandwidth fraction."""

    name: str
    per_rank: sp.Rational
    per_node_doubling: sp.Rational
    base: sp.Rational
    bandwidth_fraction: sp.Rational

    def values(self) -> dict:
        return {lat_rank: self.per_rank, lat_node: self.per_node_doubling, lat_base: self.base,
                bw_eff: self.bandwidth_fraction}


# The constants of the reference code of Erdil (2025), from NCCL's tuning tables.
PROTOCOLS = (
    Protocol("LL", sp.Rational(6, 10) * US, 5 * US, sp.Rational(68, 10) * US, sp.Rational(1, 2)),
    Protocol("LL128", sp.Rational(125, 100) * US, sp.Rational(85, 10) * US, 14 * US,
             sp.Rational(95, 100)),
    Protocol("Simple", 28 * US, 28 * US, sp.Integer(0), sp.Integer(1)),
)

ALL_REDUCE = {m_coll: 2, h_coll: 1}
ONE_WAY = {m_coll: 1, h_coll: sp.Rational(1, 2)}  # all-to-all and point-to-point


@derivation("eq-coll-latency", "Erdil (2025), eq. 23 and reference code")
def protocol_latency() -> sp.Eq:
    """Latency of one collective with one protocol (eq-coll-latency).

    m_c·[(n_ranks/n_nodes − 1)·a_π + h_π·log2 n_nodes] + t_0,π; m_c = 2 for an all-reduce.
    """
    per_node = n_ranks / n_nodes_c - 1
    return sp.Eq(t_coll_lat,
                 m_coll * (per_node * lat_rank + lat_node * sp.log(n_nodes_c, 2)) + lat_base)


@derivation("eq-coll-bandwidth", "Erdil (2025), eq. 24 and reference code")
def protocol_bandwidth_time() -> sp.Eq:
    """Bandwidth time of one collective with one protocol (eq-coll-bandwidth).

    The larger of the intra-node and the inter-node transfer (they overlap), each the message
    share that leaves a GPU over the bandwidth the protocol reaches; h_c = 1/2 for one-way
    collectives.
    """
    intra = n_nodes_c * sp.Max(0, n_ranks / n_nodes_c - 1) / bw_ar_intra
    inter = (n_nodes_c - 1) / bw_ar_inter
    return sp.Eq(t_coll_bw, h_coll * msg_bytes / (n_ranks * bw_eff) * sp.Max(intra, inter))


def protocol_time(protocol: Protocol) -> sp.Expr:
    """Latency plus bandwidth time of one collective with ``protocol``."""
    return (protocol_latency().rhs + protocol_bandwidth_time().rhs).subs(protocol.values())


@derivation("eq-coll-nccl", "Erdil (2025), reference code (NCCL tuning model)")
def nccl_time() -> sp.Eq:
    """Time of one collective: the cheapest protocol, zero on one rank (eq-coll-nccl)."""
    cheapest = sp.Min(*(protocol_time(p) for p in PROTOCOLS))
    return sp.Eq(t_collective, sp.Piecewise((0, n_ranks <= 1), (cheapest, True)))


@derivation("eq-coll-torus", "Erdil (2025), reference code (TPU collective model)")
def torus_time() -> sp.Eq:
    """Time of one collective on a TPU-style torus (eq-coll-torus).

    One hop of latency per extra rank (twice for an all-reduce) plus the ring's bandwidth term.
    """
    ring = m_coll * (n_ranks - 1) * t_hop + h_coll * (n_ranks - 1) * msg_bytes / (n_ranks * bw_ar_inter)
    return sp.Eq(t_collective, sp.Piecewise((0, n_ranks <= 1), (ring, True)))


TORUS_HOP_S = US  # the reference code's 1 µs per rank-hop on TPUs and Groq


def collective_time(model: str, kind: dict) -> sp.Expr:
    """Collective time for a collective model ('nccl' or 'torus') and a kind (ALL_REDUCE, ONE_WAY)."""
    if model == "nccl":
        return nccl_time().rhs.subs(kind)
    if model == "torus":
        return torus_time().rhs.subs(kind).subs(t_hop, TORUS_HOP_S)
    raise ValueError(f"unknown collective model {model!r} (known: nccl, torus)")


def collective_part(model: str, kind: dict, part: str) -> sp.Expr:
    """The 'latency' or 'bandwidth' part of a collective's time, at the protocol it uses."""
    if model == "torus":
        ring = torus_time().rhs.args[1][0].subs(kind).subs(t_hop, TORUS_HOP_S)
        lat = ring.subs(msg_bytes, 0)
        chosen = lat if part == "latency" else ring - lat
        return sp.Piecewise((0, n_ranks <= 1), (chosen, True))
    return _part_at_cheapest(protocol_latency().rhs.subs(kind),
                             protocol_bandwidth_time().rhs.subs(kind), part)


def _part_at_cheapest(lat: sp.Expr, bw: sp.Expr, part: str) -> sp.Expr:
    """The 'latency' or 'bandwidth' part of a collective at the protocol whose total is least
    (the first of equal ones), zero on one rank."""
    options = [(lat.subs(p.values()), bw.subs(p.values())) for p in PROTOCOLS]
    totals = [a + b for a, b in options]
    pieces = []
    for number, (a, b) in enumerate(options):
        cheapest = sp.And(*(totals[number] <= other for other in totals[number + 1:]))
        pieces.append((a if part == "latency" else b, cheapest))
    pieces[-1] = (pieces[-1][0], True)
    return sp.Piecewise((0, n_ranks <= 1), *pieces)


# --- the book's physical rules ------------------------------------------------------------
# The reference code charges an all-to-all like a ring: the share of the message that leaves a
# node is divided over all the ranks. An all-to-all has no ring: each GPU pushes the part of
# its own message bound for other nodes through its own NIC. The physical rules' all-to-alls
# are an MoE's dispatch and combine between σ attention groups, whose every GPU holds its
# group's tokens: what is bound for the sender's own group does not move.

@derivation("eq-coll-all-to-all", "this book (physical rules), from Erdil (2025), eq. 24")
def all_to_all_bandwidth_time() -> sp.Eq:
    """Bandwidth time of one expert all-to-all under the physical rules (eq-coll-all-to-all).

    The message M one GPU holds for its ranks is spread evenly over the n_nodes nodes and over
    the σ attention groups. The share 1/σ bound for its own group stays put (that group holds
    the token already); of the rest, min(1 − 1/σ, 1 − 1/n_nodes) lies on other nodes and leaves
    through the GPU's own NIC, and max(0, 1/n_nodes − 1/σ) lies on other GPUs of its node
    (a group inside one node; none when a group spans nodes). The local share is removed once:
    at σ = 1 nothing moves. Each share over its link's bandwidth, the two overlapping as in
    eq-coll-bandwidth.
    """
    node = sp.Max(0, 1 / n_nodes_c - 1 / sigma_attn)
    nic = sp.Min(1 - 1 / sigma_attn, 1 - 1 / n_nodes_c)
    return sp.Eq(t_coll_bw, h_coll * msg_bytes / bw_eff * sp.Max(node / bw_ar_intra,
                                                                 nic / bw_ar_inter))


def _torus_all_to_all(hop) -> sp.Expr:
    """eq-coll-torus for the expert all-to-all: its ring carries the share 1 − 1/σ of the
    message bound outside the sender's group (not the ring's (n − 1)/n: the local share once)."""
    ring = (m_coll * (n_ranks - 1) * t_hop
            + h_coll * (1 - 1 / sigma_attn) * msg_bytes / bw_ar_inter)
    return sp.Piecewise((0, n_ranks <= 1), (ring, True)).subs(ONE_WAY).subs(t_hop, hop)


def all_to_all_time(model: str) -> sp.Expr:
    """Time of one all-to-all under the physical rules: eq-coll-nccl with eq-coll-all-to-all's
    bandwidth time (on a torus the ring of eq-coll-torus, whose hops are the NICs')."""
    if model == "torus":
        return _torus_all_to_all(TORUS_HOP_S)
    bandwidth = all_to_all_bandwidth_time().rhs.subs(ONE_WAY)
    options = [(protocol_latency().rhs.subs(ONE_WAY) + bandwidth).subs(p.values())
               for p in PROTOCOLS]
    return sp.Piecewise((0, n_ranks <= 1), (sp.Min(*options), True))


def all_to_all_part(model: str, part: str) -> sp.Expr:
    """The 'latency' or 'bandwidth' part of :func:`all_to_all_time` at the protocol it uses."""
    if model == "torus":
        whole = _torus_all_to_all(TORUS_HOP_S)
        lat = whole.subs(msg_bytes, 0)
        return lat if part == "latency" else whole - lat
    return _part_at_cheapest(protocol_latency().rhs.subs(ONE_WAY),
                             all_to_all_bandwidth_time().rhs.subs(ONE_WAY), part)


@derivation("eq-coll-line-rate", "this book (the limit's collectives), from Erdil (2025), eq. 24")
def line_rate_time() -> sp.Eq:
    """Time of one collective at line rate (eq-coll-line-rate): the limit's collectives.

    eq-coll-bandwidth with every protocol's efficiency at 1 and no latency: no message crosses
    a link faster than the link carries bytes, and no measured or tuned latency constant (a
    property of a library, not of the hardware) enters a limit. On a torus, eq-coll-torus with
    no hop latency.
    """
    return sp.Eq(t_collective, sp.Piecewise(
        (0, n_ranks <= 1), (protocol_bandwidth_time().rhs.subs(bw_eff, 1), True)))


def line_rate(model: str, kind: dict, all_to_all: bool = False) -> sp.Expr:
    """eq-coll-line-rate for a collective model and kind; ``all_to_all`` with the NIC share of
    eq-coll-all-to-all."""
    if model == "torus":
        return _torus_all_to_all(0) if all_to_all else torus_time().rhs.subs(kind).subs(t_hop, 0)
    if all_to_all:
        bandwidth = all_to_all_bandwidth_time().rhs.subs(bw_eff, 1)
        return sp.Piecewise((0, n_ranks <= 1), (bandwidth, True)).subs(kind)
    return line_rate_time().rhs.subs(kind)
