"""FLH's accuracy price against OLH: F1 and NCR of PEM over the ``epsilon`` grid, mean ± SD over runs.

``frame(summary)`` takes :func:`ldp.experiments.summarize`'s table of the grid
(columns ``protocol``, ``epsilon``, ``f1_mean``, ``f1_std``, ``f1_count``, and
the same for ``ncr``) and returns the tidy table the figure plots (its CSV):
one row per (panel, oracle, epsilon) with the mean, the error-bar half-widths
(one SD, cut at 0 and 1) and the run count.  ``draw(frame)`` draws (a) F1 and
(b) NCR against ``epsilon``, one line per oracle.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..plotting import FULL_WIDTH, bar_bounds, legend_outside, use_style
from .scale_cost import oracle_order, oracle_palette

__all__ = ["frame", "draw", "PANELS"]

#: panel letter -> (metric, axis label)
PANELS = {"a": ("f1", "F1"), "b": ("ncr", "NCR")}


def frame(summary: pd.DataFrame, *, label: str = "protocol") -> pd.DataFrame:
    """The plotted table: ``panel``, ``oracle``, ``epsilon``, ``mean``, ``err_low``, ``err_high``, ``runs``.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ldp.experiments.summarize` of the runs by ``label`` and ``epsilon``.
    label : str
        The column naming each series (the grid's protocol label, e.g. ``"OLH"``, ``"FLH, h = 1024"``).
    """
    rows = []
    for panel, (metric, _) in PANELS.items():
        mean, sd = summary[f"{metric}_mean"].to_numpy(float), summary[f"{metric}_std"].fillna(0).to_numpy(float)
        lo, hi = bar_bounds(mean, sd, (0.0, 1.0))
        rows.append(pd.DataFrame({"panel": panel, "oracle": summary[label].astype(str).to_numpy(),
                                  "epsilon": summary["epsilon"].to_numpy(float), "metric": metric, "mean": mean,
                                  "err_low": lo, "err_high": hi,
                                  "runs": summary[f"{metric}_count"].to_numpy(int)}))
    return pd.concat(rows, ignore_index=True)


def draw(data: pd.DataFrame):
    """The figure of :func:`frame`'s table: (a) F1, (b) NCR against epsilon."""
    use_style()
    labels = oracle_order(data["oracle"])
    palette = oracle_palette(labels)
    fig, axes = plt.subplots(1, 2, figsize=(FULL_WIDTH, 0.4 * FULL_WIDTH), layout="constrained", sharex=True)
    for ax, (panel, (_, ylabel)) in zip(axes, PANELS.items()):
        sub = data[data["panel"] == panel]
        sns.lineplot(data=sub, x="epsilon", y="mean", hue="oracle", hue_order=labels, palette=palette,
                     style="oracle", markers=True, dashes=False, ax=ax, errorbar=None)
        for lab, grp in sub.groupby("oracle", sort=False):
            ax.errorbar(grp["epsilon"], grp["mean"], yerr=[grp["err_low"], grp["err_high"]], fmt="none",
                        ecolor=palette[str(lab)], elinewidth=0.8)
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(ylabel)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"({panel}) {ylabel}")
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    legend_outside(fig, axes)
    return fig
