"""The variance of OLH against its hash range d', and of GRR against OLH (chapter 01; paper section 2.2, eqs. (1)-(3)).

Not a paper figure: it draws what section 2.2 says in words, "the optimal choice
of d' is e^eps + 1" and "for smaller d, one is better off with GRR; but for large
d, OLH is better", and the two claims read it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import seaborn.objects as so
from matplotlib.ticker import FuncFormatter

from ...claims import rules as R
from ...claims.claim import Alternative, Claim, MissingInput, Test
from ...plotting import count_label, render, series_colors
from .compute import dprime_ratios, grr_olh_ends, variance_curves

__all__ = ["NAME", "ENGINES", "TITLES", "frame", "draw", "CLAIMS"]

NAME = "fig-oracles-variance-dprime"
ENGINES = {NAME: "closed form (ldp.analysis)"}
TITLES = {NAME: "eq. (1), (3)"}
_CURVE, _REAL, _INT, _INTS = "OLH Var(d') / Var(d' = e^eps + 1)", "d' = e^eps + 1", "d' = ceil(e^eps + 1)", "integer d'"
_GRR, _OLH, _CROSS = "GRR, eq. (var_grr)", "OLH, eq. (var_olh) (horizontal line)", "crossing d = 3e^eps + 2"


def frame(olh_var_dprime: Callable, *, epsilons: Sequence[float] = (0.5, 1.0, 2.0, 4.0),
          grr_epsilons: Sequence[float] = (1.0, 4.0)) -> pd.DataFrame:
    """The figure's data: ``panel, series, epsilon, x, y``.

    Panel a: OLH's variance ``olh_var_dprime(eps, d', 1)`` (eq. (2)'s variance at
    zero frequency, e.g. the chapter's ``sympy`` expression) against ``d'``,
    divided by eq. (3); the real optimum ``e^eps + 1`` and the integer
    ``ceil(e^eps + 1)`` that :class:`ldp.oracles.OLH` uses.  Panel b: eq. (1)
    of GRR against the domain size ``d``, eq. (3) (``x`` empty: a horizontal
    line) and the crossing ``d = 3 e^eps + 2``.
    """
    return variance_curves(olh_var_dprime, epsilons=epsilons, grr_epsilons=grr_epsilons,
                           labels=(_CURVE, _REAL, _INT, _GRR, _OLH, _CROSS, _INTS))


#: a log axis with plain tick labels (0.01, 1, 100, 10k, 1M: no superscripts, which a phone shows too small)
_LOG = so.Continuous(trans="log").label(FuncFormatter(lambda v, _: count_label(v)))


def draw(data: pd.DataFrame):
    """(a) OLH's variance against ``d'`` per ε, the two ``d'`` marked; (b) GRR's eq. (1) against OLH's eq. (3)."""
    d = data.assign(eps=data["epsilon"].map(lambda e: f"ε = {e:g}"))
    eps = list(dict.fromkeys(d.loc[d["panel"] == "a", "eps"]))
    colors = so.Nominal(dict(zip(eps, series_colors(len(eps)))), order=eps)
    a, b = d[d["panel"] == "a"], d[d["panel"] == "b"]
    grr = b[b["series"] == _GRR]
    olh = b[b["series"] == _OLH].merge(grr.groupby("eps")["x"].agg(["min", "max"]), on="eps")
    olh = pd.concat([olh.assign(x=olh["min"]), olh.assign(x=olh["max"])], ignore_index=True)  # its horizontal line
    marks = so.Nominal({_REAL: "o", _INT: "x"}, order=[_REAL, _INT])
    panel_a = (so.Plot(a[a["series"] == _CURVE], x="x", y="y", color="eps").add(so.Line())
               .add(so.Dot(pointsize=6, fill=False), data=a[a["series"].isin([_REAL, _INT])], x="x", y="y", color="eps",
                    marker="series")
               .scale(x=_LOG, color=colors, marker=marks).limit(y=(0.95, 2.0))
               .label(x="hash range $d'$", y="Var$(d')$ / its minimum",
                      title="(a) OLH variance against $d'$", color="", marker=""))
    panel_b = (so.Plot(grr, x="x", y="y", color="eps").add(so.Line())
               .add(so.Line(linestyle="--"), data=olh, x="x", y="y", color="eps")
               .add(so.Dot(marker="s"), data=b[b["series"] == _CROSS], x="x", y="y", color="eps")
               .scale(x=_LOG, y=_LOG, color=colors)
               .label(x="domain size $d$", y="Var / $n$ (zero-frequency value)", title="(b) GRR against OLH (dashed)",
                      color=""))
    return render([panel_a, panel_b], height=3.2, ncol=6)


# --------------------------------------------------------------------------- claims: section 2.2.2
def _m_dprime_optimal(store, series: str = _CURVE):
    """Var(d') / Var(e^eps + 1) on the curve against 1, or at each integer d' against the oracle's ⌈e^ε + 1⌉."""
    if (t := dprime_ratios(store.figure(NAME), series, against=None if series == _CURVE else _INT)).empty:
        raise MissingInput(f"{NAME} has no panel (a) series {series!r}")
    return t


def _m_grr_vs_olh(store):
    t = grr_olh_ends(store.figure(NAME), grr=_GRR, olh="OLH")
    if t.empty:
        raise MissingInput(f"{NAME} has no panel (b) curves")
    return t


CLAIMS: tuple[Claim, ...] = (
    Claim(id="s2-olh-dprime-optimal", section="2.2.2", ref="OLH, d' = exp(ε) + 1",
          quote=r"it is found that the optimal choice of $d'$ is $e^\epsilon+1$",
          says="d' = exp(ε) + 1 minimises OLH's variance",
          test=Test(what="Var(d') / Var(exp(ε) + 1) ≥ 1 at every d' of the curve (ε = 0.5, 1, 2, 4)",
                    measure=_m_dprime_optimal,
                    rule=R.OrderingHolds(floor=None, ceiling=None, what="Var(d') at least Var(d' = exp(ε) + 1)"),
                    chapter="01_frequency_oracles", figure=NAME, rests_on=("the-integer-d",),
                    other_readings=(Alternative("over the integers an oracle can use: ⌈e^ε + 1⌉ no worse than any "
                                                "integer d'",
                                                "the-integer-d", lambda store: _m_dprime_optimal(store, _INTS)),))),
    Claim(id="s2-grr-vs-olh", section="2.2.2", ref="eq. (1) against eq. (3)",
          quote=r"This suggests that for smaller $d$, one is better off with \grr; but for large $d$, \olh is better",
          says="GRR better for small d, OLH for large d",
          test=Test(what="at the smallest d of the curve GRR's variance is below OLH's, at the largest above",
                    measure=_m_grr_vs_olh,
                    rule=R.OrderingHolds(strict=True, floor=None, ceiling=None,
                                         what="the named oracle has the smaller variance"),
                    chapter="01_frequency_oracles", figure=NAME)),
)
