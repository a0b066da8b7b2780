"""Claims as data: every verdict of the reproduction report computed by a stated rule, in one place.

* :mod:`ldp.reporting.verdicts`: the verdict vocabulary, the tolerances, the :class:`Decision`, the classes of
  a cause and how the parts of one sentence combine;
* :mod:`ldp.reporting.rules`: the five decision rules;
* :mod:`ldp.reporting.claims`: what a claim is (:class:`Claim`, with its :class:`Cause` and the
  :class:`Alternative` readings), the :class:`Registry` of them, the paper's numbers and quotes; the claims
  themselves are written beside their figures, in :mod:`ldp.figures`;
* :mod:`ldp.reporting.measures`: the readers the figures' claims share (PEM against its rivals, series, ...);
* :mod:`ldp.reporting.results`: :class:`ResultStore`, where the claims read from (figure CSVs and
  a few named result tables);
* :mod:`ldp.reporting.report`: evaluation against a store (:func:`evaluate_claim`, the one place a
  verdict is computed), one row per sentence (:func:`sentences`);
* :mod:`ldp.reporting.tables`: result tables for the page (compact number formats).

The pages these become (the report with its claim explorer, the scorecard, a rerun's claims) are
rendered above this layer, by :mod:`ldp.report_pages`.
"""
from .claims import Alternative, Cause, Claim, Measurement, MissingInput, NotCovered, NotRun, Registry
from .report import evaluate, evaluate_claim, sentences
from .results import ResultStore
from .tables import compact_table, format_number, table_view
from .verdicts import VERDICTS, Decision

__all__ = ["Claim", "Cause", "Alternative", "Measurement", "MissingInput", "NotCovered", "NotRun", "Registry",
           "evaluate", "evaluate_claim", "sentences", "ResultStore", "VERDICTS", "Decision", "compact_table",
           "format_number", "table_view"]
