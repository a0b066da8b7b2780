"""Chapter 09, ``notebooks/09_malicious_users.ipynb``: Malicious users: how many fake users plant a heavy hitter
(ours).

Everything the chapter computes, draws and claims sits in this folder:

* :mod:`.compute` -- the tidy tables of the attacks and the server's checks;
* :mod:`.malicious_gain` -- Chapter 09 (malicious users, ours): what one fake report is worth, closed form beside
  measurement;
* :mod:`.malicious_threshold` -- Chapter 09 (malicious users, ours): the smallest share of fake users that plants
  targets in the release;
* :mod:`.malicious_placement` -- Chapter 09 (malicious users, ours): PEM when fake users choose their group, and the
  consistency check;
* :mod:`.malicious_detector` -- Chapter 09 (malicious users, ours): the support-count detector of crafted reports;
* :mod:`.malicious_adaptive` -- Chapter 09 (malicious users, ours): attackers who know the server's checks, and a
  defence on the aggregates;
* :mod:`.malicious_audit` -- Chapter 09 (malicious users, ours): the empirical privacy audit of the deployed client.
"""
from __future__ import annotations

from . import (
    malicious_adaptive,
    malicious_audit,
    malicious_detector,
    malicious_gain,
    malicious_placement,
    malicious_threshold,
)

__all__ = ["CHAPTER", "FIGURES"]

#: the chapter's notebook (``notebooks/<CHAPTER>.ipynb``), as claims and result tables name it
CHAPTER = "09_malicious_users"
#: its figure and table modules, in the order the report lists their claims
FIGURES = (malicious_gain, malicious_threshold, malicious_placement, malicious_detector, malicious_adaptive,
           malicious_audit)
