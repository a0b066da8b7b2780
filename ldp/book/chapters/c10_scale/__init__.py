"""Chapter 10, ``notebooks/10_scale.ipynb``: Internet scale: reports on disk, a cluster, and fast local hashing (ours).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- the report store at work, the cost measured in the build, FLH's price and the pool size to use:
  what the chapter computes and the values its text quotes;
* :mod:`.scale_cost` -- Chapter 10 (ours): the cost of PEM against ``n``, and what the chapter claims about it;
* :mod:`.flh_price` -- Chapter 10 (ours): FLH's accuracy price against OLH, F1 and NCR of PEM over the ``epsilon``
  grid.
"""
from __future__ import annotations

from . import flh_price, scale_cost

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "10_scale"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (scale_cost, flh_price)
