"""Chapter 01 (frequency oracles, paper section 2.2): its checks, worked examples and its one figure.

* :func:`oracle_simulation` -- GRR and OLH run many times: mean and variance
  of the estimate against eq. (2)'s variance and eqs. (1) and (3);
* :func:`oracle_examples` -- the worked examples of sections 2.2.1 and 2.2.2,
  computed with :mod:`ldp.oracles` (the table ``oracle-examples`` the claims
  read);
* :func:`ldp_ratio_check` -- the eps-LDP inequality on the oracles' exact
  output distributions, and a chi-square test of ``privatize`` against them;
* :func:`variance_dprime_frame` and :func:`plot_variance_dprime` -- the
  figure "variance as a function of d'" (not a paper figure).

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", section 2.2 (2.2.1 GRR, 2.2.2 OLH), eqs. (1)-(3).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..oracles import GRR, OLH
from ..oracles.formulas import default_d_prime, grr_pq, grr_variance, min_population, olh_variance
from .style import FULL_WIDTH, legend_outside, series_colors

__all__ = ["oracle_simulation", "oracle_examples", "oracle_example_values", "oracle_examples_table",
           "PAPER_EXAMPLES", "ldp_ratio_check", "variance_dprime_frame", "dprime_penalty_values",
           "plot_variance_dprime"]


def _simulate(oracle, values, cands, seed_seq: np.random.SeedSequence, reps: int) -> np.ndarray:
    """Estimates of ``cands`` over ``reps`` independent runs (rows): user side, then server side."""
    out = np.empty((reps, len(cands)))
    for r, s in enumerate(seed_seq.spawn(reps)):
        reports = oracle.privatize(values, rng=s)
        out[r] = oracle.estimate(reports, cands)
    return out


def oracle_simulation(*, n_users: int, n_reps: int, epsilon: float, grr_domain: int, heavy_share: float,
                      ss_grr: np.random.SeedSequence, ss_olh: np.random.SeedSequence,
                      n_zero: int = 32) -> tuple[pd.DataFrame, dict]:
    """Run GRR and OLH ``n_reps`` times each and compare mean and variance with the formulas.

    A share ``heavy_share`` of the users holds value 0, the others values drawn
    uniformly from ``1, ..., d/2 - 1`` (``d = grr_domain``; OLH takes 16-bit
    values); the ``n_zero`` values from ``d/2`` on are held by nobody.  Three
    checks per oracle: the mean estimate of value 0 (z-score, passes at
    ``|z| <= 5``), its variance against ``oracle.variance(n, count=c)``, and the
    variance of the zero-frequency values (averaged) against eq. (1) / eq. (3)
    at the oracle's integer ``d'``; a variance ratio passes within 5 relative
    standard errors ``sqrt(2 / (R - 1))`` of 1.

    Returns
    -------
    table : pandas.DataFrame
        One row per check: ``oracle, check, empirical, theory, statistic, band, passes``.
    values : dict
        The numbers the chapter quotes (``oracles_*`` names).
    """
    d_sim = int(grr_domain)
    c_true = int(round(heavy_share * n_users))
    rng_data = np.random.default_rng(ss_grr.spawn(1)[0])
    values = np.concatenate([np.zeros(c_true, dtype=np.int64),
                             rng_data.integers(1, d_sim // 2, n_users - c_true)])
    cands = np.r_[0, np.arange(d_sim // 2, d_sim // 2 + n_zero)]
    grr = GRR(epsilon, d_sim)
    olh = OLH(epsilon, m=16)  # d' = ceil(e^eps + 1)
    est = {"GRR": _simulate(grr, values, cands, ss_grr, n_reps),
           "OLH": _simulate(olh, values.astype(np.uint64), cands.astype(np.uint64), ss_olh, n_reps)}
    band = 5 * math.sqrt(2 / (n_reps - 1))
    rows: list[dict] = []
    out: dict[str, object] = {}
    for name, oracle in (("GRR", grr), ("OLH", olh)):
        e_ = est[name]
        sd = e_[:, 0].std(ddof=1)
        z = (e_[:, 0].mean() - c_true) / (sd / math.sqrt(n_reps))
        rows.append(dict(oracle=name, check="mean of estimate, value 0", empirical=e_[:, 0].mean(),
                         theory=float(c_true), statistic=z, band="|z| ≤ 5", passes=abs(z) <= 5))
        v_emp, v_th = e_[:, 0].var(ddof=1), oracle.variance(n_users, count=c_true)
        v_emp0 = e_[:, 1:].var(axis=0, ddof=1).mean()
        v_th0 = (grr_variance(epsilon, d_sim, n_users) if name == "GRR"
                 else olh_variance(epsilon, n_users))  # eq. (1) / eq. (3) at the integer d'
        for check, emp, th in ((f"variance, value 0 (c = {c_true})", v_emp, v_th),
                               ("variance, zero-frequency values", v_emp0, v_th0)):
            rows.append(dict(oracle=name, check=check, empirical=emp, theory=th, statistic=emp / th,
                             band=f"1 ± {band:.2f}", passes=abs(emp / th - 1) <= band))
        key = f"oracles_{name.lower()}"
        out.update({f"{key}_z": float(z), f"{key}_ratio": float(v_emp / v_th),
                    f"{key}_ratio_zero": float(v_emp0 / v_th0)})
    table = pd.DataFrame(rows)
    out.update(oracles_var_band=float(band), oracles_c_true=c_true, oracles_sim_dprime=int(olh.d_prime),
               oracles_sim_all_pass="all pass" if table.passes.all() else "NOT all pass",
               oracles_olh_int_over_real=float(olh_variance(epsilon) / olh_variance(epsilon, d_prime="real")))
    return table, out


#: the paper's printed value of each worked example (section 2.2), beside what the library computes
PAPER_EXAMPLES = {
    "grr_p_eps_ln49_d65536": ("GRR, eps = ln 49, d = 2^16", "p", "49/65584 ≈ 0.00075"),
    "grr_var_per_n_eps_ln49_d65536": ("GRR, eps = ln 49, d = 2^16", "Var / n, eq. (1)", "65583/2304 ≈ 28.5"),
    "olh_std_per_sqrt_n_e10": ("OLH, e^eps = 10", "std / sqrt(n), eq. (3)", "≈ 0.7"),
    "olh_min_population_e10_f0.001": ("OLH, e^eps = 10", "n with 0.001 n ≥ 3 std", "4,410,000"),
    "olh_min_population_e10_f0.001_std0.7": ("OLH, e^eps = 10", "same with std rounded to 0.7", "4,410,000"),
    "olh_min_population_ratio_half_f": ("OLH, e^eps = 10", "n for f = 0.0005 / n for f = 0.001",
                                        "quadrupling"),
}


def _example_numbers() -> dict:
    eps49, eps10 = math.log(49), math.log(10)
    v10 = float(olh_variance(eps10, d_prime="real"))  # eq. (3): 40/81
    n_min = float(min_population(1e-3, eps10, d_prime="real"))  # (3 / 0.001)^2 * 40/81
    return {"grr_p": float(grr_pq(eps49, 2**16)[0]), "grr_var": float(grr_variance(eps49, 2**16)),
            "olh_var": v10, "olh_var_int": float(olh_variance(eps10)), "olh_dprime": default_d_prime(eps10),
            "n_min": n_min, "n_min_rounded": (3 * round(math.sqrt(v10), 1) / 1e-3) ** 2,  # the paper's 0.7
            "halving": float(min_population(5e-4, eps10, d_prime="real")) / n_min}


def oracle_examples() -> pd.DataFrame:
    """The worked examples of section 2.2, computed by :mod:`ldp.oracles` (columns ``quantity, value``).

    GRR at ``eps = ln 49``, ``d = 2**16`` (section 2.2.1): ``p`` and eq. (1) / n.
    OLH at ``e^eps = 10`` (section 2.2.2): the standard deviation per sqrt(n)
    (eq. (3)), the smallest n with ``0.001 n >= 3`` standard deviations
    (unrounded, and with the standard deviation rounded to 0.7 as the paper
    prints it) and the ratio of that n for ``f = 0.0005`` to ``f = 0.001``.
    The quantity names are those of ``ldp.reporting.results`` (table
    ``01_frequency_oracles/oracle-examples``); :data:`PAPER_EXAMPLES` has the
    paper's printed values.
    """
    x = _example_numbers()
    values = [x["grr_p"], x["grr_var"], math.sqrt(x["olh_var"]), x["n_min"], x["n_min_rounded"], x["halving"]]
    return pd.DataFrame({"quantity": list(PAPER_EXAMPLES), "value": values})


def oracle_example_values() -> dict:
    """The worked examples as the chapter quotes them (``oracles_ex*`` names; n rounded up to users)."""
    x = _example_numbers()
    n_min, n_rounded = math.ceil(x["n_min"]), int(round(x["n_min_rounded"]))
    return dict(oracles_ex1_p=x["grr_p"], oracles_ex1_var=x["grr_var"], oracles_ex2_var=x["olh_var"],
                oracles_ex2_var_int=x["olh_var_int"], oracles_ex2_dprime=x["olh_dprime"],
                oracles_ex2_std=math.sqrt(x["olh_var"]), oracles_ex2_nmin=n_min, oracles_ex2_nmin_rounded=n_rounded,
                oracles_ex2_nmin_gap=n_min - n_rounded, oracles_ex2_nmin_gap_pct=100 * (n_min / x["n_min_rounded"] - 1),
                oracles_ex2_halving=x["halving"])


def oracle_examples_table(examples: pd.DataFrame) -> pd.DataFrame:
    """:func:`oracle_examples` beside the paper's printed values, for display (4 significant digits)."""
    rows = [(*PAPER_EXAMPLES[q][:2], PAPER_EXAMPLES[q][2], f"{v:,.6g}" if v < 1e5 else f"{v:,.0f}")
            for q, v in zip(examples.quantity, examples.value)]
    return pd.DataFrame(rows, columns=["example", "quantity", "paper", "ldp.oracles"])


def dprime_penalty_values(frame: pd.DataFrame) -> dict:
    """The variance cost (%) of the integer ``d'`` in :func:`variance_dprime_frame`'s panel a, as quoted."""
    pts = frame[(frame.panel == "a") & (frame.series == "d' = ceil(e^eps + 1)")]
    penalty = dict(zip(pts.epsilon, pts.y))
    worst = max(penalty, key=lambda e: penalty[e])
    return dict(oracles_penalty_max=100 * (penalty[worst] - 1), oracles_penalty_eps_max=float(worst),
                oracles_penalty_eps4=100 * (penalty[4.0] - 1), oracles_penalty_eps1=100 * (penalty[1.0] - 1))


def ldp_ratio_check(epsilon: float, *, n_seeds: int, rng: np.random.Generator, v1: int = 3, v2: int = 5,
                    grr_domain: int = 8, n_chi: int = 200_000) -> tuple[pd.DataFrame, dict]:
    """Largest and smallest ratio ``Pr[report | v1] / Pr[report | v2]`` of GRR and OLH, and chi-square tests.

    GRR (domain ``grr_domain``): the exact pmfs of two inputs.  OLH (16-bit
    values): the pmf of ``y`` given ``H(v)`` for ``n_seeds`` hash seeds; the
    factor Pr[H] cancels.  Then ``n_chi`` reports of ``v1`` from ``privatize``
    against the pmf (chi-square goodness of fit).  ``rng`` is used in that order.

    Returns
    -------
    table : pandas.DataFrame
        ``oracle, max_ratio, min_ratio, e_eps, chi2_pvalue``.
    values : dict
        The numbers the chapter quotes (``oracles_ldp_*``).
    """
    g = GRR(epsilon, grr_domain)
    grr_ratio = g.output_pmf(v1) / g.output_pmf(v2)
    o16 = OLH(epsilon, m=16)
    seeds = rng.integers(0, 2**64, size=n_seeds, dtype=np.uint64)
    h1 = o16.hash(seeds, np.full(n_seeds, v1, dtype=np.uint64))
    h2 = o16.hash(seeds, np.full(n_seeds, v2, dtype=np.uint64))
    pmf = np.stack([o16.output_pmf(h) for h in range(o16.d_prime)])  # row h: law of y given H(v) = h
    olh_ratio = pmf[h1] / pmf[h2]
    y_grr = g.privatize(np.full(n_chi, v1), rng=rng).y
    chi_grr = stats.chisquare(np.bincount(y_grr, minlength=grr_domain), n_chi * g.output_pmf(v1))
    rep = o16.privatize(np.full(n_chi, v1, dtype=np.uint64), rng=rng)
    h_own = o16.hash(rep.seed, np.full(n_chi, v1, dtype=np.uint64)).astype(np.int64)
    shift = (rep.y.astype(np.int64) - h_own) % o16.d_prime  # 0: y = H(v) kept
    chi_olh = stats.chisquare(np.bincount(shift, minlength=o16.d_prime), n_chi * o16.output_pmf(0))
    e_eps = math.exp(epsilon)
    table = pd.DataFrame([
        dict(oracle=f"GRR (d = {grr_domain})", max_ratio=grr_ratio.max(), min_ratio=grr_ratio.min(), e_eps=e_eps,
             chi2_pvalue=chi_grr.pvalue),
        dict(oracle=f"OLH (d' = {o16.d_prime})", max_ratio=olh_ratio.max(), min_ratio=olh_ratio.min(), e_eps=e_eps,
             chi2_pvalue=chi_olh.pvalue),
    ])
    values = dict(oracles_ldp_seeds=int(n_seeds), oracles_ldp_grr_ratio=float(grr_ratio.max() / e_eps),
                  oracles_ldp_olh_ratio=float(olh_ratio.max() / e_eps),
                  oracles_ldp_olh_collide=float(np.mean(h1 == h2)), oracles_ldp_chi_grr=float(chi_grr.pvalue),
                  oracles_ldp_chi_olh=float(chi_olh.pvalue), oracles_ldp_dprime=int(o16.d_prime))
    return table, values


def variance_dprime_frame(olh_var_dprime: Callable, *, epsilons: Sequence[float] = (0.5, 1.0, 2.0, 4.0),
                          grr_epsilons: Sequence[float] = (1.0, 4.0)) -> pd.DataFrame:
    """The tidy data of the figure "variance as a function of d'": ``panel, series, epsilon, x, y``.

    Panel a: OLH's variance ``olh_var_dprime(eps, d', 1)`` (eq. (2)'s variance at
    zero frequency, e.g. the chapter's ``sympy`` expression) against ``d'``,
    divided by eq. (3); the real optimum ``e^eps + 1`` and the integer
    ``ceil(e^eps + 1)`` that :class:`ldp.oracles.OLH` uses.  Panel b: eq. (1)
    of GRR against the domain size ``d``, eq. (3) (``x`` empty: a horizontal
    line) and the crossing ``d = 3 e^eps + 2``.
    """
    parts = []
    for e_ in epsilons:
        x = np.geomspace(1.3, 400, 600)
        v_star = float(olh_variance(e_, d_prime="real"))
        parts.append(pd.DataFrame({"panel": "a", "series": "OLH Var(d') / Var(d' = e^eps + 1)", "epsilon": e_,
                                   "x": x, "y": olh_var_dprime(e_, x, 1.0) / v_star}))
        parts.append(pd.DataFrame({"panel": "a", "series": ["d' = e^eps + 1", "d' = ceil(e^eps + 1)"],
                                   "epsilon": e_, "x": [math.exp(e_) + 1, float(default_d_prime(e_))],
                                   "y": [1.0, float(olh_variance(e_) / v_star)]}))
    dd = np.geomspace(2, 2**20, 200)
    for e_ in grr_epsilons:
        xc = 3 * math.exp(e_) + 2
        parts += [
            pd.DataFrame({"panel": "b", "series": "GRR, eq. (var_grr)", "epsilon": e_, "x": dd,
                          "y": grr_variance(e_, dd)}),
            pd.DataFrame({"panel": "b", "series": ["OLH, eq. (var_olh) (horizontal line)", "crossing d = 3e^eps + 2"],
                          "epsilon": e_, "x": [np.nan, xc],
                          "y": [float(olh_variance(e_, d_prime="real")), float(grr_variance(e_, xc))]})]
    return pd.concat(parts, ignore_index=True)


def plot_variance_dprime(frame: pd.DataFrame):
    """Draw :func:`variance_dprime_frame`'s data: (a) OLH's variance against ``d'``, (b) GRR against OLH.

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure (full width) and the rows it plots (all of ``frame``).
    """
    import matplotlib.pyplot as plt

    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(FULL_WIDTH, 3.2), layout="constrained")
    a, b = frame[frame.panel == "a"], frame[frame.panel == "b"]
    eps_a = list(dict.fromkeys(a.epsilon))
    color = dict(zip(eps_a, series_colors(len(eps_a))))
    for e_, grp in a.groupby("epsilon", sort=False):
        curve = grp[grp.series.str.startswith("OLH")]
        ax_a.plot(curve.x, curve.y, color=color[e_], label=rf"$\varepsilon = {e_:g}$")
        for series, mk in (("d' = e^eps + 1", dict(marker="o", ms=6, mfc="white")),
                           ("d' = ceil(e^eps + 1)", dict(marker="x", ms=7, mew=1.6))):
            pt = grp[grp.series == series]
            ax_a.plot(pt.x, pt.y, ls="none", color=color[e_], **mk)
    ax_a.plot([], [], "ko", mfc="white", label=r"$d' = e^\varepsilon + 1$")
    ax_a.plot([], [], "kx", mew=1.6, label=r"$d' = \lceil e^\varepsilon + 1\rceil$")
    ax_a.set(xscale="log", ylim=(0.95, 2.0), xlabel="hash range $d'$",
             ylabel=r"Var$(d')$ / $\frac{4e^\varepsilon}{(e^\varepsilon-1)^2}n$", title="(a) OLH variance against $d'$")
    for e_, grp in b.groupby("epsilon", sort=False):
        c = color.get(e_, "k")
        curve = grp[grp.series.str.startswith("GRR")]
        ax_b.plot(curve.x, curve.y, color=c, label=rf"GRR, $\varepsilon = {e_:g}$")
        ax_b.axhline(grp[grp.series.str.startswith("OLH")].y.iloc[0], color=c, ls="--",
                     label=rf"OLH, $\varepsilon = {e_:g}$")
        cross = grp[grp.series.str.startswith("crossing")]
        ax_b.plot(cross.x, cross.y, "s", color=c, ms=5)
    ax_b.set(xscale="log", yscale="log", xlabel="domain size $d$", ylabel="Var / $n$ (zero-frequency value)",
             title="(b) GRR against OLH")
    legend_outside(fig, ncol=5)
    return fig, frame
