"""Sphinx extension: the derivation index written into its page when the book is built.

``book/derivations.md`` holds the line :data:`MARKER` where the index goes. As Sphinx reads the
page, the line is replaced by :func:`inference_math.book.derivation_index.markdown`, so the index
is part of the page's own Markdown rather than a code cell's output: its part and chapter headings
are sections of the page, which the theme lists in the page's contents sidebar and which the
search index knows. The page's code cells (checks and glued counts) run as in any chapter.

Enable it in ``_config.yml`` under ``sphinx: extra_extensions``.
"""

from __future__ import annotations

from sphinx.errors import ExtensionError

DOCNAME = "book/derivations"
MARKER = "% derivation-index: the entries are inserted here when the book is built"


def insert_index(text: str) -> str:
    """``text`` (the page's source) with :data:`MARKER` replaced by the index."""
    from . import derivation_index

    if text.count(MARKER) != 1:
        raise ExtensionError(f"{DOCNAME}.md must hold the line {MARKER!r} exactly once")
    return text.replace(MARKER, derivation_index.markdown(derivation_index.entries()))


def _source_read(app, docname: str, source: list[str]) -> None:
    if docname == DOCNAME:
        source[0] = insert_index(source[0])


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
