"""Benchmark: the 35 canonical frontiers of Erdil (2025), timed in CPU seconds.

    python -m inference_math.analysis.bench        (or: make bench)

Computes every frontier of the reference run (commit c2c4fa9, pipeline search on: 31 full-model
frontiers and the 4 section 2.2 frontiers of Figure 1), checks each maximum-speed and α = 3
preferred point against the reference code's, and prints this run's CPU time. A benchmark, not a
test: the time depends on the machine.

The speed-up over the original code is the one measured side by side, both codes on the same
machine in alternating fresh processes (``data/erdil_code/timings_side_by_side.json``, which
records the machine and the method); it is quoted, never recomputed against this run, since a
ratio of times taken on two machines measures the machines as much as the codes.
"""

from __future__ import annotations

import time

from ..fullmodel import comparisons as C
from ..fullmodel.search import frontier
from ..fullmodel.toy_model import reference_code_frontier
from ..presets.hardware import get_gpu
from ..presets.models import get_model


def _relative(ours: float, theirs: float) -> float:
    return abs(ours / theirs - 1)


def side_by_side() -> dict:
    """The side-by-side measurement of the original code and this project (one machine)."""
    return C.reference_json("timings_side_by_side")


def run() -> dict:
    measured = side_by_side()
    together = measured["all_35_in_one_process"]
    from ..fullmodel import full_model_numpy  # noqa: F401  (imported on first use: count it as set-up)

    rows = []
    # CPU time of this process so far: the interpreter and the imports, including the NumPy
    # module generated from the derivations (nothing is compiled or derived at run time)
    setup = time.process_time()
    start = time.process_time()
    for comparison in C.comparison_names():
        for entry in C.reference_settings(comparison):
            label = entry["name"]
            t0 = time.process_time()
            if comparison == C.TOY_COMPARISON:
                model = get_model("llama-3-70b" if "70B" in label else "llama-3-8b")
                front = reference_code_frontier(model, get_gpu("h100"),
                                                demand_cap=entry["max_throughput_cap_tok_s"])
                speed = float(front.tokens_per_s.max())
                worst = _relative(speed, entry["max_speed"]["tokens_per_s_per_request"])
            else:
                front = frontier(C.setting_from_reference(entry))
                fast, pref = front.max_speed(), front.preferred(3)
                ref_fast, ref_pref = entry["max_speed"], entry["pref_alpha3"]
                worst = max(_relative(fast.tokens_per_s, ref_fast["tokens_per_s_per_request"]),
                            _relative(fast.gpus, ref_fast["gpus"]),
                            _relative(pref.tokens_per_s, ref_pref["tokens_per_s_per_request"]),
                            _relative(pref.usd_per_mtok, ref_pref["usd_per_mtok"]),
                            _relative(pref.gpus, ref_pref["gpus"]),
                            _relative(pref.batch, ref_pref["batch_size"]))
            cpu = time.process_time() - t0
            pair = together["per_frontier_cpu_s"][f"{comparison}/{label}"]
            rows.append((comparison, label, cpu, worst))
            print(f"{comparison:38s} {label:42s} {cpu:6.2f} s (side by side: original "
                  f"{pair['original']:6.2f} s, this code {pair['after']:5.2f} s)  "
                  f"max rel. diff {worst:.1e}", flush=True)
    total = time.process_time() - start
    slowest = max(rows, key=lambda r: r[2])
    print(f"\nset-up (interpreter start and imports, no compilation): {setup:.2f} CPU s")
    print(f"{len(rows)} frontiers: {total:.1f} CPU s, {setup + total:.1f} with the set-up; the "
          f"slowest {slowest[2]:.2f} s ({slowest[0]}/{slowest[1]}); largest relative difference "
          f"of a maximum-speed or preferred point from the original code's: "
          f"{max(r[3] for r in rows):.1e}")
    print(summary(measured))
    return {"rows": rows, "cpu_s": total, "setup_cpu_s": setup}


def summary(measured: dict) -> str:
    """The side-by-side speed-up, with the machine and the method it was measured with."""
    together, apart = measured["all_35_in_one_process"], measured["six_frontiers_apart"]
    cpu = together["process_cpu_s"]
    return (f"\nSide by side on one machine, {measured['machine']}, {measured['date']}:\n"
            f"  {measured['method_short']}\n"
            f"  the 35 frontiers in one process: original code {cpu['original']:.0f} CPU s, this "
            f"code {cpu['after']:.1f} CPU s -> {cpu['original'] / cpu['after']:.0f}x "
            f"(before this speed-up {cpu['before']:.1f} CPU s, "
            f"{cpu['original'] / cpu['before']:.0f}x)\n"
            f"  six frontiers, each in its own process (imports included): original code "
            f"{apart['process_cpu_s']['original']:.1f} CPU s, this code "
            f"{apart['process_cpu_s']['after']:.2f} CPU s -> "
            f"{apart['process_cpu_s']['original'] / apart['process_cpu_s']['after']:.0f}x "
            f"(before {apart['process_cpu_s']['before']:.2f} CPU s)\n"
            f"  (medians over {together['rounds']} and {apart['rounds']} alternating rounds; "
            f"this run's times above are not compared with the original's, which were taken "
            f"on that machine)")


if __name__ == "__main__":
    run()
