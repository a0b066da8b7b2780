"""How a reports class lays out what a user sends: :class:`Field`, byte for byte.

Each reports class of :mod:`ldp.oracles` describes its per-user arrays with
:meth:`ldp.oracles.Reports.layout`; the checks of a reports object and the
wire format of :mod:`ldp.client` both read it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Field", "symbol_field", "bits_field", "SEED_FIELD", "uint_dtype"]


def uint_dtype(max_value: int) -> np.dtype:
    """The smallest unsigned dtype holding ``max_value``."""
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if max_value <= np.iinfo(dt).max:
            return np.dtype(dt)
    raise ValueError(f"{max_value} does not fit in 64 bits")


@dataclass(frozen=True)
class Field:
    """The layout of one per-user array of a reports class: what a user sends, byte for byte.

    Used to check reports (:meth:`Reports.layout`) and by the wire format of
    :mod:`ldp.client`, which writes each field's bytes little-endian.

    Attributes
    ----------
    name : str
        The array's name in :attr:`Reports.fields`.
    dtype : numpy.dtype
        Its dtype (native byte order).
    width : int
        Items per user: 1 for a scalar field (array of shape ``(n,)``), the
        number of bytes for packed bits (shape ``(n, width)``).
    bound : int or None
        A scalar field's values lie in ``[0, bound)`` (``None``: any value of
        the dtype); packed bits: the number of meaningful bits (the padding
        bits after them are 0).
    what : str
        How messages name ``bound`` (``"d_prime = 9"``).
    packed : bool
        Packed bits (:func:`numpy.packbits` order) rather than one integer per user.
    """

    name: str
    dtype: np.dtype
    width: int = 1
    bound: int | None = None
    what: str = ""
    packed: bool = False

    @property
    def nbytes(self) -> int:
        """Bytes per user."""
        return self.width * np.dtype(self.dtype).itemsize

    @property
    def row_shape(self) -> tuple[int, ...]:
        """Shape of one user's entry (``()`` for a scalar field)."""
        return (self.width,) if self.packed else ()

    def invalid(self, a: np.ndarray) -> np.ndarray:
        """Which users' entries are out of range (``bool``, one per row of a well-shaped array ``a``)."""
        if self.packed:
            pad = 8 * self.width - int(self.bound or 8 * self.width)
            if not pad or not a.size:
                return np.zeros(a.shape[0], dtype=bool)
            return (a[:, -1] & np.uint8((1 << pad) - 1)) != 0
        if self.bound is None:
            return np.zeros(a.shape[0], dtype=bool)
        return a >= self.bound

    def problem(self, kind: str, a: np.ndarray) -> str | None:
        """What is wrong with the whole array ``a`` of this field (``None`` if nothing)."""
        dt = np.dtype(self.dtype)
        if self.packed:
            if a.dtype != dt or a.ndim != 2 or a.shape[1] != self.width:
                return (f"{kind} reports {self.name!r} must be a {dt} array of shape (n, {self.width}), "
                        f"got {a.dtype} {a.shape}")
            if np.any(self.invalid(a)):
                return f"{kind} reports {self.name!r} have bits set beyond {self.what}"
            return None
        if a.ndim != 1 or a.dtype != dt:
            return f"{kind} reports {self.name!r} must be a 1-D {dt} array, got {a.dtype} of shape {a.shape}"
        if self.bound is not None and a.size and int(a.max()) >= self.bound:
            return f"{kind} reports {self.name!r} must be in [0, {self.what}), found {int(a.max())}"
        return None


def symbol_field(name: str, size: int, what: str) -> Field:
    """A scalar field of symbols in ``[0, size)``, of the smallest unsigned dtype holding them."""
    return Field(name, uint_dtype(size - 1), 1, size, what)


def bits_field(name: str, width: int, what: str) -> Field:
    """A field of ``width`` bits per user, packed into ``ceil(width / 8)`` bytes."""
    return Field(name, np.dtype(np.uint8), -(-width // 8), width, what, packed=True)


#: a user's 64-bit hash seed, sent in the clear (the public part of OLH, HR and CMS reports)
SEED_FIELD = Field("seed", np.dtype(np.uint64))
