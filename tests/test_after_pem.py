"""TreeHist, SFP and the HR / CMS oracles (issue 14): privacy, laws, kernels, engines, done-when checks.

Tolerances: float identities within RTOL = 1e-12; binomial proportions within
Z = 5 standard deviations; every other statistical test has a false-alarm rate
ALPHA = 1e-3 (fixed seeds make the outcomes deterministic).
"""
from __future__ import annotations

import itertools
import math

import numba
import numpy as np
import pytest
from scipy import stats

import ldp
from ldp import datasets, metrics
from ldp.oracles import CMS, HR, CMSReports, HRReports, OLHReports
from ldp.protocols import Plan, ProtocolReports, RangeCandidates, channel_hash
from ldp.values import uniform

ALPHA = 1e-3
Z = 5.0
RTOL = 1e-12


def proportion_ok(k, n, prob):
    return abs(k / n - prob) <= Z * math.sqrt(prob * (1 - prob) / n)


# =========================================================== exact eps-LDP of the randomizers
HR_CONFIGS = [(0.5, 1, 4), (0.5, None, 64), (1.0, 2, 8), (2.0, None, 16), (4.0, None, 8), (4.0, 32, 2),
              (math.log(3), None, 64)]


@pytest.mark.parametrize("eps,blocks,b", HR_CONFIGS)
def test_hr_is_exactly_eps_ldp(eps, blocks, b):
    """Given the (value-independent) seed, y's law for every hashed cell; worst ratio = e^eps, attained."""
    hr = HR(eps, m=16, blocks=blocks, block_size=b)
    pmfs = np.array([hr.output_pmf(h) for h in range(hr.cells)])
    assert np.allclose(pmfs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    ratio = (pmfs[:, None, :] / pmfs[None, :, :]).max()
    assert ratio <= math.exp(eps) * (1 + RTOL)
    assert ratio >= math.exp(eps) * (1 - RTOL)


@pytest.mark.parametrize("eps,w", [(0.5, 2), (1.0, 3), (2.0, 5), (4.0, 8)])
def test_cms_is_exactly_eps_ldp(eps, w):
    """Every one of the 2^w bit vectors, under every hashed cell: worst ratio = e^eps, attained."""
    cms = CMS(eps, m=16, width=w)
    outs = np.array(list(itertools.product((0, 1), repeat=w)), dtype=float)  # (2^w, w)
    pmfs = []
    for h in range(w):
        P = cms.bit_probabilities(h)
        pmfs.append(np.prod(np.where(outs == 1, P, 1 - P), axis=1))
    pmfs = np.array(pmfs)
    assert np.allclose(pmfs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    ratio = (pmfs[:, None, :] / pmfs[None, :, :]).max()
    assert ratio <= math.exp(eps) * (1 + RTOL)
    assert ratio >= math.exp(eps) * (1 - RTOL)


@pytest.mark.parametrize("make", [lambda: HR(1.0, m=64), lambda: CMS(1.0, m=64, width=64)], ids=["HR", "CMS"])
def test_seed_is_drawn_independently_of_the_value(make):
    o = make()
    a = o.privatize(np.zeros(1000, dtype=np.uint64), rng=3)
    b = o.privatize(np.full(1000, 2**64 - 1, dtype=np.uint64), rng=3)
    assert np.array_equal(a.seed, b.seed)
    assert a != b


# =========================================================== p and q, exactly
@pytest.mark.parametrize("eps,blocks,b", HR_CONFIGS)
def test_hr_support_probabilities_by_enumeration(eps, blocks, b):
    """p: y in C_h under cell h; q: the same averaged over independent uniform cells (pairwise independence)."""
    hr = HR(eps, m=16, blocks=blocks, block_size=b)
    cells = np.arange(hr.cells, dtype=np.uint64)
    ys = np.arange(hr.K, dtype=np.uint64)
    member = np.array([hr.in_set(np.full(hr.K, h, dtype=np.uint64), ys) for h in cells], dtype=float)  # (cells, K)
    pmfs = np.array([hr.output_pmf(int(h)) for h in cells])
    supp = pmfs @ member.T  # supp[x, c] = P(report of cell x supports cell c)
    assert np.allclose(np.diag(supp), hr.p, rtol=1e-12)
    assert supp.mean() == pytest.approx(hr.q, rel=1e-12)
    assert member.sum(axis=1).tolist() == [b // 2] * hr.cells  # |C_h| = b/2


def test_cms_support_probabilities():
    eps, w = 1.7, 16
    cms = CMS(eps, m=16, width=w)
    f = 1 / (math.exp(eps / 2) + 1)
    assert cms.flip == pytest.approx(f, rel=RTOL) and cms.p == pytest.approx(1 - f, rel=RTOL)
    P = np.array([cms.bit_probabilities(h) for h in range(w)])  # P[x, c] = P(bit c set | cell x)
    assert P.mean() == pytest.approx(cms.q, rel=1e-12)


def test_variance_ordering_and_hashtogram_limit():
    """HR's blocks help at large eps; with one block HR has BLH's p (Hashtogram's one-bit law)."""
    n = 10**6
    for eps in (2.0, 4.0):
        assert HR(eps).variance(n) < HR(eps, blocks=1).variance(n)
        assert HR(eps).variance(n) < 1.1 * ldp.OLH(eps).variance(n)
    one = HR(1.0, blocks=1, block_size=2**16)
    blh = ldp.BLH(1.0)
    assert one.p == pytest.approx(blh.p, rel=RTOL)
    assert one.q == pytest.approx(0.5, abs=1e-4)


# =========================================================== empirical laws of privatize
def test_hr_privatize_matches_law():
    hr = HR(2.0, m=32, blocks=4, block_size=16)
    n = 200_000
    v = np.full(n, 123456789, dtype=np.uint64)
    r = hr.privatize(v, rng=10)
    h = hr.cell(r.seed, v)
    blk, row = hr.block_row(h)
    y = r.y.astype(np.uint64)
    inside = hr.in_set(h, y)
    same_block = (y // np.uint64(hr.block_size)) == blk
    cls = np.where(inside, 0, np.where(same_block, 1, 2))
    e = math.exp(2.0)
    Zn = hr.normalizer
    expected = np.array([8 * e / Zn, 8 / Zn, (hr.K - 16) / Zn]) * n
    assert stats.chisquare(np.bincount(cls, minlength=3), expected).pvalue > ALPHA
    # inside C_h, the 8 symbols of the block are equally likely
    pos = (y % np.uint64(16))[inside].astype(np.int64)
    cnt = np.bincount(pos, minlength=16)
    assert np.count_nonzero(cnt) == 16  # C_h depends on the row, so all positions occur over users
    # the cell itself is uniform over [cells]
    assert stats.chisquare(np.bincount(h.astype(np.int64), minlength=hr.cells)).pvalue > ALPHA


def test_cms_privatize_matches_law():
    cms = CMS(1.5, m=32, width=16)
    n = 100_000
    v = np.full(n, 987654321, dtype=np.uint64)
    r = cms.privatize(v, rng=11)
    bits = r.unpacked()
    h = cms.cell(r.seed, v).astype(np.int64)
    own = bits[np.arange(n), h]
    assert proportion_ok(own.sum(), n, cms.p)
    other = (h + 3) % 16
    assert proportion_ok(bits[np.arange(n), other].sum(), n, cms.flip)
    a, b = bits[np.arange(n), (h + 1) % 16], bits[np.arange(n), (h + 2) % 16]
    f = cms.flip
    joint = np.bincount(2 * a + b, minlength=4)
    expected = n * np.array([(1 - f) ** 2, (1 - f) * f, f * (1 - f), f * f])
    assert stats.chisquare(joint, expected).pvalue > ALPHA  # bits flipped independently


@pytest.mark.parametrize("make", [lambda m: HR(2.0, m=m), lambda m: HR(0.7, m=m, blocks=1),
                                  lambda m: CMS(1.0, m=m, width=256)], ids=["HR", "Hashtogram", "CMS"])
@pytest.mark.parametrize("m", [32, 160])
def test_support_rates(make, m):
    o = make(m)
    n = 100_000
    rng = np.random.default_rng(12)
    vals = uniform(4, m, rng=rng)
    r = o.privatize(np.repeat(vals[:1], n, axis=0), rng=rng)
    s = o.support(r, vals)
    assert proportion_ok(s[0], n, o.p)
    for k in s[1:]:
        assert proportion_ok(k, n, o.q)


def reference_support(o, reports, cands):
    n = len(reports)
    out = []
    for i in range(cands.shape[0]):
        c = np.repeat(cands[i:i + 1], n, axis=0)
        h = o.cell(reports.seed, c)
        if isinstance(o, HR):
            out.append(np.count_nonzero(o.in_set(h, reports.y)))
        else:
            out.append(int(reports.unpacked()[np.arange(n), h.astype(np.int64)].sum()))
    return np.array(out)


@pytest.mark.parametrize("m", [20, 64, 96, 160])
@pytest.mark.parametrize("make", [lambda m: HR(3.0, m=m), lambda m: HR(1.0, m=m, blocks=1, block_size=4),
                                  lambda m: HR(6.0, m=m, blocks=256, block_size=2),
                                  lambda m: CMS(3.0, m=m, width=100)], ids=["HR", "HR-1x4", "HR-256x2", "CMS"])
def test_kernel_matches_reference(make, m):
    o = make(m)
    rng = np.random.default_rng(50 + m)
    pool = uniform(30, m, rng=rng)
    n = 3001  # not a multiple of the block or tile sizes
    r = o.privatize(pool[rng.integers(0, 30, size=n)], rng=rng)
    cands = np.concatenate([pool, uniform(7, m, rng=rng)])  # 37: not a multiple of 4
    ref = reference_support(o, r, cands)
    assert np.array_equal(o.support(r, cands), ref)
    assert ref[:30].sum() > 0


def test_kernel_result_independent_of_thread_count():
    rng = np.random.default_rng(61)
    for o in (HR(2.0, m=64), CMS(2.0, m=64, width=64)):
        r = o.privatize(uniform(20_000, 64, rng=rng), rng=rng)
        cands = uniform(50, 64, rng=rng)
        base = o.support(r, cands)
        old = numba.get_num_threads()
        try:
            numba.set_num_threads(1)
            assert np.array_equal(o.support(r, cands), base)
        finally:
            numba.set_num_threads(old)


@pytest.mark.slow
def test_estimates_unbiased():
    """(I - n q)/(p - q) over 100 runs: mean within 5 standard errors of the truth (HR and CMS)."""
    n, reps = 10_000, 100
    rng = np.random.default_rng(40)
    vals = np.where(rng.random(n) < 0.2, 7, rng.integers(100, 2**30, n)).astype(np.uint64)
    true = [int(np.sum(vals == 7)), 0]
    cands = np.array([7, 55], dtype=np.uint64)
    for o in (HR(1.5, m=32), CMS(1.5, m=32, width=64)):
        est = np.array([o.estimate(o.privatize(vals, rng=s), cands) for s in range(reps)])
        for j, f in enumerate(true):
            sd = math.sqrt(o.variance(n, count=f) / reps)
            assert abs(est[:, j].mean() - f) <= Z * sd


# =========================================================== reports and bad input
def test_reports_roundtrip_concat_and_dtypes(tmp_path):
    rng = np.random.default_rng(70)
    v = rng.integers(0, 2**32, size=500, dtype=np.uint64)
    for o, cls in ((HR(1.0, m=32), HRReports), (CMS(1.0, m=32, width=20), CMSReports)):
        r = o.privatize(v, rng=rng)
        assert cls.concat([r[:200], r[200:]]) == r
        assert np.array_equal(o.support(r[:200], v[:9]) + o.support(r[200:], v[:9]), o.support(r, v[:9]))
        path = tmp_path / f"{o.kind}.npz"
        r.save(path)
        back = ldp.oracles.load_reports(path)
        assert type(back) is cls and back == r
    assert HR(1.0, m=32, blocks=2, block_size=64).privatize(v, rng=0).y.dtype == np.uint8
    assert CMS(1.0, m=32, width=20).privatize(v, rng=0).bits.shape == (500, 3)
    assert HR(4.0).bits_per_report == 64 + 11 and CMS(1.0).bits_per_report == 64 + 1024


def test_bad_oracle_parameters():
    for bad in (3, 0, 2**21):
        with pytest.raises(ValueError, match="blocks"):
            HR(1.0, blocks=bad)
    for bad in (3, 1, 2**17):
        with pytest.raises(ValueError, match="block_size"):
            HR(1.0, block_size=bad)
    with pytest.raises(ValueError, match="block_size"):
        HR(1.0, blocks=1, block_size=2)  # one cell: no information
    with pytest.raises(ValueError, match="width"):
        CMS(1.0, width=1)
    for make in (lambda e: HR(e), lambda e: CMS(e)):
        with pytest.raises(ValueError, match="epsilon"):
            make(0.0)
    with pytest.raises(TypeError):
        HR(1.0, 32)  # m is keyword-only
    r = HR(1.0, m=32).privatize(np.arange(5, dtype=np.uint64), rng=0)
    with pytest.raises(ValueError, match="blocks"):
        HR(1.0, m=32, blocks=4).support(r, [1])
    with pytest.raises(TypeError, match="HRReports"):
        CMS(1.0, m=32).support(r, [1])
    with pytest.raises(ValueError, match="candidates"):
        HR(1.0, m=32).support(r, np.array([2**32], dtype=np.uint64))
    with pytest.raises(ValueError, match="cell"):
        HR(1.0, m=8).output_pmf(10**6)


# =========================================================== protocols: done-when checks
@pytest.fixture(scope="module")
def zipf_clear():
    """The issue's clear Zipf data set: s = 1.5, 5,000 distinct 32-bit values, n = 200,000."""
    return datasets.zipf(200_000, s=1.5, m=32, n_distinct=5000, rng=2024)


# TreeHist with the paper's one bit per level splits 200,000 users over 31 levels and
# loses the 8th heavy hitter (F1 about 0.6 here; that is the PEM paper's point against it):
# the done-when check uses 8 bits per level, SFP its defaults.
DONE = {
    "TreeHist": lambda: ldp.TreeHist(4.0, 8, 32, bits_per_level=8),
    "SFP": lambda: ldp.SFP(4.0, 8, 32),
}


@pytest.mark.parametrize("name", list(DONE))
def test_done_when_run_finds_top8(zipf_clear, name):
    top = zipf_clear.top(8)
    res = DONE[name]().run(zipf_clear, rng=1, engine="counts")
    assert metrics.f1(top, res.heavy_hitters) >= 0.8


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DONE))
def test_done_when_privatize_aggregate_finds_top8(zipf_clear, name, tmp_path):
    top = zipf_clear.top(8)
    P = DONE[name]()
    reports = P.privatize(zipf_clear, rng=2)
    reports.save(tmp_path / "r.npz")
    res = P.aggregate(ProtocolReports.load(tmp_path / "r.npz"), rng=3)
    assert metrics.f1(top, res.heavy_hitters) >= 0.8
    assert res.engine == "protocol" and res.protocol == name


# =========================================================== protocols: privacy accounting
MAKERS = {
    "TreeHist": lambda **kw: ldp.TreeHist(2.0, 4, 16, bits_per_level=4, **kw),
    "TreeHist-1bit": lambda **kw: ldp.TreeHist(2.0, 4, 16, **kw),
    "SFP": lambda **kw: ldp.SFP(2.0, 4, 16, hash_bits=4, query_limit=2**13, **kw),
}


@pytest.fixture(scope="module")
def small16():
    return datasets.zipf(20_000, m=16, rng=7)


@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("ff", [None, 0.2])
def test_each_user_spends_exactly_epsilon(small16, name, ff):
    P = MAKERS[name](final_fraction=ff)
    reports = P.privatize(small16, rng=0)
    kinds = {"HR": HRReports, "CMS": CMSReports, "OLH": OLHReports, "Hashtogram": HRReports}
    for g, qs in enumerate(reports.plan.questions):
        assert sum(q.epsilon for q in qs) == pytest.approx(P.epsilon, rel=RTOL)
        for q, r in zip(qs, reports.group_reports(g)):
            assert isinstance(r, kinds[P.oracle]) and r.params["epsilon"] == q.epsilon
            assert r.params == q.oracle().params  # an exactly eps_q-LDP randomizer (tests above)


# =========================================================== protocols: behaviour
def test_treehist_levels_prune_and_extend(small16):
    P = ldp.TreeHist(4.0, 4, 16, bits_per_level=2)
    res = P.run(small16, rng=5, engine="counts")
    levels = [r for r in res.rounds if r.kind == "prefix"]
    assert [r.stop for r in levels] == list(range(2, 16, 2)) and res.rounds[-1].kind == "final"
    prev = None
    for r in levels:
        assert P.min_keep <= len(r.kept) <= P.max_keep
        # the kept prefixes beyond the min_keep best all reach the pruning floor
        assert np.all(r.support[P.min_keep:] >= r.info["min_support"])
        if prev is not None:  # D_t = C_{t-1} x {0,1}^b
            parents = r.kept >> np.uint64(2)
            assert np.all(np.isin(parents, prev))
        prev = r.kept
    assert len(res.rounds) == 8 and res.queries <= P.query_limit


def test_treehist_pruning_floor_is_a_bonferroni_bound():
    """With nobody holding anything, the floor passes a never-held prefix with probability <= beta / |D|."""
    P = ldp.TreeHist(1.0, 2, 8, bits_per_level=4, oracle="OLH")
    o = ldp.OLH(0.5, m=4)
    N, D = 10_000, 16
    floor_ = P.prune_support(N, D, o)
    tail = stats.binom.sf(floor_ - 1, N, o.q)
    assert tail <= 1.2 * P.beta / D  # normal approximation of the binomial tail
    assert stats.binom.sf(floor_ - 2, N, o.q) > 0.5 * P.beta / D  # and not much stricter


def test_sfp_candidates_are_puzzles(small16):
    P = MAKERS["SFP"]()
    res = P.run(small16, rng=6, engine="counts")
    frag = [r for r in res.rounds if r.kind == "fragment"]
    assert [(r.start, r.stop) for r in frag] == P.bounds
    seed = frag[0].question.seed
    hh = res.heavy_hitters
    assert len(hh) > 0
    h = channel_hash(hh, 16, 1 << P.hash_bits, seed)
    for r in frag:  # every released value's (hash, fragment) was kept at every position
        w = r.stop - r.start
        pair = (h << np.uint64(w)) | ((hh >> np.uint64(16 - r.stop)) & np.uint64((1 << w) - 1))
        assert np.all(np.isin(pair, r.kept))
    info = res.rounds[-1].info
    assert info["after_hash_check"] <= info["joined"] <= P.max_candidates


def test_sfp_default_fragment_rule():
    P = ldp.SFP(2.0, 16, 64)
    assert P.fragment_bits == 8 and len(P.bounds) == 8  # 8 x 2^16 queries <= 2^20 / 2
    assert ldp.protocols.sfp_queries(64, 8, 8) * 2 <= P.query_limit < ldp.protocols.sfp_queries(64, 8, 9) * 2 * 2
    wide = ldp.SFP(2.0, 16, 160)  # 20 x 2^16 would not fit: 27 fragments of 6 bits (or 5)
    assert wide.fragment_bits == 6
    assert 2 * ldp.protocols.sfp_queries(160, 8, 6) <= wide.query_limit < 2 * ldp.protocols.sfp_queries(160, 8, 7)


@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("engine", ["protocol", "counts"])
def test_same_seed_same_result_and_engines_share_groups(small16, name, engine):
    P = MAKERS[name]()
    a, b = P.run(small16, rng=9, engine=engine), P.run(small16, rng=9, engine=engine)
    assert np.array_equal(a.heavy_hitters, b.heavy_hitters) and np.array_equal(a.estimates, b.estimates)
    assert a.group_sizes == P.run(small16, rng=9, engine="counts" if engine == "protocol" else "protocol").group_sizes


@pytest.mark.parametrize("make", [lambda: ldp.TreeHist(3.0, 4, 16, bits_per_level=4, oracle="OLH"),
                                  lambda: ldp.PEM(3.0, 4, 16, query_limit=2**10, oracle="HR"),
                                  lambda: ldp.PEM(3.0, 4, 16, query_limit=2**10, oracle="CMS"),
                                  lambda: ldp.SFP(3.0, 4, 16, hash_bits=4, query_limit=2**13, oracle="Hashtogram")],
                         ids=["TreeHist-OLH", "PEM-HR", "PEM-CMS", "SFP-Hashtogram"])
def test_other_oracles_save_load_and_find(small16, make, tmp_path):
    P = make()
    plan = P.plan(small16.n, rng=3)
    published = Plan.from_json(plan.to_json())  # what users read: the oracle of every question survives
    assert published == plan and all(q.oracle() == p.oracle() for qs, ps in zip(published.questions, plan.questions)
                                      for q, p in zip(qs, ps))
    r = P.privatize(small16, plan=published, rng=4)
    r.save(tmp_path / "r.npz")
    a = P.aggregate(r, rng=5)
    back = ProtocolReports.load(tmp_path / "r.npz")
    assert back == r
    b = P.aggregate(back, rng=5)
    assert np.array_equal(a.heavy_hitters, b.heavy_hitters)
    assert metrics.f1(small16.top(4), a.heavy_hitters) >= 0.5


@pytest.mark.parametrize("name", ["TreeHist", "SFP"])
def test_threshold_mode_returns_exactly_those_above(small16, name):
    theta = 0.02
    P = MAKERS[name](threshold=theta)
    res = P.run(small16, rng=8, engine="counts")
    assert np.all(res.estimates >= theta * small16.n)
    final = res.rounds[-1]
    assert np.all(final.estimates >= theta * small16.n)
    assert len(res) >= 1


def test_aggregate_refuses_foreign_reports(small16):
    r = MAKERS["TreeHist"]().privatize(small16, rng=0)
    with pytest.raises(ValueError, match="TreeHist"):
        MAKERS["SFP"]().aggregate(r)
    with pytest.raises(ValueError, match="differently configured"):
        ldp.TreeHist(2.0, 4, 16, bits_per_level=2).aggregate(r)
    with pytest.raises(ValueError, match=r"oracle = 'HR' in the plan, 'OLH' here"):
        ldp.TreeHist(2.0, 4, 16, bits_per_level=4, oracle="OLH").aggregate(r)


def test_bad_protocol_parameters():
    with pytest.raises(ValueError, match="bits_per_level"):
        ldp.TreeHist(1.0, 4, 32, bits_per_level=0)
    with pytest.raises(ValueError, match="oracle"):
        ldp.TreeHist(1.0, 4, 32, oracle="RAPPOR")
    with pytest.raises(TypeError, match="oracle"):
        ldp.SFP(1.0, 4, 32, oracle=3)
    with pytest.raises(ValueError, match="final_fraction"):
        ldp.TreeHist(1.0, 4, 32, final_fraction=1.5)
    with pytest.raises(ValueError, match="beta"):
        ldp.TreeHist(1.0, 4, 32, beta=0.0)
    with pytest.raises(ValueError, match="query_limit"):
        ldp.TreeHist(1.0, 4, 32, bits_per_level=8, query_limit=2**10)
    with pytest.raises(ValueError, match="max_keep"):
        ldp.TreeHist(1.0, 4, 32, max_keep=2)
    with pytest.raises(ValueError, match="hash_bits"):
        ldp.SFP(1.0, 4, 32, hash_bits=17)
    with pytest.raises(ValueError, match="fragment_bits"):
        ldp.SFP(1.0, 4, 64, fragment_bits=31)
    with pytest.raises(ValueError, match="query_limit"):
        ldp.SFP(1.0, 4, 32, query_limit=2**9)
    with pytest.raises(TypeError, match="check_hash"):
        ldp.SFP(1.0, 4, 32, check_hash="yes")
    with pytest.raises(ValueError, match="oracle"):
        ldp.PEM(1.0, 4, 32, oracle="GRR")


def test_smallest_query_limit_in_message_works():
    for make in (lambda q: ldp.TreeHist(1.0, 4, 32, bits_per_level=4, query_limit=q),
                 lambda q: ldp.SFP(1.0, 4, 32, query_limit=q)):
        with pytest.raises(ValueError) as exc:
            make(64)
        need = int(str(exc.value).split("works is ")[1])
        make(need)


def test_registered_for_grids():
    from ldp import experiments

    g = experiments.Grid(["TreeHist", ("SFP", {"hash_bits": 4})], [("zipf", {"n": 5000, "m": 16})],
                         {"epsilon": 2.0, "k": 4}, repetitions=2)
    df = experiments.run_grid(g, cache=False, n_jobs=1)
    assert set(df["protocol"]) == {"TreeHist", "SFP(hash_bits=4)"} and len(df) == 4


@pytest.mark.parametrize("name", ["TreeHist", "SFP"])
def test_wide_values(name):
    rng = np.random.default_rng(3)
    heavy = uniform(3, 160, rng=rng)
    vals = np.concatenate([np.repeat(heavy, [3000, 2000, 1500], axis=0), uniform(3000, 160, rng=rng)])
    P = (ldp.TreeHist(6.0, 3, 160, bits_per_level=8, query_limit=2**16) if name == "TreeHist"
         else ldp.SFP(6.0, 3, 160, hash_bits=6, query_limit=2**18))
    for engine in ("counts", "protocol"):
        res = P.run(vals, rng=4, engine=engine)
        assert metrics.f1(heavy, res.heavy_hitters) >= 2 / 3, engine


# =========================================================== engines agree (count law exact)
R = 150  # runs per engine


@pytest.fixture(scope="module")
def small16_5k():
    return datasets.zipf(5_000, m=16, rng=8)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["HR", "Hashtogram", "CMS"])
def test_count_engine_law_for_hashed_oracles(small16_5k, spec):
    """Law 1 with the oracle's p and q: supports of a held and a never-held prefix, both engines (KS)."""
    P = ldp.TreeHist(2.0, 4, 16, bits_per_level=4, oracle=spec)
    q = P.questions()[0][0]
    cands = RangeCandidates(16, 4)
    heavy = int(small16_5k.top(1)[0]) >> 12
    held = np.unique((small16_5k.distinct >> np.uint64(12)).astype(np.int64))
    absent = [c for c in range(16) if c not in held]
    pick = [heavy] + absent[:1] if absent else [heavy]
    sup = {}
    for engine in ("protocol", "counts"):
        rows = []
        for s in range(R):
            src = P.source(small16_5k, rng=s, engine=engine)
            rows.append(src.supports((0,), q, cands)[pick])
        sup[engine] = np.array(rows, dtype=float)
    o = q.oracle()
    N, n = src.n_users((0,)), small16_5k.n
    for j, c in enumerate(pick):
        assert stats.ks_2samp(sup["protocol"][:, j], sup["counts"][:, j]).pvalue > ALPHA
        # E I = E N_c (p - q) + N q; Var = oracle noise + (p - q)^2 Var N_c (N_c hypergeometric over groups)
        total = int(np.sum((small16_5k.values >> np.uint64(12)) == np.uint64(c)))
        f = N / n
        Nc = total * f
        var_nc = total * f * (1 - f) * (n - total) / max(n - 1, 1)
        var = Nc * o.p * (1 - o.p) + (N - Nc) * o.q * (1 - o.q) + (o.p - o.q) ** 2 * var_nc
        for engine in sup:
            assert abs(sup[engine][:, j].mean() - (Nc * o.p + (N - Nc) * o.q)) < Z * math.sqrt(var / R)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["TreeHist", "SFP"])
def test_engines_agree_f1(small16, name):
    """F1 of both engines: Mann-Whitney U at ALPHA (150 runs each; HR, whose kernel is the fast one)."""
    P = {"TreeHist": ldp.TreeHist(2.0, 8, 16, bits_per_level=4),
         "SFP": ldp.SFP(3.0, 8, 16, hash_bits=4, query_limit=2**13, oracle="HR")}[name]
    top = small16.top(8)
    f1 = {e: [metrics.f1(top, P.run(small16, rng=s, engine=e).heavy_hitters) for s in range(R)]
          for e in ("protocol", "counts")}
    assert np.std(f1["counts"]) > 0  # the setting is not trivial
    assert stats.mannwhitneyu(f1["protocol"], f1["counts"]).pvalue > ALPHA


# =========================================================== epsilon limits, reprs
LIMITS = {  # name -> (constructor, oracle spec, budget split s): epsilon <= s * the oracle's per-report limit
    "TreeHist HR": (lambda e: ldp.TreeHist(e, 4, 16, bits_per_level=4), "HR", 2),
    "TreeHist HR final": (lambda e: ldp.TreeHist(e, 4, 16, bits_per_level=4, final_fraction=0.2), "HR", 1),
    "TreeHist no level": (lambda e: ldp.TreeHist(e, 2, 8, bits_per_level=8, oracle="OLH"), "OLH", 1),
    "TreeHist Hashtogram": (lambda e: ldp.TreeHist(e, 4, 16, bits_per_level=4, oracle="Hashtogram"),
                            "Hashtogram", 2),
    "SFP CMS": (lambda e: ldp.SFP(e, 4, 16, hash_bits=4, query_limit=2**13), "CMS", 2),
    "SFP OLH final": (lambda e: ldp.SFP(e, 4, 16, hash_bits=4, query_limit=2**13, oracle="OLH",
                                        final_fraction=0.2), "OLH", 1),
    "PEM HR": (lambda e: ldp.PEM(e, 4, 16, eta=6, oracle="HR"), "HR", 1),
    "PEM CMS": (lambda e: ldp.PEM(e, 4, 16, eta=6, oracle="CMS"), "CMS", 1),
}


def test_oracle_limits_are_their_numeric_constraints():
    from ldp.oracles.olh import MAX_EPSILON
    from ldp.protocols import report_epsilon_limit
    from ldp.validation import EXP_MAX_EPSILON

    hr = report_epsilon_limit("HR")[0]
    assert hr == pytest.approx(26 * math.log(2)) and hr < 26 * math.log(2)
    assert HR(hr, m=8).blocks * 63 <= 2**31  # the limit itself works ...
    with pytest.raises(ValueError, match=r"\(0, 18\.0218\].*blocks \* \(block_size - 1\) must be at most 2\*\*31"):
        HR(np.nextafter(hr, np.inf), m=8)  # ... the next double does not
    ht = report_epsilon_limit("Hashtogram")[0]
    assert ht == pytest.approx(math.log(np.finfo(float).max / 32))
    o = HR(ht, m=8, blocks=1)
    assert math.isfinite(o.p) and math.isfinite(o.q) and math.isfinite(o.variance(100))
    with pytest.raises(ValueError, match=r"\(0, 706\.317\]"):
        HR(np.nextafter(ht, np.inf), m=8, blocks=1)
    assert report_epsilon_limit("CMS")[0] == EXP_MAX_EPSILON and report_epsilon_limit("OLH")[0] == MAX_EPSILON
    o = CMS(EXP_MAX_EPSILON, m=8, width=16)
    assert math.isfinite(o.variance(100))
    with pytest.raises(ValueError, match=r"\(0, 709\.78\d*\] \(e\*\*epsilon must be a finite double\)"):
        CMS(np.nextafter(EXP_MAX_EPSILON, np.inf), m=8)


@pytest.mark.parametrize("name", list(LIMITS))
def test_protocol_epsilon_limit_is_the_oracle_limit_times_the_split(name):
    from ldp.protocols import report_epsilon_limit

    make, spec, s = LIMITS[name]
    limit = s * report_epsilon_limit(spec)[0]
    P = make(limit)
    assert P.max_epsilon == pytest.approx(limit, rel=RTOL)
    data = datasets.zipf(3000, m=P.m, rng=1)
    for engine in ("counts", "protocol"):  # the limit itself runs: no overflow anywhere
        res = P.run(data, rng=2, engine=engine)
        assert np.isfinite(res.estimates).all() and len(res) >= 1
    with pytest.raises(ValueError) as info:  # refused at construction, naming the oracle's constraint
        make(limit * (1 + 1e-9))
    msg = str(info.value)
    assert f"in (0, {limit:.6g}]" in msg and f"{spec} report" in msg, msg
    assert ("epsilon/2" in msg) == (s == 2), msg


@pytest.mark.parametrize("make", [lambda: ldp.TreeHist(2.0, 4, 64), lambda: ldp.SFP(2.0, 4, 64),
                                  lambda: ldp.PEM(2.0, 4, 64, oracle="Hashtogram")],
                         ids=["TreeHist", "SFP", "PEM-Hashtogram"])
def test_reprs_are_compact(make):
    P = make()
    data = datasets.zipf(3000, m=64, rng=1)
    plan = P.plan(data.n, rng=0)
    reports = P.privatize(data.values, plan=plan, rng=1)
    res = P.aggregate(reports, rng=2)
    for obj in (P, plan, reports, res, *res.rounds, reports.group_reports(0)[0]):
        text = repr(obj)
        assert len(text) < 300 and "\n" not in text and "array(" not in text, text
    assert repr(plan).startswith(f"Plan({P.name}, n=3000, m=64, ")


# =========================================================== chapter 08 without the AOL data
@pytest.mark.notebook
@pytest.mark.slow
def test_chapter_08_without_aol_data(tmp_path, monkeypatch):
    """Chapter 08 in quick mode with LDP_DATA_DIR at an empty folder: AOL left out, said so, no nan."""
    import json
    import re

    from test_notebooks import runner

    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("LDP_DATA_DIR", str(empty))  # hides the shipped data/ copy
    figures, executed = tmp_path / "figures", tmp_path / "08_after_pem.ipynb"
    runner.ensure_kernel()
    source = runner.NOTEBOOK_DIR / "08_after_pem.ipynb"
    ok, report = runner.execute(source, executed, runner.mode_parameters(source, True), figures,
                                tmp_path / "papermill.log")
    assert ok, f"chapter 08 failed without the AOL data:\n{report}"
    for name in ("fig-after-vary-eps", "fig-after-vary-k"):
        assert (figures / f"{name}.svg").read_text(encoding="utf-8").count("No AOL results") == 1, name
        csv = (figures / f"{name}.csv").read_text(encoding="utf-8")
        assert "AOL" not in csv and "URL" in csv and "Synthetic" in csv and not re.search(r"\bnan\b", csv, re.I)
    glued = {}
    for cell in json.loads(executed.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook")
            if meta:
                glued[meta["name"]] = o["data"][meta.get("mime_prefix", "") + "text/plain"]
    bad = {k: v for k, v in glued.items() if re.search(r"\bnan\b", v, re.I)}
    assert glued and not bad, bad
    assert "the AOL data file is missing in this build" in glued["after_aol_text"]
    assert not [k for k in glued if "aol" in k and k != "after_aol_text"]
