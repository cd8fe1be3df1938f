"""The built book (_build/html) served on 127.0.0.1 and opened in Debian's Chromium, headless.

One browser and one context for the whole session; each page is loaded once, in its own tab, and
everything the checks need is recorded while it loads (console errors, responses >= 400, requests
that tried to leave the machine) or read from its DOM once MathJax has finished.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest
from browser_site import CHROMIUM, CHROMIUM_ARGS, DOM_SNAPSHOT, HOST, ROOT, SITE, PageReport, open_page
from playwright.sync_api import sync_playwright


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built book at {SITE.relative_to(ROOT)}: run `make book` first "
                    "(`make test-browser` builds it when it is missing)")
    return SITE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="session")
def base_url(site):
    """http://127.0.0.1:<free port>/ serving the built book from a thread."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer((HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://{HOST}:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser_context():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test-browser` installs Debian's chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900},
                                      service_workers="block")
        # Every page is a reader's first visit, whatever the tests opened before it: what one page
        # stored (the theme's colour mode, say) must not hide another page's first-visit errors.
        context.add_init_script("try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}")
        yield context
        context.close()
        browser.close()


@pytest.fixture(scope="session")
def visit(browser_context, base_url):
    """``visit(path)``: the PageReport of a page of the site, each page loaded once per session."""
    reports: dict[str, PageReport] = {}

    def get(path: str) -> PageReport:
        if path not in reports:
            page, report = open_page(browser_context, base_url, path)
            try:
                report.dom = page.evaluate(DOM_SNAPSHOT)
            finally:
                report.recording = False
                page.close()
            reports[path] = report
        return reports[path]

    return get


@pytest.fixture(scope="session")
def new_page(browser_context, base_url):
    """``new_page(path)``: (page, report) of a freshly loaded tab that the test may interact with."""
    pages = []

    def make(path: str):
        page, report = open_page(browser_context, base_url, path)
        pages.append(page)
        return page, report

    yield make
    for page in pages:
        page.close()
