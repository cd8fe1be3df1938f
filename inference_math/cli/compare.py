"""``compare``: the top speed and the cost at a per-user speed of every model x GPU pair (full
model), a pair that cannot serve that speed or hold the model being a row marked infeasible."""

from __future__ import annotations

import math

from ..core.validation import InputError
from ..presets.hardware import full_model_gpus, get_gpu
from ..presets.models import get_model, preset_names
from . import bands as band_cli
from .common import (
    DEFAULT_SPEED,
    _csv_cell,
    _dumps,
    _json_csv_options,
    _listed,
    _number,
    _price,
    _range_help,
    _require_finite,
    _table,
    price_for,
)
from .setting import CURVE_MEANING, _add_curve_options, _fits, _progress

# compare's table: (key of a row, heading, format); the numbers are formatted beforehand
COMPARE_COLUMNS = (("model", "model", "s"), ("gpu", "GPU", "s"), ("weight_bits", "bits", "d"),
                   ("curve", "curve", "s"), ("max_tokens_per_s", "top tok/s", "s"),
                   ("usd_per_mtok", "$/Mtok", "s"), ("binding", "binding", "s"))


COMPARE_BAND_KEYS = ("max_tokens_per_s_low", "max_tokens_per_s_high", "usd_per_mtok_low",
                     "usd_per_mtok_high")


def add_arguments(cmp, name: str) -> None:
    cmp.add_argument("--models", required=True, type=_listed(get_model),
                     help=f"comma-separated: of {', '.join(preset_names())}; or paths to config.json")
    cmp.add_argument("--gpus", required=True,
                     type=_listed(get_gpu, full_model=True),
                     help=f"comma-separated: of {', '.join(full_model_gpus())}; or paths to GPU "
                          "files (TOML)")
    cmp.add_argument("--speed", type=_number("--speed"), default=DEFAULT_SPEED,
                     help=_range_help("--speed", "tokens/s per user at which to read the cost "
                                                 f"(default {DEFAULT_SPEED:g})"))
    cmp.add_argument("--weight-bits", type=int, choices=(4, 8, 16), default=None,
                     help="weight precision (default: each model's)")
    cmp.add_argument("--context", type=_number("--context"), default=0.0,
                     help=_range_help("--context", "tokens already in each sequence's KV cache "
                                                   "(default 0)"))
    cmp.add_argument("--no-pipeline", action="store_true", help="do not search pipeline degrees")
    cmp.add_argument("--price", type=_price, default=None,
                     help=lambda: _range_help("--price", "$ per GPU-hour for every GPU, or a 2026 "
                                              "rent column (hyperscaler, neocloud, three_year), "
                                              "each GPU at its own (default: each GPU's price)"))
    _add_curve_options(cmp)
    cmp.add_argument("--exact", action="store_true",
                     help="every frontier point, not the 1,000 latency thresholds of the paper")
    cmp.add_argument("--quiet", action="store_true", help="no progress bar")
    band_cli.add_options(cmp)
    _json_csv_options(cmp)


def _compare_row(model, gpu, args, band_options: dict | None = None) -> dict:
    """One pair of ``compare``: its top speed and its cost (eq-search-cost, interpolated along the
    frontier) at ``args.speed``, with the binding term of the frontier point that serves it; the
    reason in ``infeasible`` (else None) when the pair cannot serve that speed. With
    ``band_options`` (``--band``) the band of the top speed and of the cost, read off the
    frontier of the configurations of this frontier at each draw (analysis.bands)."""
    from ..fullmodel.search import MAX_LOG2_GPUS, Setting, default_curve, frontier

    bits = args.weight_bits or model.weight_bits
    price = price_for(args.price, gpu)
    row = {"model": model.name, "gpu": gpu.name, "weight_bits": int(bits), "speed": args.speed,
           "curve": args.curve or default_curve(model),
           "feasible": False, "infeasible": None, "max_tokens_per_s": None,
           "usd_per_mtok_at_max": None, "usd_per_mtok": None, "binding": None, "gpus": None,
           "batch": None, "usd_per_gpu_hour": price or gpu.price_per_hour}
    if band_options is not None:
        row.update(dict.fromkeys(COMPARE_BAND_KEYS))
    try:
        gpu.flops(bits)
    except InputError:
        row["infeasible"] = f"no FLOP/s figure for {bits}-bit weights"
        return row
    setting = Setting(model=model, gpu=gpu, weight_bytes=None if args.weight_bits is None
                      else args.weight_bits / 8, context=args.context, use_pp=not args.no_pipeline,
                      price=price, label=model.name, curve=args.curve, kv_bits=args.kv_bits)
    largest = f"2^{MAX_LOG2_GPUS} GPUs"
    if not _fits(setting, 0.0):
        row["infeasible"] = f"the weights do not fit in {largest}"
        return row
    if not _fits(setting, setting.context):
        row["infeasible"] = (f"the weights and one sequence's KV cache of {setting.context:g} "
                             f"tokens do not fit in {largest}")
        return row
    try:
        with _progress(setting, args.quiet) as advance:
            front = frontier(setting, exact=args.exact, progress=advance)
    except InputError as exc:
        row["infeasible"] = str(exc)
        return row
    top = front.max_speed()
    row.update(max_tokens_per_s=top.tokens_per_s, usd_per_mtok_at_max=top.usd_per_mtok)
    band = None
    if band_options is not None:
        from ..analysis.bands import frontier_band
        band = frontier_band(setting, front, **band_options)
        row.update(zip(COMPARE_BAND_KEYS[:2], band.max_speed(), strict=True))
    if args.speed > top.tokens_per_s:
        row["infeasible"] = f"{args.speed:g} tok/s per user is beyond the top speed"
        return row
    if band is not None:  # an infinite end (the speed beyond a share of the draws) is null
        row.update((key, value if math.isfinite(value) else None) for key, value in
                   zip(COMPARE_BAND_KEYS[2:], band.cost_at_speed(args.speed), strict=True))
    # the cheapest point at least as fast as the speed asked serves it (below the slowest point,
    # the slowest, cheapest point); between two points the cost is read off the frontier
    serving = front.cheapest_at(args.speed)
    cost = float(front.cost_at_speed(args.speed))
    row.update(feasible=True, usd_per_mtok=cost if math.isfinite(cost) else serving.usd_per_mtok,
               binding=serving.binding, gpus=serving.gpus, batch=serving.batch)
    return row


def cmd_compare(args) -> str:
    band_options = band_cli.options(args)
    rows = [_compare_row(model, gpu, args, band_options) for model in args.models
            for gpu in args.gpus]
    _require_finite(rows)
    if args.json:
        return _dumps(rows)
    if args.csv:
        keys = list(rows[0])
        lines = [",".join(keys)]
        lines += [",".join(_csv_cell(row[key]) for key in keys) for row in rows]
        return "\n".join(lines)
    for row in rows:
        if not row["feasible"]:
            why = row["infeasible"]
            if row["max_tokens_per_s"] is not None:
                why = "beyond top speed"
            elif "do not fit" in why:
                why = "does not fit"
            row["binding"] = f"infeasible: {why}"
        row["max_tokens_per_s"] = ("-" if row["max_tokens_per_s"] is None
                                   else format(row["max_tokens_per_s"], ".1f"))
        row["usd_per_mtok"] = "-" if row["usd_per_mtok"] is None else _money(row["usd_per_mtok"])
        if band_options is not None:
            row["top_band"] = ("-" if row["max_tokens_per_s_low"] is None else band_cli.span(
                row["max_tokens_per_s_low"], row["max_tokens_per_s_high"], ".1f"))
            low, high = row["usd_per_mtok_low"], row["usd_per_mtok_high"]
            row["cost_band"] = "-" if not row["feasible"] else (
                f"{_money(low)}-{'inf' if high is None else _money(high)}")
    price = ("each GPU's own $" if args.price is None else f"${args.price:g}"
             if isinstance(args.price, float) else f"each GPU's 2026 {args.price} $")
    head = (f"$/Mtok at {args.speed:g} tok/s per user, at cost ({price}/GPU-hour), each row on "
            "its own curve:")
    curves = sorted({row["curve"] for row in rows})
    note = "\ncurves" + ("" if args.curve else " (by default the paper's for the paper's presets, "
                                                "the physical one for a model read from a "
                                                "config.json)") + ":\n"
    note += "\n".join(f"  {curve}: {CURVE_MEANING[curve]}" for curve in curves)
    columns = list(COMPARE_COLUMNS)
    if band_options is None:
        return "\n".join([head, _table(rows, columns), note])
    top = columns.index(("max_tokens_per_s", "top tok/s", "s"))
    columns[top + 1:top + 1] = [("top_band", "top band", "s")]
    columns[top + 3:top + 3] = [("cost_band", "$/Mtok band", "s")]
    band_note = (f"band: 10th-90th percentiles over {band_options['draws']} draws (seed "
                 f"{band_options['seed']}) of each GPU's assumed and provisional values "
                 "(data/band_ranges.toml), read off the frontier of each draw's re-evaluated "
                 "configurations (an upper bound of a re-searched cost)")
    return "\n".join([head, _table(rows, columns), note, band_note])


def _money(usd: float) -> str:
    """Dollars to four significant digits, never in exponent form (0.002396, 18.10, 1235)."""
    digits = max(0, 3 - math.floor(math.log10(usd))) if usd > 0 else 2
    return f"{usd:.{digits}f}"
