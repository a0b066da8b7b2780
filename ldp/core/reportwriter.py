"""Writing a report store (:mod:`ldp.core.reportstore`): :func:`append_batch`, one batch at a time, by many writers.

Any number of writers (threads, processes, machines sharing the folder) may
append at once, and any of them may die at any point (``SIGKILL``, a power
cut): the store always opens, a batch is in it whole or not at all, and no
user is in it twice.  An append goes

1. **under the store's lock** (``DIR/lock``, an exclusive ``flock``, which the
   operating system releases when its holder dies): create ``store.json`` if
   the store is new (an exclusive link: two first writers cannot both create
   it), or check that it is this batch's plan; open the store as a reader does
   (a store that cannot be opened takes no more batches); clear what dead
   writers left (below); check that no user of the batch is in a committed
   batch; *reserve* the next batch number by creating its mark
   ``batches/NNNNNN.pending``, on which the writer holds a lock of its own
   while it works;
2. **unlocked**: write the batch's Parquet files, one per group (each to a
   temporary name, synced, then linked to its final name: a file of another
   batch is never replaced);
3. **under the store's lock again**: check the users against the batches
   committed meanwhile (the check of step 1 covers the others), then *commit*:
   link the manifest ``batches/NNNNNN.json`` into place (the one atomic step
   that makes the batch visible) and remove the mark.

A batch refused at step 3 (a user committed meanwhile by another writer)
removes its own files and renames its mark ``.abandoned``.  A writer that
dies leaves its mark unlocked: readers ignore the marked batch, and the next
writer, in step 1, finds the mark's lock free, removes the batch's files
(never those of a committed batch) and renames the mark ``.abandoned``.
Batch numbers are never reused.  A retry of a batch whose writer died
completes it (a new number); one whose writer died after its commit is
refused as already stored.

**The deployment aggregator's hook.**  A server that checks users' reports as
they arrive groups them into a :class:`ldp.core.ProtocolReports` batch (users of
the published plan, each with her plan index) and calls :func:`append_batch`
(or ``reports.save(folder)``); any number of batches, at any time; a user may
be in one batch only.  Aggregating the folder again (``ProtocolReports.open``
and the protocol's ``aggregate``) counts every batch committed at that moment.

The lock is ``fcntl.flock``: the store's folder must be on a file system that
supports it (local disks; NFSv4 emulates it with byte-range locks).
"""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .reportstore import (
    DEFAULT_CHUNK,
    StoredReports,
    arrow_schema,
    open_store,
    plan_digest,
    plan_types,
    user_chunks,
    users_dtype,
)
from .storefolder import (
    ABANDONED,
    BATCH_TYPE,
    LOCK_NAME,
    PENDING,
    STORE_FORMAT,
    STORE_TYPE,
    arrow_modules,
    batch_name,
    file_name,
    read_json,
)

__all__ = ["append_batch"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _to_arrow(pa, a: np.ndarray):
    if a.ndim == 2:  # packed bits (CMS): one fixed-size binary value per user
        a = np.ascontiguousarray(a, dtype=np.uint8)
        return pa.FixedSizeBinaryArray.from_buffers(pa.binary(a.shape[1]), a.shape[0], [None, pa.py_buffer(a)])
    return pa.array(a)


def _store_meta(reports) -> dict:
    plan = reports.plan
    oracles = [[q.oracle().params for q in qs] for qs in plan.questions]
    for g, row in enumerate(oracles):
        for j, (params, r) in enumerate(zip(row, reports.group_reports(g))):
            if r.params != params:
                raise ValueError(f"group {g}'s reports to question {j} were made by {r.params}, not by the plan's "
                                 f"oracle {params}")
    return {"type": STORE_TYPE, "format": STORE_FORMAT, "protocol": reports.protocol, "params": reports.params,
            "plan": plan.to_dict(), "plan_digest": plan_digest(plan), "oracles": oracles}


# ---------------------------------------------------------------------------
# files that appear whole, never replacing another
# ---------------------------------------------------------------------------
def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create(target: Path, write: Callable[[Path], object]) -> None:
    """Write ``target`` through a synced temporary file linked into place; ``FileExistsError`` if it exists.

    The link is the atomic step: readers see no file or the whole file, and
    a file already there (another batch's, a user's) is never replaced.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the usual mode
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _write_json(target: Path, obj: dict) -> None:
    _create(target, lambda tmp: tmp.write_text(json.dumps(obj, sort_keys=True, indent=1)))


# ---------------------------------------------------------------------------
# the lock and the marks
# ---------------------------------------------------------------------------
@contextmanager
def _locked(root: Path) -> Iterator[None]:
    """The store's lock, held for the block (released by the system if the process dies)."""
    fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _ours(name: str) -> bool:
    """Names the writers put in a store's folder before it is one: the lock, ``store.json``'s temporary file."""
    return name == LOCK_NAME or (name.startswith(".store.json.") and name.endswith(".tmp"))


def _start_store(root: Path, meta: dict) -> None:
    """Create the store (``store.json``) or check that it holds this plan; under the lock."""
    try:
        have = read_json(root, "store.json", STORE_TYPE)
    except FileNotFoundError:
        strangers = sorted(n for n in os.listdir(root) if not _ours(n))
        if strangers:
            raise ValueError(f"{os.fspath(root)!r} is not empty and is not a report store (it holds "
                             f"{strangers[:3]}); save to a new folder") from None
        _write_json(root / "store.json", meta)
        _fsync_dir(root)
        return
    if have.get("plan_digest") != meta["plan_digest"] or have.get("protocol") != meta["protocol"]:
        raise ValueError(f"the store in {os.fspath(root)!r} holds reports of another plan; every batch must "
                         "be privatized with the same published plan")


def _batch_files(root: Path, b: int) -> list[Path]:
    """Everything a writer of batch ``b`` may have created: its Parquet files and their temporary files."""
    name = f"batch={batch_name(b)}.parquet"
    out = []
    for group in root.glob("group=*"):
        if group.is_dir() and not group.is_symlink():
            out += [p for p in group.iterdir() if p.name == name or (p.name.startswith(f".{name}.")
                                                                      and p.name.endswith(".tmp"))]
    batches = root / "batches"
    out += [p for p in batches.glob(f".{batch_name(b)}.json.*.tmp")]
    return out


def _abandon(root: Path, b: int, mark: Path) -> None:
    """Remove an uncommitted batch's files, then rename its mark ``.abandoned`` (its number is never reused)."""
    for p in _batch_files(root, b):
        p.unlink(missing_ok=True)
    os.replace(mark, mark.with_suffix(ABANDONED))


def _clear_dead(root: Path) -> None:
    """Under the lock: the marks of dead writers (their lock free) are settled; the batches of live ones kept."""
    folder = root / "batches"
    if not folder.is_dir():
        return
    for mark in sorted(folder.glob(f"*{PENDING}")):
        try:
            fd = os.open(mark, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        except FileNotFoundError:  # pragma: no cover - settled meanwhile
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its writer is alive
            b = int(mark.name[:-len(PENDING)])
            if (folder / f"{batch_name(b)}.json").exists():  # committed: its writer died before removing the mark
                for tmp in folder.glob(f".{batch_name(b)}.json.*.tmp"):
                    tmp.unlink(missing_ok=True)
                mark.unlink()
            else:
                _abandon(root, b, mark)
        finally:
            os.close(fd)


def _reserve(folder: Path, b: int) -> int:
    """Create batch ``b``'s mark and lock it (held until the append ends); the descriptor."""
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / f"{batch_name(b)}{PENDING}", os.O_RDWR | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        raise
    return fd


# ---------------------------------------------------------------------------
# appending
# ---------------------------------------------------------------------------
def append_batch(reports, directory, *, chunk: int = DEFAULT_CHUNK) -> int:
    """Append a batch of protocol reports to the store in ``directory`` (created if needed).

    The entry point for anything that collects reports over time (the
    deployment aggregator, a batch job): each call adds one batch, one
    Parquet file per group, visible to readers once committed.  Safe with
    any number of concurrent writers, and against a writer killed at any
    point (module notes).

    Parameters
    ----------
    reports : ldp.core.ProtocolReports
        A batch made with the store's plan (the first batch fixes it).
    directory : str or os.PathLike
        The store's folder.
    chunk : int
        Rows per Parquet row group (the unit a reader decodes at once).

    Returns
    -------
    int
        The batch number.

    Raises
    ------
    ValueError
        The batch was made with another plan or protocol, or holds a user
        already in the store (she would spend her budget twice).
    ldp.oracles.ReportsFileError
        ``directory`` holds something other than a valid store (a store that
        cannot be opened takes no more batches).
    """
    root = Path(directory)
    plan = reports.plan
    if plan.n is None or plan.seed is None:
        raise ValueError("reports must be made with a plan for a population (protocol.plan(n, rng=...))")
    meta = _store_meta(reports)
    if root.exists() and not root.is_dir():
        raise ValueError(f"{os.fspath(root)!r} is not a folder; a report store is a folder")
    if root.is_dir() and not (root / "store.json").exists():
        strangers = sorted(n for n in os.listdir(root) if not _ours(n))
        # Checked before the lock file is made: a stranger's folder is left as it was.  Another writer may
        # have made the store between the two looks (store.json first, then the rest; it is never removed),
        # so what was listed is a stranger's only if store.json is still absent after the listing.
        if strangers and not (root / "store.json").exists():
            raise ValueError(f"{os.fspath(root)!r} is not empty and is not a report store (it holds "
                             f"{strangers[:3]}); save to a new folder")
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root):
        _start_store(root, meta)
        _clear_dead(root)
        existing = open_store(root, verify=False, plan=plan)
        _check_new_users(existing, reports)
        batch = existing.highest_batch + 1
        mark_fd = _reserve(root / "batches", batch)
    mark = root / "batches" / f"{batch_name(batch)}{PENDING}"
    committed = False
    try:
        files = _write_files(reports, root, batch, meta["plan_digest"], chunk)
        with _locked(root):
            now = open_store(root, verify=False, plan=plan)
            _check_new_users(now, reports, skip=set(existing.batches))
            _write_json(root / "batches" / f"{batch_name(batch)}.json",
                        {"type": BATCH_TYPE, "format": STORE_FORMAT, "batch": batch,
                         "plan_digest": meta["plan_digest"], "users": int(reports.n), "files": files})
            committed = True
            _fsync_dir(root / "batches")
            mark.unlink()
    except BaseException:
        if not committed:
            _abandon(root, batch, mark)
        raise
    finally:
        os.close(mark_fd)
    return batch


def _write_files(reports, root: Path, batch: int, digest: str, chunk: int) -> list[dict]:
    """Write the batch's Parquet files (one per group with users); their manifest entries."""
    pa, pq = arrow_modules()
    plan = reports.plan
    udt = users_dtype(plan)
    types = plan_types(plan)
    files = []
    for g in range(plan.n_groups):
        users = reports.users[reports.labels == g]
        if users.size == 0:
            continue
        schema = arrow_schema(udt, types[g], {"plan_digest": digest, "group": g, "batch": batch})
        columns = [_to_arrow(pa, users.astype(udt))]
        for r, slot in zip(reports.group_reports(g), types[g]):
            for name, _ in slot:
                columns.append(_to_arrow(pa, r.arrays[name]))
        table = pa.Table.from_arrays(columns, schema=schema)
        rel = file_name(g, batch)
        target = root / rel

        def write(tmp: Path, table=table) -> None:
            pq.write_table(table, tmp, row_group_size=int(chunk), compression="zstd", compression_level=1,
                           use_dictionary=False, write_page_checksum=True,
                           column_encoding={"user": "DELTA_BINARY_PACKED"})

        _create(target, write)
        _fsync_dir(target.parent)
        files.append({"group": g, "file": rel, "rows": int(users.size), "first_user": int(users[0]),
                      "last_user": int(users[-1]), "bytes": target.stat().st_size})
    return files


def _check_new_users(existing: StoredReports, reports, skip: Collection[int] = ()) -> None:
    """Raise if a user of ``reports`` is in a committed batch of the store (those in ``skip`` were checked)."""
    for g in range(reports.plan.n_groups):
        new = reports.users[reports.labels == g]
        if new.size == 0:
            continue
        for part in existing.partitions(g):
            if part.batch in skip or part.last_user < new[0] or part.first_user > new[-1]:
                continue  # checked before, or disjoint ranges: no common user
            for users in user_chunks(part):
                common = np.intersect1d(users, new, assume_unique=True)
                if common.size:
                    raise ValueError(f"user {int(common[0])} is already in the store (batch {part.batch}); "
                                     "a user reports once")
