"""Tests of ldp.analysis: the paper's section 2.2 / 4.2-4.4 analysis, section 5 and the appendix.

Tolerances: exact identities use floating-point tolerances (``rel=1e-9``
against formulas evaluated independently in this file).  Monte-Carlo
comparisons use ``Z`` standard errors of the simulation, one-sided where the
claim is one-sided: each check has a false-alarm rate below
``norm.sf(Z) = 3.4e-6`` (normal approximation of a mean of >= 20,000 runs),
below 1e-4 for the whole file.  Where eq. (5)'s two readings of the
threshold rank bracket the truth, the bracket is the tolerance (see
``test_identification_probability_brackets_monte_carlo``).
"""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from ldp import analysis, oracles
from ldp import analysis as A
from ldp.analysis import PEMConfig, appendix, montecarlo

SEED = 20180812
Z = 4.5  # standard errors: one-sided false-alarm rate norm.sf(4.5) = 3.4e-6 per check
Z2 = 5.0  # two-sided: false-alarm rate 2 norm.sf(5) = 5.7e-7 per check


# ---------------------------------------------------------------------------
# configurations
# ---------------------------------------------------------------------------
def _brute_default(m, k, limit):
    gamma = math.ceil(math.log2(k)) if k > 1 else 0
    if gamma >= m:
        gamma = 0
    L = m - gamma
    ok = [e for e in range(1, L + 1) if 2 ** (gamma + e) * math.ceil(L / e) <= limit]
    return gamma, (max(ok) if ok else None)


def test_default_config_paper_examples():
    c = A.pem_default_config(16, 64)
    assert (c.gamma, c.etas, c.g) == (4, (13, 13, 13, 13, 8), 5)
    assert c.prefix_lengths == (17, 30, 43, 56, 64)
    assert c.domain_sizes == (2**17, 16 * 2**13, 16 * 2**13, 16 * 2**13, 16 * 2**8)
    assert c.queries == sum(c.domain_sizes) <= 2**20
    assert c.group_fractions == (0.2,) * 5 and c.cand_sizes == (16,) * 5
    assert c.predicted_f1 is None and c.predicted_ncr is None
    c = A.pem_default_config(32, 64)
    assert (c.gamma, c.etas) == (5, (12, 12, 12, 12, 11))


@pytest.mark.parametrize("m", [1, 2, 5, 16, 20, 33, 64, 100, 160])
@pytest.mark.parametrize("k", [1, 2, 3, 16, 20, 32, 64])
@pytest.mark.parametrize("limit", [2**10, 2**16, 2**20, 10**7])
def test_default_config_rule_bruteforce(m, k, limit):
    if k > 2**m:
        with pytest.raises(ValueError, match="k must be"):
            A.pem_default_config(k, m, query_limit=limit)
        return
    gamma, eta = _brute_default(m, k, limit)
    if eta is None:
        need = A.min_query_limit(k, m)
        assert need > limit
        with pytest.raises(ValueError, match=str(need)):
            A.pem_default_config(k, m, query_limit=limit)
        # the stated limit works
        A.pem_default_config(k, m, query_limit=need)
        return
    c = A.pem_default_config(k, m, query_limit=limit)
    assert c.gamma == gamma and c.gamma + sum(c.etas) == m
    assert c.etas[0] == eta and all(e == eta for e in c.etas[:-1]) and 1 <= c.etas[-1] <= eta
    assert c.g == math.ceil((m - gamma) / eta)
    assert 2 ** (gamma + eta) * c.g <= limit and c.queries <= limit
    assert A.min_query_limit(k, m) <= limit


def test_default_config_edge_cases():
    c = A.pem_default_config(1, 10)  # k = 1: gamma = 0
    assert c.gamma == 0 and c.etas == (10,)
    c = A.pem_default_config(8, 3)  # m <= ceil(log2 k): one round over the domain
    assert (c.gamma, c.etas, c.domain_sizes) == (0, (3,), (8,))
    c = A.pem_default_config(5, 3)
    assert (c.gamma, c.etas, c.cand_sizes) == (0, (3,), (5,))
    c = A.pem_default_config(64, 4096)  # long values: exact integer arithmetic
    assert c.gamma + sum(c.etas) == 4096 and c.queries <= 2**20


@pytest.mark.parametrize("bad, exc, match", [
    (dict(m=0, k=1), ValueError, "m must be"),
    (dict(m=8, k=0), ValueError, "k must be"),
    (dict(m=8, k=257), ValueError, "k must be"),
    (dict(m=8, k=2.5), TypeError, "k must be"),
    (dict(m=64, k=16, query_limit=0), ValueError, "query_limit"),
    (dict(m=64, k=16, query_limit=100), ValueError, "smallest limit .* is 1920"),
])
def test_default_config_bad_input(bad, exc, match):
    with pytest.raises(exc, match=match):
        A.pem_default_config(**bad)


def test_pem_config_explicit():
    c = A.pem_config(16, 16, g=6)
    assert c.gamma == 4 and c.etas == (2, 2, 2, 2, 2, 2)
    c = A.pem_config(16, 16, g=5)
    assert c.etas == (2, 2, 2, 3, 3)
    c = A.pem_config(16, 16, eta=5)
    assert c.etas == (5, 5, 2)
    c = A.pem_config(16, 16, etas=(3, 9), group_fractions=(0.25, 0.75), cand_sizes=(32, 16))
    assert c.domain_sizes == (2**7, 32 * 2**9) and c.queries == 2**7 + 2**14
    c = A.pem_config(16, 16)
    assert c.etas == (12,) and c.g == 1
    assert c == PEMConfig(k=16, m=16, gamma=4, etas=(12,))
    assert A.pem_config(16, 64, eta=13) == A.pem_default_config(16, 64)


@pytest.mark.parametrize("kwargs, match", [
    (dict(etas=(3, 3)), "gamma \\+ sum\\(etas\\)"),
    (dict(eta=3, g=2), "at most one"),
    (dict(etas=(6, 6), group_fractions=(0.5, 0.6)), "sum to 1"),
    (dict(etas=(6, 6), group_fractions=(1.0,)), "g = 2 entries"),
    (dict(etas=(6, 6), group_fractions=(0.0, 1.0)), "group_fractions\\[0\\]"),
    (dict(etas=(6, 6), cand_sizes=(16, 8)), "last round"),
    (dict(gamma=0, etas=(2, 14), cand_sizes=(8, 16)), "exceeds \\|D_1\\|"),
    (dict(etas=(0, 12)), "etas\\[0\\]"),
    (dict(gamma=16, eta=1), "gamma must be"),
])
def test_pem_config_bad_input(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        A.pem_config(16, 16, **kwargs)


def test_group_sizes():
    c = A.pem_default_config(16, 64)
    for n in (1, 7, 1_000_001):
        sizes = c.group_sizes(n)
        assert sum(sizes) == n and max(sizes) - min(sizes) <= 1
    c = A.pem_config(16, 16, eta=6, group_fractions=(0.3, 0.7))
    assert c.group_sizes(10) == (3, 7)


# ---------------------------------------------------------------------------
# section 2.2: p, q, d' and variances (ldp.oracles.formulas, re-exported)
# ---------------------------------------------------------------------------
def test_analysis_uses_the_oracles_formulas():
    """One formula: the analysis re-exports the oracles' functions, and the oracle classes use them."""
    for name in ("olh_pq", "olh_variance", "grr_pq", "grr_variance", "default_d_prime", "min_population"):
        assert getattr(A, name) is getattr(oracles, name)
    for eps in (0.3, 1.0, math.log(3), 4.0):
        olh = oracles.OLH(eps, m=16)
        assert (olh.p, olh.q) == A.olh_pq(eps) and olh.d_prime == A.default_d_prime(eps)
        assert olh.variance(1000) == A.olh_variance(eps, 1000)
        grr = oracles.GRR(eps, 37)
        assert (grr.p, grr.q) == A.grr_pq(eps, 37)
        assert grr.variance(1000) == A.grr_variance(eps, 37, 1000)


def test_grr_hand_computed_point():
    p, q = A.grr_pq(math.log(49), 2**16)
    assert p == pytest.approx(49 / 65584, rel=1e-12) and p == pytest.approx(0.00075, abs=5e-6)
    assert q == pytest.approx(p / 49)
    v = A.grr_variance(math.log(49), 2**16, 1.0)
    assert v == pytest.approx(65583 / 2304, rel=1e-12) and round(v, 1) == 28.5
    assert A.grr_variance(math.log(49), 2**16, 1000) == pytest.approx(1000 * v)
    # eq. (1) stays finite where (e^eps - 1)^2 overflows a double
    big = A.grr_variance(700.0, 4, 1000)
    assert math.isfinite(big) and big == pytest.approx(1000 * math.exp(-700.0), rel=1e-9)


def test_olh_hand_computed_point():
    eps = math.log(10)
    assert A.default_d_prime(eps) == 11
    for dp in (None, "real", "paper", 11):
        v = A.olh_variance(eps, 1.0, d_prime=dp)
        assert v == pytest.approx(40 / 81, rel=1e-12)
    assert round(math.sqrt(40 / 81), 1) == 0.7
    # 0.001 n >= 3 * 0.7 sqrt(n)  <=>  n >= 4,410,000 (paper, std rounded to 0.7)
    assert (3 * 0.7 / 0.001) ** 2 == pytest.approx(4_410_000)
    assert A.min_population(0.001, eps) == pytest.approx(9e6 * 40 / 81)  # unrounded: 4,444,444
    # quadrupling n halves the threshold frequency
    assert A.min_population(0.0005, eps) == pytest.approx(4 * A.min_population(0.001, eps))


def test_olh_exact_vs_closed_form():
    eps = np.linspace(0.1, 8, 60)
    closed = A.olh_variance(eps, 1.0, d_prime="real")
    assert np.allclose(closed, 4 * np.exp(eps) / np.expm1(eps) ** 2)
    exact = A.olh_variance(eps, 1.0)
    # the closed form is the minimum over real d' (attained at d' = e^eps + 1)
    assert np.all(exact >= closed * (1 - 1e-12))
    assert np.any(exact > closed * 1.01)
    for d in (2, 3, 5, 50):
        assert np.all(A.olh_variance(eps, 1.0, d_prime=d) >= closed * (1 - 1e-12))
    p, q = A.olh_pq(1.0, d_prime="real")
    assert (p, q) == pytest.approx((0.5, 1 / (math.e + 1)))


@pytest.mark.parametrize("call, match", [
    (lambda: A.olh_variance(0.0), "epsilon"),
    (lambda: A.olh_variance(-1.0), "epsilon"),
    (lambda: A.olh_variance(1.0, 0.5), "n must be"),
    (lambda: A.olh_variance(1.0, d_prime=1), "d_prime"),
    (lambda: A.olh_variance(1.0, d_prime="ceil"), "d_prime"),
    (lambda: A.olh_pq(1.0, d_prime=True), "d_prime"),
    (lambda: A.grr_variance(1.0, 1), "d must be"),
    (lambda: A.grr_variance(float("nan"), 4), "epsilon"),
    (lambda: A.min_population(0.0, 1.0), "freq"),
    (lambda: A.min_population(0.1, 1.0, z=0), "z must be"),
])
def test_variance_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_d_prime_is_keyword_only():
    with pytest.raises(TypeError):
        A.olh_pq(1.0, "real")  # type: ignore[misc]
    with pytest.raises(TypeError):
        A.olh_variance(1.0, 1.0, "real")  # type: ignore[misc]


# ---------------------------------------------------------------------------
# rank-frequency laws
# ---------------------------------------------------------------------------
def test_zipf_frequencies():
    f = A.zipf_frequencies(1000, 1.5)
    H = sum(j ** -1.5 for j in range(1, 1001))
    assert f[0] == pytest.approx(1 / H, rel=1e-12) and f[9] == pytest.approx(10 ** -1.5 / H, rel=1e-12)
    assert f.sum() == pytest.approx(1.0) and np.all(np.diff(f) <= 0)
    # zipf(-20) of section 5: ranks 21, 22, ... of the law, renormalised
    g = A.zipf_frequencies(1000, 1.5, drop_top=20)
    h = A.zipf_frequencies(1020, 1.5)[20:]
    assert np.allclose(g, h / h.sum(), rtol=1e-12)
    assert np.array_equal(A.zipf_frequencies(7, 0.0), np.full(7, 1 / 7))  # exponent 0: uniform
    with pytest.raises(TypeError):
        A.zipf_frequencies(10)  # type: ignore[call-arg]  # the exponent has no default
    with pytest.raises(TypeError):
        A.zipf_frequencies(10, 1.5, 3)  # type: ignore[misc]  # drop_top is keyword-only
    for bad, match in (((0, 1.0), "n_distinct"), ((10, -0.5), "exponent"), ((10, float("inf")), "exponent")):
        with pytest.raises(ValueError, match=match):
            A.zipf_frequencies(*bad)


def test_exponential_frequencies():
    f = A.exponential_frequencies(100, 0.05)
    assert f.sum() == pytest.approx(1.0)
    assert np.allclose(f[1:] / f[:-1], math.exp(-0.05), rtol=1e-12)  # geometric
    assert abs(f[15] - 0.023) < 0.0005  # RAPPOR's 100-value cut: section 6.2.3's "0.023"
    for bad, match in (((0, 0.05), "n_distinct"), ((10, 0.0), "scale"), ((10, -1.0), "scale")):
        with pytest.raises(ValueError, match=match):
            A.exponential_frequencies(*bad)


# ---------------------------------------------------------------------------
# eq. (5) against a Monte-Carlo of the same model (ldp.analysis.model_monte_carlo)
# ---------------------------------------------------------------------------
MC_REPS = 20_000


def _se(share: float, reps: int = MC_REPS) -> float:
    """Standard error of a share of runs (at least that of one run in `reps`)."""
    return math.sqrt(max(share * (1 - share), 1 / reps) / reps)


@pytest.mark.parametrize("j", [4, 8])
def test_identification_probability_brackets_monte_carlo(j):
    """Eq. (5) puts the threshold at the (k-j+1)-th ("text") or (k-j)-th ("formula") zero-frequency
    quantile.  The expected (k-j+1)-th largest of N normal supports lies between the two (Blom's
    plotting position (r - 0.375)/(N + 0.25): an offset of 0.625 slots), so the Monte-Carlo of the
    model lies between the two readings, up to Z standard errors on each side.  Regime: n_i = 2e5
    users, eps = 1, |D| = 1024, k = |C| = 16; the j - 1 higher values are far above the noise (the
    sorted assumption holds), the lower ones are rare."""
    n_i, D, k = 200_000, 1024, 16
    p, q = A.olh_pq(1.0)
    for fj in (0.006, 0.010, 0.014):
        f = np.full(k, 1e-4)
        f[: j - 1] = np.linspace(0.06, 0.04, j - 1)
        f[j - 1] = fj
        est = A.model_monte_carlo(f, n_i, D, k, p, q, reps=MC_REPS, rng=[SEED, j, round(1000 * fj)])[j - 1]
        lo, hi = (A.round_identification_probability(f, n_i, D, k, p, q, slots=s)[j - 1] for s in ("formula", "text"))
        assert lo < hi
        assert lo - Z * _se(est) <= est <= hi + Z * _se(est), (j, fj, lo, est, hi)
        assert 0.05 < est < 0.95 or fj != 0.010  # the comparison is not trivially 0 or 1


def test_identification_probability_last_rank_edge():
    """j = |C|: eq. (5) verbatim has Phi^{-1}(0) = -inf, P = 0, but the model keeps v_k in a fair
    share of runs.  The text reading (one slot: the quantile Phi^{-1}(1 - 1/N)) puts the threshold
    below the expected largest of N normal supports (Blom: Phi^{-1}(1 - 0.625/(N + 0.25))), so it
    overrates v_k; offsets 0.5 and 1 bracket Blom's 0.625."""
    n_i, D, k = 200_000, 1024, 16
    p, q = A.olh_pq(1.0)
    f = np.r_[np.linspace(0.06, 0.04, k - 1), 0.013]
    est = A.model_monte_carlo(f, n_i, D, k, p, q, reps=MC_REPS, rng=[SEED, 99])[-1]
    se = _se(est)
    assert 0.2 < est < 0.8
    assert A.round_identification_probability(f, n_i, D, k, p, q, slots="formula")[-1] == 0.0
    mid = A.round_identification_probability(f, n_i, D, k, p, q, slots=0.5)[-1]
    text = A.round_identification_probability(f, n_i, D, k, p, q, slots="text")[-1]
    assert mid - Z * se <= est < text - Z * se, (mid, est, text)


def test_single_round_f1_zipf_monte_carlo():
    """Zipf(1) heavy hitters have close frequencies, so ranks swap and the sorted assumption is rough
    per rank.  A swap of two heavy values does not change how many of them are kept, and the
    sorted assumption (all j - 1 higher values above v_j) is pessimistic for v_j: the model's F1
    (the mean over ranks) does not overrate the Monte-Carlo F1 (one-sided, Z standard errors of the
    per-run F1)."""
    n_i, D, k = 100_000, 1024, 16
    p, q = A.olh_pq(1.0)
    f = A.zipf_frequencies(10_000, 1.0)[:k]
    runs = A.model_monte_carlo(f, n_i, D, k, p, q, reps=MC_REPS, rng=[SEED, 7], per_run=True)
    per_run_f1 = runs.mean(axis=1)
    est, se = per_run_f1.mean(), per_run_f1.std(ddof=1) / math.sqrt(MC_REPS)
    model = A.round_identification_probability(f, n_i, D, k, p, q).mean()
    assert 0.2 < est < 0.8
    assert model <= est + Z * se, (model, est, se)


def test_model_monte_carlo_reproducible_and_checked():
    p, q = A.olh_pq(1.0)
    f = A.zipf_frequencies(100, 1.0)[:8]
    a = A.model_monte_carlo(f, 5000, 64, 8, p, q, reps=120, rng=5)
    assert np.array_equal(a, A.model_monte_carlo(f, 5000, 64, 8, p, q, reps=120, rng=np.random.SeedSequence(5)))
    runs = A.model_monte_carlo(f, 5000, 64, 8, p, q, reps=120, rng=5, per_run=True)
    assert runs.shape == (120, 8) and runs.dtype == bool
    assert np.array_equal(runs.mean(axis=0), a)
    assert np.all(runs.sum(axis=1) <= 8)  # at most |C| values are kept in a run
    # as many slots as values: every heavy value is kept
    assert np.all(A.model_monte_carlo(f, 5000, 8, 8, p, q, reps=30, rng=1) == 1.0)
    # more zero-frequency values than slots would fill: a heavy value is sometimes dropped
    assert np.any(A.model_monte_carlo(f, 5000, 10, 8, p, q, reps=30, rng=1) < 1.0)
    for kwargs, match in ((dict(domain_size=4), "domain_size"), (dict(kept=65), "kept"), (dict(reps=0), "reps"),
                          (dict(p=0.2), "p must exceed q"), (dict(n_i=0), "n_i")):
        args = dict(freqs=f, n_i=5000, domain_size=64, kept=8, p=p, q=q, reps=10)
        args.update(kwargs)
        with pytest.raises(ValueError, match=match):
            A.model_monte_carlo(**args)


def test_identification_probability_product_and_edges():
    cfg = A.pem_config(32, 64, gamma=5, eta=10)
    freqs = A.zipf_frequencies(100_000, 1.5)
    eps, n = 1.0, 1e6
    per = A.identification_probability(cfg, eps, freqs, n=n, per_round=True)
    assert per.shape == (cfg.g, 32)
    assert np.allclose(A.identification_probability(cfg, eps, freqs, n=n), per.prod(axis=0))
    p, q = A.olh_pq(eps)
    for i, (D, c) in enumerate(zip(cfg.domain_sizes, cfg.cand_sizes)):
        r = A.round_identification_probability(freqs[:32], n / cfg.g, D, c, p, q, k=32)
        assert np.allclose(per[i], r)
    # monotone in rank, n, eps and m (Figure 2 trends)
    tot = per.prod(axis=0)
    assert np.all(np.diff(tot) <= 1e-12)
    assert np.all(A.identification_probability(cfg, eps, freqs, n=2 * n) >= tot - 1e-12)
    assert np.all(A.identification_probability(cfg, 2 * eps, freqs, n=n) >= tot - 1e-12)
    short = A.pem_config(32, 48, gamma=5, eta=10)
    assert np.all(A.identification_probability(short, eps, freqs, n=n) >= tot - 1e-12)
    # |C_i| < j: no slot under the sorted assumption
    small = A.pem_config(8, 32, gamma=3, etas=(10, 10, 9), cand_sizes=(4, 4, 8))
    per = A.identification_probability(small, 8.0, A.zipf_frequencies(1000, 1.0), n=n, per_round=True)
    assert np.all(per[0, 4:] == 0) and np.all(per[0, :4] > 0)
    # N <= slots: certainly kept
    tiny = A.pem_config(10, 4, gamma=0, etas=(4,))  # |D| = 16: N = 6 zero values, 10 kept
    pr = A.identification_probability(tiny, 0.5, A.zipf_frequencies(10, 1.0), n=100, slots="formula")
    assert np.all(pr[:4] == 1.0) and np.all(pr[4:9] < 1) and pr[-1] == 0.0
    # a shorter frequency vector is padded with zero frequencies
    pr = A.identification_probability(A.pem_default_config(4, 20), 2.0, [0.5, 0.5], n=1e5)
    assert pr.shape == (4,) and pr[0] > 0.99 and pr[3] < 0.01


def test_competitors_option():
    """'lower' counts the k - j lower-ranked heavy values as competitors too; it is
    the paper's N when |D_i| >> k and lower (harsher) when |D_i| is a few k."""
    f = A.zipf_frequencies(10_000, 1.0)[:16]
    p, q = A.olh_pq(1.0)
    big = [A.round_identification_probability(f, 2e5, 2**16, 16, p, q, competitors=c) for c in ("paper", "lower")]
    assert np.allclose(big[0], big[1], atol=2e-3)
    small = [A.round_identification_probability(f, 2e4, 32, 16, p, q, competitors=c) for c in ("paper", "lower")]
    assert np.all(small[1] <= small[0] + 1e-12) and np.max(small[0] - small[1]) > 0.05


def _cfg16():
    return A.pem_default_config(4, 16)


@pytest.mark.parametrize("call, match", [
    (lambda: A.identification_probability(_cfg16(), 1.0, [1.0], n=0), "n must be"),
    (lambda: A.identification_probability(_cfg16(), 0.0, [1.0], n=1e4), "epsilon"),
    (lambda: A.identification_probability(_cfg16(), 1.0, [0.5, 0.4], n=1e4), "sum to 1"),
    (lambda: A.identification_probability(_cfg16(), 1.0, [1.5, -0.5], n=1e4), "non-negative"),
    (lambda: A.identification_probability(_cfg16(), 1.0, [1.0], n=1e4, slots="x"), "slots"),
    (lambda: A.identification_probability(_cfg16(), 1.0, [1.0], n=1e4, competitors="x"), "competitors"),
    (lambda: A.identification_probability(_cfg16(), 1.0, [1.0], n=1e4, p=0.5), "both p and q"),
    (lambda: A.identification_probability(_cfg16(), 1.0, [1.0], n=1e4, p=0.2, q=0.5), "p must exceed q"),
    (lambda: A.identification_probability((16, 4), 1.0, [1.0], n=1e4), "PEMConfig"),
    (lambda: A.round_identification_probability([0.1], 100, 64, 4, 0.2, 0.5), "p must exceed q"),
    (lambda: A.round_identification_probability([0.1], 100, 64, 0, 0.5, 0.2), "kept"),
    (lambda: A.utility_score(_cfg16(), 1.0, [1.0], n=1e4, metric="auc"), "metric"),
])
def test_identification_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ---------------------------------------------------------------------------
# eq. (4)
# ---------------------------------------------------------------------------
def test_utility_weights_and_score():
    assert np.allclose(A.utility_weights(4, "f1"), 0.25)
    assert np.allclose(A.utility_weights(3, "ncr"), [3 / 6, 2 / 6, 1 / 6])
    for k in (1, 7, 64):
        for mtr in ("f1", "ncr"):
            assert A.utility_weights(k, mtr).sum() == pytest.approx(1.0)
    cfg = A.pem_default_config(8, 32)
    fr = A.zipf_frequencies(1000, 1.0)
    probs = A.identification_probability(cfg, 2.0, fr, n=1e5)
    assert A.utility_score(cfg, 2.0, fr, n=1e5) == pytest.approx(probs.mean())
    assert A.utility_score(cfg, 2.0, fr, n=1e5, metric="ncr") == pytest.approx(A.utility_weights(8, "ncr") @ probs)
    w = np.r_[1.0, np.zeros(7)]
    assert A.utility_score(cfg, 2.0, fr, n=1e5, metric=w) == pytest.approx(probs[0])
    # NCR >= F1 when probabilities decrease with rank
    assert A.utility_score(cfg, 2.0, fr, n=1e5, metric="ncr") >= A.utility_score(cfg, 2.0, fr, n=1e5)


def test_observation2_symmetry_in_model():
    """Figure 3 (b), (c): m = 16, k = 16, gamma = 4, g = 2, n = 1e5, eps = 1."""
    fr = A.zipf_frequencies(2**16, 1.5)
    u = [A.utility_score(A.pem_config(16, 16, gamma=4, etas=(e, 12 - e)), 1.0, fr, n=1e5) for e in range(1, 12)]
    assert int(np.argmax(u)) + 1 == 6
    assert np.allclose(u, u[::-1], rtol=1e-12)
    shares = np.linspace(0.1, 0.9, 9)
    v = [A.utility_score(A.pem_config(16, 16, gamma=4, eta=6, group_fractions=(s, 1 - s)), 1.0, fr, n=1e5)
         for s in shares]
    assert int(np.argmax(v)) == 4 and np.allclose(v, v[::-1], rtol=1e-12)


# ---------------------------------------------------------------------------
# the optimizer (section 4.3)
# ---------------------------------------------------------------------------
def _scores_by_hand(config, n, eps, freqs, competitors="lower"):
    """F1 and NCR of eq. (4) with eq. (5) ("text" slots), written out here with scipy's Phi:
    an independent evaluation of what optimize_pem predicts."""
    e = math.exp(eps)
    d = math.ceil(e + 1)  # section 2.2.2 (no epsilon here makes e^eps + 1 an integer)
    p, q = e / (e + d - 1), 1 / d
    k = config.k
    f = sorted(freqs, reverse=True)[:k]
    f = f + [0.0] * (k - len(f))
    P = [1.0] * k
    for frac, D, kept in zip(config.group_fractions, config.domain_sizes, config.cand_sizes):
        n_i = n * frac
        for j in range(1, k + 1):
            pj = p * f[j - 1] + q * (1 - f[j - 1])
            N = D - k if competitors == "paper" else D - j
            slots = kept - j + 1
            if slots <= 0:
                P[j - 1] = 0.0
            elif N <= 0 or slots / N >= 1:
                continue
            else:
                z = norm.ppf(slots / N)
                P[j - 1] *= norm.cdf((n_i * pj + z * math.sqrt(n_i * q * (1 - q)) - n_i * q)
                                     / math.sqrt(n_i * pj * (1 - pj)))
    f1 = sum(P) / k
    ncr = sum((k + 1 - j) * P[j - 1] for j in range(1, k + 1)) / (k * (k + 1) / 2)
    return f1, ncr


@pytest.mark.parametrize("k", [16, 32])
@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_optimizer_section_4_3(k, eps):
    cfg = A.optimize_pem(eps, k, 64, n=1_000_000)
    default = A.pem_default_config(k, 64)
    assert cfg.gamma == int(math.log2(k))
    # the fewest rounds the limit allows (that of the largest feasible eta) ...
    assert cfg.g == default.g
    # ... with eta[i] balanced (Observation 2); equal to the default rule when it is balanced
    assert max(cfg.etas) - min(cfg.etas) <= 1
    if max(default.etas) - min(default.etas) <= 1:
        assert cfg.etas == default.etas
    assert max(cfg.etas) <= default.etas[0]
    assert cfg.queries <= 2**20 and 2 ** (cfg.gamma + max(cfg.etas)) * cfg.g <= 2**20
    assert cfg.cand_sizes == (k,) * cfg.g and cfg.group_fractions == (1 / cfg.g,) * cfg.g
    # the predictions are eq. (4) under the default assumption: Zipf(1) over min(2^m, n) values
    f1, ncr = _scores_by_hand(cfg, 1e6, eps, list(A.zipf_frequencies(10**6, 1.0)[:k]))
    assert cfg.predicted_f1 == pytest.approx(f1, rel=1e-9) and cfg.predicted_ncr == pytest.approx(ncr, rel=1e-9)
    assert 0 < cfg.predicted_f1 <= 1
    assert cfg == A.optimize_pem(eps, k, 64, n=1_000_000, eta_layout="leftover")
    # Observation 1: utility decreases with the number of rounds
    df = A.evaluate_configs(A.candidate_configs(k, 64, eta_layout="both"), eps, n=1e6, competitors="lower")
    by_g = df.groupby("g")["f1"].max().sort_index()
    assert np.all(np.diff(by_g.to_numpy()) <= 1e-12)


@pytest.mark.parametrize("m, k", [(160, 20), (160, 32), (48, 4), (128, 64)])
def test_optimizer_fewest_rounds_balanced(m, k):
    """The g of the largest feasible eta (the fewest rounds), bits spread evenly."""
    default = A.pem_default_config(k, m)
    cfg = A.optimize_pem(2.0, k, m, n=1_000_000)
    assert cfg.gamma == default.gamma and cfg.g == default.g
    if cfg.predicted_f1 < 1 - 1e-9:  # when the utility saturates at 1, ties go to the larger early eta
        assert max(cfg.etas) - min(cfg.etas) <= 1
    else:
        assert cfg.etas == default.etas
    assert cfg.g * max(cfg.domain_sizes) <= 2**20


def test_optimizer_predictions_for_a_given_distribution():
    k, eps, n = 8, 2.0, 5e5
    fr = A.zipf_frequencies(1000, 1.0)
    cfg = A.optimize_pem(eps, k, 40, n=n, distribution=fr, target="ncr")
    f1, ncr = _scores_by_hand(cfg, n, eps, list(fr))
    assert cfg.predicted_f1 == pytest.approx(f1, rel=1e-9) and cfg.predicted_ncr == pytest.approx(ncr, rel=1e-9)
    # the target: no other candidate predicts a higher NCR
    best = max(_scores_by_hand(c, n, eps, list(fr))[1] for c in A.candidate_configs(k, 40))
    assert cfg.predicted_ncr == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("limit", [2**11, 2**14, 2**17, 2**20, 3 * 10**6])
@pytest.mark.parametrize("m, k", [(8, 4), (16, 16), (32, 3), (64, 32), (128, 64), (160, 20)])
def test_optimizer_never_exceeds_limit(limit, m, k):
    opts = [dict(), dict(gammas="search", cand_sizes="search", eta_layout="both", query_count="exact")]
    for o in opts:
        try:
            cfg = A.optimize_pem(2.0, k, m, n=1e6, query_limit=limit, **o)
        except ValueError as err:
            assert "too small" in str(err)
            assert not A.candidate_configs(k, m, query_limit=limit, **o)
            continue
        assert cfg.queries <= limit
        if not o:
            assert cfg.g * max(cfg.domain_sizes) <= limit


def test_optimizer_options():
    n, m, k, eps = 1e6, 64, 16, 2.0
    base = A.optimize_pem(eps, k, m, n=n)
    wide = A.optimize_pem(eps, k, m, n=n, gammas="search", cand_sizes="search", eta_layout="both")
    assert wide.predicted_f1 >= base.predicted_f1 - 1e-12
    tuned = A.optimize_pem(eps, k, m, n=n, fractions="optimize")
    assert tuned.predicted_f1 >= base.predicted_f1 - 1e-12
    assert sum(tuned.group_fractions) == pytest.approx(1.0)
    # the paper's N[i] = |D_i| - k makes one-bit rounds (|D_i| = 2k) look best at eps = 1
    paper = A.optimize_pem(1.0, k, m, n=n, competitors="paper")
    assert paper.etas == (1,) * 60
    # any frequency vector, NCR target
    fr = A.zipf_frequencies(5000, 1.5)
    c = A.optimize_pem(eps, k, m, n=n, distribution=fr, target="ncr")
    assert c.predicted_ncr > 0
    # Zipf normalisation for supports too large to sum directly
    big = A.assumed_frequencies("zipf", 4, support=10**9)
    H = np.euler_gamma + math.log(1e9) + 1 / 2e9
    assert big[0] == pytest.approx(1 / H, rel=1e-9)
    big15 = A.assumed_frequencies("zipf", 4, support=10**9, zipf_exponent=1.5)
    assert big15[0] == pytest.approx(1 / (2.612375348685488 - 2 / math.sqrt(1e9)), rel=1e-6)
    # below 2**22 values the assumption is zipf_frequencies' head
    assert np.array_equal(A.assumed_frequencies("zipf", 5, support=3000, zipf_exponent=1.5),
                          A.zipf_frequencies(3000, 1.5)[:5])


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=0), "n must be"),
    (dict(k=0), "k must be"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(distribution=[0.3, 0.3]), "sum to 1"),
    (dict(distribution="uniform"), "distribution"),
    (dict(target="auc"), "target"),
    (dict(query_limit=10), "too small"),
    (dict(fractions="random"), "fractions"),
    (dict(gammas="all"), "gammas"),
])
def test_optimizer_bad_input(kwargs, match):
    args = dict(n=1e6, m=64, k=16, epsilon=1.0)
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        A.optimize_pem(args.pop("epsilon"), args.pop("k"), args.pop("m"), **args)


def test_optimizer_and_config_argument_order():
    """epsilon, k, m first (as ldp.PEM(epsilon, k, m)); n and the rest keyword-only."""
    with pytest.raises(TypeError):
        A.optimize_pem(1.0, 16, 64, 10**6)  # type: ignore[misc]
    with pytest.raises(TypeError):
        A.pem_default_config(16, 64, 2**20)  # type: ignore[misc]
    with pytest.raises(TypeError):
        A.PEMConfig(16, 64, 4, (12, 12, 12, 12, 12))  # type: ignore[misc]
    c = A.pem_default_config(16, 64)
    assert (c.k, c.m) == (16, 64)


# ---------------------------------------------------------------------------
# appendix: Proposition 1 and Lemma 1
# ---------------------------------------------------------------------------
def test_lemma1():
    eps = np.linspace(0, 12, 121)
    assert np.allclose(A.lemma1_E(eps), 4 * np.sinh(eps / 2) ** 2)
    assert A.lemma1_E(0.0) == 0.0
    for g in range(2, 33):
        assert np.all(A.lemma1_E(eps[1:] / g) < A.lemma1_E(eps[1:]) / g)
    assert np.allclose(A.lemma1_E(eps), A.lemma1_E(eps / 1))
    with pytest.raises(ValueError, match="epsilon"):
        A.lemma1_E(-0.1)


def test_prop1_is_eq_full_iden():
    """Phi(P1) is eq. (iden_prob) with n/g users at eps, Phi(P2) with n users at eps/g,
    both with the appendix's p = 1/2, q = 1/(e^eps + 1) and the formula's (k-j)/N."""
    n, k, N = 1e6, 16, 16 * 1023
    for eps in (0.5, 1.0, 3.0):
        for g in (1, 2, 5):
            for j in (1, 8, 15):
                for f in (0.001, 0.01, 0.1):
                    Aj = A.prop1_A(k, j, N)
                    p, q = A.olh_pq(eps, d_prime="real")
                    r1 = A.round_identification_probability([f], n / g, N + k, k, p, q, ranks=[j], slots="formula")
                    assert norm.cdf(A.prop1_P1(eps, g, f, n, Aj)) == pytest.approx(r1[0], rel=1e-9, abs=1e-12)
                    p2, q2 = A.olh_pq(eps / g, d_prime="real")
                    r2 = A.round_identification_probability([f], n, N + k, k, p2, q2, ranks=[j], slots="formula")
                    assert norm.cdf(A.prop1_P2(eps, g, f, n, Aj)) == pytest.approx(r2[0], rel=1e-9, abs=1e-12)
    assert A.prop1_P1(1.0, 1, 0.01, n, -2.0) == pytest.approx(A.prop1_P2(1.0, 1, 0.01, n, -2.0))


def test_prop1_grid():
    df = A.prop1_grid([0.1, 0.5, 1, 2, 4, 8], [2, 4, 8], [1e-3, 1e-2, 0.05, 0.2, 0.5], 1e6)
    assert len(df) == 6 * 3 * 5
    assert df.lemma1_holds.all() and df.B0_condition.all()
    assert df.P1_gt_P2.mean() > 0.75
    fails = df[~df.P1_gt_P2]
    # P1 <= P2 happens only at large eps and f, where both probabilities are ~1
    assert len(fails) > 0 and (fails.epsilon >= 4).all()
    assert (fails[["prob_partition", "prob_split"]].min(axis=1) > 0.999).all()
    assert (A.prop1_grid([1.0], [1], [0.01], 1e6).lemma1_holds == False).all()  # noqa: E712 (equality at g=1)


# ---------------------------------------------------------------------------
# appendix: simpler joint estimation for SPM
# ---------------------------------------------------------------------------
def test_joint_estimator_exact_on_expectations():
    p, q = A.spm_pq(1.0)
    assert (p, q) == pytest.approx((0.5, 1 / (math.e + 1)))
    n, n_a, n_b, n_ab = 10_000, 3000, 2000, 1200
    EI = n_ab * p * p + (n_b - n_ab) * p * q + (n_a - n_ab) * p * q + (n - n_a - n_b + n_ab) * q * q
    assert A.spm_joint_estimate_pair(EI, n_a, n_b, n, p, q) == pytest.approx(n_ab)
    assert A.spm_joint_estimate(EI, [n_a + n_b], n, p, q) == pytest.approx(n_ab)
    assert A.spm_joint_estimate(n * q + n_a * (p - q), [], n, p, q) == pytest.approx(n_a)  # r = 1: OLH


def _simulate_supports(patterns, p, q, trials, rng):
    """patterns: (n, r) booleans (user has answer a_t). Returns the support counts
    I_S of every non-empty subset S, shape (trials,), each report independent."""
    n, r = patterns.shape
    prob = np.where(patterns, p, q)
    out = {}
    sup = rng.random((trials, n, r)) < prob[None]
    for size in range(1, r + 1):
        for S in combinations(range(r), size):
            out[frozenset(S)] = sup[:, :, list(S)].all(axis=2).sum(axis=1)
    return out


@pytest.mark.parametrize("r", [2, 3])
@pytest.mark.parametrize("reading", ["appendix", "section2"])
def test_joint_estimator_unbiased(r, reading):
    rng = np.random.default_rng([SEED, r, len(reading)])
    eps = 1.5
    p, q = A.spm_pq(eps, reading=reading)
    n, trials = 600, 4000
    # correlated patterns: a common factor
    z = rng.random(n)
    patterns = np.stack([(z + 0.3 * rng.random(n)) > 0.6 + 0.05 * t for t in range(r)], axis=1)
    supports = _simulate_supports(patterns, p, q, trials, rng)
    est = A.spm_joint_estimates(supports, n, p, q)
    for S, values in est.items():
        truth = patterns[:, sorted(S)].all(axis=1).sum()
        se = values.std(ddof=1) / math.sqrt(trials)
        assert abs(values.mean() - truth) <= Z2 * se, (S, values.mean(), truth, se)  # two-sided
    full = frozenset(range(r))
    assert np.all(np.isfinite(est[full]))
    if r == 2:
        pair = A.spm_joint_estimate_pair(supports[full], est[frozenset({0})], est[frozenset({1})], n, p, q)
        assert np.allclose(pair, est[full])


def test_joint_estimator_bad_input():
    with pytest.raises(ValueError, match="p must exceed q"):
        A.spm_joint_estimate_pair(10, 1, 1, 100, 0.2, 0.3)
    with pytest.raises(ValueError, match="n must be"):
        A.spm_joint_estimate_pair(10, 1, 1, 0, 0.5, 0.3)
    with pytest.raises(ValueError, match="lacks the subset"):
        A.spm_joint_estimates({("a",): 5, ("a", "b"): 3}, 100, 0.5, 0.2)
    with pytest.raises(ValueError, match="reading"):
        A.spm_pq(1.0, reading="rappor")


# ---------------------------------------------------------------------------
# section 5 settings
# ---------------------------------------------------------------------------
def test_validation_settings():
    cap = A.validation_setting("identification")
    txt = A.validation_setting("identification", reading="text")
    assert cap["n"] == 1_000_000 and txt["n"] == 100_000
    c = cap["config"]
    assert (c.gamma, c.etas[0], c.cand_sizes[0], c.m) == (5, 10, 32, 64)
    assert A.validation_setting("configurations")["m"] == 16
    with pytest.raises(ValueError, match="figure"):
        A.validation_setting("fig9")


# ----------------------------------------------------------- the section 4.2.3 model, the appendix (chapter 03)
N_MODEL = 100_000


@pytest.fixture(scope="module")
def readings():
    f = analysis.zipf_frequencies(1000, 1.0)[:8]
    p, q = analysis.olh_pq(1.0)
    return montecarlo.readings_monte_carlo(f, N_MODEL, p, q, [(1, 4, 80), (3, 2, 80)], rng=np.random.SeedSequence(3))


def test_readings_monte_carlo_reproducible_and_consistent(readings):
    f = analysis.zipf_frequencies(1000, 1.0)[:8]
    p, q = analysis.olh_pq(1.0)
    again = montecarlo.readings_monte_carlo(f, N_MODEL, p, q, [(1, 4, 80), (3, 2, 80)], rng=np.random.SeedSequence(3))
    pd.testing.assert_frame_equal(readings, again)
    assert list(readings.domain_size.unique()) == [16, 64] and len(readings) == 16
    one = readings[readings.eta == 3]
    direct = analysis.model_monte_carlo(f, N_MODEL / 2, 64, 8, p, q, reps=80,
                                        rng=np.random.SeedSequence(3).spawn(2)[1])
    assert np.array_equal(one.monte_carlo.to_numpy(), direct)
    assert np.allclose(one["analysis text / lower (optimizer)"],
                       analysis.round_identification_probability(f, N_MODEL / 2, 64, 8, p, q, competitors="lower"))
    table = montecarlo.readings_f1(readings)
    row = table.set_index("eta").loc[1]
    P = readings[readings.eta == 1].monte_carlo.to_numpy()
    assert row.f1_mc == pytest.approx(np.mean(P ** 4))
    with pytest.raises(TypeError, match="SeedSequence"):
        montecarlo.readings_monte_carlo(f, N_MODEL, p, q, [(1, 4, 5)], rng=np.random.default_rng(1))


def test_prop1_condition_is_sufficient():
    """Wherever A <= 0 and the condition holds, P1 >= P2 (Proposition 1 as the chapter proves it)."""
    rng = np.random.default_rng(11)
    eps, g, f = rng.uniform(0.05, 10, 4000), rng.integers(2, 17, 4000), 10 ** rng.uniform(-4, 0, 4000)
    A = -rng.uniform(0, 5, 4000)
    holds = appendix.prop1_condition(eps, g, f) >= 0
    assert 0.1 < holds.mean() < 1.0                         # both cases occur: the test can fail
    P1, P2 = appendix.prop1_P1(eps, g, f, 1e6, A), appendix.prop1_P2(eps, g, f, 1e6, A)
    assert np.all(P1[holds] >= P2[holds] - 1e-9 * np.abs(P2[holds]))
    # B ~ 0: the condition is Lemma 1, E(eps/g) <= E(eps)/g, which always holds
    assert np.all(appendix.prop1_condition(eps, g, np.full(4000, 1e-12)) >= 0)
    # Lemma 1's stronger form g^2 E(eps/g) <= E(eps)
    assert np.all(g**2 * appendix.lemma1_E(eps / g) <= appendix.lemma1_E(eps) * (1 + 1e-12))


def test_prop1_summary_and_identity():
    grid = analysis.prop1_grid(np.linspace(0.1, 8, 12), (2, 4, 8), np.geomspace(1e-3, 0.5, 10), 1e6)
    s = appendix.prop1_summary(grid)
    assert s["prop1_cells"] == len(grid) and s["condition_violations"] == 0
    assert s["prop1_share"] + s["prop1_fail_share"] == pytest.approx(1)
    assert s["lemma_max_strong"] <= 1 and s["lemma_share"] == 1
    fails = grid[~grid.P1_gt_P2]
    assert len(fails) and s["prop1_fail_min_eps"] == fails.epsilon.min()
    assert norm.logsf(s["prop1_fail_min_arg"]) / np.log(10) <= -s["prop1_fail_tail_digits"]  # 1 - Phi < 10^-d
    assert appendix.prop1_identity_error(grid) < 1e-9


def test_joint_estimator_simulation_small():
    sim = montecarlo.joint_estimator_simulation(2000, 60, rng=5)
    t = sim.table
    assert list(t.answers) == ["a", "b", "c", "ab", "ac", "bc", "abc"]
    assert (t.true_count == [800, 560, 520, 480, 440, 400, 320]).all()
    # 7 z-scores of unbiased estimates: |z| <= 5 has a false-alarm rate below 5e-6
    assert (t.z.abs() <= 5).all()
    assert sim.pair_gap < 1e-6
    again = montecarlo.joint_estimator_simulation(2000, 60, rng=np.random.SeedSequence(5))
    pd.testing.assert_frame_equal(t, again.table)
