"""Chapter 04, ``notebooks/04_count_engine.ipynb``: The count-level engine: the exact laws of the aggregated supports.

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- the count engine against the protocol engine: supports, correlations, F1 and speed;
* :mod:`.engine_agreement` -- The count-level engine against the protocol engine (chapter 04, not a paper figure):
  supports and F1.
"""
from __future__ import annotations

from . import engine_agreement

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "04_count_engine"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (engine_agreement,)
