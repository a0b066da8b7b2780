"""A missing input degrades, never breaks: the evaluation chapter without the AOL tally.

The AOL tally ships in ``data/``; ``LDP_DATA_DIR``, when set, is the only folder the
loaders search, so pointing it at an empty folder hides the shipped copy. The test runs
notebook 06 in quick mode with papermill that way, builds that chapter into a small book
with this repository's ``_config.yml`` and ``-W`` (every glue key the chapter pastes must
exist), and reads the HTML: no ``nan``, no "0 users", no empty pasted value, the AOL
panels and sentences say the data is missing, and the reproduction report's rows this
chapter measures (``ldp.book.claims``, computed from what the run saved) have the AOL rows
"not testable here".
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ldp.book.chapters.c08_after_pem.after_pem import FAMILIES
from ldp.datasets import ChecksumError, DataFileNotFoundError, check_aol

import minibook
from builds import require
from test_notebooks import ROOT, runner

CHAPTER = "06_evaluation"
MISSING = "the AOL data file is missing in this build"
BAD_TEXT = [
    (re.compile(r"\bnan\b", re.I), "nan"),
    (re.compile(r"\b0 users\b"), "0 users"),
    (re.compile(r"\bof 0 bits\b"), "prefixes of 0 bits"),
]


def _prose(html_path: Path) -> str:
    """The chapter's text without its code cells (inputs and outputs): what the reader reads.

    Fails if a pasted value is empty or the text shows ``nan``, "0 users" or "of 0 bits".
    """
    from bs4 import BeautifulSoup

    article = BeautifulSoup(html_path.read_text(encoding="utf-8"), "html.parser").find("article")
    assert article is not None, f"{html_path}: no <article>"
    empty = [s for s in article.select(".pasted-text, .pasted-inline") if not s.get_text(strip=True)]
    assert not empty, f"{html_path.name}: {len(empty)} glued values are empty"
    for cell in article.select("div.cell"):
        cell.decompose()
    text = re.sub(r"\s+", " ", article.get_text(" "))
    for pattern, what in BAD_TEXT:
        hits = [text[max(0, m.start() - 80):m.end() + 40] for m in pattern.finditer(text)]
        assert not hits, f"{html_path.name} prints {what!r}: {hits}"
    return text


def _glued_text(nb_path: Path) -> dict[str, str]:
    """Every value the notebook glued: key -> its text/plain (or text/markdown) record."""
    out = {}
    for cell in json.loads(nb_path.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook")
            if meta:
                prefix = meta.get("mime_prefix", "")
                data = o["data"]
                out[meta["name"]] = data.get(prefix + "text/markdown", data.get(prefix + "text/plain"))
    return out


def _format(record: str, fmt: str) -> str:
    """Format a glued text/plain record like myst-nb's ``{glue:text}`key:fmt```."""
    import ast

    try:
        value = ast.literal_eval(record)
    except (ValueError, SyntaxError):
        value = record
    return format(value, fmt) if fmt else str(value)


@pytest.mark.notebook
@pytest.mark.slow
def test_evaluation_chapter_without_aol_data(tmp_path: Path, monkeypatch):
    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("LDP_DATA_DIR", str(empty))  # hides the shipped data/ copy
    check = subprocess.run([sys.executable, "-m", "ldp.datasets", "check", "aol"], capture_output=True,
                           text=True, env=runner.kernel_env(tmp_path / "unused"))
    assert check.returncode == 1 and str(empty) in check.stderr, check.stdout + check.stderr

    book = tmp_path / "book"
    executed = book / "_generated" / "notebooks" / f"{CHAPTER}.ipynb"
    figures = book / "_generated" / "figures"  # where the chapter's {figure} directives look
    runner.ensure_kernel()
    source = runner.NOTEBOOK_DIR / f"{CHAPTER}.ipynb"
    ok, report = runner.execute(source, executed, runner.mode_parameters(source, True), figures,
                                tmp_path / "papermill.log")
    assert ok, f"{CHAPTER} failed without the AOL data:\n{report}"

    # the AOL panels say so in the panel (SVG text is kept as text: svg.fonttype none)
    for name in ("fig-eval-vary-eps", "fig-eval-vary-k"):
        svg = (figures / f"{name}.svg").read_text(encoding="utf-8")
        assert svg.count("No AOL results") == 2, f"{name}: the two AOL panels do not say the data is missing"

    # build the chapter alone with -W -n: a glue key the text needs but the notebook did not glue fails
    minibook.scaffold(book, [f"_generated/notebooks/{CHAPTER}", "book/interpretation", "book/reproduction"])
    for page in ("interpretation", "reproduction"):  # targets of {doc} links
        (book / "book" / f"{page}.md").write_text(f"# {page.title()}\n")
    proc = minibook.build(book, env=runner.kernel_env(figures))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]

    text = _prose(book / "_build" / "html" / "_generated" / "notebooks" / f"{CHAPTER}.html")
    assert text.count(MISSING) >= 4, "the AOL sentences do not say that the data file is missing"
    assert "points are not discussed here: " + MISSING in text  # the glued Markdown paragraph

    # the reproduction report's rows this chapter measures, computed from what this run saved: the AOL rows
    # are not testable here (their input is missing), the others still get a verdict
    from ldp.book.chapters import REGISTRY
    from ldp.book.claims import evaluate
    from ldp.book.claims.store import ResultStore
    from ldp.book.claims.verdicts import NOT_TESTABLE

    rows = evaluate(ResultStore(figures.parent, figures=figures), REGISTRY, chapters=[CHAPTER]).set_index("id")
    for claim_id in ("fig56-aol-pem-best", "s61-aol-users", "s61-aol-unique"):
        assert rows.loc[claim_id, "verdict"] == NOT_TESTABLE, claim_id
        assert "AOL" in rows.loc[claim_id, "explanation"] or "input missing" in rows.loc[claim_id, "explanation"]
    assert REGISTRY.get("fig5-pem-best").chapter == CHAPTER and rows.loc["fig5-pem-best", "verdict"] != NOT_TESTABLE
    assert "AOL is not in this build" in rows.loc["fig5-pem-best", "measured"]
    numbers = [k for k in _glued_text(executed) if "aol" in k and not k.endswith("_text")
               and not k.startswith("claim_")]  # a claim's row says why it is not testable
    assert not numbers, f"AOL numbers glued without the AOL data: {numbers}"


def test_evaluation_chapter_prose_with_data():
    """The same checks on the chapter of the quick book that `make test` builds first (data present)."""
    page = ROOT / "_build" / "html" / "_generated" / "notebooks" / f"{CHAPTER}.html"
    require(page, "the quick book's chapter 06")
    text = _prose(page)
    try:
        check_aol()
    except (DataFileNotFoundError, ChecksumError):
        assert MISSING in text or "AOL data file fails its sha256 check" in text
    else:
        assert MISSING not in text and "On AOL at ε = 4, PEM finds" in text


# =========================================================== chapter 08 without the AOL data
@pytest.mark.notebook
@pytest.mark.slow
def test_chapter_08_without_aol_data(tmp_path, monkeypatch):
    """Chapter 08 in quick mode with LDP_DATA_DIR at an empty folder: AOL left out, said so, no nan."""
    import json
    import re

    from test_notebooks import runner

    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("LDP_DATA_DIR", str(empty))  # hides the shipped data/ copy
    figures, executed = tmp_path / "figures", tmp_path / "08_after_pem.ipynb"
    runner.ensure_kernel()
    source = runner.NOTEBOOK_DIR / "08_after_pem.ipynb"
    ok, report = runner.execute(source, executed, runner.mode_parameters(source, True), figures,
                                tmp_path / "papermill.log")
    assert ok, f"chapter 08 failed without the AOL data:\n{report}"
    for name in ("fig-after-vary-eps", "fig-after-vary-k"):
        # the AOL panel of each row (TreeHist's, SFP's) says why it is empty
        assert (figures / f"{name}.svg").read_text(encoding="utf-8").count("No AOL results") == len(FAMILIES), name
        csv = (figures / f"{name}.csv").read_text(encoding="utf-8")
        assert "AOL" not in csv and "URL" in csv and "Synthetic" in csv and not re.search(r"\bnan\b", csv, re.I)
    glued = {}
    for cell in json.loads(executed.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook")
            if meta:
                glued[meta["name"]] = o["data"][meta.get("mime_prefix", "") + "text/plain"]
    bad = {k: v for k, v in glued.items() if re.search(r"\bnan\b", v, re.I)}
    assert glued and not bad, bad
    assert "the AOL data file is missing in this build" in glued["after_aol_text"]
    assert not [k for k in glued if "aol" in k and k != "after_aol_text"]
