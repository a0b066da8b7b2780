"""FLH: exact eps-LDP, the public/private split, the support kernel, the exact tally law, protocols.

Tolerances: float identities within RTOL = 1e-12; means within Z = 5 standard
errors; chi-square tests at a false-alarm rate ALPHA = 1e-6 (fixed seeds make
the outcomes deterministic).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import ldp
from ldp import datasets
from ldp.core import Plan, make_question
from ldp.oracles import FLH, OLH, FLHReports, Reports, hashing
from ldp.oracles.flh import max_epsilon, pool_seeds, pool_variance
from ldp.protocols import ProtocolReports
from ldp.values import as_values, to_chunks32, uniform

ALPHA = 1e-6
Z = 5.0
RTOL = 1e-12


# =========================================================== exact eps-LDP
@pytest.mark.parametrize("eps,h,m", [(0.5, 8, 4), (2.0, 16, 4), (math.log(3), 5, 3), (4.0, 7, 4)])
def test_flh_is_exactly_eps_ldp(eps, h, m):
    """Every output (j, y) of every input, enumerated: P[(j, y) | v] = pmf[H_j(v)][y] / h; worst ratio = e^eps."""
    flh = FLH(eps, m=m, pool_size=h, pool_seed=11)
    dp = flh.d_prime
    values = np.arange(2**m, dtype=np.uint64)
    pmfs = np.array([flh.output_pmf(x) for x in range(dp)])  # GRR on [d'] given the hashed cell
    H = np.stack([flh.hash(np.full(values.shape[0], j), values) for j in range(h)], axis=1)  # (values, h)
    P = pmfs[H.astype(np.int64)] / h  # P[v, j, y]
    assert np.allclose(P.sum(axis=(1, 2)), 1.0, rtol=0, atol=1e-12)
    P = P.reshape(values.shape[0], -1)
    ratio = (P[:, None, :] / P[None, :, :]).max()
    assert ratio <= math.exp(eps) * (1 + RTOL)
    assert ratio >= math.exp(eps) * (1 - RTOL)  # attained: some pool member separates two values


def test_index_is_public_and_independent_of_the_value():
    """The index comes from the public stream only; the private coins from rng only; neither sees the value."""
    flh = FLH(1.0, m=64, pool_size=300, pool_seed=5)
    i1, k1, r1 = flh.draw_noise(1000, rng=1, public_rng=2)
    i2, k2, r2 = flh.draw_noise(1000, rng=3, public_rng=2)
    i3, k3, r3 = flh.draw_noise(1000, rng=1, public_rng=4)
    assert np.array_equal(i1, i2) and not np.array_equal(i1, i3)
    assert np.array_equal(k1, k3) and np.array_equal(r1, r3) and not np.array_equal(k1, k2)
    # default public stream: a child spawned from rng (ldp.randomness.coin_sources), not rng's own stream
    default = flh.draw_noise(1000, rng=7)
    gen = np.random.default_rng(7)
    child = gen.spawn(1)[0]
    explicit = flh.draw_noise(1000, rng=gen, public_rng=child)
    assert all(np.array_equal(a, b) for a, b in zip(default, explicit))
    assert not np.array_equal(default[0], flh.draw_noise(1000, rng=7, public_rng=7)[0])
    a = flh.privatize(np.zeros(1000, dtype=np.uint64), rng=3)
    b = flh.privatize(np.full(1000, 2**64 - 1, dtype=np.uint64), rng=3)
    assert np.array_equal(a.index, b.index) and not np.array_equal(a.y, b.y)
    assert FLHReports.public_fields == ("index",)


# =========================================================== laws and kernel
def test_privatize_matches_pmf_and_uniform_index():
    flh = FLH(2.0, m=64, pool_size=64, pool_seed=9)
    n = 200_000
    rng = np.random.default_rng(20)
    v = uniform(1, 64, rng=rng)
    r = flh.privatize(np.repeat(v, n), rng=rng)
    idx = np.bincount(r.index.astype(np.int64), minlength=64)
    assert stats.chisquare(idx).pvalue > ALPHA
    h = flh.hash(r.index, np.repeat(v, n)).astype(np.int64)
    offset = (r.y.astype(np.int64) - h) % flh.d_prime
    assert stats.chisquare(np.bincount(offset, minlength=flh.d_prime), flh.output_pmf(0) * n).pvalue > ALPHA


@pytest.mark.parametrize("m,h,eps", [(16, 50, 1.0), (64, 257, 3.0), (160, 33, 2.0), (32, 1, 0.5)])
def test_support_equals_every_report_tested(m, h, eps):
    """support == #{u : y_u = H_{J_u}(c)} computed report by report; FLH's H_j is OLH's hash with seed s_j."""
    flh = FLH(eps, m=m, pool_size=h, pool_seed=123)
    rng = np.random.default_rng(1)
    distinct = uniform(40, m, rng=rng)
    data = distinct[rng.integers(0, 40, size=20_000)]
    reports = flh.privatize(data, rng=2)
    cands = np.concatenate([distinct[:13], uniform(6, m, rng=rng)])
    got = flh.support(reports, cands)
    want = [int(np.sum(flh.hash(reports.index, np.repeat(cands[i:i + 1], len(reports), axis=0)) == reports.y))
            for i in range(cands.shape[0])]
    np.testing.assert_array_equal(got, want)
    olh = OLH(eps, m=m, d_prime=flh.d_prime)
    j = reports.index.astype(np.int64)
    np.testing.assert_array_equal(flh.hash(j, data), olh.hash(pool_seeds(123, h)[j], data))
    # the tally is additive over parts; partial/finish give the support
    parts = [reports[:7000], reports[7000:]]
    np.testing.assert_array_equal(sum(flh.tally(p) for p in parts), flh.tally(reports))
    np.testing.assert_array_equal(flh.finish_support(sum(flh.partial_support(p, cands) for p in parts), cands), got)


@pytest.mark.parametrize("m,start", [(20, 5), (64, 2**32 - 6), (64, 2**40 + 3), (40, 2**33 - 2)])
def test_support_of_consecutive_candidates(m, start):
    """Runs of consecutive candidates take the kernel's incremental path: same supports as hashing each one."""
    flh = FLH(1.5, m=m, pool_size=37, pool_seed=8)
    T = np.random.default_rng(2).integers(0, 50, size=flh.tally_shape)
    cands = np.arange(start, start + 23, dtype=np.uint64)
    want = [int(T[np.arange(37), flh.hash(np.arange(37), np.full(37, c, dtype=np.uint64)).astype(np.int64)].sum())
            for c in cands]
    np.testing.assert_array_equal(flh.support_from_tally(T, cands), want)


@pytest.mark.parametrize("m,eps,h", [(16, 0.5, 512), (64, 2.0, 300), (70, 1.0, 257), (128, 1.5, 129), (8, 0.1, 2048)])
def test_support_by_thresholds_equals_the_lookups(m, eps, h):
    """The compare kernel of a small hash range gives the lookup kernels' supports, runs and random candidates."""
    from ldp.oracles import flh_kernels as fk

    flh = FLH(eps, m=m, pool_size=h, pool_seed=5)
    assert flh.d_prime <= fk.THRESHOLD_D_PRIME
    rng = np.random.default_rng(3)
    T = rng.integers(0, 400, size=flh.tally_shape).astype(np.int32)
    cands = np.concatenate([uniform(1500, m, rng=rng), uniform(900, m, rng=rng)[:1]])
    b, a = hashing.expand_coefficients(flh.seeds, -(-m // 32))  # the pool's hash coefficients
    chunks = np.ascontiguousarray(to_chunks32(as_values(cands, m), m).T)  # the candidates' 32-bit chunks
    want = fk.support_serial(T.reshape(-1), b, a, chunks, np.int64(flh.d_prime))
    for block in (1, 7, fk.THRESHOLD_BLOCK):
        got = fk.support_by_thresholds(T.reshape(-1), b, a, chunks.astype(np.uint64), np.int64(flh.d_prime),
                                       fk.cell_thresholds(flh.d_prime), block)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(flh.support_from_tally(T, cands), want)  # whichever kernel the dispatch takes
    t = np.arange(2**32 - 3, 2**32, dtype=np.uint64).tolist() + [0, 1, 2**31]
    thr = fk.cell_thresholds(flh.d_prime).astype(np.uint64)
    w = np.array(t, dtype=np.uint64)
    np.testing.assert_array_equal((w[:, None] >= thr[None, 1:]).sum(axis=1),
                                  (w * np.uint64(flh.d_prime)) >> np.uint64(32))


def _plain_supports(flh, T, cands):
    """``sum_j T[j, H_j(c)]`` for each candidate, by OLH's numpy hash of every (pool member, candidate) pair."""
    h = flh.pool_size
    j = np.tile(np.arange(h), cands.shape[0])
    cells = flh.hash(j, np.repeat(cands, h, axis=0)).astype(np.int64).reshape(cands.shape[0], h)
    return T[np.arange(h)[None, :], cells].sum(axis=1)


@pytest.mark.parametrize("m,dp,h", [(16, 13, 97), (64, 40, 130), (70, 150, 33), (128, 200, 64), (32, 22, 4)])
def test_support_by_lookup_equals_the_plain_sums(m, dp, h):
    """The blocked lookup kernel (pool members outside) gives the plain sums: any block, pool size, chunks, dtype."""
    from ldp.oracles import flh_kernels as fk

    flh = FLH(1.0, m=m, pool_size=h, pool_seed=11, d_prime=dp)
    assert dp > fk.THRESHOLD_D_PRIME
    rng = np.random.default_rng(4)
    start = int(uniform(1, min(m, 64), rng=rng)[0]) & ~1023  # a run of 330 consecutive values from here
    run = np.arange(start, start + 330, dtype=np.uint64) if m <= 64 else uniform(330, m, rng=rng)
    if m == 64:  # a run whose first 32-bit chunk changes inside a block
        run = np.concatenate([run, np.arange(2**32 - 300, 2**32 + 300, dtype=np.uint64)])
    cands = np.concatenate([uniform(700, m, rng=rng), uniform(1, m, rng=rng), run])
    b, a = hashing.expand_coefficients(flh.seeds, -(-m // 32))  # the pool's hash coefficients
    chunks = np.ascontiguousarray(to_chunks32(as_values(cands, m), m).T)  # the candidates' 32-bit chunks
    for T in (rng.integers(0, 400, size=flh.tally_shape), rng.integers(2**31 - 50, 2**31, size=flh.tally_shape)):
        want = _plain_supports(flh, T, cands)
        for dtype in (np.int32, np.int64):
            flat = np.ascontiguousarray(T.reshape(-1).astype(dtype))
            for block in (1, 7, 512, fk.LOOKUP_BLOCK, cands.shape[0] + 1):
                got = fk.support_by_lookup(flat, b, a, chunks, np.int64(dp), block)
                np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(flh.support_from_tally(T, cands), want)


def test_support_from_tally_takes_every_kernel():
    """The dispatch (serial, thresholds, lookups) gives the plain sums on both sides of each switch."""
    from ldp.oracles import flh_kernels as fk

    rng = np.random.default_rng(6)
    for dp, h, n_cands in [(fk.THRESHOLD_D_PRIME, 256, 1100), (fk.THRESHOLD_D_PRIME + 1, 256, 1100),
                           (fk.THRESHOLD_D_PRIME + 1, 256, 900), (57, 129, 2100)]:
        flh = FLH(1.0, m=40, pool_size=h, pool_seed=3, d_prime=dp)
        T = rng.integers(0, 90, size=flh.tally_shape)
        cands = uniform(n_cands, 40, rng=rng)
        np.testing.assert_array_equal(flh.support_from_tally(T, cands), _plain_supports(flh, T, cands))


def _exact_tally_moments(flh, values, counts):
    """Mean and covariance of the tally: sum over values of Multinomial(N_v, pi_v), pi_v(j, y) = pmf[H_j(v)][y] / h."""
    h, dp = flh.tally_shape
    pmfs = np.array([flh.output_pmf(x) for x in range(dp)])
    mean = np.zeros(h * dp)
    cov = np.zeros((h * dp, h * dp))
    for v, n_v in zip(values, counts):
        cells = flh.hash(np.arange(h), np.repeat(v[None] if values.ndim > 1 else v, h, axis=0)).astype(np.int64)
        pi = (pmfs[cells] / h).reshape(-1)
        mean += n_v * pi
        cov += n_v * (np.diag(pi) - np.outer(pi, pi))
    return mean, cov


@pytest.mark.slow
def test_draw_tally_has_the_exact_law():
    """The count engine's tally: mean and covariance of the supports it implies equal the exact ones, and the
    supports' marginal law equals the protocol's (chi-square two-sample), correlations through the pool included."""
    flh = FLH(1.0, m=8, pool_size=6, pool_seed=4)
    values = np.array([3, 77, 200], dtype=np.uint64)
    counts = np.array([40, 25, 3])
    cands = np.array([3, 77, 5, 9], dtype=np.uint64)
    mean, cov = _exact_tally_moments(flh, values, counts)
    h, dp = flh.tally_shape
    M = np.zeros((cands.shape[0], h * dp))  # support = M @ tally
    for i, c in enumerate(cands):
        cells = flh.hash(np.arange(h), np.full(h, c, dtype=np.uint64)).astype(np.int64)
        M[i, np.arange(h) * dp + cells] = 1
    reps = 5_000
    rng = np.random.default_rng(5)
    S_draw = np.array([flh.support_from_tally(flh.draw_tally(values, counts, rng=rng), cands) for _ in range(reps)])
    data = np.repeat(values, counts)
    S_prot = np.array([flh.support(flh.privatize(data, rng=rng), cands) for _ in range(reps)])
    mu, Sigma = M @ mean, M @ cov @ M.T
    for S in (S_draw, S_prot):
        se = np.sqrt(np.diag(Sigma) / reps)
        assert np.all(np.abs(S.mean(0) - mu) <= Z * se)
        emp = np.cov(S.T)
        # covariance entries: standard error of a sample covariance ~ sqrt((s_ii s_jj + s_ij^2) / reps)
        tol = Z * np.sqrt((np.outer(np.diag(Sigma), np.diag(Sigma)) + Sigma**2) / reps)
        assert np.all(np.abs(emp - Sigma) <= tol)
    assert abs(Sigma[2, 3]) > 0 or abs(Sigma[0, 2]) > 0  # the pool correlates supports: not law 1
    for i in range(cands.shape[0]):  # the two engines' marginal laws agree
        lo, hi = min(S_draw[:, i].min(), S_prot[:, i].min()), max(S_draw[:, i].max(), S_prot[:, i].max())
        a = np.bincount(S_draw[:, i] - lo, minlength=hi - lo + 1)
        b = np.bincount(S_prot[:, i] - lo, minlength=hi - lo + 1)
        keep = (a + b) >= 10
        table = np.vstack([np.r_[a[keep], a[~keep].sum()], np.r_[b[keep], b[~keep].sum()]])
        table = table[:, table.sum(0) > 0]
        assert stats.chi2_contingency(table)[1] > ALPHA


def test_pool_variance_formula_against_simulation():
    """Over random pools, the extra variance of a never-held candidate's estimate is sum N_v^2 / (h (d' - 1))."""
    eps, h, pools = 2.0, 32, 1000
    counts = np.array([3000, 2000])
    values = np.array([40503, 1877, 29861], dtype=np.uint64)  # unstructured (the family is linear: see the notes)
    est = []
    rng = np.random.default_rng(3)
    for seed in range(pools):
        flh = FLH(eps, m=16, pool_size=h, pool_seed=seed)
        T = flh.draw_tally(values[:2], counts, rng=rng)
        s = flh.support_from_tally(T, values[2:])[0]
        est.append((s - counts.sum() * flh.q) / (flh.p - flh.q))
    flh = FLH(eps, m=16, pool_size=h)
    total = flh.variance(int(counts.sum())) + pool_variance(counts, h, flh.d_prime)
    var = np.var(est, ddof=1)
    # the sample variance of `pools` normal-ish draws is within ~5 * sqrt(2 / (pools - 1)) relative
    assert abs(var / total - 1) < Z * math.sqrt(2 / (pools - 1))
    assert pool_variance(counts, h, flh.d_prime) > 0.5 * flh.variance(int(counts.sum()))  # the pool term matters


# =========================================================== parameters and errors
def test_parameters_and_errors():
    f = FLH(2.0, m=32, pool_size=100, pool_seed=3)
    o = OLH(2.0, m=32)
    assert (f.p, f.q, f.d_prime) == (o.p, o.q, o.d_prime)
    assert f.params == {"kind": "FLH", "epsilon": 2.0, "d_prime": 9, "m": 32, "pool_size": 100, "pool_seed": 3}
    assert ldp.FLH is FLH and FLH(1.0).pool_size == 4096
    assert max_epsilon(4096) == pytest.approx(math.log(4095), rel=RTOL)
    with pytest.raises(ValueError, match=r"pool_size"):
        FLH(1.0, pool_size=0)
    with pytest.raises(ValueError, match=r"2\*\*24"):
        FLH(9.0, pool_size=4096)
    with pytest.raises(ValueError, match=r"pool_seed"):
        FLH(1.0, pool_seed=-1)
    r = f.privatize(np.arange(10, dtype=np.uint64), rng=0)
    with pytest.raises(ValueError, match=r"pool_seed"):
        FLH(2.0, m=32, pool_size=100, pool_seed=4).support(r, [1])
    with pytest.raises(ValueError, match=r"pool_size = 100"):
        FLHReports(f.params, index=np.array([100], dtype=np.uint8), y=np.array([0], dtype=np.uint8))
    with pytest.raises(ValueError, match=r"shape"):
        f.support_from_tally(np.zeros((3, 3), dtype=np.int64), [1])


def test_reports_file_roundtrip(tmp_path):
    f = FLH(1.5, m=16, pool_size=70000, pool_seed=2**63 + 5)
    r = f.privatize(np.arange(500, dtype=np.uint64), rng=1)
    assert r.index.dtype == np.uint32
    r.save(tmp_path / "r.npz")
    back = Reports.load(tmp_path / "r.npz")
    assert back == r and isinstance(back, FLHReports)


# =========================================================== protocols
@pytest.fixture(scope="module")
def small16():
    return datasets.zipf(20_000, m=16, rng=7)


MAKERS = {
    "PEM": lambda **kw: ldp.PEM(2.0, 4, 16, query_limit=2**10, **kw),
    "TreeHist": lambda **kw: ldp.TreeHist(2.0, 4, 16, bits_per_level=4, **kw),
    "SFP": lambda **kw: ldp.SFP(2.0, 4, 16, hash_bits=4, query_limit=2**13, **kw),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_protocols_take_flh_with_a_public_pool(small16, name, tmp_path):
    P = MAKERS[name](oracle="FLH", pool_size=64)
    assert P.params["pool_size"] == 64
    plan = P.plan(small16.n, rng=3)
    pools = {(q.pool_size, q.pool_seed) for qs in plan.questions for q in qs}
    assert len(pools) == 1 and next(iter(pools))[0] == 64  # one pool, in the plan
    assert Plan.from_json(plan.to_json()) == plan and P.check_plan(Plan.from_json(plan.to_json())) == plan
    # the pool seed is public randomness of the plan: another plan rng, another pool
    assert {q.pool_seed for qs in P.plan(small16.n, rng=4).questions for q in qs} != {p[1] for p in pools}
    reports = P.privatize(small16.values, plan=plan, rng=5)
    for g, qs in enumerate(plan.questions):
        for q, r in zip(qs, reports.group_reports(g)):
            assert isinstance(r, FLHReports) and r.params == q.oracle().params  # exactly eps_q-LDP (above)
    reports.save(tmp_path / "r.npz")
    a = P.aggregate(ProtocolReports.load(tmp_path / "r.npz"), rng=6)
    b = P.aggregate(reports, rng=6)
    np.testing.assert_array_equal(a.heavy_hitters, b.heavy_hitters)
    res = P.run(small16, rng=7, engine="counts")
    assert res.engine == "counts" and len(res) <= 4
    with pytest.raises(ValueError, match=r"differently configured"):
        MAKERS[name](oracle="FLH", pool_size=65).check_plan(plan)


def test_flh_protocol_errors():
    with pytest.raises(ValueError, match=r"pool_size is FLH's parameter"):
        ldp.PEM(1.0, 4, 16, pool_size=10)
    with pytest.raises(ValueError, match=r"pool_size"):
        ldp.PEM(1.0, 4, 16, oracle="FLH", pool_size=0)
    with pytest.raises(ValueError, match=r"2\*\*24"):
        ldp.PEM(10.0, 4, 16, oracle="FLH")
    assert ldp.PEM(1.0, 4, 16, oracle="flh").oracle == "FLH"
    with pytest.raises(ValueError, match=r"pool_size"):
        make_question(0, 8, 1.0, "OLH", pool_size=4)


@pytest.mark.slow
def test_count_engine_matches_protocol_engine_for_flh(small16):
    """PEM with FLH: a round's supports drawn by the count engine have the protocol's law (KS on 200 runs)."""
    P = ldp.PEM(2.0, 4, 16, eta=4, oracle="FLH", pool_size=32)
    L = P.config(small16.n).prefix_lengths[0]
    cands = ldp.core.RangeCandidates(1 << L, L)
    held = int(np.argmax(np.bincount(small16.values.astype(np.int64) >> (16 - L), minlength=1 << L)))
    probes = [held, (held + 1) % (1 << L)]

    def probe(src):  # each run has its own plan, hence its own pool
        return src.supports((0,), src.plan.questions[0][0], cands)[probes]

    a = np.array([probe(P.source(small16, rng=s, engine="counts")) for s in range(200)])
    b = np.array([probe(P.source(small16, rng=1000 + s, engine="protocol")) for s in range(200)])
    for i in range(2):
        assert stats.ks_2samp(a[:, i], b[:, i]).pvalue > 1e-3
