"""Frequency oracles (paper section 2.2): GRR, OLH, OUE and BLH; HR and CMS (the oracles of TreeHist and SFP); FLH.

Every oracle has the same interface:

* ``privatize(values, *, rng=None)`` -- what each user sends, as a
  :class:`Reports` object (compact numpy arrays that record the oracle's
  parameters; sliceable, concatenable, ``save``/``load`` to ``.npz``).  With
  a seed it is a simulation (the seed is every user's secret); with
  ``rng=ldp.randomness.SystemCoins()`` the coins come from the operating
  system, as on a device (:mod:`ldp.client`);
* ``draw_noise(n, *, rng=None, public_rng=None)`` / ``apply_noise(values, noise)``
  -- the same in two steps: the randomness first (the public parts, listed in
  the reports class's ``public_fields``, e.g. hash seeds, from ``public_rng``,
  an independent child of ``rng`` by default), then the reports;
* ``support(reports, candidates)`` -- the number of reports supporting each
  candidate value (``int64``);
* ``estimate(reports, candidates)`` -- unbiased counts
  ``(I_v - n q) / (p - q)`` (paper eq. (2));
* ``p``, ``q`` and ``variance(n)`` (paper eqs. (1) and (3)).

GRR's and OLH's ``p``, ``q``, ``d'`` and variances are the functions of
:mod:`ldp.oracles.formulas` (:func:`grr_pq`, :func:`grr_variance`,
:func:`default_d_prime`, :func:`olh_pq`, :func:`olh_variance`), which the
classes and :mod:`ldp.analysis` use.  OLH's aggregation runs in a compiled,
multi-threaded numba kernel (:mod:`ldp.oracles.kernels`) over the strongly
universal hash family of :mod:`ldp.oracles.hashing`.
"""
from .base import FrequencyOracle, Reports, ReportsFileError, concat_reports, load_reports, reports_class
from .cms import CMS, CMSReports
from .flh import FLH, FLHReports
from .formulas import default_d_prime, grr_pq, grr_variance, min_population, olh_pq, olh_variance
from .grr import GRR, GRRReports
from .hr import HR, HRReports
from .olh import BLH, OLH, OLHReports
from .oue import OUE, OUEReports

__all__ = [
    "FrequencyOracle",
    "Reports",
    "ReportsFileError",
    "GRR",
    "GRRReports",
    "OLH",
    "BLH",
    "OLHReports",
    "OUE",
    "OUEReports",
    "HR",
    "HRReports",
    "CMS",
    "CMSReports",
    "FLH",
    "FLHReports",
    "load_reports",
    "concat_reports",
    "reports_class",
    "default_d_prime",
    "olh_pq",
    "olh_variance",
    "grr_pq",
    "grr_variance",
    "min_population",
]
