"""Chapter 03, ``notebooks/03_pem.ipynb``: PEM and its analysis: identification probability, the optimizer and the
appendix (section 4).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- PEM's configurations under the rule and the optimizer, a run's rounds, the optimizer's
  readings;
* :mod:`.pem_readings` -- One round of PEM under each reading of eq. (5) against a Monte-Carlo of the model (chapter
  03, section 4.2);
* :mod:`.pem_optimizer` -- PEM's optimizer (chapter 03, section 4.3): predicted utility against η, the rule's and
  the optimizer's choices;
* :mod:`.pem_remarks` -- Section 4.3's remarks on PEM's parameters (chapter 03): |C_i| against k, and γ against η;
* :mod:`.pem_prop1` -- The appendix's Proposition 1 and Lemma 1 (chapter 03): partitioning users against splitting
  the budget;
* :mod:`.joint_estimator` -- The appendix's joint estimator for SPM (chapter 03): simulated against the true counts.
"""
from __future__ import annotations

from . import joint_estimator, pem_optimizer, pem_prop1, pem_readings, pem_remarks

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "03_pem"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (pem_readings, pem_optimizer, pem_remarks, pem_prop1, joint_estimator)
