"""Coin sources: the OS source is exact and unbiased; public parts never come from the private stream.

And the group assignment: chunked labels equal the one-shot shuffle; a device's group (Plan.group_of,
O(1) memory) equals the plan's labels.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ldp
from ldp.core import Plan, Question, assignment
from ldp.protocols import batches
from ldp.randomness import GeneratorCoins, SystemCoins, binary_expansion, coin_sources

ALPHA = 1e-6


@pytest.mark.parametrize("p", [0.0, 0.5, 1 / 3, 0.1, 2.0**-60, 1 - 2.0**-53, 5e-324, 0.7310585786300049])
def test_binary_expansion_is_exact(p):
    digits = binary_expansion(p)
    assert Fraction(int.from_bytes(digits, "big") if digits else 0, 256 ** len(digits)) == Fraction(p)


def test_system_bernoulli_and_below_have_the_right_law():
    c = SystemCoins()
    n = 400_000
    for p in (0.5, 0.1, 0.7310585786300049, 1 / 257):
        k = int(c.bernoulli(p, n).sum())
        assert stats.binomtest(k, n, p).pvalue > ALPHA
    assert not c.bernoulli(0.0, 1000).any() and c.bernoulli(1.0, 1000).all()
    assert c.bernoulli(2.0**-60, 100_000).sum() == 0  # exact: no rounding up to a multiple of 2**-53
    for k in (1, 2, 3, 7, 255, 256, 257, 1000, 2**31 + 1):
        x = c.below(k, 50_000)
        assert x.dtype == np.uint64 and int(x.max()) < k
        if k <= 1000:
            counts = np.bincount(x.astype(np.int64), minlength=k)
            assert k == 1 or stats.chisquare(counts).pvalue > ALPHA
    top = c.uint64(100_000) >> np.uint64(56)
    assert stats.chisquare(np.bincount(top.astype(np.int64), minlength=256)).pvalue > ALPHA
    assert c.bernoulli(0.3, (3, 4)).shape == (3, 4) and c.below(5, (2, 3)).shape == (2, 3)
    with pytest.raises(ValueError, match=r"p must be a probability in \[0, 1\]"):
        c.bernoulli(1.5, 3)


def test_public_parts_come_from_an_independent_stream():
    olh = ldp.OLH(2.0, m=16)
    seeds, keep, r = olh.draw_noise(1000, rng=5)
    own = np.random.default_rng(5)
    assert not np.array_equal(seeds, own.integers(0, 2**64, size=1000, dtype=np.uint64))  # not the private stream
    assert not np.isin(seeds, np.random.default_rng(5).bit_generator.random_raw(5000)).any()
    child = np.random.default_rng(5).spawn(1)[0]  # the documented default: a spawned child
    assert np.array_equal(seeds, child.integers(0, 2**64, size=1000, dtype=np.uint64))
    assert np.array_equal(keep, np.random.default_rng(5).random(1000) < olh.p)  # the coins: the stream itself
    s2, k2, r2 = olh.draw_noise(1000, rng=5, public_rng=9)  # an explicit public source changes only the seeds
    assert np.array_equal(k2, keep) and np.array_equal(r2, r) and not np.array_equal(s2, seeds)
    priv, pub = coin_sources(SystemCoins())
    assert isinstance(pub, SystemCoins) and pub is not priv
    assert coin_sources(1, public=False)[1] is None and isinstance(coin_sources(1)[0], GeneratorCoins)
    # GRR and OUE have no public parts: their draws are as before (nothing spawned)
    grr = ldp.GRR(1.0, 4)
    assert grr.privatize(np.array([0, 1, 2, 3]), rng=7) == grr.privatize(np.array([0, 1, 2, 3]), rng=7)


def test_batches_draw_public_seeds_and_coins_from_separate_streams():
    pem = ldp.PEM(2.0, 4, 16, gamma=0, eta=16)  # one group, one OLH question
    plan = pem.plan(1000, rng=0)
    reps = pem.privatize(np.full(1000, 77, dtype=np.uint64), plan=plan, rng=3).group_reports(0)[0]
    root = batches.noise_root(rng=3)
    pub = batches.block_rng(root, 0, batches.PUBLIC)
    priv = batches.block_rng(root, 0, batches.PRIVATE)
    assert np.array_equal(reps.seed, pub.integers(0, 2**64, size=1000, dtype=np.uint64))
    raw = batches.block_rng(root, 0, batches.PRIVATE).bit_generator.random_raw(4000)
    assert not np.isin(reps.seed, raw).any()  # the seeds sent in the clear are not outputs of the coins' stream
    olh = plan.questions[0][0].oracle()
    keep = priv.random(1000) < olh.p  # the private stream's first draws: the keep coins
    assert np.array_equal(keep, reps.y == olh.hash(reps.seed, np.full(1000, 77, dtype=np.uint64)))


def test_chunked_labels_equal_the_one_shot_shuffle(monkeypatch):
    fr = (0.3, 0.3, 0.4)
    for n in (2, 3, 10, 1000, 4097):
        one = assignment.assign_groups(n, fr, rng=np.random.default_rng(5))  # n - 1 <= 2**22: in one go
        for chunk in (1, 7, 100):
            monkeypatch.setattr(assignment, "_CHUNK", chunk)
            g = np.random.default_rng(5)
            assert np.array_equal(assignment.assign_groups(n, fr, rng=g), one)
            ref = np.random.default_rng(5)
            ref.bit_generator.random_raw(n - 1)
            assert g.integers(0, 2**62) == ref.integers(0, 2**62)  # the generator ends where it did


def test_a_device_finds_her_group_without_the_labels(monkeypatch):
    monkeypatch.setattr(assignment, "_CHUNK", 97)  # many chunks
    plan = ldp.PEM(2.0, 4, 64).plan(5000, rng=3)
    labels = Plan.from_json(plan.to_json()).labels()
    for u in (0, 1, 2, 96, 97, 98, 2500, 4998, 4999):
        fresh = Plan.from_json(plan.to_json())  # no labels cached
        assert int(fresh.group_of(u)) == labels[u] and "_labels" not in fresh.__dict__
    few = Plan.from_json(plan.to_json())
    assert np.array_equal(few.group_of([5, 3, 5, 4000]), labels[[5, 3, 5, 4000]])
    many = Plan.from_json(plan.to_json())
    assert np.array_equal(many.group_of(np.arange(100)), labels[:100]) and "_labels" in many.__dict__
    with pytest.raises(ValueError, match=r"users must be plan indices in \[0, n = 5000\), found 5000"):
        plan.group_of(5000)
    layout = Plan(8, (1.0,), ((Question(0, 8, 1.0),),))
    with pytest.raises(ValueError, match="layout without users"):
        layout.group_of(0)
