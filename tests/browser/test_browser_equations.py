"""Display equations fit their column on a desktop and on a phone, and no page shows a raw label.

Each page of the table of contents is opened at a desktop (1400 px) and a phone (390 px) width. The
theme puts a numbered equation's number beside it and lets the equation's ``mjx-container`` scroll
sideways when it is too wide; a reader should never have to: the typeset formula must fit the room
the container has (long right-hand sides are broken into lines by the book's display forms).
"""

from __future__ import annotations

import re

import pytest
from browser_site import open_page, toc_pages

PAGES = toc_pages()
VIEWPORTS = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}
# A display equation may be this much wider than its room (sub-pixel rounding), in px.
SLACK = 1.0

# Every display equation that is laid out (not inside a closed dropdown): the width of the typeset
# formula, the room its container has, the equation's number or enclosing id, and its TeX.
DISPLAY_EQUATIONS = """() => {
  const startup = window.MathJax && MathJax.startup;
  const items = startup && startup.document ? startup.document : null;
  return [...document.querySelectorAll('mjx-container[display="true"]')]
    .filter(c => c.getClientRects().length > 0)
    .map(c => {
      const math = c.querySelector("mjx-math");
      const holder = c.closest("div.math") || c.parentElement;
      const number = holder && holder.querySelector(".eqno");
      let tex = "";
      try { tex = items ? (items.getMathItemsWithin(c)[0] || {}).math || "" : ""; } catch (e) {}
      return {
        id: (c.closest("[id]") || {}).id || "",
        number: number ? number.textContent.trim() : "",
        width: math ? math.getBoundingClientRect().width : 0,
        room: c.clientWidth,
        tex: tex.trim(),
      };
    });
}"""

# The page's visible prose: code, preformatted text and the derivation index's permalinks (whose
# point is the label) hidden for a moment.
VISIBLE_TEXT = """() => {
  const hide = document.createElement("style");
  hide.textContent = "pre, code, .derivation-label { display: none !important; }";
  document.head.appendChild(hide);
  const text = document.body.innerText;
  hide.remove();
  return text;
}"""

RAW_LABEL = re.compile(r"(?<![\w-])eq-[a-z0-9]+-[a-z0-9-]+")


@pytest.fixture(scope="module", params=list(VIEWPORTS), ids=list(VIEWPORTS))
def measured(request, browser_context, base_url):
    """{page: (report, equations, text)} of every page at one viewport."""
    viewport = VIEWPORTS[request.param]
    context = browser_context.browser.new_context(
        viewport=viewport, is_mobile=viewport["width"] < 600, has_touch=viewport["width"] < 600,
        service_workers="block")
    context.add_init_script("try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}")
    out = {}
    try:
        for path in PAGES:
            page, report = open_page(context, base_url, path)
            try:
                equations = page.evaluate(DISPLAY_EQUATIONS) if report.status == 200 else []
                text = page.evaluate(VISIBLE_TEXT) if report.status == 200 else ""
            finally:
                report.recording = False
                page.close()
            out[path] = (report, equations, text)
    finally:
        context.close()
    return request.param, out


def overflowing(equations) -> list[dict]:
    return [eq for eq in equations if eq["width"] > eq["room"] + SLACK]


def _describe(eq) -> str:
    where = eq["number"] or eq["id"] or "unnumbered"
    tex = eq["tex"][:90] + ("..." if len(eq["tex"]) > 90 else "")
    return f"{where}: {eq['width']:.0f} px in {eq['room']} px  {tex}"


def test_no_display_equation_is_wider_than_its_column(measured):
    name, pages = measured
    wide = {path: overflowing(equations) for path, (_, equations, _) in pages.items()}
    wide = {path: eqs for path, eqs in wide.items() if eqs}
    total = sum(len(equations) for _, equations, _ in pages.values())
    assert total > 100, f"{name}: only {total} display equations found on {len(pages)} pages"
    listing = "".join(f"\n{path} ({len(eqs)}):" + "".join(f"\n  {_describe(eq)}" for eq in eqs)
                      for path, eqs in wide.items())
    count = sum(len(eqs) for eqs in wide.values())
    assert not wide, (f"{name} ({VIEWPORTS[name]['width']} px): {count} of {total} display "
                      f"equations are wider than their column:{listing}")


def test_no_page_shows_a_raw_equation_label(measured):
    name, pages = measured
    leaks = {path: sorted(set(RAW_LABEL.findall(text))) for path, (_, _, text) in pages.items()}
    leaks = {path: labels for path, labels in leaks.items() if labels}
    assert not leaks, f"{name}: raw equation labels in the text of pages: {leaks}"
