"""The derivation index (book/derivations.md): every entry links to its numbered equation."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pytest

INDEX = "book/derivations.html"
MIN_ENTRIES = 100

# For each derivation label on the page, the equation links of its entry: the smallest element
# around the label's anchor that holds a link to #equation-<label> and no other label's anchor.
ENTRIES = """() => {
  const anchors = [...document.querySelectorAll('[id^="eq-"]')];
  const labels = new Set(anchors.map(a => a.id));
  return anchors.map(anchor => {
    const wanted = "#equation-" + anchor.id;
    for (let node = anchor; node && node !== document.body; node = node.parentElement) {
      const others = [...node.querySelectorAll("[id]")].filter(e => e !== anchor && labels.has(e.id));
      if (others.length) break;
      const links = [...node.querySelectorAll("a[href]")].filter(a => a.href.endsWith(wanted));
      if (links.length) return {label: anchor.id, links: links.map(a => a.href)};
    }
    return {label: anchor.id, links: []};
  });
}"""


@pytest.fixture(scope="module")
def entries(new_page):
    page, report = new_page(INDEX)
    assert report.status == 200, f"{INDEX}: {report.url} answered {report.status}"
    return report, page.evaluate(ENTRIES)


def test_index_has_an_anchor_per_derivation(entries):
    report, found = entries
    assert len(found) > MIN_ENTRIES, (
        f"{INDEX} ({report.url}): {len(found)} elements with an id eq-..., expected more than {MIN_ENTRIES}")


def test_every_entry_links_to_its_equation(entries):
    report, found = entries
    unlinked = [entry["label"] for entry in found if not entry["links"]]
    assert not unlinked, (
        f"{INDEX} ({report.url}): entries with no link to #equation-<label>: {unlinked[:20]}"
        f"{' ...' if len(unlinked) > 20 else ''}")


def test_equation_links_land_on_the_equation(entries, visit, base_url):
    report, found = entries
    wrong = []
    for entry in found:
        for href in entry["links"]:
            parts = urlsplit(href)
            if f"{parts.scheme}://{parts.netloc}/" != base_url:
                wrong.append(f"{entry['label']}: {href} is not a page of the book")
                continue
            target = visit(unquote(parts.path).lstrip("/"))
            if target.status != 200:
                wrong.append(f"{entry['label']}: {href} answered {target.status}")
            elif unquote(parts.fragment) not in target.dom["equation_ids"]:
                wrong.append(f"{entry['label']}: {href} has no typeset equation with id {parts.fragment!r}")
    assert not wrong, f"{INDEX} ({report.url}): links that miss their equation:\n  " + "\n  ".join(wrong[:20])
