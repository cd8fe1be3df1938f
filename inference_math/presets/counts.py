"""Evaluating a model's counts through the generated NumPy code, without SymPy at run time.

:func:`count` calls the function :mod:`inference_math.codegen.counts_codegen` generated from a
derivation (its name in :data:`~inference_math.codegen.counts_codegen.COUNTS`) with values keyed
by registry names (:mod:`inference_math.core.names`); a per-group value of a sum over the layer
groups is a sequence. Values keyed by the registry's SymPy Symbols, as ``core.numeric.evaluate``
takes them, are accepted too (the book and the tests pass them; the symbol registry is then
imported). Scalars are evaluated in float64, as the compiled SymPy functions were, so the
numbers do not change.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .counts_numpy import FUNCTIONS


def _by_name(values: Mapping) -> dict:
    """``values`` keyed by registry names (Symbol keys mapped through the symbol registry)."""
    if all(isinstance(key, str) for key in values):
        return dict(values)
    from ..core.printing import NAMES  # only for Symbol keys, which SymPy made already
    return {key if isinstance(key, str) else NAMES[key]: value for key, value in values.items()}


def count(name: str, values: Mapping) -> float:
    """The count ``name`` (a generated function) at ``values`` (registry name, or Symbol, ->
    number, or a sequence of the layer groups' values)."""
    fn, args = FUNCTIONS[name]
    by_name = _by_name(values)
    missing = [arg for arg in args if arg not in by_name]
    if missing:
        raise ValueError(f"{name} needs values for {', '.join(missing)}")
    inputs = [np.asarray(by_name[arg], dtype=float) if isinstance(by_name[arg], (list, tuple))
              else np.float64(by_name[arg]) for arg in args]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return float(fn(*inputs))
