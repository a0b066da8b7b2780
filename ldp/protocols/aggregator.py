"""The server's side of a deployment: wire reports in, each checked as it arrives, heavy hitters out.

:class:`Aggregator` (made by :meth:`ldp.protocols.HeavyHitterProtocol.aggregator`)
receives the bytes devices send (:func:`ldp.client.report`), checks every
report on its own (:func:`ldp.client.parse_reports`: version, plan id, user
index, group, length, every field's range; then that no user reports twice),
keeps the valid ones, and aggregates them with the protocol's aggregation
whenever asked (:meth:`Aggregator.result`, as often as reports keep coming).

A batch is taken whole or not at all: a bad report refuses the batch with a
``ValueError`` naming it and what is wrong, and leaves the aggregator as it
was (nothing counted, nothing half-added), unless the caller asks to skip the
bad ones (``invalid="skip"``), in which case the valid ones are added and the
refused ones listed.  A batch is read :data:`CHUNK` reports at a time and
refused at the first chunk holding a bad report, so a batch of bad reports
costs a chunk, not the batch.

Costs and limits
----------------
Every cost is proportional to what is sent.  The server builds the plan's
group labels once, at start-up (``n`` bytes; about 1 s for ``n = 10**8``), so
a report's group is a lookup: :meth:`Aggregator.add` of one report costs the
same at ``n = 10**4`` and ``10**8`` (``benchmarks/bench_hostile.py``).  The
limits: a plan's JSON at most :data:`ldp.core.MAX_PLAN_BYTES`, at most
:data:`ldp.core.MAX_USERS` users, FLH pools of at most
:data:`ldp.oracles.flh.MAX_POOL_SIZE` functions, at most
:data:`MAX_BATCH_REPORTS` reports per :meth:`Aggregator.add_many`; each error
names its limit.  A store the server restarts on is compared with its plan
before anything else is read.

What is kept
------------
Each accepted batch as a :class:`~ldp.core.ProtocolReports` (the users'
indices, groups and oracle reports: 9 bytes of seed and symbol per OLH report
plus 9 bytes of index and group), merged on demand
(:meth:`Aggregator.reports`), plus the plan's labels (``n`` bytes) and one
bit per user of the plan (who has reported: ``n / 8`` bytes).
:meth:`Aggregator.reports` is exactly what
:meth:`~ldp.protocols.HeavyHitterProtocol.aggregate` and
:class:`ldp.engines.ReportSupport` take.

With ``store=folder`` the accepted batches go to a report store on disk
instead (:mod:`ldp.core.reportwriter`, one Parquet file per group and batch,
appended as each batch is accepted), and :meth:`Aggregator.result` aggregates
the store, one group and one chunk at a time (or on a dask cluster): the
server's memory is the labels and who has reported (``9 n / 8`` bytes),
whatever the number of reports.  A server restarted on the same folder takes
up where it stopped (the users already stored cannot report again).  An
append per report is a batch per report: with a store, send reports in
batches (:meth:`Aggregator.add_many`).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..client import wire
from ..core import HeavyHitterResult, Plan, ProtocolReports
from ..core.reportstore import StoredReports, open_store
from ..core.reportwriter import append_batch

__all__ = ["Aggregator", "INVALID", "CHUNK", "MAX_BATCH_REPORTS"]

#: what :meth:`Aggregator.add_many` does with a batch holding bad reports
INVALID = ("raise", "skip")
#: reports checked at a time: a batch is refused at the first chunk holding a bad report
CHUNK = 2**16
#: the most reports one :meth:`Aggregator.add_many` call takes (``2**24``, about 600 MiB of OLH reports)
MAX_BATCH_REPORTS = 2**24


class Aggregator:
    """Receives wire reports for one published plan, checks each, and aggregates them.

    Parameters
    ----------
    protocol : HeavyHitterProtocol
        The protocol that made the plan (its configuration is checked
        against the plan's).
    plan : Plan or str
        The published plan (or its JSON).
    store : str or os.PathLike, keyword-only, optional
        A report store folder: accepted batches are appended to it, not kept
        in memory; an existing store of the same plan is continued.

    Examples
    --------
    >>> import ldp
    >>> from ldp.client import report_many
    >>> pem = ldp.PEM(2.0, k=4, m=16)
    >>> plan = pem.plan(2000, rng=1)
    >>> server = pem.aggregator(plan)
    >>> server.add_many(report_many(plan, [7] * 2000, users=range(2000)))
    []
    >>> server.n_reports
    2000
    >>> int(server.result(rng=0).heavy_hitters[0])
    7
    """

    def __init__(self, protocol: Any, plan: Plan | str, *, store=None):
        if isinstance(plan, str):
            plan = Plan.from_json(plan)
        self._protocol = protocol
        self._plan = protocol.check_plan(plan)  # its n, seed and parameters: before anything proportional to n
        self._target = wire.target(self._plan)
        self._plan.labels()  # built once, at start-up: a report's group is then a lookup (kept by the plan)
        self._seen = np.zeros((self._plan.n_users + 7) // 8, dtype=np.uint8)
        self._batches: list[ProtocolReports] = []
        self._n = 0
        self._store = store
        if store is not None and (Path(store) / "store.json").exists():  # a restart: who is stored already
            stored = open_store(store, plan=self._plan)  # compared with the plan before anything else
            for g in range(self._plan.n_groups):
                for (u,) in stored.chunks(g, [], users=True):
                    self._mark(u)
            self._n = stored.n

    @property
    def plan(self) -> Plan:
        """The published plan the reports must be for."""
        return self._plan

    @property
    def n_reports(self) -> int:
        """Reports accepted so far (one per user)."""
        return self._n

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return (f"Aggregator({self._protocol.name}, plan id {self._target.pid.hex()[:12]}, "
                f"{self._n} of n = {self._plan.n_users} users reported)")

    def reported(self, users) -> np.ndarray:
        """Whether each of ``users`` (plan indices) has a report here."""
        u = np.asarray(users, dtype=np.int64)
        return ((self._seen[u >> 3] >> (u & 7).astype(np.uint8)) & 1).astype(bool)

    # -- receiving --------------------------------------------------------
    def add(self, report: bytes) -> None:
        """Check one wire report and keep it.

        Raises
        ------
        TypeError
            ``report`` is not bytes.
        ValueError
            The report is refused (the message says why); nothing changes.
        """
        wire.check_report(report)
        self.add_many([report])

    def add_many(self, reports: Sequence[bytes], *, invalid: str = "raise") -> list[tuple[int, str]]:
        """Check a batch of wire reports, vectorised, and keep the valid ones.

        Parameters
        ----------
        reports : sequence of bytes
            Wire reports (:func:`ldp.client.report`), at most
            :data:`MAX_BATCH_REPORTS`; each must be bytes (the check of :meth:`add`).
        invalid : {"raise", "skip"}
            A batch with a bad report: ``"raise"`` refuses all of it (a
            ``ValueError`` naming the first bad report, its position and what
            is wrong; the aggregator unchanged), as soon as the chunk of
            :data:`CHUNK` reports holding it is checked; ``"skip"`` keeps the
            valid reports and returns the refused ones.

        Returns
        -------
        list of (int, str)
            The refused reports' positions in ``reports`` and what is wrong
            with each (empty when all were kept).

        Notes
        -----
        A report is refused when it is truncated or padded, of another wire
        format version, for another plan, names a user outside ``[0, n)`` or
        a group other than the plan's for that user, has a field out of its
        range, or comes from a user who already reported (here or earlier in
        the batch: the first one counts).
        """
        if invalid not in INVALID:
            raise ValueError(f"invalid must be one of {INVALID}, got {invalid!r}")
        if isinstance(reports, wire.WIRE_TYPES):
            raise TypeError("reports must be a sequence of wire reports (bytes objects), not one bytes object; "
                            "use add(report) for one")
        k = len(reports)
        if k > MAX_BATCH_REPORTS:
            raise ValueError(f"reports holds {k:,} reports, more than MAX_BATCH_REPORTS = 2**24 per batch; send "
                             f"them in several batches")
        parts: list[tuple[int, wire.ParsedReports, np.ndarray]] = []
        refused: list[tuple[int, str]] = []
        marked: list[np.ndarray] = []  # users marked as reported while the batch is checked (unmarked if refused)
        try:
            for lo in range(0, k, CHUNK):
                chunk = reports[lo:lo + CHUNK] if isinstance(reports, (list, tuple)) else \
                    [reports[i] for i in range(lo, min(k, lo + CHUNK))]
                parsed = wire.parse_reports(self._target.source, chunk, every_problem=invalid == "skip")
                problems = dict(parsed.problems)
                positions, users = parsed.positions(), parsed.users()
                twice = self._duplicates(positions, users)
                for p in positions[twice]:
                    problems[int(p)] = "comes from a user who has already reported (each user reports once)"
                if problems and invalid == "raise":
                    i, why = min(problems.items())
                    n_bad = parsed.n_refused + int(twice.sum())
                    last = lo + CHUNK >= k
                    more = "" if n_bad == 1 and last else \
                        (f" ({n_bad} of the {k} reports are bad)" if last else
                         f" (at least {n_bad} of the {k} reports are bad; the rest were not read)")
                    who = "the report" if k == 1 else f"report {lo + i} of the batch"
                    raise ValueError(f"{who} {why}; nothing was added{more}")
                fresh = users[~twice]
                self._mark(fresh)  # later chunks see them: the first report of a user counts
                marked.append(fresh)
                refused += [(lo + i, why) for i, why in sorted(problems.items())]
                parts.append((lo, parsed, positions[twice]))
            batch = self._batch(parts)
            if batch is not None:
                if self._store is not None:
                    append_batch(batch, self._store)  # atomic: a failure leaves the store as it was
                else:
                    self._batches.append(batch)
        except BaseException:
            for u in marked:
                self._unmark(u)
            raise
        if batch is not None:
            self._n += batch.n
        return refused

    def _mark(self, u: np.ndarray) -> None:
        np.bitwise_or.at(self._seen, u >> 3, (np.uint8(1) << (u & 7).astype(np.uint8)))

    def _unmark(self, u: np.ndarray) -> None:
        np.bitwise_and.at(self._seen, u >> 3, ~(np.uint8(1) << (u & 7).astype(np.uint8)))

    def _duplicates(self, positions: np.ndarray, users: np.ndarray) -> np.ndarray:
        """Which of the valid reports come from a user seen before (here, or earlier in the batch)."""
        twice = self.reported(users) if users.size else np.zeros(0, dtype=bool)
        order = np.lexsort((positions, users))  # by user, then by position: the first one counts
        su = users[order]
        again = np.zeros(users.size, dtype=bool)
        again[order[1:]] = su[1:] == su[:-1]
        return twice | again

    def _batch(self, parts: list[tuple[int, wire.ParsedReports, np.ndarray]]) -> ProtocolReports | None:
        """The accepted reports of the checked chunks as one :class:`ProtocolReports`, by user index (or ``None``).

        ``parts``: each chunk's first position, its parsed reports and the
        positions (in the chunk) of its duplicates, left out.
        """
        plan = self._plan
        users, labels, reports = [], [], []
        for g in range(plan.n_groups):
            us, reps = [], []
            for _, parsed, drop in parts:
                entry = parsed.groups.get(g)
                if entry is None:
                    continue
                pos, u, r = entry
                sel = np.flatnonzero(~np.isin(pos, drop)) if drop.size else np.arange(u.size)
                us.append(u[sel])
                reps.append([x[sel] for x in r])
            if not us:
                reports.append([o.reports_class.empty(o.params) for o in self._target.oracles[g]])
                continue
            u = np.concatenate(us)
            merged = [type(col[0]).concat(col) if len(col) > 1 else col[0] for col in zip(*reps)]
            order = np.argsort(u, kind="stable")
            users.append(u[order])
            labels.append(np.full(order.size, g, dtype=plan.labels_dtype))
            reports.append([r[order] for r in merged])
        if not users or not sum(a.size for a in users):
            return None
        u = np.concatenate(users)
        lab = np.concatenate(labels)
        order = np.argsort(u, kind="stable")
        return ProtocolReports(self._protocol.name, plan.params, plan, lab[order], reports, users=u[order])

    # -- what was received ------------------------------------------------
    def batches(self) -> list[ProtocolReports]:
        """The accepted batches kept in memory, as :class:`ProtocolReports` each (none with a ``store``)."""
        return list(self._batches)

    def stored(self) -> StoredReports:
        """The report store as it is now (``store=`` only): what :meth:`result` aggregates."""
        if self._store is None:
            raise ValueError("this aggregator keeps its reports in memory (no store=)")
        if not (Path(self._store) / "store.json").exists():
            raise ValueError("no report has been accepted yet")
        return open_store(self._store, plan=self._plan)

    def reports(self) -> ProtocolReports:
        """Every accepted report, merged by user index: what :meth:`ldp.protocols.HeavyHitterProtocol.aggregate` takes.

        Raises
        ------
        ValueError
            No report yet.
        """
        if self._store is not None:
            return ProtocolReports.load(self._store, plan=self._plan)  # the whole store, in memory
        if not self._batches:
            raise ValueError("no report has been accepted yet")
        if len(self._batches) > 1:
            self._batches = [ProtocolReports.concat(self._batches)]  # merged once, kept merged
        return self._batches[0]

    def result(self, *, rng=None, client=None) -> HeavyHitterResult:
        """The protocol's aggregation of the reports accepted so far (call again as more arrive).

        Parameters
        ----------
        rng : None, int, SeedSequence, BitGenerator or Generator
            Randomness for breaking ties between equal supports.
        client : dask.distributed.Client, optional
            With a ``store``: count on this cluster (see
            :meth:`~ldp.protocols.HeavyHitterProtocol.aggregate`).

        Returns
        -------
        HeavyHitterResult
            As :meth:`~ldp.protocols.HeavyHitterProtocol.aggregate` on
            :meth:`reports`: estimates scaled to the users who reported.
        """
        if self._store is not None:
            return self._protocol.aggregate(self.stored(), rng=rng, client=client)
        return self._protocol.aggregate(self.reports(), rng=rng)
