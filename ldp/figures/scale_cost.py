"""Cost growth with ``n``: time and peak memory of privatize + store and of the aggregation from disk (log-log).

``frame(bench, live=None)`` turns the rows of ``benchmarks/bench_scale.py`` (its
CSV: one row per ``n`` and oracle) and, optionally, the same measurement made
live during the build into the tidy table the figure plots (its CSV);
``draw(frame)`` draws it: (a) aggregation time, (b) privatize and store time,
(c) peak memory of the aggregation, each against ``n`` on log-log axes, one
line per oracle (OLH, FLH with each pool size), the live points hollow.
"""
from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
import seaborn as sns

from ..plotting import FULL_WIDTH, legend_outside, method_style, series_colors, use_style

__all__ = ["frame", "draw", "PANELS", "oracle_label", "oracle_order", "oracle_palette"]

#: panel letter -> (quantity, axis label)
PANELS = {"a": ("aggregate_s", "aggregation from disk (s)"),
          "b": ("privatize_store_s", "privatize + store (s)"),
          "c": ("aggregate_peak_gb", "aggregation peak memory (GB)")}


def oracle_label(spec: str) -> str:
    """``"OLH"`` -> ``"OLH"``; ``"FLH:4096"`` -> ``"FLH, h = 4096"``."""
    kind, _, h = str(spec).partition(":")
    return kind if not h else f"{kind}, h = {int(h)}"


def frame(bench: pd.DataFrame, live: pd.DataFrame | None = None) -> pd.DataFrame:
    """The plotted table: one row per (panel, oracle, n, source).

    Parameters
    ----------
    bench : pandas.DataFrame
        Rows of ``benchmarks/bench_scale.py`` (columns ``n``, ``oracle``,
        ``t_aggregate_s``, ``t_privatize_s``, ``t_store_s``, ``rss_aggregate_mb``).
    live : pandas.DataFrame, optional
        The same columns, measured during this build.

    Returns
    -------
    pandas.DataFrame
        Columns ``panel``, ``oracle``, ``source`` (``"benchmark"`` or
        ``"this build"``), ``n``, ``quantity``, ``value``.
    """
    parts = [(bench, "benchmark")] + ([] if live is None or live.empty else [(live, "this build")])
    rows = []
    for df, source in parts:
        values = {"aggregate_s": df["t_aggregate_s"], "privatize_store_s": df["t_privatize_s"] + df["t_store_s"],
                  "aggregate_peak_gb": df["rss_aggregate_mb"] / 1024}
        for panel, (quantity, _) in PANELS.items():
            rows.append(pd.DataFrame({"panel": panel, "oracle": df["oracle"].map(oracle_label).to_numpy(),
                                      "source": source, "n": df["n"].astype(np.int64).to_numpy(),
                                      "quantity": quantity, "value": values[quantity].to_numpy(dtype=float)}))
    return pd.concat(rows, ignore_index=True)


def oracle_order(labels) -> list[str]:
    """OLH first, then FLH by increasing pool size (the legend order of the chapter's figures)."""
    return sorted(dict.fromkeys(labels), key=lambda s: (s != "OLH", int(s.split("=")[-1]) if "=" in s else 0))


def oracle_palette(labels) -> dict[str, Any]:
    """OLH in its book colour; the FLH pool sizes as a parameter series (light to dark with ``h``)."""
    pools = [lab for lab in oracle_order(labels) if lab != "OLH"]
    colors: dict[str, Any] = dict(zip(pools, series_colors(len(pools)) if pools else []))
    colors["OLH"] = method_style("OLH")["color"]
    return colors


def draw(data: pd.DataFrame):
    """The figure of :func:`frame`'s table: three log-log panels against ``n``."""
    use_style()
    labels = oracle_order(data["oracle"])
    palette = oracle_palette(labels)
    fig, axes = plt.subplots(1, 3, figsize=(FULL_WIDTH, 0.36 * FULL_WIDTH), layout="constrained")
    for ax, (panel, (_, ylabel)) in zip(axes, PANELS.items()):
        sub = data[data["panel"] == panel]
        bench = sub[sub["source"] == "benchmark"]
        sns.lineplot(data=bench, x="n", y="value", hue="oracle", hue_order=labels, palette=palette, marker="o",
                     ax=ax, legend=panel == "a", errorbar=None)
        live = sub[(sub["source"] == "this build") & sub["value"].notna()]
        for lab, grp in live.groupby("oracle"):
            ax.plot(grp["n"], grp["value"], linestyle="none", marker="o", markerfacecolor="none", markersize=7,
                    color=palette.get(str(lab), "k"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(mticker.LogLocator(subs=(1.0, 2.0, 5.0)))  # labels 0.2, 0.5, 1, 2, 5, ...
        ax.yaxis.set_major_formatter(mticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(mticker.NullFormatter())
        ax.set_xlabel("users n")
        ax.set_ylabel(ylabel)
        ax.set_title(f"({panel})")
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if (data["source"] == "this build").any():  # one legend entry for the hollow markers
        axes[0].plot([], [], linestyle="none", marker="o", markerfacecolor="none", markersize=7, color="0.3",
                     label="this build")
    legend_outside(fig, axes, ncol=min(len(labels) + 1, 5))
    return fig
