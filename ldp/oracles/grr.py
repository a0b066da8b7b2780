"""Generalized randomized response (paper section 2.2.1)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..randomness import Coins
from ..validation import EXP_MAX_EPSILON, check_epsilon, check_int
from .base import (
    FrequencyOracle,
    Reports,
    check_indices,
    grr_apply,
    grr_draw,
    grr_pmf,
    report_array,
    symbol_field,
    uint_dtype,
)
from .formulas import grr_pq, grr_variance

__all__ = ["GRR", "GRRReports"]

#: the largest supported domain (values and reports must fit in int64 arithmetic)
MAX_DOMAIN = 2**62
#: domains up to this size are counted with a dense histogram
_DENSE_LIMIT = 2**24


class GRRReports(Reports):
    """GRR reports: one perturbed value ``y`` in ``[0, domain_size)`` per user.

    ``params``: ``kind='GRR'``, ``epsilon``, ``domain_size``.
    """

    kind = "GRR"
    fields = ("y",)

    y = report_array("y", "Each user's reported value (smallest unsigned dtype holding ``domain_size - 1``).")

    @classmethod
    def layout(cls, params):
        d = int(params["domain_size"])
        return (symbol_field("y", d, f"domain_size = {d}"),)


class GRR(FrequencyOracle[GRRReports]):
    """Generalized randomized response (GRR, also called k-RR / direct encoding).

    Each user reports her value ``v`` with probability
    ``p = e^eps / (e^eps + d - 1)`` and each other value with probability
    ``q = 1 / (e^eps + d - 1)``.

    Parameters
    ----------
    epsilon : float
        Privacy budget in ``(0, 709.78]`` (:data:`ldp.validation.EXP_MAX_EPSILON`).
    domain_size : int
        Number of possible values ``d``, 2 to ``2**62``; values are the
        integers ``0 .. d-1``.

    Attributes
    ----------
    p, q : float
        Probability that a report equals the user's value, resp. one given
        other value.

    References
    ----------
    Paper section 2.2.1 (GRR), eq. (1).
    S. L. Warner, "Randomized response", JASA 1965; GRR's variance as in
    T. Wang, J. Blocki, N. Li, S. Jha (USENIX Security 2017).

    Examples
    --------
    >>> import numpy as np, ldp
    >>> grr = ldp.GRR(1.0, domain_size=4)
    >>> reports = grr.privatize(np.array([0, 1, 1, 3]), rng=7)
    >>> grr.estimate(reports, [0, 1, 2, 3]).shape
    (4,)
    """

    kind = "GRR"
    reports_class = GRRReports
    positional = ("domain_size",)

    def __init__(self, epsilon: float, domain_size: int):
        self.epsilon = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why="e**epsilon must be a finite double")
        self.domain_size = check_int(domain_size, "domain_size", lo=2, hi=MAX_DOMAIN)
        self.p, self.q = grr_pq(self.epsilon, self.domain_size)  # section 2.2.1

    @property
    def params(self) -> dict[str, Any]:
        return {"kind": "GRR", "epsilon": self.epsilon, "domain_size": self.domain_size}

    # ------------------------------------------------------------------ user
    def output_pmf(self, value: int) -> np.ndarray:
        """Distribution of one user's report given her ``value``, over ``[0, d)``.

        This is the law :meth:`privatize` samples from (keep with
        probability ``p``, else uniform over the ``d - 1`` other values).
        """
        v = check_int(value, "value", lo=0, hi=self.domain_size - 1)
        if self.domain_size > _DENSE_LIMIT:
            raise ValueError(f"output_pmf needs domain_size <= {_DENSE_LIMIT}, got {self.domain_size}")
        return grr_pmf(v, self.domain_size, self.p)

    def check_values(self, values) -> np.ndarray:
        return check_indices(values, self.domain_size, "values")

    def _draw(self, n: int, private: Coins, public: Coins | None) -> tuple[np.ndarray, np.ndarray]:
        """``(keep, r)``: the keep coin (``True`` with probability ``p``) and a uniform index in ``[0, d - 1)``.

        Drawn in that order (:func:`ldp.oracles.base.grr_draw`); GRR has no public parts.
        """
        return grr_draw(n, self.domain_size, self.p, private)

    def apply_noise(self, values: np.ndarray, noise) -> GRRReports:
        """The reports of checked ``values`` (``uint64``) with the randomness of :meth:`draw_noise`."""
        keep, r = noise
        y = grr_apply(values, keep, r)
        return GRRReports(self.params, y=y.astype(uint_dtype(self.domain_size - 1)))

    # ---------------------------------------------------------------- server
    def _check_candidates(self, candidates) -> np.ndarray:
        return check_indices(candidates, self.domain_size, "candidates")

    def _support(self, reports: GRRReports, candidates: np.ndarray) -> np.ndarray:
        y = reports.y
        if self.domain_size <= _DENSE_LIMIT:
            hist = np.bincount(y.astype(np.intp), minlength=self.domain_size)
            return hist[candidates.astype(np.intp)].astype(np.int64)
        ys = np.sort(y)
        return (np.searchsorted(ys, candidates, side="right")
                - np.searchsorted(ys, candidates, side="left")).astype(np.int64)

    def _variance0(self, n: int) -> float:
        return float(grr_variance(self.epsilon, self.domain_size, n))  # eq. (1)
