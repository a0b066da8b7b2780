"""Input checks shared by the whole package.

Every public entry point validates before doing any work, and every error
names the parameter and the allowed range (principle 5 of the design card).
"""
from __future__ import annotations

import math
import sys
from numbers import Integral, Real

import numpy as np

__all__ = ["check_epsilon", "check_int", "check_fraction", "check_frequencies", "check_rng", "EXP_MAX_EPSILON"]

#: the largest epsilon whose e**epsilon is a finite double (about 709.78)
EXP_MAX_EPSILON = math.log(sys.float_info.max)


def check_epsilon(epsilon, name: str = "epsilon", *, hi: float | None = None, why: str = "") -> float:
    """A privacy budget: a finite real number > 0 (and at most ``hi`` when given).

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
    return e


def check_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer in ``[lo, hi]`` (either bound may be open-ended with None)."""
    rng = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer in {rng}, got {value!r}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an integer in {rng}, got {v}")
    return v


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


def check_rng(rng) -> np.random.Generator:
    """SPEC 7: None, an int seed, a SeedSequence, a BitGenerator or a Generator.

    A ``SeedSequence`` is copied first, so spawning inside a call never
    advances the caller's sequence: passing the same ``SeedSequence`` twice
    gives the same result, like passing the same int seed.  A ``Generator``
    is used as it is (its state advances, as SPEC 7 intends).
    """
    if isinstance(rng, np.random.SeedSequence):
        rng = np.random.SeedSequence(rng.entropy, spawn_key=rng.spawn_key, pool_size=rng.pool_size,
                                     n_children_spawned=rng.n_children_spawned)
    return np.random.default_rng(rng)
