"""The claims registry: every claim of sections 2-6 of the paper, as data.

One :class:`Claim` per statement the paper makes in words or numbers,
including the trend each figure's text describes.  Each entry holds

* a stable ``id`` (``"fig5-pem-best"``), the paper's section and the figure,
  equation or statement as the paper numbers them (``ref``);
* a short **verbatim** quote of the paper's LaTeX source (``quote``; macros
  such as ``\\itergroup`` are kept, :func:`display_quote` renders them as the
  paper prints them: PEM, MCM, SPM, F1, ...);
* ``measure``: a function of the saved results (:class:`~.results.ResultStore`:
  figure CSVs and a few named tables), never of prose, returning the tidy
  table its ``rule`` decides on;
* ``rule``: one of the decision rules of :mod:`ldp.reporting.rules`, with its
  parameters;
* whether it rests on stand-in data or re-implemented methods
  (``stand_in``: :data:`STAND_INS`; ``stand_in_decides=False`` when the
  stand-in cannot decide the claim, e.g. a number the URL stand-in was
  calibrated to) or on our reading of a detail the paper leaves open
  (``interpretation``: anchors of ``book/interpretation.md``);
* where the book measures it (``chapter``: notebook name, ``figure``: the
  figure's label) and the chapter parameters the claim's setting needs
  (``setting``), so that a rerun with other parameters is marked "not covered
  by this run's parameters".

Figures and equations are numbered as in the paper: fig:all_methods = Figure 1,
fig:vary_f_multi = 2, fig:match_config = 3, fig:match_optimal_config = 4,
fig:eval_vary_method = 5, fig:eval_vary_k_method_1-32 = 6,
fig:eval_vary_method_syn_thres = 7, fig:eval_more = 8 (a, b, c),
fig:eval_var = 9; var_grr = (1), eqn:est = (2), var_olh = (3),
eqn:utility_score = (4), eqn:iden_prob = (5), eqn:full_iden = (6).  Sections
are numbered by the LaTeX's structure (section 4.3 = "Instantiate PEM",
4.4 = "Observations and Design Principles").
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import rules as R
from .results import MissingResult, ResultStore

__all__ = ["Claim", "Measurement", "NotCovered", "MissingInput", "CLAIMS", "STAND_INS", "FIGURE_ENGINES",
           "FIGURE_TITLES", "get_claim", "display_quote", "MIN_VAR_RUNS", "check_quotes", "paper_sections"]


class NotCovered(LookupError):
    """The run's parameters leave out the setting the claim is about."""


class MissingInput(LookupError):
    """An input of the claim is not in the store (e.g. the AOL data was absent), or was never run."""


@dataclass(frozen=True)
class Measurement:
    """What a claim's ``measure`` returns: the rule's input table and an optional note with extra facts."""

    frame: pd.DataFrame
    note: str = ""


#: the data sets and methods that are not the paper's own
STAND_INS = {
    "url": "URL data set: a calibrated stand-in (the paper's Quantcast counts were never published)",
    "mcm": "MCM: re-implemented from the paper's text (the authors' code has no MCM)",
    "spm": "SPM: re-implemented from the paper's text (the authors' code has no SPM)",
}

#: what computed each figure / table the claims read (for the scorecard)
FIGURE_ENGINES = {
    "fig-oracles-variance-dprime": "closed form (ldp.analysis)",
    "fig-existing-all-methods": "protocol configurations (no simulation)",
    "fig-pem-optimizer": "closed form, eq. (4)-(5) (ldp.analysis)",
    "fig-pem-prop1": "closed form, eq. (6) (ldp.analysis)",
    "fig-validation-identification": "count engine (100 runs) against eq. (5)",
    "fig-validation-configurations": "count engine (100 runs) against eq. (4)",
    "fig-validation-optimal": "count engine (100 runs) against eq. (4)",
    "fig-eval-vary-eps": "count engine (10 runs)",
    "fig-eval-vary-k": "count engine (10 runs)",
    "fig-eval-var": "count engine (10 runs) against eq. (3)",
    "fig-evalmore-threshold": "count engine (10 runs)",
    "fig-evalmore-design": "count engine (10 runs)",
    "01_frequency_oracles/oracle-examples": "closed form (ldp.analysis)",
    "03_pem/joint-estimator": "OLH reports of simulated users (ldp.oracles)",
    "06_evaluation/datasets": "the data sets themselves (ldp.datasets)",
    "07_evaluation_more/threshold-release": "count engine (10 runs)",
}

#: the paper's number of each of our figures
FIGURE_TITLES = {
    "fig-oracles-variance-dprime": "eq. (1), (3)",
    "fig-existing-all-methods": "Figure 1",
    "fig-pem-optimizer": "section 4.3",
    "fig-pem-prop1": "Proposition 1",
    "fig-validation-identification": "Figure 2",
    "fig-validation-configurations": "Figure 3",
    "fig-validation-optimal": "Figure 4",
    "fig-eval-vary-eps": "Figure 5",
    "fig-eval-vary-k": "Figure 6",
    "fig-eval-var": "Figure 9",
    "fig-evalmore-threshold": "Figure 7",
    "fig-evalmore-design": "Figure 8",
}

_MACROS = {r"\itergroup": "PEM", r"\hash": "MCM", r"\spm": "SPM", r"\rappor": "SPM", r"\fone": "F1",
           r"\ncr": "NCR", r"\olh": "OLH", r"\grr": "GRR", r"\var": "Var", r"\rap": "RAPPOR", r"\blh": "BLH"}


#: the paper's numbers of the LaTeX labels the quotes refer to
_LABELS = {"fig:all_methods": "1", "fig:vary_f_multi": "2", "fig:match_config": "3", "fig:match_optimal_config": "4",
           "fig:eval_vary_method": "5", "fig:eval_vary_k_method_1-32": "6", "fig:eval_vary_method_syn_thres": "7",
           "subfig:eval_eps_synthesizeexponential_thres": "7(a)", "subfig:eval_k_synthesize_exponential_thres": "7(b)",
           "subfig:eval_k_synthesize_exponential_thres_e4": "7(c)", "fig:eval_more": "8", "fig:eval_improve": "8(a)",
           "fig:eval_s": "8(b)", "fig:eval_dist": "8(c)", "fig:eval_var": "9", "var_grr": "(1)", "eqn:est": "(2)",
           "var_olh": "(3)", "eqn:utility_score": "(4)", "eqn:iden_prob": "(5)", "eqn:full_iden": "(6)"}


def display_quote(quote: str) -> str:
    """A quote as the paper prints it: macros expanded (``\\itergroup`` -> PEM), references numbered."""
    pieces = quote.split("$")
    for i, piece in enumerate(pieces):
        for macro, text in sorted(_MACROS.items(), key=lambda kv: -len(kv[0])):
            # outside math: the word and a space (\xspace); inside math: upright letters
            repl = text + " " if i % 2 == 0 else rf"\mathsf{{{text}}}"
            piece = re.sub(re.escape(macro) + r"(?![A-Za-z])" + (r"\s?" if i % 2 == 0 else ""),
                           lambda m, r=repl: r, piece)
        pieces[i] = piece
    out = "$".join(pieces)
    out = re.sub(r"~?\\(?:eq)?ref\{([^}]*)\}", lambda m: " " + _LABELS.get(m.group(1), "?"), out)
    out = re.sub(r"\s+([,.;:)])", r"\1", out)
    return re.sub(r"\s+", " ", out).strip()


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and how it is decided.

    Attributes
    ----------
    id : str
        Stable identifier, e.g. ``"fig5-pem-best"``.
    section : str
        The paper's section, e.g. ``"6.2.1"`` or ``"Appendix"``.
    ref : str
        The figure, equation or statement as the paper numbers it.
    quote : str
        A short verbatim quote of the paper's LaTeX source.
    paper : str
        What the paper says, in a few words (plain text).
    tested : str
        What we test, in a few words.
    measure : callable
        ``measure(store) -> DataFrame | Measurement``; raises
        :class:`~.results.MissingResult` / :class:`MissingInput` (inputs
        absent) or :class:`NotCovered` (the run's grid leaves out the claim's
        point).
    rule : ldp.reporting.rules.Rule
        The decision rule with its parameters.
    chapter : str
        The chapter (notebook) that measures it.
    figure : str or None
        The label of the figure that shows it, if any.
    inputs : tuple of str
        ``"figure:NAME"`` and ``"table:CHAPTER/NAME"`` it reads.
    stand_in : tuple of str
        Keys of :data:`STAND_INS` it rests on.
    stand_in_decides : bool
        ``False``: the stand-in cannot decide this claim, the verdict is "not
        testable here" whatever the numbers.
    interpretation : tuple of str
        Anchors of ``book/interpretation.md`` (our readings it rests on).
    setting : mapping
        Chapter parameters the claim needs: name -> value, or -> tuple of
        values the parameter's list must contain.
    note : str
        A remark shown with the claim.
    """

    id: str
    section: str
    ref: str
    quote: str
    paper: str
    tested: str
    measure: Callable[[ResultStore], Any]
    rule: R.Rule
    chapter: str
    figure: str | None = None
    inputs: tuple[str, ...] = ()
    stand_in: tuple[str, ...] = ()
    stand_in_decides: bool = True
    interpretation: tuple[str, ...] = ()
    setting: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""


# =========================================================================== #
# helpers: reading the saved tables
# =========================================================================== #
MIN_VAR_RUNS = 3  # Figure 9: a point needs this many runs that found a heavy hitter
K_FIXED = 16  # k of Figures 5, 7(a), 8 and 9 (section 6); the SE floor of Figures 7 and 8 uses it too
_METRIC = {"f1": "F1", "ncr": "NCR"}
_XNAME = {"epsilon": "ε", "k": "k", "threshold": "θ"}
OTHERS = ("MCM", "SPM")


def _g(x) -> str:
    return f"{float(x):g}"


def _require(values, wanted, what: str) -> None:
    """NotCovered unless every wanted value is among ``values`` (floats compared with a tolerance)."""
    have = np.asarray(pd.unique(pd.Series(values).dropna()), dtype=float)
    for w in np.atleast_1d(wanted):
        if not np.any(np.isclose(have, float(w), rtol=1e-9, atol=1e-12)):
            raise NotCovered(f"{what} = {_g(w)} is not among this run's values "
                             f"({', '.join(_g(v) for v in sorted(have)) or 'none'})")


def _score_se(std, runs, k) -> np.ndarray:
    """Standard error of a mean F1 / NCR over ``runs`` runs, floored at one heavy hitter of ``k`` in one run.

    Without the floor a point where every run scored the same (std 0) would
    count as exact, and any difference from it as infinitely many standard errors.
    """
    runs = np.asarray(runs, dtype=float).clip(min=1)
    sem = np.asarray(std, dtype=float) / np.sqrt(runs)
    return np.maximum(np.nan_to_num(sem, nan=0.0), 1.0 / (np.asarray(k, dtype=float) * runs))


def _eval_points(store: ResultStore, name: str) -> pd.DataFrame:
    """Figure 5 or 6 data with the standard error of each mean (:func:`_score_se`)."""
    df = store.figure(name).copy()
    df["se"] = _score_se(df["std"], df["runs"], df["k"] if "k" in df.columns else K_FIXED)
    return df


def _aol_note(df: pd.DataFrame) -> str:
    return "" if "AOL" in set(df["dataset"]) else "AOL is not in this build (its data file is absent)"


def _pem_vs_best_other(df: pd.DataFrame, x: str, *, metrics=("f1", "ncr"), datasets=None,
                       where: pd.Series | None = None) -> pd.DataFrame:
    """One row per (data set, metric, x): PEM against the best of the others."""
    rows = []
    sub = df[df["metric"].isin(metrics)]
    if datasets is not None:
        sub = sub[sub["dataset"].isin(datasets)]
    for (ds, metric, xv), g in sub.groupby(["dataset", "metric", x], sort=False):
        g = g.set_index("protocol")
        if "PEM" not in g.index or not set(OTHERS) & set(g.index):
            continue
        others = g.loc[[p for p in OTHERS if p in g.index]]
        best = others["mean"].idxmax()
        rows.append({"point": f"{ds}, {_METRIC[metric]}, {_XNAME[x]} = {_g(xv)}", "dataset": ds, "metric": metric,
                     "x": float(xv), "a": g.loc["PEM", "mean"], "se_a": g.loc["PEM", "se"],
                     "b": others.loc[best, "mean"], "se_b": others.loc[best, "se"],
                     "others_min": others["mean"].min(), "best_other": best})
    return pd.DataFrame(rows, columns=["point", "dataset", "metric", "x", "a", "se_a", "b", "se_b", "others_min",
                                       "best_other"])


def _series(df: pd.DataFrame, series_cols, x: str, y: str, se: str) -> pd.DataFrame:
    out = df.assign(series=df[list(series_cols)].astype(str).agg(", ".join, axis=1))
    return out.rename(columns={x: "x", y: "y", se: "se"})[["series", "x", "y", "se"]]


def _table(store: ResultStore, chapter: str, name: str) -> pd.DataFrame:
    return store.load(chapter, name)


def _quantity(store: ResultStore, name: str) -> float:
    t = _table(store, "01_frequency_oracles", "oracle-examples").set_index("quantity")["value"]
    if name not in t.index:
        raise MissingInput(f"01_frequency_oracles/oracle-examples has no quantity {name!r}")
    return float(t.loc[name])


def _one(point: str, value: float, target: float) -> pd.DataFrame:
    return pd.DataFrame({"point": [point], "value": [value], "target": [target]})


# =========================================================================== #
# section 2: frequency oracles (chapter 01)
# =========================================================================== #
def _m_grr_p(store):
    return _one("GRR p at ε = ln 49, d = 2^16", _quantity(store, "grr_p_eps_ln49_d65536"), 0.00075)


def _m_grr_var(store):
    return _one("GRR variance / n at ε = ln 49, d = 2^16", _quantity(store, "grr_var_per_n_eps_ln49_d65536"), 28.5)


def _m_olh_std(store):
    return _one("OLH standard deviation / √n at e^ε = 10", _quantity(store, "olh_std_per_sqrt_n_e10"), 0.7)


def _m_olh_nmin(store):
    value = _quantity(store, "olh_min_population_e10_f0.001_std0.7")
    try:
        exact = f"unrounded (standard deviation 0.703): {_quantity(store, 'olh_min_population_e10_f0.001'):,.0f}"
    except MissingInput:
        exact = ""
    return Measurement(_one("smallest n with 0.001 n ≥ 3 × 0.7 √n", value, 4_410_000), exact)


def _m_olh_quadruple(store):
    return _one("n needed for frequency 0.0005 / n needed for 0.001",
                _quantity(store, "olh_min_population_ratio_half_f"), 4.0)


def _m_dprime_optimal(store):
    d = store.figure("fig-oracles-variance-dprime")
    d = d[(d["panel"] == "a") & (d["series"] == "OLH Var(d') / Var(d' = e^eps + 1)")]
    if d.empty:
        raise MissingInput("fig-oracles-variance-dprime has no panel (a) curve")
    return pd.DataFrame({"point": [f"ε = {_g(e)}, d' = {x:.3g}" for e, x in zip(d["epsilon"], d["x"])],
                         "a": d["y"].to_numpy(), "se_a": 0.0, "b": 1.0, "se_b": 0.0})


def _m_grr_vs_olh(store):
    d = store.figure("fig-oracles-variance-dprime")
    d = d[d["panel"] == "b"]
    rows = []
    for eps, g in d.groupby("epsilon"):
        grr = g[g["series"] == "GRR, eq. (var_grr)"].sort_values("x")
        olh = g[g["series"].str.startswith("OLH")]
        if grr.empty or olh.empty:
            continue
        v_olh = float(olh["y"].iloc[0])
        lo, hi = grr.iloc[0], grr.iloc[-1]
        rows.append({"point": f"ε = {_g(eps)}, smallest d = {lo['x']:.3g}: GRR below OLH", "a": v_olh,
                     "b": float(lo["y"])})
        rows.append({"point": f"ε = {_g(eps)}, largest d = {hi['x']:.3g}: OLH below GRR", "a": float(hi["y"]),
                     "b": v_olh})
    if not rows:
        raise MissingInput("fig-oracles-variance-dprime has no panel (b) curves")
    return pd.DataFrame(rows).assign(se_a=0.0, se_b=0.0)


# =========================================================================== #
# section 3: Figure 1 (chapter 02)
# =========================================================================== #
def _m_fig1_groups(method: str, paper_groups: int):
    def measure(store):
        d = store.figure("fig-existing-all-methods")
        d = d[(d["method"] == method) & (d["bar"] != "whole value") & (d["group"] != 0)]
        if d.empty:
            raise MissingInput(f"fig-existing-all-methods has no {method} panel")
        return _one(f"{method}: user groups reporting parts of the value", d["group"].nunique(), paper_groups)
    return measure


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
        pts.append(w[["f1", "ncr"]].dropna())
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


def _m_spm_k1(store):
    df = _eval_points(store, "fig-eval-vary-k")
    _require(df["k"], [1, 2], "k")
    df = df[(df["protocol"] == "SPM") & (df["metric"] == "f1")]
    rows = []
    for ds, g in df.groupby("dataset", sort=False):
        g = g.set_index("k")
        rows.append({"point": f"{ds}, SPM: F1 at k = 1 against k = 2", "a": g.loc[1, "mean"], "se_a": g.loc[1, "se"],
                     "b": g.loc[2, "mean"], "se_b": g.loc[2, "se"]})
    return Measurement(pd.DataFrame(rows), "SPM's F1 at k = 1: " + ", ".join(
        f"{ds} {g.set_index('k').loc[1, 'mean']:.2f}" for ds, g in df.groupby("dataset", sort=False)))


def _m_url_pem_k(store):
    m = _m_decrease_with_k(store, protocols=["PEM"], datasets=["URL"])
    df = _eval_points(store, "fig-eval-vary-k")
    r = df[(df["dataset"] == "URL") & (df["protocol"] == "PEM") & (df["metric"] == "f1")].set_index("k")
    note = ""
    if 4 in r.index and 8 in r.index:
        note = (f"URL PEM F1 at k = 4: {r.loc[4, 'mean']:.3f} (std {r.loc[4, 'std']:.3f} over {int(r.loc[4, 'runs'])} "
                f"runs); at k = 8: {r.loc[8, 'mean']:.3f}")
    return Measurement(m.frame, note)


def _threshold(store, panel: str) -> pd.DataFrame:
    d = store.figure("fig-evalmore-threshold")
    d = d[d["panel"] == panel].copy()
    if d.empty:
        raise MissingInput(f"fig-evalmore-threshold has no panel ({panel})")
    d["se"] = _score_se(d["f1_std"], d["runs"], K_FIXED)
    return d.rename(columns={"f1_mean": "mean"})


def _pem_vs_others_rows(d: pd.DataFrame, by: list[str], label) -> pd.DataFrame:
    rows = []
    for key, g in d.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        g = g.set_index("protocol")
        if "PEM" not in g.index:
            continue
        others = g.loc[[p for p in OTHERS if p in g.index]]
        best = others["mean"].idxmax()
        rows.append({"point": label(key, best), "x": key[-1],
                     "a": g.loc["PEM", "mean"], "se_a": g.loc["PEM", "se"], "b": others.loc[best, "mean"],
                     "se_b": others.loc[best, "se"], "others_min": others["mean"].min()})
    return pd.DataFrame(rows, columns=["point", "x", "a", "se_a", "b", "se_b", "others_min"])


def _m_fig7a_better(store):
    d = _threshold(store, "a")
    return _pem_vs_others_rows(d, ["epsilon"], lambda key, best: f"θ = 0.023, ε = {_g(key[0])} (best other {best})")


def _m_fig7a_lead(store):
    d = _threshold(store, "a")
    _require(d["epsilon"], 2.0, "ε")
    p = _pem_vs_others_rows(d, ["epsilon"], lambda key, best: _g(key[0]))
    return pd.DataFrame({"series": "PEM minus the best other, F1, θ = 0.023", "x": p["x"], "y": p["a"] - p["b"],
                         "se": np.hypot(p["se_a"], p["se_b"])})


def _m_fig7bc_better(store):
    parts = [_pem_vs_others_rows(_threshold(store, panel), ["epsilon", "threshold"],
                                 lambda key, best, panel=panel: f"({panel}) ε = {_g(key[0])}, θ = {_g(key[1])} "
                                                                f"(best other {best})")
             for panel in ("b", "c")]
    return pd.concat(parts, ignore_index=True)


def _m_fig7b_reversal(store):
    d = _threshold(store, "b")
    _require(d["epsilon"], 2.0, "ε")
    _require(d["threshold"], 0.005, "θ")
    d = d[np.isclose(d["epsilon"], 2.0) & np.isclose(d["threshold"], 0.005)]
    rows = _pem_vs_others_rows(d, ["epsilon", "threshold"],
                               lambda key, best: f"(b) ε = 2, θ = 0.005: PEM against {best}")
    note = ""
    if store.has("07_evaluation_more", "threshold-release"):
        t = _table(store, "07_evaluation_more", "threshold-release")
        t = t[(t["panel"] == "b") & np.isclose(t["epsilon"], 2.0) & np.isclose(t["threshold"], 0.005)]
        if len(t):
            t = t.set_index("protocol")
            note = "values released (mean): " + ", ".join(f"{p} {t.loc[p, 'released_mean']:.0f}" for p in t.index) \
                + f"; values with frequency ≥ 0.005: {int(t['true_count'].iloc[0])}"
    return Measurement(rows, note)


def _design(store, panel: str) -> pd.DataFrame:
    d = store.figure("fig-evalmore-design")
    d = d[d["panel"] == panel].copy()
    if d.empty:
        raise MissingInput(f"fig-evalmore-design has no panel ({panel})")
    d["se"] = _score_se(d["f1_std"], d["runs"].astype(float), K_FIXED)
    return d


def _m_fig8a_partition(store):
    d = _design(store, "a")
    rows = []
    for p in OTHERS:
        split = d[d["series"] == f"{p}, budget split"].set_index("epsilon")
        part = d[d["series"] == f"{p}, partitioned users"].set_index("epsilon")
        for e in split.index.intersection(part.index):
            rows.append({"point": f"{p}, ε = {_g(e)}: partitioned users against budget split",
                         "a": part.loc[e, "f1_mean"], "se_a": part.loc[e, "se"], "b": split.loc[e, "f1_mean"],
                         "se_b": split.loc[e, "se"]})
    if not rows:
        raise MissingInput("fig-evalmore-design (a) has no budget-split / partition pairs")
    return pd.DataFrame(rows)


def _m_fig8a_point(series: str, eps: float):
    def get(store):
        d = _design(store, "a")
        _require(d["epsilon"], eps, "ε")
        r = d[(d["series"] == series) & np.isclose(d["epsilon"], eps)]
        if r.empty:
            raise MissingInput(f"fig-evalmore-design (a) has no series {series!r}")
        return r.iloc[0]
    return get


def _m_mcm_split_low(store):
    r = _m_fig8a_point("MCM, budget split", 1.2)(store)
    return pd.DataFrame({"point": ["MCM, budget split, ε = 1.2: 0.2 against its F1"], "a": [0.2], "se_a": [0.0],
                         "b": [r["f1_mean"]], "se_b": [r["se"]]})


def _m_mcm_part_high(store):
    r = _m_fig8a_point("MCM, partitioned users", 1.2)(store)
    return _one("MCM, partitioned users, ε = 1.2: mean F1", r["f1_mean"], 0.8)


def _eta_series(store) -> pd.DataFrame:
    d = _design(store, "b")
    d = d[d["series"].str.match(r"^eta = \d+$")]
    if d.empty:
        raise MissingInput("fig-evalmore-design (b) has no fixed-η series")
    return d.assign(eta=d["series"].str.extract(r"(\d+)", expand=False).astype(int))


def _m_fig8b_mono(store):
    d = _eta_series(store)
    return pd.DataFrame({"series": "ε = " + d["epsilon"].map(_g), "x": d["eta"], "y": d["f1_mean"], "se": d["se"]})


def _m_fig8b_point(eta: int, target: float):
    def measure(store):
        d = _eta_series(store)
        _require(d["epsilon"], 0.9, "ε")
        _require(d["eta"], eta, "η")
        r = d[(d["eta"] == eta) & np.isclose(d["epsilon"], 0.9)].iloc[0]
        return _one(f"PEM with η = {eta}, ε = 0.9: mean F1", r["f1_mean"], target)
    return measure


def _m_fig8c(store):
    d = _design(store, "c")
    rows = []
    for e, g in d.groupby("epsilon"):
        if len(g) >= 2:
            hi, lo = g.loc[g["f1_mean"].idxmax()], g.loc[g["f1_mean"].idxmin()]
            rows.append({"point": f"ε = {_g(e)}: spread over {len(g)} assumptions "
                                  f"({lo['series']} lowest, {hi['series']} highest)",
                         "value": hi["f1_mean"] - lo["f1_mean"], "target": 0.0, "se": math.hypot(hi["se"], lo["se"])})
    if not rows:
        raise MissingInput("fig-evalmore-design (c) has fewer than two assumptions")
    return pd.DataFrame(rows)


def _var_table(store) -> pd.DataFrame:
    v = store.figure("fig-eval-var")
    v = v[v["var_count"] >= MIN_VAR_RUNS].copy()
    v["se"] = v["var_std"] / np.sqrt(v["var_count"])
    return v


def _m_var_mcm_spm(store):
    v = _var_table(store).pivot_table(index="epsilon", columns="protocol", values=["var_mean", "se"])
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


def _m_not_run(reason: str):
    def measure(store):
        raise MissingInput(reason)
    return measure


# =========================================================================== #
# the registry
# =========================================================================== #
_EVAL_SETTING = {"n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20}
_MORE_SETTING = {"n_users": 1_000_000, "m_bits": 64, "query_limit": 2 ** 20}
_SYN = "1-exponential-synthetic-set-section-61"
_URL = "3-url-set-section-61-calibrated-stand-in"
_AOL = "4-aol-section-61"
_SPM = "spm-section-33-with-section-61s-improvements"
_MCM = "mcm-section-34-with-section-61s-improvements"
_GRIDS = "experiment-settings-the-paper-does-not-state"
_THRESH = "threshold-mode-section-623"
_OPT = "3-optimizer-section-43"
_COMP = "2-zero-frequency-competitors-competitorspaper-or-lower"
_SLOTS = "1-threshold-rank-in-eq-5-slotstext-default-vs-formula"
_ZIPF = "2-zipf-and-zipf-20-section-5"
_F1_TOL = R.WithinTolerance(R.F1_TOL, "an F1 the text quotes")
_PRINTED = "half a unit of the printed digit"
_ALL_METHODS = ("url", "mcm", "spm")

CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- section 2
    Claim("s2-grr-example-p", "2.2.1", "GRR example",
          r"we have $p=\frac{49}{65584} \approx 0.00075$",
          "p ≈ 0.00075 at ε = ln 49, d = 2^16", "GRR's p from the library against the printed value",
          _m_grr_p, R.WithinTolerance(R.printed_tolerance("0.00075"), _PRINTED),
          "01_frequency_oracles", None, ("table:01_frequency_oracles/oracle-examples",)),
    Claim("s2-grr-example-var", "2.2.1", "eq. (1), example",
          r"variance $\frac{65583}{2304}\approx 28.5n$",
          "Var ≈ 28.5 n", "eq. (1) from the library, divided by n",
          _m_grr_var, R.WithinTolerance(R.printed_tolerance("28.5"), _PRINTED),
          "01_frequency_oracles", None, ("table:01_frequency_oracles/oracle-examples",)),
    Claim("s2-olh-dprime-optimal", "2.2.2", "OLH, d' = e^ε + 1",
          r"it is found that the optimal choice of $d'$ is $e^\epsilon+1$",
          "d' = e^ε + 1 minimises OLH's variance",
          "Var(d') / Var(e^ε + 1) ≥ 1 at every d' of the curve (ε = 0.5, 1, 2, 4)",
          _m_dprime_optimal,
          R.OrderingHolds(floor=None, ceiling=None, what="Var(d') at least Var(d' = e^ε + 1)"),
          "01_frequency_oracles", "fig-oracles-variance-dprime", ("figure:fig-oracles-variance-dprime",),
          interpretation=("the-integer-d",)),
    Claim("s2-grr-vs-olh", "2.2.2", "eq. (1) against eq. (3)",
          r"This suggests that for smaller $d$, one is better off with \grr; but for large $d$, \olh is better",
          "GRR better for small d, OLH for large d",
          "at the smallest d of the curve GRR's variance is below OLH's, at the largest above",
          _m_grr_vs_olh,
          R.OrderingHolds(strict=True, floor=None, ceiling=None, what="the named oracle has the smaller variance"),
          "01_frequency_oracles", "fig-oracles-variance-dprime", ("figure:fig-oracles-variance-dprime",)),
    Claim("s2-olh-std-example", "2.2.2", "eq. (3), example",
          r"using OLH the standard deviation is $\sqrt{\frac{40}{81} n} \approx 0.7 \sqrt{n}$",
          "std ≈ 0.7 √n at e^ε = 10", "√(eq. (3) / n) from the library",
          _m_olh_std, R.WithinTolerance(R.printed_tolerance("0.7"), _PRINTED),
          "01_frequency_oracles", None, ("table:01_frequency_oracles/oracle-examples",),
          interpretation=("5-section-22-oracle-parameters",)),
    Claim("s2-olh-min-population", "2.2.2", "eq. (3), example",
          r"or $n \geq 4,410,000$",
          "n ≥ 4,410,000 for a 0.1 % value at 3 std", "the smallest such n with the printed standard deviation 0.7",
          _m_olh_nmin, R.WithinTolerance(R.printed_tolerance("4,410,000"), _PRINTED),
          "01_frequency_oracles", None, ("table:01_frequency_oracles/oracle-examples",),
          interpretation=("5-section-22-oracle-parameters",),
          note="The paper rounds √(40/81) = 0.703 to 0.7 before squaring (tested as printed); the unrounded "
               "bound is shown."),
    Claim("s2-olh-quadruple", "2.2.2", "eq. (3), example",
          r"Quadrupling the population size would enables us to reduce this $0.1 \%$ sensitivity threshold by half.",
          "4 × n halves the threshold", "n needed at f = 0.0005 divided by n needed at f = 0.001",
          _m_olh_quadruple, R.WithinTolerance(R.COUNT_TOL, "an identity"),
          "01_frequency_oracles", None, ("table:01_frequency_oracles/oracle-examples",)),
    # ---------------------------------------------------------------- section 3
    Claim("fig1-strawman-groups", "3.3", "Figure 1(a)",
          r"Users partitioned into ${4 \choose 1}=4$ groups, each reporting one segment",
          "4 groups", "groups of users reporting a segment in our Figure 1",
          _m_fig1_groups("Strawman", 4), R.WithinTolerance(R.COUNT_TOL, "a count"),
          "02_existing_methods", "fig-existing-all-methods", ("figure:fig-existing-all-methods",)),
    Claim("fig1-spm-groups", "3.3", "Figure 1(b)",
          r"Users partitioned into ${4 \choose 2}=6$ groups, each reporting one pair of segments.",
          "6 groups", "groups of users reporting a pair of segments",
          _m_fig1_groups("SPM", 6), R.WithinTolerance(R.COUNT_TOL, "a count"),
          "02_existing_methods", "fig-existing-all-methods", ("figure:fig-existing-all-methods",),
          ("spm",), interpretation=(_SPM,)),
    Claim("fig1-mcm-groups", "3.3", "Figure 1(c)",
          r"Users partitioned into $64$ groups, each reporting one bit on multiple channels.",
          "64 groups", "groups of users reporting one bit",
          _m_fig1_groups("MCM", 64), R.WithinTolerance(R.COUNT_TOL, "a count"),
          "02_existing_methods", "fig-existing-all-methods", ("figure:fig-existing-all-methods",),
          ("mcm",), interpretation=(_MCM,),
          note="Figure 1 shows the original bit-per-user MCM; the evaluation uses blocks (section 6.1)."),
    Claim("fig1-pem-groups", "3.3", "Figure 1(d)",
          r"Users partitioned into $4$ groups, each reporting a prefix.",
          "4 groups", "groups of users reporting a prefix",
          _m_fig1_groups("PEM", 4), R.WithinTolerance(R.COUNT_TOL, "a count"),
          "02_existing_methods", "fig-existing-all-methods", ("figure:fig-existing-all-methods",)),
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
                                                  "the 2^20 query limit allows",
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
          interpretation=(_SYN, _GRIDS), setting={"ks": (30,), "eps_fixed": 2.0, **_EVAL_SETTING}),
    Claim("fig6-spm-small-k", "6.2.2", "Figure 6",
          r"utility scores decrease with $k$",
          "utility falls with k (so it is highest at k = 1)", "SPM's F1 at k = 1 against k = 2, per data set",
          _m_spm_k1, R.OrderingHolds(floor=None, ceiling=None, what="F1 at k = 1 at least F1 at k = 2"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",), ("spm", "url"),
          interpretation=(_SPM,), setting={"ks": (1, 2), "eps_fixed": 2.0},
          note="An anomaly no chapter explains yet: SPM scores 0 at k = 1 on every data set."),
    Claim("fig6-url-pem-k", "6.2.2", "Figure 6(a)",
          r"utility scores decrease with $k$",
          "utility falls with k", "PEM's mean F1 on the URL stand-in against k",
          lambda store: _m_url_pem_k(store), R.Monotone("decreasing"),
          "06_evaluation", "fig-eval-vary-k", ("figure:fig-eval-vary-k",), ("url",),
          interpretation=(_URL,), setting={"eps_fixed": 2.0},
          note="An anomaly no chapter explains yet: PEM's F1 on URL is exactly 0.75 in every run at k = 4, "
               "then 0.95 at k = 8."),
    # ---------------------------------------------------------------- section 6.2.3
    Claim("fig7a-pem-better", "6.2.3", "Figure 7(a)",
          r"\itergroup performs better than \spm and \hash.",
          "PEM better at θ = 0.023", "PEM against the best other at each ε, θ = 0.023",
          _m_fig7a_better, R.OrderingHolds(what="PEM at least the best other"),
          "07_evaluation_more", "fig-evalmore-threshold", ("figure:fig-evalmore-threshold",), ("mcm", "spm"),
          interpretation=(_THRESH, "metrics-of-the-threshold-version", _SPM, _MCM),
          setting={"theta_fixed": 0.023, **_MORE_SETTING}),
    Claim("fig7a-lead-at-eps2", "6.2.3", "Figure 7(a)",
          r"This advantage is most profound when $\epsilon=2$,",
          "PEM's lead largest at ε = 2", "argmax over ε of PEM's F1 minus the best other's, θ = 0.023",
          _m_fig7a_lead, R.ArgmaxAt(2.0),
          "07_evaluation_more", "fig-evalmore-threshold", ("figure:fig-evalmore-threshold",), ("mcm", "spm"),
          interpretation=(_THRESH, _GRIDS), setting={"theta_fixed": 0.023, "epsilons": (2.0,), **_MORE_SETTING}),
    Claim("fig7bc-pem-better", "6.2.3", "Figure 7(b, c)",
          r"The effects of fixing $\epsilon$ and varying $\theta$ are also demonstrated in Figure~\ref{"
          r"subfig:eval_k_synthesize_exponential_thres} and~\ref{subfig:eval_k_synthesize_exponential_thres_e4}.",
          "the same advantage when θ varies (our reading)", "PEM against the best other at each θ, ε = 2 and 4",
          _m_fig7bc_better, R.OrderingHolds(what="PEM at least the best other"),
          "07_evaluation_more", "fig-evalmore-threshold", ("figure:fig-evalmore-threshold",), ("mcm", "spm"),
          interpretation=(_THRESH, _GRIDS), setting={"eps_theta": (2.0, 4.0), **_MORE_SETTING},
          note="The text states the ordering for Figure 7(a); we read 'also demonstrated' as the same ordering."),
    Claim("fig7b-theta-0005", "6.2.3", "Figure 7(b)",
          r"The effects of fixing $\epsilon$ and varying $\theta$ are also demonstrated in Figure~\ref{"
          r"subfig:eval_k_synthesize_exponential_thres} and~\ref{subfig:eval_k_synthesize_exponential_thres_e4}.",
          "PEM ahead at every θ (our reading)", "PEM against the best other at θ = 0.005, ε = 2",
          _m_fig7b_reversal, R.OrderingHolds(what="PEM at least the best other"),
          "07_evaluation_more", "fig-evalmore-threshold", ("figure:fig-evalmore-threshold",), ("mcm", "spm"),
          interpretation=(_THRESH, "metrics-of-the-threshold-version", _GRIDS),
          setting={"thetas": (0.005,), "eps_theta": (2.0,), **_MORE_SETTING},
          note="At the lowest threshold PEM's final test lets many false positives through."),
    Claim("fig7-other-datasets", "6.2.3", "Figure 7",
          r"The results are similar in other datasets.",
          "similar on the other data sets", "not run: the threshold version runs on the synthetic set only",
          _m_not_run("not run here: chapter 07 runs the threshold version on the synthetic set only"),
          R.OrderingHolds(), "07_evaluation_more", "fig-evalmore-threshold", ()),
    # ---------------------------------------------------------------- section 6.2.4
    Claim("fig8a-partition-better", "6.2.4", "Figure 8(a), Proposition 1",
          r"The result shown in Figure~\ref{fig:eval_improve} demonstrates the advantage of partitioning users.",
          "partitioning users beats splitting the budget", "F1 of the partitioned MCM and SPM against their "
                                                            "budget-split versions at each ε",
          _m_fig8a_partition, R.OrderingHolds(what="partitioned at least budget split"),
          "07_evaluation_more", "fig-evalmore-design", ("figure:fig-evalmore-design",), ("mcm", "spm"),
          interpretation=(_SPM, _MCM), setting={"final_fraction": 0.1, **_MORE_SETTING}),
    Claim("fig8a-mcm-split-below-02", "6.2.4", "Figure 8(a)",
          r"the original \hash method achieves \fone less than $0.2$,",
          "MCM (budget split) F1 < 0.2 at ε = 1.2", "MCM's mean F1 with the budget split at ε = 1.2, against 0.2",
          _m_mcm_split_low, R.OrderingHolds(floor=None, ceiling=None, what="0.2 above the F1"),
          "07_evaluation_more", "fig-evalmore-design", ("figure:fig-evalmore-design",), ("mcm",),
          interpretation=(_MCM,), setting={"epsilons": (1.2,), **_MORE_SETTING}),
    Claim("fig8a-mcm-partition-08", "6.2.4", "Figure 8(a)",
          r"while the new version achieves nearly $0.8$.",
          "MCM (partitioned) F1 ≈ 0.8 at ε = 1.2", "MCM's mean F1 with 10 % of users for the final test, ε = 1.2",
          _m_mcm_part_high, _F1_TOL,
          "07_evaluation_more", "fig-evalmore-design", ("figure:fig-evalmore-design",), ("mcm",),
          interpretation=(_MCM,), setting={"epsilons": (1.2,), "final_fraction": 0.1, **_MORE_SETTING}),
    Claim("fig8a-other-settings", "6.2.4", "Figure 8(a)",
          r"but the trend is similar in other settings.",
          "similar in other settings", "not run: Figure 8(a) runs on the synthetic set only",
          _m_not_run("not run here: chapter 07 runs Figure 8(a) on the synthetic set only"),
          R.OrderingHolds(), "07_evaluation_more", "fig-evalmore-design", ()),
    # ---------------------------------------------------------------- section 6.2.5
    Claim("fig8b-eta-better", "6.2.5", "Figure 8(b)",
          r"It is clear that when $\eta$ increases, the overall utility is better.",
          "larger η, better", "mean F1 against η (2 to 10), per ε",
          _m_fig8b_mono, R.Monotone("increasing"),
          "07_evaluation_more", "fig-evalmore-design", ("figure:fig-evalmore-design",),
          interpretation=(_GRIDS,), setting=_MORE_SETTING),
    Claim("fig8b-eta2-eps09", "6.2.5", "Figure 8(b)",
          r"the \fone score is $0.4$ when $\eta=2$,",
          "F1 = 0.4 at η = 2, ε = 0.9", "PEM's mean F1 with η = 2 at ε = 0.9",
          _m_fig8b_point(2, 0.4), _F1_TOL,
          "07_evaluation_more", "fig-evalmore-design", ("figure:fig-evalmore-design",),
          setting={"etas": (2,), "epsilons": (0.9,), **_MORE_SETTING}),
    Claim("fig8b-eta10-eps09", "6.2.5", "Figure 8(b)",
          r"and $0.8$ when $\eta=10$.",
          "F1 = 0.8 at η = 10, ε = 0.9", "PEM's mean F1 with η = 10 at ε = 0.9",
          _m_fig8b_point(10, 0.8), _F1_TOL,
          "07_evaluation_more", "fig-evalmore-design", ("figure:fig-evalmore-design",),
          setting={"etas": (10,), "epsilons": (0.9,), **_MORE_SETTING}),
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
    # ---------------------------------------------------------------- section 6.2.7
    Claim("fig8c-assumption-similar", "6.2.7", "Figure 8(c)",
          r"under different assumptions, the results are very similar.",
          "very similar results", "spread (max − min) of the mean F1 over the assumed distributions, per ε",
          _m_fig8c, R.WithinTolerance(R.SIMILAR_F1, "'similar' F1; the spread of noisy means is widened by its noise",
                                      t=R.Z_TOL),
          "07_evaluation_more", "fig-evalmore-design", ("figure:fig-evalmore-design",),
          interpretation=(_GRIDS, _OPT), setting=_MORE_SETTING),
)

_BY_ID = {c.id: c for c in CLAIMS}

_SECTIONING = re.compile(r"\\(section|subsection|subsubsection)\*?\{|\\appendix\b")


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def paper_sections(tex: str) -> list[tuple[str, str]]:
    """The LaTeX source cut at its sectioning commands: (section number, whitespace-normalised text) pairs.

    Sections are numbered by the structure (``\\section`` 1, 2, ...,
    ``\\subsection`` 1.1, ...); everything after ``\\appendix`` is "Appendix".
    """
    parts, counters, label, start = [], [0, 0, 0], "0", 0
    for m in _SECTIONING.finditer(tex):
        parts.append((label, _normalise(tex[start:m.start()])))
        if m.group(0).startswith("\\appendix"):
            label = "Appendix"
        elif label != "Appendix":
            level = ("section", "subsection", "subsubsection").index(m.group(1))
            counters[level] += 1
            counters[level + 1:] = [0] * (2 - level)
            label = ".".join(str(c) for c in counters[:level + 1])
        start = m.start()
    parts.append((label, _normalise(tex[start:])))
    return parts


def check_quotes(tex: str, claims: Sequence[Claim] | None = None) -> pd.DataFrame:
    """Check each claim's quote against the paper's LaTeX source ``tex`` (run by hand; tests cannot read it).

    A quote is verbatim if it occurs in the source once whitespace (line
    breaks, indentation) is collapsed.  Returns one row per claim: ``id``,
    ``found``, ``sections`` (where the quote occurs, by the LaTeX's
    numbering), ``section`` (the registry's) and ``section_ok``.
    """
    claims = CLAIMS if claims is None else claims
    parts = paper_sections(tex)
    rows = []
    for c in claims:
        q = _normalise(c.quote)
        where = [label for label, text in parts if q in text]
        rows.append({"id": c.id, "found": bool(where), "sections": ", ".join(where), "section": c.section,
                     "section_ok": c.section in where})
    return pd.DataFrame(rows)


def get_claim(claim_id: str) -> Claim:
    """The claim with id ``claim_id`` (KeyError naming the known ids otherwise)."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise KeyError(f"no claim {claim_id!r}; known: {', '.join(_BY_ID)}") from None
