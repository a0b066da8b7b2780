"""Optimized unary encoding (Wang et al. 2017)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..randomness import Coins
from ..validation import EXP_MAX_EPSILON, check_epsilon, check_int
from .base import FrequencyOracle, Reports, bits_field, check_indices, exp_epsilon, report_array

__all__ = ["OUE", "OUEReports"]

#: largest supported domain (each report holds ``domain_size`` bits)
MAX_DOMAIN = 2**24
#: random floats drawn per privatize batch (bounds temporary memory to ~32 MB)
_BATCH_CELLS = 2**22


class OUEReports(Reports):
    """OUE reports: each user's perturbed bit vector of length ``domain_size``.

    Stored packed (``numpy.packbits``, big bit order: bit ``j`` of a user is
    ``(bits[:, j // 8] >> (7 - j % 8)) & 1``), shape ``(n, ceil(d / 8))``.

    ``params``: ``kind='OUE'``, ``epsilon``, ``domain_size``.
    """

    kind = "OUE"
    fields = ("bits",)
    bits = report_array("bits", "Packed bit vectors, ``uint8`` of shape ``(n, ceil(domain_size / 8))``.")

    def unpacked(self) -> np.ndarray:
        """The bit vectors as a ``(n, domain_size)`` ``uint8`` 0/1 array."""
        return np.unpackbits(self.bits, axis=1, count=int(self._params["domain_size"]))

    @classmethod
    def layout(cls, params):
        d = int(params["domain_size"])
        return (bits_field("bits", d, f"domain_size = {d}"),)


class OUE(FrequencyOracle[OUEReports]):
    """Optimized unary encoding (OUE).

    The user encodes her value ``v`` as the one-hot vector of length ``d``
    and sends every bit independently perturbed: the bit at ``v`` is 1 with
    probability ``p = 1/2``, every other bit is 1 with probability
    ``q = 1 / (e^eps + 1)``.  A report supports ``v`` if its bit ``v`` is 1.

    Parameters
    ----------
    epsilon : float
        Privacy budget in ``(0, 709.78]`` (:data:`ldp.validation.EXP_MAX_EPSILON`).
    domain_size : int
        Number of possible values ``d``, 2 to ``2**24`` (reports take
        ``ceil(d/8)`` bytes per user).

    Attributes
    ----------
    p, q : float
        ``1/2`` and ``1/(e^eps + 1)``.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private
    protocols for frequency estimation", USENIX Security 2017, section 4.3
    (variance ``4 e^eps / (e^eps - 1)^2 n``, the same as OLH's eq. (3)).
    """

    kind = "OUE"
    reports_class = OUEReports
    positional = ("domain_size",)

    def __init__(self, epsilon: float, domain_size: int):
        self.epsilon = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why="e**epsilon must be a finite double")
        self.domain_size = check_int(domain_size, "domain_size", lo=2, hi=MAX_DOMAIN)
        e = exp_epsilon(self.epsilon)
        self.p = 0.5  # Wang et al. 2017, OUE: p = 1/2
        self.q = 1.0 / (e + 1.0)  # Wang et al. 2017, OUE: q = 1/(e^eps + 1)

    @property
    def params(self) -> dict[str, Any]:
        return {"kind": "OUE", "epsilon": self.epsilon, "domain_size": self.domain_size}

    # ------------------------------------------------------------------ user
    def bit_probabilities(self, value: int) -> np.ndarray:
        """``Pr[bit j = 1]`` for each ``j`` given the user's ``value`` (bits are independent).

        The law :meth:`privatize` samples from.
        """
        v = check_int(value, "value", lo=0, hi=self.domain_size - 1)
        probs = np.full(self.domain_size, self.q)
        probs[v] = self.p
        return probs

    def check_values(self, values) -> np.ndarray:
        return check_indices(values, self.domain_size, "values")

    def _draw(self, n: int, private: Coins, public: Coins | None) -> tuple[np.ndarray, np.ndarray]:
        """``(bits, own)``: every bit 1 with probability ``q`` (packed), and the own bit, 1 with probability ``p``.

        Users are drawn in batches of ``max(1, 2**22 // domain_size)``; per
        batch one coin per bit of every user, then one per user for the bit at
        her value (which :meth:`apply_noise` writes over the first).  ``bits``
        is packed like the reports (``uint8``, ``(n, ceil(d / 8))``).  OUE has
        no public parts.
        """
        d = self.domain_size
        bits = np.empty((n, -(-d // 8)), dtype=np.uint8)
        own = np.empty(n, dtype=bool)
        batch = max(1, _BATCH_CELLS // d)
        for s in range(0, n, batch):
            k = min(batch, n - s)
            bits[s:s + k] = np.packbits(private.bernoulli(self.q, (k, d)), axis=1)  # other bits: 1 w.p. q
            own[s:s + k] = private.bernoulli(self.p, k)  # own bit: 1 w.p. p
        return bits, own

    def apply_noise(self, values: np.ndarray, noise) -> OUEReports:
        """The reports of checked ``values`` with the randomness of :meth:`draw_noise`: bit ``v`` set to ``own``."""
        bits, own = noise
        v = np.asarray(values).astype(np.intp)
        out = np.array(bits, dtype=np.uint8, copy=True)
        rows = np.arange(v.shape[0])
        mask = (np.uint8(128) >> (v & 7).astype(np.uint8))
        out[rows, v >> 3] = np.where(own, out[rows, v >> 3] | mask, out[rows, v >> 3] & ~mask)
        return OUEReports(self.params, bits=out)

    # ---------------------------------------------------------------- server
    def _check_candidates(self, candidates) -> np.ndarray:
        return check_indices(candidates, self.domain_size, "candidates")

    def column_sums(self, reports: OUEReports) -> np.ndarray:
        """Support counts of every value ``0 .. d-1`` (``int64``)."""
        self.check_reports(reports)
        d = self.domain_size
        total = np.zeros(d, dtype=np.int64)
        rows = max(1, _BATCH_CELLS // d)
        bits = reports.bits
        for s in range(0, bits.shape[0], rows):
            total += np.unpackbits(bits[s:s + rows], axis=1, count=d).sum(axis=0, dtype=np.int64)
        return total

    def _support(self, reports: OUEReports, candidates: np.ndarray) -> np.ndarray:
        c = candidates.astype(np.intp)
        if c.shape[0] * 8 >= self.domain_size:  # many candidates: count every column once
            return self.column_sums(reports)[c]
        bits = reports.bits
        out = np.empty(c.shape[0], dtype=np.int64)
        for i, j in enumerate(c):
            out[i] = np.count_nonzero(bits[:, j >> 3] & np.uint8(1 << (7 - (j & 7))))
        return out

    def _variance0(self, n: int) -> float:
        e = math.exp(self.epsilon)
        return n * 4 * (e / (e - 1)) / (e - 1)  # Wang et al. 2017, OUE variance (= eq. (3)), no overflow
