r"""Hadamard response (Acharya, Sun and Zhang, AISTATS 2019) over a per-user hashed domain.

The mechanism
-------------
Hadamard response (HR) encodes symbol ``x`` of a small alphabet as a set
``C_x`` of output symbols built from a row of a Sylvester-Hadamard matrix,
and reports an output symbol drawn with probability proportional to
``e^eps`` inside ``C_x`` and to ``1`` outside.  For general ``eps`` the
paper cuts the output alphabet into ``B`` blocks of ``b`` symbols (``B`` and
``b`` powers of two, ``K = B b`` symbols in all); symbol ``x`` is given a
block ``blk(x)`` and a row ``r(x)`` in ``[1, b)`` (row 0, the all-ones row,
is not used), and

.. math:: C_x = \{\, blk(x)\, b + t \;:\; t \in [b],\ \mathrm{popcount}(r(x) \,\&\, t) \text{ even} \,\},
          \qquad |C_x| = b/2,

.. math:: \Pr[y \mid x] = \frac{e^\varepsilon}{Z} \text{ for } y \in C_x, \qquad \frac{1}{Z} \text{ otherwise},
          \qquad Z = \tfrac b2 e^\varepsilon + K - \tfrac b2 .

Every output has probability ``e^eps / Z`` or ``1 / Z`` whatever ``x`` is, so
the ratio of the probabilities of any output under two inputs is at most
``e^eps``: HR is exactly eps-LDP (``tests/test_after_pem.py`` enumerates the
outputs).  With ``B = 1`` it is the paper's high-privacy HR, and its support
law (below) is that of the one-bit Hadamard randomizer of Bassily et al.'s
Hashtogram and of Apple's Hadamard count-mean sketch: one oracle serves all
three (see ``book/interpretation.md``, section "After PEM", ``after-pem-oracles``).

Hashing
-------
The values here are ``m``-bit strings (``m`` up to 4096), far more than any
alphabet HR can enumerate.  As OLH does, each user draws her own hash
function ``H`` from the strongly universal family of
:mod:`ldp.oracles.hashing` (a 64-bit seed, sent with the report) and applies
HR to the *cell* ``h = H(v)`` in ``[B (b - 1)]``: ``blk = h // (b - 1)``,
``r = h % (b - 1) + 1``.  The report is ``(seed, y)``: ``64 + log2 K`` bits.

Support law (what the engines use)
----------------------------------
A report supports value ``c`` iff ``y`` lies in ``C_{H(c)}``.  For the user's
own value this happens with probability

.. math:: p = \frac{(b/2)\, e^\varepsilon}{Z}.

For another value ``c != x`` the pair ``(H(c), H(x))`` is uniform on
``[B(b-1)]^2`` (pairwise independence), and by the orthogonality of the
Hadamard rows ``|C_c \cap C_x| = b/4`` when the two cells share a block with
different rows and ``0`` when the blocks differ.  Hence

.. math:: q = \frac{1}{B(b-1)} \Big[\, p + (b-2)\, \frac{(b/4)(e^\varepsilon + 1)}{Z}
          + (B-1)(b-1)\, \frac{b/2}{Z} \,\Big],

the same for every ``x != c``.  So, exactly as for OLH (law 1 of
:mod:`ldp.engines`), ``I_c ~ Bin(N_c, p) + Bin(N - N_c, q)``, the estimate
``(I_c - N q) / (p - q)`` is unbiased and the count engine applies unchanged.

References
----------
J. Acharya, Z. Sun, H. Zhang, "Hadamard Response: Estimating Distributions
Privately, Efficiently, and with Little Communication", AISTATS 2019
(arXiv:1802.04705), sections 3-4.

R. Bassily, K. Nissim, U. Stemmer, A. Thakurta, "Practical Locally Private
Heavy Hitters", NeurIPS 2017 (Hashtogram).
"""
from __future__ import annotations

import math
import sys
from functools import lru_cache
from typing import Any

import numpy as np

from ..randomness import Coins
from ..validation import check_epsilon, check_int
from .base import exp_epsilon, uint_dtype
from .hashed import HashedOracle, SymbolReports
from .hashed_kernels import MODE_HR, hashed_support

__all__ = ["HR", "HRReports", "default_blocks", "DEFAULT_BLOCK_SIZE", "max_epsilon"]

#: default symbols per block ``b`` (our choice, see the class notes)
DEFAULT_BLOCK_SIZE = 64
_MAX_CELLS = 2**31


def _is_pow2(x: int) -> bool:
    return x >= 1 and (x & (x - 1)) == 0


def default_blocks(epsilon: float) -> int:
    """Acharya et al.'s block count ``B = 2^floor(log2 e^eps)`` (at least 1).

    Their rule is ``2^floor(log2 min(e^eps, 2k))`` for an alphabet of ``k``
    symbols; the hashed alphabet here is large, so ``e^eps`` decides.
    """
    e = exp_epsilon(check_epsilon(epsilon))
    return 1 << max(0, int(math.floor(math.log2(e) + 1e-12)))


@lru_cache(maxsize=64)
def max_epsilon(block_size: int = DEFAULT_BLOCK_SIZE, default_blocks_rule: bool = True) -> float:
    """The largest ``epsilon`` :class:`HR` accepts, from its real numeric constraint.

    * With the default ``blocks`` (:func:`default_blocks`, ``B = 2^floor(log2 e^eps)``):
      the hashed domain ``B (b - 1)`` must be at most ``2**31`` (the hash
      range of :mod:`ldp.oracles.hashing`), so ``B <= 2^floor(log2(2^31 / (b - 1)))``
      and ``eps < (that exponent + 1) ln 2``: ``26 ln 2 = 18.02`` for ``b = 64``.
    * With explicit ``blocks``: ``Z = (b/2) e^eps + K - b/2`` must be a finite
      double, ``eps <= ln(DBL_MAX / (b/2))``: ``706.3`` for ``b = 64``.

    The limit is the largest double that passes the constraint (checked, not
    only computed), so the limit itself constructs an oracle.
    """
    b = int(block_size)
    if default_blocks_rule:
        top = (_MAX_CELLS // (b - 1)).bit_length() - 1  # largest B = 2^top with B (b - 1) <= 2^31
        eps = (top + 1) * math.log(2)
        while default_blocks(eps) * (b - 1) > _MAX_CELLS:
            eps = float(np.nextafter(eps, 0.0))
        return eps
    eps = math.log(sys.float_info.max) - math.log(b / 2)
    while not math.isfinite((b / 2) * math.exp(eps) + b):
        eps = float(np.nextafter(eps, 0.0))
    return eps


def _parity(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.uint64, copy=True)
    for s in (32, 16, 8, 4, 2, 1):
        v ^= v >> np.uint64(s)
    return v & np.uint64(1)


class HRReports(SymbolReports):
    """HR reports: each user's hash seed and output symbol ``y`` in ``[B b]``.

    ``params``: ``kind='HR'``, ``epsilon``, ``m``, ``blocks``, ``block_size``.
    """

    kind = "HR"

    @classmethod
    def _symbol_range(cls, params) -> tuple[int, str]:
        K = int(params["blocks"]) * int(params["block_size"])
        return K, f"blocks * block_size = {K}"


class HR(HashedOracle[HRReports]):
    """Hadamard response on a per-user hashed domain (see the module notes).

    Parameters
    ----------
    epsilon : float
        Privacy budget, a finite real number > 0, at most :func:`max_epsilon`:
        ``26 ln 2 = 18.02`` with the default ``blocks`` and ``block_size``
        (the hashed domain ``blocks * (block_size - 1)`` must stay at most
        ``2**31``), ``ln(DBL_MAX / (block_size / 2)) = 706.3`` with explicit
        ``blocks`` (``e^eps`` times ``block_size / 2`` must be a finite double).
    m : int, keyword-only, default 64
        Bit width of the values, 1 to 4096 (canonical representation of
        :mod:`ldp.values`).
    blocks : int, keyword-only, optional
        Number of blocks ``B``, a power of two from 1 to ``2**20``; default
        :func:`default_blocks` (Acharya et al.'s rule).  ``blocks=1`` is the
        high-privacy HR (one Hadamard block), whose support law is that of
        Hashtogram's one-bit Hadamard randomizer.
    block_size : int, keyword-only, default 64
        Symbols per block ``b``, a power of two from 2 to ``2**16``.  Larger
        ``b`` makes hash collisions rarer (``q`` smaller) at ``log2 b`` more
        bits per report; with ``B`` at its default the variance at ``b = 64``
        is within a few per cent of the ``b -> infinity`` limit.

    Attributes
    ----------
    p, q : float
        Support probabilities of the user's own value and of any other value.
    normalizer : float
        ``Z = (b/2) e^eps + K - b/2``: every output has probability ``e^eps/Z`` or ``1/Z``.
    cells : int
        Size ``B (b - 1)`` of the hashed domain.
    K : int
        Output alphabet size ``B b``.

    References
    ----------
    J. Acharya, Z. Sun, H. Zhang, AISTATS 2019 (arXiv:1802.04705).
    """

    kind = "HR"
    reports_class = HRReports

    def __init__(self, epsilon: float, *, m: int = 64, blocks: int | None = None,
                 block_size: int = DEFAULT_BLOCK_SIZE):
        b = check_int(block_size, "block_size", 2, 2**16)
        if not _is_pow2(b):
            raise ValueError(f"block_size must be a power of two in [2, 2**16], got {b}")
        if blocks is None:
            why = (f"with the default blocks = 2^floor(log2 e^epsilon), blocks * (block_size - 1) must be "
                   f"at most 2**31 for block_size = {b}; pass blocks to go higher")
        else:
            why = f"(block_size / 2) e^epsilon must be a finite double for block_size = {b}"
        self.epsilon = check_epsilon(epsilon, hi=max_epsilon(b, blocks is None), why=why)
        self.m = self._check_m(m)
        B = default_blocks(self.epsilon) if blocks is None else check_int(blocks, "blocks", 1, 2**20)
        if not _is_pow2(B):
            raise ValueError(f"blocks must be a power of two in [1, 2**20], got {B}")
        if B * (b - 1) < 2:
            raise ValueError("blocks * (block_size - 1) must be at least 2 (blocks=1 needs block_size >= 4)")
        if B * (b - 1) > _MAX_CELLS:
            raise ValueError(f"blocks * (block_size - 1) must be at most {_MAX_CELLS}, got {B * (b - 1)}")
        self.blocks, self.block_size = B, b
        self.cells = B * (b - 1)
        self.K = B * b
        e = exp_epsilon(self.epsilon)
        half = b / 2
        self.normalizer = half * e + self.K - half
        self.p = half * e / self.normalizer
        same_block = (b / 4) * (e + 1) / self.normalizer
        other_block = half / self.normalizer
        self.q = (self.p + (b - 2) * same_block + (B - 1) * (b - 1) * other_block) / self.cells

    @property
    def params(self) -> dict[str, Any]:
        return {"kind": "HR", "epsilon": self.epsilon, "m": self.m, "blocks": self.blocks,
                "block_size": self.block_size}

    @property
    def bits_per_report(self) -> int:
        """Bits a user sends: the 64-bit seed and ``log2 K`` bits of ``y``."""
        return 64 + (self.K - 1).bit_length()

    # ------------------------------------------------------------------ user
    def block_row(self, h) -> tuple[np.ndarray, np.ndarray]:
        """Block ``h // (b - 1)`` and Hadamard row ``h % (b - 1) + 1`` of hashed cells ``h``."""
        h = np.asarray(h, dtype=np.uint64)
        bm1 = np.uint64(self.block_size - 1)
        blk = h // bm1
        return blk, h - blk * bm1 + np.uint64(1)

    def in_set(self, h, y) -> np.ndarray:
        """Whether symbol ``y`` lies in ``C_h`` (elementwise)."""
        blk, row = self.block_row(h)
        y = np.asarray(y, dtype=np.uint64)
        b = np.uint64(self.block_size)
        return ((y // b) == blk) & (_parity(row & (y % b)) == 0)

    def output_pmf(self, cell: int) -> np.ndarray:
        """Distribution of ``y`` over ``[K]`` given the hashed cell (needs ``K <= 2**20``)."""
        h = check_int(cell, "cell", lo=0, hi=self.cells - 1)
        if self.K > 2**20:
            raise ValueError(f"output_pmf needs blocks * block_size <= 2**20, got {self.K}")
        e = exp_epsilon(self.epsilon)
        inside = self.in_set(np.full(self.K, h, dtype=np.uint64), np.arange(self.K, dtype=np.uint64))
        return np.where(inside, e, 1.0) / self.normalizer

    def _draw(self, n: int, private: Coins, public: Coins | None) -> tuple[np.ndarray, ...]:
        """``(seeds, inside, u, t)``: the hash seed (public) and three private coins.

        Each user's hash seed (uniform 64-bit, sent in the clear) comes from
        the public source; from the private one, in this order: whether ``y``
        falls in ``C_h`` (``True`` with probability ``p``), a uniform index in
        ``[0, K - b/2)`` (a symbol outside ``C_h``) and a uniform index in
        ``[0, b)`` (a symbol inside the block).  None of it depends on the values.
        """
        assert public is not None
        seeds = public.uint64(n)  # H drawn independently of v, and of the private coins
        inside = private.bernoulli(self.p, n)  # y in C_h with probability |C_h| e^eps / Z
        u = private.below(self.K - self.block_size // 2, n)
        t = private.below(self.block_size, n)
        return seeds, inside, u, t

    def apply_noise(self, values: np.ndarray, noise) -> HRReports:
        """The reports of canonical ``values`` with the randomness of :meth:`draw_noise`."""
        seeds, inside, u, t = noise
        h = self._cells(seeds, values)
        blk, row = self.block_row(h)
        b, K = self.block_size, self.K
        low = row & (~row + np.uint64(1))  # lowest set bit of the row: flips the parity of row & t
        par = _parity(row & t)
        t_even = np.where(par == 0, t, t ^ low)  # uniform on the even half (C_h within the block)
        t_odd = np.where(par == 1, t, t ^ low)  # uniform on the odd half
        base = blk * np.uint64(b)
        other = u + np.where(u >= base, np.uint64(b), np.uint64(0))  # uniform over the other blocks
        outside = np.where(u < np.uint64(K - b), other, base + t_odd)
        y = np.where(inside, base + t_even, outside)
        return HRReports(self.params, seed=seeds, y=y.astype(uint_dtype(K - 1)))

    # ---------------------------------------------------------------- server
    def _support(self, reports: HRReports, candidates: np.ndarray) -> np.ndarray:
        return hashed_support(reports.seed, self._chunks(candidates), self.cells, MODE_HR, ys=reports.y,
                              b=self.block_size, blocks=self.blocks)
