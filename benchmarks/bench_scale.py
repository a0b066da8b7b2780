"""Cost growth with n: privatize, store on disk and aggregate from disk, PEM with OLH and with FLH.

For every ``n`` and oracle: synthetic exponential data (``n`` users, m = 64, k = 16,
eps = 2, at most 2**20 oracle queries; :func:`ldp.datasets.exponential`), the
published plan, every user privatized in batches of ``--batch`` users and each
batch appended to a Parquet report store (:mod:`ldp.core.reportstore`), then the
store opened (its checks) and aggregated from disk, streamed in chunks
(:class:`ldp.engines.StreamSupport`).  The two phases run in separate child
processes, so that each one's peak memory (``ru_maxrss``, imports included) is
its own.  F1 and NCR against the data's true top k.

Usage::

    python benchmarks/bench_scale.py                                   # n = 1e5, 1e6, 1e7; OLH and FLH h=1024..16384
    python benchmarks/bench_scale.py --n 100000000 --oracle FLH:4096 --out benchmarks/results/bench_scale.csv
    python benchmarks/bench_scale.py --n 1000000 --oracle OLH FLH:4096 --out /tmp/x.csv

``--oracle``: ``OLH`` (the paper's) or ``FLH:h`` (pool size h).  ``--out``: a CSV
the rows are added to (a row of the same n and oracle is replaced: one row per setting); each
row records the command, the commit, the machine and the load average before and
after it (the machine may be shared: a loaded machine gives pessimistic times).
The stores are written under ``--workdir`` (default: a temporary folder, deleted).
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import provenance

COLUMNS = ["n", "oracle", "pool_size", "epsilon", "k", "m", "groups", "queries", "t_data_s", "t_privatize_s",
           "t_store_s", "store_mb", "rss_privatize_mb", "t_open_s", "t_aggregate_s", "rss_aggregate_mb", "f1", "ncr",
           "load_before", "load_after", "date", "commit", "machine", "command"]


def protocol(spec: str, eps: float, k: int, m: int, limit: int):
    import ldp

    if spec == "OLH":
        return ldp.PEM(eps, k, m, query_limit=limit)
    kind, _, h = spec.partition(":")
    if kind != "FLH" or not h.isdigit():
        raise SystemExit(f"--oracle must be OLH or FLH:h (e.g. FLH:4096), got {spec!r}")
    return ldp.PEM(eps, k, m, query_limit=limit, oracle="FLH", pool_size=int(h))


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


# ---------------------------------------------------------------------------
# the two phases (child processes)
# ---------------------------------------------------------------------------
def phase_privatize(args) -> dict:
    from ldp import datasets
    from ldp.core.reportwriter import append_batch

    P = protocol(args.oracle[0], args.eps, args.k, args.m, args.limit)
    t = time.perf_counter()
    data = datasets.exponential(args.n[0], m=args.m, rng=args.seed)
    truth = {"top": [int(v) for v in data.top(args.k)]}
    t_data = time.perf_counter() - t
    plan = P.plan(data.n, rng=args.seed + 1)
    P.privatize(data.values[:10], plan=plan, users=0, rng=args.seed + 2)  # warm-up: compilation
    t_priv = t_store = 0.0
    for lo in range(0, data.n, args.batch):
        t = time.perf_counter()
        batch = P.privatize(data.values[lo:lo + args.batch], plan=plan, users=lo, rng=args.seed + 2)
        t_priv += time.perf_counter() - t
        t = time.perf_counter()
        append_batch(batch, args.store)
        t_store += time.perf_counter() - t
        del batch
    Path(args.truth).write_text(json.dumps(truth))
    size = sum(f.stat().st_size for f in Path(args.store).rglob("*") if f.is_file())
    return {"groups": plan.n_groups, "t_data_s": t_data, "t_privatize_s": t_priv, "t_store_s": t_store,
            "store_mb": size / 2**20, "rss_privatize_mb": peak_mb()}


def phase_aggregate(args) -> dict:
    from ldp import metrics
    from ldp.protocols import ProtocolReports

    P = protocol(args.oracle[0], args.eps, args.k, args.m, args.limit)
    truth = json.loads(Path(args.truth).read_text())
    top = np.array(truth["top"], dtype=np.uint64)
    t = time.perf_counter()
    stored = ProtocolReports.open(args.store)
    t_open = time.perf_counter() - t
    t = time.perf_counter()
    res = P.aggregate(stored, rng=args.seed + 3)
    t_agg = time.perf_counter() - t
    return {"t_open_s": t_open, "t_aggregate_s": t_agg, "rss_aggregate_mb": peak_mb(), "queries": res.queries,
            "f1": metrics.f1(top, res.heavy_hitters), "ncr": metrics.ncr(top, res.heavy_hitters)}


# ---------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------
def _child(phase: str, args, n: int, spec: str, store: Path, truth: Path) -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--n", str(n), "--oracle", spec, "--store", str(store),
           "--truth", str(truth), "--eps", str(args.eps), "--k", str(args.k), "--m", str(args.m),
           "--limit", str(args.limit), "--batch", str(args.batch), "--seed", str(args.seed)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _save(rows: list[dict], out: Path) -> None:
    import pandas as pd

    from ldp.paths import atomic_path

    new = pd.DataFrame(rows, columns=COLUMNS)
    if out.exists():
        old = pd.read_csv(out)
        key = ["n", "oracle"]  # one row per setting: a new measurement replaces the old one
        old = old[~old.set_index(key).index.isin(new.set_index(key).index)]
        new = pd.concat([old, new], ignore_index=True)
    new = new.sort_values(["oracle", "n", "date"], kind="stable")
    with atomic_path(out) as tmp:
        new.to_csv(tmp, index=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=float, nargs="+", default=[1e5, 1e6, 1e7])
    ap.add_argument("--oracle", nargs="+", default=["OLH", "FLH:1024", "FLH:4096", "FLH:16384"])
    ap.add_argument("--eps", type=float, default=2.0)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--limit", type=int, default=2**20)
    ap.add_argument("--batch", type=int, default=10**7, help="users privatized and stored per batch")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="CSV to add the rows to")
    ap.add_argument("--workdir", type=Path, help="where the stores are written (kept)")
    ap.add_argument("--phase", choices=["privatize", "aggregate"], help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--truth", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.n = [int(n) for n in args.n]
    if args.phase:
        row = phase_privatize(args) if args.phase == "privatize" else phase_aggregate(args)
        print(json.dumps(row))
        return 0

    command = provenance.command("bench_scale.py", argv)
    commit, machine = provenance.commit("ldp", "benchmarks/bench_scale.py"), provenance.machine()
    print(f"# {machine}; commit {commit}")
    print(f"# PEM, exponential data, m = {args.m}, k = {args.k}, eps = {args.eps}, query limit = {args.limit}")
    print(f"{'n':>11s} {'oracle':>10s} {'privatize s':>11s} {'store s':>8s} {'store MB':>9s} {'RSS MB':>7s} "
          f"{'open s':>7s} {'aggregate s':>11s} {'RSS MB':>7s} {'F1':>5s} {'NCR':>5s} {'load':>5s}")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="ldp-bench-scale-"))
    rows = []
    try:
        for n in args.n:
            for spec in args.oracle:
                store = work / f"n{n}-{spec.replace(':', '')}"
                truth = work / f"n{n}-{spec.replace(':', '')}.truth.json"
                if store.exists():
                    shutil.rmtree(store)
                load_before = provenance.load()
                row = {"n": n, "oracle": spec, "pool_size": int(spec.partition(":")[2] or 0), "epsilon": args.eps,
                       "k": args.k, "m": args.m, "load_before": load_before}
                row |= _child("privatize", args, n, spec, store, truth)
                row |= _child("aggregate", args, n, spec, store, truth)
                row |= {"load_after": provenance.load(), "date": provenance.now(), "commit": commit,
                        "machine": machine, "command": command}
                rows.append(row)
                print(f"{n:11,d} {spec:>10s} {row['t_privatize_s']:11.2f} {row['t_store_s']:8.2f} "
                      f"{row['store_mb']:9.1f} {row['rss_privatize_mb']:7.0f} {row['t_open_s']:7.2f} "
                      f"{row['t_aggregate_s']:11.2f} {row['rss_aggregate_mb']:7.0f} {row['f1']:5.2f} "
                      f"{row['ncr']:5.2f} {load_before:5.1f}", flush=True)
                if args.out:
                    _save(rows, args.out)
                if not args.workdir:
                    shutil.rmtree(store)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
