"""Reading files nobody vouches for: regular files only, inside their folder, and JSON of bounded size and depth.

A file the package reads on someone else's word (a report store's ``store.json``,
manifests and Parquet files; a reports file; a published plan) must not make it
hang, leave its folder or exhaust the stack:

* :func:`open_regular` opens a path only if it is a regular file (``lstat``
  first, then ``open`` with ``O_NONBLOCK``, then ``fstat`` of the very file
  opened): a named pipe never blocks the reader (opening a FIFO without
  ``O_NONBLOCK`` waits for a writer forever), a device is never opened;
* :func:`open_inside` does the same for a path *inside* a folder, walking
  down from the folder one directory at a time with ``O_NOFOLLOW``: no
  component below the folder may be a symbolic link (one pointing outside
  would make the reader read what the folder's owner never wrote), and
  ``..`` is refused; :func:`list_inside` lists a folder inside a folder the
  same way;
* :func:`loads_json` refuses text longer than a stated limit and JSON nested
  deeper than :data:`MAX_JSON_DEPTH` *before* :func:`json.loads` sees it
  (which would raise ``RecursionError`` at about a thousand levels).

Each raises :class:`UnsafeFileError` (a ``ValueError`` naming the path and the
problem) or, for :func:`loads_json`, a ``ValueError`` naming the limit; the
callers turn them into their own errors (:class:`ldp.reportfile.ReportsFileError`,
:class:`ldp.core.PlanError`).  ``FileNotFoundError`` is passed on.
"""
from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any

import numpy as np

__all__ = ["UnsafeFileError", "MAX_JSON_DEPTH", "open_regular", "open_inside", "list_inside", "read_limited",
           "json_depth", "loads_json"]

#: the deepest JSON nesting read (plans and the store's files nest about five levels)
MAX_JSON_DEPTH = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class UnsafeFileError(ValueError):
    """A path that is not a regular file (or not a real folder) where one is expected.

    Attributes
    ----------
    path : str
    problem : str
    """

    def __init__(self, path, problem: str):
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path!r} {problem}")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path, mode: int) -> UnsafeFileError:
    kind = _kind(mode)
    what = kind if kind.startswith("not") else f"{kind}, not a regular file"
    return UnsafeFileError(path, f"is {what}; only regular files are read")


def _open_checked(name, path_for_errors, before: os.stat_result, dir_fd: int | None) -> IO[bytes]:
    """Open ``name`` (already ``lstat``-ed as ``before``) without blocking and check it is that regular file."""
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | _NOFOLLOW
    fd = os.open(name, flags, dir_fd=dir_fd) if dir_fd is not None else os.open(name, flags)
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):
            raise _not_regular(path_for_errors, now.st_mode)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise UnsafeFileError(path_for_errors, "was replaced while it was being opened")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_regular(path) -> IO[bytes]:
    """Open ``path`` for reading if it is a regular file (a symbolic link to one is followed).

    Raises
    ------
    FileNotFoundError
    UnsafeFileError
        A named pipe, a device, a socket or a folder.
    """
    p = os.fspath(path)
    st = os.stat(p)  # the caller's own path: a link to a regular file is the caller's choice
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(p, st.st_mode)
    real = os.path.realpath(p)
    return _open_checked(real, p, os.lstat(real), None)


def _parts(rel) -> tuple[str, ...]:
    parts = PurePosixPath(os.fspath(rel)).parts
    if not parts or PurePosixPath(os.fspath(rel)).is_absolute() or any(x in ("..", ".", "") for x in parts):
        raise ValueError(f"{os.fspath(rel)!r} must be a relative path inside the folder, without '..'")
    return parts


@contextmanager
def _walk(root: Path, parts: tuple[str, ...]) -> Iterator[int]:
    """A descriptor of the folder ``root / parts``, every component a real folder (no symbolic link)."""
    fd = os.open(os.fspath(root), os.O_RDONLY | _DIRECTORY | _CLOEXEC)  # the folder itself: the caller's choice
    try:
        here = Path(root)
        for name in parts:
            here = here / name
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise UnsafeFileError(here, f"is {_kind(st.st_mode)}, not a folder: the store's folders are "
                                            f"real folders inside it")
            sub = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = sub
        yield fd
    finally:
        os.close(fd)


def open_inside(root, rel) -> IO[bytes]:
    """Open ``root / rel`` for reading: a regular file, reached from ``root`` without a symbolic link.

    Parameters
    ----------
    root : path-like
        The folder (itself may be a link: the caller named it).
    rel : str
        A relative path (``/``-separated) inside it.

    Raises
    ------
    FileNotFoundError
    UnsafeFileError
        A component is a symbolic link, the file is not a regular file.
    """
    root = Path(root)
    parts = _parts(rel)
    path = root.joinpath(*parts)
    with _walk(root, parts[:-1]) as fd:
        try:
            st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            raise FileNotFoundError(2, "No such file", os.fspath(path)) from None
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        return _open_checked(parts[-1], path, st, fd)


def list_inside(root, rel: str = "") -> list[tuple[str, bool]]:
    """The entries of the folder ``root / rel`` (reached without a symbolic link): ``(name, is_regular_file)``.

    A missing folder lists as empty.
    """
    root = Path(root)
    parts = _parts(rel) if rel else ()
    try:
        with _walk(root, parts) as fd:
            with os.scandir(fd) as it:
                return [(e.name, e.is_file(follow_symlinks=False)) for e in it]
    except FileNotFoundError:
        return []


def read_limited(fh: IO[bytes], limit: int, path, what: str) -> bytes:
    """The content of ``fh``, at most ``limit`` bytes; more is an :class:`UnsafeFileError` naming ``what``.

    The size is checked before anything is read, and the file is read in
    pieces of at most a megabyte (``read(limit)`` would reserve ``limit``
    bytes at once, whatever the file holds).
    """
    def refuse() -> UnsafeFileError:
        return UnsafeFileError(path, f"is larger than {what} = {limit:,} bytes, the most read of such a file")

    if os.fstat(fh.fileno()).st_size > limit:
        raise refuse()
    pieces: list[bytes] = []
    got = 0
    while True:
        piece = fh.read(min(2**20, limit + 1 - got))
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        got += len(piece)
        if got > limit:  # grew while it was read
            raise refuse()


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def json_depth(text: str | bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text (strings skipped), in linear time, without parsing.

    Counted a megabyte at a time (``int32`` steps), so the memory is a few
    megabytes whatever the text.
    """
    data = text.encode("utf-8", errors="replace") if isinstance(text, str) else bytes(text)
    bare = np.frombuffer(_STRING.sub(b'""', data), dtype=np.uint8)
    deepest = level = 0
    for lo in range(0, bare.size, 2**20):
        part = bare[lo:lo + 2**20]
        step = (part == ord("[")).astype(np.int32) + (part == ord("{")) - (part == ord("]")) - (part == ord("}"))
        run = np.cumsum(step, dtype=np.int64) + level
        deepest, level = max(deepest, int(run.max())), int(run[-1])
    return deepest


def loads_json(text: str | bytes, *, max_bytes: int, limit_name: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """:func:`json.loads` of ``text`` after its size and depth are checked.

    Raises
    ------
    ValueError
        More than ``max_bytes`` bytes (``limit_name`` names the limit in the
        message), nesting deeper than ``max_depth``, or not JSON
        (:class:`json.JSONDecodeError`).
    """
    if isinstance(text, str) and len(text) <= max_bytes < 4 * len(text):
        size = len(text.encode("utf-8", errors="replace"))  # a character is 1 to 4 bytes
    else:
        size = len(text)
    if size > max_bytes:
        raise ValueError(f"is {size:,} bytes of JSON, more than {limit_name} = {max_bytes:,}")
    depth = json_depth(text)
    if depth > max_depth:
        raise ValueError(f"nests JSON {depth:,} levels deep, deeper than {max_depth} (the most read)")
    return json.loads(text)
