"""The Sphinx extension that offers each chapter's executed notebook in the download menu."""

from __future__ import annotations

from types import SimpleNamespace

import nbformat

from inference_math.book import sphinx_ipynb


def _notebook(path, code, outputs=()):
    cell = nbformat.v4.new_code_cell(code)
    cell.outputs = [nbformat.v4.new_output("stream", text=text) for text in outputs]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)


def test_the_run_with_outputs_is_offered_when_its_code_is_the_pages(tmp_path, monkeypatch):
    outdir = tmp_path / "_build" / "html"
    ran = tmp_path / "_build" / "executed"
    _notebook(tmp_path / "_build" / "jupyter_execute" / "book" / "one_gpu.ipynb", "x = 1")
    _notebook(ran / "one_gpu.ipynb", "x = 1", outputs=["ran"])
    assert sphinx_ipynb.notebook_for(outdir, "book/one_gpu", ran) == ran / "one_gpu.ipynb"
    # a stale run (other code) is not offered: the page's own notebook is
    _notebook(ran / "one_gpu.ipynb", "x = 2", outputs=["stale"])
    page = tmp_path / "_build" / "jupyter_execute" / "book" / "one_gpu.ipynb"
    assert sphinx_ipynb.notebook_for(outdir, "book/one_gpu", ran) == page
    assert sphinx_ipynb.notebook_for(outdir, "book/bibliography", ran) is None


def test_page_context_names_the_copy(tmp_path, monkeypatch):
    outdir = tmp_path / "_build" / "html"
    _notebook(tmp_path / "_build" / "jupyter_execute" / "book" / "one_gpu.ipynb", "x = 1")
    monkeypatch.setattr("inference_math.book.executed.EXECUTED", tmp_path / "none")
    app = SimpleNamespace(outdir=str(outdir), builder=SimpleNamespace(format="html"))
    context = {}
    sphinx_ipynb._on_page_context(app, "book/one_gpu", "page.html", context, None)
    assert context["ipynb_source"] == "book/one_gpu.ipynb"
    assert (outdir / "_sources" / "book" / "one_gpu.ipynb").is_file()
    other = {}
    sphinx_ipynb._on_page_context(app, "book/bibliography", "page.html", other, None)
    assert "ipynb_source" not in other
