"""The command line's ``serve`` (the serving frontier), and the helpers ``measured``
(:mod:`.measured`) shares. Registered by :mod:`.cli`; loads the serving model only when it
runs."""

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
    _price,
    _price_help,
    _range_help,
    _require_finite,
    _table,
    add_engine_option,
    engine_text,
    price_for,
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


def add_arguments(cmd, name: str) -> None:
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
    add_engine_option(cmd)
    cmd.add_argument("--disaggregated", action="store_true",
                     help="separate prefill and decode pools (default: aggregated, chunked "
                          "prefill)")
    for option, text in (("--ttft-ms", "time-to-first-token limit"),
                         ("--tpot-ms", "time-per-output-token limit")):
        cmd.add_argument(option, type=_number(option, SERVE_RANGES), default=None,
                         help=_range_help(option, f"{text} in ms", SERVE_RANGES))
    cmd.add_argument("--price", type=_price, default=None, help=_price_help)
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
                        tpot_ms=args.tpot_ms, price=price_for(args.price, args.gpu),
                        engine=args.engine)
        front = serving_frontier(work)
    except ServeError as exc:
        if exc.field == "engine":
            raise InputError(f"argument --engine: {str(exc).removeprefix('engine: ')}") from None
        option = {"model": "--model", "weight_bits": "--weight-bits"}.get(exc.field, "--model")
        message = str(exc).removeprefix(f"{exc.field}: ")
        raise InputError(f"argument {option}: infeasible: {message}") from None
    rows = _serve_rows(front)
    for row in rows:
        row["engine"] = engine_text(args.engine)
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
    keys = [k for k, _, _ in SERVE_COLUMNS] + ["mode", "binding_prefill", "curve", "engine"]
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
        from ..serving.step_time import engine_label
        head += f", engine {engine_label(w.gpu, w.engine)}"
        low, high = _band(w.gpu, w.engine)
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


def _band(gpu, engine: str | None = None) -> tuple[float, float]:
    from ..serving.step_time import fitted
    eff = fitted(gpu, engine)
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
    limits = [f"{name} ≤ {value:g} ms" for name, value in (("TTFT", w.ttft_ms),
                                                           ("TPOT", w.tpot_ms)) if value]
    ax.set_title(f"{w.model.name} on {w.gpu.name}, {w.input_len:g} in / {w.output_len:g} out\n"
                 f"{'disaggregated' if w.disaggregated else 'aggregated (chunked prefill)'}, "
                 f"curve {w.curve}, {', '.join(limits) or 'no TTFT or TPOT limit'}",
                 fontsize=10)
    ax.legend(fontsize=9)
    _save(fig, path)
