"""The common shape of a heavy-hitter protocol: validation, privatize, aggregate, run."""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..validation import check_epsilon, check_fraction, check_int, check_rng
from ..values import as_values
from ._core import Plan, Question, assign_groups, scaled_estimate, support_threshold
from ._result import HeavyHitterResult, ProtocolReports, RoundInfo

__all__ = ["HeavyHitterProtocol", "ENGINES", "split_bits"]

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


class HeavyHitterProtocol(ABC):
    """Base class of PEM, SPM, MCM and the strawman.

    Parameters
    ----------
    epsilon : float
        Privacy budget of each user (eps-LDP overall; a user's reports split it
        when the protocol says so).
    k : int
        Number of heavy hitters (top-k), ``1 <= k <= 2**m``.
    m : int
        Bits per value.
    query_limit : int, default 2**20
        Bound on the aggregator's frequency-oracle queries (section 4.2.5).
    threshold : float, optional
        Frequency in (0, 1): return every value estimated at or above
        ``threshold * n`` instead of the top k (section 6.2.3).
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
        """Groups and questions for ``n`` users."""

    def _public(self, rng: np.random.Generator) -> dict:
        """Public randomness announced before users report (e.g. MCM's channel hash seed)."""
        return {}

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

    # -- helpers ------------------------------------------------------------
    def _check_n(self, n: int, plan: Plan) -> None:
        G = plan.n_groups
        if n < G:
            raise ValueError(f"{self.name} with these parameters splits users into {G} groups; "
                             f"values must hold at least {G} users, got {n}")

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

    @staticmethod
    def _streams(rng):
        g = check_rng(rng)
        return g.spawn(3)  # groups, public parameters, oracle noise

    # -- public API -----------------------------------------------------------
    def privatize(self, values, rng=None) -> ProtocolReports:
        """What every user sends (the client side).

        Parameters
        ----------
        values : array_like or Dataset
            One ``m``-bit value per user (canonical representation of
            :mod:`ldp.values`), or an :class:`ldp.datasets.Dataset`.
        rng : None, int, SeedSequence, BitGenerator or Generator
            Randomness (group assignment, public parameters, OLH noise).

        Returns
        -------
        ProtocolReports
            Each user's group and OLH reports; :meth:`ProtocolReports.save` writes them.
        """
        if hasattr(values, "m") and hasattr(values, "user_index") and int(values.m) != self.m:
            raise ValueError(f"the data set has m = {values.m} bits but the protocol expects m = {self.m}")
        raw = _values_of(values)
        if raw is None:
            raise TypeError("privatize needs the users' values (an array or a Dataset), not prepared counts")
        vals = as_values(raw, self.m, name="values")
        s_groups, s_public, s_noise = self._streams(rng)
        n = vals.shape[0]
        public = self._public(s_public)
        plan = self._plan(n, public)
        self._check_n(n, plan)
        labels = assign_groups(n, plan.fractions, s_groups)
        order = np.argsort(labels, kind="stable")
        bounds = np.r_[0, np.cumsum(np.bincount(labels, minlength=plan.n_groups))]
        noise = s_noise.spawn(sum(len(qs) for qs in plan.questions))
        reports, t = [], 0
        for g, qs in enumerate(plan.questions):
            users = order[bounds[g]:bounds[g + 1]]
            gv = vals[users]
            row = []
            for q in qs:
                row.append(q.oracle().privatize(q.answer(gv, self.m), rng=noise[t]))
                t += 1
            reports.append(row)
        return ProtocolReports(self.name, self._resolved_params(n), plan, labels, reports)

    def aggregate(self, reports: ProtocolReports, rng=None) -> HeavyHitterResult:
        """The server side: heavy hitters from the reports alone.

        Parameters
        ----------
        reports : ProtocolReports
            Output of :meth:`privatize` of an identically configured protocol
            (possibly saved and loaded back).
        rng : None, int, SeedSequence, BitGenerator or Generator
            Randomness for breaking ties between equal supports.
        """
        from ..engines import ReportSupport

        if not isinstance(reports, ProtocolReports):
            raise TypeError(f"reports must be ProtocolReports from {self.name}.privatize, got {type(reports).__name__}")
        if reports.protocol != self.name:
            raise ValueError(f"reports were produced by {reports.protocol}, not {self.name}")
        n = reports.n
        public = self._public_from_plan(reports.plan)
        plan = self._plan(n, public)
        if plan != reports.plan:
            raise ValueError(f"reports were produced by a differently configured {self.name} "
                             f"(parameters {reports.params}); this protocol has {self._resolved_params(n)}")
        source = ReportSupport(reports, check_rng(rng))
        out, rounds = self._aggregate(source, plan, n)
        return self._result(out, source, n, "protocol", rounds, self._resolved_params(n))

    def _public_from_plan(self, plan: Plan) -> dict:
        return {}

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
            draws every aggregated support from its exact law; same group
            assignment for the same ``rng``.

        Returns
        -------
        HeavyHitterResult
        """
        source, plan, n = self.source(values, rng=rng, engine=engine)
        out, rounds = self._aggregate(source, plan, n)
        return self._result(out, source, n, engine, rounds, self._resolved_params(n))

    def source(self, values, *, rng=None, engine: str = "protocol"):
        """The support source of a run, before aggregation (for diagnostics and tests).

        Returns ``(source, plan, n)``: an :class:`ldp.engines.ReportSupport`
        over freshly privatized reports (``engine="protocol"``) or an
        :class:`ldp.engines.CountSupport` (``engine="counts"``), built from
        ``rng`` exactly as :meth:`run` builds them.
        """
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        from ..engines import CountSupport, ReportSupport, prepare

        g = check_rng(rng)
        s_priv, s_agg = g.spawn(2)
        if engine == "protocol":
            reports = self.privatize(values, rng=s_priv)
            return ReportSupport(reports, s_agg), reports.plan, reports.n
        data = prepare(values, self.m)
        s_groups, s_public, s_noise = self._streams(s_priv)
        n = data.n
        public = self._public(s_public)
        plan = self._plan(n, public)
        self._check_n(n, plan)
        labels = assign_groups(n, plan.fractions, s_groups)
        return CountSupport(data, labels, plan, s_noise, s_agg), plan, n


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
