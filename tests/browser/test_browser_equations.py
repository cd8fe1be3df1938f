"""Display equations fit their column on a desktop and on a phone, and no page shows a raw label.

Each page of the table of contents is opened at a desktop (1400 px), a phone (390 px) and a narrow
desktop (740 px) width, the last where an equation set on one line for a wide column has the least
room. The
theme puts a numbered equation's number beside it and lets the equation's ``mjx-container`` scroll
sideways when it is too wide; a reader should never have to: the typeset formula must fit the room
the container has (long right-hand sides are broken into lines by the book's display forms).
"""

from __future__ import annotations

import re

import pytest
from browser_site import open_page, toc_pages

PAGES = toc_pages()
# "narrow desktop": a text column of about 708 px, just above the 700 px from which an equation
# broken for a phone is shown on one line (book.css, inference_math.book.sphinx_math_widths).
VIEWPORTS = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844},
             "narrow desktop": {"width": 740, "height": 900}}
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
        // which rendering of a two-width equation this is (sphinx_math_widths), if it is one
        form: c.closest(".math-wide") ? "one line" : c.closest(".math-narrow") ? "broken" : "",
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


# Equations shown on one line where the column has room (inference_math.book.sphinx_math_widths):
# many on a desktop, none on a phone.
ONE_LINE_AT_LEAST = {"desktop": 40, "phone": 0, "narrow desktop": 1}


def test_a_wide_column_shows_equations_on_one_line_a_phone_broken(measured):
    name, pages = measured
    forms = [eq["form"] for _, equations, _ in pages.values() for eq in equations]
    one_line = forms.count("one line")
    if name == "phone":
        assert one_line == 0, f"{name}: {one_line} equations shown on one line on a phone"
        assert forms.count("broken") > 0, f"{name}: no two-width equation shown broken"
    else:
        assert one_line >= ONE_LINE_AT_LEAST[name], (
            f"{name}: only {one_line} two-width equations shown on one line")
