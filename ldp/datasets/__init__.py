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

Every data set is a :class:`Dataset` (:mod:`ldp.core.dataset`): the users'
values in the canonical m-bit representation of :mod:`ldp.values` plus the
true tally the metrics and the count-level engines need (distinct values,
their counts, each user's index into the distinct values, the true ranking).
Every generator takes its randomness as the keyword-only ``rng``.

Modules: :mod:`~ldp.datasets.synthetic` (``zipf``, ``exponential``,
``random_distinct_values``), :mod:`~ldp.datasets.url` (the URL stand-in),
:mod:`~ldp.datasets.aol` (loading, checking and fetching the AOL tally) and
the command line (``make data`` and ``make book`` use it)::

    python -m ldp.datasets fetch aol [--dest DIR] [--url URL_OR_PATH] [--force]
    python -m ldp.datasets check aol
    python -m ldp.datasets describe {aol,url,zipf,exponential} [--seed N]

References
----------
.. [1] T. Wang, N. Li, S. Jha.  Locally Differentially Private Heavy Hitter
   Identification.  Sections 5 and 6.1.
"""
from ..core.dataset import Dataset
from .aol import (
    AOL_DISTINCT,
    AOL_FILENAME,
    AOL_SHA256,
    AOL_URL,
    AOL_USERS,
    ChecksumError,
    DataFileNotFoundError,
    DataFormatError,
    DownloadError,
    aol,
    check_aol,
    data_folder,
    fetch_aol,
    find_aol,
)
from .synthetic import (
    Sampling,
    exponential,
    exponential_frequencies,
    random_distinct_values,
    zipf,
    zipf_frequencies,
)
from .url import URL_CALIBRATION, url

__all__ = [
    "Dataset",
    "Sampling",
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
]
