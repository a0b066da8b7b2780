"""Section 5: validation of the analysis, Figures 2-4 (chapter 05)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import rules as R
from .base import _COMP, _GRIDS, _METRIC, _OPT, _SLOTS, _ZIPF, Claim, MissingInput, NotCovered, _g, _require, _series

__all__ = ["CLAIMS"]


# =========================================================================== #
# section 5 (chapter 05)
# =========================================================================== #
def _binomial_se(p, runs):
    """Standard error of a rate over ``runs`` runs, floored at that of a rate of 1/runs."""
    p, runs = np.asarray(p, dtype=float), np.asarray(runs, dtype=float)
    floor = (1 / runs) * (1 - 1 / runs)
    return np.sqrt(np.maximum(p * (1 - p), floor) / runs)


_LEVEL = {"n": lambda v: f"n = {int(v):,}", "m": lambda v: f"m = {int(v)}", "epsilon": lambda v: f"ε = {v:g}"}


def _m_fig2_match(store):
    d = store.figure("fig-validation-identification")
    return pd.DataFrame({
        "point": [f"({p}) {_LEVEL[a](lv)}, rank {int(r)}" for p, a, lv, r in
                  zip(d["panel"], d["axis"], d["level"], d["rank"])],
        "observed": d["simulated_rate"], "expected": d["analysis"],
        "se": _binomial_se(d["analysis"], d["runs"])})


def _fig2_found(store, column: str):
    d = store.figure("fig-validation-identification")
    d = d.assign(var=_binomial_se(d["simulated_rate"], d["runs"]) ** 2)
    g = d.groupby(["panel", "axis", "level"], as_index=False).agg(sim=("simulated_rate", "sum"),
                                                                   analysis=("analysis", "sum"), var=("var", "sum"))
    g["se"] = np.sqrt(g["var"]) if column == "sim" else 0.0
    return g.rename(columns={column: "y", "level": "x"})


def _m_fig2_trend(axis: str):
    def measure(store):
        g = _fig2_found(store, "sim")
        g = g[g["axis"] == axis]
        if g.empty:
            raise MissingInput(f"fig-validation-identification has no panel varying {axis}")
        return g.assign(series=f"heavy hitters found (sum of rates), varying {axis}")[["series", "x", "y", "se"]]
    return measure


def _m_fig2_trend_analysis(store):
    g = _fig2_found(store, "analysis")
    g = g.assign(x=np.where(g["axis"] == "m", -g["x"], g["x"]),  # shorter values are better: reverse m
                 series="analysis, varying " + g["axis"].map({"n": "n", "m": "m (reversed)", "epsilon": "ε"}))
    return g[["series", "x", "y", "se"]]


def _utility_se(d: pd.DataFrame, k: int) -> np.ndarray:
    """Standard error of a mean utility: errorbar_2se / 2, floored at one heavy hitter in one run."""
    return np.maximum(d["errorbar_2se"].fillna(0.0).to_numpy(float) / 2, 1.0 / (k * d["runs"].to_numpy(float)))


_AXIS = {"g": "g", "etas": "η[1]", "group_fractions": "n[1]", "n": "n", "m": "m", "epsilon": "ε"}


def _utility(store, name: str, k: int) -> pd.DataFrame:
    d = store.figure(name).copy()
    d["se"] = _utility_se(d, k)
    d["label"] = [f"({p}) {_AXIS[a]} = {x:g}, {dist}, {_METRIC[m]}" for p, a, x, dist, m in
                  zip(d["panel"], d["axis"], d["x"], d["dist"], d["metric"])]
    return d


def _m_utility_match(name: str, k: int):
    def measure(store):
        d = _utility(store, name, k)
        return pd.DataFrame({"point": d["label"], "observed": d["simulated_mean"], "expected": d["analysis"],
                             "se": d["se"]})
    return measure


def _fig3_panel(store, panel: str) -> pd.DataFrame:
    d = _utility(store, "fig-validation-configurations", 16)
    d = d[d["panel"] == panel]
    if d.empty:
        raise MissingInput(f"fig-validation-configurations has no panel ({panel})")
    return _series(d, ["dist", "metric"], "x", "simulated_mean", "se").assign(
        series=lambda f: f["series"].str.replace("f1", "F1").str.replace("ncr", "NCR"))


def _m_fig3a(store):
    return _fig3_panel(store, "a")


def _m_fig3_argmax(panel: str, center: float):
    def measure(store):
        s = _fig3_panel(store, panel)
        _require(s["x"], center, {"b": "η[1]", "c": "n[1]"}[panel])
        return s
    return measure


def _m_fig3_symmetry(panel: str, center: float):
    def measure(store):
        s = _fig3_panel(store, panel)
        rows = []
        for name, g in s.groupby("series", sort=False):
            by_x = {float(x): (y, se) for x, y, se in zip(g["x"], g["y"], g["se"])}
            for x, (y, se) in by_x.items():
                mirror = 2 * center - x
                if x > center and mirror in by_x:
                    y2, se2 = by_x[mirror]
                    rows.append({"point": f"{name}: {_g(mirror)} against {_g(x)}", "observed": y, "expected": y2,
                                 "se": math.hypot(se, se2)})
        if not rows:
            raise NotCovered(f"no two levels of panel ({panel}) mirror each other around {_g(center)}")
        return pd.DataFrame(rows)
    return measure


def _fig4_ends(store, favourable: bool):
    d = _utility(store, "fig-validation-optimal", 32)
    rows = []
    for (panel, axis, metric), g in d.groupby(["panel", "axis", "metric"]):
        # unfavourable: small n, large m, small epsilon
        small_is_good = axis == "m"
        pick = (g["x"].min() if small_is_good else g["x"].max()) if favourable else \
            (g["x"].max() if small_is_good else g["x"].min())
        at = g[g["x"] == pick].set_index("dist")
        if not {"zipf", "zipf(-20)"} <= set(at.index):
            continue
        first, second = ("zipf(-20)", "zipf") if favourable else ("zipf", "zipf(-20)")
        rows.append({"point": f"({panel}) {_AXIS[axis]} = {pick:g}, {_METRIC[metric]}",
                     "a": at.loc[first, "simulated_mean"], "se_a": at.loc[first, "se"],
                     "b": at.loc[second, "simulated_mean"], "se_b": at.loc[second, "se"]})
    if not rows:
        raise MissingInput("fig-validation-optimal lacks the zipf / zipf(-20) pairs")
    return pd.DataFrame(rows)


CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- section 5
    Claim("fig2-analysis-matches", "5.1", "Figure 2, eq. (5)",
          r"We observe that, first of all, the analysis matches the empirical result pretty well.",
          "analysis matches simulation", "simulated identification rate against eq. (5), every rank and level",
          _m_fig2_match, R.WithinSE(),
          "05_validation", "fig-validation-identification", ("figure:fig-validation-identification",),
          interpretation=(_SLOTS, _COMP, "7-section-5-text-vs-caption", _ZIPF)),
    Claim("fig2-more-users", "5.1", "Figure 2(a)",
          r"the more users (larger $n$),",
          "larger n, better", "heavy hitters found (sum of the rates) against n",
          _m_fig2_trend("n"), R.Monotone("increasing"),
          "05_validation", "fig-validation-identification", ("figure:fig-validation-identification",),
          interpretation=(_GRIDS,)),
    Claim("fig2-shorter-values", "5.1", "Figure 2(b)",
          r"the shorter the domain length (smaller $m$),",
          "smaller m, better", "heavy hitters found against m",
          _m_fig2_trend("m"), R.Monotone("decreasing"),
          "05_validation", "fig-validation-identification", ("figure:fig-validation-identification",),
          interpretation=(_GRIDS,)),
    Claim("fig2-larger-eps", "5.1", "Figure 2(c)",
          r"or the larger the privacy budget (larger $\epsilon$),",
          "larger ε, better", "heavy hitters found against ε",
          _m_fig2_trend("epsilon"), R.Monotone("increasing"),
          "05_validation", "fig-validation-identification", ("figure:fig-validation-identification",),
          interpretation=(_GRIDS,)),
    Claim("fig2-trend-analysis", "5.1", "Figure 2",
          r"This trend also matches the analysis.",
          "the analysis shows the same trends", "expected heavy hitters found by eq. (5) against n, m (reversed), ε",
          _m_fig2_trend_analysis, R.Monotone("increasing"),
          "05_validation", "fig-validation-identification", ("figure:fig-validation-identification",),
          interpretation=(_SLOTS,)),
    Claim("fig3-analysis-matches", "5.2", "Figure 3, eq. (4)",
          r"It can be seen that all points (empirical results) lie on the line (analytical results),",
          "all points on the line", "simulated F1 and NCR against eq. (4), every point of the three panels",
          _m_utility_match("fig-validation-configurations", 16), R.WithinSE(),
          "05_validation", "fig-validation-configurations", ("figure:fig-validation-configurations",),
          interpretation=(_COMP, _SLOTS, _ZIPF)),
    Claim("fig3a-fewer-rounds", "5.2", "Figure 3(a), Observation 1",
          r"As a result, with more rounds of test, the overall result becomes worse.",
          "utility falls with g", "simulated F1 and NCR against the number of rounds g, per data set",
          _m_fig3a, R.Monotone("decreasing"),
          "05_validation", "fig-validation-configurations", ("figure:fig-validation-configurations",),
          interpretation=(_GRIDS,)),
    Claim("fig3b-eta-optimal", "5.2", "Figure 3(b), Observation 2",
          r"when $\eta[1]=6$ (both rounds analyzes a domain of $2^{10}$ values), the overall result is optimal.",
          "optimum at η[1] = 6", "argmax of the simulated F1 and NCR over η[1], per data set",
          _m_fig3_argmax("b", 6), R.ArgmaxAt(6),
          "05_validation", "fig-validation-configurations", ("figure:fig-validation-configurations",)),
    Claim("fig3b-symmetric", "5.2", "Figure 3(b)",
          r"Moreover, the result is symmetric on $\eta[1]=6$",
          "symmetric about 6", "simulated utility at 6 + d against 6 − d",
          _m_fig3_symmetry("b", 6), R.WithinSE(),
          "05_validation", "fig-validation-configurations", ("figure:fig-validation-configurations",)),
    Claim("fig3c-half-optimal", "5.2", "Figure 3(c), Observation 2",
          r"when each of the two rounds receives half of the users, the overall result is maximized.",
          "optimum at n[1] = n/2", "argmax of the simulated F1 and NCR over n[1], per data set",
          _m_fig3_argmax("c", 50_000), R.ArgmaxAt(50_000),
          "05_validation", "fig-validation-configurations", ("figure:fig-validation-configurations",),
          setting={"fig3_n1_fractions": (0.5,)}),
    Claim("fig3c-symmetric", "5.2", "Figure 3(c)",
          r"Similar to the result for segment size, the result is symmetric on $n[1]=50000$.",
          "symmetric about 50,000", "simulated utility at 50,000 + d against 50,000 − d",
          _m_fig3_symmetry("c", 50_000), R.WithinSE(),
          "05_validation", "fig-validation-configurations", ("figure:fig-validation-configurations",),
          interpretation=(_GRIDS,)),
    Claim("fig4-analysis-matches", "5.3", "Figure 4, eq. (4)",
          r"we can first confirm analysis still matches empirical results well.",
          "analysis matches simulation", "simulated F1 and NCR of the optimised PEM against eq. (4)",
          _m_utility_match("fig-validation-optimal", 32), R.WithinSE(),
          "05_validation", "fig-validation-optimal", ("figure:fig-validation-optimal",),
          interpretation=(_COMP, _OPT, _GRIDS)),
    Claim("fig4-zipf-unfavourable", "5.3", "Figure 4",
          r"($\epsilon$ is small, $n$ is small, or $m$ is large), zipfs distribution has better results,",
          "zipf better in unfavourable settings", "zipf against zipf(-20) at the smallest n, largest m, smallest ε "
                                                  "(F1 and NCR)",
          lambda store: _fig4_ends(store, favourable=False),
          R.OrderingHolds(strict=True, floor=None, ceiling=None, what="zipf above zipf(-20)"),
          "05_validation", "fig-validation-optimal", ("figure:fig-validation-optimal",),
          interpretation=(_ZIPF, _GRIDS)),
    Claim("fig4-zipf20-favourable", "5.3", "Figure 4",
          r"while zipfs(-20) gives similar or better result on the other extreme.",
          "zipf(-20) similar or better at the other extreme", "zipf(-20) against zipf at the largest n, smallest m, "
                                                              "largest ε (F1 and NCR)",
          lambda store: _fig4_ends(store, favourable=True),
          R.OrderingHolds(margin=R.SIMILAR_F1, floor=None, ceiling=None, what="zipf(-20) at least zipf"),
          "05_validation", "fig-validation-optimal", ("figure:fig-validation-optimal",),
          interpretation=(_ZIPF, _GRIDS)),
)
