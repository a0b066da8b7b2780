"""Chapter 10's notebook plumbing (ldp.book.chapters.c10_scale.compute): the store at work, the benchmark's numbers,
FLH's price and the recommended pool size.

The benchmark's findings and the recommendation are checked on a hand-made CSV whose slopes and answer are known;
the store and the pool-variance check on small real runs.
"""
import numpy as np
import pandas as pd
import pytest

import ldp
from ldp import datasets
from ldp.book.chapters.c10_scale import compute as C
from ldp.oracles.flh import DEFAULT_POOL_SIZE, pool_variance


def test_check_engine_and_specs():
    C.check_engine("counts")
    C.check_engine("protocol")
    with pytest.raises(ValueError, match="price_engine must be 'counts' or 'protocol', got 'fast'"):
        C.check_engine("fast")
    assert C.pem_specs(2**20, [64, 1024]) == [
        ("PEM", {"query_limit": 2**20}, "OLH"),
        ("PEM", {"query_limit": 2**20, "oracle": "FLH", "pool_size": 64}, "FLH, h = 64"),
        ("PEM", {"query_limit": 2**20, "oracle": "FLH", "pool_size": 1024}, "FLH, h = 1024")]


def test_store_demo_aggregates_the_folder_as_memory(tmp_path):
    data = datasets.exponential(4000, scale=0.05, m=32, rng=1)
    olh = ldp.PEM(2.0, 4, 32)
    rows = {name: C.store_demo(P, data, tmp_path / name, seed=5)
            for name, P in {"OLH": olh, "FLH": ldp.PEM(2.0, 4, 32, oracle="FLH", pool_size=64)}.items()}
    assert [r["batches"] for r in rows.values()] == [4, 4] and all(r["users"] == 4000 for r in rows.values())
    assert rows["FLH"]["bytes per user"] < rows["OLH"]["bytes per user"]  # a pool index instead of a 64-bit seed
    assert all(0 <= r[f] <= 1 for r in rows.values() for f in ("F1 after batch 1", "F1, all batches"))
    assert C.store_demo(olh, data, tmp_path / "again", seed=5) == rows["OLH"]
    table = pd.DataFrame([{"oracle": name} | r for name, r in rows.items()]).set_index("oracle")
    out = C.store_findings(table, olh, data, n_price=5000, scale=0.05, seed=5)
    assert out["olh_mem_bytes"] == out["olh_mem_1e9_gb"] > 8 and out["n_live"] == 4000
    assert out["hashes_1e6"] > 5000 and out["flh_bytes_per_user"] == rows["FLH"]["bytes per user"]


def test_pool_variance_check_adds_the_two_terms():
    out = C.pool_variance_check(seed=3, pools=30, h=8)
    assert out["check_predicted"] == out["check_olh_term"] + out["check_pool_term"]
    assert out["check_pool_term"] == pool_variance(np.array([3000, 2000]), 8, ldp.FLH(2.0, m=16, pool_size=8).d_prime)
    assert out["check_rel_diff"] == pytest.approx(out["check_measured"] / out["check_predicted"] - 1)
    assert out["check_rel_se"] == pytest.approx(np.sqrt(2 / 29)) and out["check_pools"] == 30
    assert C.pool_variance_check(seed=3, pools=30, h=8) == out
    assert out["check_measured"] > out["check_olh_term"] / 3  # the pool's term is not small at h = 8


def _bench():
    """A benchmark CSV: time c * n^slope (OLH: slope 1, FLH: 0.5 and 0.2), 1000 s, 100 s and 40 s at 10^8 users."""
    rows = []
    for oracle, c, slope, f1 in (("OLH", 1e-5, 1.0, 0.9), ("FLH:4096", 1e-2, 0.5, 0.88), ("FLH:256", 1.0, 0.2, 0.7)):
        for i, n in enumerate((10**4, 10**6, 10**8)):
            rows.append({"n": n, "oracle": oracle, "t_aggregate_s": c * n ** slope, "t_open_s": 1.0 + i,
                         "rss_aggregate_mb": 1024 * (1 + 0.1 * i) * (2 if oracle == "OLH" else 1),
                         "store_mb": n / 1e5, "f1": f1, "load_before": 1.0 + i, "load_after": 2.0,
                         "commit": "abc" if i else "def", "t_privatize_s": 1.0, "t_store_s": 1.0})
    return pd.DataFrame(rows).sample(frac=1, random_state=0)  # the order of a CSV's rows does not matter


def test_bench_findings():
    bench = _bench()
    assert C.bench_oracles(bench) == ["OLH", "FLH:256", "FLH:4096"]
    assert np.isnan(C.bench_value(bench, 5, "OLH", "f1")) and C.bench_value(bench, 10**8, "OLH", "f1") == 0.9
    out = C.bench_findings(bench)
    assert out["n_top"] == 10**8 and out["n_second"] == 10**6 and out["n_factor"] == 10**4
    assert out["olh_agg_top_s"] == pytest.approx(1000) and out["olh_agg_top_min"] == pytest.approx(1000 / 60)
    assert out["olh_slope"] == pytest.approx(1.0) and out["flh_slope_max"] == pytest.approx(0.5)
    assert out["olh_rss_top_gb"] == pytest.approx(2.4) and out["flh_rss_top_gb_max"] == pytest.approx(1.2)
    assert out["rss_ratio_max"] == pytest.approx(1.2) and out["olh_store_top_gb"] == pytest.approx(1000 / 1024)
    assert out["flh_top_times"] == "40 s with h = 256, 100 s with h = 4096"
    assert out["flh_top_f1"] == "0.70 with h = 256, 0.88 with h = 4096"
    assert (out["olh_open_top_s"], out["flh_open_top_max_s"], out["bench_load_max"]) == (3.0, 3.0, 3.0)
    assert (out["olh_load_second"], out["olh_load_top"], out["bench_commits"]) == (2.0, 3.0, "abc, def")
    table = C.bench_table(bench)
    assert sorted(table.index) == [10**4, 10**6, 10**8]
    assert list(table.columns) == ["OLH: aggregate s", "OLH: peak GB", "FLH, h = 256: aggregate s",
                                   "FLH, h = 256: peak GB", "FLH, h = 4096: aggregate s", "FLH, h = 4096: peak GB"]


def _price():
    price = pd.DataFrame([{"protocol": p, "epsilon": e, "f1_mean": f, "f1_std": sd}
                          for p, fs, sd in (("OLH", (0.8, 0.9), 0.02), ("FLH, h = 4096", (0.78, 0.9), 0.03),
                                            ("FLH, h = 256", (0.6, 0.88), 0.05)) for e, f in zip((1.0, 2.0), fs)])
    return price, *C.f1_against_olh(price)


def test_price_findings():
    price, wide, gaps = _price()
    assert list(gaps.columns) == ["FLH, h = 256", "FLH, h = 4096"]
    assert gaps.loc[1.0, "FLH, h = 256"] == pytest.approx(-0.2)
    out = C.price_findings(price, gaps, engine="protocol", n_price=10, repetitions=3, eps_sweep=2.0)
    assert out["price_worst_loss"] == pytest.approx(0.2) and out["price_worst_eps"] == 1.0
    assert (out["price_worst_pool"], out["price_points"], out["price_within"]) == ("FLH, h = 256", 4, 3)
    assert out["price_max_sd"] == 0.05 and out["engine_words"] == C.ENGINE_WORDS["protocol"]
    assert (out["n_price"], out["repetitions"], out["eps_sweep"]) == (10, 3, 2.0)


def test_pool_share_is_the_pool_term_over_olh():
    data = datasets.exponential(20_000, scale=0.05, m=32, rng=2)
    share = C.pool_share(data, 2.0, 64, k=4, query_limit=2**20)
    n_last = ldp.PEM(2.0, 4, 32).plan(data.n, rng=0).sizes()[-1]
    o = ldp.FLH(2.0, m=32, pool_size=64)
    assert share == pytest.approx(pool_variance(data.counts * n_last / data.n, 64, o.d_prime) / o.variance(n_last))
    assert C.pool_share(data, 2.0, 4096, k=4, query_limit=2**20) == pytest.approx(share * 64 / 4096)
    price, wide, gaps = _price()
    table = C.price_table(wide, gaps, data, k=4, query_limit=2**20)
    assert list(table.columns[-2:]) == ["FLH, h = 256: pool / OLH variance", "FLH, h = 4096: pool / OLH variance"]


def test_recommendation_takes_the_smallest_pool_that_meets_the_rule():
    bench = _bench()
    _, _, gaps = _price()
    # h = 256 is fast (40 s) but 0.2 below OLH's F1; h = 4096 takes 100 s: none meets the rule
    out = C.recommendation(bench, gaps, n_price=10)
    assert out["h_recommended"] == 0 and "No pool size meets all three (the package's default is" in out[
        "recommendation"].data
    fast = bench.assign(t_aggregate_s=np.where(bench["oracle"] == "FLH:4096", 30.0, bench["t_aggregate_s"]))
    out = C.recommendation(fast, gaps, n_price=10)
    assert out["h_recommended"] == 4096 and "It gives **h = 4096**" in out["recommendation"].data
    lines = out["recommendation"].data.split("\n\n")[1].splitlines()
    assert lines == ["- h = 256: 40 s and F1 = 0.70 at 100,000,000 users; at 10 users largest F1 loss against OLH "
                     "0.200", "- h = 4096: 30 s and F1 = 0.88 at 100,000,000 users; at 10 users largest F1 loss "
                     "against OLH 0.020"]
    assert f"default is {DEFAULT_POOL_SIZE})" in out["recommendation"].data
    off_grid = C.recommendation(fast, gaps.drop(columns="FLH, h = 4096"), n_price=10)
    assert off_grid["h_recommended"] == 0 and "h = 4096: 30 s and F1 = 0.88 at 100,000,000 users; at 10 users not on " \
                                              "the grid" in off_grid["recommendation"].data


def test_live_costs_measure_every_oracle(tmp_path):
    data = datasets.exponential(3000, scale=0.05, m=32, rng=4)
    rows = C.live_costs(["OLH", "FLH:64"], data, tmp_path, k=4, query_limit=2**20, seed=1)
    assert list(rows.columns) == ["n", "oracle", "t_privatize_s", "t_store_s", "t_aggregate_s", "rss_aggregate_mb"]
    assert rows["oracle"].tolist() == ["OLH", "FLH:64"] and (rows["n"] == 3000).all()
    assert (rows[["t_privatize_s", "t_store_s", "t_aggregate_s"]] > 0).all().all()
    assert rows["rss_aggregate_mb"].isna().all() and {p.name for p in tmp_path.iterdir()} == {"cost-0", "cost-64"}
