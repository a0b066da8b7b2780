"""The AOL query data set of section 6.1 ("Query trends", m = 48): loading, checking, fetching.

The authors' public tally of the first query of each AOL user, cut or padded
to 6 bytes, ships with the project as ``data/aol_query_6bytes_counts.txt.gz``;
:func:`aol` reads it, :func:`check_aol` verifies its sha256 without parsing
it, and :func:`fetch_aol` restores it with :mod:`pooch` (``make data``).

References
----------
.. [1] T. Wang, N. Li, S. Jha.  Locally Differentially Private Heavy Hitter
   Identification.  Section 6.1 ("Query Trends").
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..core.dataset import Dataset
from ..numeric import readonly
from ..paths import atomic_path, data_dir, repo_root
from ..values import encode

__all__ = ["aol", "fetch_aol", "find_aol", "check_aol", "data_folder", "AOL_FILENAME", "AOL_URL", "AOL_SHA256",
           "AOL_USERS", "AOL_DISTINCT", "DataFileNotFoundError", "ChecksumError", "DataFormatError",
           "DownloadError"]

#: file name of the AOL tally in the data folder (``data/`` or ``$LDP_DATA_DIR``)
AOL_FILENAME = "aol_query_6bytes_counts.txt.gz"
#: where :func:`fetch_aol` downloads the tally from: the paper authors' published file
AOL_URL = "https://github.com/vvv214/LDP_Protocols/raw/master/pem/query_6bytes_sorted.txt.gz"
#: sha256 of the tally; a file with another digest is refused (:class:`ChecksumError`)
AOL_SHA256 = "b5750f6998acf3812bbba994954c981a77db510b7867f7cff82e02af13e662db"
#: number of users (one query each) the tally holds
AOL_USERS = 657_427
#: number of distinct 6-byte queries the tally holds
AOL_DISTINCT = 120_978
_AOL_BYTES = 6


class DataFileNotFoundError(FileNotFoundError):
    """A data file is not where the loader looks."""


class ChecksumError(ValueError):
    """A data file's sha256 is not the published one."""


class DataFormatError(ValueError):
    """A data file does not have the expected format."""


class DownloadError(OSError):
    """A data file could not be downloaded (offline, HTTP error, ...)."""


def _how_to_get() -> str:
    return (f"The project ships it as data/{AOL_FILENAME}; restore it with `git checkout -- data/` or "
            f"`make data` (runs `python -m ldp.datasets fetch aol`), or download {AOL_URL} by hand and "
            f"save it as {AOL_FILENAME} in the project's data/ folder, or in the folder named by the "
            f"environment variable LDP_DATA_DIR when that is set (sha256 {AOL_SHA256}).")


def _default_data_dir() -> Path | None:
    """``<project>/data`` (:func:`ldp.paths.data_dir`, honours ``LDP_ROOT``).

    None when the package is installed outside a project checkout (no
    ``pyproject.toml`` next to it and ``LDP_ROOT`` unset).
    """
    if os.environ.get("LDP_ROOT") or (repo_root() / "pyproject.toml").is_file():
        return data_dir()
    return None


def data_folder() -> Path | None:
    """The folder the data loaders read and ``fetch`` writes to.

    ``$LDP_DATA_DIR`` when it is set (non-empty): an explicit setting wins and
    is then the *only* folder searched, so pointing it at an empty folder hides
    the copy that ships in the project's ``data/``.  Otherwise the project's
    ``data/`` folder (next to the ``ldp`` package, or ``$LDP_ROOT/data``; never
    the working folder), or None for an installed package without a project.
    """
    env = os.environ.get("LDP_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return _default_data_dir()


def _aol_candidates(path=None) -> list[Path]:
    if path is not None:
        p = Path(path).expanduser()
        return [p / AOL_FILENAME if p.is_dir() else p]
    d = data_folder()
    return [] if d is None else [d / AOL_FILENAME]


def find_aol(path=None) -> Path:
    """Where the AOL tally is (the file is not read).

    Looks at ``path`` (a file, or a folder holding
    ``aol_query_6bytes_counts.txt.gz``) when given, else in
    :func:`data_folder`: ``$LDP_DATA_DIR`` when set -- and only there -- else
    the project's ``data/`` folder, where the file ships with the project.

    Raises
    ------
    DataFileNotFoundError
        No file found; the message names the place tried and how to get the file.
    """
    tried = _aol_candidates(path)
    for p in tried:
        if p.is_file():
            return p
    where = ", ".join(str(p) for p in tried) or "(no project data/ folder and LDP_DATA_DIR unset)"
    raise DataFileNotFoundError(f"AOL query tally not found; looked at: {where}. {_how_to_get()}")


def check_aol(path=None) -> Path:
    """Find the AOL tally and verify its sha256, without parsing it (a few ms).

    The book uses it to decide whether the AOL results can be computed: a
    chapter that gets an error leaves them out and says why.

    Parameters
    ----------
    path : str, Path or None
        As for :func:`find_aol`.

    Returns
    -------
    pathlib.Path
        The verified file.

    Raises
    ------
    DataFileNotFoundError
        The file is missing.
    ChecksumError
        The file's sha256 is not ``AOL_SHA256``.
    """
    p = find_aol(path)
    digest = _sha256(p)
    if digest != AOL_SHA256:
        raise _checksum_error(p, digest)
    return p


def _checksum_error(p: Path, digest: str) -> ChecksumError:
    return ChecksumError(f"{p} has sha256 {digest}, expected {AOL_SHA256} (corrupt or a "
                         f"different file; delete it). {_how_to_get()}")


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _parse_aol(raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    """``QUERY<TAB>COUNT`` lines (query exactly 6 bytes, split on the last tab)."""
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    queries, counts = [], []
    for i, line in enumerate(lines, 1):
        q, tab, c = line.rpartition(b"\t")
        if not tab or len(q) != _AOL_BYTES or not c.strip().isdigit():
            raise DataFormatError(f"AOL tally line {i}: expected a {_AOL_BYTES}-byte query, a tab and "
                                  f"a count, got {line[:40]!r}")
        queries.append(q)
        counts.append(int(c))
    if not queries:
        raise DataFormatError("AOL tally is empty")
    return encode(queries, _AOL_BYTES), np.array(counts, dtype=np.int64)


# Bounded memos (functools.lru_cache): the parsed tally per file version (path, mtime, size), and the
# Dataset per file version and integer seed; a few entries, as a process reads one file.
@functools.lru_cache(maxsize=2)
def _read_tally(path: str, mtime_ns: int, size: int, verify: bool) -> tuple[np.ndarray, np.ndarray, str]:
    """The file's values, counts (read-only) and sha256; with ``verify`` the sha256 is checked before parsing."""
    p = Path(path)
    raw = p.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if verify and digest != AOL_SHA256:
        raise _checksum_error(p, digest)
    try:
        text = gzip.decompress(raw)
    except (OSError, EOFError) as exc:
        raise DataFormatError(f"{p} is not a gzip file ({exc}). {_how_to_get()}") from exc
    values, counts = _parse_aol(text)
    return readonly(values), readonly(counts), digest


def _from_tally(tally: tuple[np.ndarray, np.ndarray, str], path: str, rng) -> Dataset:
    values, counts, digest = tally
    return Dataset.from_counts(values, counts, 8 * _AOL_BYTES, "aol", rng=rng, nbytes=_AOL_BYTES,
                               params={"source": path, "sha256": digest, "url": AOL_URL})


@functools.lru_cache(maxsize=4)
def _aol_dataset(path: str, mtime_ns: int, size: int, verify: bool, seed: int) -> Dataset:
    """The data set of a file version with the users in the order of the integer ``seed``."""
    return _from_tally(_read_tally(path, mtime_ns, size, verify), path, seed)


def aol(path=None, *, rng=0, verify: bool = True) -> Dataset:
    """The AOL query data set of section 6.1 (m = 48: queries of 6 bytes).

    The authors' public tally: the first query of each of 657,427 AOL users
    (March-May 2006), truncated or space-padded to 6 bytes; 120,978 distinct
    queries.  The paper's text says about 0.5 million users and 0.2 million
    distinct queries; the authors' errata corrects the distinct count to 0.12
    million.  The first row, ``"-     "``, is AOL's placeholder for an empty
    query (the most frequent value, 18,720 users).  19 queries hold non-ASCII
    bytes; the bytes are kept exactly.

    Parameters
    ----------
    path : str, Path or None
        The file, or a folder holding it; default: see :func:`find_aol`.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness for the order of the users (the tally has none).  Default
        ``0``: a fixed order, so ``aol()`` is deterministic and memoised;
        ``None`` gives a fresh order.
    verify : bool
        Check the file's sha256 against ``AOL_SHA256``.

    Returns
    -------
    Dataset
        ``name='aol'``, ``m=48``, ``nbytes=6``.

    Raises
    ------
    DataFileNotFoundError
        The file is missing (the message says how to get it).
    ChecksumError
        The file's sha256 differs from ``AOL_SHA256``.
    DataFormatError
        A line is not ``QUERY<TAB>COUNT`` with a 6-byte query.

    References
    ----------
    Section 6.1 ("Query Trends") of the paper; source file
    ``pem/query_6bytes_sorted.txt.gz`` of github.com/vvv214/LDP_Protocols (MIT).
    """
    p = find_aol(path).resolve()
    st = p.stat()
    fkey = (str(p), st.st_mtime_ns, st.st_size, bool(verify))
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return _aol_dataset(*fkey, int(rng))  # a fixed order: memoised
    return _from_tally(_read_tally(*fkey), str(p), rng)


def _copy_local(url: str, output_file, pooch_obj=None, check_only: bool = False):
    """A pooch downloader for ``file://`` URLs: copy the file (pooch then verifies it)."""
    src = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
    if check_only:
        return src.is_file()
    try:
        shutil.copyfile(src, output_file)
    except OSError as exc:
        raise DownloadError(f"could not download {url}: {exc.strerror or exc}") from exc
    return None


@contextmanager
def _quiet_pooch():
    """Silence pooch's INFO lines ("Downloading data from ...") for one call."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")
    try:
        yield pooch
    finally:
        logger.setLevel(level)


def fetch_aol(dest_dir=None, *, url: str = AOL_URL, force: bool = False, timeout: float = 60.0) -> Path:
    """Download the AOL tally with pooch, verify its sha256, and move it into place atomically.

    The project ships the file in ``data/``; this restores it there, or puts a
    copy in another folder.  ``pooch.retrieve`` downloads into a temporary file
    and keeps it only if its sha256 is ``AOL_SHA256``; the verified file then
    replaces the target atomically (:func:`ldp.paths.atomic_path`), so a reader never sees a partial or
    unverified file, and a wrong file already there stays until a good one
    replaces it.

    Parameters
    ----------
    dest_dir : str, Path or None
        Target folder; default :func:`data_folder` (``$LDP_DATA_DIR`` when set,
        else the project's ``data/``).
    url : str
        Where to download from: an ``https://``, ``http://`` or ``file://``
        URL, or a local path to copy.
    force : bool
        Download even when a verified file is already there.
    timeout : float
        Seconds to wait for the server.

    Returns
    -------
    pathlib.Path
        ``dest_dir / AOL_FILENAME``, verified.

    Raises
    ------
    DownloadError
        Offline, HTTP error, unsupported URL, or no destination folder.
    ChecksumError
        The downloaded bytes are not the published file (nothing is kept).
    """
    if dest_dir is None:
        dest_dir = data_folder()
        if dest_dir is None:
            raise DownloadError("no destination: pass dest_dir or set LDP_DATA_DIR")
    dest_dir = Path(dest_dir).expanduser()
    target = dest_dir / AOL_FILENAME
    if not force and target.is_file() and _sha256(target) == AOL_SHA256:
        return target
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in {"https", "http", "file"}:
        if "://" in url:
            raise DownloadError(f"cannot download {url}: only https://, http:// and file:// URLs "
                                f"or a local path are supported")
        url, scheme = Path(url).expanduser().resolve().as_uri(), "file"
    dest_dir.mkdir(parents=True, exist_ok=True)
    import requests

    with _quiet_pooch() as pooch, tempfile.TemporaryDirectory(prefix=".aol-", dir=dest_dir) as tmp:
        downloader = _copy_local if scheme == "file" else pooch.HTTPDownloader(timeout=timeout)
        try:
            got = pooch.retrieve(url, known_hash=f"sha256:{AOL_SHA256}", fname=AOL_FILENAME, path=tmp,
                                 downloader=downloader, progressbar=False)
        except requests.RequestException as exc:
            raise DownloadError(f"could not download {url}: {exc}. If this machine is offline, copy "
                                f"the file into {dest_dir} as {AOL_FILENAME} by hand: the project ships "
                                f"it as data/{AOL_FILENAME}, or take it from a machine that can reach "
                                f"{AOL_URL}; its sha256 must be {AOL_SHA256}.") from exc
        except ValueError as exc:  # pooch: the downloaded file's hash is not the known one
            raise ChecksumError(f"downloaded {url} does not have the published sha256 {AOL_SHA256} "
                                f"({exc}); nothing was saved.") from exc
        with atomic_path(target) as part:  # the one atomic writer (ldp.paths)
            shutil.copyfile(got, part)
    return target

