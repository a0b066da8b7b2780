"""The seeded split of the users into groups: the one rule of every plan and both engines.

:func:`assign_groups` shuffles the label vector (group ``g`` repeated
``group_sizes(n)[g]`` times) with Fisher-Yates driven by a PCG64 stream, so
every assignment with those sizes is equally likely; :meth:`ldp.core.Plan.labels`
runs it from the plan's public seed, and :func:`trace_positions` follows a
few positions back through the same shuffle without building the labels
(:meth:`ldp.core.Plan.group_of`, what a device computes).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from ..numeric import largest_remainder
from ..validation import check_int

__all__ = ["MAX_USERS", "group_sizes", "assign_groups", "trace_positions"]

#: the most users a plan can hold, ``2**32`` (about 4.3e9): the group assignment's Fisher-Yates shuffle
#: draws position ``j = floor(r (i + 1) / 2**64)`` with 32-bit halves, exact only while ``i + 1 <= 2**32``
MAX_USERS = 2**32


def group_sizes(n: int, fractions: Sequence[float]) -> tuple[int, ...]:
    """Deterministic group sizes: floors of ``n * fraction``, remainder by largest fractional part.

    Ties go to the earlier group (the rule of :meth:`ldp.analysis.PEMConfig.group_sizes`).
    Equal fractions give sizes differing by at most one.
    """
    return tuple(int(b) for b in largest_remainder(n, fractions))


@njit(cache=True)
def _shuffle(labels, raw, first):  # pragma: no cover - compiled
    # Fisher-Yates steps i = first + len(raw) - 1 down to first; raw[k] is step first + k's draw;
    # j = floor(raw * (i+1) / 2**64) computed exactly with 32-bit halves while i + 1 <= 2**32
    # (Lemire's multiply-shift, relative bias <= n / 2**64).
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for k in range(raw.shape[0] - 1, -1, -1):
        i = first + k
        r = raw[k]
        b = np.uint64(i + 1)
        t = (r >> s32) * b + (((r & m32) * b) >> s32)
        j = np.int64(t >> s32)
        tmp = labels[i]
        labels[i] = labels[j]
        labels[j] = tmp


@njit(cache=True)
def _trace(raw, first, pos):  # pragma: no cover - compiled
    # Positions followed back through steps first, first + 1, ... (raw[k] is step first + k's draw):
    # a step i > pos moves the content of j_i to i, so pos becomes i when j_i == pos;
    # the step i == pos sends it to j_i (steps i < pos never touch it).
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for k in range(raw.shape[0]):
        i = first + k
        r = raw[k]
        b = np.uint64(i + 1)
        t = (r >> s32) * b + (((r & m32) * b) >> s32)
        j = np.int64(t >> s32)
        for u in range(pos.shape[0]):
            if pos[u] == i:
                pos[u] = j
            elif pos[u] == j:
                pos[u] = i


#: random draws per chunk of the group assignment (32 MiB of them at a time)
_CHUNK = 2**22


def trace_positions(n: int, seed: int, positions: np.ndarray) -> np.ndarray:
    """Where the labels at ``positions`` were before :meth:`Plan.labels`' shuffle (seed ``seed``, ``n`` users).

    One pass over the shuffle's draws from the smallest position up, in
    chunks (``O(1)`` memory, ``O(n - min(positions))`` time): the initial
    position of each, whose label is the group whose block holds it.
    """
    pos = np.array(positions, dtype=np.int64, copy=True)
    if n <= 1 or not pos.size:
        return pos
    first = max(1, int(pos.min()))  # steps below every position move none of them
    bg = np.random.PCG64(seed)
    bg.advance(first - 1)  # draw k of the stream is the draw of step k + 1
    for lo in range(first, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        _trace(bg.random_raw(hi - lo), lo, pos)
    return pos


def assign_groups(n: int, fractions: Sequence[float], *, rng: np.random.Generator) -> np.ndarray:
    """Seeded random split of ``n`` users into groups (sizes from :func:`group_sizes`).

    Every assignment of users to groups with these sizes is equally likely
    (a Fisher-Yates shuffle of the label vector).  Used by every protocol and
    by both engines, so the same ``rng`` state gives the same groups.

    Parameters
    ----------
    n : int
        Number of users.
    fractions : sequence of float
        The groups' shares, as in :class:`Plan`.
    rng : numpy.random.Generator
        Stream of the shuffle (``n - 1`` raw 64-bit draws).

    Returns
    -------
    numpy.ndarray
        Group label of each user (``uint8`` or ``uint16``).

    Notes
    -----
    Step ``i`` (from ``n - 1`` down to 1) swaps positions ``i`` and
    ``floor(r_i (i + 1) / 2**64)``, ``r_i`` the ``i``-th raw 64-bit draw of
    ``rng``; with a PCG64 generator the draws are made in chunks from the
    last one down (``advance``), so the memory is the ``n`` labels, and
    ``rng`` ends as if ``n - 1`` draws had been made at once.
    """
    n = check_int(n, "n", 0, MAX_USERS)
    sizes = group_sizes(n, fractions)
    dt = np.uint8 if len(sizes) <= 256 else np.uint16
    labels = np.repeat(np.arange(len(sizes), dtype=dt), sizes)
    if n <= 1:
        return labels
    bg = rng.bit_generator
    if not isinstance(bg, np.random.PCG64) or n - 1 <= _CHUNK:
        _shuffle(labels, bg.random_raw(n - 1), 1)
        return labels
    start = bg.state
    for hi in range(n, 1, -_CHUNK):  # steps hi - 1 down to lo, their draws lo - 1 .. hi - 2
        lo = max(1, hi - _CHUNK)
        part = np.random.PCG64()
        part.state = start
        part.advance(lo - 1)
        _shuffle(labels, part.random_raw(hi - lo), lo)
    bg.advance(n - 1)
    return labels
