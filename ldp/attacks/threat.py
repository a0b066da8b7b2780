r"""How many fake users it takes: the smallest fake fraction that plants targets, measured and predicted.

Measured
--------
:func:`smallest_fraction` searches, for one :class:`~ldp.attacks.Scenario` and
one random stream, the smallest number of fake users whose run releases at
least ``need`` of the targets: it doubles the number from a start until the
targets are planted, then bisects (on a log scale) down to a relative
precision ``rel_tol``.  Every run of one search uses the same seed (common
random numbers), so the honest users' noise is shared along the search and
the fake users are the first ``f`` of one order (each larger set contains the
smaller).  :func:`threshold_grid` repeats this over protocols, privacy budgets,
data sets, kinds of attack and repetitions, in parallel (joblib), each task
seeded from ``root_seed`` and its position in the grid, so the table does not
depend on the number of workers.

Predicted
---------
A fake report that supports a target with probability ``s`` moves the
target's count estimate by ``g = (s - q) / (p - q)`` in expectation (eq. (2),
:func:`ldp.attacks.gain`); with a share ``beta`` of fake users, every group
holds about ``beta N_g`` of them and the population estimate of a fresh
target is ``beta n g`` (the estimate of group ``g`` is scaled by ``n / N_g``).
Meanwhile the honest values keep ``(1 - beta)`` of their counts.  A target
enters the top ``k`` once it passes the ``k``-th released honest estimate
``B_k``, so

.. math:: \beta^* \approx \frac{B_k}{n\, g + B_k},

and ``r`` targets (each supported with probability ``s``) take ``r`` places
once they pass ``B_{k-r+1}``.  :func:`predicted_fraction` evaluates it with
each step's ``g`` (the oracle and budget of the step's question) and ``B``
(the bar the step keeps: its ``K``-th estimate, ``K`` the candidates it keeps)
measured on honest runs (:func:`honest_steps`), and takes the largest over
the steps, since the target must pass them all.  It ignores the noise of the
target's own estimates and the chance of failing one of several steps each
passed on average: the chapter compares it with the measurement.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..core import Dataset, HeavyHitterResult, oracle_for
from ..metrics import f1
from ..protocols import HeavyHitterProtocol
from ..validation import check_int, check_real, check_rng
from .crafting import gain, support_probability
from .defences import consistency_check, flagged_values
from .simulate import Attack, Outcome, Scenario

if TYPE_CHECKING:  # the server judges runs; it is passed in, never imported at run time
    from .server import Server

__all__ = ["smallest_fraction", "threshold_grid", "honest_steps", "step_bars", "honest_grid", "predicted_fraction",
           "predictions", "release_gain"]


def smallest_fraction(scenario: Scenario, *, need: int = 1, rng=0, engine: str = "counts", start=None,
                      grow: float = 2.0, rel_tol: float = 0.05, max_runs: int = 30,
                      server: Server | None = None) -> tuple[float, int, Outcome | None]:
    """The smallest share of fake users whose run releases at least ``need`` targets.

    Starting from ``start`` fake users, the search multiplies their number by
    ``grow`` until the targets are released (or, when they already are at
    the start, divides by it until they are not), then bisects on a log
    scale between the last failure and the first success.

    With a ``server`` (:class:`ldp.attacks.Server`), a run succeeds when the
    release it publishes (after its detector's cleaning and its defence)
    holds at least ``need`` targets and none of its checks raised an alarm
    (:mod:`ldp.attacks.server`).  The search assumes success grows with the
    number of fake users, as it does without checks; a check whose alarm
    grows with it too can make success rarer at larger numbers, and then the
    search returns the smallest success on its path (``nan`` if every run
    it made was caught or failed).

    Parameters
    ----------
    scenario : Scenario
    need : int
        Targets that must be released, 1 to the number of targets.
    rng : int or SeedSequence
        The seed of every run of the search (common random numbers).
    engine : {"counts", "protocol"}
        The engine of every run (with a ``server``: :mod:`ldp.attacks.server` on what the count
        engine draws of its checks).
    start : int or float, optional
        First number (or share) of fake users tried (default 0.5 % of ``n``).
    grow : float, default 2
        Factor between the first runs (> 1).
    rel_tol : float
        Stop when the smallest success and the largest failure differ by
        less than this factor minus one (> 0).
    max_runs : int
        At most this many runs (>= 1).
    server : Server, optional
        The server's checks and defence that judge each run; default none.

    Returns
    -------
    fraction : float
        Fake users of the smallest success, over ``n``; ``nan`` if even
        ``scenario.max_fake`` fake users do not plant ``need`` targets.
    runs : int
        Runs made.
    outcome : Outcome or None
        The run of the smallest success (``None`` without one).
    """
    need = check_int(need, "need", 1, scenario.targets.shape[0])
    if isinstance(rng, np.random.Generator):
        raise TypeError("rng must be an int or a SeedSequence: every run of the search reuses it")
    grow = check_real(grow, "grow", lo=1.0, lo_open=True)
    rel_tol = check_real(rel_tol, "rel_tol", lo=0.0, lo_open=True)
    max_runs = check_int(max_runs, "max_runs", 1)
    n, top = scenario.data.n, scenario.max_fake
    runs = 0
    outcomes: dict[int, Outcome] = {}

    def ok(f: int) -> bool:
        nonlocal runs
        runs += 1
        if server is None:
            out = scenario.run(f, engine=engine, rng=rng)
        else:
            out = server.run(scenario, f, engine=engine, rng=rng)
        if out.planted >= need and not out.alarm:
            outcomes[f] = out
            return True
        return False

    if start is None:
        f = int(0.005 * n)
    else:
        f = int(round(float(start) * n)) if isinstance(start, (float, np.floating)) else check_int(start, "start", 0)
    f = min(max(f, 1), top)
    if ok(f):  # already planted at the start: step down to a failure
        lo, hi = 0, f
        while hi > 1 and runs < max_runs:
            f = max(int(hi / grow), 1) if hi > 1 else 0
            if f >= hi or not ok(f):
                lo = f if f < hi else 0
                break
            hi = f
    else:  # step up to a success
        lo = f
        while True:
            if f == top or runs >= max_runs:
                return float("nan"), runs, None
            f = min(int(np.ceil(f * grow)), top)
            if ok(f):
                hi = f
                break
            lo = f
    while hi - lo > 1 and runs < max_runs and (lo == 0 or hi / lo > 1 + rel_tol):
        mid = int(round(np.sqrt(lo * hi))) if lo else hi // 2
        mid = min(max(mid, lo + 1), hi - 1)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi / n, runs, outcomes[hi]


def step_bars(result: HeavyHitterResult, k: int, ranks: Sequence[int] = (1,)) -> list[dict]:
    """The bar a target must pass at every step of one honest run (see :func:`honest_steps`)."""
    rows = []
    last = len(result.rounds) - 1
    for i, rd in enumerate(result.rounds):
        if rd.question is None or rd.estimates.shape[0] == 0 or rd.n_candidates <= rd.kept.shape[0]:
            continue  # no estimate, or a step that keeps every candidate it tests: no bar
        est = np.sort(rd.estimates)[::-1]
        q = rd.question
        for r in ranks:
            if rd.kind == "block":
                bar = float(np.median(est))
            else:
                K = min(k, est.shape[0]) if i == last else est.shape[0]
                bar = float(est[K - r]) if K - r >= 0 else float("nan")
            rows.append({"step": i, "name": rd.name, "kind": rd.kind, "oracle": q.oracle_name,
                         "epsilon": q.epsilon, "width": q.width, "r": int(r), "bar": bar})
    return rows


_STEP_KEYS = ["step", "name", "kind", "oracle", "epsilon", "width", "r"]


def honest_steps(protocol: HeavyHitterProtocol, data: Dataset, *, reps: int, rng=None,
                 ranks: Sequence[int] = (1,)) -> pd.DataFrame:
    """The bar a target must pass at every step of honest runs (count engine).

    For each step with estimates (``RoundInfo.estimates``) and each ``r`` of
    ``ranks``: the ``(K - r + 1)``-th largest kept estimate (``K`` kept; the
    release: ``k``), i.e. what ``r`` targets must beat to take ``r`` of the
    places, averaged over ``reps`` runs; for MCM's block steps (one winner per
    channel, and a target competes in its own channel) the median winner.
    Steps that keep every candidate they test have no bar.

    Returns
    -------
    pandas.DataFrame
        ``step, name, kind, oracle, epsilon, width, r, bar``: the step's
        question's oracle spec, report budget and answer width, and the bar
        (population-scale count estimate).
    """
    reps = check_int(reps, "reps", 1)
    rows = []
    for s in check_rng(rng).spawn(reps):
        rows += step_bars(protocol.run(data, rng=s, engine="counts"), protocol.k, ranks)
    return pd.DataFrame(rows).groupby(_STEP_KEYS, as_index=False, sort=False)["bar"].mean()


def predicted_fraction(steps: pd.DataFrame, n: int, *, kind: str, need: int = 1, targets: int = 1,
                       trials: int = 64, pool_size: int = 0) -> float:
    """``max_i B_i / (n g_i + B_i)`` over the steps of :func:`honest_steps` (the module notes).

    ``B_i`` is step ``i``'s bar for ``need`` targets (``r = need`` in
    :func:`honest_steps`); ``g_i`` the gain (:func:`ldp.attacks.gain`) of a
    fake report in step ``i``'s oracle for one of ``targets`` targets
    (:func:`ldp.attacks.support_probability`).  A bar at or below 0 needs no
    fake user.  ``nan`` when a step's gain is not positive or unknown (the
    fake reports cannot lift the targets there, or Hadamard response with
    several targets, which has no closed form).  An FLH step's gain is OLH's
    (same ``p``, ``q``, ``d'``) with ``min(trials, pool_size)`` searched pool
    members (``pool_size`` 0: ``trials``).
    """
    best = 0.0
    rows = steps[steps["r"] == need]
    if rows.empty:
        return float("nan")
    for row in rows.itertuples():
        if not np.isfinite(row.bar):
            continue
        flh = row.oracle == "FLH"
        o = oracle_for("OLH" if flh else row.oracle, float(row.epsilon), int(row.width))
        g = gain(o, support_probability(o, kind, targets, min(trials, pool_size) if flh and pool_size else trials))
        if not g > 0:
            return float("nan")
        bar = max(float(row.bar), 0.0)
        best = max(best, bar / (n * g + bar))
    return best


def release_gain(protocol: HeavyHitterProtocol, n: int, kind: str, r: int = 1, trials: int = 64) -> float:
    """The gain of one fake report for one of ``r`` targets in the protocol's release step (its last question)."""
    o = protocol.plan(n, rng=0).questions[-1][-1].oracle()
    return gain(o, support_probability(o, kind, r, trials))


def _task(make: Callable[[float, int], HeavyHitterProtocol], data: Dataset, epsilons: Sequence[float],
          seeds: Sequence[np.random.SeedSequence], attacks: Sequence[Attack], needs: Sequence[int], reps: int,
          max_fraction: float, labels: dict, starts: Mapping, grow: float, rel_tol: float) -> list[dict]:
    """Every search of one (data set, protocol): one worker keeps the data set's tallies for all of them."""
    out = []
    for eps, seed in zip(epsilons, seeds):
        protocol = make(eps, data.m)
        for attack, s_attack in zip(attacks, seed.spawn(len(attacks))):
            for rep, s_rep in enumerate(s_attack.spawn(reps)):
                s_scen, s_run = s_rep.spawn(2)
                sc = Scenario(protocol, data, attack, rng=s_scen, max_fraction=max_fraction)
                start, failed = starts.get((float(eps), attack.kind, min(needs))), False
                for need in sorted(needs):
                    if need > sc.targets.shape[0]:
                        continue
                    if failed:  # fewer targets were not planted within max_fraction: more cannot be either
                        frac, runs, at = float("nan"), 0, None
                    else:
                        first = starts.get((float(eps), attack.kind, need), start)
                        if start is not None and first is not None:
                            first = max(first, start)
                        frac, runs, at = smallest_fraction(sc, need=need, rng=s_run, start=first, grow=grow,
                                                           rel_tol=rel_tol)
                    failed = not np.isfinite(frac)
                    start = frac if np.isfinite(frac) else start  # more targets need at least as many
                    flagged = float("nan")
                    if at is not None:  # does the consistency check flag a planted target in that run?
                        fl = flagged_values(at.result, consistency_check(at.result))
                        flagged = float(fl[at.ranks[at.ranks > 0] - 1].any())
                    out.append({**labels, "epsilon": float(eps), "kind": attack.kind, "placement": attack.placement,
                                "targets": int(sc.targets.shape[0]), "need": int(need), "rep": rep,
                                "fraction": frac, "runs": runs, "flagged": flagged})
    return out


def threshold_grid(protocols: Mapping[str, Callable[[float, int], HeavyHitterProtocol]],
                   datasets: Mapping[str, Dataset], epsilons: Sequence[float], attacks: Sequence[Attack], *,
                   reps: int, needs: Sequence[int] = (1,), root_seed: int = 0, max_fraction: float = 0.5,
                   starts: pd.DataFrame | None = None, grow: float = 2.0, rel_tol: float = 0.05,
                   n_jobs: int = 1) -> pd.DataFrame:
    """:func:`smallest_fraction` over a grid: one row per (data set, protocol, epsilon, attack, rep, need).

    Parameters
    ----------
    protocols : mapping of str to callable
        Label -> ``make(epsilon, m)`` returning the protocol for the data set's ``m``.
    datasets : mapping of str to Dataset
    epsilons : sequence of float
    attacks : sequence of Attack
    reps : int
        Repetitions (a new plan, targets and fake users each).
    needs : sequence of int
        Targets that must be released (each a search on the same scenario).
    root_seed : int
        The searches of ``(dataset i, protocol j, epsilon l)`` are seeded from
        ``SeedSequence(root_seed, spawn_key=(i, j, l))``.
    max_fraction : float
        Largest share of fake users tried.
    starts : pandas.DataFrame, optional
        Where each search starts: ``dataset, protocol, epsilon, kind, need,
        predicted`` (:func:`predictions`; a share of ``n``); searches without
        a finite entry start at 0.5 %.
    grow, rel_tol : float
        :func:`smallest_fraction`'s.
    n_jobs : int
        joblib workers (one task per data set and protocol).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, protocol, epsilon, kind, placement, targets, need,
        rep, fraction, runs, flagged`` (``fraction`` is ``nan`` above
        ``max_fraction``; ``flagged``: whether :func:`ldp.attacks.consistency_check`
        flags a planted target in the run at that fraction, ``nan`` without one).
    """
    tasks = []
    for i, (dname, data) in enumerate(datasets.items()):
        for j, (pname, make) in enumerate(protocols.items()):
            seeds = [np.random.SeedSequence(root_seed, spawn_key=(i, j, l_)) for l_ in range(len(epsilons))]
            first = {}
            if starts is not None:
                st = starts[(starts["dataset"] == dname) & (starts["protocol"] == pname)]
                first = {(float(r.epsilon), r.kind, int(r.need)): float(r.predicted) for r in st.itertuples()
                         if np.isfinite(r.predicted) and r.predicted > 0}
            tasks.append(delayed(_task)(make, data, [float(e) for e in epsilons], seeds, list(attacks), list(needs),
                                        reps, max_fraction, {"dataset": dname, "protocol": pname}, first, grow,
                                        rel_tol))
    rows = Parallel(n_jobs=n_jobs)(tasks)
    return pd.DataFrame([r for part in rows for r in part])


def _honest(make, data: Dataset, epsilons: Sequence[float], seeds: Sequence[np.random.SeedSequence], reps: int,
            ranks: Sequence[int], labels: dict) -> tuple[list[dict], pd.DataFrame]:
    runs, steps = [], []
    for eps, seed in zip(epsilons, seeds):
        protocol = make(eps, data.m)
        top = data.top(min(protocol.k, data.n_distinct))
        bars = []
        for rep, s in enumerate(seed.spawn(reps)):
            res = protocol.run(data, rng=s, engine="counts")
            fl = flagged_values(res, consistency_check(res))
            runs.append({**labels, "epsilon": float(eps), "rep": rep, "f1": f1(top, res.heavy_hitters),
                         "f1_checked": f1(top, res.heavy_hitters[~fl]), "flagged": int(fl.sum()),
                         "released": int(len(res))})
            bars += step_bars(res, protocol.k, ranks)
        st = pd.DataFrame(bars).groupby(_STEP_KEYS, as_index=False, sort=False)["bar"].mean()
        steps.append(st.assign(**labels, epsilon_run=float(eps)))
    return runs, pd.concat(steps, ignore_index=True)


def honest_grid(protocols: Mapping[str, Callable[[float, int], HeavyHitterProtocol]],
                datasets: Mapping[str, Dataset], epsilons: Sequence[float], *, reps: int,
                ranks: Sequence[int] = (1,), root_seed: int = 0, n_jobs: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Honest runs over a grid (count engine): F1 with and without the consistency check, and the step bars.

    Returns
    -------
    runs : pandas.DataFrame
        ``dataset, protocol, epsilon, rep, f1, f1_checked, flagged, released``:
        F1 of the release against the true top ``k``, F1 once the values
        :func:`ldp.attacks.consistency_check` flags are dropped, how many it
        flagged (every one a false alarm: nobody attacks).
    steps : pandas.DataFrame
        :func:`honest_steps`' bars of every (data set, protocol, epsilon), from
        the same runs, with ``dataset, protocol, epsilon_run``.
    """
    tasks = []
    for i, (dname, data) in enumerate(datasets.items()):
        for j, (pname, make) in enumerate(protocols.items()):
            seeds = [np.random.SeedSequence(root_seed, spawn_key=(i, j, l_, 1)) for l_ in range(len(epsilons))]
            tasks.append(delayed(_honest)(make, data, [float(e) for e in epsilons], seeds, reps, list(ranks),
                                          {"dataset": dname, "protocol": pname}))
    parts = Parallel(n_jobs=n_jobs)(tasks)
    return (pd.DataFrame([r for p in parts for r in p[0]]), pd.concat([p[1] for p in parts], ignore_index=True))


def predictions(steps: pd.DataFrame, sizes: Mapping[str, int], *, kinds: Sequence[str] = ("MGA", "input"),
                needs: Sequence[int] = (1,), targets: int = 1, trials: int = 64) -> pd.DataFrame:
    """:func:`predicted_fraction` for every (data set, protocol, epsilon) of :func:`honest_grid`'s steps.

    Returns ``dataset, protocol, epsilon, kind, need, predicted``.
    """
    rows = []
    for (d, p, e), st in steps.groupby(["dataset", "protocol", "epsilon_run"], sort=False):
        for kind in kinds:
            for need in needs:
                rows.append({"dataset": d, "protocol": p, "epsilon": float(e), "kind": kind, "need": int(need),
                             "predicted": predicted_fraction(st, sizes[d], kind=kind, need=need,
                                                             targets=targets, trials=trials)})
    return pd.DataFrame(rows)
