"""After PEM (chapter 08): TreeHist and SFP on the grids of Figures 5 and 6.

The paper's section 7 predicts TreeHist's weakness (one group of users per bit
violates Principle 2); that sentence is the paper's and is tested as such.
Everything else here is **ours** (``ours=True``): how PEM compares with the
protocols that came after it, on the paper's grids, as issue 14 asks the
chapter to say plainly ("where PEM still wins and where it does not").  The
claims read the chapter's figure CSVs (``fig-after-vary-eps``,
``fig-after-vary-k``: columns ``dataset, metric, protocol, epsilon | k, mean,
std, runs``), F1 only (the chapter plots F1).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import rules as R
from .base import Claim, Measurement, MissingInput, _aol_note, _eval_points, _g, _pem_vs_best_other, _require

__all__ = ["CLAIMS", "AFTER_FIGURES", "SUCCESSORS"]

#: the chapter's figures: name -> the grid's parameter
AFTER_FIGURES = {"fig-after-vary-eps": "epsilon", "fig-after-vary-k": "k"}
#: the protocols that came after PEM, as the chapter labels them
SUCCESSORS = ("TreeHist", "TreeHist (8 bits)", "SFP")
CHAPTER = "08_after_pem"
_SETTING = {"n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20}
_TREEHIST = "treehist"
_SFP = "sfp"
#: issue 14's bar for TreeHist and SFP ("F1 >= 0.8" on a clear data set at a large budget)
ISSUE_F1 = 0.8
ISSUE_EPS = 4.0


def _grid(store, name: str) -> pd.DataFrame:
    df = _eval_points(store, name)
    return df[df["metric"] == "f1"]


def _pem_against(others, figures=tuple(AFTER_FIGURES)):
    """PEM against the best of ``others`` at every (data set, x) point of the chapter's grids."""
    def measure(store):
        parts, note = [], ""
        for name in figures:
            df = _grid(store, name)
            if not set(others) & set(df["protocol"]):
                raise MissingInput(f"{name} has none of {', '.join(others)}")
            parts.append(_pem_vs_best_other(df, AFTER_FIGURES[name], metrics=("f1",), others=others))
            note = note or _aol_note(df)
        return Measurement(pd.concat(parts, ignore_index=True), note)
    return measure


def _m_th8_over_th1(store):
    """TreeHist with 8 bits per level (m/8 groups) against one bit per level (m - 1 groups)."""
    rows = []
    for name, x in AFTER_FIGURES.items():
        df = _grid(store, name)
        for (ds, xv), g in df.groupby(["dataset", x], sort=False):
            g = g.set_index("protocol")
            if not {"TreeHist", "TreeHist (8 bits)"} <= set(g.index):
                continue
            rows.append({"point": f"{ds}, {'ε' if x == 'epsilon' else 'k'} = {_g(xv)}",
                         "a": g.loc["TreeHist (8 bits)", "mean"], "se_a": g.loc["TreeHist (8 bits)", "se"],
                         "b": g.loc["TreeHist", "mean"], "se_b": g.loc["TreeHist", "se"]})
    if not rows:
        raise MissingInput("the chapter's grids have no TreeHist pair (one and 8 bits per level)")
    return pd.DataFrame(rows)


def _m_issue_bar(protocols):
    def measure(store):
        df = _grid(store, "fig-after-vary-eps")
        _require(df["epsilon"], ISSUE_EPS, "ε")
        df = df[(df["dataset"] == "Synthetic") & np.isclose(df["epsilon"], ISSUE_EPS)
                & df["protocol"].isin(protocols)]
        if df.empty:
            raise MissingInput(f"fig-after-vary-eps has no {' or '.join(protocols)} on the synthetic set")
        return pd.DataFrame({"point": "Synthetic, ε = 4, k = 16: " + df["protocol"] + "'s F1",
                             "a": df["mean"].to_numpy(), "se_a": df["se"].to_numpy(), "b": ISSUE_F1, "se_b": 0.0})
    return measure


_ISSUE = "Say plainly where PEM still wins and where it does not."

CLAIMS: tuple[Claim, ...] = (
    Claim("s7-treehist-poor", "7", "Section 7, Principle 2",
          r"dividing the population into $m$ groups will result in poor accuracy.",
          "TreeHist (one group per bit) is less accurate than PEM",
          "PEM against TreeHist with one bit per level at every point of both grids (F1)",
          _pem_against(("TreeHist",)), R.OrderingHolds(strict=True, what="PEM above TreeHist (one bit per level)"),
          CHAPTER, "fig-after-vary-eps", ("figure:fig-after-vary-eps", "figure:fig-after-vary-k"), ("url",),
          interpretation=(_TREEHIST,), setting=_SETTING,
          note="The paper's sentence about TreeHist (it did not run it); measured here on its grids."),
    Claim("ours-treehist-fewer-groups", "7", "Principle 2 (ours: applied to TreeHist)",
          r"the key to improve accuracy is to reduce the number of groups.",
          "fewer groups, better (the paper's Principle 2)",
          "TreeHist with 8 bits per level (m/8 groups) against one bit per level (m − 1 groups), every point",
          _m_th8_over_th1, R.OrderingHolds(what="TreeHist (8 bits) at least TreeHist (1 bit)"),
          CHAPTER, "fig-after-vary-eps", ("figure:fig-after-vary-eps", "figure:fig-after-vary-k"), ("url",),
          interpretation=(_TREEHIST,), setting=_SETTING, ours=True,
          note="Ours: the paper states the principle for PEM; the TreeHist variant is this project's test of it."),
    Claim("ours-pem-beats-successors-eps", "7", "Figure 5's grid (ours)", _ISSUE,
          "PEM at least as good as TreeHist and SFP (our claim)",
          "PEM against the best of TreeHist, TreeHist (8 bits) and SFP at each (data set, ε), k = 16",
          _pem_against(SUCCESSORS, ("fig-after-vary-eps",)), R.OrderingHolds(what="PEM at least the best successor"),
          CHAPTER, "fig-after-vary-eps", ("figure:fig-after-vary-eps",), ("url",),
          interpretation=(_TREEHIST, _SFP), setting={"k_fixed": 16, **_SETTING}, ours=True),
    Claim("ours-pem-beats-successors-k", "7", "Figure 6's grid (ours)", _ISSUE,
          "PEM at least as good as TreeHist and SFP (our claim)",
          "PEM against the best of TreeHist, TreeHist (8 bits) and SFP at each (data set, k), ε = 2",
          _pem_against(SUCCESSORS, ("fig-after-vary-k",)), R.OrderingHolds(what="PEM at least the best successor"),
          CHAPTER, "fig-after-vary-k", ("figure:fig-after-vary-k",), ("url",),
          interpretation=(_TREEHIST, _SFP), setting={"eps_fixed": 2.0, **_SETTING}, ours=True),
    Claim("ours-pem-beats-sfp", "7", "Figures 5 and 6's grids (ours)", _ISSUE,
          "PEM at least as good as SFP (our claim)", "PEM against SFP at every point of both grids (F1)",
          _pem_against(("SFP",)), R.OrderingHolds(what="PEM at least SFP"),
          CHAPTER, "fig-after-vary-eps", ("figure:fig-after-vary-eps", "figure:fig-after-vary-k"), ("url",),
          interpretation=(_SFP,), setting=_SETTING, ours=True),
    Claim("ours-successors-f1-08", "7", "issue 14 (ours)",
          "find the top 8 of a clear Zipf data set (s = 1.5, 5,000 distinct 32-bit values, n = 200,000, ε = 4) "
          "with F1 ≥ 0.8",
          f"TreeHist and SFP reach F1 ≥ {ISSUE_F1:g} at a large budget (our bar)",
          f"F1 of TreeHist (both variants) and SFP on the synthetic set at ε = {ISSUE_EPS:g}, k = 16",
          _m_issue_bar(SUCCESSORS),
          R.OrderingHolds(floor=None, ceiling=None, what=f"F1 at least {ISSUE_F1:g}"),
          CHAPTER, "fig-after-vary-eps", ("figure:fig-after-vary-eps",),
          interpretation=(_TREEHIST, _SFP), setting={"epsilons": (ISSUE_EPS,), "k_fixed": 16, **_SETTING},
          ours=True,
          note="Issue 14 sets this bar on a Zipf set (s = 1.5, n = 200,000, k = 8, tested in tests/test_after_pem.py);"
               " here it is read at the chapter's own setting, the synthetic set of section 6.1 with k = 16."),
)
