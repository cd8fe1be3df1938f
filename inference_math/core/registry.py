"""Index of every derivation: its equation label, the source it reproduces, the function.

Each derivation function is decorated with :func:`derivation`, which records it here so that the
book can list (and tests can check) every labelled equation. Labels are ``eq-<topic>-<slug>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, wraps

import sympy as sp

LABEL_RE = re.compile(r"^eq-[a-z0-9]+(-[a-z0-9]+)+$")


@dataclass(frozen=True)
class Derivation:
    label: str
    source: str
    function: Callable[[], sp.Eq]

    @property
    def qualname(self) -> str:
        return f"{self.function.__module__}.{self.function.__name__}"


DERIVATIONS: dict[str, Derivation] = {}


def derivation(label: str, source: str):
    """Register a function returning a SymPy ``Eq`` under a book equation label."""
    if not LABEL_RE.match(label):
        raise ValueError(f"equation label {label!r} is not of the form eq-<topic>-<slug>")
    if label in DERIVATIONS:
        raise ValueError(f"equation label {label!r} is used twice")

    def decorate(fn):
        cached = cache(fn)  # derivations are pure; SymPy solve/simplify is worth doing once

        @wraps(fn)
        def wrapper(*args, **kwargs):
            result = cached(*args, **kwargs)
            if not isinstance(result, sp.Equality):
                raise TypeError(f"{fn.__name__} must return a sympy Eq")
            return result

        wrapper.label = label
        wrapper.source = source
        DERIVATIONS[label] = Derivation(label, source, wrapper)
        return wrapper

    return decorate
