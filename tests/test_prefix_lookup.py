"""The look-ups of held answers from the candidates' side against the general path.

:func:`ldp.engines.prefix_lookup.extension_counts` (extension candidates) and
:func:`ldp.engines.prefix_lookup.explicit_counts` (explicit candidate lists) must give exactly what
:func:`ldp.engines.tallies.held_answers` followed by the set's ``index_of`` gives (the candidates held,
their counts, in increasing position): on values of one and of several 64-bit words, with candidates
that are and are not held, for one group's row and for every distinct value.
"""
import numpy as np
import pytest

import ldp
from ldp.core import ExplicitCandidates, ExtendCandidates, Question
from ldp.engines.prefix_lookup import explicit_counts, extension_counts
from ldp.engines.tallies import held_answers, segment_tally
from ldp.values import prefix, sort_unique


def _same(got, want):
    assert got[0].dtype == np.int64 and got[1].dtype == want[1].dtype
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[0].shape[0] > 0


def _general(t, q, idx, cnt, cands):
    ans, total = held_answers(t, q, idx, cnt, ordered=True)
    pos = cands.index_of(ans)
    ok = pos >= 0
    pos, total = pos[ok], total[ok]
    o = np.argsort(pos, kind="stable")
    return pos[o], total[o]


def _check_rows(lookup, data, t, q, cands, rng):
    """``lookup`` against the general path for every distinct value and for a random third of them (one row)."""
    every = np.arange(data.n_distinct)
    row = np.sort(rng.choice(data.n_distinct, size=data.n_distinct // 3, replace=False))
    for idx, cnt in ((every, data.distinct_counts), (row, rng.integers(0, 3, row.shape[0]))):
        _same(lookup(t, idx, cnt, cands), _general(t, q, idx, cnt, cands))


@pytest.mark.parametrize("m", [24, 64, 100, 160])
@pytest.mark.parametrize("eta", [1, 4, 10])
def test_extension_counts_equal_the_general_path(m, eta):
    rng = np.random.default_rng(m * 100 + eta)
    data = ldp.core.Dataset(ldp.datasets.exponential(5_000, scale=0.05, m=m, rng=rng).values, m)
    for width in sorted({eta + 1, m // 2, m - 1, m}):
        if width <= eta:
            continue
        q = Question(0, width, 1.0)
        t = segment_tally(data, 0, width)
        held_parents = prefix(t.unique, width, width - eta)
        pick = rng.random(held_parents.shape[0]) < 0.5  # some parents held, some not, plus random ones
        parents = sort_unique(np.concatenate([held_parents[pick],
                                              ldp.values.uniform(50, width - eta, rng=rng)]))
        _check_rows(extension_counts, data, t, q, ExtendCandidates(parents, width - eta, eta), rng)


def test_extension_counts_needs_a_prefix_tally():
    data = ldp.core.Dataset(np.arange(100, dtype=np.uint64), 16)
    t = segment_tally(data, 4, 16)  # not a prefix: its answers do not come out sorted
    cands = ExtendCandidates(np.arange(4, dtype=np.uint64), 4, 8)
    with pytest.raises(ValueError, match="prefix question"):
        extension_counts(t, np.arange(100), np.ones(100, dtype=np.int64), cands)


@pytest.mark.parametrize("m", [24, 64, 100, 160])
def test_explicit_counts_equal_the_general_path(m):
    rng = np.random.default_rng(m)
    data = ldp.core.Dataset(ldp.datasets.exponential(5_000, scale=0.05, m=m, rng=rng).values, m)
    for width in sorted({m // 2, m - 1, m}):
        q = Question(0, width, 1.0)
        t = segment_tally(data, 0, width)
        held = t.unique[rng.random(t.unique.shape[0]) < 0.3]  # answers some value has, and random ones
        # the last answer too: its values run to the end of the distinct values
        cands = ExplicitCandidates(np.concatenate([held, t.unique[-1:], ldp.values.uniform(40, width, rng=rng)]),
                                   width)
        _check_rows(explicit_counts, data, t, q, cands, rng)
    none = ExplicitCandidates(np.zeros(0, dtype=t.unique.dtype).reshape((0,) + t.unique.shape[1:]), m)
    assert explicit_counts(t, np.arange(data.n_distinct), data.distinct_counts, none)[0].shape == (0,)
