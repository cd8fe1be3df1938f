"""The ``sensitivity`` command: how the cost at a speed responds to each input.

    inference-math sensitivity --model M --gpu G --speed S [--cut F] [options] [--json | --csv]

Prints the elasticity of the frontier's cost at S tokens/s per user in each hardware number, the
price and the model's weight and cache bytes and context (eq-sens-one-term, eq-sens-corner;
:mod:`inference_math.analysis.sensitivity`), the binding term, and with ``--cut F`` the factor by
which each input alone must move to divide that cost by F (:mod:`inference_math.analysis.cheaper`).
"""

from __future__ import annotations

import math

from ..core.validation import InputError, Interval
from .common import _blame, _dumps, _number, _range_help, _require_finite
from .setting import _add_full_model_options, _progress, _setting

CUT = Interval(1.0, 1000.0, open_low=True)
UNITS = {"hbm_bandwidth": "B/s", "flops": "FLOP/s", "hbm_bytes": "B", "intranode_allreduce_bandwidth": "B/s",
         "internode_allreduce_bandwidth": "B/s", "kernel_launch_s": "s",
         "price_per_hour": "$/GPU-h", "weight_bytes": "B", "kv_bytes_per_token": "B",
         "context": "tokens"}


def add_arguments(cmd, name: str) -> None:
    _add_full_model_options(cmd)
    cmd.add_argument("--speed", type=_number("--speed"), required=True,
                     help=_range_help("--speed", "tokens/s per user at which to read the cost"))
    cmd.add_argument("--cut", type=_cut, default=None, metavar="F",
                     help="also find, for each input alone, the factor that divides the cost "
                          "by F (in (1, 1000]; each input takes a few searches)")


def _cut(text: str) -> float:
    import argparse

    from ..core.validation import parse_within
    try:
        return parse_within("--cut", text, CUT)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("argument --cut: ")) from None


def rows(report: dict, values: dict, cuts) -> list[dict]:
    """One row per input: its value, its elasticity and (with --cut) the factor it needs."""
    factors = {c.name: c for c in cuts or ()}
    out = []
    for name, eps in report["elasticities"].items():
        unit = UNITS["flops"] if name.startswith("flops_") else UNITS.get(name, "")
        sided = report["one_sided"][name]
        holds = report["holds"][name]
        row = {"input": name, "value": values.get(name), "unit": unit,
               "elasticity": eps, "up": sided["up"], "down": sided["down"],
               "holds_down": holds["down"], "holds_down_by": holds["down_by"],
               "holds_up": holds["up"], "holds_up_by": holds["up_by"]}
        if cuts is not None:
            found = factors.get(name)
            row["searched"] = found is not None
            row["factor"] = found.factor if found else None
            row["reached"] = found.reached if found else None
        out.append(row)
    return out


def _cell(value, spec: str) -> str:
    return format("-", spec[0] + spec[1:].lstrip("+").split(".")[0]) if value is None \
        else format(value, spec)


def _holds_text(row: dict) -> str:
    """How far the elasticity holds: "-12% arithmetic .. +5.7% layout" (beyond a factor of 2:
    "<-50%" or ">+100%")."""
    def side(key, sign):
        if row[key] is None:
            return "<-50%" if sign == "-" else ">+100%"
        return f"{sign}{100 * row[key]:.2g}% {row[key + '_by']}"
    return f"{side('holds_down', '-')} .. {side('holds_up', '+')}"


def _cut_text(row: dict) -> str:
    if not row["searched"]:
        return "not searched"
    if row["factor"] is not None:
        return format(row["factor"], ".3g")
    if abs(row["elasticity"] or 0.0) < 1e-3:
        return "no effect"
    return f"none (/{row['reached']:.3g} at most)"


def cmd_sensitivity(args) -> str:
    from ..analysis import cheaper, sensitivity
    from ..fullmodel.search import frontier

    if args.drafter is not None:
        raise InputError("argument --drafter: elasticities are derived for frontiers without "
                         "speculative decoding")
    setting = _setting(args)
    with _progress(setting, args.quiet) as advance:
        front = frontier(setting, exact=args.exact, progress=advance)
    with _blame("--speed"):
        report = sensitivity.elasticities(front, args.speed)
        cuts = None if args.cut is None else cheaper.cut(front, args.speed, args.cut)
    table = rows(report, sensitivity.input_values(setting), cuts)
    _require_finite([{k: v for k, v in report.items() if k != "elasticities"}, *table])
    if args.json:
        out = {"model": setting.model.name, "gpu": setting.gpu.name, "curve": setting.curve_name,
               **report}
        if cuts is not None:
            # inputs the search cannot vary alone (the collectives' latency, the weights' bytes
            # at a fixed FLOP/s) are not searched: absent from both maps
            out["cut"] = {"target": args.cut,
                          "factors": {c.name: c.factor for c in cuts},
                          "reached": {c.name: c.reached for c in cuts}}
        return _dumps(out)
    keys = ["input", "value", "unit", "elasticity", "up", "down", "holds_down", "holds_down_by",
            "holds_up", "holds_up_by"] + (["factor", "reached"] if cuts is not None else [])
    if args.csv:
        lines = [",".join(keys)]
        lines += [",".join("" if row[k] is None else str(row[k]) for k in keys) for row in table]
        return "\n".join(lines)
    head = (f"{setting.model.name} on {setting.gpu.name} ({setting.curve_name} rules) at "
            f"{args.speed:g} tok/s per user: ${report['usd_per_mtok']:.4g}/Mtok, binding: "
            f"{report['binding']}; at the optimum {' and '.join(report['binds'])} bind "
            f"({report['method']}), {report['gpus']:.4g} GPUs, batch {report['batch']:.4g}")
    gap = report["layout_gap"]
    if gap is not None and gap < 0.01:
        head += (f"\nanother layout costs only {100 * math.expm1(gap):.2g}% more here: the last "
                 "column says where it would take over")
    head += (f"\nthe search's grid reads this cost {100 * math.expm1(report['grid_gap']):.2g}% "
             "above the optimum: re-running it with an input moved by less than a few per cent "
             "shows the grid's steps, not the slope")
    lines = [head, "", f"{'input':32s} {'value':>12s} {'unit':8s} {'d ln c/d ln x':>14s} "
             f"{'up':>7s} {'down':>7s}  {'holds for a change of the input in':40s}"
             + (f" {'factor for cost/' + format(args.cut, 'g'):>20s}" if cuts is not None else "")]
    for row in table:
        line = (f"{row['input']:32s} {_cell(row['value'], '>12.4g')} {row['unit']:8s} "
                f"{_cell(row['elasticity'], '+14.3f')} {_cell(row['up'], '+7.3f')} "
                f"{_cell(row['down'], '+7.3f')}  {_holds_text(row):40s}")
        if cuts is not None:
            line += f" {_cut_text(row):>20s}"
        lines.append(line)
    lines.append("")
    lines.append("up, down: the one-sided elasticities (they differ only where the binding "
                 "constraints' weights are not unique); holds: to first order, the change at "
                 "which another layout or constraint takes over (beyond a factor of 2: not "
                 "followed)")
    if cuts is None:
        lines.append("--cut F: the factor by which each input alone must move to divide the "
                     "cost by F")
    return "\n".join(lines)
