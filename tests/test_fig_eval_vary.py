"""Chapter 06's Figures 5 and 6, F1 and NCR on three data sets, and their claims
(ldp.book.chapters.c06_evaluation.eval_vary)."""
import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c06_evaluation import eval_vary as F

from figtools import bar_ranges, decide, page_ready, store_with, texts, titles

PANELS = {"URL": "URL (stand-in)", "AOL": "AOL", "Synthetic": "Synthetic"}
LEVELS = {"epsilon": [1.0, 2.0, 4.0], "k": [1, 4, 16]}
SCORE = {"PEM": 0.6, "MCM": 0.4, "SPM": 0.2}


def summary(x: str, shape=lambda protocol, v: SCORE[protocol], datasets=tuple(PANELS), std=0.3) -> pd.DataFrame:
    """A summarize-like frame of ``shape(protocol, x)`` with an SD of ``std`` (0.3: bars that would cross 0, 1)."""
    rows = [{"dataset": ds, "protocol": p, x: v, "f1_mean": shape(p, v), "f1_std": std, "f1_count": 10,
             "ncr_mean": shape(p, v), "ncr_std": std, "ncr_count": 10}
            for ds in datasets for p in F.METHODS for v in LEVELS[x]]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("x", ["epsilon", "k"])
def test_frame_is_the_summary_per_metric(x):
    s = summary(x, lambda p, v: float(np.clip(SCORE[p] + (v - 2) / 4, 0, 1)))
    data = F.frame(s, x=x, datasets=list(PANELS))
    assert list(data.columns) == ["panel", "dataset", "metric", "protocol", x, "mean", "std", "runs"]
    assert len(data) == 2 * len(s) and list(dict.fromkeys(data["panel"])) == list("abcdef")
    for metric in ("f1", "ncr"):
        got = data[data["metric"] == metric].sort_values(["dataset", "protocol", x]).reset_index(drop=True)
        want = s.sort_values(["dataset", "protocol", x]).reset_index(drop=True)
        np.testing.assert_array_equal(got["mean"], want[f"{metric}_mean"])
        np.testing.assert_array_equal(got["std"], want[f"{metric}_std"])


@pytest.mark.parametrize("x", ["epsilon", "k"])
def test_draw(x):
    s = summary(x, lambda p, v: [0.0, 0.5, 1.0][LEVELS[x].index(v)])  # means at the bounds
    fig = F.draw(F.frame(s, x=x, datasets=list(PANELS)), x=x, xlabel=x, panel_names=PANELS)
    page_ready(fig)
    assert titles(fig)[:3] == ["(a) URL (stand-in), F1", "(b) AOL, F1", "(c) Synthetic, F1"]
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1  # cut at 0 and 1
    assert len(fig.legends) == 1 and [t.get_text() for t in fig.legends[0].get_texts()] == list(F.METHODS)


def test_k_axis_keeps_small_k_apart():
    """Figure 6's k on a square-root axis: k = 1, 2, 4 stand apart (a linear axis to 32 crowds them)."""
    values = {f"{m}_{q}": v for m in ("f1", "ncr") for q, v in (("mean", 0.5), ("std", 0.1), ("count", 3))}
    s = pd.DataFrame([{"dataset": ds, "protocol": p, "k": k, **values}
                      for ds in PANELS for p in F.METHODS for k in (1, 2, 4, 8, 16, 32)])
    fig = F.draw(F.frame(s, x="k", datasets=list(PANELS)), x="k", xlabel="k", panel_names=PANELS)
    fig.canvas.draw()
    ax = fig.axes[0]
    to_px = lambda k: ax.transData.transform((k, 0))[0]  # noqa: E731
    width = ax.get_window_extent().width
    assert (to_px(2) - to_px(1)) / width > 0.08 and (to_px(4) - to_px(2)) / width > 0.1
    assert (to_px(32) - to_px(16)) / width > 0.2  # and the large k still spread
    shown = [t.get_text() for t in fig.axes[3].get_xticklabels() if t.get_visible() and t.get_text()]  # bottom row
    assert {"1", "2", "4", "16", "32"} <= set(shown)


def test_draw_says_why_a_data_set_is_missing():
    s = summary("k", datasets=("URL", "Synthetic"))
    data = F.frame(s, x="k", datasets=["URL", "AOL", "Synthetic"])
    fig = F.draw(data, x="k", xlabel="k", panel_names=PANELS, missing="is missing")
    assert sum(t.startswith("No AOL results:\nthe AOL data file\nis missing") for t in texts(fig)) == 2
    assert "AOL" not in set(data["dataset"])


def test_claims(tmp_path):
    figures = {F.NAMES[x]: F.frame(summary(x), x=x, datasets=list(PANELS)) for x in LEVELS}
    store = store_with(tmp_path, figures=figures)
    best = ("fig5-pem-best", "fig6-pem-best", "fig56-aol-pem-best")
    assert {i: decide(i, store)["verdict"] for i in best} == dict.fromkeys(best, "reproduced")
    assert decide("fig6-f1-ncr-correlated", store)["verdict"] == "reproduced"  # F1 = NCR at every point
    worse = {F.NAMES[x]: F.frame(summary(x, lambda p, v: 0.7 if p == "SPM" else SCORE[p], std=0.02), x=x,
                                 datasets=list(PANELS)) for x in LEVELS}
    store = store_with(tmp_path / "spm", figures=worse)
    assert decide("fig5-pem-best", store)["verdict"] == "not reproduced"
    no_aol = {F.NAMES[x]: F.frame(summary(x, datasets=("URL", "Synthetic")), x=x, datasets=["URL", "Synthetic"])
              for x in LEVELS}
    store = store_with(tmp_path / "no-aol", figures=no_aol)
    row = decide("fig56-aol-pem-best", store)
    assert row["verdict"] == "not testable here" and "AOL" in row["explanation"]
    assert decide("fig5-pem-best", store)["verdict"] == "reproduced"


def test_claims_of_the_anomalies_read_the_anomaly_table(tmp_path):
    figures = {F.NAMES[x]: F.frame(summary(x), x=x, datasets=list(PANELS)) for x in LEVELS}
    assert decide("s423-prefix-mass", store_with(tmp_path, figures=figures))["verdict"] == "not testable here"
    table = pd.DataFrame({"dataset": "URL", "protocol": "PEM", "k": 4, "quantity": ["kept_part1", "rank_part1_top4"],
                          "value": [4.0, 5.0]})
    store = store_with(tmp_path / "t", figures=figures, tables={(F.CHAPTER, "anomalies"): table})
    row = decide("s423-prefix-mass", store)
    assert row["verdict"] == "not reproduced"  # the 4th value's prefix ranks 5th, 4 kept
