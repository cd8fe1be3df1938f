"""``--band`` of ``frontier``, ``max-speed``, ``preferred``, ``compare`` and ``serve``: the options,
and the band's columns.

The band is :mod:`inference_math.analysis.bands`: the 10th and 90th percentiles over draws of the
GPU's assumed and provisional values (``data/band_ranges.toml``), each point's configuration
re-evaluated at every draw, combined on ``serve``'s estimate with the estimate's band.
"""

from __future__ import annotations

import argparse

from ..core.validation import InputError, Interval, parse_within

DRAWS_RANGE = Interval(10.0, 100_000.0)
SEED_RANGE = Interval(0.0, 2.0**32 - 1)


def _whole(option: str, interval: Interval):
    """argparse type: a whole number in ``interval``."""
    def convert(text: str) -> int:
        try:
            value = parse_within(option, text, interval)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{option} ")) from None
        if value != int(value):
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")
        return int(value)
    return convert


def add_options(cmd) -> None:
    """``--band``, ``--draws`` and ``--seed`` on one subcommand (the defaults, in the help, are
    read from the library only when the help is printed)."""
    def default(name: str) -> int:
        from ..analysis import bands
        return getattr(bands, name)

    cmd.add_argument("--band", action="store_true",
                     help="add each row's band: the 10th and 90th percentiles over draws of the "
                          "GPU's assumed and provisional values (data/band_ranges.toml)"
                          + (", combined with the estimate's band" if cmd.prog.endswith("serve")
                             else ""))
    cmd.add_argument("--draws", type=_whole("--draws", DRAWS_RANGE), default=None,
                     help=lambda: f"draws of the band (default {default('DRAWS')}); in {DRAWS_RANGE}")
    cmd.add_argument("--seed", type=_whole("--seed", SEED_RANGE), default=None,
                     help=lambda: f"seed of the band's draws (default {default('SEED')}); in "
                                  f"{SEED_RANGE}")


def options(args) -> dict | None:
    """The band's keyword arguments (draws, seed), None without ``--band``; InputError naming
    ``--draws`` or ``--seed`` given without it."""
    for option in ("draws", "seed"):
        if getattr(args, option) is not None and not args.band:
            raise InputError(f"argument --{option}: needs --band")
    if not args.band:
        return None
    from ..analysis.bands import DRAWS, SEED
    return {"draws": DRAWS if args.draws is None else args.draws,
            "seed": SEED if args.seed is None else args.seed}


def describe(spread: dict, gpu_name: str, draws: int, seed: int, estimate: bool = False) -> str:
    """One line saying what the band is."""
    what = (f"{', '.join(spread)} of {gpu_name} over the ranges of data/band_ranges.toml"
            if spread else f"no value of {gpu_name} is assumed or provisional: zero width")
    line = (f"band: 10th-90th percentiles over {draws} draws (seed {seed}) of {what}; each "
            "row's configuration re-evaluated at every draw")
    if estimate:
        line += "; times the estimate's band (its out-of-fold 10th-90th percentiles)"
    return line


def span(low, high, spec: str) -> str:
    """A band as table text, 'low-high'; a missing end (an infinite cost: the configuration does
    not fit in that share of the draws) is 'inf'."""
    def text(value):
        return "inf" if value is None else format(value, spec)
    return f"{text(low)}-{text(high)}"
