"""Compiled aggregation of the hashed oracles HR and CMS (:mod:`ldp.oracles.hr`, :mod:`ldp.oracles.cms`).

Both oracles hash the user's value with her own member of the seeded hash
family of :mod:`ldp.oracles.hashing` (the one OLH uses) into a range ``[d]``
and then randomize the hashed cell.  A report supports candidate ``c`` when a
test on ``h = H_seed(c)`` and the report's payload passes:

* ``MODE_HR`` (Hadamard response): the payload is the output symbol ``y`` in
  ``[B b]``; with ``blk = h // (b - 1)`` and ``row = h % (b - 1) + 1``
  (computed without a division, see :func:`_hr_ok`) the
  report supports ``c`` iff ``y // b == blk`` and ``popcount(row & (y % b))``
  is even (``y`` lies in the set ``C_h`` of :class:`ldp.oracles.HR`).
* ``MODE_CMS`` (count-mean sketch): the payload is the user's noisy ``w``-bit
  vector (``numpy.packbits`` order, most significant bit first); the report
  supports ``c`` iff bit ``h`` is set.

The kernel evaluates every (report, candidate) pair, as OLH's does
(:mod:`ldp.oracles.kernels`):

* **Blocks of reports.**  Each block's hash coefficients are expanded from the
  seeds once (and HR's symbols split into block and position); every tile of
  candidates then streams over the block.
* **Register tiles.**  A tile of 4 candidates has its 32-bit chunks in
  registers (as ``uint32``, so LLVM knows each product's factor is below
  ``2**32``); for ``C = 1`` and ``C = 2`` chunks (``m <= 64``) the hash and the
  support test are fused in one loop over the block's reports, which LLVM
  vectorises (AVX-512: 8 pairs per instruction); ``C >= 3`` sums the chunks in
  block-sized accumulators first.
* **HR's test** splits the cell without a division (:func:`_hr_ok`) and takes
  the parity of ``row & t`` with one population count.
* **CMS's test** reads bit ``h`` from the reports' bits rearranged once into
  little-endian ``uint32`` words (one gathered load and one shift per pair);
  the load is the cost that remains (about twice HR's per pair).
* **Parallel parts** (``prange``): the reports are split, or the candidates
  when there are too few report blocks.  Counts are integers, so the result
  does not depend on the number of threads or the split.

CPU per pair (``benchmarks/check_identical_hashed.py --time``: 12,500 reports x
65,536 candidates, 2 threads, AMD EPYC with AVX-512; results in
``benchmarks/results/hashed_kernel.txt``): HR 0.29 ns with 1 chunk and 0.34 ns
with 2 (was 0.65-0.71 and 0.79-0.94 ns); CMS ``w = 1024`` 0.63-0.66 ns and
0.72-0.79 ns (was 0.77-0.83 and 0.91-1.1 ns), most of it the gathered load;
OLH's kernel does about 0.15 ns.  The count engine (:mod:`ldp.engines`) is the
fast path for experiments.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import intrinsic

from ..numeric import kernel_input
from .kernels import mix64, parallel_parts  # splitmix64's output function and the parallel split, as OLH's

__all__ = ["hashed_support", "MODE_HR", "MODE_CMS"]

MODE_HR = 0
MODE_CMS = 1
#: reports per block (their coefficients and payloads are reused by every tile of candidates)
_BLOCK = 1024
#: byte -> the same byte with its bits reversed (numpy.packbits order -> little-endian bit order)
_REVERSED = np.packbits(np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1), axis=1,
                        bitorder="little").ravel()


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of an unsigned integer (LLVM's ``ctpop``: ``vpopcntq`` on 8 lanes with AVX-512)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@njit(inline="always", cache=True)
def _hr_ok(u, ybs, yt, bm1, sh, lowmask):
    """HR: whether a report (block ``yb = ybs >> sh``, position ``yt`` of its symbol) supports the cell of word ``u``.

    ``h = (u B (b-1)) >> 32`` is split without a division: with ``B = 2^beta`` and ``sh = 32 - beta``,
    ``blk = u >> sh`` and ``row - 1 = ((u mod 2^sh) (b-1)) >> sh`` (exactly ``h // (b-1)`` and
    ``h % (b-1)``).  With ``z = u ^ (yb << sh)``, ``blk == yb`` iff ``z < 2^sh``, and then ``z = u mod 2^sh``.
    ``bm1 = b - 1`` comes as ``uint32`` so that LLVM knows the product's factors are below ``2**32`` (one
    ``vpmuludq``).
    """
    z = u ^ ybs
    row = ((z * np.uint64(bm1)) >> sh) + np.uint64(1)  # z < 2**32: no overflow
    ones = _popcount(row & yt)  # type: ignore[call-arg, var-annotated]  # numba supplies the typing context
    return (z <= lowmask) & ((ones & np.uint64(1)) == np.uint64(0))


@njit(inline="always", cache=True)
def _cms_ok(u, words, base, dd):
    """CMS: bit ``h = (u w) >> 32`` of the report whose words start at ``words[base]``.

    ``words`` holds a block's reports' bits in little-endian bit order (:data:`_REVERSED`), 32 to a
    ``uint32`` word, so that bit ``h`` is bit ``h mod 32`` of word ``h // 32``: one load (a gather of 8
    lanes, 32-bit: cheaper than bytes or 64-bit words), one shift.  ``dd = w`` comes as ``uint32`` (one
    ``vpmuludq``).
    """
    h = np.uint32((u * np.uint64(dd)) >> np.uint64(32))
    return (words[base + (h >> np.uint32(5))] >> (h & np.uint32(31))) & np.uint32(1)


# Deliberate numba specialisations: the tiles below have the shape of OLH's _tile1 and _tile2
# (ldp.oracles.kernels): one copy per chunk count and per support test keeps a tile's 4 candidates
# in registers and the per-pair test inlined, so that LLVM vectorises the loop over a block's reports.
@njit(inline="always", cache=True)
def _hr_tile1(A0, B0, YB, YT, nb, x0, x1, x2, x3, bm1, sh, lowmask):
    """HR supports of 4 one-chunk candidates (``x0 .. x3``) among a block's ``nb`` reports."""
    s32 = np.uint64(32)
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A0[k]
        b = B0[k]
        yb = YB[k]
        yt = YT[k]
        c0 += _hr_ok((a * x0 + b) >> s32, yb, yt, bm1, sh, lowmask)
        c1 += _hr_ok((a * x1 + b) >> s32, yb, yt, bm1, sh, lowmask)
        c2 += _hr_ok((a * x2 + b) >> s32, yb, yt, bm1, sh, lowmask)
        c3 += _hr_ok((a * x3 + b) >> s32, yb, yt, bm1, sh, lowmask)
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _hr_tile2(A0, A1, B0, YB, YT, nb, x0, y0, x1, y1, x2, y2, x3, y3, bm1, sh, lowmask):
    """HR supports of 4 two-chunk candidates (chunks ``(x_i, y_i)``) among a block's ``nb`` reports."""
    s32 = np.uint64(32)
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A0[k]
        e = A1[k]
        b = B0[k]
        yb = YB[k]
        yt = YT[k]
        c0 += _hr_ok((a * x0 + e * y0 + b) >> s32, yb, yt, bm1, sh, lowmask)
        c1 += _hr_ok((a * x1 + e * y1 + b) >> s32, yb, yt, bm1, sh, lowmask)
        c2 += _hr_ok((a * x2 + e * y2 + b) >> s32, yb, yt, bm1, sh, lowmask)
        c3 += _hr_ok((a * x3 + e * y3 + b) >> s32, yb, yt, bm1, sh, lowmask)
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _cms_tile1(A0, B0, words, nw, nb, x0, x1, x2, x3, dd):
    """CMS supports of 4 one-chunk candidates among a block's ``nb`` reports (``nw`` words each)."""
    s32 = np.uint64(32)
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A0[k]
        b = B0[k]
        base = np.uint32(k) * nw
        c0 += _cms_ok((a * x0 + b) >> s32, words, base, dd)
        c1 += _cms_ok((a * x1 + b) >> s32, words, base, dd)
        c2 += _cms_ok((a * x2 + b) >> s32, words, base, dd)
        c3 += _cms_ok((a * x3 + b) >> s32, words, base, dd)
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _cms_tile2(A0, A1, B0, words, nw, nb, x0, y0, x1, y1, x2, y2, x3, y3, dd):
    """CMS supports of 4 two-chunk candidates among a block's ``nb`` reports (``nw`` words each)."""
    s32 = np.uint64(32)
    c0 = 0
    c1 = 0
    c2 = 0
    c3 = 0
    for k in range(nb):
        a = A0[k]
        e = A1[k]
        b = B0[k]
        base = np.uint32(k) * nw
        c0 += _cms_ok((a * x0 + e * y0 + b) >> s32, words, base, dd)
        c1 += _cms_ok((a * x1 + e * y1 + b) >> s32, words, base, dd)
        c2 += _cms_ok((a * x2 + e * y2 + b) >> s32, words, base, dd)
        c3 += _cms_ok((a * x3 + e * y3 + b) >> s32, words, base, dd)
    return c0, c1, c2, c3


@njit(inline="always", cache=True)
def _tile_general(A, B0, C, X, acc, nb, mode, YB, YT, bm1, sh, lowmask, words, nw, dd):
    """Supports of 4 candidates of ``C >= 3`` chunks (``X[c, i]``): hash words summed in ``acc``, then tested."""
    s32 = np.uint64(32)
    for k in range(nb):
        a0 = B0[k]
        acc[0, k] = a0
        acc[1, k] = a0
        acc[2, k] = a0
        acc[3, k] = a0
    for c in range(C):
        x0 = np.uint64(X[c, 0])
        x1 = np.uint64(X[c, 1])
        x2 = np.uint64(X[c, 2])
        x3 = np.uint64(X[c, 3])
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
            base = np.uint32(k) * nw
            c0 += _cms_ok(acc[0, k] >> s32, words, base, dd)
            c1 += _cms_ok(acc[1, k] >> s32, words, base, dd)
            c2 += _cms_ok(acc[2, k] >> s32, words, base, dd)
            c3 += _cms_ok(acc[3, k] >> s32, words, base, dd)
    return c0, c1, c2, c3


@njit(cache=True)
def _part(seeds, ys, words, nw, cands, d, mode, b, log2b, beta, r_lo, r_hi, c_lo, c_hi, out):
    """Add the supports of candidates ``c_lo:c_hi`` among reports ``r_lo:r_hi`` to ``out``."""
    C = cands.shape[0]
    A = np.empty((C, _BLOCK), dtype=np.uint64)
    B0 = np.empty(_BLOCK, dtype=np.uint64)
    acc = np.empty((4, _BLOCK), dtype=np.uint64)
    YB = np.empty(_BLOCK, dtype=np.uint64)
    YT = np.empty(_BLOCK, dtype=np.uint64)
    X = np.zeros((C, 4), dtype=np.uint32)  # uint32: LLVM knows x < 2**32 (one vpmuludq per product)
    gamma = np.uint64(0x9E3779B97F4A7C15)
    dd = np.uint32(d)
    bm1 = np.uint32(b - 1) if b > 1 else np.uint32(1)
    lb = np.uint64(log2b)
    tmask = np.uint64(b - 1) if b > 1 else np.uint64(0)
    sh = np.uint64(32 - beta)
    lowmask = np.uint64((1 << (32 - beta)) - 1)
    nwu = np.uint32(nw)
    for start in range(r_lo, r_hi, _BLOCK):
        stop = min(r_hi, start + _BLOCK)
        nb = stop - start
        for k in range(nb):  # each report's coefficients, expanded once per call
            s = seeds[start + k] + gamma
            B0[k] = mix64(s)
            for c in range(C):
                s = s + gamma
                A[c, k] = mix64(s)
            if mode == MODE_HR:
                y = np.uint64(ys[start + k])
                YB[k] = (y >> lb) << sh  # the symbol's block, shifted as the hash word's
                YT[k] = y & tmask
        wblk = words[start * nw:stop * nw] if mode == MODE_CMS else words  # indices below 2**32
        for ci in range(c_lo, c_hi, 4):
            w = min(4, c_hi - ci)
            for i in range(4):  # a short last tile repeats its first candidate
                for c in range(C):
                    X[c, i] = cands[c, ci + (i if i < w else 0)]
            if C == 1 and mode == MODE_HR:
                r0, r1, r2, r3 = _hr_tile1(A[0], B0, YB, YT, nb, np.uint64(X[0, 0]), np.uint64(X[0, 1]),
                                           np.uint64(X[0, 2]), np.uint64(X[0, 3]), bm1, sh, lowmask)
            elif C == 1:
                r0, r1, r2, r3 = _cms_tile1(A[0], B0, wblk, nwu, nb, np.uint64(X[0, 0]),
                                            np.uint64(X[0, 1]), np.uint64(X[0, 2]), np.uint64(X[0, 3]), dd)
            elif C == 2 and mode == MODE_HR:
                r0, r1, r2, r3 = _hr_tile2(A[0], A[1], B0, YB, YT, nb,
                                           np.uint64(X[0, 0]), np.uint64(X[1, 0]), np.uint64(X[0, 1]),
                                           np.uint64(X[1, 1]), np.uint64(X[0, 2]), np.uint64(X[1, 2]),
                                           np.uint64(X[0, 3]), np.uint64(X[1, 3]), bm1, sh, lowmask)
            elif C == 2:
                r0, r1, r2, r3 = _cms_tile2(A[0], A[1], B0, wblk, nwu, nb,
                                            np.uint64(X[0, 0]), np.uint64(X[1, 0]), np.uint64(X[0, 1]),
                                            np.uint64(X[1, 1]), np.uint64(X[0, 2]), np.uint64(X[1, 2]),
                                            np.uint64(X[0, 3]), np.uint64(X[1, 3]), dd)
            else:
                r0, r1, r2, r3 = _tile_general(A, B0, C, X, acc, nb, mode, YB, YT, bm1, sh, lowmask, wblk,
                                               nwu, dd)
            out[ci] += r0
            if w > 1:
                out[ci + 1] += r1
            if w > 2:
                out[ci + 2] += r2
            if w > 3:
                out[ci + 3] += r3


@njit(parallel=True, cache=True)
def _support(seeds, ys, words, nw, cands, d, mode, b, log2b, beta, rep_parts, cand_parts):
    """Run the ``rep_parts x cand_parts`` parts in parallel; sum the partial counts."""
    n = seeds.shape[0]
    nc = cands.shape[1]
    partial = np.zeros((rep_parts, nc), dtype=np.int64)
    rper = (n + rep_parts - 1) // rep_parts
    cper = ((nc + cand_parts - 1) // cand_parts + 3) // 4 * 4  # whole tiles of 4 candidates
    for t in prange(rep_parts * cand_parts):
        r_lo = (t // cand_parts) * rper
        r_hi = min(n, r_lo + rper)
        c_lo = (t % cand_parts) * cper
        c_hi = min(nc, c_lo + cper)
        if r_lo < r_hi and c_lo < c_hi:
            _part(seeds, ys, words, nw, cands, d, mode, b, log2b, beta, r_lo, r_hi, c_lo, c_hi,
                  partial[t // cand_parts])
    return partial.sum(axis=0)


def _words(bits: np.ndarray) -> tuple[np.ndarray, int]:
    """CMS reports' packed bits as ``uint32`` words in little-endian bit order (flat), and words per report."""
    n, width = bits.shape
    nw = max(1, -(-width // 4))
    rev = np.zeros((n, 4 * nw), dtype=np.uint8)
    rev[:, :width] = _REVERSED[bits]
    return rev.view("<u4").astype(np.uint32, copy=False).ravel(), nw


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
        HR output symbols ``(n,)``, in ``[0, blocks * b)`` (as :class:`ldp.oracles.hr.HRReports` checks).
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
    seeds = kernel_input(seeds, np.uint64)
    cands = kernel_input(cand_chunks, np.uint32)
    n = seeds.shape[0]
    if mode == MODE_HR:
        ys = kernel_input(ys, np.uint64)
        words, nw = kernel_input(np.zeros(1, dtype=np.uint32)), 0
    else:
        ys = kernel_input(np.zeros(n, dtype=np.uint64))
        words, nw = _words(np.asarray(bits, dtype=np.uint8))
        words = kernel_input(words)
    rep_parts, cand_parts = parallel_parts(n, cands.shape[1], block=_BLOCK, threads=numba.get_num_threads())
    log2b = max(0, int(b).bit_length() - 1)
    beta = max(0, int(blocks).bit_length() - 1)
    return _support(seeds, ys, words, nw, cands, int(d), int(mode), int(b), log2b, beta, rep_parts, cand_parts)
