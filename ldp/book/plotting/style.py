"""One look for every figure of the book: colours, markers, fonts and widths, and seaborn drawing them.

One colour and marker per method across the book (:data:`METHOD_STYLE`) and a ramp no method uses for
parameter series (:func:`series_colors`); text of at least 9 pt at the width the book shows a figure
(:data:`FULL_WIDTH`, :data:`THEME`); legends outside the data (:func:`legend_above`); error bars cut at the
quantity's range (:func:`interval`).  A figure is a seaborn plot of its tidy frame, drawn by :func:`render`.
Importing this module leaves matplotlib's backend alone (the runner and the tests set ``MPLBACKEND``).
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.colors import LinearSegmentedColormap

__all__ = ["METHOD_STYLE", "FIGURE_LEGEND", "FULL_WIDTH", "FONT_SIZE", "THEME", "method_style", "method_scales",
           "series_colors", "count_label", "interval", "render", "legend_above", "panel_legend", "variant_scale",
           "SERIES_RAMP", "SERIES_LIGHTNESS", "lightness"]

#: width in inches of a full-width figure as the book shows it: in a 1280 px window the page's
#: text column is about 676 px and a figure about 660 px (495 pt); 6.6 in (475 pt) plus the
#: saved margin of a tight bounding box stays below it, so 9 pt stays at least 9 pt on the page
FULL_WIDTH = 6.6
#: the smallest font size (points) on any figure, at its display width
FONT_SIZE = 9

#: the book's matplotlib settings (:func:`render` draws with them)
THEME: dict[Any, Any] = {
    "figure.dpi": 110, "figure.figsize": (FULL_WIDTH, 0.42 * FULL_WIDTH), "savefig.bbox": "tight",
    "font.size": FONT_SIZE, "axes.titlesize": FONT_SIZE + 1, "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE, "ytick.labelsize": FONT_SIZE, "legend.fontsize": FONT_SIZE,
    "legend.title_fontsize": FONT_SIZE, "axes.grid": True, "grid.alpha": 0.3, "grid.color": "#b0b0b0",
    "axes.facecolor": "white", "axes.edgecolor": "black", "lines.markersize": 4.5, "errorbar.capsize": 2,
    "svg.fonttype": "none", "pdf.fonttype": 42, "svg.hashsalt": "ldp",  # reproducible SVG ids
}

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
    "OUE": {"color": "#e6550d", "marker": "p"},
    "OLH": {"color": "#17becf", "marker": "*"},
    "HR": {"color": "#e377c2", "marker": "h"},
    "CMS": {"color": "#bcbd22", "marker": "X"},
}

def method_style(name: str) -> dict[str, str]:
    """The style of a method by name; a variant (``"PEM (HR)"``, ``"MCM, budget split"``) takes its family's.

    Raises
    ------
    KeyError
        If neither the name nor its family has a style (add it to :data:`METHOD_STYLE`).
    """
    key = str(name)
    family = key.replace("(", " ").replace("-", " ").replace(",", " ").split()[0] if key.strip() else key
    for k in (key, family):
        if k in METHOD_STYLE:
            return dict(METHOD_STYLE[k])
    raise KeyError(f"no style for method {name!r}; known methods: {sorted(METHOD_STYLE)}")


def method_scales(names: Sequence[str], *, dashed: Sequence[str] = ()) -> dict[str, so.Nominal]:
    """seaborn scales giving each method (in legend order ``names``) its colour and marker.

    The methods in ``dashed`` (variants such as ``"TreeHist (8 bits)"``) are drawn
    with dashed lines and open markers in their family's colour.
    """
    names = list(dict.fromkeys(names))
    style = {n: method_style(n) for n in names}
    return {"color": so.Nominal({n: s["color"] for n, s in style.items()}, order=names),
            "marker": so.Nominal({n: s["marker"] for n, s in style.items()}, order=names),
            "linestyle": so.Nominal({n: "--" if n in dashed else "-" for n in names}, order=names),
            "fillcolor": so.Nominal({n: "white" if n in dashed else s["color"] for n, s in style.items()},
                                    order=names)}


#: the ramp of ordered parameter series: matplotlib's ``YlOrBr`` from its 20 % point, extended to a brown
#: near black (more steps of lightness apart, which is what a reader with a colour-vision deficiency sees)
SERIES_RAMP = LinearSegmentedColormap.from_list(
    "ldp-series", [*(plt.get_cmap("YlOrBr")(x) for x in np.linspace(0.2, 1.0, 9)), "#2e1503"])
#: the CIE lightness L* of the lightest and the darkest colour of :func:`series_colors`
SERIES_LIGHTNESS = (85.0, 16.0)


def lightness(colors) -> np.ndarray:
    """CIE L* (0 black, 100 white) of sRGB(A) colours given as rows of 0-1 floats."""
    rgb = np.asarray(colors, dtype=float)[..., :3]
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    y = linear @ np.array([0.2126, 0.7152, 0.0722])  # relative luminance
    return np.where(y > 216 / 24389, 116 * np.cbrt(y) - 16, y * 24389 / 27)


def series_colors(n: int) -> list[tuple[float, float, float, float]]:
    """``n`` colours for an ordered parameter series (exponents, η, n, ...), light to dark.

    A sequential orange-brown ramp (:data:`SERIES_RAMP`), so a parameter series never takes a method's
    colour, in equal steps of lightness between :data:`SERIES_LIGHTNESS`: neighbours of a series of up to
    five stay apart also for a reader with a colour-vision deficiency (tests/test_fig_colours.py).  One
    colour is the ramp's middle.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    xs = np.linspace(0.0, 1.0, 1024)
    light = lightness(SERIES_RAMP(xs))  # falls along the ramp
    hi, lo = SERIES_LIGHTNESS
    targets = np.linspace(hi, lo, n) if n > 1 else np.array([(hi + lo) / 2])
    out = []
    for t in targets:
        r, g_, b, a = (float(v) for v in SERIES_RAMP(float(np.interp(-t, -light, xs))))
        out.append((r, g_, b, a))
    return out


def variant_scale(method: str, variants: Sequence[str]) -> so.Nominal:
    """A seaborn colour scale for a method and its variants along a parameter (OLH; FLH with pool sizes h).

    The method takes its book colour, the variants the ramp of :func:`series_colors` in the order given.
    """
    ramp = dict(zip(variants, series_colors(len(variants)))) if variants else {}
    return so.Nominal({method: method_style(method)["color"], **ramp}, order=[method, *variants])


def count_label(v: float) -> str:
    """A number of users as a short tick label: 20k, 100k, 1M, 3M.

    No powers of ten: a superscript would be below 9 pt.
    """
    return f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k" if v >= 1e3 else f"{v:g}"


def interval(frame: pd.DataFrame, y: str, err: str, bounds: tuple[float | None, float | None] = (0.0, 1.0),
             *, scale: float = 1.0, runs: str | None = None) -> pd.DataFrame:
    """``frame`` with ``lo`` and ``hi``: ``y ± scale * err`` cut at ``bounds`` (a missing ``err`` gives no bar).

    With ``runs`` (a column), ``err`` is an SD over that many runs and the bar ``scale`` standard errors,
    ``err / √runs``: the book's F1 figures draw ± 2 SE, the unit of the verdicts' rule.  ``bounds = (0, 1)``
    for a share such as F1; ``(floor, None)`` for a positive quantity on a log axis.  Where the bar would
    cross a bound it stops there (an asymmetric bar); the caption says SD or SE and over how many runs.
    """
    half = scale * frame[err].astype(float) / (np.sqrt(frame[runs].astype(float)) if runs else 1.0)
    return frame.assign(lo=(frame[y] - half).clip(lower=bounds[0], upper=None),
                        hi=(frame[y] + half).clip(lower=None, upper=bounds[1]))


#: where a figure's legend goes (:func:`legend_above`) and how it looks: centred above the panels, no frame
FIGURE_LEGEND: dict[str, Any] = {"loc": "lower center", "bbox_to_anchor": (0.5, 1.0), "frameon": False,
                                  "columnspacing": 1.2, "handlelength": 1.6}


def legend_above(fig, *, ncol: int | None = None, title: str | None = None, extra: Mapping | None = None):
    """One legend for ``fig``, centred above its axes, outside every panel (each label once).

    ``extra`` adds entries (label -> a proxy artist, e.g. ``Line2D([], [], marker="o", ls="none")``) for
    layers seaborn leaves out of the legend (a layer's ``label`` when other variables are mapped).
    """
    seen: dict[str, object] = {}
    for leg in list(fig.legends):
        for handle, text in zip(leg.legend_handles, leg.get_texts()):
            if text.get_text():
                seen.setdefault(text.get_text(), handle)
        fig.legends.remove(leg)
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    seen.update(extra or {})
    if not seen:
        return None
    return fig.legend(list(seen.values()), list(seen), ncol=ncol or min(len(seen), 6), title=title, **FIGURE_LEGEND)


def panel_legend(ax, entries: Mapping, *, ncol: int | None = None):
    """A legend of ``entries`` (label -> handle) for the panel ``ax``: centred above its plotting area, under its
    title (which moves up to make room), outside the data.  By default in as many columns (up to 3) as fit
    the panel's width.  Returns the legend (None without entries)."""
    if not entries:
        return None
    fig = ax.get_figure()
    for n in [ncol] if ncol else range(min(len(entries), 3), 0, -1):
        leg = ax.legend(list(entries.values()), list(entries), loc="lower center", bbox_to_anchor=(0.5, 1.0),
                        frameon=False, ncols=n, columnspacing=1.0, handlelength=1.6, borderaxespad=0.2,
                        fontsize=FONT_SIZE)
        fig.draw_without_rendering()
        if leg.get_window_extent().width <= ax.get_window_extent().width:
            break
    above = leg.get_window_extent().height * 72 / fig.dpi  # points
    ax.set_title(ax.get_title(), pad=above + FONT_SIZE)
    return leg


def render(plots, *, height: float, width: float = FULL_WIDTH, grid=None, legend: str | None = "above",
           ncol: int | None = None, extra: Mapping | None = None):
    """Draw seaborn plots at their display size with :data:`THEME`; returns the matplotlib figure.

    Parameters
    ----------
    plots : seaborn.objects.Plot or sequence
        The figure's declarative spec on its tidy frame (precomputed means and intervals): one
        plot whose facets fill the figure, or one item per panel of ``grid``: a
        :class:`seaborn.objects.Plot`, or a function of the panel's axes that draws with one of
        seaborn's axes-level functions (``sns.heatmap(..., ax=ax)``).
    height, width : float
        The display size in inches (default full width).
    grid : (int, int) or list of lists of str, optional
        The panels of a sequence: rows and columns (default one row), or a mosaic
        (``[["a", "b"], ["c", "c"]]``, panels in the order of their first appearance).
    legend : {"above", "panels", None}
        ``"above"``: one legend centred above the panels (:func:`legend_above`); ``"panels"``: each panel its
        own legend above it (:func:`panel_legend`, ``ncol`` columns or as many as fit) and ``extra`` in one
        legend above all;
        ``None``: as drawn.
    ncol, extra
        Legend columns and entries (:func:`legend_above`).
    """
    with plt.rc_context(THEME), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The copy keyword is deprecated")  # seaborn 0.13 with pandas 3
        fig = plt.figure(figsize=(width, height), layout="constrained")
        targets: list[Any]
        if isinstance(plots, so.Plot):
            plots, targets = [plots], [fig]
        elif isinstance(grid, list):
            targets = list(fig.subplot_mosaic(grid).values())
        else:
            targets = list(fig.subplots(*(grid or (1, len(plots))), squeeze=False).ravel())
        drawn = []
        for plot, target in zip(plots, targets):
            before = len(fig.legends)
            if isinstance(plot, so.Plot):
                plot.theme(THEME).on(target).plot()
            else:
                plot(target)
            drawn.append((target, fig.legends[before:]))  # the legends this panel's plot made
        if legend == "panels":
            for target, legends in drawn:
                entries: dict[str, Any] = {}
                for leg in legends:
                    entries.update((t.get_text(), h) for h, t in zip(leg.legend_handles, leg.get_texts())
                                   if t.get_text() and t.get_text() not in entries)
                    fig.legends.remove(leg)
                if target is not fig:
                    panel_legend(target, entries, ncol=ncol)  # ncol None: as many columns as fit
    if legend in ("above", "panels"):
        legend_above(fig, ncol=None if legend == "panels" else ncol, extra=extra)
    return fig
