"""Paper Figure 2 (section 5.1, chapter 05): each value's identification probability, simulated and by eq. (5).

:func:`frame` takes :func:`ldp.book.chapters.c05_validation.compute.identification_table` (the
simulated rate and eq. (5) of each of the top-32 values, per setting).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ...claims import rules as R
from ...claims.claim import Alternative, Claim, MissingInput, Readings, Test
from ...plotting import count_label, interval, render, series_colors
from .compute import binomial_se, level_label

__all__ = ["NAME", "ENGINES", "MARKERS", "SIMULATION", "ANALYSIS", "frame", "draw", "CLAIMS"]

NAME = "fig-validation-identification"
ENGINES = {NAME: "count engine (100 runs) against eq. (5)",
           "05_validation/identification-text": "count engine (100 runs) against eq. (5), at the text's n"}
_TITLES = {"a": "(a) different $n$", "b": "(b) different $m$", "c": r"(c) different $\varepsilon$"}


def frame(ident: pd.DataFrame) -> pd.DataFrame:
    """The figure's data: ``panel, axis, level, rank, frequency, simulated_rate, errorbar_2se, runs, analysis``.

    ``errorbar_2se`` is 2 binomial standard errors of the simulated rate over its ``runs``.
    """
    out = ident.assign(errorbar_2se=2 * np.sqrt(ident["sim"] * (1 - ident["sim"]) / ident["runs"]))
    return out.rename(columns={"sim": "simulated_rate"})[
        ["panel", "axis", "level", "rank", "frequency", "simulated_rate", "errorbar_2se", "runs", "analysis"]]


#: a marker per level of a panel (the colour says the same: two cues, for any colour vision)
MARKERS = ("o", "s", "^", "D", "v", "P")
#: the legend entries that say which marks are simulation and which analysis
SIMULATION, ANALYSIS = "simulation: marks (± 2 SE)", "analysis, eq. (5): lines"


def draw(data: pd.DataFrame):
    """Identification rate (marks, ± 2 binomial SE cut at 0 and 1) and eq. (5) (lines) against the frequency.

    Each panel has its legend of levels, light to dark (:func:`~ldp.book.plotting.series_colors`, a marker
    per level); one legend above all says which marks are simulation and which analysis.
    """
    series = [f"n = {count_label(v)}" if a == "n" else level_label(a, v) for a, v in zip(data["axis"], data["level"])]
    d = interval(data, "simulated_rate", "errorbar_2se").assign(title=data["panel"].map(_TITLES), series=series)
    plots = []
    for panel, grp in d.groupby("panel", sort=True):
        levels = list(dict.fromkeys(grp["series"]))
        plots.append(so.Plot(grp, x="frequency", color="series")
                     .add(so.Line(linewidth=1.3), y="analysis")
                     .add(so.Dot(pointsize=4), y="simulated_rate", marker="series")
                     .add(so.Range(linewidth=0.8), ymin="lo", ymax="hi")
                     .scale(x=so.Continuous(trans="log").label(like="{x:g}"),
                            color=so.Nominal(dict(zip(levels, series_colors(len(levels)))), order=levels),
                            marker=so.Nominal(dict(zip(levels, MARKERS)), order=levels))
                     .limit(y=(-0.03, 1.03))
                     .label(x="frequency of the value", y="identification probability" if panel == "a" else "",
                            title=grp["title"].iloc[0], color="", marker=""))
    return render(plots, height=3.9, legend="panels",
                  extra={SIMULATION: Line2D([], [], color="k", marker="o", ms=4, ls="none"),
                         ANALYSIS: Line2D([], [], color="k", lw=1.3)})


# --------------------------------------------------------------------------- claims: section 5.1
#: the other reading of Figure 2's default n (the text's 100,000, not the caption's 1,000,000): the same frame,
#: saved by chapter 05 as the table ``05_validation/identification-text``
TEXT_N = ("05_validation", "identification-text")
_TEXT = "the text's default n = 100,000 (section 5.1), not the caption's 1,000,000"


def _fig(store, text: bool = False) -> pd.DataFrame:
    return store.load(*TEXT_N) if text else store.figure(NAME)


def _m_match(store, text: bool = False):
    d = _fig(store, text)
    return pd.DataFrame({
        "point": [f"({p}) {level_label(a, lv)}, rank {int(r)}" for p, a, lv, r in
                  zip(d["panel"], d["axis"], d["level"], d["rank"])],
        "observed": d["simulated_rate"], "expected": d["analysis"], "se": binomial_se(d["analysis"], d["runs"])})


def _found(store, column: str, text: bool = False) -> pd.DataFrame:
    """Heavy hitters found (the sum of the rates) per setting, simulated (``column="sim"``) or by eq. (5)."""
    d = _fig(store, text)
    d = d.assign(var=binomial_se(d["simulated_rate"], d["runs"]) ** 2)
    grp = d.groupby(["panel", "axis", "level"], as_index=False).agg(
        sim=("simulated_rate", "sum"), analysis=("analysis", "sum"), var=("var", "sum"))
    grp["se"] = np.sqrt(grp["var"]) if column == "sim" else 0.0
    return grp.rename(columns={column: "y", "level": "x"})


def _m_trend(axis: str, text: bool = False):
    def measure(store):
        grp = _found(store, "sim", text)
        grp = grp[grp["axis"] == axis]
        if grp.empty:
            raise MissingInput(f"{NAME} has no panel varying {axis}")
        return grp.assign(series=f"heavy hitters found (sum of rates), varying {axis}")[["series", "x", "y", "se"]]
    return measure


def _m_trend_analysis(store, text: bool = False):
    grp = _found(store, "analysis", text)
    grp = grp.assign(x=np.where(grp["axis"] == "m", -grp["x"], grp["x"]),  # shorter values are better: reverse m
                     series="analysis, varying " + grp["axis"].map({"n": "n", "m": "m (reversed)", "epsilon": "ε"}))
    return grp[["series", "x", "y", "se"]]


def _trend(axis: str, ref: str, quote: str, paper: str, tested: str, direction: str, **parts) -> Claim:
    return Claim(id=f"fig2-{ref}", section="5.1", ref=f"Figure 2({'abc'[['n', 'm', 'epsilon'].index(axis)]})",
                 quote=quote, says=paper,
                 test=Test(what=tested, measure=_m_trend(axis), rule=R.Monotone(direction), chapter="05_validation",
                           figure=NAME, rests_on=(Readings.GRIDS, Readings.FIG2_N),
                           other_readings=(Alternative(_TEXT, Readings.FIG2_N, _m_trend(axis, text=True)),)),
                 **parts)


#: the result tables this module's claims read (beside figure CSVs): name -> (columns, what it holds)
TABLES = {"identification-text": (("panel", "axis", "level", "rank", "simulated_rate", "runs", "analysis"),
                                  "Figure 2 under the text's default n = 100,000 (the figure: the caption's 10^6)")}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig2-analysis-matches", section="5.1", ref="Figure 2, eq. (5)",
          quote=r"We observe that, first of all, the analysis matches the empirical result pretty well.",
          says="analysis matches simulation",
          test=Test(what="simulated identification rate against eq. (5), every rank "
                        "and level",
                    measure=_m_match, rule=R.WithinSE(), chapter="05_validation", figure=NAME,
                    rests_on=(Readings.SLOTS, Readings.COMPETITORS, Readings.FIG2_N, Readings.ZIPF),
                    other_readings=(Alternative(_TEXT, Readings.FIG2_N, lambda store: _m_match(store, text=True)),))),
    _trend("n", "more-users", r"the more users (larger $n$),", "larger n, better",
           "heavy hitters found (sum of the rates) against n", "increasing", parts=(
               _trend("m", "shorter-values", r"the shorter the domain length (smaller $m$),", "smaller m, better",
                      "heavy hitters found against m", "decreasing"),
               _trend("epsilon", "larger-eps", r"or the larger the privacy budget (larger $\epsilon$),",
                      "larger ε, better", "heavy hitters found against ε", "increasing"))),
    Claim(id="fig2-trend-analysis", section="5.1", ref="Figure 2", quote=r"This trend also matches the analysis.",
          says="the analysis shows the same trends",
          test=Test(what="expected heavy hitters found by eq. (5) against n, m (reversed), ε",
                    measure=_m_trend_analysis, rule=R.Monotone("increasing"), chapter="05_validation", figure=NAME,
                    rests_on=(Readings.SLOTS, Readings.FIG2_N),
                    other_readings=(Alternative(_TEXT, Readings.FIG2_N, lambda store: _m_trend_analysis(store,
                                                                                                        text=True)),))),
)
