"""A report store many writers share: real writer processes started together, and killed at every step.

* writers started at the same instant with overlapping users: the store always opens, every user of a
  batch that was accepted is in it exactly once, and each refused batch left nothing behind;
* a writer SIGKILLed at any step of its append (each file-system call counted by ``tests/store_writer.py``,
  and at random instants from outside): the store opens, the batch is either all there or invisible, and a
  retry completes it;
* what the store keeps of a dead writer (its reservation, its files) is never read as data.

The writers are processes forked by ``tests/store_writer.py --serve`` (ldp imported once), so a round of
writers costs the appends, not the imports.

The fast tests cover a sample of the kill points; ``slow`` ones cover all of them and more concurrent rounds.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ldp
from ldp import datasets
from ldp.core.reportstore import open_store
from ldp.protocols import ProtocolReports

HERE = Path(__file__).resolve().parent
WRITER = HERE / "store_writer.py"
N = 3000


@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    """Five batches of one plan as .npz files: users [0, 1000), [800, 1800), [1800, 2400), [2400, 3000),
    and the odd users of [0, 600) again (a batch that overlaps the first)."""
    folder = tmp_path_factory.mktemp("batches")
    P = ldp.PEM(2.0, 4, 16, eta=6)
    plan = P.plan(N, rng=1)
    data = datasets.zipf(N, m=16, rng=0)
    spans = [np.arange(0, 1000), np.arange(800, 1800), np.arange(1800, 2400), np.arange(2400, 3000),
             np.arange(1, 600, 2)]
    paths = []
    for i, users in enumerate(spans):
        r = P.privatize(data.values[users], plan=plan, users=users, rng=3)
        path = folder / f"b{i}.npz"
        r.save(path)
        paths.append((path, set(users.tolist())))
    return paths


class Writers:
    """The writer processes of ``tests/store_writer.py --serve``: one fork per append, ldp imported once."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.proc = subprocess.Popen([sys.executable, str(WRITER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.outputs: dict[int, Path] = {}

    def _ask(self, msg: dict) -> dict:
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def start(self, store, batch, *, start=0.0, die_at=0, count=False) -> int:
        out = self.folder / f"out{len(self.outputs)}.txt"
        pid = self._ask({"run": {"store": str(store), "batch": str(batch), "start": start, "die_at": die_at,
                                 "count": count, "out": str(out)}})["pid"]
        self.outputs[pid] = out
        return pid

    def finish(self, pid: int) -> tuple[int, str]:
        """The writer's exit code (3: refused as already stored; -9: killed) and its output."""
        code = self._ask({"wait": pid})["code"]
        return code, self.outputs[pid].read_text()

    def run(self, store, batch, **kwargs) -> tuple[int, str]:
        return self.finish(self.start(store, batch, **kwargs))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def writers(tmp_path_factory):
    w = Writers(tmp_path_factory.mktemp("writers"))
    yield w
    w.close()


def _users(store) -> list[int]:
    """Every user of the store, once per time she is stored (the store must open)."""
    stored = open_store(store)
    labels, users, _ = stored.read()
    return users.tolist()


def _check_exactly_once(store, expected: set[int]) -> None:
    users = _users(store)
    assert len(users) == len(set(users)), "a user is stored twice"
    assert set(users) == expected


def _run_together(writers, store, items):
    """Start a writer per batch at the same instant."""
    start = time.time() + 0.3
    pids = [writers.start(store, path, start=start) for path, _ in items]
    return [writers.finish(pid) for pid in pids]


def test_writers_started_together_never_break_the_store(writers, batches, tmp_path):
    """Overlapping batches appended at once: one of each overlapping pair wins, the store opens, nothing twice."""
    for trial in range(4):
        store = tmp_path / f"s{trial}"
        items = [batches[0], batches[1], batches[4], batches[2]]  # 0-1 and 0-4 overlap
        results = _run_together(writers, store, items)
        accepted: set[int] = set()
        for (code, out), (_, users) in zip(results, items):
            assert code in (0, 3), out
            if code == 0:
                assert not accepted & users
                accepted |= users
        assert results[3][0] == 0  # the disjoint batch always goes in
        _check_exactly_once(store, accepted)
        assert not list((store / "batches").glob("*.pending"))


def _count_steps(writers, batches, tmp_path) -> int:
    store = tmp_path / "count"
    code, out = writers.run(store, batches[0][0], count=True)
    assert code == 0, out
    code, out = writers.run(store, batches[2][0], count=True)  # an append to an existing store
    assert code == 0, out
    return int(out.split("steps ")[1])


def _kill_and_retry(writers, batches, tmp_path, steps) -> None:
    base = tmp_path / "base"
    code, out = writers.run(base, batches[0][0])
    assert code == 0, out
    before = set(batches[0][1])
    for k in steps:
        store = tmp_path / f"k{k}"
        shutil.copytree(base, store)
        code, out = writers.run(store, batches[2][0], die_at=k)
        assert code == -signal.SIGKILL, (k, code, out)
        users = _users(store)  # the store opens
        assert set(users) in (before, before | batches[2][1]), f"batch half there after a kill at step {k}"
        code, out = writers.run(store, batches[2][0])  # the retry
        assert code in (0, 3), out
        assert (code == 3) == (set(users) != before)  # refused only when the killed append had committed
        code, out = writers.run(store, batches[3][0])  # and the store takes more batches
        assert code == 0, out
        _check_exactly_once(store, before | batches[2][1] | batches[3][1])


def test_a_writer_killed_at_sampled_steps_leaves_an_openable_store_and_a_retry_completes(writers, batches, tmp_path):
    total = _count_steps(writers, batches, tmp_path)
    assert total >= 10
    rng = np.random.default_rng(0)
    _kill_and_retry(writers, batches, tmp_path, sorted(set(rng.integers(1, total + 1, size=8).tolist()) | {1, total}))


@pytest.mark.slow
def test_a_writer_killed_at_every_step_leaves_an_openable_store_and_a_retry_completes(writers, batches, tmp_path):
    _kill_and_retry(writers, batches, tmp_path, range(1, _count_steps(writers, batches, tmp_path) + 1))


def _kill_at_random_instants(writers, batches, tmp_path, rounds, seed) -> None:
    """Three writers at once, one of them killed from outside after a random delay; then retries."""
    rng = np.random.default_rng(seed)
    for r in range(rounds):
        store = tmp_path / f"r{r}"
        items = [batches[1], batches[2], batches[3]]  # disjoint: all must end up in the store
        start = time.time() + 0.3
        pids = [writers.start(store, path, start=start) for path, _ in items]
        victim = int(rng.integers(0, 3))
        time.sleep(max(0.0, start - time.time()) + float(rng.uniform(0, 0.15)))
        os.kill(pids[victim], signal.SIGKILL)  # a writer this test started (a no-op if it has exited: a zombie)
        results = [writers.finish(pid) for pid in pids]
        for i, (code, out) in enumerate(results):
            assert code == 0 or (i == victim and code == -signal.SIGKILL), out
        users = set(_users(store))
        for _, batch_users in items:
            assert users & batch_users in (set(), batch_users)  # all or nothing
        if not users >= items[victim][1]:
            code, out = writers.run(store, items[victim][0])
            assert code == 0, out
        _check_exactly_once(store, set().union(*(u for _, u in items)))


def test_writers_killed_at_random_instants(writers, batches, tmp_path):
    _kill_at_random_instants(writers, batches, tmp_path, rounds=5, seed=1)


@pytest.mark.slow
def test_writers_killed_at_random_instants_many_times(writers, batches, tmp_path):
    _kill_at_random_instants(writers, batches, tmp_path, rounds=60, seed=2)


def test_a_writer_that_looks_while_another_makes_the_store_appends(batches, tmp_path, monkeypatch):
    """Two first writers: the second finds no store.json, and the first makes the store before the second lists
    the folder.  What the second lists is the new store's, not a stranger's: it appends (it used to refuse)."""
    from ldp.core import reportwriter

    store = tmp_path / "store"
    store.mkdir()
    first, second = (ProtocolReports.load(path) for path, _ in batches[1:3])
    real = os.listdir
    raced = []

    def listdir(path="."):
        if Path(path) == store and not raced:
            raced.append(True)
            reportwriter.append_batch(first, store)  # the other writer, between the two looks
        return real(path)

    monkeypatch.setattr(reportwriter.os, "listdir", listdir)
    assert reportwriter.append_batch(second, store) == 1
    assert raced
    monkeypatch.undo()
    _check_exactly_once(store, batches[1][1] | batches[2][1])


def test_a_dead_writers_files_are_never_read(writers, batches, tmp_path):
    """A batch whose writer died before its manifest: invisible to readers, its files cleaned by the next writer."""
    base = tmp_path / "base"
    code, out = writers.run(base, batches[0][0])
    assert code == 0, out
    total = _count_steps(writers, batches, tmp_path)

    def dead_files(store):
        return sorted(store.glob("group=*/batch=000001.parquet"))

    for k in range(total - 1, 0, -1):  # from the last step back: the files are written, the manifest is not
        store = tmp_path / f"s{k}"
        shutil.copytree(base, store)
        code, out = writers.run(store, batches[2][0], die_at=k)
        assert code == -signal.SIGKILL, out
        if open_store(store).n == 1000 and dead_files(store):
            break
    else:  # pragma: no cover
        pytest.fail("no kill point left the dead batch's files on disk")
    assert ProtocolReports.load(store).n == 1000 and ProtocolReports.open(store).batches == (0,)
    code, out = writers.run(store, batches[2][0])
    assert code == 0 and out.strip() == "2", out  # a new batch number: the dead one is never reused
    assert dead_files(store) == []  # the next writer removed what the dead one had left
    assert (store / "batches" / "000001.abandoned").exists()
    _check_exactly_once(store, batches[0][1] | batches[2][1])
