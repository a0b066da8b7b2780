"""Input checks shared by the whole package.

Every public entry point validates before doing any work, and every error
names the parameter and the allowed range (principle 5 of the design card).
"""
from __future__ import annotations

import math
import sys
from numbers import Integral, Real

import numpy as np

__all__ = ["check_epsilon", "check_epsilons", "check_int", "check_real", "check_fraction", "check_frequencies",
           "check_population", "check_pq", "check_rng", "EXP_MAX_EPSILON", "MIN_EPSILON"]

#: the largest epsilon whose e**epsilon is a finite double (about 709.78)
EXP_MAX_EPSILON = math.log(sys.float_info.max)
#: the smallest epsilon accepted, ``2**-50`` (about 8.9e-16): the smallest power of two at which every
#: oracle's ``p`` and ``q`` differ in float64.  Below it ``e**epsilon`` is so close to 1 that they round to
#: the same double for some oracle (GRR and OLH below ``2**-52``, OUE's ``q = 1/(e**eps + 1)`` below
#: ``2**-51``, CMS's flip probability ``1/(e**(eps/2) + 1)`` below ``7 * 2**-53``), and the estimate
#: ``(I - n q) / (p - q)`` divides by zero (``tests/test_input_errors.py`` checks both sides).
MIN_EPSILON = 2.0**-50
_MIN_WHY = (f"epsilon must be at least 2**-50 = {MIN_EPSILON:.3g}, the smallest power of two at which every "
            "oracle's support probabilities p and q differ in float64; below it e**epsilon rounds so close to 1 "
            "that p = q and the estimates divide by zero")


def check_epsilon(epsilon, name: str = "epsilon", *, hi: float | None = None, why: str = "") -> float:
    """A privacy budget: a finite real number, at least :data:`MIN_EPSILON` (and at most ``hi`` when given).

    :data:`MIN_EPSILON` is ``2**-50``, about ``8.9e-16``: the smallest power
    of two at which the support probabilities ``p`` and ``q`` of every oracle
    differ in float64 (below it some oracle has ``p == q`` and its estimates
    divide by zero); the error for a smaller positive value says so.

    Parameters
    ----------
    epsilon : real
        The value to check.
    name : str
        Parameter name used in the error message.
    hi : float, optional
        Largest accepted value (inclusive), e.g. the numeric limit of an
        oracle; the message then states it and, with ``why``, the reason.
    why : str
        Why ``hi`` is the limit (appended to the message in parentheses).
    """
    rng = "> 0" if hi is None else f"in (0, {hi:.6g}]"
    reason = f" ({why})" if why and hi is not None else ""
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real):
        raise TypeError(f"{name} must be a finite real number {rng}{reason}, got {epsilon!r}")
    e = float(epsilon)
    if not math.isfinite(e) or e <= 0 or (hi is not None and e > hi):
        raise ValueError(f"{name} must be a finite real number {rng}{reason}, got {epsilon!r}")
    if e < MIN_EPSILON:
        raise ValueError(_MIN_WHY.replace("epsilon must", f"{name} must", 1) + f"; got {epsilon!r}")
    return e


def check_epsilons(epsilon, name: str = "epsilon") -> np.ndarray:
    """Privacy budget(s) for vectorised formulas: a scalar or array of finite reals > 0.

    A scalar goes through :func:`check_epsilon`; an array must be non-empty
    with every entry finite and > 0.  Returns a float array (0-d for a scalar).
    """
    if np.isscalar(epsilon):
        return np.asarray(check_epsilon(epsilon, name))
    a = np.asarray(epsilon, dtype=float)
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must be finite real numbers > 0, got {epsilon!r}")
    if np.any(a < MIN_EPSILON):
        raise ValueError(_MIN_WHY.replace("epsilon must", f"{name} must", 1) + f"; got {epsilon!r}")
    return a


def check_population(n, name: str = "n") -> np.ndarray:
    """Population size(s) for the analysis: real numbers >= 1, scalar or array.

    Real (not only integer) sizes are allowed, so that ``n / g`` users per
    group can be used as the analysis does.  Returns a float array (0-d for a
    scalar).
    """
    if isinstance(n, bool):
        raise TypeError(f"{name} must be a number >= 1, got {n!r}")
    try:
        a = np.asarray(n, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number >= 1, got {n!r}") from None
    if not np.all(np.isfinite(a)) or np.any(a < 1):
        raise ValueError(f"{name} must be a number >= 1, got {n!r}")
    return a


def check_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer in ``[lo, hi]`` (either bound may be open-ended with None)."""
    rng = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer in {rng}, got {value!r}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an integer in {rng}, got {v}")
    return v


def check_real(value, name: str, *, lo: float | None = None, lo_open: bool = False) -> float:
    """A finite real number, at least ``lo`` (greater than ``lo`` when ``lo_open``)."""
    bound = "" if lo is None else f" {'>' if lo_open else '>='} {lo:g}"
    msg = f"{name} must be a finite real number{bound}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(msg)
    v = float(value)
    if not math.isfinite(v) or (lo is not None and (v < lo or (lo_open and v == lo))):
        raise ValueError(msg)
    return v


def check_pq(p, q, *, closed: bool = False) -> tuple[float, float]:
    """Support probabilities of a frequency oracle: ``p > q``, both in (0, 1).

    ``p`` is the probability that a report supports its user's value, ``q``
    that it supports another given value.  With ``closed=True`` the ends 0
    and 1 are allowed (formulas that do not divide by a standard deviation).
    """
    where = "[0, 1]" if closed else "(0, 1)"
    for nm, v in (("p", p), ("q", q)):
        if isinstance(v, bool) or not isinstance(v, Real):
            raise ValueError(f"{nm} must be a probability in {where}, got {v!r}")
        x = float(v)
        if not (0 <= x <= 1 if closed else 0 < x < 1):
            raise ValueError(f"{nm} must be a probability in {where}, got {v!r}")
    if not float(p) > float(q):
        raise ValueError(f"p must exceed q, got p = {p!r}, q = {q!r}")
    return float(p), float(q)


def check_fraction(value, name: str, *, open_low: bool = True, open_high: bool = True) -> float:
    """A real number in (0, 1), with closed ends on request."""
    lo, hi = ("(" if open_low else "["), (")" if open_high else "]")
    msg = f"{name} must be a real number in {lo}0, 1{hi}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(msg)
    v = float(value)
    if not math.isfinite(v) or v < 0 or v > 1 or (open_low and v == 0) or (open_high and v == 1):
        raise ValueError(msg)
    return v


def check_frequencies(freqs, name: str = "frequencies", *, atol: float = 1e-9) -> np.ndarray:
    """A probability vector: finite, non-negative, summing to 1 (within atol)."""
    f = np.asarray(freqs, dtype=float)
    if f.ndim != 1 or f.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D frequency vector")
    if not np.all(np.isfinite(f)) or np.any(f < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    s = f.sum()
    if abs(s - 1.0) > atol:
        raise ValueError(f"{name} must sum to 1 (a distribution), sums to {s:.6g}")
    return f


_RNG_KINDS = ("None, a non-negative integer seed (or a sequence of them), a numpy SeedSequence, BitGenerator "
              "or Generator")


def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """SPEC 7: None, a non-negative int seed, a SeedSequence, a BitGenerator or a Generator.

    A ``SeedSequence`` is copied first, so spawning inside a call never
    advances the caller's sequence: passing the same ``SeedSequence`` twice
    gives the same result, like passing the same int seed.  A ``Generator``
    is used as it is (its state advances, as SPEC 7 intends).  A non-empty
    sequence of non-negative ints is a seed too (numpy's own rule).

    Raises
    ------
    TypeError
        A ``bool`` (``True`` is not the seed 1), a float, a string or any
        other object; the message names ``name`` and the accepted kinds.
    ValueError
        A negative seed.
    """
    if isinstance(rng, (np.random.Generator, np.random.BitGenerator)) or rng is None:
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"{name} must be {_RNG_KINDS}; got the bool {rng!r} (True is not a seed)")
    if isinstance(rng, Integral):
        if int(rng) < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {int(rng)}")
    elif not isinstance(rng, np.random.SeedSequence):
        seq = np.asarray(rng) if isinstance(rng, (list, tuple, np.ndarray)) else None
        if seq is None or seq.ndim != 1 or seq.size == 0 or seq.dtype.kind not in "iu":
            raise TypeError(f"{name} must be {_RNG_KINDS}; got {rng!r} ({type(rng).__name__})")
        if seq.min() < 0:
            raise ValueError(f"{name} as a sequence of seeds must hold non-negative integers, got {rng!r}")
    if isinstance(rng, np.random.SeedSequence):
        rng = np.random.SeedSequence(rng.entropy, spawn_key=rng.spawn_key, pool_size=rng.pool_size,
                                     n_children_spawned=rng.n_children_spawned)
    return np.random.default_rng(rng)
