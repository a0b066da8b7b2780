"""The selection rule and the estimator, shared by every protocol and both engines.

* :func:`select_top` -- the top-``K`` rule (support descending, ties broken by
  an independent uniform key per candidate, i.e. uniformly at random), used
  identically by both engines.
* :func:`scaled_estimate` / :func:`support_threshold` -- eq. (2) scaled to the
  whole population, and its inverse for threshold mode.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 2.2 and 6.2.3.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["select_top", "scaled_estimate", "support_threshold"]


def select_top(support: np.ndarray, keys: np.ndarray, K: int, *, blocks: np.ndarray | None = None,
               min_support: float | None = None) -> np.ndarray:
    """Positions of the selected candidates, best first (within each block).

    Candidates are ranked by support, descending; ties are broken by the
    independent uniform ``keys`` (larger first), i.e. uniformly at random.
    Selected: the first ``K`` of each block, plus every candidate with
    ``support >= min_support`` when given.  With ``blocks`` (a block id per
    candidate) the output is ordered by block, then rank.

    Both engines call this function on the candidates they hold, so the rule
    (and its tie-breaking) is identical.

    Parameters
    ----------
    support : numpy.ndarray
        Support of each candidate.
    keys : numpy.ndarray
        Independent uniform tie-breaking key of each candidate.
    K : int
        Candidates kept per block (or overall).
    blocks : numpy.ndarray, optional
        Block id of each candidate (MCM: the channel).
    min_support : float, optional
        Also keep every candidate with at least this support (threshold mode).

    Returns
    -------
    numpy.ndarray
        Positions (``int64``) of the selected candidates.
    """
    support = np.asarray(support)
    N = support.shape[0]
    if N == 0:
        return np.zeros(0, dtype=np.int64)
    if blocks is None:
        pos = np.arange(N)
        if N > K:  # pre-filter: at least the K-th largest support
            kth = np.partition(support, N - K)[N - K]
            lo = kth if min_support is None else min(kth, min_support)
            pos = np.flatnonzero(support >= lo)
        order = pos[np.lexsort((-keys[pos], -support[pos]))]
        rank = np.arange(order.shape[0])
    else:
        pos = np.arange(N)
        if K == 1 and blocks.dtype.kind in "iu" and blocks.min() >= 0 and blocks.max() < 4 * N:
            # pre-filter (MCM's one pattern per block): only a block's largest support can rank first in it
            best = np.full(int(blocks.max()) + 1, support.min(), dtype=support.dtype)
            np.maximum.at(best, blocks, support)
            lo = best[blocks] if min_support is None else np.minimum(best[blocks], min_support)
            pos = np.flatnonzero(support >= lo)
        order = pos[np.lexsort((-keys[pos], -support[pos], blocks[pos]))]
        b = blocks[order]
        first = np.r_[0, np.flatnonzero(b[1:] != b[:-1]) + 1]
        run = np.diff(np.r_[first, order.shape[0]])
        rank = np.arange(order.shape[0]) - np.repeat(first, run)
    keep = rank < K
    if min_support is not None:
        keep |= support[order] >= min_support
    return order[keep].astype(np.int64)


def scaled_estimate(support: np.ndarray, n_users: int, p: float, q: float, n_total: int) -> np.ndarray:
    """Unbiased count estimate over the whole population.

    ``(I - n_users q) / (p - q)`` (eq. (2)) estimates the count among the
    ``n_users`` who answered; multiplied by ``n_total / n_users`` it is
    unbiased for the population count under the random group assignment.

    Parameters
    ----------
    support : array_like
        Supports ``I`` among the ``n_users`` who answered.
    n_users : int
        Number of users who answered.
    p, q : float
        The oracle's support probabilities (own value, any other value).
    n_total : int
        Population size (``n_users`` for the count among those who answered).

    Returns
    -------
    numpy.ndarray
        Count estimates (``float64``; may be negative).
    """
    est = (np.asarray(support, dtype=float) - n_users * q) / (p - q)  # eq. (2)
    return est * (n_total / n_users)


def support_threshold(theta: float, n_users: int, p: float, q: float) -> int:
    """Smallest integer support that may reach ``theta * n`` after :func:`scaled_estimate`.

    ``est >= theta n  <=>  I >= n_users q + theta n_users (p - q)``; rounded
    down (a superset; the exact test is applied to the estimates).

    Parameters
    ----------
    theta : float
        Frequency threshold in (0, 1).
    n_users : int
        Number of users who answered.
    p, q : float
        The oracle's support probabilities.

    Returns
    -------
    int
    """
    return int(math.floor(n_users * q + theta * n_users * (p - q) - 1e-6))
