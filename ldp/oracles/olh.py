"""Optimized local hashing (paper section 2.2.2) and binary local hashing."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..validation import EXP_MAX_EPSILON, check_epsilon, check_int
from ..values import MAX_BITS, as_values, n_chunks, to_chunks32
from . import hashing
from ._kernels import olh_indicators, olh_support
from .base import FrequencyOracle, Reports, _exp, grr_apply, grr_draw, grr_pmf, uint_dtype

__all__ = ["OLH", "BLH", "OLHReports", "default_d_prime", "MAX_D_PRIME", "MAX_EPSILON"]

#: largest hash range: ``y * 2**32`` must fit in 64 bits in the kernel
MAX_D_PRIME = 2**31
#: largest epsilon whose default ``d' = ceil(e^eps + 1)`` is at most :data:`MAX_D_PRIME`:
#: ``ln(2**31 - 1)``, about 21.49.  A protocol that gives each report ``eps / s``
#: accepts ``eps`` up to ``s`` times this.
MAX_EPSILON = math.log(MAX_D_PRIME - 1)
_MAX_EPSILON_WHY = "OLH's hash range d' = ceil(e^epsilon + 1) must be at most 2**31"


def default_d_prime(epsilon: float) -> int:
    """The paper's ``d' = ceil(e^eps + 1)`` (section 2.2.2).

    ``e^eps + 1`` within ``1e-9`` (relative) of an integer is taken as that
    integer, so that ``epsilon = log(3)`` gives ``d' = 4`` although
    ``exp(log(3))`` is ``3.0000000000000004`` in floating point.
    """
    x = _exp(check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why="e**epsilon must be a finite double")) + 1.0
    r = round(x)
    return int(r) if abs(x - r) <= 1e-9 * x else int(math.ceil(x))


class OLHReports(Reports):
    """OLH reports: the user's hash seed and her perturbed hash value.

    ``params``: ``kind='OLH'``, ``epsilon``, ``d_prime``, ``m``.
    """

    kind = "OLH"
    fields = ("seed", "y")

    @property
    def seed(self) -> np.ndarray:
        """``uint64`` seed of each user's hash function ``H`` (:mod:`ldp.oracles.hashing`)."""
        return self._arrays["seed"]

    @property
    def y(self) -> np.ndarray:
        """Each user's perturbed hash value in ``[0, d')`` (smallest unsigned dtype)."""
        return self._arrays["y"]

    def _validate(self) -> None:
        dp = int(self._params["d_prime"])
        seed, y = self._arrays["seed"], self._arrays["y"]
        if seed.ndim != 1 or seed.dtype != np.uint64:
            raise ValueError(f"OLH reports 'seed' must be a 1-D uint64 array, got {seed.dtype} {seed.shape}")
        if y.ndim != 1 or y.dtype != uint_dtype(dp - 1):
            raise ValueError(f"OLH reports 'y' must be a 1-D {uint_dtype(dp - 1)} array, got {y.dtype} {y.shape}")
        if y.size and int(y.max()) >= dp:
            raise ValueError(f"OLH reports 'y' must be in [0, d_prime = {dp}), found {int(y.max())}")


class OLH(FrequencyOracle):
    """Optimized local hashing (OLH).

    Each user draws a hash function ``H : {0,1}^m -> [d']`` from a strongly
    universal family (identified by a 64-bit seed, see
    :mod:`ldp.oracles.hashing`) and reports ``<H, GRR(H(v))>``, where GRR on
    ``[d']`` keeps ``H(v)`` with probability ``p = e^eps / (e^eps + d' - 1)``.
    A report supports value ``v`` if ``H(v) = y``; this happens with
    probability ``p`` for the user's own value and ``q = 1/d'`` for any other.

    Parameters
    ----------
    epsilon : float
        Privacy budget, a finite real number > 0: at most
        ``ln(2**31 - 1) = 21.49`` (:data:`MAX_EPSILON`) with the default
        ``d'`` (which must stay at most ``2**31``), at most ``709.78``
        (``e^eps`` a finite double) with an explicit ``d_prime``.
    d_prime : int, optional
        Hash range ``d'``, 2 to ``2**31``.  Default ``ceil(e^eps + 1)``
        (paper section 2.2.2; see :func:`default_d_prime`).
    m : int, keyword-only, default 64
        Bit width of the values, 1 to 4096.  Values use the canonical
        representation of :mod:`ldp.values` (for ``m <= 64`` a plain integer
        or ``uint64`` array).

    Attributes
    ----------
    p, q : float
        Support probabilities for the user's own value and for another value.

    Notes
    -----
    :meth:`support` runs a compiled numba kernel (:mod:`ldp.oracles._kernels`)
    that evaluates every report's hash on every candidate; it is the fast path
    for many candidates at once (pass them all in one call).

    References
    ----------
    Paper section 2.2.2, eqs. (``eqn:est``) and (``var_olh``).
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private
    protocols for frequency estimation", USENIX Security 2017.

    Examples
    --------
    >>> import numpy as np, ldp
    >>> olh = ldp.OLH(2.0, m=16)
    >>> olh.d_prime
    9
    >>> reports = olh.privatize(np.array([5, 5, 7], dtype=np.uint64), rng=1)
    >>> olh.support(reports, [5, 7]).dtype
    dtype('int64')
    """

    kind = "OLH"
    reports_class = OLHReports

    def __init__(self, epsilon: float, d_prime: int | None = None, *, m: int = 64):
        if d_prime is None:
            self.epsilon = check_epsilon(epsilon, hi=MAX_EPSILON,
                                         why=f"{_MAX_EPSILON_WHY}; pass d_prime to go higher")
        else:
            self.epsilon = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why="e**epsilon must be a finite double")
        self.m = check_int(m, "m", lo=1, hi=MAX_BITS)
        if d_prime is None:
            self.d_prime = default_d_prime(self.epsilon)
            assert self.d_prime <= MAX_D_PRIME
        else:
            self.d_prime = check_int(d_prime, "d_prime", lo=2, hi=MAX_D_PRIME)
        e = _exp(self.epsilon)
        self.p = e / (e + self.d_prime - 1)  # section 2.2.2: GRR on [d']
        self.q = 1.0 / self.d_prime  # section 2.2.2: eq. (eqn:est) uses n/d'

    @property
    def params(self) -> dict[str, Any]:
        return {"kind": "OLH", "epsilon": self.epsilon, "d_prime": self.d_prime, "m": self.m}

    @property
    def n_chunks(self) -> int:
        """Number of 32-bit chunks the hash reads (``ceil(m / 32)``)."""
        return n_chunks(self.m)

    # ------------------------------------------------------------------ user
    def hash(self, seeds, values) -> np.ndarray:
        """``H_seed(v)`` in ``[0, d')`` for paired seeds and values (client-side code)."""
        vals = as_values(values, self.m, name="values")
        seeds = np.asarray(seeds, dtype=np.uint64)
        if seeds.ndim == 0:
            seeds = np.full(vals.shape[0], seeds, dtype=np.uint64)
        return hashing.hash_values(seeds, vals, self.m, self.d_prime)

    def output_pmf(self, hashed: int) -> np.ndarray:
        """Distribution of ``y`` given ``H(v) = hashed``, over ``[0, d')``.

        The law :meth:`privatize` samples from once the hash is fixed: GRR on
        ``[d']`` with keep probability ``p``.
        """
        h = check_int(hashed, "hashed", lo=0, hi=self.d_prime - 1)
        if self.d_prime > 2**24:
            raise ValueError(f"output_pmf needs d_prime <= {2**24}, got {self.d_prime}")
        return grr_pmf(h, self.d_prime, self.p)

    def privatize(self, values, rng=None) -> OLHReports:
        """Each user's report ``<seed, y>``.

        Parameters
        ----------
        values : array_like
            One ``m``-bit value per user (canonical representation of
            :mod:`ldp.values`; for ``m <= 64`` integers or a ``uint64`` array).
        rng : None, int, SeedSequence, BitGenerator or Generator
            Randomness source.  Draw order: all seeds (independent of the
            values), then GRR's coins.

        Returns
        -------
        OLHReports
        """
        vals = as_values(values, self.m, name="values")
        return self.apply_noise(vals, self.draw_noise(vals.shape[0], self._rng(rng)))

    def draw_noise(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The randomness of :meth:`privatize` for ``n`` users, drawn before any value is seen.

        Returns ``(seeds, keep, r)``: each user's hash seed (uniform 64-bit),
        GRR's keep coin (``True`` with probability ``p``) and its uniform
        replacement index in ``[0, d' - 1)``, drawn in that order.  None of it
        depends on the values (the hash is chosen independently of ``v``).
        """
        seeds = rng.integers(0, 2**64, size=n, dtype=np.uint64)  # H drawn independently of v
        keep, r = grr_draw(n, self.d_prime, self.p, rng)
        return seeds, keep, r

    def apply_noise(self, values: np.ndarray, noise) -> OLHReports:
        """The reports of canonical ``values`` with the randomness of :meth:`draw_noise`.

        ``privatize(values, rng) == apply_noise(values, draw_noise(len(values), rng))``.
        """
        seeds, keep, r = noise
        h = hashing.reduce_to_range(hashing.hash_u32(seeds, to_chunks32(values, self.m)), self.d_prime)
        y = grr_apply(h, keep, r)
        return OLHReports(self.params, seed=seeds, y=y.astype(uint_dtype(self.d_prime - 1)))

    # ---------------------------------------------------------------- server
    def _check_candidates(self, candidates) -> np.ndarray:
        return as_values(candidates, self.m, name="candidates")

    def _support(self, reports: OLHReports, candidates: np.ndarray) -> np.ndarray:
        chunks = np.ascontiguousarray(to_chunks32(candidates, self.m).T)
        return olh_support(reports.seed, reports.y, chunks, self.d_prime)

    def support_indicators(self, reports: OLHReports, candidates) -> np.ndarray:
        """Which report supports which candidate: ``out[i, j]`` iff ``H_j(v_i) = y_j``.

        For joint counts over several reports of the same users (e.g. SPM's
        pairs).  Compiled like :meth:`support`; the result takes
        ``n_candidates * n`` bytes, so pass candidates in batches if needed.

        Parameters
        ----------
        reports : OLHReports
            Output of :meth:`privatize` of an oracle with the same parameters.
        candidates : array_like
            Values to test.

        Returns
        -------
        numpy.ndarray
            ``bool`` array of shape ``(n_candidates, n)``; its row sums are
            :meth:`support`.
        """
        self.check_reports(reports)
        cands = self._check_candidates(candidates)
        chunks = np.ascontiguousarray(to_chunks32(cands, self.m).T)
        return olh_indicators(reports.seed, reports.y, chunks, self.d_prime)

    def _variance0(self, n: int) -> float:
        # eq. (var_olh) for the integer d' used: n q (1-q) / (p-q)^2, which is
        # the paper's 4 e^eps / (e^eps - 1)^2 n when d' = e^eps + 1.
        p, q = self.p, self.q
        return n * q * (1 - q) / (p - q) ** 2


class BLH(OLH):
    """Binary local hashing: OLH with ``d' = 2``.

    Parameters
    ----------
    epsilon : float
        Privacy budget, a finite real number in ``(0, 709.78]`` (``e^eps``
        must be a finite double; ``d' = 2`` is fixed).
    m : int, keyword-only, default 64
        Bit width of the values, 1 to 4096.

    Notes
    -----
    Reports are :class:`OLHReports` with ``d_prime = 2`` and are
    interchangeable with those of ``OLH(epsilon, 2, m=m)``.

    References
    ----------
    R. Bassily, A. Smith, "Local, private, efficient protocols for succinct
    histograms", STOC 2015; Wang et al., USENIX Security 2017 (section 4.4).
    """

    def __init__(self, epsilon: float, *, m: int = 64):
        super().__init__(epsilon, 2, m=m)

    def __repr__(self) -> str:
        return f"BLH(epsilon={self.epsilon!r}, m={self.m!r})"
