"""Exact supports of the hashed oracles' kernel (HR and CMS, :mod:`ldp.oracles.hashed_kernels`), before and after a
change to it, and its CPU time on the sizes of chapter 08's deployer table.

``--record FILE`` computes :func:`ldp.oracles.hashed_kernels.hashed_support` on seeded random reports and
candidates (both modes; 1, 2 and 3 chunks of 32 bits; HR's block sizes 2 to 256 and CMS widths 8 to 4096;
report counts around the kernel's block size, so partial blocks and parts are exercised) and pickles the
counts; ``--compare FILE`` computes them again and checks each array is equal.  ``--time`` measures CPU per
call (:func:`time.process_time`, all threads) at chapter 08's sizes: 12,500 reports (100,000 users in 8
groups) and 65,536 candidates of 64 bits (2 chunks) or 32 bits (1 chunk, SFP's fragment pairs).

Usage::

    python benchmarks/check_identical_hashed.py --record /tmp/hashed.pkl
    python benchmarks/check_identical_hashed.py --compare /tmp/hashed.pkl
    python benchmarks/check_identical_hashed.py --time
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from identity import record_or_compare

from ldp.oracles.hashed_kernels import MODE_CMS, MODE_HR, hashed_support


def cases():
    """(name, kwargs) of every compared call, from a fixed seed."""
    rng = np.random.default_rng(20190101)
    for chunks in (1, 2, 3):
        for n in (1, 5, 1023, 1024, 1025, 3000, 12_500):
            for n_cand in (1, 3, 4, 7, 257):
                seeds = rng.integers(0, 2**64, n, dtype=np.uint64)
                cands = rng.integers(0, 2**32, (chunks, n_cand), dtype=np.uint32)
                for width in (8, 100, 1024, 4096):
                    bits = rng.integers(0, 256, (n, -(-width // 8)), dtype=np.uint8)
                    yield (f"CMS C={chunks} n={n} cands={n_cand} w={width}",
                           dict(seeds=seeds, cand_chunks=cands, d=width, mode=MODE_CMS, bits=bits))
                for b, blocks in ((2, 1), (4, 8), (64, 64), (256, 1024)):
                    ys = rng.integers(0, b * blocks, n, dtype=np.uint64)
                    yield (f"HR C={chunks} n={n} cands={n_cand} b={b} B={blocks}",
                           dict(seeds=seeds, cand_chunks=cands, d=blocks * (b - 1), mode=MODE_HR, ys=ys, b=b,
                                blocks=blocks))


def supports() -> dict[str, np.ndarray]:
    return {name: hashed_support(**kw) for name, kw in cases()}


def timing(reps: int) -> None:
    rng = np.random.default_rng(1)
    n, n_cand = 12_500, 65_536
    seeds = rng.integers(0, 2**64, n, dtype=np.uint64)
    cands = rng.integers(0, 2**32, (2, n_cand), dtype=np.uint32)
    calls = {"CMS w=1024": dict(d=1024, mode=MODE_CMS, bits=rng.integers(0, 256, (n, 128), dtype=np.uint8)),
             "HR b=64 B=64": dict(d=64 * 63, mode=MODE_HR, ys=rng.integers(0, 4096, n, dtype=np.uint64), b=64,
                                  blocks=64),
             "HR b=64 B=1": dict(d=63, mode=MODE_HR, ys=rng.integers(0, 64, n, dtype=np.uint64), b=64, blocks=1)}
    # 2 chunks: whole 64-bit values; 1 chunk: SFP's fragment pairs (chapter 08's costliest calls)
    for chunks in (2, 1):
        for name, kw in calls.items():
            hashed_support(seeds[:10], cands[:chunks, :4], **kw)  # compiled (or loaded) first
            t = time.process_time()
            for _ in range(reps):
                hashed_support(seeds, cands[:chunks], **kw)
            print(f"{name}, C={chunks}: {(time.process_time() - t) / reps:.3f} s CPU per call "
                  f"({n} reports x {n_cand} candidates)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record")
    ap.add_argument("--compare")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    code = record_or_compare(supports, record=args.record, compare=args.compare, unit="calls")
    if code:
        return code
    if args.time:
        timing(args.reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
