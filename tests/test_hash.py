"""The OLH hash family (ldp.oracles.hashing): definition, universality, quality.

Statistical tests use fixed seeds and a false-alarm rate of 1e-6 per test
(chi-square p-value threshold, or 5 sigma for binomial proportions).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from ldp.oracles import hashing
from ldp.values import as_values, from_ints, n_chunks, to_chunks32, uniform

ALPHA = 1e-6  # false-alarm rate of each chi-square test
Z = 5.0  # sigmas for binomial proportions (two-sided false alarm ~5.7e-7)


def msa(coef_a, coef_b, x, wbar, ell):
    """Vector multiply-add-shift at any word size: ((b + sum a_i x_i) mod 2^wbar) >> (wbar - ell)."""
    acc = coef_b + sum(a * xi for a, xi in zip(coef_a, x))
    return (acc % (1 << wbar)) >> (wbar - ell)


# --------------------------------------------------------------- definition
def test_splitmix64_known_answer():
    """Coefficients are splitmix64's outputs; seed 0 gives its published first outputs."""
    b, a = hashing.expand_coefficients(np.array([0], dtype=np.uint64), 2)
    assert int(b[0]) == 0xE220A8397B1DCDAF
    assert int(a[0, 0]) == 0x6E789E6AA1B965F4
    assert int(a[1, 0]) == 0x06C45D188009454F


@pytest.mark.parametrize("m", [16, 64, 100, 160])
def test_hash_matches_python_integer_definition(m):
    """hash_u32 / hash_values equal the textbook formula in exact integer arithmetic."""
    rng = np.random.default_rng(11)
    n, d_prime = 200, 13
    seeds = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    nbytes = -(-m // 8)
    ints = [int.from_bytes(rng.bytes(nbytes), "big") >> (8 * nbytes - m) for _ in range(n)]
    vals = from_ints(ints, m)
    chunks = to_chunks32(vals, m)
    b, a = hashing.expand_coefficients(seeds, n_chunks(m))
    u = hashing.hash_u32(seeds, chunks)
    h = hashing.hash_values(seeds, vals, m, d_prime)
    C = n_chunks(m)
    for j in range(n):
        x = [(ints[j] >> (32 * (C - 1 - c))) & 0xFFFFFFFF for c in range(C)]
        assert x == [int(t) for t in chunks[j]]
        uj = msa([int(a[c, j]) for c in range(C)], int(b[j]), x, 64, 32)
        assert int(u[j]) == uj
        assert int(h[j]) == (uj * d_prime) >> 32


def _joint_tables(w, ell, chunks, wbar):
    """Joint counts of (h(x), h(x')) over the whole family, for every ordered pair x != x'."""
    inputs = np.array(list(itertools.product(range(1 << w), repeat=chunks)))  # (X, chunks)
    fams = np.array(list(itertools.product(range(1 << wbar), repeat=chunks + 1)))  # (F, chunks+1)
    acc = fams[:, -1:] + fams[:, :-1] @ inputs.T  # (F, X): b + sum a_i x_i
    H = (acc % (1 << wbar)) >> (wbar - ell)
    L = 1 << ell
    X = len(inputs)
    tables = np.array([np.bincount(H[:, i] * L + H[:, j], minlength=L * L)
                       for i in range(X) for j in range(X) if i != j])
    return tables, len(fams), L


@pytest.mark.parametrize("w,ell,chunks", [(2, 2, 2), (3, 2, 2), (2, 3, 2), (2, 2, 3)])
def test_vector_multiply_shift_is_strongly_universal_exhaustive(w, ell, chunks):
    """Thorup's theorem at scaled-down word sizes, checked over the whole family.

    With ``wbar = w + l - 1`` (our full-size case: w = l = 32, wbar = 63 <= 64)
    the pair (h(x), h(x')) is exactly uniform on [2^l]^2 over all
    ``2^(wbar (chunks + 1))`` coefficient choices, for every x != x'.  With
    ``wbar = w + l - 2`` it is not, so the test can fail.
    """
    assert msa([3, 5], 7, [1, 2], 64, 32) == (7 + 3 + 10) >> 32  # same formula as hash_u32
    tables, F, L = _joint_tables(w, ell, chunks, w + ell - 1)
    assert np.all(tables == F // (L * L))
    tables, F, L = _joint_tables(w, ell, chunks, w + ell - 2)
    assert not np.all(tables == F // (L * L))


# --------------------------------------------------------------- reduction
@pytest.mark.parametrize("d_prime", [2, 3, 5, 56, 1000, 2**20, 2**31 - 1, 2**31])
def test_bin_intervals_partition_and_bias_bound(d_prime):
    """Bins are intervals of floor/ceil(2^32/d') words: |Pr[h = y] - 1/d'| <= 2^-32."""
    ys = np.unique(np.r_[np.arange(min(d_prime, 64)), d_prime - 1 - np.arange(min(d_prime, 64))])
    lo, width = hashing.bin_interval(ys, d_prime)
    lo_all_next, _ = hashing.bin_interval(ys + 1, d_prime)
    assert np.all(lo + width == lo_all_next)
    assert int(hashing.bin_interval(np.array([d_prime]), d_prime)[0][0]) == 2**32
    if ys[0] == 0:
        assert int(lo[0]) == 0
    fl, ce = 2**32 // d_prime, -(-(2**32) // d_prime)
    assert set(int(w) for w in width) <= {fl, ce}
    assert np.all(np.abs(width.astype(float) / 2**32 - 1 / d_prime) <= 2.0**-32)
    # boundaries: lo_y maps to y, lo_y - 1 maps to y - 1
    assert np.array_equal(hashing.reduce_to_range(lo, d_prime), ys)
    pos = ys > 0
    assert np.array_equal(hashing.reduce_to_range(lo[pos] - np.uint64(1), d_prime), ys[pos] - 1)


@pytest.mark.parametrize("d_prime", [2, 7, 56, 65537, 2**31 - 1])
def test_interval_test_equals_reduction(d_prime):
    """h(u) == y  iff  (u - lo_y) mod 2^32 < width_y, and the kernel's 64-bit form of it."""
    rng = np.random.default_rng(5)
    u = rng.integers(0, 2**32, size=200_000, dtype=np.uint64)
    h = hashing.reduce_to_range(u, d_prime)
    # half the y's equal h (a match), half are random
    y = np.where(rng.random(u.size) < 0.5, h, rng.integers(0, d_prime, size=u.size, dtype=np.uint64))
    lo, width = hashing.bin_interval(y, d_prime)
    in_bin = ((u - lo) & np.uint64(0xFFFFFFFF)) < width
    assert np.array_equal(in_bin, h == y)
    # kernel form: (u 2^32 + r - lo 2^32) mod 2^64 < width 2^32 for any low word r
    r = rng.integers(0, 2**32, size=u.size, dtype=np.uint64)
    word = (u << np.uint64(32)) + r - (lo << np.uint64(32))
    assert np.array_equal(word < (width << np.uint64(32)), h == y)


# --------------------------------------------------------------- quality
def _pairs(m):
    """Distinct value pairs that stress the family: adjacent, one bit apart, top chunk only."""
    top = m - 1
    raw = [(0, 1), (12345, 12346), (1 << top, 0), ((1 << top) | 5, 5), (2**m - 1, 2**m - 2)]
    if m > 32:
        raw.append((7 << (m - 3), 7 << (m - 4)))
    return [(from_ints([a], m), from_ints([b], m)) for a, b in raw]


def _hash_one(seeds, value, m, d_prime):
    vals = np.repeat(value, seeds.size, axis=0)
    return hashing.hash_values(seeds, vals, m, d_prime)


@pytest.mark.parametrize("m", [16, 64, 160])
def test_uniformity_over_seeds(m):
    """For a fixed value, H(v) over random seeds is uniform on [d'] (chi-square)."""
    rng = np.random.default_rng(100 + m)
    S = 100_000
    for d_prime in (7, 16):
        seeds = rng.integers(0, 2**64, size=S, dtype=np.uint64)
        for x, _ in _pairs(m)[:3]:
            counts = np.bincount(_hash_one(seeds, x, m, d_prime).astype(np.intp), minlength=d_prime)
            assert stats.chisquare(counts).pvalue > ALPHA


@pytest.mark.parametrize("m", [16, 64, 160])
def test_collision_rate_is_one_over_d_prime(m):
    """Pr_seed[H(v) = H(v')] = 1/d' for v != v' (binomial, 5 sigma)."""
    rng = np.random.default_rng(200 + m)
    S = 200_000
    for d_prime in (2, 5, 56):
        seeds = rng.integers(0, 2**64, size=S, dtype=np.uint64)
        for x, x2 in _pairs(m):
            coll = np.mean(_hash_one(seeds, x, m, d_prime) == _hash_one(seeds, x2, m, d_prime))
            q = 1 / d_prime
            assert abs(coll - q) <= Z * np.sqrt(q * (1 - q) / S), (d_prime, coll)


@pytest.mark.parametrize("m", [16, 64, 160])
def test_pairwise_independence_over_seeds(m):
    """(H(v), H(v')) over random seeds is uniform on [d']^2 (chi-square on the joint table).

    Also at the 32-bit level: the top 3 bits of (u(v), u(v')) are uniform on 64 cells.
    """
    rng = np.random.default_rng(300 + m)
    S = 100_000
    d_prime = 5
    seeds = rng.integers(0, 2**64, size=S, dtype=np.uint64)
    C = n_chunks(m)
    for x, x2 in _pairs(m):
        h1 = _hash_one(seeds, x, m, d_prime)
        h2 = _hash_one(seeds, x2, m, d_prime)
        table = np.bincount((h1 * d_prime + h2).astype(np.intp), minlength=d_prime**2)
        assert stats.chisquare(table).pvalue > ALPHA
        u1 = hashing.hash_u32(seeds, np.repeat(to_chunks32(x, m), S, axis=0)) >> np.uint64(29)
        u2 = hashing.hash_u32(seeds, np.repeat(to_chunks32(x2, m), S, axis=0)) >> np.uint64(29)
        assert to_chunks32(x, m).shape == (1, C)
        table = np.bincount((u1 * 8 + u2).astype(np.intp), minlength=64)
        assert stats.chisquare(table).pvalue > ALPHA


def test_independence_test_has_power():
    """The joint-table test rejects a dependent pair (same seed, same value -> always equal)."""
    rng = np.random.default_rng(9)
    seeds = rng.integers(0, 2**64, size=20_000, dtype=np.uint64)
    x = as_values(np.array([42], dtype=np.uint64), 64)
    h = _hash_one(seeds, x, 64, 5)
    table = np.bincount((h * 5 + h).astype(np.intp), minlength=25)
    assert stats.chisquare(table).pvalue < ALPHA


def test_hash_values_rejects_mismatched_seeds():
    with pytest.raises(ValueError, match="seeds"):
        hashing.hash_values(np.zeros(3, dtype=np.uint64), np.arange(4, dtype=np.uint64), 16, 5)
    with pytest.raises(ValueError, match="values"):
        hashing.hash_values(np.zeros(1, dtype=np.uint64), np.array([1 << 16], dtype=np.uint64), 16, 5)


@pytest.mark.parametrize("m", [8, 48, 64, 65, 100, 160])
@pytest.mark.parametrize("d_prime", [2, 16, 1000])
def test_hash_values_one_seed_is_hash_values_with_equal_seeds(m, d_prime):
    rng = np.random.default_rng(m + d_prime)
    values = uniform(3_000, m, rng=rng)
    for seed in (0, 12345, 2**64 - 1, int(rng.integers(0, 2**63))):
        want = hashing.hash_values(np.full(values.shape[0], seed, dtype=np.uint64), values, m, d_prime)
        got = hashing.hash_values_one_seed(seed, values, m, d_prime)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
