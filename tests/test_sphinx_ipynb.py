"""The Sphinx extension that offers each chapter's executed notebook in the download menu."""

from __future__ import annotations

from types import SimpleNamespace

from inference_math.book import sphinx_ipynb


def test_executed_notebook_is_copied_and_named(tmp_path):
    outdir = tmp_path / "_build" / "html"
    executed = tmp_path / "_build" / "jupyter_execute" / "book" / "one_gpu.ipynb"
    executed.parent.mkdir(parents=True)
    executed.write_text('{"cells": []}')
    app = SimpleNamespace(outdir=str(outdir), builder=SimpleNamespace(format="html"))
    context = {}
    sphinx_ipynb._on_page_context(app, "book/one_gpu", "page.html", context, None)
    assert context["ipynb_source"] == "book/one_gpu.ipynb"
    assert (outdir / "_sources" / "book" / "one_gpu.ipynb").read_text() == '{"cells": []}'
    # a page that is not a notebook (no executed copy) gets no entry
    other = {}
    sphinx_ipynb._on_page_context(app, "book/bibliography", "page.html", other, None)
    assert "ipynb_source" not in other
