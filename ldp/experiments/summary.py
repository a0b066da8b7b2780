"""Summaries of a grid's rows: mean, standard deviation and error of the mean per point; identification rates."""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["summarize", "identification_rates", "READINGS", "dist_name", "level_label", "binomial_se",
           "run_config", "identification_table", "utility_table", "summary_value", "whole_value_report",
           "predicted_variance", "engine_comparison", "dataset_sizes",
           "final_round_release", "variance_table", "ordered_pairs", "mirror_pairs", "distribution_ends"]

_NOT_PARAMS = {"rep", "f1", "ncr", "var", "n_found", "n_true", "f1_topk", "wall_time", "found_ranks", "root_seed",
               "seed_key", "data_seed_key", "run_spec"}


def _default_by(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c not in _NOT_PARAMS]


def summarize(df: pd.DataFrame, by: Sequence[str] | str | None = None,
              metrics: Sequence[str] | str = ("f1", "ncr")) -> pd.DataFrame:
    """Mean, standard deviation, count and standard error per point.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows from :func:`run_grid`.
    by : str or sequence of str, optional
        Grouping columns (default: every parameter column, i.e. one group per
        point).  Groups keep their order of first appearance; NaN is a level.
    metrics : str or sequence of str
        Columns to summarise, e.g. ``["f1", "ncr", "var"]``.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then for each metric ``<metric>_mean``,
        ``<metric>_std`` (sample standard deviation, ddof=1), ``<metric>_count``
        (non-missing runs) and ``<metric>_sem`` (std / sqrt(count), the error
        bar of the mean).
    """
    by = _default_by(df) if by is None else ([by] if isinstance(by, str) else list(by))
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    for c in [*by, *metrics]:
        if c not in df.columns:
            raise ValueError(f"column {c!r} is not in the results; columns: {', '.join(map(str, df.columns))}")
    if not by:
        raise ValueError("by must name at least one column")
    g = df.groupby(by, sort=False, dropna=False)[metrics]
    mean, std, count = g.mean(), g.std(ddof=1), g.count()
    out = {}
    for mname in metrics:
        out[f"{mname}_mean"] = mean[mname]
        out[f"{mname}_std"] = std[mname]
        out[f"{mname}_count"] = count[mname]
        out[f"{mname}_sem"] = std[mname] / np.sqrt(count[mname])
    return pd.DataFrame(out).reset_index()


def identification_rates(df: pd.DataFrame, by: Sequence[str] | str | None = None) -> pd.DataFrame:
    """Identification probability of the dataset's r-th most frequent value, per group.

    Needs a grid run with ``rank_depth > 0`` (section 5.1, eq. (5) is
    the analytical counterpart).

    Parameters
    ----------
    df : pandas.DataFrame
        Rows from :func:`run_grid` with a ``found_ranks`` column.
    by : str or sequence of str, optional
        Grouping columns (default: every parameter column).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``rank`` (0-based), ``rate`` (fraction of runs that
        identified that value), ``runs`` and ``sem`` (binomial standard error).
    """
    if "found_ranks" not in df.columns:
        raise ValueError("the results have no 'found_ranks' column: run the grid with rank_depth > 0")
    by = _default_by(df) if by is None else ([by] if isinstance(by, str) else list(by))
    depth = int(json.loads(df["run_spec"].iloc[0])["rank_depth"])
    hits = np.zeros((len(df), depth))
    for i, text in enumerate(df["found_ranks"]):
        hits[i, json.loads(text)] = 1.0
    wide = pd.concat([df[by].reset_index(drop=True), pd.DataFrame(hits, columns=range(depth))], axis=1)
    g = wide.groupby(by, sort=False, dropna=False)
    rate = g[list(range(depth))].mean()
    rate["runs"] = g.size()
    rate["_group"] = np.arange(len(rate))
    long = rate.reset_index().melt(id_vars=[*by, "runs", "_group"], var_name="rank", value_name="rate")
    long = long.sort_values(["_group", "rank"], kind="stable").drop(columns="_group").reset_index(drop=True)
    long["rank"] = long["rank"].astype(np.int64)
    long["sem"] = np.sqrt(long["rate"] * (1 - long["rate"]) / long["runs"])
    return long[[*by, "rank", "rate", "runs", "sem"]]


# --------------------------------------------------------------------------------------------------
# Section 5 (chapter 05): simulation against the analysis of section 4.2, point by point
# --------------------------------------------------------------------------------------------------

#: the three readings of eq. (5) the validation compares (keyword arguments of ``ldp.analysis``):
#: the default (the text's k - j + 1 slots, the paper's N[i]), the lower-ranked heavy values as
#: competitors, and the formula as printed
READINGS: dict[str, dict[str, str]] = {"analysis": {}, "lower": {"competitors": "lower"},
                                       "formula": {"slots": "formula"}}


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
    from ..protocols import PEM
    from .run import row_dataset

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
    from ..analysis import identification_probability

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
    from ..analysis import utility_score

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


# --------------------------------------------------------------------------------------------------
# Section 6 (chapter 06): look-ups, the released estimates' variance, the engine check, data sets
# --------------------------------------------------------------------------------------------------

def summary_value(summary: pd.DataFrame, dataset: str, protocol: str, col: str, value, metric: str = "f1",
                  stat: str = "mean") -> float:
    """One value of a :func:`summarize` frame, e.g. PEM's mean F1 on URL at ``epsilon = 4`` (NaN if absent)."""
    sel = summary[(summary["dataset"] == dataset) & (summary["protocol"] == protocol) & (summary[col] == value)]
    return float(sel[f"{metric}_{stat}"].iloc[0]) if len(sel) else float("nan")


def whole_value_report(protocol, n: int) -> tuple[float, float]:
    """Budget and number of users of the whole-value report that gives a protocol's released estimates.

    Read from the protocol's public plan (:meth:`~ldp.protocols.HeavyHitterProtocol.plan`): the groups
    whose questions include the whole ``m``-bit value.  MCM and SPM (budget split, section 3):
    every user, at ``epsilon / 2`` and ``epsilon / 3``; PEM: its last group, at the full ``epsilon``.

    Returns
    -------
    (float, float)
        The report's ``epsilon`` and the users who send it (``n`` when every group does).
    """
    plan = protocol.plan(n, rng=0)
    groups = [(frac, q) for frac, qs in zip(plan.fractions, plan.questions) for q in qs
              if q.start == 0 and q.stop == plan.m and not q.channels]  # not MCM's one block of a short value
    if not groups:
        raise ValueError(f"{protocol!r} has no whole-value report in its plan")
    users = n if len(groups) == len(plan.fractions) else sum(frac for frac, _ in groups) * n
    return groups[0][1].epsilon, users


def predicted_variance(protocol, n: int, frequencies=None) -> float:
    """Variance of a released count estimate, scaled to ``n`` users (section 6.2.6).

    Without ``frequencies``: eq. (3), OLH's variance for a value nobody holds, of the whole-value
    report (:func:`whole_value_report`), times ``(n / n_g)**2``.  With ``frequencies`` (the true
    top values'), the exact variance of the scaled estimate averaged over them: the holders' own
    reports (``f p (1 - p)`` instead of ``q (1 - q)``) and, when only ``n_g < n`` users report, the
    hypergeometric number of holders among them.
    """
    from ..analysis import olh_pq, olh_variance

    e, n_g = whole_value_report(protocol, n)
    if frequencies is None:
        return float(olh_variance(e, n_g)) * (n / n_g) ** 2  # eq. (3), scaled by n / n_g
    f = np.asarray(frequencies, dtype=float)
    p, q = olh_pq(e)
    oracle = n_g * (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (p - q) ** 2  # Var[I_v] / (p - q)^2, eq. (2)
    sampling = n_g * f * (1 - f) * (n - n_g) / (n - 1)  # hypergeometric count of holders among the n_g
    return float(np.mean((n / n_g) ** 2 * (oracle + sampling)))


def engine_comparison(runs_ref: pd.DataFrame, runs_proto: pd.DataFrame, protocols: Sequence[str]) -> pd.DataFrame:
    """Where one protocol-engine run falls among many count-level runs of the same point.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``method``: the wall times, and per metric (F1, NCR) the protocol engine's value,
        the count-level runs' mean and standard deviation, the z-score and the percentile.
    """
    from scipy import stats

    rows = []
    for meth in protocols:
        ref = runs_ref[runs_ref["protocol"] == meth]
        pro = runs_proto[runs_proto["protocol"] == meth].iloc[0]
        row = {"method": meth, "protocol-engine seconds": pro["wall_time"],
               "counts-engine seconds (mean)": ref["wall_time"].mean()}
        for metric in ("f1", "ncr"):
            x, ref_m = float(pro[metric]), ref[metric].to_numpy()
            sd = ref_m.std(ddof=1)
            z = (x - ref_m.mean()) / sd if sd > 0 else (0.0 if x == ref_m.mean() else np.inf)
            row |= {f"{metric} protocol": x, f"{metric} counts mean": ref_m.mean(), f"{metric} counts std": sd,
                    f"{metric} z": z, f"{metric} percentile": stats.percentileofscore(ref_m, x, kind="mean")}
        rows.append(row)
    return pd.DataFrame(rows).set_index("method")


def dataset_sizes(runs: pd.DataFrame, k: int = 16) -> pd.DataFrame:
    """Users, distinct values and ``k``-th largest frequency of each data set of a grid.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, n, n_distinct, f_<k>``, one row per data set in the grid's order.
    """
    from .run import row_dataset

    rows = []
    for name in dict.fromkeys(runs["dataset"]):
        ds = row_dataset(runs[runs["dataset"] == name].iloc[0])
        rows.append({"dataset": name, "n": int(ds.n), "n_distinct": int(ds.n_distinct),
                     f"f_{k}": float(ds.top_frequencies(k)[-1])})
    return pd.DataFrame(rows)


def final_round_release(protocol, ds, *, theta: float, rng) -> dict[str, float]:
    """One run of a threshold-mode ``protocol`` on ``ds``: its final step and the false positives it predicts.

    Returns ``n_users`` and ``n_candidates`` of the last round, ``fp_expected``
    (candidates nobody holds whose support passes the release test: the
    binomial tail of a non-holder's support ``Bin(N, q)`` beyond the support
    that gives an estimate of ``theta n`` under eq. (2), times the candidates)
    and ``theta_sigmas`` (``theta`` in standard deviations of a non-holder's
    frequency estimate).
    """
    from scipy import stats

    last = protocol.run(ds, rng=rng, engine="counts").rounds[-1]
    o = last.question.oracle()
    N, D = last.n_users, last.n_candidates
    t_sup = np.ceil(N * o.q + theta * N * (o.p - o.q))  # smallest support with estimate >= theta n, eq. (2)
    sigma_freq = np.sqrt(N * o.q * (1 - o.q)) / (o.p - o.q) / N
    return {"n_users": int(N), "n_candidates": int(D), "fp_expected": float(D * stats.binom.sf(t_sup - 1, N, o.q)),
            "theta_sigmas": float(theta / sigma_freq)}


def variance_table(summary: pd.DataFrame, protocols: Mapping[tuple[str, float], object], n: int,
                   top_frequencies) -> pd.DataFrame:
    """Figure 9's points: observed Var with eq. (3) and the exact variance of each protocol's released estimate.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ldp.experiments.summarize` rows of one data set by ``protocol, epsilon`` with ``var``.
    protocols : mapping
        ``(protocol name, epsilon)`` -> the protocol object that ran (its plan gives the
        whole-value report: :func:`ldp.experiments.summary.whole_value_report`).
    n : int
        Users of the data set.
    top_frequencies : array
        The true top-k frequencies (the exact variance averages over them).

    Returns
    -------
    pandas.DataFrame
        ``summary`` with ``var_pred`` (eq. (3)), ``var_full`` (exact), ``obs/pred`` and ``obs/full``.
    """
    out = summary.copy()
    keys = list(zip(out["protocol"], out["epsilon"]))
    out["var_pred"] = [predicted_variance(protocols[key], n) for key in keys]
    out["var_full"] = [predicted_variance(protocols[key], n, top_frequencies) for key in keys]
    out["obs/pred"] = out["var_mean"] / out["var_pred"]
    out["obs/full"] = out["var_mean"] / out["var_full"]
    return out


def ordered_pairs(points: pd.DataFrame, at: Sequence[str], z: float, *, by: str = "f1", then: str = "ncr",
                  label: str = "") -> pd.DataFrame:
    """Every pair of protocols whose ``by`` differs beyond ``z`` standard errors at a point: their ``then``.

    ``points`` has ``protocol, metric, mean, se`` and the point's columns ``at`` (e.g. ``dataset,
    epsilon``).  Returns ``point, a, se_a, b, se_b``: ``a`` the ``then`` mean of the protocol better
    in ``by``, ``b`` the other's (a point reads ``"<at[0]>, <label> = <at[1]>: <better> over <other>"``).
    """
    rows = []
    for key, grp in points.groupby(list(at)):
        grp = grp.pivot_table(index="protocol", columns="metric", values=["mean", "se"])
        for a, b in combinations(grp.index, 2):
            d = grp.loc[a, ("mean", by)] - grp.loc[b, ("mean", by)]
            if abs(d) > z * math.hypot(grp.loc[a, ("se", by)], grp.loc[b, ("se", by)]):  # beyond noise
                hi, lo = (a, b) if d > 0 else (b, a)
                rows.append({"point": f"{key[0]}, {label or at[1]} = {float(key[1]):g}: {hi} over {lo}",
                             "a": grp.loc[hi, ("mean", then)], "se_a": grp.loc[hi, ("se", then)],
                             "b": grp.loc[lo, ("mean", then)], "se_b": grp.loc[lo, ("se", then)]})
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])


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
