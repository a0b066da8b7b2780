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

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..core import Dataset, oracle_for
from ..protocols import HeavyHitterProtocol
from ..validation import check_int, check_rng
from .crafting import gain, support_probability
from .simulate import Attack, Scenario

__all__ = ["smallest_fraction", "threshold_grid", "honest_steps", "predicted_fraction", "release_gain"]


def smallest_fraction(scenario: Scenario, *, need: int = 1, rng=0, engine: str = "counts", start=None,
                      rel_tol: float = 0.05, max_runs: int = 30) -> tuple[float, int]:
    """The smallest share of fake users whose run releases at least ``need`` targets.

    Parameters
    ----------
    scenario : Scenario
    need : int
        Targets that must be released, 1 to the number of targets.
    rng : int or SeedSequence
        The seed of every run of the search (common random numbers).
    engine : {"counts", "protocol"}
    start : int or float, optional
        First number (or share) of fake users tried (default 0.5 % of ``n``).
    rel_tol : float
        Stop when the smallest success and the largest failure differ by
        less than this factor minus one.
    max_runs : int
        At most this many runs.

    Returns
    -------
    fraction : float
        Fake users of the smallest success, over ``n``; ``nan`` if even
        ``scenario.max_fake`` fake users do not plant ``need`` targets.
    runs : int
        Runs made.
    """
    need = check_int(need, "need", 1, scenario.targets.shape[0])
    if isinstance(rng, np.random.Generator):
        raise TypeError("rng must be an int or a SeedSequence: every run of the search reuses it")
    n, top = scenario.data.n, scenario.max_fake
    runs = 0

    def ok(f: int) -> bool:
        nonlocal runs
        runs += 1
        return scenario.run(f, engine=engine, rng=rng).planted >= need

    f = scenario.count(start) if start is not None else max(1, int(0.005 * n))
    f = min(max(f, 1), top)
    lo, hi = 0, None
    while hi is None:  # double until the targets are planted
        if ok(f):
            hi = f
        else:
            lo = f
            if f == top or runs >= max_runs:
                return float("nan"), runs
            f = min(2 * f, top)
    while hi - lo > 1 and runs < max_runs and (lo == 0 or hi / lo > 1 + rel_tol):
        mid = int(round(np.sqrt(lo * hi))) if lo else hi // 2
        mid = min(max(mid, lo + 1), hi - 1)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi / n, runs


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
        res = protocol.run(data, rng=s, engine="counts")
        last = len(res.rounds) - 1
        for i, rd in enumerate(res.rounds):
            if rd.question is None or rd.estimates.shape[0] == 0 or rd.n_candidates <= rd.kept.shape[0]:
                continue  # no estimate, or a step that keeps every candidate it tests: no bar
            est = np.sort(rd.estimates)[::-1]
            q = rd.question
            for r in ranks:
                if rd.kind == "block":
                    bar = float(np.median(est))
                else:
                    K = min(protocol.k, est.shape[0]) if i == last else est.shape[0]
                    bar = float(est[K - r]) if K - r >= 0 else float("nan")
                rows.append({"step": i, "name": rd.name, "kind": rd.kind, "oracle": q.oracle_name,
                             "epsilon": q.epsilon, "width": q.width, "r": int(r), "bar": bar})
    keys = ["step", "name", "kind", "oracle", "epsilon", "width", "r"]
    return pd.DataFrame(rows).groupby(keys, as_index=False, sort=False)["bar"].mean()


def predicted_fraction(steps: pd.DataFrame, n: int, *, kind: str, r: int = 1, trials: int = 64) -> float:
    """``max_i B_i / (n g_i + B_i)`` over the steps of :func:`honest_steps` (the module notes).

    ``g_i`` is the gain (:func:`ldp.attacks.gain`) of a fake report in step
    ``i``'s oracle for one of ``r`` targets (:func:`ldp.attacks.support_probability`);
    a bar at or below 0 needs no fake user.  ``nan`` when a step's gain is
    not positive (the fake reports cannot lift the target there) or unknown.
    """
    best = 0.0
    for row in steps[steps["r"] == r].itertuples():
        if not np.isfinite(row.bar):
            continue
        o = oracle_for(row.oracle, float(row.epsilon), int(row.width))
        g = gain(o, support_probability(o, kind, r, trials))
        if not g > 0:
            return float("nan")
        bar = max(float(row.bar), 0.0)
        best = max(best, bar / (n * g + bar))
    return best


def release_gain(protocol: HeavyHitterProtocol, n: int, kind: str, r: int = 1, trials: int = 64) -> float:
    """The gain of one fake report for one of ``r`` targets in the protocol's release step (its last question)."""
    o = protocol.plan(n, rng=0).questions[-1][-1].oracle()
    return gain(o, support_probability(o, kind, r, trials))


def _task(make: Callable[[float], HeavyHitterProtocol], data: Dataset, eps: float, attacks: Sequence[Attack],
          needs: Sequence[int], reps: int, seed: np.random.SeedSequence, max_fraction: float,
          labels: dict) -> list[dict]:
    protocol = make(eps)
    out = []
    seeds = seed.spawn(len(attacks))
    for a, (attack, s_attack) in enumerate(zip(attacks, seeds)):
        for rep, s_rep in enumerate(s_attack.spawn(reps)):
            s_scen, s_run = s_rep.spawn(2)
            sc = Scenario(protocol, data, attack, rng=s_scen, max_fraction=max_fraction)
            start = None
            for need in needs:
                if need > sc.targets.shape[0]:
                    continue
                frac, runs = smallest_fraction(sc, need=need, rng=s_run, start=start)
                start = int(frac * data.n) if np.isfinite(frac) else start  # more targets need at least as many
                out.append({**labels, "epsilon": float(eps), "kind": attack.kind, "placement": attack.placement,
                            "targets": int(sc.targets.shape[0]), "need": int(need), "rep": rep,
                            "fraction": frac, "runs": runs})
    return out


def threshold_grid(protocols: Mapping[str, Callable[[float], HeavyHitterProtocol]], datasets: Mapping[str, Dataset],
                   epsilons: Sequence[float], attacks: Sequence[Attack], *, reps: int, needs: Sequence[int] = (1,),
                   root_seed: int = 0, max_fraction: float = 0.5, n_jobs: int = 1) -> pd.DataFrame:
    """:func:`smallest_fraction` over a grid: one row per (data set, protocol, epsilon, attack, rep, need).

    Parameters
    ----------
    protocols : mapping of str to callable
        Label -> ``make(epsilon)`` returning the protocol.
    datasets : mapping of str to Dataset
    epsilons : sequence of float
    attacks : sequence of Attack
    reps : int
        Repetitions (a new plan, targets and fake users each).
    needs : sequence of int
        Targets that must be released (each a search on the same scenario).
    root_seed : int
        Task ``(dataset i, protocol j, epsilon l)`` is seeded from
        ``SeedSequence(root_seed, spawn_key=(i, j, l))``.
    max_fraction : float
        Largest share of fake users tried.
    n_jobs : int
        joblib workers.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, protocol, epsilon, kind, placement, targets, need,
        rep, fraction, runs`` (``fraction`` is ``nan`` above ``max_fraction``).
    """
    tasks = []
    for i, (dname, data) in enumerate(datasets.items()):
        for j, (pname, make) in enumerate(protocols.items()):
            for l_, eps in enumerate(epsilons):
                seed = np.random.SeedSequence(root_seed, spawn_key=(i, j, l_))
                tasks.append(delayed(_task)(make, data, float(eps), list(attacks), list(needs), reps, seed,
                                            max_fraction, {"dataset": dname, "protocol": pname}))
    rows = Parallel(n_jobs=n_jobs)(tasks)
    return pd.DataFrame([r for part in rows for r in part])
