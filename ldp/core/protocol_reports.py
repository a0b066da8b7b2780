"""What a batch of users of one protocol sent: :class:`ProtocolReports`, savable, mergeable, checked on load.

A :class:`ProtocolReports` holds the users' plan indices, their groups and,
per group and question, the oracle reports (:class:`ldp.oracles.Reports`).
:meth:`ProtocolReports.save` writes it as a reports file
(:mod:`ldp.reportfile`), and :meth:`ProtocolReports.load` checks such a file
before it reads it: the plan in its metadata (:meth:`ldp.core.Plan.from_dict`:
``n`` at most :data:`ldp.core.MAX_USERS`, no contradictory parameters), the
top-level protocol and parameters against the plan's, every group's oracle
parameters against the plan's questions (naming the group), the members
and their declared sizes against what that plan's reports can hold (at most
``n`` users; from the archive's directory and the arrays' headers, before
any array is read), the checksum (damage only: it authenticates nothing),
and last the users' groups against the plan's assignment (``O(n)``).  Given the
server's plan (``load(path, plan=...)``), the file's plan is compared with it
first, and the server's group labels (built once) serve the last check.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import reportfile
from ..oracles.base import reports_class, uint_dtype
from ..reportfile import ReportsFileError
from . import reportstore, reportwriter
from .question import Plan, PlanError

__all__ = ["ProtocolReports"]


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
        if plan.n is not None and plan.seed is not None and not np.array_equal(plan.group_of(self.users),
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
    def load(cls, path, *, plan: Plan | None = None) -> ProtocolReports:
        """Read reports written by :meth:`save`, checking the file before reading it (module notes).

        ``path`` may also be a report store folder (:meth:`save`), read
        whole into memory (:meth:`open` reads it lazily).

        Parameters
        ----------
        path : str or os.PathLike
        plan : Plan, optional
            The plan the reports must be for (a server's published plan).
            The file's plan is compared with it (its digest: ``n``, seed,
            groups, questions and parameters) before anything proportional to
            the plan's ``n`` or pools is built, and its group labels (built
            once, kept by the plan object) check the users' groups.  Without
            it the file's own plan is used, and the check of the users'
            groups costs the group assignment of the ``n`` users that plan
            claims (or, for up to :data:`ldp.core.question.FEW_USERS` users,
            a trace through it).

        Raises ``FileNotFoundError`` for a missing file and
        :class:`ldp.oracles.ReportsFileError` (a ``ValueError`` naming the file
        and the problem) for any other unusable file, as
        :meth:`ldp.oracles.Reports.load` does; a frequency oracle's reports
        file is refused as the wrong kind.
        """
        if os.path.isdir(path):  # a report store, read into memory
            stored = reportstore.open_store(path, plan=plan)
            labels, users, store_reports = stored.read()
            return cls(stored.protocol, stored.params, stored.plan, labels, store_reports, users=users)
        meta, arrays = reportfile.read(path, reportfile.PROTOCOL_REPORTS, expect=lambda m: _expected(path, m, plan))
        try:
            plan = plan if plan is not None else Plan.from_dict(meta["plan"])
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
    def open(directory, *, plan: Plan | None = None) -> reportstore.StoredReports:
        """A report store folder (written by :meth:`save`), read lazily: every protocol's ``aggregate`` takes it.

        ``plan``: the plan the reports must be for, compared first (as for
        :meth:`load`).  See :class:`ldp.core.reportstore.StoredReports` for the
        checks made before any work.
        """
        return reportstore.open_store(directory, plan=plan)


def _expected(path, meta: dict, server: Plan | None = None) -> reportfile.Expected:
    """The members a protocol reports file with metadata ``meta`` must hold, after checking the metadata.

    The plan (first against ``server``'s, when given), the top-level protocol
    and parameters and every group's oracle parameters are checked here
    (before any array is read); the rows every member declares are checked by
    the returned function.
    """
    try:
        plan = Plan.from_dict(meta["plan"])
    except KeyError:
        raise ReportsFileError(path, "has no plan in its metadata") from None
    except PlanError as err:
        raise ReportsFileError(path, f"holds an unusable plan: {err}") from None
    if server is not None and reportstore.plan_digest(plan) != reportstore.plan_digest(server):
        why = (f"for n = {plan.n:,} users" if plan.n is not None and plan.n != server.n
               else "with other groups, questions, seeds or parameters")
        raise ReportsFileError(path, f"was made with another plan ({why}) than the server's (n = {server.n}); "
                                     f"reports count only under the plan they were made for")
    if plan.n is None:
        raise ReportsFileError(path, "holds a plan without users (n and seed unset)")
    if meta.get("protocol") != plan.protocol or meta.get("params") != plan.params:
        raise ReportsFileError(path, f"has contradictory parameters: protocol {meta.get('protocol')!r} with "
                                     f"{meta.get('params')!r} at the top, {plan.protocol!r} with {plan.params!r} "
                                     f"in its plan")
    oracles = meta.get("oracles")
    if not isinstance(oracles, list) or len(oracles) != plan.n_groups:
        raise ReportsFileError(path, f"must list the oracle parameters of each of its plan's {plan.n_groups} "
                                     f"groups, got {oracles!r:.80}")
    members: dict[str, tuple[np.dtype, tuple[int, ...]]] = {
        "labels": (plan.labels_dtype, ()),
        "users": (uint_dtype(plan.n_users - 1), ())}
    for g, (row, qs) in enumerate(zip(oracles, plan.questions)):
        if not isinstance(row, list) or len(row) != len(qs):
            raise ReportsFileError(path, f"group {g}: the plan asks {len(qs)} question(s), the file lists "
                                         f"oracle parameters {row!r:.80}")
        for j, (params, q) in enumerate(zip(row, qs)):
            want = q.oracle().params
            if params != want:
                raise ReportsFileError(path, f"group {g}: its reports to question {j} are marked as made by an "
                                             f"oracle with {params!r}, but the plan asks {q.oracle()!r}")
            for f in reports_class(want["kind"]).layout(want):
                members[f"r{g}_{j}_{f.name}"] = (np.dtype(f.dtype), f.row_shape)

    def check_rows(rows: dict[str, int]) -> None:
        users = rows["labels"]
        if rows["users"] != users:
            raise ReportsFileError(path, f"holds {rows['users']:,} user indices for {users:,} group labels")
        if users > plan.n_users:
            raise ReportsFileError(path, f"holds {users:,} users, more than its plan's n = {plan.n_users:,}")
        total = 0
        for g in range(plan.n_groups):
            sizes = {rows[name] for name in rows if name.startswith(f"r{g}_")}
            if len(sizes) != 1:
                raise ReportsFileError(path, f"group {g}: its report arrays hold different numbers of users "
                                             f"{sorted(sizes)}")
            total += sizes.pop()
        if total != users:
            raise ReportsFileError(path, f"holds reports of {total:,} users in its groups but {users:,} users")

    return members, check_rows
