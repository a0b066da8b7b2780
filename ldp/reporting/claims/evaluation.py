"""Sections 6.1, 6.2.1, 6.2.2 and 6.2.6: the data sets, Figures 5, 6 and 9 (chapter 06)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import rules as R
from .base import (
    _ALL_METHODS,
    _AOL,
    _EVAL_SETTING,
    _F1_TOL,
    _GRIDS,
    _MCM,
    _PRINTED,
    _SPM,
    _SYN,
    _URL,
    _XNAME,
    MIN_VAR_RUNS,
    OTHERS,
    Claim,
    Measurement,
    MissingInput,
    _aol_note,
    _eval_points,
    _g,
    _one,
    _pem_vs_best_other,
    _require,
    _series,
    _table,
)

__all__ = ["CLAIMS"]


# =========================================================================== #
# section 6 (chapters 06, 07)
# =========================================================================== #
def _m_dataset_size(dataset: str, column: str, scale: float, target: float):
    def measure(store):
        t = _table(store, "06_evaluation", "datasets").set_index("dataset")
        if dataset not in t.index:
            raise MissingInput(f"the {dataset} data set is not in this build")
        return _one(f"{dataset}: {column.replace('_', ' ')} (in units of {scale:,.0f})",
                    float(t.loc[dataset, column]) / scale, target)
    return measure


def _m_theta_f16(store):
    t = _table(store, "06_evaluation", "datasets").set_index("dataset")
    if "Synthetic" not in t.index:
        raise MissingInput("the synthetic data set is not in 06_evaluation/datasets")
    return _one("frequency of the 16th most frequent synthetic value", float(t.loc["Synthetic", "f_16"]), 0.023)


def _m_pem_best(name: str, x: str, datasets=None):
    def measure(store):
        df = _eval_points(store, name)
        if datasets is not None and not set(datasets) & set(df["dataset"]):
            raise MissingInput(f"the {' and '.join(datasets)} data is not in this build")
        return Measurement(_pem_vs_best_other(df, x, datasets=datasets), _aol_note(df) if datasets is None else "")
    return measure


def _m_aol_best(store):
    parts = []
    for name, x in (("fig-eval-vary-eps", "epsilon"), ("fig-eval-vary-k", "k")):
        df = _eval_points(store, name)
        if "AOL" not in set(df["dataset"]):
            raise MissingInput("the AOL data set is not in this build (its data file is absent)")
        parts.append(_pem_vs_best_other(df, x, datasets=["AOL"]))
    return pd.concat(parts, ignore_index=True)


def _m_more_with_eps(store):
    df = _eval_points(store, "fig-eval-vary-eps")
    df = df[df["metric"] == "f1"]
    return Measurement(_series(df, ["dataset", "protocol"], "epsilon", "mean", "se"), _aol_note(df))


def _m_lead_grows(store):
    df = _eval_points(store, "fig-eval-vary-eps")
    p = _pem_vs_best_other(df, "epsilon", metrics=("f1",))
    return Measurement(pd.DataFrame({"series": "PEM minus the best other, F1, " + p["dataset"], "x": p["x"],
                                     "y": p["a"] - p["b"], "se": np.hypot(p["se_a"], p["se_b"])}), _aol_note(df))


def _eval_at(store, name, x, xv, dataset, protocol, metric="f1"):
    df = _eval_points(store, name)
    if dataset not in set(df["dataset"]):
        raise MissingInput(f"the {dataset} data set is not in this build")
    _require(df[x], xv, _XNAME[x])
    row = df[(df["dataset"] == dataset) & (df["protocol"] == protocol) & (df["metric"] == metric)
             & np.isclose(df[x], xv)]
    if row.empty:
        raise MissingInput(f"{name} has no {protocol} {metric} on {dataset} at {x} = {xv:g}")
    return row.iloc[0]


def _m_url_eps4_pem(store):
    r = _eval_at(store, "fig-eval-vary-eps", "epsilon", 4.0, "URL", "PEM")
    return Measurement(_one("URL, ε = 4: PEM's mean F1", r["mean"], 0.9),
                       f"{r['mean'] * 16:.1f} of the top 16 found (the paper: more than ten)")


def _m_url_eps4_others(store):
    rows = []
    for p in OTHERS:
        r = _eval_at(store, "fig-eval-vary-eps", "epsilon", 4.0, "URL", p)
        rows.append({"point": f"URL, ε = 4: {p}'s heavy hitters found (F1 × 16)", "value": r["mean"] * 16,
                     "target": 2.0})
    return pd.DataFrame(rows)


def _m_f1_ncr_corr(store):
    pts = []
    for name, x in (("fig-eval-vary-eps", "epsilon"), ("fig-eval-vary-k", "k")):
        df = _eval_points(store, name)
        w = df.pivot_table(index=["dataset", "protocol", x], columns="metric", values="mean")
        if {"f1", "ncr"} <= set(w.columns):
            pts.append(w[["f1", "ncr"]].dropna())
    if not pts:
        raise MissingInput("no point with both F1 and NCR")
    w = pd.concat(pts)
    if len(w) < 3:
        raise MissingInput("fewer than 3 points with both F1 and NCR")
    r = float(np.corrcoef(w["f1"], w["ncr"])[0, 1])
    return Measurement(_one(f"Pearson r of mean F1 and mean NCR over {len(w)} points of Figures 5 and 6", r, 1.0))


def _m_f1_ncr_order(store):
    rows = []
    for name, x in (("fig-eval-vary-eps", "epsilon"), ("fig-eval-vary-k", "k")):
        df = _eval_points(store, name)
        for (ds, xv), g in df.groupby(["dataset", x]):
            g = g.pivot_table(index="protocol", columns="metric", values=["mean", "se"])
            protos = list(g.index)
            for i in range(len(protos)):
                for j in range(i + 1, len(protos)):
                    a, b = protos[i], protos[j]
                    d = g.loc[a, ("mean", "f1")] - g.loc[b, ("mean", "f1")]
                    se = math.hypot(g.loc[a, ("se", "f1")], g.loc[b, ("se", "f1")])
                    if not abs(d) > R.Z_TOL * se or (se == 0 and d == 0):
                        continue  # F1 does not separate the two beyond noise
                    hi, lo = (a, b) if d > 0 else (b, a)
                    rows.append({"point": f"{ds}, {_XNAME[x]} = {_g(xv)}: {hi} over {lo}",
                                 "a": g.loc[hi, ("mean", "ncr")], "se_a": g.loc[hi, ("se", "ncr")],
                                 "b": g.loc[lo, ("mean", "ncr")], "se_b": g.loc[lo, ("se", "ncr")]})
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])


def _m_decrease_with_k(store, protocols=None, datasets=None):
    df = _eval_points(store, "fig-eval-vary-k")
    df = df[df["metric"] == "f1"]
    if protocols is not None:
        df = df[df["protocol"].isin(protocols)]
    if datasets is not None:
        if not set(datasets) & set(df["dataset"]):
            raise MissingInput(f"the {' and '.join(datasets)} data is not in this build")
        df = df[df["dataset"].isin(datasets)]
    return Measurement(_series(df, ["dataset", "protocol"], "k", "mean", "se"), _aol_note(df) if datasets is None
                       else "")


def _m_syn_full_k30(store):
    df = _eval_points(store, "fig-eval-vary-k")
    df = df[(df["dataset"] == "Synthetic") & (df["protocol"] == "PEM") & (df["metric"] == "f1") & (df["k"] <= 30)]
    if df.empty:
        raise MissingInput("fig-eval-vary-k has no synthetic PEM points")
    _require(df["k"], 30, "k")
    return pd.DataFrame({"point": "Synthetic, PEM, k = " + df["k"].astype(int).astype(str), "value": df["mean"],
                         "target": 1.0, "se": df["se"]})


def _m_small_k(protocol: str):
    """``protocol``'s F1 at k = 1 against k = 2, per data set (Figure 6)."""
    def measure(store):
        df = _eval_points(store, "fig-eval-vary-k")
        _require(df["k"], [1, 2], "k")
        df = df[(df["protocol"] == protocol) & (df["metric"] == "f1")]
        rows = []
        for ds, g in df.groupby("dataset", sort=False):
            g = g.set_index("k")
            rows.append({"point": f"{ds}, {protocol}: F1 at k = 1 against k = 2", "a": g.loc[1, "mean"],
                         "se_a": g.loc[1, "se"], "b": g.loc[2, "mean"], "se_b": g.loc[2, "se"]})
        frame = pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])
        return Measurement(frame, f"{protocol}'s F1 at k = 1: " + ", ".join(
            f"{ds} {g.set_index('k').loc[1, 'mean']:.2f}" for ds, g in df.groupby("dataset", sort=False))
            + _anomaly_note(store, protocol))
    return measure


#: the columns of 06_evaluation/anomalies as chapter 06 saves them (one measured quantity per row;
#: :func:`ldp.experiments.summary.anomaly_table`)
ANOMALY_LONG = ("dataset", "protocol", "k", "quantity", "value")
#: the columns the prefix-mass claim reads, one row per (data set, k, round, top value)
ANOMALY_COLUMNS = ("anomaly", "dataset", "protocol", "k", "round", "rank", "capacity")


def _anomaly_long(store) -> pd.DataFrame:
    t = _table(store, "06_evaluation", "anomalies")
    missing = [c for c in ANOMALY_LONG if c not in t.columns]
    if missing:
        raise MissingInput(f"06_evaluation/anomalies lacks the column(s) {missing} (it has {list(t.columns)})")
    return t


def _anomalies(store) -> pd.DataFrame:
    """PEM's round-1 ranks against |C_1|: the chapter's ``rank_part1_top<j>`` and ``kept_part1`` rows."""
    t = _anomaly_long(store)
    rows = []
    for (ds, proto, k), g in t.groupby(["dataset", "protocol", "k"], sort=False):
        q = dict(zip(g["quantity"], g["value"]))
        if "kept_part1" not in q:
            continue
        for name, rank in q.items():
            if str(name).startswith("rank_part1_top"):
                j = int(str(name).removeprefix("rank_part1_top"))
                rows.append((f"top {j}", ds, proto, int(k), 1, float(rank), float(q["kept_part1"])))
    return pd.DataFrame(rows, columns=list(ANOMALY_COLUMNS))


def _anomaly_note(store, protocol: str) -> str:
    """The measured cause the chapter saved for ``protocol``'s anomaly, in words ("" if none)."""
    if not store.has("06_evaluation", "anomalies"):
        return ""
    try:
        long = _anomaly_long(store)
        t = _anomalies(store)
    except MissingInput:
        return ""
    parts = []
    if protocol == "PEM":
        t = t[(t["protocol"] == protocol) & (t["rank"] > t["capacity"])]
        parts = [f"{r.dataset}, k = {int(r.k)}, round {int(r.round)}: the {r.anomaly} value's prefix ranks "
                 f"{int(r.rank)} in the true tally, {int(r.capacity)} kept" for r in t.head(4).itertuples()]
    else:
        for (ds, k), g in long[long["protocol"] == protocol].groupby(["dataset", "k"], sort=False):
            q = dict(zip(g["quantity"], g["value"]))
            if q.get("parts_missed_top1", 0) > 0 and "parts" in q:
                parts.append(f"{ds}, k = {int(k)}: the top value's pattern is not the one kept in "
                             f"{int(q['parts_missed_top1'])} of {int(q['parts'])} parts")
    return "; measured cause: " + "; ".join(parts) if parts else ""


def _m_prefix_mass(store):
    t = _anomalies(store)
    t = t[t["protocol"] == "PEM"]
    if t.empty:
        raise MissingInput("06_evaluation/anomalies has no PEM rows")
    return pd.DataFrame({"point": [f"{r.dataset}, k = {int(r.k)}, round {int(r.round)} ({r.anomaly})"
                                   for r in t.itertuples()],
                         "a": t["capacity"].to_numpy(float), "se_a": 0.0,
                         "b": t["rank"].to_numpy(float), "se_b": 0.0})


def _m_url_pem_k(store):
    m = _m_decrease_with_k(store, protocols=["PEM"], datasets=["URL"])
    df = _eval_points(store, "fig-eval-vary-k")
    r = df[(df["dataset"] == "URL") & (df["protocol"] == "PEM") & (df["metric"] == "f1")].set_index("k")
    note = ""
    if 4 in r.index and 8 in r.index:
        note = (f"URL PEM F1 at k = 4: {r.loc[4, 'mean']:.3f} (std {r.loc[4, 'std']:.3f} over {int(r.loc[4, 'runs'])} "
                f"runs); at k = 8: {r.loc[8, 'mean']:.3f}")
    return Measurement(m.frame, note)



def _var_table(store) -> pd.DataFrame:
    v = store.figure("fig-eval-var")
    v = v[v["var_count"] >= MIN_VAR_RUNS].copy()
    if v.empty:
        raise MissingInput(f"no point of fig-eval-var has {MIN_VAR_RUNS} runs that found a heavy hitter")
    v["se"] = v["var_std"] / np.sqrt(v["var_count"])
    return v


def _m_var_mcm_spm(store):
    v = _var_table(store).pivot_table(index="epsilon", columns="protocol", values=["var_mean", "se"])
    if not {("var_mean", "SPM"), ("var_mean", "MCM")} <= set(v.columns):
        raise MissingInput("fig-eval-var lacks SPM or MCM (too few runs that found a heavy hitter)")
    rows = [{"point": f"ε = {_g(e)}: Var(SPM) against Var(MCM)", "a": v.loc[e, ("var_mean", "SPM")],
             "se_a": v.loc[e, ("se", "SPM")], "b": v.loc[e, ("var_mean", "MCM")], "se_b": v.loc[e, ("se", "MCM")]}
            for e in v.index]
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"]).dropna(subset=["a", "b"])


def _m_var_pem_similar(store):
    v = _var_table(store).pivot_table(index="epsilon", columns="protocol", values="var_mean")
    if not {"PEM", "MCM"} <= set(v.columns):
        raise MissingInput("fig-eval-var lacks PEM or MCM")
    v = v.dropna(subset=["PEM", "MCM"])
    return Measurement(pd.DataFrame({"point": [f"ε = {_g(e)}: ln(Var(PEM) / Var(MCM)), ratio {r:.2f}"
                                               for e, r in zip(v.index, v["PEM"] / v["MCM"])],
                                     "value": np.log(v["PEM"] / v["MCM"]), "target": 0.0}))


def _m_var_olh(store):
    v = _var_table(store)
    return pd.DataFrame({"point": v["protocol"] + ", ε = " + v["epsilon"].map(_g), "observed": v["var_mean"],
                         "expected": v["var_pred"], "se": v["se"]})


CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- section 6.1
    Claim("s61-url-size", "6.1", "URL data set",
          r"resulting a dataset containing $1.2$ million data points, and $27$ thousand unique urls.",
          "1.2 million users", "users of the URL stand-in (millions)",
          _m_dataset_size("URL", "n", 1e6, 1.2), R.WithinTolerance(R.printed_tolerance("1.2"), _PRINTED),
          "06_evaluation", None, ("table:06_evaluation/datasets",), ("url",), stand_in_decides=False,
          interpretation=(_URL,), note="The stand-in is calibrated to these numbers, so they cannot test it."),
    Claim("s61-aol-users", "6.1", "AOL data set",
          r"This results a dataset of around $0.5$ million queries",
          "around 0.5 million users", "users of the AOL tally (millions)",
          _m_dataset_size("AOL", "n", 1e6, 0.5), R.WithinTolerance(R.printed_tolerance("0.5"), _PRINTED),
          "06_evaluation", None, ("table:06_evaluation/datasets",), interpretation=(_AOL,),
          note="The tally is the authors' own published file."),
    Claim("s61-aol-unique", "6.1", "AOL data set",
          r"including $0.2$ million unique ones.",
          "0.2 million distinct (errata: 0.12 million)", "distinct queries of the AOL tally (millions), against "
                                                         "the errata's 0.12",
          _m_dataset_size("AOL", "n_distinct", 1e6, 0.12),
          R.WithinTolerance(R.printed_tolerance("0.12"), _PRINTED),
          "06_evaluation", None, ("table:06_evaluation/datasets",), interpretation=(_AOL,),
          note="The authors' errata corrects 0.2 million to 0.12 million; the errata's value is tested."),
    Claim("s623-theta-f16", "6.2.3", "Figure 7(a)",
          r"($0.023$ is around frequency of the $16$-the most frequent value in the dataset)",
          "f_16 ≈ 0.023", "frequency of the 16th most frequent value of the synthetic set",
          _m_theta_f16, R.WithinTolerance(R.printed_tolerance("0.023"), _PRINTED),
          "06_evaluation", None, ("table:06_evaluation/datasets",), interpretation=(_SYN,), setting=_EVAL_SETTING),
    # ---------------------------------------------------------------- section 6.2.1
    Claim("fig5-pem-best", "6.2.1", "Figure 5",
          r"It is clear that \itergroup performs best among all three protocols.",
          "PEM best on every data set", "PEM against the best of MCM and SPM at each (data set, metric, ε)",
          _m_pem_best("fig-eval-vary-eps", "epsilon"), R.OrderingHolds(what="PEM at least the best other"),
          "06_evaluation", "fig-eval-vary-eps", ("figure:fig-eval-vary-eps",), _ALL_METHODS,
          interpretation=(_URL, _SPM, _MCM, _GRIDS), setting={"k_fixed": 16, **_EVAL_SETTING}),
    Claim("fig56-aol-pem-best", "6.2.1", "Figure 5(b, e), 6(b, e)",
          r"It is clear that \itergroup performs best among all three protocols.",
          "PEM best on AOL", "PEM against the best other on AOL, every ε (k = 16) and k (ε = 2), F1 and NCR",
          _m_aol_best, R.OrderingHolds(what="PEM at least the best other"),
          "06_evaluation", "fig-eval-vary-eps", ("figure:fig-eval-vary-eps", "figure:fig-eval-vary-k"),
          ("mcm", "spm"), interpretation=(_AOL, _SPM, _MCM), setting={"k_fixed": 16, "eps_fixed": 2.0}),
    Claim("fig5-more-with-eps", "6.2.1", "Figure 5",
          r"When $\epsilon$ increases, the number of heavy hitters that can be identified will increase.",
          "more heavy hitters at larger ε", "mean F1 (k fixed) against ε, per data set and protocol",
          _m_more_with_eps, R.Monotone("increasing"),
          "06_evaluation", "fig-eval-vary-eps", ("figure:fig-eval-vary-eps",), _ALL_METHODS,
          interpretation=(_GRIDS,), setting={"k_fixed": 16, **_EVAL_SETTING}),
    Claim("fig5-lead-grows-with-eps", "6.2.1", "Figure 5",
          r"The improvement is more significant when $\epsilon$ is larger.",
          "PEM's lead grows with ε", "PEM's F1 minus the best other's, per data set, against ε",
          _m_lead_grows, R.Monotone("increasing"),
          "06_evaluation", "fig-eval-vary-eps", ("figure:fig-eval-vary-eps",), _ALL_METHODS,
          interpretation=(_GRIDS,), setting={"k_fixed": 16, **_EVAL_SETTING}),
    Claim("fig5-url-eps4-pem", "6.2.1", "Figure 5(a)",
          r"When $\epsilon=4$, \itergroup achieves $\fone=0.9$,",
          "PEM F1 = 0.9 on URL at ε = 4", "PEM's mean F1 on the URL stand-in at ε = 4",
          _m_url_eps4_pem, _F1_TOL,
          "06_evaluation", "fig-eval-vary-eps", ("figure:fig-eval-vary-eps",), ("url",), stand_in_decides=False,
          interpretation=(_URL,), setting={"epsilons": (4.0,), "k_fixed": 16},
          note="A number on the URL data: the stand-in can only be compared qualitatively."),
    Claim("fig5-url-eps4-others", "6.2.1", "Figure 5(a)",
          r"on the other hand, \hash and \spm can only identify two.",
          "MCM and SPM find two URLs at ε = 4", "F1 × 16 of MCM and SPM on the URL stand-in at ε = 4",
          _m_url_eps4_others, R.WithinTolerance(R.printed_tolerance("2"), "half a unit of 'two'"),
          "06_evaluation", "fig-eval-vary-eps", ("figure:fig-eval-vary-eps",), _ALL_METHODS, stand_in_decides=False,
          interpretation=(_URL, _SPM, _MCM), setting={"epsilons": (4.0,), "k_fixed": 16},
          note="A number on the URL data: the stand-in can only be compared qualitatively."),
    # ---------------------------------------------------------------- section 6.2.2
    Claim("fig6-pem-best", "6.2.2", "Figure 6",
          r"Similarly, we can see that \itergroup outperforms \hash and \spm.",
          "PEM outperforms MCM and SPM", "PEM against the best of MCM and SPM at each (data set, metric, k)",
          _m_pem_best("fig-eval-vary-k", "k"), R.OrderingHolds(what="PEM at least the best other"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",), _ALL_METHODS,
          interpretation=(_URL, _SPM, _MCM, _GRIDS), setting={"eps_fixed": 2.0, **_EVAL_SETTING}),
    Claim("fig6-f1-ncr-correlated", "6.2.2", "Figures 5, 6",
          r"Note the correlation between \fone and \ncr is close:",
          "F1 and NCR closely correlated", "Pearson r of mean F1 and mean NCR over all points of Figures 5 and 6",
          _m_f1_ncr_corr, R.WithinTolerance(R.CLOSE_CORRELATION, "a close correlation"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-eps", "figure:fig-eval-vary-k"),
          _ALL_METHODS, interpretation=("metrics-section-421-section-626",)),
    Claim("fig6-better-f1-better-ncr", "6.2.2", "Figures 5, 6",
          r"a protocol with better \fone score will also have a better \ncr score.",
          "better F1 implies better NCR", "for every pair of methods whose F1 differs beyond noise at a point, "
                                          "the NCR of the F1-better one against the other's",
          _m_f1_ncr_order, R.OrderingHolds(floor=None, ceiling=None, what="the F1-better method's NCR at least "
                                                                          "the other's"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-eps", "figure:fig-eval-vary-k"),
          _ALL_METHODS),
    Claim("fig6-decrease-with-k", "6.2.2", "Figure 6",
          r"For most of the cases, utility scores decrease with $k$,",
          "utility falls with k in most cases", "mean F1 against k, per data set and protocol",
          _m_decrease_with_k, R.Monotone("decreasing", share=R.MOST),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",), _ALL_METHODS,
          interpretation=(_GRIDS,), setting={"eps_fixed": 2.0, **_EVAL_SETTING}),
    Claim("fig6-syn-full-utility", "6.2.2", "Figure 6(c)",
          r"In the synthetic dataset, \itergroup achieves almost full utility for up to $k=30$.",
          "F1 ≈ 1 up to k = 30", "PEM's mean F1 on the synthetic set at every k ≤ 30",
          _m_syn_full_k30, R.WithinTolerance(R.ALMOST_FULL, "almost full utility"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",),
          interpretation=(_SYN, _GRIDS), setting={"ks": (30,), "eps_fixed": 2.0, **_EVAL_SETTING},
          note="Anomaly at k = 1, 2 (cause measured in chapter 06): the two most frequent synthetic values are "
               "nearly tied, and one round of PEM ranks them wrongly now and then."),
    Claim("fig6-spm-small-k", "6.2.2", "Figure 6",
          r"utility scores decrease with $k$",
          "utility falls with k (so it is highest at k = 1)", "SPM's F1 at k = 1 against k = 2, per data set",
          _m_small_k("SPM"), R.OrderingHolds(floor=None, ceiling=None, what="F1 at k = 1 at least F1 at k = 2"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",), ("spm", "url"),
          interpretation=(_SPM,), setting={"ks": (1, 2), "eps_fixed": 2.0},
          note="Anomaly (cause measured in chapter 06): with k = 1 SPM keeps one pattern per segment, the most "
               "frequent over all users, which on text data is rarely the top value's."),
    Claim("fig6-mcm-small-k", "6.1", "Figure 6, section 6.1",
          r"and propose to use $k^{1.5}$ channels.",
          "k·√k channels (so one channel at k = 1), utility falling with k",
          "MCM's F1 at k = 1 against k = 2, per data set",
          _m_small_k("MCM"), R.OrderingHolds(floor=None, ceiling=None, what="F1 at k = 1 at least F1 at k = 2"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",), ("mcm", "url"),
          interpretation=(_MCM,), setting={"ks": (1, 2), "eps_fixed": 2.0},
          note="Anomaly (cause measured in chapter 06): at k = 1, k·√k channels round up to one, which holds "
               "every value; the per-block majority mixes patterns of different values."),
    Claim("s423-prefix-mass", "4.2.3", "eq. (5), assumption",
          r"all the $N[i]=|D_i|-k=k(2^\eta-1)$ non-heavy values have zero frequencies",
          "the non-heavy candidates have zero frequency, so a heavy hitter's prefix ranks among the |C_i| kept",
          "rank of each true top-k value's prefix in the true prefix tally against |C_i|, per round "
          "(the anomalies of Figures 5 and 6)",
          _m_prefix_mass, R.OrderingHolds(floor=None, ceiling=None, what="|C_i| at least the prefix's rank"),
          "06_evaluation", "fig-eval-vary-k", ("table:06_evaluation/anomalies",), ("url",),
          interpretation=(_URL,),
          note="Prefix mass: a prefix's frequency is the sum over every value that shares it; on the URL stand-in "
               "and AOL other values lift a non-heavy prefix above a heavy hitter's (URL PEM at k = 4, AOL PEM at "
               "k = 1)."),
    Claim("fig6-url-pem-k", "6.2.2", "Figure 6(a)",
          r"utility scores decrease with $k$",
          "utility falls with k", "PEM's mean F1 on the URL stand-in against k",
          lambda store: _m_url_pem_k(store), R.Monotone("decreasing"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",), ("url",),
          interpretation=(_URL,), setting={"eps_fixed": 2.0},
          note="Anomaly (cause measured in chapter 06): PEM's F1 on URL is exactly 0.75 in every run at k = 4: "
               "the 4th URL's 15-bit prefix ranks 5th in the true prefix tally, so C_1 never holds it "
               "(prefix mass, row s423-prefix-mass)."),
    # ---------------------------------------------------------------- section 6.2.6
    Claim("fig9-mcm-below-spm", "6.2.6", "Figure 9",
          r"Observe that the \hash method has smaller variance than \rappor,",
          "Var(MCM) < Var(SPM)", "mean squared error of SPM against MCM at each ε (points with at least "
                                 f"{MIN_VAR_RUNS} runs that found a heavy hitter)",
          _m_var_mcm_spm, R.OrderingHolds(floor=None, ceiling=None, what="Var(SPM) at least Var(MCM)"),
          "06_evaluation", "fig-eval-var", ("figure:fig-eval-var",), ("mcm", "spm"),
          interpretation=(_SPM, _MCM, "estimates-scaled-to-the-population"), setting={"k_fixed": 16, **_EVAL_SETTING}),
    Claim("fig9-pem-similar", "6.2.6", "Figure 9",
          r"and achieves similar estimation accuracy.",
          "Var(PEM) similar to Var(MCM)", "ln of Var(PEM) / Var(MCM) at each ε",
          _m_var_pem_similar, R.WithinTolerance(math.log(R.SIMILAR_FACTOR), f"within a factor {R.SIMILAR_FACTOR:g}"),
          "06_evaluation", "fig-eval-var", ("figure:fig-eval-var",), ("mcm",),
          interpretation=(_MCM, "estimates-scaled-to-the-population"), setting={"k_fixed": 16, **_EVAL_SETTING},
          note="The paper's PEM gives the last group one sixth of the users; our optimiser picks 5 groups."),
    Claim("fig9-complies-var-olh", "6.2.6", "Figure 9, eq. (3)",
          r"Note that this also complies with~\eqref{var_olh}, the estimation variance of OLH.",
          "Var as eq. (3) predicts", "mean squared error against eq. (3) for the users and budget of each "
                                     "method's final test",
          _m_var_olh, R.WithinSE(),
          "06_evaluation", "fig-eval-var", ("figure:fig-eval-var",), ("mcm", "spm"),
          interpretation=("estimates-scaled-to-the-population", "the-variance-of-olh"),
          setting={"k_fixed": 16, **_EVAL_SETTING}),
)
