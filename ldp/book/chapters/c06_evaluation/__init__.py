"""Chapter 06, ``notebooks/06_evaluation.ipynb``: Evaluation: effect of eps and k, and estimation accuracy (sections
6.2.1, 6.2.2, 6.2.6; Figures 5, 6, 9).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- summaries of the evaluation grids, the anomalies of Figures 5 and 6 on the exact counts, the
  variance predictions, whether the AOL data is in the build;
* :mod:`.prose` -- the values the chapter's text quotes, one mapping per section, and the sentences that depend on
  the run (AOL absent, the anomalies);
* :mod:`.readings` -- the runs the claims need under another reading of the paper, saved beside the chapter's tables;
* :mod:`.eval_datasets` -- The data sets of section 6.1 (chapter 06): their sizes, against the numbers the paper
  gives;
* :mod:`.eval_vary` -- Paper Figures 5 and 6 (sections 6.2.1, 6.2.2, chapter 06): F1 and NCR of PEM, MCM and SPM on
  three data sets;
* :mod:`.eval_domain` -- PEM, MCM and SPM against the domain size (chapter 06): the introduction's claim that PEM's
  advantage grows with it;
* :mod:`.eval_variance` -- Paper Figure 9 (section 6.2.6, chapter 06): the squared error of the estimated counts,
  against eq. (3);
* :mod:`.eval_engines` -- The engine check of chapter 06 (not a paper figure): one protocol-engine run among many
  count-level runs.
"""
from __future__ import annotations

from . import eval_datasets, eval_domain, eval_engines, eval_variance, eval_vary

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "06_evaluation"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (eval_datasets, eval_vary, eval_domain, eval_variance, eval_engines)
