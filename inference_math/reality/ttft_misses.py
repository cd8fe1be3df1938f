"""How far the estimate's TTFT (and output tokens/s per GPU) lies from the gathered points'
measured ones, for the request-rate and the concurrency rows separately, with the queueing of
prompts (eq-queue-*) and, for comparison, with the rules it replaced.

    python -m inference_math.reality.ttft_misses

The miss factor of a set of points is exp(median |ln(model/measured)|): 1 is exact, 2 is "half
the points within a factor of 2". A point counts where the estimate gives the quantity (a rate
row that fell behind, or whose rate is beyond every batch, has no TTFT).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from . import measured_points as mp

SCENARIOS = ("rate", "concurrency")
QUANTITIES = ("ttft_ms", "output_tok_s_per_gpu")


def misses(points=None) -> dict[str, dict[str, dict]]:
    """{scenario: {quantity: {'points': n, 'miss': factor}}} over the public points (or
    ``points``) that the comparison resolves and that measured the quantity."""
    logs = {s: {q: [] for q in QUANTITIES} for s in SCENARIOS}
    for point in mp.public_points() if points is None else points:
        if point["scenario"] not in SCENARIOS:
            continue
        resolved = mp.resolve(point)
        if resolved.reason:
            continue
        predicted = mp.probe(resolved).predict("estimate")
        for q in QUANTITIES:
            measured, model = point[q], predicted[q]
            if measured and model:
                logs[point["scenario"]][q].append(abs(math.log(model / measured)))
    return {s: {q: {"points": len(v), "miss": math.exp(float(np.median(v))) if v else None}
                for q, v in by_q.items()} for s, by_q in logs.items()}


@contextmanager
def without_queueing():
    """The TTFT rules before the queueing of prompts: a rate row's mean of
    eq-serve-open-loop-ttft, a concurrency row's eq-serve-aggregated-ttft at its budget step,
    whatever statistic either states."""
    def before(self, fns, steps, t_dec, tpot, chunks, requests_s):
        if self.resolved.point["scenario"] == "rate":
            g, work = self.steps, self.work
            share = fns["chunk_share"](g.batch, g.extra, work.input_len, work.output_len)
            return fns["open_loop_ttft"](share, t_dec, steps, chunks)
        return fns["aggregated_ttft"](steps, chunks)
    saved = mp.Probe._ttft
    mp.Probe._ttft = before
    try:
        yield
    finally:
        mp.Probe._ttft = saved


def main() -> None:
    with without_queueing():
        before = misses()
    after = misses()
    print(f"{'rows':12s} {'quantity':22s} {'points':>6s} {'before':>7s} {'after':>7s}")
    for scenario in SCENARIOS:
        for q in QUANTITIES:
            old, new = before[scenario][q], after[scenario][q]
            text = ["-" if r["miss"] is None else f"{r['miss']:.3f}" for r in (old, new)]
            print(f"{scenario:12s} {q:22s} {new['points']:6d} {text[0]:>7s} {text[1]:>7s}")


if __name__ == "__main__":
    main()
