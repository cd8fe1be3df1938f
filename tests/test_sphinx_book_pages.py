"""The Sphinx extensions that write the derivation index into its page and give a display
equation broken for a phone a one-line rendering for a wide column."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import sympy as sp
from docutils import nodes
from sphinx.errors import ExtensionError

from inference_math import DERIVATIONS
from inference_math.book import sphinx_derivations, sphinx_math_widths
from inference_math.book.derivation_index import ROOT
from inference_math.book.typeset import eq_tex, tex


def test_the_index_replaces_its_marker_line():
    text = (ROOT / f"{sphinx_derivations.DOCNAME}.md").read_text()
    assert text.count(sphinx_derivations.MARKER) == 1
    page = sphinx_derivations.insert_index(text)
    assert sphinx_derivations.MARKER not in page
    assert all(page.count(f'id="{label}"') == 1 for label in DERIVATIONS)
    assert page.startswith(text[:text.index(sphinx_derivations.MARKER)])
    with pytest.raises(ExtensionError, match="exactly once"):
        sphinx_derivations.insert_index(text.replace(sphinx_derivations.MARKER, ""))


class _Translator:
    """What the display-math visitor uses of Sphinx's HTML translator."""

    def __init__(self):
        self.body = []
        self.builder = SimpleNamespace(config=SimpleNamespace(mathjax_display=(r"\[", r"\]")))

    def encode(self, text):
        return text.replace("&", "&amp;").replace("<", "&lt;")

    def starttag(self, node, tag, CLASS=""):
        return f'<{tag} class="{CLASS}">'


def _render(latex: str) -> str:
    translator = _Translator()
    node = nodes.math_block(latex, latex, nowrap=False, number=None)

    def original(self, node):
        self.body.append("ORIGINAL")
        raise nodes.SkipNode

    with pytest.raises(nodes.SkipNode):
        sphinx_math_widths.visit_displaymath(translator, node, original)
    return "".join(translator.body)


def test_a_broken_equation_gets_both_renderings():
    x = sp.symbols("x_{0:3}", positive=True)
    long = sp.symbols(r"n_{\mathrm{layers}} d_{\mathrm{model}} d_{\mathrm{head}}", positive=True)
    eq = sp.Eq(sp.Symbol("F"), sum(long[k] * long[(k + 1) % 3] * x[k] for k in range(3)))
    broken = eq_tex(eq)
    html = _render(broken)
    assert '<span class="math-wide">\\[' + tex(eq) + "\\]</span>" in html
    assert '<span class="math-narrow">\\[\\begin{split}' in html and "&amp;" in html
    assert html.startswith('<div class="math-widths-box"><div class="math notranslate')


@pytest.mark.parametrize("latex", ["y = a + b", r"\begin{aligned}y &= a \\ &\quad {}+ " + "b" * 200
                                   + r"\end{aligned}"])
def test_other_equations_are_left_to_sphinx(latex):
    assert _render(latex) == "ORIGINAL"
