"""Where a randomizer's coins come from: a seeded simulation stream or the operating system's CSPRNG.

Every randomizer of :mod:`ldp.oracles` draws its per-user randomness through
three primitives of a *coin source* (:class:`Coins`): uniform 64-bit words
(hash seeds), uniform integers below a bound (GRR's replacement, HR's
symbols) and Bernoulli coins (GRR's keep coin, OUE's and CMS's bits).  Two
sources implement them:

* :class:`GeneratorCoins` -- a numpy ``Generator`` (a seeded **simulation**:
  whoever holds the seed can recompute every coin, so the seed is the secret
  of every simulated user; the book's bit-identical reruns need it);
* :class:`SystemCoins` -- the operating system's cryptographically secure
  generator (:func:`os.urandom`, the source of :mod:`secrets`), with no seed
  at all: what a user's device uses (:mod:`ldp.client`).

A report's *public* parts (the hash seeds it sends in the clear) and its
*private* coins must come from independent streams (:func:`coin_sources`):
with a numpy generator the public stream is a child spawned from it
(``Generator.spawn``), never the generator's own output; with the system
source both are fresh OS randomness.

Exactness of the system source
------------------------------
:meth:`SystemCoins.bernoulli` draws ``True`` with probability exactly ``p``
for the double ``p`` it is given: it compares a uniform random binary
fraction ``U = 0.u_1 u_2 ...``, drawn one byte at a time, with the binary
expansion of ``p`` (finite, because a double is a dyadic rational with at
most 1074 fractional bits) and returns ``U < p``.  The first byte decides
unless it equals ``p``'s first byte (probability 1/256); only then is the
next byte drawn, and so on, so a coin costs ``256/255`` random bytes on
average and is exact (no rounding to 53 bits as ``random() < p`` does: that
gives ``ceil(p 2^53) / 2^53``).  The remaining gap to the *real* number the
formula defines (e.g. ``e^eps / (e^eps + d' - 1)``) is the rounding of ``p``
to a double, a relative error below ``2^-53``.  :meth:`SystemCoins.below`
draws an exactly uniform integer in ``[0, k)`` by rejection: the smallest
whole number of bytes holding ``k - 1``, masked to the next power of two,
redrawn while ``>= k`` (fewer than two rounds on average).
"""
from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from fractions import Fraction

import numpy as np

from .validation import check_rng

__all__ = ["Coins", "GeneratorCoins", "SystemCoins", "coin_sources", "system_words", "binary_expansion"]


def _size(size) -> tuple[int, ...]:
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    if any(int(s) < 0 for s in shape):
        raise ValueError(f"size must be non-negative, got {size!r}")
    return tuple(int(s) for s in shape)


class Coins(ABC):
    """A source of a randomizer's coins (see the module notes)."""

    @abstractmethod
    def uint64(self, size) -> np.ndarray:
        """Uniform 64-bit words, ``uint64`` array of shape ``size``."""

    @abstractmethod
    def below(self, k: int, size) -> np.ndarray:
        """Uniform integers in ``[0, k)`` (``1 <= k <= 2**64``), ``uint64`` array of shape ``size``."""

    @abstractmethod
    def bernoulli(self, p: float, size) -> np.ndarray:
        """``True`` with probability ``p`` each, independently; ``bool`` array of shape ``size``."""

    @abstractmethod
    def public(self) -> Coins:
        """An independent source for the public parts of reports (hash seeds)."""


class GeneratorCoins(Coins):
    """Coins from a numpy ``Generator``: the seeded simulation.

    The draws are those numpy makes: ``integers(0, 2**64)``, ``integers(0, k)``
    and ``random(size) < p`` (``p`` rounded up to a multiple of ``2**-53``).

    Parameters
    ----------
    generator : numpy.random.Generator
    """

    def __init__(self, generator: np.random.Generator):
        self.generator = generator

    def uint64(self, size) -> np.ndarray:
        return self.generator.integers(0, 2**64, size=size, dtype=np.uint64)

    def below(self, k: int, size) -> np.ndarray:
        return self.generator.integers(0, k, size=size, dtype=np.uint64)

    def bernoulli(self, p: float, size) -> np.ndarray:
        return self.generator.random(size) < p

    def public(self) -> GeneratorCoins:
        """A child spawned from the generator (``Generator.spawn``): never the generator's own stream."""
        try:
            child = self.generator.spawn(1)[0]
        except (TypeError, ValueError):  # pragma: no cover - a bit generator without a SeedSequence
            child = np.random.default_rng(np.random.SeedSequence(self.generator.integers(0, 2**63, size=4)))
        return GeneratorCoins(child)


def system_words(count: int, nbytes: int = 8) -> np.ndarray:
    """``count`` uniform unsigned integers of ``nbytes`` (1, 2, 4 or 8) bytes from :func:`os.urandom`."""
    dt = np.dtype(f"<u{nbytes}")
    return np.frombuffer(os.urandom(count * nbytes), dtype=dt).astype(dt.newbyteorder("="))


class SystemCoins(Coins):
    """Coins from the operating system's CSPRNG (:func:`os.urandom`): no seed, nothing to recompute.

    What a user's device uses (:mod:`ldp.client`).  Bernoulli coins and
    bounded integers are exact (see the module notes).
    """

    def uint64(self, size) -> np.ndarray:
        shape = _size(size)
        return system_words(math.prod(shape), 8).astype(np.uint64).reshape(shape)

    def below(self, k: int, size) -> np.ndarray:
        shape = _size(size)
        k = int(k)
        if not 1 <= k <= 2**64:
            raise ValueError(f"k must be an integer in [1, 2**64], got {k}")
        count = math.prod(shape)
        top = k - 1
        if top == 0:
            return np.zeros(shape, dtype=np.uint64)
        nbytes = next(b for b in (1, 2, 4, 8) if top < 1 << (8 * b))
        mask = np.uint64((1 << top.bit_length()) - 1)
        out = system_words(count, nbytes).astype(np.uint64) & mask
        bad = np.flatnonzero(out > np.uint64(top))
        while bad.size:  # rejection: each round keeps the draws < k (probability > 1/2 each)
            redraw = system_words(bad.size, nbytes).astype(np.uint64) & mask
            out[bad] = redraw
            bad = bad[redraw > np.uint64(top)]
        return out.reshape(shape)

    def bernoulli(self, p: float, size) -> np.ndarray:
        shape = _size(size)
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
        count = math.prod(shape)
        if p == 1.0:
            return np.ones(shape, dtype=bool)
        digits = binary_expansion(p)  # p = 0.d_1 d_2 ... d_L in base 256, exactly
        if not digits:
            return np.zeros(shape, dtype=bool)
        u = system_words(count, 1)
        out = u < digits[0]
        open_ = np.flatnonzero(u == digits[0])  # U and p agree so far: draw the next byte
        for d in digits[1:]:
            if not open_.size:
                break
            u = system_words(open_.size, 1)
            out[open_[u < d]] = True
            open_ = open_[u == d]
        # still undecided after p's last byte: U >= p (its further bytes are >= 0), so False
        return out.reshape(shape)

    def public(self) -> SystemCoins:
        """Another system source: OS randomness is independent from draw to draw."""
        return SystemCoins()

    def __repr__(self) -> str:
        return "SystemCoins()"


def binary_expansion(p: float) -> bytes:
    """The base-256 digits of ``p`` in ``[0, 1)`` after the point (exact, trailing zeros dropped)."""
    frac = Fraction(p)
    shift = frac.denominator.bit_length() - 1  # the denominator is 2**shift
    nbytes = -(-shift // 8)
    num = frac.numerator << (8 * nbytes - shift)
    return num.to_bytes(nbytes, "big").rstrip(b"\0") if nbytes else b""


def coin_sources(rng=None, public_rng=None, *, public: bool = True) -> tuple[Coins, Coins | None]:
    """The private and the public coin source of a randomizer call.

    Parameters
    ----------
    rng : None, int, SeedSequence, BitGenerator, Generator or Coins
        The private coins: anything :func:`ldp.validation.check_rng` accepts
        (a seeded simulation) or a :class:`Coins` (e.g. :class:`SystemCoins`).
    public_rng : same kinds, optional
        The public parts (hash seeds).  Default: an independent source derived
        from ``rng`` (:meth:`Coins.public`: a spawned child of a numpy
        generator, fresh OS randomness for the system source), never the
        private stream itself.
    public : bool
        Whether the randomizer has public parts at all (``False``: nothing is
        spawned and the second value is ``None``).

    Returns
    -------
    private, public : Coins, Coins or None
    """
    private = rng if isinstance(rng, Coins) else GeneratorCoins(check_rng(rng, "rng"))
    if not public:
        return private, None
    if public_rng is None:
        return private, private.public()
    pub = public_rng if isinstance(public_rng, Coins) else GeneratorCoins(check_rng(public_rng, "public_rng"))
    return private, pub
