"""The ``sweep`` command: frontier summaries over a grid, in parallel, into Parquet or CSV.

    inference-math sweep --models llama-3-70b,deepseek-v3 --gpus h100,b200 \\
        --weight-bits own,8,4 --contexts 0,131072 --speeds 20,100 --out sweep.parquet \\
        [--prices 2,3] [--curve physical] [--jobs 2] [--scheduler tcp://host:8786] [--json]

Each cell (model × GPU × weights × context × price) is one frontier summarized in one row
(:mod:`inference_math.analysis.sweep`). The cells run on ``--jobs`` local processes, or on the Dask
cluster whose scheduler ``--scheduler`` names; rows already in ``--out`` are not computed again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from .common import _require_module

WEIGHT_BITS = (4, 8, 16)


def _numbers(flag: str, allow_zero: bool):
    def convert(text: str) -> list[float]:
        out = []
        for item in text.split(","):
            try:
                value = float(item)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{item.strip()!r} is not a number") from None
            if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
                bound = ">= 0" if allow_zero else "> 0"
                raise argparse.ArgumentTypeError(f"{item.strip()!r} must be finite and {bound}")
            out.append(value)
        return out
    return convert


def _bits(text: str) -> list[int | None]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if item == "own":
            out.append(None)
        elif item in {str(b) for b in WEIGHT_BITS}:
            out.append(int(item))
        else:
            raise argparse.ArgumentTypeError(f"{item!r} is not 'own' or one of "
                                             f"{', '.join(map(str, WEIGHT_BITS))}")
    return out


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"an empty name in {text!r} (a comma too many?)")
    return names


def _out(text: str) -> Path:
    from ..analysis import sweep

    path = Path(text)
    if path.suffix not in sweep.FORMATS:
        raise argparse.ArgumentTypeError(f"the file must end in {' or '.join(sweep.FORMATS)}, "
                                         f"got {text!r}")
    if not (path.parent if str(path.parent) else Path(".")).is_dir():
        raise argparse.ArgumentTypeError(f"no folder {str(path.parent)!r} to write {text!r} into")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    return path


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"{text!r} must lie in [1, 1024]")
    return value


def add_arguments(cmd, name: str) -> None:
    from ..fullmodel.search import CURVES

    cmd.add_argument("--models", required=True, type=_names,
                     help="comma-separated presets or paths to config.json")
    cmd.add_argument("--gpus", required=True, type=_names,
                     help="comma-separated GPU presets or paths to GPU files (TOML)")
    cmd.add_argument("--weight-bits", type=_bits, default=[None],
                     help="comma-separated: 'own' (the checkpoint's storage) or 4, 8, 16 "
                          "(every weight at that many bits); default own")
    cmd.add_argument("--contexts", type=_numbers("--contexts", True), default=[0.0],
                     help="comma-separated tokens already in each sequence's cache (default 0)")
    cmd.add_argument("--prices", type=_numbers("--prices", False), default=[None],
                     help="comma-separated $ per GPU-hour (default: each GPU's own)")
    cmd.add_argument("--speeds", type=_numbers("--speeds", False), default=[20.0, 100.0],
                     help="comma-separated tokens/s per user at which to read the cost, binding "
                          "term and configuration (default 20,100)")
    cmd.add_argument("--curve", choices=CURVES, default=None,
                     help="the rules of every frontier (default: each model's)")
    cmd.add_argument("--out", required=True, type=_out,
                     help="the file to write (.parquet or .csv); rows it holds are kept and "
                          "not computed again")
    cmd.add_argument("--jobs", type=_jobs, default=os.cpu_count() or 1,
                     help="local processes (default: one per core)")
    cmd.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="run on the Dask cluster of this scheduler (e.g. tcp://host:8786) "
                          "instead of local processes")
    cmd.add_argument("--quiet", action="store_true", help="no progress bar")
    cmd.add_argument("--json", action="store_true", help="print every row as JSON")


def cmd_sweep(args) -> str:
    from tqdm import tqdm

    from ..analysis import sweep

    # Parquet and Dask come with the 'sweep' extra: without them, one line naming it
    if args.out.suffix == ".parquet":
        _require_module("pyarrow.parquet", "--out", repr(args.out.name))
    if args.scheduler is not None:
        _require_module("distributed", "--scheduler", repr(args.scheduler))

    cells = sweep.grid(args.models, args.gpus, args.weight_bits, args.contexts, args.prices,
                       args.curve)
    with tqdm(total=len(cells), desc="sweeping", unit="frontier", file=sys.stderr, delay=1.0,
              disable=True if args.quiet else None, leave=False) as bar:
        def advance(done: int, total: int) -> None:
            bar.total = total
            bar.update(1)

        rows, computed = sweep.run(cells, args.speeds, args.out, jobs=args.jobs,
                                   scheduler=args.scheduler, progress=advance)
    if args.json:
        return json.dumps(rows, indent=1, allow_nan=False)
    infeasible = sum(not row["feasible"] for row in rows)
    return (f"{len(rows)} frontiers in {args.out} ({computed} computed now, "
            f"{len(rows) - computed} already there); {infeasible} cannot run (feasible = false, "
            "with the reason)")
