"""What the browser tests share: the quick build served on 127.0.0.1, one headless Chromium, each page opened once.

``tests/conftest.py`` makes :func:`built_book`, :func:`server`, :func:`browser` and :func:`views` the fixtures
of every test module, so the session has one HTTP server and one Chromium per test process (and with
``--dist loadgroup`` the browser tests all run in one process: ``tests/conftest.py`` puts them in one group).

Opening a page and waiting for MathJax is what a browser test costs, so the tests that read the same page at
the same window size read one opening of it: a test module registers a *probe* (a function of the driver
and the page's name, run after the page has loaded and MathJax has typeset it) with
:meth:`Window.probe`, and :meth:`Views.get` opens a page at a window size once, runs every probe
registered for that size and keeps what they returned.  Probes only read the page (scripts that clone what
they inspect), so their order does not matter.

Under ``CI=true`` a missing browser or a missing build is a failure; elsewhere the tests are skipped with
the reason (:func:`builds.unavailable`).
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from builds import HTML, unavailable

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

WAIT_FOR_MATHJAX = """
const done = arguments[arguments.length - 1];
const finish = () => done(window.MathJax && MathJax.startup ? 'typeset' : 'no-mathjax');
if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(finish, (e) => done('error: ' + e));
} else if (document.readyState !== 'complete') {
  window.addEventListener('load', () => setTimeout(() => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(finish, (e) => done('error: ' + e));
    } else { finish(); }
  }, 0));
} else { finish(); }
"""

Probe = Callable[[Any, str], Any]


class Window:
    """A window size and the probes registered for it (name -> function of the driver and the page)."""

    def __init__(self, width: int, height: int):
        self.size = (width, height)
        self.probes: dict[str, Probe] = {}

    def probe(self, name: str) -> Callable[[Probe], Probe]:
        """Register ``fn(driver, page)`` under ``name``: its value is ``views.get(page, window)[name]``."""
        def register(fn: Probe) -> Probe:
            if self.probes.setdefault(name, fn) is not fn:
                raise ValueError(f"a probe named {name!r} is already registered for {self.size}")
            return fn
        return register


#: the session browser's own size (a laptop screen); every test leaves the window at this size
DESKTOP = Window(1280, 1000)
#: a phone held upright (tests/test_book_narrow.py)
PHONE = Window(420, 900)


class Views:
    """Each page opened once per window: ``{"mathjax": MathJax's state, probe name: value, ...}``."""

    def __init__(self, browser, server: str):
        self.browser, self.server = browser, server
        self._seen: dict[tuple[str, tuple[int, int]], dict] = {}

    def get(self, page: str, window: Window = DESKTOP) -> dict:
        key = (page, window.size)
        if key not in self._seen:
            self._seen[key] = self._open(page, window)
        return self._seen[key]

    def _open(self, page: str, window: Window) -> dict:
        b = self.browser
        if window.size != DESKTOP.size:
            b.set_window_size(*window.size)
        try:
            b.get(f"{self.server}/{page}.html")
            view = {"mathjax": b.execute_async_script(WAIT_FOR_MATHJAX)}
            view |= {name: fn(b, page) for name, fn in window.probes.items()}
        finally:
            if window.size != DESKTOP.size:
                b.set_window_size(*DESKTOP.size)
        return view


# --------------------------------------------------------------------------- #
# fixtures (made every module's by tests/conftest.py)
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="session")
def built_book() -> Path:
    if not (HTML / "index.html").is_file():
        unavailable(f"no built book in {HTML}: run `make book QUICK=1` (make test does)")
    return HTML


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def server(built_book: Path):
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        unavailable(
            f"{CHROMIUM} or {CHROMEDRIVER} missing: apt-get install chromium chromium-driver"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager: never download
    profile = tempfile.mkdtemp(prefix="ldp-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-quic",
        "--no-first-run",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--window-size={},{}".format(*DESKTOP.size),
        f"--user-data-dir={profile}",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(120)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def views(browser, server) -> Views:
    return Views(browser, server)
