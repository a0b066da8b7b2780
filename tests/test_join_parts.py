"""Whole values joined from their parts (:func:`ldp.core.join_parts`) are the parts' bits side by side.

Checked against Python's integers (``sum part_j << (bits after part j)``) for parts of one word joined
into values of one and of several words (parts straddling a word boundary), and parts of several words.
"""
import numpy as np
import pytest

from ldp.core import join_parts
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
