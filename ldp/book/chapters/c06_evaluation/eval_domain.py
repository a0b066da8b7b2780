"""PEM, MCM and SPM against the domain size (chapter 06): the introduction's claim that PEM's advantage grows with it.

Not a paper figure: the introduction says PEM's advantage "is more pronounced as the size of D gets larger", and the
evaluation varies only ε and k.  F1 and NCR of the three protocols on the synthetic set of section 6.1 with values
of ``m`` bits (a domain of 2^m values), at the ε and k of Figure 6 and Figures 5, 9.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so

from ...claims import rules as R
from ...claims.claim import Alternative, Claim, Measurement, Readings, Test
from ...claims.measures import eval_points, pem_vs_best_other
from ...plotting import interval, method_scales, render
from .eval_vary import METHODS

__all__ = ["NAME", "ENGINES", "TITLES", "frame", "draw", "CLAIMS"]

NAME = "fig-eval-vary-m"
ENGINES = {NAME: "count engine (10 runs)"}
TITLES = {NAME: "section 1"}


def frame(summary: pd.DataFrame) -> pd.DataFrame:
    """The figure's data: ``panel, dataset, metric, protocol, m, mean, std, runs`` ((a) F1, (b) NCR).

    ``summary`` is :func:`ldp.experiments.summarize` by ``dataset, protocol, m`` with ``f1`` and ``ncr``, of the
    synthetic set at each ``m`` (each its own grid label; ``dataset`` is ``"Synthetic"`` here).
    """
    parts = [pd.DataFrame({"panel": panel, "dataset": "Synthetic", "metric": metric,
                           "protocol": summary["protocol"].to_numpy(), "m": summary["m"].to_numpy(),
                           "mean": summary[f"{metric}_mean"].to_numpy(), "std": summary[f"{metric}_std"].to_numpy(),
                           "runs": summary[f"{metric}_count"].to_numpy()})
             for panel, metric in (("a", "f1"), ("b", "ncr"))]
    return pd.concat(parts, ignore_index=True)


def draw(data: pd.DataFrame):
    """F1 (a) and NCR (b) of each protocol against the value length m (mean ± 2 SE, cut at 0 and 1)."""
    d = interval(data, "mean", "std", scale=2, runs="runs")
    d["title"] = d["panel"].map({"a": "(a) F1", "b": "(b) NCR"})
    present = list(dict.fromkeys(d["protocol"]))
    scales = method_scales([p for p in METHODS if p in present] + [p for p in present if p not in METHODS])
    ms = sorted(set(d["m"]))
    plot = (so.Plot(d, x="m", y="mean", color="protocol", marker="protocol")
            .facet(col="title", order=["(a) F1", "(b) NCR"])
            .add(so.Line(linewidth=1.2, pointsize=4.5)).add(so.Range(), ymin="lo", ymax="hi")
            .scale(color=scales["color"], marker=scales["marker"], x=so.Continuous().tick(at=ms))
            .limit(y=(-0.03, 1.03))
            .label(x="m (bits per value; 2^m values)", y="score", title=str, color="", marker=""))
    return render(plot, height=2.9, ncol=3)


# --------------------------------------------------------------------------- claims: section 1
def _m_lead(metric: str = "f1"):
    """PEM's mean minus the best other's against m (one series), with the standard error of the difference."""
    def measure(store):
        df = eval_points(store, NAME)
        p = pem_vs_best_other(df, "m", metrics=(metric,))
        name = f"PEM minus the best other, {metric.upper()}"
        return Measurement(pd.DataFrame({"series": name, "x": p["x"], "y": p["a"] - p["b"],
                                         "se": np.hypot(p["se_a"], p["se_b"])}),
                           "; ".join(f"m = {x:g}: {a:.2f} against {b:.2f} ({o})"
                                     for x, a, b, o in zip(p["x"], p["a"], p["b"], p["best_other"])))
    return measure


CLAIMS: tuple[Claim, ...] = (
    Claim(id="s1-advantage-grows-with-domain", section="1", ref="Introduction",
          quote=r"and the advantage is more pronounced as the size of $\Domain$ gets larger.",
          says="PEM's lead grows with the domain",
          test=Test(what="PEM's F1 minus the best of MCM's and SPM's against the value length m (a domain of 2^m "
                         "values), on the synthetic set at ε = 2, k = 16",
                    measure=_m_lead(), rule=R.Monotone("increasing"), chapter="06_evaluation", figure=NAME,
                    setting={"eps_fixed": 2.0, "k_fixed": 16, "n_synthetic": 1_000_000, "query_limit": 2 ** 20},
                    rests_on=("mcm", "spm", Readings.DOMAIN, Readings.SYNTHETIC, Readings.SPM, Readings.MCM),
                    other_readings=(Alternative("NCR instead of F1 as the accuracy", Readings.DOMAIN, _m_lead("ncr")),),
                    )),
)
