"""Compiled aggregation of FLH (:mod:`ldp.oracles.flh`): the tally of reports and the supports from it.

* :func:`tally_into` -- ``T[j, y] +=`` the number of reports ``(j, y)`` (one pass, ``O(n)``);
* :func:`support_by_lookup` -- ``I_c = sum_j T[j, H_j(c)]`` for every candidate:
  ``h`` evaluations of OLH's hash (:mod:`ldp.oracles.hashing`) per candidate,
  each followed by one lookup in the tally (parallel over blocks of candidates;
  :func:`support_serial` in the calling thread for small inputs).

:func:`support_by_lookup` has the pool members in the outer loop and a block of
:data:`LOOKUP_BLOCK` candidates inside: for :data:`LOOKUP_GROUP` members at a
time it computes the cells of the whole block (a loop without dependences,
which the compiler vectorises), then adds the group's lookups to each
candidate's sum.  The few rows of the tally a group reads stay in the L1
cache (for ``d'`` up to about 2,000), where a loop over the whole pool per
candidate reads ``h d'`` cells (2.4 MiB at ``h = 4096``, ``d' = 150``) from the
slower caches: 0.45-0.55 ns per pair instead of 0.65-0.95 for ``d'`` from 14 to
150 (``benchmarks/bench_flh_lookup.py``).
:func:`support_serial` keeps the shape of OLH's kernel (:mod:`ldp.oracles.kernels`):
a tile of 4 candidates in registers, an inner loop over the pool.  Counts are
integers, so no result depends on the loop order or the split over threads.

For a small hash range (``d' <= THRESHOLD_D_PRIME``) :func:`support_by_thresholds`
gives the same sums with no lookup: it has the same loop order and
reads ``T[j, cell]`` as ``T[j, 0] + sum_{y=1}^{cell} (T[j, y] - T[j, y-1])``,
where ``cell >= y`` exactly when the hash's 32-bit word is at least
``ceil(y 2**32 / d')`` (:func:`cell_thresholds`): ``d' - 1`` compares per pair
instead of a gather, which this machine's vector units do not do fast.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["tally_into", "support_by_lookup", "support_serial", "support_by_thresholds", "cell_thresholds",
           "THRESHOLD_D_PRIME", "THRESHOLD_BLOCK", "LOOKUP_BLOCK", "LOOKUP_GROUP"]

#: largest ``d'`` for which :func:`support_by_thresholds` beats the lookup kernels (``h = 4096``, 65,536 of PEM's
#: candidates, ``benchmarks/bench_flh_lookup.py --switch``: 0.32-0.39 ns per pair at ``d' = 8``, 0.47 at 12,
#: 0.52-0.54 at 14; :func:`support_by_lookup` 0.46-0.53 for every ``d'`` from 8 to 14)
THRESHOLD_D_PRIME = 12
#: candidates per block of :func:`support_by_thresholds` (their words and sums stay in the L1 cache)
THRESHOLD_BLOCK = 1024
#: candidates per block of :func:`support_by_lookup` (their chunks, sums and cells stay in the L1 cache;
#: measured on this machine: 128 to 1024 within the noise)
LOOKUP_BLOCK = 512
#: pool members per pass of :func:`support_by_lookup` over a block: each candidate's sum is read and written
#: once per group (measured on this machine: 3 as fast, 2 about 5% slower, 8 about 25% slower)
LOOKUP_GROUP = 4


def cell_thresholds(dp: int) -> np.ndarray:
    """``t_y = ceil(y 2**32 / d')`` for ``y < d'``: a 32-bit word ``w`` falls in cell ``>= y`` iff ``w >= t_y``.

    OLH's reduction is ``cell = (w d') >> 32`` (:mod:`ldp.oracles.hashing`), so ``cell >= y`` iff
    ``w d' >= y 2**32`` iff ``w >= ceil(y 2**32 / d')``.  ``uint32`` (``t_0 = 0``).
    """
    return np.array([-(-(y << 32) // dp) for y in range(dp)], dtype=np.uint64).astype(np.uint32)


@njit(inline="always", cache=True)
def _cell(w, dpu):
    """OLH's reduction of the 64-bit word ``w`` to ``[d']``: ``(((w >> 32) d') >> 32)``."""
    return ((w >> np.uint64(32)) * dpu) >> np.uint64(32)


@njit(cache=True)
def _part_small(flat, B, A, cands, dp, c_lo, c_hi, out):  # pragma: no cover - compiled
    """Supports of candidates ``c_lo:c_hi`` with ``C <= 2`` chunks (``A`` has 2 rows; row 1 zero when ``C = 1``)."""
    h = B.shape[0]
    C = cands.shape[0]
    dpu = np.uint64(np.uint32(dp))
    A0 = A[0]
    A1 = A[1]
    ci = c_lo
    while ci < c_hi:
        w = min(4, c_hi - ci)
        x0 = np.uint64(cands[0, ci])
        x1 = np.uint64(cands[0, ci + 1 if w > 1 else ci])
        x2 = np.uint64(cands[0, ci + 2 if w > 2 else ci])
        x3 = np.uint64(cands[0, ci + 3 if w > 3 else ci])
        y0 = np.uint64(0)
        y1 = np.uint64(0)
        y2 = np.uint64(0)
        y3 = np.uint64(0)
        if C == 2:
            y0 = np.uint64(cands[1, ci])
            y1 = np.uint64(cands[1, ci + 1 if w > 1 else ci])
            y2 = np.uint64(cands[1, ci + 2 if w > 2 else ci])
            y3 = np.uint64(cands[1, ci + 3 if w > 3 else ci])
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        base = 0
        # four consecutive values (PEM's and TreeHist's extensions, a range of prefixes): the last chunk
        # grows by one, so the hash word grows by its coefficient, u(x + 1) = u(x) + a (mod 2**64)
        if C == 1:
            run = w == 4 and x1 == x0 + 1 and x2 == x0 + 2 and x3 == x0 + 3
        else:
            run = (w == 4 and x1 == x0 and x2 == x0 and x3 == x0 and y1 == y0 + 1 and y2 == y0 + 2
                   and y3 == y0 + 3)
        if run:
            S = A0 if C == 1 else A1
            for j in range(h):
                st = S[j]
                u = B[j] + A0[j] * x0 + A1[j] * y0
                s0 += flat[base + _cell(u, dpu)]
                u += st
                s1 += flat[base + _cell(u, dpu)]
                u += st
                s2 += flat[base + _cell(u, dpu)]
                u += st
                s3 += flat[base + _cell(u, dpu)]
                base += dp
        else:
            for j in range(h):
                b = B[j]
                a = A0[j]
                e = A1[j]
                s0 += flat[base + _cell(b + a * x0 + e * y0, dpu)]
                s1 += flat[base + _cell(b + a * x1 + e * y1, dpu)]
                s2 += flat[base + _cell(b + a * x2 + e * y2, dpu)]
                s3 += flat[base + _cell(b + a * x3 + e * y3, dpu)]
                base += dp
        out[ci] = s0
        if w > 1:
            out[ci + 1] = s1
        if w > 2:
            out[ci + 2] = s2
        if w > 3:
            out[ci + 3] = s3
        ci += 4


@njit(cache=True)
def _part_general(flat, B, A, cands, dp, c_lo, c_hi, out):  # pragma: no cover - compiled
    """Supports of candidates ``c_lo:c_hi``, any number of chunks (tiles of 4 candidates)."""
    h = B.shape[0]
    C = cands.shape[0]
    dpu = np.uint64(np.uint32(dp))
    X = np.zeros((C, 4), dtype=np.uint64)
    for ci in range(c_lo, c_hi, 4):
        w = min(4, c_hi - ci)
        for i in range(4):  # a short last tile repeats its first candidate
            for c in range(C):
                X[c, i] = np.uint64(cands[c, ci + (i if i < w else 0)])
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        base = 0
        for j in range(h):
            b = B[j]
            u0 = b
            u1 = b
            u2 = b
            u3 = b
            for c in range(C):
                a = A[c, j]
                u0 += a * X[c, 0]
                u1 += a * X[c, 1]
                u2 += a * X[c, 2]
                u3 += a * X[c, 3]
            s0 += flat[base + _cell(u0, dpu)]
            s1 += flat[base + _cell(u1, dpu)]
            s2 += flat[base + _cell(u2, dpu)]
            s3 += flat[base + _cell(u3, dpu)]
            base += dp
        out[ci] = s0
        if w > 1:
            out[ci + 1] = s1
        if w > 2:
            out[ci + 2] = s2
        if w > 3:
            out[ci + 3] = s3


@njit(inline="always", cache=True)
def _words(B, A, X, j, lo, hi, words):  # pragma: no cover - compiled
    """``words[i] = b_j + sum_c a_{c,j} X[c, lo + i]`` (mod ``2**64``): pool member ``j``'s hash words, any ``C``."""
    L = hi - lo
    b = B[j]
    a0 = A[0, j]
    X0 = X[0, lo:hi]
    for i in range(L):
        words[i] = b + a0 * X0[i]
    for c in range(1, X.shape[0]):
        a = A[c, j]
        Xc = X[c, lo:hi]
        for i in range(L):
            words[i] += a * Xc[i]


@njit(inline="always", cache=True)
def _member_cells(B, A, X, j, dpu, lo, hi, shared, dst, words):  # pragma: no cover - compiled
    """``dst[i] = j d' + H_j(c)`` for the candidates ``c`` of ``lo:hi``: where ``T[j, H_j(c)]`` sits in ``flat``.

    ``X``: the candidates' chunks (``C`` rows); ``shared``: whether they all have the first chunk of
    candidate ``lo`` (then, for ``C = 2``, ``b + a_0 x_0`` is computed once: PEM's and TreeHist's
    candidates are runs of values with a common prefix); ``dst``: ``uint32`` (the tally has at most
    ``2**24`` cells); ``words``: ``uint64`` scratch of ``hi - lo`` entries, used when ``C > 2``.  The loops
    over the candidates have no dependence between iterations, so the compiler vectorises the hash (one
    loop for ``C <= 2``).
    """
    L = hi - lo
    C = X.shape[0]
    b = B[j]
    a0 = A[0, j]
    a1 = A[1, j] if C > 1 else np.uint64(0)
    X0 = X[0, lo:hi]
    X1 = X[1 if C > 1 else 0, lo:hi]
    off = np.uint64(j) * dpu
    if C == 1:
        for i in range(L):
            dst[i] = np.uint32(off + _cell(b + a0 * X0[i], dpu))
    elif C == 2 and shared:
        b0 = b + a0 * X0[0]  # the same for every candidate (mod 2**64 sums: the same words)
        for i in range(L):
            dst[i] = np.uint32(off + _cell(b0 + a1 * X1[i], dpu))
    elif C == 2:
        for i in range(L):
            dst[i] = np.uint32(off + _cell(b + a0 * X0[i] + a1 * X1[i], dpu))
    else:
        _words(B, A, X, j, lo, hi, words)
        for i in range(L):
            dst[i] = np.uint32(off + _cell(words[i], dpu))


@njit(cache=True)
def _block_lookup(flat, B, A, X, dp, lo, hi, out):  # pragma: no cover - compiled
    """``out[lo:hi] = sum_j T[j, H_j(c)]``, pool members outside, :data:`LOOKUP_GROUP` at a time.

    For each group of members: their cells' indices for the whole block (vectorised), then one pass
    adding the group's lookups to each candidate's sum.  The group's rows of the tally stay in the cache
    while the block is served.
    """
    h = B.shape[0]
    L = hi - lo
    dpu = np.uint64(np.uint32(dp))
    cells = np.empty((LOOKUP_GROUP, L), dtype=np.uint32)
    words = np.empty(L if X.shape[0] > 2 else 0, dtype=np.uint64)
    acc = np.zeros(L, dtype=np.int64)
    first = X[0, lo:hi]
    shared = True
    for i in range(L):
        shared = shared and first[i] == first[0]
    j0 = 0
    while j0 + LOOKUP_GROUP <= h:
        for g in range(LOOKUP_GROUP):
            _member_cells(B, A, X, j0 + g, dpu, lo, hi, shared, cells[g], words)
        for i in range(L):
            s = np.int64(flat[cells[0, i]])
            for g in range(1, LOOKUP_GROUP):
                s += flat[cells[g, i]]
            acc[i] += s
        j0 += LOOKUP_GROUP
    for j in range(j0, h):  # the last h mod LOOKUP_GROUP members, one at a time
        _member_cells(B, A, X, j, dpu, lo, hi, shared, cells[0], words)
        for i in range(L):
            acc[i] += flat[cells[0, i]]
    for i in range(L):
        out[lo + i] = acc[i]


@njit(parallel=True, cache=True)
def support_by_lookup(flat, B, A, X, dp, block):  # pragma: no cover - compiled
    """``out[c] = sum_j T[j, H_j(c)]`` with ``T`` flattened (``T[j, x] = flat[j d' + x]``), pool members outside.

    ``flat``: the tally, ``int32`` or ``int64`` (sums are ``int64``), at most ``2**24`` cells; ``B``, ``A``:
    the pool's coefficients (:func:`ldp.oracles.hashing.expand_coefficients`); ``X``: the candidates' 32-bit
    chunks, ``uint32`` ``(C, nc)``.  Parallel over blocks of ``block`` candidates; counts are integers, so the
    result does not depend on the split.
    """
    nc = X.shape[1]
    out = np.zeros(nc, dtype=np.int64)
    nb = (nc + block - 1) // block
    for t in prange(nb):
        lo = t * block
        _block_lookup(flat, B, A, X, dp, lo, min(nc, lo + block), out)
    return out


@njit(cache=True)
def support_serial(flat, B, A, cands, dp):  # pragma: no cover - compiled
    """``out[c] = sum_j T[j, H_j(c)]`` in the calling thread, tiles of 4 candidates (small inputs)."""
    out = np.zeros(cands.shape[1], dtype=np.int64)
    if cands.shape[0] <= 2:
        _part_small(flat, B, A, cands, dp, 0, cands.shape[1], out)
    else:
        _part_general(flat, B, A, cands, dp, 0, cands.shape[1], out)
    return out


@njit(cache=True)
def _block_thresholds(flat, B, A, X, dp, thr, lo, hi, out, words, top):  # pragma: no cover - compiled
    """``out[lo:hi] = sum_j (T[j, H_j(c)] - T[j, 0])`` by thresholds (see the module notes); int32 sums.

    ``X`` holds the candidates' chunks as ``uint64`` ``(C, nc)``; ``words`` (``uint64``) and ``top``
    (``uint32``) are scratch of at least ``hi - lo`` entries.
    """
    h = B.shape[0]
    C = X.shape[0]
    L = hi - lo
    X0 = X[0, lo:hi]
    X1 = X[1 if C > 1 else 0, lo:hi]
    acc = np.zeros(L, dtype=np.int32)
    for j in range(h):
        b = B[j]
        a0 = A[0, j]
        if C == 1:
            for i in range(L):
                top[i] = np.uint32((b + a0 * X0[i]) >> np.uint64(32))
        elif C == 2:
            a1 = A[1, j]
            for i in range(L):
                top[i] = np.uint32((b + a0 * X0[i] + a1 * X1[i]) >> np.uint64(32))
        else:
            _words(B, A, X, j, lo, hi, words)
            for i in range(L):
                top[i] = np.uint32(words[i] >> np.uint64(32))
        off = j * dp
        y = 1
        while y + 1 < dp:  # two thresholds per pass over the block
            t0 = thr[y]
            t1 = thr[y + 1]
            d0 = flat[off + y] - flat[off + y - 1]
            d1 = flat[off + y + 1] - flat[off + y]
            for i in range(L):
                w = top[i]
                acc[i] += (d0 if w >= t0 else 0) + (d1 if w >= t1 else 0)
            y += 2
        if y < dp:
            t0 = thr[y]
            d0 = flat[off + y] - flat[off + y - 1]
            for i in range(L):
                acc[i] += d0 if top[i] >= t0 else 0
    for i in range(L):
        out[lo + i] = acc[i]


@njit(parallel=True, cache=True)
def support_by_thresholds(flat, B, A, X, dp, thr, block):  # pragma: no cover - compiled
    """:func:`support_by_lookup`'s sums by thresholds, for ``d' <= THRESHOLD_D_PRIME`` (module notes).

    ``flat``: the tally (``int32``, non-negative, total below ``2**31``, so every partial sum fits
    ``int32``); ``X``: the candidates' chunks, ``uint64`` ``(C, nc)``; ``thr``: :func:`cell_thresholds`.
    Parallel over blocks of ``block`` candidates; the result does not depend on the split.
    """
    nc = X.shape[1]
    h = B.shape[0]
    out = np.zeros(nc, dtype=np.int64)
    base = np.int64(0)
    for j in range(h):
        base += flat[j * dp]
    nb = (nc + block - 1) // block
    for t in prange(nb):
        lo = t * block
        hi = min(nc, lo + block)
        words = np.empty(hi - lo, dtype=np.uint64)
        top = np.empty(hi - lo, dtype=np.uint32)
        _block_thresholds(flat, B, A, X, dp, thr, lo, hi, out, words, top)
    for i in range(nc):
        out[i] += base
    return out


@njit(cache=True)
def tally_into(index, y, dp, out):  # pragma: no cover - compiled
    flat = out.reshape(-1)
    for i in range(index.shape[0]):
        flat[np.int64(index[i]) * dp + np.int64(y[i])] += 1
