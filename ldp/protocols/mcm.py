"""The Multiple Channel Method (MCM, Bassily and Smith), paper section 3.3 with 6.1's improvements."""
from __future__ import annotations

import numpy as np

from ..core import ExplicitCandidates, Question, RangeCandidates, RoundInfo, join_parts
from ..engines import SupportSource
from ..validation import check_int
from .sizing import ceil_pow15, fit_query_limit, split_bits
from .twophase import TwoPhaseProtocol

__all__ = ["MCM", "mcm_queries"]

#: largest block the aggregator enumerates (2**30 patterns per channel)
MAX_BLOCK_BITS = 30


def mcm_queries(m: int, channels: int, block_bits: int) -> int:
    """Oracle queries of MCM: ``sum_l h 2^(b_l)`` over the blocks, plus ``h`` final candidates."""
    G = -(-m // block_bits)
    return sum(channels << (b - a) for a, b in split_bits(m, G)) + channels


class MCM(TwoPhaseProtocol):
    """Multiple Channel Method (section 3.3) with the section 6.1 improvements.

    A public hash ``H`` (seeded at random by the aggregator for each run and
    announced to the users) sends each value to one of ``h`` channels.  The
    ``m`` bits are cut into blocks of at most ``block_bits`` bits and the
    users into one group per block; a user of group ``l`` reports, with OLH,
    the pair ``(H(v), v[block l])`` encoded as one integer.  For every channel
    and block the aggregator keeps the pattern with the highest support (the
    majority vote of the original when blocks are single bits); concatenating
    a channel's winning blocks gives one candidate per channel, and the top
    ``k`` candidates by the whole-value oracle are released.

    Parameters
    ----------
    epsilon, k, m, query_limit, threshold, final_fraction
        See :class:`~ldp.protocols.TwoPhaseProtocol`: by default a user's block
        report and whole value use ``epsilon / 2`` each, so ``epsilon`` is at
        most ``2 ln(2**31 - 1) = 42.98`` (OLH's ``d'`` at most ``2**31`` per
        report); ``21.49`` with ``final_fraction`` (section 6.2.4 uses 0.1).
    channels : int, optional
        Number of channels ``h``, at least ``k`` (MCM returns at most one
        value per channel); default ``ceil(k**1.5)`` (section 6.1).
    block_bits : int, optional
        Bits per block (1 to 30); default the largest block size whose queries
        ``sum_l h 2^(b_l) + h`` fit in ``query_limit`` (improvement 2: fewest
        groups within the query limit).

    References
    ----------
    Paper sections 3.3, 6.1, 6.2.4, 6.2.6; R. Bassily, A. Smith, "Local,
    private, efficient protocols for succinct histograms", STOC 2015.
    """

    name = "MCM"
    public_hash = True

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, final_fraction: float | None = None,
                 channels: int | None = None, block_bits: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold, final_fraction=final_fraction)
        self.channels = ceil_pow15(self.k) if channels is None else check_int(channels, "channels", 1, 2**31)
        if self.k > self.channels:
            raise ValueError(f"k = {self.k} is more than MCM can return: at most one value per channel, and "
                             f"channels = {self.channels}; give channels >= k (default ceil(k**1.5))")
        self._check_epsilon_limit()
        b = fit_query_limit(self, "block_bits", block_bits, 1, min(self.m, MAX_BLOCK_BITS),
                            lambda b: mcm_queries(self.m, self.channels, b), about=f", {self.channels} channels")
        G = -(-self.m // b)
        self.bounds = split_bits(self.m, G)
        #: the longest block actually used (blocks differ by at most one bit)
        self.block_bits = max(stop - start for start, stop in self.bounds)

    @property
    def params(self) -> dict:
        return {**super().params, "final_fraction": self.final_fraction, "channels": self.channels,
                "block_bits": self.block_bits}

    def _part_questions(self, epsilon: float, seed: int) -> list[Question]:
        return [Question(a, b, epsilon, self.channels, seed) for a, b in self.bounds]

    def _aggregate(self, source: SupportSource) -> list[RoundInfo]:
        blk, whole = self._plan_questions(source.plan)
        h = self.channels
        rounds = []
        best = []
        for l, q in enumerate(blk):
            w = q.seg_bits
            cands = RangeCandidates(h << w, q.width)
            r = self._round(source, q, cands, 1, block=1 << w, name=f"block {l + 1}", kind="block")
            rounds.append(r)  # the best pattern of each channel: kept = channel * 2**w + pattern
            pat = np.zeros(h, dtype=np.uint64)
            pat[r.kept >> np.uint64(w)] = r.kept & np.uint64((1 << w) - 1)
            best.append(pat)
        vals = join_parts(best, [q.seg_bits for q in blk])
        # one candidate per channel (duplicates merged)
        rounds.append(self._final(source, whole, ExplicitCandidates(vals, self.m)))
        return rounds
