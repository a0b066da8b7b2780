"""The deployment path: a device's cost, the aggregator's throughput, refusing a hostile reports file.

Usage::

    .venv/bin/python benchmarks/bench_client.py [--group-n 100000000 1000000000] [--devices 1000000]
        [--skip-bomb]

Prints, with wall-clock and process CPU time (the machine may be shared):

* ``Plan.group_of`` for user 0 (the worst case: the whole shuffle is read) at each ``--group-n``,
  with the process's peak memory: what a device computes once per plan;
* ``ldp.client.report`` for one device (its group already known to the plan object) and
  ``report_many`` for ``--devices`` simulated devices (PEM, eps = 2, m = 64);
* ``aggregator.add_many`` on 10^5 and on ``--devices`` reports (every check), and ``result()``;
* loading a PEM reports file with an extra 1 GiB member deflated to about 1 MB (its checksum
  recomputed): time to refusal and tracemalloc's peak; and a plan with n = 10^12.
"""
from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np

import ldp
from ldp import reportfile
from ldp.client import report, report_many
from ldp.core import Plan
from ldp.oracles import ReportsFileError
from ldp.protocols import ProtocolReports


def timed(label: str, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{label}: {time.perf_counter() - t0:.3f} s wall, {time.process_time() - c0:.3f} s CPU", flush=True)
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bomb_file(folder: Path) -> Path:
    pem = ldp.PEM(2.0, 4, 16, eta=8)
    reps = pem.privatize(ldp.datasets.zipf(300, m=16, rng=0), rng=0)
    path = folder / "bomb.npz"
    reps.save(path)
    with np.load(path) as f:
        meta = json.loads(str(f["__meta__"]))
        arrays = {k: f[k] for k in f.files if k != "__meta__"}
    meta["sha256"] = reportfile.checksum({**arrays, "junk": np.zeros(0, np.uint8)})  # anyone can recompute it
    with open(path, "wb") as fh:
        np.savez(fh, __meta__=np.array(json.dumps(meta)), **arrays)
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as z, \
            z.open("junk.npy", "w", force_zip64=True) as out:
        np.lib.format.write_array_header_1_0(out, {"descr": "|u1", "fortran_order": False, "shape": (2**30,)})
        chunk = bytes(2**24)
        for _ in range(64):
            out.write(chunk)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group-n", type=int, nargs="*", default=[10**8, 10**9])
    ap.add_argument("--devices", type=int, default=10**6)
    ap.add_argument("--skip-bomb", action="store_true")
    args = ap.parse_args()
    pem = ldp.PEM(2.0, 16, 64)
    for n in args.group_n:
        plan = Plan.from_json(pem.plan(n, rng=1).to_json())
        before = peak_rss_mb()
        g = timed(f"group_of(user 0) at n = {n:.0e}", lambda p=plan: p.group_of(0))
        print(f"  group {int(g)}; peak RSS {peak_rss_mb():.0f} MB (before: {before:.0f} MB)")
    n = args.devices
    data = ldp.datasets.exponential(n=n, m=64, rng=0)
    plan = pem.plan(n, rng=2)
    text = plan.to_json()
    report(text, 1, user=0)  # warm-up: the plan's labels, numba
    timed("report() for one device, plan JSON parsed (remembered) and its group known",
          lambda: report(text, int(data.values[5]), user=5))
    devices = timed(f"report_many for {n:,} devices", lambda: report_many(plan, data.values, users=np.arange(n)))
    for k in sorted({10**5, n}):
        server = pem.aggregator(plan)
        timed(f"aggregator.add_many of {k:,} reports (all checks)", lambda s=server, k=k: s.add_many(devices[:k]))
    res = timed("aggregator.result()", lambda: server.result(rng=0))
    print(f"  {res}")
    if args.skip_bomb:
        return
    with tempfile.TemporaryDirectory() as folder:
        path = timed("writing the 1 GiB-member file", lambda: bomb_file(Path(folder)))
        print(f"  file size on disk {path.stat().st_size / 2**20:.2f} MiB")
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            ProtocolReports.load(path)
        except ReportsFileError as err:
            ms = 1000 * (time.perf_counter() - t0)
            _, peak = tracemalloc.get_traced_memory()
            print(f"refused in {ms:.1f} ms, tracemalloc peak {peak / 2**20:.2f} MiB: {err}")
        tracemalloc.stop()
        big = Path(folder) / "big_n.npz"
        reps = pem.privatize(data.values[:1000], plan=plan, users=0, rng=0)
        reps.save(big)
        with np.load(big) as f:
            meta = json.loads(str(f["__meta__"]))
            arrays = {k: f[k] for k in f.files if k != "__meta__"}
        meta["plan"]["n"] = 10**12
        with open(big, "wb") as fh:
            np.savez(fh, __meta__=np.array(json.dumps(meta)), **arrays)
        t0 = time.perf_counter()
        try:
            ProtocolReports.load(big)
        except ReportsFileError as err:
            print(f"plan n = 10^12 refused in {1000 * (time.perf_counter() - t0):.1f} ms: {err}")


if __name__ == "__main__":
    main()
