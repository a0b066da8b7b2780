"""Chapter 02, ``notebooks/02_existing_methods.ipynb``: Existing methods: how the strawman, SPM and MCM find candidates
(sections 3.1-3.4, Figure 1).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- what each protocol configures at the evaluation's settings and one demonstration run of each;
* :mod:`.all_methods` -- Paper Figure 1 (section 3, chapter 02): how the strawman, SPM, MCM and PEM split the users
  and the bits;
* :mod:`.plans` -- The protocols' plans at the evaluation's settings (chapter 02): groups, the last group's users,
  MCM's channels.
"""
from __future__ import annotations

from . import all_methods, plans

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "02_existing_methods"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (all_methods, plans)
