"""Paper Figure 1 (section 3, chapter 02): how the strawman, SPM, MCM and PEM split the users and the bits.

Drawn from the protocols' own plans: one bar per question a user group
answers (:func:`frame`), so the figure cannot disagree with the code that runs.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.patches import Rectangle

from ....protocols import MCM, PEM, SPM, Strawman
from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Claim, MissingInput, Readings, Test
from ...claims.measures import one
from ...plotting import METHOD_STYLE, render
from .compute import plan_bars

__all__ = ["NAME", "ENGINES", "protocols", "frame", "draw", "CLAIMS"]

NAME = "fig-existing-all-methods"
ENGINES = {NAME: "protocol configurations (no simulation)"}
_PANEL = {"Strawman": "a", "SPM": "b", "MCM": "c", "PEM": "d"}


def protocols(epsilon: float, k: int, *, query_limit: int, m: int = 64) -> dict:
    """The four protocols of Figure 1 at the paper's illustration: 16-bit segments, 1-bit MCM blocks, 16-bit PEM steps.

    PEM's 4 steps of 16 bits (``gamma = 0, eta = 16``) test ``16 * 2**16``
    prefixes per step, more than ``2**20`` queries in all: its limit is raised to ``4 * 2**20``.
    """
    return {"Strawman": Strawman(epsilon, k, m, query_limit=query_limit, segments=4),
            "SPM": SPM(epsilon, k, m, query_limit=query_limit, segments=4),
            "MCM": MCM(epsilon, k, m, query_limit=query_limit, block_bits=1),
            "PEM": PEM(epsilon, k, m, gamma=0, eta=16, query_limit=4 * 2**20)}


def frame(protocols: Mapping, n: int) -> pd.DataFrame:
    """The figure's data: one row per bar, read from each protocol's plan for ``n`` users (``protocol.plan(n)``).

    Columns ``panel, method, group, group_label, bar, bit_start, bit_stop,
    budget, channels``: the bit range each group reports, its share of the
    budget (:func:`ldp.book.plotting.tables.share`), MCM's number of
    channels; ``bar`` says what it is (a segment, PEM's new bits or the prefix
    known from ``C_{i-1}``, the whole value).
    """
    return plan_bars(protocols, n, panels=_PANEL)


_SHADES = {"segment reported": 1.0, "new bits tested": 1.0, "prefix in C_{i-1}": 0.3, "whole value": 0.25}


def _groups(bars: pd.DataFrame, m: int) -> so.Plot:
    """One row per user group, one bar per bit range it reports; the whole value a thin bar under it."""
    name = bars["method"].iloc[0]
    d = bars.assign(mid=(bars["bit_start"] + bars["bit_stop"]) / 2, alpha=bars["bar"].map(_SHADES),
                    start=np.where(bars["method"] == "PEM", 0, bars["bit_start"]))
    d = d.assign(text=[f"v[{s}:{e}]\n{b}" if a == 1 else "" for s, e, b, a in
                       zip(d["start"], d["bit_stop"], d["budget"], d["alpha"])])
    whole, parts = d[d["bar"] == "whole value"], d[d["bar"] != "whole value"]
    order = list(dict.fromkeys(bars["group_label"]))
    return (so.Plot(parts, y="group_label", x="bit_stop").add(so.Bar(width=0.6, edgecolor="black", edgewidth=0.5,
                                                                     color=METHOD_STYLE[name]["color"]),
                                                              baseline="bit_start", alpha="alpha")
            .add(so.Bar(width=0.12, color="0.6"), so.Shift(y=0.4), data=whole, y="group_label", x="bit_stop",
                 baseline="bit_start")
            .add(so.Text(color="white", fontsize=9), data=parts[parts["text"] != ""], y="group_label", x="mid",
                 text="text")
            .scale(baseline=None, alpha=None, y=so.Nominal(order=order), x=so.Continuous().tick(every=16))
            .limit(x=(0, m)).label(y="", x="bit position"))


def _mcm(bars: pd.DataFrame, m: int) -> so.Plot:
    """MCM's channels: a block per bit (user group), as tall as the number of channels (channel 0 on top)."""
    blocks = bars[bars["bar"] == "bits on every channel"]
    d = blocks.assign(x=(blocks["bit_start"] + blocks["bit_stop"]) / 2, tone=(blocks["group"] - 1) % 2)
    tones = so.Nominal({0: METHOD_STYLE["MCM"]["color"], 1: "#98df8a"})
    return (so.Plot(d, x="x", y="channels", color="tone").add(so.Bar(width=1.0, edgewidth=0), legend=False)
            .scale(color=tones, x=so.Continuous().tick(every=16)).limit(x=(0, m), y=(int(d["channels"].max()), -8))
            .label(x="bit position = user group $\\ell$", y="channel $H(v)$"))


def draw(data: pd.DataFrame, protocols: Mapping, n: int):
    """Paper Figure 1 from :func:`frame`: (a) strawman, (b) SPM, (c) MCM, (d) PEM.

    ``protocols`` (those of the frame) and ``n`` give the titles' counts: the
    strawman's product of candidates, MCM's channels and PEM's steps.
    """
    m = protocols["Strawman"].m
    by = {name: data[data["method"] == name] for name in _PANEL}
    fig = render([_groups(by["Strawman"], m), _groups(by["SPM"], m), _mcm(by["MCM"], m), _groups(by["PEM"], m)],
                 height=8.2, grid=(2, 2), legend=None)
    ax_a, ax_b, ax_c, ax_d = fig.axes[:4]
    groups = {name: P.plan(n, rng=0).n_groups for name, P in protocols.items()}
    S, M, cfg = protocols["Strawman"], protocols["MCM"], protocols["PEM"].config(n)
    ax_a.set_title(f"(a) Strawman: users partitioned into\nC({S.segments},1) = {groups['Strawman']} groups,\n"
                   "each reporting one segment")
    ax_a.set_xlabel("bit position\ncandidates: $C_1\\times\\cdots\\times C_{" + str(S.segments)
                    + f"}}$\n= {'·'.join(map(str, S.top_sizes))} = {math.prod(S.top_sizes):,} values")
    ax_b.set_title(f"(b) SPM: users partitioned into\nC({protocols['SPM'].segments},2) = {groups['SPM']} groups,\n"
                   "each reporting a pair of segments")
    ax_b.set_xlabel(f"bit position\ncandidates: values all of whose\n{len(protocols['SPM'].pairs)} segment pairs "
                    "are frequent")
    ax_c.set_title(f"(c) MCM: users partitioned into\n{groups['MCM']} groups, each reporting\none bit on multiple "
                   "channels")
    ax_c.set_xlabel(f"bit position = user group $\\ell$\ncandidates: one per channel, at most {M.channels} values")
    h = int(by["MCM"]["channels"].max())
    ax_c.add_patch(Rectangle((0, -7), m, 4, fc="0.6", lw=0))  # the whole value, every user
    ax_c.add_patch(Rectangle((0, h // 3), m, 1, fill=False, ec="red", lw=1.3))
    ax_c.annotate("one channel: its winning bit\nin every group = one candidate", xy=(m * 0.75, h // 3 + 1),
                  xytext=(m * 0.6, h // 3 + 16), color="red", ha="center", bbox=dict(fc="white", ec="red", lw=0.6),
                  arrowprops=dict(arrowstyle="->", color="red", lw=0.8))
    ax_d.set_title(f"(d) PEM: users partitioned into\n{groups['PEM']} groups,\neach reporting a prefix")
    ax_d.set_xlabel(f"bit position\ncandidates: $D_1 = \\{{0,1\\}}^{{{cfg.prefix_lengths[0]}}}$, "
                    f"$D_i = C_{{i-1}}\\times\\{{0,1\\}}^{{{cfg.etas[1]}}}$;\nthe last group is the final test")
    for ax in fig.axes[:4]:
        ax.grid(False)
    budgets = data[data["bar"] == "whole value"].groupby("method", sort=False)["budget"].first()
    fig.suptitle("grey bar: the whole value, sent by every user: " + ", ".join(f"{k} {v}" for k, v in
                                                                                     budgets.items())
                 + "\nPEM: light = prefix known from $C_{i-1}$, dark = new bits tested", fontsize=9)
    return fig


# --------------------------------------------------------------------------- claims: section 3.3
def _m_groups(method: str, paper_groups: int, evaluated: bool = False):
    """The groups of our Figure 1's protocol, or (``evaluated``) of the one section 6 runs (the chapter's table)."""
    def measure(store):
        if evaluated:
            t = store.load("02_existing_methods", "configurations").query("m == 64 and protocol == @method")
            return one(f"{method} as section 6 runs it (m = 64): user groups", t["groups"].iloc[0], paper_groups)
        d = store.figure(NAME)
        d = d[(d["method"] == method) & (d["bar"] != "whole value") & (d["group"] != 0)]
        if d.empty:
            raise MissingInput(f"{NAME} has no {method} panel")
        return one(f"{method}: user groups reporting parts of the value", d["group"].nunique(), paper_groups)
    return measure


def _claim(method: str, groups: int, panel: str, quote: str, tested: str, stand_in: str = "", note: str = "") -> Claim:
    """Figure 1's panel of ``method``: ``groups`` groups; a stand-in (SPM, MCM) also as section 6 runs it."""
    reading = {"spm": Readings.SPM, "mcm": Readings.MCM}.get(stand_in)
    other = (Alternative(f"{method} as section 6 runs it (section 6.1's improvements, the budget split)", reading,
                         _m_groups(method, groups, True)),) if reading else ()
    return Claim(id=f"fig1-{method.lower()}-groups", section="3.3", ref=f"Figure 1({panel})", quote=quote,
                 says=f"{groups} groups", note=note,
                 test=Test(what=tested, measure=_m_groups(method, groups),
                           rule=R.WithinTolerance(V.COUNT_TOL, "a count"), chapter="02_existing_methods", figure=NAME,
                           rests_on=(stand_in, reading) if reading else (), other_readings=other))


CLAIMS: tuple[Claim, ...] = (
    _claim("Strawman", 4, "a", r"Users partitioned into ${4 \choose 1}=4$ groups, each reporting one segment",
           "groups of users reporting a segment in our Figure 1"),
    _claim("SPM", 6, "b", r"Users partitioned into ${4 \choose 2}=6$ groups, each reporting one pair of segments.",
           "groups of users reporting a pair of segments", stand_in="spm"),
    _claim("MCM", 64, "c", r"Users partitioned into $64$ groups, each reporting one bit on multiple channels.",
           "groups of users reporting one bit", stand_in="mcm",
           note="Figure 1 shows the original bit-per-user MCM; the evaluation uses blocks (section 6.1)."),
    _claim("PEM", 4, "d", r"Users partitioned into $4$ groups, each reporting a prefix.",
           "groups of users reporting a prefix"),
)
