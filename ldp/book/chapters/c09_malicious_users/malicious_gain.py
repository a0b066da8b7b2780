"""Chapter 09 (malicious users, ours): what one fake report is worth, closed form beside measurement.

The net gain ``(s - rho) / (p - q)`` of a target's estimate per maximal-gain report
(eq. (2)'s scale factor times the support probability), per oracle and budget, for
one target (a) and many (b); an honest report adds 1 on average.  The frame is
:func:`ldp.book.chapters.c09_malicious_users.compute.gain_frame` of :func:`ldp.attacks.gains.gain_table`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so

from ...claims import rules as R
from ...claims.claim import Claim, Test
from ...plotting import interval, method_scales, render
from .compute import CLAIM_FIELDS, OURS_QUOTE, OURS_SAYS, gain_frame, gain_points

__all__ = ["NAME", "ENGINES", "TITLES", "frame", "draw", "CLAIMS"]

NAME = "fig-malicious-gain"
ENGINES = {NAME: "crafted reports of each oracle (Monte Carlo) beside the closed form"}
TITLES = {NAME: "The gain of one fake report (ours)"}
frame = gain_frame

#: 1-2-5 ticks of a log10 axis
LOG_TICKS = list(np.log10([m * 10.0 ** e for e in range(-4, 4) for m in (1, 2, 5)]))


def draw(data: pd.DataFrame):
    """Closed form (lines) and measurement (open markers, 2 SE) of the net gain per report, log scale."""
    d = interval(data, "gain", "err", (1e-3, None))  # log10 on a linear axis: seaborn 0.13 misplaces log Range bars
    d = d.assign(**{c: np.log10(d[c]) for c in ("gain", "lo", "hi")},
                 title=[f"({p}) {t} target{'s' if t > 1 else ''}" for p, t in zip(data["panel"], data["targets"])])
    closed, measured = d[d["source"] == "closed form"].dropna(subset=["gain"]), d[d["source"] == "measured"]
    oracles = [o for o in ("GRR", "OUE", "OLH", "HR", "CMS") if o in set(d["oracle"])]
    sc = method_scales(oracles, dashed=oracles)  # open markers: measured points; solid lines: closed forms
    plot = (so.Plot(measured, x="epsilon", y="gain", color="oracle", marker="oracle", fillcolor="oracle")
            .facet(col="title", order=sorted(set(d["title"])))
            .add(so.Line(linewidth=1.0), data=closed, x="epsilon", y="gain", color="oracle", col="title",
                 marker=None, fillcolor=None)
            .add(so.Dot(pointsize=4.5)).add(so.Range(), ymin="lo", ymax="hi", fillcolor=None, marker=None)
            .scale(color=sc["color"], marker=sc["marker"], fillcolor=sc["fillcolor"],
                   y=so.Continuous().tick(at=LOG_TICKS).label(like=lambda v, _: f"{10 ** v:g}"))
            .label(x=r"$\varepsilon$", y="gain per fake report", title=str, color="", marker="", fillcolor=""))
    fig = render(plot, height=2.9, ncol=len(oracles))
    for ax in fig.axes:
        ax.axhline(0.0, color="0.4", lw=0.8, ls=":")  # an honest report's average
    return fig


CLAIMS: tuple[Claim, ...] = (
    Claim(id="malicious-gain-closed-form", section="7", ref="Chapter 09, eq. (2)'s scale factor (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="the measured gain of one maximal-gain report against (s − ρ)/(p − q) for GRR, OUE, OLH, HR "
                         "and "
                         "CMS at every budget",
                    measure=lambda store: gain_points(store.figure(NAME)), rule=R.WithinSE(t=3.0), figure=NAME,
                    setting={"epsilons": (2.0,)}, **CLAIM_FIELDS)),
)
