"""Chapter 10 (ours): FLH's accuracy price against OLH, F1 and NCR of PEM over the ``epsilon`` grid.

Mean ± SD over runs, one line per oracle; the claim (ours, our target for FLH) reads
the F1 panel: at 10^6 users the default pool keeps FLH within 0.05 of OLH.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so

from ....oracles.flh import DEFAULT_POOL_SIZE
from ...claims import rules as R
from ...claims.claim import Claim, MissingInput, Test
from ...claims.measures import g, require
from ...plotting import FULL_WIDTH, interval, render, variant_scale

__all__ = ["NAME", "ENGINES", "TITLES", "CHAPTER", "PANELS", "EPSILONS", "frame", "draw", "CLAIMS"]

NAME = "fig-scale-flh-price"
CHAPTER = "10_scale"
ENGINES = {NAME: "count engine (FLH: the exact law of its tally)"}
TITLES = {NAME: "FLH's accuracy against OLH's (ours)"}
#: panel -> (metric, axis label)
PANELS = {"a": ("f1", "F1"), "b": ("ncr", "NCR")}
#: the epsilon grid of chapter 06 (the paper's Figure 5), on which the claim is made
EPSILONS = (0.5, 0.9, 1.2, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0)


def frame(summary: pd.DataFrame, *, label: str = "protocol") -> pd.DataFrame:
    """The figure's data: ``panel, oracle, epsilon, metric, mean, sd, runs``.

    ``summary`` is :func:`ldp.experiments.summarize` of the runs by ``label`` (each series' name, e.g.
    ``"OLH"``, ``"FLH, h = 1024"``) and ``epsilon``, metrics ``f1`` and ``ncr``.
    """
    return pd.concat([pd.DataFrame({"panel": panel, "oracle": summary[label].astype(str).to_numpy(),
                                    "epsilon": summary["epsilon"].to_numpy(float), "metric": metric,
                                    "mean": summary[f"{metric}_mean"].to_numpy(float),
                                    "sd": summary[f"{metric}_std"].fillna(0).to_numpy(float),
                                    "runs": summary[f"{metric}_count"].to_numpy(int)})
                      for panel, (metric, _) in PANELS.items()], ignore_index=True)


def draw(data: pd.DataFrame):
    """(a) F1 and (b) NCR against epsilon, one line per oracle, bars of one SD cut at 0 and 1."""
    d = interval(data, "mean", "sd")
    colors = variant_scale("OLH", sorted(set(d["oracle"]) - {"OLH"}, key=lambda s: int(s.split("= ")[-1])))
    return render([so.Plot(d[d["panel"] == panel], x="epsilon", y="mean", color="oracle")
                   .add(so.Line(marker="o", linewidth=1.2)).add(so.Range(), ymin="lo", ymax="hi")
                   .scale(color=colors).limit(y=(-0.02, 1.02))
                   .label(x=r"$\varepsilon$", y=ylabel, title=f"({panel}) {ylabel}", color="")
                   for panel, (_, ylabel) in PANELS.items()], height=0.4 * FULL_WIDTH)


_FLH = f"FLH, h = {DEFAULT_POOL_SIZE}"


def _m_within(store):
    d = store.figure(NAME)
    d = d[d["panel"] == "a"]
    require(d["epsilon"], EPSILONS, "ε")
    w = d.pivot_table(index="epsilon", columns="oracle", values=["mean", "sd", "runs"])
    if ("mean", _FLH) not in w or ("mean", "OLH") not in w:
        raise MissingInput(f"{NAME} needs OLH and {_FLH}")
    se = np.hypot(*(w["sd", o] / np.sqrt(w["runs", o]) for o in ("OLH", _FLH)))
    return pd.DataFrame({"point": [f"ε = {g(e)}: {_FLH} against OLH" for e in w.index],
                         "value": w["mean", _FLH].to_numpy(), "target": w["mean", "OLH"].to_numpy(),
                         "se": se.to_numpy()})


CLAIMS: tuple[Claim, ...] = (
    Claim(id="ours-flh-f1-within-005", section="7", ref="Chapter 10, FLH's price (ours)",
          quote="at n = 10^6 FLH's F1 is within 0.05 of OLH's on the paper's ε grid",
          says="FLH's F1 within 0.05 of OLH's (our claim)", kind="ours",
          test=Test(what=f"mean F1 of PEM with {_FLH} against OLH at each ε, n = 10^6, synthetic set",
                    measure=_m_within, rule=R.WithinTolerance(0.05, "FLH's mean F1 against OLH's"), chapter=CHAPTER,
                    figure=NAME,
                    setting={"n_price": 1_000_000, "epsilons": EPSILONS, "price_pools": (DEFAULT_POOL_SIZE,)})),
)
