"""The chapters' measurements in ldp.experiments (configurations, engine checks, anomalies, costs, summaries).

Checked on small hand-made cases whose answer is known: a hypergeometric mixture's variance, a prefix
shared by several values outranking a heavy hitter's own prefix, a segment pattern shared by several
values beating the top value's, the bits each oracle's report takes.
"""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldp
from ldp import analysis, datasets
from ldp.analysis import olh_variance
from ldp.book.chapters.c03_pem.compute import config_table, readings_table
from ldp.book.chapters.c04_count_engine.compute import group_support_moments
from ldp.book.chapters.c06_evaluation.compute import (
    anomaly_table,
    part_ranks,
    predicted_variance,
    summary_value,
    top_two_gap,
    whole_value_report,
)
from ldp.book.chapters.c07_evaluation_more.compute import assumption_configurations, k_for_threshold
from ldp.book.chapters.c08_after_pem import compute as successors
from ldp.book.chapters.c08_after_pem.compute import COLUMNS, bits_per_user, deployer_table, report_bits
from ldp.book.plotting.tables import compress, share
from ldp.datasets import Dataset
from ldp.values import from_ints


# ------------------------------------------------------------------------------- configurations
@pytest.mark.parametrize(("eps_q", "eps", "text"), [(1, 3, "ε/3"), (2, 2, "ε"), (4, 6, "2/3ε"), (1, 2, "ε/2")])
def test_share(eps_q, eps, text):
    assert share(eps_q, eps) == text


def test_compress():
    assert compress([65536, 65536, 1536]) == "65,536 ×2 + 1,536"


def test_k_for_threshold_counts_the_law():
    law = np.array([0.05, 0.03, 0.023, 0.01])
    assert [k_for_threshold(law, t) for t in (0.023, 0.0231, 0.06, 0.0)] == [3, 2, 1, 4]


def test_assumption_configurations_lists_budgets_per_configuration():
    s8c = pd.DataFrame({"assumption": ["Zipf 1"] * 3 + ["uniform"] * 3, "epsilon": [0.9, 2.0, 4.0] * 2,
                        "configuration": ["etas=12", "etas=12", "etas=13", "etas=13", "etas=13", "etas=13"]})
    t = assumption_configurations(s8c)
    assert t.values.tolist() == [["Zipf 1", "etas=12", "0.9, 2"], ["Zipf 1", "etas=13", "4"],
                                 ["uniform", "etas=13", "0.9, 2, 4"]]


def test_config_and_readings_tables():
    n, m, ks = 100_000, 16, (4, 8)
    rule = {k: analysis.pem_default_config(k, m, query_limit=2**10) for k in ks}
    opt = {(k, e): analysis.optimize_pem(e, k, m, n=n, query_limit=2**10) for k in ks for e in (1.0, 2.0)}
    table = config_table(rule, opt, n)
    assert len(table) == len(rule) * (1 + 2) and (table["g · max |D_i|"] <= 2**10).all()
    readings = readings_table(rule, (1.0,), n)
    assert (readings["formula / paper"] <= readings["cap 1 - 1/k"] + 1e-12).all()
    assert (readings["text / paper"] >= readings["formula / paper"]).all()


# ------------------------------------------------------------------------------- engine checks
def test_group_support_moments_is_the_total_variance_of_a_hypergeometric_mixture():
    """w in {p, q} with K holders: I = Bin(X, p) + Bin(N - X, q), X ~ Hypergeometric(n, K, N)."""
    n, K, N, p, q = 500, 37, 120, 0.5, 1 / 5
    w = np.r_[np.full(K, p), np.full(n - K, q)]
    mean, var = group_support_moments(w, N)
    X = stats.hypergeom(n, K, N)
    assert mean == pytest.approx(N * (K * p + (n - K) * q) / n, rel=1e-12)
    exact = (X.mean() * p * (1 - p) + (N - X.mean()) * q * (1 - q)) + (p - q) ** 2 * X.var()
    assert var == pytest.approx(exact, rel=1e-12)


# ------------------------------------------------------------------------------- summaries
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


# ------------------------------------------------------------------------------- anomalies
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


# ------------------------------------------------------------------------------- costs
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
    data = datasets.exponential(3000, scale=0.05, m=32, rng=1)
    protos = [p for p in successors.protocols(2**16) if p[2] in ("PEM", "SFP", "SFP (Hadamard sketch)")]
    t = deployer_table(protos, data, epsilon=2.0, k=4, counts_ms={"PEM": 1.5})
    C = COLUMNS
    assert list(t.columns) == list(C.values()) and list(t.index) == ["PEM", "SFP", "SFP (Hadamard sketch)"]
    assert t.loc["PEM", C["counts"]] == 1.5 and np.isnan(t.loc["SFP", C["counts"]])
    assert (t[C["server"]] > 0).all() and (t[C["memory"]] > 0).all()
    # the count-mean sketch sends its w = 1024 bits twice; the Hadamard sketch one coefficient's index
    assert t.loc["SFP", C["bits"]] > 1000 > 200 > t.loc["SFP (Hadamard sketch)", C["bits"]] > t.loc["PEM", C["bits"]]
