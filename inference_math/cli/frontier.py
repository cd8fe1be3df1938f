"""``frontier``, ``max-speed`` and ``preferred``: the full model's Pareto frontier, its fastest
point, and the point maximizing tok/s^alpha / price, as a table, JSON or CSV (``frontier --plot``
also draws it)."""

from __future__ import annotations

import math

from ..core.validation import InputError
from . import bands as band_cli
from .common import (
    _csv_cell,
    _dumps,
    _number,
    _plot_path,
    _range_help,
    _require_finite,
    _table,
    add_engine_option,
)
from .setting import CURVE_MEANING, _add_full_model_options, _progress, _setting

#: The band's columns of a frontier (``--band``): key, heading, format.
BAND_COLUMNS = (("tokens_per_s_low", "tok/s lo", ".1f"), ("tokens_per_s_high", "tok/s hi", ".1f"),
                ("usd_per_mtok_low", "$/Mtok lo", ".3f"), ("usd_per_mtok_high", "$/Mtok hi", ".3f"))


def add_arguments(cmd, name: str) -> None:
    _add_full_model_options(cmd)
    if name == "preferred":
        cmd.add_argument("--alpha", type=_number("--alpha"), default=3.0,
                         help=_range_help("--alpha", "user-preference exponent (default 3, as "
                                                     "in the paper; 0: the cheapest point)"))
    if name == "frontier":
        cmd.add_argument("--plot", type=_plot_path, default=None, metavar="FILE",
                         help="also draw the frontier into FILE (.svg or .png)")
    add_engine_option(cmd)
    band_cli.add_options(cmd)


def _point_row(point, curve: str) -> dict:
    """A frontier point as a row, with the curve it lies on; the draft latency is None (JSON
    null) when nothing is drafted."""
    row = point.as_dict()
    if row["gamma"] == 1:
        row["draft_latency_s"] = None
    row["curve"] = curve
    return row


def _points_output(points, args, curve: str, band=None) -> str:
    """The points as JSON, CSV or a table; ``band`` (rows of the band's columns, and the line
    saying what it is) adds BAND_COLUMNS."""
    from ..fullmodel.search import FRONTIER_COLUMNS

    rows = [_point_row(pt, curve) for pt in points]
    columns = list(FRONTIER_COLUMNS)
    if band is not None:
        for row, extra in zip(rows, band[0], strict=True):
            row.update(extra)
        columns += list(BAND_COLUMNS)
    _require_finite(rows)
    if args.json:
        return _dumps(rows if len(rows) > 1 or args.command == "frontier" else rows[0])
    keys = [key for key, _, _ in columns] + ["curve"]
    if args.csv:
        lines = [",".join(keys)]
        lines += [",".join(_csv_cell(row[key]) for key in keys) for row in rows]
        return "\n".join(lines)
    head = f"curve: {curve}, {CURVE_MEANING[curve]}\n"
    if band is not None:
        head += band[1] + "\n"
        for row in rows:  # a missing end (an infinite cost) shows as 'inf'
            row.update({key: math.inf for key, _, _ in BAND_COLUMNS if row[key] is None})
    return head + _table(rows, columns)


def _draw(front, path: str, band=None) -> None:
    """Draw ``front`` (and its ``band``, a FrontierBand) into ``path``; matplotlib and the book's
    figure style load only here."""
    from ..book.frontier_plot import save_frontier_plot

    setting = front.setting
    bits = 8 * setting.w  # block scales add a few hundredths of a bit: 8.03 reads as 8
    bits_text = f"{round(bits)}" if abs(bits - round(bits)) < 0.1 else f"{bits:.3g}"
    title = f"{setting.model.name} on {setting.gpu.name}, {bits_text}-bit weights"
    bands = None if band is None else {setting.model.name: band}
    try:
        save_frontier_plot({setting.model.name: front}, path, title, bands)
    except OSError as exc:
        raise InputError(f"argument --plot: cannot write {path!r}: {exc.strerror or exc}") from None


def cmd_frontier(args) -> str:
    from ..fullmodel.search import fastest, frontier

    if args.engine is not None:  # the full model's search has no estimate curve
        raise InputError("argument --engine: applies to the estimate curve only, which the "
                         f"full model's {args.command} does not search (serve and predict "
                         "have it)")
    band_options = band_cli.options(args)
    setting = _setting(args)
    if args.command == "max-speed" and band_options is None:  # no need for the whole frontier
        with _progress(setting, args.quiet) as advance:
            top = fastest(setting, exact=args.exact, progress=advance)
        return _points_output([top], args, setting.curve_name)
    with _progress(setting, args.quiet) as advance:
        front = frontier(setting, exact=args.exact, progress=advance)
    result = band = None
    if band_options is not None:
        from ..analysis.bands import frontier_band
        result = frontier_band(setting, front, **band_options)
        band = (result.rows(), band_cli.describe(result.spread, setting.gpu.name,
                                                 **band_options))
    if getattr(args, "plot", None):
        _draw(front, args.plot, result)
    if args.command == "max-speed":
        points = [front.max_speed()]
    elif args.command == "preferred":
        points = [front.preferred(args.alpha)]
    else:
        points = front.points
    if band is not None and points is not front.points:  # the chosen point's row of the band
        rows = band[0]
        band = ([rows[next(i for i, pt in enumerate(front.points) if pt is points[0])]], band[1])
    return _points_output(points, args, setting.curve_name, band)
