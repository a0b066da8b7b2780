"""Exact sparse draws from the binomial: the top of many i.i.d. ``Bin(n, q)`` supports (law 1, :mod:`ldp.engines`).

With crafted reports among the users (:class:`ldp.engines.CraftedUsers`), a
candidate nobody holds has support ``Bin(n, q) + Bin(f, rho)``: the same
sampler runs on the tail table of that sum (:func:`sum_tail_table`).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit
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


@njit(cache=True)
def _last_at_least(S, w):  # pragma: no cover - compiled
    # largest t with S[t] >= w in the non-increasing S (-1 if none): numpy.searchsorted(-S, -w, side="right") - 1
    lo, hi = 0, S.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if S[mid] >= w:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@njit(cache=True)
def _last_at_most(C, w):  # pragma: no cover - compiled
    # largest x with C[x] <= w in the non-decreasing C (-1 if none): numpy.searchsorted(C, w, side="right") - 1
    lo, hi = 0, C.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if C[mid] <= w:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@njit(cache=True)
def _band_from_uniforms(S, C, a, b, u):  # pragma: no cover - compiled
    # the inverse-cdf step of band_values, entry by entry, with the same float operations
    out = np.empty(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        aa, bb = a[i], b[i]
        if S[aa] <= 0.5:  # upper tail: invert S
            x = _last_at_least(S, S[bb] + u[i] * (S[aa] - S[bb]))
        else:  # lower tail: invert C
            x = _last_at_most(C, C[aa] + u[i] * (C[bb] - C[aa]))
        out[i] = min(max(x, aa), bb - 1)
    return out


def band_values(S, C, a, b, *, rng):
    """Draw one value of ``X`` conditioned on ``a <= X < b`` per entry (table indices)."""
    u = rng.random(a.shape[0])
    return _band_from_uniforms(S, C, a, b, u)


@njit(cache=True)
def _next_bands(S, C, cur, R, got, K, need):  # pragma: no cover - compiled
    # One step of iid_binomial_top: the blocks still drawing, the lower end ``new`` of the band
    # [new, cur) each draws next, and the probability pi that one of its remaining members falls in it.
    # need < 0: no threshold.
    B = cur.shape[0]
    active = np.empty(B, dtype=np.int64)
    na = 0
    for i in range(B):
        want = K - got[i] > 0 or (need >= 0 and cur[i] > need)
        if want and R[i] > 0 and cur[i] > 0:
            active[na] = i
            na += 1
    active = active[:na]
    new = np.empty(na, dtype=np.int64)
    pi = np.empty(na, dtype=np.float64)
    for j in range(na):
        i = active[j]
        d = float(max(K - got[i], 0))
        r = float(R[i])
        c = cur[i]
        E = d + 4 * np.sqrt(d) + 4 if d > 0 else 0.0
        target = S[c] + E * C[c] / r
        x = 0 if target > 1.0 else _last_at_least(S, target)
        x = min(max(x, 0), c - 1)
        if need >= 0:
            if c > need:
                x = min(x, need)
            if not d > 0:
                x = min(c - 1, need)
        new[j] = x
        # P(new <= X < cur | X < cur)
        num = S[x] - S[c] if S[x] <= 0.5 else C[c] - C[x]
        p = num / max(C[c], 1e-300)
        pi[j] = 1.0 if x == 0 else min(max(p, 0.0), 1.0)
    return active, new, pi


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
    need = -1 if min_support is None else int(np.clip(min_support - lo, 0, top))
    vals, blks = [], []
    for _ in range(10_000):
        active, new, pi = _next_bands(S, C, cur, R, got, int(K), need)
        if active.size == 0:
            break
        M = rng.binomial(R[active], pi)
        drawn = int(M.sum())
        u = rng.random(drawn) if drawn else _NO_UNIFORMS  # band_values' uniforms, the members drawn in the bands
        x, bl = _take_bands(S, C, cur, R, got, active, new, M, u, drawn)
        if drawn:
            vals.append(x + lo)
            blks.append(bl)
    if not vals:
        return got, np.zeros(0, dtype=np.int64)
    v = np.concatenate(vals) if len(vals) > 1 else vals[0]
    if B > 1:
        bl = np.concatenate(blks) if len(blks) > 1 else blks[0]
        v = v[np.argsort(bl, kind="stable")]
    return got, v


_NO_UNIFORMS = np.zeros(0, dtype=np.float64)


@njit(cache=True)
def _take_bands(S, C, cur, R, got, active, new, M, u, drawn):  # pragma: no cover - compiled
    # One step of iid_binomial_top after its binomial draw: M[j] members of block active[j] fall in
    # [new[j], cur); their values by band_values' inverse cdf from the uniforms u (in block order),
    # then the blocks' state moves down to the band's lower end.
    a = np.empty(drawn, dtype=np.int64)
    b = np.empty(drawn, dtype=np.int64)
    blk = np.empty(drawn, dtype=np.int64)
    k = 0
    for j in range(active.shape[0]):
        i = active[j]
        for _ in range(M[j]):
            a[k] = new[j]
            b[k] = cur[i]
            blk[k] = i
            k += 1
        R[i] -= M[j]
        got[i] += M[j]
        cur[i] = new[j]
    return _band_from_uniforms(S, C, a, b, u), blk
