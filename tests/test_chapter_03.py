"""Chapter 03's computations (ldp.book.chapters.c03_pem.compute): the numbers quoted about each step of eq. (5),
the readings, the optimizer's search and the joint estimator, on small settings whose answers are known."""
import math

import numpy as np
import pytest
from scipy.stats import binom, norm

from ldp import analysis
from ldp.analysis import montecarlo
from ldp.book.chapters.c03_pem import compute as C

N, M, LIMIT, KS, EPS = 100_000, 16, 2**10, (4, 8), (1.0, 2.0, 4.0)


@pytest.fixture(scope="module")
def rule():
    return {k: analysis.pem_default_config(k, M, query_limit=LIMIT) for k in KS}


@pytest.fixture(scope="module")
def opt():
    return {(k, e): analysis.optimize_pem(e, k, M, n=N, query_limit=LIMIT) for k in KS for e in EPS}


def test_setting_and_rule_findings(rule):
    assert C.setting_findings(n=N, m=M, ks=KS, query_limit=LIMIT) == dict(n=N, m=M, k_small=4, k_large=8,
                                                                          limit_log2=10.0)
    out = C.rule_findings(rule)
    for k, c in rule.items():
        assert out[f"rule_etas_k{k}"] == str(c.etas) and out[f"rule_g_k{k}"] == len(c.etas)
        assert out[f"rule_bits_k{k}"] == sum(c.etas) == M - c.gamma
        assert out[f"rule_queries_k{k}"] <= LIMIT and out[f"rule_Dlast_k{k}"] == c.domain_sizes[-1]
    assert out["rule_etas_k4"] == "(7, 7)" and out["rule_queries_k4"] == 2 * 2**9


def test_normal_tail_gap_shrinks_with_the_group():
    p_j = np.array([0.3, 0.1])
    small, large = C.normal_tail_gap(50, p_j), C.normal_tail_gap(50_000, p_j)
    assert 0 < large < small < 0.2 and large < 0.01
    T = 50 * p_j[0] + math.sqrt(50 * p_j[0] * (1 - p_j[0]))  # one of the probed thresholds: mean + 1 sd
    assert small >= abs(binom.sf(math.floor(T), 50, p_j[0]) - norm.sf(1.0)) - 1e-12


def test_threshold_findings_expect_k_values_above_the_threshold():
    k, N1, mu0, sd0 = 16, 16 * 1023, 250.0, 14.0
    T_k = mu0 - norm.ppf(k / N1) * sd0
    out = C.threshold_findings(N1, T_k, mu0, sd0)
    assert out["expected_above"] == pytest.approx(k) and out["N1"] == N1 and out["Tk"] > out["mu0"] == mu0


def test_step_findings_and_tables():
    f = np.array([0.5, 0.25, 0.125, 0.0625])
    p, q = analysis.olh_pq(1.0)
    p_j = p * f + q * (1 - f)
    mu_j, sd_j = 1000 * p_j, np.sqrt(1000 * p_j * (1 - p_j))
    out = C.support_findings(p=p, q=q, n1=1000, D1=512, f=f, tail_err=0.01)
    assert (out["f1"], out["fk"], out["D1"], out["n1"]) == (0.5, 0.0625, 512, 1000.0)
    table = C.support_table(f, p_j, mu_j, sd_j)
    assert table["j"].tolist() == [1, 4] and table["μ_j[1]"].tolist() == [mu_j[0], mu_j[-1]]
    library = {r: analysis.round_identification_probability(f, 1000, 512, 4, p, q, slots=r)
               for r in ("text", "formula")}
    found = C.round_probability_findings(library, library)
    assert found["hand_err"] == 0 and found["P1_last_formula"] == 0.0  # the printed formula: P = 0 for j = k
    assert found["P1_first_text"] >= found["P1_last_text"] > 0
    assert C.round_probability_table(library)["j"].tolist() == [1, 2, 4]  # the shown ranks that exist for k = 4


def test_rule_utility_and_the_per_round_table(rule):
    cfg, freqs = rule[4], analysis.zipf_frequencies(N, 1.0)
    P = analysis.identification_probability(cfg, 1.0, freqs, n=N, per_round=True)
    u = C.rule_utility(cfg, 1.0, freqs, n=N)
    assert u["rule_f1_k16_eps1"] == pytest.approx(P.prod(axis=0).mean(), abs=1e-12)
    table = C.per_round_table(P, cfg.etas)
    assert table["round"].tolist() == ["1 (7 bits)", "2 (7 bits)", "product"]
    assert list(table.columns) == ["round", "j=1", "j=2", "j=4"]
    assert np.allclose(table.iloc[-1, 1:].to_numpy(float), P.prod(axis=0)[[0, 1, 3]])


def test_readings_findings(rule):
    readings = C.readings_table(rule, EPS, N)
    out = C.readings_findings(readings, 4)
    assert out["read_cap_k16"] == 0.75 and out["read_formula_k16_eps4"] <= 0.75 + 1e-12
    assert out["read_text_k16_eps4"] >= out["read_formula_k16_eps4"] and out["read_max_comp_diff"] >= 0


def test_monte_carlo_findings_name_every_eta_and_reading():
    f = analysis.zipf_frequencies(N, 1.0)[:4]
    p, q = analysis.olh_pq(1.0)
    mc = montecarlo.readings_monte_carlo(f, N, p, q, [(1, 14, 20), (7, 2, 20)], rng=1)
    opt_paper = analysis.optimize_pem(1.0, 4, M, n=N, query_limit=LIMIT, competitors="paper")
    out = C.monte_carlo_findings(montecarlo.readings_f1(mc), opt_paper, reps=20, reps_large=5)
    for eta in (1, 7):
        assert 0 <= out[f"mc_f1_eta{eta}"] <= 1 and out[f"mc_f1se_eta{eta}"] >= 0
        for slots, competitors in montecarlo.READINGS.values():
            assert 0 <= out[f"pred_f1_eta{eta}_{slots}_{competitors}"] <= 1
            assert f"mc_pmax_eta{eta}_{slots}_{competitors}" in out
    assert out["optpaperN_g"] == opt_paper.g and (out["mc_reps"], out["mc_reps_large"]) == (20, 5)


def test_search_findings_find_the_optimizers_choice(opt):
    cands = {k: analysis.candidate_configs(k, M, query_limit=LIMIT) for k in KS}
    best = {(k, e): analysis.evaluate_configs(cands[k], e, n=N, competitors="lower").f1.max() for k in KS for e in EPS}
    out = C.search_findings(cands, best, opt, 4)
    assert out["opt_n_candidates"] == len(cands[4]) and out["opt_search_gap"] < 1e-12
    assert out["opt_max_queries"] <= LIMIT
    worse = {key: v - 0.1 for key, v in best.items()}
    assert C.search_findings(cands, worse, opt, 4)["opt_search_gap"] == pytest.approx(0.1)


def test_balanced_findings_compare_the_layouts(rule, opt):
    bal = analysis.pem_config(4, M, g=rule[4].g)
    out = C.balanced_findings(bal, rule, opt, ks=KS, epsilons=EPS, n=N)
    assert {f"bal_f1_eps{e}_{c}" for e in (1, 2) for c in ("lower", "paper")} <= set(out)
    assert out["bal_etas_k16"] == str(bal.etas) and out["opt_etas_k32"] == str(opt[8, 1.0].etas)
    same = all(opt[8, e].etas == rule[8].etas for e in EPS)
    assert out["opt_k32_is_rule"] == ("the same as" if same else "different from")
    other = dict(opt) | {(8, 4.0): analysis.pem_config(8, M, gamma=3, etas=(1,) * 13)}
    assert C.balanced_findings(bal, rule, other, ks=KS, epsilons=EPS, n=N)["opt_k32_is_rule"] == "different from"


def test_toy_and_joint_findings():
    joint = montecarlo.joint_estimator_simulation(500, 20, epsilon=1.0, rng=2)
    out = C.joint_findings(joint, users=500, reps=20)
    assert (out["joint_users"], out["joint_reps"]) == (500, 20)
    assert out["joint_max_absz"] >= max(abs(out["joint_z_pair"]), abs(out["joint_z_triple"]))
    assert 0 < out["joint_true_ab"] <= 500

    class Run:
        heavy_hitters = np.array([3, 5, 9], dtype=np.uint64)

    toy = C.toy_findings(Run(), np.array([3, 4, 5, 6], dtype=np.uint64), n=40, D2=np.arange(128))
    assert toy == dict(toy_n=40, toy_D2=128, toy_found=2)
