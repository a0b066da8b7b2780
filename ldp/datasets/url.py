"""A calibrated stand-in for the paper's Frequent-URL data set (section 6.1, m = 160).

The paper's URL set is a 5-minute slice of one month of Quantcast traffic to
the 80,000 most visited sites, domain names limited to 20 bytes.  The
Quantcast counts were never published, so :func:`url` builds a synthetic
data set calibrated to the published figures (about 1.16 million users and
27,000 distinct sites); it is not the paper's data (see data/README.md).

References
----------
.. [1] T. Wang, N. Li, S. Jha.  Locally Differentially Private Heavy Hitter
   Identification.  Section 6.1 ("Frequent URL").
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

import numpy as np

from ..core.dataset import Dataset, check_users_fit
from ..validation import check_int, check_real, check_rng
from ..values import MAX_BITS, encode

__all__ = ["url", "URL_CALIBRATION"]

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


def url(*, n_sites: int = 80_000, exponent: float | None = None, month_visits: float | None = None,
        slots: int = 8640, slicing: Literal["floor", "binomial"] = "floor", nbytes: int = 20,
        rng=None) -> Dataset:
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
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness (SPEC 7) for the names, the binomial slice and the user order.

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
    a = check_real(a0 if exponent is None else exponent, "exponent", lo=0.0, lo_open=True)
    T = check_real(t0 if month_visits is None else month_visits, "month_visits", lo=0.0, lo_open=True)
    check_users_fit(int(T // slots), 8 * nbytes, name="month_visits / slots (the users of a slot)")
    if T > 2**62:  # pragma: no cover - refused above on any machine with less than 2**62 / slots users' memory
        raise ValueError(f"month_visits must be at most 2**62 (the monthly counts are int64), got {T!r}")
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

