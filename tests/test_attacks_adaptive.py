"""Attackers who know the server's checks, the server that judges a run, and the defence on aggregates.

Every run is seeded (a simulation), so outcomes are deterministic; where an assertion is statistical its
failure probability is stated (ALPHA = 1e-3 unless said otherwise) and derived in the test's docstring.
"""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldp
from ldp import datasets
from ldp.attacks import (
    Attack,
    Scenario,
    Server,
    adaptive_attacks,
    adaptive_grid,
    adaptive_summary,
    craft,
    defence_price,
    fake_reports,
    fake_users,
    fresh_targets,
    lookalike_targets,
    recover,
    smallest_fraction,
    support_matrix,
    undetected_fraction,
)
from ldp.attacks import kernels as K

ALPHA = 1e-3


# ---------------------------------------------------------------------------
# the crafted reports
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("cap", [1, 4, 7])
def test_capped_count_mean_sketch_reports_aim_at_cap_targets_each_target_equally(cap):
    """Every report sets the cells of the cap targets it aims at (so supports at least cap of them); every target
    is aimed at by cap/r of the reports (each of the r starting points n/r times, +-1, so +-cap reports); the
    other cells are filled so that the mean number of ones is an honest report's: a z-test at ALPHA (two-sided)
    on the n reports' total ones, whose variance is at most n w / 4."""
    o = ldp.CMS(2.0, m=32)
    t = fresh_targets(32, 16, rng=1)
    n = 4000
    rep = craft(o, t, n, kind="MGA", cap=cap, rng=2)
    o.check_reports(rep)
    S = support_matrix(o, rep, t)
    assert (S.sum(axis=1) >= cap).all()
    # the aimed targets: the cap cells set by construction are among the supported ones; each target's support
    # is at least its aimed share, and the mean over targets is the aimed share plus chance supports
    assert (S.sum(axis=0) >= cap * (n // 16) - cap).all()
    ones = np.unpackbits(rep.bits, axis=1, count=o.width).sum()
    honest_mean = o.p + (o.width - 1) * o.flip
    assert abs(ones - n * honest_mean) <= stats.norm.isf(ALPHA / 2) * math.sqrt(n * o.width / 4)


@pytest.mark.parametrize("name", ["OLH", "HR", "FLH"])
def test_capped_hashed_reports_search_for_their_subset_only(name):
    """A capped search over T seeds supports fewer targets than an uncapped one, and at least one of its own."""
    o = {"OLH": ldp.OLH(2.0, m=32), "HR": ldp.HR(2.0, m=32),
         "FLH": ldp.FLH(2.0, m=32, pool_size=512, pool_seed=3)}[name]
    t = fresh_targets(32, 16, rng=4)
    full = support_matrix(o, craft(o, t, 2000, kind="MGA", rng=5, trials=32), t).sum(axis=1)
    capped = support_matrix(o, craft(o, t, 2000, kind="MGA", rng=5, trials=32, cap=2), t).sum(axis=1)
    assert (capped >= 1).all() and capped.mean() < full.mean()


def test_one_trial_with_several_targets_is_the_honest_index_and_its_fullest_cell():
    """FLH, trials=1: indices uniform on the pool (chi-square at ALPHA: fails with probability ALPHA), and each
    report's cell holds the most targets under its member's hash (exact)."""
    o = ldp.FLH(2.0, m=64, pool_size=256, pool_seed=5)
    t = fresh_targets(64, 16, rng=6)
    rep = craft(o, t, 20_000, kind="MGA", rng=7, trials=1)
    assert stats.chisquare(np.bincount(rep.index, minlength=256)).pvalue > ALPHA
    cells = np.stack([o.hash(rep.index, np.repeat(t[i:i + 1], rep.n)) for i in range(16)], axis=1)
    load = np.array([np.bincount(c, minlength=o.d_prime).max() for c in cells])
    np.testing.assert_array_equal(support_matrix(o, rep, t).sum(axis=1), load)
    # OLH likewise: one seed per report, its fullest cell (what the kernel's search returns with T = 1)
    olh = ldp.OLH(2.0, m=64)
    r = craft(olh, t, 500, kind="MGA", rng=8, trials=1)
    ch = np.ascontiguousarray(ldp.values.to_chunks32(t, 64))
    _, _, cnt = K.olh_search(np.ascontiguousarray(r.seed[:, None]), ch, olh.d_prime)
    np.testing.assert_array_equal(support_matrix(olh, r, t).sum(axis=1), cnt)


def test_spread_fake_users_take_every_group_at_its_share():
    plan = ldp.PEM(2.0, 4, 24).plan(10_000, rng=1)
    for count in (1, 57, 2000):
        u = fake_users(plan, count, placement="spread", rng=2)
        assert u.shape == (count,)
        np.testing.assert_allclose(np.bincount(plan.labels()[u], minlength=plan.n_groups),
                                   count * np.asarray(plan.fractions), atol=1)
    w = np.r_[np.zeros(plan.n_groups - 1), 1.0]  # weights are the chosen placement's, not spread's
    u = fake_users(plan, 400, placement="spread", weights=w, rng=3)
    assert np.unique(plan.labels()[u]).shape[0] == plan.n_groups


def test_bad_arguments_of_the_adaptive_attackers():
    with pytest.raises(ValueError, match=r"cap must be an integer in \[1, 1048576\], got 0"):
        Attack("MGA", targets=4, cap=0)
    with pytest.raises(ValueError, match="cap must be an integer"):
        craft(ldp.CMS(2.0, m=32), fresh_targets(32, 4, rng=1), 10, kind="MGA", cap=-1)
    P = ldp.PEM(2.0, 4, 24)
    plan = P.plan(1000, rng=1)
    with pytest.raises(ValueError, match="cap must be an integer"):
        fake_reports(P, plan, targets=2, users=[1, 2], cap=0)
    data = datasets.zipf(4000, m=24, rng=1)
    sc = Scenario(P, data, Attack("MGA", targets=2), rng=2)
    with pytest.raises(ValueError, match="drop must be plan indices of the run's"):
        sc.source(40, drop=np.setdiff1d(np.arange(10), sc.users(40))[:1])
    with pytest.raises(ValueError, match="drop is for the count engine"):
        sc.source(40, engine="protocol", drop=sc.users(40)[:1])
    with pytest.raises(ValueError, match=r"guard must be a real number in \[0, 1\)"):
        Server(guard=1.0)
    with pytest.raises(TypeError, match="detector must be True, False or a SupportCountDetector"):
        Server(detector="yes")
    with pytest.raises(ValueError, match="engine must be 'counts' or 'protocol'"):
        Server().run(sc, 10, engine="reports")
    with pytest.raises(ValueError, match="guard must give a share for every protocol"):
        adaptive_grid({"PEM": P}, data, need=1, guard={"other": 0.01})


def test_dropped_fake_users_leave_the_count_engine_exactly():
    """crafted(f, drop=d): the kept crafted reports' supports of the marked answers, counted (exact)."""
    P = ldp.PEM(2.0, 4, 24, oracle="CMS")
    data = datasets.zipf(20_000, m=24, rng=3)
    sc = Scenario(P, data, Attack("MGA", targets=3), rng=4)
    f = 900
    users = sc.users(f)
    drop = users[::3]
    cu = sc.crafted(f, drop=drop)
    np.testing.assert_array_equal(cu.users, np.setdiff1d(users, drop))
    rep = sc.fake_reports(f)
    for g, qs in enumerate(sc.plan.questions):
        keep = ~np.isin(rep.users[rep.labels == g], drop)
        for j, q in enumerate(qs):
            marked, counts = cu.marked[q]
            want = support_matrix(q.oracle(), rep.group_reports(g)[j][keep], marked).sum(axis=0)
            np.testing.assert_array_equal(counts[g], want)
    src = sc.source(f, rng=5, drop=drop)
    assert int(np.sum(src.sizes)) == data.n - drop.shape[0]  # the dropped users no longer report
    assert sc.crafted(f, drop=users) is None  # every fake user dropped: none left


# ---------------------------------------------------------------------------
# the server: what it catches, with either engine
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_hundred_k():
    return datasets.exponential(n=200_000, m=64, rng=0)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["counts", "protocol"])
def test_flh_fake_users_with_an_honest_index_law_pass_every_check(two_hundred_k, engine):
    """PEM with FLH, eps = 2, 16 fresh targets, 12 % fake users (n = 200,000): a search over 64 pool members
    plants the targets and the index test raises the alarm (both engines); drawing the index as an honest device
    does (trials = 1) plants at least 10 of them and every check stays silent."""
    pem = ldp.PEM(2.0, 16, 64, oracle="FLH")
    server = Server(rng=5)
    searched = server.run(Scenario(pem, two_hundred_k, Attack("MGA", 16), rng=1), 0.12, engine=engine, rng=2)
    assert searched.alarm and searched.checks["index_flagged"] == pem.plan(two_hundred_k.n, rng=0).n_groups
    honest = server.run(Scenario(pem, two_hundred_k, Attack("MGA", 16, trials=1), rng=1), 0.12, engine=engine,
                        rng=2)
    assert not honest.alarm and honest.planted >= 10, honest.checks
    assert honest.checks["index_flagged"] == 0 and honest.checks["consistency_flagged"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["counts", "protocol"])
def test_count_mean_sketch_fake_users_under_the_detectors_threshold_pass_it(engine):
    """PEM with CMS, eps = 2, 16 fresh targets, 12 % fake users (n = 100,000): reports for all 16 are flagged,
    cleaned away, and the alarm rings (both engines); reports capped at 5 targets plant at least 12, silently."""
    data = datasets.exponential(n=100_000, m=64, rng=0)
    pem = ldp.PEM(2.0, 16, 64, oracle="CMS")
    server = Server(rng=5)
    full = server.run(Scenario(pem, data, Attack("MGA", 16), rng=1), 0.12, engine=engine, rng=2)
    assert full.alarm and full.checks["detector_fake"] == 12_000 and full.planted == 0
    assert full.checks["planted_before_cleaning"] == 16
    capped = server.run(Scenario(pem, data, Attack("MGA", 16, cap=5), rng=1), 0.12, engine=engine, rng=2)
    assert not capped.alarm and capped.planted >= 12, capped.checks


def test_spread_look_alikes_pass_the_consistency_check_that_catches_chosen_groups():
    """n = 10^6, eps = 2, one look-alike of a top-16 value (52 bits shared): choosing the final group plants it
    with 0.18 % fake users but the consistency check flags it at every size the search tries (nan); every group
    at its share costs more users and passes; without checks the search and the server agree run by run."""
    data = datasets.exponential(n=10**6, m=64, rng=0)
    pem = ldp.PEM(2.0, 16, 64)
    look = lookalike_targets(data, 1, keep_bits=52, rng=3)
    server = Server(detector=False, index=False)
    out = {}
    for placement in ("chosen", "spread"):
        sc = Scenario(pem, data, Attack("MGA", targets=look, placement=placement, popular=data.top(16)), rng=1)
        out[placement] = (smallest_fraction(sc, rng=2)[0], smallest_fraction(sc, rng=2, server=server)[0])
        quiet = Server(detector=False, index=False, consistency=False)
        assert smallest_fraction(sc, rng=2, server=quiet)[0] == out[placement][0]  # paired: the same runs
    assert out["chosen"][0] < 0.003 and math.isnan(out["chosen"][1])
    assert out["spread"][0] > out["chosen"][0] and out["spread"][1] == out["spread"][0]


# ---------------------------------------------------------------------------
# the defence
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def million():
    return datasets.exponential(n=10**6, m=64, rng=0)


def test_the_defence_withholds_a_fresh_target_lifted_by_the_share_it_guards_against(million):
    """PEM, eps = 2, n = 10^6, one fresh target, maximal gain: 2 % fake users plant it in each of 6 seeded runs;
    with the defence guarding against 2 % it is withheld in each (a run releases it with probability at most
    alpha = 1e-3 by the defence's bound, up to the normal approximation and the fake share's +-0.1 % spread
    over the plan's groups)."""
    pem = ldp.PEM(2.0, 16, 64)
    for run in range(6):
        sc = Scenario(pem, million, Attack("MGA", targets=1), rng=run)
        res = sc.run(0.02, rng=10 + run).result
        assert sc.outcome(res, 0.02).planted == 1
        rec = recover(res, eta=0.02, alpha=1e-3)
        assert sc.outcome(rec.result, 0.02).planted == 0 and rec.withheld.sum() >= 1


def test_the_defence_raises_the_fraction_to_about_its_guard(million):
    """With the defence guarding against eta, planting a fresh target needs more than eta: its estimate must pass
    eta n g + z sigma, and a share f of fake reports lifts it by f n g (plus noise of sd sigma)."""
    pem = ldp.PEM(2.0, 16, 64)
    sc = Scenario(pem, million, Attack("MGA", targets=1), rng=1)
    plain = smallest_fraction(sc, rng=2)[0]
    assert 0.005 < plain < 0.015  # the minimal attack: about 1 % of the users (0.94 % in the chapter's runs)
    for eta in (0.01, 0.02):
        guarded = smallest_fraction(sc, rng=2, server=Server(detector=False, consistency=False, index=False,
                                                             guard=eta))[0]
        assert guarded > eta and guarded > plain, (eta, guarded)


def test_recover_arithmetic_and_its_price(million):
    """The recovered counts are est / (1 - eta); the lower bounds (est - eta n g - z sd) / (1 - eta); what is
    withheld grows with eta; eta = 0 keeps every value significantly above 0 (all 16 of an honest release)."""
    res = ldp.PEM(2.0, 16, 64).run(million, rng=1, engine="counts")
    o = res.rounds[-1].question.oracle()
    g = (1 - o.q) / (o.p - o.q)
    rec0 = recover(res, eta=0.0)
    assert rec0.n_withheld == 0 and rec0.gain == pytest.approx(g)
    withheld = [recover(res, eta=e).n_withheld for e in (0.0, 0.005, 0.01, 0.02, 0.05)]
    assert withheld == sorted(withheld) and withheld[-1] == 16
    rec = recover(res, eta=0.01, alpha=1e-3)
    np.testing.assert_allclose(rec.genuine, np.maximum(res.estimates, 0) / 0.99)
    z = stats.norm.isf(1e-3 / 16)
    sd = (res.estimates - 0.01 * res.n * g - 0.99 * rec.lower) / z
    assert (sd > 0).all()
    np.testing.assert_array_equal(rec.result.heavy_hitters, res.heavy_hitters[rec.lower > 0])
    with pytest.raises(ValueError, match=r"eta must be a real number in \[0, 1\)"):
        recover(res, eta=1.0)
    with pytest.raises(ValueError, match="eta must be a finite real number >= 0"):
        recover(res, eta=-0.1)
    with pytest.raises(ValueError, match="alpha must be a real number in"):
        recover(res, eta=0.01, alpha=0.0)
    with pytest.raises(TypeError, match="result must be a HeavyHitterResult"):
        recover(res.heavy_hitters, eta=0.01)


# ---------------------------------------------------------------------------
# the grid, the price and the summary
# ---------------------------------------------------------------------------
@pytest.mark.slow
def test_adaptive_grid_price_and_summary():
    data = datasets.exponential(n=60_000, m=32, rng=2)
    protocols = {"PEM-FLH": ldp.PEM(4.0, 8, 32, oracle="FLH", pool_size=256),
                 "PEM-CMS": ldp.PEM(4.0, 8, 32, oracle="CMS")}
    names = {p: sorted(adaptive_attacks(P)) for p, P in protocols.items()}
    assert names == {"PEM-FLH": ["MGA", "index-honest", "one-each", "spread"],
                     "PEM-CMS": ["MGA", "capped", "one-each", "spread"]}
    # one target per fake user needs a large share of fake users: left out here for time
    attacks = {p: {k: v for k, v in adaptive_attacks(P, targets=4, cap=2).items() if k != "one-each"}
               for p, P in protocols.items()}
    kw = dict(need=2, guard=0.01, attacks=attacks, reps=1, root_seed=3, max_fraction=0.4, null_seeds=5000)
    a = adaptive_grid(protocols, data, n_jobs=1, **kw)
    b = adaptive_grid(protocols, data, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(a, b)  # the frame does not depend on the workers
    assert a.shape[0] == 4 * 6 and set(a["checks"]) == {"off", "on"} and set(a["defence"]) == {"off", "on"}
    plain = a[(a["checks"] == "off") & (a["defence"] == "off")]
    found = plain["fraction"].notna()
    assert found.sum() >= 4 and plain.loc[found, "detector_limit"].notna().all()  # the checks judged each success
    assert plain.loc[~found, "detector_limit"].isna().all()
    price = defence_price(protocols, data, guards=[0.0, 0.01], reps=2, root_seed=3)
    assert price.shape[0] == 2 * 2 * 2 and (price["f1_defended"] <= 1).all()
    summary = adaptive_summary(a, price)
    assert summary.shape[0] == 6 and {"checks_factor", "defence_factor", "price", "stop_guard"} <= set(summary.columns)
    s = summary.set_index(["protocol", "attacker"])
    np.testing.assert_allclose(s["checks_factor"], s["checked"] / s["plain"])
    stop = s["stop_guard"].notna()  # the guard that would stop an attacker exceeds the fraction it needs
    assert (s.loc[stop, "stop_guard"] > s.loc[stop, "checked"]).all()
    assert (s.loc[~stop, "checked"].isna() | (s.loc[~stop, "checked"] >= 0.01)).all()
    floor = undetected_fraction(a)
    assert set(floor["protocol"]) == set(protocols) and floor.shape[0] == 2
