"""Paper Figures 5, 6 and 9 and the engine check (section 6, chapter 06).

Each figure function takes the tidy frame its chapter computed (a
:func:`ldp.experiments.summarize` frame, the runs) and returns ``(fig, data)``:
the figure at its display size and exactly the rows it plots.  The
``*_findings`` functions turn the same frames into the numbers and sentences the
chapter quotes, keyed by their glue names.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..experiments.summary import predicted_variance, summary_value
from .style import FULL_WIDTH, errorbar_lines, legend_outside, method_style, use_style
from .tables import format_number

__all__ = ["method_panels", "variance_figure", "engines_figure", "variance_table", "eps_findings", "k_findings",
           "agreement_findings", "variance_findings", "engine_findings", "aol_findings", "anomaly_findings",
           "wide_table", "aol_k1_text"]


def _subplots(nrows: int, ncols: int, width: float, height: float, **kw):
    import matplotlib.pyplot as plt

    use_style()
    return plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **kw)


def method_panels(summary: pd.DataFrame, x: str, xlabel: str, *, panel_names: Mapping[str, str],
                  missing: str = "") -> tuple[object, pd.DataFrame]:
    """Figures 5 and 6: F1 (top row) and NCR (bottom row) of each method on the three data sets.

    Mean ± 1 SD over the runs, the bars cut at 0 and 1; one legend above the panels.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ldp.experiments.summarize` by ``dataset, protocol, x`` with ``f1`` and ``ncr``.
    x, xlabel : str
        The varied column (``"epsilon"`` or ``"k"``) and its axis label.
    panel_names : mapping
        Data set -> panel title (``{"URL": "URL (stand-in)", "AOL": "AOL", "Synthetic": "Synthetic"}``).
    missing : str
        Why a data set has no rows (e.g. ``"is missing"``), written in its panels.

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, dataset, metric, protocol, <x>, mean, std, runs``.
    """
    fig, axes = _subplots(2, 3, FULL_WIDTH, 4.9, sharex=True, sharey=True)
    data = []
    for row, (metric, label) in enumerate((("f1", "F1"), ("ncr", "NCR"))):
        for col, ds in enumerate(panel_names):
            ax, letter = axes[row, col], "abcdef"[3 * row + col]
            ax.set_title(f"({letter}) {panel_names[ds]}, {label}")
            ax.set_ylim(-0.03, 1.03)
            if row == 1:
                ax.set_xlabel(xlabel)
            if col == 0:
                ax.set_ylabel(label)
            sub = summary[summary["dataset"] == ds]
            if sub.empty:
                ax.text(0.5, 0.5, f"No AOL results:\nthe AOL data file\n{missing} in this build\n(see data/README.md)",
                        ha="center", va="center", transform=ax.transAxes)
                continue
            points = errorbar_lines(ax, sub, x=x, y=f"{metric}_mean", err=f"{metric}_std", hue="protocol",
                                    bounds=(0, 1))
            data.append(pd.DataFrame({
                "panel": letter, "dataset": ds, "metric": metric, "protocol": points["protocol"].to_numpy(),
                x: points[x].to_numpy(), "mean": points[f"{metric}_mean"].to_numpy(),
                "std": points[f"{metric}_std"].to_numpy(), "runs": points[f"{metric}_count"].to_numpy()}))
    legend_outside(fig)
    return fig, pd.concat(data, ignore_index=True)


def variance_table(summary: pd.DataFrame, protocols: Mapping[tuple[str, float], object], n: int,
                   top_frequencies) -> pd.DataFrame:
    """Figure 9's points: observed Var with eq. (3) and the exact variance of each protocol's released estimate.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ldp.experiments.summarize` rows of one data set by ``protocol, epsilon`` with ``var``.
    protocols : mapping
        ``(protocol name, epsilon)`` -> the protocol object that ran (its plan gives the
        whole-value report: :func:`ldp.experiments.summary.whole_value_report`).
    n : int
        Users of the data set.
    top_frequencies : array
        The true top-k frequencies (the exact variance averages over them).

    Returns
    -------
    pandas.DataFrame
        ``summary`` with ``var_pred`` (eq. (3)), ``var_full`` (exact), ``obs/pred`` and ``obs/full``.
    """
    out = summary.copy()
    keys = list(zip(out["protocol"], out["epsilon"]))
    out["var_pred"] = [predicted_variance(protocols[key], n) for key in keys]
    out["var_full"] = [predicted_variance(protocols[key], n, top_frequencies) for key in keys]
    out["obs/pred"] = out["var_mean"] / out["var_pred"]
    out["obs/full"] = out["var_mean"] / out["var_full"]
    return out


def variance_figure(table: pd.DataFrame, *, title: str) -> tuple[object, pd.DataFrame]:
    """Figure 9: observed Var (markers, ± 1 SD cut above 0 at the axis' floor) and the predictions (lines).

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``protocol, epsilon, var_mean, var_std, var_count, var_pred, var_full``.
    """
    fig, ax = _subplots(1, 1, 0.72 * FULL_WIDTH, 3.6)
    floor = 0.3 * float(np.nanmin(table[["var_mean", "var_pred", "var_full"]].to_numpy()))
    points = errorbar_lines(ax, table, x="epsilon", y="var_mean", err="var_std", hue="protocol", ls="none",
                            bounds=(floor, None))
    for meth, sub in table.groupby("protocol", sort=False):
        sub = sub.sort_values("epsilon")
        ax.plot(sub["epsilon"], sub["var_pred"], color=method_style(meth)["color"], lw=1)
        ax.plot(sub["epsilon"], sub["var_full"], color=method_style(meth)["color"], lw=1, ls="--")
    ax.plot([], [], color="k", lw=1, label="eq. (3)")
    ax.plot([], [], color="k", lw=1, ls="--", label="exact variance")
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    # plain labels (1M, 10M): a 10^x label's superscript would be smaller than 9 pt
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel=r"$\varepsilon$", ylabel="Var (squared count error)", title=title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    return fig, points[["protocol", "epsilon", "var_mean", "var_std", "var_count", "var_pred",
                        "var_full"]].reset_index(drop=True)


def engines_figure(runs_ref: pd.DataFrame, check: pd.DataFrame, protocols: Sequence[str], *, rng,
                   title: str) -> tuple[object, pd.DataFrame]:
    """The engine check: the count-level runs (jittered markers) and the one protocol-engine run (star).

    ``rng`` (a numpy Generator) draws the horizontal jitter; ``check`` is
    :func:`ldp.experiments.summary.engine_comparison`'s table.

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, metric, protocol, engine, run, x, y``.
    """
    fig, axes = _subplots(1, 2, FULL_WIDTH, 3.0)
    data = []
    for ax, (metric, label) in zip(axes, (("f1", "F1"), ("ncr", "NCR"))):
        panel = "ab"[metric == "ncr"]
        for i, meth in enumerate(protocols):
            ref = runs_ref.loc[runs_ref["protocol"] == meth, metric].to_numpy()
            st = method_style(meth)
            x = i + rng.uniform(-0.18, 0.18, ref.size)
            y_protocol = check.loc[meth, f"{metric} protocol"]
            ax.scatter(x, ref, s=9, alpha=0.45, color=st["color"], marker=st["marker"],
                       label="counts engine" if i == 0 else None)
            ax.scatter([i], [y_protocol], s=130, marker="*", color="black", zorder=3,
                       label="protocol engine" if i == 0 else None)
            data += [pd.DataFrame({"panel": panel, "metric": metric, "protocol": meth, "engine": "counts",
                                   "run": np.arange(ref.size), "x": x, "y": ref}),
                     pd.DataFrame({"panel": [panel], "metric": metric, "protocol": meth, "engine": "protocol",
                                   "run": 0, "x": float(i), "y": float(y_protocol)})]
        ax.set_xticks(range(len(protocols)), protocols)
        ax.set_ylim(-0.03, 1.03)
        ax.set(ylabel=label, title=f"({panel}) {label}, {title}")
    legend_outside(fig, axes[:1])
    return fig, pd.concat(data, ignore_index=True)


def wide_table(table: pd.DataFrame, columns: Mapping[str, str], *, index: str = "epsilon", by: str = "protocol",
               scales: Mapping[str, float] | None = None) -> pd.DataFrame:
    """A wide table for the page: ``index`` rows, one column per (``by`` value, quantity), 3 significant digits.

    ``columns`` maps the table's columns to their short names (e.g. ``{"var_mean": "Var (10⁶)"}``),
    ``scales`` divides a column first (e.g. ``{"var_mean": 1e6}``).  The cells are text: 3
    significant digits (:func:`ldp.plotting.tables.format_number`), flat one-row headers.
    """
    scaled = table.assign(**{c: table[c] / s for c, s in (scales or {}).items()})
    wide = scaled.set_index([index, by])[list(columns)].rename(columns=columns).unstack(by)
    order = list(dict.fromkeys(table[by]))
    wide = wide[[(c, b) for b in order for c in columns.values()]]
    wide.columns = [f"{b} {c}" for c, b in wide.columns]
    return wide.map(format_number)


def eps_findings(summary: pd.DataFrame, *, k: int, datasets: Sequence[str], epsilons: Sequence[float],
                 panel_names: Mapping[str, str], aol_absent: str = "") -> dict:
    """Figure 5's numbers (glue names ``eval_*``): URL and synthetic at eps = 4, "PEM best", PEM's lead."""
    methods = ["PEM", "MCM", "SPM"]
    out: dict[str, Any] = {"eval_k_fixed": k, "eval_eps_lo": epsilons[0], "eval_eps_hi": epsilons[-1]}

    def value(ds, meth, stat="mean"):
        return summary_value(summary, ds, meth, "epsilon", 4.0, stat=stat)

    for meth in methods:  # paper: URL at eps = 4, PEM F1 = 0.9; MCM and SPM "only identify two"
        low = meth.lower()
        out |= {f"eval_url_eps4_f1_{low}": value("URL", meth), f"eval_url_eps4_nhh_{low}": value("URL", meth) * k,
                f"eval_url_eps4_f1sd_{low}": value("URL", meth, "std"),
                f"eval_synthetic_eps4_f1_{low}": value("Synthetic", meth),
                f"eval_synthetic_eps4_nhh_{low}": value("Synthetic", meth) * k}
    aol = {meth: value("AOL", meth) * k for meth in methods}
    if aol_absent:
        out["eval_aol_eps4_text"] = (f"No AOL results: {aol_absent}, so panels (b) and (e) are empty (the "
                                     f"project's data/README.md says how to restore the file).")
    elif 4.0 in epsilons:
        out |= {f"eval_aol_eps4_nhh_{meth.lower()}": aol[meth] for meth in methods}
        out["eval_aol_eps4_text"] = (f"On AOL at ε = 4, PEM finds {aol['PEM']:.1f}, MCM {aol['MCM']:.1f} "
                                     f"and SPM {aol['SPM']:.1f} of the top {k}.")
    else:
        out["eval_aol_eps4_text"] = "The ε grid of this build has no ε = 4, so no AOL count is quoted there."
    out |= {"eval_url_eps4_diff_pem": value("URL", "PEM") - 0.9,
            "eval_url_eps4_nhh_diff_mcm": value("URL", "MCM") * k - 2,
            "eval_url_eps4_nhh_diff_spm": value("URL", "SPM") * k - 2}
    # "PEM performs best": share of (data set, epsilon) points where PEM's mean F1 is >= both others
    wide = summary.pivot_table(index=["dataset", "epsilon"], columns="protocol", values="f1_mean")
    margin = wide["PEM"] - wide[["MCM", "SPM"]].max(axis=1)
    worst = margin.idxmin()
    out |= {"eval_eps_points": int(len(wide)), "eval_eps_pem_best": int((margin >= -1e-12).sum()),
            "eval_eps_worst_margin": float(margin.min()),
            "eval_eps_worst_margin_where": f"{panel_names[worst[0]]}, ε = {worst[1]:g}"}
    # "The improvement is more significant when epsilon is larger": PEM - best other, per data set
    for ds in datasets:
        gap = margin.xs(ds, level=0)
        if ds == "AOL":
            out["eval_gap_aol_text"] = (f"On AOL the lead is {gap.loc[epsilons[0]]:+.2f} at ε = {epsilons[0]:g} and "
                                        f"{gap.loc[epsilons[-1]]:+.2f} at ε = {epsilons[-1]:g}, largest at ε = "
                                        f"{gap.idxmax():g} ({gap.max():+.2f}).")
        out |= {f"eval_gap_lo_{ds.lower()}": float(gap.loc[epsilons[0]]),
                f"eval_gap_hi_{ds.lower()}": float(gap.loc[epsilons[-1]]),
                f"eval_gap_max_{ds.lower()}": float(gap.max()), f"eval_gap_argmax_{ds.lower()}": float(gap.idxmax())}
    if aol_absent:
        out["eval_gap_aol_text"] = f"AOL is left out: {aol_absent}."
    return out


def k_findings(summary: pd.DataFrame, *, ks: Sequence[int], datasets: Sequence[str], aol_absent: str = "") -> dict:
    """Figure 6's numbers (glue names ``eval_*``): PEM on the synthetic set, heavy hitters found at the largest k."""
    methods = ["PEM", "MCM", "SPM"]
    f1_syn = {k: summary_value(summary, "Synthetic", "PEM", "k", k) for k in ks}
    above = [k for k, f in f1_syn.items() if f >= 0.95]
    mid = [f for k, f in f1_syn.items() if 4 <= k <= 30]
    out: dict[str, Any] = {"eval_k_max": ks[-1], "eval_syn_pem_f1_k30": f1_syn.get(30, float("nan")),
           "eval_syn_pem_f1sd_k30": summary_value(summary, "Synthetic", "PEM", "k", 30, stat="std"),
           "eval_syn_pem_f1_k1": f1_syn.get(1, float("nan")), "eval_syn_pem_f1_k2": f1_syn.get(2, float("nan")),
           "eval_syn_pem_k95": max(above) if above else 0,
           "eval_syn_pem_f1_min_4_30": min(mid) if mid else float("nan")}
    for meth in ("MCM", "SPM"):
        out[f"eval_syn_{meth.lower()}_f1_k30"] = summary_value(summary, "Synthetic", meth, "k", 30)
    # "the absolute number of heavy hitters that can be identified stops increasing": F1 * k
    found = {(ds, meth): summary_value(summary, ds, meth, "k", ks[-1]) * ks[-1] for ds in datasets for meth in methods}
    for ds in datasets:
        out |= {f"eval_{ds.lower()}_{meth.lower()}_nhh_kmax": found[ds, meth] for meth in methods}
    out["eval_aol_nhh_kmax_text"] = ("on AOL it is " + " / ".join(f"{found['AOL', m]:.1f}" for m in methods)
                                     if not aol_absent else f"AOL is left out: {aol_absent}")
    wide = summary.pivot_table(index=["dataset", "k"], columns="protocol", values="f1_mean")
    out |= {"eval_k_points": int(len(wide)),
            "eval_k_pem_best": int((wide["PEM"] >= wide[["MCM", "SPM"]].max(axis=1) - 1e-12).sum())}
    return out


def _same_order(summary: pd.DataFrame, x: str) -> list[bool]:
    """For each (data set, x) and pair of methods differing in both metrics: do F1 and NCR order them alike?"""
    out = []
    for _, g in summary.groupby(["dataset", x]):
        f, c = g["f1_mean"].to_numpy(), g["ncr_mean"].to_numpy()
        i, j = np.triu_indices(len(g), 1)
        df_, dc_ = f[i] - f[j], c[i] - c[j]
        both = (np.abs(df_) > 1e-12) & (np.abs(dc_) > 1e-12)
        out.extend(np.sign(df_[both]) == np.sign(dc_[both]))
    return out


def agreement_findings(sum_eps: pd.DataFrame, sum_k: pd.DataFrame, runs: pd.DataFrame) -> dict:
    """F1 against NCR over the points of Figures 5 and 6 and over their runs (glue names ``eval_*``)."""
    from scipy import stats

    points = pd.concat([sum_eps, sum_k], ignore_index=True)
    agree = np.array(_same_order(sum_eps, "epsilon") + _same_order(sum_k, "k"))
    return {"eval_corr_points": float(np.corrcoef(points["f1_mean"], points["ncr_mean"])[0, 1]),
            "eval_corr_runs": float(np.corrcoef(runs["f1"], runs["ncr"])[0, 1]),
            "eval_spearman_points": float(stats.spearmanr(points["f1_mean"], points["ncr_mean"]).statistic),
            "eval_n_points": int(len(points)), "eval_n_runs": int(len(runs)),
            "eval_order_agree": float(agree.mean()), "eval_order_pairs": int(agree.size)}


def variance_findings(table: pd.DataFrame, *, at: Sequence[float], repetitions: int,
                      pem_configs: Sequence) -> dict:
    """Figure 9's numbers (glue names ``eval_var*``, ``eval_pem_*``): ratios between methods and to the predictions."""
    out: dict[str, Any] = {}
    r = table.set_index(["epsilon", "protocol"])
    for e in at:
        tag = f"{e:g}".replace(".", "p")
        obs, pred = ({m: float(r.loc[(e, m), col]) if (e, m) in r.index else float("nan")
                      for m in ("PEM", "MCM", "SPM")} for col in ("var_mean", "var_pred"))
        out |= {f"eval_var_spm_over_mcm_eps{tag}": obs["SPM"] / obs["MCM"],
                f"eval_var_pem_over_mcm_eps{tag}": obs["PEM"] / obs["MCM"],
                f"eval_varpred_spm_over_mcm_eps{tag}": pred["SPM"] / pred["MCM"],
                f"eval_varpred_pem_over_mcm_eps{tag}": pred["PEM"] / pred["MCM"]}
        out |= {f"eval_var_{m.lower()}_eps{tag}": obs[m] for m in obs}
    # ratios observed / predicted over the points where at least 5 runs identified a heavy hitter
    enough = table[table["var_count"] >= min(5, repetitions)]
    for meth, sub in enough.groupby("protocol"):
        for col, tag in (("obs/pred", "pred"), ("obs/full", "full")):
            out[f"eval_var_obs_{tag}_min_{meth.lower()}"] = float(sub[col].min())
            out[f"eval_var_obs_{tag}_max_{meth.lower()}"] = float(sub[col].max())
    top = table[(table["protocol"] == "PEM") & (table["epsilon"] == table["epsilon"].max())].iloc[0]
    out |= {"eval_var_rel_sem": float((enough["var_sem"] / enough["var_mean"]).median()),
            "eval_var_pem_obs_pred_epsmax": float(top["obs/pred"]),
            "eval_var_pem_obs_full_epsmax": float(top["obs/full"]),
            "eval_pem_last_fraction_text": ", ".join(f"{x:.3g}" for x in sorted({c.group_fractions[-1]
                                                                                   for c in pem_configs})),
            "eval_pem_groups_text": ", ".join(str(g) for g in sorted({c.g for c in pem_configs}))}
    return out


def engine_findings(check: pd.DataFrame) -> dict:
    """The engine check's numbers (glue names ``eval_check_*``)."""
    from scipy import stats

    out = {}
    for meth, row in check.iterrows():
        for metric in ("f1", "ncr"):
            for col, tag in (("protocol", "protocol"), ("counts mean", "counts_mean"), ("counts std", "counts_std"),
                             ("z", "z"), ("percentile", "pct")):
                out[f"eval_check_{meth.lower()}_{metric}_{tag}"] = float(row[f"{metric} {col}"])
        out[f"eval_check_{meth.lower()}_seconds"] = float(row["protocol-engine seconds"])
    seconds = check["protocol-engine seconds"]
    return out | {"eval_check_max_abs_z": float(np.nanmax(np.abs(check[["f1 z", "ncr z"]].to_numpy()))),
                  "eval_check_p_any_z2": float(1 - (1 - 2 * stats.norm.sf(2.0)) ** 6),
                  "eval_check_seconds_total": float(seconds.sum()),
                  "eval_check_speedup": float((seconds / check["counts-engine seconds (mean)"]).median())}


def aol_findings(aol, sum_eps: pd.DataFrame, sum_k: pd.DataFrame, *, k: int, eps: float,
                 aol_absent: str = "") -> dict:
    """AOL in the reproduction report: its size (section 6.1) and "PEM performs best" on it."""
    if aol_absent:
        return {"eval_datasets_compared": f"URL and synthetic only (AOL is not testable here: {aol_absent})",
                "eval_aol_size_text": f"not measured: {aol_absent}",
                "eval_aol_best_text": f"not measured: {aol_absent}",
                "eval_aol_size_verdict": f"not testable here: {aol_absent}",
                "eval_aol_best_verdict": f"not testable here: {aol_absent}"}
    errata = "match" if round(aol.n_distinct / 1e6, 2) == 0.12 else "differ from"
    best = {}
    for name, s, x in (("eps", sum_eps, "epsilon"), ("k", sum_k, "k")):
        wide = s[s["dataset"] == "AOL"].pivot_table(index=x, columns="protocol", values="f1_mean")
        best[name] = wide["PEM"] >= wide[["MCM", "SPM"]].max(axis=1) - 1e-12
    behind = [f"ε = {e:g}" for e, b in best["eps"].items() if not b] + [f"k = {j:d}" for j, b in best["k"].items()
                                                                          if not b]
    at4 = {m: summary_value(sum_eps, "AOL", m, "epsilon", 4.0) * k for m in ("PEM", "MCM", "SPM")}
    eps4 = (f"; at ε = 4 it finds {at4['PEM']:.1f} of the top {k}, MCM {at4['MCM']:.1f}, SPM {at4['SPM']:.1f}"
            if at4["PEM"] == at4["PEM"] else "")
    return {"eval_datasets_compared": "URL, AOL and synthetic", "eval_aol_n": int(aol.n),
            "eval_aol_distinct": int(aol.n_distinct),
            "eval_aol_size_text": f"{aol.n:,d} users, {aol.n_distinct:,d} distinct 6-byte queries "
                                  f"(the authors' published tally)",
            "eval_aol_size_verdict": f"the paper's own file: its {aol.n_distinct / 1e6:.2f} million distinct queries "
                                     f"{errata} the errata's 0.12 million (the text says 0.2 million); its "
                                     f"{aol.n / 1e6:.2f} million users are more than the text's \"around 0.5 million\"",
            "eval_aol_best_text": f"PEM best (or tied) at {int(best['eps'].sum())} of {len(best['eps'])} ε points "
                                  f"(k = {k}) and {int(best['k'].sum())} of {len(best['k'])} k points "
                                  f"(ε = {eps:g}){eps4}",
            "eval_aol_best_verdict": "reproduced" if not behind else
                                     f"reproduced except at {', '.join(behind)}, where PEM is behind a competitor"}


def anomaly_findings(table: pd.DataFrame, *, aol_absent: str = "") -> dict:
    """Sentences on the anomalies of Figure 6 from :func:`ldp.experiments.summary.anomaly_table` (``eval_anom_*``).

    Every number in them is read from ``table``; a point the grid did not run is said to be absent.
    """
    def q(ds, proto, k, name):
        sel = table[(table["dataset"] == ds) & (table["protocol"] == proto) & (table["k"] == k)
                    & (table["quantity"] == name)]
        return float(sel["value"].iloc[0]) if len(sel) else float("nan")

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
    if aol_absent:
        out["eval_anom_aol_text"] = f"AOL's k = 1 points are not measured: {aol_absent}."
    else:
        out["eval_anom_aol_text"] = (
            f"**AOL, PEM at k = 1.** The most frequent query's prefix ranks "
            f"{int(q('AOL', 'PEM', 1, 'rank_part1_top1'))} in the true tally of round 1, which keeps "
            f"{int(q('AOL', 'PEM', 1, 'kept_part1'))}; on the exact counts F1 = "
            f"{q('AOL', 'PEM', 1, 'noise_free_f1'):.3f}; {observed('AOL', 'PEM', 1)}.")
    parts = []
    for ds in [d for d in dict.fromkeys(table["dataset"])]:
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
    return out


def aol_k1_text(aol, summary_k: pd.DataFrame, *, eps: float, query_limit: int, ks: Sequence[int],
                aol_absent: str = "") -> str:
    """The paragraph (Markdown) on AOL at k = 1: a prefix shared by many queries beats the top query's."""
    if aol_absent:
        return f"AOL's small-$k$ points are not discussed here: {aol_absent}."
    if 1 not in ks:
        return ("The $k$ grid of this build has no $k = 1$, the setting where AOL's shared prefixes hurt "
                "most (see the paper-scale build).")
    from ..protocols import PEM

    cfg = PEM(eps, 1, aol.m, query_limit=query_limit).config(aol.n)
    assert cfg.predicted_f1 is not None and cfg.cand_sizes is not None  # an optimised configuration has both
    length = cfg.prefix_lengths[0]
    pv, pc = aol.prefix_tally(length)
    best = int(np.argmax(pc))
    nbytes = length // 8
    text = (int(pv[best]) >> (length - 8 * nbytes)).to_bytes(nbytes, "big").decode("latin-1") if nbytes else ""
    prefix = f"whose first bytes are `{text}`" if text.strip() else f"of {length} bits"
    f1 = {meth: summary_value(summary_k, "AOL", meth, "k", 1) for meth in ("PEM", "MCM", "SPM")}
    return (
        f"On AOL the small-$k$ points show the opposite problem, a prefix shared by many values. At $k = 1$ "
        f"the F1 is {f1['PEM']:.2f} for PEM, {f1['MCM']:.2f} for MCM and {f1['SPM']:.2f} "
        f"for SPM. The most frequent query, `{aol.decode(aol.top(1))[0]}` (AOL's placeholder for an "
        f"empty query), has {int(aol.top_counts(1)[0]):,d} users. PEM's first round at $k = 1$ tests "
        f"prefixes of {length} bits and keeps one. The prefix {prefix} (queries typed as `www.` addresses) is held "
        f"by {int(pc[best]):,d} users, so it wins that round, and the top query is lost in round 1. The "
        f"analysis that configures PEM (section 4.2) takes the frequency of a heavy hitter's prefix to be that "
        f"of the value itself. Under its Zipf assumption it predicts F1 = {float(cfg.predicted_f1):.2f} for "
        f"this setting and keeps $|C_1| = {int(cfg.cand_sizes[0])}$ prefix. On real queries, which share "
        f"prefixes, that assumption fails. MCM and SPM build their candidates from segments and suffer in the "
        f"same way. With larger $k$ there is room for both kinds of prefix.")
