"""The Segment Pairs Method (SPM, RAPPOR's unknown-dictionary method), paper section 3.2 with 6.1's improvements."""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np
from numba import njit

from ..analysis import spm_joint_estimate_pair
from ..core import ExplicitCandidates, Question, RangeCandidates, RoundInfo, join_parts, scaled_estimate
from ..engines import SupportSource
from .sizing import fit_query_limit, split_bits
from .twophase import TwoPhaseProtocol

__all__ = ["SPM", "spm_queries"]


def spm_queries(bounds, k: int) -> int:
    """Oracle queries of SPM's segment and pair steps: ``sum 2^s_alpha + sum_{alpha<beta} k_alpha k_beta``."""
    ks = [min(k, 1 << (b - a)) for a, b in bounds]
    seg = sum(1 << (b - a) for a, b in bounds)
    total = sum(ks)
    pairs = (total * total - sum(x * x for x in ks)) // 2  # sum over pairs i < j of ks[i] ks[j], exactly
    return seg + pairs


@lru_cache(maxsize=4096)
def _segment_queries(m: int, g: int, k: int) -> int:
    """:func:`spm_queries` of ``g`` segments of ``m`` bits (memoised: every SPM made tries each ``g``)."""
    return spm_queries(split_bits(m, g), k)


@njit(cache=True)
def _cliques(alpha, beta, ia, ib, kk, stop_after, cap):  # pragma: no cover - compiled
    """Add ranked pattern pairs one by one; enumerate the g-cliques each addition completes.

    Stops after the addition that brings the number of cliques above
    ``stop_after`` (or when ``cap`` cliques are stored).  Returns the cliques
    (pattern index per segment), the number of pairs added and an overflow flag.
    """
    g = kk.shape[0]
    kmax = kk.max()
    adj = np.zeros((g, g, kmax, kmax), dtype=np.bool_)
    out = np.empty((cap, g), dtype=np.int64)
    count = 0
    assign = np.empty(g, dtype=np.int64)
    others = np.empty(max(g - 2, 1), dtype=np.int64)
    choice = np.empty(max(g - 2, 1), dtype=np.int64)
    T = alpha.shape[0]
    for t in range(T):
        a, b, x, y = alpha[t], beta[t], ia[t], ib[t]
        adj[a, b, x, y] = True
        adj[b, a, y, x] = True
        assign[:] = -1
        assign[a] = x
        assign[b] = y
        no = 0
        for s in range(g):
            if s != a and s != b:
                others[no] = s
                no += 1
        if no == 0:
            if count < cap:
                out[count, :] = assign
                count += 1
        else:
            d = 0
            choice[0] = -1
            while d >= 0:
                s = others[d]
                c = choice[d] + 1
                found = False
                while c < kk[s]:
                    ok = adj[a, s, x, c] and adj[b, s, y, c]
                    if ok:
                        for e in range(d):
                            se = others[e]
                            if not adj[se, s, assign[se], c]:
                                ok = False
                                break
                    if ok:
                        found = True
                        break
                    c += 1
                if not found:
                    assign[s] = -1
                    d -= 1
                    continue
                choice[d] = c
                assign[s] = c
                if d == no - 1:
                    if count < cap:
                        out[count, :] = assign
                        count += 1
                    else:
                        return out[:count], t + 1, True
                else:
                    d += 1
                    choice[d] = -1
        if count > stop_after:
            return out[:count], t + 1, False
    return out[:count], T, False


class SPM(TwoPhaseProtocol):
    """Segment Pairs Method (section 3.2) with the section 6.1 improvements.

    The value is cut into ``g`` segments; the users are split into the
    ``C(g, 2)`` pair groups, and a user of group ``(alpha, beta)`` sends one
    OLH report of segment ``alpha`` and one of segment ``beta``.  The
    aggregator keeps exactly ``k`` patterns per segment (from all users who
    reported the segment), estimates every pattern pair of ``C_alpha x C_beta``
    in its pair group with the appendix's unbiased joint estimator, adds pattern
    pairs in decreasing order of estimated count until more than ``k`` full
    candidates have all their pairs added, and releases the top ``k``
    candidates by the whole-value oracle.

    Parameters
    ----------
    epsilon, k, m, query_limit, threshold, final_fraction
        See :class:`~ldp.protocols.TwoPhaseProtocol`, with two part reports (the
        pair's segments): by default three reports of ``epsilon / 3``, so
        ``epsilon <= 3 ln(2**31 - 1) = 64.46``; with ``final_fraction`` (the
        paper: 0.1, section 6.2.4) segments at ``epsilon / 2`` and the final
        group's whole value at ``epsilon <= 21.49``.
    segments : int, optional
        Number of segments ``g >= 2``; default: the smallest ``g`` (longest
        segments) whose segment and pair queries fit in ``query_limit``
        (improvement 2 of section 6.1).

    References
    ----------
    Paper sections 3.2, 6.1, 6.2.4, 6.2.6 and the appendix; Fanti, Pihur,
    Erlingsson, "Building a RAPPOR with the unknown", PETS 2016.
    """

    name = "SPM"
    part_reports = 2  # a user of pair group (alpha, beta) reports both segments

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, final_fraction: float | None = None,
                 segments: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold, final_fraction=final_fraction)
        if self.m < 2:
            raise ValueError(f"SPM needs at least 2 segments, so m must be >= 2 bits, got {self.m}")
        g = fit_query_limit(self, "segments", segments, 2, self.m, lambda g: _segment_queries(self.m, g, self.k),
                            prefer=min, about=f", k = {self.k}")
        self.segments = g
        self.bounds = split_bits(self.m, g)
        self.pairs = list(combinations(range(g), 2))
        self._check_epsilon_limit()

    @property
    def params(self) -> dict:
        return {**super().params, "final_fraction": self.final_fraction, "segments": self.segments}

    def _part_questions(self, epsilon: float, seed: int) -> list[Question]:
        return [Question(a, b, epsilon) for a, b in self.bounds]

    def _part_groups(self, parts: list[Question]) -> list[tuple[Question, ...]]:
        return [(parts[a], parts[b]) for a, b in self.pairs]

    def _aggregate(self, source: SupportSource) -> list[RoundInfo]:
        seg, whole = self._plan_questions(source.plan)
        n = source.n
        # exactly k patterns per segment (section 6.1, step 3), from every user who reported it
        rounds = [self._round(source, q, RangeCandidates(1 << q.seg_bits, q.seg_bits), min(self.k, 1 << q.seg_bits),
                              name=f"segment {al + 1}", kind="segment", remember=True) for al, q in enumerate(seg)]
        kept = [r.kept for r in rounds]
        # pair step: joint estimates of C_alpha x C_beta in each pair group
        items = []
        pair_queries = 0
        for gi, (al, be) in enumerate(self.pairs):
            qa, qb = seg[al], seg[be]
            Ja, Jb, I = source.pair(gi, qa, qb, kept[al], kept[be])
            N = source.sizes[gi]
            o = qa.oracle()
            na = scaled_estimate(Ja, N, o.p, o.q, N)  # eq. (2) within the group
            nb = scaled_estimate(Jb, N, o.p, o.q, N)
            nab = spm_joint_estimate_pair(I, na[:, None], nb[None, :], N, o.p, o.q) * (n / N)  # appendix
            ii, jj = np.meshgrid(np.arange(len(kept[al])), np.arange(len(kept[be])), indexing="ij")
            items.append((np.full(ii.size, al), np.full(ii.size, be), ii.ravel(), jj.ravel(), nab.ravel()))
            pair_queries += I.size
        al_, be_, ia_, ib_, est_ = (np.concatenate(x) for x in zip(*items))
        keys = np.asarray(source.rng.random(est_.shape[0]))
        order = np.lexsort((-keys, -est_))  # estimated joint count, descending; ties at random
        kk = np.array([len(c) for c in kept], dtype=np.int64)
        used = sum(r.n_candidates for r in rounds) + pair_queries
        cap = max(self.query_limit - used, self.k + 1)
        cl, added, overflow = _cliques(al_[order].astype(np.int64), be_[order].astype(np.int64),
                                       ia_[order].astype(np.int64), ib_[order].astype(np.int64),
                                       kk, self.k, cap)
        # each clique's segment patterns, concatenated into m-bit values
        cand_vals = join_parts([kept[s][cl[:, s]] for s in range(len(seg))], [q.seg_bits for q in seg])
        cands = ExplicitCandidates(cand_vals, self.m)
        rounds.append(RoundInfo("pairs", "candidates", 0, self.m, tuple(range(len(self.pairs))),
                                sum(source.sizes[i] for i in range(len(self.pairs))), pair_queries,
                                cands.values(), np.zeros(0, np.int64), np.zeros(0), whole,
                                {"pairs_added": int(added), "pairs_total": int(est_.shape[0]),
                                 "overflow": bool(overflow)}))
        rounds.append(self._final(source, whole, cands))
        return rounds
