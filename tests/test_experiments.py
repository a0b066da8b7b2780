"""Tests of ldp.experiments: grid runner, seeds, results cache, dask scale-out, summaries."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import cloudpickle
import joblib
import numpy as np
import pandas as pd
import pytest

import ldp
from ldp import experiments as ex
from ldp.datasets import Dataset, zipf
from ldp.experiments import registry as ex_registry
from ldp.experiments import run as ex_run
from ldp.experiments import worker as ex_worker

# fakes below travel to loky/dask workers by value (the tests folder is not importable there)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

TIMING = ["wall_time"]
POINT_FILES = "[0-9a-f]*.parquet"  # one per point; the whole-grid frames are grid-<key>.parquet


# ---------------------------------------------------------------------------
# fakes: a cheap "protocol" and counted dataset loaders
# ---------------------------------------------------------------------------
@dataclass
class FakeResult:
    heavy_hitters: np.ndarray
    estimates: np.ndarray


class FakeTopK:
    """Noisy top-k: true counts plus Gaussian noise of sd ``noise * sqrt(n) / epsilon``."""

    calls = 0

    def __init__(self, epsilon, k, m, *, noise=1.0, threshold=None, tag="a"):
        self.epsilon, self.k, self.m, self.noise, self.threshold = epsilon, k, m, noise, threshold

    def run(self, values, *, rng=None, engine="protocol"):
        FakeTopK.calls += 1
        values = getattr(values, "values", values)  # a Dataset or a value array
        rng = np.random.default_rng(rng)
        u, c = np.unique(values, return_counts=True)
        est = c + rng.normal(0.0, self.noise * np.sqrt(len(values)) / self.epsilon, size=len(c))
        order = np.argsort(-est, kind="stable")
        if self.threshold is None:
            order = order[: self.k]
        else:
            order = order[est[order] >= self.threshold * len(values)]
        return FakeResult(u[order], est[order])


class FakeOther(FakeTopK):
    """A second protocol that does not accept ``noise``."""

    def __init__(self, epsilon, k, m, *, final_fraction=0.5):
        super().__init__(epsilon, k, m, noise=2 * final_fraction)


LOADS = {"n": 0}


def counted_zipf(n=3000, m=16, s=1.5, rng=None):
    LOADS["n"] += 1
    return zipf(n, s=s, m=m, n_distinct=200, rng=rng)


def fixed_data(n=2000, m=12):
    """A deterministic loader (no rng parameter)."""
    ranks = np.arange(1, 101, dtype=float) ** -1.2
    counts = np.floor(n * ranks / ranks.sum()).astype(np.int64)
    return Dataset.from_counts(np.arange(100, dtype=np.uint64) * 7 + 3, counts, m, "fixed", shuffle=False)


@pytest.fixture(autouse=True)
def _registry():
    ex.register_protocol("FakeTopK", FakeTopK, replace=True)
    ex.register_protocol("FakeOther", FakeOther, replace=True)
    ex.register_dataset("czipf", counted_zipf, replace=True)
    ex.register_dataset("fixed", fixed_data, replace=True)
    ex_worker.load.cache_clear()
    FakeTopK.calls = 0
    LOADS["n"] = 0
    yield


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    return ex.default_cache_dir()


def small_grid(**kw):
    args = dict(protocols=["FakeTopK", ("FakeTopK", {"noise": 3.0}, "noisy"), ("FakeOther", {"final_fraction": 0.2})],
                datasets=[("czipf", {"n": 3000}), "fixed"],
                params={"epsilon": [0.5, 2.0], "k": [4, 8]}, repetitions=3, root_seed=7)
    args.update(kw)
    return ex.Grid(**args)


def without(df, cols=TIMING):
    return df.drop(columns=cols).reset_index(drop=True)


# ---------------------------------------------------------------------------
# the frame
# ---------------------------------------------------------------------------
def test_frame_layout_and_canonical_order(cache_dir):
    g = small_grid()
    df = ex.run_grid(g, n_jobs=1, cache=False)
    assert len(df) == g.n_runs == 3 * 2 * 2 * 2 * 3
    for c in ["protocol", "dataset", "engine", "epsilon", "k", "noise", "final_fraction", "n", "m", "rep",
              "f1", "ncr", "var", "n_found", "n_true", "f1_topk", "wall_time", "seed_key", "data_seed_key", "run_spec",
              "dataset_n"]:
        assert c in df.columns, c
    # canonical order: dataset, protocol, epsilon, k, repetition
    assert list(df["dataset"].unique()) == ["czipf(n=3000)", "fixed"]
    assert list(df["protocol"].unique()) == ["FakeTopK", "noisy", "FakeOther(final_fraction=0.2)"]
    first = df.iloc[:12]
    assert list(first["epsilon"]) == [0.5] * 6 + [2.0] * 6
    assert list(first["k"]) == [4, 4, 4, 8, 8, 8] * 2
    assert list(first["rep"]) == [0, 1, 2] * 4
    # parameters a protocol does not take are NaN; the fixed ones are there
    assert df.loc[df.protocol == "noisy", "noise"].eq(3.0).all()
    assert df.loc[df.protocol == "FakeOther(final_fraction=0.2)", "noise"].isna().all()
    assert df["f1"].between(0, 1).all() and df["ncr"].between(0, 1).all()
    assert (df["n_found"] == df["k"]).all() and (df["n_true"] == df["k"]).all()
    assert (df.loc[df.dataset == "fixed", "n"] < 2000).all() and (df["m"].isin([16, 12])).all()
    # every run has its own seed; a dataset's data seed is shared by all its runs (generated once)
    assert df["seed_key"].is_unique
    z = df[df.dataset == "czipf(n=3000)"]
    assert z["data_seed_key"].nunique() == 1
    assert df.loc[df.dataset == "fixed", "data_seed_key"].isna().all()


def test_metrics_are_the_papers(cache_dir):
    """f1/ncr/var of each row equal ldp.metrics on that row's own rerun output."""
    from ldp import metrics

    g = ex.Grid(["FakeTopK"], ["fixed"], {"epsilon": 1.0, "k": 8}, repetitions=2, root_seed=3)
    df = ex.run_grid(g, n_jobs=1, cache=False)
    ds = fixed_data()
    for _, row in df.iterrows():
        spec = json.loads(row["run_spec"])
        rng = np.random.default_rng(np.random.SeedSequence(spec["seed"][0], spawn_key=tuple(spec["seed"][1])))
        res = FakeTopK(1.0, 8, 12).run(ds.values, rng=rng)
        true = ds.top(8)
        assert row["f1"] == metrics.f1(true, res.heavy_hitters)
        assert row["ncr"] == metrics.ncr(true, res.heavy_hitters)
        hit = np.isin(res.heavy_hitters, true)
        assert row["var"] == pytest.approx(np.mean((ds.count_of(res.heavy_hitters[hit]) - res.estimates[hit]) ** 2),
                                           rel=1e-12)


def test_threshold_version_truth(cache_dir):
    g = ex.Grid(["FakeTopK"], ["fixed"], {"epsilon": 4.0, "k": 8, "threshold": [0.05, 0.02]}, repetitions=2)
    df = ex.run_grid(g, n_jobs=1, cache=False)
    ds = fixed_data()
    for theta in (0.05, 0.02):
        sub = df[df.threshold == theta]
        assert (sub["n_true"] == np.count_nonzero(ds.ranked_counts >= theta * ds.n)).all()


# ---------------------------------------------------------------------------
# determinism: workers, chunking, single rows
# ---------------------------------------------------------------------------
def mixed_grid(**kw):
    """The real protocols next to a fake one, on a real random dataset and a deterministic one."""
    args = dict(protocols=["PEM", ("MCM", {"final_fraction": 0.1}), "FakeTopK"],
                datasets=[("zipf", {"n": 3000, "m": 16}, "zipf"), "fixed"],
                params={"epsilon": [2.0, 4.0], "k": [4]}, repetitions=2, root_seed=11)
    args.update(kw)
    return ex.Grid(**args)


@pytest.mark.slow
def test_same_rows_for_one_and_two_workers(cache_dir):
    g = mixed_grid()
    a = ex.run_grid(g, n_jobs=1, cache=False, progress=False)
    b = ex.run_grid(g, n_jobs=2, cache=False, progress=False)  # loky worker processes
    pd.testing.assert_frame_equal(without(a), without(b))
    assert a["f1"].between(0, 1).all() and (a["n_found"] <= 4).all()


def test_rows_do_not_depend_on_chunking(cache_dir):
    g = small_grid()
    a = ex.run_grid(g, n_jobs=1, cache=False)
    for size in (1, 5):
        pd.testing.assert_frame_equal(without(a), without(ex.run_grid(g, n_jobs=1, cache=False, chunk_size=size)))


def test_callers_parallel_config_is_used(cache_dir):
    g = small_grid()
    a = ex.run_grid(g, n_jobs=1, cache=False)
    with joblib.parallel_config(backend="threading", n_jobs=2):
        assert ex_run.resolve_n_jobs() == 2
        b = ex.run_grid(g, cache=False)
    pd.testing.assert_frame_equal(without(a), without(b))
    assert ex_run.resolve_n_jobs() == -1  # no config: all local cores


def test_rows_do_not_depend_on_listing_order_or_grid_extent(cache_dir):
    g = small_grid()
    a = ex.run_grid(g, n_jobs=1, cache=False)
    g2 = small_grid(protocols=[("FakeOther", {"final_fraction": 0.2}), "FakeTopK"], datasets=["fixed"],
                    params={"k": [8], "epsilon": [2, 0.5, 1.0]}, repetitions=5)
    b = ex.run_grid(g2, n_jobs=1, cache=False)
    keys = ["protocol", "dataset", "epsilon", "k", "rep"]
    m = a.merge(b, on=keys, suffixes=("", "_b"))
    assert len(m) == 2 * 2 * 3  # 2 protocols x 2 epsilons x 3 repetitions in common
    for c in ["f1", "ncr", "var", "n_found", "seed_key", "data_seed_key"]:
        x, y = m[c].astype(object), m[f"{c}_b"].astype(object)
        assert ((x == y) | (x.isna() & y.isna())).all(), c


def test_each_row_reproduces_alone(cache_dir):
    g = small_grid(repetitions=2)
    df = ex.run_grid(g, n_jobs=1, cache=False)
    ex_worker.load.cache_clear()
    for i in [0, 5, 17, len(df) - 1]:
        row = df.iloc[i]
        again = ex.rerun_row(row)
        for c in df.columns:
            if c not in TIMING:
                assert again[c] == row[c] or (pd.isna(again[c]) and pd.isna(row[c])), (i, c)
    # the dataset of a row is regenerated exactly
    row = df[df.dataset == "czipf(n=3000)"].iloc[0]
    ds = ex.row_dataset(row)
    spec = json.loads(row["run_spec"])
    ref = zipf(3000, m=16, n_distinct=200,
               rng=np.random.SeedSequence(spec["data_seed"][0], spawn_key=tuple(spec["data_seed"][1])))
    np.testing.assert_array_equal(ds.values, ref.values)


def test_real_protocols_reproduce_and_threshold_truth(cache_dir):
    g = ex.Grid(["PEM", ("SPM", {"final_fraction": 0.2})], [("exponential", {"n": 20000, "m": 24}, "exp")],
                {"epsilon": 4.0, "k": 8, "threshold": [None, 0.04]}, repetitions=2, engine=["counts", "protocol"],
                rank_depth=8)
    df = ex.run_grid(g, n_jobs=1, cache=False)
    assert len(df) == 2 * 2 * 2 * 2
    ds = ex.row_dataset(df.iloc[0])
    top = df[df.threshold.isna()]
    thr = df[df.threshold == 0.04]
    assert (top["n_true"] == 8).all()
    assert (thr["n_true"] == len(ds.above(0.04))).all() and len(ds.above(0.04)) < 8
    assert thr["threshold"].dtype == float  # None and numbers make a numeric column with NaN
    # f1_topk: the k best estimates released; in top-k mode that is the release itself
    np.testing.assert_array_equal(top["f1_topk"], top["f1"])
    for _, r in thr.iterrows():  # a top-k release of a threshold run: the k best estimates it released
        spec = json.loads(r["run_spec"])
        proto = ex_registry.resolve_protocol(spec["protocol"])[1](m=ds.m, **spec["kwargs"])
        res = proto.run(ds, rng=np.random.default_rng(np.random.SeedSequence(spec["seed"][0],
                                                                             spawn_key=tuple(spec["seed"][1]))),
                        engine=spec["engine"])
        best = np.asarray(res.heavy_hitters)[np.argsort(-np.asarray(res.estimates), kind="stable")][:8]
        assert r["f1_topk"] == ldp.metrics.f1(ds.above(0.04), best)
    assert (thr["n_found"] > 8).any() or (thr["f1_topk"] == thr["f1"]).all()
    ex_worker.load.cache_clear()
    for i in range(0, len(df), 3):
        row, again = df.iloc[i], ex.rerun_row(df.iloc[i])
        same = [c for c in df.columns if c not in TIMING
                and (again[c] == row[c] or (pd.isna(again[c]) and pd.isna(row[c])))]
        assert len(same) == len(df.columns) - 1, (i, set(df.columns) - set(same))
    ranks = ex.identification_rates(df, by=["protocol", "engine", "threshold"])
    assert len(ranks) == 2 * 2 * 2 * 8


def test_regenerate_data_per_repetition(cache_dir):
    g = ex.Grid(["FakeTopK", ("FakeTopK", {"noise": 2.0})], [("czipf", {"n": 500})],
                {"epsilon": 1.0, "k": 4}, repetitions=3, regenerate_data=True)
    df = ex.run_grid(g, n_jobs=1, cache=False)
    assert df["data_seed_key"].nunique() == 3
    # both protocols see the same data in a repetition (common random numbers)
    assert (df.groupby("rep")["data_seed_key"].nunique() == 1).all()
    assert LOADS["n"] == 3  # one load per dataset x repetition, not per run


def test_datasets_loaded_once_per_chunk(cache_dir):
    g = small_grid()
    ex.run_grid(g, n_jobs=1, cache=False)
    assert LOADS["n"] == 1  # 36 runs on czipf, one generation


# ---------------------------------------------------------------------------
# the cache
# ---------------------------------------------------------------------------
def test_cache_hit_returns_identical_frame_without_recomputing(cache_dir):
    g = small_grid()
    a = ex.run_grid(g, n_jobs=1)
    n_calls = FakeTopK.calls
    assert n_calls == g.n_runs
    files = sorted(cache_dir.glob(POINT_FILES))
    assert len(files) == g.n_points
    b = ex.run_grid(g, n_jobs=1)
    assert FakeTopK.calls == n_calls  # nothing recomputed
    pd.testing.assert_frame_equal(a, b)  # wall times too: they come from the cache
    c = ex.run_grid(g, n_jobs=1, cache=False)
    pd.testing.assert_frame_equal(without(a), without(c))  # cached == fresh
    ex.run_grid(g, n_jobs=1, cache="refresh")
    assert FakeTopK.calls == 3 * n_calls


def test_cache_reuses_points_and_repetitions(cache_dir):
    g = small_grid(repetitions=2)
    a = ex.run_grid(g, n_jobs=1)
    FakeTopK.calls = 0
    more = small_grid(repetitions=3, params={"epsilon": [0.5, 2.0, 8.0], "k": [4, 8]})
    b = ex.run_grid(more, n_jobs=1)
    # new: the third repetition of the 24 old points, and 12 new points x 3
    assert FakeTopK.calls == 24 + 12 * 3
    old = b[b.rep < 2].merge(a, on=["protocol", "dataset", "epsilon", "k", "rep"], suffixes=("", "_a"))
    assert len(old) == len(a)
    assert (old["f1"] == old["f1_a"]).all() and (old["wall_time"] == old["wall_time_a"]).all()
    # new labels for the same points: served from the point files, relabelled
    FakeTopK.calls = 0
    relabelled = ex.run_grid(small_grid(repetitions=2,
                                        protocols=[("FakeTopK", {}, "plain"), ("FakeTopK", {"noise": 3.0}),
                                                   ("FakeOther", {"final_fraction": 0.2}, "other")]),
                             n_jobs=1)
    assert FakeTopK.calls == 0
    assert list(relabelled["protocol"].unique()) == ["plain", "FakeTopK(noise=3.0)", "other"]
    pd.testing.assert_frame_equal(without(relabelled, TIMING + ["protocol"]), without(a, TIMING + ["protocol"]))
    # asking for fewer repetitions is served from the cache
    FakeTopK.calls = 0
    c = ex.run_grid(small_grid(repetitions=1), n_jobs=1)
    assert FakeTopK.calls == 0 and len(c) == 24 and (c["rep"] == 0).all()


class LoggedTopK(FakeTopK):
    """FakeTopK that appends one line per run to the file ``LoggedTopK.log`` (runs in any process) and
    takes a little time, so that two processes asking for the same grid overlap."""

    log = None

    def run(self, values, *, rng=None, engine="protocol"):
        with open(LoggedTopK.log, "a") as f:
            f.write(f"{self.epsilon} {self.k}\n")
        import time
        time.sleep(0.05)
        return super().run(values, rng=rng, engine=engine)


def _grid_in_process(cache: str, out: str, barrier) -> None:
    barrier.wait()  # both processes start together
    df = ex.run_grid(small_grid(protocols=["LoggedTopK"], datasets=["fixed"], repetitions=4), n_jobs=1,
                     cache_dir=cache)
    df.to_parquet(out)


def test_two_processes_asking_for_one_grid_compute_it_once(tmp_path):
    """Two chapters of one build running side by side ask for the same grid: each run is computed once (the
    second process waits for the first's points and reads them), and both get the same frame."""
    import multiprocessing

    ex.register_protocol("LoggedTopK", LoggedTopK, replace=True)
    LoggedTopK.log = str(tmp_path / "runs.log")
    ctx = multiprocessing.get_context("fork")  # the children inherit the registered fakes
    barrier = ctx.Barrier(2)
    outs = [str(tmp_path / f"out{i}.parquet") for i in range(2)]
    procs = [ctx.Process(target=_grid_in_process, args=(str(tmp_path / "cache"), out, barrier)) for out in outs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]
    grid = small_grid(protocols=["LoggedTopK"], datasets=["fixed"], repetitions=4)
    runs = Path(LoggedTopK.log).read_text().splitlines()
    assert len(runs) == grid.n_runs  # not twice
    a, b = (pd.read_parquet(o) for o in outs)
    pd.testing.assert_frame_equal(a, b)
    # and a third process that finds every point written computes nothing
    third = ctx.Process(target=_grid_in_process, args=(str(tmp_path / "cache"), outs[0], ctx.Barrier(1)))
    third.start()
    third.join(300)
    assert third.exitcode == 0 and len(Path(LoggedTopK.log).read_text().splitlines()) == grid.n_runs


def _overlapping_grid_in_process(cache: str, out: str, barrier, extra: bool) -> None:
    barrier.wait()
    protocols = ["LoggedTopK"] + ([("LoggedTopK", {"noise": 3.0}, "noisy")] if extra else [])
    df = ex.run_grid(small_grid(protocols=protocols, datasets=["fixed"], repetitions=3), n_jobs=1, cache_dir=cache)
    df.to_parquet(out)


def test_a_chapter_whose_grid_holds_another_chapters_computes_the_shared_points_once(tmp_path):
    """Chapter 08 asks for chapter 06's protocols beside its own, at the same time: the shared points are
    computed once, by one of the two, and both frames hold the same rows for them."""
    import multiprocessing

    ex.register_protocol("LoggedTopK", LoggedTopK, replace=True)
    LoggedTopK.log = str(tmp_path / "runs.log")
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    outs = [str(tmp_path / f"out{i}.parquet") for i in range(2)]
    procs = [ctx.Process(target=_overlapping_grid_in_process, args=(str(tmp_path / "cache"), out, barrier, extra))
             for out, extra in zip(outs, (False, True))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]
    shared = small_grid(protocols=["LoggedTopK"], datasets=["fixed"], repetitions=3)
    assert len(Path(LoggedTopK.log).read_text().splitlines()) == 2 * shared.n_runs  # shared once, noisy once
    a, b = (pd.read_parquet(o) for o in outs)
    pd.testing.assert_frame_equal(a, b.loc[b["protocol"] == "LoggedTopK", list(a.columns)].reset_index(drop=True))


def test_a_point_held_by_a_dead_process_is_computed(tmp_path, monkeypatch):
    """A lock is released by the system when its process dies: the point is computed, not waited for forever."""
    import multiprocessing

    from ldp.experiments.cache import PointLocks

    ex.register_protocol("LoggedTopK", LoggedTopK, replace=True)
    LoggedTopK.log = str(tmp_path / "runs.log")
    grid = small_grid(protocols=["LoggedTopK"], datasets=["fixed"], repetitions=2)
    locks = tmp_path / "cache" / "locks"
    ready = multiprocessing.get_context("fork").Event()

    def hold_and_die():
        held = PointLocks(locks)
        assert all(held.try_acquire(p.key) for p in grid.points)
        ready.set()
        import os
        import signal
        os.kill(os.getpid(), signal.SIGKILL)  # dies holding every lock, without releasing

    proc = multiprocessing.get_context("fork").Process(target=hold_and_die)
    proc.start()
    ready.wait(60)
    proc.join(60)
    df = ex.run_grid(grid, n_jobs=1, cache_dir=tmp_path / "cache")
    assert len(df) == grid.n_runs and len(Path(LoggedTopK.log).read_text().splitlines()) == grid.n_runs


def test_point_locks_exclude_other_processes(tmp_path):
    import multiprocessing

    from ldp.experiments.cache import PointLocks

    mine = PointLocks(tmp_path)
    assert mine.try_acquire("k1") and mine.try_acquire("k1")  # held: taking it again is a no-op
    q = multiprocessing.get_context("fork").Queue()
    probe = multiprocessing.get_context("fork").Process(target=lambda: q.put(PointLocks(tmp_path).try_acquire("k1")))
    probe.start()
    probe.join(60)
    assert q.get(timeout=60) is False  # another process cannot take it
    mine.release("k1")
    probe = multiprocessing.get_context("fork").Process(target=lambda: q.put(PointLocks(tmp_path).try_acquire("k1")))
    probe.start()
    probe.join(60)
    assert q.get(timeout=60) is True


def test_interrupted_write_leaves_no_cache_file(cache_dir, monkeypatch):
    def broken(df, path, *args, **kwargs):
        path.write_bytes(b"PAR1 half a file")
        raise KeyboardInterrupt  # e.g. Ctrl-C while writing

    real_write = pd.DataFrame.to_parquet
    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    g = small_grid(repetitions=1)
    with pytest.raises(KeyboardInterrupt):
        ex.run_grid(g, n_jobs=1)
    assert [p for p in cache_dir.iterdir() if p.name != "locks"] == []  # no partial file, no temporary file
    monkeypatch.setattr(pd.DataFrame, "to_parquet", real_write)
    df = ex.run_grid(g, n_jobs=1)
    assert len(list(cache_dir.glob(POINT_FILES))) == g.n_points and len(df) == g.n_runs
    # an interrupted overwrite (cache="refresh") keeps the old file intact
    before = {f.name: f.read_bytes() for f in cache_dir.iterdir() if f.is_file()}
    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(KeyboardInterrupt):
        ex.run_grid(g, n_jobs=1, cache="refresh")
    assert {f.name: f.read_bytes() for f in cache_dir.iterdir() if f.is_file()} == before


def test_interrupt_keeps_finished_points(cache_dir, monkeypatch):
    g = small_grid(repetitions=1)
    real = ex_worker.execute

    def stop_late(run, loaded):
        if run.point == 5:
            raise KeyboardInterrupt
        return real(run, loaded)

    monkeypatch.setattr(ex_worker, "execute", stop_late)
    with pytest.raises(KeyboardInterrupt):
        ex.run_grid(g, n_jobs=1, chunk_size=1)
    assert len(list(cache_dir.glob(POINT_FILES))) == 5
    assert not list(cache_dir.glob("*.tmp"))
    monkeypatch.setattr(ex_worker, "execute", real)
    FakeTopK.calls = 0
    ex.run_grid(g, n_jobs=1)
    assert FakeTopK.calls == g.n_points - 5


def test_damaged_cache_files(cache_dir):
    g = small_grid(repetitions=1)
    a = ex.run_grid(g, n_jobs=1)
    (grid_file,) = cache_dir.glob("grid-*.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(grid_file), a)
    # a damaged whole-grid file: rebuilt from the point files, nothing recomputed
    grid_file.write_bytes(b"not parquet")
    FakeTopK.calls = 0
    with pytest.warns(RuntimeWarning, match="unreadable cache file"):
        b = ex.run_grid(g, n_jobs=1)
    assert FakeTopK.calls == 0
    pd.testing.assert_frame_equal(a, b)
    # a damaged point file: that point alone is recomputed
    grid_file.unlink()
    (cache_dir / f"{g.point_keys()[0]}.parquet").write_bytes(b"PAR1")
    with pytest.warns(RuntimeWarning, match="unreadable cache file"):
        c = ex.run_grid(g, n_jobs=1)
    assert FakeTopK.calls == 1
    pd.testing.assert_frame_equal(without(a), without(c))


def test_cache_keys(monkeypatch):
    g = small_grid()
    keys = g.point_keys()
    assert len(set(keys)) == g.n_points
    assert small_grid().point_keys() == keys and small_grid().key == g.key
    # integral floats and ints are the same level; listing order does not matter per point
    same = small_grid(params={"k": [8, 4], "epsilon": [2, 0.5]})
    assert set(same.point_keys()) == set(keys)
    # parameters, seed, engine, dataset kwargs, version all change the keys
    for other in [small_grid(params={"epsilon": [0.5, 2.5], "k": [4, 8]}), small_grid(root_seed=8),
                  small_grid(engine="protocol"), small_grid(datasets=[("czipf", {"n": 3001}), "fixed"]),
                  small_grid(rank_depth=4), small_grid(regenerate_data=True)]:
        assert len(set(other.point_keys()) & set(keys)) < len(keys)
    assert set(small_grid(params={"epsilon": [0.5, 2.5], "k": [4, 8]}).point_keys()) & set(keys)
    assert small_grid(repetitions=4).point_keys() == keys and small_grid(repetitions=4).key != g.key
    assert set(g.point_keys(version="99.0")).isdisjoint(keys)
    monkeypatch.setattr(ldp, "__version__", "0.0.0-test", raising=False)
    assert set(small_grid().point_keys()).isdisjoint(keys)
    monkeypatch.undo()
    assert small_grid().point_keys() == keys
    # so do the numeric libraries' versions (a sampling algorithm may change between numpy versions)
    monkeypatch.setattr(np, "__version__", "0.0.0-test")
    assert set(small_grid().point_keys()).isdisjoint(keys)


def test_default_cache_dir(monkeypatch, tmp_path):
    from pathlib import Path

    monkeypatch.delenv("LDP_CACHE_DIR", raising=False)
    monkeypatch.delenv("LDP_ROOT", raising=False)
    assert ex.default_cache_dir() == Path(ex.__file__).resolve().parents[2] / ".cache" / "experiments"
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path))
    assert ex.default_cache_dir() == tmp_path.resolve() / "experiments"
    g = small_grid(repetitions=1)
    ex.run_grid(g, n_jobs=1)
    assert len(list((tmp_path / "experiments").glob(POINT_FILES))) == g.n_points
    ex.run_grid(g, n_jobs=1, cache_dir=tmp_path / "arg")  # the argument wins over the variable
    assert len(list((tmp_path / "arg").glob(POINT_FILES))) == g.n_points


# ---------------------------------------------------------------------------
# dask
# ---------------------------------------------------------------------------
@pytest.mark.slow
def test_dask_cluster_gives_the_same_rows(cache_dir, monkeypatch):
    distributed = pytest.importorskip("dask.distributed", reason="dask.distributed is not installed "
                                                                "(requirements-cluster.txt)")
    g = mixed_grid(protocols=["PEM", "FakeTopK"])  # a real protocol (pickled by reference) and a fake
    local = ex.run_grid(g, n_jobs=1, cache=False)
    # two single-threaded worker processes on loopback, as a remote cluster would run
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.scheduler_address)
        remote = ex.run_grid(g, progress=False)
        with distributed.Client(cluster.scheduler_address) as client:  # the runs happened on the workers
            assert sum(client.run(lambda: ex_worker.load.cache_info().currsize).values()) >= 2
    pd.testing.assert_frame_equal(without(local), without(remote))
    # what the cluster cached is served locally without it
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS")
    pd.testing.assert_frame_equal(remote, ex.run_grid(g, n_jobs=1))


# ---------------------------------------------------------------------------
# bad specs fail before any work, naming the problem
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, err, match", [
    (dict(protocols=["NoSuch"]), ValueError, "unknown protocol 'NoSuch'"),
    (dict(datasets=["nowhere"]), ValueError, "unknown dataset 'nowhere'"),
    (dict(params={"epsilon": 1.0, "k": 4, "eta": [2]}), ValueError, "'eta' is not accepted by protocol"),
    (dict(params={"epsilon": 1.0}), ValueError, "needs parameter 'k'"),
    (dict(params={"epsilon": 1.0, "k": 4, "m": 16}), ValueError, "'m' is not a grid axis"),
    (dict(params={"epsilon": [1.0, -1.0], "k": 4}), ValueError, "epsilon must be"),
    (dict(params={"epsilon": 1.0, "k": [0]}), ValueError, "k must be"),
    (dict(params={"epsilon": 1.0, "k": [4, 4]}), ValueError, "lists a level twice"),
    (dict(params={"epsilon": 1.0, "k": 4, "noise": object()}), TypeError, "parameter 'noise'"),
    (dict(protocols=[("FakeTopK", {"noise": 1}), ("FakeTopK", {"noise": 2}, "FakeTopK(noise=1)")]), ValueError,
     "used twice"),
    (dict(protocols=["FakeTopK", ("FakeTopK", {}, "again")]), ValueError, "same point twice"),
    (dict(protocols=[("FakeTopK", {"epsilon": 1})]), ValueError, "also a grid axis"),
    (dict(datasets=[("czipf", {"rng": 3})]), ValueError, "'rng' must not be given"),
    (dict(datasets=[("czipf", {"size": 3})]), ValueError, "'size' is not accepted by dataset loader 'czipf'"),
    (dict(engine="fast"), ValueError, "engine must be one of"),
    (dict(repetitions=0), ValueError, "repetitions must be"),
    (dict(root_seed=-1), ValueError, "root_seed must be"),
    (dict(protocols=[]), ValueError, "non-empty"),
])
def test_bad_grid_specs(kwargs, err, match):
    base = dict(protocols=["FakeTopK"], datasets=["fixed"], params={"epsilon": 1.0, "k": 4})
    base.update(kwargs)
    with pytest.raises(err, match=match):
        ex.Grid(**base)
    assert LOADS["n"] == 0 and FakeTopK.calls == 0


def test_bad_run_arguments(cache_dir):
    g = small_grid(repetitions=1)
    with pytest.raises(ValueError, match="cache must be"):
        ex.run_grid(g, cache="yes")
    with pytest.raises(ValueError, match="n_jobs"):
        ex.run_grid(g, n_jobs=0)
    with pytest.raises(TypeError, match="grid must be a Grid"):
        ex.run_grid({"protocols": ["PEM"]})


def test_failing_run_names_its_point(cache_dir):
    g = ex.Grid(["FakeOther"], ["fixed"], {"epsilon": 1.0, "k": 4, "final_fraction": "x"}, repetitions=1)
    with pytest.raises(TypeError) as info:
        ex.run_grid(g, n_jobs=1)
    assert "FakeOther on fixed" in "".join(getattr(info.value, "__notes__", []))


# ---------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------
def test_summarize(cache_dir):
    g = small_grid(repetitions=4)
    df = ex.run_grid(g, n_jobs=1, cache=False)
    s = ex.summarize(df, by=["protocol", "dataset", "epsilon", "k"], metrics=["f1", "var"])
    assert len(s) == g.n_points
    row = s.iloc[5]
    sel = df[(df.protocol == row.protocol) & (df.dataset == row.dataset) & (df.epsilon == row.epsilon)
             & (df.k == row.k)]["f1"].to_numpy()
    assert row["f1_mean"] == pytest.approx(sel.mean(), rel=1e-12)
    assert row["f1_std"] == pytest.approx(sel.std(ddof=1), rel=1e-12, abs=1e-15)
    assert row["f1_count"] == 4
    assert row["f1_sem"] == pytest.approx(sel.std(ddof=1) / 2, rel=1e-12, abs=1e-15)
    # default grouping: one group per point
    assert len(ex.summarize(df)) == g.n_points
    with pytest.raises(ValueError, match="column 'eps'"):
        ex.summarize(df, by=["eps"])


def test_identification_rates(cache_dir):
    g = ex.Grid(["FakeTopK"], ["fixed"], {"epsilon": [0.2, 50.0], "k": 4}, repetitions=5, rank_depth=6)
    df = ex.run_grid(g, n_jobs=1, cache=False)
    r = ex.identification_rates(df, by=["epsilon"])
    assert len(r) == 2 * 6 and set(r["runs"]) == {5}
    hi = r[r.epsilon == 50.0].set_index("rank")["rate"]
    # with negligible noise exactly the true top 4 are found
    assert list(hi) == [1, 1, 1, 1, 0, 0]
    per_run = [json.loads(t) for t in df[df.epsilon == 0.2]["found_ranks"]]
    lo = r[r.epsilon == 0.2].set_index("rank")["rate"]
    assert lo[0] == np.mean([0 in f for f in per_run])
    full = ex.identification_rates(df)  # default grouping: every parameter column (NaN ones too)
    assert len(full) == 2 * 6 and list(full.columns[-4:]) == ["rank", "rate", "runs", "sem"]
    np.testing.assert_array_equal(full["rate"], r["rate"])
    with pytest.raises(ValueError, match="rank_depth"):
        ex.identification_rates(ex.run_grid(small_grid(repetitions=1), n_jobs=1, cache=False))
