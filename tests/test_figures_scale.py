"""The figure modules of the chapter on scale (issue 23): frame() is the plotted table, draw() draws it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ldp.figures import flh_price, scale_cost


def bench_rows():
    rows = []
    for n in (10**5, 10**6):
        for spec, agg in (("OLH", 3.0 * n / 1e5), ("FLH:1024", 0.4), ("FLH:4096", 1.5)):
            rows.append({"n": n, "oracle": spec, "t_aggregate_s": agg, "t_privatize_s": n / 1e7, "t_store_s": 0.01,
                         "rss_aggregate_mb": 300.0 + n / 1e5})
    return pd.DataFrame(rows)


def test_cost_frame_is_what_is_plotted():
    live = bench_rows()[lambda d: d["n"] == 10**5].assign(n=20_000, rss_aggregate_mb=np.nan)
    f = scale_cost.frame(bench_rows(), live)
    assert list(f.columns) == ["panel", "oracle", "source", "n", "quantity", "value"]
    assert set(f["panel"]) == {"a", "b", "c"} and set(f["source"]) == {"benchmark", "this build"}
    a = f[(f["panel"] == "a") & (f["source"] == "benchmark") & (f["oracle"] == "OLH")].sort_values("n")
    np.testing.assert_allclose(a["value"], [3.0, 30.0])
    c = f[(f["panel"] == "c") & (f["source"] == "benchmark") & (f["oracle"] == "FLH, h = 4096")]
    np.testing.assert_allclose(c["value"], [301.0 / 1024, 310.0 / 1024])
    fig = scale_cost.draw(f)
    assert len(fig.axes) == 3 and all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in fig.axes)
    assert scale_cost.oracle_label("FLH:4096") == "FLH, h = 4096" and scale_cost.oracle_label("OLH") == "OLH"


def test_price_frame_cuts_bars_at_0_and_1():
    summary = pd.DataFrame({"protocol": ["OLH", "FLH, h = 1024"], "epsilon": [2.0, 2.0],
                            "f1_mean": [0.98, 0.5], "f1_std": [0.05, 0.1], "f1_count": [10, 10],
                            "ncr_mean": [0.02, 0.9], "ncr_std": [0.05, np.nan], "ncr_count": [10, 1]})
    f = flh_price.frame(summary)
    f1 = f[f["panel"] == "a"].set_index("oracle")
    assert f1.loc["OLH", "err_high"] == pytest.approx(0.02) and f1.loc["OLH", "err_low"] == pytest.approx(0.05)
    ncr = f[f["panel"] == "b"].set_index("oracle")
    assert ncr.loc["OLH", "err_low"] == pytest.approx(0.02) and ncr.loc["FLH, h = 1024", "err_high"] == 0
    fig = flh_price.draw(f)
    assert [ax.get_ylabel() for ax in fig.axes] == ["F1", "NCR"]
