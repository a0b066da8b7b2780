"""Paper Figure 9 (section 6.2.6, chapter 06): the squared error of the estimated counts, against eq. (3).

The observed Var of each protocol (the runs that found a heavy hitter) beside
OLH's variance for the users and budget of its whole-value report (eq. (3)) and
the exact variance of that estimate (:func:`ldp.book.chapters.c06_evaluation.compute.predicted_variance`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from ....oracles.formulas import olh_variance
from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Because, Cause, Claim, ClaimFields, Measurement, MissingInput, Readings, Test
from ...claims.measures import g
from ...claims.readings import under
from ...plotting import FULL_WIDTH, interval, method_scales, render
from ...plotting.tables import format_number

__all__ = ["NAME", "ENGINES", "MIN_VAR_RUNS", "frame", "draw", "wide_table", "CLAIMS"]

NAME = "fig-eval-var"
ENGINES = {NAME: "count engine (10 runs) against eq. (3)"}
#: a point of the claims needs this many runs that found a heavy hitter
MIN_VAR_RUNS = 3


def frame(points: pd.DataFrame) -> pd.DataFrame:
    """The figure's data (of :func:`.compute.variance_table`): ``protocol, epsilon, var_mean, var_std, var_count,
    var_pred, var_full``."""
    return points[["protocol", "epsilon", "var_mean", "var_std", "var_count", "var_pred", "var_full"]]


def draw(data: pd.DataFrame, *, title: str):
    """Observed Var (markers, ± 2 SE cut at the axis' floor) and the predictions (lines: eq. (3), dashed: exact).

    Drawn as log10 of Var on a linear axis labelled 100k, 1M, ... (seaborn 0.13 cannot draw
    ``so.Range`` beside other layers on a log scale).
    """
    floor = 0.3 * float(np.nanmin(data[["var_mean", "var_pred", "var_full"]].to_numpy()))
    d = interval(data, "var_mean", "var_std", (floor, None), scale=2, runs="var_count")
    d = d.assign(**{c: np.log10(d[c]) for c in ("var_mean", "lo", "hi", "var_pred", "var_full")})
    scales = method_scales(list(dict.fromkeys(data["protocol"])))
    powers = FuncFormatter(lambda v, _: f"{10 ** v / 1e6:g}M" if v >= 6 else f"{10 ** v / 1e3:g}k")  # no superscripts
    plot = (so.Plot(d, x="epsilon", color="protocol")
            .add(so.Dot(), y="var_mean", marker="protocol").add(so.Range(), ymin="lo", ymax="hi")
            .add(so.Line(linewidth=1), y="var_pred").add(so.Line(linewidth=1, linestyle="--"), y="var_full")
            .scale(color=scales["color"], marker=scales["marker"], y=so.Continuous().tick(every=1).label(powers))
            .limit(y=(math.log10(floor), None))
            .label(x=r"$\varepsilon$", y="Var (squared count error, log scale)", title=title, color="", marker=""))
    return render(plot, height=3.6, width=0.72 * FULL_WIDTH, ncol=3,
                  extra={"eq. (3)": Line2D([], [], color="k", lw=1),
                         "exact variance": Line2D([], [], color="k", lw=1, ls="--")})


def wide_table(points: pd.DataFrame, columns: Mapping[str, str], *, scales: Mapping[str, float] | None = None):
    """:func:`.compute.variance_table` for the page: ε rows, one column per (protocol, quantity), 3 significant digits.

    ``columns`` maps the table's columns to their short names (``{"var_mean": "Var (10⁶)"}``),
    ``scales`` divides a column first (``{"var_mean": 1e6}``).
    """
    scaled = points.assign(**{c: points[c] / s for c, s in (scales or {}).items()})
    wide = scaled.set_index(["epsilon", "protocol"])[list(columns)].rename(columns=columns).unstack("protocol")
    wide = wide[[(c, b) for b in dict.fromkeys(points["protocol"]) for c in columns.values()]]
    wide.columns = [f"{b} {c}" for c, b in wide.columns]
    return wide.map(format_number)


# --------------------------------------------------------------------------- claims: section 6.2.6
def _points(store) -> pd.DataFrame:
    v = store.figure(NAME)
    v = v[v["var_count"] >= MIN_VAR_RUNS].copy()
    if v.empty:
        raise MissingInput(f"no point of {NAME} has {MIN_VAR_RUNS} runs that found a heavy hitter")
    v["se"] = v["var_std"] / np.sqrt(v["var_count"])
    return v


def _m_mcm_spm(store):
    v = _points(store).pivot_table(index="epsilon", columns="protocol", values=["var_mean", "se"])
    if not {("var_mean", "SPM"), ("var_mean", "MCM")} <= set(v.columns):
        raise MissingInput(f"{NAME} lacks SPM or MCM (too few runs that found a heavy hitter)")
    rows = [{"point": f"ε = {g(e)}: Var(SPM) against Var(MCM)", "a": v.loc[e, ("var_mean", "SPM")],
             "se_a": v.loc[e, ("se", "SPM")], "b": v.loc[e, ("var_mean", "MCM")], "se_b": v.loc[e, ("se", "MCM")]}
            for e in v.index]
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"]).dropna(subset=["a", "b"])


def _m_pem_similar(store):
    v = _points(store).pivot_table(index="epsilon", columns="protocol", values="var_mean")
    if not {"PEM", "MCM"} <= set(v.columns):
        raise MissingInput(f"{NAME} lacks PEM or MCM")
    v = v.dropna(subset=["PEM", "MCM"])
    return Measurement(pd.DataFrame({"point": [f"ε = {g(e)}: ln(Var(PEM) / Var(MCM)), ratio {r:.2f}"
                                               for e, r in zip(v.index, v["PEM"] / v["MCM"])],
                                     "value": np.log(v["PEM"] / v["MCM"]), "target": 0.0}))


def _m_olh(store, expected: str = "var_pred"):
    v = _points(store)
    return pd.DataFrame({"point": v["protocol"] + ", ε = " + v["epsilon"].map(g), "observed": v["var_mean"],
                         "expected": v[expected], "se": v["se"]})


def _m_last_group(store) -> pd.DataFrame:
    """PEM's users over the users of its last group, the one its released estimates come from, at each ε of Figure 9.

    Read from the figure's eq. (3) column: ``var_pred`` is OLH's variance for the last group's ``n_g`` users scaled
    by ``(n / n_g)^2``, so ``var_pred / olh_variance(ε, n) = n / n_g`` (``n``: the chapter's ``n_synthetic``).
    """
    n = (store.parameters(_CH) or {}).get("n_synthetic")
    if not n:
        raise MissingInput(f"the chapter's parameters give no n_synthetic, the users of {NAME}")
    v = store.figure(NAME)
    v = v[(v["protocol"] == "PEM") & v["var_pred"].notna()]
    if v.empty:
        raise MissingInput(f"{NAME} has no PEM")
    groups = v["var_pred"].to_numpy(float) / np.array([float(olh_variance(e, float(n))) for e in v["epsilon"]])
    return pd.DataFrame({"point": [f"ε = {g(e)}: its last group holds 1/{x:.4g} of the users"
                                   for e, x in zip(v["epsilon"], groups)], "value": groups, "target": 6.0})


def _c_last_group(store) -> Because:
    """PEM's groups in Figure 9's runs (the users over its last group's) against the six of one sixth."""
    m = _m_last_group(store)
    w = m.loc[(m["value"] - m["target"]).abs().idxmax()]
    gap = abs(float(w["value"] - w["target"]))
    return Because("genuine", (
        f"PEM runs {w['value']:.0f} groups, as section 4.3's maximal η (13) gives: at {w['point'].split(':')[0]} "
        f"the last holds 1/{w['value']:.4g} of the users, {gap:.3g} group short of six (η = 10 or 11)"),
        {"gap": gap})


def _c_olh(store) -> Because:
    """Eq. (3) against the exact variance of the released (scaled) estimate where they differ most: what our reading
    predicts against what is observed."""
    v = _points(store).assign(r=lambda d: d["var_full"] / d["var_pred"]).sort_values("r").iloc[-1]
    predicted, observed = float(v["r"]), float(v["var_mean"] / v["var_pred"])
    return Because("reading", (
        f"our released estimate scales the last group's count to n: besides eq. (3) (a value nobody holds) it "
        f"carries the holders' own reports and the sampling of the group; at {v['protocol']}, ε = {g(v['epsilon'])} "
        f"that exact variance is {predicted:.1f} times eq. (3) (observed {observed:.1f} times)"),
        {"predicted": predicted, "observed": observed})


_SETTING = {"k_fixed": 16, "n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20}
_SCALED, _CH = "estimates-scaled-to-the-population", "06_evaluation"
_PART = "SPM and MCM with 10 % of the users for the final test (section 6.2.4), at the ε the text quotes"
_FIG9: ClaimFields = dict(chapter=_CH, figure=NAME, setting=_SETTING)
CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig9-mcm-below-spm", section="6.2.6", ref="Figure 9",
          quote=r"Observe that the \hash method has smaller variance than \rappor,", says="Var(MCM) < Var(SPM)",
          test=Test(what="mean squared error of SPM against MCM at each ε (points with at least "
                         f"{MIN_VAR_RUNS} runs that found a heavy hitter)",
                    measure=_m_mcm_spm,
                    rule=R.OrderingHolds(floor=None, ceiling=None, what="Var(SPM) at least Var(MCM)"),
                    rests_on=("mcm", "spm", Readings.SPM, Readings.MCM, _SCALED),
                    other_readings=(Alternative(_PART, Readings.SPM, under(_m_mcm_spm, _CH, "partition")),), **_FIG9)),
    Claim(id="fig9-one-sixth", section="6.2.6", ref="Figure 9, PEM's last group",
          quote=r"As a comparison, \itergroup uses only the last group, which is one sixth of users,",
          says="last group: a sixth of the users",
          note="One sixth means g = 6 groups: η = 10 or 11 for k = 16, m = 64. Section 4.3's rule (η the largest "
               "within the query limit, 13) and the optimizer the book runs give g = 5.",
          test=Test(what="the users over the users of PEM's last group, whose whole-value reports give its released "
                         "estimates, at each ε of Figure 9 (from the figure's eq. (3) column)",
                    measure=_m_last_group,
                    rule=R.WithinTolerance(0.05, "one sixth: the last of 6 equal groups, up to the rounding of "
                                                 "the group sizes"), cause=Cause("genuine", _c_last_group), **_FIG9)),
    Claim(id="fig9-pem-similar", section="6.2.6", ref="Figure 9", quote=r"and achieves similar estimation accuracy.",
          says="Var(PEM) similar to Var(MCM)",
          note="The paper's PEM gives the last group one sixth of the users; our optimiser picks 5 groups.",
          test=Test(what="ln of Var(PEM) / Var(MCM) at each ε", measure=_m_pem_similar,
                    rule=R.WithinTolerance(math.log(V.SIMILAR_FACTOR), f"within a factor {V.SIMILAR_FACTOR:g}"),
                    rests_on=("mcm", Readings.MCM, _SCALED),
                    other_readings=(Alternative(_PART, Readings.MCM, under(_m_pem_similar, _CH, "partition")),),
                    **_FIG9)),
    Claim(id="fig9-complies-var-olh", section="6.2.6", ref="Figure 9, eq. (3)",
          quote=r"Note that this also complies with~\eqref{var_olh}, the estimation variance of OLH.",
          says="Var as eq. (3) predicts",
          test=Test(what="mean squared error against eq. (3) for the users and budget of each method's final test",
                    measure=_m_olh, rule=R.WithinSE(), rests_on=("mcm", "spm", _SCALED, "the-variance-of-olh"),
                    cause=Cause("reading", _c_olh),
                    other_readings=(Alternative("the exact variance of the released estimate (holders' reports and "
                                                "the group's "
                                                "sampling added to eq. (3))", _SCALED, lambda store: _m_olh(store,
                                                                                                            "var_full")),),
                    **_FIG9)),
)
