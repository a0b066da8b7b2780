"""What chapter 05 computes (paper section 5, Figures 2-4): section 5's simulation grids against the analysis.

* :class:`Grids` -- PEM on section 5's Zipf data with the count engine, through :func:`ldp.experiments.run_grid`,
  ``repetitions`` runs per point, timed;
* :func:`identification_table`, :func:`utility_table` -- the figures' points: simulation beside eq. (5) or eq. (4)
  under the readings of :data:`READINGS`, on the realised frequencies of each data set;
* :func:`figure2_findings`, :func:`figure3_findings`, :func:`figure4_findings` -- the numbers the text quotes about
  each figure (:func:`gaps`: where simulation and analysis differ most, and the other readings);
* :func:`identification_summary`, :func:`utility_wide_table`, :func:`configurations_table` -- the tables shown;
* :func:`independence_table` -- whether the top values are identified independently (section 4.2.1's approximation);
* :func:`mirror_pairs`, :func:`distribution_ends` -- what the claims of Figures 3 and 4 compare;
* :func:`round_model_utility` -- eq. (4)'s utility in a normal approximation of PEM's rounds, with the values
  below rank k at frequency zero (eq. (5)'s assumption) or at their own frequencies: what eq. (5) leaves out.
"""
from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import norm

from ....analysis import PEMConfig, identification_probability, utility_score, utility_weights, validation_setting
from ....experiments import Grid, identification_rates, row_dataset, run_grid, summarize
from ....oracles import olh_pq
from ....protocols import PEM

__all__ = ["READINGS", "Grids", "dist_name", "level_label", "binomial_se", "run_config", "identification_table",
           "utility_table", "where_identification", "where_utility", "gaps", "argmaxes", "figure2_findings",
           "identification_summary", "utility_wide_table", "figure3_findings", "figure4_findings",
           "configurations_table", "mirror_pairs", "distribution_ends", "independence_table", "round_model_utility"]

#: the three readings of eq. (5) the validation compares (keyword arguments of ``ldp.analysis``):
#: the default (the text's k - j + 1 slots, the paper's N[i]), the lower-ranked heavy values as
#: competitors, and the formula as printed
READINGS: dict[str, dict[str, str]] = {"analysis": {}, "lower": {"competitors": "lower"},
                                       "formula": {"slots": "formula"}}


#: a warning joblib's loky pool may give when it restarts an idle worker between grids (harmless)
IDLE_WORKER_WARNING = "A worker stopped while some jobs were given"


@dataclass
class Grids:
    """Section 5's simulation grids: PEM with the count engine on Zipf data, ``repetitions`` runs per point.

    Every grid goes through :func:`ldp.experiments.run_grid` (in parallel, cached, each run's seed derived from
    ``root_seed`` and the point); :attr:`runs` and :attr:`seconds` add up the runs and the wall time of every
    grid run so far (points already in the cache take no time).

    Parameters
    ----------
    repetitions : int
        Runs per point.
    root_seed : int
        The grids' root seed.
    n_jobs : int
        joblib workers (-1: all cores).
    zipf_exponent : float
        The data's law, ``f_j`` proportional to ``1/j^zipf_exponent``.
    """

    repetitions: int
    root_seed: int
    n_jobs: int = -1
    zipf_exponent: float = 1.5
    runs: int = 0
    seconds: float = 0.0

    def data(self, n: int, m: int, drop: int = 0, **extra) -> tuple[str, dict, str]:
        """A data set spec for :meth:`run`: section 5's Zipf data of ``n`` users and ``m`` bits, without its
        ``drop`` most frequent values (``drop=20``: zipf(-20)); ``extra``: more arguments of
        :func:`ldp.datasets.zipf` (e.g. ``sampling="rounded"``), also in the data set's name."""
        kw = {"n": int(n), "m": int(m), "s": float(self.zipf_exponent), "drop_top": int(drop), **extra}
        name = f"{dist_name(drop)}, n={int(n)}, m={int(m)}" + "".join(f", {k}={v}" for k, v in extra.items())
        return ("zipf", kw, name)

    def run(self, protocol_kwargs: Mapping, datasets: Sequence, params: Mapping, rank_depth: int = 0) -> pd.DataFrame:
        """PEM (``protocol_kwargs``) on every data set of ``datasets`` at every level of ``params``, with the count
        engine, :attr:`repetitions` times: :func:`ldp.experiments.run_grid`'s rows (``rank_depth``: the top values
        whose ranks each run records)."""
        grid = Grid([("PEM", protocol_kwargs, "PEM")], datasets, params, repetitions=self.repetitions,
                    engine="counts", root_seed=self.root_seed, rank_depth=rank_depth)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=IDLE_WORKER_WARNING)
            rows = run_grid(grid, n_jobs=self.n_jobs, progress=False)
        self.runs += grid.n_runs
        self.seconds += time.perf_counter() - t0
        return rows

    def findings(self, *, chapter_seconds: float) -> dict:
        """``validation_runs_total`` and ``validation_grid_seconds`` (:attr:`runs`, :attr:`seconds`), and
        ``validation_seconds``, the chapter's time so far."""
        return {"validation_runs_total": int(self.runs), "validation_grid_seconds": float(self.seconds),
                "validation_seconds": float(chapter_seconds)}


def dist_name(drop_top: int) -> str:
    """Section 5's name of a Zipf data set: ``"zipf"``, or ``"zipf(-20)"`` without its 20 most frequent values."""
    return f"zipf(-{int(drop_top)})" if drop_top else "zipf"


def level_label(axis: str, value) -> str:
    """A parameter level as the text writes it: ``"n = 1,000,000"``, ``"m = 64"``, ``"ε = 2"``."""
    if axis == "n":
        return f"n = {int(value):,}"
    if axis == "m":
        return f"m = {int(value)}"
    return f"ε = {value:g}"


def binomial_se(p, runs) -> np.ndarray:
    """Standard error of a rate ``p`` over ``runs`` runs, floored at that of a rate of ``1/runs``."""
    p = np.asarray(p, dtype=float)
    floor = (1 / runs) * (1 - 1 / runs)
    return np.sqrt(np.maximum(p * (1 - p), floor) / runs)


def run_config(row):
    """The PEM configuration and the exact data set of a PEM results row of :func:`run_grid`.

    Returns
    -------
    (ldp.analysis.PEMConfig, ldp.datasets.Dataset)
        The configuration PEM used for the row's ``n`` (its own or the optimizer's) and the data set.
    """

    ds = row_dataset(row)
    kwargs = json.loads(row["run_spec"])["kwargs"]
    return PEM(m=int(row["m"]), **kwargs).config(ds.n), ds


def _readings(frame: pd.DataFrame) -> pd.DataFrame:
    """Simulation minus the default analysis (``gap``) and in standard errors (``z``)."""
    frame["gap"] = frame["sim"] - frame["analysis"]
    frame["z"] = frame["gap"] / frame["se"]
    return frame


def identification_table(panels: Mapping[str, tuple[str, pd.DataFrame]], k: int) -> pd.DataFrame:
    """Figure 2's points: simulated identification rate and eq. (5) of each top-``k`` value, per setting.

    Parameters
    ----------
    panels : mapping of str to (str, pandas.DataFrame)
        Panel letter -> (the varied axis ``"n"``, ``"m"`` or ``"epsilon"``, the PEM grid's rows, run
        with ``rank_depth = k``).
    k : int
        Values tracked (the top ``k``).

    Returns
    -------
    pandas.DataFrame
        One row per (panel, setting, rank): ``panel, axis, level, setting, n, m, epsilon, etas, dmin,
        rank`` (1-based), ``frequency`` (realised), ``sim`` (rate over ``runs``), ``runs``, the three
        readings of :data:`READINGS` (product of eq. (5) over the rounds, on the realised
        frequencies), ``se`` (:func:`binomial_se` of the analysis), ``gap`` and ``z``.
    """

    parts = []
    for panel, (axis, df) in panels.items():
        rates = identification_rates(df, by=["n", "m", "epsilon"])
        for (n, m, eps), grp in rates.groupby(["n", "m", "epsilon"], sort=False):
            cfg, ds = run_config(df[(df["n"] == n) & (df["m"] == m) & (df["epsilon"] == eps)].iloc[0])
            level = {"n": n, "m": m, "epsilon": eps}[axis]
            part = pd.DataFrame({
                "panel": panel, "axis": axis, "level": level, "setting": level_label(axis, level),
                "n": n, "m": m, "epsilon": eps, "etas": str(cfg.etas), "dmin": min(cfg.domain_sizes),
                "rank": grp["rank"].to_numpy() + 1, "frequency": ds.top_frequencies(k),
                "sim": grp["rate"].to_numpy(), "runs": grp["runs"].to_numpy()})
            for name, kw in READINGS.items():  # eq. (5), product over the rounds
                options: dict[str, Any] = dict(kw)
                part[name] = identification_probability(cfg, eps, ds.frequencies, n=ds.n, **options)
            parts.append(part)
    ident = pd.concat(parts, ignore_index=True)
    ident["se"] = binomial_se(ident["analysis"], ident["runs"])
    return _readings(ident)


#: how a varied configuration axis of Figure 3 is plotted: g, eta[1], n[1] = fraction * n
_X_OF = {"g": lambda v, n: int(v), "etas": lambda v, n: json.loads(v)[0],
         "group_fractions": lambda v, n: int(round(json.loads(v)[0] * n))}


def utility_table(panels: Mapping[str, tuple[str, pd.DataFrame]], k: int) -> pd.DataFrame:
    """Figures 3 and 4's points: simulated mean F1 and NCR with eq. (4) on the same configuration and data.

    Parameters
    ----------
    panels : mapping of str to (str, pandas.DataFrame)
        Panel letter -> (the varied axis: ``"n"``, ``"m"``, ``"epsilon"``, ``"g"``, ``"etas"`` or
        ``"group_fractions"``; the PEM grid's rows).
    k : int
        The number of heavy hitters (floors the standard error at one value in one run).

    Returns
    -------
    pandas.DataFrame
        One row per (panel, x, data set, metric): ``panel, axis, x, dist, metric, n, m, epsilon, etas,
        dmin, sim, sem, runs``, the readings of :data:`READINGS`, ``se`` (``sem`` floored at
        ``1/(k runs)``), ``gap`` and ``z``.
    """

    rows = []
    for panel, (axis, df) in panels.items():
        df = df.assign(dist=[dist_name(d) for d in df["dataset_drop_top"]])
        by = ["dist", "n", "m", "epsilon"] + ([axis] if axis not in ("n", "m", "epsilon") else [])
        for _, s in summarize(df, by=by, metrics=["f1", "ncr"]).iterrows():
            sel = np.ones(len(df), dtype=bool)
            for c in by:
                sel &= (df[c] == s[c]).to_numpy()
            cfg, ds = run_config(df[sel].iloc[0])
            eps = float(s["epsilon"])
            x = _X_OF[axis](s[axis], s["n"]) if axis in _X_OF else s[axis]
            for metric in ("f1", "ncr"):
                rec = {"panel": panel, "axis": axis, "x": x, "dist": s["dist"], "metric": metric,
                       "n": int(s["n"]), "m": int(s["m"]), "epsilon": eps, "etas": str(cfg.etas),
                       "dmin": min(cfg.domain_sizes),
                       "sim": s[f"{metric}_mean"], "sem": s[f"{metric}_sem"], "runs": s[f"{metric}_count"]}
                for name, kw in READINGS.items():  # eq. (4)
                    rec[name] = utility_score(cfg, eps, ds.frequencies, n=ds.n, metric=metric, **kw)
                rows.append(rec)
    out = pd.DataFrame(rows)
    # standard error of the mean, floored at one heavy hitter in one run (1/(k R))
    out["se"] = np.maximum(out["sem"].fillna(0.0), 1.0 / (k * out["runs"]))
    return _readings(out)


def where_identification(row) -> str:
    """A point of :func:`identification_table` as the text names it: panel, level, rank and frequency."""
    return (f"panel ({row['panel']}), {level_label(row['axis'], row['level'])}, rank {int(row['rank'])} "
            f"(f = {row['frequency']:.4f})")


def where_utility(row) -> str:
    """A point of :func:`utility_table` as the text names it: panel, level, data set and metric."""
    x = row["x"]
    label = {"g": f"g = {x}", "etas": f"η[1] = {x}", "group_fractions": f"n[1] = {x:,}", "n": f"n = {int(x):,}",
             "m": f"m = {int(x)}", "epsilon": f"ε = {x:g}"}[row["axis"]]
    return f"panel ({row['panel']}), {label}, {row['dist']}, {row['metric'].upper()}"


def gaps(points: pd.DataFrame, prefix: str, where: Callable) -> dict:
    """Where simulation and analysis differ most, the mean gaps, and how far the other readings of eq. (5) are.

    Parameters
    ----------
    points : pandas.DataFrame
        :func:`identification_table` or :func:`utility_table`.
    prefix : str
        The names' stem, e.g. ``"validation_fig2"``.
    where : callable
        Names a point (:func:`where_identification`, :func:`where_utility`).

    Returns
    -------
    dict
        ``{prefix}_gap_where`` (the point of the largest gap), ``_dmin`` (the smallest domain tested),
        ``_mean_gap`` (mean absolute gap), ``_bias`` (mean signed gap, simulation minus analysis) and, for the
        readings ``lower`` and ``formula``: ``_gap_{reading}`` (its largest gap to the simulation),
        ``_diff_{reading}`` (its largest difference from the default analysis) and ``_mean_gap_{reading}``.
    """
    out = {f"{prefix}_gap_where": where(points.loc[points["gap"].abs().idxmax()]),
           f"{prefix}_dmin": int(points["dmin"].min()), f"{prefix}_mean_gap": float(points["gap"].abs().mean()),
           f"{prefix}_bias": float(points["gap"].mean())}
    for name in ("lower", "formula"):
        out |= {f"{prefix}_gap_{name}": float((points["sim"] - points[name]).abs().max()),
                f"{prefix}_diff_{name}": float((points["analysis"] - points[name]).abs().max()),
                f"{prefix}_mean_gap_{name}": float((points["sim"] - points[name]).abs().mean())}
    return out


def argmaxes(util: pd.DataFrame, panel: str) -> tuple[str, str]:
    """The simulated argmax of each (data set, metric) series of a panel of :func:`utility_table`, as text
    (``"6 (zipf F1), ..."``), and the analysis' argmaxes (``"6"``, several if the series differ)."""
    sims, ans = [], set()
    for (dist, metric), s in util[util["panel"] == panel].groupby(["dist", "metric"], sort=False):
        sims.append(f"{s.loc[s['sim'].idxmax(), 'x']:,} ({dist} {metric.upper()})")
        ans.add(s.loc[s["analysis"].idxmax(), "x"])
    return ", ".join(sims), ", ".join(f"{int(v):,}" for v in sorted(ans))


def _panels(panels: Sequence[str]) -> str:
    """``"(a), (c)"``, or ``"none"``."""
    return ", ".join(f"({p})" for p in panels) or "none"


def figure2_findings(ident: pd.DataFrame, setting: Mapping, *, repetitions: int) -> dict:
    """The numbers the text quotes about Figure 2.

    Parameters
    ----------
    ident : pandas.DataFrame
        :func:`identification_table` of the figure's three panels.
    setting : mapping
        Its default setting (:func:`ldp.analysis.validation_setting`: ``n``, ``m``, ``epsilon``).
    repetitions : int, keyword-only
        Runs per point.

    Returns
    -------
    dict
        :func:`gaps` (``validation_fig2_*``), ``validation_reps``, ``validation_fig2_n`` and ``_n_text`` (the
        caption's and the text's default ``n``), ``_found_sim`` and ``_found_analysis`` (top values found at the
        default setting, simulated and predicted) and ``_se_max`` (the largest standard error of a rate).
    """
    at = (ident["n"] == setting["n"]) & (ident["m"] == setting["m"]) & np.isclose(ident["epsilon"], setting["epsilon"])
    default = ident[at & (ident["panel"] == ident.loc[at, "panel"].min())]  # the default setting, in one panel
    return gaps(ident, "validation_fig2", where_identification) | {
        "validation_reps": int(repetitions), "validation_fig2_n": int(setting["n"]),
        "validation_fig2_n_text": int(validation_setting("identification", reading="text")["n"]),
        "validation_fig2_found_sim": float(default["sim"].sum()),
        "validation_fig2_found_analysis": float(default["analysis"].sum()),
        "validation_fig2_se_max": float(0.5 / np.sqrt(repetitions))}


def independence_table(panels: Mapping[str, tuple[str, pd.DataFrame]], k: int) -> pd.DataFrame:
    """Whether the top-``k`` values are identified independently of each other (section 4.2.1), per setting.

    In each run, the count of the top ``k`` values PEM identifies is a sum of ``k`` indicators.  Were they
    independent with the rates the runs show, ``r_j``, its variance over the runs would be
    ``R / (R - 1) * sum_j r_j (1 - r_j)`` (``R`` runs; the factor matches the sample variance); the observed
    variance is the sample variance of the counts.  "If one value has been identified as a heavy hitter, the
    probability that another one is identified will be slightly lower": a ratio below 1.

    Parameters
    ----------
    panels : mapping of str to (str, pandas.DataFrame)
        As :func:`identification_table`'s (the grid's rows, run with ``rank_depth = k``).
    k : int
        Values tracked.

    Returns
    -------
    pandas.DataFrame
        ``panel, axis, level, n, m, epsilon, runs, found_mean, var_observed, var_independent``, one row per
        (panel, setting).
    """
    rows = []
    for panel, (axis, df) in panels.items():
        for (n, m, eps), grp in df.groupby(["n", "m", "epsilon"], sort=False):
            hits = np.zeros((len(grp), k))
            for i, text in enumerate(grp["found_ranks"]):
                hits[i, [r for r in json.loads(text) if r < k]] = 1.0
            runs, count, rate = len(grp), hits.sum(axis=1), hits.mean(axis=0)
            rows.append({"panel": panel, "axis": axis, "level": {"n": n, "m": m, "epsilon": eps}[axis], "n": n,
                         "m": m, "epsilon": eps, "runs": runs, "found_mean": float(count.mean()),
                         "var_observed": float(count.var(ddof=1)) if runs > 1 else np.nan,
                         "var_independent": float((rate * (1 - rate)).sum() * runs / (runs - 1)) if runs > 1
                         else np.nan})
    return pd.DataFrame(rows)


def identification_summary(ident: pd.DataFrame) -> pd.DataFrame:
    """Per (panel, setting): the top values found, simulated and predicted, and the largest gap (3 decimals)."""
    return ident.groupby(["panel", "setting", "etas"], sort=False).agg(
        found_sim=("sim", "sum"), found_analysis=("analysis", "sum"),
        max_abs_gap=("gap", lambda g: g.abs().max())).reset_index().round(3)


def utility_wide_table(util: pd.DataFrame) -> pd.DataFrame:
    """:func:`utility_table` wide: per (panel, level) the simulated and predicted F1 and NCR of each data set."""
    table = util.pivot_table(index=["panel", "x"], columns=["dist", "metric"], values=["sim", "analysis"], sort=False)
    return table.set_axis([" ".join(c) for c in table.columns], axis=1).reset_index().round(3)  # flat headers


def _asymmetry(util: pd.DataFrame, panel: str, center: float) -> float:
    """The analysis' largest ``|U(center + d) - U(center - d)|`` over the series of a panel (0 if no mirror)."""
    series = [s.set_index("x")["analysis"] for _, s in util[util["panel"] == panel].groupby(["dist", "metric"])]
    return float(max((abs(s[x] - s[2 * center - x]) for s in series for x in s.index
                      if x > center and 2 * center - x in s.index), default=0.0))


def figure3_findings(util: pd.DataFrame, lower: Sequence[str], *, n: int, bits: int) -> dict:
    """The numbers the text quotes about Figure 3.

    Parameters
    ----------
    util : pandas.DataFrame
        :func:`utility_table` of its panels (a) rounds ``g``, (b) ``eta[1]``, (c) ``n[1]``.
    lower : sequence of str
        The panels that draw the ``"lower"`` reading (:func:`ldp.book.chapters.c05_validation.utility.lower_panels`).
    n : int, keyword-only
        Users (panel (c) is symmetric about ``n // 2``).
    bits : int, keyword-only
        The bits after ``gamma`` (panel (b) is symmetric about ``bits // 2``).

    Returns
    -------
    dict
        :func:`gaps` (``validation_fig3_*``), ``_lower_panels``, ``_diff_lower_where``, the mean signed gap per
        data set (``_bias_zipf``, ``_bias_z20``), the largest gap per panel (``_gap_a`` ...), ``validation_fig3_n``;
        panel (a)'s most rounds (``validation_fig3a_gmax``, ``_dmin``), its steps and rises, the analysis' overshoot
        there (``_over_last``, with ``"lower"``: ``_over_last_lower``, ``_over_last_where``); per panel the
        argmaxes (``validation_fig3{a,b,c}_best_sim``, ``_best_analysis``) and for (b), (c) the analysis'
        asymmetry ``_asym_analysis``.
    """
    out = gaps(util, "validation_fig3", where_utility)
    out["validation_fig3_lower_panels"] = _panels(lower)
    out["validation_fig3_diff_lower_where"] = where_utility(util.loc[(util["analysis"] - util["lower"]).abs().idxmax()])
    out |= {f"validation_fig3_bias_{'z20' if dist != 'zipf' else 'zipf'}": float(g["gap"].mean())
            for dist, g in util.groupby("dist")}
    out |= {f"validation_fig3_gap_{p}": float(g["gap"].abs().max()) for p, g in util.groupby("panel")}
    a = util[util["panel"] == "a"]
    last = a[a["x"] == a["x"].max()]  # the most rounds: the smallest domains
    i_last = (last["analysis"] - last["sim"]).idxmax()
    steps = [np.diff(s.sort_values("x")["sim"].to_numpy()) for _, s in a.groupby(["dist", "metric"], sort=False)]
    out |= {"validation_fig3_n": int(n), "validation_fig3a_gmax": int(a["x"].max()),
            "validation_fig3a_dmin": int(last["dmin"].min()),
            "validation_fig3a_rises": int(sum((s > 0).sum() for s in steps)),
            "validation_fig3a_steps": int(sum(len(s) for s in steps)),
            "validation_fig3a_over_last": float((last["analysis"] - last["sim"]).max()),
            "validation_fig3a_over_last_lower": float(last.loc[i_last, "lower"] - last.loc[i_last, "sim"]),
            "validation_fig3a_over_last_where": f"{last.loc[i_last, 'dist']} {last.loc[i_last, 'metric'].upper()}"}
    for panel in "abc":
        out[f"validation_fig3{panel}_best_sim"], out[f"validation_fig3{panel}_best_analysis"] = argmaxes(util, panel)
    for panel, center in (("b", bits // 2), ("c", n // 2)):  # the analysis is symmetric: |U(c + d) - U(c - d)|
        out[f"validation_fig3{panel}_asym_analysis"] = _asymmetry(util, panel, center)
    return out


def figure4_findings(util: pd.DataFrame, panels: Mapping[str, tuple[str, pd.DataFrame]], setting: Mapping,
                     lower: Sequence[str], *, drop_top: int) -> dict:
    """The numbers the text quotes about Figure 4.

    Parameters
    ----------
    util : pandas.DataFrame
        :func:`utility_table` of ``panels``.
    panels : mapping of str to (str, pandas.DataFrame)
        Panel -> (axis, the grid's rows), as given to :func:`utility_table`.
    setting : mapping
        The default setting (:func:`ldp.analysis.validation_setting`: ``n``, ``m``, ``epsilon``, ``k``).
    lower : sequence of str
        The panels that draw the ``"lower"`` reading.
    drop_top : int, keyword-only
        The values zipf(-20) drops.

    Returns
    -------
    dict
        :func:`gaps` (``validation_fig4_*``), ``_lower_panels``; the optimizer's configurations
        (``_default_etas`` at the default setting, ``_n_configs`` over the grid); panel (a)'s F1 at its smallest
        and largest ``n`` for both data sets (``_a_lo_n``, ``_a_hi_n``, ``_a_lo_zipf``, ``_a_lo_z20``,
        ``_a_hi_zipf``, ``_a_hi_z20``); at the point with the largest gap in standard errors, its data set
        (``_worst_dist``) and the frequencies of ranks ``k`` and ``k + 1`` there (``_worst_fk``, ``_worst_fk1``).
    """
    n, m, k = setting["n"], setting["m"], setting["k"]
    out = gaps(util, "validation_fig4", where_utility)
    out["validation_fig4_lower_panels"] = _panels(lower)
    f1 = util[util["metric"] == "f1"]
    at = f1[(f1["n"] == n) & (f1["m"] == m) & (f1["epsilon"] == setting["epsilon"])]
    a4 = f1[f1["panel"] == "a"].pivot_table(index="x", columns="dist", values="sim")  # zipf against zipf(-20), (a)
    w = util.loc[util["z"].abs().idxmax()]  # the point furthest from the analysis, in standard errors
    rows = panels[w["panel"]][1]
    row = rows[(rows["n"] == w["n"]) & (rows["m"] == w["m"]) & (rows["epsilon"] == w["epsilon"])
               & (rows["dataset_drop_top"] == (drop_top if w["dist"] != "zipf" else 0))].iloc[0]
    f_top = run_config(row)[1].top_frequencies(k + 1)
    default_etas = at["etas"].iloc[0] if len(at) else str(PEM(setting["epsilon"], k, m).config(n).etas)
    lo, hi = a4.iloc[0], a4.iloc[-1]
    return out | {"validation_fig4_default_etas": default_etas, "validation_fig4_n_configs": int(f1["etas"].nunique()),
                  "validation_fig4_a_lo_n": int(a4.index.min()), "validation_fig4_a_hi_n": int(a4.index.max()),
                  "validation_fig4_a_lo_zipf": float(lo["zipf"]), "validation_fig4_a_lo_z20": float(lo.iloc[1]),
                  "validation_fig4_a_hi_zipf": float(hi["zipf"]), "validation_fig4_a_hi_z20": float(hi.iloc[1]),
                  "validation_fig4_worst_dist": w["dist"], "validation_fig4_worst_fk": float(f_top[k - 1]),
                  "validation_fig4_worst_fk1": float(f_top[k])}


def configurations_table(util: pd.DataFrame) -> pd.DataFrame:
    """The configuration PEM ran at each point of :func:`utility_table`: ``panel, n, m, epsilon, etas``."""
    f1 = util[util["metric"] == "f1"]
    return f1.drop_duplicates(["panel", "x"])[["panel", "n", "m", "epsilon", "etas"]].reset_index(drop=True)


def mirror_pairs(series: pd.DataFrame, center: float) -> pd.DataFrame:
    """Each level ``x`` above ``center`` against its mirror ``2 center - x``, per series (Figure 3's symmetry).

    Parameters
    ----------
    series : pandas.DataFrame
        ``series, x, y, se`` (the layout of :func:`ldp.reporting.measures.series`).
    center : float
        The level the series should be symmetric about.

    Returns
    -------
    pandas.DataFrame
        ``series, x, mirror, y, y_mirror, se`` (``se``: of the difference), empty if no level has its mirror.
    """
    rows = []
    for name, grp in series.groupby("series", sort=False):
        by_x = {float(x): (y, se) for x, y, se in zip(grp["x"], grp["y"], grp["se"])}
        rows += [{"series": name, "x": x, "mirror": 2 * center - x, "y": y, "y_mirror": by_x[2 * center - x][0],
                  "se": math.hypot(se, by_x[2 * center - x][1])}
                 for x, (y, se) in by_x.items() if x > center and 2 * center - x in by_x]
    return pd.DataFrame(rows, columns=["series", "x", "mirror", "y", "y_mirror", "se"])


def distribution_ends(points: pd.DataFrame, *, favourable: bool, half: bool = False,
                      pair: Sequence[str] = ("zipf", "zipf(-20)")) -> pd.DataFrame:
    """The two data sets of ``pair`` against each other at each panel's unfavourable end (small n, large m, small
    ε; the first of ``pair`` as ``a``) or favourable end (the second as ``a``), section 5.3.

    Parameters
    ----------
    points : pandas.DataFrame
        ``panel, axis, metric, x, dist, simulated_mean, se`` (Figure 4's points).
    favourable : bool
        The favourable end (large n, small m, large ε) instead of the unfavourable one.
    half : bool
        Every level of the panel's half on that side, not only its end.
    pair : two str
        The data sets.

    Returns
    -------
    pandas.DataFrame
        ``panel, axis, metric, x, a, se_a, b, se_b``.
    """
    first, second = (pair[1], pair[0]) if favourable else (pair[0], pair[1])
    rows = []
    for (panel, axis, metric), grp in points.groupby(["panel", "axis", "metric"]):
        xs = sorted(grp["x"].unique())
        xs = xs if (axis == "m") == favourable else xs[::-1]  # from the extreme inwards
        for x in xs[:len(xs) // 2 if half else 1]:
            at = grp[grp["x"] == x].set_index("dist")
            if {first, second} <= set(at.index):
                rows.append({"panel": panel, "axis": axis, "metric": metric, "x": x,
                             "a": at.loc[first, "simulated_mean"], "se_a": at.loc[first, "se"],
                             "b": at.loc[second, "simulated_mean"], "se_b": at.loc[second, "se"]})
    return pd.DataFrame(rows, columns=["panel", "axis", "metric", "x", "a", "se_a", "b", "se_b"])



def round_model_utility(config: PEMConfig, epsilon: float, freqs, *, n: float, metric: str = "f1",
                        zero_below_k: bool = True) -> float:
    """Eq. (4)'s utility in a normal approximation of PEM's rounds, with the values below rank k at frequency zero
    (eq. (5)'s assumption, section 4.2.3) or at their own frequencies.

    In round i, n[i] users answer OLH reports on |D_i| candidate prefixes and PEM keeps the |C_i| largest
    estimates.  A value of frequency f has an estimate with eq. (2)'s mean f and variance
    ``p_f (1 - p_f) / (n[i] (p - q)^2)``, ``p_f = p f + q (1 - f)``; the round keeps what lies above the threshold
    t at which the expected number of estimates above t is |C_i|.  A value still present with probability s
    counts s times; the other candidates are of frequency zero.  A value's chance of being found is the product
    over the rounds of its chance of clearing t.  With ``zero_below_k`` the values below rank k are of frequency
    zero, as eq. (5) assumes (this reproduces eq. (4) closely); without it they keep their own frequencies and
    compete with the heavy hitters of similar frequency, which eq. (5) leaves out.  Values share no prefix (random
    m-bit values: section 5's data), so a prefix carries the frequency of its one value.

    Parameters
    ----------
    config : ldp.analysis.PEMConfig
        PEM's rounds (``group_fractions``, ``cand_sizes``, ``domain_sizes``, ``k``).
    epsilon : float
        Privacy budget of each report.
    freqs : array_like
        The frequencies in decreasing order (the top k and as many below as should compete).
    n : float
        Users.
    metric : {"f1", "ncr"}
        The weights of eq. (4).
    zero_below_k : bool
        The values below rank k at frequency zero.

    Returns
    -------
    float
        ``sum_j w_j prod_i P(estimate of v_j above t_i)``.
    """
    k = config.k
    f = np.asarray(freqs, dtype=float)[: max(len(freqs), k)].copy()
    if zero_below_k:
        f[k:] = 0.0
    p, q = olh_pq(epsilon)
    alive = np.ones_like(f)
    for fraction, kept, domain in zip(config.group_fractions or (), config.cand_sizes or (), config.domain_sizes):
        users = n * fraction
        p_f = p * f + q * (1 - f)
        sd, sd0 = np.sqrt(p_f * (1 - p_f) / users) / (p - q), math.sqrt(q * (1 - q) / users) / (p - q)
        zeros = max(float(domain) - alive.sum(), 0.0)

        def above(t, alive=alive, sd=sd, sd0=sd0, zeros=zeros, kept=kept):
            return float((alive * norm.sf((t - f) / sd)).sum() + zeros * norm.sf(t / sd0) - kept)

        alive = alive * norm.sf((brentq(above, -1.0, 2.0) - f) / sd)
    return float(utility_weights(k, metric) @ alive[:k])
