"""Exact protocol-engine results of chapter 08's costed protocols (its deployer's table), before and after a change.

Runs every protocol the deployer's table costs (:func:`ldp.book.chapters.c08_after_pem.compute.protocols` and
the tuned TreeHist and SFP settings of ``benchmarks/ch08_kernel.py``'s paper-scale sweep, or fixed stand-ins
without it) through the protocol engine, as :func:`~ldp.book.chapters.c08_after_pem.compute.deployer_table`
does (plan ``rng=1``, reports ``rng=2``, aggregation ``rng=3``), on the exponential data set at several sizes
and budgets, and pickles what each run returns: heavy hitters, estimates, supports, group sizes, the
reports' bytes and every round's kept candidates, supports and estimates.  ``--compare`` runs them again and
checks every array with :func:`numpy.array_equal` (floats bit for bit).

Usage::

    python benchmarks/check_identical_deploy.py --record /tmp/deploy.pkl
    python benchmarks/check_identical_deploy.py --compare /tmp/deploy.pkl
"""
from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import numpy as np
from identity import record_or_compare

from ldp import datasets
from ldp.book.chapters.c08_after_pem import compute
from ldp.experiments.registry import resolve_protocol

INPUTS = Path(__file__).resolve().parent.parent / ".cache" / "bench" / "ch08_runs.pkl"
#: (users, epsilon, data seed) of the compared runs: the table's own point first
SETTINGS = ((100_000, 2.0, 20190101), (20_000, 1.0, 7), (20_000, 4.0, 8))


def costed() -> list:
    """The protocols of the deployer's table: published and tuned (from the paper-scale sweep when built)."""
    limit = 2**20
    if INPUTS.exists():
        with open(INPUTS, "rb") as f:
            sweep = pickle.load(f)["sweep"]
        return compute.protocols(limit) + compute.tuned_protocols(sweep, compute.candidates(limit, 0.1), "Synthetic")
    return compute.protocols(limit)


def results() -> dict:
    out = {}
    for n, eps, seed in SETTINGS:
        data = datasets.exponential(n, scale=0.05, m=64, rng=seed)
        for name, kw, label in costed():
            P = resolve_protocol(name)[1](eps, 16, data.m, **kw)
            reports = P.privatize(data, plan=P.plan(data.n, rng=1), rng=2)
            res = P.aggregate(reports, rng=3)
            out[(n, eps, label)] = {
                "heavy_hitters": res.heavy_hitters, "estimates": res.estimates, "support": res.support,
                "group_sizes": np.asarray(res.group_sizes), "nbytes": np.asarray(reports.nbytes),
                "rounds": [(r.name, r.kept, r.support, r.estimates, np.asarray(r.n_candidates)) for r in res.rounds]}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record")
    ap.add_argument("--compare")
    args = ap.parse_args(argv)
    return record_or_compare(results, record=args.record, compare=args.compare, unit="runs")


if __name__ == "__main__":
    raise SystemExit(main())
