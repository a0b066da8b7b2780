"""Heavy-hitter protocols: PEM (section 4.1), SPM (3.2), MCM (3.3), the strawman (3.1);
TreeHist and SFP, the protocols that came after PEM (chapter 08 compares them).

Every protocol is a real client/server protocol:

* ``plan(n, *, rng=None)`` -- what the server publishes first (:class:`Plan`,
  serialisable): everything that depends on the number of users ``n`` (the
  configuration, the groups and their questions, public seeds, each user's
  group);
* ``privatize(values, *, rng=None, plan=plan, users=...)`` -- what the users
  send, **simulated** from one seed (the seed is every simulated user's
  secret), for any batch of users (down to one): each user's group and oracle
  reports (:class:`ProtocolReports`, savable with ``save``/``load``, merged
  with :meth:`ProtocolReports.concat`); batches privatized with the same
  ``rng`` merge into exactly the reports of one batch;
* ``aggregator(plan)`` -- the server of a real deployment (:class:`Aggregator`):
  devices send bytes made by :func:`ldp.client.report` with their own OS
  randomness; each report is checked as it arrives;
* ``aggregate(reports, *, rng=None)`` -- the server side, from the reports alone;
* ``run(values, *, rng=None, engine="protocol")`` -- all three; ``engine="counts"``
  uses the count-level engine of :mod:`ldp.engines` instead (each aggregated
  support drawn from its exact law), with the same plan and group assignment;
* ``source(values, *, rng=None, engine=...)`` and ``identify(source)`` -- the
  two halves of ``run``: the run's support source, then the aggregation on it.

The protocol logic (rounds, candidate building, top-k / threshold release)
is written once per protocol against :class:`ldp.engines.SupportSource`; only
the step producing supports differs between the engines.  The building
blocks (questions, plans, candidates, the selection rule, results) live in
:mod:`ldp.core` and are re-exported here.

Results are :class:`HeavyHitterResult` objects: ``heavy_hitters`` (ranked,
canonical m-bit values), ``estimates`` (unbiased counts scaled to the
population) and per-step diagnostics (``rounds``).
"""
from ..core import (
                    ASSIGNMENT,
                    ORACLES,
                    ExplicitCandidates,
                    ExtendCandidates,
                    HeavyHitterResult,
                    Plan,
                    ProtocolReports,
                    Question,
                    RangeCandidates,
                    RoundInfo,
                    assign_groups,
                    channel_hash,
                    group_sizes,
                    make_question,
                    report_epsilon_limit,
                    scaled_estimate,
                    segment,
                    select_top,
                    support_threshold,
)
from .aggregator import Aggregator
from .base import HeavyHitterProtocol
from .batches import NOISE_BLOCK
from .mcm import MCM, mcm_queries
from .pem import PEM
from .sfp import SFP, sfp_queries
from .sizing import split_bits
from .spm import SPM, spm_queries
from .strawman import Strawman, strawman_sizes
from .treehist import TreeHist
from .twophase import TwoPhaseProtocol

__all__ = [
    "PEM",
    "SPM",
    "MCM",
    "Strawman",
    "TreeHist",
    "SFP",
    "HeavyHitterProtocol",
    "TwoPhaseProtocol",
    "Aggregator",
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
    "sfp_queries",
    "RangeCandidates",
    "ExtendCandidates",
    "ExplicitCandidates",
    "ORACLES",
    "report_epsilon_limit",
    "make_question",
]
