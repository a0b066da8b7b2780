"""Claims as data: every verdict of the reproduction report computed by a stated rule, in one place.

* :mod:`ldp.reporting.verdicts`: the verdict vocabulary, the tolerances and the :class:`Decision`;
* :mod:`ldp.reporting.rules`: the five decision rules;
* :mod:`ldp.reporting.claims`: what a claim is (:class:`Claim`), the :class:`Registry` of them, the paper's
  numbers and quotes; the claims themselves are written beside their figures, in :mod:`ldp.figures`;
* :mod:`ldp.reporting.measures`: the readers the figures' claims share (PEM against its rivals, series, ...);
* :mod:`ldp.reporting.results`: :class:`ResultStore`, where the claims read from (figure CSVs and
  a few named result tables);
* :mod:`ldp.reporting.report`: evaluation against a store (:func:`evaluate_claim`, the one place a
  verdict is computed) and the MyST renderings (report page, scorecard, evidence boxes);
* :mod:`ldp.reporting.pages`: the files they become (the book's generated pages and evidence data,
  a rerun's claims table);
* :mod:`ldp.reporting.tables`: result tables for the page (compact number formats).
"""
from .claims import Claim, Measurement, MissingInput, NotCovered, Registry
from .pages import write_book_report, write_outputs, write_rerun_report
from .report import evaluate, evaluate_claim, render_evidence, render_report, render_scorecard
from .results import ResultStore
from .tables import compact_table, format_number, table_view
from .verdicts import VERDICTS, Decision

__all__ = ["Claim", "Measurement", "MissingInput", "NotCovered", "Registry", "evaluate", "evaluate_claim",
           "render_report", "render_scorecard", "render_evidence", "ResultStore", "VERDICTS", "Decision",
           "write_outputs", "write_book_report", "write_rerun_report", "compact_table", "format_number", "table_view"]
