"""The first page as a reader first sees it, in headless Chromium: a 1,280 x 800 screen and a 390 x 844 phone.

The built book (``make book QUICK=1``) is served as in ``test_book_browser.py`` (its fixtures). On
``book/intro``, before any scrolling:

- at 1,280 x 800 the answer (at most five sentences), the citation, the link to the reproduction report
  and the gallery of the paper's nine figures lie within the screen; each figure's thumbnail has loaded,
  its card links to the figure in its chapter, and its badges count the verdicts of the sentences that read
  it (the rows of the evidence box under the figure, from the build's ``claims.json``);
- the answer says what this build's claims say: its sentences are those :func:`ldp.book.answer.answer_sentences`
  makes from the build's ``claims.csv``, with the same numbers;
- on a 390 x 844 phone the answer, the citation and the link to the report lie within the screen, and no
  part of the page is wider than it.

The positions are printed (``-s``) so a change can be measured.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_book_browser import WAIT_FOR_MATHJAX, browser, built_book, server  # noqa: F401  (fixtures)

from ldp.book import answer as AN

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "_generated" / "report"
PAGE = "book/intro"
#: the paper's figures, in its order: (number, the book's label, the chapter that draws it)
FIGURES = [(f["number"], *next(iter(f["book"].items())))
           for f in yaml.safe_load((ROOT / "book" / "_ext" / "paper_numbers.yml").read_text())["figures"]]

MEASURE = """
const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
  return {top: Math.round(r.top + window.scrollY), bottom: Math.round(r.bottom + window.scrollY)}; };
const prose = (el) => { const c = el.cloneNode(true); c.querySelectorAll('mjx-container').forEach((m) => m.remove());
  return c.textContent.replace(/\\s+/g, ' ').trim(); };
const answer = document.querySelector('article .ldp-answer');
const citation = document.querySelector('article .ldp-citation');
const report = citation ? Array.from(citation.querySelectorAll('a'))
  .find((a) => /(^|\\/)reproduction\\.html$/.test(a.getAttribute('href') || '')) : null;
const cards = Array.from(document.querySelectorAll('article .ldp-gallery .sd-card'));
return {
  viewport: [window.innerWidth, window.innerHeight], scrolled: window.scrollY,
  docWidth: document.documentElement.scrollWidth,
  answer: box(answer), sentences: answer ? Array.from(answer.querySelectorAll('li')).map(prose) : [],
  citation: box(citation), citationText: citation ? citation.textContent.replace(/\\s+/g, ' ') : '',
  report: box(report),
  cards: cards.map((c) => {
    const img = c.querySelector('img'); const link = c.querySelector('a.sd-stretched-link');
    return {box: box(c), title: (c.querySelector('strong') || {textContent: ''}).textContent.trim(),
            href: link ? link.getAttribute('href') : '',
            img: img ? {loaded: img.complete && img.naturalWidth > 0, width: img.getBoundingClientRect().width,
                        src: img.getAttribute('src')} : null,
            badges: Array.from(c.querySelectorAll('.sd-badge')).map((b) => b.textContent.trim())};
  }),
};
"""


def _claims() -> tuple[pd.DataFrame, dict]:
    if not (REPORT / "claims.csv").is_file():
        pytest.skip(f"{REPORT / 'claims.csv'} missing: run `make book QUICK=1`")
    return pd.read_csv(REPORT / "claims.csv"), json.loads((REPORT / "claims.json").read_text(encoding="utf-8"))


def first_screen(browser, server: str, width: int, height: int) -> dict:  # noqa: F811  (the fixture's name)
    """The page opened in a window whose viewport is exactly ``width`` x ``height`` CSS px, measured (the
    window gets the shared fixture's size back)."""
    try:
        browser.set_window_size(width, height)
        inner = browser.execute_script("return [window.innerWidth, window.innerHeight]")
        browser.set_window_size(2 * width - inner[0], 2 * height - inner[1])
        browser.get(f"{server}/{PAGE}.html")
        browser.execute_async_script(WAIT_FOR_MATHJAX)
        page = browser.execute_script(MEASURE)
    finally:
        browser.set_window_size(1280, 1000)
    assert page["viewport"] == [width, height] and page["scrolled"] == 0, page["viewport"]
    print(f"\n{PAGE} at {width} x {height}: the answer ends at {page['answer']['bottom']} px, the citation at "
          f"{page['citation']['bottom']} px; the gallery from {page['cards'][0]['box']['top']} to "
          f"{max(c['box']['bottom'] for c in page['cards'])} px")
    return page


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text)


def expected_sentences(table: pd.DataFrame) -> list[str]:
    """The answer the build's claims make, as the page shows it: links as their text, math left out."""
    return [re.sub(r"\$[^$]*\$", "", re.sub(r"\{ref\}`([^`<]*?) <[^>]*>`", r"\1", s))
            for s in AN.answer_sentences(table)]


def test_the_first_screen_answers_at_1280(built_book, server, browser):  # noqa: F811
    table, data = _claims()
    page = first_screen(browser, server, 1280, 800)
    # the answer: at most five sentences, those of the build's claims, with their numbers
    expected = expected_sentences(table)
    assert 1 <= len(page["sentences"]) <= 5 and len(page["sentences"]) == len(expected)
    assert page["sentences"][0].startswith("The paper finds PEM better than SPM and MCM")
    for shown, wanted in zip(page["sentences"], expected):
        assert _numbers(shown) == _numbers(wanted), (shown, wanted)
    # the citation and the link to the report
    assert "Wang, Ninghui Li and Somesh Jha" in page["citationText"] and "arXiv:1708.06674" in page["citationText"]
    assert page["report"] is not None
    # the gallery: the nine figures in the paper's order, each with its thumbnail, link and verdicts
    assert [c["title"] for c in page["cards"]] == [f"Figure {n}" for n, _, _ in FIGURES]
    rows = data["rows"]
    for card, (number, label, chapter) in zip(page["cards"], FIGURES):
        assert card["img"] and card["img"]["loaded"] and card["img"]["width"] >= 60, (number, card["img"])
        assert Path(card["img"]["src"]).name == f"{label}.svg"
        assert card["href"].endswith(f"{Path(chapter).name}.html#{label}"), (number, card["href"])
        reads = [r["verdict"] for r in rows if label in r["figures"]]
        badges = {b.split(" ", 1)[1]: int(b.split(" ", 1)[0]) for b in card["badges"]}
        assert badges == {AN.GALLERY_WORDS[v]: reads.count(v) for v in set(reads)}, (number, card["badges"])
    # everything above on the first screen
    for name in ("answer", "citation", "report"):
        assert page[name]["bottom"] <= 800, (name, page[name])
    assert all(c["box"]["bottom"] <= 800 for c in page["cards"]), [c["box"] for c in page["cards"]]
    assert page["docWidth"] <= 1280


def test_the_first_screen_answers_on_a_phone(built_book, server, browser):  # noqa: F811
    _claims()
    page = first_screen(browser, server, 390, 844)
    assert page["docWidth"] <= 390
    assert 1 <= len(page["sentences"]) <= 5 and len(page["cards"]) == len(FIGURES)
    for name in ("answer", "citation", "report"):
        assert page[name]["bottom"] <= 844, (name, page[name])
    assert all(c["img"] and c["img"]["loaded"] for c in page["cards"])


def test_the_answer_check_can_fail():
    """The comparison of the page's numbers with the claims' catches another count."""
    table, _ = _claims()
    shown = expected_sentences(table)[0]
    changed = table.copy()
    at = changed.index[changed["id"] == "fig5-pem-best"][0]
    numbers = json.loads(changed.at[at, "numbers"])
    changed.at[at, "numbers"] = json.dumps(numbers | {"holds": numbers["holds"] - 1})
    assert _numbers(expected_sentences(changed)[0]) != _numbers(shown)
