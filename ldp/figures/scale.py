"""Chapter 10 (ours, after the paper): PEM at internet scale, its two figures and what the chapter claims.

``fig-scale-cost``: time and peak memory of privatize + store and of the aggregation from
disk against ``n`` (log-log), from ``benchmarks/bench_scale.py``'s CSV (one row per ``n``
and oracle) and, hollow, the same phases measured in the build.  ``fig-scale-flh-price``:
F1 and NCR of PEM with FLH against OLH over the ``epsilon`` grid, mean ± SD over runs.
Every claim is ours (issue 23's targets): the paper runs 10^6 users and has no FLH.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from ..oracles.flh import DEFAULT_POOL_SIZE
from ..plotting import FULL_WIDTH, count_label, interval, method_style, render, series_colors
from ..reporting import rules as R
from ..reporting.claims import Claim, ClaimFields, MissingInput, NotCovered
from ..reporting.measures import g, require

__all__ = ["NAMES", "ENGINES", "TITLES", "CHAPTER", "COST_PANELS", "PRICE_PANELS", "oracle_label", "cost_frame",
           "cost_draw", "price_frame", "price_draw", "CLAIMS"]

NAMES = {"cost": "fig-scale-cost", "price": "fig-scale-flh-price"}
CHAPTER = "10_scale"
ENGINES = {NAMES["cost"]: "protocol engine (benchmarks/bench_scale.py, one run per point; hollow: this build)",
           NAMES["price"]: "count engine (FLH: the exact law of its tally)"}
TITLES = {NAMES["cost"]: "Cost of PEM against n (ours)", NAMES["price"]: "FLH's accuracy against OLH's (ours)"}
#: panel -> (quantity, axis label) of the cost figure, and (metric, label) of the price figure
COST_PANELS = {"a": ("aggregate_s", "aggregation from disk (s)"), "b": ("privatize_store_s", "privatize + store (s)"),
               "c": ("aggregate_peak_gb", "aggregation peak memory (GB)")}
PRICE_PANELS = {"a": ("f1", "F1"), "b": ("ncr", "NCR")}


def oracle_label(spec: str) -> str:
    """``"OLH"`` -> ``"OLH"``; ``"FLH:4096"`` -> ``"FLH, h = 4096"``."""
    kind, _, h = str(spec).partition(":")
    return kind if not h else f"{kind}, h = {int(h)}"


def _colors(labels) -> so.Nominal:
    """OLH first in its book colour, then FLH by increasing pool size as a parameter series (light to dark)."""
    order = sorted(dict.fromkeys(labels), key=lambda s: (s != "OLH", int(s.split("=")[-1]) if "=" in s else 0))
    pools = [lab for lab in order if lab != "OLH"]
    colors = dict(zip(pools, series_colors(len(pools)) if pools else []), OLH=method_style("OLH")["color"])
    return so.Nominal({lab: colors[lab] for lab in order}, order=order)


def cost_frame(bench: pd.DataFrame, live: pd.DataFrame | None = None) -> pd.DataFrame:
    """The cost figure's data: ``panel, oracle, source, n, quantity, value``, one row per (panel, oracle, n, source).

    ``bench`` holds rows of ``benchmarks/bench_scale.py`` (columns ``n``, ``oracle``, ``t_aggregate_s``,
    ``t_privatize_s``, ``t_store_s``, ``rss_aggregate_mb``); ``live`` the same measured in this build
    (``source`` ``"this build"``).
    """
    rows = []
    for df, source in [(bench, "benchmark")] + ([] if live is None or live.empty else [(live, "this build")]):
        values = {"aggregate_s": df["t_aggregate_s"], "privatize_store_s": df["t_privatize_s"] + df["t_store_s"],
                  "aggregate_peak_gb": df["rss_aggregate_mb"] / 1024}
        for panel, (quantity, _) in COST_PANELS.items():
            rows.append(pd.DataFrame({"panel": panel, "oracle": df["oracle"].map(oracle_label).to_numpy(),
                                      "source": source, "n": df["n"].astype(np.int64).to_numpy(),
                                      "quantity": quantity, "value": values[quantity].to_numpy(dtype=float)}))
    return pd.concat(rows, ignore_index=True)


def cost_draw(data: pd.DataFrame):
    """(a) aggregation time, (b) privatize + store time, (c) aggregation peak memory against ``n``, log-log."""
    colors, plots = _colors(data["oracle"]), []
    for panel, (_, ylabel) in COST_PANELS.items():
        d = data[(data["panel"] == panel) & data["value"].notna()]
        bench, live = d[d["source"] == "benchmark"], d[d["source"] == "this build"]
        p = so.Plot(bench, x="n", y="value", color="oracle").add(so.Line(marker="o", linewidth=1.2))
        if len(live):  # the same measurement in this build: hollow markers
            p = p.add(so.Dot(fill=False, pointsize=7, stroke=1.2), data=live, x="n", y="value", color="oracle")
        lo, hi = d["value"].min(), d["value"].max()  # under a decade: ticks a log axis would leave out
        y = so.Continuous(trans="log") if hi > 10 * lo else so.Continuous(trans="log").tick(
            at=[t for t in MaxNLocator(4).tick_values(lo, hi) if lo / 1.2 <= t <= hi * 1.2])
        plots.append(p.scale(x=so.Continuous(trans="log").label(like=lambda x, _: count_label(x)), color=colors,
                             y=y.label(like="{x:g}"))
                     .label(x="users n", y=ylabel, title=f"({panel})", color=""))
    hollow = Line2D([], [], marker="o", linestyle="none", markerfacecolor="none", markersize=7, color="0.3")
    return render(plots, height=0.38 * FULL_WIDTH, ncol=5, extra={"this build": hollow} if (data["source"] ==
                                                                                    "this build").any() else None)


def price_frame(summary: pd.DataFrame, *, label: str = "protocol") -> pd.DataFrame:
    """The price figure's data: ``panel, oracle, epsilon, metric, mean, sd, runs``.

    ``summary`` is :func:`ldp.experiments.summarize` of the runs by ``label`` (each series' name, e.g.
    ``"OLH"``, ``"FLH, h = 1024"``) and ``epsilon``, metrics ``f1`` and ``ncr``.
    """
    return pd.concat([pd.DataFrame({"panel": panel, "oracle": summary[label].astype(str).to_numpy(),
                                    "epsilon": summary["epsilon"].to_numpy(float), "metric": metric,
                                    "mean": summary[f"{metric}_mean"].to_numpy(float),
                                    "sd": summary[f"{metric}_std"].fillna(0).to_numpy(float),
                                    "runs": summary[f"{metric}_count"].to_numpy(int)})
                      for panel, (metric, _) in PRICE_PANELS.items()], ignore_index=True)


def price_draw(data: pd.DataFrame):
    """(a) F1 and (b) NCR against epsilon, one line per oracle, bars of one SD cut at 0 and 1."""
    d, colors = interval(data, "mean", "sd"), _colors(data["oracle"])
    return render([so.Plot(d[d["panel"] == panel], x="epsilon", y="mean", color="oracle")
                   .add(so.Line(marker="o", linewidth=1.2)).add(so.Range(), ymin="lo", ymax="hi")
                   .scale(color=colors).limit(y=(-0.02, 1.02))
                   .label(x=r"$\varepsilon$", y=ylabel, title=f"({panel}) {ylabel}", color="")
                   for panel, (_, ylabel) in PRICE_PANELS.items()], height=0.4 * FULL_WIDTH)


# --------------------------------------------------------------------------- claims (ours)
N_TOP = 10**8
FLH_DEFAULT = oracle_label(f"FLH:{DEFAULT_POOL_SIZE}")
EPSILONS = (0.5, 0.9, 1.2, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0)  # chapter 06's grid, the paper's Figure 5


def _below(points, values, bounds) -> pd.DataFrame:
    """OrderingHolds' columns for "value below its bound" (exact numbers: no standard error)."""
    return pd.DataFrame({"point": points, "a": bounds, "se_a": 0.0, "b": values, "se_b": 0.0})


def _cost(store, panel: str, oracle: str | None = None) -> pd.DataFrame:
    d = store.figure(NAMES["cost"])
    d = d[(d["panel"] == panel) & (d["source"] == "benchmark") & (oracle is None or d["oracle"] == oracle)]
    if d.empty:
        raise MissingInput(f"{NAMES['cost']} has no benchmark row{f' of {oracle}' if oracle else ''} in ({panel})")
    return d


def _at_top(store, panel: str, oracle: str) -> float:
    d = _cost(store, panel, oracle)
    if int(d["n"].max()) < N_TOP:
        raise NotCovered(f"the benchmark's largest n for {oracle} is {int(d['n'].max()):,d}, not {N_TOP:,d}")
    return float(d.loc[d["n"].idxmax(), "value"])


def _m_olh_memory(store):
    return _below([f"OLH, n = {N_TOP:,d}: peak memory (GB)"], [_at_top(store, "c", "OLH")], [4.0])


def _m_memory_bounded(store):
    rows = [(f"{o}, n = {grp['n'].min():,d} to {grp['n'].max():,d}: peak memory ratio",
             grp.loc[grp["n"].idxmax(), "value"] / grp.loc[grp["n"].idxmin(), "value"])
            for o, grp in _cost(store, "c").groupby("oracle", sort=False) if grp["n"].max() >= 1000 * grp["n"].min()]
    if not rows:
        raise NotCovered("no oracle's benchmark spans a factor 1000 in n")
    return _below([p for p, _ in rows], [r for _, r in rows], 2.0)


def _m_flh_fast(store):
    return _below([f"{FLH_DEFAULT}, n = {N_TOP:,d}: aggregation (s)"], [_at_top(store, "a", FLH_DEFAULT)], [60.0])


def _m_flh_price(store):
    d = store.figure(NAMES["price"])
    d = d[d["panel"] == "a"]
    require(d["epsilon"], EPSILONS, "ε")
    w = d.pivot_table(index="epsilon", columns="oracle", values=["mean", "sd", "runs"])
    if ("mean", FLH_DEFAULT) not in w or ("mean", "OLH") not in w:
        raise MissingInput(f"{NAMES['price']} needs OLH and {FLH_DEFAULT}")
    se = np.hypot(*(w["sd", o] / np.sqrt(w["runs", o]) for o in ("OLH", FLH_DEFAULT)))
    return pd.DataFrame({"point": [f"ε = {g(e)}: {FLH_DEFAULT} against OLH" for e in w.index],
                         "value": w["mean", FLH_DEFAULT].to_numpy(), "target": w["mean", "OLH"].to_numpy(),
                         "se": se.to_numpy()})


_DONE = ("PEM over 10^8 users (OLH, the paper's protocol) aggregates from disk on this 2-core machine with peak "
         "memory under 4 GB; with FLH (a pool size you recommend) the same 10^8-user run aggregates in under 60 s, "
         "and at n = 10^6 FLH's F1 is within 0.05 of OLH's on the paper's ε grid")
_BOUNDS = dict(floor=None, ceiling=None, strict=True)
_OURS: ClaimFields = dict(section="7", quote=_DONE, chapter=CHAPTER, ours=True)
CLAIMS: tuple[Claim, ...] = (
    Claim(id="ours-scale-olh-memory", ref="Chapter 10, Figure (c) (ours)", paper="OLH at 10^8 users under 4 GB",
          tested=f"peak memory of the OLH aggregation of {N_TOP:,d} stored reports (benchmark)",
          measure=_m_olh_memory, rule=R.OrderingHolds(what="peak memory below 4 GB", **_BOUNDS),
          figure=NAMES["cost"], **_OURS),
    Claim(id="ours-scale-memory-bounded", ref="Chapter 10, Figure (c) (ours)",
          paper="aggregation memory bounded by a chunk and the candidates, not by n",
          tested="peak memory at the largest n over that at the smallest (n 1000 times or more larger), per oracle",
          measure=_m_memory_bounded, rule=R.OrderingHolds(what="ratio below 2", **_BOUNDS), figure=NAMES["cost"],
          **_OURS),
    Claim(id="ours-scale-flh-fast", ref="Chapter 10, Figure (a) (ours)", paper="FLH at 10^8 users under 60 s",
          tested=f"aggregation time of {FLH_DEFAULT} (the default pool) for {N_TOP:,d} stored reports (benchmark)",
          measure=_m_flh_fast, rule=R.OrderingHolds(what="aggregation below 60 s", **_BOUNDS),
          figure=NAMES["cost"], note="The time excludes opening the store (its checks), which the chapter states.",
          **_OURS),
    Claim(id="ours-flh-f1-within-005", ref="Chapter 10, FLH's price (ours)", paper="FLH's F1 within 0.05 of OLH's",
          tested=f"mean F1 of PEM with {FLH_DEFAULT} against OLH at each ε, n = 10^6, synthetic set",
          measure=_m_flh_price, rule=R.WithinTolerance(0.05, "FLH's mean F1 against OLH's"), figure=NAMES["price"],
          setting={"n_price": 1_000_000, "epsilons": EPSILONS, "price_pools": (DEFAULT_POOL_SIZE,)}, **_OURS),
)
