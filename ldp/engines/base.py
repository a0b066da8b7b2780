"""The interface every engine implements: :class:`SupportSource`, and what a selection returns."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core import Candidates, Plan, Question, select_top

__all__ = ["Selection", "SupportSource"]


@dataclass
class Selection:
    """What a selection step returns: candidate positions (ranked) and their supports.

    Attributes
    ----------
    index : numpy.ndarray
        Positions of the selected candidates in the queried set, best first.
    support : numpy.ndarray
        Their supports (``int64``).
    n_users : int
        Number of users whose reports were counted.
    """

    index: np.ndarray
    support: np.ndarray
    n_users: int


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
        :class:`ldp.engines.CountSupport`, nothing else).

    Attributes
    ----------
    engine : str
        ``"protocol"`` or ``"counts"`` (recorded in every result).
    n : int
        Number of users in the run (the population the estimates are scaled to).
    """

    engine: str = "?"

    def __init__(self, plan: Plan, sizes: Sequence[int] | np.ndarray, *, rng: np.random.Generator):
        self.plan = plan
        self.sizes = tuple(int(s) for s in sizes)
        self.n = int(sum(self.sizes))
        self.rng = rng

    def n_users(self, groups: Sequence[int]) -> int:
        """Number of users in ``groups``."""
        return int(sum(self.sizes[g] for g in groups))

    def _select_all(self, sup: np.ndarray, groups: Sequence[int], K: int, *, block: int | None = None,
                    min_support: int | None = None) -> Selection:
        """:meth:`top` given the support of every candidate: one uniform tie key per candidate, in order."""
        keys = np.asarray(self.rng.random(sup.shape[0]))
        blocks = None if block is None else np.arange(sup.shape[0]) // block
        sel = select_top(sup, keys, K, blocks=blocks, min_support=min_support)
        return Selection(sel, sup[sel], self.n_users(groups))

    @abstractmethod
    def top(self, groups: Sequence[int], question: Question, cands: Candidates, K: int, *,
            block: int | None = None, min_support: int | None = None, remember: bool = False) -> Selection:
        """Top ``K`` candidates by support (per block of ``block`` consecutive candidates), ranked.

        Also returns every candidate with ``support >= min_support`` when given.
        ``remember`` keeps what :meth:`pair` needs about the selected ones.
        Ties are broken by :func:`ldp.core.select_top`'s uniform keys.
        """

    @abstractmethod
    def supports(self, groups: Sequence[int], question: Question, cands: Candidates) -> np.ndarray:
        """Support of every candidate (``int64``), summed over ``groups``."""

    @abstractmethod
    def pair(self, group: int, qa: Question, qb: Question, A: np.ndarray,
             B: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """SPM: ``(J_a, J^b, I_ab)`` in ``group`` for patterns ``A`` of ``qa`` and ``B`` of ``qb``."""
