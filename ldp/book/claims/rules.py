"""Decision rules: how a measurement becomes a verdict.

Every verdict of the reproduction report is computed by one of five rules,
each a small frozen dataclass whose :meth:`decide` takes a tidy table (a
:class:`pandas.DataFrame`, one row per tested point) and returns a
:class:`~ldp.book.claims.verdicts.Decision`: the verdict, the numbers that
decided it and a one-line explanation.  The vocabulary (reproduced, partly
reproduced, not reproduced, not testable here) and the tolerances are in
:mod:`ldp.book.claims.verdicts`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from . import verdicts as V
from .verdicts import Decision, not_testable

__all__ = ["Rule", "WithinSE", "WithinTolerance", "OrderingHolds", "Monotone", "ArgmaxAt"]


def _share_verdict(passed: int, tested: int, required: float) -> str:
    """reproduced / partly / not from the share of points (or series) that pass."""
    share = passed / tested
    if share >= required - 1e-12:
        return V.REPRODUCED
    if share >= required - V.PARTLY_MARGIN - 1e-12 and share > 0.5:
        return V.PARTLY
    return V.NOT_REPRODUCED


def _check_columns(frame: pd.DataFrame, needed: tuple[str, ...], rule: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{rule}.decide needs a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"{rule}.decide: the measurement lacks the column(s) {missing}; "
                         f"it has {list(frame.columns)}")
    return frame


def _check_share(share: float, name: str = "share") -> None:
    if not 0 < share <= 1:
        raise ValueError(f"{name}={share!r} must be in (0, 1]")


def _check_t(t: float) -> None:
    if not (t > 0 and math.isfinite(t)):
        raise ValueError(f"t={t!r} must be a finite number > 0")


def _share_words(share: float, unit: str) -> str:
    """'every series' / 'at least 75% of the series' / 'at least one series' (:data:`V.SOME`)."""
    units = unit if unit.endswith("s") else unit + "s"  # 'series' is its own plural
    if share <= V.SOME:
        return f"at least one {unit}"
    return f"every {unit}" if share >= 1 else f"at least {share:.0%} of the {units}"


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,d}"
    if math.isinf(x):
        return "inf"
    if abs(x) >= 1e5 and float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.{digits}g}" if abs(x) < 1e-3 or abs(x) >= 1e5 else f"{x:.{digits}f}"


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``"1 point"``, ``"3 points"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _z(diff, se):
    """diff / se, with se = 0: 0 where diff is 0 (to floating-point noise), else +-inf."""
    diff, se = np.asarray(diff, dtype=float), np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / se
    exact = se <= 0
    z = np.where(exact & (np.abs(diff) <= V.EXACT_TOL), 0.0, z)
    z = np.where(exact & (np.abs(diff) > V.EXACT_TOL), np.copysign(np.inf, diff), z)
    return z



class Rule:
    """Base of the rules: ``kind`` names the rule, :meth:`describe` states it with its parameters."""

    kind: ClassVar[str] = ""

    def decide(self, measurement: pd.DataFrame) -> Decision:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class WithinSE(Rule):
    """Observed values match expected ones within ``t`` standard errors, corrected for the number of points.

    Measurement columns: ``point`` (a label), ``observed``, ``expected``, ``se``
    (the standard error of ``observed - expected``).  Per point
    z = (observed - expected) / se and its two-sided p-value; Holm's step-down
    procedure at family-wise level ``alpha`` says which points differ.

    reproduced
        Holm rejects no point (equivalently: no |z| beyond the Bonferroni
        threshold for the number of points).
    partly reproduced
        Holm rejects some points, at most a share :data:`V.PARTLY_MARGIN`.
    not reproduced
        Holm rejects more.

    The count of points with |z| > t (uncorrected) is reported too.
    """

    t: float = V.Z_TOL
    alpha: float = V.FAMILY_ALPHA
    kind: ClassVar[str] = "within-se"

    def __post_init__(self):
        _check_t(self.t)
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha={self.alpha!r} must be in (0, 1)")

    def describe(self) -> str:
        return (f"within {self.t:g} standard errors at every point, Holm-corrected for the number of points "
                f"(family-wise level {self.alpha:.2g})")

    def decide(self, measurement: pd.DataFrame) -> Decision:
        m = _check_columns(measurement, ("point", "observed", "expected", "se"), "WithinSE")
        m = m.dropna(subset=["observed", "expected"])
        if m.empty:
            return not_testable("no point to compare")
        diff = m["observed"].to_numpy(float) - m["expected"].to_numpy(float)
        z = _z(diff, m["se"].fillna(0.0).to_numpy(float))
        p = 2 * stats.norm.sf(np.abs(z))
        rejected = V.holm_reject(p, self.alpha)
        n, n_rej, n_over = len(m), int(rejected.sum()), int((np.abs(z) > self.t).sum())
        i = int(np.argmax(np.abs(z)))
        bonf = float(stats.norm.isf(self.alpha / (2 * n)))
        numbers = {"points": n, "beyond_t": n_over, "holm_rejected": n_rej, "max_abs_z": float(abs(z[i])),
                   "max_abs_z_at": str(m["point"].iloc[i]), "max_abs_diff": float(np.max(np.abs(diff))),
                   "bonferroni_z": bonf}
        if n_rej == 0:
            verdict = V.REPRODUCED
        elif n_rej <= V.PARTLY_MARGIN * n:
            verdict = V.PARTLY
        else:
            verdict = V.NOT_REPRODUCED
        summary = (f"{n_over} of {_count(n, 'point')} beyond {self.t:g} SE; largest |z| {_fmt(abs(z[i]), 2)} at "
                   f"{m['point'].iloc[i]}; largest |difference| {_fmt(float(np.max(np.abs(diff))))}")
        explanation = (f"Holm at family-wise level {self.alpha:.2g} (|z| > {bonf:.2f} for the first point) "
                       f"rejects {n_rej} of {_count(n, 'point')}"
                       + ("" if verdict != V.PARTLY else f" (at most {V.PARTLY_MARGIN:.0%}: partly)"))
        return Decision(verdict, numbers, summary, explanation)


@dataclass(frozen=True)
class WithinTolerance(Rule):
    """Values are within ``tol`` of their targets.

    Measurement columns: ``point``, ``value``, ``target``, optional ``se``.
    By default the tolerance is meant to cover the noise and ``se`` is not
    used; with ``t`` set, a point's tolerance widens to tol + t * se (for a
    measure that noise inflates, such as a spread between noisy means).

    reproduced
        |value - target| <= tol (+ t se) at every point.
    partly reproduced
        Not at every point, but every point is within
        :data:`V.PARTLY_TOL_FACTOR` x tol, or a share of at least
        1 - :data:`V.PARTLY_MARGIN` is within tol.
    not reproduced
        Otherwise.
    """

    tol: float
    what: str = ""  # the kind of tolerance, e.g. "an F1 the text quotes"
    t: float | None = None
    kind: ClassVar[str] = "within-tolerance"

    def __post_init__(self):
        if not (self.tol >= 0 and math.isfinite(self.tol)):
            raise ValueError(f"tol={self.tol!r} must be a finite number >= 0")
        if self.t is not None and not self.t > 0:
            raise ValueError(f"t={self.t!r} must be > 0 or None")

    @classmethod
    def printed(cls, number: str) -> WithinTolerance:
        """Within half a unit of the last digit of ``number`` as the paper prints it (``"0.023"``, ``"4,410,000"``)."""
        return cls(V.printed_tolerance(number), "half a unit of the printed digit")

    def describe(self) -> str:
        noise = f" plus {self.t:g} standard errors" if self.t is not None else ""
        return f"within {_fmt(self.tol, 3)}{noise} of the paper's value" + (f" ({self.what})" if self.what else "")

    def decide(self, measurement: pd.DataFrame) -> Decision:
        m = _check_columns(measurement, ("point", "value", "target"), "WithinTolerance").dropna(
            subset=["value", "target"])
        if m.empty:
            return not_testable("no value to compare")
        diff = m["value"].to_numpy(float) - m["target"].to_numpy(float)
        widen = 0.0
        if self.t is not None and "se" in m.columns:
            widen = self.t * m["se"].fillna(0.0).to_numpy(float)
        ok = np.abs(diff) <= self.tol + widen + V.EXACT_TOL
        near = np.abs(diff) <= V.PARTLY_TOL_FACTOR * self.tol + widen + V.EXACT_TOL
        n, n_ok = len(m), int(ok.sum())
        i = int(np.argmax(np.abs(diff)))
        numbers = {"points": n, "within": n_ok, "max_abs_diff": float(abs(diff[i])),
                   "worst_at": str(m["point"].iloc[i]), "tol": self.tol}
        if n == 1:
            numbers |= {"value": float(m["value"].iloc[0]), "target": float(m["target"].iloc[0])}
        if n_ok == n:
            verdict = V.REPRODUCED
        elif near.all() or n_ok >= (1 - V.PARTLY_MARGIN) * n:
            verdict = V.PARTLY
        else:
            verdict = V.NOT_REPRODUCED
        if n == 1:
            summary = (f"{m['point'].iloc[0]}: {_fmt(float(m['value'].iloc[0]), 4)} against "
                       f"{_fmt(float(m['target'].iloc[0]), 4)} (difference {diff[0]:+.3g})")
        else:
            strict = int((np.abs(diff) <= self.tol + V.EXACT_TOL).sum())
            within = (f"{strict} of {n} points within {_fmt(self.tol)}, {n_ok} within it plus {self.t:g} SE"
                      if self.t is not None else f"{n_ok} of {n} points within {_fmt(self.tol)}")
            summary = (f"{within}; largest |difference| {_fmt(float(abs(diff[i])))} at {m['point'].iloc[i]}")
        numbers["within_strict"] = int((np.abs(diff) <= self.tol + V.EXACT_TOL).sum())
        explanation = (f"tolerance {_fmt(self.tol)}" + (f" + {self.t:g} SE" if self.t is not None else "")
                       + (f" ({self.what})" if self.what else "") + ": "
                       + ("every point within" if verdict == V.REPRODUCED else
                          f"{n - n_ok} of {n} outside" + (f", all within {V.PARTLY_TOL_FACTOR:g}x"
                                                           if near.all() else "")))
        return Decision(verdict, numbers, summary, explanation)


@dataclass(frozen=True)
class OrderingHolds(Rule):
    """``a`` is at least ``b`` (plus ``margin``) at a share >= ``share`` of the points.

    Measurement columns: ``point``, ``a``, ``se_a``, ``b``, ``se_b``, optional
    ``others_min`` (the lowest of the competitors ``b`` is the best of).  Per
    point d = a - b + margin and z = d / sqrt(se_a^2 + se_b^2):

    * a point where every method scores ``floor`` (a = b = floor) or every
      method scores ``ceiling`` (a = b = others_min = ceiling) is excluded:
      it cannot tell the methods apart;
    * a **win** has z > t, a **tie** |z| <= t (equal within noise), a **loss**
      z < -t;
    * the ordering holds at a point that wins, or that ties unless ``strict``.

    reproduced
        It holds at a share >= ``share`` of the points left.
    partly reproduced
        At a share >= ``share`` - :data:`V.PARTLY_MARGIN` (and > 1/2).
    not reproduced
        Otherwise.
    """

    share: float = V.ALL
    strict: bool = False
    margin: float = 0.0
    t: float = V.Z_TOL
    floor: float | None = 0.0
    ceiling: float | None = 1.0
    what: str = "a >= b"
    kind: ClassVar[str] = "ordering"

    def __post_init__(self):
        _check_share(self.share)
        _check_t(self.t)
        if not (self.margin >= 0 and math.isfinite(self.margin)):
            raise ValueError(f"margin={self.margin!r} must be a finite number >= 0")

    def describe(self) -> str:
        share = _share_words(self.share, "point")
        ties = ("ties within noise do not count" if self.strict else
                f"a tie within {self.t:g} standard errors counts as holding")
        extra = f"; a shortfall of up to {_fmt(self.margin)} counts as equal" if self.margin else ""
        excl = []
        if self.floor is not None:
            excl.append(f"all at {self.floor:g}")
        if self.ceiling is not None:
            excl.append(f"all at {self.ceiling:g}")
        excl_text = f"; points where every method scores {' or '.join(excl)} are left out" if excl else ""
        return f"{self.what} at {share} ({ties}{extra}{excl_text})"

    def decide(self, measurement: pd.DataFrame) -> Decision:
        m = _check_columns(measurement, ("point", "a", "se_a", "b", "se_b"), "OrderingHolds")
        m = m.dropna(subset=["a", "b"]).reset_index(drop=True)
        if m.empty:
            return not_testable("no point to compare")
        a, b = m["a"].to_numpy(float), m["b"].to_numpy(float)
        lowest = m["others_min"].to_numpy(float) if "others_min" in m.columns else b
        excluded = np.zeros(len(m), dtype=bool)
        if self.floor is not None:
            excluded |= (np.abs(a - self.floor) <= V.EXACT_TOL) & (np.abs(b - self.floor) <= V.EXACT_TOL)
        if self.ceiling is not None:
            excluded |= ((np.abs(a - self.ceiling) <= V.EXACT_TOL) & (np.abs(b - self.ceiling) <= V.EXACT_TOL)
                         & (np.abs(lowest - self.ceiling) <= V.EXACT_TOL))
        n_excl = int(excluded.sum())
        keep = ~excluded
        if not keep.any():
            return not_testable(f"all {_count(len(m), 'point')} excluded: every method scores the same bound",
                                f"{_count(len(m), 'point')}, all tied at a bound")
        se = np.hypot(m["se_a"].fillna(0.0).to_numpy(float), m["se_b"].fillna(0.0).to_numpy(float))[keep]
        d = (a - b)[keep] + self.margin
        z = _z(d, se)
        wins, losses = z > self.t, z < -self.t
        ties = ~wins & ~losses
        holds = wins if self.strict else wins | ties
        n = int(keep.sum())
        n_hold = int(holds.sum())
        points = m["point"].to_numpy()[keep]
        numbers: dict[str, Any] = {"points": n, "excluded": n_excl, "holds": n_hold, "wins": int(wins.sum()),
                   "ties": int(ties.sum()), "losses": int(losses.sum()), "share": n_hold / n}
        worst = int(np.argmin(z))
        numbers |= {"worst_at": str(points[worst]), "worst_diff": float((a - b)[keep][worst]),
                    "worst_z": float(z[worst])}
        verdict = _share_verdict(n_hold, n, self.share)
        summary = (f"holds at {n_hold} of {_count(n, 'point')} ({int(wins.sum())} beyond noise, "
                   f"{_count(int(ties.sum()), 'tie')}, "
                   f"{int(losses.sum())} reversed)" + (f"; {n_excl} excluded (all methods at a bound)"
                                                        if n_excl else ""))
        if losses.any():
            summary += f"; worst at {points[worst]}: {_fmt(float((a - b)[keep][worst]))}"
        need = "every point" if self.share >= 1 else "one point" if self.share <= V.SOME else f"{self.share:.0%}"
        explanation = f"needs {need}; holds at {n_hold / n:.0%}"
        return Decision(verdict, numbers, summary, explanation)


def _series_points(measurement: pd.DataFrame, rule: str) -> pd.DataFrame:
    """The ``series, x, y, se`` points of a measurement with both coordinates (checked for ``rule``)."""
    return _check_columns(measurement, ("series", "x", "y", "se"), rule).dropna(subset=["x", "y"])


@dataclass(frozen=True)
class Monotone(Rule):
    """Each series moves in one direction as ``x`` grows, steps within noise allowed.

    Measurement columns: ``series``, ``x``, ``y``, ``se``.  A series is
    monotone (say increasing) if no later point is below an earlier one by
    more than t standard errors of their difference: for every i < j (in x
    order), y_j - y_i >= -t sqrt(se_i^2 + se_j^2).  Comparing every pair, not
    only neighbours, catches a slow drift against the direction made of steps
    that are each within noise.  Exact series (se = 0) allow no step back.

    reproduced
        A share >= ``share`` of the series are monotone.
    partly reproduced
        A share >= ``share`` - :data:`V.PARTLY_MARGIN` (and > 1/2).
    not reproduced
        Otherwise.
    """

    direction: str = "increasing"
    share: float = V.ALL
    t: float = V.Z_TOL
    kind: ClassVar[str] = "monotone"

    def __post_init__(self):
        if self.direction not in ("increasing", "decreasing"):
            raise ValueError(f"direction={self.direction!r} must be 'increasing' or 'decreasing'")
        _check_share(self.share)
        _check_t(self.t)

    def describe(self) -> str:
        share = _share_words(self.share, "series")
        side = "below" if self.direction == "increasing" else "above"
        return (f"{self.direction} in the parameter in {share}: no later point {side} "
                f"an earlier one by more than {self.t:g} standard errors of their difference")

    def decide(self, measurement: pd.DataFrame) -> Decision:
        m = _series_points(measurement, "Monotone")
        if m.empty:
            return not_testable("no series")
        sign = 1.0 if self.direction == "increasing" else -1.0
        broken, worst_text, worst_z, n_series = [], "", 0.0, 0
        for name, g in m.groupby("series", sort=False):
            g = g.sort_values("x")
            if len(g) < 2:
                continue
            n_series += 1
            y = sign * g["y"].to_numpy(float)
            se = g["se"].fillna(0.0).to_numpy(float)
            x = g["x"].to_numpy()
            i, j = np.triu_indices(len(g), 1)
            z = _z(y[j] - y[i], np.hypot(se[i], se[j]))
            k = int(np.argmin(z))
            if z[k] < -self.t:
                broken.append(str(name))
                if z[k] < worst_z:
                    worst_z = float(z[k])
                    worst_text = (f"{name}: {_fmt(float(sign * y[i[k]]))} at {x[i[k]]:g} to "
                                  f"{_fmt(float(sign * y[j[k]]))} at {x[j[k]]:g}")
        if n_series == 0:
            return not_testable("no series with two or more points")
        n_ok = n_series - len(broken)
        numbers = {"series": n_series, "monotone": n_ok, "broken": ", ".join(broken),
                   "worst": worst_text, "worst_z": worst_z}
        verdict = _share_verdict(n_ok, n_series, self.share)
        summary = f"{n_ok} of {n_series} series {self.direction} within noise"
        if broken:
            summary += f"; largest step against it: {worst_text} ({_fmt(abs(worst_z), 2)} SE)"
        need = _share_words(self.share, "series").removeprefix("at least ")
        explanation = f"needs {need}; " + (f"{n_ok} of {n_series}" if broken else "all") + " monotone"
        return Decision(verdict, numbers, summary, explanation)


@dataclass(frozen=True)
class ArgmaxAt(Rule):
    """The maximum of each series is at ``at``, within its standard error.

    Measurement columns: ``series``, ``x``, ``y``, ``se``.  A series passes if
    its value at x = ``at`` is within t standard errors (of the difference) of
    the series' maximum: y_max - y_at <= t sqrt(se_max^2 + se_at^2).  A
    series without the point x = ``at`` cannot be tested.

    reproduced
        A share >= ``share`` of the series pass.
    partly reproduced
        A share >= ``share`` - :data:`V.PARTLY_MARGIN` (and > 1/2).
    not reproduced
        Otherwise.  If no series has the point, the claim is not testable.
    """

    at: float
    share: float = V.ALL
    t: float = V.Z_TOL
    kind: ClassVar[str] = "argmax"

    def __post_init__(self):
        _check_share(self.share)
        _check_t(self.t)

    def describe(self) -> str:
        share = _share_words(self.share, "series")
        return (f"maximum at {self.at:g} in {share}: the value there within {self.t:g} standard errors "
                f"of the series' maximum")

    def decide(self, measurement: pd.DataFrame) -> Decision:
        m = _series_points(measurement, "ArgmaxAt")
        if m.empty:
            return not_testable("no series")
        n_series, passed, argmaxes, missing, short = 0, 0, [], 0, []
        worst_gap_z = 0.0
        for name, g in m.groupby("series", sort=False):
            x = g["x"].to_numpy(float)
            at = np.flatnonzero(np.isclose(x, self.at, rtol=1e-9, atol=1e-12))
            if at.size == 0:
                missing += 1
                continue
            n_series += 1
            y, se = g["y"].to_numpy(float), g["se"].fillna(0.0).to_numpy(float)
            k, a = int(np.argmax(y)), int(at[0])
            argmaxes.append(f"{x[k]:g} ({name})")
            z = float(_z(y[k] - y[a], np.hypot(se[k], se[a])))
            worst_gap_z = max(worst_gap_z, z)
            if z <= self.t:
                passed += 1
            else:
                short.append(f"{name}: {_fmt(float(y[a]))} at {self.at:g} against {_fmt(float(y[k]))} at {x[k]:g}")
        if n_series == 0:
            return not_testable(f"no series has the point x = {self.at:g}")
        numbers = {"series": n_series, "passed": passed, "argmax": ", ".join(argmaxes),
                   "largest_gap_z": worst_gap_z, "series_without_point": missing}
        verdict = _share_verdict(passed, n_series, self.share)
        summary = f"maximum at {', '.join(argmaxes)}"
        if short:
            summary += "; short of the maximum beyond noise: " + "; ".join(short)
        explanation = (f"{passed} of {n_series} series have x = {self.at:g} within {self.t:g} SE of their "
                       f"maximum (largest gap {_fmt(worst_gap_z, 2)} SE)")
        return Decision(verdict, numbers, summary, explanation)
