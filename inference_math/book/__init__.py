"""Machinery of the book only: nothing here is needed to compute a result.

``display`` (glue and tables for MyST-NB), ``figures`` (style and export), ``citation`` (BibTeX
from CITATION.cff), ``derivation_index`` (the page of every labelled derivation), ``explorer`` (the
interactive frontier figure), and the Sphinx extensions ``sphinx_plotly`` and ``sphinx_inline_js``.
May import every other layer; nothing imports it.
"""
