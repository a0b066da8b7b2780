"""The reproduction report as a reader sees it, in headless Chromium at 1280 px and at a phone's 420 px.

The built book (``make book QUICK=1``) is served as in ``test_book_browser.py`` (its fixtures). On
``book/reproduction``:

- the page opens with the claim explorer: one row per sentence of the paper (as many as the build's
  ``claims.json`` has), each verdict a coloured badge, a filter bar whose verdict filter shows exactly
  the rows with that verdict, and headers that sort;
- no heading carries an internal name (a figure label such as ``fig-eval-vary-k``);
- at 1280 px the explorer fits its column (no sideways scrolling, claim ids whole); at 420 px no part of
  the page is wider than the window and the explorer is one column (each cell a line of its own).

The page's height at each width is printed (``-s``) so a change can be measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_book_browser import WAIT_FOR_MATHJAX, browser, built_book, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CLAIMS_JSON = ROOT / "_generated" / "report" / "claims.json"
PAGE = "book/reproduction"

MEASURE = """
const table = document.querySelector('table.ldp-explorer');
const box = table ? (table.closest('.pst-scrollable-table-container') || table.parentElement) : null;
const rows = table ? Array.from(table.tBodies[0].rows) : [];
const article = document.querySelector('article.bd-article');
const headings = Array.from(article.querySelectorAll('h1, h2, h3')).map((h) => h.textContent.trim());
const firstHeading = article.querySelector('h2');
const idCells = rows.map((r) => r.cells[0]);
return {
  height: document.documentElement.scrollHeight,
  explorerHeight: table ? Math.round(table.getBoundingClientRect().height) : 0,
  docWidth: document.documentElement.scrollWidth, window: window.innerWidth,
  rows: rows.length, shown: rows.filter((r) => !r.hidden).length,
  badges: rows.filter((r) => r.querySelector('.sd-badge')).length,
  firstH2: firstHeading ? firstHeading.textContent.trim() : '',
  explorerBeforeEvidence: !!table && !!firstHeading,
  headings: headings,
  boxScroll: box ? box.scrollWidth - box.clientWidth : -1,
  idsCut: idCells.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent.trim()),
  cellDisplay: rows.length ? getComputedStyle(rows[0].cells[1]).display : '',
  selects: document.querySelector('.ldp-explorer-filters').querySelectorAll('select').length,
  wide: Array.from(article.querySelectorAll('*')).filter((el) => el.getBoundingClientRect().right
                                                        > window.innerWidth + 1).slice(0, 5)
                  .map((el) => el.tagName + '.' + el.className + ': ' + el.textContent.slice(0, 60)),
};
"""

FILTER = """
const [label, value] = arguments;
const select = Array.from(document.querySelectorAll('.ldp-explorer-filters label'))
                    .find((l) => l.textContent.trim().startsWith(label)).querySelector('select');
select.value = value;
select.dispatchEvent(new Event('change'));
const rows = Array.from(document.querySelector('table.ldp-explorer').tBodies[0].rows);
const verdict = (r) => r.cells[2].textContent.trim();
const shown = rows.filter((r) => !r.hidden);
const out = {shown: shown.length, verdicts: Array.from(new Set(shown.map(verdict)))};
select.value = '\\u0000all';
select.dispatchEvent(new Event('change'));
return out;
"""

SORT = """
const table = document.querySelector('table.ldp-explorer');
const th = Array.from(table.tHead.rows[0].cells).find((c) => c.textContent.trim().startsWith('Verdict'));
th.click();
return Array.from(table.tBodies[0].rows).map((r) => r.cells[2].textContent.trim());
"""


def _paper_sentences() -> list[dict]:
    if not CLAIMS_JSON.is_file():
        pytest.skip(f"{CLAIMS_JSON} missing: run `make book QUICK=1`")
    return [r for r in json.loads(CLAIMS_JSON.read_text(encoding="utf-8"))["rows"] if r["kind"] == "paper"]


def _open(browser, server: str, width: int) -> dict:  # noqa: F811  (the fixture's name)
    browser.set_window_size(width, 1000)
    browser.get(f"{server}/{PAGE}.html")
    browser.execute_async_script(WAIT_FOR_MATHJAX)
    return browser.execute_script(MEASURE)


def test_the_report_opens_with_the_explorer(built_book, server, browser):  # noqa: F811
    paper = _paper_sentences()
    page = _open(browser, server, 1280)
    print(f"\n{PAGE} at 1280 px: {page['height']} px tall, explorer {page['explorerHeight']} px, {page['rows']} rows")
    assert page["firstH2"].startswith("Claim explorer") and page["explorerBeforeEvidence"]
    assert page["rows"] == page["shown"] == len(paper) and page["badges"] == len(paper)
    assert page["selects"] == 3  # verdict, section, cause
    assert not [h for h in page["headings"] if "our figure" in h or "fig-" in h], page["headings"]
    assert page["boxScroll"] <= 1 and not page["idsCut"], (page["boxScroll"], page["idsCut"])
    assert page["docWidth"] <= page["window"], page["wide"]
    for verdict in sorted({r["verdict"] for r in paper}):
        got = browser.execute_script(FILTER, "Verdict", verdict)
        assert got == {"shown": sum(r["verdict"] == verdict for r in paper), "verdicts": [verdict]}, verdict
    order = browser.execute_script(SORT)
    rank = ["reproduced", "partly reproduced", "not reproduced", "not testable here"]
    assert [rank.index(v) for v in order] == sorted(rank.index(v) for v in order)


def test_the_report_on_a_phone(built_book, server, browser):  # noqa: F811
    _paper_sentences()
    try:
        page = _open(browser, server, 420)
    finally:
        browser.set_window_size(1280, 1000)
    print(f"\n{PAGE} at 420 px: {page['height']} px tall, explorer {page['explorerHeight']} px")
    assert page["docWidth"] <= page["window"], f"wider than the window: {page['wide']}"
    assert page["cellDisplay"] == "block"  # the explorer is one column: each row a card
