"""Synthetic data sets: Zipf (section 5) and exponential (section 6.1), on random distinct values.

* :func:`zipf` -- section 5's validation data, ``f_j`` proportional to
  ``1/j**1.5``; ``zipf(-20)`` (``drop_top=20``) drops the 20 most frequent values.
* :func:`exponential` -- section 6.1's synthetic set: ``n = 10**6`` values of
  ``m = 64`` bits with an exponential (geometric) rank-frequency law of scale
  0.05 (RAPPOR's test distribution [2]_).
* :func:`random_distinct_values` -- the distinct uniformly random m-bit values
  behind the ranks ("the values of the heavy hitters are random").

References
----------
.. [1] T. Wang, N. Li, S. Jha.  Locally Differentially Private Heavy Hitter
   Identification.  Sections 5, 6.1 and 6.2.3.
.. [2] U. Erlingsson, V. Pihur, A. Korolova.  RAPPOR: Randomized Aggregatable
   Privacy-Preserving Ordinal Response.  CCS 2014 (the exponential test
   distribution, ``tests/gen_counts.R`` in google/rappor: ``dexp(1:100, rate = 5/100)``).
"""
from __future__ import annotations

import math
from typing import Literal, get_args

import numpy as np

from ..analysis.frequencies import exponential_frequencies, zipf_frequencies
from ..core.dataset import Dataset, check_users_fit
from ..numeric import largest_remainder, readonly
from ..validation import check_int, check_real, check_rng
from ..values import MAX_BITS, n_words, value_keys

__all__ = ["random_distinct_values", "zipf_frequencies", "exponential_frequencies", "zipf", "exponential",
           "Sampling"]

#: how counts derive from rank frequencies (see :func:`zipf`)
Sampling = Literal["multinomial", "rounded"]


def random_distinct_values(n_values: int, m: int, *, rng=None) -> np.ndarray:
    """``n_values`` distinct m-bit values drawn uniformly without replacement, in random order.

    Memory is proportional to ``n_values``, never to ``2**m``.

    Parameters
    ----------
    n_values : int
        How many values, 1 to ``2**m``.
    m : int
        Bits per value.
    rng : None, int, SeedSequence, BitGenerator or Generator, keyword-only
        Randomness (SPEC 7).

    Returns
    -------
    numpy.ndarray
        Canonical m-bit array of ``n_values`` distinct values.
    """
    m = check_int(m, "m", 1, MAX_BITS)
    n_values = check_int(n_values, "n_values", 1, 2 ** m)
    check_users_fit(n_values, m, name="n_values", what="values")
    rng = check_rng(rng)
    W = n_words(m)
    if m <= 62 and 2 ** m <= 4 * n_values:  # small domain: a partial permutation, O(2**m) <= O(4 n)
        return rng.choice(2 ** m, size=n_values, replace=False, shuffle=True).astype(np.uint64)
    top_bits = m - 64 * (W - 1)  # bits used in the most significant word

    def draw(size: int) -> np.ndarray:
        x = rng.integers(0, 2 ** 64, size=(size, W), dtype=np.uint64, endpoint=False)
        if top_bits < 64:
            x[:, 0] &= np.uint64((1 << top_bits) - 1)
        return x[:, 0].copy() if W == 1 else x

    out = draw(n_values)
    while True:  # rejection of repeats, keeping first occurrences in draw order
        _, first = np.unique(value_keys(out), return_index=True)
        if first.shape[0] >= n_values:
            first.sort()
            return np.ascontiguousarray(out[first[:n_values]])
        first.sort()
        out = np.concatenate([out[first], draw(2 * (n_values - first.shape[0]) + 16)])


def _check_sampling(sampling) -> Sampling:
    if sampling not in get_args(Sampling):
        raise ValueError(f"sampling must be 'multinomial' or 'rounded', got {sampling!r}")
    return sampling


def _counts_from_frequencies(n: int, f: np.ndarray, sampling: str, rng: np.random.Generator) -> np.ndarray:
    if sampling == "multinomial":  # n i.i.d. users
        return rng.multinomial(n, f).astype(np.int64)
    return largest_remainder(n, f)  # sums to n exactly


def _synthetic(n: int, f: np.ndarray, m: int, name: str, sampling: str, rng, params: dict) -> Dataset:
    rng = check_rng(rng)
    value_rng, count_rng, order_rng = rng.spawn(3)
    values = random_distinct_values(f.shape[0], m, rng=value_rng)  # rank j -> values[j - 1]
    counts = _counts_from_frequencies(n, f, sampling, count_rng)
    params = dict(params, sampling=sampling, support=f.shape[0], rank_frequencies=readonly(f))
    return Dataset.from_counts(values, counts, m, name, rng=order_rng, params=params)


def zipf(n: int, s: float = 1.5, m: int = 64, *, n_distinct: int | None = None, drop_top: int = 0,
         sampling: Sampling = "multinomial", rng=None) -> Dataset:
    """Zipf data of section 5: ``f_j`` proportional to ``1/j**s``; ``zipf(-20)`` is ``drop_top=20``.

    The values behind the ranks are distinct uniformly random m-bit strings
    ("the values of the heavy hitters are random").

    Parameters
    ----------
    n : int
        Number of users, >= 1.
    s : float
        Zipf exponent (section 5: 1.5).
    m : int
        Bits per value.
    n_distinct : int or None
        Size of the support (ranks kept after the drop).  Default
        ``min(2**m, 2**16)``: for s = 1.5 the mass beyond rank 2**16 of an
        untruncated Zipf law is 0.3 %, and with n = 10**6 users the realised
        number of distinct values is far below the support.
    drop_top : int
        Leading ranks removed before renormalising (20 for ``zipf(-20)``).
    sampling : {'multinomial', 'rounded'}
        'multinomial': each user draws a rank i.i.d. from ``f`` (the data are
        a sample, so realised frequencies scatter around ``f``).  'rounded':
        counts are ``n f_j`` rounded by largest remainder (sum exactly ``n``).
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness (SPEC 7); split with ``Generator.spawn`` into the value
        draw, the counts and the user order, so the values behind the ranks
        do not depend on ``n`` or ``sampling``.

    Returns
    -------
    Dataset
        ``params`` holds the generator's ``rank_frequencies`` (for analytic curves).

    References
    ----------
    Section 5 (validation of the analysis) of the paper.
    """
    n = check_int(n, "n", 1)
    m = check_int(m, "m", 1, MAX_BITS)
    check_users_fit(n, m)
    s = check_real(s, "s", lo=0.0, lo_open=True)
    drop_top = check_int(drop_top, "drop_top", 0)
    if n_distinct is None:
        n_distinct = min(2 ** m, 2 ** 16)
    n_distinct = check_int(n_distinct, "n_distinct", 1, 2 ** m)
    sampling = _check_sampling(sampling)
    f = zipf_frequencies(n_distinct, s, drop_top=drop_top)  # section 5: f_j ~ 1/j^1.5
    name = f"zipf(-{drop_top})" if drop_top else "zipf"
    return _synthetic(n, f, m, name, sampling, rng,
                      {"generator": "zipf", "s": s, "drop_top": drop_top})


def _exp_support(n: int, scale: float) -> int:
    # smallest J with exp(-scale J) <= 1e-3 / n: the chance that any of n users of the
    # untruncated geometric law falls beyond rank J is at most 0.1 %
    return max(1, math.ceil(math.log(1e3 * n) / scale))


def exponential(n: int = 10 ** 6, scale: float = 0.05, m: int = 64, *, n_distinct: int | None = None,
                sampling: Sampling = "multinomial", rng=None) -> Dataset:
    """The synthetic data set of section 6.1: exponential (geometric) frequencies, scale 0.05.

    Reading of "exponential distribution (also known as geometric
    distribution) ... The exponential scale is 0.05, which is close to the
    experimental setting in RAPPOR": the j-th most frequent value has
    frequency proportional to ``exp(-0.05 j)``, i.e. a geometric law on the
    ranks with ``p = 1 - exp(-0.05) = 0.0488`` -- RAPPOR's ``exp`` test
    distribution (``dexp(1:100, rate = 5/100)``) without its cut at 100
    values.  Calibration check: ``f_16 = (1 - e^-0.05) e^-0.75 = 0.0230``,
    matching section 6.2.3's "0.023 is around frequency of the 16-th most
    frequent value in the dataset".  (NumPy's ``exponential(scale=0.05)``,
    i.e. rate 20, would put all mass on rank 1.)  Values are distinct
    uniformly random m-bit strings.

    Parameters
    ----------
    n : int
        Number of users (paper: 10**6).
    scale : float
        Decay rate per rank (paper: 0.05).
    m : int
        Bits per value (paper: 64).
    n_distinct : int or None
        Number of ranks.  Default: the smallest ``J`` with
        ``exp(-scale J) <= 10**-3 / n`` (415 for the paper's setting), so the
        cut is invisible with probability >= 99.9 %; ``n_distinct=100`` gives
        RAPPOR's exact truncated law.
    sampling : {'multinomial', 'rounded'}
        See :func:`zipf`.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness (SPEC 7).

    Returns
    -------
    Dataset

    References
    ----------
    Sections 6.1 (datasets) and 6.2.3 (theta = 0.023) of the paper; RAPPOR (Erlingsson, Pihur and
    Korolova, CCS 2014), whose test distribution this is.
    """
    n = check_int(n, "n", 1)
    m = check_int(m, "m", 1, MAX_BITS)
    check_users_fit(n, m)
    scale = check_real(scale, "scale", lo=0.0, lo_open=True)
    if n_distinct is None:
        n_distinct = min(2 ** m, _exp_support(n, scale))
    n_distinct = check_int(n_distinct, "n_distinct", 1, 2 ** m)
    sampling = _check_sampling(sampling)
    f = exponential_frequencies(n_distinct, scale)
    return _synthetic(n, f, m, "exponential", sampling, rng,
                      {"generator": "exponential", "scale": scale})

