"""Writing a report store (:mod:`ldp.core.reportstore`): :func:`append_batch`, one batch at a time.

Every file is written to a temporary name and renamed (:func:`ldp.paths.atomic_path`);
a batch becomes visible when its manifest is renamed into ``batches/``, after
all its files: a reader never sees half a batch.  Batch numbers are reserved
with an exclusive-create lock file, so several writers may append at once.

**The deployment aggregator's hook.**  A server that checks users' reports as
they arrive groups them into a :class:`ldp.core.ProtocolReports` batch (users of
the published plan, each with her plan index) and calls :func:`append_batch`
(or ``reports.save(folder)``); any number of batches, at any time; a user may
be in one batch only.  Aggregating the folder again (``ProtocolReports.open``
and the protocol's ``aggregate``) counts every batch complete at that moment.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..paths import atomic_path
from .reportstore import (
    BATCH_TYPE,
    DEFAULT_CHUNK,
    STORE_FORMAT,
    STORE_TYPE,
    StoredReports,
    arrow_modules,
    arrow_schema,
    batch_name,
    file_name,
    open_store,
    plan_digest,
    plan_types,
    read_json,
    user_chunks,
    users_dtype,
)

__all__ = ["append_batch"]


def _to_arrow(pa, a: np.ndarray):
    if a.ndim == 2:  # packed bits (CMS): one fixed-size binary value per user
        a = np.ascontiguousarray(a, dtype=np.uint8)
        return pa.FixedSizeBinaryArray.from_buffers(pa.binary(a.shape[1]), a.shape[0], [None, pa.py_buffer(a)])
    return pa.array(a)


def _write_json(path: Path, obj: dict) -> None:
    with atomic_path(path, sync=True) as tmp:
        tmp.write_text(json.dumps(obj, sort_keys=True, indent=1))


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


def append_batch(reports, directory, *, chunk: int = DEFAULT_CHUNK) -> int:
    """Append a batch of protocol reports to the store in ``directory`` (created if needed).

    The entry point for anything that collects reports over time (the
    deployment aggregator, a batch job): each call adds one batch, one
    Parquet file per group, visible to readers once complete.

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
        ``directory`` holds something other than a valid store.
    """
    _, pq = arrow_modules()
    root = Path(directory)
    plan = reports.plan
    if plan.n is None or plan.seed is None:
        raise ValueError("reports must be made with a plan for a population (protocol.plan(n, rng=...))")
    meta = _store_meta(reports)
    store_json = root / "store.json"
    if store_json.exists():
        have = read_json(store_json, STORE_TYPE)
        if have.get("plan_digest") != meta["plan_digest"] or have.get("protocol") != meta["protocol"]:
            raise ValueError(f"the store in {os.fspath(root)!r} holds reports of another plan; every batch must "
                             "be privatized with the same published plan")
    else:
        if root.exists() and any(root.iterdir()):
            raise ValueError(f"{os.fspath(root)!r} is not empty and is not a report store; save to a new folder")
        _write_json(store_json, meta)
    existing = open_store(root, verify=False)
    _check_new_users(existing, reports)
    batch = _reserve(root / "batches")
    files = []
    digest = meta["plan_digest"]
    udt = users_dtype(plan)
    types = plan_types(plan)
    pa = arrow_modules()[0]
    try:
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
            with atomic_path(target, sync=True) as tmp:
                pq.write_table(table, tmp, row_group_size=int(chunk), compression="zstd", compression_level=1,
                               use_dictionary=False, write_page_checksum=True,
                               column_encoding={"user": "DELTA_BINARY_PACKED"})
            files.append({"group": g, "file": rel, "rows": int(users.size), "first_user": int(users[0]),
                          "last_user": int(users[-1]), "bytes": target.stat().st_size})
        _write_json(root / "batches" / f"{batch_name(batch)}.json",
                    {"type": BATCH_TYPE, "format": STORE_FORMAT, "batch": batch, "plan_digest": digest,
                     "users": int(reports.n), "files": files})
    finally:
        (root / "batches" / f"{batch_name(batch)}.lock").unlink(missing_ok=True)
    return batch


def _reserve(folder: Path) -> int:
    """The next free batch number, reserved by an exclusive-create lock file."""
    folder.mkdir(parents=True, exist_ok=True)
    b = 0
    for p in folder.iterdir():
        stem = p.name.split(".")[0]
        if stem.isdigit():
            b = max(b, int(stem) + 1)
    while True:
        try:
            fd = os.open(folder / f"{batch_name(b)}.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            b += 1
            continue
        os.close(fd)
        if (folder / f"{batch_name(b)}.json").exists():  # pragma: no cover - a writer finished meanwhile
            os.unlink(folder / f"{batch_name(b)}.lock")
            b += 1
            continue
        return b


def _check_new_users(existing: StoredReports, reports) -> None:
    """Raise if a user of ``reports`` is already in the store."""
    for g in range(reports.plan.n_groups):
        new = reports.users[reports.labels == g]
        if new.size == 0:
            continue
        for part in existing.partitions(g):
            if part.last_user < new[0] or part.first_user > new[-1]:
                continue  # disjoint ranges: no common user
            for users in user_chunks(part):
                common = np.intersect1d(users, new, assume_unique=True)
                if common.size:
                    raise ValueError(f"user {int(common[0])} is already in the store (batch {part.batch}); "
                                     "a user reports once")
