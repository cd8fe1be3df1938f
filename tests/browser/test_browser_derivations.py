"""The derivation index (book/derivations.md): every entry links to its numbered equation."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pytest

INDEX = "book/derivations.html"
MIN_ENTRIES = 100

# For each derivation label on the page, the links to #equation-<label> in its entry: the label's
# anchor element, or the largest element around it that holds no other label, and the siblings
# that follow it up to the next label.
ENTRIES = """() => {
  const anchors = [...document.querySelectorAll('[id^="eq-"]')];
  const labels = new Set(anchors.map(a => a.id));
  const hasLabel = (node, except) =>
    (node !== except && labels.has(node.id)) ||
    [...node.querySelectorAll("[id]")].some(e => e !== except && labels.has(e.id));
  return anchors.map(anchor => {
    const wanted = "#equation-" + anchor.id;
    const linksIn = node => [...node.querySelectorAll("a[href]")]
      .concat(node.matches("a[href]") ? [node] : [])
      .filter(a => a.href.endsWith(wanted)).map(a => a.href);
    let node = anchor;
    while (node.parentElement && node.parentElement !== document.body
           && !hasLabel(node.parentElement, anchor)) {
      node = node.parentElement;
    }
    const links = linksIn(node);
    for (let next = node.nextElementSibling; next && !hasLabel(next, null); next = next.nextElementSibling) {
      links.push(...linksIn(next));
    }
    return {label: anchor.id, links: links};
  });
}"""


@pytest.fixture(scope="module")
def entries(new_page):
    page, report = new_page(INDEX)
    return report, page.evaluate(ENTRIES) if report.status == 200 else []


def _checked(entries):
    report, found = entries
    status = report.status
    assert status == 200, f"{INDEX}: {report.url} answered {status}"
    assert found, f"{INDEX} ({report.url}): no element with an id eq-..."
    return report, found


def test_index_has_an_anchor_per_derivation(entries):
    report, found = _checked(entries)
    assert len(found) > MIN_ENTRIES, (
        f"{INDEX} ({report.url}): {len(found)} elements with an id eq-..., expected more than {MIN_ENTRIES}")


def test_every_entry_links_to_its_equation(entries):
    report, found = _checked(entries)
    unlinked = [entry["label"] for entry in found if not entry["links"]]
    assert not unlinked, (
        f"{INDEX} ({report.url}): entries with no link to #equation-<label>: {unlinked[:20]}"
        f"{' ...' if len(unlinked) > 20 else ''}")


def test_equation_links_land_on_the_equation(entries, visit, base_url):
    report, found = _checked(entries)
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
