"""Reports on disk and aggregation at scale: the Parquet report store, streamed and dask aggregation.

Every aggregation path (in memory, streamed from the store in chunks, on a dask
LocalCluster) must give the same result bit for bit; the store's reader must
refuse every damaged or inconsistent file before its content is used.
"""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

import ldp
from ldp import datasets
from ldp.core.reportstore import StoredReports, open_store
from ldp.core.reportwriter import append_batch
from ldp.oracles import FLH, OLH, ReportsFileError
from ldp.protocols import ProtocolReports


@pytest.fixture(autouse=True)
def _no_cluster(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)


@pytest.fixture(scope="module")
def data32():
    return datasets.exponential(30_000, m=32, rng=0)


MAKERS = {
    "PEM": lambda: ldp.PEM(2.0, 8, 32, query_limit=2**12),
    "PEM-FLH": lambda: ldp.PEM(2.0, 8, 32, query_limit=2**12, oracle="FLH", pool_size=128),
    "SPM": lambda: ldp.SPM(2.0, 4, 32, query_limit=2**12),
    "MCM": lambda: ldp.MCM(2.0, 4, 32, query_limit=2**12, final_fraction=0.2),
    "TreeHist-FLH": lambda: ldp.TreeHist(2.0, 4, 32, bits_per_level=4, oracle="FLH", pool_size=32),
    "SFP": lambda: ldp.SFP(2.0, 4, 32, hash_bits=4, query_limit=2**13),
}


def batches(P, data, plan, size, rng=3):
    return [P.privatize(data.values[lo:lo + size], plan=plan, users=lo, rng=rng) for lo in range(0, data.n, size)]


def same_result(a, b):
    assert a.engine == b.engine and a.n == b.n and a.group_sizes == b.group_sizes
    np.testing.assert_array_equal(a.heavy_hitters, b.heavy_hitters)
    np.testing.assert_array_equal(a.estimates, b.estimates)
    assert len(a.rounds) == len(b.rounds)
    for x, y in zip(a.rounds, b.rounds):
        np.testing.assert_array_equal(x.kept, y.kept)
        np.testing.assert_array_equal(x.support, y.support)


# =========================================================== the store
@pytest.mark.parametrize("name", list(MAKERS))
def test_store_roundtrip_and_streamed_aggregation_equal_in_memory(data32, name, tmp_path):
    P = MAKERS[name]()
    plan = P.plan(data32.n, rng=1)
    parts = batches(P, data32, plan, 12_000)
    for b in parts:
        b.save(tmp_path / "store")  # a folder: one batch appended per call
    full = ProtocolReports.concat(parts)
    assert ProtocolReports.load(tmp_path / "store") == full
    stored = ProtocolReports.open(tmp_path / "store")
    assert isinstance(stored, StoredReports) and stored.n == data32.n and stored.sizes == full.sizes
    assert stored.batches == (0, 1, 2) and stored.complete
    same_result(P.aggregate(full, rng=4), P.aggregate(stored, rng=4, chunk=5_000))


def test_aggregation_reads_in_chunks(data32, tmp_path, monkeypatch):
    """Peak memory is bounded by a chunk: no oracle call ever sees more than `chunk` reports."""
    P = MAKERS["PEM"]()
    P.privatize(data32, rng=2).save(tmp_path / "s")
    seen = []
    original = OLH.partial_support

    def spy(self, reports, candidates):
        seen.append(len(reports))
        return original(self, reports, candidates)

    monkeypatch.setattr(OLH, "partial_support", spy)
    P.aggregate(ProtocolReports.open(tmp_path / "s"), rng=0, chunk=1000)
    assert seen and max(seen) <= 1000 and sum(seen) == data32.n


def test_batches_appended_over_time_and_reaggregated(data32, tmp_path):
    P = MAKERS["PEM-FLH"]()
    plan = P.plan(data32.n, rng=1)
    parts = batches(P, data32, plan, 10_000)
    parts[0].save(tmp_path / "s")
    early = ProtocolReports.open(tmp_path / "s")
    assert early.n == 10_000 and not early.complete
    first = P.aggregate(early, rng=5)  # estimates scaled to the users so far
    assert first.n == 10_000
    for b in parts[1:]:
        append_batch(b, tmp_path / "s")
    assert early.n == 10_000  # an open store is a snapshot
    now = early.reload()
    assert now.n == data32.n and now.batches == (0, 1, 2)
    same_result(P.aggregate(ProtocolReports.concat(parts), rng=5), P.aggregate(now, rng=5))


def test_store_refuses_other_plans_and_repeated_users(data32, tmp_path):
    P = MAKERS["PEM"]()
    plan = P.plan(data32.n, rng=1)
    b = P.privatize(data32.values[:5000], plan=plan, users=0, rng=3)
    b.save(tmp_path / "s")
    with pytest.raises(ValueError, match=r"already in the store"):
        b.save(tmp_path / "s")
    overlap = P.privatize(data32.values[100:200], plan=plan, users=np.arange(4950, 5050), rng=3)
    with pytest.raises(ValueError, match=r"already in the store"):
        overlap.save(tmp_path / "s")
    other = P.privatize(data32.values[5000:6000], plan=P.plan(data32.n, rng=2), users=5000, rng=3)
    with pytest.raises(ValueError, match=r"another plan"):
        other.save(tmp_path / "s")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x.txt").write_text("x")
    with pytest.raises(ValueError, match=r"not a report store"):
        b.save(tmp_path / "junk")
    assert len(open_store(tmp_path / "s").batches) == 1 and not list((tmp_path / "s" / "batches").glob("*.lock"))
    with pytest.raises(FileNotFoundError):
        ProtocolReports.open(tmp_path / "nowhere")
    with pytest.raises(ReportsFileError, match=r"not a report store"):
        ProtocolReports.open(tmp_path / "junk")


def test_interleaved_batches_are_checked_exactly(data32, tmp_path):
    """Batches whose user ranges overlap (any users= order) are accepted when disjoint, checked user by user."""
    P = MAKERS["PEM"]()
    plan = P.plan(data32.n, rng=1)
    even, odd = np.arange(0, data32.n, 2), np.arange(1, data32.n, 2)
    a = P.privatize(data32.values[even], plan=plan, users=even, rng=3)
    b = P.privatize(data32.values[odd], plan=plan, users=odd, rng=3)
    a.save(tmp_path / "s")
    b.save(tmp_path / "s")
    stored = open_store(tmp_path / "s")
    assert stored.n == data32.n
    same_result(P.aggregate(ProtocolReports.concat([a, b]), rng=1), P.aggregate(stored, rng=1))


# =========================================================== the reader trusts no file
@pytest.fixture
def store(data32, tmp_path):
    P = MAKERS["PEM-FLH"]()
    plan = P.plan(data32.n, rng=1)
    for b in batches(P, data32, plan, 15_000):
        b.save(tmp_path / "s")
    return P, tmp_path / "s"


def _manifest(root, batch=0):
    return root / "batches" / f"{batch:06d}.json"


def _edit_manifest(root, fn, batch=0):
    m = json.loads(_manifest(root, batch).read_text())
    fn(m)
    _manifest(root, batch).write_text(json.dumps(m))


def _rewrite(root, rel, change):
    """Rewrite a partition with changed columns but valid Parquet, then fix the manifest's size (a forgery)."""
    import pyarrow.parquet as pq

    path = root / rel
    table = pq.read_table(path)
    table = change(table)
    pq.write_table(table, path)
    _edit_manifest(root, lambda m: [f.update(bytes=path.stat().st_size) for f in m["files"] if f["file"] == rel])


def test_damaged_or_forged_stores_are_refused(store):
    P, root = store
    rel = json.loads(_manifest(root).read_text())["files"][0]["file"]

    def refused(match, then=lambda: open_store(root)):
        with pytest.raises(ReportsFileError, match=match):
            then()

    pristine = root.parent / "pristine"
    shutil.copytree(root, pristine)

    def reset():
        shutil.rmtree(root)
        shutil.copytree(pristine, root)

    (root / "store.json").write_text("{")
    refused(r"not valid JSON")
    reset()
    meta = json.loads((root / "store.json").read_text())
    meta["plan"]["seed"] += 1  # another group assignment
    (root / "store.json").write_text(json.dumps(meta))
    refused(r"plan digest")
    reset()
    _edit_manifest(root, lambda m: m["files"][0].update(rows=m["files"][0]["rows"] + 1))
    refused(r"rows")
    reset()
    os.unlink(root / rel)
    refused(r"is missing")
    reset()
    import pyarrow.parquet as pq

    col = pq.ParquetFile(root / rel).metadata.row_group(0).column(2)  # q0_y's data
    at = col.data_page_offset + col.total_compressed_size - 8
    with open(root / rel, "r+b") as fh:  # a flipped byte inside the data: its page's checksum fails
        fh.seek(at)
        byte = fh.read(1)
        fh.seek(at)
        fh.write(bytes([byte[0] ^ 0xFF]))
    refused(r"damaged", then=lambda: P.aggregate(open_store(root, verify=False), rng=0))
    reset()
    with open(root / rel, "r+b") as fh:  # truncated: the size no longer matches
        fh.truncate(100)
    refused(r"bytes")
    reset()
    other = json.loads(_manifest(root, 1).read_text())["files"][0]["file"]
    shutil.copy(root / other, root / rel)  # a valid file of another batch in its place
    _edit_manifest(root, lambda m: m["files"][0].update(bytes=(root / rel).stat().st_size))
    refused(r"another plan, group or batch|rows")
    reset()
    import pyarrow as pa

    def move_user(t):  # the first user replaced by one the plan puts in another group
        users = t.column("user").to_numpy().copy()
        labels = P.plan(30_000, rng=1).labels()
        g = int(labels[users[0]])
        users[0] = int(np.flatnonzero(labels[:users[1]] != g)[-1])
        users.sort()
        return t.set_column(0, t.schema.field(0), pa.array(users, type=t.schema.field(0).type))

    _rewrite(root, rel, move_user)
    refused(r"assigns to group|out of order")
    reset()

    def bad_symbol(t):  # a y outside [0, d')
        i = t.schema.get_field_index("q0_y")
        y = t.column(i).to_numpy().copy()
        y[5] = 200
        return t.set_column(i, t.schema.field(i), pa.array(y, type=t.schema.field(i).type))

    _rewrite(root, rel, bad_symbol)
    refused(r"inconsistent content", then=lambda: P.aggregate(open_store(root), rng=0))


# =========================================================== dask
@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("dask.distributed", reason="dask.distributed is not installed "
                                                                "(requirements-cluster.txt)")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as c:
        yield c


@pytest.mark.slow
@pytest.mark.parametrize("name", ["PEM-FLH", "PEM", "SPM", "SFP"])
def test_dask_aggregation_equals_in_memory(data32, name, tmp_path, cluster, monkeypatch):
    from dask.distributed import Client

    P = MAKERS[name]()
    plan = P.plan(data32.n, rng=1)
    parts = batches(P, data32, plan, 15_000)
    for b in parts:
        b.save(tmp_path / "s")
    full = ProtocolReports.concat(parts)
    local = P.aggregate(full, rng=9)
    with Client(cluster.scheduler_address) as client:
        same_result(local, P.aggregate(ProtocolReports.open(tmp_path / "s"), rng=9, client=client, chunk=6000))
        if name == "PEM-FLH":
            same_result(local, P.aggregate(full, rng=9, client=client, chunk=8000))  # scattered from memory
    if name == "PEM-FLH":
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.scheduler_address)  # as the experiments find it
        same_result(local, P.aggregate(ProtocolReports.open(tmp_path / "s"), rng=9))


def test_partial_supports_add_up_for_every_oracle():
    rng = np.random.default_rng(0)
    vals = rng.integers(0, 2**16, size=3000).astype(np.uint64)
    cands = np.arange(50, dtype=np.uint64)
    for o in (OLH(1.0, m=16), FLH(1.0, m=16, pool_size=40, pool_seed=2), ldp.HR(1.0, m=16), ldp.CMS(1.0, m=16)):
        r = o.privatize(vals, rng=1)
        parts = [o.partial_support(r[i:i + 700], cands) for i in range(0, 3000, 700)]
        acc = parts[0]
        for p in parts[1:]:
            acc = acc + p
        np.testing.assert_array_equal(o.finish_support(acc, cands), o.support(r, cands))


@pytest.mark.slow
def test_readme_scale_snippet_runs_and_leaves_no_file(tmp_path):
    import re
    import subprocess
    import sys
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = text.split("## At scale", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    env = {k: v for k, v in os.environ.items() if k != "LDP_FIGURE_DIR"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert list(tmp_path.iterdir()) == []
    assert "StoredReports(" in out.stdout and "HeavyHitterResult(protocol='PEM'" in out.stdout


# =========================================================== the deployment's aggregator writes the store
def test_the_aggregator_appends_to_a_store_and_resumes(data32, tmp_path):
    """Wire reports checked by the server go to the store batch by batch; a restarted server resumes there."""
    from ldp.client import encode_protocol_reports

    P = MAKERS["PEM-FLH"]()
    plan = P.plan(data32.n, rng=1)
    sim = P.privatize(data32.values, plan=plan, rng=2)
    wire = encode_protocol_reports(sim)  # what the devices send, here from a simulation
    server = P.aggregator(plan, store=tmp_path / "s")
    assert server.add_many(wire[:12_000]) == [] and server.add_many(wire[12_000:20_000]) == []
    assert server.batches() == [] and server.stored().batches == (0, 1)  # on disk, not in memory
    restarted = P.aggregator(plan, store=tmp_path / "s")  # a new server process on the same folder
    assert restarted.n_reports == 20_000 and restarted.reported([0, 19_999]).all()
    with pytest.raises(ValueError, match=r"already reported"):
        restarted.add_many(wire[19_000:21_000])  # user 19,000 is stored already: the batch is refused whole
    assert restarted.add_many(wire[20_000:]) == [] and restarted.n_reports == data32.n
    same_result(P.aggregate(sim, rng=3), restarted.result(rng=3))
    assert restarted.reports() == sim
    with pytest.raises(ValueError, match=r"another plan"):
        P.aggregator(P.plan(data32.n, rng=9), store=tmp_path / "s")


def test_readme_scale_snippet_says_it_simulates_devices():
    """A seeded privatize is a simulation: the README's store example says so where it privatizes."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = text.split("## At scale", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    line = next(x for x in code.splitlines() if "privatize(" in x)
    assert "rng=" in line and "simulat" in line.lower(), line
    assert "ldp.client" in section  # and names the devices' path
