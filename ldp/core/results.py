"""What users send (:class:`ProtocolReports`) and what a protocol run returns (:class:`HeavyHitterResult`).

* :class:`RoundInfo` -- the diagnostics of one aggregation step;
* :class:`HeavyHitterResult` -- the released heavy hitters, their estimates and every step's diagnostics;
* :class:`ProtocolReports` -- a batch of users' reports under a published plan, savable and mergeable.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import reportfile
from ..oracles.base import reports_class, uint_dtype
from ..values import as_values, match_sorted, sort_unique, to_ints
from . import reportstore, reportwriter
from .question import Plan, Question

__all__ = ["RoundInfo", "HeavyHitterResult", "ProtocolReports"]


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


class ProtocolReports:
    """What a batch of users of one protocol sent: their plan indices, groups and OLH reports.

    Parameters
    ----------
    protocol : str
        Name of the producing protocol.
    params : dict
        The protocol's parameters (JSON-serialisable).
    plan : Plan
        The published plan (groups, questions, public seeds, ``n``).
    labels : numpy.ndarray
        Group of each user of the batch (must agree with ``plan.labels()``).
    reports : sequence of sequence of ldp.oracles.OLHReports
        ``reports[g][j]``: the reports of the batch's users of group ``g``
        (in increasing user index) to the ``j``-th question of the group.
    users : numpy.ndarray, optional
        Plan index of each user of the batch, increasing (default
        ``0 .. len(labels) - 1``).

    Notes
    -----
    :meth:`concat` merges batches of the same plan into one object, ordered
    by user index, so that batches covering users ``0 .. n-1`` give exactly
    the reports of one batch of all users.
    """

    def __init__(self, protocol: str, params: dict, plan: Plan, labels: np.ndarray,
                 reports: Sequence[Sequence[Any]], users: np.ndarray | None = None):
        self.protocol = str(protocol)
        self.params = dict(params)
        self.plan = plan
        self.labels = np.asarray(labels)
        self.users = (np.arange(self.labels.shape[0], dtype=np.int64) if users is None
                      else np.asarray(users, dtype=np.int64))
        self._reports = tuple(tuple(r) for r in reports)
        G = plan.n_groups
        if self.labels.ndim != 1 or self.users.shape != self.labels.shape:
            raise ValueError(f"labels and users must be 1-D arrays of the same length, got shapes "
                             f"{self.labels.shape} and {self.users.shape}")
        if self.users.size:
            if np.any(np.diff(self.users) <= 0):
                raise ValueError("users must be distinct plan indices in increasing order")
            if plan.n is not None and (self.users[0] < 0 or self.users[-1] >= plan.n):
                raise ValueError(f"users must be plan indices in [0, n = {plan.n}), found "
                                 f"{int(self.users[0] if self.users[0] < 0 else self.users[-1])}")
            if self.labels.max() >= G:
                raise ValueError(f"labels must be group numbers in [0, {G}), found {int(self.labels.max())}")
        if plan.n is not None and plan.seed is not None and not np.array_equal(plan.labels()[self.users],
                                                                               self.labels):
            raise ValueError("labels do not match the plan's group assignment of these users")
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
        """Number of users in these reports."""
        return int(self.labels.shape[0])

    @property
    def complete(self) -> bool:
        """Whether every user of the plan reported."""
        return self.plan.n is None or self.n == self.plan.n

    def __len__(self) -> int:
        return self.n

    def group_reports(self, g: int) -> tuple:
        """The OLH reports of group ``g``, one set per question."""
        return self._reports[g]

    @property
    def nbytes(self) -> int:
        return int(self.labels.nbytes + sum(r.nbytes for rs in self._reports for r in rs))

    def __eq__(self, other) -> bool:
        if not isinstance(other, ProtocolReports):
            return NotImplemented
        return (self.protocol == other.protocol and self.params == other.params and self.plan == other.plan
                and np.array_equal(self.users, other.users) and np.array_equal(self.labels, other.labels)
                and self._reports == other._reports)

    __hash__ = None  # type: ignore[assignment]  # mutable arrays: not hashable

    def __repr__(self) -> str:
        of = "" if self.plan.n is None else f" of {self.plan.n}"
        return (f"ProtocolReports(protocol={self.protocol!r}, users={self.n}{of}, groups={self.plan.n_groups}, "
                f"reports={sum(len(rs) for rs in self._reports)} sets, {self.nbytes / 2**20:.3g} MiB)")

    # -- batches -----------------------------------------------------------
    @classmethod
    def concat(cls, parts: Sequence[ProtocolReports]) -> ProtocolReports:
        """Merge batches of reports made with the same plan (in any order).

        Users are put in increasing index order, so batches that together
        cover users ``0 .. n-1`` give exactly the reports of one batch of all
        users (same ``rng``).  A user present in two batches is an error (she
        would have spent her budget twice).
        """
        parts = list(parts)
        if not parts:
            raise ValueError("parts must contain at least one ProtocolReports object")
        first = parts[0]
        for p in parts:
            if not isinstance(p, ProtocolReports):
                raise TypeError(f"parts must all be ProtocolReports, got {type(p).__name__}")
            if p.protocol != first.protocol or p.plan != first.plan:
                raise ValueError("cannot merge reports made with different plans; every batch must be "
                                 "privatized with the same published plan")
        users = np.concatenate([p.users for p in parts])
        order = np.argsort(users, kind="stable")
        su = users[order]
        if su.size > 1 and np.any(su[1:] == su[:-1]):
            dup = int(su[1:][su[1:] == su[:-1]][0])
            raise ValueError(f"user {dup} appears in more than one batch; a user reports once")
        labels = np.concatenate([p.labels for p in parts])
        reports = []
        for g in range(first.plan.n_groups):
            gu = np.concatenate([p.users[p.labels == g] for p in parts])
            go = np.argsort(gu, kind="stable")
            row = []
            for j in range(len(first.plan.questions[g])):
                merged = type(first._reports[g][j]).concat([p._reports[g][j] for p in parts])
                row.append(merged[go])
            reports.append(row)
        return cls(first.protocol, first.params, first.plan, labels[order], reports, users=su)

    # -- disk ------------------------------------------------------------
    def save(self, path) -> None:
        """Write to ``path``: one ``.npz`` file, or a batch appended to a report store folder.

        A path ending in ``.npz`` is written as one file, atomically
        (temporary file + :func:`os.replace`); its metadata holds the plan,
        the parameters and a SHA-256 checksum of the arrays, which :meth:`load`
        verifies.  Any other path is a report store folder (Parquet, one file
        per group and batch, :mod:`ldp.core.reportwriter`): these reports are
        appended as a new batch (the folder is created if needed); read it
        lazily with :meth:`open`.
        """
        if not os.fspath(path).endswith(".npz"):
            reportwriter.append_batch(self, path)
            return
        top = (self.n if self.plan.n is None else self.plan.n) - 1
        arrays = {"labels": self.labels, "users": self.users.astype(uint_dtype(max(top, 0)))}
        oracles = []
        for g, rs in enumerate(self._reports):
            row = []
            for j, r in enumerate(rs):
                row.append(r.params)
                for name, a in r.arrays.items():
                    arrays[f"r{g}_{j}_{name}"] = a
            oracles.append(row)
        meta = {"protocol": self.protocol, "params": self.params, "plan": self.plan.to_dict(), "oracles": oracles}
        reportfile.write(path, reportfile.PROTOCOL_REPORTS, meta, arrays)

    @classmethod
    def load(cls, path) -> ProtocolReports:
        """Read reports written by :meth:`save`.

        ``path`` may also be a report store folder (:meth:`save`), read
        whole into memory (:meth:`open` reads it lazily).

        Raises ``FileNotFoundError`` for a missing file and
        :class:`ldp.oracles.ReportsFileError` (a ``ValueError`` naming the file
        and the problem) for any other unusable file, as
        :meth:`ldp.oracles.Reports.load` does; a frequency oracle's reports
        file is refused as the wrong kind.
        """
        if os.path.isdir(path):  # a report store, read into memory
            stored = reportstore.open_store(path)
            labels, users, reports = stored.read()
            return cls(stored.protocol, stored.params, stored.plan, labels, reports, users=users)
        meta, arrays = reportfile.read(path, reportfile.PROTOCOL_REPORTS)
        try:
            plan = Plan.from_dict(meta["plan"])
            reports = []
            for g, row in enumerate(meta["oracles"]):
                rs = []
                for j, params in enumerate(row):
                    kind = reports_class(params["kind"])
                    rs.append(kind(params, **{name: arrays[f"r{g}_{j}_{name}"] for name in kind.fields}))
                reports.append(rs)
            return cls(meta["protocol"], meta["params"], plan, arrays["labels"], reports,
                       users=arrays["users"].astype(np.int64))
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
            raise reportfile.inconsistent(path, err) from err

    @staticmethod
    def open(directory) -> reportstore.StoredReports:
        """A report store folder (written by :meth:`save`), read lazily: every protocol's ``aggregate`` takes it.

        See :class:`ldp.core.reportstore.StoredReports` for the checks made before any work.
        """
        return reportstore.open_store(directory)
