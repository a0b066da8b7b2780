"""F1, NCR (section 4.2.1) and the squared error of section 6.2.6."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldp import metrics
from ldp.values import from_ints

U = np.uint64


def arr(*xs):
    return np.array(xs, dtype=U)


class TestF1:
    def test_perfect_and_empty(self):
        t = arr(1, 2, 3, 4)
        assert metrics.f1(t, arr(4, 3, 2, 1)) == 1.0
        assert metrics.f1(t, arr()) == 0.0  # nothing found
        assert metrics.f1(t, arr(9, 10)) == 0.0

    def test_definition(self):
        t = arr(1, 2, 3, 4)
        found = arr(1, 2, 7)  # P = 2/3, R = 2/4
        P, R = 2 / 3, 2 / 4
        assert metrics.precision_recall(t, found) == pytest.approx((P, R))
        assert metrics.f1(t, found) == pytest.approx(2 * P * R / (P + R))

    def test_equal_sizes_f1_is_precision(self):
        # section 4.2.1: |C_T| = |C_g| -> P = R = F1
        t, f = arr(1, 2, 3, 4, 5), arr(1, 2, 3, 8, 9)
        P, R = metrics.precision_recall(t, f)
        assert P == R == metrics.f1(t, f) == 0.6

    def test_two_word_values(self):
        t = np.array([[1, 2], [3, 4]], dtype=U)
        f = np.array([[3, 4], [1, 3]], dtype=U)
        assert metrics.f1(t, f) == 0.5

    def test_errors(self):
        with pytest.raises(ValueError, match="duplicate"):
            metrics.f1(arr(1, 1), arr(1))
        with pytest.raises(ValueError, match="at least one"):
            metrics.f1(arr(), arr(1))
        with pytest.raises(ValueError, match="same value representation"):
            metrics.f1(arr(1, 2), np.array([[0, 1]], dtype=U))
        with pytest.raises(TypeError):
            metrics.f1(np.array([1.5]), arr(1))


class TestNCR:
    def test_scores(self):
        t = arr(10, 20, 30, 40)  # scores 4, 3, 2, 1; max 10
        assert metrics.ncr(t, t) == 1.0
        assert metrics.ncr(t, arr(10)) == pytest.approx(4 / 10)
        assert metrics.ncr(t, arr(40)) == pytest.approx(1 / 10)
        assert metrics.ncr(t, arr(20, 30, 99)) == pytest.approx(5 / 10)
        assert metrics.ncr(t, arr()) == 0.0

    def test_rank_matters_unlike_f1(self):
        t = arr(1, 2, 3, 4)
        assert metrics.f1(t, arr(1)) == metrics.f1(t, arr(4))
        assert metrics.ncr(t, arr(1)) > metrics.ncr(t, arr(4))

    def test_order_of_found_irrelevant(self):
        t = arr(5, 6, 7)
        assert metrics.ncr(t, arr(7, 5)) == metrics.ncr(t, arr(5, 7)) == pytest.approx((3 + 1) / 6)


class TestSquaredError:
    def test_aligned(self):
        assert metrics.squared_error([10, 20], [12, 17]) == pytest.approx((4 + 9) / 2)

    def test_intersection_only(self):
        true_top = arr(1, 2, 3)
        true_counts = [100, 50, 20]
        found = arr(3, 9, 1)
        est = [25.0, 1e9, 90.0]  # 9 is not a true heavy hitter: ignored
        assert metrics.squared_error(true_counts, est, found, true_top) == pytest.approx((25 + 100) / 2)

    def test_nothing_identified(self):
        assert np.isnan(metrics.squared_error([1], [2], arr(5), arr(6)))

    def test_errors(self):
        with pytest.raises(ValueError):
            metrics.squared_error([1, 2], [1])
        with pytest.raises(ValueError, match="both"):
            metrics.squared_error([1], [1], arr(1))


# ---------------------------------------------------------------------------
# properties (hypothesis; derandomized, so every run checks the same examples)
# ---------------------------------------------------------------------------
PROPERTY = settings(derandomize=True, database=None, deadline=None, max_examples=200)
_SETS = st.lists(st.integers(0, 40), unique=True, max_size=15)  # small values: overlaps are frequent


def _wide(ints):
    """The same values as 2-word (m = 128) canonical rows."""
    return from_ints(ints, 128) if ints else np.zeros((0, 2), dtype=U)


@PROPERTY
@given(_SETS.filter(bool), _SETS)
def test_property_f1_is_the_set_formula_bounded_and_symmetric(true_top, found):
    t, f = arr(*true_top), arr(*found)
    both = len(set(true_top) & set(found))
    expected = 2 * both / (len(true_top) + len(found))  # 2PR/(P+R) = 2|C_T & C_g| / (|C_T| + |C_g|)
    assert metrics.f1(t, f) == pytest.approx(expected, abs=1e-12)
    assert 0.0 <= metrics.f1(t, f) <= 1.0
    if found:
        assert metrics.f1(f, t) == pytest.approx(metrics.f1(t, f), abs=1e-12)  # symmetric
        P, R = metrics.precision_recall(t, f)
        assert metrics.precision_recall(f, t) == pytest.approx((R, P), abs=1e-12)
    assert metrics.f1(t, t) == 1.0  # perfect score
    assert metrics.f1(_wide(true_top), _wide(found)) == metrics.f1(t, f)  # any value width
    rng = np.random.default_rng(len(found))
    assert metrics.f1(t, f[rng.permutation(len(found))]) == metrics.f1(t, f)  # order irrelevant


@PROPERTY
@given(_SETS.filter(bool), _SETS, st.integers(0, 60))
def test_property_ncr_is_the_rank_formula_bounded_and_monotone(true_ranked, found, extra):
    t, f = arr(*true_ranked), arr(*found)
    k = len(true_ranked)
    score = {v: k - j for j, v in enumerate(true_ranked)}  # q(v_j) = k + 1 - j, j 1-based
    expected = sum(score.get(v, 0) for v in found) / (k * (k + 1) / 2)
    got = metrics.ncr(t, f)
    assert got == pytest.approx(expected, abs=1e-12) and 0.0 <= got <= 1.0
    assert metrics.ncr(t, t) == 1.0  # perfect score
    assert metrics.ncr(t, arr(*[v for v in found if v in score])) == got  # only true values count
    if extra not in found:
        assert metrics.ncr(t, arr(*found, extra)) >= got  # finding more never lowers NCR
    assert metrics.ncr(_wide(true_ranked), _wide(found)) == got


@PROPERTY
@given(_SETS.filter(bool), _SETS, st.data())
def test_property_squared_error_over_the_intersection(true_top, found, data):
    counts = data.draw(st.lists(st.integers(0, 1000), min_size=len(true_top), max_size=len(true_top)))
    est = data.draw(st.lists(st.floats(-1e3, 1e3), min_size=len(found), max_size=len(found)))
    truth = dict(zip(true_top, counts))
    pairs = [(truth[v], e) for v, e in zip(found, est) if v in truth]
    got = metrics.squared_error(counts, est, arr(*found), arr(*true_top))
    if not pairs:
        assert np.isnan(got)
    else:
        assert got == pytest.approx(sum((c - e) ** 2 for c, e in pairs) / len(pairs), rel=1e-12, abs=1e-9)
        assert got >= 0
    assert metrics.squared_error(counts, counts, arr(*true_top), arr(*true_top)) == 0.0  # exact estimates
