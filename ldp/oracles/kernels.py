"""Compiled OLH aggregation: ``I_v = |{j : H_j(v) = y_j}|`` for many candidates.

This is the hot spot of every protocol (paper section 2.2.2: "each invocation
of the frequency oracle takes time linear in the population size").  The
kernel evaluates the hash family of :mod:`ldp.oracles.hashing` on every
(report, candidate) pair.

Design
------
* **One compare per pair.**  For report ``j`` with coefficients ``a, b`` and
  perturbed bin ``y``, ``h(v) == y`` iff ``(u(v) - lo_y) mod 2**32 < width_y``
  (:func:`ldp.oracles.hashing.bin_interval`).  Folding ``lo_y`` into ``b``
  (``b' = b - lo_y 2**32``) and comparing the full 64-bit word against
  ``T = width_y 2**32`` makes the test
  ``(b' + sum_i a_i x_i) mod 2**64 < T``: one multiply-add per chunk and one
  unsigned compare, no shift, no reduction.
* **Streaming over report blocks.**  Reports are processed in blocks of
  ``DEFAULT_BLOCK`` users whose expanded coefficients (``(C + 2) * 8`` bytes each,
  structure-of-arrays) stay in L1/L2; coefficients are expanded from the
  seeds block by block, so extra memory is ``O(threads * BLOCK)`` and the
  whole aggregation is ``O(reports + candidates)`` in memory.
* **Register tiling.**  Each pass over a block serves a tile of 4
  candidates, whose chunks sit in registers; the inner loop over reports is
  contiguous and branch-free, so LLVM vectorises it (AVX2: 4 pairs per
  instruction).
* **Parallelism.**  Work is split into ``rep_parts x cand_parts``
  independent parts run with ``prange`` by one small driver (:func:`_support`).
  By default the reports are split (each report's coefficients are expanded
  once; per-part partial counts are summed at the end); with too few report
  blocks the candidates are split instead.  Counts are integers, so results
  do not depend on the thread count or the split.
* **Specialisation.**  Serial per-part functions for ``C = 1`` chunk
  (``m <= 32``), ``C = 2`` (``m <= 64``) and general ``C >= 3`` (chunk sums
  built two chunks at a time in block-sized accumulators, see
  :func:`_g_tile`).  Compiling them as plain functions called from one
  parallel driver keeps numba's first-call compile time around 20 s
  (cached on disk afterwards, ``cache=True``).
* The candidate chunks are passed as ``uint32`` so LLVM knows they are
  below ``2**32`` and lowers each 64x32-bit product to two ``vpmuludq``.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..numeric import kernel_input

__all__ = ["olh_support", "olh_indicators", "mix64", "parallel_parts", "DEFAULT_BLOCK"]

#: reports per block (coefficients of one block fit in L1/L2)
DEFAULT_BLOCK = 2048
#: padding of each block row (24 words = 192 bytes), so that the rows of the
#: per-thread buffer do not sit at multiples of 4 KiB from each other
#: (4K aliasing between loads and stores, L1 set conflicts)
_PAD = 24


@njit(inline="always", cache=True)
def mix64(z):
    """splitmix64's output function (compiled; :func:`ldp.oracles.hashing.splitmix64_mix` on arrays)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(inline="always", cache=True)
def _expand_block(seeds, ys, start, stop, C, dp, lo_tab, A, Bp, T):
    """Coefficients of reports ``start:stop`` with the bin interval folded in.

    ``lo_tab[y] = ceil(y 2**32 / d')`` for ``y = 0 .. d'`` when given (non-empty),
    else computed by division.
    """
    one = np.uint64(1)
    s32 = np.uint64(32)
    use_tab = lo_tab.shape[0] > 0
    for j in range(start, stop):
        k = j - start
        s = seeds[j] + np.uint64(0x9E3779B97F4A7C15)
        b = mix64(s)
        for c in range(C):
            s = s + np.uint64(0x9E3779B97F4A7C15)
            A[c, k] = mix64(s)
        if use_tab:
            lo = lo_tab[ys[j]]
            hi = lo_tab[ys[j] + 1]
        else:
            y = np.uint64(ys[j])
            lo = ((y << s32) + dp - one) // dp
            hi = (((y + one) << s32) + dp - one) // dp
        Bp[k] = b - (lo << s32)
        T[k] = (hi - lo) << s32


# ---------------------------------------------------------------- C = 1 chunk
# Deliberate numba specialisations: the C = 1, C = 2 and general-C parts below share their
# shape on purpose (one copy per chunk count keeps the candidate chunks in registers so that
# LLVM vectorises the inner loop over reports; see "Specialisation" in the module notes).
@njit(inline="always", cache=True)
def _tile1(A0, Bp, T, nb, x0, x1, x2, x3):
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A0[k]
        b = Bp[k]
        t = T[k]
        c0 += (a * x0 + b) < t
        c1 += (a * x1 + b) < t
        c2 += (a * x2 + b) < t
        c3 += (a * x3 + b) < t
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _single1(A0, Bp, T, nb, x0):
    c0 = 0
    for k in range(nb):
        c0 += (A0[k] * x0 + Bp[k]) < T[k]
    return c0


@njit(cache=True)
def _part_c1(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, c_lo, c_hi, out):
    """Add the support of candidates ``c_lo:c_hi`` among reports ``r_lo:r_hi`` to ``out``."""
    buf = np.empty((3, block + _PAD), dtype=np.uint64)
    A = buf[:1]
    Bp = buf[1]
    T = buf[2]
    for start in range(r_lo, r_hi, block):
        stop = min(r_hi, start + block)
        _expand_block(seeds, ys, start, stop, 1, dp, lo_tab, A, Bp, T)
        nb = stop - start
        A0 = A[0]
        ci = c_lo
        while ci + 4 <= c_hi:
            r0, r1, r2, r3 = _tile1(A0, Bp, T, nb,
                                    np.uint64(cands[0, ci]), np.uint64(cands[0, ci + 1]),
                                    np.uint64(cands[0, ci + 2]), np.uint64(cands[0, ci + 3]))
            out[ci] += r0
            out[ci + 1] += r1
            out[ci + 2] += r2
            out[ci + 3] += r3
            ci += 4
        while ci < c_hi:
            out[ci] += _single1(A0, Bp, T, nb, np.uint64(cands[0, ci]))
            ci += 1


# ---------------------------------------------------------------- C = 2 chunks
@njit(inline="always", cache=True)
def _tile2(A0, A1, Bp, T, nb, x0, y0, x1, y1, x2, y2, x3, y3):
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A0[k]
        e = A1[k]
        b = Bp[k]
        t = T[k]
        c0 += (a * x0 + e * y0 + b) < t
        c1 += (a * x1 + e * y1 + b) < t
        c2 += (a * x2 + e * y2 + b) < t
        c3 += (a * x3 + e * y3 + b) < t
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _single2(A0, A1, Bp, T, nb, x0, y0):
    c0 = 0
    for k in range(nb):
        c0 += (A0[k] * x0 + A1[k] * y0 + Bp[k]) < T[k]
    return c0


@njit(cache=True)
def _part_c2(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, c_lo, c_hi, out):
    """Add the support of candidates ``c_lo:c_hi`` among reports ``r_lo:r_hi`` to ``out``."""
    buf = np.empty((4, block + _PAD), dtype=np.uint64)
    A = buf[:2]
    Bp = buf[2]
    T = buf[3]
    for start in range(r_lo, r_hi, block):
        stop = min(r_hi, start + block)
        _expand_block(seeds, ys, start, stop, 2, dp, lo_tab, A, Bp, T)
        nb = stop - start
        A0 = A[0]
        A1 = A[1]
        ci = c_lo
        while ci + 4 <= c_hi:
            r0, r1, r2, r3 = _tile2(A0, A1, Bp, T, nb,
                                    np.uint64(cands[0, ci]), np.uint64(cands[1, ci]),
                                    np.uint64(cands[0, ci + 1]), np.uint64(cands[1, ci + 1]),
                                    np.uint64(cands[0, ci + 2]), np.uint64(cands[1, ci + 2]),
                                    np.uint64(cands[0, ci + 3]), np.uint64(cands[1, ci + 3]))
            out[ci] += r0
            out[ci + 1] += r1
            out[ci + 2] += r2
            out[ci + 3] += r3
            ci += 4
        while ci < c_hi:
            out[ci] += _single2(A0, A1, Bp, T, nb,
                                        np.uint64(cands[0, ci]), np.uint64(cands[1, ci]))
            ci += 1


# ---------------------------------------------------------------- general C
# C >= 3 chunks.  A tile of 4 candidates is served per pass; the chunk sum is
# built two chunks at a time in 4 block-sized accumulators: the first pass
# initialises them from b', middle passes add two chunks, the last pass adds
# the remaining one or two chunks and compares without storing.
@njit(inline="always", cache=True)
def _g_first(A, Bp, nb, acc, x00, x01, x10, x11, x20, x21, x30, x31):
    for k in range(nb):
        a = A[0, k]
        e = A[1, k]
        b = Bp[k]
        acc[0, k] = a * x00 + e * x01 + b
        acc[1, k] = a * x10 + e * x11 + b
        acc[2, k] = a * x20 + e * x21 + b
        acc[3, k] = a * x30 + e * x31 + b


@njit(inline="always", cache=True)
def _g_middle(A, c, nb, acc, x00, x01, x10, x11, x20, x21, x30, x31):
    for k in range(nb):
        a = A[c, k]
        e = A[c + 1, k]
        acc[0, k] += a * x00 + e * x01
        acc[1, k] += a * x10 + e * x11
        acc[2, k] += a * x20 + e * x21
        acc[3, k] += a * x30 + e * x31


@njit(inline="always", cache=True)
def _g_last2(A, c, T, nb, acc, x00, x01, x10, x11, x20, x21, x30, x31):
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A[c, k]
        e = A[c + 1, k]
        t = T[k]
        c0 += (acc[0, k] + a * x00 + e * x01) < t
        c1 += (acc[1, k] + a * x10 + e * x11) < t
        c2 += (acc[2, k] + a * x20 + e * x21) < t
        c3 += (acc[3, k] + a * x30 + e * x31) < t
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _g_last1(A, c, T, nb, acc, x0, x1, x2, x3):
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A[c, k]
        t = T[k]
        c0 += (acc[0, k] + a * x0) < t
        c1 += (acc[1, k] + a * x1) < t
        c2 += (acc[2, k] + a * x2) < t
        c3 += (acc[3, k] + a * x3) < t
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _g_tile(A, Bp, T, nb, C, X, acc):
    """Counts of 4 candidates (chunks ``X[c, i]``, ``X`` of shape ``(C, 4)``)."""
    _g_first(A, Bp, nb, acc, np.uint64(X[0, 0]), np.uint64(X[1, 0]), np.uint64(X[0, 1]), np.uint64(X[1, 1]),
             np.uint64(X[0, 2]), np.uint64(X[1, 2]), np.uint64(X[0, 3]), np.uint64(X[1, 3]))
    c = 2
    while C - c > 2:
        _g_middle(A, c, nb, acc, np.uint64(X[c, 0]), np.uint64(X[c + 1, 0]), np.uint64(X[c, 1]), np.uint64(X[c + 1, 1]),
                  np.uint64(X[c, 2]), np.uint64(X[c + 1, 2]), np.uint64(X[c, 3]), np.uint64(X[c + 1, 3]))
        c += 2
    if C - c == 2:
        return _g_last2(A, c, T, nb, acc, np.uint64(X[c, 0]), np.uint64(X[c + 1, 0]), np.uint64(X[c, 1]),
                        np.uint64(X[c + 1, 1]), np.uint64(X[c, 2]), np.uint64(X[c + 1, 2]), np.uint64(X[c, 3]),
                        np.uint64(X[c + 1, 3]))
    return _g_last1(A, c, T, nb, acc, np.uint64(X[c, 0]), np.uint64(X[c, 1]), np.uint64(X[c, 2]), np.uint64(X[c, 3]))


@njit(cache=True)
def _part_cg(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, c_lo, c_hi, out):
    """Add the support of candidates ``c_lo:c_hi`` among reports ``r_lo:r_hi`` to ``out``."""
    C = cands.shape[0]
    buf = np.empty((C + 6, block + _PAD), dtype=np.uint64)
    A = buf[:C]
    Bp = buf[C]
    T = buf[C + 1]
    acc = buf[C + 2:]
    X = np.zeros((C, 4), dtype=np.uint32)  # uint32: LLVM knows x < 2**32 (2 pmuludq per product)
    for start in range(r_lo, r_hi, block):
        stop = min(r_hi, start + block)
        _expand_block(seeds, ys, start, stop, C, dp, lo_tab, A, Bp, T)
        nb = stop - start
        for ci in range(c_lo, c_hi, 4):
            w = min(4, c_hi - ci)
            for i in range(4):  # a short last tile repeats its first candidate
                for c in range(C):
                    X[c, i] = cands[c, ci + (i if i < w else 0)]
            r0, r1, r2, r3 = _g_tile(A, Bp, T, nb, C, X, acc)
            out[ci] += r0
            if w > 1:
                out[ci + 1] += r1
            if w > 2:
                out[ci + 2] += r2
            if w > 3:
                out[ci + 3] += r3


# ---------------------------------------------------------------- driver
@njit(parallel=True, cache=True)
def _support(seeds, ys, cands, dp, lo_tab, block, rep_parts, cand_parts):
    """Run the ``rep_parts x cand_parts`` parts in parallel; sum partial counts."""
    n = seeds.shape[0]
    C = cands.shape[0]
    nc = cands.shape[1]
    partial = np.zeros((rep_parts, nc), dtype=np.int64)
    rper = (n + rep_parts - 1) // rep_parts
    cper = (nc + cand_parts - 1) // cand_parts
    for t in prange(rep_parts * cand_parts):
        rp = t // cand_parts
        cp = t % cand_parts
        r_lo = rp * rper
        r_hi = min(n, r_lo + rper)
        c_lo = cp * cper
        c_hi = min(nc, c_lo + cper)
        if r_lo >= r_hi or c_lo >= c_hi:
            continue
        out = partial[rp]
        if C == 1:
            _part_c1(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, c_lo, c_hi, out)
        elif C == 2:
            _part_c2(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, c_lo, c_hi, out)
        else:
            _part_cg(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, c_lo, c_hi, out)
    return partial.sum(axis=0)


def olh_support(seeds: np.ndarray, ys: np.ndarray, cand_chunks: np.ndarray, d_prime: int,
                *, block: int | None = None, threads: int | None = None,
                split: str = "auto") -> np.ndarray:
    """Support counts ``I_v`` of OLH reports for each candidate.

    Parameters
    ----------
    seeds : numpy.ndarray
        ``uint64`` ``(n,)``: each report's hash seed.
    ys : numpy.ndarray
        Unsigned ``(n,)``: each report's perturbed bin in ``[0, d')``.
    cand_chunks : numpy.ndarray
        ``uint32`` ``(C, n_candidates)``: 32-bit chunks of the candidates,
        most significant first (transpose of :func:`ldp.values.to_chunks32`).
    d_prime : int
        Hash range ``d'`` (2 to ``2**31``).
    block : int, optional
        Reports per block (default :data:`DEFAULT_BLOCK`).
    threads : int, optional
        Threads to plan the split for (default ``numba.get_num_threads()``).
    split : {"auto", "reports", "candidates"}
        Which dimension the parallel parts divide.  ``"auto"`` splits reports
        (each report expanded once) unless there are too few report blocks.

    Returns
    -------
    numpy.ndarray
        ``int64`` ``(n_candidates,)``.
    """
    seeds = kernel_input(seeds, np.uint64)
    ys = kernel_input(ys, np.uint32)
    cands = kernel_input(cand_chunks, np.uint32)
    n = seeds.shape[0]
    C, nc = cands.shape
    block = int(block or DEFAULT_BLOCK)
    threads = int(threads or numba.get_num_threads())
    if split not in ("auto", "reports", "candidates"):
        raise ValueError(f"split must be 'auto', 'reports' or 'candidates', got {split!r}")
    rep_parts, cand_parts = parallel_parts(n, nc, block=block, threads=threads, split=split)
    lo_tab = _lo_table(int(d_prime))
    dp = np.uint64(d_prime)
    return _support(seeds, ys, cands, dp, lo_tab, block, rep_parts, cand_parts)


def parallel_parts(n: int, n_candidates: int, *, block: int, threads: int, split: str = "auto") -> tuple[int, int]:
    """How a (report, candidate) support kernel splits its work: ``(report parts, candidate parts)``.

    Splitting the reports expands each report's hash coefficients once; it needs enough blocks of
    ``block`` reports to keep every thread busy, so ``"auto"`` splits the candidates instead when the
    blocks are fewer than ``2 threads`` and the candidates at least ``4 threads`` (OLH's kernel here and
    the hashed oracles' in :mod:`ldp.oracles.hashed_kernels`).
    """
    n_blocks = -(-n // block)
    if split == "auto":
        split = "reports" if (n_blocks >= 2 * threads or n_candidates < 4 * threads) else "candidates"
    if split == "candidates":
        return 1, min(n_candidates, 2 * threads if threads > 1 else 1)
    return max(1, min(2 * threads, n_blocks)), 1


#: hash ranges up to this size use a table of bin boundaries instead of divisions
_TABLE_LIMIT = 2**20


def _lo_table(d_prime: int) -> np.ndarray:
    """``ceil(y 2**32 / d')`` for ``y = 0 .. d'`` (empty when ``d'`` is too large)."""
    if d_prime > _TABLE_LIMIT:
        return np.empty(0, dtype=np.uint64)
    y = np.arange(d_prime + 1, dtype=np.uint64)
    dp = np.uint64(d_prime)
    return ((y << np.uint64(32)) + dp - np.uint64(1)) // dp


# ---------------------------------------------------------------- indicators
@njit(cache=True)
def _indicators_part(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, out):
    """``out[i, j] = report j supports candidate i`` for reports ``r_lo:r_hi``."""
    C = cands.shape[0]
    nc = cands.shape[1]
    buf = np.empty((C + 3, block + _PAD), dtype=np.uint64)
    A = buf[:C]
    Bp = buf[C]
    T = buf[C + 1]
    acc = buf[C + 2]
    for start in range(r_lo, r_hi, block):
        stop = min(r_hi, start + block)
        nb = stop - start
        _expand_block(seeds, ys, start, stop, C, dp, lo_tab, A, Bp, T)
        for ci in range(nc):
            x = np.uint64(cands[0, ci])
            a = A[0]
            for k in range(nb):
                acc[k] = Bp[k] + a[k] * x
            for c in range(1, C):
                x = np.uint64(cands[c, ci])
                a = A[c]
                for k in range(nb):
                    acc[k] += a[k] * x
            row = out[ci]
            for k in range(nb):
                row[start + k] = acc[k] < T[k]


@njit(parallel=True, cache=True)
def _indicators(seeds, ys, cands, dp, lo_tab, block, parts):
    n = seeds.shape[0]
    nc = cands.shape[1]
    out = np.empty((nc, n), dtype=np.bool_)
    per = (n + parts - 1) // parts
    for t in prange(parts):
        r_lo = t * per
        r_hi = min(n, r_lo + per)
        if r_lo < r_hi:
            _indicators_part(seeds, ys, cands, dp, lo_tab, block, r_lo, r_hi, out)
    return out


def olh_indicators(seeds: np.ndarray, ys: np.ndarray, cand_chunks: np.ndarray, d_prime: int,
                   *, block: int | None = None) -> np.ndarray:
    """Per-report support indicators: ``out[i, j]`` iff report ``j`` supports candidate ``i``.

    Same arguments as :func:`olh_support`; returns a ``bool`` array of shape
    ``(n_candidates, n)`` whose row sums are :func:`olh_support`.
    """
    seeds = kernel_input(seeds, np.uint64)
    ys = kernel_input(ys, np.uint32)
    cands = kernel_input(cand_chunks, np.uint32)
    n = seeds.shape[0]
    block = int(block or DEFAULT_BLOCK)
    # parts aligned to whole blocks; up to 2 per thread
    parts = max(1, min(2 * numba.get_num_threads(), -(-n // block)))
    return _indicators(seeds, ys, cands, np.uint64(d_prime), _lo_table(int(d_prime)), block, parts)
