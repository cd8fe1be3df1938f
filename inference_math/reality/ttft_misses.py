"""How far the estimate's TTFT (and output tokens/s per GPU) lies from the gathered points'
measured ones, for the request-rate and the concurrency rows separately.

    python -m inference_math.reality.ttft_misses

The miss factor of a set of points is exp(median |ln(model/measured)|): 1 is exact, 2 is "half
the points within a factor of 2". A point counts where the estimate gives the quantity (a rate
row that fell behind, or whose rate is beyond every batch, has no TTFT).
"""

from __future__ import annotations

import math

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


def main() -> None:
    for scenario, by_q in misses().items():
        for q, r in by_q.items():
            miss = "-" if r["miss"] is None else f"{r['miss']:.3f}"
            print(f"{scenario:12s} {q:22s} points {r['points']:4d}  miss factor {miss}")


if __name__ == "__main__":
    main()
