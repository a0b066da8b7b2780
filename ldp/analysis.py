"""The paper's analysis of PEM (section 4.2) as code.

Contents, in the order of the paper:

* :class:`PEMConfig`, :func:`pem_config`, :func:`pem_default_config` -- a PEM
  configuration (gamma, eta[i], n[i], |C_i|) and the section 4.2.2 / 4.2.5 rule
  for choosing it.
* :func:`grr_variance`, :func:`olh_variance`, :func:`oracle_pq`,
  :func:`min_population` -- section 2.2, eqs. (var_grr), (var_olh).
* :func:`round_identification_probability`, :func:`identification_probability`
  -- eq. (iden_prob); :func:`utility_score` -- eq. (utility_score).
* :func:`optimize_pem` (with :func:`candidate_configs`,
  :func:`evaluate_configs`) -- section 4.2.5's search.
* :func:`lemma1_E`, :func:`prop1_P1`, :func:`prop1_P2`, :func:`prop1_grid` --
  the appendix's Proposition 1 and Lemma 1.
* :func:`spm_joint_estimate_pair`, :func:`spm_joint_estimate`,
  :func:`spm_joint_estimates` -- the appendix's joint estimator for SPM.
* :func:`validation_setting` -- section 5 defaults (text vs caption readings).

Section numbers follow the LaTeX source (4.2.x = the subsubsections of
"Protocol Analysis"; the brief's 4.2-4.5).  Interpretation choices are listed
in the docstrings and in the project's interpretation notes.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 2.2, 4.2 and the appendix.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Optional, Sequence

import numpy as np

from scipy import special
from scipy.stats import norm

from .numeric import largest_remainder
from .validation import EXP_MAX_EPSILON, check_epsilon, check_frequencies, check_int

__all__ = [
    # configurations
    "PEMConfig", "pem_config", "pem_default_config", "min_query_limit",
    # oracles (section 2.2)
    "olh_d_prime", "oracle_pq", "grr_pq", "grr_variance", "olh_variance", "min_population",
    # distributions
    "zipf_frequencies", "assumed_frequencies",
    # identification probability and utility (section 4.2)
    "round_identification_probability", "identification_probability", "utility_weights", "utility_score",
    # optimizer (section 4.2.5)
    "candidate_configs", "evaluate_configs", "optimize_pem",
    # appendix
    "lemma1_E", "prop1_A", "prop1_P1", "prop1_P2", "prop1_grid",
    "spm_pq", "spm_joint_estimate_pair", "spm_joint_estimate", "spm_joint_estimates",
    # section 5
    "validation_setting",
]

_FRACTION_ATOL = 1e-9


# ---------------------------------------------------------------------------
# PEM configurations
# ---------------------------------------------------------------------------
def _ceil_log2(k: int) -> int:
    """``ceil(log2 k)`` exactly for a positive Python int (0 for k = 1)."""
    return (k - 1).bit_length()


@dataclass(frozen=True)
class PEMConfig:
    """One configuration of the Prefix Extending Method (section 4.1).

    Round ``i`` (1-based) has users report the prefix of length
    ``gamma + eta[1] + ... + eta[i]``; the aggregator tests
    ``D_1 = {0,1}^(gamma+eta[1])`` and ``D_i = C_{i-1} x {0,1}^eta[i]`` and
    keeps the ``|C_i|`` highest-supported prefixes.

    Parameters
    ----------
    m : int
        Value length in bits.
    k : int
        Number of heavy hitters wanted (the output size of the last round).
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
        Utility scores (eq. utility_score) predicted by :func:`optimize_pem`;
        ``None`` for configurations built by hand.

    Notes
    -----
    ``domain_sizes`` and ``queries`` are exact Python ints (``m`` may be up to
    4096 bits).
    """

    m: int
    k: int
    gamma: int
    etas: tuple[int, ...]
    group_fractions: Optional[tuple[float, ...]] = None
    cand_sizes: Optional[tuple[int, ...]] = None
    predicted_f1: Optional[float] = field(default=None, compare=False)
    predicted_ncr: Optional[float] = field(default=None, compare=False)

    def __post_init__(self):
        m = check_int(self.m, "m", 1)
        k = check_int(self.k, "k", 1)
        if k > 2**m:
            raise ValueError(f"k must be an integer in [1, 2**m = {2**m}], got {k}")
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
        # group fractions, eq. n[i] (section 4.2.2 default n/g)
        if self.group_fractions is None:
            fr = (1.0 / g,) * g
        else:
            fr = tuple(self.group_fractions)
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
        prev = None
        for i, (eta, c) in enumerate(zip(etas, cs)):
            d = 2 ** (gamma + eta) if i == 0 else prev * 2**eta
            if c > d:
                raise ValueError(
                    f"cand_sizes[{i}] = {c} exceeds |D_{i + 1}| = {d}, the number of prefixes tested in "
                    f"round {i + 1}; use a longer prefix (gamma/etas) or a smaller candidate size")
            prev = c
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "k", k)
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
        out = [2 ** (self.gamma + self.etas[0])]
        for c, e in zip(self.cand_sizes[:-1], self.etas[1:]):
            out.append(c * 2**e)
        return tuple(out)

    @property
    def queries(self) -> int:
        """Total frequency-oracle queries ``sum_i |D_i|`` (exact int)."""
        return sum(self.domain_sizes)

    def group_sizes(self, n: int) -> tuple[int, ...]:
        """Deterministic split of ``n`` users by ``group_fractions``.

        Floors of ``n * fraction`` with the remainder handed out by largest
        fractional part (ties to the earlier round).  A protocol may instead
        assign users at random; this is for the analysis and for fixed splits.
        """
        n = check_int(n, "n", 1)
        return tuple(int(b) for b in largest_remainder(n, self.group_fractions))

    def with_predictions(self, f1: Optional[float], ncr: Optional[float]) -> "PEMConfig":
        """A copy carrying predicted utility scores."""
        return PEMConfig(self.m, self.k, self.gamma, self.etas, self.group_fractions, self.cand_sizes,
                         None if f1 is None else float(f1), None if ncr is None else float(ncr))


def _check_m_k(m, k) -> tuple[int, int]:
    m = check_int(m, "m", 1)
    k = check_int(k, "k", 1)
    if k > 2**m:
        raise ValueError(f"k must be an integer in [1, 2**m = {2**m}], got {k}")
    return m, k


def _split_bits(total: int, eta: int) -> tuple[int, ...]:
    """``total`` bits in rounds of ``eta``; the last round takes the leftover."""
    g = -(-total // eta)
    return (eta,) * (g - 1) + (total - eta * (g - 1),)


def _default_gamma(m: int, k: int) -> int:
    """Section 4.2.2: ``gamma = ceil(log2 k)``; ``m <= gamma`` -> 0 (one round over all m bits)."""
    gamma = _ceil_log2(k)
    return gamma if gamma < m else 0


def _paper_cost(gamma: int, eta: int, g: int) -> int:
    """Section 4.2.5's query count ``2^(gamma+eta) * g``."""
    return 2 ** (gamma + eta) * g


def min_query_limit(m: int, k: int) -> int:
    """Smallest query limit for which :func:`pem_default_config` succeeds.

    ``min over eta of 2^(gamma+eta) * ceil((m-gamma)/eta)`` with
    ``gamma = ceil(log2 k)`` (or ``2^m`` when ``m <= ceil(log2 k)``).
    """
    m, k = _check_m_k(m, k)
    gamma = _default_gamma(m, k)
    L = m - gamma
    return min(_paper_cost(gamma, eta, -(-L // eta)) for eta in range(1, L + 1))


def pem_default_config(m: int, k: int, *, query_limit: int = 2**20) -> PEMConfig:
    """The configuration section 4.2.5 reports as optimal in most settings.

    ``gamma = ceil(log2 k)``, ``|C_i| = k``, ``n[i] = n/g`` and ``eta`` the
    largest integer in ``[1, m - gamma]`` with ``2^(gamma+eta) * g <= query_limit``
    where ``g = ceil((m - gamma)/eta)``; the last round takes the leftover bits
    when ``eta`` does not divide ``m - gamma``.

    Parameters
    ----------
    m : int
        Value length in bits (>= 1).
    k : int
        Number of heavy hitters, ``1 <= k <= 2^m``.
    query_limit : int, default 2**20
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
    [PEM] sections 4.2.2 (Assumptions and Constraints) and 4.2.5 (Instantiate PEM).
    """
    m, k = _check_m_k(m, k)
    query_limit = check_int(query_limit, "query_limit", 1)
    gamma = _default_gamma(m, k)
    L = m - gamma
    best = None
    for eta in range(L, 0, -1):  # largest eta first; the cost is not monotone in eta
        if _paper_cost(gamma, eta, -(-L // eta)) <= query_limit:
            best = eta
            break
    if best is None:
        need = min_query_limit(m, k)
        raise ValueError(
            f"query_limit = {query_limit} is too small for m = {m}, k = {k}: the smallest limit that "
            f"admits a PEM configuration (gamma = {gamma}) is {need}")
    return PEMConfig(m=m, k=k, gamma=gamma, etas=_split_bits(L, best))


def pem_config(m: int, k: int, *, gamma: Optional[int] = None, eta: Optional[int] = None,
               etas: Optional[Sequence[int]] = None, g: Optional[int] = None,
               group_fractions: Optional[Sequence[float]] = None,
               cand_sizes: Optional[Sequence[int]] = None) -> PEMConfig:
    """An explicit PEM configuration (for the section 5 validation figures).

    Parameters
    ----------
    m, k : int
        Value length in bits and number of heavy hitters.
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
    m, k = _check_m_k(m, k)
    if sum(x is not None for x in (eta, etas, g)) > 1:
        raise ValueError("give at most one of eta, etas, g")
    if gamma is None:
        gamma = _default_gamma(m, k)
    gamma = check_int(gamma, "gamma", 0, m - 1)
    L = m - gamma
    if etas is not None:
        et = tuple(etas)
    elif eta is not None:
        eta = check_int(eta, "eta", 1, L)
        et = _split_bits(L, eta)
    elif g is not None:
        g = check_int(g, "g", 1, L)
        base, extra = divmod(L, g)
        et = (base,) * (g - extra) + (base + 1,) * extra
    else:
        et = (L,)
    return PEMConfig(m=m, k=k, gamma=gamma, etas=et,
                     group_fractions=None if group_fractions is None else tuple(group_fractions),
                     cand_sizes=None if cand_sizes is None else tuple(cand_sizes))


# ---------------------------------------------------------------------------
# Frequency-oracle variances and parameters (section 2.2)
# ---------------------------------------------------------------------------
_DPRIME_REAL = ("real", "paper")
_EXP_WHY = "e**epsilon must be a finite double"


def olh_d_prime(epsilon: float) -> int:
    """Section 2.2's hash range ``d' = ceil(e^eps + 1)``.

    ``e^eps + 1`` within a relative ``1e-9`` of an integer is taken as that
    integer (so ``eps = ln 9`` gives ``d' = 10``, not 11 from rounding error).
    """
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    x = math.exp(e) + 1.0
    r = round(x)
    return int(r) if abs(x - r) <= 1e-9 * x else int(math.ceil(x))


def _resolve_d_prime(epsilon: float, d_prime):
    """Real hash range d' for the OLH formulas (a float; e^eps + 1 for "real")."""
    if d_prime is None:
        return float(olh_d_prime(epsilon))
    if isinstance(d_prime, str):
        if d_prime in _DPRIME_REAL:
            return math.exp(epsilon) + 1.0
        raise ValueError(f"d_prime must be None, 'real' (alias 'paper') or a number > 1, got {d_prime!r}")
    if isinstance(d_prime, bool) or not isinstance(d_prime, (Real, np.integer, np.floating)):
        raise TypeError(f"d_prime must be None, 'real' (alias 'paper') or a number > 1, got {d_prime!r}")
    d = float(d_prime)
    if not (math.isfinite(d) and d > 1):
        raise ValueError(f"d_prime must be a number > 1, got {d_prime!r}")
    return d


def oracle_pq(epsilon: float, d_prime=None) -> tuple[float, float]:
    """OLH support probabilities ``(p, q)`` (section 2.2).

    A user holding ``v`` supports ``v`` with probability ``p``; any other user
    supports it with probability ``q = 1/d'``.

    Parameters
    ----------
    epsilon : float
        Privacy budget (> 0).
    d_prime : None, int/float > 1, or "real"
        ``None`` (default): section 2.2's integer ``d' = ceil(e^eps + 1)``,
        ``p = e^eps/(e^eps + d' - 1)``, ``q = 1/d'``.  A number: that ``d'``.
        ``"real"`` (alias ``"paper"``): the real ``d' = e^eps + 1``, i.e. the
        appendix's ``p = 1/2``, ``q = 1/(e^eps + 1)``, which turns the exact
        variance into the closed form of eq. (var_olh).

    Returns
    -------
    (p, q) : tuple of float

    References
    ----------
    [PEM] section 2.2.2 (OLH) and the appendix (proof of Proposition 1).
    """
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    d = _resolve_d_prime(e, d_prime)
    ee = math.exp(e)
    return ee / (ee + d - 1.0), 1.0 / d


def _check_n(n, name: str = "n") -> np.ndarray:
    """Population size(s): real numbers >= 1 (arrays allowed; reals allow n/g)."""
    if isinstance(n, bool):
        raise TypeError(f"{name} must be a number >= 1, got {n!r}")
    try:
        a = np.asarray(n, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number >= 1, got {n!r}") from None
    if not np.all(np.isfinite(a)) or np.any(a < 1):
        raise ValueError(f"{name} must be a number >= 1, got {n!r}")
    return a


def _check_eps_array(epsilon, name: str = "epsilon") -> np.ndarray:
    if np.isscalar(epsilon):
        return np.asarray(check_epsilon(epsilon, name))
    a = np.asarray(epsilon, dtype=float)
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must be finite real numbers > 0, got {epsilon!r}")
    return a


def grr_variance(epsilon, d, n=1.0):
    """Variance of the GRR count estimate, eq. (var_grr).

    ``(d - 2 + e^eps) / (e^eps - 1)^2 * n`` (the count variance of a value
    with frequency close to 0).

    Parameters
    ----------
    epsilon : float or array
        Privacy budget (> 0).
    d : int or array
        Domain size (>= 2).
    n : float or array, default 1
        Number of users (>= 1); ``n = 1`` gives the per-user factor.

    Returns
    -------
    float or ndarray

    References
    ----------
    [PEM] eq. (var_grr), section 2.2.1.
    """
    e = _check_eps_array(epsilon)
    d = np.asarray(d, dtype=float)
    if not np.all(np.isfinite(d)) or np.any(d < 2):
        raise ValueError(f"d must be a domain size >= 2, got {d!r}")
    n = _check_n(n)
    ee = np.exp(e)
    out = (d - 2.0 + ee) / (ee - 1.0) ** 2 * n  # eq. (var_grr)
    return out[()] if out.ndim == 0 else out


def grr_pq(epsilon: float, d: int) -> tuple[float, float]:
    """GRR probabilities: keep ``p = e^eps/(e^eps+d-1)``, each other value ``q = 1/(e^eps+d-1)``.

    References
    ----------
    [PEM] section 2.2.1.
    """
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    d = check_int(d, "d", 2)
    ee = math.exp(e)
    return ee / (ee + d - 1), 1.0 / (ee + d - 1)


def olh_variance(epsilon, n=1.0, d_prime=None):
    """Variance of the OLH count estimate, eqs. (eqn:est) and (var_olh).

    Parameters
    ----------
    epsilon : float or array
        Privacy budget (> 0).
    n : float or array, default 1
        Number of users (>= 1).
    d_prime : None, number > 1, or "real"
        ``None`` (default): exact ``n q(1-q)/(p-q)^2`` with section 2.2's
        integer ``d' = ceil(e^eps+1)``, ``p = e^eps/(e^eps+d'-1)``, ``q = 1/d'``.
        A number: the same with that ``d'``.  ``"real"`` (alias ``"paper"``):
        the closed form ``4 e^eps/(e^eps-1)^2 n`` of eq. (var_olh), which is the
        exact formula at the real ``d' = e^eps + 1``.

    Returns
    -------
    float or ndarray

    References
    ----------
    [PEM] eq. (var_olh), section 2.2.2.
    """
    e = _check_eps_array(epsilon)
    n = _check_n(n)
    if isinstance(d_prime, str) and d_prime in _DPRIME_REAL:
        ee = np.exp(e)
        out = 4.0 * ee / (ee - 1.0) ** 2 * n  # eq. (var_olh)
    else:
        if e.ndim == 0:
            p, q = oracle_pq(float(e), d_prime)
        else:
            pq = np.array([oracle_pq(float(x), d_prime) for x in e.ravel()]).reshape(*e.shape, 2)
            p, q = pq[..., 0], pq[..., 1]
        out = np.asarray(n * q * (1.0 - q) / (p - q) ** 2)  # Var[(I - nq)/(p-q)], eq. (eqn:est)
    return out[()] if out.ndim == 0 else out


def min_population(freq, epsilon, *, z: float = 3.0, d_prime=None):
    """Smallest ``n`` with ``freq * n >= z * std``, section 2.2's group-size example.

    Solves ``f n >= z sqrt(V n)`` where ``V = olh_variance(epsilon, 1, d_prime)``:
    ``n >= (z/f)^2 V``.  The paper rounds ``sqrt(40/81) = 0.703`` to 0.7 and
    reports ``n >= 4,410,000`` for ``f = 0.1%``, ``e^eps = 10``; the unrounded
    bound is ``4,444,445``.

    References
    ----------
    [PEM] section 2.2, "The importance of group size".
    """
    f = np.asarray(freq, dtype=float)
    if not np.all(np.isfinite(f)) or np.any(f <= 0) or np.any(f > 1):
        raise ValueError(f"freq must be in (0, 1], got {freq!r}")
    if not (isinstance(z, Real) and math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a real number > 0, got {z!r}")
    v = olh_variance(epsilon, 1.0, d_prime)
    out = np.asarray((z / f) ** 2 * v)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------------------
# Distributions assumed by the analysis
# ---------------------------------------------------------------------------
def zipf_frequencies(support: int, exponent: float = 1.0) -> np.ndarray:
    """Zipf frequencies ``f_j proportional to 1/j^s``, ``j = 1..support``.

    Section 4.2.5 assumes ``s = 1`` for the optimizer; section 5 generates
    data with ``s = 1.5``.
    """
    support = check_int(support, "support", 1)
    if isinstance(exponent, bool) or not isinstance(exponent, Real) or not math.isfinite(exponent) \
            or exponent < 0:
        raise ValueError(f"exponent must be a finite real number >= 0, got {exponent!r}")
    w = np.arange(1, support + 1, dtype=float) ** (-float(exponent))
    return w / w.sum()


def _heavy_frequencies(freqs, k: int, name: str = "freqs") -> np.ndarray:
    """The k largest frequencies of a distribution, in rank order (zeros pad)."""
    f = check_frequencies(freqs, name)
    f = np.sort(f)[::-1]
    if f.size >= k:
        return f[:k].copy()
    return np.concatenate([f, np.zeros(k - f.size)])


# ---------------------------------------------------------------------------
# Identification probability, eq. (iden_prob)
# ---------------------------------------------------------------------------
def round_identification_probability(freqs, n_i, domain_size, kept, p, q, *, k=None, ranks=None,
                                     slots="text", competitors="paper"):
    """``P_i(j)``: probability that the j-th heavy hitter's prefix is kept in one round.

    Eq. (iden_prob)::

        P = Phi((mu_j + Phi^{-1}((kept - j + offset)/N) sigma_0 - mu_0) / sigma_j)

    with ``p_j = p f_j + q (1 - f_j)``, ``mu_j = n_i p_j``,
    ``sigma_j^2 = n_i p_j (1 - p_j)``, ``mu_0 = n_i q``,
    ``sigma_0^2 = n_i q (1 - q)`` and ``N = |D_i| - k`` zero-frequency values.

    Parameters
    ----------
    freqs : array_like
        ``f_j`` of the heavy hitters (any shape; each in [0, 1]).
    n_i : float or array
        Users in the round (``n[i]``, real, >= 1).
    domain_size : int
        ``|D_i|``, values tested in the round.
    kept : int
        ``|C_i|``, values kept (the paper's ``k`` in ``Phi^{-1}((k-j)/N)``).
    p, q : float
        Support probabilities of the oracle (see :func:`oracle_pq`).
    k : int, optional
        Number of heavy values assumed in ``D_i`` (``N = |D_i| - k``); default
        ``kept`` (section 4.2.4 writes ``N[i] = |D_i| - k`` with ``|C_i| = k``).
    ranks : array_like of int, optional
        ``j`` (1-based), broadcast against ``freqs``; default ``1..len(freqs)``
        along the last axis.
    slots : {"text", "formula"} or float, default "text"
        How many places below ``|C_i|`` the threshold quantile sits:
        ``Phi^{-1}((kept - j + offset)/N)`` with ``offset = 1`` for ``"text"``
        (section 4.2.4's "there are k - j + 1 slots", i.e. ``T_{k-j+1}``; it is
        also eq. (iden_prob) read with a 0-based ``j``, and makes the top value
        use the ``T_k`` the text defines), ``offset = 0`` for ``"formula"``
        (eq. (iden_prob) verbatim with 1-based ``j``, ``T_{k-j}``), or the
        given real offset (``0.5`` is a mid-rank correction).  See Notes.
    competitors : {"paper", "lower"}, default "paper"
        ``"paper"``: ``N = |D_i| - k`` zero-frequency competitors (section
        4.2.4).  ``"lower"``: ``N_j = |D_i| - j``, i.e. the ``k - j``
        lower-ranked heavy values also compete (as if of zero frequency).  The
        two agree when ``|D_i| >> k``; ``"lower"`` is markedly closer to a
        Monte-Carlo of the same model when ``|D_i|`` is a small multiple of
        ``k`` (e.g. ``eta = 1``, ``|D_i| = 2k``), where ``"paper"`` overrates
        the middle ranks.

    Returns
    -------
    ndarray
        Probabilities, the broadcast shape of ``freqs`` and ``ranks``.

    Notes
    -----
    Edge cases (documented interpretation):

    * ``kept - j + offset <= 0``: no slot is left for ``v_j`` once the
      ``j - 1`` higher values are ranked above it (the sorted-heavy-hitters
      assumption), so ``P = 0``.  With ``slots="formula"`` this includes
      ``j = kept``, where eq. (iden_prob) reads ``Phi^{-1}(0) = -inf`` and gives
      ``Phi(-inf) = 0`` (the last heavy hitter is never found; the predicted F1
      is capped at ``1 - 1/k``).  This is why ``"text"`` is the default.
    * ``(kept - j + offset)/N >= 1`` (including ``N <= 0``): there are at
      least as many slots as zero-frequency competitors, ``P = 1``.

    References
    ----------
    [PEM] section 4.2.4, eq. (iden_prob).
    """
    f = np.asarray(freqs, dtype=float)
    if not np.all(np.isfinite(f)) or np.any(f < 0) or np.any(f > 1):
        raise ValueError("freqs must be frequencies in [0, 1]")
    n_i = _check_n(n_i, "n_i")
    D = check_int(domain_size, "domain_size", 1)
    kept = check_int(kept, "kept", 1)
    k = kept if k is None else check_int(k, "k", 1)
    for nm, v in (("p", p), ("q", q)):
        if not (isinstance(v, (Real, np.floating)) and 0 < float(v) < 1):
            raise ValueError(f"{nm} must be a probability in (0, 1), got {v!r}")
    if not float(p) > float(q):
        raise ValueError(f"p must exceed q, got p = {p!r}, q = {q!r}")
    offset = _slot_offset(slots)
    if ranks is None:
        j = np.arange(1, f.shape[-1] + 1, dtype=float) if f.ndim else np.array(1.0)
    else:
        j = np.asarray(ranks, dtype=float)
        if np.any(j < 1) or np.any(j != np.floor(j)):
            raise ValueError("ranks must be integers >= 1")
    N = _competitors(float(D), float(k), j, _check_competitors(competitors))
    return _round_prob(f, n_i, N, kept, float(p), float(q), j, offset)


def _slot_offset(slots) -> float:
    if isinstance(slots, str):
        if slots == "text":
            return 1.0
        if slots == "formula":
            return 0.0
        raise ValueError(f"slots must be 'text', 'formula' or a finite real offset, got {slots!r}")
    if isinstance(slots, bool) or not isinstance(slots, (Real, np.floating, np.integer)) \
            or not math.isfinite(float(slots)):
        raise ValueError(f"slots must be 'text', 'formula' or a finite real offset, got {slots!r}")
    return float(slots)


def _round_prob(f, n_i, N, kept, p, q, j, offset):
    """Vectorised eq. (iden_prob) without validation; all arguments broadcast (N may be <= 0)."""
    pj = p * f + q * (1.0 - f)                    # p_j = p f_j + q (1 - f_j)
    mu_j = n_i * pj                               # mu_j[i]
    sd_j = np.sqrt(n_i * pj * (1.0 - pj))         # sigma_j[i]
    mu_0 = n_i * q                                # mu_0[i]
    sd_0 = np.sqrt(n_i * q * (1.0 - q))           # sigma_0[i]
    slots = kept - j + offset
    N = np.asarray(N, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(N > 0, slots / np.where(N > 0, N, 1.0), np.inf)
        z_thr = norm.ppf(np.clip(ratio, 0.0, 1.0))  # Phi^{-1}((k - j)/N[i])
        arg = (mu_j + z_thr * sd_0 - mu_0) / sd_j
    out = norm.cdf(arg)                           # eq. (iden_prob)
    return np.where(slots <= 0, 0.0, np.where(ratio >= 1, 1.0, out))


def _competitors(D, k, j, competitors):
    """N: zero-frequency competitors (section 4.2.4: N[i] = |D_i| - k)."""
    if competitors == "paper":
        return D - k
    return D - j  # "lower": the k - j lower-ranked heavy values compete too


def _check_competitors(competitors):
    if competitors not in ("paper", "lower"):
        raise ValueError(f"competitors must be 'paper' or 'lower', got {competitors!r}")
    return competitors


def identification_probability(config: PEMConfig, n, epsilon, freqs, *, d_prime=None, slots="text",
                               competitors="paper", per_round: bool = False, p=None, q=None):
    """Overall identification probability of each top-k value, ``prod_i P_i(j)``.

    Parameters
    ----------
    config : PEMConfig
        The PEM configuration (rounds, ``n[i]/n``, ``|C_i|``, ``|D_i|``).
    n : float
        Total number of users (``n[i] = n * group_fractions[i]``, real).
    epsilon : float
        Privacy budget of each report (> 0).
    freqs : array_like
        A frequency distribution (non-negative, sums to 1).  It is sorted in
        decreasing order; the first ``k`` entries are ``f_1..f_k`` (zeros pad
        a shorter vector).
    d_prime : None, number or "real"
        OLH parameters, see :func:`oracle_pq`.
    slots : {"text", "formula"} or float, default "text"
        Threshold rank, see :func:`round_identification_probability`
        (``"formula"``: eq. (iden_prob) verbatim).
    competitors : {"paper", "lower"}, default "paper"
        ``N`` per round, see :func:`round_identification_probability`.
    per_round : bool, default False
        Return the ``(g, k)`` matrix of ``P_i(j)`` instead of the product.
    p, q : float, optional
        Override the oracle's support probabilities (e.g. GRR's, see :func:`grr_pq`).

    Returns
    -------
    ndarray
        Shape ``(k,)`` (``prod_i P_i(j)``, ``j = 1..k``) or ``(g, k)``.

    Notes
    -----
    In round ``i`` the formula's ``k`` (the number kept) is ``|C_i|`` and the
    zero-frequency competitors number ``N[i] = |D_i| - k`` (the k heavy
    prefixes are assumed to be in ``D_i``).  Heavy hitters with
    ``j > |C_i|`` have probability 0 in that round.  Rounds are assumed
    independent (section 4.2.3).

    References
    ----------
    [PEM] section 4.2.4, eq. (iden_prob); eq. (utility_score) for the product.
    """
    if not isinstance(config, PEMConfig):
        raise TypeError(f"config must be a PEMConfig, got {type(config).__name__}")
    n = float(_check_n(n))
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    f = _heavy_frequencies(freqs, config.k)
    p, q = _resolve_pq(e, d_prime, p, q)
    P = _config_probs(config, n, f, p, q, _slot_offset(slots), _check_competitors(competitors))
    return P if per_round else P.prod(axis=0)


def _resolve_pq(e, d_prime, p, q):
    if p is None and q is None:
        return oracle_pq(e, d_prime)
    if p is None or q is None:
        raise ValueError("give both p and q, or neither")
    p, q = float(p), float(q)
    if not (0 < q < p < 1):
        raise ValueError(f"need 0 < q < p < 1, got p = {p}, q = {q}")
    return p, q


def _config_probs(config: PEMConfig, n: float, f: np.ndarray, p: float, q: float, offset: float,
                  competitors: str = "paper"):
    """(g, k) matrix of P_i(j) for a validated config (no checks)."""
    k = config.k
    n_i = n * np.asarray(config.group_fractions)[:, None]            # n[i]
    kept = np.asarray(config.cand_sizes, dtype=float)[:, None]       # |C_i|
    D = np.asarray([float(d) for d in config.domain_sizes])[:, None]  # |D_i|
    j = np.arange(1, k + 1, dtype=float)[None, :]
    N = _competitors(D, float(k), j, competitors)                    # N[i] = |D_i| - k
    return _round_prob(f[None, :], n_i, N, kept, p, q, j, offset)


# ---------------------------------------------------------------------------
# Utility score, eq. (utility_score)
# ---------------------------------------------------------------------------
def utility_weights(k: int, metric: str = "f1") -> np.ndarray:
    """Weights ``w_j`` of eq. (utility_score).

    ``"f1"``: ``w_j = 1/k``; ``"ncr"``: ``w_j = (k+1-j) / sum_l (k+1-l)``.

    References
    ----------
    [PEM] section 4.2.1 (Unified Utility Score).
    """
    k = check_int(k, "k", 1)
    if metric == "f1":
        return np.full(k, 1.0 / k)
    if metric == "ncr":
        w = np.arange(k, 0, -1, dtype=float)
        return w / w.sum()  # sum_l (k + 1 - l) = k(k+1)/2
    raise ValueError(f"metric must be 'f1' or 'ncr', got {metric!r}")


def utility_score(config: PEMConfig, n, epsilon, freqs, *, metric: str = "f1", d_prime=None,
                  slots="text", competitors="paper", p=None, q=None) -> float:
    """Predicted utility, eq. (utility_score): ``sum_j w_j prod_i P_i(j)``.

    Parameters
    ----------
    config, n, epsilon, freqs, d_prime, slots, competitors, p, q
        As in :func:`identification_probability`.
    metric : {"f1", "ncr"} or array_like
        F-measure (``w_j = 1/k``), NCR (``w_j = (k+1-j)/(k(k+1)/2)``) or
        explicit weights of length ``k``.

    Returns
    -------
    float

    References
    ----------
    [PEM] section 4.2.1, eq. (utility_score).
    """
    probs = identification_probability(config, n, epsilon, freqs, d_prime=d_prime, slots=slots,
                                       competitors=competitors, p=p, q=q)
    if isinstance(metric, str):
        w = utility_weights(config.k, metric)
    else:
        w = np.asarray(metric, dtype=float)
        if w.shape != (config.k,) or not np.all(np.isfinite(w)):
            raise ValueError(f"metric weights must be a finite vector of length k = {config.k}")
    return float(w @ probs)  # eq. (utility_score)


# ---------------------------------------------------------------------------
# Optimizer, section 4.2.5
# ---------------------------------------------------------------------------
_ZIPF_DIRECT_MAX = 1 << 22


def _zipf_top(k: int, support: int, s: float) -> np.ndarray:
    """The first min(k, support) Zipf(s) frequencies over `support` values, zero-padded to k."""
    top = min(k, support)
    j = np.arange(1, top + 1, dtype=float)
    if support <= _ZIPF_DIRECT_MAX:
        H = float(np.sum(np.arange(1, support + 1, dtype=float) ** (-s)))
    elif s == 1.0:
        H = float(special.digamma(support + 1.0) + np.euler_gamma)          # H_S = psi(S+1) + gamma
    elif s > 1.0:
        H = float(special.zeta(s, 1.0) - special.zeta(s, support + 1.0))    # Hurwitz zeta difference
    else:  # Euler-Maclaurin, error O(S^{-s-3})
        S = float(support)
        H = float(special.zeta(s) + S ** (1 - s) / (1 - s) + 0.5 * S ** (-s) - s * S ** (-s - 1) / 12)
    f = j ** (-s) / H
    return np.concatenate([f, np.zeros(k - top)]) if top < k else f


def assumed_frequencies(distribution, k: int, *, n=None, m=None, zipf_exponent: float = 1.0,
                        support: Optional[int] = None) -> np.ndarray:
    """``f_1..f_k`` assumed by the optimizer.

    Parameters
    ----------
    distribution : "zipf" or array_like
        ``"zipf"``: ``f_j proportional to 1/j^zipf_exponent`` over ``support``
        values (section 4.2.5 assumes exponent 1); an array: any frequency
        distribution (sorted decreasingly here).
    k : int
        Number of heavy hitters.
    n, m : optional
        Used for the default Zipf support ``min(2^m, n)`` (no more distinct
        values than users or than the domain holds).
    zipf_exponent : float, default 1.0
    support : int, optional
        Number of distinct values of the Zipf law.

    Returns
    -------
    ndarray of shape (k,)
    """
    k = check_int(k, "k", 1)
    if isinstance(distribution, str):
        if distribution != "zipf":
            raise ValueError(f"distribution must be 'zipf' or a frequency vector, got {distribution!r}")
        if isinstance(zipf_exponent, bool) or not isinstance(zipf_exponent, Real) \
                or not math.isfinite(zipf_exponent) or zipf_exponent < 0:
            raise ValueError(f"zipf_exponent must be a finite real number >= 0, got {zipf_exponent!r}")
        if support is None:
            if n is None or m is None:
                raise ValueError("give support, or n and m for the default support min(2**m, n)")
            support = min(2 ** int(m), int(math.ceil(float(n))))
        support = check_int(support, "support", 1)
        return _zipf_top(k, support, float(zipf_exponent))
    return _heavy_frequencies(distribution, k, "distribution")


def _query_cost(domain_sizes, mode: str) -> int:
    if mode == "paper":  # 2^(gamma+eta) * g generalised: g times the largest round
        return len(domain_sizes) * max(domain_sizes)
    return sum(domain_sizes)  # "exact": sum_i |D_i|


def _domain_sizes(gamma, etas, cands):
    out = [2 ** (gamma + etas[0])]
    for c, e in zip(cands[:-1], etas[1:]):
        out.append(c * 2**e)
    return out


def candidate_configs(m: int, k: int, *, query_limit: int = 2**20, gammas=None, cand_sizes=None,
                      eta_layout: str = "both", query_count: str = "paper") -> list[PEMConfig]:
    """All PEM configurations the optimizer considers, each within the query limit.

    Parameters
    ----------
    m, k : int
        Value length and number of heavy hitters.
    query_limit : int, default 2**20
        Bound on the query count (see ``query_count``).
    gammas : None, "search" or sequence of int
        ``None``: ``[ceil(log2 k)]`` (section 4.2.2); ``"search"``: that value
        +-2 (clipped to ``[0, m-1]``); or explicit values.
    cand_sizes : None, "search" or sequence of int
        ``|C_i|`` for the rounds before the last (the last keeps ``k``).
        ``None``: ``[k]``; ``"search"``: ``{ceil(k/2), k, 2k, 4k}``.
    eta_layout : {"leftover", "balanced", "both"}
        ``"leftover"``: ``eta`` bits per round, the last round the leftover
        (section 4.2.5); ``"balanced"``: ``g`` rounds with ``eta[i]``
        differing by at most one (the larger ones last); "both" (default).
    query_count : {"paper", "exact"}
        ``"paper"``: ``g * max_i |D_i|`` (equals section 4.2.5's
        ``2^(gamma+eta) g`` for the default configuration and bounds
        ``sum |D_i|``); ``"exact"``: ``sum_i |D_i|``.

    Returns
    -------
    list of PEMConfig
        Sorted by (gamma, g, etas, cand size); equal group fractions.
    """
    m, k = _check_m_k(m, k)
    query_limit = check_int(query_limit, "query_limit", 1)
    if query_count not in ("paper", "exact"):
        raise ValueError(f"query_count must be 'paper' or 'exact', got {query_count!r}")
    if eta_layout not in ("leftover", "balanced", "both"):
        raise ValueError(f"eta_layout must be 'leftover', 'balanced' or 'both', got {eta_layout!r}")
    g0 = _default_gamma(m, k)
    if gammas is None:
        gam = [g0]
    elif isinstance(gammas, str):
        if gammas != "search":
            raise ValueError(f"gammas must be None, 'search' or a sequence of integers, got {gammas!r}")
        gam = list(range(max(0, g0 - 2), min(m - 1, g0 + 2) + 1))
    else:
        gam = sorted({check_int(x, "gammas[...]", 0, m - 1) for x in gammas})
    if cand_sizes is None:
        cs = [k]
    elif isinstance(cand_sizes, str):
        if cand_sizes != "search":
            raise ValueError(f"cand_sizes must be None, 'search' or a sequence of integers, got {cand_sizes!r}")
        cs = sorted({-(-k // 2), k, 2 * k, 4 * k})
    else:
        cs = sorted({check_int(x, "cand_sizes[...]", 1) for x in cand_sizes})
    log_lim = query_limit.bit_length()
    seen, out = set(), []
    for gamma in gam:
        L = m - gamma
        layouts = []
        # a round's domain is at least 2^(eta_i), so eta_i <= log2(limit); g >= L/log2(limit)
        max_eta = min(L, log_lim)
        if eta_layout in ("leftover", "both"):
            layouts += [_split_bits(L, e) for e in range(1, max_eta + 1)]
        if eta_layout in ("balanced", "both"):
            for g in sorted({-(-L // e) for e in range(1, max_eta + 1)}):
                base, extra = divmod(L, g)
                layouts.append((base,) * (g - extra) + (base + 1,) * extra)
        for etas in layouts:
            for c in cs:
                cands = (c,) * (len(etas) - 1) + (k,)
                key = (gamma, etas, cands)
                if key in seen:
                    continue
                seen.add(key)
                ds = _domain_sizes(gamma, etas, cands)
                if any(ci > di for ci, di in zip(cands, ds)):
                    continue
                if _query_cost(ds, query_count) > query_limit:
                    continue
                out.append(PEMConfig(m=m, k=k, gamma=gamma, etas=etas, cand_sizes=cands))
    out.sort(key=lambda c: (c.gamma, c.g, c.etas, c.cand_sizes))
    return out


def evaluate_configs(configs, n, epsilon, distribution="zipf", *, d_prime=None, slots="text",
                     competitors: str = "paper", zipf_exponent: float = 1.0, support: Optional[int] = None):
    """Predicted F1 and NCR (eq. utility_score) of each configuration, as a DataFrame.

    Columns: ``gamma, etas, g, cand_sizes, group_fractions, queries, f1, ncr, config``.
    All configurations must share ``m`` and ``k``.  ``distribution``,
    ``zipf_exponent`` and ``support`` as in :func:`assumed_frequencies`;
    ``d_prime``, ``slots`` and ``competitors`` as in
    :func:`identification_probability`.
    """
    import pandas as pd

    configs = list(configs)
    if not configs:
        raise ValueError("configs must contain at least one PEMConfig")
    if not all(isinstance(c, PEMConfig) for c in configs):
        raise TypeError("configs must be PEMConfig objects")
    m, k = configs[0].m, configs[0].k
    if any(c.m != m or c.k != k for c in configs):
        raise ValueError("all configs must share m and k")
    n = float(_check_n(n))
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    f = assumed_frequencies(distribution, k, n=n, m=m, zipf_exponent=zipf_exponent, support=support)
    p, q = oracle_pq(e, d_prime)
    off = _slot_offset(slots)
    comp = _check_competitors(competitors)
    w1, wn = utility_weights(k, "f1"), utility_weights(k, "ncr")
    rows = []
    for c in configs:
        P = _config_probs(c, n, f, p, q, off, comp).prod(axis=0)
        rows.append(dict(gamma=c.gamma, etas=c.etas, g=c.g, cand_sizes=c.cand_sizes,
                         group_fractions=c.group_fractions, queries=c.queries,
                         f1=float(w1 @ P), ncr=float(wn @ P), config=c))
    return pd.DataFrame(rows)


def optimize_pem(n, m: int, k: int, epsilon, *, query_limit: int = 2**20, distribution="zipf",
                 target: str = "f1", zipf_exponent: float = 1.0, support: Optional[int] = None,
                 gammas=None, cand_sizes=None, eta_layout: str = "both", fractions: str = "equal",
                 query_count: str = "paper", d_prime=None, slots="text",
                 competitors: str = "lower") -> PEMConfig:
    """The PEM configuration with the best predicted utility (section 4.2.5).

    Evaluates eq. (utility_score) with eq. (iden_prob) for every candidate
    configuration (:func:`candidate_configs`) and returns the best.  By
    default it searches ``eta`` (each ``eta`` with the leftover bits in the
    last round, and each resulting ``g`` with the bits spread evenly), with
    ``gamma = ceil(log2 k)``, ``|C_i| = k`` and ``n[i] = n/g`` (section
    4.2.2); the options open the other parameters the paper mentions.  No returned configuration exceeds
    ``query_limit``.

    Parameters
    ----------
    n : float
        Number of users (>= 1).
    m, k : int
        Value length in bits and number of heavy hitters.
    epsilon : float
        Privacy budget (> 0).
    query_limit : int, default 2**20
        Frequency-oracle query limit (section 4.2.5's example).
    distribution : "zipf" or array_like, default "zipf"
        Assumed distribution, see :func:`assumed_frequencies`.
    target : {"f1", "ncr"}, default "f1"
        Metric maximised (section 6.1 optimises F1).
    zipf_exponent : float, default 1.0
        Exponent of the assumed Zipf law (section 4.2.5: ``f_j ∝ 1/j``).
    support : int, optional
        Distinct values of the Zipf law; default ``min(2^m, n)``.
    gammas, cand_sizes, eta_layout, query_count
        Search space, see :func:`candidate_configs`.  ``eta_layout`` defaults
        to ``"both"``: with ``"leftover"`` only, a split such as
        ``m - gamma = 155 = 14 x 11 + 1`` ends with a one-bit round and the
        model then prefers ``16`` rounds of 10 bits to the ``15`` rounds the
        limit allows; the balanced split of those 15 rounds beats both
        (Observations 1 and 2).
    fractions : {"equal", "optimize"}, default "equal"
        ``"optimize"`` also tunes ``n[i]`` of the best configuration
        numerically (Nelder-Mead on softmax weights).
    d_prime : None, number or "real"
        OLH parameters, see :func:`oracle_pq`.
    slots : {"text", "formula"} or float
        Threshold rank of eq. (iden_prob), see :func:`round_identification_probability`.
    competitors : {"lower", "paper"}, default "lower"
        ``N`` per round, see :func:`round_identification_probability`.  The
        default differs from :func:`identification_probability`'s: with the
        paper's ``N[i] = |D_i| - k`` the model overrates rounds with
        ``|D_i| = 2k`` (``eta = 1``) so much that at ``eps = 1``,
        ``n = 10^6``, ``m = 64`` it prefers 60 one-bit rounds, against
        section 4.2.5 and Observation 1; ``"lower"`` removes that artefact and
        changes nothing when ``|D_i| >> k``.

    Returns
    -------
    PEMConfig
        With ``predicted_f1`` and ``predicted_ncr`` filled.  Ties (within
        ``1e-12``) go to fewer rounds, then to larger early ``eta``.

    Raises
    ------
    ValueError
        If no configuration fits ``query_limit``.

    References
    ----------
    [PEM] sections 4.2.2-4.2.5 and 4.3 (Observations 1 and 2).
    """
    n_arr = float(_check_n(n))
    m, k = _check_m_k(m, k)
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    query_limit = check_int(query_limit, "query_limit", 1)
    if target not in ("f1", "ncr"):
        raise ValueError(f"target must be 'f1' or 'ncr', got {target!r}")
    if fractions not in ("equal", "optimize"):
        raise ValueError(f"fractions must be 'equal' or 'optimize', got {fractions!r}")
    f = assumed_frequencies(distribution, k, n=n_arr, m=m, zipf_exponent=zipf_exponent, support=support)
    p, q = oracle_pq(e, d_prime)
    off = _slot_offset(slots)
    comp = _check_competitors(competitors)
    configs = candidate_configs(m, k, query_limit=query_limit, gammas=gammas, cand_sizes=cand_sizes,
                                eta_layout=eta_layout, query_count=query_count)
    if not configs:
        raise ValueError(
            f"query_limit = {query_limit} is too small for m = {m}, k = {k} with this search space; "
            f"pem_default_config needs at least {min_query_limit(m, k)}")
    w = utility_weights(k, target)
    w1, wn = utility_weights(k, "f1"), utility_weights(k, "ncr")
    best, best_u, best_key = None, -1.0, None
    for c in configs:
        P = _config_probs(c, n_arr, f, p, q, off, comp).prod(axis=0)
        u = float(w @ P)
        key = (c.g, tuple(-x for x in c.etas))
        if best is None or u > best_u + 1e-12 or (abs(u - best_u) <= 1e-12 and key < best_key):
            best, best_u, best_key = c, u, key
    if fractions == "optimize" and best.g > 1:
        best = _optimize_fractions(best, n_arr, f, p, q, off, comp, w)
    P = _config_probs(best, n_arr, f, p, q, off, comp).prod(axis=0)
    return best.with_predictions(float(w1 @ P), float(wn @ P))


def _optimize_fractions(config, n, f, p, q, off, comp, w):
    """Tune n[i]/n of one configuration (softmax parametrisation, Nelder-Mead)."""
    from scipy.optimize import minimize

    g = config.g

    def make(z):
        z = np.concatenate([[0.0], z])
        fr = np.exp(z - z.max())
        fr = fr / fr.sum()
        return PEMConfig(config.m, config.k, config.gamma, config.etas, tuple(fr), config.cand_sizes)

    def loss(z):
        c = make(z)
        return -float(w @ _config_probs(c, n, f, p, q, off, comp).prod(axis=0))

    res = minimize(loss, np.zeros(g - 1), method="Nelder-Mead",
                   options=dict(xatol=1e-4, fatol=1e-10, maxiter=400 * g))
    cand = make(res.x)
    return cand if -res.fun > -loss(np.zeros(g - 1)) else config


# ---------------------------------------------------------------------------
# Proposition 1 and Lemma 1 (appendix)
# ---------------------------------------------------------------------------
def lemma1_E(epsilon):
    """``E(eps) = ((e^eps - 1)/e^(eps/2))^2 = 4 sinh^2(eps/2)`` (appendix, Lemma 1).

    Accepts ``epsilon >= 0`` (``E(0) = 0``), scalar or array.
    """
    e = np.asarray(epsilon, dtype=float)
    if not np.all(np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    out = np.expm1(e) ** 2 / np.exp(e)  # ((e^eps - 1)/e^(eps/2))^2
    return out[()] if out.ndim == 0 else out


def prop1_A(k, j, N):
    """``A = Phi^{-1}((k - j)/N)`` of the appendix (``< 0`` when ``k - j < N/2``)."""
    k, j, N = (np.asarray(x, dtype=float) for x in (k, j, N))
    if np.any(k < 1) or np.any(j < 1) or np.any(j > k) or np.any(N <= 0):
        raise ValueError("need 1 <= j <= k and N > 0")
    out = norm.ppf((k - j) / N)
    return out[()] if out.ndim == 0 else out


def _prop1_args(epsilon, g, f, n, A):
    e = _check_eps_array(epsilon)
    g = np.asarray(g, dtype=float)
    if np.any(g < 1) or np.any(g != np.floor(g)):
        raise ValueError(f"g must be integers >= 1, got {g!r}")
    f = np.asarray(f, dtype=float)
    if np.any(f <= 0) or np.any(f > 1):
        raise ValueError(f"f must be frequencies in (0, 1], got {f!r}")
    n = _check_n(n)
    A = np.asarray(A, dtype=float)
    if np.any(np.isnan(A)):
        raise ValueError("A must be a real number (Phi^{-1}((k-j)/N))")
    B = f / 2.0 * (1.0 - f / 2.0)   # B = f_j/2 (1 - f_j/2)
    C = f * np.sqrt(n) / 2.0        # C = f_j sqrt(n)/2, n = all users (see Notes of prop1_P1)
    return e, g, A, B, C


def prop1_P1(epsilon, g, f, n, A):
    """Argument of Phi in eq. (full_iden) when the users are partitioned (appendix).

    ``P1 = A/sqrt(1 + B E(eps)) + C/sqrt(g/E(eps) + g B)``, with
    ``B = f/2 (1 - f/2)``, ``C = f sqrt(n)/2``: each of ``g`` groups of
    ``n/g`` users answers one question with the full ``eps``.

    Parameters
    ----------
    epsilon : float or array
        Total privacy budget.
    g : int or array
        Number of questions (groups).
    f : float or array
        Frequency ``f_j`` in (0, 1].
    n : float or array
        Total number of users.
    A : float or array
        ``Phi^{-1}((k-j)/N)`` (see :func:`prop1_A`).

    Returns
    -------
    float or ndarray

    Notes
    -----
    The appendix writes ``C = f_j sqrt(n[i])/2``; for ``P1`` and ``P2`` to be
    eq. (full_iden) with ``n/g`` users at ``eps`` and ``n`` users at
    ``eps/g`` respectively, ``n`` here must be the total population (a group
    of ``n/g`` gives ``C sqrt(E/g)`` in the numerator, which is how ``g``
    enters ``P1``).  ``Phi(P1)`` is then the identification probability.
    Both use the appendix's OLH with ``p = 1/2``, ``q = 1/(e^eps + 1)``.

    References
    ----------
    [PEM] appendix, proof of Proposition 1, eq. (full_iden).
    """
    e, g, A, B, C = _prop1_args(epsilon, g, f, n, A)
    E = lemma1_E(e)
    out = np.asarray(A / np.sqrt(1.0 + B * E) + C / np.sqrt(g / E + g * B))
    return out[()] if out.ndim == 0 else out


def prop1_P2(epsilon, g, f, n, A):
    """Argument of Phi in eq. (full_iden) when each user splits ``eps`` over ``g`` questions.

    ``P2 = A/sqrt(1 + B E(eps/g)) + C/sqrt(1/E(eps/g) + B)`` (all ``n``
    users answer each question with ``eps/g``).  Parameters as in
    :func:`prop1_P1`.

    References
    ----------
    [PEM] appendix, proof of Proposition 1.
    """
    e, g, A, B, C = _prop1_args(epsilon, g, f, n, A)
    Eg = lemma1_E(e / g)
    out = np.asarray(A / np.sqrt(1.0 + B * Eg) + C / np.sqrt(1.0 / Eg + B))
    return out[()] if out.ndim == 0 else out


def prop1_grid(epsilons, gs, fs, n, A=None, *, k: int = 16, j: Optional[int] = None, N: Optional[float] = None):
    """Proposition 1 and Lemma 1 over a grid, as a pandas DataFrame.

    Parameters
    ----------
    epsilons, gs, fs : sequences
        Grid of total budgets, numbers of questions ``g >= 1`` and frequencies.
    n : float
        Total number of users.
    A : float, optional
        ``Phi^{-1}((k-j)/N)``; default computed from ``k``, ``j``, ``N``.
    k, j, N : optional
        Used when ``A`` is None: ``k = 16``, ``j = k // 2`` and
        ``N = k (2^10 - 1)`` (``eta = 10``) by default.

    Returns
    -------
    pandas.DataFrame
        Columns ``epsilon, g, f, n, A, P1, P2, P1_gt_P2, prob_partition,
        prob_split, E_eps_over_g, E_eps_div_g, lemma1_holds, B0_condition``:
        ``prob_*`` are ``Phi(P1)``, ``Phi(P2)``; ``lemma1_holds`` is
        ``E(eps/g) < E(eps)/g`` (strict, so False at ``g = 1``);
        ``B0_condition`` is ``P1 > P2`` with ``B = 0`` (the case the proof covers).
    """
    import pandas as pd

    if A is None:
        k = check_int(k, "k", 1)
        j = max(1, k // 2) if j is None else check_int(j, "j", 1, k)
        N = k * (2**10 - 1) if N is None else N
        A = float(prop1_A(k, j, N))
    ee, gg, ff = np.meshgrid(np.asarray(epsilons, float), np.asarray(gs, float), np.asarray(fs, float),
                             indexing="ij")
    ee, gg, ff = ee.ravel(), gg.ravel(), ff.ravel()
    P1 = prop1_P1(ee, gg, ff, n, A)
    P2 = prop1_P2(ee, gg, ff, n, A)
    E1, E2 = lemma1_E(ee / gg), lemma1_E(ee) / gg
    C = ff * math.sqrt(float(n)) / 2
    P1_B0 = A + C * np.sqrt(lemma1_E(ee) / gg)
    P2_B0 = A + C * np.sqrt(E1)
    return pd.DataFrame(dict(epsilon=ee, g=gg.astype(int), f=ff, n=float(n), A=A, P1=P1, P2=P2,
                             P1_gt_P2=P1 > P2, prob_partition=norm.cdf(P1), prob_split=norm.cdf(P2),
                             E_eps_over_g=E1, E_eps_div_g=E2, lemma1_holds=E1 < E2,
                             B0_condition=P1_B0 > P2_B0))


# ---------------------------------------------------------------------------
# Simpler joint estimation for SPM (appendix)
# ---------------------------------------------------------------------------
def _check_pq(p, q):
    for nm, v in (("p", p), ("q", q)):
        if isinstance(v, bool) or not isinstance(v, (Real, np.floating)) or not 0 <= float(v) <= 1:
            raise ValueError(f"{nm} must be a probability in [0, 1], got {v!r}")
    if not float(p) > float(q):
        raise ValueError(f"p must exceed q, got p = {p!r}, q = {q!r}")
    return float(p), float(q)


def spm_pq(epsilon: float, *, reading: str = "appendix") -> tuple[float, float]:
    """OLH ``(p, q)`` for the joint estimator.

    ``reading="appendix"``: ``p = 1/2``, ``q = 1/(e^eps + 1)`` (real
    ``d' = e^eps + 1``); ``reading="section2"``: ``d' = ceil(e^eps + 1)``,
    ``p = e^eps/(e^eps + d' - 1)``, ``q = 1/d'``.  ``epsilon`` is the budget
    of one report (SPM gives each of its three reports ``eps/3``).
    """
    if reading == "appendix":
        return oracle_pq(epsilon, "real")
    if reading == "section2":
        return oracle_pq(epsilon, None)
    raise ValueError(f"reading must be 'appendix' or 'section2', got {reading!r}")


def spm_joint_estimate_pair(I_ab, n_a, n_b, n, p, q):
    """Appendix's joint count estimate of a pattern pair ``(a, b)``.

    ``n_ab = (I_ab - (n_a + n_b) q (p - q) - n q^2) / (p - q)^2``

    Parameters
    ----------
    I_ab : array_like
        Reports supporting both ``a`` (segment i) and ``b`` (segment j).
    n_a, n_b : array_like
        Unbiased estimates of the counts of ``a`` and ``b`` in the same group.
    n : float
        Users in the group.
    p, q : float
        Support probabilities (see :func:`spm_pq`).

    Returns
    -------
    ndarray or float
        Unbiased when ``n_a``, ``n_b`` are and each report supports
        independently with probability ``p`` (own pattern) or ``q``.

    References
    ----------
    [PEM] appendix, "Simpler Joint Estimation".
    """
    p, q = _check_pq(p, q)
    n = float(_check_n(n))
    I_ab, n_a, n_b = (np.asarray(x, dtype=float) for x in (I_ab, n_a, n_b))
    out = (I_ab - (n_a + n_b) * q * (p - q) - n * q**2) / (p - q) ** 2  # appendix, n~_a^b
    return out[()] if out.ndim == 0 else out


def spm_joint_estimate(I_V, subset_sums, n, p, q):
    """Appendix's joint estimate for ``|V| = r`` answers (inclusion-exclusion).

    ``n_V = (I_V - sum_{i=0}^{r-1} n*_{V(i)} q^(r-i) (p-q)^i) / (p-q)^r``

    Parameters
    ----------
    I_V : array_like
        Reports supporting all ``r`` answers of ``V``.
    subset_sums : sequence of array_like, length r - 1
        ``subset_sums[i-1] = n*_{V(i)}``: the sum of the joint estimates over
        all size-``i`` subsets of ``V`` (``i = 1..r-1``); ``n*_{V(0)} = n``.
    n : float
        Users in the group.
    p, q : float
        Support probabilities.

    Returns
    -------
    ndarray or float

    Notes
    -----
    With ``r = 1`` this is OLH's ``(I - n q)/(p - q)`` and with ``r = 2`` it
    is :func:`spm_joint_estimate_pair`.  The appendix reuses the letter ``n``
    for ``|V|``; here ``r = |V|``.

    References
    ----------
    [PEM] appendix, "Simpler Joint Estimation".
    """
    p, q = _check_pq(p, q)
    n = float(_check_n(n))
    r = len(subset_sums) + 1
    acc = n * q**r                                         # i = 0: n*_{V(0)} = n
    for i, s in enumerate(subset_sums, start=1):
        acc = acc + np.asarray(s, dtype=float) * q ** (r - i) * (p - q) ** i
    out = (np.asarray(I_V, dtype=float) - acc) / (p - q) ** r  # appendix, n~_V
    return out[()] if out.ndim == 0 else out


def spm_joint_estimates(supports, n, p, q) -> dict:
    """Joint estimates for every subset of a set of answers, recursively.

    Parameters
    ----------
    supports : mapping
        ``{subset: I_S}`` for every non-empty subset ``S`` of ``V`` (keys:
        frozensets, or tuples/sets, of answer labels): ``I_S`` counts the
        reports supporting every answer in ``S``.
    n, p, q
        As in :func:`spm_joint_estimate`.

    Returns
    -------
    dict
        ``{frozenset(S): n~_S}`` for every non-empty subset.
    """
    from itertools import combinations

    sup = {frozenset(k): v for k, v in supports.items()}
    if not sup:
        raise ValueError("supports must not be empty")
    V = frozenset().union(*sup)
    for r in range(1, len(V) + 1):
        for S in combinations(sorted(V, key=repr), r):
            if frozenset(S) not in sup:
                raise ValueError(f"supports lacks the subset {set(S)!r}; every non-empty subset of V is needed")
    est: dict = {}
    for r in range(1, len(V) + 1):
        for S in combinations(sorted(V, key=repr), r):
            S = frozenset(S)
            sums = [sum(est[frozenset(T)] for T in combinations(sorted(S, key=repr), i)) for i in range(1, r)]
            est[S] = spm_joint_estimate(sup[S], sums, n, p, q)
    return est


# ---------------------------------------------------------------------------
# Section 5 settings where the text and the captions differ
# ---------------------------------------------------------------------------
def validation_setting(figure: str, *, reading: str = "caption") -> dict:
    """Default parameters of the section 5 validation figures.

    Parameters
    ----------
    figure : {"identification", "configurations", "optimal"}
        Figure fig:vary_f_multi (section 5.1), fig:match_config (5.2) or
        fig:match_optimal_config (5.3).
    reading : {"caption", "text"}
        Section 5.1's text says ``n = 100000`` while the caption of
        fig:vary_f_multi says ``n = 1000000``; the other figures agree.

    Returns
    -------
    dict
        ``n, m, epsilon, k`` and, where the paper fixes it, ``config``
        (a :class:`PEMConfig`) and ``zipf_exponent`` of the data (1.5).
    """
    if reading not in ("caption", "text"):
        raise ValueError(f"reading must be 'caption' or 'text', got {reading!r}")
    if figure == "identification":
        n = 1_000_000 if reading == "caption" else 100_000
        return dict(n=n, m=64, epsilon=1.0, k=32, zipf_exponent=1.5,
                    config=pem_config(64, 32, gamma=5, eta=10, cand_sizes=(32,) * 6))
    if figure == "configurations":
        return dict(n=100_000, m=16, epsilon=1.0, k=16, zipf_exponent=1.5, gamma=4)
    if figure == "optimal":
        return dict(n=1_000_000, m=64, epsilon=1.0, k=32, zipf_exponent=1.5, target="f1")
    raise ValueError(f"figure must be 'identification', 'configurations' or 'optimal', got {figure!r}")
