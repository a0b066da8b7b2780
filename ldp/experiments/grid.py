"""The experiment grid: protocols x datasets x parameter axes x engines, checked before anything runs.

A :class:`Grid` enumerates its points in canonical order (dataset, protocol,
parameter combination in axis order, engine); each :class:`Point` carries the
content words its seeds are spawned from (:func:`spawn_seeds`) and its cache key.
"""
from __future__ import annotations

import hashlib
import inspect
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import check_epsilon, check_int
from .registry import resolve_dataset, resolve_protocol
from .specs import (
    CACHE_FORMAT,
    ENGINES,
    DatasetSpec,
    ProtocolSpec,
    coerce_spec,
    content_words,
    dumps,
    jsonable,
    library_version,
    numeric_stack,
    spec_list,
)

__all__ = ["Grid", "Point", "spawn_seeds"]


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
_RESERVED = {"protocol", "dataset", "engine", "n", "m", "rep", "f1", "ncr", "var", "n_found", "n_true", "f1_topk",
             "wall_time", "found_ranks", "protocol_name", "dataset_name", "root_seed", "seed_key",
             "data_seed_key", "run_spec", "rng", "values"}


@dataclass(frozen=True)
class Point:
    """One point of a grid: a protocol spec with one parameter combination, on one dataset, with one engine."""

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
    key: str                 # cache key (includes version, numpy/scipy/numba versions, root seed, format)


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

    Attributes
    ----------
    points : list of Point
        The points in canonical order, each with its seeds' content words and
        its cache key.

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
        protocols = spec_list(protocols, ProtocolSpec, "protocols")
        datasets = spec_list(datasets, DatasetSpec, "datasets")
        self.protocols = tuple(coerce_spec(p, ProtocolSpec, "protocol") for p in protocols)
        self.datasets = tuple(coerce_spec(d, DatasetSpec, "dataset") for d in datasets)
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
                jsonable(v, f"parameter {name!r} level", canonical=True)
                if name == "epsilon":
                    check_epsilon(v)
                elif name == "k":
                    check_int(v, "k", 1)
            if len({dumps(jsonable(v, name, True)) for v in lv}) != len(lv):
                raise ValueError(f"parameter {name!r} lists a level twice: {list(lv)}")
            axes[name] = lv
        self.params = axes
        self.points = self._build_points(library_version())

    # -- construction ------------------------------------------------------
    def _build_points(self, version: str) -> list[Point]:
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
            name, factory = resolve_protocol(spec.name)
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
            fixed = jsonable(spec.kwargs, f"protocol {spec.label!r} kwargs", canonical=False)
            for k, v in fixed.items():
                if k == "epsilon":
                    check_epsilon(v)
                elif k == "k":
                    check_int(v, "k", 1)
            protos.append((spec, name, factory, fixed))

        datas = []
        for spec in self.datasets:
            name, loader = resolve_dataset(spec.name)
            accepted, var_kw = _signature(loader)
            if "rng" in spec.kwargs:
                raise ValueError(f"dataset {spec.label!r}: 'rng' must not be given; random datasets are "
                                 "seeded from the grid's root_seed")
            for k in spec.kwargs:
                if not var_kw and k not in accepted:
                    raise ValueError(f"parameter {k!r} is not accepted by dataset loader {name!r}; "
                                     f"it accepts: {', '.join(a for a in accepted if a != 'rng')}")
            kw = jsonable(spec.kwargs, f"dataset {spec.label!r} kwargs", canonical=False)
            datas.append((spec, name, loader, kw, "rng" in accepted))

        points: list[Point] = []
        seen: dict[str, str] = {}
        stack = numeric_stack()
        names = list(self.params)
        for dspec, dname, loader, dkw, random_data in datas:
            dcontent = {"dataset": dname, "kwargs": jsonable(dkw, "", True)}
            for pspec, pname, factory, fixed in protos:
                for combo in itertools.product(*(self.params[n] for n in names)):
                    kw = dict(fixed)
                    kw.update({n: jsonable(v, n, canonical=False) for n, v in zip(names, combo)})
                    for engine in self.engines:
                        content = {"protocol": pname, "kwargs": jsonable(kw, "", True), **{
                            "data": dcontent, "engine": engine, "regenerate_data": self.regenerate_data}}
                        ckey = dumps(content)
                        if ckey in seen:
                            raise ValueError(f"the grid holds the same point twice ({pspec.label} on "
                                             f"{dspec.label}, {kw}) -- also listed as {seen[ckey]}")
                        seen[ckey] = f"{pspec.label} on {dspec.label}"
                        key = hashlib.sha256(dumps({
                            "point": content, "root_seed": self.root_seed, "rank_depth": self.rank_depth,
                            "version": version, "stack": stack, "format": CACHE_FORMAT}).encode()).hexdigest()[:32]
                        points.append(Point(
                            index=len(points), protocol=pspec, protocol_name=pname, factory=factory,
                            kwargs=json.loads(dumps(kw)), dataset=dspec, dataset_name=dname, loader=loader,
                            dataset_kwargs=json.loads(dumps(dkw)), random_data=random_data, engine=engine,
                            seed_words=content_words(content), data_words=content_words(dcontent), key=key))
        return points

    # -- introspection -----------------------------------------------------
    @property
    def n_points(self) -> int:
        """Number of points (protocol x dataset x parameter combination x engine)."""
        return len(self.points)

    @property
    def n_runs(self) -> int:
        """Number of runs (points x repetitions)."""
        return len(self.points) * self.repetitions

    def point_keys(self, version: str | None = None) -> list[str]:
        """Cache keys of the points, in canonical order.

        Parameters
        ----------
        version : str, optional
            Library version to key on (default: the current ``ldp.__version__``).
        """
        pts = self.points if version is None or version == library_version() else self._build_points(version)
        return [p.key for p in pts]

    @property
    def key(self) -> str:
        """A hash of the whole grid (points, repetitions, root seed, library version)."""
        return hashlib.sha256(dumps({"points": self.point_keys(), "repetitions": self.repetitions})
                              .encode()).hexdigest()[:32]

    def frame_key(self) -> str:
        """Key of the whole result frame: the grid's key plus the labels (which are not in the point keys)."""
        return hashlib.sha256(dumps({"grid": self.key, "protocols": [p.label for p in self.protocols],
                                      "datasets": [d.label for d in self.datasets]}).encode()).hexdigest()[:32]

    def __repr__(self) -> str:
        return (f"Grid({self.n_points} points x {self.repetitions} repetitions: protocols="
                f"{[p.label for p in self.protocols]}, datasets={[d.label for d in self.datasets]}, "
                f"params={ {k: list(v) for k, v in self.params.items()} }, engine={list(self.engines)}, "
                f"root_seed={self.root_seed})")


def spawn_seeds(grid_root: int, point: Point, rep: int, regenerate: bool) -> tuple[tuple, tuple | None]:
    """The run seed and the data seed (None for a deterministic loader) of repetition ``rep`` of ``point``.

    Each is ``(entropy, spawn_key)`` of a :class:`numpy.random.SeedSequence`:
    children of the root sequence addressed by the point's content (see the
    package's *Seeds*), so they depend neither on workers nor on listing order.
    """
    run_seed = (grid_root, (1, *point.seed_words, rep))
    data_seed = None
    if point.random_data:
        data_seed = (grid_root, (0, *point.data_words, *((rep,) if regenerate else ())))
    return run_seed, data_seed
