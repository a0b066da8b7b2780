"""Chapter 05's computations (ldp.book.chapters.c05_validation.compute): section 5's grids, and the numbers the
text quotes about Figures 2-4, on hand-made points whose answers are known and on a tiny real grid."""
import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c05_validation import compute as C


@pytest.fixture
def grids(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path / "cache"))
    return C.Grids(2, 7, n_jobs=1, zipf_exponent=1.5)


def test_data_specs_name_the_data_set(grids):
    assert grids.data(1000, 16) == ("zipf", {"n": 1000, "m": 16, "s": 1.5, "drop_top": 0}, "zipf, n=1000, m=16")
    kind, kw, name = grids.data(1000.0, 16, 20, sampling="rounded")
    assert kw == {"n": 1000, "m": 16, "s": 1.5, "drop_top": 20, "sampling": "rounded"}
    assert name == "zipf(-20), n=1000, m=16, sampling=rounded"


def test_grids_add_up_their_runs(grids):
    rows = grids.run({"k": 4, "gamma": 2, "eta": 7}, [grids.data(2000, 16), grids.data(2000, 16, 2)],
                     {"epsilon": [1.0, 2.0]})
    assert len(rows) == 2 * 2 * 2 and grids.runs == 8 and grids.seconds > 0
    again = grids.run({"k": 4, "gamma": 2, "eta": 7}, [grids.data(2000, 16)], {"epsilon": 1.0})
    shared = rows[(rows["dataset_drop_top"] == 0) & (rows["epsilon"] == 1.0)]
    assert again["f1"].tolist() == shared["f1"].tolist()  # the same point, the same seeds (and the cache)
    out = grids.findings(chapter_seconds=3.0)
    assert out == {"validation_runs_total": 10, "validation_grid_seconds": grids.seconds, "validation_seconds": 3.0}


def _points(sim, analysis, **columns):
    """Points with the columns gaps() reads: the readings equal the analysis but for ``lower`` (+0.01)."""
    t = pd.DataFrame({"sim": sim, "analysis": analysis, "dmin": 64, **columns})
    return t.assign(lower=t["analysis"] + 0.01, formula=t["analysis"], gap=t["sim"] - t["analysis"])


def test_gaps_find_the_largest_gap_and_the_readings():
    t = _points([0.5, 0.9, 0.2], [0.5, 0.7, 0.3], name=["a", "b", "c"])
    out = C.gaps(t, "x", lambda r: r["name"])
    assert out["x_gap_where"] == "b" and out["x_dmin"] == 64
    assert out["x_mean_gap"] == pytest.approx(0.1) and out["x_bias"] == pytest.approx(1 / 30)
    assert out["x_diff_lower"] == pytest.approx(0.01) and out["x_diff_formula"] == 0
    assert out["x_gap_formula"] == pytest.approx(0.2) and out["x_gap_lower"] == pytest.approx(0.19)


def _figure3():
    """Panels (a) g = 1..3, (b) eta[1] = 5..7 about 6, (c) n[1] about 500, two data sets, F1 only."""
    rows = []
    for dist, shift in (("zipf", 0.0), ("zipf(-20)", -0.1)):
        for g, sim, ana in ((1, 0.9, 0.9), (2, 0.97, 0.8), (3, 0.6, 0.75)):
            rows.append(dict(panel="a", axis="g", x=g, dist=dist, metric="f1", sim=sim + shift, analysis=ana + shift,
                             dmin=2 ** (8 - g)))
        for x, ana in ((5, 0.7), (6, 0.8), (7, 0.7)):
            rows.append(dict(panel="b", axis="etas", x=x, dist=dist, metric="f1", sim=ana + 0.01, analysis=ana,
                             dmin=64))
        for x, ana in ((400, 0.6), (500, 0.7), (600, 0.65)):
            rows.append(dict(panel="c", axis="group_fractions", x=x, dist=dist, metric="f1", sim=ana, analysis=ana,
                             dmin=64))
    t = pd.DataFrame(rows)
    return t.assign(lower=t["analysis"], formula=t["analysis"], gap=t["sim"] - t["analysis"])


def test_figure3_findings():
    out = C.figure3_findings(_figure3(), [], n=1000, bits=12)
    assert out["validation_fig3_gap_where"] == "panel (a), g = 2, zipf, F1"
    assert out["validation_fig3_lower_panels"] == "none" and out["validation_fig3_n"] == 1000
    assert out["validation_fig3a_gmax"] == 3 and out["validation_fig3a_dmin"] == 32
    assert (out["validation_fig3a_rises"], out["validation_fig3a_steps"]) == (2, 4)
    assert out["validation_fig3a_over_last"] == pytest.approx(0.15)
    assert out["validation_fig3a_over_last_where"] == "zipf F1"
    assert out["validation_fig3_gap_b"] == pytest.approx(0.01) and out["validation_fig3_gap_c"] == 0
    assert out["validation_fig3b_best_sim"] == "6 (zipf F1), 6 (zipf(-20) F1)"
    assert out["validation_fig3b_best_analysis"] == "6" and out["validation_fig3b_asym_analysis"] == 0
    assert out["validation_fig3c_asym_analysis"] == pytest.approx(0.05)  # |U(600) - U(400)|
    assert out["validation_fig3_bias_zipf"] == pytest.approx(out["validation_fig3_bias_z20"])


def test_figure2_findings_and_its_summary():
    ident = pd.DataFrame({"panel": ["a", "a", "b", "b"], "axis": ["n", "n", "m", "m"], "level": [100, 100, 16, 16],
                          "setting": ["n = 100", "n = 100", "m = 16", "m = 16"], "etas": "(4,)", "n": 100, "m": 16,
                          "epsilon": 1.0, "rank": [1, 2, 1, 2], "frequency": [0.5, 0.25, 0.5, 0.25],
                          "sim": [1.0, 0.4, 1.0, 0.6], "analysis": [0.99, 0.5, 0.99, 0.5], "dmin": 32})
    ident = ident.assign(lower=ident["analysis"], formula=ident["analysis"], gap=ident["sim"] - ident["analysis"])
    out = C.figure2_findings(ident, {"n": 100, "m": 16, "epsilon": 1.0}, repetitions=25)
    assert out["validation_fig2_found_sim"] == pytest.approx(1.4)  # panel (a) only
    assert out["validation_fig2_found_analysis"] == pytest.approx(1.49) and out["validation_fig2_se_max"] == 0.1
    assert out["validation_fig2_gap_where"] == "panel (a), n = 100, rank 2 (f = 0.2500)"
    assert out["validation_fig2_n_text"] == 100_000 and out["validation_reps"] == 25
    summary = C.identification_summary(ident)
    assert summary["found_sim"].tolist() == [1.4, 1.6] and summary["max_abs_gap"].tolist() == [0.1, 0.1]


def test_figure4_findings_on_a_tiny_grid(grids):
    setting = {"n": 2000, "m": 16, "epsilon": 1.0, "k": 4}
    P = {"k": 4}
    both = [grids.data(2000, 16), grids.data(2000, 16, 2)]
    panels = {"a": ("n", grids.run(P, [d for n in (1000, 2000) for d in (grids.data(n, 16), grids.data(n, 16, 2))],
                                   {"epsilon": 1.0})),
              "c": ("epsilon", grids.run(P, both, {"epsilon": [1.0, 2.0]}))}
    util = C.utility_table(panels, 4)
    out = C.figure4_findings(util, panels, setting, ["c"], drop_top=2)
    assert out["validation_fig4_lower_panels"] == "(c)"
    assert (out["validation_fig4_a_lo_n"], out["validation_fig4_a_hi_n"]) == (1000, 2000)
    f1_a = util[(util["panel"] == "a") & (util["metric"] == "f1")].set_index(["x", "dist"])["sim"]
    assert out["validation_fig4_a_hi_z20"] == f1_a[2000, "zipf(-2)"] and out["validation_fig4_a_lo_zipf"] == f1_a[
        1000, "zipf"]
    assert out["validation_fig4_worst_dist"] in {"zipf", "zipf(-2)"}
    assert 0 < out["validation_fig4_worst_fk1"] <= out["validation_fig4_worst_fk"]
    configs = C.configurations_table(util)
    assert list(configs.columns) == ["panel", "n", "m", "epsilon", "etas"] and len(configs) == 4
    assert out["validation_fig4_n_configs"] == util.loc[util["metric"] == "f1", "etas"].nunique()
    assert out["validation_fig4_default_etas"] in set(configs["etas"])
    wide = C.utility_wide_table(util)
    assert {"sim zipf f1", "analysis zipf(-2) ncr"} <= set(wide.columns) and len(wide) == 4
    assert np.isfinite(out["validation_fig4_mean_gap"])


def _runs(found, **columns):
    """run_grid-like rows of one setting: ``found`` lists, per run, the ranks (0-based) of the top values found."""
    return pd.DataFrame({"n": 1000, "m": 16, "epsilon": 1.0, "found_ranks": [str(list(f)) for f in found],
                         **columns})


def test_independence_table_compares_the_count_found_with_independent_coins():
    # values 0 and 1 each found in half the runs, never together: the count is always 1 (no variance) where
    # independent coins with the same rates would give 2 * 1/2 * 1/2 * R/(R-1)
    exclusive = _runs([[0], [1]] * 10)
    # found together or not at all: the count varies twice as much as independent coins would make it
    together = _runs([[0, 1], []] * 10, epsilon=2.0)
    t = C.independence_table({"c": ("epsilon", pd.concat([exclusive, together], ignore_index=True))}, 4)
    assert list(t.columns) == ["panel", "axis", "level", "n", "m", "epsilon", "runs", "found_mean", "var_observed",
                               "var_independent"]
    assert t["var_independent"].tolist() == pytest.approx([0.5 * 20 / 19] * 2)
    assert t["var_observed"].tolist() == pytest.approx([0.0, np.var([2, 0] * 10, ddof=1)])
    assert t["found_mean"].tolist() == [1.0, 1.0] and t["level"].tolist() == [1.0, 2.0]
    found_three = _runs([[0, 1, 2, 5]] * 3)  # ranks beyond k are not counted
    assert C.independence_table({"a": ("n", found_three)}, 2)["found_mean"].tolist() == [2.0]
