"""What a protocol run returns (:class:`HeavyHitterResult`) and what users send (:class:`ProtocolReports`)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..paths import atomic_path
from ..values import as_values
from ._core import Plan, Question, match_sorted, sort_unique

__all__ = ["RoundInfo", "HeavyHitterResult", "ProtocolReports"]

_FORMAT = 1


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
        from ..values import to_ints

        return pd.DataFrame({"rank": np.arange(1, len(self) + 1), "value": to_ints(self.heavy_hitters),
                             "estimate": self.estimates, "support": self.support})

    def __repr__(self) -> str:
        return (f"HeavyHitterResult(protocol={self.protocol!r}, found={len(self)}, k={self.k}, "
                f"n={self.n}, epsilon={self.epsilon}, engine={self.engine!r})")


class ProtocolReports:
    """Everything the users of one protocol run sent: their groups and OLH reports.

    Parameters
    ----------
    protocol : str
        Name of the producing protocol.
    params : dict
        The protocol's parameters (JSON-serialisable).
    plan : Plan
        Groups and questions (including public randomness such as MCM's channel seed).
    labels : numpy.ndarray
        Group of each user.
    reports : sequence of sequence of ldp.oracles.OLHReports
        ``reports[g][j]``: the reports of group ``g``'s users (in user order)
        to the ``j``-th question of the group.
    """

    def __init__(self, protocol: str, params: dict, plan: Plan, labels: np.ndarray,
                 reports: Sequence[Sequence[Any]]):
        self.protocol = str(protocol)
        self.params = dict(params)
        self.plan = plan
        self.labels = np.asarray(labels)
        self._reports = tuple(tuple(r) for r in reports)
        G = plan.n_groups
        if len(self._reports) != G:
            raise ValueError(f"reports must have one entry per group ({G}), got {len(self._reports)}")
        self.sizes = tuple(int(s) for s in np.bincount(self.labels, minlength=G)[:G])
        for g in range(G):
            if len(self._reports[g]) != len(plan.questions[g]):
                raise ValueError(f"group {g} must have {len(plan.questions[g])} report sets, "
                                 f"got {len(self._reports[g])}")
            for r in self._reports[g]:
                if len(r) != self.sizes[g]:
                    raise ValueError(f"group {g} has {self.sizes[g]} users but {len(r)} reports")

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.labels.shape[0])

    def __len__(self) -> int:
        return self.n

    def group_reports(self, g: int) -> tuple:
        """The OLH reports of group ``g``, one set per question."""
        return self._reports[g]

    @property
    def nbytes(self) -> int:
        return int(self.labels.nbytes + sum(r.nbytes for rs in self._reports for r in rs))

    def __repr__(self) -> str:
        return f"ProtocolReports(protocol={self.protocol!r}, n={self.n}, groups={self.plan.n_groups})"

    # -- disk ------------------------------------------------------------
    def save(self, path) -> None:
        """Write to ``path`` (``.npz``) atomically (temporary file + :func:`os.replace`)."""
        arrays = {"labels": self.labels}
        oracles = []
        for g, rs in enumerate(self._reports):
            row = []
            for j, r in enumerate(rs):
                row.append(r.params)
                for name, a in r.arrays.items():
                    arrays[f"r{g}_{j}_{name}"] = a
            oracles.append(row)
        meta = {"format": _FORMAT, "protocol": self.protocol, "params": self.params,
                "plan": self.plan.to_dict(), "oracles": oracles}
        with atomic_path(os.fspath(path)) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, __meta__=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path) -> "ProtocolReports":
        """Read reports written by :meth:`save`."""
        from ..oracles.base import _REGISTRY

        with np.load(os.fspath(path), allow_pickle=False) as f:
            if "__meta__" not in f.files:
                raise ValueError(f"{os.fspath(path)!r} is not a protocol reports file")
            meta = json.loads(str(f["__meta__"]))
            if meta.get("format") != _FORMAT:
                raise ValueError(f"unsupported protocol reports format {meta.get('format')!r}")
            plan = Plan.from_dict(meta["plan"])
            labels = f["labels"]
            reports = []
            for g, row in enumerate(meta["oracles"]):
                rs = []
                for j, params in enumerate(row):
                    kind = _REGISTRY[params["kind"]]
                    rs.append(kind(params, **{name: f[f"r{g}_{j}_{name}"] for name in kind.fields}))
                reports.append(rs)
        return cls(meta["protocol"], meta["params"], plan, labels, reports)
