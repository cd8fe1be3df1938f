"""Sphinx extension: a display equation broken for a phone is shown on one line on a wider screen.

MathJax 3 breaks no line by itself, so the book breaks long equations into lines that fit a
phone's column (:mod:`inference_math.book.typeset`). On a desktop the same equation would fit on
one line, and two or three short lines read worse than one. For each display equation that
:func:`inference_math.book.typeset.unbroken` can set on one line of a desktop column, the HTML
holds both renderings, the one-line form in ``span.math-wide`` and the broken one in
``span.math-narrow``; the book's style sheet shows one of them by the width of the text column (a
container query; the hidden one is ``display: none``, so neither a reader nor a screen reader
meets it twice, and a browser without container queries shows the broken form, as before). The
one-line form's width is an estimate (up to a sixth too narrow), so a small script
(:data:`FIT_SCRIPT`) measures it once MathJax has typeset the page, and on every resize, and
shows the broken form wherever the one-line form would be wider than its room. The
equation keeps one number and one anchor. The LaTeX/PDF build and every other equation are
unchanged.

Enable it in ``_config.yml`` under ``sphinx: extra_extensions`` (after sphinx-mathjax-offline).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.locale import _
from sphinx.util.math import get_node_equation_number

from .typeset import unbroken

RENDERER = "mathjax"
MARKER = "math-widths-box"
#: On a page with two-width equations: once MathJax is done (and on resize), an equation whose
#: one-line form is wider than its room gets the class ``math-too-wide`` (book.css then shows its
#: broken form); ``<html data-math-widths="fitted">`` says it has run (the browser tests wait for it).
FIT_SCRIPT = """
(() => {
  const fit = () => {
    document.querySelectorAll("div.math.math-widths").forEach(div => {
      div.classList.remove("math-too-wide");
      const box = div.querySelector(":scope > span.math-wide mjx-container");
      const math = box && box.querySelector("mjx-math");
      if (math && box.getClientRects().length
          && math.getBoundingClientRect().width > box.clientWidth + 1) {
        div.classList.add("math-too-wide");
      }
    });
    document.documentElement.dataset.mathWidths = "fitted";
  };
  const start = (tries) => {
    const startup = window.MathJax && window.MathJax.startup;
    if (startup && startup.promise) {
      startup.promise.then(() => document.fonts.ready).then(fit);
    } else if (tries > 0) {
      setTimeout(() => start(tries - 1), 100);
    }
  };
  window.addEventListener("resize", fit);
  start(300);
})();
"""


def _display(self, latex: str) -> str:
    part = self.encode(latex)
    body = r"\begin{split}" + part + r"\end{split}" if r"\\" in part else part
    start, end = self.builder.config.mathjax_display
    return start + body + end


def visit_displaymath(self, node: nodes.math_block, original) -> None:
    latex = node.astext()
    wide = None if node["nowrap"] or "\n\n" in latex.strip() else unbroken(latex)
    if wide is None:
        original(self, node)  # raises SkipNode
        return
    # The box is the container whose width the style sheet's container query reads: a block as
    # wide as the text column, whatever the theme's sidebars leave of the screen.
    self.body.append(f'<div class="{MARKER}">')
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight math-widths"))
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(f'<span class="math-wide">{_display(self, wide)}</span>')
    self.body.append(f'<span class="math-narrow">{_display(self, latex)}</span>')
    self.body.append("</div></div>\n")
    raise nodes.SkipNode


def _install(app) -> None:
    renderers = app.registry.html_block_math_renderers
    if RENDERER not in renderers:
        return
    original, depart = renderers[RENDERER]
    if getattr(original, "two_widths", False):
        return

    def visit(self, node):
        visit_displaymath(self, node, original)

    visit.two_widths = True
    renderers[RENDERER] = (visit, depart)


def add_script(app, pagename, templatename, context, doctree) -> None:
    """On ``html-page-context``: the fitting script on a page that holds a two-width equation."""
    if getattr(app.builder, "format", None) == "html" and MARKER in context.get("body", ""):
        app.add_js_file(None, body=FIT_SCRIPT)  # called here, it applies to this page only


def setup(app):
    app.connect("builder-inited", _install)
    # before the extensions that replace the page's script list (sphinx_trim, sphinx_inline_js)
    app.connect("html-page-context", add_script, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
