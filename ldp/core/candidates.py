"""Candidate sets: what the aggregator queries in one step.

Each set knows its ``size`` (the number of frequency-oracle queries it
costs), its ``width`` in bits, its ``values()``, the values at given
positions (``values_at``) and, for the count-level engine, the position of
given answers (``index_of``, ``-1`` when absent).

* :class:`RangeCandidates` -- every answer ``0 .. size-1`` (a whole segment
  domain, or MCM's channel x block pairs);
* :class:`ExtendCandidates` -- PEM's ``D_i = C_{i-1} x {0,1}^eta`` (section 4.1);
* :class:`ExplicitCandidates` -- an explicit list (the final step's candidates).

:func:`join_parts` builds whole values from the parts found per segment
(the strawman's product, SPM's cliques, MCM's channels, SFP's puzzles);
:func:`join_products` every combination of lists of one-word parts (SFP's puzzles).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
from numba import njit

from ..values import concat, extend, match_sorted, n_words, prefix, sort_unique

__all__ = ["Candidates", "RangeCandidates", "ExtendCandidates", "ExplicitCandidates", "join_parts", "join_products"]


class Candidates(ABC):
    """A candidate set: ``size`` candidates (oracle queries) of ``width`` bits each."""

    size: int
    width: int

    @abstractmethod
    def values(self) -> np.ndarray:
        """Every candidate, in the set's order (canonical ``width``-bit values)."""

    @abstractmethod
    def values_at(self, index: np.ndarray) -> np.ndarray:
        """The candidates at positions ``index``."""

    @abstractmethod
    def index_of(self, answers: np.ndarray) -> np.ndarray:
        """Position of each answer in the set (``int64``), ``-1`` when it is not a candidate."""


class RangeCandidates(Candidates):
    """All answers ``0 .. size-1`` (a whole segment domain, or MCM's channel x block pairs)."""

    def __init__(self, size: int, width: int):
        self.size = int(size)
        self.width = int(width)

    def values(self) -> np.ndarray:
        return np.arange(self.size, dtype=np.uint64)

    def values_at(self, index: np.ndarray) -> np.ndarray:
        return np.asarray(index, dtype=np.uint64)

    def index_of(self, answers: np.ndarray) -> np.ndarray:
        a = answers.astype(np.int64) if answers.ndim == 1 else np.full(answers.shape[0], -1, np.int64)
        return np.where(a < self.size, a, -1)


class ExtendCandidates(Candidates):
    """PEM's ``D_i = C_{i-1} x {0,1}^eta`` (section 4.1), ordered by parent then suffix.

    ``parents`` must be sorted and distinct (canonical ``parent_bits``-bit values).
    """

    def __init__(self, parents: np.ndarray, parent_bits: int, eta: int):
        self.parents = parents
        self.parent_bits = int(parent_bits)
        self.eta = int(eta)
        self.width = self.parent_bits + self.eta
        self.size = parents.shape[0] << self.eta

    def values(self) -> np.ndarray:
        return extend(self.parents, self.parent_bits, self.eta)

    def values_at(self, index: np.ndarray) -> np.ndarray:
        index = np.asarray(index, dtype=np.int64)
        par = np.take(self.parents, index >> self.eta, axis=0)  # for rows of words, faster than indexing
        suf = (index & ((1 << self.eta) - 1)).astype(np.uint64)
        return concat(par, self.parent_bits, suf, self.eta)

    def index_of(self, answers: np.ndarray) -> np.ndarray:
        par = prefix(answers, self.width, self.parent_bits)
        low = answers if answers.ndim == 1 else answers[:, -1]
        suf = (low & np.uint64((1 << self.eta) - 1)).astype(np.int64)
        pos = match_sorted(self.parents, par)
        return np.where(pos >= 0, (pos << self.eta) + suf, -1)


class ExplicitCandidates(Candidates):
    """An explicit candidate list (sorted and made distinct on construction)."""

    def __init__(self, values: np.ndarray, width: int):
        self._values = sort_unique(values)
        self.width = int(width)
        self.size = self._values.shape[0]

    def values(self) -> np.ndarray:
        return self._values

    def values_at(self, index: np.ndarray) -> np.ndarray:
        return np.take(self._values, np.asarray(index, dtype=np.int64), axis=0)

    def index_of(self, answers: np.ndarray) -> np.ndarray:
        return match_sorted(self._values, answers)


def join_parts(parts: Sequence[np.ndarray], widths: Sequence[int]) -> np.ndarray:
    """Concatenate per-segment parts into whole values: ``parts[0] || parts[1] || ...``.

    Parameters
    ----------
    parts : sequence of numpy.ndarray
        Equal-length canonical value arrays, the ``j``-th of ``widths[j]`` bits.
    widths : sequence of int
        Bits of each part.

    Returns
    -------
    numpy.ndarray
        Canonical ``sum(widths)``-bit values (empty parts give an empty array of that width).
    """
    total = sum(int(w) for w in widths)
    if n_words(total) > 1 and all(p.ndim == 1 for p in parts):  # one-word parts (fragments, blocks) into words
        return _join_words(parts, [int(w) for w in widths], total)
    vals, bits = parts[0], int(widths[0])
    for part, w in zip(parts[1:], widths[1:]):
        vals = concat(vals, bits, part, int(w))
        bits += int(w)
    return vals


def _join_words(parts: Sequence[np.ndarray], widths: list[int], total: int) -> np.ndarray:
    """:func:`join_parts` of one-word parts into ``total``-bit values of several words, each part OR-ed in place."""
    W = n_words(total)
    out = np.zeros((parts[0].shape[0], W), dtype=np.uint64)
    shift = total
    for part, w in zip(parts, widths):
        part = np.asarray(part, dtype=np.uint64)  # canonical values: any integer dtype, as concat stores them
        shift -= w  # the part's bits are [shift, shift + w) of the integer
        word, bit = divmod(shift, 64)  # word counted from the least significant
        out[:, W - 1 - word] |= part << np.uint64(bit)
        if bit + w > 64:  # the part runs into the next more significant word
            out[:, W - 2 - word] |= part >> np.uint64(64 - bit)
    return out


def join_products(groups: Sequence[Sequence[np.ndarray]], widths: Sequence[int]) -> np.ndarray:
    """Every combination of one part per position, joined into whole values, group after group.

    For each group (a list of one array of parts per position), its combinations in the order of
    ``itertools.product`` (the last position varying fastest), each joined as :func:`join_parts`
    joins them: ``join_parts`` of the product's columns, concatenated over the groups, built in one
    compiled pass without the columns.

    Parameters
    ----------
    groups : sequence of sequence of numpy.ndarray
        Per group, per position, the candidate parts (canonical values of ``widths[l]`` bits,
        ``widths[l] <= 64``), each list non-empty.
    widths : sequence of int
        Bits of each position's parts.

    Returns
    -------
    numpy.ndarray
        Canonical ``sum(widths)``-bit values, ``sum over groups of prod(len(list))`` of them.
    """
    widths = [int(w) for w in widths]
    if any(not 1 <= w <= 64 for w in widths):
        raise ValueError(f"join_products joins parts of 1 to 64 bits, got widths {widths}")
    total = sum(widths)
    W = n_words(total)
    P = len(widths)
    lens = np.array([[len(part) for part in g] for g in groups], dtype=np.int64).reshape(-1, P)
    if (lens < 1).any():
        raise ValueError("join_products needs at least one part per position")
    flat = [np.asarray(part, dtype=np.uint64).reshape(-1) for g in groups for part in g]
    parts = np.concatenate(flat) if flat else np.zeros(0, dtype=np.uint64)
    shifts = total - np.cumsum(widths)  # position l's bits are [shifts[l], shifts[l] + widths[l]) of the integer
    out = _products(parts, lens, shifts.astype(np.int64), np.array(widths, dtype=np.int64), W)
    return out[:, 0].copy() if W == 1 else out


@njit(cache=True)
def _place(acc, x, shift, width, W):  # pragma: no cover - compiled
    # OR the part x (width bits) into the big-endian words acc at bit shift of the integer
    word = shift // 64
    bit = shift % 64
    acc[W - 1 - word] |= x << np.uint64(bit)
    if bit + width > 64:
        acc[W - 2 - word] |= x >> np.uint64(64 - bit)


@njit(cache=True)
def _products(parts, lens, shifts, widths, W):  # pragma: no cover - compiled
    G, P = lens.shape
    total = 0
    for g in range(G):
        size = 1
        for l in range(P):
            size *= lens[g, l]
        total += size
    out = np.empty((total, W), dtype=np.uint64)
    acc = np.zeros((P + 1, W), dtype=np.uint64)  # acc[l + 1]: the words of positions 0 .. l as the counter stands
    ctr = np.zeros(P, dtype=np.int64)
    start = np.zeros(P, dtype=np.int64)
    r = 0
    base = 0
    for g in range(G):
        for l in range(P):
            start[l] = base
            base += lens[g, l]
            ctr[l] = 0
        first = 0  # positions from first on need their words again
        while True:
            for l in range(first, P):
                for w in range(W):
                    acc[l + 1, w] = acc[l, w]
                _place(acc[l + 1], parts[start[l] + ctr[l]], shifts[l], widths[l], W)
            for w in range(W):
                out[r, w] = acc[P, w]
            r += 1
            l = P - 1  # the counter's next state: the last position fastest
            while l >= 0:
                ctr[l] += 1
                if ctr[l] < lens[g, l]:
                    break
                ctr[l] = 0
                l -= 1
            if l < 0:
                break
            first = l
    return out
