"""The engine check of chapter 06 (not a paper figure): one protocol-engine run among many count-level runs.

At the paper's scale (synthetic set, n = 10^6), each protocol runs once with the
protocol engine (every user's report made and aggregated) and many times with
the count-level engine that made Figures 5, 6 and 9
(:func:`ldp.book.chapters.c06_evaluation.compute.engine_comparison`).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ...plotting import legend_above, method_scales, render

__all__ = ["NAME", "NAME_AFTER", "ENGINES", "TITLES", "frame", "draw"]

NAME = "fig-eval-engines"
#: the same check for chapter 08's protocols, TreeHist and SFP
NAME_AFTER = "fig-after-engines"
ENGINES = {NAME: "count engine (50 runs) against the protocol engine (1 run)",
           NAME_AFTER: "count engine (50 runs) against the protocol engine (1 run), TreeHist and SFP"}
TITLES = {NAME_AFTER: "Figure A.6's engine check for TreeHist and SFP"}


def frame(runs_ref: pd.DataFrame, check: pd.DataFrame, protocols: Sequence[str], *, rng) -> pd.DataFrame:
    """The figure's data: ``panel, metric, protocol, engine, run, x, y``.

    Per metric (F1: panel a, NCR: b) and protocol (at ``x`` = its row), the count-level runs
    (``x`` jittered across the row by ``rng``, a numpy Generator) and the one protocol-engine run of
    ``check`` (:func:`ldp.book.chapters.c06_evaluation.compute.engine_comparison`).
    """
    data = []
    for metric in ("f1", "ncr"):
        panel = "ab"[metric == "ncr"]
        for i, meth in enumerate(protocols):
            ref = runs_ref.loc[runs_ref["protocol"] == meth, metric].to_numpy()
            data += [pd.DataFrame({"panel": panel, "metric": metric, "protocol": meth, "engine": "counts",
                                   "run": np.arange(ref.size), "x": i + rng.uniform(-0.18, 0.18, ref.size), "y": ref}),
                     pd.DataFrame({"panel": [panel], "metric": metric, "protocol": meth, "engine": "protocol",
                                   "run": 0, "x": float(i), "y": float(check.loc[meth, f"{metric} protocol"])})]
    return pd.concat(data, ignore_index=True)


def draw(data: pd.DataFrame, protocols: Sequence[str], *, title: str):
    """The count-level runs (small markers) and the protocol-engine run (black star) of each protocol, F1 and NCR.

    One row per protocol (named on the left), so that any number of protocols and long names stay readable.
    """
    scales = method_scales(protocols)
    rows = so.Continuous().tick(at=list(range(len(protocols)))).label(
        like=lambda v, _: protocols[int(round(v))] if 0 <= v < len(protocols) else "")
    plots = []
    for panel, metric in (("a", "F1"), ("b", "NCR")):
        part = data[data["panel"] == panel]
        plots.append(so.Plot(part[part["engine"] == "counts"], x="y", y="x", color="protocol", marker="protocol")
                     .add(so.Dot(pointsize=3, alpha=0.45))
                     .add(so.Dot(marker="*", pointsize=12, color="black"), data=part[part["engine"] == "protocol"],
                          x="y", y="x", color=None, marker=None)
                     .scale(color=scales["color"], marker=scales["marker"], y=rows)
                     .limit(x=(-0.03, 1.03), y=(len(protocols) - 0.5, -0.5))
                     .label(y="", x=metric, title=f"({panel}) {metric}, {title}", color="", marker=""))
    fig = render(plots, height=1.2 + 0.32 * len(protocols), legend=None)
    fig.axes[1].set_yticklabels([])
    fig.legends.clear()  # the protocols are named on the axis; the legend says which marker is which engine
    legend_above(fig, extra={"counts engine (runs)": Line2D([], [], color="0.4", marker="o", ms=3, ls="none"),
                             "protocol engine (one run)": Line2D([], [], color="black", marker="*", ms=10, ls="none")})
    return fig
