"""Time per run of every heavy-hitter protocol: protocol engine vs count-level engine.

Paper scale (section 6): n = 10**6 users, m = 64 bits, k = 16, eps = 2, at most
2**20 frequency-oracle queries, on the synthetic exponential data set
(:func:`ldp.datasets.exponential`); ``--m 160`` repeats PEM on 160-bit values.

Usage::

    python benchmarks/bench_protocols.py                 # full table (a few minutes)
    python benchmarks/bench_protocols.py --no-protocol   # count engine only (seconds)
    python benchmarks/bench_protocols.py --m 160 --only PEM

Columns: ``counts ms`` (median over ``--reps`` runs after one warm-up run),
``protocol s`` (one run: privatize + aggregate), ``hashes`` (hash evaluations
of the protocol engine's aggregation: sum over steps of reports x candidates;
for FLH, pool size x candidates),
and F1 of the last run of each engine.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import ldp
from ldp import datasets, metrics


def protocols(k: int, m: int, eps: float, limit: int):
    return {
        "PEM": ldp.PEM(eps, k, m, query_limit=limit),
        "PEM (FLH, h = 4096)": ldp.PEM(eps, k, m, query_limit=limit, oracle="FLH", pool_size=4096),
        "SPM": ldp.SPM(eps, k, m, query_limit=limit),
        "SPM (partition 10%)": ldp.SPM(eps, k, m, query_limit=limit, final_fraction=0.1),
        "MCM": ldp.MCM(eps, k, m, query_limit=limit),
        "MCM (partition 10%)": ldp.MCM(eps, k, m, query_limit=limit, final_fraction=0.1),
        "Strawman": ldp.Strawman(eps, k, m, query_limit=limit),
    }


def hash_evaluations(result) -> int:
    """Reports x candidates summed over the aggregation steps (pairs: 2 x users x |C_alpha|).

    FLH: pool size x candidates per group of a step (the reports are only tallied).
    """
    total = 0
    h = int(result.params.get("pool_size") or 0)
    for r in result.rounds:
        if h:
            total += h * r.n_candidates * len(r.groups)
        elif r.kind == "candidates" and result.protocol == "SPM":
            total += 2 * r.n_users * int(np.sqrt(r.n_candidates / max(len(r.groups), 1)))
        else:
            total += r.n_users * r.n_candidates
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--eps", type=float, default=2.0)
    ap.add_argument("--limit", type=int, default=2**20)
    ap.add_argument("--reps", type=int, default=20, help="count-engine runs per protocol")
    ap.add_argument("--no-protocol", action="store_true", help="skip the protocol engine")
    ap.add_argument("--strawman-protocol", action="store_true",
                    help="also time the strawman's protocol engine (its product of candidates is huge)")
    ap.add_argument("--only", nargs="*", help="protocol names to run (e.g. PEM MCM)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}, python {sys.version.split()[0]}")
    t0 = time.perf_counter()
    data = datasets.exponential(args.n, m=args.m, rng=args.seed)
    _ = data.user_index  # the count engine's one-off sort (cached on the data set)
    print(f"# data: exponential, n = {data.n}, m = {data.m}, {data.n_distinct} distinct values "
          f"(generated and sorted in {time.perf_counter() - t0:.2f} s)")
    print(f"# k = {args.k}, eps = {args.eps}, query limit = {args.limit}")
    top = data.top(args.k)
    rows = []
    for name, P in protocols(args.k, args.m, args.eps, args.limit).items():
        if args.only and name.split(" ")[0] not in args.only:
            continue
        P.run(data, rng=10**6, engine="counts")  # warm-up: numba compilation, PEM optimisation
        times, res = [], None
        for s in range(args.reps):
            t = time.perf_counter()
            res = P.run(data, rng=args.seed + s, engine="counts")
            times.append(time.perf_counter() - t)
        row = {"protocol": name, "counts_ms": 1000 * statistics.median(times),
               "f1_counts": metrics.f1(top, res.heavy_hitters), "queries": res.queries,
               "groups": len(res.group_sizes)}
        skip = args.no_protocol or (name == "Strawman" and not args.strawman_protocol)
        if not skip:
            t = time.perf_counter()
            pr = P.run(data, rng=args.seed, engine="protocol")
            row["protocol_s"] = time.perf_counter() - t
            row["f1_protocol"] = metrics.f1(top, pr.heavy_hitters)
            row["hashes"] = hash_evaluations(pr)
        rows.append(row)
        _print_row(row, header=len(rows) == 1)
    return 0


def _print_row(r, header=False):
    if header:
        print(f"{'protocol':22s} {'groups':>6s} {'queries':>9s} {'counts ms':>10s} {'F1':>5s} "
              f"{'protocol s':>11s} {'hashes':>9s} {'F1':>5s}")
    ps = f"{r['protocol_s']:11.1f}" if "protocol_s" in r else f"{'-':>11s}"
    hs = f"{r['hashes']:9.2e}" if "hashes" in r else f"{'-':>9s}"
    fp = f"{r['f1_protocol']:5.2f}" if "f1_protocol" in r else f"{'-':>5s}"
    print(f"{r['protocol']:22s} {r['groups']:6d} {r['queries']:9d} {r['counts_ms']:10.1f} {r['f1_counts']:5.2f} "
          f"{ps} {hs} {fp}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
