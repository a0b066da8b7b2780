"""Figure helpers: one style, one way to save (SVG + PDF, atomically).

Each paper figure is drawn by one function in a notebook (or here) and saved
with :func:`save_figure`; the files under ``_generated/figures`` are the
artefacts the book includes with a numbered ``{figure}`` directive.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: notebooks run under papermill, tests in CI
import matplotlib.pyplot as plt  # noqa: E402

from .paths import atomic_path, figures_dir  # noqa: E402

# fontTools warns "'created' timestamp seems very low" when matplotlib subsets
# fonts for a PDF with metadata Date=None; it is harmless noise in notebooks.
logging.getLogger("fontTools").setLevel(logging.ERROR)

__all__ = ["METHOD_STYLE", "use_style", "save_figure", "errorbar_lines"]

#: colours and markers per protocol, shared by every figure
METHOD_STYLE = {
    "PEM": dict(color="#1f77b4", marker="o"),
    "SPM": dict(color="#d62728", marker="s"),
    "MCM": dict(color="#2ca02c", marker="^"),
    "Strawman": dict(color="#7f7f7f", marker="x"),
}


def use_style() -> None:
    """The book's matplotlib style (small, readable, vector-friendly)."""
    plt.rcParams.update({
        "figure.dpi": 110,
        "savefig.bbox": "tight",
        "font.size": 9,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "legend.fontsize": 8,
        "lines.markersize": 4,
        "svg.fonttype": "none",
        "pdf.fonttype": 42,
        "svg.hashsalt": "ldp",  # reproducible SVG ids
    })


def save_figure(fig, name: str, *, folder: str | Path | None = None,
                formats: tuple[str, ...] = ("svg", "pdf"), close: bool = True) -> dict[str, Path]:
    """Save ``fig`` as ``<folder>/<name>.<fmt>`` for each format, atomically.

    Returns the written paths by format.  ``folder`` defaults to
    :func:`ldp.paths.figures_dir`.  The figure is closed afterwards (so the
    notebook shows it only through the book's ``{figure}`` directive) unless
    ``close=False``.  With ``$LDP_SHOW_FIGURES`` set (``python -m ldp rerun``)
    it is also shown in the notebook's output, as a PNG.
    """
    folder = Path(folder) if folder is not None else figures_dir()
    out = {}
    for fmt in formats:
        target = folder / f"{name}.{fmt}"
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=fmt, bbox_inches="tight", metadata={"Date": None} if fmt != "png" else None)
        out[fmt] = target
    if os.environ.get("LDP_SHOW_FIGURES"):
        _show_png(fig)
    if close:
        plt.close(fig)
    return out


def _show_png(fig) -> None:
    """Display ``fig`` in the running notebook (IPython) as a PNG."""
    import io

    from IPython.display import Image, display

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    display(Image(data=buf.getvalue(), format="png"))


def errorbar_lines(ax, summary, *, x: str, y: str, err: str | None = "std", hue: str = "method",
                   styles: dict | None = None, label_fmt: str = "{}", **kw) -> None:
    """Plot mean +- error per ``hue`` group from a tidy summary frame."""
    styles = styles or METHOD_STYLE
    for key, grp in summary.groupby(hue, sort=False):
        grp = grp.sort_values(x)
        st = dict(styles.get(str(key).split("-")[0], {}))
        st.update(kw)
        ax.errorbar(grp[x], grp[y], yerr=None if err is None else grp[err], capsize=2,
                    label=label_fmt.format(key), **st)
