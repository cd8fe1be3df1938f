"""One GPU decoding a dense model at short context (Erdil 2025, section 2.1).

A decoding step reads every weight once and does two FLOP per weight per sequence in the batch;
with memory reads and arithmetic overlapped, the step takes the larger of the two times.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import b, b_star, flops, gpu_s, hbm_bw, n_param, p, t_token

#: FLOP per parameter per token of a forward pass (one multiply and one add).
FLOP_PER_PARAM = sp.Integer(2)


def memory_time() -> sp.Expr:
    """Time to stream every weight from HBM once: p·N/B."""
    return p * n_param / hbm_bw


def arithmetic_time() -> sp.Expr:
    """Time of the arithmetic of one step for a batch of b sequences: 2·N·b/C."""
    return FLOP_PER_PARAM * n_param * b / flops


@derivation("eq-roofline-token-latency", "Erdil (2025), eq. 1")
def token_latency() -> sp.Eq:
    """Token latency of a single-GPU instance (book eq-roofline-token-latency, paper eq. 1)."""
    return sp.Eq(t_token, sp.Max(memory_time(), arithmetic_time()))


@derivation("eq-roofline-gpu-seconds", "Erdil (2025), eq. 2")
def gpu_seconds_per_token() -> sp.Eq:
    """GPU-seconds per token, latency/b (book eq-roofline-gpu-seconds, paper eq. 2).

    Dividing a maximum by the positive b divides each of its arguments.
    """
    latency = token_latency().rhs
    return sp.Eq(gpu_s, sp.Max(*(sp.expand(arg / b) for arg in latency.args)))


@derivation("eq-roofline-critical-batch", "Erdil (2025), sec. 2.1")
def critical_batch() -> sp.Eq:
    """Critical batch b* = p·C/(2·B) (book eq-roofline-critical-batch).

    Solved from memory time = arithmetic time.
    """
    (solution,) = sp.solve(sp.Eq(memory_time(), arithmetic_time()), b)
    return sp.Eq(b_star, solution)


def regimes_around_critical_batch() -> dict[str, sp.Expr]:
    """Latency and cost on either side of b*, the facts behind "b* is optimal".

    Below b* the step is memory bound: latency is p·N/B whatever b, and cost falls as 1/b.
    Above b* it is compute bound: cost is the floor 2·N/C whatever b, and latency grows with b.
    So b* gives the lowest cost without raising latency.
    """
    mem, ari = memory_time(), arithmetic_time()
    return {
        "latency_below": mem,
        "cost_below": sp.expand(mem / b),
        "latency_above": ari,
        "cost_above": sp.expand(ari / b),
    }
