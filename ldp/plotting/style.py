"""One look for every figure of the book: colours, markers, fonts, widths, error bars.

The rules (issue 15, "figures for the page"):

- **one colour and marker per method across the whole book** (:data:`METHOD_STYLE`:
  the heavy-hitter protocols and the frequency oracles), and a separate
  palette for data sets (:data:`DATASET_STYLE`: greys with their own line
  styles) and for parameter series such as Zipf exponents or η
  (:func:`series_colors`: a sequential orange-brown ramp no method uses);
- **fonts of at least 9 pt at the width the book shows a figure**: figures are
  drawn at their display size (:data:`FULL_WIDTH` inches for a full-width
  figure, :data:`HALF_WIDTH` for one beside text) with :func:`use_style`'s
  9 pt text, so nothing is scaled down on the page;
- **legends outside the data** (:func:`legend_outside`);
- **error bars that respect the quantity's range** (:func:`errorbar_lines`
  with ``bounds=``): a bar of mean ± SD is cut at the bounds of the quantity
  (F1 and NCR in [0, 1], a variance above 0 on a log axis), so it is
  asymmetric where it meets them; the caption says SD or SE and over how many
  runs.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")  # headless: notebooks run under papermill, tests in CI
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["METHOD_STYLE", "DATASET_STYLE", "FULL_WIDTH", "HALF_WIDTH", "FONT_SIZE", "use_style",
           "method_style", "series_colors", "legend_outside", "errorbar_lines", "bar_bounds"]

#: width in inches of a full-width figure as the book shows it: in a 1280 px window the page's
#: text column is about 676 px and a figure about 660 px (495 pt); 6.6 in (475 pt) plus the
#: saved margin of a tight bounding box stays below it, so 9 pt stays at least 9 pt on the page
FULL_WIDTH = 6.6
#: width of a figure shown at half the text column
HALF_WIDTH = 3.3
#: the smallest font size (points) on any figure, at its display width
FONT_SIZE = 9

#: colour and marker per method, shared by every figure of the book
METHOD_STYLE: dict[str, dict[str, str]] = {
    # heavy-hitter protocols
    "PEM": {"color": "#1f77b4", "marker": "o"},
    "SPM": {"color": "#d62728", "marker": "s"},
    "MCM": {"color": "#2ca02c", "marker": "^"},
    "Strawman": {"color": "#7f7f7f", "marker": "x"},
    "TreeHist": {"color": "#9467bd", "marker": "D"},
    "SFP": {"color": "#8c564b", "marker": "v"},
    # frequency oracles
    "GRR": {"color": "#ff7f0e", "marker": "P"},
    "OLH": {"color": "#17becf", "marker": "*"},
    "HR": {"color": "#e377c2", "marker": "h"},
    "CMS": {"color": "#bcbd22", "marker": "X"},
}

#: colour, line style and (hollow) marker per data set: greys, never a method's colour
DATASET_STYLE: dict[str, dict[str, str]] = {
    "URL": {"color": "#000000", "linestyle": "-", "marker": "o", "markerfacecolor": "none"},
    "AOL": {"color": "#555555", "linestyle": "--", "marker": "s", "markerfacecolor": "none"},
    "Synthetic": {"color": "#999999", "linestyle": ":", "marker": "^", "markerfacecolor": "none"},
}


def use_style() -> None:
    """Set the book's matplotlib style: 9 pt text, light grid, vector-friendly, reproducible SVG ids."""
    plt.rcParams.update({
        "figure.dpi": 110,
        "figure.figsize": (FULL_WIDTH, 0.42 * FULL_WIDTH),
        "savefig.bbox": "tight",
        "font.size": FONT_SIZE,
        "axes.titlesize": FONT_SIZE + 1,
        "axes.labelsize": FONT_SIZE,
        "xtick.labelsize": FONT_SIZE,
        "ytick.labelsize": FONT_SIZE,
        "legend.fontsize": FONT_SIZE,
        "legend.title_fontsize": FONT_SIZE,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "lines.markersize": 4.5,
        "errorbar.capsize": 2,
        "svg.fonttype": "none",
        "pdf.fonttype": 42,
        "svg.hashsalt": "ldp",  # reproducible SVG ids
    })


def method_style(name: str) -> dict[str, str]:
    """The style of a method by name; a variant ``"PEM-GRR"`` or ``"PEM (HR)"`` takes its family's (``"PEM"``).

    Raises
    ------
    KeyError
        If neither the name nor its family has a style (add it to :data:`METHOD_STYLE`).
    """
    key = str(name)
    if key in METHOD_STYLE:
        return dict(METHOD_STYLE[key])
    family = key.replace("(", " ").replace("-", " ").split()[0] if key.strip() else key
    if family in METHOD_STYLE:
        return dict(METHOD_STYLE[family])
    raise KeyError(f"no style for method {name!r}; known methods: {sorted(METHOD_STYLE)}")


def series_colors(n: int) -> list[tuple[float, float, float, float]]:
    """``n`` colours for an ordered parameter series (exponents, η, n, ...), light to dark.

    A sequential orange-brown ramp (matplotlib's ``YlOrBr`` without its palest
    quarter), so a parameter series never takes a method's colour.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    cmap = plt.get_cmap("YlOrBr")
    return [cmap(x) for x in np.linspace(0.4, 0.95, n)]


def legend_outside(fig, axes=None, *, ncol: int | None = None, title: str | None = None):
    """One legend for ``fig``, centred above its axes and outside every panel's data.

    Handles and labels are collected from ``axes`` (default all axes of
    ``fig``), each label once, in the order first seen.
    """
    axes = list(fig.axes if axes is None else np.ravel(axes))
    seen: dict[str, object] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if not seen:
        return None
    ncol = ncol or min(len(seen), 6)
    return fig.legend(list(seen.values()), list(seen), loc="lower center", bbox_to_anchor=(0.5, 1.0),
                      ncol=ncol, frameon=False, title=title)


def bar_bounds(y, err, bounds: tuple[float | None, float | None] = (None, None)) -> np.ndarray:
    """Lower and upper half-widths of ``y ± err`` cut at ``bounds`` (shape ``(2, len(y))``).

    ``bounds = (0, 1)`` for a share such as F1; ``(tiny, None)`` for a positive
    quantity on a log axis.  A bar never crosses a bound; where it would, the
    side that meets it is shortened (an asymmetric bar).
    """
    y = np.asarray(y, dtype=float)
    err = np.asarray(err, dtype=float)
    lo, hi = bounds
    down = err.copy()
    up = err.copy()
    if lo is not None:
        down = np.minimum(down, np.maximum(y - lo, 0.0))
    if hi is not None:
        up = np.minimum(up, np.maximum(hi - y, 0.0))
    return np.vstack([down, up])


def errorbar_lines(ax, summary: pd.DataFrame, *, x: str, y: str, err: str | None = "std", hue: str = "method",
                   styles: Mapping[str, Mapping[str, Any]] | None = None, label_fmt: str = "{}",
                   bounds: tuple[float | None, float | None] = (None, None), **kw) -> pd.DataFrame:
    """Plot mean ± error per ``hue`` group from a tidy summary frame.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    summary : pandas.DataFrame
        One row per (group, x).
    x, y, err : str
        Columns of the x value, the mean and the error half-width (``None``: no bars).
    hue : str
        The grouping column; each group's style comes from ``styles`` (default
        :func:`method_style` of the group's name).
    bounds : (float or None, float or None)
        The quantity's range; bars are cut there (:func:`bar_bounds`).

    Returns
    -------
    pandas.DataFrame
        The rows of ``summary`` it plotted, in plotting order (by group, then
        ``x``): the basis of the figure's data table for
        :func:`ldp.plotting.save_figure`.
    """
    plotted = []
    for key, grp in summary.groupby(hue, sort=False):
        grp = grp.sort_values(x)
        st = dict(styles[str(key)]) if styles is not None and str(key) in styles else _style_or_empty(key)
        st.update(kw)
        yerr = None if err is None else bar_bounds(grp[y], grp[err], bounds)
        ax.errorbar(grp[x], grp[y], yerr=yerr, label=label_fmt.format(key), **st)
        plotted.append(grp)
    return pd.concat(plotted) if plotted else summary.iloc[:0]


def _style_or_empty(key) -> dict[str, str]:
    try:
        return method_style(str(key))
    except KeyError:
        return {}
