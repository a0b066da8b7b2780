"""SFP's server with the hashed oracles (count-mean sketch and Hadamard sketch) through the protocol engine:
its CPU per aggregate and its exact results, before and after a change to :mod:`ldp.oracles.hashed_kernels`.

Chapter 08's deployer's table sizes: 100,000 users of the synthetic exponential set (``m = 64``),
``epsilon = 2``, ``k = 16``, query limit ``2**20``.  Each protocol's plan, reports and aggregate are seeded
(``rng=1, 2, 3``); ``--record FILE`` pickles every round's kept candidates, estimates and supports and the
heavy hitters, ``--compare FILE`` checks them exactly; the CPU (:func:`time.process_time`, numba's threads
included) of each ``aggregate`` is printed.

Usage::

    python benchmarks/bench_sfp_hashed.py --record /tmp/sfp.pkl
    python benchmarks/bench_sfp_hashed.py --compare /tmp/sfp.pkl --reps 3
"""
from __future__ import annotations

import argparse
import time

from identity import record_or_compare

from ldp import datasets
from ldp.experiments.registry import resolve_protocol

N, EPSILON, K, M, QUERY_LIMIT, SEED = 100_000, 2.0, 16, 64, 2**20, 20190101
PROTOCOLS = {"SFP": {}, "SFP (Hadamard sketch)": {"oracle": "Hashtogram"}}


def aggregates(reps: int) -> dict:
    """Every protocol's result (rounds and heavy hitters); prints each aggregate's CPU."""
    values = datasets.exponential(N, scale=0.05, m=M, rng=SEED)
    out = {}
    for name, kw in PROTOCOLS.items():
        proto = resolve_protocol("SFP")[1](EPSILON, K, M, query_limit=QUERY_LIMIT, **kw)
        plan = proto.plan(N, rng=1)
        reports = proto.privatize(values, plan=plan, rng=2)
        proto.aggregate(reports, rng=3)  # compiled (or loaded from numba's cache) first
        cpu = []
        for _ in range(reps):
            t = time.process_time()
            res = proto.aggregate(reports, rng=3)
            cpu.append(time.process_time() - t)
        print(f"{name}: aggregate {', '.join(f'{c:.2f}' for c in cpu)} s CPU (n = {N:,})")
        out[name] = {"heavy_hitters": res.heavy_hitters, "estimates": res.estimates,
                     "rounds": [(r.name, r.n_candidates, r.kept, r.estimates, r.support) for r in res.rounds]}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record")
    ap.add_argument("--compare")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args(argv)
    if not (args.record or args.compare):
        aggregates(args.reps)
        return 0
    return record_or_compare(lambda: aggregates(args.reps), record=args.record, compare=args.compare,
                             unit="protocols")


if __name__ == "__main__":
    raise SystemExit(main())
