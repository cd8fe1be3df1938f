"""Evaluating a model's counts through the generated NumPy code, without SymPy at run time.

:func:`count` calls the function :mod:`inference_math.codegen.counts_codegen` generated from a
derivation (its name in :data:`~inference_math.codegen.counts_codegen.COUNTS`) with values keyed
by registry symbols, as ``core.numeric.evaluate`` would take them; a per-group value of a sum over
the layer groups is a sequence. Scalars are evaluated in float64, as the compiled SymPy functions
were, so the numbers do not change.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.symbols import REGISTRY
from .counts_numpy import FUNCTIONS

_NAMES = {info.symbol: info.name for info in REGISTRY.values()}


def count(name: str, values: Mapping) -> float:
    """The count ``name`` (a generated function) at ``values`` (registry symbol -> number, or a
    sequence of the layer groups' values)."""
    fn, args = FUNCTIONS[name]
    by_name = {_NAMES[symbol]: value for symbol, value in values.items()}
    missing = [arg for arg in args if arg not in by_name]
    if missing:
        raise ValueError(f"{name} needs values for {', '.join(missing)}")
    inputs = [np.asarray(by_name[arg], dtype=float) if isinstance(by_name[arg], (list, tuple))
              else np.float64(by_name[arg]) for arg in args]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return float(fn(*inputs))
