"""BibTeX for the book and for one of its derivations, generated from ``CITATION.cff``.

The citation file is the one place where the title, authors, version and addresses are written;
the "How to cite" page and its tests read them from here.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from .. import DERIVATIONS
from ..core.validation import InputError

ROOT = Path(__file__).resolve().parents[2]
BOOK_KEY = "inference-economics-book"


def metadata(root: Path = ROOT) -> dict:
    path = root / "CITATION.cff"
    if not path.exists():
        raise FileNotFoundError(f"no CITATION.cff under {root}")
    return yaml.safe_load(path.read_text())


def _authors(meta: dict) -> str:
    names = []
    for author in meta["authors"]:
        if "name" in author:  # an entity: braces keep BibTeX from splitting it into names
            names.append("{" + author["name"] + "}")
        else:
            names.append(f"{author['family-names']}, {author['given-names']}")
    return " and ".join(names)


_TEX_SPECIALS = {"\\": r"\textbackslash{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#",
                 "$": r"\$"}


def tex(text: str) -> str:
    """Text as LaTeX reads it in a BibTeX field: its special characters escaped."""
    return "".join(_TEX_SPECIALS.get(char, char) for char in text)


def _entry(kind: str, key: str, fields: dict[str, str]) -> str:
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields.items())
    return f"@{kind}{{{key},\n{body}\n}}"


def book_bibtex(meta: dict | None = None) -> str:
    """The book (and library) as a BibTeX ``@misc`` entry."""
    meta = metadata() if meta is None else meta
    return _entry("misc", BOOK_KEY, {
        "author": _authors(meta),
        "title": tex(meta["title"]),
        "year": str(meta["date-released"])[:4],
        "version": str(meta["version"]),
        "url": meta["url"],
        "note": f"Source: \\url{{{meta['repository-code']}}}",
    })


def derivation_url(label: str, meta: dict | None = None) -> str:
    """The permalink of a derivation's entry in the derivation index."""
    if label not in DERIVATIONS:
        raise InputError(f"unknown derivation label {label!r}")
    meta = metadata() if meta is None else meta
    return f"{meta['url'].rstrip('/')}/book/derivations.html#{label}"


def derivation_bibtex(label: str, meta: dict | None = None) -> str:
    """A BibTeX entry for one derivation, cross-referencing the book's entry."""
    meta = metadata() if meta is None else meta
    url = derivation_url(label, meta)
    return _entry("misc", f"{BOOK_KEY}:{label}", {
        "author": _authors(meta),
        "title": f"Equation {label}",
        "year": str(meta["date-released"])[:4],
        "version": str(meta["version"]),
        "url": url,
        "crossref": BOOK_KEY,
        "note": tex(f"Derivation {label} of the book; reproduces {DERIVATIONS[label].source}"),
    })


def source_bibtex(key: str, root: Path = ROOT) -> str:
    """The entry ``key`` of the book's ``references.bib``, as written there."""
    text = (root / "references.bib").read_text()
    start = text.find(f"{{{key},")
    if start < 0:
        raise InputError(f"no entry {key!r} in references.bib")
    start = text.rfind("@", 0, start)
    depth = 0
    for end in range(text.index("{", start), len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[start:end + 1]
    raise InputError(f"entry {key!r} of references.bib is not closed")
