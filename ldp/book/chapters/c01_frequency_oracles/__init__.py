"""Chapter 01, ``notebooks/01_frequency_oracles.ipynb``: Frequency oracles: GRR, OLH and their variances (paper section
2.2, eq. (1)-(3), Figure A.1).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- the oracles' simulations against their formulas and the eps-LDP ratio check;
* :mod:`.oracle_examples` -- The worked examples of section 2.2 (chapter 01): GRR at ε = ln 49, OLH at e^ε = 10,
  computed by the library;
* :mod:`.oracle_variance` -- The variance of OLH against its hash range d', and of GRR against OLH (chapter 01;
  paper section 2.2, eqs. (1)-(3)).
"""
from __future__ import annotations

from . import oracle_examples, oracle_variance

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "01_frequency_oracles"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (oracle_examples, oracle_variance)
