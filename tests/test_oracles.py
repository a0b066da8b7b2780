"""Frequency oracles GRR, OLH, BLH, OUE, HR (Hashtogram) and CMS: privacy, accuracy, kernel, reports, errors.

Tolerances come from theory: binomial proportions within 5 sigma, chi-square
tests at a false-alarm rate ALPHA = 1e-6 (ALPHA_HASHED = 1e-3 for HR and CMS), float
identities within 1e-12.
"""
from __future__ import annotations

import itertools
import math

import numba
import numpy as np
import pytest
from scipy import stats

import ldp
from ldp.oracles import (
    BLH,
    CMS,
    GRR,
    HR,
    OLH,
    OUE,
    CMSReports,
    GRRReports,
    HRReports,
    OLHReports,
    OUEReports,
    Reports,
    default_d_prime,
    hashing,
    kernels,
)
from ldp.values import from_ints, uniform

ALPHA = 1e-6  # false-alarm rate per chi-square test
Z = 5.0  # sigmas for means and proportions
RTOL = 1e-12  # float rounding


def random_values(rng, n, m):
    """n uniform m-bit values in the canonical representation (ldp.values.uniform)."""
    return uniform(n, m, rng=rng)


def proportion_ok(k, n, prob):
    return abs(k / n - prob) <= Z * math.sqrt(prob * (1 - prob) / n)


# =========================================================== parameters
def test_exports_and_parameters():
    assert ldp.OLH is OLH and ldp.GRR is GRR and ldp.OUE is OUE and ldp.BLH is BLH
    e = math.exp(1.5)
    g = GRR(1.5, domain_size=10)
    assert g.p == pytest.approx(e / (e + 9), rel=RTOL) and g.q == pytest.approx(1 / (e + 9), rel=RTOL)
    o = OLH(1.5, m=32)
    assert o.d_prime == math.ceil(e + 1) == 6
    assert o.p == pytest.approx(e / (e + 5), rel=RTOL) and o.q == pytest.approx(1 / 6, rel=RTOL)
    u = OUE(1.5, domain_size=10)
    assert u.p == 0.5 and u.q == pytest.approx(1 / (e + 1), rel=RTOL)
    b = BLH(1.5, m=20)
    assert b.d_prime == 2 and b.p == pytest.approx(e / (e + 1), rel=RTOL) and b.q == 0.5
    assert b.params == OLH(1.5, d_prime=2, m=20).params
    assert "BLH" in repr(b) and "d_prime=6" in repr(o)


def test_default_d_prime_is_ceil_of_e_eps_plus_one():
    """Section 2.2.2: d' = ceil(e^eps + 1), with e^eps + 1 within 1e-9 of an integer taken as it."""
    for eps in np.linspace(0.05, 10, 200):
        x, d = math.exp(eps) + 1, default_d_prime(eps)
        assert isinstance(d, int) and d - 1 < x <= d * (1 + 1e-9)  # the smallest integer >= x (up to 1e-9)
    assert default_d_prime(math.log(3)) == 4  # exp(log 3) = 3.0000000000000004
    assert default_d_prime(math.log(9)) == 10
    assert default_d_prime(math.log(49)) == 50
    assert default_d_prime(1.0) == math.ceil(math.e + 1) == 4


def test_variance_formulas():
    n, eps = 100_000, 1.3
    e = math.exp(eps)
    g = GRR(eps, domain_size=37)
    assert g.variance(n) == pytest.approx(n * (37 - 2 + e) / (e - 1) ** 2, rel=RTOL)  # eq. (1)
    for orc in (g, OLH(eps, m=16), OLH(eps, d_prime=7, m=16), OUE(eps, domain_size=9), BLH(eps)):
        p, q = orc.p, orc.q
        assert orc.variance(n) == pytest.approx(n * q * (1 - q) / (p - q) ** 2, rel=1e-10)
        f = 1234
        assert orc.variance(n, count=f) == pytest.approx(
            (f * p * (1 - p) + (n - f) * q * (1 - q)) / (p - q) ** 2, rel=1e-10)
        assert orc.support_variance(n, f) == pytest.approx(f * p * (1 - p) + (n - f) * q * (1 - q))
    assert OUE(eps, 9).variance(n) == pytest.approx(n * 4 * e / (e - 1) ** 2, rel=RTOL)
    # eq. (3): 4 e^eps / (e^eps - 1)^2 n exactly when d' = e^eps + 1 is an integer
    olh = OLH(math.log(3), m=8)
    assert olh.d_prime == 4
    assert olh.variance(n) == pytest.approx(n * 4 * 3 / (3 - 1) ** 2, rel=1e-12)


# =========================================================== exact eps-LDP
@pytest.mark.parametrize("eps,d", [(0.5, 2), (1.0, 5), (3.0, 100), (math.log(3), 4)])
def test_grr_is_exactly_eps_ldp(eps, d):
    grr = GRR(eps, d)
    pmfs = np.array([grr.output_pmf(v) for v in range(d)])
    assert np.allclose(pmfs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    ratio = (pmfs[:, None, :] / pmfs[None, :, :]).max()
    assert ratio <= math.exp(eps) * (1 + RTOL)
    assert ratio >= math.exp(eps) * (1 - RTOL)  # attained: not a looser mechanism


@pytest.mark.parametrize("eps,d_prime,m", [(0.5, None, 16), (2.0, None, 64), (4.0, None, 160),
                                           (1.0, 2, 32), (1.0, 13, 20)])
def test_olh_is_exactly_eps_ldp(eps, d_prime, m):
    """Given the (value-independent) hash, y's law is GRR on [d']; worst ratio = e^eps, attained."""
    olh = OLH(eps, d_prime=d_prime, m=m)
    pmfs = np.array([olh.output_pmf(h) for h in range(olh.d_prime)])
    assert np.allclose(pmfs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    rng = np.random.default_rng(1)
    seeds = rng.integers(0, 2**64, size=500, dtype=np.uint64)
    v1, v2 = random_values(rng, 2, m)[:1], random_values(rng, 2, m)[1:]
    h1 = olh.hash(seeds, np.repeat(v1, 500, axis=0)).astype(int)
    h2 = olh.hash(seeds, np.repeat(v2, 500, axis=0)).astype(int)
    # P(seed, y | v) = P(seed) * pmf[H_seed(v)][y] and P(seed) does not depend on v
    worst = max((pmfs[a] / pmfs[b]).max() for a, b in zip(h1, h2))
    assert worst <= math.exp(eps) * (1 + RTOL)
    assert np.any(h1 != h2) and worst >= math.exp(eps) * (1 - RTOL)


def test_olh_seed_is_drawn_independently_of_the_value():
    """The seeds (the hash function H) are identical whatever the values: H independent of v."""
    olh = OLH(1.0, m=64)
    a = olh.privatize(np.zeros(1000, dtype=np.uint64), rng=3)
    b = olh.privatize(np.full(1000, 2**64 - 1, dtype=np.uint64), rng=3)
    assert np.array_equal(a.seed, b.seed)
    assert not np.array_equal(a.y, b.y)


@pytest.mark.parametrize("eps,d", [(0.5, 2), (1.0, 6), (2.5, 40)])
def test_oue_is_exactly_eps_ldp(eps, d):
    """Worst-case ratio of the product distribution over all outputs = prod of per-bit maxima."""
    oue = OUE(eps, d)
    P = np.array([oue.bit_probabilities(v) for v in range(d)])  # P[v, j] = Pr[bit j = 1 | v]
    worst = 0.0
    for v1 in range(d):
        for v2 in range(d):
            r1 = P[v1] / P[v2]
            r0 = (1 - P[v1]) / (1 - P[v2])
            worst = max(worst, float(np.prod(np.maximum(r0, r1))))
    assert worst <= math.exp(eps) * (1 + RTOL)
    assert worst >= math.exp(eps) * (1 - RTOL)


# =========================================================== empirical laws
def test_grr_privatize_matches_pmf_and_rates():
    grr = GRR(1.2, 5)
    n, v = 200_000, 2
    r = grr.privatize(np.full(n, v), rng=10)
    counts = np.bincount(r.y.astype(np.intp), minlength=5)
    assert stats.chisquare(counts, grr.output_pmf(v) * n).pvalue > ALPHA
    s = grr.support(r, [v, 0, 4])
    assert proportion_ok(s[0], n, grr.p)
    assert proportion_ok(s[1], n, grr.q) and proportion_ok(s[2], n, grr.q)


@pytest.mark.parametrize("eps,d_prime,m", [(1.0, None, 32), (3.0, None, 64), (2.0, None, 160),
                                           (1.0, 2, 64)])
def test_olh_privatize_matches_pmf_and_rates(eps, d_prime, m):
    olh = OLH(eps, d_prime=d_prime, m=m)
    n = 200_000
    rng = np.random.default_rng(20)
    v = random_values(rng, 1, m)
    other = random_values(rng, 3, m)
    r = olh.privatize(np.repeat(v, n, axis=0), rng=rng)
    h = olh.hash(r.seed, np.repeat(v, n, axis=0)).astype(np.int64)
    offset = (r.y.astype(np.int64) - h) % olh.d_prime  # law: output_pmf(0)
    counts = np.bincount(offset, minlength=olh.d_prime)
    assert stats.chisquare(counts, olh.output_pmf(0) * n).pvalue > ALPHA
    s = olh.support(r, np.concatenate([v, other]))
    assert proportion_ok(s[0], n, olh.p)
    for k in s[1:]:  # another value is supported with probability q = 1/d'
        assert proportion_ok(k, n, olh.q)


def test_oue_privatize_matches_bit_law_and_rates():
    oue = OUE(1.0, 8)
    n, v = 100_000, 3
    r = oue.privatize(np.full(n, v), rng=30)
    bits = r.unpacked()
    assert bits.shape == (n, 8)
    ones = bits.sum(axis=0)
    for j, prob in enumerate(oue.bit_probabilities(v)):
        assert proportion_ok(ones[j], n, prob)
    # bits are independent: joint table of (bit v, bit 0) matches the product law
    joint = np.bincount(bits[:, v] * 2 + bits[:, 0], minlength=4)
    pv, p0 = oue.p, oue.q
    expected = n * np.array([(1 - pv) * (1 - p0), (1 - pv) * p0, pv * (1 - p0), pv * p0])
    assert stats.chisquare(joint, expected).pvalue > ALPHA
    s = oue.support(r, [v, 0, 7])
    assert np.array_equal(s, ones[[v, 0, 7]])
    assert proportion_ok(s[0], n, oue.p) and proportion_ok(s[1], n, oue.q)


# =========================================================== unbiased + variance
def _check_estimator(oracle, values, candidates, true_counts, reps, seed):
    n = len(values)
    ests = np.empty((reps, len(candidates)))
    for i, ss in enumerate(np.random.SeedSequence(seed).spawn(reps)):
        ests[i] = oracle.estimate(oracle.privatize(values, rng=ss), candidates)
    lo, hi = stats.chi2.ppf(ALPHA / 2, reps - 1), stats.chi2.isf(ALPHA / 2, reps - 1)
    for j, f in enumerate(true_counts):
        var = oracle.variance(n, count=int(f))
        assert abs(ests[:, j].mean() - f) <= Z * math.sqrt(var / reps), (j, ests[:, j].mean(), f)
        stat = (reps - 1) * ests[:, j].var(ddof=1) / var  # ~ chi2(reps - 1)
        assert lo <= stat <= hi, (j, stat, lo, hi)


def _population(n, d, rng):
    """20% hold 0, 5% hold 1, the rest uniform on [2, d - 1) (d - 1 is held by nobody)."""
    u = rng.random(n)
    vals = np.where(u < 0.2, 0, np.where(u < 0.25, 1, rng.integers(2, d - 1, size=n)))
    return vals, [int(np.sum(vals == 0)), int(np.sum(vals == 1)), 0]


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: GRR(1.0, 16), lambda: OUE(1.0, 16),
                                  lambda: OLH(1.0, m=32), lambda: OLH(2.0, m=64), lambda: BLH(1.0, m=32)],
                         ids=["GRR", "OUE", "OLH-m32", "OLH-m64", "BLH"])
def test_estimates_unbiased_with_predicted_variance(make):
    oracle = make()
    n = 100_000
    rng = np.random.default_rng(40)
    vals, counts = _population(n, 16, rng)
    cands = [0, 1, 15]
    if isinstance(oracle, OLH):
        # spread the values over the m-bit domain (odd multiplier: injective mod 2^m)
        mask = np.uint64((1 << oracle.m) - 1)
        vals = (vals.astype(np.uint64) * np.uint64(2654435761)) & mask
        cands = (np.array(cands, dtype=np.uint64) * np.uint64(2654435761)) & mask
    _check_estimator(oracle, vals, cands, counts, reps=150, seed=41)


# =========================================================== kernel vs reference
def reference_support(olh, reports, candidates):
    """Slow pure-numpy support: hash every report on every candidate, compare with y."""
    n = len(reports)
    out = np.empty(len(candidates), dtype=np.int64)
    for i in range(len(candidates)):
        c = np.repeat(candidates[i:i + 1], n, axis=0)
        out[i] = np.count_nonzero(hashing.hash_values(reports.seed, c, olh.m, olh.d_prime) == reports.y)
    return out


@pytest.mark.parametrize("m", [20, 64, 96, 100, 160])
@pytest.mark.parametrize("d_prime", [2, 56, 2**31 - 1])
def test_kernel_matches_reference(m, d_prime):
    rng = np.random.default_rng(50 + m)
    olh = OLH(max(3.0, math.log(d_prime)), d_prime=d_prime, m=m)  # p >= 1/2: many matches
    n, nc = 3001, 203  # not multiples of the block or tile sizes
    pool = random_values(rng, 40, m)
    vals = pool[rng.integers(0, 40, size=n)]
    r = olh.privatize(vals, rng=rng)
    cands = np.concatenate([pool, random_values(rng, nc - 40, m)])
    ref = reference_support(olh, r, cands)
    assert np.array_equal(olh.support(r, cands), ref)
    assert ref[:40].sum() > 0
    chunks = np.ascontiguousarray(ldp.values.to_chunks32(cands, m).T)
    for split, block, threads in (("reports", 64, 2), ("candidates", 7, 3), ("auto", 2048, 1)):
        got = kernels.olh_support(r.seed, r.y, chunks, d_prime, block=block, threads=threads, split=split)
        assert np.array_equal(got, ref), (split, block)
    few = olh.support(r, cands[:3])  # few candidates: split over reports
    assert np.array_equal(few, ref[:3])
    ind = olh.support_indicators(r, cands[:50])
    assert ind.shape == (50, n) and ind.dtype == bool
    assert np.array_equal(ind.sum(axis=1), ref[:50])
    i = 7
    h = hashing.hash_values(r.seed, np.repeat(cands[i:i + 1], n, axis=0), m, d_prime)
    assert np.array_equal(ind[i], h == r.y)


def test_kernel_wide_values_m4096():
    rng = np.random.default_rng(60)
    olh = OLH(1.0, m=4096)
    vals = random_values(rng, 300, 4096)
    r = olh.privatize(vals, rng=rng)
    cands = np.concatenate([vals[:5], random_values(rng, 6, 4096)])
    assert np.array_equal(olh.support(r, cands), reference_support(olh, r, cands))


def test_kernel_result_independent_of_thread_count():
    rng = np.random.default_rng(61)
    olh = OLH(2.0, m=64)
    r = olh.privatize(random_values(rng, 20_000, 64), rng=rng)
    cands = random_values(rng, 500, 64)
    base = olh.support(r, cands)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert np.array_equal(olh.support(r, cands), base)
    finally:
        numba.set_num_threads(old)


def test_grr_and_oue_support_paths_agree():
    rng = np.random.default_rng(62)
    big = GRR(2.0, 2**40)  # sorted-search path (no dense histogram)
    vals = rng.integers(0, 50, size=5000) * (2**33)
    r = big.privatize(vals, rng=rng)
    cands = np.arange(0, 60) * (2**33)
    ref = np.array([np.count_nonzero(r.y == c) for c in cands])
    assert np.array_equal(big.support(r, cands), ref)
    oue = OUE(1.0, 50)
    r = oue.privatize(rng.integers(0, 50, size=3000), rng=rng)
    full = oue.support(r, np.arange(50))  # many candidates: column sums
    few = oue.support(r, [3, 17])  # few: per-column extraction
    assert np.array_equal(few, full[[3, 17]])
    assert np.array_equal(full, r.unpacked().sum(axis=0))


# =========================================================== reproducibility
@pytest.mark.parametrize("make,values", [
    (lambda: GRR(1.0, 100), np.arange(1000) % 100),
    (lambda: OUE(1.0, 20), np.arange(1000) % 20),
    (lambda: OLH(1.0, m=64), np.arange(1000, dtype=np.uint64)),
    (lambda: OLH(1.0, m=160), from_ints(list(range(1000)), 160)),
])
def test_same_seed_same_reports_and_estimates(make, values):
    oracle = make()
    cands = values[:10]
    a = oracle.privatize(values, rng=123)
    b = oracle.privatize(values, rng=np.random.default_rng(123))
    c = oracle.privatize(values, rng=124)
    assert a == b and not (a == c)
    assert np.array_equal(oracle.estimate(a, cands), oracle.estimate(b, cands))
    ss = np.random.SeedSequence(7)
    assert oracle.privatize(values, rng=ss) == oracle.privatize(values, rng=np.random.SeedSequence(7))


# =========================================================== reports
@pytest.fixture(params=["GRR", "OLH", "OLH160", "OUE"])
def oracle_and_reports(request):
    rng = np.random.default_rng(70)
    if request.param == "GRR":
        o = GRR(1.0, 300)
        v = rng.integers(0, 300, size=500)
    elif request.param == "OLH":
        o = OLH(1.0, m=32)
        v = rng.integers(0, 2**32, size=500, dtype=np.uint64)
    elif request.param == "OLH160":
        o = OLH(1.0, m=160)
        v = random_values(rng, 500, 160)
    else:
        o = OUE(1.0, 13)
        v = rng.integers(0, 13, size=500)
    return o, o.privatize(v, rng=rng), v[:20]


def test_reports_select_concat_and_additivity(oracle_and_reports):
    o, r, cands = oracle_and_reports
    assert len(r) == r.n == 500 and isinstance(r, Reports)
    head, tail = r[:200], r[200:]
    assert len(head) == 200 and len(tail) == 300
    assert type(r).concat([head, tail]) == r
    assert ldp.oracles.concat_reports([head, tail]) == r
    assert np.array_equal(o.support(head, cands) + o.support(tail, cands), o.support(r, cands))
    mask = np.arange(500) % 3 == 0
    idx = np.flatnonzero(mask)
    assert r[mask] == r[idx] and len(r[mask]) == mask.sum()
    assert len(r[5]) == 1 and r[-1] == r[499:500]
    assert r.params == o.params
    assert r.nbytes == sum(a.nbytes for a in r.arrays.values())
    with pytest.raises(IndexError):
        r[500]
    with pytest.raises(IndexError, match="mask"):
        r[np.ones(3, dtype=bool)]


def test_reports_save_load_roundtrip(oracle_and_reports, tmp_path):
    o, r, cands = oracle_and_reports
    path = tmp_path / "reports.npz"
    r.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reports.npz"]  # no temp file left
    back = Reports.load(path)
    assert type(back) is type(r) and back == r
    assert type(r).load(path) == r and ldp.oracles.load_reports(str(path)) == r
    assert np.array_equal(o.estimate(back, cands), o.estimate(r, cands))
    other = OUEReports if not isinstance(r, OUEReports) else GRRReports
    with pytest.raises(ValueError, match="holds"):
        other.load(path)


def test_report_compact_dtypes():
    assert OLH(1.0, m=32).privatize(np.arange(5, dtype=np.uint64), rng=0).y.dtype == np.uint8
    assert OLH(1.0, d_prime=300, m=32).privatize(np.arange(5, dtype=np.uint64), rng=0).y.dtype == np.uint16
    assert GRR(1.0, 2**20).privatize(np.arange(5), rng=0).y.dtype == np.uint32
    r = OUE(1.0, 20).privatize(np.arange(5), rng=0)
    assert r.bits.dtype == np.uint8 and r.bits.shape == (5, 3)
    r = OLH(1.0, m=64).privatize(np.arange(5, dtype=np.uint64), rng=0)
    assert r.seed.dtype == np.uint64 and r.nbytes == 5 * 9


# =========================================================== bad input
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("make", [lambda e: GRR(e, 4), lambda e: OLH(e), lambda e: OUE(e, 4),
                                  lambda e: BLH(e)])
def test_bad_epsilon(bad, make):
    with pytest.raises(ValueError, match="epsilon"):
        make(bad)


def test_bad_epsilon_type():
    with pytest.raises(TypeError, match="epsilon"):
        OLH("1.0")
    with pytest.raises(TypeError, match="epsilon"):
        GRR(True, 4)


def test_bad_structural_parameters():
    for d in (1, 0, -3):
        with pytest.raises(ValueError, match="domain_size"):
            GRR(1.0, d)
        with pytest.raises(ValueError, match="domain_size"):
            OUE(1.0, d)
    with pytest.raises(TypeError, match="domain_size"):
        GRR(1.0, 4.0)
    for dp in (1, 0, 2**31 + 1):
        with pytest.raises(ValueError, match="d_prime"):
            OLH(1.0, d_prime=dp)
    with pytest.raises(ValueError, match="d_prime"):
        OLH(30.0)  # default d' = ceil(e^30 + 1) is beyond the supported range
    for m in (0, 4097):
        with pytest.raises(ValueError, match=r"\bm\b"):
            OLH(1.0, m=m)
    with pytest.raises(TypeError):
        OLH(1.0, 5)  # d_prime is keyword-only: OLH(1.0, 16) once silently meant d' = 16
    with pytest.raises(TypeError):
        OLH(1.0, d_prime=5, m=32).privatize(np.arange(3, dtype=np.uint64), 0)  # rng is keyword-only
    with pytest.raises(ValueError, match="domain_size"):
        OUE(1.0, 2**24 + 1)


def test_bad_values_and_candidates():
    grr, oue = GRR(1.0, 10), OUE(1.0, 10)
    for o in (grr, oue):
        with pytest.raises(ValueError, match=r"values must be integers in \[0, domain_size = 10\)"):
            o.privatize([1, 10])
        with pytest.raises(ValueError, match="values"):
            o.privatize([-1, 3])
        with pytest.raises(ValueError, match="values is empty"):
            o.privatize([])
        with pytest.raises(TypeError, match="values"):
            o.privatize([1.5, 2.0])
        r = o.privatize([1, 2, 3], rng=0)
        with pytest.raises(ValueError, match="candidates"):
            o.support(r, [11])
        with pytest.raises(ValueError, match="candidates is empty"):
            o.estimate(r, [])
    olh = OLH(1.0, m=20)
    with pytest.raises(ValueError, match=r"values must hold values in \[0, 2\*\*20\)"):
        olh.privatize(np.array([1 << 20], dtype=np.uint64))
    with pytest.raises(ValueError, match="values is empty"):
        olh.privatize(np.array([], dtype=np.uint64))
    with pytest.raises(ValueError, match="values"):
        olh.privatize(np.array([-1, 2]))
    r = olh.privatize(np.arange(10, dtype=np.uint64), rng=0)
    with pytest.raises(ValueError, match=r"candidates must hold values in \[0, 2\*\*20\)"):
        olh.support(r, np.array([2**20], dtype=np.uint64))
    with pytest.raises(ValueError, match="candidates"):
        olh.support(r, np.zeros((3, 2), dtype=np.uint64))  # 2-D for m <= 64
    with pytest.raises(ValueError, match="candidates is empty"):
        olh.support(r, np.array([], dtype=np.uint64))
    wide = OLH(1.0, m=160)
    rw = wide.privatize(from_ints([1, 2, 3], 160), rng=0)
    with pytest.raises(ValueError, match=r"candidates for m = 160 bits must be a 2-D uint64 array of shape \(n, 3\)"):
        wide.support(rw, np.zeros((2, 2), dtype=np.uint64))  # wrong number of words
    with pytest.raises(ValueError, match="candidates"):
        wide.support(rw, np.zeros(4, dtype=np.uint64))  # 1-D for m > 64
    with pytest.raises(ValueError, match=r"candidates must hold values in \[0, 2\*\*160\)"):
        wide.support(rw, np.array([[2**32, 0, 0]], dtype=np.uint64))


def test_reports_from_another_oracle_are_refused():
    vals = np.arange(50, dtype=np.uint64)
    r = OLH(1.0, m=32).privatize(vals, rng=0)
    for other, name in ((OLH(2.0, m=32), "epsilon"), (OLH(1.0, d_prime=9, m=32), "d_prime"),
                        (OLH(1.0, m=64), r"\bm\b")):
        with pytest.raises(ValueError, match=name):
            other.estimate(r, vals[:3])
    g = GRR(1.0, 50).privatize(np.arange(50), rng=0)
    with pytest.raises(ValueError, match="domain_size"):
        GRR(1.0, 51).support(g, [1])
    with pytest.raises(ValueError, match="domain_size"):
        OUE(1.0, 50).support(OUE(1.0, 51).privatize([1, 2], rng=0), [1])
    with pytest.raises(TypeError, match="reports must be OLHReports"):
        OLH(1.0, m=32).support(g, vals[:3])
    with pytest.raises(ValueError, match="reports is empty"):
        OLH(1.0, m=32).support(r[:0], vals[:3])
    with pytest.raises(ValueError, match="different oracles"):
        OLHReports.concat([r, OLH(2.0, m=32).privatize(vals, rng=0)])
    with pytest.raises(ValueError, match="y"):
        OLHReports(r.params, seed=r.seed, y=np.full(50, 200, dtype=np.uint8))  # y >= d'
    with pytest.raises(ValueError, match="same number of users"):
        OLHReports(r.params, seed=r.seed, y=r.y[:10])


def test_bad_variance_arguments():
    o = OLH(1.0)
    with pytest.raises(ValueError, match=r"\bn\b"):
        o.variance(0)
    with pytest.raises(ValueError, match="count"):
        o.variance(10, count=11)
    with pytest.raises(ValueError, match="value"):
        GRR(1.0, 4).output_pmf(4)
    with pytest.raises(ValueError, match="hashed"):
        OLH(1.0).output_pmf(-1)


# =========================================================== HR (Hashtogram) and CMS, the oracles of TreeHist and SFP
ALPHA_HASHED = 1e-3


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
    assert stats.chisquare(np.bincount(cls, minlength=3), expected).pvalue > ALPHA_HASHED
    # inside C_h, the 8 symbols of the block are equally likely
    pos = (y % np.uint64(16))[inside].astype(np.int64)
    cnt = np.bincount(pos, minlength=16)
    assert np.count_nonzero(cnt) == 16  # C_h depends on the row, so all positions occur over users
    # the cell itself is uniform over [cells]
    assert stats.chisquare(np.bincount(h.astype(np.int64), minlength=hr.cells)).pvalue > ALPHA_HASHED


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
    assert stats.chisquare(joint, expected).pvalue > ALPHA_HASHED  # bits flipped independently


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


def reference_support_hashed(o, reports, cands):
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
                                  lambda m: CMS(3.0, m=m, width=100), lambda m: CMS(2.0, m=m, width=1024)],
                         ids=["HR", "HR-1x4", "HR-256x2", "CMS", "CMS-1024"])  # CMS: packed bits read in place
def test_hashed_kernel_matches_reference(make, m):
    o = make(m)
    rng = np.random.default_rng(50 + m)
    pool = uniform(30, m, rng=rng)
    n = 3001  # not a multiple of the block or tile sizes
    r = o.privatize(pool[rng.integers(0, 30, size=n)], rng=rng)
    cands = np.concatenate([pool, uniform(7, m, rng=rng)])  # 37: not a multiple of 4
    ref = reference_support_hashed(o, r, cands)
    assert np.array_equal(o.support(r, cands), ref)
    assert ref[:30].sum() > 0


def test_hashed_kernel_result_independent_of_thread_count():
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
