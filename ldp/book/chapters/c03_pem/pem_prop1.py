"""The appendix's Proposition 1 and Lemma 1 (chapter 03): partitioning users against splitting the budget.

Not a paper figure: the appendix proves both and says "numerical calculation also
validate that P1 > P2 in most cases"; (a)-(c) are that calculation over the
budget and the frequency (one panel per number of groups g), (d) Lemma 1's ratio.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
import seaborn.objects as so
from matplotlib.colors import SymLogNorm
from matplotlib.ticker import FuncFormatter

from ....analysis import appendix
from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Claim, MissingInput, Test
from ...plotting import render, series_colors

__all__ = ["NAME", "ENGINES", "TITLES", "frame", "draw", "CLAIMS"]

NAME = "fig-pem-prop1"
ENGINES = {NAME: "closed form, eq. (6) (ldp.analysis)"}
TITLES = {NAME: "Proposition 1"}
_DIFF, _RATIO = "P1 - P2", "E(eps/g) / (E(eps)/g)"


def frame(grid: pd.DataFrame, *, lemma_epsilons=None, d_prime="real") -> pd.DataFrame:
    """The figure's data: ``panel, series, g, epsilon, f, value``.

    Panels (a)-(c): ``P1 - P2`` at every cell of :func:`ldp.analysis.prop1_grid`'s
    frame (three values of ``g``); (d): the Lemma 1 ratio ``E(eps/g) / (E(eps)/g)``
    at ``lemma_epsilons`` (default 300 budgets from 0.01 to 8) and its reference
    lines ``1/g`` and 1 (no ``epsilon``); ``d_prime``: Lemma 1's ``E`` (:func:`ldp.analysis.lemma1_E`).
    """
    e_line = np.linspace(0.01, 8, 300) if lemma_epsilons is None else np.asarray(lemma_epsilons, dtype=float)
    gs = [int(g) for g in np.unique(grid.g)]
    parts = [pd.DataFrame({"panel": lab, "series": _DIFF, "g": g, "epsilon": sub.epsilon.to_numpy(),
                           "f": sub.f.to_numpy(), "value": (sub.P1 - sub.P2).to_numpy()})
             for g, lab in zip(gs, "abc") for sub in [grid[grid.g == g]]]
    for g in gs:
        ratio = appendix.lemma1_E(e_line / g, d_prime=d_prime) / (appendix.lemma1_E(e_line, d_prime=d_prime) / g)
        parts += [pd.DataFrame({"panel": "d", "series": _RATIO, "g": g, "epsilon": e_line, "value": ratio}),
                  pd.DataFrame({"panel": ["d"], "series": "horizontal line 1/g", "g": g, "value": 1 / g})]
    parts.append(pd.DataFrame({"panel": ["d"], "series": "horizontal line 1", "value": 1.0}))
    data = pd.concat(parts, ignore_index=True)[["panel", "series", "g", "epsilon", "f", "value"]]
    return data.astype({"g": "Int64"})


def draw(data: pd.DataFrame):
    """(a)-(c) ``P1 - P2`` over budget and frequency (heat maps, one per g); (d) Lemma 1's ratio, below 1."""
    cells = data[data["series"] == _DIFF]
    vmax = float(cells["value"].abs().max())

    def heat(panel: str, cbar: bool):
        def draw_on(ax):
            sub = cells[cells["panel"] == panel]
            wide = sub.pivot(index="epsilon", columns="f", values="value").sort_index(ascending=False)
            sns.heatmap(wide, ax=ax, cmap="RdBu", norm=SymLogNorm(linthresh=1e-2, vmin=-vmax, vmax=vmax),
                        cbar=cbar, cbar_kws={"label": "P1 − P2 (> 0: partitioning wins)"}, rasterized=True,
                        xticklabels=[f"{f:.3g}" for f in wide.columns], yticklabels=[f"{e:.2g}" for e in wide.index])
            if cbar:  # plain tick labels (100, 0.01, -1: no superscripts, which a phone shows too small)
                ax.collections[0].colorbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_major_locator(_every(len(wide.columns), 4))
            ax.yaxis.set_major_locator(_every(len(wide.index), 5))
            ax.set(xlabel="frequency f_j", ylabel="total budget ε" if panel == "a" else "",
                   title=f"({panel}) P1 − P2, g = {int(sub['g'].iloc[0])}")
        return draw_on

    ratio = data[data["series"] == _RATIO].assign(gs=lambda f: [f"g = {g:g}" for g in f["g"]])
    gs = list(dict.fromkeys(ratio["gs"]))
    levels = data[data["series"].str.startswith("horizontal")].assign(
        gs=lambda f: [f"g = {g:g}" if pd.notna(g) else "" for g in f["g"]])
    lines = pd.concat([levels.assign(epsilon=ratio["epsilon"].min()), levels.assign(epsilon=ratio["epsilon"].max())],
                      ignore_index=True)
    colors = so.Nominal(dict(zip(gs, series_colors(len(gs)))), order=gs)
    lemma = (so.Plot(ratio, x="epsilon", y="value", color="gs").add(so.Line())
             .add(so.Line(linestyle=":", linewidth=1), data=lines[lines["gs"] != ""], x="epsilon", y="value",
                  color="gs")
             .add(so.Line(color="black", linestyle="--", linewidth=1), data=lines[lines["gs"] == ""], x="epsilon",
                  y="value", color=None)
             .scale(color=colors).limit(y=(0, 1.05))
             .label(x="ε", y="E(ε/g) / (E(ε)/g)", title="(d) Lemma 1: ratio < 1 (dotted: 1/g)", color=""))
    return render([heat("a", False), heat("b", False), heat("c", True), lemma], height=5.4,
                  grid=[["a", "b", "c"], ["d", "d", "d"]])


def _every(n: int, count: int):
    """Tick locator for ``count`` labels out of ``n`` heat-map cells."""
    from matplotlib.ticker import FixedLocator

    return FixedLocator((np.linspace(0, n - 1, count).round() + 0.5).tolist())


# --------------------------------------------------------------------------- claims: the appendix
def _m_prop1(store, table: str | None = None):
    d = store.figure(NAME) if table is None else store.load("03_pem", table)
    d = d[d["series"] == _DIFF]
    if d.empty:
        raise MissingInput(f"{NAME} has no P1 - P2 grid")
    return pd.DataFrame({"point": [f"g = {int(g)}, ε = {e:.3g}, f = {f:.3g}" for g, e, f in
                                   zip(d["g"], d["epsilon"], d["f"])],
                         "a": d["value"].to_numpy(), "se_a": 0.0, "b": 0.0, "se_b": 0.0})


def _m_lemma1(store, table: str | None = None):
    d = store.figure(NAME) if table is None else store.load("03_pem", table)
    d = d[(d["series"] == _RATIO) & (d["epsilon"] > 0)]
    if d.empty:
        raise MissingInput(f"{NAME} has no Lemma 1 curve")
    return pd.DataFrame({"point": [f"g = {int(g)}, ε = {e:.3g}" for g, e in zip(d["g"], d["epsilon"])],
                         "a": 1.0, "se_a": 0.0, "b": d["value"].to_numpy(), "se_b": 0.0})


_INT = "the OLH that runs (integer d' = ⌈e^ε + 1⌉, eq. (5)), not the appendix's p = 1/2, q = 1/(e^ε + 1)"
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s4-proposition-1", section="Appendix", ref="Proposition 1",
          quote=r"Numerical calculation also validate that $P_1>P_2$ in most cases.", says="P1 > P2 in most cases",
          test=Test(what="P1 − P2 > 0 over the (ε, g, f) grid", measure=_m_prop1,
                    rule=R.OrderingHolds(share=V.MOST, strict=True, floor=None, ceiling=None, what="P1 > P2"),
                    chapter="03_pem", figure=NAME, rests_on=("6-appendix",),
                    other_readings=(Alternative(_INT, "6-appendix", lambda store: _m_prop1(store, "prop1-integer-d")),
                                    ))),
    Claim(id="s4-lemma-1", section="Appendix", ref="Lemma 1", quote=r"$E(\epsilon/g)<E(\epsilon)/g$.",
          says="E(ε/g) < E(ε)/g",
          test=Test(what="the ratio E(ε/g) / (E(ε)/g) below 1 for ε > 0, g = 2, 4, 8", measure=_m_lemma1,
                    rule=R.OrderingHolds(strict=True, floor=None, ceiling=None, what="1 > E(ε/g) / (E(ε)/g)"),
                    chapter="03_pem", figure=NAME, rests_on=("6-appendix",),
                    other_readings=(Alternative(_INT, "6-appendix", lambda store: _m_lemma1(store, "prop1-integer-d")),
                                    ))),
)
