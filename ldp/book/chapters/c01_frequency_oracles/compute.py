"""The frequency oracles run many times (chapter 01, paper section 2.2): their law against the formulas.

* :func:`oracle_simulation` -- GRR and OLH run many times: mean and variance of
  the estimate against eq. (2)'s variance and eqs. (1) and (3);
* :func:`ldp_ratio_check` -- the eps-LDP inequality on the oracles' exact output
  distributions, and a chi-square test of ``privatize`` against them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ....oracles import GRR, OLH
from ....oracles.formulas import default_d_prime, grr_variance, olh_variance

__all__ = ["oracle_simulation", "ldp_ratio_check", "variance_curves", "dprime_ratios", "grr_olh_ends"]


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
    checks per oracle: the mean estimate of value 0 (its z-score), its variance
    against ``oracle.variance(n, count=c)``, and the variance of the
    zero-frequency values (averaged) against eq. (1) / eq. (3) at the oracle's
    integer ``d'`` (their ratio; its relative standard error is about
    ``sqrt(2 / (R - 1))``, quoted as ``oracles_var_rse``).

    Returns
    -------
    table : pandas.DataFrame
        One row per check: ``oracle, check, empirical, theory, statistic`` (a z-score or a ratio).
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
    rows: list[dict] = []
    out: dict[str, object] = {}
    for name, oracle in (("GRR", grr), ("OLH", olh)):
        e_ = est[name]
        sd = e_[:, 0].std(ddof=1)
        z = (e_[:, 0].mean() - c_true) / (sd / math.sqrt(n_reps))
        rows.append(dict(oracle=name, check="mean of estimate, value 0", empirical=e_[:, 0].mean(),
                         theory=float(c_true), statistic=z))
        v_emp, v_th = e_[:, 0].var(ddof=1), oracle.variance(n_users, count=c_true)
        v_emp0 = e_[:, 1:].var(axis=0, ddof=1).mean()
        v_th0 = (grr_variance(epsilon, d_sim, n_users) if name == "GRR"
                 else olh_variance(epsilon, n_users))  # eq. (1) / eq. (3) at the integer d'
        for check, emp, th in ((f"variance, value 0 (c = {c_true})", v_emp, v_th),
                               ("variance, zero-frequency values", v_emp0, v_th0)):
            rows.append(dict(oracle=name, check=check, empirical=emp, theory=th, statistic=emp / th))
        key = f"oracles_{name.lower()}"
        out.update({f"{key}_z": float(z), f"{key}_ratio": float(v_emp / v_th),
                    f"{key}_ratio_zero": float(v_emp0 / v_th0)})
    table = pd.DataFrame(rows)
    means = table.check.str.startswith("mean")
    out.update(oracles_var_rse=math.sqrt(2 / (n_reps - 1)), oracles_c_true=c_true, oracles_sim_dprime=int(olh.d_prime),
               oracles_max_abs_z=float(table.loc[means, "statistic"].abs().max()),
               oracles_max_ratio_gap=float((table.loc[~means, "statistic"] - 1).abs().max()),
               oracles_olh_int_over_real=float(olh_variance(epsilon) / olh_variance(epsilon, d_prime="real")))
    return table, out


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


def variance_curves(olh_var_dprime: Callable, *, epsilons: Sequence[float], grr_epsilons: Sequence[float],
                    labels: Sequence[str]) -> pd.DataFrame:
    """OLH's variance against d' and GRR's against d (eqs. (1)-(3)), series named by ``labels``: see
    :func:`ldp.book.chapters.c01_frequency_oracles.oracle_variance.frame`, whose data this is."""
    _CURVE, _REAL, _INT, _GRR, _OLH, _CROSS, _INTS = labels
    parts = []
    for e_ in epsilons:
        v_star = float(olh_variance(e_, d_prime="real"))
        for series, x in ((_CURVE, np.geomspace(1.3, 400, 600)), (_INTS, np.arange(2.0, 401.0))):  # integers too
            parts.append(pd.DataFrame({"panel": "a", "series": series, "epsilon": e_, "x": x,
                                       "y": olh_var_dprime(e_, x, 1.0) / v_star}))
        parts.append(pd.DataFrame({"panel": "a", "series": [_REAL, _INT], "epsilon": e_,
                                   "x": [math.exp(e_) + 1, float(default_d_prime(e_))],
                                   "y": [1.0, float(olh_variance(e_) / v_star)]}))
    dd = np.geomspace(2, 2**20, 200)
    for e_ in grr_epsilons:
        xc = 3 * math.exp(e_) + 2
        parts += [pd.DataFrame({"panel": "b", "series": _GRR, "epsilon": e_, "x": dd, "y": grr_variance(e_, dd)}),
                  pd.DataFrame({"panel": "b", "series": [_OLH, _CROSS], "epsilon": e_, "x": [np.nan, xc],
                                "y": [float(olh_variance(e_, d_prime="real")), float(grr_variance(e_, xc))]})]
    return pd.concat(parts, ignore_index=True)


def dprime_ratios(curves: pd.DataFrame, series: str, *, against: str | None = None) -> pd.DataFrame:
    """Panel (a) of :func:`variance_curves`: each point of ``series`` (``Var(d') / Var(e^eps + 1)``) against 1,
    or against the same ratio of the series ``against`` at the same ε (e.g. the integer ``ceil(e^eps + 1)``).

    Parameters
    ----------
    curves : pandas.DataFrame
        :func:`variance_curves`' frame.
    series : str
        The series whose points are compared.
    against : str, optional, keyword-only
        The series (one point per ε) they are compared with; default the real optimum's ratio 1.

    Returns
    -------
    pandas.DataFrame
        ``point, a, se_a, b, se_b`` (``se`` 0: closed forms), empty if ``series`` is not in panel (a).
    """
    d = curves[(curves["panel"] == "a") & (curves["series"] == series)]
    b = 1.0 if against is None else curves[curves["series"] == against].set_index("epsilon")["y"].reindex(d["epsilon"])
    return pd.DataFrame({"point": [f"ε = {e:g}, d' = {x:.3g}" for e, x in zip(d["epsilon"], d["x"])],
                         "a": d["y"].to_numpy(), "se_a": 0.0, "b": np.asarray(b, dtype=float) * np.ones(len(d)),
                         "se_b": 0.0})


def grr_olh_ends(curves: pd.DataFrame, *, grr: str, olh: str) -> pd.DataFrame:
    """GRR's variance against OLH's at the smallest and the largest domain of :func:`variance_curves`' panel (b).

    Parameters
    ----------
    curves : pandas.DataFrame
        :func:`variance_curves`' frame.
    grr, olh : str, keyword-only
        Its series names of GRR's curve and of OLH's level (matched as a prefix).

    Returns
    -------
    pandas.DataFrame
        ``point, a, se_a, b, se_b``, two rows per ε: at the smallest d OLH's variance (``a``) and GRR's (``b``),
        at the largest GRR's (``a``) and OLH's (``b``); ``a > b`` says the named oracle is the better one there
        (``se`` 0: closed forms).
    """
    rows = []
    for eps, grp in curves[curves["panel"] == "b"].groupby("epsilon"):
        g_, o_ = grp[grp["series"] == grr].sort_values("x"), grp[grp["series"].str.startswith(olh)]
        if g_.empty or o_.empty:
            continue
        v_olh, lo, hi = float(o_["y"].iloc[0]), g_.iloc[0], g_.iloc[-1]
        rows += [{"point": f"ε = {eps:g}, smallest d = {lo['x']:.3g}: GRR below OLH", "a": v_olh, "b": float(lo["y"])},
                 {"point": f"ε = {eps:g}, largest d = {hi['x']:.3g}: OLH below GRR", "a": float(hi["y"]), "b": v_olh}]
    return pd.DataFrame(rows, columns=["point", "a", "b"]).assign(se_a=0.0, se_b=0.0)
