"""Claims as data: every verdict of the reproduction report computed by a stated rule.

* :mod:`ldp.reporting.rules`: the five decision rules, the verdict vocabulary and the tolerances;
* :mod:`ldp.reporting.claims`: the registry of the paper's claims (sections 2-6), each with a
  verbatim quote, what it measures, its rule and its flags;
* :mod:`ldp.reporting.results`: :class:`ResultStore`, where the claims read from (figure CSVs and
  a few named result tables);
* :mod:`ldp.reporting.report`: evaluation against a store and the MyST renderings (report page,
  scorecard, evidence boxes).
"""
from .claims import CLAIMS, Claim, get_claim
from .report import evaluate, render_evidence, render_report, render_scorecard
from .results import ResultStore
from .rules import VERDICTS, Decision

__all__ = ["CLAIMS", "Claim", "get_claim", "evaluate", "render_report", "render_scorecard", "render_evidence",
           "ResultStore", "VERDICTS", "Decision"]
