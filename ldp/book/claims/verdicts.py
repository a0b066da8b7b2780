"""The verdict vocabulary, the tolerances and the :class:`Decision` every decision rule returns.

The rules of :mod:`ldp.book.claims.rules` return a :class:`Decision`; no verdict is typed by hand.  The
vocabulary is fixed (:data:`VERDICTS`; :data:`PARTLY_RULE` says per rule when a failure is "partly"); the
tolerances are module constants, each with its meaning in :func:`tolerance_table` (the report page renders
it).  A sentence with several parts gets one verdict from its parts' (:func:`combine`), and every verdict
other than reproduced carries a cause of one of the classes of :data:`CAUSES`.
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
    "Z_TOL", "FAMILY_ALPHA", "ALL", "MOST", "SOME", "PARTLY_MARGIN", "PARTLY_TOL_FACTOR", "F1_TOL", "SIMILAR_F1",
    "ALMOST_FULL", "SIMILAR_FACTOR", "EQUIVALENT_F1", "A_LOT", "FEW_DOZEN", "CLOSE_CORRELATION", "EXACT_TOL",
    "COUNT_TOL", "EQUAL_SPLIT_TOL",
    "PARTLY_RULE", "COMBINE_RULE", "CAUSES", "Decision", "combine", "printed_tolerance", "holm_reject",
    "not_testable", "tolerance_table",
]

# ------------------------------------------------ vocabulary and tolerances (rendered on the report page)
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
#: share of points for "in some cases": any one point (a share this small holds as soon as one point does)
SOME = 1e-9
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
#: the margin of practical equivalence of two predicted F1 scores: section 4.3 calls such a difference immaterial
#: ("slightly change in these parameters does not affect the final result much"); a tenth of F1_TOL, a sixth of
#: one heavy hitter of 16
EQUIVALENT_F1 = 0.01
#: "deteriorate a lot" (section 4.3): at least this share of the best utility lost
A_LOT = 0.25
#: "a few dozen" (section 2.2.2): at most five dozen
FEW_DOZEN = 60
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


#: how one sentence with several parts is decided (rendered on the report page)
COMBINE_RULE = ("a sentence with several parts is reproduced when every part that decides it and could be tested "
                "here is reproduced, not reproduced when every such part is not reproduced, partly reproduced "
                "otherwise, and not testable here when none could be tested; a detail (where a qualifier such as "
                "'in most cases' allows exceptions) is shown with its own verdict and cause but does not decide")

#: the classes of a cause: why a verdict is not "reproduced" (key -> label shown, meaning)
CAUSES = {
    "stand-in": ("stand-in", "stand-in data (the URL set) or a method re-implemented from the paper's text (SPM, MCM)"),
    "reading": ("our reading", "our reading of a setting or a rule the paper does not state"),
    "bound": ("ceiling/floor", "the metric at its ceiling or floor (F1 at 1 or 0): a difference cannot grow there"),
    "near-tie": ("near-tie", "a near-tie in the data: values or methods within noise of each other"),
    "genuine": ("genuine difference", "a difference measured here with no artefact that explains it"),
    "not-run": ("not run here", "the book does not run the setting the sentence is about"),
    "missing": ("input missing", "the results the claim reads are not in this build, or its parameters leave "
                                 "the claim's setting out"),
    "small-sample": ("small sample", "a quick build's small samples: decided at the paper's scale by make book"),
}


def combine(verdicts) -> str:
    """The verdict of a sentence from the verdicts of the parts that decide it (:data:`COMBINE_RULE`).

    >>> combine(["reproduced", "not testable here"]), combine(["reproduced", "not reproduced"])
    ('reproduced', 'partly reproduced')
    """
    tested = [v for v in verdicts if v != NOT_TESTABLE]
    if not tested:
        return NOT_TESTABLE
    if all(v == REPRODUCED for v in tested):
        return REPRODUCED
    return NOT_REPRODUCED if all(v == NOT_REPRODUCED for v in tested) else PARTLY


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


# --------------------------------------------------------------------------- decisions
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
        ("SOME", "one point", "'in some cases': the statement holds as soon as it holds at one point"),
        ("PARTLY_MARGIN", PARTLY_MARGIN, "'partly reproduced': the share that passes is at least the required "
                                         "share minus this (and above one half)"),
        ("PARTLY_TOL_FACTOR", PARTLY_TOL_FACTOR, "'partly reproduced' for a tolerance: every point within this "
                                                 "many tolerances"),
        ("F1_TOL", F1_TOL, "an F1 value the text quotes (one decimal, read off a curve)"),
        ("printed", "½ unit", "a number the paper computes: half a unit of its last printed digit"),
        ("SIMILAR_F1", SIMILAR_F1, "'similar' F1 (the validation chapter's reading of section 5.3)"),
        ("ALMOST_FULL", ALMOST_FULL, "'almost full utility': F1 at least 1 minus this"),
        ("SIMILAR_FACTOR", SIMILAR_FACTOR, "'similar' estimation variance: within this factor"),
        ("EQUIVALENT_F1", EQUIVALENT_F1, "margin of practical equivalence of two predicted F1 scores: a difference "
                                         "section 4.3 calls immaterial ('slightly change in these parameters does "
                                         "not affect the final result much')"),
        ("A_LOT", A_LOT, "'deteriorate a lot': at least this share of the best utility lost"),
        ("FEW_DOZEN", FEW_DOZEN, "'a few dozen': at most five dozen"),
        ("CLOSE_CORRELATION", CLOSE_CORRELATION, "a 'close' correlation: Pearson r within this of 1"),
        ("COUNT_TOL", COUNT_TOL, "a count or an identity: exact"),
        ("EQUAL_SPLIT_TOL", EQUAL_SPLIT_TOL, "'equal' bits per round: differ by at most one bit"),
    ]
    return pd.DataFrame(rows, columns=["constant", "value", "meaning"])
