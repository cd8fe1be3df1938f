"""The ``inference-math`` command line.

    inference-math models                      list model presets with key numbers
    inference-math gpus                        list GPU presets with key numbers
    inference-math toy-max-speed --model M --gpu G [--t-hop S] [--n-reduce N] [--capped] [--json]
    inference-math frontier  --model M --gpu G [options] [--json | --csv]   the Pareto frontier
    inference-math max-speed --model M --gpu G [options] [--json | --csv]   its fastest point
    inference-math preferred --model M --gpu G [options] [--alpha A] [--json | --csv]
                                                the point maximizing tok/s^alpha / price

Options of the full model (Erdil 2025, section 3): --weight-bits {4,8,16}, --context TOKENS,
--drafter MODEL, --acceptance P (default 0.8 with a drafter), --no-pipeline, --price $/GPU-h,
--exact (every frontier point instead of the paper's 1,000 latency thresholds).

Bad input (unknown preset, a non-positive number, a malformed option) prints one line naming
the problem and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from .core.validation import InputError, parse_positive
from .engine.search import FRONTIER_COLUMNS, Setting, frontier
from .engine.toy_model import max_speed
from .presets.hardware import GPUS, get_gpu
from .presets.models import MODELS, get_model

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line (no usage dump, no traceback)."""

    def error(self, message: str):
        raise InputError(message)


def _positive_float(option: str, allow_zero: bool = False):
    def convert(text: str) -> float:
        try:
            return parse_positive(option, text, allow_zero=allow_zero)
        except InputError as exc:
            # argparse already prefixes "argument --option:"
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{option} ")) from None

    return convert


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
        for key, m in MODELS.items()
    ]


def _gpus_rows() -> list[dict]:
    return [
        {
            "name": key, "label": g.name, "flops_16bit": g.flops(16), "flops_8bit": g.flops(8),
            "hbm_bandwidth": g.hbm_bandwidth, "hbm_bytes": g.hbm_bytes,
            "price_per_hour": g.price_per_hour, "flop_cap": g.flop_cap,
            "bandwidth_cap": g.bandwidth_cap, "source": g.source,
        }
        for key, g in GPUS.items()
    ]


def _cmd_models(args) -> str:
    rows = _models_rows()
    if args.json:
        return json.dumps(rows, indent=2)
    return _table(rows, [("name", "name", "s"), ("label", "model", "s"),
                         ("total_params", "params", ".3e"), ("active_params", "active", ".3e"),
                         ("layers", "layers", "d"), ("d_model", "d_model", "d"),
                         ("experts", "experts", "s"), ("weight_bits", "w bits", "d"),
                         ("kv_bytes_per_token", "KV B/token", ".0f")])


def _cmd_gpus(args) -> str:
    rows = _gpus_rows()
    if args.json:
        return json.dumps(rows, indent=2)
    return _table(rows, [("name", "name", "s"), ("label", "GPU", "s"),
                         ("flops_16bit", "FLOP/s 16b", ".3g"), ("flops_8bit", "FLOP/s 8b", ".3g"),
                         ("hbm_bandwidth", "HBM B/s", ".3g"), ("hbm_bytes", "HBM bytes", ".3g"),
                         ("price_per_hour", "$/h", ".2f"), ("flop_cap", "FLOP cap", ".2f"),
                         ("bandwidth_cap", "BW cap", ".2f")])


def _cmd_toy_max_speed(args) -> str:
    model, gpu = get_model(args.model), get_gpu(args.gpu)
    result = max_speed(model, gpu, t_hop=args.t_hop, n_reduce=args.n_reduce, capped=args.capped)
    row = {
        "model": model.name, "gpu": gpu.name, "t_hop_s": args.t_hop, "n_reduce": args.n_reduce,
        "bandwidth_capped": args.capped, "max_tokens_per_s": result.tokens_per_s,
        "min_latency_ms": result.min_latency_s * 1e3, "optimal_gpus": result.n_gpu_star,
    }
    if args.json:
        return json.dumps(row, indent=2)
    return (f"{model.name} on {gpu.name} (Erdil 2025 eq. 14, t_hop = {args.t_hop:g} s, "
            f"n_reduce = {args.n_reduce:g}{', capped bandwidth' if args.capped else ''}):\n"
            f"  maximum speed   {result.tokens_per_s:.1f} tokens/s per request\n"
            f"  minimum latency {result.min_latency_s * 1e3:.3f} ms per token\n"
            f"  optimal size    {result.n_gpu_star:.1f} GPUs")


def _setting(args) -> Setting:
    model, gpu = get_model(args.model), get_gpu(args.gpu)
    weight_bytes = None if args.weight_bits is None else args.weight_bits / 8
    drafter = None if args.drafter is None else get_model(args.drafter)
    if args.acceptance is not None and drafter is None:
        raise InputError("--acceptance needs --drafter")
    acceptance = 0.8 if args.acceptance is None else args.acceptance
    return Setting(model=model, gpu=gpu, weight_bytes=weight_bytes, context=args.context,
                   drafter=drafter, acceptance=acceptance, use_pp=not args.no_pipeline,
                   price=args.price, label=model.name)


def _points_output(points, args) -> str:
    rows = [pt.as_dict() for pt in points]
    if args.json:
        return json.dumps(rows if len(rows) > 1 or args.command == "frontier" else rows[0], indent=2)
    keys = [key for key, _, _ in FRONTIER_COLUMNS]
    if args.csv:
        lines = [",".join(keys)]
        lines += [",".join(format(row[key], "") if not isinstance(row[key], bool)
                           else str(int(row[key])) for key in keys) for row in rows]
        return "\n".join(lines)
    return _table(rows, list(FRONTIER_COLUMNS))


def _cmd_frontier(args) -> str:
    setting = _setting(args)
    front = frontier(setting, exact=args.exact)
    if args.command == "max-speed":
        points = [front.max_speed()]
    elif args.command == "preferred":
        points = [front.preferred(args.alpha)]
    else:
        points = front.points
    return _points_output(points, args)


def _add_full_model_options(cmd) -> None:
    cmd.add_argument("--model", required=True, help=f"one of: {', '.join(MODELS)}")
    cmd.add_argument("--gpu", required=True, help=f"one of: {', '.join(GPUS)}")
    cmd.add_argument("--weight-bits", type=int, choices=(4, 8, 16), default=None,
                     help="weight precision (default: the preset's)")
    cmd.add_argument("--context", type=_positive_float("--context", allow_zero=True), default=0.0,
                     help="tokens already in each sequence's KV cache (default 0)")
    cmd.add_argument("--drafter", default=None, help="speculative decoding with this model preset")
    cmd.add_argument("--acceptance", type=_positive_float("--acceptance"), default=None,
                     help="probability a drafted token is accepted (default 0.8)")
    cmd.add_argument("--no-pipeline", action="store_true", help="do not search pipeline degrees")
    cmd.add_argument("--price", type=_positive_float("--price"), default=None,
                     help="$ per GPU-hour (default: the preset's)")
    cmd.add_argument("--exact", action="store_true",
                     help="every frontier point, not the 1,000 latency thresholds of the paper")
    out = cmd.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="inference-math",
                     description="Economics of serving language models, from first principles.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, helptext in (("models", "list model presets"), ("gpus", "list GPU presets")):
        cmd = sub.add_parser(name, help=helptext)
        cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    toy = sub.add_parser("toy-max-speed",
                         help="maximum tokens/s and optimal instance size (Erdil 2025 eq. 13-14)")
    toy.add_argument("--model", required=True, help=f"one of: {', '.join(MODELS)}")
    toy.add_argument("--gpu", required=True, help=f"one of: {', '.join(GPUS)}")
    toy.add_argument("--t-hop", type=_positive_float("--t-hop"), default=1e-6,
                     help="latency of one collective hop in seconds (default 1e-6)")
    toy.add_argument("--n-reduce", type=_positive_float("--n-reduce"), default=4.0,
                     help="sequential all-reduces per layer (default 4)")
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
            cmd.add_argument("--alpha", type=_positive_float("--alpha"), default=3.0,
                             help="user-preference exponent (default 3, as in the paper)")
    return parser


_COMMANDS = {"models": _cmd_models, "gpus": _cmd_gpus, "toy-max-speed": _cmd_toy_max_speed,
             "frontier": _cmd_frontier, "max-speed": _cmd_frontier, "preferred": _cmd_frontier}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        print(_COMMANDS[args.command](args))
    except InputError as exc:
        print(f"inference-math: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
