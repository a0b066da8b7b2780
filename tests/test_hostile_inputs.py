"""Costs proportional to what is sent: the server's plan, files, stores and batches that cannot make it work.

* every file a store reads is a regular file inside the store: a symlink out, a named pipe, a device is
  refused (a pipe never blocks the opening); a batch whose manifest is gone is an error naming the batch;
  JSON depth and size are bounded before parsing (the store's own error, never RecursionError);
* the server's labels are built once (at start-up) and serve every entry point: ``add``, ``add_many``,
  a restart on a store, ``load`` and ``open`` given the server's plan; a report's group is then a lookup;
* a file, store or plan is compared with the server's plan before anything proportional to its ``n`` or
  its pools is built (no group assignment traced or built: call counts; tracemalloc's peak);
* FLH pools are built only when used, and cached within a byte budget;
* a batch is refused at its first bad report (the parser sees only the first chunk: call counts);
* every input has a stated limit, and its error names it.

Times are measured by ``benchmarks/bench_hostile.py``, never asserted here.
"""
from __future__ import annotations

import json
import os
import shutil
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import ldp
from ldp import datasets, reportfile
from ldp.client import encode_protocol_reports, report
from ldp.core import MAX_PLAN_BYTES, Plan, PlanError, oracle_specs, question
from ldp.core.reportstore import open_store, plan_digest
from ldp.core.storefolder import MAX_STORE_JSON_BYTES
from ldp.oracles import FLH, ReportsFileError
from ldp.protocols import ProtocolReports, aggregator
from ldp.safefiles import MAX_JSON_DEPTH

MiB = 2**20


@pytest.fixture(scope="module")
def small():
    P = ldp.PEM(2.0, 4, 16, eta=6)
    plan = P.plan(3000, rng=1)
    data = datasets.zipf(3000, m=16, rng=0)
    return P, plan, data


@pytest.fixture
def store(small, tmp_path):
    P, plan, data = small
    for lo in (0, 1500):
        P.privatize(data.values[lo:lo + 1500], plan=plan, users=lo, rng=3).save(tmp_path / "s")
    return tmp_path / "s"


def _peak(fn):
    """``fn()``'s exception and tracemalloc's peak (bytes) while it ran."""
    tracemalloc.start()
    try:
        try:
            fn()
        except Exception as err:  # noqa: BLE001 - returned to the test
            caught = err
        else:
            caught = None
        return caught, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class _NoGroupsHere:
    """Monkeypatched over the group assignment: counts its calls, and raises when ``forbid`` is set."""

    def __init__(self, monkeypatch, forbid=False):
        self.calls = {"assign_groups": 0, "trace_positions": 0}
        self.forbid = forbid
        for name in self.calls:
            original = getattr(question, name)

            def spy(*args, _name=name, _original=original, **kwargs):
                self.calls[_name] += 1
                if self.forbid:
                    raise AssertionError(f"{_name} called: work proportional to the plan's n before refusal")
                return _original(*args, **kwargs)

            monkeypatch.setattr(question, name, spy)


# ======================================================================= the store's files
def test_a_missing_manifest_is_an_error_naming_the_batch(store):
    os.unlink(store / "batches" / "000001.json")
    with pytest.raises(ReportsFileError, match=r"batch 1.*manifest.*missing|manifest of batch 1") as info:
        open_store(store)
    assert "000001.json" in str(info.value) and "1,500" in str(info.value)  # whose users would vanish


@pytest.mark.parametrize("what", ["partition", "group folder", "manifest", "store.json", "batches folder"])
def test_a_symlink_out_of_the_store_is_refused(store, tmp_path, what):
    outside = tmp_path / "outside"
    outside.mkdir()
    rel = {"partition": "group=0000/batch=000000.parquet", "group folder": "group=0001",
           "manifest": "batches/000000.json", "store.json": "store.json", "batches folder": "batches"}[what]
    target = outside / "x"
    shutil.move(store / rel, target)
    os.symlink(target, store / rel)
    with pytest.raises(ReportsFileError, match=r"symbolic link|not a regular file|not a folder") as info:
        ProtocolReports.load(store)
    assert rel.split("/")[0] in str(info.value)


def _opens_without_blocking(fn, fifo: Path):
    result = {}

    def run():
        try:
            fn()
        except Exception as err:  # noqa: BLE001
            result["error"] = err

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=30)
    if t.is_alive():  # unblock the reader, then fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(timeout=5)
        pytest.fail(f"opening blocked on the named pipe {fifo}")
    return result.get("error")


@pytest.mark.parametrize("rel", ["store.json", "batches/000001.json", "group=0002/batch=000001.parquet"])
def test_a_named_pipe_in_the_store_never_blocks_opening(store, rel):
    os.unlink(store / rel)
    os.mkfifo(store / rel)
    err = _opens_without_blocking(lambda: open_store(store), store / rel)
    assert isinstance(err, ReportsFileError) and "not a regular file" in str(err) and rel in str(err)


def test_a_named_pipe_for_a_reports_file_never_blocks_loading(tmp_path):
    fifo = tmp_path / "r.npz"
    os.mkfifo(fifo)
    err = _opens_without_blocking(lambda: ProtocolReports.load(fifo), fifo)
    assert isinstance(err, ReportsFileError) and "not a regular file" in str(err)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("rel", ["store.json", "batches/000000.json"])
def test_deep_or_large_json_is_the_stores_error(store, rel):
    (store / rel).write_text(_nested(100_000))
    with pytest.raises(ReportsFileError, match=rf"nests JSON .* deeper than {MAX_JSON_DEPTH}"):
        open_store(store)
    with open(store / rel, "wb") as fh:  # a sparse file: its size alone refuses it
        fh.truncate(MAX_STORE_JSON_BYTES + 1)
    with pytest.raises(ReportsFileError, match=r"MAX_STORE_JSON_BYTES"):
        open_store(store)


def test_deep_or_large_json_in_plans_and_reports_files(tmp_path, small):
    with pytest.raises(PlanError, match=rf"deeper than {MAX_JSON_DEPTH}"):
        Plan.from_json(_nested(100_000))
    with pytest.raises(PlanError, match=r"MAX_PLAN_BYTES"):
        Plan.from_json(" " * (MAX_PLAN_BYTES + 1))
    P, plan, data = small
    path = tmp_path / "r.npz"
    P.privatize(data.values[:10], plan=plan, users=0, rng=1).save(path)
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files if k != "__meta__"}
    with open(path, "wb") as fh:
        np.savez(fh, __meta__=np.array(_nested(100_000)), **arrays)
    with pytest.raises(ReportsFileError, match=r"deeper than"):
        ProtocolReports.load(path)


def test_a_broken_store_takes_no_more_batches(store, small):
    P, plan, data = small
    os.unlink(store / "batches" / "000001.json")
    with pytest.raises(ReportsFileError, match=r"batch 1"):
        P.privatize(data.values[:10], plan=plan, users=0, rng=9).save(store)  # appending reads the store first


# ======================================================================= the server's labels, once
def test_the_server_builds_its_labels_once_for_every_entry_point(small, tmp_path, monkeypatch):
    P, plan, data = small
    text = plan.to_json()
    wire = encode_protocol_reports(P.privatize(data.values, plan=plan, rng=5))
    P.privatize(data.values[:1000], plan=plan, users=0, rng=5).save(tmp_path / "r.npz")
    spy = _NoGroupsHere(monkeypatch)
    server = P.aggregator(text, store=tmp_path / "s")
    assert spy.calls == {"assign_groups": 1, "trace_positions": 0}  # at start-up
    for w in wire[:20]:
        server.add(w)  # one report at a time: a lookup, never a trace
    server.add_many(wire[20:1500])
    restarted = P.aggregator(server.plan, store=tmp_path / "s")  # a restart with the same plan object
    restarted.add_many(wire[1500:2000])
    restarted.stored()
    ProtocolReports.load(tmp_path / "r.npz", plan=server.plan)
    ProtocolReports.open(tmp_path / "s", plan=server.plan).reload()
    ProtocolReports.load(tmp_path / "s", plan=server.plan)
    assert spy.calls == {"assign_groups": 1, "trace_positions": 0}
    assert restarted.n_reports == 2000


# ======================================================================= compared before any work
def _forge_plan_n(meta_plan: dict, n: int) -> dict:
    forged = json.loads(json.dumps(meta_plan))
    forged["n"] = n
    return forged


def test_a_reports_file_of_another_plan_is_refused_before_work(small, tmp_path, monkeypatch):
    P, plan, data = small
    path = tmp_path / "r.npz"
    P.privatize(data.values[:17], plan=plan, users=0, rng=1).save(path)
    with np.load(path) as f:
        meta = json.loads(str(f["__meta__"]))
        arrays = {k: f[k] for k in f.files if k != "__meta__"}
    meta["plan"] = _forge_plan_n(meta["plan"], 2**30)  # 17 users claiming a plan for 2**30
    meta["sha256"] = reportfile.checksum(arrays)
    with open(path, "wb") as fh:
        np.savez(fh, __meta__=np.array(json.dumps(meta)), **arrays)
    _NoGroupsHere(monkeypatch, forbid=True)
    err, peak = _peak(lambda: ProtocolReports.load(path, plan=plan))
    assert isinstance(err, ReportsFileError) and "another plan" in str(err) and str(path) in str(err), err
    assert peak < 8 * MiB, f"{peak / MiB:.1f} MiB"


def test_a_store_of_another_plan_is_refused_before_work(small, store, monkeypatch):
    P, plan, data = small
    meta = json.loads((store / "store.json").read_text())
    meta["plan"] = _forge_plan_n(meta["plan"], 2**30)
    meta["plan_digest"] = plan_digest(Plan.from_dict(meta["plan"]))
    (store / "store.json").write_text(json.dumps(meta))
    _NoGroupsHere(monkeypatch, forbid=True)
    for fn in (lambda: open_store(store, plan=plan), lambda: ProtocolReports.load(store, plan=plan),
               lambda: P.aggregator(plan, store=store)):
        err, peak = _peak(fn)
        assert isinstance(err, ValueError) and "another plan" in str(err), err
        assert peak < 8 * MiB, f"{peak / MiB:.1f} MiB"


def _flh_plan_json(questions: int, pool: int) -> str:
    """A small plan whose FLH questions claim pools of ``pool`` functions (8 bytes each)."""
    q = {"start": 0, "stop": 16, "epsilon": 0.05, "channels": 0, "seed": 0, "oracle": "FLH", "pool_size": pool}
    qs = [dict(q, pool_seed=i + 1) for i in range(questions)]
    return json.dumps({"m": 16, "fractions": [1.0], "questions": [qs], "n": 1000, "seed": 1,
                       "protocol": "PEM", "params": {"epsilon": 2.0, "m": 16}})


def test_a_small_plan_with_large_pools_costs_nothing_before_it_is_checked(monkeypatch):
    text = _flh_plan_json(32, 2**22)  # about 4 KiB claiming 32 pools of 32 MiB
    assert len(text) < 8192
    err, peak = _peak(lambda: Plan.from_json(text))
    assert err is None and peak < 8 * MiB, f"{peak / MiB:.1f} MiB"
    err, peak = _peak(lambda: report(text, 5, user=0))  # the device: pools beyond its limit
    assert isinstance(err, ValueError) and "max_pool_size" in str(err), err
    assert peak < 8 * MiB
    err, peak = _peak(lambda: ldp.PEM(2.0, 4, 16).aggregator(text))  # the server: not its plan
    assert isinstance(err, ValueError), err
    assert peak < 8 * MiB


def test_flh_pools_are_built_on_use_and_reports_need_only_their_members():
    o = FLH(1.0, m=16, pool_size=2**20, pool_seed=3)
    assert not o.pool_built
    r = o.privatize(np.arange(100, dtype=np.uint64), rng=0)  # 100 users: 100 members of the pool, not 2**20
    assert not o.pool_built
    same = FLH(1.0, m=16, pool_size=2**20, pool_seed=3)
    np.testing.assert_array_equal(same.seeds[r.index.astype(np.int64)], ldp.oracles.flh.pool_seeds(3, 2**20)[
        r.index.astype(np.int64)])
    assert same.pool_built
    np.testing.assert_array_equal(FLH(1.0, m=16, pool_size=2**20, pool_seed=3).privatize(
        np.arange(100, dtype=np.uint64), rng=0).y, r.y)  # the same reports whether the pool is built or not
    big = same.privatize(np.arange(100, dtype=np.uint64), rng=0)
    assert big == r


def test_the_oracle_cache_is_bounded_in_bytes():
    cache = oracle_specs.ORACLE_CACHE
    for seed in range(64):
        o = oracle_specs.oracle_for("FLH", 1.0, 16, 2**20, seed + 1000)
        assert o.seeds.nbytes == 8 * 2**20  # built: 8 MiB each
        assert cache.nbytes <= cache.limit
    assert cache.limit <= 2**30 and len(cache) < 64


# ======================================================================= batches
def test_a_batch_is_refused_at_its_first_bad_report(small, monkeypatch):
    P, plan, data = small
    server = P.aggregator(plan)
    good = encode_protocol_reports(P.privatize(data.values, plan=plan, rng=1))
    bad = [b"\x02" + r[1:] for r in good] * 60  # 180,000 reports of another wire version
    seen = []
    original = aggregator.wire.parse_reports

    def spy(target, reports, **kwargs):
        seen.append(len(reports))
        return original(target, reports, **kwargs)

    monkeypatch.setattr(aggregator.wire, "parse_reports", spy)
    with pytest.raises(ValueError, match=r"^report 0 of the batch has wire format version 2"):
        server.add_many(bad)
    assert sum(seen) <= aggregator.CHUNK < len(bad) and server.n_reports == 0
    seen.clear()
    mixed = good[:1000] + [good[5]] + good[1000:]  # a duplicate at position 1000: the first bad one
    with pytest.raises(ValueError, match=r"^report 1000 of the batch comes from a user who has already"):
        server.add_many(mixed)
    assert server.n_reports == 0 and not server.reported(np.arange(3000)).any()
    assert server.add_many(good) == [] and server.n_reports == 3000


def test_every_input_has_a_stated_limit_named_in_its_error(small):
    P, plan, data = small
    server = P.aggregator(plan)

    class Huge:  # a sequence claiming more reports than a batch may hold
        def __len__(self):
            return aggregator.MAX_BATCH_REPORTS + 1

        def __getitem__(self, i):
            raise AssertionError("read before the size was checked")

    with pytest.raises(ValueError, match=r"MAX_BATCH_REPORTS = 2\*\*24"):
        server.add_many(Huge())
    with pytest.raises(ValueError, match=r"pool_size must be an integer in \[1, 16777216\]"):
        Plan.from_json(_flh_plan_json(1, 2**24 + 1))
    with pytest.raises(PlanError, match=r"n must be an integer in \[3, 4294967296\].*MAX_USERS = 2\*\*32"):
        Plan.from_json(json.dumps({**json.loads(plan.to_json()), "n": 2**32 + 1}))
    with pytest.raises(PlanError, match=r"MAX_PLAN_BYTES"):
        Plan.from_json(plan.to_json() + " " * MAX_PLAN_BYTES)


def test_add_many_refuses_an_array_report_as_add_does(small):
    P, plan, data = small
    server = P.aggregator(plan)
    good = encode_protocol_reports(P.privatize(data.values[:5], plan=plan, users=0, rng=1))
    as_array = np.frombuffer(good[0], dtype=np.uint8)
    with pytest.raises(TypeError) as one:
        server.add(as_array)
    with pytest.raises(TypeError) as many:
        server.add_many([as_array])
    assert "must be bytes" in str(one.value) and "must be bytes" in str(many.value)
    assert server.n_reports == 0
