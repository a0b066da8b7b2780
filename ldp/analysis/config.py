"""PEM configurations (paper sections 4.1, 4.2.2 and 4.3): :class:`PEMConfig` and its constructors.

* :class:`PEMConfig` -- one configuration ``(gamma, eta[i], n[i], |C_i|)``;
* :func:`pem_default_config` -- the rule section 4.3 reports as optimal in most
  settings (``gamma = ceil(log2 k)``, the largest ``eta`` within the query limit);
* :func:`pem_config` -- an explicit configuration (section 5's figures);
* :func:`min_query_limit` -- the smallest query limit the rule admits.

Every constructor takes ``k, m`` first (the order of ``ldp.PEM(epsilon, k, m)``)
and everything else by keyword.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 4.1-4.3.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from ..numeric import largest_remainder
from ..validation import check_int

__all__ = ["PEMConfig", "pem_config", "pem_default_config", "min_query_limit", "check_k_m", "split_bits",
           "default_gamma", "domain_sizes"]

_FRACTION_ATOL = 1e-9


def _ceil_log2(k: int) -> int:
    """``ceil(log2 k)`` exactly for a positive Python int (0 for k = 1)."""
    return (k - 1).bit_length()


def check_k_m(k, m) -> tuple[int, int]:
    """``k`` heavy hitters among ``m``-bit values: ``m >= 1`` and ``1 <= k <= 2^m``."""
    m = check_int(m, "m", 1)
    k = check_int(k, "k", 1)
    if k > 2**m:
        raise ValueError(f"k must be an integer in [1, 2**m = {2**m}], got {k}")
    return k, m


def split_bits(total: int, eta: int) -> tuple[int, ...]:
    """``total`` bits in rounds of ``eta``; the last round takes the leftover."""
    g = -(-total // eta)
    return (eta,) * (g - 1) + (total - eta * (g - 1),)


def balanced_bits(total: int, g: int) -> tuple[int, ...]:
    """``total`` bits in ``g`` rounds that differ by at most one bit, the larger ones last."""
    base, extra = divmod(total, g)
    return (base,) * (g - extra) + (base + 1,) * extra


def default_gamma(k: int, m: int) -> int:
    """Section 4.2.2: ``gamma = ceil(log2 k)``; ``m <= gamma`` -> 0 (one round over all m bits)."""
    gamma = _ceil_log2(k)
    return gamma if gamma < m else 0


def domain_sizes(gamma: int, etas: Sequence[int], cand_sizes: Sequence[int]) -> tuple[int, ...]:
    """``|D_i|``: ``2^(gamma+eta_1)`` then ``|C_{i-1}| 2^eta_i`` (section 4.1; exact ints)."""
    out = [2 ** (gamma + etas[0])]
    for c, e in zip(cand_sizes[:-1], etas[1:]):
        out.append(c * 2**e)
    return tuple(out)


def _paper_cost(gamma: int, eta: int, g: int) -> int:
    """Section 4.3's query count ``2^(gamma+eta) * g``."""
    return 2 ** (gamma + eta) * g


def _check_fractions(fractions, g: int) -> tuple[float, ...]:
    """``n[i]/n``: ``g`` reals in (0, 1] summing to 1."""
    fr = tuple(fractions)
    if len(fr) != g:
        raise ValueError(f"group_fractions must have g = {g} entries, got {len(fr)}")
    for i, f in enumerate(fr):
        if isinstance(f, bool) or not isinstance(f, (Real, np.floating, np.integer)):
            raise TypeError(f"group_fractions[{i}] must be a real number in (0, 1], got {f!r}")
        if not (math.isfinite(float(f)) and 0 < float(f) <= 1):
            raise ValueError(f"group_fractions[{i}] must be in (0, 1], got {f!r}")
    fr = tuple(float(f) for f in fr)
    if abs(sum(fr) - 1.0) > _FRACTION_ATOL:
        raise ValueError(f"group_fractions must sum to 1, sum to {sum(fr):.12g}")
    return fr


@dataclass(frozen=True, kw_only=True)
class PEMConfig:
    """One configuration of the Prefix Extending Method (section 4.1).

    Round ``i`` (1-based) has users report the prefix of length
    ``gamma + eta[1] + ... + eta[i]``; the aggregator tests
    ``D_1 = {0,1}^(gamma+eta[1])`` and ``D_i = C_{i-1} x {0,1}^eta[i]`` and
    keeps the ``|C_i|`` highest-supported prefixes.  All fields are
    keyword-only.

    Parameters
    ----------
    k : int
        Number of heavy hitters wanted (the output size of the last round).
    m : int
        Value length in bits.
    gamma : int
        Length of the prefix that is not tested by itself (``>= 0``).
    etas : tuple of int
        Bits added in each round (each ``>= 1``); ``gamma + sum(etas) == m``;
        the number of rounds (groups) is ``g = len(etas)``.
    group_fractions : tuple of float, optional
        Share of the users reporting in each round (positive, sum 1).
        Default ``1/g`` each (section 4.2.2: ``n[i] = n/g``).
    cand_sizes : tuple of int, optional
        ``|C_i|``, the number of prefixes kept after each round.  Default
        ``k`` each (section 4.2.2); the last must equal ``k``; each must be at
        most ``|D_i|``.
    predicted_f1, predicted_ncr : float, optional
        Utility scores (eq. (4)) predicted by :func:`ldp.analysis.optimize_pem`;
        ``None`` for configurations built by hand.

    Notes
    -----
    ``domain_sizes`` and ``queries`` are exact Python ints (``m`` may be up to
    4096 bits).
    """

    k: int
    m: int
    gamma: int
    etas: tuple[int, ...]
    group_fractions: tuple[float, ...] | None = None
    cand_sizes: tuple[int, ...] | None = None
    predicted_f1: float | None = field(default=None, compare=False)
    predicted_ncr: float | None = field(default=None, compare=False)

    def __post_init__(self):
        k, m = check_k_m(self.k, self.m)
        gamma = check_int(self.gamma, "gamma", 0, m - 1)
        etas = self.etas
        if isinstance(etas, (Integral, np.integer)) or etas is None:
            raise TypeError(f"etas must be a sequence of integers >= 1, got {etas!r}")
        etas = tuple(check_int(e, f"etas[{i}]", 1) for i, e in enumerate(etas))
        if len(etas) == 0:
            raise ValueError("etas must contain at least one round (g >= 1)")
        if gamma + sum(etas) != m:
            raise ValueError(
                f"gamma + sum(etas) must equal m = {m}, got {gamma} + {sum(etas)} = {gamma + sum(etas)}")
        g = len(etas)
        # group fractions n[i]/n (section 4.2.2 default n/g)
        fr = (1.0 / g,) * g if self.group_fractions is None else _check_fractions(self.group_fractions, g)
        # candidate sizes |C_i|
        if self.cand_sizes is None:
            cs = (k,) * g
        else:
            cs = tuple(check_int(c, f"cand_sizes[{i}]", 1) for i, c in enumerate(self.cand_sizes))
            if len(cs) != g:
                raise ValueError(f"cand_sizes must have g = {g} entries, got {len(cs)}")
            if cs[-1] != k:
                raise ValueError(f"cand_sizes[-1] (the last round's output) must equal k = {k}, got {cs[-1]}")
        # |C_i| <= |D_i|
        for i, (c, d) in enumerate(zip(cs, domain_sizes(gamma, etas, cs))):
            if c > d:
                raise ValueError(
                    f"cand_sizes[{i}] = {c} exceeds |D_{i + 1}| = {d}, the number of prefixes tested in "
                    f"round {i + 1}; use a longer prefix (gamma/etas) or a smaller candidate size")
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "etas", etas)
        object.__setattr__(self, "group_fractions", fr)
        object.__setattr__(self, "cand_sizes", cs)

    # -- derived quantities --------------------------------------------------
    @property
    def g(self) -> int:
        """Number of rounds (user groups), ``len(etas)``."""
        return len(self.etas)

    @property
    def prefix_lengths(self) -> tuple[int, ...]:
        """Prefix length reported in each round: ``gamma+eta_1, ..., m``."""
        out, s = [], self.gamma
        for e in self.etas:
            s += e
            out.append(s)
        return tuple(out)

    @property
    def domain_sizes(self) -> tuple[int, ...]:
        """``|D_i|``: ``2^(gamma+eta_1)`` then ``|C_{i-1}| * 2^eta_i`` (exact ints)."""
        assert self.cand_sizes is not None  # filled by __post_init__
        return domain_sizes(self.gamma, self.etas, self.cand_sizes)

    @property
    def queries(self) -> int:
        """Total frequency-oracle queries ``sum_i |D_i|`` (exact int)."""
        return sum(self.domain_sizes)

    def group_sizes(self, n: int) -> tuple[int, ...]:
        """Deterministic split of ``n`` users by ``group_fractions``.

        :func:`ldp.numeric.largest_remainder`: floors of ``n * fraction``
        with the remainder handed out by largest fractional part (ties to the
        earlier round).  A protocol may instead assign users at random; this
        is for the analysis and for fixed splits.
        """
        n = check_int(n, "n", 1)
        assert self.group_fractions is not None  # filled by __post_init__
        return tuple(int(b) for b in largest_remainder(n, self.group_fractions))

    def with_predictions(self, f1: float | None, ncr: float | None) -> PEMConfig:
        """A copy carrying predicted utility scores."""
        return self.with_fractions(self.group_fractions, f1=f1, ncr=ncr)

    def with_fractions(self, group_fractions, *, f1: float | None = None, ncr: float | None = None) -> PEMConfig:
        """A copy with other group fractions ``n[i]/n`` (and, optionally, predicted scores)."""
        return PEMConfig(k=self.k, m=self.m, gamma=self.gamma, etas=self.etas,
                         group_fractions=tuple(group_fractions), cand_sizes=self.cand_sizes,
                         predicted_f1=None if f1 is None else float(f1),
                         predicted_ncr=None if ncr is None else float(ncr))


def min_query_limit(k: int, m: int) -> int:
    """Smallest query limit for which :func:`pem_default_config` succeeds.

    ``min over eta of 2^(gamma+eta) * ceil((m-gamma)/eta)`` with
    ``gamma = ceil(log2 k)`` (or ``2^m`` when ``m <= ceil(log2 k)``).

    Parameters
    ----------
    k, m : int
        Number of heavy hitters and value length, as in :func:`pem_default_config`.

    Returns
    -------
    int
    """
    k, m = check_k_m(k, m)
    gamma = default_gamma(k, m)
    L = m - gamma
    return min(_paper_cost(gamma, eta, -(-L // eta)) for eta in range(1, L + 1))


def pem_default_config(k: int, m: int, *, query_limit: int = 2**20) -> PEMConfig:
    """The configuration section 4.3 reports as optimal in most settings.

    ``gamma = ceil(log2 k)``, ``|C_i| = k``, ``n[i] = n/g`` and ``eta`` the
    largest integer in ``[1, m - gamma]`` with ``2^(gamma+eta) * g <= query_limit``
    where ``g = ceil((m - gamma)/eta)``; the last round takes the leftover bits
    when ``eta`` does not divide ``m - gamma``.

    Parameters
    ----------
    k : int
        Number of heavy hitters, ``1 <= k <= 2^m``.
    m : int
        Value length in bits (>= 1).
    query_limit : int, keyword-only, default 2**20
        Bound on the frequency-oracle queries, counted as the paper counts
        them, ``2^(gamma+eta) * g`` (an upper bound of ``sum |D_i|``).

    Returns
    -------
    PEMConfig

    Raises
    ------
    ValueError
        If ``query_limit`` is below :func:`min_query_limit` (the message states it).

    Notes
    -----
    ``k = 1`` gives ``gamma = 0``.  When ``m <= ceil(log2 k)`` the whole domain
    is tested in one round: ``gamma = 0``, ``etas = (m,)``.

    References
    ----------
    [PEM] sections 4.2.2 (Assumptions and Constraints) and 4.3 (Instantiating PEM).
    """
    k, m = check_k_m(k, m)
    query_limit = check_int(query_limit, "query_limit", 1)
    gamma = default_gamma(k, m)
    L = m - gamma
    best = None
    for eta in range(L, 0, -1):  # largest eta first; the cost is not monotone in eta
        if _paper_cost(gamma, eta, -(-L // eta)) <= query_limit:
            best = eta
            break
    if best is None:
        need = min_query_limit(k, m)
        raise ValueError(
            f"query_limit = {query_limit} is too small for m = {m}, k = {k}: the smallest limit that "
            f"admits a PEM configuration (gamma = {gamma}) is {need}")
    return PEMConfig(k=k, m=m, gamma=gamma, etas=split_bits(L, best))


def pem_config(k: int, m: int, *, gamma: int | None = None, eta: int | None = None,
               etas: Sequence[int] | None = None, g: int | None = None,
               group_fractions: Sequence[float] | None = None,
               cand_sizes: Sequence[int] | None = None) -> PEMConfig:
    """An explicit PEM configuration (for the section 5 validation figures).

    Parameters
    ----------
    k, m : int
        Number of heavy hitters and value length in bits.
    gamma : int, optional
        Default ``ceil(log2 k)`` (0 when that is ``>= m``).
    eta : int, optional
        Equal rounds of ``eta`` bits, the last taking the leftover
        (``g = ceil((m-gamma)/eta)``).
    etas : sequence of int, optional
        Bits per round, ``gamma + sum(etas) == m`` (exclusive with ``eta``/``g``).
    g : int, optional
        Number of rounds; the ``m - gamma`` bits are spread as evenly as
        possible (``eta[i]`` differ by at most one, the larger ones last).
        Exclusive with ``eta`` and ``etas``.
    group_fractions : sequence of float, optional
        ``n[i]/n`` per round; default equal.
    cand_sizes : sequence of int, optional
        ``|C_i|`` per round; default ``k`` each.

    If none of ``eta``, ``etas``, ``g`` is given, one round tests all bits
    left after ``gamma`` (``g = 1``).

    Returns
    -------
    PEMConfig
    """
    k, m = check_k_m(k, m)
    if sum(x is not None for x in (eta, etas, g)) > 1:
        raise ValueError("give at most one of eta, etas, g")
    if gamma is None:
        gamma = default_gamma(k, m)
    gamma = check_int(gamma, "gamma", 0, m - 1)
    L = m - gamma
    if etas is not None:
        et = tuple(etas)
    elif eta is not None:
        et = split_bits(L, check_int(eta, "eta", 1, L))
    elif g is not None:
        et = balanced_bits(L, check_int(g, "g", 1, L))
    else:
        et = (L,)
    return PEMConfig(k=k, m=m, gamma=gamma, etas=et,
                     group_fractions=None if group_fractions is None else tuple(group_fractions),
                     cand_sizes=None if cand_sizes is None else tuple(cand_sizes))
