"""A figure's phone layout (ldp.book.plotting.narrow): its panels in one column, 4 in wide, readable at 340 px."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import seaborn.objects as so

from ldp.book.plotting import FONT_SIZE, render, save_figure
from ldp.book.plotting.narrow import NARROW_SUFFIX, NARROW_WIDTH, one_column

ROOT = Path(__file__).resolve().parents[1]
PHONE_COLUMN = 342  # CSS px: the book's text column on a phone 390 px wide


def _facets():
    """Six panels in two rows sharing both axes, one legend above them (as Figures 5 and 6)."""
    d = pd.DataFrame([{"title": f"({p}) panel {p}", "protocol": m, "x": x, "y": (x + i) / 10}
                      for i, p in enumerate("abcdef") for m in ("PEM", "MCM", "SPM") for x in (1, 2, 3, 4)])
    plot = (so.Plot(d, x="x", y="y", color="protocol").facet(col="title", wrap=3).add(so.Line())
            .label(x="epsilon", y="score", title=str, color=""))
    return render(plot, height=4.9, ncol=3)


def _positions(fig):
    return [tuple(np.round(ax.get_position().bounds, 6)) for ax in fig.axes]


def _drawn_labels(ax, name):
    axis = getattr(ax, f"{name}axis")
    lo, hi = sorted(getattr(ax, f"get_{name}lim")())
    return [t.label1.get_text() for t in axis.get_major_ticks() if t.label1.get_visible() and lo <= t.get_loc() <= hi]


def test_one_column_stacks_the_panels_in_reading_order():
    fig = _facets()
    fig.canvas.draw()
    before, size = _positions(fig), fig.get_size_inches().copy()
    assert len({round(b[0], 3) for b in before}) == 3  # three columns on the page
    with one_column(fig) as narrow:
        assert narrow is fig and fig.get_size_inches()[0] == NARROW_WIDTH
        boxes = [ax.get_position() for ax in fig.axes]
        assert len({round(b.x0, 3) for b in boxes}) == 1, "not one column"
        assert [b.y0 for b in boxes] == sorted((b.y0 for b in boxes), reverse=True), "not in reading order"
        assert [ax.get_title() for ax in fig.axes] == [f"({p}) panel {p}" for p in "abcdef"]
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:  # every panel with its own tick labels and axis labels
            assert _drawn_labels(ax, "x") and _drawn_labels(ax, "y"), ax.get_title()
            assert ax.xaxis.label.get_visible() and ax.xaxis.label.get_text() == "epsilon"
            assert ax.yaxis.label.get_visible() and ax.yaxis.label.get_text() == "score"
            height = ax.get_position().height * fig.get_size_inches()[1]
            assert 1.3 - 0.01 <= height <= 2.6 + 0.01
        assert fig.get_tightbbox(renderer).width <= NARROW_WIDTH + 0.05, "sticks out of the phone layout"
        for leg in fig.legends:
            assert not any(leg.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
    fig.canvas.draw()
    assert _positions(fig) == before and (fig.get_size_inches() == size).all(), "not laid out as before"
    assert not _drawn_labels(fig.axes[1], "y"), "the shared tick labels are not hidden again"


def test_a_legend_too_wide_for_the_phone_takes_more_rows():
    d = pd.DataFrame([{"series": f"series number {i}", "x": x, "y": x * i} for i in range(8) for x in (1, 2)])
    fig = render(so.Plot(d, x="x", y="y", color="series").add(so.Line()), height=2.5, ncol=8)
    fig.canvas.draw()
    original = fig.legends[0]
    wide = original.get_window_extent().width
    assert wide > NARROW_WIDTH * fig.dpi  # wider than a phone
    with one_column(fig):
        renderer = fig.canvas.get_renderer()
        leg = fig.legends[0]
        assert leg.get_window_extent(renderer).width <= NARROW_WIDTH * fig.dpi
        assert [t.get_text() for t in leg.texts] == [f"series number {i}" for i in range(8)]
        assert leg.get_window_extent(renderer).y0 >= fig.axes[0].get_window_extent(renderer).y1, "not above"
    assert fig.legends == [original] and original.get_window_extent().width == wide  # the page's legend again


def test_one_column_checks_the_width():
    with pytest.raises(ValueError, match="width must be > 0"), one_column(_facets(), width=0):
        pass


def test_one_column_lays_the_figure_out_without_drawing_it_until_its_height_settles():
    """The phone layout runs the figure's layout engine alone (no draw event) and stops at a settled height."""
    fig = _facets()
    fig.canvas.draw()
    page = [float(np.clip(ax.get_position().height * fig.get_size_inches()[1], 1.3, 2.6)) for ax in fig.axes]
    draws: list = []
    fig.canvas.mpl_connect("draw_event", draws.append)
    with one_column(fig):
        assert not draws, "the phone layout drew the figure"
        height = fig.get_size_inches()[1]
        fig.get_layout_engine().execute(fig)  # another round of the layout at this height
        plotted = sum(ax.get_position().height for ax in fig.axes) * height
        assert round(height - plotted + sum(page), 2) == height, "the height had not settled"
    assert not draws


def test_save_figure_writes_the_phone_layout_readable_on_a_phone(tmp_path: Path):
    out = save_figure(_facets(), "fig-six", data=pd.DataFrame({"x": [1]}), folder=tmp_path)
    assert out["narrow"] == tmp_path / f"fig-six{NARROW_SUFFIX}.svg"
    svg = out["narrow"].read_text(encoding="utf-8")
    width = float(re.search(r'viewBox="0 0 ([0-9.]+) ', svg).group(1))  # points
    assert width <= (NARROW_WIDTH + 0.25) * 72  # and the margin of a tight bounding box
    sizes = [float(s) for s in re.findall(r"font-size: ([0-9.]+)px", svg)]
    assert sizes and min(sizes) >= FONT_SIZE
    assert min(sizes) * PHONE_COLUMN / width >= 8.0  # CSS px on a phone's column
    assert "fig-six.svg" in {p.name for p in tmp_path.iterdir()}
    out = save_figure(_facets(), "fig-none", data=pd.DataFrame({"x": [1]}), folder=tmp_path, narrow=False)
    assert "narrow" not in out and not (tmp_path / f"fig-none{NARROW_SUFFIX}.svg").exists()


def test_save_figure_leaves_the_figure_as_drawn(tmp_path: Path):
    """A figure saved without closing it saves the same page layout again."""
    fig = _facets()
    data = pd.DataFrame({"x": [1]})
    save_figure(fig, "a", data=data, folder=tmp_path, close=False)
    save_figure(fig, "b", data=data, folder=tmp_path)
    def svg(name):  # matplotlib numbers the clip paths of a process's saves on: not a difference of layout
        return re.sub(r"\bp[0-9a-f]{10}\b", "p", (tmp_path / name).read_text(encoding="utf-8"))

    assert svg("a.svg") == svg("b.svg")
    assert svg("a-narrow.svg") == svg("b-narrow.svg")


def test_the_book_serves_the_phone_layout_by_its_suffix():
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import ldp_figure_narrow as ext

    assert ext.SUFFIX == NARROW_SUFFIX
    css = (ROOT / "book" / "_static" / "ldp.css").read_text(encoding="utf-8")
    assert f"@media (max-width: {ext.BREAKPOINT}px)" in css

