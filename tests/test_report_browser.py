"""The reproduction report as a reader sees it, in headless Chromium at 1280 px and at a phone's 420 px.

The built book (``make book QUICK=1``) is served as in ``test_book_browser.py`` (its fixtures). On
``book/reproduction``:

- the page opens with the summary, the claim explorer: one row per sentence of the paper (as many as the
  build's ``claims.json`` has), each verdict a coloured badge, each cause whole (never cut with "…"), a
  filter bar whose verdict filter shows exactly the rows with that verdict, and headers that sort;
- everything after the summary is folded, and folded the page is at most 6,000 px tall at 1280 px; a link
  to a sentence's evidence unfolds it and the section around it;
- the build's ``claims.csv`` and ``claims.json`` are linked from the page, copied into the built HTML;
- its tables are numbered 1, 2, ... as the reader sees them, and the table of our own sentences is not
  headed "The paper says";
- no heading carries an internal name (a figure label such as ``fig-eval-vary-k``);
- at 1280 px the explorer fits its column (no sideways scrolling, claim ids whole); at 420 px no part of
  the page is wider than the window and the explorer is one column (each cell a line of its own).

The page's height at each width is printed (``-s``) so a change can be measured.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from test_book_browser import WAIT_FOR_MATHJAX, browser, built_book, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CLAIMS_JSON = ROOT / "_generated" / "report" / "claims.json"
PAGE = "book/reproduction"
#: the height of the report, everything after its summary folded, at 1280 px
FOLDED_MAX = 6000

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
    assert page["firstH2"].rstrip("#") == "Summary" and page["explorerBeforeEvidence"]
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


FOLDED = """
document.querySelectorAll('article details').forEach((d) => { d.open = false; });
const tables = Array.from(document.querySelectorAll('article table'));
const causes = Array.from(document.querySelector('table.ldp-explorer').tBodies[0].rows).map((r) => r.cells[3]);
const prose = (el) => { const c = el.cloneNode(true); c.querySelectorAll('mjx-container').forEach((m) => m.remove());
  return c.textContent.replace(/\\s+/g, ' ').trim(); };
return {
  height: document.documentElement.scrollHeight,
  folds: document.querySelectorAll('article details').length,
  numbers: tables.map((t) => { const n = t.querySelector('caption .caption-number');
                               return n ? n.textContent.trim() : null; }).filter((n) => n),
  headers: Array.from(document.querySelectorAll('table.ldp-explorer')).map((t) =>
    Array.from(t.tHead.rows[0].cells).map((c) => c.textContent.trim())),
  causes: causes.map(prose),
  downloads: Array.from(document.querySelectorAll('article a.download')).map((a) => a.getAttribute('href')),
};
"""
OPEN_AT = """
const details = Array.from(document.querySelectorAll('article details'));
const own = document.getElementById(arguments[0]);
const folds = [];
for (let d = own.tagName === 'DETAILS' ? own : own.closest('details'); d; d = d.parentElement.closest('details')) {
  folds.push(d.open);
}
return {open: details.filter((d) => d.open).length, folds: folds, visible: own.getBoundingClientRect().height > 0};
"""


def _straight(text: str) -> str:
    return text.translate(str.maketrans("‘’“”", "''\"\""))


def test_the_folded_report_is_short_and_whole(built_book, server, browser):  # noqa: F811
    """Folded, the page is at most FOLDED_MAX px tall at 1280 px; the summary's causes are whole; the claims are
    offered as data; the tables are numbered as the reader sees them."""
    paper = _paper_sentences()
    browser.set_window_size(1280, 1000)
    browser.get(f"{server}/{PAGE}.html")
    browser.execute_async_script(WAIT_FOR_MATHJAX)
    page = browser.execute_script(FOLDED)
    print(f"\n{PAGE} at 1280 px, folded: {page['height']} px tall, {page['folds']} folds")
    assert page["height"] <= FOLDED_MAX, page["height"]
    assert page["folds"] > len(paper)  # each sentence's evidence, inside its section's fold
    assert page["numbers"] == [f"Table {i}" for i in range(1, len(page["numbers"]) + 1)] and page["numbers"]
    assert page["headers"][0][1] == "The paper says" and all("The paper says" not in h for h in page["headers"][1:])
    for row, cell in zip(paper, page["causes"]):
        assert "…" not in cell and not cell.endswith("..."), (row["id"], cell)
        if row["cause"] and "$" not in row["cause"]:  # the whole cause (Sphinx curls the quotes)
            assert _straight(" ".join(row["cause"].split())) in _straight(cell), (row["id"], cell)
    for name in ("claims.csv", "claims.json"):
        href = next((h for h in page["downloads"] if h.endswith("/" + name)), None)
        assert href, (name, page["downloads"])
        with urllib.request.urlopen(f"{server}/{PAGE.rsplit('/', 1)[0]}/{href}") as got:
            assert got.read() == (CLAIMS_JSON.parent / name).read_bytes(), name


def test_a_link_unfolds_the_evidence(built_book, server, browser):  # noqa: F811
    """Opening the page at a sentence's anchor unfolds its evidence and the section fold around it."""
    paper = _paper_sentences()
    target = paper[-1]["label"]
    browser.set_window_size(1280, 1000)
    browser.get(f"{server}/{PAGE}.html#{target}")
    browser.execute_async_script(WAIT_FOR_MATHJAX)
    got = browser.execute_script(OPEN_AT, target)
    assert got["folds"] == [True, True] and got["visible"] and got["open"] == 2, got
