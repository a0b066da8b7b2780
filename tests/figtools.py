"""Checks the figure tests share: a figure fit for the page, a result store of given frames, a claim's verdict."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.collections
import matplotlib.text
import pytest

from ldp.book.chapters import REGISTRY
from ldp.book.claims import ResultStore, evaluate_claim
from ldp.book.plotting import FONT_SIZE, FULL_WIDTH, write_figure_data


def page_ready(fig, *, width: float = FULL_WIDTH, legend: bool = True) -> None:
    """Fonts of at least 9 pt, at ``width`` inches with nothing sticking out, legends outside the panels."""
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
    assert sizes and min(sizes) >= FONT_SIZE, min(sizes)
    assert fig.get_size_inches()[0] == pytest.approx(width)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert fig.get_tightbbox(renderer).width <= width + 0.05, "text beyond the figure's width (saved wider)"
    if not legend:
        return
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]  # and the panels' own
    assert legends, "no legend"
    boxes = [leg.get_window_extent(renderer) for leg in legends]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), "legends overlap"
    for leg in legends:
        for ax in fig.axes:
            assert not leg.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)), "legend on a panel"
            assert not (ax.title.get_text() and leg.get_window_extent(renderer).overlaps(
                ax.title.get_window_extent(renderer))), "legend on a panel's title"


def titles(fig) -> list[str]:
    """The panel titles of ``fig``, in order."""
    return [ax.get_title() for ax in fig.axes if ax.get_title()]


def store_with(folder: Path, *, figures=None, tables=None, parameters=None) -> ResultStore:
    """A result store holding ``figures`` (name -> frame, written as the CSVs save_figure writes) and
    ``tables`` ((chapter, name) -> frame), with a chapter's ``parameters`` ({chapter: {name: value}})."""
    store = ResultStore(folder, mode="full")
    for name, frame in (figures or {}).items():
        write_figure_data(frame, store.figure_path(name))
    for (chapter, name), frame in (tables or {}).items():
        store.save(chapter, name, frame)
    for chapter, values in (parameters or {}).items():
        store.save_parameters(chapter, values)
    return store


def decide(claim_id: str, store: ResultStore) -> dict:
    """The registry's row for ``claim_id`` against ``store``: ``verdict``, ``numbers``, ``measured``, ..."""
    return evaluate_claim(REGISTRY.get(claim_id), store)


def bar_ranges(fig) -> list[tuple[float, float]]:
    """(lowest, highest) y of every error bar drawn in ``fig`` (seaborn's ``Range`` marks)."""
    out = []
    for ax in fig.axes:
        for coll in ax.collections:
            if isinstance(coll, matplotlib.collections.LineCollection):
                out += [(float(seg[:, 1].min()), float(seg[:, 1].max())) for seg in coll.get_segments() if len(seg)]
    return out


def texts(fig) -> list[str]:
    """Every non-empty text drawn in ``fig``."""
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
