"""Every figure of the built book is readable on a phone: its tick labels at least 8 CSS px at 390 px.

Headless Chromium emulates a phone held upright (390 × 844 CSS px, as an iPhone 12-15), opens every
page and measures, for each figure's image as the page shows it (the file the browser chose, at the
width it is drawn), the size in CSS px of every text of the SVG: the image's file is parsed and laid
out at the image's drawn width, and a text's size is its font size times the scale from the SVG's
units to the screen (``getScreenCTM``).  Tick labels (the texts of matplotlib's ``xtick_N`` and
``ytick_N`` groups) must be at least :data:`MIN_PX`; so must every other text of a figure (titles,
axis labels, legends).  A glyph drawn smaller than the rest of its text is a sub- or superscript of math
(``d'``, ``I_{a_1}``): it must be at least :data:`SCRIPT_PX`, the share of the text's size mathtext gives it.
A reader who taps a figure gets its full-size image (``test_book_narrow.py``).
Builds, server and browser as in ``test_book_browser.py`` (whose fixtures these tests use).
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from test_book_browser import PAGES, WAIT_FOR_MATHJAX, browser, built_book, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

PHONE = (390, 844)  # CSS px, a phone held upright
MIN_PX = 8.0  # the smallest readable text, CSS px
SCRIPT_PX = 0.7 * MIN_PX  # a sub- or superscript of math (matplotlib's mathtext draws them at 70 %, nested 49 %)

# For each figure image of the article: the drawn width and, per text of the SVG file the browser shows,
# its size in CSS px; tick labels apart.  Runs asynchronously (fetches the image files from the server).
MEASURE = """
const done = arguments[arguments.length - 1];
(async () => {
  const out = [];
  for (const img of document.querySelectorAll('article figure img')) {
    const src = img.currentSrc || img.src;
    const fig = img.closest('figure');
    const rect = img.getBoundingClientRect();
    const row = {figure: fig.id || '', src: src.split('/').pop(), width: rect.width,
                 viewport: document.documentElement.clientWidth};
    if (!/\\.svg([?#].*)?$/.test(src)) { out.push(Object.assign(row, {skipped: 'not an SVG'})); continue; }
    const doc = new DOMParser().parseFromString(await (await fetch(src)).text(), 'image/svg+xml');
    const svg = document.importNode(doc.documentElement, true);
    svg.setAttribute('width', rect.width);
    svg.setAttribute('height', rect.height);
    const box = document.createElement('div');
    box.style.cssText = 'position:absolute;left:0;top:0;visibility:hidden;pointer-events:none;width:'
      + rect.width + 'px';
    box.appendChild(svg);
    document.body.appendChild(box);
    const ticks = [], others = [], scripts = [];
    const px = (t) => {
      const m = t.getScreenCTM();
      return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    };
    const own = (t) => Array.from(t.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    for (const text of svg.querySelectorAll('text')) {
      const items = [text, ...text.querySelectorAll('tspan')].filter(own)
        .map((t) => ({text: t.textContent.trim().slice(0, 30), px: px(t)}));
      const base = Math.max(...items.map((i) => i.px));
      const tick = text.closest('g[id^="xtick_"], g[id^="ytick_"]');
      for (const item of items) {  // a glyph smaller than its text's own size: a sub- or superscript of math
        (item.px < 0.95 * base ? scripts : tick ? ticks : others).push(item);
      }
    }
    box.remove();
    const least = (xs) => xs.reduce((a, b) => (b.px < a.px ? b : a), {text: '', px: Infinity});
    out.push(Object.assign(row, {ticks: ticks.length, tick: least(ticks), text: least(others),
                                 script: least(scripts)}));
  }
  done(out);
})().catch((e) => done([{error: String(e)}]));
"""


def measure_figures(browser, url: str) -> list[dict]:  # noqa: F811  (the fixture of test_book_browser)
    """The measurements of :data:`MEASURE` for every figure on the page at ``url``."""
    browser.get(url)
    browser.execute_async_script(WAIT_FOR_MATHJAX)
    return browser.execute_async_script(MEASURE)


def _px(item: dict) -> float:
    """A measured size; none measured (JSON has no Infinity: null) is no limit."""
    return math.inf if item["px"] is None else float(item["px"])


@pytest.fixture
def phone(browser):  # noqa: F811  (the fixture of test_book_browser)
    width, height = PHONE
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": height, "deviceScaleFactor": 3, "mobile": True})
    yield browser
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.mark.parametrize("page", PAGES)
def test_figure_text_readable_on_a_phone(page: str, built_book: Path, server: str, phone):  # noqa: F811
    rows = measure_figures(phone, f"{server}/{page}.html")
    errors = [r["error"] for r in rows if "error" in r]
    assert not errors, f"{page}: measuring the figures failed: {errors}"
    assert all(r["viewport"] == PHONE[0] for r in rows), f"{page}: the viewport is not {PHONE[0]} px: {rows[:1]}"
    small = [f"{r['figure'] or r['src']} ({r['src']}, drawn {r['width']:.0f} px wide): tick label "
             f"{r['tick']['text']!r} {r['tick']['px']:.1f} px, text {r['text']['text']!r} {r['text']['px']:.1f} px, "
             f"script {r['script']['text']!r} {_px(r['script']):.1f} px"
             for r in rows if "skipped" not in r
             and (min(_px(r["tick"]), _px(r["text"])) < MIN_PX or _px(r["script"]) < SCRIPT_PX)]
    assert not small, f"{page} at {PHONE[0]} px: figure text below {MIN_PX:g} CSS px:\n" + "\n".join(small)
    assert all(r["ticks"] for r in rows if "skipped" not in r), f"{page}: a figure without tick labels: {rows}"
