"""Section 4 and the appendix: PEM's configuration and analysis (chapter 03)."""
from __future__ import annotations

import math
import re

import pandas as pd

from .. import rules as R
from .base import _COMP, _OPT, _SLOTS, Claim, MissingInput, _g, _table

__all__ = ["CLAIMS"]


# =========================================================================== #
# section 4 (chapter 03)
# =========================================================================== #
def _optimizer_vs_rule(store):
    o = store.figure("fig-pem-optimizer")
    o = o[o["metric"] == "f1"]
    rows = []
    for (k, eps), g in o.groupby(["k", "epsilon"]):
        choice = g[g["layout"] == "optimize_pem's choice"]
        rule = g[(g["layout"] == "leftover") & ~g["over_query_limit"].astype(bool)]
        if choice.empty or rule.empty:
            continue
        ours = tuple(int(v) for v in re.findall(r"\d+", str(choice["etas"].iloc[0])))
        paper = tuple(int(v) for v in re.findall(r"\d+", str(rule.sort_values("eta")["etas"].iloc[-1])))
        rows.append({"k": int(k), "epsilon": float(eps), "ours": ours, "paper": paper})
    if not rows:
        raise MissingInput("fig-pem-optimizer has no optimizer choice")
    return pd.DataFrame(rows)


def _m_opt_rounds(store):
    t = _optimizer_vs_rule(store)
    return pd.DataFrame({"point": [f"k = {k}, ε = {_g(e)}: optimizer {o}, rule {p}"
                                   for k, e, o, p in zip(t["k"], t["epsilon"], t["ours"], t["paper"])],
                         "value": [len(o) for o in t["ours"]], "target": [len(p) for p in t["paper"]]})


def _opt_points(t: pd.DataFrame, values, targets) -> pd.DataFrame:
    return pd.DataFrame({"point": [f"k = {k}, ε = {_g(e)}: optimizer {o}, rule {p}"
                                   for k, e, o, p in zip(t["k"], t["epsilon"], t["ours"], t["paper"])],
                         "value": values, "target": targets})


def _m_opt_max_eta(store):
    t = _optimizer_vs_rule(store)
    return _opt_points(t, [max(o) for o in t["ours"]], [max(p) for p in t["paper"]])


def _m_opt_equal_eta(store):
    t = _optimizer_vs_rule(store)
    return _opt_points(t, [max(o) - min(o) for o in t["ours"]], 0.0)


def _m_opt_gamma(store):
    t = _optimizer_vs_rule(store)
    m = int((store.parameters("03_pem") or {}).get("m_bits", 64))  # the figure's m: the chapter's parameter
    return _opt_points(t, [m - sum(o) for o in t["ours"]], [math.ceil(math.log2(k)) for k in t["k"]])


def _m_obs1_analysis(store):
    o = store.figure("fig-pem-optimizer")
    o = o[(o["layout"] == "balanced") & ~o["over_query_limit"].astype(bool)]
    if o.empty:
        raise MissingInput("fig-pem-optimizer has no balanced layouts")
    o = o.assign(series="k = " + o["k"].astype(str) + ", " + o["metric"].str.upper() + ", ε = "
                 + o["epsilon"].map(_g), se=0.0)
    return o.rename(columns={"eta": "x", "predicted": "y"})[["series", "x", "y", "se"]]


def _m_prop1(store):
    d = store.figure("fig-pem-prop1")
    d = d[d["series"] == "P1 - P2"]
    if d.empty:
        raise MissingInput("fig-pem-prop1 has no P1 - P2 grid")
    return pd.DataFrame({"point": [f"g = {int(g)}, ε = {e:.3g}, f = {f:.3g}" for g, e, f in
                                   zip(d["g"], d["epsilon"], d["f"])],
                         "a": d["value"].to_numpy(), "se_a": 0.0, "b": 0.0, "se_b": 0.0})


def _m_lemma1(store):
    d = store.figure("fig-pem-prop1")
    d = d[(d["series"] == "E(eps/g) / (E(eps)/g)") & (d["epsilon"] > 0)]
    if d.empty:
        raise MissingInput("fig-pem-prop1 has no Lemma 1 curve")
    return pd.DataFrame({"point": [f"g = {int(g)}, ε = {e:.3g}" for g, e in zip(d["g"], d["epsilon"])],
                         "a": 1.0, "se_a": 0.0, "b": d["value"].to_numpy(), "se_b": 0.0})


def _m_joint(store):
    t = _table(store, "03_pem", "joint-estimator")
    return pd.DataFrame({"point": "answers " + t["answers"].astype(str), "observed": t["mean_estimate"],
                         "expected": t["true_count"], "se": t["se"]})


CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- section 4
    Claim("s4-opt-rounds", "4.3", "optimal configuration",
          r"the optimal configuration is $\gamma=\log_2 k$, and for all $i$, $|C_i|=k$, $\eta[i]=\eta$, "
          r"$n[i]\approx n/g$,",
          "the fewest rounds g the query limit allows", "rounds g of optimize_pem's choice against the paper's rule "
                                                        "(k = 16, 32; ε = 1, 2, 4)",
          _m_opt_rounds, R.WithinTolerance(R.COUNT_TOL, "a count"),
          "03_pem", "fig-pem-optimizer", ("figure:fig-pem-optimizer",), interpretation=(_OPT, _COMP)),
    Claim("s4-opt-gamma", "4.3", "optimal configuration",
          r"the optimal configuration is $\gamma=\log_2 k$, and for all $i$, $|C_i|=k$, $\eta[i]=\eta$, "
          r"$n[i]\approx n/g$,",
          "γ = log2 k", "γ = m − Σ η[i] of optimize_pem's choice (m = 64) against ⌈log2 k⌉",
          _m_opt_gamma, R.WithinTolerance(R.COUNT_TOL, "a count of bits"),
          "03_pem", "fig-pem-optimizer", ("figure:fig-pem-optimizer",), interpretation=(_OPT,),
          setting={"m_bits": 64}),
    Claim("s4-opt-equal-eta", "4.3", "optimal configuration",
          r"the optimal configuration is $\gamma=\log_2 k$, and for all $i$, $|C_i|=k$, $\eta[i]=\eta$, "
          r"$n[i]\approx n/g$,",
          "η[i] = η for all i", "largest minus smallest η[i] of optimize_pem's choice",
          _m_opt_equal_eta, R.WithinTolerance(R.EQUAL_SPLIT_TOL, "one bit: m − γ need not be a multiple of g"),
          "03_pem", "fig-pem-optimizer", ("figure:fig-pem-optimizer",), interpretation=(_OPT,)),
    Claim("s4-opt-max-eta", "4.3", "optimal configuration",
          r"where $\eta$ is the maximal integer such that the total number of queries",
          "η the largest within the query limit", "largest η[i] of optimize_pem's choice against the largest η "
                                                  "the query limit of 1,048,576 allows",
          _m_opt_max_eta, R.WithinTolerance(R.COUNT_TOL, "a count of bits"),
          "03_pem", "fig-pem-optimizer", ("figure:fig-pem-optimizer",), interpretation=(_OPT, _COMP),
          setting={"query_limit": 2 ** 20},
          note="For k = 16 the largest η (13) leaves a last round of 8 bits; the model prefers five rounds of 12."),
    Claim("s4-observation-1", "4.4", "Observation 1",
          r"Within the query limit, greatest identification probability is achieved with the least number of "
          r"groups.",
          "fewer groups are better", "predicted F1 and NCR (eq. (4)) of balanced configurations rise with η "
                                     "(fewer rounds) up to the query limit",
          _m_obs1_analysis, R.Monotone("increasing"),
          "03_pem", "fig-pem-optimizer", ("figure:fig-pem-optimizer",), interpretation=(_COMP, _SLOTS)),
    Claim("s4-proposition-1", "Appendix", "Proposition 1",
          r"Numerical calculation also validate that $P_1>P_2$ in most cases.",
          "P1 > P2 in most cases", "P1 − P2 > 0 over the (ε, g, f) grid",
          _m_prop1, R.OrderingHolds(share=R.MOST, strict=True, floor=None, ceiling=None, what="P1 > P2"),
          "03_pem", "fig-pem-prop1", ("figure:fig-pem-prop1",), interpretation=("6-appendix",)),
    Claim("s4-lemma-1", "Appendix", "Lemma 1",
          r"$E(\epsilon/g)<E(\epsilon)/g$.",
          "E(ε/g) < E(ε)/g", "the ratio E(ε/g) / (E(ε)/g) below 1 for ε > 0, g = 2, 4, 8",
          _m_lemma1, R.OrderingHolds(strict=True, floor=None, ceiling=None, what="1 > E(ε/g) / (E(ε)/g)"),
          "03_pem", "fig-pem-prop1", ("figure:fig-pem-prop1",), interpretation=("6-appendix",)),
    Claim("s4-joint-unbiased", "Appendix", "joint estimation for SPM",
          r"Given that $\tilde{n_a}$ and $\tilde{n^b}$ are unbiased, $\tilde{n^b_a}$ is unbiased.",
          "unbiased", "mean joint estimate against the true count, every subset of answers",
          _m_joint, R.WithinSE(),
          "03_pem", None, ("table:03_pem/joint-estimator",), interpretation=("6-appendix",)),
)
