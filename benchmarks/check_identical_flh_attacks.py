"""Bit-identity check for the speed work on FLH's count law and chapter 09's attack searches.

Usage::

    .venv/bin/python benchmarks/check_identical_flh_attacks.py record  [--out PATH] [--only flh|attacks]
    .venv/bin/python benchmarks/check_identical_flh_attacks.py compare [--out PATH] [--only flh|attacks]

``record`` runs the code paths below on fixed seeds and pickles everything they return; ``compare`` runs them
again and compares exactly (``np.array_equal`` on arrays, ``==`` on floats, ``DataFrame.equals`` on tables),
printing one line per case and exiting 1 on any difference.

Cases
-----
flh
    ``FLH.support_from_tally`` on random tallies (pool sizes, ``d'``, bit widths, runs of consecutive
    candidates, random candidates, short tiles, both the serial and the parallel kernel), ``FLH.draw_tally``,
    ``FLH.support`` of real reports, the lookup kernels for ``d'`` from 13 to 200 at a block's edges, and PEM
    with FLH (``h = 4096``) and with OLH on the paper's synthetic set
    (n = 10^6) with the count engine: heavy hitters, estimates and every round's supports and estimates.
attacks
    Chapter 09's searches at a reduced size: :func:`ldp.attacks.honest_grid`, :func:`ldp.attacks.threshold_grid`
    (one target and several, ``needs``, starts from the predictions, the chapter's 7 protocols) and
    :func:`ldp.book.chapters.c09_malicious_users.compute.detector_runs`.
"""
from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import ldp
from ldp import datasets

DEFAULT_OUT = Path("/tmp/check_identical_flh_attacks.pkl")


# --------------------------------------------------------------------------- flh
def _result(res) -> dict:
    """Everything a run returns: heavy hitters, estimates, and each round's candidates, supports and estimates."""
    out = {"hh": np.asarray(res.heavy_hitters), "est": np.asarray(res.estimates, dtype=float)}
    for i, rd in enumerate(res.rounds):
        for name in ("estimates", "kept", "support", "n_candidates", "n_users"):
            v = getattr(rd, name, None)
            if v is not None and not callable(v):
                out[f"round{i}.{name}"] = np.asarray(v)
    return out


def flh_cases() -> dict:
    out = {}
    rng = np.random.default_rng(12345)
    for h, eps, m in [(4096, 0.5, 64), (4096, 2.0, 64), (4096, 5.0, 64), (1024, 3.0, 16), (64, 1.0, 32),
                      (256, 2.0, 128), (4096, 8.0, 64), (33, 1.5, 70), (4096, 2.0, 8)]:
        o = ldp.FLH(eps, m=m, pool_size=h, pool_seed=int(rng.integers(0, 2**63)))
        table = rng.integers(0, 500, size=o.tally_shape)
        cands_random = ldp.values.uniform(3001, m, rng=rng)
        base = ldp.values.uniform(1, m, rng=rng)
        if m <= 64:
            lo = int(base[0]) & ~((1 << min(m, 12)) - 1)
            run = np.arange(lo, lo + min(2**m, 4096) - 3, dtype=np.uint64)  # a run of consecutive values
            few = run[:3]
        else:
            run, few = cands_random[:4096], cands_random[:3]
        for name, c in [("random", cands_random), ("run", run), ("few", few),
                        ("one", cands_random[:1])]:
            out[f"support h={h} eps={eps} m={m} {name}"] = o.support_from_tally(table, c)
        out[f"support int64-table h={h} eps={eps} m={m}"] = o.support_from_tally(table * (2**33), run)
        vals = ldp.values.uniform(50, m, rng=rng)
        cnt = rng.integers(0, 3 * h, size=50)
        out[f"draw_tally h={h} eps={eps} m={m}"] = o.draw_tally(vals, cnt, rng=7)
        data = ldp.values.uniform(20_000, m, rng=rng)
        rep = o.privatize(data, rng=11)
        out[f"support reports h={h} eps={eps} m={m}"] = o.support(rep, np.concatenate([data[:100], cands_random]))
    ds = datasets.exponential(1_000_000, scale=0.05, m=64, rng=np.random.default_rng(20190101))
    for eps in [0.5, 2.0, 5.0]:
        for seed in [1, 2]:
            for name, kw in [("FLH", {"oracle": "FLH", "pool_size": 4096}), ("OLH", {})]:
                P = ldp.PEM(eps, 16, 64, query_limit=2**20, **kw)
                out[f"PEM-{name} n=1e6 eps={eps} seed={seed}"] = _result(P.run(ds, rng=seed, engine="counts"))
    small = datasets.exponential(100_000, scale=0.05, m=64, rng=3)
    for h in [64, 1024]:
        for eps in [1.0, 4.0]:
            P = ldp.PEM(eps, 16, 64, oracle="FLH", pool_size=h)
            out[f"PEM-FLH n=1e5 h={h} eps={eps} counts"] = _result(P.run(small, rng=5, engine="counts"))
    P = ldp.PEM(2.0, 16, 64, oracle="FLH", pool_size=256)
    out["PEM-FLH n=1e5 h=256 protocol"] = _result(P.run(small, rng=6, engine="protocol"))
    return out | mid_range_cases()


def mid_range_cases() -> dict:
    """``support_from_tally`` for ``d'`` from 13 to 200 (the lookup kernels): pool sizes not a multiple of 4,
    1 to 4 chunks, candidate counts at the edges of a block of 512, int64 tallies and int32 ones near 2**31."""
    out = {}
    rng = np.random.default_rng(777)
    for h, dp, m in [(4095, 13, 64), (4096, 14, 16), (1027, 40, 70), (2049, 56, 128), (4093, 150, 64),
                     (4096, 200, 40), (257, 99, 64), (514, 22, 32)]:
        o = ldp.FLH(1.0, m=m, pool_size=h, pool_seed=int(rng.integers(0, 2**63)), d_prime=dp)
        table = rng.integers(0, 1000, size=o.tally_shape)
        base = int(ldp.values.uniform(1, min(m, 64), rng=rng)[0]) & ~4095
        for nc in [511, 512, 513, 1024, 1027, 5000]:
            run = np.arange(base, base + nc, dtype=np.uint64) if m <= 64 else ldp.values.uniform(nc, m, rng=rng)
            out[f"mid h={h} d'={dp} m={m} run nc={nc}"] = o.support_from_tally(table, run)
            out[f"mid h={h} d'={dp} m={m} random nc={nc}"] = o.support_from_tally(
                table, ldp.values.uniform(nc, m, rng=rng))
        out[f"mid h={h} d'={dp} m={m} int64"] = o.support_from_tally(table * 2**33, ldp.values.uniform(700, m, rng=rng))
        huge = rng.integers(2**31 - 1000, 2**31, size=o.tally_shape)  # int32 cells, int64 sums
        out[f"mid h={h} d'={dp} m={m} near 2**31"] = o.support_from_tally(huge, ldp.values.uniform(700, m, rng=rng))
    return out


# --------------------------------------------------------------------------- attacks
def attack_cases() -> dict:
    from ldp import attacks
    from ldp.attacks import Attack
    from ldp.book.chapters.c09_malicious_users import compute

    out = {}
    k, seed, trials = 16, 20190101, 64
    syn = datasets.exponential(n=200_000, scale=0.05, m=64, rng=seed)
    data = {"Synthetic": syn}
    sizes = {"Synthetic": syn.n}
    protocols = compute.protocols(k)
    variants = compute.oracle_variants(k)
    eps = [1.0, 2.0]
    honest, steps = attacks.honest_grid(protocols, data, eps, reps=1, ranks=[1, 4], root_seed=seed, n_jobs=1)
    _, steps_var = attacks.honest_grid(variants, data, [2.0], reps=1, ranks=[1, 4], root_seed=seed + 5, n_jobs=1)
    out["honest_grid runs"], out["honest_grid steps"], out["honest_grid steps_var"] = honest, steps, steps_var
    pred = attacks.predictions(steps, sizes, kinds=("MGA", "input"), needs=(1,), targets=1, trials=trials)
    search = dict(max_fraction=0.5, grow=1.3, rel_tol=0.1, n_jobs=1)
    out["threshold_grid one target"] = attacks.threshold_grid(
        protocols, data, eps, [Attack("MGA", 1, trials=trials), Attack("input", 1)], reps=1, root_seed=seed,
        starts=pred, **search)
    all16 = {**protocols, **variants}
    steps16 = pd.concat([steps, steps_var], ignore_index=True)
    pred16 = attacks.predictions(steps16[np.isclose(steps16["epsilon_run"], 2.0)], sizes, kinds=("MGA", "input"),
                                 needs=[1, 4], targets=4, trials=trials)
    out["threshold_grid several targets"] = attacks.threshold_grid(
        all16, data, [2.0], [Attack("MGA", 4, trials=trials), Attack("input", 4)], reps=1, needs=[1, 4],
        root_seed=seed + 1, starts=pred16, **search)
    pem = protocols["PEM"](2.0, 64)
    out["fixed_share_check"] = compute.fixed_share_check(pem, syn, fraction=0.015, runs=2, trials=trials, seed=seed)
    trials_ = [("PEM, no fake users", Attack("MGA", 1), 0.0), ("PEM, MGA, 4 targets", Attack("MGA", 4), 0.08)]
    rates = [("PEM", Attack("MGA", 1), 0.015), ("PEM (HR)", Attack("MGA", 4), 0.08)]
    det_small = datasets.exponential(n=50_000, scale=0.05, m=64, rng=seed)
    runs, det = compute.detector_runs(all16, det_small, trials_, rates, epsilon=2.0, alpha=0.001, seed=seed,
                                      honest_sample=20_000, n_jobs=1)
    out["detector_runs table"] = runs
    for label, o in det.items():
        for key, v in o.items():
            if isinstance(v, (np.ndarray, float, int, np.floating, np.integer)):
                out[f"detector_runs {label} {key}"] = v
    return out


# --------------------------------------------------------------------------- compare
def same(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b) and list(a.columns) == list(b.columns)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[x], b[x]) for x in a)
    if isinstance(a, np.ndarray):
        b = np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, float) and np.isnan(a):
        return isinstance(b, float) and np.isnan(b)
    return a == b


CASES = {"flh": flh_cases, "attacks": attack_cases}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["record", "compare"])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--only", choices=list(CASES), action="append")
    args = ap.parse_args(argv)
    parts = args.only or list(CASES)
    got = {}
    for p in parts:
        got |= {f"{p}: {key}": v for key, v in CASES[p]().items()}
    if args.mode == "record":
        old = pickle.loads(args.out.read_bytes()) if args.out.exists() else {}
        args.out.write_bytes(pickle.dumps(old | got))
        print(f"recorded {len(got)} cases to {args.out}")
        return 0
    ref = pickle.loads(args.out.read_bytes())
    bad = 0
    for key, v in got.items():
        if key not in ref:
            print(f"MISSING  {key}")
            bad += 1
            continue
        ok = same(ref[key], v)
        bad += not ok
        print(f"{'same    ' if ok else 'DIFFERS '} {key}")
    print(f"{len(got) - bad} of {len(got)} cases identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
