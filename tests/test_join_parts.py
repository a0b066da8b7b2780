"""Whole values joined from their parts (:func:`ldp.core.join_parts`) are the parts' bits side by side.

Checked against Python's integers (``sum part_j << (bits after part j)``) for parts of one word joined
into values of one and of several words (parts straddling a word boundary), and parts of several words;
and the products of part lists (:func:`ldp.core.join_products`) against ``join_parts`` of the columns of
``itertools.product``.
"""
import itertools

import numpy as np
import pytest

from ldp.core import join_parts, join_products
from ldp.values import from_ints, to_ints, uniform


def _reference(parts, widths):
    out = [0] * parts[0].shape[0]
    for part, w in zip(parts, widths):
        out = [(v << w) | x for v, x in zip(out, to_ints(part))]
    return out


@pytest.mark.parametrize("widths", [(6,) * 27, (11,) * 14 + (6,), (30, 30, 4), (1, 63, 64, 2), (20, 28),
                                    (64, 64), (70, 10), (10, 100, 30)])
def test_join_parts_matches_integers(widths):
    rng = np.random.default_rng(sum(widths))
    parts = [uniform(500, w, rng=rng) for w in widths]
    got = join_parts(parts, widths)
    assert got.dtype == np.uint64
    assert to_ints(got) == _reference(parts, widths)
    np.testing.assert_array_equal(got, from_ints(_reference(parts, widths), sum(widths)))


def test_join_parts_of_signed_one_word_parts():
    parts = [np.arange(5, dtype=np.int64), np.arange(5, dtype=np.int64) * 3]
    assert to_ints(join_parts(parts, [40, 40])) == [(i << 40) | 3 * i for i in range(5)]


@pytest.mark.parametrize("widths", [(6,) * 27, (11,) * 14 + (6,), (30, 30, 4), (1, 63, 64, 2), (20, 28), (64, 64)])
def test_join_products_are_the_joined_columns_of_each_product(widths):
    rng = np.random.default_rng(len(widths))
    groups = [[uniform(int(rng.integers(1, 4 if len(widths) < 10 else 2)), w, rng=rng) for w in widths]
              for _ in range(3)]
    groups.append([uniform(1, w, rng=rng) for w in widths])  # one combination only
    want = []
    for g in groups:
        combos = list(itertools.product(*[to_ints(p) for p in g]))  # the last position varying fastest
        cols = [np.array(c, dtype=np.uint64) for c in zip(*combos)]
        want.append(join_parts(cols, widths))
    want = np.concatenate(want)
    got = join_products(groups, widths)
    assert got.dtype == np.uint64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_join_products_refuses_empty_lists_and_wide_parts():
    with pytest.raises(ValueError, match="at least one part"):
        join_products([[np.zeros(0, dtype=np.uint64), np.ones(2, dtype=np.uint64)]], [4, 4])
    with pytest.raises(ValueError, match="1 to 64 bits"):
        join_products([[np.ones(1, dtype=np.uint64)]], [70])
