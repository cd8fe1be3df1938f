"""Serving whole requests: prefill and decode together, aggregated or disaggregated.

A request brings T_in prompt tokens and takes T_out output tokens. A deployment is measured as
engineers compare them: output tokens per second per GPU with the GPU time of prefill counted,
against tokens per second per user (one over the time per output token).

*Aggregated serving with chunked prefill.* One instance of N GPUs decodes b sequences; each step
yields b output tokens. In steady state the prompts of the requests that replace finished ones
must be prefilled at the rate tokens leave: b/T_out requests per step, b·T_in/T_out prompt tokens
per step. They travel in chunks of C tokens inside decode steps (a step of b decode tokens and C
prompt tokens takes t_mix, a step without a chunk t_dec), so a share f_mix of the steps carries a
chunk (eq-serve-chunk-share) and a step takes t̄ on average (eq-serve-mean-step): the time per
output token. A prompt waits for the step in progress and rides ⌈T_in/C⌉ chunked
steps (eq-serve-aggregated-ttft): C is a step's budget of prompt tokens, and a step takes a
waiting prompt's tokens up to it.

*Disaggregated serving.* A prefill pool prefills P prompts per pass in t_pre on instances of
N_pre GPUs, sends each prompt's cache to the decode pool over the scale-out network
(eq-serve-kv-transfer), and a decode pool decodes b sequences per step of t_dec. The pools are
sized in the ratio of eq-prefill-disagg-ratio, which sets the output tokens per second per GPU of
the two pools together (eq-serve-disaggregated-rate).

The cost of a token at P $/GPU-hour is eq-search-cost at the GPU-seconds it takes: aggregated, a
mixed step's time divided between its chunk and its decode tokens by the resource that binds it
(eq-serve-mixed-split), an output token paying the plain steps and its side of the mixed ones
(eq-serve-gpu-seconds); disaggregated, its pool's time.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    b,
    bw_nic,
    chunk,
    f_mix,
    kv_prompt,
    lam_req,
    n_chunks,
    n_gpu,
    n_send,
    phi_in,
    price,
    rate_dec,
    rate_pre,
    rate_serve,
    t_dec,
    t_mix,
    t_output,
    t_pre,
    t_prompt,
    t_step_fixed,
    t_step_mean,
    t_step_seq,
    t_ttft,
    t_xfer,
    u_chunk,
    u_dec,
    u_mix,
    usd_mtok_full,
    usd_mtok_in,
)
from .prefill import disaggregated_ratio


@derivation("eq-serve-chunk-share", "this book, from Erdil (2025) sec. 3")
def chunk_share() -> sp.Eq:
    """Share of the steps that carry a chunk (eq-serve-chunk-share).

    A step yields b output tokens, so b/T_out requests end per step and as many new prompts,
    b·T_in/T_out tokens, must be prefilled per step. Chunks of C tokens in a share f_mix of the
    steps carry them: f_mix·C = b·T_in/T_out, solved for f_mix.
    """
    (share,) = sp.solve(sp.Eq(f_mix * chunk, b * t_prompt / t_output), f_mix)
    return sp.Eq(f_mix, share)


@derivation("eq-serve-mean-step", "this book, from Erdil (2025) sec. 3")
def mean_step() -> sp.Eq:
    """Mean step of aggregated serving, the time per output token (eq-serve-mean-step):
    f_mix·t_mix + (1 − f_mix)·t_dec at f_mix of eq-serve-chunk-share."""
    mixed = (f_mix * t_mix + (1 - f_mix) * t_dec).subs(f_mix, chunk_share().rhs)
    return sp.Eq(t_step_mean, t_dec + sp.factor(sp.expand(mixed) - t_dec))


@derivation("eq-serve-aggregated-ttft", "this book, from Erdil (2025) sec. 3")
def aggregated_ttft() -> sp.Eq:
    """Time to first token of aggregated serving, at worst (eq-serve-aggregated-ttft).

    C is a step's budget of prompt tokens, as an engine sets it (vLLM's
    max_num_batched_tokens): a step takes waiting prompt tokens up to C, so under continuous
    batching a new prompt waits only for the step in flight (at worst a step that carries a
    chunk, t_mix, the longest), then rides n_chunks = ⌈T_in/C⌉ steps that each carry one of its
    chunks; its first token comes out of the last of them. No engine holds a prompt back to
    fill a chunk: the share f_mix of steps that carry one (eq-serve-chunk-share) sets the mean
    step, not the wait.
    """
    return sp.Eq(t_ttft, t_mix + n_chunks * t_mix)


def chunks_of_prompt() -> sp.Expr:
    """n_chunks = ⌈T_in / C⌉: the steps a prompt's chunks span."""
    return sp.ceiling(t_prompt / chunk)


@derivation("eq-serve-aggregated-rate", "this book, from Erdil (2025) sec. 3")
def aggregated_rate() -> sp.Eq:
    """Output tokens per second per GPU of aggregated serving (eq-serve-aggregated-rate): b
    tokens per mean step of eq-serve-mean-step on N GPUs, prefill's time included."""
    return sp.Eq(rate_serve, b / (n_gpu * mean_step().rhs))


@derivation("eq-serve-open-loop-rate", "this book, from Little (1961), for the decode batch")
def open_loop_rate() -> sp.Eq:
    """The arrival rate a decode batch of b sequences sustains (eq-serve-open-loop-rate).

    Requests that arrive at a rate Λ, each decoding for T_out steps of the mean step t̄
    (eq-serve-mean-step), hold on average b = Λ·T_out·t̄ sequences in the decode batch
    (Little's law: the mean number in a system is its arrival rate times the mean time spent in
    it). Solved for Λ, the rate at which a batch of b is the steady state. The batch that a
    stated rate gives is where this rate, falling as t̄ grows, meets it.
    """
    little = sp.Eq(b, lam_req * t_output * t_step_mean)
    (rate,) = sp.solve(little, lam_req)
    return sp.Eq(lam_req, rate)


@derivation("eq-serve-open-loop-step", "this book, from Little (1961), with a step linear in the batch")
def open_loop_step() -> sp.Eq:
    """The time per output token at an arrival rate Λ, for a step linear in its batch
    (eq-serve-open-loop-step).

    With t̄ = t_fix + t_seq·b (the weights' read, then each sequence's cache and arithmetic),
    Little's law b = Λ·T_out·t̄ (eq-serve-open-loop-rate) and the step solved together give
    t̄ = t_fix/(1 − Λ·T_out·t_seq): the step grows without bound as the rate approaches
    1/(T_out·t_seq), the most requests per second that more sequences can carry, and falls to
    t_fix as the rate falls to zero.
    """
    (batch,) = sp.solve(open_loop_rate(), b)  # Little's law: b = Λ·T_out·t̄
    (step,) = sp.solve(sp.Eq(t_step_mean, t_step_fixed + t_step_seq * batch), t_step_mean)
    return sp.Eq(t_step_mean, sp.factor(step))


@derivation("eq-serve-open-loop-ttft", "this book, from the residual life of renewal theory, "
            "Kleinrock (1975), sec. 5.2")
def open_loop_ttft() -> sp.Eq:
    """Mean time to first token under arrivals at random times (eq-serve-open-loop-ttft).

    A prompt arriving at a random moment lands in a step with probability proportional to the
    step's length, so it waits the mean residual life of a step, E[t²]/(2·E[t]), not the mean
    step's half: steps of t_mix in a share f_mix (eq-serve-chunk-share) and t_dec otherwise,
    whose mean, the denominator's E[t], is t̄ (eq-serve-mean-step). It then rides its ⌈T_in/C⌉
    chunked steps, as in eq-serve-aggregated-ttft, whose worst case waits the whole t_mix.
    """
    second_moment = f_mix * t_mix**2 + (1 - f_mix) * t_dec**2
    first_moment = f_mix * t_mix + (1 - f_mix) * t_dec
    return sp.Eq(t_ttft, second_moment / (2 * first_moment) + n_chunks * t_mix)


@derivation("eq-serve-mixed-split", "this book, splitting a step's cost between input and output "
            "tokens as Mazurek and Gabriel (2025) split a request's")
def mixed_split() -> sp.Eq:
    """The share of a mixed step's time its chunk pays (eq-serve-mixed-split).

    The step is split by the resource that binds it (memory or arithmetic), from three times of
    that resource at peak: u_mix of the mixed step, u_dec of a pass of its b decode tokens alone
    and u_chunk of a pass of its C prompt tokens alone. What the mixed step costs beyond one side
    alone is the other side's own use: u_mix − u_dec the chunk's (its activations, the experts
    only its tokens wake), u_mix − u_chunk the decode tokens' (their cache, their attention);
    what each side would use alone but the step uses once, u_dec + u_chunk − u_mix, is shared
    (the weights' read, when memory binds). Each token uses the shared read alike, so the
    tokens divide it: C/(b + C) to the chunk. Each of the three parts is held at zero or more,
    so φ_in lies in [0, 1] by construction, and φ_in·t_mix and (1 − φ_in)·t_mix sum to t_mix.
    When arithmetic binds, FLOPs add (u_mix = u_dec + u_chunk): nothing is shared and φ_in is
    the chunk's share of the FLOPs.
    """
    own_chunk = sp.Max(u_mix - u_dec, 0)
    own_dec = sp.Max(u_mix - u_chunk, 0)
    shared = sp.Max(u_dec + u_chunk - u_mix, 0)
    return sp.Eq(phi_in, (own_chunk + shared * chunk / (b + chunk))
                 / (own_chunk + own_dec + shared))


@derivation("eq-serve-gpu-seconds", "this book, from Erdil (2025) sec. 3 (eq-serve-mixed-split)")
def gpu_seconds() -> sp.Eq:
    """GPU-seconds of a token of aggregated serving (eq-serve-gpu-seconds).

    A chunk's C prompt tokens pay the share φ_in of their mixed step (eq-serve-mixed-split):
    g_in = N·φ_in·t_mix/C. The b output tokens of a mean step pay the rest: the plain steps,
    (1 − f_mix)·N·t_dec, and the decode side of the mixed ones, f_mix·(1 − φ_in)·N·t_mix, so
    g_out = N·((1 − f_mix)·t_dec + f_mix·(1 − φ_in)·t_mix)/b. The Eq is the mean step rebuilt
    from them: the GPU-seconds of a step's b output tokens and of the b·T_in/T_out prompt tokens
    of eq-serve-chunk-share, over N (the split is whole when it equals eq-serve-mean-step, which
    a test checks). Both are at least zero, for φ_in lies in [0, 1].
    """
    return sp.Eq(t_step_mean, (b * output_gpu_seconds() + b * t_prompt / t_output
                               * input_gpu_seconds()) / n_gpu)


def output_gpu_seconds() -> sp.Expr:
    """g_out of eq-serve-gpu-seconds, at f_mix of eq-serve-chunk-share."""
    share = chunk_share().rhs
    return n_gpu * ((1 - share) * t_dec + share * (1 - phi_in) * t_mix) / b


def input_gpu_seconds() -> sp.Expr:
    """g_in of eq-serve-gpu-seconds."""
    return n_gpu * phi_in * t_mix / chunk


@derivation("eq-serve-kv-transfer", "this book, from Erdil (2025) sec. 3")
def kv_transfer() -> sp.Eq:
    """Sending a prompt's cache from the prefill to the decode pool (eq-serve-kv-transfer): each
    of the prefill instance's N_pre GPUs sends its share of M_KV bytes over its own scale-out
    link of B_NIC bytes/s."""
    return sp.Eq(t_xfer, kv_prompt / (n_send * bw_nic))


@derivation("eq-serve-disaggregated-ttft", "this book, from Erdil (2025) sec. 3")
def disaggregated_ttft() -> sp.Eq:
    """Time to first token of disaggregated serving (eq-serve-disaggregated-ttft): the wait for
    the prefill pass in progress (a whole pass), the prompt's own pass, and the transfer of its
    cache (eq-serve-kv-transfer)."""
    return sp.Eq(t_ttft, 2 * t_pre + kv_transfer().rhs)


@derivation("eq-serve-disaggregated-rate", "this book, from Erdil (2025) sec. 3 (eq-prefill-disagg-ratio)")
def disaggregated_rate() -> sp.Eq:
    """Output tokens per second per GPU of disaggregated serving (eq-serve-disaggregated-rate).

    With r_PD prefill GPUs per decode GPU (eq-prefill-disagg-ratio) the two pools make R_dec
    output tokens per second per decode GPU on 1 + r_PD GPUs. The prices in r_PD are eq-search-cost
    at each pool's GPU-seconds per token, 1/R_pre per input token and 1/R_dec per output token,
    and the price per GPU-hour cancels.
    """
    ratio = disaggregated_ratio().rhs
    per_token = {usd_mtok_in: 10**6 * price / (3600 * rate_pre),
                 usd_mtok_full: 10**6 * price / (3600 * rate_dec)}
    return sp.Eq(rate_serve, sp.simplify(rate_dec / (1 + ratio.subs(per_token))))


def pool_ratio() -> sp.Expr:
    """r_PD of eq-prefill-disagg-ratio at pools of R_pre and R_dec tokens/s per GPU."""
    return sp.simplify(disaggregated_ratio().rhs.subs({
        usd_mtok_in: 1 / rate_pre, usd_mtok_full: 1 / rate_dec}))

