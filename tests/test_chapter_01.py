"""Chapter 01's computations (ldp.book.chapters.c01_frequency_oracles.compute): the checks of the derivation
catch a wrong formula, the worked examples come out as the paper's, the integer d' costs what eq. (2) says."""
import math

import numpy as np
import pytest

sp = pytest.importorskip("sympy")

from ldp.analysis import olh_variance  # noqa: E402
from ldp.book import ChapterClock  # noqa: E402
from ldp.book.chapters.c01_frequency_oracles import compute as C  # noqa: E402
from ldp.book.chapters.c01_frequency_oracles import oracle_examples, oracle_variance  # noqa: E402

S = C.symbols()
E = sp.exp(S["eps"])
GRR_EQ1 = (S["d"] - 2 + E) / (E - 1) ** 2 * S["n"]  # the paper's eq. (1)
OLH_EQ3 = 4 * E / (E - 1) ** 2 * S["n"]  # the paper's eq. (3)


def olh_var_dprime(eps, d_prime, n):
    e = np.exp(eps)
    return n * (d_prime + e - 1) ** 2 / ((d_prime - 1) * (e - 1) ** 2)


def test_the_symbols_are_the_notebooks():
    assert S["dp"] == sp.Symbol("d'", positive=True) and S["eps"] == sp.Symbol("varepsilon", positive=True)


def test_grr_findings_pass_eq1_and_catch_a_wrong_variance():
    right = C.grr_variance_findings(GRR_EQ1)
    assert right["oracles_grr_sympy_diff"] == "0" and right["oracles_grr_code_relerr"] < 1e-12
    wrong = C.grr_variance_findings(GRR_EQ1 * (1 + 1 / S["d"]))
    assert wrong["oracles_grr_sympy_diff"] != "0" and wrong["oracles_grr_code_relerr"] == pytest.approx(0.5)


def test_olh_findings_pass_eq3_and_give_the_crossing():
    d_cross = sp.solve(sp.Eq(GRR_EQ1, OLH_EQ3), S["d"])[0]
    out = C.olh_variance_findings(OLH_EQ3, olh_var_dprime, d_cross)
    assert out["oracles_olh_sympy_diff"] == "0" and out["oracles_olh_code_relerr"] < 1e-12
    assert out["oracles_d_cross_eps1"] == pytest.approx(3 * math.e + 2)
    assert out["oracles_d_cross_eps4"] == pytest.approx(3 * math.exp(4) + 2)
    off = C.olh_variance_findings(OLH_EQ3 * 2, lambda e, dp, n: 2 * olh_var_dprime(e, dp, n), d_cross)
    assert off["oracles_olh_sympy_diff"] != "0" and off["oracles_olh_code_relerr"] == pytest.approx(1.0)


def test_latex_lines():
    lines = C.estimator_latex(S["c"], S["n"] * S["q"], S["n"] * S["p"])
    assert len(lines) == 3 and lines[0].startswith(r"\mathbb E\left[") and lines[0].endswith("= c")
    dp = S["dp"]
    lines = C.olh_latex(OLH_EQ3, [E + 1], E + 1, sp.Integer(1), OLH_EQ3, 3 * E + 2)
    assert len(lines) == 4 and r"d'_* = e^{\varepsilon} + 1" in lines[1] and r"p = \frac{1}{2}" in lines[2]
    assert lines[3].endswith(r"d < 3 e^{\varepsilon} + 2") and dp.name == "d'"


def test_the_worked_examples_are_the_papers():
    out = C.example_findings(oracle_examples.frame(), GRR_EQ1)
    assert out["oracles_ex1_p_exact"] == "49/65584" and sp.Rational(out["oracles_ex1_var_exact"]) == sp.Rational(
        65583, 2304)
    assert out["oracles_ex1_p"] == pytest.approx(49 / 65584) and out["oracles_ex2_var"] == pytest.approx(40 / 81)
    assert out["oracles_ex2_dprime"] == 11 and out["oracles_ex2_var_int"] == pytest.approx(40 / 81)
    # 0.001 n >= 3 sqrt(40/81 n): n >= 9e6 * 40/81 = 4,444,444.4; with the std rounded to 0.7: 4,410,000
    assert (out["oracles_ex2_nmin"], out["oracles_ex2_nmin_rounded"]) == (4_444_445, 4_410_000)
    assert out["oracles_ex2_nmin_gap"] == 34_445 and out["oracles_ex2_nmin_gap_pct"] == pytest.approx(
        100 * (4_444_445 / 4_410_000 - 1))
    assert out["oracles_ex2_halving"] == pytest.approx(4.0)


def test_the_integer_dprime_penalty_is_eq2_at_the_ceiling():
    curves = oracle_variance.frame(olh_var_dprime)
    out = C.dprime_penalty_findings(curves)
    for eps in (1.0, 4.0):
        expected = 100 * (olh_variance(eps) / olh_variance(eps, d_prime="real") - 1)
        assert out[f"oracles_penalty_eps{eps:g}"] == pytest.approx(expected, rel=1e-12)
    assert out["oracles_penalty_max"] >= max(out["oracles_penalty_eps1"], out["oracles_penalty_eps4"])
    assert out["oracles_penalty_eps_max"] in set(curves["epsilon"])
    with pytest.raises(ValueError, match="series="):
        C.dprime_penalty_findings(curves, series="no such series")


def test_oracle_simulation_reports_its_settings_and_agrees_with_the_variance():
    ss = np.random.SeedSequence(3).spawn(2)
    table, values = C.oracle_simulation(n_users=4000, n_reps=20, epsilon=1.0, grr_domain=64, heavy_share=0.1,
                                        ss_grr=ss[0], ss_olh=ss[1])
    assert values["oracles_n_users"] == 4000 and values["oracles_n_reps"] == 20 and values["oracles_c_true"] == 400
    assert values["oracles_grr_domain"] == 64 and values["oracles_sim_eps"] == 1.0
    assert len(table) == 6 and abs(values["oracles_max_abs_z"]) < 6
    assert values["oracles_max_ratio_gap"] < 6 * values["oracles_var_rse"]


def test_wire_findings():
    from ldp.oracles import OLH

    reports = OLH(1.0, m=16).privatize(np.arange(50, dtype=np.uint64), rng=1)
    out = C.wire_findings(reports)
    assert out == {"oracles_demo_n": 50, "oracles_demo_bytes": reports.nbytes / 50} and out["oracles_demo_bytes"] > 8


def test_the_chapter_clock_says_which_settings_ran():
    clock = ChapterClock()
    assert clock.text().endswith(" s")
    assert clock.text(quick=True).endswith(" s in this quick build (small settings, not the paper's)")
    assert clock.text(quick=False).endswith(" s with the paper's settings")
