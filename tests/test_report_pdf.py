"""The reproduction report in the PDF (``make pdf QUICK=1``): nothing of it leaves the page.

LaTeX's log names the lines of ``ldp-book.tex`` where a box is overfull; the report's chapter is
the range of lines from ``\\chapter{Reproduction report}`` to the next chapter. In that range
there is no overfull box (no table wider than the text, no row taller than the page, no claim id
cut), and every sentence of the build's ``claims.json`` has its explorer row and its evidence in
the PDF's text, its id whole.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from builds import unavailable

ROOT = Path(__file__).resolve().parents[1]
LATEX = ROOT / "_build" / "latex"
TEX, LOG, PDF = (LATEX / f"ldp-book.{ext}" for ext in ("tex", "log", "pdf"))
CLAIMS_JSON = ROOT / "_generated" / "report" / "claims.json"
OVERFULL = re.compile(r"Overfull \\([hv])box \(([\d.]+)pt too \w+\) (?:in paragraph at lines (\d+)--\d+|"
                      r"detected at line (\d+)|in alignment at lines (\d+)--\d+)")


@pytest.fixture(scope="module")
def built() -> Path:
    if not (PDF.is_file() and TEX.is_file() and LOG.is_file() and CLAIMS_JSON.is_file()):
        unavailable(f"no PDF build in {LATEX} (or no {CLAIMS_JSON}): run `make pdf QUICK=1` (make test does)")
    return PDF


def report_lines() -> range:
    """The lines of ldp-book.tex that hold the report's chapter."""
    lines = TEX.read_text(encoding="utf-8").split("\n")
    start = lines.index(r"\chapter{Reproduction report}") + 1
    end = next((i + 1 for i in range(start, len(lines)) if lines[i].startswith(r"\chapter{")), len(lines) + 1)
    return range(start, end)


def test_no_overfull_box_in_the_report(built: Path):
    chapter = report_lines()
    found = [(kind, float(pt), int(a or b or c)) for kind, pt, a, b, c in
             OVERFULL.findall(LOG.read_text(encoding="latin-1")) if int(a or b or c) in chapter]
    assert not found, f"overfull boxes in the report's chapter (kind, pt, line of ldp-book.tex): {found}"


def test_every_claim_id_whole_in_the_pdf(built: Path):
    if shutil.which("pdftotext") is None:
        unavailable("pdftotext missing: apt-get install poppler-utils")
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(built), "-"], capture_output=True, text=True,
                          check=True).stdout
    text = re.sub(r"-\n", "-", text)  # an id may wrap after one of its hyphens, never inside a word
    words = set(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)+", text))
    ids = [r["id"] for r in json.loads(CLAIMS_JSON.read_text(encoding="utf-8"))["rows"]]
    assert [i for i in ids if i not in words] == []
