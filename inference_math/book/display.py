"""Helpers the chapters use to show derivations, numbers and tables (myst-nb glue)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy as sp

from .display_forms import display_eq, where_lines
from .typeset import eq_tex


def latex(expr: sp.Basic) -> str:
    """LaTeX of a SymPy object as the book displays it (no \\displaystyle, no $ delimiters).

    A registered derivation's result is shown in its display form
    (:mod:`inference_math.book.display_forms`, proven equal to it by the tests); everything is
    printed with ordered terms and broken into lines that fit a phone's column
    (:mod:`inference_math.book.typeset`).
    """
    shown = display_eq(expr)
    text = eq_tex(shown, written=shown is not expr)
    where = [eq_tex(sp.Eq(symbol, value), written=written)
             for symbol, value, written in where_lines(expr)]
    if where:
        rows = [text + r",\\ \text{where}"] + [w + "," for w in where[:-1]] + [where[-1]]
        text = r"\begin{gathered}" + r" \\ ".join(rows) + r"\end{gathered}"
    return text


def glue_eq(key: str, eq: sp.Basic) -> None:
    """Glue a derivation's result so that ``{glue:math}`` shows the tested expression (in its
    display form, if it has one)."""
    from IPython.display import Math
    from myst_nb import glue

    glue(key, Math(latex(eq)), display=False)


def glue_num(key: str, value) -> float:
    """Glue a number for ``{glue:text}`` as a plain float (never a NumPy or SymPy scalar)."""
    from myst_nb import glue

    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"glue key {key!r}: value is not finite ({value!r})")
    glue(key, number, display=False)
    return number


def signed(value: float, digits: int = 2, suffix: str = "") -> str:
    """A signed difference for a reproduction table, with no "-0.00" for a zero difference."""
    rounded = round(float(value), digits) + 0.0
    return f"{rounded:+.{digits}f}{suffix}"


_NEUTRAL = {"", "—", "-", "–", "n/a"}


def is_number(cell: str) -> bool:
    """Whether a formatted cell reads as a number ("1,234", "−0.5%", "$2.10", "3.1×")."""
    text = str(cell).strip().strip("*").replace("−", "-").replace(",", "").replace(" ", "")
    text = text.lstrip("$≈~<>").rstrip("%×x")
    try:
        float(text)
    except ValueError:
        return False
    return True


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table from already formatted cells: numbers right-aligned, text left-aligned."""
    numeric = [all(is_number(row[i]) for row in rows if str(row[i]).strip() not in _NEUTRAL)
               for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if num else ":---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def show_markdown(text: str):
    """Display Markdown (rendered by myst-nb as part of the page)."""
    from IPython.display import Markdown, display

    display(Markdown(text))
