"""The strawman of section 3.1: one segment per user, candidates = Cartesian product."""
from __future__ import annotations

import numpy as np

from ..core import ExplicitCandidates, Question, RangeCandidates, RoundInfo, join_parts
from ..engines import SupportSource
from ..validation import check_int
from .sizing import int_root, split_bits
from .twophase import TwoPhaseProtocol

__all__ = ["Strawman", "strawman_sizes"]


def strawman_sizes(m: int, g: int, k: int, query_limit: int):
    """Per-segment top-set sizes ``c_alpha`` with ``prod c_alpha <= query_limit - sum 2^s_alpha``.

    Returns ``None`` when fewer than ``k`` product candidates fit.
    """
    bounds = split_bits(m, g)
    seg = sum(1 << (b - a) for a, b in bounds)
    room = query_limit - seg
    if room < 1:
        return None
    c = int_root(room, g)
    cs = [min(c, 1 << (b - a)) for a, b in bounds]
    # use the leftover room: raise sizes one segment at a time while the product fits
    grew = True
    while grew:
        grew = False
        for i, (a, b) in enumerate(bounds):
            if cs[i] < (1 << (b - a)):
                prod = int(np.prod([x for j, x in enumerate(cs) if j != i], dtype=object)) * (cs[i] + 1)
                if prod <= room:
                    cs[i] += 1
                    grew = True
    if int(np.prod(cs, dtype=object)) < min(k, 2**m):
        return None
    return bounds, cs


def _smallest_limit(m: int, g: int, k: int) -> int:
    """Smallest ``query_limit`` accepted by :func:`strawman_sizes` for ``g`` segments."""
    lo = sum(1 << (b - a) for a, b in split_bits(m, g))
    hi = lo + 1
    while strawman_sizes(m, g, k, hi) is None:
        hi = lo + 2 * (hi - lo)
    while lo < hi:  # strawman_sizes(..., hi) succeeds
        mid = (lo + hi) // 2
        if strawman_sizes(m, g, k, mid) is None:
            lo = mid + 1
        else:
            hi = mid
    return hi


class Strawman(TwoPhaseProtocol):
    """The strawman method of section 3.1 (for completeness and figure 1).

    The value is cut into ``g`` segments; each user picks one segment (one
    group per segment) and reports it and the whole value, each with OLH at
    ``epsilon / 2``.  The aggregator keeps the ``c_alpha`` best patterns of
    each segment, tests the Cartesian product ``C_1 x ... x C_g`` with the
    whole-value reports and releases the top ``k``.

    Parameters
    ----------
    epsilon, k, m, query_limit, threshold, final_fraction
        See :class:`~ldp.protocols.TwoPhaseProtocol` (a segment and the whole
        value): ``epsilon <= 42.98``, or ``21.49`` with ``final_fraction``.
    segments : int, optional
        ``g``; default the smallest ``g`` for which the segment queries plus a
        product of at least ``k`` candidates fit in ``query_limit``.  The
        per-segment sizes ``c_alpha`` are then as large as the remaining
        query budget allows (``prod c_alpha <= query_limit - sum 2^s_alpha``).

    References
    ----------
    Paper section 3.1.
    """

    name = "Strawman"

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, final_fraction: float | None = None,
                 segments: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold, final_fraction=final_fraction)
        if segments is not None:
            g = check_int(segments, "segments", 1, self.m)
            res = strawman_sizes(self.m, g, self.k, self.query_limit)
            if res is None:
                raise ValueError(f"query_limit = {self.query_limit} is too small for the strawman with {g} "
                                 f"segments, m = {self.m}, k = {self.k}")
        else:
            res, g = None, None
            for gg in range(1, self.m + 1):
                res = strawman_sizes(self.m, gg, self.k, self.query_limit)
                if res is not None:
                    g = gg
                    break
            if res is None:
                need = min(_smallest_limit(self.m, gg, self.k) for gg in range(1, self.m + 1))
                raise ValueError(f"query_limit = {self.query_limit} is too small for the strawman with "
                                 f"m = {self.m}, k = {self.k}: the smallest limit that works is {need}")
        self.segments = g
        self.bounds, self.top_sizes = res
        self._check_epsilon_limit()

    @property
    def params(self) -> dict:
        return {**super().params, "final_fraction": self.final_fraction, "segments": self.segments,
                "top_sizes": list(self.top_sizes)}

    def _part_questions(self, epsilon: float, seed: int) -> list[Question]:
        return [Question(a, b, epsilon) for a, b in self.bounds]

    def _aggregate(self, source: SupportSource) -> list[RoundInfo]:
        seg, whole = self._plan_questions(source.plan)
        rounds = [self._round(source, q, RangeCandidates(1 << q.seg_bits, q.seg_bits), self.top_sizes[al],
                              name=f"segment {al + 1}", kind="segment") for al, q in enumerate(seg)]
        kept = [r.kept for r in rounds]
        # Cartesian product C_1 x ... x C_g
        grids = np.meshgrid(*[np.arange(len(c)) for c in kept], indexing="ij")
        vals = join_parts([c[gr.ravel()] for c, gr in zip(kept, grids)], [q.seg_bits for q in seg])
        rounds.append(self._final(source, whole, ExplicitCandidates(vals, self.m)))
        return rounds
