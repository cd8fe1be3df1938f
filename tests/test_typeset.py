"""How the book prints equations: ordered terms, readable powers, line breaks that MathJax accepts."""

from __future__ import annotations

import re

import pytest
import sympy as sp

from inference_math import DERIVATIONS
from inference_math.book.display import latex
from inference_math.book.typeset import BUDGET_EM, WIDE_BUDGET_EM, eq_tex, tex, tex_width, unbroken

a, b, c, d = sp.symbols("a b c d", positive=True)
LONG = sp.symbols(r"n_{\mathrm{layers}} d_{\mathrm{model}} d_{\mathrm{head}} n_{\mathrm{vocab}}",
                  positive=True)


def _rows(text: str) -> list[str]:
    return text.split(r"\\")


@pytest.mark.parametrize("label", sorted(DERIVATIONS))
def test_every_derivation_prints_well_formed_tex(label):
    """Braces and environments balance, and no \\left...\\right pair spans a line break (TeX
    cannot set one)."""
    text = latex(DERIVATIONS[label].function())
    depth = 0
    for i, char in enumerate(text):
        if char in "{}" and (i == 0 or text[i - 1] != "\\"):
            depth += 1 if char == "{" else -1
            assert depth >= 0, f"{label}: a brace closes before it opens: {text}"
    assert depth == 0, f"{label}: unbalanced braces: {text}"
    begins = re.findall(r"\\begin\{(\w+)\}", text)
    ends = re.findall(r"\\end\{(\w+)\}", text)
    assert sorted(begins) == sorted(ends), f"{label}: environments do not close: {text}"
    for row in _rows(text):
        lefts = len(re.findall(r"\\left[^a-z]", row))
        rights = len(re.findall(r"\\right[^a-z]", row))
        assert lefts == rights, f"{label}: \\left/\\right across a line break in {row!r}"
    # no coefficient 1 printed before a fraction (it reads as a digit of the number after it)
    assert not re.search(r"(^|[=+\-]|[&{}]) ?1 \\frac", text), f"{label}: a stray 1 in {text}"


def test_a_long_sum_breaks_between_terms_into_aligned_lines():
    terms = [LONG[k % 4] * LONG[(k + 1) % 4] * sp.Symbol(f"x_{k}") for k in range(6)]
    eq = sp.Eq(sp.Symbol("F"), sp.Add(*terms))
    text = eq_tex(eq)
    assert text.startswith(r"\begin{aligned}F &= ") and text.endswith(r"\end{aligned}")
    lines = _rows(text)
    assert len(lines) > 2
    assert all(line.strip().startswith(r"&\quad {}+") for line in lines[1:]), lines
    assert all(tex_width(line.replace("&", "")) <= BUDGET_EM + 1 for line in lines), lines


def test_a_short_equation_stays_on_one_line():
    assert eq_tex(sp.Eq(sp.Symbol("y"), a * b + c)) == "y = a b + c"


def test_positive_terms_first_and_rational_powers_inline():
    assert tex(c - a) == "c - a"
    assert tex((1 - a / b) ** c) == r"\left(1 - \frac{a}{b}\right)^{c}"
    assert tex(a ** sp.Rational(2, 3)) == "a^{2/3}"


def test_widths_grow_with_the_text():
    assert tex_width("a") < tex_width("a + b") < tex_width(r"a + b + \frac{c}{d}")
    assert tex_width(r"\frac{a + b + c}{d}") < tex_width("a + b + c + d")
    assert tex_width("x_{a}") < tex_width("x a")


# --- the one-line form for a wide column (unbroken) ---------------------------------------------

def _tokens(text: str) -> str:
    """``text`` without what line breaking adds: spaces, alignment marks, row ends, the indent,
    the empty group before a leading operator, the "×" a break puts in and delimiter sizes."""
    text = text.replace(r"\begin{aligned}", "").replace(r"\end{aligned}", "")
    text = re.sub(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr)(?![a-zA-Z])", "",
                  text)
    for mark in (r"\\", "&", r"\quad", "{}", r"\times"):
        text = text.replace(mark, "")
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("label", sorted(DERIVATIONS))
def test_the_one_line_form_only_drops_the_line_breaks(label):
    broken = latex(DERIVATIONS[label].function())
    one = unbroken(broken, width=float("inf"))
    if one is None:
        return
    assert r"\\" not in one and "&" not in one
    assert _tokens(one) == _tokens(broken), label
    # \left( ... \right) pairs balance on the one line
    assert len(re.findall(r"\\left[^a-z]", one)) == len(re.findall(r"\\right[^a-z]", one))
    fitting = unbroken(broken)
    assert fitting is None or tex_width(fitting) <= WIDE_BUDGET_EM


def test_a_broken_sum_is_one_line_again_and_only_if_it_fits():
    terms = [LONG[k % 4] * LONG[(k + 1) % 4] * sp.Symbol(f"x_{k}") for k in range(3)]
    eq = sp.Eq(sp.Symbol("F"), sp.Add(*terms))
    broken = eq_tex(eq)
    assert r"\\" in broken
    assert unbroken(broken) == tex(eq)
    assert unbroken(r"\displaystyle " + broken) == r"\displaystyle " + tex(eq)
    assert unbroken(broken, width=tex_width(tex(eq)) - 0.1) is None


@pytest.mark.parametrize("text", [
    "y = a b + c",  # not broken
    r"y = \begin{cases} a & \text{if } b \\ c & \text{otherwise} \end{cases}",  # a piecewise result
    r"\begin{gathered}y = a,\\ \text{where}\\ a = b\end{gathered}",  # "where" lines
    r"\begin{aligned}y &= a \\ &\quad {}+ \frac{b}{\begin{aligned} &c \\ &+ d\end{aligned}}"
    r"\end{aligned}",  # a broken denominator inside
])
def test_other_equations_keep_their_layout(text):
    assert unbroken(text) is None
