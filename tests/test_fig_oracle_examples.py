"""Chapter 01's worked examples of section 2.2 (ldp.book.chapters.c01_frequency_oracles.oracle_examples): the table
and its claims."""
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters import REGISTRY
from ldp.book.chapters.c01_frequency_oracles import compute
from ldp.book.chapters.c01_frequency_oracles import oracle_examples as F
from ldp.book.claims.store import ResultStore

from builds import require
from figtools import decide, store_with


def test_frame_matches_exact_arithmetic():
    ex = F.frame()
    assert list(ex.columns) == list(REGISTRY.tables[F.CHAPTER][F.NAME][0])
    value = dict(zip(ex.quantity, ex.value))
    assert value["grr_p_eps_ln49_d65536"] == pytest.approx(float(Fraction(49, 65584)), rel=1e-12)
    assert value["grr_var_per_n_eps_ln49_d65536"] == pytest.approx(float(Fraction(65583, 2304)), rel=1e-12)
    assert value["olh_std_per_sqrt_n_e10"] == pytest.approx(math.sqrt(40 / 81), rel=1e-12)
    assert value["olh_min_population_e10_f0.001"] == pytest.approx((3 / 1e-3) ** 2 * 40 / 81, rel=1e-12)
    assert value["olh_min_population_e10_f0.001_std0.7"] == pytest.approx(4_410_000, rel=1e-12)
    assert value["olh_min_population_ratio_half_f"] == pytest.approx(4.0, rel=1e-12)
    shown = F.paper_table(ex)
    assert list(shown.columns) == ["example", "quantity", "paper", "ldp.oracles"] and len(shown) == len(ex)


def test_claims_on_the_table(tmp_path):
    store = store_with(tmp_path, tables={(F.CHAPTER, F.NAME): F.frame()})
    ids = [c.id for c in F.CLAIMS if c.test.reads == (f"{F.CHAPTER}/{F.NAME}",)]
    assert {i: decide(i, store)["verdict"] for i in ids} == dict.fromkeys(ids, "reproduced")
    nmin = decide("s2-olh-min-population", store)
    assert "unrounded" in nmin["measured"] and nmin["numbers"]["target"] == 4_410_000


def test_a_missing_table_is_not_testable(tmp_path):
    row = decide("s2-grr-example-p", ResultStore(tmp_path))
    assert row["verdict"] == "not testable here" and "input missing" in row["explanation"]


def test_saved_by_the_quick_build():
    store = ResultStore.for_build("quick")
    require(store.table_path(F.CHAPTER, F.NAME))
    pd.testing.assert_frame_equal(store.load(F.CHAPTER, F.NAME), F.frame(), rtol=1e-12)


def test_eq2_is_unbiased_on_the_oracles_runs(tmp_path):
    """The chapter's simulation: GRR's and OLH's (eq. (2)) mean estimate of the held value within noise of its count."""
    seeds = np.random.SeedSequence(7).spawn(2)
    table, _ = compute.oracle_simulation(n_users=2_000, n_reps=40, epsilon=1.0, grr_domain=64, heavy_share=0.1,
                                         ss_grr=seeds[0], ss_olh=seeds[1], n_zero=4)
    assert list(table.columns) == list(REGISTRY.tables[F.CHAPTER][F.SIMULATION][0])
    store = store_with(tmp_path, tables={(F.CHAPTER, F.SIMULATION): table},
                       parameters={F.CHAPTER: {"n_reps": 40}})
    row = decide("s2-eq2-unbiased", store)
    assert row["verdict"] == "reproduced" and row["numbers"]["points"] == 2  # GRR and OLH


def test_a_biased_estimate_is_not_reproduced(tmp_path):
    """Made-up runs: the mean estimate 30 standard errors above the true count (a variance of 100^2 over 100 runs)."""
    table = pd.DataFrame({"oracle": ["GRR", "GRR", "OLH", "OLH"],
                          "check": ["mean of estimate, value 0", "variance, value 0 (c = 200)"] * 2,
                          "empirical": [200.0 + 300, 100.0 ** 2, 201.0, 100.0 ** 2],
                          "theory": [200.0, 9_000.0, 200.0, 9_000.0], "statistic": [30.0, 1.1, 0.1, 1.1]})
    store = store_with(tmp_path, tables={(F.CHAPTER, F.SIMULATION): table}, parameters={F.CHAPTER: {"n_reps": 100}})
    row = decide("s2-eq2-unbiased", store)
    assert row["verdict"] == "not reproduced" and row["numbers"]["max_abs_z"] == pytest.approx(30.0)
    assert row["numbers"]["holm_rejected"] == 1 and row["numbers"]["max_abs_z_at"].startswith("GRR")
    no_runs = store_with(tmp_path / "bare", tables={(F.CHAPTER, F.SIMULATION): table})
    assert decide("s2-eq2-unbiased", no_runs)["verdict"] == "not testable here"  # n_reps unknown


def test_definition_1_on_the_exact_distributions(tmp_path):
    """The chapter's eps-LDP check, saved as rows of the simulation's table, decides Definition 1: GRR and OLH meet
    e^eps with equality (ties within floating-point noise hold); an oracle whose worst ratio exceeds it fails."""
    table, _ = compute.ldp_ratio_check(1.0, n_seeds=200, rng=np.random.default_rng(3), n_chi=2_000)
    rows = compute.ldp_check_rows(table)
    assert list(rows.columns) == list(REGISTRY.tables[F.CHAPTER][F.SIMULATION][0])
    assert list(rows["oracle"]) == ["GRR", "GRR", "OLH", "OLH"]
    assert np.allclose(rows["statistic"], 1.0, rtol=1e-12, atol=0)  # met with equality, both ways
    row = decide("s21-definition-1", store_with(tmp_path / "exact", tables={(F.CHAPTER, F.SIMULATION): rows}))
    assert row["verdict"] == "reproduced" and row["numbers"]["points"] == 4 and row["numbers"]["ties"] == 4
    loose = compute.ldp_check_rows(table.assign(max_ratio=table["max_ratio"] * np.array([1.0, 1.01])))  # OLH + 1 %
    row = decide("s21-definition-1", store_with(tmp_path / "loose", tables={(F.CHAPTER, F.SIMULATION): loose}))
    assert row["verdict"] != "reproduced" and row["numbers"]["losses"] == 1 and "OLH" in row["numbers"]["worst_at"]
    seeds = np.random.SeedSequence(7).spawn(2)  # the simulation's rows alone (an older build): not testable
    sim, _ = compute.oracle_simulation(n_users=500, n_reps=5, epsilon=1.0, grr_domain=16, heavy_share=0.1,
                                       ss_grr=seeds[0], ss_olh=seeds[1], n_zero=2)
    assert decide("s21-definition-1", store_with(tmp_path / "old", tables={(F.CHAPTER, F.SIMULATION): sim}))[
        "verdict"] == "not testable here"
    both = store_with(tmp_path / "both", tables={(F.CHAPTER, F.SIMULATION): pd.concat([sim, rows])},
                      parameters={F.CHAPTER: {"n_reps": 5}})
    assert decide("s2-eq2-unbiased", both)["numbers"]["points"] == 2  # the ratio rows leave eq. (2)'s check alone
