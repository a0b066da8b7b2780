"""The user's side of a deployment: one value, the operating system's randomness, a few bytes.

:func:`report` is what a device runs: it reads the published plan, finds the
user's group from her plan index, answers her group's questions about her
value, randomizes each answer with the question's oracle, and returns the
wire bytes (:mod:`ldp.client.wire`).  All its randomness comes from the
operating system's CSPRNG (:class:`ldp.randomness.SystemCoins`, i.e.
:func:`os.urandom`, the source of :mod:`secrets`): there is no seed argument
and nothing anyone else holds can recompute the coins.  The public parts of
a report (the hash seeds it sends in the clear) are drawn separately from
the private coins (two sources, each fresh OS randomness).

:func:`report_many` does the same for many devices at once, vectorised, with
the same guarantees (every user's coins fresh from the OS): for simulating a
deployment end to end, not a substitute for the seeded simulation
(:meth:`ldp.protocols.HeavyHitterProtocol.privatize`), which the book's
reproducible runs need.

What a device refuses
---------------------
A device protects its user against the server as well: before it computes
anything it refuses

* a plan whose budget is above the device's ceiling: the most any group of
  the plan spends (the sum of its questions' budgets; a bare oracle's
  ``epsilon``) must be at most ``max_epsilon``, :data:`DEFAULT_MAX_EPSILON`
  (``4.0``: one report then makes a value at most ``e^4 = 55`` times likelier
  than another) unless the device's owner sets another ceiling;
* a plan it cannot check: not a plan, JSON above :data:`ldp.core.MAX_PLAN_BYTES`
  or nested too deep, a plan object that fails the checks a published plan
  passes (:meth:`ldp.core.Plan.from_dict`: a group spending more than the
  plan's declared budget, an unknown group assignment rule or oracle, ...);
* FLH pools beyond ``max_pool_size`` functions, :data:`DEFAULT_MAX_POOL_SIZE`
  (``2**16``, sixteen times the default pool) unless set otherwise (a report
  needs only its own member of the pool, so the device's cost does not grow
  with the pool; the limit bounds what a plan may claim).

Each refusal is a ``ValueError`` naming the parameter and its range.

What a device computes and what it costs
----------------------------------------
Her group: :meth:`ldp.core.Plan.group_of`, ``O(1)`` memory but ``O(n - i)``
time for user ``i`` (it follows her position through the plan's seeded
shuffle); computed once per plan.  Then for each question of her group one
hash of her value and a handful of random bytes (a CMS report of width
``w``: about ``w`` bytes of OS randomness).
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ..core import Plan, PlanError
from ..oracles.base import FrequencyOracle
from ..oracles.flh import FLH, MAX_POOL_SIZE
from ..oracles.hashed import HashedOracle
from ..randomness import SystemCoins
from ..validation import check_int
from ..values import as_values, encode
from . import wire

__all__ = ["report", "report_many", "DEFAULT_MAX_EPSILON", "DEFAULT_MAX_POOL_SIZE"]

#: the device's ceiling on a plan's budget unless its owner sets another (``max_epsilon=``)
DEFAULT_MAX_EPSILON = 4.0
#: the largest FLH pool a device accepts unless its owner sets another (``max_pool_size=``)
DEFAULT_MAX_POOL_SIZE = 2**16


def report(plan, value, *, user, max_epsilon: float = DEFAULT_MAX_EPSILON,
           max_pool_size: int = DEFAULT_MAX_POOL_SIZE) -> bytes:
    """One user's report, as the bytes her device sends: the device's function.

    Parameters
    ----------
    plan : Plan, str or FrequencyOracle
        The published plan (a :class:`ldp.core.Plan` or its JSON,
        :meth:`~ldp.core.Plan.to_json`), or a frequency oracle for a
        deployment of the oracle alone.
    value : int, str or bytes
        Her value: an integer in ``[0, 2**m)``, or (when the plan's ``m`` is a
        multiple of 8) a string or bytes of at most ``m / 8`` bytes, encoded
        as :func:`ldp.encode` does (UTF-8, padded with spaces).  A GRR or OUE
        oracle takes an integer in ``[0, domain_size)``.
    user : int
        Her plan index, in ``[0, n)`` (the server assigns it).
    max_epsilon : float, keyword-only
        The device's ceiling on the plan's budget (module notes), a finite
        number > 0; default :data:`DEFAULT_MAX_EPSILON`.
    max_pool_size : int, keyword-only
        The largest FLH pool the device accepts, 1 to ``2**24``; default
        :data:`DEFAULT_MAX_POOL_SIZE`.

    Returns
    -------
    bytes
        The wire report (:mod:`ldp.client.wire`): different on every call,
        since every coin comes from the operating system.

    Raises
    ------
    ValueError
        A plan above the ceiling, beyond the pool limit, or one the device
        cannot check (module notes), before anything is computed; a bad
        value or user index.

    Examples
    --------
    >>> import ldp
    >>> from ldp.client import report
    >>> plan = ldp.PEM(2.0, k=4, m=16).plan(1000, rng=1)
    >>> r = report(plan.to_json(), 12345, user=7)
    >>> len(r), r != report(plan.to_json(), 12345, user=7)
    (36, True)
    """
    if isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(f"value must be one value (an int, str or bytes), got {type(value).__name__}; "
                        f"use report_many for several")
    return report_many(plan, [value], users=[user], max_epsilon=max_epsilon, max_pool_size=max_pool_size)[0]


def report_many(plan, values, *, users, max_epsilon: float = DEFAULT_MAX_EPSILON,
                max_pool_size: int = DEFAULT_MAX_POOL_SIZE) -> list[bytes]:
    """The reports of many devices at once (simulated, each with its own OS randomness), vectorised.

    Parameters
    ----------
    plan : Plan, str or FrequencyOracle
        As for :func:`report`.
    values : sequence of int, str or bytes, or numpy.ndarray
        One value per device (as :func:`report` takes them; a canonical
        ``uint64`` array of :mod:`ldp.values` works too).
    users : array_like of int
        Each device's plan index.  The same index may appear more than once
        (independent reports of one user, e.g. for a privacy audit); a server
        refuses the second.
    max_epsilon, max_pool_size : keyword-only
        The devices' ceiling and pool limit, as for :func:`report`.

    Returns
    -------
    list of bytes
        One wire report per value, in order.
    """
    t = _protected_target(plan, max_epsilon, max_pool_size)
    u = _users(users, t)
    vals = _values(t, values)
    if vals.shape[0] != u.shape[0]:
        raise ValueError(f"users must give one plan index per value: {vals.shape[0]} values, {u.shape[0]} indices")
    groups = t.group_of(u)
    out: list[bytes] = [b""] * u.shape[0]
    for g in np.unique(groups):
        g = int(g)
        where = np.flatnonzero(groups == g)
        reports = []
        for j, o in enumerate(t.oracles[g]):
            answers = _answers(t, g, j, vals[where])
            noise = o.draw_noise(where.size, rng=SystemCoins(), public_rng=SystemCoins())
            reports.append(o.apply_noise(answers, noise))
        for i, b in zip(where, wire.encode_reports(t.source, u[where], g, reports)):
            out[int(i)] = b
    return out


def _protected_target(plan, max_epsilon, max_pool_size) -> wire.Target:
    """The plan's :class:`wire.Target`, once the device has checked the plan against its limits (module notes)."""
    if isinstance(max_epsilon, bool) or not isinstance(max_epsilon, Real) or not math.isfinite(max_epsilon) \
            or max_epsilon <= 0:
        raise ValueError(f"max_epsilon must be a finite number > 0 (the device's ceiling on a plan's budget), got "
                         f"{max_epsilon!r}")
    max_pool_size = check_int(max_pool_size, "max_pool_size", 1, MAX_POOL_SIZE)
    if isinstance(plan, Plan) and not plan.__dict__.get("_checked"):
        try:  # what a published plan passes; a plan made in this process may never have been checked
            Plan.from_dict(plan.to_dict())
        except PlanError as err:
            raise ValueError(f"the device cannot check this plan, so it does not report: {err}") from None
    t = wire.target(plan)
    if isinstance(t.source, Plan):
        object.__setattr__(t.source, "_checked", True)  # from_json or the check above: once per plan object
        spends = [math.fsum(q.epsilon for q in qs) for qs in t.source.questions]
        g = int(np.argmax(spends))
        eps, who = spends[g], f"spent by each user of group {g}"
        pool = max((q.pool_size for qs in t.source.questions for q in qs), default=0)
    else:
        eps, who = float(t.source.epsilon), "the oracle's"
        pool = t.source.pool_size if isinstance(t.source, FLH) else 0
    if eps > max_epsilon:
        raise ValueError(f"the plan's epsilon = {eps!r} ({who}) is above this device's ceiling max_epsilon = "
                         f"{max_epsilon!r}: the device reports only under plans with epsilon in (0, {max_epsilon!r}]; "
                         f"its owner may set another ceiling (max_epsilon=)")
    if pool > max_pool_size:
        raise ValueError(f"the plan's FLH pool_size = {pool} is beyond this device's max_pool_size = "
                         f"{max_pool_size}: the device accepts pools of [1, {max_pool_size}] hash functions; its "
                         f"owner may set another limit (max_pool_size=)")
    return t


def _users(users, t: wire.Target) -> np.ndarray:
    arr = np.asarray(users)
    if isinstance(users, (bool, np.bool_)) or arr.dtype.kind not in "iu" or arr.ndim > 1:
        raise TypeError(f"users must be plan indices (integers in [0, {t.n})), got {users!r:.80}")
    arr = arr.reshape(-1)
    if arr.size == 0:
        raise ValueError("users is empty: at least one value and one plan index are required")
    if arr.dtype.kind == "i" and arr.min() < 0 or int(arr.max()) >= t.n:
        bad = int(arr.min()) if arr.dtype.kind == "i" and arr.min() < 0 else int(arr.max())
        raise ValueError(f"users must be plan indices in [0, n = {t.n}), found {bad}")
    return arr.astype(np.int64)


def _values(t: wire.Target, values) -> np.ndarray:
    """The values as the plan's canonical ``m``-bit array (or a GRR/OUE oracle's indices)."""
    src = t.source
    if isinstance(values, (str, bytes)):
        raise TypeError("values must be a sequence of values; use report() for one value")
    if isinstance(src, FrequencyOracle) and not isinstance(src, HashedOracle):
        return src.check_values(values)  # GRR, OUE: integers in [0, domain_size)
    m = src.m
    if isinstance(values, np.ndarray):
        return as_values(values, m, name="values")
    seq = list(values)
    if seq and all(isinstance(v, (str, bytes, bytearray)) for v in seq):
        if m % 8:
            raise ValueError(f"string values need a plan whose m is a multiple of 8 bits (bytes); this plan has "
                             f"m = {m}: give integers in [0, 2**{m})")
        return encode(seq, m // 8)
    if any(isinstance(v, (str, bytes, bytearray)) for v in seq):
        raise TypeError("values must be all integers or all strings/bytes, not a mix")
    return as_values(seq, m, name="values")


def _answers(t: wire.Target, g: int, j: int, values: np.ndarray) -> np.ndarray:
    if isinstance(t.source, Plan):
        return t.source.questions[g][j].answer(values, t.source.m)
    return values
