"""The results cache of experiment grids: one parquet file per point, plus the assembled frame of a grid.

A point's file is named by its cache key (a SHA-256 of the point's canonical
parameters, the root seed, the rank depth, the library version with its source
digest, the versions of numpy, scipy and numba, and the row format) and holds every repetition computed so far, so more
repetitions or more points reuse what is there.  The assembled frame of a grid
is stored whole too (``grid-<key>.parquet``), so re-rendering a page reads one
file.  Files are written atomically and synced (:func:`ldp.paths.atomic_path`),
each point as soon as it is complete, so an interrupted grid keeps its finished
points and never leaves a partial file; a damaged file is a miss, with a warning.

Two processes that ask for the same point at once (two chapters of one build running side by side) compute
it once: :class:`PointLocks` gives the point to the first, and the other waits for its file (an advisory lock
per point under ``<cache>/locks/``, released as the point is written, or by the system when its process dies).

Why not :class:`joblib.Memory`: it stores one call's whole return value under a
hash of that call's arguments, so it could neither extend a point's stored
repetitions with new ones nor store each point as the workers finish it, which
is what this cache is for.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..paths import atomic_path, cache_dir

__all__ = ["default_cache_dir", "normalize", "write_frame", "read_frame", "PointLocks"]


def default_cache_dir() -> Path:
    """Where grids are cached: ``ldp.paths.cache_dir() / "experiments"``.

    That is ``$LDP_CACHE_DIR/experiments`` when the variable is set, else
    ``<repo root>/.cache/experiments`` (repo root from the package location,
    or ``$LDP_ROOT``).

    Returns
    -------
    pathlib.Path
    """
    return cache_dir() / "experiments"


def normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Round-trip through Arrow so fresh and cached frames have identical dtypes."""
    return pa.Table.from_pandas(df, preserve_index=False).to_pandas()


def write_frame(df: pd.DataFrame, path: Path) -> None:
    """Write ``df`` to ``path`` as parquet, atomically and synced: readers see the old file or the whole new one."""
    with atomic_path(path, sync=True) as tmp:
        df.to_parquet(tmp, index=False)


def read_frame(path: Path, per_point: bool = True) -> pd.DataFrame | None:
    """The frame cached in ``path``; None when the file is missing or damaged (with a warning).

    Parameters
    ----------
    path : pathlib.Path
        A point's file or a grid's file.
    per_point : bool
        A point's file: each repetition at most once.

    Returns
    -------
    pandas.DataFrame or None
    """
    if not path.exists():
        return None
    try:
        df = pd.read_parquet(path)
        if "rep" not in df.columns or (per_point and df["rep"].duplicated().any()):
            raise ValueError("bad layout")
        return df
    except Exception as exc:  # a damaged file is a miss, not a failure
        warnings.warn(f"ignoring unreadable cache file {path}: {exc}", RuntimeWarning, stacklevel=3)
        return None


class PointLocks:
    """Advisory locks on the points this process is computing, one file per point key under ``folder``.

    A lock is an exclusive :func:`fcntl.flock` on ``<folder>/<key>.lock``: held from the moment this
    process takes a point until it has written the point's file, released by the system if the process
    dies, so a crashed build never blocks the next one.  The lock files are empty and stay in place.

    Parameters
    ----------
    folder : path-like
        Where the lock files live (``<cache>/locks``).
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self._held: dict[str, int] = {}

    def _open(self, key: str) -> int:
        self.folder.mkdir(parents=True, exist_ok=True)
        return os.open(self.folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)

    def try_acquire(self, key: str) -> bool:
        """Take the point if no other process holds it; True when this process now holds it."""
        if key in self._held:
            return True
        fd = self._open(key)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._held[key] = fd
        return True

    def release(self, key: str) -> None:
        """Let the point go (a no-op for a point this process does not hold)."""
        fd = self._held.pop(key, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def release_all(self) -> None:
        """Let every held point go."""
        for key in list(self._held):
            self.release(key)

    def wait(self, key: str) -> None:
        """Block until no other process holds the point (it has written it, or died)."""
        fd = self._open(key)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
