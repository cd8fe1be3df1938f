"""The errata index lists every erratum box of the book, each with a link target."""

from __future__ import annotations

from pathlib import Path

from inference_math.book import errata

BOOK = Path(__file__).resolve().parents[1] / "book"


def test_every_box_of_every_chapter_is_listed_once_with_a_unique_name():
    counted = sum(text.count("{admonition} Erratum:") for text in
                  (p.read_text() for p in BOOK.glob("*.md")))
    items = errata.entries()
    assert len(items) == counted > 0
    names = [item.name for item in items]
    assert None not in names and len(set(names)) == len(names)


def test_a_box_is_read_with_its_title_and_name():
    text = ("# Ch\n```{admonition} Erratum: a $\\alpha_{\\mathrm{u}} = 3$ title\n:class: warning\n"
            ":name: erratum-x\nbody\n```\n````{admonition} Erratum: no name\n:class: warning\n"
            "body\n````\n```{admonition} Note\n:name: y\n```\n")
    items = errata.boxes(text, "ch", "Ch")
    assert [(i.title, i.name) for i in items] == [
        ("a $\\alpha_{\\mathrm{u}} = 3$ title", "erratum-x"), ("no name", None)]


def test_the_index_links_each_box_and_drops_math_from_link_text():
    items = [errata.Erratum("moe", "MoE", "the $\\alpha_{\\mathrm{u}} = 3$ value", "erratum-a"),
             errata.Erratum("moe", "MoE", "a <b>", "erratum-b")]
    text = errata.markdown(items)
    assert text.count("{doc}`moe`") == 1
    assert "{ref}`the α_u=3 value <erratum-a>`" in text
    assert "{ref}`a ‹b› <erratum-b>`" in text
