"""Claims as data: every verdict of the reproduction report computed by a stated rule.

* :mod:`ldp.reporting.verdicts`: the verdict vocabulary, the tolerances and the :class:`Decision`;
* :mod:`ldp.reporting.rules`: the five decision rules;
* :mod:`ldp.reporting.claims`: the registry of the paper's claims (sections 2-7), each with a
  verbatim quote, what it measures, its rule and its flags, and ours about the protocols after PEM;
* :mod:`ldp.reporting.results`: :class:`ResultStore`, where the claims read from (figure CSVs and
  a few named result tables);
* :mod:`ldp.reporting.report`: evaluation against a store and the MyST renderings (report page,
  scorecard, evidence boxes);
* :mod:`ldp.reporting.pages`: the files they become (the book's generated pages and evidence data,
  a rerun's claims table) and the command line ``python -m ldp.reporting``.
"""
from .claims import CLAIMS, Claim, get_claim
from .pages import write_book_report, write_outputs, write_rerun_report
from .report import evaluate, render_evidence, render_report, render_scorecard
from .results import ResultStore
from .rules import VERDICTS, Decision

__all__ = ["CLAIMS", "Claim", "get_claim", "evaluate", "render_report", "render_scorecard", "render_evidence",
           "ResultStore", "VERDICTS", "Decision", "write_outputs", "write_book_report", "write_rerun_report"]
