"""Compiled loops of the attacks and the detector: hash-seed search and the detector's null tails.

Every function hashes with the family of :mod:`ldp.oracles.hashing` (the
coefficients of a 64-bit seed expanded by splitmix64, multiply-add over the
value's 32-bit chunks, ``h = (u * cells) >> 32``), written out here so that a
seed's hashes of a few answers are computed without building ``(users x seeds
x answers)`` arrays; ``tests/test_attacks.py`` checks them against
:func:`ldp.oracles.hashing.hash_values`.

* :func:`hash_cells` -- ``H_seed(a)`` for every seed and answer;
* :func:`olh_search`, :func:`hr_search` -- the maximal-gain seed search: of
  ``T`` seeds per fake user, the seed and output that support the most answers;
* :func:`olh_null_tails`, :func:`hr_null_tails`, :func:`cms_null_tails` --
  for the detector (:mod:`ldp.attacks.defences`): given the hash cells of the
  released answers under one random seed, the probability that an honest
  report supports at least ``c`` of them, for a user holding each answer (and
  one holding none); averaged over seeds by the caller.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..oracles.kernels import mix64

__all__ = ["hash_cells", "olh_search", "hr_search", "olh_null_tails", "hr_null_tails", "cms_null_tails"]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always", cache=True)
def _coefs(seed, C, out):  # pragma: no cover - compiled
    """The hash coefficients ``b, a_0 .. a_{C-1}`` of ``seed`` into ``out[0 .. C]``."""
    state = seed + _GAMMA
    out[0] = mix64(state)
    for i in range(C):
        state = state + _GAMMA
        out[i + 1] = mix64(state)


@njit(inline="always", cache=True)
def _cell(coefs, chunks, a, cells):  # pragma: no cover - compiled
    """``H`` (coefficients ``coefs``) of answer ``a`` (row of ``chunks``) in ``[cells]``."""
    acc = coefs[0]
    for i in range(chunks.shape[1]):
        acc = acc + coefs[i + 1] * np.uint64(chunks[a, i])
    return ((acc >> np.uint64(32)) * np.uint64(cells)) >> np.uint64(32)


@njit(cache=True)
def hash_cells(seeds, chunks, cells):  # pragma: no cover - compiled
    """``out[s, a] = H_{seeds[s]}(answer a)`` in ``[cells]`` (``chunks``: ``(A, C)`` ``uint32``)."""
    S, A = seeds.shape[0], chunks.shape[0]
    out = np.empty((S, A), dtype=np.uint64)
    co = np.empty(chunks.shape[1] + 1, dtype=np.uint64)
    for s in range(S):
        _coefs(seeds[s], chunks.shape[1], co)
        for a in range(A):
            out[s, a] = _cell(co, chunks, a, cells)
    return out


@njit(cache=True)
def olh_search(seeds, chunks, d_prime):  # pragma: no cover - compiled
    """For each fake user (row of ``seeds``, ``T`` candidate seeds): the seed and ``y`` hit by most answers.

    Returns ``(seed, y, count)``: the first seed (in row order) whose most
    crowded hash bin holds the most answers, that bin, and how many answers
    it holds (the report supports exactly those).
    """
    n, T = seeds.shape
    A = chunks.shape[0]
    best_seed = np.empty(n, dtype=np.uint64)
    best_y = np.empty(n, dtype=np.uint64)
    best_count = np.zeros(n, dtype=np.int64)
    h = np.empty(A, dtype=np.uint64)
    load = np.zeros(d_prime, dtype=np.int64)  # answers per bin, reset after each seed
    co = np.empty(chunks.shape[1] + 1, dtype=np.uint64)
    for i in range(n):
        best_seed[i] = seeds[i, 0]
        best_y[i] = 0
        for t in range(T):
            s = seeds[i, t]
            _coefs(s, chunks.shape[1], co)
            top = 0  # the fullest bin's load so far
            done = A
            for a in range(A):
                h[a] = _cell(co, chunks, a, d_prime)
                load[h[a]] += 1
                if load[h[a]] > top:
                    top = load[h[a]]
                if top + (A - 1 - a) <= best_count[i]:  # even the answers left cannot make it win: next seed
                    done = a + 1
                    break
            if top > best_count[i]:  # a new best: its bin is the first answer's (in order) of a fullest bin
                topv = h[0]
                for a in range(A):
                    if load[h[a]] == top:
                        topv = h[a]
                        break
                best_count[i], best_seed[i], best_y[i] = top, s, topv
            for a in range(done):
                load[h[a]] = 0
            if top == A:
                break
    return best_seed, best_y, best_count


@njit(inline="always", cache=True)
def _even(x):  # pragma: no cover - compiled
    """Whether the popcount of ``x`` (below ``2**16``) is even."""
    x ^= x >> np.uint64(8)
    x ^= x >> np.uint64(4)
    x ^= x >> np.uint64(2)
    x ^= x >> np.uint64(1)
    return (x & np.uint64(1)) == np.uint64(0)


@njit(cache=True)
def hr_search(seeds, chunks, blocks, block_size):  # pragma: no cover - compiled
    """Hadamard response: for each fake user, the seed and symbol ``y`` with the largest net support.

    ``y`` supports answer ``a`` iff ``y // b == blk(h_a)`` and
    ``popcount(row(h_a) & (y % b))`` is even (:class:`ldp.oracles.HR`).  A
    symbol also supports values it was not built for: position 0 of a block
    supports every cell of the block (``(b - 1) / cells`` of all values), any
    other position ``(b/2 - 1) / cells``.  The search maximizes the support
    of the ``A`` answers minus ``A`` times that share (what the answers gain
    over a value they were not built for), over ``T`` seeds and every symbol
    of the blocks holding answers.  Returns ``(seed, y, count)`` (``count``:
    answers supported).
    """
    n, T = seeds.shape
    A = chunks.shape[0]
    b = np.uint64(block_size)
    bm1 = np.uint64(block_size - 1)
    cells = blocks * (block_size - 1)
    rho0 = (block_size - 1) / cells
    rho1 = (block_size // 2 - 1) / cells
    best_seed = np.empty(n, dtype=np.uint64)
    best_y = np.empty(n, dtype=np.uint64)
    best_count = np.zeros(n, dtype=np.int64)
    blk = np.empty(A, dtype=np.uint64)
    row = np.empty(A, dtype=np.uint64)
    order = np.empty(A, dtype=np.int64)
    par = np.empty((block_size, block_size), dtype=np.int32)  # par[row, pos]: row & pos has even popcount
    for r_ in range(block_size):
        for p_ in range(block_size):
            par[r_, p_] = 1 if _even(np.uint64(r_ & p_)) else 0
    rowi = np.empty(A, dtype=np.int64)
    cnt = np.empty(block_size, dtype=np.int32)
    co = np.empty(chunks.shape[1] + 1, dtype=np.uint64)
    for i in range(n):
        best_seed[i] = seeds[i, 0]
        best_y[i] = 0
        best = -1e300
        for t in range(T):
            s = seeds[i, t]
            _coefs(s, chunks.shape[1], co)
            for a in range(A):
                h = _cell(co, chunks, a, cells)
                blk[a] = h // bm1
                row[a] = h - blk[a] * bm1 + np.uint64(1)
                rowi[a] = np.int64(row[a])
            for a in range(A):  # answers sorted by block (insertion sort: A is small)
                order[a] = a
                k = a
                while k > 0 and blk[order[k - 1]] > blk[order[k]]:
                    order[k - 1], order[k] = order[k], order[k - 1]
                    k -= 1
            lo = 0
            while lo < A:  # each block holding answers: the answers order[lo:hi]
                hi = lo + 1
                while hi < A and blk[order[hi]] == blk[order[lo]]:
                    hi += 1
                if (hi - lo) - A * rho1 <= best:  # no symbol of it supports more than its hi - lo answers
                    lo = hi
                    continue
                cnt[:] = 0
                for k in range(lo, hi):
                    rk = rowi[order[k]]
                    for pos in range(block_size):
                        cnt[pos] += par[rk, pos]
                for pos in range(block_size):
                    net = cnt[pos] - A * (rho0 if pos == 0 else rho1)
                    if net > best:
                        best, best_count[i], best_seed[i] = net, cnt[pos], s
                        best_y[i] = blk[order[lo]] * b + np.uint64(pos)
                lo = hi
    return best_seed, best_y, best_count


# ---------------------------------------------------------------------------
# the detector's null: P(an honest report supports >= c of the answers | its seed), per case
# ---------------------------------------------------------------------------
@njit(cache=True)
def olh_null_tails(cells, d_prime, p):  # pragma: no cover - compiled
    """OLH: ``out[j, c]`` summed over seeds; case ``j < A``: the user holds answer ``j``, ``j = A``: none.

    ``cells``: ``(M, A + 1)`` hash cells of the ``A`` answers and of one value
    outside them under ``M`` random seeds.  Given the seed, a report supports
    ``mult(y)`` answers (those hashed to ``y``); ``y`` is the user's cell ``z``
    with probability ``p``, any other cell with ``(1 - p) / (d' - 1)``, so
    ``P(count >= c) = p [mult(z) >= c] + (1 - p) / (d' - 1) (#{cells with mult >= c} - [mult(z) >= c])``.
    """
    M, A1 = cells.shape
    A = A1 - 1
    out = np.zeros((A1, A + 2))
    other = (1.0 - p) / (d_prime - 1)
    mult = np.zeros(A1, dtype=np.int64)
    for s in range(M):
        for j in range(A1):
            c = 0
            for a in range(A):
                if cells[s, a] == cells[s, j]:
                    c += 1
            mult[j] = c
        # number of distinct cells with multiplicity >= c, for c = 1 .. A
        ncell = np.zeros(A + 2)
        for a in range(A):
            firsts = True
            for a1 in range(a):
                if cells[s, a1] == cells[s, a]:
                    firsts = False
                    break
            if firsts:
                for c in range(1, mult[a] + 1):
                    ncell[c] += 1.0
        for j in range(A1):
            out[j, 0] += 1.0
            for c in range(1, A + 2):
                own = 1.0 if mult[j] >= c else 0.0
                out[j, c] += p * own + other * (ncell[c] - own)
    return out


@njit(cache=True)
def hr_null_tails(cells, blocks, block_size, e_eps, normalizer):  # pragma: no cover - compiled
    """Hadamard response: as :func:`olh_null_tails`; ``P(y) = e^eps / Z`` inside ``C_z``, ``1 / Z`` outside.

    ``P(count >= c) = (|Y_c| + (e^eps - 1) |Y_c cap C_z|) / Z`` with ``Y_c`` the
    symbols supporting at least ``c`` answers (all in blocks holding an answer).
    """
    M, A1 = cells.shape
    A = A1 - 1
    bm1 = np.uint64(block_size - 1)
    out = np.zeros((A1, A + 2))
    blk = np.empty(A1, dtype=np.uint64)
    row = np.empty(A1, dtype=np.int64)
    par = np.empty((block_size, block_size), dtype=np.int64)  # par[row, pos]: row & pos has even popcount
    for r_ in range(block_size):
        for p_ in range(block_size):
            par[r_, p_] = 1 if _even(np.uint64(r_ & p_)) else 0
    slot = np.empty(A1, dtype=np.int64)  # which distinct answer block each case's cell lies in (-1: none)
    ublk = np.empty(A, dtype=np.uint64)
    cnt = np.zeros((A, block_size), dtype=np.int64)  # count(y) over each distinct answer block
    ysize = np.zeros(A + 2)
    inside = np.zeros(A + 2)
    for s in range(M):
        for j in range(A1):
            blk[j] = cells[s, j] // bm1
            row[j] = np.int64(cells[s, j] - blk[j] * bm1) + 1
        D = 0
        for a in range(A):
            d = -1
            for k in range(D):
                if ublk[k] == blk[a]:
                    d = k
                    break
            if d < 0:
                d = D
                ublk[D] = blk[a]
                cnt[D, :] = 0
                D += 1
            slot[a] = d
            for pos in range(block_size):
                cnt[d, pos] += par[row[a], pos]
        slot[A] = -1
        for k in range(D):
            if ublk[k] == blk[A]:
                slot[A] = k
        ysize[:] = 0.0  # first a histogram of count(y), then its upper cumulative sums
        for d in range(D):
            for pos in range(block_size):
                ysize[cnt[d, pos]] += 1.0
        for c in range(A, 0, -1):
            ysize[c] += ysize[c + 1]
        for j in range(A1):
            inside[:] = 0.0
            d = slot[j]
            if d >= 0:
                rj = row[j]
                for pos in range(block_size):
                    inside[cnt[d, pos]] += par[rj, pos]
                for c in range(A, 0, -1):
                    inside[c] += inside[c + 1]
            out[j, 0] += 1.0
            for c in range(1, A + 2):
                out[j, c] += (ysize[c] + (e_eps - 1.0) * inside[c]) / normalizer
    return out


@njit(cache=True)
def cms_null_tails(cells, p, f):  # pragma: no cover - compiled
    """Count-mean sketch: as :func:`olh_null_tails`; bits independent, the own cell's 1 w.p. ``p``, others ``f``.

    The count is ``sum_u m_u bit_u`` over the distinct cells ``u`` holding
    answers (``m_u`` answers each): its law by dynamic programming.
    """
    M, A1 = cells.shape
    A = A1 - 1
    out = np.zeros((A1, A + 2))
    mult = np.zeros(A, dtype=np.int64)
    for s in range(M):
        D = 0
        ucell = np.empty(A, dtype=np.uint64)
        for a in range(A):
            found = -1
            for d in range(D):
                if ucell[d] == cells[s, a]:
                    found = d
                    break
            if found < 0:
                ucell[D] = cells[s, a]
                mult[D] = 1
                D += 1
            else:
                mult[found] += 1
        for j in range(A1):
            dist = np.zeros(A + 1)
            dist[0] = 1.0
            for d in range(D):
                pr = p if ucell[d] == cells[s, j] else f
                w = mult[d]
                for c in range(A, -1, -1):
                    keep = dist[c] * (1.0 - pr)
                    if c >= w:
                        keep += dist[c - w] * pr
                    dist[c] = keep
            tail = 0.0
            for c in range(A, -1, -1):
                tail += dist[c]
                out[j, c] += tail
    return out
