"""PEM's optimizer (chapter 03, section 4.3): predicted utility against η, the rule's and the optimizer's choices.

Not a paper figure: section 4.3 states the optimal configuration in words
(γ = log2 k, equal η, the fewest rounds the query limit allows; Observation 1),
and the claims read this figure's predicted F1 and NCR.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ....analysis.config import PEMConfig, default_gamma
from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Because, Cause, Claim, ClaimFields, MissingInput, Readings, Test
from ...claims.measures import g
from ...plotting import render, series_colors
from .compute import optimizer_choices, optimizer_curves

__all__ = ["NAME", "ENGINES", "TITLES", "frame", "draw", "CLAIMS"]

NAME = "fig-pem-optimizer"
ENGINES = {NAME: "closed form, eq. (4)-(5) (ldp.analysis)"}
TITLES = {NAME: "section 4.3"}
CHOICE = "optimize_pem's choice"


def frame(opt: Mapping[tuple, PEMConfig], rule: Mapping[int, PEMConfig], *, m: int, n, eta_max: int = 20):
    """Predicted F1 and NCR against η (leftover and balanced layouts) and the optimizer's choices.

    Eq. (4) with eq. (5) (slots ``"text"``, competitors ``"lower"``, as
    :func:`ldp.analysis.optimize_pem`; for the balanced layouts also with the paper's
    competitors, ``predicted_paper``) for every configuration of
    :func:`ldp.analysis.candidate_configs` with ``eta <= eta_max``, whatever
    the query limit; ``over_query_limit`` marks ``eta`` above the rule's.

    Parameters
    ----------
    opt : mapping
        ``(k, epsilon) -> optimize_pem(epsilon, k, m, ...)``.
    rule : mapping
        ``k -> pem_default_config(k, m, ...)`` (its ``eta`` is the largest within the limit).
    m, n : int
        Value length in bits and number of users.
    eta_max : int
        Largest ``eta`` shown.

    Returns
    -------
    pandas.DataFrame
        ``panel, k, metric, epsilon, layout, eta, etas, predicted, predicted_paper, over_query_limit``: panels (a) F1
        and (c) NCR of the first ``k``, (b) and (d) of the second.
    """
    return optimizer_curves(opt, rule, m=m, n=n, eta_max=eta_max, choice=CHOICE)


def draw(data: pd.DataFrame, *, m: int):
    """Predicted utility against η, one panel per (metric, k), ε as a series; the optimizer's choice starred."""
    d = data.assign(eps=data["epsilon"].map(lambda e: f"ε = {e:g}"),
                    title=[f"({p}) {mt.upper()}, k = {k} (γ = {default_gamma(k, m)})" for p, mt, k in
                           zip(data["panel"], data["metric"], data["k"])])
    eps = list(dict.fromkeys(d["eps"]))
    colors = so.Nominal(dict(zip(eps, series_colors(len(eps)))), order=eps)
    by = {lay: d[d["layout"] == lay] for lay in ("leftover", "balanced", CHOICE)}
    eta_max = int(d["eta"].max())
    plot = (so.Plot(by["leftover"], x="eta", y="predicted", color="eps")
            .facet(col="title", wrap=2, order=sorted(d["title"].unique()))
            .add(so.Line(marker=".", pointsize=4))
            .add(so.Dot(fill=False, pointsize=5), data=by["balanced"], x="eta", y="predicted", color="eps",
                 col="title")
            .add(so.Dot(marker="*", pointsize=12, edgecolor="black"), data=by[CHOICE], x="eta", y="predicted",
                 color="eps", col="title")
            .scale(color=colors, x=so.Continuous().tick(at=list(range(2, eta_max + 1, 4))))
            .limit(x=(0.5, eta_max + 0.5), y=(0, 1.02))
            .label(x="η (bits per round)", y="predicted utility", title=str, color=""))
    fig = render(plot, height=5.2, ncol=7, extra={
        "balanced layout": Line2D([], [], marker="o", mfc="none", color="k", ls="none"),
        CHOICE: Line2D([], [], marker="*", color="w", mec="k", ms=11, ls="none")})
    for ax in fig.axes:  # the configurations over the query limit
        feasible = d.loc[(d["title"] == ax.get_title()) & ~d["over_query_limit"].astype(bool), "eta"].max()
        ax.axvspan(feasible + 0.5, eta_max + 0.5, color="0.88", zorder=0, lw=0)
    return fig


# --------------------------------------------------------------------------- claims: section 4.3, 4.4
def _optimizer_vs_rule(store, reading: str | None = None) -> pd.DataFrame:
    """The optimizer's choice (or its choice under another ``reading``, the chapter's table) and the rule's."""
    return optimizer_choices(store.figure(NAME), choice=CHOICE, reading=reading, readings=None if reading is None
                             else store.load("03_pem", "optimizer-readings"))


def _m_opt(value, target, reading: str | None = None):
    """``value(optimizer's η, store)`` against ``target(rule's η, k)``, per (k, ε) (under ``reading``)."""
    def measure(store):
        t = _optimizer_vs_rule(store, reading)
        return pd.DataFrame({"point": t["point"], "value": [value(o, store) for o in t["ours"]],
                             "target": [target(p, k) for p, k in zip(t["paper"], t["k"])]})
    return measure


def _c_max_eta(store) -> str:
    """The rule's configuration against the optimizer's, by eq. (4), where they differ."""
    t = _optimizer_vs_rule(store).query("ours != paper")
    w = t.loc[(t["f1_ours"] - t["f1_paper"]).idxmax()]
    bits = max(abs(max(p) - max(o)) for o, p in zip(t["ours"], t["paper"]))
    return (f"eq. (4) prefers balanced rounds to the rule's maximal η with a short last round, at the same number of "
            f"rounds, in {len(t)} settings, its largest η up to {bits} bit{'s' if bits != 1 else ''} off the rule's "
            f"(predicted F1 at k = {w.k}, ε = {g(w.epsilon)}: {w.ours} {w.f1_ours:.4f} "
            f"against {w.paper} {w.f1_paper:.4f}): 'η[i] = η for all i' and 'η maximal' cannot both hold when η does "
            "not divide m − γ")


def _m_obs1(store, predicted: str = "predicted"):
    o = store.figure(NAME)
    o = o.assign(predicted=o[predicted])
    o = o[(o["layout"] == "balanced") & ~o["over_query_limit"].astype(bool)]
    if o.empty:
        raise MissingInput(f"{NAME} has no balanced layouts")
    o = o.assign(series="k = " + o["k"].astype(str) + ", " + o["metric"].str.upper() + ", ε = " + o["epsilon"].map(g),
                 se=0.0)
    return o.rename(columns={"eta": "x", "predicted": "y"})[["series", "x", "y", "se"]]


def _m_max_eta_f1(store) -> pd.DataFrame:
    """The predicted F1 (eq. (4)) of the rule's configuration (η maximal) against the optimizer's, per (k, ε)."""
    t = _optimizer_vs_rule(store)
    return pd.DataFrame({"point": t["point"], "value": t["f1_paper"], "target": t["f1_ours"]})


def _m_small_eta(store, predicted: str = "predicted_paper") -> pd.DataFrame:
    """Per curve (k, metric, ε) of the balanced layouts within the limit: the best utility less a share A_LOT of it
    against the utility at the smallest η (by ``predicted``, the paper's N[i] by default)."""
    o = store.figure(NAME)
    o = o[(o["layout"] == "balanced") & ~o["over_query_limit"].astype(bool)]
    if o.empty:
        raise MissingInput(f"{NAME} has no balanced layouts")
    rows = []
    for (k, metric, eps), grp in o.groupby(["k", "metric", "epsilon"], sort=False):
        grp = grp.sort_values("eta")
        top, first = grp.loc[grp[predicted].idxmax()], grp.iloc[0]
        rows.append({"point": f"k = {k}, {metric.upper()}, ε = {g(eps)}: {first[predicted]:.3f} at η = {first.eta} "
                              f"against {top[predicted]:.3f} at η = {top.eta}",
                     "a": (1 - V.A_LOT) * top[predicted], "se_a": 0.0, "b": first[predicted], "se_b": 0.0})
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])


def _c_obs1(store) -> Because:
    """Why Observation 1 fails on the paper's printed model: the curves that fall as η grows, those highest at the
    smallest η, and the same curves with the optimizer's N_j (eq. (5) is exact: a step down is ∞ SE)."""
    printed, lower = _m_obs1(store, "predicted_paper"), _m_obs1(store)
    whole = R.Monotone("increasing").decide(printed).numbers
    first = sum(int(grp.sort_values("x")["y"].idxmax() == grp["x"].idxmin()) for _, grp in printed.groupby("series"))
    risen = R.Monotone("increasing").decide(lower).numbers["monotone"]
    broken = whole["series"] - whole["monotone"]
    return Because("genuine", (
        f"eq. (5) as printed is exact (a step down is ∞ standard errors): {broken} of {whole['series']} curves fall "
        f"at some step as η grows, {first} highest at η = 1, where it counts k competitors in a domain of 2k; with the "
        f"optimizer's N_j, {risen} rise"),
        {"gap": abs(float(whole["worst_z"]))})


def _c_small_eta(store) -> Because:
    """Where the smallest η does not cost a quarter of the best predicted utility under the printed model, and where
    it is itself the best; the same with the optimizer's N_j."""
    rule = R.OrderingHolds(floor=None, ceiling=None)
    printed, lower = rule.decide(_m_small_eta(store)).numbers, rule.decide(_m_small_eta(store, "predicted")).numbers
    o = store.figure(NAME)
    o = o[(o["layout"] == "balanced") & ~o["over_query_limit"].astype(bool)]
    best_first = sum(int(grp.sort_values("eta")["predicted_paper"].idxmax() == grp["eta"].idxmin())
                     for _, grp in o.groupby(["k", "metric", "epsilon"]))
    return Because("genuine", (
        f"exact, on eq. (5) as printed: η = 1 keeps more than {1 - V.A_LOT:.0%} of the best at {printed['losses']} "
        f"of {printed['points']} curve{'s' * (printed['points'] != 1)}, and is the best at {best_first}; with the "
        f"optimizer's N_j it loses a quarter at {lower['holds']} of {lower['points']}"),
        {"gap": float(printed["losses"])})


def _alts(value, target, *readings: str, rule: R.Rule | None = None) -> tuple[Alternative, ...]:
    """The claim under the optimizer's other options (``"balanced"``: the rule's rounds, η[i] as equal as can be),
    decided by ``rule`` (default: the claim's)."""
    return tuple(Alternative(*_READINGS[r], _m_opt(value, target, r) if r != "balanced" else _m_opt(
        value, lambda p, k: math.ceil(sum(p) / len(p))), rule) for r in readings)


_PAPER_N = "eq. (5) with the paper's N[i] = |D_i| − k competitors (competitors='paper'), not the optimizer's lower"
_LOWER_N = ("eq. (5) with the optimizer's competitors N_j = |D_i| − j (competitors='lower'), the model that agrees "
            "with the Monte-Carlo where |D_i| is a small multiple of k")
_BITS = R.WithinTolerance(V.COUNT_TOL, "a count of bits")
_PAPER, _SEARCH = "competitors='paper'", "gammas, cand_sizes='search'"  # OPTIMIZER_READINGS, the chapter's table
_ROUNDS, _MAX = (lambda o, s: len(o), lambda p, k: len(p)), (lambda o, s: max(o), lambda p, k: max(p))
_GAMMA = (lambda o, s: int((s.parameters("03_pem") or {}).get("m_bits", 64)) - sum(o),  # m: the chapter's parameter
          lambda p, k: math.ceil(math.log2(k)))
_SPREAD = (lambda o, s: max(o) - min(o), lambda p, k: 0.0)
_READINGS = {_PAPER: (_PAPER_N, Readings.COMPETITORS),
             _SEARCH: ("the optimizer also searching γ ± 2 and the candidates kept |C_i| (gammas='search', "
                       "cand_sizes='search')", Readings.OPTIMIZER),
             "balanced": ("'η maximal' with 'η[i] = η for all i': the rule's number of rounds, the bits spread as "
                          "evenly as m − γ allows", Readings.OPTIMIZER)}
_OPTIMAL = (r"the optimal configuration is $\gamma=\log_2 k$, and for all $i$, $|C_i|=k$, $\eta[i]=\eta$, "
            r"$n[i]\approx n/g$,")
_OPT: ClaimFields = dict(chapter="03_pem", figure=NAME)
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s4-opt-rounds", section="4.3", ref="optimal configuration", quote=_OPTIMAL,
          says="the fewest rounds g the query limit allows",
          test=Test(what="rounds g of optimize_pem's choice against the paper's rule (k = 16, 32; ε = 1, 2, 4)",
                    measure=_m_opt(*_ROUNDS), rule=R.WithinTolerance(V.COUNT_TOL, "a count"),
                    rests_on=(Readings.OPTIMIZER, Readings.COMPETITORS),
                    other_readings=_alts(*_ROUNDS, _PAPER, _SEARCH), **_OPT),
          parts=(
              Claim(id="s4-opt-gamma", section="4.3", ref="optimal configuration", quote=_OPTIMAL, says="γ = log2 k",
                    test=Test(what="γ = m − Σ η[i] of optimize_pem's choice (m = 64) against ⌈log2 k⌉",
                              measure=_m_opt(*_GAMMA),
                              rule=R.WithinTolerance(V.COUNT_TOL, "a count of bits"), setting={"m_bits": 64},
                              rests_on=(Readings.OPTIMIZER,), other_readings=_alts(*_GAMMA, _SEARCH), **_OPT)),
              Claim(id="s4-opt-equal-eta", section="4.3", ref="optimal configuration", quote=_OPTIMAL,
                    says="η[i] = η for all i",
                    test=Test(what="largest minus smallest η[i] of optimize_pem's choice", measure=_m_opt(*_SPREAD),
                              rule=R.WithinTolerance(V.EQUAL_SPLIT_TOL, "one bit: g need not divide m − γ"),
                              rests_on=(Readings.OPTIMIZER,), other_readings=_alts(*_SPREAD, _PAPER, _SEARCH), **_OPT)),
              Claim(id="s4-opt-max-eta", section="4.3", ref="optimal configuration",
                    quote=r"where $\eta$ is the maximal integer such that the total number of queries",
                    says="η the largest within the query limit",
                    note="For k = 16 the largest η (13) leaves a last round of 8 bits; the model prefers five rounds "
                         "of 12, by less than the margin section 4.3 calls immaterial.",
                    test=Test(what="predicted F1 (eq. (4)) of the rule's configuration, η the largest the query limit "
                                   "of 1,048,576 allows, against the optimum's (optimize_pem's choice)",
                              measure=_m_max_eta_f1,
                              rule=R.WithinTolerance(V.EQUIVALENT_F1, "practical equivalence: a difference of "
                                                                      "predicted F1 section 4.3 calls immaterial"),
                              setting={"query_limit": 2 ** 20},
                              rests_on=(Readings.EQUIVALENCE, Readings.OPTIMIZER, Readings.COMPETITORS),
                              cause=Cause("genuine", _c_max_eta), other_readings=(
                                  Alternative("exact: the largest η[i] of optimize_pem's choice equals the largest η "
                                              "the query limit allows (no margin of practical equivalence)",
                                              Readings.EQUIVALENCE, _m_opt(*_MAX), _BITS),
                                  *_alts(*_MAX, "balanced", _PAPER, _SEARCH, rule=_BITS)),
                              **_OPT)),
          )),
    Claim(id="s43-small-eta", section="4.3", ref="a very small η",
          quote=r"When $\eta$ is very small, the overall utility will deteriorate a lot.",
          says="a very small η costs much utility",
          test=Test(what="predicted F1 and NCR (eq. (4) with eq. (5) as printed, N[i] = |D_i| − k) of the balanced "
                         "configuration with η = 1 against the best within the query limit, per k and ε",
                    measure=_m_small_eta,
                    rule=R.OrderingHolds(floor=None, ceiling=None,
                                         what=f"the utility at η = 1 at most {1 - V.A_LOT:.0%} of the best "
                                              f"(deteriorates by a share A_LOT = {V.A_LOT:g} or more)"),
                    rests_on=(Readings.SMALL_ETA, Readings.OBSERVATION1, Readings.COMPETITORS),
                    cause=Cause("genuine", _c_small_eta),
                    other_readings=(Alternative(_LOWER_N, Readings.OBSERVATION1,
                                                lambda store: _m_small_eta(store, "predicted")),),
                    **_OPT)),
    Claim(id="s4-observation-1", section="4.4", ref="Observation 1",
          quote=r"Within the query limit, greatest identification probability is achieved with the least number of "
                r"groups.",
          says="fewer groups are better",
          test=Test(what="predicted F1 and NCR (eq. (4) with eq. (5) as printed, N[i] = |D_i| − k) of balanced "
                         "configurations rise with η (fewer rounds) up to the query limit",
                    measure=lambda store: _m_obs1(store, "predicted_paper"), rule=R.Monotone("increasing"),
                    chapter="03_pem", figure=NAME,
                    rests_on=(Readings.OBSERVATION1, Readings.COMPETITORS, Readings.SLOTS),
                    cause=Cause("genuine", _c_obs1),
                    other_readings=(Alternative(_LOWER_N, Readings.OBSERVATION1, _m_obs1),))),
)
