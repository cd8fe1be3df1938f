"""``toy-max-speed``: the maximum tokens/s and the optimal instance size of the toy model (Erdil
2025 eq. 13-14)."""

from __future__ import annotations

from .common import GPU_FILE_HELP, _dumps, _number, _preset, _range_help, _require_finite


def add_arguments(toy, name: str) -> None:
    from ..presets.hardware import GPUS, get_gpu
    from ..presets.models import get_model, preset_names

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


def cmd_toy_max_speed(args) -> str:
    from ..fullmodel.toy_model import max_speed

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
            f"  maximum speed   {result.tokens_per_s:.4g} tokens/s per user\n"
            f"  minimum latency {result.min_latency_s * 1e3:.3f} ms per token\n"
            f"  optimal size    {result.n_gpu_star:.1f} GPUs{floor}\n"
            f"  memory floor    {result.n_gpu_floor:.0f} GPUs hold the weights")
