"""The notation page defines every symbol the book's displayed equations use.

Each derivation's symbols are in the registry (inference_math.core.symbols), and a display form
(inference_math.book.display_forms) may name parts of a long result with symbols of its own
(t_lat^π, A_0 ... A_2): those must be listed by ``display_symbols()``. The page
(inference_math.book.notation) shows both, each symbol as ``$<latex>$``.
"""

from __future__ import annotations

import sympy as sp

from inference_math import DERIVATIONS
from inference_math.book import notation
from inference_math.book.display_forms import FORMS, DisplayForm, display_symbols
from inference_math.core.symbols import REGISTRY

REGISTERED = {entry.symbol for entry in REGISTRY.values()}


def _symbols_of(form: DisplayForm) -> set[sp.Symbol]:
    """Every symbol a display form shows: in the equation and in its named constants (a constant
    is shown with its value, in the equation's "where" lines or its chapter's text)."""
    found = set(form.build().atoms(sp.Symbol))
    for name, value in form.constants().items():
        found |= {name} | set(sp.sympify(value).atoms(sp.Symbol))
    return found


def _undefined(forms) -> dict[str, set[str]]:
    listed = REGISTERED | {s for entry in display_symbols() for s in entry.symbols}
    out = {}
    for label, form in forms.items():
        if missing := _symbols_of(form) - listed:
            out[label] = {s.name for s in missing}
    return out


def test_every_symbol_of_a_display_form_is_defined():
    assert _undefined(FORMS) == {}


def test_a_symbol_a_display_form_invents_is_caught():
    x = sp.Symbol("X_{\\mathrm{new}}", positive=True)
    fake = DisplayForm("eq-fake", lambda: sp.Eq(REGISTRY["b"].symbol, 2 * x))
    assert _undefined({"eq-fake": fake}) == {"eq-fake": {x.name}}


def test_display_symbols_stand_for_symbols_the_forms_use():
    used = set().union(*(_symbols_of(form) for form in FORMS.values()))
    for entry in display_symbols():
        assert entry.symbols and set(entry.symbols) <= used, entry.latex
        assert not set(entry.symbols) & REGISTERED, entry.latex


def test_the_page_shows_every_symbol_of_every_displayed_equation():
    page = notation.markdown()
    shown = [f"${entry.latex}$" for entry in REGISTRY.values()]
    shown += [f"${entry.latex}$" for entry in display_symbols()]
    assert [s for s in shown if s not in page] == []
    # every derivation's symbols are registered ones, so the registry tables cover them
    for label, d in DERIVATIONS.items():
        assert d.function().atoms(sp.Symbol) <= REGISTERED, label
    # the display-only symbols the issue names, by their LaTeX
    for latex in (r"t_{\mathrm{lat}}^{\pi}", r"t_{\mathrm{bw}}^{\pi}", "A_{0}", "A_{1}", "A_{2}"):
        assert f"${latex}$" in page
    assert notation.DISPLAY_HEADING in page
