"""The deployment split: a published plan, users privatizing in batches, merged reports, aggregation.

And a first contact that reads well: compact reprs, the README snippet.
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import ldp
from ldp import datasets
from ldp.protocols import Plan, ProtocolReports, batches

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 1e-6

MAKERS = {
    "PEM": lambda: ldp.PEM(2.0, 4, 16, eta=6),
    "SPM": lambda: ldp.SPM(2.0, 4, 16, query_limit=2**10),
    "SPM final": lambda: ldp.SPM(2.0, 4, 16, query_limit=2**10, final_fraction=0.1),
    "MCM": lambda: ldp.MCM(2.0, 4, 16, query_limit=2**12),
    "Strawman final": lambda: ldp.Strawman(2.0, 4, 16, query_limit=2**12, final_fraction=0.1),
    # the protocols after PEM (TreeHist, SFP: chapter 08) and PEM with the other oracles: HR, Hashtogram, CMS reports
    "TreeHist": lambda: ldp.TreeHist(2.0, 4, 16, bits_per_level=4),
    "TreeHist final": lambda: ldp.TreeHist(2.0, 4, 16, bits_per_level=4, oracle="Hashtogram", final_fraction=0.2),
    "SFP": lambda: ldp.SFP(2.0, 4, 16, hash_bits=4, query_limit=2**13),
    "PEM HR": lambda: ldp.PEM(2.0, 4, 16, eta=6, oracle="HR"),
    "PEM CMS": lambda: ldp.PEM(2.0, 4, 16, eta=6, oracle="CMS"),
}


@pytest.fixture(scope="module")
def data():
    return datasets.zipf(20_000, m=16, rng=7)


def _batches(P, values, plan, cuts, rng):
    return [P.privatize(values[a:b], plan=plan, users=a, rng=rng) for a, b in zip(cuts[:-1], cuts[1:])]


@pytest.mark.parametrize("block", [None, 1000])
@pytest.mark.parametrize("name", list(MAKERS))
def test_batches_give_the_reports_of_one_batch(data, name, block, monkeypatch):
    if block is not None:  # many noise blocks, batches cutting through them
        monkeypatch.setattr(batches, "NOISE_BLOCK", block)
    P = MAKERS[name]()
    plan = P.plan(data.n, rng=1)
    one = P.privatize(data.values, plan=plan, rng=5)
    cuts = [0, 1, 2, 999, 1000, 1001, 7000, 12_345, 19_999, 20_000]
    parts = _batches(P, data.values, plan, cuts, rng=5)
    assert sum(len(p) for p in parts) == data.n and len(parts[0]) == 1  # down to one user
    merged = ProtocolReports.concat(parts[::-1])  # any order
    assert merged == one and merged.complete
    a, b = P.aggregate(one, rng=3), P.aggregate(merged, rng=3)
    np.testing.assert_array_equal(a.heavy_hitters, b.heavy_hitters)
    np.testing.assert_array_equal(a.estimates, b.estimates)
    np.testing.assert_array_equal(a.support, b.support)
    # users given as an explicit, shuffled index array
    g = np.random.default_rng(0)
    idx = g.permutation(data.n)
    halves = [P.privatize(data.values[i], plan=plan, users=i, rng=5) for i in np.array_split(idx, 3)]
    assert ProtocolReports.concat(halves) == one


def test_noise_is_per_user_not_per_batch(data):
    # the same user gets the same report whichever batch she is in; another rng changes it
    P = MAKERS["MCM"]()
    plan = P.plan(data.n, rng=1)
    alone = P.privatize(data.values[777:778], plan=plan, users=777, rng=9)
    inside = P.privatize(data.values[700:800], plan=plan, users=700, rng=9)
    g = int(alone.labels[0])
    j = int(np.sum(inside.labels[:77] == g))  # her position among the batch's users of her group
    for q in range(len(plan.questions[g])):
        assert alone.group_reports(g)[q] == inside.group_reports(g)[q][j]
    other = P.privatize(data.values[777:778], plan=plan, users=777, rng=10)
    assert other.group_reports(g)[0] != alone.group_reports(g)[0]
    # a Generator is used as it is: each call gets new randomness (SPEC 7)
    gen = np.random.default_rng(9)
    r1 = P.privatize(data.values[:10], plan=plan, users=0, rng=gen)
    r2 = P.privatize(data.values[:10], plan=plan, users=0, rng=gen)
    assert r1 != r2


def test_batch_reports_follow_the_olh_law():
    # eps-LDP of each report is OLH's (tests/test_oracles.py); check the batch path draws it right:
    # a report supports its user's value with probability p, any other value with probability q
    P = ldp.PEM(1.0, 2, 16, gamma=0, eta=16)  # one group: every user sends OLH(v) at eps = 1
    n = 60_000
    values = np.full(n, 12345, dtype=np.uint64)
    plan = P.plan(n, rng=0)
    parts = _batches(P, values, plan, [0, 5, 20_000, 20_001, n], rng=4)
    r = ProtocolReports.concat(parts).group_reports(0)[0]
    olh = ldp.OLH(1.0, m=16)
    s_own, s_other = olh.support(r, np.array([12345, 54321], dtype=np.uint64))
    for k, prob in ((s_own, olh.p), (s_other, olh.q)):
        z = (k - n * prob) / math.sqrt(n * prob * (1 - prob))
        assert abs(z) < stats.norm.isf(ALPHA / 2)
    offset = (r.y.astype(np.int64) - olh.hash(r.seed, values).astype(np.int64)) % olh.d_prime
    counts = np.bincount(offset, minlength=olh.d_prime)
    assert stats.chisquare(counts, olh.output_pmf(0) * n).pvalue > ALPHA


def test_plan_is_public_serialisable_and_checked(data, tmp_path):
    P = ldp.MCM(2.0, 4, 16, query_limit=2**12)
    plan = P.plan(data.n, rng=1)
    assert plan.n == data.n and plan.protocol == "MCM" and plan.params["channels"] == P.channels
    back = Plan.from_json(plan.to_json())
    assert back == plan and np.array_equal(back.labels(), plan.labels())
    json.loads(plan.to_json())  # plain JSON
    assert P.plan(data.n, rng=1) == plan and P.plan(data.n, rng=2) != plan
    assert np.array_equal(np.bincount(plan.labels()), plan.sizes())
    # privatize with the loaded plan and save/load the reports: same aggregate
    reports = P.privatize(data.values, plan=back, rng=3)
    reports.save(tmp_path / "r.npz")
    a = P.aggregate(ProtocolReports.load(tmp_path / "r.npz"), rng=0)
    b = P.aggregate(P.privatize(data.values, plan=plan, rng=3), rng=0)
    np.testing.assert_array_equal(a.heavy_hitters, b.heavy_hitters)
    # a plan from another protocol or configuration is refused before any work
    with pytest.raises(ValueError, match="the plan was made by MCM, not PEM"):
        ldp.PEM(2.0, 4, 16, eta=6).privatize(data.values, plan=plan)
    with pytest.raises(ValueError, match="differently configured MCM"):
        ldp.MCM(3.0, 4, 16, query_limit=2**12).privatize(data.values, plan=plan)
    with pytest.raises(TypeError, match="plan must be"):
        P.privatize(data.values, plan=plan.to_dict())


def test_counts_engine_uses_the_plan_of_the_protocol_engine(data):
    P = ldp.SPM(2.0, 4, 16, query_limit=2**10, final_fraction=0.2)
    src_c = P.source(data, rng=12, engine="counts")
    src_p = P.source(data, rng=12, engine="protocol")
    assert src_c.plan == src_p.plan
    np.testing.assert_array_equal(src_p.reports.labels, src_c.plan.labels())


def test_bad_batches(data):
    P = MAKERS["PEM"]()
    plan = P.plan(data.n, rng=1)
    v = data.values
    with pytest.raises(ValueError, match=r"values holds 10 users but the plan is for n = 20000 users.*users="):
        P.privatize(v[:10], plan=plan)
    with pytest.raises(ValueError, match=r"users .* must be an integer in \[0, n - len\(values\) = 19990\]"):
        P.privatize(v[:10], plan=plan, users=19_995)
    with pytest.raises(ValueError, match=r"users must be plan indices in \[0, n = 20000\), found 20000"):
        P.privatize(v[:2], plan=plan, users=[3, 20_000])
    with pytest.raises(ValueError, match="twice"):
        P.privatize(v[:2], plan=plan, users=[3, 3])
    with pytest.raises(ValueError, match="one plan index per value"):
        P.privatize(v[:2], plan=plan, users=[3])
    with pytest.raises(ValueError, match="users= needs plan="):
        P.privatize(v[:2], users=0)
    a = P.privatize(v[:100], plan=plan, users=0, rng=1)
    b = P.privatize(v[50:150], plan=plan, users=50, rng=1)
    with pytest.raises(ValueError, match="user 50 appears in more than one batch"):
        ProtocolReports.concat([a, b])
    c = P.privatize(v[100:200], plan=P.plan(data.n, rng=2), users=100, rng=1)
    with pytest.raises(ValueError, match="different plans"):
        ProtocolReports.concat([a, c])
    with pytest.raises(ValueError, match="at least one user of each"):
        P.aggregate(P.privatize(v[:1], plan=plan, users=0, rng=1))


def test_partial_reports_aggregate_over_the_reporting_users(data):
    P = MAKERS["PEM"]()
    plan = P.plan(data.n, rng=1)
    half = P.privatize(data.values[:10_000], plan=plan, users=0, rng=2)
    assert not half.complete
    res = P.aggregate(half, rng=0)
    assert res.n == 10_000 and sum(res.group_sizes) == 10_000


# ---------------------------------------------------------------------------
# first contact: compact reprs and the README snippet
# ---------------------------------------------------------------------------
def test_reprs_are_compact(data):
    P = ldp.PEM(2.0, 4, 16)
    plan = P.plan(data.n, rng=0)
    reports = P.privatize(data.values, plan=plan, rng=1)
    res = P.aggregate(reports, rng=2)
    for obj in (plan, reports, res, *res.rounds, reports.group_reports(0)[0]):
        text = repr(obj)
        assert len(text) < 300 and "\n" not in text and "array(" not in text, text
    assert re.fullmatch(r"HeavyHitterResult\(protocol='PEM', found=4, k=4, n=20000, epsilon=2\.0, "
                        r"engine='protocol', rounds=\d+, queries=\d+\)", repr(res))
    assert repr(reports).startswith("ProtocolReports(protocol='PEM', users=20000 of 20000, groups=")
    assert repr(plan).startswith("Plan(PEM, n=20000, m=16, ")


def _readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Using the library", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_readme_snippet_runs_and_leaves_no_file(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("LDP_FIGURE_DIR",)}
    out = subprocess.run([sys.executable, "-c", _readme_snippet()], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    assert list(tmp_path.iterdir()) == []  # save/load used a temporary folder
    lines = out.stdout.splitlines()
    assert 5 <= len(lines) <= 40 and max(map(len, lines)) <= 120, out.stdout
    assert "HeavyHitterResult(protocol='PEM'" in out.stdout and "array(" not in out.stdout
