"""One round of PEM under each reading of eq. (5) against a Monte-Carlo of the model (chapter 03, section 4.2).

Not a paper figure: it shows how much the readings of eq. (5) that the paper
leaves open (the text's or the printed threshold rank, which competitors) move
``P_i(j)``, against a simulation of the model itself
(:func:`ldp.analysis.montecarlo.readings_monte_carlo`).
"""
from __future__ import annotations

import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ...plotting import interval, render, series_colors

__all__ = ["NAME", "ENGINES", "frame", "draw"]

NAME = "fig-pem-readings"
ENGINES = {NAME: "Monte-Carlo of the section 4.2.3 model (ldp.analysis.montecarlo)"}
_LINESTYLES = ("-", "--", ":", "-.")


def frame(mc: pd.DataFrame) -> pd.DataFrame:
    """The figure's data: ``panel`` (a, b, ... in the order of the settings), the Monte-Carlo frame's columns
    with ``se`` replaced by ``monte_carlo_errorbar`` (``2 se``), and one ``analysis <reading>`` column per reading.
    """
    names = [c for c in mc.columns if c.startswith("analysis ")]
    panel = dict(zip(dict.fromkeys(mc["eta"]), "abcdefgh"))
    return mc.assign(panel=mc["eta"].map(panel), monte_carlo_errorbar=2 * mc["se"])[
        ["panel", "eta", "g", "domain_size", "runs", "rank", "monte_carlo", "monte_carlo_errorbar", *names]]


def draw(data: pd.DataFrame):
    """One panel per round size: ``P_i(j)`` under each reading (lines) and the Monte-Carlo (dots, ± 2 SE)."""
    names = [c for c in data.columns if c.startswith("analysis ")]
    d = data.assign(title=[f"({p}) η = {e}\n|D_i| = {D:,}, n/{g}" for p, e, D, g in
                           zip(data["panel"], data["eta"], data["domain_size"], data["g"])])
    lines = d.melt(id_vars=["title", "rank"], value_vars=names, var_name="reading", value_name="P")
    lines["reading"] = lines["reading"].str.removeprefix("analysis ")
    mc = interval(d, "monte_carlo", "monte_carlo_errorbar")
    readings = list(dict.fromkeys(lines["reading"]))
    plot = (so.Plot(lines, x="rank", y="P", color="reading", linestyle="reading")
            .facet(col="title", order=sorted(d["title"].unique()))
            .add(so.Line(linewidth=1.6))
            .add(so.Dot(color="black", pointsize=3), data=mc, x="rank", y="monte_carlo", col="title",
                 color=None, linestyle=None)
            .add(so.Range(color="black"), data=mc, x="rank", ymin="lo", ymax="hi", col="title",
                 color=None, linestyle=None)
            .scale(color=so.Nominal(dict(zip(readings, series_colors(len(readings)))), order=readings),
                   linestyle=so.Nominal(dict(zip(readings, _LINESTYLES)), order=readings))
            .label(x="rank j", y="P_i(j) in one round", title=str, color="", linestyle=""))
    dots = Line2D([], [], color="black", marker="o", markersize=3, ls="none")
    return render(plot, height=2.7, ncol=2, extra={"Monte-Carlo of the model (± 2 SE)": dots})


