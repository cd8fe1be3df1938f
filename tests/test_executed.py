"""Chapters executed once: nbval's notebooks are the cache the book builds render from."""

from pathlib import Path

import jupytext
import nbformat
from jupyter_cache import get_cache
from myst_nb.core.read import read_myst_markdown_notebook

from inference_math.book import executed

ROOT = Path(__file__).resolve().parents[1]


def test_nbval_copy_and_book_build_hash_a_chapter_alike(tmp_path):
    """The design rests on this: the notebook jupytext makes for nbval and the one MyST-NB reads
    from the same chapter have the same cache key, so the build finds nbval's run."""
    cache = get_cache(str(tmp_path / "cache"))
    for chapter in ("one_gpu", "full_model", "deepseek_v3"):
        text = (ROOT / "book" / f"{chapter}.md").read_text()
        _, ours = cache.create_hashed_notebook(jupytext.reads(text, fmt="md:myst"))
        _, builds = cache.create_hashed_notebook(read_myst_markdown_notebook(text))
        assert ours == builds, chapter


def _project(tmp_path: Path, code: str) -> Path:
    (tmp_path / "book").mkdir()
    (tmp_path / "inference_math").mkdir()
    (tmp_path / "inference_math" / "x.py").write_text("A = 1\n")
    chapter = ("---\nkernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n"
               f"---\n\n# T\n\n```{{code-cell}} ipython3\n{code}\n```\n")
    (tmp_path / "book" / "t.md").write_text(chapter)
    return tmp_path


def test_prime_stores_the_outputs_and_fresh_follows_the_sources(tmp_path):
    root = _project(tmp_path, "print(6 * 7)")
    notebook = jupytext.reads((root / "book" / "t.md").read_text(), fmt="md:myst")
    code = next(cell for cell in notebook.cells if cell.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="42\n")]
    ran = root / "executed"
    ran.mkdir()
    nbformat.write(notebook, str(ran / "t.ipynb"))
    cache_path = root / "cache"
    assert not executed.fresh(cache_path, root)
    assert executed.prime(ran, cache_path, root) == 1
    assert executed.fresh(cache_path, root)
    match = get_cache(str(cache_path)).match_cache_notebook(
        read_myst_markdown_notebook((root / "book" / "t.md").read_text()))
    bundle = get_cache(str(cache_path)).get_cache_bundle(match.pk)
    cached = next(cell for cell in bundle.nb.cells if cell.cell_type == "code")
    assert cached.outputs[0]["text"] == "42\n"
    (root / "inference_math" / "x.py").write_text("A = 2\n")
    assert not executed.fresh(cache_path, root)


def test_the_digest_covers_chapters_and_package(tmp_path):
    root = _project(tmp_path, "1")
    before = executed.inputs_digest(root)
    (root / "book" / "t.md").write_text((root / "book" / "t.md").read_text() + "\ntext\n")
    assert executed.inputs_digest(root) != before


def test_a_trailing_semicolon_hides_the_result_as_in_a_notebook():
    assert executed._quiet("x = 1\nsave(fig, 'a');\n# done\n")
    assert not executed._quiet("x = 1\nsave(fig, 'a')\n")
    assert not executed._quiet("s = 'a;'\ns")
