"""Under each generated figure: the notebook cell that made it and the data it plots.

A Sphinx extension (listed in ``_config.yml``). For every figure of a chapter whose image
is a file of ``_generated/figures/`` (written by :func:`ldp.book.plotting.save_figure`), it adds a
line to the figure's legend:

    Made by cell 12 of ``notebooks/05_validation.ipynb`` (source at the build's commit);
    plotted data: ``NAME.csv``.

"cell 12" links to that cell on the page when the page shows it (its input may be hidden;
a removed cell has no anchor) and the source link points into the repository at the commit
the book was built from (:mod:`ldp_provenance`). The CSV is the file ``save_figure`` wrote
beside the image, linked as a download.

Which cell made a figure is read from the executed notebook: the code cell that names the
figure (``"NAME"``) and calls ``save_figure``, else the last code cell calling ``save_figure``
before the markdown cell that shows the figure.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

_FIGURE_URI = re.compile(r"(?:^|/)_generated/figures/([^/]+?)\.(?:svg|pdf|png|\*)$")


def figure_name(uri: str) -> str | None:
    """``NAME`` of an image URI under ``_generated/figures/`` (``NAME.svg``, ``NAME.*``), else None."""
    m = _FIGURE_URI.search(uri.replace("\\", "/"))
    return m.group(1) if m else None


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def making_cell(cells: list[dict[str, Any]], name: str) -> int | None:
    """Index of the code cell of ``cells`` (a notebook's) that saved figure ``name``, or None.

    The code cell that mentions ``"NAME"`` (or ``'NAME'``) and calls ``save_figure``; else the
    last code cell calling ``save_figure`` before the first markdown cell that shows
    ``figures/NAME.``.
    """
    code = [(i, _source(c)) for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    for i, src in code:
        if "save_figure" in src and (f'"{name}"' in src or f"'{name}'" in src):
            return i
    shown = next((i for i, c in enumerate(cells)
                  if c.get("cell_type") == "markdown" and f"figures/{name}." in _source(c)), None)
    if shown is None:
        return None
    before = [i for i, src in code if i < shown and "save_figure" in src]
    return before[-1] if before else None


def _notebook_cells(app: Sphinx, docname: str) -> list[dict[str, Any]] | None:
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb":
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return None


def _cell_anchors(doctree: nodes.document) -> dict[int, str]:
    """``cell_index -> id`` of the code cells the page shows, giving each an id ``cell-N``."""
    anchors = {}
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") != "cell_code" or node.get("cell_index") is None:
            continue
        index = int(node["cell_index"])
        anchor = f"cell-{index}"
        if anchor not in node["ids"]:
            node["ids"].append(anchor)
        anchors[index] = anchor
    return anchors


def _on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    figures = []
    for fig in doctree.findall(nodes.figure):
        img = next(iter(fig.findall(nodes.image)), None)
        name = figure_name(img["uri"]) if img is not None else None
        if name:
            figures.append((fig, name))
    if not figures:
        return
    cells = _notebook_cells(app, docname)
    anchors = _cell_anchors(doctree) if cells is not None else {}
    info = getattr(app, "ldp_build_info", None)
    source = None
    if cells is not None:
        from ldp_provenance import source_path  # the sibling extension: the page's notebook in notebooks/

        source = source_path(app, docname)
    for fig, name in figures:
        para = nodes.paragraph(classes=["ldp-figure-source"])
        index = making_cell(cells, name) if cells is not None else None
        if index is not None and source:
            para += nodes.Text("Made by ")
            if index in anchors and app.builder.format == "html":  # the PDF has no anchors on cells
                para += nodes.reference(text=f"cell {index + 1}", refid=anchors[index], internal=True)
            else:
                para += nodes.Text(f"cell {index + 1}")
            para += nodes.Text(" of ")
            url = info.url("blob", source) if info is not None else ""
            if url:
                ref = nodes.reference(refuri=url)
                ref += nodes.literal(text=source)
                para += ref
            else:
                para += nodes.literal(text=source)
        csv = Path(app.srcdir) / "_generated" / "figures" / f"{name}.csv"
        if csv.is_file():
            para += nodes.Text("; plotted data: " if len(para) else "Plotted data: ")
            dl = addnodes.download_reference(refdoc=docname, reftarget=f"/_generated/figures/{name}.csv",
                                             refexplicit=True, refdomain="", reftype="download")
            dl += nodes.literal(text=f"{name}.csv")
            para += dl
        if not len(para):
            continue
        para += nodes.Text(".")
        legend = next((c for c in fig.children if isinstance(c, nodes.legend)), None)
        if legend is None:
            legend = nodes.legend()
            fig += legend
        legend += para
        if cells is not None and index is None:
            logger.warning("[ldp_figure_source] %s: no notebook cell found that saves figure %r", docname, name,
                           location=fig)


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("ldp_provenance")
    # before the download collector (priority 500), which registers the CSV for copying
    app.connect("doctree-read", _on_doctree_read, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
