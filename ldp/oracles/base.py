"""Common machinery of the frequency oracles: report containers and the base class.

A frequency oracle (paper section 2.2) is a pair of algorithms: ``privatize``
(the paper's Perturb, run by each user) and ``support`` / ``estimate`` (the
paper's Aggregate, run by the server).  :class:`Reports` holds exactly what
the users send, plus the oracle parameters they were produced with, so that
an aggregator can refuse reports from a differently configured oracle and
reports can be written to disk and read back.
"""
from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar, cast

import numpy as np

from .. import reportfile
from ..randomness import Coins, coin_sources
from ..reportfile import ReportsFileError
from ..validation import check_int
from .fields import SEED_FIELD, Field, bits_field, symbol_field, uint_dtype

__all__ = ["Reports", "Field", "SEED_FIELD", "bits_field", "symbol_field", "uint_dtype", "FrequencyOracle",
           "load_reports", "concat_reports", "reports_class",
           "oracle_from_params", "ReportsFileError"]
_REGISTRY: dict[str, type[Reports]] = {}
_ORACLES: dict[str, type[FrequencyOracle]] = {}


def _format_params(params: Mapping[str, Any]) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in params.items() if k != "kind")
    return f"{params.get('kind', '?')}({inner})"


class Reports:
    """What the users of one oracle sent, as compact numpy arrays.

    Subclasses name their per-user arrays in :attr:`fields` (those sent in
    the clear whatever the value, the hash seeds, also in
    :attr:`public_fields`) and describe them in :meth:`layout`; every array
    has one row per user.  A ``Reports`` object records the oracle
    parameters (:attr:`params`) and supports ``len``, selection of a subset
    of users with ``reports[index]`` (slice, integer array or boolean mask),
    :meth:`concat`, :meth:`save` and :meth:`load`.
    """

    kind: ClassVar[str] = ""
    fields: ClassVar[tuple[str, ...]] = ()
    #: the fields drawn independently of the value and of the private coins (public randomness: hash seeds)
    public_fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            _REGISTRY[cls.kind] = cls

    def __init__(self, params: Mapping[str, Any], **arrays: np.ndarray):
        params = dict(params)
        if params.get("kind") != self.kind:
            raise ValueError(f"params['kind'] must be {self.kind!r} for {type(self).__name__}, "
                             f"got {params.get('kind')!r}")
        missing = set(self.fields) - set(arrays)
        extra = set(arrays) - set(self.fields)
        if missing or extra:
            raise ValueError(f"{type(self).__name__} needs arrays {self.fields}, got {tuple(arrays)}")
        self._params = params
        self._arrays = {}
        n = None
        for name in self.fields:
            arr = np.asarray(arrays[name])
            if arr.ndim == 0:
                raise ValueError(f"report array {name!r} must have one row per user, got a scalar")
            if n is None:
                n = arr.shape[0]
            elif arr.shape[0] != n:
                raise ValueError(f"report arrays must have the same number of users: "
                                 f"{self.fields[0]!r} has {n}, {name!r} has {arr.shape[0]}")
            self._arrays[name] = arr
        self._n = int(n or 0)
        self._validate()

    @classmethod
    def layout(cls, params: Mapping[str, Any]) -> tuple[Field, ...]:
        """Each field's layout for reports of an oracle with ``params`` (in :attr:`fields` order)."""
        raise NotImplementedError(f"{cls.__name__} does not describe its layout")

    # dtypes and ranges, from the layout (a subclass without one overrides this)
    def _validate(self) -> None:
        for f in self.layout(self._params):
            problem = f.problem(self.kind, self._arrays[f.name])
            if problem:
                raise ValueError(problem)

    def _check_symbols(self, name: str, size: int, what: str) -> None:
        """Raise unless array ``name`` is 1-D, of :func:`uint_dtype` ``(size - 1)``, with values below ``size``.

        ``what`` names ``size`` in the message (e.g. ``"d_prime = 11"``).
        """
        problem = symbol_field(name, size, what).problem(self.kind, self._arrays[name])
        if problem:
            raise ValueError(problem)

    def _check_packed_bits(self, name: str, width: int, what: str) -> None:
        """Raise unless array ``name`` holds ``width`` bits per user, packed: ``uint8`` ``(n, ceil(width / 8))``.

        The padding bits after the last one must be 0; ``what`` names ``width`` in the message.
        """
        problem = bits_field(name, width, what).problem(self.kind, self._arrays[name])
        if problem:
            raise ValueError(problem)

    @classmethod
    def empty(cls, params: Mapping[str, Any]) -> Reports:
        """Reports of no user (the arrays of :meth:`layout` with 0 rows)."""
        return cls(params, **{f.name: np.empty((0, *f.row_shape), dtype=f.dtype) for f in cls.layout(params)})

    # ------------------------------------------------------------ access
    @property
    def params(self) -> dict[str, Any]:
        """The producing oracle's parameters (``kind``, ``epsilon``, ...)."""
        return dict(self._params)

    @property
    def n(self) -> int:
        """Number of users."""
        return self._n

    def __len__(self) -> int:
        return self._n

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """The per-user arrays by name (not copies)."""
        return dict(self._arrays)

    @property
    def nbytes(self) -> int:
        """Bytes the users sent (sum of the arrays' sizes)."""
        return int(sum(a.nbytes for a in self._arrays.values()))

    def __getitem__(self, index) -> Reports:
        """The reports of a subset of users (slice, integer array or boolean mask)."""
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            i = int(index)
            if not -self._n <= i < self._n:
                raise IndexError(f"user index {i} out of range for {self._n} reports")
            i %= self._n
            index = slice(i, i + 1)
        elif not isinstance(index, slice):
            index = np.asarray(index)
            if index.dtype == bool:
                if index.shape != (self._n,):
                    raise IndexError(f"boolean mask must have shape ({self._n},), got {index.shape}")
            elif index.dtype.kind not in "iu" or index.ndim != 1:
                raise IndexError("reports can be indexed by a slice, an integer, a 1-D integer array "
                                 "or a boolean mask")
        return type(self)(self._params, **{k: v[index] for k, v in self._arrays.items()})

    def __iter__(self):
        raise TypeError(f"{type(self).__name__} is not iterable; index it with a slice or mask")

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._params == other._params and all(
            np.array_equal(self._arrays[k], other._arrays[k]) for k in self.fields)

    __hash__ = None  # type: ignore[assignment]  # mutable arrays: not hashable

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self._n}, oracle={_format_params(self._params)})"

    # ------------------------------------------------------------ combine
    @classmethod
    def concat(cls, parts: Sequence[Reports]) -> Reports:
        """Concatenate reports of the same oracle (in the given order)."""
        parts = list(parts)
        if not parts:
            raise ValueError("parts must contain at least one Reports object")
        first = parts[0]
        for p in parts:
            if not isinstance(p, Reports) or type(p) is not type(first):
                raise TypeError(f"parts must all be {type(first).__name__}, got {type(p).__name__}")
            if p._params != first._params:
                raise ValueError(f"cannot concatenate reports of different oracles: "
                                 f"{_format_params(first._params)} and {_format_params(p._params)}")
        arrays = {k: np.concatenate([p._arrays[k] for p in parts]) for k in first.fields}
        return type(first)(first._params, **arrays)

    # ------------------------------------------------------------ disk
    def save(self, path: str | os.PathLike) -> None:
        """Write the reports to ``path`` as ``.npz``, atomically.

        The file is written to a temporary file in the same directory and
        moved into place with :func:`os.replace`, so a reader never sees a
        partial file.  ``path`` is used as given (no suffix is added).  The
        metadata records the oracle parameters and a SHA-256 checksum of the
        arrays, which :meth:`load` verifies.
        """
        reportfile.write(path, reportfile.ORACLE_REPORTS, {"params": self._params}, self._arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Reports:
        """Read reports written by :meth:`save`.

        Called on :class:`Reports` itself, returns the subclass recorded in
        the file; called on a subclass, refuses files of another kind.

        Raises
        ------
        FileNotFoundError
            No such file.
        ldp.oracles.ReportsFileError
            (a ``ValueError``) naming the file and the problem: empty, not an
            ``.npz`` archive, truncated or damaged, not a reports file,
            protocol reports rather than oracle reports, reports of another
            oracle, impossible oracle parameters (e.g. ``epsilon`` NaN,
            ``d_prime = 1``), members the file should not have or whose
            declared sizes do not fit the reports (checked from the archive's
            directory before anything is decompressed), or arrays that do not
            match the stored checksum.  The checksum detects damage, not
            tampering: it is an unkeyed SHA-256 that anyone can recompute, so
            it authenticates nothing.
        """
        def expect(meta: dict) -> reportfile.Expected:
            params = meta.get("params")
            if not isinstance(params, dict):
                raise ReportsFileError(path, f"has no oracle parameters in its metadata (got {params!r:.80})")
            kind = params.get("kind")
            target = _REGISTRY.get(kind) if isinstance(kind, str) else None
            if target is None:
                raise ReportsFileError(path, f"holds reports of an unknown oracle kind {kind!r}")
            if cls is not Reports and target is not cls:
                raise ReportsFileError(path, f"holds {kind} reports, not {cls.kind} reports")
            try:
                oracle_from_params(params)
            except (ValueError, TypeError, KeyError) as err:
                raise ReportsFileError(path, f"holds {kind} reports with impossible parameters ({err})") from None
            def same_rows(rows: dict[str, int]) -> None:
                if len(set(rows.values())) > 1:
                    raise ReportsFileError(path, f"has report arrays of different numbers of users: {rows}")

            return {f.name: (np.dtype(f.dtype), f.row_shape) for f in target.layout(params)}, same_rows

        meta, arrays = reportfile.read(path, reportfile.ORACLE_REPORTS, expect=expect)
        try:
            params = meta["params"]
            return _REGISTRY[params["kind"]](params, **arrays)
        except ReportsFileError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise reportfile.inconsistent(path, err) from err


def report_array(name: str, doc: str) -> property:
    """A read-only property returning the per-user array ``name`` of a :class:`Reports` subclass."""
    return property(lambda self: self._arrays[name], doc=doc)


def reports_class(kind: str) -> type[Reports]:
    """The :class:`Reports` subclass of an oracle kind (``"OLH"``, ``"GRR"``, ...).

    For readers of stored reports (e.g. a protocol's reports file) that know
    the kind from the file's metadata.

    Raises
    ------
    KeyError
        No oracle of that kind is defined.
    """
    try:
        return _REGISTRY[kind]
    except (KeyError, TypeError):
        raise KeyError(f"no frequency oracle of kind {kind!r}; known kinds: {sorted(_REGISTRY)}") from None


def oracle_from_params(params: Mapping[str, Any]) -> FrequencyOracle:
    """The oracle whose :attr:`FrequencyOracle.params` are ``params`` (checked by its constructor).

    Raises
    ------
    KeyError
        No oracle of that ``kind``.
    ValueError, TypeError
        Parameters the oracle refuses (the constructor's message), or that
        it would record differently (e.g. a ``d_prime`` that is not an int).
    """
    if not isinstance(params, Mapping):
        raise TypeError(f"oracle parameters must be a mapping, got {type(params).__name__}")
    kind = params.get("kind")
    try:
        cls: Any = _ORACLES[cast(str, kind)]
    except (KeyError, TypeError):
        raise KeyError(f"no frequency oracle of kind {kind!r}; known kinds: {sorted(_ORACLES)}") from None
    args = {k: v for k, v in params.items() if k != "kind"}
    oracle = cls(args.pop("epsilon"), *[args.pop(k) for k in cls.positional if k in args], **args)
    if oracle.params != dict(params):
        mine = oracle.params
        diff = sorted(k for k in set(mine) | set(params) if mine.get(k) != params.get(k))
        raise ValueError(f"{kind} parameters {', '.join(diff)} are not as {kind} records them "
                         f"({_format_params(dict(params))} vs {_format_params(mine)})")
    return oracle


def load_reports(path: str | os.PathLike) -> Reports:
    """Read reports of any oracle from a file written by :meth:`Reports.save`."""
    return Reports.load(path)


def concat_reports(parts: Iterable[Reports]) -> Reports:
    """Concatenate reports of one oracle; see :meth:`Reports.concat`."""
    return Reports.concat(list(parts))


# ------------------------------------------------------------------ GRR core
def grr_draw(n: int, k: int, p: float, coins: Coins) -> tuple[np.ndarray, np.ndarray]:
    """The coins of generalized randomized response on ``[k]`` for ``n`` entries (paper section 2.2.1).

    Returns ``keep`` (``True`` with probability ``p``) and ``r``, uniform in
    ``[0, k - 1)``, drawn in that order from ``coins``; they do not depend on
    the values, so they can be drawn for a block of users and handed to each
    user later (:meth:`ldp.protocols.HeavyHitterProtocol.privatize` does this).
    """
    return coins.bernoulli(p, n), coins.below(k - 1, n)


def grr_apply(true_index: np.ndarray, keep: np.ndarray, r: np.ndarray) -> np.ndarray:
    """GRR given its coins from :func:`grr_draw`: keep the entry, or replace it uniformly.

    The replacement ``r + (r >= t)`` is uniform over the ``k - 1`` values
    other than ``t``, so every other value has probability
    ``(1 - p) / (k - 1)``; the output law is :func:`grr_pmf`.
    """
    t = np.asarray(true_index, dtype=np.uint64)
    other = r + (r >= t)  # skips the true value: uniform over [k] \ {t}
    return np.where(keep, t, other)


def grr_pmf(true_index: int, k: int, p: float) -> np.ndarray:
    """Output distribution of :func:`grr_perturb` for one input, over ``[k]``."""
    pmf = np.full(k, (1.0 - p) / (k - 1))
    pmf[true_index] = p
    return pmf


# ------------------------------------------------------------------ oracle
R = TypeVar("R", bound=Reports)


class FrequencyOracle(ABC, Generic[R]):
    """Base class: ``privatize`` (user side), ``support``/``estimate`` (server side).

    Subclasses set :attr:`p` (probability that a report supports the user's
    own value) and :attr:`q` (probability that it supports a given other
    value), so that ``E[I_v] = f_v p + (n - f_v) q`` and the paper's
    estimator ``(I_v - n q) / (p - q)`` (eq. (2)) is unbiased.
    """

    kind: ClassVar[str] = ""
    reports_class: ClassVar[type[Reports]] = Reports
    #: parameters (besides ``epsilon``) the constructor takes by position, in order (:func:`oracle_from_params`)
    positional: ClassVar[tuple[str, ...]] = ()

    epsilon: float
    p: float
    q: float

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__ and cls.kind:  # BLH (kind OLH, d' = 2) does not replace OLH
            _ORACLES[cls.kind] = cls

    # -------------------------------------------------------------- identity
    @property
    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Parameters recorded in (and required of) reports."""

    def __repr__(self) -> str:
        return _format_params({**self.params, "kind": type(self).__name__})

    def __eq__(self, other) -> bool:
        if not isinstance(other, FrequencyOracle):
            return NotImplemented
        return self.params == other.params

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.params.items())))

    # -------------------------------------------------------------- protocol
    def privatize(self, values, *, rng=None) -> R:
        """Each user's randomized report (the paper's Perturb).

        Parameters
        ----------
        values : array_like
            One value per user (the oracle's representation).
        rng : None, int, SeedSequence, BitGenerator, Generator or ldp.randomness.Coins, keyword-only
            The users' randomness.  A seed (anything
            :func:`ldp.validation.check_rng` accepts) makes this a
            **simulation**: whoever holds the seed recomputes every user's
            coins, so the seed is every user's secret.
            :class:`ldp.randomness.SystemCoins` draws from the operating
            system instead (what a device does, :mod:`ldp.client`).  The
            public parts of the reports (hash seeds) come from an independent
            child of ``rng`` (:meth:`draw_noise`).

        Returns
        -------
        Reports
            The oracle's reports class;
            ``privatize(values, rng=r) == apply_noise(values, draw_noise(len(values), rng=r))``.
        """
        vals = self.check_values(values)
        return self.apply_noise(vals, self.draw_noise(vals.shape[0], rng=rng))

    @abstractmethod
    def check_values(self, values) -> np.ndarray:
        """The users' values, checked and in the oracle's canonical form (as :meth:`privatize` takes them).

        Raises ``TypeError`` / ``ValueError`` naming ``values`` and the allowed range.
        """

    @abstractmethod
    def _draw(self, n: int, private: Coins, public: Coins | None) -> tuple[np.ndarray, ...]:
        """The randomness of ``n`` users from checked coin sources (public parts from ``public``)."""

    def draw_noise(self, n: int, *, rng=None, public_rng=None) -> tuple[np.ndarray, ...]:
        """The randomness of :meth:`privatize` for ``n`` users, drawn before any value is seen.

        Parameters
        ----------
        n : int
            Number of users.
        rng : None, int, SeedSequence, BitGenerator, Generator or ldp.randomness.Coins
            The private coins (a seeded simulation, or
            :class:`ldp.randomness.SystemCoins` on a device).
        public_rng : same kinds, optional
            The public parts of the reports (the fields in the reports
            class's ``public_fields``, e.g. hash seeds).  Default: an
            independent child of ``rng`` (:func:`ldp.randomness.coin_sources`),
            never the private stream itself.

        Returns
        -------
        tuple of numpy.ndarray
            Per-user arrays, in the order the oracle's ``_draw`` states; none
            depends on the values.
        """
        n = check_int(n, "n", lo=0)
        private, public = coin_sources(rng, public_rng, public=bool(self.reports_class.public_fields))
        return self._draw(n, private, public)

    @abstractmethod
    def apply_noise(self, values: np.ndarray, noise) -> R:
        """The reports of canonical ``values`` with the randomness of :meth:`draw_noise`."""

    @abstractmethod
    def _support(self, reports: R, candidates: np.ndarray) -> np.ndarray:
        """Support counts for validated reports and candidates."""

    @abstractmethod
    def _check_candidates(self, candidates) -> np.ndarray:
        """Validate and canonicalise candidate values."""

    def check_reports(self, reports) -> R:
        """Raise unless ``reports`` are non-empty reports of an oracle with these parameters."""
        if not isinstance(reports, self.reports_class):
            raise TypeError(f"reports must be {self.reports_class.__name__} produced by "
                            f"{type(self).__name__}.privatize, got {type(reports).__name__}")
        if reports.params != self.params:
            mine, theirs = self.params, reports.params
            diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            raise ValueError(
                f"reports were produced by {_format_params(theirs)} but this oracle is "
                f"{_format_params(mine)}: parameter(s) {', '.join(diff)} differ")
        if len(reports) == 0:
            raise ValueError("reports is empty: at least one report is required")
        return cast(R, reports)

    def support(self, reports: R, candidates) -> np.ndarray:
        """Support counts ``I_v``: how many reports support each candidate.

        Parameters
        ----------
        reports : Reports
            Output of :meth:`privatize` of an oracle with the same parameters.
        candidates : array_like
            Values to count (same representation as ``privatize`` takes).

        Returns
        -------
        numpy.ndarray
            ``int64`` array, one count per candidate.
        """
        self.check_reports(reports)
        cands = self._check_candidates(candidates)
        return self._support(reports, cands)

    def partial_support(self, reports: R, candidates) -> Any:
        """What one part of the reports contributes to :meth:`support`, summable with ``+`` over disjoint parts.

        For reports in parts (chunks, files, workers): ``finish_support(sum of partial_support(part, c), c)``
        is ``support(all reports, c)`` exactly.  Here the part's supports; FLH's is its tally.
        """
        return self.support(reports, candidates)

    def finish_support(self, partial: Any, candidates) -> np.ndarray:
        """The supports from the sum of :meth:`partial_support` over all parts (here the sum itself)."""
        out = np.asarray(partial, dtype=np.int64)
        if out.shape != (np.shape(self._check_candidates(candidates))[0],):
            raise ValueError(f"partial supports must have one entry per candidate, got shape {out.shape}")
        return out

    def estimate(self, reports: R, candidates) -> np.ndarray:
        """Unbiased frequency (count) estimates ``(I_v - n q) / (p - q)``.

        Parameters
        ----------
        reports, candidates
            As in :meth:`support`.

        Returns
        -------
        numpy.ndarray
            ``float64`` estimated number of users holding each candidate.

        References
        ----------
        Paper eq. (2); Wang et al., USENIX Security 2017.
        """
        support = self.support(reports, candidates)
        n = len(reports)
        return (support - n * self.q) / (self.p - self.q)  # eq. (2)

    def support_variance(self, n: int, count: int = 0) -> float:
        """Variance of ``I_v`` for a value held by ``count`` of ``n`` users."""
        n = check_int(n, "n", lo=1)
        count = check_int(count, "count", lo=0, hi=n)
        p, q = self.p, self.q
        return count * p * (1 - p) + (n - count) * q * (1 - q)

    def variance(self, n: int, *, count: int = 0) -> float:
        """Variance of one :meth:`estimate` over ``n`` users.

        Parameters
        ----------
        n : int
            Number of reports.
        count : int, default 0
            True number of users holding the value (0 gives the paper's
            formulas, eqs. (1) and (3)).

        Returns
        -------
        float
            ``(count p (1-p) + (n - count) q (1-q)) / (p - q)**2``.
        """
        n = check_int(n, "n", lo=1)
        count = check_int(count, "count", lo=0, hi=n)
        base = self._variance0(n)
        p, q = self.p, self.q
        return base + count * (p * (1 - p) - q * (1 - q)) / (p - q) ** 2

    def _variance0(self, n: int) -> float:
        p, q = self.p, self.q
        return n * q * (1 - q) / (p - q) ** 2


def exp_epsilon(epsilon: float) -> float:
    """``e**epsilon``, refusing an ``epsilon`` whose exponential is not a finite number."""
    e = math.exp(epsilon)
    if not math.isfinite(e):
        raise ValueError(f"epsilon must be a finite real number > 0 with finite e**epsilon, got {epsilon!r}")
    return e


def check_indices(values, domain_size: int, name: str = "values") -> np.ndarray:
    """Integers in ``[0, domain_size)`` as a non-empty 1-D ``uint64`` array."""
    arr = np.asarray(values)
    if arr.dtype == object or arr.dtype.kind == "b":
        raise TypeError(f"{name} must be integers in [0, {domain_size}), got dtype {arr.dtype}")
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":  # np.asarray([]) is float
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{name} must be integers in [0, {domain_size}), got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of integers in [0, {domain_size}), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: at least one value is required")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= domain_size:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name} must be integers in [0, domain_size = {domain_size}), found {bad}")
    return arr.astype(np.uint64, copy=False)
