"""Every page of the table of contents, as Chromium renders it from the built book."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

import pytest
from browser_site import FIGURES, RAW_TEX, SITE, toc_pages

PAGES = toc_pages()
LANDING = "book/intro.html"


def _listing(items, limit=10) -> str:
    items = list(items)
    more = f"\n  ... and {len(items) - limit} more" if len(items) > limit else ""
    return "".join(f"\n  {item}" for item in items[:limit]) + more


def test_toc_lists_the_pages_checked():
    assert LANDING in PAGES and len(PAGES) == len(set(PAGES)) > 20, PAGES


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_without_console_errors(visit, path):
    report = visit(path)
    status = report.status
    assert status == 200, f"{path}: {report.url} answered {status}"
    errors = report.console_errors + [f"uncaught: {e}" for e in report.page_errors]
    assert not errors, f"{path} ({report.url}) logged errors:{_listing(errors)}"


@pytest.mark.parametrize("path", PAGES)
def test_page_requests_nothing_missing(visit, path):
    report = visit(path)
    missing = report.bad_responses + report.failed_requests
    assert not missing, f"{path} ({report.url}): images, scripts or styles that failed:{_listing(missing)}"


@pytest.mark.parametrize("path", PAGES)
def test_page_works_offline(visit, path):
    report = visit(path)
    assert not report.offsite_requests, (
        f"{path} ({report.url}) requested other hosts (blocked; the book must work offline):"
        f"{_listing(report.offsite_requests)}")


def _internal_target(href: str, base_url: str):
    """(file path relative to the site, fragment) of a link to the local server, else None."""
    parts = urlsplit(href)
    if f"{parts.scheme}://{parts.netloc}/" != base_url:
        return None
    path = unquote(parts.path).lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path, unquote(parts.fragment)


@pytest.mark.parametrize("path", PAGES)
def test_internal_links_resolve(visit, base_url, site, path):
    report = visit(path)
    broken = []
    for href in sorted(set(report.dom["links"])):
        target = _internal_target(href, base_url)
        if target is None:
            continue  # another host: not followed
        file, fragment = target
        if not (site / file).is_file():
            broken.append(f"{href}: no file {file}")
        elif fragment and PurePosixPath(file).suffix == ".html":
            if fragment not in visit(file).dom["ids"]:
                broken.append(f"{href}: {file} has no element with id {fragment!r}")
    assert not broken, f"{path} ({report.url}) has broken links:{_listing(broken)}"


def _raw_tex(text: str) -> list[str]:
    found = []
    for token in RAW_TEX:
        start = text.find(token)
        while start >= 0:
            found.append(f"{token!r} in ...{text[max(0, start - 40):start + 40]!r}...")
            start = text.find(token, start + 1)
    return found


@pytest.mark.parametrize("path", PAGES)
def test_math_is_typeset(visit, path):
    report = visit(path)
    dom = report.dom
    if dom["math_elements"]:
        assert report.mathjax == "done", f"{path} ({report.url}) has math but MathJax is {report.mathjax}"
        assert dom["mjx_containers"] > 0, f"{path} ({report.url}): math, yet no mjx-container"
        assert not dom["untypeset"], (
            f"{path} ({report.url}): math elements MathJax left alone:{_listing(dom['untypeset'])}")
        assert not dom["mjx_errors"], f"{path} ({report.url}): TeX errors:{_listing(dom['mjx_errors'])}"
    raw = _raw_tex(dom["text"])
    assert not raw, f"{path} ({report.url}) shows TeX source in its text:{_listing(raw)}"


@pytest.mark.parametrize("path", PAGES)
def test_every_figure_has_its_image(visit, path):
    report = visit(path)
    empty = [image["src"] for image in report.dom["images"] if image["width"] <= 0]
    assert not empty, f"{path} ({report.url}): images that did not render:{_listing(empty)}"
    assert not report.dom["figures_without_image"], (
        f"{path} ({report.url}): figures with no image:{_listing(report.dom['figures_without_image'])}")


def test_landing_page_screenshot(new_page):
    page, report = new_page(LANDING)
    status = report.status
    assert status == 200, f"{LANDING}: {report.url} answered {status}"
    assert page.locator("article h1").count() >= 1, f"{LANDING} ({report.url}) has no title"
    FIGURES.mkdir(exist_ok=True)
    page.screenshot(path=FIGURES / "browser-landing.png")
    assert (FIGURES / "browser-landing.png").stat().st_size > 10_000


# A code cell whose last line is a value (a glue call returns its number) prints it as plain text
# under the cell; the chapters show tables, figures and markdown, never a bare value.
STRAY = re.compile(r'<div class="output text_plain[^"]*"><div class="highlight">'
                   r"<pre><span></span>(.*?)</pre>", re.S)


def _stray_outputs(html: str) -> list[str]:
    return [text.strip()[:60] for text in STRAY.findall(html)]


def test_a_stray_output_is_found():
    html = ('<div class="output text_plain highlight-myst-ansi notranslate"><div class="highlight">'
            '<pre><span></span>1.0200868526155182\n</pre></div></div>')
    assert _stray_outputs(html) == ["1.0200868526155182"]


@pytest.mark.parametrize("path", PAGES)
def test_no_chapter_prints_a_stray_value(path):
    stray = _stray_outputs((SITE / path).read_text(encoding="utf-8"))
    assert not stray, f"{path}: a code cell prints a bare value:{_listing(stray)}"
