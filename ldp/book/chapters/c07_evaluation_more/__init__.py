"""Chapter 07, ``notebooks/07_evaluation_more.ipynb``: Evaluation: threshold release and design choices (sections
6.2.3-6.2.5, Figures 7 and 8).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- the k a threshold translates into, eta's configurations, the optimizer under other assumed
  distributions, the threshold probe, and the values the chapter's text quotes, one mapping per section;
* :mod:`.threshold` -- Paper Figure 7 (section 6.2.3, chapter 07): the threshold versions of PEM, SPM and MCM;
* :mod:`.design` -- Paper Figure 8 (sections 6.2.4, 6.2.5, 6.2.7, chapter 07): partitioning users, PEM's η, the
  assumed distribution.
"""
from __future__ import annotations

from . import design, threshold

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "07_evaluation_more"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (threshold, design)
