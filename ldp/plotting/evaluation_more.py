"""Chapter 07 (paper Figures 7 and 8): threshold release, partitioned users, PEM's η, the assumed distribution.

The chapter runs its grids with :mod:`ldp.experiments` and summarises them
with :func:`ldp.experiments.summarize`; this module turns those summaries
into the two figures (:func:`threshold_figure`, :func:`design_figure`), the
tables the chapter shows, the claims table and the numbers its prose quotes
(:func:`threshold_findings`, :func:`design_findings`), and the extra table
``07_evaluation_more/threshold-release`` of :mod:`ldp.reporting.results`
(:func:`threshold_release_table`).

Each figure function returns ``(fig, data)``: the figure drawn at the book's
full width with :func:`ldp.plotting.use_style`'s fonts, and the DataFrame of
exactly what it plots, for :func:`ldp.plotting.save_figure`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator
from scipy import stats

from ..analysis import PEMConfig
from ..core.dataset import Dataset
from .style import FULL_WIDTH, METHOD_STYLE, bar_bounds, errorbar_lines, legend_outside, series_colors
from .tables import compact_table

__all__ = ["k_for_threshold", "threshold_table", "threshold_figure", "threshold_release_table",
           "threshold_findings", "final_round_release", "eta_table", "assumption_summary", "design_figure",
           "design_findings", "claims_table", "config_label", "assumption_configurations", "table_view",
           "without_missing",
           "PEM_OPTIMISED"]

#: Figure 8's label of optimised PEM (panel (a) and the dashed reference of panel (b))
PEM_OPTIMISED = "PEM (optimised)"
_F1 = (0.0, 1.0)  # F1's range: error bars are cut there
_OTHERS = ["SPM", "MCM"]


def k_for_threshold(rank_frequencies, theta: float) -> int:
    """``k(θ)``: the number of ranks whose frequency under the generating law is at least ``theta`` (at least 1)."""
    return max(1, int(np.count_nonzero(np.asarray(rank_frequencies) >= theta)))


def threshold_table(ds: Dataset, rank_frequencies, thetas: Sequence[float]) -> pd.DataFrame:
    """Per threshold: ``k(θ)`` under the law and the number of values at or above θ in the data."""
    return pd.DataFrame({
        "theta": list(thetas),
        "k(theta) (law)": [k_for_threshold(rank_frequencies, t) for t in thetas],
        "values >= theta in the data": [len(ds.above(t)) for t in thetas],
    }).set_index("theta")


def _at(summary: pd.DataFrame, eps: float, **where) -> pd.Series:
    """The row of ``summary`` at budget ``eps`` and the given column values (NaN values if absent)."""
    sel = np.isclose(summary["epsilon"].astype(float), eps)
    for col, val in where.items():
        sel &= (summary[col] == val).to_numpy()
    rows = summary[sel]
    return rows.iloc[0] if len(rows) else pd.Series({"f1_mean": np.nan, "f1_std": np.nan, "n_found_mean": np.nan})


def _style_axes(ax, xlabel: str, title: str) -> None:
    ax.set(xlabel=xlabel, title=title)
    ax.xaxis.set_major_locator(MaxNLocator(4))


def threshold_figure(s7a: pd.DataFrame, s7bc: pd.DataFrame, *, theta_fixed: float,
                     eps_bc: tuple[float, float]) -> tuple[plt.Figure, pd.DataFrame]:
    """Paper Figure 7: F1 of the threshold versions; (a) vary ε at ``theta_fixed``, (b), (c) vary θ.

    Parameters
    ----------
    s7a : pandas.DataFrame
        :func:`~ldp.experiments.summarize` of panel (a) by ``protocol, epsilon`` (metric ``f1``).
    s7bc : pandas.DataFrame
        The same for panels (b) and (c) by ``protocol_name, threshold, epsilon``.
    theta_fixed : float
        The threshold of panel (a).
    eps_bc : (float, float)
        The budgets of panels (b) and (c).

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, protocol, epsilon, threshold, f1_mean, f1_std, runs``.
    """
    fig, axes = plt.subplots(1, 3, figsize=(FULL_WIDTH, 2.9), layout="constrained", sharey=True)
    data = [errorbar_lines(axes[0], s7a, x="epsilon", y="f1_mean", err="f1_std", hue="protocol", bounds=_F1)
            .assign(panel="a", threshold=theta_fixed)]
    _style_axes(axes[0], r"$\varepsilon$", rf"(a) $\theta = {theta_fixed:g}$")
    for ax, eps, tag in zip(axes[1:], eps_bc, "bc"):
        sub = s7bc[np.isclose(s7bc["epsilon"], eps)]
        data.append(errorbar_lines(ax, sub, x="threshold", y="f1_mean", err="f1_std", hue="protocol_name",
                                   bounds=_F1).rename(columns={"protocol_name": "protocol"}).assign(panel=tag))
        _style_axes(ax, r"$\theta$", rf"({tag}) $\varepsilon = {eps:g}$")
    axes[0].set(ylabel="F1", ylim=(-0.03, 1.03))
    legend_outside(fig)
    out = pd.concat(data, ignore_index=True)
    out = out[["panel", "protocol", "epsilon", "threshold", "f1_mean", "f1_std", "f1_count"]]
    return fig, out.rename(columns={"f1_count": "runs"})


def threshold_release_table(s7a: pd.DataFrame, s7bc: pd.DataFrame, *, theta_fixed: float,
                            eps_bc: tuple[float, float]) -> pd.DataFrame:
    """The extra table ``07_evaluation_more/threshold-release`` (:mod:`ldp.reporting.results`).

    Arguments as for :func:`threshold_figure`; the summaries must also hold
    the metrics ``n_found`` (values released) and ``n_true`` (values with
    frequency >= θ in the data, the same in every run).

    Returns
    -------
    pandas.DataFrame
        ``panel, protocol, epsilon, threshold, released_mean, true_count``, one row per point of Figure 7.
    """
    parts = [s7a.assign(panel="a", threshold=theta_fixed)]
    for eps, tag in zip(eps_bc, "bc"):  # the budgets of panels (b) and (c), as threshold_figure plots them
        parts.append(s7bc[np.isclose(s7bc["epsilon"], eps)].rename(columns={"protocol_name": "protocol"})
                     .assign(panel=tag))
    out = pd.concat(parts, ignore_index=True)
    if (out["n_true_std"].fillna(0) > 0).any():
        raise ValueError("n_true differs between the runs of a point: the grid did not share one data set")
    out = out.rename(columns={"n_found_mean": "released_mean"}).assign(true_count=out["n_true_mean"].astype(int))
    cols = ["panel", "protocol", "epsilon", "threshold", "released_mean", "true_count"]
    return out[cols].sort_values(cols[:4], kind="mergesort").reset_index(drop=True)


def final_round_release(protocol, ds: Dataset, *, theta: float, rng) -> dict[str, float]:
    """One run of a threshold-mode ``protocol`` on ``ds``: its final step and the false positives it predicts.

    Returns ``n_users`` and ``n_candidates`` of the last round, ``fp_expected``
    (candidates nobody holds whose support passes the release test: the
    binomial tail of a non-holder's support ``Bin(N, q)`` beyond the support
    that gives an estimate of ``theta n`` under eq. (2), times the candidates)
    and ``theta_sigmas`` (``theta`` in standard deviations of a non-holder's
    frequency estimate).
    """
    last = protocol.run(ds, rng=rng, engine="counts").rounds[-1]
    o = last.question.oracle()
    N, D = last.n_users, last.n_candidates
    t_sup = np.ceil(N * o.q + theta * N * (o.p - o.q))  # smallest support with estimate >= theta n, eq. (2)
    sigma_freq = np.sqrt(N * o.q * (1 - o.q)) / (o.p - o.q) / N
    return {"n_users": int(N), "n_candidates": int(D), "fp_expected": float(D * stats.binom.sf(t_sup - 1, N, o.q)),
            "theta_sigmas": float(theta / sigma_freq)}


def threshold_findings(s7a: pd.DataFrame, s7bc: pd.DataFrame, *, eps_bc: tuple[float, float]) -> dict:
    """The numbers chapter 07 quotes about Figure 7 (glue names without the ``evalmore_`` prefix).

    ``f7_best_other_name_eps2`` is a protocol name (the chapter glues it as Markdown).
    """
    f1 = s7a.pivot(index="epsilon", columns="protocol", values="f1_mean")
    others = f1[_OTHERS]
    gap = f1["PEM"] - others.max(axis=1)
    e2 = float(f1.index[np.argmin(np.abs(f1.index - 2.0))])
    worst = gap.idxmax()
    f1_bc = s7bc.pivot_table(index=["epsilon", "threshold"], columns="protocol_name", values="f1_mean")
    wins = (f1_bc["PEM"] >= f1_bc[_OTHERS].max(axis=1)).groupby(level="epsilon").sum()
    eps_a, eps_b = eps_bc
    t_low = float(s7bc["threshold"].min())
    low = {p: _at(s7bc, eps_a, protocol_name=p, threshold=t_low) for p in ("PEM", *_OTHERS)}
    return {
        "f7_eps2": e2, "f7_pem_eps2": float(f1.loc[e2, "PEM"]), "f7_best_other_eps2": float(others.loc[e2].max()),
        "f7_best_other_name_eps2": str(others.loc[e2].idxmax()), "f7_gap_eps2": float(gap.loc[e2]),
        "f7_max_gap": float(gap.max()), "f7_max_gap_eps": float(worst),
        "f7_max_gap_other": float(others.loc[worst].max()), "f7_max_gap_pem": float(f1.loc[worst, "PEM"]),
        "f7_n_pem_wins": int((gap > 0).sum()), "f7_n_eps": len(gap),
        "theta_low": t_low, "f7_pem_f1_low": float(low["PEM"]["f1_mean"]),
        "f7_pem_found_low": float(low["PEM"]["n_found_mean"]),
        "f7_spm_found_low": float(low["SPM"]["n_found_mean"]), "f7_mcm_found_low": float(low["MCM"]["n_found_mean"]),
        "f7_wins_eps_a": int(wins.loc[eps_a]), "f7_wins_eps_b": int(wins.loc[eps_b]),
        "f7_n_thetas": int(s7bc["threshold"].nunique()), "eps_a": eps_a, "eps_b": eps_b,
    }


def eta_table(k: int, m: int, etas: Sequence[int], *, query_limit: int) -> pd.DataFrame:
    """PEM with the step fixed at each η (:func:`ldp.analysis.pem_config`): rounds, oracle queries, within the limit."""
    from ..analysis import pem_config

    cfg = {e: pem_config(k, m, eta=e) for e in etas}
    return pd.DataFrame({
        "rounds g": [cfg[e].g for e in etas],
        "oracle queries": [cfg[e].queries for e in etas],
        "within 2^20": [cfg[e].queries <= query_limit for e in etas],
    }, index=pd.Index(list(etas), name="eta"))


def config_label(config) -> str:
    """A PEM configuration's series label in Figure 8(c)'s runs: ``"etas=12-12-12-12-12"``."""
    return "etas=" + "-".join(map(str, config.etas))


def assumption_summary(df8c: pd.DataFrame, chosen: Mapping[tuple[str, float], PEMConfig]) -> pd.DataFrame:
    """Figure 8(c)'s rows: per (assumption, ε) the configuration the optimiser chose and its measured F1.

    ``df8c`` holds the runs of each distinct configuration (protocol label
    :func:`config_label`), ``chosen`` maps ``(assumption, epsilon)`` to the
    optimiser's configuration.
    """
    from ..experiments import summarize

    per_config = summarize(df8c, by=["protocol", "epsilon"], metrics=["f1"]).set_index(["protocol", "epsilon"])
    return pd.DataFrame([
        {"assumption": a, "epsilon": e, "configuration": config_label(c), "predicted F1": c.predicted_f1,
         **per_config.loc[(config_label(c), e)].to_dict()}
        for (a, e), c in chosen.items()])


def _legend_below(ax, labels=None) -> None:
    handles, found = ax.get_legend_handles_labels()
    ax.legend(handles, labels or found, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False,
              borderaxespad=0.0, handlelength=1.6)


def design_figure(s8a: pd.DataFrame, s8b: pd.DataFrame, s8c: pd.DataFrame, *,
                  etas: Sequence[int]) -> tuple[plt.Figure, pd.DataFrame]:
    """Paper Figure 8: (a) partitioning users, (b) PEM's η, (c) the distribution assumption; F1 against ε.

    Parameters
    ----------
    s8a : pandas.DataFrame
        Summary by ``protocol, epsilon`` of ``"PEM (optimised)"`` and ``"<SPM|MCM>, budget split"`` /
        ``"<SPM|MCM>, partitioned users"``.
    s8b : pandas.DataFrame
        Summary by ``protocol, epsilon`` of ``"eta = <η>"`` for each η of ``etas``.
    s8c : pandas.DataFrame
        :func:`assumption_summary`.  Its curves are shifted sideways by up to 0.06 so that coinciding
        curves stay visible (column ``x``).

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, series, epsilon, x, f1_mean, f1_std, runs``.
    """
    fig, axes = plt.subplots(1, 3, figsize=(FULL_WIDTH, 4.6), layout="constrained", sharey=True)
    styles_a = {PEM_OPTIMISED: dict(METHOD_STYLE["PEM"])}
    for p in _OTHERS:
        styles_a[f"{p}, budget split"] = dict(METHOD_STYLE[p], ls="--", mfc="white")
        styles_a[f"{p}, partitioned users"] = dict(METHOD_STYLE[p])
    data = [errorbar_lines(axes[0], s8a, x="epsilon", y="f1_mean", err="f1_std", hue="protocol", styles=styles_a,
                           bounds=_F1).assign(panel="a")]
    styles_b = {f"eta = {e}": dict(color=c, marker="o") for e, c in zip(etas, series_colors(max(len(etas), 1)))}
    data.append(errorbar_lines(axes[1], s8b, x="epsilon", y="f1_mean", err="f1_std", hue="protocol",
                               styles=styles_b, bounds=_F1).assign(panel="b"))
    ref = s8a[s8a["protocol"] == PEM_OPTIMISED].sort_values("epsilon")
    axes[1].plot(ref["epsilon"], ref["f1_mean"], "k--", lw=1, label="optimised")
    data.append(ref.assign(panel="b", protocol="optimised (dashed line)", f1_std=np.nan))
    groups = list(s8c.groupby("assumption", sort=False))
    offsets = np.linspace(-0.06, 0.06, len(groups))  # dodge: the curves coincide where configurations do
    for (a, grp), mk, dx, color in zip(groups, "os^vD", offsets, series_colors(max(len(groups), 1))):
        grp = grp.sort_values("epsilon")
        axes[2].errorbar(grp["epsilon"] + dx, grp["f1_mean"], yerr=bar_bounds(grp["f1_mean"], grp["f1_std"], _F1),
                         marker=mk, color=color, lw=1, label=a, mfc="white")
        data.append(grp.assign(panel="c", protocol=a, x=grp["epsilon"] + dx))
    for ax, title in zip(axes, ("(a) partitioning users", r"(b) $\eta$ (PEM)", "(c) assumed distribution (PEM)")):
        _style_axes(ax, r"$\varepsilon$", title)
    _legend_below(axes[0])
    _legend_below(axes[1], [lab.replace("eta", r"$\eta$") for lab in axes[1].get_legend_handles_labels()[1]])
    _legend_below(axes[2])
    axes[0].set(ylabel="F1", ylim=(-0.03, 1.03))
    out = pd.concat(data, ignore_index=True).rename(columns={"protocol": "series", "f1_count": "runs"})
    out["x"] = out["x"].fillna(out["epsilon"])
    return fig, out[["panel", "series", "epsilon", "x", "f1_mean", "f1_std", "runs"]].astype({"runs": "Int64"})


def _f1_at(summary: pd.DataFrame, label: str, eps: float) -> float:
    return float(_at(summary, eps, protocol=label)["f1_mean"])


def design_findings(s8a: pd.DataFrame, s8b: pd.DataFrame, s8c: pd.DataFrame, *, etas: Sequence[int]) -> dict:
    """The numbers chapter 07 quotes about Figure 8 (glue names without the ``evalmore_`` prefix)."""
    out: dict = {}
    for p in ("MCM", "SPM"):
        for eps, tag in ((1.2, "12"), (2.0, "2")):
            split, part = _f1_at(s8a, f"{p}, budget split", eps), _f1_at(s8a, f"{p}, partitioned users", eps)
            out.update({f"{p.lower()}_split_eps{tag}": split, f"{p.lower()}_part_eps{tag}": part,
                        f"{p.lower()}_gain_eps{tag}": part - split})
        by_eps = {kind: s8a[s8a.protocol == f"{p}, {kind}"].set_index("epsilon")["f1_mean"]
                  for kind in ("partitioned users", "budget split")}
        gain = by_eps["partitioned users"] - by_eps["budget split"]
        out.update({f"{p.lower()}_max_gain": float(gain.max()), f"{p.lower()}_max_gain_eps": float(gain.idxmax())})
    out["mcm_split_eps12_vs_paper"] = out["mcm_split_eps12"] - 0.2
    out["mcm_part_eps12_vs_paper"] = out["mcm_part_eps12"] - 0.8
    out["pem_eps12"] = _f1_at(s8a, PEM_OPTIMISED, 1.2)
    lo, hi = min(etas), max(etas)
    out.update({"eta_lo": lo, "eta_hi": hi})
    for tag, eta, paper in (("lo", lo, 0.4), ("hi", hi, 0.8)):
        row = _at(s8b, 0.9, protocol=f"eta = {eta}")
        out.update({f"pem_eta_{tag}_eps09": float(row["f1_mean"]), f"pem_eta_{tag}_eps09_std": float(row["f1_std"]),
                    f"pem_eta_{tag}_eps09_vs_paper": float(row["f1_mean"]) - paper})
    out["pem_opt_eps09"] = _f1_at(s8a, PEM_OPTIMISED, 0.9)
    f1_b = s8b.pivot(index="epsilon", columns="protocol", values="f1_mean")[[f"eta = {e}" for e in etas]]
    mono = (f1_b.diff(axis=1).iloc[:, 1:] >= 0).all(axis=1)
    out.update({"eta_n_monotone": int(mono.sum()), "eta_n_eps": len(mono)})
    spread = s8c.groupby("epsilon")["f1_mean"].agg(lambda x: x.max() - x.min())
    out.update({"dist_max_spread": float(spread.max()), "dist_max_spread_eps": float(spread.idxmax())})
    return out


def claims_table(fig7: Mapping, fig8: Mapping) -> pd.DataFrame:
    """The paper's quantitative statements on Figures 7 and 8 beside ours (from the two findings mappings)."""
    rows = [
        ("6.2.4", "MCM, budget split, F1 at eps = 1.2", "< 0.2", 0.2, fig8["mcm_split_eps12"]),
        ("6.2.4", "MCM, partitioned users, F1 at eps = 1.2", "nearly 0.8", 0.8, fig8["mcm_part_eps12"]),
        ("6.2.4", "SPM, budget split, F1 at eps = 1.2", "(trend similar)", np.nan, fig8["spm_split_eps12"]),
        ("6.2.4", "SPM, partitioned users, F1 at eps = 1.2", "(trend similar)", np.nan, fig8["spm_part_eps12"]),
        ("6.2.5", f"PEM, eta = {fig8['eta_lo']}, F1 at eps = 0.9", "0.4", 0.4, fig8["pem_eta_lo_eps09"]),
        ("6.2.5", f"PEM, eta = {fig8['eta_hi']}, F1 at eps = 0.9", "0.8", 0.8, fig8["pem_eta_hi_eps09"]),
        ("6.2.3", "PEM minus best other (threshold 0.023), F1 at eps = 2", "advantage largest here", np.nan,
         fig7["f7_gap_eps2"]),
        ("6.2.3", "eps with the largest PEM advantage (threshold 0.023)", "2", 2.0, fig7["f7_max_gap_eps"]),
        ("6.2.7", "largest F1 spread between assumptions, any eps", "very similar", np.nan, fig8["dist_max_spread"]),
    ]
    claims = pd.DataFrame(rows, columns=["section", "quantity", "paper says", "paper value", "ours"])
    claims["ours - paper"] = claims["ours"] - claims["paper value"]
    return claims


def table_view(frame: pd.DataFrame, *, digits: int = 3):
    """A result table as the page shows it: :func:`~ldp.plotting.tables.compact_table`, index levels as columns.

    Named index levels become columns (no empty header rows) and the index is
    hidden; numbers as :func:`ldp.plotting.tables.format_number` prints them.

    Returns
    -------
    pandas.io.formats.style.Styler
    """
    flat = frame.reset_index() if any(name is not None for name in frame.index.names) else frame
    return compact_table(flat.rename_axis(columns=None), digits=digits)


def assumption_configurations(s8c: pd.DataFrame) -> pd.DataFrame:
    """Figure 8(c)'s configurations: per assumption, each configuration the optimiser chose and at which budgets."""
    return (s8c.groupby(["assumption", "configuration"], sort=False)["epsilon"]
            .agg(lambda e: ", ".join(f"{x:g}" for x in e)).rename("at budgets ε").reset_index())


def without_missing(values: Mapping) -> dict:
    """``values`` without its NaN entries, for :func:`ldp.book.glue_all` (which refuses NaN).

    A quoted number is NaN when the run's grid lacks the point the prose
    quotes (a rerun with other budgets) or a point has a single run (no SD).
    Such a number is not glued: the book's defaults always hold the quoted
    points, and a rerun's page leaves the reference unfilled rather than
    print ``nan``.
    """
    return {k: v for k, v in values.items() if not (isinstance(v, float) and v != v)}
