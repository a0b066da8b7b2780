r"""The two engines behind every heavy-hitter protocol: where supports come from.

Each protocol (:mod:`ldp.protocols`) is written once, against the
:class:`SupportSource` interface: its rounds, candidate building, top-k and
threshold rules are shared, and only the step that produces the *supports*
(the number of reports supporting each queried candidate, paper section
2.2.2) differs between the engines.

* :class:`ReportSupport` -- the **protocol engine**: real user reports
  (:class:`ldp.protocols.ProtocolReports`), aggregated by calling
  :meth:`ldp.OLH.support` on them.  This is the client/server protocol.
* :class:`CountSupport` -- the **count-level engine**: it never perturbs a
  single user.  From the true counts of each group's answers it draws every
  aggregated support from its exact law (derived below), which is orders of
  magnitude faster and is what the experiments use for repetitions.

Both engines use the same group assignment
(:func:`ldp.protocols.assign_groups` with the same seed), the same selection
rule (:func:`ldp.protocols.select_top`, ties broken uniformly at random) and
the same estimators.

Laws of the aggregated quantities
---------------------------------
Notation: a group of :math:`N` users answers a question (a prefix, a
segment, a (channel, block) pair or the whole value) with OLH at budget
:math:`\varepsilon'`, so :math:`p = e^{\varepsilon'}/(e^{\varepsilon'}+d'-1)`,
:math:`q = 1/d'`.  For a candidate answer :math:`c`, :math:`N_c` users of the
group hold it.

**1. One support (PEM prefixes, SPM / strawman segments, MCM channel
blocks, the final whole-value test).**  A report of a holder of :math:`c`
supports :math:`c` with probability :math:`p`; the report of any other user
supports :math:`c` with probability :math:`q` whatever her value (the hash is
uniform and drawn independently of the value: :math:`\Pr[H(c)=y]=q` for
:math:`y = \mathrm{GRR}(H(v))`, :math:`v \ne c`).  Users are independent, so

.. math:: I_c \sim \mathrm{Bin}(N_c, p) + \mathrm{Bin}(N - N_c, q).

For two distinct candidates :math:`c \ne c'`, a holder of :math:`c` supports
both with probability :math:`p \cdot q` (pairwise independence of the hash),
so her covariance is 0; a user holding neither supports both with probability
:math:`q^2` when :math:`(H(c), H(c'), H(v))` are independent.  OLH's family is
only guaranteed pairwise independent, so the protocol's supports are
uncorrelated up to that caveat (``tests/test_engines.py`` checks the sample
correlation is 0 within its sampling error).  The count engine draws distinct
candidates **independently**; any higher-order dependence of the protocol is
not reproduced.

*Sparse exact sampling.*  Most queried candidates are held by nobody
(:math:`N_c = 0`): their supports are i.i.d. :math:`\mathrm{Bin}(N, q)`.  The
selection only needs those that can enter the top :math:`K` (or reach a
threshold), so for :math:`N_0` such candidates the engine draws, for a
threshold :math:`t`, the number :math:`M \sim \mathrm{Bin}(N_0, \Pr[X \ge t])`
of candidates at or above :math:`t`, their values from the law of
:math:`X \mid X \ge t`, and their identities as a uniformly random
:math:`M`-subset; :math:`t` is lowered band by band (conditioning on
:math:`X < t`) until at least :math:`K` are drawn.  Every undrawn candidate
has support below the :math:`K`-th largest, so the selected set and its
supports have exactly the law of the full draw (tie keys are i.i.d. uniform
for all candidates in both engines).

**2. SPM segment pairs** (appendix "Simpler Joint Estimation").  A user of
pair group :math:`(\alpha, \beta)` sends two independent OLH reports; pair
:math:`(a, b)` is supported when report 1 supports :math:`a` and report 2
supports :math:`b`.  With :math:`n_{ab}` users holding both, :math:`n_a`
holding :math:`a` in segment :math:`\alpha`, :math:`n^b` holding :math:`b` in
:math:`\beta`, the four classes of users support the pair with probabilities
:math:`p^2, pq, qp, q^2`:

.. math:: I_{ab} \sim \mathrm{Bin}(n_{ab}, p^2) + \mathrm{Bin}(n_a - n_{ab}, pq)
          + \mathrm{Bin}(n^b - n_{ab}, qp) + \mathrm{Bin}(N - n_a - n^b + n_{ab}, q^2).

The joint estimator subtracts the group's own segment estimates, which use
the *same* reports, so :math:`I_{ab}` is positively correlated with the
segment supports :math:`J_a, J^b` (:math:`\mathrm{Cov}(I_{ab}, J_a) =
\sum_u r_u p_u (1-p_u)`).  The engine therefore draws the triple
:math:`(J_a, J^b, I_{ab})` jointly and exactly: write
:math:`J_a = x_A + x_{\bar A}` (successes among holders / non-holders of
:math:`a`); given them, the supporting users are uniform subsets of each
class, so their split over the four cells :math:`AB, A\bar B, \bar A B,
\bar A\bar B` is hypergeometric; likewise for :math:`J^b`; and the overlap of
two independent uniform subsets of sizes :math:`s_1, s_2` of a cell of size
:math:`N_{cell}` is :math:`\mathrm{Hypergeometric}(s_1, N_{cell} - s_1, s_2)`.
:math:`I_{ab}` is the sum of the four overlaps.  The segment totals over all
groups that report :math:`\alpha` are drawn first (law 1, split into holder
and non-holder successes); each total is split over the groups by a
multivariate hypergeometric draw (successes are a uniform subset of each
class), once per kept pattern, and shared by all pairs that use it.

*Where the joint law differs from the protocol.*  Each pair's triple
:math:`(J_a, J^b, I_{ab})` has the protocol's exact law, but two pairs that
share a pattern, :math:`(a, b)` and :math:`(a, b')`, are drawn conditionally
independent given the segment supports, whereas in the protocol both are
sub-counts of the same set of users supporting :math:`a`.  Their covariance
is reproduced to leading order (through the shared :math:`x_A, x_{\bar A}`:
:math:`N r r' p(1-p)` for non-holders in both cases) but not exactly.

**3. MCM** needs nothing new: a user of block group :math:`\ell` answers the
pair :math:`(H(v), v[\ell])` encoded as one integer, so every
(channel, pattern) candidate follows law 1 with :math:`N_c` the number of
users of the group in that channel with that block; the per-channel argmax
is the top-1 of each block of :math:`2^b` candidates.

**Group split.**  Both engines split users with
:func:`ldp.protocols.assign_groups` (same seed -> same groups); the engine
then counts each group's answers exactly.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 2.2.2, 3.2, 4.2.3 and the appendix.
"""
from __future__ import annotations

import math
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np
from numba import njit
from scipy import stats

from .protocols._core import Plan, Question, match_sorted, select_top, value_keys

__all__ = [
    "Selection",
    "SupportSource",
    "ReportSupport",
    "CountSupport",
    "SortedData",
    "prepare",
    "binomial_tail_table",
]


@dataclass
class Selection:
    """What a selection step returns: candidate indices (ranked) and their supports."""

    index: np.ndarray
    support: np.ndarray
    n_users: int


# ---------------------------------------------------------------------------
# interface
# ---------------------------------------------------------------------------
class SupportSource(ABC):
    """Where a protocol's supports come from (one object per protocol run).

    Parameters
    ----------
    plan : Plan
        Groups and questions of the run.
    sizes : tuple of int
        Users per group.
    rng : numpy.random.Generator
        Stream for the uniform tie-breaking keys (and, for
        :class:`CountSupport`, nothing else).
    """

    def __init__(self, plan: Plan, sizes: Sequence[int], rng: np.random.Generator):
        self.plan = plan
        self.sizes = tuple(int(s) for s in sizes)
        self.n = int(sum(self.sizes))
        self.rng = rng

    def n_users(self, groups: Sequence[int]) -> int:
        return int(sum(self.sizes[g] for g in groups))

    @abstractmethod
    def top(self, groups: Sequence[int], question: Question, cands, K: int, *, block: int | None = None,
            min_support: int | None = None, remember: bool = False) -> Selection:
        """Top ``K`` candidates by support (per block of ``block`` consecutive candidates), ranked.

        Also returns every candidate with ``support >= min_support`` when given.
        ``remember`` keeps what :meth:`pair` needs about the selected ones.
        """

    @abstractmethod
    def supports(self, groups: Sequence[int], question: Question, cands) -> np.ndarray:
        """Support of every candidate (``int64``), summed over ``groups``."""

    @abstractmethod
    def pair(self, group: int, qa: Question, qb: Question, A: np.ndarray, B: np.ndarray):
        """SPM: ``(J_a, J^b, I_ab)`` in ``group`` for patterns ``A`` of ``qa`` and ``B`` of ``qb``."""


# ---------------------------------------------------------------------------
# protocol engine
# ---------------------------------------------------------------------------
class ReportSupport(SupportSource):
    """Supports computed from real reports with :meth:`ldp.OLH.support` (the protocol engine)."""

    def __init__(self, reports, rng: np.random.Generator):
        super().__init__(reports.plan, reports.sizes, rng)
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
        sup = self.supports(groups, question, cands)
        keys = self.rng.random(sup.shape[0])
        blocks = None if block is None else np.arange(sup.shape[0]) // block
        sel = select_top(sup, keys, K, blocks=blocks, min_support=min_support)
        return Selection(sel, sup[sel], self.n_users(groups))

    def _indicator(self, g: int, q: Question, patterns: np.ndarray) -> np.ndarray:
        """Per-user support indicators, shape ``(len(patterns), N_g)``."""
        from .oracles import hashing

        r = self._reports(g, q)
        oracle = q.oracle()
        out = np.empty((patterns.shape[0], len(r)), dtype=np.float64)
        for i, a in enumerate(patterns):
            h = hashing.hash_values(r.seed, np.full(len(r), a, dtype=np.uint64), q.width, oracle.d_prime)
            out[i] = h == r.y
        return out

    def pair(self, group, qa, qb, A, B):
        SA = self._indicator(group, qa, A)
        SB = self._indicator(group, qb, B)
        I = np.rint(SA @ SB.T).astype(np.int64)
        return SA.sum(1).astype(np.int64), SB.sum(1).astype(np.int64), I


# ---------------------------------------------------------------------------
# data prepared for the count engine
# ---------------------------------------------------------------------------
class SortedData:
    """A data set's distinct values (sorted), their counts and each user's index.

    Answers of the distinct values to every non-random question are cached,
    so repetitions over the same data reuse them.
    """

    def __init__(self, distinct: np.ndarray, counts: np.ndarray, user_index: np.ndarray, m: int):
        self.distinct = distinct
        self.counts = np.asarray(counts, dtype=np.int64)
        self.user_index = np.asarray(user_index)
        self.m = int(m)
        self.n = int(self.user_index.shape[0])
        self.D = int(self.counts.shape[0])
        self._cache: dict = {}

    def answers(self, q: Question):
        """``(unique_answers, inverse, starts)`` of the distinct values to ``q``.

        ``starts`` (for prefix questions, whose answers come out sorted) are
        the first positions of each answer; otherwise ``None``.
        """
        key = (q.start, q.stop, q.channels, q.seed)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        ans = q.answer(self.distinct, self.m)
        if q.is_prefix:
            if ans.ndim == 1:
                new = ans[1:] != ans[:-1]
            else:
                new = np.any(ans[1:] != ans[:-1], axis=1)
            starts = np.flatnonzero(np.r_[True, new])
            inv = np.r_[0, np.cumsum(new)].astype(np.int64)
            out = (ans[starts], inv, starts)
        elif q.channels and q.domain_size <= 2**22:
            out = (None, ans.astype(np.int64), None)  # dense: answers index a histogram directly
        else:
            keys = value_keys(ans)
            _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
            out = (ans[first], inv.reshape(-1).astype(np.int64), None)
        if not q.channels:  # channel answers depend on the run's public seed
            self._cache[key] = out
        return out


#: SortedData of each Dataset seen (kept while the Dataset lives)
_PREPARED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def prepare(data, m: int | None = None) -> SortedData:
    """Sort a data set once for the count engine.

    Parameters
    ----------
    data : Dataset, SortedData or array_like
        An :class:`ldp.datasets.Dataset` (its cached tally is used), an
        already prepared :class:`SortedData`, or one canonical ``m``-bit value
        per user.
    m : int, optional
        Bits per value (required for arrays; checked against a Dataset).
    """
    if isinstance(data, SortedData):
        if m is not None and data.m != m:
            raise ValueError(f"data has m = {data.m} bits but the protocol expects m = {m}")
        return data
    if hasattr(data, "distinct") and hasattr(data, "user_index"):
        if m is not None and int(data.m) != m:
            raise ValueError(f"the data set has m = {data.m} bits but the protocol expects m = {m}")
        try:
            cached = _PREPARED.get(data)
        except TypeError:  # pragma: no cover - not weak-referenceable
            cached = None
        if cached is None:
            cached = SortedData(data.distinct, data.distinct_counts, data.user_index, int(data.m))
            try:
                _PREPARED[data] = cached
            except TypeError:  # pragma: no cover
                pass
        return cached
    from .values import as_values

    if m is None:
        raise ValueError("m is required to prepare a plain value array")
    vals = as_values(data, m, name="values")
    if vals.ndim == 1:
        d, inv, c = np.unique(vals, return_inverse=True, return_counts=True)
    else:
        keys = value_keys(vals)
        _, first, inv, c = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        d = vals[first]
    return SortedData(d, c, inv.reshape(-1).astype(np.int64), m)


@njit(cache=True)
def _count_groups(labels, uidx, G, D):  # pragma: no cover - compiled
    out = np.zeros((G, D), dtype=np.int64)
    for i in range(labels.shape[0]):
        out[labels[i], uidx[i]] += 1
    return out


# ---------------------------------------------------------------------------
# exact sparse draws from the binomial
# ---------------------------------------------------------------------------
@lru_cache(maxsize=128)
def binomial_tail_table(n: int, q: float):
    """Tail probabilities of ``X ~ Bin(n, q)`` on ``t = lo .. hi + 1``.

    Returns ``(lo, S, C)`` with ``S[t - lo] = P(X >= t)`` and
    ``C[t - lo] = P(X < t)``, each computed directly (``scipy.stats.binom``)
    so both tails are accurate.  ``[lo, hi]`` is the mean +- 40 standard
    deviations (+- 60); the mass outside is below ``1e-300`` and treated as 0.
    """
    mu = n * q
    sd = math.sqrt(n * q * (1 - q))
    lo = max(0, int(math.floor(mu - 40 * sd - 60)))
    hi = min(n, int(math.ceil(mu + 40 * sd + 60)))
    t = np.arange(lo, hi + 2, dtype=np.float64)
    S = stats.binom.sf(t - 1, n, q)
    C = stats.binom.cdf(t - 1, n, q)
    S[0], C[0] = 1.0, 0.0
    S[-1], C[-1] = 0.0, 1.0
    S = np.minimum.accumulate(S)
    C = np.maximum.accumulate(C)
    S.flags.writeable = False
    C.flags.writeable = False
    return lo, S, C


def _band_values(S, C, a, b, rng):
    """Draw one value of ``X`` conditioned on ``a <= X < b`` per entry (table indices)."""
    u = rng.random(a.shape[0])
    upper = S[a] <= 0.5
    out = np.empty(a.shape[0], dtype=np.int64)
    if upper.any():
        aa, bb, uu = a[upper], b[upper], u[upper]
        w = S[bb] + uu * (S[aa] - S[bb])
        x = np.searchsorted(-S, -w, side="right") - 1  # largest t with S[t] >= w
        out[upper] = np.clip(x, aa, bb - 1)
    low = ~upper
    if low.any():
        aa, bb, uu = a[low], b[low], u[low]
        w = C[aa] + uu * (C[bb] - C[aa])
        x = np.searchsorted(C, w, side="right") - 1  # C[x] <= w < C[x+1]
        out[low] = np.clip(x, aa, bb - 1)
    return out


def iid_binomial_top(N0: np.ndarray, n: int, q: float, K: int, rng: np.random.Generator,
                     min_support: int | None = None):
    """The largest of ``N0[b]`` i.i.d. ``Bin(n, q)`` supports, for each block ``b``.

    Draws, exactly, every member at or above a random threshold ``t_b``
    chosen so that at least ``K`` members (or all ``N0[b]``) are drawn, and
    ``t_b <= min_support`` when given.

    Returns
    -------
    got : numpy.ndarray
        Number drawn per block.
    values : numpy.ndarray
        Their supports, grouped by block (block 0 first), in random order.
    """
    N0 = np.asarray(N0, dtype=np.int64)
    B = N0.shape[0]
    lo, S, C = binomial_tail_table(int(n), float(q))
    top = S.shape[0] - 1  # index of t = hi + 1
    cur = np.full(B, top, dtype=np.int64)
    R = N0.copy()
    got = np.zeros(B, dtype=np.int64)
    need = None if min_support is None else int(np.clip(min_support - lo, 0, top))
    vals, blks = [], []
    for _ in range(10_000):
        deficit = np.maximum(K - got, 0)
        want = deficit > 0
        if need is not None:
            want |= cur > need
        active = np.flatnonzero(want & (R > 0) & (cur > 0))
        if active.size == 0:
            break
        d = deficit[active].astype(float)
        r = R[active].astype(float)
        c = cur[active]
        E = np.where(d > 0, d + 4 * np.sqrt(d) + 4, 0.0)
        target = S[c] + E * C[c] / r
        new = np.searchsorted(-S, -target, side="right") - 1
        new = np.where(target > 1.0, 0, new)
        new = np.minimum(np.maximum(new, 0), c - 1)
        if need is not None:
            new = np.where(c > need, np.minimum(new, need), new)
            new = np.where(d > 0, new, np.minimum(c - 1, need))
        # P(new <= X < cur | X < cur)
        upper = S[new] <= 0.5
        num = np.where(upper, S[new] - S[c], C[c] - C[new])
        pi = np.where(new == 0, 1.0, np.clip(num / np.maximum(C[c], 1e-300), 0.0, 1.0))
        M = rng.binomial(R[active], pi)
        if M.sum():
            a = np.repeat(new, M)
            b = np.repeat(c, M)
            vals.append(_band_values(S, C, a, b, rng) + lo)
            blks.append(np.repeat(active, M))
        R[active] -= M
        got[active] += M
        cur[active] = new
    if vals:
        v = np.concatenate(vals)
        bl = np.concatenate(blks)
        order = np.argsort(bl, kind="stable")
        v = v[order]
    else:
        v = np.zeros(0, dtype=np.int64)
    return got, v


# ---------------------------------------------------------------------------
# count engine
# ---------------------------------------------------------------------------
class CountSupport(SupportSource):
    """Supports drawn from their exact laws given each group's true answer counts.

    Parameters
    ----------
    data : SortedData
        The users' values, sorted once (:func:`prepare`).
    labels : numpy.ndarray
        Group of each user (from :func:`ldp.protocols.assign_groups`).
    plan : Plan
    rng_draw : numpy.random.Generator
        Stream for the supports.
    rng_keys : numpy.random.Generator
        Stream for the tie-breaking keys.
    """

    def __init__(self, data: SortedData, labels: np.ndarray, plan: Plan, rng_draw, rng_keys):
        G = plan.n_groups
        sizes = np.bincount(labels, minlength=G)
        super().__init__(plan, sizes, rng_keys)
        self.data = data
        self.draw = rng_draw
        self.gcounts = _count_groups(labels, data.user_index, G, data.D)
        self._memory: dict = {}
        self._splits: dict = {}
        self._run_answers: dict = {}

    # -- true counts -------------------------------------------------------
    def _row(self, groups) -> np.ndarray:
        groups = tuple(groups)
        if len(groups) == self.plan.n_groups:
            return self.data.counts
        if len(groups) == 1:
            return self.gcounts[groups[0]]
        return self.gcounts[list(groups)].sum(axis=0)

    def _answers(self, q: Question):
        if not q.channels:
            return self.data.answers(q)
        key = (q.start, q.stop, q.channels, q.seed)
        hit = self._run_answers.get(key)
        if hit is None:
            hit = self.data.answers(q)
            self._run_answers[key] = hit
        return hit

    def answer_counts(self, groups, q: Question):
        """Distinct answers held by the users of ``groups`` and how many hold each."""
        uniq, inv, starts = self._answers(q)
        row = self._row(groups)
        if starts is not None:
            cnt = np.add.reduceat(row, starts)
            ok = cnt > 0
            return uniq[ok], cnt[ok]
        if uniq is None:  # dense channel answers
            cnt = np.rint(np.bincount(inv, weights=row, minlength=q.domain_size)).astype(np.int64)
            nz = np.flatnonzero(cnt)
            return nz.astype(np.uint64), cnt[nz]
        cnt = np.rint(np.bincount(inv, weights=row, minlength=len(uniq))).astype(np.int64)
        ok = cnt > 0
        return uniq[ok], cnt[ok]

    def _candidate_counts(self, groups, q, cands):
        ans, cnt = self.answer_counts(groups, q)
        idx = cands.index_of(ans)
        ok = idx >= 0
        idx, cnt = idx[ok], cnt[ok]
        o = np.argsort(idx, kind="stable")
        return idx[o], cnt[o]

    # -- draws -------------------------------------------------------------
    def supports(self, groups, question, cands) -> np.ndarray:
        N = self.n_users(groups)
        o = question.oracle()
        idx, cnt = self._candidate_counts(groups, question, cands)
        out = self.draw.binomial(N, o.q, size=cands.size).astype(np.int64)  # law 1, N_c = 0
        out[idx] = self.draw.binomial(cnt, o.p) + self.draw.binomial(N - cnt, o.q)  # law 1
        return out

    def top(self, groups, question, cands, K, *, block=None, min_support=None, remember=False) -> Selection:
        N = self.n_users(groups)
        o = question.oracle()
        nz_idx, nz_cnt = self._candidate_counts(groups, question, cands)
        hold = self.draw.binomial(nz_cnt, o.p)  # law 1, holders
        non = self.draw.binomial(N - nz_cnt, o.q)  # law 1, the others
        # zero class: candidates nobody in the groups holds
        bsize = cands.size if block is None else int(block)
        nb = cands.size // bsize
        nz_blk = nz_idx // bsize
        N0 = bsize - np.bincount(nz_blk, minlength=nb)
        got, zval = iid_binomial_top(N0, N, o.q, K, self.draw, min_support)
        z_idx = np.empty(zval.shape[0], dtype=np.int64)
        pos = 0
        blk_start = np.searchsorted(nz_blk, np.arange(nb + 1))
        for b in np.flatnonzero(got):
            g = int(got[b])
            ordinal = self.draw.choice(int(N0[b]), g, replace=False)
            z = nz_idx[blk_start[b]:blk_start[b + 1]] - b * bsize
            shift = z - np.arange(z.shape[0])
            z_idx[pos:pos + g] = b * bsize + ordinal + np.searchsorted(shift, ordinal, side="right")
            pos += g
        all_idx = np.concatenate([nz_idx, z_idx])
        all_sup = np.concatenate([hold + non, zval]).astype(np.int64)
        keys = self.rng.random(all_idx.shape[0])
        blocks = None if block is None else all_idx // bsize
        sel = select_top(all_sup, keys, K, blocks=blocks, min_support=min_support)
        if remember:
            all_hold = np.concatenate([hold, np.zeros(zval.shape[0], dtype=hold.dtype)])
            self._memory[question] = dict(values=cands.values_at(all_idx[sel]), hold=all_hold[sel],
                                          non=(all_sup - all_hold)[sel], groups=tuple(groups))
        return Selection(all_idx[sel], all_sup[sel], N)

    # -- SPM pairs ----------------------------------------------------------
    def _group_pattern_counts(self, g, q, patterns_sorted):
        ans, cnt = self.answer_counts((g,), q)
        pos = match_sorted(patterns_sorted, ans)
        ok = pos >= 0
        return np.bincount(pos[ok], weights=cnt[ok], minlength=patterns_sorted.shape[0]).round().astype(np.int64)

    def _split(self, q: Question):
        """Per-group (holder, non-holder) successes of the remembered patterns of ``q``."""
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
        sizes = np.array([self.sizes[g] for g in groups])[:, None]
        nonh = sizes - held
        out = {}
        for succ, pop in ((mem["hold"].astype(np.int64), held), (mem["non"].astype(np.int64), nonh)):
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
            out.setdefault("parts", []).append(np.stack(parts))
        hold_parts, non_parts = out["parts"]
        res = {"values": vals, "groups": groups, "hold": hold_parts, "non": non_parts}
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
        return sp["hold"][gi, j], sp["non"][gi, j]

    def pair(self, group, qa, qb, A, B):
        xA, xAbar = self._lookup(qa, group, A)
        yB, yBbar = self._lookup(qb, group, B)
        Ng = self.sizes[group]
        # joint counts in the group
        row = self.gcounts[group]
        ans_a = self._distinct_answers(qa)
        ans_b = self._distinct_answers(qb)
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
        return (xA + xAbar).astype(np.int64), (yB + yBbar).astype(np.int64), I.astype(np.int64)

    def _distinct_answers(self, q: Question) -> np.ndarray:
        key = ("ans", q.start, q.stop, q.channels, q.seed)
        hit = self.data._cache.get(key)
        if hit is None:
            hit = q.answer(self.data.distinct, self.data.m)
            if not q.channels:
                self.data._cache[key] = hit
        return hit
