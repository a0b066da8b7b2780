"""Chapter 08, ``notebooks/08_after_pem.ipynb``: After PEM: TreeHist and SFP on the paper's grids (ours).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- the successors' grid specifications, their tuning and what each costs a deployer;
* :mod:`.after_pem` -- After PEM (chapter 08): PEM beside TreeHist and SFP on the grids of paper Figures 5 and 6.
"""
from __future__ import annotations

from . import after_pem

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "08_after_pem"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (after_pem,)
