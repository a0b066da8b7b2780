"""The verdict vocabulary, the tolerances and the :class:`Decision` every decision rule returns.

Every verdict of the reproduction report is computed by one of the five rules
of :mod:`ldp.reporting.rules`, which return a :class:`Decision` (the verdict,
the numbers that decided it and a one-line explanation).  No verdict is typed by hand.

The vocabulary is fixed (:data:`VERDICTS`): *reproduced* (the rule's criterion
holds), *partly reproduced* (it fails, but holds at a clear majority of the tested
points; :data:`PARTLY_RULE` says when, per rule), *not reproduced*, and *not
testable here* (the inputs are missing, the run's parameters leave out the claim's
setting, every point was excluded, or a stand-in cannot decide the claim).  The
tolerances are module constants, each with its meaning in :func:`tolerance_table`,
which the report page renders: a difference counts only beyond :data:`Z_TOL`
standard errors, a family of point-wise tests is corrected with Holm's procedure
at :data:`FAMILY_ALPHA`, "in most cases" is a share :data:`MOST`, and the paper's
words ("similar", "almost full", "close") have one tolerance each.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "REPRODUCED", "PARTLY", "NOT_REPRODUCED", "NOT_TESTABLE", "VERDICTS",
    "Z_TOL", "FAMILY_ALPHA", "ALL", "MOST", "PARTLY_MARGIN", "PARTLY_TOL_FACTOR", "F1_TOL", "SIMILAR_F1",
    "ALMOST_FULL", "SIMILAR_FACTOR", "CLOSE_CORRELATION", "EXACT_TOL", "COUNT_TOL", "EQUAL_SPLIT_TOL",
    "PARTLY_RULE", "Decision", "printed_tolerance", "holm_reject", "not_testable", "tolerance_table",
]

# --------------------------------------------------------------------------- #
# vocabulary and tolerances (rendered on the report page)
# --------------------------------------------------------------------------- #
REPRODUCED = "reproduced"
PARTLY = "partly reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable here"
#: the only verdicts a claim can get, best first
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTABLE)

#: a difference counts only beyond this many standard errors
Z_TOL = 3.0
#: family-wise level of the Holm correction: the two-sided level of Z_TOL for one point (0.0027)
FAMILY_ALPHA = float(2 * stats.norm.sf(Z_TOL))
#: share of points a claim without a qualifier must hold at
ALL = 1.0
#: share of points for "in most cases" / "for most of the cases"
MOST = 0.75
#: "partly": at least the required share minus this (and a majority) of the points pass
PARTLY_MARGIN = 0.25
#: "partly" for a tolerance: every point within this many tolerances
PARTLY_TOL_FACTOR = 2.0
#: an F1 the text quotes (one decimal, read off a curve of 10 runs)
F1_TOL = 0.1
#: "similar" F1 (section 5.3 reading of the validation chapter)
SIMILAR_F1 = 0.02
#: "almost full utility": F1 at least 1 - ALMOST_FULL
ALMOST_FULL = 0.05
#: "similar" estimation variance: within this factor (|ln ratio| <= ln SIMILAR_FACTOR)
SIMILAR_FACTOR = 1.5
#: a "close" correlation: Pearson r within this of 1
CLOSE_CORRELATION = 0.1
#: floating-point noise allowed in every comparison
EXACT_TOL = 1e-9
#: a count or an identity: exact
COUNT_TOL = 0.0
#: "equal" integer parts (bits per round): differ by at most this (m - gamma need not split evenly)
EQUAL_SPLIT_TOL = 1.0

#: when "partly reproduced" applies, per rule (rendered on the report page)
PARTLY_RULE = {
    "within-se": f"Holm rejects some points, but at most {PARTLY_MARGIN:.0%} of them",
    "within-tolerance": f"not every point is within the tolerance, but every point is within {PARTLY_TOL_FACTOR:g} "
                        f"tolerances, or at least {1 - PARTLY_MARGIN:.0%} of the points are within it",
    "ordering": f"the ordering holds at less than the required share of the points, but at no less than that share "
                f"minus {PARTLY_MARGIN:.0%} (and at more than half)",
    "monotone": f"less than the required share of the series is monotone, but no less than that share minus "
                f"{PARTLY_MARGIN:.0%} (and more than half)",
    "argmax": f"less than the required share of the series has its maximum at the value (within noise), but no "
              f"less than that share minus {PARTLY_MARGIN:.0%} (and more than half)",
}


def printed_tolerance(printed: str) -> float:
    """Half a unit of the last digit of a number as the paper prints it.

    Parameters
    ----------
    printed : str
        The number as printed, e.g. ``"0.00075"``, ``"28.5"``, ``"4,410,000"``
        (commas are thousands separators; trailing zeros of an integer are
        read as not significant: ``"4,410,000"`` is known to 10,000).

    Returns
    -------
    float
        ``0.000005`` for ``"0.00075"``, ``0.05`` for ``"28.5"``, ``5000`` for
        ``"4,410,000"``.

    Raises
    ------
    ValueError
        If ``printed`` is not a plain decimal number.
    """
    text = str(printed).replace(",", "").strip()
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"printed={printed!r} is not a plain decimal number such as '0.023' or '4,410,000'") \
            from None
    if not value.is_finite():
        raise ValueError(f"printed={printed!r} is not a finite number")
    if "." in text:
        exponent = value.as_tuple().exponent
    else:  # an integer: its trailing zeros are not significant
        digits = text.lstrip("+-")
        exponent = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return 0.5 * 10.0 ** int(exponent)


def holm_reject(pvalues, alpha: float = FAMILY_ALPHA) -> np.ndarray:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level ``alpha``.

    Parameters
    ----------
    pvalues : array_like of float
        One p-value per point.
    alpha : float
        Family-wise error rate, in (0, 1).

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where the point is rejected.  Valid under any dependence
        between the points.

    References
    ----------
    S. Holm, "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6 (1979), 65-70.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} must be in (0, 1)")
    p = np.asarray(pvalues, dtype=float).ravel()
    reject = np.zeros(p.size, dtype=bool)
    order = np.argsort(p, kind="stable")
    for i, idx in enumerate(order):
        if p[idx] > alpha / (p.size - i):
            break
        reject[idx] = True
    return reject


# --------------------------------------------------------------------------- #
# decisions
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Decision:
    """The outcome of a rule.

    Attributes
    ----------
    verdict : str
        One of :data:`VERDICTS`.
    numbers : dict
        The numbers that decided it (counts, shares, largest deviations).
    summary : str
        What was measured, in words with the numbers (the report's
        "measured" column).
    explanation : str
        One line: why this verdict, naming the threshold.
    """

    verdict: str
    numbers: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""
    explanation: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r} must be one of {VERDICTS}")


def not_testable(reason: str, summary: str = "") -> Decision:
    """A :data:`NOT_TESTABLE` decision with its reason."""
    return Decision(NOT_TESTABLE, {}, summary, reason)


def tolerance_table() -> pd.DataFrame:
    """The tolerances and rule constants, one row each, for the report page."""
    rows = [
        ("Z_TOL", Z_TOL, "a difference counts only beyond this many standard errors (ties, steps within "
                         "noise, argmax, per-point z)"),
        ("FAMILY_ALPHA", FAMILY_ALPHA, "family-wise level of Holm's correction in 'within standard errors' "
                                       "(the two-sided level of 3 standard errors for one point)"),
        ("ALL", ALL, "share of points a claim without a qualifier must hold at"),
        ("MOST", MOST, "share of points for 'in most cases'"),
        ("PARTLY_MARGIN", PARTLY_MARGIN, "'partly reproduced': the share that passes is at least the required "
                                         "share minus this (and above one half)"),
        ("PARTLY_TOL_FACTOR", PARTLY_TOL_FACTOR, "'partly reproduced' for a tolerance: every point within this "
                                                 "many tolerances"),
        ("F1_TOL", F1_TOL, "an F1 value the text quotes (one decimal, read off a curve)"),
        ("printed", "½ unit", "a number the paper computes: half a unit of its last printed digit"),
        ("SIMILAR_F1", SIMILAR_F1, "'similar' F1 (the validation chapter's reading of section 5.3)"),
        ("ALMOST_FULL", ALMOST_FULL, "'almost full utility': F1 at least 1 minus this"),
        ("SIMILAR_FACTOR", SIMILAR_FACTOR, "'similar' estimation variance: within this factor"),
        ("CLOSE_CORRELATION", CLOSE_CORRELATION, "a 'close' correlation: Pearson r within this of 1"),
        ("COUNT_TOL", COUNT_TOL, "a count or an identity: exact"),
        ("EQUAL_SPLIT_TOL", EQUAL_SPLIT_TOL, "'equal' bits per round: differ by at most one bit"),
    ]
    return pd.DataFrame(rows, columns=["constant", "value", "meaning"])
