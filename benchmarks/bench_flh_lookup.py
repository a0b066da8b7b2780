"""CPU of FLH's supports for a mid-size hash range (``THRESHOLD_D_PRIME < d'``): per call and per PEM run.

Usage::

    .venv/bin/python benchmarks/bench_flh_lookup.py [--d-primes 14 40 150] [--epsilons 2.5 3 4 5] [--reps 3]

(``--epsilons`` with no value: no PEM runs; ``--switch``: also the compare kernel against the lookup kernel
for ``d'`` from 8 to 14, the measurement behind ``flh_kernels.THRESHOLD_D_PRIME``.)

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
from ldp.oracles import flh_kernels as fk
from ldp.oracles import hashing
from ldp.values import as_values, n_chunks, to_chunks32

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


def kernels_at(dp: int, m: int, reps: int) -> dict:
    """CPU ns per pair of the compare kernel and of the lookup kernel at ``d'``, the same calls alternated; both
    give the same sums."""
    rng = np.random.default_rng(dp)
    o = ldp.FLH(1.0, m=m, pool_size=H, pool_seed=5, d_prime=dp)
    flat = np.ascontiguousarray(rng.integers(0, 200, size=o.tally_shape).reshape(-1).astype(np.int32))
    b, a = hashing.expand_coefficients(o.seeds, n_chunks(m))
    if a.shape[0] == 1:  # the kernels read two rows of coefficients; the second multiplies a zero chunk
        a = np.vstack([a, np.zeros_like(a)])
    chunks = np.ascontiguousarray(to_chunks32(as_values(candidates("pem", m, rng), m), m).T)
    calls = {"thresholds": lambda: fk.support_by_thresholds(flat, b, a, chunks.astype(np.uint64), np.int64(dp),
                                                             fk.cell_thresholds(dp), fk.THRESHOLD_BLOCK),
             "lookups": lambda: fk.support_by_lookup(flat, b, a, chunks, np.int64(dp), fk.LOOKUP_BLOCK)}
    assert np.array_equal(calls["thresholds"](), calls["lookups"]())
    cpu = dict.fromkeys(calls, 0.0)
    for _ in range(reps):
        for name, f in calls.items():
            t = time.process_time()
            f()
            cpu[name] += time.process_time() - t
    return {name: v / reps / (H * NC) * 1e9 for name, v in cpu.items()}


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
    ap.add_argument("--switch", action="store_true", help="also compare both kernels for d' from 8 to 14")
    args = ap.parse_args(argv)
    if args.switch:  # d' from 8 to 14: the measurement behind flh_kernels.THRESHOLD_D_PRIME
        for m in (16, 64):
            for dp in range(8, 15):
                ns = kernels_at(dp, m, args.reps)
                print(f"m = {m:2d}, d' = {dp:2d}: " + ", ".join(f"{k} {v:.3f}" for k, v in ns.items()) + " ns per pair",
                      flush=True)
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
