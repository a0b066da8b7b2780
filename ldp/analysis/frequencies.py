"""Rank-frequency laws: THE Zipf and exponential laws of the project, and the optimizer's assumption.

* :func:`zipf_frequencies` -- ``f_j`` proportional to ``1/j^s`` (sections 4.3
  and 5), optionally with the head dropped (section 5's ``zipf(-20)``);
* :func:`exponential_frequencies` -- ``f_j`` proportional to ``exp(-scale j)``
  (section 6.1's synthetic set);
* :func:`assumed_frequencies` -- the ``f_1..f_k`` the optimizer assumes
  (section 4.3: Zipf with exponent 1 over ``min(2^m, n)`` values), also for
  supports too large to enumerate;
* :func:`heavy_frequencies` -- the ``k`` largest frequencies of any law.

The exponent and the scale have no defaults: section 4.3 assumes exponent 1,
section 5 generates data with 1.5, so the caller says which.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 4.3, 5 and 6.1.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..validation import check_frequencies, check_int, check_real

__all__ = ["zipf_frequencies", "exponential_frequencies", "assumed_frequencies", "heavy_frequencies"]

#: supports up to this size are normalised by summing every term
_ZIPF_DIRECT_MAX = 1 << 22


def zipf_frequencies(n_distinct: int, exponent: float, *, drop_top: int = 0) -> np.ndarray:
    """Zipf rank frequencies ``f_j`` proportional to ``1/(j + drop_top)^exponent``, ``j = 1..n_distinct``.

    Section 4.3 assumes exponent 1 for the optimizer; section 5 generates
    data with exponent 1.5 ("the j-th most frequent value has frequency ``f_j``
    proportional to ``1/j^1.5``"), and its ``zipf(-20)`` drops the 20 most
    frequent values (ranks 21, 22, ... kept and renormalised).

    Parameters
    ----------
    n_distinct : int
        Number of values kept (the support, after the drop), >= 1.
    exponent : float
        Zipf exponent ``s``, finite and >= 0 (0 is the uniform law).
    drop_top : int, keyword-only, default 0
        Number of leading ranks removed, >= 0.

    Returns
    -------
    numpy.ndarray
        ``n_distinct`` frequencies summing to 1, non-increasing.

    References
    ----------
    [PEM] sections 4.3 and 5.
    """
    n_distinct = check_int(n_distinct, "n_distinct", 1)
    s = check_real(exponent, "exponent", lo=0.0)
    drop_top = check_int(drop_top, "drop_top", 0)
    j = np.arange(drop_top + 1, drop_top + n_distinct + 1, dtype=float)
    f = j ** -s
    return f / f.sum()


def exponential_frequencies(n_distinct: int, scale: float) -> np.ndarray:
    """Exponential (geometric) rank frequencies ``f_j`` proportional to ``exp(-scale j)``, ``j = 1..n_distinct``.

    A geometric law with success probability ``p = 1 - exp(-scale)`` (0.0488
    for scale 0.05), truncated to ``n_distinct`` ranks and renormalised.  This
    is RAPPOR's test distribution ``dexp(j, rate = 5/100)`` (rate 0.05 over
    100 values) extended to more ranks; with section 6.1's scale 0.05 it gives
    ``f_16 = 0.0230``, the "0.023 ... around frequency of the 16-th most
    frequent value" of section 6.2.3.

    Parameters
    ----------
    n_distinct : int
        Number of ranks, >= 1.
    scale : float
        Decay per rank, finite and > 0 (section 6.1: "the exponential scale
        is 0.05").

    Returns
    -------
    numpy.ndarray
        ``n_distinct`` frequencies summing to 1, each ``exp(-scale)`` times the previous one.

    References
    ----------
    [PEM] sections 6.1 and 6.2.3.
    """
    n_distinct = check_int(n_distinct, "n_distinct", 1)
    scale = check_real(scale, "scale", lo=0.0, lo_open=True)
    f = np.exp(-scale * np.arange(n_distinct, dtype=float))  # exp(-scale j) / exp(-scale)
    return f / f.sum()


def heavy_frequencies(freqs, k: int, name: str = "freqs") -> np.ndarray:
    """The ``k`` largest frequencies of a distribution, in rank order (zeros pad a shorter law).

    Parameters
    ----------
    freqs : array_like
        A frequency distribution (non-negative, sums to 1).
    k : int
        Number of ranks wanted.
    name : str
        Parameter name used in error messages.

    Returns
    -------
    numpy.ndarray of shape (k,)
    """
    f = check_frequencies(freqs, name)
    f = np.sort(f)[::-1]
    if f.size >= k:
        return f[:k].copy()
    return np.concatenate([f, np.zeros(k - f.size)])


def _zipf_top(k: int, support: int, s: float) -> np.ndarray:
    """The first ``min(k, support)`` Zipf(s) frequencies over ``support`` values, zero-padded to ``k``."""
    top = min(k, support)
    if support <= _ZIPF_DIRECT_MAX:
        f = zipf_frequencies(support, s)[:top].copy()
    else:  # the harmonic number H = sum_j j^(-s) in closed form
        if s == 1.0:
            H = float(special.digamma(support + 1.0) + np.euler_gamma)          # H_S = psi(S+1) + gamma
        elif s > 1.0:
            H = float(special.zeta(s, 1.0) - special.zeta(s, support + 1.0))    # Hurwitz zeta difference
        else:  # Euler-Maclaurin, error O(S^{-s-3})
            S = float(support)
            H = float(special.zeta(s) + S ** (1 - s) / (1 - s) + 0.5 * S ** (-s) - s * S ** (-s - 1) / 12)
        f = np.arange(1, top + 1, dtype=float) ** (-s) / H
    return np.concatenate([f, np.zeros(k - top)]) if top < k else f


def assumed_frequencies(distribution, k: int, *, n=None, m=None, zipf_exponent: float = 1.0,
                        support: int | None = None) -> np.ndarray:
    """``f_1..f_k`` assumed by the optimizer.

    Parameters
    ----------
    distribution : "zipf" or array_like
        ``"zipf"``: ``f_j proportional to 1/j^zipf_exponent`` over ``support``
        values (section 4.3 assumes exponent 1); an array: any frequency
        distribution (sorted decreasingly here).
    k : int
        Number of heavy hitters.
    n, m : optional
        Used for the default Zipf support ``min(2^m, n)`` (no more distinct
        values than users or than the domain holds).
    zipf_exponent : float, default 1.0
        Section 4.3's assumption.
    support : int, optional
        Number of distinct values of the Zipf law.

    Returns
    -------
    ndarray of shape (k,)

    Notes
    -----
    Supports up to ``2^22`` values are normalised by summing every term (the
    numbers are those of :func:`zipf_frequencies`); larger ones use the
    closed forms of the harmonic number (digamma for exponent 1, Hurwitz zeta
    above 1, Euler-Maclaurin below 1).
    """
    k = check_int(k, "k", 1)
    if isinstance(distribution, str):
        if distribution != "zipf":
            raise ValueError(f"distribution must be 'zipf' or a frequency vector, got {distribution!r}")
        s = check_real(zipf_exponent, "zipf_exponent", lo=0.0)
        if support is None:
            if n is None or m is None:
                raise ValueError("give support, or n and m for the default support min(2**m, n)")
            support = min(2 ** int(m), int(math.ceil(float(n))))
        support = check_int(support, "support", 1)
        return _zipf_top(k, support, s)
    return heavy_frequencies(distribution, k, "distribution")
