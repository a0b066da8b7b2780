"""The seeded hash family OLH uses, in vectorised numpy (the client side).

OLH (paper section 2.2.2, ``subsubsec:olh``) needs a family of hash functions
``H : D -> [d']`` that the user picks at random and announces.  We use a
*strongly universal* (pairwise independent) family built from
Dietzfelbinger's multiply-add-shift hashing of vectors:

1. The ``m``-bit value ``v`` is cut into ``C = ceil(m / 32)`` chunks
   ``x_0 .. x_{C-1}`` of 32 bits (:func:`ldp.values.to_chunks32`, most
   significant first).
2. With coefficients ``a_0 .. a_{C-1}, b`` (64-bit words),

   ``u(v) = ((b + sum_i a_i x_i) mod 2**64) >> 32``        (a 32-bit word).

   For independent uniform ``a_i, b`` this family is strongly universal from
   ``[2**32]**C`` to ``[2**32]``: for ``v != v'`` the pair ``(u(v), u(v'))``
   is uniform on ``[2**32]**2``.  This is the vector version of
   multiply-shift (Dietzfelbinger 1996) with word length ``wbar = 64``,
   input chunks of ``w = 32`` bits and ``l = 32`` output bits, which needs
   ``wbar >= w + l - 1 = 63`` (Thorup 2015, section "strongly universal
   hashing of vectors").  ``tests/test_hash.py`` checks the statement
   exhaustively on a scaled-down word size and empirically at full size.
3. The 32-bit ``u`` is reduced to ``[d']`` by ``h = (u * d') >> 32``.  Bin
   ``y`` receives the ``u`` in ``[lo_y, lo_{y+1})`` with
   ``lo_y = ceil(y 2**32 / d')``, i.e. ``floor(2**32/d')`` or
   ``ceil(2**32/d')`` of the ``2**32`` words, so
   ``|Pr[h(v) = y] - 1/d'| <= 2**-32`` for every bin (a relative bias of at
   most ``d' / 2**32``; zero when ``d'`` is a power of two).  Pairs
   ``(h(v), h(v'))`` inherit independence from ``(u(v), u(v'))``, so the
   probability that a report supports a value other than the user's is
   ``q = 1/d'`` up to ``2**-32``, and OLH's estimate is unbiased up to
   ``n 2**-32 / (p - q)`` -- far below any standard deviation.

A user's hash function is identified by one 64-bit *seed*.  The
coefficients are expanded from it with splitmix64 (Steele, Lea and Flood
2014): state ``s_k = seed + k * 0x9E3779B97F4A7C15`` (mod 2**64) for
``k = 1 .. C+1`` and output ``mix(s_k)``; ``b = mix(s_1)`` and
``a_i = mix(s_{i+2})``.  Honest caveat: strong universality is a theorem
for *independent uniform* coefficients; ours are a deterministic function of
a uniform 64-bit seed (``2**64`` functions rather than ``2**(64 (C+1))``),
which is what the original OLH does too (it seeds xxhash with the user's
index).  ``tests/test_hash.py`` checks uniformity, collision rate ``1/d'``
and pairwise independence of ``(h(v), h(v'))`` over random seeds by
chi-square tests.  eps-LDP does not depend on any of this: the seed is
drawn independently of the value.

The aggregator evaluates the same function in compiled code
(:mod:`ldp.oracles.kernels`); ``tests/test_oracles.py`` checks that both
agree exactly.

References
----------
M. Dietzfelbinger, "Universal hashing and k-wise independent random variables
via integer arithmetic without primes", STACS 1996, LNCS 1046, 569-580.

M. Thorup, "High speed hashing for integers and strings", arXiv:1504.06804,
2015 (strong universality of multiply-shift for vectors when
``wbar >= w + l - 1``).

G. L. Steele, D. Lea, C. H. Flood, "Fast splittable pseudorandom number
generators", OOPSLA 2014 (splitmix64).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..numeric import kernel_input
from ..values import as_values, n_chunks, to_chunks32

__all__ = [
    "GOLDEN_GAMMA",
    "splitmix64_mix",
    "expand_coefficients",
    "hash_u32",
    "reduce_to_range",
    "bin_interval",
    "hash_values",
    "hash_values_one_seed",
]

#: splitmix64's increment (the odd integer closest to 2**64 / golden ratio)
GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32 = (np.uint64(s) for s in (30, 27, 31, 32))


def splitmix64_mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's output function on an array of ``uint64`` states."""
    z = np.asarray(z, dtype=np.uint64)
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


def expand_coefficients(seeds: np.ndarray, C: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash coefficients ``(b, a)`` of each seed.

    Parameters
    ----------
    seeds : numpy.ndarray
        ``uint64`` array of shape ``(n,)``.
    C : int
        Number of 32-bit chunks of the hashed values.

    Returns
    -------
    b : numpy.ndarray
        ``uint64`` array ``(n,)``.
    a : numpy.ndarray
        ``uint64`` array ``(C, n)``; ``a[i]`` multiplies chunk ``i``.
    """
    seeds = np.asarray(seeds, dtype=np.uint64)
    state = seeds + GOLDEN_GAMMA
    b = splitmix64_mix(state)
    a = np.empty((C, seeds.shape[0]), dtype=np.uint64)
    for i in range(C):
        state = state + GOLDEN_GAMMA
        a[i] = splitmix64_mix(state)
    return b, a


def hash_u32(seeds: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """``u = ((b + sum_i a_i x_i) mod 2**64) >> 32`` for each (seed, value) pair.

    Parameters
    ----------
    seeds : numpy.ndarray
        ``uint64`` array ``(n,)``.
    chunks : numpy.ndarray
        ``uint32`` array ``(n, C)`` from :func:`ldp.values.to_chunks32`.

    Returns
    -------
    numpy.ndarray
        ``uint64`` array ``(n,)`` with values below ``2**32``.
    """
    C = chunks.shape[1]
    b, a = expand_coefficients(seeds, C)
    acc = b
    for i in range(C):
        acc = acc + a[i] * chunks[:, i].astype(np.uint64)  # wraps mod 2**64
    return acc >> _S32


def reduce_to_range(u: np.ndarray, d_prime: int) -> np.ndarray:
    """Map 32-bit words to ``[d']`` by ``(u * d') >> 32`` (needs ``d' <= 2**31``)."""
    return (np.asarray(u, dtype=np.uint64) * np.uint64(d_prime)) >> _S32


def bin_interval(y: np.ndarray, d_prime: int) -> tuple[np.ndarray, np.ndarray]:
    """The 32-bit words that reduce to bin ``y``: ``[lo, lo + width)``.

    ``lo_y = ceil(y 2**32 / d')``, ``width_y = lo_{y+1} - lo_y``, so that
    ``reduce_to_range(u, d') == y``  iff  ``(u - lo_y) mod 2**32 < width_y``.
    """
    y = np.asarray(y, dtype=np.uint64)
    dp = np.uint64(d_prime)
    lo = ((y << _S32) + dp - np.uint64(1)) // dp
    hi = (((y + np.uint64(1)) << _S32) + dp - np.uint64(1)) // dp
    return lo, hi - lo


def hash_values(seeds: np.ndarray, values, m: int, d_prime: int) -> np.ndarray:
    """``H_seed(v)`` in ``[d']`` for paired arrays of seeds and ``m``-bit values.

    Parameters
    ----------
    seeds : numpy.ndarray
        ``uint64`` array ``(n,)``.
    values : array_like
        ``n`` values in the canonical ``m``-bit representation.
    m : int
        Bit width of the values.
    d_prime : int
        Size of the hash range.

    Returns
    -------
    numpy.ndarray
        ``uint64`` array ``(n,)`` with entries in ``[0, d')``.
    """
    vals = as_values(values, m, name="values", allow_empty=True)
    seeds = np.asarray(seeds, dtype=np.uint64)
    if seeds.shape != (vals.shape[0],):
        raise ValueError(f"seeds must have shape ({vals.shape[0]},) to pair with values, got {seeds.shape}")
    chunks = to_chunks32(vals, m)
    assert chunks.shape[1] == n_chunks(m)
    return reduce_to_range(hash_u32(seeds, chunks), d_prime)


def hash_values_one_seed(seed: int, values, m: int, d_prime: int) -> np.ndarray:
    """``H_seed(v)`` in ``[d']`` for every value under one seed: :func:`hash_values` with its seeds all ``seed``.

    The coefficients are expanded once rather than once per value (the public hashes of MCM's channels
    and SFP's puzzle pieces); the sum is the same modulo ``2**64``, so the result is identical.

    ``seed`` is an int in ``[0, 2**64)``; ``values``, ``m`` and ``d_prime`` and the result are
    :func:`hash_values`'s.
    """
    vals = as_values(values, m, name="values", allow_empty=True)
    b, a = expand_coefficients(np.array([seed], dtype=np.uint64), n_chunks(m))
    words = vals if vals.ndim == 2 else vals.reshape(-1, 1)
    return reduce_to_range(_hash_words(kernel_input(words), b[0], kernel_input(a[:, 0])), d_prime)


@njit(cache=True)
def _hash_words(words, b, a):  # pragma: no cover - compiled
    # hash_u32 of every row of big-endian words under one seed's coefficients: chunk c of to_chunks32
    # (from the left) is the half k = C - 1 - c (from the right) of word W - 1 - k // 2
    n, W = words.shape
    C = a.shape[0]
    mask = np.uint64(0xFFFFFFFF)
    out = np.empty(n, dtype=np.uint64)
    for r in range(n):
        acc = b
        for c in range(C):
            k = C - 1 - c
            x = (words[r, W - 1 - k // 2] >> np.uint64(32 * (k % 2))) & mask
            acc += a[c] * x  # wraps mod 2**64
        out[r] = acc >> np.uint64(32)
    return out
