"""The protocol engine over a report store: supports streamed from disk, one group and one chunk at a time.

:class:`StreamSupport` is :class:`ldp.engines.ReportSupport` for reports that do
not fit in memory (:class:`ldp.core.reportstore.StoredReports`).  For every
question it reads the files of the groups that answer it, chunk by chunk, and
adds up each chunk's *partial support* (:meth:`ldp.oracles.FrequencyOracle.partial_support`:
OLH's supports of the candidates; FLH's tally of ``(index, y)``), then turns the
sum into supports (:meth:`~ldp.oracles.FrequencyOracle.finish_support`).
Counts are integers, so the supports, hence the selection (same tie keys, drawn
in the same order) and the result, are those of the in-memory aggregation of
the same reports, bit for bit.  Peak memory: one chunk of reports, the round's
candidates and their partial supports, whatever ``n``.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..core.reportstore import DEFAULT_CHUNK, StoredReports
from ..validation import check_int
from .base import SupportSource

__all__ = ["StreamSupport", "sum_partials"]


def sum_partials(parts) -> object | None:
    """The sum of partial supports (``None`` when there are none)."""
    total = None
    for p in parts:
        total = p if total is None else total + p
    return total


class StreamSupport(SupportSource):
    """Supports of stored reports, streamed in chunks (the protocol engine over a report store).

    Parameters
    ----------
    reports : ldp.core.reportstore.StoredReports
        An opened store (:meth:`ldp.core.ProtocolReports.open`).
    rng : numpy.random.Generator
        Stream for the tie-breaking keys.
    chunk : int
        Reports read at once.
    """

    engine = "protocol"

    def __init__(self, reports: StoredReports, *, rng: np.random.Generator, chunk: int = DEFAULT_CHUNK):
        super().__init__(reports.plan, reports.sizes, rng=rng)
        self.reports = reports
        self.chunk = check_int(chunk, "chunk", lo=1)

    def _partials(self, groups, question, vals) -> Iterator:
        """The partial supports of every chunk of every group answering ``question``."""
        o = question.oracle()
        for g in groups:
            j = self.plan.slot(g, question)
            for (r,) in self.reports.chunks(g, [j], chunk=self.chunk):
                if len(r):
                    yield o.partial_support(r, vals)

    def supports(self, groups, question, cands) -> np.ndarray:
        vals = cands.values()
        total = sum_partials(self._partials(groups, question, vals))
        if total is None:
            return np.zeros(vals.shape[0], dtype=np.int64)
        return question.oracle().finish_support(total, vals)

    def top(self, groups, question, cands, K, *, block=None, min_support=None, remember=False):
        return self._select_all(self.supports(groups, question, cands), groups, K, block=block,
                                min_support=min_support)

    def pair(self, group, qa, qb, A, B):
        """SPM's joint counts, accumulated over chunks (each chunk's product is an exact integer)."""
        ja, jb = self.plan.slot(group, qa), self.plan.slot(group, qb)
        oa, ob = qa.oracle(), qb.oracle()
        JA = np.zeros(A.shape[0], dtype=np.int64)
        JB = np.zeros(B.shape[0], dtype=np.int64)
        I = np.zeros((A.shape[0], B.shape[0]), dtype=np.int64)
        for ra, rb in self.reports.chunks(group, [ja, jb], chunk=self.chunk):
            if not len(ra):
                continue
            SA = oa.support_indicators(ra, A).astype(np.float64)
            SB = ob.support_indicators(rb, B).astype(np.float64)
            I += np.rint(SA @ SB.T).astype(np.int64)
            JA += SA.sum(1).astype(np.int64)
            JB += SB.sum(1).astype(np.int64)
        return JA, JB, I
