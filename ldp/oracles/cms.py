r"""Apple's count-mean sketch (CMS) randomizer, with one hash function per user.

The mechanism (Apple Differential Privacy Team, 2017, "Count Mean Sketch")
-------------------------------------------------------------------------
The user hashes her value to a cell ``h = H(v)`` of ``[w]``, writes the
one-hot vector of ``h`` in ``{-1, +1}^w`` (``+1`` at ``h``), and flips every
coordinate independently with probability ``f = 1 / (e^(eps/2) + 1)``.  Two
inputs change at most two coordinates of the one-hot vector, each by a
factor ``(1 - f) / f = e^(eps/2)``, so every output's probability changes by
at most ``e^eps``: the randomizer is exactly eps-LDP
(``tests/test_after_pem.py`` enumerates every output for small ``w``).

Here the bits are stored as ``0/1`` (``1`` for ``+1``), packed with
:func:`numpy.packbits`; a report is the user's 64-bit hash seed and her
``w`` bits.

One hash function per user (our choice)
---------------------------------------
Apple's sketch uses a fixed public set of ``k`` hash functions; the user
picks one at random and the server adds each report into row ``j`` of a
``k x w`` sketch matrix.  Given that fixed set, the probability that another
value ``x`` collides with a candidate ``c`` is ``#{j : h_j(x) = h_j(c)} / k``,
which depends on the pair, so the supports have no value-independent law.
As OLH does, we let each user draw her own function from the strongly
universal family of :mod:`ldp.oracles.hashing` (``k = 2**64``), so that a
collision has probability ``1/w`` for every pair and the supports follow
law 1 of :mod:`ldp.engines` exactly.  The price is on the server: it
evaluates every report on every candidate (like OLH) instead of reading a
``k x w`` matrix.

Support law
-----------
A report supports ``c`` iff bit ``H(c)`` is set.  For the user's own value
(bit ``H(v)``, originally ``+1``) this has probability ``p = 1 - f``; for any
other value it has probability

.. math:: q = \frac{p}{w} + \Big(1 - \frac1w\Big) f

(the cells collide with probability ``1/w``).  The estimate
``(I_c - N q) / (p - q)`` is Apple's debiased count ``m/(m-1) (...)`` written
with ``0/1`` bits, and ``I_c ~ Bin(N_c, p) + Bin(N - N_c, q)``.

References
----------
Apple Differential Privacy Team, "Learning with Privacy at Scale", Apple
Machine Learning Journal 1(8), 2017 (algorithms A_client-CMS and
A_server-CMS).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..randomness import Coins
from ..validation import EXP_MAX_EPSILON, check_epsilon, check_int
from .base import SEED_FIELD, bits_field, exp_epsilon, report_array
from .hashed import HashedOracle, SeededReports
from .hashed_kernels import MODE_CMS, hashed_support

__all__ = ["CMS", "CMSReports", "DEFAULT_WIDTH"]

#: default sketch width ``w`` (our choice; Apple's paper leaves it a deployment parameter)
DEFAULT_WIDTH = 1024
_CHUNK = 4096  # users per batch when drawing the bit flips


class CMSReports(SeededReports):
    """CMS reports: each user's hash seed and her ``w`` noisy bits, packed.

    ``params``: ``kind='CMS'``, ``epsilon``, ``m``, ``width``.
    """

    kind = "CMS"
    fields = ("seed", "bits")
    bits = report_array("bits", "``uint8`` array ``(n, ceil(w / 8))``: the bits in :func:`numpy.packbits` order.")

    def unpacked(self) -> np.ndarray:
        """The bits as a ``uint8`` 0/1 array ``(n, w)``."""
        return np.unpackbits(self.bits, axis=1, count=int(self._params["width"]))

    @classmethod
    def layout(cls, params):
        w = int(params["width"])
        return SEED_FIELD, bits_field("bits", w, f"width = {w}")


class CMS(HashedOracle[CMSReports]):
    """Count-mean sketch randomizer with a per-user hash (see the module notes).

    Parameters
    ----------
    epsilon : float
        Privacy budget of one report, in ``(0, 709.78]`` (each bit is kept
        with probability ``e^(eps/2) / (e^(eps/2) + 1)``, computed from
        ``e^eps``, which must be a finite double).
    m : int, keyword-only, default 64
        Bit width of the values, 1 to 4096.
    width : int, keyword-only, default 1024
        Sketch width ``w`` (bits per report besides the seed), 2 to ``2**16``.

    Attributes
    ----------
    p, q : float
        Support probabilities of the user's own value and of any other value.
    flip : float
        Probability ``f`` that a bit is flipped.

    References
    ----------
    Apple Differential Privacy Team, "Learning with Privacy at Scale", 2017.
    """

    kind = "CMS"
    reports_class = CMSReports

    def __init__(self, epsilon: float, *, m: int = 64, width: int = DEFAULT_WIDTH):
        self.epsilon = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why="e**epsilon must be a finite double")
        self.m = self._check_m(m)
        self.width = check_int(width, "width", 2, 2**16)
        self.cells = self.width
        e_half = math.sqrt(exp_epsilon(self.epsilon))
        self.flip = 1.0 / (e_half + 1.0)
        self.p = 1.0 - self.flip
        w = self.width
        self.q = self.p / w + (1.0 - 1.0 / w) * self.flip

    @property
    def params(self) -> dict[str, Any]:
        return {"kind": "CMS", "epsilon": self.epsilon, "m": self.m, "width": self.width}

    @property
    def bits_per_report(self) -> int:
        """Bits a user sends: the 64-bit seed and ``w`` sketch bits."""
        return 64 + self.width

    def bit_probabilities(self, cell: int) -> np.ndarray:
        """``Pr[bit j = 1]`` for ``j`` in ``[w]`` given the hashed cell (bits independent)."""
        h = check_int(cell, "cell", lo=0, hi=self.width - 1)
        out = np.full(self.width, self.flip)
        out[h] = self.p
        return out

    def _draw(self, n: int, private: Coins, public: Coins | None) -> tuple[np.ndarray, np.ndarray]:
        """``(seeds, flips)``: each user's hash seed (public) and which of her ``w`` bits are flipped.

        The seeds (uniform 64-bit, sent in the clear) come from the public
        source; the flips (each bit with probability ``f``, packed like the
        reports' bits: ``uint8``, ``(n, ceil(w/8))``) from the private one.
        None of it depends on the values.
        """
        assert public is not None
        seeds = public.uint64(n)  # H drawn independently of v, and of the private coins
        w = self.width
        flips = np.empty((n, -(-w // 8)), dtype=np.uint8)
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            flips[lo:hi] = np.packbits(private.bernoulli(self.flip, (hi - lo, w)), axis=1)
        return seeds, flips

    def apply_noise(self, values: np.ndarray, noise) -> CMSReports:
        """The reports of canonical ``values`` with the randomness of :meth:`draw_noise`.

        The one-hot ``+1`` at ``H(v)`` is XOR-ed into the flips, so bit
        ``H(v)`` is 1 with probability ``1 - f`` and every other bit with
        probability ``f``.
        """
        seeds, flips = noise
        h = self._cells(seeds, values).astype(np.int64)
        out = np.array(flips, dtype=np.uint8, copy=True)
        out[np.arange(h.shape[0]), h >> 3] ^= (np.uint8(128) >> (h & 7).astype(np.uint8))
        return CMSReports(self.params, seed=seeds, bits=out)

    # ---------------------------------------------------------------- server
    def _support(self, reports: CMSReports, candidates: np.ndarray) -> np.ndarray:
        return hashed_support(reports.seed, self._chunks(candidates), self.width, MODE_CMS, bits=reports.bits)
