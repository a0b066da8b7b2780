"""The PDF (``make pdf``) numbers figures and equations as the HTML book does.

A Sphinx extension (listed in ``_config.yml``). In HTML, figures and equations are numbered
through the whole book (Fig. 1, 2, ...; (1), (2), ...: the chapters are unnumbered). For a
LaTeX build, sphinx-jupyterbook-latex turns the table of contents' parts into LaTeX parts
and sets ``numfig_secnum_depth = 2``, which numbers them per chapter (Fig. 3.1). This
extension runs after it and sets the depth back to 0, so LaTeX numbers them through the
book too, in the same (table of contents) order, and the PDF's numbers are the HTML's.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.builders.latex import LaTeXBuilder


def _numbers_like_html(app: Sphinx) -> None:
    if isinstance(app.builder, LaTeXBuilder):
        app.config.numfig_secnum_depth = 0


def setup(app: Sphinx) -> dict[str, Any]:
    # sphinx_jupyterbook_latex sets the depth in its builder-inited handler (priority 500)
    app.connect("builder-inited", _numbers_like_html, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
