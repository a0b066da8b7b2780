"""Errors before work: numeric limits of epsilon, impossible k, unreadable reports files.

Every error names the parameter (or the file) and the allowed range (or what
is wrong), and is raised at construction / on loading, before any work.
"""
from __future__ import annotations

import math
import re
import zipfile

import numpy as np
import pytest

import ldp
from ldp import datasets
from ldp.oracles import BLH, GRR, OLH, OUE, Reports, ReportsFileError
from ldp.oracles.olh import MAX_D_PRIME, MAX_EPSILON, default_d_prime
from ldp.protocols import ProtocolReports
from ldp.validation import EXP_MAX_EPSILON

above = np.nextafter  # the next double: the first value past a limit


# ---------------------------------------------------------------------------
# epsilon: the real numeric limit of each oracle and protocol
# ---------------------------------------------------------------------------
def test_olh_limit_is_the_d_prime_limit():
    assert MAX_EPSILON == pytest.approx(math.log(2**31 - 1))
    assert default_d_prime(MAX_EPSILON) == MAX_D_PRIME  # the limit itself still works
    assert OLH(MAX_EPSILON, m=16).d_prime == MAX_D_PRIME
    with pytest.raises(ValueError, match=r"epsilon must be a finite real number in \(0, 21\.48\d*\].*d' = "
                                         r"ceil\(e\^epsilon \+ 1\) must be at most 2\*\*31.*pass d_prime.*got 22"):
        OLH(22.0, m=16)
    # an explicit d' lifts that limit up to e^eps overflowing a double
    assert OLH(100.0, d_prime=2**20, m=16).p == pytest.approx(1.0)
    assert OLH(EXP_MAX_EPSILON, d_prime=2, m=16).p == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"\(0, 709\.78\d*\] \(e\*\*epsilon must be a finite double\), got 800"):
        OLH(800.0, d_prime=16, m=16)


@pytest.mark.parametrize("make", [lambda e: GRR(e, 4), lambda e: OUE(e, 4), lambda e: BLH(e, m=8)])
def test_exp_limit_of_grr_oue_blh(make):
    o = make(EXP_MAX_EPSILON)  # works, including its variance (no overflow of (e^eps - 1)^2)
    assert math.isfinite(o.variance(1000))
    est = o.estimate(o.privatize(np.array([1, 2, 3]), rng=0), np.array([1]))
    assert np.isfinite(est).all()
    with pytest.raises(ValueError, match=r"epsilon must be a finite real number in \(0, 709\.78\d*\]"):
        make(above(EXP_MAX_EPSILON, np.inf))


LIMITS = {  # protocol -> (constructor, budget split s: epsilon <= s ln(2^31 - 1))
    "PEM": (lambda e: ldp.PEM(e, 4, 16, eta=8), 1),
    "SPM": (lambda e: ldp.SPM(e, 4, 16, query_limit=2**10), 3),
    "SPM final 10%": (lambda e: ldp.SPM(e, 4, 16, query_limit=2**10, final_fraction=0.1), 1),
    "MCM": (lambda e: ldp.MCM(e, 4, 16, query_limit=2**12), 2),
    "MCM final 10%": (lambda e: ldp.MCM(e, 4, 16, query_limit=2**12, final_fraction=0.1), 1),
    "Strawman": (lambda e: ldp.Strawman(e, 4, 16, query_limit=2**12), 2),
    "Strawman final 10%": (lambda e: ldp.Strawman(e, 4, 16, query_limit=2**12, final_fraction=0.1), 1),
}


@pytest.mark.parametrize("name", list(LIMITS))
def test_protocol_epsilon_limit(name):
    make, s = LIMITS[name]
    limit = s * MAX_EPSILON
    P = make(limit)
    assert P.max_epsilon == pytest.approx(limit)
    data = datasets.zipf(3000, m=16, rng=1)
    for engine in ("counts", "protocol"):  # the limit itself runs: no overflow anywhere
        res = P.run(data, rng=2, engine=engine)
        assert np.isfinite(res.estimates).all() and len(res) >= 1
    with pytest.raises(ValueError) as info:
        make(limit * (1 + 1e-9))
    msg = str(info.value)
    assert re.search(rf"epsilon must be a finite real number in \(0, {limit:.6g}\]", msg), msg
    assert "2**31" in msg and "d_prime" not in msg  # protocols take no d_prime: do not suggest it


def test_pem_with_huge_epsilon_fails_at_construction():
    with pytest.raises(ValueError, match=r"epsilon must be a finite real number in \(0, 21\.4876\].*got 800"):
        ldp.PEM(800.0, 16, 64)
    with pytest.raises(ValueError, match=r"\(0, 21\.4876\].*got 23"):
        ldp.PEM(23.0, 16, 64)
    # the optimizer (no explicit configuration) works at the limit, for the paper's sizes
    cfg = ldp.PEM(MAX_EPSILON, 16, 64).config(10**6)
    assert cfg.m == 64 and cfg.queries <= 2**20
    # called directly, the analysis refuses what would overflow e**epsilon (no OverflowError)
    with pytest.raises(ValueError, match=r"\(0, 709\.78\d*\] \(e\*\*epsilon must be a finite double\)"):
        ldp.analysis.optimize_pem(800.0, 16, 64, n=10**6)


# ---------------------------------------------------------------------------
# k larger than what a protocol can return
# ---------------------------------------------------------------------------
def test_mcm_k_larger_than_channels():
    with pytest.raises(ValueError, match=r"k = 16 is more than MCM can return.*channels = 8.*channels >= k"):
        ldp.MCM(2.0, 16, 32, channels=8)
    assert ldp.MCM(2.0, 8, 32, channels=8).channels == 8


# ---------------------------------------------------------------------------
# reports files: every way a file can be wrong, for both kinds of reports
# ---------------------------------------------------------------------------
def _oracle_file(tmp_path):
    r = OLH(2.0, m=16).privatize(np.arange(50, dtype=np.uint64), rng=0)
    path = tmp_path / "oracle.npz"
    r.save(path)
    return path, r, Reports.load


def _protocol_file(tmp_path):
    r = ldp.PEM(2.0, 4, 16, eta=8).privatize(datasets.zipf(300, m=16, rng=0), rng=0)
    path = tmp_path / "protocol.npz"
    r.save(path)
    return path, r, ProtocolReports.load


FILES = {"oracle": _oracle_file, "protocol": _protocol_file}


def _refused(load, path, match):
    with pytest.raises(ReportsFileError) as info:
        load(path)
    msg = str(info.value)
    assert str(path) in msg, msg  # names the file
    assert re.search(match, msg), msg
    assert "unsafe" not in msg and "allow_pickle" not in msg  # never numpy's "load it unsafely" hint
    return msg


@pytest.mark.parametrize("kind", list(FILES))
def test_reports_file_round_trip_and_missing(tmp_path, kind):
    path, r, load = FILES[kind](tmp_path)
    assert load(path) == r
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        load(tmp_path / "nope.npz")


@pytest.mark.parametrize("kind", list(FILES))
def test_truncated_empty_garbage_files(tmp_path, kind):
    path, r, load = FILES[kind](tmp_path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 1, 30, 4):
        path.write_bytes(data[:cut])
        _refused(load, path, r"is truncated or damaged")
    path.write_bytes(b"")
    _refused(load, path, r"is empty \(0 bytes\)")
    path.write_bytes(b"this is not a reports file\n" * 10)
    _refused(load, path, r"is not a reports file \(not an \.npz archive")
    path.write_bytes(b"\x80\x04\x95" + bytes(100))  # looks like a pickle: numpy would suggest allow_pickle
    _refused(load, path, r"is not a reports file")


@pytest.mark.parametrize("kind", list(FILES))
def test_bit_flips_are_detected(tmp_path, kind):
    path, r, load = FILES[kind](tmp_path)
    data = path.read_bytes()
    rng = np.random.default_rng(0)
    refused = 0
    for pos in rng.choice(len(data), size=150, replace=False):
        flipped = bytearray(data)
        flipped[pos] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(flipped))
        try:
            back = load(path)
        except ReportsFileError as err:
            assert str(path) in str(err) and "allow_pickle" not in str(err)
            refused += 1
        else:  # a flip in a byte nobody reads (e.g. a zip timestamp) must leave the content intact
            assert back == r
    assert refused >= 100


@pytest.mark.parametrize("kind", list(FILES))
def test_checksum_mismatch(tmp_path, kind):
    path, r, load = FILES[kind](tmp_path)
    # rewrite the archive with one array changed but the original metadata (a valid zip, valid arrays)
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    name = next(k for k in arrays if k.endswith("seed"))
    arrays[name] = arrays[name].copy()
    arrays[name][0] ^= np.uint64(1)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    _refused(load, path, r"does not match its checksum")


def test_wrong_kind_of_file(tmp_path):
    opath, _, _ = _oracle_file(tmp_path)
    ppath, _, _ = _protocol_file(tmp_path)
    _refused(ProtocolReports.load, opath,
             r"holds frequency-oracle reports \(read them with ldp\.oracles\.Reports\.load\)")
    _refused(Reports.load, ppath, r"holds heavy-hitter protocol reports \(read them with "
                                  r"ldp\.protocols\.ProtocolReports\.load\)")
    _refused(ldp.oracles.GRRReports.load, opath, r"holds OLH reports, not GRR reports")
    other = tmp_path / "other.npz"
    np.savez(other, x=np.arange(3))
    _refused(Reports.load, other, r"is an \.npz archive but not a reports file")
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as z:
        z.writestr("a.txt", "hello")
    _refused(ProtocolReports.load, tmp_path / "plain.zip", r"not a reports file|truncated or damaged")


# ---------------------------------------------------------------------------
# the smallest epsilon, rng, encode, plan(n): every error before work, naming the parameter
# ---------------------------------------------------------------------------
ALL_ORACLES = [lambda e: GRR(e, 2), lambda e: GRR(e, 2**40), lambda e: OLH(e, m=16), lambda e: BLH(e, m=16),
               lambda e: OUE(e, 2), lambda e: OUE(e, 2**20), lambda e: ldp.HR(e, m=16),
               lambda e: ldp.HR(e, m=16, blocks=1), lambda e: ldp.CMS(e, m=16, width=2),
               lambda e: ldp.CMS(e, m=16, width=2**16)]


def test_the_smallest_epsilon_is_where_p_and_q_differ():
    from ldp.validation import MIN_EPSILON

    assert MIN_EPSILON == 2.0**-50
    for make in ALL_ORACLES:  # at the bound and above, every oracle's p and q differ in float64
        for e in (MIN_EPSILON, 3 * MIN_EPSILON, 1e-10, 1e-3):
            o = make(e)
            assert o.p > o.q, (o, e)
    # just below it they do not all differ: at 2**-51 CMS's flip probability 1/(e^(eps/2) + 1) rounds to 1/2,
    # so p = q = 1/2; at 2**-52 OUE's q = 1/(e^eps + 1) is 1/2 = p too
    assert 1.0 / (math.sqrt(math.exp(2.0**-51)) + 1.0) == 0.5 and 1.0 / (math.exp(2.0**-52) + 1.0) == 0.5
    for bad in (1e-17, 2.0**-51, float(np.nextafter(MIN_EPSILON, 0))):
        for make in (ALL_ORACLES[2], lambda e: ldp.PEM(e, 16, 64)):
            with pytest.raises(ValueError, match=r"epsilon must be at least 2\*\*-50 = 8\.88e-16, the smallest "
                                                 r"power of two at which every oracle's support probabilities p "
                                                 r"and q differ in float64"):
                make(bad)


@pytest.mark.parametrize("rng, kind, match", [
    (True, TypeError, r"rng must be None, a non-negative integer seed .* got the bool True \(True is not a seed\)"),
    (1.5, TypeError, r"rng must be None, a non-negative integer seed .*; got 1\.5 \(float\)"),
    (-1, ValueError, r"rng must be a non-negative integer seed, got -1"),
    ("7", TypeError, r"rng must be .*; got '7' \(str\)"),
    ([1, -2], ValueError, r"rng as a sequence of seeds must hold non-negative integers"),
])
def test_rng_is_checked_and_named(rng, kind, match):
    with pytest.raises(kind, match=match):
        OLH(2.0, m=16).privatize(np.arange(3, dtype=np.uint64), rng=rng)
    with pytest.raises(kind, match=match):
        ldp.PEM(2.0, 4, 16).plan(100, rng=rng)
    with pytest.raises(kind, match=match.replace("rng", "public_rng", 1)):
        OLH(2.0, m=16).draw_noise(3, rng=0, public_rng=rng)


def test_numpy_seeds_still_work():
    for rng in (None, 0, np.int64(3), np.uint64(5), [1, 2], np.random.SeedSequence(4), np.random.PCG64(1),
                np.random.default_rng(2)):
        OLH(2.0, m=16).privatize(np.arange(3, dtype=np.uint64), rng=rng)


def test_encode_refuses_what_is_not_text():
    with pytest.raises(TypeError, match=r"strings\[0\] must be a str or bytes, got int 5"):
        ldp.encode([5], 6)
    with pytest.raises(TypeError, match=r"strings\[1\] must be a str or bytes, got int 1000000000000"):
        ldp.encode(["ok", 10**12], 6)  # was a bare MemoryError (bytes(10**12))
    assert ldp.decode(ldp.encode([b"ab", bytearray(b"cd"), "ef"], 2), 2) == ["ab", "cd", "ef"]


def test_plan_n_is_bounded_by_what_a_plan_represents():
    from ldp.core import MAX_USERS

    pem = ldp.PEM(2.0, 16, 64)
    for n in (2**70, MAX_USERS + 1, 10**12):
        with pytest.raises(ValueError, match=r"n must be an integer in \[1, 4294967296\], got \d+"):
            pem.plan(n)
    with pytest.raises(TypeError, match="n must be an integer"):
        pem.plan(1e6)
