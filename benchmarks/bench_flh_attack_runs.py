"""CPU per run of chapter 10's FLH/OLH grid and per search of chapter 09, before and after the compare kernel.

Usage::

    .venv/bin/python benchmarks/bench_flh_attack_runs.py [--epsilons 0.5 2 5] [--reps 2] [--searches]

For each budget, PEM with FLH (``h = 4096``) and with OLH on the paper's synthetic set (n = 10^6, m = 64,
scale 0.05) with the count engine, CPU seconds per run (``time.process_time``, all threads): "lookups" forces
the lookup kernels for every ``d'`` (what every run used before ``flh_kernels.support_by_thresholds``), "now"
is the library's dispatch.  The results of both are compared (they must be the same).  ``--searches`` also
prints the CPU of chapter 09's one-target searches (:func:`ldp.attacks.threshold_grid`, both attacks, one
repetition) per protocol at ``eps = 2``, whose cost is spread over the count engine (see the report).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ldp
from ldp import datasets
from ldp.oracles import flh as flh_module


def per_run(ds, eps, kw, reps, seed=5):
    """CPU seconds per run and the results' heavy hitters and estimates."""
    P = ldp.PEM(eps, 16, 64, query_limit=2**20, **kw)
    P.run(ds, rng=0, engine="counts")  # compile / load the kernels
    out = []
    t = time.process_time()
    for r in range(reps):
        res = P.run(ds, rng=seed + r, engine="counts")
        out.append((np.asarray(res.heavy_hitters), np.asarray(res.estimates)))
    return (time.process_time() - t) / reps, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 0.9, 1.2, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--searches", action="store_true")
    args = ap.parse_args(argv)
    ds = datasets.exponential(1_000_000, scale=0.05, m=64, rng=np.random.default_rng(20190101))
    flh = {"oracle": "FLH", "pool_size": 4096}
    total = {"OLH": 0.0, "FLH lookups": 0.0, "FLH now": 0.0}
    print(f"{'eps':>5} {'d_prime':>7} {'OLH s/run':>10} {'FLH lookups s/run':>18} {'FLH now s/run':>14} same")
    for eps in args.epsilons:
        t_olh, _ = per_run(ds, eps, {}, args.reps)
        keep = flh_module.THRESHOLD_D_PRIME
        flh_module.THRESHOLD_D_PRIME = 0  # every d' through the lookup kernels
        try:
            t_old, r_old = per_run(ds, eps, flh, args.reps)
        finally:
            flh_module.THRESHOLD_D_PRIME = keep
        t_new, r_new = per_run(ds, eps, flh, args.reps)
        same = all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(r_old, r_new))
        dp = ldp.FLH(eps, m=64, pool_size=4096).d_prime
        print(f"{eps:5.2f} {dp:7d} {t_olh:10.3f} {t_old:18.3f} {t_new:14.3f} {same}", flush=True)
        total["OLH"] += t_olh
        total["FLH lookups"] += t_old
        total["FLH now"] += t_new
    print("sum over the budgets (s per run each): " + ", ".join(f"{k} {v:.2f}" for k, v in total.items()))
    if args.searches:
        from ldp import attacks
        from ldp.attacks import Attack
        from ldp.book.chapters.c09_malicious_users import compute

        every = {**compute.protocols(16), **compute.oracle_variants(16)}
        for name, make in every.items():
            P = {name: make}
            t = time.process_time()
            _, steps = attacks.honest_grid(P, {"Synthetic": ds}, [2.0], reps=1, root_seed=1, n_jobs=1)
            t_h = time.process_time() - t
            pred = attacks.predictions(steps, {"Synthetic": ds.n}, kinds=("MGA", "input"), needs=(1,))
            t = time.process_time()
            g = attacks.threshold_grid(P, {"Synthetic": ds}, [2.0], [Attack("MGA", 1), Attack("input", 1)], reps=1,
                                       root_seed=1, starts=pred, max_fraction=0.5, grow=1.3, rel_tol=0.1, n_jobs=1)
            t_s = time.process_time() - t
            print(f"chapter 09 {name:18s}: honest run {t_h:.3f} s; search {t_s / len(g):.3f} s "
                  f"({g['runs'].sum() / len(g):.1f} runs each, {t_s / g['runs'].sum():.3f} s per run)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
