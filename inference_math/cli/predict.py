"""``predict``: the full model at one given deployment (no search): its speed, throughput,
time to first token, cost and memory, with the estimate's band."""

from __future__ import annotations

import argparse

from ..core.validation import InputError, Interval, parse_within
from ..fullmodel.search import CURVES, MAX_LOG2_GPUS
from .common import (
    _dumps,
    _number,
    _price,
    _price_help,
    _range_help,
    _require_finite,
    add_engine_option,
    engine_text,
    price_for,
)
from .setting import CURVE_MEANING, _add_model_gpu, _drafter_of, _drafter_type

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


def add_arguments(cmd, name: str) -> None:
    _add_model_gpu(cmd)
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
    # the default of serving.predict.Deployment.curve, literal here to keep the parser light
    cmd.add_argument("--curve", choices=("estimate", *CURVES), default="estimate",
                     help="estimate (default, as for Deployment in Python): the physical rules "
                          "at the efficiencies fitted on public measurements, with a band; "
                          "physical: the book's physical rules at the presets' caps; limit: at "
                          "the hardware's peaks, a bound; paper: the reference code's rules")
    cmd.add_argument("--drafter", type=_drafter_type, default=None,
                     help="speculative decoding with this model preset (or config.json path), or "
                          "'mtp': the model's own multi-token-prediction module")
    cmd.add_argument("--acceptance", type=_number("--acceptance"), default=None,
                     help=_range_help("--acceptance", "probability a drafted token is accepted "
                                                      "(needed with --drafter)"))
    cmd.add_argument("--mtp-accepted", type=_predict_number("--mtp-accepted"), default=None,
                     help="multi-token prediction: mean tokens accepted per target pass (which "
                          f"verifies ceil(T) tokens); in {PREDICT_RANGES['--mtp-accepted']}")
    cmd.add_argument("--price", type=_price, default=None, help=_price_help)
    cmd.add_argument("--context", type=_number("--context"), default=None,
                     help=_range_help("--context", "KV length of decode (default: input-len + "
                                                   "output-len/2, a request's mean)"))
    cmd.add_argument("--dp-attention", action="store_true",
                     help="attention data-parallel over the --tp GPUs (each holds all of "
                          "attention's weights, no attention all-reduce; the heads need not "
                          "divide), experts parallel as the model's rule sets; needs --pp 1")
    add_engine_option(cmd)
    cmd.add_argument("--json", action="store_true", help="print JSON")


def cmd_predict(args) -> str:
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
                         price=price_for(args.price, args.gpu), context=args.context,
                         dp_attention=args.dp_attention, curve=args.curve,
                         engine=args.engine)
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
    row["engine"] = engine_text(args.engine)
    _require_finite([row, row["decode_terms_ms"], row["prefill_terms_ms"]])
    if args.json:
        return _dumps(row)
    layout = f"DP attention over {dep.tp:g}" if dep.dp_attention else f"TP {dep.tp:g}"
    engine = "engine: pooled"
    if dep.curve == "estimate":
        from ..serving.step_time import engine_label
        engine = f"engine: {engine_label(dep.gpu, dep.engine)}"
    lines = [f"curve: {dep.curve}, {CURVE_MEANING[dep.curve]}", engine,
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
