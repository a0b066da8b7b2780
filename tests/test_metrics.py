"""F1, NCR (section 4.2.1) and the squared error of section 6.2.6."""
import numpy as np
import pytest

from ldp import metrics

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
