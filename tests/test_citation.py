"""BibTeX generated from CITATION.cff parses, and carries the file's fields and the permalink."""

import re

import pytest
import yaml
from pybtex.database import parse_string

from inference_math import DERIVATIONS
from inference_math.book import citation
from inference_math.core.validation import InputError


def test_book_entry_has_the_citation_files_fields():
    meta = yaml.safe_load((citation.ROOT / "CITATION.cff").read_text())
    entry = parse_string(citation.book_bibtex(), "bibtex").entries[citation.BOOK_KEY]
    assert entry.fields["title"] == citation.tex(meta["title"])
    assert entry.fields["version"] == str(meta["version"])
    assert entry.fields["url"] == meta["url"]
    assert entry.fields["year"] == str(meta["date-released"])[:4]
    assert [str(p) for p in entry.persons["author"]] == ["{" + meta["authors"][0]["name"] + "}"]


def test_a_derivation_entry_points_at_its_index_anchor():
    label = "eq-roofline-critical-batch"
    text = citation.derivation_bibtex(label)
    entry = parse_string(text, "bibtex").entries[f"{citation.BOOK_KEY}:{label}"]
    assert entry.fields["url"].endswith(f"/book/derivations.html#{label}")
    assert entry.fields["url"].startswith("https://")
    assert entry.fields["crossref"] == citation.BOOK_KEY


def test_a_person_author_is_written_family_given():
    meta = {"authors": [{"family-names": "Doe", "given-names": "Jane"}, {"name": "A Lab"}],
            "title": "T", "date-released": "2026-01-02", "version": "1", "url": "https://x.org/",
            "repository-code": "https://x.org/r"}
    entry = parse_string(citation.book_bibtex(meta), "bibtex").entries[citation.BOOK_KEY]
    assert [p.last_names for p in entry.persons["author"]][0] == ["Doe"]
    assert len(entry.persons["author"]) == 2


def test_an_unknown_label_is_refused():
    with pytest.raises(InputError, match="unknown derivation label 'eq-nope-nothing'"):
        citation.derivation_url("eq-nope-nothing")


def test_text_fields_escape_what_latex_would_reject():
    """A bare _ & % # or $ in a title or note stops LaTeX when a BibTeX style typesets it."""
    unescaped = re.compile(r"(?<!\\)[_&%#$]")
    entries = [citation.book_bibtex(), *(citation.derivation_bibtex(label) for label in DERIVATIONS)]
    for entry in entries:
        fields = parse_string(entry, "bibtex").entries.values()
        for fields_of_entry in fields:
            for name in ("title", "note"):
                text = re.sub(r"\\url\{[^}]*\}", "", fields_of_entry.fields[name])
                assert not unescaped.search(text), (name, text)
    assert citation.tex("a_b & 100% #1 $x$") == r"a\_b \& 100\% \#1 \$x\$"


def test_a_source_entry_is_read_whole_from_the_bibliography():
    entry = citation.source_bibtex("erdil2025inference")
    parsed = parse_string(entry, "bibtex").entries
    assert list(parsed) == ["erdil2025inference"]
    assert parsed["erdil2025inference"].fields["eprint"] == "2506.04645"
    with pytest.raises(InputError, match="no entry"):
        citation.source_bibtex("nobody1999")
