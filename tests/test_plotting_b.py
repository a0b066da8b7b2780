"""The figures of chapters 05 and 06 (paper Figures 2-6 and 9) and the summaries behind them.

Each figure function returns ``(fig, data)``: the tests check that ``data`` holds exactly the
input's rows, that no text is smaller than 9 pt, that error bars stay inside the quantity's
range, and that a figure-wide legend sits outside every panel.  The summaries are checked on
small hand-made data sets whose answer is known (a prefix shared by several values outranks a
heavy hitter's own prefix; a segment pattern shared by several values beats the top value's).
"""
from __future__ import annotations

import json

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import ldp
from ldp.analysis import olh_variance
from ldp.datasets import Dataset
from ldp.experiments.summary import (
    anomaly_table,
    part_ranks,
    predicted_variance,
    summary_value,
    top_two_gap,
    whole_value_report,
)
from ldp.plotting import FONT_SIZE
from ldp.plotting import evaluation as ev
from ldp.plotting import validation as va
from ldp.values import from_ints

matplotlib.use("Agg")
RNG = np.random.default_rng(7)


def fonts(fig) -> list[float]:
    return [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]


def bar_ranges(fig) -> list[tuple[float, float]]:
    """(lowest, highest) y of every error bar drawn in ``fig``."""
    out = []
    for ax in fig.axes:
        for coll in ax.collections:
            if isinstance(coll, matplotlib.collections.LineCollection):
                for seg in coll.get_segments():
                    if len(seg):
                        out.append((float(np.min(seg[:, 1])), float(np.max(seg[:, 1]))))
    return out


def legend_outside_panels(fig) -> bool:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [ax.get_window_extent(renderer) for ax in fig.axes]
    return all(not leg.get_window_extent(renderer).overlaps(b) for leg in fig.legends for b in boxes)


def method_summary(x: str, levels) -> pd.DataFrame:
    """A summarize-like frame with means near 0 and 1 and large SDs (bars that would cross the bounds)."""
    rows = []
    for ds in ("URL", "AOL", "Synthetic"):
        for p in ("PEM", "MCM", "SPM"):
            for v in levels:
                m = float(RNG.choice([0.0, 0.05, 0.5, 0.97, 1.0]))
                rows.append({"dataset": ds, "protocol": p, x: v, "f1_mean": m, "f1_std": 0.3, "f1_count": 10,
                             "ncr_mean": m, "ncr_std": 0.4, "ncr_count": 10})
    return pd.DataFrame(rows)


PANEL = {"URL": "URL (stand-in)", "AOL": "AOL", "Synthetic": "Synthetic"}


@pytest.mark.parametrize("x", ["epsilon", "k"])
def test_method_panels(x):
    summary = method_summary(x, [1.0, 2.0, 4.0] if x == "epsilon" else [1, 4, 16])
    fig, data = ev.method_panels(summary, x, x, panel_names=PANEL)
    assert len(data) == 2 * len(summary)  # one row per point and metric
    for metric in ("f1", "ncr"):
        got = data[data["metric"] == metric].sort_values(["dataset", "protocol", x]).reset_index(drop=True)
        want = summary.sort_values(["dataset", "protocol", x]).reset_index(drop=True)
        np.testing.assert_array_equal(got["mean"], want[f"{metric}_mean"])
        np.testing.assert_array_equal(got["std"], want[f"{metric}_std"])
    assert min(fonts(fig)) >= FONT_SIZE
    assert fig.get_figwidth() == pytest.approx(ldp.plotting.FULL_WIDTH)
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1  # cut at 0 and 1
    assert len(fig.legends) == 1 and legend_outside_panels(fig)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["PEM", "MCM", "SPM"]
    plt.close(fig)


def test_method_panels_missing_data_set():
    summary = method_summary("k", [1, 2])
    fig, data = ev.method_panels(summary[summary["dataset"] != "AOL"], "k", "k", panel_names=PANEL,
                                 missing="is missing")
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    assert sum("No AOL results" in t for t in texts) == 2 and "AOL" not in set(data["dataset"])
    plt.close(fig)


def ident_frame() -> pd.DataFrame:
    rows = []
    for panel, axis, levels in (("a", "n", [100_000, 1_000_000]), ("b", "m", [32, 64]), ("c", "epsilon", [1.0, 4.0])):
        for level in levels:
            for rank in range(1, 9):
                sim = float(RNG.choice([0.0, 0.1, 0.5, 1.0]))
                rows.append({"panel": panel, "axis": axis, "level": level, "rank": rank, "frequency": 0.3 / rank,
                             "sim": sim, "runs": 10, "analysis": min(1.0, sim + 0.05)})
    return pd.DataFrame(rows)


def test_identification_figure():
    ident = ident_frame()
    fig, data = va.identification_figure(ident)
    assert len(data) == len(ident)
    np.testing.assert_array_equal(data["simulated_rate"], ident["sim"])
    np.testing.assert_allclose(data["errorbar_2se"], 2 * np.sqrt(ident["sim"] * (1 - ident["sim"]) / 10))
    assert min(fonts(fig)) >= FONT_SIZE
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1
    for ax in fig.axes:  # each panel's legend (the levels) below the panel, not over its data
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        assert not ax.get_legend().get_window_extent(r).overlaps(ax.get_window_extent(r))
    plt.close(fig)


def util_frame() -> pd.DataFrame:
    rows = []
    for panel, axis, xs in (("a", "g", [1, 2, 3]), ("b", "etas", [2, 6, 10]), ("c", "group_fractions",
                                                                              [10_000, 50_000, 90_000])):
        for x in xs:
            for dist in ("zipf", "zipf(-20)"):
                for metric in ("f1", "ncr"):
                    sim = float(RNG.choice([0.02, 0.5, 0.99]))
                    rows.append({"panel": panel, "axis": axis, "x": x, "dist": dist, "metric": metric, "sim": sim,
                                 "sem": 0.1, "runs": 10, "analysis": sim, "lower": sim + (0.05 if panel == "a" else 0)})
    return pd.DataFrame(rows)


def test_utility_figure():
    util = util_frame()
    fig, data = va.utility_figure(util, {"a": "(a)", "b": "(b)", "c": "(c)"}, {"a": "g", "b": "eta", "c": "n[1]"})
    assert len(data) == len(util) and set(data["lower_drawn"][data["panel"] == "a"]) == {True}
    assert set(data["lower_drawn"][data["panel"] != "a"]) == {False}
    assert va.lower_panels(util) == ["a"]
    assert min(fonts(fig)) >= FONT_SIZE
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1
    assert legend_outside_panels(fig)
    fig.canvas.draw()
    ax = fig.axes[2]
    lo, hi = ax.get_xlim()
    labels = [t.get_text() for t, v in zip(ax.get_xticklabels(), ax.get_xticks()) if lo <= v <= hi]
    assert labels and all(lab.endswith("k") for lab in labels)  # 20k, 40k: short enough not to overlap
    plt.close(fig)


def test_variance_figure_bars_stay_above_zero():
    rows = [{"protocol": p, "epsilon": e, "var_mean": 1e6 / e, "var_std": 3e6 / e, "var_count": 10, "var_sem": 1e5,
             "var_pred": 1.1e6 / e, "var_full": 1.2e6 / e} for p in ("PEM", "MCM", "SPM") for e in (1.0, 2.0, 4.0)]
    table = pd.DataFrame(rows)
    fig, data = ev.variance_figure(table, title="t")
    assert len(data) == len(table) and min(fonts(fig)) >= FONT_SIZE
    lo, _ = zip(*bar_ranges(fig))
    assert min(lo) > 0  # cut above 0 on the log axis
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)


def test_engines_figure_data_and_rng():
    runs = pd.DataFrame([{"protocol": p, "f1": f, "ncr": f} for p in ("PEM", "MCM") for f in (0.5, 0.6, 0.7)])
    check = pd.DataFrame({"f1 protocol": [0.6, 0.1], "ncr protocol": [0.6, 0.1]}, index=["PEM", "MCM"])
    a = ev.engines_figure(runs, check, ["PEM", "MCM"], rng=np.random.default_rng(1), title="t")
    b = ev.engines_figure(runs, check, ["PEM", "MCM"], rng=np.random.default_rng(1), title="t")
    pd.testing.assert_frame_equal(a[1], b[1])
    assert len(a[1]) == 2 * (len(runs) + 2) and min(fonts(a[0])) >= FONT_SIZE
    plt.close("all")


def test_wide_table_has_flat_headers_and_no_scientific_notation():
    table = pd.DataFrame({"protocol": ["PEM", "MCM"] * 2, "epsilon": [1.0, 1.0, 2.0, 2.0],
                          "var_mean": [1.234e6, 2.5e6, 3.3e5, 9.9e5], "obs/pred": [0.98765, 1.2, 0.5, 1.0]})
    out = ev.wide_table(table, {"var_mean": "Var (10⁶)", "obs/pred": "÷ eq. (3)"}, scales={"var_mean": 1e6})
    assert list(out.columns) == ["PEM Var (10⁶)", "PEM ÷ eq. (3)", "MCM Var (10⁶)", "MCM ÷ eq. (3)"]
    assert out.loc[1.0, "PEM Var (10⁶)"] == "1.23" and out.loc[1.0, "PEM ÷ eq. (3)"] == "0.988"
    assert not out.apply(lambda c: c.str.contains("e[+-]", regex=True)).any().any()


# --------------------------------------------------------------------------------------------------
# summaries (ldp.experiments.summary)
# --------------------------------------------------------------------------------------------------
def test_whole_value_report_reads_the_budget_split_from_the_plan():
    n = 600_000
    assert whole_value_report(ldp.MCM(2.0, 16, 64), n) == (1.0, n)  # eps/2, every user
    e, users = whole_value_report(ldp.SPM(3.0, 16, 64), n)
    assert e == pytest.approx(1.0) and users == n  # eps/3, every user
    pem = ldp.PEM(2.0, 16, 64)
    e, users = whole_value_report(pem, n)
    assert e == 2.0 and users == pytest.approx(pem.config(n).group_fractions[-1] * n)  # the last group only
    e, users = whole_value_report(ldp.MCM(2.0, 16, 64, final_fraction=0.1), n)
    assert e == 2.0 and users == pytest.approx(0.1 * n)  # the final group at the full budget


def test_predicted_variance_is_eq3_scaled():
    n, pem = 10**6, ldp.PEM(2.0, 16, 64)
    frac = pem.config(n).group_fractions[-1]
    assert predicted_variance(pem, n) == pytest.approx(float(olh_variance(2.0, frac * n)) / frac**2)
    assert predicted_variance(ldp.MCM(2.0, 16, 64), n) == pytest.approx(float(olh_variance(1.0, n)))
    # a value nobody holds (f = 0) and every user reporting: the exact variance is eq. (3)
    assert predicted_variance(ldp.MCM(2.0, 16, 64), n, [0.0]) == pytest.approx(float(olh_variance(1.0, n)))
    assert predicted_variance(pem, n, [0.1]) > predicted_variance(pem, n, [0.0])


def prefix_mass_data() -> Dataset:
    # the top value 0x10 (100 users) against three values sharing the 4-bit prefix 0x2 (3 x 60 users)
    return Dataset.from_counts(from_ints([0x10, 0x21, 0x22, 0x23, 0x05], 8), [100, 60, 60, 60, 5], 8)


def test_part_ranks_pem_prefix_mass():
    ds = prefix_mass_data()
    r = part_ranks(ldp.PEM(2.0, 1, 8, gamma=2, eta=2), ds)  # rounds at 4, 6, 8 bits, |C_i| = 1
    assert r["rank"].tolist() == [2, 0, 0] and not r["held"].any()  # lost in round 1, dropped after
    r = part_ranks(ldp.PEM(2.0, 2, 8, gamma=2, eta=2), ds)  # |C_i| = 2: room for both prefixes
    assert r.groupby("j")["held"].all().all()


def test_part_ranks_segments():
    ds = prefix_mass_data()
    r = part_ranks(ldp.SPM(2.0, 1, 8, segments=2), ds)  # segments 0:4 and 4:8, one pattern kept each
    assert r["rank"].tolist() == [2, 1] and r["held"].tolist() == [False, True]


def test_anomaly_table_quantities():
    ds = prefix_mass_data()
    summary = pd.DataFrame({"dataset": ["D"], "protocol": ["PEM"], "k": [1], "f1_mean": [0.0], "f1_std": [0.0]})
    t = anomaly_table({"D": ds}, summary, epsilon=2.0, pem_ks=(1,), part_ks=())
    q = dict(zip(t["quantity"], t["value"]))
    assert list(t.columns) == ["dataset", "protocol", "k", "quantity", "value"]
    assert {"noise_free_f1", "kept_part1", "rank_part1_top1", "top2_gap_sd", "top2_order_prob", "f1_mean"} <= set(q)
    assert q["f1_mean"] == 0.0 and summary_value(summary, "D", "PEM", "k", 1) == 0.0
    assert np.isnan(summary_value(summary, "D", "PEM", "k", 2))


def test_top_two_gap():
    ds = Dataset.from_counts(from_ints([1, 2, 3], 16), [50_000, 49_000, 1_000], 16)
    gap = top_two_gap(ds, ldp.MCM(4.0, 1, 16))
    sd = np.sqrt(2 * olh_variance(2.0, ds.n))
    assert gap["c1"] - gap["c2"] == 1_000 and gap["z"] == pytest.approx(1_000 / sd)
    assert 0.5 < gap["phi"] < 1


# --------------------------------------------------------------------------------------------------
# the tables chapter 06 saves for the claims (after the quick build that `make test` runs first)
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, columns", [("datasets", ["dataset", "n", "n_distinct", "f_16"]),
                                           ("anomalies", ["dataset", "protocol", "k", "quantity", "value"])])
def test_chapter_06_tables_saved(name, columns):
    from ldp.reporting.results import ResultStore

    store = ResultStore.for_build("quick")
    if not store.has("06_evaluation", name):
        if not (store.figures / "fig-eval-vary-k.csv").is_file():
            pytest.skip("the quick book is not built (`make test` builds it before the tests)")
        pytest.fail(f"chapter 06 did not save the table {name}")
    table = store.load("06_evaluation", name)
    assert list(table.columns) == columns and len(table) > 0
    if name == "anomalies":
        urls = table[(table["dataset"] == "URL") & (table["protocol"] == "PEM") & (table["k"] == 4)]
        assert "noise_free_f1" in set(urls["quantity"])
    meta = json.loads(store.table_path("06_evaluation", name).with_suffix(".json").read_text())
    assert meta["columns"] == columns
