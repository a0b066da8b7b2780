"""Chapter 07's plumbing (ldp.book.chapters.c07_evaluation_more.compute): the optimiser's configurations under each
assumption, the threshold probe, and the values the prose quotes, on small cases whose numbers are known.

The grids, figures and claims are checked by tests/test_fig_threshold.py, tests/test_fig_design.py and the quick
build.
"""
import math

import numpy as np
import pandas as pd
import pytest

import ldp
from ldp import analysis, datasets
from ldp.book.chapters.c07_evaluation_more import compute
from ldp.book.chapters.c07_evaluation_more.design import PEM_OPTIMISED


@pytest.fixture(scope="module")
def small():
    """A small synthetic set (n = 20,000, m = 16) and its law's rank frequencies."""
    ds = datasets.exponential(n=20_000, scale=0.05, m=16, rng=1)
    return ds, ds.params["rank_frequencies"]


def test_optimised_configurations_shares_each_configuration():
    assumptions = {"Zipf 1": dict(distribution="zipf", zipf_exponent=1.0),
                   "uniform": dict(distribution="zipf", zipf_exponent=0.0)}
    chosen, configs = compute.optimised_configurations(assumptions, [1.0, 4.0], k=8, m=32, n=100_000,
                                                       query_limit=2**12)
    assert set(chosen) == {(a, e) for a in assumptions for e in (1.0, 4.0)}
    assert set(configs) == set(chosen.values()) and len(configs) == len(set(configs))
    assert chosen["uniform", 4.0] == analysis.optimize_pem(4.0, 8, 32, n=100_000, query_limit=2**12,
                                                           distribution="zipf", zipf_exponent=0.0)
    assert [c.gamma for c in configs] == sorted(c.gamma for c in configs)
    for c in configs:  # what the grid passes rebuilds the configuration
        assert analysis.pem_config(8, 32, gamma=c.gamma, etas=c.etas) == c


def test_threshold_probe_is_one_final_round_per_protocol(small):
    ds, law = small
    k = compute.k_for_threshold(law, 0.02)
    probe = compute.threshold_probe(ds, k=k, theta=0.02, epsilon=2.0, m=16, query_limit=2**12, seed=5)
    assert list(probe) == ["PEM", "SPM", "MCM"]
    again = compute.final_round_release(ldp.PEM(2.0, k, 16, threshold=0.02, query_limit=2**12), ds, theta=0.02,
                                        rng=np.random.SeedSequence(5).spawn(1)[0])
    assert probe["PEM"] == again  # the seed's first child: the same simulation
    for p in probe.values():
        assert set(p) == {"n_users", "n_candidates", "fp_expected", "theta_sigmas"}
        assert 0 < p["n_users"] <= ds.n and p["n_candidates"] >= 1 and p["fp_expected"] >= 0


def test_at_budget_matches_close_budgets_and_says_nan_otherwise():
    pivot = pd.DataFrame({"A": [0.1, 0.2]}, index=pd.Index([0.9, 1.2000000001], name="epsilon"))
    assert compute.at_budget(pivot, "A", 1.2) == 0.2
    assert math.isnan(compute.at_budget(pivot, "A", 2.0)) and math.isnan(compute.at_budget(pivot, "B", 0.9))


def test_mode_note():
    quick = compute.mode_note(quick=True, n_users=100_000, repetitions=3).data
    assert quick.startswith("Quick build: 100,000 users and 3 repetitions per point") and "not comparable" in quick
    full = compute.mode_note(quick=False, n_users=10**6, repetitions=10).data
    assert full.startswith("Paper-scale run: 1,000,000 users and 10 repetitions per point")


def test_setup_findings(small):
    ds, law = small
    f = compute.setup_findings(ds, law, quick=True, n_users=20_000, m=16, k=16, repetitions=3, epsilons=[0.9, 2.0],
                               thetas=[0.01, 0.023], theta_fixed=0.023, final_fraction=0.1)
    assert f["eps_grid"].data == "0.9, 2" and f["theta_grid"].data == "0.01, 0.023"
    assert f["final_fraction_pct"] == 10.0 and f["k_theta_fixed"] == compute.k_for_threshold(law, 0.023)
    assert f["f16_law"] == law[15] and f["f1_data"] == ds.top_frequencies(1)[0]
    assert f["n_above_fixed"] == len(ds.above(0.023)) and f["n_distinct"] == ds.n_distinct
    assert f["mode_note"].data.startswith("Quick build")


def test_figure7_findings(small):
    ds, law = small
    s7a = pd.DataFrame([(p, e, f) for e, fs in ((1.0, (0.8, 0.3, 0.5)), (2.1, (0.9, 0.6, 0.7)))
                        for p, f in zip(compute.PROTOCOLS, fs)], columns=["protocol", "epsilon", "f1_mean"])
    s7bc = pd.DataFrame([(p, t, e, 0.5, 0.9, 20.0 + i) for e in (2.0, 4.0) for t in (0.01, 0.02)
                         for i, p in enumerate(compute.PROTOCOLS)],
                        columns=["protocol_name", "threshold", "epsilon", "f1_mean", "f1_topk_mean", "n_found_mean"])
    probe = {p: {"n_users": 100 + i, "n_candidates": 10 * (i + 1), "fp_expected": 1.5, "theta_sigmas": 2.0}
             for i, p in enumerate(compute.PROTOCOLS)}
    f = compute.figure7_findings(s7a, s7bc, eps_bc=(2.0, 4.0), ds=ds, law=law, probe=probe)
    assert f["f7_eps2"] == 2.1 and f["f7_pem_eps2"] == 0.9 and f["f7_best_other_eps2"] == 0.7
    assert f["f7_best_other_name_eps2"].data == "MCM" and f["f7_gap_eps2"] == pytest.approx(0.2)
    assert f["f7_max_gap"] == pytest.approx(0.3) and f["f7_max_gap_eps"] == 1.0 and f["f7_max_gap_other"] == 0.5
    assert f["theta_low"] == 0.01 and f["f7_n_thetas"] == 2 and (f["eps_a"], f["eps_b"]) == (2.0, 4.0)
    assert f["f7_pem_f1_topk_low"] == 0.9 and f["f7_mcm_found_low"] == 22.0
    assert f["k_theta_low"] == compute.k_for_threshold(law, 0.01) and f["f7_true_low"] == len(ds.above(0.01))
    assert f["f7_last_users"] == 100 and f["f7_spm_last_cands"] == 20 and f["f7_mcm_last_cands"] == 30


def test_figure8_findings():
    eps = [0.9, 1.2, 2.0]
    series = {PEM_OPTIMISED: (0.7, 0.8, 0.95), "MCM, budget split": (0.1, 0.2, 0.6),
              "MCM, partitioned users": (0.3, 0.8, 0.7), "SPM, budget split": (0.0, 0.1, 0.2),
              "SPM, partitioned users": (0.0, 0.1, 0.6)}
    s8a = pd.DataFrame([(p, e, f) for p, fs in series.items() for e, f in zip(eps, fs)],
                       columns=["protocol", "epsilon", "f1_mean"])
    s8b = pd.DataFrame([(f"eta = {eta}", e, f, 0.01 * eta) for eta, fs in ((2, (0.4, 0.5, 0.6)), (4, (0.8, 0.9, 1.0)))
                        for e, f in zip(eps, fs)], columns=["protocol", "epsilon", "f1_mean", "f1_std"])
    info = compute.eta_table(16, 64, [2, 4, 30], query_limit=2**20)
    configs = [analysis.pem_config(16, 64, gamma=4, etas=(12,) * 5)]
    f = compute.figure8_findings(s8a, s8b, etas=[2, 4, 30], eta_info=info, configs=configs, k=16, m=64,
                                 query_limit=2**20)
    assert f["pem_eps12"] == 0.8 and f["pem_opt_eps09"] == 0.7
    assert f["mcm_max_gain"] == pytest.approx(0.6) and f["mcm_max_gain_eps"] == 1.2
    assert f["spm_max_gain"] == pytest.approx(0.4) and f["spm_split_eps2"] == 0.2 and f["spm_part_eps2"] == 0.6
    assert (f["eta_lo"], f["eta_hi"]) == (2, 4) and f["pem_eta_hi_eps09"] == 0.8 and f["pem_eta_lo_eps09_std"] == 0.02
    assert (f["n_etas"], f["n_eta_dropped"], f["eta_largest"]) == (3, 1, 30)  # a 30-bit step exceeds 2^20 queries
    default = analysis.pem_default_config(16, 64, query_limit=2**20)
    assert f["eta_max"] == default.etas[0] and f["eta_max_queries"] == default.queries
    assert f["dist_n_configs"] == 1 and f["dist_configs"].data == r"$\gamma = 4$, $\eta = (12, 12, 12, 12, 12)$"


def test_runtime_findings():
    runs = [pd.DataFrame({"wall_time": [1.0, 2.0]}), pd.DataFrame({"wall_time": [3.0]})]
    assert compute.runtime_findings(runs, 5.0) == {"n_runs": 3, "run_seconds": 6.0, "notebook_seconds": 5.0}
