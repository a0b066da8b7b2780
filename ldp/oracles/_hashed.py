"""What HR and CMS share: a per-user hash seed in every report, and the hash to a cell.

Both oracles (:mod:`ldp.oracles.hr`, :mod:`ldp.oracles.cms`) hash the user's
value with her own member of OLH's seeded family (:mod:`ldp.oracles.hashing`)
into ``[cells]`` and randomize the cell; the seed is drawn independently of
the value and sent with the report.
"""
from __future__ import annotations

import numpy as np

from ..validation import check_epsilon, check_int
from ..values import MAX_BITS, as_values, to_chunks32
from . import hashing
from .base import FrequencyOracle, Reports

__all__ = ["SeededReports", "HashedOracle"]


class SeededReports(Reports):
    """Reports whose first array is each user's ``uint64`` hash seed."""

    @property
    def seed(self) -> np.ndarray:
        """``uint64`` seed of each user's hash function (:mod:`ldp.oracles.hashing`)."""
        return self._arrays["seed"]

    def _check_seed(self) -> None:
        seed = self._arrays["seed"]
        if seed.ndim != 1 or seed.dtype != np.uint64:
            raise ValueError(f"{self.kind} reports 'seed' must be a 1-D uint64 array, got {seed.dtype} {seed.shape}")


class HashedOracle(FrequencyOracle):
    """Base of the oracles that hash each user's value to a cell of ``[cells]`` first."""

    cells: int
    m: int

    def _init_common(self, epsilon, m) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.m = check_int(m, "m", lo=1, hi=MAX_BITS)

    def cell(self, seeds, values) -> np.ndarray:
        """``H_seed(v)`` in ``[0, cells)`` for paired seeds and values (client-side code)."""
        vals = as_values(values, self.m, name="values")
        seeds = np.asarray(seeds, dtype=np.uint64)
        if seeds.ndim == 0:
            seeds = np.full(vals.shape[0], seeds, dtype=np.uint64)
        return hashing.hash_values(seeds, vals, self.m, self.cells)

    def _cells(self, seeds: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``H_seed(v)`` for canonical ``values`` (possibly none), as ``apply_noise`` needs it."""
        return hashing.reduce_to_range(hashing.hash_u32(seeds, to_chunks32(values, self.m)), self.cells)

    def _check_candidates(self, candidates) -> np.ndarray:
        return as_values(candidates, self.m, name="candidates")

    def _chunks(self, candidates: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(to_chunks32(candidates, self.m).T)
