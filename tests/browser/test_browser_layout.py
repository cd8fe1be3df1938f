"""Tables on a desktop screen and on a phone, and how much a page loads.

At 1400 px no table is wider than the text column. On a phone (390 px) a table may be wider than
the column, but then it sits in its own box that scrolls sideways (its first column stays in
place, book.css), and no page scrolls sideways as a whole.
"""

from __future__ import annotations

import pytest
from browser_site import LAYOUT_SNAPSHOT, PAGE_BYTES, open_page, toc_pages

PAGES = toc_pages()
DESKTOP, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}
#: What a page of the book may load, all requests together (MathJax, the theme and its icon fonts,
#: the search index, figures, the page): about 2.0-2.2 MB, against 3.9 MB with the Font Awesome
#: script, MathJax's combined file and sphinx-thebe. The explorer carries plotly.js (4.8 MB).
BUDGET_BYTES = {"book/explorer.html": 8_000_000}
DEFAULT_BUDGET_BYTES = 2_500_000


@pytest.fixture(scope="module")
def layouts(browser_context, base_url):
    """{(path, width): layout} of every page at both widths, each page loaded once per width."""
    found = {}
    for path in PAGES:
        page, report = open_page(browser_context, base_url, path)
        try:
            for viewport in (DESKTOP, PHONE):
                page.set_viewport_size(viewport)
                page.wait_for_timeout(150)
                found[(path, viewport["width"])] = page.evaluate(LAYOUT_SNAPSHOT)
        finally:
            report.recording = False
            page.close()
    return found


@pytest.mark.parametrize("path", PAGES)
def test_no_table_is_wider_than_the_column_on_a_desktop(layouts, path):
    layout = layouts[(path, DESKTOP["width"])]
    wide = [f"table {t['index']} ({t['head']}): {t['width']} px" for t in layout["tables"] if t["wider"]]
    assert not wide, f"{path} at {DESKTOP['width']} px, column {layout['column']} px: {wide}"


@pytest.mark.parametrize("path", PAGES)
def test_wide_tables_scroll_in_their_own_box_on_a_phone(layouts, path):
    layout = layouts[(path, PHONE["width"])]
    clipped = [f"table {t['index']} ({t['head']}): {t['width']} px" for t in layout["tables"]
               if t["wider"] and not t["scroll_box"]]
    assert not clipped, (f"{path} at {PHONE['width']} px, column {layout['column']} px: tables wider "
                         f"than the column outside a scrolling box: {clipped}")
    assert layout["page_scroll_width"] <= layout["viewport"], (
        f"{path} at {PHONE['width']} px scrolls sideways: {layout['page_scroll_width']} px wide")


@pytest.mark.parametrize("path", PAGES)
def test_a_phone_shows_at_most_five_columns(layouts, path):
    """A table of more than five columns reads on a phone as one card per row (a line for each
    column: its label and its value), so no line of a table holds more than five cells."""
    layout = layouts[(path, PHONE["width"])]
    crowded = [f"table {t['index']} ({t['head']}): {t['side_by_side']} columns"
               for t in layout["tables"] if t["side_by_side"] > 5]
    assert not crowded, f"{path} at {PHONE['width']} px: {crowded}"
    # a desktop shows every table whole, a row on one line
    desktop = layouts[(path, DESKTOP["width"])]
    split = [f"table {t['index']} ({t['head']})" for t in desktop["tables"]
             if t["side_by_side"] != t["columns"]]
    assert not split, f"{path} at {DESKTOP['width']} px: rows not on one line: {split}"


@pytest.mark.parametrize("path", ["book/intro.html", "book/kv_cache.html", "book/explorer.html"])
def test_page_weight(browser_context, base_url, path):
    page, report = open_page(browser_context, base_url, path)
    try:
        page.wait_for_load_state("networkidle")
        entries = page.evaluate(PAGE_BYTES)
    finally:
        report.recording = False
        page.close()
    total = sum(e["bytes"] for e in entries)
    budget = BUDGET_BYTES.get(path, DEFAULT_BUDGET_BYTES)
    largest = sorted(entries, key=lambda e: -e["bytes"])[:5]
    assert total <= budget, (f"{path} loads {total:,} bytes (budget {budget:,}); largest: "
                             + ", ".join(f"{e['name'].rsplit('/', 1)[-1]} {e['bytes']:,}" for e in largest))
