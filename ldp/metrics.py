"""Utility metrics of the paper: F1 and NCR (section 4.2.1) and the squared error of section 6.2.6.

Values are canonical m-bit arrays (:mod:`ldp.values`): 1-D ``uint64`` for
``m <= 64``, 2-D ``(n, W)`` words otherwise; both arguments of a metric must
use the same representation.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 4.2.1 and 6.2.6.
"""
from __future__ import annotations

import numpy as np

from .values import match_sorted, value_keys

__all__ = ["f1", "precision_recall", "ncr", "squared_error"]


def _rows(values, name: str) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim == 0:
        raise ValueError(f"{name} must be a 1-D array of values or a 2-D array of value words, got a scalar")
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold unsigned integers (canonical m-bit values), got {a.dtype}")
    if a.ndim > 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {a.shape}")
    return a.astype(np.uint64, copy=False)


def _check_pair(x: np.ndarray, y: np.ndarray, nx: str, ny: str) -> None:
    if x.size and y.size and (x.ndim != y.ndim or (x.ndim == 2 and x.shape[1] != y.shape[1])):
        raise ValueError(f"{nx} and {ny} must use the same value representation, got shapes {x.shape} and {y.shape}")


def _distinct(keys: np.ndarray, name: str) -> None:
    if np.unique(keys).shape[0] != keys.shape[0]:
        raise ValueError(f"{name} must not contain duplicate values")


def precision_recall(true_top, found) -> tuple[float, float]:
    """``P = |C_T & C_g| / |C_g|`` and ``R = |C_T & C_g| / |C_T|`` (section 4.2.1).

    ``P`` is 0 when nothing is found.
    """
    t, f = _rows(true_top, "true_top"), _rows(found, "found")
    _check_pair(t, f, "true_top", "found")
    tk, fk = value_keys(t), value_keys(f)
    _distinct(tk, "true_top")
    _distinct(fk, "found")
    if tk.shape[0] == 0:
        raise ValueError("true_top must contain at least one value")
    hit = np.isin(fk, tk).sum() if fk.shape[0] else 0
    P = hit / fk.shape[0] if fk.shape[0] else 0.0
    R = hit / tk.shape[0]
    return float(P), float(R)


def f1(true_top, found) -> float:
    """F-measure ``2PR / (P + R)`` of the found set against the true top-k (section 4.2.1).

    Parameters
    ----------
    true_top : array_like
        The true top-k values ``C_T`` (order irrelevant).
    found : array_like
        The values a protocol identified, ``C_g`` (order irrelevant).

    Returns
    -------
    float
        In ``[0, 1]``; 0 when nothing is found or nothing matches.

    References
    ----------
    [PEM] section 4.2.1 (F-measure).

    Examples
    --------
    Two of the true top 4 found among three values: precision 2/3, recall 2/4.

    >>> round(f1([1, 2, 3, 4], [1, 2, 5]), 4)
    0.5714
    """
    P, R = precision_recall(true_top, found)
    return 0.0 if P + R == 0 else 2 * P * R / (P + R)


def ncr(true_ranked, found) -> float:
    """Normalized Cumulative Rank (section 4.2.1).

    The ``j``-th most frequent true value (``j = 1..k``, ``k = len(true_ranked)``)
    scores ``k + 1 - j``; other values score 0.  NCR is the total score of
    the found values divided by the maximum ``k (k + 1) / 2``.

    Parameters
    ----------
    true_ranked : array_like
        The true top-k values, most frequent first.
    found : array_like
        The values a protocol identified.

    Returns
    -------
    float
        In ``[0, 1]``.

    References
    ----------
    [PEM] section 4.2.1 (NCR: ``q(v_1) = k``, ..., ``q(v_k) = 1``).
    """
    t, f = _rows(true_ranked, "true_ranked"), _rows(found, "found")
    _check_pair(t, f, "true_ranked", "found")
    tk, fk = value_keys(t), value_keys(f)
    _distinct(tk, "true_ranked")
    _distinct(fk, "found")
    k = tk.shape[0]
    if k == 0:
        raise ValueError("true_ranked must contain at least one value")
    if fk.shape[0] == 0:
        return 0.0
    scores = k - np.arange(k)  # q(v_j) = k + 1 - j for j = 1..k
    got = np.isin(tk, fk)
    return float(scores[got].sum() / (k * (k + 1) / 2))


def squared_error(true_counts, estimates, found=None, true_top=None) -> float:
    """Average squared error of the count estimates of identified heavy hitters (section 6.2.6).

    ``Var = (1 / |C_T & C_g|) sum_{v in C_T & C_g} (n_v - n~_v)^2``.

    Two call forms:

    * ``squared_error(true_counts, estimates)``: the two arrays are aligned
      and already restricted to ``C_T & C_g``;
    * ``squared_error(true_counts, estimates, found, true_top)``: ``estimates``
      are aligned with ``found`` and ``true_counts`` with ``true_top``; the
      mean runs over the values present in both.

    Returns
    -------
    float
        ``nan`` when no true heavy hitter was identified.

    References
    ----------
    [PEM] section 6.2.6 (the Var metric).
    """
    tc = np.asarray(true_counts, dtype=float)
    est = np.asarray(estimates, dtype=float)
    if (found is None) != (true_top is None):
        raise ValueError("give both found and true_top, or neither")
    if found is not None:
        f, t = _rows(found, "found"), _rows(true_top, "true_top")
        _check_pair(t, f, "true_top", "found")
        if est.shape[0] != f.shape[0]:
            raise ValueError(f"estimates must align with found: {est.shape[0]} vs {f.shape[0]} values")
        if tc.shape[0] != t.shape[0]:
            raise ValueError(f"true_counts must align with true_top: {tc.shape[0]} vs {t.shape[0]} values")
        fk, tk = value_keys(f), value_keys(t)
        _distinct(fk, "found")
        _distinct(tk, "true_top")
        order = np.argsort(tk)
        pos = match_sorted(t[order], f)  # index of each found value among the sorted true values, -1 if absent
        hit = pos >= 0
        tc = tc[order][pos[hit]]
        est = est[hit]
    elif tc.shape != est.shape:
        raise ValueError(f"true_counts and estimates must have the same shape, got {tc.shape} and {est.shape}")
    if tc.shape[0] == 0:
        return float("nan")
    return float(np.mean((tc - est) ** 2))
