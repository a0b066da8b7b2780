"""Core types shared by the engines and the protocols (layer L3, above the oracles and the analysis).

* :mod:`~ldp.core.question` -- :class:`Question` (one report: a bit range of the
  value, its budget and oracle), :class:`Plan` (the groups and their questions),
  :func:`group_sizes` / :func:`assign_groups` (the one seeded group split);
* :mod:`~ldp.core.oracle_specs` -- the oracle specs a question may name
  (:data:`ORACLES`, :func:`oracle_for`, :func:`report_epsilon_limit`);
* :mod:`~ldp.core.candidates` -- the candidate sets an aggregation step queries;
* :mod:`~ldp.core.selection` -- :func:`select_top`, :func:`scaled_estimate`
  (eq. (2) scaled to the population), :func:`support_threshold`;
* :mod:`~ldp.core.results` -- :class:`RoundInfo`, :class:`HeavyHitterResult`;
* :mod:`~ldp.core.protocol_reports` -- :class:`ProtocolReports` (what a batch of
  users sent; saved, merged, and checked when loaded);
* :mod:`~ldp.core.reportstore` and :mod:`~ldp.core.reportwriter` -- protocol
  reports on disk: a Parquet store appended batch by batch, read lazily
  (:class:`~ldp.core.reportstore.StoredReports`);
* :mod:`~ldp.core.dataset` -- :class:`Dataset`, users' values with their true
  tally and ranking (the one tally type: the count engine counts it).
"""
from .candidates import (
    Candidates,
    ExplicitCandidates,
    ExtendCandidates,
    RangeCandidates,
    join_parts,
    join_products,
)
from .dataset import Dataset
from .oracle_specs import ORACLES, check_oracle, check_pool_size, oracle_for, report_epsilon_limit
from .protocol_reports import ProtocolReports
from .question import (
    ASSIGNMENT,
    MAX_GROUPS,
    MAX_PLAN_BYTES,
    MAX_USERS,
    Plan,
    PlanError,
    Question,
    assign_groups,
    channel_hash,
    group_sizes,
    make_question,
    segment,
)
from .reportstore import StoredReports, open_store
from .results import HeavyHitterResult, RoundInfo
from .selection import scaled_estimate, select_top, support_threshold

__all__ = ["Question", "Plan", "PlanError", "ASSIGNMENT", "MAX_USERS", "MAX_GROUPS", "MAX_PLAN_BYTES",
           "make_question", "group_sizes", "assign_groups", "segment", "channel_hash",
           "ORACLES", "check_oracle", "check_pool_size", "oracle_for", "report_epsilon_limit",
           "Candidates", "RangeCandidates", "ExtendCandidates", "ExplicitCandidates", "join_parts", "join_products",
           "select_top", "scaled_estimate", "support_threshold",
           "RoundInfo", "HeavyHitterResult", "ProtocolReports", "StoredReports", "open_store", "Dataset"]
