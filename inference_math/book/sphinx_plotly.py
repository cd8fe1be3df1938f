"""Sphinx extension: serve plotly.js from the installed plotly package, on the pages that need it.

Figures embedded with ``include_plotlyjs=False`` (see :mod:`inference_math.book.explorer`) call a global
``Plotly`` that the page must load. This extension copies the copy of plotly.js bundled with the
Python package (``plotly/package_data/plotly.min.js``) into ``_static/`` of the HTML output and
adds a ``<script>`` for it only to pages whose body holds a plotly figure, so the book works
without a network and the other pages do not load several megabytes of JavaScript. Builders that
do not write HTML (LaTeX, ...) are left alone.

Enable it in ``_config.yml`` under ``sphinx: extra_extensions``.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

SCRIPT = "plotly.min.js"
#: The class plotly gives every figure's <div>: its presence in a page body marks a plotly page.
MARKER = 'class="plotly-graph-div"'


def bundled_plotly_js() -> Path:
    """plotly.js as shipped inside the installed plotly package."""
    path = Path(str(resources.files("plotly") / "package_data" / SCRIPT))
    if not path.is_file():
        raise FileNotFoundError(f"the installed plotly package has no {SCRIPT} at {path}")
    return path


def _writes_html(app) -> bool:
    return getattr(app.builder, "format", None) == "html"


def add_script(app, pagename, templatename, context, doctree) -> None:
    """On ``html-page-context``: load plotly.js on this page if its body holds a plotly figure."""
    if _writes_html(app) and MARKER in context.get("body", ""):
        app.add_js_file(SCRIPT)  # called here, it applies to this page only (Sphinx >= 3.5)


def copy_script(app, exception) -> None:
    """On ``build-finished``: copy the package's plotly.js to ``<outdir>/_static/``."""
    if exception is not None or not _writes_html(app):
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(bundled_plotly_js(), static / SCRIPT)


def setup(app):
    bundled_plotly_js()  # fail at start-up, not after the whole build, if plotly lacks its copy
    app.connect("html-page-context", add_script)
    app.connect("build-finished", copy_script)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
