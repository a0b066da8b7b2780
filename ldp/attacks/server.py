r"""The server's side of an attacked run: its checks, its defence, and when an attack counts as planted.

:class:`Server` is what a deployment runs between receiving the reports and
publishing a release, in this order:

1. the **index test** (:func:`ldp.attacks.index_uniformity`) of the FLH
   questions' public pool indices, on every report received;
2. the aggregation, then the **detector** (:class:`ldp.attacks.SupportCountDetector`)
   against that first release: the flagged users' reports are dropped
   (:meth:`~ldp.attacks.SupportCountDetector.clean`) and the server aggregates
   again (same tie-breaking stream);
3. the **consistency check** (:func:`ldp.attacks.consistency_check`) of that release;
4. the **defence** on the aggregate, if any (:func:`ldp.attacks.recover`
   with the share ``guard`` of fake reports it guards against): the values
   whose count may be the fake users' doing are withheld.

An **alarm** is raised when the index test flags a question, when the
consistency check flags a released value, or when the detector flags more
users than its false-positive rate explains: more than the
``1 - alpha`` quantile of ``Binomial(N, detector.alpha)`` among the ``N``
reports (the detector flags an honest user with probability at most
``detector.alpha``, so an honest run raises this alarm with probability at
most ``alpha``).  The other two alarms have a false-alarm rate of ``alpha``
too (the index test up to its chi-square approximation; the consistency
check's is measured, not guaranteed, see its notes).

When an attack counts as planted
--------------------------------
:meth:`Server.run` returns the run's :class:`ldp.attacks.Outcome` of the
**published** release (after the cleaning and the defence), with ``alarm``
set.  :func:`ldp.attacks.smallest_fraction` with ``server=`` counts a run as
a success when that release holds at least ``need`` targets **and** no alarm
was raised: the attacker's reports must pass every check that is on, and the
detector's cleaning and the defence are applied before the release.  With
every check off and no defence the run is the plain one
(:meth:`ldp.attacks.Scenario.run`).

Both engines
------------
With ``engine="protocol"`` every check reads the real reports: the honest
users privatize their values, the fake users' crafted reports are merged in.
With ``engine="counts"`` (the default: far cheaper, and what a search over
many sizes affords) the release comes from the count engine, and the checks
read the crafted reports, which exist, and draw the honest users' part from
its law:

* index test: the honest users' indices of each FLH question are uniform on
  the pool, so their counts are a multinomial draw (exact), to which the
  crafted reports' own indices are added;
* detector: the crafted reports are tested against the release exactly; the
  honest users flagged are drawn per group as ``Binomial(honest users,
  min(1, sum of the group's questions' tails))``, each tail the detector's
  own sample estimate of the worst case over the user's value
  (:meth:`~ldp.attacks.SupportCountDetector.null_mean`; its confidence bound
  is loose for small tails, a few times the real rate, and would raise the
  alarm where reports do not); the cleaning drops the flagged fake users
  (the count engine runs again without them) but not the few flagged honest
  users (at most a share ``detector.alpha`` of them);
* consistency check and defence: on the release, as with reports.

``tests/test_attacks_adaptive.py`` checks that the two engines agree on the
attacks the checks catch and on those they miss.
"""
from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
from scipy import stats

from ..core import ProtocolReports
from ..engines import ReportSupport
from ..validation import check_fraction, check_int, check_real, check_rng
from .defences import SupportCountDetector, consistency_check, flagged_values, index_counts_test, index_uniformity
from .recover import recover
from .simulate import Outcome, Scenario

__all__ = ["Server"]


class Server:
    """What the server checks and defends before it releases (module notes).

    Parameters
    ----------
    detector : bool or SupportCountDetector, default True
        Run a detector (``True``: ``SupportCountDetector(alpha, seeds=seeds)``) and clean its flags.
    consistency : bool, default True
        Run the consistency check of the release.
    index : bool, default True
        Run the index test (FLH questions only; ignored without them).
    guard : float, optional
        The defence: :func:`ldp.attacks.recover` with ``eta=guard``; default off.
    alpha : float, default 1e-3
        Each check's false-alarm level, the detector's false-positive rate and the defence's level.
    seeds : int, default 20_000
        The detector's null sample (:class:`ldp.attacks.SupportCountDetector`).
    rng : None, int, SeedSequence, BitGenerator or Generator
        The server's own randomness (the detector's null sample).

    Examples
    --------
    A count-mean sketch report for 16 targets is flagged and dropped; one for 5 of them passes:

    >>> import ldp
    >>> from ldp.attacks import Attack, Scenario, Server
    >>> data = ldp.datasets.exponential(n=100_000, m=64, rng=0)
    >>> pem = ldp.PEM(2.0, 16, 64, oracle="CMS")
    >>> for cap in (None, 5):
    ...     out = Server(rng=2).run(Scenario(pem, data, Attack("MGA", targets=16, cap=cap), rng=1), 0.12, rng=3)
    ...     print(cap, out.alarm, out.checks["planted_before_cleaning"], out.planted)
    None True 16 0
    5 False 15 15
    """

    def __init__(self, *, detector=True, consistency: bool = True, index: bool = True, guard: float | None = None,
                 alpha: float = 1e-3, seeds: int = 20_000, rng=None):
        self.alpha = check_fraction(alpha, "alpha")
        for name, flag in (("consistency", consistency), ("index", index)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        if isinstance(detector, SupportCountDetector):
            self.detector: SupportCountDetector | None = detector
        elif isinstance(detector, (bool, np.bool_)):
            self.detector = (SupportCountDetector(self.alpha, seeds=check_int(seeds, "seeds", 100), rng=rng)
                             if detector else None)
        else:
            raise TypeError(f"detector must be True, False or a SupportCountDetector, got {detector!r}")
        self.consistency = bool(consistency)
        self.index = bool(index)
        if guard is not None:
            guard = check_real(guard, "guard", lo=0.0)
            if not guard < 1:
                raise ValueError(f"guard must be a real number in [0, 1) (a share of fake reports), got {guard!r}")
        self.guard = guard

    def __repr__(self) -> str:
        return (f"Server(detector={self.detector is not None}, consistency={self.consistency}, index={self.index}, "
                f"guard={self.guard}, alpha={self.alpha})")

    @property
    def checks_on(self) -> bool:
        """Whether any check is on (the defence aside)."""
        return self.detector is not None or self.consistency or self.index

    def run(self, scenario: Scenario, fake, *, engine: str = "counts", rng=None) -> Outcome:
        """One run of ``scenario`` with ``fake`` fake users, judged by this server (module notes).

        Parameters
        ----------
        scenario : Scenario
        fake : int or float
            Fake users (a count or a share of ``n``).
        engine : {"counts", "protocol"}
            The engine of the run (module notes: what the count engine draws of the checks).
        rng : None, int, SeedSequence, BitGenerator or Generator
            The run's seed: with an int or a SeedSequence the first release is exactly
            ``scenario.run(fake, engine=engine, rng=rng)``'s (so searches with and without checks are
            paired), the cleaned one reuses its streams, and the checks draw from a stream of their own.

        Returns
        -------
        Outcome
            The published release; ``alarm`` and ``checks`` (``index_flagged``, ``detector_flagged``,
            ``detector_fake``, ``detector_limit``, ``planted_before_cleaning``, ``consistency_flagged``,
            ``withheld``, as the checks that are on give them).
        """
        if not isinstance(scenario, Scenario):
            raise TypeError(f"scenario must be an ldp.attacks.Scenario, got {type(scenario).__name__}")
        if engine not in ("counts", "protocol"):
            raise ValueError(f"engine must be 'counts' or 'protocol', got {engine!r}")
        f = scenario.count(fake)
        s_null = check_rng(rng).spawn(3)[2]  # children 0 and 1: the run's (Scenario.source), 2: the checks'
        protocol, plan = scenario.protocol, scenario.plan
        flh = any(q.pool_size for qs in plan.questions for q in qs)
        checks: dict = {}
        alarm = False
        fake_users = scenario.users(f)
        reports: ProtocolReports | None
        src = scenario.source(f, engine=engine, rng=rng)
        res = protocol.identify(src)
        if engine == "protocol":
            reports = cast(ReportSupport, src).reports
        else:
            reports = scenario.fake_reports(f)  # the only reports a count-engine run has: the crafted ones
        if self.index and flh:
            flagged = int(self._index_test(scenario, reports, f, engine, s_null)["flagged"].sum())
            checks["index_flagged"] = flagged
            alarm |= flagged > 0
        if self.detector is not None:
            d = self.detector.detect(reports, res) if reports is not None else None
            fake_flagged = np.intersect1d(d.users[d.flagged], fake_users) if d is not None else np.zeros(0, int)
            if engine == "protocol":
                n_flagged = d.n_flagged if d is not None else 0
            else:  # the honest users' false positives: drawn at the detector's bound for the release
                th = self.detector.thresholds(plan, res)
                n_flagged = int(fake_flagged.shape[0]) + self._honest_flags(scenario, f, th, s_null)
            limit = int(stats.binom.ppf(1 - self.alpha, scenario.data.n, self.detector.alpha))
            checks.update(detector_flagged=n_flagged, detector_fake=int(fake_flagged.shape[0]), detector_limit=limit,
                          planted_before_cleaning=scenario.outcome(res, f).planted)
            alarm |= n_flagged > limit
            if engine == "protocol" and n_flagged and d is not None and reports is not None:
                again = check_rng(rng).spawn(2)[1]  # the first release's tie-breaking stream (Scenario.source)
                res = protocol.identify(ReportSupport(self.detector.clean(reports, d), rng=again))
            elif engine == "counts" and fake_flagged.shape[0]:
                res = protocol.identify(scenario.source(f, engine="counts", rng=rng, drop=fake_flagged))
        if self.consistency:
            flagged = int(flagged_values(res, consistency_check(res, alpha=self.alpha)).sum())
            checks["consistency_flagged"] = flagged
            alarm |= flagged > 0
        if self.guard is not None:
            rec = recover(res, eta=self.guard, alpha=self.alpha)
            checks["withheld"] = rec.n_withheld
            res = rec.result
        return scenario.outcome(res, f, alarm=bool(alarm), checks=checks)

    def _index_test(self, scenario: Scenario, reports, f: int, engine: str, rng) -> pd.DataFrame:
        """The index test of the run's reports; with the count engine the honest users' indices are drawn."""
        if engine == "protocol":
            return index_uniformity(reports, alpha=self.alpha)
        plan = scenario.plan
        fake_groups = np.bincount(plan.labels()[scenario.users(f)], minlength=plan.n_groups)
        counts = {}
        for g, qs in enumerate(plan.questions):
            honest = int(plan.sizes()[g] - fake_groups[g])
            for j, q in enumerate(qs):
                if not q.pool_size:
                    continue
                h = q.oracle().pool_size
                cnt = rng.multinomial(honest, np.full(h, 1.0 / h)).astype(np.int64)  # honest: uniform, exactly
                if reports is not None:
                    cnt += np.bincount(reports.group_reports(g)[j].index.astype(np.int64), minlength=h)
                counts[g, j] = cnt
        return index_counts_test(counts, alpha=self.alpha)

    @staticmethod
    def _honest_flags(scenario: Scenario, f: int, thresholds: pd.DataFrame, rng) -> int:
        """Honest users flagged (count engine): per group ``Bin(honest, min(1, sum of its questions' tails))``.

        Each question's tail is the detector's sample mean of the worst-case honest tail at its threshold.
        """
        plan = scenario.plan
        fake_groups = np.bincount(plan.labels()[scenario.users(f)], minlength=plan.n_groups)
        live = thresholds[thresholds["threshold"] <= thresholds["answers"]]
        tail = live.groupby("group")["mean"].sum().reindex(range(plan.n_groups), fill_value=0.0).to_numpy()
        honest = np.asarray(plan.sizes()) - fake_groups
        return int(rng.binomial(honest, np.minimum(tail, 1.0)).sum())
