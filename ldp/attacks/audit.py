r"""Empirical privacy audit of the deployed client: an attacker who sees everything tries to tell two values apart.

The audit (in the manner of LDP-Auditor: H. H. Arcolezi and S. Gambs,
"Revealing the True Cost of Locally Differentially Private Protocols: An
Auditing Perspective", PETS 2024) plays the strongest observer: he holds the
published plan, every report's bytes and the client's code
(:mod:`ldp.client`, the hash family).  For one user and two values
:math:`v_0, v_1` he fixes an event :math:`S` of the report;
:math:`\varepsilon`-LDP means :math:`\Pr[S \mid v_0] \le e^\varepsilon \Pr[S \mid v_1]`
for every :math:`S`.  Over :math:`N` reports of each value, drawn by the
**deployed client** (:func:`ldp.client.report_many`: every coin from the
operating system, the bytes parsed by the server's own checks,
:func:`ldp.client.parse_reports`), the counts :math:`k_0, k_1` of reports in
:math:`S` give

.. math:: \hat\varepsilon = \ln\frac{k_0}{k_1}, \qquad
          \underline{\varepsilon} = \ln\frac{\underline{p}_0}{\overline{p}_1},

with :math:`\underline{p}_0` the lower Clopper-Pearson bound of
:math:`k_0 / N` and :math:`\overline{p}_1` the upper one of :math:`k_1 / N`,
each at level :math:`\alpha / 2` (beta quantiles, :func:`cp_lower`,
:func:`cp_upper`); the bound takes the better of :math:`S` and its
complement.  Whenever the reports are :math:`\varepsilon`-LDP,
:math:`\underline{\varepsilon} \le \varepsilon` with probability at least
:math:`1 - 2\alpha` (two events, each failing when one of its two bounds does).

The event
---------
No event is searched on the data (LDP-Auditor's alternative: choose it on
one half of the reports, count on the other): the event is fixed by the
mechanism's structure, the likelihood-ratio event of each oracle
(:func:`likelihood_event`), whose ratio is exactly :math:`e^{\varepsilon}`
given the public hash, e.g. OLH's "the report supports :math:`v_0`'s answer
and not :math:`v_1`'s".  So the bound comes close to :math:`\varepsilon`
from below when the client is right and exceeds it when the client leaks
(a test that could fail).  A group that answers several questions (the
two-phase protocols: a budget :math:`\varepsilon_j` each) is audited on the
joint report with the intersection of the questions' events: the client
draws each question's noise independently, so its ratio is
:math:`e^{\sum_j \varepsilon_j} = e^{\varepsilon}`, the user's whole budget.
The two values differ in every bit (:math:`v_1` is :math:`v_0`'s
complement), so every prefix, segment and fragment of them differs.

What is audited
---------------
:func:`audit_protocol` audits one user of each **group kind** of a
protocol's published plan (:func:`group_kinds`: the kinds of its questions:
``prefix``, ``value``, ``segment``, ``fragment`` for a channel fragment, ``+``
between the questions of one report), or of every group;
:func:`audit_grid` runs it over protocols, their oracles and a budget grid
(one row per protocol, oracle, group kind and budget: the tidy frame a
figure of :math:`\hat\varepsilon` and :math:`\underline{\varepsilon}` against
:math:`\varepsilon` draws).  :func:`audit_oracle` audits a bare frequency
oracle's deployment.  ``benchmarks/bench_audit.py`` runs the full audit.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from ..client import parse_reports, report_many
from ..core import Plan
from ..oracles import FrequencyOracle
from ..protocols import HeavyHitterProtocol
from ..validation import check_fraction, check_int

__all__ = ["cp_lower", "cp_upper", "epsilon_lower_bound", "epsilon_estimate", "likelihood_event", "group_kinds",
           "audit_reports", "audit_oracle", "audit_group", "audit_protocol", "audit_grid", "audited_protocols", "V0"]

#: the first audited value (the second is its complement)
V0 = 0x1234_5678_9ABC_DEF0


def cp_lower(k: int, n: int, alpha: float) -> float:
    """Clopper-Pearson lower bound of a binomial proportion ``k / n`` (one-sided, level ``alpha``)."""
    return 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))


def cp_upper(k: int, n: int, alpha: float) -> float:
    """Clopper-Pearson upper bound of a binomial proportion ``k / n`` (one-sided, level ``alpha``)."""
    return 1.0 if k == n else float(stats.beta.isf(alpha, k + 1, n - k))


def epsilon_lower_bound(in0: np.ndarray, in1: np.ndarray, alpha: float) -> float:
    """The empirical privacy-loss bound from an event's indicators under ``v0`` and under ``v1`` (module notes).

    The larger over the event and its complement of ``ln(lower(p0) / upper(p1))``, each Clopper-Pearson
    bound at level ``alpha / 2``; ``-inf`` when no lower bound is positive.  Above the true budget with
    probability at most ``2 alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> in0 = np.r_[np.ones(7000, bool), np.zeros(3000, bool)]   # 70 % of v0's reports in the event
    >>> in1 = np.r_[np.ones(1000, bool), np.zeros(9000, bool)]   # 10 % of v1's
    >>> round(epsilon_lower_bound(in0, in1, 1e-6), 2), round(float(np.log(0.7 / 0.1)), 2)
    (1.77, 1.95)
    """
    in0, in1 = np.asarray(in0, dtype=bool), np.asarray(in1, dtype=bool)
    n0, n1 = in0.size, in1.size
    k0, k1 = int(in0.sum()), int(in1.sum())
    out = -math.inf
    for a, b in ((k0, k1), (n0 - k0, n1 - k1)):
        lo, hi = cp_lower(a, n0, alpha / 2), cp_upper(b, n1, alpha / 2)
        if lo > 0:
            out = max(out, math.log(lo / hi))
    return out


def epsilon_estimate(in0: np.ndarray, in1: np.ndarray) -> float:
    """``ln((k0 / n0) / (k1 / n1))``, the event's empirical log-ratio (``nan`` when either count is 0)."""
    in0, in1 = np.asarray(in0, dtype=bool), np.asarray(in1, dtype=bool)
    k0, k1 = int(in0.sum()), int(in1.sum())
    if k0 == 0 or k1 == 0:
        return float("nan")
    return math.log((k0 / in0.size) / (k1 / in1.size))


def likelihood_event(oracle: Any, reports: Any, a0: int, a1: int) -> np.ndarray:
    """Whether each report points to answer ``a0`` rather than ``a1``: the oracle's likelihood-ratio event.

    FLH, OLH: ``y`` is ``a0``'s cell and not ``a1``'s (the public index or seed picks the hash); HR:
    ``y`` is in ``a0``'s set and not ``a1``'s; CMS, OUE: ``a0``'s bit set, ``a1``'s not; GRR: ``y = a0``.
    Given the public hash, its probability under ``a0`` is ``e^eps`` times that under ``a1``.

    Parameters
    ----------
    oracle : FrequencyOracle
    reports : Reports
        Reports of ``oracle`` (e.g. decoded by :func:`ldp.client.parse_reports`).
    a0, a1 : int
        Two distinct answers (values of at most 64 bits, or GRR / OUE indices).
    """
    r, n = reports, len(reports)
    if oracle.kind == "GRR":
        return r.y.astype(np.int64) == a0
    if oracle.kind == "OUE":
        bits = r.unpacked()
        return (bits[:, a0] == 1) & (bits[:, a1] == 0)
    if oracle.kind == "FLH":
        g0 = oracle.hash(r.index, np.full(n, a0, dtype=np.uint64)).astype(np.int64)
        g1 = oracle.hash(r.index, np.full(n, a1, dtype=np.uint64)).astype(np.int64)
        return (r.y == g0) & (r.y != g1)
    h0 = oracle.cell(r.seed, np.full(n, a0, dtype=np.uint64)).astype(np.int64)
    h1 = oracle.cell(r.seed, np.full(n, a1, dtype=np.uint64)).astype(np.int64)
    if oracle.kind == "OLH":
        return (r.y == h0) & (r.y != h1)
    if oracle.kind == "HR":
        return oracle.in_set(h0, r.y) & ~oracle.in_set(h1, r.y)
    if oracle.kind == "CMS":
        bits = r.unpacked()
        rows = np.arange(n)
        return (bits[rows, h0] == 1) & (bits[rows, h1] == 0)
    raise TypeError(f"no likelihood-ratio event for a {oracle.kind} oracle")


def _kind(question, m: int) -> str:
    if question.channels:
        return "fragment"
    if question.start == 0:
        return "value" if question.stop == m else "prefix"
    return "segment"


def group_kinds(plan: Plan) -> dict[str, list[int]]:
    """The plan's groups by kind: ``"+"``-joined kinds of their questions (module notes) -> group indices.

    Examples
    --------
    >>> import ldp
    >>> group_kinds(ldp.SPM(2.0, 16, 64).plan(10_000, rng=1))
    {'prefix+segment+value': [0, 1, 2], 'segment+segment+value': [3, 4, 5]}
    """
    out: dict[str, list[int]] = {}
    for g, qs in enumerate(plan.questions):
        out.setdefault("+".join(_kind(q, plan.m) for q in qs), []).append(g)
    return out


def audit_reports(target, oracles: Sequence[FrequencyOracle], answers0: Sequence[int], answers1: Sequence[int],
                  value0, value1, *, user: int, n: int, alpha: float) -> dict:
    """Audit one user of ``target`` (a plan or an oracle): ``n`` client reports of each value, the joint event.

    ``oracles`` and ``answers0`` / ``answers1``: the user's questions' oracles and each value's answers.  The
    auditor owns the device, so its ceiling on a plan's budget (:func:`ldp.client.report_many`'s
    ``max_epsilon``) is the audited budget, the sum of the questions' budgets: every budget can be audited,
    above the default ceiling too, and a plan one of whose groups spends more is still refused.

    Returns
    -------
    dict
        ``n, k0, k1, eps_hat, eps_lower``.
    """
    # the auditor is the device's owner: his device accepts the budget it audits, above the default ceiling too
    ceiling = math.fsum(float(o.epsilon) for o in oracles)
    events = []
    for value in (value0, value1):
        parsed = parse_reports(target, report_many(target, [value] * n, users=[user] * n, max_epsilon=ceiling))
        if parsed.problems or len(parsed.groups) != 1:
            raise RuntimeError(f"the server refused the client's reports: {parsed.problems[:3]}")
        (_, _, reps), = parsed.groups.values()
        inside = np.ones(n, dtype=bool)
        for o, r, a0, a1 in zip(oracles, reps, answers0, answers1):
            inside &= likelihood_event(o, r, int(a0), int(a1))
        events.append(inside)
    in0, in1 = events
    return {"n": n, "k0": int(in0.sum()), "k1": int(in1.sum()), "eps_hat": epsilon_estimate(in0, in1),
            "eps_lower": epsilon_lower_bound(in0, in1, alpha)}


def audit_oracle(oracle: FrequencyOracle, *, n: int, v0: int = 3, v1: int = 7, alpha: float = 1e-6) -> dict:
    """Audit a bare oracle's deployment (:func:`ldp.client.report_many` with the oracle as its plan).

    Parameters
    ----------
    oracle : FrequencyOracle
        GRR, OUE, OLH, HR, CMS or FLH.
    n : int
        Reports of each value (at least 100).
    v0, v1 : int
        The two values (distinct; in the oracle's domain).
    alpha : float
        Each Clopper-Pearson bound's level is ``alpha / 2`` (module notes).

    Returns
    -------
    dict
        ``oracle, epsilon, n, k0, k1, eps_hat, eps_lower, alpha``.

    Examples
    --------
    >>> import ldp
    >>> row = audit_oracle(ldp.OLH(1.0, m=16), n=20_000)
    >>> row["eps_lower"] <= 1.0 < row["eps_lower"] + 0.5
    True
    """
    n = check_int(n, "n", 100)
    alpha = check_fraction(alpha, "alpha")
    if v0 == v1:
        raise ValueError(f"v0 and v1 must differ, got {v0!r} twice")
    row = audit_reports(oracle, [oracle], [v0], [v1], v0, v1, user=0, n=n, alpha=alpha)
    return {"oracle": oracle.kind, "epsilon": float(oracle.epsilon), **row, "alpha": alpha}


def audit_group(plan: Plan, group: int, *, n: int, alpha: float = 1e-6, v0: int = V0, v1: int | None = None) -> dict:
    """Audit one user of group ``group`` of a published plan through the deployed client (module notes).

    Parameters
    ----------
    plan : Plan
        The published plan (values of at most 64 bits).
    group : int
        The group audited (its first user).
    n : int
        Reports of each value (at least 100).
    alpha : float
        Each Clopper-Pearson bound's level is ``alpha / 2``.
    v0, v1 : int
        The two values (reduced to ``m`` bits; default ``v1``: ``v0``'s complement).  Their answers must
        differ in every question of the group.

    Returns
    -------
    dict
        ``group, kind, questions, epsilon`` (the group's budget, the sum of its questions'), ``n, k0, k1,
        eps_hat, eps_lower, alpha``.
    """
    if not isinstance(plan, Plan):
        raise TypeError(f"plan must be an ldp.core.Plan, got {type(plan).__name__}")
    if plan.m > 64:
        raise ValueError(f"the audit takes values of at most 64 bits; this plan has m = {plan.m}")
    group = check_int(group, "group", 0, plan.n_groups - 1)
    n = check_int(n, "n", 100)
    alpha = check_fraction(alpha, "alpha")
    mask = (1 << plan.m) - 1
    x0 = int(v0) & mask
    x1 = x0 ^ mask if v1 is None else int(v1) & mask
    user = int(np.flatnonzero(plan.labels() == group)[0])
    qs = plan.questions[group]
    vals = np.array([x0, x1], dtype=np.uint64)
    answers = [q.answer(vals, plan.m) for q in qs]
    same = [j for j, a in enumerate(answers) if a[0] == a[1]]
    if same:
        raise ValueError(f"v0 and v1 must have different answers to every question of group {group}; "
                         f"they agree on question {same[0]}")
    row = audit_reports(plan, [q.oracle() for q in qs], [a[0] for a in answers], [a[1] for a in answers], x0, x1,
                        user=user, n=n, alpha=alpha)
    return {"group": group, "kind": "+".join(_kind(q, plan.m) for q in qs), "questions": len(qs),
            "epsilon": float(sum(q.epsilon for q in qs)), **row, "alpha": alpha}


def audit_protocol(protocol: HeavyHitterProtocol, *, n: int, alpha: float = 1e-6, groups: str = "kinds",
                   plan_users: int = 100_000, rng=0) -> pd.DataFrame:
    """Audit a protocol's deployed client: one user of each group kind (or of every group) of its plan.

    Parameters
    ----------
    protocol : HeavyHitterProtocol
    n : int
        Reports of each value per audited group.
    alpha : float
        Each Clopper-Pearson bound's level is ``alpha / 2``.
    groups : {"kinds", "all"}
        The first group of each kind (:func:`group_kinds`), or every group.
    plan_users : int
        Users of the published plan (its groups depend on it).
    rng : None, int, SeedSequence, BitGenerator or Generator
        The plan's public seed only (the reports' coins come from the operating system).

    Returns
    -------
    pandas.DataFrame
        One row per audited group: ``protocol, oracle, group, kind, questions, epsilon, n, k0, k1, eps_hat,
        eps_lower, alpha``.
    """
    if groups not in ("kinds", "all"):
        raise ValueError(f"groups must be 'kinds' or 'all', got {groups!r}")
    plan = protocol.plan(check_int(plan_users, "plan_users", 1), rng=rng)
    kinds = group_kinds(plan)
    chosen = [g for gs in kinds.values() for g in (gs[:1] if groups == "kinds" else gs)]
    oracle = str(protocol.oracle)
    rows = []
    for g in sorted(chosen):
        row = audit_group(plan, g, n=n, alpha=alpha)
        if not math.isclose(row["epsilon"], protocol.epsilon, rel_tol=1e-9):  # pragma: no cover - a plan's promise
            raise RuntimeError(f"group {g}'s questions spend {row['epsilon']}, not the protocol's {protocol.epsilon}")
        rows.append({"protocol": protocol.name, "oracle": oracle, **row, "epsilon": float(protocol.epsilon)})
    return pd.DataFrame(rows)


def audited_protocols(*, k: int = 16, m: int = 64) -> dict[str, Callable[[float], HeavyHitterProtocol]]:
    """Every protocol audited here with every oracle it takes: label -> ``make(epsilon)``.

    PEM, TreeHist and SFP with OLH, HR, Hashtogram, CMS and FLH; SPM (OLH, its only oracle).
    """
    from ..protocols import PEM, SFP, SPM, TreeHist

    def maker(cls, oracle: str | None) -> Callable[[float], HeavyHitterProtocol]:
        def make(epsilon: float) -> HeavyHitterProtocol:
            return cls(epsilon, k, m) if oracle is None else cls(epsilon, k, m, oracle=oracle)
        return make

    out = {f"{name}-{oracle}": maker(cls, oracle) for name, cls in (("PEM", PEM), ("TreeHist", TreeHist), ("SFP", SFP))
           for oracle in ("OLH", "HR", "Hashtogram", "CMS", "FLH")}
    out["SPM-OLH"] = maker(SPM, None)
    return out


def _grid_task(label: str, make: Callable[[float], HeavyHitterProtocol], eps: float, n: int, alpha: float,
               groups: str, plan_users: int, seed: int) -> pd.DataFrame:
    out = audit_protocol(make(eps), n=n, alpha=alpha, groups=groups, plan_users=plan_users, rng=seed)
    return out.assign(protocol=label)


def audit_grid(protocols: Mapping[str, Callable[[float], HeavyHitterProtocol]], epsilons: Sequence[float], *,
               n: int, alpha: float = 1e-6, groups: str = "kinds", plan_users: int = 100_000, root_seed: int = 0,
               n_jobs: int = 1) -> pd.DataFrame:
    """:func:`audit_protocol` over protocols (with their oracles) and a budget grid: the audit's tidy frame.

    Parameters
    ----------
    protocols : mapping of str to callable
        Label -> ``make(epsilon)`` returning the protocol (e.g. ``"PEM-HR": lambda e: ldp.PEM(e, 16, 64,
        oracle="HR")``).
    epsilons : sequence of float
    n : int
        Reports of each value per audited group.
    alpha : float
        Each Clopper-Pearson bound's level is ``alpha / 2``: a row's ``eps_lower`` exceeds ``epsilon`` with
        probability at most ``2 alpha`` if the client is eps-LDP, and some row's with at most ``2 alpha``
        times the number of rows.
    groups : {"kinds", "all"}
    plan_users : int
    root_seed : int
        The plans' public seeds (``root_seed`` plus the task's position); the reports' coins are the OS's.
    n_jobs : int
        joblib workers.

    Returns
    -------
    pandas.DataFrame
        One row per (protocol, group, epsilon): ``protocol, oracle, group, kind, questions, epsilon, n, k0, k1,
        eps_hat, eps_lower, alpha``.
    """
    tasks = [delayed(_grid_task)(label, make, float(e), n, alpha, groups, plan_users, root_seed + i)
             for i, (label, make, e) in enumerate((lb, mk, e) for lb, mk in protocols.items() for e in epsilons)]
    parts = Parallel(n_jobs=n_jobs)(tasks)
    return pd.concat(parts, ignore_index=True)
