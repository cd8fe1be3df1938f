"""Evaluating a model's counts through the generated code, with neither SymPy nor NumPy at run time.

:func:`count` calls the function :mod:`inference_math.codegen.counts_codegen` generated from a
derivation (its name in :data:`~inference_math.codegen.counts_codegen.COUNTS`) with values keyed
by registry names (:mod:`inference_math.core.names`); a per-group value of a sum over the layer
groups is a sequence. Values keyed by the registry's SymPy Symbols, as ``core.numeric.evaluate``
takes them, are accepted too (the book and the tests pass them; the symbol registry is then
imported). The plain-Python functions (``counts_python``) answer in float64 arithmetic, the same
operations in the same order as the NumPy functions (``counts_numpy``), so a command describing a
model imports no NumPy. Where plain Python would raise instead of giving an infinity or a NaN (a
division by zero, an overflowing power), or a sum has more groups than it adds as NumPy does, the
NumPy functions answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import counts_python

#: The most layer groups whose sum plain Python adds in NumPy's order (below NumPy's unrolled
#: pairwise summation, which starts at eight values).
_SEQUENTIAL_GROUPS = 7


def _by_name(values: Mapping) -> dict:
    """``values`` keyed by registry names (Symbol keys mapped through the symbol registry)."""
    if all(isinstance(key, str) for key in values):
        return dict(values)
    from ..core.printing import NAMES  # only for Symbol keys, which SymPy made already
    return {key if isinstance(key, str) else NAMES[key]: value for key, value in values.items()}


def count(name: str, values: Mapping) -> float:
    """The count ``name`` (a generated function) at ``values`` (registry name, or Symbol, ->
    number, or a sequence of the layer groups' values)."""
    fn, args = counts_python.FUNCTIONS[name]
    by_name = _by_name(values)
    missing = [arg for arg in args if arg not in by_name]
    if missing:
        raise ValueError(f"{name} needs values for {', '.join(missing)}")
    inputs = [[float(v) for v in by_name[arg]] if isinstance(by_name[arg], (list, tuple))
              else float(by_name[arg]) for arg in args]
    if all(not isinstance(v, list) or len(v) <= _SEQUENTIAL_GROUPS for v in inputs):
        try:
            return float(fn(*inputs))
        except (ArithmeticError, ValueError):
            pass
    return _count_numpy(name, inputs)


def _count_numpy(name: str, inputs: list) -> float:
    """The count by the NumPy functions, which give an infinity or a NaN where Python raises."""
    import numpy as np

    from .counts_numpy import FUNCTIONS

    fn = FUNCTIONS[name][0]
    arrays = [np.asarray(v, dtype=float) if isinstance(v, list) else np.float64(v) for v in inputs]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return float(fn(*arrays))
