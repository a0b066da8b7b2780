"""One writer process of tests/test_store_writers.py: appends one batch (an .npz reports file) to a report store.

Usage::

    python tests/store_writer.py STORE BATCH.npz [--start T] [--die-at K] [--count]

``--start T``: wait until ``time.time() >= T`` before appending (several writers start together).
``--die-at K``: SIGKILL this process at its K-th file-system step (an ``os`` call that creates, renames,
links, removes, locks or syncs a file, or a Parquet write), so a test can kill a writer at every point of
an append.  ``--count``: print how many such steps the append made.

Prints the batch number and exits 0; exits 3 when the store refuses the batch because a user is already in it.
"""
from __future__ import annotations

import argparse
import fcntl
import os
import signal
import sys
import time

STEPS = ("open", "link", "replace", "rename", "unlink", "fsync", "mkdir", "rmdir")


def _instrument(die_at: int) -> list[int]:
    import pyarrow.parquet as pq

    count = [0]

    def wrap(owner, name):
        original = getattr(owner, name)

        def step(*args, **kwargs):
            count[0] += 1
            if count[0] == die_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(*args, **kwargs)

        setattr(owner, name, step)

    for name in STEPS:
        wrap(os, name)
    wrap(fcntl, "flock")
    wrap(pq, "write_table")
    return count


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("batch")
    ap.add_argument("--start", type=float, default=0.0)
    ap.add_argument("--die-at", type=int, default=0)
    ap.add_argument("--count", action="store_true")
    args = ap.parse_args()
    from ldp.core.reportwriter import append_batch
    from ldp.protocols import ProtocolReports

    reports = ProtocolReports.load(args.batch)
    count = _instrument(args.die_at) if args.die_at or args.count else [0]
    while time.time() < args.start:
        time.sleep(0.001)
    try:
        b = append_batch(reports, args.store)
    except ValueError as err:
        if "already in the store" in str(err):
            print(f"refused: {err}")
            return 3
        raise
    print(b)
    if args.count:
        print(f"steps {count[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
