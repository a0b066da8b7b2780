"""Evidence boxes: under each of the paper's figures, what the paper says, what we measure, the verdict and its cause.

A Sphinx extension (listed in ``_config.yml``). The build's claims are evaluated before Sphinx
runs (``make book`` / ``make pdf``: :func:`ldp.book.rerun.build.stage` calls
:func:`ldp.book.report.write_book_report`), which writes ``_generated/report/claims.json``:
one row per sentence of the paper (its verdict, the class and line of its cause, the readings
under which the verdict would flip, the anchor of its evidence on the report page) with its
parts, each claim's quote, measurement, verdict and cause. This extension reads that file and,
in every document as it is read (``doctree-read``), puts an admonition right after each figure
whose label is one of the paper's figures in ``paper_numbers.yml``, one item per sentence that
reads the figure:

- **The paper** (section, figure): the quote, as the paper prints it;
- **We measure**: the measured numbers;
- **Verdict**: the computed verdict, its cause (class and line) when it is not reproduced, the
  readings that would flip it, and a link to the sentence's evidence on the report page.

In a quick build (``"mode": "quick"`` in the file) each box opens with a banner: its verdicts
come from small samples and are not the reproduction's. Nothing is typed: the box is built from
the file, as docutils nodes (math in the quotes as math nodes), so it works in HTML and LaTeX
alike. Without the file (a partial build, as in the tests) no box is added. The extension also
adds the report's claim explorer script and style (``book/_static/ldp-explorer.js``, ``.css``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils import nodes
from ldp_numbers import book_numbers, load
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: the claims file, relative to the book's source folder
DEFAULT_DATA = "_generated/report/claims.json"
#: the report page's document name (the boxes link to its rows when it is part of the build)
DEFAULT_REPORT = "book/reproduction"
QUICK_TEXT = ("Quick build: these verdicts come from small samples (fewer runs, smaller grids and "
              "populations); they are not the reproduction's verdicts, which come from the paper-scale "
              "build (make book).")

_cache: dict[str, tuple[float, dict]] = {}


def read_claims(path: Path) -> dict | None:
    """The claims file (cached by modification time), or ``None`` if there is none."""
    if not path.is_file():
        return None
    mtime = path.stat().st_mtime
    hit = _cache.get(str(path))
    if hit is None or hit[0] != mtime:
        hit = (mtime, json.loads(path.read_text(encoding="utf-8")))
        _cache[str(path)] = hit
    return hit[1]


def inline(text: str) -> list[nodes.Node]:
    """Text with ``$...$`` spans as math nodes (an odd count of ``$`` leaves the text as it is)."""
    text = text or ""
    pieces = text.split("$")
    if len(pieces) % 2 == 0:
        return [nodes.Text(text)]
    out: list[nodes.Node] = []
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        out.append(nodes.math(piece, piece) if i % 2 else nodes.Text(piece))
    return out


def _para(*parts: Any) -> nodes.paragraph:
    p = nodes.paragraph()
    for part in parts:
        if isinstance(part, str):
            p += nodes.Text(part)
        elif isinstance(part, list):
            p.extend(part)
        else:
            p += part
    return p


def _row_link(row: dict, docname: str, linkable: bool) -> nodes.Node:
    text = f"{row['id']} on the report page"
    if not linkable:
        return nodes.Text(text)
    ref = addnodes.pending_xref("", nodes.inline(text, text, classes=["xref", "std", "std-ref"]),
                                refdomain="std", reftype="ref", reftarget=row["label"], refexplicit=True,
                                refwarn=True, refdoc=docname)
    return ref


def evidence_box(number: str, rows: list[dict], *, quick: bool, docname: str = "",
                 linkable: bool = True) -> nodes.admonition:
    """The box for one paper figure: a generic admonition with one item per sentence that reads it.

    Parameters
    ----------
    number : str
        The paper's figure number, e.g. ``"5"``.
    rows : list of dict
        The sentence rows of ``claims.json`` that read this figure (``figures``), each with its ``parts``.
    quick : bool
        A quick build: the box opens with :data:`QUICK_TEXT`.
    docname : str
        The document the box goes into (for the links' resolution).
    linkable : bool
        Whether the report page is part of the build (else the row is named, not linked).
    """
    box = nodes.admonition(classes=["ldp-evidence", "note"])
    title = f"Evidence: Figure {number} of the paper" + (" (quick build)" if quick else "")
    box += nodes.title(title, title)
    if quick:
        rest = QUICK_TEXT.split(": ", 1)[1]
        box += _para(nodes.strong("Quick build.", "Quick build."), " " + rest[0].upper() + rest[1:])
        box[-1]["classes"].append("ldp-evidence-quick")
    items = nodes.bullet_list()
    for row in rows:
        who = {"ours": "Ours (not the paper's)", "reading": "Our reading (the sentence states no result)"}.get(
            row.get("kind", ""), "The paper")
        item = nodes.list_item()
        for part in row.get("parts", []):
            item += _para(nodes.strong(who, who), f" (§{part['section']}, ", inline(str(part.get("ref", ""))),
                          "): “", inline(part.get("quote", "")), "”")
            measured = part.get("measured") or "nothing measured"
            item += _para(nodes.strong("We measure: ", "We measure: "), inline(measured), f" ({part['verdict']})")
            who = "And" if part.get("decides", True) else "A detail"
        verdict = str(row.get("verdict", ""))
        cause = ([" Cause (", row.get("cause_label", ""), "): ", inline(row.get("cause") or ""), "."]
                 if row.get("cause_class") else [])
        flips = [f" Under {k} it would be {v}." for k, v in (row.get("flips") or {}).items()]
        item += _para(nodes.strong("Verdict: ", "Verdict: "), nodes.emphasis(verdict, verdict), ".", *cause, *flips,
                      " See ", _row_link(row, docname, linkable), ".")
        items += item
    box += items
    return box


def add_boxes(app: Sphinx, doctree: nodes.document) -> None:
    """After each paper figure of the document, its evidence box (``doctree-read``)."""
    path = Path(app.srcdir) / app.config.ldp_evidence_data
    app.env.note_dependency(str(path))
    data = read_claims(path)
    if not data:
        return
    figures = {label: str(n) for label, n in book_numbers(load(), "figures").items()}
    by_figure: dict[str, list[dict]] = {}
    for row in data.get("rows", []):
        for fig in row.get("figures", []):
            if fig in figures:
                by_figure.setdefault(fig, []).append(row)
    linkable = app.config.ldp_evidence_report in app.env.found_docs
    quick = data.get("mode") == "quick"
    for fig in list(doctree.findall(nodes.figure)):
        label = next((n for n in (*fig["ids"], *fig["names"]) if n in by_figure), None)
        if label is None:
            continue
        box = evidence_box(figures[label], by_figure[label], quick=quick, docname=app.env.docname,
                           linkable=linkable)
        box.source, box.line = fig.source, fig.line  # where a warning about the box points
        fig.parent.insert(fig.parent.index(fig) + 1, box)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ldp_evidence_data", DEFAULT_DATA, "env")
    app.add_config_value("ldp_evidence_report", DEFAULT_REPORT, "env")
    app.connect("doctree-read", add_boxes)
    app.add_js_file("ldp-explorer.js", loading_method="defer")  # the report's claim explorer (book/_static)
    app.add_css_file("ldp-explorer.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
