"""Turning the book's SymPy expressions into vectorized NumPy functions.

A formula lives once, as SymPy; every number, table and figure evaluates it through here. The
argument order of a compiled function is always an explicit tuple of registry symbols (never
``expr.free_symbols``, which is an unordered set), and results are broadcast to the shape of
the inputs, because SymPy compiles a constant expression to a scalar.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np
import sympy as sp


def _as_expr(expr_or_eq: sp.Expr | sp.Eq) -> sp.Expr:
    return expr_or_eq.rhs if isinstance(expr_or_eq, sp.Equality) else expr_or_eq


@lru_cache(maxsize=256)
def _compile(expr: sp.Expr, args: tuple[sp.Symbol, ...]) -> Callable:
    missing = expr.free_symbols - set(args)
    if missing:
        names = ", ".join(sorted(str(m) for m in missing))
        raise ValueError(f"expression needs values for {names}")
    return sp.lambdify(args, expr, modules="numpy")


def compile_fn(expr_or_eq: sp.Expr | sp.Eq, args: Sequence[sp.Symbol]) -> Callable[..., np.ndarray]:
    """A NumPy function of ``args`` (in that order) evaluating an expression or an Eq's rhs.

    The function accepts scalars or arrays, broadcasts them together and returns float64.
    """
    expr = _as_expr(expr_or_eq)
    args = tuple(args)
    fn = _compile(expr, args)

    def evaluate(*values):
        arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in values))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = fn(*arrays)
        return np.broadcast_to(np.asarray(out, dtype=float), arrays[0].shape if arrays else ())

    evaluate.__doc__ = f"Evaluate {expr} with arguments {args}."
    return evaluate


def evaluate(expr_or_eq: sp.Expr | sp.Eq, values: Mapping[sp.Symbol, object]) -> np.ndarray | float:
    """Evaluate an expression at ``values`` (a mapping symbol -> scalar or array).

    Returns a Python float when every value is a scalar, else a float64 array.
    """
    args = tuple(values)
    out = compile_fn(expr_or_eq, args)(*values.values())
    return float(out) if out.ndim == 0 else out
