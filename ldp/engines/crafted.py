r"""Users whose reports are crafted, not randomized: what the count engine needs to know of them.

A malicious user (:mod:`ldp.attacks`) sends a report she built to support
chosen answers (the *marked* answers of a question: her targets' prefixes,
segments, blocks or whole values).  The count engine (:class:`ldp.engines.CountSupport`)
then adds to the honest supports of law 1

* for a marked answer ``a`` of a question: the **exact** number of crafted
  reports of the counted groups that support ``a`` (counted on the real
  crafted reports by :mod:`ldp.attacks`, or for input manipulators, who run
  the honest client, drawn per user from its law; :attr:`CraftedUsers.marked`);
* for every other answer: ``Bin(f, rho)``, ``f`` crafted users in the counted
  groups and ``rho`` the probability that one crafted report supports an
  answer it was not built for (:attr:`CraftedUsers.rho`).

So a candidate nobody honest holds has support ``Bin(N - f, q) + Bin(f, rho)``
(:func:`ldp.engines.sampling.sum_tail_table`), a marked one
``Bin(N_c, p) + Bin(N - f - N_c, q) + F_c``.  The crafted users' own values are
ignored (they are removed from the honest tally).

**Where this is exact.**  ``rho`` is exact when a crafted report's support of
an unmarked answer is a Bernoulli draw independent of everything else: a
report whose hash seed is drawn at random (input manipulation, a random
perturbed value, a maximal-gain report for one target) supports another value
with the oracle's probability by the pairwise independence of the hash family
(:mod:`ldp.oracles.hashing`).  A seed *searched* for making several targets
collide is conditioned on more than two hash values, which pairwise
independence does not cover: there ``rho`` is the unconditioned value, an
approximation.  Across candidates the draws are independent, as for the honest
users (see :mod:`ldp.engines`).  For SPM's pairs the joint supports of two
marked answers are exact counts too (:attr:`CraftedUsers.joint`); a pair with
an unmarked side draws the overlap of the two sets of supporting crafted
reports as a hypergeometric (the two reports of a crafted user are built
independently).

**FLH** (:mod:`ldp.oracles.flh`, law 4 of :mod:`ldp.engines`) needs neither
``marked`` nor ``rho``: its supports are functions of the tally ``T[j, y]``,
which is additive over users.  The count engine draws the honest users' tally
from its exact law (:meth:`ldp.FLH.draw_tally`) and adds the crafted reports'
own tally (its ``tallies``, counted on the real crafted reports),
so the joint law of every candidate's support is **exact** for every kind of
fake report, searched pool members included.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..core import Question

__all__ = ["CraftedUsers"]


@dataclass(frozen=True, eq=False)
class CraftedUsers:
    """The crafted reports among a run's users, as the count engine uses them.

    Parameters
    ----------
    users : numpy.ndarray
        Plan indices of the crafted users (``int64``, increasing).  Their own
        values in the data set are ignored.
    rho : mapping of Question to float
        For each question: the probability that a crafted report supports an
        answer it was not built for.
    marked : mapping of Question to (numpy.ndarray, numpy.ndarray)
        For each question: the marked answers (canonical ``question.width``-bit
        values, distinct) and, shape ``(n_groups, n_answers)``, how many
        crafted reports of each group support each of them.
    joint : mapping of (int, Question, Question) to numpy.ndarray
        For SPM's pair groups: ``joint[g, qa, qb][i, j]`` crafted users of
        group ``g`` whose ``qa`` report supports marked answer ``i`` of ``qa``
        and whose ``qb`` report supports marked answer ``j`` of ``qb``.
    tallies : mapping of (int, Question) to numpy.ndarray
        For FLH questions: ``tallies[g, q]`` is the tally ``T[j, y]``
        (:meth:`ldp.FLH.tally`, ``int64`` ``(h, d')``) of the crafted reports
        of group ``g`` to ``q``.
    """

    users: np.ndarray
    rho: Mapping[Question, float]
    marked: Mapping[Question, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    joint: Mapping[tuple[int, Question, Question], np.ndarray] = field(default_factory=dict)
    tallies: Mapping[tuple[int, Question], np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        users = np.asarray(self.users, dtype=np.int64)
        if users.ndim != 1 or (users.size > 1 and np.any(np.diff(users) <= 0)):
            raise ValueError("users must be distinct plan indices in increasing order")
        object.__setattr__(self, "users", users)
        for q, r in self.rho.items():
            if not 0.0 <= float(r) <= 1.0:
                raise ValueError(f"rho of {q} must be a probability in [0, 1], got {r}")
