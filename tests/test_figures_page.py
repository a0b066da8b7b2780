"""The paper's figures as a reader sees them: width on the page and font size at that width.

Opens the built quick book in headless Chromium (the fixtures of ``tests/browsing.py``; each page is
opened once, for all of its figures and the other browser tests) and, for each of the 9 paper figures
(``book/_ext/paper_numbers.yml``), measures

- the rendered width of the figure's image against the text column (the width of the
  article's paragraphs): a figure of three or more panels must fill at least 90 % of it;
- the size of every text of the figure's SVG at that width.  The SVGs keep their text as text
  (``svg.fonttype: none``) in user units of the ``viewBox``; shown ``W`` CSS pixels wide, a text
  of size ``s`` is ``s * W / viewBox_width`` CSS pixels, i.e. ``0.75`` times that in points.

The rule: **every text of a paper figure is at least 9 pt at its display size** (12 CSS px;
0.05 pt of slack for the rounding of the bounding box).  Measured in a 1280 x 1000 window (a
laptop screen), where both sidebars take room and the book's text column is about 676 px: the
narrowest common case; a full-width figure drawn at :data:`ldp.book.plotting.FULL_WIDTH` (6.8 in) is
shown there at about its own size, and larger in a wider window.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from browsing import DESKTOP
from test_book_browser import ROOT

pytestmark = pytest.mark.browser

MIN_PT = 9.0
SLACK_PT = 0.05
MIN_SHARE = 0.90  # of the text column, for a figure of three or more panels

FIGURES = [(entry["number"], label, page, len(entry.get("panels") or {}))
           for entry in yaml.safe_load((ROOT / "book" / "_ext" / "paper_numbers.yml").read_text())["figures"]
           for label, page in entry["book"].items()]

MEASURE = """
const fig = document.getElementById(arguments[0]);
if (!fig) return null;
const img = fig.querySelector('img');
const p = document.querySelector('article.bd-article section p');
return {src: img ? img.getAttribute('src') : null, complete: img ? img.complete : false,
        width: img ? img.getBoundingClientRect().width : 0,
        column: p ? p.getBoundingClientRect().width : 0};
"""

DESKTOP.probe("paper figures")(lambda driver, page: {
    label: driver.execute_script(MEASURE, label) for _, label, on, _ in FIGURES if on == page})

_SIZE = re.compile(r"font-size:\s*([0-9.]+)px|font:\s*(?:[a-z-]+\s+)*([0-9.]+)px")


def svg_font_sizes(path: Path) -> tuple[float, list[tuple[float, str]]]:
    """The SVG's viewBox width and (size in user units, text) of every non-empty text element."""
    root = ET.parse(path).getroot()
    view_width = float(root.get("viewBox").split()[2])
    sizes = []
    for el in root.iter("{http://www.w3.org/2000/svg}text"):
        text = "".join(el.itertext()).strip()
        style = el.get("style", "") + (f"; font-size: {el.get('font-size')}px" if el.get("font-size") else "")
        m = _SIZE.search(style)
        if text and m:
            sizes.append((float(m.group(1) or m.group(2)), text))
    return view_width, sizes


def test_svg_font_sizes_parsed(tmp_path):
    svg = tmp_path / "t.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100" width="200pt">'
                   '<text style="font-size: 9px; font-family: DejaVu Sans">a</text>'
                   '<text style="font: 6.3px \'DejaVu Sans\'">b</text><text style="font-size: 9px"> </text></svg>')
    assert svg_font_sizes(svg) == (200.0, [(9.0, "a"), (6.3, "b")])


def _case(number, label, page, panels):
    return pytest.param(number, label, page, panels, id=f"figure-{number}")


@pytest.mark.parametrize("number, label, page, panels", [_case(*f) for f in FIGURES])
def test_paper_figure_on_the_page(number, label, page, panels, built_book: Path, views):
    html = built_book / f"{page}.html"
    assert html.is_file(), f"{page}.html was not built"
    m = views.get(page, DESKTOP)["paper figures"][label]
    assert m and m["src"] and m["complete"], f"Figure {number} ({label}) has no loaded image on {page}: {m}"
    assert m["column"] > 600, f"text column of {page} is only {m['column']:.0f} px wide"
    share = m["width"] / m["column"]
    if panels >= 3:
        assert share >= MIN_SHARE, (f"Figure {number} ({label}, {panels} panels) is {m['width']:.0f} px wide, "
                                    f"{share:.0%} of the {m['column']:.0f} px text column (need {MIN_SHARE:.0%})")
    svg = (html.parent / m["src"]).resolve()
    assert svg.suffix == ".svg" and svg.is_file(), f"Figure {number}: {svg} is not an SVG file"
    view_width, sizes = svg_font_sizes(svg)
    assert sizes, f"Figure {number}: no text in {svg.name} (svg.fonttype must be 'none')"
    scale = m["width"] / view_width  # CSS px per user unit
    small = sorted({(round(s * scale * 0.75, 2), t[:30]) for s, t in sizes if s * scale * 0.75 < MIN_PT - SLACK_PT})
    assert not small, (f"Figure {number} ({label}) shown {m['width']:.0f} px wide (scale {scale * 0.75:.2f} pt per "
                       f"unit): {len(small)} texts under {MIN_PT} pt, e.g. {small[:6]}")
