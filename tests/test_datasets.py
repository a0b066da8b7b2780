"""Tests of ldp.datasets: the Dataset tally, the generators, the URL stand-in, AOL loading."""
from __future__ import annotations

import collections
import gzip
import hashlib
import importlib
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ldp
from ldp import datasets as D
from ldp.datasets.__main__ import main as datasets_cli
from ldp.values import decode, from_ints, to_ints, value_keys

AOL = importlib.import_module("ldp.datasets.aol")  # the module (ldp.datasets.aol is the loader function)

REPO = Path(D.__file__).resolve().parents[2]  # ldp/datasets/__init__.py -> the project
SHIPPED = REPO / "data" / D.AOL_FILENAME  # committed with the project


# --------------------------------------------------------------------------------------
# Dataset tally and ranking
# --------------------------------------------------------------------------------------

def test_tally_and_ranking_small_example():
    ds = D.Dataset.from_values(np.array([5, 3, 5, 7, 3, 5, 9], dtype=np.uint64), m=4, name="toy")
    assert (ds.n, ds.m, ds.n_distinct, len(ds)) == (7, 4, 4, 7)
    np.testing.assert_array_equal(ds.distinct, [3, 5, 7, 9])
    np.testing.assert_array_equal(ds.distinct_counts, [2, 3, 1, 1])
    np.testing.assert_array_equal(ds.counts, ds.distinct_counts)
    np.testing.assert_array_equal(ds.distinct[ds.user_index], ds.values)
    # ties (7 and 9, one user each) broken by value ascending
    np.testing.assert_array_equal(ds.ranked_values, [5, 3, 7, 9])
    np.testing.assert_array_equal(ds.ranked_counts, [3, 2, 1, 1])
    np.testing.assert_array_equal(ds.top(3), [5, 3, 7])
    np.testing.assert_array_equal(ds.top_counts(2), [3, 2])
    assert not ds.top_is_tied(2) and ds.top_is_tied(3)
    assert ds.frequencies.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(ds.top_frequencies(1), [3 / 7])
    np.testing.assert_array_equal(ds.count_of(np.array([5, 4, 9, 0, 15], dtype=np.uint64)), [3, 0, 1, 0, 0])
    assert ds.count_of(5) == 3 and ds.count_of(4) == 0
    assert ds.frequency_of(3) == pytest.approx(2 / 7)
    np.testing.assert_array_equal(ds.index_of([9, 8]), [3, -1])
    np.testing.assert_array_equal(ds.above(2 / 7), [5, 3])
    assert ds.top(0).shape == (0,)
    with pytest.raises(ValueError, match="k must be"):
        ds.top(5)
    with pytest.raises(ValueError, match="values must hold values"):
        ds.count_of([16])


def test_values_are_read_only_and_input_untouched():
    raw = np.array([1, 2, 2], dtype=np.uint64)
    ds = D.Dataset.from_values(raw, m=2)
    assert raw.flags.writeable
    assert not ds.values.flags.writeable
    assert not ds.distinct.flags.writeable and not ds.user_index.flags.writeable
    with pytest.raises(ValueError, match="m must be"):
        D.Dataset.from_values(raw, m=0)


@pytest.mark.parametrize("m", [65, 130, 160])
def test_tally_wide_values_matches_python_ints(m):
    rng = np.random.default_rng(7)
    pool = [int(x) for x in rng.integers(0, 2 ** 62, size=40)]
    pool = [(p << (m - 62)) | int(rng.integers(0, 2 ** 20)) for p in pool]  # spread over the words
    pool += [0, 1, (1 << m) - 1, 1 << 64]  # edge values: zero, one, all ones, a word boundary
    ints = [pool[i] for i in rng.integers(0, len(pool), size=2000)]
    ds = D.Dataset.from_values(from_ints(ints, m), m)
    counter = collections.Counter(ints)
    assert to_ints(ds.distinct) == sorted(counter)
    np.testing.assert_array_equal(ds.distinct_counts, [counter[v] for v in sorted(counter)])
    expected_rank = sorted(counter, key=lambda v: (-counter[v], v))
    assert to_ints(ds.ranked_values) == expected_rank
    np.testing.assert_array_equal(ds.distinct[ds.user_index], ds.values)
    absent = [v + 1 for v in pool if v + 1 not in counter and v + 1 < (1 << m)][:5]
    q = from_ints(list(counter)[:5] + absent, m)
    np.testing.assert_array_equal(ds.count_of(q), [counter[v] for v in list(counter)[:5]] + [0] * len(absent))
    # byte-string keys sort like lexsort over the words (numeric order)
    keys = value_keys(ds.values)
    np.testing.assert_array_equal(np.argsort(keys, kind="stable"), np.lexsort(ds.values.T[::-1]))


def test_from_counts():
    vals = np.array([40, 10, 30, 20], dtype=np.uint64)
    counts = np.array([1, 3, 0, 2])
    a = D.Dataset.from_counts(vals, counts, 8, "c", rng=3)
    b = D.Dataset.from_counts(vals, counts, 8, "c", rng=3)
    c = D.Dataset.from_counts(vals, counts, 8, "c", rng=4)
    assert a.n == 6 and a.n_distinct == 3  # the zero count is dropped
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.distinct, [10, 20, 40])
    np.testing.assert_array_equal(a.distinct_counts, [3, 2, 1])
    np.testing.assert_array_equal(a.distinct[a.user_index], a.values)
    # the tally given equals the one recomputed from the users
    re_ = D.Dataset.from_values(c.values, 8)
    np.testing.assert_array_equal(re_.distinct_counts, c.distinct_counts)
    plain = D.Dataset.from_counts(vals, counts, 8, shuffle=False)
    np.testing.assert_array_equal(plain.values, [40, 10, 10, 10, 20, 20])
    with pytest.raises(ValueError, match="distinct"):
        D.Dataset.from_counts(np.array([1, 1], dtype=np.uint64), [1, 2], 8)
    with pytest.raises(ValueError, match="negative"):
        D.Dataset.from_counts(vals, [1, -1, 0, 0], 8)
    with pytest.raises(ValueError, match="one count per distinct value"):
        D.Dataset.from_counts(vals, [1, 2], 8)
    with pytest.raises(ValueError, match="at least 1"):
        D.Dataset.from_counts(vals, [0, 0, 0, 0], 8)


def test_shuffle_reproducible_by_seed():
    vals = np.arange(50, dtype=np.uint64)
    counts = np.full(50, 20)
    a = D.Dataset.from_counts(vals, counts, 8, rng=1).values
    b = D.Dataset.from_counts(vals, counts, 8, rng=1).values
    c = D.Dataset.from_counts(vals, counts, 8, rng=2).values
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_prefix_tally_and_describe():
    ds = D.zipf(5000, m=20, n_distinct=300, rng=5)
    for length in (1, 7, 20):
        p, c = ds.prefix_tally(length)
        direct = collections.Counter(int(v) >> (20 - length) for v in ds.values)
        assert [int(x) for x in p] == sorted(direct)
        np.testing.assert_array_equal(c, [direct[int(x)] for x in p])
    info = ds.describe()
    assert info["n"] == 5000 and info["m"] == 20 and info["distinct"] == ds.n_distinct
    assert info["f@1"] == pytest.approx(ds.ranked_frequencies[0])
    assert list(ds.to_frame(3)["count"]) == list(ds.ranked_counts[:3])


# --------------------------------------------------------------------------------------
# random values and synthetic generators
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("m,k", [(8, 256), (16, 5000), (64, 20000), (160, 5000)])
def test_random_distinct_values(m, k):
    v = D.random_distinct_values(k, m, rng=11)
    ds = D.Dataset.from_values(v, m)  # also checks the width
    assert ds.n_distinct == k
    np.testing.assert_array_equal(v, D.random_distinct_values(k, m, rng=11))
    assert not np.array_equal(v, D.random_distinct_values(k, m, rng=12))
    if m == 8:  # the whole domain, in random order
        np.testing.assert_array_equal(np.sort(v), np.arange(256))
    with pytest.raises(ValueError, match="n_values"):
        D.random_distinct_values(2 ** 8 + 1, 8)


def test_zipf_sizes_and_reproducibility():
    a = D.zipf(20000, m=32, rng=0)
    assert (a.n, a.m, a.name) == (20000, 32, "zipf")
    assert a.params["support"] == 2 ** 16
    np.testing.assert_array_equal(a.values, D.zipf(20000, m=32, rng=0).values)
    assert not np.array_equal(a.values, D.zipf(20000, m=32, rng=1).values)
    small = D.zipf(1000, m=8, rng=0)
    assert small.params["support"] == 256
    with pytest.raises(ValueError, match="n_distinct"):
        D.zipf(1000, m=8, n_distinct=300)
    with pytest.raises(ValueError, match="sampling"):
        D.zipf(1000, sampling="exact")
    with pytest.raises(ValueError, match="s must be"):
        D.zipf(1000, s=0)


def test_zipf_frequencies_and_drop_top():
    # one Zipf law in the project (tested in test_analysis.py), re-exported here
    assert D.zipf_frequencies is ldp.analysis.zipf_frequencies
    assert D.exponential_frequencies is ldp.analysis.exponential_frequencies
    n = 100_000
    r = D.zipf(n, m=16, drop_top=20, sampling="rounded", rng=2)
    assert r.name == "zipf(-20)" and r.n == n
    expect = n * D.zipf_frequencies(2 ** 16, 1.5, drop_top=20)
    # largest-remainder rounding: every count within 1 of n f_j, ranks preserved at the head
    np.testing.assert_array_less(np.abs(r.ranked_counts[:50] - expect[:50]), 1.0 + 1e-9)
    assert r.ranked_counts[0] == pytest.approx(n * 21 ** -1.5 / (np.arange(21, 2 ** 16 + 21) ** -1.5).sum(), abs=1)


def test_zipf_multinomial_head_within_5_sigma():
    n = 200_000
    ds = D.zipf(n, m=64, rng=9)
    f = ds.params["rank_frequencies"]
    for j in range(3):  # head ranks are far apart: the j-th count estimates n f_j
        sd = math.sqrt(n * f[j] * (1 - f[j]))
        assert abs(ds.ranked_counts[j] - n * f[j]) < 5 * sd  # two-sided false-alarm rate 5.7e-7 per rank


def test_exponential_calibration():
    # section 6.2.3: theta = 0.023 "is around frequency of the 16-th most frequent value"
    ds = D.exponential(rng=0)
    assert (ds.n, ds.m, ds.name) == (10 ** 6, 64, "exponential")
    f = ds.params["rank_frequencies"]
    assert ds.params["support"] == 415 == len(f)
    assert abs(f[15] - 0.023) < 0.0005  # the paper's 0.023 is rounded to 3 decimals
    assert f[15] == pytest.approx((1 - math.exp(-0.05)) * math.exp(-0.75), rel=1e-6)
    np.testing.assert_allclose(f[1:] / f[:-1], math.exp(-0.05))  # geometric
    sd = math.sqrt(ds.n * f[15] * (1 - f[15]))
    assert abs(ds.ranked_counts[15] - ds.n * f[15]) < 5 * sd  # two-sided false-alarm rate 5.7e-7
    assert abs(D.exponential_frequencies(100, 0.05)[15] - 0.023) < 0.0005  # RAPPOR's 100-value cut
    np.testing.assert_array_equal(ds.values, D.exponential(rng=0).values)
    assert not np.array_equal(ds.values, D.exponential(rng=1).values)


# --------------------------------------------------------------------------------------
# URL stand-in
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def url0():
    return D.url(rng=0)


def test_url_floor_calibration(url0):
    # targets: 1.16 million visits, 27,000 distinct sites in a slice; stated tolerance 0.5 %
    assert url0.m == 160 and url0.nbytes == 20 and url0.name == "url"
    assert abs(url0.n / 1.16e6 - 1) < 0.005
    assert abs(url0.n_distinct / 27_000 - 1) < 0.005
    assert url0.params["stand_in"] is True


def test_url_values_are_domain_like_and_reproducible(url0):
    names = url0.decode(url0.distinct)
    assert len(set(names)) == url0.n_distinct
    pat = re.compile(r"^[a-z0-9]+(\.[a-z]+)+$")
    assert all(pat.match(s) and len(s.encode()) <= 20 for s in names)
    again = D.url(rng=0)
    np.testing.assert_array_equal(url0.values, again.values)
    other = D.url(rng=1)
    assert not np.array_equal(url0.ranked_values[:10], other.ranked_values[:10])
    np.testing.assert_array_equal(url0.ranked_counts, other.ranked_counts)  # floor slicing: counts fixed


def test_url_binomial_calibration_within_5_sigma():
    ds = D.url(slicing="binomial", rng=3)
    a, T = D.URL_CALIBRATION["binomial"]
    w = np.arange(1, 80_001, dtype=float) ** -a
    M = np.rint(T * w / w.sum())
    p = 1 / 8640
    mean_n, sd_n = (M * p).sum(), math.sqrt((M * p * (1 - p)).sum())
    q = 1 - (1 - p) ** M  # P(site visited in the slot)
    mean_d, sd_d = q.sum(), math.sqrt((q * (1 - q)).sum())
    assert abs(mean_n / 1.16e6 - 1) < 0.005 and abs(mean_d / 27_000 - 1) < 0.005
    assert abs(ds.n - mean_n) < 5 * sd_n
    assert abs(ds.n_distinct - mean_d) < 5 * sd_d
    with pytest.raises(ValueError, match="slicing"):
        D.url(slicing="round", rng=0)


# --------------------------------------------------------------------------------------
# AOL
# --------------------------------------------------------------------------------------

def _aol_dir() -> Path:
    """The folder holding the verified real tally (where the loaders look), or skip.

    The tally ships in data/, so it is missing only when a user removed it or
    hid it with LDP_DATA_DIR; in CI (CI=true, a fresh clone) that is a failure.
    """
    try:
        return D.check_aol().parent
    except (D.DataFileNotFoundError, D.ChecksumError) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI: the shipped AOL tally is unavailable: {exc}")
        pytest.skip(f"AOL tally unavailable ({exc}); restore data/ with `git checkout -- data/` or `make data`")


def test_aol_tally_ships_with_the_project():
    """data/ holds the tally's licence and checksum, and git tracks the tally itself."""
    sums = (REPO / "data" / "SHA256SUMS").read_text().split()
    assert sums == [D.AOL_SHA256, D.AOL_FILENAME]  # `sha256sum -c SHA256SUMS` format
    licence = (REPO / "data" / "LICENSE-AOL.txt").read_text()
    assert "MIT License" in licence and "Copyright (c) 2018 VVV214" in licence
    card = (REPO / "data" / "README.md").read_text()
    assert D.AOL_SHA256 in card and "LICENSE-AOL.txt" in card
    if (REPO / ".git").exists() and shutil.which("git"):
        tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", "data"], capture_output=True, text=True,
                                 check=True).stdout.split()
        assert f"data/{D.AOL_FILENAME}" in tracked


def test_aol_facts():
    d = _aol_dir()
    ds = D.aol(d)
    assert (ds.n, ds.n_distinct, ds.m, ds.nbytes) == (D.AOL_USERS, D.AOL_DISTINCT, 48, 6)
    assert (ds.n, ds.n_distinct) == (657_427, 120_978)
    assert ds.decode(ds.top(1), strip=False) == ["-     "]  # AOL's empty-query placeholder
    assert ds.top_counts(3).tolist() == [18720, 12292, 6132]
    assert ds.decode(ds.top(3)) == ["-", "google", "myspac"]
    raw = decode(ds.distinct, 6, strip=False, as_bytes=True)
    assert sum(any(c > 127 for c in b) for b in raw) == 19  # non-ASCII bytes kept
    assert D.aol(d) is ds  # memoised ...
    for seed in range(10, 15):  # ... in a bounded memo: five other shufflings push it out
        D.aol(d, rng=seed)
    again = D.aol(d)
    assert again is not ds and np.array_equal(again.values, ds.values)
    other = D.aol(d, rng=1)
    assert not np.array_equal(other.values, ds.values)
    np.testing.assert_array_equal(other.distinct_counts, ds.distinct_counts)
    assert ds.params["sha256"] == D.AOL_SHA256


def test_aol_lookup_order(tmp_path, monkeypatch):
    project = tmp_path / "project" / "data"  # the data/ folder of the project named by LDP_ROOT
    project.mkdir(parents=True)
    shipped = project / D.AOL_FILENAME
    shipped.write_bytes(gzip.compress(b"abcdef\t2\n"))
    monkeypatch.setenv("LDP_ROOT", str(project.parent))
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)
    assert D.data_folder() == project
    assert D.find_aol() == shipped  # no LDP_DATA_DIR: the project's data/ folder
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("LDP_DATA_DIR", str(other))
    assert D.data_folder() == other
    # an explicit LDP_DATA_DIR is the only folder searched: the shipped copy is hidden
    with pytest.raises(D.DataFileNotFoundError) as err:
        D.find_aol()
    assert str(other) in str(err.value) and str(project) not in str(err.value)
    (other / D.AOL_FILENAME).write_bytes(b"x")
    assert D.find_aol() == other / D.AOL_FILENAME
    assert D.find_aol(project) == shipped  # an explicit path comes first
    monkeypatch.setenv("LDP_DATA_DIR", "")  # empty counts as unset
    assert D.find_aol() == shipped


def test_check_aol_missing_and_corrupt(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path))
    with pytest.raises(D.DataFileNotFoundError):
        D.check_aol()
    assert datasets_cli(["check", "aol"]) == 1
    assert "AOL data unavailable" in capsys.readouterr().err
    (tmp_path / D.AOL_FILENAME).write_bytes(gzip.compress(b"abcdef\t2\n"))
    with pytest.raises(D.ChecksumError, match=D.AOL_SHA256):
        D.check_aol()
    assert datasets_cli(["check", "aol"]) == 1
    assert "expected " + D.AOL_SHA256 in capsys.readouterr().err
    monkeypatch.delenv("LDP_DATA_DIR")
    real = _aol_dir() / D.AOL_FILENAME
    monkeypatch.setenv("LDP_DATA_DIR", str(real.parent))
    assert D.check_aol() == real
    assert datasets_cli(["check", "aol"]) == 0
    assert "sha256 verified" in capsys.readouterr().out


def test_aol_missing_file_error(tmp_path, monkeypatch):
    with pytest.raises(D.DataFileNotFoundError) as err:
        D.aol(tmp_path / "nothing.txt.gz")
    assert isinstance(err.value, FileNotFoundError)
    msg = str(err.value)
    assert "make data" in msg and D.AOL_URL in msg and "LDP_DATA_DIR" in msg and "data/" in msg
    monkeypatch.setenv("LDP_ROOT", str(tmp_path))  # a project without data/
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="make data"):
        D.aol()


def test_aol_bad_checksum_and_parsing(tmp_path):
    body = b"-     \t5\nab\tcd \t2\ncaf\xc3\xa9 \t1\n"  # a tab inside a query; non-ASCII bytes
    fake = tmp_path / D.AOL_FILENAME
    fake.write_bytes(gzip.compress(body))
    with pytest.raises(D.ChecksumError) as err:
        D.aol(fake)
    assert isinstance(err.value, ValueError)
    assert D.AOL_SHA256 in str(err.value) and "make data" in str(err.value)
    ds = D.aol(fake, verify=False)
    assert (ds.n, ds.n_distinct, ds.m) == (8, 3, 48)
    got = dict(zip(decode(ds.distinct, 6, strip=False, as_bytes=True), ds.distinct_counts.tolist()))
    assert got == {b"-     ": 5, b"ab\tcd ": 2, b"caf\xc3\xa9 ": 1}
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(b"abcde\t3\n"))
    with pytest.raises(D.DataFormatError, match="6-byte"):
        D.aol(bad, verify=False)


def test_fetch_aol_verifies_and_is_atomic(tmp_path, capsys):
    fake = tmp_path / "fake.gz"
    fake.write_bytes(gzip.compress(b"abcdef\t1\n"))
    dest = tmp_path / "dest"
    with pytest.raises(D.ChecksumError):
        D.fetch_aol(dest, url=fake.as_uri())
    assert list(dest.iterdir()) == []  # nothing kept, no partial file
    with pytest.raises(D.DownloadError):
        D.fetch_aol(dest, url=(tmp_path / "absent.gz").as_uri())
    assert datasets_cli(["fetch", "aol", "--dest", str(dest), "--url", (tmp_path / "absent.gz").as_uri()]) != 0
    assert "could not download" in capsys.readouterr().err
    d = _aol_dir()
    src = d / D.AOL_FILENAME
    assert datasets_cli(["fetch", "aol", "--dest", str(dest), "--url", str(src)]) == 0
    target = dest / D.AOL_FILENAME
    assert hashlib.sha256(target.read_bytes()).hexdigest() == D.AOL_SHA256
    assert "saved" in capsys.readouterr().out
    assert datasets_cli(["fetch", "aol", "--dest", str(dest)]) == 0  # present: no download
    assert "already present" in capsys.readouterr().out
    assert D.fetch_aol(dest) == target


@pytest.fixture
def http_folder(tmp_path, monkeypatch):
    """A folder served over HTTP on 127.0.0.1 (pooch's real download path, no network)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    root = tmp_path / "served"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_aol_over_http(http_folder, tmp_path, monkeypatch, capsys):
    root, base = http_folder
    shutil.copyfile(_aol_dir() / D.AOL_FILENAME, root / "real.gz")
    (root / "fake.gz").write_bytes(gzip.compress(b"abcdef\t1\n"))
    dest = tmp_path / "dest"
    # default destination: LDP_DATA_DIR when set
    monkeypatch.setenv("LDP_DATA_DIR", str(dest))
    with pytest.raises(D.ChecksumError, match="nothing was saved"):
        D.fetch_aol(url=f"{base}/fake.gz")
    assert list(dest.iterdir()) == []  # no partial or unverified file, no temporary folder left
    with pytest.raises(D.DownloadError, match="404"):
        D.fetch_aol(url=f"{base}/absent.gz")
    target = dest / D.AOL_FILENAME
    target.write_bytes(b"corrupt")  # a wrong file is replaced by a verified one
    assert datasets_cli(["fetch", "aol", "--url", f"{base}/real.gz"]) == 0
    assert "wrong sha256" in capsys.readouterr().out
    assert D.check_aol() == target
    assert sorted(p.name for p in dest.iterdir()) == [D.AOL_FILENAME]
    # offline: the error says what to do
    port = base.rsplit(":", 1)[1]
    (root / "real.gz").unlink()
    with pytest.raises(D.DownloadError, match="offline") as err:
        D.fetch_aol(tmp_path / "other", url=f"http://127.0.0.1:{int(port) ^ 1}/x.gz", timeout=5)
    assert D.AOL_SHA256 in str(err.value) and f"data/{D.AOL_FILENAME}" in str(err.value)
    with pytest.raises(D.DownloadError, match="only https"):
        D.fetch_aol(tmp_path / "other", url="ftp://example.org/x.gz")


def test_generators_refuse_sizes_the_machine_cannot_hold(monkeypatch):
    import tracemalloc

    from ldp.core import dataset

    for make in (lambda: D.exponential(n=2**40, rng=0), lambda: D.zipf(2**40, rng=0),
                 lambda: D.url(month_visits=1e22, rng=0), lambda: D.random_distinct_values(2**40, 64, rng=0)):
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match=r"more than this machine's memory") as info:
                make()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert not isinstance(info.value, MemoryError) and peak < 64 * 2**20, peak
    with pytest.raises(ValueError, match=r"n = 1,099,511,627,776 users need .* n must be at most [\d,]+ here"):
        D.exponential(n=2**40, rng=0)
    monkeypatch.setattr(dataset, "machine_memory", lambda: 2**20)  # a machine of 1 MiB
    with pytest.raises(ValueError, match=r"n = 100,000 users need about 1\.53 MiB .*more than this machine.s "
                                         r"memory \(1 MiB\): n must be at most 65,536 here"):
        D.exponential(n=100_000, rng=0)
    assert D.exponential(n=1000, rng=0).n == 1000
