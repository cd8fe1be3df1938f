"""Serving engines: how prefill and decode share hardware (Austin et al. 2025, "Tricks").

Prefill runs every prompt token through the model at once and is compute bound; decode produces
one token per sequence per step and is memory bound below the critical batch. The closed forms
here size a disaggregated deployment from the roofline of :mod:`roofline`, price a prefix-cache
hit, and count the tokens a speculative step yields.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    accept,
    b,
    b_star,
    flops,
    gamma,
    kv_bytes,
    n_gpu,
    n_param,
    n_prefix,
    prefill_fraction,
    r_xfer,
    server_ratio,
    t_output,
    t_prompt,
    tokens_per_step,
    w_xfer,
)
from .roofline import FLOP_PER_PARAM, arithmetic_time, critical_batch, gpu_seconds_per_token


@derivation("eq-serving-prefill-decode-ratio", "this book, from Austin et al. (2025) and Erdil (2025) eq. 2")
def prefill_decode_server_ratio() -> sp.Eq:
    """Chips for prefill per chip for decode when both keep up with the same requests.

    (eq-serving-prefill-decode-ratio.) A request costs T_in prompt tokens at the compute-bound rate
    2·N/C chip-seconds each, and T_out generated tokens at the decode cost of eq. 2 at batch b.
    """
    prefill_cost = t_prompt * arithmetic_time().subs(b, 1)  # chip-seconds, compute bound
    decode_cost = t_output * gpu_seconds_per_token().rhs
    return sp.Eq(server_ratio, prefill_cost / decode_cost)


def prefill_decode_ratio_below_critical_batch() -> sp.Expr:
    """The ratio of eq-serving-prefill-decode-ratio for b <= b*, written through b*: (T_in/T_out)·(b/b*).

    Below b* decode is memory bound (the b-dependent term of the maximum); C is then eliminated
    with b* = p·C/(2·B) (eq-roofline-critical-batch).
    """
    ratio = prefill_decode_server_ratio().rhs
    memory_bound = ratio.replace(sp.Max, lambda *args: next(a for a in args if a.has(b)))
    (c_from_b_star,) = sp.solve(sp.Eq(b_star, critical_batch().rhs), flops)
    return sp.simplify(memory_bound.subs(flops, c_from_b_star))


@derivation("eq-serving-prefix-cache", "Austin et al. (2025), prefix caching")
def prefix_cache_fraction() -> sp.Eq:
    """Share of a prompt's prefill work left when its first T_cached tokens hit the cache.

    (eq-serving-prefix-cache.) Counting the matmul work, which is linear in tokens: the cached
    tokens' keys and values are read, not recomputed.
    """
    return sp.Eq(prefill_fraction, (t_prompt - n_prefix) / t_prompt)


@derivation("eq-serving-speculative-tokens", "Leviathan et al. (2023), eq. 1")
def speculative_tokens_per_step() -> sp.Eq:
    """Expected tokens per target forward pass with gamma drafted tokens (eq-serving-speculative-tokens).

    Token i of the draft is kept only if all before it were accepted (probability alpha^i); the
    target's own token after the last accepted one always counts. Summing the geometric series:
    (1 - alpha^(gamma+1)) / (1 - alpha), assuming independent acceptances.
    """
    i = sp.Symbol("i", integer=True, nonnegative=True)  # a summation index, not a model quantity
    series = sp.summation(accept**i, (i, 0, gamma))
    # SymPy returns Piecewise((gamma + 1, alpha == 1), (closed form, True)); alpha < 1 here.
    closed = series.args[1][0] if isinstance(series, sp.Piecewise) else series
    return sp.Eq(tokens_per_step, sp.powsimp(sp.factor(closed)))


@derivation("eq-serving-kv-transfer", "Austin et al. (2025), sec. 'JetStream' (transfer thread; derived)")
def kv_transfer_ratio() -> sp.Eq:
    """KV-cache transfer time over prefill time for one prompt: M_KV·C/(2·N_param·W_xfer).

    (eq-serving-kv-transfer.) A prompt of T_in tokens prefilled on N_GPU compute-bound chips takes
    2·N_param·T_in/(N_GPU·C); each chip then sends its 1/N_GPU share of the cache, M_KV·T_in/N_GPU
    bytes, over its own link. The prompt length and the chip count cancel.
    """
    prefill = FLOP_PER_PARAM * n_param * t_prompt / (n_gpu * flops)
    transfer = kv_bytes * t_prompt / (n_gpu * w_xfer)
    return sp.Eq(r_xfer, sp.simplify(transfer / prefill))
