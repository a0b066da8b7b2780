"""Running a grid: :func:`run_grid` (joblib or a dask cluster, the results cache, progress) and single rows.

Runs go through :class:`joblib.Parallel` under the caller's
:func:`joblib.parallel_config`; with ``DASK_SCHEDULER_ADDRESS`` set, a
``dask.distributed.Client`` connects to that scheduler and the ``"dask"``
joblib backend is used.  :func:`rerun_row` recomputes a results row from its
``run_spec`` alone, :func:`row_dataset` regenerates the dataset it ran on.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import time
import warnings
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd
from tqdm import tqdm

from ..core.dataset import Dataset
from ..engines.cluster import scheduler_client
from ..paths import PROGRESS_ENV, atomic_path
from ..validation import check_int
from .cache import PointLocks, default_cache_dir, normalize, read_frame, write_frame
from .grid import Grid, Point, spawn_seeds
from .registry import resolve_dataset, resolve_protocol
from .specs import dumps, library_version
from .worker import DataRef, Run, execute, load, run_chunk

__all__ = ["run_grid", "rerun_row", "row_dataset", "resolve_n_jobs"]


@contextlib.contextmanager
def _backend():
    """The dask backend when DASK_SCHEDULER_ADDRESS names a scheduler, else the caller's config."""
    with scheduler_client() as client:
        if client is None:
            yield None
            return
        with joblib.parallel_config(backend="dask", client=client):
            yield client


def resolve_n_jobs(n_jobs=None) -> int:
    """The ``n_jobs`` :func:`run_grid` uses: ``n_jobs`` checked; None: the caller's :func:`joblib.parallel_config`
    ``n_jobs``, else -1 (all cores)."""
    if n_jobs is not None:
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs == 0:
            raise ValueError(f"n_jobs must be None or a non-zero integer (-1: all cores), got {n_jobs!r}")
        return int(n_jobs)
    _, configured = joblib.parallel.get_active_backend()
    return -1 if configured is None else configured


def _progress_bar(total: int, progress: bool):
    # disable=None: tqdm disables itself when stderr is not a terminal
    return tqdm(total=total, unit="run", desc="grid", disable=None if progress else True, leave=False)


_grid_calls = itertools.count(1)  # run_grid calls in this process: "grid 3" in a progress report


class _ProgressFile:
    """``{"grid": i, "done": d, "total": t}`` (runs) in ``$LDP_PROGRESS_FILE``, at most once a second.

    ``scripts/run_notebooks.py`` and ``python -m ldp rerun`` poll it to show a
    notebook's progress; writing is best effort and never fails a run.
    """

    def __init__(self, grid: int, total: int):
        path = os.environ.get(PROGRESS_ENV)
        self.path = Path(path) if path else None
        self.state = {"grid": grid, "done": 0, "total": total}
        self.written = 0.0
        self.write(force=True)

    def update(self, n: int) -> None:
        """``n`` more runs done."""
        self.state["done"] += n
        self.write(force=self.state["done"] >= self.state["total"])

    def write(self, force: bool = False) -> None:
        """Write the state, atomically, if a second has passed since the last write (or ``force``)."""
        if self.path is None or (not force and time.monotonic() - self.written < 1.0):
            return
        self.written = time.monotonic()
        with contextlib.suppress(OSError), atomic_path(self.path) as tmp:
            tmp.write_text(json.dumps(self.state))


def run_grid(grid: Grid, *, n_jobs: int | None = None, cache: bool | str = True,
             cache_dir: str | os.PathLike | None = None, progress: bool = True,
             chunk_size: int | None = None) -> pd.DataFrame:
    """Run every point of ``grid`` ``grid.repetitions`` times; one row per run.

    Parameters
    ----------
    grid : Grid
        What to run.
    n_jobs : int, optional
        Parallel workers for :class:`joblib.Parallel`.  None: the caller's
        :func:`joblib.parallel_config` ``n_jobs`` if set, else -1 (all local
        cores).  With ``DASK_SCHEDULER_ADDRESS`` set the dask cluster's workers
        are used.
    cache : bool or "refresh"
        True: reuse cached repetitions and store new ones; False: neither read
        nor write; ``"refresh"``: recompute everything and overwrite the cache.
    cache_dir : path, optional
        Cache folder (default :func:`default_cache_dir`: ``<repo root>/.cache/experiments``,
        or ``$LDP_CACHE_DIR/experiments``).
    progress : bool
        Show a tqdm progress bar (only when stderr is a terminal).  Apart from
        it, when ``$LDP_PROGRESS_FILE`` is set, the runs done so far are written
        to that file (JSON ``{"grid", "done", "total"}``; ``grid`` counts the
        calls of ``run_grid`` in this process) for the notebook runner.
    chunk_size : int, optional
        Runs per joblib task (default: about four tasks per worker; chunks
        never mix datasets).  Results do not depend on it.

    Returns
    -------
    pandas.DataFrame
        One row per run in canonical order: ``protocol``, ``dataset`` (labels),
        ``engine``, one column per protocol parameter (fixed and grid; lists as
        JSON strings), ``n``, ``m``, ``rep``, ``f1``, ``ncr``, ``var`` (mean
        squared count error over the identified true heavy hitters, NaN if
        none), ``n_found``, ``n_true``, ``f1_topk`` (F1 of the ``k`` best estimates released: in
        threshold mode a top-``k`` release of the same run; else equal to ``f1``), ``wall_time`` (seconds, construction
        plus run), [``found_ranks``], ``protocol_name``, ``dataset_name``,
        ``dataset_<kwarg>``, ``root_seed``, ``seed_key``, ``data_seed_key``
        (SeedSequence spawn keys), ``run_spec`` (JSON: see :func:`rerun_row`).

    Notes
    -----
    Cached rows keep the wall time of the run that produced them.
    """
    if not isinstance(grid, Grid):
        raise TypeError(f"grid must be a Grid, got {type(grid).__name__}")
    if cache not in (True, False, "refresh"):
        raise ValueError(f"cache must be True, False or 'refresh', got {cache!r}")
    if chunk_size is not None:
        chunk_size = check_int(chunk_size, "chunk_size", 1)
    n_jobs = resolve_n_jobs(n_jobs)
    grid_number = next(_grid_calls)
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    points = grid.points
    R = grid.repetitions
    # fast path: the whole frame of this very grid (one file instead of one per point)
    grid_file = folder / f"grid-{grid.frame_key()}.parquet"
    if cache is True:
        df = read_frame(grid_file, per_point=False)
        if df is not None and len(df) == grid.n_runs:
            return df

    # 1. what the cache already holds
    have: dict[int, pd.DataFrame] = {}

    def reps_missing(p: Point) -> list[int]:
        """Read the point's file into ``have``; the repetitions it still lacks."""
        cached = read_frame(folder / f"{p.key}.parquet") if cache is True else None
        if cached is not None:
            have[p.index] = cached
        done = set() if cached is None else set(int(r) for r in cached["rep"])
        return [r for r in range(R) if r not in done]

    missing = {p.index: reps for p in points if (reps := reps_missing(p))}
    # 2. compute what is missing; a point another process is computing (a chapter running beside this one) is
    # waited for and read from the cache, never computed twice
    locks = PointLocks(folder / "locks") if cache is True else None
    report = _ProgressFile(grid_number, sum(len(v) for v in missing.values())) if missing else None
    try:
        while missing:
            mine = {}
            for idx in list(missing):
                key = points[idx].key
                if locks is None:
                    mine[idx] = missing[idx]
                elif locks.try_acquire(key):  # taken: look again, the point may have been written since it was read
                    if reps := reps_missing(points[idx]):
                        mine[idx] = reps
                    else:
                        locks.release(key)
            if mine:
                _compute(grid, mine, have, folder, cache, n_jobs, chunk_size, progress, report, locks)
            elif locks is not None:  # every point left is another process's: wait for the first of them
                locks.wait(points[next(iter(missing))].key)
            missing = {idx: reps for idx in missing if idx not in mine and (reps := reps_missing(points[idx]))}
    finally:
        if locks is not None:
            locks.release_all()

    # 3. assemble in canonical order, labels from this grid
    frames = []
    for p in points:
        f = have[p.index]
        f = f[f["rep"] < R].copy()
        f["protocol"] = p.protocol.label
        f["dataset"] = p.dataset.label
        frames.append(f)
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
    df = normalize(_tidy(df, grid))
    if cache:
        write_frame(df, grid_file)
    return df


def _compute(grid: Grid, missing: dict[int, list[int]], have: dict[int, pd.DataFrame], folder: Path,
             cache: bool | str, n_jobs: int, chunk_size: int | None, progress: bool, report: _ProgressFile | None,
             locks: PointLocks | None) -> None:
    """Run ``missing`` (point index -> repetitions), grouped by the dataset they need; each point is merged with
    what ``have`` holds, written to the cache and its lock released as soon as its last run is in."""
    points = grid.points
    groups: dict = {}
    for idx, reps in missing.items():
        p = points[idx]
        where = f"{p.protocol.label} on {p.dataset.label} ({p.engine}, {p.kwargs})"
        for r in reps:
            run_seed, data_seed = spawn_seeds(grid.root_seed, p, r, grid.regenerate_data)
            ref = DataRef(p.dataset_name, p.loader, p.dataset_kwargs, data_seed)
            run = Run(idx, r, p.protocol_name, p.factory, p.kwargs, p.engine, run_seed, grid.rank_depth, where)
            groups.setdefault(ref.memo_key(), (ref, []))[1].append(run)
    total = sum(len(v) for v in missing.values())
    fresh: dict[int, dict[int, dict]] = {i: {} for i in missing}

    def finish(idx: int) -> None:
        p = points[idx]
        new = normalize(pd.DataFrame([_make_row(grid, p, r, res) for r, res in sorted(fresh[idx].items())]))
        old = have.get(idx)
        merged = new if old is None else normalize(pd.concat([old, new], ignore_index=True))
        merged = merged.sort_values("rep", kind="stable").reset_index(drop=True)
        if cache:
            write_frame(merged, folder / f"{p.key}.parquet")
        have[idx] = merged
        if locks is not None:
            locks.release(p.key)

    with _backend():
        n_eff = max(1, joblib.effective_n_jobs(n_jobs))
        size = chunk_size or max(1, math.ceil(total / (4 * n_eff)))
        tasks = [joblib.delayed(run_chunk)(ref, runs[i:i + size])
                 for ref, runs in groups.values() for i in range(0, len(runs), size)]
        try:
            parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        except ValueError:  # a backend without generator support
            parallel = joblib.Parallel(n_jobs=n_jobs)
        with _progress_bar(total, progress) as bar, warnings.catch_warnings():
            # loky's note when it replaces workers that idled past its timeout between grids: no run is lost
            warnings.filterwarnings("ignore", message="A worker stopped while some jobs were given to the executor",
                                    category=UserWarning)
            for out in parallel(tasks):
                for idx, rep, res in out:
                    fresh[idx][rep] = res
                    if len(fresh[idx]) == len(missing[idx]):
                        finish(idx)
                bar.update(len(out))
                if report is not None:
                    report.update(len(out))


def _tidy(df: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """Column order, and numeric parameter columns made numeric (None -> NaN)."""
    params: list[str] = []
    for p in grid.points:
        for k in p.kwargs:
            if k not in params:
                params.append(k)
    for c in params:
        if df[c].dtype == object:
            vals = df[c].dropna()
            if len(vals) and all(isinstance(v, Real) and not isinstance(v, (bool, np.bool_)) for v in vals):
                df[c] = pd.to_numeric(df[c].where(df[c].notna(), np.nan))
    head = ["protocol", "dataset", "engine", *params, "n", "m", "rep", "f1", "ncr", "var", "n_found",
            "n_true", "f1_topk", "wall_time"]
    head = [c for c in head if c in df.columns]
    rest = [c for c in df.columns if c not in head]
    return df[head + rest]


def _spec_of(row) -> dict:
    try:
        text = row["run_spec"]
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError("row must be a results row (a mapping or Series with a 'run_spec' column)") from exc
    return json.loads(text)


def _ref_of(spec: dict) -> DataRef:
    dname, loader = resolve_dataset(spec["dataset"])
    seed = spec["data_seed"]
    return DataRef(dname, loader, spec["dataset_kwargs"], None if seed is None else (seed[0], tuple(seed[1])))


def row_dataset(row) -> Dataset:
    """The exact dataset a results row was run on (regenerated from its seed).

    Parameters
    ----------
    row : pandas.Series or mapping
        A row of :func:`run_grid`'s frame.

    Returns
    -------
    Dataset
        What the dataset loader returned for that run.
    """
    return load(_ref_of(_spec_of(row))).ds


def rerun_row(row) -> pd.Series:
    """Recompute one results row from its ``run_spec`` alone.

    The dataset is regenerated from the row's data seed, the protocol is built
    with the recorded keywords and run with the recorded seed and engine; every
    column except ``wall_time`` equals the original.

    Parameters
    ----------
    row : pandas.Series or mapping
        A row of :func:`run_grid`'s frame (other columns are copied as they are).

    Returns
    -------
    pandas.Series
        The row with ``n``, ``m``, the metrics, ``wall_time`` and (if recorded)
        ``found_ranks`` recomputed.
    """
    spec = _spec_of(row)
    pname, factory = resolve_protocol(spec["protocol"])
    ref = _ref_of(spec)
    run = Run(-1, int(spec["rep"]), pname, factory, spec["kwargs"], spec["engine"],
              (spec["seed"][0], tuple(spec["seed"][1])), int(spec["rank_depth"]),
              f"{pname} on {ref.name} ({spec['engine']}, {spec['kwargs']})")
    res = execute(run, load(ref))
    out = pd.Series(row, dtype=object).copy() if not isinstance(row, pd.Series) else row.copy()
    for k, v in res.items():
        out[k] = v
    return out


def _seed_key(words: tuple) -> str:
    return ".".join(str(w) for w in words)


def _column_value(v):
    """Scalars as they are; lists and dicts as canonical JSON strings."""
    return dumps(v) if isinstance(v, (list, dict)) else v


def _make_row(grid: Grid, point: Point, rep: int, result: dict) -> dict:
    run_seed, data_seed = spawn_seeds(grid.root_seed, point, rep, grid.regenerate_data)
    spec = {
        "protocol": point.protocol_name, "kwargs": point.kwargs,
        "dataset": point.dataset_name, "dataset_kwargs": point.dataset_kwargs,
        "seed": [run_seed[0], list(run_seed[1])],
        "data_seed": None if data_seed is None else [data_seed[0], list(data_seed[1])],
        "engine": point.engine, "rank_depth": grid.rank_depth, "rep": rep,
        "version": library_version(),
    }
    row: dict[str, Any] = {"protocol": point.protocol.label, "dataset": point.dataset.label, "engine": point.engine}
    row.update({k: _column_value(v) for k, v in point.kwargs.items()})
    row.update({"n": result["n"], "m": result["m"], "rep": rep})
    row.update({k: result[k] for k in ("f1", "ncr", "var", "n_found", "n_true", "f1_topk", "wall_time")})
    if grid.rank_depth:
        row["found_ranks"] = result["found_ranks"]
    row["protocol_name"] = point.protocol_name
    row["dataset_name"] = point.dataset_name
    row.update({f"dataset_{k}": _column_value(v) for k, v in point.dataset_kwargs.items()})
    row["root_seed"] = grid.root_seed
    row["seed_key"] = _seed_key(run_seed[1])
    row["data_seed_key"] = None if data_seed is None else _seed_key(data_seed[1])
    row["run_spec"] = dumps(spec)
    return row


