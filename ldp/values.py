"""m-bit values: the representation every oracle and protocol shares.

The paper (section 3) treats a user's value as a bit string of length ``m`` and
a *prefix of length L* as its first ``L`` bits read left to right.  We store a
value as the unsigned integer whose binary expansion, written with exactly
``m`` digits, is that bit string, so the prefix of length ``L`` is
``value >> (m - L)`` (the most significant bits).

Representation
--------------
* ``m <= 64``: a 1-D ``numpy.uint64`` array of shape ``(n,)``.
* ``m > 64``: a 2-D ``numpy.uint64`` array of shape ``(n, W)`` with
  ``W = ceil(m / 64)`` words, most significant word first, the integer
  right-aligned (the top ``64 W - m`` bits of word 0 are zero).

Nothing here allocates memory proportional to ``2**m``.

Strings are mapped to values by :func:`encode`: UTF-8 bytes (``bytes`` taken as
they are), padded on the right with :data:`PAD_BYTE` (a space, ``0x20``,
which is how the paper authors' AOL tally pads short queries), read
big-endian, so the first character holds the most significant bits.  A string
longer than ``nbytes`` is an error unless ``truncate=True`` keeps its first
``nbytes`` bytes.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .validation import check_rng

__all__ = [
    "PAD_BYTE",
    "MAX_BITS",
    "n_words",
    "n_chunks",
    "as_values",
    "prefix",
    "extend",
    "from_ints",
    "to_ints",
    "to_chunks32",
    "value_keys",
    "match_sorted",
    "sort_unique",
    "group_values",
    "uniform",
    "encode",
    "decode",
    "value_width_error",
]

#: byte used to pad strings shorter than ``nbytes`` (ASCII space)
PAD_BYTE = b" "
#: the largest supported width; any multiple of 64 works, this bounds mistakes
MAX_BITS = 4096

_MASK32 = np.uint64(0xFFFFFFFF)


def _check_m(m, name: str = "m") -> int:
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"{name} must be an integer number of bits in [1, {MAX_BITS}], got {m!r}")
    m = int(m)
    if not 1 <= m <= MAX_BITS:
        raise ValueError(f"{name} must be in [1, {MAX_BITS}] bits, got {m}")
    return m


def n_words(m: int) -> int:
    """Number of 64-bit words that hold an ``m``-bit value (1 for m <= 64)."""
    return max(1, -(-_check_m(m) // 64))


def n_chunks(m: int) -> int:
    """Number of 32-bit chunks the hash reads from an ``m``-bit value."""
    return max(1, -(-_check_m(m) // 32))


def value_width_error(name: str, m: int) -> ValueError:
    """The error for an array ``name`` holding a value of more than ``m`` bits (returned, not raised)."""
    return ValueError(f"{name} must hold values in [0, 2**{m}) (m = {m} bits); found a wider value")


def _check_width(arr: np.ndarray, m: int, name: str) -> None:
    """Raise if any value in a canonical array has bits above position m."""
    if arr.size == 0:
        return
    if arr.ndim == 1:
        if m < 64 and int(arr.max()) >> m:
            raise value_width_error(name, m)
    else:
        top = m - 64 * (arr.shape[1] - 1)  # bits used in word 0
        if top < 64 and int(arr[:, 0].max()) >> top:
            raise value_width_error(name, m)


def as_values(values, m: int, *, name: str = "values", allow_empty: bool = False) -> np.ndarray:
    """Validate and convert ``values`` to the canonical ``m``-bit array.

    Parameters
    ----------
    values : array_like
        For ``m <= 64``: integers (a ``uint64`` array is used without a copy).
        For ``m > 64``: a ``(n, ceil(m/64))`` ``uint64`` array or a sequence of
        Python ints.
    m : int
        Width in bits, 1 to ``MAX_BITS``.
    name : str
        Name used in error messages.
    allow_empty : bool
        Whether an empty input is acceptable.

    Returns
    -------
    numpy.ndarray
        ``uint64`` array of shape ``(n,)`` (m <= 64) or ``(n, W)``.

    Raises
    ------
    ValueError
        Empty input (unless allowed), negative values, values of ``m`` or more
        bits, or an array of the wrong shape.
    """
    m = _check_m(m)
    W = n_words(m)
    if isinstance(values, np.ndarray) and values.dtype == np.uint64:
        arr = values
    elif isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        if values.size and values.dtype.kind == "i" and values.min() < 0:
            raise ValueError(f"{name} must be non-negative integers in [0, 2**{m})")
        arr = values.astype(np.uint64)
    elif isinstance(values, np.ndarray) and values.dtype.kind not in "O":
        raise TypeError(f"{name} must be an array of unsigned integers, got dtype {values.dtype}")
    else:
        seq = list(values)
        if seq and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in seq):
            arr = from_ints(seq, m, name=name)
        elif not seq:
            arr = np.zeros((0,) if W == 1 else (0, W), dtype=np.uint64)
        else:
            arr = np.asarray(seq)
            if arr.dtype.kind not in "iu":
                raise TypeError(f"{name} must be integers (use ldp.encode for strings), got {arr.dtype}")
            return as_values(arr, m, name=name, allow_empty=allow_empty)
    if W == 1:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise ValueError(f"{name} for m = {m} <= 64 must be a 1-D array, got shape {arr.shape}")
    else:
        if arr.ndim != 2 or arr.shape[1] != W:
            raise ValueError(
                f"{name} for m = {m} bits must be a 2-D uint64 array of shape (n, {W}), got shape {arr.shape}")
    if arr.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{name} is empty: at least one value is required")
    _check_width(arr, m, name)
    return arr


def from_ints(ints: Sequence[int], m: int, *, name: str = "values") -> np.ndarray:
    """Python integers (any size) to the canonical ``m``-bit array."""
    m = _check_m(m)
    W = n_words(m)
    out = np.empty((len(ints), W), dtype=np.uint64)
    mask = (1 << 64) - 1
    for i, v in enumerate(ints):
        v = int(v)
        if v < 0 or v >> m:
            raise value_width_error(name, m)
        for w in range(W - 1, -1, -1):
            out[i, w] = v & mask
            v >>= 64
    return out[:, 0].copy() if W == 1 else out


def to_ints(values: np.ndarray) -> list[int]:
    """Canonical array to a list of Python integers."""
    if values.ndim == 1:
        return [int(v) for v in values]
    out = []
    for row in values:
        v = 0
        for w in row:
            v = (v << 64) | int(w)
        out.append(v)
    return out


def prefix(values: np.ndarray, m: int, length: int) -> np.ndarray:
    """The first ``length`` bits of each ``m``-bit value, as ``length``-bit values.

    ``prefix(v, m, L) == v >> (m - L)`` for integers; the result uses the
    canonical representation of width ``length``.
    """
    m = _check_m(m)
    length = _check_m(length, "length")
    if length > m:
        raise ValueError(f"length must be in [1, m = {m}], got {length}")
    shift = m - length
    if values.ndim == 1:
        return values >> np.uint64(shift) if shift < 64 else np.zeros_like(values)
    return _shift_right_words(values, shift, n_words(length))


def _shift_right_words(values: np.ndarray, shift: int, out_words: int) -> np.ndarray:
    """Right shift of 2-D big-endian words by ``shift`` bits, keep ``out_words``."""
    W = values.shape[1]
    ws, bs = divmod(shift, 64)
    # word j of the result (counting from the least significant, j=0) is
    # (x >> shift) bits [64j, 64j+64) = word (ws+j) >> bs | word (ws+j+1) << (64-bs)
    n = values.shape[0]
    out = np.zeros((n, out_words), dtype=np.uint64)
    for j in range(out_words):
        src = W - 1 - (ws + j)  # big-endian column of the least significant source word
        if src < 0:
            continue
        col = values[:, src] >> np.uint64(bs)
        if bs and src - 1 >= 0:
            col = col | (values[:, src - 1] << np.uint64(64 - bs))
        out[:, out_words - 1 - j] = col
    return out[:, 0].copy() if out_words == 1 else out


def extend(prefixes: np.ndarray, length: int, eta: int) -> np.ndarray:
    """All extensions ``c || s`` of each ``length``-bit prefix ``c`` by ``eta`` bits.

    This is PEM's ``D_i = C_{i-1} x {0,1}^eta`` (section 4.1); the result has
    ``len(prefixes) * 2**eta`` rows of width ``length + eta``, ordered by
    prefix, then suffix.
    """
    eta = _check_m(eta, "eta")
    if eta > 30:
        raise ValueError(f"eta must be in [1, 30] bits to enumerate 2**eta extensions, got {eta}")
    suffix = np.arange(1 << eta, dtype=np.uint64)
    new_len = length + eta
    if prefixes.ndim == 1 and new_len <= 64:
        return ((prefixes[:, None] << np.uint64(eta)) | suffix[None, :]).reshape(-1)
    return concat(np.repeat(prefixes, 1 << eta, axis=0), length,
                  np.tile(suffix, len(prefixes)), eta)


def concat(left: np.ndarray, left_bits: int, right: np.ndarray, right_bits: int) -> np.ndarray:
    """Bitwise concatenation ``left || right`` of two value arrays of equal length."""
    total = left_bits + right_bits
    W = n_words(total)
    L = _widen(left, left_bits, W)
    R = _widen(right, right_bits, W)
    if W == 1:
        return (L << np.uint64(right_bits)) | R if right_bits < 64 else R
    return _shift_left_words(L, right_bits) | R


def _widen(values: np.ndarray, bits: int, W: int) -> np.ndarray:
    arr = values if values.ndim == 2 else values[:, None]
    if W == 1:
        return arr[:, -1].copy()
    out = np.zeros((arr.shape[0], W), dtype=np.uint64)
    out[:, W - arr.shape[1]:] = arr
    return out


def _shift_left_words(values: np.ndarray, shift: int) -> np.ndarray:
    W = values.shape[1]
    ws, bs = divmod(shift, 64)
    out = np.zeros_like(values)
    for j in range(W):  # j counts result words from the least significant
        src = j - ws
        if src < 0:
            continue
        col = values[:, W - 1 - src] << np.uint64(bs)
        if bs and src - 1 >= 0:
            col = col | (values[:, W - src] >> np.uint64(64 - bs))
        out[:, W - 1 - j] = col
    return out


def to_chunks32(values: np.ndarray, m: int) -> np.ndarray:
    """The 32-bit chunks the hash reads: ``(n, ceil(m/32))`` ``uint32``, most significant first.

    Chunk ``c`` (0-based from the left) of an ``m``-bit value holds bits
    ``[32 (C-1-c), 32 (C-c))`` of its integer, ``C = ceil(m/32)``.
    """
    C = n_chunks(m)
    arr = values if values.ndim == 2 else values[:, None]
    n, W = arr.shape
    out = np.empty((n, C), dtype=np.uint32)
    for c in range(C):
        k = C - 1 - c  # chunk index from the least significant
        word = arr[:, W - 1 - k // 2]
        out[:, c] = ((word >> np.uint64(32 * (k % 2))) & _MASK32).astype(np.uint32)
    return out


def uniform(n: int, m: int, *, rng=None) -> np.ndarray:
    """``n`` independent uniform ``m``-bit values in the canonical representation.

    Values may repeat (use :func:`ldp.datasets.random_distinct_values` for
    distinct ones).  ``rng`` (keyword-only) follows SPEC 7 (:func:`ldp.validation.check_rng`).
    """
    m = _check_m(m)
    W = n_words(m)
    words = check_rng(rng).integers(0, 2**64, size=(n, W), dtype=np.uint64)
    top = m - 64 * (W - 1)
    if top < 64:
        words[:, 0] &= np.uint64((1 << top) - 1)
    return words[:, 0].copy() if W == 1 else words


def value_keys(values: np.ndarray) -> np.ndarray:
    """Sortable 1-D keys with the order of the integers the values stand for.

    For ``m <= 64`` the values themselves; for ``m > 64`` each row's words as
    big-endian bytes in a fixed-width ``S{8W}`` array.  NumPy compares such
    byte strings as if NUL-padded to a common width, which for equal widths is
    ``memcmp`` order, i.e. numeric order of the big-endian integers (a test
    checks this against :func:`numpy.lexsort`).
    """
    if values.ndim == 1:
        return values
    W = values.shape[1]
    return np.ascontiguousarray(values.astype(">u8", copy=False)).view(f"S{8 * W}").reshape(-1)


def match_sorted(table: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Index of each query in the sorted, duplicate-free ``table`` (-1 when absent)."""
    if table.shape[0] == 0 or queries.shape[0] == 0:
        return np.full(queries.shape[0], -1, dtype=np.int64)
    tk, qk = value_keys(table), value_keys(queries)
    pos = np.searchsorted(tk, qk)
    posc = np.minimum(pos, tk.shape[0] - 1)
    return np.where(tk[posc] == qk, posc, -1).astype(np.int64)


def sort_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct rows of a canonical array."""
    if values.ndim == 1:
        return np.unique(values)
    keys = value_keys(values)
    _, idx = np.unique(keys, return_index=True)
    return values[idx]


def group_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct values (sorted by value), their counts and each row's index into them."""
    if values.ndim == 1:
        distinct, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
        return distinct, counts.astype(np.int64), inverse.astype(np.int64).reshape(-1)
    n = values.shape[0]
    order = np.lexsort(values.T[::-1])  # last key is primary: word 0 (most significant)
    srt = values[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.any(srt[1:] != srt[:-1], axis=1, out=new[1:])
    starts = np.flatnonzero(new)
    distinct = srt[starts]
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return distinct, counts, inverse


def encode(strings: Iterable[str | bytes], nbytes: int, *, truncate: bool = False) -> np.ndarray:
    """Strings to ``8 * nbytes``-bit values.

    Each string is UTF-8 encoded (``bytes`` are used as they are), padded on
    the right with :data:`PAD_BYTE` (space) to ``nbytes`` bytes, and read
    big-endian: the first byte holds the most significant bits, so the prefix
    of length ``8 j`` is the first ``j`` bytes.

    Parameters
    ----------
    strings : iterable of str or bytes
    nbytes : int
        Bytes per value, 1 to ``MAX_BITS // 8``; ``m = 8 * nbytes``.
    truncate : bool, default False
        Keep the first ``nbytes`` bytes of longer strings.  Off by default:
        a longer string is an error, because truncation makes different
        strings equal (``"abcdefgh"`` and ``"abcdxyzw"`` with ``nbytes=4``).
        The paper truncates (AOL queries to 6 bytes, URLs to 20); pass
        ``True`` to do the same.

    Returns
    -------
    numpy.ndarray
        Canonical ``uint64`` array for ``m = 8 * nbytes``.

    Raises
    ------
    TypeError
        An item that is not a ``str`` or ``bytes`` (an integer, say: ``bytes(5)``
        would silently be five NUL bytes).
    ValueError
        A string longer than ``nbytes`` bytes (UTF-8) and ``truncate=False``.

    Examples
    --------
    >>> values = encode(["google", "yahoo"], nbytes=6)       # m = 48 bits
    >>> values.dtype, len(values)
    (dtype('uint64'), 2)
    >>> decode(values, nbytes=6)
    ['google', 'yahoo']
    >>> (prefix(values, 48, 8) == encode(["g", "y"], nbytes=1)).tolist()  # the first byte is the 8-bit prefix
    [True, True]
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or not 1 <= nbytes <= MAX_BITS // 8:
        raise ValueError(f"nbytes must be an integer in [1, {MAX_BITS // 8}], got {nbytes!r}")
    nbytes = int(nbytes)
    if isinstance(strings, (str, bytes)):
        raise TypeError("strings must be an iterable of str or bytes, not a single string")
    raw = []
    for i, s in enumerate(strings):
        if isinstance(s, str):
            b = s.encode("utf-8")
        elif isinstance(s, (bytes, bytearray, memoryview)):
            b = bytes(s)
        else:  # bytes(5) would be five NUL bytes, bytes(10**12) a MemoryError
            raise TypeError(f"strings[{i}] must be a str or bytes, got {type(s).__name__} {s!r:.40}; "
                            f"integer values need no encoding (pass them to privatize as they are)")
        if len(b) > nbytes and not truncate:
            raise ValueError(f"strings[{i}] = {s!r} is {len(b)} bytes long (UTF-8), more than nbytes = {nbytes}; "
                             f"pass truncate=True to keep its first {nbytes} bytes (strings that share them "
                             f"then get the same value), or a larger nbytes")
        raw.append(b[:nbytes].ljust(nbytes, PAD_BYTE))
    m = 8 * nbytes
    W = n_words(m)
    width = 8 * W
    buf = b"".join(r.rjust(width, b"\0") for r in raw)
    arr = np.frombuffer(buf, dtype=">u8").astype(np.uint64).reshape(len(raw), W)
    return arr[:, 0].copy() if W == 1 else arr


def decode(values, nbytes: int, *, strip: bool = True, as_bytes: bool = False) -> list:
    """Values back to strings: the inverse of :func:`encode`.

    Trailing :data:`PAD_BYTE` are removed when ``strip`` (a string that ended
    in spaces loses them).  Bytes that are not valid UTF-8 (a multi-byte
    character cut by truncation) are replaced with U+FFFD; pass
    ``as_bytes=True`` for the exact bytes.
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or not 1 <= nbytes <= MAX_BITS // 8:
        raise ValueError(f"nbytes must be an integer in [1, {MAX_BITS // 8}], got {nbytes!r}")
    m = 8 * int(nbytes)
    arr = as_values(values, m, allow_empty=True)
    W = n_words(m)
    big = np.ascontiguousarray(arr.reshape(len(arr), W).astype(">u8"))
    data = big.tobytes()
    width = 8 * W
    out = []
    for i in range(len(arr)):
        b = data[i * width + width - nbytes:(i + 1) * width]
        if strip:
            b = b.rstrip(PAD_BYTE)
        out.append(b if as_bytes else b.decode("utf-8", errors="replace"))
    return out
