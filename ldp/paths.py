"""Paths from the repository root, never the working folder (showyourwork style).

The root is the folder that holds the ``ldp`` package (an editable install);
set ``LDP_ROOT`` to override it.  Generated artefacts live under
``<root>/_generated`` (gitignored): executed notebooks, figures, glue tables.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["repo_root", "generated_dir", "figures_dir", "cache_dir", "data_dir", "atomic_path"]


def repo_root() -> Path:
    """The repository root (``$LDP_ROOT`` if set)."""
    env = os.environ.get("LDP_ROOT")
    return Path(env).resolve() if env else Path(__file__).resolve().parents[1]


def generated_dir() -> Path:
    """``<root>/_generated``: everything the build writes."""
    return repo_root() / "_generated"


def figures_dir() -> Path:
    """Where figure files (SVG and PDF) are written.

    ``$LDP_FIGURE_DIR`` when set (the notebook runner sets it per build mode),
    else ``<root>/_generated/figures``.
    """
    env = os.environ.get("LDP_FIGURE_DIR")
    return Path(env).resolve() if env else generated_dir() / "figures"


def cache_dir() -> Path:
    """Results cache: ``$LDP_CACHE_DIR`` or ``<root>/.cache``."""
    env = os.environ.get("LDP_CACHE_DIR")
    return Path(env).resolve() if env else repo_root() / ".cache"


def data_dir() -> Path:
    """Downloaded data sets: ``<root>/data``."""
    return repo_root() / "data"


@contextmanager
def atomic_path(target: str | os.PathLike):
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success.

    An exception (or an interrupt) leaves ``target`` untouched and removes the
    temporary file, so readers never see a half-written file.
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
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
