"""Small numeric helpers shared by every layer (no other ``ldp`` imports)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["largest_remainder", "readonly"]


def largest_remainder(total: int, weights: Sequence[float] | np.ndarray) -> np.ndarray:
    """Split ``total`` into integers proportional to ``weights`` that sum to ``total``.

    Floors of ``total * w`` with the remainder handed out one by one by largest
    fractional part; ties go to the earlier entry (a stable sort).  The one
    rounding rule of the project: group sizes of a protocol
    (:func:`ldp.core.group_sizes`), of a PEM configuration
    (:meth:`ldp.analysis.PEMConfig.group_sizes`) and the counts of a synthetic
    data set drawn with ``sampling="rounded"``.

    Parameters
    ----------
    total : int
        The integer to split (>= 0).
    weights : array_like of float
        Non-negative shares; they should sum to 1 (a sum slightly off by
        rounding only changes how many remainders are handed out).

    Returns
    -------
    numpy.ndarray
        ``int64`` array, one entry per weight.
    """
    exact = np.asarray(weights, dtype=float) * total
    base = np.floor(exact).astype(np.int64)
    short = int(total) - int(base.sum())
    if short > 0:
        order = np.argsort(-(exact - base), kind="stable")
        base[order[:short]] += 1
    return base


def readonly(a: np.ndarray) -> np.ndarray:
    """Mark ``a`` read-only (in place) and return it: shared arrays that no caller may change."""
    a.flags.writeable = False
    return a
