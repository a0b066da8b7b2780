"""Chapter 03 (PEM and its analysis): its figures and the tables it shows.

Figures, each ``(fig, data)`` with ``data`` exactly the rows the figure plots
(the CSV :func:`ldp.plotting.save_figure` writes next to it):

* :func:`readings_figure` -- one round's identification probability under the
  readings of eq. (5) against the Monte-Carlo of its model
  (``fig-pem-readings``; input :func:`ldp.analysis.montecarlo.readings_monte_carlo`);
* :func:`optimizer_figure` -- predicted utility against eta, with the
  optimizer's choice (``fig-pem-optimizer``; input :func:`optimizer_frame`);
* :func:`prop1_figure` -- Proposition 1 and Lemma 1 on a grid
  (``fig-pem-prop1``; input :func:`ldp.analysis.prop1_grid`).

Tables the chapter shows: :func:`rounds_table`, :func:`config_table`,
:func:`readings_table`, with :func:`compact` to display them; named facts of a
configuration: :func:`config_facts`.
"""
from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import SymLogNorm

from .. import values as V
from ..analysis import appendix, candidate_configs, evaluate_configs
from ..analysis.config import PEMConfig, default_gamma
from .style import FULL_WIDTH, bar_bounds, legend_outside, series_colors
from .tables import TABLE_CSS

__all__ = ["compact", "rounds_table", "config_facts", "config_table", "readings_table", "readings_figure",
           "optimizer_frame", "optimizer_figure", "prop1_figure"]

_LINESTYLES = ("-", "--", ":", "-.")


# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------
def compact(frame: pd.DataFrame, formats: Mapping[str, str] | None = None, *, precision: int = 4):
    """``frame`` as a compact table for the page: no index, tight cells, ``precision`` decimals for floats.

    ``formats`` maps columns to format strings (e.g. ``{"n[i]": "{:,d}"}``).
    Returns a pandas Styler.
    """
    styler = frame.style.set_table_styles(TABLE_CSS)
    return styler.hide(axis="index").format(precision=precision).format(dict(formats or {}))


def rounds_table(result, heavy, m: int) -> pd.DataFrame:
    """One row per round of a PEM run: users, prefix bits, ``|D_i|``, the kept prefixes (as bits, best
    first) and how many of the true heavy values' prefixes they hold.

    Parameters
    ----------
    result : ldp.core.HeavyHitterResult
        A PEM run (its ``rounds``).
    heavy : array_like of int
        The true heavy values (``m``-bit).
    m : int
        Value length in bits.
    """
    heavy = np.asarray(heavy, dtype=np.uint64)
    rows = []
    for i, r in enumerate(result.rounds):
        true_prefixes = V.prefix(heavy, m, r.stop)
        rows.append({"round i": i + 1, "users n[i]": r.n_users, "prefix bits": r.stop,
                     "|D_i| tested": r.n_candidates,
                     "C_i (kept, best first)": ", ".join(format(int(x), f"0{r.stop}b") for x in r.kept),
                     f"true top-{len(heavy)} prefixes in C_i": int(np.isin(true_prefixes, r.kept).sum())})
    return pd.DataFrame(rows)


def config_facts(config: PEMConfig) -> dict:
    """A configuration's numbers as the chapter quotes them.

    ``etas`` (as text), ``g``, ``queries`` (``g * max_i |D_i|``, section 4.3's
    ``2^(gamma+eta) g``), ``eta`` (the first round's), ``last`` (the last
    round's), ``bits`` (``m - gamma``) and ``Dlast`` (``|D_g|``).
    """
    return {"etas": str(config.etas), "g": config.g, "queries": config.g * max(config.domain_sizes),
            "eta": config.etas[0], "last": config.etas[-1], "bits": config.m - config.gamma,
            "Dlast": config.domain_sizes[-1]}


def config_table(rule: Mapping[int, PEMConfig], opt: Mapping[tuple, PEMConfig], n: int) -> pd.DataFrame:
    """The rule's configuration (section 4.3) and the optimizer's, per ``k`` and ``epsilon``.

    ``rule`` maps ``k`` to :func:`ldp.analysis.pem_default_config`'s result,
    ``opt`` maps ``(k, epsilon)`` to :func:`ldp.analysis.optimize_pem`'s.
    """
    rows = []
    for k, c_rule in rule.items():
        entries = [("rule of section 4.3", c_rule)]
        entries += [(f"optimize_pem, ε = {eps:g}", c) for (k_, eps), c in opt.items() if k_ == k]
        for how, c in entries:
            rows.append({"k": k, "chosen by": how, "γ": c.gamma, "η_i": str(c.etas), "g": c.g,
                         "prefix lengths": str(c.prefix_lengths), "|D_i|": str(c.domain_sizes),
                         "Σ |D_i|": c.queries, "g · max |D_i|": c.g * max(c.domain_sizes),
                         "n[i]": c.group_sizes(n)[0]})
    return pd.DataFrame(rows)


def readings_table(rule: Mapping[int, PEMConfig], epsilons, n) -> pd.DataFrame:
    """Predicted F1 of the rule's configurations under the four readings of eq. (5).

    Columns ``k``, ``ε``, then ``SLOTS / COMPETITORS`` for ``slots`` in
    ``text, formula`` and ``competitors`` in ``paper, lower``, and the cap
    ``1 - 1/k`` of the printed formula.
    """
    rows = []
    for k, c in rule.items():
        for eps in epsilons:
            row = {"k": k, "ε": eps}
            for slots in ("text", "formula"):
                for comp in ("paper", "lower"):
                    row[f"{slots} / {comp}"] = float(evaluate_configs([c], eps, n=n, slots=slots,
                                                                      competitors=comp).f1.iloc[0])
            row["cap 1 - 1/k"] = 1 - 1 / k
            rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# fig-pem-readings
# ---------------------------------------------------------------------------
def readings_figure(frame: pd.DataFrame):
    """One panel per round size: ``P_i(j)`` under each reading (lines) and the Monte-Carlo (dots, ± 2 SE).

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`ldp.analysis.montecarlo.readings_monte_carlo`'s frame.

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel`` (a, b, ... in the order of the
        settings), the frame's columns with ``se`` replaced by
        ``monte_carlo_errorbar`` (``2 se``; the bars are cut at 0 and 1).
    """
    names = [c for c in frame.columns if c.startswith("analysis ")]
    etas = list(dict.fromkeys(frame.eta))
    panel = dict(zip(etas, "abcdefgh"))
    data = frame.assign(panel=frame.eta.map(panel), monte_carlo_errorbar=2 * frame.se)[
        ["panel", "eta", "g", "domain_size", "runs", "rank", "monte_carlo", "monte_carlo_errorbar", *names]]
    colors = series_colors(len(names))
    fig, axes = plt.subplots(1, len(etas), figsize=(FULL_WIDTH, 2.7), layout="constrained", sharey=True,
                             squeeze=False)
    for ax, eta in zip(axes[0], etas):
        d = data[data.eta == eta]
        for name, color, ls in zip(names, colors, _LINESTYLES):
            ax.plot(d["rank"], d[name], color=color, ls=ls, lw=1.6, label=name[len("analysis "):])
        ax.errorbar(d["rank"], d.monte_carlo, yerr=bar_bounds(d.monte_carlo, d.monte_carlo_errorbar, (0, 1)),
                    fmt="ko", ms=3, label="Monte-Carlo of the model (± 2 SE)")
        g, D = int(d.g.iloc[0]), int(d.domain_size.iloc[0])
        kmax = int(d["rank"].max())
        ax.set(title=f"({panel[eta]}) η = {eta}: |D_i| = {D:,}, n/{g}", xlabel="rank j",
               xticks=[1, *range(4, kmax + 1, 4)] if kmax >= 8 else range(1, kmax + 1))
    axes[0, 0].set_ylabel("P_i(j) in one round")
    legend_outside(fig, ncol=2)
    return fig, data


# ---------------------------------------------------------------------------
# fig-pem-optimizer
# ---------------------------------------------------------------------------
def optimizer_frame(opt: Mapping[tuple, PEMConfig], rule: Mapping[int, PEMConfig], *, m: int, n,
                    eta_max: int = 20) -> pd.DataFrame:
    """Predicted F1 and NCR against eta (leftover and balanced layouts) and the optimizer's choices.

    Eq. (4) with eq. (5) (slots ``"text"``, competitors ``"lower"``, as
    :func:`ldp.analysis.optimize_pem`) for every configuration of
    :func:`ldp.analysis.candidate_configs` with ``eta <= eta_max``, whatever
    the query limit; ``over_query_limit`` marks ``eta`` above the rule's.

    Parameters
    ----------
    opt : mapping
        ``(k, epsilon) -> optimize_pem(epsilon, k, m, ...)``.
    rule : mapping
        ``k -> pem_default_config(k, m, ...)`` (its ``eta`` is the largest within the limit).
    m : int
        Value length in bits.
    n : float
        Number of users.
    eta_max : int
        Largest ``eta`` shown.

    Returns
    -------
    pandas.DataFrame
        ``panel, k, metric, epsilon, layout, eta, etas, predicted,
        over_query_limit``: panels (a) F1 and (c) NCR of the first ``k``, (b)
        and (d) of the second.
    """
    ks = list(rule)
    epsilons = list(dict.fromkeys(eps for _, eps in opt))
    out = []
    for col, k in enumerate(ks):
        eta_feasible = rule[k].etas[0]                      # largest eta within the limit (the rule)
        left = [c for c in candidate_configs(k, m, query_limit=2**40, eta_layout="leftover") if c.etas[0] <= eta_max]
        bal = [c for c in candidate_configs(k, m, query_limit=2**40, eta_layout="balanced") if max(c.etas) <= eta_max]
        for eps in epsilons:
            lft = evaluate_configs(left, eps, n=n, competitors="lower")
            lft = lft.assign(eta=lft.etas.map(lambda e: e[0]))
            bl = evaluate_configs(bal, eps, n=n, competitors="lower")
            bl = bl.assign(eta=bl.etas.map(max))
            c_opt = opt[k, eps]
            for row, metric in enumerate(("f1", "ncr")):
                y_opt = c_opt.predicted_f1 if metric == "f1" else c_opt.predicted_ncr
                points = pd.concat([lft[["eta", "etas", metric]].assign(layout="leftover"),
                                    bl[["eta", "etas", metric]].assign(layout="balanced"),
                                    pd.DataFrame({"eta": [max(c_opt.etas)], "etas": [c_opt.etas], metric: [y_opt],
                                                  "layout": ["optimize_pem's choice"]})])
                out.append(points.rename(columns={metric: "predicted"}).assign(
                    panel="abcd"[2 * row + col], k=k, metric=metric, epsilon=eps,
                    etas=points["etas"].map(str).to_numpy(),
                    over_query_limit=(points["eta"] > eta_feasible).to_numpy()))
    return pd.concat(out, ignore_index=True)[
        ["panel", "k", "metric", "epsilon", "layout", "eta", "etas", "predicted", "over_query_limit"]]


def optimizer_figure(frame: pd.DataFrame, *, m: int):
    """Predicted utility against eta, one panel per (metric, k), ε as a series; the optimizer's choice starred.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`optimizer_frame`'s frame.
    m : int, keyword-only
        Value length in bits (for gamma = ceil(log2 k) in the titles).

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and ``frame`` (every row is plotted).
    """
    epsilons = sorted(frame.epsilon.unique())
    colors = dict(zip(epsilons, series_colors(len(epsilons))))
    fig, axes = plt.subplots(2, 2, figsize=(FULL_WIDTH, 5.2), layout="constrained", sharex=True)
    eta_max = int(frame.eta.max())
    for ax, lab in zip(axes.ravel(), "abcd"):
        d = frame[frame.panel == lab]
        k, metric = int(d.k.iloc[0]), d.metric.iloc[0]
        feasible = int(d.eta[~d.over_query_limit].max())
        ax.axvspan(feasible + 0.5, eta_max + 0.5, color="0.88", zorder=0, lw=0)
        for eps in epsilons:
            e = d[d.epsilon == eps]
            lft = e[e.layout == "leftover"].sort_values("eta")
            bal = e[e.layout == "balanced"].sort_values("eta")
            star = e[e.layout == "optimize_pem's choice"]
            ax.plot(lft.eta, lft.predicted, "-", marker=".", color=colors[eps], label=f"ε = {eps:g}")
            ax.plot(bal.eta, bal.predicted, "o", mfc="none", color=colors[eps], ms=5)
            ax.plot(star.eta, star.predicted, "*", color=colors[eps], ms=12, mec="k", zorder=5)
        ax.set(xlim=(0.5, eta_max + 0.5), ylim=(0, 1.02), xticks=range(2, eta_max + 1, 4))
        ax.set_title(f"({lab}) {metric.upper()}, k = {k} (γ = {default_gamma(k, m)})")
        if lab in "cd":
            ax.set_xlabel("η (bits per round)")
        if lab in "ac":
            ax.set_ylabel(f"predicted {metric.upper()}")
    axes[0, 0].plot([], [], "o", mfc="none", color="k", label="balanced layout")
    axes[0, 0].plot([], [], "*", color="w", mec="k", ms=11, label="optimize_pem's choice")
    legend_outside(fig, ncol=5)
    return fig, frame


# ---------------------------------------------------------------------------
# fig-pem-prop1
# ---------------------------------------------------------------------------
def prop1_figure(grid: pd.DataFrame, *, lemma_epsilons=None):
    """Proposition 1 (``P1 - P2`` over budget and frequency, one panel per ``g``) and Lemma 1 (last panel).

    Parameters
    ----------
    grid : pandas.DataFrame
        :func:`ldp.analysis.prop1_grid`'s frame (three values of ``g``).
    lemma_epsilons : array_like, optional
        Budgets of the Lemma 1 curves; default 300 points from 0.01 to 8.

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, series, g, epsilon, f, value``:
        the grid cells of (a)-(c) (``P1 - P2``), the curve vertices of (d)
        (``E(eps/g) / (E(eps)/g)``) and its horizontal lines.
    """
    e_line = np.linspace(0.01, 8, 300) if lemma_epsilons is None else np.asarray(lemma_epsilons, dtype=float)
    gs = [int(g) for g in np.unique(grid.g)]
    eps_grid, f_grid = np.unique(grid.epsilon), np.unique(grid.f)
    fig = plt.figure(figsize=(FULL_WIDTH, 5.4), layout="constrained")
    top, bottom = np.asarray(fig.subfigures(2, 1), dtype=object).ravel()
    heat = np.ravel(top.subplots(1, len(gs), sharey=True))
    vmax = float(np.abs(grid.P1 - grid.P2).max())
    norm_ = SymLogNorm(linthresh=1e-2, vmin=-vmax, vmax=vmax)
    parts = []
    for ax, g, lab in zip(heat, gs, "abc"):
        sub = grid[grid.g == g]
        Z = (sub.P1 - sub.P2).to_numpy().reshape(len(eps_grid), len(f_grid))
        parts.append(pd.DataFrame({"panel": lab, "series": "P1 - P2", "g": g, "epsilon": sub.epsilon.to_numpy(),
                                   "f": sub.f.to_numpy(), "value": Z.ravel()}))
        mesh = ax.pcolormesh(f_grid, eps_grid, Z, cmap="RdBu", norm=norm_, shading="nearest", rasterized=True)
        ax.set(xscale="log", xlabel="frequency f_j", title=f"({lab}) P1 − P2, g = {g}")
    heat[0].set_ylabel("total budget ε")
    top.colorbar(mesh, ax=heat, label="P1 − P2 (> 0: partitioning wins)")
    ax = bottom.subplots(1, 1)
    for g, color, ls in zip(gs, series_colors(len(gs)), _LINESTYLES):
        ratio = appendix.lemma1_E(e_line / g) / (appendix.lemma1_E(e_line) / g)
        ax.plot(e_line, ratio, color=color, ls=ls, label=f"g = {g}")
        ax.axhline(1 / g, color=color, ls=":", lw=1)
        parts += [pd.DataFrame({"panel": "d", "series": "E(eps/g) / (E(eps)/g)", "g": g, "epsilon": e_line,
                                "value": ratio}),
                  pd.DataFrame({"panel": ["d"], "series": "horizontal line 1/g", "g": g, "value": 1 / g})]
    ax.axhline(1, color="k", lw=1, ls="--")
    parts.append(pd.DataFrame({"panel": ["d"], "series": "horizontal line 1", "value": 1.0}))
    ax.set(xlabel="ε", ylabel="E(ε/g) / (E(ε)/g)", ylim=(0, 1.05), title="(d) Lemma 1: ratio < 1")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    data = pd.concat(parts, ignore_index=True)[["panel", "series", "g", "epsilon", "f", "value"]]
    return fig, data.astype({"g": "Int64"})
