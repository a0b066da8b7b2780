"""What OLH, HR and CMS share: a per-user hash seed in every report, and the hash to a cell.

The three oracles (:mod:`ldp.oracles.olh`, :mod:`ldp.oracles.hr`,
:mod:`ldp.oracles.cms`) hash the user's value with her own member of the
seeded family of :mod:`ldp.oracles.hashing` into ``[cells]`` and randomize the
cell; the seed is drawn independently of the value and sent with the report.
Their randomness is split from the values (``draw_noise`` / ``apply_noise``),
so that a protocol can draw it per block of users before any value is seen.
"""
from __future__ import annotations

from typing import Any, Generic

import numpy as np

from ..validation import check_int
from ..values import MAX_BITS, as_values, to_chunks32
from . import hashing
from .base import SEED_FIELD, FrequencyOracle, R, Reports, report_array, symbol_field

__all__ = ["SeededReports", "SymbolReports", "HashedOracle"]


class SeededReports(Reports):
    """Reports whose first array is each user's ``uint64`` hash seed, sent in the clear (public)."""

    public_fields = ("seed",)
    seed = report_array("seed", "``uint64`` seed of each user's hash function (:mod:`ldp.oracles.hashing`).")

    def _check_seed(self) -> None:
        """Raise unless ``seed`` is a 1-D ``uint64`` array (for subclasses that write their own ``_validate``)."""
        problem = SEED_FIELD.problem(self.kind, self._arrays["seed"])
        if problem:
            raise ValueError(problem)


class SymbolReports(SeededReports):
    """Reports ``(seed, y)``: each user's hash seed and one output symbol ``y`` in ``[0, size)``.

    Subclasses give the symbol range from their parameters (:meth:`_symbol_range`).
    """

    fields = ("seed", "y")

    y = report_array("y", "Each user's output symbol (smallest unsigned dtype holding the range).")

    @classmethod
    def _symbol_range(cls, params: dict[str, Any]) -> tuple[int, str]:  # pragma: no cover - overridden
        """``(size, how the message names it)`` of the symbols for oracle parameters ``params``."""
        raise NotImplementedError

    @classmethod
    def layout(cls, params):
        return SEED_FIELD, symbol_field("y", *cls._symbol_range(params))


class HashedOracle(FrequencyOracle[R], Generic[R]):
    """Base of the oracles that hash each user's value to a cell of ``[cells]`` first.

    Subclasses set :attr:`m` and :attr:`cells` and implement ``_draw`` (the
    value-independent randomness of ``n`` users, behind :meth:`draw_noise`:
    the hash seeds from the public source, the rest from the private one) and
    :meth:`apply_noise` (the reports of given values with that randomness).
    Values use the canonical representation of :mod:`ldp.values` (for
    ``m <= 64`` integers or a ``uint64`` array).
    """

    cells: int
    m: int

    def _check_m(self, m) -> int:
        return check_int(m, "m", lo=1, hi=MAX_BITS)

    def cell(self, seeds, values) -> np.ndarray:
        """``H_seed(v)`` in ``[0, cells)`` for paired seeds and values (client-side code).

        A scalar seed is used for every value.
        """
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

    def check_values(self, values) -> np.ndarray:
        return as_values(values, self.m, name="values")
