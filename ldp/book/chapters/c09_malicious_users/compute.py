"""Chapter 09's tidy tables: each figure's frame, the tables its claims' rules decide, and what its text quotes.

The figure modules ``ldp.book.chapters.malicious_*`` draw these frames and hold the
claims; the computing stays here, below the drawing layers.  A ``*_frame``
returns exactly the rows a figure plots (its CSV); a measure (``mga_below_input``,
``gain_points``, ...) turns such a frame into the input of a rule of
:mod:`ldp.book.claims.rules` (columns ``point, observed, expected, se``; ``point,
value, target``; or ``point, a, se_a, b, se_b``).

The notebook's sections each end with one call here that returns the values its prose
quotes (``gain_findings``, ``threshold_findings``, ``fixed_share_findings``,
``targets_findings``, ``placement_findings``, ``detector_findings``,
``check_cost_findings``); a new section adds its own.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ....attacks import (
    Attack,
    Scenario,
    SupportCountDetector,
    detector_rates,
    detector_trial,
)
from ....datasets import Dataset, aol, exponential
from ....protocols import MCM, PEM, SFP, SPM, HeavyHitterProtocol, TreeHist
from ..c08_after_pem.compute import aol_missing, chapter_runtime, checked_grids
from .adaptive import *  # noqa: E402,F403  (the sections on attackers who know the checks and on the audit)
from .adaptive import __all__ as _adaptive_names  # noqa: E402

__all__ = ["CHAPTER", "KIND_LABELS", "CLAIM_FIELDS", "OURS_QUOTE", "OURS_SAYS", "gain_frame",
           "threshold_frame", "targets_frame", "placement_frame",
           "detector_frame", "gain_points", "mga_below_input", "below", "prediction", "lookalike", "flagged",
           "fpr_points", "done_when", "protocols", "oracle_variants", "checked_grids", "data_sets", "data_findings",
           "gain_findings", "threshold_findings", "fixed_share_check", "fixed_share_findings", "targets_findings",
           "placement_findings", "rate_label", "detector_runs", "detector_findings", "check_cost_table",
           "check_cost_findings", "aol_missing", "chapter_runtime", *_adaptive_names]

CHAPTER = "09_malicious_users"
#: how the figures name the kinds of attack
KIND_LABELS = {"MGA": "maximal gain", "input": "input manipulation"}
#: what every test of the chapter shares
CLAIM_FIELDS: dict[str, Any] = {"chapter": CHAPTER}
#: what every claim of the chapter quotes and says (ours: the paper says nothing about malicious users)
OURS_QUOTE = "LDP protects users from the server; nothing protects the server from its users."
OURS_SAYS = "nothing (the paper has no malicious users)"


# --------------------------------------------------------------------------- figure frames
def gain_frame(table: pd.DataFrame, *, kind: str = "MGA") -> pd.DataFrame:
    """The gain figure's frame from :func:`ldp.attacks.gains.gain_table`.

    One row per (panel, oracle, epsilon, source): panel ``a`` one target, ``b`` the
    largest number of targets; ``source`` is ``closed form`` (``nan`` where there is
    none) or ``measured`` (``err`` = 2 standard errors over ``reports`` crafted reports).
    """
    t = table[table["kind"] == kind]
    rs = sorted(t["r"].unique())
    panels = {rs[0]: "a"} | ({rs[-1]: "b"} if len(rs) > 1 else {})
    t = t[t["r"].isin(list(panels))]
    base = pd.DataFrame({"panel": t["r"].map(panels), "targets": t["r"].astype(int), "oracle": t["oracle"],
                         "epsilon": t["epsilon"].astype(float)})
    closed = base.assign(source="closed form", gain=t["gain_closed"].astype(float), err=0.0, reports=0)
    measured = base.assign(source="measured", gain=t["gain"].astype(float), err=2 * t["gain_se"].astype(float),
                           reports=t["reports"].astype(int))
    return pd.concat([closed, measured], ignore_index=True)


def _summary(grid: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean and SD of the smallest fake share over repetitions; ``above_max``: searches that never planted."""
    def agg(g):
        f = g["fraction"].to_numpy(float)
        ok = f[np.isfinite(f)]
        return pd.Series({"mean": ok.mean() if ok.size else np.nan,
                          "sd": ok.std(ddof=1) if ok.size > 1 else 0.0 if ok.size else np.nan,
                          "runs": int(ok.size), "above_max": int(f.size - ok.size)})

    return grid.groupby(by, sort=False).apply(agg, include_groups=False).reset_index()


def _fraction_frame(grid, predicted, datasets, x: str) -> pd.DataFrame:
    s = _summary(grid, ["dataset", "kind", "protocol", x])
    s = s.merge(predicted, on=["dataset", "protocol", x, "kind"], how="left")
    kinds = [k for k in KIND_LABELS if k in set(s["kind"])]
    s["panel"] = [f"{datasets[d]}{kinds.index(k) + 1}" for d, k in zip(s["dataset"], s["kind"])]
    return s[["panel", "dataset", "kind", "protocol", x, "mean", "sd", "runs", "above_max", "predicted"]]


def threshold_frame(grid: pd.DataFrame, predicted: pd.DataFrame, *, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The threshold figure's frame: mean and SD over repetitions of the smallest fake share, and its prediction.

    Parameters
    ----------
    grid : pandas.DataFrame
        :func:`ldp.attacks.threshold_grid` (the rows with ``need == 1`` are used).
    predicted : pandas.DataFrame
        ``dataset, protocol, epsilon, kind, predicted`` (:func:`ldp.attacks.predictions`).
    datasets : mapping
        Data set label -> panel row letter (``{"Synthetic": "a", "AOL": "b"}``).

    Returns
    -------
    pandas.DataFrame
        ``panel, dataset, kind, protocol, epsilon, mean, sd, runs, above_max, predicted``
        (``runs``: repetitions whose search planted the target; ``above_max``: those
        that needed more than the largest share tried).
    """
    return _fraction_frame(grid[grid["need"] == 1], predicted, datasets, "epsilon")


def targets_frame(grid: pd.DataFrame, predicted: pd.DataFrame, *, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The r-of-16 figure's frame: as :func:`threshold_frame` with ``need`` (targets planted) for ``epsilon``."""
    return _fraction_frame(grid, predicted, datasets, "need")


def placement_frame(grid: pd.DataFrame, flags: pd.DataFrame) -> pd.DataFrame:
    """PEM's smallest fake share per strategy (panel a) and the share of runs the consistency check flags (b).

    ``grid`` is :func:`ldp.attacks.threshold_grid` with a ``strategy`` column; ``flags`` has
    ``strategy, epsilon, flagged`` (one row per run at the threshold).  Returns ``panel,
    strategy, epsilon, value, sd, runs``.
    """
    a = _summary(grid, ["strategy", "epsilon"]).rename(columns={"mean": "value"}).assign(panel="a")
    b = flags.groupby(["strategy", "epsilon"], sort=False)["flagged"].agg(["mean", "size"]).reset_index()
    b = b.rename(columns={"mean": "value", "size": "runs"}).assign(panel="b", sd=0.0)
    cols = ["panel", "strategy", "epsilon", "value", "sd", "runs"]
    return pd.concat([a[cols], b[cols]], ignore_index=True)


def detector_frame(honest_counts: np.ndarray, crafted_counts: Mapping[str, np.ndarray], bound: np.ndarray,
                   threshold: int) -> pd.DataFrame:
    """The detector figure's frame: the tail ``P(count >= c)`` of honest and crafted reports, and the stated bound.

    ``honest_counts`` and each of ``crafted_counts`` (label -> counts) are the released answers
    each report supports; ``bound`` the detector's bound on the honest tail for ``c = 0 .. A + 1``
    (:meth:`ldp.attacks.SupportCountDetector.null_tail`); ``threshold`` the detector's threshold.
    Returns ``series, count, tail, reports, threshold``.
    """
    c = np.arange(bound.shape[0] - 1)
    parts = [pd.DataFrame({"series": label, "count": c, "tail": (np.asarray(x)[:, None] >= c).mean(axis=0),
                           "reports": len(x)}) for label, x in [("honest reports", honest_counts),
                                                                *crafted_counts.items()]]
    parts.append(pd.DataFrame({"series": "stated bound", "count": c, "tail": bound[:-1].astype(float), "reports": 0}))
    return pd.concat(parts, ignore_index=True).assign(threshold=int(threshold))


# --------------------------------------------------------------------------- the claims' measures
def _se(sd, runs):
    return np.asarray(sd, float) / np.sqrt(np.maximum(np.asarray(runs, float), 1))


def _ordering(points, j: pd.DataFrame, col: str, scale_a: float = 1.0) -> pd.DataFrame:
    """``OrderingHolds``' input from a frame of pairs (suffixes ``_a``, ``_b``): ``col`` and its SE."""
    return pd.DataFrame({"point": list(points), "a": scale_a * j[f"{col}_a"],
                         "se_a": scale_a * _se(j["sd_a"], j["runs_a"]), "b": j[f"{col}_b"],
                         "se_b": _se(j["sd_b"], j["runs_b"])})


def gain_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Measured against closed-form gain at every (oracle, epsilon, targets) with a closed form (``WithinSE``)."""
    key = ["oracle", "epsilon", "targets"]
    c = frame[frame["source"] == "closed form"].set_index(key)["gain"]
    j = frame[frame["source"] == "measured"].set_index(key).join(c.rename("closed")).dropna(subset=["closed"])
    j = j.reset_index()
    return pd.DataFrame({"point": [f"{o}, ε = {e:g}, {t} target(s)" for o, e, t in zip(j["oracle"], j["epsilon"],
                                                                                       j["targets"])],
                         "observed": j["gain"], "expected": j["closed"], "se": j["err"] / 2})


def mga_below_input(frame: pd.DataFrame) -> pd.DataFrame:
    """Input manipulation's mean share (a) against maximal gain's (b), per (data set, protocol, epsilon)."""
    key = ["dataset", "protocol", "epsilon"]
    j = frame[frame["kind"] == "input"].merge(frame[frame["kind"] == "MGA"], on=key, suffixes=("_a", "_b"))
    return _ordering((f"{d}, {p}, ε = {e:g}" for d, p, e in zip(j["dataset"], j["protocol"], j["epsilon"])), j,
                     "mean")


def below(protocol: str, other: str, dataset: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """``protocol``'s mean maximal-gain share (a) against ``other``'s (b), per epsilon on ``dataset``."""
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        f = frame[(frame["kind"] == "MGA") & (frame["dataset"] == dataset)]
        j = f[f["protocol"] == protocol].merge(f[f["protocol"] == other], on="epsilon", suffixes=("_a", "_b"))
        return _ordering((f"{dataset}, ε = {e:g}" for e in j["epsilon"]), j, "mean")
    return measure


def prediction(protocol: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The measured share over its first-order prediction for ``protocol`` (target 1)."""
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        f = frame[(frame["protocol"] == protocol) & np.isfinite(frame["predicted"]) & (frame["predicted"] > 0)]
        points = [f"{d}, {k}, ε = {e:g}" for d, k, e in zip(f["dataset"], f["kind"], f["epsilon"])]
        return pd.DataFrame({"point": points, "value": f["mean"] / f["predicted"], "target": 1.0})
    return measure


def lookalike(frame: pd.DataFrame) -> pd.DataFrame:
    """Half the fresh target's share in the plan's groups (a) against the chosen-group look-alike's (b)."""
    a = frame[frame["panel"] == "a"]
    j = a[a["strategy"] == "fresh, plan's groups"].merge(a[a["strategy"] == "look-alike, chosen groups"],
                                                        on="epsilon", suffixes=("_a", "_b"))
    return _ordering((f"ε = {e:g}" for e in j["epsilon"]), j, "value", scale_a=0.5)


def flagged(min_eps: float) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The share of runs the consistency check flags, chosen-group look-alikes, from ``min_eps`` (target 1)."""
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        b = frame[(frame["panel"] == "b") & (frame["strategy"] == "look-alike, chosen groups")
                  & (frame["epsilon"] >= min_eps - 1e-12)]
        return pd.DataFrame({"point": [f"ε = {e:g}" for e in b["epsilon"]], "value": b["value"], "target": 1.0})
    return measure


def fpr_points(runs: pd.DataFrame) -> pd.DataFrame:
    """The stated rate (a) against the measured false-positive rate (b) of every detector run."""
    f = runs.dropna(subset=["fpr"])
    return pd.DataFrame({"point": f["run"], "a": f["alpha"], "se_a": 0.0, "b": f["fpr"],
                         "se_b": np.sqrt(f["fpr"] * (1 - f["fpr"]) / f["honest"].clip(lower=1))})


def done_when(table: pd.DataFrame) -> pd.DataFrame:
    """Runs planted out of ``runs``: all of them for maximal gain, none for input manipulation (target)."""
    return pd.DataFrame({"point": table["kind"], "value": table["planted"],
                         "target": np.where(table["kind"] == "MGA", table["runs"], 0)})


# --------------------------------------------------------------------------- the notebook's setting
Make = Callable[[float, int], HeavyHitterProtocol]


def protocols(k: int) -> dict[str, Make]:
    """The chapter's protocols: label -> ``make(epsilon, m)``, each releasing ``k`` values under the query limit 2^20.

    PEM, SPM and MCM with OLH, TreeHist with 8 bits per level (chapter 08's variant) and SFP with the
    count-mean sketch, each with its library defaults.
    """
    return {"PEM": lambda e, m: PEM(e, k, m), "SPM": lambda e, m: SPM(e, k, m), "MCM": lambda e, m: MCM(e, k, m),
            "TreeHist (8 bits)": lambda e, m: TreeHist(e, k, m, bits_per_level=8), "SFP": lambda e, m: SFP(e, k, m)}


def oracle_variants(k: int) -> dict[str, Make]:
    """PEM with Hadamard response and with the count-mean sketch, as :func:`protocols` (where the oracle matters)."""
    return {"PEM (HR)": lambda e, m: PEM(e, k, m, oracle="HR"), "PEM (CMS)": lambda e, m: PEM(e, k, m, oracle="CMS")}


def data_sets(*, n: int, scale: float, m: int, seed: int, no_aol: str) -> dict[str, Dataset]:
    """The synthetic set (:func:`ldp.datasets.exponential`, seeded by ``seed``) and AOL unless ``no_aol`` says why not.

    ``no_aol`` is :func:`aol_missing`'s answer (``""`` when the verified AOL tally is there).
    """
    syn = exponential(n=n, scale=scale, m=m, rng=seed)
    return {"Synthetic": syn} | ({} if no_aol else {"AOL": aol()})


def data_findings(data: Mapping[str, Dataset], *, no_aol: str) -> dict[str, Any]:
    """The synthetic set's size and ``rows_caption``, the threshold figure's rows as its caption names them.

    Glued as text (no TeX): "row a the synthetic set (n = ..., m = ...), row b AOL (...)", or the synthetic set
    alone and why AOL is left out.
    """
    syn = data["Synthetic"]
    syn_text = f"the synthetic set (n = {syn.n:,}, m = {syn.m})"
    caption = (f"row a {syn_text}, row b AOL (n = {data['AOL'].n:,}, m = {data['AOL'].m})" if not no_aol else
               f"{syn_text}; AOL is left out: the AOL data file {no_aol} in this build")
    return {"rows_caption": caption, "n_synthetic": syn.n}


# --------------------------------------------------------------------------- what one fake report is worth
def gain_findings(gains: pd.DataFrame, *, eps_fixed: float, targets_many: int, trials: int,
                  reports: int) -> dict[str, Any]:
    """The gains the text quotes at ``eps_fixed``, and how far the measurement is from the closed forms.

    Parameters
    ----------
    gains : pandas.DataFrame
        :func:`ldp.attacks.gains.gain_table` (one target and ``targets_many`` targets).
    eps_fixed : float
        The ε the text reads the gains at (on the table's ε grid).
    targets_many, trials, reports : int
        Targets of the several-targets panel, hash seeds each report tries, crafted reports per point.

    Returns
    -------
    dict
        ``gain_<oracle>`` (one target), ``gain_<oracle>_many`` (``targets_many`` targets; OLH's closed form as
        ``gain_olh_many_closed``), ``gain_points`` (points with a closed form), ``gain_max_z`` (the largest
        distance of a measurement from its closed form, in standard errors) and the settings.
    """
    at = gains[np.isclose(gains["epsilon"], eps_fixed)].set_index(["oracle", "r"])
    closed = gains.dropna(subset=["gain_closed"])
    zabs = ((closed["gain"] - closed["gain_closed"]).abs() / closed["gain_se"].where(closed["gain_se"] > 0)).dropna()
    return {"gain_olh": at.loc[("OLH", 1), "gain"], "gain_cms": at.loc[("CMS", 1), "gain"],
            "gain_hr": at.loc[("HR", 1), "gain"], "gain_grr": at.loc[("GRR", 1), "gain"],
            "gain_oue": at.loc[("OUE", 1), "gain"], "gain_olh_many": at.loc[("OLH", targets_many), "gain"],
            "gain_olh_many_closed": at.loc[("OLH", targets_many), "gain_closed"],
            "gain_hr_many": at.loc[("HR", targets_many), "gain"],
            "gain_cms_many": at.loc[("CMS", targets_many), "gain"],
            "gain_points": len(closed), "gain_max_z": float(zabs.max()) if len(zabs) else 0.0,
            "gain_reports": reports, "targets_many": targets_many, "trials": trials, "eps_fixed": eps_fixed}


# --------------------------------------------------------------------------- how many fake users plant a value
def threshold_findings(frame: pd.DataFrame, grid: pd.DataFrame, synthetic: Dataset, *, eps_fixed: float, k: int,
                       repetitions: int, max_fraction: float) -> dict[str, Any]:
    """What the threshold section quotes: the smallest shares at ``eps_fixed``, their spread and the prediction's error.

    Parameters
    ----------
    frame : pandas.DataFrame
        The threshold figure's frame (:func:`threshold_frame`).
    grid : pandas.DataFrame
        :func:`ldp.attacks.threshold_grid` behind it (one row per search).
    synthetic : ldp.datasets.Dataset
        The synthetic set (the ``k``-th value's count, ``c16``).
    eps_fixed, k, repetitions, max_fraction
        The ε the text reads, the values released, searches per point, the largest share tried.

    Returns
    -------
    dict
        ``thr_<protocol>_mga`` (maximal gain on the synthetic set at ``eps_fixed``; PEM's also for input
        manipulation and both predictions), the range over the grid, the ratio input / maximal gain (median,
        extremes, points, points below one), the searches that planted nothing within ``max_fraction``
        (``unreached_text`` names them, or "none"), the searches and runs made, how often PEM's prediction is
        within 25 %, at how many ε SPM needs less than PEM, ``c16`` and the settings.
    """
    t = frame.set_index(["dataset", "kind", "protocol", "epsilon"])
    ratio = (t.xs("input", level="kind")["mean"] / t.xs("MGA", level="kind")["mean"]).dropna()
    pem_pred = frame[(frame["protocol"] == "PEM") & (frame["predicted"] > 0)]
    rel = (pem_pred["mean"] / pem_pred["predicted"] - 1).abs()
    syn_fix = t.xs(("Synthetic", eps_fixed), level=("dataset", "epsilon"))
    syn_mga = t.xs(("Synthetic", "MGA"), level=("dataset", "kind"))["mean"].unstack("protocol")  # rows: epsilon
    unreached = grid[grid["fraction"].isna()].drop_duplicates(["dataset", "protocol", "epsilon", "kind"])
    return {"thr_pem_mga": syn_fix.loc[("MGA", "PEM"), "mean"], "thr_pem_input": syn_fix.loc[("input", "PEM"), "mean"],
            "thr_pem_mga_pred": syn_fix.loc[("MGA", "PEM"), "predicted"],
            "thr_pem_input_pred": syn_fix.loc[("input", "PEM"), "predicted"],
            "thr_spm_mga": syn_fix.loc[("MGA", "SPM"), "mean"], "thr_mcm_mga": syn_fix.loc[("MGA", "MCM"), "mean"],
            "thr_treehist_mga": syn_fix.loc[("MGA", "TreeHist (8 bits)"), "mean"],
            "thr_sfp_mga": syn_fix.loc[("MGA", "SFP"), "mean"],
            "thr_min_mga": float(t.xs("MGA", level="kind")["mean"].min()),
            "thr_max_mga": float(t.xs("MGA", level="kind")["mean"].max()),
            "ratio_median": float(ratio.median()), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
            "ratio_points": int(len(ratio)), "ratio_below_one": int((ratio < 1).sum()),
            "input_unreached": int(grid[(grid["kind"] == "input")]["fraction"].isna().sum()),
            "unreached_text": "; ".join(f"{r.protocol} on {r.dataset} at ε = {r.epsilon:g}"
                                        for r in unreached.itertuples()) or "none",
            "mga_unreached": int(grid[(grid["kind"] == "MGA")]["fraction"].isna().sum()),
            "searches": int(len(grid)), "runs_total": int(grid["runs"].sum()),
            "pem_pred_points": int(len(rel)), "pem_pred_within25": int((rel <= 0.25).sum()),
            "pem_pred_worst": float(rel.max()),
            "spm_below_pem": int((syn_mga["SPM"] < syn_mga["PEM"]).sum()), "spm_pem_points": int(len(syn_mga)),
            "c16": int(synthetic.top_counts(k)[-1]), "repetitions": repetitions, "max_fraction": max_fraction}


def fixed_share_check(protocol: HeavyHitterProtocol, data: Dataset, *, fraction: float, runs: int, trials: int,
                      seed: int, kinds: Sequence[str] = ("MGA", "input")) -> pd.DataFrame:
    """How often ``fraction`` of fake users plant one fresh target, in ``runs`` runs per kind of attack.

    Run ``r`` of every kind has its own plan, target and fake users (``SeedSequence(seed, spawn_key=(7, r))``)
    and its own run (``spawn_key=(8, r)``), count engine with crafted users.

    Returns
    -------
    pandas.DataFrame
        ``kind, fraction, runs, planted``: one row per kind (the table ``done-when`` the claim reads).
    """
    def planted(kind: str, r: int) -> int:
        sc = Scenario(protocol, data, Attack(kind, 1, trials=trials),
                      rng=np.random.SeedSequence(seed, spawn_key=(7, r)))
        return sc.run(fraction, rng=np.random.SeedSequence(seed, spawn_key=(8, r))).planted

    return pd.DataFrame([{"kind": kind, "fraction": fraction, "runs": runs,
                          "planted": sum(planted(kind, r) for r in range(runs))} for kind in kinds])


def fixed_share_findings(table: pd.DataFrame, data: Dataset, *, k: int) -> dict[str, Any]:
    """What the text says of :func:`fixed_share_check`'s table: runs planted per kind, and the fake holders' count.

    ``done_vs`` says whether the fake users are ``"fewer"`` or ``"more"`` than the holders of the ``k``-th value.
    """
    fraction, runs = float(table["fraction"].iloc[0]), int(table["runs"].iloc[0])
    by_kind = table.set_index("kind")["planted"]
    return {"done_mga": int(by_kind["MGA"]), "done_input": int(by_kind["input"]), "done_runs": runs,
            "fraction_check": fraction, "done_fake": int(round(fraction * data.n)),
            "done_vs": "fewer" if fraction * data.n < data.top_counts(k)[-1] else "more"}


# --------------------------------------------------------------------------- several targets, chosen groups
def targets_findings(frame: pd.DataFrame, grid: pd.DataFrame, *, needs: Sequence[int]) -> dict[str, Any]:
    """What the several-targets section quotes from its figure's frame (:func:`targets_frame`) and search grid.

    Returns
    -------
    dict
        PEM's maximal-gain share for half and for all of the targets (``many_pem_half``, ``many_pem_all`` and
        how many that is), input manipulation's for one target, the count-mean sketch's for all, and the input
        searches that did not place all of them.
    """
    t16, half, top = frame.set_index(["dataset", "kind", "protocol", "need"]), needs[len(needs) // 2], max(needs)
    all_input = (grid["kind"] == "input") & (grid["need"] == top)
    return {"many_pem_all": t16.loc[("Synthetic", "MGA", "PEM", top), "mean"],
            "many_pem_half": t16.loc[("Synthetic", "MGA", "PEM", half), "mean"],
            "many_need_half": half, "many_need_all": top,
            "many_pem_input_one": t16.loc[("Synthetic", "input", "PEM", 1), "mean"],
            "many_cms_all": t16.loc[("Synthetic", "MGA", "PEM (CMS)", top), "mean"],
            "many_input_unreached": int(grid[all_input]["fraction"].isna().sum()),
            "many_input_searches": int(all_input.sum())}


def placement_findings(frame: pd.DataFrame, *, eps_fixed: float, lookalike_bits: int) -> dict[str, Any]:
    """What the placement section quotes from its figure's frame (:func:`placement_frame`).

    Returns
    -------
    dict
        ``place_<target>_<groups>``: the smallest share at ``eps_fixed`` per strategy (panel a);
        ``place_flag_*``: the share of runs the consistency check flags (panel b), over the grid, at
        ``eps_fixed`` and below it (0 when the grid has no ε below); ``lookalike_bits``.
    """
    pa = frame[frame["panel"] == "a"].set_index(["strategy", "epsilon"])["value"]
    pb = frame[frame["panel"] == "b"].set_index(["strategy", "epsilon"])["value"]
    chosen = pb.xs("look-alike, chosen groups")
    return {"place_fresh_plan": pa[("fresh, plan's groups", eps_fixed)],
            "place_fresh_chosen": pa[("fresh, chosen groups", eps_fixed)],
            "place_look_plan": pa[("look-alike, plan's groups", eps_fixed)],
            "place_look_chosen": pa[("look-alike, chosen groups", eps_fixed)], "lookalike_bits": int(lookalike_bits),
            "place_flag_look_chosen": float(chosen.mean()),
            "place_flag_look_chosen_fix": float(pb[("look-alike, chosen groups", eps_fixed)]),
            "place_flag_look_chosen_low": float(chosen[chosen.index < eps_fixed].mean())
            if (chosen.index < eps_fixed).any() else 0.0,
            "place_flag_fresh_plan": float(pb.xs("fresh, plan's groups").mean()),
            "place_flag_look_plan": float(pb.xs("look-alike, plan's groups").mean())}


# --------------------------------------------------------------------------- what a server can do
def rate_label(protocol: str, attack: Attack) -> str:
    """The detector table's name of a rate against a count-engine release (``attack.targets`` a number):
    ``"PEM (HR), MGA, 16 targets"``."""
    r = int(attack.targets)  # type: ignore[call-overload]
    return f"{protocol}, {attack.kind}, {r} target{'s' if r > 1 else ''}"


def detector_runs(protocols: Mapping[str, Make], data: Dataset, trials: Sequence[tuple[str, Attack, float]],
                  rates: Sequence[tuple[str, Attack, float]], *, epsilon: float, alpha: float, seed: int,
                  honest_sample: int = 200_000, n_jobs: int = 1) -> tuple[pd.DataFrame, dict[str, dict]]:
    """The support-count detector on PEM's protocol-engine runs, and its rates against count-engine releases.

    Parameters
    ----------
    protocols : mapping
        Label -> ``make(epsilon, m)`` (:func:`protocols` and :func:`oracle_variants`); ``"PEM"`` runs ``trials``.
    data : ldp.datasets.Dataset
        The users.
    trials : sequence of (label, Attack, fraction)
        Protocol-engine runs of PEM (:func:`ldp.attacks.detector_trial`), aggregated before and after cleaning.
    rates : sequence of (protocol label, Attack, fraction)
        Rates against a count-engine release (:func:`ldp.attacks.detector_rates`): the crafted reports and
        ``min(honest_sample, data.n)`` honest users' reports tested against its thresholds.
    epsilon, alpha : float
        The protocols' budget; the detector's stated false-positive rate per user.
    seed : int
        Run ``i`` of the list ``trials + rates`` has its detector seeded ``SeedSequence(seed, spawn_key=(13, i))``;
        trial ``i`` its scenario and run ``(9, i)``, ``(10, i)``; rate ``j`` ``(11, j)``, ``(12, j)`` (the same
        results for any number of workers).
    n_jobs : int
        joblib workers, one run each.

    Returns
    -------
    (pandas.DataFrame, dict)
        The table ``detector-runs`` (``run, engine, fake, honest, alpha, fpr, tpr, planted, planted_clean, f1,
        f1_clean``; a rate's row named :func:`rate_label`) and each trial's full output by label.
    """
    pem, sample = protocols["PEM"](epsilon, data.m), min(honest_sample, data.n)

    def detector(i):
        return SupportCountDetector(alpha, rng=np.random.SeedSequence(seed, spawn_key=(13, i)))

    def trial(i, attack, frac):
        sc = Scenario(pem, data, attack, rng=np.random.SeedSequence(seed, spawn_key=(9, i)))
        return detector_trial(sc, frac, detector=detector(i), rng=np.random.SeedSequence(seed, spawn_key=(10, i)))

    def rate(j, name, attack, frac):
        sc = Scenario(protocols[name](epsilon, data.m), data, attack,
                      rng=np.random.SeedSequence(seed, spawn_key=(11, j)))
        return detector_rates(sc, frac, detector=detector(len(trials) + j), honest_sample=sample,
                              rng=np.random.SeedSequence(seed, spawn_key=(12, j)))

    jobs = [delayed(trial)(i, attack, frac) for i, (_, attack, frac) in enumerate(trials)]
    done = Parallel(n_jobs=n_jobs)(jobs + [delayed(rate)(j, *r) for j, r in enumerate(rates)])
    out = {label: o for (label, _, _), o in zip(trials, done)}
    keys = ("fake", "honest", "alpha", "fpr", "tpr", "planted")
    rows = [{"run": label, "engine": "protocol", **{key: o[key] for key in keys}, "planted_clean": o["planted_clean"],
             "f1": o["f1"], "f1_clean": o["f1_clean"]} for label, o in out.items()]
    rows += [{"run": rate_label(name, attack), "engine": "counts (release)", **{key: o[key] for key in keys},
              "planted_clean": np.nan, "f1": np.nan, "f1_clean": np.nan}
             for (name, attack, _), o in zip(rates, done[len(trials):])]
    return pd.DataFrame(rows), out


def detector_findings(runs: pd.DataFrame, trials: Sequence[tuple[str, Attack, float]],
                      rates: Sequence[tuple[str, Attack, float]], data: Dataset, *, k: int, alpha: float,
                      threshold: int, fraction: float, honest_sample: int = 200_000) -> dict[str, Any]:
    """What the detector's section quotes from :func:`detector_runs`' table.

    ``trials``, ``rates``, ``data``, ``alpha`` and ``honest_sample`` are :func:`detector_runs`' (in the chapter's
    order: no fake users, then maximal gain for many targets; then PEM with one target, PEM with Hadamard
    response, PEM with the count-mean sketch), ``threshold`` the detector's threshold in the run with many
    targets, ``fraction`` its share of fake users.

    Returns
    -------
    dict
        The stated and measured false-positive rates (the largest, its standard error and how many standard
        errors the stated rate lies above every measured one), the true-positive rates, the targets planted
        before and after cleaning, F1 before and after cleaning the honest run (``det_f1_text`` says whether it
        moved), the fake users cleaning removes, and ``det_gap``, the users between the ``k``-th and the
        ``k + 1``-th value.
    """
    r = runs.set_index("run")
    honest, many = trials[0][0], trials[1][0]
    one, hr, cms = (rate_label(name, attack) for name, attack, _ in rates)
    fpr_se = np.sqrt(np.maximum(runs["fpr"], 1 / runs["honest"]) * (1 - runs["fpr"]) / runs["honest"])
    f1, f1_clean = r.loc[honest, "f1"], r.loc[honest, "f1_clean"]
    top = data.top_counts(k + 1)
    return {"alpha": alpha, "detector_n": data.n, "detector_fraction": fraction,
            "detector_sample": min(honest_sample, data.n),
            "det_fpr_max": float(runs["fpr"].max()), "det_fpr_se": float(fpr_se.max()),
            "det_fpr_z": float(((runs["alpha"] - runs["fpr"]) / fpr_se).min()), "det_threshold": threshold,
            "det_honest_fpr": r.loc[honest, "fpr"], "det_f1": f1, "det_f1_clean": f1_clean,
            "det_tpr_one": r.loc[one, "tpr"], "det_tpr_many": r.loc[many, "tpr"],
            "det_planted_many": int(r.loc[many, "planted"]),
            "det_planted_many_clean": int(r.loc[many, "planted_clean"]),
            "det_one_removed": float(r.loc[one, "tpr"] * r.loc[one, "fake"]), "det_one_fake": int(r.loc[one, "fake"]),
            "det_tpr_hr": r.loc[hr, "tpr"], "det_tpr_cms": r.loc[cms, "tpr"], "det_gap": int(top[-2] - top[-1]),
            "det_f1_text": f"left F1 at {f1:.3f}" if f1 == f1_clean else f"moved F1 from {f1:.3f} to {f1_clean:.3f}"}


def _check_cost(honest_runs: pd.DataFrame) -> pd.DataFrame:
    """Mean F1 without and with the consistency check, and what it costs, per data set, protocol and ε."""
    cost = honest_runs.groupby(["dataset", "protocol", "epsilon"], sort=False)[["f1", "f1_checked", "flagged"]].mean()
    cost = cost.reset_index()
    cost["f1_cost"] = cost["f1"] - cost["f1_checked"]
    return cost


def check_cost_table(honest_runs: pd.DataFrame) -> pd.DataFrame:
    """The F1 the consistency check costs on honest runs (:func:`ldp.attacks.honest_grid`): a column per ε."""
    wide = _check_cost(honest_runs).pivot_table(index=["dataset", "protocol"], columns="epsilon",
                                                values="f1_cost").reset_index()
    wide.columns = [c if isinstance(c, str) else f"ε = {c:g}" for c in wide.columns]
    return wide


def check_cost_findings(honest_runs: pd.DataFrame, *, eps_fixed: float) -> dict[str, Any]:
    """What the text quotes of the consistency check's cost on honest runs: the largest at ``eps_fixed`` and over
    the grid (``check_cost_worst`` says where), and the honest runs it flagged."""
    cost = _check_cost(honest_runs)
    worst = cost.loc[cost["f1_cost"].idxmax()]
    return {"check_cost_fix_max": float(cost[np.isclose(cost["epsilon"], eps_fixed)]["f1_cost"].max()),
            "check_cost_max": float(worst["f1_cost"]),
            "check_cost_worst": f"{worst['protocol']} on {worst['dataset']} at ε = {worst['epsilon']:g}",
            "check_false_runs": int((honest_runs["flagged"] > 0).sum()), "check_runs": int(len(honest_runs))}
