"""Chapter 09, "Malicious users": five figures, each a ``*_frame`` (tidy frame) and a ``*_draw`` (seaborn).

* ``fig-malicious-gain`` -- what one fake report is worth: the net gain
  ``(s - rho) / (p - q)`` of a target's estimate per report, closed form and
  measured, per oracle and budget (:func:`gain_frame`, :func:`gain_draw`);
* ``fig-malicious-threshold`` -- the smallest share of fake users that plants
  one fresh target, against epsilon, per protocol, maximal gain beside input
  manipulation, with the first-order prediction (:func:`threshold_frame`,
  :func:`threshold_draw`);
* ``fig-malicious-targets`` -- the same for ``r`` of 16 targets at one budget
  (:func:`targets_frame`, :func:`targets_draw`);
* ``fig-malicious-placement`` -- PEM when fake users choose their group, for
  fresh and look-alike targets, and the consistency check
  (:func:`placement_frame`, :func:`placement_draw`);
* ``fig-malicious-detector`` -- the detector: honest counts, the stated null
  bound and crafted counts (:func:`detector_frame`, :func:`detector_draw`).

Every ``*_draw`` takes exactly the frame its ``*_frame`` returns and returns
the matplotlib figure; the chapter saves both with
:func:`ldp.plotting.save_figure`.  :data:`FIGURES` maps each figure's name to
its pair.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..plotting import FULL_WIDTH, method_style

__all__ = ["gain_frame", "gain_draw", "threshold_frame", "threshold_draw", "targets_frame", "targets_draw",
           "placement_frame", "placement_draw", "detector_frame", "detector_draw", "FIGURES", "style_of"]

#: OUE has no style in :data:`ldp.plotting.METHOD_STYLE` yet (the book's other chapters never plot it)
_EXTRA = {"OUE": {"color": "#e6550d", "marker": "p"}}
#: legend order of the protocols and of the oracles (others follow in the order met)
ORDER = ("PEM", "PEM (HR)", "PEM (CMS)", "SPM", "MCM", "TreeHist", "SFP", "GRR", "OUE", "OLH", "HR", "CMS")


def _order(labels) -> list[str]:
    seen = list(dict.fromkeys(str(x) for x in labels))
    return [x for x in ORDER if x in seen] + [x for x in seen if x not in ORDER]


def _log_axis(axis) -> None:
    """A log axis labelled at its decades only, as plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())
_KIND = {"MGA": "maximal gain", "input": "input manipulation"}


def style_of(label: str) -> dict[str, str]:
    """Colour and marker of a method label (``"PEM (HR)"`` takes PEM's colour, a dashed line and open marker)."""
    base = dict(_EXTRA[label]) if label in _EXTRA else method_style(label)
    if "(" in label:
        base.update(linestyle="--", mfc="white")
    return base


def bar_bounds(y, err, bounds=(None, None)) -> np.ndarray:
    """Lower and upper half-widths of ``y +- err``, each cut where it would cross a bound (shape ``(2, n)``)."""
    y, err = np.asarray(y, dtype=float), np.asarray(err, dtype=float)
    lo, hi = bounds
    down = err if lo is None else np.minimum(err, np.maximum(y - lo, 0.0))
    up = err if hi is None else np.minimum(err, np.maximum(hi - y, 0.0))
    return np.vstack([down, up])


def legend_outside(fig, axes=None, *, ncol: int = 4):
    """One legend above the figure's panels: every labelled artist of ``axes`` (default: all), once each."""
    handles: dict = {}
    for ax in fig.axes if axes is None else axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="lower center", bbox_to_anchor=(0.5, 1.0),
                   ncol=min(ncol, len(handles)), frameon=False)


def _sns():
    import seaborn as sns  # the book's drawing library; imported on use

    return sns


def _errorbars(ax, frame: pd.DataFrame, x: str, y: str, err: str, *, hue: str, bounds=(None, None)) -> None:
    """Error bars (``err`` half-widths, cut at ``bounds``) under seaborn's lines, in each series' colour."""
    for label, g in frame.groupby(hue, sort=False):
        g = g[np.isfinite(g[y]) & np.isfinite(g[err])]
        if len(g):
            ax.errorbar(g[x], g[y], yerr=bar_bounds(g[y], g[err], bounds), fmt="none",
                        ecolor=style_of(str(label))["color"], elinewidth=0.8, capsize=2)


def _lines(ax, frame: pd.DataFrame, x: str, y: str, hue: str, order: Sequence[str], *, dashes=False, **kw) -> None:
    sns = _sns()
    present = [h for h in order if h in set(frame[hue])]
    if not present:
        return
    sub = frame[frame[hue].isin(present)]
    sns.lineplot(data=sub, x=x, y=y, hue=hue, hue_order=present, style=hue, style_order=present,
                 palette={h: style_of(h)["color"] for h in present},
                 markers={h: style_of(h)["marker"] for h in present} if not dashes else False,
                 dashes=({h: (4, 2) for h in present} if dashes else
                         {h: ((4, 2) if style_of(h).get("linestyle") == "--" else "") for h in present}),
                 errorbar=None, ax=ax, legend=False, **kw)


# ---------------------------------------------------------------------------
# fig-malicious-gain
# ---------------------------------------------------------------------------
def gain_frame(table: pd.DataFrame, *, kind: str = "MGA") -> pd.DataFrame:
    """The gain figure's frame from :func:`ldp.attacks.gains.gain_table`.

    One row per (panel, oracle, epsilon, source): panel ``a`` one target,
    ``b`` the largest number of targets; ``source`` is ``closed form`` (the
    line; ``nan`` where there is none) or ``measured`` (the markers, with
    ``err`` = 2 standard errors over ``reports`` crafted reports).
    """
    t = table[table["kind"] == kind]
    rs = sorted(t["r"].unique())
    panels = {rs[0]: "a"} | ({rs[-1]: "b"} if len(rs) > 1 else {})
    rows = []
    for row in t[t["r"].isin(list(panels))].itertuples():
        base = {"panel": panels[row.r], "targets": int(row.r), "oracle": row.oracle, "epsilon": float(row.epsilon)}
        rows.append({**base, "source": "closed form", "gain": float(row.gain_closed), "err": 0.0, "reports": 0})
        rows.append({**base, "source": "measured", "gain": float(row.gain), "err": 2 * float(row.gain_se),
                     "reports": int(row.reports)})
    return pd.DataFrame(rows)


def gain_draw(frame: pd.DataFrame) -> plt.Figure:
    """Closed form (lines) and measurement (markers, 2 SE) of the net gain per report, log scale."""
    panels = sorted(frame["panel"].unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(FULL_WIDTH, 0.42 * FULL_WIDTH), layout="constrained",
                             sharey=True, squeeze=False)
    order = _order(frame["oracle"])
    for ax, panel in zip(axes[0], panels):
        f = frame[frame["panel"] == panel]
        closed = f[(f["source"] == "closed form") & np.isfinite(f["gain"])]
        meas = f[f["source"] == "measured"]
        _sns().lineplot(data=closed, x="epsilon", y="gain", hue="oracle",
                        hue_order=[o for o in order if o in set(closed["oracle"])],
                        palette={o: style_of(o)["color"] for o in order}, errorbar=None, ax=ax, legend=False,
                        linewidth=1.0)
        for o in order:
            g = meas[meas["oracle"] == o]
            st = style_of(o)
            ax.errorbar(g["epsilon"], g["gain"], yerr=g["err"], fmt=st["marker"], color=st["color"], mfc="white",
                        ms=4.5, capsize=2, label=o, linestyle="none")
        ax.axhline(1.0, color="0.4", lw=0.8, ls=":")
        ax.set_yscale("log")
        _log_axis(ax.yaxis)
        r = int(f["targets"].iloc[0])
        ax.set_title(f"({panel}) {r} target{'s' if r > 1 else ''}")
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel("gain of a target's estimate per fake report" if panel == "a" else "")
    legend_outside(fig, ncol=len(order))
    return fig


# ---------------------------------------------------------------------------
# fig-malicious-threshold and fig-malicious-targets
# ---------------------------------------------------------------------------
def _summary(grid: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    def agg(g):
        f = g["fraction"].to_numpy(float)
        ok = f[np.isfinite(f)]
        return pd.Series({"mean": ok.mean() if ok.size else np.nan,
                          "sd": ok.std(ddof=1) if ok.size > 1 else 0.0 if ok.size else np.nan,
                          "runs": int(ok.size), "above_max": int(f.size - ok.size)})

    return grid.groupby(by, sort=False).apply(agg, include_groups=False).reset_index()


def threshold_frame(grid: pd.DataFrame, predicted: pd.DataFrame, *, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The threshold figure's frame: mean and SD over repetitions of the smallest fake share, and its prediction.

    Parameters
    ----------
    grid : pandas.DataFrame
        :func:`ldp.attacks.threshold_grid` with ``need == 1``.
    predicted : pandas.DataFrame
        ``dataset, protocol, epsilon, kind, predicted`` (:func:`ldp.attacks.predicted_fraction`).
    datasets : mapping
        Data set label -> panel row letter prefix (``{"Synthetic": "a", "AOL": "b"}``).

    Returns
    -------
    pandas.DataFrame
        ``panel, dataset, kind, protocol, epsilon, mean, sd, runs, above_max, predicted``
        (``runs``: repetitions whose search planted the target; ``above_max``:
        those that needed more than the largest share tried).
    """
    g = grid[grid["need"] == 1]
    s = _summary(g, ["dataset", "kind", "protocol", "epsilon"])
    s = s.merge(predicted, on=["dataset", "protocol", "epsilon", "kind"], how="left")
    kinds = [k for k in ("MGA", "input") if k in set(s["kind"])]
    s["panel"] = [f"{datasets[d]}{kinds.index(k) + 1}" for d, k in zip(s["dataset"], s["kind"])]
    cols = ["panel", "dataset", "kind", "protocol", "epsilon", "mean", "sd", "runs", "above_max", "predicted"]
    return s[cols]


def _facet_draw(frame: pd.DataFrame, *, x: str, xlabel: str, order: Sequence[str], logx: bool = False) -> plt.Figure:
    rows = list(dict.fromkeys(frame.sort_values("panel", kind="mergesort")["dataset"]))  # panel order: a, b
    kinds = [k for k in ("MGA", "input") if k in set(frame["kind"])]
    fig, axes = plt.subplots(len(rows), len(kinds), figsize=(FULL_WIDTH, 0.36 * FULL_WIDTH * len(rows) + 0.3),
                             layout="constrained", sharex=True, sharey=True, squeeze=False)
    for i, d in enumerate(rows):
        for j, k in enumerate(kinds):
            ax = axes[i][j]
            f = frame[(frame["dataset"] == d) & (frame["kind"] == k)]
            _lines(ax, f, x, "mean", "protocol", order, markersize=4.5, linewidth=1.0)
            _errorbars(ax, f, x, "mean", "sd", hue="protocol", bounds=(0.0, None))
            if "predicted" in f and np.isfinite(f["predicted"]).any():
                _lines(ax, f[np.isfinite(f["predicted"])], x, "predicted", "protocol", order, dashes=True,
                       linewidth=0.8, alpha=0.7)
            panel = f["panel"].iloc[0] if len(f) else f"{i}{j}"
            ax.set_title(f"({panel}) {d}: {_KIND[k]}", fontsize=9)
            ax.set_yscale("log")
            _log_axis(ax.yaxis)
            if logx:
                ax.set_xscale("log", base=2)
                xs = sorted(set(frame[x]))
                ax.set_xticks(xs, [f"{v:g}" for v in xs])
                ax.xaxis.set_minor_formatter(_null())
            ax.set_xlabel(xlabel if i == len(rows) - 1 else "")
            ax.set_ylabel("fake users (share of n)" if j == 0 else "")
    for lab in order:  # legend entries (seaborn's lines carry none)
        st = style_of(lab)
        axes[0][0].plot([], [], color=st["color"], marker=st["marker"], ls=st.get("linestyle", "-"),
                        mfc=st.get("mfc", st["color"]), label=lab)
    axes[0][0].plot([], [], color="0.3", ls=(0, (4, 2)), lw=0.8, label="first-order prediction")
    legend_outside(fig, ncol=4)
    return fig


def _null():
    from matplotlib.ticker import NullFormatter

    return NullFormatter()


def threshold_draw(frame: pd.DataFrame) -> plt.Figure:
    """Smallest share of fake users against epsilon: rows data sets, columns MGA / input; dashed: prediction."""
    return _facet_draw(frame, x="epsilon", xlabel=r"$\varepsilon$", order=_order(frame["protocol"]))


def targets_frame(grid: pd.DataFrame, predicted: pd.DataFrame, *, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The r-of-16 figure's frame: as :func:`threshold_frame` with ``need`` (targets planted) as the x axis."""
    s = _summary(grid, ["dataset", "kind", "protocol", "need"])
    s = s.merge(predicted, on=["dataset", "protocol", "need", "kind"], how="left")
    kinds = [k for k in ("MGA", "input") if k in set(s["kind"])]
    s["panel"] = [f"{datasets[d]}{kinds.index(k) + 1}" for d, k in zip(s["dataset"], s["kind"])]
    return s[["panel", "dataset", "kind", "protocol", "need", "mean", "sd", "runs", "above_max", "predicted"]]


def targets_draw(frame: pd.DataFrame) -> plt.Figure:
    """Smallest share of fake users that puts ``r`` of 16 targets in the top 16."""
    return _facet_draw(frame, x="need", xlabel="targets released (of 16)", order=_order(frame["protocol"]), logx=True)


# ---------------------------------------------------------------------------
# fig-malicious-placement
# ---------------------------------------------------------------------------
_STRATEGY_STYLE = {"fresh, plan's groups": ("#1f77b4", "o", ""), "fresh, chosen groups": ("#1f77b4", "o", (2, 2)),
                   "look-alike, plan's groups": ("#d95f02", "s", ""),
                   "look-alike, chosen groups": ("#d95f02", "s", (2, 2))}


def placement_frame(grid: pd.DataFrame, flags: pd.DataFrame) -> pd.DataFrame:
    """PEM's threshold per strategy (panel a) and the share of runs the consistency check flags (panel b).

    Parameters
    ----------
    grid : pandas.DataFrame
        :func:`ldp.attacks.threshold_grid` rows with a ``strategy`` column.
    flags : pandas.DataFrame
        ``strategy, epsilon, flagged`` (one row per run at the threshold:
        whether the check flagged the planted target).

    Returns
    -------
    pandas.DataFrame
        ``panel, strategy, epsilon, value, sd, runs``: panel ``a`` the mean
        fake share (``sd`` over runs), panel ``b`` the flagged share.
    """
    a = _summary(grid, ["strategy", "epsilon"]).rename(columns={"mean": "value"})
    a["panel"] = "a"
    b = flags.groupby(["strategy", "epsilon"], sort=False)["flagged"].agg(["mean", "size"]).reset_index()
    b = b.rename(columns={"mean": "value", "size": "runs"}).assign(panel="b", sd=0.0)
    cols = ["panel", "strategy", "epsilon", "value", "sd", "runs"]
    return pd.concat([a[cols], b[cols]], ignore_index=True)


def placement_draw(frame: pd.DataFrame) -> plt.Figure:
    """(a) smallest fake share for PEM per strategy; (b) share of those runs the consistency check flags."""
    sns = _sns()
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(FULL_WIDTH, 0.42 * FULL_WIDTH), layout="constrained")
    order = [s for s in _STRATEGY_STYLE if s in set(frame["strategy"])]
    pal = {s: _STRATEGY_STYLE[s][0] for s in order}
    for ax, panel in ((ax_a, "a"), (ax_b, "b")):
        f = frame[frame["panel"] == panel]
        sns.lineplot(data=f, x="epsilon", y="value", hue="strategy", hue_order=order, style="strategy",
                     style_order=order, palette=pal, markers={s: _STRATEGY_STYLE[s][1] for s in order},
                     dashes={s: _STRATEGY_STYLE[s][2] for s in order}, errorbar=None, ax=ax,
                     legend=(panel == "a"), markersize=4.5, linewidth=1.0)
        ax.set_xlabel(r"$\varepsilon$")
    for s in order:
        g = frame[(frame["panel"] == "a") & (frame["strategy"] == s)]
        ax_a.errorbar(g["epsilon"], g["value"], yerr=bar_bounds(g["value"], g["sd"], (0.0, None)), fmt="none",
                      ecolor=pal[s], elinewidth=0.8, capsize=2)
    ax_a.set_yscale("log")
    _log_axis(ax_a.yaxis)
    ax_a.set_ylabel("fake users (share of n)")
    ax_a.set_title("(a) PEM: smallest share planting one target")
    ax_b.set_ylim(-0.05, 1.05)
    ax_b.set_ylabel("share of runs flagged")
    ax_b.set_title("(b) the consistency check at that share")
    if ax_a.get_legend() is not None:
        ax_a.get_legend().remove()
    for s in order:
        c, mk, ds = _STRATEGY_STYLE[s]
        ax_a.plot([], [], color=c, marker=mk, ls=(0, ds) if ds else "-", label=s)
    legend_outside(fig, axes=[ax_a], ncol=2)
    return fig


# ---------------------------------------------------------------------------
# fig-malicious-detector
# ---------------------------------------------------------------------------
def detector_frame(honest_counts: np.ndarray, crafted_counts: Mapping[str, np.ndarray], bound: np.ndarray,
                   threshold: int) -> pd.DataFrame:
    """The detector figure's frame: tail ``P(count >= c)`` of honest and crafted reports, and the stated bound.

    Parameters
    ----------
    honest_counts : numpy.ndarray
        Released answers each honest report of the group supports.
    crafted_counts : mapping of str to numpy.ndarray
        The same for each kind of crafted report (label -> counts).
    bound : numpy.ndarray
        The detector's bound on the honest tail, ``c = 0 .. A + 1``
        (:meth:`ldp.attacks.SupportCountDetector.null_tail`).
    threshold : int
        The detector's threshold (a line).

    Returns
    -------
    pandas.DataFrame
        ``series, count, tail, reports, threshold``.
    """
    rows = []
    A = bound.shape[0] - 2
    for label, counts in [("honest reports", honest_counts), *crafted_counts.items()]:
        counts = np.asarray(counts)
        for c in range(A + 1):
            rows.append({"series": label, "count": c, "tail": float(np.mean(counts >= c)),
                         "reports": int(counts.shape[0]), "threshold": int(threshold)})
    for c in range(A + 1):
        rows.append({"series": "stated bound", "count": c, "tail": float(bound[c]), "reports": 0,
                     "threshold": int(threshold)})
    return pd.DataFrame(rows)


def detector_draw(frame: pd.DataFrame) -> plt.Figure:
    """Tails on a log scale: the honest reports stay under the stated bound; crafted ones pass the threshold."""
    sns = _sns()
    fig, ax = plt.subplots(figsize=(FULL_WIDTH * 0.62, 0.42 * FULL_WIDTH), layout="constrained")
    f = frame[frame["tail"] > 0]
    series = list(dict.fromkeys(frame["series"]))
    colors = dict(zip(series, ["#333333", "#1f77b4", "#d62728", "#9467bd", "#2ca02c"]))
    sns.lineplot(data=f, x="count", y="tail", hue="series", hue_order=series, style="series", style_order=series,
                 palette=colors, markers=True, dashes=False, errorbar=None, ax=ax, markersize=4.5, linewidth=1.0)
    th = int(frame["threshold"].iloc[0])
    ax.axvline(th - 0.5, color="0.4", lw=0.8, ls=":")
    ax.text(th - 0.4, 0.5, "threshold", fontsize=9, color="0.3")
    ax.set_yscale("log")
    _log_axis(ax.yaxis)
    ax.set_xlabel("released values a report supports")
    ax.set_ylabel("share of reports with at least that many")
    ax.legend(title=None, frameon=False, loc="lower left", fontsize=8)
    return fig


#: figure name -> (frame builder, drawing)
FIGURES = {"fig-malicious-gain": (gain_frame, gain_draw), "fig-malicious-threshold": (threshold_frame, threshold_draw),
           "fig-malicious-targets": (targets_frame, targets_draw),
           "fig-malicious-placement": (placement_frame, placement_draw),
           "fig-malicious-detector": (detector_frame, detector_draw)}
