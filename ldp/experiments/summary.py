"""Summaries of a grid's rows: mean, standard deviation and error of the mean per point; identification rates."""
from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["summarize", "identification_rates"]

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



















# --------------------------------------------------------------------------------------------------
# Section 6 (chapter 06): look-ups, the released estimates' variance, the engine check, data sets
# --------------------------------------------------------------------------------------------------



















