"""Small numeric helpers shared by every layer (no other ``ldp`` imports)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["largest_remainder", "readonly", "kernel_input"]


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


def kernel_input(a, dtype=None) -> np.ndarray:
    """``a`` as a C-contiguous, read-only array of ``dtype`` for a compiled kernel; ``a`` itself is unchanged.

    numba compiles one specialisation of a kernel per writeable flag of each array argument.  A kernel
    that is called with a data set's read-only arrays and with fresh writeable ones would be compiled twice
    (up to 16 s each for the largest kernels, in every process that meets the second kind first); passing
    every input through here gives it one type.  No copy when ``a`` already has the layout and dtype: the
    result is then a read-only view.

    Parameters
    ----------
    a : array_like
    dtype : numpy.dtype, optional
        Default: ``a``'s.

    Returns
    -------
    numpy.ndarray
    """
    out = np.ascontiguousarray(a, dtype=dtype)
    if out.flags.writeable:
        out = out.view()
        out.flags.writeable = False
    return out
