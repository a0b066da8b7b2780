"""The parameters and variances of GRR and OLH (paper section 2.2), written once.

The oracle classes (:class:`ldp.oracles.GRR`, :class:`ldp.oracles.OLH`) take
their ``p``, ``q``, ``d'`` and variance from these functions, and
:mod:`ldp.analysis` re-exports them; no other module computes them.

* :func:`grr_pq`, :func:`grr_variance` -- section 2.2.1, eq. (1);
* :func:`default_d_prime`, :func:`olh_pq`, :func:`olh_variance` -- section
  2.2.2, eqs. (2) and (3), with the integer hash range ``d' = ceil(e^eps + 1)``
  the oracle uses, any other ``d'``, or the real ``d' = e^eps + 1`` of the
  paper's closed form (``d_prime="real"``, alias ``"paper"``);
* :func:`min_population` -- section 2.2's group-size example.

The scalar functions accept arrays where the docstring says so (the analysis
evaluates them on grids).

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", section 2.2 and the appendix.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ..validation import EXP_MAX_EPSILON, check_epsilon, check_epsilons, check_int, check_population, check_real

__all__ = ["REAL_D_PRIME", "default_d_prime", "olh_pq", "olh_variance", "grr_pq", "grr_variance",
           "min_population"]

#: the ``d_prime`` spellings of the real hash range ``d' = e^eps + 1`` (the paper's closed form)
REAL_D_PRIME = ("real", "paper")
_EXP_WHY = "e**epsilon must be a finite double"


def _exp_epsilon(epsilon) -> tuple[float, float]:
    """``(epsilon, e^epsilon)`` for a budget whose ``e^epsilon`` is a finite double."""
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    return e, math.exp(e)


def default_d_prime(epsilon: float) -> int:
    """OLH's hash range ``d' = ceil(e^eps + 1)`` (section 2.2.2).

    ``e^eps + 1`` within a relative ``1e-9`` of an integer is taken as that
    integer, so that ``epsilon = ln 3`` gives ``d' = 4`` although
    ``exp(log(3))`` is ``3.0000000000000004`` in floating point (and
    ``epsilon = ln 9`` gives 10, not 11).

    Parameters
    ----------
    epsilon : float
        Privacy budget, in ``(0, 709.78]`` (``e^eps`` a finite double).

    Returns
    -------
    int

    References
    ----------
    [PEM] section 2.2.2.
    """
    _, ee = _exp_epsilon(epsilon)
    x = ee + 1.0
    r = round(x)
    return int(r) if abs(x - r) <= 1e-9 * x else int(math.ceil(x))


def _resolve_d_prime(epsilon: float, d_prime) -> float:
    """The hash range as a float: the default, ``e^eps + 1`` for "real", or the given number."""
    if d_prime is None:
        return float(default_d_prime(epsilon))
    if isinstance(d_prime, str):
        if d_prime in REAL_D_PRIME:
            return math.exp(epsilon) + 1.0
        raise ValueError(f"d_prime must be None, 'real' (alias 'paper') or a number > 1, got {d_prime!r}")
    if isinstance(d_prime, bool) or not isinstance(d_prime, (Real, np.integer, np.floating)):
        raise TypeError(f"d_prime must be None, 'real' (alias 'paper') or a number > 1, got {d_prime!r}")
    d = float(d_prime)
    if not (math.isfinite(d) and d > 1):
        raise ValueError(f"d_prime must be a number > 1, got {d_prime!r}")
    return d


def olh_pq(epsilon: float, *, d_prime=None) -> tuple[float, float]:
    """OLH's support probabilities ``(p, q)`` (section 2.2.2).

    A report supports its user's value with probability
    ``p = e^eps / (e^eps + d' - 1)`` (GRR on ``[d']`` keeps the hash) and any
    other value with probability ``q = 1/d'`` (the hashes of two values
    collide).

    Parameters
    ----------
    epsilon : float
        Privacy budget, in ``(0, 709.78]``.
    d_prime : None, number > 1, or "real"
        ``None`` (default): the integer ``d' = ceil(e^eps + 1)``
        (:func:`default_d_prime`) the oracle uses.  A number: that ``d'``.
        ``"real"`` (alias ``"paper"``): the real ``d' = e^eps + 1``, i.e. the
        appendix's ``p = 1/2``, ``q = 1/(e^eps + 1)``.

    Returns
    -------
    (p, q) : tuple of float

    References
    ----------
    [PEM] section 2.2.2 and the appendix (proof of Proposition 1).
    """
    e, ee = _exp_epsilon(epsilon)
    d = _resolve_d_prime(e, d_prime)
    return ee / (ee + d - 1.0), 1.0 / d


def olh_variance(epsilon, n=1.0, *, d_prime=None):
    """Variance of OLH's count estimate of a value of frequency close to 0 (eqs. (2) and (3)).

    Parameters
    ----------
    epsilon : float or array
        Privacy budget (> 0).
    n : float or array, default 1
        Number of users (>= 1); ``n = 1`` gives the per-user factor.
    d_prime : None, number > 1, or "real"
        ``None`` (default) or a number: the exact ``n q (1 - q) / (p - q)^2``
        of the estimate ``(I - n q)/(p - q)`` (eq. (2)) with :func:`olh_pq`'s
        ``p``, ``q``.  ``"real"`` (alias ``"paper"``): the closed form
        ``4 e^eps / (e^eps - 1)^2 n`` of eq. (3), which is the exact formula
        at the real ``d' = e^eps + 1``.

    Returns
    -------
    float or ndarray

    References
    ----------
    [PEM] section 2.2.2, eqs. (2) and (3).
    """
    e = check_epsilons(epsilon)
    n = check_population(n)
    if isinstance(d_prime, str) and d_prime in REAL_D_PRIME:
        ee = np.exp(e)
        out = 4.0 * ee / (ee - 1.0) ** 2 * n  # eq. (3)
    else:
        p: float | np.ndarray
        q: float | np.ndarray
        if e.ndim == 0:
            p, q = olh_pq(float(e), d_prime=d_prime)
        else:
            pq = np.array([olh_pq(float(x), d_prime=d_prime) for x in e.ravel()]).reshape(*e.shape, 2)
            p, q = pq[..., 0], pq[..., 1]
        out = np.asarray(n * q * (1.0 - q) / (p - q) ** 2)  # Var[(I - n q)/(p - q)], eq. (2)
    return out[()] if out.ndim == 0 else out


def grr_pq(epsilon: float, d: int) -> tuple[float, float]:
    """GRR's probabilities ``p = e^eps/(e^eps + d - 1)`` (keep) and ``q = 1/(e^eps + d - 1)`` (each other value).

    Parameters
    ----------
    epsilon : float
        Privacy budget, in ``(0, 709.78]``.
    d : int
        Domain size (>= 2).

    Returns
    -------
    (p, q) : tuple of float

    References
    ----------
    [PEM] section 2.2.1.
    """
    _, ee = _exp_epsilon(epsilon)
    d = check_int(d, "d", 2)
    return ee / (ee + d - 1), 1.0 / (ee + d - 1)


def grr_variance(epsilon, d, n=1.0):
    """Variance of GRR's count estimate of a value of frequency close to 0, eq. (1).

    ``(d - 2 + e^eps) / (e^eps - 1)^2 * n``.

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

    Notes
    -----
    Where ``(e^eps - 1)^2`` overflows a double (``eps > 354.9``) the same
    quotient is taken in two divisions, so the result stays finite up to
    ``eps = 709.78``.

    References
    ----------
    [PEM] section 2.2.1, eq. (1).
    """
    e = check_epsilons(epsilon)
    d = np.asarray(d, dtype=float)
    if not np.all(np.isfinite(d)) or np.any(d < 2):
        raise ValueError(f"d must be a domain size >= 2, got {d!r}")
    n = check_population(n)
    ee = np.exp(e)
    with np.errstate(over="ignore"):
        square = (ee - 1.0) ** 2
    safe = np.isfinite(square)
    out = np.asarray(np.where(safe, (d - 2.0 + ee) / np.where(safe, square, 1.0),  # eq. (1)
                              (d - 2.0 + ee) / (ee - 1.0) / (ee - 1.0)) * n)
    return out[()] if out.ndim == 0 else out


def min_population(freq, epsilon, *, z: float = 3.0, d_prime=None):
    """Smallest ``n`` with ``freq * n >= z * std``: section 2.2's group-size example.

    Solves ``f n >= z sqrt(V n)`` where ``V = olh_variance(epsilon, 1, d_prime=d_prime)``:
    ``n >= (z/f)^2 V``.  The paper rounds ``sqrt(40/81) = 0.703`` to 0.7 and
    reports ``n >= 4,410,000`` for ``f = 0.1%``, ``e^eps = 10``; the unrounded
    bound is ``4,444,445``.

    Parameters
    ----------
    freq : float or array
        Frequency in ``(0, 1]``.
    epsilon : float
        Privacy budget (> 0).
    z : float, default 3
        Number of standard deviations.
    d_prime : None, number > 1, or "real"
        As in :func:`olh_variance`.

    Returns
    -------
    float or ndarray

    References
    ----------
    [PEM] section 2.2, "The importance of group size".
    """
    f = np.asarray(freq, dtype=float)
    if not np.all(np.isfinite(f)) or np.any(f <= 0) or np.any(f > 1):
        raise ValueError(f"freq must be in (0, 1], got {freq!r}")
    z = check_real(z, "z", lo=0.0, lo_open=True)
    v = olh_variance(epsilon, 1.0, d_prime=d_prime)
    out = np.asarray((z / f) ** 2 * v)
    return out[()] if out.ndim == 0 else out
