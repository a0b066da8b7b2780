"""The common shape of a heavy-hitter protocol: plan, privatize, aggregate, run.

* :class:`HeavyHitterProtocol` -- the base class: validation, the client/server
  split, both engines, and the helpers every protocol's aggregation uses:
  :meth:`~HeavyHitterProtocol._round` (one step: top candidates by support,
  their eq. (2) estimates, the step's :class:`~ldp.core.RoundInfo`) and
  :meth:`~HeavyHitterProtocol._final` (the release: top ``k`` or threshold).

The protocols whose users report parts of their value and the whole value share
:class:`ldp.protocols.twophase.TwoPhaseProtocol`.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any

import numpy as np

from ..core import (
    MAX_USERS,
    Candidates,
    Dataset,
    HeavyHitterResult,
    Plan,
    ProtocolReports,
    Question,
    RoundInfo,
    check_oracle,
    check_pool_size,
    report_epsilon_limit,
    scaled_estimate,
    support_threshold,
)
from ..core.reportstore import StoredReports
from ..engines import CountSupport, ReportSupport, SupportSource, prepare, report_source
from ..validation import check_epsilon, check_fraction, check_int, check_rng
from ..values import as_values
from . import batches
from .aggregator import Aggregator

__all__ = ["HeavyHitterProtocol", "ENGINES"]

#: the engines :meth:`HeavyHitterProtocol.run` accepts
ENGINES = ("protocol", "counts")


class HeavyHitterProtocol(ABC):
    """Base class of the heavy-hitter protocols (PEM, SPM, MCM, the strawman, TreeHist, SFP).

    Parameters
    ----------
    epsilon : float
        Privacy budget of each user (eps-LDP overall; a user's reports split it
        when the protocol says so).  At most :attr:`max_epsilon`: every OLH
        report's budget must keep OLH's hash range ``d' = ceil(e^eps + 1)`` at
        most ``2**31`` (``ldp.oracles.olh.MAX_EPSILON = ln(2**31 - 1) = 21.49``
        per report; a protocol giving each report ``eps / s`` accepts ``s``
        times that).  Reports with another oracle have that oracle's limit
        (:func:`ldp.core.report_epsilon_limit`).
    k : int
        Number of heavy hitters (top-k), ``1 <= k <= 2**m``.
    m : int
        Bits per value.
    query_limit : int, default 2**20
        Bound on the aggregator's frequency-oracle queries (section 4.3).
    threshold : float, optional
        Frequency in (0, 1): return every value estimated at or above
        ``threshold * n`` instead of the top k (section 6.2.3).

    Notes
    -----
    The deployment split: the server makes and publishes a :class:`~ldp.core.Plan`
    (:meth:`plan`); each device sends the bytes :func:`ldp.client.report`
    makes from its value with the operating system's randomness; the server
    checks and aggregates them (:meth:`aggregator`).  The simulation of that
    split (the book's experiments): :meth:`privatize` with ``plan=`` and
    ``users=`` draws every user's report from one seed, in batches of any
    size, which :meth:`~ldp.core.ProtocolReports.concat` merges and
    :meth:`aggregate` aggregates; :meth:`run` does all of it in one call, with
    either engine (:mod:`ldp.engines`).  A subclass writes its aggregation
    once, against :class:`ldp.engines.SupportSource` (``_aggregate``).
    """

    name = "?"
    #: the oracle spec of the reports (one of :data:`ldp.core.ORACLES`; the paper's protocols: OLH)
    oracle: str = "OLH"
    #: FLH's pool size ``h`` (0: the oracle has no pool); see :meth:`_set_oracle`
    pool_size: int = 0

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

    @abstractmethod
    def _aggregate(self, source: SupportSource) -> list[RoundInfo]:
        """The protocol's aggregation: every step's diagnostics, the release (:meth:`_final`) last."""

    def _public(self, rng: np.random.Generator) -> dict:
        """Public randomness announced before users report (e.g. MCM's channel hash seed)."""
        return {}

    def _public_from_plan(self, plan: Plan) -> dict:
        """The public randomness a published plan carries (what :meth:`_public` drew)."""
        return {}

    def _budget_split(self) -> int:
        """``s`` such that the largest budget of any of a user's reports is ``epsilon / s``."""
        return 1

    def _set_oracle(self, oracle, pool_size) -> None:
        """Check and set the oracle spec and FLH's pool size (for the protocols that take ``oracle=``)."""
        self.oracle = check_oracle(oracle)
        self.pool_size = check_pool_size(self.oracle, pool_size)

    def _pool(self, public: dict) -> dict:
        """:func:`ldp.core.make_question`'s pool arguments: FLH's ``pool_size`` and the plan's ``pool_seed``."""
        return {"pool_size": self.pool_size, "pool_seed": public["pool_seed"]} if self.pool_size else {}

    def _plan_public(self, plan: Plan) -> dict:
        """The public randomness of a published plan: :meth:`_public_from_plan` and FLH's pool seed."""
        public = dict(self._public_from_plan(plan))
        if self.pool_size:
            seeds = {q.pool_seed for qs in plan.questions for q in qs if q.pool_size}
            public["pool_seed"] = min(seeds) if seeds else 0  # one pool per plan; check_plan rebuilds it
        return public

    @property
    def params(self) -> dict[str, Any]:
        """The protocol's parameters (JSON-serialisable; recorded in plans and results)."""
        pool = {"pool_size": self.pool_size} if self.pool_size else {}
        return {"epsilon": self.epsilon, "k": self.k, "m": self.m, "query_limit": self.query_limit,
                "threshold": self.threshold, **pool}

    def _resolved_params(self, n: int) -> dict[str, Any]:
        return self.params

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({inner})"

    # -- checks -----------------------------------------------------------
    @property
    def max_epsilon(self) -> float:
        """The largest ``epsilon`` this configuration accepts (see the class docstring)."""
        return report_epsilon_limit(self.oracle, max(self.pool_size, 1))[0] * self._budget_split()

    def _check_epsilon_limit(self) -> None:
        """Raise unless every report's budget is within its oracle's limit (called by each ``__init__``)."""
        s = self._budget_split()
        fo = self.oracle
        why = report_epsilon_limit(fo, max(self.pool_size, 1))[1]
        each = f"its largest {fo} report budget is epsilon" if s == 1 else f"each {fo} report uses epsilon/{s}"
        check_epsilon(self.epsilon, hi=self.max_epsilon, why=f"{self.name} as configured: {each}, and {why}")

    def _check_n(self, n: int, plan: Plan) -> None:
        G = plan.n_groups
        if n < G:
            raise ValueError(f"{self.name} with these parameters splits users into {G} groups; "
                             f"values must hold at least {G} users, got {n}")

    def _values(self, values) -> np.ndarray:
        if isinstance(values, Dataset):
            if values.m != self.m:
                raise ValueError(f"the data set has m = {values.m} bits but the protocol expects m = {self.m}")
            values = values.values
        return as_values(values, self.m, name="values")

    # -- the steps of an aggregation (every protocol's _aggregate uses these) ----------
    def _round(self, source: SupportSource, question: Question, cands: Candidates, K: int, *, name: str,
               kind: str, block: int | None = None, min_support: int | None = None, limit: int | None = None,
               remember: bool = False, release: bool = False, info: dict | None = None) -> RoundInfo:
        """One aggregation step: the best candidates for ``question`` and their estimates.

        Asks ``source`` for the top ``K`` candidates of ``cands`` (per block of
        ``block``; plus every one with at least ``min_support``) among the
        reports of every group answering ``question``, keeps the first
        ``limit`` of them, estimates their counts in the population
        (:func:`ldp.core.scaled_estimate`, eq. (2)) and describes the step.

        Parameters
        ----------
        source : SupportSource
            The run's supports (either engine).
        question : Question
            The question whose reports are counted.
        cands : Candidates
            What is queried.
        K : int
            Candidates kept (per block).
        name, kind : str
            The step's :class:`~ldp.core.RoundInfo` name and kind.
        block, min_support, remember
            Passed to :meth:`ldp.engines.SupportSource.top`.
        limit : int, optional
            Keep at most this many of the selected candidates.
        release : bool
            The release rule: keep the top ``k`` or, in threshold mode, the
            estimates at or above ``threshold * n`` (see :meth:`_final`).
        info : dict, optional
            Step-specific extras for the :class:`~ldp.core.RoundInfo`.

        Returns
        -------
        RoundInfo
            ``kept`` holds the candidates kept, best first.
        """
        groups = source.plan.groups_asking(question)
        sel = source.top(groups, question, cands, K, block=block, min_support=min_support, remember=remember)
        index, support = sel.index[:limit], sel.support[:limit]
        o = question.oracle()
        est = scaled_estimate(support, sel.n_users, o.p, o.q, source.n)
        if release:
            if self.threshold is not None:
                keep = est >= self.threshold * source.n
            else:
                keep = np.arange(est.shape[0]) < self.k
            index, support, est = index[keep], support[keep], est[keep]
        return RoundInfo(name, kind, question.start, question.stop, groups, sel.n_users, cands.size,
                         cands.values_at(index), support, est, question, dict(info or {}))

    def _final(self, source: SupportSource, question: Question, cands: Candidates, *, name: str = "final",
               kind: str = "final", info: dict | None = None) -> RoundInfo:
        """The release shared by all protocols: the top ``k`` (or threshold) of ``cands`` by ``question``.

        In threshold mode every candidate whose support may reach
        ``threshold * n`` (:func:`ldp.core.support_threshold`) is selected and
        those whose estimate does are released.
        """
        N = source.n_users(source.plan.groups_asking(question))
        o = question.oracle()
        min_sup = None if self.threshold is None else support_threshold(self.threshold, N, o.p, o.q)
        return self._round(source, question, cands, self.k, name=name, kind=kind, min_support=min_sup,
                           release=True, info=info)

    def _identify(self, source: SupportSource) -> HeavyHitterResult:
        rounds = self._aggregate(source)
        last = rounds[-1]
        return HeavyHitterResult(self.name, last.kept, last.estimates, last.support, self.m, self.k, source.n,
                                 self.epsilon, self.threshold, source.engine, source.sizes, tuple(rounds),
                                 dict(source.plan.params))

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
            Number of users, at least the number of groups and at most
            :data:`ldp.core.MAX_USERS` (``2**32``: the group assignment's
            shuffle is exact up to there).
        rng : None, int, SeedSequence, BitGenerator or Generator
            Source of the plan's public seeds.

        Returns
        -------
        Plan
            Serialisable (:meth:`Plan.to_json`).
        """
        self._check_epsilon_limit()
        n = check_int(n, "n", 1, MAX_USERS)
        s_seed, s_public = check_rng(rng).spawn(2)
        seed = int(s_seed.integers(0, 2**63))
        public = self._public(s_public)
        if self.pool_size:  # FLH's public pool: its seed is public randomness of the plan
            public["pool_seed"] = int(s_public.integers(0, 2**63))
        return self._bind(n, seed, public)

    def _bind(self, n: int, seed: int, public: dict) -> Plan:
        layout = self._plan(n, public)
        self._check_n(n, layout)
        params = json.loads(json.dumps(self._resolved_params(n)))
        return replace(layout, n=n, seed=seed, protocol=self.name, params=params)

    def check_plan(self, plan: Plan) -> Plan:
        """Raise unless ``plan`` was made by :meth:`plan` of an identically configured protocol.

        Parameters
        ----------
        plan : Plan

        Returns
        -------
        Plan
            ``plan`` itself.
        """
        if not isinstance(plan, Plan):
            raise TypeError(f"plan must be an ldp.core.Plan from {self.name}.plan(n), got {type(plan).__name__}")
        if plan.protocol != self.name:
            raise ValueError(f"the plan was made by {plan.protocol or 'no protocol'}, not {self.name}")
        if plan.n is None or plan.seed is None:
            raise ValueError("the plan has no users (n and seed unset); make it with protocol.plan(n, rng=...)")
        mine = self._bind(plan.n, plan.seed, self._plan_public(plan))
        if mine != plan:
            keys = sorted(set(plan.params) | set(mine.params))
            diff = [f"{k} = {plan.params.get(k)!r} in the plan, {mine.params.get(k)!r} here" for k in keys
                    if plan.params.get(k) != mine.params.get(k)]
            raise ValueError(f"the plan was made by a differently configured {self.name}: "
                             f"{'; '.join(diff) or 'its groups or questions differ'}")
        return plan

    def aggregator(self, plan: Plan | str, *, store=None) -> Aggregator:
        """The server of a deployment: receives wire reports for ``plan``, checks each, aggregates.

        Parameters
        ----------
        plan : Plan or str
            The published plan (or its JSON), made by :meth:`plan` of an
            identically configured protocol (checked).
        store : str or os.PathLike, optional
            A report store folder the accepted batches are appended to
            (instead of memory); see :class:`ldp.protocols.Aggregator`.

        Returns
        -------
        ldp.protocols.Aggregator
            ``add(report)``, ``add_many(reports)``, ``n_reports`` and
            ``result(rng=...)``; devices make the reports with
            :func:`ldp.client.report`.
        """
        return Aggregator(self, plan, store=store)

    def privatize(self, values, *, rng=None, plan: Plan | None = None, users=None) -> ProtocolReports:
        """What users send, **simulated** from one seed: for all users or for a batch.

        Parameters
        ----------
        values : array_like or Dataset
            One ``m``-bit value per user (canonical representation of
            :mod:`ldp.values`), or an :class:`ldp.core.Dataset`.
        rng : None, int, SeedSequence, BitGenerator or Generator
            The simulated users' randomness (hash seeds and GRR coins, from
            independent child streams).  With ``plan=None`` also the plan's
            public seeds (as in :meth:`run`).  This is a simulation of all
            the users from one seed: whoever holds it recomputes every user's
            coins and undoes the randomization, so the seed is every user's
            secret.  Real users run :func:`ldp.client.report` on their own
            devices, with the operating system's randomness.
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
            Each user's group and oracle reports; :meth:`ProtocolReports.save`
            writes them, :meth:`ProtocolReports.concat` merges batches.

        Notes
        -----
        User ``i``'s randomness comes from two streams of her block of
        :data:`ldp.protocols.batches.NOISE_BLOCK` users (private coins and
        public hash seeds, independent), derived from ``rng``
        (an int or a ``SeedSequence``) and the block number, so privatizing
        users ``0 .. n-1`` in batches of any sizes with the same ``rng`` gives,
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
        idx = batches.batch_users(users, vals.shape[0], plan.n_users)
        if idx.size > 1 and np.any(np.diff(idx) < 0):
            order = np.argsort(idx, kind="stable")
            idx, vals = idx[order], vals[order]
        labels = plan.labels()[idx]
        noise = batches.user_noise(plan, idx, labels, batches.noise_root(rng=rng))
        reports = []
        for g, qs in enumerate(plan.questions):
            gv = vals[labels == g]
            reports.append([q.oracle().apply_noise(q.answer(gv, self.m), noise[g][j]) for j, q in enumerate(qs)])
        return ProtocolReports(self.name, plan.params, plan, labels, reports, users=idx)

    def aggregate(self, reports, *, rng=None, client=None, chunk: int | None = None) -> HeavyHitterResult:
        """The server side: heavy hitters from the reports alone.

        Parameters
        ----------
        reports : ProtocolReports or ldp.core.reportstore.StoredReports
            Output of :meth:`privatize` of an identically configured protocol
            (possibly batches merged with :meth:`ProtocolReports.concat`,
            saved and loaded back), or a report store opened with
            :meth:`ProtocolReports.open` (read one group at a time, in chunks).
            Estimates are scaled to the users who reported.
        rng : None, int, SeedSequence, BitGenerator or Generator
            Randomness for breaking ties between equal supports.
        client : dask.distributed.Client, optional
            Compute each round's partial supports on this cluster's workers
            (:class:`ldp.engines.DaskSupport`).  Default: for a report store,
            the scheduler named by ``DASK_SCHEDULER_ADDRESS`` when it is set,
            else this process; in-memory reports, this process.
        chunk : int, optional
            Reports read (or scattered) at once (default
            :data:`ldp.core.reportstore.DEFAULT_CHUNK`).

        Returns
        -------
        HeavyHitterResult
            The same, bit for bit, whichever way the reports are held and wherever they are counted.
        """
        if not isinstance(reports, (StoredReports, ProtocolReports)):
            raise TypeError(f"reports must be ProtocolReports from {self.name}.privatize (or a report store "
                            f"opened with ProtocolReports.open), got {type(reports).__name__}")
        if reports.protocol != self.name:
            raise ValueError(f"reports were produced by {reports.protocol}, not {self.name}")
        try:
            self.check_plan(reports.plan)
        except ValueError as err:
            raise ValueError(f"these reports cannot be aggregated by this {self.name}: {err}") from None
        if reports.n < reports.plan.n_groups or min(reports.sizes) == 0:
            raise ValueError(f"reports must include at least one user of each of the plan's "
                             f"{reports.plan.n_groups} groups; group sizes are {reports.sizes}")
        with report_source(reports, rng=check_rng(rng), client=client, chunk=chunk) as source:
            return self._identify(source)

    def run(self, values, *, rng=None, engine: str = "protocol") -> HeavyHitterResult:
        """Privatize and aggregate in one call.

        Parameters
        ----------
        values : array_like or Dataset
            One ``m``-bit value per user, or an :class:`ldp.core.Dataset`.
            The count engine counts the data set's tally, computed once per
            data set; a plain array is tallied once per content (the count
            engine keeps the last 4 arrays' tallies, found again by a digest
            of the bytes, about 4 ms at ``n = 10**6``; see
            :func:`ldp.engines.prepare`).
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
        return self._identify(self.source(values, rng=rng, engine=engine))

    def source(self, values, *, rng=None, engine: str = "protocol") -> SupportSource:
        """The support source of a run, before aggregation (for diagnostics and tests).

        Parameters
        ----------
        values : array_like or Dataset
            As for :meth:`run`.
        rng : None, int, SeedSequence, BitGenerator or Generator
        engine : {"protocol", "counts"}

        Returns
        -------
        SupportSource
            An :class:`ldp.engines.ReportSupport` over freshly privatized
            reports (``engine="protocol"``) or an :class:`ldp.engines.CountSupport`
            (``engine="counts"``), built from ``rng`` exactly as :meth:`run`
            builds them: both engines use the same plan (``source.plan``, hence
            the same groups) for the same ``rng``, and
            ``run(values, rng=rng, engine=engine)`` equals
            ``identify(source(values, rng=rng, engine=engine))``.
        """
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        self._check_epsilon_limit()
        s_priv, s_agg = check_rng(rng).spawn(2)
        if engine == "protocol":
            return ReportSupport(self.privatize(values, rng=s_priv), rng=s_agg)
        data = prepare(values, self.m)
        s_plan, s_noise = check_rng(s_priv).spawn(2)  # the split privatize makes
        plan = self.plan(data.n, rng=s_plan)
        return CountSupport(data, plan.labels(), plan, rng_draw=s_noise, rng_keys=s_agg)

    def identify(self, source: SupportSource) -> HeavyHitterResult:
        """The protocol's aggregation on a support source (:meth:`source`): the heavy hitters.

        Parameters
        ----------
        source : SupportSource
            Made from a plan of this protocol (checked).

        Returns
        -------
        HeavyHitterResult
        """
        if not isinstance(source, SupportSource):
            raise TypeError(f"source must be an ldp.engines.SupportSource (see {self.name}.source), "
                            f"got {type(source).__name__}")
        self.check_plan(source.plan)
        return self._identify(source)
