"""The count-level engine: every support drawn from its exact law given the true counts (see :mod:`ldp.engines`)."""
from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np
from numba import njit
from scipy import stats

from ..core import Dataset, ExplicitCandidates, ExtendCandidates, Plan, Question, select_top
from ..values import as_values, match_sorted, value_keys
from .base import Selection, SupportSource
from .crafted import CraftedUsers
from .groupcounts import GroupCounts
from .prefix_lookup import explicit_counts, extension_counts
from .sampling import iid_binomial_top
from .tallies import AnswerTally, channel_tally, held_answers, segment_tally

__all__ = ["CountSupport", "prepare"]


# ---------------------------------------------------------------------------
# the data: a Dataset
# ---------------------------------------------------------------------------
class _Content:
    """A value array as a cache key: equal when the contents are (``m``, shape and SHA-1 of the bytes)."""

    __slots__ = ("values", "key")

    def __init__(self, values: np.ndarray, m: int):
        self.values: np.ndarray | None = values
        digest = hashlib.sha1(np.ascontiguousarray(values).data, usedforsecurity=False).hexdigest()
        self.key = (m, values.shape, digest)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Content) and self.key == other.key


@lru_cache(maxsize=4)
def _dataset_of(content: _Content) -> Dataset:
    assert content.values is not None  # a new key: lru_cache calls this once per content
    data = Dataset(content.values, content.key[0])
    content.values = None  # the cache keeps this key object: it needs the digest, not the array
    return data


def prepare(data, m: int | None = None) -> Dataset:
    """The data set the count engine counts: its distinct values, their counts and each user's index.

    Parameters
    ----------
    data : Dataset or array_like
        An :class:`ldp.core.Dataset` (used as it is: its tally is computed
        once and kept on it), or one canonical ``m``-bit value per user.
    m : int, optional
        Bits per value (required for arrays; checked against a Dataset).

    Returns
    -------
    Dataset

    Notes
    -----
    An array is tallied once per content: the data sets of the last 4
    arrays are kept, found again by a SHA-1 digest of their bytes (about
    4 ms for ``n = 10**6`` values of 64 bits, against some 50 ms for the
    tally itself), so a changed array is tallied again.
    """
    if isinstance(data, Dataset):
        if m is not None and data.m != m:
            raise ValueError(f"the data set has m = {data.m} bits but the protocol expects m = {m}")
        return data
    if m is None:
        raise ValueError("m is required to prepare a plain value array")
    return _dataset_of(_Content(as_values(data, m, name="values"), m))


# ---------------------------------------------------------------------------
# count engine
# ---------------------------------------------------------------------------
class CountSupport(SupportSource):
    """Supports drawn from their exact laws given each group's true answer counts.

    Parameters
    ----------
    data : Dataset
        The users' values (:func:`prepare`); the engine counts its tally.
    labels : numpy.ndarray
        Group of each user (``plan.labels()``, from :func:`ldp.core.assign_groups`).
    plan : Plan
    rng_draw : numpy.random.Generator
        Stream for the supports.
    rng_keys : numpy.random.Generator
        Stream for the tie-breaking keys.
    crafted : CraftedUsers, optional
        Users whose reports are crafted (:mod:`ldp.engines.crafted`): they count
        among the group sizes, not in the honest tally, and their supports are
        added as that module states.
    group_counts : numpy.ndarray or GroupCounts, optional
        How many users of each group hold each of ``data``'s distinct values,
        shape ``(groups, distinct values)`` (or those counts as
        :class:`~ldp.engines.groupcounts.GroupCounts`), counting every user of
        ``labels`` (crafted ones too), when the caller keeps it for several
        runs of one plan; counted from ``labels`` when omitted.
    """

    engine = "counts"

    def __init__(self, data: Dataset, labels: np.ndarray, plan: Plan, *, rng_draw: np.random.Generator,
                 rng_keys: np.random.Generator, crafted: CraftedUsers | None = None,
                 group_counts: np.ndarray | GroupCounts | None = None):
        G = plan.n_groups
        if group_counts is None:
            rows = GroupCounts.count(data, labels, G)
        elif isinstance(group_counts, GroupCounts):
            if (group_counts.n_groups, group_counts.n_distinct) != (G, data.n_distinct):
                raise ValueError(f"group_counts must count (groups, distinct values) = {(G, data.n_distinct)}, "
                                 f"got {(group_counts.n_groups, group_counts.n_distinct)}")
            rows = group_counts
        elif group_counts.shape != (G, data.n_distinct):
            raise ValueError(f"group_counts must have shape (groups, distinct values) = {(G, data.n_distinct)}, "
                             f"got {group_counts.shape}")
        else:
            rows = GroupCounts.from_dense(group_counts)
        super().__init__(plan, rows.sizes(), rng=rng_keys)
        self.data = data
        self.draw = rng_draw
        #: true counts of each distinct value in each group among the honest users (sparse rows; dense: gcounts)
        self.counts = rows
        self.crafted = crafted
        #: crafted users per group (all 0 without ``crafted``)
        self.crafted_sizes = np.zeros(G, dtype=np.int64)
        self._honest_total = None
        if crafted is not None and crafted.users.size:
            if crafted.users[-1] >= labels.shape[0]:
                raise ValueError(f"crafted users must be plan indices below n = {labels.shape[0]}")
            cl = labels[crafted.users]
            cu = data.user_index[crafted.users]
            self.crafted_sizes = np.bincount(cl, minlength=G).astype(np.int64)
            self.counts = self.counts.without(cl, cu)
            self._honest_total = data.distinct_counts - np.bincount(cu, minlength=data.n_distinct)
        # Per-run state, keyed by the plan's questions (so bounded by the plan): the selections
        # pair() needs and their split over the groups.
        self._memory: dict = {}
        self._splits: dict = {}
        self._flh_tallies: dict = {}

    # -- true counts -------------------------------------------------------
    @staticmethod
    def group_counts(data: Dataset, labels: np.ndarray, n_groups: int) -> GroupCounts:
        """How many users of each group (``labels``) hold each distinct value of ``data``, as sparse rows.

        For a caller that runs one plan many times: it counts once and passes the rows as ``group_counts=``
        (:meth:`GroupCounts.without` leaves users out of them).
        """
        return GroupCounts.count(data, labels, n_groups)

    @property
    def gcounts(self) -> np.ndarray:
        """True counts of each distinct value in each group among the honest users, ``(groups, distinct values)``.

        Made dense from :attr:`counts` on first use (the engine itself reads the sparse rows).
        """
        dense = self.__dict__.get("_gcounts")
        if dense is None:
            dense = self.__dict__["_gcounts"] = self.counts.dense()
        return dense

    def _tally(self, q: Question) -> AnswerTally:
        return channel_tally(self.data, q) if q.channels else segment_tally(self.data, q.start, q.stop)

    def _held_values(self, groups: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Distinct-value positions the honest users of ``groups`` may hold and how many hold each.

        Every user: all distinct values (increasing); one group: its sparse row (increasing);
        several: their rows one after the other.
        """
        if len(groups) == self.plan.n_groups:  # every user: the data set's own counts (less the crafted users)
            row = self.data.distinct_counts if self._honest_total is None else self._honest_total
            return np.arange(row.shape[0]), row
        return self.counts.rows(groups)  # a part of the users: their groups' sparse rows

    def answer_counts(self, groups, q: Question):
        """Distinct answers held by the users of ``groups`` and how many hold each."""
        t = self._tally(q)
        groups = tuple(groups)
        idx, cnt = self._held_values(groups)
        ordered = len(groups) in (1, self.plan.n_groups) and t.starts is not None
        return held_answers(t, q, idx, cnt, ordered=ordered)

    def _candidate_counts(self, groups, q, cands):
        """Positions in ``cands`` of the candidates the users of ``groups`` hold, increasing, and how many hold each."""
        if isinstance(cands, (ExtendCandidates, ExplicitCandidates)) and q.is_prefix:
            groups = tuple(groups)
            if len(groups) in (1, self.plan.n_groups):  # sorted answers: bisection from the candidates' side
                idx, cnt = self._held_values(groups)
                if isinstance(cands, ExtendCandidates) and idx.shape[0]:  # TreeHist's and PEM's levels
                    return extension_counts(self._tally(q), idx, cnt, cands)
                if isinstance(cands, ExplicitCandidates) and idx.shape[0] and cands.size <= idx.shape[0]:
                    return explicit_counts(self._tally(q), idx, cnt, cands)  # final steps: few candidates
        ans, cnt = self.answer_counts(groups, q)
        idx = cands.index_of(ans)
        ok = idx >= 0
        idx, cnt = idx[ok], cnt[ok]
        o = np.argsort(idx, kind="stable")
        return idx[o], cnt[o]

    # -- crafted reports (ldp.engines.crafted) ---------------------------------
    def _crafted_in(self, groups, question) -> tuple[int, float]:
        """Crafted users in ``groups`` and the probability their ``question`` report supports an unmarked answer."""
        if self.crafted is None:
            return 0, 0.0
        f = int(self.crafted_sizes[list(groups)].sum())
        return f, (float(self.crafted.rho[question]) if f else 0.0)

    def _marked_counts(self, groups, question, cands):
        """Positions in ``cands`` of the question's marked answers and their exact crafted supports."""
        hit = self.crafted.marked.get(question) if self.crafted is not None else None
        if hit is None or hit[0].shape[0] == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        answers, counts = hit
        idx = cands.index_of(answers)
        F = np.asarray(counts)[list(groups)].sum(axis=0).astype(np.int64)
        ok = idx >= 0
        idx, F = idx[ok], F[ok]
        o = np.argsort(idx, kind="stable")
        return idx[o], F[o]

    def _with_crafted(self, groups, question, cands, f: int, rho: float):
        """The honest-held and marked candidates, with their (holder, non-holder, crafted) supports."""
        N = self.n_users(groups)
        o = question.oracle()
        h_idx, h_cnt = self._candidate_counts(groups, question, cands)
        m_idx, m_F = self._marked_counts(groups, question, cands)
        idx = np.union1d(h_idx, m_idx).astype(np.int64)
        cnt = np.zeros(idx.shape[0], dtype=np.int64)
        cnt[np.searchsorted(idx, h_idx)] = h_cnt
        marked = np.zeros(idx.shape[0], dtype=bool)
        marked[np.searchsorted(idx, m_idx)] = True
        hold = self.draw.binomial(cnt, o.p)  # law 1, honest holders
        non = self.draw.binomial(N - f - cnt, o.q)  # law 1, the other honest users
        craft = np.asarray(self.draw.binomial(f, rho, size=idx.shape[0]), dtype=np.int64)  # unmarked: Bin(f, rho)
        craft[marked] = m_F  # marked: the exact crafted supports
        return idx, cnt, hold, non, craft

    # -- draws -------------------------------------------------------------
    def flh_tally(self, groups, question: Question) -> np.ndarray:
        """FLH: the tally ``T[j, y]`` of the reports of ``groups`` to ``question``, drawn once per run (law 4).

        Drawn from its exact law given the answer counts (:meth:`ldp.FLH.draw_tally`)
        the first time the question is counted, then reused, as the protocol
        reuses the same reports.  Crafted users (:class:`ldp.engines.CraftedUsers`)
        add their reports' own tally (its ``tallies``): exact.
        """
        key = (question, tuple(groups))
        hit = self._flh_tallies.get(key)
        if hit is None:
            ans, cnt = self.answer_counts(groups, question)
            hit = question.oracle().draw_tally(ans, cnt, rng=self.draw)
            crafted = self.crafted.tallies if self.crafted is not None else {}
            for g in groups:
                extra = crafted.get((g, question))
                if extra is not None:
                    hit = hit + extra
            self._flh_tallies[key] = hit
        return hit

    def supports(self, groups, question, cands) -> np.ndarray:
        if question.pool_size:  # FLH: law 4, through the tally
            return question.oracle().support_from_tally(self.flh_tally(groups, question), cands.values())
        N = self.n_users(groups)
        o = question.oracle()
        f, rho = self._crafted_in(groups, question)
        if f:
            out = (self.draw.binomial(N - f, o.q, size=cands.size)
                   + self.draw.binomial(f, rho, size=cands.size)).astype(np.int64)
            idx, _, hold, non, craft = self._with_crafted(groups, question, cands, f, rho)
            out[idx] = hold + non + craft
            return out
        idx, cnt = self._candidate_counts(groups, question, cands)
        out = self.draw.binomial(N, o.q, size=cands.size).astype(np.int64)  # law 1, N_c = 0
        out[idx] = self.draw.binomial(cnt, o.p) + self.draw.binomial(N - cnt, o.q)  # law 1
        return out

    def top(self, groups, question, cands, K, *, block=None, min_support=None, remember=False) -> Selection:
        if question.pool_size:  # FLH: every candidate's support (correlated through the pool), law 4
            if remember:
                raise ValueError("pair() (SPM's joint step) is not available for FLH questions")
            return self._select_all(self.supports(groups, question, cands), groups, K, block=block,
                                    min_support=min_support)
        N = self.n_users(groups)
        o = question.oracle()
        f, rho = self._crafted_in(groups, question)
        if f:
            nz_idx, _, hold, non, craft = self._with_crafted(groups, question, cands, f, rho)
            non = non + craft  # everything but the honest holders' successes
            extra = None if _same(rho, o.q) else (f, rho)  # rho = q: the crafted users are law-1 non-holders
            n_zero = N - f if extra else N
        else:
            nz_idx, nz_cnt = self._candidate_counts(groups, question, cands)
            hold = self.draw.binomial(nz_cnt, o.p)  # law 1, holders
            non = self.draw.binomial(N - nz_cnt, o.q)  # law 1, the others
            extra, n_zero, craft = None, N, None
        # zero class: candidates nobody in the groups holds
        bsize = cands.size if block is None else int(block)
        nb = cands.size // bsize
        nz_blk = nz_idx // bsize
        N0 = bsize - np.bincount(nz_blk, minlength=nb)
        got, zval = iid_binomial_top(N0, n_zero, o.q, K, rng=self.draw, min_support=min_support, extra=extra)
        drawn = np.flatnonzero(got)  # which of its block's unheld candidates each drawn support belongs to
        ordinals = [self.draw.choice(n0, g, replace=False) for n0, g in zip(N0[drawn].tolist(), got[drawn].tolist())]
        z_idx = unheld_positions(nz_idx, bsize, drawn, got[drawn], ordinals)
        all_idx = np.concatenate([nz_idx, z_idx])
        all_sup = np.concatenate([hold + non, zval]).astype(np.int64)
        keys = np.asarray(self.rng.random(all_idx.shape[0]))
        blocks = None if block is None else all_idx // bsize
        sel = select_top(all_sup, keys, K, blocks=blocks, min_support=min_support)
        if remember:
            all_hold = np.concatenate([hold, np.zeros(zval.shape[0], dtype=hold.dtype)])
            mem = dict(values=cands.values_at(all_idx[sel]), hold=all_hold[sel], non=(all_sup - all_hold)[sel],
                       groups=tuple(groups))
            if craft is not None:  # the crafted part of each selected support, for pair()
                z_craft = self._crafted_part(zval, N - f, o.q, f, rho)
                all_craft = np.concatenate([craft, z_craft]).astype(np.int64)[sel]
                mem.update(non=mem["non"] - all_craft, craft=all_craft,
                           marked=np.concatenate([np.ones(craft.shape[0], bool), np.zeros(zval.shape[0], bool)])[sel]
                           & self._is_marked(question, cands.values_at(all_idx[sel])))
            self._memory[question] = mem
        return Selection(all_idx[sel], all_sup[sel], N)

    def _crafted_part(self, total: np.ndarray, n: int, q: float, f: int, rho: float) -> np.ndarray:
        """The crafted users' share of supports ``total ~ Bin(n, q) + Bin(f, rho)``, drawn given the totals."""
        if total.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        if _same(rho, q):  # successes uniform among the n + f users: hypergeometric
            return self.draw.hypergeometric(f, n, total).astype(np.int64)
        sd = np.sqrt(f * rho * (1 - rho))  # P(Y = y | X + Y = t) on Y's mean +- 40 sd (+- 60)
        y = np.arange(max(0, int(f * rho - 40 * sd - 60)), min(f, int(f * rho + 40 * sd + 60)) + 1)
        t = np.asarray(total, dtype=np.int64)[:, None]
        w = stats.binom.logpmf(y[None, :], f, rho) + stats.binom.logpmf(t - y[None, :], n, q)
        w = np.exp(w - w.max(axis=1, keepdims=True))
        cdf = np.cumsum(w, axis=1)
        u = self.draw.random(t.shape[0]) * cdf[:, -1]
        return y[np.minimum((cdf < u[:, None]).sum(axis=1), y.shape[0] - 1)].astype(np.int64)

    def _is_marked(self, question, values) -> np.ndarray:
        hit = self.crafted.marked.get(question) if self.crafted is not None else None
        if hit is None or hit[0].shape[0] == 0 or values.shape[0] == 0:
            return np.zeros(values.shape[0], dtype=bool)
        keys = value_keys(hit[0])
        order = np.argsort(keys, kind="stable")
        return match_sorted(hit[0][order], values) >= 0

    # -- SPM pairs ----------------------------------------------------------
    def _group_pattern_counts(self, g, q, patterns_sorted):
        ans, cnt = self.answer_counts((g,), q)
        pos = match_sorted(patterns_sorted, ans)
        ok = pos >= 0
        return np.bincount(pos[ok], weights=cnt[ok], minlength=patterns_sorted.shape[0]).round().astype(np.int64)

    def _split(self, q: Question):
        """Per-group (holder, non-holder, crafted) successes of the remembered patterns of ``q``."""
        hit = self._splits.get(q)
        if hit is not None:
            return hit
        mem = self._memory.get(q)
        if mem is None:
            raise RuntimeError("pair() needs a previous top(..., remember=True) on the same question")
        vals = mem["values"]
        order = np.argsort(value_keys(vals), kind="stable")
        srt = vals[order]
        groups = mem["groups"]
        held = np.stack([self._group_pattern_counts(g, q, srt) for g in groups])  # (G_q, P)
        held = held[:, np.argsort(order)]  # back to the remembered order
        sizes = np.array([self.sizes[g] - self.crafted_sizes[g] for g in groups])[:, None]  # honest users
        nonh = sizes - held
        split = []
        parts_in = [(mem["hold"].astype(np.int64), held), (mem["non"].astype(np.int64), nonh)]
        if "craft" in mem:  # unmarked patterns: the crafted successes are a uniform subset of the crafted users
            fpop = np.broadcast_to(self.crafted_sizes[list(groups)][:, None], held.shape)
            parts_in.append((np.where(mem["marked"], 0, mem["craft"]), fpop))
        for succ, pop in parts_in:
            rem_pop = pop.sum(axis=0)
            rem = succ.copy()
            parts = []
            for i in range(len(groups)):  # multivariate hypergeometric, one group at a time
                if i == len(groups) - 1:
                    x = rem.copy()
                else:
                    x = self.draw.hypergeometric(pop[i], rem_pop - pop[i], rem) if rem.size else rem.copy()
                parts.append(x)
                rem = rem - x
                rem_pop = rem_pop - pop[i]
            split.append(np.stack(parts))
        hold_parts, non_parts = split[:2]
        craft_parts = split[2] if len(split) > 2 else np.zeros_like(hold_parts)
        if self.crafted is not None and "craft" in mem and mem["marked"].any():  # marked: exact crafted supports
            answers, counts = self.crafted.marked[q]
            keys = value_keys(answers)
            order = np.argsort(keys, kind="stable")
            mk = np.flatnonzero(mem["marked"])
            pos = order[match_sorted(answers[order], vals[mk])]
            craft_parts[:, mk] = np.asarray(counts)[list(groups)][:, pos]
        res = {"values": vals, "groups": groups, "hold": hold_parts, "non": non_parts, "craft": craft_parts}
        self._splits[q] = res
        return res

    def _lookup(self, q, g, patterns):
        sp = self._split(q)
        gi = sp["groups"].index(g)
        vals = sp["values"]
        order = np.argsort(value_keys(vals), kind="stable")
        where = match_sorted(vals[order], patterns)
        if np.any(where < 0):
            raise ValueError("pair() patterns must be among the patterns selected by top(remember=True)")
        j = order[where]
        return sp["hold"][gi, j], sp["non"][gi, j], sp["craft"][gi, j]

    def pair(self, group, qa, qb, A, B):
        xA, xAbar, xF = self._lookup(qa, group, A)
        yB, yBbar, yF = self._lookup(qb, group, B)
        Ng = self.sizes[group] - self.crafted_sizes[group]  # honest users of the group
        # joint counts in the group: over the distinct values its honest users hold
        held, row = self.counts.row(group)
        ans_a = np.take(self._tally(qa).answers, held, axis=0)  # rows of words: take is the fast gather
        ans_b = np.take(self._tally(qb).answers, held, axis=0)
        oa = np.argsort(A, kind="stable")
        ob = np.argsort(B, kind="stable")
        ia = match_sorted(A[oa], ans_a)
        ib = match_sorted(B[ob], ans_b)
        ia = np.where(ia >= 0, oa[np.maximum(ia, 0)], -1)
        ib = np.where(ib >= 0, ob[np.maximum(ib, 0)], -1)
        nA, nB = A.shape[0], B.shape[0]
        w = row > 0
        both = w & (ia >= 0) & (ib >= 0)
        n_ab = np.bincount(ia[both] * nB + ib[both], weights=row[both], minlength=nA * nB)
        n_ab = np.rint(n_ab).astype(np.int64).reshape(nA, nB)
        ma = w & (ia >= 0)
        n_a = np.rint(np.bincount(ia[ma], weights=row[ma], minlength=nA)).astype(np.int64)
        mb = w & (ib >= 0)
        n_b = np.rint(np.bincount(ib[mb], weights=row[mb], minlength=nB)).astype(np.int64)
        # the four cells (law 2)
        AB = n_ab
        ABb = n_a[:, None] - n_ab
        AbB = n_b[None, :] - n_ab
        AbBb = Ng - n_a[:, None] - n_b[None, :] + n_ab
        hg = self.draw.hypergeometric
        shape = (nA, nB)
        xA_ = np.broadcast_to(xA[:, None], shape)
        xAb_ = np.broadcast_to(xAbar[:, None], shape)
        yB_ = np.broadcast_to(yB[None, :], shape)
        yBb_ = np.broadcast_to(yBbar[None, :], shape)
        x_AB = hg(AB, ABb, xA_)           # holders of a supporting a, split by b / not b
        x_ABb = xA_ - x_AB
        x_AbB = hg(AbB, AbBb, xAb_)       # non-holders of a supporting a, split by b / not b
        x_AbBb = xAb_ - x_AbB
        y_AB = hg(AB, AbB, yB_)           # holders of b supporting b, split by a / not a
        y_AbB = yB_ - y_AB
        y_ABb = hg(ABb, AbBb, yBb_)       # non-holders of b supporting b, split by a / not a
        y_AbBb = yBb_ - y_ABb
        I = (hg(x_AB, AB - x_AB, y_AB) + hg(x_ABb, ABb - x_ABb, y_ABb)
             + hg(x_AbB, AbB - x_AbB, y_AbB) + hg(x_AbBb, AbBb - x_AbBb, y_AbBb))
        fg = int(self.crafted_sizes[group])
        if fg:  # crafted users: overlap of the two supporting sets (independent reports), exact where both are marked
            I = I + self._crafted_pairs(group, qa, qb, A, B, xF, yF, fg)
        return ((xA + xAbar + xF).astype(np.int64), (yB + yBbar + yF).astype(np.int64), I.astype(np.int64))

    def _crafted_pairs(self, group, qa, qb, A, B, xF, yF, fg) -> np.ndarray:
        shape = (A.shape[0], B.shape[0])
        out = self.draw.hypergeometric(np.broadcast_to(xF[:, None], shape), fg - np.broadcast_to(xF[:, None], shape),
                                       np.broadcast_to(yF[None, :], shape)).astype(np.int64)
        crafted = self.crafted
        joint = crafted.joint.get((group, qa, qb)) if crafted is not None else None
        if crafted is not None and joint is not None and qa in crafted.marked and qb in crafted.marked:
            ma, mb = crafted.marked[qa][0], crafted.marked[qb][0]
            ia, ib = _positions(ma, A), _positions(mb, B)  # marked answer -> position in A / B (or -1)
            ka, kb = np.flatnonzero(ia >= 0), np.flatnonzero(ib >= 0)
            if ka.size and kb.size:
                out[np.ix_(ia[ka], ib[kb])] = np.asarray(joint)[np.ix_(ka, kb)]
        return out


def unheld_positions(nz_idx: np.ndarray, bsize: int, blocks: np.ndarray, counts: np.ndarray,
                     ordinals: list) -> np.ndarray:
    """Positions in the candidate set of unheld candidates given by their ordinals within their blocks.

    The set is blocks of ``bsize`` consecutive candidates; ``nz_idx``
    (sorted) are the held ones.  ``ordinals[i]`` (``counts[i]`` of them) are
    ordinals among the unheld candidates of block ``blocks[i]``: the
    ``o``-th unheld candidate of block ``b`` is ``b * bsize + o`` plus the held
    candidates of ``b`` at or below it.
    """
    if blocks.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    ordinal = np.concatenate(ordinals).astype(np.int64, copy=False)
    return _unheld(np.asarray(nz_idx, dtype=np.int64), int(bsize), np.asarray(blocks, dtype=np.int64),
                   np.asarray(counts, dtype=np.int64), ordinal)


@njit(cache=True)
def _unheld(nz_idx, bsize, blocks, counts, ordinal):  # pragma: no cover - compiled
    # The held candidates of block b are a run of nz_idx (bisection); the t-th of them (from 0) has
    # nz_idx - b * bsize - t unheld candidates before it, non-decreasing in t: those at or below
    # ordinal o (bisection again) are the held candidates at or below the o-th unheld one.
    out = np.empty(ordinal.shape[0], dtype=np.int64)
    k = 0
    for i in range(blocks.shape[0]):
        base = blocks[i] * bsize
        lo = np.searchsorted(nz_idx, base)
        hi = np.searchsorted(nz_idx, base + bsize)
        for _ in range(counts[i]):
            o = ordinal[k]
            a, b = lo, hi  # the first held candidate with more than o unheld ones before it
            while a < b:
                mid = (a + b) // 2
                if nz_idx[mid] - base - (mid - lo) <= o:
                    a = mid + 1
                else:
                    b = mid
            out[k] = base + o + (a - lo)
            k += 1
    return out


def _same(a: float, b: float) -> bool:
    """``a == b`` up to rounding (a mean of equal probabilities)."""
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def _positions(answers: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """Position of each of ``answers`` in ``patterns`` (``-1`` if absent)."""
    order = np.argsort(value_keys(patterns), kind="stable")
    pos = match_sorted(patterns[order], answers)
    return np.where(pos >= 0, order[np.maximum(pos, 0)], -1)
