"""CPU of FLH's supports for a mid-size hash range (``THRESHOLD_D_PRIME < d'``): per call and per PEM run.

Usage::

    .venv/bin/python benchmarks/bench_flh_lookup.py [--d-primes 14 40 150] [--epsilons 2.5 3 4 5] [--reps 3]

(``--epsilons`` with no value: no PEM runs.)

Per call: :meth:`ldp.FLH.support_from_tally` with ``h = 4096`` on a random tally and 65,536 candidates, as PEM
asks them (``m = 16``: every value; ``m = 64``: 16 runs of 4,096 consecutive values) and 65,536 random values,
in CPU nanoseconds per (pool member, candidate) pair (``time.process_time``, all threads).  Per run: PEM with
FLH (``h = 4096``) on the paper's synthetic set (n = 10^6, m = 64, scale 0.05) with the count engine, CPU
seconds per run.  Run it before and after a change of the kernels (the results are checked by
``benchmarks/check_identical_flh_attacks.py``).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ldp
from ldp import datasets

H = 4096
NC = 65536


def candidates(kind: str, m: int, rng) -> np.ndarray:
    """65,536 candidates: PEM's (runs of consecutive values) or random ``m``-bit values."""
    if kind == "random":
        return ldp.values.uniform(NC, m, rng=rng)
    if m == 16:
        return np.arange(NC, dtype=np.uint64)
    parents = ldp.values.uniform(16, m - 12, rng=rng).astype(np.uint64)
    return ((parents[:, None] << np.uint64(12)) + np.arange(4096, dtype=np.uint64)[None, :]).reshape(-1)


def per_call(dp: int, m: int, kind: str, reps: int) -> float:
    """CPU nanoseconds per (pool member, candidate) pair of one ``support_from_tally`` call."""
    rng = np.random.default_rng(dp * 1000 + m)
    o = ldp.FLH(1.0, m=m, pool_size=H, pool_seed=int(rng.integers(0, 2**63)), d_prime=dp)
    table = rng.integers(0, 500, size=o.tally_shape)
    cands = candidates(kind, m, rng)
    o.support_from_tally(table, cands)  # compile / load the kernels
    t = time.process_time()
    for _ in range(reps):
        o.support_from_tally(table, cands)
    return (time.process_time() - t) / reps / (H * cands.shape[0]) * 1e9


def per_run(ds, eps: float, reps: int) -> float:
    """CPU seconds per run of PEM with FLH (``h = 4096``), count engine."""
    P = ldp.PEM(eps, 16, 64, query_limit=2**20, oracle="FLH", pool_size=H)
    P.run(ds, rng=0, engine="counts")
    t = time.process_time()
    for r in range(reps):
        P.run(ds, rng=5 + r, engine="counts")
    return (time.process_time() - t) / reps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d-primes", type=int, nargs="+", default=[14, 40, 150])
    ap.add_argument("--epsilons", type=float, nargs="*", default=[2.5, 3.0, 4.0, 5.0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"per call (h = {H}, {NC} candidates), CPU ns per pair")
    print(f"{'d_prime':>7} {'m=16 PEM':>9} {'m=64 PEM':>9} {'m=64 random':>12}")
    for dp in args.d_primes:
        ns = [per_call(dp, m, kind, args.reps) for m, kind in [(16, "pem"), (64, "pem"), (64, "random")]]
        print(f"{dp:7d} {ns[0]:9.3f} {ns[1]:9.3f} {ns[2]:12.3f}", flush=True)
    if args.epsilons:
        ds = datasets.exponential(1_000_000, scale=0.05, m=64, rng=np.random.default_rng(20190101))
        print("PEM with FLH (h = 4096), n = 10^6, count engine, CPU s per run")
        for eps in args.epsilons:
            dp = ldp.FLH(eps, m=64, pool_size=H).d_prime
            print(f"eps {eps:4.2f} d' {dp:4d}: {per_run(ds, eps, args.reps):.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
