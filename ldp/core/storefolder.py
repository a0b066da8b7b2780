"""The report store's folder (:mod:`ldp.core.reportstore`): its names, its marks, and its files read safely.

* names: ``store.json``, ``batches/NNNNNN.json`` (a batch's manifest),
  ``batches/NNNNNN.pending`` and ``.abandoned`` (a batch being written, or
  never committed), ``group=GGGG/batch=NNNNNN.parquet`` (a batch's reports of
  one group), ``lock`` (the writers' lock): :func:`batch_name`, :func:`file_name`;
* :func:`opened`, :func:`listing` and :func:`read_json` read what is in the
  folder as :mod:`ldp.safefiles` does (regular files only, reached without a
  symbolic link, JSON bounded by :data:`MAX_STORE_JSON_BYTES` and
  :data:`ldp.safefiles.MAX_JSON_DEPTH`), their refusals as
  :class:`ldp.oracles.ReportsFileError`;
* :func:`scan_batches` finds the committed batches and refuses a batch whose
  files are there without its manifest.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ..reportfile import ReportsFileError
from ..safefiles import UnsafeFileError, list_inside, loads_json, open_inside, read_limited

__all__ = ["STORE_TYPE", "BATCH_TYPE", "STORE_FORMAT", "MAX_STORE_JSON_BYTES", "LOCK_NAME", "PENDING", "ABANDONED",
           "arrow_modules", "opened", "listing", "read_json", "batch_name", "file_name", "scan_batches"]

#: ``type`` of ``store.json``
STORE_TYPE = "ldp.protocol-report-store"
#: ``type`` of a batch manifest
BATCH_TYPE = "ldp.protocol-report-batch"
#: format version of the store
STORE_FORMAT = 1
#: the largest ``store.json`` or manifest read (32 MiB: a plan of :data:`ldp.core.MAX_PLAN_BYTES` and its
#: oracles; a manifest lists at most one file per group, about 150 bytes each)
MAX_STORE_JSON_BYTES = 2**25
#: the writers' lock file in the store's folder (:mod:`ldp.core.reportwriter`)
LOCK_NAME = "lock"
#: suffixes of a batch's marks in ``batches/``: being written (its writer holds a lock on it), never committed
PENDING, ABANDONED = ".pending", ".abandoned"
_BATCH_DIGITS = 6
_GROUP_DIR = re.compile(r"group=(\d{4,5})")
_BATCH_FILE = re.compile(r"batch=(\d{6,})\.parquet")
_BATCH_ENTRY = re.compile(r"(\d{6,})(\.json|\.pending|\.abandoned)")


def arrow_modules():
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa, pq


def _error(path, problem: str) -> ReportsFileError:
    return ReportsFileError(path, problem)


@contextmanager
def opened(root, rel: str) -> Iterator[IO[bytes]]:
    """``root / rel`` opened by :func:`ldp.safefiles.open_inside`, its refusals as :class:`ReportsFileError`."""
    try:
        fh = open_inside(root, rel)
    except UnsafeFileError as err:
        raise _error(err.path, err.problem) from None
    with fh:
        yield fh


def listing(root: Path, rel: str = "") -> list[tuple[str, bool]]:
    """The entries of the folder ``root / rel`` (:func:`ldp.safefiles.list_inside`): ``(name, is_regular_file)``."""
    try:
        return list_inside(root, rel)
    except UnsafeFileError as err:
        raise _error(err.path, err.problem) from None


def read_json(root: Path, rel: str, kind: str) -> dict:
    """The store's JSON file ``root / rel`` of type ``kind``, read safely and bounded (module notes).

    Raises ``FileNotFoundError`` when it is missing.
    """
    path = Path(root) / rel
    with opened(root, rel) as fh:
        try:
            data = read_limited(fh, MAX_STORE_JSON_BYTES, path, "MAX_STORE_JSON_BYTES")
        except UnsafeFileError as err:
            raise _error(err.path, err.problem) from None
        except OSError as err:
            raise _error(path, f"cannot be read ({type(err).__name__}: {err})") from err
    try:
        meta = loads_json(data, max_bytes=MAX_STORE_JSON_BYTES, limit_name="MAX_STORE_JSON_BYTES")
    except json.JSONDecodeError as err:
        raise _error(path, f"is not valid JSON ({err})") from err
    except (ValueError, UnicodeDecodeError) as err:
        raise _error(path, str(err)) from None
    if not isinstance(meta, dict) or meta.get("type") != kind:
        got = meta.get("type") if isinstance(meta, dict) else type(meta).__name__
        raise _error(path, f"is not a {kind} file (type {got!r})")
    if meta.get("format") != STORE_FORMAT:
        raise _error(path, f"has store format {meta.get('format')!r}; this version of ldp reads format "
                           f"{STORE_FORMAT}")
    return meta


def batch_name(b: int) -> str:
    return f"{b:0{_BATCH_DIGITS}d}"


def file_name(g: int, b: int) -> str:
    return f"group={g:04d}/batch={batch_name(b)}.parquet"


def _describe_orphans(root: Path, rels: list[str]) -> str:
    """``"1,500 users in 4 files: group=0000/batch=000001.parquet, ..."`` (rows from the footers that read)."""
    _, pq = arrow_modules()
    users = 0
    for rel in rels:
        try:
            with open_inside(root, rel) as fh:
                users += pq.ParquetFile(fh).metadata.num_rows
        except Exception:  # noqa: BLE001 - an unreadable file is counted as 0 users
            pass
    shown = ", ".join(sorted(rels)[:3]) + (", ..." if len(rels) > 3 else "")
    return f"{users:,} users in {len(rels)} file(s): {shown}"



def scan_batches(root: Path) -> tuple[list[int], int]:
    """The committed batches (those with a manifest) and the highest batch number the store mentions.

    Lists the group folders first, then ``batches/``: a batch's mark
    (``.pending``) exists before its first file and is removed only after
    its manifest, so every file listed belongs to a batch with a manifest
    or a mark, unless its manifest was removed.  Such a batch is checked
    again name by name (a listing is no snapshot) and, if it is still
    without a manifest and a mark, refused, naming it.
    """
    files: dict[int, list[str]] = {}
    for name, _ in listing(root):
        if _GROUP_DIR.fullmatch(name):
            for fname, _ in listing(root, name):
                hit = _BATCH_FILE.fullmatch(fname)
                if hit:
                    files.setdefault(int(hit.group(1)), []).append(f"{name}/{fname}")
    manifests: set[int] = set()
    marks: set[int] = set()
    for name, _ in listing(root, "batches"):
        hit = _BATCH_ENTRY.fullmatch(name)
        if hit:
            (manifests if hit.group(2) == ".json" else marks).add(int(hit.group(1)))
    for b in sorted(set(files) - manifests - marks):
        here = [rel for rel in files[b] if os.path.lexists(root / rel)]
        if here and not any(os.path.lexists(root / "batches" / f"{batch_name(b)}{suffix}")
                            for suffix in (".json", PENDING, ABANDONED)):
            raise _error(root / "batches" / f"{batch_name(b)}.json",
                         f"is missing: the manifest of batch {b}, whose files are in the store "
                         f"({_describe_orphans(root, here)}); without it the batch's users would be left out "
                         f"of every aggregation. Restore the manifest, or move the batch's files out of "
                         f"the store")
    highest = max([*files, *manifests, *marks], default=-1)
    return sorted(manifests), highest
