"""A figure for a phone: its panels stacked in one column, :data:`NARROW_WIDTH` wide (served to narrow screens).

A figure of the book is drawn for the page's text column (:data:`~.style.FULL_WIDTH`, 9 pt text); a phone
shrinks it to its screen, about 340 CSS px, which leaves 9 pt at 6 px.  :func:`one_column` lays the finished
matplotlib figure out again, without drawing anything anew: the same axes, marks and texts, with each panel
(an axes placed by a grid, with its twins, colorbars and insets) in reading order in one column of
:data:`NARROW_WIDTH` inches, every panel with its own tick labels and axis labels (a panel that shared them
with its neighbours gets them back), and the figure's legends in as many columns as fit.  At 340 px a
figure of 4 in shows 9 pt as 10.6 px.  :func:`~.save.save_figure` saves this layout as ``NAME-narrow.svg``
beside ``NAME.svg``.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.gridspec import SubplotSpec
from matplotlib.legend import Legend

from .style import FIGURE_LEGEND

__all__ = ["NARROW_WIDTH", "NARROW_SUFFIX", "one_column"]

#: width in inches of a figure's phone layout: a phone held upright shows the book's column at about
#: 340 CSS px, where 4 in (288 pt) draws 9 pt as 10.6 px (and a 6.3 pt superscript as 7.5 px)
NARROW_WIDTH = 4.0
#: the file name suffix of the phone layout: ``NAME-narrow.svg``
NARROW_SUFFIX = "-narrow"

# a stacked panel's plotting area: its height in the page's layout, within these bounds (inches)
_MIN_PANEL, _MAX_PANEL = 1.3, 2.6


def _panels(fig: Figure) -> list[list[Any]]:
    """The axes of ``fig`` placed by a grid, grouped by cell (an axes and its twins), in reading order."""
    groups: dict[tuple, list[Any]] = {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is None:  # colorbars and axes placed by hand follow their parents
            continue
        top = spec.get_topmost_subplotspec()
        key = (top.rowspan.start, top.colspan.start, spec.rowspan.start, spec.colspan.start,
               spec.rowspan.stop, spec.colspan.stop, id(spec.get_gridspec()))
        groups.setdefault(key, []).append(ax)
    return [groups[k] for k in sorted(groups)]


def _shown(axis) -> bool:
    """Whether any of ``axis``'s major tick labels is drawn."""
    return any(t.label1.get_visible() or t.label2.get_visible() for t in axis.get_major_ticks())


def _siblings(ax, name: str, group: list) -> list[Any]:
    """The panels (not ``ax``'s twins) that share ``ax``'s ``name`` axis."""
    shared = ax.get_shared_x_axes() if name == "x" else ax.get_shared_y_axes()
    return [a for a in shared.get_siblings(ax) if a not in group]


def _relabel(label, text: str, visible: bool) -> None:
    label.set_text(text)
    label.set_visible(visible)


def _unhide_shared_labels(ax, name: str, group: list, undo: list) -> None:
    """Show the tick labels and the label of ``ax``'s ``name`` axis when sharing it with a panel hid them."""
    axis = getattr(ax, f"{name}axis")
    siblings = [getattr(s, f"{name}axis") for s in _siblings(ax, name, group)]
    if not siblings:
        return
    side = axis.get_ticks_position()
    key = {"x": "labeltop" if side == "top" else "labelbottom",
           "y": "labelright" if side == "right" else "labelleft"}[name]
    if not _shown(axis) and any(_shown(s) for s in siblings):
        ax.tick_params(axis=name, which="both", **{key: True})
        undo.append(partial(ax.tick_params, axis=name, which="both", **{key: False}))
    label = axis.label
    donor = next((s.label for s in siblings if s.label.get_visible() and s.label.get_text()), None)
    if donor is not None and not (label.get_visible() and label.get_text()):
        undo.append(partial(_relabel, label, label.get_text(), label.get_visible()))
        _relabel(label, donor.get_text(), True)


def _lay_out(fig: Figure) -> None:
    """Place ``fig``'s axes as drawing it would, without drawing it: its layout engine run alone.

    (Where the axes are is all the phone layout reads between its layouts; a drawing of the whole figure
    on top of the layout, its marks and texts to a renderer that keeps nothing, cost as much again.
    Without a layout engine nothing moves the axes, so there it draws, as before.)
    """
    engine = fig.get_layout_engine()
    if engine is None:
        fig.draw_without_rendering()
        return
    if fig.axes:
        with contextlib.suppress(ValueError):  # as Figure.draw runs the engine: it may refuse a size
            engine.execute(fig)


def _fits(leg, width: float) -> bool:
    fig = leg.get_figure()
    return leg.get_window_extent(fig.canvas.get_renderer()).width <= 0.98 * width * fig.dpi


def _fit_legends(fig: Any, width: float) -> list[tuple[int, Legend]]:
    """Each figure legend wider than ``width`` inches swapped for one with the same entries in as many columns as
    fit (:data:`~.style.FIGURE_LEGEND`'s place and look, the title and label colours kept); the legends it took
    out, with their places in ``fig.legends``, to put back.

    (A legend packs its entries when it is made, so fewer columns need a new legend.  Its width is its entries'
    and needs no drawing of the figure: a legend placed by an anchor, as these are, takes no part in the layout.)
    """
    swapped = []
    for i, leg in enumerate(list(fig.legends)):
        if _fits(leg, width):
            continue
        texts = leg.get_texts()
        title = leg.get_title()
        for ncols in range(min(len(texts), 6), 0, -1):
            new = Legend(fig, list(leg.legend_handles), [t.get_text() for t in texts], ncols=ncols,
                         title=title.get_text() or None, title_fontproperties=title.get_fontproperties(),
                         **FIGURE_LEGEND)
            for t, old in zip(new.get_texts(), texts):
                t.set_color(old.get_color())
            fig.legends[i] = new
            if _fits(new, width):
                break
        swapped.append((i, leg))
    return swapped


@contextlib.contextmanager
def one_column(fig: Figure, *, width: float = NARROW_WIDTH) -> Iterator[Figure]:
    """``fig`` laid out for a phone while the block runs: its panels stacked in one column ``width`` inches wide.

    Each panel keeps the height of its plotting area on the page (between 1.3 and 2.6 in); a panel whose
    tick labels or axis label were left to a neighbour it shares the axis with shows its own; figure
    legends take as many columns as fit; a figure text too wide wraps.  The figure is drawn as before
    when the block ends.

    The figure is not drawn here: its layout engine alone places the axes (to read the panels' heights, at the
    new size, and three more times while the height settles); saving it inside the block draws it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A finished figure (drawn with a layout engine, as :func:`~.style.render` draws).
    width : float
        The width in inches, > 0.
    """
    if not width > 0:
        raise ValueError(f"width must be > 0 inches, got {width!r}")
    undo: list = []
    size = fig.get_size_inches().copy()
    _lay_out(fig)
    groups = _panels(fig)
    specs = {id(ax): (ax, ax.get_subplotspec()) for group in groups for ax in group}
    swapped: list[tuple[int, Legend]] = []
    texts = [t for t in [*fig.texts, getattr(fig, "_suptitle", None)] if t is not None]  # the suptitle's artist
    wraps = [(t, t.get_wrap()) for t in texts]
    try:
        heights = [float(np.clip(group[0].get_position().height * size[1], _MIN_PANEL, _MAX_PANEL))
                   for group in groups]
        if groups:
            grid = fig.add_gridspec(len(groups), 1, height_ratios=heights)
            for i, group in enumerate(groups):
                for ax in group:
                    ax.set_subplotspec(SubplotSpec(grid, i))
                    for name in "xy":
                        _unhide_shared_labels(ax, name, group, undo)
        for t in texts:
            t.set_wrap(True)
        height = sum(heights) + float(size[1])  # a first guess; the layout below sets the rest
        fig.set_size_inches(width, height)
        _lay_out(fig)
        swapped = _fit_legends(fig, width)
        for _ in range(3):  # the room that is not plotting area (titles, ticks, legends) stays the same
            drawn = sum(g[0].get_position().height for g in groups) * height
            height = round(max(height - drawn, 0.0) + sum(heights), 2)  # rounded: the same file every time
            fig.set_size_inches(width, height)
            _lay_out(fig)
        yield fig
    finally:
        for action in reversed(undo):
            action()
        for ax, spec in specs.values():
            ax.set_subplotspec(spec)
        for i, leg in swapped:
            fig.legends[i] = leg
        for t, wrap in wraps:
            t.set_wrap(wrap)
        fig.set_size_inches(*size)
