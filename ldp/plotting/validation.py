"""Paper Figures 2, 3 and 4 (section 5, chapter 05): the analysis of section 4.2 against simulation.

Each figure function takes the tidy table its chapter computed
(:func:`ldp.experiments.summary.identification_table`,
:func:`ldp.experiments.summary.utility_table`) and returns ``(fig, data)``: the
figure, drawn at the book's full width, and exactly the rows it plots (its CSV).
The ``*_findings`` functions turn the same tables into the numbers and sentences
the chapter quotes, keyed by their glue names.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..experiments.summary import dist_name, level_label, run_config
from .style import FULL_WIDTH, bar_bounds, series_colors, use_style

__all__ = ["identification_figure", "utility_figure", "lower_panels", "identification_findings", "utility_gaps",
           "configuration_findings", "optimal_findings", "DIST_STYLE"]

#: the two section 5 distributions: greys (data sets never take a method's colour)
DIST_STYLE = {"zipf": "#000000", "zipf(-20)": "#8a8a8a"}
#: metric: marker, line style of the analysis, label
_METRIC = {"f1": ("o", "-", "F1"), "ncr": ("s", "--", "NCR")}


def _count(v: float) -> str:
    """A number of users as a short tick label: 20k, 100k, 1M, 3M."""
    return f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k" if v >= 1e3 else f"{v:g}"


def _plain_log_ticks(axis, fmt=lambda v: f"{v:g}") -> None:
    """Plain tick labels on a log axis (no 10^x: a superscript would be smaller than 9 pt)."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
    axis.set_minor_formatter(NullFormatter())


def _panels(n: int = 3, height: float = 2.9):
    import matplotlib.pyplot as plt

    use_style()
    return plt.subplots(1, n, figsize=(FULL_WIDTH, height), layout="constrained", sharey=True)


def identification_figure(ident: pd.DataFrame) -> tuple[object, pd.DataFrame]:
    """Figure 2: identification rate (dots, ± 2 binomial SE cut at 0 and 1) and eq. (5) (lines) against f_j.

    Parameters
    ----------
    ident : pandas.DataFrame
        :func:`ldp.experiments.summary.identification_table`'s rows (panels ``a, b, c``).

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, axis, level, rank, frequency, simulated_rate,
        errorbar_2se, runs, analysis``.
    """
    fig, axes = _panels(height=3.3)
    titles = {"a": "(a) different $n$", "b": "(b) different $m$", "c": r"(c) different $\varepsilon$"}
    data = []
    for ax, (panel, grp) in zip(axes, ident.groupby("panel", sort=True)):
        axis = grp["axis"].iloc[0]
        levels = list(dict.fromkeys(grp["level"]))
        for color, level in zip(series_colors(len(levels)), levels):
            g = grp[grp["level"] == level]
            err = 2 * np.sqrt(g["sim"] * (1 - g["sim"]) / g["runs"])
            label = f"n = {_count(level)}" if axis == "n" else level_label(axis, level)
            ax.errorbar(g["frequency"], g["sim"], yerr=bar_bounds(g["sim"], err, (0, 1)), fmt="o", ms=3.5,
                        color=color, elinewidth=0.8, label=label)
            ax.plot(g["frequency"], g["analysis"], "-", lw=1, color=color)
            data.append(g.assign(errorbar=err)[["panel", "axis", "level", "rank", "frequency", "sim", "errorbar",
                                                "runs", "analysis"]])
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("frequency of the value")
        ax.set_title(titles[panel])
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, columnspacing=0.8, handletextpad=0.3,
                  frameon=False)
    axes[0].set_ylabel("identification probability")
    axes[0].set_ylim(-0.03, 1.03)
    return fig, pd.concat(data, ignore_index=True).rename(columns={"sim": "simulated_rate",
                                                                   "errorbar": "errorbar_2se"})


def lower_panels(util: pd.DataFrame, tol: float = 0.01) -> list[str]:
    """Panels where the ``"lower"`` reading differs from the default analysis by more than ``tol``."""
    return [p for p, g in util.groupby("panel", sort=True) if (g["analysis"] - g["lower"]).abs().max() > tol]


def utility_figure(util: pd.DataFrame, titles: Mapping[str, str], xlabels: Mapping[str, str],
                   xlog: Sequence[str] = ()) -> tuple[object, pd.DataFrame]:
    """Figures 3 and 4: simulated F1 and NCR (markers, ± 2 SE cut at 0 and 1) and eq. (4) (lines).

    Colour: distribution (:data:`DIST_STYLE`); filled circles and solid lines: F1; open squares
    and dashed lines: NCR; dotted: ``competitors="lower"`` in the panels of :func:`lower_panels`.

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure and its data: ``panel, axis, dist, metric, x, simulated_mean, errorbar_2se, runs,
        analysis, analysis_lower, lower_drawn``.
    """
    fig, axes = _panels()
    shown = lower_panels(util)
    data = []
    for ax, panel in zip(axes, sorted(titles)):
        grp = util[util["panel"] == panel]
        for (dist, metric), g in grp.groupby(["dist", "metric"], sort=False):
            g = g.sort_values("x")
            marker, ls, label = _METRIC[metric]
            color = DIST_STYLE.get(dist, "#555555")
            err = 2 * g["sem"].fillna(0.0)
            ax.errorbar(g["x"], g["sim"], yerr=bar_bounds(g["sim"], err, (0, 1)), fmt=marker, ms=4, color=color,
                        elinewidth=0.8, mfc="white" if metric == "ncr" else color, label=f"{dist}, {label}")
            ax.plot(g["x"], g["analysis"], ls=ls, lw=1, color=color)
            if panel in shown:
                ax.plot(g["x"], g["lower"], ls=":", lw=1, color=color, alpha=0.7)
            data.append(g.assign(errorbar=err, lower_drawn=panel in shown)[
                ["panel", "axis", "dist", "metric", "x", "sim", "errorbar", "runs", "analysis", "lower",
                 "lower_drawn"]])
        ax.set_title(titles[panel])
        ax.set_xlabel(xlabels[panel])
        if panel in xlog:
            ax.set_xscale("log")
        if grp["x"].max() >= 10_000:  # numbers of users: 20k, 1M (tick labels that do not overlap)
            _plain_log_ticks(ax.xaxis, _count) if panel in xlog else ax.xaxis.set_major_formatter(
                FuncFormatter(lambda v, _: _count(v)))
    axes[0].set_ylabel("utility score")
    axes[0].set_ylim(-0.03, 1.03)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False)
    return fig, pd.concat(data, ignore_index=True).rename(
        columns={"sim": "simulated_mean", "errorbar": "errorbar_2se", "lower": "analysis_lower"})


def _where2(r) -> str:
    return (f"panel ({r['panel']}), {level_label(r['axis'], r['level'])}, rank {int(r['rank'])} "
            f"(f = {r['frequency']:.4f}): simulation {r['sim']:.2f}, analysis {r['analysis']:.2f}")


def _common_gaps(t: pd.DataFrame, prefix: str, where) -> dict:
    worst, worst_z = t.loc[t["gap"].abs().idxmax()], t.loc[t["z"].abs().idxmax()]
    out = {f"{prefix}_points": int(len(t)), f"{prefix}_gap": float(abs(worst["gap"])),
           f"{prefix}_gap_where": where(worst), f"{prefix}_gap_z": float(abs(worst["z"])),
           f"{prefix}_maxz": float(abs(worst_z["z"])), f"{prefix}_maxz_where": where(worst_z),
           f"{prefix}_over3": int((t["z"].abs() > 3).sum()), f"{prefix}_mean_gap": float(t["gap"].abs().mean()),
           f"{prefix}_bias": float(t["gap"].mean())}
    for name in ("lower", "formula"):
        alt = t["sim"] - t[name]
        out[f"{prefix}_gap_{name}"] = float(alt.abs().max())
        out[f"{prefix}_diff_{name}"] = float((t["analysis"] - t[name]).abs().max())
        out[f"{prefix}_mean_gap_{name}"] = float(alt.abs().mean())
    return out


def identification_findings(ident: pd.DataFrame, setting: Mapping, *, n_text: int, repetitions: int) -> dict:
    """Figure 2's numbers for the text (glue names ``validation_fig2_*``).

    ``setting`` is the default setting (``n, m, epsilon``; :func:`ldp.analysis.validation_setting`).
    Values the grid does not cover are left out (the text then says so).
    """
    p = "validation_fig2"
    out = {"validation_reps": int(repetitions), f"{p}_n": int(setting["n"]), f"{p}_n_text": int(n_text),
           **_common_gaps(ident, p, _where2)}
    # the trends of section 5.1: more users, shorter values, larger epsilon -> more values found
    found = ident.groupby(["panel", "level"], sort=True)[["sim", "analysis"]].sum()
    broken = []
    for panel, rising in {"a": True, "b": False, "c": True}.items():
        for col in ("sim", "analysis"):
            d = np.diff(found.loc[panel, col].to_numpy())
            if not (np.all(d > 0) if rising else np.all(d < 0)):
                broken.append(f"{'simulation' if col == 'sim' else 'analysis'} in panel ({panel})")
    out[f"{p}_trend"] = ("holds in every panel, for the simulation and for the analysis" if not broken
                         else "does not hold for the " + ", ".join(broken))
    at = (ident["n"] == setting["n"]) & (ident["m"] == setting["m"]) & np.isclose(ident["epsilon"],
                                                                                   setting["epsilon"])
    default = ident[at & (ident["panel"] == ident.loc[at, "panel"].min())]
    if len(default):
        out[f"{p}_found_sim"] = float(default["sim"].sum())
        out[f"{p}_found_analysis"] = float(default["analysis"].sum())
    out[f"{p}_se_max"] = float(0.5 / np.sqrt(repetitions))
    out[f"{p}_dmin"] = int(ident["dmin"].min())
    return out


def _where_util(r) -> str:
    label = {"g": f"g = {r['x']}", "etas": f"η[1] = {r['x']}", "group_fractions": f"n[1] = {r['x']:,}",
             "n": f"n = {int(r['x']):,}", "m": f"m = {int(r['x'])}", "epsilon": f"ε = {r['x']:g}"}[r["axis"]]
    return (f"panel ({r['panel']}), {label}, {r['dist']}, {'F1' if r['metric'] == 'f1' else 'NCR'}: "
            f"simulation {r['sim']:.3f}, analysis {r['analysis']:.3f}")


def utility_gaps(util: pd.DataFrame, prefix: str) -> dict:
    """The largest gaps between simulation and analysis (and the other readings) of Figure 3 or 4."""
    out = _common_gaps(util, prefix, _where_util)
    d = (util["analysis"] - util["lower"]).abs()
    out[f"{prefix}_diff_lower_where"] = _where_util(util.loc[d.idxmax()]).split(": ")[0]
    out[f"{prefix}_dmin"] = int(util["dmin"].min())
    for dist, g in util.groupby("dist"):
        out[f"{prefix}_bias_{'z20' if dist != 'zipf' else 'zipf'}"] = float(g["gap"].mean())
    for panel in sorted(util["panel"].unique()):
        out[f"{prefix}_gap_{panel}"] = float(util.loc[util["panel"] == panel, "gap"].abs().max())
    out[f"{prefix}_lower_panels"] = ", ".join(f"({p})" for p in lower_panels(util)) or "none"
    return out


def _series(util: pd.DataFrame, panel: str) -> dict:
    """Per (data set, metric) series of one panel: x, simulated means, sems, analysis."""
    out = {}
    for key, g in util[util["panel"] == panel].groupby(["dist", "metric"], sort=False):
        g = g.sort_values("x")
        out[key] = (g["x"].to_numpy(), g["sim"].to_numpy(), g["sem"].fillna(0.0).to_numpy(), g["analysis"].to_numpy())
    return out


def _series_name(key) -> str:
    return f"{key[0]} {'F1' if key[1] == 'f1' else 'NCR'}"


def _symmetry(util: pd.DataFrame, panel: str, center) -> dict:
    """argmax and max |U(center + d) - U(center - d)| of each series of a panel (NaN: not in the grid)."""
    argmax_sim, argmax_an, n_pairs = [], set(), 0
    asym, asym_z, asym_an, short_z, short, where = 0.0, 0.0, 0.0, 0.0, 0.0, ""
    for key, (x, sim, sem, an) in _series(util, panel).items():
        argmax_sim.append(f"{x[np.argmax(sim)]:,} ({_series_name(key)})")
        argmax_an.add(x[np.argmax(an)])
        pos = {v: i for i, v in enumerate(x)}
        for v in x:
            if v > center and 2 * center - v in pos:
                n_pairs += 1
                i, j = pos[v], pos[2 * center - v]
                diff = abs(sim[i] - sim[j])
                if diff > asym:
                    asym, asym_z = diff, diff / max(np.hypot(sem[i], sem[j]), 1e-12)
                    where = f"{x[j]:,} against {v:,} ({_series_name(key)}: simulation {sim[j]:.3f} and {sim[i]:.3f})"
                asym_an = max(asym_an, abs(an[i] - an[j]))
        if center not in pos:  # the grid leaves out the centre
            short = short_z = np.nan
            continue
        c = pos[center]  # how far the centre's simulated score is below the series' best
        gap_c = sim.max() - sim[c]
        if gap_c > short:
            short, short_z = gap_c, gap_c / max(np.hypot(sem[c], sem[np.argmax(sim)]), 1e-12)
    if not n_pairs:  # no two levels mirror each other around the centre
        asym = asym_z = asym_an = np.nan
    untested = "not tested (the parameter list leaves out the levels it needs) against"

    def verdict(z):
        return untested if np.isnan(z) else "consistent with" if z <= 3 else "not consistent with"

    return {"asym_where": where, "argmax_sim": ", ".join(argmax_sim),
            "argmax_analysis": ", ".join(f"{int(v):,}" for v in sorted(argmax_an)), "asym_sim": float(asym),
            "asym_z": float(asym_z), "asym_analysis": float(asym_an), "center_short": float(short),
            "center_short_z": float(short_z), "opt_verdict": verdict(short_z), "sym_verdict": verdict(asym_z)}


def configuration_findings(util: pd.DataFrame, *, n: int, bits: int) -> dict:
    """Figure 3's observations (glue names ``validation_fig3*``): fewer rounds, the optima and symmetries.

    ``n`` is the number of users and ``bits`` the bits after gamma (the centres ``n/2`` and ``bits/2``).
    """
    out: dict[str, Any] = {"validation_fig3_n": int(n)}
    best_g, rises, an_best = [], 0, set()
    series = _series(util, "a")
    for key, (x, sim, _sem, an) in series.items():  # (a) Observation 1: fewer rounds are better
        best_g.append(f"{x[np.argmax(sim)]} ({_series_name(key)})")
        rises += int(np.sum(np.diff(sim) > 0))
        an_best.add(int(x[np.argmax(an)]))
    a = util[util["panel"] == "a"]
    last = a[a["x"] == a["x"].max()]
    i_last = (last["analysis"] - last["sim"]).idxmax()
    out |= {"validation_fig3a_best_sim": ", ".join(best_g),
            "validation_fig3a_best_analysis": ", ".join(str(g) for g in sorted(an_best)),
            "validation_fig3a_rises": rises, "validation_fig3a_steps": int(sum(len(s[0]) - 1 for s in series.values())),
            "validation_fig3a_gmax": int(a["x"].max()), "validation_fig3a_dmin": int(last["dmin"].min()),
            "validation_fig3a_over_last": float((last["analysis"] - last["sim"]).max()),
            "validation_fig3a_over_last_lower": float(last.loc[i_last, "lower"] - last.loc[i_last, "sim"]),
            "validation_fig3a_over_last_where": f"{last.loc[i_last, 'dist']} {last.loc[i_last, 'metric'].upper()}"}
    for panel, center in (("b", bits // 2), ("c", n // 2)):
        out |= {f"validation_fig3{panel}_{k}": v for k, v in _symmetry(util, panel, center).items()}
    return out


def optimal_findings(util: pd.DataFrame, panels: Mapping[str, tuple[str, pd.DataFrame]], setting: Mapping,
                     *, drop_top: int) -> dict:
    """Figure 4's numbers (glue names ``validation_fig4_*``): configurations, distributions, the worst point.

    Parameters
    ----------
    util : pandas.DataFrame
        :func:`ldp.experiments.summary.utility_table` of the Figure 4 grid.
    panels : mapping
        The grid's rows by panel (to find the data set of the worst point).
    setting : mapping
        The default ``n, m, epsilon, k``.
    drop_top : int
        The values zipf(-x) drops.
    """
    from ..protocols import PEM

    n, m, k, eps = (setting[key] for key in ("n", "m", "k", "epsilon"))
    at = util[(util["metric"] == "f1") & (util["n"] == n) & (util["m"] == m) & (util["epsilon"] == eps)]
    default_etas = at["etas"].iloc[0] if len(at) else str(PEM(epsilon=eps, k=k, m=m).config(n).etas)
    out = {"validation_fig4_default_etas": default_etas,
           "validation_fig4_n_configs": int(util.loc[util["metric"] == "f1", "etas"].nunique())}
    # "zipf is better when the setting is unfavourable; zipf(-20) similar or better at the other extreme"
    f1 = util[util["metric"] == "f1"].pivot_table(index=["panel", "x"], columns="dist", values="sim")
    z20 = dist_name(drop_top)
    lo_end = {"a": f1.loc["a"].index.min(), "b": f1.loc["b"].index.max(), "c": f1.loc["c"].index.min()}
    hi_end = {"a": f1.loc["a"].index.max(), "b": f1.loc["b"].index.min(), "c": f1.loc["c"].index.max()}
    fails = []
    for panel in "abc":
        lo, hi = f1.loc[(panel, lo_end[panel])], f1.loc[(panel, hi_end[panel])]
        if not lo["zipf"] > lo[z20]:
            fails.append(f"({panel}) unfavourable end")
        if not hi[z20] >= hi["zipf"] - 0.02:
            fails.append(f"({panel}) favourable end")
    lo_a, hi_a = f1.loc[("a", lo_end["a"])], f1.loc[("a", hi_end["a"])]
    out |= {"validation_fig4_dist_verdict": "holds at both ends of every panel" if not fails
            else "fails at: " + ", ".join(fails),
            "validation_fig4_a_lo_zipf": float(lo_a["zipf"]), "validation_fig4_a_lo_z20": float(lo_a[z20]),
            "validation_fig4_a_hi_zipf": float(hi_a["zipf"]), "validation_fig4_a_hi_z20": float(hi_a[z20]),
            "validation_fig4_a_lo_n": int(lo_end["a"]), "validation_fig4_a_hi_n": int(hi_end["a"])}
    # the analysis counts the values ranked below k as competitors of frequency zero
    w = util.loc[util["z"].abs().idxmax()]
    rows = panels[w["panel"]][1]
    row = rows[(rows["n"] == w["n"]) & (rows["m"] == w["m"]) & (rows["epsilon"] == w["epsilon"])
               & (rows["dataset_drop_top"] == (drop_top if w["dist"] != "zipf" else 0))].iloc[0]
    f = run_config(row)[1].top_frequencies(k + 1)
    out |= {"validation_fig4_worst_dist": w["dist"], "validation_fig4_worst_fk": float(f[k - 1]),
            "validation_fig4_worst_fk1": float(f[k])}
    return out
