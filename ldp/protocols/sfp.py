r"""The Sequence Fragment Puzzle (SFP), Apple Differential Privacy Team, 2017.

The protocol
------------
Apple's SFP finds popular new words.  The value is cut into fragments; each
user picks one fragment position ``l`` at random and reports, through a
count-mean-sketch oracle, the pair (``h(v)``, ``v[l]``): her fragment joined
with a short hash of her *whole* value, the "puzzle piece" that tells which
fragments belong together.  Every user also reports her whole value through
a second sketch.  The server finds the frequent (hash, fragment) pairs at
each position, joins, for every hash value, the fragments found at all
positions into candidate values, estimates the candidates with the
whole-value sketch and keeps the most frequent.

Here values are ``m``-bit strings: fragment ``l`` is a run of bits (the
``m`` bits are cut into ``P`` runs whose lengths differ by at most one), the
puzzle hash is the public seeded hash :func:`ldp.protocols.channel_hash`
into ``2^hash_bits`` values (Apple: 8 bits), and the pair is the answer of a
:class:`ldp.protocols.Question` with ``channels = 2^hash_bits`` -- exactly
the (channel, block) pair MCM reports, which is what SFP's fragment report
is.  The differences from MCM are the oracle (Apple's count-mean sketch),
that each position keeps its top ``fragments_kept`` pairs rather than one
pattern per channel, and that candidates are the products of all fragments
kept for a hash value.

Where Apple's description leaves a detail open, this module chooses as
listed in ``book/interpretation.md`` (section "After PEM", ``after-pem-sfp``); in short:

* **budget** -- ``final_fraction=None`` (default): the fragment report and the
  whole-value report use ``epsilon/2`` each; a fraction ``f`` in (0, 1)
  instead reserves that share of the users for the whole value (both at the
  full budget);
* **positions** -- the users are split at random into ``P`` groups of
  (almost) equal size, one per position (:func:`ldp.protocols.assign_groups`),
  rather than each drawing ``l`` independently;
* **fragment length** -- the largest whose fragment queries
  ``P 2^(hash_bits + fragment_bits)`` fit in half the query limit (the rule
  the PEM paper applies to SPM and MCM); the other half bounds the candidates;
* **selection** -- top ``fragments_kept`` pairs per position (default ``2 k``)
  instead of a frequency threshold (the PEM paper's top-k adaptation);
* **puzzle check** -- a joined candidate is kept only if its own hash equals
  the hash of the pieces it was built from (``check_hash=True``).

Both engines apply (law 1 of :mod:`ldp.engines` for every oracle question;
the pair answers are MCM's, law 3).

References
----------
Apple Differential Privacy Team, "Learning with Privacy at Scale", Apple
Machine Learning Journal 1(8), 2017, section "Sequence Fragment Puzzle".
"""
from __future__ import annotations

import numpy as np

from ..core import (
    ExplicitCandidates,
    Question,
    RangeCandidates,
    RoundInfo,
    channel_hash,
    join_products,
    make_question,
)
from ..engines import SupportSource
from ..validation import check_int
from ..values import as_values
from .sizing import fit_query_limit, split_bits
from .twophase import TwoPhaseProtocol

__all__ = ["SFP", "sfp_queries"]

#: longest fragment (the pair's answer must fit the question machinery)
MAX_FRAGMENT_BITS = 30


def sfp_queries(m: int, hash_bits: int, fragment_bits: int) -> int:
    """Fragment queries of SFP: ``sum_l 2^(hash_bits + |fragment l|)``."""
    P = -(-m // fragment_bits)
    return sum(1 << (hash_bits + b - a) for a, b in split_bits(m, P))


class SFP(TwoPhaseProtocol):
    """Sequence Fragment Puzzle: fragments joined by a puzzle hash (see the module notes).

    Parameters
    ----------
    epsilon, k, m, threshold, final_fraction
        See :class:`~ldp.protocols.TwoPhaseProtocol`: a fragment report and the
        whole value, or with ``final_fraction`` one of them per user.  The
        largest ``epsilon`` (:attr:`max_epsilon`) is twice the ``oracle``'s
        limit per report (once with ``final_fraction``): 1419.6 for CMS, 36.04
        for HR, 42.98 for OLH, 1412.6 for Hashtogram.
    query_limit : int, default 2**20
        Bound on the oracle queries (fragment pairs plus final candidates).
    fragment_bits : int, optional
        Bits per fragment, 1 to 30; default the largest whose fragment
        queries fit in ``query_limit / 2``.
    hash_bits : int, default 8
        Bits of the puzzle hash (Apple: 8), 1 to 16.
    oracle : {"CMS", "HR", "Hashtogram", "OLH", "FLH"}, default "CMS"
        Frequency oracle of both reports.
    pool_size : int, optional
        FLH's number of public hash functions (only with ``oracle="FLH"``).
    fragments_kept : int, optional
        (hash, fragment) pairs kept per position, best first; default ``2 k``.
    check_hash : bool, default True
        Drop joined candidates whose own puzzle hash differs from their pieces'.

    References
    ----------
    Apple Differential Privacy Team, "Learning with Privacy at Scale", 2017.
    """

    name = "SFP"
    public_hash = True  # the puzzle hash, announced to the users

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, fragment_bits: int | None = None, hash_bits: int = 8,
                 oracle: str = "CMS", final_fraction: float | None = None, fragments_kept: int | None = None,
                 check_hash: bool = True, pool_size: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold, final_fraction=final_fraction)
        self.hash_bits = check_int(hash_bits, "hash_bits", 1, 16)
        self._set_oracle(oracle, pool_size)
        self.fragments_kept = 2 * self.k if fragments_kept is None else check_int(fragments_kept, "fragments_kept", 1)
        if not isinstance(check_hash, (bool, np.bool_)):
            raise TypeError(f"check_hash must be True or False, got {check_hash!r}")
        self.check_hash = bool(check_hash)
        self._check_epsilon_limit()
        h = self.hash_bits
        f = fit_query_limit(self, "fragment_bits", fragment_bits, 1, min(self.m, MAX_FRAGMENT_BITS),
                            lambda f: sfp_queries(self.m, h, f) + self.k, about=f", hash_bits = {h}",
                            search_cost=lambda f: 2 * sfp_queries(self.m, h, f))
        P = -(-self.m // f)
        self.bounds = split_bits(self.m, P)
        #: the longest fragment actually used (fragments differ by at most one bit)
        self.fragment_bits = max(b - a for a, b in self.bounds)
        #: most joined candidates tested by the whole-value oracle
        self.max_candidates = self.query_limit - sfp_queries(self.m, h, f)

    @property
    def params(self) -> dict:
        return {**super().params, "fragment_bits": self.fragment_bits, "hash_bits": self.hash_bits,
                "oracle": self.oracle, "final_fraction": self.final_fraction,
                "fragments_kept": self.fragments_kept, "check_hash": self.check_hash}

    # -- plan -------------------------------------------------------------
    def _part_questions(self, epsilon: float, seed: int) -> list[Question]:
        """The fragment questions (one per position): the pair (puzzle hash, fragment)."""
        return [make_question(a, b, epsilon, self.oracle, 1 << self.hash_bits, seed) for a, b in self.bounds]

    # -- server ----------------------------------------------------------
    def _join(self, kept: list[tuple[np.ndarray, np.ndarray]], widths: list[int]):
        """Candidates: for every hash value found at all positions, the product of its fragments."""
        common = set(kept[0][0].tolist())
        for hs, _ in kept[1:]:
            common &= set(hs.tolist())
        # strongest hashes first: by the sum of the ranks of their best fragment at each position
        def first_rank(hs, h):
            return int(np.flatnonzero(hs == h)[0])
        order = sorted(common, key=lambda h: (sum(first_rank(hs, h) for hs, _ in kept), h))
        budget = self.max_candidates
        groups, owners, sizes = [], [], []
        for h in order:
            lists = [fr[hs == h] for hs, fr in kept]  # in rank order
            while np.prod([len(x) for x in lists], dtype=float) > budget and max(len(x) for x in lists) > 1:
                j = int(np.argmax([len(x) for x in lists]))
                lists[j] = lists[j][:-1]  # drop the weakest fragment of the longest list
            size = int(np.prod([len(x) for x in lists]))
            if size > budget:
                break
            groups.append(lists)  # every combination, the last position varying fastest
            owners.append(h)
            sizes.append(size)
            budget -= size
            if budget <= 0:
                break
        if not owners:
            return None, None
        return join_products(groups, widths), np.repeat(np.array(owners, dtype=np.uint64), sizes)

    def _aggregate(self, source: SupportSource) -> list[RoundInfo]:
        frag, whole = self._plan_questions(source.plan)
        rounds, kept, widths = [], [], []
        for l, q in enumerate(frag):
            w = q.seg_bits
            r = self._round(source, q, RangeCandidates(q.domain_size, q.width), self.fragments_kept,
                            limit=self.fragments_kept, name=f"position {l + 1}", kind="fragment")
            rounds.append(r)  # kept: hash * 2**w + fragment
            kept.append((r.kept >> np.uint64(w), r.kept & np.uint64((1 << w) - 1)))
            widths.append(w)
        vals, owners = self._join(kept, widths)
        info = {"joined": 0 if vals is None else int(vals.shape[0])}
        if vals is not None and self.check_hash:
            ok = channel_hash(vals, self.m, 1 << self.hash_bits, frag[0].seed) == owners
            vals = vals[ok]
        info["after_hash_check"] = 0 if vals is None else int(vals.shape[0])
        if vals is None or vals.shape[0] == 0:  # nothing to test: an empty release
            empty = as_values([], self.m, allow_empty=True)
            z = np.zeros(0, dtype=np.int64)
            groups = source.plan.groups_asking(whole)
            rounds.append(RoundInfo("final", "final", 0, self.m, groups, source.n_users(groups), 0, empty, z,
                                    z.astype(float), whole, info))
        else:
            rounds.append(self._final(source, whole, ExplicitCandidates(vals, self.m), info=info))
        return rounds
