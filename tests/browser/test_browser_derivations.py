"""The derivation index (book/derivations.md): every entry links to its numbered equation."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pytest
import yaml
from browser_site import ROOT

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


# For each part section of the index (an <h2> section of the article): its heading, its id, the
# labels of the entries inside it and the pages that number them; and the targets of
# the page's contents sidebar and of the in-page contents list.
PARTS = """() => {
  const article = document.querySelector("article") || document.body;
  const sections = [...article.querySelectorAll("section")].filter(s => s.querySelector(":scope > h2"));
  const inside = new Set();
  const parts = sections.map(s => {
    const labels = [...s.querySelectorAll('[id^="eq-"]')].map(a => a.id);
    labels.forEach(l => inside.add(l));
    // the pages that number the part's own equations (an entry's text may cite another part's)
    const pages = labels.flatMap(l => [...s.querySelectorAll(`a[href$="#equation-${l}"]`)])
      .map(a => new URL(a.href).pathname.split("/").pop());
    return {id: s.id, heading: s.querySelector(":scope > h2").textContent.replace("#", "").trim(),
            labels, pages};
  });
  const all = [...article.querySelectorAll('[id^="eq-"]')].map(a => a.id);
  const hrefs = selector => [...document.querySelectorAll(selector)]
    .map(a => a.getAttribute("href")).filter(h => h && h.startsWith("#")).map(h => h.slice(1));
  return {parts, outside: all.filter(l => !inside.has(l)),
          sidebar: hrefs("#pst-page-toc-nav a[href]"),
          contents: hrefs("article nav.contents a[href]")};
}"""


def _toc_parts():
    """(caption, {chapter page}) of each part of _toc.yml, read here independently."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [(part.get("caption", ""), {ch["file"].split("/")[-1] + ".html"
                                       for ch in part.get("chapters", [])})
            for part in toc["parts"]]


@pytest.fixture(scope="module")
def parts(new_page):
    page, report = new_page(INDEX)
    assert report.status == 200, f"{INDEX}: {report.url} answered {report.status}"
    return report, page.evaluate(PARTS)


def test_index_is_grouped_by_the_parts_of_the_book(parts):
    report, found = parts
    toc = _toc_parts()
    captions = [caption for caption, _ in toc]
    headings = [part["heading"] for part in found["parts"]]
    assert headings, f"{INDEX} ({report.url}): no part sections (<h2>)"
    assert all(h in captions for h in headings), (
        f"{INDEX}: part headings {headings} are not all captions of _toc.yml {captions}")
    assert headings == sorted(set(headings), key=captions.index), (
        f"{INDEX}: part headings out of the book's order or repeated: {headings}")
    assert not found["outside"], f"{INDEX}: entries in no part: {found['outside'][:10]}"
    pages_of = dict(toc)
    for part in found["parts"]:
        assert part["labels"], f"{INDEX}: part {part['heading']!r} has no entry"
        strays = sorted(set(part["pages"]) - pages_of[part["heading"]])
        assert not strays, (f"{INDEX}: part {part['heading']!r} holds equations numbered in "
                            f"chapters of another part: {strays}")


def test_index_contents_lead_to_every_part(parts):
    report, found = parts
    ids = [part["id"] for part in found["parts"]]
    for where in ("sidebar", "contents"):
        missing = [i for i in ids if i not in found[where]]
        assert not missing, f"{INDEX} ({report.url}): the page's {where} has no link to {missing}"
