"""The site's search (Sphinx's searchtools.js over searchindex.js) finds a topic's own chapter first.

Sphinx scores a page whose section titles hold every word of the query as highly as the page that
is about it, and breaks the tie alphabetically; a main index entry (``{index} ! term``) is what
puts the dedicated chapter first.
"""

from __future__ import annotations

import json
import re

import pytest

# query -> the page that is about it
DEDICATED = {"critical batch": "book/decode_roofline.html"}
GLOSSARY = "book/glossary.html"
RESULTS = """() => [...document.querySelectorAll("#search-results ul.search li a")]
  .map(a => a.getAttribute("href"))"""


def _search_index(site) -> dict:
    text = (site / "searchindex.js").read_text()
    return json.loads(re.fullmatch(r"Search\.setIndex\((.*)\)\s*", text, re.S).group(1))


@pytest.mark.parametrize("query, page", DEDICATED.items())
def test_the_dedicated_page_is_the_main_index_entry(site, query, page):
    index = _search_index(site)
    entries = index["indexentries"].get(query, [])
    main = [index["docnames"][file] + ".html" for file, _, is_main in entries if is_main]
    # the glossary's definition of the term is a main entry too, by Sphinx's design; the search
    # still ranks the chapter first (the next test)
    assert [m for m in main if m != GLOSSARY] == [page], \
        f"searchindex.js: main entries for {query!r}: {main}"


@pytest.mark.parametrize("query, page", DEDICATED.items())
def test_search_ranks_the_dedicated_page_first(new_page, query, page):
    tab, report = new_page(f"search.html?q={query.replace(' ', '+')}")
    assert report.status == 200
    # results are listed best first, one at a time: the first is final once it is there
    tab.wait_for_selector("#search-results ul.search li a", timeout=30_000)
    results = tab.evaluate(RESULTS)
    assert results, f"search for {query!r} found nothing"
    assert results[0].split("#")[0] == page, (
        f"search for {query!r}: first results {results[:5]}, expected {page} first")


@pytest.mark.parametrize("query", ["critical batch", "expert parallel"])
def test_search_snippets_show_no_raw_tex(new_page, query):
    """The snippets under the results are text, not the TeX source of the page's math."""
    tab, report = new_page(f"search.html?q={query.replace(' ', '+')}")
    assert report.status == 200
    tab.wait_for_selector("#search-results ul.search li p.context", timeout=30_000)
    tab.wait_for_timeout(1500)  # the first snippets, fetched page by page
    snippets = tab.evaluate("""() => [...document.querySelectorAll(
        "#search-results ul.search li p.context")].map(p => p.textContent)""")
    assert snippets, f"search for {query!r} shows no snippet"
    raw = [s for s in snippets if re.search(r"\\[()\[\]]|\\mathrm|\\frac", s)]
    assert not raw, f"search for {query!r}: snippets with TeX: {raw[:2]}"
