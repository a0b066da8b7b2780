r"""TreeHist (Bassily, Nissim, Stemmer and Thakurta, NeurIPS 2017).

The protocol
------------
TreeHist walks down the binary prefix tree of the ``m``-bit values.  Users
are split at random into one group per level; a user of level ``t`` reports
the first ``t b`` bits of her value (``b`` bits per level, ``b = 1`` in the
paper) through a frequency oracle.  The server starts from all ``2^b``
prefixes of level 1; at each level it estimates the children of the prefixes
it kept with that level's group and keeps those whose estimate clears a
threshold derived from the oracle's standard deviation (the "pruning" step).
In a final phase every user also reports her whole value, and the survivors
of the last level, extended by the remaining bits, are estimated with those
reports; the top ``k`` (or, with ``threshold``, every value estimated at or
above ``threshold * n``) are released.

Where the paper leaves a detail open, this module chooses as listed in
``book/interpretation.md`` (section "After PEM", ``after-pem-treehist``); in short:

* **budget** -- ``final_fraction=None`` (default): each user splits ``epsilon``
  into ``epsilon/2`` for her prefix and ``epsilon/2`` for her whole value (the
  paper's two phases; pure-LDP does the same).  A fraction ``f`` in (0, 1)
  instead reserves that share of the users for the whole value, everyone at
  the full budget (as MCM's ``final_fraction``);
* **levels** -- the tree stops one level short of the leaves: the last level
  would report the whole value, which the final phase already asks for;
* **pruning** -- a child is kept when its support reaches
  ``N q + z sqrt(N q (1 - q))`` (its estimate is ``z`` standard deviations
  of a zero count above 0), with ``z = Phi^{-1}(1 - beta / |D_t|)`` for the
  ``|D_t|`` children tested (a Bonferroni bound: at most ``beta`` false
  prefixes per level in expectation); at least ``min_keep`` (default ``k``,
  the top-k adaptation the PEM paper applies to its competitors) and at most
  ``max_keep`` (from ``query_limit``) prefixes are kept;
* **oracle** -- ``"HR"`` (default): Hadamard response with Acharya et al.'s
  block rule, the Hadamard-style oracle for every ``epsilon``;
  ``"Hashtogram"`` is :class:`ldp.HR` with one block, whose support law is
  that of Hashtogram's one-bit Hadamard randomizer (HR reduces to it for
  ``epsilon < ln 2``).  Replacing the paper's randomizer by a better one is
  the PEM paper's own step 1 for its competitors (section 6.1);
  ``"OLH"`` or ``"CMS"`` on request.

Both engines apply: every step is a support count of one oracle question, so
the count engine draws law 1 of :mod:`ldp.engines` with the oracle's ``p``
and ``q`` (exact for the hashed oracles, see :mod:`ldp.oracles.hr`).

References
----------
R. Bassily, K. Nissim, U. Stemmer, A. Thakurta, "Practical Locally Private
Heavy Hitters", NeurIPS 2017 (arXiv:1707.04982); JMLR 21(16), 2020.
"""
from __future__ import annotations

import functools
import math

from scipy import stats

from ..core import Candidates, ExtendCandidates, Question, RangeCandidates, RoundInfo, make_question
from ..engines import SupportSource
from ..validation import check_fraction, check_int
from ..values import sort_unique
from .twophase import TwoPhaseProtocol

__all__ = ["TreeHist"]


@functools.lru_cache(maxsize=4096)
def _z_score(beta: float, n_candidates: int) -> float:
    """The standard normal's upper ``beta / n_candidates`` quantile (memoised: levels and runs repeat it)."""
    return float(stats.norm.isf(beta / n_candidates))


class TreeHist(TwoPhaseProtocol):
    """TreeHist: a prefix tree walked level by level, pruned by a noise threshold.

    Parameters
    ----------
    epsilon, k, m, final_fraction
        See :class:`~ldp.protocols.TwoPhaseProtocol`: a prefix report and the
        whole value, or with ``final_fraction`` one of them per user (a tree
        without levels, ``m <= bits_per_level``, has the whole value only).
        :attr:`max_epsilon` is twice the ``oracle``'s limit per report (once
        with ``final_fraction`` or without levels): 36.04 for HR, 42.98 for OLH,
        1412.6 for Hashtogram, 1419.6 for CMS.
    query_limit : int, default 2**20
        Bound on the oracle queries summed over the levels and the final step.
    threshold : float, optional
        Release every value estimated at or above ``threshold * n`` instead of
        the top ``k`` (the pruning is unchanged).
    bits_per_level : int, default 1
        Bits added per tree level (the paper: 1), 1 to 30.
    oracle : {"HR", "Hashtogram", "OLH", "CMS", "FLH"}, default "HR"
        Frequency oracle of every report (see :mod:`ldp.core.oracle_specs`).
    pool_size : int, optional
        FLH's number of public hash functions (only with ``oracle="FLH"``).
    beta : float, default 0.05
        Expected number of never-held prefixes that clear the pruning
        threshold per level (sets ``z``, see the module notes), in (0, 1).
    min_keep : int, optional
        Prefixes always kept per level (the best ones); default ``k``.
    max_keep : int, optional
        Most prefixes kept per level; default the largest number whose
        queries fit in ``query_limit``.

    References
    ----------
    Bassily et al., NeurIPS 2017, section 3 ("TreeHist").
    """

    name = "TreeHist"

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, bits_per_level: int = 1, oracle: str = "HR",
                 final_fraction: float | None = None, beta: float = 0.05, min_keep: int | None = None,
                 max_keep: int | None = None, pool_size: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold, final_fraction=final_fraction)
        self.bits_per_level = check_int(bits_per_level, "bits_per_level", 1, 30)
        self._set_oracle(oracle, pool_size)
        self.beta = check_fraction(beta, "beta")
        b = self.bits_per_level
        #: prefix lengths of the tree levels (the leaves, length m, are the final step's)
        self.lengths = tuple(range(b, self.m, b))
        levels = len(self.lengths)
        self.min_keep = self.k if min_keep is None else check_int(min_keep, "min_keep", 1)
        self._check_epsilon_limit()
        if levels == 0:
            need = 1 << self.m
            if need > self.query_limit:
                raise ValueError(f"query_limit = {self.query_limit} is too small for TreeHist with m = {self.m} "
                                 f"<= bits_per_level: the final step tests all 2**m = {need} values")
            self.max_keep = 0
        else:
            last_ext = self.m - self.lengths[-1]
            per = levels * (1 << b) + (1 << last_ext)  # queries per kept prefix, summed over the steps
            cap = (self.query_limit - (1 << b)) // per
            if max_keep is not None:
                mk = check_int(max_keep, "max_keep", 1)
                if mk > cap:
                    raise ValueError(f"max_keep = {mk} makes more than query_limit = {self.query_limit} oracle "
                                     f"queries; with these settings max_keep must be at most {max(cap, 0)}")
                if mk < self.min_keep:
                    raise ValueError(f"max_keep = {mk} must be at least min_keep = {self.min_keep}")
                cap = mk
            if cap < self.min_keep:
                smallest = (1 << b) + self.min_keep * per
                raise ValueError(f"query_limit = {self.query_limit} is too small for TreeHist with m = {self.m}, "
                                 f"bits_per_level = {b}, min_keep = {self.min_keep}: the smallest limit that "
                                 f"works is {smallest}")
            self.max_keep = int(cap)

    @property
    def params(self) -> dict:
        return {**super().params, "bits_per_level": self.bits_per_level, "oracle": self.oracle,
                "final_fraction": self.final_fraction, "beta": self.beta, "min_keep": self.min_keep,
                "max_keep": self.max_keep}

    # -- plan -------------------------------------------------------------
    @property
    def part_reports(self) -> int:  # type: ignore[override]
        """One prefix report per user of a level group; none when the tree has no level."""
        return 1 if self.lengths else 0

    def _part_questions(self, epsilon: float, seed: int) -> list[Question]:
        return [make_question(0, L, epsilon, self.oracle) for L in self.lengths]

    def prune_support(self, n_users: int, n_candidates: int, oracle) -> int:
        """Smallest support kept by the pruning rule (module notes)."""
        q = oracle.q
        z = _z_score(self.beta, max(1, n_candidates))
        return int(math.ceil(n_users * q + z * math.sqrt(n_users * q * (1 - q)) - 1e-9))

    # -- server ----------------------------------------------------------
    def _aggregate(self, source: SupportSource) -> list[RoundInfo]:
        pre, whole = self._plan_questions(source.plan)
        rounds: list[RoundInfo] = []
        cands: Candidates
        for t, q in enumerate(pre):
            if t == 0:
                cands = RangeCandidates(1 << self.lengths[0], self.lengths[0])
            else:
                cands = ExtendCandidates(sort_unique(rounds[-1].kept), self.lengths[t - 1], self.bits_per_level)
            floor_ = self.prune_support(source.n_users(source.plan.groups_asking(q)), cands.size, q.oracle())
            rounds.append(self._round(source, q, cands, self.min_keep, min_support=floor_, limit=self.max_keep,
                                      name=f"level {t + 1}", kind="prefix", info={"min_support": floor_}))
        if rounds:
            cands = ExtendCandidates(sort_unique(rounds[-1].kept), self.lengths[-1], self.m - self.lengths[-1])
        else:
            cands = RangeCandidates(1 << self.m, self.m)
        rounds.append(self._final(source, whole, cands))
        return rounds
