"""Clear errors for bad input: every message names the field and the value it got."""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple


class InputError(ValueError):
    """A value, preset name or configuration the book's models cannot use."""


def of_kind(field: str, value, kind: type | tuple[type, ...]):
    """``value`` if it is a ``kind`` (a Model, a GPU...; or one of a tuple of kinds), else
    InputError naming ``field`` and the kind of value it got (never a whole repr)."""
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        name = " or ".join(k.__name__ for k in kinds)
        raise InputError(f"{field} must be a {name} (get_{kinds[0].__name__.lower()}(...) "
                         f"returns one), got {_kind_of(value)}")
    return value


def _kind_of(value) -> str:
    """A short name for a value in an error message: short text and numbers as written, other
    objects by their type."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return f"a {type(value).__name__}"


def positive(field: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a float if it is a finite real > 0 (>= 0 with allow_zero), else InputError.

    Only real numbers are accepted: not text (parse it first), not booleans.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{field} must be a number, got {value!r}")
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise InputError(f"{field} must be finite, got {value!r}")
    if number < 0 or (number == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"{field} must be {bound}, got {value!r}")
    return number


def parse_positive(field: str, text: str, *, allow_zero: bool = False) -> float:
    """A positive number from command-line text, else InputError naming ``field``."""
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise InputError(f"{field} must be a number, got {text!r}") from None
    return positive(field, number, allow_zero=allow_zero)


class Interval(NamedTuple):
    """A range of meaningful values, closed unless an end is marked open."""

    low: float
    high: float
    open_low: bool = False
    open_high: bool = False

    def __str__(self) -> str:
        return (f"{'(' if self.open_low else '['}{self.low:g}, "
                f"{self.high:g}{')' if self.open_high else ']'}")

    def __contains__(self, number: float) -> bool:
        above = number > self.low if self.open_low else number >= self.low
        below = number < self.high if self.open_high else number <= self.high
        return above and below


def within(field: str, value, interval: Interval) -> float:
    """``value`` as a float if it is a finite real in ``interval``, else InputError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{field} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(f"{field} must be finite, got {value!r}")
    if number not in interval:
        raise InputError(f"{field} must be in {interval}, got {value!r}")
    return number


def parse_within(field: str, text: str, interval: Interval) -> float:
    """A number in ``interval`` from command-line text, else InputError naming ``field``."""
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise InputError(f"{field} must be a number, got {text!r}") from None
    return within(field, number, interval)


def positive_int(field: str, value) -> int:
    """``value`` as an int if it is a whole number >= 1, else InputError."""
    number = positive(field, value)
    if number != int(number):
        raise InputError(f"{field} must be a whole number, got {value!r}")
    return int(number)


def lookup(kind: str, name: str, table: dict):
    """``table[name]`` with case- and separator-insensitive matching, else InputError."""
    def norm(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch.isalnum())

    wanted = norm(str(name))
    for key, item in table.items():
        if norm(key) == wanted:
            return item
    raise InputError(f"unknown {kind} {name!r}; choose one of: {', '.join(table)}")
