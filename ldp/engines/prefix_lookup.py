"""Where one group's held answers to a prefix question fall in a candidate set, without listing the answers.

A prefix question's tally (:func:`ldp.engines.tallies.segment_tally`) lists the distinct answers sorted,
and the distinct values of one group's row (or of every user) come sorted too, so the answers held
come out sorted and the distinct values sharing an answer are one run of them.  The count engine
needs, for the candidates some user holds, their positions in the set and how many hold each; the
general path (:func:`ldp.engines.tallies.held_answers`, then the set's ``index_of``) lists every
answer held (as many as the row's distinct values) and looks each up.  When the candidates are few
the look-up can go the other way, at the cost of the candidates rather than of the row:

* :func:`extension_counts` -- :class:`ldp.core.ExtendCandidates` (TreeHist's and PEM's levels: kept
  parents, each extended by ``eta`` bits): for each kept parent, the answers extending it are a run
  of the sorted answers and the values holding them a run of the row, both found by bisection;
* :func:`explicit_counts` -- :class:`ldp.core.ExplicitCandidates` (every protocol's final step): each
  candidate's answer position by bisection in the sorted answers, its values' run in the row by two
  more.

The result is the general path's, entry for entry.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..core import ExplicitCandidates, ExtendCandidates
from ..numeric import kernel_input
from ..values import match_sorted
from .tallies import AnswerTally

__all__ = ["extension_counts", "explicit_counts"]


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
    return _lookup(kernel_input(idx), kernel_input(cnt), kernel_input(t.inverse), kernel_input(unique),
                   kernel_input(parents), cands.eta)



def explicit_counts(t: AnswerTally, idx: np.ndarray, cnt: np.ndarray,
                    cands: ExplicitCandidates) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``cands`` of the candidates held and how many hold each, by increasing position.

    Parameters and returns as :func:`extension_counts`, for an explicit candidate list whose values
    have the prefix question's width.
    """
    if t.starts is None or t.unique is None:
        raise ValueError("explicit_counts needs the tally of a prefix question (sorted distinct answers)")
    pos = match_sorted(t.unique, cands.values())  # each candidate's answer position, -1 when no value has it
    found = np.flatnonzero(pos >= 0)
    if found.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=cnt.dtype)
    answer = pos[found]
    first = t.starts[answer]  # the distinct values with the answer: [first, end)
    nxt = answer + 1
    end = np.where(nxt < t.starts.shape[0], t.starts[np.minimum(nxt, t.starts.shape[0] - 1)], t.inverse.shape[0])
    lo = np.searchsorted(idx, first)
    hi = np.searchsorted(idx, end)
    return _run_sums(kernel_input(found), kernel_input(lo), kernel_input(hi), kernel_input(cnt))


@njit(cache=True)
def _run_sums(found, lo, hi, cnt):  # pragma: no cover - compiled
    # each candidate's count: cnt summed over its run [lo, hi) of the row, in order; kept when above 0
    out_idx = np.empty(found.shape[0], dtype=np.int64)
    out_cnt = np.empty(found.shape[0], dtype=cnt.dtype)
    k = 0
    for i in range(found.shape[0]):
        if hi[i] <= lo[i]:
            continue
        total = cnt[lo[i]]
        for j in range(lo[i] + 1, hi[i]):
            total += cnt[j]
        if total > 0:
            out_idx[k] = found[i]
            out_cnt[k] = total
            k += 1
    return out_idx[:k], out_cnt[:k]

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
