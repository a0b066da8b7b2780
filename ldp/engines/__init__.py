r"""The two engines behind every heavy-hitter protocol: where supports come from.

Each protocol (:mod:`ldp.protocols`) is written once, against the
:class:`SupportSource` interface: its rounds, candidate building, top-k and
threshold rules are shared, and only the step that produces the *supports*
(the number of reports supporting each queried candidate, paper section
2.2.2) differs between the engines.

* :class:`ReportSupport` -- the **protocol engine**: real user reports
  (:class:`ldp.core.ProtocolReports`), aggregated by calling the oracle's
  ``support`` (e.g. :meth:`ldp.OLH.support`) on them.  This is the
  client/server protocol.
* :class:`StreamSupport` and :class:`DaskSupport` -- the protocol engine over a
  report store on disk (:mod:`ldp.core.reportstore`): streamed in chunks on one
  machine, or partition by partition on the workers of a dask cluster; both give
  the in-memory result bit for bit (:mod:`~ldp.engines.stream`,
  :mod:`~ldp.engines.cluster`).
* :class:`CountSupport` -- the **count-level engine**: it never perturbs a
  single user.  From the true counts of each group's answers it draws every
  aggregated support from its exact law (derived below), which is orders of
  magnitude faster and is what the experiments use for repetitions.

Both engines use the same group assignment
(:func:`ldp.core.assign_groups` with the same seed), the same selection
rule (:func:`ldp.core.select_top`, ties broken uniformly at random) and
the same estimators.

Modules: :mod:`~ldp.engines.base` (the :class:`SupportSource` interface),
:mod:`~ldp.engines.reports` (:class:`ReportSupport`), :mod:`~ldp.engines.stream`
(:class:`StreamSupport`), :mod:`~ldp.engines.cluster` (:class:`DaskSupport`),
:mod:`~ldp.engines.counts` (:class:`CountSupport`, :func:`prepare`),
:mod:`~ldp.engines.groupcounts` (each group's true counts, as sparse rows),
:mod:`~ldp.engines.prefix_lookup` (a prefix question's held candidates found from the candidates' side),
:mod:`~ldp.engines.sampling` (the sparse exact binomial draws), :mod:`~ldp.engines.crafted`
(:class:`CraftedUsers`: users whose reports are crafted, for the attacks of :mod:`ldp.attacks`).

Laws of the aggregated quantities
---------------------------------
Notation: a group of :math:`N` users answers a question (a prefix, a
segment, a (channel, block) pair or the whole value) with OLH at budget
:math:`\varepsilon'`, so :math:`p = e^{\varepsilon'}/(e^{\varepsilon'}+d'-1)`,
:math:`q = 1/d'`.  For a candidate answer :math:`c`, :math:`N_c` users of the
group hold it.

**1. One support (PEM prefixes, SPM / strawman segments, MCM channel
blocks, the final whole-value test).**  A report of a holder of :math:`c`
supports :math:`c` with probability :math:`p`; the report of any other user
supports :math:`c` with probability :math:`q` whatever her value (the hash is
uniform and drawn independently of the value: :math:`\Pr[H(c)=y]=q` for
:math:`y = \mathrm{GRR}(H(v))`, :math:`v \ne c`).  Users are independent, so

.. math:: I_c \sim \mathrm{Bin}(N_c, p) + \mathrm{Bin}(N - N_c, q).

For two distinct candidates :math:`c \ne c'`, a holder of :math:`c` supports
both with probability :math:`p \cdot q` (pairwise independence of the hash),
so her covariance is 0; a user holding neither supports both with probability
:math:`q^2` when :math:`(H(c), H(c'), H(v))` are independent.  OLH's family is
only guaranteed pairwise independent, so the protocol's supports are
uncorrelated up to that caveat (``tests/test_engines.py`` checks the sample
correlation is 0 within its sampling error).  The count engine draws distinct
candidates **independently**; any higher-order dependence of the protocol is
not reproduced.

*Sparse exact sampling.*  Most queried candidates are held by nobody
(:math:`N_c = 0`): their supports are i.i.d. :math:`\mathrm{Bin}(N, q)`.  The
selection only needs those that can enter the top :math:`K` (or reach a
threshold), so for :math:`N_0` such candidates the engine draws, for a
threshold :math:`t`, the number :math:`M \sim \mathrm{Bin}(N_0, \Pr[X \ge t])`
of candidates at or above :math:`t`, their values from the law of
:math:`X \mid X \ge t`, and their identities as a uniformly random
:math:`M`-subset; :math:`t` is lowered band by band (conditioning on
:math:`X < t`) until at least :math:`K` are drawn.  Every undrawn candidate
has support below the :math:`K`-th largest, so the selected set and its
supports have exactly the law of the full draw (tie keys are i.i.d. uniform
for all candidates in both engines).

**2. SPM segment pairs** (appendix "Simpler Joint Estimation").  A user of
pair group :math:`(\alpha, \beta)` sends two independent OLH reports; pair
:math:`(a, b)` is supported when report 1 supports :math:`a` and report 2
supports :math:`b`.  With :math:`n_{ab}` users holding both, :math:`n_a`
holding :math:`a` in segment :math:`\alpha`, :math:`n^b` holding :math:`b` in
:math:`\beta`, the four classes of users support the pair with probabilities
:math:`p^2, pq, qp, q^2`:

.. math:: I_{ab} \sim \mathrm{Bin}(n_{ab}, p^2) + \mathrm{Bin}(n_a - n_{ab}, pq)
          + \mathrm{Bin}(n^b - n_{ab}, qp) + \mathrm{Bin}(N - n_a - n^b + n_{ab}, q^2).

The joint estimator subtracts the group's own segment estimates, which use
the *same* reports, so :math:`I_{ab}` is positively correlated with the
segment supports :math:`J_a, J^b` (:math:`\mathrm{Cov}(I_{ab}, J_a) =
\sum_u r_u p_u (1-p_u)`).  The engine therefore draws the triple
:math:`(J_a, J^b, I_{ab})` jointly and exactly: write
:math:`J_a = x_A + x_{\bar A}` (successes among holders / non-holders of
:math:`a`); given them, the supporting users are uniform subsets of each
class, so their split over the four cells :math:`AB, A\bar B, \bar A B,
\bar A\bar B` is hypergeometric; likewise for :math:`J^b`; and the overlap of
two independent uniform subsets of sizes :math:`s_1, s_2` of a cell of size
:math:`N_{cell}` is :math:`\mathrm{Hypergeometric}(s_1, N_{cell} - s_1, s_2)`.
:math:`I_{ab}` is the sum of the four overlaps.  The segment totals over all
groups that report :math:`\alpha` are drawn first (law 1, split into holder
and non-holder successes); each total is split over the groups by a
multivariate hypergeometric draw (successes are a uniform subset of each
class), once per kept pattern, and shared by all pairs that use it.

*Where the joint law differs from the protocol.*  Each pair's triple
:math:`(J_a, J^b, I_{ab})` has the protocol's exact law, but two pairs that
share a pattern, :math:`(a, b)` and :math:`(a, b')`, are drawn conditionally
independent given the segment supports, whereas in the protocol both are
sub-counts of the same set of users supporting :math:`a`.  Their covariance
is reproduced to leading order (through the shared :math:`x_A, x_{\bar A}`:
:math:`N r r' p(1-p)` for non-holders in both cases) but not exactly.

**3. MCM** needs nothing new: a user of block group :math:`\ell` answers the
pair :math:`(H(v), v[\ell])` encoded as one integer, so every
(channel, pattern) candidate follows law 1 with :math:`N_c` the number of
users of the group in that channel with that block; the per-channel argmax
is the top-1 of each block of :math:`2^b` candidates.

**4. FLH** (:class:`ldp.FLH`, a public pool of :math:`h` hash functions).
Law 1 does not hold: given the plan's pool, a holder of :math:`v \ne c`
supports :math:`c` with a probability that depends on how many pool members
make :math:`v` and :math:`c` collide, the same for all :math:`N_v` holders of
:math:`v`, so the supports of different candidates are correlated through the
pool (a frequent value colliding with several) and not binomial.  But the
aggregator reads the reports only through their tally :math:`T[j, y]` (reports
with pool index :math:`j` and symbol :math:`y`): :math:`I_c = \sum_j T[j, H_j(c)]`.
The engine draws :math:`T` exactly: the holders of each answer spread over the
pool as :math:`\mathrm{Multinomial}(N_a, 1/h)`, and GRR on :math:`[d']` is
"keep with probability :math:`\alpha = (p d' - 1)/(d' - 1)`, else uniform", so
:math:`T[j, x] = \mathrm{Bin}(T_0[j, x], \alpha) + \mathrm{Multinomial}(R_j, 1/d')_x`
(:meth:`ldp.FLH.draw_tally`).  The supports computed from it have the joint law
of the protocol's, correlations included; the tally is drawn once per question
and run and reused.  The cost is the protocol's aggregation (:math:`h |C|` hash
evaluations per query set) plus :math:`O(\sum_a \min(N_a, h))` draws instead of
privatizing every user: for FLH the count engine saves the reports, not the
server's work.

**Group split.**  Both engines split users with
:func:`ldp.core.assign_groups` (same seed -> same groups); the engine
then counts each group's answers exactly.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 2.2.2, 3.2, 4.2.3 and the appendix.
"""
from .base import Selection, SupportSource
from .cluster import DaskSupport, report_source, scheduler_client
from .counts import CountSupport, prepare
from .crafted import CraftedUsers
from .groupcounts import GroupCounts
from .reports import ReportSupport
from .sampling import binomial_tail_table, iid_binomial_top, sum_tail_table
from .stream import StreamSupport

__all__ = [
    "Selection",
    "SupportSource",
    "ReportSupport",
    "StreamSupport",
    "DaskSupport",
    "scheduler_client",
    "report_source",
    "CountSupport",
    "CraftedUsers",
    "GroupCounts",
    "prepare",
    "binomial_tail_table",
    "iid_binomial_top",
    "sum_tail_table",
]
