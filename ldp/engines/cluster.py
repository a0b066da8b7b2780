"""The protocol engine on a dask cluster: each round's partial supports computed on the workers, summed.

:class:`DaskSupport` is :class:`ldp.engines.StreamSupport` with the per-partition
work sent to the workers of a ``dask.distributed.Client``.  For every
question (a PEM round, a TreeHist level, SFP's fragment positions and final
test):

1. the client scatters the round's candidates to the workers (once per round);
2. one task per partition (a Parquet file of a report store, one group and
   batch; or a chunk of in-memory reports scattered once, when the run starts)
   reads its reports in chunks and returns their summed partial support
   (:meth:`ldp.oracles.FrequencyOracle.partial_support`: OLH's ``int64`` support
   of each candidate, FLH's ``(h, d')`` tally);
3. the partial supports are added on the workers in a tree (fan-in
   :data:`FAN_IN`); only the total comes back to the client, which finishes it
   (:meth:`~ldp.oracles.FrequencyOracle.finish_support`: FLH hashes each
   candidate ``h`` times there), breaks ties and selects the next candidates.

Counts are integers, so the result equals the in-memory aggregation bit for bit
(``tests/test_scale.py`` checks it on a ``dask.distributed.LocalCluster``).

What crosses the network per round: the candidates (8 bytes per candidate per
64 bits of value, to each worker), one small task description per partition
(the file's path, size, row count and schema: the workers read the files from
storage they share with the client: NFS, a cluster file system), the partial
results between workers during the tree sum (``8 |C|`` bytes each for OLH,
``8 h d'`` for FLH), and one total to the client.  The reports themselves never
cross it (with in-memory reports: once, when they are scattered).

Pointing it at a real cluster
-----------------------------
Start a scheduler and workers where the store is readable, with this package
installed in the workers' environment (``pip install "ldp[cluster]"``), then
either pass ``client=Client(address)`` to ``aggregate`` or set
``DASK_SCHEDULER_ADDRESS=tcp://host:8786`` (as for :func:`ldp.experiments.run_grid`).
On a batch system, `dask-jobqueue <https://jobqueue.dask.org>`_ starts the
workers as jobs (``SLURMCluster(cores=..., memory=...).scale(jobs=...)``,
``Client(cluster)``); on Kubernetes, the `dask-kubernetes
<https://kubernetes.dask.org>`_ operator (``KubeCluster``) or the Dask Helm
chart, with the store on a volume every worker pod mounts.  Each worker needs
memory for one chunk of reports and a round's candidates (a few hundred MB with
the default chunk).
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numpy as np

from ..core import ProtocolReports
from ..core.reportstore import DEFAULT_CHUNK, Partition, StoredReports, read_partition
from ..validation import check_int
from .base import SupportSource
from .reports import ReportSupport
from .stream import StreamSupport, sum_partials

__all__ = ["DaskSupport", "scheduler_client", "report_source", "FAN_IN"]

#: partial supports added per task of the tree sum on the workers
FAN_IN = 8


@contextlib.contextmanager
def scheduler_client(address: str | None = None) -> Iterator:
    """A ``dask.distributed.Client`` of the scheduler at ``address`` (default ``DASK_SCHEDULER_ADDRESS``).

    Yields ``None`` when no address is given or set; the client is closed on exit.
    """
    address = (os.environ.get("DASK_SCHEDULER_ADDRESS", "") if address is None else address).strip()
    if not address:
        yield None
        return
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise ImportError("DASK_SCHEDULER_ADDRESS is set but dask.distributed is not installed; "
                          "install requirements-cluster.txt") from exc
    client = Client(address, set_as_default=False)
    try:
        yield client
    finally:
        client.close()


def _add(*parts):
    """Tree-sum task: the sum of partial supports (``None`` entries skipped)."""
    return sum_partials(p for p in parts if p is not None)


def _partition_partial(part: Partition, slot: int, question, vals: np.ndarray, chunk: int):
    """Worker task: the summed partial support of one stored partition (read and checked on the worker)."""
    o = question.oracle()
    return sum_partials(o.partial_support(r, vals) for (r,) in read_partition(part, [slot], chunk=chunk) if len(r))


def _memory_partial(reports, question, vals: np.ndarray):
    """Worker task: the partial support of a scattered chunk of in-memory reports."""
    return question.oracle().partial_support(reports, vals) if len(reports) else None


class DaskSupport(StreamSupport):
    """Supports computed on the workers of a dask cluster (see the module notes).

    Parameters
    ----------
    reports : StoredReports or ProtocolReports
        A report store (the workers read its files; they must see the same
        paths) or in-memory reports (scattered to the workers in chunks now).
    rng : numpy.random.Generator
        Stream for the tie-breaking keys (drawn on the client).
    client : dask.distributed.Client
    chunk : int
        Reports per chunk read by a worker (and per scattered piece).
    """

    def __init__(self, reports, *, rng: np.random.Generator, client, chunk: int = DEFAULT_CHUNK):
        if not isinstance(reports, (StoredReports, ProtocolReports)):
            raise TypeError(f"reports must be StoredReports or ProtocolReports, got {type(reports).__name__}")
        SupportSource.__init__(self, reports.plan, reports.sizes, rng=rng)
        self.reports = reports  # type: ignore[assignment]
        self.chunk = check_int(chunk, "chunk", lo=1)
        self.client = client
        self._scattered: dict | None = None
        if isinstance(reports, ProtocolReports):  # in memory: scattered once, in chunks
            self._scattered = {}
            for g in range(self.plan.n_groups):
                for j, r in enumerate(reports.group_reports(g)):
                    pieces = [r[lo:lo + self.chunk] for lo in range(0, len(r), self.chunk)]
                    self._scattered[g, j] = client.scatter(pieces, hash=False) if pieces else []

    def _tasks(self, groups, question, vals_future):
        futures = []
        for g in groups:
            j = self.plan.slot(g, question)
            if self._scattered is None:
                for part in self.reports.partitions(g):
                    futures.append(self.client.submit(_partition_partial, part, j, question, vals_future, self.chunk,
                                                      pure=False))
            else:
                for piece in self._scattered[g, j]:
                    futures.append(self.client.submit(_memory_partial, piece, question, vals_future, pure=False))
        return futures

    def supports(self, groups, question, cands) -> np.ndarray:
        vals = cands.values()
        [vals_future] = self.client.scatter([vals], broadcast=True, hash=False)  # a new key each round
        level = self._tasks(groups, question, vals_future)
        while len(level) > 1:  # the tree sum, on the workers
            level = [self.client.submit(_add, *level[i:i + FAN_IN], pure=False) for i in range(0, len(level), FAN_IN)]
        total = level[0].result() if level else None
        if total is None:
            return np.zeros(vals.shape[0], dtype=np.int64)
        return question.oracle().finish_support(total, vals)

    def pair(self, group, qa, qb, A, B):
        """SPM's joint counts, on the client (a store: streamed; in memory: as :class:`ReportSupport` does)."""
        if self._scattered is None:
            return super().pair(group, qa, qb, A, B)
        return ReportSupport(self.reports, rng=self.rng).pair(group, qa, qb, A, B)  # type: ignore[arg-type]


@contextlib.contextmanager
def report_source(reports, *, rng: np.random.Generator, client=None, chunk: int | None = None) -> Iterator:
    """The protocol engine's support source for ``reports``, wherever they are and wherever they are counted.

    * a ``client``: :class:`DaskSupport` on its cluster;
    * in-memory :class:`ldp.core.ProtocolReports`: :class:`ldp.engines.ReportSupport`;
    * a report store: :class:`DaskSupport` on the scheduler named by
      ``DASK_SCHEDULER_ADDRESS`` when it is set (connected for the aggregation
      and closed after), else :class:`ldp.engines.StreamSupport` in this process.

    ``chunk``: reports read (or scattered) at once (default :data:`ldp.core.reportstore.DEFAULT_CHUNK`).
    """
    chunk = DEFAULT_CHUNK if chunk is None else check_int(chunk, "chunk", lo=1)
    if client is not None:
        yield DaskSupport(reports, rng=rng, client=client, chunk=chunk)
    elif not isinstance(reports, StoredReports):
        yield ReportSupport(reports, rng=rng)
    else:
        with scheduler_client() as env_client:
            if env_client is not None:
                yield DaskSupport(reports, rng=rng, client=env_client, chunk=chunk)
            else:
                yield StreamSupport(reports, rng=rng, chunk=chunk)
