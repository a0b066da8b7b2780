"""The computations behind the claims' other readings in ldp.analysis and ldp.experiments."""
import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.stats import norm

from ldp.analysis import appendix, montecarlo, round_identification_probability
from ldp.book.chapters.c01_frequency_oracles import oracle_variance
from ldp.book.chapters.c01_frequency_oracles.compute import dprime_ratios
from ldp.book.chapters.c03_pem.compute import optimizer_readings
from ldp.book.chapters.c05_validation.compute import distribution_ends, mirror_pairs
from ldp.book.chapters.c08_after_pem.compute import series_pairs
from ldp.oracles import olh_pq, olh_variance


def test_lemma1_E_of_the_integer_oracle_is_four_over_its_variance():
    eps = np.array([0.0, 0.3, 1.0, 2.0, 5.0])
    integer = appendix.lemma1_E(eps, d_prime=None)
    assert integer[0] == 0.0
    assert_allclose(integer[1:], 4.0 / olh_variance(eps[1:]), rtol=1e-12)
    # where e^eps + 1 is an integer the two readings are the same oracle
    assert appendix.lemma1_E(math.log(3), d_prime=None) == pytest.approx(appendix.lemma1_E(math.log(3)), rel=1e-12)
    # the appendix's E is the larger (the real d' is the variance's minimum)
    assert np.all(integer[1:] <= appendix.lemma1_E(eps[1:]) * (1 + 1e-12))


def test_prop1_grid_with_the_integer_oracle_is_eq5():
    k, j, n = 16, 8, 1e6
    N = k * (2**10 - 1)
    grid = appendix.prop1_grid([0.5, 2.0], (2, 4), [0.01, 0.2], n, d_prime=None)
    for r in grid.itertuples():
        p1, q1 = olh_pq(r.epsilon)
        part = round_identification_probability(r.f, n / r.g, N + k, k, p1, q1, k=k, ranks=j, slots="formula")
        p2, q2 = olh_pq(r.epsilon / r.g)
        split = round_identification_probability(r.f, n, N + k, k, p2, q2, k=k, ranks=j, slots="formula")
        assert norm.cdf(r.P1) == pytest.approx(float(part), abs=1e-9)
        assert norm.cdf(r.P2) == pytest.approx(float(split), abs=1e-9)
    real = appendix.prop1_grid([0.5, 2.0], (2, 4), [0.01, 0.2], n)
    assert not np.allclose(real.P1, grid.P1)  # the readings differ


def test_joint_estimates_with_the_appendix_pq_are_a_table_of_the_same_runs():
    sim = montecarlo.joint_estimator_simulation(2000, 60, rng=5)
    app = sim.appendix_table.set_index("answers")
    assert list(app.index) == ["a", "b", "ab"]
    assert list(app.columns) == list(sim.table.set_index("answers").columns)
    assert app.loc["ab", "mean_estimate"] - app.loc["ab", "true_count"] == pytest.approx(sim.bias_appendix_pq)
    assert app.loc["ab", "z"] == pytest.approx(sim.z_appendix_pq)
    assert (app["true_count"] == sim.table.set_index("answers").loc[["a", "b", "ab"], "true_count"]).all()


def test_optimizer_readings_shows_the_papers_competitors_choice():
    t = optimizer_readings((16,), (1.0,), 64, n=1e6, query_limit=2**20).set_index("reading")
    assert t.loc["competitors='paper'", "g"] == 60  # interpretation.md: 60 one-bit rounds at eps = 1
    search = t.loc["gammas, cand_sizes='search'"]
    assert search["gamma"] + sum(int(e) for e in search["etas"].strip("()").split(",")) == 64


def test_integer_dprime_points_and_their_ratio_to_the_oracles():
    def var(e, d, n):  # eq. (2)'s variance at zero frequency, p = e^eps / (e^eps + d' - 1), q = 1/d'
        p, q = math.exp(e) / (math.exp(e) + d - 1), 1 / d
        return n * q * (1 - q) / (p - q) ** 2

    data = oracle_variance.frame(var, epsilons=(2.0,), grr_epsilons=(1.0,))
    ints = dprime_ratios(data, "integer d'", against="d' = ceil(e^eps + 1)")
    assert len(ints) == 399 and (ints["b"] == ints["b"].iloc[0]).all()
    best = ints.loc[ints["a"].idxmin(), "point"]
    assert best == "ε = 2, d' = 8"  # ceil(e^2 + 1) = 9 is not the best integer
    assert (dprime_ratios(data, "none")).empty


def test_mirror_pairs_and_distribution_ends():
    s = pd.DataFrame({"series": "F1", "x": [1.0, 2.0, 3.0, 4.0], "y": [0.1, 0.5, 0.4, 0.2], "se": 0.03})
    m = mirror_pairs(s, 2.5)
    assert list(zip(m["x"], m["mirror"])) == [(3.0, 2.0), (4.0, 1.0)]
    assert m["se"].iloc[0] == pytest.approx(math.hypot(0.03, 0.03))
    assert mirror_pairs(s, 10.0).empty
    pts = pd.DataFrame([{"panel": "a", "axis": axis, "metric": "f1", "x": x, "dist": dist,
                         "simulated_mean": x / 10 + (dist == "zipf"), "se": 0.01}
                        for axis in ("n", "m") for x in (1, 2, 3, 4) for dist in ("zipf", "zipf(-20)")])
    low = distribution_ends(pts, favourable=False)
    assert dict(zip(low["axis"], low["x"])) == {"m": 4, "n": 1}  # small n, large m
    half = distribution_ends(pts, favourable=True, half=True)
    assert sorted(half.loc[half["axis"] == "n", "x"]) == [3, 4] and sorted(half.loc[half["axis"] == "m", "x"]) == [1, 2]
    assert (half["a"] < half["b"]).all()  # zipf(-20) first at the favourable end


def test_series_pairs():
    pts = pd.DataFrame({"dataset": "S", "protocol": ["A", "B", "A"], "epsilon": [1.0, 1.0, 2.0],
                        "mean": [0.5, 0.4, 0.6], "se": 0.01})
    t = series_pairs(pts, "epsilon", "A", "B")
    assert t.to_dict("records") == [{"point": "S, ε = 1", "a": 0.5, "se_a": 0.01, "b": 0.4, "se_b": 0.01}]
    assert series_pairs(pts, "epsilon", "A", "C").empty
