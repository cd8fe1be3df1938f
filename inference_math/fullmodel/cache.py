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

from ..core.validation import InputError

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
                   if p.is_file() and p.suffix in {".py", ".json", ".csv", ".toml"}
                   and "__pycache__" not in p.parts and p.relative_to(PACKAGE).parts[0] != "book")
    for path in files:
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_dir() -> Path | None:
    where = os.environ.get(ENV, "").strip()
    return Path(where) if where else None


def _unusable(where: Path, exc: OSError) -> InputError:
    return InputError(f"{ENV}={str(where)!r} cannot be used as a cache directory: "
                      f"{exc.strerror or exc}")


def _usable_dir(where: Path) -> Path:
    """``where``, created if need be; InputError naming the variable if it cannot hold files.

    Checked before computing, so that a bad setting fails at once, not after the computation.
    """
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unusable(where, exc) from None
    if not os.access(where, os.W_OK | os.X_OK):
        raise _unusable(where, PermissionError(13, "not writable"))
    return where


def _load(path: Path) -> tuple | None:
    """``(stored result,)`` from ``path``, or None if there is none or it is damaged."""
    try:
        with path.open("rb") as handle:
            return (pickle.load(handle),)
    except FileNotFoundError:
        return None
    except (EOFError, pickle.UnpicklingError):
        return None  # a damaged entry is a miss; it is computed and replaced
    except OSError as exc:
        raise _unusable(path.parent, exc) from None


def cached(kind: str, key: object, compute: Callable[[], T]) -> T:
    """``compute()``, or its stored result for the same ``kind``, ``repr(key)`` and library."""
    where = cache_dir()
    if where is None:
        return compute()
    where = _usable_dir(where)
    name = hashlib.sha256(f"{kind}|{key!r}|{library_digest()}".encode()).hexdigest()
    path = where / f"{kind}-{name}.pickle"
    stored = _load(path)
    if stored is not None:
        return stored[0]
    result = compute()
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        with partial.open("wb") as handle:
            pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
        partial.replace(path)  # atomic: a concurrent reader sees the whole file or none
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise _unusable(where, exc) from None
    return result
