"""The common shape of a heavy-hitter protocol: validation, privatize, aggregate, run."""
from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from dataclasses import replace
from numbers import Integral
from typing import Any

import numpy as np

from ..validation import check_epsilon, check_fraction, check_int, check_rng
from ..values import as_values
from ._core import Plan, Question, scaled_estimate, support_threshold
from ._oracle_question import report_epsilon_limit
from ._result import HeavyHitterResult, ProtocolReports, RoundInfo

__all__ = ["HeavyHitterProtocol", "ENGINES", "NOISE_BLOCK", "split_bits"]

ENGINES = ("protocol", "counts")


def split_bits(total: int, parts: int, start: int = 0) -> list[tuple[int, int]]:
    """``parts`` contiguous bit ranges covering ``[start, start + total)``, lengths differing by <= 1 (longer first)."""
    base, extra = divmod(total, parts)
    out, s = [], start
    for i in range(parts):
        L = base + (1 if i < extra else 0)
        out.append((s, s + L))
        s += L
    return out


def _values_of(values):
    """Values of a Dataset (or the array itself)."""
    if hasattr(values, "values") and hasattr(values, "user_index"):
        return values.values
    if hasattr(values, "user_index") and hasattr(values, "distinct"):  # SortedData
        return None
    return values


def _noise_root(rng) -> np.random.SeedSequence:
    """The root of the users' private randomness for :meth:`HeavyHitterProtocol.privatize`.

    An int or a ``SeedSequence`` gives the same root every time (so batches
    privatized with the same ``rng`` fit together); a ``Generator`` gives a
    new child each call (its ``spawn``), as SPEC 7 intends.
    """
    g = check_rng(rng)
    try:
        return g.spawn(1)[0].bit_generator.seed_seq
    except (TypeError, AttributeError):  # pragma: no cover - a bit generator without a SeedSequence
        return np.random.SeedSequence(g.integers(0, 2**63, size=4))


def _block_rng(root: np.random.SeedSequence, block: int) -> np.random.Generator:
    """The private stream of users ``block * NOISE_BLOCK ..`` (child ``block`` of ``root``)."""
    ss = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (int(block),),
                                pool_size=root.pool_size)
    return np.random.Generator(np.random.PCG64(ss))


def _batch_users(users, size: int, n: int) -> np.ndarray:
    """Plan indices of a batch of ``size`` users (``users`` as given to privatize)."""
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


def _user_noise(plan: Plan, users: np.ndarray, labels: np.ndarray, root: np.random.SeedSequence) -> list:
    """Each batch user's oracle randomness, identical whatever the batching.

    Block ``b`` of users (``b * NOISE_BLOCK`` to ``(b + 1) * NOISE_BLOCK - 1``)
    has its own stream (:func:`_block_rng`); from it, group by group and
    question by question, the randomness of all the block's users of the
    group is drawn in user order (the oracle's ``draw_noise``, e.g.
    :meth:`ldp.OLH.draw_noise`), and each batch user takes her entry.
    ``users`` must be increasing.

    Returns ``noise[g][j]``: the tuple of per-user arrays (OLH:
    ``(seeds, keep, r)``) of the batch's users of group ``g`` (in user order)
    for the group's ``j``-th question.
    """
    G = plan.n_groups
    oracles = [[q.oracle() for q in qs] for qs in plan.questions]
    parts = [[[] for _ in qs] for qs in plan.questions]
    every = plan.labels()
    blocks = users // NOISE_BLOCK
    cuts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1], True])
    for s, e in zip(cuts[:-1], cuts[1:]):
        b = int(blocks[s])
        lo, hi = b * NOISE_BLOCK, min((b + 1) * NOISE_BLOCK, plan.n)
        block_labels = every[lo:hi]
        cnt = np.bincount(block_labels, minlength=G)
        whole = e - s == hi - lo  # the batch holds every user of the block
        if not whole:
            order = np.argsort(block_labels, kind="stable")
            rank = np.empty(hi - lo, dtype=np.int64)
            rank[order] = np.arange(hi - lo) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            lab, rk = labels[s:e], rank[users[s:e] - lo]
        gen = _block_rng(root, b)
        for g in range(G):
            pick = None if whole else rk[lab == g]
            for j, o in enumerate(oracles[g]):
                d = o.draw_noise(int(cnt[g]), rng=gen)
                parts[g][j].append(d if pick is None else tuple(a[pick] for a in d))
    return [[tuple(np.concatenate([d[i] for d in lst]) for i in range(len(lst[0]))) for lst in row]
            for row in parts]


class HeavyHitterProtocol(ABC):
    """Base class of PEM, SPM, MCM and the strawman.

    Parameters
    ----------
    epsilon : float
        Privacy budget of each user (eps-LDP overall; a user's reports split it
        when the protocol says so).  At most :attr:`max_epsilon`: every OLH
        report's budget must keep OLH's hash range ``d' = ceil(e^eps + 1)`` at
        most ``2**31`` (``ldp.oracles.olh.MAX_EPSILON = ln(2**31 - 1) = 21.49``
        per report; a protocol giving each report ``eps / s`` accepts ``s``
        times that).  Reports with another oracle have that oracle's limit
        (:func:`ldp.protocols._oracle_question.report_epsilon_limit`).
    k : int
        Number of heavy hitters (top-k), ``1 <= k <= 2**m``.
    m : int
        Bits per value.
    query_limit : int, default 2**20
        Bound on the aggregator's frequency-oracle queries (section 4.2.5).
    threshold : float, optional
        Frequency in (0, 1): return every value estimated at or above
        ``threshold * n`` instead of the top k (section 6.2.3).

    Notes
    -----
    The deployment split: the server makes and publishes a :class:`Plan`
    (:meth:`plan`); users privatize their values with it, in batches of any
    size (:meth:`privatize` with ``plan=`` and ``users=``); the server merges
    the batches (:meth:`ProtocolReports.concat`) and aggregates them
    (:meth:`aggregate`).  :meth:`run` does all of it in one call.
    """

    name = "?"

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.m = check_int(m, "m", 1, 4096)
        self.k = check_int(k, "k", 1)
        if self.k > 2**self.m:
            raise ValueError(f"k must be an integer in [1, 2**m = {2**self.m}] (the number of distinct "
                             f"{self.m}-bit values), got {self.k}")
        self.query_limit = check_int(query_limit, "query_limit", 1)
        self.threshold = None if threshold is None else check_fraction(threshold, "threshold")

    # -- to implement ---------------------------------------------------
    @abstractmethod
    def _plan(self, n: int, public: dict) -> Plan:
        """Groups and questions for ``n`` users (a layout: ``Plan`` without ``n`` and ``seed``)."""

    def _public(self, rng: np.random.Generator) -> dict:
        """Public randomness announced before users report (e.g. MCM's channel hash seed)."""
        return {}

    def _public_from_plan(self, plan: Plan) -> dict:
        return {}

    def _budget_split(self) -> int:
        """``s`` such that the largest budget of any of a user's reports is ``epsilon / s``."""
        return 1

    def _report_oracle(self) -> str:
        """The oracle spec of the reports whose budget is ``epsilon / s`` (default ``"OLH"``)."""
        return "OLH"

    @abstractmethod
    def _aggregate(self, source, plan: Plan, n: int):
        """Shared protocol logic: returns ``(candidates, selection, rounds)`` of the final step."""

    @property
    def params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "k": self.k, "m": self.m, "query_limit": self.query_limit,
                "threshold": self.threshold}

    def _resolved_params(self, n: int) -> dict[str, Any]:
        return self.params

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({inner})"

    # -- checks -----------------------------------------------------------
    @property
    def max_epsilon(self) -> float:
        """The largest ``epsilon`` this configuration accepts (see the class docstring)."""
        return report_epsilon_limit(self._report_oracle())[0] * self._budget_split()

    def _check_epsilon_limit(self) -> None:
        """Raise unless every report's budget is within its oracle's limit (called by each ``__init__``)."""
        s = self._budget_split()
        fo = self._report_oracle()
        why = report_epsilon_limit(fo)[1]
        each = f"its largest {fo} report budget is epsilon" if s == 1 else f"each {fo} report uses epsilon/{s}"
        check_epsilon(self.epsilon, hi=self.max_epsilon, why=f"{self.name} as configured: {each}, and {why}")

    def _check_n(self, n: int, plan: Plan) -> None:
        G = plan.n_groups
        if n < G:
            raise ValueError(f"{self.name} with these parameters splits users into {G} groups; "
                             f"values must hold at least {G} users, got {n}")

    # -- helpers ------------------------------------------------------------
    def _final(self, source, plan: Plan, question: Question, cands, rounds: list, *, name: str = "final",
               kind: str = "final"):
        """The release step shared by all protocols: top k (or threshold) by the whole-value oracle."""
        groups = plan.groups_asking(question)
        N = source.n_users(groups)
        o = question.oracle()
        min_sup = None if self.threshold is None else support_threshold(self.threshold, N, o.p, o.q)
        sel = source.top(groups, question, cands, self.k, min_support=min_sup)
        vals = cands.values_at(sel.index)
        est = scaled_estimate(sel.support, N, o.p, o.q, source.n)
        if self.threshold is not None:
            keep = est >= self.threshold * source.n
        else:
            keep = np.arange(est.shape[0]) < self.k
        vals, est, sup = vals[keep], est[keep], sel.support[keep]
        rounds.append(RoundInfo(name, kind, question.start, question.stop, tuple(groups), N, cands.size,
                                vals, sup, est, question))
        return vals, est, sup

    def _result(self, out, source, n, engine, rounds, params):
        vals, est, sup = out
        return HeavyHitterResult(self.name, vals, est, sup, self.m, self.k, n, self.epsilon, self.threshold,
                                 engine, source.sizes, tuple(rounds), params)

    def _values(self, values) -> np.ndarray:
        if hasattr(values, "m") and hasattr(values, "user_index") and int(values.m) != self.m:
            raise ValueError(f"the data set has m = {values.m} bits but the protocol expects m = {self.m}")
        raw = _values_of(values)
        if raw is None:
            raise TypeError("privatize needs the users' values (an array or a Dataset), not prepared counts")
        return as_values(raw, self.m, name="values")

    # -- public API -----------------------------------------------------------
    def plan(self, n: int, *, rng=None) -> Plan:
        """The plan for ``n`` users: what the server publishes before anyone reports.

        Fixes everything that depends on ``n``: the configuration (PEM's
        prefix lengths, chosen for ``n``), the groups and their questions, the
        public seeds (MCM's channel hash) and the group of every user
        (:meth:`Plan.labels`, from the plan's public seed).  Contains no
        private randomness.

        Parameters
        ----------
        n : int
            Number of users, at least the number of groups.
        rng : None, int, SeedSequence, BitGenerator or Generator
            Source of the plan's public seeds.

        Returns
        -------
        Plan
            Serialisable (:meth:`Plan.to_json`).
        """
        self._check_epsilon_limit()
        n = check_int(n, "n", 1)
        s_seed, s_public = check_rng(rng).spawn(2)
        seed = int(s_seed.integers(0, 2**63))
        return self._bind(n, seed, self._public(s_public))

    def _bind(self, n: int, seed: int, public: dict) -> Plan:
        layout = self._plan(n, public)
        self._check_n(n, layout)
        params = json.loads(json.dumps(self._resolved_params(n)))
        return replace(layout, n=n, seed=seed, protocol=self.name, params=params)

    def check_plan(self, plan: Plan) -> Plan:
        """Raise unless ``plan`` was made by :meth:`plan` of an identically configured protocol."""
        if not isinstance(plan, Plan):
            raise TypeError(f"plan must be an ldp.protocols.Plan from {self.name}.plan(n), got {type(plan).__name__}")
        if plan.protocol != self.name:
            raise ValueError(f"the plan was made by {plan.protocol or 'no protocol'}, not {self.name}")
        if plan.n is None or plan.seed is None:
            raise ValueError("the plan has no users (n and seed unset); make it with protocol.plan(n, rng=...)")
        mine = self._bind(plan.n, plan.seed, self._public_from_plan(plan))
        if mine != plan:
            keys = sorted(set(plan.params) | set(mine.params))
            diff = [f"{k} = {plan.params.get(k)!r} in the plan, {mine.params.get(k)!r} here" for k in keys
                    if plan.params.get(k) != mine.params.get(k)]
            raise ValueError(f"the plan was made by a differently configured {self.name}: "
                             f"{'; '.join(diff) or 'its groups or questions differ'}")
        return plan

    def privatize(self, values, rng=None, *, plan: Plan | None = None, users=None) -> ProtocolReports:
        """What users send (the client side), for all users or for a batch.

        Parameters
        ----------
        values : array_like or Dataset
            One ``m``-bit value per user (canonical representation of
            :mod:`ldp.values`), or an :class:`ldp.datasets.Dataset`.
        rng : None, int, SeedSequence, BitGenerator or Generator
            The users' private randomness (hash seeds and GRR coins).  With
            ``plan=None`` also the plan's public seeds (as in :meth:`run`).
        plan : Plan, optional
            The published plan (:meth:`plan`).  Default: a plan for
            ``len(values)`` users made from ``rng``.
        users : None, int or array_like of int
            Plan indices of these users: ``None`` for all ``plan.n`` users in
            order, an int for consecutive users starting there, or one index
            per value.

        Returns
        -------
        ProtocolReports
            Each user's group and OLH reports; :meth:`ProtocolReports.save`
            writes them, :meth:`ProtocolReports.concat` merges batches.

        Notes
        -----
        User ``i``'s randomness comes from the stream of her block of
        :data:`NOISE_BLOCK` users, derived from ``rng`` (an int or a
        ``SeedSequence``) and the block number, so privatizing users
        ``0 .. n-1`` in batches of any sizes with the same ``rng`` gives,
        after :meth:`ProtocolReports.concat`, exactly the reports of one
        batch.  A ``Generator`` passed as ``rng`` gives new randomness each
        call (correct, but batches then differ from one batch).  Her group is
        ``plan.labels()[i]`` (public).
        """
        vals = self._values(values)
        if plan is None:
            if users is not None:
                raise ValueError("users= needs plan=: make the plan first with protocol.plan(n, rng=...)")
            s_plan, s_users = check_rng(rng).spawn(2)
            plan = self.plan(vals.shape[0], rng=s_plan)
            rng = s_users
        else:
            self.check_plan(plan)
        idx = _batch_users(users, vals.shape[0], plan.n)
        if idx.size > 1 and np.any(np.diff(idx) < 0):
            order = np.argsort(idx, kind="stable")
            idx, vals = idx[order], vals[order]
        labels = plan.labels()[idx]
        noise = _user_noise(plan, idx, labels, _noise_root(rng))
        reports = []
        for g, qs in enumerate(plan.questions):
            gv = vals[labels == g]
            reports.append([q.oracle().apply_noise(q.answer(gv, self.m), noise[g][j]) for j, q in enumerate(qs)])
        return ProtocolReports(self.name, plan.params, plan, labels, reports, users=idx)

    def aggregate(self, reports: ProtocolReports, rng=None) -> HeavyHitterResult:
        """The server side: heavy hitters from the reports alone.

        Parameters
        ----------
        reports : ProtocolReports
            Output of :meth:`privatize` of an identically configured protocol
            (possibly batches merged with :meth:`ProtocolReports.concat`,
            saved and loaded back).  Estimates are scaled to the users who
            reported.
        rng : None, int, SeedSequence, BitGenerator or Generator
            Randomness for breaking ties between equal supports.
        """
        from ..engines import ReportSupport

        if not isinstance(reports, ProtocolReports):
            raise TypeError(f"reports must be ProtocolReports from {self.name}.privatize, got {type(reports).__name__}")
        if reports.protocol != self.name:
            raise ValueError(f"reports were produced by {reports.protocol}, not {self.name}")
        try:
            self.check_plan(reports.plan)
        except ValueError as err:
            raise ValueError(f"these reports cannot be aggregated by this {self.name}: {err}") from None
        if reports.n < reports.plan.n_groups or min(reports.sizes) == 0:
            raise ValueError(f"reports must include at least one user of each of the plan's "
                             f"{reports.plan.n_groups} groups; group sizes are {reports.sizes}")
        source = ReportSupport(reports, check_rng(rng))
        n = reports.n
        out, rounds = self._aggregate(source, reports.plan, n)
        return self._result(out, source, n, "protocol", rounds, dict(reports.plan.params))

    def run(self, values, *, rng=None, engine: str = "protocol") -> HeavyHitterResult:
        """Privatize and aggregate in one call.

        Parameters
        ----------
        values : array_like, Dataset or ldp.engines.SortedData
            One ``m``-bit value per user.
        rng : None, int, SeedSequence, BitGenerator or Generator
        engine : {"protocol", "counts"}
            ``"protocol"``: real reports (:meth:`privatize` + :meth:`aggregate`).
            ``"counts"``: the count-level engine (:mod:`ldp.engines`), which
            draws every aggregated support from its exact law; same plan and
            group assignment for the same ``rng``.

        Returns
        -------
        HeavyHitterResult
        """
        source, plan, n = self.source(values, rng=rng, engine=engine)
        out, rounds = self._aggregate(source, plan, n)
        return self._result(out, source, n, engine, rounds, dict(plan.params))

    def source(self, values, *, rng=None, engine: str = "protocol"):
        """The support source of a run, before aggregation (for diagnostics and tests).

        Returns ``(source, plan, n)``: an :class:`ldp.engines.ReportSupport`
        over freshly privatized reports (``engine="protocol"``) or an
        :class:`ldp.engines.CountSupport` (``engine="counts"``), built from
        ``rng`` exactly as :meth:`run` builds them: both engines use the same
        plan (hence the same groups) for the same ``rng``.
        """
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        from ..engines import CountSupport, ReportSupport, prepare

        self._check_epsilon_limit()
        s_priv, s_agg = check_rng(rng).spawn(2)
        if engine == "protocol":
            reports = self.privatize(values, rng=s_priv)
            return ReportSupport(reports, s_agg), reports.plan, reports.n
        data = prepare(values, self.m)
        s_plan, s_noise = check_rng(s_priv).spawn(2)  # the split privatize makes
        plan = self.plan(data.n, rng=s_plan)
        return CountSupport(data, plan.labels(), plan, s_noise, s_agg), plan, data.n


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
