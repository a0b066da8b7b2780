"""The simulated users' randomness, identical whatever the batching (:meth:`HeavyHitterProtocol.privatize`).

This is the **seeded simulation** of many users (the book's runs): whoever
holds the seed recomputes every user's coins, so the seed is every simulated
user's secret.  A real device draws from the operating system instead
(:mod:`ldp.client`).

User ``i``'s randomness comes from two streams of her block of
:data:`NOISE_BLOCK` users, both children of the privatization's root
``SeedSequence`` (:func:`noise_root`), with spawn keys ``(PRIVATE, block)``
for her private coins and ``(PUBLIC, block)`` for the public parts of her
reports (the hash seeds she sends in the clear): the two are independent
streams, so the public seeds reveal nothing of the coins' stream.
Privatizing users ``0 .. n-1`` in batches of any sizes with the same ``rng``
gives exactly the reports of one batch.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from ..core import Plan
from ..validation import check_rng

__all__ = ["NOISE_BLOCK", "PRIVATE", "PUBLIC", "noise_root", "block_rng", "batch_users", "user_noise"]

#: first spawn-key entry of the streams of private coins and of public parts (:func:`block_rng`)
PRIVATE, PUBLIC = 0, 1


def noise_root(*, rng) -> np.random.SeedSequence:
    """The root of the users' private randomness for :meth:`HeavyHitterProtocol.privatize`.

    An int or a ``SeedSequence`` gives the same root every time (so batches
    privatized with the same ``rng`` fit together); a ``Generator`` gives a
    new child each call (its ``spawn``), as SPEC 7 intends.
    """
    g = check_rng(rng)
    try:
        root = g.spawn(1)[0].bit_generator.seed_seq
    except (TypeError, AttributeError):  # pragma: no cover - a bit generator without a SeedSequence
        root = None
    if isinstance(root, np.random.SeedSequence):
        return root
    return np.random.SeedSequence(g.integers(0, 2**63, size=4))  # pragma: no cover


def block_rng(root: np.random.SeedSequence, block: int, part: int = PRIVATE) -> np.random.Generator:
    """A stream of users ``block * NOISE_BLOCK ..``: their private coins (``part = PRIVATE``) or public parts.

    The ``SeedSequence`` of ``root``'s entropy with spawn key
    ``root.spawn_key + (part, block)``.
    """
    ss = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (int(part), int(block)),
                                pool_size=root.pool_size)
    return np.random.Generator(np.random.PCG64(ss))


def batch_users(users, size: int, n: int) -> np.ndarray:
    """Plan indices of a batch of ``size`` users, checked.

    Parameters
    ----------
    users : None, int or array_like of int
        As given to :meth:`~ldp.protocols.HeavyHitterProtocol.privatize`: ``None``
        for all ``n`` users, the first user's plan index, or one index per user.
    size : int
        Users in the batch.
    n : int
        Users in the plan.

    Returns
    -------
    numpy.ndarray
        ``int64`` plan indices.
    """
    if users is None:
        if size != n:
            raise ValueError(f"values holds {size} users but the plan is for n = {n} users; to privatize a batch "
                             "pass users= (the plan index of the batch's first user, or of every user)")
        return np.arange(n, dtype=np.int64)
    if isinstance(users, (Integral, np.integer)) and not isinstance(users, (bool, np.bool_)):
        first = int(users)
        if not 0 <= first <= n - size:
            raise ValueError(f"users (the plan index of the batch's first user) must be an integer in "
                             f"[0, n - len(values) = {n - size}] for a batch of {size} of n = {n} users, "
                             f"got {first}")
        return np.arange(first, first + size, dtype=np.int64)
    arr = np.asarray(users)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError("users must be None, an int (the first user's plan index) or a 1-D integer array "
                        f"of plan indices, got {type(users).__name__} of dtype {arr.dtype}")
    if arr.shape[0] != size:
        raise ValueError(f"users must give one plan index per value: {size} values, {arr.shape[0]} indices")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = int(arr.min() if arr.min() < 0 else arr.max())
        raise ValueError(f"users must be plan indices in [0, n = {n}), found {bad}")
    if np.unique(arr).shape[0] != size:
        raise ValueError("users lists a plan index twice; each user reports once")
    return arr


#: users per block of private randomness: user ``i``'s noise comes from the
#: stream of block ``i // NOISE_BLOCK`` (see :meth:`HeavyHitterProtocol.privatize`)
NOISE_BLOCK = 2**16


def user_noise(plan: Plan, users: np.ndarray, labels: np.ndarray, root: np.random.SeedSequence) -> list:
    """Each batch user's oracle randomness, identical whatever the batching.

    Block ``b`` of users (``b * NOISE_BLOCK`` to ``(b + 1) * NOISE_BLOCK - 1``)
    has its own two streams (:func:`block_rng`: private coins, public
    parts); from them, group by group and question by question, the
    randomness of all the block's users of the group is drawn in user order
    (the oracle's ``draw_noise``, e.g. :meth:`ldp.OLH.draw_noise`, with
    ``rng`` the private stream and ``public_rng`` the public one), and each
    batch user takes her entry.

    Parameters
    ----------
    plan : Plan
        The published plan.
    users : numpy.ndarray
        Plan indices of the batch's users, increasing.
    labels : numpy.ndarray
        Their groups.
    root : numpy.random.SeedSequence
        The privatization's root (:func:`noise_root`).

    Returns
    -------
    list
        ``noise[g][j]``: the tuple of per-user arrays (OLH: ``(seeds, keep, r)``)
        of the batch's users of group ``g`` (in user order) for the group's
        ``j``-th question.
    """
    G = plan.n_groups
    oracles = [[q.oracle() for q in qs] for qs in plan.questions]
    parts: list[list[list[tuple]]] = [[[] for _ in qs] for qs in plan.questions]
    every = plan.labels()
    blocks = users // NOISE_BLOCK
    cuts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1], True])
    for s, e in zip(cuts[:-1], cuts[1:]):
        b = int(blocks[s])
        lo, hi = b * NOISE_BLOCK, min((b + 1) * NOISE_BLOCK, plan.n_users)
        block_labels = every[lo:hi]
        cnt = np.bincount(block_labels, minlength=G)
        whole = e - s == hi - lo  # the batch holds every user of the block
        if not whole:
            order = np.argsort(block_labels, kind="stable")
            rank = np.empty(hi - lo, dtype=np.int64)
            rank[order] = np.arange(hi - lo) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            lab, rk = labels[s:e], rank[users[s:e] - lo]
        gen, pub = block_rng(root, b, PRIVATE), block_rng(root, b, PUBLIC)
        for g in range(G):
            pick = None if whole else rk[lab == g]
            for j, o in enumerate(oracles[g]):
                d = o.draw_noise(int(cnt[g]), rng=gen, public_rng=pub)
                parts[g][j].append(d if pick is None else tuple(a[pick] for a in d))
    return [[tuple(np.concatenate([d[i] for d in lst]) for i in range(len(lst[0]))) for lst in row]
            for row in parts]
