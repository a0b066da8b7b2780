r"""Fast local hashing (FLH): OLH with a public pool of ``h`` hash functions.

The mechanism (Cormode, Maddock and Maple, PVLDB 2021, section 4.3)
--------------------------------------------------------------------
OLH (:mod:`ldp.oracles.olh`, paper section 2.2.2) lets every user draw her own
hash function ``H : {0,1}^m -> [d']`` from a family of ``2**64`` and report
``<H, GRR(H(v))>``; the server must evaluate every report's function on every
candidate, ``n |C|`` hash evaluations per query set.  FLH fixes a *public pool*
of ``h`` functions ``H_0 .. H_{h-1}`` before anyone reports.  User ``u`` draws
an index ``J_u`` uniformly from ``[h]``, independently of her value, and
reports

.. math:: \langle J_u,\ y_u = \mathrm{GRR}_{d'}(H_{J_u}(v_u)) \rangle ,

GRR on ``[d']`` keeping ``H_J(v)`` with probability
``p = e^eps / (e^eps + d' - 1)`` (``d' = ceil(e^eps + 1)``, as OLH).  A report
supports candidate ``c`` iff ``y = H_J(c)``.

**Privacy.**  The index is drawn independently of the value, so for every
output ``(j, y)`` and values ``v, v'``

.. math:: \frac{\Pr[(j, y) \mid v]}{\Pr[(j, y) \mid v']}
          = \frac{\tfrac1h \Pr[\mathrm{GRR}(H_j(v)) = y]}{\tfrac1h \Pr[\mathrm{GRR}(H_j(v')) = y]}
          \le \frac{p}{(1-p)/(d'-1)} = e^\varepsilon ,

whatever the pool: FLH is exactly eps-LDP (``tests/test_flh.py`` enumerates
every output of a small pool).  The index is public (:attr:`FLHReports.public_fields`);
its stream is the public one of :meth:`FLH.draw_noise`.

**Aggregation in O(n + h |C|).**  The supports are a function of the tally
``T[j, y]`` = number of reports ``(j, y)`` alone:

.. math:: I_c = \sum_{j < h} T[j, H_j(c)] .

The server tallies the reports once (``O(n)``, :meth:`FLH.tally`, additive over
batches, files and workers) and evaluates each candidate ``h`` times
(:meth:`FLH.support_from_tally`): ``O(n + h |C|)`` instead of OLH's ``O(n |C|)``.

The pool
--------
The pool is public and part of the plan: one 64-bit ``pool_seed`` (drawn from
the plan's public randomness, :meth:`ldp.protocols.HeavyHitterProtocol.plan`)
expands by splitmix64 into the ``h`` seeds ``s_j = mix(pool_seed + (j + 1) gamma)``
of members of OLH's strongly universal family (:mod:`ldp.oracles.hashing`):
``H_j`` is OLH's hash with seed ``s_j``, so ``FLH.hash(j, v) ==
OLH.hash(s_j, v)``.  The expansion is written here, not numpy's generator, so
that a published plan means the same pool for every version of numpy.

The price: a finite pool (support law)
--------------------------------------
Averaged over the random choice of the pool, a report of a user holding
``v != c`` supports ``c`` with probability ``q = 1/d'`` (up to the family's
``2**-32``), exactly as OLH, and ``(I_c - N q) / (p - q)`` is unbiased.  But the
pool is drawn once for all users.  Given the pool, with
``r_{vc} = |{j : H_j(v) = H_j(c)}| / h`` the share of pool members on which
``v`` and ``c`` collide and ``q' = (1 - p)/(d' - 1)``, a holder of ``v``
supports ``c`` with probability

.. math:: q_{vc} = r_{vc}\, p + (1 - r_{vc})\, q' ,

which depends on the pair; ``h r_{vc} ~ Bin(h, 1/d')`` over pools.  So all
``N_v`` holders of a frequent value ``v`` move ``I_c`` together: with
``Var(r_{vc}) = (1/d')(1 - 1/d')/h``, ``p - q' = (p - 1/d') d'/(d' - 1)``, the
pool adds to the variance of the count estimate ``(I_c - N q)/(p - q)``

.. math:: \mathrm{Var}_{\mathrm{pool}} \approx \frac{\sum_{v \ne c} N_v^2}{h\,(d' - 1)}

(:func:`pool_variance`; for a 3-wise independent family: OLH's is linear, and
values in arithmetic progression collide together, with a larger variance)
besides OLH's ``N q (1 - q)/(p - q)^2``.  The first
grows like ``N^2``, the second like ``N``: at a fixed pool size the pool term
dominates for large groups of concentrated data, and ``h`` must grow with
``N`` to keep FLH's accuracy near OLH's.  The book's chapter on scale measures
the price.  Supports of different candidates are correlated through the shared
pool (a frequent value colliding with both), so law 1 of :mod:`ldp.engines`
(independent binomials) is *not* FLH's law; the count engine draws the tally
``T`` instead, which is exact (:meth:`FLH.draw_tally`).

References
----------
G. Cormode, S. Maddock, C. Maple, "Frequency Estimation under Local
Differential Privacy", PVLDB 14(11), 2021, arXiv:2103.16640, section 4.3
("Fast local hashing").  T. Wang, J. Blocki, N. Li, S. Jha, "Locally
differentially private protocols for frequency estimation", USENIX Security
2017 (OLH).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..numeric import kernel_input
from ..randomness import Coins
from ..validation import check_epsilon, check_int, check_rng
from ..values import as_values, n_chunks
from . import hashing
from .base import Reports, grr_apply, grr_draw, grr_pmf, report_array, symbol_field, uint_dtype
from .flh_kernels import (
    LOOKUP_BLOCK,
    THRESHOLD_BLOCK,
    THRESHOLD_D_PRIME,
    cell_thresholds,
    support_by_lookup,
    support_by_thresholds,
    support_serial,
    tally_into,
)
from .formulas import default_d_prime, olh_pq
from .hashed import HashedOracle

__all__ = ["FLH", "FLHReports", "DEFAULT_POOL_SIZE", "MAX_POOL_SIZE", "MAX_TALLY_CELLS", "pool_seeds",
           "member_seeds", "pool_variance", "max_epsilon"]

#: pool size used when none is given (the book's chapter on scale recommends it; see :func:`pool_variance`)
DEFAULT_POOL_SIZE = 4096
#: largest pool: the index of a report is at most 24 bits
MAX_POOL_SIZE = 2**24
#: largest tally ``h * d'`` (cells of ``int64``: 128 MiB), what the server holds per query
MAX_TALLY_CELLS = 2**24
#: the hash range is OLH's: ``y * 2**32`` must fit in 64 bits
MAX_D_PRIME = 2**31


def max_epsilon(pool_size: int) -> float:
    """Largest budget whose default ``d' = ceil(e^eps + 1)`` keeps the tally ``h d'`` within :data:`MAX_TALLY_CELLS`.

    ``ln(floor(2**24 / h) - 1)`` (and at most OLH's ``ln(2**31 - 1)``); for
    ``h = 4096``, ``ln 4095 = 8.32``.
    """
    h = check_int(pool_size, "pool_size", lo=1, hi=MAX_POOL_SIZE)
    cells = min(MAX_TALLY_CELLS // h, MAX_D_PRIME)
    return math.log(cells - 1) if cells > 2 else 0.0


def pool_seeds(pool_seed: int, pool_size: int) -> np.ndarray:
    """The ``h`` hash seeds of the pool: ``s_j = splitmix64(pool_seed + (j + 1) * gamma)``.

    Parameters
    ----------
    pool_seed : int
        The public seed of the pool, in ``[0, 2**64)``.
    pool_size : int
        ``h``.

    Returns
    -------
    numpy.ndarray
        ``uint64`` ``(h,)``: seeds of members of OLH's family (:mod:`ldp.oracles.hashing`).
    """
    s = np.uint64(check_int(pool_seed, "pool_seed", lo=0, hi=2**64 - 1))
    j = np.arange(1, check_int(pool_size, "pool_size", lo=1, hi=MAX_POOL_SIZE) + 1, dtype=np.uint64)
    return hashing.splitmix64_mix(s + j * hashing.GOLDEN_GAMMA)  # wraps mod 2**64


def member_seeds(pool_seed: int, index) -> np.ndarray:
    """The seeds ``s_j`` of the pool members ``j`` in ``index`` alone: :func:`pool_seeds` without building the pool.

    ``member_seeds(s, j) == pool_seeds(s, h)[j]`` for every ``j < h``; a
    device needs only its own member, so its cost does not grow with ``h``.

    Parameters
    ----------
    pool_seed : int
        The public seed of the pool, in ``[0, 2**64)``.
    index : array_like of int
        Pool indices (checked by the caller).

    Returns
    -------
    numpy.ndarray
        ``uint64``, the shape of ``index``.
    """
    s = np.uint64(check_int(pool_seed, "pool_seed", lo=0, hi=2**64 - 1))
    j = np.asarray(index).astype(np.uint64) + np.uint64(1)
    return hashing.splitmix64_mix(s + j * hashing.GOLDEN_GAMMA)  # wraps mod 2**64


def pool_variance(counts, pool_size: int, d_prime: int) -> float:
    r"""Variance the finite pool adds to a count estimate: ``sum_v N_v^2 / (h (d' - 1))`` (module notes).

    For a candidate held by nobody; ``counts`` are the group's counts ``N_v``
    of the other values.  Over random pools; exact for a pool of independent
    members of a 3-wise independent family, an approximation for OLH's family,
    which is only pairwise independent and linear: for values in arithmetic
    progression (``c - v = v - v'``) the collisions go together and the
    variance is larger (``tests/test_flh.py`` checks the formula on unstructured values).

    Parameters
    ----------
    counts : array_like
        ``N_v`` of every value (or answer) held in the group.
    pool_size : int
        ``h``.
    d_prime : int
        ``d'``.

    Returns
    -------
    float
    """
    c = np.asarray(counts, dtype=np.float64)
    h = check_int(pool_size, "pool_size", lo=1, hi=MAX_POOL_SIZE)
    dp = check_int(d_prime, "d_prime", lo=2, hi=MAX_D_PRIME)
    return float(np.sum(c * c) / (h * (dp - 1)))


class FLHReports(Reports):
    """FLH reports: each user's pool index ``J`` (public) and her perturbed hash value ``y`` in ``[0, d')``.

    ``params``: ``kind='FLH'``, ``epsilon``, ``d_prime``, ``m``, ``pool_size``, ``pool_seed``.
    """

    kind = "FLH"
    fields = ("index", "y")
    #: the parts of a report that do not depend on the value and are sent in the clear
    public_fields = ("index",)

    index = report_array("index", "Each user's pool index ``J`` in ``[0, h)`` (smallest unsigned dtype holding it).")
    y = report_array("y", "Each user's output symbol in ``[0, d')`` (smallest unsigned dtype holding it).")

    @classmethod
    def layout(cls, params):
        h, dp = int(params["pool_size"]), int(params["d_prime"])
        return symbol_field("index", h, f"pool_size = {h}"), symbol_field("y", dp, f"d_prime = {dp}")


class FLH(HashedOracle[FLHReports]):
    """Fast local hashing: OLH with a public pool of ``h`` hash functions (see the module notes).

    Parameters
    ----------
    epsilon : float
        Privacy budget, a finite real number > 0; with the default ``d'`` at
        most :func:`max_epsilon` ``(pool_size)`` (the tally ``h d'`` must fit
        in ``2**24`` cells): ``ln 4095 = 8.32`` for ``h = 4096``.
    m : int, keyword-only, default 64
        Bit width of the values, 1 to 4096.
    pool_size : int, keyword-only, default 4096
        ``h``, the number of hash functions in the public pool, 1 to ``2**24``.
    pool_seed : int, keyword-only, default 0
        The public seed the pool expands from, in ``[0, 2**64)``; a
        protocol's plan draws it from its public randomness.
    d_prime : int, keyword-only, optional
        Hash range ``d'``, 2 to ``2**31`` with ``h d' <= 2**24``.  Default
        ``ceil(e^eps + 1)``.

    Attributes
    ----------
    p, q : float
        Support probabilities of the user's own value and (averaged over
        pools) of any other value: OLH's.

    Examples
    --------
    >>> import numpy as np, ldp
    >>> flh = ldp.FLH(2.0, m=16, pool_size=64, pool_seed=7)
    >>> reports = flh.privatize(np.array([5, 5, 7], dtype=np.uint64), rng=1)
    >>> reports.public_fields
    ('index',)
    >>> flh.support(reports, [5, 7]).dtype
    dtype('int64')
    """

    kind = "FLH"
    reports_class = FLHReports

    def __init__(self, epsilon: float, *, m: int = 64, pool_size: int = DEFAULT_POOL_SIZE, pool_seed: int = 0,
                 d_prime: int | None = None):
        self.pool_size = check_int(pool_size, "pool_size", lo=1, hi=MAX_POOL_SIZE)
        self.pool_seed = check_int(pool_seed, "pool_seed", lo=0, hi=2**64 - 1)
        cells = min(MAX_TALLY_CELLS // self.pool_size, MAX_D_PRIME)
        if d_prime is None:
            self.epsilon = check_epsilon(epsilon, hi=max_epsilon(self.pool_size),
                                         why=f"FLH's tally of pool_size * d' cells, d' = ceil(e^epsilon + 1), "
                                             f"must be at most 2**24 (with pool_size = {self.pool_size}: "
                                             f"d' <= {cells})")
            self.d_prime = default_d_prime(self.epsilon)
        else:
            self.epsilon = check_epsilon(epsilon, hi=709.78, why="e**epsilon must be a finite double")
            self.d_prime = check_int(d_prime, "d_prime", lo=2, hi=max(2, cells))
        self.m = self._check_m(m)
        self.cells = self.d_prime
        self.p, self.q = olh_pq(self.epsilon, d_prime=self.d_prime)  # OLH's, q averaged over pools
        self._pool: np.ndarray | None = None  # the h seeds, built on first use (:attr:`seeds`)

    @property
    def params(self) -> dict[str, Any]:
        return {"kind": "FLH", "epsilon": self.epsilon, "d_prime": self.d_prime, "m": self.m,
                "pool_size": self.pool_size, "pool_seed": self.pool_seed}

    @property
    def seeds(self) -> np.ndarray:
        """The pool's hash seeds (:func:`pool_seeds`), read-only ``uint64`` ``(h,)``.

        Built on first use (``8 h`` bytes: 128 MiB at the largest pool) and
        kept: a plan names a pool by its size and seed, and checking or
        parsing the plan builds nothing; a device's report needs only its own
        member (:func:`member_seeds`).
        """
        pool = self._pool
        if pool is None:
            pool = pool_seeds(self.pool_seed, self.pool_size)
            pool.flags.writeable = False
            self._pool = pool
        return pool

    @property
    def pool_built(self) -> bool:
        """Whether :attr:`seeds` has been built (``8 * pool_size`` bytes held)."""
        return self._pool is not None

    @property
    def nbytes(self) -> int:
        """Bytes the pool takes once built (what a cache of oracles counts)."""
        return 8 * self.pool_size

    def _members(self, index) -> np.ndarray:
        """The seeds of pool members ``index``: from the built pool, else computed for these members alone."""
        j = np.asarray(index, dtype=np.int64)
        if self._pool is not None or j.size >= self.pool_size:
            return self.seeds[j]
        return member_seeds(self.pool_seed, j)

    @property
    def tally_shape(self) -> tuple[int, int]:
        """``(h, d')``: the shape of :meth:`tally`."""
        return self.pool_size, self.d_prime

    # ------------------------------------------------------------------ user
    def hash(self, index, values) -> np.ndarray:
        """``H_j(v)`` in ``[0, d')`` for paired pool indices and values (client-side code).

        A scalar index is used for every value.
        """
        j = np.asarray(index)
        if j.dtype.kind not in "iu" or (j.size and (j.min() < 0 or j.max() >= self.pool_size)):
            raise ValueError(f"index must hold integers in [0, pool_size = {self.pool_size})")
        return self.cell(self._members(j), values)

    def output_pmf(self, hashed: int) -> np.ndarray:
        """Distribution of ``y`` given ``H_J(v) = hashed``, over ``[0, d')`` (GRR on ``[d']``)."""
        h = check_int(hashed, "hashed", lo=0, hi=self.d_prime - 1)
        if self.d_prime > 2**24:  # pragma: no cover - the tally limit keeps d' below this
            raise ValueError(f"output_pmf needs d_prime <= {2**24}, got {self.d_prime}")
        return grr_pmf(h, self.d_prime, self.p)

    def _draw(self, n: int, private: Coins, public: Coins | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(index, keep, r)``: each user's pool index, GRR's keep coin and its replacement.

        The index (uniform in ``[0, h)``, sent in the clear) comes from the
        public source; the keep coin (``True`` with probability ``p``) and the
        uniform replacement in ``[0, d' - 1)`` from the private one, in that
        order (:meth:`ldp.oracles.FrequencyOracle.draw_noise`).  None of it
        depends on the values.
        """
        assert public is not None
        index = public.below(self.pool_size, n).astype(uint_dtype(self.pool_size - 1))  # independent of v
        keep, r = grr_draw(n, self.d_prime, self.p, private)
        return index, keep, r

    def apply_noise(self, values: np.ndarray, noise) -> FLHReports:
        """The reports of canonical ``values`` with the randomness of :meth:`draw_noise`."""
        index, keep, r = noise
        h = self._cells(self._members(index), values)
        y = grr_apply(h, keep, r)
        return FLHReports(self.params, index=index, y=y.astype(uint_dtype(self.d_prime - 1)))

    # ---------------------------------------------------------------- server
    def tally(self, reports: FLHReports) -> np.ndarray:
        """``T[j, y]``: how many reports are ``(j, y)``; ``int64`` ``(h, d')``, additive over batches.

        Parameters
        ----------
        reports : FLHReports
            Reports of this oracle (checked; may be empty).

        Returns
        -------
        numpy.ndarray
        """
        if not isinstance(reports, FLHReports):
            raise TypeError(f"reports must be FLHReports produced by FLH.privatize, got {type(reports).__name__}")
        if len(reports):
            self.check_reports(reports)
        elif reports.params != self.params:
            self.check_reports(reports)  # raises: the parameters differ
        out = np.zeros(self.tally_shape, dtype=np.int64)
        tally_into(kernel_input(reports.index), kernel_input(reports.y), np.int64(self.d_prime), out)
        return out

    def support_from_tally(self, table: np.ndarray, candidates) -> np.ndarray:
        """``I_c = sum_j T[j, H_j(c)]`` for each candidate: ``h`` hash evaluations per candidate.

        Parameters
        ----------
        table : numpy.ndarray
            A tally of this oracle's reports (:meth:`tally`, possibly summed
            over batches, or :meth:`draw_tally`).
        candidates : array_like
            Values to count.

        Returns
        -------
        numpy.ndarray
            ``int64``, one support per candidate.
        """
        t = np.asarray(table)
        if t.shape != self.tally_shape or t.dtype.kind not in "iu":
            raise ValueError(f"table must be an integer array of shape (pool_size, d_prime) = {self.tally_shape}, "
                             f"got {t.dtype} {t.shape}")
        cands = self._check_candidates(candidates)
        b, a = self._pool_coefficients(n_chunks(self.m))
        chunks = self._chunks(cands)
        # int32 cells when they fit: the lookups are the kernel's memory traffic (sums stay int64)
        flat = t.reshape(-1)
        small = bool(flat.size) and 0 <= flat.min() and flat.max() < 2**31
        flat = np.ascontiguousarray(flat.astype(np.int32) if small else flat.astype(np.int64))
        if chunks.shape[1] * self.pool_size < 2**18:
            return support_serial(flat, b, a, chunks, np.int64(self.d_prime))
        if small and self.d_prime <= THRESHOLD_D_PRIME and int(flat.sum(dtype=np.int64)) < 2**31:
            # a small hash range: compares instead of lookups (flh_kernels' notes); every partial sum fits int32
            return support_by_thresholds(flat, b, a, chunks.astype(np.uint64), np.int64(self.d_prime),
                                         cell_thresholds(self.d_prime), THRESHOLD_BLOCK)
        return support_by_lookup(flat, b, a, chunks, np.int64(self.d_prime), LOOKUP_BLOCK)

    def _support(self, reports: FLHReports, candidates: np.ndarray) -> np.ndarray:
        return self.support_from_tally(self.tally(reports), candidates)

    def partial_support(self, reports: FLHReports, candidates) -> np.ndarray:
        """What a part of the reports contributes, before the candidates are counted: its :meth:`tally`.

        Partial results of disjoint parts add up (``+``); :meth:`finish_support`
        turns the sum into supports.  OLH's partial result is the support
        itself; FLH's is the tally, so the ``h |C|`` hashing is done once, not once per part.
        """
        return self.tally(reports)

    def finish_support(self, partial: np.ndarray, candidates) -> np.ndarray:
        """The supports from the sum of :meth:`partial_support` over all parts."""
        return self.support_from_tally(partial, candidates)

    def draw_tally(self, values, counts, *, rng=None) -> np.ndarray:
        """A tally of the reports of ``counts[i]`` users holding ``values[i]``, drawn from its exact law.

        The count engine's draw for FLH (:mod:`ldp.engines`): no report is
        made, and the supports computed from the tally (:meth:`support_from_tally`)
        have exactly the joint law of the protocol's, correlations through the
        pool included.

        1. The pool indices of the ``N_v`` holders of ``v`` are i.i.d. uniform:
           their counts over ``[h]`` are ``Multinomial(N_v, 1/h)`` (drawn as
           ``N_v`` uniform indices when ``N_v < h``).  This gives the true
           tally ``T0[j, x]`` = number of users with index ``j`` and ``H_j(v) = x``.
        2. GRR on ``[d']`` is the mixture "keep ``x`` with probability
           ``alpha = (p d' - 1)/(d' - 1)``, else a uniform symbol of ``[d']``"
           (it gives ``x`` with probability ``alpha + (1 - alpha)/d' = p`` and
           each other symbol ``(1 - alpha)/d' = (1 - p)/(d' - 1)``).  So
           ``T[j, x] = Bin(T0[j, x], alpha) + U[j, x]``, where the non-kept
           reports of row ``j`` fall on ``[d']`` as ``Multinomial(R_j, 1/d')``.

        Cost ``O(sum_v min(N_v, h) + h d')`` draws and as many hash evaluations.

        Parameters
        ----------
        values : array_like
            Distinct values (canonical ``m``-bit).
        counts : array_like of int
            Holders of each value.
        rng : None, int, SeedSequence, BitGenerator or Generator, keyword-only

        Returns
        -------
        numpy.ndarray
            ``int64`` ``(h, d')``.
        """
        rng = check_rng(rng)
        vals = as_values(values, self.m, name="values", allow_empty=True)
        cnt = np.asarray(counts, dtype=np.int64)
        if cnt.shape != (vals.shape[0],) or (cnt.size and cnt.min() < 0):
            raise ValueError(f"counts must be {vals.shape[0]} non-negative integers, one per value")
        h, dp = self.tally_shape
        T0 = np.zeros(h * dp, dtype=np.int64)
        if cnt.sum() > 0:
            big = np.flatnonzero(cnt >= h)
            small = np.flatnonzero((cnt > 0) & (cnt < h))
            rows_v, rows_j, rows_w = [], [], []
            if small.size:  # one uniform index per holder
                who = np.repeat(small, cnt[small])
                rows_v.append(who)
                rows_j.append(rng.integers(0, h, size=who.shape[0]))
                rows_w.append(np.ones(who.shape[0], dtype=np.int64))
            if big.size:  # the holders' indices, counted: Multinomial(N_v, 1/h) over the pool
                mult = rng.multinomial(cnt[big], np.full(h, 1.0 / h))
                bi, bj = np.nonzero(mult)
                rows_v.append(big[bi])
                rows_j.append(bj)
                rows_w.append(mult[bi, bj])
            v_idx = np.concatenate(rows_v)
            j_idx = np.concatenate(rows_j).astype(np.int64)
            w = np.concatenate(rows_w)
            cell = self._cells(self.seeds[j_idx], vals[v_idx]).astype(np.int64)
            T0 = np.bincount(j_idx * dp + cell, weights=w, minlength=h * dp)
            T0 = np.rint(T0).astype(np.int64)
        alpha = (self.p * dp - 1.0) / (dp - 1.0)
        kept = rng.binomial(T0, alpha).reshape(h, dp)
        moved = T0.reshape(h, dp).sum(axis=1) - kept.sum(axis=1)
        return kept + rng.multinomial(moved, np.full(dp, 1.0 / dp))

    def _pool_coefficients(self, C: int) -> tuple[np.ndarray, np.ndarray]:
        """The pool's coefficients ``(b, a)`` for ``C`` chunks (:func:`ldp.oracles.hashing.expand_coefficients`).

        Computed per call (about a millisecond for ``h = 16384``): plans cache their
        oracles, and a grid of runs makes a new pool per run.
        """
        b, a = hashing.expand_coefficients(self.seeds, C)
        if C == 1:  # the kernel for C <= 2 reads two rows; the second multiplies a zero chunk
            a = np.vstack([a, np.zeros_like(a)])
        return np.ascontiguousarray(b), np.ascontiguousarray(a)

    def pool_variance(self, counts) -> float:
        """:func:`pool_variance` of this oracle's pool size and ``d'``."""
        return pool_variance(counts, self.pool_size, self.d_prime)
