"""Files and plans are checked before work: a reports file or a plan JSON cannot make the server do much.

* a reports file's members are checked from the zip's central directory and their ``.npy`` headers before
  anything is decompressed: an extra 1 GB member compressed to about 1 MB (checksum recomputed, as anyone
  can) is refused, naming the file, with little memory (tracemalloc's peak; the time is measured by
  ``benchmarks/bench_client.py``, never asserted);
* a plan's ``n`` is at most MAX_USERS = 2**32, so ``n = 10**12`` is refused naming ``n``;
* every group's oracle parameters are checked against the plan at load, naming the file and the group;
* impossible or contradictory parameters are refused; ``Plan.from_json`` errors name the entry.
"""
from __future__ import annotations

import json
import re
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ldp
from ldp import datasets, reportfile
from ldp.core import MAX_USERS, Plan, PlanError
from ldp.oracles import OLH, Reports, ReportsFileError
from ldp.protocols import ProtocolReports

GB = 2**30


@pytest.fixture(scope="module")
def pem_reports():
    pem = ldp.PEM(2.0, 4, 16, eta=8)
    return pem.privatize(datasets.zipf(300, m=16, rng=0), rng=0)


def _members(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    with np.load(path) as f:
        meta = json.loads(str(f["__meta__"]))
        return meta, {k: f[k] for k in f.files if k != "__meta__"}


def _rewrite(path: Path, meta: dict, arrays: dict[str, np.ndarray], *, checksum: bool = True) -> None:
    """Write a reports file by hand, recomputing the checksum as a forger would."""
    if checksum:
        meta = {**meta, "sha256": reportfile.checksum(arrays)}
    with open(path, "wb") as fh:
        np.savez(fh, __meta__=np.array(json.dumps(meta)), **arrays)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    """A zip holding one deflated member, ``junk.npy``: a .npy header and 1 GiB of zeros (about 1 MB)."""
    path = tmp_path_factory.mktemp("bomb") / "junk.zip"
    header = {"descr": "|u1", "fortran_order": False, "shape": (GB,)}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z, \
            z.open("junk.npy", "w", force_zip64=True) as out:
        np.lib.format.write_array_header_1_0(out, header)
        chunk = bytes(2**24)  # streamed: no big buffer
        for _ in range(GB // len(chunk)):
            out.write(chunk)
    return path


@pytest.mark.parametrize("kind", ["protocol", "oracle"])
def test_a_one_gigabyte_member_is_refused_before_it_is_read(tmp_path, pem_reports, bomb, kind):
    path = tmp_path / "bomb.npz"
    if kind == "protocol":
        pem_reports.save(path)
        load = ProtocolReports.load
    else:
        OLH(2.0, m=16).privatize(np.arange(50, dtype=np.uint64), rng=0).save(path)
        load = Reports.load
    meta, arrays = _members(path)
    # the forger's file: the checksum covers the extra array (anyone can recompute an unkeyed SHA-256)
    meta["sha256"] = reportfile.checksum({**arrays, "junk": np.zeros(0, np.uint8)})
    path.write_bytes(bomb.read_bytes())
    with zipfile.ZipFile(path, "a") as z:  # the reports' own members beside the junk
        for name, a in {"__meta__": np.array(json.dumps(meta)), **arrays}.items():
            with z.open(f"{name}.npy", "w") as out:
                np.lib.format.write_array(out, a, allow_pickle=False)
    assert path.stat().st_size < 2 * 2**20  # about 1 MB on disk
    with zipfile.ZipFile(path) as z:
        assert z.getinfo("junk.npy").file_size > GB
    tracemalloc.start()
    try:
        with pytest.raises(ReportsFileError) as info:
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    msg = str(info.value)
    assert str(path) in msg and "compressed member 'junk.npy'" in msg, msg
    assert peak < 200 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_members_are_checked_against_what_the_plan_can_hold(tmp_path, pem_reports):
    path = tmp_path / "r.npz"
    pem_reports.save(path)
    meta, arrays = _members(path)
    # an unknown member, stored (not compressed)
    _rewrite(path, meta, {**arrays, "extra": np.zeros(10, np.uint8)})
    with pytest.raises(ReportsFileError, match=r"has member\(s\) a reports file of this content never holds: 'extra'"):
        ProtocolReports.load(path)
    # a missing member
    _rewrite(path, meta, {k: v for k, v in arrays.items() if k != "users"})
    with pytest.raises(ReportsFileError, match=r"lacks the member\(s\) 'users'"):
        ProtocolReports.load(path)
    # more users than the plan has, with every array consistent
    big = {k: np.concatenate([v] * 2) for k, v in arrays.items()}
    _rewrite(path, meta, big)
    with pytest.raises(ReportsFileError, match=r"holds 600 users, more than its plan's n = 300"):
        ProtocolReports.load(path)
    # an array of the wrong dtype
    wrong = dict(arrays)
    wrong["labels"] = arrays["labels"].astype(np.uint16)
    _rewrite(path, meta, wrong)
    with pytest.raises(ReportsFileError, match=r"member 'labels' of uint16 \(300,\), where the reports need uint8"):
        ProtocolReports.load(path)
    # a group's reports of another length than its users
    short = dict(arrays)
    short["r0_0_seed"] = arrays["r0_0_seed"][:-1]
    _rewrite(path, meta, short)
    with pytest.raises(ReportsFileError, match="group 0: its report arrays hold different numbers of users"):
        ProtocolReports.load(path)


def test_a_plan_of_a_trillion_users_is_refused_naming_n(tmp_path, pem_reports):
    path = tmp_path / "r.npz"
    pem_reports.save(path)
    meta, arrays = _members(path)
    meta["plan"]["n"] = 10**12
    _rewrite(path, meta, arrays)
    tracemalloc.start()
    try:
        with pytest.raises(ReportsFileError, match=r"n must be an integer in \[\d+, 4294967296\], got 10+") as info:
            ProtocolReports.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(path) in str(info.value) and "MAX_USERS" in str(info.value) and peak < 50 * 2**20
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 4294967296\], got 1180591620717411303424"):
        ldp.PEM(2.0, 16, 64).plan(2**70)
    assert ldp.PEM(2.0, 4, 16).plan(MAX_USERS, rng=0).n == MAX_USERS  # the bound itself is a plan (not labelled)


def test_oracle_parameters_are_checked_per_group_naming_file_and_group(tmp_path, pem_reports):
    path = tmp_path / "r.npz"
    pem_reports.save(path)
    meta, arrays = _members(path)
    g = pem_reports.plan.n_groups - 1
    meta["oracles"][g][0] = {**meta["oracles"][g][0], "d_prime": 12}
    _rewrite(path, meta, arrays)
    with pytest.raises(ReportsFileError, match=rf"group {g}: its reports to question 0 are marked as made by an "
                                               rf"oracle with .*'d_prime': 12.*but the plan asks OLH\("):
        ProtocolReports.load(path)


def test_impossible_and_contradictory_parameters_are_refused(tmp_path, pem_reports):
    path = tmp_path / "r.npz"
    pem_reports.save(path)
    meta, arrays = _members(path)
    cases = [
        (("params", "epsilon"), float("nan"), r"params\['epsilon'\] must be a finite number > 0"),
        (("params", "m"), 24, "params say m = 24 but its m is 16: contradictory"),
        (("params", "epsilon"), 1.0, r"group \d+ spends epsilon = 2.0 in its reports, more than the budget"),
        (("fractions",), [0.5, 0.6], "fractions must sum to 1"),
        (("assignment",), "mine", "group assignment rule 'mine' is unknown"),
        (("questions", 0, 0, "epsilon"), float("nan"), "epsilon must be"),
    ]
    for keys, value, match in cases:
        m2 = json.loads(json.dumps(meta))
        target = m2["plan"]
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
        if keys[0] == "params":
            m2["params"] = m2["plan"]["params"]
        _rewrite(path, m2, arrays)
        with pytest.raises(ReportsFileError, match=match) as info:
            ProtocolReports.load(path)
        assert str(path) in str(info.value)
    m2 = json.loads(json.dumps(meta))
    m2["params"] = {**m2["params"], "k": 8}  # the top level says otherwise than the plan
    _rewrite(path, m2, arrays)
    with pytest.raises(ReportsFileError, match="has contradictory parameters"):
        ProtocolReports.load(path)
    # a frequency oracle's file: impossible parameters (d' = 1, epsilon NaN) are refused at load
    opath = tmp_path / "o.npz"
    OLH(2.0, m=16).privatize(np.arange(20, dtype=np.uint64), rng=0).save(opath)
    ometa, oarrays = _members(opath)
    for change, match in (({"d_prime": 1}, r"d_prime must be an integer in \[2, "),
                          ({"epsilon": float("nan")}, "epsilon must be"),
                          ({"m": 5000}, r"m must be an integer in \[1, 4096\], got 5000")):
        _rewrite(opath, {**ometa, "params": {**ometa["params"], **change}}, oarrays)
        with pytest.raises(ReportsFileError, match="impossible parameters") as info:
            Reports.load(opath)
        assert str(opath) in str(info.value)
        assert re.search(match, str(info.value)), str(info.value)


def test_the_checksum_is_not_authentication(tmp_path, pem_reports):
    # documented: anyone can edit the reports and recompute the checksum; the file then loads
    path = tmp_path / "r.npz"
    pem_reports.save(path)
    meta, arrays = _members(path)
    arrays["r0_0_y"] = np.zeros_like(arrays["r0_0_y"])
    _rewrite(path, meta, arrays)
    assert ProtocolReports.load(path) != pem_reports
    doc = " ".join(reportfile.__doc__.replace("*", "").split())
    assert "authenticates nothing" in doc and "not tampering" in doc


@pytest.mark.parametrize("text, match", [
    ("{}", r"the plan has no 'm', 'fractions', 'questions'"),
    ("[]", "a plan must be a JSON object, got list"),
    ("not json", r"the plan is not valid JSON"),
    ('{"m": 16, "fractions": [1.0], "questions": [[]]}', r"questions\[0\] must be a non-empty list"),
    ('{"m": 0, "fractions": [1.0], "questions": [[]]}', r"the plan's m must be an integer in \[1, 4096\]"),
    ('{"m": 16, "fractions": [1.0], "questions": [[{"start": 0}]]}', "missing stop, epsilon, channels, seed"),
    ('{"m": 16, "fractions": [1.0], "questions": [[{"start": 0, "stop": 17, "epsilon": 1.0, "channels": 0, '
     '"seed": 0}]]}', r"stop must be an integer in \[1, 16\]"),
    ('{"m": 16, "fractions": [1.0], "questions": [[{"start": 0, "stop": 16, "epsilon": 1.0, "channels": 0, '
     '"seed": 0, "oracle": "XYZ"}]]}', "oracle must be one of"),
    ('{"m": 16, "fractions": [1.0], "questions": [[{"start": 0, "stop": 16, "epsilon": 1.0, "channels": 0, '
     '"seed": 0}]], "n": 10}', "must give both n and seed"),
    ('{"m": 16, "fractions": [1.0], "questions": [[{"start": 0, "stop": 16, "epsilon": 1.0, "channels": 0, '
     '"seed": 0}]], "n": 1000000000000, "seed": 1}', r"n must be an integer in \[1, 4294967296\]"),
    ('{"m": 16, "fractions": [1.0], "questions": [[{"start": 0, "stop": 16, "epsilon": 1.0, "channels": 0, '
     '"seed": 0}]], "colour": "red"}', r"unknown entries \['colour'\]"),
])
def test_plan_from_json_names_the_problem(text, match):
    with pytest.raises(PlanError, match=match):
        Plan.from_json(text)


def test_plan_json_round_trips_for_every_protocol():
    for P in (ldp.PEM(2.0, 4, 16, eta=6), ldp.SPM(2.0, 4, 16, query_limit=2**10),
              ldp.MCM(2.0, 4, 16, query_limit=2**12), ldp.TreeHist(2.0, 4, 16, bits_per_level=4),
              ldp.SFP(2.0, 4, 16, hash_bits=4, query_limit=2**13), ldp.PEM(2.0, 4, 16, eta=6, oracle="CMS"),
              ldp.Strawman(2.0, 4, 16, query_limit=2**12, final_fraction=0.1)):
        plan = P.plan(5000, rng=1)
        assert Plan.from_json(plan.to_json()) == plan
    with pytest.raises(TypeError, match="takes the plan's JSON text"):
        Plan.from_json({"m": 16})
