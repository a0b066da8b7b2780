"""Claims as data: every verdict of the reproduction report computed by a stated rule, in one place.

Modules: ``verdicts`` (vocabulary, tolerances, :class:`Decision`), ``rules`` (the five decision rules),
``claim`` (:class:`Claim`, :class:`Registry`, the paper's numbers; the claims themselves sit beside their
figures in :mod:`ldp.book.chapters`), ``measures`` (shared readers), ``readings`` (a store seen under another
reading), ``store`` (:class:`ResultStore`: what a chapter saves and the claims read) and ``evaluation``
(:func:`evaluate_claim`, the one place a verdict is computed; :func:`sentences`).  The pages are rendered above
this layer, by :mod:`ldp.book.report`.
"""
from .claim import Alternative, Cause, Claim, Measurement, MissingInput, NotCovered, NotRun, Registry
from .evaluation import evaluate, evaluate_claim, sentences
from .store import ResultStore
from .verdicts import VERDICTS, Decision

__all__ = ["Claim", "Cause", "Alternative", "Measurement", "MissingInput", "NotCovered", "NotRun", "Registry",
           "evaluate", "evaluate_claim", "sentences", "ResultStore", "VERDICTS", "Decision"]
