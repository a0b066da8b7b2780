"""The Segment Pairs Method (SPM, RAPPOR's unknown-dictionary method), paper section 3.2 with 6.1's improvements."""
from __future__ import annotations

from itertools import combinations

import numpy as np
from numba import njit

from ._base import HeavyHitterProtocol, split_bits
from ._core import (ExplicitCandidates, Plan, Question, RangeCandidates, scaled_estimate)
from ._result import RoundInfo
from ..validation import check_fraction, check_int
from ..values import concat
from ..analysis import spm_joint_estimate_pair

__all__ = ["SPM", "spm_queries"]


def spm_queries(bounds, k: int) -> int:
    """Oracle queries of SPM's segment and pair steps: ``sum 2^s_alpha + sum_{alpha<beta} k_alpha k_beta``."""
    ks = [min(k, 1 << (b - a)) for a, b in bounds]
    seg = sum(1 << (b - a) for a, b in bounds)
    pairs = sum(ks[i] * ks[j] for i, j in combinations(range(len(bounds)), 2))
    return seg + pairs


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


class SPM(HeavyHitterProtocol):
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
    epsilon, k, m, query_limit, threshold
        See :class:`ldp.protocols.PEM`.  ``epsilon`` is at most
        ``3 ln(2**31 - 1) = 64.46`` with the budget split (each report's
        ``epsilon / 3`` must keep OLH's ``d'`` at most ``2**31``), at most
        ``21.49`` with ``final_fraction``.
    final_fraction : float, optional
        ``None`` (default): original budget split, every user also reports the
        whole value and each of her three reports uses ``epsilon / 3``.
        A fraction in (0, 1) (the paper uses 0.1, section 6.2.4): that share
        of the users reports only the whole value with the full budget; the
        others send their two segment reports with ``epsilon / 2`` each.
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

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, final_fraction: float | None = None,
                 segments: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold)
        if self.m < 2:
            raise ValueError(f"SPM needs at least 2 segments, so m must be >= 2 bits, got {self.m}")
        self.final_fraction = None if final_fraction is None else check_fraction(final_fraction, "final_fraction")
        if segments is not None:
            g = check_int(segments, "segments", 2, self.m)
            cost = spm_queries(split_bits(self.m, g), self.k)
            if cost > self.query_limit:
                raise ValueError(f"query_limit = {self.query_limit} is too small for SPM with {g} segments "
                                 f"of m = {self.m} bits and k = {self.k}: it needs {cost}")
        else:
            costs = {g: spm_queries(split_bits(self.m, g), self.k) for g in range(2, self.m + 1)}
            ok = [g for g, c in costs.items() if c <= self.query_limit]
            if not ok:
                raise ValueError(f"query_limit = {self.query_limit} is too small for SPM with m = {self.m}, "
                                 f"k = {self.k}: the smallest limit that admits a segmentation is "
                                 f"{min(costs.values())}")
            g = min(ok)
        self.segments = g
        self.bounds = split_bits(self.m, g)
        self.pairs = list(combinations(range(g), 2))
        self._check_epsilon_limit()

    def _budget_split(self) -> int:
        return 3 if self.final_fraction is None else 1  # eps/3 each; or the final group's full eps

    @property
    def params(self) -> dict:
        return {**super().params, "final_fraction": self.final_fraction, "segments": self.segments}

    def _eps(self):
        if self.final_fraction is None:
            return self.epsilon / 3, self.epsilon / 3  # three reports, one third each (section 3.2)
        return self.epsilon / 2, self.epsilon  # two segment reports; final group: full budget

    def questions(self):
        """Segment questions (one per segment) and the whole-value question."""
        e_seg, e_whole = self._eps()
        return [Question(a, b, e_seg) for a, b in self.bounds], Question(0, self.m, e_whole)

    def _plan(self, n: int, public: dict) -> Plan:
        seg, whole = self.questions()
        P = len(self.pairs)
        if self.final_fraction is None:
            qs = tuple((seg[a], seg[b], whole) for a, b in self.pairs)
            return Plan(self.m, (1.0 / P,) * P, qs)
        ff = self.final_fraction
        qs = tuple((seg[a], seg[b]) for a, b in self.pairs) + ((whole,),)
        return Plan(self.m, ((1.0 - ff) / P,) * P + (ff,), qs)

    def _aggregate(self, source, plan: Plan, n: int):
        seg, whole = self.questions()
        rounds = []
        kept = []
        for al, (a, b) in enumerate(self.bounds):
            q = seg[al]
            groups = plan.groups_asking(q)
            Ka = min(self.k, 1 << (b - a))  # exactly k patterns per segment (section 6.1, step 3)
            cands = RangeCandidates(1 << (b - a), b - a)
            sel = source.top(groups, q, cands, Ka, remember=True)
            vals = cands.values_at(sel.index)
            o = q.oracle()
            est = scaled_estimate(sel.support, sel.n_users, o.p, o.q, n)
            rounds.append(RoundInfo(f"segment {al + 1}", "segment", a, b, groups, sel.n_users, cands.size,
                                    vals, sel.support, est, q))
            kept.append(vals)
        # pair step: joint estimates of C_alpha x C_beta in each pair group
        items = []
        pair_queries = 0
        for gi, (al, be) in enumerate(self.pairs):
            qa, qb = seg[al], seg[be]
            Ja, Jb, I = source.pair(gi, qa, qb, kept[al], kept[be])
            N = source.sizes[gi]
            o = qa.oracle()
            na = (Ja - N * o.q) / (o.p - o.q)  # eq. (eqn:est) within the group
            nb = (Jb - N * o.q) / (o.p - o.q)
            nab = spm_joint_estimate_pair(I, na[:, None], nb[None, :], N, o.p, o.q) * (n / N)  # appendix
            ii, jj = np.meshgrid(np.arange(len(kept[al])), np.arange(len(kept[be])), indexing="ij")
            items.append((np.full(ii.size, al), np.full(ii.size, be), ii.ravel(), jj.ravel(), nab.ravel()))
            pair_queries += I.size
        al_, be_, ia_, ib_, est_ = (np.concatenate(x) for x in zip(*items))
        keys = source.rng.random(est_.shape[0])
        order = np.lexsort((-keys, -est_))  # estimated joint count, descending; ties at random
        kk = np.array([len(c) for c in kept], dtype=np.int64)
        used = sum(r.n_candidates for r in rounds) + pair_queries
        cap = max(self.query_limit - used, self.k + 1)
        cl, added, overflow = _cliques(al_[order].astype(np.int64), be_[order].astype(np.int64),
                                       ia_[order].astype(np.int64), ib_[order].astype(np.int64),
                                       kk, self.k, cap)
        cand_vals = self._assemble(kept, cl)
        cands = ExplicitCandidates(cand_vals, self.m)
        rounds.append(RoundInfo("pairs", "candidates", 0, self.m, tuple(range(len(self.pairs))),
                                sum(source.sizes[i] for i in range(len(self.pairs))), pair_queries,
                                cands.values(), np.zeros(0, np.int64), np.zeros(0), whole,
                                {"pairs_added": int(added), "pairs_total": int(est_.shape[0]),
                                 "overflow": bool(overflow)}))
        out = self._final(source, plan, whole, cands, rounds)
        return out, rounds

    def _assemble(self, kept, cliques) -> np.ndarray:
        """Concatenate the segment patterns of each clique into m-bit values."""
        if cliques.shape[0] == 0:
            return np.zeros((0,) if self.m <= 64 else (0, -(-self.m // 64)), dtype=np.uint64)
        (a0, b0) = self.bounds[0]
        vals = kept[0][cliques[:, 0]]
        bits = b0 - a0
        for s in range(1, len(self.bounds)):
            a, b = self.bounds[s]
            vals = concat(vals, bits, kept[s][cliques[:, s]], b - a)
            bits += b - a
        return vals
