"""Attackers who know the checks: the fraction of fake users each needs, with the checks and the defence off and on.

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_adaptive.py [--n 200000] [--targets 16] [--need 8] [--cap 5]
        [--reps 1] [--budget 0.1] [--minimal-n 1000000] [--data-seed 20190101] [--jobs 2] [--cross LABEL ...]
        [--csv DIR] [--quick]

The book's chapter 09 plots the committed result of::

    nice -n 10 .venv/bin/python benchmarks/bench_adaptive.py --csv benchmarks/results/adaptive

Settings (printed again by the script):

* data: the synthetic exponential data set (scale 0.05, m = 64 bits), ``--n`` users, drawn with seed
  ``--data-seed`` (default: chapter 09's seed, so that the one-target table at ``--minimal-n`` = 10^6 is
  measured on the chapter's own synthetic set);
* protocols (k = 16): PEM at eps = 2 with OLH, HR, Hashtogram, CMS and FLH; TreeHist, SFP (the same five
  oracles) and SPM (OLH) at eps = 4 (at eps = 2 and this n their honest releases are mostly noise: F1 near 0);
* attackers (``ldp.attacks.adaptive_attacks``): "MGA" (plan's groups, hash search of 64 seeds or pool members),
  "spread" (every group at its share), "one-each" (every group at its share, one target per fake user),
  "index-honest" (FLH: honest index law), "capped" (CMS: ``--cap`` targets per report); ``--targets`` fresh
  targets, ``--need`` of them must be released;
* the server (``ldp.attacks.Server``, alpha = 1e-3): checks off, or on (index test, detector with cleaning,
  consistency check; an alarm fails the attack); the defence (``ldp.attacks.recover``) off, or on guarding
  against the largest share of fake reports, on the grid 0.25 %, 0.5 %, 1 %, 2 %, 5 %, whose mean honest F1
  loss is at most ``--budget`` (else the smallest share on the grid);
* engine: the count engine, the checks' honest part drawn from its law (``ldp.attacks.server``); a last table
  re-runs the adaptive attackers' checked fractions with real reports (the protocol engine) for the ``--cross``
  protocols, as a cross-check;
* one target (the minimal attack): the same protocols, oracles and attackers with one fresh target, which must
  be released, ``--minimal-n`` users, 3 repetitions;
* honest F1 with the defence off and on: 5 count-engine runs per protocol.

Prints the tables of ``ldp.attacks.adaptive_grid``, ``defence_price``, ``adaptive_summary`` and
``undetected_fraction``; ``--csv DIR`` writes them as CSV files, ``adaptive_<table>_<name>.csv`` for the tables
``sixteen-targets`` and ``one-target`` and the names ``grid``, ``price``, ``summary``, ``floor``, and
``adaptive_cross.csv`` (the cross-check); every row records the command, the commit, the machine, the load
average before and after its table and the table's wall-clock seconds (``benchmarks/provenance.py``).  Seeds
are fixed (root seed 0): the numbers are reproducible and do not depend on ``--jobs``.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import provenance

import ldp
from ldp.attacks import (
    Scenario,
    Server,
    adaptive_attacks,
    adaptive_grid,
    adaptive_summary,
    defence_price,
    undetected_fraction,
)

GUARDS = (0.0025, 0.005, 0.01, 0.02, 0.05)


def protocols(quick: bool) -> dict:
    out = {}
    oracles = ("OLH", "CMS", "FLH") if quick else ("OLH", "HR", "Hashtogram", "CMS", "FLH")
    for o in oracles:
        out[f"PEM-{o}"] = ldp.PEM(2.0, 16, 64, oracle=o)
    for name, cls in (("TreeHist", ldp.TreeHist), ("SFP", ldp.SFP)):
        for o in (("CMS",) if quick else oracles):
            out[f"{name}-{o}"] = cls(4.0, 16, 64, oracle=o)
    out["SPM-OLH"] = ldp.SPM(4.0, 16, 64)
    return out


def choose_guards(price: pd.DataFrame, budget: float) -> dict:
    """Per protocol: the largest guard whose mean honest F1 loss is at most ``budget`` (else the smallest)."""
    loss = price.assign(loss=price["f1"] - price["f1_defended"]).groupby(["protocol", "guard"])["loss"].mean()
    out = {}
    for p, part in loss.groupby(level="protocol"):
        part = part.droplevel("protocol")
        ok = part[(part.index > 0) & (part <= budget)]
        out[p] = float(ok.index.max()) if not ok.empty else float(min(g for g in part.index if g > 0))
    return out


def show(title: str, frame: pd.DataFrame) -> None:
    print(f"\n== {title}", flush=True)
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.4f}"), flush=True)


def measure(label: str, protos: dict, data, *, need: int, targets: int, cap: int, reps: int, budget: float,
            jobs: int, csv: Path | None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    t0, load0, start = time.perf_counter(), provenance.load(), time.perf_counter()
    price = defence_price(protos, data, guards=(0.0, *GUARDS), reps=5, n_jobs=jobs)
    guards = choose_guards(price, budget)
    print(f"[{label}] honest runs: {time.perf_counter() - t0:.0f} s; guards chosen (F1 loss <= {budget}): {guards}",
          flush=True)
    t0 = time.perf_counter()
    grid = adaptive_grid(protos, data, need=need, guard=guards, targets=targets, cap=cap, reps=reps, n_jobs=jobs)
    print(f"[{label}] searches: {time.perf_counter() - t0:.0f} s", flush=True)
    summary = adaptive_summary(grid, price)
    cols = ["protocol", "attacker", "checks", "defence", "guard", "fraction", "runs", "planted", "index_flagged",
            "detector_flagged", "detector_limit", "consistency_flagged"]
    show(f"{label}: smallest fraction of fake users (mean over reps where several)", grid[cols])
    show(f"{label}: honest F1 without and with the defence (5 runs each)",
         price.groupby(["protocol", "guard"], as_index=False)[["f1", "f1_defended", "withheld"]].mean())
    show(f"{label}: summary (factors: checked / plain, checked_defended / checked; price = f1 - f1_defended)",
         summary)
    floor = pd.concat([undetected_fraction(grid, defence="off"), undetected_fraction(grid, defence="on")])
    show(f"{label}: smallest fraction with which an attacker plants {need} targets, every check silent", floor)
    if csv is not None:
        made = made_by(load0, time.perf_counter() - start)
        for name, frame in (("grid", grid), ("price", price), ("summary", summary), ("floor", floor)):
            write(frame.assign(**made), csv / f"adaptive_{label}_{name}.csv")
    return grid, price, summary


#: the code the run started from (``HEAD``, ``+dirty`` if ``ldp`` or ``benchmarks`` differed from it then)
STARTED_AT = provenance.commit("ldp", "benchmarks")


def made_by(load_before: float, seconds: float) -> dict:
    """The provenance columns of a table (``benchmarks/provenance.py``)."""
    return {"commit": STARTED_AT, "machine": provenance.machine(),
            "command": provenance.command("bench_adaptive.py"), "load_before": load_before,
            "load_after": provenance.load(), "seconds": round(seconds, 1), "date": provenance.now()}


def write(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` as a CSV at ``path``, written atomically."""
    from ldp.paths import atomic_path

    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def cross_check(grid: pd.DataFrame, protos: dict, data, *, targets: int, cap: int, labels,
                csv: Path | None) -> None:
    """The adaptive attackers' checked fractions (count engine) re-run once with real reports."""
    rows = []
    load0, start = provenance.load(), time.perf_counter()
    server = Server(rng=np.random.SeedSequence(0, spawn_key=(7,)))
    pick = grid[(grid["checks"] == "on") & (grid["defence"] == "off") & grid["fraction"].notna()
                & grid["attacker"].isin(["index-honest", "capped", "spread", "one-each"]) & (grid["rep"] == 0)
                & grid["protocol"].isin(labels)]
    for row in pick.itertuples():
        P = protos[row.protocol]
        attack = adaptive_attacks(P, targets=targets, cap=cap)[row.attacker]
        t0 = time.perf_counter()
        sc = Scenario(P, data, attack, rng=np.random.SeedSequence(1, spawn_key=(len(rows),)))
        out = server.run(sc, float(row.fraction), engine="protocol", rng=2)
        rows.append({"protocol": row.protocol, "attacker": row.attacker, "fraction": row.fraction,
                     "planted": out.planted, "alarm": out.alarm, **out.checks,
                     "seconds": round(time.perf_counter() - t0, 1)})
    show("cross-check with real reports (protocol engine, one run at the count engine's checked fraction; "
         "another scenario draw)", pd.DataFrame(rows))
    if csv is not None:
        write(pd.DataFrame(rows).assign(**made_by(load0, time.perf_counter() - start)), csv / "adaptive_cross.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--targets", type=int, default=16)
    ap.add_argument("--need", type=int, default=8)
    ap.add_argument("--cap", type=int, default=5)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--budget", type=float, default=0.1)
    ap.add_argument("--minimal-n", type=int, default=10**6)
    ap.add_argument("--data-seed", type=int, default=20190101, help="the synthetic sets' seed (chapter 09's)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cross", nargs="*", default=["PEM-OLH", "PEM-CMS", "PEM-FLH", "TreeHist-HR", "SFP-CMS"])
    ap.add_argument("--csv", type=Path)
    ap.add_argument("--quick", action="store_true", help="n = 50,000, fewer oracles (a smoke run)")
    args = ap.parse_args()
    if args.quick:
        args.n, args.minimal_n = 50_000, 200_000
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 1000)
    pd.set_option("display.max_columns", 40)
    start = time.perf_counter()
    print(f"settings: exponential data (scale 0.05, m = 64, seed {args.data_seed}), n = {args.n:,}; k = 16; "
          f"{args.targets} fresh targets, need "
          f"{args.need}; cap {args.cap}; reps {args.reps}; alpha 1e-3; defence budget {args.budget} F1; "
          f"count engine; root seed 0", flush=True)
    data = ldp.datasets.exponential(n=args.n, scale=0.05, m=64, rng=args.data_seed)
    protos = protocols(args.quick)
    grid, _, _ = measure("sixteen-targets", protos, data, need=args.need, targets=args.targets, cap=args.cap,
                         reps=args.reps, budget=args.budget, jobs=args.jobs, csv=args.csv)
    print(f"\none target: n = {args.minimal_n:,}, the same protocols", flush=True)
    big = ldp.datasets.exponential(n=args.minimal_n, scale=0.05, m=64, rng=args.data_seed)
    measure("one-target", protos, big, need=1, targets=1, cap=args.cap, reps=max(3, args.reps), budget=args.budget,
            jobs=args.jobs, csv=args.csv)
    cross_check(grid, protos, data, targets=args.targets, cap=args.cap, labels=args.cross, csv=args.csv)
    print(f"\ntotal: {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
