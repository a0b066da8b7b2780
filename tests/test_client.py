"""The deployment split end to end: devices (ldp.client) send wire bytes, the aggregator checks and aggregates.

* the client: OS randomness (two calls differ), values as ints, strings or bytes, clear errors;
* the wire format: byte layout, round trip of a simulation's reports, every check of a report;
* the aggregator: every bad report refused with a ValueError naming it, nothing changed; batches whole or
  skipped; result() again as reports arrive; what report_many + aggregator gives equals in law what
  privatize + aggregate gives.
"""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from scipy import stats

import ldp
from ldp import datasets, metrics
from ldp.analysis import identification_probability
from ldp.client import (
    HEADER_BYTES,
    VERSION,
    encode_protocol_reports,
    encode_reports,
    parse_reports,
    plan_id,
    report,
    report_bytes,
    report_many,
)
from ldp.protocols import ProtocolReports

ALPHA = 1e-6


@pytest.fixture(scope="module")
def data():
    return datasets.zipf(50_000, m=32, rng=3)


@pytest.fixture(scope="module")
def pem_plan(data):
    pem = ldp.PEM(3.0, 8, 32)
    return pem, pem.plan(data.n, rng=1)


# ---------------------------------------------------------------------------
# the device
# ---------------------------------------------------------------------------
def test_report_is_fresh_os_randomness_and_the_documented_bytes(pem_plan):
    pem, plan = pem_plan
    text = plan.to_json()
    a, b = report(text, 12345, user=7), report(text, 12345, user=7)
    assert a != b  # no seed: every call draws new coins (and a new hash seed)
    olh = plan.questions[plan.group_of(7)][0].oracle()
    assert len(a) == HEADER_BYTES + 8 + 1 == report_bytes(plan, plan.group_of(7)) == 36
    version, pid, user, group = struct.unpack("<B16sQH", a[:HEADER_BYTES])
    assert (version, pid, user, group) == (VERSION, plan_id(plan), 7, plan.group_of(7))
    seed, y = struct.unpack("<QB", a[HEADER_BYTES:])
    assert 0 <= y < olh.d_prime
    assert a[1:27] == b[1:27] and a[27:35] != b[27:35]  # same header, different public hash seeds
    assert plan_id(ldp.core.Plan.from_json(text)) == plan_id(plan)  # the id survives publication


def test_values_as_strings_bytes_and_ints():
    pem = ldp.PEM(2.0, 4, 48)
    plan = pem.plan(100, rng=0)
    for value in ("google", b"google", int.from_bytes(b"google", "big")):
        parsed = parse_reports(plan, [report(plan, value, user=3)])
        assert not parsed.problems and parsed.n_valid == 1
    with pytest.raises(ValueError, match="more than nbytes = 6"):
        report(plan, "much too long", user=3)
    with pytest.raises(ValueError, match=r"values must hold values in \[0, 2\*\*48\)"):
        report(plan, 2**48, user=3)
    odd = ldp.PEM(2.0, 4, 20).plan(100, rng=0)
    with pytest.raises(ValueError, match="m is a multiple of 8"):
        report(odd, "ab", user=0)
    with pytest.raises(ValueError, match=r"users must be plan indices in \[0, n = 100\), found 100"):
        report(plan, 5, user=100)
    with pytest.raises(TypeError, match="users must be plan indices"):
        report(plan, 5, user=True)
    with pytest.raises(TypeError, match="use report_many"):
        report(plan, [1, 2], user=0)
    with pytest.raises(ValueError, match="one plan index per value"):
        report_many(plan, [1, 2], users=[0])
    with pytest.raises(TypeError, match="all integers or all strings"):
        report_many(plan, [1, "a"], users=[0, 1])
    with pytest.raises(TypeError, match="plan must be"):
        report({"m": 48}, 5, user=0)
    with pytest.raises(ldp.core.PlanError, match="no 'm'"):
        report("{}", 5, user=0)


@pytest.mark.parametrize("make", [lambda: ldp.OLH(2.0, m=16), lambda: ldp.HR(2.0, m=16),
                                  lambda: ldp.CMS(2.0, m=16, width=64), lambda: ldp.GRR(2.0, 10),
                                  lambda: ldp.OUE(2.0, 20)], ids=["OLH", "HR", "CMS", "GRR", "OUE"])
def test_a_bare_oracle_deployment(make):
    o = make()
    rs = report_many(o, [3] * 50, users=np.arange(50))
    parsed = parse_reports(o, rs)
    assert not parsed.problems and parsed.n_valid == 50
    (pos, users, (reps,)), = parsed.groups.values()
    assert reps.params == o.params and list(users) == list(range(50))
    assert len(set(rs)) == 50
    other = ldp.OLH(3.0, m=16) if o.kind != "OLH" else ldp.OLH(2.5, m=16)
    assert "is for another plan" in parse_reports(other, rs[:1]).problems[0][1]


# ---------------------------------------------------------------------------
# the wire format
# ---------------------------------------------------------------------------
WIRE_MAKERS = {
    "PEM": lambda: ldp.PEM(2.0, 4, 16, eta=6),
    "PEM HR": lambda: ldp.PEM(2.0, 4, 16, eta=6, oracle="HR"),
    "PEM CMS": lambda: ldp.PEM(2.0, 4, 16, eta=6, oracle="CMS"),
    "SPM": lambda: ldp.SPM(2.0, 4, 16, query_limit=2**10),  # groups answering two and three questions
    "MCM": lambda: ldp.MCM(2.0, 4, 16, query_limit=2**12),  # channel-hashed answers
    "TreeHist": lambda: ldp.TreeHist(2.0, 4, 16, bits_per_level=4, oracle="Hashtogram", final_fraction=0.2),
}


@pytest.mark.parametrize("name", list(WIRE_MAKERS))
def test_simulated_reports_survive_the_wire(name):
    pem = WIRE_MAKERS[name]()
    d = datasets.zipf(3000, m=16, rng=1)
    plan = pem.plan(d.n, rng=0)
    sim = pem.privatize(d.values, plan=plan, rng=2)
    wire = encode_protocol_reports(sim)
    lengths = {len(w) for w in wire}
    assert lengths == {report_bytes(plan, g) for g in range(plan.n_groups)}
    server = pem.aggregator(plan)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(wire))
    for chunk in np.array_split(order, 3):  # any order, any batches
        assert server.add_many([wire[i] for i in chunk]) == []
    assert server.reports() == sim  # byte for byte the simulation's reports
    a, b = server.result(rng=4), pem.aggregate(sim, rng=4)
    np.testing.assert_array_equal(a.heavy_hitters, b.heavy_hitters)
    np.testing.assert_array_equal(a.estimates, b.estimates)
    devices = report_many(plan, d.values, users=np.arange(d.n))  # and the devices' reports pass the checks
    assert pem.aggregator(plan).add_many(devices) == []


def test_encode_reports_checks_its_input(pem_plan):
    pem, plan = pem_plan
    g = int(plan.group_of(0))
    olh = plan.questions[g][0].oracle()
    good = olh.privatize(np.array([1, 2], dtype=np.uint64) >> np.uint64(0), rng=1)
    with pytest.raises(ValueError, match="reports of"):
        encode_reports(plan, [0], g, [good])  # two reports for one user
    with pytest.raises(ValueError, match=r"group must be in \[0,"):
        encode_reports(plan, [0], plan.n_groups, [good[:1]])


# ---------------------------------------------------------------------------
# the aggregator: every check, nothing half-added
# ---------------------------------------------------------------------------
def _refused(server, bad, match):
    before = server.n_reports
    with pytest.raises(ValueError, match=match):
        server.add(bad)
    assert server.n_reports == before
    return before


def _forge(good: bytes, **fields) -> bytes:
    version, pid, user, group = struct.unpack("<B16sQH", good[:HEADER_BYTES])
    head = struct.pack("<B16sQH", fields.get("version", version), fields.get("pid", pid),
                       fields.get("user", user), fields.get("group", group))
    return head + fields.get("body", good[HEADER_BYTES:])


def test_every_bad_report_is_refused_and_changes_nothing(data, pem_plan):
    pem, plan = pem_plan
    server = pem.aggregator(plan.to_json())
    good = report_many(plan, data.values[:100], users=np.arange(100))
    assert server.add_many(good) == [] and server.n_reports == 100
    snapshot = server.reports()
    fresh = report(plan, int(data.values[100]), user=100)
    other_plan = pem.plan(data.n, rng=2)
    g = int(plan.group_of(100))
    other_group = (g + 1) % plan.n_groups
    d_prime = plan.questions[g][0].oracle().d_prime
    cases = [
        (fresh[:-1], r"the report is 35 bytes, but a report of group \d+ of this plan is 36 bytes"),
        (fresh[:10], "shorter than the 27-byte header"),
        (fresh + b"\0", "is 37 bytes"),
        (report(other_plan, 5, user=100), "is for another plan"),
        (good[5], "already reported"),
        (_forge(fresh, version=2), "wire format version 2"),
        (_forge(fresh, user=data.n), rf"user {data.n}, outside this plan's users \[0, n = {data.n}\)"),
        (_forge(fresh, group=other_group), f"names group {other_group} but the plan puts user 100 in group {g}"),
        (_forge(fresh, group=plan.n_groups), "this plan has"),
        (_forge(fresh, body=fresh[HEADER_BYTES:-1] + bytes([d_prime])), rf"field 'y' out of range: y = {d_prime} "),
        (b"", "shorter than the 27-byte header"),
    ]
    for bad, match in cases:
        _refused(server, bad, match)
    with pytest.raises(TypeError, match="must be bytes"):
        server.add("not bytes")
    with pytest.raises(TypeError, match=r"reports\[1\] must be bytes"):
        server.add_many([fresh, 5])
    assert server.n_reports == 100 and server.reports() == snapshot and not server.reported([100])[0]
    # a batch with one bad report is refused whole; "skip" keeps the rest and names the bad one
    batch = report_many(plan, data.values[100:110], users=np.arange(100, 110))
    with pytest.raises(ValueError, match=r"report 3 of the batch is for another plan \(plan id \w+, this "
                                         r"plan.s is \w+\); nothing was added"):
        server.add_many(batch[:3] + [report(other_plan, 5, user=103)] + batch[4:])
    assert server.n_reports == 100
    with pytest.raises(ValueError, match=r"report 10 of the batch comes from a user who has already reported"):
        server.add_many(batch + [batch[0]])  # twice in one batch: the first counts
    assert server.n_reports == 100
    refused = server.add_many(batch + [batch[0], good[0]], invalid="skip")
    assert [i for i, _ in refused] == [10, 11] and server.n_reports == 110
    assert server.reported(np.arange(110)).all() and not server.reported([110])[0]
    with pytest.raises(ValueError, match="invalid must be one of"):
        server.add_many(batch, invalid="ignore")
    with pytest.raises(ValueError, match="no report has been accepted yet"):
        pem.aggregator(plan).result()
    with pytest.raises(ValueError, match="differently configured PEM"):
        ldp.PEM(2.0, 8, 32).aggregator(plan)


def test_corrupt_packed_bits_are_refused():
    # CMS at width 20 sends 3 bytes of bits: the last 4 are padding and must be 0 (so must OUE's)
    cms = ldp.CMS(2.0, m=16, width=20)
    rs = report_many(cms, [1, 2], users=[0, 1])
    assert len(rs[0]) == HEADER_BYTES + 8 + 3
    bad = rs[0][:-1] + bytes([rs[0][-1] | 1])
    parsed = parse_reports(cms, [bad, rs[1]])
    assert parsed.problems == [(0, "has question 0's field 'bits' out of range: bits has bits set beyond width = 20")]
    assert parsed.n_valid == 1


# ---------------------------------------------------------------------------
# the aggregation: a clear top-k from 50,000 devices, again as reports arrive, and the law of privatize
# ---------------------------------------------------------------------------
def test_fifty_thousand_devices_give_a_clear_top_k(pem_plan):
    # Devices draw OS coins, so the result is random: the data are chosen so that missing a heavy hitter is
    # out of reach (eight values of 2,500 users each, 30,000 users with distinct values).  Section 4.2.3's
    # identification probability (eq. (5), eq. (4)) puts the chance of F1 < 1 below 1e-9 for these data;
    # the zipf data of the other tests (8th vs 9th value: 913 vs 759 users) would miss one in about 1 run of 5.
    pem, plan = pem_plan
    n = plan.n
    distinct = datasets.random_distinct_values(30_008, 32, rng=8)
    values = np.random.default_rng(9).permutation(np.concatenate([np.repeat(distinct[:8], 2_500), distinct[8:]]))
    data = datasets.Dataset.from_values(values, 32, "separated")
    freqs = np.sort(np.unique(values, return_counts=True)[1])[::-1] / n
    chance = identification_probability(pem.config(n), pem.epsilon, freqs, n=n)
    assert data.n == n and 1 - chance.prod() < 1e-9
    server = pem.aggregator(plan)
    devices = report_many(plan, data.values, users=np.arange(data.n))
    assert server.add_many(devices[:20_000]) == []
    early = server.result(rng=0)
    assert early.n == 20_000
    assert server.add_many(devices[20_000:]) == [] and server.n_reports == data.n
    res = server.result(rng=0)
    assert res.n == data.n and metrics.f1(data.top(8), res.heavy_hitters) == 1.0


def test_devices_and_simulation_agree_in_law(data, pem_plan):
    # Reports are i.i.d. per user given her value, and aggregate() is a function of the reports (and its
    # tie-breaking rng): equal per-report laws give equal laws of the result.  Checked on the report law
    # (OLH's offset y - H(v) mod d' against GRR's pmf, the hash seeds' top bits uniform) and on the
    # estimates of the top 8 from both paths (two independent draws of the same law).
    pem, plan = pem_plan
    devices = report_many(plan, data.values, users=np.arange(data.n))
    server = pem.aggregator(plan)
    server.add_many(devices)
    mine, sim = server.reports(), pem.privatize(data.values, plan=plan, rng=11)
    for reps in (mine, sim):
        for g in range(plan.n_groups):
            r = reps.group_reports(g)[0]
            q = plan.questions[g][0]
            olh = q.oracle()
            vals = q.answer(data.values[reps.labels == g], plan.m)
            off = (r.y.astype(np.int64) - olh.hash(r.seed, vals).astype(np.int64)) % olh.d_prime
            counts = np.bincount(off, minlength=olh.d_prime)
            assert stats.chisquare(counts, olh.output_pmf(0) * len(r)).pvalue > ALPHA
            top = np.bincount((r.seed >> np.uint64(60)).astype(np.int64), minlength=16)
            assert stats.chisquare(top).pvalue > ALPHA
    a, b = server.result(rng=1), pem.aggregate(sim, rng=1)
    truth = data.top(8)
    ea = dict(zip(ldp.values.to_ints(a.heavy_hitters), a.estimates))
    eb = dict(zip(ldp.values.to_ints(b.heavy_hitters), b.estimates))
    g_final = plan.n_groups - 1  # PEM's last group reports the whole value
    N = plan.sizes()[g_final]
    final_values = data.values[plan.labels() == g_final]
    compared = 0
    for v in ldp.values.to_ints(truth):
        if v in ea and v in eb:  # scaled estimates (n / N) (I - N q) / (p - q) of two independent draws
            count = int(np.sum(final_values == v))
            var = plan.questions[g_final][0].oracle().variance(N, count=count) * (data.n / N) ** 2
            assert abs(ea[v] - eb[v]) <= stats.norm.isf(ALPHA / 2) * math.sqrt(2 * var)
            compared += 1
    assert compared >= 6


def test_report_many_may_repeat_a_user_and_the_server_takes_one(pem_plan):
    pem, plan = pem_plan
    rs = report_many(plan, [5, 5, 5], users=[9, 9, 9])
    assert len(set(rs)) == 3
    server = pem.aggregator(plan)
    refused = server.add_many(rs, invalid="skip")
    assert [i for i, _ in refused] == [1, 2] and server.n_reports == 1


def test_the_aggregator_hands_its_reports_to_the_engines(pem_plan, data):
    pem, plan = pem_plan
    server = pem.aggregator(plan)
    server.add_many(report_many(plan, data.values[:3000], users=np.arange(3000)))
    server.add_many(report_many(plan, data.values[3000:6000], users=np.arange(3000, 6000)))
    assert len(server.batches()) == 2
    merged = server.reports()
    assert isinstance(merged, ProtocolReports) and merged.n == 6000 and len(server.batches()) == 1
    src = ldp.engines.ReportSupport(merged, rng=np.random.default_rng(0))
    assert pem.identify(src).n == 6000
    assert "Aggregator(PEM" in repr(server) and "6000 of n = 50000" in repr(server)


# ---------------------------------------------------------------------------
# the device protects its user: a ceiling on epsilon, plans it can check, bounded pools
# ---------------------------------------------------------------------------
def test_the_device_refuses_a_plan_above_its_epsilon_ceiling():
    from ldp.client import DEFAULT_MAX_EPSILON

    assert DEFAULT_MAX_EPSILON == 4.0
    loud = ldp.PEM(5.0, 4, 16, eta=6).plan(200, rng=0)
    for plan in (loud, loud.to_json(), ldp.OLH(5.0, m=16)):
        with pytest.raises(ValueError, match=r"epsilon = 5\.0 .*max_epsilon = 4\.0.*\(0, 4\.0\]"):
            report(plan, 3, user=1)
        with pytest.raises(ValueError, match=r"max_epsilon = 4\.0"):
            report_many(plan, [3, 4], users=[1, 2])
        assert len(report(plan, 3, user=1, max_epsilon=5.0)) > HEADER_BYTES  # the device's owner decides
    with pytest.raises(ValueError, match=r"max_epsilon = 4\.5"):
        report(loud, 3, user=1, max_epsilon=4.5)
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"max_epsilon must be"):
            report(loud, 3, user=1, max_epsilon=bad)
    with pytest.raises(TypeError):
        report(loud, 3, 1)  # user and the ceilings are keyword-only


def test_the_device_refuses_pools_beyond_its_limit_and_plans_it_cannot_check():
    from dataclasses import replace

    from ldp.client import DEFAULT_MAX_POOL_SIZE

    assert DEFAULT_MAX_POOL_SIZE == 2**16
    flh = ldp.PEM(2.0, 4, 16, eta=6, oracle="FLH", pool_size=2**17).plan(200, rng=0)
    with pytest.raises(ValueError, match=r"pool_size = 131072 .*max_pool_size = 65536.*\[1, 65536\]"):
        report(flh, 3, user=1)
    assert report(flh, 3, user=1, max_pool_size=2**17)
    with pytest.raises(ValueError, match=r"pool_size = 131072"):
        report(ldp.FLH(2.0, m=16, pool_size=2**17), 3, user=1)
    plan = ldp.PEM(2.0, 4, 16, eta=6).plan(200, rng=0)
    overspent = replace(plan, params={**plan.params, "epsilon": 1.0})  # its groups spend 2.0
    with pytest.raises(ValueError, match=r"cannot check.*spends epsilon = 2\.0.*more than the budget"):
        report(overspent, 3, user=1)
    unknown = replace(plan, assignment="mine")
    with pytest.raises(ValueError, match=r"cannot check.*assignment rule 'mine'"):
        report(unknown, 3, user=1)
    with pytest.raises(ldp.core.PlanError, match="MAX_PLAN_BYTES"):
        report(plan.to_json() + " " * ldp.core.MAX_PLAN_BYTES, 3, user=1)
