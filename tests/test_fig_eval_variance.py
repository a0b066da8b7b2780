"""Chapter 06's Figure 9, the variance of the released estimates against eq. (3), and its claims
(ldp.book.chapters.c06_evaluation.eval_variance)."""
import numpy as np
import pandas as pd
import pytest

import ldp
from ldp.book.chapters.c06_evaluation import eval_variance as F
from ldp.book.chapters.c06_evaluation.compute import predicted_variance, variance_table

from figtools import bar_ranges, decide, page_ready, store_with

EPS = (1.0, 2.0, 4.0)


def points(var=lambda p, e: {"PEM": 1.1e6, "MCM": 1e6, "SPM": 3e6}[p] / e, std=lambda p, e: 3e6 / e):
    rows = [{"protocol": p, "epsilon": e, "var_mean": var(p, e), "var_std": std(p, e), "var_count": 10,
             "var_sem": std(p, e) / np.sqrt(10), "var_pred": var(p, e), "var_full": 1.2 * var(p, e)}
            for p in ("PEM", "MCM", "SPM") for e in EPS]
    return pd.DataFrame(rows)


def test_table_adds_eq3_and_the_exact_variance():
    n = 100_000
    protocols = {("PEM", 2.0): ldp.PEM(2.0, 16, 64), ("MCM", 2.0): ldp.MCM(2.0, 16, 64)}
    summary = pd.DataFrame({"protocol": ["PEM", "MCM"], "epsilon": [2.0, 2.0], "var_mean": [1e6, 2e6]})
    t = variance_table(summary, protocols, n, [0.1, 0.05])
    assert t.loc[0, "var_pred"] == pytest.approx(predicted_variance(protocols["PEM", 2.0], n))
    assert t.loc[1, "var_full"] == pytest.approx(predicted_variance(protocols["MCM", 2.0], n, [0.1, 0.05]))
    np.testing.assert_allclose(t["obs/pred"], t["var_mean"] / t["var_pred"])


def test_draw_cuts_the_bars_above_the_axis_floor():
    fig = F.draw(F.frame(points()), title="t")
    page_ready(fig, width=0.72 * ldp.book.plotting.FULL_WIDTH)
    lo, _ = zip(*bar_ranges(fig))
    floor = np.log10(0.3 * points()[["var_mean", "var_pred", "var_full"]].min().min())
    assert min(lo) >= floor - 1e-12  # drawn as log10(Var): a bar below the floor would leave the axis
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
    assert labels and all(t[-1] in "kM" for t in labels)  # 100k, 1M: powers of ten without superscripts


def test_wide_table_has_flat_headers_and_no_scientific_notation():
    table = pd.DataFrame({"protocol": ["PEM", "MCM"] * 2, "epsilon": [1.0, 1.0, 2.0, 2.0],
                          "var_mean": [1.234e6, 2.5e6, 3.3e5, 9.9e5], "obs/pred": [0.98765, 1.2, 0.5, 1.0]})
    out = F.wide_table(table, {"var_mean": "Var (10⁶)", "obs/pred": "÷ eq. (3)"}, scales={"var_mean": 1e6})
    assert list(out.columns) == ["PEM Var (10⁶)", "PEM ÷ eq. (3)", "MCM Var (10⁶)", "MCM ÷ eq. (3)"]
    assert out.loc[1.0, "PEM Var (10⁶)"] == "1.23" and out.loc[1.0, "PEM ÷ eq. (3)"] == "0.988"
    assert not out.apply(lambda c: c.str.contains("e[+-]", regex=True)).any().any()


def test_claims(tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(points(std=lambda p, e: 1e5))})
    ids = [c.id for c in F.CLAIMS if c.id != "fig9-one-sixth"]
    assert {i: decide(i, store)["verdict"] for i in ids} == dict.fromkeys(ids, "reproduced")
    swapped = points(var=lambda p, e: {"PEM": 1.1e6, "MCM": 3e6, "SPM": 1e6}[p] / e, std=lambda p, e: 1e5)
    store = store_with(tmp_path / "swapped", figures={F.NAME: F.frame(swapped)})
    assert decide("fig9-mcm-below-spm", store)["verdict"] == "not reproduced"
    few = F.frame(points()).assign(var_count=F.MIN_VAR_RUNS - 1)  # no point has enough runs that found one
    assert decide("fig9-pem-similar", store_with(tmp_path / "few", figures={F.NAME: few}))["verdict"] \
        == "not testable here"


@pytest.mark.parametrize(("groups", "verdict"), [(6, "reproduced"), (5, "not reproduced")])
def test_one_sixth_reads_the_last_group_off_eq3(tmp_path, groups, verdict):
    """PEM with g equal groups: eq. (3)'s column gives n / n_g = g (up to the rounding of the groups)."""
    n = 1_000_000
    protocols = {("PEM", e): ldp.PEM(e, 16, 64, config=ldp.analysis.pem_config(16, 64, g=groups)) for e in EPS}
    summary = pd.DataFrame({"protocol": "PEM", "epsilon": EPS, "var_mean": 1e6, "var_std": 1e5, "var_count": 10})
    table = variance_table(summary, protocols, n, [0.05, 0.02])
    store = store_with(tmp_path, figures={F.NAME: F.frame(table)}, parameters={"06_evaluation": {"n_synthetic": n}})
    row = decide("fig9-one-sixth", store)
    assert row["verdict"] == verdict and row["numbers"]["points"] == len(EPS)
    assert row["numbers"]["max_abs_diff"] == pytest.approx(abs(groups - 6), abs=1e-3)
    if verdict != "reproduced":  # the cause: the last group's share and the groups it means
        assert row["cause_class"] == "genuine" and "holds 1/5 of the users" in row["cause"]
        assert "5 groups" in row["cause"]
    bare = store_with(tmp_path / "bare", figures={F.NAME: F.frame(table)})  # n unknown
    assert decide("fig9-one-sixth", bare)["verdict"] == "not testable here"
