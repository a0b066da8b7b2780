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
listed in ``book/after_pem_choices.md``; in short:

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

from ..validation import check_fraction, check_int
from ..values import concat
from ._base import HeavyHitterProtocol, split_bits
from ._core import ExplicitCandidates, Plan, RangeCandidates, channel_hash, scaled_estimate
from ._oracle_question import check_oracle, make_question
from ._result import RoundInfo

__all__ = ["SFP", "sfp_queries"]

#: longest fragment (the pair's answer must fit the question machinery)
MAX_FRAGMENT_BITS = 30


def sfp_queries(m: int, hash_bits: int, fragment_bits: int) -> int:
    """Fragment queries of SFP: ``sum_l 2^(hash_bits + |fragment l|)``."""
    P = -(-m // fragment_bits)
    return sum(1 << (hash_bits + b - a) for a, b in split_bits(m, P))


class SFP(HeavyHitterProtocol):
    """Sequence Fragment Puzzle: fragments joined by a puzzle hash (see the module notes).

    Parameters
    ----------
    epsilon : float
        Privacy budget of each user (her reports together spend exactly
        ``epsilon``).  At most ``s`` times the per-report limit of the
        ``oracle`` (:func:`ldp.protocols._oracle_question.report_epsilon_limit`),
        where ``s = 2`` with the default budget split (two reports at
        ``epsilon / 2``) and ``s = 1`` with ``final_fraction``: for CMS
        ``2 * 709.78`` (``709.78``; ``e^budget`` must be a finite double), for
        HR ``2 * 26 ln 2 = 36.04`` (``18.02``), for OLH
        ``2 ln(2**31 - 1) = 42.98`` (``21.49``), for Hashtogram ``2 * 706.3``
        (``706.3``).  Checked at construction.
    k : int
        Number of heavy hitters.
    m : int
        Bits per value.
    query_limit : int, default 2**20
        Bound on the oracle queries (fragment pairs plus final candidates).
    threshold : float, optional
        Release every value estimated at or above ``threshold * n``.
    fragment_bits : int, optional
        Bits per fragment, 1 to 30; default the largest whose fragment
        queries fit in ``query_limit / 2``.
    hash_bits : int, default 8
        Bits of the puzzle hash (Apple: 8), 1 to 16.
    oracle : {"CMS", "HR", "Hashtogram", "OLH"}, default "CMS"
        Frequency oracle of both reports.
    final_fraction : float, optional
        ``None``: each user reports a fragment and her whole value at
        ``epsilon / 2`` each; a fraction in (0, 1): that share of the users
        reports only the whole value, the others only a fragment, all at the
        full budget.
    fragments_kept : int, optional
        (hash, fragment) pairs kept per position, best first; default ``2 k``.
    check_hash : bool, default True
        Drop joined candidates whose own puzzle hash differs from their pieces'.

    References
    ----------
    Apple Differential Privacy Team, "Learning with Privacy at Scale", 2017.
    """

    name = "SFP"

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, fragment_bits: int | None = None, hash_bits: int = 8,
                 oracle: str = "CMS", final_fraction: float | None = None, fragments_kept: int | None = None,
                 check_hash: bool = True):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold)
        self.hash_bits = check_int(hash_bits, "hash_bits", 1, 16)
        self.oracle = check_oracle(oracle)
        self.final_fraction = None if final_fraction is None else check_fraction(final_fraction, "final_fraction")
        self.fragments_kept = 2 * self.k if fragments_kept is None else check_int(fragments_kept, "fragments_kept", 1)
        if not isinstance(check_hash, (bool, np.bool_)):
            raise TypeError(f"check_hash must be True or False, got {check_hash!r}")
        self.check_hash = bool(check_hash)
        self._check_epsilon_limit()
        hi = min(self.m, MAX_FRAGMENT_BITS)
        h = self.hash_bits
        if fragment_bits is not None:
            f = check_int(fragment_bits, "fragment_bits", 1, hi)
            cost = sfp_queries(self.m, h, f)
            if cost + self.k > self.query_limit:
                raise ValueError(f"query_limit = {self.query_limit} is too small for SFP with fragment_bits = {f}, "
                                 f"hash_bits = {h}: it needs at least {cost + self.k}")
        else:
            ok = [f for f in range(1, hi + 1) if 2 * sfp_queries(self.m, h, f) <= self.query_limit]
            if not ok:
                need = 2 * min(sfp_queries(self.m, h, f) for f in range(1, hi + 1))
                raise ValueError(f"query_limit = {self.query_limit} is too small for SFP with m = {self.m}, "
                                 f"hash_bits = {h}: the smallest limit that works is {need}")
            f = max(ok)
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
    def _budget_split(self) -> int:
        return 2 if self.final_fraction is None else 1

    def _report_oracle(self) -> str:
        return self.oracle

    def _eps(self) -> tuple[float, float]:
        if self.final_fraction is None:
            return self.epsilon / 2, self.epsilon / 2  # two reports: eps/2 + eps/2 = eps
        return self.epsilon, self.epsilon

    def _public(self, rng) -> dict:
        return {"seed": int(rng.integers(0, 2**63))}  # the puzzle hash, announced to the users

    def _public_from_plan(self, plan: Plan) -> dict:
        return {"seed": plan.questions[0][0].seed}

    def questions(self, seed: int):
        """The fragment questions (one per position) and the whole-value question."""
        e_frag, e_whole = self._eps()
        frag = [make_question(a, b, e_frag, self.oracle, 1 << self.hash_bits, seed) for a, b in self.bounds]
        return frag, make_question(0, self.m, e_whole, self.oracle)

    def _plan(self, n: int, public: dict) -> Plan:
        frag, whole = self.questions(public["seed"])
        P = len(frag)
        if self.final_fraction is None:
            return Plan(self.m, (1.0 / P,) * P, tuple((q, whole) for q in frag))
        ff = self.final_fraction
        return Plan(self.m, ((1.0 - ff) / P,) * P + (ff,), tuple((q,) for q in frag) + ((whole,),))

    # -- server ----------------------------------------------------------
    def _join(self, kept: list[tuple[np.ndarray, np.ndarray]], widths: list[int]):
        """Candidates: for every hash value found at all positions, the product of its fragments."""
        P = len(kept)
        common = set(kept[0][0].tolist())
        for hs, _ in kept[1:]:
            common &= set(hs.tolist())
        # strongest hashes first: by the sum of the ranks of their best fragment at each position
        def first_rank(hs, h):
            return int(np.flatnonzero(hs == h)[0])
        order = sorted(common, key=lambda h: (sum(first_rank(hs, h) for hs, _ in kept), h))
        budget = self.max_candidates
        cols = [[] for _ in range(P)]
        owners = []
        for h in order:
            lists = [fr[hs == h] for hs, fr in kept]  # in rank order
            while np.prod([len(x) for x in lists], dtype=float) > budget and max(len(x) for x in lists) > 1:
                j = int(np.argmax([len(x) for x in lists]))
                lists[j] = lists[j][:-1]  # drop the weakest fragment of the longest list
            size = int(np.prod([len(x) for x in lists]))
            if size > budget:
                break
            grids = np.meshgrid(*[np.arange(len(x)) for x in lists], indexing="ij")
            for l in range(P):
                cols[l].append(lists[l][grids[l].ravel()])
            owners.append(np.full(size, h, dtype=np.uint64))
            budget -= size
            if budget <= 0:
                break
        if not owners:
            return None, None
        vals = np.concatenate(cols[0]).astype(np.uint64)
        bits = widths[0]
        for l in range(1, P):
            vals = concat(vals, bits, np.concatenate(cols[l]).astype(np.uint64), widths[l])
            bits += widths[l]
        return vals, np.concatenate(owners)

    def _aggregate(self, source, plan: Plan, n: int):
        seed = self._public_from_plan(plan)["seed"]
        frag, whole = self.questions(seed)
        rounds, kept, widths = [], [], []
        for l, q in enumerate(frag):
            w = q.seg_bits
            cands = RangeCandidates(q.domain_size, q.width)
            sel = source.top((l,), q, cands, self.fragments_kept)
            idx = sel.index[:self.fragments_kept]
            sup = sel.support[:self.fragments_kept]
            o = q.oracle()
            est = scaled_estimate(sup, sel.n_users, o.p, o.q, n)
            rounds.append(RoundInfo(f"position {l + 1}", "fragment", q.start, q.stop, (l,), sel.n_users,
                                    cands.size, cands.values_at(idx), sup, est, q))
            kept.append(((idx >> w).astype(np.uint64), (idx & ((1 << w) - 1)).astype(np.uint64)))
            widths.append(w)
        vals, owners = self._join(kept, widths)
        info = {"joined": 0 if vals is None else int(vals.shape[0])}
        if vals is not None and self.check_hash:
            ok = channel_hash(vals, self.m, 1 << self.hash_bits, seed) == owners
            vals = vals[ok]
        info["after_hash_check"] = 0 if vals is None else int(vals.shape[0])
        if vals is None or vals.shape[0] == 0:
            empty = np.zeros((0,) + ((() if self.m <= 64 else (-(-self.m // 64),))), dtype=np.uint64)
            z = np.zeros(0, dtype=np.int64)
            groups = plan.groups_asking(whole)
            rounds.append(RoundInfo("final", "final", 0, self.m, groups, source.n_users(groups), 0, empty, z,
                                    z.astype(float), whole, info))
            return (empty, z.astype(float), z), rounds
        out = self._final(source, plan, whole, ExplicitCandidates(vals, self.m), rounds)
        rounds[-1].info.update(info)
        return out, rounds
