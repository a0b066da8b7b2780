"""A rerun's folder: one the rerun made, recognised by its manifest; no file in it that the rerun did not write is
ever removed or replaced.

A rerun writes only into a folder of its own:

* a folder that does not exist yet (the rerun creates it), or an empty one;
* a folder an earlier rerun made, recognised by the manifest :data:`MANIFEST` (``rerun.json``) that every rerun
  writes into its folder before anything else.  When a run ends, however it ends (finished, failed, Ctrl-C),
  the manifest records every file the run wrote, with its size and SHA-256.  The next run into the folder
  removes the files that are still exactly what the earlier run wrote, and nothing else.

A run writes in fixed places only (:func:`run_places`): ``NAME.ipynb``, ``NAME.html``, ``run.log``,
``claims.csv``, ``claims.md``, ``parameters.json``, ``INCOMPLETE``, and below ``figures/`` and ``tables/``.
Before any work, :func:`claim` refuses, saying why and naming the files:

* a folder that holds files and no manifest (``--out ~/results`` with your own files in it);
* a manifest that is not one a rerun wrote;
* in a folder an earlier rerun made, a file in one of those places that no rerun recorded, or that changed
  since it was recorded (a notebook you opened and saved, a figure you added to ``figures/``);
* a folder another rerun is writing into (each run holds an exclusive :func:`fcntl.flock` on its folder).

Other files in a run's folder (your notes beside the run's files, a report written into it) are never read,
moved or removed.  A run killed outright (SIGKILL, a power cut) cannot record what it wrote: the next run
into its folder finds files it cannot vouch for and refuses, listing them, until they are removed by hand.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...paths import atomic_path
from ...safefiles import UnsafeFileError, loads_json, open_inside, read_limited

__all__ = ["MANIFEST", "INCOMPLETE", "MAX_MANIFEST_BYTES", "RunFolderError", "RunFolder", "run_places", "claim"]

#: the manifest every rerun writes into its folder first: the marker of a rerun's folder, and what it wrote
MANIFEST = "rerun.json"
#: the file that marks a run folder whose run has not finished (running, failed or interrupted)
INCOMPLETE = "INCOMPLETE"
#: the largest manifest read (a run writes a few hundred files at most: about 200 bytes each)
MAX_MANIFEST_BYTES = 2**22
#: the folders below which a run writes (the figures and their CSVs; the result tables)
RUN_FOLDERS = ("figures", "tables")
_WRITTEN_BY = "python -m ldp rerun"
_FORMAT = 1
_MAX_DEPTH = 16  # folders nested deeper below figures/ or tables/ are not a run's
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SHOWN = 8  # files named in a refusal


class RunFolderError(Exception):
    """A folder a rerun refuses to write into (the message says why and what to do)."""


def run_places(stem: str) -> tuple[str, ...]:
    """The files a run of the notebook ``stem`` writes at the top of its folder (besides :data:`MANIFEST`)."""
    return (f"{stem}.ipynb", f"{stem}.html", "run.log", "claims.csv", "claims.md", "parameters.json", INCOMPLETE)


def _in_place(rel: str, stem: str) -> bool:
    """Whether ``rel`` (``/``-separated, relative to the folder) is where a run of ``stem`` may write."""
    return rel in run_places(stem) or rel.split("/", 1)[0] in RUN_FOLDERS


@dataclass(frozen=True)
class _Entry:
    rel: str
    kind: str  # "file" (regular), "folder" or what else it is ("a symbolic link", ...)
    size: int


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"


def _scan(folder: Path) -> list[_Entry]:
    """The folder's own entries, and everything below its ``figures/`` and ``tables/`` (no link followed)."""
    out: list[_Entry] = []

    def walk(path: Path, prefix: str, depth: int) -> None:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            rel = f"{prefix}{e.name}"
            st = e.stat(follow_symlinks=False)
            kind = _kind(st.st_mode)
            out.append(_Entry(rel, kind, st.st_size))
            below = depth > 0 or e.name in RUN_FOLDERS
            if kind == "folder" and below and depth < _MAX_DEPTH:
                walk(Path(e.path), rel + "/", depth + 1)

    walk(folder, "", 0)
    return out


def _sha256(folder: Path, rel: str) -> str:
    h = hashlib.sha256()
    with open_inside(folder, rel) as fh:
        for piece in iter(lambda: fh.read(2**20), b""):
            h.update(piece)
    return h.hexdigest()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of ``folder``, checked to be one a rerun wrote; :class:`RunFolderError` if it is not."""
    path = folder / MANIFEST

    def refuse(why: str) -> RunFolderError:
        return RunFolderError(f"{path} {why}: it is not the manifest of a rerun's folder, so the folder is not "
                              f"one a rerun made. Nothing was changed; choose another folder (--out) that "
                              f"does not exist yet.")

    try:
        with open_inside(folder, MANIFEST) as fh:
            text = read_limited(fh, MAX_MANIFEST_BYTES, path, "MAX_MANIFEST_BYTES")
        manifest = loads_json(text, max_bytes=MAX_MANIFEST_BYTES, limit_name="MAX_MANIFEST_BYTES")
    except UnsafeFileError as exc:
        raise refuse(exc.problem) from None
    except ValueError as exc:  # too large, too deep, not JSON
        raise refuse(str(exc)) from None
    if not (isinstance(manifest, dict) and manifest.get("written_by") == _WRITTEN_BY
            and manifest.get("format") == _FORMAT and isinstance(manifest.get("files"), dict)):
        raise refuse(f"does not say written_by {_WRITTEN_BY!r}, format {_FORMAT}, with its files")
    for rel, facts in manifest["files"].items():
        if not (isinstance(facts, dict) and isinstance(facts.get("bytes"), int) and facts["bytes"] >= 0
                and isinstance(facts.get("sha256"), str) and _SHA256.match(facts["sha256"])):
            raise refuse(f"records {rel!r} without its size and SHA-256")
    return manifest


def _listing(folder: Path, rels: list[str]) -> str:
    shown = ", ".join(str(folder / r) for r in rels[:_SHOWN])
    return shown + (f" and {len(rels) - _SHOWN} more" if len(rels) > _SHOWN else "")


def _earlier_files(folder: Path, stem: str, entries: list[_Entry]) -> list[str]:
    """The files an earlier run recorded and that are still what it wrote; refuse when another file is in the way."""
    if not any(e.rel == MANIFEST for e in entries):
        if entries:
            raise RunFolderError(
                f"{folder} already holds files that no rerun wrote ({_listing(folder, [e.rel for e in entries])}). "
                f"A rerun writes only into a folder of its own: one that does not exist yet (it creates it), an "
                f"empty one, or one an earlier rerun made (it holds {MANIFEST}). Nothing was changed; choose "
                f"another folder with --out, e.g. {folder / stem}.")
        return []
    manifest = _read_manifest(folder)
    recorded = manifest["files"]
    earlier, strangers = [], []
    for e in entries:
        if e.rel == MANIFEST:
            continue
        facts = recorded.get(e.rel)
        if (e.kind == "file" and isinstance(facts, dict) and facts["bytes"] == e.size
                and _sha256(folder, e.rel) == facts["sha256"]):
            earlier.append(e.rel)
        elif e.kind == "folder" and e.rel.split("/", 1)[0] in RUN_FOLDERS:
            continue  # figures/, tables/ and the folders below them: removed below once empty
        elif _in_place(e.rel, stem):
            strangers.append(e.rel if e.kind == "file" else f"{e.rel} ({e.kind})")
    if strangers:
        unfinished = ("" if manifest.get("ended") else
                      f" The earlier run into this folder, started {manifest.get('started', '?')}, ended without "
                      f"recording its files (killed?), so these may be its own: remove them, or the folder, by hand "
                      f"if they are.")
        raise RunFolderError(
            f"{folder} is a rerun's folder, but {_listing(folder, strangers)} "
            f"{'is' if len(strangers) == 1 else 'are'} not what a rerun wrote there (added or changed since), and "
            f"this run would replace or mix with {'it' if len(strangers) == 1 else 'them'}. Nothing was changed; "
            f"move {'it' if len(strangers) == 1 else 'them'} elsewhere, or choose another folder with --out."
            + unfinished)
    return earlier


def _remove(folder: Path, earlier: list[str], entries: list[_Entry]) -> None:
    """Remove the earlier run's files, then the folders below ``figures/`` and ``tables/`` left empty."""
    for rel in earlier:
        (folder / rel).unlink(missing_ok=True)
    for e in sorted((e for e in entries if e.kind == "folder" and e.rel.split("/", 1)[0] in RUN_FOLDERS),
                    key=lambda e: -e.rel.count("/")):
        try:
            (folder / e.rel).rmdir()  # only when empty: anything left in it stays
        except OSError:
            pass


class RunFolder:
    """The folder of one run, claimed by :func:`claim`: locked, its earlier run's files removed.

    Attributes
    ----------
    path : pathlib.Path
    stem : str
        The notebook that runs (``06_evaluation``).
    started : str
        When the run claimed the folder (local time, ISO 8601).
    """

    def __init__(self, path: Path, stem: str):
        self.path, self.stem, self.started = path, stem, _now()

    def mark(self, state: str) -> None:
        """Write :data:`INCOMPLETE`: the run has not finished, and why (``state``)."""
        with atomic_path(self.path / INCOMPLETE) as tmp:
            tmp.write_text(f"This run has not finished: {state}\nIts files are partial; a rerun into this folder "
                           f"removes them first.\n", encoding="utf-8")

    def record(self, *, ended: bool) -> Path:
        """Write the manifest: every file in the run's places now, with its size and SHA-256.

        Parameters
        ----------
        ended : bool
            The run has ended (its files are final); ``False`` for a record made on the way.
        """
        files = {e.rel: {"bytes": e.size, "sha256": _sha256(self.path, e.rel)}
                 for e in _scan(self.path) if e.kind == "file" and _in_place(e.rel, self.stem)}
        manifest = {"written_by": _WRITTEN_BY, "format": _FORMAT, "notebook": self.stem, "started": self.started,
                    "ended": _now() if ended else None, "files": files}
        with atomic_path(self.path / MANIFEST) as tmp:
            tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        return self.path / MANIFEST


def _lock(folder: Path) -> int:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RunFolderError(f"another rerun is writing into {folder}: wait for it to end, or choose another folder "
                             f"with --out. Nothing was changed.") from None
    return fd


@contextmanager
def claim(folder: str | os.PathLike, stem: str) -> Iterator[RunFolder]:
    """The run's folder, for one run of the notebook ``stem``: created, or checked and cleared of the earlier run.

    Creates ``folder`` (and its parents) when it does not exist; takes an
    empty folder; in a folder an earlier rerun made, removes the files that
    run recorded, where they are still what it wrote.  Then writes a fresh
    manifest.  The folder stays locked against other reruns until the block
    ends; on the way out, however the block ends, the manifest records every
    file the run wrote (:meth:`RunFolder.record`).

    Raises
    ------
    RunFolderError
        Before anything is written or removed: ``folder`` is not a folder,
        holds files and no manifest, holds a file in the run's places that no
        rerun wrote or that changed since, or another rerun holds it (see the
        module's docstring).
    """
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise RunFolderError(f"{path} exists and is not a folder: choose a folder with --out (one that does not "
                             f"exist yet). Nothing was changed.")
    path.mkdir(parents=True, exist_ok=True)
    fd = _lock(path)
    try:
        entries = _scan(path)
        earlier = _earlier_files(path, stem, entries)
        run = RunFolder(path, stem)
        _remove(path, earlier, entries)
        run.record(ended=False)
        try:
            yield run
        finally:
            run.record(ended=True)
    finally:
        os.close(fd)  # releases the lock
