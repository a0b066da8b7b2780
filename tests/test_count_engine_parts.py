"""The count engine's building blocks against the plain computations they replace.

The sparse group counts (:class:`ldp.engines.groupcounts.GroupCounts`), the answer counts taken from
them, the positions of the drawn unheld candidates and the compiled steps of the sparse binomial
sampler must give exactly what the dense tables and the numpy formulas give: the same integers, the
same floats and the same random stream (``benchmarks/check_identical_counts.py`` checks whole runs).
"""
import numpy as np
import pytest

import ldp
from ldp.core import Question
from ldp.engines import binomial_tail_table, iid_binomial_top, sum_tail_table
from ldp.engines.counts import unheld_positions
from ldp.engines.groupcounts import GroupCounts, users_by_value
from ldp.engines.sampling import band_values
from ldp.engines.tallies import channel_tally, held_answers, segment_tally


def _dense(data, labels, G):
    out = np.zeros((G, data.n_distinct), dtype=np.int64)
    np.add.at(out, (labels.astype(np.int64), data.user_index), 1)
    return out


@pytest.fixture(scope="module")
def data():
    return ldp.datasets.exponential(20_000, scale=0.1, m=24, rng=3)


@pytest.mark.parametrize("G", [1, 7, 300])  # the dense table's pass (G * distinct <= n) and the value walk
def test_group_counts_equal_the_dense_table(data, G):
    labels = np.random.default_rng(G).integers(0, G, data.n).astype(np.uint8 if G <= 256 else np.uint16)
    if G > 1:
        labels[labels == G - 1] = 0  # an empty group
    rows = GroupCounts.count(data, labels, G)
    dense = _dense(data, labels, G)
    np.testing.assert_array_equal(rows.dense(), dense)
    np.testing.assert_array_equal(rows.sizes(), dense.sum(axis=1))
    for g in range(G):
        idx, cnt = rows.row(g)
        assert np.all(np.diff(idx) > 0) and np.all(cnt > 0)
        np.testing.assert_array_equal(rows.dense_row(g), dense[g])
    back = GroupCounts.from_dense(dense)
    for name in ("indptr", "index", "counts"):
        np.testing.assert_array_equal(getattr(back, name), getattr(rows, name))


def test_users_by_value_is_a_stable_counting_sort(data):
    order, starts, index = users_by_value(data)
    np.testing.assert_array_equal(order, np.argsort(data.user_index, kind="stable"))
    np.testing.assert_array_equal(np.diff(starts), data.distinct_counts)
    np.testing.assert_array_equal(index, data.user_index)
    assert order.dtype == index.dtype == np.int32
    assert users_by_value(data)[0] is order  # kept with the data set


def test_group_counts_refuse_labels_of_another_length(data):
    with pytest.raises(ValueError, match="labels must give the group"):
        GroupCounts.count(data, np.zeros(data.n - 1, dtype=np.uint8), 2)


def test_without_removes_users_like_the_dense_table(data):
    G = 5
    labels = np.random.default_rng(1).integers(0, G, data.n).astype(np.uint8)
    users = np.sort(np.random.default_rng(2).choice(data.n, 500, replace=False))
    rows = GroupCounts.count(data, labels, G).without(labels[users], data.user_index[users])
    expect = _dense(data, labels, G)
    np.subtract.at(expect, (labels[users].astype(np.int64), data.user_index[users]), 1)
    np.testing.assert_array_equal(rows.dense(), expect)
    one = GroupCounts.count(data, labels, G)
    idx, cnt = one.row(0)
    with pytest.raises(ValueError, match="counted"):  # more users of a value than the group holds
        one.without(np.zeros(int(cnt[0]) + 1, dtype=np.int64), np.full(int(cnt[0]) + 1, idx[0]))


@pytest.mark.parametrize("G, removed", [(5, 15_000), (3000, 40)])
def test_without_counts_few_or_many_removed_users_alike(data, G, removed):
    """Many users out of few groups (counted over all (group, value) pairs) or a few out of many groups (each
    found among the counted pairs) give the dense table less those users; a (group, value) pair no user holds,
    or a group beyond the table, is refused either way."""
    rng = np.random.default_rng(G)
    labels = rng.integers(0, G, data.n).astype(np.int64)
    users = np.sort(rng.choice(data.n, removed, replace=False))
    full = GroupCounts.count(data, labels, G)
    rows = full.without(labels[users], data.user_index[users])
    expect = _dense(data, labels, G)
    np.subtract.at(expect, (labels[users], data.user_index[users]), 1)
    np.testing.assert_array_equal(rows.dense(), expect)
    g, d = np.argwhere(_dense(data, labels, G) == 0)[0]
    with pytest.raises(ValueError, match="counted"):
        full.without(np.r_[labels[users], g], np.r_[data.user_index[users], d])
    with pytest.raises(ValueError, match="counted"):
        full.without(np.r_[labels[users], G], np.r_[data.user_index[users], 0])


def test_without_and_no_zeros_are_the_rows_of_the_remaining_users(data):
    """keep_zeros=False: exactly the rows of the users left (what counting them afresh, or the dense table less
    the removed users, gives); a value whose every holder in a group was removed leaves that group's row."""
    G = 5
    labels = np.random.default_rng(1).integers(0, G, data.n).astype(np.uint8)
    users = np.sort(np.random.default_rng(2).choice(data.n, 500, replace=False))
    full = GroupCounts.count(data, labels, G)
    kept = full.without(labels[users], data.user_index[users])
    rows = full.without(labels[users], data.user_index[users], keep_zeros=False)
    expect = _dense(data, labels, G)
    np.subtract.at(expect, (labels[users].astype(np.int64), data.user_index[users]), 1)
    back = GroupCounts.from_dense(expect)
    for name in ("indptr", "index", "counts"):
        np.testing.assert_array_equal(getattr(rows, name), getattr(back, name))
    assert np.all(rows.counts > 0) and np.any(kept.counts == 0)  # some value lost every holder of a group
    np.testing.assert_array_equal(rows.sizes(), kept.sizes())


def _dense_answers(t, q, row):
    """What the engine computed from a dense row before the sparse rows (the reference)."""
    if t.unique is None:
        cnt = np.rint(np.bincount(t.inverse, weights=row, minlength=q.domain_size)).astype(np.int64)
        nz = np.flatnonzero(cnt)
        return nz.astype(np.uint64), cnt[nz]
    if t.starts is not None:
        cnt = np.add.reduceat(row, t.starts)
    else:
        cnt = np.rint(np.bincount(t.inverse, weights=row, minlength=len(t.unique))).astype(np.int64)
    ok = cnt > 0
    return t.unique[ok], cnt[ok]


@pytest.mark.parametrize("wide", [False, True])
def test_held_answers_equal_the_dense_sums(wide):
    data = (ldp.datasets.exponential(30_000, scale=0.1, m=96, rng=4) if wide
            else ldp.datasets.exponential(30_000, scale=0.1, m=24, rng=4))
    m, G = data.m, 6
    labels = np.random.default_rng(5).integers(0, G, data.n).astype(np.uint8)
    rows = GroupCounts.count(data, labels, G)
    users = np.arange(0, data.n, 97)
    rows = rows.without(labels[users], data.user_index[users])  # some zero counts
    dense = rows.dense()
    questions = [Question(0, m // 3, 1.0), Question(0, m, 1.0), Question(m // 4, m // 2, 1.0),
                 Question(m // 3, m // 3 + 5, 1.0, channels=16, seed=11),
                 Question(0, 12, 1.0, channels=3, seed=12)]
    for q in questions:
        t = channel_tally(data, q) if q.channels else segment_tally(data, q.start, q.stop)
        for groups in ((0,), (2,), (1, 3, 4), tuple(range(G - 1))):
            idx, cnt = rows.rows(groups)
            got = held_answers(t, q, idx, cnt, ordered=len(groups) == 1 and t.starts is not None)
            want = _dense_answers(t, q, dense[list(groups)].sum(axis=0))
            assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])


def _tally_of(data, q):
    return channel_tally(data, q) if q.channels else segment_tally(data, q.start, q.stop)


def test_count_support_answer_counts_equal_the_dense_sums(data):
    P = ldp.TreeHist(2.0, 4, data.m, bits_per_level=3)
    src = P.source(data, rng=1, engine="counts")
    for g, qs in enumerate(src.plan.questions):
        q = qs[0]
        got = src.answer_counts((g,), q)
        want = _dense_answers(_tally_of(data, q), q, src.gcounts[g])
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    whole = src.plan.questions[0][-1]  # asked by every group: the data set's own counts
    got = src.answer_counts(range(src.plan.n_groups), whole)
    want = _dense_answers(_tally_of(data, whole), whole, data.distinct_counts)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def _unheld_loop(nz_idx, bsize, nb, drawn, counts, ordinals):
    """The per-block loop the vectorised mapping replaced (the reference)."""
    nz_blk = nz_idx // bsize
    blk_start = np.searchsorted(nz_blk, np.arange(nb + 1))
    out = []
    for b, ordinal in zip(drawn, ordinals):
        z = nz_idx[blk_start[b]:blk_start[b + 1]] - b * bsize
        shift = z - np.arange(z.shape[0])
        out.append(b * bsize + ordinal + np.searchsorted(shift, ordinal, side="right"))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


@pytest.mark.parametrize("bsize,nb,held", [(64, 1, 20), (16, 40, 300), (8, 5, 40), (1000, 3, 0), (4, 6, 24)])
def test_unheld_positions_equal_the_per_block_loop(bsize, nb, held):
    g = np.random.default_rng(bsize + nb + held)
    for _ in range(20):
        nz_idx = np.sort(g.choice(bsize * nb, held, replace=False)).astype(np.int64)
        N0 = bsize - np.bincount(nz_idx // bsize, minlength=nb)
        got = np.minimum(g.integers(0, 4, nb), N0)
        drawn = np.flatnonzero(got)
        ordinals = [g.choice(int(N0[b]), int(got[b]), replace=False) for b in drawn]
        pos = unheld_positions(nz_idx, bsize, drawn, got[drawn], ordinals)
        np.testing.assert_array_equal(pos, _unheld_loop(nz_idx, bsize, nb, drawn, got[drawn], ordinals))
        assert not np.isin(pos, nz_idx).any() and np.unique(pos).shape[0] == pos.shape[0]


def _band_values_numpy(S, C, a, b, *, rng):
    u = rng.random(a.shape[0])
    upper = S[a] <= 0.5
    out = np.empty(a.shape[0], dtype=np.int64)
    if upper.any():
        aa, bb, uu = a[upper], b[upper], u[upper]
        x = np.searchsorted(-S, -(S[bb] + uu * (S[aa] - S[bb])), side="right") - 1
        out[upper] = np.clip(x, aa, bb - 1)
    low = ~upper
    if low.any():
        aa, bb, uu = a[low], b[low], u[low]
        x = np.searchsorted(C, C[aa] + uu * (C[bb] - C[aa]), side="right") - 1
        out[low] = np.clip(x, aa, bb - 1)
    return out


def _iid_binomial_top_numpy(N0, n, q, K, *, rng, min_support=None, extra=None):
    """The sampler as numpy formulas (the reference for the compiled steps)."""
    N0 = np.asarray(N0, dtype=np.int64)
    B = N0.shape[0]
    lo, S, C = (binomial_tail_table(int(n), float(q)) if extra is None
                else sum_tail_table(int(n), float(q), int(extra[0]), float(extra[1])))
    top = S.shape[0] - 1
    cur, R, got = np.full(B, top, dtype=np.int64), N0.copy(), np.zeros(B, dtype=np.int64)
    need = None if min_support is None else int(np.clip(min_support - lo, 0, top))
    vals, blks = [], []
    for _ in range(10_000):
        deficit = np.maximum(K - got, 0)
        want = deficit > 0
        if need is not None:
            want |= cur > need
        active = np.flatnonzero(want & (R > 0) & (cur > 0))
        if active.size == 0:
            break
        d, r, c = deficit[active].astype(float), R[active].astype(float), cur[active]
        E = np.where(d > 0, d + 4 * np.sqrt(d) + 4, 0.0)
        target = S[c] + E * C[c] / r
        new = np.searchsorted(-S, -target, side="right") - 1
        new = np.where(target > 1.0, 0, new)
        new = np.minimum(np.maximum(new, 0), c - 1)
        if need is not None:
            new = np.where(c > need, np.minimum(new, need), new)
            new = np.where(d > 0, new, np.minimum(c - 1, need))
        upper = S[new] <= 0.5
        num = np.where(upper, S[new] - S[c], C[c] - C[new])
        pi = np.where(new == 0, 1.0, np.clip(num / np.maximum(C[c], 1e-300), 0.0, 1.0))
        M = rng.binomial(R[active], pi)
        if M.sum():
            vals.append(_band_values_numpy(S, C, np.repeat(new, M), np.repeat(c, M), rng=rng) + lo)
            blks.append(np.repeat(active, M))
        R[active] -= M
        got[active] += M
        cur[active] = new
    if not vals:
        return got, np.zeros(0, dtype=np.int64)
    return got, np.concatenate(vals)[np.argsort(np.concatenate(blks), kind="stable")]


@pytest.mark.parametrize("N0,n,q,K,min_support,extra", [
    ([3000], 500, 0.1, 6, None, None), ([3000], 500, 0.1, 2, 64, None), ([5], 40, 0.3, 8, None, None),
    ([512] * 64, 60_000, 0.02, 1, None, None), ([200, 0, 7, 4000], 5000, 0.4, 3, 2100, None),
    ([10**6], 20_000, 0.001, 16, 35, None), ([2**20], 10**6, 0.05, 16, None, None),
    ([900, 40], 3000, 0.2, 5, None, (80, 0.6)), ([900], 3000, 0.2, 5, 700, (80, 0.6))])
def test_compiled_sampler_equals_the_numpy_formulas(N0, n, q, K, min_support, extra):
    for seed in range(5):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        got, v = iid_binomial_top(np.array(N0), n, q, K, rng=a, min_support=min_support, extra=extra)
        got_r, v_r = _iid_binomial_top_numpy(np.array(N0), n, q, K, rng=b, min_support=min_support, extra=extra)
        np.testing.assert_array_equal(got, got_r)
        np.testing.assert_array_equal(v, v_r)
        assert a.bit_generator.state == b.bit_generator.state  # the same draws, in the same order


def test_compiled_band_values_equal_the_numpy_formulas():
    lo, S, C = binomial_tail_table(4000, 0.3)
    g = np.random.default_rng(0)
    b = g.integers(1, S.shape[0], 5000)
    a = np.maximum(b - g.integers(1, 400, b.shape[0]), 0)
    x = band_values(S, C, a, b, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(x, _band_values_numpy(S, C, a, b, rng=np.random.default_rng(1)))
    assert np.all((a <= x) & (x < b))


def test_select_top_per_block_equals_the_full_ranking():
    """select_top's pre-filter for one candidate per block keeps exactly what ranking every candidate keeps."""
    from ldp.core import select_top
    g = np.random.default_rng(0)
    for K, min_support in ((1, None), (1, 30), (2, None)):
        for _ in range(30):
            N = int(g.integers(1, 400))
            support = g.integers(0, 40, N)  # many ties
            keys = g.random(N)
            blocks = g.integers(0, 25, N)
            order = np.lexsort((-keys, -support, blocks))
            b = blocks[order]
            first = np.r_[0, np.flatnonzero(b[1:] != b[:-1]) + 1]
            rank = np.arange(N) - np.repeat(first, np.diff(np.r_[first, N]))
            keep = rank < K
            if min_support is not None:
                keep |= support[order] >= min_support
            np.testing.assert_array_equal(select_top(support, keys, K, blocks=blocks, min_support=min_support),
                                          order[keep])
