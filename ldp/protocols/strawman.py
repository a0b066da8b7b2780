"""The strawman of section 3.1: one segment per user, candidates = Cartesian product."""
from __future__ import annotations

import numpy as np

from ._base import HeavyHitterProtocol, int_root, split_bits
from ._core import ExplicitCandidates, Plan, Question, RangeCandidates, scaled_estimate
from ._result import RoundInfo
from ..validation import check_fraction, check_int
from ..values import concat

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


class Strawman(HeavyHitterProtocol):
    """The strawman method of section 3.1 (for completeness and figure 1).

    The value is cut into ``g`` segments; each user picks one segment (one
    group per segment) and reports it and the whole value, each with OLH at
    ``epsilon / 2``.  The aggregator keeps the ``c_alpha`` best patterns of
    each segment, tests the Cartesian product ``C_1 x ... x C_g`` with the
    whole-value reports and releases the top ``k``.

    Parameters
    ----------
    epsilon, k, m, query_limit, threshold
        See :class:`ldp.protocols.PEM`.  ``epsilon`` is at most
        ``2 ln(2**31 - 1) = 42.98`` with the budget split, at most ``21.49``
        with ``final_fraction``.
    final_fraction : float, optional
        As for :class:`ldp.protocols.SPM`: ``None`` splits each user's budget
        in two; a fraction gives that share of users the whole-value report
        (full budget) and the others their segment (full budget).
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
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold)
        self.final_fraction = None if final_fraction is None else check_fraction(final_fraction, "final_fraction")
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

    def _budget_split(self) -> int:
        return 2 if self.final_fraction is None else 1

    @property
    def params(self) -> dict:
        return {**super().params, "final_fraction": self.final_fraction, "segments": self.segments,
                "top_sizes": list(self.top_sizes)}

    def _eps(self):
        if self.final_fraction is None:
            return self.epsilon / 2, self.epsilon / 2
        return self.epsilon, self.epsilon

    def questions(self):
        e_seg, e_whole = self._eps()
        return [Question(a, b, e_seg) for a, b in self.bounds], Question(0, self.m, e_whole)

    def _plan(self, n: int, public: dict) -> Plan:
        seg, whole = self.questions()
        g = len(seg)
        if self.final_fraction is None:
            return Plan(self.m, (1.0 / g,) * g, tuple((q, whole) for q in seg))
        ff = self.final_fraction
        return Plan(self.m, ((1.0 - ff) / g,) * g + (ff,), tuple((q,) for q in seg) + ((whole,),))

    def _aggregate(self, source, plan: Plan, n: int):
        seg, whole = self.questions()
        rounds, kept = [], []
        for al, q in enumerate(seg):
            cands = RangeCandidates(1 << q.seg_bits, q.seg_bits)
            sel = source.top((al,), q, cands, self.top_sizes[al])
            vals = cands.values_at(sel.index)
            o = q.oracle()
            est = scaled_estimate(sel.support, sel.n_users, o.p, o.q, n)
            rounds.append(RoundInfo(f"segment {al + 1}", "segment", q.start, q.stop, (al,), sel.n_users,
                                    cands.size, vals, sel.support, est, q))
            kept.append(vals)
        # Cartesian product C_1 x ... x C_g
        grids = np.meshgrid(*[np.arange(len(c)) for c in kept], indexing="ij")
        idx = [gr.ravel() for gr in grids]
        vals = kept[0][idx[0]]
        bits = seg[0].seg_bits
        for s in range(1, len(seg)):
            vals = concat(vals, bits, kept[s][idx[s]], seg[s].seg_bits)
            bits += seg[s].seg_bits
        cands = ExplicitCandidates(vals, self.m)
        out = self._final(source, plan, whole, cands, rounds)
        return out, rounds
