"""Compiled aggregation of the hashed oracles HR and CMS (:mod:`ldp.oracles.hr`, :mod:`ldp.oracles.cms`).

Both oracles hash the user's value with her own member of the seeded hash
family of :mod:`ldp.oracles.hashing` (the one OLH uses) into a range ``[d]``
and then randomize the hashed cell.  A report supports candidate ``c`` when a
test on ``h = H_seed(c)`` and the report's payload passes:

* ``MODE_HR`` (Hadamard response): the payload is the output symbol ``y`` in
  ``[B b]``; with ``blk = h // (b - 1)`` and ``row = h % (b - 1) + 1``
  (computed without a division, see :func:`_test`) the
  report supports ``c`` iff ``y // b == blk`` and ``popcount(row & (y % b))``
  is even (``y`` lies in the set ``C_h`` of :class:`ldp.oracles.HR`).
* ``MODE_CMS`` (count-mean sketch): the payload is the user's noisy ``w``-bit
  vector (``numpy.packbits`` order, most significant bit first); the report
  supports ``c`` iff bit ``h`` is set.

The kernel evaluates every (report, candidate) pair, like OLH's: reports are
split into parts run in parallel (``prange``), each part expands its reports'
hash coefficients block by block (so each seed is expanded once) and counts
the supports of every candidate.  Counts are integers, so the result does not
depend on the number of threads.  It is simpler (no register tiling) and
about 3-5x slower per pair than OLH's kernel; the count engine
(:mod:`ldp.engines`) is the fast path for experiments.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .kernels import mix64  # splitmix64's output function, shared with OLH's kernel

__all__ = ["hashed_support", "MODE_HR", "MODE_CMS"]

MODE_HR = 0
MODE_CMS = 1
_BLOCK = 1024


@njit(inline="always", cache=True)
def _hr_ok(u, yb, yt, bm1, sh, lowmask):
    """HR: whether a report (block ``yb``, position ``yt`` of its symbol) supports the cell of hash word ``u``.

    ``h = (u B (b-1)) >> 32`` is split without a division: with ``B = 2^beta``,
    ``blk = u >> (32 - beta)`` and ``row - 1 = ((u mod 2^(32-beta)) (b-1)) >> (32 - beta)``
    (exactly ``h // (b-1)`` and ``h % (b-1)``).
    """
    row = (((u & lowmask) * bm1) >> sh) + np.uint64(1)
    v = row & yt  # < 2**16
    v ^= v >> np.uint64(8)
    v ^= v >> np.uint64(4)
    v ^= v >> np.uint64(2)
    v ^= v >> np.uint64(1)
    return ((u >> sh) == yb) & ((v & np.uint64(1)) == np.uint64(0))


@njit(inline="always", cache=True)
def _bit(flat, base, h):
    """CMS: bit ``h`` of the packed report starting at byte ``base`` of ``flat`` (:func:`numpy.packbits` order).

    Read in place: a block's packed reports (``_BLOCK * w / 8`` bytes) stay in the L2 cache while every tile of
    candidates reads them, where the same bits unpacked to one byte each would not.
    """
    return (flat[base + (h >> np.uint64(3))] >> (np.uint64(7) - (h & np.uint64(7)))) & np.uint8(1)


# Deliberate numba specialisation: _part's 4-candidate tile and _support's parallel driver have
# the shape of kernels._part_cg and kernels._support (OLH's), compiled separately because the
# per-pair test differs (HR's symbol test or CMS's bit lookup against OLH's one compare) and
# numba inlines it into the loop only when each kernel is its own function.
@njit(cache=True)
def _part(seeds, ys, bits, cands, d, mode, b, log2b, beta, r_lo, r_hi, out):
    C = cands.shape[0]
    nc = cands.shape[1]
    A = np.empty((C, _BLOCK), dtype=np.uint64)
    B0 = np.empty(_BLOCK, dtype=np.uint64)
    acc = np.empty((4, _BLOCK), dtype=np.uint64)
    gamma = np.uint64(0x9E3779B97F4A7C15)
    s32 = np.uint64(32)
    dd = np.uint64(d)
    bm1 = np.uint64(b - 1) if b > 1 else np.uint64(1)
    lb = np.uint64(log2b)
    tmask = np.uint64(b - 1) if b > 1 else np.uint64(0)
    sh = np.uint64(32 - beta)
    lowmask = np.uint64((1 << (32 - beta)) - 1)
    X = np.zeros((C, 4), dtype=np.uint64)
    YB = np.empty(_BLOCK, dtype=np.uint64)
    YT = np.empty(_BLOCK, dtype=np.uint64)
    width = np.uint64(bits.shape[1])  # bytes per CMS report
    flat = bits.ravel()  # the reports' packed bits, row after row
    for start in range(r_lo, r_hi, _BLOCK):
        stop = min(r_hi, start + _BLOCK)
        nb = stop - start
        if mode == MODE_HR:
            for k in range(nb):
                y = np.uint64(ys[start + k])
                YB[k] = y >> lb
                YT[k] = y & tmask
        for k in range(nb):
            s = seeds[start + k] + gamma
            B0[k] = mix64(s)
            for c in range(C):
                s = s + gamma
                A[c, k] = mix64(s)
        # tiles of 4 candidates share the coefficient loads; the tile loop has the shape of OLH's
        # general-C kernel (ldp.oracles.kernels) on purpose: a deliberate numba specialisation with
        # HR's and CMS's support tests inlined in place of OLH's single compare
        for ci in range(0, nc, 4):
            w = min(4, nc - ci)
            for i in range(4):
                for c in range(C):
                    X[c, i] = np.uint64(cands[c, ci + (i if i < w else 0)])
            for k in range(nb):
                a0 = B0[k]
                acc[0, k] = a0
                acc[1, k] = a0
                acc[2, k] = a0
                acc[3, k] = a0
            for c in range(C):
                x0 = X[c, 0]
                x1 = X[c, 1]
                x2 = X[c, 2]
                x3 = X[c, 3]
                for k in range(nb):
                    a = A[c, k]
                    acc[0, k] += a * x0
                    acc[1, k] += a * x1
                    acc[2, k] += a * x2
                    acc[3, k] += a * x3
            c0 = 0
            c1 = 0
            c2 = 0
            c3 = 0
            if mode == MODE_HR:
                for k in range(nb):
                    yb = YB[k]
                    yt = YT[k]
                    c0 += _hr_ok(acc[0, k] >> s32, yb, yt, bm1, sh, lowmask)
                    c1 += _hr_ok(acc[1, k] >> s32, yb, yt, bm1, sh, lowmask)
                    c2 += _hr_ok(acc[2, k] >> s32, yb, yt, bm1, sh, lowmask)
                    c3 += _hr_ok(acc[3, k] >> s32, yb, yt, bm1, sh, lowmask)
            else:
                for k in range(nb):
                    base = np.uint64(start + k) * width
                    c0 += _bit(flat, base, ((acc[0, k] >> s32) * dd) >> s32)
                    c1 += _bit(flat, base, ((acc[1, k] >> s32) * dd) >> s32)
                    c2 += _bit(flat, base, ((acc[2, k] >> s32) * dd) >> s32)
                    c3 += _bit(flat, base, ((acc[3, k] >> s32) * dd) >> s32)
            out[ci] += c0
            if w > 1:
                out[ci + 1] += c1
            if w > 2:
                out[ci + 2] += c2
            if w > 3:
                out[ci + 3] += c3


@njit(parallel=True, cache=True)
def _support(seeds, ys, bits, cands, d, mode, b, log2b, beta, parts):
    n = seeds.shape[0]
    nc = cands.shape[1]
    partial = np.zeros((parts, nc), dtype=np.int64)
    per = (n + parts - 1) // parts
    for t in prange(parts):
        lo = t * per
        hi = min(n, lo + per)
        if lo < hi:
            _part(seeds, ys, bits, cands, d, mode, b, log2b, beta, lo, hi, partial[t])
    return partial.sum(axis=0)


def hashed_support(seeds: np.ndarray, cand_chunks: np.ndarray, d: int, mode: int, *,
                   ys: np.ndarray | None = None, bits: np.ndarray | None = None, b: int = 2,
                   blocks: int = 1) -> np.ndarray:
    """Support counts of HR or CMS reports for each candidate.

    Parameters
    ----------
    seeds : numpy.ndarray
        ``uint64`` ``(n,)``: each report's hash seed.
    cand_chunks : numpy.ndarray
        ``uint32`` ``(C, n_candidates)``: 32-bit chunks of the candidates
        (transpose of :func:`ldp.values.to_chunks32`).
    d : int
        Hash range (``B (b - 1)`` cells for HR, the sketch width for CMS).
    mode : int
        :data:`MODE_HR` or :data:`MODE_CMS`.
    ys : numpy.ndarray, optional
        HR output symbols ``(n,)``.
    bits : numpy.ndarray, optional
        CMS packed bit vectors ``(n, ceil(w / 8))`` (``uint8``).
    b : int
        HR block size (a power of two).
    blocks : int
        HR block count ``B`` (a power of two; ``d = B (b - 1)``).

    Returns
    -------
    numpy.ndarray
        ``int64`` ``(n_candidates,)``.
    """
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    cands = np.ascontiguousarray(cand_chunks, dtype=np.uint32)
    n = seeds.shape[0]
    if mode == MODE_HR:
        ys = np.ascontiguousarray(ys, dtype=np.uint64)
        bits = np.zeros((1, 1), dtype=np.uint8)
    else:
        ys = np.zeros(n, dtype=np.uint64)
        bits = np.ascontiguousarray(bits, dtype=np.uint8)
    parts = max(1, min(2 * numba.get_num_threads(), -(-n // _BLOCK)))
    log2b = max(0, int(b).bit_length() - 1)
    beta = max(0, int(blocks).bit_length() - 1)
    return _support(seeds, ys, bits, cands, int(d), int(mode), int(b), log2b, beta, parts)
