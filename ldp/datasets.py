"""The data sets of the paper: synthetic generators, the AOL queries, a URL stand-in.

Section 5 (validation of the analysis) uses Zipf data, ``zipf`` and
``zipf(-20)``; section 6.1 (evaluation) uses three data sets:

* **Frequent URL** -- 20-byte domain names, one 5-minute slice of a month of
  Quantcast traffic for the 80,000 most visited sites.  The Quantcast counts
  were never published, so :func:`url` is a *calibrated stand-in* (see there).
* **Query trends (AOL)** -- the first query of each AOL user, cut or padded to
  6 bytes; :func:`aol` reads the authors' public tally (``m = 48``).
* **Synthetic** -- ``n = 10**6`` values of ``m = 64`` bits with an exponential
  (geometric) rank-frequency law of scale 0.05; :func:`exponential`.

Every data set is a :class:`Dataset`: the users' values in the canonical
m-bit representation of :mod:`ldp.values` plus the true tally the metrics
and the count-level engines need (distinct values, their counts, each user's
index into the distinct values, the true ranking).

Command line (used by ``make data`` and ``make book``)::

    python -m ldp.datasets fetch aol [--dest DIR] [--url URL_OR_PATH] [--force]
    python -m ldp.datasets check aol
    python -m ldp.datasets describe {aol,url,zipf,exponential} [--seed N]

References
----------
.. [1] T. Wang, N. Li, S. Jha.  Locally Differentially Private Heavy Hitter
   Identification.  Sections 5 and 6.1.
.. [2] U. Erlingsson, V. Pihur, A. Korolova.  RAPPOR: Randomized Aggregatable
   Privacy-Preserving Ordinal Response.  CCS 2014 (the exponential test
   distribution, ``tests/gen_counts.R`` in google/rappor: ``dexp(1:100, rate = 5/100)``).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import math
import os
import sys
import shutil
import tempfile
import urllib.parse
import urllib.request
from contextlib import contextmanager
from numbers import Real
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Mapping, Sequence

import numpy as np

from .core.dataset import Dataset
from .numeric import largest_remainder, readonly
from .validation import check_int, check_rng
from .values import MAX_BITS, encode, n_words, value_keys

__all__ = [
    "Dataset",
    "zipf",
    "zipf_frequencies",
    "exponential",
    "exponential_frequencies",
    "random_distinct_values",
    "url",
    "URL_CALIBRATION",
    "aol",
    "fetch_aol",
    "find_aol",
    "check_aol",
    "data_folder",
    "AOL_FILENAME",
    "AOL_URL",
    "AOL_SHA256",
    "AOL_USERS",
    "AOL_DISTINCT",
    "DataFileNotFoundError",
    "ChecksumError",
    "DataFormatError",
    "DownloadError",
    "main",
]

Sampling = Literal["multinomial", "rounded"]


# --------------------------------------------------------------------------------------
# random values and synthetic generators
# --------------------------------------------------------------------------------------

def random_distinct_values(n_values: int, m: int, rng=None) -> np.ndarray:
    """``n_values`` distinct m-bit values drawn uniformly without replacement, in random order.

    Memory is proportional to ``n_values``, never to ``2**m``.

    Parameters
    ----------
    n_values : int
        How many values, 1 to ``2**m``.
    m : int
        Bits per value.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness (SPEC 7).

    Returns
    -------
    numpy.ndarray
        Canonical m-bit array of ``n_values`` distinct values.
    """
    m = check_int(m, "m", 1, MAX_BITS)
    n_values = check_int(n_values, "n_values", 1, 2 ** m)
    rng = check_rng(rng)
    W = n_words(m)
    if m <= 62 and 2 ** m <= 4 * n_values:  # small domain: a partial permutation, O(2**m) <= O(4 n)
        return rng.choice(2 ** m, size=n_values, replace=False, shuffle=True).astype(np.uint64)
    top_bits = m - 64 * (W - 1)  # bits used in the most significant word

    def draw(size: int) -> np.ndarray:
        x = rng.integers(0, 2 ** 64, size=(size, W), dtype=np.uint64, endpoint=False)
        if top_bits < 64:
            x[:, 0] &= np.uint64((1 << top_bits) - 1)
        return x[:, 0].copy() if W == 1 else x

    out = draw(n_values)
    while True:  # rejection of repeats, keeping first occurrences in draw order
        _, first = np.unique(value_keys(out), return_index=True)
        if first.shape[0] >= n_values:
            first.sort()
            return np.ascontiguousarray(out[first[:n_values]])
        first.sort()
        out = np.concatenate([out[first], draw(2 * (n_values - first.shape[0]) + 16)])


def zipf_frequencies(n_distinct: int, s: float = 1.5, drop_top: int = 0) -> np.ndarray:
    """Zipf rank frequencies of section 5, optionally with the head dropped.

    ``f_j`` is proportional to ``1 / (j + drop_top)**s`` for ``j = 1 .. n_distinct``
    (section 5: "the j-th most frequent value has frequency f_j proportional to
    1/j^1.5"; ``zipf(-20)``: "the most frequent 20 values are dropped", i.e.
    ranks 21, 22, ... kept and renormalised).

    Parameters
    ----------
    n_distinct : int
        Number of values kept (the support, after the drop).
    s : float
        Exponent, > 0.
    drop_top : int
        Number of leading ranks removed, >= 0.

    Returns
    -------
    numpy.ndarray
        ``n_distinct`` frequencies summing to 1, non-increasing.
    """
    n_distinct = check_int(n_distinct, "n_distinct", 1)
    s = _check_positive(s, "s")
    drop_top = check_int(drop_top, "drop_top", 0)
    j = np.arange(drop_top + 1, drop_top + n_distinct + 1, dtype=float)
    f = j ** -s
    return f / f.sum()


def exponential_frequencies(n_distinct: int, scale: float = 0.05) -> np.ndarray:
    """Exponential (geometric) rank frequencies of section 6.1's synthetic set.

    ``f_j`` is proportional to ``exp(-scale * j)`` for ``j = 1 .. n_distinct``:
    a geometric law with success probability ``p = 1 - exp(-scale)`` (0.0488
    for scale 0.05), truncated to ``n_distinct`` ranks and renormalised.  This
    is RAPPOR's test distribution ``dexp(j, rate = 5/100)`` (rate 0.05 over
    100 values) extended to more ranks; with scale 0.05 it gives
    ``f_16 = 0.0230``, the "0.023 ... around frequency of the 16-th most
    frequent value" of section 6.2.3.

    Parameters
    ----------
    n_distinct : int
        Number of ranks.
    scale : float
        Decay per rank, > 0 ("the exponential scale is 0.05").

    Returns
    -------
    numpy.ndarray
        ``n_distinct`` frequencies summing to 1, non-increasing.
    """
    n_distinct = check_int(n_distinct, "n_distinct", 1)
    scale = _check_positive(scale, "scale")
    f = np.exp(-scale * np.arange(n_distinct, dtype=float))  # exp(-scale j) / exp(-scale)
    return f / f.sum()


def _check_positive(x, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, Real) or not math.isfinite(float(x)) or float(x) <= 0:
        raise ValueError(f"{name} must be a finite real number > 0, got {x!r}")
    return float(x)


def _check_sampling(sampling) -> str:
    if sampling not in ("multinomial", "rounded"):
        raise ValueError(f"sampling must be 'multinomial' or 'rounded', got {sampling!r}")
    return sampling


def _counts_from_frequencies(n: int, f: np.ndarray, sampling: str, rng: np.random.Generator) -> np.ndarray:
    if sampling == "multinomial":  # n i.i.d. users
        return rng.multinomial(n, f).astype(np.int64)
    return largest_remainder(n, f)  # sums to n exactly


def _synthetic(n: int, f: np.ndarray, m: int, name: str, sampling: str, rng, params: dict) -> Dataset:
    rng = check_rng(rng)
    value_rng, count_rng, order_rng = rng.spawn(3)
    values = random_distinct_values(f.shape[0], m, value_rng)  # rank j -> values[j - 1]
    counts = _counts_from_frequencies(n, f, sampling, count_rng)
    params = dict(params, sampling=sampling, support=f.shape[0], rank_frequencies=readonly(f))
    return Dataset.from_counts(values, counts, m, name, rng=order_rng, params=params)


def zipf(n: int, s: float = 1.5, m: int = 64, n_distinct: int | None = None, drop_top: int = 0, *,
         sampling: Sampling = "multinomial", rng=None) -> Dataset:
    """Zipf data of section 5: ``f_j`` proportional to ``1/j**s``; ``zipf(-20)`` is ``drop_top=20``.

    The values behind the ranks are distinct uniformly random m-bit strings
    ("the values of the heavy hitters are random").

    Parameters
    ----------
    n : int
        Number of users, >= 1.
    s : float
        Zipf exponent (section 5: 1.5).
    m : int
        Bits per value.
    n_distinct : int or None
        Size of the support (ranks kept after the drop).  Default
        ``min(2**m, 2**16)``: for s = 1.5 the mass beyond rank 2**16 of an
        untruncated Zipf law is 0.3 %, and with n = 10**6 users the realised
        number of distinct values is far below the support.
    drop_top : int
        Leading ranks removed before renormalising (20 for ``zipf(-20)``).
    sampling : {'multinomial', 'rounded'}
        'multinomial': each user draws a rank i.i.d. from ``f`` (the data are
        a sample, so realised frequencies scatter around ``f``).  'rounded':
        counts are ``n f_j`` rounded by largest remainder (sum exactly ``n``).
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness (SPEC 7); split with ``Generator.spawn`` into the value
        draw, the counts and the user order, so the values behind the ranks
        do not depend on ``n`` or ``sampling``.

    Returns
    -------
    Dataset
        ``params`` holds the generator's ``rank_frequencies`` (for analytic curves).

    References
    ----------
    Section 5 (validation of the analysis) of the paper.
    """
    n = check_int(n, "n", 1)
    m = check_int(m, "m", 1, MAX_BITS)
    s = _check_positive(s, "s")
    drop_top = check_int(drop_top, "drop_top", 0)
    if n_distinct is None:
        n_distinct = min(2 ** m, 2 ** 16)
    n_distinct = check_int(n_distinct, "n_distinct", 1, 2 ** m)
    sampling = _check_sampling(sampling)
    f = zipf_frequencies(n_distinct, s, drop_top)  # section 5: f_j ~ 1/j^1.5
    name = f"zipf(-{drop_top})" if drop_top else "zipf"
    return _synthetic(n, f, m, name, sampling, rng,
                      {"generator": "zipf", "s": s, "drop_top": drop_top})


def _exp_support(n: int, scale: float) -> int:
    # smallest J with exp(-scale J) <= 1e-3 / n: the chance that any of n users of the
    # untruncated geometric law falls beyond rank J is at most 0.1 %
    return max(1, math.ceil(math.log(1e3 * n) / scale))


def exponential(n: int = 10 ** 6, scale: float = 0.05, m: int = 64, n_distinct: int | None = None, *,
                sampling: Sampling = "multinomial", rng=None) -> Dataset:
    """The synthetic data set of section 6.1: exponential (geometric) frequencies, scale 0.05.

    Reading of "exponential distribution (also known as geometric
    distribution) ... The exponential scale is 0.05, which is close to the
    experimental setting in RAPPOR": the j-th most frequent value has
    frequency proportional to ``exp(-0.05 j)``, i.e. a geometric law on the
    ranks with ``p = 1 - exp(-0.05) = 0.0488`` -- RAPPOR's ``exp`` test
    distribution (``dexp(1:100, rate = 5/100)``) without its cut at 100
    values.  Calibration check: ``f_16 = (1 - e^-0.05) e^-0.75 = 0.0230``,
    matching section 6.2.3's "0.023 is around frequency of the 16-th most
    frequent value in the dataset".  (NumPy's ``exponential(scale=0.05)``,
    i.e. rate 20, would put all mass on rank 1.)  Values are distinct
    uniformly random m-bit strings.

    Parameters
    ----------
    n : int
        Number of users (paper: 10**6).
    scale : float
        Decay rate per rank (paper: 0.05).
    m : int
        Bits per value (paper: 64).
    n_distinct : int or None
        Number of ranks.  Default: the smallest ``J`` with
        ``exp(-scale J) <= 10**-3 / n`` (415 for the paper's setting), so the
        cut is invisible with probability >= 99.9 %; ``n_distinct=100`` gives
        RAPPOR's exact truncated law.
    sampling : {'multinomial', 'rounded'}
        See :func:`zipf`.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness (SPEC 7).

    Returns
    -------
    Dataset

    References
    ----------
    Sections 6.1 (datasets) and 6.2.3 (theta = 0.023) of the paper; RAPPOR [2]_.
    """
    n = check_int(n, "n", 1)
    m = check_int(m, "m", 1, MAX_BITS)
    scale = _check_positive(scale, "scale")
    if n_distinct is None:
        n_distinct = min(2 ** m, _exp_support(n, scale))
    n_distinct = check_int(n_distinct, "n_distinct", 1, 2 ** m)
    sampling = _check_sampling(sampling)
    f = exponential_frequencies(n_distinct, scale)
    return _synthetic(n, f, m, "exponential", sampling, rng,
                      {"generator": "exponential", "scale": scale})


# --------------------------------------------------------------------------------------
# URL stand-in
# --------------------------------------------------------------------------------------

#: (Zipf exponent, monthly visits) calibrated per slicing rule so that one slice of
#: 80,000 sites over 8640 slots holds about 1.16 million visits and 27,000 distinct
#: sites (see :func:`url` and data/README.md).
URL_CALIBRATION: Mapping[str, tuple[float, float]] = MappingProxyType({
    "floor": (1.218, 1.035e10),
    "binomial": (1.334, 1.0022e10),
})

_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
           "bl", "br", "ch", "cl", "cr", "dr", "fl", "fr", "gr", "pl", "pr", "sh", "sk", "sp", "st", "tr", "")
_NUCLEI = ("a", "e", "i", "o", "u", "a", "e", "o", "y", "ea", "oo", "ai", "ou")
_CODAS = ("", "", "", "", "n", "r", "s", "t", "x", "m", "l", "ck", "ng")
_TLDS = (".com", ".org", ".net", ".edu", ".gov", ".us", ".tv", ".info", ".co.uk", ".io")
_TLD_P = (0.76, 0.07, 0.06, 0.03, 0.02, 0.015, 0.015, 0.01, 0.01, 0.01)


def _pseudo_domains(n_names: int, nbytes: int, rng: np.random.Generator) -> list[bytes]:
    """``n_names`` distinct syllable-based domain names, at most ``nbytes`` bytes each.

    Names longer than ``nbytes`` are redrawn (not truncated), so every name ends
    in its top-level domain.  ``nbytes`` must leave room for a name (>= 8).
    """
    syll = np.array([o + v + c for o in _ONSETS for v in _NUCLEI for c in _CODAS], dtype=object)
    tlds = np.array(_TLDS, dtype=object)
    names: list[bytes] = []
    seen: set[bytes] = set()
    while len(names) < n_names:
        size = (n_names - len(names)) * 5 // 4 + 64
        n_syl = rng.choice(np.array([1, 2, 3, 4]), size=size, p=[0.08, 0.47, 0.35, 0.10])
        parts = syll[rng.integers(0, syll.shape[0], size=(size, 4))]
        tld = tlds[rng.choice(tlds.shape[0], size=size, p=np.divide(_TLD_P, sum(_TLD_P)))]
        digits = np.where(rng.random(size) < 0.04, rng.integers(1, 1000, size).astype(str), "")
        for i in range(size):
            b = ("".join(parts[i, :n_syl[i]]) + digits[i] + tld[i]).encode("ascii")
            if len(b) <= nbytes and b not in seen and len(names) < n_names:  # well-formed: no truncation
                seen.add(b)
                names.append(b)
    return names


def url(rng=None, *, n_sites: int = 80_000, exponent: float | None = None,
        month_visits: float | None = None, slots: int = 8640,
        slicing: Literal["floor", "binomial"] = "floor", nbytes: int = 20) -> Dataset:
    """A calibrated STAND-IN for the paper's Frequent-URL data set (m = 160).

    The paper's URL set (section 6.1) is a 5-minute slice of one month of
    Quantcast traffic to the 80,000 most visited sites, domain names limited
    to 20 bytes: about 1.2 million users (authors' note: about 10 billion
    clicks a month in 8640 5-minute slots, about 1.16 million per slot) and
    27 thousand distinct URLs.  The Quantcast counts were never published, so
    this is a synthetic data set calibrated to those published figures; it is
    not the paper's data.

    Model: site ``r = 1 .. n_sites`` gets ``M_r = round(T r**-a / sum_j j**-a)``
    visits a month (Zipf with exponent ``a``, total ``T``); one slot holds

    * ``slicing='floor'`` (default): ``floor(M_r / slots)`` visits -- the month
      *divided* into slots, each site's share rounded down, so sites with less
      than one expected visit per slot vanish; or
    * ``slicing='binomial'``: ``Binomial(M_r, 1/slots)`` visits -- a random slot,
      each monthly visit falling in it independently.

    The defaults (``URL_CALIBRATION``) solve for ``(a, T)`` so that the slice
    has 1.16 million visits and 27,000 distinct sites: 'floor' gives
    ``a = 1.218``, ``T = 1.035e10`` (for every seed exactly n = 1,160,004
    users and 27,043 distinct sites; top frequency 0.216); 'binomial' gives
    ``a = 1.334``, ``T = 1.0022e10`` (expected n = 1,159,954 +- 1,077 and
    27,012 +- 108 distinct sites; top frequency 0.284).  A Zipf exponent of
    1.2 fits the published figures only with floor slicing; with binomial
    slicing it would leave about 45,700 distinct sites.
    The site names are random syllable-based pseudo-domains ("brantel.com"),
    distinct, at most ``nbytes`` bytes, space-padded to ``nbytes`` bytes
    (:func:`ldp.values.encode`).

    Parameters
    ----------
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness (SPEC 7) for the names, the binomial slice and the user order.
    n_sites : int
        Number of sites in the monthly list (paper: 80,000).
    exponent : float or None
        Zipf exponent ``a``; default from ``URL_CALIBRATION[slicing]``.
    month_visits : float or None
        Monthly visits ``T`` over all sites; default from ``URL_CALIBRATION[slicing]``.
    slots : int
        Slots per month (8640 five-minute slots in 30 days).
    slicing : {'floor', 'binomial'}
        How a slot's counts derive from the monthly counts (see above).
    nbytes : int
        Bytes per URL (paper: 20, so m = 160).

    Returns
    -------
    Dataset
        ``name='url'``, ``m = 8 nbytes``.

    References
    ----------
    Section 6.1 of the paper ("Frequent URL").
    """
    if slicing not in URL_CALIBRATION:
        raise ValueError(f"slicing must be one of {sorted(URL_CALIBRATION)}, got {slicing!r}")
    n_sites = check_int(n_sites, "n_sites", 1, 10 ** 8)
    slots = check_int(slots, "slots", 1)
    nbytes = check_int(nbytes, "nbytes", 8, MAX_BITS // 8)
    a0, t0 = URL_CALIBRATION[slicing]
    a = _check_positive(a0 if exponent is None else exponent, "exponent")
    T = _check_positive(t0 if month_visits is None else month_visits, "month_visits")
    rng = check_rng(rng)
    name_rng, slice_rng, order_rng = rng.spawn(3)
    w = np.arange(1, n_sites + 1, dtype=float) ** -a
    monthly = np.rint(T * w / w.sum()).astype(np.int64)  # Zipf monthly visits per site
    if slicing == "floor":
        counts = monthly // slots
    else:
        counts = slice_rng.binomial(monthly, 1.0 / slots).astype(np.int64)
    if counts.sum() == 0:
        raise ValueError("the slice is empty: raise month_visits or lower slots")
    names = _pseudo_domains(n_sites, nbytes, name_rng)  # names[r - 1] is site r
    values = encode(names, nbytes)
    params = {"generator": "url stand-in", "slicing": slicing, "exponent": a, "month_visits": T,
              "slots": slots, "n_sites": n_sites, "stand_in": True}
    return Dataset.from_counts(values, counts, 8 * nbytes, "url", rng=order_rng, nbytes=nbytes,
                               params=params)


# --------------------------------------------------------------------------------------
# AOL
# --------------------------------------------------------------------------------------

AOL_FILENAME = "aol_query_6bytes_counts.txt.gz"
AOL_URL = "https://github.com/vvv214/LDP_Protocols/raw/master/pem/query_6bytes_sorted.txt.gz"
AOL_SHA256 = "b5750f6998acf3812bbba994954c981a77db510b7867f7cff82e02af13e662db"
AOL_USERS = 657_427
AOL_DISTINCT = 120_978
_AOL_BYTES = 6


class DataFileNotFoundError(FileNotFoundError):
    """A data file is not where the loader looks."""


class ChecksumError(ValueError):
    """A data file's sha256 is not the published one."""


class DataFormatError(ValueError):
    """A data file does not have the expected format."""


class DownloadError(OSError):
    """A data file could not be downloaded (offline, HTTP error, ...)."""


def _how_to_get() -> str:
    return (f"The project ships it as data/{AOL_FILENAME}; restore it with `git checkout -- data/` or "
            f"`make data` (runs `python -m ldp.datasets fetch aol`), or download {AOL_URL} by hand and "
            f"save it as {AOL_FILENAME} in the project's data/ folder, or in the folder named by the "
            f"environment variable LDP_DATA_DIR when that is set (sha256 {AOL_SHA256}).")


def _default_data_dir() -> Path | None:
    """``<project>/data`` (:func:`ldp.paths.data_dir`, honours ``LDP_ROOT``).

    None when the package is installed outside a project checkout (no
    ``pyproject.toml`` next to it and ``LDP_ROOT`` unset).
    """
    from .paths import data_dir, repo_root

    if os.environ.get("LDP_ROOT") or (repo_root() / "pyproject.toml").is_file():
        return data_dir()
    return None


def data_folder() -> Path | None:
    """The folder the data loaders read and ``fetch`` writes to.

    ``$LDP_DATA_DIR`` when it is set (non-empty): an explicit setting wins and
    is then the *only* folder searched, so pointing it at an empty folder hides
    the copy that ships in the project's ``data/``.  Otherwise the project's
    ``data/`` folder (next to the ``ldp`` package, or ``$LDP_ROOT/data``; never
    the working folder), or None for an installed package without a project.
    """
    env = os.environ.get("LDP_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return _default_data_dir()


def _aol_candidates(path=None) -> list[Path]:
    if path is not None:
        p = Path(path).expanduser()
        return [p / AOL_FILENAME if p.is_dir() else p]
    d = data_folder()
    return [] if d is None else [d / AOL_FILENAME]


def find_aol(path=None) -> Path:
    """Where the AOL tally is (the file is not read).

    Looks at ``path`` (a file, or a folder holding
    ``aol_query_6bytes_counts.txt.gz``) when given, else in
    :func:`data_folder`: ``$LDP_DATA_DIR`` when set -- and only there -- else
    the project's ``data/`` folder, where the file ships with the project.

    Raises
    ------
    DataFileNotFoundError
        No file found; the message names the place tried and how to get the file.
    """
    tried = _aol_candidates(path)
    for p in tried:
        if p.is_file():
            return p
    where = ", ".join(str(p) for p in tried) or "(no project data/ folder and LDP_DATA_DIR unset)"
    raise DataFileNotFoundError(f"AOL query tally not found; looked at: {where}. {_how_to_get()}")


def check_aol(path=None) -> Path:
    """Find the AOL tally and verify its sha256, without parsing it (a few ms).

    The book uses it to decide whether the AOL results can be computed: a
    chapter that gets an error leaves them out and says why.

    Parameters
    ----------
    path : str, Path or None
        As for :func:`find_aol`.

    Returns
    -------
    pathlib.Path
        The verified file.

    Raises
    ------
    DataFileNotFoundError
        The file is missing.
    ChecksumError
        The file's sha256 is not ``AOL_SHA256``.
    """
    p = find_aol(path)
    digest = _sha256(p)
    if digest != AOL_SHA256:
        raise _checksum_error(p, digest)
    return p


def _checksum_error(p: Path, digest: str) -> ChecksumError:
    return ChecksumError(f"{p} has sha256 {digest}, expected {AOL_SHA256} (corrupt or a "
                         f"different file; delete it). {_how_to_get()}")


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _parse_aol(raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    """``QUERY<TAB>COUNT`` lines (query exactly 6 bytes, split on the last tab)."""
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    queries, counts = [], []
    for i, line in enumerate(lines, 1):
        q, tab, c = line.rpartition(b"\t")
        if not tab or len(q) != _AOL_BYTES or not c.strip().isdigit():
            raise DataFormatError(f"AOL tally line {i}: expected a {_AOL_BYTES}-byte query, a tab and "
                                  f"a count, got {line[:40]!r}")
        queries.append(q)
        counts.append(int(c))
    if not queries:
        raise DataFormatError("AOL tally is empty")
    return encode(queries, _AOL_BYTES), np.array(counts, dtype=np.int64)


_AOL_TALLY: dict[tuple, tuple[np.ndarray, np.ndarray, str]] = {}
_AOL_DATASETS: dict[tuple, Dataset] = {}


def aol(path=None, *, rng=0, verify: bool = True) -> Dataset:
    """The AOL query data set of section 6.1 (m = 48: queries of 6 bytes).

    The authors' public tally: the first query of each of 657,427 AOL users
    (March-May 2006), truncated or space-padded to 6 bytes; 120,978 distinct
    queries.  The paper's text says about 0.5 million users and 0.2 million
    distinct queries; the authors' errata corrects the distinct count to 0.12
    million.  The first row, ``"-     "``, is AOL's placeholder for an empty
    query (the most frequent value, 18,720 users).  19 queries hold non-ASCII
    bytes; the bytes are kept exactly.

    Parameters
    ----------
    path : str, Path or None
        The file, or a folder holding it; default: see :func:`find_aol`.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness for the order of the users (the tally has none).  Default
        ``0``: a fixed order, so ``aol()`` is deterministic and memoised;
        ``None`` gives a fresh order.
    verify : bool
        Check the file's sha256 against ``AOL_SHA256``.

    Returns
    -------
    Dataset
        ``name='aol'``, ``m=48``, ``nbytes=6``.

    Raises
    ------
    DataFileNotFoundError
        The file is missing (the message says how to get it).
    ChecksumError
        The file's sha256 differs from ``AOL_SHA256``.
    DataFormatError
        A line is not ``QUERY<TAB>COUNT`` with a 6-byte query.

    References
    ----------
    Section 6.1 ("Query Trends") of the paper; source file
    ``pem/query_6bytes_sorted.txt.gz`` of github.com/vvv214/LDP_Protocols (MIT).
    """
    p = find_aol(path).resolve()
    st = p.stat()
    fkey = (str(p), st.st_mtime_ns, st.st_size)
    tally = _AOL_TALLY.get(fkey)
    if tally is None or (verify and tally[2] != AOL_SHA256):
        raw = p.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        if verify and digest != AOL_SHA256:
            raise _checksum_error(p, digest)
        try:
            text = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFormatError(f"{p} is not a gzip file ({exc}). {_how_to_get()}") from exc
        values, counts = _parse_aol(text)
        tally = (readonly(values), readonly(counts), digest)
        _AOL_TALLY[fkey] = tally
    dkey = fkey + (rng,) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None
    if dkey is not None and dkey in _AOL_DATASETS:
        return _AOL_DATASETS[dkey]
    ds = Dataset.from_counts(tally[0], tally[1], 8 * _AOL_BYTES, "aol", rng=rng, nbytes=_AOL_BYTES,
                             params={"source": str(p), "sha256": tally[2], "url": AOL_URL})
    if dkey is not None:
        _AOL_DATASETS[dkey] = ds
    return ds


def _copy_local(url: str, output_file, pooch_obj=None, check_only: bool = False):
    """A pooch downloader for ``file://`` URLs: copy the file (pooch then verifies it)."""
    src = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
    if check_only:
        return src.is_file()
    try:
        shutil.copyfile(src, output_file)
    except OSError as exc:
        raise DownloadError(f"could not download {url}: {exc.strerror or exc}") from exc
    return None


@contextmanager
def _quiet_pooch():
    """Silence pooch's INFO lines ("Downloading data from ...") for one call."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")
    try:
        yield pooch
    finally:
        logger.setLevel(level)


def fetch_aol(dest_dir=None, *, url: str = AOL_URL, force: bool = False, timeout: float = 60.0) -> Path:
    """Download the AOL tally with pooch, verify its sha256, and move it into place atomically.

    The project ships the file in ``data/``; this restores it there, or puts a
    copy in another folder.  ``pooch.retrieve`` downloads into a temporary file
    and keeps it only if its sha256 is ``AOL_SHA256``; the verified file then
    replaces the target in one rename, so a reader never sees a partial or
    unverified file, and a wrong file already there stays until a good one
    replaces it.

    Parameters
    ----------
    dest_dir : str, Path or None
        Target folder; default :func:`data_folder` (``$LDP_DATA_DIR`` when set,
        else the project's ``data/``).
    url : str
        Where to download from: an ``https://``, ``http://`` or ``file://``
        URL, or a local path to copy.
    force : bool
        Download even when a verified file is already there.
    timeout : float
        Seconds to wait for the server.

    Returns
    -------
    pathlib.Path
        The verified file.

    Raises
    ------
    DownloadError
        Offline, HTTP error, unsupported URL, or no destination folder.
    ChecksumError
        The downloaded bytes are not the published file (nothing is kept).
    """
    if dest_dir is None:
        dest_dir = data_folder()
        if dest_dir is None:
            raise DownloadError("no destination: pass dest_dir or set LDP_DATA_DIR")
    dest_dir = Path(dest_dir).expanduser()
    target = dest_dir / AOL_FILENAME
    if not force and target.is_file() and _sha256(target) == AOL_SHA256:
        return target
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in {"https", "http", "file"}:
        if "://" in url:
            raise DownloadError(f"cannot download {url}: only https://, http:// and file:// URLs "
                                f"or a local path are supported")
        url, scheme = Path(url).expanduser().resolve().as_uri(), "file"
    dest_dir.mkdir(parents=True, exist_ok=True)
    import requests

    with _quiet_pooch() as pooch, tempfile.TemporaryDirectory(prefix=".aol-", dir=dest_dir) as tmp:
        downloader = _copy_local if scheme == "file" else pooch.HTTPDownloader(timeout=timeout)
        try:
            got = pooch.retrieve(url, known_hash=f"sha256:{AOL_SHA256}", fname=AOL_FILENAME, path=tmp,
                                 downloader=downloader, progressbar=False)
        except requests.RequestException as exc:
            raise DownloadError(f"could not download {url}: {exc}. If this machine is offline, copy "
                                f"the file into {dest_dir} as {AOL_FILENAME} by hand: the project ships "
                                f"it as data/{AOL_FILENAME}, or take it from a machine that can reach "
                                f"{AOL_URL}; its sha256 must be {AOL_SHA256}.") from exc
        except ValueError as exc:  # pooch: the downloaded file's hash is not the known one
            raise ChecksumError(f"downloaded {url} does not have the published sha256 {AOL_SHA256} "
                                f"({exc}); nothing was saved.") from exc
        os.replace(got, target)
    return target


# --------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ldp.datasets fetch aol | check aol | describe NAME``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m ldp.datasets", description="Data sets of the PEM paper.")
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download a data file and verify its sha256")
    f.add_argument("dataset", choices=["aol"])
    f.add_argument("--dest", default=None,
                   help="target folder (default: $LDP_DATA_DIR when set, else the project's data/)")
    f.add_argument("--url", default=AOL_URL, help="download address, file:// URL or local file to copy")
    f.add_argument("--force", action="store_true", help="download even if a verified file is present")
    c = sub.add_parser("check", help="say whether a data file is where the loaders look and has its sha256")
    c.add_argument("dataset", choices=["aol"])
    d = sub.add_parser("describe", help="print a data set's summary")
    d.add_argument("dataset", choices=["aol", "url", "zipf", "exponential"])
    d.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    if args.command == "fetch":
        dest = Path(args.dest) if args.dest else data_folder()
        if dest is None:
            print("error: no destination folder: pass --dest or set LDP_DATA_DIR", file=sys.stderr)
            return 2
        target = Path(dest) / AOL_FILENAME
        if not args.force and target.is_file():
            if _sha256(target) == AOL_SHA256:
                print(f"{target} already present, sha256 verified; nothing to do")
                return 0
            print(f"{target} has a wrong sha256; downloading it again")
        print(f"downloading {args.url} -> {target}")
        try:
            path = fetch_aol(dest, url=args.url, force=True)
        except (DownloadError, ChecksumError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 3 if isinstance(exc, ChecksumError) else 2
        print(f"saved {path} (sha256 {AOL_SHA256} verified)")
        return 0

    if args.command == "check":
        try:
            path = check_aol()
        except (DataFileNotFoundError, ChecksumError) as exc:
            print(f"AOL data unavailable: {exc}", file=sys.stderr)
            return 1
        print(f"{path}: sha256 verified")
        return 0

    makers = {"aol": lambda: aol(), "url": lambda: url(args.seed),
              "zipf": lambda: zipf(10 ** 6, rng=args.seed), "exponential": lambda: exponential(rng=args.seed)}
    try:
        ds = makers[args.dataset]()
    except (DataFileNotFoundError, ChecksumError, DataFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for key, val in ds.describe().items():
        print(f"{key:>12}: {val}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
