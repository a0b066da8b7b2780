"""Grid specs and their canonical JSON: what a point's seeds and cache keys are computed from.

A :class:`ProtocolSpec` or :class:`DatasetSpec` names a registered protocol
or data set with keyword arguments and a label.  :func:`jsonable` and
:func:`dumps` give the canonical JSON that the content-addressed seeds
(:func:`content_words`) and the cache keys hash, so results depend neither
on listing order nor on ``1`` versus ``1.0``.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from numbers import Integral, Real
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..paths import source_digest

__all__ = ["ENGINES", "METRICS", "CACHE_FORMAT", "ProtocolSpec", "DatasetSpec", "jsonable", "dumps",
           "content_words", "library_version", "numeric_stack", "coerce_spec", "spec_list"]

#: engines a protocol's ``run`` accepts
ENGINES = ("protocol", "counts")
#: per-run metric columns
METRICS = ("f1", "ncr", "var", "n_found")
#: bump when the row layout changes (part of every cache key)
CACHE_FORMAT = 1

# ---------------------------------------------------------------------------
# canonical JSON (hashing and run records)
# ---------------------------------------------------------------------------
def jsonable(x, where: str, canonical: bool):
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
            out[k] = jsonable(v, f"{where}[{k!r}]", canonical)
        return dict(sorted(out.items())) if canonical else out
    if isinstance(x, (list, tuple, np.ndarray)):
        return [jsonable(v, f"{where}[{i}]", canonical) for i, v in enumerate(x)]
    raise TypeError(f"{where} must be a number, string, boolean, None, or a list/dict of them "
                    f"(so that runs can be hashed, cached and reproduced), got {type(x).__name__} {x!r}")


def dumps(x) -> str:
    """Canonical JSON text of plain data: sorted keys, no spaces (what keys and seeds hash)."""
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def _digest(obj) -> bytes:
    return hashlib.sha256(dumps(obj).encode()).digest()


def content_words(obj) -> tuple[int, ...]:
    """128 bits of a content hash as four uint32 words (a SeedSequence spawn key)."""
    d = _digest(obj)
    return tuple(int.from_bytes(d[i:i + 4], "big") for i in range(0, 16, 4))


def library_version() -> str:
    """``ldp.__version__`` (falling back to the installed distribution's version) plus the source digest.

    Part of every cache key: a change to a protocol, an engine or a data set
    (:func:`ldp.paths.source_digest`) invalidates cached results even when
    ``ldp.__version__`` is not bumped.
    """
    version = getattr(sys.modules.get("ldp") or import_module("ldp"), "__version__", None)
    if version is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            version = dist_version("ldp-heavy-hitters")  # this package's distribution name
        except PackageNotFoundError:
            version = "unknown"
    return f"{version}+src.{source_digest()[:12]}"


def numeric_stack() -> dict[str, str]:
    """The versions of the libraries whose algorithms make a run's numbers: numpy, scipy and numba.

    Part of every cache key beside :func:`library_version`: numpy may change a distribution's sampling
    algorithm between versions (its policy for :class:`numpy.random.Generator`), and scipy's and numba's
    numerics may change too, so a result cached under other versions is not read.
    """
    import numba
    import scipy

    return {"numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__}


# ---------------------------------------------------------------------------
# specs
# ---------------------------------------------------------------------------
def _default_label(name: str, kwargs: Mapping) -> str:
    if not kwargs:
        return name
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"


@dataclass(frozen=True)
class _Spec:
    """A registered name, keyword arguments and a label (the common part of the two specs)."""

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None

    #: what the spec names, in error messages
    kind: ClassVar[str] = "spec"

    def __post_init__(self):
        if not isinstance(self.kwargs, Mapping):
            raise TypeError(f"{self.kind} {self.name!r}: kwargs must be a mapping, got {self.kwargs!r}")
        object.__setattr__(self, "kwargs", dict(self.kwargs))
        if self.label is None:
            object.__setattr__(self, "label", _default_label(str(self.name), self.kwargs))
        elif not isinstance(self.label, str) or not self.label:
            raise TypeError(f"{self.kind} {self.name!r}: label must be a non-empty string, got {self.label!r}")


@dataclass(frozen=True)
class ProtocolSpec(_Spec):
    """A protocol by registered name, with fixed keyword arguments and a label.

    Parameters
    ----------
    name : str
        Registered protocol name (``"PEM"``, ``"SPM"``, ``"MCM"``, ``"Strawman"``,
        ``"TreeHist"``, ``"SFP"`` or one added with :func:`register_protocol`).
    kwargs : mapping
        Fixed constructor keywords, e.g. ``{"final_fraction": 0.1}``.
    label : str, optional
        Name in the results' ``protocol`` column (default: name plus kwargs,
        e.g. ``"MCM(final_fraction=0.1)"``).
    """

    kind: ClassVar[str] = "protocol"


@dataclass(frozen=True)
class DatasetSpec(_Spec):
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

    kind: ClassVar[str] = "dataset"


def coerce_spec(item, cls, kind: str):
    """``item`` as a ``cls`` spec: a name, a tuple (name, kwargs[, label]) or a spec."""
    if isinstance(item, cls):
        return item
    if isinstance(item, str):
        return cls(item)
    if isinstance(item, tuple) and 1 <= len(item) <= 3:
        return cls(*item)
    raise TypeError(f"a {kind} spec must be a name, a tuple (name, kwargs[, label]) or a {cls.__name__}, "
                    f"got {item!r}")


def spec_list(items, cls, kind: str) -> list:
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
