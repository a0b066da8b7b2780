"""Sizing a protocol within its query limit: bit ranges, integer roots, the parameter that fits."""
from __future__ import annotations

import math
from collections.abc import Callable

from ..validation import check_int

__all__ = ["split_bits", "int_root", "ceil_pow15", "fit_query_limit"]


def split_bits(total: int, parts: int, start: int = 0) -> list[tuple[int, int]]:
    """``parts`` contiguous bit ranges covering ``[start, start + total)``, lengths differing by <= 1 (longer first).

    Parameters
    ----------
    total : int
        Bits to cover.
    parts : int
        Number of ranges.
    start : int
        First bit.

    Returns
    -------
    list of (int, int)
        ``(start, stop)`` of each range.
    """
    base, extra = divmod(total, parts)
    out, s = [], start
    for i in range(parts):
        L = base + (1 if i < extra else 0)
        out.append((s, s + L))
        s += L
    return out


def int_root(x: int, g: int) -> int:
    """Largest integer ``c >= 0`` with ``c**g <= x``."""
    if x <= 0:
        return 0
    c = int(round(x ** (1.0 / g)))
    while c > 0 and c**g > x:
        c -= 1
    while (c + 1) ** g <= x:
        c += 1
    return c


def ceil_pow15(k: int) -> int:
    """``ceil(k**1.5)`` exactly."""
    x = k**3
    r = math.isqrt(x)
    return r if r * r == x else r + 1


def fit_query_limit(protocol, name: str, given: int | None, lo: int, hi: int, cost: Callable[[int], int], *,
                    prefer: Callable = max, about: str = "", search_cost: Callable[[int], int] | None = None) -> int:
    """A size parameter of ``protocol`` within its ``query_limit``.

    Parameters
    ----------
    protocol : HeavyHitterProtocol
        Its ``name``, ``m`` and ``query_limit`` (for the check and the messages).
    name : str
        The parameter (e.g. ``"block_bits"``).
    given : int or None
        The user's value, checked to be in ``[lo, hi]`` and to fit; ``None``
        to choose one.
    lo, hi : int
        The allowed range.
    cost : callable
        Oracle queries made with ``name = v``.
    prefer : callable
        Which of the values that fit to choose (``max`` or ``min``).
    about : str
        The rest of the configuration, for error messages (e.g. ``", k = 16"``).
    search_cost : callable, optional
        A stricter cost for the choice (SFP keeps half the limit for its
        candidates); default ``cost``.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        When ``given`` or every value needs more queries; the message names the smallest limit that works.
    """
    limit = protocol.query_limit
    if given is not None:
        v = check_int(given, name, lo, hi)
        if cost(v) > limit:
            raise ValueError(f"query_limit = {limit} is too small for {protocol.name} with {name} = {v}{about}: "
                             f"it needs {cost(v)}")
        return v
    costs = {v: (search_cost or cost)(v) for v in range(lo, hi + 1)}
    ok = [v for v, c in costs.items() if c <= limit]
    if not ok:
        raise ValueError(f"query_limit = {limit} is too small for {protocol.name} with m = {protocol.m}{about}: "
                         f"the smallest limit that works is {min(costs.values())}")
    return prefer(ok)
