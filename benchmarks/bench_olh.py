"""Throughput of OLH aggregation (``OLH.support``) in user x candidate pairs per second; FLH's for comparison.

Usage::

    .venv/bin/python benchmarks/bench_olh.py [--n 200000] [--candidates 16384]
        [--epsilon 4] [--repeat 3] [--m 32 64 160] [--client] [--flh-pool 4096]

``--flh-pool h`` also times FLH's aggregation (``FLH.support_from_tally``:
each candidate hashed by the ``h`` pool members, one tally lookup each) in
pool member x candidate pairs per second, on the same random candidates (not
consecutive: the kernel's faster path for runs of consecutive candidates, as in
PEM's rounds, is not used).

For each bit width ``m`` it privatizes ``n`` random values, then times
``support(reports, candidates)`` on ``2**14`` random candidates (best of
``--repeat`` runs after one warm-up call that also triggers numba
compilation or loads it from the cache).  ``--client`` also times
``privatize``.  Besides wall-clock throughput it prints pairs per CPU-second
(process CPU time over all threads): on a shared machine the wall figure
drops when other processes compete for the cores, the per-CPU figure much
less.  For scale: the pure-LDP package's OLH aggregation runs at
about 1.1e6 pairs/s.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numba
import numpy as np

import ldp
from ldp.values import MAX_BITS, uniform


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def random_values(rng, n, m):
    """n uniform m-bit values in the canonical representation (ldp.values.uniform)."""
    return uniform(n, m, rng=rng)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200_000, help="number of reports")
    ap.add_argument("--candidates", type=int, default=2**14, help="number of candidates")
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--m", type=int, nargs="+", default=[32, 64, 160])
    ap.add_argument("--client", action="store_true", help="also time privatize")
    ap.add_argument("--flh-pool", type=int, default=0, help="also time FLH with this pool size")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)

    print(f"CPU: {cpu_name()} ({os.cpu_count()} logical CPUs)")
    print(f"numba {numba.__version__}, threads: {numba.get_num_threads()}, "
          f"numpy {np.__version__}, python {sys.version.split()[0]}, load average {os.getloadavg()}")
    print(f"n = {args.n} reports, {args.candidates} candidates, epsilon = {args.epsilon}")
    seeds = np.random.SeedSequence(args.seed).spawn(len(args.m))
    for m, ss in zip(args.m, seeds):
        if not 1 <= m <= MAX_BITS:
            raise SystemExit(f"--m must be in [1, {MAX_BITS}]")
        rng = np.random.default_rng(ss)
        olh = ldp.OLH(args.epsilon, m=m)
        values = random_values(rng, args.n, m)
        cands = random_values(rng, args.candidates, m)
        t0 = time.perf_counter()
        reports = olh.privatize(values, rng=rng)
        t_client = time.perf_counter() - t0
        t0 = time.perf_counter()
        olh.support(reports, cands[:64])  # warm-up / compile or cache load
        t_warm = time.perf_counter() - t0
        best = best_cpu = float("inf")
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            olh.support(reports, cands)
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        pairs = args.n * args.candidates
        line = (f"m = {m:4d} (C = {olh.n_chunks} chunks, d' = {olh.d_prime}): support {best:.3f} s "
                f"-> {pairs / best:.3e} pairs/s wall, {pairs / best_cpu:.3e} pairs per CPU-second "
                f"[warm-up {t_warm:.2f} s]")
        if args.client:
            line += f"  privatize {args.n / t_client:.3e} users/s"
        print(line, flush=True)
        if args.flh_pool:
            flh = ldp.FLH(args.epsilon, m=m, pool_size=args.flh_pool)
            table = flh.tally(flh.privatize(values, rng=rng))
            flh.support_from_tally(table, cands[:64])  # warm-up
            best = best_cpu = float("inf")
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                flh.support_from_tally(table, cands)
                best = min(best, time.perf_counter() - t0)
                best_cpu = min(best_cpu, time.process_time() - c0)
            pairs = args.flh_pool * args.candidates
            print(f"         FLH, h = {args.flh_pool}: support from the tally {best:.3f} s -> {pairs / best:.3e} "
                  f"pairs/s wall, {pairs / best_cpu:.3e} per CPU-second", flush=True)
    print(f"threading layer: {numba.threading_layer()}; load average {os.getloadavg()} "
          "(other processes on the machine lower the wall-clock figure)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
