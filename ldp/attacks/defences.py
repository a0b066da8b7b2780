r"""What a server can do about fake users, and what it costs.

Two checks the server runs on its own data, after a release:

* :class:`SupportCountDetector` -- a statistical test of each *report*: how
  many of the released values' answers does it support?  An honest report
  supports its own value with probability ``p`` and another with ``q``; a
  maximal-gain report crafted for several targets supports improbably many.
  The detector states a false-positive rate ``alpha`` (per user) and keeps it:
  the null distribution is computed, not assumed (below), and the threshold
  is the smallest count whose tail is at most ``alpha`` with confidence
  ``1 - delta``.  Flagged users' reports are dropped and the server
  aggregates again (:meth:`SupportCountDetector.clean`).
* :func:`consistency_check` -- a test of the *release*: a value's prefix (or
  part) is held by at least as many users as the value, and a prefix by at
  least as many as its kept extensions together.  Estimates from different
  groups of users that break this by more than their noise allows flag the
  released values involved (PEM's rounds, TreeHist's levels, the parts of the
  two-phase protocols).

And one of the reports' public parts, for FLH: :func:`index_uniformity` --
an honest device draws her pool index uniformly, whatever her value; a
maximal-gain search for several targets prefers the members on which they
collide, and the indices of many crafted reports pile up.

The detector's null distribution
--------------------------------
For one question, let ``a_1 .. a_A`` be the distinct answers of the released
values.  An honest user with any fixed value ``v`` draws her hash seed
uniformly and independently of ``v``; given the seed ``s``, the answers fall
into the oracle's cells ``h_j = H_s(a_j)`` and her output is randomized by the
oracle's known law (OLH: ``y = H_s(v)`` with probability ``p``, each other
cell with ``(1 - p) / (d' - 1)``; HR: ``e^eps / Z`` inside ``C_{H_s(v)}``, ``1 / Z``
outside; CMS: independent bits), so ``P(count >= c | s)`` is exact
(:mod:`ldp.attacks.kernels`).  The server averages it over ``M`` seeds drawn
with the real hash family, for a user holding each ``a_j`` and for one holding
none of them, and bounds each average from above at confidence ``1 - delta``
(Chernoff's bound for means of ``[0, 1]`` variables, Bonferroni over the
``A + 1`` cases).  No independence beyond the seed being uniform is assumed.
FLH's honest index is uniform on its public pool, so the server draws ``M``
pool members instead of seeds: the bound is then the tail given the pool.
For a non-holder it is computed for one value outside the answers; under FLH
a value that collides with many answers on many members of the fixed pool has
a heavier tail (:mod:`ldp.oracles.flh`'s support law), which this bound does
not cover.
A user who sends several reports (the two-phase protocols) is flagged when
any report reaches its question's threshold, each question tested at
``alpha`` divided by the number of her reports (a union bound).

What no check stops
-------------------
A fake user who runs the honest randomizer on a target (input manipulation)
sends a report with exactly an honest holder's law: no test of reports can
flag her, and enough of them (about the ``k``-th heavy hitter's count, see
:mod:`ldp.attacks.threat`) plant any value.  A maximal-gain report for one
target is, report by report, an honest holder's output that always supports
its value; it too passes the detector.  The consistency check catches
fake users who skip groups (:func:`ldp.attacks.fake_users` with
``placement="chosen"``), not those the plan spreads evenly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ..core import HeavyHitterResult, ProtocolReports, Question
from ..metrics import f1
from ..oracles import CMS, FLH, HR, OLH, FLHReports
from ..validation import check_fraction, check_int, check_rng
from ..values import as_values, match_sorted, prefix, sort_unique, to_chunks32, value_keys
from . import kernels
from .crafting import support_matrix
from .fake import random_values
from .simulate import planted as _planted

__all__ = ["SupportCountDetector", "Detection", "consistency_check", "flagged_values", "chernoff_upper",
           "detector_trial", "detector_rates", "index_uniformity", "index_counts_test", "estimate_variance"]


def chernoff_upper(mean: float, M: int, delta: float) -> float:
    """Upper confidence bound for the mean of ``M`` i.i.d. ``[0, 1]`` variables at level ``1 - delta``.

    The largest ``mu`` with ``M KL(mean || mu) <= ln(1 / delta)`` (Chernoff's
    bound, which holds for any law on ``[0, 1]``: Hoeffding 1963, Theorem 1).
    """
    mean = min(max(float(mean), 0.0), 1.0)
    target = math.log(1.0 / delta) / M
    if mean >= 1.0:
        return 1.0

    def excess(mu: float) -> float:
        kl = (mean * math.log(mean / mu) if mean > 0 else 0.0) + (1 - mean) * math.log((1 - mean) / (1 - mu))
        return kl - target

    hi = 1.0 - 1e-15
    if excess(hi) <= 0:
        return 1.0
    return float(optimize.brentq(excess, max(mean, 1e-300) * (1 + 1e-12) + 1e-300, hi))


@dataclass(frozen=True, eq=False)
class Detection:
    """What :meth:`SupportCountDetector.detect` found.

    Attributes
    ----------
    users : numpy.ndarray
        Plan indices of the reports tested.
    flagged : numpy.ndarray
        Whether each was flagged.
    thresholds : pandas.DataFrame
        Per (group, question): the released answers ``A``, the threshold
        ``c`` (a report supporting ``c`` or more is flagged; ``A + 1``: never),
        the per-question level, the bound on the null tail at ``c`` and its
        sample mean (``mean``: an estimate, not a bound).
    alpha : float
        The stated false-positive rate per user.
    """

    users: np.ndarray
    flagged: np.ndarray
    thresholds: pd.DataFrame
    alpha: float

    @property
    def n_flagged(self) -> int:
        return int(np.count_nonzero(self.flagged))

    def rate(self, users) -> float:
        """Share of the given plan indices that were flagged (e.g. the honest users: the false-positive rate)."""
        u = np.asarray(users, dtype=np.int64)
        hit = np.isin(self.users[self.flagged], u)
        return float(np.count_nonzero(hit)) / max(1, u.shape[0])


class SupportCountDetector:
    """Flag reports that support improbably many of the released values (see the module notes).

    Parameters
    ----------
    alpha : float, default 1e-3
        The false-positive rate it states and keeps: the probability that an
        honest user (any value) is flagged, in (0, 1).
    seeds : int, default 100_000
        Hash seeds drawn to compute the null distribution of each question.
    delta : float, default 1e-3
        One minus the confidence of the bound on the null tail.
    rng : None, int, SeedSequence, BitGenerator or Generator
        The server's own randomness for the seeds (public; a simulation of
        honest users' seeds, not anyone's private coins).
    """

    def __init__(self, alpha: float = 1e-3, *, seeds: int = 100_000, delta: float = 1e-3, rng=None):
        self.alpha = check_fraction(alpha, "alpha")
        self.seeds = check_int(seeds, "seeds", 100)
        self.delta = check_fraction(delta, "delta")
        self._rng = check_rng(rng)
        self._tails: dict = {}
        self._means: dict = {}

    def null_mean(self, question: Question, answers) -> np.ndarray:
        """The sample means behind :meth:`null_tail` (no confidence bound), worst case over the user's value.

        An estimate of the honest tail, not a bound: what a simulation of honest flags may draw from.
        """
        self.null_tail(question, answers)
        a = sort_unique(as_values(answers, question.oracle().m, name="answers"))
        return self._means[(question, value_keys(a).tobytes())]

    def null_tail(self, question: Question, answers) -> np.ndarray:
        """Upper bounds on ``P(an honest report supports >= c of the answers)``, ``c = 0 .. A + 1``.

        The worst case over the user's value (one of the answers, or none).

        Parameters
        ----------
        question : Question
            The question the reports answer (its oracle: OLH, HR or CMS).
        answers : array_like
            Distinct answers (canonical ``question.width``-bit values).
        """
        o = question.oracle()
        a = sort_unique(as_values(answers, o.m, name="answers"))
        key = (question, value_keys(a).tobytes())
        if key in self._tails:  # computed once per question and answer set (the same bound every time)
            return self._tails[key]
        A = a.shape[0]
        outside = a[:1]
        # a value holding none of the answers; when the answers are every value of the width (a short prefix:
        # nobody holds none), answer 0 stands in for it, and that case repeats case 0 (the bound is unchanged)
        every = o.m < 64 and A >= 1 << o.m
        while not every and np.isin(value_keys(outside), value_keys(a)).any():
            outside = random_values(o.m, 1, rng=self._rng)
        vals = np.concatenate([a, outside]) if a.ndim == 1 else np.vstack([a, outside])
        chunks = np.ascontiguousarray(to_chunks32(vals, o.m))
        if isinstance(o, FLH):  # an honest index is uniform on the public pool: draw members, not seeds
            seeds = np.ascontiguousarray(o.seeds[self._rng.integers(0, o.pool_size, size=self.seeds)])
        else:
            seeds = self._rng.integers(0, 2**64, size=self.seeds, dtype=np.uint64)
        cells = kernels.hash_cells(seeds, chunks, o.cells)
        if isinstance(o, (OLH, FLH)):
            sums = kernels.olh_null_tails(cells, o.d_prime, o.p)
        elif isinstance(o, HR):
            sums = kernels.hr_null_tails(cells, o.blocks, o.block_size, math.exp(o.epsilon), o.normalizer)
        elif isinstance(o, CMS):
            sums = kernels.cms_null_tails(cells, o.p, o.flip)
        else:  # pragma: no cover - the protocols' oracles are hashed
            raise TypeError(f"the detector needs a hashed oracle (OLH, HR, CMS, FLH), got {type(o).__name__}")
        means = sums / self.seeds
        d = self.delta / (A + 1)
        bound = np.array([[chernoff_upper(x, self.seeds, d) if 0 < c <= A else (1.0 if c == 0 else 0.0)
                           for c, x in enumerate(row)] for row in means]).max(axis=0)
        bound.flags.writeable = False
        worst = means.max(axis=0)
        worst.flags.writeable = False
        self._tails[key], self._means[key] = bound, worst
        return bound

    def thresholds(self, plan, result: HeavyHitterResult) -> pd.DataFrame:
        """The threshold of every (group, question) for the released values of ``result``."""
        rows = []
        hh = result.heavy_hitters
        for g, qs in enumerate(plan.questions):
            level = self.alpha / len(qs)
            for j, q in enumerate(qs):
                a = sort_unique(q.answer(hh, result.m)) if len(result) else None
                A = 0 if a is None else int(a.shape[0])
                if A == 0:
                    rows.append({"group": g, "question": j, "answers": 0, "threshold": 1, "level": level,
                                 "tail": 0.0, "mean": 0.0})
                    continue
                tail = self.null_tail(q, a)
                ok = np.flatnonzero(tail[1:] <= level) + 1
                c = int(ok[0]) if ok.size else A + 1
                mean = self.null_mean(q, a)
                rows.append({"group": g, "question": j, "answers": A, "threshold": c, "level": level,
                             "tail": float(tail[c]) if c <= A else 0.0,
                             "mean": float(mean[c]) if c <= A else 0.0})
        return pd.DataFrame(rows)

    def detect(self, reports: ProtocolReports, result: HeavyHitterResult) -> Detection:
        """Test every report of ``reports`` against the release ``result`` (made from them).

        Returns
        -------
        Detection
        """
        th = self.thresholds(reports.plan, result)
        flagged = np.zeros(reports.n, dtype=bool)
        hh = result.heavy_hitters
        for row in th.itertuples():
            if row.answers == 0 or row.threshold > row.answers:
                continue
            g, j = int(row.group), int(row.question)
            q = reports.plan.questions[g][j]
            r = reports.group_reports(g)[j]
            if r.n == 0:
                continue
            cnt = support_matrix(q.oracle(), r, sort_unique(q.answer(hh, result.m))).sum(axis=1)
            where = np.flatnonzero(reports.labels == g)  # the group's users, in report order
            flagged[where[cnt >= row.threshold]] = True
        return Detection(reports.users.copy(), flagged, th, self.alpha)

    @staticmethod
    def clean(reports: ProtocolReports, detection: Detection) -> ProtocolReports:
        """``reports`` without the flagged users (to aggregate again)."""
        keep = ~detection.flagged
        rows = [[r[keep[reports.labels == g]] for r in reports.group_reports(g)] for g in range(reports.plan.n_groups)]
        return ProtocolReports(reports.protocol, reports.params, reports.plan, reports.labels[keep], rows,
                               users=reports.users[keep])


def estimate_variance(question: Question, n_users: int, n: int, est: np.ndarray) -> np.ndarray:
    """Variance of population-scaled estimates from one step (eq. (2)'s estimator, the count term included).

    Parameters
    ----------
    question : Question
        The step's question (its oracle gives ``p`` and ``q``).
    n_users : int
        Reports the step aggregated.
    n : int
        The population the estimates are scaled to.
    est : array_like
        The step's estimates, scaled to ``n``; each answer's true count is taken as its estimate, clipped to
        ``[0, n_users]``.

    Returns
    -------
    numpy.ndarray
        The variance of each estimate, in the population's scale.
    """
    o = question.oracle()
    p, q = o.p, o.q
    cnt = np.clip(np.asarray(est, dtype=float) * n_users / n, 0.0, n_users)
    return (n / n_users) ** 2 * (cnt * p * (1 - p) + (n_users - cnt) * q * (1 - q)) / (p - q) ** 2


def consistency_check(result: HeavyHitterResult, *, alpha: float = 1e-3) -> pd.DataFrame:
    """Test the release against the estimates of earlier steps (see the module notes).

    Two kinds of test, each one-sided with the normal approximation of the
    estimates (eq. (2) and its variance, the count term included), at level
    ``alpha`` divided by the number of tests (Bonferroni):

    * **part**: for a released value ``v`` and an earlier step whose kept
      answers include ``v``'s answer ``a`` (its prefix, segment, block or
      fragment): ``est(v) - est(a)`` should not be significantly positive;
    * **children**: for consecutive prefix steps (PEM's rounds, TreeHist's
      levels and final step) and a kept prefix ``P``: the estimates of its
      kept extensions in the next step should not sum to significantly more
      than ``est(P)``.

    The estimates of the kept candidates are biased upwards by their
    selection (the largest of many noisy estimates), which the test ignores:
    its false-positive rate is measured, not guaranteed.

    Parameters
    ----------
    result : HeavyHitterResult
        A release with its steps (``result.rounds``).
    alpha : float
        Family-wise level of the tests.

    Returns
    -------
    pandas.DataFrame
        One row per test: ``test, step, parent, children, excess, sd, z, flagged``,
        and ``released`` (how many released values the test involves);
        ``flags(...)`` of the frame: :func:`flagged_values`.
    """
    alpha = check_fraction(alpha, "alpha")
    m, n = result.m, result.n
    rounds = list(result.rounds)
    final = rounds[-1]
    hh = result.heavy_hitters
    rows = []
    if len(result) == 0:
        return pd.DataFrame(columns=["test", "step", "parent", "children", "excess", "sd", "z", "flagged",
                                     "released"])
    var_final = estimate_variance(final.question, final.n_users, n, result.estimates)
    for i, rd in enumerate(rounds[:-1]):
        if rd.question is None or rd.estimates.shape[0] == 0:
            continue
        ans = rd.question.answer(hh, m)
        order = np.argsort(value_keys(rd.kept), kind="stable")
        pos = match_sorted(rd.kept[order], ans)
        var_r = estimate_variance(rd.question, rd.n_users, n, rd.estimates)
        for v in np.flatnonzero(pos >= 0):
            j = order[pos[v]]
            rows.append({"test": "part", "step": i, "parent": int(j), "children": 1,
                         "excess": float(result.estimates[v] - rd.estimates[j]),
                         "sd": float(math.sqrt(var_final[v] + var_r[j])), "released": 1})
    for i in range(len(rounds) - 1):  # consecutive prefix steps
        a, b = rounds[i], rounds[i + 1]
        if (a.question is None or b.question is None or not a.question.is_prefix or not b.question.is_prefix
                or a.estimates.shape[0] == 0 or b.estimates.shape[0] == 0 or a.question.stop >= b.question.stop):
            continue
        L = a.question.stop
        child_parent = _prefix_of(b.kept, b.question.stop, L)
        order = np.argsort(value_keys(a.kept), kind="stable")
        pos = match_sorted(a.kept[order], child_parent)
        var_a = estimate_variance(a.question, a.n_users, n, a.estimates)
        var_b = estimate_variance(b.question, b.n_users, n, b.estimates)
        rel = _released_prefixes(hh, m, b.question.stop)
        for jp in np.unique(pos[pos >= 0]):
            kids = np.flatnonzero(pos == jp)
            if kids.shape[0] < 2:
                continue  # one child: the "part" test already covers a released value's chain
            parent = order[jp]
            involved = int(np.isin(value_keys(b.kept[kids]), value_keys(rel)).sum())
            rows.append({"test": "children", "step": i + 1, "parent": int(parent), "children": int(kids.shape[0]),
                         "excess": float(b.estimates[kids].sum() - a.estimates[parent]),
                         "sd": float(math.sqrt(var_a[parent] + var_b[kids].sum())), "released": involved})
    df = pd.DataFrame(rows, columns=["test", "step", "parent", "children", "excess", "sd", "released"])
    if df.empty:
        return df.assign(z=[], flagged=[])
    z = float(stats.norm.isf(alpha / len(df)))
    df["z"] = df["excess"] / df["sd"]
    df["flagged"] = df["z"] > z
    return df


def index_uniformity(reports: ProtocolReports, *, alpha: float = 1e-3) -> pd.DataFrame:
    """Test that the public pool indices of FLH reports are uniform, per question (see the module notes).

    Pearson's chi-square test of each FLH question's index counts against the uniform law on its pool,
    at level ``alpha`` divided by the number of FLH questions (Bonferroni).  On honest reports the
    indices are i.i.d. uniform (:mod:`ldp.oracles.flh`), so the family flags with probability at most
    ``alpha``, up to the chi-square approximation (good when every pool member expects at least 5
    reports: ``n >= 5 h``).  The test flags a *question*, not users: one index says nothing about its
    sender.  What it cannot see: crafted reports for one target and input manipulation, whose indices
    are uniform like an honest device's.

    Parameters
    ----------
    reports : ProtocolReports
        The reports as received (a protocol run with ``oracle="FLH"``).
    alpha : float
        Family-wise false-positive rate on honest reports.

    Returns
    -------
    pandas.DataFrame
        One row per FLH question: ``group, question, n, pool_size, statistic, pvalue, flagged``.

    Examples
    --------
    >>> import numpy as np, ldp
    >>> pem = ldp.PEM(2.0, 4, 24, oracle="FLH", pool_size=256)
    >>> data = ldp.datasets.zipf(20_000, m=24, rng=1)
    >>> plan = pem.plan(data.n, rng=0)
    >>> checks = index_uniformity(pem.privatize(data.values, plan=plan, rng=2))
    >>> checks[["group", "n", "pool_size"]].values.tolist(), bool(checks["flagged"].any())
    ([[0, 10000, 256], [1, 10000, 256]], False)
    """
    if not isinstance(reports, ProtocolReports):
        raise TypeError(f"reports must be a ProtocolReports, got {type(reports).__name__}")
    alpha = check_fraction(alpha, "alpha")
    counts = {}
    for g in range(reports.plan.n_groups):
        for j, (question, rep) in enumerate(zip(reports.plan.questions[g], reports.group_reports(g))):
            if isinstance(rep, FLHReports) and rep.n > 0:
                counts[g, j] = np.bincount(rep.index.astype(np.int64), minlength=question.oracle().pool_size)
    if not counts:
        raise ValueError("reports has no FLH question with reports: index_uniformity tests FLH's pool indices "
                         "(a protocol run with oracle='FLH')")
    return index_counts_test(counts, alpha=alpha)


def index_counts_test(counts: dict, *, alpha: float) -> pd.DataFrame:
    """:func:`index_uniformity` from the index counts themselves: ``{(group, question): counts per pool member}``."""
    rows = []
    for (g, j), cnt in counts.items():
        stat, pvalue = stats.chisquare(cnt)
        rows.append({"group": g, "question": j, "n": int(cnt.sum()), "pool_size": int(cnt.shape[0]),
                     "statistic": float(stat), "pvalue": float(pvalue)})
    out = pd.DataFrame(rows)
    out["flagged"] = out["pvalue"] < alpha / len(out)
    return out


def _prefix_of(answers: np.ndarray, width: int, length: int) -> np.ndarray:
    """The first ``length`` bits of ``width``-bit answers."""
    return prefix(answers, width, length) if length < width else answers


def _released_prefixes(hh: np.ndarray, m: int, length: int) -> np.ndarray:
    return sort_unique(_prefix_of(hh, m, length))


def flagged_values(result: HeavyHitterResult, checks: pd.DataFrame) -> np.ndarray:
    """Which released values the flagged tests of :func:`consistency_check` involve (bool per released value)."""
    out = np.zeros(len(result), dtype=bool)
    if checks.empty or not checks["flagged"].any():
        return out
    m, hh, rounds = result.m, result.heavy_hitters, result.rounds
    for row in checks[checks["flagged"]].itertuples():
        rd = rounds[int(row.step)] if row.test == "children" else rounds[int(row.step)]
        if row.test == "part":
            kept = rd.kept[int(row.parent)]
            out |= np.all(np.atleast_2d(rd.question.answer(hh, m) == kept).reshape(len(result), -1), axis=1)
        else:
            prev = rounds[int(row.step) - 1]
            P = prev.kept[int(row.parent)]
            pre = _prefix_of(hh, m, prev.question.stop)
            out |= np.all(np.atleast_2d(pre == P).reshape(len(result), -1), axis=1)
    return out


def detector_trial(scenario, fake, *, detector: SupportCountDetector, rng=None) -> dict:
    """One protocol-engine run of ``scenario`` with ``fake`` fake users, before and after the detector.

    The server aggregates every report, runs ``detector`` against its own
    release, drops the flagged users' reports and aggregates again.

    Parameters
    ----------
    scenario : ldp.attacks.Scenario
    fake : int or float
        Fake users (a count or a share of ``n``; 0 for an honest run).
    detector : SupportCountDetector
    rng : None, int, SeedSequence, BitGenerator or Generator

    Returns
    -------
    dict
        ``planted``, ``planted_clean`` (targets released before and after),
        ``f1``, ``f1_clean`` (against the true top ``k``), ``tpr`` (share of
        the fake users flagged; ``nan`` without any), ``fpr`` (share of the
        honest users flagged), ``flagged``, ``honest``, ``fake``, ``alpha``,
        ``thresholds`` (the detector's table) and, for the last group's first
        question, the released answers each honest and each fake report
        supports (``honest_counts``, ``fake_counts``) with the detector's
        ``bound`` and ``threshold`` there.
    """
    s_run, s_agg = check_rng(rng).spawn(2)
    protocol = scenario.protocol
    reports = scenario.source(fake, engine="protocol", rng=s_run).reports
    agg = int(s_agg.integers(0, 2**63))  # the same tie-breaking stream before and after cleaning
    res = protocol.aggregate(reports, rng=agg)
    d = detector.detect(reports, res)
    clean = detector.clean(reports, d)
    res2 = protocol.aggregate(clean, rng=agg)
    fake_users = scenario.users(fake)
    honest = np.setdiff1d(reports.users, fake_users, assume_unique=True)
    top = scenario.data.top(min(protocol.k, scenario.data.n_distinct))
    g = reports.plan.n_groups - 1
    q = reports.plan.questions[g][0]
    answers = sort_unique(q.answer(res.heavy_hitters, res.m)) if len(res) else None
    counts = (support_matrix(q.oracle(), reports.group_reports(g)[0], answers).sum(axis=1)
              if answers is not None else np.zeros(reports.sizes[g], dtype=np.int64))
    in_g = reports.users[reports.labels == g]
    is_fake = np.isin(in_g, fake_users)
    row = d.thresholds[(d.thresholds["group"] == g) & (d.thresholds["question"] == 0)].iloc[0]
    return {"planted": _planted(res, scenario.targets), "planted_clean": _planted(res2, scenario.targets),
            "f1": f1(top, res.heavy_hitters), "f1_clean": f1(top, res2.heavy_hitters),
            "tpr": d.rate(fake_users) if fake_users.size else float("nan"), "fpr": d.rate(honest),
            "flagged": d.n_flagged, "honest": int(honest.shape[0]), "fake": int(fake_users.shape[0]),
            "alpha": d.alpha, "thresholds": d.thresholds, "honest_counts": counts[~is_fake],
            "fake_counts": counts[is_fake], "threshold": int(row["threshold"]),
            "bound": detector.null_tail(q, answers) if answers is not None else np.ones(2)}


def detector_rates(scenario, fake, *, detector: SupportCountDetector, honest_sample: int = 200_000,
                   rng=None) -> dict:
    """The detector's rates against a count-engine release: cheaper than :func:`detector_trial`.

    The release comes from a count-engine run with ``fake`` fake users; the
    detector's thresholds are computed for it; the true-positive rate is the
    share of the fake users' crafted reports (the scenario's own) it flags,
    the false-positive rate the share of ``honest_sample`` honest users
    (privatized with the protocol's client under the same plan) it flags.
    Since these honest reports did not make the release, their rate is the
    detector's rate for a release fixed in advance, which its bound covers
    exactly.

    Returns
    -------
    dict
        ``planted, tpr, fpr, honest, fake, alpha``.
    """
    s_run, s_sample, s_priv = check_rng(rng).spawn(3)
    out = scenario.run(fake, rng=s_run)
    res = out.result
    fake_users = scenario.users(fake)
    pool = np.setdiff1d(np.arange(scenario.data.n), fake_users, assume_unique=True)
    sample = np.sort(s_sample.choice(pool, size=min(honest_sample, pool.shape[0]), replace=False))
    honest = scenario.protocol.privatize(scenario.data.values[sample], plan=scenario.plan, users=sample, rng=s_priv)
    d_h = detector.detect(honest, res)
    crafted = scenario.fake_reports(fake)
    tpr = detector.detect(crafted, res).rate(fake_users) if crafted is not None else float("nan")
    return {"planted": out.planted, "tpr": tpr, "fpr": d_h.rate(sample), "honest": int(sample.shape[0]),
            "fake": int(fake_users.shape[0]), "alpha": detector.alpha}
