"""``models``, ``gpus`` and ``describe-model``: the presets with their key numbers, and one model's
parameters, layer mix, KV cache and weight bytes (a preset or a Hugging Face config.json).

Loads the presets only: no search, no serving model."""

from __future__ import annotations

import argparse

from ..core.validation import InputError, Interval, parse_within
from .common import _blame, _dumps, _notice_read_by_fields, _require_finite, _table

DESCRIBE_BITS = Interval(1.0, 32.0)


def add_arguments(cmd, name: str) -> None:
    if name in ("models", "gpus"):
        cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return
    from ..presets.models import preset_names
    cmd.add_argument("model", metavar="MODEL_OR_PATH",
                     help=f"one of: {', '.join(preset_names())}; or a path to a config.json (or its "
                          "folder)")
    cmd.add_argument("--weight-bits", type=_bits, default=None,
                     help=f"store every weight at this many bits; in {DESCRIBE_BITS} (default: "
                          "the config's dtype and quantization, or the preset's)")
    cmd.add_argument("--json", action="store_true", help="print JSON")


# the paper's presets whose model is also read from a bundled config.json: the quirk note
# compares the two (the paper's Llama 3.1 405B has 16 KV heads, the released model 8)
PAPER_TWINS = {"llama-3.1-405b": "llama-3.1-405b-config",
               "llama-3.1-405b-8bit": "llama-3.1-405b-config",
               "deepseek-v3-paper": "deepseek-v3"}
ORIGINS = {"paper": "a preset of the paper's reference code (Erdil 2025), its quirks kept",
           "typed": "typed from a publication, not in the reference code",
           "config": "read from a bundled Hugging Face config.json"}


def _origin(key: str, model) -> str:
    from ..presets.models import CONFIG_PRESETS

    if key in CONFIG_PRESETS:
        return "config"
    return "paper" if "erdil2025inference" in model.source.split(",") else "typed"


def _kv_heads(model) -> int | None:
    group = getattr(model, "group_size", None)
    return None if group is None or getattr(model, "mla_kv_dim", 0) else model.n_q_heads // group


def _quirk(key: str, model) -> str | None:
    """What sets a hand-typed preset apart: its own note, and against the same model read from
    its config.json, the KV cache per token and the parameters."""
    from ..presets.models import get_model

    parts = [model.note] if model.note and _origin(key, model) != "config" else []
    twin_key = PAPER_TWINS.get(key)
    if twin_key is not None:
        twin = get_model(twin_key)
        heads, twin_heads = _kv_heads(model), _kv_heads(twin)
        kv = (f"{heads} KV heads where {twin_key} has {twin_heads}: "
              if heads and twin_heads and heads != twin_heads else "")
        parts.append(f"{kv}{model.kv_bytes_per_token / twin.kv_bytes_per_token:.2f}x the KV "
                     f"cache per token of {twin_key} ({model.kv_bytes_per_token:,.0f} against "
                     f"{twin.kv_bytes_per_token:,.0f} B), {model.total_params / 1e9:,.1f} B "
                     f"parameters against {twin.total_params / 1e9:,.1f} B")
    return "; ".join(parts) or None


def _models_rows() -> list[dict]:
    from ..presets.models import get_model, preset_names

    return [
        {
            "name": key, "label": m.name, "origin": _origin(key, m),
            "paper_preset": _origin(key, m) == "paper", "quirk": _quirk(key, m),
            "total_params": m.total_params,
            "active_params": m.active_params, "layers": m.layers, "d_model": m.d_model,
            "experts": f"{m.n_active_experts}/{m.n_experts}", "weight_bits": m.weight_bits,
            "kv_bytes_per_token": m.kv_bytes_per_token, "source": m.source,
        }
        for key, m in ((key, get_model(key)) for key in preset_names())
    ]


def _gpus_rows() -> list[dict]:
    from ..presets.hardware import GPUS

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


def cmd_models(args) -> str:
    rows = _models_rows()
    if args.json:
        return _dumps(rows)
    for row in rows:
        row["label"] += " *" if row["quirk"] else ""
    table = _table(rows, [("name", "name", "s"), ("label", "model", "s"),
                          ("origin", "origin", "s"),
                          ("total_params", "params", ".3e"), ("active_params", "active", ".3e"),
                          ("layers", "layers", "d"), ("d_model", "d_model", "d"),
                          ("experts", "experts", "s"), ("weight_bits", "w bits", "d"),
                          ("kv_bytes_per_token", "KV B/token", ".0f")])
    origins = [f"  {name}: {meaning}" for name, meaning in ORIGINS.items()]
    quirks = [f"  {row['name']}: {row['quirk']}" for row in rows if row["quirk"]]
    return "\n".join([table, "\nOrigin:", *origins, "\n* quirks:", *quirks])


def _flagged(rows: list[dict], kind: str, meaning: str) -> list[str]:
    """Footnote lines naming, per preset, the fields of ``kind`` ('assumed' or 'provisional')."""
    flagged = [f"  {row['name']}: {', '.join(row[kind])}" for row in rows if row[kind]]
    return [f"{kind.capitalize()} ({meaning}):", *flagged] if flagged else []


def cmd_gpus(args) -> str:
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


def cmd_describe(args) -> str:
    from ..presets.models import describe

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
