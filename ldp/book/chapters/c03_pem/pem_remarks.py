"""Section 4.3's remarks on PEM's parameters (chapter 03): ``|C_i|`` against ``k``, and ``γ`` against ``η``.

Not a paper figure: sections 4.2 and 4.3 state in words that ``γ`` "should be slightly larger than ``η``", that
``|C_i|`` is smaller than ``k`` when ``k`` is very big and can be larger when ``k`` is small.  (a) is the
``|C_i|`` :func:`ldp.analysis.optimize_pem` keeps when it searches it
(:func:`~ldp.book.chapters.c03_pem.compute.candidate_sizes`); (b), (c) the predicted F1 of PEM with ``γ`` one
or two bits above ``η`` against the optimizer's choice
(:func:`~ldp.book.chapters.c03_pem.compute.gamma_above_eta`).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Because, Cause, Claim, ClaimFields, MissingInput, Readings, Test
from ...claims.measures import g
from ...plotting import render, series_colors

__all__ = ["NAME", "ENGINES", "TITLES", "CHOICE", "VERY_BIG_K", "SMALL_K", "frame", "draw", "CLAIMS"]

NAME = "fig-pem-remarks"
ENGINES = {NAME: "closed form, eq. (4)-(5) (ldp.analysis)"}
TITLES = {NAME: "section 4.3"}
CHOICE = "optimize_pem's choice"
#: "when k is very big": k of at least this (eight times the largest k the paper evaluates, 32)
VERY_BIG_K = 256
#: "when k is small": k of at most this (the k of the paper's evaluation, section 6)
SMALL_K = 16
_COLUMNS = ["panel", "k", "epsilon", "series", "x", "y", "y_paper", "saturated", "saturated_paper", "gamma", "etas",
            "domains"]


def frame(sizes: pd.DataFrame, gammas: pd.DataFrame) -> pd.DataFrame:
    """The figure's data: ``panel, k, epsilon, series, x, y, y_paper, saturated, saturated_paper, gamma, etas,
    domains``.

    Panel (a), from :func:`~ldp.book.chapters.c03_pem.compute.candidate_sizes`: ``x = k``, ``y = |C_i| / k`` of
    the optimizer's choice (``y_paper``: of its choice with the paper's ``N[i]``), ``saturated`` where the
    predicted F1 is 1.  Panels (b), (c), from :func:`~ldp.book.chapters.c03_pem.compute.gamma_above_eta`, one per
    ``k``: ``x = η``, ``y`` the predicted F1 of each configuration (``series``: ``"γ = η + 1"``, ``"γ = η + 2"``
    or :data:`CHOICE`).
    """
    own, paper = (sizes[sizes["model"] == m].set_index(["k", "epsilon"]) for m in ("lower", "paper"))
    a = own.assign(y_paper=paper["ratio"], saturated_paper=paper["saturated"]).reset_index()
    a = a.assign(panel="a", series="|C_i| / k", x=a["k"].astype(float), y=a["ratio"], domains="")
    panels = {k: "bcdefgh"[i] for i, k in enumerate(dict.fromkeys(gammas["k"]))}
    b = gammas.assign(panel=gammas["k"].map(panels), x=gammas["eta"].astype(float), y=gammas["predicted_f1"],
                      y_paper=np.nan, saturated=False, saturated_paper=False)
    return pd.concat([a[_COLUMNS], b[_COLUMNS]], ignore_index=True)


def draw(data: pd.DataFrame):
    """(a) ``|C_i| / k`` against ``k`` (log scale), one line per ε; (b), (c) predicted F1 against ``η`` with ``γ``
    one or two bits above it (solid, dashed), the optimizer's choice starred."""
    d = data.assign(eps=data["epsilon"].map(lambda e: f"ε = {e:g}"))
    eps = list(dict.fromkeys(d["eps"]))
    colors = so.Nominal(dict(zip(eps, series_colors(len(eps)))), order=eps)
    a = d[d["panel"] == "a"]
    plots = [so.Plot(a, x="x", y="y", color="eps").add(so.Line(marker="o", pointsize=4))
             .scale(color=colors, x=so.Continuous(trans="log2").tick(at=[1, 8, 64, 512]).label(like="{x:g}"))
             .label(x="k", y="|C_i| / k", title="(a) |C_i| the optimizer keeps", color="")]
    for panel in sorted(set(d["panel"]) - {"a"}):
        part = d[d["panel"] == panel]
        lines = part[part["series"] != CHOICE]
        plots.append(so.Plot(lines, x="x", y="y", color="eps", linestyle="series").add(so.Line(marker=".", pointsize=4))
                     .add(so.Dot(marker="*", pointsize=12, edgecolor="black"), data=part[part["series"] == CHOICE],
                          x="x", y="y", color="eps", linestyle=None)
                     .scale(color=colors, linestyle=so.Nominal(["-", "--"]))
                     .limit(y=(0, 1.02))
                     .label(x="η (bits per round)", y="predicted F1", linestyle="",
                            title=f"({panel}) k = {int(part['k'].iloc[0])}, γ above η", color=""))
    fig = render(plots, height=3.1, ncol=3,
                 extra={"γ = η + 1": Line2D([], [], color="k", lw=1.2),
                        "γ = η + 2": Line2D([], [], color="k", lw=1.2, ls="--"),
                        CHOICE + " (γ = ⌈log2 k⌉)": Line2D([], [], marker="*", color="w", mec="k", ms=11, ls="none")})
    fig.axes[0].axhline(1.0, color="0.5", lw=0.8, ls=":", zorder=0)  # |C_i| = k, the rule
    return fig


# --------------------------------------------------------------------------- claims: sections 4.2, 4.3
def _sizes(store, *, big: bool, paper: bool = False) -> pd.DataFrame:
    """Panel (a)'s points at very big (``big``) or small k, not saturated: 1 against ``|C_i| / k``."""
    d = store.figure(NAME)
    d = d[d["panel"] == "a"]
    y, sat = ("y_paper", "saturated_paper") if paper else ("y", "saturated")
    d = d[(d["k"] >= VERY_BIG_K) if big else (d["k"] <= SMALL_K)]
    d = d[~d[sat].astype(bool) & d[y].notna()]
    if d.empty:
        raise MissingInput(f"{NAME} has no {'very big' if big else 'small'} k with an unsaturated choice")
    label = [f"k = {int(k)}, ε = {g(e)}: |C_i| = {r * k:g}" for k, e, r in zip(d["k"], d["epsilon"], d[y])]
    return pd.DataFrame({"point": label, "a": 1.0, "se_a": 0.0, "b": d[y].to_numpy(float), "se_b": 0.0})


def _m_small_k(store, paper: bool = False) -> pd.DataFrame:
    """At small k: ``|C_i| / k`` against 1 (the ordering holds where ``|C_i|`` is larger than ``k``)."""
    d = _sizes(store, big=False, paper=paper)
    return d.assign(a=d["b"], b=1.0)


def _gamma_points(store) -> pd.DataFrame:
    d = store.figure(NAME)
    d = d[d["panel"] != "a"]
    if d.empty or not (d["series"] == CHOICE).any():
        raise MissingInput(f"{NAME} has no configuration with γ above η")
    return d


def _m_gamma_above(store) -> pd.DataFrame:
    """Per (k, ε): the best predicted F1 with γ one or two bits above η against the optimizer's (γ = ⌈log2 k⌉)."""
    rows = []
    for (k, eps), grp in _gamma_points(store).groupby(["k", "epsilon"], sort=False):
        above, choice = grp[grp["series"] != CHOICE], grp[grp["series"] == CHOICE].iloc[0]
        if above.empty:
            continue
        best = above.loc[above["y"].idxmax()]
        rows.append({"point": f"k = {int(k)}, ε = {g(eps)}: γ = {int(best.gamma)}, η = {int(best.x)} against "
                              f"γ = {int(choice.gamma)}, {choice.etas}", "a": best.y, "se_a": 0.0, "b": choice.y,
                     "se_b": 0.0})
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])


def _m_same_domains(store) -> pd.DataFrame:
    """The stated purpose, per (k, ε) of the optimizer's choice: log2 of the largest |D_i| over the smallest."""
    rows = []
    for (k, eps), grp in _gamma_points(store).groupby(["k", "epsilon"], sort=False):
        choice = grp[grp["series"] == CHOICE].iloc[0]
        domains = [int(v) for v in re.findall(r"\d+", str(choice.domains))]
        rows.append({"point": f"k = {int(k)}, ε = {g(eps)}: |D_i| = {choice.domains}",
                     "value": float(np.log2(max(domains) / min(domains))), "target": 0.0})
    return pd.DataFrame(rows, columns=["point", "value", "target"])


def _c_gamma_above(store) -> Because:
    """The settings where no γ one or two bits above η comes within the margin of the optimizer's choice, and the
    largest shortfall (eq. (4) is exact: no noise)."""
    m = _m_gamma_above(store)
    n = R.OrderingHolds(margin=V.EQUIVALENT_F1, floor=None, ceiling=None).decide(m).numbers
    worst = m.loc[(m["b"] - m["a"]).idxmax()]
    return Because("genuine", (
        f"eq. (4), exact: at {n['losses']} of {n['points']} setting{'s' * (n['points'] != 1)} no γ one or two bits "
        f"above η comes within {V.EQUIVALENT_F1:g} of the optimizer's γ = ⌈log2 k⌉, below its η (largest shortfall "
        f"{worst['b'] - worst['a']:.3f}, {worst['point'].split(':')[0]})"), {"gap": float(n["losses"])})


_FIG: ClaimFields = dict(chapter="03_pem", figure=NAME, setting={"m_bits": 64, "query_limit": 2 ** 20})
_PAPER_N = "eq. (5) with the paper's N[i] = |D_i| − k (competitors='paper') in the optimizer, not its lower N_j"
_CANDS = "candidates-kept-and-the-first-segment-sections-42-43"
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s42-gamma-above-eta", section="4.2", ref="γ against η",
          quote=r"Typically, $\gamma$ should be slightly larger than $\eta$, to make the candidate set size roughly "
                r"the same in each step.",
          says="γ slightly larger than η",
          note="Section 4.2.2 then fixes γ = ⌈log2 k⌉, and section 4.3's optimal configuration has γ = 4 and "
               "η = 12 for k = 16: γ well below η.",
          test=Test(what="best predicted F1 (eq. (4)) of PEM with γ one or two bits above η, within the query limit, "
                         "against optimize_pem's choice (γ = ⌈log2 k⌉), per k and ε",
                    measure=_m_gamma_above,
                    rule=R.OrderingHolds(margin=V.EQUIVALENT_F1, floor=None, ceiling=None,
                                         what="γ slightly above η at least as good as the optimizer's choice"),
                    rests_on=(_CANDS, Readings.EQUIVALENCE, Readings.OPTIMIZER), cause=Cause("genuine", _c_gamma_above),
                    other_readings=(Alternative("the sentence's stated purpose: every round's candidate domain |D_i| "
                                                "of the optimizer's choice within a factor 2 of the others",
                                                _CANDS, _m_same_domains,
                                                R.WithinTolerance(1.0, "log2 of the largest |D_i| over the smallest: "
                                                                       "'roughly the same', within a factor 2")),),
                    **_FIG)),
    Claim(id="s43-cand-big-k", section="4.3", ref="candidates kept, |C_i|",
          quote=r"In some extreme cases, e.g., when $k$ is very big, $|C_i|$ is smaller than $k$,",
          says="|C_i| < k when k is very big",
          test=Test(what=f"|C_i| of optimize_pem's choice when it searches |C_i| (k ≥ {VERY_BIG_K}, ε = 1, 2, 4; "
                         "not where the predicted F1 saturates at 1)",
                    measure=lambda store: _sizes(store, big=True),
                    rule=R.OrderingHolds(share=V.SOME, strict=True, floor=None, ceiling=None,
                                         what="|C_i| / k below 1"),
                    rests_on=(_CANDS, Readings.OPTIMIZER, Readings.COMPETITORS),
                    other_readings=(Alternative(_PAPER_N, Readings.COMPETITORS,
                                                lambda store: _sizes(store, big=True, paper=True)),),
                    **_FIG)),
    Claim(id="s43-cand-small-k", section="4.3", ref="candidates kept, |C_i|",
          quote=r"On the other hand, when $k$ is small, $|C_i|$ can be large,",
          says="|C_i| > k when k is small",
          test=Test(what=f"|C_i| of optimize_pem's choice when it searches |C_i| (k ≤ {SMALL_K}, ε = 1, 2, 4; not "
                         "where the predicted F1 saturates at 1)",
                    measure=_m_small_k,
                    rule=R.OrderingHolds(share=V.SOME, strict=True, floor=None, ceiling=None,
                                         what="|C_i| / k above 1"),
                    rests_on=(_CANDS, Readings.OPTIMIZER, Readings.COMPETITORS),
                    other_readings=(Alternative(_PAPER_N, Readings.COMPETITORS,
                                                lambda store: _m_small_k(store, paper=True)),),
                    **_FIG)),
)
