"""GPU rents of 2026 by pricing column (SemiAnalysis InferenceX's TCO model, 2026-03/04).

One table, ``rents_2026.toml``, so that a price the book states in two chapters comes from one
place. The presets carry one price each (the paper's for the H100 and H200, two thirds of a
rental price; the hyperscaler column for the GPUs past Hopper); :func:`rent_2026` gives any
column for the GPUs the source prices.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from ..core.validation import InputError

DATA_FILE = "rents_2026.toml"
#: The price basis of the chapters past the paper.
BASIS = "hyperscaler"


@cache
def _table() -> dict:
    return tomllib.loads(resources.files(__package__).joinpath(DATA_FILE).read_text("utf-8"))


def columns() -> tuple[str, ...]:
    return tuple(_table()["columns"])


def priced_gpus() -> tuple[str, ...]:
    """The GPU presets the source prices, in the table's order."""
    return tuple(key for key, value in _table().items() if isinstance(value, dict))


def rent_2026(gpu: str, column: str = BASIS) -> float:
    """$ per GPU-hour of the preset ``gpu`` in ``column`` (hyperscaler, neocloud or three_year)."""
    table = _table()
    if column not in table["columns"]:
        raise InputError(f"price column: {column!r} is not one of {', '.join(table['columns'])}")
    if gpu not in priced_gpus():
        raise InputError(f"gpu: {gpu!r} has no 2026 rent in the source; priced: "
                         f"{', '.join(priced_gpus())}")
    return float(table[gpu][column])
