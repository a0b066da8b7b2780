"""TODO docstring."""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ....analysis import identification_probability, utility_score
from ....experiments import identification_rates, row_dataset, summarize
from ....protocols import PEM

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

