"""The registries of an experiment grid: protocol and dataset names -> the callables behind them.

The paper's protocols (:mod:`ldp.protocols`) and data sets (:mod:`ldp.datasets`)
are registered under their names; :func:`register_protocol` and
:func:`register_dataset` add others.  Names match case-insensitively.
"""
from __future__ import annotations

from collections.abc import Callable

from .. import datasets, protocols

__all__ = ["register_protocol", "register_dataset", "resolve_protocol", "resolve_dataset"]

_PROTOCOLS: dict[str, Callable] = {
    "PEM": protocols.PEM,
    "SPM": protocols.SPM,
    "MCM": protocols.MCM,
    "Strawman": protocols.Strawman,
    "TreeHist": protocols.TreeHist,
    "SFP": protocols.SFP,
}
_DATASETS: dict[str, Callable] = {
    "zipf": datasets.zipf,
    "exponential": datasets.exponential,
    "aol": datasets.aol,
    "url": datasets.url,
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
    """Make a dataset loader available to grids under ``name`` (any case in dataset specs).

    A run calls ``loader(**kwargs)`` with the spec's keywords, plus ``rng=``
    when the loader has an ``rng`` parameter (i.e. is random); it must return
    a :class:`ldp.datasets.Dataset` (the run checks it).

    Parameters
    ----------
    name : str
    loader : callable
    replace : bool, keyword-only
        Replace a loader already registered under ``name`` in any case; without it
        that is an error.
    """
    _register(_DATASETS, "dataset", name, loader, replace)


def _resolve(registry: dict[str, Callable], kind: str, name) -> tuple[str, Callable]:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name must be a string, got {name!r}")
    match = [k for k in registry if k.lower() == name.lower()]
    if not match:
        raise ValueError(f"unknown {kind} {name!r}; known {kind}s: {', '.join(sorted(registry))} "
                         f"(add others with register_{kind})")
    return match[0], registry[match[0]]


def resolve_protocol(name) -> tuple[str, Callable]:
    """The registered name (as registered) and factory of protocol ``name``; ValueError if unknown."""
    return _resolve(_PROTOCOLS, "protocol", name)


def resolve_dataset(name) -> tuple[str, Callable]:
    """The registered name (as registered) and loader of dataset ``name``; ValueError if unknown."""
    return _resolve(_DATASETS, "dataset", name)
