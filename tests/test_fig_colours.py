"""Colours a reader tells apart, also with a colour-vision deficiency.

The colours are simulated as a reader with full protanopia, deuteranopia or tritanopia sees them (the
matrices of Machado, Oliveira and Fernandes 2009, severity 1, from ``colour-science``), and two colours
count as apart when their CIEDE2000 difference is at least :data:`APART` (a difference of about 2 is
barely visible side by side; 10 is told apart at a glance, also on a thin line or a small marker).

- the book's ramp for ordered series (:func:`ldp.book.plotting.series_colors`): neighbours apart for
  every length up to 5 (Figure 2's four n, m and ε; Figure 8's five η and five distributions);
- Figure 8 (``fig-evalmore-design``): in each panel, every two series apart by colour, or drawn with
  another marker or line style (panel (a): a method's budget split and partitioned users share the
  method's colour and differ by line and fill);
- Figure 2 (``fig-validation-identification``): the levels of each panel apart, each with its own marker.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_rgb

from ldp.book.chapters.c05_validation import identification
from ldp.book.chapters.c07_evaluation_more import design
from ldp.book.plotting import SERIES_LIGHTNESS, lightness, series_colors

colour = pytest.importorskip("colour")  # colour-science, pinned in requirements.txt

APART = 10.0
VISIONS = (None, "Protanomaly", "Deuteranomaly", "Tritanomaly")  # severity 1: the full deficiency


def seen(rgb, vision: str | None) -> np.ndarray:
    """sRGB colours (rows) as a reader with ``vision`` (None: normal) sees them, in CIE L*a*b*."""
    rgb = np.atleast_2d(np.asarray(rgb, dtype=float))[:, :3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # colour-science's notes (its tritanomaly matrices: the shift model)
        if vision is not None:
            linear = colour.models.eotf_sRGB(rgb) @ colour.blindness.matrix_cvd_Machado2009(vision, 1.0).T
            rgb = colour.models.eotf_inverse_sRGB(np.clip(linear, 0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # colour-science's notes (its tritanomaly matrices: the shift model)
        return colour.XYZ_to_Lab(colour.sRGB_to_XYZ(np.clip(rgb, 0, 1)))


def difference(a, b, vision: str | None) -> float:
    """CIEDE2000 difference of two colours as a reader with ``vision`` sees them."""
    return float(colour.delta_E(seen(a, vision)[0], seen(b, vision)[0], method="CIE 2000"))


def test_the_simulation_tells_what_it_should():
    """Red and green are apart for normal vision, not for a deuteranope; every vision tells black from white."""
    red, green = to_rgb("#d62728"), to_rgb("#2ca02c")
    assert difference(red, green, None) > 40 and difference(red, green, "Deuteranomaly") < 25
    assert all(difference((0, 0, 0), (1, 1, 1), v) > 90 for v in VISIONS)


def test_lightness_is_cie_lstar():
    assert lightness([(0, 0, 0), (1, 1, 1)]) == pytest.approx([0, 100], abs=1e-6)
    grey = [(0.5, 0.5, 0.5)]
    assert lightness(grey)[0] == pytest.approx(seen(grey, None)[0, 0], abs=0.01)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_series_neighbours_apart_for_every_vision(n):
    colors = series_colors(n)
    light = lightness(colors)
    assert light[0] == pytest.approx(SERIES_LIGHTNESS[0], abs=0.5) and light[-1] == pytest.approx(
        SERIES_LIGHTNESS[1], abs=0.5)
    assert np.all(np.diff(light) < 0), "not light to dark"
    close = [(i, v, round(difference(a, b, v), 1)) for v in VISIONS
             for i, (a, b) in enumerate(itertools.pairwise(colors)) if difference(a, b, v) < APART]
    assert not close, f"neighbours of series_colors({n}) too close (index, vision, ΔE2000): {close}"


def test_series_never_a_method_colour():
    from ldp.book.plotting import METHOD_STYLE

    for n in range(1, 8):
        assert not {to_rgb(c) for c in series_colors(n)} & {to_rgb(s["color"]) for s in METHOD_STYLE.values()}


def _panel_styles(ax) -> dict[str, tuple]:
    """label -> (colour, marker, line style, marker fill) of the entries of ``ax``'s legend."""
    leg = ax.get_legend()
    assert leg is not None, f"panel {ax.get_title()!r} has no legend of its own"
    return {t.get_text(): (to_rgb(h.get_color()), h.get_marker(), h.get_linestyle(), str(h.get_markerfacecolor()))
            for h, t in zip(leg.legend_handles, leg.get_texts())}


def _too_close(styles: dict[str, tuple]) -> list:
    """Pairs of series that differ by nothing but a colour too close for some vision."""
    out = []
    for (a, sa), (b, sb) in itertools.combinations(styles.items(), 2):
        if sa[1:] != sb[1:]:
            continue  # another marker, line or fill
        for v in VISIONS:
            if difference(sa[0], sb[0], v) < APART:
                out.append((a, b, v, round(difference(sa[0], sb[0], v), 1)))
    return out


def _design_frame() -> pd.DataFrame:
    rows = []
    for eps in (1.0, 2.0, 4.0):
        rows.append({"panel": "a", "series": design.PEM_OPTIMISED, "epsilon": eps})
        for p in ("SPM", "MCM"):
            rows += [{"panel": "a", "series": f"{p}, budget split", "epsilon": eps},
                     {"panel": "a", "series": f"{p}, partitioned users", "epsilon": eps}]
        rows += [{"panel": "b", "series": f"eta = {e}", "epsilon": eps} for e in (2, 4, 6, 8, 10)]
        rows.append({"panel": "b", "series": "optimised (dashed line)", "epsilon": eps})
        rows += [{"panel": "c", "series": s, "epsilon": eps} for s in (
            "Zipf, exponent 1 (paper)", "Zipf, exponent 1.5", "Zipf, exponent 2", "uniform (Zipf, exponent 0)",
            "true law (exponential)")]
    d = pd.DataFrame(rows)
    return d.assign(x=d["epsilon"], f1_mean=0.5, f1_std=0.1, runs=10).astype({"runs": "Int64"})


def test_figure_8_each_panel_its_legend_and_colours_apart():
    fig = design.draw(_design_frame())
    assert not fig.legends, "one legend for all panels"
    styles = [_panel_styles(ax) for ax in fig.axes]
    assert [len(s) for s in styles] == [5, 6, 5]
    for ax, s in zip(fig.axes, styles):
        assert not _too_close(s), f"{ax.get_title()}: series told apart by colour alone, too close: {_too_close(s)}"
    # the η of (b) and the distributions of (c): the ramp, light to dark, neighbours apart for every vision
    for s, names in ((styles[1], [f"η = {e}" for e in (2, 4, 6, 8, 10)]), (styles[2], list(styles[2]))):
        colors = [s[n][0] for n in names]
        assert colors == [to_rgb(c) for c in series_colors(5)]


def test_figure_2_levels_apart_with_a_marker_each():
    rows = [{"panel": p, "axis": a, "level": lv, "rank": r, "frequency": 0.3 / r, "simulated_rate": 0.5,
             "errorbar_2se": 0.1, "runs": 10, "analysis": 0.5}
            for p, a, levels in (("a", "n", (100_000, 300_000, 1_000_000, 3_000_000)), ("b", "m", (32, 48, 64, 96)),
                                 ("c", "epsilon", (0.5, 1.0, 2.0, 4.0)))
            for lv in levels for r in range(1, 5)]
    fig = identification.draw(pd.DataFrame(rows))
    for ax in fig.axes:
        colors = list({h.get_color(): None for h in ax.get_legend().legend_handles})
        assert [to_rgb(c) for c in colors] == [to_rgb(c) for c in series_colors(4)], ax.get_title()
        shapes = {tuple(np.round(path.vertices, 3).ravel()) for c in ax.collections if isinstance(c, PathCollection)
                  for path in c.get_paths()}
        assert len(shapes) == 4, f"{ax.get_title()}: not a marker per level"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == [identification.SIMULATION, identification.ANALYSIS]
