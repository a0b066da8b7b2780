"""Reports files (``.npz``): written atomically with a checksum, read with checks that name the problem.

Both kinds of reports files go through here: a frequency oracle's
(:meth:`ldp.oracles.Reports.save`) and a heavy-hitter protocol's
(:meth:`ldp.protocols.ProtocolReports.save`).  A file is a numpy ``.npz``
archive (no pickled objects) holding the per-user arrays and one JSON string,
``__meta__``, with the file's type, its format version, the parameters needed
to read it back and a SHA-256 checksum of the arrays (name, dtype, shape and
bytes of each).

:func:`read` refuses anything else with a :class:`ReportsFileError` that names
the file and what is wrong with it: empty, not an ``.npz`` archive, truncated
or damaged, not a reports file, the other kind of reports file, an older
format, or arrays that do not match the checksum.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .paths import atomic_path

__all__ = ["ReportsFileError", "ORACLE_REPORTS", "PROTOCOL_REPORTS", "FORMAT", "checksum", "write", "read",
           "inconsistent"]

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


def read(path, kind: str) -> tuple[dict, dict[str, np.ndarray]]:
    """The metadata and arrays of a reports file of type ``kind``, after every check.

    Raises
    ------
    FileNotFoundError
        No such file.
    ReportsFileError
        Anything else that makes the file unusable (see the module docstring).
    """
    p = Path(os.fspath(path))
    with open(p, "rb") as fh:  # FileNotFoundError / IsADirectoryError name the path
        head = fh.read(4)
    if not head:
        raise ReportsFileError(p, "is empty (0 bytes): not a reports file")
    if head != _ZIP_MAGIC:
        raise ReportsFileError(p, "is not a reports file (not an .npz archive written by save())")
    try:
        with np.load(p, allow_pickle=False) as f:
            if _META not in f.files:
                raise ReportsFileError(p, "is an .npz archive but not a reports file (it has no ldp metadata)")
            meta = json.loads(str(f[_META]))
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
            arrays = {name: f[name] for name in f.files if name != _META}
    except ReportsFileError:
        raise
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except _DAMAGE as err:
        raise _damaged(p, err) from err
    if meta.get("sha256") != checksum(arrays):
        raise ReportsFileError(p, "does not match its checksum: its arrays were damaged or edited after saving")
    return meta, arrays


def inconsistent(path, err: BaseException) -> ReportsFileError:
    """The error for a file whose checks pass but whose content does not make valid reports."""
    return ReportsFileError(path, f"has inconsistent content ({err})")
