"""Heavy-hitter protocols: PEM (section 4.1), SPM (3.2), MCM (3.3), the strawman (3.1);
TreeHist and SFP, the protocols that came after PEM (issue 14).

Every protocol is a real client/server protocol:

* ``plan(n, rng=None)`` -- what the server publishes first (:class:`Plan`,
  serialisable): everything that depends on the number of users ``n`` (the
  configuration, the groups and their questions, public seeds, each user's
  group);
* ``privatize(values, rng=None, plan=plan, users=...)`` -- what the users
  send, for any batch of users (down to one): each user's group and OLH
  reports (:class:`ProtocolReports`, savable with ``save``/``load``, merged
  with :meth:`ProtocolReports.concat`); batches privatized with the same
  ``rng`` merge into exactly the reports of one batch;
* ``aggregate(reports, rng=None)`` -- the server side, from the reports alone;
* ``run(values, rng=None, engine="protocol")`` -- all three; ``engine="counts"``
  uses the count-level engine of :mod:`ldp.engines` instead (each aggregated
  support drawn from its exact law), with the same plan and group assignment.

The protocol logic (rounds, candidate building, top-k / threshold release)
is written once per protocol against :class:`ldp.engines.SupportSource`; only
the step producing supports differs between the engines.

Results are :class:`HeavyHitterResult` objects: ``heavy_hitters`` (ranked,
canonical m-bit values), ``estimates`` (unbiased counts scaled to the
population) and per-step diagnostics (``rounds``).
"""
from ._base import NOISE_BLOCK, HeavyHitterProtocol, split_bits
from ._core import (ASSIGNMENT, ExplicitCandidates, ExtendCandidates, Plan, Question, RangeCandidates,
                    assign_groups, channel_hash, group_sizes, scaled_estimate, segment, select_top,
                    support_threshold)
from ._result import HeavyHitterResult, ProtocolReports, RoundInfo
from .mcm import MCM, mcm_queries
from .pem import PEM
from .spm import SPM, spm_queries
from .strawman import Strawman, strawman_sizes
from ._oracle_question import ORACLES, make_question, report_epsilon_limit
from .sfp import SFP, sfp_queries
from .treehist import TreeHist

__all__ = [
    "PEM",
    "SPM",
    "MCM",
    "Strawman",
    "TreeHist",
    "SFP",
    "HeavyHitterProtocol",
    "HeavyHitterResult",
    "RoundInfo",
    "ProtocolReports",
    "Plan",
    "Question",
    "NOISE_BLOCK",
    "ASSIGNMENT",
    "assign_groups",
    "group_sizes",
    "select_top",
    "scaled_estimate",
    "support_threshold",
    "channel_hash",
    "segment",
    "split_bits",
    "spm_queries",
    "mcm_queries",
    "strawman_sizes",
    "RangeCandidates",
    "ExtendCandidates",
    "ExplicitCandidates",
    "ORACLES",
    "report_epsilon_limit",
    "make_question",
    "sfp_queries",
]
