"""Writer processes for tests/test_store_writers.py: each appends one batch (an .npz reports file) to a report store.

``python tests/store_writer.py --serve`` imports ldp once and then forks one writer process per command read
from its standard input (a JSON object per line), so that a test can start many writers, at the same
instant, without paying the import each time:

* ``{"run": {"store": S, "batch": B, "start": T, "die_at": K, "count": false, "out": F}}`` forks a writer
  that waits until ``time.time() >= T``, appends batch ``B`` to store ``S`` and exits; its output goes to
  file ``F``.  Answers ``{"pid": P}``.  With ``die_at = K > 0`` the writer SIGKILLs itself at its K-th
  file-system step (an ``os`` call that opens, creates, links, renames, removes or syncs a file, a lock,
  or a Parquet write), so a test can kill a writer at every point of an append; with ``count`` it prints
  how many such steps the append made.
* ``{"wait": P}`` waits for writer ``P``; answers ``{"code": C}``: 0 (appended; the output is the batch
  number), 3 (refused: a user is already in the store), ``-9`` (killed), 1 (another error).

The writers are forked before this process has started any thread (nothing is read or written with
pyarrow here), so fork is safe.
"""
from __future__ import annotations

import fcntl
import gc
import json
import os
import signal
import sys
import time
import traceback

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


def _write(store: str, batch: str, start: float, die_at: int, count: bool) -> int:
    from ldp.core.protocol_reports import ProtocolReports
    from ldp.core.reportwriter import append_batch

    reports = ProtocolReports.load(batch)
    steps = _instrument(die_at) if die_at or count else [0]
    while time.time() < start:
        time.sleep(0.0005)
    try:
        b = append_batch(reports, store)
    except ValueError as err:
        if "already in the store" in str(err):
            print(f"refused: {err}")
            return 3
        raise
    print(b)
    if count:
        print(f"steps {steps[0]}")
    return 0


def _child(cmd: dict) -> None:
    fd = os.open(cmd["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = sys.stdout
    try:
        code = _write(cmd["store"], cmd["batch"], cmd.get("start", 0.0), cmd.get("die_at", 0),
                      cmd.get("count", False))
    except BaseException:  # noqa: BLE001 - reported through the exit code and the output file
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    raise SystemExit(code)  # the forked writer ends here, with its code (nothing is buffered for the parent)


def serve() -> None:
    import numpy as np
    import pandas  # noqa: F401 - pyarrow imports it on first conversion of an array
    import pyarrow.parquet  # noqa: F401

    import ldp.core.reportwriter  # noqa: F401 - imported once, before any fork
    from ldp.core.assignment import assign_groups

    assign_groups(100, (0.5, 0.5), rng=np.random.default_rng(0))  # numba's kernel loaded once (no thread started)
    # what the server holds, kept out of the collector: a writer's exit then leaves the parent's pages alone
    # (no copy-on-write of the whole heap: 0.45 s -> 0.1 s per writer; the gc module's advice for forking)
    gc.freeze()

    for line in sys.stdin:
        msg = json.loads(line)
        if "run" in msg:
            pid = os.fork()
            if pid == 0:
                _child(msg["run"])
            answer = {"pid": pid}
        else:
            _, status = os.waitpid(msg["wait"], 0)
            answer = {"code": -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
