"""Sphinx extension: each chapter can be downloaded as the Jupyter notebook the book ran.

The theme's download menu lists a ``.ipynb`` entry when a page's context names one
(``ipynb_source``, a path under ``_sources/``), but nothing in jupyter-book sets it for MyST
Markdown chapters. MyST-NB writes every chapter it ran (or took from its cache), with its outputs,
to ``jupyter_execute/`` beside the HTML; this extension copies that notebook next to the page's
source in ``_sources/`` and names it, so the menu offers ``.ipynb`` beside ``.md`` and ``.pdf``.

Enable it in ``_config.yml`` under ``sphinx: extra_extensions``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: MyST-NB's folder of executed notebooks, beside the builder's output folder.
EXECUTED_FOLDER = "jupyter_execute"


def executed_notebook(outdir: str | Path, pagename: str) -> Path:
    return Path(outdir).parent / EXECUTED_FOLDER / f"{pagename}.ipynb"


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    if app.builder.format != "html":
        return
    notebook = executed_notebook(app.outdir, pagename)
    if not notebook.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    # before sphinx-book-theme builds its header buttons (priority 501)
    app.connect("html-page-context", _on_page_context, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
