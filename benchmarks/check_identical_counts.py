"""Check that the count engine's results stay bit-identical: record reference runs, then compare against them.

Runs the count engine (``engine="counts"``) on the paths a speed-up of :mod:`ldp.engines.counts` may touch:
every protocol of chapter 08 (PEM, MCM, SPM, TreeHist with 1 and 8 bits per level, SFP with the count-mean
and the Hadamard sketch) plus the strawman, on the synthetic (``n = 10**6`` and ``10**5``), URL and AOL data
sets, at several epsilons, ``k``, seeds, in top-k and threshold mode, with ``final_fraction``, with the FLH
oracle, chapter 08's tuned candidates not listed already (TreeHist with 2, 4 and 10 bits per level, SFP with
4 and 6 hash bits, and all of them with partitioned users), and with crafted reports
(:class:`ldp.attacks.Scenario`, the count engine's crafted-users path).
For each run it keeps the release (heavy hitters, estimates, supports, group sizes), every round's kept
candidates, supports, estimates and diagnostics, and the final states of the run's two random streams (so
a changed random stream shows even when the release happens not to change).

Usage::

    python benchmarks/check_identical_counts.py record /tmp/counts_ref.pkl   # before a change
    python benchmarks/check_identical_counts.py check /tmp/counts_ref.pkl    # after it: exits 1 on a difference
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time

import numpy as np
from bench_count_runs import tuned_not_listed

from ldp import attacks, datasets
from ldp.book.chapters.c08_after_pem import compute
from ldp.experiments.registry import resolve_dataset, resolve_protocol


def _datasets() -> dict:
    return {"synthetic": datasets.exponential(1_000_000, scale=0.05, m=64, rng=np.random.default_rng(1)),
            "small": datasets.exponential(100_000, scale=0.1, m=48, rng=np.random.default_rng(2)),
            "url": resolve_dataset("url")[1](rng=0), "aol": resolve_dataset("aol")[1](rng=0)}


def _specs() -> list[tuple[str, dict, str]]:
    """The protocols and variants checked: chapter 08's, and the strawman, threshold, final_fraction, FLH."""
    q = {"query_limit": 2**20}
    return [*compute.protocols(2**20), ("Strawman", dict(q), "Strawman"),
            ("PEM", {**q, "threshold": 0.002}, "PEM threshold"),
            ("TreeHist", {**q, "threshold": 0.002}, "TreeHist threshold"),
            ("SPM", {**q, "threshold": 0.002}, "SPM threshold"),
            ("MCM", {**q, "final_fraction": 0.1}, "MCM final 0.1"),
            ("SPM", {**q, "final_fraction": 0.1}, "SPM final 0.1"),
            ("SFP", {**q, "final_fraction": 0.1}, "SFP final 0.1"),
            ("TreeHist", {**q, "final_fraction": 0.1, "bits_per_level": 4}, "TreeHist 4 bits final 0.1"),
            ("TreeHist", {**q, "oracle": "FLH", "pool_size": 64}, "TreeHist FLH"),
            ("PEM", {**q, "oracle": "FLH", "pool_size": 64}, "PEM FLH"),
            *tuned_not_listed()]


def _result(res, source) -> dict:
    """What a run returns, as plain arrays and values, with the end states of its random streams."""
    return {"heavy_hitters": np.asarray(res.heavy_hitters), "estimates": np.asarray(res.estimates),
            "support": np.asarray(res.support), "group_sizes": tuple(res.group_sizes), "n": res.n,
            "rounds": [(r.name, r.kind, r.start, r.stop, tuple(r.groups), r.n_users, r.n_candidates,
                        np.asarray(r.kept), np.asarray(r.support), np.asarray(r.estimates), dict(r.info))
                       for r in res.rounds],
            "streams": (source.draw.bit_generator.state, source.rng.bit_generator.state)}


def runs():
    """Yield ``(key, result)`` for every checked run."""
    data = _datasets()
    for dname, ds in data.items():
        for name, kwargs, label in _specs():
            if "FLH" in label and dname in ("synthetic", "url"):
                continue  # FLH's law-4 tallies are slow: the small and AOL sets check its path
            factory = resolve_protocol(name)[1]
            for eps, k, seeds in ((1.0, 16, (0,)), (2.0, 16, (1, 2)), (4.0, 32, (3,))):
                for seed in seeds:
                    try:
                        p = factory(epsilon=eps, k=k, m=ds.m, **kwargs)
                    except ValueError:
                        continue  # not feasible at this (epsilon, k)
                    src = p.source(ds, rng=np.random.default_rng(seed), engine="counts")
                    yield (dname, label, eps, k, seed), _result(p._identify(src), src)
    for name in ("PEM", "SPM", "MCM", "TreeHist", "SFP"):  # crafted reports: the count engine's crafted path
        factory = resolve_protocol(name)[1]
        for kind in ("MGA", "input"):
            sc = attacks.Scenario(factory(2.0, 16, 48), data["small"], attacks.Attack(kind, 2, trials=4), rng=5)
            for fake in (0.01, 0.05):
                src = sc.source(fake, rng=7)
                yield ("crafted", name, kind, fake), _result(sc.protocol._identify(src), src)


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("record", "check"))
    ap.add_argument("path")
    args = ap.parse_args(argv)
    t0 = time.process_time()
    if args.mode == "record":
        ref = dict(runs())
        with open(args.path, "wb") as fh:
            pickle.dump(ref, fh)
        print(f"recorded {len(ref)} runs in {args.path} ({time.process_time() - t0:.0f} s CPU)")
        return 0
    with open(args.path, "rb") as fh:
        ref = pickle.load(fh)
    seen, bad = 0, []
    for key, res in runs():
        seen += 1
        if key not in ref or not _same(ref[key], res):
            bad.append(key)
            print("DIFFERENT:", key, flush=True)
    missing = len(ref) - (seen - sum(1 for k in bad if k not in ref))
    print(f"compared {seen} runs with {args.path}: {seen - len(bad)} identical, {len(bad)} different, "
          f"{missing} reference runs not rerun ({time.process_time() - t0:.0f} s CPU)")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
