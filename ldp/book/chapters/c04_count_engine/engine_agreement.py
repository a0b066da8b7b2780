"""The count-level engine against the protocol engine (chapter 04, not a paper figure): supports and F1.

The records come from :func:`ldp.book.chapters.c04_count_engine.compute.engine_records`: per
run and engine, the supports of a few probed candidates and the F1 score.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import seaborn.objects as so

from ...plotting import METHOD_STYLE, render
from ...plotting.tables import format_number
from .compute import engine_frame

__all__ = ["NAME", "ENGINES", "frame", "draw", "support_display"]

NAME = "fig-engine-agreement"
ENGINES = {NAME: "both engines at n = 50,000 (100 runs each)"}
_PANELS = (("a", "PEM", 0, "(a) PEM, law 1: round-1 support,\nprefix of the top value"),
           ("b", "SPM", 2, "(b) SPM, law 2: pair support $I_{a_1 b_1}$"),
           ("c", "MCM", 0, "(c) MCM, law 3: block-1 support,\nthe top value's (channel, block)"))
_ENGINES = {"protocol": "protocol engine", "counts": "count engine"}
_NORMAL = "normal, eq. (engine-mix)"


def frame(records: Mapping, theory: Sequence[tuple]) -> pd.DataFrame:
    """The figure's data: ``panel, protocol, series, x, x_right, y, runs``.

    Panels a-c: density histograms (20 common bins; ``x``, ``x_right`` the bin
    edges) of one probed support in both engines, and the normal law of
    eq. (engine-mix) (200 points) where the theory is known; panel d: the
    empirical distribution function of F1 per protocol and engine (its steps).
    """
    return engine_frame(records, theory, panels=[p[:3] for p in _PANELS], labels=_ENGINES, normal=_NORMAL)


def _ecdf_path(g: pd.DataFrame) -> pd.DataFrame:
    """The vertices of an empirical distribution function's steps, from 0 (left of 0) to 1 (right of 1)."""
    x, y = g["x"].to_numpy(), g["y"].to_numpy()
    before = np.r_[0.0, y[:-1]]
    return pd.DataFrame({"x": np.r_[-0.02, np.repeat(x, 2), 1.02], "y": np.r_[0.0, np.c_[before, y].ravel(), 1.0]})


def draw(data: pd.DataFrame):
    """(a)-(c) support histograms of both engines with the normal law; (d) the ECDFs of F1."""
    styles = so.Nominal({_ENGINES["protocol"]: "-", _ENGINES["counts"]: "--", _NORMAL: ":"},
                        order=[*_ENGINES.values(), _NORMAL])
    plots = []
    for panel, name, _, title in _PANELS:
        part = data[data["panel"] == panel]
        hist = part[part["series"] != _NORMAL]
        stairs = pd.concat([hist.assign(order=2 * np.arange(len(hist))),
                            hist.assign(x=hist["x_right"], order=2 * np.arange(len(hist)) + 1)],
                           ignore_index=True).sort_values("order")
        plots.append(so.Plot(stairs, x="x", y="y", linestyle="series")
                     .add(so.Path(color=METHOD_STYLE[name]["color"], linewidth=1.5))
                     .add(so.Line(color="0.5", linewidth=1), data=part[part["series"] == _NORMAL], x="x", y="y",
                          linestyle="series")
                     .scale(linestyle=styles).label(x="support", y="density", title=title, linestyle=""))
    ecdf = data[data["panel"] == "d"]
    steps = (ecdf.groupby(["protocol", "series"], sort=False)[["x", "y"]].apply(_ecdf_path)
             .reset_index(level=[0, 1]).reset_index(drop=True))
    runs = int(ecdf["runs"].iloc[0])
    plots.append(so.Plot(steps, x="x", y="y", color="protocol", linestyle="series").add(so.Path())
                 .scale(color=so.Nominal({p: METHOD_STYLE[p]["color"] for p in dict.fromkeys(ecdf["protocol"])}),
                        linestyle=styles)
                 .limit(x=(-0.02, 1.02))
                 .label(x="F1", y="fraction of runs ≤ F1", title=f"(d) F1 over {runs} runs per engine", color="",
                        linestyle=""))
    return render(plots, height=6.0, grid=(2, 2), ncol=3)


def support_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`ldp.book.chapters.c04_count_engine.compute.support_table` for the page: ``mean ± sd`` columns, then the
    p-values."""
    out = table[["protocol", "support"]].copy()
    for who, label in (("theory", "theory"), ("protocol", "protocol engine"), ("counts", "count engine")):
        out[f"{label}: mean ± sd"] = ["–" if not np.isfinite(mu) else f"{format_number(mu, 4)} ± {format_number(sd)}"
                                      for mu, sd in zip(table[f"{who} mean"], table[f"{who} sd"])]
    p_cols = ["KS p (engines)", "p (protocol mean = theory)", "p (counts mean = theory)"]
    return pd.concat([out, table.reindex(columns=p_cols)], axis=1)
