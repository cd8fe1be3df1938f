"""The command line's serving commands: ``serve`` (the serving frontier) and ``measured`` (a
user's measured points against the limit and the estimate). Registered by :mod:`.cli`; loads the
serving model only when one of them runs."""

from __future__ import annotations

import csv
import io
import math

from ..core.validation import InputError, Interval
from . import bands as band_cli
from .common import (
    _dumps,
    _json_csv_options,
    _number,
    _plot_path,
    _range_help,
    _require_finite,
    _table,
)

SERVE_RANGES = {
    "--input-len": Interval(1.0, 1e7), "--output-len": Interval(1.0, 1e7),
    "--ttft-ms": Interval(1e-3, 1e8), "--tpot-ms": Interval(1e-3, 1e8),
}
SERVE_COLUMNS = (
    ("tokens_per_s_per_user", "tok/s/user", ".1f"),
    ("output_tokens_per_s_per_gpu", "tok/s/GPU", ".1f"),
    ("ttft_ms", "TTFT ms", ".0f"),
    ("tpot_ms", "TPOT ms", ".2f"),
    ("usd_per_mtok_output", "$/Mtok out", ".3f"),
    ("usd_per_mtok_input", "$/Mtok in", ".4f"),
    ("layout", "decode layout", "s"),
    ("binding_decode", "binding", "s"),
)
MEASURED_COLUMNS = (
    ("point_id", "point", "s"), ("quantity", "quantity", "s"), ("measured", "measured", ".4g"),
    ("limit", "limit", ".4g"), ("estimate", "estimate", ".4g"),
    ("efficiency", "meas/limit", ".3f"), ("error", "meas/est", ".3f"),
)


def add_arguments(cmd, name: str) -> None:
    if name == "measured":
        cmd.add_argument("file", metavar="FILE.csv",
                         help="a CSV in the columns of the gathered points (see the README)")
        cmd.add_argument("--plot", type=_plot_path, default=None, metavar="FILE",
                         help="also draw the points and the frontiers into FILE (.svg or .png)")
        _json_csv_options(cmd)
        return
    from ..serving.step_time import CURVES
    from .setting import _add_model_gpu

    _add_model_gpu(cmd)
    for option, text in (("--input-len", "prompt tokens per request"),
                         ("--output-len", "generated tokens per request")):
        cmd.add_argument(option, required=True, type=_number(option, SERVE_RANGES),
                         help=_range_help(option, text, SERVE_RANGES))
    cmd.add_argument("--weight-bits", type=int, choices=(4, 8, 16), default=None,
                     help="weight precision (default: the model's)")
    cmd.add_argument("--kv-bits", type=int, choices=(4, 8, 16), default=None,
                     help="bits per KV-cache element (default: the checkpoint's, else 16)")
    cmd.add_argument("--curve", choices=CURVES, default="estimate",
                     help="estimate (default): the physical rules at the efficiencies fitted on "
                          "public measurements, with a band; limit: a bound no deployment beats; "
                          "physical: the physical rules at the presets' caps, weights and cache "
                          "in 90%% of HBM; paper: the "
                          "reference code's rules")
    cmd.add_argument("--disaggregated", action="store_true",
                     help="separate prefill and decode pools (default: aggregated, chunked "
                          "prefill)")
    for option, text in (("--ttft-ms", "time-to-first-token limit"),
                         ("--tpot-ms", "time-per-output-token limit")):
        cmd.add_argument(option, type=_number(option, SERVE_RANGES), default=None,
                         help=_range_help(option, f"{text} in ms", SERVE_RANGES))
    cmd.add_argument("--price", type=_number("--price"), default=None,
                     help=_range_help("--price", "$ per GPU-hour (default: the preset's)"))
    cmd.add_argument("--plot", type=_plot_path, default=None, metavar="FILE",
                     help="also draw the frontier into FILE (.svg or .png)")
    cmd.add_argument("--quiet", action="store_true", help="no notes on standard error")
    band_cli.add_options(cmd)
    _json_csv_options(cmd)


def _layout_text(point) -> str:
    d = point.decode
    text = f"{d['gpus']:g} GPU TP{d['tp']:g}"
    if d["dp"] > 1:
        text += f" DP{d['dp']:g}"
    if d["ep"] > 1:
        text += f" EP{d['ep']:g}"
    text += f" b{d['batch']:g}"
    if point.prefill is not None:
        p = point.prefill
        text += f" + prefill {p['gpus']:g} GPU P{p['prompts']:g}"
    elif d.get("chunk"):
        text += f" C{d['chunk']:g}"
    return text


def _serve_rows(front) -> list[dict]:
    rows = []
    for p in front.points:
        row = p.as_dict()
        row["layout"] = _layout_text(p)
        rows.append(row)
    return rows


def _csv(rows: list[dict], keys: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(keys)
    for row in rows:
        writer.writerow(["" if row.get(k) is None else row.get(k) for k in keys])
    return buffer.getvalue().rstrip("\n")


#: The band's columns of ``serve --band`` in the table: (key, heading, format of each end).
SERVE_BAND_COLUMNS = (("output_tokens_per_s_per_gpu", "tok/s/GPU band", ".1f"),
                      ("usd_per_mtok_output", "$/Mtok out band", ".3f"))


def cmd_serve(args) -> str:
    from ..serving.serving_frontier import ServeError, Workload, serving_frontier
    band_options = band_cli.options(args)
    try:
        work = Workload(args.model, args.gpu, args.input_len, args.output_len,
                        weight_bits=args.weight_bits, kv_bits=args.kv_bits, curve=args.curve,
                        disaggregated=args.disaggregated, ttft_ms=args.ttft_ms,
                        tpot_ms=args.tpot_ms, price=args.price)
        front = serving_frontier(work)
    except ServeError as exc:
        option = {"model": "--model", "weight_bits": "--weight-bits"}.get(exc.field, "--model")
        message = str(exc).removeprefix(f"{exc.field}: ")
        raise InputError(f"argument {option}: infeasible: {message}") from None
    rows = _serve_rows(front)
    band = None
    if band_options is not None:
        from ..analysis.bands import SERVING_QUANTITIES, serving_band
        band = serving_band(work, front, **band_options)
        for row, extra in zip(rows, band.rows(), strict=True):
            row.update(extra)
    _require_finite(rows + [r["decode"] for r in rows]
                    + [r["prefill"] for r in rows if r["prefill"]])
    if args.plot:
        _plot_serve(front, args.plot, band)
    if args.json:
        out = []
        for row in rows:
            decode, prefill = row.pop("decode"), row.pop("prefill")
            out.append({**row, "decode": decode, "prefill": prefill})
        return _dumps(out)
    keys = [k for k, _, _ in SERVE_COLUMNS] + ["mode", "binding_prefill", "curve"]
    if front.workload.curve == "estimate":
        keys += ["band_low", "band_high"]
    if band is not None:
        keys += [f"{q}_{end}" for q in SERVING_QUANTITIES for end in ("low", "high")]
    if args.csv:
        return _csv(rows, keys)
    w = front.workload
    head = (f"{w.model.name} on {w.gpu.name}: {w.input_len:g} in / {w.output_len:g} out, "
            f"{'disaggregated' if w.disaggregated else 'aggregated (chunked prefill)'}, "
            f"curve {w.curve}")
    if w.curve == "estimate":
        low, high = _band(w.gpu)
        head += (f"; band {math.exp(low):.2f}-{math.exp(high):.2f} x tok/s/GPU (10th-90th "
                 f"percentiles of the estimate's out-of-fold errors)")
    columns = list(SERVE_COLUMNS)
    if band is not None:
        head += "\n" + band_cli.describe(band.spread, w.gpu.name, estimate=w.curve == "estimate",
                                         **band_options)
        for row in rows:
            for key, _, spec in SERVE_BAND_COLUMNS:
                row[f"{key}_band"] = band_cli.span(row[f"{key}_low"], row[f"{key}_high"], spec)
        columns[2:2] = [(f"{SERVE_BAND_COLUMNS[0][0]}_band", SERVE_BAND_COLUMNS[0][1], "s")]
        columns[6:6] = [(f"{SERVE_BAND_COLUMNS[1][0]}_band", SERVE_BAND_COLUMNS[1][1], "s")]
    return head + "\n" + _table(rows, columns)


def _band(gpu) -> tuple[float, float]:
    from ..serving.step_time import fitted
    eff = fitted(gpu)
    return eff.band_low, eff.band_high


def _save(fig, path) -> None:
    """Write a figure to ``path``; a file that cannot be written is one line naming --plot."""
    import matplotlib.pyplot as plt
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as exc:
        raise InputError(f"argument --plot: cannot write {path!r}: {exc.strerror or exc}") \
            from None
    finally:
        plt.close(fig)


def _plot_serve(front, path, band=None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    speed = [p.tokens_per_s_per_user for p in front.points]
    rate = [p.output_tokens_per_s_per_gpu for p in front.points]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(speed, rate, marker="o", ms=3, label=f"{front.workload.curve}")
    if band is not None:
        ax.fill_between(speed, band.low("output_tokens_per_s_per_gpu"),
                        band.high("output_tokens_per_s_per_gpu"), alpha=0.25,
                        label="band: " + ("the estimate's errors and " if
                                          front.workload.curve == "estimate" else "")
                        + "the GPU's assumed values, 10th-90th percentiles")
    elif front.workload.curve == "estimate":
        ax.fill_between(speed, [p.band_low for p in front.points],
                        [p.band_high for p in front.points], alpha=0.25,
                        label="band (10th-90th percentile errors)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from ..book.serving_plot import plain_log_ticks
    plain_log_ticks(ax)
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("output tokens/s per GPU (prefill counted)")
    w = front.workload
    ax.set_title(f"{w.model.name} on {w.gpu.name}, {w.input_len:g} in / {w.output_len:g} out",
                 fontsize=10)
    ax.legend(fontsize=9)
    _save(fig, path)


def measured_rows(points) -> list[dict]:
    """Each point against the limit and the estimate (one row each; ``reason`` where a point
    is not compared)."""
    from ..reality import measured_points as mp
    rows = []
    for point in points:
        resolved = mp.resolve(point)
        row = {"point_id": point.point_id, "model": point["model"], "gpu": point["gpu"],
               "scenario": point["scenario"], "quantity": point.primary,
               "measured": point.measured(point.primary) if point.primary else None,
               "limit": None, "estimate": None, "efficiency": None, "error": None,
               "band_low": None, "band_high": None, "reason": resolved.reason or None}
        if not resolved.reason:
            probe = mp.probe(resolved)
            q = point.primary
            limit = probe.predict("limit")[q]
            estimate = probe.predict("estimate")[q]
            row.update(limit=limit, estimate=estimate)
            if limit:
                row["efficiency"] = row["measured"] / limit
            if estimate:
                low, high = _band(resolved.gpu)
                row.update(error=row["measured"] / estimate, band_low=estimate * math.exp(low),
                           band_high=estimate * math.exp(high))
            if limit is None and estimate is None:
                row["reason"] = "infeasible: the deployment does not fit"
        rows.append(row)
    return rows


def cmd_measured(args) -> str:
    from ..reality import measured_points as mp
    try:
        points = mp.read_points(args.file)
    except mp.PointsError as exc:
        raise InputError(f"argument FILE.csv: {exc}") from None
    rows = measured_rows(points)
    _require_finite(rows)
    if args.plot:
        _plot_measured(points, rows, args.plot)
    if args.json:
        return _dumps(rows)
    keys = ["point_id", "model", "gpu", "scenario", "quantity", "measured", "limit",
            "estimate", "efficiency", "error", "band_low", "band_high", "reason"]
    if args.csv:
        return _csv(rows, keys)
    shown = [{k: "-" if row[k] is None else format(row[k], spec)
              for k, _, spec in MEASURED_COLUMNS} for row in rows]
    table = _table(shown, [(k, h, "s") for k, h, _ in MEASURED_COLUMNS])
    notes = [f"  {r['point_id']}: not compared: {r['reason']}" for r in rows if r["reason"]]
    return "\n".join([table, *notes])


def _plot_measured(points, rows, path) -> None:
    """The points of the largest group sharing a model, GPU, precisions and lengths that state
    both axes, over the limit's, the estimate's (with its band) and the paper's frontiers; the
    other points as measured against the estimate at their conditions, in a second panel."""
    from collections import Counter

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..book.serving_plot import serving_figure
    from ..reality import measured_points as mp
    from ..serving.serving_frontier import ServeError, Workload, serving_frontier

    def key(point):
        return (point["model"], point["gpu"], point["weight_bits"], point["kv_bits"],
                point["input_len"], point["output_len"])
    placed = [p for p in points if not mp.resolve(p).reason
              and p.measured("tok_s_per_user") and p.measured("output_tok_s_per_gpu")]
    if placed:
        group, _ = Counter(key(p) for p in placed).most_common(1)[0]
        chosen = [p for p in placed if key(p) == group]
        first = mp.resolve(chosen[0])
        try:
            fronts = {curve: serving_frontier(Workload(first.model, first.gpu, group[4], group[5],
                                                       weight_bits=group[2], kv_bits=group[3],
                                                       curve=curve))
                      for curve in ("limit", "estimate", "paper")}
        except ServeError:
            fronts = None
        if fronts is not None:
            engines = list(dict.fromkeys(str(p["engine"] or "measured") for p in chosen))
            measured = [(str(p["engine"] or "measured"), p.measured("tok_s_per_user"),
                         p.measured("output_tok_s_per_gpu")) for p in chosen]
            speeds = [m[1] for m in measured] + [p.tokens_per_s_per_user
                                                 for p in fronts["estimate"].points]
            xlim = (min(speeds) / 1.5, max(m[1] for m in measured) * 3)
            fig = serving_figure(fronts, measured, engines, xlim,
                                 f"{first.model.name} on {first.gpu.name}, {group[4]:g} in / "
                                 f"{group[5]:g} out")
            _save(fig, path)
            return
    ok = [r for r in rows if r["estimate"] and r["limit"]]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if ok:
        ax.scatter([r["estimate"] for r in ok], [r["measured"] for r in ok], s=14,
                   label="measured vs estimate")
        ax.scatter([r["limit"] for r in ok], [r["measured"] for r in ok], s=14, marker="x",
                   label="measured vs limit")
        top = max(max(r["limit"], r["measured"]) for r in ok) * 1.5
        low = min(min(r["estimate"], r["measured"]) for r in ok) / 1.5
        ax.plot([low, top], [low, top], color="k", lw=0.8, label="measured = curve")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("the curve's value at the point's conditions")
    ax.set_ylabel("measured")
    ax.legend(fontsize=9)
    _save(fig, path)
