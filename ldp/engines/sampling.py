"""Exact sparse draws from the binomial: the top of many i.i.d. ``Bin(n, q)`` supports (law 1, :mod:`ldp.engines`).

With crafted reports among the users (:class:`ldp.engines.CraftedUsers`), a
candidate nobody holds has support ``Bin(n, q) + Bin(f, rho)``: the same
sampler runs on the tail table of that sum (:func:`sum_tail_table`).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

__all__ = ["binomial_tail_table", "sum_tail_table", "iid_binomial_top"]


@lru_cache(maxsize=128)
def binomial_tail_table(n: int, q: float):
    """Tail probabilities of ``X ~ Bin(n, q)`` on ``t = lo .. hi + 1``.

    Returns ``(lo, S, C)`` with ``S[t - lo] = P(X >= t)`` and
    ``C[t - lo] = P(X < t)``, each computed directly (``scipy.stats.binom``)
    so both tails are accurate.  ``[lo, hi]`` is the mean +- 40 standard
    deviations (+- 60); the mass outside is below ``1e-300`` and treated as 0.
    """
    mu = n * q
    sd = math.sqrt(n * q * (1 - q))
    lo = max(0, int(math.floor(mu - 40 * sd - 60)))
    hi = min(n, int(math.ceil(mu + 40 * sd + 60)))
    t = np.arange(lo, hi + 2, dtype=np.float64)
    S = stats.binom.sf(t - 1, n, q)
    C = stats.binom.cdf(t - 1, n, q)
    S[0], C[0] = 1.0, 0.0
    S[-1], C[-1] = 0.0, 1.0
    S = np.minimum.accumulate(S)
    C = np.maximum.accumulate(C)
    S.flags.writeable = False
    C.flags.writeable = False
    return lo, S, C


@lru_cache(maxsize=128)
def sum_tail_table(n: int, q: float, f: int, rho: float):
    """Tail probabilities of ``X + Y`` with ``X ~ Bin(n, q)`` and ``Y ~ Bin(f, rho)`` independent.

    The same ``(lo, S, C)`` layout as :func:`binomial_tail_table`: the pmf of
    the sum is the convolution of the two pmfs, each where it is at least
    ``1e-60`` of its largest value (the mass left out is below ``1e-55``);
    ``S`` (upper tail) is summed from the top and ``C`` (lower tail) from the
    bottom, so both tails keep their relative accuracy.
    """
    parts = []
    for nn, pp in ((int(n), float(q)), (int(f), float(rho))):
        sd = math.sqrt(nn * pp * (1 - pp))
        a = max(0, int(math.floor(nn * pp - 40 * sd - 60)))
        b = min(nn, int(math.ceil(nn * pp + 40 * sd + 60)))
        pmf = stats.binom.pmf(np.arange(a, b + 1), nn, pp)
        keep = np.flatnonzero(pmf >= 1e-60 * pmf.max())  # the mass left out is below 1e-55: treated as 0
        parts.append((a + keep[0], pmf[keep[0]:keep[-1] + 1]))
    lo = parts[0][0] + parts[1][0]
    pmf = np.convolve(parts[0][1], parts[1][1])
    S = np.r_[np.cumsum(pmf[::-1])[::-1], 0.0]  # S[t - lo] = P(X + Y >= t), t = lo .. hi + 1
    C = np.r_[0.0, np.cumsum(pmf)]  # C[t - lo] = P(X + Y < t)
    S[0], C[0] = 1.0, 0.0
    S[-1], C[-1] = 0.0, 1.0
    S = np.clip(np.minimum.accumulate(S), 0.0, 1.0)
    C = np.clip(np.maximum.accumulate(C), 0.0, 1.0)
    S.flags.writeable = False
    C.flags.writeable = False
    return lo, S, C


def _band_values(S, C, a, b, *, rng):
    """Draw one value of ``X`` conditioned on ``a <= X < b`` per entry (table indices)."""
    u = rng.random(a.shape[0])
    upper = S[a] <= 0.5
    out = np.empty(a.shape[0], dtype=np.int64)
    if upper.any():
        aa, bb, uu = a[upper], b[upper], u[upper]
        w = S[bb] + uu * (S[aa] - S[bb])
        x = np.searchsorted(-S, -w, side="right") - 1  # largest t with S[t] >= w
        out[upper] = np.clip(x, aa, bb - 1)
    low = ~upper
    if low.any():
        aa, bb, uu = a[low], b[low], u[low]
        w = C[aa] + uu * (C[bb] - C[aa])
        x = np.searchsorted(C, w, side="right") - 1  # C[x] <= w < C[x+1]
        out[low] = np.clip(x, aa, bb - 1)
    return out


def iid_binomial_top(N0: np.ndarray, n: int, q: float, K: int, *, rng: np.random.Generator,
                     min_support: int | None = None, extra: tuple[int, float] | None = None):
    """The largest of ``N0[b]`` i.i.d. ``Bin(n, q)`` supports, for each block ``b``.

    Draws, exactly, every member at or above a random threshold ``t_b``
    chosen so that at least ``K`` members (or all ``N0[b]``) are drawn, and
    ``t_b <= min_support`` when given.

    Parameters
    ----------
    N0 : array_like of int
        Number of candidates nobody holds, per block.
    n, q : int, float
        Each support is ``Bin(n, q)``.
    K : int
        Members wanted per block.
    rng : numpy.random.Generator
        Stream of the draws.
    min_support : int, optional
        Also draw every member at or above this support (threshold mode).
    extra : (int, float), optional
        ``(f, rho)``: each support is ``Bin(n, q) + Bin(f, rho)`` instead
        (:func:`sum_tail_table`; crafted reports that support a candidate
        with probability ``rho``).

    Returns
    -------
    got : numpy.ndarray
        Number drawn per block.
    values : numpy.ndarray
        Their supports, grouped by block (block 0 first), in random order.
    """
    N0 = np.asarray(N0, dtype=np.int64)
    B = N0.shape[0]
    if extra is None or int(extra[0]) == 0:
        lo, S, C = binomial_tail_table(int(n), float(q))
    else:
        lo, S, C = sum_tail_table(int(n), float(q), int(extra[0]), float(extra[1]))
    top = S.shape[0] - 1  # index of t = hi + 1
    cur = np.full(B, top, dtype=np.int64)
    R = N0.copy()
    got = np.zeros(B, dtype=np.int64)
    need = None if min_support is None else int(np.clip(min_support - lo, 0, top))
    vals, blks = [], []
    for _ in range(10_000):
        deficit = np.maximum(K - got, 0)
        want = deficit > 0
        if need is not None:
            want |= cur > need
        active = np.flatnonzero(want & (R > 0) & (cur > 0))
        if active.size == 0:
            break
        d = deficit[active].astype(float)
        r = R[active].astype(float)
        c = cur[active]
        E = np.where(d > 0, d + 4 * np.sqrt(d) + 4, 0.0)
        target = S[c] + E * C[c] / r
        new = np.searchsorted(-S, -target, side="right") - 1
        new = np.where(target > 1.0, 0, new)
        new = np.minimum(np.maximum(new, 0), c - 1)
        if need is not None:
            new = np.where(c > need, np.minimum(new, need), new)
            new = np.where(d > 0, new, np.minimum(c - 1, need))
        # P(new <= X < cur | X < cur)
        upper = S[new] <= 0.5
        num = np.where(upper, S[new] - S[c], C[c] - C[new])
        pi = np.where(new == 0, 1.0, np.clip(num / np.maximum(C[c], 1e-300), 0.0, 1.0))
        M = rng.binomial(R[active], pi)
        if M.sum():
            a = np.repeat(new, M)
            b = np.repeat(c, M)
            vals.append(_band_values(S, C, a, b, rng=rng) + lo)
            blks.append(np.repeat(active, M))
        R[active] -= M
        got[active] += M
        cur[active] = new
    if vals:
        v = np.concatenate(vals)
        bl = np.concatenate(blks)
        order = np.argsort(bl, kind="stable")
        v = v[order]
    else:
        v = np.zeros(0, dtype=np.int64)
    return got, v
