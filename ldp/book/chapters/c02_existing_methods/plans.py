"""The protocols' plans at the evaluation's settings (chapter 02): groups, the last group's users, MCM's channels.

A table, not a figure: :func:`frame` is the result table ``02_existing_methods/plans``
(:func:`ldp.book.chapters.c02_existing_methods.compute.plans_table`), the numbers behind the chapter's configuration
table, which the claims read.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...claims import rules as R
from ...claims.claim import Because, Cause, Claim, MissingInput, Test
from .compute import plans_table

__all__ = ["CHAPTER", "NAME", "ENGINES", "frame", "CLAIMS"]

CHAPTER, NAME = "02_existing_methods", "plans"
ENGINES = {f"{CHAPTER}/{NAME}": "protocol configurations (no simulation)"}


def frame(protocols, populations) -> pd.DataFrame:
    """``m, n, protocol, groups, last_group_users, channels``: :func:`~.compute.plans_table`."""
    return plans_table(protocols, populations)


def _m_channels(store) -> pd.DataFrame:
    """MCM's channels at each value length and population, against √n: log2 of their ratio."""
    t = store.load(CHAPTER, NAME)
    t = t[t["protocol"] == "MCM"]
    if t.empty:
        raise MissingInput(f"{CHAPTER}/{NAME} has no MCM")
    root = np.sqrt(t["n"].to_numpy(float))
    return pd.DataFrame({"point": [f"m = {m}, n = {n:,}: h = {h:g} channels, √n = {r:,.0f}"
                                   for m, n, h, r in zip(t["m"], t["n"], t["channels"], root)],
                         "value": np.log2(t["channels"].to_numpy(float) / root), "target": 0.0})


def _c_channels(store) -> Because:
    """MCM's channels where they are farthest from √n, and the section they follow."""
    m = _m_channels(store)
    w = m.loc[m["value"].abs().idxmax()]
    gap = abs(float(w["value"]))
    return Because("genuine", (
        f"the book's MCM follows section 6.1's k^1.5 channels: at {w['point']}, 2^{gap:.3g} = {2 ** gap:.0f} times "
        f"apart"), {"gap": gap})


#: the result tables this module's claims read (beside figure CSVs): name -> (columns, what it holds)
TABLES = {NAME: (("m", "n", "protocol", "groups", "last_group_users", "channels"),
                 "each protocol's plan at the evaluation's value lengths: groups, users of the last group, MCM's "
                 "channels h")}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s7-sqrt-n-channels", section="7", ref="MCM's channels",
          quote=r"In our experimental comparison with \hash, we already use around $\sqrt{n}$ channels for \hash,",
          says="MCM uses about √n channels",
          note="Section 6.1 says otherwise: 'propose to use k^1.5 channels', 64 for k = 16, where √n is about "
               "1,000 at n = 10^6. The book's MCM follows section 6.1.",
          test=Test(what="the channels h of the MCM of the evaluation (k = 16) at each value length and population, "
                         "against √n (log2 of h / √n)",
                    measure=_m_channels, rule=R.WithinTolerance(1.0, "around √n: within a factor 2"),
                    chapter=CHAPTER, reads=(f"{CHAPTER}/{NAME}",), setting={"k": 16}, rests_on=("mcm",),
                    cause=Cause("genuine", _c_channels))),
)
