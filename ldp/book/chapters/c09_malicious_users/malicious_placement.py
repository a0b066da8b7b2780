"""Chapter 09 (malicious users, ours): PEM when fake users choose their group, and the consistency check.

Panel (a): the smallest share of fake users that plants one value in PEM's top k,
fresh or a look-alike of a frequent value (sharing its prefix up to PEM's last
step), with the fake users in the plan's groups or in groups they choose.  Panel
(b): the share of those runs the consistency check of the release flags.  The frame
is :func:`ldp.book.chapters.c09_malicious_users.compute.placement_frame`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so

from ...claims import rules as R
from ...claims.claim import Claim, ClaimFields, Test
from ...plotting import interval, render
from .compute import CLAIM_FIELDS, OURS_QUOTE, OURS_SAYS, flagged, lookalike, placement_frame

__all__ = ["NAME", "ENGINES", "TITLES", "STRATEGIES", "frame", "draw", "CLAIMS"]

NAME = "fig-malicious-placement"
ENGINES = {NAME: "count engine with crafted users; the check on each planted release"}
TITLES = {NAME: "Fake users who choose their group (ours)"}
#: strategy -> (colour, marker, line style): colour the target, dashes the chosen groups
STRATEGIES = {"fresh, plan's groups": ("#1f77b4", "o", "-"), "fresh, chosen groups": ("#1f77b4", "o", "--"),
              "look-alike, plan's groups": ("#d95f02", "s", "-"), "look-alike, chosen groups": ("#d95f02", "s", "--")}
frame = placement_frame


def draw(data: pd.DataFrame):
    """(a) the smallest fake share per strategy (log, mean ± 1 SD); (b) the share of those runs flagged."""
    order = [s for s in STRATEGIES if s in set(data["strategy"])]
    scales = {v: so.Nominal({s: STRATEGIES[s][i] for s in order}, order=order)
              for i, v in enumerate(("color", "marker", "linestyle"))}
    a = interval(data[data["panel"] == "a"], "value", "sd", (1e-4, None))  # log10 on a linear axis (seaborn 0.13)
    a = a.assign(**{c: np.log10(a[c]) for c in ("value", "lo", "hi")})
    ticks = list(np.log10([m * 10.0 ** e for e in range(-4, 1) for m in (1, 2, 5)]))
    spec = dict(x="epsilon", y="value", color="strategy", marker="strategy", linestyle="strategy")
    plots = [so.Plot(a, **spec).add(so.Line(linewidth=1.0, pointsize=4.5))
             .add(so.Range(), ymin="lo", ymax="hi", linestyle=None)
             .scale(**scales, y=so.Continuous().tick(at=ticks).label(like=lambda v, _: f"{10 ** v:g}"))
             .label(x=r"$\varepsilon$", y="fake users (share of n)", title="(a) PEM: share planting one value",
                    color="", marker="", linestyle=""),
             so.Plot(data[data["panel"] == "b"], **spec).add(so.Line(linewidth=1.0, pointsize=4.5))
             .scale(**scales).limit(y=(-0.05, 1.05))
             .label(x=r"$\varepsilon$", y="share of runs flagged", title="(b) the consistency check at that share",
                    color="", marker="", linestyle="")]
    return render(plots, height=2.9, ncol=2)


_FIG: ClaimFields = {"figure": NAME, **CLAIM_FIELDS}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="malicious-lookalike-chosen", section="7", ref="Chapter 09, fake users choosing their group (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="half the fresh target's share (plan's groups) against the look-alike's share (chosen "
                         "groups), "
                         "every ε",
                    measure=lambda store: lookalike(store.figure(NAME)),
                    rule=R.OrderingHolds(what="half the fresh share ≥ look-alike share", floor=None, ceiling=None),
                    **_FIG)),
    Claim(id="malicious-consistency-flags-chosen", section="7", ref="Chapter 09, the consistency check (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="share of runs flagged, look-alike planted by fake users in chosen groups, ε ≥ 2",
                    measure=lambda store: flagged(2.0)(store.figure(NAME)),
                    rule=R.WithinTolerance(0.1, what="share of runs flagged"), setting={"eps_fixed": 2.0}, **_FIG)),
)
