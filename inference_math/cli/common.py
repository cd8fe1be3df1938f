"""What every command of the command line shares: the one-line parser, the checked numbers and
presets of its options, the output (tables, strict JSON, CSV cells) and the exit statuses.

Light on purpose: it loads no part of the library beyond ``core.validation`` when imported; the
presets are read inside the functions that need them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from contextlib import contextmanager

from ..core.validation import InputError, Interval, parse_within

EXIT_USAGE = 2
GPU_FILE_HELP = "a path to a GPU file (TOML, one GPU; see the README's 'Your own GPU')"
EXIT_OUTPUT = 1  # the output could not be written
EXIT_PIPE = 128 + 13  # the reader closed the pipe: what a shell reports for SIGPIPE
EXIT_INTERRUPT = 128 + 2

RANGES = {
    "--t-hop": Interval(1e-12, 1e3), "--n-reduce": Interval(1e-3, 1e3),
    "--context": Interval(0.0, 1e9), "--acceptance": Interval(0.0, 1.0, open_high=True),
    "--price": Interval(1e-4, 1e4), "--alpha": Interval(0.0, 20.0),
    "--speed": Interval(1e-2, 1e5),
}
#: compare's per-user speed when --speed is not given (tokens/s per user)
DEFAULT_SPEED = 50.0
PLOT_SUFFIXES = (".svg", ".png")
#: the extra that installs what ``sweep`` needs beyond the core (Parquet, Dask)
SWEEP_EXTRA = "pip install 'inference-math[sweep]'"


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line (no usage dump, no traceback).

    A subcommand's parser may be given ``fill``: a function that adds its arguments, called the
    first time the parser parses or prints its help, so that building the whole command line
    loads only what the command that runs needs. An argument's help may be a function too, called
    only when the help is printed.
    """

    def __init__(self, *args, fill=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._fill = fill

    def _filled(self) -> None:
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)

    def parse_known_args(self, args=None, namespace=None):
        self._filled()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._filled()
        for action in self._actions:
            if callable(action.help):
                action.help = action.help()
        return super().format_help()

    def format_usage(self) -> str:
        self._filled()
        return super().format_usage()

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


def _price(text: str):
    """argparse type of ``--price``: $ per GPU-hour, or a column of the 2026 rents (presets.rents:
    hyperscaler, neocloud, three_year), resolved for the GPU by :func:`price_for`."""
    from ..presets import rents

    try:
        float(text)
    except ValueError:
        word = text.strip().lower()
        if word in rents.columns():
            return word
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a number nor a 2026 rent column ({', '.join(rents.columns())})"
        ) from None
    return _number("--price")(text)


def price_for(price, gpu) -> float | None:
    """The $/GPU-hour ``--price`` gives ``gpu``: a number as given, a 2026 rent column at that GPU
    preset's rent, None (the GPU's own price) when not given."""
    if price is None or isinstance(price, float):
        return price
    from ..presets import rents
    from ..presets.hardware import get_gpu

    for key in rents.priced_gpus():
        if get_gpu(key).name == gpu.name:
            return rents.rent_2026(key, price)
    raise InputError(f"argument --price: {gpu.name} has no 2026 {price} rent (priced: "
                     f"{', '.join(rents.priced_gpus())}); give $ per GPU-hour")


def _price_help() -> str:
    return _range_help("--price", "$ per GPU-hour, or a 2026 rent (hyperscaler, neocloud, "
                       "three_year; SemiAnalysis InferenceX) of the GPU (default: the preset's "
                       "price)")


def _range_help(option: str, text: str, ranges: dict | None = None) -> str:
    return f"{text}; in {(RANGES if ranges is None else ranges)[option]}"


def _preset(getter, full_model: bool = False):
    """argparse type: a model or GPU preset; for the full model, a GPU it can time."""
    def convert(text: str):
        from ..presets.hardware import get_gpu
        from ..presets.models import get_model, is_path

        try:
            item = getter(text)
            if full_model and getter is get_gpu:
                item.require_collective_model()
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        architecture = getattr(item, "architecture", None)
        if architecture is None and getter is get_model and is_path(text):
            from ..presets.hf_config import read_architecture
            architecture = read_architecture(text)
        if architecture is not None:
            _notice_read_by_fields(architecture.model_type, architecture.read_by_fields)
        return item

    return convert


def _engine_name(text: str) -> str:
    """argparse type of ``--engine``: an engine family (serving.engines; case and punctuation
    ignored)."""
    from ..serving.engines import families, lookup

    name = lookup(text)
    if name is None:
        raise argparse.ArgumentTypeError(f"unknown engine {text!r} (known: "
                                         f"{', '.join(families())})")
    return name


def add_engine_option(cmd) -> None:
    """``--engine NAME``: the estimate at that engine family's efficiencies (absent: pooled)."""
    cmd.add_argument("--engine", type=_engine_name, default=None, metavar="NAME",
                     help="with the estimate curve: the efficiencies fitted on this engine "
                          "family's measurements (see the engines command; default: pooled "
                          "over engines)")


def engine_text(engine: str | None) -> str:
    """How an output names the engine: the family, or 'pooled'."""
    return "pooled" if engine is None else engine


def _listed(getter, full_model: bool = False):
    """argparse type: comma-separated presets or paths, each read by ``getter``."""
    one = _preset(getter, full_model)

    def convert(text: str) -> list:
        names = [name.strip() for name in text.split(",")]
        if not all(names):
            raise argparse.ArgumentTypeError(f"an empty name in {text!r} (a comma too many?)")
        return [one(name) for name in names]

    return convert


def _notice_read_by_fields(model_type: str, read_by_fields: bool) -> None:
    """One line on standard error when a model_type never seen before was read by its fields."""
    if read_by_fields and sys.stderr is not None:
        print(f"inference-math: note: model_type {model_type!r} is new to this reader; read by "
              "what its fields mean (no field that could change a count is unknown)",
              file=sys.stderr)


@contextmanager
def _blame(option: str):
    """Prefix an InputError raised inside the block with the option it comes from."""
    try:
        yield
    except InputError as exc:
        raise InputError(f"argument {option}: {exc}") from None


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


def _json_csv_options(cmd) -> None:
    """``--json`` or ``--csv`` (not both)."""
    out = cmd.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV")


def _require_module(module: str, option: str, needs: str) -> None:
    """Refuse in one line, naming the extra to install, a command that needs ``module`` (an
    optional dependency) where it is not installed."""
    try:
        __import__(module)
    except ImportError:
        raise InputError(f"argument {option}: {needs} needs {module.split('.')[0]}: "
                         f"{SWEEP_EXTRA}") from None


# --- output ---------------------------------------------------------------------------------

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


def _dumps(data) -> str:
    """Strict JSON: a NaN or an infinity is an error here, never an output."""
    return json.dumps(data, indent=2, allow_nan=False)


def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    text = format(value, "")
    return f'"{text}"' if any(ch in text for ch in ',"\n') else text


def _require_finite(rows: list[dict]) -> None:
    """InputError naming the first non-finite number of a result (None means 'not applicable')."""
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(f"the result's {key} is {value} for these inputs; "
                                 "try values nearer the defaults")


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
