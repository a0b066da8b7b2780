"""Experiment grids: run protocol x dataset x parameter grids, cache and summarise them.

The paper's figures (sections 5 and 6) are all grids: a set of protocols,
a set of datasets, axes such as ``epsilon``, ``k``, ``eta`` or ``threshold``,
and a number of repetitions ("each experiment is run 10 times, and the average
and standard deviation are reported", section 6.1; "all experiment runs 100
times", section 5).  This module declares such a grid, runs it in parallel
with :mod:`joblib` (local processes, or a :mod:`dask.distributed` cluster),
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
  environment, a :class:`dask.distributed.Client` connects to that existing
  scheduler and the ``"dask"`` joblib backend is used.
* **Cache.**  One parquet file per point, named by a hash of the point's
  canonical parameters, the root seed and ``ldp.__version__``, holding all the
  repetitions computed so far; more repetitions or more points reuse what is
  there.  The assembled frame of a grid is also stored whole
  (``grid-<key>.parquet``), so re-rendering a page reads one file.  Files are
  written atomically (temporary file in the same folder, ``fsync``,
  :func:`os.replace`), each point as soon as it is complete, so an interrupted
  grid keeps its finished points and never leaves a partial file.  Cached rows
  keep the wall time of the run that made them.  Clear the cache by deleting
  the folder (:func:`default_cache_dir`).
* **Wall time** is construction plus ``run``; the first run in a fresh worker
  process includes numba's compilation.

References
----------
.. [1] T. Wang, N. Li and S. Jha, "Locally Differentially Private Heavy
   Hitter Identification", IEEE TDSC, 2019, sections 5 and 6.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import itertools
import json
import math
import os
import sys
import tempfile
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from importlib import import_module
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import joblib
import numpy as np
import pandas as pd

from .paths import atomic_path
from .validation import check_epsilon, check_int

__all__ = [
    "ENGINES",
    "METRICS",
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

#: engines a protocol's ``run`` accepts
ENGINES = ("protocol", "counts")
#: per-run metric columns
METRICS = ("f1", "ncr", "var", "n_found")
#: bump when the row layout changes (part of every cache key)
CACHE_FORMAT = 1

# ---------------------------------------------------------------------------
# registries: protocol and dataset names -> callables
# ---------------------------------------------------------------------------
_PROTOCOLS: dict[str, Callable | str] = {
    "PEM": "ldp.protocols:PEM",
    "SPM": "ldp.protocols:SPM",
    "MCM": "ldp.protocols:MCM",
    "Strawman": "ldp.protocols:Strawman",
    "TreeHist": "ldp.protocols:TreeHist",
    "SFP": "ldp.protocols:SFP",
}
_DATASETS: dict[str, Callable | str] = {
    "zipf": "ldp.datasets:zipf",
    "exponential": "ldp.datasets:exponential",
    "aol": "ldp.datasets:aol",
    "url": "ldp.datasets:url",
}


def _register(registry: dict, kind: str, name: str, obj, replace: bool) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"{kind} name must be a non-empty string, got {name!r}")
    if not callable(obj):
        raise TypeError(f"{kind} {name!r} must be callable, got {obj!r}")
    clash = [k for k in registry if k.lower() == name.lower()]
    if clash and not replace:
        raise ValueError(f"{kind} {clash[0]!r} is already registered; pass replace=True to replace it")
    for k in clash:
        del registry[k]
    registry[name] = obj


def register_protocol(name: str, factory: Callable, *, replace: bool = False) -> None:
    """Make a protocol available to grids under ``name``.

    Parameters
    ----------
    name : str
        Name used in protocol specs (matched case-insensitively).
    factory : callable
        Called as ``factory(m=dataset.m, **kwargs)``; returns an object whose
        ``run(values, *, rng, engine)`` returns a result with ``heavy_hitters``
        (ranked canonical values) and ``estimates`` (their estimated counts).
    replace : bool
        Allow replacing an existing registration.
    """
    _register(_PROTOCOLS, "protocol", name, factory, replace)


def register_dataset(name: str, loader: Callable, *, replace: bool = False) -> None:
    """Make a dataset loader available to grids under ``name``.

    Parameters
    ----------
    name : str
        Name used in dataset specs (matched case-insensitively).
    loader : callable
        Called as ``loader(**kwargs)`` (plus ``rng=`` when it has an ``rng``
        parameter, i.e. is random); returns a :class:`ldp.datasets.Dataset`-like
        object with ``values``, ``m``, ``n``, ``top(k)`` and ``count_of(values)``.
    replace : bool
        Allow replacing an existing registration.
    """
    _register(_DATASETS, "dataset", name, loader, replace)


def _resolve(registry: dict, kind: str, name) -> tuple[str, Callable]:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name must be a string, got {name!r}")
    match = [k for k in registry if k.lower() == name.lower()]
    if not match:
        raise ValueError(f"unknown {kind} {name!r}; known {kind}s: {', '.join(sorted(registry))} "
                         f"(add others with register_{kind})")
    key = match[0]
    target = registry[key]
    if isinstance(target, str):
        mod, attr = target.split(":")
        try:
            target = getattr(import_module(mod), attr)
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"{kind} {key!r} needs {mod}.{attr}, which could not be imported: {exc}") from exc
    return key, target


# ---------------------------------------------------------------------------
# canonical JSON (hashing and run records)
# ---------------------------------------------------------------------------
def _jsonable(x, where: str, canonical: bool):
    """Plain JSON data for ``x``; with ``canonical``, integral floats become ints (1.0 == 1)."""
    if x is None or isinstance(x, (bool, np.bool_, str)):
        return bool(x) if isinstance(x, np.bool_) else x
    if isinstance(x, Integral):
        return int(x)
    if isinstance(x, Real):
        v = float(x)
        if canonical and math.isfinite(v) and v.is_integer():
            return int(v)
        return v
    if isinstance(x, Path):
        return str(x)
    if isinstance(x, Mapping):
        out = {}
        for k, v in x.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: mapping keys must be strings, got {k!r}")
            out[k] = _jsonable(v, f"{where}[{k!r}]", canonical)
        return dict(sorted(out.items())) if canonical else out
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_jsonable(v, f"{where}[{i}]", canonical) for i, v in enumerate(x)]
    raise TypeError(f"{where} must be a number, string, boolean, None, or a list/dict of them "
                    f"(so that runs can be hashed, cached and reproduced), got {type(x).__name__} {x!r}")


def _dumps(x) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def _digest(obj) -> bytes:
    return hashlib.sha256(_dumps(obj).encode()).digest()


def _words(obj) -> tuple[int, ...]:
    """128 bits of a content hash as four uint32 words (a SeedSequence spawn key)."""
    d = _digest(obj)
    return tuple(int.from_bytes(d[i:i + 4], "big") for i in range(0, 16, 4))


@functools.lru_cache(maxsize=1)
def _source_digest() -> str:
    """A hash of the library's own source files (every ``ldp/**/*.py``).

    Part of the cache key, so a change to a protocol, an engine or a data set
    invalidates cached results even when ``ldp.__version__`` is not bumped.
    """
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def _library_version() -> str:
    """``ldp.__version__`` (falling back to the installed distribution's version) plus the source digest."""
    version = getattr(sys.modules.get("ldp") or import_module("ldp"), "__version__", None)
    if version is None:
        from importlib.metadata import PackageNotFoundError, version as dist_version

        try:
            version = dist_version("ldp")
        except PackageNotFoundError:
            version = "unknown"
    return f"{version}+src.{_source_digest()}"


# ---------------------------------------------------------------------------
# specs
# ---------------------------------------------------------------------------
def _default_label(name: str, kwargs: Mapping) -> str:
    if not kwargs:
        return name
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"


@dataclass(frozen=True)
class ProtocolSpec:
    """A protocol by registered name, with fixed keyword arguments and a label.

    Parameters
    ----------
    name : str
        Registered protocol name (``"PEM"``, ``"SPM"``, ``"MCM"``, ``"Strawman"``
        or one added with :func:`register_protocol`).
    kwargs : mapping
        Fixed constructor keywords, e.g. ``{"final_fraction": 0.1}``.
    label : str, optional
        Name in the results' ``protocol`` column (default: name plus kwargs,
        e.g. ``"MCM(final_fraction=0.1)"``).
    """

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None

    def __post_init__(self):
        if not isinstance(self.kwargs, Mapping):
            raise TypeError(f"protocol {self.name!r}: kwargs must be a mapping, got {self.kwargs!r}")
        object.__setattr__(self, "kwargs", dict(self.kwargs))
        if self.label is None:
            object.__setattr__(self, "label", _default_label(str(self.name), self.kwargs))
        elif not isinstance(self.label, str) or not self.label:
            raise TypeError(f"protocol {self.name!r}: label must be a non-empty string, got {self.label!r}")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset by registered loader name, with loader keyword arguments and a label.

    Parameters
    ----------
    name : str
        Registered loader name (``"zipf"``, ``"exponential"``, ``"aol"``,
        ``"url"`` or one added with :func:`register_dataset`).
    kwargs : mapping
        Loader keywords, e.g. ``{"n": 10**5, "m": 16, "drop_top": 20}``;
        never ``rng`` (seeds are derived from the grid's root seed).
    label : str, optional
        Name in the results' ``dataset`` column (default: name plus kwargs).
    """

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None

    def __post_init__(self):
        if not isinstance(self.kwargs, Mapping):
            raise TypeError(f"dataset {self.name!r}: kwargs must be a mapping, got {self.kwargs!r}")
        object.__setattr__(self, "kwargs", dict(self.kwargs))
        if self.label is None:
            object.__setattr__(self, "label", _default_label(str(self.name), self.kwargs))
        elif not isinstance(self.label, str) or not self.label:
            raise TypeError(f"dataset {self.name!r}: label must be a non-empty string, got {self.label!r}")


def _coerce_spec(item, cls, kind: str):
    if isinstance(item, cls):
        return item
    if isinstance(item, str):
        return cls(item)
    if isinstance(item, tuple) and 1 <= len(item) <= 3:
        return cls(*item)
    raise TypeError(f"a {kind} spec must be a name, a tuple (name, kwargs[, label]) or a {cls.__name__}, "
                    f"got {item!r}")


def _spec_list(items, cls, kind: str) -> list:
    """A list of specs; a single spec (name, tuple (name, kwargs[, label]) or object) is a list of one."""
    single = isinstance(items, (str, cls)) or (isinstance(items, tuple) and len(items) >= 2
                                                and isinstance(items[0], str) and isinstance(items[1], Mapping))
    if single:
        return [items]
    if isinstance(items, (Mapping, bytes)) or not isinstance(items, Iterable):
        raise TypeError(f"{kind} must be a non-empty list of specs, got {items!r}")
    items = list(items)
    if not items:
        raise ValueError(f"{kind} must be a non-empty list of specs, got an empty list")
    return items


def _signature(obj) -> tuple[dict[str, inspect.Parameter], bool]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return {}, True
    params = {n: p for n, p in sig.parameters.items()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    return params, var_kw


# columns the runner itself writes; parameters may not use these names
_RESERVED = {"protocol", "dataset", "engine", "n", "m", "rep", "f1", "ncr", "var", "n_found", "n_true",
             "wall_time", "found_ranks", "protocol_name", "dataset_name", "root_seed", "seed_key",
             "data_seed_key", "run_spec", "rng", "values"}


@dataclass(frozen=True)
class _Point:
    index: int
    protocol: ProtocolSpec
    protocol_name: str       # canonical registered name
    factory: Callable
    kwargs: dict             # effective constructor keywords (fixed + grid), JSON round-tripped
    dataset: DatasetSpec
    dataset_name: str
    loader: Callable
    dataset_kwargs: dict     # JSON round-tripped
    random_data: bool
    engine: str
    seed_words: tuple
    data_words: tuple
    key: str                 # cache key (includes version, root seed, format)


class Grid:
    """A declarative experiment grid.

    Parameters
    ----------
    protocols : sequence
        Protocol specs: a registered name (``"PEM"``), a tuple ``(name,
        kwargs)`` or ``(name, kwargs, label)``, or a :class:`ProtocolSpec`.
        Fixed kwargs let one list e.g. ``("PEM", {"eta": 4})`` and
        ``("PEM", {"eta": 8})`` side by side.
    datasets : sequence
        Dataset specs in the same forms: ``"aol"``, ``("zipf", {"n": 10**5,
        "m": 16})``, :class:`DatasetSpec`.  The protocols' ``m`` is the
        dataset's ``m``.
    params : mapping of str to sequence, optional
        Parameter axes given to every protocol's constructor, e.g.
        ``{"epsilon": [1, 2, 4], "k": [16]}``.  A list, tuple or array holds
        the levels; any other value (a number, string, None) is one level.  A
        parameter must not also be fixed in a protocol spec's kwargs.
    repetitions : int
        Runs per point (paper: 10 in section 6, 100 in section 5).
    engine : str or sequence of str
        ``"counts"`` (count-level simulation, default) or ``"protocol"`` (every
        user's report); a sequence makes the engine an axis.
    root_seed : int
        Entropy of the root :class:`numpy.random.SeedSequence`.
    regenerate_data : bool
        False (default, the paper's reading): a random dataset is generated once
        per dataset spec; True: once per dataset spec and repetition.
    rank_depth : int
        If > 0, each row records in ``found_ranks`` which of the dataset's top
        ``rank_depth`` values the run identified (for identification
        probabilities by frequency, section 5.1); see
        :func:`identification_rates`.

    Raises
    ------
    ValueError, TypeError
        Unknown protocol, dataset or parameter names, parameters a protocol or
        loader does not accept, missing required parameters, bad levels,
        duplicate labels or points -- all before anything runs.
    """

    def __init__(self, protocols: Sequence, datasets: Sequence, params: Mapping[str, Any] | None = None, *,
                 repetitions: int = 10, engine: str | Sequence[str] = "counts", root_seed: int = 0,
                 regenerate_data: bool = False, rank_depth: int = 0):
        protocols = _spec_list(protocols, ProtocolSpec, "protocols")
        datasets = _spec_list(datasets, DatasetSpec, "datasets")
        self.protocols = tuple(_coerce_spec(p, ProtocolSpec, "protocol") for p in protocols)
        self.datasets = tuple(_coerce_spec(d, DatasetSpec, "dataset") for d in datasets)
        self.repetitions = check_int(repetitions, "repetitions", 1)
        self.root_seed = check_int(root_seed, "root_seed", 0)
        if not isinstance(regenerate_data, (bool, np.bool_)):
            raise TypeError(f"regenerate_data must be True or False, got {regenerate_data!r}")
        self.regenerate_data = bool(regenerate_data)
        self.rank_depth = check_int(rank_depth, "rank_depth", 0)
        engines = [engine] if isinstance(engine, str) else list(engine)
        if not engines:
            raise ValueError(f"engine must be one of {ENGINES} or a non-empty list of them")
        for e in engines:
            if e not in ENGINES:
                raise ValueError(f"engine must be one of {ENGINES}, got {e!r}")
        if len(set(engines)) != len(engines):
            raise ValueError(f"engine lists a value twice: {engines}")
        self.engines = tuple(engines)

        params = {} if params is None else params
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping of parameter name -> levels, got {params!r}")
        axes: dict[str, tuple] = {}
        for name, levels in params.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"parameter names must be identifiers, got {name!r}")
            if name == "m":
                raise ValueError("parameter 'm' is not a grid axis: the protocols use the dataset's m "
                                 "(vary it through the dataset specs)")
            if name in _RESERVED:
                raise ValueError(f"parameter name {name!r} is reserved for a results column")
            lv = tuple(levels) if isinstance(levels, (list, tuple, np.ndarray)) else (levels,)
            if not lv:
                raise ValueError(f"parameter {name!r} has no levels")
            for v in lv:
                _jsonable(v, f"parameter {name!r} level", canonical=True)
                if name == "epsilon":
                    check_epsilon(v)
                elif name == "k":
                    check_int(v, "k", 1)
            if len({_dumps(_jsonable(v, name, True)) for v in lv}) != len(lv):
                raise ValueError(f"parameter {name!r} lists a level twice: {list(lv)}")
            axes[name] = lv
        self.params = axes
        self._points = self._build_points(_library_version())

    # -- construction ------------------------------------------------------
    def _build_points(self, version: str) -> list[_Point]:
        labels = [p.label for p in self.protocols]
        for lab in set(labels):
            if labels.count(lab) > 1:
                raise ValueError(f"protocol label {lab!r} is used twice; give the specs distinct labels")
        labels = [d.label for d in self.datasets]
        for lab in set(labels):
            if labels.count(lab) > 1:
                raise ValueError(f"dataset label {lab!r} is used twice; give the specs distinct labels")

        protos = []
        for spec in self.protocols:
            name, factory = _resolve(_PROTOCOLS, "protocol", spec.name)
            accepted, var_kw = _signature(factory)
            if "m" not in accepted and not var_kw:
                raise TypeError(f"protocol {spec.label!r}: its constructor takes no 'm' parameter")
            if "m" in spec.kwargs:
                raise ValueError(f"protocol {spec.label!r}: 'm' must not be given, it is the dataset's m")
            for k in spec.kwargs:
                if k in self.params:
                    raise ValueError(f"parameter {k!r} is fixed in protocol {spec.label!r} and is also a grid "
                                     "axis; give it in one place only")
                if k in _RESERVED:
                    raise ValueError(f"protocol {spec.label!r}: parameter name {k!r} is reserved")
            for k in [*spec.kwargs, *self.params]:
                if not var_kw and k not in accepted:
                    raise ValueError(f"parameter {k!r} is not accepted by protocol {spec.label!r} ({name}); "
                                     f"it accepts: {', '.join(a for a in accepted if a != 'm')}")
            for a, p in accepted.items():
                if a != "m" and p.default is p.empty and a not in spec.kwargs and a not in self.params:
                    raise ValueError(f"protocol {spec.label!r} needs parameter {a!r}: give it in params "
                                     "or in the protocol spec's kwargs")
            fixed = _jsonable(spec.kwargs, f"protocol {spec.label!r} kwargs", canonical=False)
            for k, v in fixed.items():
                if k == "epsilon":
                    check_epsilon(v)
                elif k == "k":
                    check_int(v, "k", 1)
            protos.append((spec, name, factory, fixed))

        datas = []
        for spec in self.datasets:
            name, loader = _resolve(_DATASETS, "dataset", spec.name)
            accepted, var_kw = _signature(loader)
            if "rng" in spec.kwargs:
                raise ValueError(f"dataset {spec.label!r}: 'rng' must not be given; random datasets are "
                                 "seeded from the grid's root_seed")
            for k in spec.kwargs:
                if not var_kw and k not in accepted:
                    raise ValueError(f"parameter {k!r} is not accepted by dataset loader {name!r}; "
                                     f"it accepts: {', '.join(a for a in accepted if a != 'rng')}")
            kw = _jsonable(spec.kwargs, f"dataset {spec.label!r} kwargs", canonical=False)
            datas.append((spec, name, loader, kw, "rng" in accepted))

        points = []
        seen: dict[str, str] = {}
        names = list(self.params)
        for dspec, dname, loader, dkw, random_data in datas:
            dcontent = {"dataset": dname, "kwargs": _jsonable(dkw, "", True)}
            for pspec, pname, factory, fixed in protos:
                for combo in itertools.product(*(self.params[n] for n in names)):
                    kw = dict(fixed)
                    kw.update({n: _jsonable(v, n, canonical=False) for n, v in zip(names, combo)})
                    for engine in self.engines:
                        content = {"protocol": pname, "kwargs": _jsonable(kw, "", True), **{
                            "data": dcontent, "engine": engine, "regenerate_data": self.regenerate_data}}
                        ckey = _dumps(content)
                        if ckey in seen:
                            raise ValueError(f"the grid holds the same point twice ({pspec.label} on "
                                             f"{dspec.label}, {kw}) -- also listed as {seen[ckey]}")
                        seen[ckey] = f"{pspec.label} on {dspec.label}"
                        key = hashlib.sha256(_dumps({
                            "point": content, "root_seed": self.root_seed, "rank_depth": self.rank_depth,
                            "version": version, "format": CACHE_FORMAT}).encode()).hexdigest()[:32]
                        points.append(_Point(
                            index=len(points), protocol=pspec, protocol_name=pname, factory=factory,
                            kwargs=json.loads(_dumps(kw)), dataset=dspec, dataset_name=dname, loader=loader,
                            dataset_kwargs=json.loads(_dumps(dkw)), random_data=random_data, engine=engine,
                            seed_words=_words(content), data_words=_words(dcontent), key=key))
        return points

    # -- introspection -----------------------------------------------------
    @property
    def n_points(self) -> int:
        """Number of points (protocol x dataset x parameter combination x engine)."""
        return len(self._points)

    @property
    def n_runs(self) -> int:
        """Number of runs (points x repetitions)."""
        return len(self._points) * self.repetitions

    def point_keys(self, version: str | None = None) -> list[str]:
        """Cache keys of the points, in canonical order.

        Parameters
        ----------
        version : str, optional
            Library version to key on (default: the current ``ldp.__version__``).
        """
        pts = self._points if version is None or version == _library_version() else self._build_points(version)
        return [p.key for p in pts]

    @property
    def key(self) -> str:
        """A hash of the whole grid (points, repetitions, root seed, library version)."""
        return hashlib.sha256(_dumps({"points": self.point_keys(), "repetitions": self.repetitions})
                              .encode()).hexdigest()[:32]

    def _frame_key(self) -> str:
        """Key of the whole result frame: the grid's key plus the labels (which are not in the point keys)."""
        return hashlib.sha256(_dumps({"grid": self.key, "protocols": [p.label for p in self.protocols],
                                      "datasets": [d.label for d in self.datasets]}).encode()).hexdigest()[:32]

    def run(self, **kwargs) -> pd.DataFrame:
        """Shorthand for :func:`run_grid` ``(self, **kwargs)``."""
        return run_grid(self, **kwargs)

    def __repr__(self) -> str:
        return (f"Grid({self.n_points} points x {self.repetitions} repetitions: protocols="
                f"{[p.label for p in self.protocols]}, datasets={[d.label for d in self.datasets]}, "
                f"params={ {k: list(v) for k, v in self.params.items()} }, engine={list(self.engines)}, "
                f"root_seed={self.root_seed})")


# ---------------------------------------------------------------------------
# what a worker receives and runs
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _DataRef:
    name: str
    loader: Callable
    kwargs: dict
    seed: tuple | None  # (entropy, spawn_key) or None for a deterministic loader

    def memo_key(self):
        return (self.name, getattr(self.loader, "__module__", None), getattr(self.loader, "__qualname__", None),
                _dumps(self.kwargs), self.seed)


@dataclass(frozen=True)
class _Run:
    point: int
    rep: int
    protocol_name: str
    factory: Callable
    kwargs: dict
    engine: str
    seed: tuple  # (entropy, spawn_key)
    rank_depth: int
    where: str   # human-readable description for error notes


class _Loaded:
    """A loaded dataset and its memoised ground truth."""

    def __init__(self, ds):
        self.ds = ds
        self._truth: dict = {}
        self._lock = threading.Lock()

    def truth(self, k: int, threshold) -> np.ndarray:
        """True heavy hitters, ranked: the top k, or every value with frequency >= threshold."""
        key = (k, threshold)
        with self._lock:
            if key not in self._truth:
                self._truth[key] = _true_set(self.ds, k, threshold)
            return self._truth[key]


def _true_set(ds, k: int, threshold) -> np.ndarray:
    """The true heavy hitters, ranked: the top k, or (threshold version, section 6.2.3) every
    value whose frequency is at least ``threshold``."""
    if threshold is None:
        return ds.top(k)
    if hasattr(ds, "above"):
        return ds.above(threshold)
    cut = float(threshold) * ds.n
    K = max(int(k), 16)
    while True:
        top = ds.top(min(K, ds.n_distinct))
        counts = np.asarray(ds.count_of(top))
        if len(top) < K or counts[-1] < cut:
            return top[counts >= cut]
        K *= 2


_MEMO: OrderedDict = OrderedDict()
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 2


def _load(ref: _DataRef) -> _Loaded:
    """Load (or generate) a dataset, memoised per process (a small LRU)."""
    key = ref.memo_key()
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    kw = dict(ref.kwargs)
    if ref.seed is not None:
        kw["rng"] = np.random.default_rng(np.random.SeedSequence(ref.seed[0], spawn_key=ref.seed[1]))
    loaded = _Loaded(ref.loader(**kw))
    with _MEMO_LOCK:
        _MEMO[key] = loaded
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return loaded


def _row_keys(values: np.ndarray) -> list:
    arr = np.asarray(values)
    if arr.ndim == 1:
        return [int(v) for v in arr]
    return [row.tobytes() for row in np.ascontiguousarray(arr)]


def _execute(run: _Run, loaded: _Loaded) -> dict:
    """One run: construct the protocol, run it, score it."""
    from . import metrics

    ds = loaded.ds
    try:
        t0 = time.perf_counter()
        proto = run.factory(m=ds.m, **run.kwargs)
        rng = np.random.default_rng(np.random.SeedSequence(run.seed[0], spawn_key=run.seed[1]))
        res = proto.run(ds, rng=rng, engine=run.engine)  # a Dataset: the count engine reuses its tally
        wall = time.perf_counter() - t0
    except Exception as exc:  # name the point; keep the exception type
        exc.add_note(f"while running {run.where}, repetition {run.rep}")
        raise
    found = np.asarray(res.heavy_hitters)
    estimates = np.asarray(res.estimates, dtype=float)
    truth = loaded.truth(run.kwargs.get("k", 0) or 0, run.kwargs.get("threshold"))
    # Var over C_T cap C_g (section 6.2.6): squared error of the identified true heavy hitters (NaN if none)
    var = metrics.squared_error(np.asarray(ds.count_of(truth)), estimates, found, truth)
    out = {
        "n": int(ds.n), "m": int(ds.m),
        "f1": float(metrics.f1(truth, found)),
        "ncr": float(metrics.ncr(truth, found)),
        "var": float(var),
        "n_found": int(len(found)),
        "n_true": int(len(truth)),
        "wall_time": wall,
    }
    if run.rank_depth:
        rank = {key: i for i, key in enumerate(_row_keys(ds.top(run.rank_depth)))}
        out["found_ranks"] = json.dumps(sorted(rank[key] for key in _row_keys(found) if key in rank))
    return out


def _run_chunk(data: _DataRef, runs: list[_Run]) -> list[tuple[int, int, dict]]:
    loaded = _load(data)
    return [(r.point, r.rep, _execute(r, loaded)) for r in runs]


# ---------------------------------------------------------------------------
# rows and frames
# ---------------------------------------------------------------------------
def _seed_key(words: tuple) -> str:
    return ".".join(str(w) for w in words)


def _spawn(grid_root: int, point: _Point, rep: int, regenerate: bool) -> tuple[tuple, tuple | None]:
    run_seed = (grid_root, (1, *point.seed_words, rep))
    data_seed = None
    if point.random_data:
        data_seed = (grid_root, (0, *point.data_words, *((rep,) if regenerate else ())))
    return run_seed, data_seed


def _column_value(v):
    """Scalars as they are; lists and dicts as canonical JSON strings."""
    return _dumps(v) if isinstance(v, (list, dict)) else v


def _make_row(grid: Grid, point: _Point, rep: int, result: dict) -> dict:
    run_seed, data_seed = _spawn(grid.root_seed, point, rep, grid.regenerate_data)
    spec = {
        "protocol": point.protocol_name, "kwargs": point.kwargs,
        "dataset": point.dataset_name, "dataset_kwargs": point.dataset_kwargs,
        "seed": [run_seed[0], list(run_seed[1])],
        "data_seed": None if data_seed is None else [data_seed[0], list(data_seed[1])],
        "engine": point.engine, "rank_depth": grid.rank_depth, "rep": rep,
        "version": _library_version(),
    }
    row = {"protocol": point.protocol.label, "dataset": point.dataset.label, "engine": point.engine}
    row.update({k: _column_value(v) for k, v in point.kwargs.items()})
    row.update({"n": result["n"], "m": result["m"], "rep": rep})
    row.update({k: result[k] for k in ("f1", "ncr", "var", "n_found", "n_true", "wall_time")})
    if grid.rank_depth:
        row["found_ranks"] = result["found_ranks"]
    row["protocol_name"] = point.protocol_name
    row["dataset_name"] = point.dataset_name
    row.update({f"dataset_{k}": _column_value(v) for k, v in point.dataset_kwargs.items()})
    row["root_seed"] = grid.root_seed
    row["seed_key"] = _seed_key(run_seed[1])
    row["data_seed_key"] = None if data_seed is None else _seed_key(data_seed[1])
    row["run_spec"] = _dumps(spec)
    return row


def _normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Round-trip through Arrow so fresh and cached frames have identical dtypes."""
    import pyarrow as pa

    return pa.Table.from_pandas(df, preserve_index=False).to_pandas()


# ---------------------------------------------------------------------------
# cache
# ---------------------------------------------------------------------------
def default_cache_dir() -> Path:
    """Where grids are cached: ``ldp.paths.cache_dir() / "experiments"``.

    That is ``$LDP_CACHE_DIR/experiments`` when the variable is set, else
    ``<repo root>/.cache/experiments`` (repo root from the package location,
    or ``$LDP_ROOT``).
    """
    from .paths import cache_dir

    return cache_dir() / "experiments"


def _to_parquet(df: pd.DataFrame, fh) -> None:
    df.to_parquet(fh, index=False)


def _atomic_write(df: pd.DataFrame, path: Path) -> None:
    """Write ``df`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            _to_parquet(df, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _read_cached(path: Path, per_point: bool = True) -> pd.DataFrame | None:
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


# ---------------------------------------------------------------------------
# backends
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def _backend():
    """The dask backend when DASK_SCHEDULER_ADDRESS names a scheduler, else the caller's config."""
    address = os.environ.get("DASK_SCHEDULER_ADDRESS", "").strip()
    if not address:
        yield None
        return
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise ImportError("DASK_SCHEDULER_ADDRESS is set but dask.distributed is not installed; "
                          "install requirements-cluster.txt") from exc
    client = Client(address, set_as_default=False)
    try:
        with joblib.parallel_config(backend="dask", client=client):
            yield client
    finally:
        client.close()


def _resolve_n_jobs(n_jobs):
    if n_jobs is not None:
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs == 0:
            raise ValueError(f"n_jobs must be None or a non-zero integer (-1: all cores), got {n_jobs!r}")
        return int(n_jobs)
    _, configured = joblib.parallel.get_active_backend()
    return -1 if configured is None else configured


def _progress_bar(total: int, progress: bool):
    from tqdm import tqdm

    # disable=None: tqdm disables itself when stderr is not a terminal
    return tqdm(total=total, unit="run", desc="grid", disable=None if progress else True, leave=False)


#: environment variable naming a file where run_grid reports its progress (the notebook runner sets it)
PROGRESS_ENV = "LDP_PROGRESS_FILE"
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
        self.state["done"] += n
        self.write(force=self.state["done"] >= self.state["total"])

    def write(self, force: bool = False) -> None:
        if self.path is None or (not force and time.monotonic() - self.written < 1.0):
            return
        self.written = time.monotonic()
        with contextlib.suppress(OSError), atomic_path(self.path) as tmp:
            tmp.write_text(json.dumps(self.state))


# ---------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------
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
        none), ``n_found``, ``n_true``, ``wall_time`` (seconds, construction
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
    n_jobs = _resolve_n_jobs(n_jobs)
    grid_number = next(_grid_calls)
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    points = grid._points
    R = grid.repetitions
    # fast path: the whole frame of this very grid (one file instead of one per point)
    grid_file = folder / f"grid-{grid._frame_key()}.parquet"
    if cache is True:
        df = _read_cached(grid_file, per_point=False)
        if df is not None and len(df) == grid.n_runs:
            return df

    # 1. what the cache already holds
    have: dict[int, pd.DataFrame] = {}
    missing: dict[int, list[int]] = {}
    for p in points:
        cached = _read_cached(folder / f"{p.key}.parquet") if cache is True else None
        if cached is not None:
            have[p.index] = cached
        done = set() if cached is None else set(int(r) for r in cached["rep"])
        reps = [r for r in range(R) if r not in done]
        if reps:
            missing[p.index] = reps

    # 2. runs, grouped by the dataset they need, in canonical order
    groups: dict = {}
    for idx, reps in missing.items():
        p = points[idx]
        where = f"{p.protocol.label} on {p.dataset.label} ({p.engine}, {p.kwargs})"
        for r in reps:
            run_seed, data_seed = _spawn(grid.root_seed, p, r, grid.regenerate_data)
            ref = _DataRef(p.dataset_name, p.loader, p.dataset_kwargs, data_seed)
            run = _Run(idx, r, p.protocol_name, p.factory, p.kwargs, p.engine, run_seed, grid.rank_depth, where)
            groups.setdefault(ref.memo_key(), (ref, []))[1].append(run)
    total = sum(len(v) for v in missing.values())

    fresh: dict[int, dict[int, dict]] = {i: {} for i in missing}

    def finish(idx: int) -> None:
        p = points[idx]
        new = _normalize(pd.DataFrame([_make_row(grid, p, r, res) for r, res in sorted(fresh[idx].items())]))
        old = have.get(idx)
        merged = new if old is None else _normalize(pd.concat([old, new], ignore_index=True))
        merged = merged.sort_values("rep", kind="stable").reset_index(drop=True)
        if cache:
            _atomic_write(merged, folder / f"{p.key}.parquet")
        have[idx] = merged

    if total:
        with _backend():
            n_eff = max(1, joblib.effective_n_jobs(n_jobs))
            size = chunk_size or max(1, math.ceil(total / (4 * n_eff)))
            tasks = [joblib.delayed(_run_chunk)(ref, runs[i:i + size])
                     for ref, runs in groups.values() for i in range(0, len(runs), size)]
            try:
                parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
            except ValueError:  # a backend without generator support
                parallel = joblib.Parallel(n_jobs=n_jobs)
            report = _ProgressFile(grid_number, total)
            with _progress_bar(total, progress) as bar:
                for out in parallel(tasks):
                    for idx, rep, res in out:
                        fresh[idx][rep] = res
                        if len(fresh[idx]) == len(missing[idx]):
                            finish(idx)
                    bar.update(len(out))
                    report.update(len(out))

    # 3. assemble in canonical order, labels from this grid
    frames = []
    for p in points:
        f = have[p.index]
        f = f[f["rep"] < R].copy()
        f["protocol"] = p.protocol.label
        f["dataset"] = p.dataset.label
        frames.append(f)
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
    df = _normalize(_tidy(df, grid))
    if cache:
        _atomic_write(df, grid_file)
    return df


def _tidy(df: pd.DataFrame, grid: Grid) -> pd.DataFrame:
    """Column order, and numeric parameter columns made numeric (None -> NaN)."""
    params: list[str] = []
    for p in grid._points:
        for k in p.kwargs:
            if k not in params:
                params.append(k)
    for c in params:
        if df[c].dtype == object:
            vals = df[c].dropna()
            if len(vals) and all(isinstance(v, Real) and not isinstance(v, (bool, np.bool_)) for v in vals):
                df[c] = pd.to_numeric(df[c].where(df[c].notna(), np.nan))
    head = ["protocol", "dataset", "engine", *params, "n", "m", "rep", "f1", "ncr", "var", "n_found",
            "n_true", "wall_time"]
    head = [c for c in head if c in df.columns]
    rest = [c for c in df.columns if c not in head]
    return df[head + rest]


# ---------------------------------------------------------------------------
# single rows
# ---------------------------------------------------------------------------
def _spec_of(row) -> dict:
    try:
        text = row["run_spec"]
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError("row must be a results row (a mapping or Series with a 'run_spec' column)") from exc
    return json.loads(text)


def _ref_of(spec: dict) -> _DataRef:
    dname, loader = _resolve(_DATASETS, "dataset", spec["dataset"])
    seed = spec["data_seed"]
    return _DataRef(dname, loader, spec["dataset_kwargs"],
                    None if seed is None else (seed[0], tuple(seed[1])))


def row_dataset(row):
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
    return _load(_ref_of(_spec_of(row))).ds


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
    pname, factory = _resolve(_PROTOCOLS, "protocol", spec["protocol"])
    ref = _ref_of(spec)
    run = _Run(-1, int(spec["rep"]), pname, factory, spec["kwargs"], spec["engine"],
               (spec["seed"][0], tuple(spec["seed"][1])), int(spec["rank_depth"]),
               f"{pname} on {ref.name} ({spec['engine']}, {spec['kwargs']})")
    res = _execute(run, _load(ref))
    out = pd.Series(row, dtype=object).copy() if not isinstance(row, pd.Series) else row.copy()
    for k, v in res.items():
        out[k] = v
    return out


# ---------------------------------------------------------------------------
# aggregation
# ---------------------------------------------------------------------------
_NOT_PARAMS = {"rep", "f1", "ncr", "var", "n_found", "n_true", "wall_time", "found_ranks", "root_seed",
               "seed_key", "data_seed_key", "run_spec"}


def _default_by(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c not in _NOT_PARAMS]


def summarize(df: pd.DataFrame, by: Sequence[str] | str | None = None,
              metrics: Sequence[str] | str = ("f1", "ncr")) -> pd.DataFrame:
    """Mean, standard deviation, count and standard error per point.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows from :func:`run_grid`.
    by : str or sequence of str, optional
        Grouping columns (default: every parameter column, i.e. one group per
        point).  Groups keep their order of first appearance; NaN is a level.
    metrics : str or sequence of str
        Columns to summarise, e.g. ``["f1", "ncr", "var"]``.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then for each metric ``<metric>_mean``,
        ``<metric>_std`` (sample standard deviation, ddof=1), ``<metric>_count``
        (non-missing runs) and ``<metric>_sem`` (std / sqrt(count), the error
        bar of the mean).
    """
    by = _default_by(df) if by is None else ([by] if isinstance(by, str) else list(by))
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    for c in [*by, *metrics]:
        if c not in df.columns:
            raise ValueError(f"column {c!r} is not in the results; columns: {', '.join(map(str, df.columns))}")
    if not by:
        raise ValueError("by must name at least one column")
    g = df.groupby(by, sort=False, dropna=False)[metrics]
    mean, std, count = g.mean(), g.std(ddof=1), g.count()
    out = {}
    for mname in metrics:
        out[f"{mname}_mean"] = mean[mname]
        out[f"{mname}_std"] = std[mname]
        out[f"{mname}_count"] = count[mname]
        out[f"{mname}_sem"] = std[mname] / np.sqrt(count[mname])
    return pd.DataFrame(out).reset_index()


def identification_rates(df: pd.DataFrame, by: Sequence[str] | str | None = None) -> pd.DataFrame:
    """Identification probability of the dataset's r-th most frequent value, per group.

    Needs a grid run with ``rank_depth > 0`` (section 5.1, eq. (iden_prob) is
    the analytical counterpart).

    Parameters
    ----------
    df : pandas.DataFrame
        Rows from :func:`run_grid` with a ``found_ranks`` column.
    by : str or sequence of str, optional
        Grouping columns (default: every parameter column).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``rank`` (0-based), ``rate`` (fraction of runs that
        identified that value), ``runs`` and ``sem`` (binomial standard error).
    """
    if "found_ranks" not in df.columns:
        raise ValueError("the results have no 'found_ranks' column: run the grid with rank_depth > 0")
    by = _default_by(df) if by is None else ([by] if isinstance(by, str) else list(by))
    depth = int(json.loads(df["run_spec"].iloc[0])["rank_depth"])
    hits = np.zeros((len(df), depth))
    for i, text in enumerate(df["found_ranks"]):
        hits[i, json.loads(text)] = 1.0
    wide = pd.concat([df[by].reset_index(drop=True), pd.DataFrame(hits, columns=range(depth))], axis=1)
    g = wide.groupby(by, sort=False, dropna=False)
    rate = g[list(range(depth))].mean()
    rate["runs"] = g.size()
    rate["_group"] = np.arange(len(rate))
    long = rate.reset_index().melt(id_vars=[*by, "runs", "_group"], var_name="rank", value_name="rate")
    long = long.sort_values(["_group", "rank"], kind="stable").drop(columns="_group").reset_index(drop=True)
    long["rank"] = long["rank"].astype(np.int64)
    long["sem"] = np.sqrt(long["rate"] * (1 - long["rate"]) / long["runs"])
    return long[[*by, "rank", "rate", "runs", "sem"]]
