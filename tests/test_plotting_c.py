"""The plotting and summary functions of chapters 07 and 08 (ldp.plotting.evaluation_more, ldp.plotting.after_pem).

Each figure function must return the figure and exactly the rows it plots, draw
no text below 9 pt, cut F1 error bars at 0 and 1, and keep its legends outside
the panels' data.  The result tables the claims read must have the columns
:mod:`ldp.reporting.results` lists, and the quick build must have saved them.
"""
from __future__ import annotations

import json

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer

import ldp
from ldp import datasets
from ldp.paths import generated_dir
from ldp.plotting import (
    FONT_SIZE,
    after_pem_figure,
    after_pem_findings,
    after_pem_protocols,
    bits_per_user,
    design_figure,
    design_findings,
    f1_summary_table,
    k_for_threshold,
    pem_standing,
    pem_verdict,
    report_bits,
    threshold_figure,
    threshold_findings,
    threshold_release_table,
)
from ldp.reporting.results import EXTRA_TABLES, ResultStore

RNG = np.random.default_rng(7)
EPS = [0.9, 2.0, 4.0]


def _f1(n):
    """F1 means near the bounds, so that mean ± SD would cross 0 and 1."""
    return np.resize([0.0, 0.97, 1.0, 0.5, 0.02], n)


def _summary(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    n = len(df)
    return df.assign(f1_mean=_f1(n), f1_std=np.resize([0.2, 0.1, 0.0, 0.3], n), f1_count=3,
                     f1_sem=np.resize([0.2, 0.1, 0.0, 0.3], n) / np.sqrt(3))


def _figure_checks(fig, bounds=(0.0, 1.0)):
    """Fonts >= 9 pt, error bars within bounds, every legend outside every panel's data area."""
    fig.canvas.draw()
    small = [(t.get_text(), t.get_fontsize()) for t in fig.findobj(matplotlib.text.Text)
             if t.get_text().strip() and t.get_visible() and t.get_fontsize() < FONT_SIZE]
    assert not small, small
    n_bars = 0
    for ax in fig.axes:
        for cont in ax.containers:
            if isinstance(cont, ErrorbarContainer):
                for coll in cont.lines[2]:
                    for seg in coll.get_segments():
                        n_bars += 1
                        assert bounds[0] - 1e-12 <= seg[:, 1].min() and seg[:, 1].max() <= bounds[1] + 1e-12, seg
    assert n_bars
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    assert legends
    renderer = fig.canvas.get_renderer()
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), "a legend covers a panel"


# --------------------------------------------------------------------------- chapter 07
@pytest.fixture
def fig7_summaries():
    thetas = [0.01, 0.023, 0.035]
    s7a = _summary([{"protocol": p, "epsilon": e} for p in ("PEM", "SPM", "MCM") for e in EPS])
    s7bc = _summary([{"protocol_name": p, "threshold": t, "epsilon": e} for p in ("PEM", "SPM", "MCM")
                     for t in thetas for e in (2.0, 4.0)])
    for s in (s7a, s7bc):
        s["n_found_mean"] = RNG.uniform(0, 50, len(s))
        s["n_true_mean"], s["n_true_std"] = 16.0, 0.0
    return s7a, s7bc


def test_threshold_figure_plots_exactly_its_rows(fig7_summaries):
    s7a, s7bc = fig7_summaries
    fig, data = threshold_figure(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))
    try:
        assert list(data.columns) == ["panel", "protocol", "epsilon", "threshold", "f1_mean", "f1_std", "runs"]
        assert len(data) == len(s7a) + len(s7bc)
        a = data[data["panel"] == "a"].merge(s7a, on=["protocol", "epsilon"], suffixes=("", "_in"))
        assert len(a) == len(s7a) and np.array_equal(a["f1_mean"], a["f1_mean_in"])
        bc = data[data["panel"] != "a"].rename(columns={"protocol": "protocol_name"})
        m = bc.merge(s7bc, on=["protocol_name", "threshold", "epsilon"], suffixes=("", "_in"))
        assert len(m) == len(s7bc) and np.array_equal(m["f1_std"], m["f1_std_in"])
        assert set(data.loc[data["panel"] == "c", "epsilon"]) == {4.0}
        _figure_checks(fig)
    finally:
        plt.close(fig)


def test_threshold_release_table_has_the_listed_columns(fig7_summaries):
    s7a, s7bc = fig7_summaries
    table = threshold_release_table(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))
    assert tuple(table.columns) == EXTRA_TABLES["07_evaluation_more"]["threshold-release"][0]
    assert len(table) == len(s7a) + len(s7bc)
    assert (table["true_count"] == 16).all() and set(table["panel"]) == {"a", "b", "c"}
    assert np.isclose(table["released_mean"].sum(), s7a["n_found_mean"].sum() + s7bc["n_found_mean"].sum())
    s7bc.loc[0, "n_true_std"] = 1.0  # the runs of a point disagree on the truth: not one shared data set
    with pytest.raises(ValueError, match="n_true"):
        threshold_release_table(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))


def test_threshold_findings_gap_and_wins(fig7_summaries):
    s7a, s7bc = fig7_summaries
    f = threshold_findings(s7a, s7bc, eps_bc=(2.0, 4.0))
    wide = s7a.pivot(index="epsilon", columns="protocol", values="f1_mean")
    gap = wide["PEM"] - wide[["SPM", "MCM"]].max(axis=1)
    assert f["f7_gap_eps2"] == pytest.approx(gap.loc[2.0]) and f["f7_max_gap"] == pytest.approx(gap.max())
    assert f["f7_n_pem_wins"] == int((gap > 0).sum()) and f["theta_low"] == 0.01
    assert f["f7_best_other_name_eps2"] in ("SPM", "MCM")


def test_k_for_threshold_counts_the_law():
    law = np.array([0.05, 0.03, 0.023, 0.01])
    assert [k_for_threshold(law, t) for t in (0.023, 0.0231, 0.06, 0.0)] == [3, 2, 1, 4]


def test_design_figure_plots_exactly_its_rows():
    s8a = _summary([{"protocol": p, "epsilon": e} for p in
                    ("PEM (optimised)", "SPM, budget split", "SPM, partitioned users", "MCM, budget split",
                     "MCM, partitioned users") for e in EPS])
    etas = [2, 6, 10]
    s8b = _summary([{"protocol": f"eta = {h}", "epsilon": e} for h in etas for e in EPS])
    s8c = _summary([{"assumption": a, "epsilon": e, "configuration": "etas=12", "predicted F1": 0.5}
                    for a in ("Zipf 1", "Zipf 2", "uniform") for e in EPS])
    fig, data = design_figure(s8a, s8b, s8c, etas=etas)
    try:
        assert list(data.columns) == ["panel", "series", "epsilon", "x", "f1_mean", "f1_std", "runs"]
        assert len(data) == len(s8a) + len(s8b) + len(EPS) + len(s8c)  # (b) also draws optimised PEM dashed
        c = data[data["panel"] == "c"]
        assert np.allclose(np.abs(c["x"] - c["epsilon"]).max(), 0.06) and (c["x"] != c["epsilon"]).any()
        ref = data[(data["panel"] == "b") & (data["series"] == "optimised (dashed line)")]
        assert ref["f1_std"].isna().all() and len(ref) == len(EPS)
        _figure_checks(fig)
    finally:
        plt.close(fig)
    f = design_findings(s8a, s8b, s8c, etas=etas)
    assert f["eta_lo"] == 2 and f["eta_hi"] == 10 and f["eta_n_eps"] == len(EPS)
    assert f["mcm_gain_eps2"] == pytest.approx(f["mcm_part_eps2"] - f["mcm_split_eps2"])


# --------------------------------------------------------------------------- chapter 08
METHODS = [label for _, _, label in after_pem_protocols(2**20)]


def _grid_summary(x: str, values, datasets_=("URL", "AOL", "Synthetic")) -> pd.DataFrame:
    rows = [{"dataset": d, "protocol": p, "epsilon": v if x == "epsilon" else 2.0, "k": v if x == "k" else 16}
            for d in datasets_ for p in METHODS for v in values]
    s = _summary(rows)
    return s.assign(ncr_mean=s["f1_mean"], ncr_std=s["f1_std"])


def test_after_pem_protocols_are_the_chapters():
    assert METHODS == ["PEM", "MCM", "SPM", "TreeHist", "TreeHist (8 bits)", "SFP"]
    assert all(kw["query_limit"] == 2**20 for _, kw, _ in after_pem_protocols(2**20))


@pytest.mark.parametrize("x", ["epsilon", "k"])
def test_after_pem_figure_plots_exactly_its_rows(x):
    s = _grid_summary(x, EPS if x == "epsilon" else [1, 8, 16])
    fig, data = after_pem_figure(s, x=x, xlabel=x, methods=METHODS)
    try:
        assert list(data.columns) == ["panel", "dataset", "metric", "protocol", x, "mean", "std", "runs"]
        m = data.merge(s, on=["dataset", "protocol", x])
        assert len(m) == len(s) == len(data) and np.array_equal(m["mean"], m["f1_mean"])
        assert dict(zip(data["dataset"], data["panel"])) == {"URL": "a", "AOL": "b", "Synthetic": "c"}
        _figure_checks(fig)
        assert [t.get_text() for t in fig.legends[0].get_texts()] == METHODS  # one legend, methods in order
    finally:
        plt.close(fig)


def test_after_pem_figure_says_why_a_data_set_is_missing():
    s = _grid_summary("epsilon", EPS, datasets_=("URL", "Synthetic"))
    fig, data = after_pem_figure(s, x="epsilon", xlabel="eps", methods=METHODS,
                                 missing={"AOL": "the AOL data file\nis missing in this build"})
    try:
        texts = [t.get_text() for t in fig.axes[1].texts]
        assert len(texts) == 1 and texts[0].startswith("No AOL results") and "missing" in texts[0]
        assert "AOL" not in set(data["dataset"])
    finally:
        plt.close(fig)


def test_pem_standing_and_verdict_say_where_pem_trails():
    s = _grid_summary("k", [1, 16], datasets_=("URL", "Synthetic"))
    s["f1_mean"] = 0.5
    s.loc[s["protocol"] == "PEM", "f1_mean"] = 0.8
    trail = (s["dataset"] == "URL") & (s["k"] == 1)
    s.loc[trail & (s["protocol"] == "SFP"), "f1_mean"] = 0.9  # SFP ahead of PEM at one point
    s.loc[trail & (s["protocol"] == "PEM"), ["f1_mean", "f1_sem"]] = [0.6, 0.1]
    s.loc[trail & (s["protocol"] == "SFP"), "f1_sem"] = 0.0
    e = _grid_summary("epsilon", [2.0], datasets_=("URL", "Synthetic"))
    e["f1_mean"] = np.where(e["protocol"] == "PEM", 0.7, 0.4)
    table = f1_summary_table(e, s)
    assert list(table.columns) == ["grid", "dataset", "protocol", "epsilon", "k", "f1_mean", "f1_std", "f1_sem",
                                   "ncr_mean", "ncr_std", "runs"]
    standing = pem_standing(table)
    row = standing[(standing["grid"] == "k") & (standing["dataset"] == "URL") & (standing["k"] == 1)].iloc[0]
    assert row["outcome"] == "trails" and row["best_other"] == "SFP"
    assert row["margin"] == pytest.approx(-0.3) and row["margin_se"] == pytest.approx(0.1)
    assert (standing[standing["grid"] == "k"]["outcome"] == "leads").sum() == 3
    deploy = pd.DataFrame({"bits per user": [68.0, 142.0, 142.0, 2176.0, 132.0, 198.0],
                           "server s": [0.4, 0.02, 0.2, 3.1, 0.6, 0.6], "counts-engine ms": 10.0},
                          index=pd.Index(["PEM", "TreeHist", "TreeHist (8 bits)", "SFP", "MCM", "SPM"],
                                         name="protocol"))
    text = pem_verdict(standing, deploy, k_fixed=16, eps_fixed=2.0)
    assert "It trails on URL at k = 1 (SFP 0.90 against PEM's 0.60: 0.30 behind, 3.0 standard errors" in text
    assert "No protocol beats it there." in text  # the epsilon grid
    assert "68 bits, the fewest" in text and "20.0 times as long as TreeHist (0.02 s)" in text
    f = after_pem_findings(table, standing, deploy, eps_fixed=2.0, no_aol="is missing")
    assert f["k_pem_best"] == 3 and f["k_points"] == 4 and f["url_sfp_f1_eps2"] == 0.4
    assert "is missing in this build" in f["aol_text"] and f["bits_treehist8"] == 142.0
    assert not [k for k in f if "aol" in k and k != "aol_text"]  # chapter 08 without AOL glues no AOL number


def test_report_bits_by_oracle():
    assert report_bits(ldp.OLH(2.0, d_prime=8)) == 64 + 3
    hr = ldp.HR(2.0)
    assert report_bits(hr) == hr.bits_per_report > 64
    assert report_bits(ldp.CMS(2.0)) == 64 + 1024
    with pytest.raises(TypeError, match="GRR"):
        report_bits(ldp.GRR(2.0, 16))
    plan = ldp.PEM(2.0, 4, 32).plan(5000, rng=0)
    assert bits_per_user(plan) == pytest.approx(report_bits(plan.questions[0][0].oracle()))


def test_deployer_table_measures_every_protocol():
    from ldp.plotting import deployer_table

    data = datasets.exponential(3000, scale=0.05, m=32, rng=1)
    protos = [p for p in after_pem_protocols(2**16) if p[2] in ("PEM", "SFP")]
    t = deployer_table(protos, data, epsilon=2.0, k=4, counts_ms={"PEM": 1.5})
    assert list(t.index) == ["PEM", "SFP"] and t.loc["PEM", "counts-engine ms"] == 1.5
    assert np.isnan(t.loc["SFP", "counts-engine ms"]) and (t["server s"] > 0).all() and (t["reports MB"] > 0).all()
    assert t.loc["SFP", "bits per user"] > t.loc["PEM", "bits per user"]


# --------------------------------------------------------------------------- the quick build's tables
def _built(chapter: str) -> bool:
    manifest = generated_dir() / "cache" / "quick" / "manifest.json"
    return manifest.is_file() and chapter in json.loads(manifest.read_text(encoding="utf-8"))


@pytest.mark.parametrize("chapter, name, columns", [
    ("07_evaluation_more", "threshold-release", EXTRA_TABLES["07_evaluation_more"]["threshold-release"][0]),
    ("08_after_pem", "f1-summary", ("grid", "dataset", "protocol", "epsilon", "k", "f1_mean", "f1_std", "f1_sem",
                                    "ncr_mean", "ncr_std", "runs")),
    ("08_after_pem", "pem-standing", ("grid", "dataset", "epsilon", "k", "pem_f1", "best_other", "best_other_f1",
                                      "margin", "margin_se", "outcome")),
    ("08_after_pem", "deployer", ("protocol", "groups", "bits_per_user", "oracle_queries", "server_s",
                                  "all_clients_s", "reports_mb", "counts_engine_ms")),
])
def test_quick_build_saved_the_result_table(chapter, name, columns):
    if not _built(chapter):
        pytest.skip(f"no quick build of {chapter} here (make book QUICK=1 writes the table)")
    table = ResultStore.for_build("quick").load(chapter, name)
    assert tuple(table.columns) == tuple(columns) and len(table) > 0
    assert not table.isna().any().any()


# --------------------------------------------------------------------------- tables for the page
def test_table_view_is_compact_and_flat():
    from ldp.plotting import table_view

    frame = pd.DataFrame({"protocol": ["PEM", "SPM"], "epsilon": [0.9, 2.0], "f1": [0.123456, np.nan],
                          "released": [4372.333, 13.0], "runs": [3, 3]}).set_index(["protocol", "epsilon"])
    html = table_view(frame).to_html()
    assert "0.123" in html and "4,372" in html and "e+" not in html and "nan" not in html.lower()
    assert html.count("<tr>") == 1 + len(frame)  # one header row, then the data: no empty header rows
    assert "0.9" in html and ">PEM<" in html  # the index levels became columns


def test_assumption_configurations_lists_budgets_per_configuration():
    from ldp.plotting import assumption_configurations

    s8c = pd.DataFrame({"assumption": ["Zipf 1"] * 3 + ["uniform"] * 3, "epsilon": [0.9, 2.0, 4.0] * 2,
                        "configuration": ["etas=12", "etas=12", "etas=13", "etas=13", "etas=13", "etas=13"]})
    t = assumption_configurations(s8c)
    assert t.values.tolist() == [["Zipf 1", "etas=12", "0.9, 2"], ["Zipf 1", "etas=13", "4"],
                                 ["uniform", "etas=13", "0.9, 2, 4"]]


def test_without_missing_replaces_only_nan():
    from ldp.plotting import without_missing

    out = without_missing({"a": 0.5, "b": float("nan"), "c": "x", "d": 3, "e": np.float64("nan")})
    assert out == {"a": 0.5, "c": "x", "d": 3}
