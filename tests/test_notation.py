"""The notation page defines every symbol the book's displayed equations use.

Each derivation's symbols are in the registry (inference_math.core.symbols), and a display form
(inference_math.book.display_forms) may name parts of a long result with symbols of its own
(t_lat^π, A_0 ... A_2): those must be listed by ``display_symbols()``; a chapter may create a
symbol for an equation of its own (a ratio, a worked example's matrix): those must be in
``notation.CHAPTER_SYMBOLS``. The page (inference_math.book.notation) shows all three, each symbol
as ``$<latex>$``.
"""

from __future__ import annotations

import re
from pathlib import Path

import sympy as sp

from inference_math import DERIVATIONS
from inference_math.book import notation
from inference_math.book.display_forms import FORMS, DisplayForm, display_symbols
from inference_math.core.symbols import REGISTRY

REGISTERED = {entry.symbol for entry in REGISTRY.values()}
ROOT = Path(__file__).resolve().parents[1]


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


# A symbol a chapter's code creates: sp.Symbol("..."), sp.MatrixSymbol(r"...", ...), sp.symbols(...)
CREATED = re.compile(r"""sp\.(?:Symbol|MatrixSymbol|symbols)\(\s*r?(["'])(.+?)\1""")
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)
# Symbols chapters create only for checks that are never displayed (read in each chapter).
NEVER_DISPLAYED = {
    ("deepseek_v3", "A"), ("deepseek_v3", "B"), ("deepseek_v3", "C"), ("deepseek_v3", "D"),
    ("deepseek_v3", "x"), ("deepseek_v3", "y"),  # explicit matrices: absorption is associativity
    ("sharding", "k"),  # the crossover as a function of the axes credited, in an assert
}


def _created(text: str) -> set[str]:
    return {m.group(2).replace("\\\\", "\\") for cell in CODE_CELL.findall(text)
            for m in CREATED.finditer(cell)}


def test_every_symbol_a_chapter_creates_is_on_the_page_or_never_displayed():
    listed = {(entry.chapter, entry.latex) for entry in notation.CHAPTER_SYMBOLS}
    found = {(path.stem, latex) for path in sorted((ROOT / "book").glob("*.md"))
             for latex in _created(path.read_text())}
    assert found - NEVER_DISPLAYED - listed == set()
    # nothing listed that no chapter creates any more
    assert listed <= found and NEVER_DISPLAYED <= found
    page = notation.markdown()
    assert all(f"${latex}$" in page for _, latex in listed)


def test_a_symbol_created_in_a_chapter_is_found():
    text = ('# T\n\n```{code-cell} ipython3\nq = sp.Symbol(r"q_{\\mathrm{new}}")\n'
            'glue_eq("x", sp.Eq(sp.MatrixSymbol("Z", 2, 2), 0))\n```\n')
    assert _created(text) == {r"q_{\mathrm{new}}", "Z"}


# --- the core notation page (book/core_notation.md) -----------------------------------------

CORE = [name for names in notation.CORE.values() for name in names]


def test_every_core_symbol_is_registered_once_with_a_unit_and_a_meaning():
    assert len(set(CORE)) == len(CORE)
    for name in CORE:
        assert name in REGISTRY, name
        assert REGISTRY[name].unit.strip() and REGISTRY[name].meaning.strip(), name


def test_the_core_page_is_short_and_shows_no_code_names_or_assumptions():
    page = notation.core_markdown()
    rows = [line for line in page.splitlines() if line.startswith("| $")]
    assert 30 <= len(rows) <= 45
    assert len(rows) == len(CORE)
    for name in CORE:
        entry = REGISTRY[name]
        assert f"${entry.latex}$" in page
        assert f"`{name}`" not in page
    assert "positive real" not in page and "assumption" not in page
    assert all(line.count("|") - line.count(r"\|") == 4 for line in rows)  # symbol, meaning, unit


def test_the_core_page_spells_out_ttft_and_tpot():
    page = notation.core_markdown()
    assert "time to first token (TTFT)" in page and "time per output token (TPOT)" in page
    text = (ROOT / "book" / "core_notation.md").read_text()
    assert "(TTFT)" in text and "(TPOT)" in text and "{doc}`notation`" in text


def test_the_core_page_is_in_the_front_matter_after_the_curves():
    toc = (ROOT / "_toc.yml").read_text()
    front = toc.split("- caption:")[1]
    assert "Before you start" in front
    assert front.index("book/curves") < front.index("book/core_notation")


def test_the_full_page_keeps_code_names_and_drops_the_assumptions_column():
    page = notation.markdown()
    assert "| symbol | code name | unit | meaning |" in page
    assert "assumptions" not in page
    assert (ROOT / "book" / "notation.md").read_text().count("# Full notation") == 1


def test_a_unit_with_a_dollar_and_a_meaning_with_a_bar_do_not_break_a_table():
    page = notation.markdown()
    assert r"\$/hour" in page and "| $/hour" not in page
    rows = [line for line in page.splitlines() if line.startswith("| $")]
    header_cells = {4, 3}  # registry tables: 4 columns; display-only: 3; one chapter's: 4
    assert all(line.count("|") - line.count(r"\|") - 1 in header_cells for line in rows)


def test_units_wrap_on_a_phone():
    """A unit's longest unbreakable word stays short (a ratio of two long words is written with
    "per"), so that the four-column tables can wrap in a phone's column."""
    units = {notation._unit(entry.unit) for entry in REGISTRY.values()}
    assert max(len(word) for unit in units for word in unit.split()) <= 16
    assert notation._unit("bytes/parameter") == "bytes per parameter"
    assert notation._unit("FLOP/s") == "FLOP/s" and notation._unit("$/hour") == r"\$/hour"
    assert notation._unit("1", dash=True) == "–" and notation._unit("1") == "1"


# --- one meaning per symbol ---------------------------------------------------------------------


def _clashes(latex: list[str]) -> set[str]:
    """The LaTeX of every symbol listed with more than one meaning."""
    seen: set[str] = set()
    return {x for x in latex if x in seen or seen.add(x)}


def test_every_symbol_has_one_meaning_across_the_book():
    """The registry, the display forms' symbols and the chapters' own symbols give each LaTeX
    spelling one meaning: a chapter's matrix may not reuse a registered letter."""
    latex = ([entry.latex for entry in REGISTRY.values()]
             + [entry.latex for entry in display_symbols()]
             + [entry.latex for entry in notation.CHAPTER_SYMBOLS])
    assert _clashes(latex) == set()


def test_a_symbol_given_two_meanings_is_caught():
    assert _clashes(["B", r"\mathbf{B}", "b", "B"]) == {"B"}
