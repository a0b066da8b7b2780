"""Where one group's held answers to a prefix question fall in an extension candidate set, in one pass.

TreeHist's and PEM's levels query :class:`ldp.core.ExtendCandidates` (kept parents, each extended by
``eta`` bits) with a prefix question.  The count engine needs, for the candidates some user holds,
their positions in the set and how many hold each.  A prefix question's tally
(:func:`ldp.engines.tallies.segment_tally`) lists the distinct answers sorted, and the distinct values of
one group's row come sorted too, so the answers held come out sorted, their parents (the answer
shifted right by ``eta`` bits) non-decreasing, and their positions increasing.  For each kept parent
(few: TreeHist keeps about ``k`` per level) the answers extending it are one run of the sorted
answers and the values holding them one run of the row, both found by bisection: the cost is that of
the candidates held, not of the row, and none of the per-level arrays of answers, parent words and
sort keys that the general path (:func:`ldp.engines.tallies.held_answers`, then
:meth:`ldp.core.ExtendCandidates.index_of`) builds is made.  The result is the same, entry for entry.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..core import ExtendCandidates
from .tallies import AnswerTally

__all__ = ["extension_counts"]


def extension_counts(t: AnswerTally, idx: np.ndarray, cnt: np.ndarray,
                     cands: ExtendCandidates) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``cands`` of the answers held and how many hold each, by increasing position.

    Parameters
    ----------
    t : AnswerTally
        The tally of a prefix question (``t.starts`` set: answers of sorted values come out sorted)
        whose answers have ``cands.width`` bits.
    idx : numpy.ndarray
        Distinct-value positions held, increasing (one group's row, or every distinct value).
    cnt : numpy.ndarray
        How many users hold each of ``idx``.
    cands : ExtendCandidates

    Returns
    -------
    index : numpy.ndarray
        ``int64`` positions in ``cands`` of the candidates held by someone (count above 0), increasing.
    counts : numpy.ndarray
        How many users hold each (``cnt``'s dtype).
    """
    if t.starts is None or t.unique is None:
        raise ValueError("extension_counts needs the tally of a prefix question (sorted distinct answers)")
    unique = t.unique if t.unique.ndim == 2 else t.unique.reshape(-1, 1)
    parents = cands.parents if cands.parents.ndim == 2 else cands.parents.reshape(-1, 1)
    return _lookup(np.ascontiguousarray(idx), np.ascontiguousarray(cnt), t.inverse, unique,
                  np.ascontiguousarray(parents), cands.eta)


@njit(cache=True)
def _parent_words(row, eta, out):  # pragma: no cover - compiled
    # row >> eta (big-endian words), its last len(out) words: values._shift_right_words for one row, eta < 64
    W = row.shape[0]
    for j in range(out.shape[0]):  # j counts result words from the least significant
        src = W - 1 - j
        col = row[src] >> np.uint64(eta)
        if eta and src - 1 >= 0:
            col = col | (row[src - 1] << np.uint64(64 - eta))
        out[out.shape[0] - 1 - j] = col


@njit(cache=True)
def _compare(a, b):  # pragma: no cover - compiled
    # -1, 0, 1 as the big-endian word rows a and b (equal length) compare
    for w in range(a.shape[0]):
        if a[w] < b[w]:
            return -1
        if a[w] > b[w]:
            return 1
    return 0


@njit(cache=True)
def _first_answer_from(unique, eta, parent, lo, par):  # pragma: no cover - compiled
    # the first position at or after lo of the sorted answers whose parent is not below ``parent``
    hi = unique.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        _parent_words(unique[mid], eta, par)
        if _compare(par, parent) < 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _first_held_from(idx, inverse, answer, lo):  # pragma: no cover - compiled
    # the first entry at or after lo of idx whose answer position is not below ``answer``
    hi = idx.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if inverse[idx[mid]] < answer:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _lookup(idx, cnt, inverse, unique, parents, eta):  # pragma: no cover - compiled
    # For each parent (sorted), the answers extending it are a run of the sorted distinct answers and
    # the values of idx holding them a run of idx: both found by bisection, then summed answer by answer.
    n = idx.shape[0]
    out_idx = np.empty(n, dtype=np.int64)
    out_cnt = np.empty(n, dtype=cnt.dtype)
    par = np.empty(parents.shape[1], dtype=np.uint64)
    nxt = np.empty(parents.shape[1], dtype=np.uint64)
    mask = np.uint64((1 << eta) - 1)
    k = 0
    u = 0  # answers before u have parents below the current one
    i = 0  # entries of idx before i hold answers before u
    for j in range(parents.shape[0]):
        u = _first_answer_from(unique, eta, parents[j], u, par)
        i = _first_held_from(idx, inverse, u, i)
        while i < n:
            pos = inverse[idx[i]]
            row = unique[pos]
            _parent_words(row, eta, nxt)
            if _compare(nxt, parents[j]) != 0:  # past this parent's answers
                break
            total = cnt[i]
            i += 1
            while i < n and inverse[idx[i]] == pos:  # the run of values with this answer: summed in order
                total += cnt[i]
                i += 1
            if total > 0:
                out_idx[k] = (j << eta) + np.int64(row[row.shape[0] - 1] & mask)
                out_cnt[k] = total
                k += 1
    return out_idx[:k], out_cnt[:k]
