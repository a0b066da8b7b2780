"""The Prefix Extending Method (PEM), paper section 4.1."""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence


from ._base import HeavyHitterProtocol
from ._core import ExtendCandidates, Plan, RangeCandidates, scaled_estimate, sort_unique
from ._oracle_question import check_oracle, make_question
from ._result import RoundInfo

__all__ = ["PEM"]


@lru_cache(maxsize=256)
def _optimized(n, m, k, epsilon, query_limit):
    from .. import analysis

    return analysis.optimize_pem(epsilon, k, m, n=n, query_limit=query_limit)


class PEM(HeavyHitterProtocol):
    """Prefix Extending Method (section 4.1).

    Users are split at random into ``g`` groups; the users of group ``i``
    report, with OLH at the full budget, the first ``gamma + eta_1 + ... + eta_i``
    bits of their value (the last group the whole value).  The aggregator
    tests ``D_1 = {0,1}^(gamma+eta_1)`` with group 1, keeps the ``|C_1|``
    prefixes with the highest support, then tests
    ``D_i = C_{i-1} x {0,1}^eta_i`` with group ``i``, and so on; the last
    round releases the top ``k`` (or, with ``threshold``, every value
    estimated at or above ``threshold * n``).

    Parameters
    ----------
    epsilon : float
        Privacy budget of each user (one report, full budget), in
        ``(0, ln(2**31 - 1)] = (0, 21.49]``: OLH's hash range
        ``d' = ceil(e^eps + 1)`` must be at most ``2**31``.  With another
        ``oracle`` the limit is that oracle's
        (:func:`ldp.protocols._oracle_question.report_epsilon_limit`):
        ``18.02`` for HR, ``706.3`` for Hashtogram, ``709.78`` for CMS.
    k : int
        Number of heavy hitters.
    m : int
        Bits per value.
    query_limit : int, default 2**20
        Bound on ``sum_i |D_i|`` (the oracle queries).
    threshold : float, optional
        Threshold mode (section 6.2.3): intermediate rounds keep the top
        ``|C_i|`` as in top-k mode; the last round returns every value whose
        estimate is at least ``threshold * n``.
    gamma, eta, etas, g, group_fractions, cand_sizes : optional
        An explicit configuration, passed to :func:`ldp.analysis.pem_config`
        (one of ``eta``, ``etas``, ``g`` is required when any is given).
    config : ldp.analysis.PEMConfig, optional
        A ready configuration.
    oracle : {"OLH", "HR", "Hashtogram", "CMS"}, default "OLH"
        Frequency oracle of the reports (the paper: OLH); see
        :mod:`ldp.protocols._oracle_question`.  The configuration optimizer
        assumes OLH's variance either way.

    Notes
    -----
    With no explicit configuration, the configuration is chosen when ``n``
    is known by :func:`ldp.analysis.optimize_pem` (the paper optimizes the F1
    utility under a Zipf assumption and the query limit, section 6.1), or
    :func:`ldp.analysis.pem_default_config` (section 4.2.5's rule) if the
    optimizer is unavailable.

    References
    ----------
    Paper sections 4.1, 4.2.2, 4.2.5 and 6.2.3.
    """

    name = "PEM"

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, gamma: int | None = None, eta: int | None = None,
                 etas: Sequence[int] | None = None, g: int | None = None,
                 group_fractions: Sequence[float] | None = None, cand_sizes: Sequence[int] | None = None,
                 config=None, oracle: str = "OLH"):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold)
        self.oracle = check_oracle(oracle)
        self._check_epsilon_limit()
        from .. import analysis

        explicit = {"gamma": gamma, "eta": eta, "etas": etas, "g": g, "group_fractions": group_fractions,
                    "cand_sizes": cand_sizes}
        given = {k_: v for k_, v in explicit.items() if v is not None}
        if config is not None:
            if given:
                raise ValueError("give either config or explicit parameters (gamma, eta, ...), not both")
            if not isinstance(config, analysis.PEMConfig):
                raise TypeError(f"config must be an ldp.analysis.PEMConfig, got {type(config).__name__}")
            if config.m != self.m or config.k != self.k:
                raise ValueError(f"config is for m = {config.m}, k = {config.k}; the protocol has "
                                 f"m = {self.m}, k = {self.k}")
            self._config = config
        elif given:
            if eta is None and etas is None and g is None:
                raise ValueError("an explicit PEM configuration needs one of eta, etas or g "
                                 "(the bits added per round)")
            self._config = analysis.pem_config(self.k, self.m, **given)
        else:
            self._config = None
            need = analysis.min_query_limit(self.k, self.m)
            if self.query_limit < need:
                raise ValueError(f"query_limit = {self.query_limit} is too small for PEM with m = {self.m}, "
                                 f"k = {self.k}: the smallest limit that admits a configuration is {need}")
        if self._config is not None and self._config.queries > self.query_limit:
            raise ValueError(f"query_limit = {self.query_limit} is too small for this PEM configuration, "
                             f"which makes {self._config.queries} oracle queries; the smallest limit that "
                             f"works for it is {self._config.queries}")

    def config(self, n: int):
        """The configuration used for ``n`` users (:class:`ldp.analysis.PEMConfig`)."""
        if self._config is not None:
            return self._config
        from .. import analysis

        if hasattr(analysis, "optimize_pem"):
            return _optimized(int(n), self.m, self.k, self.epsilon, self.query_limit)
        return analysis.pem_default_config(self.k, self.m, query_limit=self.query_limit)

    @property
    def params(self) -> dict:
        extra = {} if self.oracle == "OLH" else {"oracle": self.oracle}  # the paper's PEM: as before
        return {**super().params, **extra}

    def _report_oracle(self) -> str:
        return self.oracle

    def _resolved_params(self, n: int) -> dict:
        c = self.config(n)
        return {**self.params, "gamma": c.gamma, "etas": list(c.etas),
                "group_fractions": list(c.group_fractions), "cand_sizes": list(c.cand_sizes)}

    def _plan(self, n: int, public: dict) -> Plan:
        c = self.config(n)
        qs = tuple((make_question(0, L, self.epsilon, self.oracle),) for L in c.prefix_lengths)
        return Plan(self.m, tuple(c.group_fractions), qs)

    def _aggregate(self, source, plan: Plan, n: int):
        c = self.config(plan.n if plan.n is not None else n)  # the configuration the plan was made with
        lengths = c.prefix_lengths
        rounds = []
        prev = None
        for i, L in enumerate(lengths):
            q = plan.questions[i][0]
            if i == 0:
                cands = RangeCandidates(1 << L, L)  # D_1 = {0,1}^(gamma+eta)
            else:
                cands = ExtendCandidates(prev, lengths[i - 1], c.etas[i])  # D_i = C_{i-1} x {0,1}^eta
            if i == len(lengths) - 1:
                out = self._final(source, plan, q, cands, rounds, name=f"round {i + 1}", kind="prefix")
                return out, rounds
            sel = source.top((i,), q, cands, c.cand_sizes[i])
            kept = cands.values_at(sel.index)
            o = q.oracle()
            est = scaled_estimate(sel.support, sel.n_users, o.p, o.q, n)
            rounds.append(RoundInfo(f"round {i + 1}", "prefix", 0, L, (i,), sel.n_users, cands.size,
                                    kept, sel.support, est, q))
            prev = sort_unique(kept)
        raise AssertionError("unreachable")  # pragma: no cover
