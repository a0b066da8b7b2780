"""The :class:`Dataset` tally type: users' m-bit values with their true tally and ranking.

The type every layer above shares: the engines count a data set's answers, the
protocols accept it in place of a raw array, the metrics compare against its
true top-k, and :mod:`ldp.datasets` builds the paper's data sets as instances.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from numbers import Real
from types import MappingProxyType
from typing import Any

import numpy as np

from ..numeric import readonly
from ..validation import check_int, check_rng
from ..values import MAX_BITS, as_values, decode, group_values, n_words, prefix, value_keys

__all__ = ["Dataset", "machine_memory", "bytes_per_user", "check_users_fit"]


def machine_memory() -> int:
    """Bytes of physical memory of this machine (``sysconf``), or 0 when the system does not tell."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not a POSIX system
        return 0


def bytes_per_user(m: int) -> int:
    """Bytes a :class:`Dataset` holds per user: her value (``8 ceil(m / 64)``) and her index into the tally (8)."""
    return 8 * n_words(m) + 8


def _size(b: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} bytes"


def check_users_fit(n: int, m: int, *, name: str = "n", what: str = "users") -> int:
    """``n`` if a data set of ``n`` users of ``m``-bit values fits in this machine's memory, else a ValueError.

    Called by the generators (:mod:`ldp.datasets`) before anything is drawn, so
    a size the machine cannot hold is refused with a clear error instead of a
    bare ``MemoryError`` (or the machine swapping) halfway through.

    Parameters
    ----------
    n : int
        Users.
    m : int
        Bits per value.
    name : str
        The parameter to name in the error.
    what : str
        What ``n`` counts (``"users"``, ``"values"``).
    """
    need = n * bytes_per_user(m)
    have = machine_memory()
    if have and need > have:
        raise ValueError(f"{name} = {n:,} {what} need about {_size(need)} ({bytes_per_user(m)} bytes each: a "
                         f"value and its index into the tally), more than this machine's memory ({_size(have)}): "
                         f"{name} must be at most {have // bytes_per_user(m):,} here")
    return n


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A data set of ``n`` users, each holding one ``m``-bit value.

    The tally (``distinct``, ``distinct_counts``, ``user_index``) and the
    ranking are computed once, on first use, and cached.

    Parameters
    ----------
    values : numpy.ndarray
        Canonical m-bit array (:mod:`ldp.values`): ``(n,)`` ``uint64`` for
        ``m <= 64``, ``(n, ceil(m/64))`` ``uint64`` words otherwise.  Stored
        read-only (a writeable input is copied).
    m : int
        Bits per value, 1 to ``ldp.values.MAX_BITS``.
    name : str
        Short name used in tables and plots.
    nbytes : int or None
        For string data (``m = 8 nbytes``): bytes per value, so that
        :meth:`decode` can show the strings.
    params : mapping
        How the data set was made (generator parameters, file checksum, ...).

    Notes
    -----
    **Ranking.**  ``ranked_values`` orders the distinct values by count,
    descending; ties are broken by value, ascending (the unsigned integer whose
    m-bit expansion is the string, i.e. byte order for string data).  ``top(k)``
    is the first ``k`` of that order: the true top-k set the metrics of section
    4.2.1 compare against.  When the k-th and (k+1)-th counts tie, the top-k
    *set* depends on this rule; :meth:`top_is_tied` tells whether it does.
    """

    values: np.ndarray
    m: int
    name: str = "data"
    nbytes: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = check_int(self.m, "m", 1, MAX_BITS)
        vals = as_values(self.values, m, name="values")
        if vals.flags.writeable:
            vals = readonly(vals.copy())
        if self.nbytes is not None:
            nb = check_int(self.nbytes, "nbytes", 1, MAX_BITS // 8)
            if 8 * nb != m:
                raise ValueError(f"nbytes must equal m / 8 = {m / 8:g} for string data, got {nb}")
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {self.name!r}")
        object.__setattr__(self, "values", vals)
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    # ----- construction ---------------------------------------------------------------

    @classmethod
    def from_values(cls, values, m: int, name: str = "data", *, nbytes: int | None = None,
                    params: Mapping[str, Any] | None = None) -> Dataset:
        """A data set from one value per user (see :func:`ldp.values.as_values`).

        Parameters
        ----------
        values : array_like
            One m-bit value per user.
        m : int
            Bits per value.
        name : str
            Short name.
        nbytes, params
            See :class:`Dataset`.

        Returns
        -------
        Dataset
        """
        return cls(values, m, name, nbytes, params or {})

    @classmethod
    def from_counts(cls, distinct_values, counts, m: int, name: str = "data", *, rng=None,
                    shuffle: bool = True, nbytes: int | None = None,
                    params: Mapping[str, Any] | None = None) -> Dataset:
        """A data set from a tally: ``counts[i]`` users hold ``distinct_values[i]``.

        Parameters
        ----------
        distinct_values : array_like
            Distinct m-bit values, in any order (duplicates are an error).
        counts : array_like of int
            Non-negative user counts, one per value; values with count 0 are
            left out of the data set.
        m : int
            Bits per value.
        name : str
            Short name.
        rng : None, int, SeedSequence, BitGenerator or Generator
            Randomness for the order of users (SPEC 7).
        shuffle : bool
            Shuffle the users.  When False the users come grouped, in the
            order of ``distinct_values``.
        nbytes, params
            See :class:`Dataset`.

        Returns
        -------
        Dataset
            With ``n = sum(counts)`` users; its tally is set from the input,
            not recomputed.

        Raises
        ------
        ValueError
            Counts of the wrong length, negative, or all zero; repeated values.
        """
        m = check_int(m, "m", 1, MAX_BITS)
        dv = as_values(distinct_values, m, name="distinct_values")
        c = np.asarray(counts)
        if c.ndim != 1 or c.shape[0] != dv.shape[0]:
            raise ValueError(f"counts must be a 1-D array with one count per distinct value "
                             f"({dv.shape[0]}), got shape {c.shape}")
        if c.dtype.kind not in "iu":
            if c.dtype.kind == "f" and np.all(np.isfinite(c)) and np.all(c == np.round(c)):
                c = c.astype(np.int64)
            else:
                raise TypeError(f"counts must be non-negative integers, got dtype {c.dtype}")
        if c.size and c.min() < 0:
            raise ValueError("counts must be non-negative integers, found a negative count")
        c = c.astype(np.int64)
        if c.sum() == 0:
            raise ValueError("counts must sum to at least 1 user")
        check_users_fit(int(c.sum(dtype=object)), m, name="the users counted (sum of counts)")
        keep = np.flatnonzero(c > 0)
        dv, c = dv[keep], c[keep]
        keys = value_keys(dv)
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        if sk.shape[0] > 1 and np.any(sk[1:] == sk[:-1]):
            raise ValueError("distinct_values must be distinct: a value is repeated")
        pos = np.empty(order.shape[0], dtype=np.int64)
        pos[order] = np.arange(order.shape[0])  # input row -> index into sorted distinct
        user_index = np.repeat(pos, c)
        if shuffle:
            check_rng(rng).shuffle(user_index)
        distinct = readonly(np.ascontiguousarray(dv[order]))
        values = readonly(distinct[user_index])
        ds = cls(values, m, name, nbytes, params or {})
        ds.__dict__["_tally"] = (distinct, readonly(c[order]), readonly(user_index))
        return ds

    # ----- the tally -------------------------------------------------------------------

    @cached_property
    def _tally(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d, c, u = group_values(self.values)
        return readonly(d), readonly(c), readonly(u)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.values.shape[0])

    def __len__(self) -> int:
        return self.n

    @property
    def n_distinct(self) -> int:
        """Number of distinct values."""
        return int(self.distinct_counts.shape[0])

    @cached_property
    def distinct(self) -> np.ndarray:
        """Distinct values, sorted by value (canonical m-bit array)."""
        return self._tally[0]

    @cached_property
    def distinct_counts(self) -> np.ndarray:
        """``distinct_counts[i]``: number of users holding ``distinct[i]`` (int64)."""
        return self._tally[1]

    @cached_property
    def user_index(self) -> np.ndarray:
        """``user_index[u]``: index of user ``u``'s value in :attr:`distinct` (int64)."""
        return self._tally[2]

    @property
    def counts(self) -> np.ndarray:
        """Counts aligned with :attr:`distinct` (same as :attr:`distinct_counts`)."""
        return self.distinct_counts

    @cached_property
    def frequencies(self) -> np.ndarray:
        """Frequencies ``counts / n`` aligned with :attr:`distinct`."""
        return readonly(self.distinct_counts / self.n)

    @cached_property
    def _distinct_keys(self) -> np.ndarray:
        return value_keys(self.distinct)

    # ----- ranking ---------------------------------------------------------------------

    @cached_property
    def rank_order(self) -> np.ndarray:
        """Indices into :attr:`distinct` by count descending, ties by value ascending."""
        # distinct is sorted by value, so a stable sort on -count breaks ties by value
        return readonly(np.argsort(-self.distinct_counts, kind="stable"))

    @cached_property
    def ranked_values(self) -> np.ndarray:
        """Distinct values, most frequent first (ties: smaller value first)."""
        return readonly(self.distinct[self.rank_order])

    @cached_property
    def ranked_counts(self) -> np.ndarray:
        """Counts of :attr:`ranked_values` (non-increasing)."""
        return readonly(self.distinct_counts[self.rank_order])

    @cached_property
    def ranked_frequencies(self) -> np.ndarray:
        """Frequencies of :attr:`ranked_values` (non-increasing)."""
        return readonly(self.ranked_counts / self.n)

    def _check_k(self, k) -> int:
        return check_int(k, "k", 0, self.n_distinct)

    def top(self, k: int) -> np.ndarray:
        """Values of the ``k`` most frequent values (the true top-k), most frequent first.

        Parameters
        ----------
        k : int
            0 to :attr:`n_distinct`.

        Returns
        -------
        numpy.ndarray
            Canonical m-bit array of ``k`` values.
        """
        return self.ranked_values[: self._check_k(k)]

    def top_counts(self, k: int) -> np.ndarray:
        """Counts of :meth:`top` ``(k)``."""
        return self.ranked_counts[: self._check_k(k)]

    def top_frequencies(self, k: int) -> np.ndarray:
        """Frequencies of :meth:`top` ``(k)``."""
        return self.ranked_frequencies[: self._check_k(k)]

    def top_is_tied(self, k: int) -> bool:
        """Whether the k-th and (k+1)-th most frequent values have equal counts.

        When True, the top-k *set* depends on the tie-breaking rule (value
        ascending).
        """
        k = self._check_k(k)
        if k == 0 or k == self.n_distinct:
            return False
        return bool(self.ranked_counts[k - 1] == self.ranked_counts[k])

    def above(self, theta: float) -> np.ndarray:
        """Values with frequency at least ``theta``, most frequent first.

        The true answer of the threshold version of section 6.2.3.

        Parameters
        ----------
        theta : float
            Frequency threshold in (0, 1].
        """
        if isinstance(theta, bool) or not isinstance(theta, Real) or not 0 < float(theta) <= 1:
            raise ValueError(f"theta must be a real number in (0, 1], got {theta!r}")
        k = int(np.count_nonzero(self.ranked_counts >= float(theta) * self.n))
        return self.ranked_values[:k]

    # ----- look-ups --------------------------------------------------------------------

    def index_of(self, values) -> np.ndarray:
        """Index of each value in :attr:`distinct`, or -1 when absent.

        Parameters
        ----------
        values : array_like
            m-bit values (canonical array, or a sequence of ints).

        Returns
        -------
        numpy.ndarray
            int64 array with one entry per value.
        """
        q = as_values(values, self.m, name="values", allow_empty=True)
        if q.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        keys = self._distinct_keys
        qk = value_keys(q)
        pos = np.searchsorted(keys, qk)
        posc = np.minimum(pos, keys.shape[0] - 1)
        found = keys[posc] == qk
        return np.where(found, posc, -1).astype(np.int64)

    def count_of(self, values) -> np.ndarray | int:
        """True count of arbitrary values (0 for values nobody holds).

        Parameters
        ----------
        values : int or array_like
            One value (a Python/NumPy int, for ``m <= 64``) or an array of
            m-bit values.

        Returns
        -------
        int or numpy.ndarray
            An int for a scalar input, else an int64 array.
        """
        scalar = isinstance(values, (int, np.integer)) and not isinstance(values, bool)
        idx = self.index_of(as_values([int(values)], self.m) if scalar else values)
        counts = np.where(idx >= 0, self.distinct_counts[np.maximum(idx, 0)], 0).astype(np.int64)
        return int(counts[0]) if scalar else counts

    def frequency_of(self, values) -> np.ndarray | float:
        """True frequency (count / n) of arbitrary values; see :meth:`count_of`."""
        return self.count_of(values) / self.n

    def prefix_tally(self, length: int) -> tuple[np.ndarray, np.ndarray]:
        """True counts of the distinct ``length``-bit prefixes (sorted by prefix).

        Parameters
        ----------
        length : int
            Prefix length in bits, 1 to ``m``.

        Returns
        -------
        prefixes : numpy.ndarray
            Distinct prefixes (canonical ``length``-bit array), sorted.
        counts : numpy.ndarray
            int64 user counts.
        """
        length = check_int(length, "length", 1, self.m)
        p = prefix(self.distinct, self.m, length)
        d, _, inv = group_values(p)
        counts = np.bincount(inv, weights=self.distinct_counts, minlength=d.shape[0])
        return d, np.rint(counts).astype(np.int64)

    # ----- display ---------------------------------------------------------------------

    def decode(self, values, *, strip: bool = True) -> list[str]:
        """Show values as text: the strings for string data, hex otherwise."""
        q = as_values(values, self.m, name="values", allow_empty=True)
        if self.nbytes is not None:
            return decode(q, self.nbytes, strip=strip)
        width = -(-self.m // 4)
        if q.ndim == 1:
            return [f"{int(v):0{width}x}" for v in q]
        return ["".join(f"{int(w):016x}" for w in row)[-width:] for row in q]

    def to_frame(self, k: int | None = None):
        """The ranking as a :class:`pandas.DataFrame` (rank, value, count, frequency)."""
        import pandas as pd

        k = self.n_distinct if k is None else self._check_k(k)
        vals = self.ranked_values[:k]
        return pd.DataFrame({
            "rank": np.arange(1, k + 1),
            "value": self.decode(vals, strip=False) if self.nbytes is not None else self.decode(vals),
            "count": self.ranked_counts[:k],
            "frequency": self.ranked_frequencies[:k],
        })

    def describe(self, k: Sequence[int] = (1, 2, 4, 8, 16, 32, 64)) -> dict[str, Any]:
        """Summary for data cards: n, distinct, m and the frequencies at ranks ``k``.

        Returns
        -------
        dict
            ``name, m, n, distinct, singletons`` (values held by one user),
            ``f@r`` (frequency of the r-th most frequent value) for each rank
            ``r`` in ``k`` that exists, and ``top5`` (decoded top values).
        """
        out: dict[str, Any] = {"name": self.name, "m": self.m, "n": self.n, "distinct": self.n_distinct,
                               "singletons": int(np.count_nonzero(self.distinct_counts == 1))}
        for r in k:
            if 1 <= r <= self.n_distinct:
                out[f"f@{r}"] = float(self.ranked_frequencies[r - 1])
        out["top5"] = self.decode(self.top(min(5, self.n_distinct)), strip=False)
        return out

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, n={self.n}, m={self.m})"
