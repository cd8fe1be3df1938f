"""What the browser tests share: where the site is, how Chromium is launched, how a page is read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
FIGURES = ROOT / "figures"
CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps calling Google services, which the
# closed network of CI answers with nothing but timeouts.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOST = "127.0.0.1"
# Everything but the local server (data: and blob: URLs never reach the network).
OFFSITE = re.compile(r"^(?!https?://127\.0\.0\.1[:/]|data:|blob:)")
MATHJAX_TIMEOUT_MS = 30_000
RAW_TEX = ("$$", "\\(", "\\[", "\\begin{")


def _toc_files(node):
    if isinstance(node, list):
        for item in node:
            yield from _toc_files(item)
    elif isinstance(node, dict):
        if "file" in node:
            yield node["file"]
        for key in ("parts", "chapters", "sections"):
            yield from _toc_files(node.get(key, []))


def toc_pages() -> list[str]:
    """The HTML page of the root and of every file in _toc.yml, in reading order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [f"{name}.html" for name in [toc["root"], *_toc_files(toc.get("parts", toc.get("chapters", [])))]]


@dataclass
class PageReport:
    """What one page did while loading, and what its DOM holds once MathJax is done."""

    path: str
    url: str
    status: int | None = None
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    bad_responses: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    offsite_requests: list[str] = field(default_factory=list)
    mathjax: str = "absent"
    dom: dict = field(default_factory=dict)
    #: False once the page's checks are read, so that its closing (aborted requests) is not recorded
    recording: bool = True


# Read once MathJax is done. Visible text: body.innerText with <pre>/<code> hidden for a moment.
DOM_SNAPSHOT = """() => {
  const article = document.querySelector("article") || document.body;
  const math = [...document.querySelectorAll(".math")];
  const hide = document.createElement("style");
  hide.textContent = "pre, code { display: none !important; }";
  document.head.appendChild(hide);
  const text = document.body.innerText;
  hide.remove();
  return {
    title: document.title,
    images: [...article.querySelectorAll("img")].map(img => ({
      src: img.currentSrc || img.src, width: img.naturalWidth})),
    figures_without_image: [...article.querySelectorAll("figure")]
      .filter(f => !f.querySelector("img, svg, canvas, object, .plotly-graph-div"))
      .map(f => f.id || f.textContent.trim().slice(0, 60)),
    links: [...document.querySelectorAll("a[href]")].map(a => a.href),
    ids: [...document.querySelectorAll("[id]")].map(e => e.id),
    equation_ids: [...document.querySelectorAll('[id^="equation-"]')]
      .filter(e => e.matches(".math") && e.querySelector("mjx-container")).map(e => e.id),
    math_elements: math.length,
    untypeset: math.filter(m => !m.querySelector("mjx-container"))
      .map(m => m.textContent.trim().slice(0, 80)),
    mjx_containers: document.querySelectorAll("mjx-container").length,
    mjx_errors: [...document.querySelectorAll("mjx-merror, [data-mjx-error]")]
      .map(e => e.getAttribute("data-mjx-error") || e.textContent.slice(0, 80)),
    text: text,
  };
}"""

MATH_WIDTHS_FITTED = """() => !document.querySelector("div.math-widths")
  || document.documentElement.dataset.mathWidths === 'fitted'"""

# Resolves to "done", "absent" (the page loads no MathJax) or "timeout".
MATHJAX_DONE = """async (timeout) => {
  if (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)) {
    return window.MathJax ? "not started" : "absent";
  }
  const timer = new Promise(resolve => setTimeout(() => resolve("timeout"), timeout));
  const typeset = window.MathJax.startup.promise.then(() => document.fonts.ready).then(() => "done");
  return Promise.race([typeset, timer]);
}"""


def open_page(context, base: str, path: str):
    """A new tab on ``base + path``, loaded, with MathJax finished; returns (page, report).

    Requests that leave 127.0.0.1 are recorded in the report and aborted.
    """
    report = PageReport(path=path, url=base + path)
    page = context.new_page()

    def on_console(msg):
        if report.recording and msg.type == "error":
            where = msg.location.get("url", "") if msg.location else ""
            report.console_errors.append(f"{msg.text} [{where}]")

    def on_page_error(error):
        if report.recording:
            report.page_errors.append(str(error))

    def on_response(response):
        if report.recording and response.status >= 400:
            report.bad_responses.append(f"{response.status} {response.url}")

    def on_request_failed(request):
        if report.recording and not OFFSITE.match(request.url):
            report.failed_requests.append(f"{request.failure} {request.url}")

    def offsite(route):
        report.offsite_requests.append(route.request.url)
        route.abort()

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    page.on("response", on_response)
    page.on("requestfailed", on_request_failed)
    page.route(OFFSITE, offsite)
    response = page.goto(report.url, wait_until="load")
    report.status = response.status if response else None
    report.mathjax = page.evaluate(MATHJAX_DONE, MATHJAX_TIMEOUT_MS)
    if report.mathjax == "done":
        # an equation with a one-line and a broken form is shown in the one that fits once the
        # page's script has measured it (inference_math.book.sphinx_math_widths)
        page.wait_for_function(MATH_WIDTHS_FITTED, timeout=MATHJAX_TIMEOUT_MS)
    return page, report




# Tables and figures against the text column, read at one viewport width: every table that is wider
# than its column, whether it sits in a box that scrolls sideways, and whether the page itself
# scrolls sideways.
LAYOUT_SNAPSHOT = """() => {
  const article = document.querySelector("article.bd-article") || document.querySelector("article")
    || document.body;
  const column = article.getBoundingClientRect();
  const root = document.scrollingElement || document.documentElement;
  const scrolls = el => {
    for (let box = el.parentElement; box && box !== article; box = box.parentElement) {
      const style = getComputedStyle(box);
      if (["auto", "scroll"].includes(style.overflowX)) {
        return box.getBoundingClientRect().width <= column.width + 1;
      }
    }
    return false;
  };
  const tables = [...article.querySelectorAll("table")].map((table, index) => {
    const box = table.getBoundingClientRect();
    const head = [...table.querySelectorAll("th")].map(th => th.textContent.trim()).slice(0, 3);
    // cells shown side by side on one line of a row (a phone's cards show one per line)
    const rows = [...table.querySelectorAll("tr")].slice(0, 20);
    const side_by_side = Math.max(0, ...rows.map(row => {
      const shown = [...row.children].map(cell => cell.getBoundingClientRect())
        .filter(r => r.width > 0 && r.height > 0);
      return shown.length ? shown.filter(r => Math.abs(r.top - shown[0].top) < 2).length : 0;
    }));
    return {index, head: head.join(" | "), width: Math.round(box.width),
            wider: box.width > column.width + 1, scroll_box: scrolls(table), side_by_side,
            columns: Math.max(0, ...rows.map(row => row.children.length))};
  });
  return {column: Math.round(column.width), viewport: window.innerWidth,
          page_scroll_width: root.scrollWidth, tables};
}"""

# Bytes of every resource of a page load (the page itself included), from the browser's own
# accounting: for a local server the body sizes.
PAGE_BYTES = """() => {
  const entries = [...performance.getEntriesByType("navigation"),
                   ...performance.getEntriesByType("resource")];
  return entries.map(e => ({name: e.name, bytes: e.decodedBodySize || e.encodedBodySize || 0}));
}"""
