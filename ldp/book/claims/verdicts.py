"""The verdict vocabulary, the tolerances and the :class:`Decision` every decision rule returns.

The rules of :mod:`ldp.book.claims.rules` return a :class:`Decision`; no verdict is typed by hand.  The
vocabulary is fixed (:data:`VERDICTS`; :data:`PARTLY_RULE` says per rule when a failure is "partly"); the
tolerances are module constants, each with its meaning in :func:`tolerance_table` (the report page renders
it).  A sentence with several parts gets one verdict from its parts' (:func:`combine`), and every verdict
other than reproduced carries a cause of one of the classes of :data:`CAUSES`, shown only when the row's own
numbers pass that class's test (:data:`CAUSE_TESTS`, :func:`cause_failure`) and quoted in its line
(:func:`quotes`; :func:`repeats` finds a template's slips).
"""
from __future__ import annotations

import re
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
    "PARTLY_RULE", "COMBINE_RULE", "CAUSES", "NEAR_TIE_SE", "BOUND_DISTANCE", "READING_SHARE", "CAUSE_TESTS",
    "THRESHOLDS", "Because", "cause_failure", "repeats", "quotes", "Decision", "combine", "printed_tolerance",
    "holm_reject", "not_testable", "tolerance_table",
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

# ------------------------------------------------ causes, each with the test it must pass on its row's numbers
#: "near-tie": the gap that decides the verdict is within this many standard errors
NEAR_TIE_SE = Z_TOL
#: "ceiling/floor": the leading value is within this distance of 1 (or of 0) at the points in question
BOUND_DISTANCE = ALMOST_FULL
#: "our reading": the other reading leaves at most this share of the points beyond noise
READING_SHARE = 0.5

#: the classes of a cause: why a verdict is not "reproduced" (key -> label shown, meaning with the test the row's
#: numbers must pass for the class to be shown: :data:`CAUSE_TESTS` checks it, :func:`cause_failure` applies it)
CAUSES = {
    "stand-in": ("stand-in", "stand-in data (the URL set) or a method re-implemented from the paper's text (SPM, "
                             "MCM). Shown only when the claim rests on the stand-in and the cause shows the "
                             "stand-in's own measured effect: a number measured on it against the paper's (or against "
                             "what the method needs), apart by more than the claim's tolerance; or the stand-in is "
                             "calibrated to the paper's number, which it then cannot test (the number measured on it "
                             "shown)"),
    "reading": ("our reading", "our reading of a setting or a rule the paper does not state. Shown only when the claim "
                               "rests on a reading of ours and a number measured under it accounts for the difference: "
                               f"the other reading leaves at most {READING_SHARE:.0%} of the points beyond noise, or "
                               "what the reading predicts is within a factor "
                               f"{SIMILAR_FACTOR:g} of what is observed"),
    "bound": ("ceiling/floor", "the metric at its ceiling or floor (F1 at 1 or 0): a difference cannot grow there. "
                               "Shown only when the leading value is within "
                               f"{BOUND_DISTANCE:g} of 1 (or of 0) at every point in question"),
    "near-tie": ("near-tie", "a near-tie in the data: values or methods within noise of each other. Shown only when "
                             f"the gap that decides the verdict is within {NEAR_TIE_SE:g} standard errors"),
    "genuine": ("genuine difference", "a difference measured here with no artefact that explains it. Shown with "
                                      "the rule's deciding difference beyond the rule's threshold: a point beyond "
                                      "Holm's threshold, a difference beyond the claim's tolerance, a point reversed "
                                      f"or a step against the direction beyond {Z_TOL:g} standard errors, the value "
                                      f"at the claimed optimum more than {Z_TOL:g} standard errors below the maximum "
                                      "(exact values, a model's with no noise, differ by ∞ standard errors)"),
    "not-run": ("not run here", "the book does not run the setting the sentence is about. Shown only when the "
                                "claim could not be decided (not testable here)"),
    "missing": ("input missing", "the results the claim reads are not in this build, or its parameters leave "
                                 "the claim's setting out. Shown only when the claim could not be decided (not "
                                 "testable here)"),
    "small-sample": ("small sample", "a quick build's small samples: decided at the paper's scale by make book. "
                                     "Shown only in a quick build (with the run sizes it decided on, "
                                     "where its parameters are saved)"),
}


@dataclass(frozen=True)
class Because:
    """A cause as measured: its class (a key of :data:`CAUSES`), one line, and the numbers its class's test reads.

    ``numbers`` are the row's own numbers that pass the test of :data:`CAUSE_TESTS` (``gap_se`` for a near-tie,
    ``leader...`` for a ceiling or floor, ``effect``, ``reference``, ``tolerance`` for a stand-in, ``misfit`` and
    ``misfit_other`` or ``predicted`` and ``observed`` for our reading); ``text`` quotes each of them.
    """

    kind: str
    text: str
    numbers: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in CAUSES:
            raise ValueError(f"kind={self.kind!r} must be one of {sorted(CAUSES)}")


def _has(numbers: Mapping[str, float], *keys: str) -> bool:
    return all(k in numbers and np.isfinite(float(numbers[k])) for k in keys)


def _test_stand_in(numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    if not row.get("stand_in"):
        return "the claim rests on no stand-in"
    if not row.get("stand_in_decides", True):
        return "" if numbers else "no number measured on the stand-in is shown"
    if not _has(numbers, "effect", "reference", "tolerance"):
        return "no measured effect of the stand-in (effect, reference, tolerance)"
    gap = abs(float(numbers["effect"]) - float(numbers["reference"]))
    return "" if gap > float(numbers["tolerance"]) else (
        f"the stand-in's effect {gap:.3g} is within the tolerance {float(numbers['tolerance']):.3g}")


def _test_reading(numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    if not row.get("interpretation"):
        return "the claim rests on no reading of ours"
    if _has(numbers, "misfit", "misfit_other"):
        misfit, other = float(numbers["misfit"]), float(numbers["misfit_other"])
        return "" if misfit > 0 and other <= READING_SHARE * misfit else (
            f"the other reading leaves {other:g} of {misfit:g} points beyond noise (more than {READING_SHARE:.0%})")
    if _has(numbers, "predicted", "observed"):
        predicted, observed = float(numbers["predicted"]), float(numbers["observed"])
        ok = predicted > 0 and observed > 0 and abs(np.log(predicted / observed)) <= np.log(SIMILAR_FACTOR)
        return "" if ok else f"the reading predicts {predicted:.3g} where {observed:.3g} is observed"
    return "no number measured under the reading (misfit and misfit_other, or predicted and observed)"


def _test_bound(numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    leaders = {k: float(v) for k, v in numbers.items() if k.startswith("leader")}
    if not leaders:
        return "no leading value at the points in question"
    far = {k: v for k, v in leaders.items() if min(abs(v), abs(1 - v)) > BOUND_DISTANCE}
    said = ", ".join(f"{k} = {v:.3g}" for k, v in far.items())
    return "" if not far else f"{said} not within {BOUND_DISTANCE:g} of 0 or 1"


def _test_near_tie(numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    if not _has(numbers, "gap_se"):
        return "no deciding gap in standard errors"
    gap = abs(float(numbers["gap_se"]))
    return "" if gap <= NEAR_TIE_SE else f"the deciding gap is {gap:.3g} standard errors, beyond {NEAR_TIE_SE:g}"


def _test_genuine(numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    if "gap" not in numbers or np.isnan(float(numbers["gap"])) or float(numbers["gap"]) == -np.inf:
        return "no deciding difference"  # +inf passes: exact values (standard error 0) that differ
    gap, kind = float(numbers["gap"]), row.get("rule_kind", "")
    threshold = {"within-se": numbers.get("holm_z", np.nan), "within-tolerance": numbers.get("tolerance", np.nan),
                 "ordering": 0.0, "monotone": Z_TOL, "argmax": Z_TOL}.get(kind, np.nan)
    if not np.isfinite(float(threshold)):
        return f"no threshold for the rule kind {kind!r}"
    return "" if gap > float(threshold) + EXACT_TOL else f"the deciding difference {gap:.3g} is within {threshold:.3g}"


def _test_undecided(numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    return "" if row.get("verdict") == NOT_TESTABLE else f"the claim was decided ({row.get('verdict')})"


def _test_small_sample(numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    return "" if mode == "quick" else f"a {mode} build, not a quick one"


#: each class's test on a row's numbers: ``test(numbers, row, mode) -> ""`` when it passes, else why not
CAUSE_TESTS = {"stand-in": _test_stand_in, "reading": _test_reading, "bound": _test_bound,
               "near-tie": _test_near_tie, "genuine": _test_genuine, "not-run": _test_undecided,
               "missing": _test_undecided, "small-sample": _test_small_sample}


def cause_failure(kind: str, numbers: Mapping[str, float], row: Mapping[str, Any], mode: str | None) -> str:
    """Why a row's numbers do not support the cause class ``kind`` (``""``: they do).

    Parameters
    ----------
    kind : str
        A key of :data:`CAUSES`.
    numbers : mapping
        The cause's numbers (:attr:`Because.numbers`).
    row : mapping
        The claim's evaluated row (``verdict``, ``measured``, ``rule_kind``, ``stand_in``, ``stand_in_decides``,
        ``interpretation``).
    mode : str or None
        The build mode (``"quick"``, ``"full"``, ``"rerun"``; None: unknown).
    """
    if kind not in CAUSE_TESTS:
        return f"{kind!r} is not a cause class ({sorted(CAUSES)})"
    if row.get("verdict") == REPRODUCED:
        return "a reproduced claim has no cause"
    return CAUSE_TESTS[kind](numbers, row, mode)


#: count nouns a template writes after a number (a plural after 1 is a template's slip)
_NOUNS = ("points", "values", "parts", "runs", "settings", "rounds", "steps", "bits", "users", "queries",
          "candidates", "assumptions", "URLs", "hitters", "positives", "cases", "levels", "panels", "rows", "times",
          "ties")


def repeats(text: str, label: str = "") -> str:
    """What in ``text`` repeats itself the way a template slips (``""``: nothing).

    A number on both sides of "instead of" ("10 points instead of 10"), a plural after the number 1 ("1 points"),
    a phrase of up to six words (the first a word, not a number) twice in a row ("not run here: not run here",
    "the the"), or a text that opens with its own class label (the page prints "label: text").

    >>> repeats("10 points instead of 10"), repeats("1 points instead of 11"), repeats("1 of 11 points")
    ('"10 ... instead of 10"', '"1 points"', '')
    >>> repeats("not run here: not run here: chapter 07"), repeats("(12, 12, 12, 12, 8)")
    ('"not run here: not run here"', '')
    """
    if m := re.search(r"(?<![\w.,])([\d.,]+\d|\d)\b(?:\s+\w+)?\s+instead of\s+\1(?![\d.,]*\d)", text):
        return f'"{m.group(1)} ... instead of {m.group(1)}"'
    if m := re.search(r"(?<![\w.,])1\s+(?:[a-z]+\s+)?(" + "|".join(_NOUNS) + r")\b", text):
        return f'"{m.group(0)}"'
    if m := re.search(r"\b([^\W\d_]\w*(?:\s+\w+){0,5})[\s:;,]+\1\b", text, flags=re.IGNORECASE):
        return f'"{m.group(0)}"'
    if label and text.lower().startswith(label.lower()):
        return f'opens with its label "{label}"'
    return ""


def _renderings(x: float) -> set[str]:
    """How a text may print ``x``: rounded to two significant digits or more, or exactly; with thousands commas and
    as a percentage; an infinite ``x`` as "∞" (exact values, standard error 0, that differ)."""
    out = set()
    a = abs(float(x))
    if np.isinf(a):
        return {"∞"}
    for d in range(0, 5):
        for v, suffix in ((a, ""), (100 * a, "%")):
            r = round(v, d)
            if v == 0 or abs(r - v) <= 1e-9 * max(1.0, abs(v)) or (r != 0 and len(f"{r:.{d}f}".replace(".", "")
                                                                                   .lstrip("0")) >= 2):
                out |= {f"{v:.{d}f}{suffix}", f"{v:,.{d}f}{suffix}"}
    out |= {f"{a:g}", f"{a:.2g}", f"{a:.3g}"}
    return out


#: the numbers of a cause that are thresholds its test compares with, not measurements its line must quote
THRESHOLDS = ("holm_z", "tolerance")


def quotes(text: str, x: float) -> bool:
    """Whether ``text`` prints the number ``x`` (:func:`_renderings`), as a number of its own.

    >>> quotes("the lead shrinks: MCM finds 7.4 of 16", 7.3968), quotes("17.50 SE", 17.5004), quotes("0.81", 0.8)
    (True, True, False)
    """
    for r in _renderings(x):
        if re.search(r"(?<![\d.,])" + re.escape(r) + r"(?![\d]|[.,]\d)", text):
            return True
    return False


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
