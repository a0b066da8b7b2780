"""Where the claims read their numbers: the figure CSVs and a few named result tables.

A claim reads the CSV a chapter saved beside its figure (:func:`ldp.book.plotting.save_figure`), or an extra named
table the chapter saved with :meth:`ResultStore.save` (each declared beside the claims that read it, in the
``TABLES`` of their module; until a chapter saves one, the claims that need it are "not testable here"). One store
per build mode (:meth:`ResultStore.for_build`: ``_generated/cache/{quick,full}/``), one per rerun folder
(:meth:`ResultStore.for_rerun`), and inside a notebook the run in progress (:meth:`ResultStore.from_environment`,
from ``$LDP_FIGURE_DIR``).
"""
from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...paths import atomic_path, figures_dir, generated_dir

__all__ = ["ResultStore", "MissingResult", "MODES"]

#: build modes with a store each (``_generated/cache/<mode>``); reruns have mode "rerun"
MODES = ("full", "quick")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class MissingResult(LookupError):
    """A figure CSV or a result table the store does not hold."""


def _check_name(value: str, what: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value) or value.endswith((".csv", ".json")):
        raise ValueError(f"{what}={value!r} must be a plain name (letters, digits, '_', '.', '-'; no suffix), "
                         f"e.g. '06_evaluation' or 'fig-eval-vary-eps'")
    return value


class ResultStore:
    """The saved results of one build mode or one rerun.

    Parameters
    ----------
    root : path-like
        The store's folder.  Tables go to ``root/tables/<chapter>/``.
    figures : path-like, optional
        Where the figure CSVs are; default ``root/figures``.
    mode : str, optional
        ``"full"``, ``"quick"``, ``"rerun"`` or ``None`` (unknown).
    """

    def __init__(self, root: str | os.PathLike, *, figures: str | os.PathLike | None = None,
                 mode: str | None = None):
        self.root = Path(root).expanduser().resolve()
        self.figures = Path(figures).expanduser().resolve() if figures is not None else self.root / "figures"
        self.tables = self.root / "tables"
        if mode is not None and mode not in (*MODES, "rerun"):
            raise ValueError(f"mode={mode!r} must be one of {(*MODES, 'rerun')} or None")
        self.mode = mode

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r}, mode={self.mode!r})"

    # -- where ------------------------------------------------------------------
    @classmethod
    def for_build(cls, mode: str, generated: str | os.PathLike | None = None) -> ResultStore:
        """The store of a book build: ``<generated>/cache/<mode>`` (default :func:`ldp.paths.generated_dir`)."""
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} must be one of {MODES}")
        base = Path(generated) if generated is not None else generated_dir()
        return cls(base / "cache" / mode, mode=mode)

    @classmethod
    def for_rerun(cls, folder: str | os.PathLike) -> ResultStore:
        """The store of a rerun folder (``my-runs/NAME-HASH/``)."""
        folder = Path(folder)
        if not folder.is_dir():
            raise FileNotFoundError(f"folder={str(folder)!r} is not a folder (a rerun's my-runs/NAME-HASH/)")
        return cls(folder, mode="rerun")

    @classmethod
    def from_environment(cls) -> ResultStore:
        """The store of the run in progress: the parent of :func:`ldp.paths.figures_dir`.

        In a build the runner points ``$LDP_FIGURE_DIR`` at
        ``_generated/cache/<mode>/figures``, in a rerun at ``my-runs/NAME-HASH/figures``.
        """
        fig = figures_dir()
        root = fig.parent
        mode = root.name if root.name in MODES and root.parent.name == "cache" else None
        if mode is None and (root / "parameters.json").is_file():
            mode = "rerun"
        return cls(root, figures=fig, mode=mode)

    # -- tables -----------------------------------------------------------------
    def table_path(self, chapter: str, name: str) -> Path:
        """``<tables>/<chapter>/<name>.csv``."""
        return self.tables / _check_name(chapter, "chapter") / f"{_check_name(name, 'name')}.csv"

    def save(self, chapter: str, name: str, frame: pd.DataFrame, *,
             meta: Mapping[str, Any] | None = None) -> Path:
        """Write ``frame`` as ``<tables>/<chapter>/<name>.csv`` and its sidecar ``<name>.json``, atomically.

        Parameters
        ----------
        chapter : str
            The chapter (notebook name), e.g. ``"06_evaluation"``.
        name : str
            The table's name, e.g. ``"datasets"``.
        frame : pandas.DataFrame
            The table (its index is not written).
        meta : mapping, optional
            JSON-serialisable facts about the table (e.g. the parameters it
            was computed with); stored in the sidecar under ``"meta"``.

        Returns
        -------
        pathlib.Path
            The CSV's path.
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        path = self.table_path(chapter, name)
        sidecar = {"chapter": chapter, "name": name, "columns": [str(c) for c in frame.columns],
                   "rows": int(len(frame)), "written": time.strftime("%Y-%m-%dT%H:%M:%S"),
                   "meta": dict(meta or {})}
        try:  # fails before anything is written
            text = json.dumps(sidecar, indent=1, sort_keys=True, default=_json_default)
        except TypeError as exc:
            raise TypeError(f"meta must be JSON-serialisable (numbers, strings, lists, dicts): {exc}") from None
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)
        with atomic_path(path.with_suffix(".json")) as tmp:
            tmp.write_text(text + "\n", encoding="utf-8")
        return path

    def has(self, chapter: str, name: str) -> bool:
        """Whether the table exists."""
        return self.table_path(chapter, name).is_file()

    def load(self, chapter: str, name: str) -> pd.DataFrame:
        """The table ``<chapter>/<name>``; :class:`MissingResult` if it was not saved."""
        path = self.table_path(chapter, name)
        if not path.is_file():
            raise MissingResult(f"result table {chapter}/{name} is not in {self.tables}")
        return pd.read_csv(path)

    def meta(self, chapter: str, name: str) -> dict:
        """The sidecar of ``<chapter>/<name>`` (empty if there is none)."""
        path = self.table_path(chapter, name).with_suffix(".json")
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    # -- figures ----------------------------------------------------------------
    def figure_path(self, name: str) -> Path:
        """``<figures>/<name>.csv``."""
        return self.figures / f"{_check_name(name, 'name')}.csv"

    def has_figure(self, name: str) -> bool:
        """Whether the figure's CSV exists."""
        return self.figure_path(name).is_file()

    def figure(self, name: str) -> pd.DataFrame:
        """The tidy table of figure ``name``; :class:`MissingResult` if absent."""
        path = self.figure_path(name)
        if not path.is_file():
            raise MissingResult(f"figure data {name}.csv is not in {self.figures}")
        return pd.read_csv(path)

    # -- parameters -------------------------------------------------------------
    def parameters(self, chapter: str) -> dict | None:
        """The parameter values ``chapter`` ran with, or ``None`` if the store does not know them.

        Looked up in ``<tables>/<chapter>/parameters.json`` (written by
        :meth:`save_parameters`); then, in a rerun folder named
        ``<chapter>-HASH``, its ``parameters.json``; then, in a build's
        store, the runner's ``manifest.json``: every value the chapter ran
        with (its defaults, quick values in quick mode, and what papermill was
        given), which :mod:`ldp.book.rerun.build` records there.
        """
        own = self.tables / _check_name(chapter, "chapter") / "parameters.json"
        if own.is_file():
            return json.loads(own.read_text(encoding="utf-8"))
        run = self.root / "parameters.json"
        if run.is_file() and self.root.name.rsplit("-", 1)[0] == chapter:
            return json.loads(run.read_text(encoding="utf-8"))
        manifest = self.root / "manifest.json"
        if manifest.is_file():
            entry = json.loads(manifest.read_text(encoding="utf-8")).get(chapter)
            if entry is not None:
                # every value the chapter ran with (ldp.book.rerun.build writes them), else what papermill was given
                return dict(entry.get("values") or entry.get("params") or {})
        return None

    def save_parameters(self, chapter: str, values: Mapping[str, Any]) -> Path:
        """Record the parameter values ``chapter`` ran with (``<tables>/<chapter>/parameters.json``)."""
        path = self.tables / _check_name(chapter, "chapter") / "parameters.json"
        text = json.dumps(dict(values), indent=1, sort_keys=True, default=_json_default)
        with atomic_path(path) as tmp:
            tmp.write_text(text + "\n", encoding="utf-8")
        return path


def _json_default(obj):
    """numpy scalars and arrays, and paths, in JSON; anything else is an error."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON-serialisable")
