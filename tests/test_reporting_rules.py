"""The decision rules of the reproduction report: inputs where each must pass and inputs where it must fail."""
import math

import numpy as np
import pandas as pd
import pytest

from ldp.book.claims import verdicts as V
from ldp.book.claims.rules import ArgmaxAt, Monotone, OrderingHolds, WithinSE, WithinTolerance
from ldp.book.claims.verdicts import NOT_REPRODUCED, NOT_TESTABLE, PARTLY, REPRODUCED, Decision


def within_se_frame(observed, expected, se):
    n = len(observed)
    return pd.DataFrame({"point": [f"p{i}" for i in range(n)], "observed": observed, "expected": expected,
                         "se": se})


def ordering_frame(a, b, se=0.01, others_min=None):
    n = len(a)
    out = pd.DataFrame({"point": [f"p{i}" for i in range(n)], "a": a, "se_a": se, "b": b, "se_b": se})
    if others_min is not None:
        out["others_min"] = others_min
    return out


def series_frame(ys, se=0.01, xs=None, name="s"):
    xs = list(range(len(ys))) if xs is None else xs
    return pd.DataFrame({"series": name, "x": xs, "y": ys, "se": se})


# --------------------------------------------------------------------------- #
# vocabulary, constants, helpers
# --------------------------------------------------------------------------- #
def test_vocabulary_is_exactly_the_four_verdicts():
    assert V.VERDICTS == ("reproduced", "partly reproduced", "not reproduced", "not testable here")
    with pytest.raises(ValueError, match="verdict"):
        Decision("roughly")


def test_family_alpha_is_the_two_sided_level_of_three_se():
    assert V.FAMILY_ALPHA == pytest.approx(0.0026998, rel=1e-4)
    table = V.tolerance_table()
    assert {"Z_TOL", "FAMILY_ALPHA", "MOST", "PARTLY_MARGIN", "F1_TOL", "SIMILAR_F1"} <= set(table["constant"])


@pytest.mark.parametrize("printed, tol", [("0.00075", 0.000005), ("28.5", 0.05), ("0.7", 0.05),
                                          ("4,410,000", 5000.0), ("0.023", 0.0005), ("64", 0.5), ("120", 5.0)])
def test_printed_tolerance_is_half_a_unit_of_the_last_digit(printed, tol):
    assert V.printed_tolerance(printed) == pytest.approx(tol)


def test_printed_tolerance_rejects_non_numbers():
    with pytest.raises(ValueError, match="printed"):
        V.printed_tolerance("about two")


def test_holm_rejects_step_down():
    # alpha 0.05, 4 tests: thresholds 0.0125, 0.0167, 0.025, 0.05
    p = [0.01, 0.015, 0.03, 0.04]
    assert V.holm_reject(p, 0.05).tolist() == [True, True, False, False]  # stops at 0.03 > 0.025
    assert not V.holm_reject([0.02, 0.03], 0.01).any()
    with pytest.raises(ValueError, match="alpha"):
        V.holm_reject(p, 1.5)


# --------------------------------------------------------------------------- #
# within t standard errors
# --------------------------------------------------------------------------- #
def test_within_se_passes_on_noise():
    rng = np.random.default_rng(1)
    expected = rng.uniform(0, 1, 200)
    observed = expected + rng.normal(0, 0.01, 200)
    d = WithinSE().decide(within_se_frame(observed, expected, 0.01))
    assert d.verdict == REPRODUCED
    assert d.numbers["points"] == 200 and d.numbers["holm_rejected"] == 0


def test_within_se_counts_points_beyond_t_but_corrects_for_their_number():
    # 100 points, one at 3.5 SE: beyond t = 3, but not beyond the Holm / Bonferroni threshold (about 4.0)
    observed = np.zeros(100)
    observed[7] = 3.5
    d = WithinSE().decide(within_se_frame(observed, np.zeros(100), 1.0))
    assert d.verdict == REPRODUCED
    assert d.numbers["beyond_t"] == 1 and d.numbers["holm_rejected"] == 0
    assert d.numbers["max_abs_z_at"] == "p7"


def test_within_se_partly_when_few_points_differ():
    observed = np.zeros(20)
    observed[:3] = [10.0, -8.0, 6.0]  # 3 of 20 = 15 % far off
    d = WithinSE().decide(within_se_frame(observed, np.zeros(20), 1.0))
    assert d.verdict == PARTLY
    assert d.numbers["holm_rejected"] == 3


def test_within_se_fails_when_many_points_differ():
    observed = np.r_[np.full(10, 8.0), np.zeros(10)]
    d = WithinSE().decide(within_se_frame(observed, np.zeros(20), 1.0))
    assert d.verdict == NOT_REPRODUCED


def test_within_se_zero_se_is_exact():
    assert WithinSE().decide(within_se_frame([1.0, 2.0], [1.0, 2.0], 0.0)).verdict == REPRODUCED
    d = WithinSE().decide(within_se_frame([1.0, 2.5], [1.0, 2.0], 0.0))
    assert d.verdict == NOT_REPRODUCED and math.isinf(d.numbers["max_abs_z"])


def test_within_se_empty_and_bad_input():
    assert WithinSE().decide(within_se_frame([], [], [])).verdict == NOT_TESTABLE
    with pytest.raises(ValueError, match="lacks the column"):
        WithinSE().decide(pd.DataFrame({"point": ["a"], "observed": [1.0]}))
    with pytest.raises(ValueError, match="t="):
        WithinSE(t=0)


# --------------------------------------------------------------------------- #
# within an absolute tolerance
# --------------------------------------------------------------------------- #
def tol_frame(values, targets):
    return pd.DataFrame({"point": [f"p{i}" for i in range(len(values))], "value": values, "target": targets})


def test_within_tolerance_pass_partly_fail():
    rule = WithinTolerance(0.1)
    assert rule.decide(tol_frame([0.85], [0.9])).verdict == REPRODUCED
    assert rule.decide(tol_frame([0.75], [0.9])).verdict == PARTLY  # within 2 tolerances
    assert rule.decide(tol_frame([0.6], [0.9])).verdict == NOT_REPRODUCED
    # many points: partly if at least 75 % are within
    assert rule.decide(tol_frame([1, 1, 1, 0.5], [1, 1, 1, 1])).verdict == PARTLY
    assert rule.decide(tol_frame([1, 1, 0.5, 0.5], [1, 1, 1, 1])).verdict == NOT_REPRODUCED


def test_within_tolerance_zero_is_exact():
    rule = WithinTolerance(0.0)
    assert rule.decide(tol_frame([6], [6])).verdict == REPRODUCED
    assert rule.decide(tol_frame([5], [6])).verdict == NOT_REPRODUCED


def test_within_tolerance_noise_widening():
    frame = tol_frame([0.05], [0.0]).assign(se=[0.02])
    assert WithinTolerance(0.02).decide(frame).verdict == NOT_REPRODUCED  # se not used by default
    assert WithinTolerance(0.02, t=3.0).decide(frame).verdict == REPRODUCED  # 0.05 <= 0.02 + 3 * 0.02
    assert WithinTolerance(0.02, t=3.0).decide(frame.assign(se=0.001)).verdict == NOT_REPRODUCED


def test_within_tolerance_rejects_bad_parameters():
    with pytest.raises(ValueError, match="tol="):
        WithinTolerance(-1.0)
    with pytest.raises(ValueError, match="tol="):
        WithinTolerance(float("nan"))


# --------------------------------------------------------------------------- #
# an ordering holds at a share of points
# --------------------------------------------------------------------------- #
def test_ordering_passes_with_ties_within_noise():
    d = OrderingHolds().decide(ordering_frame([0.9, 0.8, 0.5], [0.5, 0.79, 0.51]))
    assert d.verdict == REPRODUCED
    assert (d.numbers["wins"], d.numbers["ties"], d.numbers["losses"]) == (1, 2, 0)


def test_ordering_fails_on_a_reversal_beyond_noise():
    d = OrderingHolds().decide(ordering_frame([0.07], [0.46], se=0.02))
    assert d.verdict == NOT_REPRODUCED
    assert d.numbers["losses"] == 1 and d.numbers["worst_diff"] == pytest.approx(-0.39)


def test_ordering_partly_and_share():
    a = [0.9] * 7 + [0.1]
    b = [0.5] * 7 + [0.9]
    assert OrderingHolds().decide(ordering_frame(a, b)).verdict == PARTLY  # 7 of 8 = 88 %
    assert OrderingHolds(share=V.MOST).decide(ordering_frame(a, b)).verdict == REPRODUCED
    a2 = [0.9] * 5 + [0.1] * 3
    b2 = [0.5] * 5 + [0.9] * 3
    assert OrderingHolds().decide(ordering_frame(a2, b2)).verdict == NOT_REPRODUCED  # 5 of 8 < 75 %


def test_ordering_excludes_points_where_every_method_ties_at_a_bound():
    # all at 0, all at 1: excluded; PEM at 1 with one competitor below 1: a tie at 1 is not "all at 1"
    frame = ordering_frame([0.0, 1.0, 1.0, 0.9], [0.0, 1.0, 1.0, 0.5], others_min=[0.0, 1.0, 0.8, 0.2])
    d = OrderingHolds().decide(frame)
    assert d.numbers["excluded"] == 2 and d.numbers["points"] == 2
    assert OrderingHolds().decide(ordering_frame([0.0, 0.0], [0.0, 0.0])).verdict == NOT_TESTABLE
    # without bounds nothing is excluded (e.g. variances)
    assert OrderingHolds(floor=None, ceiling=None).decide(frame).numbers["excluded"] == 0


def test_ordering_strict_and_margin():
    tie = ordering_frame([0.50], [0.51])
    assert OrderingHolds().decide(tie).verdict == REPRODUCED
    assert OrderingHolds(strict=True).decide(tie).verdict == NOT_REPRODUCED
    # "similar or better": 0.03 below, beyond noise, fails; with a 0.02 margin it is 0.01 below: a tie
    below = ordering_frame([0.70], [0.73], se=0.001)
    assert OrderingHolds().decide(below).verdict == NOT_REPRODUCED
    assert OrderingHolds(margin=0.02).decide(below).verdict == NOT_REPRODUCED  # 0.01 is still 7 SE
    assert OrderingHolds(margin=0.02).decide(ordering_frame([0.70], [0.72], se=0.001)).verdict == REPRODUCED


def test_ordering_rejects_bad_parameters():
    with pytest.raises(ValueError, match="share"):
        OrderingHolds(share=0)
    with pytest.raises(ValueError, match="margin"):
        OrderingHolds(margin=-0.1)


# --------------------------------------------------------------------------- #
# monotone in a parameter
# --------------------------------------------------------------------------- #
def test_monotone_allows_steps_within_noise():
    d = Monotone("increasing").decide(series_frame([0.1, 0.3, 0.29, 0.6, 0.9], se=0.01))
    assert d.verdict == REPRODUCED


def test_monotone_fails_on_a_step_back_beyond_noise():
    d = Monotone("increasing").decide(series_frame([0.1, 0.8, 0.3, 0.9], se=0.01))
    assert d.verdict == NOT_REPRODUCED and "s" in d.numbers["broken"]


def test_monotone_catches_a_slow_drift_made_of_small_steps():
    ys = 1.0 - 0.02 * np.arange(10)  # each step 0.02 < 3 * hypot(0.01, 0.01) = 0.042; the drift is 0.18
    assert Monotone("increasing").decide(series_frame(ys, se=0.01)).verdict == NOT_REPRODUCED
    assert Monotone("decreasing").decide(series_frame(ys, se=0.01)).verdict == REPRODUCED


def test_monotone_share_over_series():
    frames = [series_frame([1, 2, 3], name=f"up{i}") for i in range(3)] + [series_frame([3, 1, 2], name="bad")]
    m = pd.concat(frames)
    assert Monotone("increasing").decide(m).verdict == PARTLY  # 3 of 4
    assert Monotone("increasing", share=V.MOST).decide(m).verdict == REPRODUCED
    assert Monotone("decreasing").decide(m).verdict == NOT_REPRODUCED


def test_monotone_exact_series_allow_no_step_back():
    assert Monotone("increasing").decide(series_frame([0.1, 0.2, 0.2], se=0.0)).verdict == REPRODUCED
    assert Monotone("increasing").decide(series_frame([0.1, 0.2, 0.19999], se=0.0)).verdict == NOT_REPRODUCED


def test_monotone_bad_input():
    with pytest.raises(ValueError, match="direction"):
        Monotone("up")
    assert Monotone().decide(series_frame([0.5])).verdict == NOT_TESTABLE


# --------------------------------------------------------------------------- #
# argmax at a value
# --------------------------------------------------------------------------- #
def test_argmax_passes_at_the_maximum_or_within_noise():
    xs = [4, 5, 6, 7, 8]
    exact = series_frame([0.1, 0.5, 0.9, 0.5, 0.1], xs=xs)
    near = series_frame([0.1, 0.5, 0.895, 0.9, 0.1], xs=xs, name="t")  # max at 7, 6 within noise
    d = ArgmaxAt(6).decide(pd.concat([exact, near]))
    assert d.verdict == REPRODUCED and "7 (t)" in d.numbers["argmax"]


def test_argmax_fails_when_the_value_is_clearly_below_the_maximum():
    d = ArgmaxAt(6).decide(series_frame([0.1, 0.5, 0.6, 0.9, 0.1], xs=[4, 5, 6, 7, 8]))
    assert d.verdict == NOT_REPRODUCED and d.numbers["largest_gap_z"] > 3


def test_argmax_partly_and_untestable():
    good = [series_frame([0.1, 0.9, 0.1], xs=[1, 2, 3], name=f"g{i}") for i in range(3)]
    bad = series_frame([0.1, 0.2, 0.9], xs=[1, 2, 3], name="bad")
    assert ArgmaxAt(2).decide(pd.concat(good + [bad])).verdict == PARTLY
    assert ArgmaxAt(2.5).decide(pd.concat(good)).verdict == NOT_TESTABLE  # no series has x = 2.5


def test_every_rule_describes_itself():
    for rule in (WithinSE(), WithinTolerance(0.1, "x"), OrderingHolds(), Monotone(), ArgmaxAt(6)):
        assert rule.kind in V.PARTLY_RULE
        assert isinstance(rule.describe(), str) and rule.describe()
