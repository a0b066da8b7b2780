"""CPU time per count-engine run of chapter 08's protocols on the paper's three data sets.

What every grid of chapters 05 to 09 pays per repetition: ``protocol.run(ds, rng=..., engine="counts")``
on a data set loaded once (as a grid worker holds it, :func:`ldp.experiments.worker.load`), at
``epsilon = 2``, ``k = 16``, ``query_limit = 2**20``, for each protocol of
:func:`ldp.book.chapters.c08_after_pem.compute.protocols` (PEM, MCM, SPM, TreeHist with 1 and 8 bits per
level, SFP with the count-mean sketch and with the Hadamard one), on the synthetic exponential data set
(``n = 10**6``, ``m = 64``, scale 0.05) and the URL and AOL data sets.

The time is the process's CPU time (:func:`time.process_time`: the machine is shared, wall time is
noisy), the mean over ``--reps`` runs (seeds 1 .. reps) after one warm-up run (seed 0: compiles,
fills the per-data-set caches a worker keeps across runs).

Usage::

    python benchmarks/bench_count_runs.py                       # every protocol on the three data sets
    python benchmarks/bench_count_runs.py --data url --reps 5
    python benchmarks/bench_count_runs.py --protocols TreeHist SFP --tuned   # with chapter 08's tuned candidates
    python benchmarks/bench_count_runs.py --out benchmarks/results/count_runs.txt --label after
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import provenance

from ldp import datasets
from ldp.book.chapters.c08_after_pem import compute
from ldp.experiments.registry import resolve_dataset, resolve_protocol

DATA = ("synthetic", "url", "aol")


def load(name: str):
    """The data set ``name`` as the chapters use it."""
    if name == "synthetic":
        return datasets.exponential(1_000_000, scale=0.05, m=64, rng=np.random.default_rng(1))
    return resolve_dataset(name)[1](rng=0)  # the URL stand-in draws its names and user order: seeded


def cpu_per_run(factory, kwargs: dict, ds, *, epsilon: float, k: int, reps: int) -> float:
    """Mean CPU seconds of one count-engine run (seeds 1 .. reps, after a warm-up run with seed 0)."""
    def one(seed: int) -> None:
        factory(epsilon=epsilon, k=k, m=ds.m, **kwargs).run(ds, rng=np.random.default_rng(seed), engine="counts")

    one(0)
    t0 = time.process_time()
    for s in range(1, reps + 1):
        one(s)
    return (time.process_time() - t0) / reps


def tuned_not_listed() -> list[tuple[str, dict, str]]:
    """Chapter 08's tuned candidates whose settings its published ones (``compute.protocols``) do not repeat."""
    listed = [(name, kwargs) for name, kwargs, _ in compute.protocols(2**20)]
    return [spec for series in compute.candidates(2**20).values() for spec in series
            if (spec[0], spec[1]) not in listed]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", choices=DATA, default=list(DATA))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--protocols", nargs="*", metavar="NAME",
                    help="only these protocol families (e.g. TreeHist SFP); default all")
    ap.add_argument("--tuned", action="store_true",
                    help="also chapter 08's tuned candidates (TreeHist's bits per level, SFP's hash bits, "
                         "with and without partitioned users) that the published settings do not cover")
    ap.add_argument("--label", default="", help="a word naming the code measured (e.g. before, after)")
    ap.add_argument("--out", help="append the table to this file too")
    args = ap.parse_args(argv)
    specs = compute.protocols(2**20)
    if args.tuned:
        specs += tuned_not_listed()
    if args.protocols:
        specs = [spec for spec in specs if spec[0] in args.protocols]
    width = max(24, *(len(label) + 1 for _, _, label in specs))
    lines = [f"# {provenance.command('bench_count_runs.py', argv if argv is not None else sys.argv[1:])}",
             f"# commit {provenance.commit()}; {provenance.machine()}",
             f"# {provenance.now()}; load {provenance.load():.2f}; {args.label or 'unlabelled'}; "
             f"epsilon {args.epsilon:g}, k {args.k}, query_limit 2**20; CPU ms per run, mean of {args.reps} runs",
             f"{'protocol':{width}}" + "".join(f"{d:>11}" for d in args.data)]
    print("\n".join(lines), flush=True)
    loaded = {d: load(d) for d in args.data}
    for name, kwargs, label in specs:
        factory = resolve_protocol(name)[1]
        row = f"{label:{width}}"
        for d in args.data:
            cpu = cpu_per_run(factory, kwargs, loaded[d], epsilon=args.epsilon, k=args.k, reps=args.reps)
            row += f"{1000 * cpu:11.1f}"
        print(row, flush=True)
        lines.append(row)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
