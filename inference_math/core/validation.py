"""Clear errors for bad input: every message names the field and the value it got."""

from __future__ import annotations

import math
import numbers


class InputError(ValueError):
    """A value, preset name or configuration the book's models cannot use."""


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
