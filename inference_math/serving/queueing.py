"""The time to first token a benchmark reports (a mean or a quantile), from the queueing of its
prompts: a closed-loop run at a concurrency with its initial burst, and arrivals at a rate (an
M/D/1 prefill queue). The closed forms are :mod:`inference_math.derivations.queueing`'s,
generated into :mod:`inference_math.fullmodel.formulas_numpy`; this module only composes them.
"""

from __future__ import annotations

import numpy as np

#: Requests a closed-loop run sends, per request in flight, where its source does not say:
#: InferenceMAX's convention (num-prompts = 10 × concurrency), which AMD's ATOM runs state.
DEFAULT_RUN_PER_CONCURRENCY = 10.0


def _gen():
    from ..fullmodel import formulas_numpy as gen
    return gen


def closed_loop_ttft(quantile: float | None, batch, run, t_step, n_chunks, t_own, input_len,
                     chunk, t_burst):
    """TTFT (s) over a closed-loop run of ``run`` requests to an instance holding ``batch``:
    the mean (``quantile`` None, eq-queue-run-mean) or the ``quantile`` (eq-queue-run-quantile),
    the first ``batch`` requests an initial burst whose steps carry ``chunk`` prompt tokens in
    ``t_burst``, the rest in steady state (mean step ``t_step``, own steps ``t_own``)."""
    gen = _gen()
    run = np.maximum(run, batch)  # a run holds at least its first wave
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if quantile is None:
            return gen.run_ttft_mean(batch, run, t_step, n_chunks, t_own, input_len, chunk,
                                     t_burst)
        return gen.run_ttft_quantile(quantile, batch, run, t_step, n_chunks, t_own, input_len,
                                     chunk, t_burst)


def open_loop_ttft(quantile: float | None, rate, share, t_dec, t_mix, n_chunks, input_len,
                   chunk, t_burst):
    """TTFT (s) of prompts arriving in a Poisson stream of ``rate`` requests/s at an instance:
    the mean (``quantile`` None, eq-queue-open-mean) or the ``quantile``
    (eq-queue-open-quantile) of eq-serve-open-loop-ttft (a share ``share`` of steps of
    ``t_mix``, the rest ``t_dec``) and their wait for the prompt work ahead, an M/D/1 queue at
    ``chunk`` tokens per ``t_burst`` (eq-queue-prefill-load, eq-queue-pk-wait,
    eq-queue-wait-quantile); infinite where that queue does not keep up (load ≥ 1)."""
    gen = _gen()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        load = gen.prefill_load(rate, input_len, chunk, t_burst)
        wait = np.where(load < 1.0, gen.pk_wait(rate, input_len, chunk, t_burst), np.inf)
        alone = gen.open_loop_ttft(share, t_dec, t_mix, n_chunks)  # no prompt work ahead
        if quantile is None:
            return gen.open_ttft_mean(alone, wait)
        waited = np.where(load < 1.0, gen.wait_quantile(quantile, load, wait), np.inf)
        return gen.open_ttft_quantile(alone, waited)
