"""The hashed oracles' compiled support counts (:func:`ldp.oracles.hashed_kernels.hashed_support`) against the
plain computation: every (report, candidate) pair hashed with :mod:`ldp.oracles.hashing` and tested as the
oracles define support (HR: ``y`` in ``C_h``; CMS: bit ``h`` set), one path of the kernel per case."""
from __future__ import annotations

import numpy as np
import pytest

from ldp.oracles.hashed_kernels import MODE_CMS, MODE_HR, hashed_support
from ldp.oracles.hashing import hash_u32, reduce_to_range


def cells(seeds, cands, d):
    """``cells[j, i] = H_{seed_j}(candidate i)`` in ``[d]`` (``cands``: ``(C, n_candidates)`` chunks)."""
    n, nc = seeds.shape[0], cands.shape[1]
    chunks = np.repeat(cands.T[None], n, axis=0).reshape(n * nc, -1)
    return reduce_to_range(hash_u32(np.repeat(seeds, nc), chunks), d).reshape(n, nc)


def plain_hr(seeds, cands, ys, b, blocks):
    h = cells(seeds, cands, blocks * (b - 1))
    blk, row = h // (b - 1), h % (b - 1) + 1
    y = ys.astype(np.uint64)[:, None]
    t = row & (y % np.uint64(b))
    parity = np.vectorize(lambda v: bin(int(v)).count("1") & 1)(t)
    return ((y // np.uint64(b) == blk) & (parity == 0)).sum(axis=0)


def plain_cms(seeds, cands, bits, w):
    h = cells(seeds, cands, w).astype(np.int64)
    unpacked = np.unpackbits(bits, axis=1)  # most significant bit first, as numpy.packbits packed them
    return np.take_along_axis(unpacked, h, axis=1).sum(axis=0)


# (chunks, reports, candidates): 1, 2 and 3 chunks (the fused tiles and the general one); a short last tile
# of candidates; one report block (the candidates split in parts) and several (the reports split)
SHAPES = [(1, 300, 10), (2, 300, 10), (3, 300, 10), (1, 2500, 7), (2, 2500, 7), (3, 2500, 7), (1, 40, 257)]


@pytest.mark.parametrize("chunks,n,nc", SHAPES)
@pytest.mark.parametrize("b,blocks", [(4, 1), (64, 1), (64, 16), (2, 8)])
def test_hr_supports_are_the_plain_counts(chunks, n, nc, b, blocks):
    rng = np.random.default_rng([chunks, n, nc, b, blocks])
    seeds = rng.integers(0, 2**64, n, dtype=np.uint64)
    cands = rng.integers(0, 2**32, (chunks, nc), dtype=np.uint32)
    ys = rng.integers(0, b * blocks, n).astype(np.uint16)
    got = hashed_support(seeds, cands, blocks * (b - 1), MODE_HR, ys=ys, b=b, blocks=blocks)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, plain_hr(seeds, cands, ys, b, blocks))


@pytest.mark.parametrize("chunks,n,nc", SHAPES)
@pytest.mark.parametrize("w", [2, 8, 100, 1024])
def test_cms_supports_are_the_plain_counts(chunks, n, nc, w):
    rng = np.random.default_rng([chunks, n, nc, w])
    seeds = rng.integers(0, 2**64, n, dtype=np.uint64)
    cands = rng.integers(0, 2**32, (chunks, nc), dtype=np.uint32)
    bits = rng.integers(0, 256, (n, -(-w // 8)), dtype=np.uint8)
    got = hashed_support(seeds, cands, w, MODE_CMS, bits=bits)
    np.testing.assert_array_equal(got, plain_cms(seeds, cands, bits, w))


def test_a_supported_candidate_counts_once_per_report():
    # CMS: every bit set -> every report supports every candidate; none set -> none does
    rng = np.random.default_rng(3)
    seeds = rng.integers(0, 2**64, 1500, dtype=np.uint64)
    cands = rng.integers(0, 2**32, (2, 9), dtype=np.uint32)
    ones = np.full((1500, 128), 255, dtype=np.uint8)
    np.testing.assert_array_equal(hashed_support(seeds, cands, 1024, MODE_CMS, bits=ones), np.full(9, 1500))
    np.testing.assert_array_equal(hashed_support(seeds, cands, 1024, MODE_CMS, bits=0 * ones), np.zeros(9))
