"""Fake users of a heavy-hitter protocol: who they are, what they target, what they send.

* :func:`fake_reports` -- the reports of fake users at given plan indices, for
  any protocol of :mod:`ldp.protocols` and any oracle its questions use: a
  :class:`ldp.protocols.ProtocolReports` that merges with the honest users'
  batches (:meth:`~ldp.protocols.ProtocolReports.concat`) like any batch;
* :func:`fake_users` -- which plan indices the fake users hold: where the plan
  puts them (``placement="plan"``: any accounts, so the public group
  assignment decides their groups) or in the groups they choose
  (``placement="chosen"``: a plan that lets users pick their group, or an
  attacker with accounts to spare);
* :func:`fresh_targets` and :func:`lookalike_targets` -- values to plant.

Each fake user answers every question of her group (:class:`ldp.protocols.Plan`)
with a crafted report (:func:`ldp.attacks.crafting.craft`) for the targets'
answers to that question: PEM's prefixes, SPM's segments, MCM's and SFP's
(hash, block) pairs, TreeHist's prefixes, and the whole value.  With
``kind="input"`` she instead holds one target (the targets in turn) and sends
what the protocol's honest client sends for it: each question's oracle
randomizing her target's answer (the reports of
:meth:`~ldp.protocols.HeavyHitterProtocol.privatize`, drawn per batch rather
than per block of users).
"""
from __future__ import annotations

import numpy as np

from ..client import encode_protocol_reports
from ..core import Dataset, Plan, ProtocolReports, Question
from ..protocols import PEM, HeavyHitterProtocol, TreeHist
from ..validation import check_fraction, check_int, check_rng
from ..values import MAX_BITS, as_values, match_sorted, n_words, sort_unique
from .crafting import check_kind, craft

__all__ = ["fake_reports", "fake_wire", "fake_users", "fresh_targets", "lookalike_targets", "random_values",
           "PLACEMENTS", "group_weights", "placement_order"]

#: where fake users sit: the plan's groups, the groups they choose, or every group at exactly its share
PLACEMENTS = ("plan", "chosen", "spread")


def _targets(protocol: HeavyHitterProtocol, targets, rng: np.random.Generator) -> np.ndarray:
    """Targets given (``m``-bit values, duplicates merged) or drawn (an int: that many uniform values)."""
    if isinstance(targets, (int, np.integer)) and not isinstance(targets, (bool, np.bool_)):
        r = check_int(targets, "targets", 1, 2**20)
        return fresh_targets(protocol.m, r, rng=rng)
    vals = as_values(targets, protocol.m, name="targets")
    return sort_unique(vals)


def random_values(m: int, count: int, *, rng=None) -> np.ndarray:
    """``count`` uniform ``m``-bit values (canonical representation of :mod:`ldp.values`, duplicates possible)."""
    m = check_int(m, "m", 1, MAX_BITS)
    rng = check_rng(rng)
    W = n_words(m)
    raw = rng.integers(0, 2**64, size=(count, W), dtype=np.uint64)
    top = m - 64 * (W - 1)  # bits of word 0
    if top < 64:
        raw[:, 0] &= np.uint64((1 << top) - 1)
    return raw[:, 0].copy() if W == 1 else raw


def fresh_targets(m: int, r: int, *, data: Dataset | None = None, rng=None) -> np.ndarray:
    """``r`` distinct uniform ``m``-bit values that nobody in ``data`` holds (targets to plant).

    Parameters
    ----------
    m : int
        Bits per value.
    r : int
        Number of targets, at most ``2**m`` minus the values ``data`` holds.
    data : Dataset, optional
        Values to avoid.
    rng : None, int, SeedSequence, BitGenerator or Generator

    Returns
    -------
    numpy.ndarray
        Sorted, canonical ``m``-bit values.
    """
    m = check_int(m, "m", 1, MAX_BITS)
    r = check_int(r, "r", 1, 2**20)
    held = 0 if data is None else data.n_distinct
    if m <= 40 and r > 2**m - held:
        raise ValueError(f"r must be at most 2**m - (values held) = {2**m - held}, got {r}")
    rng = check_rng(rng)
    out = random_values(m, 0, rng=rng)
    while out.shape[0] < r:
        draw = random_values(m, 2 * r, rng=rng)
        if data is not None:
            draw = draw[match_sorted(data.distinct, draw) < 0]  # the distinct values are sorted
        out = sort_unique(np.concatenate([out, draw]))
    if out.shape[0] > r:
        out = sort_unique(out[np.sort(rng.choice(out.shape[0], r, replace=False))])
    return out


def lookalike_targets(data: Dataset, r: int, *, keep_bits: int, rng=None) -> np.ndarray:
    """Targets that share their first ``keep_bits`` bits with one of ``data``'s ``r`` most frequent values.

    Target ``i`` is the ``i``-th most frequent value with its last
    ``m - keep_bits`` bits replaced by uniform bits, and held by nobody: a
    look-alike (``google`` and ``googIe``).  In PEM every prefix of length up to
    ``keep_bits`` is a popular value's, so its rounds keep it for free.

    Parameters
    ----------
    data : Dataset
        ``m <= 64``.
    r : int
        Number of targets, at most the number of distinct values.
    keep_bits : int
        Bits shared, ``0 <= keep_bits < m``.
    rng : None, int, SeedSequence, BitGenerator or Generator

    Returns
    -------
    numpy.ndarray
        ``uint64``, in the order of the values they imitate.
    """
    m = check_int(data.m, "data.m", 1, 64)
    r = check_int(r, "r", 1, data.n_distinct)
    keep = check_int(keep_bits, "keep_bits", 0, m - 1)
    rng = check_rng(rng)
    low = m - keep
    mask = np.uint64((1 << low) - 1) if low < 64 else np.uint64(2**64 - 1)
    out = []
    for v in data.ranked_values[:r]:
        while True:
            t = (np.uint64(v) & ~mask) | (rng.integers(0, 2**64, dtype=np.uint64) & mask)
            if not np.isin(t, data.distinct).item() and t not in out:
                out.append(t)
                break
    return np.array(out, dtype=np.uint64)


def group_weights(protocol: HeavyHitterProtocol, plan: Plan, targets, *, popular=None) -> np.ndarray:
    """The share of fake users an attacker who chooses her group puts in each group.

    Proportional to the groups' sizes, except that a group gets none when
    every question it answers is won without fake users:

    * its answer for every target is the answer of a ``popular`` value (a
      look-alike's prefix that a frequent value shares: kept anyway);
    * or it is a prefix step that keeps every candidate it tests (PEM's
      round ``i`` when ``|D_i| <= |C_i|``; TreeHist's levels with at most
      ``min_keep`` prefixes).

    Parameters
    ----------
    protocol : HeavyHitterProtocol
    plan : Plan
        The published plan.
    targets : array_like
        The targets (``m``-bit values).
    popular : array_like, optional
        Values the attacker knows to be frequent (e.g. a previous release).

    Returns
    -------
    numpy.ndarray
        One weight per group, summing to 1.
    """
    protocol.check_plan(plan)
    t = as_values(targets, protocol.m, name="targets")
    pop = None if popular is None else as_values(popular, protocol.m, name="popular")
    free = np.array([all(_won(protocol, plan, g, q, t, pop) for q in qs) for g, qs in enumerate(plan.questions)])
    w = np.asarray(plan.fractions, dtype=float) * ~free
    if w.sum() == 0:  # nothing to win: the plan's shares
        w = np.asarray(plan.fractions, dtype=float)
    return w / w.sum()


def _won(protocol, plan: Plan, g: int, q: Question, targets: np.ndarray, popular) -> bool:
    """Whether group ``g``'s step for question ``q`` keeps the targets' answers without fake users."""
    if popular is not None:
        if np.isin(_keys(q.answer(targets, protocol.m)), _keys(q.answer(popular, protocol.m))).all():
            return True
    if isinstance(protocol, PEM) and not q.channels and q.stop < protocol.m:
        c = protocol.config(plan.n_users)
        i = list(c.prefix_lengths).index(q.stop)
        tested = 1 << q.stop if i == 0 else plan.params["cand_sizes"][i - 1] << c.etas[i]
        return tested <= plan.params["cand_sizes"][i]
    if isinstance(protocol, TreeHist) and q.is_prefix and q.stop < protocol.m:
        return (1 << q.stop) <= protocol.min_keep
    return False


def _keys(values: np.ndarray) -> np.ndarray:
    return values if values.ndim == 1 else np.ascontiguousarray(values).view(f"V{values.shape[1] * 8}").ravel()


def fake_users(plan: Plan, count, *, placement: str = "plan", weights=None, rng=None) -> np.ndarray:
    """Plan indices of ``count`` fake users.

    Parameters
    ----------
    plan : Plan
        The published plan (made for ``n`` users).
    count : int or float
        Number of fake users, or a fraction of ``n`` in (0, 1).
    placement : {"plan", "chosen", "spread"}
        ``"plan"``: uniformly random indices, so the plan's public group
        assignment decides their groups, as for any user.  ``"chosen"``: the
        attacker picks her groups: exactly ``weights`` of the fake users (by
        largest remainder) in each group, at random indices of that group.
        ``"spread"``: every group at exactly its share of the plan
        (``plan.fractions``, whatever ``weights``): each step's estimates of a
        target rise alike, so no group's counts stand out against another's
        (what :func:`ldp.attacks.consistency_check` compares).
    weights : array_like, optional
        With ``"chosen"``: the share of each group (default
        :func:`group_weights`' proportional split, ``plan.fractions``).
    rng : None, int, SeedSequence, BitGenerator or Generator

    Returns
    -------
    numpy.ndarray
        ``int64`` plan indices, increasing.
    """
    n = plan.n_users
    if isinstance(count, (float, np.floating)):
        count = int(round(check_fraction(float(count), "count") * n))
    count = check_int(count, "count", 0, n)
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
    rng = check_rng(rng)
    return np.sort(placement_order(plan, placement, weights=weights, rng=rng)[:count])


def placement_order(plan: Plan, placement: str = "plan", *, weights=None, rng=None) -> np.ndarray:
    """Plan indices in the order fake users take them: any prefix of it is a placement of that size.

    Parameters
    ----------
    plan : Plan
    placement : {"plan", "chosen", "spread"}
        As for :func:`fake_users`.
    weights : array_like, optional
        With ``"chosen"``: each group's share (default ``plan.fractions``).
    rng : None, int, SeedSequence, BitGenerator or Generator

    Returns
    -------
    numpy.ndarray
        ``int64`` plan indices: all ``n`` of them with ``"plan"``; with
        ``"chosen"`` and ``"spread"`` as many as the groups hold at these shares.
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
    rng = check_rng(rng)
    n = plan.n_users
    if placement == "plan":
        return rng.permutation(n).astype(np.int64)
    G = plan.n_groups
    w = np.asarray(plan.fractions if weights is None or placement == "spread" else weights, dtype=float)
    if w.shape != (G,) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError(f"weights must be {G} non-negative numbers (one per group) with a positive sum")
    w = w / w.sum()
    labels = plan.labels()
    members = [rng.permutation(np.flatnonzero(labels == g)) for g in range(G)]
    # the k-th member of group g takes position key (k + 1/2) / w_g (Sainte-Lague's divisors): every prefix
    # of the order holds each group's share w_g of its length, give or take one
    keys = [(np.arange(len(x)) + 0.5) / w[g] for g, x in enumerate(members) if w[g] > 0]
    who = [x for g, x in enumerate(members) if w[g] > 0]
    key = np.concatenate(keys)
    order = np.argsort(key, kind="stable")
    limit = np.min(np.array([len(x) / wg for x, wg in zip(who, w[w > 0])]))  # a group runs out beyond this key
    users = np.concatenate(who)[order]
    return users[key[order] <= limit].astype(np.int64)


def fake_reports(protocol: HeavyHitterProtocol, plan: Plan, *, targets, users, kind: str = "MGA", rng=None,
                 trials: int = 64, cap: int | None = None) -> ProtocolReports:
    """The reports of fake users at plan indices ``users``: a batch that merges with honest batches.

    Parameters
    ----------
    protocol : HeavyHitterProtocol
        PEM, SPM, MCM, TreeHist, SFP or the strawman, with any oracle its
        questions use (OLH, HR, Hashtogram, CMS, FLH).
    plan : Plan
        The published plan (:meth:`~ldp.protocols.HeavyHitterProtocol.plan`).
    targets : int or array_like
        The values to plant (``m``-bit values), or how many to draw
        (:func:`fresh_targets`, uniform; fresh with overwhelming probability
        when ``m`` is large).  Ignored by ``"RPA"``.
    users : array_like of int
        Plan indices of the fake users (:func:`fake_users`).
    kind : {"input", "RPA", "MGA"}
        :mod:`ldp.attacks.crafting`.
    rng : None, int, SeedSequence, BitGenerator or Generator
        The attacker's randomness (a simulation).
    trials : int, default 64
        Hash seeds each ``"MGA"`` report tries (OLH and HR questions with more
        than one target answer; FLH: pool members); 1: the seed or pool
        member an honest device draws (:func:`ldp.attacks.craft`).
    cap : int, optional
        ``"MGA"``: each report is built for at most this many of the
        question's target answers (:func:`ldp.attacks.craft`).

    Returns
    -------
    ProtocolReports
        The fake users' groups and reports; ``ProtocolReports.concat([honest,
        fake])`` is what the server receives.

    Examples
    --------
    >>> import ldp
    >>> pem = ldp.PEM(2.0, k=16, m=64)
    >>> plan = pem.plan(10_000, rng=1)
    >>> fake = ldp.attacks.fake_users(plan, 0.02, rng=2)
    >>> reports = ldp.attacks.fake_reports(pem, plan, targets=1, users=fake, kind="MGA", rng=3)
    >>> reports.n
    200
    """
    if not isinstance(protocol, HeavyHitterProtocol):
        raise TypeError(f"protocol must be an ldp heavy-hitter protocol, got {type(protocol).__name__}")
    protocol.check_plan(plan)
    kind = check_kind(kind)
    trials = check_int(trials, "trials", 1, 2**16)
    cap = None if cap is None else check_int(cap, "cap", 1, 2**20)
    s_targets, s_assign, s_craft = check_rng(rng).spawn(3)
    tv = _targets(protocol, targets, s_targets)
    users = np.asarray(users)
    if users.dtype.kind not in "iu" or users.ndim != 1 or users.size == 0:
        raise ValueError("users must be a non-empty 1-D array of plan indices (see ldp.attacks.fake_users)")
    users = np.sort(users.astype(np.int64))
    if users[0] < 0 or users[-1] >= plan.n_users or np.any(np.diff(users) == 0):
        raise ValueError(f"users must be distinct plan indices in [0, n = {plan.n_users})")
    labels = plan.labels()[users]
    held = tv[s_assign.permutation(np.resize(np.arange(tv.shape[0]), users.shape[0]))]  # "input": one each
    streams = s_craft.spawn(plan.n_groups)
    reports = []
    for g, qs in enumerate(plan.questions):
        in_g = labels == g
        ng = int(np.count_nonzero(in_g))
        row = []
        for q, ss in zip(qs, streams[g].spawn(len(qs))):
            o = q.oracle()
            if kind == "input":  # the honest randomizer on her target's answer (what privatize sends)
                row.append(o.privatize(q.answer(held[in_g], protocol.m), rng=ss) if ng else
                           o.privatize(q.answer(tv[:1], protocol.m), rng=ss)[:0])
            elif ng == 0:  # an empty batch of the oracle's reports
                row.append(craft(o, q.answer(tv, protocol.m), 1, kind=kind, rng=ss, trials=trials)[:0])
            else:
                row.append(craft(o, q.answer(tv, protocol.m), ng, kind=kind, rng=ss, trials=trials, cap=cap))
        reports.append(row)
    return ProtocolReports(protocol.name, plan.params, plan, labels, reports, users=users)


def fake_wire(protocol: HeavyHitterProtocol, plan: Plan, *, targets, users, kind: str = "MGA", rng=None,
              trials: int = 64, cap: int | None = None) -> list[bytes]:
    """The reports of fake users as the wire bytes a deployment's server receives (:mod:`ldp.client`'s format).

    The same reports as :func:`fake_reports` (same arguments, same ``rng``), each
    encoded as a device would send it (:func:`ldp.client.encode_protocol_reports`):
    a fake user's bytes pass every check of
    :meth:`~ldp.protocols.HeavyHitterProtocol.aggregator` (format version, plan,
    user index, group, each field's range), since a crafted report is a report
    the protocol could have produced.

    Returns
    -------
    list of bytes
        One report per fake user, in the order of their sorted plan indices.

    Examples
    --------
    >>> import ldp
    >>> pem = ldp.PEM(2.0, k=16, m=64)
    >>> plan = pem.plan(10_000, rng=1)
    >>> server = pem.aggregator(plan)
    >>> fake = ldp.attacks.fake_users(plan, 0.02, rng=2)
    >>> server.add_many(ldp.attacks.fake_wire(pem, plan, targets=1, users=fake, rng=3))
    []
    >>> server.n_reports
    200
    """
    return encode_protocol_reports(fake_reports(protocol, plan, targets=targets, users=users, kind=kind, rng=rng,
                                                trials=trials, cap=cap))
