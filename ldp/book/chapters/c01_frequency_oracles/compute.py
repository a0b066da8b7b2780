"""What chapter 01 computes (paper section 2.2): the oracles' variances derived, simulated and checked.

* :func:`estimator_latex`, :func:`olh_latex` -- the ``sympy`` results of the chapter's derivation, as the
  displayed equations;
* :func:`grr_variance_findings`, :func:`olh_variance_findings` -- those results against the paper's eqs. (1) and
  (3) and against :func:`ldp.analysis.grr_variance` and :func:`ldp.analysis.olh_variance`;
* :func:`oracle_simulation` -- GRR and OLH run many times: mean and variance of
  the estimate against eq. (2)'s variance and eqs. (1) and (3);
* :func:`example_findings` -- the worked examples of section 2.2, also in exact arithmetic;
* :func:`dprime_penalty_findings` -- what the integer ``d'`` costs, read from the figure's data;
* :func:`wire_findings` -- what one user sends;
* :func:`ldp_ratio_check` -- the eps-LDP inequality on the oracles' exact output
  distributions, and a chi-square test of ``privatize`` against them; :func:`ldp_check_rows` its ratios as rows of
  :func:`oracle_simulation`'s table (the table the claims read).

``sympy`` (the book's extra) is imported where it is used.  Its expressions here are in the chapter's symbols,
which :func:`symbols` creates: ``sympy`` symbols of the same name and assumptions are the same symbol.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ....oracles import GRR, OLH
from ....oracles.formulas import default_d_prime, grr_variance, olh_variance

__all__ = ["symbols", "estimator_latex", "grr_variance_findings", "olh_latex", "olh_variance_findings",
           "oracle_simulation", "example_findings", "dprime_penalty_findings", "wire_findings", "ldp_ratio_check",
           "ldp_check_rows", "LARGEST_RATIO", "SMALLEST_RATIO", "variance_curves", "dprime_ratios", "grr_olh_ends"]

#: the series of :func:`variance_curves`' panel (a) that marks the integer ``d' = ceil(e^eps + 1)`` the oracle runs
INTEGER_DPRIME = "d' = ceil(e^eps + 1)"


def symbols() -> dict:
    """The chapter's ``sympy`` symbols by name: ``n, c, p, q`` and ``eps, d, dp`` (ε, the domain size, ``d'``).

    All positive, as the chapter declares them, so they equal the notebook's own.
    """
    import sympy as sp

    n, c, p, q = sp.symbols("n c p q", positive=True)
    eps, d, dp = sp.symbols("varepsilon d d'", positive=True)
    return {"n": n, "c": c, "p": p, "q": q, "eps": eps, "d": d, "dp": dp}


def estimator_latex(mean, var_support, var_zero) -> list[str]:
    """The derivation's results as displayed equations: eq. (2)'s mean, its variance, its variance at ``c = 0``.

    Parameters
    ----------
    mean, var_support, var_zero : sympy.Expr
        ``E[(I_v - n q)/(p - q)]``, ``Var[I_v]`` and the estimate's variance for a value nobody holds.

    Returns
    -------
    list of str
        LaTeX, one equation each (``IPython.display.Math``).
    """
    import sympy as sp

    est = r"\left[\frac{I_v - nq}{p-q}\right] = "
    return [r"\mathbb E" + est + sp.latex(mean),
            r"\operatorname{Var}" + est + r"\frac{" + sp.latex(var_support) + r"}{(p-q)^2}",
            r"c = 0:\quad \operatorname{Var}" + est + sp.latex(var_zero)]


def grr_variance_findings(var_grr) -> dict:
    """GRR's variance from the derivation against the paper's eq. (1) and :func:`ldp.analysis.grr_variance`.

    Parameters
    ----------
    var_grr : sympy.Expr
        The variance of GRR's estimate at zero frequency, in ``eps, d, n`` (:func:`symbols`).

    Returns
    -------
    dict
        ``oracles_grr_sympy_diff`` (LaTeX of ``var_grr`` minus eq. (1), simplified: ``"0"`` when they agree) and
        ``oracles_grr_code_relerr``, the largest relative difference from ``grr_variance`` on the grid
        ``eps`` in 40 points of [0.1, 8] by ``d = 2, 4, ..., 2^20``.
    """
    import sympy as sp

    s = symbols()
    eps, d, n = s["eps"], s["d"], s["n"]
    E = sp.exp(eps)
    f_grr = sp.lambdify((eps, d, n), var_grr, "numpy")
    ee, dd = np.meshgrid(np.linspace(0.1, 8, 40), 2.0 ** np.arange(1, 21))
    return {"oracles_grr_sympy_diff": sp.latex(sp.simplify(var_grr - (d - 2 + E) / (E - 1) ** 2 * n)),
            "oracles_grr_code_relerr": float(np.max(np.abs(f_grr(ee, dd, 1.0) / grr_variance(ee, dd, 1.0) - 1)))}


def olh_latex(var_dprime, roots, d_opt, second, var_opt, d_cross) -> list[str]:
    """The minimisation of OLH's variance over ``d'`` as displayed equations.

    Parameters
    ----------
    var_dprime : sympy.Expr
        OLH's variance at zero frequency as a function of ``d'``.
    roots : list of sympy.Expr
        The stationary points of ``var_dprime`` in ``d'``.
    d_opt, second, var_opt : sympy.Expr
        The stationary point above 1, the second derivative there and the variance there.
    d_cross : sympy.Expr
        The domain size where GRR's variance equals ``var_opt``.

    Returns
    -------
    list of str
        LaTeX of four equations: ``Var(d')``; its stationary points, ``d'_*`` and the second derivative; the
        minimum with OLH's ``p, q`` at ``d'_*``; where GRR is the better oracle.
    """
    import sympy as sp

    s = symbols()
    E, dp = sp.exp(s["eps"]), s["dp"]
    p_olh, q_olh = E / (E + dp - 1), 1 / dp  # section 2.2.2
    var = r"\operatorname{Var}"
    return [var + r"_{OLH}(d') = " + sp.latex(var_dprime),
            r"\frac{\partial " + var + r"}{\partial d'} = 0 \iff d' \in \{" + ", ".join(sp.latex(r) for r in roots)
            + r"\},\quad d'_* = " + sp.latex(d_opt) + r",\quad \frac{\partial^2 " + var
            + r"}{\partial d'^2}\Big|_{d'_*} = " + sp.latex(second),
            var + r"_{OLH}(d'_*) = " + sp.latex(var_opt) + r",\quad p = " + sp.latex(sp.simplify(p_olh.subs(dp, d_opt)))
            + r",\ q = " + sp.latex(sp.simplify(q_olh.subs(dp, d_opt))),
            var + r"_{GRR} < " + var + r"_{OLH}(d'_*) \iff d < " + sp.latex(d_cross)]


def olh_variance_findings(var_opt, f_olh: Callable, d_cross) -> dict:
    """OLH's variance from the derivation against the paper's eq. (3) and :func:`ldp.analysis.olh_variance`.

    Parameters
    ----------
    var_opt : sympy.Expr
        OLH's variance at the best real ``d'``, in ``eps, n``.
    f_olh : callable
        ``f_olh(eps, d', n)``: OLH's variance at any ``d'`` (the derivation's expression, lambdified).
    d_cross : sympy.Expr
        The domain size in ``eps`` below which GRR has the smaller variance.

    Returns
    -------
    dict
        ``oracles_olh_sympy_diff`` (LaTeX of ``var_opt`` minus eq. (3)), ``oracles_olh_code_relerr`` (the largest
        relative difference of ``f_olh`` from ``olh_variance`` over 80 budgets in [0.1, 8], at the oracle's
        integer ``d'`` and at the real ``e^eps + 1``) and ``oracles_d_cross_eps1``, ``oracles_d_cross_eps4``
        (``d_cross`` at ε = 1 and 4).
    """
    import sympy as sp

    s = symbols()
    eps, n = s["eps"], s["n"]
    E = sp.exp(eps)
    eps_grid = np.linspace(0.1, 8, 80)
    relerr_int = max(abs(f_olh(e_, default_d_prime(e_), 1.0) / olh_variance(e_) - 1) for e_ in eps_grid)
    relerr_real = np.max(np.abs(f_olh(eps_grid, np.exp(eps_grid) + 1, 1.0)
                                / olh_variance(eps_grid, 1.0, d_prime="real") - 1))
    return {"oracles_olh_sympy_diff": sp.latex(sp.cancel(var_opt - 4 * E / (E - 1) ** 2 * n)),
            "oracles_olh_code_relerr": float(max(relerr_int, relerr_real)),
            "oracles_d_cross_eps1": float(d_cross.subs(eps, 1.0)),
            "oracles_d_cross_eps4": float(d_cross.subs(eps, 4.0))}


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
        The numbers the chapter quotes (``oracles_*`` names), the settings among them.
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
    out.update(oracles_n_users=int(n_users), oracles_n_reps=int(n_reps), oracles_sim_eps=float(epsilon),
               oracles_grr_domain=int(grr_domain), oracles_heavy_share=float(heavy_share))
    out.update(oracles_var_rse=math.sqrt(2 / (n_reps - 1)), oracles_c_true=c_true, oracles_sim_dprime=int(olh.d_prime),
               oracles_max_abs_z=float(table.loc[means, "statistic"].abs().max()),
               oracles_max_ratio_gap=float((table.loc[~means, "statistic"] - 1).abs().max()),
               oracles_olh_int_over_real=float(olh_variance(epsilon) / olh_variance(epsilon, d_prime="real")))
    return table, out


def example_findings(examples: pd.DataFrame, var_grr) -> dict:
    """The numbers the chapter quotes about section 2.2's worked examples.

    Parameters
    ----------
    examples : pandas.DataFrame
        :func:`ldp.book.chapters.c01_frequency_oracles.oracle_examples.frame` (``quantity, value``).
    var_grr : sympy.Expr
        GRR's variance in ``eps, d, n`` (the chapter's derivation): eq. (1) at ``eps = ln 49``, ``d = 2^16`` is
        also worked out in exact arithmetic.

    Returns
    -------
    dict
        ``oracles_ex1_*`` (GRR at ε = ln 49, ``d = 2^16``: ``p`` and ``Var / n``, as floats and exact fractions
        ``"49/65584"``, ``"65583/2304"``) and ``oracles_ex2_*`` (OLH at e^ε = 10: the standard deviation per
        sqrt(n), the variance at the real and the integer ``d'``, the smallest population with and without
        the paper's rounding, their gap in users and %, and the factor for half the frequency).
    """
    import sympy as sp

    s = symbols()
    eps, d, n = s["eps"], s["d"], s["n"]
    E = sp.exp(eps)
    ex = examples.set_index("quantity")["value"]
    n_min, n_rounded = math.ceil(ex["olh_min_population_e10_f0.001"]), round(ex["olh_min_population_e10_f0.001_std0.7"])
    at49 = {eps: sp.log(49), d: 2**16}  # exact arithmetic: p and eq. (1) / n of GRR at eps = ln 49, d = 2^16
    return dict(oracles_ex1_p=ex["grr_p_eps_ln49_d65536"], oracles_ex1_var=ex["grr_var_per_n_eps_ln49_d65536"],
                oracles_ex1_p_exact=str(sp.nsimplify((E / (E + d - 1)).subs(at49))),
                oracles_ex1_var_exact=str(sp.simplify((var_grr / n).subs(at49))),
                oracles_ex2_std=ex["olh_std_per_sqrt_n_e10"], oracles_ex2_var=ex["olh_std_per_sqrt_n_e10"] ** 2,
                oracles_ex2_var_int=float(olh_variance(math.log(10))),
                oracles_ex2_dprime=default_d_prime(math.log(10)), oracles_ex2_nmin=n_min,
                oracles_ex2_nmin_rounded=n_rounded, oracles_ex2_nmin_gap=n_min - n_rounded,
                oracles_ex2_nmin_gap_pct=100 * (n_min / ex["olh_min_population_e10_f0.001_std0.7"] - 1),
                oracles_ex2_halving=ex["olh_min_population_ratio_half_f"])


def dprime_penalty_findings(curves: pd.DataFrame, *, series: str = INTEGER_DPRIME) -> dict:
    """What the integer ``d' = ceil(e^eps + 1)`` costs in variance (%), read from :func:`variance_curves`' panel (a).

    Parameters
    ----------
    curves : pandas.DataFrame
        The figure's data (``panel, series, epsilon, x, y``; ``y`` the variance over its minimum).
    series : str, keyword-only
        The series of the integer ``d'`` (one point per ε).

    Returns
    -------
    dict
        ``oracles_penalty_max`` (the largest extra variance, %), ``oracles_penalty_eps_max`` (its ε) and
        ``oracles_penalty_eps1``, ``oracles_penalty_eps4`` (at ε = 1 and 4).

    Raises
    ------
    ValueError
        If panel (a) has no point of ``series``.
    """
    points = curves[(curves["panel"] == "a") & (curves["series"] == series)].set_index("epsilon")["y"]
    if points.empty:
        raise ValueError(f"series={series!r}: panel (a) of the curves has no such series")
    penalty = 100 * (points - 1)
    return dict(oracles_penalty_max=float(penalty.max()), oracles_penalty_eps_max=float(penalty.idxmax()),
                oracles_penalty_eps4=float(penalty[4.0]), oracles_penalty_eps1=float(penalty[1.0]))


def wire_findings(reports) -> dict:
    """How many users sent ``reports`` (``oracles_demo_n``) and the bytes each sent (``oracles_demo_bytes``)."""
    return dict(oracles_demo_n=len(reports), oracles_demo_bytes=float(reports.nbytes / len(reports)))


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


#: the checks of :func:`ldp_check_rows` (the start of their ``check``)
LARGEST_RATIO = "largest ratio Pr[report | v1] / Pr[report | v2]"
SMALLEST_RATIO = "smallest ratio Pr[report | v1] / Pr[report | v2]"


def ldp_check_rows(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`ldp_ratio_check`'s ratios as rows of :func:`oracle_simulation`'s table: per oracle the largest ratio
    against e^eps and the smallest against e^-eps (``statistic``: their ratio, 1 where the bound is met with
    equality).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`ldp_ratio_check`'s table (``oracle``, e.g. ``"GRR (d = 8)"``, ``max_ratio``, ``min_ratio``,
        ``e_eps``).

    Returns
    -------
    pandas.DataFrame
        ``oracle, check, empirical, theory, statistic``; ``oracle`` the name alone (``"GRR"``), its setting in
        ``check``.
    """
    rows = []
    for r in table.itertuples():
        name, _, setting = str(r.oracle).partition(" (")
        detail = f", exact ({setting}" if setting else ", exact"
        rows += [dict(oracle=name, check=LARGEST_RATIO + detail, empirical=r.max_ratio, theory=r.e_eps,
                      statistic=r.max_ratio / r.e_eps),
                 dict(oracle=name, check=SMALLEST_RATIO + detail, empirical=r.min_ratio, theory=1 / r.e_eps,
                      statistic=r.min_ratio * r.e_eps)]
    return pd.DataFrame(rows, columns=["oracle", "check", "empirical", "theory", "statistic"])


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
