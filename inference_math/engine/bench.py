"""Benchmark: the 35 canonical frontiers of Erdil (2025), timed in CPU seconds.

    python -m inference_math.engine.bench        (or: make bench)

Computes every frontier of the reference run (commit c2c4fa9, pipeline search on: 31 full-model
frontiers and the 4 section 2.2 frontiers of Figure 1), checks each maximum-speed and α = 3
preferred point against the reference code's, and prints the CPU time next to the reference
code's on a 2-core machine (``data/erdil_code/timings_original_code.json``). A benchmark, not a
test: the time depends on the machine.
"""

from __future__ import annotations

import time

from ..presets.hardware import get_gpu
from ..presets.models import get_model
from . import comparisons as C
from .search import frontier
from .toy_model import reference_code_frontier


def _relative(ours: float, theirs: float) -> float:
    return abs(ours / theirs - 1)


def run() -> dict:
    timings = C.reference_json("timings_original_code")["harness_runs"]["c2c4fa9_use_pp_true"]
    from . import full_model_numpy  # noqa: F401  (imported on first use: count it as set-up)

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
            original = timings["per_frontier"][f"{comparison}/{label}"]["cpu_s"]
            rows.append((comparison, label, cpu, original, worst))
            print(f"{comparison:38s} {label:42s} {cpu:7.2f} s (original {original:7.2f} s)  "
                  f"max rel. diff {worst:.1e}", flush=True)
    total = time.process_time() - start
    original_total = timings["total_cpu_s"]
    slowest = max(rows, key=lambda r: r[2])
    print(f"\nset-up (interpreter start and imports, no compilation): {setup:.2f} CPU s")
    print(f"{len(rows)} frontiers: {total:.1f} CPU s, {setup + total:.1f} with the set-up; the "
          f"slowest {slowest[2]:.2f} s ({slowest[0]}/{slowest[1]})")
    print(f"the original code: {original_total:.1f} CPU s -> {original_total / (setup + total):.1f}x "
          f"faster; largest relative difference of a maximum-speed or preferred point from the "
          f"original: {max(r[4] for r in rows):.1e}")
    return {"rows": rows, "cpu_s": total, "setup_cpu_s": setup, "original_cpu_s": original_total}


if __name__ == "__main__":
    run()
