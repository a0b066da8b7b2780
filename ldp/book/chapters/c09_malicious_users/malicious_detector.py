"""Chapter 09 (malicious users, ours): the support-count detector of crafted reports.

The tail ``P(count >= c)`` of the number of released values a report supports:
honest reports stay under the bound the detector states, crafted ones pass its
threshold (a dotted line).  The frame is :func:`ldp.book.chapters.c09_malicious_users.compute.detector_frame`;
the claims read the chapter's tables ``detector-runs`` (false- and true-positive
rates of every run) and ``done-when`` (the check at a fixed share: 1.5 % fake users).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so

from ...claims import rules as R
from ...claims.claim import Claim, ClaimFields, Test
from ...plotting import FULL_WIDTH, render
from .compute import CHAPTER, CLAIM_FIELDS, OURS_QUOTE, OURS_SAYS, detector_frame, done_when, fpr_points

__all__ = ["NAME", "ENGINES", "TITLES", "frame", "draw", "CLAIMS"]

NAME = "fig-malicious-detector"
ENGINES = {NAME: "protocol engine (real reports, honest and crafted)",
           f"{CHAPTER}/detector-runs": "protocol engine; the rates of other oracles against a count-engine release",
           f"{CHAPTER}/done-when": "count engine with crafted users (4 runs per kind)"}
TITLES = {NAME: "The detector of crafted reports (ours)"}
frame = detector_frame
_COLORS = ("#333333", "#1f77b4", "#d62728", "#9467bd", "#2ca02c")


def draw(data: pd.DataFrame):
    """The tails on a log10 axis, the stated bound among them, and the threshold."""
    d = data[data["tail"] > 0].assign(tail=lambda f: np.log10(f["tail"]))
    series = list(dict.fromkeys(data["series"]))
    plot = (so.Plot(d, x="count", y="tail", color="series", marker="series")
            .add(so.Line(linewidth=1.0, pointsize=4.5))
            .scale(color=so.Nominal(dict(zip(series, _COLORS)), order=series),
                   y=so.Continuous().tick(every=2).label(like=lambda v, _: f"{10 ** v:g}"))
            .label(x="released values a report supports", y="share of reports with at least that many", color="",
                   marker=""))
    fig = render(plot, height=2.9, width=FULL_WIDTH, ncol=2)
    fig.axes[0].axvline(int(data["threshold"].iloc[0]) - 0.5, color="0.4", lw=0.8, ls=":")
    return fig


_FIG: ClaimFields = {"figure": NAME, **CLAIM_FIELDS}
#: the result tables this module's claims read (beside figure CSVs): name -> (columns, what it holds)
TABLES = {"detector-runs": (("run", "alpha", "fpr", "honest"),
                            "the detector's stated and measured false-positive rates"),
          "done-when": (("kind", "runs", "planted"), "runs of 4 in which 1.5 % fake users plant a fresh target")}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="malicious-detector-fpr", section="7", ref="Chapter 09, the detector's false-positive rate (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="the stated rate against the measured false-positive rate on honest reports, every detector "
                         "run",
                    measure=lambda store: fpr_points(store.load(CHAPTER, "detector-runs")),
                    rule=R.OrderingHolds(what="stated rate ≥ measured rate", floor=None, ceiling=None),
                    reads=(f"{CHAPTER}/detector-runs",), setting={"alpha": 0.001}, **_FIG)),
    Claim(id="malicious-done-when", section="7", ref="Chapter 09, the check at a fixed share of fake users (ours)",
          quote=OURS_QUOTE,
          says=OURS_SAYS, kind="ours",
          test=Test(what="runs of 4 in which 1.5 % fake users plant a fresh target in PEM's top 16 at ε = 2, n = 10^6: "
                         "all for maximal gain, none for input manipulation (one allowed)",
                    measure=lambda store: done_when(store.load(CHAPTER, "done-when")),
                    rule=R.WithinTolerance(1.0, what="runs out of 4"), reads=(f"{CHAPTER}/done-when",),
                    setting={"eps_fixed": 2.0, "n_synthetic": 1_000_000, "fraction_check": 0.015, "runs_check": 4},
                    **_FIG)),
)
