"""Chapter 08, "After PEM": PEM, SPM, MCM, TreeHist and SFP on the grids of paper Figures 5 and 6.

The chapter runs the two grids with :mod:`ldp.experiments`; this module
draws the two three-panel figures (:func:`after_pem_figure`), measures the
deployer's table with the protocol engine (:func:`deployer_table`), tells
where PEM leads and where it trails (:func:`pem_standing`,
:func:`pem_verdict`), collects the numbers the prose quotes
(:func:`after_pem_findings`) and shapes the tables the claims read
(:func:`f1_summary_table`; saved as ``08_after_pem/<name>``).
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..oracles import CMS, HR, OLH
from .style import FULL_WIDTH, METHOD_STYLE, errorbar_lines, legend_outside

__all__ = ["after_pem_protocols", "after_pem_figure", "report_bits", "bits_per_user", "deployer_table",
           "f1_summary_table", "pem_standing", "pem_verdict", "after_pem_findings", "AFTER_PEM_PANELS"]

#: panel letter and title of each data set, as in paper Figures 5 and 6
AFTER_PEM_PANELS = {"URL": ("a", "URL (stand-in)"), "AOL": ("b", "AOL"), "Synthetic": ("c", "Synthetic")}
#: the one-bit TreeHist keeps TreeHist's style; the 8-bit variant is dashed with open markers
_STYLES = {"TreeHist (8 bits)": dict(METHOD_STYLE["TreeHist"], linestyle="--", mfc="white")}
_TIE = 1e-12  # mean F1 values closer than this count as equal


def after_pem_protocols(query_limit: int) -> list[tuple[str, dict, str]]:
    """The chapter's protocols as :class:`ldp.experiments.Grid` specs ``(name, kwargs, label)``.

    PEM, MCM and SPM exactly as chapter 06 (same specs: their runs come from
    the grid cache), then TreeHist (one bit per level), TreeHist with 8 bits
    per level and SFP, all under the same query limit.
    """
    q = {"query_limit": query_limit}
    return [*((name, dict(q), name) for name in ("PEM", "MCM", "SPM")), ("TreeHist", dict(q), "TreeHist"),
            ("TreeHist", {**q, "bits_per_level": 8}, "TreeHist (8 bits)"), ("SFP", dict(q), "SFP")]


def after_pem_figure(summary: pd.DataFrame, *, x: str, xlabel: str, methods: Sequence[str],
                     missing: Mapping[str, str] | None = None) -> tuple[plt.Figure, pd.DataFrame]:
    """F1 of every protocol against ``x``, one panel per data set: the paper's panels (a)-(c).

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`~ldp.experiments.summarize` by ``dataset, protocol, x`` (metric ``f1``).
    x, xlabel : str
        The grid's column (``"epsilon"`` or ``"k"``) and its axis label.
    methods : sequence of str
        The protocol labels in legend order.
    missing : mapping, optional
        Data set -> the reason it has no results (its panel says so instead of plotting).

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, dataset, metric, protocol, <x>, mean, std, runs``.
    """
    fig, axes = plt.subplots(1, 3, figsize=(FULL_WIDTH, 2.9), layout="constrained", sharey=True)
    order = {m: i for i, m in enumerate(methods)}
    data = []
    for ax, (ds, (letter, title)) in zip(axes, AFTER_PEM_PANELS.items()):
        ax.set(title=f"({letter}) {title}", xlabel=xlabel, ylim=(-0.03, 1.03))
        sub = summary[summary["dataset"] == ds]
        if sub.empty:
            reason = (missing or {}).get(ds, "no results")
            ax.text(0.5, 0.5, f"No {ds} results:\n{reason}\n(see data/README.md)", ha="center", va="center",
                    transform=ax.transAxes, wrap=True)
            continue
        sub = sub.iloc[np.argsort(sub["protocol"].map(order).to_numpy(), kind="stable")]
        pts = errorbar_lines(ax, sub, x=x, y="f1_mean", err="f1_std", hue="protocol", styles=_STYLES,
                             bounds=(0.0, 1.0))
        data.append(pd.DataFrame({"panel": letter, "dataset": ds, "metric": "f1",
                                  "protocol": pts["protocol"].astype(str), x: pts[x], "mean": pts["f1_mean"],
                                  "std": pts["f1_std"], "runs": pts["f1_count"]}))
    axes[0].set_ylabel("F1")
    legend_outside(fig)
    return fig, pd.concat(data, ignore_index=True)


def report_bits(oracle) -> int:
    """Bits of one report of ``oracle``: HR and CMS say so; OLH sends its 64-bit seed and ``y`` in ``[d']``."""
    if isinstance(oracle, (HR, CMS)):
        return int(oracle.bits_per_report)
    if isinstance(oracle, OLH):
        return 64 + int(oracle.d_prime - 1).bit_length()
    raise TypeError(f"report_bits: no report size known for {type(oracle).__name__}")


def bits_per_user(plan) -> float:
    """Mean bits a user sends under ``plan``: one report per question of her group, averaged over the groups."""
    return sum(f * sum(report_bits(q.oracle()) for q in qs) for f, qs in zip(plan.fractions, plan.questions))


def deployer_table(protocols, data, *, epsilon: float, k: int, counts_ms: Mapping[str, float],
                   warmup=None) -> pd.DataFrame:
    """What each protocol costs, measured with the protocol engine (every report made and aggregated).

    Parameters
    ----------
    protocols : list of (name, kwargs, label)
        :func:`after_pem_protocols`.
    data : ldp.datasets.Dataset
        The users (``data.m`` bits per value).
    epsilon, k : float, int
        The protocols' budget and number of heavy hitters.
    counts_ms : mapping
        Label -> mean wall time (ms) of one count-level run in the chapter's grid (a column of the table).
    warmup : ldp.datasets.Dataset, optional
        A small data set run once through each protocol before it is timed, so that the times leave
        out numba's compilation.

    Returns
    -------
    pandas.DataFrame
        One row per protocol (index ``protocol``): ``groups``, ``bits per user``, ``oracle queries``,
        ``server s`` (aggregation), ``all clients s`` (every user's reports), ``reports MB``, ``counts-engine ms``.
    """
    import ldp  # the protocols by name (this layer sits above ldp.protocols)

    rows = []
    for name, kw, label in protocols:
        P = getattr(ldp, name)(epsilon, k, data.m, **kw)
        if warmup is not None:
            P.aggregate(P.privatize(warmup, plan=P.plan(warmup.n, rng=1), rng=2), rng=3)
        plan = P.plan(data.n, rng=1)  # what the server publishes first
        t0 = time.perf_counter()
        reports = P.privatize(data, plan=plan, rng=2)
        t_client = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = P.aggregate(reports, rng=3)
        rows.append({"protocol": label, "groups": len(res.group_sizes), "bits per user": bits_per_user(plan),
                     "oracle queries": res.queries, "server s": time.perf_counter() - t0, "all clients s": t_client,
                     "reports MB": reports.nbytes / 2**20, "counts-engine ms": counts_ms.get(label, np.nan)})
    return pd.DataFrame(rows).set_index("protocol")


def f1_summary_table(sum_eps: pd.DataFrame, sum_k: pd.DataFrame) -> pd.DataFrame:
    """The two grids' summaries in one tidy table (the claims' ``08_after_pem/f1-summary``).

    Columns ``grid, dataset, protocol, epsilon, k, f1_mean, f1_std, f1_sem, ncr_mean, ncr_std, runs``;
    ``grid`` is ``"epsilon"`` (vary ε at fixed k) or ``"k"`` (vary k at fixed ε).
    """
    parts = [s.assign(grid=g) for s, g in ((sum_eps, "epsilon"), (sum_k, "k"))]
    out = pd.concat(parts, ignore_index=True).rename(columns={"f1_count": "runs"})
    return out[["grid", "dataset", "protocol", "epsilon", "k", "f1_mean", "f1_std", "f1_sem", "ncr_mean", "ncr_std",
                "runs"]]


def pem_standing(table: pd.DataFrame) -> pd.DataFrame:
    """Per grid point: PEM's mean F1 against the best other protocol's.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`f1_summary_table`.

    Returns
    -------
    pandas.DataFrame
        ``grid, dataset, epsilon, k, pem_f1, best_other, best_other_f1, margin, margin_se, outcome``:
        ``margin`` is PEM's F1 minus the best other's, ``margin_se`` the standard error of that
        difference, ``outcome`` ``"leads"``, ``"ties"`` or ``"trails"``.
    """
    rows = []
    for (grid, ds, eps, k), pt in table.groupby(["grid", "dataset", "epsilon", "k"], sort=False):
        pem = pt[pt["protocol"] == "PEM"].iloc[0]
        others = pt[pt["protocol"] != "PEM"]
        best = others.loc[others["f1_mean"].idxmax()]
        margin = float(pem["f1_mean"] - best["f1_mean"])
        rows.append({"grid": grid, "dataset": ds, "epsilon": eps, "k": k, "pem_f1": float(pem["f1_mean"]),
                     "best_other": best["protocol"], "best_other_f1": float(best["f1_mean"]), "margin": margin,
                     "margin_se": float(np.hypot(pem["f1_sem"], best["f1_sem"])),
                     "outcome": "ties" if abs(margin) <= _TIE else ("leads" if margin > 0 else "trails")})
    return pd.DataFrame(rows)


def _where(row) -> str:
    return f"{row['dataset']} at " + (f"ε = {row['epsilon']:g}" if row["grid"] == "epsilon" else f"k = {row['k']:d}")


def _se_text(row) -> str:
    if not row["margin_se"] > 0:  # no spread over the runs (or a single run): no standard error to quote
        return ""
    return f", {abs(row['margin']) / row['margin_se']:.1f} standard errors of the difference"


def pem_verdict(standing: pd.DataFrame, deploy: pd.DataFrame, *, k_fixed: int, eps_fixed: float) -> str:
    """Where PEM still wins and where it does not, as a Markdown list built from the measured numbers."""
    lines = []
    for grid, what in (("epsilon", f"ε grid (k = {k_fixed})"), ("k", f"k grid (ε = {eps_fixed:g})")):
        s = standing[standing["grid"] == grid]
        n = s["outcome"].value_counts()
        text = (f"- **On the {what}** PEM has the highest mean F1 at {n.get('leads', 0)} of the {len(s)} "
                f"(data set, {'ε' if grid == 'epsilon' else 'k'}) points and ties for the highest at "
                f"{n.get('ties', 0)}")
        if n.get("leads", 0):
            top = s.loc[s["margin"].idxmax()]
            text += (f"; its largest lead is {top['margin']:.2f} in F1 ({_where(top)}: {top['pem_f1']:.2f} against "
                     f"{top['best_other_f1']:.2f} for {top['best_other']})")
            lead = s[s["outcome"] == "leads"]
            close = int((lead["margin"] < 2 * lead["margin_se"]).sum())
            if close:
                text += (f", but {close} of its {len(lead)} leads {'is' if close == 1 else 'are'} smaller than two "
                         "standard errors of the difference")
        behind = s[s["outcome"] == "trails"].sort_values("margin")
        if behind.empty:
            text += ". No protocol beats it there."
        else:
            text += ". It trails on " + "; on ".join(
                f"{_where(r)} ({r['best_other']} {r['best_other_f1']:.2f} against PEM's {r['pem_f1']:.2f}: "
                f"{-r['margin']:.2f} behind{_se_text(r)})" for _, r in behind.iterrows()) + "."
        lines.append(text)
    bits, server = deploy["bits per user"], deploy["server s"]
    lines.append(f"- **Cost.** A PEM user sends {bits['PEM']:.0f} bits, "
                 + ("the fewest of all protocols" if bits["PEM"] <= bits.min() else
                    f"against {bits.min():.0f} for {bits.idxmin()}")
                 + f" (SFP: {bits['SFP']:.0f}, TreeHist: {bits['TreeHist']:.0f}). The server aggregates PEM's "
                 f"reports in {server['PEM']:.2f} s, "
                 + ("the fastest" if server["PEM"] <= server.min() else
                    f"{server['PEM'] / server.min():.1f} times as long as {server.idxmin()} ({server.min():.2f} s)")
                 + f", and SFP's in {server['SFP']:.2f} s.")
    return "\n".join(lines)


def after_pem_findings(table: pd.DataFrame, standing: pd.DataFrame, deploy: pd.DataFrame, *,
                       eps_fixed: float, no_aol: str = "", datasets: Sequence[str] = ("URL", "Synthetic")) -> dict:
    """The numbers chapter 08 quotes (glue names without the ``after_`` prefix).

    ``no_aol`` is the reason AOL was left out (empty if it ran); ``aol_text`` is
    the sentence on AOL at ``eps_fixed`` or the one that says why it is missing.
    """
    def slug(label: str) -> str:
        return label.lower().replace(" (8 bits)", "8").replace(" ", "")

    out: dict = {}
    eps = table[(table["grid"] == "epsilon") & np.isclose(table["epsilon"], eps_fixed)]
    for ds in datasets:
        for _, r in eps[eps["dataset"] == ds].iterrows():
            out[f"{ds.lower()}_{slug(r['protocol'])}_f1_eps2"] = float(r["f1_mean"])
    aol = dict(eps.loc[eps["dataset"] == "AOL", ["protocol", "f1_mean"]].to_numpy())
    out["aol_text"] = (f"On AOL at ε = {eps_fixed:g}, PEM reaches F1 = {aol['PEM']:.3f}, "
                       f"TreeHist {aol['TreeHist']:.3f} (8 bits: {aol['TreeHist (8 bits)']:.3f}) "
                       f"and SFP {aol['SFP']:.3f}." if not no_aol else
                       f"No AOL results: the AOL data file {no_aol} in this build, so panel (b) of both figures is "
                       "empty (the project's data/README.md says how to restore the file).")
    for grid in ("epsilon", "k"):
        s = standing[standing["grid"] == grid]
        tag = "eps" if grid == "epsilon" else "k"
        out[f"{tag}_pem_best"] = int((s["outcome"] != "trails").sum())
        out[f"{tag}_points"] = len(s)
    wide = table[table["grid"] == "epsilon"].pivot_table(index=["dataset", "epsilon"], columns="protocol",
                                                         values="f1_mean")
    out["th8_better"] = int((wide["TreeHist (8 bits)"] > wide["TreeHist"] + _TIE).sum())
    out["th_points"] = len(wide)
    for label, r in deploy.iterrows():
        out[f"bits_{slug(str(label))}"] = float(r["bits per user"])
        out[f"server_{slug(str(label))}"] = float(r["server s"])
    out["counts_ms_max"] = float(deploy["counts-engine ms"].max())
    return out
