"""The built book on a phone: every page at 420 CSS px, in headless Chromium.

At that width no page scrolls sideways (wide tables and display equations scroll inside
their own box, long code names in headings wrap), and every figure of a chapter links to
its image at full size. The reproduction report has its own layout and its own test
(``test_report_browser.py``), so it is left out here. Builds, server and browser as in
``test_book_browser.py`` (the fixtures of ``tests/browsing.py``); each page is opened once at that width
and both checks read that opening.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browsing import PHONE
from test_book_browser import PAGES

pytestmark = pytest.mark.browser

NARROW = PHONE.size[0]  # 420 CSS px: a phone held upright
NARROW_PAGES = [p for p in PAGES if p != "book/reproduction"]

# the page's width against the window's, and the elements that stick out (not inside a box that scrolls)
OVERFLOW = """
const width = document.documentElement.clientWidth;
const scrolls = (el) => { for (let e = el.parentElement; e; e = e.parentElement) {
  const s = getComputedStyle(e); if (['auto', 'scroll', 'hidden'].includes(s.overflowX)) return true; } return false; };
const out = Array.from(document.querySelectorAll('article *')).filter((el) => {
  const r = el.getBoundingClientRect(); return r.width > 0 && r.right > width + 1 && !scrolls(el); });
return {scroll: document.documentElement.scrollWidth, width: width,
        out: out.slice(0, 5).map((el) => el.tagName + '.' + el.className + ': ' + (el.textContent || '').slice(0, 60))};
"""
FIGURE_LINKS = """
return Array.from(document.querySelectorAll('article figure img'))
  .filter((im) => !(im.closest('a') && im.closest('a').getAttribute('href'))).map((im) => im.getAttribute('src'));
"""

PHONE.probe("overflow")(lambda driver, page: driver.execute_script(OVERFLOW))
PHONE.probe("unlinked figures")(lambda driver, page: driver.execute_script(FIGURE_LINKS))


@pytest.mark.parametrize("page", NARROW_PAGES)
def test_no_page_scrolls_sideways_on_a_phone(page: str, built_book: Path, views):
    info = views.get(page, PHONE)["overflow"]  # read once MathJax has typeset the page
    assert info["scroll"] <= info["width"] + 1 and not info["out"], (
        f"{page} at {NARROW} px: page {info['scroll']} px wide for a {info['width']} px window; "
        f"sticking out: {info['out']}")


@pytest.mark.parametrize("page", NARROW_PAGES)
def test_figures_open_full_size(page: str, built_book: Path, views):
    unlinked = views.get(page, PHONE)["unlinked figures"]
    assert not unlinked, f"{page}: figures without a link to their full-size image: {unlinked}"
