"""The protocols whose users report parts of their value and the whole value: :class:`TwoPhaseProtocol`.

The strawman (segments), SPM (pairs of segments), MCM (channel blocks),
TreeHist (prefixes) and SFP (fragments) share the plan of their groups and the
one rule that splits each user's budget between the two phases
(``final_fraction``).
"""
from __future__ import annotations

from abc import abstractmethod
from dataclasses import replace

import numpy as np

from ..core import Plan, Question, make_question
from ..validation import check_fraction
from .base import HeavyHitterProtocol

__all__ = ["TwoPhaseProtocol"]


class TwoPhaseProtocol(HeavyHitterProtocol):
    """A protocol whose users report parts of their value and the whole value.

    The strawman (segments), SPM (pairs of segments), MCM (channel blocks),
    TreeHist (prefixes) and SFP (fragments): the users are split into one
    *part group* per part (SPM: per pair of segments), and the release tests
    candidates built from the parts with the whole-value reports.  The budget
    rule (``final_fraction``) is the same for all of them:

    * ``None`` (default): every user sends her ``part_reports`` part reports and
      the whole value, each at ``epsilon / (part_reports + 1)`` (the original
      budget split, section 6.2.6);
    * a fraction ``f`` in (0, 1): that share of the users forms a final group
      that reports only the whole value at the full budget; the others send
      only their part reports, ``epsilon / part_reports`` each (section 6.2.4
      uses 0.1).

    So :attr:`max_epsilon` is ``part_reports + 1`` times the oracle's limit per
    report (:func:`ldp.core.report_epsilon_limit`; OLH: 21.49), and that limit
    itself with ``final_fraction``.

    Parameters
    ----------
    epsilon, k, m, query_limit, threshold
        See :class:`HeavyHitterProtocol`.
    final_fraction : float, optional
        See above.
    """

    #: part reports each user of a part group sends (SPM: her two segments; 0: no part phase)
    part_reports: int = 1
    #: whether the part questions use a public hash seed announced in the plan (MCM, SFP)
    public_hash: bool = False

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, final_fraction: float | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold)
        self.final_fraction = None if final_fraction is None else check_fraction(final_fraction, "final_fraction")

    @abstractmethod
    def _part_questions(self, epsilon: float, seed: int) -> list[Question]:
        """One question per part (segment, block, level, fragment), each at budget ``epsilon``."""

    def _part_groups(self, parts: list[Question]) -> list[tuple[Question, ...]]:
        """The part questions each part group answers (default: one group per part)."""
        return [(q,) for q in parts]

    def _budget_split(self) -> int:
        r = self.part_reports
        return r + 1 if r and self.final_fraction is None else 1

    def budgets(self) -> tuple[float, float]:
        """Budget of each part report and of the whole-value report (the ``final_fraction`` rule).

        Returns
        -------
        part, whole : float
        """
        r = self.part_reports
        if r and self.final_fraction is None:
            return self.epsilon / (r + 1), self.epsilon / (r + 1)
        return (self.epsilon / r if r else self.epsilon), self.epsilon

    def questions(self, seed: int = 0, pool_seed: int = 0) -> tuple[list[Question], Question]:
        """The part questions (one per part) and the whole-value question.

        Parameters
        ----------
        seed : int
            The public hash seed of the part questions (MCM, SFP: from the plan).
        pool_seed : int
            FLH's public pool seed (from the plan; ignored by the other oracles).

        Returns
        -------
        parts : list of Question
        whole : Question
        """
        e_part, e_whole = self.budgets()
        parts = self._part_questions(e_part, seed)
        if self.pool_size:  # FLH: every question uses the plan's pool
            parts = [replace(q, pool_size=self.pool_size, pool_seed=pool_seed) if q.oracle_name == "FLH" else q
                     for q in parts]
        pool = self._pool({"pool_seed": pool_seed})
        return parts, make_question(0, self.m, e_whole, self.oracle, **pool)

    def _plan_questions(self, plan: Plan) -> tuple[list[Question], Question]:
        """:meth:`questions` of a published plan (its public seeds)."""
        public = self._plan_public(plan)
        return self.questions(public.get("seed", 0), public.get("pool_seed", 0))

    def _public(self, rng: np.random.Generator) -> dict:
        return {"seed": int(rng.integers(0, 2**63))} if self.public_hash else {}

    def _public_from_plan(self, plan: Plan) -> dict:
        return {"seed": plan.questions[0][0].seed} if self.public_hash else {}

    def _plan(self, n: int, public: dict) -> Plan:
        parts, whole = self.questions(public.get("seed", 0), public.get("pool_seed", 0))
        groups = [tuple(qs) for qs in self._part_groups(parts)]
        G = len(groups)
        if G == 0:  # no part phase (TreeHist with a single level): the whole value only
            return Plan(self.m, (1.0,), ((whole,),))
        if self.final_fraction is None:
            return Plan(self.m, (1.0 / G,) * G, tuple(qs + (whole,) for qs in groups))
        ff = self.final_fraction
        return Plan(self.m, ((1.0 - ff) / G,) * G + (ff,), tuple(groups) + ((whole,),))

