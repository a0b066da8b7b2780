"""The readers claims share: standard errors, PEM against its rivals, series, the setting a claim needs.

A claim's ``measure`` (:class:`ldp.book.claims.claim.Claim`) reads the saved results
and returns the table its rule decides on.  The figure modules of :mod:`ldp.book.chapters`
build their measures from these pieces, so that two figures that say the same kind
of thing ("PEM at least the best other", "falls with k") are measured alike: the
columns :func:`pem_vs_best_other` returns are those of
:class:`~ldp.book.claims.rules.OrderingHolds`, :func:`series` those of
:class:`~ldp.book.claims.rules.Monotone` and :class:`~ldp.book.claims.rules.ArgmaxAt`,
:func:`one` those of :class:`~ldp.book.claims.rules.WithinTolerance`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .claim import NotCovered, NotRun
from .store import ResultStore

__all__ = ["K_FIXED", "OTHERS", "METRIC_NAMES", "X_NAMES", "g", "require", "score_se", "eval_points",
           "pem_vs_best_other", "series", "one", "aol_note", "not_run"]

#: k of Figures 5, 7(a), 8 and 9 (section 6): the standard-error floor of a mean F1 uses it where k is not a column
K_FIXED = 16
#: PEM's rivals in the paper's evaluation
OTHERS = ("MCM", "SPM")
#: a metric's name in a point's label
METRIC_NAMES = {"f1": "F1", "ncr": "NCR"}
#: a varied parameter's name in a point's label
X_NAMES = {"epsilon": "ε", "k": "k", "threshold": "θ", "m": "m"}


def g(x) -> str:
    """A number as a label prints it (``f"{x:g}"``)."""
    return f"{float(x):g}"


def require(values, wanted, what: str) -> None:
    """Raise :class:`NotCovered` unless every ``wanted`` value is among ``values`` (floats to 1e-9).

    Parameters
    ----------
    values : array_like
        The values the run has (e.g. a figure's ``epsilon`` column).
    wanted : float or sequence of float
        The values the claim is about.
    what : str
        The parameter's name for the message (``"ε"``).
    """
    have = np.asarray(pd.unique(pd.Series(values).dropna()), dtype=float)
    for w in np.atleast_1d(wanted):
        if not np.any(np.isclose(have, float(w), rtol=1e-9, atol=1e-12)):
            raise NotCovered(f"{what} = {g(w)} is not among this run's values "
                             f"({', '.join(g(v) for v in sorted(have)) or 'none'})")


def score_se(std, runs, k) -> np.ndarray:
    """Standard error of a mean F1 / NCR over ``runs`` runs, floored at one heavy hitter of ``k`` in one run.

    Without the floor a point where every run scored the same (std 0) would
    count as exact, and any difference from it as infinitely many standard errors.
    """
    runs = np.asarray(runs, dtype=float).clip(min=1)
    sem = np.asarray(std, dtype=float) / np.sqrt(runs)
    return np.maximum(np.nan_to_num(sem, nan=0.0), 1.0 / (np.asarray(k, dtype=float) * runs))


def eval_points(store: ResultStore, name: str) -> pd.DataFrame:
    """Figure ``name``'s rows (``mean, std, runs`` per point) with ``se``, the standard error of each mean.

    The floor of :func:`score_se` uses the figure's ``k`` column, else :data:`K_FIXED`.
    """
    df = store.figure(name).copy()
    df["se"] = score_se(df["std"], df["runs"], df["k"] if "k" in df.columns else K_FIXED)
    return df


def aol_note(df: pd.DataFrame) -> str:
    """The note of a claim on the three data sets when AOL is not among them."""
    return "" if "AOL" in set(df["dataset"]) else "AOL is not in this build (its data file is absent)"


def pem_vs_best_other(df: pd.DataFrame, x: str, *, metrics=("f1", "ncr"), datasets=None,
                      others: Sequence[str] = OTHERS) -> pd.DataFrame:
    """PEM against the best of ``others`` at every (data set, metric, ``x``) point of :func:`eval_points`'s frame.

    Returns
    -------
    pandas.DataFrame
        ``point, dataset, metric, x, a, se_a, b, se_b, others_min, best_other``: ``a`` PEM's mean,
        ``b`` the best rival's, ``others_min`` the worst rival's (for the ceiling exclusion of
        :class:`~ldp.book.claims.rules.OrderingHolds`).
    """
    rows = []
    sub = df[df["metric"].isin(metrics)]
    if datasets is not None:
        sub = sub[sub["dataset"].isin(datasets)]
    for (ds, metric, xv), grp in sub.groupby(["dataset", "metric", x], sort=False):
        grp = grp.set_index("protocol")
        if "PEM" not in grp.index or not set(others) & set(grp.index):
            continue
        rivals = grp.loc[[p for p in others if p in grp.index]]
        best = rivals["mean"].idxmax()
        rows.append({"point": f"{ds}, {METRIC_NAMES[metric]}, {X_NAMES[x]} = {g(xv)}", "dataset": ds,
                     "metric": metric, "x": float(xv), "a": grp.loc["PEM", "mean"], "se_a": grp.loc["PEM", "se"],
                     "b": rivals.loc[best, "mean"], "se_b": rivals.loc[best, "se"],
                     "others_min": rivals["mean"].min(), "best_other": best})
    return pd.DataFrame(rows, columns=["point", "dataset", "metric", "x", "a", "se_a", "b", "se_b", "others_min",
                                       "best_other"])


def series(df: pd.DataFrame, series_cols, x: str, y: str, se: str) -> pd.DataFrame:
    """``df`` as ``series, x, y, se`` rows, the series named by joining ``series_cols`` (``"URL, PEM"``)."""
    if df.empty:  # nothing to decide on: the rule says so
        return pd.DataFrame(columns=["series", "x", "y", "se"])
    out = df.assign(series=df[list(series_cols)].astype(str).agg(", ".join, axis=1))
    return out.rename(columns={x: "x", y: "y", se: "se"})[["series", "x", "y", "se"]]


def one(point: str, value: float, target: float) -> pd.DataFrame:
    """One ``point, value, target`` row."""
    return pd.DataFrame({"point": [point], "value": [value], "target": [target]})


def not_run(reason: str):
    """A measure for a claim the book does not run: it raises :class:`~ldp.book.claims.claim.NotRun` with ``reason``."""
    def measure(store):
        raise NotRun(reason)
    return measure
