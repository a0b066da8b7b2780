"""The protocol engine: supports computed from the users' real reports."""
from __future__ import annotations

import numpy as np

from ..core import ProtocolReports, Question
from .base import Selection, SupportSource

__all__ = ["ReportSupport"]


class ReportSupport(SupportSource):
    """Supports computed from real reports with the oracle's ``support`` (the protocol engine).

    Parameters
    ----------
    reports : ProtocolReports
        What the users sent (:meth:`ldp.protocols.HeavyHitterProtocol.privatize`).
    rng : numpy.random.Generator
        Stream for the tie-breaking keys.
    """

    engine = "protocol"

    def __init__(self, reports: ProtocolReports, *, rng: np.random.Generator):
        super().__init__(reports.plan, reports.sizes, rng=rng)
        self.reports = reports

    def _reports(self, g: int, q: Question):
        return self.reports.group_reports(g)[self.plan.slot(g, q)]

    def supports(self, groups, question, cands) -> np.ndarray:
        vals = cands.values()
        oracle = question.oracle()
        total = np.zeros(vals.shape[0], dtype=np.int64)
        for g in groups:
            r = self._reports(g, question)
            if len(r):
                total += oracle.support(r, vals)
        return total

    def top(self, groups, question, cands, K, *, block=None, min_support=None, remember=False) -> Selection:
        return self._select_all(self.supports(groups, question, cands), groups, K, block=block,
                                min_support=min_support)

    def pair(self, group, qa, qb, A, B):
        # per-user support indicators (OLH, SPM's oracle), shape (len(patterns), N_g)
        SA = qa.oracle().support_indicators(self._reports(group, qa), A).astype(np.float64)
        SB = qb.oracle().support_indicators(self._reports(group, qb), B).astype(np.float64)
        I = np.rint(SA @ SB.T).astype(np.int64)
        return SA.sum(1).astype(np.int64), SB.sum(1).astype(np.int64), I
