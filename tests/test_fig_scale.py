"""Chapter 10's figures (cost growth, FLH's accuracy price) and their claims (ldp.book.chapters.scale)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c10_scale import flh_price as P
from ldp.book.chapters.c10_scale import scale_cost as F

from figtools import bar_ranges, decide, page_ready, store_with, titles

EPS = list(P.EPSILONS)
FLH = "FLH, h = 4096"


def bench_rows(ns=(10**5, 10**6, 10**7, 10**8), peak_olh=440.0, flh_seconds=4.2):
    rows = []
    for n in ns:
        for spec, agg in (("OLH", 3.0 * n / 1e5), ("FLH:1024", 0.4), ("FLH:4096", flh_seconds)):
            rows.append({"n": n, "oracle": spec, "t_aggregate_s": agg, "t_privatize_s": n / 1e7, "t_store_s": 0.01,
                         "rss_aggregate_mb": 300.0 + (peak_olh - 300.0) * (n == max(ns) and spec == "OLH")})
    return pd.DataFrame(rows)


def price_summary(gap=0.02, sd=0.03):
    rows = [{"protocol": p, "epsilon": e, "f1_mean": min(1.0, 0.5 + e / 10) - (gap if p != "OLH" else 0),
             "f1_std": sd, "f1_count": 10, "ncr_mean": 0.5, "ncr_std": np.nan, "ncr_count": 10}
            for p in ("OLH", FLH) for e in EPS]
    return pd.DataFrame(rows)


def test_cost_frame_is_what_is_plotted():
    live = bench_rows()[lambda d: d["n"] == 10**5].assign(n=20_000, rss_aggregate_mb=np.nan)
    f = F.frame(bench_rows(), live)
    assert list(f.columns) == ["panel", "oracle", "source", "n", "quantity", "value"]
    assert set(f["panel"]) == {"a", "b", "c"} and set(f["source"]) == {"benchmark", "this build"}
    a = f[(f["panel"] == "a") & (f["source"] == "benchmark") & (f["oracle"] == "OLH")].sort_values("n")
    np.testing.assert_allclose(a["value"], [3.0, 30.0, 300.0, 3000.0])
    c = f[(f["panel"] == "c") & (f["source"] == "benchmark") & (f["oracle"] == "OLH")].sort_values("n")
    np.testing.assert_allclose(c["value"], [300 / 1024] * 3 + [440 / 1024])
    assert F.oracle_label("FLH:4096") == "FLH, h = 4096" and F.oracle_label("OLH") == "OLH"


def test_cost_draw():
    live = bench_rows()[lambda d: d["n"] == 10**5].assign(n=20_000, rss_aggregate_mb=np.nan)
    fig = F.draw(F.frame(bench_rows(), live))
    page_ready(fig)
    assert titles(fig) == ["(a)", "(b)", "(c)"]
    assert {"100k", "100M"} <= {t.get_text() for t in fig.axes[0].get_xticklabels()}  # log axis, short labels
    assert "this build" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_price_frame_and_draw():
    f = P.frame(price_summary(sd=0.3))  # bars that would cross 1
    assert list(f.columns) == ["panel", "oracle", "epsilon", "metric", "mean", "sd", "runs"]
    assert len(f) == 2 * 2 * len(EPS) and (f.loc[f["panel"] == "b", "sd"] == 0).all()  # NaN SD: no bar
    fig = P.draw(f)
    page_ready(fig)
    assert titles(fig) == ["(a) F1", "(b) NCR"]
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1


def test_claims(tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(bench_rows()),
                                          P.NAME: P.frame(price_summary())},
                       parameters={F.CHAPTER: {"n_price": 1_000_000, "epsilons": EPS, "price_pools": [4096]}})
    ids = [c.id for c in F.CLAIMS + P.CLAIMS]
    assert all(c.kind == "ours" for c in F.CLAIMS + P.CLAIMS)
    assert {i: decide(i, store)["verdict"] for i in ids} == dict.fromkeys(ids, "reproduced")
    bad = store_with(tmp_path / "bad", figures={F.NAME: F.frame(bench_rows(peak_olh=5000.0,
                                                                                           flh_seconds=75.0)),
                                                P.NAME: P.frame(price_summary(gap=0.15))})
    assert {i: decide(i, bad)["verdict"] for i in ids} == dict.fromkeys(ids, "not reproduced")
    small = store_with(tmp_path / "small", figures={F.NAME: F.frame(bench_rows(ns=(10**5, 10**6)))})
    assert not decide("ours-scale-olh-memory", small)["covered"]  # no 10^8 row: not covered, not decided
    quick = store_with(tmp_path / "quick", figures={P.NAME: P.frame(price_summary())},
                       parameters={F.CHAPTER: {"n_price": 100_000, "epsilons": EPS, "price_pools": [4096]}})
    assert not decide("ours-flh-f1-within-005", quick)["covered"]


def test_readme_scale_table_is_the_benchmark_csv():
    """README's 'At scale' table states exactly the committed benchmark rows (time, peak memory, F1)."""
    root = Path(__file__).resolve().parents[1]
    bench = pd.read_csv(root / "benchmarks" / "results" / "bench_scale.csv")
    text = (root / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| users n | OLH (the paper's oracle)"):].split("\n\n")[0].splitlines()[2:]
    oracles = ["OLH", "FLH:1024", "FLH:4096", "FLH:16384"]
    assert len(table) == bench["n"].nunique() == 4 and len(bench) == 16
    for line, n in zip(table, sorted(bench["n"].unique())):
        for cell, oracle in zip(line.strip("|").split("|")[1:], oracles):
            row = bench[(bench["n"] == n) & (bench["oracle"] == oracle)].iloc[0]
            seconds, gib, f1 = re.fullmatch(r"\s*([\d,.]+) s, ([\d.]+) GiB, F1 ([\d.]+)\s*", cell).groups()
            assert float(seconds.replace(",", "")) == pytest.approx(row["t_aggregate_s"], rel=0.01, abs=0.01)
            assert float(gib) == pytest.approx(row["rss_aggregate_mb"] / 1024, abs=0.0051)
            assert float(f1) == pytest.approx(row["f1"], abs=0.0051)  # printed to 2 digits
