"""Claims as data: every verdict of the reproduction report computed by a stated rule, in one place.

Modules: ``verdicts`` (vocabulary, tolerances, :class:`Decision`), ``rules`` (the five decision rules),
``claims`` (:class:`Claim`, :class:`Registry`, the paper's numbers; the claims themselves sit beside their
figures in :mod:`ldp.figures`), ``measures`` (shared readers), ``results`` (:class:`ResultStore`),
``report`` (:func:`evaluate_claim`, the one place a verdict is computed; :func:`sentences`) and ``tables``
(compact number formats).  The pages are rendered above this layer, by :mod:`ldp.report_pages`.
"""
from .claims import Alternative, Cause, Claim, Measurement, MissingInput, NotCovered, NotRun, Registry
from .report import evaluate, evaluate_claim, sentences
from .results import ResultStore
from .tables import compact_table, format_number, table_view
from .verdicts import VERDICTS, Decision

__all__ = ["Claim", "Cause", "Alternative", "Measurement", "MissingInput", "NotCovered", "NotRun", "Registry",
           "evaluate", "evaluate_claim", "sentences", "ResultStore", "VERDICTS", "Decision", "compact_table",
           "format_number", "table_view"]
