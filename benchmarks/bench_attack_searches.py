"""CPU of chapter 09's attack searches at the paper's scale, per grid, per search and per run.

Usage::

    .venv/bin/python benchmarks/bench_attack_searches.py [--n 1000000] [--eps 2.0] [--reps 2] [--aol]

Runs, on the synthetic set of chapter 09 (``ldp.datasets.exponential(n, scale=0.05, m=64, rng=20190101)``;
with ``--aol`` the AOL set too) at the privacy budgets ``--eps``, what the chapter's cells 4 and 6 run
(:mod:`ldp.book.chapters.c09_malicious_users`), in this process (``n_jobs=1``):

* ``honest``: :func:`ldp.attacks.honest_grid` of the chapter's 5 protocols (its steps give the searches'
  starting points) and of the 2 oracle variants;
* ``one target``: :func:`ldp.attacks.threshold_grid` of the 5 protocols, maximal-gain and input attacks
  with one target, each search started at its prediction;
* ``16 targets``: :func:`ldp.attacks.threshold_grid` of the 7 protocols at 2.0 (when ``--eps`` holds it),
  16 targets, ``needs`` 1, 4, 8 and 16.

The chapter's search settings (``grow=1.3``, ``rel_tol=0.1``, ``max_fraction=0.5``, ``trials=64``).  Each
grid runs once on 20000 users of each data set first (numba's compiled code loaded or compiled, caches
warm), then is timed with ``time.process_time`` (CPU of this process).  Prints one line per grid: CPU,
searches, runs, CPU per search and per run, and a digest of the grid's table (equal digests: equal tables).
"""
from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np
import pandas as pd

from ldp import attacks, datasets
from ldp.attacks import Attack
from ldp.book.chapters.c09_malicious_users import compute
from ldp.core import Dataset

SEED, K, TRIALS = 20190101, 16, 64
SEARCH = dict(max_fraction=0.5, grow=1.3, rel_tol=0.1, n_jobs=1)
NEEDS = [1, 4, 8, 16]


def digest(table: pd.DataFrame) -> str:
    return hashlib.sha1(pd.util.hash_pandas_object(table, index=True).values.tobytes()).hexdigest()[:12]


def grids(data: dict, eps: list[float], reps: int, timed) -> None:
    syn, sizes = data["Synthetic"], {name: d.n for name, d in data.items()}
    prot, var = compute.protocols(K), compute.oracle_variants(K)
    _, steps = timed("honest", lambda: attacks.honest_grid(prot, data, eps, reps=reps, ranks=NEEDS, root_seed=SEED,
                                                           n_jobs=1))
    _, steps_var = timed("honest variants", lambda: attacks.honest_grid(var, {"Synthetic": syn}, [2.0], reps=reps,
                                                                        ranks=NEEDS, root_seed=SEED + 5, n_jobs=1))
    pred = attacks.predictions(steps, sizes, kinds=("MGA", "input"), needs=(1,), targets=1, trials=TRIALS)
    timed("one target", lambda: attacks.threshold_grid(prot, data, eps, [Attack("MGA", 1, trials=TRIALS),
                                                                         Attack("input", 1)],
                                                       reps=reps, root_seed=SEED, starts=pred, **SEARCH))
    if 2.0 in eps:
        steps16 = pd.concat([steps, steps_var], ignore_index=True)
        pred16 = attacks.predictions(steps16[np.isclose(steps16["epsilon_run"], 2.0)], sizes, kinds=("MGA", "input"),
                                     needs=NEEDS, targets=16, trials=TRIALS)
        timed("16 targets", lambda: attacks.threshold_grid({**prot, **var}, {"Synthetic": syn}, [2.0],
                                                           [Attack("MGA", 16, trials=TRIALS), Attack("input", 16)],
                                                           reps=reps, needs=NEEDS, root_seed=SEED + 1,
                                                           starts=pred16, **SEARCH))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--eps", type=float, nargs="+", default=[2.0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--aol", action="store_true")
    args = ap.parse_args(argv)

    def quiet(name, f):
        return f()

    def timed(name, f):
        t = time.process_time()
        r = f()
        cpu = time.process_time() - t
        if isinstance(r, tuple):
            line = f"{name:16s} {cpu:7.1f} s CPU, {len(r[0])} runs: {cpu / max(len(r[0]), 1):.3f} s per run"
        else:
            runs = int(r["runs"].sum())
            line = (f"{name:16s} {cpu:7.1f} s CPU, {len(r)} searches, {runs} runs: {cpu / len(r):.3f} s per search, "
                    f"{cpu / max(runs, 1):.4f} s per run")
        table = r[0] if isinstance(r, tuple) else r
        print(f"{line}  [table {digest(table)}]", flush=True)
        return r

    data = {"Synthetic": datasets.exponential(n=args.n, scale=0.05, m=64, rng=SEED)}
    small = {"Synthetic": datasets.exponential(n=20_000, scale=0.05, m=64, rng=SEED)}
    if args.aol:
        data["AOL"] = compute.data_sets(n=10, scale=0.05, m=64, seed=SEED, no_aol="")["AOL"]
        small["AOL"] = Dataset(data["AOL"].values[::max(data["AOL"].n // 20_000, 1)], data["AOL"].m)
    grids(small, [2.0], 1, quiet)  # warm-up: compiled code loaded for every data set's types
    print(f"n = {args.n:,}, eps = {args.eps}, reps = {args.reps}, data sets: {list(data)}")
    grids(data, [float(e) for e in args.eps], args.reps, timed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
