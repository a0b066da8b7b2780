r"""Attackers who know the server's checks, and how many fake users they need with the checks and the defence.

The attackers
-------------
Each is a maximal-gain attack (:mod:`ldp.attacks.crafting`) shaped by one of
the server's checks (:mod:`ldp.attacks.defences`), built by :func:`adaptive_attacks`:

* ``"index-honest"`` (FLH questions) -- against the index test
  (:func:`ldp.attacks.index_uniformity`): each fake user draws her pool index
  uniformly, as an honest device does, and reports the cell most targets hash
  to under it (``Attack("MGA", trials=1)``); her indices are honest, and she
  supports fewer targets than a searched report;
* ``"capped"`` (CMS questions) -- against the detector
  (:class:`ldp.attacks.SupportCountDetector`): each report supports at most
  ``cap`` targets (``Attack("MGA", cap=cap)``), so it stays below the
  detector's threshold (its count of released values an honest report
  reaches with probability at most ``alpha``);
* ``"spread"`` (every oracle) -- against the consistency check
  (:func:`ldp.attacks.consistency_check`): fake users in every group at
  exactly the plan's shares (``placement="spread"``), so each step's estimates
  of a target rise alike and no group's counts look out of line with
  another's; the economical attacker who skips the groups she wins anyway
  (``placement="chosen"``) is what that check catches;
* ``"one-each"`` (every oracle) -- against all three at once: every group at
  its share, and each fake user backs one target (``cap=1``), as a holder
  of it would, with a report that always supports it.  Her index is honest
  (one target: any pool member supports it), she supports one target plus
  chance ones (the detector's null), and every step's counts of the targets'
  prefixes add up like holders' (a report that supports two siblings, as a
  search for several targets does, lifts their sum twice as much as their
  parent: what the consistency check sees in TreeHist's short prefixes).
  She pays for it: each target gets ``1 / r`` of the fake users;

beside the plain maximal-gain attacker ``"MGA"`` (the plan's groups, the
hash search of :func:`ldp.attacks.craft`), the reference every check was
built against.

What is measured
----------------
:func:`adaptive_grid` runs :func:`ldp.attacks.smallest_fraction` for every
protocol, attacker and repetition under four servers (:class:`ldp.attacks.Server`):
checks off or on (the detector with its cleaning, the consistency check,
the index test; an alarm fails the attack) and the defence
(:func:`ldp.attacks.recover`, guarding against a share ``guard`` of fake
reports) off or on.  The four searches of one repetition share the scenario
(plan, targets, order of fake accounts) and the seed of every run, so their
fractions are paired.  :func:`defence_price` measures what the defence costs
honest runs (F1 against the true top ``k``, nobody attacking), and
:func:`adaptive_summary` puts both in the numbers a stated rule needs: the
factor by which the checks, and the defence on top of them, raise the
fraction an attacker needs, the defence's price in honest F1, and, per
protocol, the smallest fraction with which an attacker plants its targets
while every check stays silent (:func:`undetected_fraction`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..core import Dataset
from ..metrics import f1
from ..protocols import HeavyHitterProtocol
from ..validation import check_fraction, check_int
from .defences import SupportCountDetector
from .recover import recover
from .server import Server
from .simulate import Attack, Scenario
from .threat import smallest_fraction

__all__ = ["ATTACKERS", "adaptive_attacks", "protocol_oracle", "adaptive_grid", "defence_price", "adaptive_summary",
           "undetected_fraction"]

#: the attackers :func:`adaptive_attacks` can build (module notes)
ATTACKERS = ("MGA", "spread", "one-each", "index-honest", "capped")
#: the four servers of a search: (checks, defence)
_SERVERS = (("off", False), ("on", False), ("off", True), ("on", True))


def protocol_oracle(protocol: HeavyHitterProtocol) -> str:
    """The oracle spec of the protocol's questions (``"OLH"`` for the protocols with no oracle option)."""
    return str(protocol.oracle)


def adaptive_attacks(protocol: HeavyHitterProtocol, *, targets=16, cap: int = 7, trials: int = 64) -> dict[str, Attack]:
    """The attackers that apply to ``protocol``'s oracle: name -> :class:`ldp.attacks.Attack` (module notes).

    Parameters
    ----------
    protocol : HeavyHitterProtocol
    targets : int or array_like
        As for :class:`ldp.attacks.Attack` (default 16 fresh targets).
    cap : int
        The capped attacker's targets per report (CMS questions).
    trials : int
        Hash seeds (FLH: pool members) a searched report tries.

    Returns
    -------
    dict
        ``"MGA"``, ``"spread"`` and ``"one-each"`` always, ``"index-honest"`` with FLH questions, ``"capped"``
        with CMS ones.

    Examples
    --------
    >>> import ldp
    >>> sorted(adaptive_attacks(ldp.PEM(2.0, 16, 64, oracle="FLH")))
    ['MGA', 'index-honest', 'one-each', 'spread']
    >>> adaptive_attacks(ldp.SFP(4.0, 16, 64), cap=5)["capped"].cap
    5
    """
    oracle = protocol_oracle(protocol)
    out = {"MGA": Attack("MGA", targets, trials=trials),
           "spread": Attack("MGA", targets, placement="spread", trials=trials),
           "one-each": Attack("MGA", targets, placement="spread", cap=1, trials=trials)}
    if oracle == "FLH":
        out["index-honest"] = Attack("MGA", targets, trials=1)
    if oracle == "CMS":
        out["capped"] = Attack("MGA", targets, cap=cap, trials=trials)
    return out


def _servers(guard: float, alpha: float, detector: SupportCountDetector) -> dict:
    on = dict(detector=detector, consistency=True, index=True, alpha=alpha)
    off = dict(detector=False, consistency=False, index=False, alpha=alpha)
    return {(checks, defended): (None if checks == "off" and not defended else
                                 Server(**(on if checks == "on" else off), guard=guard if defended else None))
            for checks, defended in _SERVERS}


def _search_task(label: str, protocol: HeavyHitterProtocol, data: Dataset, attacks: Mapping[str, Attack],
                 seeds: Sequence[np.random.SeedSequence], need: int, guard: float, max_fraction: float,
                 rel_tol: float, engine: str, alpha: float, null_seeds: int) -> list[dict]:
    rows = []
    detector = SupportCountDetector(alpha, seeds=null_seeds, rng=np.random.SeedSequence(0, spawn_key=(7,)))
    servers = _servers(guard, alpha, detector)
    judge = Server(detector=detector, alpha=alpha)  # what the checks say of the run an unchecked search found
    for rep, seed in enumerate(seeds):
        for (name, attack), s_att in zip(attacks.items(), seed.spawn(len(attacks))):
            s_scen, s_run, s_judge = s_att.spawn(3)
            sc = Scenario(protocol, data, attack, rng=s_scen, max_fraction=max_fraction)
            for (checks, defended), server in servers.items():
                frac, runs, out = smallest_fraction(sc, need=min(need, sc.targets.shape[0]), rng=s_run,
                                                    engine=engine, rel_tol=rel_tol, server=server)
                row = {"protocol": label, "oracle": protocol_oracle(protocol), "epsilon": float(protocol.epsilon),
                       "n": int(data.n), "k": int(protocol.k), "attacker": name, "placement": attack.placement,
                       "targets": int(sc.targets.shape[0]), "need": int(min(need, sc.targets.shape[0])), "rep": rep,
                       "checks": checks, "defence": "on" if defended else "off", "guard": guard if defended else 0.0,
                       "engine": engine, "fraction": frac, "runs": runs,
                       "planted": out.planted if out is not None else 0}
                if checks == "off" and not defended and out is not None:
                    # would the checks have seen it?  a run at that fraction, judged by every check
                    seen = judge.run(sc, out.fake, engine=engine, rng=s_run).checks
                    row.update({key: seen.get(key, np.nan) for key in  # index test: FLH questions only
                                ("index_flagged", "detector_flagged", "detector_limit", "consistency_flagged")})
                rows.append(row)
    return rows


def adaptive_grid(protocols: Mapping[str, HeavyHitterProtocol], data: Dataset, *, need: int, guard,
                  attacks: Mapping[str, Mapping[str, Attack]] | None = None, targets=16, cap: int = 7,
                  reps: int = 1, root_seed: int = 0, max_fraction: float = 0.5, rel_tol: float = 0.1,
                  engine: str = "counts", alpha: float = 1e-3, null_seeds: int = 20_000,
                  n_jobs: int = 1) -> pd.DataFrame:
    """The fraction of fake users each attacker needs, with the server's checks and the defence off and on.

    Parameters
    ----------
    protocols : mapping of str to HeavyHitterProtocol
        Label -> protocol (its ``m`` the data set's).
    data : Dataset
        The honest users' values.
    need : int
        Targets that must be released (at most the number of targets).
    guard : float or mapping of str to float
        The defence's share of fake reports (:func:`ldp.attacks.recover`'s ``eta``), for every protocol or
        per label.
    attacks : mapping of str to mapping of str to Attack, optional
        Per label, the attackers (default :func:`adaptive_attacks` with ``targets`` and ``cap``).
    targets, cap
        :func:`adaptive_attacks`'.
    reps : int
        Repetitions (a new plan, targets and order of fake accounts each).
    root_seed : int
        Protocol ``i``'s searches are seeded from ``SeedSequence(root_seed, spawn_key=(i,))``.
    max_fraction, rel_tol
        :func:`ldp.attacks.smallest_fraction`'s (``max_fraction``: the largest share tried).
    engine : {"counts", "protocol"}
        The engine of every run (:mod:`ldp.attacks.server` on what the count engine draws of the checks).
    alpha : float
        Every check's false-alarm level, the detector's rate and the defence's level.
    null_seeds : int
        The detector's null sample.
    n_jobs : int
        joblib workers (one task per protocol); the frame does not depend on it.

    Returns
    -------
    pandas.DataFrame
        One row per (protocol, attacker, rep, checks, defence): ``protocol, oracle, epsilon, n, k, attacker,
        placement, targets, need, rep, checks, defence, guard, engine, fraction, runs, planted`` (``fraction``
        ``nan``: no success up to ``max_fraction``), and for the unchecked, undefended search what the checks
        say of a run at its smallest success (``index_flagged, detector_flagged, detector_limit,
        consistency_flagged``; ``nan`` where a check does not apply, the index test without FLH questions).
    """
    need = check_int(need, "need", 1)
    reps = check_int(reps, "reps", 1)
    guards: dict[str, float] = {}
    for label in protocols:
        g = guard.get(label) if isinstance(guard, Mapping) else guard
        if g is None:
            raise ValueError(f"guard must give a share for every protocol; none for {label!r}")
        guards[label] = float(g)
        if not 0 <= guards[label] < 1:
            raise ValueError(f"guard must be a real number in [0, 1) (a share of fake reports), "
                             f"got {g!r} for {label!r}")
    tasks = []
    for i, (label, protocol) in enumerate(protocols.items()):
        att = attacks[label] if attacks is not None else adaptive_attacks(protocol, targets=targets, cap=cap)
        seeds = np.random.SeedSequence(root_seed, spawn_key=(i,)).spawn(reps)
        tasks.append(delayed(_search_task)(label, protocol, data, att, seeds, need, guards[label],
                                           check_fraction(max_fraction, "max_fraction", open_high=False), rel_tol,
                                           engine, alpha, null_seeds))
    parts = Parallel(n_jobs=n_jobs)(tasks)
    return pd.DataFrame([r for p in parts for r in p])


def _price_task(label: str, protocol: HeavyHitterProtocol, data: Dataset, guards: Sequence[float],
                seeds: Sequence[np.random.SeedSequence], alpha: float) -> list[dict]:
    rows = []
    top = data.top(min(protocol.k, data.n_distinct))
    for rep, s in enumerate(seeds):
        res = protocol.run(data, rng=s, engine="counts")
        base = f1(top, res.heavy_hitters)
        for eta in guards:
            rec = recover(res, eta=eta, alpha=alpha)
            rows.append({"protocol": label, "oracle": protocol_oracle(protocol), "epsilon": float(protocol.epsilon),
                         "n": int(data.n), "k": int(protocol.k), "guard": float(eta), "rep": rep, "f1": base,
                         "f1_defended": f1(top, rec.result.heavy_hitters), "released": len(res),
                         "withheld": rec.n_withheld})
    return rows


def defence_price(protocols: Mapping[str, HeavyHitterProtocol], data: Dataset, *, guards: Sequence[float],
                  reps: int, root_seed: int = 0, alpha: float = 1e-3, n_jobs: int = 1) -> pd.DataFrame:
    """What the defence costs honest runs: F1 against the true top ``k`` without and with it (count engine).

    Parameters
    ----------
    protocols : mapping of str to HeavyHitterProtocol
    data : Dataset
    guards : sequence of float
        Shares of fake reports the defence guards against (:func:`ldp.attacks.recover`'s ``eta``).
    reps : int
        Honest runs per protocol (protocol ``i``'s seeded from ``SeedSequence(root_seed, spawn_key=(i, 1))``);
        every guard is applied to the same runs.
    alpha : float
        The defence's level.
    n_jobs : int

    Returns
    -------
    pandas.DataFrame
        One row per (protocol, guard, rep): ``protocol, oracle, epsilon, n, k, guard, rep, f1, f1_defended,
        released, withheld``.
    """
    reps = check_int(reps, "reps", 1)
    tasks = [delayed(_price_task)(label, p, data, [float(g) for g in guards],
                                  np.random.SeedSequence(root_seed, spawn_key=(i, 1)).spawn(reps), alpha)
             for i, (label, p) in enumerate(protocols.items())]
    return pd.DataFrame([r for part in Parallel(n_jobs=n_jobs)(tasks) for r in part])


def undetected_fraction(grid: pd.DataFrame, *, defence: str = "off") -> pd.DataFrame:
    """Per protocol: the smallest fraction with which some attacker plants its targets while every check is silent.

    The least, over attackers, of the mean over repetitions of :func:`adaptive_grid`'s checked searches
    (``checks == "on"``, the given ``defence``), and the attacker that needs it; ``nan`` when none plants
    within the largest share tried.  Below it no attacker measured here succeeds unseen; at it, one does.
    """
    on = grid[(grid["checks"] == "on") & (grid["defence"] == defence)]
    mean = on.groupby(["protocol", "oracle", "attacker"], as_index=False, sort=False)["fraction"].mean()
    rows = []
    for (p, o), part in mean.groupby(["protocol", "oracle"], sort=False):
        ok = part[np.isfinite(part["fraction"])]
        best = ok.loc[ok["fraction"].idxmin()] if not ok.empty else None
        rows.append({"protocol": p, "oracle": o, "defence": defence,
                     "fraction": float(best["fraction"]) if best is not None else float("nan"),
                     "attacker": best["attacker"] if best is not None else ""})
    return pd.DataFrame(rows)


def adaptive_summary(grid: pd.DataFrame, price: pd.DataFrame) -> pd.DataFrame:
    """The numbers a stated rule needs, per (protocol, attacker): fractions, factors, the defence's price.

    Parameters
    ----------
    grid : pandas.DataFrame
        :func:`adaptive_grid`'s frame.
    price : pandas.DataFrame
        :func:`defence_price`'s frame, with the guards of ``grid`` among its ``guard`` values.

    Returns
    -------
    pandas.DataFrame
        ``protocol, oracle, epsilon, attacker, guard, plain, checked, defended, checked_defended`` (mean
        fractions over repetitions: checks off / on, defence off / on), ``checks_factor = checked / plain``,
        ``defence_factor = checked_defended / checked`` (the defence on top of the checks), ``f1, f1_defended``
        (mean honest F1 at that guard) and ``price = f1 - f1_defended``.  A factor is ``nan`` when a side is ``nan``
        (no success within the largest share tried: the factor exceeds ``max_fraction / plain``).
        ``stop_guard``: the smallest guard of ``price`` above ``checked``, and ``stop_price`` its F1 loss:
        a defence guarding against a share ``eta`` leaves any attacker with fewer than ``eta`` fake users
        unable to lift a value past its bar (each report moves an estimate by at most the maximal gain,
        :func:`ldp.attacks.recover`), so this is what stopping the attacker would cost honest runs.
    """
    keys = ["protocol", "oracle", "epsilon", "attacker"]
    mean = grid.groupby(keys + ["checks", "defence"], as_index=False, sort=False).agg(
        fraction=("fraction", "mean"), guard=("guard", "max"))
    wide = mean.set_index(keys + ["checks", "defence"])["fraction"].unstack(["checks", "defence"])
    cols = {"plain": ("off", "off"), "checked": ("on", "off"), "defended": ("off", "on"),
            "checked_defended": ("on", "on")}
    out = pd.DataFrame({name: wide[c] if c in wide.columns else np.nan for name, c in cols.items()},
                       index=wide.index).reset_index()
    g = mean[mean["defence"] == "on"].groupby(keys, sort=False)["guard"].max().rename("guard").reset_index()
    out = out.merge(g, on=keys, how="left")
    out["checks_factor"] = out["checked"] / out["plain"]
    out["defence_factor"] = out["checked_defended"] / out["checked"]
    f = price.groupby(["protocol", "guard"], as_index=False)[["f1", "f1_defended"]].mean()
    out = out.merge(f, on=["protocol", "guard"], how="left")
    out["price"] = out["f1"] - out["f1_defended"]
    loss = price.assign(loss=price["f1"] - price["f1_defended"]).groupby(["protocol", "guard"])["loss"].mean()
    stop_g, stop_p = [], []
    for row in out.itertuples():
        grid = loss.loc[row.protocol] if row.protocol in loss.index.get_level_values(0) else pd.Series(dtype=float)
        above = grid[grid.index > row.checked] if np.isfinite(row.checked) else grid[:0]
        stop_g.append(float(above.index.min()) if len(above) else np.nan)
        stop_p.append(float(above.loc[above.index.min()]) if len(above) else np.nan)
    out["stop_guard"], out["stop_price"] = stop_g, stop_p
    return out[["protocol", "oracle", "epsilon", "attacker", "guard", "plain", "checked", "defended",
                "checked_defended", "checks_factor", "defence_factor", "f1", "f1_defended", "price", "stop_guard",
                "stop_price"]]
