"""After PEM (chapter 08): PEM beside TreeHist and SFP on the grids of paper Figures 5 and 6.

One row of panels per protocol family, one column per data set: PEM, the family's
published settings and its tuned settings with the budget split and with
partitioned users (:mod:`ldp.book.chapters.c08_after_pem.compute`).  The paper's section 7
predicts TreeHist's weakness (one group of users per bit violates Principle 2);
that sentence is the paper's and is tested as such.  Everything else here is
**ours** (``ours=True``): how PEM compares with the protocols that came after
it, "where PEM still wins and where it does not".  The claims read the
figures' F1 (the chapter plots F1 only).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import seaborn.objects as so

from ...claims import rules as R
from ...claims.claim import Alternative, Claim, ClaimFields, Measurement, MissingInput, Readings, Test
from ...claims.measures import aol_note, eval_points, pem_vs_best_other, require
from ...plotting import METHOD_STYLE, interval, render
from .compute import series_pairs

__all__ = ["NAMES", "ENGINES", "TITLES", "PANELS", "FAMILIES", "SUCCESSORS", "frame", "draw", "series_looks",
           "CLAIMS"]

#: figure name by the varied parameter
NAMES = {"epsilon": "fig-after-vary-eps", "k": "fig-after-vary-k"}
ENGINES = {name: "count engine (10 runs), PEM, TreeHist and SFP" for name in NAMES.values()}
TITLES = {NAMES["epsilon"]: "Figure 5's grid with TreeHist and SFP",
          NAMES["k"]: "Figure 6's grid with TreeHist and SFP"}
#: column of each data set (its title), as in paper Figures 5 and 6
PANELS = {"URL": "URL (stand-in)", "AOL": "AOL", "Synthetic": "Synthetic"}
#: each row of panels: a family's published settings, then its tuned ones (budget split, partitioned users)
FAMILIES = {"TreeHist": ("TreeHist", "TreeHist (8 bits)", "TreeHist (tuned)", "TreeHist (tuned, partitioned users)"),
            "SFP": ("SFP", "SFP (Hadamard sketch)", "SFP (tuned)", "SFP (tuned, partitioned users)")}
#: the protocols that came after PEM, as the chapter labels them
SUCCESSORS = tuple(s for series in FAMILIES.values() for s in series)
CHAPTER = "08_after_pem"
#: the bar TreeHist and SFP should reach on a clear data set at a large budget (F1 at least 0.8 at ε = 4)
BAR_F1, BAR_EPS = 0.8, 4.0
#: line, marker and fill of each place in a family's row (published, second published, tuned, tuned partitioned)
_LOOK = (("--", "D", "white"), (":", "v", "white"), ("-", "o", None), ("-.", "s", None))


def frame(summary: pd.DataFrame, *, x: str) -> pd.DataFrame:
    """The figure's data: ``panel, row, dataset, metric, protocol, <x>, mean, std, runs`` (F1).

    ``summary`` is :func:`~ldp.experiments.summarize` by ``dataset, protocol, x`` (metric ``f1``). Panels (a)-(c)
    are the TreeHist row, (d)-(f) the SFP row, one per data set; PEM is drawn (and listed) in both rows.
    """
    parts = []
    for i, (family, series) in enumerate(FAMILIES.items()):
        for j, ds in enumerate(PANELS):
            sub = summary[(summary["dataset"] == ds) & summary["protocol"].isin(("PEM", *series))]
            if len(sub):
                parts.append(pd.DataFrame({"panel": "abcdef"[3 * i + j], "row": family, "dataset": ds, "metric": "f1",
                                           "protocol": sub["protocol"].astype(str), x: sub[x], "mean": sub["f1_mean"],
                                           "std": sub["f1_std"], "runs": sub["f1_count"]}))
    return pd.concat(parts, ignore_index=True)


def draw(data: pd.DataFrame, *, x: str, xlabel: str, missing: Mapping[str, str] | None = None):
    """F1 against ``x``: a row per family, a column per data set; mean ± 2 SE.

    Each series' line is a layer of its own with its line style, marker, fill and colour fixed
    (:func:`series_looks`), in the legend's order; then one layer of error bars maps the protocol to the colour
    alone.  (Mapping the protocol to all four properties would make seaborn look up every combination of their
    levels, 9⁴ per panel, to split the rows.)
    ``missing`` maps a data set without results to the reason, written in its panels.
    """
    titles = {(fam, ds): f"({'abcdef'[3 * i + j]}) {title}, {fam}" for i, fam in enumerate(FAMILIES)
              for j, (ds, title) in enumerate(PANELS.items())}
    d = interval(data, "mean", "std", scale=2, runs="runs")  # ± 2 SE
    d["title"] = list(map(titles.get, zip(data["row"], data["dataset"])))
    looks = series_looks()
    series = {s: d[d["protocol"] == s] for s in looks}
    plot = so.Plot(d, x=x, y="mean").facet(col="title", wrap=3, order=list(titles.values()))
    for s, look in looks.items():  # the lines, each in the legend
        plot = plot.add(so.Line(linewidth=1.2, pointsize=4.5, **look), data=series[s], label=s)
    colors = so.Nominal({s: look["color"] for s, look in looks.items()}, order=list(looks))
    plot = (plot.add(so.Range(), color="protocol", ymin="lo", ymax="hi", legend=False)  # then their error bars
            .scale(color=colors).limit(y=(-0.03, 1.03)).label(x=xlabel, y="F1", title=str))
    fig, missing = render(plot, height=5.6, ncol=2), missing or {}  # two columns: TreeHist under PEM, SFP
    for ax, (_, ds) in zip(fig.axes, titles):  # the panels, in the facets' order
        if ds in missing:
            ax.text(0.5, 0.5, f"No {ds} results:\n{missing[ds]}\n(see data/README.md)", ha="center", va="center",
                    transform=ax.transAxes, wrap=True)
    return fig


def series_looks() -> dict[str, dict[str, str]]:
    """Each series of the figures, in the legend's order (PEM, then each family's row), with its ``linestyle``,
    ``marker``, ``fillcolor`` and ``color`` (the family's): published settings dashed or dotted with open
    markers, tuned ones solid or dash-dotted with filled markers."""
    specs = {"PEM": ("-", METHOD_STYLE["PEM"]["marker"], None)} | dict(zip(SUCCESSORS, _LOOK * len(FAMILIES)))
    out = {}
    for s, (linestyle, marker, fill) in specs.items():
        color = METHOD_STYLE[s.split()[0]]["color"]
        out[s] = {"linestyle": linestyle, "marker": marker, "fillcolor": fill or color, "color": color}
    return out


# --------------------------------------------------------------------------- claims: section 7 and ours
def _f1(store, name: str) -> pd.DataFrame:
    """The figure's F1 points, each once (PEM is drawn in both rows)."""
    df = eval_points(store, name)
    return df[df["metric"] == "f1"].drop_duplicates(["dataset", "protocol", next(x for x in NAMES if x in df)])


def _pem_against(others, figure=None):
    """PEM against the best of ``others`` at every (data set, x) point of the chapter's grids (or of ``figure``)."""
    xs = {v: k for k, v in NAMES.items()}

    def measure(store):
        parts, note = [], ""
        for name in [figure] if figure else NAMES.values():
            df = _f1(store, name)
            if not set(others) & set(df["protocol"]):
                raise MissingInput(f"{name} has none of {', '.join(others)}")
            parts.append(pem_vs_best_other(df, xs[name], metrics=("f1",), others=others))
            note = note or aol_note(df)
        return Measurement(pd.concat(parts, ignore_index=True), note)
    return measure


def _m_th8_over_th1(store, fewer: str = "TreeHist (8 bits)"):
    """TreeHist with 8 bits per level (m/8 groups; or the series ``fewer``) against one bit per level (m - 1)."""
    t = pd.concat([series_pairs(_f1(store, name), x, fewer, "TreeHist") for x, name in NAMES.items()])
    if t.empty:
        raise MissingInput(f"the chapter's grids have no TreeHist pair (one bit per level and {fewer})")
    return t


def _m_bar(store, series=SUCCESSORS):
    df = _f1(store, NAMES["epsilon"])
    require(df["epsilon"], BAR_EPS, "ε")
    df = df[(df["dataset"] == "Synthetic") & np.isclose(df["epsilon"], BAR_EPS) & df["protocol"].isin(series)]
    if df.empty:
        raise MissingInput(f"{NAMES['epsilon']} has no {' or '.join(series)} on the synthetic set")
    return pd.DataFrame({"point": "Synthetic, ε = 4, k = 16: " + df["protocol"] + "'s F1", "a": df["mean"].to_numpy(),
                         "se_a": df["se"].to_numpy(), "b": BAR_F1, "se_b": 0.0})


_PUBLISHED, _TUNED = (tuple(s for series in FAMILIES.values() for s in series[i:i + 2]) for i in (0, 2))
_PUB = "TreeHist and SFP with their published settings only (not tuned)"
_TH = Readings.TREEHIST
_SETTING = {"n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20}
_WHERE = "Say plainly where PEM still wins and where it does not."
_BEST = "the best of TreeHist and SFP (published and tuned settings)"
_BEATS = R.OrderingHolds(what="PEM at least the best successor")
_BOTH: ClaimFields = dict(chapter=CHAPTER, figure=NAMES["epsilon"], reads=tuple(NAMES.values()))
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s7-treehist-poor", section="7", ref="Section 7, Principle 2",
          quote=r"dividing the population into $m$ groups will result in poor accuracy.",
          says="TreeHist (one group per bit) is less accurate than PEM",
          note="The paper's sentence about TreeHist (it did not run it); measured here on its grids.",
          test=Test(what="PEM against TreeHist with one bit per level at every point of both grids (F1)",
                    measure=_pem_against(("TreeHist",)),
                    rule=R.OrderingHolds(strict=True, what="PEM above TreeHist (one bit per "
                                                            "level)"),
                    setting=_SETTING, rests_on=("url", _TH),
                    other_readings=(Alternative(
                        "TreeHist with its tuned bits per level (budget split or partitioned users), not one bit", _TH,
                        _pem_against(FAMILIES["TreeHist"][2:])),),
                    **_BOTH)),
    Claim(id="ours-treehist-fewer-groups", section="7", ref="Principle 2 (ours: applied to TreeHist)",
          quote=r"the key to improve accuracy is to reduce the number of groups.",
          says="fewer groups, better (the paper's Principle 2)", kind="ours",
          note="Ours: the paper states the principle for PEM; the TreeHist variant is this project's test of it.",
          test=Test(what="TreeHist with 8 bits per level (m/8 groups) against one bit per level (m − 1 groups), "
                         "every point",
                    measure=_m_th8_over_th1, rule=R.OrderingHolds(what="TreeHist (8 bits) at least TreeHist (1 bit)"),
                    setting=_SETTING, rests_on=("url", _TH),
                    other_readings=(Alternative(
                        "TreeHist's tuned bits per level (2 to 10: fewer groups) against one bit", _TH,
                        lambda store: _m_th8_over_th1(store, "TreeHist (tuned)"),
                        R.OrderingHolds(what="TreeHist (tuned) at least TreeHist (1 bit)")),),
                    **_BOTH)),
    Claim(id="ours-pem-beats-successors-eps", section="7", ref="Figure 5's grid (ours)", quote=_WHERE,
          says="PEM at least as good as TreeHist and SFP (our claim)", kind="ours",
          test=Test(what=f"PEM against {_BEST} at each (data set, ε), k = 16",
                    measure=_pem_against(SUCCESSORS, NAMES["epsilon"]), rule=_BEATS, chapter=CHAPTER,
                    figure=NAMES["epsilon"], setting={"k_fixed": 16, **_SETTING},
                    rests_on=("url", Readings.TREEHIST, Readings.SFP),
                    other_readings=(Alternative(_PUB, _TH, _pem_against(_PUBLISHED, NAMES["epsilon"])),))),
    Claim(id="ours-pem-beats-successors-k", section="7", ref="Figure 6's grid (ours)", quote=_WHERE,
          says="PEM at least as good as TreeHist and SFP (our claim)", kind="ours",
          test=Test(what=f"PEM against {_BEST} at each (data set, k), ε = 2",
                    measure=_pem_against(SUCCESSORS, NAMES["k"]), rule=_BEATS, chapter=CHAPTER, figure=NAMES["k"],
                    setting={"eps_fixed": 2.0, **_SETTING}, rests_on=("url", Readings.TREEHIST, Readings.SFP),
                    other_readings=(Alternative(_PUB, _TH, _pem_against(_PUBLISHED, NAMES["k"])),))),
    Claim(id="ours-pem-beats-sfp", section="7", ref="Figures 5 and 6's grids (ours)", quote=_WHERE,
          says="PEM at least as good as SFP (our claim)", kind="ours",
          test=Test(what="PEM against the best SFP (published and tuned settings) at every point of both grids (F1)",
                    measure=_pem_against(FAMILIES["SFP"]), rule=R.OrderingHolds(what="PEM at least SFP"),
                    setting=_SETTING, rests_on=("url", Readings.SFP),
                    other_readings=(Alternative(
                        "SFP with its published settings only (not tuned)", Readings.SFP,
                                                _pem_against(FAMILIES["SFP"][:2])),),
                    **_BOTH)),
    Claim(id="ours-successors-f1-08", section="7", ref="the chapter's bar for TreeHist and SFP (ours)",
          quote="find the top 8 of a clear Zipf data set (s = 1.5, 5,000 distinct 32-bit values, n = 200,000, ε = 4) "
                "with F1 ≥ 0.8",
          says=f"TreeHist and SFP reach F1 ≥ {BAR_F1:g} at a large budget (our bar)", kind="ours",
          note="The bar TreeHist and SFP had to pass when they were added is a Zipf set (s = 1.5, n = 200,000, k = 8; "
               "tested in the protocol tests); here it is read at the chapter's own setting, the synthetic set of "
               "section 6.1 with k = 16.",
          test=Test(what=f"F1 of every TreeHist and SFP series on the synthetic set at ε = {BAR_EPS:g}, k = 16",
                    measure=_m_bar, rule=R.OrderingHolds(floor=None, ceiling=None, what=f"F1 at least {BAR_F1:g}"),
                    chapter=CHAPTER, figure=NAMES["epsilon"],
                    setting={"epsilons": (BAR_EPS,), "k_fixed": 16, **_SETTING},
                    rests_on=(Readings.TREEHIST, Readings.SFP),
                    other_readings=(Alternative(
                        "the tuned series only (bits per level or hash bits chosen on the grid)", _TH,
                        lambda store: _m_bar(store, _TUNED)),))),
)
