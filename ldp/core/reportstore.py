"""Protocol reports on disk: a partitioned Parquet store, appended batch by batch, read lazily in chunks.

A heavy-hitter run at deployment scale (``10**8`` - ``10**9`` users) does not fit
in memory and does not arrive at once.  A *report store* is a folder:

.. code-block:: text

    DIR/store.json                         the plan, the protocol, the oracle of every (group, question)
    DIR/batches/000000.json                one manifest per batch: its files, their rows and user ranges
    DIR/group=0000/batch=000000.parquet    the reports of batch 0's users of group 0
    DIR/group=0001/batch=000000.parquet    ...
    DIR/lock                               the writers' lock (empty)
    DIR/batches/000007.pending             batch 7 is being written (or its writer died)
    DIR/batches/000006.abandoned           batch 6 was never committed (refused, or its writer died)

one Parquet file (a *partition*) per group and batch.  Its columns are ``user``
(the plan index, increasing) and, for each question ``j`` of the group, the
oracle's report fields ``q{j}_{field}`` (OLH: ``q0_seed``, ``q0_y``; FLH:
``q0_index``, ``q0_y``; CMS's packed bits as fixed-size binary).  Pages carry
CRC checksums; the file's key-value metadata names the store's plan (its
SHA-256), the group and the batch.

Writing: :func:`ldp.core.reportwriter.append_batch` (``reports.save(folder)``),
batch by batch, by any number of writers at once; a batch is *committed*, and
visible, when its manifest appears (see there).

Reading (:func:`open_store`, :meth:`ldp.core.ProtocolReports.open`)
------------------------------------------------------------------
:class:`StoredReports` trusts no file and checks, before any work:

* every file it reads is a regular file reached from the folder without a
  symbolic link (:func:`ldp.safefiles.open_inside`): a link out of the
  store, a named pipe (which would block the reader for ever) or a device is
  refused;
* ``store.json`` and the manifests are at most :data:`ldp.core.storefolder.MAX_STORE_JSON_BYTES`
  and nest at most :data:`ldp.safefiles.MAX_JSON_DEPTH` levels, checked before
  they are parsed;
* given the server's plan (``plan=``), the store's plan digest is compared
  with it first, before anything proportional to the plan's ``n`` or its
  pools is built, and the server's plan (with its group labels, built once)
  serves the checks below;
* ``store.json`` (type, format, the plan, that every question's recorded
  oracle parameters are the plan's), every manifest (type, format, plan
  digest, files inside the folder);
* every batch whose files are in the store has a manifest, or is marked as
  being written or abandoned: a batch whose manifest was removed is an error
  naming it (its users would silently drop out of every aggregation);
* every file's footer (readable, the exact expected schema, the plan digest,
  group and batch in its metadata, the row count of the manifest) and,
  reading only the ``user`` column, that each file's users are increasing plan
  indices in the recorded range, that the plan assigns every one of them to
  the file's group, and that no user appears in two batches.

The reports themselves are checked chunk by chunk as they are read, before
they are used: page checksums, no missing values, and the oracle's own checks
(dtypes, ranges: :class:`ldp.oracles.Reports`).  A problem raises
:class:`ldp.oracles.ReportsFileError` naming the file.

Reopen the folder (:meth:`StoredReports.reload`) to see batches appended since:
the aggregation of a growing run is simply repeated.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..oracles.base import reports_class
from ..reportfile import ReportsFileError, inconsistent
from ..safefiles import loads_json
from .question import Plan, assign_groups
from .storefolder import (
    BATCH_TYPE,
    STORE_FORMAT,
    STORE_TYPE,
    arrow_modules,
    batch_name,
    file_name,
    opened,
    read_json,
    scan_batches,
)

__all__ = ["STORE_TYPE", "BATCH_TYPE", "STORE_FORMAT", "DEFAULT_CHUNK", "Partition", "StoredReports", "open_store",
           "read_partition", "plan_digest", "field_types"]

#: rows per chunk read (and per Parquet row group written)
DEFAULT_CHUNK = 2**21
_META_KEY = b"ldp.store"
_MAX_FILE_META_BYTES = 2**12


def plan_digest(plan: Plan) -> str:
    """SHA-256 of the plan's JSON: the identity every file and manifest of a store records."""
    return hashlib.sha256(plan.to_json().encode()).hexdigest()


# ---------------------------------------------------------------------------
# schema
# ---------------------------------------------------------------------------
def users_dtype(plan: Plan) -> np.dtype:
    return np.dtype(np.uint32) if plan.n_users <= 2**32 else np.dtype(np.uint64)


def field_types(oracle) -> tuple[tuple[str, Any], ...]:
    """The stored type of each report field of ``oracle``: a dtype name, or the byte width of packed bits.

    From the reports class's layout (:meth:`ldp.oracles.Reports.layout`).
    """
    return tuple((f.name, int(f.width) if f.packed else str(np.dtype(f.dtype)))
                 for f in oracle.reports_class.layout(oracle.params))


def plan_types(plan: Plan) -> tuple[tuple[tuple[tuple[str, Any], ...], ...], ...]:
    return tuple(tuple(field_types(q.oracle()) for q in qs) for qs in plan.questions)


def _arrow_type(pa, t):
    return pa.binary(t) if isinstance(t, int) else pa.from_numpy_dtype(np.dtype(t))


def arrow_schema(user_dtype, types, meta: dict | None = None):
    """The Parquet schema of a group's files: ``user`` and ``q{j}_{field}`` of each question ``j``."""
    pa, _ = arrow_modules()
    fields = [pa.field("user", pa.from_numpy_dtype(np.dtype(user_dtype)), nullable=False)]
    for j, slot in enumerate(types):
        for name, t in slot:
            fields.append(pa.field(f"q{j}_{name}", _arrow_type(pa, t), nullable=False))
    metadata = None if meta is None else {_META_KEY: json.dumps(meta, sort_keys=True).encode()}
    return pa.schema(fields, metadata=metadata)


def _from_arrow(col, t) -> np.ndarray:
    if isinstance(t, int):
        width = t
        buf = col.buffers()[1]
        return np.frombuffer(buf, dtype=np.uint8, count=len(col) * width, offset=col.offset * width).reshape(-1,
                                                                                                             width)
    return col.to_numpy(zero_copy_only=False)


# ---------------------------------------------------------------------------
# the store's description
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Partition:
    """One Parquet file of a store: the reports of one batch's users of one group.

    Attributes
    ----------
    path : str
        The file.
    group, batch : int
    rows : int
        Users in the file (from the manifest, checked against the footer).
    first_user, last_user : int
        The smallest and largest plan index in it.
    size : int
        The file's size in bytes when the store was opened (checked again when it is read).
    digest : str
        The store's plan digest (recorded in the file).
    oracles : tuple of dict
        The oracle parameters of the group's questions (what each slot's reports must carry).
    types : tuple
        The stored type of each field of each slot (:func:`field_types`).
    user_dtype : str
        The ``user`` column's dtype.
    root : str
        The store's folder (the file is opened from it, :func:`ldp.safefiles.open_inside`).
    rel : str
        The file's path inside the store.
    """

    path: str
    group: int
    batch: int
    rows: int
    first_user: int
    last_user: int
    size: int
    digest: str
    oracles: tuple
    types: tuple
    user_dtype: str
    root: str = ""
    rel: str = ""


def _error(path, problem: str) -> ReportsFileError:
    return ReportsFileError(path, problem)


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------
def _check_file(part: Partition, fh: IO[bytes]):
    """The Parquet file of a partition, after the footer checks (size, schema, metadata, rows)."""
    _, pq = arrow_modules()
    path = part.path
    size = os.fstat(fh.fileno()).st_size
    if size != part.size:
        raise _error(path, f"has {size} bytes, but the manifest records {part.size}: it was changed after "
                           "it was written")
    try:
        pf = pq.ParquetFile(fh, page_checksum_verification=True)
    except Exception as err:  # pyarrow raises ArrowInvalid, OSError, ... for a damaged footer
        raise _error(path, f"is truncated or damaged ({type(err).__name__}: {err})") from err
    want = arrow_schema(part.user_dtype, part.types)
    got = pf.schema_arrow
    if not got.remove_metadata().equals(want):
        raise _error(path, f"does not have the store's schema: expected {want}, found {got.remove_metadata()}")
    try:
        meta = loads_json((got.metadata or {}).get(_META_KEY, b"{}"), max_bytes=_MAX_FILE_META_BYTES,
                          limit_name="the largest ldp metadata of a store's file")
    except (ValueError, UnicodeDecodeError) as err:
        raise _error(path, f"has damaged ldp metadata ({err})") from err
    if meta != {"plan_digest": part.digest, "group": part.group, "batch": part.batch}:
        raise _error(path, f"belongs to another plan, group or batch (its metadata: {meta})")
    if pf.metadata.num_rows != part.rows:
        raise _error(path, f"has {pf.metadata.num_rows} rows, but the manifest records {part.rows}")
    return pf


@contextmanager
def _open_file(part: Partition):
    """The checked Parquet file of a partition (:func:`_check_file`), opened safely from the store."""
    try:
        with opened(part.root, part.rel) as fh:
            yield _check_file(part, fh)
    except FileNotFoundError:
        raise _error(part.path, "is missing: the store's manifest lists it") from None


def _batches(pf, columns, chunk, path):
    try:
        yield from pf.iter_batches(batch_size=int(chunk), columns=columns, use_threads=True)
    except ReportsFileError:  # pragma: no cover
        raise
    except Exception as err:  # a damaged page: checksum or decoding error
        raise _error(path, f"is damaged ({type(err).__name__}: {err})") from err


def user_chunks(part: Partition, chunk: int = DEFAULT_CHUNK) -> Iterator[np.ndarray]:
    with _open_file(part) as pf:
        for rb in _batches(pf, ["user"], chunk, part.path):
            col = rb.column(0)
            if col.null_count:
                raise _error(part.path, "has missing users")
            yield col.to_numpy(zero_copy_only=False).astype(np.int64)


def read_partition(part: Partition, slots: Sequence[int], *, chunk: int = DEFAULT_CHUNK,
                   users: bool = False) -> Iterator[tuple]:
    """The reports of a partition, chunk by chunk, each checked before it is returned.

    Parameters
    ----------
    part : Partition
        From :meth:`StoredReports.partitions` (picklable: a dask worker reads it too).
    slots : sequence of int
        Which of the group's questions to read.
    chunk : int
        Rows per chunk.
    users : bool
        Also yield the chunk's plan indices (first element).

    Yields
    ------
    tuple
        One :class:`ldp.oracles.Reports` per slot (preceded by the users when asked).
    """
    plan_fields = [(j, part.types[j]) for j in slots]
    cols = (["user"] if users else []) + [f"q{j}_{name}" for j, types in plan_fields for name, _ in types]
    with _open_file(part) as pf:
        for rb in _batches(pf, cols, chunk, part.path):
            if any(rb.column(i).null_count for i in range(rb.num_columns)):
                raise _error(part.path, "has missing values")
            out: list[Any] = []
            i = 0
            if users:
                out.append(rb.column(0).to_numpy(zero_copy_only=False).astype(np.int64))
                i = 1
            for j, types in plan_fields:
                arrays = {}
                for name, t in types:
                    arrays[name] = _from_arrow(rb.column(i), t)
                    i += 1
                params = part.oracles[j]
                try:
                    out.append(reports_class(params["kind"])(params, **arrays))
                except (ValueError, TypeError) as err:
                    raise inconsistent(part.path, err) from err
            yield tuple(out)


def _plan_from(meta: dict, path: Path) -> tuple[Plan, list[list[dict]]]:
    try:
        plan = Plan.from_dict(meta["plan"])
        oracles = [[dict(p) for p in row] for row in meta["oracles"]]
        if plan_digest(plan) != meta["plan_digest"]:
            raise ValueError("the recorded plan digest does not match the plan")
        if plan.n is None or plan.seed is None:
            raise ValueError("the plan has no population (n and seed)")
        if len(oracles) != plan.n_groups or any(len(row) != len(qs) for row, qs in zip(oracles, plan.questions)):
            raise ValueError("the oracles do not match the plan's questions")
        for row, qs in zip(oracles, plan.questions):
            for params, q in zip(row, qs):
                if params != q.oracle().params:
                    raise ValueError(f"recorded oracle {params} is not the plan's {q.oracle().params}")
        if not isinstance(meta["protocol"], str) or not isinstance(meta["params"], dict):
            raise ValueError("protocol and params must be a string and an object")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        raise inconsistent(path, err) from err
    return plan, oracles


class StoredReports:
    """The reports of a store folder, read lazily (:func:`open_store`; :meth:`ldp.core.ProtocolReports.open`).

    Aggregated like in-memory :class:`ldp.core.ProtocolReports` by every
    protocol's ``aggregate``, one group at a time and in chunks, so that peak
    memory is a chunk and the round's candidates, not ``n``.

    Attributes
    ----------
    directory : pathlib.Path
    protocol : str
    params : dict
    plan : Plan
    sizes : tuple of int
        Users per group in the batches read.
    batches : tuple of int
        The batch numbers read.
    highest_batch : int
        The highest batch number the folder mentions, committed or not (-1
        for none): a writer's next batch is numbered above it.
    """

    def __init__(self, directory, *, verify: bool = True, plan: Plan | None = None):
        root = Path(directory)
        if not root.is_dir():
            if root.exists():
                raise _error(root, "is not a folder: a report store is a folder (a .npz file is read with load)")
            raise FileNotFoundError(errno.ENOENT, "no report store here", os.fspath(root))
        try:
            meta = read_json(root, "store.json", STORE_TYPE)
        except FileNotFoundError:
            raise _error(root, "is not a report store (it has no store.json)") from None
        if plan is not None:  # the server's plan: compared before anything proportional to n or the pools
            want = plan_digest(plan)
            if meta.get("plan_digest") != want:
                raise _error(root / "store.json", f"holds reports of another plan (plan digest "
                                                  f"{str(meta.get('plan_digest'))[:16]}..., the server's plan has "
                                                  f"{want[:16]}...)")
        self.directory = root
        self._given_plan = plan
        own, self._oracles = _plan_from(meta, root / "store.json")
        self.plan = own if plan is None else plan  # equal (same digest); the server's carries its labels
        self.protocol = meta["protocol"]
        self.params = dict(meta["params"])
        self._digest = meta["plan_digest"]
        udt = str(users_dtype(self.plan))
        self._types = plan_types(self.plan)
        parts: list[list[Partition]] = [[] for _ in range(self.plan.n_groups)]
        batches = []
        manifests, self.highest_batch = scan_batches(root)
        for b in manifests:
            rel = f"batches/{batch_name(b)}.json"
            mpath = root / rel
            try:
                m = read_json(root, rel, BATCH_TYPE)
            except FileNotFoundError:  # pragma: no cover - manifests are never removed by a writer
                raise _error(mpath, "vanished while the store was being opened") from None
            try:
                if int(m["batch"]) != b or m["plan_digest"] != self._digest:
                    raise ValueError("its batch number or plan digest does not match the store")
                for f in m["files"]:
                    g, frel = int(f["group"]), str(f["file"])
                    if frel != file_name(g, b) or not 0 <= g < self.plan.n_groups:
                        raise ValueError(f"it lists an unexpected file {frel!r}")
                    rows, lo, hi = int(f["rows"]), int(f["first_user"]), int(f["last_user"])
                    if rows < 1 or not 0 <= lo <= hi < self.plan.n_users or hi - lo + 1 < rows:
                        raise ValueError(f"file {frel!r} records impossible users ({rows} in [{lo}, {hi}])")
                    parts[g].append(Partition(os.fspath(root / frel), g, b, rows, lo, hi, int(f["bytes"]),
                                              self._digest, tuple(self._oracles[g]), self._types[g], udt,
                                              os.fspath(root), frel))
            except (KeyError, TypeError, ValueError) as err:
                raise inconsistent(mpath, err) from err
            batches.append(b)
        self._parts = tuple(tuple(p) for p in parts)
        self.batches = tuple(batches)
        self.sizes = tuple(sum(p.rows for p in ps) for ps in self._parts)
        if verify:
            self.verify_users()

    # -- checks ----------------------------------------------------------
    def verify_users(self) -> None:
        """The checks of the ``user`` column (module notes): footers, ranges, groups, no user twice.

        Reads only the users (delta-encoded, about a byte per user) and the
        plan's group assignment (one byte per user): the labels of the plan
        given to :func:`open_store` (built once and kept by that plan object),
        else computed and dropped.
        """
        if not any(self._parts):
            return
        if self._given_plan is not None:  # the server's plan: its labels, built once for every entry point
            labels = self._given_plan.labels()
        else:
            labels = assign_groups(self.plan.n_users, self.plan.fractions, rng=np.random.default_rng(self.plan.seed))
        for g, parts in enumerate(self._parts):
            spans = sorted((p.first_user, p.last_user) for p in parts)
            overlap = any(b[0] <= a[1] for a, b in zip(spans, spans[1:]))
            seen = np.zeros(self.plan.n_users // 8 + 1, dtype=np.uint8) if overlap else None
            for p in parts:
                prev = -1
                count = 0
                for u in user_chunks(p):
                    if u.size == 0:
                        continue
                    if u[0] <= prev or (u.size > 1 and np.any(np.diff(u) <= 0)):
                        raise _error(p.path, "has users out of order or repeated")
                    if u[0] < p.first_user or u[-1] > p.last_user:
                        raise _error(p.path, f"has users outside the recorded range [{p.first_user}, "
                                             f"{p.last_user}]")
                    if np.any(labels[u] != g):
                        bad = int(u[np.flatnonzero(labels[u] != g)[0]])
                        raise _error(p.path, f"holds user {bad}, whom the plan assigns to group {int(labels[bad])}, "
                                             f"not {g}")
                    if seen is not None:
                        byte, bit = u >> 3, (u & 7).astype(np.uint8)
                        if np.any((seen[byte] >> bit) & 1):
                            raise _error(p.path, "holds a user who is also in another batch (a user reports once)")
                        np.bitwise_or.at(seen, byte, np.left_shift(np.uint8(1), bit))
                    prev = int(u[-1])
                    count += u.size
                if count != p.rows:  # pragma: no cover - the footer's row count was checked
                    raise _error(p.path, f"has {count} users, not {p.rows}")

    # -- access ----------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of users in the store."""
        return int(sum(self.sizes))

    def __len__(self) -> int:
        return self.n

    @property
    def complete(self) -> bool:
        """Whether every user of the plan reported."""
        return self.n == self.plan.n_users

    @property
    def nbytes(self) -> int:
        """Bytes of the store's Parquet files."""
        return int(sum(p.size for ps in self._parts for p in ps))

    def partitions(self, group: int) -> tuple[Partition, ...]:
        """The files of ``group``, in batch order."""
        return self._parts[group]

    def oracle_params(self, group: int) -> tuple[dict, ...]:
        """The oracle parameters of ``group``'s questions."""
        return tuple(self._oracles[group])

    def chunks(self, group: int, slots: Sequence[int], *, chunk: int = DEFAULT_CHUNK,
               users: bool = False) -> Iterator[tuple]:
        """:func:`read_partition` over every file of ``group``, in batch order."""
        for p in self._parts[group]:
            yield from read_partition(p, slots, chunk=chunk, users=users)

    def reload(self) -> StoredReports:
        """The store as it is now (batches appended since this object was opened included)."""
        return type(self)(self.directory, plan=self._given_plan)

    def read(self) -> tuple[np.ndarray, np.ndarray, list[list[Any]]]:
        """Everything in memory, for :meth:`ldp.core.ProtocolReports.load`: ``(labels, users, reports)``.

        Users in increasing order (like :meth:`ldp.core.ProtocolReports.concat`).
        """
        G = self.plan.n_groups
        users_g, reports_g = [], []
        for g in range(G):
            slots = list(range(len(self._oracles[g])))
            us: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
            rs: list[list[Any]] = [[] for _ in slots]
            for item in self.chunks(g, slots, users=True):
                us.append(item[0])
                for j in slots:
                    rs[j].append(item[1 + j])
            u = np.concatenate(us)
            order = np.argsort(u, kind="stable")
            merged = []
            for j in slots:
                if rs[j]:
                    merged.append(type(rs[j][0]).concat(rs[j])[order])
                else:  # a group nobody of these batches is in
                    o = self.plan.questions[g][j].oracle()
                    merged.append(o.reports_class.empty(o.params))
            users_g.append(u[order])
            reports_g.append(merged)
        users = np.concatenate(users_g)
        labels = np.concatenate([np.full(u.shape[0], g, dtype=np.uint8 if G <= 256 else np.uint16)
                                 for g, u in enumerate(users_g)])
        order = np.argsort(users, kind="stable")
        return labels[order], users[order], reports_g

    def __repr__(self) -> str:
        return (f"StoredReports({os.fspath(self.directory)!r}, protocol={self.protocol!r}, users={self.n} of "
                f"{self.plan.n}, groups={self.plan.n_groups}, batches={len(self.batches)}, "
                f"{self.nbytes / 2**20:.3g} MiB)")


def open_store(directory, *, verify: bool = True, plan: Plan | None = None) -> StoredReports:
    """Open a report store (:class:`StoredReports`), after the checks of the module notes.

    Parameters
    ----------
    directory : str or os.PathLike
    verify : bool
        Also run :meth:`StoredReports.verify_users` (reads the ``user`` columns).
    plan : Plan, optional
        The plan the reports must be for (a server's published plan).  The
        store's plan digest is compared with it before anything proportional
        to the plan's ``n`` or pools is built, and its group labels (built
        once, kept by the plan object) serve the checks.  Without it the
        store's own plan is used, and the checks cost the group assignment of
        the ``n`` users that plan claims.

    Raises
    ------
    FileNotFoundError
        No such folder.
    ldp.oracles.ReportsFileError
        Anything that makes the store unusable, naming the file.
    """
    return StoredReports(directory, verify=verify, plan=plan)
