"""The ``inference-math`` command line.

    inference-math models                      list model presets with key numbers
    inference-math gpus                        list GPU presets with key numbers
    inference-math toy-max-speed --model M --gpu G [--t-hop S] [--n-reduce N] [--capped] [--json]
    inference-math frontier  --model M --gpu G [options] [--json | --csv]   the Pareto frontier
    inference-math max-speed --model M --gpu G [options] [--json | --csv]   its fastest point
    inference-math preferred --model M --gpu G [options] [--alpha A] [--json | --csv]
                                                the point maximizing tok/s^alpha / price
    inference-math compare --models A,B --gpus X,Y [--speed S] [options] [--json | --csv]
                                                top speed and cost at S tok/s per user, per pair
    inference-math predict --model M --gpu G --tp N --batch B --input-len I --output-len O [options]
                                                the full model at one given deployment
    inference-math describe-model MODEL_OR_PATH [--weight-bits B] [--json]
                                                parameters, layer mix, KV cache and weight bytes
                                                of a preset or a Hugging Face config.json
    inference-math serve --model M --gpu G --input-len I --output-len O [options]
                                                the serving frontier: output tok/s per GPU
                                                (prefill counted) against tok/s per user
    inference-math measured FILE.csv [--plot F] [--json | --csv]
                                                measured points against the limit and estimate
    inference-math sweep --models A,B --gpus X,Y --out FILE.parquet|csv [--weight-bits own,8,4]
                         [--contexts 0,131072] [--prices P,Q] [--speeds 20,100] [--jobs N]
                         [--scheduler ADDRESS] [--json]
                                                frontier summaries over the grid, in parallel
                                                (local processes or a Dask cluster), resumable
    inference-math sensitivity --model M --gpu G --speed S [--cut F] [options] [--json | --csv]
                                                elasticities of the cost at S tok/s per user in
                                                each hardware and model number; with --cut, the
                                                factor each needs alone to divide the cost by F

--model and --drafter take a preset or a path to a config.json (or its folder); the full model
reads only architectures of uniform layers from a config (describe-model reads the others).
describe-model's --weight-bits B stores every weight at B bits, B in [1, 32].

Options of the full model (Erdil 2025, section 3): --weight-bits {4,8,16}, --context TOKENS,
--drafter MODEL, --acceptance P (default 0.8 with a drafter), --no-pipeline, --price $/GPU-h,
--exact (every frontier point instead of the paper's 1,000 latency thresholds). The full model
runs on the GPU presets with a collective model (``inference-math gpus`` marks them).
``frontier --plot FILE.svg|png`` also draws the frontier into FILE (matplotlib is imported only
then). ``compare`` takes comma-separated lists of models and GPUs (presets or paths) and, for every
pair, reports the top speed and the cost at ``--speed`` tokens/s per user (default 50); a pair
that cannot reach that speed, or cannot hold the model, is a row marked infeasible.

``--gpu`` takes a preset name or the path of a GPU file: a TOML file with one GPU's fields at the
top level, the schema of ``presets/gpus.toml`` (a name containing ``/`` or ending in ``.toml`` is
read as a path). A bad file (unreadable, malformed TOML, an unknown or missing field, a wrong
type, a negative or non-finite number) is reported in one line naming the file and the field.

Numbers must lie in these ranges (wide around any real deployment, narrow enough that no result
overflows or underflows a float): --t-hop [1e-12, 1000] s, --n-reduce [0.001, 1000],
--context [0, 1e+09] tokens, --acceptance [0, 1), --price [0.0001, 10000] $/GPU-hour,
--alpha [0, 20], --speed [0.01, 100000] tokens/s per user.

``--band`` on ``frontier``, ``max-speed``, ``preferred``, ``compare`` and ``serve`` (with
``--draws N``, ``--seed S``) adds the
10th and 90th percentiles of each row over draws of the GPU's assumed and provisional values
(analysis/bands.py; on serve's estimate, times the estimate's band): see the README's "Bands".

Bad input (unknown preset, a number out of range, a malformed option, a GPU the full model cannot
time, a context whose KV cache fits no instance) prints one line naming the flag and exits with
status 2; an output that cannot be written (a full disk) prints one line and exits with status 1;
a reader that closes the pipe early (``| head``) ends the command quietly with status 141.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from contextlib import contextmanager

from ..core.validation import InputError, Interval, parse_within
from ..fullmodel import full_model as fm
from ..fullmodel.search import (
    CURVES,
    FRONTIER_COLUMNS,
    MAX_LOG2_GPUS,
    Setting,
    default_curve,
    frontier,
    search_steps,
)
from ..fullmodel.toy_model import max_speed
from ..presets.hardware import GPUS, full_model_gpus, get_gpu
from ..presets.hf_config import read_architecture
from ..presets.layered import MTP_DRAFTER, mtp_drafter
from ..presets.models import describe, get_model, is_path, preset_names
from . import bands as band_cli
from . import sensitivity as sensitivity_cli
from . import serving
from . import sweep as sweep_cli

EXIT_USAGE = 2
GPU_FILE_HELP = "a path to a GPU file (TOML, one GPU; see the README's 'Your own GPU')"
EXIT_OUTPUT = 1  # the output could not be written
EXIT_PIPE = 128 + 13  # the reader closed the pipe: what a shell reports for SIGPIPE
EXIT_INTERRUPT = 128 + 2

DESCRIBE_BITS = Interval(1.0, 32.0)
RANGES = {
    "--t-hop": Interval(1e-12, 1e3), "--n-reduce": Interval(1e-3, 1e3),
    "--context": Interval(0.0, 1e9), "--acceptance": Interval(0.0, 1.0, open_high=True),
    "--price": Interval(1e-4, 1e4), "--alpha": Interval(0.0, 20.0),
    "--speed": Interval(1e-2, 1e5),
}
#: compare's per-user speed when --speed is not given (tokens/s per user)
DEFAULT_SPEED = 50.0
PLOT_SUFFIXES = (".svg", ".png")


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line (no usage dump, no traceback)."""

    def error(self, message: str):
        raise InputError(message)


def _number(option: str, ranges: dict | None = None):
    """argparse type: a number in ``RANGES[option]`` (or in ``ranges[option]``)."""
    interval = (RANGES if ranges is None else ranges)[option]

    def convert(text: str) -> float:
        try:
            return parse_within(option, text, interval)
        except InputError as exc:
            # argparse already prefixes "argument --option:"
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{option} ")) from None

    return convert


def _preset(getter, full_model: bool = False):
    """argparse type: a model or GPU preset; for the full model, a GPU it can time."""
    def convert(text: str):
        try:
            item = getter(text)
            if full_model and getter is get_gpu:
                item.require_collective_model()
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        architecture = getattr(item, "architecture", None)
        if architecture is None and getter is get_model and is_path(text):
            architecture = read_architecture(text)
        if architecture is not None:
            _notice_read_by_fields(architecture.model_type, architecture.read_by_fields)
        return item

    return convert


def _notice_read_by_fields(model_type: str, read_by_fields: bool) -> None:
    """One line on standard error when a model_type never seen before was read by its fields."""
    if read_by_fields and sys.stderr is not None:
        print(f"inference-math: note: model_type {model_type!r} is new to this reader; read by "
              "what its fields mean (every field is understood)", file=sys.stderr)


def _range_help(option: str, text: str, ranges: dict | None = None) -> str:
    return f"{text}; in {(RANGES if ranges is None else ranges)[option]}"


@contextmanager
def _blame(option: str):
    """Prefix an InputError raised inside the block with the option it comes from."""
    try:
        yield
    except InputError as exc:
        raise InputError(f"argument {option}: {exc}") from None


def _table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """Plain-text table; columns are (key, heading, format spec)."""
    cells = [[heading for _, heading, _ in columns]]
    for row in rows:
        cells.append([format(row[key], spec) for key, _, spec in columns])
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(line, widths, strict=True))) for line in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _models_rows() -> list[dict]:
    return [
        {
            "name": key, "label": m.name, "total_params": m.total_params,
            "active_params": m.active_params, "layers": m.layers, "d_model": m.d_model,
            "experts": f"{m.n_active_experts}/{m.n_experts}", "weight_bits": m.weight_bits,
            "kv_bytes_per_token": m.kv_bytes_per_token, "source": m.source,
        }
        for key, m in ((key, get_model(key)) for key in preset_names())
    ]


def _gpus_rows() -> list[dict]:
    return [
        {
            "name": key, "label": g.name, "flops_16bit": g.flops(16), "flops_8bit": g.flops(8),
            "flops_4bit": g.flops_by_weight_bits.get(4),  # None: 4-bit weights not supported
            "hbm_bandwidth": g.hbm_bandwidth, "hbm_bytes": g.hbm_bytes,
            "intranode_allreduce_bandwidth": g.intranode_allreduce_bandwidth,
            "internode_allreduce_bandwidth": g.internode_allreduce_bandwidth,
            "node_size": g.node_size, "collective_model": g.collective_model,
            "price_per_hour": g.price_per_hour, "flop_cap": g.flop_cap,
            "bandwidth_cap": g.bandwidth_cap, "kernel_launch_s": g.kernel_launch_s,
            "full_model": g.has_collective_model, "source": g.source, "note": g.note,
            "assumed": list(g.assumed), "provisional": list(g.provisional),
        }
        for key, g in GPUS.items()
    ]


def _dumps(data) -> str:
    """Strict JSON: a NaN or an infinity is an error here, never an output."""
    return json.dumps(data, indent=2, allow_nan=False)


def _cmd_models(args) -> str:
    rows = _models_rows()
    if args.json:
        return _dumps(rows)
    return _table(rows, [("name", "name", "s"), ("label", "model", "s"),
                         ("total_params", "params", ".3e"), ("active_params", "active", ".3e"),
                         ("layers", "layers", "d"), ("d_model", "d_model", "d"),
                         ("experts", "experts", "s"), ("weight_bits", "w bits", "d"),
                         ("kv_bytes_per_token", "KV B/token", ".0f")])


def _flagged(rows: list[dict], kind: str, meaning: str) -> list[str]:
    """Footnote lines naming, per preset, the fields of ``kind`` ('assumed' or 'provisional')."""
    flagged = [f"  {row['name']}: {', '.join(row[kind])}" for row in rows if row[kind]]
    return [f"{kind.capitalize()} ({meaning}):", *flagged] if flagged else []


def _cmd_gpus(args) -> str:
    rows = _gpus_rows()
    if args.json:
        return _dumps(rows)
    for row in rows:
        row["full_model_text"] = "yes" if row["full_model"] else "no"
        row["flops_4bit_text"] = "-" if row["flops_4bit"] is None else f"{row['flops_4bit']:.3g}"
        row["label"] += " *" if row["assumed"] or row["provisional"] else ""
    table = _table(rows, [("name", "name", "s"), ("label", "GPU", "s"),
                          ("flops_16bit", "FLOP/s 16b", ".3g"), ("flops_8bit", "FLOP/s 8b", ".3g"),
                          ("flops_4bit_text", "FLOP/s 4b", "s"),
                          ("hbm_bandwidth", "HBM B/s", ".3g"), ("hbm_bytes", "HBM bytes", ".3g"),
                          ("node_size", "node", "d"),
                          ("price_per_hour", "$/h", ".2f"), ("flop_cap", "FLOP cap", ".2f"),
                          ("bandwidth_cap", "BW cap", ".2f"),
                          ("full_model_text", "full model", "s")])
    notes = (_flagged(rows, "assumed", "no source gives them; see presets/gpus.toml")
             + _flagged(rows, "provisional", "seen only in secondary sources"))
    if notes:
        notes.insert(0, "\n* has assumed or provisional values:")
    return "\n".join([table, *notes])


def _require_finite(rows: list[dict]) -> None:
    """InputError naming the first non-finite number of a result (None means 'not applicable')."""
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(f"the result's {key} is {value} for these inputs; "
                                 "try values nearer the defaults")


def _cmd_toy_max_speed(args) -> str:
    model, gpu = args.model, args.gpu
    result = max_speed(model, gpu, t_hop=args.t_hop, n_reduce=args.n_reduce, capped=args.capped)
    row = {
        "model": model.name, "gpu": gpu.name, "t_hop_s": args.t_hop, "n_reduce": args.n_reduce,
        "bandwidth_capped": args.capped, "max_tokens_per_s": result.tokens_per_s,
        "min_latency_ms": result.min_latency_s * 1e3, "optimal_gpus": result.n_gpu_star,
        "memory_floor_gpus": result.n_gpu_floor, "memory_bound": result.memory_bound,
    }
    _require_finite([row])
    if args.json:
        return _dumps(row)
    floor = " (the memory floor binds)" if result.memory_bound else ""
    return (f"{model.name} on {gpu.name} (Erdil 2025 eq. 14, t_hop = {args.t_hop:g} s, "
            f"n_reduce = {args.n_reduce:g}{', capped bandwidth' if args.capped else ''}):\n"
            f"  maximum speed   {result.tokens_per_s:.4g} tokens/s per request\n"
            f"  minimum latency {result.min_latency_s * 1e3:.3f} ms per token\n"
            f"  optimal size    {result.n_gpu_star:.1f} GPUs{floor}\n"
            f"  memory floor    {result.n_gpu_floor:.0f} GPUs hold the weights")


def _drafter_of(model, drafter):
    """``--drafter``: a model, or 'mtp' for the model's own multi-token-prediction module."""
    if drafter != MTP_DRAFTER:
        return drafter
    with _blame("--drafter"):
        return mtp_drafter(model)


def _setting(args) -> Setting:
    model, gpu = args.model, args.gpu
    drafter = _drafter_of(model, args.drafter)
    weight_bytes = None if args.weight_bits is None else args.weight_bits / 8
    if args.acceptance is not None and drafter is None:
        raise InputError("argument --acceptance: needs --drafter")
    with _blame("--model" if args.weight_bits is None else "--weight-bits"):
        gpu.flops(args.weight_bits or model.weight_bits)
    if drafter is not None:
        with _blame("--drafter"):
            gpu.flops(drafter.weight_bits)
    acceptance = 0.8 if args.acceptance is None else args.acceptance
    setting = Setting(model=model, gpu=gpu, weight_bytes=weight_bytes, context=args.context,
                      drafter=drafter, acceptance=acceptance, use_pp=not args.no_pipeline,
                      price=args.price, label=model.name, curve=args.curve,
                      kv_bits=args.kv_bits)
    _require_fit(setting)
    return setting


def _fits(setting: Setting, context: float) -> bool:
    """Whether the largest instance the search tries holds the weights and one sequence's KV cache.

    eq-full-memory-need at N = 2^MAX_LOG2_GPUS, b = N_PP = 1: the most room any point of the
    search has, so the frontier is empty exactly when this is False.
    """
    branch = fm.compile_branch(setting.model, setting.gpu, False, 1.0, context, setting.w,
                               curve=setting.curve_name, kv_scale=setting.kv_scale)
    return bool(branch["feasible"](2.0**MAX_LOG2_GPUS, 1.0, 1.0, 1.0) > 0)


def _require_fit(setting: Setting) -> None:
    """Refuse, before the search, a setting no instance can hold; name the flag to change."""
    model, largest = setting.model.name, f"2^{MAX_LOG2_GPUS} {setting.gpu.name} GPUs"
    if not _fits(setting, 0.0):
        raise InputError(f"argument --model: infeasible: the weights of {model} do not fit in "
                         f"{largest} (the largest instance searched)")
    if not _fits(setting, setting.context):
        raise InputError(f"argument --context: infeasible: the weights of {model} and the KV cache "
                         f"of one sequence of {setting.context:g} tokens do not fit in {largest} "
                         "(the largest instance searched)")


def _point_row(point, curve: str) -> dict:
    """A frontier point as a row, with the curve it lies on; the draft latency is None (JSON
    null) when nothing is drafted."""
    row = point.as_dict()
    if row["gamma"] == 1:
        row["draft_latency_s"] = None
    row["curve"] = curve
    return row


CURVE_MEANING = {
    "paper": "the reference code's rules at the presets' caps (Erdil 2025)",
    "physical": "the book's physical rules at the presets' caps",
    "limit": "a limit: physical rules at the hardware's peaks, network hidden, no launch time",
    "estimate": "the estimate: physical rules at efficiencies fitted on public measurements",
}


#: The band's columns of a frontier (``--band``): key, heading, format.
BAND_COLUMNS = (("tokens_per_s_low", "tok/s lo", ".1f"), ("tokens_per_s_high", "tok/s hi", ".1f"),
                ("usd_per_mtok_low", "$/Mtok lo", ".3f"), ("usd_per_mtok_high", "$/Mtok hi", ".3f"))


def _points_output(points, args, curve: str, band=None) -> str:
    """The points as JSON, CSV or a table; ``band`` (rows of the band's columns, and the line
    saying what it is) adds BAND_COLUMNS."""
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


@contextmanager
def _progress(setting: Setting, quiet: bool):
    """A progress bar on standard error for a search that takes more than a second.

    tqdm draws nothing before its delay, nothing when standard error is not a terminal, and
    nothing with ``--quiet``; standard output stays the answer alone.
    """
    from tqdm import tqdm

    with tqdm(total=search_steps(setting), desc="searching", unit="step", file=sys.stderr,
              delay=1.0, disable=True if quiet else None, leave=False) as bar:
        def advance(step: str) -> None:
            bar.set_postfix_str(step, refresh=False)
            bar.update()

        yield advance


def _plot_path(text: str) -> str:
    """argparse type: a file to draw into, ending in .svg or .png, in a folder that exists."""
    if not text.lower().endswith(PLOT_SUFFIXES):
        raise argparse.ArgumentTypeError(f"the file must end in .svg or .png, got {text!r}")
    folder = os.path.dirname(text) or "."
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"no folder {folder!r} to write {text!r} into")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    return text


def _draw(front, path: str, band=None) -> None:
    """Draw ``front`` (and its ``band``, a FrontierBand) into ``path``; matplotlib and the book's
    figure style load only here."""
    from ..book.frontier_plot import save_frontier_plot

    setting = front.setting
    title = f"{setting.model.name} on {setting.gpu.name}, {8 * setting.w:.3g}-bit weights"
    bands = None if band is None else {setting.model.name: band}
    try:
        save_frontier_plot({setting.model.name: front}, path, title, bands)
    except OSError as exc:
        raise InputError(f"argument --plot: cannot write {path!r}: {exc.strerror or exc}") from None


def _cmd_frontier(args) -> str:
    band_options = band_cli.options(args)
    setting = _setting(args)
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


def _listed(getter, full_model: bool = False):
    """argparse type: comma-separated presets or paths, each read by ``getter``."""
    one = _preset(getter, full_model)

    def convert(text: str) -> list:
        names = [name.strip() for name in text.split(",")]
        if not all(names):
            raise argparse.ArgumentTypeError(f"an empty name in {text!r} (a comma too many?)")
        return [one(name) for name in names]

    return convert


# compare's table: (key of a row, heading, format); the numbers are formatted beforehand
COMPARE_COLUMNS = (("model", "model", "s"), ("gpu", "GPU", "s"), ("weight_bits", "bits", "d"),
                   ("max_tokens_per_s", "top tok/s", "s"), ("usd_per_mtok", "$/Mtok", "s"),
                   ("binding", "binding", "s"))


COMPARE_BAND_KEYS = ("max_tokens_per_s_low", "max_tokens_per_s_high", "usd_per_mtok_low",
                     "usd_per_mtok_high")


def _compare_row(model, gpu, args, band_options: dict | None = None) -> dict:
    """One pair of ``compare``: its top speed and its cost (eq-search-cost, interpolated along the
    frontier) at ``args.speed``, with the binding term of the frontier point that serves it; the
    reason in ``infeasible`` (else None) when the pair cannot serve that speed. With
    ``band_options`` (``--band``) the band of the top speed and of the cost, read off the
    frontier of the configurations of this frontier at each draw (analysis.bands)."""
    bits = args.weight_bits or model.weight_bits
    row = {"model": model.name, "gpu": gpu.name, "weight_bits": int(bits), "speed": args.speed,
           "curve": args.curve or default_curve(model),
           "feasible": False, "infeasible": None, "max_tokens_per_s": None,
           "usd_per_mtok_at_max": None, "usd_per_mtok": None, "binding": None, "gpus": None,
           "batch": None, "usd_per_gpu_hour": args.price or gpu.price_per_hour}
    if band_options is not None:
        row.update(dict.fromkeys(COMPARE_BAND_KEYS))
    try:
        gpu.flops(bits)
    except InputError:
        row["infeasible"] = f"no FLOP/s figure for {bits}-bit weights"
        return row
    setting = Setting(model=model, gpu=gpu, weight_bytes=None if args.weight_bits is None
                      else args.weight_bits / 8, context=args.context, use_pp=not args.no_pipeline,
                      price=args.price, label=model.name, curve=args.curve, kv_bits=args.kv_bits)
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


def _cmd_compare(args) -> str:
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
    price = f"${args.price:g}" if args.price is not None else "each GPU's own $"
    curves = sorted({row["curve"] for row in rows})
    head = (f"$/Mtok at {args.speed:g} tok/s per user, at cost ({price}/GPU-hour), "
            f"curve {', '.join(curves)}:")
    columns = list(COMPARE_COLUMNS)
    if band_options is None:
        return "\n".join([head, _table(rows, columns)])
    columns[4:4] = [("top_band", "top band", "s")]
    columns[6:6] = [("cost_band", "$/Mtok band", "s")]
    note = (f"band: 10th-90th percentiles over {band_options['draws']} draws (seed "
            f"{band_options['seed']}) of each GPU's assumed and provisional values "
            "(data/band_ranges.toml), read off the frontier of each draw's re-evaluated "
            "configurations (an upper bound of a re-searched cost)")
    return "\n".join([head, _table(rows, columns), note])


def _money(usd: float) -> str:
    """Dollars to four significant digits, never in exponent form (0.002396, 18.10, 1235)."""
    digits = max(0, 3 - math.floor(math.log10(usd))) if usd > 0 else 2
    return f"{usd:.{digits}f}"


def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    text = format(value, "")
    return f'"{text}"' if any(ch in text for ch in ',"\n') else text


def _bits(text: str) -> float:
    try:
        return parse_within("--weight-bits", text, DESCRIBE_BITS)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--weight-bits ")) from None


def _human(number: float, unit: str = "") -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(number) >= scale:
            return f"{number / scale:.3f} {prefix}{unit}"
    return f"{number:.0f} {unit}".rstrip()


def _params(number: float) -> str:
    return f"{number / 1e9:,.2f} B"


def _cmd_describe(args) -> str:
    with _blame("MODEL_OR_PATH"):
        info = describe(args.model, args.weight_bits)
    _notice_read_by_fields(info["model_type"], info.get("read_by_fields", False))
    _require_finite([info, info["kv_bytes_at_context"]])
    if args.json:
        return _dumps(info)
    kind = info["model_type"] or "preset"
    lines = [f"{info['name']} ({kind})",
             f"  total parameters   {_params(info['total_params'])}"
             + (f" (+ {_params(info['mtp_params'])} in {info['mtp_layers']} multi-token-prediction"
                " layer(s), not counted)" if info["mtp_layers"] else ""),
             f"  active per token   {_params(info['active_params'])} "
             f"({_params(info['active_params_without_input_embedding'])} without the input "
             "embedding)",
             f"  layers             {info['layer_count']}:"]
    lines += [f"    {row['count']:4d} x {row['description']}" for row in info["layers"]]
    kv = (f"  KV cache           {info['kv_bytes_per_token']:,.0f} bytes/token")
    if info["kv_bytes_per_token_beyond_windows"] != info["kv_bytes_per_token"]:
        kv += (f" while every window is open, "
               f"{info['kv_bytes_per_token_beyond_windows']:,.0f} beyond them")
    if info.get("kv_indexer_bytes_per_token"):
        kv += (f", of which {info['kv_indexer_bytes_per_token']:,.0f} the sparse-attention "
               "indexer's keys (read whole; the rest read at the top k)")
    if info["kv_state_bytes_per_sequence"]:
        kv += f"; constant state {_human(info['kv_state_bytes_per_sequence'], 'B')}/sequence"
    lines.append(kv)
    lines.append("  per sequence       " + ", ".join(
        f"{int(c) // 1024}k: {_human(v, 'B')}" for c, v in info["kv_bytes_at_context"].items()))
    if info["quantized_params"]:
        bits = (f"{info['quantization']}: {_params(info['quantized_params'])} parameters at "
                f"{info['quantized_bits']:.4g} bits, the rest at {info['weight_bits']:g}")
    else:
        bits = f"{info['weight_bits']:g} bits"
    lines.append(f"  weights            {_human(info['weight_bytes'], 'B')} ({bits})")
    if info["full_model"]:
        lines.append(f"  full model         not yet: {info['full_model']}")
    return "\n".join(lines)


def _drafter_type(text: str):
    """argparse type of --drafter: 'mtp' (the model's own MTP module, resolved with the model) or
    a model preset or config.json path."""
    return MTP_DRAFTER if text == MTP_DRAFTER else _preset(get_model)(text)


def _add_full_model_options(cmd) -> None:
    cmd.add_argument("--model", required=True, type=_preset(get_model),
                     help=f"one of: {', '.join(preset_names())}; or a path to a config.json")
    cmd.add_argument("--gpu", required=True, type=_preset(get_gpu, full_model=True),
                     help=f"one of: {', '.join(full_model_gpus())}; or {GPU_FILE_HELP}")
    cmd.add_argument("--weight-bits", type=int, choices=(4, 8, 16), default=None,
                     help="weight precision (default: the preset's)")
    cmd.add_argument("--context", type=_number("--context"), default=0.0,
                     help=_range_help("--context", "tokens already in each sequence's KV cache "
                                                   "(default 0)"))
    cmd.add_argument("--drafter", type=_drafter_type, default=None,
                     help="speculative decoding with this model preset (or config.json path), or "
                          "'mtp': the model's own multi-token-prediction module")
    cmd.add_argument("--acceptance", type=_number("--acceptance"), default=None,
                     help=_range_help("--acceptance", "probability a drafted token is accepted "
                                                      "(default 0.8; 0: the drafter never helps)"))
    cmd.add_argument("--no-pipeline", action="store_true", help="do not search pipeline degrees")
    cmd.add_argument("--price", type=_number("--price"), default=None,
                     help=_range_help("--price", "$ per GPU-hour (default: the preset's)"))
    _add_curve_options(cmd)
    cmd.add_argument("--exact", action="store_true",
                     help="every frontier point, not the 1,000 latency thresholds of the paper")
    cmd.add_argument("--quiet", action="store_true",
                     help="no progress bar (it shows on a terminal when a search takes over 1 s)")
    out = cmd.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV")


def _add_curve_options(cmd) -> None:
    cmd.add_argument("--curve", choices=CURVES, default=None,
                     help="paper: the reference code's rules at the presets' caps; physical: the "
                          "book's physical rules at the caps; limit: the physical rules at the "
                          "hardware's peaks, a bound (default: paper for the paper's model "
                          "presets, physical for models read from a config.json)")
    cmd.add_argument("--kv-bits", type=int, choices=(4, 8, 16), default=None,
                     help="bits per KV-cache element (default: the checkpoint's stated cache "
                          "precision, else 16)")


# --- predict: the full model at one given deployment ----------------------------------------

PREDICT_RANGES = {
    "--tp": Interval(1.0, 2.0**MAX_LOG2_GPUS), "--pp": Interval(1.0, 2.0**MAX_LOG2_GPUS),
    "--ep": Interval(1.0, 2.0**MAX_LOG2_GPUS), "--batch": Interval(1.0, 2.0**24),
    "--input-len": Interval(1.0, 1e8), "--output-len": Interval(1.0, 1e8),
    "--kv-bits": Interval(1.0, 32.0), "--mtp-accepted": Interval(1.0, 16.0),
}
_PREDICT_WHOLE = ("--tp", "--pp", "--ep", "--batch", "--input-len", "--output-len")
PREDICT_FIELDS = (
    ("tpot_ms", "time per output token", "ms", ".3f"),
    ("tokens_per_s_per_user", "tokens/s per user", "", ".2f"),
    ("output_tokens_per_s_per_gpu", "output tokens/s per GPU", "", ".1f"),
    ("ttft_ms", "time to first token", "ms", ".2f"),
    ("usd_per_mtok_output", "$ per million output tokens", "", ".4f"),
    ("usd_per_mtok_input", "$ per million input tokens", "", ".4f"),
    ("max_batch", "largest batch that fits", "", "d"),
    ("binding_decode", "binding term, decode", "", "s"),
    ("binding_prefill", "binding term, prefill", "", "s"),
    ("prefill_gpus_per_decode_gpu", "prefill GPUs per decode GPU", "", ".3f"),
)


def _predict_number(option: str):
    """argparse type: a number in ``PREDICT_RANGES[option]``, whole for degrees and lengths."""
    def convert(text: str) -> float:
        try:
            value = parse_within(option, text, PREDICT_RANGES[option])
            if option in _PREDICT_WHOLE and value != int(value):
                raise InputError(f"{option} must be a whole number, got {text!r}")
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{option} ")) from None
        return int(value) if option in _PREDICT_WHOLE else value

    return convert


def _add_predict_parser(sub) -> None:
    cmd = sub.add_parser("predict", help="the full model at one given deployment (no search)")
    cmd.add_argument("--model", required=True, type=_preset(get_model),
                     help=f"one of: {', '.join(preset_names())}; or a path to a config.json")
    cmd.add_argument("--gpu", required=True, type=_preset(get_gpu, full_model=True),
                     help=f"one of: {', '.join(full_model_gpus())}; or {GPU_FILE_HELP}")
    for option, required, text in (
            ("--tp", True, "tensor-parallel degree"),
            ("--pp", False, "pipeline-parallel degree (default 1); a replica has tp*pp GPUs"),
            ("--ep", False, "expert-parallel degree: must equal what eq-full-expert-parallel "
                            "sets (min(TP, experts) once the micro-batch is at least 2*sparsity, "
                            "else 1; 1 for a dense model); default that value"),
            ("--batch", True, "sequences decoded together by one replica"),
            ("--input-len", True, "prompt tokens per request"),
            ("--output-len", True, "generated tokens per request")):
        cmd.add_argument(option, required=required, type=_predict_number(option),
                         default=1 if option == "--pp" else None,
                         help=f"{text}; in {PREDICT_RANGES[option]}")
    cmd.add_argument("--weight-bits", type=int, choices=(4, 8, 16), default=None,
                     help="weight precision (default: the preset's)")
    cmd.add_argument("--kv-bits", type=_predict_number("--kv-bits"), default=None,
                     help=f"bits per KV-cache element (default: the checkpoint's stated cache "
                          f"precision, else 16); in {PREDICT_RANGES['--kv-bits']}")
    cmd.add_argument("--curve", choices=("estimate", *CURVES), default="estimate",
                     help="estimate (default): the physical rules at the efficiencies fitted on "
                          "public measurements, with a band; physical: the book's physical rules "
                          "at the presets' caps; limit: at the hardware's peaks, a bound; paper: "
                          "the reference code's rules")
    cmd.add_argument("--drafter", type=_drafter_type, default=None,
                     help="speculative decoding with this model preset (or config.json path), or "
                          "'mtp': the model's own multi-token-prediction module")
    cmd.add_argument("--acceptance", type=_number("--acceptance"), default=None,
                     help=_range_help("--acceptance", "probability a drafted token is accepted "
                                                      "(needed with --drafter)"))
    cmd.add_argument("--mtp-accepted", type=_predict_number("--mtp-accepted"), default=None,
                     help="multi-token prediction: mean tokens accepted per target pass (which "
                          f"verifies ceil(T) tokens); in {PREDICT_RANGES['--mtp-accepted']}")
    cmd.add_argument("--price", type=_number("--price"), default=None,
                     help=_range_help("--price", "$ per GPU-hour (default: the preset's)"))
    cmd.add_argument("--context", type=_number("--context"), default=None,
                     help=_range_help("--context", "KV length of decode (default: input-len + "
                                                   "output-len/2, a request's mean)"))
    cmd.add_argument("--dp-attention", action="store_true",
                     help="attention data-parallel over the --tp GPUs (each holds all of "
                          "attention's weights, no attention all-reduce; the heads need not "
                          "divide), experts parallel as the model's rule sets; needs --pp 1")
    cmd.add_argument("--json", action="store_true", help="print JSON")


def _cmd_predict(args) -> str:
    from ..serving.predict import Deployment, DeploymentError, predict

    if args.drafter is not None and args.mtp_accepted is not None:
        raise InputError("argument --mtp-accepted: not allowed with --drafter (MTP drafts with "
                         "the model itself)")
    if args.drafter is not None and args.acceptance is None:
        raise InputError("argument --acceptance: needed with --drafter")
    try:
        dep = Deployment(model=args.model, gpu=args.gpu, tp=args.tp, pp=args.pp, ep=args.ep,
                         batch=args.batch, input_len=args.input_len, output_len=args.output_len,
                         weight_bits=args.weight_bits, kv_bits=args.kv_bits,
                         drafter=_drafter_of(args.model, args.drafter),
                         acceptance=args.acceptance, mtp_accepted=args.mtp_accepted,
                         price=args.price, context=args.context,
                         dp_attention=args.dp_attention, curve=args.curve)
    except DeploymentError as exc:
        raise InputError(f"argument --{exc.field.replace('_', '-')}: {exc.detail}") from None
    result = predict(dep)
    if not result.fits:
        gpus = f"{dep.gpus:g} {dep.gpu.name} GPUs"
        held = dep.gpus * dep.gpu.hbm_bytes / 1e9
        room = f"{gpus} hold {result.memory_gb:,.1f} GB"
        if abs(held - result.memory_gb) > 1e-9 * held:  # the estimate's engine share of HBM
            room = (f"an engine fills {result.memory_gb / held:.0%} of the {held:,.1f} GB of "
                    f"{gpus}: {result.memory_gb:,.1f} GB")
        if result.weights_gb > result.memory_gb:
            raise InputError(f"argument --tp: infeasible: the weights of {dep.model.name} "
                             f"({result.weights_gb:,.1f} GB) do not fit: {room}")
        largest = (f"the largest batch that fits is {result.max_batch}" if result.max_batch
                   else "no sequence fits at this context")
        raise InputError(f"argument --batch: infeasible: a batch of {dep.batch:g} at context "
                         f"{result.context:,.0f} needs {result.memory_need_gb:,.1f} GB (weights "
                         f"{result.weights_gb:,.1f} GB and the KV cache) but {room}; {largest}")
    row = result.as_dict()
    _require_finite([row, row["decode_terms_ms"], row["prefill_terms_ms"]])
    if args.json:
        return _dumps(row)
    layout = f"DP attention over {dep.tp:g}" if dep.dp_attention else f"TP {dep.tp:g}"
    lines = [f"curve: {dep.curve}, {CURVE_MEANING[dep.curve]}",
             f"{dep.model.name} on {dep.gpus:g} {dep.gpu.name} ({layout}, PP {dep.pp:g}, "
             f"EP {result.n_ep:g}), batch {dep.batch:,}, {dep.input_len:,} in / "
             f"{dep.output_len:,} out, decode at context {result.context:,.0f}"
             + (f", {result.gamma:g} tokens verified per pass" if result.gamma != 1 else "")]
    for key, label, unit, spec in PREDICT_FIELDS:
        value = row[key]
        text = "unbounded" if value is None else format(value, spec)
        lines.append(f"  {label:<30} {text} {unit}".rstrip())
    lines.append(f"  {'memory':<30} {result.memory_need_gb:,.1f} of {result.memory_gb:,.1f} GB")
    if result.band_low is not None:
        lines.append(f"  {'band, output tokens/s per GPU':<30} {result.band_low:,.1f} to "
                     f"{result.band_high:,.1f} (10th-90th percentiles of the estimate's errors)")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="inference-math",
                     description="Economics of serving language models, from first principles.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, helptext in (("models", "list model presets"), ("gpus", "list GPU presets")):
        cmd = sub.add_parser(name, help=helptext)
        cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    toy = sub.add_parser("toy-max-speed",
                         help="maximum tokens/s and optimal instance size (Erdil 2025 eq. 13-14)")
    toy.add_argument("--model", required=True, type=_preset(get_model),
                     help=f"one of: {', '.join(preset_names())}")
    toy.add_argument("--gpu", required=True, type=_preset(get_gpu),
                     help=f"one of: {', '.join(GPUS)}; or {GPU_FILE_HELP}")
    toy.add_argument("--t-hop", type=_number("--t-hop"), default=1e-6,
                     help=_range_help("--t-hop", "latency of one collective hop in seconds "
                                                 "(default 1e-6)"))
    toy.add_argument("--n-reduce", type=_number("--n-reduce"), default=4.0,
                     help=_range_help("--n-reduce", "sequential all-reduces per layer (default 4)"))
    toy.add_argument("--capped", action="store_true",
                     help="use the GPU's reachable (capped) HBM bandwidth instead of the peak")
    toy.add_argument("--json", action="store_true", help="print JSON")
    for name, helptext in (
            ("frontier", "Pareto frontier of tokens/s per request vs $/Mtok (full model)"),
            ("max-speed", "the fastest point of the frontier (full model)"),
            ("preferred", "the frontier point maximizing tok/s^alpha / price (full model)")):
        cmd = sub.add_parser(name, help=helptext)
        _add_full_model_options(cmd)
        if name == "preferred":
            cmd.add_argument("--alpha", type=_number("--alpha"), default=3.0,
                             help=_range_help("--alpha", "user-preference exponent (default 3, as "
                                                         "in the paper; 0: the cheapest point)"))
        if name == "frontier":
            cmd.add_argument("--plot", type=_plot_path, default=None, metavar="FILE",
                             help="also draw the frontier into FILE (.svg or .png)")
        band_cli.add_options(cmd)
    cmp = sub.add_parser("compare", help="top speed and cost at a per-user speed for every "
                                         "model x GPU pair (full model)")
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
    cmp.add_argument("--price", type=_number("--price"), default=None,
                     help=_range_help("--price", "$ per GPU-hour for every GPU (default: each "
                                                 "GPU's own)"))
    _add_curve_options(cmp)
    cmp.add_argument("--exact", action="store_true",
                     help="every frontier point, not the 1,000 latency thresholds of the paper")
    cmp.add_argument("--quiet", action="store_true", help="no progress bar")
    band_cli.add_options(cmp)
    out = cmp.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV")
    desc = sub.add_parser("describe-model",
                          help="parameters, layer mix, KV cache and weights of a model")
    desc.add_argument("model", metavar="MODEL_OR_PATH",
                      help=f"one of: {', '.join(preset_names())}; or a path to a config.json (or its "
                           "folder)")
    desc.add_argument("--weight-bits", type=_bits, default=None,
                      help=f"store every weight at this many bits; in {DESCRIBE_BITS} (default: "
                           "the config's dtype and quantization, or the preset's)")
    desc.add_argument("--json", action="store_true", help="print JSON")
    _add_predict_parser(sub)
    serving.add_parsers(sub)
    sweep_cli.add_parsers(sub)
    sensitivity_cli.add_parsers(sub)
    return parser


_COMMANDS = {"models": _cmd_models, "gpus": _cmd_gpus, "toy-max-speed": _cmd_toy_max_speed,
             "frontier": _cmd_frontier, "max-speed": _cmd_frontier, "preferred": _cmd_frontier,
             "compare": _cmd_compare, "describe-model": _cmd_describe, "predict": _cmd_predict,
             "serve": serving.cmd_serve, "measured": serving.cmd_measured,
             "sweep": sweep_cli.cmd_sweep, "sensitivity": sensitivity_cli.cmd_sensitivity}


def _one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters escaped (it came from argv)."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)


def _error(message: str, status: int) -> int:
    if sys.stderr is not None:  # None: started with standard error closed (print would use stdout)
        print(f"inference-math: error: {_one_line(message)}", file=sys.stderr)
    return status


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass  # not a real file (a test's capture): nothing will be flushed to a descriptor


def _write(text: str | None = None) -> int:
    """Print ``text`` (if any) and flush; a closed pipe ends quietly, other failures in one line."""
    if sys.stdout is None:  # started with standard output closed
        return _error("cannot write the output: standard output is closed", EXIT_OUTPUT)
    try:
        if text is not None:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PIPE
    except OSError as exc:
        _silence_stdout()
        return _error(f"cannot write the output: {exc.strerror or exc}", EXIT_OUTPUT)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        text = _COMMANDS[args.command](args)
    except InputError as exc:
        return _error(str(exc), EXIT_USAGE)
    except SystemExit as exc:  # --help, already printed
        return _write() or (exc.code if isinstance(exc.code, int) else EXIT_USAGE)
    except KeyboardInterrupt:
        return EXIT_INTERRUPT
    return _write(text)


if __name__ == "__main__":
    sys.exit(main())
