"""The interactive frontier explorer (book/explorer.md): it draws, answers a hover and a legend click."""

from __future__ import annotations

import pytest
from browser_site import FIGURES
from playwright.sync_api import TimeoutError as PlaywrightTimeout

EXPLORER = "book/explorer.html"
GRAPH = "#frontier-explorer"

# Viewport position of a data point in the middle of the first visible trace, from plotly's own
# axis conversions (calcdata holds each point in calc coordinates; c2p maps them to pixels).
POINT_ON_SCREEN = """(selector) => {
  const gd = document.querySelector(selector);
  const index = gd._fullData.findIndex(t => t.visible === true);
  if (index < 0 || !gd.calcdata[index]) return null;
  const points = gd.calcdata[index].filter(p => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (!points.length) return null;
  const point = points[Math.floor(points.length / 2)];
  const trace = gd._fullData[index];
  const xa = gd._fullLayout[trace.xaxis.replace("x", "xaxis")];
  const ya = gd._fullLayout[trace.yaxis.replace("y", "yaxis")];
  const box = gd.getBoundingClientRect();
  return {trace: index, name: trace.name,
          x: box.left + xa._offset + xa.c2p(point.x), y: box.top + ya._offset + ya.c2p(point.y)};
}"""

# The trace behind the first legend toggle: d3 keeps each legend item's datum on its element.
FIRST_LEGEND_TRACE = """(selector) => {
  const toggle = document.querySelector(selector + " .legendtoggle");
  return toggle ? toggle.parentNode.__data__[0].trace.index : null;
}"""


@pytest.fixture(scope="module")
def explorer(new_page):
    return new_page(EXPLORER)


def _drawn(explorer):
    """The explorer page with its graph drawn and in view."""
    page, report = explorer
    status = report.status
    assert status == 200, f"{EXPLORER}: {report.url} answered {status}"
    try:
        page.locator(f"{GRAPH} .main-svg").first.wait_for(state="visible", timeout=20_000)
    except PlaywrightTimeout:
        pytest.fail(f"{EXPLORER} ({report.url}): no {GRAPH} .main-svg drawn within 20 s")
    page.locator(GRAPH).scroll_into_view_if_needed()
    return page, report


def test_explorer_draws_several_frontiers(explorer):
    page, report = _drawn(explorer)
    assert page.locator(f"{GRAPH}.plotly-graph-div").count() == 1, (
        f"{EXPLORER} ({report.url}): {GRAPH} is not a plotly graph div")
    traces = page.evaluate(f"document.querySelector('{GRAPH}').data.length")
    assert traces > 1, f"{EXPLORER} ({report.url}): {traces} trace(s), expected one per setting"
    drawn = page.locator(f"{GRAPH} .scatterlayer .trace").count()
    assert drawn > 1, f"{EXPLORER} ({report.url}): {drawn} trace(s) drawn of {traces}"
    errors = report.console_errors + report.page_errors + report.bad_responses + report.offsite_requests
    assert not errors, f"{EXPLORER} ({report.url}): {errors}"
    plotly = page.evaluate("[...document.scripts].map(s => s.src).filter(s => /plotly/i.test(s))")
    static = report.url.removesuffix(EXPLORER) + "_static/"
    assert plotly and all(src.startswith(static) for src in plotly), (
        f"{EXPLORER} ({report.url}): plotly.js is not a file of the book's _static/: {plotly}")
    FIGURES.mkdir(exist_ok=True)
    page.screenshot(path=FIGURES / "browser-explorer.png")


def test_explorer_hover_shows_the_configuration(explorer):
    page, report = _drawn(explorer)
    point = page.evaluate(POINT_ON_SCREEN, GRAPH)
    assert point, f"{EXPLORER} ({report.url}): no visible trace with a finite point to hover"
    # Two moves: plotly reacts to mousemove on its drag layer, not to the arrival of the pointer.
    page.mouse.move(point["x"] - 5, point["y"] - 5)
    page.mouse.move(point["x"], point["y"])
    label = page.locator(f"{GRAPH} .hoverlayer .hovertext").first
    try:
        label.wait_for(state="attached", timeout=5_000)
    except PlaywrightTimeout:
        pytest.fail(f"{EXPLORER} ({report.url}): no hover label at the middle point of trace "
                    f"{point['name']!r} ({point['x']:.0f}, {point['y']:.0f})")
    text = label.text_content()
    assert "GPUs" in text, (
        f"{EXPLORER} ({report.url}): hover on trace {point['name']!r} shows {text!r}, no 'GPUs'")
    page.mouse.move(0, 0)


def test_explorer_legend_click_hides_a_trace(explorer):
    page, report = _drawn(explorer)
    index = page.evaluate(FIRST_LEGEND_TRACE, GRAPH)
    assert index is not None, f"{EXPLORER} ({report.url}): the graph has no legend toggle"
    before = page.locator(f"{GRAPH} .scatterlayer .trace").count()
    page.locator(f"{GRAPH} .legendtoggle").first.click()
    # plotly waits out its double-click delay before it applies a single click
    hidden = f"document.querySelector('{GRAPH}').data[{index}].visible === 'legendonly'"
    try:
        page.wait_for_function(hidden, timeout=5_000)
    except PlaywrightTimeout:
        pytest.fail(f"{EXPLORER} ({report.url}): after a click on the first legend item, trace {index} "
                    "is not 'legendonly'")
    after = page.locator(f"{GRAPH} .scatterlayer .trace").count()
    assert after == before - 1, (
        f"{EXPLORER} ({report.url}): legend click on trace {index} left {after} of {before} drawn")
