"""Chapter 09 (malicious users, ours): attackers who know the server's checks, and a defence on the aggregates.

Two figures of one shape, each from a table of ``benchmarks/bench_adaptive.py`` (committed under
``benchmarks/results/adaptive``; :func:`ldp.book.chapters.c09_malicious_users.compute.bench_adaptive`):
``fig-malicious-adaptive`` (16 fresh targets, 8 of which must be released) and ``fig-malicious-one-target``
(one target: the minimal attack).  Per protocol and oracle, the share of fake users each attacker of
:func:`ldp.attacks.adaptive_attacks` needs with the server's checks and the defence (:func:`ldp.attacks.recover`)
off and on, and the defence's price in honest F1.  The one-target figure also marks the search this build ran
again (:func:`~ldp.book.chapters.c09_malicious_users.compute.rerun_search`).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ...claims import rules as R
from ...claims.claim import Claim, ClaimFields, Test
from ...plotting import FULL_WIDTH, render
from .compute import BENCH_MAX_FRACTION, CLAIM_FIELDS, OURS_QUOTE, OURS_SAYS, SERVERS, cheapest

__all__ = ["NAMES", "ENGINES", "TITLES", "ATTACKERS", "frame", "draw", "raised_by", "one_each_passes", "floor_points",
           "reproduced", "CLAIMS"]

#: figure name by the benchmark's table
NAMES = {"sixteen-targets": "fig-malicious-adaptive", "one-target": "fig-malicious-one-target"}
ENGINES = {n: "count engine with crafted users, the checks' honest part drawn from its law "
              "(benchmarks/bench_adaptive.py, committed; the marked search: this build)" for n in NAMES.values()}
TITLES = {NAMES["sixteen-targets"]: "Attackers who know the checks, 16 targets (ours)",
          NAMES["one-target"]: "Attackers who know the checks, one target (ours)"}
#: panel -> (the attackers it shows, its title); the last panel is the defence's price
ATTACKERS = {"a": (("MGA",), "max. gain"), "b": (("spread",), "spread"), "c": (("one-each",), "one each"),
             "d": (("index-honest", "capped"), "index, cap")}
PRICE_PANEL = "e"
_COLORS = {"no checks": "#9a9a9a", "checks": "#1f77b4", "defence": "#ff7f0e", "checks and defence": "#d62728"}
_OFFSET = dict(zip(SERVERS.values(), (-0.27, -0.09, 0.09, 0.27)))


def _fractions(grid: pd.DataFrame, source: str) -> pd.DataFrame:
    key = ["protocol", "oracle", "epsilon", "n", "attacker", "checks", "defence"]
    g = grid.assign(reached=np.isfinite(grid["fraction"]), first=grid["fraction"].where(grid["rep"] == 0))
    out = g.groupby(key, sort=False).agg(guard=("guard", "max"), value=("fraction", "mean"), sd=("fraction", "std"),
                                         reps=("rep", "size"), reached=("reached", "sum"), first=("first", "max"))
    return out.reset_index().assign(source=source, quantity="fake users")


def frame(tables: Mapping[str, pd.DataFrame], live: pd.DataFrame | None = None) -> pd.DataFrame:
    """The figure's rows from one benchmark table (``{"grid": ..., "price": ...}``) and this build's search.

    Returns
    -------
    pandas.DataFrame
        ``panel, quantity, source, protocol, oracle, epsilon, n, attacker, server, checks, defence, guard, value,
        sd, reps, reached, first, f1, f1_defended, x, y``.  ``quantity`` ``"fake users"``: ``value`` the mean
        over repetitions of the smallest share that plants the targets (over those that did within
        :data:`~ldp.book.chapters.c09_malicious_users.compute.BENCH_MAX_FRACTION`; ``reached`` counts them;
        ``first``: the first repetition's, ``nan`` where it planted nothing),
        ``source`` ``"benchmark"`` or ``"this build"``; ``"honest F1 lost"`` (panel e): the defence's price at
        the table's guard, ``f1 - f1_defended`` (means over the honest runs).  ``x`` is what is drawn (the
        largest share tried where none planted), ``y`` the row (protocols top down, the servers side by side).
    """
    grid, price = tables["grid"], tables["price"]
    parts = [_fractions(grid, "benchmark")] + ([_fractions(live, "this build")] if live is not None else [])
    f = pd.concat(parts, ignore_index=True)
    panel_of = {a: p for p, (attackers, _) in ATTACKERS.items() for a in attackers}
    f = f[f["attacker"].isin(list(panel_of))].assign(panel=lambda d: d["attacker"].map(panel_of))
    f["server"] = [SERVERS[(c, d)] for c, d in zip(f["checks"], f["defence"])]
    order = list(dict.fromkeys(grid["protocol"]))
    f["x"] = f["value"].where(f["reached"] > 0, BENCH_MAX_FRACTION)
    f["y"] = [-order.index(p) + _OFFSET[s] for p, s in zip(f["protocol"], f["server"])]
    guards = grid[grid["defence"] == "on"].groupby("protocol")["guard"].max()
    at = price[np.isclose(price["guard"], price["protocol"].map(guards))]
    p = at.groupby("protocol", sort=False)[["f1", "f1_defended"]].mean().reindex(order).reset_index()
    p = p.merge(grid.drop_duplicates("protocol")[["protocol", "oracle", "epsilon", "n"]], on="protocol")
    p = p.assign(panel=PRICE_PANEL, quantity="honest F1 lost", source="benchmark", guard=p["protocol"].map(guards),
                 value=p["f1"] - p["f1_defended"], y=[-order.index(x) for x in p["protocol"]])
    p["x"] = p["value"]
    cols = ["panel", "quantity", "source", "protocol", "oracle", "epsilon", "n", "attacker", "server", "checks",
            "defence", "guard", "value", "sd", "reps", "reached", "first", "f1", "f1_defended", "x", "y"]
    return pd.concat([f, p], ignore_index=True).reindex(columns=cols)


def _rows(data: pd.DataFrame) -> dict[float, str]:
    """y position -> protocol label (the panels' rows)."""
    p = data[data["panel"] == PRICE_PANEL]
    return dict(zip(p["y"], p["protocol"]))


def draw(data: pd.DataFrame):
    """One panel per attacker (log x: the share of fake users; > at the right edge: none within the largest share
    tried), the servers side by side in each protocol's row; the last panel the defence's honest-F1 price."""
    rows, shares = _rows(data), data[data["quantity"] == "fake users"]
    bench, live = shares[shares["source"] == "benchmark"], shares[shares["source"] == "this build"]
    ticks = [0.01, 0.1, BENCH_MAX_FRACTION]  # labelled in %, without the sign: 10 and 50 stay apart
    plots = []
    for panel, (_, title) in ATTACKERS.items():
        d = bench[bench["panel"] == panel].assign(mark=lambda f: np.where(f["reached"] > 0, "planted", "none"))
        p = (so.Plot(d, x="x", y="y", color="server", marker="mark").add(so.Dot(pointsize=4.5))
             .scale(color=so.Nominal(_COLORS, order=list(_COLORS)),
                    marker=so.Nominal({"planted": "o", "none": ">"}, order=["planted", "none"]),
                    x=so.Continuous(trans="log").tick(at=ticks).label(like=lambda v, _: f"{100 * v:g}"))
             .limit(x=(0.006, 0.65), y=(min(rows) - 0.6, 0.6)).label(x="fake users, %", y="",
                                                                      title=f"({panel}) {title}", color="", marker=""))
        here = live[live["panel"] == panel]
        if len(here):
            p = p.add(so.Dot(marker="+", color="black", pointsize=8, stroke=1.0), data=here, x="x", y="y",
                      color=None, marker=None)
        plots.append(p)
    price = data[data["panel"] == PRICE_PANEL]
    plots.append(so.Plot(price, x="x", y="y").add(so.Bar(color="0.55", width=0.6), orient="y")
                 .limit(y=(min(rows) - 0.6, 0.6)).label(x="honest F1 lost", y="", title=f"({PRICE_PANEL}) price"))
    extra = {"none within 50 %": Line2D([], [], marker=">", ls="none", color="0.3", markersize=4.5)}
    if len(live):
        extra["this build"] = Line2D([], [], marker="+", ls="none", color="black", markersize=8)
    fig = render(plots, height=0.2 * len(rows) + 1.2, width=FULL_WIDTH, ncol=4, extra=extra)
    first = fig.axes[0]
    for ax in fig.axes[1:]:  # one y axis: the protocols' labels on the first panel (each panel's on a phone)
        ax.sharey(first)
        ax.tick_params(axis="y", labelleft=False)
    first.set_yticks(list(rows), list(rows.values()))
    for ax in fig.axes:
        ax.grid(False, axis="y")
    return fig


# --------------------------------------------------------------------------- claims (ours)
def raised_by(before: str, after: str, factor: float, *, protocols=None, label: str = ""):
    """``factor`` times the cheapest share under server ``before`` (a) against the cheapest under ``after`` (b),
    per protocol (among ``protocols``) where some attacker planted the targets under ``before``; ``inf`` where
    none did under ``after``."""
    def measure(data: pd.DataFrame) -> pd.DataFrame:
        c = cheapest(data)
        c = c[c["protocol"].isin(protocols)] if protocols is not None else c
        c = c[np.isfinite(c[before])]
        return pd.DataFrame({"point": label + c["protocol"], "a": factor * c[before], "se_a": 0.0, "b": c[after],
                             "se_b": 0.0})
    return measure


def _defence(store) -> pd.DataFrame:
    label = {NAMES["sixteen-targets"]: "16 targets, ", NAMES["one-target"]: "one target, "}
    return pd.concat([raised_by("checks", "checks and defence", DEFENCE_FACTOR, label=label[name])(store.figure(name))
                      for name in NAMES.values()], ignore_index=True)


def one_each_passes(data: pd.DataFrame, factor: float) -> pd.DataFrame:
    """The one-target-each attacker's share without the checks times ``factor`` (a) against with them (b)."""
    f = data[(data["attacker"] == "one-each") & (data["source"] == "benchmark") & (data["defence"] == "off")]
    v = f.assign(v=f["value"].where(f["reached"] > 0, np.inf)).pivot_table(index="protocol", columns="checks",
                                                                           values="v", sort=False)
    v = v[np.isfinite(v["off"])]
    return pd.DataFrame({"point": v.index, "a": factor * v["off"], "se_a": 0.0, "b": v["on"], "se_b": 0.0})


def floor_points(data: pd.DataFrame) -> pd.DataFrame:
    """:data:`FEW_PERCENT` (a) against the cheapest share with the checks and the defence on (b), every protocol
    (``OrderingHolds``: a few percent suffice everywhere)."""
    c = cheapest(data)
    return pd.DataFrame({"point": c["protocol"], "a": FEW_PERCENT, "se_a": 0.0, "b": c["checks and defence"],
                         "se_b": 0.0})


def reproduced(data: pd.DataFrame) -> pd.DataFrame:
    """This build's share over the committed first repetition's, for the search it ran again (``WithinTolerance``
    around 1; ``inf`` where one side planted nothing)."""
    key = ["protocol", "attacker", "server"]
    f = data[data["quantity"] == "fake users"]
    j = f[f["source"] == "this build"].merge(f[f["source"] == "benchmark"], on=key, suffixes=("", "_bench"))
    ratio = (j["first"] / j["first_bench"]).fillna(np.inf).where(j["first"].notna() | j["first_bench"].notna(), 1.0)
    return pd.DataFrame({"point": [f"{p}, {a}, {s}" for p, a, s in zip(j["protocol"], j["attacker"], j["server"])],
                         "value": ratio, "target": 1.0})


#: our claims' bars: the factor up to which a check or the defence counts as buying nothing, the defence's
#: largest factor, and "a few percent": the share of the users below which the minimal attack plants one target
FREE, DEFENCE_FACTOR, FEW_PERCENT = 1.25, 1.5, 0.03
_ORDER: ClaimFields = {"floor": None, "ceiling": None}
_MANY: ClaimFields = {"figure": NAMES["sixteen-targets"], **CLAIM_FIELDS}
_ONE: ClaimFields = {"figure": NAMES["one-target"], **CLAIM_FIELDS}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="malicious-adaptive-one-each", section="7", ref="Chapter 09, the attacker who knows every check (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="the share the one-target-each attacker needs for 8 of 16 targets with the server's checks "
                         "on, against 1.25 times her share without them (the searches' precision), every protocol "
                         "where she plants them within 50 %",
                    measure=lambda store: one_each_passes(store.figure(NAMES["sixteen-targets"]), FREE),
                    rule=R.OrderingHolds(what="1.25 × share without the checks ≥ share with them", **_ORDER),
                    **_MANY)),
    Claim(id="malicious-adaptive-defence", section="7", ref="Chapter 09, the defence on the aggregates (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="the cheapest attacker's share with the checks and the defence on (its guard: honest F1 "
                         "lost at most 0.1), against 1.5 times her share with the checks alone, every protocol, "
                         "16 targets and one target: the defence raises it by at most a factor 1.5",
                    measure=_defence, reads=tuple(NAMES.values()),
                    rule=R.OrderingHolds(what="1.5 × share with the checks ≥ share with the checks and the defence",
                                         **_ORDER), **_MANY)),
    Claim(id="malicious-adaptive-one-target", section="7", ref="Chapter 09, the minimal attack (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="the smallest share of fake users that plants one fresh target with the checks and the "
                         "defence on, every protocol, against a few percent (3 %) of the users",
                    measure=lambda store: floor_points(store.figure(NAMES["one-target"])),
                    rule=R.OrderingHolds(what="3 % ≥ the smallest share that plants the target", **_ORDER), **_ONE)),
    Claim(id="malicious-adaptive-rerun", section="7", ref="Chapter 09, the committed searches rerun (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="this build's run of the one-target table's first search (PEM with OLH, maximal gain, the "
                         "four servers, the benchmark's seeds) over the committed shares: within 10 %, the "
                         "searches' precision",
                    measure=lambda store: reproduced(store.figure(NAMES["one-target"])),
                    rule=R.WithinTolerance(0.1, what="this build's share over the committed one"), **_ONE)),
)
