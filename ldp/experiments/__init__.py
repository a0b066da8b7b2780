"""Experiment grids: run protocol x dataset x parameter grids, cache and summarise them.

The paper's figures (sections 5 and 6) are all grids: a set of protocols,
a set of datasets, axes such as ``epsilon``, ``k``, ``eta`` or ``threshold``,
and a number of repetitions ("each experiment is run 10 times, and the average
and standard deviation are reported", section 6.1; "all experiment runs 100
times", section 5).  This package declares such a grid, runs it in parallel
with :mod:`joblib` (local processes, or a ``dask.distributed`` cluster),
caches the results on disk and returns a tidy :class:`pandas.DataFrame` with
one row per run.

Example
-------
>>> grid = Grid(protocols=["PEM", ("MCM", {"final_fraction": 0.1}), "SPM"],
...             datasets=[("exponential", {"n": 10**6})],
...             params={"epsilon": [1, 2, 4], "k": [16]},
...             repetitions=10, engine="counts")
>>> df = run_grid(grid)                                  # doctest: +SKIP
>>> summarize(df, by=["protocol", "epsilon"])           # doctest: +SKIP

Modules
-------
:mod:`~ldp.experiments.registry` (protocol and dataset names),
:mod:`~ldp.experiments.specs` (specs, canonical JSON),
:mod:`~ldp.experiments.grid` (:class:`Grid`, points, seeds),
:mod:`~ldp.experiments.worker` (what a worker loads and runs),
:mod:`~ldp.experiments.run` (:func:`run_grid`, backends, progress, single rows),
:mod:`~ldp.experiments.cache` (the results cache),
:mod:`~ldp.experiments.summary` (:func:`summarize`, :func:`identification_rates`, the
section 5 and 6 tables), and the chapters' own simulations and timings:
:mod:`~ldp.book.chapters.c01_frequency_oracles.compute` (the oracles against their formulas),
:mod:`~ldp.experiments.configurations` (what each protocol chooses; demonstration runs),
:mod:`~ldp.book.chapters.c04_count_engine.compute` (the count-level engine against the protocol engine),
:mod:`~ldp.book.chapters.c06_evaluation.compute` (Figures 5 and 6's anomalies on the exact counts) and
:mod:`~ldp.book.chapters.c08_after_pem.compute` (bits, server time and memory of each protocol).

Design
------
* **Points and runs.**  A *point* is one protocol spec with one combination of
  the parameter axes, on one dataset spec, with one engine; a *run* is one
  repetition of a point.  Points are enumerated in the grid's canonical order
  (dataset, protocol, parameter combination in axis order, engine) and rows are
  returned in that order, repetitions innermost.
* **Seeds.**  Every run's randomness is ``np.random.SeedSequence(root_seed,
  spawn_key=(1, h0, h1, h2, h3, rep))`` -- a child of the root sequence, exactly
  as :meth:`~numpy.random.SeedSequence.spawn` builds children, but whose spawn
  key is addressed by the *content* of the point (``h0..h3``: 128 bits of a
  SHA-256 of its canonical parameters) rather than by its position in the grid.
  Results therefore depend neither on the number of workers nor on chunking,
  nor on the order in which protocols, datasets or parameter levels are listed,
  and extending a grid leaves its existing rows unchanged (which is what lets
  the cache work point by point).  Random datasets are generated with
  ``SeedSequence(root_seed, spawn_key=(0, d0, d1, d2, d3[, rep]))`` from the
  dataset spec alone, so every protocol and parameter level of a repetition
  sees the same data (common random numbers).
* **Datasets.**  The paper generates its synthetic datasets once and runs each
  protocol 10 times on them (section 6.1, "We generate a synthetic dataset of
  n=1000000 data points ... Each experiment is run 10 times"), so by default a
  random dataset is generated once per dataset spec and shared by all
  repetitions (``regenerate_data=False``); ``regenerate_data=True`` draws a
  fresh dataset for every repetition, which averages over the data as well.
  Datasets are loaded in the worker that needs them and memoised per process;
  runs are grouped by dataset and sent in chunks, so a worker loads a dataset
  once per chunk at most (usually once).
* **Reproducing a row.**  Each row carries ``run_spec``, a JSON record of
  everything the run used (registered names, keyword arguments, both seeds,
  engine); :func:`rerun_row` recomputes the row from it alone.
* **Backends.**  Runs go through :class:`joblib.Parallel` under the caller's
  :func:`joblib.parallel_config`.  With ``DASK_SCHEDULER_ADDRESS`` set in the
  environment, a ``dask.distributed.Client`` connects to that existing
  scheduler and the ``"dask"`` joblib backend is used.
* **Cache.**  One parquet file per point, named by a hash of the point's
  canonical parameters, the root seed and the library version with the digest
  of its sources (:func:`ldp.paths.source_digest`), holding all the
  repetitions computed so far; more repetitions or more points reuse what is
  there.  The assembled frame of a grid is also stored whole
  (``grid-<key>.parquet``), so re-rendering a page reads one file.  Files are
  written atomically and synced (:func:`ldp.paths.atomic_path`), each point as
  soon as it is complete, so an interrupted grid keeps its finished points and
  never leaves a partial file.  Cached rows keep the wall time of the run that
  made them.  Clear the cache by deleting the folder (:func:`default_cache_dir`).
* **Wall time** is construction plus ``run``; the first run in a fresh worker
  process includes numba's compilation.

References
----------
.. [1] T. Wang, N. Li and S. Jha, "Locally Differentially Private Heavy
   Hitter Identification", IEEE TDSC 18, 2021 (arXiv:1708.06674), sections 5 and 6.
"""
from ..paths import PROGRESS_ENV
from .cache import default_cache_dir
from .grid import Grid
from .registry import register_dataset, register_protocol
from .run import rerun_row, row_dataset, run_grid
from .specs import ENGINES, METRICS, DatasetSpec, ProtocolSpec
from .summary import identification_rates, summarize

__all__ = [
    "ENGINES",
    "METRICS",
    "PROGRESS_ENV",
    "ProtocolSpec",
    "DatasetSpec",
    "Grid",
    "run_grid",
    "rerun_row",
    "row_dataset",
    "summarize",
    "identification_rates",
    "register_protocol",
    "register_dataset",
    "default_cache_dir",
]
