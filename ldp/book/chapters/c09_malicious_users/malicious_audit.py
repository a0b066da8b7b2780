"""Chapter 09 (malicious users, ours): the empirical privacy audit of the deployed client.

For every protocol (PEM, TreeHist, SFP with OLH, HR, Hashtogram, CMS and FLH; SPM with OLH) and every group kind
of its plan, one user's reports made by :func:`ldp.client.report_many` (the operating system's coins) for two
values that differ in every bit: ``eps_hat``, the log-ratio of the likelihood-ratio event's frequencies, and
``eps_lower``, its Clopper-Pearson lower bound (:func:`ldp.attacks.audit_grid`), over the ε grid, as ratios to the
nominal ε.  Row (a)-(d): this build's audit; row (e)-(h): the full audit of ``benchmarks/bench_audit.py``
(committed, ``benchmarks/results/audit.csv``).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import seaborn.objects as so
from matplotlib.lines import Line2D

from ...claims import rules as R
from ...claims.claim import Claim, ClaimFields, Test
from ...plotting import FULL_WIDTH, render
from .compute import CLAIM_FIELDS, OURS_QUOTE, OURS_SAYS

__all__ = ["NAME", "ENGINES", "TITLES", "FAMILIES", "ORACLES", "frame", "draw", "definition_points", "tight_points",
           "CLAIMS"]

NAME = "fig-malicious-audit"
ENGINES = {NAME: "the deployed client (ldp.client.report_many, OS randomness): this build's audit and "
                 "benchmarks/bench_audit.py's (committed)"}
TITLES = {NAME: "Empirical privacy audit of the deployed client (ours)"}
#: the protocols' families, one panel each, and the oracles in the order of their colours
FAMILIES = ("PEM", "TreeHist", "SFP", "SPM")
ORACLES = {"OLH": "#17becf", "HR": "#e377c2", "Hashtogram": "#7f7f7f", "CMS": "#bcbd22", "FLH": "#1f77b4"}
_SOURCES = {"this build": "abcd", "benchmark": "efgh"}
KIND_MARKERS = {"prefix": "o", "value": "s", "prefix+value": "D", "fragment+value": "v",
                 "prefix+segment+value": "^", "segment+segment+value": "P"}


def frame(live: pd.DataFrame, bench: pd.DataFrame | None = None) -> pd.DataFrame:
    """The figure's rows: :func:`ldp.attacks.audit_grid`'s frames of this build (``live``) and the benchmark.

    Returns
    -------
    pandas.DataFrame
        ``panel, source, family, protocol, oracle, kind, group, questions, epsilon, n, k0, k1, eps_hat, eps_lower,
        alpha, commit, hat_ratio, lower_ratio, x``: ``commit`` the benchmark's (``"this build"`` for this build's
        rows), ``hat_ratio = eps_hat / epsilon`` and ``lower_ratio =
        eps_lower / epsilon`` (cut at 0 where the bound is negative or ``-inf``: no evidence), ``x`` the
        drawn ε (the oracles side by side).
    """
    parts = []
    for source, df in (("this build", live), ("benchmark", bench)):
        if df is None or df.empty:
            continue
        family = df["protocol"].str.split("-").str[0]
        panel = [_SOURCES[source][FAMILIES.index(f)] for f in family]
        spread = {o: 2 ** (0.07 * (i - 2)) for i, o in enumerate(ORACLES)}
        commit = df["commit"].astype(str) if "commit" in df.columns else source
        parts.append(df.assign(panel=panel, source=source, family=family, commit=commit,
                               hat_ratio=df["eps_hat"] / df["epsilon"],
                               lower_ratio=(df["eps_lower"] / df["epsilon"]).clip(lower=0.0),
                               x=df["epsilon"] * df["oracle"].map(spread)))
    cols = ["panel", "source", "family", "protocol", "oracle", "kind", "group", "questions", "epsilon", "n", "k0",
            "k1", "eps_hat", "eps_lower", "alpha", "commit", "hat_ratio", "lower_ratio", "x"]
    return pd.concat(parts, ignore_index=True)[cols]


def draw(data: pd.DataFrame):
    """ε̂ / ε (markers: the group kind) down to ε_lower / ε (bars) against ε, log x; the line at 1: the nominal ε."""
    plots = []
    for source, letters in _SOURCES.items():
        for letter, family in zip(letters, FAMILIES):
            d = data[data["panel"] == letter]
            if d.empty:
                continue
            eps = sorted(set(d["epsilon"]))
            p = (so.Plot(d, x="x", color="oracle")
                 .add(so.Range(linewidth=1.0), ymin="lower_ratio", ymax="hat_ratio")
                 .add(so.Dot(pointsize=4), y="hat_ratio", marker="kind")
                 .scale(color=so.Nominal(ORACLES, order=[o for o in ORACLES if o in set(data["oracle"])]),
                        marker=so.Nominal(KIND_MARKERS, order=[k for k in KIND_MARKERS if k in set(data["kind"])]),
                        x=so.Continuous(trans="log").tick(at=eps[::max(1, math.ceil(len(eps) / 4))])
                        .label(like="{x:g}"), y=so.Continuous().tick(at=[0, 0.5, 1]))
                 .limit(x=(eps[0] / 1.35, eps[-1] * 1.35), y=(0, 1.25))
                 .label(x="ε", y=f"{source}: ε̂ / ε" if letter in "ae" else "", title=f"({letter}) {family}",
                        color="", marker=""))
            plots.append(p)
    rows = len({s for s in data["source"]})
    kinds = {k: Line2D([], [], marker=m, ls="none", color="0.35", markersize=4) for k, m in KIND_MARKERS.items()
             if k in set(data["kind"])}
    fig = render(plots, height=2.0 * rows + 1.1, width=FULL_WIDTH, grid=(rows, len(plots) // rows), ncol=4,
                 extra={"nominal ε": Line2D([], [], color="0.2", lw=0.8, ls="--"), **kinds})
    per_row = len(fig.axes) // rows
    for i, ax in enumerate(fig.axes):
        ax.axhline(1.0, color="0.2", lw=0.8, ls="--", zorder=0)
        if i % per_row:  # one y axis per row: its label on the row's first panel (each panel's on a phone)
            ax.sharey(fig.axes[i - i % per_row])
    return fig


# --------------------------------------------------------------------------- claims
def definition_points(data: pd.DataFrame) -> pd.DataFrame:
    """Per oracle: 0 (a) against the largest ``eps_lower - epsilon`` over its rows, both sources (b)."""
    gap = data.assign(gap=data["eps_lower"] - data["epsilon"]).groupby("oracle", sort=False)["gap"].max()
    return pd.DataFrame({"point": gap.index, "a": 0.0, "se_a": 0.0, "b": gap.to_numpy(), "se_b": 0.0})


def tight_points(data: pd.DataFrame) -> pd.DataFrame:
    """``eps_hat`` (observed) against ``epsilon`` (expected) in every row with both counts positive, with the
    delta method's standard error ``sqrt((1 - p0) / k0 + (1 - p1) / k1)`` (``WithinSE``)."""
    d = data[(data["k0"] > 0) & (data["k1"] > 0)]
    p0, p1 = d["k0"] / d["n"], d["k1"] / d["n"]
    se = np.sqrt((1 - p0) / d["k0"] + (1 - p1) / d["k1"])
    point = [f"{s}, {p}, {k}, ε = {e:g}" for s, p, k, e in zip(d["source"], d["protocol"], d["kind"], d["epsilon"])]
    return pd.DataFrame({"point": point, "observed": d["eps_hat"], "expected": d["epsilon"], "se": se})


_FIG: ClaimFields = {"figure": NAME, **CLAIM_FIELDS}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="malicious-audit-bound", section="7", ref="Chapter 09, the deployed client against Definition 1 (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          note="Definition 1 of the paper (section 2.1) checked on the deployed client, beyond the paper's oracles: "
               "the paper's own GRR and OLH are decided on their exact output laws in chapter 01.",
          test=Test(what="the deployed client (ldp.client) of PEM, TreeHist and SFP with OLH, HR, Hashtogram, CMS "
                         "and FLH and of SPM with OLH, one user of every group kind, every ε of the grid, this "
                         "build's audit and the committed one: per oracle, the largest Clopper-Pearson lower bound "
                         "ε_lower minus ε (a cell's ε_lower exceeds ε with probability at most 2α = 2e-6 if the "
                         "client is ε-LDP)",
                    measure=lambda store: definition_points(store.figure(NAME)),
                    rule=R.OrderingHolds(what="0 ≥ the largest ε_lower − ε", floor=None, ceiling=None), **_FIG)),
    Claim(id="malicious-audit-tight", section="7", ref="Chapter 09, the privacy audit of the deployed client (ours)",
          quote=OURS_QUOTE, says=OURS_SAYS, kind="ours",
          test=Test(what="ε̂ (the likelihood-ratio event's log-ratio) against the nominal ε in every audited cell of "
                         "both audits: the client spends its whole budget and no more (standard errors by the delta "
                         "method; cells with a count of 0 are left out)",
                    measure=lambda store: tight_points(store.figure(NAME)), rule=R.WithinSE(alpha=1e-3), **_FIG)),
)
