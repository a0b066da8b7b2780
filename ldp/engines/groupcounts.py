"""How many users of each group hold each distinct value: the count engine's true counts, as sparse rows.

A run of the count engine (:class:`ldp.engines.CountSupport`) needs, for every group of its plan,
how many of the group's users hold each distinct value of the data set.  A group holds at most as
many distinct values as it has users, so with many groups (TreeHist's 160 levels on the URL data:
about 7,000 users a group among 27,000 distinct values) most of a dense ``(groups, distinct values)``
table is zeros.  :class:`GroupCounts` keeps only the values a group holds, sorted (compressed sparse
rows), counted in one pass over the users ordered by value (:func:`users_by_value`, kept per data
set: a grid's repetitions of one data set reuse it), or through the dense table when that is small.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..core import Dataset

__all__ = ["GroupCounts", "users_by_value"]


@njit(cache=True)
def _by_value(user_index, n_distinct):  # pragma: no cover - compiled
    # stable counting sort of the users by the index of their value
    starts = np.zeros(n_distinct + 1, dtype=np.int64)
    for i in range(user_index.shape[0]):
        starts[user_index[i] + 1] += 1
    for d in range(n_distinct):
        starts[d + 1] += starts[d]
    fill = starts[:-1].copy()
    order = np.empty(user_index.shape[0], dtype=np.int64)
    for i in range(user_index.shape[0]):
        d = user_index[i]
        order[fill[d]] = i
        fill[d] += 1
    return order, starts


_BY_VALUE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` as read-only ``int32`` when its values fit (half the memory to stream per run), else ``int64``."""
    out = a.astype(np.int32) if a.shape[0] == 0 or int(a.max()) < 2**31 else a.astype(np.int64)
    out.flags.writeable = False
    return out


def users_by_value(data: Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The users of ``data`` ordered by the index of their value, where each value's users start, the indices.

    Returns ``(order, starts, index)``: the users holding ``data.distinct[d]``
    are ``order[starts[d]:starts[d + 1]]``, in increasing order, and
    ``index`` is ``data.user_index`` (both ``int32`` when ``n < 2**31``).
    Computed once per data set (``O(n)``) and kept with it (dropped with the data set).
    """
    hit = _BY_VALUE.get(data)
    if hit is None:
        order, starts = _by_value(data.user_index, data.n_distinct)
        starts.flags.writeable = False
        hit = _BY_VALUE[data] = (_narrow(order), starts, _narrow(data.user_index))
    return hit


@njit(cache=True)
def _count_rows(labels, order, starts, n_groups):  # pragma: no cover - compiled
    # Walk the users value by value: a group's first user of value d opens its entry (d, 1), the next
    # ones add 1, so each row comes out sorted by value.  Row g has room for min(size of g, distinct)
    # entries; the rows are packed at the end.
    D = starts.shape[0] - 1
    sizes = np.zeros(n_groups, dtype=np.int64)
    for i in range(labels.shape[0]):
        sizes[labels[i]] += 1
    room = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        room[g + 1] = room[g] + min(sizes[g], D)
    fill = room[:-1].copy()
    index = np.empty(room[n_groups], dtype=np.int64)
    counts = np.empty(room[n_groups], dtype=np.int64)
    last = np.full(n_groups, -1, dtype=np.int64)
    for d in range(D):
        for j in range(starts[d], starts[d + 1]):
            g = labels[order[j]]
            if last[g] == d:
                counts[fill[g] - 1] += 1
            else:
                last[g] = d
                index[fill[g]] = d
                counts[fill[g]] = 1
                fill[g] += 1
    indptr = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        indptr[g + 1] = indptr[g] + fill[g] - room[g]
    out_index = np.empty(indptr[n_groups], dtype=np.int64)
    out_counts = np.empty(indptr[n_groups], dtype=np.int64)
    for g in range(n_groups):
        k = indptr[g + 1] - indptr[g]
        out_index[indptr[g]:indptr[g + 1]] = index[room[g]:room[g] + k]
        out_counts[indptr[g]:indptr[g + 1]] = counts[room[g]:room[g] + k]
    return indptr, out_index, out_counts


@njit(cache=True)
def _count_table(labels, user_index, n_groups, n_distinct):  # pragma: no cover - compiled
    # The same rows through a dense (groups, distinct values) table, when it is small (in cache):
    # one sequential pass over the users, then the nonzero entries row by row.
    table = np.zeros((n_groups, n_distinct), dtype=np.int64)
    for i in range(labels.shape[0]):
        table[labels[i], user_index[i]] += 1
    indptr = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        held = 0
        for d in range(n_distinct):
            if table[g, d]:
                held += 1
        indptr[g + 1] = indptr[g] + held
    index = np.empty(indptr[n_groups], dtype=np.int64)
    counts = np.empty(indptr[n_groups], dtype=np.int64)
    k = 0
    for g in range(n_groups):
        for d in range(n_distinct):
            if table[g, d]:
                index[k] = d
                counts[k] = table[g, d]
                k += 1
    return indptr, index, counts


@dataclass(frozen=True)
class GroupCounts:
    """How many users of each group hold each distinct value, as compressed sparse rows.

    Row ``g`` is ``index[indptr[g]:indptr[g + 1]]`` (positions in the data
    set's distinct values, increasing) and the matching ``counts``.  A row
    lists every value a user of the group holds; a count may be 0 after
    :meth:`without` removed the users who held it.

    Attributes
    ----------
    indptr : numpy.ndarray
        ``(groups + 1,)`` ``int64``: where each row starts.
    index : numpy.ndarray
        Distinct-value positions (``int64``), sorted within each row.
    counts : numpy.ndarray
        Users of the row's group holding that value (``int64``).
    n_distinct : int
        Number of distinct values (the width of the dense table).
    """

    indptr: np.ndarray
    index: np.ndarray
    counts: np.ndarray
    n_distinct: int

    @classmethod
    def count(cls, data: Dataset, labels: np.ndarray, n_groups: int) -> GroupCounts:
        """The counts of ``data``'s users split by ``labels`` (a group in ``[0, n_groups)`` per user).

        Counted through the dense table when it has at most ``n`` entries (it
        stays in cache: faster), else value by value (:func:`users_by_value`);
        the rows are the same.
        """
        if labels.shape[0] != data.n:
            raise ValueError(f"labels must give the group of each of the data set's n = {data.n} users, "
                             f"got {labels.shape[0]} labels")
        order, starts, user_index = users_by_value(data)
        if int(n_groups) * data.n_distinct <= data.n:
            indptr, index, counts = _count_table(labels, user_index, int(n_groups), data.n_distinct)
        else:
            indptr, index, counts = _count_rows(labels, order, starts, int(n_groups))
        return cls(indptr, index, counts, data.n_distinct)

    @classmethod
    def from_dense(cls, table: np.ndarray) -> GroupCounts:
        """The sparse rows of a dense ``(groups, distinct values)`` table (its nonzero entries)."""
        g, d = np.nonzero(table)
        indptr = np.zeros(table.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(g, minlength=table.shape[0]), out=indptr[1:])
        return cls(indptr, d.astype(np.int64), table[g, d].astype(np.int64), int(table.shape[1]))

    @property
    def n_groups(self) -> int:
        """Number of groups (rows)."""
        return int(self.indptr.shape[0] - 1)

    def sizes(self) -> np.ndarray:
        """Users per group (``int64``): each row's total."""
        total = np.zeros(self.counts.shape[0] + 1, dtype=np.int64)
        np.cumsum(self.counts, out=total[1:])
        return total[self.indptr[1:]] - total[self.indptr[:-1]]

    def row(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """Row ``g``: the distinct-value positions its users hold (increasing) and how many hold each."""
        a, b = self.indptr[g], self.indptr[g + 1]
        return self.index[a:b], self.counts[a:b]

    def rows(self, groups) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``groups`` one after the other (a value held in several groups appears once per group)."""
        if len(groups) == 1:
            return self.row(groups[0])
        parts = [self.row(g) for g in groups]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def dense_row(self, g: int) -> np.ndarray:
        """Row ``g`` as a dense ``int64`` array over the distinct values."""
        out = np.zeros(self.n_distinct, dtype=np.int64)
        idx, cnt = self.row(g)
        out[idx] = cnt
        return out

    def dense(self) -> np.ndarray:
        """The dense ``(groups, distinct values)`` ``int64`` table."""
        out = np.zeros((self.n_groups, self.n_distinct), dtype=np.int64)
        g = np.repeat(np.arange(self.n_groups), np.diff(self.indptr))
        out[g, self.index] = self.counts
        return out

    def without(self, labels: np.ndarray, index: np.ndarray, *, keep_zeros: bool = True) -> GroupCounts:
        """These counts less one user of group ``labels[i]`` holding value ``index[i]``, for each ``i``.

        ``keep_zeros``: a value no remaining user of a group holds stays in the group's row with count 0
        (True: the rows of all users, the removed ones counted 0), or leaves it (False: exactly the rows of
        the remaining users, as :meth:`count` would give them).

        Raises
        ------
        ValueError
            If a removed user's (group, value) is not counted here.
        """
        D = max(self.n_distinct, 1)
        g = np.repeat(np.arange(self.n_groups, dtype=np.int64), np.diff(self.indptr))
        keys = g * D + self.index  # increasing: rows in group order, each sorted
        want = np.asarray(labels, dtype=np.int64) * D + np.asarray(index, dtype=np.int64)
        counts = self.counts - _removed(keys, want, self.n_groups * D)
        if np.any(counts < 0):
            raise ValueError("the users to remove must be counted in these group counts")
        if keep_zeros:
            return GroupCounts(self.indptr, self.index, counts, self.n_distinct)
        held = counts > 0
        indptr = np.zeros_like(self.indptr)
        np.cumsum(np.bincount(g[held], minlength=self.n_groups), out=indptr[1:])
        return GroupCounts(indptr, self.index[held], counts[held], self.n_distinct)


def _removed(keys: np.ndarray, want: np.ndarray, size: int) -> np.ndarray:
    """How many of ``want`` equal each of the increasing ``keys`` (all in ``[0, size)``); every one must be a key.

    Counted over the dense range when it is not much larger than the arrays (one ``bincount``), else each
    wanted key is found by binary search.
    """
    bad = ValueError("the users to remove must be counted in these group counts")
    if want.size == 0:
        return np.zeros(keys.shape[0], dtype=np.int64)
    if keys.shape[0] == 0 or int(want.min()) < 0 or int(want.max()) >= size:
        raise bad
    if size <= 4 * (keys.shape[0] + want.shape[0]):
        out = np.bincount(want, minlength=size)[keys]
        if int(out.sum()) != want.shape[0]:  # some wanted key is not among the keys
            raise bad
        return out
    pos = np.minimum(np.searchsorted(keys, want), keys.shape[0] - 1)
    if np.any(keys[pos] != want):
        raise bad
    return np.bincount(pos, minlength=keys.shape[0])
