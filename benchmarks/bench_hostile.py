"""What hostile or careless input costs the server and the device before it is refused, against stated bounds.

Usage::

    .venv/bin/python benchmarks/bench_hostile.py [--n-large 100000000] [--adds 300] [--bad 1000000]

Prints one line per case: wall-clock time, tracemalloc's peak (numpy's allocations included) and the
bound this benchmark states for it (time on an idle machine of this project's kind, 2 cores; the machine
may be shared, so a time over its bound is flagged, not fatal):

* ``Aggregator.add`` of one report at a time, for a server started from the published plan JSON, at
  ``n = 10**4`` and at ``--n-large`` (the server's start-up, which builds the plan's labels once, apart);
* a 4 KiB plan claiming 32 FLH pools of ``2**22`` functions: parsed, refused by a device, refused by a server;
* a plan above ``MAX_PLAN_BYTES``, JSON nested 100,000 deep, a batch claiming more than ``MAX_BATCH_REPORTS``;
* a reports file of 17 users and a store of a few kilobytes claiming a plan for ``2**30`` users, given to
  a server with another plan (``load(path, plan=...)``, ``open_store(folder, plan=...)``, ``aggregator(store=)``);
* a batch of ``--bad`` reports of another wire version;
* a named pipe in place of ``store.json``, a manifest, a Parquet file, a reports file; a removed manifest;
* ``ldp.datasets.exponential(n=2**40)``;
* the oracle cache after 64 FLH pools of ``2**20`` functions (bytes held against its budget).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np

import ldp
from ldp import reportfile
from ldp.client import report, report_many
from ldp.core import MAX_PLAN_BYTES, Plan, oracle_specs
from ldp.core.reportstore import open_store, plan_digest
from ldp.protocols import ProtocolReports, aggregator

MiB = 2**20
ROWS: list[tuple] = []


def measure(label: str, fn, *, seconds: float, mib: float, expect_error: bool = True):
    """Run ``fn`` under tracemalloc; print its time, peak and bounds; return its result or error."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        out = fn()
        err = None
    except Exception as e:  # noqa: BLE001 - refusals are what is measured
        out, err = None, e
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / MiB
    tracemalloc.stop()
    ok = dt <= seconds and peak <= mib and (err is not None) == expect_error
    what = f"{type(err).__name__}: {str(err)[:110]}" if err is not None else "accepted"
    flag = "ok" if ok else "OVER" if (err is not None) == expect_error else "UNEXPECTED"
    print(f"{label:<62} {dt * 1000:9.1f} ms {peak:8.2f} MiB  bound {seconds * 1000:6.0f} ms {mib:5.0f} MiB  "
          f"{flag}\n    {what}", flush=True)
    ROWS.append((label, dt, peak, ok))
    return err if err is not None else out


def add_one_at_a_time(n: int, adds: int) -> None:
    pem = ldp.PEM(2.0, 16, 64)
    text = pem.plan(n, rng=1).to_json()
    t0 = time.perf_counter()
    server = pem.aggregator(text)
    startup = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    users = rng.choice(n, size=adds, replace=False)
    values = rng.integers(0, 2**63, size=adds, dtype=np.uint64)
    wire = report_many(server.plan, values, users=users)  # the devices' reports (their groups from the plan)
    server.add(wire[0])  # warm-up (numba, caches)
    times = []
    for w in wire[1:]:
        t = time.perf_counter()
        server.add(w)
        times.append(time.perf_counter() - t)
    t = np.array(times) * 1e6
    print(f"add() one report at a time, n = {n:.0e}: start-up (plan JSON, labels built once) {startup:.2f} s; "
          f"per report mean {t.mean():.0f} us, median {np.median(t):.0f} us, max {t.max():.0f} us "
          f"({len(times)} reports)", flush=True)


def flh_plan_json(questions: int, pool: int) -> str:
    q = {"start": 0, "stop": 16, "epsilon": 0.05, "channels": 0, "seed": 0, "oracle": "FLH", "pool_size": pool}
    return json.dumps({"m": 16, "fractions": [1.0], "questions": [[dict(q, pool_seed=i + 1)
                                                                    for i in range(questions)]],
                       "n": 1000, "seed": 1, "protocol": "PEM", "params": {"epsilon": 2.0, "m": 16}})


def forge_n(folder: Path, P, plan, data) -> tuple[Path, Path]:
    """A 17-user reports file and a two-batch store whose plans claim n = 2**30 (checksum and digest recomputed)."""
    npz = folder / "r.npz"
    P.privatize(data.values[:17], plan=plan, users=0, rng=1).save(npz)
    with np.load(npz) as f:
        meta = json.loads(str(f["__meta__"]))
        arrays = {k: f[k] for k in f.files if k != "__meta__"}
    meta["plan"]["n"] = 2**30
    meta["sha256"] = reportfile.checksum(arrays)
    with open(npz, "wb") as fh:
        np.savez(fh, __meta__=np.array(json.dumps(meta)), **arrays)
    store = folder / "s"
    for lo in (0, 1500):
        P.privatize(data.values[lo:lo + 1500], plan=plan, users=lo, rng=3).save(store)
    m = json.loads((store / "store.json").read_text())
    m["plan"]["n"] = 2**30
    m["plan_digest"] = plan_digest(Plan.from_dict(m["plan"]))
    (store / "store.json").write_text(json.dumps(m))
    return npz, store


def fifo_case(label: str, path: Path, fn) -> None:
    os.unlink(path)
    os.mkfifo(path)
    done = threading.Event()

    def unblock():  # if the reader blocks, give it a writer after 10 s so the benchmark ends (and says OVER)
        if not done.wait(10):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=unblock, daemon=True).start()
    measure(label, fn, seconds=0.5, mib=16)
    done.set()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-large", type=int, default=10**8)
    ap.add_argument("--adds", type=int, default=300)
    ap.add_argument("--bad", type=int, default=10**6)
    args = ap.parse_args()

    print("== Aggregator.add, one report at a time (Done-when: the same cost at both n)")
    for n in (10**4, args.n_large):
        add_one_at_a_time(n, args.adds)

    print("\n== plans")
    text = flh_plan_json(32, 2**22)
    print(f"a plan of {len(text):,} bytes claiming 32 FLH pools of 2**22 functions (32 MiB each if built)")
    measure("Plan.from_json of it (pools not built)", lambda: Plan.from_json(text), seconds=0.05, mib=4,
            expect_error=False)
    measure("a device refuses it (max_pool_size)", lambda: report(text, 5, user=0), seconds=0.05, mib=4)
    measure("a server (PEM) refuses it (not its plan)", lambda: ldp.PEM(2.0, 4, 16).aggregator(text),
            seconds=0.2, mib=4)
    big = " " * (MAX_PLAN_BYTES + 1)
    measure("a plan above MAX_PLAN_BYTES", lambda: Plan.from_json(big), seconds=0.1, mib=4)
    deep = "[" * 100_000 + "]" * 100_000
    measure("plan JSON nested 100,000 deep", lambda: Plan.from_json(deep), seconds=0.1, mib=8)
    loud = ldp.PEM(5.0, 4, 16).plan(10**6, rng=0).to_json()
    measure("a device refuses epsilon = 5 (ceiling 4)", lambda: report(loud, 5, user=0), seconds=0.05, mib=4)

    print("\n== files and stores claiming n = 2**30, given to a server with another plan")
    P = ldp.PEM(2.0, 4, 16, eta=6)
    plan = P.plan(3000, rng=1)
    data = ldp.datasets.zipf(3000, m=16, rng=0)
    plan.labels()
    with tempfile.TemporaryDirectory() as tmp:
        npz, store = forge_n(Path(tmp), P, plan, data)
        size = sum(p.stat().st_size for p in store.rglob("*") if p.is_file())
        print(f"reports file {npz.stat().st_size:,} bytes; store {size:,} bytes")
        measure("ProtocolReports.load(file, plan=server's)", lambda: ProtocolReports.load(npz, plan=plan),
                seconds=0.05, mib=4)
        measure("open_store(store, plan=server's)", lambda: open_store(store, plan=plan), seconds=0.05, mib=4)
        measure("aggregator(plan, store=store): the restart", lambda: P.aggregator(plan, store=store),
                seconds=0.05, mib=4)

    print("\n== batches")
    server = P.aggregator(plan)
    good = ldp.client.encode_protocol_reports(P.privatize(data.values, plan=plan, rng=1))
    bad = [b"\x02" + r[1:] for r in good] * (args.bad // len(good) + 1)
    bad = bad[:args.bad]
    measure(f"add_many of {len(bad):,} reports of another wire version", lambda: server.add_many(bad),
            seconds=0.5, mib=64)

    class Huge:
        def __len__(self):
            return aggregator.MAX_BATCH_REPORTS + 1

        def __getitem__(self, i):
            raise AssertionError

    measure("add_many of a batch above MAX_BATCH_REPORTS", lambda: server.add_many(Huge()), seconds=0.01, mib=1)

    print("\n== a store's files")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "s"
        for lo in (0, 1500):
            P.privatize(data.values[lo:lo + 1500], plan=plan, users=lo, rng=3).save(base)
        for rel in ("store.json", "batches/000001.json", "group=0001/batch=000001.parquet"):
            fifo_case(f"a named pipe as {rel}", base / rel, lambda: open_store(base, plan=plan))
            base.rename(Path(tmp) / f"used-{rel.replace('/', '_')}")
            for lo in (0, 1500):
                P.privatize(data.values[lo:lo + 1500], plan=plan, users=lo, rng=3).save(base)
        os.unlink(base / "batches" / "000001.json")
        measure("a removed manifest (batch 1)", lambda: open_store(base, plan=plan), seconds=0.2, mib=16)
        npz = Path(tmp) / "r.npz"
        npz.write_bytes(b"")
        fifo_case("a named pipe as a reports file", npz, lambda: ProtocolReports.load(npz, plan=plan))

    print("\n== data sets and caches")
    measure("ldp.datasets.exponential(n=2**40)", lambda: ldp.datasets.exponential(n=2**40, rng=0),
            seconds=0.05, mib=4)
    cache = oracle_specs.ORACLE_CACHE
    t0 = time.perf_counter()
    for seed in range(64):
        oracle_specs.oracle_for("FLH", 1.0, 16, 2**20, seed + 10**6).seeds  # noqa: B018 - built: 8 MiB each
    print(f"oracle cache after 64 FLH pools of 2**20: {cache.nbytes / MiB:.0f} MiB held in {len(cache)} oracles "
          f"(budget {cache.limit / MiB:.0f} MiB; the 512-entry cache before held all 64: 512 MiB) "
          f"in {time.perf_counter() - t0:.2f} s")
    over = [r[0] for r in ROWS if not r[3]]
    print(f"\n{len(ROWS) - len(over)} of {len(ROWS)} refusals within their bounds" +
          (f"; over: {over}" if over else ""))


if __name__ == "__main__":
    main()
