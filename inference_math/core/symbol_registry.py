"""The machinery of the symbol registry: an entry per symbol, defining one, and looking one up.

:mod:`inference_math.core.symbols` (and :mod:`inference_math.core.symbols_later`, the later
chapters' symbols, which it re-exports) define every symbol through :func:`define`, in one
:data:`REGISTRY`; derivations import the symbols from :mod:`~inference_math.core.symbols`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class SymbolInfo:
    """Everything the book knows about one symbol."""

    symbol: sp.Symbol
    name: str
    latex: str
    unit: str
    meaning: str
    topic: str

    @property
    def assumptions(self) -> str:
        """The SymPy assumptions the symbol was created with, as a short word."""
        a = self.symbol.assumptions0
        if a.get("integer"):
            return "positive integer" if a.get("positive") else "integer"
        if a.get("positive"):
            return "positive real"
        if a.get("real"):
            return "real"
        return "complex"


REGISTRY: dict[str, SymbolInfo] = {}


def define(name: str, latex: str, unit: str, meaning: str, topic: str, **assumptions) -> sp.Symbol:
    if name in REGISTRY:
        raise ValueError(f"symbol {name!r} is defined twice")
    sym = sp.Symbol(latex, **assumptions)
    REGISTRY[name] = SymbolInfo(sym, name, latex, unit, meaning, topic)
    return sym


POS = {"positive": True}


def info(sym: sp.Symbol) -> SymbolInfo:
    """Registry entry of a symbol (KeyError if it was not created here)."""
    for entry in REGISTRY.values():
        if entry.symbol == sym:
            return entry
    raise KeyError(f"{sym} is not in the symbol registry")


def by_name(name: str) -> sp.Symbol:
    """The symbol registered under ``name`` (its Python name in ``core.symbols``)."""
    try:
        return REGISTRY[name].symbol
    except KeyError:
        raise KeyError(f"no symbol named {name!r}; known: {', '.join(sorted(REGISTRY))}") from None
