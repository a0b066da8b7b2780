"""Where the package writes: the project folder, never the installed package.

Two situations:

* **A source checkout** (the repository, ``ldp`` installed editable): the
  project root is the folder holding the ``ldp`` package *and*
  ``pyproject.toml`` and ``notebooks/``, or ``$LDP_ROOT`` when set.  Paths
  are taken from that root, never from the working folder (showyourwork
  style): generated artefacts under ``<root>/_generated`` (gitignored), the
  results cache in ``<root>/.cache``, data in ``<root>/data``.
* **An installed package** (``pip install .`` or a wheel; the package sits in
  ``site-packages``): the project is the *working folder*
  (``<cwd>/_generated/figures`` for figures, ``<cwd>/data`` for data) and the
  results cache is the per-user cache folder of :mod:`platformdirs`
  (``~/.cache/ldp`` on Linux).  Nothing is written inside the package.
  numba's on-disk cache of compiled kernels goes to numba's own per-user
  cache folder (:func:`configure_numba_cache`) instead of ``__pycache__``
  next to the installed sources.

``$LDP_FIGURE_DIR``, ``$LDP_CACHE_DIR`` and ``$LDP_ROOT`` override the
defaults in both situations.
"""
from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["source_checkout", "repo_root", "generated_dir", "figures_dir", "cache_dir", "data_dir", "atomic_path",
           "source_digest", "configure_numba_cache", "PROGRESS_ENV",
           "SHOW_FIGURES_ENV"]

#: environment variable naming the file where :func:`ldp.experiments.run_grid` writes its progress
#: (set by the notebook runner, :func:`ldp.book.rerun.execute`, which polls the file)
PROGRESS_ENV = "LDP_PROGRESS_FILE"
#: set (to anything) by ``python -m ldp rerun``: :func:`ldp.book.plotting.save_figure` also shows each figure
#: in the notebook
SHOW_FIGURES_ENV = "LDP_SHOW_FIGURES"

_PACKAGE_PARENT = Path(__file__).resolve().parents[1]


def source_checkout() -> Path | None:
    """The project root when running from a source checkout, else ``None``.

    ``$LDP_ROOT`` when set; else the folder holding the ``ldp`` package if it
    also holds ``pyproject.toml`` and ``notebooks/`` (the repository layout);
    else ``None`` (an installed package).
    """
    env = os.environ.get("LDP_ROOT")
    if env:
        return Path(env).resolve()
    if (_PACKAGE_PARENT / "pyproject.toml").is_file() and (_PACKAGE_PARENT / "notebooks").is_dir():
        return _PACKAGE_PARENT
    return None


def repo_root() -> Path:
    """The project folder: the source checkout's root, else the working folder."""
    root = source_checkout()
    return root if root is not None else Path.cwd()


def generated_dir() -> Path:
    """``<project>/_generated``: everything the build writes."""
    return repo_root() / "_generated"


def figures_dir() -> Path:
    """Where figure files (SVG and PDF) are written.

    ``$LDP_FIGURE_DIR`` when set (the notebook runner sets it per build mode),
    else ``<project>/_generated/figures``.
    """
    env = os.environ.get("LDP_FIGURE_DIR")
    return Path(env).resolve() if env else generated_dir() / "figures"


def cache_dir() -> Path:
    """Results cache: ``$LDP_CACHE_DIR``, else ``<root>/.cache`` in a source checkout, else the user cache.

    The user cache is ``platformdirs.user_cache_dir("ldp")`` (``~/.cache/ldp``
    on Linux, ``~/Library/Caches/ldp`` on macOS).
    """
    env = os.environ.get("LDP_CACHE_DIR")
    if env:
        return Path(env).resolve()
    root = source_checkout()
    if root is not None:
        return root / ".cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("ldp", appauthor=False))


def data_dir() -> Path:
    """Downloaded data sets: ``<project>/data``."""
    return repo_root() / "data"


def configure_numba_cache() -> None:
    """Keep numba's cache of compiled kernels out of an installed package.

    numba writes its on-disk cache (``cache=True``) to ``__pycache__`` next to
    the source file when that folder is writable, i.e. into
    ``site-packages/ldp`` for a pip-installed package.  Outside a source
    checkout, and unless ``NUMBA_CACHE_DIR`` is set, this points numba at its
    own per-user cache folder (the one it uses for read-only installs), before
    any ``ldp`` kernel is compiled.  Called when ``ldp`` is imported.
    """
    if source_checkout() is not None or os.environ.get("NUMBA_CACHE_DIR"):
        return
    import platformdirs

    folder = platformdirs.user_cache_dir("numba", appauthor=False)
    if "numba" in sys.modules:  # numba read its configuration already
        from numba.core import config

        if not getattr(config, "CACHE_DIR", None):
            setattr(config, "CACHE_DIR", folder)  # noqa: B010 (set at run time; unknown to type checkers)
    else:
        os.environ["NUMBA_CACHE_DIR"] = folder


@contextmanager
def atomic_path(target: str | os.PathLike, *, sync: bool = False) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success.

    THE atomic writer of the project: every cache and output file is written
    through it.  An exception (or an interrupt) leaves ``target`` untouched
    and removes the temporary file, so readers never see a half-written file.

    Parameters
    ----------
    target : str or os.PathLike
        The file to write; its folder is created if needed.
    sync : bool, keyword-only
        ``os.fsync`` the written file before the rename, so that after a crash
        of the machine the target is the old or the whole new file (the results
        cache asks for it).

    Yields
    ------
    pathlib.Path
        The temporary file to write (mode ``0o666`` minus the umask).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the usual mode
    try:
        yield Path(tmp)
        if sync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """THE digest of the library's own source: SHA-256 (hex) of every ``ldp/**/*.py``, path and content.

    The results cache of :mod:`ldp.experiments` keys on it (a change to a
    protocol, an engine or a data set invalidates cached results even when
    ``ldp.__version__`` is not bumped), and so does the notebook runner's
    execution cache.  Computed once per process (the sources of a running
    process do not change).

    Returns
    -------
    str
        64 hex digits.
    """
    package = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(package.rglob("*.py")):
        h.update(f.relative_to(package).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()
