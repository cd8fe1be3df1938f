"""``measured``: a user's measured serving points against the limit and the estimate, each row
with the arrival model its scenario is read under; ``--plot`` draws every group of points that
shares a deployment over its frontiers, and the other compared points as ratios."""

from __future__ import annotations

import math

from .common import _dumps, _json_csv_options, _plot_path, _require_finite, _table

MEASURED_COLUMNS = (
    ("point_id", "point", "s"), ("engine", "engine", "s"), ("scenario", "scenario", "s"),
    ("arrivals", "arrivals", "s"),
    ("quantity", "quantity", "s"),
    ("measured", "measured", ".4g"), ("limit", "limit", ".4g"), ("estimate", "estimate", ".4g"),
    ("efficiency", "vs limit", ".3f"), ("error", "vs est", ".3f"),
)
UNITS = {"output_tok_s_per_gpu": "output tokens/s per GPU", "tok_s_per_user": "tokens/s per user",
         "input_tok_s_per_gpu": "input tokens/s per GPU", "tpot_ms": "ms per output token",
         "ttft_ms": "ms to the first token"}
RATIOS = ("vs limit, vs est: the measured speed over the curve's (for a time, the curve's time "
          "over the measured one); below 1 the measurement is slower than the curve")


def add_arguments(cmd, name: str) -> None:
    cmd.add_argument("file", metavar="FILE.csv",
                     help="a CSV in the columns of the gathered points (see the README); an "
                          "unknown column, model or GPU is an error")
    cmd.add_argument("--plot", type=_plot_path, default=None, metavar="FILE",
                     help="also draw each group of points sharing a model, GPU, precisions and "
                          "lengths over its frontiers, and the other points as ratios, into "
                          "FILE (.svg or .png)")
    _json_csv_options(cmd)


def _speed_ratio(quantity: str, measured: float, curve: float | None) -> float | None:
    """Measured speed over the curve's: for a time, the curve's time over the measured."""
    if not curve:
        return None
    from ..reality.measured_points import TIMES
    return curve / measured if quantity in TIMES else measured / curve


def measured_rows(points) -> list[dict]:
    """Each point against the limit and the (pooled) estimate (one row each; ``reason`` where a
    point is not compared), with the arrival model its scenario is read under and the family of
    its engine (serving.engines; 'unknown' where the file names none)."""
    from ..reality import measured_points as mp
    from ..serving.engines import family
    from .serving import _band
    rows = []
    for point in points:
        resolved = mp.resolve(point, times=True)
        q = point.compared
        row = {"point_id": point.point_id, "model": point["model"], "gpu": point["gpu"],
               "engine": family(point["engine"]), "scenario": point["scenario"],
               "arrivals": mp.arrivals(point)[0],
               "arrivals_meaning": mp.arrivals(point)[1], "quantity": q,
               "unit": UNITS.get(q), "measured": point.measured(q) if q else None,
               "limit": None, "estimate": None, "efficiency": None, "error": None,
               "band_low": None, "band_high": None, "reason": resolved.reason or None}
        if not resolved.reason:
            probe = mp.probe(resolved)
            limit = probe.predict("limit", by=q)[q]
            estimate = probe.predict("estimate", by=q)[q]
            row.update(limit=limit, estimate=estimate,
                       efficiency=_speed_ratio(q, row["measured"], limit),
                       error=_speed_ratio(q, row["measured"], estimate))
            if estimate:
                low, high = _band(resolved.gpu)  # the band of tok/s per GPU; a time's inverts
                ends = (estimate / math.exp(high), estimate / math.exp(low)) if q in mp.TIMES \
                    else (estimate * math.exp(low), estimate * math.exp(high))
                row.update(band_low=ends[0], band_high=ends[1])
            if limit is None and estimate is None:
                row["reason"] = "infeasible: the deployment does not fit"
        rows.append(row)
    return rows


def cmd_measured(args) -> str:
    from ..core.validation import InputError
    from ..reality import measured_points as mp
    from .serving import _csv
    try:
        points = mp.read_points(args.file)
    except mp.PointsError as exc:
        raise InputError(f"argument FILE.csv: {exc}") from None
    rows = measured_rows(points)
    _require_finite(rows)
    if args.plot:
        from .measured_plot import plot_measured
        plot_measured(points, rows, args.plot)
    if args.json:
        return _dumps(rows)
    keys = ["point_id", "model", "gpu", "engine", "scenario", "arrivals", "arrivals_meaning", "quantity",
            "unit", "measured",
            "limit", "estimate", "efficiency", "error", "band_low", "band_high", "reason"]
    if args.csv:
        return _csv(rows, keys)
    shown = [{k: "-" if row[k] is None else format(row[k], spec)
              for k, _, spec in MEASURED_COLUMNS} for row in rows]
    table = _table(shown, [(k, h, "s") for k, h, _ in MEASURED_COLUMNS])
    kinds = dict.fromkeys((row["arrivals"], row["arrivals_meaning"]) for row in rows)
    arrivals = [f"  {name}: {meaning}" for name, meaning in kinds]
    units = dict.fromkeys(row["quantity"] for row in rows if row["quantity"])
    notes = [f"  {r['point_id']}: not compared: {r['reason']}" for r in rows if r["reason"]]
    return "\n".join([table, RATIOS,
                      "units: " + "; ".join(f"{q} in {UNITS[q]}" for q in units),
                      "arrivals:", *arrivals, *notes])
