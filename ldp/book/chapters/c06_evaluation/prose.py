"""The values chapter 06's prose quotes, one mapping per section, glued by name at the chapter's end.

Each function takes what a section of ``notebooks/06_evaluation.ipynb`` computed (a grid's
:func:`ldp.experiments.summarize` frame, its data sets, a table of :mod:`.compute`) and returns the numbers its
markdown pastes (``{glue:text}`eval_...` ``) and the sentences that depend on the run (``{glue:md}``): the ones
that quote AOL say instead that its data file is absent when the build has none (:class:`.compute.AolStatus`),
and the ones on a point say so when the grid leaves it out.  A NaN is a point the grid does not have; the
chapter drops those before gluing (:func:`gluable`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from ....core.dataset import Dataset
from ....protocols import PEM
from .compute import METHODS, AolStatus, summary_value, top_two_gap

__all__ = ["VAR_EPS", "as_markdown", "gluable", "figure5", "figure6", "aol_k1_text", "f1_ncr", "anomalies",
           "variance_title", "figure9", "engine_check", "runtime"]

#: the budgets at which the chapter quotes the ratios of Figure 9's Var between protocols
VAR_EPS = (2.0, 3.0, 4.0)
NAN = float("nan")


def as_markdown(text: str):
    """``text`` as Markdown, which ``{glue:md}`` pastes (a plain string is pasted as text)."""
    from IPython.display import Markdown

    return Markdown(text)


def gluable(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` without the NaN ones (points a grid does not have: the text quotes none of them)."""
    return {name: value for name, value in values.items() if not (isinstance(value, float) and value != value)}


def figure5(summary: pd.DataFrame, *, epsilons: Sequence[float], k: int, aol: AolStatus) -> dict[str, Any]:
    """The numbers on Figure 5 (vary ε at ``k``): F1 at ε = 4, heavy hitters found, PEM's lead over the others.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ldp.experiments.summarize` of the ε grid by ``dataset, protocol, epsilon`` (``f1``).
    epsilons : sequence of float
        The grid's budgets, sorted.
    k : int
        The ``k`` of the grid.
    aol : AolStatus
        Whether AOL is in this build (:func:`.compute.aol_status`).

    Returns
    -------
    dict
        ``eval_eps_lo``, ``eval_eps_hi``; at ε = 4: URL's F1 per protocol (``eval_url_eps4_f1_<m>``, PEM's SD) and
        the heavy hitters found, F1 · k, per data set and protocol (``eval_<ds>_eps4_nhh_<m>``); PEM's lead (mean F1
        minus the better competitor's) at the lowest and highest ε and its largest value and where
        (``eval_gap_lo|hi|max|argmax_<ds>``); the AOL sentences ``eval_aol_eps4_text``, ``eval_gap_aol_text``.
    """
    names = list(dict.fromkeys(summary["dataset"]))
    at4 = {(ds, m): summary_value(summary, ds, m, "epsilon", 4.0) for ds in names for m in METHODS}
    f1 = summary.pivot_table(index=["dataset", "epsilon"], columns="protocol", values="f1_mean")
    lead = f1["PEM"] - f1[["MCM", "SPM"]].max(axis=1)  # PEM minus the better competitor (mean F1)
    out: dict[str, Any] = {
        "eval_eps_lo": epsilons[0], "eval_eps_hi": epsilons[-1],
        "eval_url_eps4_f1sd_pem": summary_value(summary, "URL", "PEM", "epsilon", 4.0, stat="std"),
        **{f"eval_url_eps4_f1_{m.lower()}": at4["URL", m] for m in METHODS},
        **{f"eval_{ds.lower()}_eps4_nhh_{m.lower()}": at4[ds, m] * k for ds, m in at4}}
    for ds in names:
        g = lead.xs(ds, level=0)
        out |= {f"eval_gap_lo_{ds.lower()}": g.loc[epsilons[0]], f"eval_gap_hi_{ds.lower()}": g.loc[epsilons[-1]],
                f"eval_gap_max_{ds.lower()}": g.max(), f"eval_gap_argmax_{ds.lower()}": g.idxmax()}
    if not aol.present:
        out["eval_aol_eps4_text"] = (f"No AOL results: {aol.absent}, so panels (b) and (e) are empty (the "
                                     "project's data/README.md says how to restore the file).")
        out["eval_gap_aol_text"] = f"AOL is left out: {aol.absent}."
        return out
    out["eval_aol_eps4_text"] = (
        f"On AOL at ε = 4, PEM finds {out['eval_aol_eps4_nhh_pem']:.1f}, MCM {out['eval_aol_eps4_nhh_mcm']:.1f} "
        f"and SPM {out['eval_aol_eps4_nhh_spm']:.1f} of the top {k}." if 4.0 in epsilons else
        "The ε grid of this build has no ε = 4, so no AOL count is quoted there.")
    out["eval_gap_aol_text"] = (
        f"On AOL the lead is {out['eval_gap_lo_aol']:+.2f} at ε = {epsilons[0]:g} and "
        f"{out['eval_gap_hi_aol']:+.2f} at ε = {epsilons[-1]:g}, largest at ε = "
        f"{out['eval_gap_argmax_aol']:g} ({out['eval_gap_max_aol']:+.2f}).")
    return out


def figure6(summary: pd.DataFrame, data: Mapping[str, Dataset], *, ks: Sequence[int], epsilon: float,
            query_limit: int, aol: AolStatus, panels: Mapping[str, str]) -> dict[str, Any]:
    """The numbers on Figure 6 (vary ``k`` at ``epsilon``): PEM's F1 on the synthetic set, heavy hitters found.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ldp.experiments.summarize` of the ``k`` grid by ``dataset, protocol, k`` (``f1``).
    data : mapping of str to Dataset
        The data sets the grid ran on, by name (:func:`.compute.grid_datasets`), in panel order.
    ks : sequence of int
        The grid's ``k``, sorted.
    epsilon, query_limit : float, int
        The grid's budget and the protocols' query limit (PEM at ``k = 1`` is configured with them).
    aol : AolStatus
        Whether AOL is in this build.
    panels : mapping of str to str
        The panel name of each data set (``"URL (stand-in)"``), as the sizes sentence of the captions names it.

    Returns
    -------
    dict
        PEM's synthetic F1 at ``k = 1, 2, 30`` (and MCM's, SPM's at 30), the largest ``k`` with F1 ≥ 0.95
        (``eval_syn_pem_k95``) and the lowest F1 for ``4 ≤ k ≤ 30``; F1 · k at the largest ``k`` per data set
        and protocol (``eval_<ds>_<m>_nhh_kmax``, and AOL's sentence ``eval_aol_nhh_kmax_text``); the captions'
        sizes (``eval_sizes_text``); the near-tie of the synthetic set's top two values (:func:`.compute.top_two_gap`
        for PEM at ``k = 1``: ``eval_syn_c1, c2, top2_z, top2_phi, k1_groups, k1_cand``); AOL at ``k = 1``
        (``eval_aol_k1_text``, :func:`aol_k1_text`).
    """
    f1_syn = {k: summary_value(summary, "Synthetic", "PEM", "k", k) for k in ks}  # PEM on the synthetic set
    out: dict[str, Any] = {
        "eval_k_max": ks[-1], "eval_syn_pem_f1_k30": f1_syn.get(30, NAN),
        "eval_syn_pem_f1sd_k30": summary_value(summary, "Synthetic", "PEM", "k", 30, stat="std"),
        "eval_syn_pem_f1_k1": f1_syn.get(1, NAN), "eval_syn_pem_f1_k2": f1_syn.get(2, NAN),
        "eval_syn_pem_k95": max((k for k, f in f1_syn.items() if f >= 0.95), default=0),
        "eval_syn_pem_f1_min_4_30": min((f for k, f in f1_syn.items() if 4 <= k <= 30), default=NAN),
        **{f"eval_syn_{m.lower()}_f1_k30": summary_value(summary, "Synthetic", m, "k", 30) for m in ("MCM", "SPM")},
        **{f"eval_{ds.lower()}_{m.lower()}_nhh_kmax": summary_value(summary, ds, m, "k", ks[-1]) * ks[-1]
           for ds in data for m in METHODS}}  # heavy hitters found (F1 * k) at the largest k
    out["eval_aol_nhh_kmax_text"] = (f"AOL is left out: {aol.absent}" if not aol.present else
                                     "on AOL it is " + " / ".join(f"{out[f'eval_aol_{m.lower()}_nhh_kmax']:.1f}"
                                                                  for m in METHODS))
    out["eval_sizes_text"] = as_markdown("; ".join(f"{panels[name]}: *n* = {d.n:,d} users of *m* = {d.m} bits"
                                                 for name, d in data.items()))  # the figures' captions
    # why k = 1 and 2 are hard on the synthetic set: its two most frequent values are nearly tied
    syn = data["Synthetic"]
    pem1 = PEM(epsilon, 1, syn.m, query_limit=query_limit)
    tie, cfg1 = top_two_gap(syn, pem1), pem1.config(syn.n)
    assert cfg1.cand_sizes is not None  # an optimised configuration has them
    out |= {"eval_syn_c1": tie["c1"], "eval_syn_c2": tie["c2"], "eval_syn_top2_z": tie["z"],
            "eval_syn_top2_phi": tie["phi"], "eval_syn_k1_groups": int(cfg1.g),
            "eval_syn_k1_cand": int(cfg1.cand_sizes[0])}
    out["eval_aol_k1_text"] = as_markdown(aol_k1_text(data.get("AOL"), summary, ks=ks, epsilon=epsilon,
                                                    query_limit=query_limit, aol=aol))
    return out


def aol_k1_text(data: Dataset | None, summary: pd.DataFrame, *, ks: Sequence[int], epsilon: float,
                query_limit: int, aol: AolStatus) -> str:
    """The paragraph (Markdown) on AOL at ``k = 1``: a prefix shared by many queries beats the top query's.

    PEM at ``k = 1`` keeps one prefix in its first round; on AOL the most frequent prefix of that length is not
    the top query's.  Says instead why the paragraph is absent when AOL is not in this build or the ``k`` grid
    has no ``k = 1``.
    """
    if not aol.present or data is None:
        return f"AOL's small-$k$ points are not discussed here: {aol.absent}."
    if 1 not in ks:
        return ("The $k$ grid of this build has no $k = 1$, the setting where AOL's shared prefixes hurt "
                "most (see the paper-scale build).")
    cfg = PEM(epsilon, 1, data.m, query_limit=query_limit).config(data.n)
    assert cfg.predicted_f1 is not None and cfg.cand_sizes is not None  # an optimised configuration has both
    length = cfg.prefix_lengths[0]
    pv, pc = data.prefix_tally(length)
    best = int(np.argmax(pc))
    nbytes = length // 8
    text = (int(pv[best]) >> (length - 8 * nbytes)).to_bytes(nbytes, "big").decode("latin-1") if nbytes else ""
    prefix = f"whose first bytes are `{text}`" if text.strip() else f"of {length} bits"
    f1 = {meth: summary_value(summary, "AOL", meth, "k", 1) for meth in ("PEM", "MCM", "SPM")}
    return (
        f"On AOL the small-$k$ points show the opposite problem, a prefix shared by many values. At $k = 1$ "
        f"the F1 is {f1['PEM']:.2f} for PEM, {f1['MCM']:.2f} for MCM and {f1['SPM']:.2f} "
        f"for SPM. The most frequent query, `{data.decode(data.top(1))[0]}` (AOL's placeholder for an "
        f"empty query), has {int(data.top_counts(1)[0]):,d} users. PEM's first round at $k = 1$ tests "
        f"prefixes of {length} bits and keeps one. The prefix {prefix} (queries typed as `www.` addresses) is held "
        f"by {int(pc[best]):,d} users, so it wins that round, and the top query is lost in round 1. The "
        f"analysis that configures PEM (section 4.2) takes the frequency of a heavy hitter's prefix to be that "
        f"of the value itself. Under its Zipf assumption it predicts F1 = {float(cfg.predicted_f1):.2f} for "
        f"this setting and keeps $|C_1| = {int(cfg.cand_sizes[0])}$ prefix. On real queries, which share "
        f"prefixes, that assumption fails. MCM and SPM build their candidates from segments and suffer in the "
        f"same way. With larger $k$ there is room for both kinds of prefix.")


def f1_ncr(summaries: Mapping[str, pd.DataFrame], runs: pd.DataFrame) -> dict[str, Any]:
    """How closely F1 and NCR agree over the points of Figures 5 and 6 and over their runs.

    Parameters
    ----------
    summaries : mapping of str to pandas.DataFrame
        Each grid's summary by the name of its varied parameter (``{"epsilon": ..., "k": ...}``), with
        ``dataset``, that parameter, ``f1_mean`` and ``ncr_mean``.
    runs : pandas.DataFrame
        Every run of those grids (``f1``, ``ncr``).

    Returns
    -------
    dict
        ``eval_corr_runs`` (Pearson over runs), ``eval_spearman_points`` (over points), ``eval_n_points``,
        ``eval_n_runs``, and ``eval_order_agree``: the share of the ``eval_order_pairs`` pairs of protocols
        differing in both metrics at one setting that F1 and NCR order alike.
    """
    points = pd.concat(list(summaries.values()), ignore_index=True)
    agree: list[bool] = []
    for x, s in summaries.items():
        for _, g in s.groupby(["dataset", x]):
            i, j = np.triu_indices(len(g), 1)
            df_, dc_ = (g[c].to_numpy()[i] - g[c].to_numpy()[j] for c in ("f1_mean", "ncr_mean"))
            both = (np.abs(df_) > 1e-12) & (np.abs(dc_) > 1e-12)
            agree += list(np.sign(df_[both]) == np.sign(dc_[both]))
    return {"eval_corr_runs": float(np.corrcoef(runs["f1"], runs["ncr"])[0, 1]),
            "eval_spearman_points": float(points[["f1_mean", "ncr_mean"]].corr(method="spearman").iloc[0, 1]),
            "eval_n_points": int(len(points)), "eval_n_runs": int(len(runs)),
            "eval_order_agree": float(np.mean(agree)), "eval_order_pairs": int(len(agree))}


def anomalies(table: pd.DataFrame, *, aol: AolStatus) -> dict[str, Any]:
    """Sentences (Markdown) on the anomalies of Figure 6, every number read from the anomaly table.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`.compute.anomaly_table` of the ``k`` grid's data sets.
    aol : AolStatus
        Whether AOL is in this build (the AOL sentence says why it is absent).

    Returns
    -------
    dict
        ``eval_anom_url_text`` (URL's PEM at ``k = 4`` and 8: prefix mass), ``eval_anom_aol_text`` (AOL's PEM at
        ``k = 1``), ``eval_anom_parts_text`` (SPM and MCM at ``k = 1``), ``eval_anom_tie_text`` (the synthetic
        set's near-tie); a point the ``k`` grid leaves out is said to be absent.
    """
    def q(ds, proto, k, name):
        sel = table[(table["dataset"] == ds) & (table["protocol"] == proto) & (table["k"] == k)
                    & (table["quantity"] == name)]
        return float(sel["value"].iloc[0]) if len(sel) else NAN

    def observed(ds, proto, k):
        m, s = q(ds, proto, k, "f1_mean"), q(ds, proto, k, "f1_std")
        return (f"the grid measures F1 = {m:.3f} (SD {s:.3f})" if m == m
                else f"the k grid of this build has no k = {k}")

    ranks4 = [int(q("URL", "PEM", 4, f"rank_part1_top{j}")) for j in range(1, 5)]
    ranks8 = [int(q("URL", "PEM", 8, f"rank_part1_top{j}")) for j in range(1, 9)]
    out = {"eval_anom_url_text": (
        f"**URL, PEM at k = 4.** Round 1 keeps |C₁| = {int(q('URL', 'PEM', 4, 'kept_part1'))} prefixes. In the "
        f"true prefix tally of round 1 the prefixes of the four most frequent URLs rank {ranks4}: a prefix that "
        f"several less frequent URLs share collects more users than a heavy hitter's own prefix (its \"prefix "
        f"mass\"), and a heavy hitter whose prefix ranks below |C₁| is lost. Run on the exact counts (no noise), "
        f"PEM's rounds find F1 = {q('URL', 'PEM', 4, 'noise_free_f1'):.3f}; {observed('URL', 'PEM', 4)}. "
        f"The miss is deterministic, hence no spread. At k = 8, |C₁| = 8 and the ranks are {ranks8}: "
        f"on the exact counts F1 = {q('URL', 'PEM', 8, 'noise_free_f1'):.3f}; {observed('URL', 'PEM', 8)}.")}
    if not aol.present:
        out["eval_anom_aol_text"] = f"AOL's k = 1 points are not measured: {aol.absent}."
    else:
        out["eval_anom_aol_text"] = (
            f"**AOL, PEM at k = 1.** The most frequent query's prefix ranks "
            f"{int(q('AOL', 'PEM', 1, 'rank_part1_top1'))} in the true tally of round 1, which keeps "
            f"{int(q('AOL', 'PEM', 1, 'kept_part1'))}; on the exact counts F1 = "
            f"{q('AOL', 'PEM', 1, 'noise_free_f1'):.3f}; {observed('AOL', 'PEM', 1)}.")
    parts = []
    for ds in dict.fromkeys(table["dataset"]):
        for proto in ("SPM", "MCM"):
            parts.append(f"{proto} on {ds}: the top value's pattern is not the kept one in "
                         f"{int(q(ds, proto, 1, 'parts_missed_top1'))} of {int(q(ds, proto, 1, 'parts'))} parts "
                         f"(exact counts: F1 = {q(ds, proto, 1, 'noise_free_f1'):.0f}; {observed(ds, proto, 1)})")
    out["eval_anom_parts_text"] = "**SPM and MCM at k = 1.** " + "; ".join(parts) + "."
    out["eval_anom_tie_text"] = (
        f"**Synthetic, k = 1 and 2.** The two most frequent values are "
        f"{q('Synthetic', 'PEM', 1, 'top2_gap_sd'):.2f} standard deviations of the difference of their final "
        f"estimates apart, so the last round alone orders them correctly with probability "
        f"{q('Synthetic', 'PEM', 1, 'top2_order_prob'):.2f}; on the exact counts PEM finds F1 = "
        f"{q('Synthetic', 'PEM', 1, 'noise_free_f1'):.0f}, and {observed('Synthetic', 'PEM', 1)}.")
    return {key: as_markdown(text) for key, text in out.items()}


def variance_title(data: Dataset, k: int) -> str:
    """Figure 9's title: the synthetic set's ``m`` and ``n`` and the ``k`` of its runs."""
    return f"Synthetic, m = {data.m}, n = {data.n:,}, k = {k}"


def figure9(points: pd.DataFrame, protocols: Mapping[tuple[str, float], Any], *, n: int,
            epsilons: Sequence[float], repetitions: int) -> dict[str, Any]:
    """The numbers on Figure 9: Var ratios between protocols, observed against eq. (3) and the exact variance.

    Parameters
    ----------
    points : pandas.DataFrame
        :func:`.compute.variance_table` of the synthetic set (``protocol, epsilon, var_mean, var_sem, var_count,
        var_pred, obs/pred, obs/full``).
    protocols : mapping
        ``(method, epsilon)`` -> the protocol that ran (PEM's configurations give its groups).
    n : int
        Users of the synthetic set.
    epsilons : sequence of float
        The grid's budgets.
    repetitions : int
        Runs per point (a point is compared with the predictions when at least ``min(5, repetitions)`` of its
        runs identified a heavy hitter).

    Returns
    -------
    dict
        At each ε of :data:`VAR_EPS` (tag ``2``, ``3``, ``4``): SPM's and PEM's Var over MCM's, observed
        (``eval_var_<a>_over_mcm_eps<tag>``) and by eq. (3) (``eval_varpred_...``); per protocol the range of
        observed/predicted Var (``eval_var_obs_pred|full_min|max_<m>``); the median relative standard error
        ``eval_var_rel_sem``; PEM's ratios at the largest ε; PEM's group counts and last-group fractions as text.
    """
    out: dict[str, Any] = {}
    r = points.set_index(["epsilon", "protocol"])
    for e in VAR_EPS:  # Var ratios between methods, observed and by eq. (3)
        tag = f"{e:g}".replace(".", "p")
        for col, name in (("var_mean", "var"), ("var_pred", "varpred")):
            v = {m: float(r.loc[(e, m), col]) if (e, m) in r.index else NAN for m in METHODS}
            out |= {f"eval_{name}_spm_over_mcm_eps{tag}": v["SPM"] / v["MCM"],
                    f"eval_{name}_pem_over_mcm_eps{tag}": v["PEM"] / v["MCM"]}
    enough = points[points["var_count"] >= min(5, repetitions)]  # at least 5 runs identified a heavy hitter
    for meth, sub in enough.groupby("protocol"):
        for col, tag in (("obs/pred", "pred"), ("obs/full", "full")):
            out |= {f"eval_var_obs_{tag}_min_{meth.lower()}": float(sub[col].min()),
                    f"eval_var_obs_{tag}_max_{meth.lower()}": float(sub[col].max())}
    top = points[(points["protocol"] == "PEM") & (points["epsilon"] == points["epsilon"].max())].iloc[0]
    configs = [protocols["PEM", e].config(n) for e in epsilons]
    return out | {
        "eval_var_rel_sem": float((enough["var_sem"] / enough["var_mean"]).median()),
        "eval_var_pem_obs_pred_epsmax": float(top["obs/pred"]), "eval_var_pem_obs_full_epsmax": float(top["obs/full"]),
        "eval_pem_last_fraction_text": ", ".join(f"{x:.3g}" for x in sorted({c.group_fractions[-1] for c in configs})),
        "eval_pem_groups_text": ", ".join(str(g) for g in sorted({c.g for c in configs}))}


def engine_check(check: pd.DataFrame, *, runs: int, n: int) -> dict[str, Any]:
    """The numbers on the engine check: where each protocol-engine run falls among the count-level runs.

    Parameters
    ----------
    check : pandas.DataFrame
        :func:`.compute.engine_comparison`, one row per protocol.
    runs, n : int
        The count-level runs per protocol and the users of the check's data set.

    Returns
    -------
    dict
        Per protocol and metric the protocol engine's value, its z-score and percentile
        (``eval_check_<m>_<f1|ncr>_<protocol|z|pct>``); the largest ``|z|``; the probability that at least one
        of the independent comparisons exceeds ``|z| = 2`` if the engines agree (``eval_check_p_any_z2``, normal
        approximation); the protocol-engine runs' total seconds and their median ratio to a count-level run's.
    """
    out: dict[str, Any] = {}
    for meth, row in check.iterrows():  # where the protocol-engine run falls among the count-level runs
        out |= {f"eval_check_{str(meth).lower()}_{metric}_{tag}": float(row[f"{metric} {col}"])
                for metric in ("f1", "ncr")
                for col, tag in (("protocol", "protocol"), ("z", "z"), ("percentile", "pct"))}
    seconds = check["protocol-engine seconds"]
    comparisons = 2 * len(check)  # F1 and NCR of each protocol
    return out | {"eval_check_runs": runs, "eval_check_n": n,
                  "eval_check_max_abs_z": float(np.nanmax(np.abs(check[["f1 z", "ncr z"]].to_numpy()))),
                  "eval_check_p_any_z2": float(1 - (1 - 2 * norm.sf(2.0)) ** comparisons),
                  "eval_check_seconds_total": float(seconds.sum()),
                  "eval_check_speedup": float((seconds / check["counts-engine seconds (mean)"]).median())}


def runtime(runs: Iterable[pd.DataFrame], seconds: float) -> dict[str, Any]:
    """The chapter's cost: its distinct runs (a point shared by two grids counts once) and their summed wall time.

    ``seconds`` is this execution's wall time (:class:`ldp.book.ChapterClock`).
    """
    distinct = pd.concat(list(runs)).drop_duplicates("run_spec")
    return {"eval_runtime_s": seconds, "eval_compute_s": float(distinct["wall_time"].sum()),
            "eval_n_grid_runs": int(len(distinct))}
