"""Sphinx extension: each page loads only what a reader of the book uses.

jupyter-book and its theme put three things on every page that this book does not need:

- **sphinx-thebe** (live code in the page): an inline configuration script and ``sphinx-thebe.js``
  on every page. The book has no live-code button (``launch_buttons`` has no ``thebe``); Binder
  opens a chapter instead. Both scripts and thebe's style sheet are dropped from each page.
- **Font Awesome's JavaScript** (``fontawesome.js``, 1.5 MB), which redraws the theme's icons as
  SVG. The theme's style sheet already draws the same icons from Font Awesome's web fonts (the
  ``fa-solid``/``fa-brands`` classes and their ``@font-face``), loaded only when an icon of that
  font is on the page, so the script is left out: ``templates/static/webpack-macros.html`` is the
  theme's file without it (a test keeps the two equal otherwise).
- **MathJax's combined file** ``tex-chtml.js`` (1.2 MB with its contextual menu, 0.4 MB of it).
  The offline copy of sphinx-mathjax-offline is loaded through MathJax's own loader instead,
  with the components the book's math needs: TeX input, HTML output and the hidden MathML that
  screen readers read (no menu).

Enable it in ``_config.yml`` under ``sphinx: extra_extensions`` (after sphinx-mathjax-offline).
"""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: MathJax components loaded by ``startup.js`` (paths inside the offline MathJax copy).
MATHJAX_COMPONENTS = ["input/tex", "output/chtml", "a11y/assistive-mml"]


def _is_thebe(asset) -> bool:
    filename = getattr(asset, "filename", "") or ""
    body = asset.attributes.get("body", "") if hasattr(asset, "attributes") else ""
    return "thebe" in Path(str(filename)).name or "THEBE_JS_URL" in str(body)


def without_thebe(assets: list) -> list:
    """``assets`` (a page's scripts or style sheets) without sphinx-thebe's."""
    return [asset for asset in assets if not _is_thebe(asset)]


def _on_config_inited(app, config) -> None:
    config.templates_path = [str(TEMPLATES), *config.templates_path]
    if str(config.mathjax_path).endswith("tex-chtml.js"):
        config.mathjax_path = str(config.mathjax_path)[: -len("tex-chtml.js")] + "startup.js"
        mathjax = dict(config.mathjax3_config or {})
        loader = dict(mathjax.get("loader", {}))
        loader.setdefault("load", list(MATHJAX_COMPONENTS))
        mathjax["loader"] = loader
        config.mathjax3_config = mathjax


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = without_thebe(context[key])


def setup(app):
    app.connect("config-inited", _on_config_inited, priority=900)
    app.connect("html-page-context", _on_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
