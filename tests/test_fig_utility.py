"""Chapter 05's Figures 3 and 4, utility against eq. (4), and their claims
(ldp.book.chapters.c05_validation.utility)."""
import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c05_validation import utility as F

from figtools import bar_ranges, decide, page_ready, store_with, titles


def util_frame(shape) -> pd.DataFrame:
    """A utility table of Figure 3's panels, the simulation ``shape(panel, x)`` for every series."""
    rows = []
    for panel, axis, xs in (("a", "g", [1, 2, 3]), ("b", "etas", [2, 4, 6, 8, 10]),
                            ("c", "group_fractions", [10_000, 50_000, 90_000])):
        for x in xs:
            for dist in ("zipf", "zipf(-20)"):
                for metric in ("f1", "ncr"):
                    sim = shape(panel, x)
                    rows.append({"panel": panel, "axis": axis, "x": x, "dist": dist, "metric": metric, "sim": sim,
                                 "sem": 0.01, "runs": 100, "analysis": sim,
                                 "lower": sim + (0.05 if panel == "a" else 0)})
    return pd.DataFrame(rows)


def peaked(panel, x):  # falls with g, peaks at eta[1] = 6 and n[1] = 50,000, symmetric there
    return {"a": 0.9 - 0.1 * x, "b": 0.8 - 0.02 * abs(x - 6), "c": 0.8 - abs(x - 50_000) / 1e6}[panel]


@pytest.fixture(scope="module")
def util():
    return util_frame(peaked)


def test_frame(util):
    data = F.frame(util)
    assert len(data) == len(util) and F.lower_panels(util) == ["a"]
    drawn = data.groupby("panel")["lower_drawn"].agg(["all", "any"])
    assert drawn.loc["a", "all"] and not drawn.loc[["b", "c"], "any"].any()
    np.testing.assert_allclose(data["errorbar_2se"], 2 * util["sem"])


def test_draw(util):
    fig = F.draw(F.frame(util), {"a": "(a)", "b": "(b)", "c": "(c)"}, {"a": "g", "b": "eta", "c": "n[1]"})
    page_ready(fig)
    assert titles(fig) == ["(a)", "(b)", "(c)"]
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1
    fig.canvas.draw()
    ax = fig.axes[2]
    lo, hi = ax.get_xlim()
    labels = [t.get_text() for t, v in zip(ax.get_xticklabels(), ax.get_xticks()) if lo <= v <= hi]
    assert labels and all(lab.endswith("k") for lab in labels)  # 20k, 40k: short enough not to overlap


def test_draw_as_the_caption_says(util):
    """Filled circles: F1; open squares: NCR (the caption's words); the legend says simulation and analysis."""
    from matplotlib.collections import PathCollection

    fig = F.draw(F.frame(util), {"a": "(a)", "b": "(b)", "c": "(c)"}, {"a": "g", "b": "eta", "c": "n[1]"})
    dots = [c for c in fig.axes[0].collections if isinstance(c, PathCollection)]
    faces = np.concatenate([c.get_facecolors() for c in dots])
    edges = np.concatenate([c.get_edgecolors() for c in dots])
    assert len(faces) == 2 * 2 * 3  # F1 and NCR, two distributions, three g
    open_marks = faces[:, 3] == 0  # no fill: an open marker
    assert open_marks.sum() == len(faces) / 2 and (edges[:, 3] > 0).all()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert F.SIMULATION in legend and F.ANALYSIS in legend
    handles = dict(zip(legend, fig.legends[0].legend_handles))
    assert handles["zipf, NCR"].get_marker() == "s" and handles["zipf, NCR"].get_markerfacecolor() == "white"
    assert handles["zipf, F1"].get_marker() == "o" and handles["zipf, F1"].get_linestyle() == "-"


def test_claims_on_the_observations(util, tmp_path):
    store = store_with(tmp_path, figures={F.NAMES[3]: F.frame(util)})
    verdicts = {c: decide(c, store)["verdict"] for c in ("fig3-analysis-matches", "fig3a-fewer-rounds",
                                                         "fig3b-eta-optimal", "fig3b-symmetric", "fig3c-half-optimal",
                                                         "fig3c-symmetric")}
    assert verdicts == dict.fromkeys(verdicts, "reproduced")
    skewed = util_frame(lambda panel, x: peaked(panel, x) + (0.05 * x if panel == "b" else 0))  # max moves to 10
    store = store_with(tmp_path / "s", figures={F.NAMES[3]: F.frame(skewed)})
    assert decide("fig3b-eta-optimal", store)["verdict"] == "not reproduced"
    assert decide("fig3b-symmetric", store)["verdict"] == "not reproduced"
