"""Execute every chapter once: nbval's run is kept and handed to the book builds.

``make test`` runs each chapter under nbval (the test) and then builds the book twice over (HTML
strictly, and in CI the PDF). Rather than execute the chapters again for each build, this module

- as a pytest plugin (``-p inference_math.book.executed``), writes each notebook nbval ran with
  the outputs nbval received, once all of its cells have passed, to ``_build/executed/``;
- as ``python -m inference_math.book.executed prime``, stores those notebooks in the notebook
  cache that MyST-NB reads in ``execute_notebooks: cache`` mode (``_build/.jupyter_cache``). A
  chapter whose code cells match a cached notebook is rendered from it; any other is executed by
  the build itself, so a stale entry can never stand in for changed code;
- ``python -m inference_math.book.executed fresh`` exits 0 only if the cache was primed from the
  present chapters and package sources (a digest of both), so the Makefile re-runs nbval when
  anything the outputs depend on has changed.
"""

from __future__ import annotations

import hashlib
import sys
import tokenize
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXECUTED = ROOT / "_build" / "executed"
NOTEBOOK_CACHE = ROOT / "_build" / ".jupyter_cache"
DIGEST_FILE = "inputs.sha256"

_failed: set[str] = set()


def inputs_digest(root: Path = ROOT) -> str:
    """SHA-256 over the chapters and the package (sources and data): what the outputs depend on."""
    digest = hashlib.sha256()
    files = [*sorted((root / "book").glob("*.md")),
             *sorted(p for p in (root / "inference_math").rglob("*")
                     if p.is_file() and p.suffix in {".py", ".json", ".csv", ".toml"}
                     and "__pycache__" not in p.parts)]
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


# --- the pytest plugin --------------------------------------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    cell = getattr(item, "cell", None)
    if cell is None or report.when != "call":
        return
    if report.failed:
        _failed.add(str(item.fspath))
    outputs = [nbformat.from_dict(dict(out)) for out in getattr(item, "test_outputs", None) or []]
    if _quiet(cell.source):
        outputs = [out for out in outputs if out.get("output_type") != "execute_result"]
    cell.outputs = outputs
    cell.execution_count = item.cell_num + 1
    for out in cell.outputs:
        if out.get("output_type") == "execute_result":
            out["execution_count"] = cell.execution_count


def _quiet(source: str) -> bool:
    """IPython's rule for a cell ending in ';' (no result shown), applied here because nbval runs
    cells without storing history, which is where IPython looks for the semicolon."""
    from IPython.core.displayhook import DisplayHook

    try:
        return bool(DisplayHook.semicolon_at_end_of_expression(source))
    except (SyntaxError, tokenize.TokenError):
        return False


def pytest_runtest_teardown(item, nextitem):
    """After a notebook's last cell: write it with its outputs, unless a cell failed."""
    notebook = getattr(item.parent, "nb", None)
    if notebook is None or (nextitem is not None and nextitem.parent is item.parent):
        return
    if str(item.fspath) in _failed:
        return
    EXECUTED.mkdir(parents=True, exist_ok=True)
    target = EXECUTED / Path(str(item.fspath)).name
    partial = target.with_suffix(".tmp")
    nbformat.write(notebook, str(partial))
    partial.replace(target)


# --- the cache ----------------------------------------------------------------------------------

def prime(executed: Path = EXECUTED, cache_path: Path = NOTEBOOK_CACHE, root: Path = ROOT) -> int:
    """Store every executed notebook in MyST-NB's notebook cache; returns how many."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(cache_path))
    count = 0
    for path in sorted(executed.glob("*.ipynb")):
        notebook = nbformat.read(str(path), as_version=4)
        source = root / "book" / f"{path.stem}.md"
        cache.cache_notebook_bundle(CacheBundleIn(notebook, str(source)), check_validity=False,
                                    overwrite=True)
        count += 1
    (cache_path / DIGEST_FILE).write_text(inputs_digest(root) + "\n")
    return count


def fresh(cache_path: Path = NOTEBOOK_CACHE, root: Path = ROOT) -> bool:
    stamp = cache_path / DIGEST_FILE
    return stamp.exists() and stamp.read_text().strip() == inputs_digest(root)


def main(argv: list[str]) -> int:
    if argv == ["prime"]:
        print(f"{prime()} executed chapters stored in the notebook cache")
        return 0
    if argv == ["fresh"]:
        return 0 if fresh() else 1
    print("usage: python -m inference_math.book.executed prime|fresh", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
