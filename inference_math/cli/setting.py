"""The full model's options on the command line (``frontier``, ``max-speed``, ``preferred``,
``compare``, ``sensitivity``, ``predict``): the flags, the search's ``Setting`` they make, the
refusal of a setting no instance can hold, and the progress bar of a search.

Imported only by those commands: it loads the frontier search (``fullmodel.search``).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

from ..core.validation import InputError
from ..fullmodel.search import CURVES, MAX_LOG2_GPUS, Setting, search_steps
from ..presets.hardware import full_model_gpus, get_gpu
from ..presets.layered import MTP_DRAFTER, mtp_drafter
from ..presets.models import get_model, preset_names
from .common import (
    GPU_FILE_HELP,
    _blame,
    _json_csv_options,
    _number,
    _preset,
    _price,
    _price_help,
    _range_help,
    price_for,
)

CURVE_MEANING = {
    "paper": "the reference code's rules at the presets' caps (Erdil 2025)",
    "physical": "the book's physical rules at the presets' caps",
    "limit": "a limit: physical rules at the hardware's peaks, network hidden, no launch time",
    "estimate": "the estimate: physical rules at efficiencies fitted on public measurements",
}


def _drafter_type(text: str):
    """argparse type of --drafter: 'mtp' (the model's own MTP module, resolved with the model) or
    a model preset or config.json path."""
    return MTP_DRAFTER if text == MTP_DRAFTER else _preset(get_model)(text)


def _drafter_of(model, drafter):
    """``--drafter``: a model, or 'mtp' for the model's own multi-token-prediction module."""
    if drafter != MTP_DRAFTER:
        return drafter
    with _blame("--drafter"):
        return mtp_drafter(model)


def _add_model_gpu(cmd) -> None:
    """``--model`` and ``--gpu`` of a full-model command."""
    cmd.add_argument("--model", required=True, type=_preset(get_model),
                     help=f"one of: {', '.join(preset_names())}; or a path to a config.json")
    cmd.add_argument("--gpu", required=True, type=_preset(get_gpu, full_model=True),
                     help=f"one of: {', '.join(full_model_gpus())}; or {GPU_FILE_HELP}")


def _add_full_model_options(cmd) -> None:
    _add_model_gpu(cmd)
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
    cmd.add_argument("--price", type=_price, default=None, help=_price_help)
    _add_curve_options(cmd)
    cmd.add_argument("--exact", action="store_true",
                     help="every frontier point, not the 1,000 latency thresholds of the paper")
    cmd.add_argument("--quiet", action="store_true",
                     help="no progress bar (it shows on a terminal when a search takes over 1 s)")
    _json_csv_options(cmd)


def _add_curve_options(cmd) -> None:
    cmd.add_argument("--curve", choices=CURVES, default=None,
                     help="paper: the reference code's rules at the presets' caps; physical: the "
                          "book's physical rules at the caps; limit: the physical rules at the "
                          "hardware's peaks, a bound (default: paper for the paper's model "
                          "presets, physical for models read from a config.json)")
    cmd.add_argument("--kv-bits", type=int, choices=(4, 8, 16), default=None,
                     help="bits per KV-cache element (default: the checkpoint's stated cache "
                          "precision, else 16)")


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
                      price=price_for(args.price, gpu), label=model.name, curve=args.curve,
                      kv_bits=args.kv_bits)
    _require_fit(setting)
    return setting


def _fits(setting: Setting, context: float) -> bool:
    """Whether the largest instance the search tries holds the weights and one sequence's KV cache.

    eq-full-memory-need at N = 2^MAX_LOG2_GPUS, b = N_PP = 1: the most room any point of the
    search has, so the frontier is empty exactly when this is False.
    """
    from ..fullmodel.branch import compile_branch  # no SymPy (fullmodel.full_model derives)

    branch = compile_branch(setting.model, setting.gpu, False, 1.0, context, setting.w,
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


@contextmanager
def _progress(setting: Setting, quiet: bool):
    """A progress bar on standard error for a search that takes more than a second.

    tqdm draws nothing before its delay, nothing when standard error is not a terminal, and
    nothing with ``--quiet``; standard output stays the answer alone. In those two cases tqdm is
    not even loaded (about a tenth of a second of a cold start).
    """
    if quiet or sys.stderr is None or not sys.stderr.isatty():
        yield lambda step: None
        return
    from tqdm import tqdm

    with tqdm(total=search_steps(setting), desc="searching", unit="step", file=sys.stderr,
              delay=1.0, disable=True if quiet else None, leave=False) as bar:
        def advance(step: str) -> None:
            bar.set_postfix_str(step, refresh=False)
            bar.update()

        yield advance
