"""Chapter 09 (malicious users, ours): the smallest share of fake users that plants targets in the release.

Two figures of one shape (frames :func:`ldp.book.chapters.c09_malicious_users.compute.threshold_frame` and
``targets_frame``): the share that puts one fresh target in the top k against ε
(``fig-malicious-threshold``), and the share that puts r of 16 targets there at one
budget (``fig-malicious-targets``); maximal gain beside input manipulation, rows the
data sets, the first-order prediction ``B / (n g + B)`` dashed; mean ± 1 SD over
the searches.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ...claims import rules as R
from ...claims.claim import Claim, ClaimFields, Test
from ...plotting import interval, method_style, render
from .compute import (
    CLAIM_FIELDS,
    KIND_LABELS,
    OURS_QUOTE,
    OURS_SAYS,
    below,
    mga_below_input,
    prediction,
    targets_frame,
    threshold_frame,
)

__all__ = ["NAMES", "ENGINES", "TITLES", "frame", "draw", "CLAIMS"]

#: figure name by the x axis: epsilon (one target), need (r of 16 targets)
NAMES = {"epsilon": "fig-malicious-threshold", "need": "fig-malicious-targets"}
ENGINES = {n: "count engine with crafted users (exact supports of the targets' answers), bisection per search"
           for n in NAMES.values()}
TITLES = {NAMES["epsilon"]: "Fake users needed to plant one value (ours)",
          NAMES["need"]: "Fake users needed to plant r of 16 values (ours)"}
ORDER = ("PEM", "PEM (HR)", "PEM (CMS)", "SPM", "MCM", "TreeHist (8 bits)", "SFP")


def frame(grid: pd.DataFrame, predicted: pd.DataFrame, *, datasets, x: str = "epsilon") -> pd.DataFrame:
    """:func:`~ldp.book.chapters.c09_malicious_users.compute.threshold_frame` (``x="epsilon"``) or ``targets_frame``
    (``x="need"``)."""
    return (threshold_frame if x == "epsilon" else targets_frame)(grid, predicted, datasets=datasets)


def _scales(methods):
    """PEM with another oracle takes that oracle's colour, dashed; every other protocol its own style."""
    style = {m: method_style(m[5:-1] if m.startswith("PEM (") else m) for m in methods}
    dash = {m: "--" if m.startswith("PEM (") else "-" for m in methods}
    return {"color": so.Nominal({m: s["color"] for m, s in style.items()}, order=methods),
            "marker": so.Nominal({m: s["marker"] for m, s in style.items()}, order=methods),
            "linestyle": so.Nominal(dash, order=methods)}

#: 1-2-5 ticks of a log10 axis
LOG_TICKS = list(np.log10([m * 10.0 ** e for e in range(-4, 4) for m in (1, 2, 5)]))


def draw(data: pd.DataFrame, *, x: str = "epsilon"):
    """The share against ``x``, one panel per (data set, kind), log y; dashed: the prediction."""
    d = interval(data, "mean", "sd", (1e-4, None))  # log10 on a linear axis: seaborn 0.13 misplaces log Range bars
    d = d.assign(**{c: np.log10(d[c]) for c in ("mean", "lo", "hi", "predicted")},
                 title=[f"({p}) {ds}: {KIND_LABELS[k]}"
                        for p, ds, k in zip(data["panel"], data["dataset"], data["kind"])])
    pred = d[np.isfinite(d["predicted"])]
    methods = [m for m in ORDER if m in set(d["protocol"])] + sorted(set(d["protocol"]) - set(ORDER))
    xs = sorted(set(d[x]))
    xscale = so.Continuous(trans="log2").tick(at=xs).label(like="{x:g}") if x == "need" else so.Continuous()
    plot = (so.Plot(d, x=x, y="mean", color="protocol", marker="protocol", linestyle="protocol")
            .facet(col="title", order=sorted(set(d["title"])), wrap=2)
            .add(so.Line(linewidth=1.0, pointsize=4.5)).add(so.Range(), ymin="lo", ymax="hi", linestyle=None)
            .add(so.Line(linewidth=0.8, alpha=0.6, linestyle=(0, (4, 2))), data=pred, x=x, y="predicted",
                 color="protocol", col="title", marker=None, linestyle=None)
            .scale(**_scales(methods), x=xscale,
                   y=so.Continuous().tick(at=LOG_TICKS).label(like=lambda v, _: f"{10 ** v:g}"))
            .label(x=r"$\varepsilon$" if x == "epsilon" else "targets released (of 16)", y="fake users (share of n)",
                   title=str, color="", marker="", linestyle=""))
    rows = len(set(d["title"])) // 2 + len(set(d["title"])) % 2
    extra = {"first-order prediction": Line2D([], [], color="0.3", lw=0.8, ls=(0, (4, 2)))}
    return render(plot, height=0.36 * 6.6 * rows + 0.6, ncol=4, extra=extra)


_THR: ClaimFields = {"figure": NAMES["epsilon"], **CLAIM_FIELDS}
_ORDER: ClaimFields = {"floor": None, "ceiling": None}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="malicious-mga-needs-fewer", section="7", ref="Chapter 09, output against input manipulation (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="input manipulation's mean share against maximal gain's, every protocol, budget and data set",
                    measure=lambda store: mga_below_input(store.figure(NAMES["epsilon"])),
                    rule=R.OrderingHolds(what="input share ≥ maximal-gain share", **_ORDER), **_THR)),
    Claim(id="malicious-spm-below-pem", section="7", ref="Chapter 09, PEM against SPM (ours)", quote=OURS_QUOTE,
          says=OURS_SAYS, kind="ours",
          test=Test(what="PEM's mean maximal-gain share against SPM's at every ε on the synthetic set",
                    measure=lambda store: below("PEM", "SPM", "Synthetic")(store.figure(NAMES["epsilon"])),
                    rule=R.OrderingHolds(what="PEM's share ≥ SPM's share", **_ORDER), **_THR)),
    Claim(id="malicious-prediction-pem", section="7", ref="Chapter 09, the first-order prediction (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="PEM's measured share over the prediction B / (n g + B), within 25 %",
                    measure=lambda store: prediction("PEM")(store.figure(NAMES["epsilon"])),
                    rule=R.WithinTolerance(0.25, what="measured over predicted share"), **_THR)),
)
