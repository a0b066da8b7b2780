"""The empirical privacy audit of the deployed client (ldp.attacks.audit), for every protocol, oracle and group kind.

The reports come from the deployed client (ldp.client.report_many: the operating system's coins), so these tests
are not seeded: each states its failure probability.  ALPHA is the level of each Clopper-Pearson bound's pair:
a row's eps_lower exceeds its epsilon with probability at most 2 ALPHA when the client is eps-LDP.
"""
import math

import numpy as np
import pytest
from scipy import stats

import ldp
from ldp.attacks.audit import (
    V0,
    audit_grid,
    audit_group,
    audit_oracle,
    audit_protocol,
    audited_protocols,
    cp_lower,
    cp_upper,
    epsilon_estimate,
    epsilon_lower_bound,
    group_kinds,
    likelihood_event,
)

ALPHA = 1e-7
Z = stats.norm.isf(1e-7 / 2)  # two-sided normal quantile: each delta-method check fails with probability ~1e-7
N = 20_000  # reports of each value per audited group


def test_clopper_pearson_bounds_are_scipys_exact_interval():
    """One-sided bounds at level a are the ends of scipy's exact (Clopper-Pearson) two-sided interval at 1 - 2a."""
    for k, n in ((0, 50), (3, 50), (25, 50), (50, 50), (1234, 20_000)):
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 2 * 1e-3, method="exact")
        assert cp_lower(k, n, 1e-3) == pytest.approx(ci.low, abs=1e-12)
        assert cp_upper(k, n, 1e-3) == pytest.approx(ci.high, abs=1e-12)


def test_bound_and_estimate_of_fixed_counts():
    in0 = np.r_[np.ones(7000, bool), np.zeros(3000, bool)]
    in1 = np.r_[np.ones(1000, bool), np.zeros(9000, bool)]
    assert epsilon_estimate(in0, in1) == pytest.approx(math.log(7.0))
    b = epsilon_lower_bound(in0, in1, 1e-6)
    assert b == pytest.approx(math.log(cp_lower(7000, 10_000, 5e-7) / cp_upper(1000, 10_000, 5e-7)))
    assert b < math.log(7.0)
    assert math.isnan(epsilon_estimate(in0, np.zeros(10, bool)))
    assert epsilon_lower_bound(np.zeros(10, bool), np.zeros(10, bool), 1e-6) < 0  # no evidence: nothing learnt


def test_group_kinds_of_every_protocol():
    kinds = {label: sorted(group_kinds(make(2.0).plan(100_000, rng=1))) for label, make in audited_protocols().items()}
    assert kinds["PEM-OLH"] == kinds["PEM-FLH"] == ["prefix", "value"]
    assert kinds["TreeHist-HR"] == ["prefix+value"]
    assert kinds["SFP-CMS"] == ["fragment+value"]
    assert kinds["SPM-OLH"] == ["prefix+segment+value", "segment+segment+value"]
    assert len(kinds) == 16  # PEM, TreeHist, SFP with five oracles each, SPM with OLH


@pytest.fixture(scope="module")
def grid():
    return audit_grid(audited_protocols(), [2.0], n=N, alpha=ALPHA, n_jobs=1)


def test_every_group_kind_of_every_protocol_and_oracle_keeps_its_budget(grid):
    """eps = 2, one user of each group kind, N client reports of each value.

    Privacy: eps_lower <= eps in every row (each fails with probability <= 2 ALPHA = 2e-7 if the client is
    eps-LDP; 22 rows: < 5e-6).  Exactness: the event's ratio is e^eps, so the log-ratio eps_hat is within
    Z standard errors of eps (delta method, sd^2 = (1 - p0) / (N p0) + (1 - p1) / (N p1) with the observed
    proportions; each fails with probability ~1e-7): a client that spent less budget than it claims, or more,
    fails too.
    """
    assert list(grid.columns[:6]) == ["protocol", "oracle", "group", "kind", "questions", "epsilon"]
    assert {"n", "k0", "k1", "eps_hat", "eps_lower", "alpha"} <= set(grid.columns)
    assert grid.shape[0] == 22 and (grid["n"] == N).all() and (grid["epsilon"] == 2.0).all()
    assert grid.groupby("protocol")["kind"].nunique().to_dict() == {
        **{f"{p}-{o}": k for p, k in (("PEM", 2), ("TreeHist", 1), ("SFP", 1))
           for o in ("OLH", "HR", "Hashtogram", "CMS", "FLH")}, "SPM-OLH": 2}
    for row in grid.itertuples():
        assert row.eps_lower <= row.epsilon, row
        p0, p1 = row.k0 / row.n, row.k1 / row.n
        sd = math.sqrt((1 - p0) / (row.n * p0) + (1 - p1) / (row.n * p1))
        assert abs(row.eps_hat - row.epsilon) <= Z * sd, (row, sd)
    # the questions' budgets add up to the user's: two-phase groups answer two or three questions
    assert set(grid.loc[grid["protocol"].str.startswith("SPM"), "questions"]) == {3}
    assert set(grid.loc[grid["protocol"].str.startswith(("TreeHist", "SFP")), "questions"]) == {2}


def test_the_audit_sees_a_client_that_spends_more_than_it_claims():
    """An OLH client at eps = 3 audited against a claim of 2: eps_lower ~ 2.75 (CP at N = 20,000), and it stays
    above 2 unless an estimate strays by more than 15 standard errors (probability far below 1e-9)."""
    row = audit_oracle(ldp.OLH(3.0, m=16), n=N, alpha=ALPHA)
    assert row["eps_lower"] > 2.0 and row["epsilon"] == 3.0


def test_all_groups_and_the_given_values():
    pem = ldp.PEM(2.0, 4, 64, oracle="FLH")
    df = audit_protocol(pem, n=2000, alpha=ALPHA, groups="all", plan_users=2000, rng=5)
    plan = pem.plan(2000, rng=5)
    assert df["group"].tolist() == list(range(plan.n_groups)) and (df["eps_lower"] <= 2.0).all()
    # a value pair that agrees on group 0's prefix cannot be audited there
    with pytest.raises(ValueError, match="different answers to every question of group 0"):
        audit_group(plan, 0, n=200, v0=V0, v1=V0 ^ 1)
    ev = likelihood_event(ldp.GRR(1.0, 4), ldp.GRR(1.0, 4).privatize(np.array([1, 2, 3]), rng=1), 1, 2)
    assert ev.dtype == bool and ev.shape == (3,)


def test_bad_arguments_fail_before_any_work():
    pem = ldp.PEM(2.0, 4, 64)
    plan = pem.plan(2000, rng=1)
    with pytest.raises(ValueError, match=r"n must be an integer in \[100, inf\]"):
        audit_group(plan, 0, n=10)
    with pytest.raises(ValueError, match=r"group must be an integer in \[0, "):
        audit_group(plan, plan.n_groups, n=200)
    with pytest.raises(ValueError, match="alpha must be a real number in"):
        audit_group(plan, 0, n=200, alpha=0)
    with pytest.raises(ValueError, match="groups must be 'kinds' or 'all'"):
        audit_protocol(pem, n=200, groups="some")
    with pytest.raises(ValueError, match="at most 64 bits"):
        audit_group(ldp.PEM(2.0, 4, 96).plan(2000, rng=1), 0, n=200)
    with pytest.raises(ValueError, match="v0 and v1 must differ"):
        audit_oracle(ldp.OLH(1.0, m=16), n=200, v0=3, v1=3)
    with pytest.raises(TypeError, match="plan must be an ldp.core.Plan"):
        audit_group("plan", 0, n=200)


def test_budgets_above_the_default_ceiling_are_audited():
    """The auditor owns the device: it reports under the budget it audits, above the default ceiling (4) too.

    eps = 6, 2,000 reports of each value: eps_lower <= 6 fails with probability <= 2 ALPHA per row if the client
    is eps-LDP; the device with its default ceiling still refuses the plan."""
    assert ldp.client.DEFAULT_MAX_EPSILON < 6.0
    df = audit_protocol(ldp.TreeHist(6.0, 4, 64, oracle="FLH"), n=2000, alpha=ALPHA, plan_users=2000, rng=3)
    assert df.shape[0] == 1 and df["epsilon"].tolist() == [6.0] and (df["eps_lower"] <= 6.0).all()
    assert audit_oracle(ldp.OLH(6.0, m=16), n=2000, alpha=ALPHA)["eps_lower"] <= 6.0
    with pytest.raises(ValueError, match="above this device's ceiling max_epsilon"):
        ldp.client.report_many(ldp.TreeHist(6.0, 4, 64).plan(2000, rng=3), [1], users=[0])
