"""What a protocol run returns (:class:`HeavyHitterResult`), step by step (:class:`RoundInfo`).

* :class:`RoundInfo` -- the diagnostics of one aggregation step;
* :class:`HeavyHitterResult` -- the released heavy hitters, their estimates and every step's diagnostics.

What users send is :class:`ldp.core.ProtocolReports` (:mod:`ldp.core.protocol_reports`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..values import as_values, match_sorted, sort_unique, to_ints
from .question import Question

__all__ = ["RoundInfo", "HeavyHitterResult"]


@dataclass(frozen=True, eq=False)
class RoundInfo:
    """Diagnostics of one aggregation step.

    Attributes
    ----------
    name : str
        E.g. ``"round 2"``, ``"segment 3"``, ``"block 1"``, ``"pairs"``, ``"final"``.
    kind : str
        ``"prefix"`` (PEM), ``"segment"`` (SPM, strawman), ``"block"`` (MCM),
        ``"candidates"`` (SPM's pair step, the strawman's product) or ``"final"``.
    start, stop : int
        Bit range ``v[start:stop]`` the step is about (``0, L_i`` for PEM).
    groups : tuple of int
        User groups whose reports the step used.
    n_users : int
        Number of those users.
    n_candidates : int
        Number of candidates queried (``|D_i|``; frequency-oracle queries).
    kept : numpy.ndarray
        The answers kept by the step, best first (PEM: ``C_i``; SPM: the
        segment's ``k`` patterns; MCM: ``channel * 2**b + pattern``, one per
        channel; candidates/final: whole values).
    support : numpy.ndarray
        Supports of ``kept`` (``int64``; empty for the pair step).
    estimates : numpy.ndarray
        Count estimates of ``kept`` scaled to the population.
    question : Question or None
        The question whose answers ``kept`` lists (to test membership).
    info : dict
        Step-specific extras.
    """

    name: str
    kind: str
    start: int
    stop: int
    groups: tuple
    n_users: int
    n_candidates: int
    kept: np.ndarray
    support: np.ndarray
    estimates: np.ndarray
    question: Question | None = None
    info: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        g = tuple(self.groups)
        if len(g) <= 6:
            groups = str(g)
        elif g == tuple(range(g[0], g[-1] + 1)):  # e.g. TreeHist's final step: every level's group
            groups = f"{g[0]}..{g[-1]} ({len(g)} groups)"
        else:
            groups = f"({g[0]}, {g[1]}, {g[2]}, ..., {g[-1]}) ({len(g)} groups)"
        return (f"RoundInfo({self.name!r}, {self.kind} v[{self.start}:{self.stop}], groups={groups}, "
                f"n_users={self.n_users}, n_candidates={self.n_candidates}, kept={len(self.kept)})")

    def contains(self, values: np.ndarray, m: int) -> np.ndarray:
        """Whether each value's answer survived this step (e.g. its prefix is in ``C_i``)."""
        vals = as_values(values, m, allow_empty=True)
        if self.question is None or vals.shape[0] == 0:
            return np.zeros(vals.shape[0], dtype=bool)
        ans = self.question.answer(vals, m)
        return match_sorted(sort_unique(self.kept), ans) >= 0 if self.kept.shape[0] else \
            np.zeros(vals.shape[0], dtype=bool)


@dataclass(frozen=True, eq=False)
class HeavyHitterResult:
    """Result of a heavy-hitter protocol run.

    Attributes
    ----------
    protocol : str
        ``"PEM"``, ``"SPM"``, ``"MCM"`` or ``"Strawman"``.
    heavy_hitters : numpy.ndarray
        Identified values, best first, in the canonical m-bit representation
        (:mod:`ldp.values`).  Top-k mode: at most ``k``; threshold mode: every
        value estimated at or above ``threshold * n``.
    estimates : numpy.ndarray
        Unbiased count estimates of ``heavy_hitters`` for the whole population
        (``float64``; may be negative).
    support : numpy.ndarray
        Their raw supports ``I_v`` in the final step.
    m, k, n : int
        Bits per value, requested k, number of users.
    epsilon : float
    threshold : float or None
    engine : str
        ``"protocol"`` or ``"counts"``.
    group_sizes : tuple of int
    rounds : tuple of RoundInfo
        Per-step diagnostics, in order; the last is the final release.
    params : dict
        The protocol's parameters (resolved configuration included).
    """

    protocol: str
    heavy_hitters: np.ndarray
    estimates: np.ndarray
    support: np.ndarray
    m: int
    k: int
    n: int
    epsilon: float
    threshold: float | None
    engine: str
    group_sizes: tuple
    rounds: tuple
    params: dict

    @property
    def queries(self) -> int:
        """Total frequency-oracle queries made by the aggregator."""
        return int(sum(r.n_candidates for r in self.rounds))

    def __len__(self) -> int:
        return int(self.heavy_hitters.shape[0])

    def lost_round(self, values) -> np.ndarray:
        """For each value, the index (into :attr:`rounds`) of the first step that lost it.

        ``-1`` when the value survived every step (it was released).  For PEM
        this is the round in which a heavy hitter's prefix fell out of
        ``C_i``.  For MCM a value's block in step ``l`` survives when its
        channel's winning pattern equals it.
        """
        vals = as_values(values, self.m, allow_empty=True)
        out = np.full(vals.shape[0], -1, dtype=np.int64)
        alive = np.ones(vals.shape[0], dtype=bool)
        for i, r in enumerate(self.rounds):
            if r.question is None:
                continue
            hit = r.contains(vals, self.m)
            lost = alive & ~hit
            out[lost] = i
            alive &= hit
        return out

    def to_frame(self):
        """The heavy hitters as a :class:`pandas.DataFrame` (rank, value, estimate, support)."""
        import pandas as pd

        return pd.DataFrame({"rank": np.arange(1, len(self) + 1), "value": to_ints(self.heavy_hitters),
                             "estimate": self.estimates, "support": self.support})

    def __repr__(self) -> str:
        mode = f"k={self.k}" if self.threshold is None else f"threshold={self.threshold}"
        return (f"HeavyHitterResult(protocol={self.protocol!r}, found={len(self)}, {mode}, n={self.n}, "
                f"epsilon={self.epsilon}, engine={self.engine!r}, rounds={len(self.rounds)}, "
                f"queries={self.queries})")
