"""Malicious users: crafted reports, the count engine with crafted users, the threat, the defences.

Statistical tests have a false-alarm rate of ALPHA = 1e-3 (two-sided where it
applies); with fixed seeds their outcomes are deterministic.
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
    SupportCountDetector,
    consistency_check,
    craft,
    crafted_rho,
    fake_reports,
    fake_users,
    fake_wire,
    flagged_values,
    fresh_targets,
    gain,
    lookalike_targets,
    planted,
    smallest_fraction,
    support_matrix,
    support_probability,
)
from ldp.attacks import kernels as K
from ldp.attacks.gains import gain_table, make_oracle
from ldp.attacks.threat import honest_steps, predicted_fraction, threshold_grid
from ldp.client import encode_protocol_reports
from ldp.engines import iid_binomial_top, sum_tail_table
from ldp.oracles import hashing
from ldp.protocols import ExplicitCandidates, ProtocolReports

ALPHA = 1e-3
Z = stats.norm.isf(ALPHA / 2)


def _hashed(name, eps=2.0, m=64):
    return {"OLH": ldp.OLH(eps, m=m), "HR": ldp.HR(eps, m=m), "Hashtogram": ldp.HR(eps, m=m, blocks=1),
            "CMS": ldp.CMS(eps, m=m)}[name]


# ---------------------------------------------------------------------------
# the compiled loops against the library's hash and oracles
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("m,cells", [(64, 9), (20, 252), (48, 1024), (96, 7)])
def test_hash_cells_is_the_oracles_hash(m, cells):
    g = np.random.default_rng(1)
    seeds = g.integers(0, 2**64, size=300, dtype=np.uint64)
    vals = ldp.attacks.fake.random_values(m, 5, rng=2)
    ch = np.ascontiguousarray(ldp.values.to_chunks32(vals, m))
    want = np.stack([hashing.hash_values(seeds, np.repeat(vals[i:i + 1], 300, axis=0), m, cells)
                     for i in range(5)], axis=1)
    np.testing.assert_array_equal(K.hash_cells(seeds, ch, cells), want)


@pytest.mark.parametrize("name", ["OLH", "HR", "Hashtogram"])
def test_seed_search_reports_support_what_it_counted(name):
    o = _hashed(name)
    t = fresh_targets(64, 16, rng=3)
    seeds = np.random.default_rng(4).integers(0, 2**64, size=(200, 8), dtype=np.uint64)
    ch = np.ascontiguousarray(ldp.values.to_chunks32(t, 64))
    if name == "OLH":
        seed, y, cnt = K.olh_search(seeds, ch, o.d_prime)
        rep = o.reports_class(o.params, seed=seed, y=y.astype(np.uint8))
    else:
        seed, y, cnt = K.hr_search(seeds, ch, o.blocks, o.block_size)
        rep = o.reports_class(o.params, seed=seed, y=y.astype(ldp.oracles.base.uint_dtype(o.K - 1)))
    S = support_matrix(o, rep, t)
    np.testing.assert_array_equal(S.sum(axis=1), cnt)
    assert np.isin(seed, seeds).all()
    # the search is better than one seed: more targets than a random report of the same oracle
    assert cnt.mean() > 16 * o.q + 1


@pytest.mark.parametrize("trials,h", [(8, 256), (40, 64), (64, 64)])
def test_flh_search_tries_distinct_pool_members_and_supports_what_it_counted(trials, h):
    """FLH's maximal-gain search: the index is a pool member (the user's own public choice), distinct members are
    tried (both ways of drawing them), and each report supports exactly what the search counted."""
    o = ldp.FLH(2.0, m=64, pool_size=h, pool_seed=11)
    idx = ldp.attacks.crafting.distinct_indices(3000, min(trials, h), h, np.random.default_rng(1))
    assert idx.shape == (3000, min(trials, h)) and idx.min() >= 0 and idx.max() < h
    assert (np.diff(np.sort(idx, axis=1), axis=1) > 0).all()  # distinct within each row
    cnt = np.bincount(idx.ravel(), minlength=h)  # each member equally likely: chi-square against uniform
    assert stats.chisquare(cnt).pvalue > ALPHA
    t = fresh_targets(64, 16, rng=3)
    rep = craft(o, t, 2000, kind="MGA", rng=4, trials=trials)
    o.check_reports(rep)
    S = support_matrix(o, rep, t)
    np.testing.assert_array_equal(S.sum(axis=0), o.support(rep, t))
    own = np.stack([o.hash(rep.index, np.repeat(t[i:i + 1], 2000)) for i in range(16)], axis=1)  # FLH's own hash
    np.testing.assert_array_equal(S, own == rep.y[:, None])
    assert S.sum(axis=1).mean() > 16 * o.q + 1  # better than a random report


def test_flh_one_target_indices_look_honest_searched_ones_pile_up():
    """One target: uniform indices, as an honest device draws them; a search for 16 targets prefers the members
    on which they collide (the module notes of ldp.attacks.crafting)."""
    o = ldp.FLH(2.0, m=64, pool_size=256, pool_seed=5)
    t = fresh_targets(64, 16, rng=6)
    one = craft(o, t[:1], 20_000, kind="MGA", rng=7)
    assert stats.chisquare(np.bincount(one.index, minlength=256)).pvalue > ALPHA
    assert (one.y == o.hash(one.index, np.repeat(t[:1], 20_000))).all()
    many = craft(o, t, 20_000, kind="MGA", rng=8, trials=64)
    assert stats.chisquare(np.bincount(many.index, minlength=256)).pvalue < ALPHA
    whole = craft(o, t, 50, kind="MGA", rng=9, trials=256)  # the whole pool searched: its best members only
    best = max(np.bincount(o.hash(np.full(16, j), t)).max() for j in range(256))
    assert (support_matrix(o, whole, t).sum(axis=1) == best).all()
    assert np.unique(whole.index).shape[0] <= np.count_nonzero(np.bincount(many.index, minlength=256))


# ---------------------------------------------------------------------------
# crafted reports of every oracle
# ---------------------------------------------------------------------------
ORACLES = ["GRR", "OUE", "OLH", "HR", "CMS", "FLH"]


@pytest.mark.parametrize("name", ORACLES)
@pytest.mark.parametrize("kind", ["input", "RPA", "MGA"])
def test_crafted_reports_are_valid_and_support_what_the_closed_form_says(name, kind):
    o = make_oracle(name, 2.0, domain=512)
    for r in (1, 4):
        if name in ("GRR", "OUE"):
            t = np.arange(r, dtype=np.uint64) * 7
            others = np.arange(100, 164, dtype=np.uint64)
        else:
            t = fresh_targets(64, r, rng=r)
            others = fresh_targets(64, 64, rng=100 + r)
        rep = craft(o, t, 4000, kind=kind, rng=5)
        o.check_reports(rep)
        assert len(rep) == 4000
        S = support_matrix(o, rep, t)
        np.testing.assert_array_equal(S.sum(axis=0), o.support(rep, t))
        s = support_probability(o, kind, r, 64)
        if np.isfinite(s):  # HR with several targets has no closed form
            se = math.sqrt(max(s * (1 - s), 1e-12) / (4000 * r)) * (math.sqrt(r) if kind == "MGA" else 1)
            assert abs(S.mean() - s) <= Z * se + 1e-12, (S.mean(), s)
        rho = crafted_rho(o, kind, r)
        off = support_matrix(o, rep, others).mean()
        assert abs(off - rho) <= Z * math.sqrt(max(rho * (1 - rho), 1e-12) / (4000 * 8)) + 1e-12, (off, rho)
    if kind == "MGA":
        assert support_matrix(o, craft(o, t[:1], 500, kind="MGA", rng=6), t[:1]).all()  # one target: always


def test_gain_is_eq2_scale_times_excess_support():
    o = ldp.OLH(2.0, m=32)
    assert gain(o, o.p) == pytest.approx(1.0)
    assert gain(o, o.q) == pytest.approx(0.0)
    assert gain(o, 1.0) == pytest.approx((1 - o.q) / (o.p - o.q))
    assert gain(o, 1.0) == pytest.approx(2.4087, abs=1e-4)  # 2.41 at eps = 2, as the threat model states


def test_gain_table_closed_forms_agree_with_the_simulation():
    df = gain_table([1.0, 3.0], oracles=ORACLES, rs=(1, 8), n=1500, others=32, trials=16, domain=256, rng=7)
    ok = df[np.isfinite(df["gain_closed"])]
    assert len(ok) >= 30
    tol = Z * ok["gain_se"] + 1e-9 * ok["gain_closed"].abs()
    bad = ok[(ok["gain"] - ok["gain_closed"]).abs() > tol]
    assert bad.empty, bad


def test_olh_seed_search_closed_form_is_the_occupancy_law():
    # one seed, 2 targets, d' bins: the report supports both with probability 1/d'
    assert ldp.attacks.crafting.olh_search_support(2, 9, 1) == pytest.approx((1 + 1 / 9) / 2)
    assert ldp.attacks.crafting.olh_search_support(1, 9, 64) == 1.0
    more = [ldp.attacks.crafting.olh_search_support(16, 9, T) for T in (1, 4, 64)]
    assert more == sorted(more)


# ---------------------------------------------------------------------------
# fake users of every protocol
# ---------------------------------------------------------------------------
PROTOCOLS = {
    "PEM": lambda: ldp.PEM(2.0, 4, 24),
    "PEM-HR": lambda: ldp.PEM(2.0, 4, 24, oracle="HR"),
    "PEM-Hashtogram": lambda: ldp.PEM(2.0, 4, 24, oracle="Hashtogram"),
    "PEM-CMS": lambda: ldp.PEM(2.0, 4, 24, oracle="CMS"),
    "PEM-FLH": lambda: ldp.PEM(2.0, 4, 24, oracle="FLH", pool_size=256),
    "TreeHist-FLH": lambda: ldp.TreeHist(2.0, 4, 24, bits_per_level=6, oracle="FLH", pool_size=256),
    "SFP-FLH": lambda: ldp.SFP(2.0, 4, 24, oracle="FLH", pool_size=256),
    "SPM": lambda: ldp.SPM(2.0, 4, 24),
    "MCM": lambda: ldp.MCM(2.0, 4, 24),
    "TreeHist": lambda: ldp.TreeHist(2.0, 4, 24, bits_per_level=6),
    "SFP": lambda: ldp.SFP(2.0, 4, 24),
    "Strawman": lambda: ldp.Strawman(2.0, 4, 24),
}


@pytest.mark.parametrize("name", PROTOCOLS)
@pytest.mark.parametrize("kind", ["input", "RPA", "MGA"])
def test_fake_reports_merge_with_honest_batches_and_aggregate(name, kind):
    P = PROTOCOLS[name]()
    data = datasets.zipf(4000, m=24, rng=1)
    plan = P.plan(data.n, rng=2)
    fake = fake_users(plan, 0.1, rng=3)
    honest = np.setdiff1d(np.arange(data.n), fake)
    t = fresh_targets(24, 2, data=data, rng=4)
    rep = fake_reports(P, plan, targets=t, users=fake, kind=kind, rng=5, trials=4)
    assert isinstance(rep, ProtocolReports) and rep.n == fake.shape[0]
    np.testing.assert_array_equal(rep.users, fake)
    np.testing.assert_array_equal(rep.labels, plan.labels()[fake])
    batch = P.privatize(data.values[honest], plan=plan, users=honest, rng=6)
    merged = ProtocolReports.concat([batch, rep])
    assert merged.complete
    res = P.aggregate(merged, rng=7)
    assert res.n == data.n
    if kind == "MGA":  # every crafted report supports its question's answer of the first target
        for g, qs in enumerate(plan.questions):
            for j, q in enumerate(qs):
                r = rep.group_reports(g)[j]
                if len(r) and q.answer(t, 24).shape[0]:
                    S = support_matrix(q.oracle(), r, np.unique(q.answer(t, 24)))
                    assert S.any(axis=1).all()


@pytest.mark.parametrize("name", ["PEM", "PEM-HR", "PEM-CMS", "PEM-FLH", "SPM", "MCM", "TreeHist", "SFP",
                                  "SFP-FLH"])
def test_fake_wire_reports_pass_the_aggregator_and_match_the_in_memory_path(name):
    """The wire companion: fake devices' bytes pass every check of the deployment's server, and the server's
    result is the in-memory aggregation of the same honest and fake reports (same tie-breaking seed)."""
    P = PROTOCOLS[name]()
    data = datasets.zipf(4000, m=24, rng=1)
    plan = P.plan(data.n, rng=2)
    # PEM's fake users choose their groups (they may pick indices the plan puts in the groups they want)
    fake = fake_users(plan, 0.1, rng=3, placement="chosen" if name == "PEM" else "plan")
    honest = np.setdiff1d(np.arange(data.n), fake)
    batch = P.privatize(data.values[honest], plan=plan, users=honest, rng=6)
    wire = fake_wire(P, plan, targets=2, users=fake, kind="MGA", rng=5, trials=4)
    assert len(wire) == fake.shape[0] and all(isinstance(b, bytes) for b in wire)
    server = P.aggregator(plan.to_json())  # what a deployment has: the published plan only
    assert server.add_many(encode_protocol_reports(batch)) == [] and server.add_many(wire) == []
    assert server.n_reports == data.n
    merged = ProtocolReports.concat([batch, fake_reports(P, plan, targets=2, users=fake, kind="MGA", rng=5,
                                                         trials=4)])
    np.testing.assert_array_equal(server.reports().users, merged.users)
    via_wire, in_memory = server.result(rng=7), P.aggregate(merged, rng=7)
    np.testing.assert_array_equal(via_wire.heavy_hitters, in_memory.heavy_hitters)
    np.testing.assert_array_equal(via_wire.estimates, in_memory.estimates)
    with pytest.raises(ValueError):
        server.add(wire[0])  # the same fake user twice: refused like anyone


def test_fake_users_where_the_plan_puts_them_or_where_they_choose():
    plan = ldp.PEM(2.0, 4, 24).plan(10_000, rng=1)
    a = fake_users(plan, 0.05, rng=2)
    assert a.shape == (500,) and np.all(np.diff(a) > 0)
    np.testing.assert_array_equal(a, fake_users(plan, 500, rng=2))
    w = np.array([0, 0, 0, 1.0])[:plan.n_groups]
    w = np.r_[np.zeros(plan.n_groups - 1), 1.0]
    b = fake_users(plan, 300, placement="chosen", weights=w, rng=3)
    assert (plan.labels()[b] == plan.n_groups - 1).all()
    c = fake_users(plan, 401, placement="chosen", rng=4)  # default: the plan's shares, exactly
    counts = np.bincount(plan.labels()[c], minlength=plan.n_groups)
    np.testing.assert_allclose(counts, 401 * np.asarray(plan.fractions), atol=1)
    with pytest.raises(ValueError, match="placement must be one of"):
        fake_users(plan, 3, placement="anywhere")
    with pytest.raises(ValueError, match="count must be"):
        fake_users(plan, 10**6)


def test_bad_arguments_fail_before_any_work():
    P = ldp.PEM(2.0, 4, 24)
    plan = P.plan(1000, rng=1)
    with pytest.raises(ValueError, match="kind must be one of"):
        fake_reports(P, plan, targets=1, users=[1, 2], kind="poison")
    with pytest.raises(ValueError, match=r"users must be distinct plan indices in \[0, n = 1000\)"):
        fake_reports(P, plan, targets=1, users=[5, 1000])
    with pytest.raises(ValueError, match="users must be a non-empty"):
        fake_reports(P, plan, targets=1, users=[])
    with pytest.raises(ValueError, match="targets must hold values"):
        fake_reports(P, plan, targets=[2**30], users=[1])
    with pytest.raises(ValueError, match="the plan was made by"):
        fake_reports(ldp.SPM(2.0, 4, 24), plan, targets=1, users=[1])
    with pytest.raises(TypeError, match="attack must be an ldp.attacks.Attack"):
        Scenario(P, datasets.zipf(1000, m=24, rng=1), "MGA")
    with pytest.raises(ValueError, match="placement must be one of"):
        Attack("MGA", placement="everywhere")
    with pytest.raises(ValueError, match="trials must be"):
        Attack("MGA", trials=0)
    with pytest.raises(ValueError, match=r"targets must be an integer in \[1, 1048576\], got 0"):
        Attack("MGA", targets=0)
    sc = Scenario(P, datasets.zipf(1000, m=24, rng=1), Attack("MGA", 1), rng=2)
    with pytest.raises(ValueError, match="rel_tol must be a finite real number > 0, got -1"):
        smallest_fraction(sc, rel_tol=-1)
    with pytest.raises(ValueError, match=r"max_runs must be an integer in \[1, inf\], got 0"):
        smallest_fraction(sc, max_runs=0)
    with pytest.raises(ValueError, match="grow must be a finite real number > 1"):
        smallest_fraction(sc, grow=1)


def test_targets_fresh_and_lookalike():
    data = datasets.exponential(20_000, m=32, rng=1)
    t = fresh_targets(32, 50, data=data, rng=2)
    assert t.shape == (50,) and not np.isin(t, data.distinct).any()
    look = lookalike_targets(data, 3, keep_bits=24, rng=3)
    assert not np.isin(look, data.distinct).any()
    np.testing.assert_array_equal(look >> np.uint64(8), data.top(3) >> np.uint64(8))


# ---------------------------------------------------------------------------
# the count engine with crafted users, against the protocol engine
# ---------------------------------------------------------------------------
def test_sum_tail_table_and_sparse_top_with_crafted_users():
    lo, S, C = sum_tail_table(800, 0.2, 60, 0.5)
    x = stats.binom.rvs(800, 0.2, size=400_000, random_state=1) + stats.binom.rvs(60, 0.5, size=400_000,
                                                                                  random_state=2)
    for t in (170, 200, 215):
        p = S[t - lo]
        assert abs((x >= t).mean() - p) <= Z * math.sqrt(p * (1 - p) / x.shape[0]) + 1e-12
    np.testing.assert_allclose(S + C, 1.0, atol=1e-12)
    g = np.random.default_rng(3)
    kth_s, kth_f = [], []
    for _ in range(1500):
        got, v = iid_binomial_top(np.array([2000]), 800, 0.2, 5, rng=g, extra=(60, 0.5))
        kth_s.append(np.sort(v)[::-1][4])
        kth_f.append(np.sort(g.binomial(800, 0.2, 2000) + g.binomial(60, 0.5, 2000))[::-1][4])
    assert stats.mannwhitneyu(kth_s, kth_f).pvalue > ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("name,kind,r", [("PEM", "MGA", 1), ("PEM", "MGA", 3), ("PEM", "input", 2),
                                         ("PEM", "RPA", 1), ("PEM-HR", "MGA", 1), ("PEM-CMS", "MGA", 2),
                                         ("PEM-CMS", "RPA", 1), ("PEM-FLH", "MGA", 3), ("PEM-FLH", "input", 1)])
def test_count_engine_with_crafted_users_has_the_protocols_supports(name, kind, r):
    """Each candidate's support over runs: same mean and variance in both engines (targets, held, unheld)."""
    P = PROTOCOLS[name]()
    data = datasets.zipf(3000, m=24, rng=2)
    runs = 100
    sup = {"counts": [], "protocol": []}
    for rep in range(runs):
        sc = Scenario(P, data, Attack(kind, targets=r, trials=4), rng=rep, max_fraction=0.2)
        g = sc.plan.n_groups - 1
        q = sc.plan.questions[g][0]
        cands = np.unique(np.concatenate([q.answer(sc.targets, 24), q.answer(data.top(3), 24),
                                          q.answer(fresh_targets(24, 3, data=data, rng=99), 24)]))
        ec = ExplicitCandidates(cands, q.width)
        for engine in sup:
            src = sc.source(0.1, engine=engine, rng=1000 + rep)
            sup[engine].append(src.supports((g,), q, ec))
    a, b = np.array(sup["counts"], float), np.array(sup["protocol"], float)
    for j in range(a.shape[1]):
        se = math.sqrt(a[:, j].var(ddof=1) / runs + b[:, j].var(ddof=1) / runs) + 1e-9
        assert abs(a[:, j].mean() - b[:, j].mean()) <= Z * se, (j, a[:, j].mean(), b[:, j].mean())
        if a[:, j].var() > 0 and b[:, j].var() > 0:
            assert stats.levene(a[:, j], b[:, j]).pvalue > ALPHA


@pytest.mark.slow
def test_count_engine_with_crafted_users_spm_pairs():
    """SPM's pair counts with maximal-gain users: the counts engine's mean equals the protocol's."""
    P = ldp.SPM(2.0, 4, 24)
    data = datasets.zipf(3000, m=24, rng=3)
    res = {"counts": [], "protocol": []}
    for rep in range(80):
        sc = Scenario(P, data, Attack("MGA", targets=1), rng=rep, max_fraction=0.2)
        qa, qb = sc.plan.questions[0][:2]
        A = np.r_[qa.answer(sc.targets, 24), qa.answer(data.top(2), 24)]  # target's pattern first, then two held
        B = np.r_[qb.answer(sc.targets, 24), qb.answer(data.top(2), 24)]
        if np.unique(A).shape[0] < 3 or np.unique(B).shape[0] < 3:
            continue
        for engine in res:
            src = sc.source(0.1, engine=engine, rng=rep)
            for q, pats in ((qa, A), (qb, B)):
                src.top(src.plan.groups_asking(q), q, ExplicitCandidates(np.unique(np.r_[pats, np.arange(40,
                        dtype=np.uint64)]), q.width), 1000, remember=True)
            ja, jb, I = src.pair(0, qa, qb, A, B)
            res[engine].append(I.ravel())
    a, b = np.array(res["counts"], float), np.array(res["protocol"], float)
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b)) + 1e-9
    assert np.all(np.abs(a.mean(0) - b.mean(0)) <= Z * se), (a.mean(0), b.mean(0))


def test_no_crafted_users_changes_nothing():
    data = datasets.zipf(5000, m=24, rng=4)
    P = ldp.PEM(2.0, 4, 24)
    sc = Scenario(P, data, Attack("MGA", targets=1), rng=1)
    a = sc.run(0, rng=3).result
    b = P.identify(ldp.engines.CountSupport(sc.data, sc.plan.labels(), sc.plan,
                                            rng_draw=np.random.default_rng(np.random.SeedSequence(3).spawn(2)[0]),
                                            rng_keys=np.random.default_rng(np.random.SeedSequence(3).spawn(2)[1])))
    np.testing.assert_array_equal(a.heavy_hitters, b.heavy_hitters)


# ---------------------------------------------------------------------------
# the threat: how many fake users plant a value, the search, the prediction
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def synthetic():
    return datasets.exponential(n=10**6, m=64, rng=0)


def test_done_when_mga_plants_a_fresh_target_input_does_not(synthetic):
    """eps = 2, n = 10^6 synthetic: 1.5 % MGA users put one fresh target in PEM's top 16 in >= 3 of 4 runs;
    1.5 % input manipulators in <= 1 of 4 (count engine: exact for both)."""
    pem = ldp.PEM(2.0, 16, 64)
    wins = {}
    for kind in ("MGA", "input"):
        wins[kind] = sum(Scenario(pem, synthetic, Attack(kind, targets=1), rng=run).run(0.015, rng=10 + run).planted
                         for run in range(4))
    assert wins["MGA"] >= 3, wins
    assert wins["input"] <= 1, wins


def test_smallest_fraction_and_its_prediction(synthetic):
    pem = ldp.PEM(2.0, 16, 64)
    steps = honest_steps(pem, synthetic, reps=2, rng=1)
    f_mga, runs, out = smallest_fraction(Scenario(pem, synthetic, Attack("MGA", 1), rng=2), rng=3)
    assert out.planted == 1 and out.fraction == f_mga
    f_in, _, _ = smallest_fraction(Scenario(pem, synthetic, Attack("input", 1), rng=2), rng=3)
    assert runs <= 30 and f_mga < f_in
    for f, kind in ((f_mga, "MGA"), (f_in, "input")):
        pred = predicted_fraction(steps, synthetic.n, kind=kind)
        assert abs(f - pred) <= 0.25 * pred, (kind, f, pred)
    # 16th true count 22,913: about c_k / (n + c_k) input manipulators, (1 - q)/(p - q) = 2.41 times fewer with MGA
    assert predicted_fraction(steps, synthetic.n, kind="input") == pytest.approx(22_913 / (10**6 + 22_913), rel=0.1)
    nothing = Scenario(pem, synthetic, Attack("RPA", 1), rng=2, max_fraction=0.05)
    assert math.isnan(smallest_fraction(nothing, rng=3)[0])


def test_flh_prediction_is_olh_gain_with_the_pool_searched():
    """An FLH step's predicted fraction: OLH's closed form, with at most pool_size members searched."""
    steps = pd.DataFrame([{"step": 0, "name": "release", "kind": "prefix", "oracle": "FLH", "epsilon": 2.0,
                           "width": 32, "r": 1, "bar": 20_000.0}])
    olh = steps.assign(oracle="OLH")
    for kind, r in (("MGA", 1), ("MGA", 16), ("input", 1)):
        assert predicted_fraction(steps, 10**6, kind=kind, targets=r) == predicted_fraction(olh, 10**6, kind=kind,
                                                                                             targets=r)
    small = predicted_fraction(steps, 10**6, kind="MGA", targets=16, trials=64, pool_size=4)
    assert small == predicted_fraction(olh, 10**6, kind="MGA", targets=16, trials=4)
    assert small > predicted_fraction(steps, 10**6, kind="MGA", targets=16, trials=64)  # fewer members: more users


def test_threshold_grid_does_not_depend_on_the_workers():
    data = {"z": datasets.zipf(20_000, m=24, rng=5)}
    protos = {"PEM": lambda e, m: ldp.PEM(e, 4, m)}
    kw = dict(reps=1, needs=(1, 2), root_seed=3, max_fraction=0.3)
    attacks = [Attack("MGA", 2), Attack("input", 2)]
    a = threshold_grid(protos, data, [2.0], attacks, n_jobs=1, **kw)
    b = threshold_grid(protos, data, [2.0], attacks, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert set(a.columns) >= {"dataset", "protocol", "epsilon", "kind", "need", "rep", "fraction"}


# ---------------------------------------------------------------------------
# defences
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["OLH", "HR", "CMS"])
def test_detector_null_bounds_the_honest_tail(name):
    """The stated tail bound holds for honest reports of a holder of an answer and of a non-holder."""
    o = _hashed(name, 2.0, m=32)
    q = ldp.core.make_question(0, 32, 2.0, name)
    answers = np.sort(fresh_targets(32, 12, rng=1))
    det = SupportCountDetector(1e-3, seeds=40_000, rng=2)
    bound = det.null_tail(q, answers)
    assert bound[0] == 1.0 and np.all(np.diff(bound) <= 1e-15)
    n = 60_000
    for holds in (answers[:1], fresh_targets(32, 1, rng=3)):
        rep = o.privatize(np.repeat(holds, n), rng=4)
        cnt = support_matrix(o, rep, answers).sum(axis=1)
        for c in range(1, 13):
            emp = np.count_nonzero(cnt >= c)
            assert emp <= stats.binom.ppf(1 - ALPHA, n, min(bound[c], 1.0)), (name, c, emp / n, bound[c])


def test_detector_null_bounds_the_honest_flh_tail_and_flags_searched_reports():
    """FLH: the null drawn over pool members bounds honest tails; reports searched for 12 answers are flagged."""
    o = ldp.FLH(2.0, m=32, pool_size=512, pool_seed=3)
    q = ldp.core.make_question(0, 32, 2.0, "FLH", pool_size=512, pool_seed=3)
    assert q.oracle().params == o.params
    answers = np.sort(fresh_targets(32, 12, rng=1))
    bound = SupportCountDetector(1e-3, seeds=40_000, rng=2).null_tail(q, answers)
    assert bound[0] == 1.0 and np.all(np.diff(bound) <= 1e-15)
    n = 60_000
    for holds in (answers[:1], fresh_targets(32, 1, rng=3)):
        cnt = support_matrix(o, o.privatize(np.repeat(holds, n), rng=4), answers).sum(axis=1)
        for c in range(1, 13):
            assert np.count_nonzero(cnt >= c) <= stats.binom.ppf(1 - ALPHA, n, min(bound[c], 1.0)), (c, bound[c])
    crafted = support_matrix(o, craft(o, answers, 2000, kind="MGA", rng=5, trials=64), answers).sum(axis=1)
    c_star = int(np.argmax(bound <= 1e-2))  # a threshold at level 1e-2
    assert np.mean(crafted >= c_star) > 0.5, (c_star, np.bincount(crafted))


@pytest.mark.parametrize("name", ["OLH", "HR", "CMS"])
def test_detector_null_tail_when_the_released_answers_are_every_value(name):
    """A 1-bit prefix with both answers released (TreeHist's first level): nobody holds none of them, so the
    null is the worst case over the two holders, and it still bounds their honest tails (binomial, ALPHA)."""
    q = ldp.core.make_question(0, 1, 1.0, name)
    answers = np.array([0, 1], dtype=np.uint64)
    bound = SupportCountDetector(1e-3, seeds=20_000, rng=2).null_tail(q, answers)
    assert bound.shape == (4,) and bound[0] == 1.0 and bound[3] == 0.0
    o, n = q.oracle(), 60_000
    for v in answers:
        cnt = support_matrix(o, o.privatize(np.full(n, v, dtype=np.uint64), rng=int(v) + 3), answers).sum(axis=1)
        for c in (1, 2):
            assert np.count_nonzero(cnt >= c) <= stats.binom.ppf(1 - ALPHA, n, min(bound[c], 1.0)), (c, bound[c])


def test_detector_false_positive_rate_on_honest_reports_is_at_most_the_stated_rate():
    """PEM, eps = 2, 200,000 honest users (protocol engine): flagged share <= alpha (binomial, 1e-3 level)."""
    data = datasets.exponential(n=200_000, m=64, rng=5)
    pem = ldp.PEM(2.0, 16, 64)
    plan = pem.plan(data.n, rng=6)
    reports = pem.privatize(data, plan=plan, rng=7)
    res = pem.aggregate(reports, rng=8)
    det = SupportCountDetector(alpha=5e-3, seeds=30_000, rng=9)
    d = det.detect(reports, res)
    assert d.alpha == 5e-3
    assert d.n_flagged <= stats.binom.ppf(1 - ALPHA, data.n, det.alpha), d.n_flagged
    assert (d.thresholds["tail"] <= d.thresholds["level"]).all()


def test_detector_flags_count_mean_sketch_reports_crafted_for_many_targets():
    data = datasets.exponential(n=40_000, m=24, scale=0.1, rng=6)
    pem = ldp.PEM(4.0, 16, 24, oracle="CMS")
    sc = Scenario(pem, data, Attack("MGA", targets=16), rng=7)
    src = sc.source(0.2, engine="protocol", rng=8)
    res = pem.identify(src)
    assert planted(res, sc.targets) >= 12
    det = SupportCountDetector(1e-3, seeds=20_000, rng=9)
    d = det.detect(src.reports, res)
    fake = sc.users(0.2)
    assert d.rate(fake) > 0.9
    assert d.rate(np.setdiff1d(src.reports.users, fake)) <= 5e-3
    clean = det.clean(src.reports, d)
    assert clean.n == src.reports.n - d.n_flagged
    assert planted(pem.aggregate(clean, rng=1), sc.targets) <= 2


def test_consistency_check_quiet_on_honest_runs_flags_lookalikes_planted_by_chosen_groups(synthetic):
    pem = ldp.PEM(2.0, 16, 64)
    for s in range(3):
        res = pem.run(synthetic, rng=s, engine="counts")
        assert not flagged_values(res, consistency_check(res)).any()
    look = lookalike_targets(synthetic, 1, keep_bits=52, rng=3)
    sc = Scenario(pem, synthetic, Attack("MGA", targets=look, placement="chosen", popular=synthetic.top(16)), rng=1)
    assert sc.weights[-1] == 1.0  # every earlier round keeps the look-alike's prefix for free
    out = sc.run(0.004, rng=2)
    assert out.planted == 1
    fl = flagged_values(out.result, consistency_check(out.result))
    assert fl[out.ranks[0] - 1]


# ---------------------------------------------------------------------------
# the README
# ---------------------------------------------------------------------------
def test_readme_attack_snippet_runs():
    import re
    import subprocess
    import sys
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = text.split("### Malicious users", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["MGA", "input"], out.stdout
    mga, inp = (float(re.search(r"([\d.]+)%", ln).group(1)) for ln in lines)
    assert 0.5 < mga < inp < 4.0, out.stdout


def test_index_uniformity_passes_honest_flh_reports_and_flags_a_search_for_many_targets():
    """FLH's public indices: uniform from honest devices (and from one-target crafting), piled up by a maximal-gain
    search for 16 targets (5 % fake users, 64 pool members tried each): the check flags every question then."""
    pem = ldp.PEM(2.0, 16, 24, oracle="FLH", pool_size=256)
    data = datasets.zipf(60_000, m=24, rng=11)
    plan = pem.plan(data.n, rng=12)
    fake = fake_users(plan, 0.05, rng=13)
    honest = np.setdiff1d(np.arange(data.n), fake)
    batch = pem.privatize(data.values[honest], plan=plan, users=honest, rng=14)
    clean = ldp.attacks.index_uniformity(batch, alpha=1e-3)
    assert clean.shape[0] == plan.n_groups and (clean["n"] >= 5 * 256).all() and not clean["flagged"].any()
    for targets, caught in ((16, True), (1, False)):
        crafted = fake_reports(pem, plan, targets=targets, users=fake, kind="MGA", rng=15, trials=64)
        checks = ldp.attacks.index_uniformity(ProtocolReports.concat([batch, crafted]), alpha=1e-3)
        assert checks["flagged"].all() if caught else not checks["flagged"].any(), checks
    with pytest.raises(ValueError, match="no FLH question"):
        ldp.attacks.index_uniformity(ldp.PEM(2.0, 4, 24).privatize(data.values[:100], rng=1))
    with pytest.raises(ValueError, match="alpha"):
        ldp.attacks.index_uniformity(batch, alpha=1.5)
