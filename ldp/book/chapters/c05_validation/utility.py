"""Paper Figures 3 and 4 (sections 5.2, 5.3, chapter 05): PEM's utility, simulated and by eq. (4).

Figure 3 varies hand-made configurations (the rounds g, the first round's η[1]
and users n[1]); Figure 4 the optimizer's configuration over n, m and ε.  Both
are drawn alike from :func:`ldp.book.chapters.c05_validation.compute.utility_table`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from ....analysis import validation_setting, zipf_frequencies
from ....protocols import PEM
from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Because, Cause, Claim, ClaimFields, MissingInput, NotCovered, Readings, Test
from ...claims.measures import METRIC_NAMES, g, require, series
from ...plotting import count_label, interval, render
from .compute import distribution_ends, mirror_pairs, round_model_utility

__all__ = ["NAMES", "ENGINES", "DIST_STYLE", "SIMULATION", "ANALYSIS", "lower_panels", "frame", "draw", "CLAIMS"]

#: figure name by the paper's figure number
NAMES = {3: "fig-validation-configurations", 4: "fig-validation-optimal"}
ENGINES = {NAMES[3]: "count engine (100 runs) against eq. (4)", NAMES[4]: "count engine (100 runs) against eq. (4)"}
#: the two section 5 distributions: greys (data sets never take a method's colour)
DIST_STYLE = {"zipf": "#000000", "zipf(-20)": "#8a8a8a"}


def lower_panels(util: pd.DataFrame, tol: float = 0.01) -> list[str]:
    """Panels where the ``"lower"`` reading differs from the default analysis by more than ``tol``."""
    return [p for p, grp in util.groupby("panel", sort=True) if (grp["analysis"] - grp["lower"]).abs().max() > tol]


def frame(util: pd.DataFrame) -> pd.DataFrame:
    """The figure's data: ``panel, axis, dist, metric, x, simulated_mean, errorbar_2se, runs, analysis,
    analysis_lower, lower_drawn`` (``lower_drawn``: the panel is one of :func:`lower_panels`).
    """
    out = util.assign(errorbar_2se=2 * util["sem"].fillna(0.0), lower_drawn=util["panel"].isin(lower_panels(util)))
    return out.rename(columns={"sim": "simulated_mean", "lower": "analysis_lower"})[
        ["panel", "axis", "dist", "metric", "x", "simulated_mean", "errorbar_2se", "runs", "analysis",
         "analysis_lower", "lower_drawn"]]


#: the legend entries that say which marks are simulation and which analysis
SIMULATION, ANALYSIS = "simulation: marks (± 2 SE)", "analysis, eq. (4): lines"


def draw(data: pd.DataFrame, titles: Mapping[str, str], xlabels: Mapping[str, str], xlog: Sequence[str] = ()):
    """Simulated F1 and NCR (markers, ± 2 SE cut at 0 and 1) and eq. (4) (lines), one panel per ``titles`` key.

    Colour: distribution (:data:`DIST_STYLE`); filled circles and solid lines: F1; open squares
    and dashed lines: NCR; dotted: ``competitors="lower"`` in the panels where it differs.  The legend
    says which marks are simulation and which analysis.
    """
    d = interval(data, "simulated_mean", "errorbar_2se").assign(
        series=data["dist"] + ", " + data["metric"].map(METRIC_NAMES))
    order = [f"{dist}, {m}" for dist in DIST_STYLE for m in METRIC_NAMES.values()]
    look: dict[str, dict[str, Any]] = {
        s: dict(color=DIST_STYLE[s.split(", ")[0]], marker="o" if s.endswith("F1") else "s",
                linestyle="-" if s.endswith("F1") else "--", fill=s.endswith("F1")) for s in order}
    scales = {prop: so.Nominal({s: look[s][prop] for s in order}, order=order)
              for prop in ("color", "marker", "linestyle", "fill")}
    plots = []
    for panel in sorted(titles):
        grp = d[d["panel"] == panel].sort_values("x")
        xs = {"x": so.Continuous(trans="log" if panel in xlog else None)}
        if grp["x"].max() >= 10_000:  # numbers of users: 20k, 1M (tick labels that do not overlap)
            xs["x"] = xs["x"].label(FuncFormatter(lambda v, _: count_label(v)))
        plot = (so.Plot(grp, x="x", color="series", marker="series", linestyle="series", fill="series")
                .add(so.Line(linewidth=1), y="analysis", marker=None)
                .add(so.Dot(pointsize=4, stroke=1), y="simulated_mean")
                .add(so.Range(linewidth=0.8), ymin="lo", ymax="hi", linestyle=None)
                .scale(**scales, **xs).limit(y=(-0.03, 1.03))
                .label(x=xlabels[panel], y="utility score" if panel == min(titles) else "", title=titles[panel],
                       color="", marker="", linestyle="", fill=""))
        if grp["lower_drawn"].any():
            plot = plot.add(so.Line(linewidth=1, linestyle=":", alpha=0.7), y="analysis_lower", linestyle=None,
                            marker=None)
        plots.append(plot)
    entries = {s: Line2D([], [], color=v["color"], ls=v["linestyle"], lw=1, marker=v["marker"], ms=4,
                         mfc=v["color"] if v["fill"] else "white") for s, v in look.items()}
    entries[SIMULATION] = Line2D([], [], color="k", marker="o", ms=4, ls="none")
    entries[ANALYSIS] = Line2D([], [], color="k", lw=1)
    return render(plots, height=3.4, ncol=3, extra=entries)


# --------------------------------------------------------------------------- claims: sections 5.2, 5.3
_AXIS = {"g": "g", "etas": "η[1]", "group_fractions": "n[1]", "n": "n", "m": "m", "epsilon": "ε"}


def _points(store, name: str, k: int) -> pd.DataFrame:
    """Figure ``name``'s points with ``se``: errorbar_2se / 2, floored at one heavy hitter of ``k`` in one run."""
    d = (store.load(*name.split("/")) if "/" in name else store.figure(name)).copy()  # a figure or a table
    d["se"] = (d["errorbar_2se"].fillna(0.0) / 2).clip(lower=1.0 / (k * d["runs"].astype(float)))
    d["label"] = [f"({p}) {_AXIS[a]} = {x:g}, {dist}, {METRIC_NAMES[m]}" for p, a, x, dist, m in
                  zip(d["panel"], d["axis"], d["x"], d["dist"], d["metric"])]
    return d


def _m_match(name: str, k: int, analysis: str = "analysis"):
    def measure(store):
        d = _points(store, name, k)
        return pd.DataFrame({"point": d["label"], "observed": d["simulated_mean"], "expected": d[analysis],
                             "se": d["se"]})
    return measure


def _beyond(store, name: str, k: int) -> tuple[pd.DataFrame, dict[str, pd.Series], dict[str, int]]:
    """Figure ``name``'s points, their distance from eq. (4) in SE (the default count of competitors and the lower
    one) and how many points lie beyond 3 SE under each."""
    d = _points(store, name, k)
    z = {c: (d["simulated_mean"] - d[c]).abs() / d["se"] for c in ("analysis", "analysis_lower")}
    return d, z, {c: int((v > V.Z_TOL).sum()) for c, v in z.items()}


def _c_match(name: str, k: int):
    """Our reading of eq. (5)'s competitors: how many of the points beyond 3 SE the lower count of competitors
    leaves (the class's test: at most half)."""
    def explain(store):
        d, z, beyond = _beyond(store, name, k)
        w = d.loc[z["analysis"].idxmax()]
        return Because("reading", (
            f"the largest gap, {abs(w['simulated_mean'] - w['analysis']):.3f} at {w['label']}, is "
            f"{z['analysis'].max():.1f} SE; eq. (5) counts every value below rank k as a competitor, the paper's "
            f"N[i] = |D_i| − k: with the lower count of competitors (the k − j heavy values below rank j too) "
            f"{beyond['analysis_lower']} of the {beyond['analysis']} points beyond 3 SE "
            f"{'remains' if beyond['analysis_lower'] == 1 else 'remain'}" if beyond["analysis"] > 1 else
            f"the one point beyond 3 SE {'remains' if beyond['analysis_lower'] else 'is within'}"),
            {"misfit": beyond["analysis"], "misfit_other": beyond["analysis_lower"]})
    return explain


def _c_fig4(store) -> Because:
    """What eq. (5) misses where Figure 4's simulation and eq. (4) differ most: the values below rank k are not of
    frequency zero.  :func:`~ldp.book.chapters.c05_validation.compute.round_model_utility` computes the utility of
    the optimised configuration there with those values at zero (eq. (5)'s assumption) and at their own
    frequencies; the difference is what the model misses, against the gap observed."""
    k = 32
    d, z, beyond = _beyond(store, NAMES[4], k)
    w = d.loc[z["analysis"].idxmax()]
    params = store.parameters("05_validation") or {}
    setting = {**validation_setting("optimal"), w["axis"]: w["x"]}  # the panel's level, the others at their default
    n, m, eps = int(setting["n"]), int(setting["m"]), float(setting["epsilon"])
    drop = int(params.get("drop_top", 20)) if w["dist"] != "zipf" else 0
    freqs = zipf_frequencies(min(2 ** m, 2 ** 16), float(params.get("zipf_exponent", 1.5)), drop_top=drop)
    config = PEM(epsilon=eps, k=k, m=m).config(n)
    # the values far below rank k never clear a round's threshold: the top 64 k are enough to compete
    at_zero, own = (round_model_utility(config, eps, freqs[:64 * k], n=n, metric=w["metric"], zero_below_k=zero)
                    for zero in (True, False))
    off = (d["simulated_mean"] - d["analysis"])[z["analysis"] > V.Z_TOL]
    gap, lower = float(w["simulated_mean"] - w["analysis"]), beyond["analysis_lower"]
    side = "below" if gap < 0 else "above"
    return Because("genuine", (
        f"a systematic gap of the model: the simulation lies {side} eq. (4) at "
        + (f"{int(((off < 0) == (gap < 0)).sum())} of the {len(off)} points" if len(off) > 1 else "the one point")
        + f" beyond 3 SE, the farthest {abs(gap):.3f} {side} at {w['label']} "
        f"({z['analysis'].max():.1f} SE); eq. (5) gives every value below rank {k} frequency zero, but there rank "
        f"{k + 1} holds {freqs[k] / freqs[k - 1]:.1%} of rank {k}'s frequency; in a normal approximation of PEM's "
        f"{len(config.etas)} rounds (each keeping what clears the threshold above which |C_i| estimates are "
        f"expected) those values at their own frequencies move {METRIC_NAMES[w['metric']]} by {own - at_zero:+.3f} "
        f"(from {at_zero:.3f} with them at zero to {own:.3f}), what eq. (5) leaves out; the lower count of "
        f"competitors leaves " + ("it" if lower == len(off) == 1 else f"all {lower}" if lower == len(off)
                                  else f"{lower} of them") + " beyond 3 SE"),
        {"missed": own - at_zero, "observed": gap})


_LOWER = "eq. (5) with the lower count of competitors (competitors='lower'), not the paper's N[i] = |D_i| − k"


def _fig3(store, panel: str) -> pd.DataFrame:
    d = _points(store, NAMES[3], 16)
    d = d[d["panel"] == panel]
    if d.empty:
        raise MissingInput(f"{NAMES[3]} has no panel ({panel})")
    return series(d, ["dist", "metric"], "x", "simulated_mean", "se").assign(
        series=lambda f: f["series"].str.replace("f1", "F1").str.replace("ncr", "NCR"))


def _m_fig3(panel: str, center: float | None = None, keep=None):
    def measure(store):
        s = _fig3(store, panel)
        if center is not None:
            require(s["x"], center, {"b": "η[1]", "c": "n[1]"}[panel])
        return s if keep is None else s[s["x"].map(keep)]
    return measure


def _m_symmetry(panel: str, center: float):
    def measure(store):
        t = mirror_pairs(_fig3(store, panel), center)
        if t.empty:
            raise NotCovered(f"no two levels of panel ({panel}) mirror each other around {g(center)}")
        return t.assign(point=[f"{s}: {g(m)} against {g(x)}" for s, m, x in zip(t["series"], t["mirror"], t["x"])],
                        observed=t["y"], expected=t["y_mirror"], value=t["y"], target=t["y_mirror"])
    return measure


def _m_fig4_ends(favourable: bool, half: bool = False, name: str = NAMES[4]):
    """zipf against zipf(-20) at the unfavourable end of each panel (small n, large m, small ε), or the other; with
    ``half``, at every level of the panel's unfavourable (favourable) half."""
    def measure(store):
        t = distribution_ends(_points(store, name, 32), favourable=favourable, half=half)
        if t.empty:
            raise MissingInput(f"{name} lacks the zipf / zipf(-20) pairs")
        return t.assign(point=[f"({p}) {_AXIS[a]} = {x:g}, {METRIC_NAMES[m]}" for p, a, x, m in
                               zip(t["panel"], t["axis"], t["x"], t["metric"])])
    return measure


_HALF = "'unfavourable' and 'the other extreme' as every level of a panel's half, not only its end"
_ROUNDED, _ENDS = "Zipf counts n f_j rounded, not a multinomial sample of n users", "05_validation/fig4-rounded-ends"
_FIG3: ClaimFields = dict(chapter="05_validation", figure=NAMES[3])
_FIG4: ClaimFields = dict(chapter="05_validation", figure=NAMES[4])
CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig3-analysis-matches", section="5.2", ref="Figure 3, eq. (4)",
          quote=r"It can be seen that all points (empirical results) lie on the line (analytical results),",
          says="all points on the line",
          test=Test(what="simulated F1 and NCR against eq. (4), every point of the three "
                         "panels",
                    measure=_m_match(NAMES[3], 16), rule=R.WithinSE(),
                    rests_on=(Readings.COMPETITORS, Readings.SLOTS, Readings.ZIPF),
                    cause=Cause("reading", _c_match(NAMES[3], 16)),
                    other_readings=(Alternative(_LOWER, Readings.COMPETITORS, _m_match(NAMES[3], 16,
                                                                                       "analysis_lower")),),
                    **_FIG3)),
    Claim(id="fig3a-fewer-rounds", section="5.2", ref="Figure 3(a), Observation 1",
          quote=r"As a result, with more rounds of test, the overall result becomes worse.",
          says="utility falls with g",
          test=Test(what="simulated F1 and NCR against the number of rounds g, per data set", measure=_m_fig3("a"),
                    rule=R.Monotone("decreasing"), rests_on=(Readings.GRIDS,),
                    other_readings=(
                        Alternative("only the g that divide the 12 bits, so that η[i] = η in every round",
                                    Readings.GRIDS,
                                    _m_fig3("a", keep=lambda g_: 12 % g_ == 0)),),
                    **_FIG3)),
    Claim(id="fig3b-eta-optimal", section="5.2", ref="Figure 3(b), Observation 2",
          quote=r"when $\eta[1]=6$ (both rounds analyzes a domain of $2^{10}$ values), the overall result is optimal.",
          says="optimum at η[1] = 6",
          test=Test(what="argmax of the simulated F1 and NCR over η[1], per data set", measure=_m_fig3("b", 6),
                    rule=R.ArgmaxAt(6), **_FIG3)),
    Claim(id="fig3b-symmetric", section="5.2", ref="Figure 3(b)",
          quote=r"Moreover, the result is symmetric on $\eta[1]=6$", says="symmetric about 6",
          test=Test(what="simulated utility at 6 + d against 6 − d", measure=_m_symmetry("b", 6), rule=R.WithinSE(),
                    **_FIG3)),
    Claim(id="fig3c-half-optimal", section="5.2", ref="Figure 3(c), Observation 2",
          quote=r"when each of the two rounds receives half of the users, the overall result is maximized.",
          says="optimum at n[1] = n/2",
          test=Test(what="argmax of the simulated F1 and NCR over n[1], per data set", measure=_m_fig3("c", 50_000),
                    rule=R.ArgmaxAt(50_000), setting={"fig3_n1_fractions": (0.5,)}, **_FIG3)),
    Claim(id="fig3c-symmetric", section="5.2", ref="Figure 3(c)",
          quote=r"Similar to the result for segment size, the result is symmetric on $n[1]=50000$.",
          says="symmetric about 50,000",
          test=Test(what="simulated utility at 50,000 + d against 50,000 − d", measure=_m_symmetry("c", 50_000),
                    rule=R.WithinSE(), rests_on=(Readings.GRIDS,),
                    other_readings=(
                        Alternative("'symmetric' as within 0.02, section 5.3's 'similar'", Readings.GRIDS, _m_symmetry(
                            "c", 50_000), R.WithinTolerance(V.SIMILAR_F1, "'similar' F1, section 5.3")),),
                    **_FIG3)),
    Claim(id="fig4-analysis-matches", section="5.3", ref="Figure 4, eq. (4)",
          quote=r"we can first confirm analysis still matches empirical results well.",
          says="analysis matches simulation",
          test=Test(what="simulated F1 and NCR of the optimised PEM against eq. (4)", measure=_m_match(NAMES[4], 32),
                    rule=R.WithinSE(), rests_on=(Readings.COMPETITORS, Readings.OPTIMIZER, Readings.GRIDS),
                    cause=Cause("genuine", _c_fig4),
                    other_readings=(Alternative(_LOWER, Readings.COMPETITORS, _m_match(NAMES[4], 32,
                                                                                       "analysis_lower")),),
                    **_FIG4)),
    Claim(id="fig4-zipf-unfavourable", section="5.3", ref="Figure 4",
          quote=r"($\epsilon$ is small, $n$ is small, or $m$ is large), zipfs distribution has better results,",
          says="zipf better in unfavourable settings",
          test=Test(what="zipf against zipf(-20) at the smallest n, largest m, smallest ε (F1 and NCR)",
                    measure=_m_fig4_ends(favourable=False),
                    rule=R.OrderingHolds(strict=True, floor=None, ceiling=None, what="zipf above zipf(-20)"),
                    rests_on=(Readings.ZIPF, Readings.GRIDS),
                    other_readings=(Alternative(
                        _HALF, Readings.GRIDS, _m_fig4_ends(favourable=False, half=True)),
                        Alternative(_ROUNDED, Readings.ZIPF, _m_fig4_ends(favourable=False, name=_ENDS))),
                    **_FIG4),
          parts=(
              Claim(id="fig4-zipf20-favourable", section="5.3", ref="Figure 4",
                    quote=r"while zipfs(-20) gives similar or better result on the other extreme.",
                    says="zipf(-20) similar or better at the other extreme",
                    test=Test(what="zipf(-20) against zipf at the largest n, smallest m, largest ε (F1 and NCR)",
                              measure=_m_fig4_ends(favourable=True),
                              rule=R.OrderingHolds(margin=V.SIMILAR_F1, floor=None, ceiling=None,
                                                   what="zipf(-20) at least zipf"),
                              rests_on=(Readings.ZIPF, Readings.GRIDS),
                              other_readings=(Alternative(
                                  _HALF, Readings.GRIDS, _m_fig4_ends(favourable=True, half=True)),
                                  Alternative(_ROUNDED, Readings.ZIPF, _m_fig4_ends(favourable=True, name=_ENDS))),
                              **_FIG4)),
          )),
)
