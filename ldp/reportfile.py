"""Reports files (``.npz``): written atomically with a checksum, read with checks that name the problem.

Both kinds of reports files go through here: a frequency oracle's
(:meth:`ldp.oracles.Reports.save`) and a heavy-hitter protocol's
(:meth:`ldp.protocols.ProtocolReports.save`).  A file is a numpy ``.npz``
archive (no pickled objects, members stored uncompressed) holding the
per-user arrays and one JSON string, ``__meta__``, with the file's type, its
format version, the parameters needed to read it back and a SHA-256 checksum
of the arrays (name, dtype, shape and bytes of each).

:func:`read` checks before it reads: that the path is a regular file (a
named pipe never blocks the reader, :func:`ldp.safefiles.open_regular`); from
the archive's central directory, every member is stored uncompressed (so no
member can be larger than the file itself) and the metadata is at most
:data:`MAX_META_BYTES` and nests at most :data:`ldp.safefiles.MAX_JSON_DEPTH`
levels (both checked before it is parsed); then, given
the metadata, the caller's ``expect`` names the members the file must have
and their dtypes and row shapes, and every member's ``.npy`` header (the
first bytes only) must declare exactly that, with a size in the directory
that matches; the rows must fit the caller's bounds (e.g. at most the
plan's ``n`` users).  Only then are the arrays read.  It refuses anything else
with a :class:`ReportsFileError` that names the file and what is wrong with
it: empty, not an ``.npz`` archive, truncated or damaged, not a reports file,
the other kind of reports file, an older format, unknown or missing members,
sizes the reports cannot need, or arrays that do not match the checksum.

The checksum detects damage (a truncated download, a flipped bit), **not
tampering**: it is an unkeyed SHA-256 that anyone can recompute after
editing the arrays, so it authenticates nothing.  Whoever may send files to
an aggregator must be trusted, or the files signed by other means; the
aggregator's checks (:meth:`ldp.protocols.HeavyHitterProtocol.aggregator`)
keep a file from doing more than what honest-looking reports can do.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .paths import atomic_path
from .safefiles import UnsafeFileError, loads_json, open_regular

__all__ = ["ReportsFileError", "ORACLE_REPORTS", "PROTOCOL_REPORTS", "FORMAT", "MAX_META_BYTES", "checksum", "write",
           "read", "inconsistent", "Expected"]

#: ``type`` of a frequency oracle's reports file
ORACLE_REPORTS = "ldp.oracle-reports"
#: ``type`` of a heavy-hitter protocol's reports file
PROTOCOL_REPORTS = "ldp.protocol-reports"
#: current format version of both kinds
FORMAT = 2

_DESCRIBE = {
    ORACLE_REPORTS: "frequency-oracle reports (read them with ldp.oracles.Reports.load)",
    PROTOCOL_REPORTS: "heavy-hitter protocol reports (read them with ldp.protocols.ProtocolReports.load)",
}
_ZIP_MAGIC = b"PK\x03\x04"
_META = "__meta__"
#: the largest metadata member read (its declared size, from the archive's directory): 64 MiB
MAX_META_BYTES = 64 * 2**20
#: what a caller expects of the members, given the metadata: ``{name: (dtype, row shape)}`` and a check of
#: the rows each member declares (raises :class:`ReportsFileError`), or ``None`` for no check
Expected = tuple[dict[str, tuple[np.dtype, tuple[int, ...]]], Callable[[dict[str, int]], None] | None]
# what numpy, zipfile and json raise on a damaged archive
_DAMAGE = (zipfile.BadZipFile, EOFError, zlib.error, ValueError, KeyError, struct.error, UnicodeDecodeError,
           SyntaxError, TypeError, IndexError, OSError, NotImplementedError)


class ReportsFileError(ValueError):
    """A file that cannot be read as reports; the message names the file and the problem.

    Attributes
    ----------
    path : str
        The file.
    problem : str
        What is wrong with it.
    """

    def __init__(self, path, problem: str):
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path!r} {problem}")


def checksum(arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 (hex) of the arrays: each one's name, dtype, shape and bytes, by name."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write(path, kind: str, meta: dict, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` and ``meta`` (plus type, format and checksum) to ``path`` atomically."""
    if _META in arrays:
        raise ValueError(f"array name {_META!r} is reserved")
    full = {"type": kind, "format": FORMAT, **meta, "sha256": checksum(arrays)}
    members: dict[str, Any] = {_META: np.array(json.dumps(full)), **arrays}
    with atomic_path(os.fspath(path)) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **members)


def _damaged(path, err: BaseException) -> ReportsFileError:
    detail = str(err)
    if "pickle" in detail:  # never pass on numpy's advice to load the file unsafely
        detail = "it holds pickled Python objects, which reports files never contain"
    else:
        detail = f"{type(err).__name__}: {detail}" if detail else type(err).__name__
    return ReportsFileError(path, f"is truncated or damaged ({detail})")


def _open_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo):
    """The member's stream positioned after its ``.npy`` header, and the header: ``(fh, shape, dtype, offset)``."""
    fh = zf.open(info)
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
    else:  # pragma: no cover - read_magic refuses other versions
        raise ValueError(f"unknown .npy format version {version}")
    if fortran:
        raise ValueError(f"member {info.filename!r} is stored in Fortran order, which reports files never are")
    return fh, tuple(shape), np.dtype(dtype), fh.tell()


def _stored(p: Path, info: zipfile.ZipInfo) -> None:
    if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
        raise ReportsFileError(p, f"has a compressed member {info.filename!r} (declared {info.file_size:,} bytes, "
                                  f"{info.compress_size:,} compressed); reports files store their arrays "
                                  f"uncompressed, so a member can never be larger than the file")


def read(path, kind: str, *, expect: Callable[[dict], Expected] | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """The metadata and arrays of a reports file of type ``kind``, after every check.

    Parameters
    ----------
    path : path-like
    kind : str
        :data:`ORACLE_REPORTS` or :data:`PROTOCOL_REPORTS`.
    expect : callable, optional
        Given the metadata, the members the file must hold (besides the
        metadata), as ``{name: (dtype, row shape)}`` (each member an array of
        shape ``(rows, *row shape)``), and a function checking the rows each
        declares (``{name: rows}``; it raises :class:`ReportsFileError`).  It is
        called before any array is read; every member's header and declared
        size are checked against it.  ``None``: the members are read as they
        are (only the stored-uncompressed and metadata-size checks apply).

    Raises
    ------
    FileNotFoundError
        No such file.
    ReportsFileError
        Anything else that makes the file unusable (see the module docstring).
    """
    p = Path(os.fspath(path))
    try:
        fh = open_regular(p)  # FileNotFoundError names the path; a named pipe never blocks, a device is not opened
    except UnsafeFileError as err:
        raise ReportsFileError(p, err.problem) from None
    with fh:
        return _read_open(p, fh, kind, expect)


def _read_open(p: Path, fh, kind: str, expect) -> tuple[dict, dict[str, np.ndarray]]:
    head = fh.read(4)
    if not head:
        raise ReportsFileError(p, "is empty (0 bytes): not a reports file")
    if head != _ZIP_MAGIC:
        raise ReportsFileError(p, "is not a reports file (not an .npz archive written by save())")
    fh.seek(0)
    try:
        with zipfile.ZipFile(fh) as zf:
            infos = {info.filename.removesuffix(".npy"): info for info in zf.infolist()}
            if len(infos) != len(zf.infolist()):
                raise ReportsFileError(p, "has two members of the same name")
            meta_info = infos.get(_META)
            if meta_info is None:
                raise ReportsFileError(p, "is an .npz archive but not a reports file (it has no ldp metadata)")
            _stored(p, meta_info)
            if meta_info.file_size > MAX_META_BYTES:
                raise ReportsFileError(p, f"declares {meta_info.file_size:,} bytes of metadata, more than the "
                                          f"{MAX_META_BYTES:,} a reports file may have")
            with zf.open(meta_info) as mf:
                raw = np.lib.format.read_array(mf, allow_pickle=False)
            if raw.dtype.kind != "U" or raw.shape != ():
                raise ReportsFileError(p, "is not a reports file (its metadata is not one JSON string)")
            try:
                meta = loads_json(str(raw), max_bytes=MAX_META_BYTES, limit_name="MAX_META_BYTES")
            except json.JSONDecodeError:
                raise
            except ValueError as err:
                raise ReportsFileError(p, f"has metadata that {err}") from None
            _check_meta(p, meta, kind)
            arrays = _read_arrays(p, zf, infos, expect(meta) if expect is not None else None)
    except ReportsFileError:
        raise
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except _DAMAGE as err:
        raise _damaged(p, err) from err
    if meta.get("sha256") != checksum(arrays):
        raise ReportsFileError(p, "does not match its checksum: its arrays were damaged or edited after saving "
                                  "(the checksum detects damage only: anyone can recompute it)")
    return meta, arrays


def _check_meta(p: Path, meta, kind: str) -> None:
    if not isinstance(meta, dict):
        raise ReportsFileError(p, "is not a reports file (its metadata is not a JSON object)")
    ftype = meta.get("type")
    if ftype is None and meta.get("format") == 1:
        raise ReportsFileError(p, "was written by an older version of ldp (reports format 1, without "
                                  "checksum); privatize the values again to get a current file")
    if ftype not in _DESCRIBE:
        raise ReportsFileError(p, f"is not a reports file (unknown type {ftype!r})")
    if ftype != kind:
        raise ReportsFileError(p, f"holds {_DESCRIBE[ftype]}, not {_DESCRIBE[kind].split(' (')[0]}")
    if meta.get("format") != FORMAT:
        raise ReportsFileError(p, f"has reports format {meta.get('format')!r}; this version of ldp "
                                  f"reads format {FORMAT}")


def _read_arrays(p: Path, zf: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo],
                 expected: Expected | None) -> dict[str, np.ndarray]:
    """Check every member (directory, header, declared size) against ``expected``, then read them all."""
    names = [n for n in infos if n != _META]
    for name in names:
        _stored(p, infos[name])
    if expected is not None:
        want, check_rows = expected
        unknown = sorted(set(names) - set(want))
        missing = sorted(set(want) - set(names))
        if unknown:
            info = infos[unknown[0]]
            raise ReportsFileError(p, f"has member(s) a reports file of this content never holds: "
                                      f"{', '.join(repr(u) for u in unknown[:5])} ({info.file_size:,} bytes declared)")
        if missing:
            raise ReportsFileError(p, f"lacks the member(s) {', '.join(repr(m) for m in missing[:5])} its "
                                      f"metadata requires")
    headers = {}
    for name in names:
        fh, shape, dtype, offset = _open_member(zf, infos[name])
        fh.close()
        if dtype.hasobject:
            raise ReportsFileError(p, "is truncated or damaged (it holds pickled Python objects, which reports "
                                      "files never contain)")
        if not shape:
            raise ReportsFileError(p, f"has a member {name!r} that is not a per-user array (shape ())")
        if expected is not None:
            dt, row = expected[0][name]
            if dtype != dt or shape[1:] != tuple(row):
                raise ReportsFileError(p, f"has a member {name!r} of {dtype} {shape}, where the reports need "
                                          f"{np.dtype(dt)} arrays of shape (n, {', '.join(map(str, row))})"
                                          .replace(", )", ")"))
        size = offset + int(np.prod(shape, dtype=object)) * dtype.itemsize
        if infos[name].file_size != size:
            raise ReportsFileError(p, f"has a member {name!r} whose declared size ({infos[name].file_size:,} "
                                      f"bytes) is not what its header says it holds ({size:,} bytes)")
        headers[name] = shape[0]
    if expected is not None and expected[1] is not None:
        expected[1](headers)
    arrays = {}
    for name in names:
        fh, shape, dtype, _ = _open_member(zf, infos[name])
        with fh:
            arr = np.empty(shape, dtype=dtype)
            view = arr.reshape(-1).view(np.uint8).data
            got = 0
            while got < view.nbytes:
                k = fh.readinto(view[got:])
                if not k:
                    raise EOFError(f"member {name!r} ends early")
                got += k
            if fh.read(1):  # pragma: no cover - the declared size was checked
                raise ValueError(f"member {name!r} is longer than its header says")
            arrays[name] = arr
    return arrays


def inconsistent(path, err: BaseException) -> ReportsFileError:
    """The error for a file whose checks pass but whose content does not make valid reports."""
    return ReportsFileError(path, f"has inconsistent content ({err})")
