"""Each generated figure names the notebook cell that made it and links its plotted data.

Unit tests of book/_ext/ldp_figure_source.py, then the built quick book: every figure of
``_generated/figures/`` shown on a chapter page carries a "Made by cell N of notebooks/NN.ipynb"
line whose cell link resolves on the page (or the cell is removed) and whose CSV link
downloads the figure's data, and the cell it names is one that calls ``save_figure``.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from builds import require

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import ldp_figure_source as fs  # noqa: E402

HTML = ROOT / "_build" / "html"


def _cell(kind: str, src: str) -> dict:
    return {"cell_type": kind, "source": src, "metadata": {}}


def test_figure_name_only_for_generated_figures():
    assert fs.figure_name("/_generated/figures/fig-a.*") == "fig-a"
    assert fs.figure_name("_generated/figures/fig-eval-var.svg") == "fig-eval-var"
    assert fs.figure_name("book/_static/logo.svg") is None
    assert fs.figure_name("_generated/figures/sub/fig.svg") is None


def test_making_cell_prefers_the_cell_that_names_the_figure():
    cells = [_cell("code", "save_figure(fig, 'fig-b', data=d)"),
             _cell("code", 'fig, data = plot(x)\nsave_figure(fig, "fig-a", data=data)'),
             _cell("markdown", "```{figure} /_generated/figures/fig-a.*\n```")]
    assert fs.making_cell(cells, "fig-a") == 1
    assert fs.making_cell(cells, "fig-b") == 0


def test_making_cell_falls_back_to_the_last_saving_cell_before_the_figure():
    cells = [_cell("code", "save_figure(fig, name, data=d)  # first"),
             _cell("code", "for name in names:\n    save_figure(fig, name, data=d)"),
             _cell("markdown", "```{figure} /_generated/figures/fig-c.*\n```"),
             _cell("code", "save_figure(fig, other, data=d)")]
    assert fs.making_cell(cells, "fig-c") == 1
    assert fs.making_cell(cells, "fig-missing") is None


@pytest.fixture(scope="module")
def chapters() -> dict[str, str]:
    require(HTML / "index.html", "the HTML book")
    return {p.stem: p.read_text(encoding="utf-8") for p in (HTML / "_generated" / "notebooks").glob("*.html")}


LINE = re.compile(r'<p class="ldp-figure-source">Made by (?:<a class="reference internal" href="#(cell-\d+)">)?'
                  r'cell (\d+)(?:</a>)? of <a class="reference external" href="([^"]+)">.*?</a>; plotted data: '
                  r'<a class="reference download internal" download="" href="([^"]+)"><code[^>]*><span '
                  r'class="pre">([^<]+)</span>', re.S)


def test_every_generated_figure_names_its_cell_and_data(chapters):
    total = 0
    for stem, text in chapters.items():
        figures = set(re.findall(r'<img[^>]+src="[^"]*?/_images/([^"/]+?)\.svg"', text))
        found = LINE.findall(text)
        assert len(found) >= len([f for f in figures if f.startswith("fig-")]), stem
        cells = json.loads((ROOT / "_generated" / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
        for anchor, number, source, csv_href, csv_name in found:
            total += 1
            assert source.endswith(f"/notebooks/{stem}.ipynb"), source
            assert "save_figure" in "".join(cells[int(number) - 1]["source"]), (stem, number)
            if anchor:
                assert f'id="{anchor}"' in text, (stem, anchor)
            csv = (HTML / "_generated" / "notebooks" / csv_href).resolve()
            assert csv.is_file() and csv.name == csv_name, csv_href
            assert csv.read_text(encoding="utf-8").count("\n") >= 2, csv
    assert total >= 17  # the 9 paper figures and the book's own
