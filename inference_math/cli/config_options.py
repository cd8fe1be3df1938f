"""``--assume FIELD=VALUE`` and ``--ignore FIELD`` for the commands that read a config.json, and
the notes of what each reading assumed and ignored, on standard error.

A command's model is read while its arguments are parsed (``--model PATH``) or when it runs
(``describe-model PATH``); both happen inside :func:`reading`, which hands the options to the
reader (:func:`inference_math.core.config_reading.reading_options`) and prints the notes of every
config read unless ``--quiet``; a command's JSON object gains them (:func:`with_readings`). Wired
in ``cli/__init__.py``: :func:`add_config_options` on every parser with a model, :func:`reading`
around parsing and running in ``main``.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import contextmanager

from ..core.config_reading import reading_options
from ..core.validation import InputError


def _assumption(text: str) -> tuple[str, object]:
    """argparse type: FIELD=VALUE, VALUE read as JSON (a number, true, null, a list...) or else
    as a string."""
    field, sep, value = text.partition("=")
    if not sep or not field.strip():
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE, got {text!r}")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return field.strip(), parsed


def add_config_options(parser: argparse.ArgumentParser, quiet: bool = False) -> None:
    """Add --assume and --ignore (and --quiet, when the parser has none) to ``parser``."""
    parser.add_argument("--assume", action="append", type=_assumption, default=[],
                        metavar="FIELD=VALUE",
                        help="read a config.json as if it held FIELD=VALUE (VALUE as JSON); "
                             "an unknown field so stated is taken as checked (repeatable)")
    parser.add_argument("--ignore", action="append", default=[], metavar="FIELD",
                        help="read a config.json as if it had no FIELD (repeatable)")
    if quiet:
        parser.add_argument("--quiet", action="store_true",
                            help="no notes on standard error")


def config_options(args: argparse.Namespace) -> tuple[dict, set]:
    """(assume, ignore) of parsed arguments."""
    return dict(getattr(args, "assume", None) or ()), set(getattr(args, "ignore", None) or ())


def _prescan(argv: list[str]) -> tuple[dict, set, bool]:
    """--assume, --ignore and --quiet read before the full parse (a --model is read while the
    arguments are parsed)."""
    pre = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    add_config_options(pre, quiet=True)
    try:
        known, _ = pre.parse_known_args(argv)
    except argparse.ArgumentError as exc:
        raise InputError(str(exc)) from None
    assume, ignore = config_options(known)
    return assume, ignore, known.quiet


def _distinct(architectures: list) -> list:
    """The configs read, each once (a command may read the same config more than once)."""
    seen, out = set(), []
    for arch in architectures:
        key = (arch.name, arch.notes)
        if key not in seen:
            seen.add(key)
            out.append(arch)
    return out


def notes_of(architectures: list) -> list[str]:
    """One line per note of each config read, naming the model."""
    return [f"inference-math: note: {arch.name}: {note}" for arch in _distinct(architectures)
            for note in arch.notes]


def with_readings(text: str, architectures: list) -> str:
    """A command's JSON output with ``config_readings`` added ({name, assumed, ignored, notes}
    of each config read with notes), when it is a JSON object that does not carry them already
    (describe-model's does); any other output unchanged."""
    noted = [arch for arch in _distinct(architectures) if arch.notes]
    if not noted:
        return text
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return text
    if not isinstance(data, dict) or "notes" in data:
        return text
    data["config_readings"] = [
        {"name": arch.name, "assumed": {field: json.loads(value) for field, value in arch.assumed},
         "ignored": list(arch.ignored), "notes": list(arch.notes)} for arch in noted]
    return json.dumps(data, indent=2, allow_nan=False)


@contextmanager
def reading(argv: list[str]):
    """Read configs inside the block with the command line's --assume/--ignore; afterwards,
    print their notes on standard error unless --quiet. --assume or --ignore that reached no
    config.json is an InputError."""
    assume, ignore, quiet = _prescan(argv)
    with reading_options(assume, ignore) as read:
        try:
            yield read
        finally:
            if not quiet and sys.stderr is not None:
                for line in notes_of(read):
                    print(line, file=sys.stderr)
    if (assume or ignore) and not read:
        raise InputError("--assume and --ignore apply to a config.json path; no config.json "
                         "was read")
