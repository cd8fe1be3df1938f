"""An opt-in disk cache of computed frontiers.

`make test` executes every chapter twice (under nbval, then in the strict book build) and several
chapters compute the same frontiers. When the environment variable ``INFERENCE_MATH_CACHE`` names a
directory, :func:`cached` stores each result there, keyed by its inputs *and* by a digest of the
library's own source and data files: any change to the code or the data is a different key, so a
stale result is never read. Without the variable nothing is cached (the command line, the tests
and a reader's own notebook always compute).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

ENV = "INFERENCE_MATH_CACHE"
PACKAGE = Path(__file__).resolve().parents[1]

T = TypeVar("T")


@cache
def library_digest() -> str:
    """SHA-256 over the sources and data files the engine reads (names and contents).

    The book machinery (``inference_math/book``) computes nothing, so it is left out.
    """
    digest = hashlib.sha256()
    files = sorted(p for p in PACKAGE.rglob("*")
                   if p.is_file() and p.suffix in {".py", ".json", ".csv"}
                   and "__pycache__" not in p.parts and p.relative_to(PACKAGE).parts[0] != "book")
    for path in files:
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_dir() -> Path | None:
    where = os.environ.get(ENV, "").strip()
    return Path(where) if where else None


def cached(kind: str, key: object, compute: Callable[[], T]) -> T:
    """``compute()``, or its stored result for the same ``kind``, ``repr(key)`` and library."""
    where = cache_dir()
    if where is None:
        return compute()
    name = hashlib.sha256(f"{kind}|{key!r}|{library_digest()}".encode()).hexdigest()
    path = where / f"{kind}-{name}.pickle"
    if path.exists():
        with path.open("rb") as handle:
            return pickle.load(handle)
    result = compute()
    where.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    with partial.open("wb") as handle:
        pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
    partial.replace(path)  # atomic: a concurrent reader sees the whole file or none
    return result
