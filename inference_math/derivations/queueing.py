"""Queueing of prompts: the time to first token a benchmark reports, as a mean or a quantile.

Aggregated serving with chunked prefill (:mod:`inference_math.serving.serving_rules`) gives a
prompt's own path: it waits for the step in flight and rides n_chunks = ⌈T_in/C⌉ steps that
carry its chunks. A benchmark reports a statistic over many requests (a mean, a median, a p99),
and how its requests arrive sets what they wait for:

- *closed loop at a concurrency* (a fixed number of requests in flight, each replaced as it
  ends): in steady state a prompt arrives at a random moment of a step, waits that step's
  residual, then rides its own chunks (eq-queue-closed-mean, eq-queue-closed-quantile);
- *the initial burst* of such a run: the b requests of the concurrency are sent at once, so the
  k-th prompt waits for the chunks of the k − 1 before it, a staircase (eq-queue-burst-prompt,
  eq-queue-burst-mean, eq-queue-burst-quantile), and a run of R requests mixes the b of the
  burst with R − b in steady state (eq-queue-run-mean, eq-queue-run-quantile);
- *arrivals at a rate* (Poisson): a prompt waits for the prompt work queued ahead of it, a
  single-server queue with deterministic service, M/D/1 (eq-queue-prefill-load,
  eq-queue-pk-wait, eq-queue-wait-quantile, eq-queue-open-mean, eq-queue-open-quantile); the
  decode batch and its TPOT at that rate stay Little's law's (eq-serve-open-loop-rate).

Every closed form is exact in rationals; the approximations are the models' and each docstring
states its own.
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import (
    b,
    chunk,
    k_wave,
    lam_req,
    n_chunks,
    n_run,
    quant_p,
    rho_pre,
    t_burst,
    t_mix,
    t_prompt,
    t_step_mean,
    t_ttft,
    t_wait,
    t_wait_q,
    ttft_mean,
    ttft_quant,
    ttft_wave,
)

# Integration and summation variables (not model quantities, so not in the registry).
_x = sp.Symbol("x", nonnegative=True, real=True)
_k = sp.Symbol("k", positive=True, integer=True)
#: The source of the initial burst's derivations.
_BURST = ("this book, from Erdil (2025) sec. 3 (chunked prefill), the first wave of a "
          "closed-loop benchmark")


def _residual_density() -> sp.Expr:
    """The density of the residual of a step of fixed length t̄ at a uniformly random moment:
    1/t̄ on [0, t̄] (the moment falls anywhere in the step alike)."""
    return 1 / t_step_mean


@derivation("eq-queue-closed-mean", "this book, from the residual life of renewal theory, "
            "Kleinrock (1975), sec. 5.2")
def closed_mean() -> sp.Eq:
    """Mean TTFT of a closed-loop run in steady state (eq-queue-closed-mean).

    Assumptions: the b requests of the concurrency are replaced as they end, and a replacement
    reaches the engine at a moment uniformly distributed over the step in flight (the client's
    turnaround, a few milliseconds, is not in phase with the steps); steps have a fixed length,
    the mean step t̄ (eq-serve-mean-step). The residual of the step is then uniform on [0, t̄]
    (the residual life of a renewal process of fixed intervals, Kleinrock 1975, sec. 5.2), its
    mean ∫ x/t̄ dx over [0, t̄]; the prompt then rides its n_chunks steps of t_mix
    (eq-serve-aggregated-ttft), each carrying one of its chunks.
    """
    residual = sp.integrate(_x * _residual_density(), (_x, 0, t_step_mean))
    return sp.Eq(ttft_mean, residual + n_chunks * t_mix)


@derivation("eq-queue-closed-quantile", "this book, from the residual life of renewal theory, "
            "Kleinrock (1975), sec. 5.2")
def closed_quantile() -> sp.Eq:
    """p-quantile of the TTFT of a closed-loop run in steady state (eq-queue-closed-quantile).

    The assumptions of eq-queue-closed-mean. The residual's distribution function is
    ∫ 1/t̄ dx over [0, q]; set to p and solved for q, the quantile of a uniform residual, p·t̄
    (the median t̄/2); its own chunks add a fixed n_chunks·t_mix, which moves every quantile
    alike.
    """
    q = sp.Symbol("q", nonnegative=True, real=True)
    cdf = sp.integrate(_residual_density(), (_x, 0, q))
    (residual,) = sp.solve(sp.Eq(cdf, quant_p), q)
    return sp.Eq(ttft_quant, residual + n_chunks * t_mix)


@derivation("eq-queue-burst-prompt", _BURST)
def burst_prompt() -> sp.Eq:
    """TTFT of the k-th prompt of an initial burst (eq-queue-burst-prompt).

    Assumptions: the b prompts of the concurrency arrive at once at an idle engine (a
    benchmark's first wave: every client sends its first request at the start); the engine
    takes them first come, first served, up to its budget of C prompt tokens a step (it packs
    the next prompt's tokens into what the previous leaves of the budget, as vLLM's and SGLang's
    chunked prefill do), so every step of the burst carries C prompt tokens and lasts t_burst.
    The k-th prompt's last token is the (k·T_in)-th of the burst, carried by step
    ⌈k·T_in/C⌉; its first token comes out of that step.
    """
    return sp.Eq(ttft_wave, t_burst * sp.ceiling(k_wave * t_prompt / chunk))


def _rounding_at_its_mean(expr: sp.Expr) -> sp.Expr:
    """⌈y⌉ replaced by y + 1/2: the rounding up to a whole step, ⌈k·a⌉ − k·a, at its mean over
    k. For an irrational a the fractional parts of k·a are equidistributed on [0, 1) (Weyl
    1916), so their mean tends to 1/2; for a = u/v in lowest terms the mean over a period of v
    prompts is (v − 1)/(2v), 0 when a prompt is whole chunks (v = 1). Either way each prompt's
    rounding lies in [0, 1), so the error is under one step."""
    return expr.replace(sp.ceiling, lambda y: y + sp.Rational(1, 2))


@derivation("eq-queue-burst-mean", "this book, from Weyl (1916) for the rounding to whole steps")
def burst_mean() -> sp.Eq:
    """Mean TTFT over the b prompts of an initial burst (eq-queue-burst-mean).

    The staircase of eq-queue-burst-prompt averaged over k = 1 … b, each prompt's rounding up
    to a whole step taken at its mean 1/2 (Weyl 1916: the fractional parts of k·T_in/C are
    equidistributed; the result is then within half a step of the exact mean, which the tests
    check against the staircase summed exactly):
    t_burst·(T_in·(b + 1)/(2·C) + 1/2).
    """
    stair = _rounding_at_its_mean(burst_prompt().rhs.subs(k_wave, _k))
    mean = sp.summation(stair, (_k, 1, b)) / b
    return sp.Eq(ttft_mean, sp.factor(sp.simplify(mean)))


@derivation("eq-queue-burst-quantile", _BURST)
def burst_quantile() -> sp.Eq:
    """p-quantile of the TTFT over the b prompts of an initial burst (eq-queue-burst-quantile).

    The staircase of eq-queue-burst-prompt grows with k, so the p-quantile of the b values (the
    smallest value at or above a share p of them) is the TTFT of prompt k = ⌈p·b⌉: exact, no
    rounding assumed.
    """
    return sp.Eq(ttft_quant, burst_prompt().rhs.subs(k_wave, sp.ceiling(quant_p * b)))


@derivation("eq-queue-run-mean", _BURST)
def run_mean() -> sp.Eq:
    """Mean TTFT over a closed-loop run of R requests to one instance (eq-queue-run-mean).

    Assumptions: the first b requests form the initial burst (eq-queue-burst-mean); the other
    R − b each replace a request that ended, in steady state (eq-queue-closed-mean). (The
    second wave's requests arrive as the burst's end, staggered by the burst's own staircase,
    so they meet the steady state's queue; the run's last requests, with fewer in flight,
    wait as little or less.) The mean over the run weighs the two by their counts.
    """
    mean = (b * burst_mean().rhs + (n_run - b) * closed_mean().rhs) / n_run
    return sp.Eq(ttft_mean, mean)


@derivation("eq-queue-run-quantile", _BURST)
def run_quantile() -> sp.Eq:
    """p-quantile of the TTFT over a closed-loop run of R requests (eq-queue-run-quantile).

    The assumptions of eq-queue-run-mean, and one more: every steady-state request is at least
    as fast as every request of the burst but the first few, so the run's sorted TTFTs are the
    R − b steady ones, then the b of the staircase. (A steady request waits at most
    t̄ + n_chunks·t_mix; the burst's k-th prompt ⌈k·T_in/C⌉ steps: the two overlap only for the
    prompts within a step of the first, and the quantile moves by under a step.) The share p of
    the run then lies among the steady requests while p ≤ 1 − b/R, at their quantile
    p·R/(R − b) (eq-queue-closed-quantile), and beyond it among the burst's, at their quantile
    (p − 1 + b/R)·R/b (eq-queue-burst-quantile).
    """
    steady_share = 1 - b / n_run
    steady = closed_quantile().rhs.subs(quant_p, quant_p / steady_share)
    burst = burst_quantile().rhs.subs(quant_p, sp.expand((quant_p - steady_share) * n_run) / b)
    return sp.Eq(ttft_quant, sp.Piecewise((steady, quant_p <= steady_share), (burst, True)))


def prompt_service() -> sp.Expr:
    """S, the prefill time of one prompt at the pace of a backlogged engine: its T_in tokens at
    C tokens per step of t_burst (steps that carry a whole budget)."""
    return t_prompt * t_burst / chunk


@derivation("eq-queue-prefill-load", "this book, from Kleinrock (1975), the utilization of a server")
def prefill_load() -> sp.Eq:
    """Load of the prefill queue under arrivals at a rate Λ (eq-queue-prefill-load).

    Assumptions: the prompt work waiting is one queue, served first come, first served at the
    pace of a backlogged engine, C prompt tokens per step of t_burst, so a prompt's service is
    the fixed S = T_in·t_burst/C; prompts arrive in a Poisson stream of rate Λ (one instance's
    share of a benchmark's --request-rate), all of the same length. The queue is then M/D/1;
    its load, the share of the time it holds work, is the arrival rate times the service,
    ρ = Λ·S (Kleinrock 1975), below 1 for a queue that keeps up.
    """
    return sp.Eq(rho_pre, lam_req * prompt_service())


@derivation("eq-queue-pk-wait", "this book, the Pollaczek-Khinchine mean-value formula, "
            "Kleinrock (1975), ch. 5")
def pk_wait() -> sp.Eq:
    """Mean wait of a prompt for the prompt work ahead of it, M/D/1 (eq-queue-pk-wait).

    The assumptions of eq-queue-prefill-load. The Pollaczek-Khinchine mean wait of M/G/1
    (Kleinrock 1975, ch. 5), reached here by the mean-value argument: an arriving prompt waits
    for the N_q prompts queued ahead, each a service S, and, with probability ρ (a Poisson
    arrival sees the time average, PASTA), for the residual of the one in service, whose mean
    is E[S²]/(2·E[S]) = S/2 for a fixed S. By Little's law N_q = Λ·W̄_q. So
    W̄_q = Λ·W̄_q·S + ρ·S/2, solved for W̄_q: ρ·S/(2·(1 − ρ)), written through Λ.
    """
    service, load = prompt_service(), prefill_load().rhs
    wait = sp.Symbol("W", real=True)
    second_moment = service**2  # deterministic service
    (solution,) = sp.solve(sp.Eq(wait, lam_req * wait * service
                                 + load * second_moment / (2 * service)), wait)
    return sp.Eq(t_wait, sp.factor(solution))


@derivation("eq-queue-wait-quantile", "this book, from the heavy-traffic exponential of "
            "Kingman (1961), with P(W > 0) = rho exact for M/G/1")
def wait_quantile() -> sp.Eq:
    """p-quantile of the wait for the prompt work ahead (eq-queue-wait-quantile).

    Assumptions: a Poisson arrival finds the queue busy with probability ρ exactly (PASTA;
    any M/G/1), and waits nothing otherwise; given that it waits, its wait is exponential, the
    heavy-traffic form of Kingman (1961), with the mean W̄_q/ρ that makes the mean wait the
    Pollaczek-Khinchine one (eq-queue-pk-wait). So P(W > x) = ρ·exp(−ρ·x/W̄_q); the p-quantile
    solves 1 − P(W > x) = p: zero while p ≤ 1 − ρ, else (W̄_q/ρ)·ln(ρ/(1 − p)). The exact M/D/1
    tail decays faster than this exponential at light load, so the approximation errs towards
    longer waits in the tail; the tests compare it with a simulated queue.
    """
    x = sp.Symbol("x", positive=True)
    tail = sp.Symbol("u", positive=True)  # 1 − p, the share of prompts above the quantile
    (solution,) = sp.solve(sp.Eq(1 - rho_pre * sp.exp(-rho_pre * x / t_wait), 1 - tail), x)
    solution = sp.expand_log(solution, force=True).subs(tail, 1 - quant_p)
    return sp.Eq(t_wait_q, sp.Piecewise((0, quant_p <= 1 - rho_pre), (solution, True)))


@derivation("eq-queue-open-mean", "this book, from eq-serve-open-loop-ttft and the "
            "Pollaczek-Khinchine formula, Kleinrock (1975), ch. 5")
def open_mean() -> sp.Eq:
    """Mean TTFT under arrivals at a rate (eq-queue-open-mean).

    A prompt waits the residual of the step it arrives in and rides its own ⌈T_in/C⌉ chunked
    steps: t_TTFT of eq-serve-open-loop-ttft, the TTFT of a prompt that finds no prompt work
    ahead. Under Poisson arrivals it also waits, first, for the prompt work queued ahead of it
    (eq-queue-pk-wait). The two are added: the queue's wait is the prompt work ahead, the
    step's residual the step the engine is in when the prompt's turn comes.
    """
    return sp.Eq(ttft_mean, t_ttft + t_wait)


@derivation("eq-queue-open-quantile", "this book, from eq-serve-open-loop-ttft and "
            "Kingman (1961)")
def open_quantile() -> sp.Eq:
    """p-quantile of the TTFT under arrivals at a rate (eq-queue-open-quantile).

    The terms of eq-queue-open-mean, the queue's wait at its p-quantile (eq-queue-wait-quantile)
    and t_TTFT of eq-serve-open-loop-ttft (the step's residual and the prompt's own chunks).
    The residual is taken at its mean, not its quantile: it lies within one step, so the sum's
    quantile moves by less than a step from this one; the queue's wait, unbounded, is what
    sets the tail.
    """
    return sp.Eq(ttft_quant, t_ttft + t_wait_q)
