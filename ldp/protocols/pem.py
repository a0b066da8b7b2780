"""The Prefix Extending Method (PEM), paper section 4.1."""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ..analysis import PEMConfig, min_query_limit, optimize_pem, pem_config
from ..core import Candidates, ExtendCandidates, Plan, RangeCandidates, RoundInfo, make_question
from ..engines import SupportSource
from ..values import sort_unique
from .base import HeavyHitterProtocol

__all__ = ["PEM"]


def _layout(c: PEMConfig) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """A configuration's group fractions and candidate sizes (filled in when it is built)."""
    assert c.group_fractions is not None and c.cand_sizes is not None
    return c.group_fractions, c.cand_sizes


@lru_cache(maxsize=256)
def _optimized(epsilon: float, k: int, m: int, n: int, query_limit: int) -> PEMConfig:
    return optimize_pem(epsilon=epsilon, k=k, m=m, n=n, query_limit=query_limit)


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
        (:func:`ldp.core.report_epsilon_limit`):
        ``18.02`` for HR, ``706.3`` for Hashtogram, ``709.78`` for CMS,
        ``ln(floor(2**24 / h) - 1)`` for FLH (``8.32`` for ``h = 4096``).
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
    oracle : {"OLH", "HR", "Hashtogram", "CMS", "FLH"}, default "OLH"
        Frequency oracle of the reports (the paper: OLH); see
        :mod:`ldp.core.oracle_specs`.  The configuration optimizer
        assumes OLH's variance either way.
    pool_size : int, optional
        FLH's number of public hash functions ``h`` (default 4096,
        :data:`ldp.oracles.flh.DEFAULT_POOL_SIZE`); only with ``oracle="FLH"``.
        The pool's seed is public randomness of the plan.

    Notes
    -----
    With no explicit configuration, the configuration is chosen when ``n``
    is known by :func:`ldp.analysis.optimize_pem` (the paper optimizes the F1
    utility under a Zipf assumption and the query limit, sections 4.3 and 6.1).

    References
    ----------
    Paper sections 4.1, 4.2.2, 4.3 and 6.2.3.

    Examples
    --------
    The deployment split: the server publishes a plan, every user privatizes her value with
    it, and the server aggregates the reports (here 100,000 users, of whom 30,000 hold
    "apple" and 20,000 "pear"; at epsilon = 4 both are found).

    >>> import ldp
    >>> words = ["apple"] * 30_000 + ["pear"] * 20_000 + [f"w{i}" for i in range(50_000)]
    >>> values = ldp.encode(words, nbytes=6)                  # m = 48-bit values
    >>> pem = ldp.PEM(epsilon=4.0, k=2, m=48)
    >>> plan = pem.plan(len(values), rng=1)                   # what the server publishes
    >>> reports = pem.privatize(values, plan=plan, rng=2)     # what the users send
    >>> result = pem.aggregate(reports, rng=3)                # what the server computes
    >>> sorted(ldp.decode(result.heavy_hitters, nbytes=6))
    ['apple', 'pear']
    """

    name = "PEM"

    def __init__(self, epsilon: float, k: int, m: int, *, query_limit: int = 2**20,
                 threshold: float | None = None, gamma: int | None = None, eta: int | None = None,
                 etas: Sequence[int] | None = None, g: int | None = None,
                 group_fractions: Sequence[float] | None = None, cand_sizes: Sequence[int] | None = None,
                 config=None, oracle: str = "OLH", pool_size: int | None = None):
        super().__init__(epsilon, k, m, query_limit=query_limit, threshold=threshold)
        self._set_oracle(oracle, pool_size)
        self._check_epsilon_limit()
        explicit = {"gamma": gamma, "eta": eta, "etas": etas, "g": g, "group_fractions": group_fractions,
                    "cand_sizes": cand_sizes}
        given = {k_: v for k_, v in explicit.items() if v is not None}
        self._config: PEMConfig | None
        if config is not None:
            if given:
                raise ValueError("give either config or explicit parameters (gamma, eta, ...), not both")
            if not isinstance(config, PEMConfig):
                raise TypeError(f"config must be an ldp.analysis.PEMConfig, got {type(config).__name__}")
            if config.m != self.m or config.k != self.k:
                raise ValueError(f"config is for m = {config.m}, k = {config.k}; the protocol has "
                                 f"m = {self.m}, k = {self.k}")
            self._config = config
        elif given:
            if eta is None and etas is None and g is None:
                raise ValueError("an explicit PEM configuration needs one of eta, etas or g "
                                 "(the bits added per round)")
            self._config = pem_config(k=self.k, m=self.m, gamma=gamma, eta=eta, etas=etas, g=g,
                                      group_fractions=group_fractions, cand_sizes=cand_sizes)
        else:
            self._config = None
            need = min_query_limit(m=self.m, k=self.k)
            if self.query_limit < need:
                raise ValueError(f"query_limit = {self.query_limit} is too small for PEM with m = {self.m}, "
                                 f"k = {self.k}: the smallest limit that admits a configuration is {need}")
        if self._config is not None and self._config.queries > self.query_limit:
            raise ValueError(f"query_limit = {self.query_limit} is too small for this PEM configuration, "
                             f"which makes {self._config.queries} oracle queries; the smallest limit that "
                             f"works for it is {self._config.queries}")

    def config(self, n: int) -> PEMConfig:
        """The configuration used for ``n`` users (:class:`ldp.analysis.PEMConfig`).

        Parameters
        ----------
        n : int
            Number of users.

        Returns
        -------
        PEMConfig
            The explicit configuration, or :func:`ldp.analysis.optimize_pem`'s for ``n`` (cached).
        """
        if self._config is not None:
            return self._config
        return _optimized(self.epsilon, self.k, self.m, int(n), self.query_limit)

    @property
    def params(self) -> dict:
        extra = {} if self.oracle == "OLH" else {"oracle": self.oracle}  # the paper's PEM: as before
        return {**super().params, **extra}

    def _resolved_params(self, n: int) -> dict:
        c = self.config(n)
        fractions, sizes = _layout(c)
        return {**self.params, "gamma": c.gamma, "etas": list(c.etas), "group_fractions": list(fractions),
                "cand_sizes": list(sizes)}

    def _plan(self, n: int, public: dict) -> Plan:
        c = self.config(n)
        pool = self._pool(public)
        qs = tuple((make_question(0, L, self.epsilon, self.oracle, **pool),) for L in c.prefix_lengths)
        return Plan(self.m, tuple(_layout(c)[0]), qs)

    def _aggregate(self, source: SupportSource) -> list[RoundInfo]:
        c = self.config(source.plan.n_users)  # the configuration the plan was made with
        lengths = c.prefix_lengths
        cand_sizes = _layout(c)[1]
        rounds: list[RoundInfo] = []
        cands: Candidates
        for i, L in enumerate(lengths):
            q = source.plan.questions[i][0]
            if i == 0:
                cands = RangeCandidates(1 << L, L)  # D_1 = {0,1}^(gamma+eta)
            else:  # D_i = C_{i-1} x {0,1}^eta
                cands = ExtendCandidates(sort_unique(rounds[-1].kept), lengths[i - 1], c.etas[i])
            if i < len(lengths) - 1:
                rounds.append(self._round(source, q, cands, cand_sizes[i], name=f"round {i + 1}", kind="prefix"))
            else:
                rounds.append(self._final(source, q, cands, name=f"round {i + 1}", kind="prefix"))
        return rounds
