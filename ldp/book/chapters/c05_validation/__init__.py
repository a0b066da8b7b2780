"""Chapter 05, ``notebooks/05_validation.ipynb``: Validation: the analysis against simulation (section 5, Figures 2-4).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- the identification and utility tables of section 5's grids;
* :mod:`.identification` -- Paper Figure 2 (section 5.1, chapter 05): each value's identification probability,
  simulated and by eq. (5);
* :mod:`.utility` -- Paper Figures 3 and 4 (sections 5.2, 5.3, chapter 05): PEM's utility, simulated and by eq. (4).
"""
from __future__ import annotations

from . import identification, utility

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "05_validation"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (identification, utility)
