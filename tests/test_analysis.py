"""Tests of ldp.analysis: the paper's section 2.2 / 4.2 analysis and appendix.

Tolerances: Monte-Carlo comparisons allow 5 standard errors of the
simulation on top of the model tolerance the brief fixes (0.02); exact
identities use floating-point tolerances.
"""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import norm

from ldp import analysis as A
from ldp.analysis import PEMConfig

SEED = 20180812


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
    c = A.pem_default_config(64, 16)
    assert (c.gamma, c.etas, c.g) == (4, (13, 13, 13, 13, 8), 5)
    assert c.prefix_lengths == (17, 30, 43, 56, 64)
    assert c.domain_sizes == (2**17, 16 * 2**13, 16 * 2**13, 16 * 2**13, 16 * 2**8)
    assert c.queries == sum(c.domain_sizes) <= 2**20
    assert c.group_fractions == (0.2,) * 5 and c.cand_sizes == (16,) * 5
    assert c.predicted_f1 is None and c.predicted_ncr is None
    c = A.pem_default_config(64, 32)
    assert (c.gamma, c.etas) == (5, (12, 12, 12, 12, 11))


@pytest.mark.parametrize("m", [1, 2, 5, 16, 20, 33, 64, 100, 160])
@pytest.mark.parametrize("k", [1, 2, 3, 16, 20, 32, 64])
@pytest.mark.parametrize("limit", [2**10, 2**16, 2**20, 10**7])
def test_default_config_rule_bruteforce(m, k, limit):
    if k > 2**m:
        with pytest.raises(ValueError, match="k must be"):
            A.pem_default_config(m, k, query_limit=limit)
        return
    gamma, eta = _brute_default(m, k, limit)
    if eta is None:
        need = A.min_query_limit(m, k)
        assert need > limit
        with pytest.raises(ValueError, match=str(need)):
            A.pem_default_config(m, k, query_limit=limit)
        # the stated limit works
        A.pem_default_config(m, k, query_limit=need)
        return
    c = A.pem_default_config(m, k, query_limit=limit)
    assert c.gamma == gamma and c.gamma + sum(c.etas) == m
    assert c.etas[0] == eta and all(e == eta for e in c.etas[:-1]) and 1 <= c.etas[-1] <= eta
    assert c.g == math.ceil((m - gamma) / eta)
    assert 2 ** (gamma + eta) * c.g <= limit and c.queries <= limit
    assert A.min_query_limit(m, k) <= limit


def test_default_config_edge_cases():
    c = A.pem_default_config(10, 1)  # k = 1: gamma = 0
    assert c.gamma == 0 and c.etas == (10,)
    c = A.pem_default_config(3, 8)  # m <= ceil(log2 k): one round over the domain
    assert (c.gamma, c.etas, c.domain_sizes) == (0, (3,), (8,))
    c = A.pem_default_config(3, 5)
    assert (c.gamma, c.etas, c.cand_sizes) == (0, (3,), (5,))
    c = A.pem_default_config(4096, 64)  # long values: exact integer arithmetic
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
    assert c == PEMConfig(16, 16, 4, (12,))
    assert A.pem_config(64, 16, eta=13) == A.pem_default_config(64, 16)


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
    c = A.pem_default_config(64, 16)
    for n in (1, 7, 1_000_001):
        sizes = c.group_sizes(n)
        assert sum(sizes) == n and max(sizes) - min(sizes) <= 1
    c = A.pem_config(16, 16, eta=6, group_fractions=(0.3, 0.7))
    assert c.group_sizes(10) == (3, 7)


# ---------------------------------------------------------------------------
# section 2.2: variances
# ---------------------------------------------------------------------------
def test_grr_hand_computed_point():
    p, q = A.grr_pq(math.log(49), 2**16)
    assert p == pytest.approx(49 / 65584, rel=1e-12) and p == pytest.approx(0.00075, abs=5e-6)
    assert q == pytest.approx(p / 49)
    v = A.grr_variance(math.log(49), 2**16, 1.0)
    assert v == pytest.approx(65583 / 2304, rel=1e-12) and round(v, 1) == 28.5
    assert A.grr_variance(math.log(49), 2**16, 1000) == pytest.approx(1000 * v)


def test_olh_hand_computed_point():
    eps = math.log(10)
    assert A.olh_d_prime(eps) == 11
    assert A.olh_d_prime(math.log(9)) == 10  # no float ceil artefact
    for dp in (None, "real", "paper", 11):
        v = A.olh_variance(eps, 1.0, d_prime=dp)
        assert v == pytest.approx(40 / 81, rel=1e-12)
    assert round(math.sqrt(40 / 81), 1) == 0.7
    # 0.001 n >= 3 * 0.7 sqrt(n)  <=>  n >= 4,410,000 (paper, std rounded to 0.7)
    assert (3 * 0.7 / 0.001) ** 2 == pytest.approx(4_410_000)
    assert A.min_population(0.001, eps) == pytest.approx(9e6 * 40 / 81)  # unrounded: 4,444,444
    # quadrupling n halves the threshold frequency
    assert A.min_population(0.0005, eps) == pytest.approx(4 * A.min_population(0.001, eps))


def test_d_prime_matches_oracle_module():
    oracles = pytest.importorskip("ldp.oracles")
    for eps in list(np.linspace(0.05, 10, 200)) + [math.log(v) for v in range(2, 60)]:
        assert A.olh_d_prime(eps) == oracles.default_d_prime(eps)


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
    p, q = A.oracle_pq(1.0, "real")
    assert (p, q) == pytest.approx((0.5, 1 / (math.e + 1)))


@pytest.mark.parametrize("call, match", [
    (lambda: A.olh_variance(0.0), "epsilon"),
    (lambda: A.olh_variance(-1.0), "epsilon"),
    (lambda: A.olh_variance(1.0, 0.5), "n must be"),
    (lambda: A.olh_variance(1.0, d_prime=1), "d_prime"),
    (lambda: A.olh_variance(1.0, d_prime="ceil"), "d_prime"),
    (lambda: A.grr_variance(1.0, 1), "d must be"),
    (lambda: A.grr_variance(float("nan"), 4), "epsilon"),
    (lambda: A.min_population(0.0, 1.0), "freq"),
])
def test_variance_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ---------------------------------------------------------------------------
# eq. (iden_prob) against a Monte-Carlo of the same model
# ---------------------------------------------------------------------------
def _top_zero(n_i, q, N, kept, trials, rng):
    """Supports of N zero-frequency values ~ Bin(n_i, q) (+ U(0,1) for random ties);
    only the `kept` largest of each trial can matter."""
    zero = rng.binomial(int(n_i), q, size=(trials, N)) + rng.random((trials, N))
    return -np.partition(-zero, kept - 1, axis=1)[:, :kept]


def _mc_round(f, n_i, kept, p, q, top_zero, rng):
    """Supports of the k heavy values ~ Bin(n_i, p_j); fraction of trials in which each
    heavy value is among the top `kept` of heavy + zero-frequency values."""
    trials, k = top_zero.shape[0], len(f)
    pj = p * f + (1 - f) * q
    heavy = rng.binomial(int(n_i), pj, size=(trials, k)) + rng.random((trials, k))
    allv = np.concatenate([heavy, top_zero], axis=1)
    thr = -np.partition(-allv, kept - 1, axis=1)[:, kept - 1]
    return (heavy >= thr[:, None]).mean(axis=0)


MC_TRIALS = 12_000


@pytest.fixture(scope="module")
def mc_setting():
    """A regime where the normal approximation and the paper's assumptions hold:
    n_i = 2e5 users, eps = 1, |D| = 1024, k = |C| = 16; the j - 1 higher values are
    far above the noise (so they are ranked above v_j), the lower ones are rare.
    One sample of the zero-frequency supports is shared by the settings."""
    n_i, eps, D, k = 200_000, 1.0, 1024, 16
    p, q = A.oracle_pq(eps)
    top_zero = _top_zero(n_i, q, D - k, k, MC_TRIALS, np.random.default_rng([SEED, 1]))
    return n_i, D, k, p, q, top_zero


@pytest.mark.parametrize("j", [4, 8])
def test_identification_probability_matches_monte_carlo(mc_setting, j):
    n_i, D, k, p, q, top_zero = mc_setting
    rng = np.random.default_rng([SEED, j])
    trials = MC_TRIALS
    for fj in (0.006, 0.010, 0.014):
        f = np.full(k, 1e-4)
        f[: j - 1] = np.linspace(0.06, 0.04, j - 1)
        f[j - 1] = fj
        est = _mc_round(f, n_i, k, p, q, top_zero, rng)[j - 1]
        se = math.sqrt(max(est * (1 - est), 1 / trials) / trials)
        for slots in ("text", "formula"):
            model = A.round_identification_probability(f, n_i, D, k, p, q, slots=slots)[j - 1]
            assert abs(model - est) <= 0.02 + 5 * se, (j, fj, slots, model, est)
        assert 0.05 < est < 0.95 or fj != 0.010  # the comparison is not trivially 0 or 1


def test_identification_probability_last_rank_edge(mc_setting):
    """j = |C|: eq. (iden_prob) verbatim has Phi^{-1}(0) = -inf, P = 0; the MC does not.
    The mid-rank offset 0.5 matches; the text reading (k - j + 1 slots) overrates."""
    n_i, D, k, p, q, top_zero = mc_setting
    rng = np.random.default_rng([SEED, 99])
    trials = MC_TRIALS
    f = np.r_[np.linspace(0.06, 0.04, k - 1), 0.013]
    est = _mc_round(f, n_i, k, p, q, top_zero, rng)[-1]
    se = math.sqrt(est * (1 - est) / trials)
    assert 0.2 < est < 0.8
    assert A.round_identification_probability(f, n_i, D, k, p, q, slots="formula")[-1] == 0.0
    mid = A.round_identification_probability(f, n_i, D, k, p, q, slots=0.5)[-1]
    assert abs(mid - est) <= 0.02 + 5 * se
    text = A.round_identification_probability(f, n_i, D, k, p, q, slots="text")[-1]
    assert text > est


def test_single_round_f1_zipf_matches_monte_carlo():
    """Zipf(1) heavy hitters, where the sorted-values assumption is rough per rank:
    the F1-weighted sum (one round) still agrees within 0.02 with the text reading."""
    n_i, eps, D, k = 100_000, 1.0, 1024, 16
    p, q = A.oracle_pq(eps)
    f = A.zipf_frequencies(10_000)[:k]
    rng = np.random.default_rng([SEED, 7])
    trials = 8_000
    pj = p * f + q * (1 - f)
    heavy = rng.binomial(n_i, pj, size=(trials, k)) + rng.random((trials, k))
    zero = rng.binomial(n_i, q, size=(trials, D - k)) + rng.random((trials, D - k))
    allv = np.concatenate([heavy, -np.partition(-zero, k - 1, axis=1)[:, :k]], axis=1)
    thr = -np.partition(-allv, k - 1, axis=1)[:, k - 1]
    per_trial_f1 = (heavy >= thr[:, None]).mean(axis=1)
    est, se = per_trial_f1.mean(), per_trial_f1.std(ddof=1) / math.sqrt(trials)
    model = A.round_identification_probability(f, n_i, D, k, p, q).mean()
    assert abs(model - est) <= 0.02 + 5 * se


def test_identification_probability_product_and_edges():
    cfg = A.pem_config(64, 32, gamma=5, eta=10)
    freqs = A.zipf_frequencies(100_000, 1.5)
    eps, n = 1.0, 1e6
    per = A.identification_probability(cfg, n, eps, freqs, per_round=True)
    assert per.shape == (cfg.g, 32)
    assert np.allclose(A.identification_probability(cfg, n, eps, freqs), per.prod(axis=0))
    p, q = A.oracle_pq(eps)
    for i, (D, c) in enumerate(zip(cfg.domain_sizes, cfg.cand_sizes)):
        r = A.round_identification_probability(freqs[:32], n / cfg.g, D, c, p, q, k=32)
        assert np.allclose(per[i], r)
    # monotone in rank, n, eps and m (figure fig:vary_f_multi trends)
    tot = per.prod(axis=0)
    assert np.all(np.diff(tot) <= 1e-12)
    assert np.all(A.identification_probability(cfg, 2 * n, eps, freqs) >= tot - 1e-12)
    assert np.all(A.identification_probability(cfg, n, 2 * eps, freqs) >= tot - 1e-12)
    short = A.pem_config(48, 32, gamma=5, eta=10)
    assert np.all(A.identification_probability(short, n, eps, freqs) >= tot - 1e-12)
    # |C_i| < j: no slot under the sorted assumption
    small = A.pem_config(32, 8, gamma=3, etas=(10, 10, 9), cand_sizes=(4, 4, 8))
    per = A.identification_probability(small, n, 8.0, A.zipf_frequencies(1000), per_round=True)
    assert np.all(per[0, 4:] == 0) and np.all(per[0, :4] > 0)
    # N <= slots: certainly kept
    tiny = A.pem_config(4, 10, gamma=0, etas=(4,))  # |D| = 16: N = 6 zero values, 10 kept
    pr = A.identification_probability(tiny, 100, 0.5, A.zipf_frequencies(10), slots="formula")
    assert np.all(pr[:4] == 1.0) and np.all(pr[4:9] < 1) and pr[-1] == 0.0
    # a shorter frequency vector is padded with zero frequencies
    pr = A.identification_probability(A.pem_default_config(20, 4), 1e5, 2.0, [0.5, 0.5])
    assert pr.shape == (4,) and pr[0] > 0.99 and pr[3] < 0.01


def test_competitors_option():
    """'lower' counts the k - j lower-ranked heavy values as competitors too; it is
    the paper's N when |D_i| >> k and lower (harsher) when |D_i| is a few k."""
    f = A.zipf_frequencies(10_000)[:16]
    p, q = A.oracle_pq(1.0)
    big = [A.round_identification_probability(f, 2e5, 2**16, 16, p, q, competitors=c) for c in ("paper", "lower")]
    assert np.allclose(big[0], big[1], atol=2e-3)
    small = [A.round_identification_probability(f, 2e4, 32, 16, p, q, competitors=c) for c in ("paper", "lower")]
    assert np.all(small[1] <= small[0] + 1e-12) and np.max(small[0] - small[1]) > 0.05


@pytest.mark.parametrize("call, match", [
    (lambda: A.identification_probability(A.pem_default_config(16, 4), 0, 1.0, [1.0]), "n must be"),
    (lambda: A.identification_probability(A.pem_default_config(16, 4), 1e4, 0.0, [1.0]), "epsilon"),
    (lambda: A.identification_probability(A.pem_default_config(16, 4), 1e4, 1.0, [0.5, 0.4]), "sum to 1"),
    (lambda: A.identification_probability(A.pem_default_config(16, 4), 1e4, 1.0, [1.5, -0.5]), "non-negative"),
    (lambda: A.identification_probability(A.pem_default_config(16, 4), 1e4, 1.0, [1.0], slots="x"), "slots"),
    (lambda: A.identification_probability(A.pem_default_config(16, 4), 1e4, 1.0, [1.0], competitors="x"),
     "competitors"),
    (lambda: A.identification_probability((16, 4), 1e4, 1.0, [1.0]), "PEMConfig"),
    (lambda: A.round_identification_probability([0.1], 100, 64, 4, 0.2, 0.5), "p must exceed q"),
    (lambda: A.round_identification_probability([0.1], 100, 64, 0, 0.5, 0.2), "kept"),
    (lambda: A.utility_score(A.pem_default_config(16, 4), 1e4, 1.0, [1.0], metric="auc"), "metric"),
])
def test_identification_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ---------------------------------------------------------------------------
# eq. (utility_score)
# ---------------------------------------------------------------------------
def test_utility_weights_and_score():
    assert np.allclose(A.utility_weights(4, "f1"), 0.25)
    assert np.allclose(A.utility_weights(3, "ncr"), [3 / 6, 2 / 6, 1 / 6])
    for k in (1, 7, 64):
        for mtr in ("f1", "ncr"):
            assert A.utility_weights(k, mtr).sum() == pytest.approx(1.0)
    cfg = A.pem_default_config(32, 8)
    fr = A.zipf_frequencies(1000)
    probs = A.identification_probability(cfg, 1e5, 2.0, fr)
    assert A.utility_score(cfg, 1e5, 2.0, fr) == pytest.approx(probs.mean())
    assert A.utility_score(cfg, 1e5, 2.0, fr, metric="ncr") == pytest.approx(A.utility_weights(8, "ncr") @ probs)
    w = np.r_[1.0, np.zeros(7)]
    assert A.utility_score(cfg, 1e5, 2.0, fr, metric=w) == pytest.approx(probs[0])
    # NCR >= F1 when probabilities decrease with rank
    assert A.utility_score(cfg, 1e5, 2.0, fr, metric="ncr") >= A.utility_score(cfg, 1e5, 2.0, fr)


def test_observation2_symmetry_in_model():
    """fig:match_config (b), (c): m = 16, k = 16, gamma = 4, g = 2, n = 1e5, eps = 1."""
    fr = A.zipf_frequencies(2**16, 1.5)
    u = [A.utility_score(A.pem_config(16, 16, gamma=4, etas=(e, 12 - e)), 1e5, 1.0, fr) for e in range(1, 12)]
    assert int(np.argmax(u)) + 1 == 6
    assert np.allclose(u, u[::-1], rtol=1e-12)
    shares = np.linspace(0.1, 0.9, 9)
    v = [A.utility_score(A.pem_config(16, 16, gamma=4, eta=6, group_fractions=(s, 1 - s)), 1e5, 1.0, fr)
         for s in shares]
    assert int(np.argmax(v)) == 4 and np.allclose(v, v[::-1], rtol=1e-12)


# ---------------------------------------------------------------------------
# the optimizer (section 4.2.5)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("k", [16, 32])
@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_optimizer_section_4_2_5(k, eps):
    cfg = A.optimize_pem(1_000_000, 64, k, eps)
    default = A.pem_default_config(64, k)
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
    assert 0 < cfg.predicted_f1 <= 1 and 0 < cfg.predicted_ncr <= 1
    zipf = A.zipf_frequencies(10**6)  # the default assumption: Zipf(1) over min(2^m, n) values
    assert cfg.predicted_f1 == pytest.approx(A.utility_score(cfg, 1e6, eps, zipf, competitors="lower"), rel=1e-9)
    assert cfg == A.optimize_pem(1_000_000, 64, k, eps, eta_layout="leftover")
    # Observation 1: utility decreases with the number of rounds
    df = A.evaluate_configs(A.candidate_configs(64, k, eta_layout="both"), 1e6, eps, competitors="lower")
    by_g = df.groupby("g")["f1"].max().sort_index()
    assert np.all(np.diff(by_g.to_numpy()) <= 1e-12)


@pytest.mark.parametrize("m, k", [(160, 20), (160, 32), (48, 4), (128, 64)])
def test_optimizer_fewest_rounds_balanced(m, k):
    """The g of the largest feasible eta (the fewest rounds), bits spread evenly."""
    default = A.pem_default_config(m, k)
    cfg = A.optimize_pem(1_000_000, m, k, 2.0)
    assert cfg.gamma == default.gamma and cfg.g == default.g
    if cfg.predicted_f1 < 1 - 1e-9:  # when the utility saturates at 1, ties go to the larger early eta
        assert max(cfg.etas) - min(cfg.etas) <= 1
    else:
        assert cfg.etas == default.etas
    assert cfg.g * max(cfg.domain_sizes) <= 2**20


def test_optimizer_predictions_match_utility_score():
    k, eps, n = 8, 2.0, 5e5
    fr = A.zipf_frequencies(1000)
    cfg = A.optimize_pem(n, 40, k, eps, distribution=fr, target="ncr")
    assert cfg.predicted_f1 == pytest.approx(A.utility_score(cfg, n, eps, fr, competitors="lower"))
    assert cfg.predicted_ncr == pytest.approx(A.utility_score(cfg, n, eps, fr, metric="ncr", competitors="lower"))


@pytest.mark.parametrize("limit", [2**11, 2**14, 2**17, 2**20, 3 * 10**6])
@pytest.mark.parametrize("m, k", [(8, 4), (16, 16), (32, 3), (64, 32), (128, 64), (160, 20)])
def test_optimizer_never_exceeds_limit(limit, m, k):
    opts = [dict(), dict(gammas="search", cand_sizes="search", eta_layout="both", query_count="exact")]
    for o in opts:
        try:
            cfg = A.optimize_pem(1e6, m, k, 2.0, query_limit=limit, **o)
        except ValueError as err:
            assert "too small" in str(err)
            assert not A.candidate_configs(m, k, query_limit=limit, **{kk: v for kk, v in o.items()})
            continue
        assert cfg.queries <= limit
        if not o:
            assert cfg.g * max(cfg.domain_sizes) <= limit


def test_optimizer_options():
    n, m, k, eps = 1e6, 64, 16, 2.0
    base = A.optimize_pem(n, m, k, eps)
    wide = A.optimize_pem(n, m, k, eps, gammas="search", cand_sizes="search", eta_layout="both")
    assert wide.predicted_f1 >= base.predicted_f1 - 1e-12
    tuned = A.optimize_pem(n, m, k, eps, fractions="optimize")
    assert tuned.predicted_f1 >= base.predicted_f1 - 1e-12
    assert sum(tuned.group_fractions) == pytest.approx(1.0)
    # the paper's N[i] = |D_i| - k makes one-bit rounds (|D_i| = 2k) look best at eps = 1
    paper = A.optimize_pem(n, m, k, 1.0, competitors="paper")
    assert paper.etas == (1,) * 60
    # any frequency vector, NCR target
    fr = A.zipf_frequencies(5000, 1.5)
    c = A.optimize_pem(n, m, k, eps, distribution=fr, target="ncr")
    assert c.predicted_ncr > 0
    # Zipf normalisation for supports too large to sum directly
    big = A.assumed_frequencies("zipf", 4, support=10**9)
    H = np.euler_gamma + math.log(1e9) + 1 / 2e9
    assert big[0] == pytest.approx(1 / H, rel=1e-9)
    big15 = A.assumed_frequencies("zipf", 4, support=10**9, zipf_exponent=1.5)
    assert big15[0] == pytest.approx(1 / (2.612375348685488 - 2 / math.sqrt(1e9)), rel=1e-6)


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
        A.optimize_pem(args.pop("n"), args.pop("m"), args.pop("k"), args.pop("epsilon"), **args)


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
                    p, q = A.oracle_pq(eps, "real")
                    r1 = A.round_identification_probability([f], n / g, N + k, k, p, q, ranks=[j], slots="formula")
                    assert norm.cdf(A.prop1_P1(eps, g, f, n, Aj)) == pytest.approx(r1[0], rel=1e-9, abs=1e-12)
                    p2, q2 = A.oracle_pq(eps / g, "real")
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
        assert abs(values.mean() - truth) <= 5 * se, (S, values.mean(), truth, se)
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
