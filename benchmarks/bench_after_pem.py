"""Time per run of the protocols that came after PEM (TreeHist, SFP) next to PEM, MCM and SPM (chapter 08).

Paper scale: n = 10**6 users, m = 64 bits (``--m 160`` for the URL width),
k = 16, eps = 2, at most 2**20 oracle queries, on the synthetic exponential
data set (:func:`ldp.datasets.exponential`).

Usage::

    python benchmarks/bench_after_pem.py                   # count engine, all protocols (about a minute)
    python benchmarks/bench_after_pem.py --m 160
    python benchmarks/bench_after_pem.py --protocol-n 100000   # also the protocol engine at n = 10**5

Columns: ``counts ms`` (median over ``--reps`` count-engine runs after one
warm-up run), ``F1`` (mean over those runs), ``bits/user`` (what one user
sends: the sum over her reports of the oracle's report size), ``queries``
(oracle queries of the last run) and, with ``--protocol-n``, the protocol
engine's privatize and aggregate times and the reports' size in memory.
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


def protocols(k: int, m: int, eps: float, limit: int) -> dict:
    return {
        "PEM": ldp.PEM(eps, k, m, query_limit=limit),
        "PEM (HR)": ldp.PEM(eps, k, m, query_limit=limit, oracle="HR"),
        "SPM": ldp.SPM(eps, k, m, query_limit=limit),
        "MCM": ldp.MCM(eps, k, m, query_limit=limit),
        "TreeHist": ldp.TreeHist(eps, k, m, query_limit=limit),
        "TreeHist (Hashtogram)": ldp.TreeHist(eps, k, m, query_limit=limit, oracle="Hashtogram"),
        "TreeHist (8 bits/level)": ldp.TreeHist(eps, k, m, query_limit=limit, bits_per_level=8),
        "TreeHist (OLH, 8 bits)": ldp.TreeHist(eps, k, m, query_limit=limit, bits_per_level=8, oracle="OLH"),
        "SFP": ldp.SFP(eps, k, m, query_limit=limit),
        "SFP (OLH)": ldp.SFP(eps, k, m, query_limit=limit, oracle="OLH"),
    }


def report_bits(oracle) -> int:
    """Bits of one report of ``oracle`` (seed + payload)."""
    if hasattr(oracle, "bits_per_report"):
        return int(oracle.bits_per_report)
    return 64 + int(oracle.d_prime - 1).bit_length()  # OLH: seed and y in [d']


def bits_per_user(P, n: int) -> float:
    """Mean bits sent per user: each group's reports (in the published plan), weighted by the group's share."""
    plan = P.plan(n, rng=0)
    return float(sum(f * sum(report_bits(q.oracle()) for q in qs) for f, qs in zip(plan.fractions, plan.questions)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--eps", type=float, default=2.0)
    ap.add_argument("--limit", type=int, default=2**20)
    ap.add_argument("--reps", type=int, default=10, help="count-engine runs per protocol")
    ap.add_argument("--protocol-n", type=int, default=0, help="also time the protocol engine on this many users")
    ap.add_argument("--only", nargs="*", help="protocol labels to run (prefix match)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}, python {sys.version.split()[0]}")
    t0 = time.perf_counter()
    data = datasets.exponential(args.n, m=args.m, rng=args.seed)
    _ = data.user_index
    print(f"# data: exponential, n = {data.n}, m = {data.m}, {data.n_distinct} distinct values "
          f"({time.perf_counter() - t0:.2f} s)")
    print(f"# k = {args.k}, eps = {args.eps}, query limit = {args.limit}, {args.reps} count-engine runs")
    top = data.top(args.k)
    small = None
    if args.protocol_n:
        small = datasets.exponential(args.protocol_n, m=args.m, rng=args.seed + 1)
    header = f"{'protocol':26s} {'groups':>6s} {'bits/user':>9s} {'queries':>9s} {'counts ms':>10s} {'F1':>5s}"
    if small is not None:
        header += f" {'privatize s':>11s} {'aggregate s':>11s} {'reports MB':>10s} {'F1':>5s}"
    print(header)
    for name, P in protocols(args.k, args.m, args.eps, args.limit).items():
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        P.run(data, rng=10**6, engine="counts")  # warm-up: compilation, PEM's optimizer
        times, f1s, res = [], [], None
        for s in range(args.reps):
            t = time.perf_counter()
            res = P.run(data, rng=args.seed + s, engine="counts")
            times.append(time.perf_counter() - t)
            f1s.append(metrics.f1(top, res.heavy_hitters))
        line = (f"{name:26s} {len(res.group_sizes):6d} {bits_per_user(P, data.n):9.0f} {res.queries:9d} "
                f"{1000 * statistics.median(times):10.1f} {np.mean(f1s):5.2f}")
        if small is not None:
            t = time.perf_counter()
            plan = P.plan(small.n, rng=args.seed)
            reports = P.privatize(small, plan=plan, rng=args.seed + 1)
            t_priv = time.perf_counter() - t
            t = time.perf_counter()
            pr = P.aggregate(reports, rng=args.seed)
            t_agg = time.perf_counter() - t
            line += (f" {t_priv:11.2f} {t_agg:11.2f} {reports.nbytes / 2**20:10.1f} "
                     f"{metrics.f1(small.top(args.k), pr.heavy_hitters):5.2f}")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
