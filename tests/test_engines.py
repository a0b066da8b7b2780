"""The count-level engine against exact laws and against the protocol engine, for every oracle and protocol.

Every statistical test below has a false-alarm rate of ALPHA = 1e-3 (two-sided
where it applies); with fixed seeds the outcomes are deterministic.
"""
import math

import numpy as np
import pytest
from scipy import stats

import ldp
from ldp import datasets, metrics
from ldp.engines import binomial_tail_table, iid_binomial_top, prepare
from ldp.protocols import ExplicitCandidates, RangeCandidates, segment

ALPHA = 1e-3
Z = stats.norm.isf(ALPHA / 2)  # two-sided normal quantile
R = 200  # runs per engine in the agreement tests


def _corr_z(x, y):
    """Fisher z statistic of the sample correlation (0 under independence)."""
    r = np.corrcoef(x, y)[0, 1]
    return np.arctanh(r) * np.sqrt(len(x) - 3)


def _two_corr_z(x1, y1, x2, y2):
    """z statistic for equality of two independent sample correlations."""
    z1, z2 = np.arctanh(np.corrcoef(x1, y1)[0, 1]), np.arctanh(np.corrcoef(x2, y2)[0, 1])
    return (z1 - z2) / np.sqrt(1 / (len(x1) - 3) + 1 / (len(x2) - 3))


# ---------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------
def test_tail_table():
    lo, S, C = binomial_tail_table(1000, 0.2)
    t = lo + np.arange(S.shape[0])
    np.testing.assert_allclose(S[1:-1], stats.binom.sf(t[1:-1] - 1, 1000, 0.2), rtol=1e-12)
    np.testing.assert_allclose(S + C, 1.0, atol=1e-12)


@pytest.mark.parametrize("N0,n,q,K,min_support", [(3000, 500, 0.1, 6, None), (3000, 500, 0.1, 2, 64),
                                                  (5, 40, 0.3, 8, None)])
def test_sparse_top_draw_matches_full_draw(N0, n, q, K, min_support):
    """The K largest of N0 i.i.d. Bin(n, q) drawn sparsely have the law of the full draw."""
    g = np.random.default_rng(0)
    reps = 3000
    top_s, top_f, cnt_s, cnt_f = [], [], [], []
    thr = min_support if min_support is not None else 0
    for _ in range(reps):
        got, v = iid_binomial_top(np.array([N0]), n, q, K, rng=g, min_support=min_support)
        assert got[0] == v.shape[0] >= min(K, N0)
        full = g.binomial(n, q, N0)
        s = np.sort(v)[::-1]
        f = np.sort(full)[::-1]
        kk = min(K, N0) - 1
        top_s.append(s[kk])
        top_f.append(f[kk])
        if min_support is not None:  # every value >= min_support is drawn
            cnt_s.append((v >= thr).sum())
            cnt_f.append((full >= thr).sum())
    # discrete values: compare with a chi-square test on the pooled support
    for a, b in ((top_s, top_f), (cnt_s, cnt_f)):
        if not a:
            continue
        vals = np.union1d(a, b)
        ta = np.array([np.sum(np.equal(a, x)) for x in vals])
        tb = np.array([np.sum(np.equal(b, x)) for x in vals])
        keep = (ta + tb) >= 10
        table = np.array([np.r_[ta[keep], ta[~keep].sum()], np.r_[tb[keep], tb[~keep].sum()]])
        table = table[:, table.sum(0) > 0]
        assert stats.chi2_contingency(table).pvalue > ALPHA


def test_prepare_array_equals_dataset():
    ds = datasets.zipf(5000, m=20, rng=3)
    a, b = prepare(ds.values, 20), prepare(ds, 20)
    np.testing.assert_array_equal(a.distinct, b.distinct)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.distinct[a.user_index], ds.values)
    assert prepare(ds) is prepare(ds)  # cached on the data set
    with pytest.raises(ValueError, match="m = 20"):
        prepare(ds, 24)


def test_count_supports_law():
    """Law 1: I_c ~ Bin(N_c, p) + Bin(N - N_c, q) (mean and variance, 5 sigma)."""
    ds = datasets.zipf(30_000, m=16, rng=4)
    P = ldp.PEM(1.0, 4, 16, gamma=0, eta=16)
    q = P.plan(ds.n, rng=0).questions[0][0]
    o = q.oracle()
    cands = RangeCandidates(2**16, 16)
    top = ds.top(3).astype(np.int64)
    zero = np.setdiff1d(np.arange(50), ds.distinct.astype(np.int64))[:2]
    pick = np.r_[top, zero]
    sup = []
    for s in range(300):
        src = P.source(ds, rng=s, engine="counts")
        sup.append(src.supports((0,), q, cands)[pick])
    sup = np.array(sup, dtype=float)
    Nc = ds.count_of(pick.astype(np.uint64)).astype(float)
    mean = Nc * o.p + (ds.n - Nc) * o.q
    var = Nc * o.p * (1 - o.p) + (ds.n - Nc) * o.q * (1 - o.q)
    assert np.all(np.abs(sup.mean(0) - mean) < 5 * np.sqrt(var / len(sup)))
    # sample variance: sd of s^2 is about var * sqrt(2 / (R - 1))
    assert np.all(np.abs(sup.var(0, ddof=1) - var) < 5 * var * np.sqrt(2 / (len(sup) - 1)))
    assert abs(_corr_z(sup[:, 0], sup[:, 3])) < Z


def test_pem_estimates_unbiased_counts_engine():
    ds = datasets.zipf(100_000, m=24, rng=5)
    P = ldp.PEM(3.0, 4, 24, query_limit=2**12)
    top = ds.top(2)
    est = {int(v): [] for v in top}
    for s in range(200):
        r = P.run(ds, rng=s, engine="counts")
        for v, e in zip(r.heavy_hitters, r.estimates):
            if int(v) in est:
                est[int(v)].append(e)
    c = P.config(ds.n)
    o = ldp.OLH(3.0, m=24)
    nl = ds.n * c.group_fractions[-1]
    for v, e in est.items():
        assert len(e) == 200  # always found
        cnt = ds.count_of(v)
        # variance of the scaled estimate: group-sampling (hypergeometric) + OLH noise
        var_olh = (cnt / ds.n * nl * o.p * (1 - o.p) + nl * o.q * (1 - o.q)) / (o.p - o.q) ** 2
        sd = np.sqrt(var_olh * (ds.n / nl) ** 2 + cnt * (ds.n / nl - 1))
        assert abs(np.mean(e) - cnt) < 5 * sd / np.sqrt(len(e))  # 5 sd: two-sided false alarm 5.7e-7 per value


# ---------------------------------------------------------------------------
# engine agreement (protocol vs counts)
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def zipf24():
    return datasets.zipf(50_000, m=24, rng=99)


def _f1_agree(f_prot, f_cnt):
    f_prot, f_cnt = np.asarray(f_prot), np.asarray(f_cnt)
    assert stats.mannwhitneyu(f_prot, f_cnt).pvalue > ALPHA
    # and a chi-square test on the distribution of F1 levels (multiples of 1/k)
    vals = np.union1d(f_prot, f_cnt)
    t = np.array([[np.sum(np.isclose(f, v)) for v in vals] for f in (f_prot, f_cnt)])
    keep = t.sum(0) >= 10
    t = np.c_[t[:, keep], t[:, ~keep].sum(1)]
    t = t[:, t.sum(0) > 0]
    if t.shape[1] > 1:
        assert stats.chi2_contingency(t).pvalue > ALPHA


@pytest.mark.slow
def test_engines_agree_pem(zipf24):
    P = ldp.PEM(2.0, 8, 24, query_limit=2**12)
    c = P.config(zipf24.n)
    L1 = c.prefix_lengths[0]
    q = P.plan(zipf24.n, rng=0).questions[0][0]
    cands = RangeCandidates(2**L1, L1)
    heavy = np.unique(zipf24.top(3) >> np.uint64(24 - L1)).astype(np.int64)
    zero = np.setdiff1d(np.arange(2**L1), (zipf24.distinct >> np.uint64(24 - L1)).astype(np.int64))[:2]
    pick = np.r_[heavy, zero]
    top = zipf24.top(8)
    sup, f1 = {}, {}
    for engine in ("protocol", "counts"):
        sup[engine], f1[engine] = [], []
        for s in range(R):
            src = P.source(zipf24, rng=s, engine=engine)
            sup[engine].append(src.supports((0,), q, cands)[pick])
            f1[engine].append(metrics.f1(top, P.identify(src).heavy_hitters))
        sup[engine] = np.array(sup[engine], dtype=float)
    for j in range(len(pick)):
        assert stats.ks_2samp(sup["protocol"][:, j], sup["counts"][:, j]).pvalue > ALPHA
    for engine in sup:  # supports of distinct candidates are uncorrelated
        assert abs(_corr_z(sup[engine][:, 0], sup[engine][:, -1])) < Z
        assert abs(_corr_z(sup[engine][:, -2], sup[engine][:, -1])) < Z
    _f1_agree(f1["protocol"], f1["counts"])


@pytest.mark.slow
def test_engines_agree_spm_pairs():
    """Law 2: (J_a, J^b, I_ab) of segment pairs, both engines against each other and theory."""
    g = np.random.default_rng(5)
    heavy = np.array([0x1234, 0x56AB, 0x9A12, 0xCD56], dtype=np.uint64)
    vals = np.concatenate([np.repeat(heavy, [5000, 4000, 3000, 2000]),
                           g.integers(0, 2**16, 6000).astype(np.uint64)])
    P = ldp.SPM(4.0, 4, 16, query_limit=2**10)
    (qa, qb), _ = P.questions()
    A = np.sort(segment(heavy, 16, 0, 8))
    B = np.sort(segment(heavy, 16, 8, 16))
    rec = {}
    for engine in ("protocol", "counts"):
        rows = []
        for s in range(R):
            src = P.source(vals, rng=s, engine=engine)
            plan = src.plan
            sa = src.top(plan.groups_asking(qa), qa, RangeCandidates(256, 8), 4, remember=True)
            sb = src.top(plan.groups_asking(qb), qb, RangeCandidates(256, 8), 4, remember=True)
            assert np.array_equal(np.sort(sa.index).astype(np.uint64), A)  # the answer is clear
            assert np.array_equal(np.sort(sb.index).astype(np.uint64), B)
            Ja, Jb, I = src.pair(0, qa, qb, A, B)
            rows.append(np.r_[Ja, Jb, I.ravel()])
        rec[engine] = np.array(rows, dtype=float)
    # theory for each pair (a, b): E I = sum_u p_u r_u, Cov(J_a, I_ab) = sum_u r_u p_u (1 - p_u)
    o = qa.oracle()
    s1, s2 = segment(vals, 16, 0, 8), segment(vals, 16, 8, 16)
    for i, a in enumerate(A):
        pu = np.where(s1 == a, o.p, o.q)
        for j, b in enumerate(B):
            ru = np.where(s2 == b, o.p, o.q)
            col = 8 + 4 * i + j
            mean, var = (pu * ru).sum(), (pu * ru * (1 - pu * ru)).sum()
            for x in rec.values():
                assert abs(x[:, col].mean() - mean) < 5 * np.sqrt(var / R)
            assert stats.ks_2samp(rec["protocol"][:, col], rec["counts"][:, col]).pvalue > ALPHA
            # correlation with the segment support J_a (used by the joint estimator)
            assert abs(_two_corr_z(rec["protocol"][:, i], rec["protocol"][:, col],
                                   rec["counts"][:, i], rec["counts"][:, col])) < Z


@pytest.mark.slow
def test_engines_agree_spm_f1(zipf24):
    P = ldp.SPM(3.0, 8, 24, query_limit=2**12, segments=3)
    top = zipf24.top(8)
    f1 = {e: [metrics.f1(top, P.run(zipf24, rng=s, engine=e).heavy_hitters) for s in range(R)]
          for e in ("protocol", "counts")}
    _f1_agree(f1["protocol"], f1["counts"])


@pytest.mark.slow
def test_engines_agree_mcm(zipf24):
    P = ldp.MCM(3.0, 8, 24, query_limit=2**12)
    top = zipf24.top(8)
    hh = zipf24.top(1)
    sup, f1 = {}, {}
    for engine in ("protocol", "counts"):
        sup[engine], f1[engine] = [], []
        for s in range(R):
            src = P.source(zipf24, rng=s, engine=engine)
            q = src.plan.questions[0][0]
            a = int(q.answer(hh, 24)[0])  # (channel, block) of the top value
            other = (a + 7) % q.domain_size
            pair = np.array(sorted([a, other]), dtype=np.uint64)
            s2 = src.supports((0,), q, ExplicitCandidates(pair, q.width))
            sup[engine].append([s2[pair.tolist().index(a)], s2[pair.tolist().index(other)]])
            f1[engine].append(metrics.f1(top, P.identify(src).heavy_hitters))
        sup[engine] = np.array(sup[engine], dtype=float)
    for j in range(2):
        assert stats.ks_2samp(sup["protocol"][:, j], sup["counts"][:, j]).pvalue > ALPHA
    _f1_agree(f1["protocol"], f1["counts"])


# =========================================================== engines agree (count law exact)
R_HASHED = 150  # runs per engine


@pytest.fixture(scope="module")
def small16():
    return datasets.zipf(20_000, m=16, rng=7)


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
        for s in range(R_HASHED):
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
            assert abs(sup[engine][:, j].mean() - (Nc * o.p + (N - Nc) * o.q)) < Z * math.sqrt(var / R_HASHED)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["TreeHist", "SFP"])
def test_engines_agree_f1(small16, name):
    """F1 of both engines: Mann-Whitney U at ALPHA (150 runs each; HR, whose kernel is the fast one)."""
    P = {"TreeHist": ldp.TreeHist(2.0, 8, 16, bits_per_level=4),
         "SFP": ldp.SFP(3.0, 8, 16, hash_bits=4, query_limit=2**13, oracle="HR")}[name]
    top = small16.top(8)
    f1 = {e: [metrics.f1(top, P.run(small16, rng=s, engine=e).heavy_hitters) for s in range(R_HASHED)]
          for e in ("protocol", "counts")}
    assert np.std(f1["counts"]) > 0  # the setting is not trivial
    assert stats.mannwhitneyu(f1["protocol"], f1["counts"]).pvalue > ALPHA
