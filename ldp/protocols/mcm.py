"""The Multiple Channel Method (MCM, Bassily and Smith), paper section 3.3 with 6.1's improvements."""
from __future__ import annotations

import numpy as np

from ._base import HeavyHitterProtocol, ceil_pow15, split_bits
from ._core import ExplicitCandidates, Plan, Question, RangeCandidates, scaled_estimate
from ._result import RoundInfo
from ..validation import check_fraction, check_int
from ..values import concat

__all__ = ["MCM", "mcm_queries"]

#: largest block the aggregator enumerates (2**30 patterns per channel)
MAX_BLOCK_BITS = 30


def mcm_queries(m: int, channels: int, block_bits: int) -> int:
    """Oracle queries of MCM: ``sum_l h 2^(b_l)`` over the blocks, plus ``h`` final candidates."""
    G = -(-m // block_bits)
    return sum(channels << (b - a) for a, b in split_bits(m, G)) + channels


class MCM(HeavyHitterProtocol):
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
    epsilon, k, m, query_limit, threshold
        See :class:`ldp.protocols.PEM`.  ``epsilon`` is at most
        ``2 ln(2**31 - 1) = 42.98`` with the budget split (each report's
        ``epsilon / 2`` must keep OLH's ``d'`` at most ``2**31``), at most
        ``21.49`` with ``final_fraction``.
    final_fraction : float, optional
        ``None`` (default): every user also reports the whole value, each of
        her two reports using ``epsilon / 2`` (the original budget split,
        section 6.2.6).  A fraction in (0, 1): that share of the users reports
        only the whole value with the full budget and the others report their
        block with the full budget (section 6.2.4 uses 0.1).
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

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, final_fraction: float | None = None,
                 channels: int | None = None, block_bits: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold)
        self.final_fraction = None if final_fraction is None else check_fraction(final_fraction, "final_fraction")
        self.channels = ceil_pow15(self.k) if channels is None else check_int(channels, "channels", 1, 2**31)
        if self.k > self.channels:
            raise ValueError(f"k = {self.k} is more than MCM can return: at most one value per channel, and "
                             f"channels = {self.channels}; give channels >= k (default ceil(k**1.5))")
        self._check_epsilon_limit()
        hi = min(self.m, MAX_BLOCK_BITS)
        if block_bits is not None:
            b = check_int(block_bits, "block_bits", 1, hi)
            cost = mcm_queries(self.m, self.channels, b)
            if cost > self.query_limit:
                raise ValueError(f"query_limit = {self.query_limit} is too small for MCM with block_bits = {b}, "
                                 f"{self.channels} channels: it needs {cost}")
        else:
            costs = {b: mcm_queries(self.m, self.channels, b) for b in range(1, hi + 1)}
            ok = [b for b, c in costs.items() if c <= self.query_limit]
            if not ok:
                raise ValueError(f"query_limit = {self.query_limit} is too small for MCM with m = {self.m}, "
                                 f"{self.channels} channels: the smallest limit that works is "
                                 f"{min(costs.values())}")
            b = max(ok)
        G = -(-self.m // b)
        self.bounds = split_bits(self.m, G)
        #: the longest block actually used (blocks differ by at most one bit)
        self.block_bits = max(stop - start for start, stop in self.bounds)

    @property
    def params(self) -> dict:
        return {**super().params, "final_fraction": self.final_fraction, "channels": self.channels,
                "block_bits": self.block_bits}

    def _budget_split(self) -> int:
        return 2 if self.final_fraction is None else 1

    def _eps(self):
        if self.final_fraction is None:
            return self.epsilon / 2, self.epsilon / 2  # eps_1 + eps_2 = eps, halves (section 6.2.6)
        return self.epsilon, self.epsilon

    def _public(self, rng) -> dict:
        return {"seed": int(rng.integers(0, 2**63))}

    def _public_from_plan(self, plan: Plan) -> dict:
        return {"seed": plan.questions[0][0].seed}

    def questions(self, seed: int):
        e_blk, e_whole = self._eps()
        return ([Question(a, b, e_blk, self.channels, seed) for a, b in self.bounds],
                Question(0, self.m, e_whole))

    def _plan(self, n: int, public: dict) -> Plan:
        blk, whole = self.questions(public["seed"])
        G = len(blk)
        if self.final_fraction is None:
            return Plan(self.m, (1.0 / G,) * G, tuple((q, whole) for q in blk))
        ff = self.final_fraction
        return Plan(self.m, ((1.0 - ff) / G,) * G + (ff,), tuple((q,) for q in blk) + ((whole,),))

    def _aggregate(self, source, plan: Plan, n: int):
        blk, whole = self.questions(plan.questions[0][0].seed)
        h = self.channels
        rounds = []
        best = []
        for l, q in enumerate(blk):
            w = q.seg_bits
            cands = RangeCandidates(h << w, q.width)
            sel = source.top((l,), q, cands, 1, block=1 << w)  # best pattern in each channel
            chan = sel.index >> w
            pat = np.zeros(h, dtype=np.uint64)
            pat[chan] = (sel.index & ((1 << w) - 1)).astype(np.uint64)
            best.append(pat)
            o = q.oracle()
            est = scaled_estimate(sel.support, sel.n_users, o.p, o.q, n)
            rounds.append(RoundInfo(f"block {l + 1}", "block", q.start, q.stop, (l,), sel.n_users, cands.size,
                                    cands.values_at(sel.index), sel.support, est, q))
        vals = best[0]
        bits = blk[0].seg_bits
        for l in range(1, len(blk)):
            vals = concat(vals, bits, best[l], blk[l].seg_bits)
            bits += blk[l].seg_bits
        cands = ExplicitCandidates(vals, self.m)  # one candidate per channel (duplicates merged)
        out = self._final(source, plan, whole, cands, rounds)
        return out, rounds
