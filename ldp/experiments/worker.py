"""What a worker receives and runs: a dataset reference and runs, loaded and scored in the worker.

Datasets are loaded (or generated) in the worker that needs them and
memoised per process; runs are grouped by dataset and sent in chunks, so a
worker loads a dataset once per chunk at most (usually once).
"""
from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import metrics
from ..core.dataset import Dataset
from ..values import match_sorted, value_keys
from .specs import dumps

__all__ = ["DataRef", "Run", "Loaded", "load", "execute", "run_chunk"]


@dataclass(frozen=True, eq=False)
class DataRef:
    """A dataset as a worker loads it: registered name, loader, keyword arguments and data seed.

    Equal (and hashed) by :meth:`memo_key`: the loader by module and name, not by
    identity, since a loader pickled by value arrives in a worker as a new object
    with every task.
    """

    name: str
    loader: Callable
    kwargs: dict
    seed: tuple | None  # (entropy, spawn_key) or None for a deterministic loader

    def memo_key(self) -> tuple:
        """What identifies the dataset: name, the loader's module and qualified name, kwargs, seed."""
        return (self.name, getattr(self.loader, "__module__", None), getattr(self.loader, "__qualname__", None),
                dumps(self.kwargs), self.seed)

    def __eq__(self, other) -> bool:
        return isinstance(other, DataRef) and self.memo_key() == other.memo_key()

    def __hash__(self) -> int:
        return hash(self.memo_key())


@dataclass(frozen=True)
class Run:
    """One repetition of one point, as a worker runs it."""

    point: int
    rep: int
    protocol_name: str
    factory: Callable
    kwargs: dict
    engine: str
    seed: tuple  # (entropy, spawn_key)
    rank_depth: int
    where: str   # human-readable description for error notes


class Loaded:
    """A loaded dataset and its memoised ground truth (a bounded memo per (k, threshold))."""

    def __init__(self, ds: Dataset):
        self.ds = ds
        self.truth = functools.lru_cache(maxsize=64)(self._true_set)

    def _true_set(self, k: int, threshold) -> np.ndarray:
        """True heavy hitters, ranked: the top ``k``, or (threshold version, section 6.2.3) every
        value whose frequency is at least ``threshold``."""
        return self.ds.top(k) if threshold is None else self.ds.above(threshold)


# The process's datasets: functools.lru_cache, two entries (a chunk needs one dataset; the second spares a
# reload when chunks of two datasets alternate); DataRef hashes by content, so a worker shares it across tasks.
@functools.lru_cache(maxsize=2)
def load(ref: DataRef) -> Loaded:
    """Load (or generate) a dataset, memoised per process (:func:`functools.lru_cache`, two entries).

    Raises
    ------
    TypeError
        The loader did not return a :class:`ldp.datasets.Dataset`.
    """
    kw = dict(ref.kwargs)
    if ref.seed is not None:
        kw["rng"] = np.random.default_rng(np.random.SeedSequence(ref.seed[0], spawn_key=ref.seed[1]))
    ds = ref.loader(**kw)
    if not isinstance(ds, Dataset):
        raise TypeError(f"dataset loader {ref.name!r} returned {type(ds).__name__}, not an ldp.datasets.Dataset")
    return Loaded(ds)


def _found_ranks(ds: Dataset, found: np.ndarray, depth: int) -> list[int]:
    """Ranks (0-based) among the dataset's top ``depth`` values of the values in ``found``, ascending."""
    top = ds.top(depth)
    order = np.argsort(value_keys(top), kind="stable")
    pos = match_sorted(top[order], found)
    return sorted(int(r) for r in order[pos[pos >= 0]])


def execute(run: Run, loaded: Loaded) -> dict:
    """One run: construct the protocol, run it, score it."""
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
    out: dict[str, Any] = {
        "n": int(ds.n), "m": int(ds.m),
        "f1": float(metrics.f1(truth, found)),
        "ncr": float(metrics.ncr(truth, found)),
        "var": float(var),
        "n_found": int(len(found)),
        "n_true": int(len(truth)),
        # a top-k release of the same run: the k best estimates released (threshold mode: top-k(theta), the
        # reading of section 6.2.3 that chapter 07 compares with the literal threshold release; top-k mode: = f1)
        "f1_topk": float(metrics.f1(truth, found[np.argsort(-estimates, kind="stable")][:run.kwargs.get("k") or None])),
        "wall_time": wall,
    }
    if run.rank_depth:
        out["found_ranks"] = json.dumps(_found_ranks(ds, found, run.rank_depth))
    return out


def run_chunk(data: DataRef, runs: list[Run]) -> list[tuple[int, int, dict]]:
    """The runs of one task on one dataset: ``(point, rep, result)`` per run."""
    loaded = load(data)
    return [(r.point, r.rep, execute(r, loaded)) for r in runs]
