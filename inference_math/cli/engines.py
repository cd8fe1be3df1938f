"""``engines``: each serving-engine family the estimate knows, on each software stack, with its
measured points and setups (training and held-out) and its fitted efficiencies (or its
stack's, when it has too few setups), as stored by the fit (data/estimate_parameters.json)."""

from __future__ import annotations

import json
from importlib import resources

from .common import _dumps, _json_csv_options, _table

ENGINE_COLUMNS = (
    ("engine", "engine", "s"), ("stack", "stack", "s"),
    ("train_points", "train pts", "d"), ("train_setups", "train setups", "d"),
    ("test_points", "held-out pts", "d"), ("test_setups", "held-out setups", "d"),
    ("efficiencies", "efficiencies", "s"), ("t_fixed_ms", "t_0 ms", "s"),
    ("eta_mem", "eta_mem", "s"), ("eta_flop", "eta_flop", "s"), ("band", "band x", "s"),
)


def add_arguments(cmd, name: str) -> None:
    _json_csv_options(cmd)


def _record() -> dict:
    path = resources.files("inference_math") / "data" / "estimate_parameters.json"
    return json.loads(path.read_text())


def engine_rows() -> list[dict]:
    """One row per engine family and stack with compared points; a family of the table with none, one
    row of zeros (the estimate gives it its stack's efficiencies)."""
    from ..serving.engines import families

    record = _record()
    fit = record["engines"]
    rows = []
    for name in families() + ("unknown",):
        stacks = fit["families"].get(name)
        if not stacks:
            if name != "unknown":
                rows.append({"engine": name, "stack": None, "train_points": 0,
                             "train_setups": 0, "test_points": 0, "test_setups": 0,
                             "efficiencies": "stack's (no compared points)", "t_fixed_s": None,
                             "eta_mem": None, "eta_flop": None, "band_low": None,
                             "band_high": None, "band_from": "pooled"})
            continue
        for stack, entry in sorted(stacks.items()):
            values = entry["parameters"] or record["parameters"][stack]
            rows.append({"engine": name, "stack": stack,
                         **{k: entry[k] for k in ("train_points", "train_setups",
                                                  "test_points", "test_setups")},
                         "efficiencies": "own" if entry["own"] else "stack's",
                         "t_fixed_s": values["t_fixed_s"], "eta_mem": values["eta_mem"],
                         "eta_flop": values["eta_flop"], "band_low": entry["band"]["low"],
                         "band_high": entry["band"]["high"], "band_from": entry["band_from"]})
    return rows


def cmd_engines(args) -> str:
    import math

    from .serving import _csv

    rows = engine_rows()
    fit = _record()["engines"]
    if args.json:
        return _dumps({"lambda": fit["lambda"], "held_out": fit["test"], "engines": rows})
    if args.csv:
        return _csv(rows, list(rows[0]))
    shown = []
    for row in rows:
        has = row["t_fixed_s"] is not None
        shown.append({**{k: row[k] if row[k] is not None else "-" for k, _, _ in
                         ENGINE_COLUMNS if k in row},
                      "t_fixed_ms": f"{1e3 * row['t_fixed_s']:.3f}" if has else "-",
                      "eta_mem": f"{row['eta_mem']:.3f}" if has else "-",
                      "eta_flop": f"{row['eta_flop']:.3f}" if has else "-",
                      "band": (f"{math.exp(row['band_low']):.2f}-{math.exp(row['band_high']):.2f}"
                               f" ({row['band_from']})" if row["band_low"] is not None else "-")})
    table = _table(shown, [(k, h, "s" if spec == "s" else "d") for k, h, spec in ENGINE_COLUMNS])
    test = fit["test"]["all"]
    notes = [f"penalty toward the stack's values: lambda = {fit['lambda']} (chosen by "
             "cross-validation over training setups); a family with fewer than "
             f"{fit['min_setups']} training setups on a stack takes the stack's efficiencies",
             f"held-out median factor: {test['with_engine']['median_factor']:.3f} with the "
             f"engine given, {test['pooled']['median_factor']:.3f} pooled; inside the band: "
             f"{test['with_engine']['inside_band']:.0%} and {test['pooled']['inside_band']:.0%}"]
    return "\n".join([table, *notes])
