"""Optimized local hashing (paper section 2.2.2) and binary local hashing."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..randomness import Coins
from ..validation import EXP_MAX_EPSILON, check_epsilon, check_int
from ..values import n_chunks
from .base import grr_apply, grr_draw, grr_pmf, uint_dtype
from .formulas import default_d_prime, olh_pq, olh_variance
from .hashed import HashedOracle, SymbolReports
from .kernels import olh_indicators, olh_support

__all__ = ["OLH", "BLH", "OLHReports", "default_d_prime", "MAX_D_PRIME", "MAX_EPSILON"]

#: largest hash range: ``y * 2**32`` must fit in 64 bits in the kernel
MAX_D_PRIME = 2**31
#: largest epsilon whose default ``d' = ceil(e^eps + 1)`` is at most :data:`MAX_D_PRIME`:
#: ``ln(2**31 - 1)``, about 21.49.  A protocol that gives each report ``eps / s``
#: accepts ``eps`` up to ``s`` times this.
MAX_EPSILON = math.log(MAX_D_PRIME - 1)
_MAX_EPSILON_WHY = "OLH's hash range d' = ceil(e^epsilon + 1) must be at most 2**31"


class OLHReports(SymbolReports):
    """OLH reports: the user's hash seed and her perturbed hash value ``y`` in ``[0, d')``.

    ``params``: ``kind='OLH'``, ``epsilon``, ``d_prime``, ``m``.
    """

    kind = "OLH"

    @classmethod
    def _symbol_range(cls, params) -> tuple[int, str]:
        dp = int(params["d_prime"])
        return dp, f"d_prime = {dp}"


class OLH(HashedOracle[OLHReports]):
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
    d_prime : int, keyword-only, optional
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
    :meth:`support` runs a compiled numba kernel (:mod:`ldp.oracles.kernels`)
    that evaluates every report's hash on every candidate; it is the fast path
    for many candidates at once (pass them all in one call).

    References
    ----------
    Paper section 2.2.2, eqs. (2) and (3).
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

    def __init__(self, epsilon: float, *, d_prime: int | None = None, m: int = 64):
        if d_prime is None:
            self.epsilon = check_epsilon(epsilon, hi=MAX_EPSILON,
                                         why=f"{_MAX_EPSILON_WHY}; pass d_prime to go higher")
        else:
            self.epsilon = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why="e**epsilon must be a finite double")
        self.m = self._check_m(m)
        if d_prime is None:
            self.d_prime = default_d_prime(self.epsilon)
        else:
            self.d_prime = check_int(d_prime, "d_prime", lo=2, hi=MAX_D_PRIME)
        self.cells = self.d_prime  # the hash range is the cell range of HashedOracle
        self.p, self.q = olh_pq(self.epsilon, d_prime=self.d_prime)  # section 2.2.2: GRR on [d'], q = 1/d'

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
        return self.cell(seeds, values)

    def output_pmf(self, hashed: int) -> np.ndarray:
        """Distribution of ``y`` given ``H(v) = hashed``, over ``[0, d')``.

        The law :meth:`privatize` samples from once the hash is fixed: GRR on
        ``[d']`` with keep probability ``p``.
        """
        h = check_int(hashed, "hashed", lo=0, hi=self.d_prime - 1)
        if self.d_prime > 2**24:
            raise ValueError(f"output_pmf needs d_prime <= {2**24}, got {self.d_prime}")
        return grr_pmf(h, self.d_prime, self.p)

    def _draw(self, n: int, private: Coins, public: Coins | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(seeds, keep, r)``: each user's hash seed, GRR's keep coin and its replacement index.

        The seeds (uniform 64-bit, sent in the clear) come from the public
        source; the keep coin (``True`` with probability ``p``) and the
        uniform replacement index in ``[0, d' - 1)`` from the private one, in
        that order.  None of it depends on the values (the hash is chosen
        independently of ``v``).
        """
        assert public is not None
        seeds = public.uint64(n)  # H drawn independently of v, and of the private coins
        keep, r = grr_draw(n, self.d_prime, self.p, private)
        return seeds, keep, r

    def apply_noise(self, values: np.ndarray, noise) -> OLHReports:
        """The reports of canonical ``values`` with the randomness of :meth:`draw_noise`."""
        seeds, keep, r = noise
        h = self._cells(seeds, values)
        y = grr_apply(h, keep, r)
        return OLHReports(self.params, seed=seeds, y=y.astype(uint_dtype(self.d_prime - 1)))

    # ---------------------------------------------------------------- server
    def _support(self, reports: OLHReports, candidates: np.ndarray) -> np.ndarray:
        return olh_support(reports.seed, reports.y, self._chunks(candidates), self.d_prime)

    def support_indicators(self, reports: OLHReports, candidates) -> np.ndarray:
        """Which report supports which candidate: ``out[i, j]`` iff ``H_j(v_i) = y_j``.

        For joint counts over several reports of the same users (e.g. SPM's
        pairs).  Compiled like :meth:`support`; the result takes
        ``n_candidates * n`` bytes, so pass candidates in batches if needed.

        Parameters
        ----------
        reports : OLHReports
            Reports of this oracle, as for :meth:`support`.
        candidates : array_like
            The values tested.

        Returns
        -------
        numpy.ndarray
            ``bool`` array of shape ``(n_candidates, n)``; its row sums are
            :meth:`support`.
        """
        self.check_reports(reports)
        cands = self._check_candidates(candidates)
        return olh_indicators(reports.seed, reports.y, self._chunks(cands), self.d_prime)

    def _variance0(self, n: int) -> float:
        # eq. (3) for the integer d' used: n q (1-q) / (p-q)^2, which is
        # the paper's 4 e^eps / (e^eps - 1)^2 n when d' = e^eps + 1.
        return float(olh_variance(self.epsilon, n, d_prime=self.d_prime))


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
    interchangeable with those of ``OLH(epsilon, d_prime=2, m=m)``.

    References
    ----------
    R. Bassily, A. Smith, "Local, private, efficient protocols for succinct
    histograms", STOC 2015; Wang et al., USENIX Security 2017 (section 4.4).
    """

    def __init__(self, epsilon: float, *, m: int = 64):
        super().__init__(epsilon, d_prime=2, m=m)

    def __repr__(self) -> str:
        return f"BLH(epsilon={self.epsilon!r}, m={self.m!r})"
