"""The printers of the generated modules (the full model's terms, the presets' counts).

SymPy's NumPy printer with the registry's names for symbols and Min, Max, And, Or and Piecewise
written as pairwise NumPy calls, which broadcast their arguments (SymPy's own ``amin``/``select``
forms stack them first, which neither broadcasts nor keeps scalars scalar). The plain-Python
printer writes the same expressions for floats, with no NumPy to import.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

from .symbols import REGISTRY

NAMES = {info.symbol: info.name for info in REGISTRY.values()}


class RegistryNumPyPrinter(NumPyPrinter):
    """NumPy printer naming symbols by the registry; Min, Max, And, Or and Piecewise broadcast
    their arguments pairwise."""

    def _print_Symbol(self, expr):
        return NAMES.get(expr, expr.name)

    def _print_Dummy(self, expr):
        return f"_{expr.name}"

    def _nest(self, fn, args):
        out = self._print(args[0])
        for arg in args[1:]:
            out = f"numpy.{fn}({out}, {self._print(arg)})"
        return out

    def _print_Max(self, expr):
        return self._nest("maximum", expr.args)

    def _print_Min(self, expr):
        return self._nest("minimum", expr.args)

    def _print_And(self, expr):
        return self._nest("logical_and", expr.args)

    def _print_Or(self, expr):
        return self._nest("logical_or", expr.args)

    def _print_Piecewise(self, expr):
        out = "numpy.nan"
        for value, condition in reversed(expr.args):
            if condition == sp.true:
                out = self._print(value)
            else:
                out = f"numpy.where({self._print(condition)}, {self._print(value)}, {out})"
        return out


class RegistryPythonPrinter(PythonCodePrinter):
    """Plain-Python printer naming symbols by the registry, with Min and Max as ``min``/``max``:
    the same arithmetic, in the same order, as :class:`RegistryNumPyPrinter` prints."""

    def _print_Symbol(self, expr):
        return NAMES.get(expr, expr.name)

    def _print_Dummy(self, expr):
        return f"_{expr.name}"

    def _print_Max(self, expr):
        return f"max({', '.join(self._print(arg) for arg in expr.args)})"

    def _print_Min(self, expr):
        return f"min({', '.join(self._print(arg) for arg in expr.args)})"
