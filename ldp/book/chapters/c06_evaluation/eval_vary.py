"""Paper Figures 5 and 6 (sections 6.2.1, 6.2.2, chapter 06): F1 and NCR of PEM, MCM and SPM on three data sets.

Figure 5 varies ε at k = 16, Figure 6 varies k at ε = 2; both are drawn alike
from a :func:`ldp.experiments.summarize` frame.  Their claims also read the
measured causes of the anomalies (the table ``06_evaluation/anomalies`` of
:func:`ldp.book.chapters.c06_evaluation.compute.anomaly_table`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import seaborn.objects as so

from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Because, Cause, Claim, ClaimFields, Measurement, MissingInput, Readings, Test
from ...claims.measures import OTHERS, X_NAMES, aol_note, eval_points, g, one, pem_vs_best_other, require, series
from ...claims.readings import under
from ...plotting import interval, method_scales, render
from .compute import ordered_pairs, prefix_ranks

__all__ = ["NAMES", "ENGINES", "METHODS", "K_TICKS", "URL_OTHERS_PAPER", "frame", "draw", "url_others_found",
           "stand_in_others", "CLAIMS"]

#: figure name by the varied parameter
NAMES = {"epsilon": "fig-eval-vary-eps", "k": "fig-eval-vary-k"}
ENGINES = {**{name: "count engine (10 runs)" for name in NAMES.values()},
           "06_evaluation/anomalies": "the data sets' true tallies (ldp.datasets)"}
#: the protocols in legend order
METHODS = ("PEM", "MCM", "SPM")
CHAPTER = "06_evaluation"


def frame(summary: pd.DataFrame, *, x: str, datasets) -> pd.DataFrame:
    """The figure's data: ``panel, dataset, metric, protocol, <x>, mean, std, runs`` (F1: panels a-c, NCR: d-f).

    ``summary`` is :func:`ldp.experiments.summarize` by ``dataset, protocol, x`` with ``f1`` and ``ncr``;
    ``datasets`` the data sets in panel order (a missing one leaves its panels' letters unused).
    """
    parts = []
    for row, metric in enumerate(("f1", "ncr")):
        for col, ds in enumerate(datasets):
            sub = summary[summary["dataset"] == ds]
            parts.append(pd.DataFrame({"panel": "abcdef"[3 * row + col], "dataset": ds, "metric": metric,
                                       "protocol": sub["protocol"].to_numpy(), x: sub[x].to_numpy(),
                                       "mean": sub[f"{metric}_mean"].to_numpy(), "std": sub[f"{metric}_std"].to_numpy(),
                                       "runs": sub[f"{metric}_count"].to_numpy()}))
    return pd.concat(parts, ignore_index=True)


#: the ticks of Figure 6's k axis (those within the data's range are drawn)
K_TICKS = (1, 2, 4, 8, 16, 32, 64)


def draw(data: pd.DataFrame, *, x: str, xlabel: str, panel_names: Mapping[str, str], missing: str = "",
         xtrans: str | None = None):
    """F1 (top row) and NCR (bottom row) of each protocol on each data set of ``panel_names``: mean ± 2 SE, cut at 0, 1.

    ``missing`` says why a data set has no rows (e.g. ``"is missing"``), written in its empty panels.
    ``xtrans`` is the x axis' seaborn transform (``"sqrt"``, ``"log2"``, ...); by default k is drawn on a
    square-root axis (ticks :data:`K_TICKS`), so that k = 1, 2 and 4 stand apart and 28, 30, 32 do not
    merge, and any other parameter on a linear one.
    """
    titles = {(ds, m): f"({'abcdef'[3 * r + c]}) {name}, {m.upper()}"
              for r, m in enumerate(("f1", "ncr")) for c, (ds, name) in enumerate(panel_names.items())}
    d = interval(data, "mean", "std", scale=2, runs="runs")  # ± 2 SE
    d["title"] = list(map(titles.get, zip(data["dataset"], data["metric"])))
    present = list(dict.fromkeys(data["protocol"]))
    scales = method_scales([p for p in METHODS if p in present] + [p for p in present if p not in METHODS])
    plot = (so.Plot(d, x=x, y="mean", color="protocol", marker="protocol")
            .facet(col="title", wrap=3, order=list(titles.values()))
            .add(so.Line(linewidth=1.2, pointsize=4.5)).add(so.Range(), ymin="lo", ymax="hi")
            .scale(color=scales["color"], marker=scales["marker"], x=_x_scale(x, xtrans)).limit(y=(-0.03, 1.03))
            .label(x=xlabel, y="score", title=str, color="", marker=""))
    fig = render(plot, height=4.9, ncol=3)
    for ax in fig.axes:
        for (ds, _), title in titles.items():
            if ax.get_title() == title and not ax.lines:
                ax.text(0.5, 0.5, f"No {ds} results:\nthe {ds} data file\n{missing} in this build\n"
                        "(see data/README.md)", ha="center", va="center", transform=ax.transAxes)
    return fig


def _x_scale(x: str, trans: str | None) -> so.Continuous:
    if trans is None and x == "k":
        return so.Continuous(trans="sqrt").tick(at=K_TICKS).label(like="{x:g}")
    return so.Continuous(trans=trans)


# --------------------------------------------------------------------------- claims: 6.2.1, 6.2.2
def _m_pem_best(name: str, x: str, datasets=None):
    def measure(store):
        df = eval_points(store, name)
        if datasets is not None and not set(datasets) & set(df["dataset"]):
            raise MissingInput(f"the {' and '.join(datasets)} data is not in this build")
        return Measurement(pem_vs_best_other(df, x, datasets=datasets), aol_note(df) if datasets is None else "")
    return measure


def _m_aol_best(store):
    parts = []
    for x, name in NAMES.items():
        df = eval_points(store, name)
        if "AOL" not in set(df["dataset"]):
            raise MissingInput("the AOL data set is not in this build (its data file is absent)")
        parts.append(pem_vs_best_other(df, x, datasets=["AOL"]))
    return pd.concat(parts, ignore_index=True)


def _m_more_with_eps(store):
    df = eval_points(store, NAMES["epsilon"])
    df = df[df["metric"] == "f1"]
    return Measurement(series(df, ["dataset", "protocol"], "epsilon", "mean", "se"), aol_note(df))


def _m_lead_grows(store, upto: float = np.inf):
    df = eval_points(store, NAMES["epsilon"])
    p = pem_vs_best_other(df[df["epsilon"] <= upto], "epsilon", metrics=("f1",))
    return Measurement(pd.DataFrame({"series": "PEM minus the best other, F1, " + p["dataset"], "x": p["x"],
                                     "y": p["a"] - p["b"], "se": np.hypot(p["se_a"], p["se_b"])}), aol_note(df))


def _at(store, x, xv, dataset, protocol, metric="f1"):
    df = eval_points(store, NAMES[x])
    if dataset not in set(df["dataset"]):
        raise MissingInput(f"the {dataset} data set is not in this build")
    require(df[x], xv, X_NAMES[x])
    row = df[(df["dataset"] == dataset) & (df["protocol"] == protocol) & (df["metric"] == metric)
             & np.isclose(df[x], xv)]
    if row.empty:
        raise MissingInput(f"{NAMES[x]} has no {protocol} {metric} on {dataset} at {x} = {xv:g}")
    return row.iloc[0]


def _m_url_eps4_pem(store):
    r = _at(store, "epsilon", 4.0, "URL", "PEM")
    return Measurement(one("URL, ε = 4: PEM's mean F1", r["mean"], 0.9),
                       f"{r['mean'] * 16:.1f} of the top 16 found (the paper: more than ten)")


def _m_url_eps4_others(store):
    return pd.DataFrame([{"point": f"URL, ε = 4: {p}'s heavy hitters found (F1 × 16)",
                          "value": _at(store, "epsilon", 4.0, "URL", p)["mean"] * 16, "target": 2.0} for p in OTHERS])


def _m_f1_ncr_corr(store, method: str = "pearson"):
    pts = []
    for x, name in NAMES.items():
        w = eval_points(store, name).pivot_table(index=["dataset", "protocol", x], columns="metric", values="mean")
        if {"f1", "ncr"} <= set(w.columns):
            pts.append(w[["f1", "ncr"]].dropna())
    if not pts or len(w := pd.concat(pts)) < 3:
        raise MissingInput("fewer than 3 points with both F1 and NCR")
    return one(f"{method.title()} r of mean F1 and mean NCR over {len(w)} points of Figures 5 and 6",
               float(w["f1"].corr(w["ncr"], method=method)), 1.0)


def _m_f1_ncr_order(store):
    return pd.concat([ordered_pairs(eval_points(store, name), ["dataset", x], V.Z_TOL, label=X_NAMES[x])
                      for x, name in NAMES.items()], ignore_index=True)


def _m_decrease_with_k(protocols=None, datasets=None):
    def measure(store):
        df = eval_points(store, NAMES["k"])
        df = df[df["metric"] == "f1"]
        df = df if protocols is None else df[df["protocol"].isin(protocols)]
        if datasets is not None:
            if not set(datasets) & set(df["dataset"]):
                raise MissingInput(f"the {' and '.join(datasets)} data is not in this build")
            df = df[df["dataset"].isin(datasets)]
        note = aol_note(df) if datasets is None else ""
        if datasets == ["URL"]:
            r = df[(df["protocol"] == "PEM")].set_index("k")
            if 4 in r.index and 8 in r.index:
                note = (f"URL PEM F1 at k = 4: {r.loc[4, 'mean']:.3f} (std {r.loc[4, 'std']:.3f} over "
                        f"{int(r.loc[4, 'runs'])} runs); at k = 8: {r.loc[8, 'mean']:.3f}")
        return Measurement(series(df, ["dataset", "protocol"], "k", "mean", "se"), note)
    return measure


def _m_steps(store):
    """Every step of Figure 6's F1 series from one k to the next: F1 at k against F1 at the next k."""
    s = _m_decrease_with_k()(store).frame.sort_values(["series", "x"], kind="mergesort")
    nxt = s.groupby("series", sort=False).shift(-1)
    s = s.assign(b=nxt["y"], se_b=nxt["se"], to=nxt["x"]).dropna(subset=["b"])
    return pd.DataFrame({"point": s["series"] + ": k = " + s["x"].map(g) + " to " + s["to"].map(g), "a": s["y"],
                         "se_a": s["se"], "b": s["b"], "se_b": s["se_b"]})


def _m_syn_full_k30(store):
    df = eval_points(store, NAMES["k"])
    df = df[(df["dataset"] == "Synthetic") & (df["protocol"] == "PEM") & (df["metric"] == "f1") & (df["k"] <= 30)]
    if df.empty:
        raise MissingInput(f"{NAMES['k']} has no synthetic PEM points")
    require(df["k"], 30, "k")
    return pd.DataFrame({"point": "Synthetic, PEM, k = " + df["k"].astype(int).astype(str), "value": df["mean"],
                         "target": 1.0, "se": df["se"]})


def _anomalies(store) -> pd.DataFrame:
    """The chapter's ``06_evaluation/anomalies`` (long: one measured quantity per row)."""
    t = store.load(CHAPTER, "anomalies")
    missing = [c for c in ("dataset", "protocol", "k", "quantity", "value") if c not in t.columns]
    if missing:
        raise MissingInput(f"{CHAPTER}/anomalies lacks the column(s) {missing} (it has {list(t.columns)})")
    return t


def _pattern_misses(store, protocol: str) -> str:
    """The measured cause the chapter saved for ``protocol``'s anomalies at k = 1: in how many parts the top value's
    pattern is not the one kept, per data set."""
    long = _anomalies(store)
    parts = []
    for (ds, k), grp in long[long["protocol"] == protocol].groupby(["dataset", "k"], sort=False):
        q = dict(zip(grp["quantity"], grp["value"]))
        if q.get("parts_missed_top1", 0) > 0 and "parts" in q:
            parts.append(f"{ds}, k = {int(k)}: the top value's pattern is not the one kept in "
                         f"{int(q['parts_missed_top1'])} of {int(q['parts'])} parts")
    return "measured on the exact counts: " + ("; ".join(parts) or "no part loses the top value's pattern")


#: the rule of the anomalies at k = 1 (SPM's and MCM's F1 at k = 1 against k = 2)
_SMALL_K = R.OrderingHolds(floor=None, ceiling=None, what="F1 at k = 1 at least F1 at k = 2")


def _c_small_k_pattern(protocol: str):
    """``protocol``'s F1 at k = 1 below k = 2 (the points reversed beyond noise), and the measured cause."""
    def explain(store) -> Because:
        d = _SMALL_K.decide(_m_small_k(protocol)(store).frame).numbers
        return Because("genuine", f"F1 at k = 1 is below F1 at k = 2 beyond noise at {d['losses']} of {d['points']} "
                                  f"points, worst at {d['worst_at'].split(':')[0]} ({d['worst_diff']:+.3f}); "
                                  + _pattern_misses(store, protocol))
    return explain


def _prefix_misses(store, dataset: str | None = None) -> pd.DataFrame:
    """PEM's round-1 prefixes of a true top-k value that rank below the |C_1| kept in the true tally."""
    ranks = prefix_ranks(_anomalies(store))
    t = ranks[(ranks["protocol"] == "PEM") & (ranks["rank"] > ranks["capacity"])]
    return t if dataset is None else t[t["dataset"] == dataset]


def _said(misses: pd.DataFrame) -> str:
    return "; ".join(f"{r.dataset}, k = {int(r.k)}: the prefix of the value of rank "
                     f"{str(r.anomaly).removeprefix('top ')} ranks {int(r.rank)} in the true tally, {int(r.capacity)} "
                     "kept" for r in misses.head(4).itertuples())


def _c_prefix_mass(store) -> Because:
    """How many true top-k values' prefixes rank below the |C_1| kept (prefix mass), with the first few."""
    everyone, misses = prefix_ranks(_anomalies(store)), _prefix_misses(store)
    return Because("genuine", f"in {len(misses)} of {int((everyone['protocol'] == 'PEM').sum())} cases a top-k "
                              f"value's prefix ranks below the |C_1| kept in the true prefix tally, where other values "
                              f"share a prefix (measured on the exact counts: {_said(misses)})")


def _c_url_prefix(store) -> Because:
    """The URL stand-in's own effect on PEM: a top-k URL whose 15-bit prefix ranks below the |C_1| kept."""
    misses = _prefix_misses(store, "URL")
    if misses.empty:
        raise MissingInput("no URL prefix ranks below the kept in 06_evaluation/anomalies")
    r = misses.iloc[0]
    return Because("stand-in", f"on the URL stand-in other URLs lift a prefix above a heavy hitter's: {_said(misses)}"
                               f", so round 1 never keeps that URL (measured on the exact counts)",
                   {"effect": float(r["rank"]), "reference": float(r["capacity"]), "tolerance": 0.0})


def url_others_found(store) -> dict[str, float]:
    """How many of the top 16 URLs MCM and SPM find at ε = 4 (F1 × 16, Figure 5(a)): where the paper's find two."""
    t = _m_url_eps4_others(store)
    return {p: float(v) for p, v in zip(OTHERS, t["value"])}


#: the paper's number of URLs MCM and SPM find at ε = 4 ("can only identify two", section 6.2.1), as it prints it
URL_OTHERS_PAPER = "2"


def stand_in_others(store) -> tuple[str, dict[str, float]]:
    """The measured effect of our re-implemented MCM and SPM: the URLs they find at ε = 4 against the paper's two,
    in words, with the numbers of the stand-in test (``effect``, ``reference``, ``tolerance``)."""
    found = url_others_found(store)
    best = max(found, key=lambda p: found[p])
    text = (f"on the URL stand-in our re-implemented {best} finds {found[best]:.1f} of the top 16 at ε = 4 ("
            + ", ".join(f"{p} {v:.1f}" for p, v in found.items() if p != best)
            + f"), where the paper's MCM and SPM find {URL_OTHERS_PAPER} ('can only identify two')")
    return text, {"effect": found[best], "reference": float(URL_OTHERS_PAPER),
                  "tolerance": V.printed_tolerance(URL_OTHERS_PAPER)}


def _c_lead(store) -> Because:
    """Why PEM's lead shrinks after its peak on each data set: the re-implemented competitors rise (their measured
    effect: the URLs they find at ε = 4 against the paper's two) while PEM levels off (its F1 at the largest ε:
    a ceiling only where it is within the class's distance of 1)."""
    p = pem_vs_best_other(eval_points(store, NAMES["epsilon"]), "epsilon", metrics=("f1",))
    effect, numbers = stand_in_others(store)
    parts = []
    for ds, grp in p.groupby("dataset", sort=False):
        peak, last = grp.loc[(grp["a"] - grp["b"]).idxmax()], grp.loc[grp["x"].idxmax()]
        if peak["x"] >= last["x"]:  # the lead peaks at the largest ε: it does not shrink there
            continue
        top = "its ceiling" if 1 - last["a"] <= V.BOUND_DISTANCE else "not a ceiling"
        parts.append(f"{ds}, peak {peak['a'] - peak['b']:.2f} at ε = {g(peak['x'])}, then at ε = {g(last['x'])} PEM "
                     f"{last['a']:.2f} ({top}) and the best other {last['b']:.2f}")
    return Because("stand-in", f"the lead shrinks where the re-implemented competitors keep rising: {effect}; "
                               f"per data set: {'; '.join(parts)}", numbers)


def _c_small_k(store) -> str:
    """Which series of Figure 6 break the decrease beyond noise, and where they peak."""
    s = _m_decrease_with_k()(store).frame
    decided = [d.numbers for _, grp in s.groupby("series", sort=False)
               if (d := R.Monotone("decreasing").decide(grp)).verdict != V.REPRODUCED]
    steepest = max((abs(n["worst_z"]) for n in decided), default=0.0)
    rises = "; ".join(n["worst"] for n in decided)
    return (f"{len(decided)} of {s['series'].nunique()} series rise beyond noise ({rises}; the steepest rise "
            f"{steepest:.2f} SE): at small k one value is all or nothing, and the candidate steps "
            "lose top values that share prefixes or patterns (measured on the exact counts: the details below)")


def _c_top_two(store) -> Because:
    """The near-tie behind the synthetic set's F1 at small k: the deciding shortfall (beyond 'almost full') in
    standard errors, and, where chapter 06 saved it, the two most frequent values' gap in PEM's final estimate."""
    t = _m_syn_full_k30(store)
    t = t.assign(short=(t["target"] - t["value"]).abs() - V.ALMOST_FULL)
    t = t.assign(z=[s / se if se > 0 else (math.inf if s > V.EXACT_TOL else 0.0) for s, se in zip(t["short"], t["se"])])
    w = t.loc[t["z"].idxmax()]  # the shortfall farthest beyond noise decides
    gap_se = float(w["z"])
    text = (f"{int((t['short'] > V.EXACT_TOL).sum())} of {len(t)} points fall short of 'almost full', the farthest "
            f"beyond noise F1 {w['value']:.3f} at {w['point']}, {w['short']:.3f} short, {gap_se:.2f} SE of the runs' "
            f"noise")
    if store.has(CHAPTER, "anomalies"):
        q = _anomalies(store)
        q = dict(zip(*q[(q["dataset"] == "Synthetic") & (q["protocol"] == "PEM") & (q["k"] == 1)][
            ["quantity", "value"]].to_numpy().T))
        scale = float((store.parameters(CHAPTER) or {}).get("exp_scale", 0.05))
        text += (f"; the two most frequent synthetic values are {q['top2_gap_sd']:.1f} SD of PEM's final estimate "
                 f"apart (the right order with probability {q['top2_order_prob']:.2f}), and neighbours of the "
                 f"exponential law differ by {1 - math.exp(-scale):.0%}: at small k one swap costs 1/k of F1 (F1 "
                 f"{q['f1_mean']:.2f} at k = 1)")
    return Because("near-tie", text, {"gap_se": gap_se})


def _m_small_k(protocol: str):
    """``protocol``'s F1 at k = 1 against k = 2, per data set (Figure 6)."""
    def measure(store):
        df = eval_points(store, NAMES["k"])
        require(df["k"], [1, 2], "k")
        df = df[(df["protocol"] == protocol) & (df["metric"] == "f1")]
        rows = [{"point": f"{ds}, {protocol}: F1 at k = 1 against k = 2", "a": grp.loc[1, "mean"],
                 "se_a": grp.loc[1, "se"], "b": grp.loc[2, "mean"], "se_b": grp.loc[2, "se"]}
                for ds, grp in ((ds, grp.set_index("k")) for ds, grp in df.groupby("dataset", sort=False))]
        return Measurement(pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"]),
                           f"{protocol}'s F1 at k = 1: " + ", ".join(
                               f"{ds} {grp.set_index('k').loc[1, 'mean']:.2f}"
                               for ds, grp in df.groupby("dataset", sort=False)))
    return measure


def _m_prefix_mass(store):
    t = prefix_ranks(_anomalies(store))
    t = t[t["protocol"] == "PEM"]
    if t.empty:
        raise MissingInput(f"{CHAPTER}/anomalies has no PEM rows")
    return pd.DataFrame({"point": [f"{r.dataset}, k = {int(r.k)}, round 1 ({r.anomaly})" for r in t.itertuples()],
                         "a": t["capacity"].to_numpy(float), "se_a": 0.0, "b": t["rank"].to_numpy(float), "se_b": 0.0})


_SETTING = {"n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20}
_ALL = ("url", "mcm", "spm")
_ALL_CALIBRATED = ("url-calibrated", "mcm", "spm")  # a URL number: only a qualitative comparison
_EPS: ClaimFields = dict(chapter=CHAPTER, figure=NAMES["epsilon"])
_K: ClaimFields = dict(chapter=CHAPTER, figure=NAMES["k"])
_BOTH = (NAMES["epsilon"], NAMES["k"])
_BEST = r"It is clear that \itergroup performs best among all three protocols."
_FALLS = r"utility scores decrease with $k$"
_URL_NUMBER = "A number on the URL data: the stand-in can only be compared qualitatively."
_PART = "SPM and MCM with 10 % of the users for the final test (section 6.2.4), at the ε and k the text quotes"
_URL_B = "the URL stand-in's binomial calibration (Zipf exponent 1.334, one random 5-minute slot of the month)"


def _re(reading: str, anchor: str, measure, tag: str = "", **levels):  # the claim under another reading
    return (Alternative(reading, anchor, under(measure, CHAPTER, tag, **levels)),)


#: the result tables this module's claims read (beside figure CSVs): name -> (columns, what it holds)
TABLES = {"anomalies": (("dataset", "protocol", "k", "quantity", "value"),
                        "the measured causes of Figures 5/6's anomalies on the exact counts: rank of a top-k value's "
                        "prefix or pattern in the true tally against how many the protocol keeps")}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="fig5-pem-best", section="6.2.1", ref="Figure 5", quote=_BEST, says="PEM best on every data set",
          test=Test(what="PEM against the best of MCM and SPM at each (data set, metric, ε)",
                    measure=_m_pem_best(NAMES["epsilon"], "epsilon"),
                    rule=R.OrderingHolds(what="PEM at least the best other"), setting={"k_fixed": 16, **_SETTING},
                    rests_on=(*_ALL, Readings.URL, Readings.SPM, Readings.MCM, Readings.GRIDS),
                    other_readings=_re(_PART, Readings.SPM, _m_pem_best(NAMES["epsilon"], "epsilon"), "partition"),
                    **_EPS),
          parts=(
              Claim(id="fig56-aol-pem-best", section="6.2.1", ref="Figure 5(b, e), 6(b, e)", quote=_BEST,
                    says="PEM best on AOL",
                    test=Test(what="PEM against the best other on AOL, every ε (k = 16) and k (ε = 2), F1 and NCR",
                              measure=_m_aol_best, rule=R.OrderingHolds(what="PEM at least the best other"),
                              reads=_BOTH,
                              setting={"k_fixed": 16, "eps_fixed": 2.0},
                              rests_on=("mcm", "spm", Readings.AOL, Readings.SPM, Readings.MCM),
                              other_readings=_re(_PART, Readings.SPM, _m_aol_best, "partition"), **_EPS)),
          )),
    Claim(id="fig5-more-with-eps", section="6.2.1", ref="Figure 5",
          quote=r"When $\epsilon$ increases, the number of heavy hitters that can be identified will increase.",
          says="more heavy hitters at larger ε",
          test=Test(what="mean F1 (k fixed) against ε, per data set and protocol", measure=_m_more_with_eps,
                    rule=R.Monotone("increasing"), setting={"k_fixed": 16, **_SETTING},
                    rests_on=(*_ALL, Readings.GRIDS),
                    other_readings=_re(
                        "the budgets the text quotes only (ε = 0.9, 1.2, 2, 4)", Readings.GRIDS, _m_more_with_eps,
                        epsilon=(0.9, 1.2, 2.0, 4.0)),
                    **_EPS)),
    Claim(id="fig5-lead-grows-with-eps", section="6.2.1", ref="Figure 5",
          quote=r"The improvement is more significant when $\epsilon$ is larger.", says="PEM's lead grows with ε",
          test=Test(what="PEM's F1 minus the best other's, per data set, against ε", measure=_m_lead_grows,
                    rule=R.Monotone("increasing"), setting={"k_fixed": 16, **_SETTING},
                    rests_on=(*_ALL, Readings.GRIDS), cause=Cause("stand-in", _c_lead),
                    other_readings=(Alternative("an ε grid that ends at 4, the largest budget the text quotes",
                                                Readings.GRIDS,
                                                lambda store: _m_lead_grows(store, upto=4.0)),),
                    **_EPS)),
    Claim(id="fig5-url-eps4-pem", section="6.2.1", ref="Figure 5(a)",
          quote=r"When $\epsilon=4$, \itergroup achieves $\fone=0.9$,", says="PEM F1 = 0.9 on URL at ε = 4",
          note=_URL_NUMBER,
          test=Test(what="PEM's mean F1 on the URL stand-in at ε = 4", measure=_m_url_eps4_pem,
                    rule=R.WithinTolerance(V.F1_TOL, "an F1 the text quotes"),
                    setting={"epsilons": (4.0,), "k_fixed": 16}, rests_on=("url-calibrated", Readings.URL),
                    other_readings=_re(_URL_B, Readings.URL, _m_url_eps4_pem, "url-binomial"), **_EPS),
          parts=(
              Claim(id="fig5-url-eps4-others", section="6.2.1", ref="Figure 5(a)",
                    quote=r"on the other hand, \hash and \spm can only identify two.",
                    says="MCM and SPM find two URLs at ε = 4", note=_URL_NUMBER,
                    test=Test(what="F1 × 16 of MCM and SPM on the URL stand-in at ε = 4", measure=_m_url_eps4_others,
                              rule=R.WithinTolerance(V.printed_tolerance("2"), "half a unit of 'two'"),
                              setting={"epsilons": (4.0,), "k_fixed": 16},
                              rests_on=(*_ALL_CALIBRATED, Readings.URL, Readings.SPM, Readings.MCM),
                              other_readings=_re(_PART, Readings.SPM, _m_url_eps4_others, "partition"), **_EPS)),
          )),
    Claim(id="fig6-pem-best", section="6.2.2", ref="Figure 6",
          quote=r"Similarly, we can see that \itergroup outperforms \hash and \spm.",
          says="PEM outperforms MCM and SPM",
          test=Test(what="PEM against the best of MCM and SPM at each (data set, metric, k)",
                    measure=_m_pem_best(NAMES["k"], "k"), rule=R.OrderingHolds(what="PEM at least the best other"),
                    setting={"eps_fixed": 2.0, **_SETTING},
                    rests_on=(*_ALL, Readings.URL, Readings.SPM, Readings.MCM, Readings.GRIDS),
                    other_readings=_re(_PART, Readings.SPM, _m_pem_best(NAMES["k"], "k"), "partition"), **_K)),
    Claim(id="fig6-f1-ncr-correlated", section="6.2.2", ref="Figures 5, 6",
          quote=r"Note the correlation between \fone and \ncr is close:", says="F1 and NCR closely correlated",
          test=Test(what="Pearson r of mean F1 and mean NCR over all points of Figures 5 and 6",
                    measure=_m_f1_ncr_corr, rule=R.WithinTolerance(V.CLOSE_CORRELATION, "a close correlation"),
                    reads=_BOTH, rests_on=(*_ALL, "metrics-section-421-section-626"),
                    other_readings=(Alternative("Spearman's rank correlation, not Pearson's",
                                                "metrics-section-421-section-626",
                                                lambda store: _m_f1_ncr_corr(store, "spearman")),),
                    **_K),
          parts=(
              Claim(id="fig6-better-f1-better-ncr", section="6.2.2", ref="Figures 5, 6",
                    quote=r"a protocol with better \fone score will also have a better \ncr score.",
                    says="better F1 implies better NCR",
                    test=Test(what="for every pair of methods whose F1 differs beyond noise at a point, the NCR of "
                                   "the F1-better one "
                                   "against the other's",
                              measure=_m_f1_ncr_order,
                              rule=R.OrderingHolds(floor=None, ceiling=None,
                                                   what="the F1-better method's NCR at least the other's"),
                              reads=_BOTH, rests_on=_ALL, **_K)),
          )),
    Claim(id="fig6-decrease-with-k", section="6.2.2", ref="Figure 6",
          quote=r"For most of the cases, utility scores decrease with $k$,",
          says="utility falls with k in most cases",
          test=Test(what="mean F1 against k, per data set and protocol", measure=_m_decrease_with_k(),
                    rule=R.Monotone("decreasing", share=V.MOST), setting={"eps_fixed": 2.0, **_SETTING},
                    rests_on=(*_ALL, Readings.GRIDS, Readings.CASES), cause=Cause("genuine", _c_small_k),
                    other_readings=(Alternative("'cases' as the steps from one k to the next, not whole series",
                                                Readings.CASES,
                                                _m_steps,
                                                R.OrderingHolds(share=V.MOST,
                                                                what="F1 at k at least F1 at the next k")),),
                    **_K),
          details=(
              Claim(id="fig6-spm-small-k", section="6.2.2", ref="Figure 6", quote=_FALLS,
                    says="utility falls with k (so it is highest at k = 1)",
                    note="With k = 1 SPM keeps one pattern per segment, the most frequent over all users, which on "
                         "text data "
                         "is rarely the top value's.",
                    test=Test(what="SPM's F1 at k = 1 against k = 2, per data set", measure=_m_small_k("SPM"),
                              rule=_SMALL_K,
                              setting={"ks": (1, 2), "eps_fixed": 2.0}, rests_on=("spm", "url", Readings.SPM),
                              cause=Cause("genuine", _c_small_k_pattern("SPM")),
                              other_readings=_re(_PART, Readings.SPM, _m_small_k("SPM"), "partition"), **_K)),
              Claim(id="fig6-mcm-small-k", section="6.2.2", ref="Figure 6", quote=_FALLS,
                    says="utility falls with k (so it is highest at k = 1), for MCM with its k^1.5 channels (section "
                         "6.1)",
                    note="At k = 1, k·√k channels (section 6.1: 'propose to use k^1.5 channels') round up to one, "
                         "which holds "
                         "every value; the per-block majority mixes patterns of different values.",
                    test=Test(what="MCM's F1 at k = 1 against k = 2, per data set", measure=_m_small_k("MCM"),
                              rule=_SMALL_K,
                              setting={"ks": (1, 2), "eps_fixed": 2.0}, rests_on=("mcm", "url", Readings.MCM),
                              cause=Cause("genuine", _c_small_k_pattern("MCM")),
                              other_readings=_re(_PART, Readings.MCM, _m_small_k("MCM"), "partition"), **_K)),
              Claim(id="fig6-url-pem-k", section="6.2.2", ref="Figure 6(a)", quote=_FALLS, says="utility falls with k",
                    note="PEM's F1 on URL is exactly 0.75 in every run at k = 4: "
                         "the 4th URL's 15-bit prefix ranks 5th in the true prefix tally, so C_1 never holds it "
                         "(prefix mass, row s423-prefix-mass).",
                    test=Test(what="PEM's mean F1 on the URL stand-in against k", measure=_m_decrease_with_k(["PEM"],
                                                                                                             ["URL"]),
                              rule=R.Monotone("decreasing"), setting={"eps_fixed": 2.0}, rests_on=("url", Readings.URL),
                              cause=Cause("stand-in", _c_url_prefix),
                              other_readings=_re(_URL_B, Readings.URL, _m_decrease_with_k(["PEM"], ["URL"]),
                                                 "url-binomial"),
                              **_K)),
          )),
    Claim(id="fig6-syn-full-utility", section="6.2.2", ref="Figure 6(c)",
          quote=r"In the synthetic dataset, \itergroup achieves almost full utility for up to $k=30$.",
          says="F1 ≈ 1 up to k = 30",
          test=Test(what="PEM's mean F1 on the synthetic set at every k ≤ 30", measure=_m_syn_full_k30,
                    rule=R.WithinTolerance(V.ALMOST_FULL, "almost full utility"),
                    setting={"ks": (30,), "eps_fixed": 2.0, **_SETTING},
                    rests_on=(Readings.SYNTHETIC, Readings.GRIDS), cause=Cause("near-tie", _c_top_two),
                    other_readings=_re(
                        "the synthetic set cut at RAPPOR's 100 values", Readings.SYNTHETIC, _m_syn_full_k30, "exp-100"),
                    **_K)),
    Claim(id="s423-prefix-mass", section="4.2.3", ref="eq. (5), assumption",
          quote=r"all the $N[i]=|D_i|-k=k(2^\eta-1)$ non-heavy values have zero frequencies",
          says="the non-heavy candidates have zero frequency, so a heavy hitter's prefix ranks among the |C_i| kept",
          kind="reading",
          note="An assumption of the analysis, not a result: we test it on the data. Prefix mass: a prefix's "
               "frequency is the sum over every value that shares it; on the URL stand-in and AOL other values lift a "
               "non-heavy prefix above a heavy hitter's (URL PEM at k = 4, AOL PEM at k = 1).",
          test=Test(what="rank of each true top-k value's prefix in the true prefix tally against |C_i|, per round "
                         "(the "
                         "anomalies of Figures 5 and 6)",
                    measure=_m_prefix_mass,
                    rule=R.OrderingHolds(floor=None, ceiling=None, what="|C_i| at least the prefix's rank"),
                    reads=(f"{CHAPTER}/anomalies",), rests_on=("url", Readings.URL),
                    cause=Cause("genuine", _c_prefix_mass),
                    other_readings=_re(_URL_B, Readings.URL, _m_prefix_mass, "url-binomial"), **_K)),
)
