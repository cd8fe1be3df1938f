"""Sphinx extension: each chapter can be downloaded as the Jupyter notebook the book ran.

The theme's download menu lists a ``.ipynb`` entry when a page's context names one
(``ipynb_source``, a path under ``_sources/``), but nothing in jupyter-book sets it for MyST
Markdown chapters. This extension copies the chapter's notebook next to the page's source in
``_sources/`` and names it, so the menu offers ``.ipynb`` beside ``.md`` and ``.pdf``.

The notebook is the one nbval ran (``_build/executed/``, :mod:`inference_math.book.executed`),
with the outputs the page shows, when its code is the page's; otherwise the notebook MyST-NB
writes to ``jupyter_execute/`` (the chapter as a notebook; from the notebook cache it has no
outputs).

Enable it in ``_config.yml`` under ``sphinx: extra_extensions``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: MyST-NB's folder of executed notebooks, beside the builder's output folder.
EXECUTED_FOLDER = "jupyter_execute"


def executed_notebook(outdir: str | Path, pagename: str) -> Path:
    return Path(outdir).parent / EXECUTED_FOLDER / f"{pagename}.ipynb"


def _code(path: Path) -> list[str]:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    return [cell.source.strip() for cell in notebook.cells if cell.cell_type == "code"]


def notebook_for(outdir: str | Path, pagename: str, ran: Path | None = None) -> Path | None:
    """The notebook to offer for ``pagename``: nbval's run with outputs if it has the page's code,
    else MyST-NB's; None for a page that is not a notebook."""
    page = executed_notebook(outdir, pagename)
    if not page.is_file():
        return None
    if ran is None:
        from inference_math.book.executed import EXECUTED

        ran = EXECUTED
    with_outputs = Path(ran) / f"{Path(pagename).name}.ipynb"
    if with_outputs.is_file() and _code(with_outputs) == _code(page):
        return with_outputs
    return page


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    if app.builder.format != "html":
        return
    notebook = notebook_for(app.outdir, pagename)
    if notebook is None:
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    # before sphinx-book-theme builds its header buttons (priority 501)
    app.connect("html-page-context", _on_page_context, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
